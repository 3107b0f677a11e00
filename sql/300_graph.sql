-- The knowledge graph: predicate labels, extraction generations, the projection into each
-- workspace's Apache AGE graph, and hub-safe traversal. Which entity a name is, and merging one
-- window's extraction into entities / mentions / relations, is sql/305_entity_identity.sql.
--
-- The relational tables are the truth; the AGE graph of a workspace is a projection
-- of its current generation, written by project_entities / project_relations and
-- checked by graph_disagreements. A vertex's graphid is derived from its entity id
-- (ag_catalog._graphid(label id, entity id)) and an edge's from its relation id, so
-- projecting is idempotent and needs no lookup table. Nothing here runs Cypher
-- CREATE: a label's id sequence is never used, so Cypher CREATE on these labels could
-- collide with the derived ids.

-- exo_private.normalise_predicate: a relation's edge label from what the model said.
create or replace function exo_private.normalise_predicate(raw text)
returns text
language sql immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    with words as (
        -- Latin accents folded to ASCII, apostrophes dropped ("doesn't" -> DOESNT), then
        -- every run of anything but a letter or digit becomes one underscore.
        select pg_catalog.btrim(pg_catalog.regexp_replace(pg_catalog.upper(
                   pg_catalog.translate(
                       pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                           pg_catalog.regexp_replace(coalesce(raw, ''), '[''\u2019`]', '', 'g'),
                           'ß', 'ss'), 'æ', 'ae'), 'Æ', 'AE'), 'œ', 'oe'),
                       'ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿŒ',
                       'AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOOooooooUUUUuuuuYyyO')),
                   '[^A-Z0-9]+', '_', 'g'), '_') as w
    ), labelled as (
        select case when w = '' then 'RELATED_TO'
                    when w ~ '^[0-9]' then 'RELATED_TO_' || w
                    else w end as l
        from words
    )
    select case when t ~ '^[A-Z][A-Z0-9_]{0,62}$' then t else 'RELATED_TO' end
    from (select pg_catalog.rtrim(pg_catalog.left(l, 63), '_') as t from labelled) trimmed
$$;
comment on function exo_private.normalise_predicate(text) is
    'Edge label of a predicate: upper snake case of its words (Latin accents folded, apostrophes '
    'dropped, other non-alphanumerics one _), at most 63 characters; RELATED_TO when nothing is '
    'left (null, punctuation, non-Latin script), RELATED_TO_ before one that starts with a digit.';

-- exo_private.current_generation: the workspace's newest extraction generation.
create or replace function exo_private.current_generation(ws text, model text)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    gen int;
    gen_model text;
begin
    select g.generation, g.model into gen, gen_model
    from exo_private.extraction_generations g
    where g.workspace = ws
    order by g.generation desc
    limit 1;
    if gen is null then
        if not exists (select 1 from exo_private.workspaces w where w.name = ws) then
            raise exception 'workspace % does not exist', ws;
        end if;
        insert into exo_private.extraction_generations (workspace, generation, model)
        values (ws, 1, current_generation.model)
        on conflict do nothing;
        return 1;
    end if;
    -- A generation set_owner made before any model ran is claimed by the first model.
    if gen_model = 'seed' and current_generation.model <> 'seed' then
        update exo_private.extraction_generations g
           set model = current_generation.model
         where g.workspace = ws and g.generation = gen and g.model = 'seed';
    end if;
    return gen;
end
$$;
comment on function exo_private.current_generation(text, text) is
    'The workspace''s newest extraction generation; creates generation 1 for model when there is '
    'none, and lets model claim a ''seed'' generation (made by set_owner). A different model '
    'never bumps here: that is bump_generation.';

-- exo_private.ensure_label: a vertex or edge label of a graph, created when missing.
create or replace function exo_private.ensure_label(graph name, label text, kind "char")
returns int
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    label_id int;
    label_kind "char";
    relation regclass;
