-- The multi-hop path stage (exo_private.typed_neighbours, sql/320_relation_paths.sql) follows
-- only the relations of an entity whose predicate a question asks for. These indexes find an
-- entity's distinct predicates in a few probes (a loose index scan) and then the relations of
-- each one asked for, so a hub of thousands of relations of other kinds (the owner's
-- TALKED_WITH, an employer's WORKS_AT) costs a few index probes, not a scan of its rows.
create index relations_subject_predicate_idx on exo_private.relations (subject_id, predicate, object_id);
create index relations_object_predicate_idx on exo_private.relations (object_id, predicate, subject_id);

-- The path stage (exo_private.stage_sql 'path', plpy/stages.py): a question that asks for a
-- relation of what it names walks it and gets the chunks stating each hop. It runs before BM25,
-- whose matches of the names would otherwise take those chunks first as plain word matches, and
-- its evidence ranks like an exact match. Merged into the stored settings, so an owner's own stage
-- list and weights stay as they chose.
update exo_private.settings
   set value = (select jsonb_agg(s order by n) from (
                    select s, n from jsonb_array_elements(value) with ordinality x (s, n)
                    union all
                    select '"path"'::jsonb, coalesce(
                        (select n - 0.5 from jsonb_array_elements_text(value) with ordinality y (s, n)
                         where s = 'lexical'), 1000)
                ) z)
 where key = 'retrieval.stages' and not value ? 'path';

update exo_private.settings
   set value = jsonb_set(jsonb_set(value, '{stage,path}', '1.0'), '{match,path}', '1.3')
 where key = 'retrieval.rank_weights' and not value -> 'stage' ? 'path';
