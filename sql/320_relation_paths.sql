-- Typed steps through the graph for multi-hop questions (the path stage of
-- exo_private.stage_sql, sql/400_search.sql; the question words and predicate families are
-- plpy/relation_paths.py).

-- exo_private.typed_neighbours: an entity's neighbours along relations whose predicate matches.
create or replace function exo_private.typed_neighbours(
    p_entity bigint, p_pattern text, p_limit int,
    p_hidden_windows bigint[] default '{}', p_hidden_entities bigint[] default '{}'
)
returns table (entity_id bigint, relation_id bigint)
language sql stable
rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The entity's distinct predicates each way, by a loose scan of the (end, predicate) indexes
    -- (one probe a predicate), are matched against the pattern; only then are relations read,
    -- those of the matching predicates, at most p_limit, lowest neighbour ids first: an entity
    -- with thousands of relations of other kinds costs a probe per kind.
    with recursive outgoing (predicate) as (
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
    select x.id, x.relation_id
    from (
        (select r.object_id as id, r.id as relation_id
         from outgoing o
         join exo_private.relations r on r.subject_id = p_entity and r.predicate = o.predicate
         where o.predicate ~ p_pattern
           and r.window_id <> all (p_hidden_windows) and r.object_id <> all (p_hidden_entities)
         order by r.object_id, r.id
         limit p_limit)
        union all
        (select r.subject_id, r.id
         from incoming i
         join exo_private.relations r on r.object_id = p_entity and r.predicate = i.predicate
         where i.predicate ~ p_pattern
           and r.window_id <> all (p_hidden_windows) and r.subject_id <> all (p_hidden_entities)
         order by r.subject_id, r.id
         limit p_limit)
    ) x
    where x.id <> p_entity
    order by x.id, x.relation_id
    limit p_limit
$$;
comment on function exo_private.typed_neighbours(bigint, text, int, bigint[], bigint[]) is
    'Neighbours of an entity (either direction, relations of every origin) along relations whose '
    'predicate matches the regular expression p_pattern, with the relation, at most p_limit, lowest '
    'neighbour ids first, never along a relation of p_hidden_windows nor to an entity of '
    'p_hidden_entities (exo_private.hidden_windows, hidden_entities: what a search withholds). '
    'Hub-safe: only the relations of matching predicates are read.';
