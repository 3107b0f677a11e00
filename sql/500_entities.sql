-- The graph's entities for agents: search_entities, dossier, cross_document_entities,
-- related and timeline, with their exo_private bodies and helpers. Each answers over what the
-- caller may see (sql/450_deference.sql) and says what it left out in hints, never the text.

-- exo_private.like_pattern: a substring pattern for ILIKE with the input's wildcards escaped.
create or replace function exo_private.like_pattern(input text)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select '%' || pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
               input, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;
comment on function exo_private.like_pattern(text) is
    'ILIKE pattern matching input as a plain substring: %, _ and \ in it are escaped.';

-- exo_private.parse_entity_type: an entity type named case-insensitively, or null for null.
create or replace function exo_private.parse_entity_type(entity_type text)
returns exo_private.entity_type
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    parsed exo_private.entity_type;
begin
    if entity_type is null or pg_catalog.btrim(entity_type) = '' then
        return null;
    end if;
    select t into parsed
    from unnest(enum_range(null::exo_private.entity_type)) t
    where pg_catalog.lower(t::text) = pg_catalog.lower(pg_catalog.btrim(entity_type));
    if parsed is null then
        perform exo_private.invalid_argument(
            format('entity_type must be one of %s, got %s',
                   pg_catalog.array_to_string(enum_range(null::exo_private.entity_type), ', '),
                   exo_private.quoted(entity_type)));
    end if;
    return parsed;
end
$$;
comment on function exo_private.parse_entity_type(text) is
    'The entity type named (case-insensitive), null for null or blank; raises invalid_parameter_value '
    'naming entity_type and the types otherwise.';

-- exo_private.resolve_entity: the entities an argument names (an id, or a name by key).
drop function if exists exo_private.resolve_entity(text, text);  -- before bridge
create or replace function exo_private.resolve_entity(entity text, workspace text, bridge text[])
returns bigint[]
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    wanted text := pg_catalog.btrim(entity);
    wanted_key text;
    ids bigint[];
begin
    if workspace is not null then
        perform exo_private.check_workspaces(array[workspace]);
    end if;
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'entity must be an entity id or a name, got ' || exo_private.quoted(entity));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(e.id) into ids
        from exo_private.entities e
        where e.id = wanted::bigint
          and (resolve_entity.workspace is null or e.workspace = resolve_entity.workspace);
        ids := exo_private.entities_nameable(ids, bridge);
        if ids is not null then
            return ids;
        end if;
    end if;
    -- A name: every entity with its canonical key (one per workspace and type), never merged.
    wanted_key := exo_private.canonical_key(wanted);
    select array_agg(e.id order by e.workspace, e.type, e.id) into ids
    from exo_private.entities e
    where e.canonical_key = wanted_key
      and (resolve_entity.workspace is null or e.workspace = resolve_entity.workspace);
    ids := exo_private.entities_nameable(ids, bridge);
    if ids is null then
        perform exo_private.invalid_argument(
            format('entity %s names no entity%s', exo_private.quoted(entity),
                   case when workspace is null then '' else ' in workspace ' || exo_private.quoted(workspace) end),
            format('exo.search_entities(name => %s) lists the entities whose names contain it',
                   exo_private.quoted(wanted)));
    end if;
    return ids;
end
$$;
comment on function exo_private.resolve_entity(text, text, text[]) is
    'Entity ids an API argument names: digits are an entity id (when one exists; otherwise read as a '
    'name), anything else a name matched by canonical key, all workspaces unless one is given, '
    'ordered by workspace and type; of them only those the caller may name '
    '(exo_private.entities_nameable, with bridge). Raises invalid_parameter_value when none is left.';

-- exo_private.excerpt: about width characters of a text around the first occurrence of needle.
create or replace function exo_private.excerpt(body text, needle text, width int default 200)
returns text
language plpgsql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    key text := pg_catalog.lower(pg_catalog.btrim(coalesce(needle, '')));
    at int := pg_catalog.strpos(pg_catalog.lower(body), key);
    first int := greatest(1, at - width);
    stretch text;
    start int := 1;