begin
    select l.id, l.kind into label_id, label_kind
    from ag_catalog.ag_label l
    join ag_catalog.ag_graph g on g.graphid = l.graph
    where g.name = ensure_label.graph and l.name = ensure_label.label;
    if label_id is null then
        -- Two workers may want the same new label at once: one creates it, the other
        -- waits here and then finds it.
        perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('exo_private.ensure_label'),
                                                 pg_catalog.hashtext(graph::text));
        select l.id, l.kind into label_id, label_kind
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = ensure_label.graph and l.name = ensure_label.label;
    end if;
    if label_id is null then
        if kind = 'v' then
            perform ag_catalog.create_vlabel(graph::cstring, label::cstring);
        elsif kind = 'e' then
            perform ag_catalog.create_elabel(graph::cstring, label::cstring);
        else
            raise exception 'label kind must be v or e, not %', kind;
        end if;
        select l.id, l.kind, l.relation into label_id, label_kind, relation
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = ensure_label.graph and l.name = ensure_label.label;
        if kind = 'e' then
            -- AGE indexes an edge label's start_id and end_id but not its id, which
            -- project_relations looks up.
            execute format('create unique index on %s (id)', relation);
        end if;
        perform exo_private.guard_graph_table(relation, kind);
    end if;
    if label_kind <> kind then
        raise exception 'label % of graph % is of kind %, not %', label, graph, label_kind, kind;
    end if;
    return label_id;
end
$$;
comment on function exo_private.ensure_label(name, text, "char") is
    'Id of a vertex (v) or edge (e) label of an AGE graph, created when missing (edge labels with a '
    'unique index on id).';

-- exo_private.project_entities: write entities of current generations as AGE vertices.
create or replace function exo_private.project_entities(ids bigint[])
returns int
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    grp record;
    label_id int;
    n int;
    total int := 0;
begin
    -- Rows are gathered by one static query; each label then takes one short insert
    -- (a dynamic statement is planned every time, so it is kept trivial).
    for grp in
        select e.workspace, e.type,
               array_agg(e.id order by e.id) as entity_ids,
               array_agg(pg_catalog.jsonb_build_object(
                   'id', e.id, 'name', e.name, 'key', e.canonical_key, 'type', e.type,
                   'generation', e.generation, 'is_owner', e.is_owner)
                   || case when e.sense <> '' then pg_catalog.jsonb_build_object('sense', e.sense)
                           else '{}'::jsonb end order by e.id) as props
        from exo_private.entities e
        where e.id = any(ids)
          and e.generation = (select max(g.generation) from exo_private.extraction_generations g
                              where g.workspace = e.workspace)
        group by e.workspace, e.type
        order by e.workspace, e.type
    loop
        label_id := exo_private.ensure_label(exo_private.ensure_workspace_graph(grp.workspace), grp.type::text, 'v');
        execute format($sql$
            insert into %I.%I as v (id, properties)
            select ag_catalog._graphid($1, u.id), u.props::text::ag_catalog.agtype
            from unnest($2::bigint[], $3::jsonb[]) u(id, props)
            on conflict (id) do update set properties = excluded.properties
                where v.properties operator(ag_catalog.<>) excluded.properties
        $sql$, exo_private.graph_name(grp.workspace), grp.type) using label_id, grp.entity_ids, grp.props;
        get diagnostics n = row_count;
        total := total + n;
    end loop;
    return total;
end
$$;
comment on function exo_private.project_entities(bigint[]) is
    'Project entities (of their workspace''s current generation) into the AGE graph as vertices '
    'labelled by type, graphid derived from the entity id, properties id, name, key, type, '
    'generation, is_owner (and sense, for a second thing sharing a name); changed properties are '
    'updated. Returns vertices written.';

-- exo_private.project_relations: write relations of current generations as AGE edges.
create or replace function exo_private.project_relations(ids bigint[])
returns int
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    grp record;
    label_id int;
    n int;
    total int := 0;
