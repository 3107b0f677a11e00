-- The read-only agent API beyond search: the system's status, entities and their
-- dossiers, timelines and neighbourhoods, documents, chat conversations and people, and
-- a guarded read-only Cypher entry point. Everything an agent calls is in schema exo,
-- runs as security definer and only reads; exo_private helpers first.
--
-- Care: a mention in a chunk charged for a deferred subject, and an entity that is a
-- deferred subject (its name or an alias, compared by canonical key), stay out of every
-- answer unless the caller bridges that subject (bridge => array['name or alias']). The
-- dossier says what it left out (subject, workspace, counts, how to ask), never the text.

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
                   quote_literal(entity_type)));
    end if;
    return parsed;
end
$$;
comment on function exo_private.parse_entity_type(text) is
    'The entity type named (case-insensitive), null for null or blank; raises invalid_parameter_value '
    'naming entity_type and the types otherwise.';

-- exo_private.released_keys: the canonical keys a bridge opens.
create or replace function exo_private.released_keys(bridge text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Naming a subject or any of its aliases opens all of its names: a chunk may be charged
    -- under any of them (the same rule as plpy/search.py withheld_subjects).
    with wanted as (
        select exo_private.canonical_key(b) as key
        from unnest(coalesce(bridge, '{}')) b
    ), subjects as (
        select array(select exo_private.canonical_key(n) from unnest(s.subject || s.aliases) n) as keys
        from exo_private.deferred_subjects s
    )
    select coalesce(array_agg(distinct k.key) filter (where k.key is not null), '{}')
    from (
        select w.key from wanted w
        union all
        select unnest(s.keys) from subjects s
        where s.keys && array(select w.key from wanted w where w.key is not null)
    ) k
$$;
comment on function exo_private.released_keys(text[]) is
    'Canonical keys a bridge opens: each name in it, and every name and alias of a deferred subject '
    'it names by name or alias.';

-- exo_private.closed_subject_keys: the names of deferred subjects a bridge leaves closed.
create or replace function exo_private.closed_subject_keys(bridge text[])
returns table (subject text, key text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    )
    select distinct s.subject, k.key
    from exo_private.deferred_subjects s
    cross join released r
    cross join lateral unnest(s.subject || s.aliases) n
    cross join lateral (select exo_private.canonical_key(n) as key) k
    where k.key is not null
      and not (exo_private.canonical_key(s.subject) = any (r.keys))
$$;
comment on function exo_private.closed_subject_keys(text[]) is
    'Canonical keys of the names and aliases of every deferred subject the bridge does not open, '
    'with the subject: an entity with one of these keys is that subject.';

-- exo_private.unreleased: the charged subjects of a chunk a bridge leaves closed.
create or replace function exo_private.unreleased(charged text[], released text[])
returns text[]
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Every charged subject counts, listed or only declared by frontmatter; one whose key
    -- cannot be computed stays closed (over-withholding is the safe direction).
    select case when charged is null or charged = '{}' then '{}'::text[]
                else coalesce((select array_agg(distinct s order by s) from unnest(charged) s
                               where (exo_private.canonical_key(s) = any (released)) is not true),
                              '{}') end
$$;
comment on function exo_private.unreleased(text[], text[]) is
    'The subjects of charged (a chunk''s charged_subjects) whose key is not among released: '
    'empty when the chunk may be shown.';

-- exo_private.window_withheld: why a mention without a chunk may not be shown.
create or replace function exo_private.window_withheld(p_window bigint, released text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The name was in no single chunk of the window: every chunk the window overlaps counts.
    select coalesce(array_agg(distinct s order by s), '{}')
    from exo_private.extraction_windows w
    join exo_private.chunks c
      on c.workspace = w.workspace and c.document_id = w.document_id
     and c.char_start < w.char_end and c.char_end > w.char_start
     and c.charged_subjects <> '{}'
    cross join lateral unnest(exo_private.unreleased(c.charged_subjects, released)) s
    where w.id = p_window
$$;
comment on function exo_private.window_withheld(bigint, text[]) is
    'The closed charged subjects of the chunks an extraction window overlaps: what keeps a mention '
    'without a chunk out of an answer; empty when it may be shown.';

-- exo_private.closed_chunks: the charged chunks a bridge leaves closed.
create or replace function exo_private.closed_chunks(bridge text[])
returns table (chunk_id bigint, withheld text[])
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Read through the partial index chunks_charged_idx: only charged chunks are visited.
    -- Each distinct set of charged subjects is judged once (they are few).
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), kinds as materialized (
        select distinct c.charged_subjects as subjects
        from exo_private.chunks c
        where c.charged_subjects <> '{}'
    ), judged as materialized (
        select k.subjects, exo_private.unreleased(k.subjects, r.keys) as withheld
        from kinds k cross join released r
    )
    select c.id, j.withheld
    from judged j
    join exo_private.chunks c on c.charged_subjects = j.subjects
    where c.charged_subjects <> '{}' and j.withheld <> '{}'
$$;
comment on function exo_private.closed_chunks(text[]) is
    'Every chunk charged for a subject the bridge leaves closed, with those subjects (chunk ids are '
    'unique across workspaces).';

-- exo_private.entity_mentions: the mentions of entities, each with what withholds it.
create or replace function exo_private.entity_mentions(ids bigint[], bridge text[])
returns table (
    entity_id bigint, workspace text, document_id bigint, chunk_id bigint, window_id bigint,
    surface text, withheld text[]
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The closed chunks are few and found through an index: a hash join with them decides
    -- nearly every mention without touching the chunks themselves.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.chunk_id, k.withheld from exo_private.closed_chunks(bridge) k
    )
    select m.entity_id, e.workspace, m.document_id, m.chunk_id, m.window_id, m.surface,
           case when m.chunk_id is null
                then exo_private.window_withheld(m.window_id, r.keys)
                else coalesce(k.withheld, '{}') end
    from released r
    cross join exo_private.entities e
    join exo_private.mentions m on m.entity_id = e.id
    left join closed k on k.chunk_id = m.chunk_id
    where e.id = any (ids)
$$;
comment on function exo_private.entity_mentions(bigint[], text[]) is
    'Every mention of the given entities with its workspace, document, chunk, window and surface, and '
    'withheld: the charged subjects the bridge leaves closed (empty: it may be shown).';

-- exo_private.resolve_entity: the entities an argument names (an id, or a name by key).
create or replace function exo_private.resolve_entity(entity text, workspace text)
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
            'entity must be an entity id or a name, got ' || coalesce(quote_literal(entity), 'null'));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(e.id) into ids
        from exo_private.entities e
        where e.id = wanted::bigint
          and (resolve_entity.workspace is null or e.workspace = resolve_entity.workspace);
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
    if ids is null then
        perform exo_private.invalid_argument(
            format('entity %s names no entity%s', quote_literal(entity),
                   coalesce(' in workspace ' || quote_literal(workspace), '')),
            format('exo.search_entities(name => %s) lists the entities whose names contain it',
                   quote_literal(wanted)));
    end if;
    return ids;