begin
    if body is null then
        return null;
    end if;
    -- Only a stretch of twice the width around the needle is whitespace-collapsed, so a long
    -- chunk costs no more than a short one.
    stretch := pg_catalog.regexp_replace(
        pg_catalog.substr(body, first, 2 * width + pg_catalog.length(key)), '\s+', ' ', 'g');
    if at > 0 then
        start := greatest(1, pg_catalog.strpos(pg_catalog.lower(stretch), key)
                             - greatest(0, (width - pg_catalog.length(key)) / 2));
    end if;
    return case when first > 1 or start > 1 then '…' else '' end
           || pg_catalog.btrim(pg_catalog.substr(stretch, start, width))
           || case when first + 2 * width + pg_catalog.length(key) <= pg_catalog.length(body)
                     or start + width <= pg_catalog.length(stretch) then '…' else '' end;
end
$$;
comment on function exo_private.excerpt(text, text, int) is
    'About width characters of body (whitespace collapsed) centred on the first case-insensitive '
    'occurrence of needle (the start when absent), with … where it was cut.';

-- exo_private.entity_relations_judged: an entity's relations, each with what withholds it.
create or replace function exo_private.entity_relations_judged(
    p_entity bigint, released text[], closed_subjects text[], closed_keys text[]
)
returns table (
    id bigint, document_id bigint, direction text, predicate text, predicate_raw text, other_id bigint,
    other_name text, other_type text, other_subject text, evidence_withheld text[]
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with closed as (
        select c.subject, c.key from unnest(closed_subjects, closed_keys) c (subject, key)
    ), rels as (
        select r.id, r.window_id, r.document_id, r.predicate, r.predicate_raw,
               case when r.subject_id = p_entity then 'out' else 'in' end as direction,
               case when r.subject_id = p_entity then r.object_id else r.subject_id end as other_id
        from exo_private.relations r
        where r.subject_id = p_entity or r.object_id = p_entity
    )
    select rl.id, rl.document_id, rl.direction, rl.predicate, rl.predicate_raw, rl.other_id,
           o.name, o.type::text,
           (select c.subject from closed c where c.key = o.canonical_key order by c.subject limit 1),
           -- both ends must be shown in the relation's window: what withholds either
           exo_private.mention_state(p_entity, rl.window_id, released)
               || exo_private.mention_state(rl.other_id, rl.window_id, released)
    from rels rl
    join exo_private.entities o on o.id = rl.other_id
$$;
comment on function exo_private.entity_relations_judged(bigint, text[], text[], text[]) is
    'Every relation of an entity (out: it is the subject; in: the object; released, closed_subjects and closed_keys as the dossier works them out from its bridge) with the other end''s name '
    'and type, the closed subject the other end is (null: none the bridge leaves closed) and the '
    'subjects whose withheld mentions in the relation''s window withhold its evidence (empty: none).';

-- exo_private.entity_dossier: one entity's dossier.
create or replace function exo_private.entity_dossier(p_entity bigint, bridge text[], p_as_of timestamptz)
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with ent as (
        select e.id, e.workspace, e.type, e.name, e.canonical_key, e.is_owner, e.sense
        from exo_private.entities e
        where e.id = p_entity
    ), closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), itself as (
        -- the entity is a deferred subject the bridge leaves closed
        select c.subject from closed c join ent on ent.canonical_key = c.key
        order by c.subject limit 1
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(array[p_entity], bridge) m
        where p_as_of is null or exo_private.written_by(m.document_id, m.chunk_id, p_as_of)
    ), shown_docs as (
        select m.document_id, count(*) as mentions, min(m.surface) as surface
        from ms m where m.withheld = '{}'
        group by m.document_id
    ), shown as (
        select s.* from shown_docs s
        where s.document_id not in (
            select k.document_id
            from exo_private.closed_documents(array(select x.document_id from shown_docs x), bridge) k)
    ), docs as (
        select s.document_id, d.path, d.title, d.written_at, d.band::text as band, s.surface, s.mentions
        from shown s join exo_private.documents d on d.id = s.document_id
        order by d.written_at desc nulls last, s.document_id desc
        limit 100
    ), rels_judged as materialized (
        select j.* from exo_private.entity_relations_judged(
            p_entity, exo_private.released_keys(bridge),
            array(select c.subject from closed c order by c.key), array(select c.key from closed c order by c.key)) j
        where p_as_of is null or exo_private.written_by(j.document_id, null, p_as_of)
    ), rels_shown as (
        select rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type,
               count(distinct rj.document_id) as documents,
               (array_agg(distinct rj.document_id))[1:5] as document_ids,
               min(rj.predicate_raw) as predicate_raw
        from rels_judged rj
        where rj.other_subject is null and rj.evidence_withheld = '{}'
        group by rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type
    ), hints as (
        select h.subject, h.workspace, h.hint
        from ent
        cross join lateral exo_private.subject_hints(
            array[ent.workspace], bridge,
            -- left out of what the caller may see: the entity itself, or the other end of a
            -- relation open text gives
            array(select i.subject from itself i
                  union
                  select rj.other_subject from rels_judged rj
                  where rj.other_subject is not null and rj.evidence_withheld = '{}')) h
    )
    select case
        when exists (select 1 from itself) then
            -- The entity is itself a closed subject: that it exists, never what is known of it.
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'withheld', true,
                'hints', (select jsonb_agg(h.hint order by h.subject) from hints h))
        else
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'name', ent.name, 'sense', nullif(ent.sense, ''), 'is_owner', ent.is_owner,
                'mention_count', (select coalesce(sum(s.mentions), 0) from shown s),
                'document_count', (select count(*) from shown),
                'mentions', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'document_id', d.document_id, 'path', d.path, 'title', d.title,
                        'written_at', d.written_at, 'band', d.band, 'surface', d.surface,
                        'mentions', d.mentions)
                        order by d.written_at desc nulls last, d.document_id desc)
                    from docs d), '[]'),
                'relations', (
                    -- out and in, each the 100 with the most documents
                    select jsonb_object_agg(d.direction, coalesce((
                        select jsonb_agg(jsonb_build_object(
                            'predicate', x.predicate, 'predicate_raw', x.predicate_raw,
                            'entity_id', x.other_id, 'name', x.other_name, 'type', x.other_type,
                            'documents', x.documents, 'document_ids', x.document_ids)
                            order by x.documents desc, x.predicate, x.other_name)
                        from (select * from rels_shown rs where rs.direction = d.direction
                              order by rs.documents desc, rs.predicate, rs.other_name limit 100) x), '[]'))
                    from (values ('out'), ('in')) d (direction)),
                'hints', coalesce((select jsonb_agg(h.hint order by h.subject) from hints h), '[]'))
        end
    from ent