begin
    -- Both ends first, so that no edge dangles (and their vertex labels exist).
    perform exo_private.project_entities(array(
        select unnest(array[r.subject_id, r.object_id]) from exo_private.relations r where r.id = any(ids)));
    for grp in
        select r.workspace, r.predicate,
               array_agg(r.id order by r.id) as relation_ids,
               array_agg(ag_catalog._graphid(sl.id, r.subject_id) order by r.id) as start_ids,
               array_agg(ag_catalog._graphid(ol.id, r.object_id) order by r.id) as end_ids,
               array_agg(pg_catalog.jsonb_build_object(
                   'id', r.id, 'predicate_raw', r.predicate_raw, 'predicate', r.predicate,
                   'window_id', r.window_id, 'document_id', r.document_id) order by r.id) as props
        from exo_private.relations r
        join exo_private.entities s on s.id = r.subject_id
        join exo_private.entities o on o.id = r.object_id
        join ag_catalog.ag_graph g on g.name = exo_private.graph_name(r.workspace)
        join ag_catalog.ag_label sl on sl.graph = g.graphid and sl.name = s.type::text
        join ag_catalog.ag_label ol on ol.graph = g.graphid and ol.name = o.type::text
        where r.id = any(ids)
          and r.generation = (select max(x.generation) from exo_private.extraction_generations x
                              where x.workspace = r.workspace)
        group by r.workspace, r.predicate
        order by r.workspace, r.predicate
    loop
        label_id := exo_private.ensure_label(exo_private.graph_name(grp.workspace), grp.predicate, 'e');
        execute format($sql$
            insert into %1$I.%2$I (id, start_id, end_id, properties)
            select ag_catalog._graphid($1, u.id), u.start_id, u.end_id, u.props::text::ag_catalog.agtype
            from unnest($2::bigint[], $3::ag_catalog.graphid[], $4::ag_catalog.graphid[], $5::jsonb[])
                 u(id, start_id, end_id, props)
            where not exists (select 1 from %1$I.%2$I e where e.id = ag_catalog._graphid($1, u.id))
        $sql$, exo_private.graph_name(grp.workspace), grp.predicate)
        using label_id, grp.relation_ids, grp.start_ids, grp.end_ids, grp.props;
        get diagnostics n = row_count;
        total := total + n;
    end loop;
    return total;
end
$$;
comment on function exo_private.project_relations(bigint[]) is
    'Project relations (of their workspace''s current generation) into the AGE graph as edges '
    'subject -> object labelled by the normalised predicate, graphid derived from the relation '
    'id, properties id, predicate_raw, predicate, window_id, document_id; projects both ends '
    'first. Returns edges written.';

-- exo_private.clear_graph: delete every vertex and edge of a workspace's AGE graph.
create or replace function exo_private.clear_graph(ws text)
returns void
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    graph name := exo_private.ensure_workspace_graph(ws);
begin
    -- The parent label tables hold every label's rows (inheritance); the labels stay.
    execute format('truncate %1$I._ag_label_edge, %1$I._ag_label_vertex', graph);
end
$$;
comment on function exo_private.clear_graph(text) is
    'Empty a workspace''s AGE graph (all vertices and edges; the labels stay).';

-- exo_private.graph_disagreements: where a workspace's AGE graph differs from its tables.
create or replace function exo_private.graph_disagreements(ws text)
returns table (kind text, id bigint, detail text)
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    graph name := exo_private.ensure_workspace_graph(ws);
    gen int;