end
$$;
comment on function exo_private.resolve_entity(text, text) is
    'Entity ids an API argument names: digits are an entity id (when one exists; otherwise read as a '
    'name), anything else a name matched by canonical key, all workspaces unless one is given, '
    'ordered by workspace and type. Raises invalid_parameter_value when nothing matches.';

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

-- exo_private.entity_dossier: one entity's dossier.
create or replace function exo_private.entity_dossier(p_entity bigint, bridge text[])
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with ent as (
        select e.id, e.workspace, e.type, e.name, e.canonical_key, e.is_owner
        from exo_private.entities e
        where e.id = p_entity
    ), released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), closed_chunks as materialized (
        select k.chunk_id from exo_private.closed_chunks(bridge) k
    ), itself as (
        -- the entity is a deferred subject the bridge leaves closed
        select c.subject from closed c join ent on ent.canonical_key = c.key
        order by c.subject limit 1
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(array[p_entity], bridge) m
    ), shown as (
        select m.document_id, count(*) as mentions, min(m.surface) as surface
        from ms m where m.withheld = '{}'
        group by m.document_id
    ), docs as (
        select s.document_id, d.path, d.title, d.written_at, d.band::text as band, s.surface, s.mentions
        from shown s join exo_private.documents d on d.id = s.document_id
        order by d.written_at desc nulls last, s.document_id desc
        limit 100
    ), rels as (
        select r.id, r.window_id, r.document_id, r.predicate, r.predicate_raw,
               case when r.subject_id = p_entity then 'out' else 'in' end as direction,
               case when r.subject_id = p_entity then r.object_id else r.subject_id end as other_id
        from exo_private.relations r
        where r.subject_id = p_entity or r.object_id = p_entity
    ), rels_judged as (
        select rl.*, o.name as other_name, o.type::text as other_type,
               (select c.subject from closed c where c.key = o.canonical_key order by c.subject limit 1)
                   as other_subject,
               -- both ends must be shown in the relation's window
               exists (select 1 from ms m where m.window_id = rl.window_id and m.withheld = '{}')
               and exists (
                   select 1 from exo_private.mentions m2
                   cross join released r
                   where m2.entity_id = rl.other_id and m2.window_id = rl.window_id
                     and case when m2.chunk_id is null
                              then exo_private.window_withheld(m2.window_id, r.keys) = '{}'
                              else not exists (select 1 from closed_chunks k where k.chunk_id = m2.chunk_id) end
               ) as evidence_shown
        from rels rl
        join exo_private.entities o on o.id = rl.other_id
    ), rels_shown as (
        select rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type,
               count(distinct rj.document_id) as documents,
               (array_agg(distinct rj.document_id))[1:5] as document_ids,
               min(rj.predicate_raw) as predicate_raw
        from rels_judged rj
        where rj.other_subject is null and rj.evidence_shown
        group by rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type
    ), withheld_mentions as (
        select s as subject, count(*) as mentions, count(distinct m.chunk_id) as chunks
        from ms m cross join lateral unnest(m.withheld) s
        group by s
    ), withheld_relations as (
        select rj.other_subject as subject, count(*) as relations
        from rels_judged rj where rj.other_subject is not null
        group by rj.other_subject
    ), hints as (
        select coalesce(wm.subject, wr.subject) as subject,
               coalesce(wm.mentions, 0) as mentions, coalesce(wm.chunks, 0) as chunks,
               coalesce(wr.relations, 0) as relations
        from withheld_mentions wm full join withheld_relations wr on wr.subject = wm.subject
    )
    select case
        when exists (select 1 from itself) then
            -- The entity is itself a closed subject: that it exists, never what is known of it.
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'withheld', true,
                'hints', jsonb_build_array(jsonb_build_object(
                    'subject', (select i.subject from itself i), 'workspace', ent.workspace,
                    'mentions', (select count(*) from ms),
                    'relations', (select count(*) from rels),
                    'how', exo_private.hint_how((select i.subject from itself i)))))
        else
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'name', ent.name, 'is_owner', ent.is_owner,
                'mention_count', (select coalesce(sum(s.mentions), 0) from shown s),
                'document_count', (select count(*) from shown),
                'mentions', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'document_id', d.document_id, 'path', d.path, 'title', d.title,
                        'written_at', d.written_at, 'band', d.band, 'surface', d.surface,
                        'mentions', d.mentions)
                        order by d.written_at desc nulls last, d.document_id desc)
                    from docs d), '[]'),
                'relations', jsonb_build_object(
                    'out', coalesce((
                        select jsonb_agg(jsonb_build_object(
                            'predicate', x.predicate, 'predicate_raw', x.predicate_raw,
                            'entity_id', x.other_id, 'name', x.other_name, 'type', x.other_type,
                            'documents', x.documents, 'document_ids', x.document_ids)
                            order by x.documents desc, x.predicate, x.other_name)
                        from (select * from rels_shown rs where rs.direction = 'out'
                              order by rs.documents desc, rs.predicate, rs.other_name limit 100) x), '[]'),
                    'in', coalesce((
                        select jsonb_agg(jsonb_build_object(
                            'predicate', x.predicate, 'predicate_raw', x.predicate_raw,
                            'entity_id', x.other_id, 'name', x.other_name, 'type', x.other_type,
                            'documents', x.documents, 'document_ids', x.document_ids)
                            order by x.documents desc, x.predicate, x.other_name)
                        from (select * from rels_shown rs where rs.direction = 'in'
                              order by rs.documents desc, rs.predicate, rs.other_name limit 100) x), '[]')),
                'hints', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'subject', h.subject, 'workspace', ent.workspace, 'mentions', h.mentions,
                        'chunks', h.chunks, 'relations', h.relations, 'how', exo_private.hint_how(h.subject))
                        order by h.subject)
                    from hints h), '[]'))
        end
    from ent
