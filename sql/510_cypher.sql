-- Cypher for agents: exo.cypher runs a caller's read-only openCypher query on one
-- workspace's Apache AGE graph.
--
-- The boundary is in three layers. A tokenizer (plpy/cypher_lexer.py) reads the query
-- as AGE does and lets through only reading clauses and AGE's own read functions. The
-- query then runs in exo_private.run_cypher, owned by exo_graph, a role that may only
-- read the graph tables (sql/985_graph_access.sql): whatever got past the check can
-- write nothing and call nothing of ours. And it runs over what the caller may see:
-- row security on every graph table hides, for exo_graph, the vertices and edges that
-- deference withholds (listed per call in two transaction-local settings), so a hidden
-- vertex is not matched, counted, compared or walked through; nothing is filtered out of
-- the answer afterwards.

-- exo_private.cypher_refusal: why a Cypher query may not run (null when it may).
create or replace function exo_private.cypher_refusal(query text)
returns text
language plpython3u immutable
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include cypher_lexer
return refusal(query)
$$;
comment on function exo_private.cypher_refusal(text) is
    'Why exo.cypher refuses a query, or null when it may run: the rule, the offending token and '
    'its position, from a tokenizer that reads Cypher as AGE does (plpy/cypher_lexer.py). Only '
    'MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER BY, SKIP, LIMIT, UNWIND and UNION, and '
    'calls of AGE''s read functions; no write or procedure word, no dotted call, no '
    'variable-length relationship, no comment, $, ; or :: cast; at most 20000 characters.';

-- exo_private.agtype_jsonb: an agtype value's text as jsonb.
create or replace function exo_private.agtype_jsonb(value text)
returns jsonb
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    plain text;
begin
    if value is null then
        return null;
    end if;
    -- {...}::vertex, {...}::edge, [...]::path and 1.5::numeric become plain JSON; string
    -- literals are matched first, so text inside them is never touched.
    plain := pg_catalog.regexp_replace(value, '("(?:[^"\\]|\\.)*")|::(?:vertex|edge|path|numeric)', '\1', 'g');
    begin
        return plain::jsonb;
    exception when invalid_text_representation then
        return pg_catalog.to_jsonb(value);  -- NaN, Infinity: no JSON number
    end;
end
$$;
comment on function exo_private.agtype_jsonb(text) is
    'The text of an agtype value as jsonb: vertices, edges and paths as plain objects and arrays '
    '(their ::vertex, ::edge, ::path suffixes dropped), numerics as numbers; a value JSON cannot '
    'hold (NaN, Infinity) as its text.';

-- exo_private.withheld_graph: the entities, relations and mentions of a workspace's graph a bridge
-- leaves closed.
create or replace function exo_private.withheld_graph(ws text, bridge text[])
returns table (entity_ids bigint[], relation_ids bigint[], mentions bigint)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The same rules as exo.dossier. An entity is withheld when it is a closed deferred subject
    -- (by canonical key) or when every mention of it is withheld; a relation when an end is
    -- withheld or when its window does not show both ends. Withheld mentions lie only in
    -- windows that overlap a closed charged chunk, and those are few: the work starts from
    -- them (exo_private.closed_windows), never from all entities.
    with closed_keys as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), windows as materialized (
        select w.id, w.document_id
        from exo_private.closed_windows(bridge) k
        join exo_private.extraction_windows w on w.id = k.window_id
        where w.workspace = ws
    ), candidates as materialized (
        -- every entity named in such a window has a mention there (with a chunk or without)
        select distinct m.entity_id
        from windows w
        join exo_private.mentions m on m.document_id = w.document_id and m.window_id = w.id
    ), ms as materialized (
        select m.entity_id, m.window_id, m.withheld
        from exo_private.entity_mentions(array(select c.entity_id from candidates c), bridge) m
    ), hidden_entities as materialized (
        select e.id, k.subject
        from closed_keys k
        join exo_private.entities e on e.canonical_key = k.key
        where e.workspace = ws
        union
        select e.id, s.subject
        from exo_private.entities e
        join ms m on m.entity_id = e.id
        cross join lateral unnest(m.withheld) s(subject)
        where not exists (select 1 from ms shown where shown.entity_id = e.id and shown.withheld = '{}')
    ), hidden_relations as materialized (
        select r.id, h.subject
        from hidden_entities h join exo_private.relations r on r.subject_id = h.id
        union
        select r.id, h.subject
        from hidden_entities h join exo_private.relations r on r.object_id = h.id
        union
        -- the evidence: both ends shown in the relation's own window
        select r.id, s.subject
        from candidates c
        join exo_private.relations r on r.subject_id = c.entity_id
        join windows w on w.id = r.window_id
        left join lateral (
            select u.subject
            from ms m cross join lateral unnest(m.withheld) u(subject)
            where m.window_id = r.window_id and m.entity_id in (r.subject_id, r.object_id)
        ) s on true
        where not (exists (select 1 from ms a where a.entity_id = r.subject_id and a.window_id = r.window_id
                                                and a.withheld = '{}')
                   and exists (select 1 from ms b where b.entity_id = r.object_id and b.window_id = r.window_id
                                                   and b.withheld = '{}'))
    )
    select coalesce((select array_agg(distinct h.id order by h.id) from hidden_entities h), '{}'),
           coalesce((select array_agg(distinct h.id order by h.id) from hidden_relations h), '{}'),
           -- every mention of a withheld entity, and the withheld mentions of the others
           (select count(*) from exo_private.mentions m where m.entity_id in (select h.id from hidden_entities h))
           + (select count(*) from ms m
              where m.withheld <> '{}' and m.entity_id not in (select h.id from hidden_entities h))