begin
    select max(g.generation) into gen from exo_private.extraction_generations g where g.workspace = ws;
    for kind, id, detail in execute format($sql$
        with ent as (
            select e.id, e.type::text as label,
                   ag_catalog._graphid(l.id, e.id) as gid
            from exo_private.entities e
            left join ag_catalog.ag_graph g on g.name = %1$L
            left join ag_catalog.ag_label l on l.graph = g.graphid and l.name = e.type::text
            where e.workspace = $1 and e.generation = $2
        ), vtx as (
            select v.id as gid, l.name::text as label,
                   (v.properties::text::jsonb ->> 'id')::bigint as entity_id
            from %1$I._ag_label_vertex v
            join ag_catalog.ag_label l on l.relation = v.tableoid::regclass
        ), rel as (
            select r.id, r.predicate as label,
                   ag_catalog._graphid(sl.id, r.subject_id) as start_gid,
                   ag_catalog._graphid(ol.id, r.object_id) as end_gid
            from exo_private.relations r
            join exo_private.entities s on s.id = r.subject_id
            join exo_private.entities o on o.id = r.object_id
            left join ag_catalog.ag_graph g on g.name = %1$L
            left join ag_catalog.ag_label sl on sl.graph = g.graphid and sl.name = s.type::text
            left join ag_catalog.ag_label ol on ol.graph = g.graphid and ol.name = o.type::text
            where r.workspace = $1 and r.generation = $2
        ), edg as (
            select x.start_id as start_gid, x.end_id as end_gid, l.name::text as label,
                   (x.properties::text::jsonb ->> 'id')::bigint as relation_id
            from %1$I._ag_label_edge x
            join ag_catalog.ag_label l on l.relation = x.tableoid::regclass
        )
        select 'missing_vertex', ent.id, 'entity ' || ent.id || ' (' || ent.label || ') has no vertex'
        from ent where not exists (select 1 from vtx where vtx.entity_id = ent.id)
        union all
        select 'extra_vertex', vtx.entity_id,
               'vertex ' || vtx.gid::text || ' (' || vtx.label || ') is no entity of generation ' || coalesce($2::text, 'none')
        from vtx where not exists (select 1 from ent where ent.id = vtx.entity_id)
        union all
        select 'vertex_label', ent.id, 'entity is ' || ent.label || ', vertex label ' || vtx.label
        from ent join vtx on vtx.entity_id = ent.id where vtx.label <> ent.label
        union all
        select 'vertex_id', ent.id, 'vertex ' || vtx.gid::text || ' should be ' || coalesce(ent.gid::text, 'null')
        from ent join vtx on vtx.entity_id = ent.id
        where vtx.label = ent.label and vtx.gid operator(ag_catalog.<>) ent.gid
        union all
        select 'duplicate_vertex', vtx.entity_id, count(*) || ' vertices'
        from vtx group by vtx.entity_id having count(*) > 1
        union all
        select 'missing_edge', rel.id, 'relation ' || rel.id || ' (' || rel.label || ') has no edge'
        from rel where not exists (select 1 from edg where edg.relation_id = rel.id)
        union all
        select 'extra_edge', edg.relation_id, 'edge (' || edg.label || ') is no relation of generation ' || coalesce($2::text, 'none')
        from edg where not exists (select 1 from rel where rel.id = edg.relation_id)
        union all
        select 'edge_label', rel.id, 'predicate ' || rel.label || ', edge label ' || edg.label
        from rel join edg on edg.relation_id = rel.id where edg.label <> rel.label
        union all
        select 'edge_endpoints', rel.id, 'edge does not join the vertices of its subject and object'
        from rel join edg on edg.relation_id = rel.id
        where rel.start_gid is distinct from edg.start_gid or rel.end_gid is distinct from edg.end_gid
        union all
        select 'duplicate_edge', edg.relation_id, count(*) || ' edges'
        from edg group by edg.relation_id having count(*) > 1
    $sql$, graph) using ws, gen
    loop
        return next;
    end loop;
end
$$;
comment on function exo_private.graph_disagreements(text) is
    'Differences between a workspace''s current-generation entities and relations and its AGE '
    'graph (missing/extra/duplicate vertices and edges, wrong labels, ids or endpoints); empty '
    'when they are in step.';

-- exo_private.evidence_valid_from: when a source says what it states held.
create or replace function exo_private.evidence_valid_from(
    p_workspace text, p_document_id bigint, p_chunk_id bigint
)
returns timestamptz
language sql
stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A chat window's first message, else the day the chunk or its document was written
    -- (midnight UTC); null when the source has no date.
    select coalesce(
        (select w.first_sent_at from exo_private.chat_windows w
          where w.workspace = p_workspace and w.chunk_id = p_chunk_id),
        (select c.written_at::timestamp at time zone 'UTC' from exo_private.chunks c
          where c.workspace = p_workspace and c.id = p_chunk_id),
        (select d.written_at::timestamp at time zone 'UTC' from exo_private.documents d
          where d.id = p_document_id))