$$;
comment on function exo_private.entity_dossier(bigint, text[]) is
    'The dossier of one entity as exo.dossier gives it (null when the entity does not exist).';

-- exo.status: what the system holds and whether it is working.
create or replace function exo.status()
returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select jsonb_build_object(
        'as_of', pg_catalog.now(),
        'documents', jsonb_build_object(
            'total', (select count(*) from exo_private.documents),
            'by_stage', (select coalesce(jsonb_object_agg(s.stage, s.n order by s.stage), '{}')
                         from (select d.stage::text as stage, count(*) as n
                               from exo_private.documents d group by d.stage) s)),
        'quarantine', (select count(*) from exo_private.documents d where d.stage = 'quarantined'),
        'chunks', jsonb_build_object(
            'total', (select count(*) from exo_private.chunks),
            'charged', (select count(*) from exo_private.chunks c where c.charged_subjects <> '{}'),
            'by_workspace', (select coalesce(jsonb_object_agg(s.workspace, s.n order by s.workspace), '{}')
                             from (select c.workspace, count(*) as n
                                   from exo_private.chunks c group by c.workspace) s)),
        'embeddings', (
            select coalesce(jsonb_agg(jsonb_build_object(
                       'model', m.name, 'dimensions', m.dimensions,
                       'active', m.id is not distinct from exo_private.active_embedding_model(),
                       'vectors', (select count(*) from exo_private.chunk_embeddings ce where ce.model_id = m.id))
                       order by m.id), '[]')
            from exo_private.embedding_models m),
        'queues', jsonb_build_object(
            'embed', (select jsonb_build_object(
                          'depth', count(*),
                          'in_flight', count(*) filter (where q.vt > pg_catalog.now()),
                          'oldest_age_s', floor(extract(epoch from pg_catalog.now() - min(q.enqueued_at)))::bigint)
                      from pgmq.q_embed q),
            'extract', (select jsonb_build_object(
                          'depth', count(*),
                          'in_flight', count(*) filter (where q.vt > pg_catalog.now()),
                          'oldest_age_s', floor(extract(epoch from pg_catalog.now() - min(q.enqueued_at)))::bigint)
                        from pgmq.q_extract q),
            'dead_letter', (select jsonb_build_object(
                          'depth', count(*),
                          'in_flight', count(*) filter (where q.vt > pg_catalog.now()),
                          'oldest_age_s', floor(extract(epoch from pg_catalog.now() - min(q.enqueued_at)))::bigint)
                            from pgmq.q_dead_letter q)),
        'graph', (
            select coalesce(jsonb_object_agg(w.name, jsonb_build_object(
                       'entities', coalesce(e.n, 0), 'mentions', coalesce(m.n, 0),
                       'relations', coalesce(r.n, 0)) order by w.name), '{}')
            from exo_private.workspaces w
            left join (select x.workspace, count(*) as n from exo_private.entities x
                       group by x.workspace) e on e.workspace = w.name
            left join (select x.workspace, count(*) as n from exo_private.mentions y
                       join exo_private.entities x on x.id = y.entity_id
                       group by x.workspace) m on m.workspace = w.name
            left join (select x.workspace, count(*) as n from exo_private.relations x
                       group by x.workspace) r on r.workspace = w.name),
        'worker', (
            select jsonb_build_object(
                'last_heartbeat', max(k.heartbeat_at),
                'alive', coalesce(bool_or(k.stopped_at is null
                                          and k.heartbeat_at > pg_catalog.now() - interval '2 minutes'), false),
                'running', count(*) filter (where k.stopped_at is null
                                              and k.heartbeat_at > pg_catalog.now() - interval '2 minutes'))
            from exo_private.workers k),
        'job_failures', (select count(*) from exo_private.job_failures),
        'deferred_subjects', (select count(*) from exo_private.deferred_subjects)
    )
$$;
comment on function exo.status() is
    'The state of the whole system as jsonb: documents (total, by_stage), quarantine (documents '
    'waiting for a routing decision), chunks (total, charged, by_workspace), embeddings (per model: '
    'dimensions, vectors, active), queues (embed, extract, dead_letter: depth, in_flight, '
    'oldest_age_s = seconds since the oldest message was queued), graph (per workspace: entities, '
    'mentions, relations), worker (last_heartbeat; alive = some worker beat within 2 minutes; '
    'running), job_failures, deferred_subjects (a count), as_of. Counts only, never text.';