$$;
comment on function exo_private.withheld_graph(text, text[]) is
    'What a bridge leaves closed of a workspace''s graph (exo.dossier''s rules): the ids of the '
    'entities that are a closed deferred subject or are seen only in withheld chunks, of the '
    'relations with such an end or whose window does not show both ends, how many mentions are '
    'withheld (every one of such an entity, and those in withheld chunks).';

-- exo_private.graph_withheld: the vertices and edges of a workspace's graph a bridge leaves closed.
create or replace function exo_private.graph_withheld(ws text, bridge text[])
returns table (vertices ag_catalog.graphid[], edges ag_catalog.graphid[])
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with withheld as materialized (
        select * from exo_private.withheld_graph(ws, bridge)
    ), labels as materialized (
        select l.name::text as name, l.id
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = exo_private.graph_name(ws)
    )
    select coalesce((select array_agg(ag_catalog._graphid(l.id, e.id))
                     from withheld w cross join lateral unnest(w.entity_ids) i (id)
                     join exo_private.entities e on e.id = i.id
                     join labels l on l.name = e.type::text), '{}'),
           coalesce((select array_agg(ag_catalog._graphid(l.id, r.id))
                     from withheld w cross join lateral unnest(w.relation_ids) i (id)
                     join exo_private.relations r on r.id = i.id
                     join labels l on l.name = r.predicate), '{}')
$$;
comment on function exo_private.graph_withheld(text, text[]) is
    'What exo.cypher hides of a workspace''s graph for a bridge: the graphids of the vertices and '
    'edges of exo_private.withheld_graph.';

-- exo_private.run_cypher: run a checked Cypher query as exo_graph, over what row security shows.
create or replace function exo_private.run_cypher(graph name, query text, max_rows int)
returns setof text
language plpgsql stable
security definer
set search_path = ag_catalog, pg_temp
set row_security = on
as $$
begin
    -- Owned by exo_graph (sql/985_graph_access.sql), which may only read the graph tables,
    -- through their row security (on, whatever the session says). The caller has checked
    -- the query (no $ in it, so the dollar quote cannot end early) and set
    -- exo.cypher_hidden_vertices and _edges.
    return query execute pg_catalog.format(
        'select pg_catalog.format(''%%s'', v) from ag_catalog.cypher(%L, $exo_cypher$%s$exo_cypher$) '
        'as (v ag_catalog.agtype) limit %s',
        graph, query, max_rows);
end
$$;
comment on function exo_private.run_cypher(name, text, int) is
    'Run a Cypher query that exo.cypher has checked on an AGE graph as exo_graph (read-only on '
    'the graph tables, row security hiding what the hidden-vertices and -edges settings list); '
    'at most max_rows agtype values as text. Executable by exo_api only.';

-- exo.cypher: a read-only Cypher query on one workspace's graph.
create or replace function exo.cypher(
    workspace text, query text, max_rows int default 100, bridge text[] default '{}'
)
returns setof jsonb
language plpgsql volatile  -- it sets the transaction-local settings the graph's policies read
security definer
set search_path = exo_private, pg_temp
as $$
declare
    graph name;
    refusal text;
    n int := least(greatest(coalesce(max_rows, 100), 1), 1000);
    row_value text;
    hidden record;
    held_by text[];
    state text;
    message text;
