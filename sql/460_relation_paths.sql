-- Typed steps through the graph for multi-hop questions (the path stage of
-- exo_private.stage_sql, sql/400_search.sql; the question words and predicate families are
-- plpy/relation_paths.py).

-- exo_private.typed_neighbours: an entity's neighbours along relations whose predicate matches.
create or replace function exo_private.typed_neighbours(
    p_entity bigint, p_pattern text, p_limit int,
    p_released text[] default null, p_hidden_entities bigint[] default '{}'
)
returns table (entity_id bigint, relation_id bigint)
language sql stable
rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The entity's distinct predicates each way, by a loose scan of the (end, predicate) indexes
    -- (one probe a predicate), are matched against the pattern; only then are relations read: of
    -- each matching predicate, its distinct neighbours by a loose scan of the same index (neighbour
    -- id, relation id), each with its first relation not withheld, at most p_limit of them. An
    -- entity with thousands of relations, of other kinds or of the kinds asked (the owner is the
    -- subject of every relation of some kinds), costs a probe per kind and one per neighbour
    -- kept; a neighbour related in many windows (a friend in every chat with the owner) takes one
    -- place, not p_limit.
    with recursive judged as materialized (
        -- A relation is evidence of its extraction window: where the workspace holds a chunk the
        -- search withholds, none whose window overlaps one is walked (exo_private.window_charges,
        -- asked of each relation read, as related_entities does).
        select exo_private.withholds_windows(e.workspace, p_released) as windows
        from exo_private.entities e
        where e.id = p_entity
    ), outgoing (predicate) as (
        select min(r.predicate) from exo_private.relations r where r.subject_id = p_entity
        union all
        select (select min(r.predicate) from exo_private.relations r
                where r.subject_id = p_entity and r.predicate > o.predicate)
        from outgoing o where o.predicate is not null
    ), incoming (predicate) as (
        select min(r.predicate) from exo_private.relations r where r.object_id = p_entity
        union all
        select (select min(r.predicate) from exo_private.relations r
                where r.object_id = p_entity and r.predicate > i.predicate)
        from incoming i where i.predicate is not null
    )
    select distinct on (x.id) x.id, x.relation_id
    from (
        select n.id, n.relation_id
        from outgoing o
        cross join judged j
        cross join lateral (
            -- from id 0 (no entity's: ids start at 1), each step the next neighbour's first relation
            with recursive neighbour (id, relation_id) as (
                select 0::bigint, null::bigint
                union all
                select r.id, r.relation_id
                from neighbour n
                cross join lateral (
                    select r.object_id as id, r.id as relation_id
                    from exo_private.relations r
                    where r.subject_id = p_entity and r.predicate = o.predicate and r.object_id > n.id
                      and r.object_id <> p_entity and r.object_id <> all (p_hidden_entities)
                      and (not j.windows or not exists (
                          select 1 from exo_private.window_charges k
                          where k.window_id = r.window_id
                            and exo_private.unreleased(k.charged_subjects, p_released) <> '{}' offset 0))
                    order by r.object_id, r.id
                    limit 1
                ) r
            )
            select n.id, n.relation_id from neighbour n where n.relation_id is not null limit p_limit
        ) n
        where o.predicate ~ p_pattern
        union all
        select n.id, n.relation_id
        from incoming i
        cross join judged j
        cross join lateral (
            with recursive neighbour (id, relation_id) as (
                select 0::bigint, null::bigint
                union all
                select r.id, r.relation_id
                from neighbour n
                cross join lateral (
                    select r.subject_id as id, r.id as relation_id
                    from exo_private.relations r
                    where r.object_id = p_entity and r.predicate = i.predicate and r.subject_id > n.id
                      and r.subject_id <> p_entity and r.subject_id <> all (p_hidden_entities)
                      and (not j.windows or not exists (
                          select 1 from exo_private.window_charges k
                          where k.window_id = r.window_id
                            and exo_private.unreleased(k.charged_subjects, p_released) <> '{}' offset 0))
                    order by r.subject_id, r.id
                    limit 1
                ) r
            )
            select n.id, n.relation_id from neighbour n where n.relation_id is not null limit p_limit
        ) n
        where i.predicate ~ p_pattern
    ) x
    order by x.id, x.relation_id
    limit p_limit
$$;
comment on function exo_private.typed_neighbours(bigint, text, int, text[], bigint[]) is
    'Neighbours of an entity (either direction, relations of every origin) along relations whose '
    'predicate matches the regular expression p_pattern, each once with its first relation (lowest '
    'id), at most p_limit, lowest neighbour ids first, never along a relation whose extraction window overlaps a chunk charged '
    'for a subject whose key is not among p_released (null: every subject released; '
    'exo_private.window_charges) nor to an entity of p_hidden_entities (exo_private.hidden_entities): '
    'what a search withholds. Hub-safe: only the relations of matching predicates are read, one per '
    'neighbour kept.';