-- exo_private.find_entities: the body of exo.search_entities (plpgsql may not name an
-- argument like a result column).
create or replace function exo_private.find_entities(
    p_name text, p_type text, p_workspaces text[], p_max int, p_bridge text[]
)
returns table (entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint)
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
    with closed as materialized (
        select k.key from exo_private.closed_subject_keys(p_bridge) k
    ), candidates as materialized (
        select e.id, e.workspace, e.type, e.name
        from exo_private.entities e
        where (pattern is null or e.name ilike pattern)
          and (wanted_type is null or e.type = wanted_type)
          and (p_workspaces is null or e.workspace = any (p_workspaces))
          and not exists (select 1 from closed c where c.key = e.canonical_key)
    ), counted as (
        select m.entity_id,
               count(*) as total,
               count(*) filter (where m.withheld = '{}') as shown,
               count(distinct m.document_id) filter (where m.withheld = '{}') as documents
        from exo_private.entity_mentions(array(select c.id from candidates c), p_bridge) m
        group by m.entity_id
    )
    select c.id, c.workspace, c.type::text, c.name, coalesce(k.shown, 0), coalesce(k.documents, 0)
    from candidates c
    left join counted k on k.entity_id = c.id
    -- an entity seen only in withheld chunks is left out; one never mentioned (the owner) is not
    where k.total is null or k.shown > 0
    order by 5 desc, c.name, c.id
    limit n;
end
$$;
comment on function exo_private.find_entities(text, text, text[], int, text[]) is
    'exo.search_entities, which see.';

-- exo.search_entities: entities whose name contains a string, most mentioned first.
create or replace function exo.search_entities(
    name text default null,
    entity_type text default null,
    workspaces text[] default null,
    max_results int default 50,
    bridge text[] default '{}'
)
returns table (entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.find_entities($1, $2, $3, $4, $5)
$$;
comment on function exo.search_entities(text, text, text[], int, text[]) is
    'Graph entities (people, orgs, places, topics, dates) whose name contains name (case-insensitive '
    'substring; % and _ are plain characters; null or blank: every entity), of entity_type (Person, '
    'Org, Place, Topic or Date; null: any), in workspaces (null: all), most mentioned first: '
    'entity_id, workspace, type, name, mentions, documents (mentions and distinct documents that may '
    'be shown). The same name in two workspaces is two entities. Care: an entity that is a deferred '
    'subject (exo.deferred_subjects, by name or alias), and one seen only in chunks charged for a '
    'deferred subject, is left out unless bridge names that subject; mentions in charged chunks are '
    'not counted. max_results is clamped to 1..500. Next: exo.dossier(entity_id::text).';

-- exo.dossier: everything the graph knows about an entity.
create or replace function exo.dossier(entity text, workspace text default null, bridge text[] default '{}')
returns jsonb
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    ids bigint[] := exo_private.resolve_entity(entity, workspace);
    dossiers jsonb;
begin
    select jsonb_agg(exo_private.entity_dossier(i.id, bridge) order by i.ord) into dossiers
    from unnest(ids) with ordinality i(id, ord);
    if jsonb_array_length(dossiers) = 1 then
        return dossiers -> 0;
    end if;
    return dossiers;
end
$$;
comment on function exo.dossier(text, text, text[]) is
    'What the graph knows about one entity, as jsonb. entity is an entity id (digits) or a name '
    '(matched by canonical key: case, spacing and edge punctuation ignored); workspace (null: all) '
    'narrows a name. One match gives one object; a name found in several workspaces (or as several '
    'types) gives an array of objects, one per entity, never merged. An object: entity_id, '
    'workspace, type, name, is_owner, mention_count, document_count, mentions (one per document, '
    'newest first, at most 100: document_id, path, title, written_at, band, surface, mentions), '
    'relations {out, in} (at most 100 each: predicate, predicate_raw, entity_id, name, type, '
    'documents, document_ids), hints. Care: mentions in chunks charged for a deferred subject, and '
    'relations to an entity that is one (or whose evidence lies only in withheld chunks), are left '
    'out unless bridge names the subject (by name or alias); each hint says what was left out: '
    '{subject, workspace, mentions, chunks, relations, how}. An entity that is itself a deferred '
    'subject gives only {entity_id, workspace, type, withheld: true, hints}. Raises '
    'invalid_parameter_value for a blank entity, an unknown workspace or a name that matches nothing.';

-- exo.cross_document_entities: entities that connect documents, and how many do.
create or replace function exo.cross_document_entities(
    min_documents int default 2,
    workspaces text[] default null,
    max_results int default 100
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
    with closed as materialized (
        select k.key from exo_private.closed_subject_keys('{}') k
    ), candidates as materialized (
        select e.id, e.workspace, e.type, e.name
        from exo_private.entities e
        where (workspaces is null or e.workspace = any (workspaces))
          and not exists (select 1 from closed c where c.key = e.canonical_key)
    ), counted as materialized (
        select c.id, c.workspace, c.type, c.name,
               count(distinct m.document_id) as documents
        from candidates c
        join exo_private.entity_mentions(array(select c2.id from candidates c2), '{}') m on m.entity_id = c.id
        where m.withheld = '{}'
        group by c.id, c.workspace, c.type, c.name
    ), rates as (
        select k.workspace, count(*) as entities, count(*) filter (where k.documents >= 2) as bridging
        from counted k group by k.workspace
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
            from rates r), '{}'))
    into result;
    return result;
end
$$;
comment on function exo.cross_document_entities(int, text[], int) is
    'Entities that connect documents, as jsonb: entities (at most max_results, clamped to 1..1000, '
    'most documents first: entity_id, workspace, type, name, documents) mentioned in at least '
    'min_documents (>= 1) distinct documents; bridging_rate {overall, by_workspace}: the share of '
    'mentioned entities that appear in 2 or more documents (how well the graph links the corpus), '
    'with the counts behind it. workspaces null: all. Care: deferred subjects and mentions in '
    'charged chunks are never counted (no bridge here; exo.dossier takes one).';

