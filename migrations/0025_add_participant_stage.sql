-- The participant stage: the chat windows of the people a question names, by similarity to the
-- question (sql/400_search.sql stage_sql). It runs after the exact stage, before BM25, whose
-- matches of a person's name are every line that person sent. Merged into the stored settings,
-- so an owner's own stage list and weights stay as they chose.
update exo_private.settings
   set value = case when value ->> 0 = 'exact' then '["exact", "participant"]'::jsonb || (value - 0)
                    else '["participant"]'::jsonb || value end
 where key = 'retrieval.stages' and not value ? 'participant';

update exo_private.settings
   set value = jsonb_set(value, '{stage,participant}', '0.75')
 where key = 'retrieval.rank_weights' and not value -> 'stage' ? 'participant';

-- A person named by first name ("Priya" for Priya Okafor) is found by the first word of the key.
create index entities_person_first_key_idx on exo_private.entities
    (workspace, pg_catalog.split_part(canonical_key, ' ', 1)) where type = 'Person';