$$;
comment on function exo_private.evidence_valid_from(text, bigint, bigint) is
    'When a source says what it states held (a fact''s valid_from): the first message time of the '
    'chat window p_chunk_id, else the day chunk p_chunk_id or else document p_document_id was '
    'written (midnight UTC); null when undated.';

-- exo_private.cue_type: the type a name's own words say it has (plpy/entity_types.py).
create or replace function exo_private.cue_type(name text, said text default null)
returns text
language plpython3u immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include entity_types
return cue_type(name, said)
$$;
comment on function exo_private.cue_type(text, text) is
    'Place or Org where a name of two or more words carries a cue word (Road, Lane, Mount ...; '
    'Ltd, Mutual, Bank, University ...), null otherwise; said is the type the model gave (a place '
    'word that is also a common surname, such as Lane or Hill, is no cue against Person). The '
    'lists live in plpy/entity_types.py, which the worker uses too.';

-- exo_private.unproject_entities: take entities' vertices, and the edges at them, out of the graph.
create or replace function exo_private.unproject_entities(ids bigint[])
returns void
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    grp record;
    graph name;
    vertex_ids ag_catalog.graphid[];
begin
    for grp in
        select e.workspace, e.type, l.id as label_id, array_agg(e.id) as entity_ids
        from exo_private.entities e
        join ag_catalog.ag_graph g on g.name = exo_private.graph_name(e.workspace)
        join ag_catalog.ag_label l on l.graph = g.graphid and l.name = e.type::text and l.kind = 'v'
        where e.id = any(ids)
        group by e.workspace, e.type, l.id
    loop
        graph := exo_private.graph_name(grp.workspace);
        vertex_ids := array(select ag_catalog._graphid(grp.label_id, x) from unnest(grp.entity_ids) x);
        execute format('delete from %I._ag_label_edge x where x.start_id = any($1) or x.end_id = any($1)', graph)
            using vertex_ids;
        execute format('delete from %I.%I v where v.id = any($1)', graph, grp.type) using vertex_ids;
    end loop;
end
$$;
comment on function exo_private.unproject_entities(bigint[]) is
    'Delete the AGE vertices of the given entities (under their current type''s label) and every '
    'edge at them; the rows stay. Callers re-project what should remain (project_entities, '
    'project_relations).';

-- exo_private.reproject_entities: an entity's vertex and edges again, after its type or ends changed.
create or replace function exo_private.reproject_entities(ids bigint[])
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    perform exo_private.project_entities(ids);
    perform exo_private.project_relations(array(
        select r.id from exo_private.relations r where r.subject_id = any(ids)
        union
        select r.id from exo_private.relations r where r.object_id = any(ids)));
end
$$;
comment on function exo_private.reproject_entities(bigint[]) is
    'Project the given entities and every relation at them (after unproject_entities, when a type '
    'or a relation''s end changed).';