-- exo_private.related_to: the body of exo.related.
create or replace function exo_private.related_to(
    p_entity text, p_workspace text, p_depth int, p_per_node int, p_bridge text[]
)
returns table (entity_id bigint, workspace text, type text, name text, depth int)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ids bigint[];
begin
    if p_depth is null or p_depth not between 1 and 3 then
        perform exo_private.invalid_argument(
            'depth must be between 1 and 3, got ' || coalesce(p_depth::text, 'null'));
    end if;
    if p_per_node is null or p_per_node not between 1 and 1000 then
        perform exo_private.invalid_argument(
            'per_node must be between 1 and 1000, got ' || coalesce(p_per_node::text, 'null'));
    end if;
    ids := exo_private.resolve_entity(p_entity, p_workspace);
    return query
    with closed as materialized (
        select k.key from exo_private.closed_subject_keys(p_bridge) k
    ), starts as (
        select e.id from exo_private.entities e
        where e.id = any (ids)
          and not exists (select 1 from closed c where c.key = e.canonical_key)
    ), walked as materialized (
        select x.entity_id, min(x.depth) as depth
        from starts s
        cross join lateral exo_private.related_entities(s.id, p_depth, p_per_node) x
        where x.entity_id <> all (ids)
        group by x.entity_id
    ), kept as materialized (
        select w.entity_id, w.depth, e.workspace, e.type, e.name
        from walked w
        join exo_private.entities e on e.id = w.entity_id
        where not exists (select 1 from closed c where c.key = e.canonical_key)
    ), counted as (
        select m.entity_id, count(*) as total, count(*) filter (where m.withheld = '{}') as shown
        from exo_private.entity_mentions(array(select k.entity_id from kept k), p_bridge) m
        group by m.entity_id
    )
    select k.entity_id, k.workspace, k.type::text, k.name, k.depth
    from kept k
    left join counted c on c.entity_id = k.entity_id
    where c.total is null or c.shown > 0
    order by k.depth, k.name, k.entity_id;
end
$$;
comment on function exo_private.related_to(text, text, int, int, text[]) is
    'exo.related, which see.';

-- exo.related: the neighbourhood of an entity in its workspace's graph.
create or replace function exo.related(
    entity text,
    workspace text default null,
    depth int default 1,
    per_node int default 50,
    bridge text[] default '{}'
)
returns table (entity_id bigint, workspace text, type text, name text, depth int)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.related_to($1, $2, $3, $4, $5)
$$;
comment on function exo.related(text, text, int, int, text[]) is
    'Entities related to one entity (either direction) in its workspace''s graph: entity_id, '
    'workspace, type, name and depth (hops, each entity once at its smallest depth), nearest first. '
    'entity: an id or a name (as in exo.dossier; a name in several workspaces walks each). depth: '
    '1..3 (1: direct neighbours). per_node (1..1000): each node expands at most that many '
    'neighbours, lowest ids first, so a hub (the owner, say) costs per_node rows per level. Care: '
    'entities that are deferred subjects, and entities seen only in chunks charged for one, are '
    'left out unless bridge names the subject; from a deferred subject itself nothing is listed '
    'unless bridged (exo.dossier says it is withheld). Raises invalid_parameter_value for bad '
    'arguments.';

-- exo_private.entity_timeline: the body of exo.timeline.
create or replace function exo_private.entity_timeline(
    p_entity text, p_workspace text, p_bridge text[], p_max int
)
returns table (
    written_at date, document_id bigint, path text, title text, band text, workspace text,
    surface text, excerpt text
)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ids bigint[] := exo_private.resolve_entity(p_entity, p_workspace);
    n int := least(greatest(coalesce(p_max, 500), 1), 5000);
begin
    return query
    with closed as materialized (
        select k.key from exo_private.closed_subject_keys(p_bridge) k
    ), shown as (
        select e.id from exo_private.entities e
        where e.id = any (ids)
          and not exists (select 1 from closed c where c.key = e.canonical_key)
    ), ms as (
        select m.* from exo_private.entity_mentions(array(select s.id from shown s), p_bridge) m
        where m.withheld = '{}'
    ), firsts as (
        -- chunks of a document are numbered in reading order
        select m.document_id, m.workspace, m.chunk_id, m.window_id, m.surface,
               d.written_at, d.path, d.title, d.band::text as band
        from ms m
        join exo_private.documents d on d.id = m.document_id
        order by d.written_at nulls last, m.document_id, m.chunk_id nulls last, m.workspace
        limit n
    )
    -- excerpts only for the rows returned
    select f.written_at, f.document_id, f.path, f.title, f.band, f.workspace, f.surface,
           exo_private.excerpt(coalesce(c.body, w.body), f.surface, 200)
    from firsts f
    left join exo_private.chunks c on c.workspace = f.workspace and c.id = f.chunk_id
    left join exo_private.extraction_windows w on f.chunk_id is null and w.id = f.window_id
    order by f.written_at nulls last, f.document_id, f.chunk_id nulls last, f.workspace;
end
$$;
comment on function exo_private.entity_timeline(text, text, text[], int) is
    'exo.timeline, which see.';