begin
    if cypher.workspace is null then
        perform exo_private.invalid_argument('workspace must name a workspace, got null');
    end if;
    perform exo_private.check_workspaces(array[cypher.workspace]);
    graph := exo_private.graph_name(cypher.workspace);
    if not exists (select 1 from ag_catalog.ag_graph g where g.name = graph) then
        perform exo_private.invalid_argument(
            format('workspace %s has no graph yet', exo_private.quoted(cypher.workspace)));
    end if;
    refusal := exo_private.cypher_refusal(query);
    if refusal is not null then
        perform exo_private.invalid_argument(refusal,
            'exo.cypher runs one read-only query: MATCH ... [WHERE ...] RETURN one value '
            '(a map such as {name: n.name} for several), calling only AGE''s read functions');
    end if;
    select * into hidden from exo_private.graph_withheld(cypher.workspace, bridge);
    -- Read by the row security policies of the graph's tables (for exo_graph only); unset,
    -- they hide everything.
    perform pg_catalog.set_config('exo.cypher_hidden_vertices', hidden.vertices::text, true);
    perform pg_catalog.set_config('exo.cypher_hidden_edges', hidden.edges::text, true);
    begin
        for row_value in select r from exo_private.run_cypher(graph, query, n) r loop
            return next exo_private.agtype_jsonb(row_value);
        end loop;
    exception
        when datatype_mismatch then
            raise exception 'query must RETURN exactly one value: %', pg_catalog.left(sqlerrm, 200)
                using errcode = 'invalid_parameter_value',
                      hint = 'return a map for several values: RETURN {name: n.name, type: label(n)}';
        when others then
            -- AGE's errors quote the rest of the query: keep the class, clip the text.
            get stacked diagnostics state = returned_sqlstate, message = message_text;
            raise exception '%', pg_catalog.left(message, 200) || case when pg_catalog.length(message) > 200
                                                                       then '…' else '' end
                using errcode = state;
    end;
    -- The hint depends neither on the query nor on what withheld text says (which subjects'
    -- material hides a vertex): every closed subject charged in the workspace, as a search's
    -- hints, and one whose own entity is in its graph, which the owner's list decides.
    select array_agg(distinct x.subject order by x.subject) into held_by
    from (select h.subject from exo_private.subject_hints(array[cypher.workspace], bridge) h
          union
          select k.subject
          from exo_private.closed_subject_keys(bridge) k
          join exo_private.entities e on e.canonical_key = k.key and e.workspace = cypher.workspace) x;
    if held_by is not null then
        return next jsonb_build_object('exo_withheld', jsonb_build_object(
            'subjects', pg_catalog.to_jsonb(held_by),
            'how', (select string_agg(exo_private.hint_how(s), '; ' order by s) from unnest(held_by) s)));
    end if;
end
$$;
comment on function exo.cypher(text, text, int, text[]) is
    'A read-only openCypher query on one workspace''s Apache AGE graph, one jsonb per row: e.g. '
    'exo.cypher(''technical'', ''MATCH (p:Person)-[r]->(o:Org) RETURN {person: p.name, rel: '
    'type(r), org: o.name}''). Vertices are labelled by entity type (Person, Org, Place, Topic, '
    'Date) with properties id (the entity id), name, key, type, is_owner; edges by predicate '
    '(WORKS_AT, ...) with properties predicate_raw, document_id. RETURN exactly one value (a map '
    'for several); a vertex or edge comes back as {id, label, properties, ...}. At most max_rows '
    'rows are read (clamped to 1..1000). Only MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER '
    'BY, SKIP, LIMIT, UNWIND, UNION and AGE''s read functions (id, type, labels, properties, '
    'size, toUpper, count, collect, ...); refused (invalid_parameter_value naming the rule, the '
    'token and its position): any write or procedure word (CREATE, MERGE, SET, DELETE, REMOVE, '
    'CALL, ...), other or dotted function calls, variable-length relationships (-[*]-), '
    'comments, $, ; and :: casts. Care: the query runs over what the caller may see: a deferred '
    'subject''s vertex, an entity seen only in withheld chunks, and a relation with such an end '
    'or whose only evidence is withheld are left out of the graph it reads unless bridge names '
    'the subject; a last row {"exo_withheld": {subjects, how}}, the same whatever the query, names '
    'each subject left closed that is charged in the workspace or is an entity of its graph, and '
    'how to ask.';