-- exo_private.bump_generation: a new extraction model for a workspace; rebuild its graph.
create or replace function exo_private.bump_generation(ws text, model text)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    newest int;
    gen int;
    pending bigint[];
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = ws) then
        raise exception 'workspace % does not exist', ws;
    end if;
    -- Waits for merges holding the current generation (they lock it for share).
    select g.generation into newest
    from exo_private.extraction_generations g
    where g.workspace = ws
    order by g.generation desc
    limit 1
    for update;
    gen := coalesce(newest, 0) + 1;
    insert into exo_private.extraction_generations (workspace, generation, model)
    values (ws, gen, bump_generation.model);

    -- Mentions and relations go with their entities (on delete cascade).
    delete from exo_private.entities e where e.workspace = ws and e.generation < gen;
    update exo_private.extraction_windows w
       set extracted_generation = null, extracted_at = null, extraction_stats = null
     where w.workspace = ws;
    perform exo_private.advance_stages(array(
        select d.id from exo_private.documents d where d.workspace = ws and d.stage = 'graphed'));
    perform exo_private.clear_graph(ws);
    perform exo_private.project_entities(exo_private.seed_owner(array[ws]));
    perform exo_private.link_participants(array(
        select d.conversation_id from exo_private.documents d
        where d.workspace = ws and d.conversation_id is not null));
    perform exo_private.link_structure(array(
        select d.id from exo_private.documents d where d.workspace = ws and d.conversation_id is null));

    -- Every window again, once: the workspace's jobs still waiting are dropped first.
    select array_agg(q.msg_id) into pending
    from pgmq.q_extract q
    where q.message ->> 'workspace' = ws;
    if pending is not null then
        perform pgmq.delete('extract', pending);
    end if;
    perform pgmq.send_batch('extract', array(
        select jsonb_build_object('window_id', w.id, 'workspace', ws)
        from exo_private.extraction_windows w
        where w.workspace = ws
        order by w.id));
    return gen;
end
$$;
comment on function exo_private.bump_generation(text, text) is
    'Start a new extraction generation of a workspace for model: deletes older generations'' '
    'entities (mentions and relations cascade), empties its AGE graph, re-seeds the owner entity '
    'the chat participants (link_participants) and the other structural rows (link_structure), '
    'and queues every extraction window again (dropping its waiting extract jobs). Returns the '
    'new generation. A graph is only ever built by one model.';

-- exo_private.count_entity_edges: relations written keep exo_private.entity_edges.
create or replace function exo_private.count_entity_edges(
    added_subjects bigint[], added_objects bigint[], gone_subjects bigint[], gone_objects bigint[]
)
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    a bigint[];
    b bigint[];
    k int[];
begin
    -- The pairs of the relations added (+1) and gone (-1), in both directions, an entity with
    -- itself never: an update that moved no end nets to nothing.
    select coalesce(array_agg(d.a order by d.a, d.b), '{}'), coalesce(array_agg(d.b order by d.a, d.b), '{}'),
           coalesce(array_agg(d.k order by d.a, d.b), '{}')
      into a, b, k
    from (
        select e.a, e.b, sum(x.k)::int as k
        from (
            select x.s, x.o, 1 as k from unnest(added_subjects, added_objects) x (s, o)
            union all
            select x.s, x.o, -1 from unnest(gone_subjects, gone_objects) x (s, o)
        ) x
        cross join lateral (values (x.s, x.o), (x.o, x.s)) e (a, b)
        where x.s <> x.o
        group by e.a, e.b
        having sum(x.k) <> 0
    ) d;
    if cardinality(a) = 0 then
        return;
    end if;
    -- One statement in key order: two writers of the same pairs wait, not deadlock. A pair whose
    -- last relation went is then removed.
    insert into exo_private.entity_edges as t (entity_id, neighbour_id, relations)
    select d.a, d.b, d.k from unnest(a, b, k) d (a, b, k) order by d.a, d.b
    on conflict (entity_id, neighbour_id) do update set relations = t.relations + excluded.relations;
    delete from exo_private.entity_edges t
    using unnest(a, b, k) d (a, b, k)
    where d.k < 0 and t.entity_id = d.a and t.neighbour_id = d.b and t.relations <= 0;
end
$$;
comment on function exo_private.count_entity_edges(bigint[], bigint[], bigint[], bigint[]) is
    'Add to exo_private.entity_edges the relations added (their subjects and objects, in order) and '
    'take from it those gone; a pair whose last relation went is removed. Called by the '
    'relations_count_edges triggers.';

-- Statement triggers (transition tables): a COPY or a merge of thousands of relations counts once.
create or replace function exo_private.relations_added_edges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    s bigint[];
    o bigint[];
begin
    select array_agg(n.subject_id), array_agg(n.object_id) into s, o from new_relations n;
    perform exo_private.count_entity_edges(s, o, null, null);
    return null;
end
$$;
comment on function exo_private.relations_added_edges() is
    'Trigger: relations inserted count in exo_private.entity_edges.';