-- exo.timeline: one entity's mentions in the order they were written.
create or replace function exo.timeline(
    entity text,
    workspace text default null,
    bridge text[] default '{}',
    max_results int default 500
)
returns table (
    written_at date, document_id bigint, path text, title text, band text, workspace text,
    surface text, excerpt text
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.entity_timeline($1, $2, $3, $4)
$$;
comment on function exo.timeline(text, text, text[], int) is
    'One entity''s mentions in the order they were written (oldest first, undated last): '
    'written_at, document_id, path, title, band, workspace, surface (the name as written) and excerpt '
    '(about 200 characters of the chunk around it). entity: an id or a name (as in exo.dossier; a '
    'name in several workspaces gives all of them, see the workspace column); workspace narrows it. '
    'The most recent statement is usually the authoritative one. Care: mentions in chunks charged '
    'for a deferred subject, and every mention of an entity that is one, are left out (silently: '
    'exo.dossier carries the hint) unless bridge names the subject by name or alias. At most '
    'max_results rows (clamped to 1..5000), the oldest.';

-- exo.document: one document's ledger row and the entities extracted from it.
create or replace function exo.document(document text, bridge text[] default '{}')
returns jsonb
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    wanted text := pg_catalog.btrim(document);
    suffix text;
    doc_ids bigint[];
    doc exo_private.documents;
    result jsonb;
begin
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'document must be a document id or a path, got ' || coalesce(quote_literal(document), 'null'));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(d.id) into doc_ids from exo_private.documents d where d.id = wanted::bigint;
    end if;
    if doc_ids is null then
        select array_agg(d.id order by d.id) into doc_ids from exo_private.documents d where d.path = wanted;
    end if;
    if doc_ids is null then
        -- a unique suffix at a folder boundary, case-insensitive ("rent.md", "admin/rent.md")
        suffix := pg_catalog.ltrim(wanted, '/');
        select array_agg(d.id order by d.path, d.id) into doc_ids
        from exo_private.documents d
        where d.file_name = pg_catalog.lower(pg_catalog.regexp_replace(suffix, '^.*/', ''))
          and (pg_catalog.lower(d.path) = pg_catalog.lower(suffix)
               or pg_catalog.lower(pg_catalog.right(d.path, pg_catalog.length(suffix) + 1))
                  = pg_catalog.lower('/' || suffix));
    end if;
    if doc_ids is null then
        perform exo_private.invalid_argument(
            format('document %s names no document (by id, path or path suffix)', quote_literal(document)),
            'exo.search(query) finds documents by their content, title or file name');
    end if;
    if cardinality(doc_ids) > 1 then
        perform exo_private.invalid_argument(
            format('document %s matches %s documents: %s', quote_literal(document), cardinality(doc_ids),
                   (select string_agg(d.id || ' ' || d.path, ', ' order by d.path, d.id)
                    from (select x.id, x.path from exo_private.documents x where x.id = any (doc_ids)
                          order by x.path, x.id limit 5) d)
                   || case when cardinality(doc_ids) > 5 then ', ...' else '' end),
            'name one by its id or by a longer path');
    end if;
    select * into doc from exo_private.documents d where d.id = doc_ids[1];
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), closed_chunks as materialized (
        select k.chunk_id, k.withheld from exo_private.closed_chunks(bridge) k
    ), ms as materialized (
        select m.entity_id, m.chunk_id, e.name, e.type, e.canonical_key,
               (select c2.subject from closed c2 where c2.key = e.canonical_key order by c2.subject limit 1)
                   as itself,
               case when m.chunk_id is null
                    then exo_private.window_withheld(m.window_id, r.keys)
                    else coalesce(k.withheld, '{}') end as withheld
        from released r
        cross join exo_private.mentions m
        join exo_private.entities e on e.id = m.entity_id
        left join closed_chunks k on k.chunk_id = m.chunk_id
        where m.document_id = doc.id
    ), shown as (
        select m.entity_id, m.name, m.type, count(*) as mentions
        from ms m where m.itself is null and m.withheld = '{}'
        group by m.entity_id, m.name, m.type
    ), held as (
        select coalesce(m.itself, s) as subject, count(*) as mentions, count(distinct m.chunk_id) as chunks
        from ms m
        left join lateral unnest(m.withheld) s on m.itself is null
        where m.itself is not null or m.withheld <> '{}'
        group by 1
    )
    select jsonb_build_object(
        'document_id', doc.id,
        'path', doc.path,
        'source', (select s.root from exo_private.sources s where s.id = doc.source_id),
        'title', doc.title,
        'extension', doc.extension,
        'stage', doc.stage::text,
        'size_bytes', doc.size_bytes,
        'sha256', doc.sha256,
        'written_at', doc.written_at,
        'first_seen_at', doc.first_seen_at,
        'stage_changed_at', doc.stage_changed_at,
        'band', doc.band::text,
        'band_source', doc.band_source,
        'band_reason', doc.band_reason,
        'workspace', doc.workspace,
        'route', doc.route,
        'canonical', doc.canonical,
        'error_class', doc.error_class,
        'error_message', doc.error_message,
        'chunks', (select count(*) from exo_private.chunks c
                   where c.workspace = doc.workspace and c.document_id = doc.id),
        'charged_chunks', (select count(*) from exo_private.chunks c
                           where c.workspace = doc.workspace and c.document_id = doc.id
                             and c.charged_subjects <> '{}'),
        'entities', coalesce((
            select jsonb_agg(jsonb_build_object('entity_id', x.entity_id, 'name', x.name,
                                                'type', x.type::text, 'mentions', x.mentions)
                             order by x.mentions desc, x.name, x.entity_id)
            from (select * from shown s order by s.mentions desc, s.name, s.entity_id limit 200) x), '[]'),
        'hints', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'subject', h.subject, 'workspace', doc.workspace, 'mentions', h.mentions,
                       'chunks', h.chunks, 'how', exo_private.hint_how(h.subject))
                       order by h.subject)
            from held h), '[]'))
    into result;
    return result;
