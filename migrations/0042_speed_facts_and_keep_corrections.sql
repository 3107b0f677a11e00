-- Observations at 10,000/s (issue 15): every index a fact or a source is written into costs each
-- observation an index insert, so an index no reader uses goes.
--
-- facts_closed_by_idx: no reader looks a row up by what closed it (exo.fact_history reads a
-- line's rows by facts_line_idx and returns closed_by as a column); it served only the self
-- foreign key's check when a fact row is deleted, and fact rows are never deleted. Every close
-- (one per new value) wrote into it.
drop index exo_private.facts_closed_by_idx;

-- fact_sources_observation_idx: no reader looks a source up by its observation (observe returns
-- each observation's fact row); it served only the foreign key's check when an observation is
-- deleted, and observations are never deleted. Every observation wrote into it.
drop index exo_private.fact_sources_observation_idx;

-- Corrections survive a new extraction generation (issue 16): a person's merge or split names
-- the entities by id, and a new generation makes new entity rows, so each logged correction now
-- also keeps the canonical keys and names it was about. upsert_entity replays them (a key merged
-- into another is that entity; a name split off an entity is never its alias again);
-- sql/300_graph.sql. Rows logged before keep the keys that can still be read: the merged
-- entity's from what moved, the others from the entities that still exist.
alter table exo_private.entity_merge_log
    add column kept_key text,
    add column kept_name text,
    add column other_key text,
    add column other_name text;
comment on column exo_private.entity_merge_log.kept_key is
    'The canonical key of the entity that stays (kept_id when logged); with other_key, what a new '
    'extraction generation replays the correction by.';
comment on column exo_private.entity_merge_log.other_key is
    'The canonical key of the entity merged into kept_key, or of the name split off it.';
update exo_private.entity_merge_log l
   set kept_key = k.canonical_key, kept_name = k.name
  from exo_private.entities k
 where k.id = l.kept_id;
update exo_private.entity_merge_log l
   set other_key = l.moved -> 'entity' ->> 'canonical_key', other_name = l.moved -> 'entity' ->> 'name'
 where l.kind = 'merge';
update exo_private.entity_merge_log l
   set other_key = o.canonical_key, other_name = o.name
  from exo_private.entities o
 where o.id = l.other_id and l.kind = 'split';
-- upsert_entity asks, for each name it resolves, for the newest correction about that key.
create index entity_merge_log_other_key_idx on exo_private.entity_merge_log (workspace, other_key, id)
    where undone_at is null;