create or replace function exo_private.relations_gone_edges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    s bigint[];
    o bigint[];
begin
    select array_agg(g.subject_id), array_agg(g.object_id) into s, o from old_relations g;
    perform exo_private.count_entity_edges(null, null, s, o);
    return null;
end
$$;
comment on function exo_private.relations_gone_edges() is
    'Trigger: relations deleted are taken from exo_private.entity_edges.';

create or replace function exo_private.relations_moved_edges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    s_new bigint[];
    o_new bigint[];
    s_old bigint[];
    o_old bigint[];
begin
    -- only the rows whose ends changed (most updates of relations touch neither)
    select array_agg(n.subject_id), array_agg(n.object_id), array_agg(g.subject_id), array_agg(g.object_id)
      into s_new, o_new, s_old, o_old
    from new_relations n
    join old_relations g on g.id = n.id
    where (n.subject_id, n.object_id) is distinct from (g.subject_id, g.object_id);
    perform exo_private.count_entity_edges(s_new, o_new, s_old, o_old);
    return null;
end
$$;
comment on function exo_private.relations_moved_edges() is
    'Trigger: relations given other ends move their count in exo_private.entity_edges.';

-- Migration 0103 counted the edges in its own transaction; these triggers are made in this one,
-- later: a relation written between the two would never be counted. Where the triggers are new,
-- the edges are counted again here, writers of relations kept out until they exist (commit).
do $$
begin
    if not exists (select 1 from pg_catalog.pg_trigger
                   where tgrelid = 'exo_private.relations'::regclass and tgname = 'relations_count_edges_insert') then
        lock table exo_private.relations in share row exclusive mode;
        delete from exo_private.entity_edges;
        insert into exo_private.entity_edges (entity_id, neighbour_id, relations)
        select e.a, e.b, count(*)
        from exo_private.relations r
        cross join lateral (values (r.subject_id, r.object_id), (r.object_id, r.subject_id)) e (a, b)
        where r.subject_id <> r.object_id
        group by e.a, e.b;
    end if;
end
$$;
create or replace trigger relations_count_edges_insert
    after insert on exo_private.relations
    referencing new table as new_relations
    for each statement execute function exo_private.relations_added_edges();
create or replace trigger relations_count_edges_delete
    after delete on exo_private.relations
    referencing old table as old_relations
    for each statement execute function exo_private.relations_gone_edges();
create or replace trigger relations_count_edges_update
    after update on exo_private.relations
    referencing old table as old_relations new table as new_relations
    for each statement execute function exo_private.relations_moved_edges();

-- exo_private.generation_for: the generation a model's extraction goes into, or null when
-- the workspace's graph now belongs to another model (the reply is stale: discard it).
create or replace function exo_private.generation_for(ws text, model text)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    newest_model text;
begin
    select g.model into newest_model
    from exo_private.extraction_generations g
    where g.workspace = ws
    order by g.generation desc
    limit 1;
    if newest_model is not null and newest_model not in ('seed', generation_for.model) then
        return null;
    end if;
    return exo_private.current_generation(ws, generation_for.model);
end
$$;
comment on function exo_private.generation_for(text, text) is
    'The extraction generation for a model in a workspace, or null when the graph now belongs to '
    'another model (a reply from a worker that read the old setting).';

-- exo_private.extraction_model_changed: a new chat model restarts every workspace's graph.
create or replace function exo_private.extraction_model_changed()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ws text;
begin
    for ws in select distinct g.workspace from exo_private.extraction_generations g order by 1 loop
        perform exo_private.bump_generation(ws, new.value ->> 'model');
    end loop;
    return new;
end
$$;
comment on function exo_private.extraction_model_changed() is
    'Trigger: when the models.chat setting names another model, every graph gets a new generation '
    'built from that model only (bump_generation).';

create or replace trigger extraction_model_changed
    after update on exo_private.settings
    for each row
    when (new.key = 'models.chat' and old.value ->> 'model' is distinct from new.value ->> 'model')
    execute function exo_private.extraction_model_changed();
