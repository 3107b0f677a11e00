-- The graph stage's walk reads distinct neighbours, not relation rows (issue 32): an entity's
-- relations repeat per extraction window (the owner of the million-chunk bench has 332,757
-- relation rows and 1,822 distinct neighbours), and exo_private.related_entities read every one
-- of each node it expanded before keeping 50 neighbours. exo_private.entity_edges holds each
-- pair of related entities once per direction with how many relations join them, kept by
-- statement triggers on exo_private.relations (sql/300_graph.sql, exo_private.count_entity_edges).
create table exo_private.entity_edges (
    entity_id bigint not null,
    neighbour_id bigint not null,
    relations integer not null,
    primary key (entity_id, neighbour_id)
);
comment on table exo_private.entity_edges is
    'Every pair of entities joined by at least one relation (either direction, an entity with '
    'itself never), once as (entity_id, neighbour_id) and once reversed, with how many relations '
    'join them: the distinct neighbours exo_private.related_entities walks. Kept by the '
    'relations_count_edges triggers (exo_private.count_entity_edges).';

insert into exo_private.entity_edges (entity_id, neighbour_id, relations)
select e.a, e.b, count(*)
from exo_private.relations r
cross join lateral (values (r.subject_id, r.object_id), (r.object_id, r.subject_id)) e (a, b)
where r.subject_id <> r.object_id
group by e.a, e.b;

-- Whether a relation's extraction window overlaps a withheld chunk is asked per relation walked
-- (exo_private.related_entities), through the few charged chunks of its document.
create index chunks_charged_document_idx on exo_private.chunks (workspace, document_id)
    include (char_start, char_end, charged_subjects) where charged_subjects <> '{}';

-- The fourth argument becomes the released keys (the windows are judged during the walk).
drop function if exists exo_private.related_entities(bigint, int, int, bigint[], bigint[]);