end
$$;
comment on function exo.document(text, text[]) is
    'One document of the ledger as jsonb. document: an id (digits), an exact path, or a unique path '
    'suffix at a folder boundary (case-insensitive: "rent.md", "admin/rent.md"). Gives document_id, '
    'path, source, title, extension, stage, size_bytes, sha256, written_at, first_seen_at, '
    'stage_changed_at, band, band_source, band_reason, workspace, route (the router''s decision), '
    'canonical, error_class, error_message, chunks, charged_chunks, entities extracted from it '
    '(at most 200, most mentioned first: entity_id, name, type, mentions) and hints. Care: entities '
    'that are deferred subjects and mentions in charged chunks are left out unless bridge names the '
    'subject; a hint says so {subject, workspace, mentions, chunks, how}. Raises '
    'invalid_parameter_value when nothing matches, or when several do (listing up to 5).';

-- exo.conversation: the messages of one chat conversation, oldest first.
create or replace function exo.conversation(conversation text, max_messages int default 200)
returns table (
    conversation_id bigint, title text, source text, sent_at timestamptz, sender text,
    is_owner boolean, body text
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    wanted text := pg_catalog.btrim(conversation);
    n int := least(greatest(coalesce(max_messages, 200), 1), 2000);
    ids bigint[];
begin
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'conversation must be a conversation id or a title, got ' || coalesce(quote_literal(conversation), 'null'));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(c.id) into ids from exo_private.chat_conversations c where c.id = wanted::bigint;
    end if;
    if ids is null then
        select array_agg(c.id order by c.id) into ids
        from exo_private.chat_conversations c
        where c.title ilike exo_private.like_pattern(wanted);
        if cardinality(ids) > 1 then
            -- a title equal to the words asked for wins over titles that only contain them
            select coalesce(array_agg(c.id order by c.id), ids) into ids
            from exo_private.chat_conversations c
            where c.id = any (ids) and pg_catalog.lower(c.title) = pg_catalog.lower(wanted);
        end if;
    end if;
    if ids is null then
        perform exo_private.invalid_argument(
            format('conversation %s names no conversation (by id or title)', quote_literal(conversation)),
            'exo.search_messages(query) finds messages by their words');
    end if;
    if cardinality(ids) > 1 then
        perform exo_private.invalid_argument(
            format('conversation %s matches %s conversations: %s', quote_literal(conversation), cardinality(ids),
                   (select string_agg(format('%s %s (%s)', x.id, quote_literal(coalesce(x.title, '')), x.source),
                                      ', ' order by x.id)
                    from (select c.id, c.title, c.source from exo_private.chat_conversations c
                          where c.id = any (ids) order by c.id limit 5) x)
                   || case when cardinality(ids) > 5 then ', ...' else '' end),
            'name one by its id or by more of its title');
    end if;
    return query
    select c.id, c.title, c.source, m.sent_at, coalesce(i.display_name, p.display_name, i.handle),
           coalesce(p.is_owner, false), m.body
    from exo_private.chat_conversations c
    join exo_private.chat_messages m on m.conversation_id = c.id
    join exo_private.chat_identities i on i.id = m.identity_id
    left join exo_private.people p on p.id = i.person_id
    where c.id = ids[1]
    order by m.sent_at nulls last, m.id
    limit n;
end
$$;
comment on function exo.conversation(text, int) is
    'The messages of one chat conversation, oldest first: conversation_id, title, source, sent_at, '
    'sender, is_owner (sent by the corpus''s owner), body. conversation: an id (digits) or words of '
    'its title (case-insensitive substring; a title equal to them wins). Raises '
    'invalid_parameter_value when nothing matches, or when several conversations do (listing up to '
    '5 as id, title, source). At most max_messages rows (clamped to 1..2000), the first ones.';