$$;
comment on function exo_private.entity_dossier(bigint, text[], timestamptz) is
    'The dossier of one entity as exo.dossier gives it (null when the entity does not exist).';

-- exo_private.find_entities: the body of exo.search_entities (plpgsql may not name an
-- argument like a result column).
create or replace function exo_private.find_entities(
    p_name text, p_type text, p_workspaces text[], p_max int, p_bridge text[], p_as_of timestamptz
)
returns table (
    entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint, withheld jsonb
)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    wanted_type exo_private.entity_type := exo_private.parse_entity_type(p_type);
    pattern text;
    n int := least(greatest(coalesce(p_max, 50), 1), 500);
begin
    perform exo_private.check_workspaces(p_workspaces);
    if pg_catalog.btrim(p_name) <> '' then
        pattern := exo_private.like_pattern(pg_catalog.btrim(p_name));
    end if;
    return query
    with candidates as materialized (
        select e.id, e.workspace, e.type, e.name
        from exo_private.entities e
        where (pattern is null or e.name ilike pattern)
          and (wanted_type is null or e.type = wanted_type)
          and (p_workspaces is null or e.workspace = any (p_workspaces))
    ), evidence as materialized (
        select v.* from exo_private.entity_evidence(array(select c.id from candidates c), p_bridge, p_as_of) v
    ), listed as (
        select c.id, c.workspace, c.type::text as type, c.name, v.mentions, v.documents,
               row_number() over (order by v.mentions desc, c.name, c.id) as ord
        from candidates c
        join evidence v on v.entity_id = c.id
        where v.withheld = '{}' and (p_as_of is null or v.mentions > 0)
        order by ord
        limit n
    ), held as (
        -- Whatever the name asked (a row that came when the name met an entity known only from
        -- withheld material would tell, one guess a call, which names that material holds)
        select h.subject, h.workspace, h.hint
        from exo_private.subject_hints(p_workspaces, p_bridge) h
    )
    select x.id, x.workspace, x.type, x.name, x.mentions, x.documents, x.hint
    from (
        select 0 as part, l.ord, l.id, l.workspace, l.type, l.name, l.mentions, l.documents, null::jsonb as hint
        from listed l
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, null, h.hint
        from held h
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo_private.find_entities(text, text, text[], int, text[], timestamptz) is
    'exo.search_entities, which see.';

-- exo.search_entities: entities whose name contains a string, most mentioned first.
create or replace function exo.search_entities(
    name text default null,
    entity_type text default null,
    workspaces text[] default null,
    max_results int default 50,
    bridge text[] default '{}',
    as_of timestamptz default null
)
returns table (
    entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint, withheld jsonb
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.find_entities($1, $2, $3, $4, $5, $6)
$$;
comment on function exo.search_entities(text, text, text[], int, text[], timestamptz) is
    'Graph entities (people, orgs, places, topics, dates) whose name contains name (case-insensitive '
    'substring; % and _ are plain characters; null or blank: every entity), of entity_type (Person, '
    'Org, Place, Topic or Date; null: any), in workspaces (null: all), most mentioned first: '
    'entity_id, workspace, type, name, mentions, documents (mentions and distinct documents that may '
    'be shown), withheld (null). The same name in two workspaces is two entities. max_results is '
    'clamped to 1..500. Care: an entity that is a deferred subject (exo.deferred_subjects, by name or '
    'alias), and one seen only in chunks charged for a deferred subject, is left out unless bridge '
    'names that subject, and mentions in charged chunks are not counted; whatever the name, one last '
    'row per subject left closed and workspace searched where it is charged has only withheld: '
    '{subject, workspace, chunks, how} (chunks: those charged for it there). as_of: only '
    'entities mentioned by then, their mentions and documents counted by then (the chunk''s day, '
    'else the document''s; undated ones left out); null: all. Next: exo.dossier(entity_id::text).';

-- exo.dossier: everything the graph knows about an entity.
create or replace function exo.dossier(
    entity text, workspace text default null, bridge text[] default '{}', as_of timestamptz default null
)
returns jsonb
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    ids bigint[] := exo_private.resolve_entity(entity, workspace, bridge);
    dossiers jsonb;
begin
    select jsonb_agg(exo_private.entity_dossier(i.id, bridge, as_of) order by i.ord) into dossiers
    from unnest(ids) with ordinality i(id, ord);
    if jsonb_array_length(dossiers) = 1 then
        return dossiers -> 0;
    end if;
    return dossiers;
end
$$;
comment on function exo.dossier(text, text, text[], timestamptz) is
    'What the graph knows about one entity, as jsonb. entity is an entity id (digits) or a name '
    '(matched by canonical key: case, spacing and edge punctuation ignored); workspace (null: all) '
    'narrows a name. One match gives one object; a name found in several workspaces (or as several '
    'types, or as two things of one name) gives an array of objects, one per entity, never merged. '
    'An object: entity_id, workspace, type, name, sense (null, or which of two things sharing the '
    'name it is: an address, or a type such as place), is_owner, mention_count, document_count, mentions (one per document, '
    'newest first, at most 100: document_id, path, title, written_at, band, surface, mentions), '
    'relations {out, in} (at most 100 each: predicate, predicate_raw, entity_id, name, type, '
    'documents, document_ids), hints. Care: mentions in chunks charged for a deferred subject, and '
    'relations to an entity that is one (or whose evidence lies only in withheld chunks), are left '
    'out unless bridge names the subject (by name or alias). hints, the same whatever the entity: '
    'one per subject left closed that is charged in the entity''s workspace, or that the entity is '
    'or open text relates it to: {subject, workspace, chunks (charged for it there), how}; never a '
    'count of what withheld text says of the entity. An entity that is itself a deferred '
    'subject gives only {entity_id, workspace, type, withheld: true, hints}; one seen only in '
    'withheld chunks is, by id as by name, no entity unless bridge opens it. as_of: only the '
    'mentions and relations written by then (the chunk''s day, else the document''s; undated ones '
    'left out); null: all. Raises invalid_parameter_value for a blank entity, an unknown workspace or '
    'a name that matches no entity the caller may see.';

-- exo.cross_document_entities: entities that connect documents, and how many do.
create or replace function exo.cross_document_entities(
    min_documents int default 2,
    workspaces text[] default null,
    max_results int default 100,
    bridge text[] default '{}',
    as_of timestamptz default null
)
returns jsonb
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    n int := least(greatest(coalesce(max_results, 100), 1), 1000);
    result jsonb;
begin
    if min_documents is null or min_documents < 1 then
        perform exo_private.invalid_argument(
            'min_documents must be at least 1, got ' || coalesce(min_documents::text, 'null'));
    end if;
    perform exo_private.check_workspaces(workspaces);
    with candidates as materialized (
        select e.id, e.workspace, e.type, e.name
        from exo_private.entities e
        where (workspaces is null or e.workspace = any (workspaces))
    ), evidence as materialized (
        select v.* from exo_private.entity_evidence(array(select c.id from candidates c), bridge, as_of) v
    ), counted as materialized (
        -- the entities mentioned where the caller may see them
        select c.id, c.workspace, c.type, c.name, v.documents
        from candidates c
        join evidence v on v.entity_id = c.id
        where v.withheld = '{}' and v.documents > 0
    ), rates as (
        select k.workspace, count(*) as entities, count(*) filter (where k.documents >= 2) as bridging
        from counted k group by k.workspace
    ), held as (
        -- as the graph API's other hints (a count of the entities withheld would tell how many
        -- names withheld text holds)
        select h.subject, h.workspace, h.hint
        from exo_private.subject_hints(workspaces, bridge) h
    )
    select jsonb_build_object(
        'min_documents', min_documents,
        'entities', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'entity_id', x.id, 'workspace', x.workspace, 'type', x.type::text,
                       'name', x.name, 'documents', x.documents)
                       order by x.documents desc, x.name, x.id)
            from (select k.* from counted k where k.documents >= min_documents
                  order by k.documents desc, k.name, k.id limit n) x), '[]'),
        'bridging_rate', jsonb_build_object(
            'overall', (select round(sum(r.bridging)::numeric / nullif(sum(r.entities), 0), 4) from rates r),
            'by_workspace', coalesce((
                select jsonb_object_agg(r.workspace, round(r.bridging::numeric / r.entities, 4) order by r.workspace)
                from rates r), '{}')),
        'counts', coalesce((
            select jsonb_object_agg(r.workspace, jsonb_build_object('entities', r.entities, 'bridging', r.bridging)
                                    order by r.workspace)
            from rates r), '{}'),
        'hints', coalesce((select jsonb_agg(h.hint order by h.subject, h.workspace) from held h), '[]'))
    into result;
    return result;