-- exo.person_history: who someone is across chat sources.
create or replace function exo.person_history(name text, max_results int default 200)
returns table (
    person text, source text, handle text, display_name text, is_owner boolean, messages bigint,
    conversations bigint, first_seen timestamptz, last_seen timestamptz
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    pattern text;
    n int := least(greatest(coalesce(max_results, 200), 1), 1000);
begin
    if person_history.name is null or pg_catalog.btrim(person_history.name) = '' then
        perform exo_private.invalid_argument(
            'name must be a name or handle to look for, got ' || coalesce(quote_literal(person_history.name), 'null'));
    end if;
    pattern := exo_private.like_pattern(pg_catalog.btrim(person_history.name));
    return query
    select p.display_name, i.source, i.handle, i.display_name, coalesce(p.is_owner, false),
           count(m.id), count(distinct m.conversation_id), min(m.sent_at), max(m.sent_at)
    from exo_private.chat_identities i
    left join exo_private.people p on p.id = i.person_id
    left join exo_private.chat_messages m on m.identity_id = i.id
    where i.display_name ilike pattern or i.handle ilike pattern or p.display_name ilike pattern
    group by i.id, p.display_name, p.is_owner, i.source, i.handle, i.display_name
    order by p.display_name nulls last, count(m.id) desc, i.source, i.handle
    limit n;
end
$$;
comment on function exo.person_history(text, int) is
    'Chat identities whose display name or handle, or whose linked person''s name, contains name '
    '(case-insensitive substring), across every source: person (the linked person, the owner''s '
    'identities all link to the owner), source, handle, display_name, is_owner, messages, '
    'conversations, first_seen and last_seen (first and last message). At most max_results rows '
    '(clamped to 1..1000). Raises invalid_parameter_value for a blank name.';

-- exo_private.cypher_refusal: why a Cypher query may not run (null when it may).
create or replace function exo_private.cypher_refusal(query text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    outside text;
    word text;
begin
    if query is null or pg_catalog.btrim(query) = '' then
        return 'query must be a Cypher query, got ' || coalesce(quote_literal(query), 'null');
    end if;
    if pg_catalog.length(query) > 20000 then
        return 'query is longer than 20000 characters';
    end if;
    -- Anywhere, string literals included: the query is dollar-quoted into SQL.
    if pg_catalog.strpos(query, '$') > 0 then
        return 'query must not contain $ (no dollar quotes, no parameters)';
    end if;
    -- What lies outside string literals and `quoted names` (backslash escapes as Cypher has
    -- them; a doubled quote leaves nothing outside either way). An unterminated literal is
    -- left in place, so what follows it is still checked.
    outside := pg_catalog.regexp_replace(
        query, $re$'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`$re$, ' q ', 'g');
    -- Comments could hide a quote that this scan and Cypher's would read differently.
    if outside ~ '//|/\*' then
        return 'query must not contain comments (// or /*)';
    end if;
    if pg_catalog.strpos(outside, ';') > 0 then
        return 'query must be one statement: no ; outside string literals';
    end if;
    word := (pg_catalog.regexp_match(outside, '\m(create|merge|set|delete|detach|remove|call|load)\M', 'i'))[1];
    if word is not null then
        return format('query is read-only: %s is refused (no CREATE, MERGE, SET, DELETE, DETACH, REMOVE, '
                      'CALL or LOAD)', pg_catalog.upper(word));
    end if;
    -- schema.function(...) would run any SQL function with this API's privileges
    if outside ~ '\.\s*\w+\s*\(' then
        return 'query must not call schema-qualified functions (x.f(...)); Cypher''s own functions only';
    end if;
    select w[1] into word
    from pg_catalog.regexp_matches(outside, '\m(\w+)\s*\(', 'g') w
    where exists (select 1 from pg_catalog.pg_proc p
                  where p.pronamespace = 'ag_catalog'::regnamespace
                    and p.proname = 'age_' || pg_catalog.lower(w[1])
                    and p.provolatile = 'v' and p.proname <> 'age_rand')
    limit 1;
    if word is not null then
        return format('query is read-only: the function %s may change the database and is refused', word);
    end if;
    if outside !~* '\mreturn\M' then
        return 'query must RETURN something (MATCH ... RETURN ...)';
    end if;
    return null;
end
$$;
comment on function exo_private.cypher_refusal(text) is
    'Why exo.cypher refuses a query (the rule, as a message), or null when it may run: $ anywhere, '
    'comments, ;, the words CREATE MERGE SET DELETE DETACH REMOVE CALL LOAD, schema-qualified or '
    'volatile AGE function calls outside string literals, or no RETURN.';

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

-- exo.cypher: a read-only Cypher query on one workspace's graph.
create or replace function exo.cypher(
    workspace text, query text, max_rows int default 100, bridge text[] default '{}'
)
returns setof jsonb
language plpgsql stable
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    graph name;
    refusal text;
    n int := least(greatest(coalesce(max_rows, 100), 1), 1000);
    tag text := 'exo_cypher';
    row_value text;
    closed text[];
    subjects text[];
    held int := 0;
    held_subjects text[] := '{}'::text[];
begin
    if cypher.workspace is null then
        perform exo_private.invalid_argument('workspace must name a workspace, got null');
    end if;
    perform exo_private.check_workspaces(array[cypher.workspace]);
    graph := exo_private.graph_name(cypher.workspace);
    if not exists (select 1 from ag_catalog.ag_graph g where g.name = graph) then
        perform exo_private.invalid_argument(
            format('workspace %s has no graph yet', quote_literal(cypher.workspace)));
    end if;
    refusal := exo_private.cypher_refusal(query);
    if refusal is not null then
        perform exo_private.invalid_argument(refusal,
            'exo.cypher runs one read-only query: MATCH ... [WHERE ...] RETURN one value '
            '(a map such as {name: n.name} for several)');
    end if;
    select coalesce(array_agg(k.key order by k.key), '{}'), coalesce(array_agg(k.subject order by k.key), '{}')
      into closed, subjects
    from exo_private.closed_subject_keys(bridge) k;
    -- The query has no $ at all, so no dollar quote can end early; the tag is checked anyway.
    while pg_catalog.strpos(query, '$' || tag || '$') > 0 loop
        tag := tag || '_';
    end loop;
    begin
        for row_value in execute format(
            'select pg_catalog.format(''%%s'', v) from ag_catalog.cypher(%L, $%s$%s$%s$) as (v ag_catalog.agtype) limit %s',
            graph, tag, query, tag, n)
        loop
            -- A row that names a closed deferred subject (any of its names, any case) is held back.
            if exists (select 1 from unnest(closed) k where pg_catalog.strpos(pg_catalog.lower(row_value), k) > 0) then
                held := held + 1;
                held_subjects := held_subjects || array(
                    select s from unnest(closed, subjects) u(k, s)
                    where pg_catalog.strpos(pg_catalog.lower(row_value), u.k) > 0);
                continue;
            end if;
            return next exo_private.agtype_jsonb(row_value);
        end loop;
    exception when datatype_mismatch then
        raise exception 'query must RETURN exactly one value: %', sqlerrm
            using errcode = 'invalid_parameter_value',
                  hint = 'return a map for several values: RETURN {name: n.name, type: label(n)}';
    end;
    if held > 0 then
        return next jsonb_build_object('exo_withheld', jsonb_build_object(
            'rows', held,
            'subjects', (select jsonb_agg(distinct s order by s) from unnest(held_subjects) s),
            'how', (select string_agg(exo_private.hint_how(s), '; ' order by s)
                    from (select distinct s from unnest(held_subjects) s) x)));
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
    'rows are read (clamped to 1..1000). Refused (invalid_parameter_value naming the rule): CREATE, '
    'MERGE, SET, DELETE, DETACH, REMOVE, CALL, LOAD outside string literals, ;, comments, $ '
    'anywhere, schema-qualified or volatile function calls, and a query without RETURN. Care: a '
    'row naming a deferred subject (any name or alias, any case) is held back unless bridge names '
    'the subject; then a last row {"exo_withheld": {rows, subjects, how}} says so.';