end
$$;
comment on function exo.cross_document_entities(int, text[], int, text[], timestamptz) is
    'Entities that connect documents, as jsonb: entities (at most max_results, clamped to 1..1000, '
    'most documents first: entity_id, workspace, type, name, documents) mentioned in at least '
    'min_documents (>= 1) distinct documents; bridging_rate {overall, by_workspace}: the share of '
    'mentioned entities that appear in 2 or more documents (how well the graph links the corpus), '
    'with the counts behind it; hints. workspaces null: all. Care: entities that are deferred '
    'subjects, or seen only in chunks charged for one, and mentions in charged chunks are not '
    'counted unless bridge names the subject (by name or alias); hints as exo.dossier''s, one per '
    'closed subject charged in a workspace asked about: {subject, workspace, chunks, how}. as_of: only the '
    'mentions written by then (the chunk''s day, else the document''s; undated ones left out); null: all.';

-- exo_private.related_to: the body of exo.related.
create or replace function exo_private.related_to(
    p_entity text, p_workspace text, p_depth int, p_per_node int, p_bridge text[], p_as_of timestamptz
)
returns table (entity_id bigint, workspace text, type text, name text, depth int, withheld jsonb)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ids bigint[];
    released text[];
begin
    if p_depth is null or p_depth not between 1 and 3 then
        perform exo_private.invalid_argument(
            'depth must be between 1 and 3, got ' || coalesce(p_depth::text, 'null'));
    end if;
    if p_per_node is null or p_per_node not between 1 and 1000 then
        perform exo_private.invalid_argument(
            'per_node must be between 1 and 1000, got ' || coalesce(p_per_node::text, 'null'));
    end if;
    ids := exo_private.resolve_entity(p_entity, p_workspace, p_bridge);
    released := exo_private.released_keys(p_bridge);
    -- The walk goes only through what the caller may see: from the open start entities, along
    -- relations shown in their window (both ends shown there), to entities that are no closed
    -- deferred subject. A hidden node is never reached, so neither are its neighbours. Each
    -- node expands at most p_per_node neighbours, lowest ids first (as related_entities).
    return query
    with recursive closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(p_bridge) k
    ), closed_windows as materialized (
        select k.window_id from exo_private.closed_windows(p_bridge) k
    ), starts as materialized (
        select v.entity_id, v.withheld from exo_private.entity_evidence(ids, p_bridge, null) v
    ), walk (node, hops) as (
        select s.entity_id, 0 from starts s where s.withheld = '{}'
        union
        select nb.id, w.hops + 1
        from walk w
        cross join lateral (
            select x.id
            from (
                select r.object_id as id, r.window_id, r.document_id
                from exo_private.relations r where r.subject_id = w.node
                union all
                select r.subject_id, r.window_id, r.document_id
                from exo_private.relations r where r.object_id = w.node
            ) x
            join exo_private.entities e on e.id = x.id
            where x.id <> w.node
              and (p_as_of is null or exo_private.written_by(x.document_id, null, p_as_of))
              and not exists (select 1 from closed c where c.key = e.canonical_key)
              and (x.window_id not in (select cw.window_id from closed_windows cw)
                   or (exo_private.mention_state(w.node, x.window_id, released) = '{}'
                       and exo_private.mention_state(x.id, x.window_id, released) = '{}'))
            group by x.id
            order by x.id
            limit p_per_node
        ) nb
        where w.hops < p_depth
    ), reached as materialized (
        select w.node, min(w.hops)::int as hops
        from walk w
        where w.node <> all (ids)
        group by w.node
    ), named as (
        -- the closed subjects left out of what the caller may see: a start that is one, and a
        -- neighbour of an expanded node that is one where open text relates them
        select s.subject from starts st cross join lateral unnest(st.withheld) s (subject)
        union
        select c.subject
        from (select distinct w.node from walk w where w.hops < p_depth) f
        cross join lateral (
            select r.object_id as id, r.window_id, r.document_id
            from exo_private.relations r where r.subject_id = f.node
            union all
            select r.subject_id, r.window_id, r.document_id
            from exo_private.relations r where r.object_id = f.node
        ) x
        join exo_private.entities e on e.id = x.id
        join closed c on c.key = e.canonical_key
        where (p_as_of is null or exo_private.written_by(x.document_id, null, p_as_of))
          and (x.window_id not in (select cw.window_id from closed_windows cw)
               or (exo_private.mention_state(f.node, x.window_id, released) = '{}'
                   and exo_private.mention_state(x.id, x.window_id, released) = '{}'))
    ), held as (
        select h.subject, h.workspace, h.hint
        from exo_private.subject_hints(
                 array(select distinct e.workspace from exo_private.entities e where e.id = any (ids)),
                 p_bridge, array(select n.subject from named n)) h
    )
    select x.id, x.workspace, x.type, x.name, x.hops, x.hint
    from (
        select 0 as part, row_number() over (order by r.hops, e.name, e.id) as ord,
               e.id, e.workspace, e.type::text as type, e.name, r.hops, null::jsonb as hint
        from reached r
        join exo_private.entities e on e.id = r.node
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, h.hint
        from held h
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo_private.related_to(text, text, int, int, text[], timestamptz) is
    'exo.related, which see.';

-- exo.related: the neighbourhood of an entity in its workspace's graph.
create or replace function exo.related(
    entity text,
    workspace text default null,
    depth int default 1,
    per_node int default 50,
    bridge text[] default '{}',
    as_of timestamptz default null
)
returns table (entity_id bigint, workspace text, type text, name text, depth int, withheld jsonb)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.related_to($1, $2, $3, $4, $5, $6)
$$;
comment on function exo.related(text, text, int, int, text[], timestamptz) is
    'Entities related to one entity (either direction) in its workspace''s graph: entity_id, '
    'workspace, type, name, depth (hops, each entity once at its smallest depth), withheld (null), '
    'nearest first. entity: an id or a name (as in exo.dossier; a name in several workspaces walks '
    'each). depth: 1..3 (1: direct neighbours). per_node (1..1000): each node expands at most that '
    'many neighbours, lowest ids first, so a hub (the owner, say) costs per_node rows per level. '
    'Care: the walk goes only through what the caller may see: never to or through an entity that '
    'is a deferred subject or is seen only in chunks charged for one, nor along a relation whose '
    'evidence is withheld, unless bridge names the subject; from a deferred subject itself nothing '
    'is listed, and one seen only in withheld chunks is no entity (as in exo.dossier). Then one last '
    'row per subject and workspace has only withheld, as exo.dossier''s hints: {subject, workspace, '
    'chunks, how}. as_of: only relations written by then (their document''s day; '
    'undated ones left out), so only what was known then is reached; null: all. Raises '
    'invalid_parameter_value for bad arguments.';

-- exo_private.entity_timeline: the body of exo.timeline.
create or replace function exo_private.entity_timeline(
    p_entity text, p_workspace text, p_bridge text[], p_max int, p_as_of timestamptz
)
returns table (
    written_at date, document_id bigint, path text, title text, band text, workspace text,
    surface text, excerpt text, withheld jsonb
)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ids bigint[] := exo_private.resolve_entity(p_entity, p_workspace, p_bridge);
    n int := least(greatest(coalesce(p_max, 500), 1), 5000);
begin
    return query
    with evidence as materialized (
        select v.entity_id, v.withheld from exo_private.entity_evidence(ids, p_bridge, null) v
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(
            array(select v.entity_id from evidence v where v.withheld = '{}'), p_bridge) m
        where p_as_of is null or exo_private.written_by(m.document_id, m.chunk_id, p_as_of)
    ), closed_docs as materialized (
        select k.document_id, k.withheld from exo_private.closed_documents(
            array(select distinct m.document_id from ms m where m.withheld = '{}'), p_bridge) k
    ), firsts as (
        -- chunks of a document are numbered in reading order
        select m.entity_id, m.document_id, m.workspace, m.chunk_id, m.window_id, m.surface,
               d.written_at, d.path, d.title, d.band::text as band,
               row_number() over (order by d.written_at nulls last, m.document_id, m.chunk_id nulls last,
                                           m.workspace) as ord
        from ms m
        join exo_private.documents d on d.id = m.document_id
        where m.withheld = '{}' and m.document_id not in (select k.document_id from closed_docs k)
        order by ord
        limit n
    ), held as (
        select h.subject, h.workspace, h.hint
        from exo_private.subject_hints(
                 array(select distinct e.workspace from exo_private.entities e where e.id = any (ids)), p_bridge,
                 -- an entity that is a closed subject: all of it is left out
                 array(select s.subject from evidence v cross join lateral unnest(v.withheld) s (subject))) h
    )
    select y.written_at, y.document_id, y.path, y.title, y.band, y.workspace, y.surface, y.excerpt, y.hint
    from (
        -- excerpts only for the rows returned
        select 0 as part, f.ord, f.written_at, f.document_id, f.path, f.title, f.band, f.workspace, f.surface,
               case when x.body is not null
                         and pg_catalog.strpos(pg_catalog.lower(x.body), pg_catalog.lower(f.surface)) = 0
                    -- named by the document's structure (a mail header, a chat, frontmatter), not
                    -- in its text: say how, by the structural edges' predicates (never the other
                    -- end's name: it may be a deferred subject)
                    then coalesce((select '[structure: ' || pg_catalog.string_agg(r.how, ', ' order by r.how) || '] '
                                   from (select distinct r.predicate
                                                || case when r.subject_id = f.entity_id then '' else ' (object)' end
                                                as how
                                         from exo_private.relations r
                                         where r.document_id = f.document_id and r.origin = 'structure'
                                           and f.entity_id in (r.subject_id, r.object_id)) r), '')
                    else ''
               end || exo_private.excerpt(x.body, f.surface, 200) as excerpt,
               null::jsonb as hint
        from firsts f
        left join exo_private.chunks c on c.workspace = f.workspace and c.id = f.chunk_id
        left join exo_private.extraction_windows w on f.chunk_id is null and w.id = f.window_id
        cross join lateral (select coalesce(c.body, w.body) as body) x
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, null, null,
               null, h.hint
        from held h
    ) y
    order by y.part, y.ord;
end
$$;
comment on function exo_private.entity_timeline(text, text, text[], int, timestamptz) is
    'exo.timeline, which see.';

-- exo.timeline: one entity's mentions in the order they were written.
create or replace function exo.timeline(
    entity text,
    workspace text default null,
    bridge text[] default '{}',
    max_results int default 500,
    as_of timestamptz default null
)
returns table (
    written_at date, document_id bigint, path text, title text, band text, workspace text,
    surface text, excerpt text, withheld jsonb
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.entity_timeline($1, $2, $3, $4, $5)
$$;
comment on function exo.timeline(text, text, text[], int, timestamptz) is
    'One entity''s mentions in the order they were written (oldest first, undated last): '
    'written_at, document_id, path, title, band, workspace, surface (the name as written), excerpt '
    '(about 200 characters of the chunk around it; a name only the document''s structure gives, a '
    'mail header, a chat or frontmatter, is prefixed "[structure: WROTE_TO, COPIED (object)] ", '
    'the predicates of its structural edges in that document) and withheld (null). entity: an id '
    'or a name (as '
    'in exo.dossier; a name in several workspaces gives all of them, see the workspace column); '
    'workspace narrows it. The most recent statement is usually the authoritative one. At most '
    'max_results rows (clamped to 1..5000), the oldest. Care: mentions in chunks or documents '
    'charged for a deferred subject, and every mention of an entity that is one, are left out '
    'unless bridge names the subject by name or alias (an entity seen only in such chunks is no '
    'entity, as in exo.dossier); then one last row '
    'per subject and workspace has only withheld, as exo.dossier''s hints: {subject, workspace, '
    'chunks, how}. as_of: only the mentions written by then (the chunk''s day, else the '
    'document''s; undated ones left out); null: all.';
