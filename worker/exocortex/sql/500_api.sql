-- The read-only agent API beyond search: the system's status, entities and their
-- dossiers, timelines and neighbourhoods, documents, chat conversations and people, and
-- a guarded read-only Cypher entry point. Everything an agent calls is in schema exo,
-- runs as security definer and only reads; exo_private helpers first.
--
-- Care: a mention in a chunk charged for a deferred subject, an entity that is a deferred
-- subject (its name or an alias, compared by canonical key) or is seen only in such chunks,
-- a relation whose evidence is withheld, a charged document's title and path, and a charged
-- chat message stay out of every answer unless the caller bridges that subject (bridge =>
-- array['name or alias']). Graph answers are computed over what the caller may see (a walk
-- never passes a hidden node). Each answer says what it left out (subject, counts, how to
-- ask), never the text: a hints list in jsonb answers, last rows with only a withheld
-- column in table answers.

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

-- exo_private.mention_state: whether an entity's mentions in one window may be shown.
create or replace function exo_private.mention_state(p_entity bigint, p_window bigint, released text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- '{}': some mention may be shown; else the closed subjects that withhold them all; null:
    -- the entity has no mention in the window. A relation is shown only when both of its
    -- ends are shown in its window (exo.dossier, exo.related).
    with x as (
        select case when m.chunk_id is null
                    then exo_private.window_withheld(m.window_id, released)
                    else exo_private.unreleased(c.charged_subjects, released) end as held
        from exo_private.mentions m
        join exo_private.entities e on e.id = m.entity_id
        left join exo_private.chunks c on c.workspace = e.workspace and c.id = m.chunk_id
        where m.entity_id = p_entity and m.window_id = p_window
    )
    select case when not exists (select 1 from x) then null
                when exists (select 1 from x where x.held = '{}') then '{}'::text[]
                else (select array_agg(distinct s order by s) from x cross join lateral unnest(x.held) s) end
$$;
comment on function exo_private.mention_state(bigint, bigint, text[]) is
    'Whether the mentions of an entity in an extraction window may be shown to a caller whose '
    'bridge opens released (exo_private.released_keys): {} when one may, else the closed subjects '
    'that withhold them all; null when the entity has no mention there.';

-- exo_private.entity_evidence: what of each entity a bridge lets a caller see.
create or replace function exo_private.entity_evidence(ids bigint[], bridge text[])
returns table (entity_id bigint, mentions bigint, documents bigint, withheld text[])
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- An entity is closed when it is a deferred subject the bridge leaves closed (by name or
    -- alias), or when every mention of it is withheld: its only evidence is charged material.
    -- One never mentioned (the owner) stays open.
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), ents as materialized (
        select e.id,
               (select array_agg(distinct c.subject order by c.subject) from closed c
                where c.key = e.canonical_key) as itself
        from exo_private.entities e
        where e.id = any (ids)
    ), ms as materialized (
        select m.entity_id, m.document_id, m.withheld
        from exo_private.entity_mentions(array(select x.id from ents x where x.itself is null), bridge) m
    ), counted as (
        select m.entity_id,
               count(*) filter (where m.withheld = '{}') as shown,
               count(distinct m.document_id) filter (where m.withheld = '{}') as documents
        from ms m
        group by m.entity_id
    ), held as (
        select m.entity_id, array_agg(distinct s order by s) as subjects
        from ms m
        cross join lateral unnest(m.withheld) s
        group by m.entity_id
    )
    select e.id, coalesce(k.shown, 0), coalesce(k.documents, 0),
           case when e.itself is not null then e.itself
                when k.shown = 0 then h.subjects
                else '{}'::text[] end
    from ents e
    left join counted k on k.entity_id = e.id
    left join held h on h.entity_id = e.id
$$;
comment on function exo_private.entity_evidence(bigint[], text[]) is
    'For each of the given entities: mentions and documents (distinct) that may be shown, and '
    'withheld: {} when the entity may be shown, else the closed subjects why: it is a deferred '
    'subject the bridge leaves closed (by canonical key of its name or an alias; then no mention '
    'counts), or every mention of it is withheld (its only evidence is charged material). The graph '
    'API computes its answers over the open ones.';

-- exo_private.closed_documents: the documents a bridge leaves closed, and why.
create or replace function exo_private.closed_documents(ids bigint[], bridge text[])
returns table (document_id bigint, withheld text[])
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A charged document: its frontmatter charges a subject (chunks or not), or it has chunks
    -- and every one is withheld. A title or path that names a subject near a cue charges every
    -- chunk (plpy/deference.py heading), so such a document is one of these too. Its title and
    -- path are withheld wherever its text would be.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), docs as (
        select d.id, d.workspace, d.frontmatter -> 'charged' as declared
        from exo_private.documents d
        where d.id = any (ids)
    ), declared as (
        -- a declared name that is a deferred subject's name or alias counts as that subject
        select dc.id,
               coalesce((select s.subject from exo_private.deferred_subjects s
                         where exo_private.canonical_key(n.name)
                               = any (array(select exo_private.canonical_key(a) from unnest(s.subject || s.aliases) a))
                         order by s.subject limit 1),
                        pg_catalog.btrim(n.name)) as subject
        from docs dc
        cross join lateral jsonb_array_elements_text(
            case jsonb_typeof(dc.declared) when 'array' then dc.declared
                                           when 'string' then jsonb_build_array(dc.declared)
                                           else '[]'::jsonb end) n (name)
        where pg_catalog.btrim(n.name) <> ''
    ), chunk_states as (
        select c.document_id, exo_private.unreleased(c.charged_subjects, r.keys) as held
        from docs dc
        join exo_private.chunks c on c.workspace = dc.workspace and c.document_id = dc.id
        cross join released r
    ), reasons as (
        select dl.id, u.subject
        from declared dl
        cross join released r
        cross join lateral unnest(exo_private.unreleased(array[dl.subject], r.keys)) u (subject)
        union all
        select cs.document_id, u.subject
        from chunk_states cs
        cross join lateral unnest(cs.held) u (subject)
        where not exists (select 1 from chunk_states x where x.document_id = cs.document_id and x.held = '{}')
    )
    select r.id, array_agg(distinct r.subject order by r.subject)
    from reasons r
    group by r.id
$$;
comment on function exo_private.closed_documents(bigint[], text[]) is
    'Of the given documents, the charged ones the bridge leaves closed, with the subjects why: the '
    'frontmatter charges a closed subject, or every chunk is withheld (a title or path naming a '
    'subject near a cue charges every chunk). The one rule for withholding a document''s title and '
    'path wherever they would appear.';

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
            'entity must be an entity id or a name, got ' || exo_private.quoted(entity));
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
            format('entity %s names no entity%s', exo_private.quoted(entity),
                   case when workspace is null then '' else ' in workspace ' || exo_private.quoted(workspace) end),
            format('exo.search_entities(name => %s) lists the entities whose names contain it',
                   exo_private.quoted(wanted)));
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
    ), itself as (
        -- the entity is a deferred subject the bridge leaves closed
        select c.subject from closed c join ent on ent.canonical_key = c.key
        order by c.subject limit 1
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(array[p_entity], bridge) m
    ), hidden as (
        -- every mention is withheld: the entity's only evidence is charged material
        select exists (select 1 from ms) and not exists (select 1 from ms m where m.withheld = '{}') as yes
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
               -- both ends must be shown in the relation's window: what withholds either
               exo_private.mention_state(p_entity, rl.window_id, r.keys)
                   || exo_private.mention_state(rl.other_id, rl.window_id, r.keys) as evidence_withheld
        from rels rl
        join exo_private.entities o on o.id = rl.other_id
        cross join released r
    ), rels_shown as (
        select rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type,
               count(distinct rj.document_id) as documents,
               (array_agg(distinct rj.document_id))[1:5] as document_ids,
               min(rj.predicate_raw) as predicate_raw
        from rels_judged rj
        where rj.other_subject is null and rj.evidence_withheld = '{}'
        group by rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type
    ), withheld_mentions as (
        select s as subject, count(*) as mentions, count(distinct m.chunk_id) as chunks
        from ms m cross join lateral unnest(m.withheld) s
        group by s
    ), withheld_relations as (
        -- a relation to a closed subject, or one whose evidence is withheld, under each subject
        select s as subject, count(distinct rj.id) as relations
        from rels_judged rj
        cross join lateral unnest(case when rj.other_subject is not null then array[rj.other_subject]
                                       else rj.evidence_withheld end) s
        group by s
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
        when (select h.yes from hidden h) then
            -- Seen only in withheld material: that it exists, never its name.
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'withheld', true,
                'hints', (
                    select jsonb_agg(jsonb_build_object(
                        'subject', wm.subject, 'workspace', ent.workspace, 'mentions', wm.mentions,
                        'chunks', wm.chunks, 'relations', (select count(*) from rels),
                        'how', exo_private.hint_how(wm.subject))
                        order by wm.subject)
                    from withheld_mentions wm))
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
        'unreadable_folders', jsonb_build_object(
            'total', (select count(*) from exo_private.unreadable_folders),
            'folders', (select coalesce(jsonb_agg(to_jsonb(u) order by u.source, u.path), '[]')
                        from (select s.root as source, f.path, f.error, f.first_seen_at as since
                              from exo_private.unreadable_folders f
                              join exo_private.sources s on s.id = f.source_id
                              order by s.root, f.path limit 20) u)),
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
        'deferred_subjects', (select count(*) from exo_private.deferred_subjects)
    ) || exo_private.work_status()
$$;
comment on function exo.status() is
    'The state of the whole system as jsonb: documents (total, by_stage), quarantine (documents '
    'waiting for a routing decision), unreadable_folders (folders the last ingest could not list, '
    'whose documents are kept as they were: total, and the first 20 with source, path, error, since), chunks (total, charged, by_workspace), embeddings (per model: '
    'dimensions, vectors, active), graph (per workspace: entities, mentions, relations), '
    'deferred_subjects (a count), as_of, and the worker''s side (exo_private.work_status): queues '
    '(embed, extract: depth, pending, in_flight, held_by_dead_workers, failed, dead, oldest_age_s = '
    'seconds since the oldest message was queued; dead_letter), work_by_stage, stuck (documents that '
    'cannot advance on their own, with a hint) and worker (last_heartbeat, alive, running, dead). '
    'Counts only, never text.';

-- exo_private.find_entities: the body of exo.search_entities (plpgsql may not name an
-- argument like a result column).
create or replace function exo_private.find_entities(
    p_name text, p_type text, p_workspaces text[], p_max int, p_bridge text[]
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
        select v.* from exo_private.entity_evidence(array(select c.id from candidates c), p_bridge) v
    ), listed as (
        select c.id, c.workspace, c.type::text as type, c.name, v.mentions, v.documents,
               row_number() over (order by v.mentions desc, c.name, c.id) as ord
        from candidates c
        join evidence v on v.entity_id = c.id
        where v.withheld = '{}'
        order by ord
        limit n
    ), held as (
        select s.subject, c.workspace, count(*) as entities
        from candidates c
        join evidence v on v.entity_id = c.id
        cross join lateral unnest(v.withheld) s (subject)
        group by s.subject, c.workspace
    )
    select x.id, x.workspace, x.type, x.name, x.mentions, x.documents, x.hint
    from (
        select 0 as part, l.ord, l.id, l.workspace, l.type, l.name, l.mentions, l.documents, null::jsonb as hint
        from listed l
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'workspace', h.workspace, 'entities', h.entities,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) x
    order by x.part, x.ord;
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
returns table (
    entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint, withheld jsonb
)
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
    'be shown), withheld (null). The same name in two workspaces is two entities. max_results is '
    'clamped to 1..500. Care: an entity that is a deferred subject (exo.deferred_subjects, by name or '
    'alias), and one seen only in chunks charged for a deferred subject, is left out unless bridge '
    'names that subject, and mentions in charged chunks are not counted; then one last row per '
    'subject and workspace has only withheld: {subject, workspace, entities, how}. '
    'Next: exo.dossier(entity_id::text).';

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
    'subject, or one seen only in withheld chunks (by id as by name), gives only {entity_id, '
    'workspace, type, withheld: true, hints}. Raises '
    'invalid_parameter_value for a blank entity, an unknown workspace or a name that matches nothing.';

-- exo.cross_document_entities: entities that connect documents, and how many do.
create or replace function exo.cross_document_entities(
    min_documents int default 2,
    workspaces text[] default null,
    max_results int default 100,
    bridge text[] default '{}'
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
        select v.* from exo_private.entity_evidence(array(select c.id from candidates c), bridge) v
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
        select s.subject, c.workspace, count(*) as entities
        from candidates c
        join evidence v on v.entity_id = c.id
        cross join lateral unnest(v.withheld) s (subject)
        group by s.subject, c.workspace
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
        'hints', coalesce((
            select jsonb_agg(jsonb_build_object('subject', h.subject, 'workspace', h.workspace,
                                                'entities', h.entities, 'how', exo_private.hint_how(h.subject))
                             order by h.subject, h.workspace)
            from held h), '[]'))
    into result;
    return result;
end
$$;
comment on function exo.cross_document_entities(int, text[], int, text[]) is
    'Entities that connect documents, as jsonb: entities (at most max_results, clamped to 1..1000, '
    'most documents first: entity_id, workspace, type, name, documents) mentioned in at least '
    'min_documents (>= 1) distinct documents; bridging_rate {overall, by_workspace}: the share of '
    'mentioned entities that appear in 2 or more documents (how well the graph links the corpus), '
    'with the counts behind it; hints. workspaces null: all. Care: entities that are deferred '
    'subjects, or seen only in chunks charged for one, and mentions in charged chunks are not '
    'counted unless bridge names the subject (by name or alias); a hint per subject and workspace '
    'says how many entities were left out: {subject, workspace, entities, how}.';

-- exo_private.closed_windows: the extraction windows that overlap a chunk a bridge leaves closed.
create or replace function exo_private.closed_windows(bridge text[])
returns table (window_id bigint)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Only in these may a mention, and so a relation, be withheld: elsewhere all is shown.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    )
    select distinct w.id
    from exo_private.chunks c
    cross join released r
    join exo_private.extraction_windows w
      on w.workspace = c.workspace and w.document_id = c.document_id
     and c.char_start < w.char_end and c.char_end > w.char_start
    where c.charged_subjects <> '{}'
      and exo_private.unreleased(c.charged_subjects, r.keys) <> '{}'
$$;
comment on function exo_private.closed_windows(text[]) is
    'The extraction windows overlapping a chunk charged for a subject the bridge leaves closed: the '
    'only windows whose mentions and relations may be withheld (exo_private.mention_state says which).';

-- exo_private.related_to: the body of exo.related.
create or replace function exo_private.related_to(
    p_entity text, p_workspace text, p_depth int, p_per_node int, p_bridge text[]
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
    ids := exo_private.resolve_entity(p_entity, p_workspace);
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
        select v.entity_id, v.withheld from exo_private.entity_evidence(ids, p_bridge) v
    ), walk (node, hops) as (
        select s.entity_id, 0 from starts s where s.withheld = '{}'
        union
        select nb.id, w.hops + 1
        from walk w
        cross join lateral (
            select x.id
            from (
                select r.object_id as id, r.window_id from exo_private.relations r where r.subject_id = w.node
                union all
                select r.subject_id, r.window_id from exo_private.relations r where r.object_id = w.node
            ) x
            join exo_private.entities e on e.id = x.id
            where x.id <> w.node
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
    ), hidden as (
        -- the relations of each expanded node that the walk may not take, and why
        select f.workspace, x.relation, s.subject
        from (select distinct w.node, e.workspace from walk w join exo_private.entities e on e.id = w.node
              where w.hops < p_depth) f
        cross join lateral (
            select r.id as relation, r.object_id as id, r.window_id
            from exo_private.relations r where r.subject_id = f.node
            union all
            select r.id, r.subject_id, r.window_id from exo_private.relations r where r.object_id = f.node
        ) x
        join exo_private.entities e on e.id = x.id
        cross join lateral unnest(
            case when exists (select 1 from closed c where c.key = e.canonical_key)
                 then array(select c.subject from closed c where c.key = e.canonical_key)
                 when x.window_id in (select cw.window_id from closed_windows cw)
                 then coalesce(exo_private.mention_state(f.node, x.window_id, released), '{}')
                      || coalesce(exo_private.mention_state(x.id, x.window_id, released), '{}')
                 else '{}'::text[] end) s (subject)
        union
        -- a closed start: none of its relations is walked
        select e.workspace, r.id, s.subject
        from starts st
        join exo_private.entities e on e.id = st.entity_id
        cross join lateral unnest(st.withheld) s (subject)
        left join exo_private.relations r on r.subject_id = st.entity_id or r.object_id = st.entity_id
    ), held as (
        select h.subject, h.workspace, count(distinct h.relation) as relations
        from hidden h
        group by h.subject, h.workspace
    )
    select x.id, x.workspace, x.type, x.name, x.hops, x.hint
    from (
        select 0 as part, row_number() over (order by r.hops, e.name, e.id) as ord,
               e.id, e.workspace, e.type::text as type, e.name, r.hops, null::jsonb as hint
        from reached r
        join exo_private.entities e on e.id = r.node
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'workspace', h.workspace, 'relations', h.relations,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) x
    order by x.part, x.ord;
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
returns table (entity_id bigint, workspace text, type text, name text, depth int, withheld jsonb)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.related_to($1, $2, $3, $4, $5)
$$;
comment on function exo.related(text, text, int, int, text[]) is
    'Entities related to one entity (either direction) in its workspace''s graph: entity_id, '
    'workspace, type, name, depth (hops, each entity once at its smallest depth), withheld (null), '
    'nearest first. entity: an id or a name (as in exo.dossier; a name in several workspaces walks '
    'each). depth: 1..3 (1: direct neighbours). per_node (1..1000): each node expands at most that '
    'many neighbours, lowest ids first, so a hub (the owner, say) costs per_node rows per level. '
    'Care: the walk goes only through what the caller may see: never to or through an entity that '
    'is a deferred subject or is seen only in chunks charged for one, nor along a relation whose '
    'evidence is withheld, unless bridge names the subject; from such an entity itself nothing is '
    'listed. Then one last row per subject and workspace has only withheld: {subject, workspace, '
    'relations (left untaken), how}. Raises invalid_parameter_value for bad arguments.';

-- exo_private.entity_timeline: the body of exo.timeline.
create or replace function exo_private.entity_timeline(
    p_entity text, p_workspace text, p_bridge text[], p_max int
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
    ids bigint[] := exo_private.resolve_entity(p_entity, p_workspace);
    n int := least(greatest(coalesce(p_max, 500), 1), 5000);
begin
    return query
    with evidence as materialized (
        select v.entity_id, v.withheld from exo_private.entity_evidence(ids, p_bridge) v
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(
            array(select v.entity_id from evidence v where v.withheld = '{}'), p_bridge) m
    ), closed_docs as materialized (
        select k.document_id, k.withheld from exo_private.closed_documents(
            array(select distinct m.document_id from ms m where m.withheld = '{}'), p_bridge) k
    ), firsts as (
        -- chunks of a document are numbered in reading order
        select m.document_id, m.workspace, m.chunk_id, m.window_id, m.surface,
               d.written_at, d.path, d.title, d.band::text as band,
               row_number() over (order by d.written_at nulls last, m.document_id, m.chunk_id nulls last,
                                           m.workspace) as ord
        from ms m
        join exo_private.documents d on d.id = m.document_id
        where m.withheld = '{}' and m.document_id not in (select k.document_id from closed_docs k)
        order by ord
        limit n
    ), held as (
        -- mentions of an open entity in withheld chunks or documents; every mention of a closed one
        select s.subject, e.workspace, count(*) as mentions
        from (
            select m.entity_id, m.withheld as subjects from ms m where m.withheld <> '{}'
            union all
            select m.entity_id, k.withheld
            from ms m join closed_docs k on k.document_id = m.document_id
            where m.withheld = '{}'
            union all
            select x.entity_id, v.withheld
            from evidence v join exo_private.mentions x on x.entity_id = v.entity_id
            where v.withheld <> '{}'
        ) t
        join exo_private.entities e on e.id = t.entity_id
        cross join lateral unnest(t.subjects) s (subject)
        group by s.subject, e.workspace
    )
    select y.written_at, y.document_id, y.path, y.title, y.band, y.workspace, y.surface, y.excerpt, y.hint
    from (
        -- excerpts only for the rows returned
        select 0 as part, f.ord, f.written_at, f.document_id, f.path, f.title, f.band, f.workspace, f.surface,
               exo_private.excerpt(coalesce(c.body, w.body), f.surface, 200) as excerpt, null::jsonb as hint
        from firsts f
        left join exo_private.chunks c on c.workspace = f.workspace and c.id = f.chunk_id
        left join exo_private.extraction_windows w on f.chunk_id is null and w.id = f.window_id
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, null, null,
               null,
               jsonb_build_object('subject', h.subject, 'workspace', h.workspace, 'mentions', h.mentions,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) y
    order by y.part, y.ord;
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
    surface text, excerpt text, withheld jsonb
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select * from exo_private.entity_timeline($1, $2, $3, $4)
$$;
comment on function exo.timeline(text, text, text[], int) is
    'One entity''s mentions in the order they were written (oldest first, undated last): '
    'written_at, document_id, path, title, band, workspace, surface (the name as written), excerpt '
    '(about 200 characters of the chunk around it) and withheld (null). entity: an id or a name (as '
    'in exo.dossier; a name in several workspaces gives all of them, see the workspace column); '
    'workspace narrows it. The most recent statement is usually the authoritative one. At most '
    'max_results rows (clamped to 1..5000), the oldest. Care: mentions in chunks or documents '
    'charged for a deferred subject, and every mention of an entity that is one or is seen only in '
    'such chunks, are left out unless bridge names the subject by name or alias; then one last row '
    'per subject and workspace has only withheld: {subject, workspace, mentions, how}.';

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
    held_back text[];
    result jsonb;
begin
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'document must be a document id or a path, got ' || exo_private.quoted(document));
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
            format('document %s names no document (by id, path or path suffix)', exo_private.quoted(document)),
            'exo.search(query) finds documents by their content, title or file name');
    end if;
    if cardinality(doc_ids) > 1 then
        perform exo_private.invalid_argument(
            format('document %s matches %s documents: %s', exo_private.quoted(document), cardinality(doc_ids),
                   (select string_agg(d.id || ' ' || coalesce(d.path, '(withheld)'), ', ' order by d.path, d.id)
                    from (select x.id,
                                 -- a charged document's path is withheld here too
                                 case when x.id in (select k.document_id
                                                    from exo_private.closed_documents(doc_ids, bridge) k)
                                      then null else x.path end as path
                          from exo_private.documents x where x.id = any (doc_ids)
                          order by x.path, x.id limit 5) d)
                   || case when cardinality(doc_ids) > 5 then ', ...' else '' end),
            'name one by its id or by a longer path');
    end if;
    select * into doc from exo_private.documents d where d.id = doc_ids[1];
    select k.withheld into held_back from exo_private.closed_documents(array[doc.id], bridge) k;
    if held_back is not null then
        -- A charged document: that it exists, never its title, path or what it says.
        return jsonb_build_object(
            'document_id', doc.id, 'workspace', doc.workspace, 'stage', doc.stage::text,
            'withheld', true,
            'hints', (
                select jsonb_agg(jsonb_build_object(
                           'subject', s.subject, 'workspace', doc.workspace,
                           'chunks', (select count(*) from exo_private.chunks c
                                      where c.workspace = doc.workspace and c.document_id = doc.id
                                        and c.charged_subjects @> array[s.subject]),
                           'how', exo_private.hint_how(s.subject))
                           order by s.subject)
                from unnest(held_back) s (subject)));
    end if;
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
    'subject; a hint says so {subject, workspace, mentions, chunks, how}. A charged document (its '
    'frontmatter charges a deferred subject, or every chunk is withheld, as when its title or path '
    'names the subject near a cue) gives only {document_id, workspace, stage, withheld: true, hints '
    '{subject, workspace, chunks, how}} unless bridge names the subject: no title, no path. Raises '
    'invalid_parameter_value when nothing matches, or when several do (listing up to 5, a charged '
    'document''s path withheld).';

-- exo.conversation: the messages of one chat conversation, oldest first.
create or replace function exo.conversation(conversation text, max_messages int default 200, bridge text[] default '{}')
returns table (
    conversation_id bigint, title text, source text, sent_at timestamptz, sender text,
    is_owner boolean, body text, withheld jsonb
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    wanted text := pg_catalog.btrim(conversation);
    n int := least(greatest(coalesce(max_messages, 200), 1), 2000);
    released text[] := exo_private.released_keys(bridge);
    ids bigint[];
begin
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'conversation must be a conversation id or a title, got ' || exo_private.quoted(conversation));
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
            format('conversation %s names no conversation (by id or title)', exo_private.quoted(conversation)),
            'exo.search_messages(query) finds messages by their words');
    end if;
    if cardinality(ids) > 1 then
        perform exo_private.invalid_argument(
            format('conversation %s matches %s conversations: %s', exo_private.quoted(conversation), cardinality(ids),
                   (select string_agg(format('%s %s (%s)', x.id, coalesce(quote_literal(x.title), '(withheld)'),
                                             x.source),
                                      ', ' order by x.id)
                    from (select c.id, c.source,
                                 -- the title of a conversation whose every message is withheld is too
                                 case when exists (select 1 from exo_private.chat_messages m
                                                   where m.conversation_id = c.id)
                                       and not exists (select 1 from exo_private.chat_messages m
                                                       where m.conversation_id = c.id
                                                         and exo_private.unreleased(m.charged_subjects, released) = '{}')
                                      then null else coalesce(c.title, '') end as title
                          from exo_private.chat_conversations c
                          where c.id = any (ids) order by c.id limit 5) x)
                   || case when cardinality(ids) > 5 then ', ...' else '' end),
            'name one by its id or by more of its title');
    end if;
    return query
    with messages as materialized (
        select m.id, m.sent_at, m.body, m.identity_id,
               exo_private.unreleased(m.charged_subjects, released) as held
        from exo_private.chat_messages m
        where m.conversation_id = ids[1]
    ), shown as (
        select m.*, row_number() over (order by m.sent_at nulls last, m.id) as ord
        from messages m
        where m.held = '{}'
        order by ord
        limit n
    ), held as (
        select s.subject, count(*) as messages
        from messages m
        cross join lateral unnest(m.held) s (subject)
        group by s.subject
    )
    select x.conversation_id, x.title, x.source, x.sent_at, x.sender, x.is_owner, x.body, x.hint
    from (
        select 0 as part, sh.ord, c.id as conversation_id, c.title, c.source, sh.sent_at,
               coalesce(i.display_name, p.display_name, i.handle) as sender,
               coalesce(p.is_owner, false) as is_owner, sh.body, null::jsonb as hint
        from shown sh
        join exo_private.chat_conversations c on c.id = ids[1]
        join exo_private.chat_identities i on i.id = sh.identity_id
        left join exo_private.people p on p.id = i.person_id
        union all
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'conversation', ids[1], 'messages', h.messages,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo.conversation(text, int, text[]) is
    'The messages of one chat conversation, oldest first: conversation_id, title, source, sent_at, '
    'sender, is_owner (sent by the corpus''s owner), body, withheld (null). conversation: an id '
    '(digits) or words of its title (case-insensitive substring; a title equal to them wins). Raises '
    'invalid_parameter_value when nothing matches, or when several conversations do (listing up to '
    '5 as id, title, source). At most max_messages rows (clamped to 1..2000), the first ones. Care: '
    'a message charged for a deferred subject (its name or an alias near a cue, in the message or '
    'the one before or after it, the title near them all) is left out unless bridge names the '
    'subject (by name or alias); then one last row per subject has only withheld: {subject, '
    'conversation, messages, how}. A conversation whose every message is withheld shows no title, '
    'in the listing of an ambiguous one too.';

-- exo.person_history: who someone is across chat sources.
create or replace function exo.person_history(name text, max_results int default 200, bridge text[] default '{}')
returns table (
    person text, source text, handle text, display_name text, is_owner boolean, messages bigint,
    conversations bigint, first_seen timestamptz, last_seen timestamptz, withheld jsonb
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    pattern text;
    n int := least(greatest(coalesce(max_results, 200), 1), 1000);
    released text[] := exo_private.released_keys(bridge);
begin
    if person_history.name is null or pg_catalog.btrim(person_history.name) = '' then
        perform exo_private.invalid_argument(
            'name must be a name or handle to look for, got ' || exo_private.quoted(person_history.name));
    end if;
    pattern := exo_private.like_pattern(pg_catalog.btrim(person_history.name));
    return query
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), identities as materialized (
        select i.id, i.source, i.handle, i.display_name, p.display_name as person, coalesce(p.is_owner, false) as owner,
               -- an identity named like a closed deferred subject is that subject
               (select c.subject from closed c
                where c.key in (exo_private.canonical_key(i.display_name), exo_private.canonical_key(i.handle),
                                exo_private.canonical_key(p.display_name))
                order by c.subject limit 1) as itself
        from exo_private.chat_identities i
        left join exo_private.people p on p.id = i.person_id
        where i.display_name ilike pattern or i.handle ilike pattern or p.display_name ilike pattern
    ), sent as materialized (
        select m.identity_id, m.id, m.conversation_id, m.sent_at,
               exo_private.unreleased(m.charged_subjects, released) as held
        from identities d
        join exo_private.chat_messages m on m.identity_id = d.id
    ), listed as (
        -- counts and dates by shown messages only
        select d.person, d.source, d.handle, d.display_name, d.owner,
               count(s.id) as messages, count(distinct s.conversation_id) as conversations,
               min(s.sent_at) as first_seen, max(s.sent_at) as last_seen
        from identities d
        left join sent s on s.identity_id = d.id and s.held = '{}'
        where d.itself is null
        group by d.id, d.person, d.source, d.handle, d.display_name, d.owner
    ), numbered as (
        select l.*, row_number() over (order by l.person nulls last, l.messages desc, l.source, l.handle) as ord
        from listed l
        order by ord
        limit n
    ), held as (
        select t.subject, count(*) as messages
        from (
            select s2.subject, s.id
            from sent s cross join lateral unnest(s.held) s2 (subject)
            join identities d on d.id = s.identity_id
            where d.itself is null
            union
            select d.itself, s.id
            from identities d join sent s on s.identity_id = d.id
            where d.itself is not null
        ) t
        group by t.subject
        union all
        -- a closed identity with no messages still says it was left out
        select d.itself, 0
        from identities d
        where d.itself is not null and not exists (select 1 from sent s where s.identity_id = d.id)
    )
    select x.person, x.source, x.handle, x.display_name, x.owner, x.messages, x.conversations, x.first_seen,
           x.last_seen, x.hint
    from (
        select 0 as part, nb.ord, nb.person, nb.source, nb.handle, nb.display_name, nb.owner, nb.messages,
               nb.conversations, nb.first_seen, nb.last_seen, null::jsonb as hint
        from numbered nb
        union all
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'messages', h.messages,
                                  'how', exo_private.hint_how(h.subject))
        from (select h0.subject, sum(h0.messages)::bigint as messages from held h0 group by h0.subject) h
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo.person_history(text, int, text[]) is
    'Chat identities whose display name or handle, or whose linked person''s name, contains name '
    '(case-insensitive substring), across every source: person (the linked person, the owner''s '
    'identities all link to the owner), source, handle, display_name, is_owner, messages, '
    'conversations, first_seen and last_seen (first and last message), withheld (null). At most '
    'max_results rows (clamped to 1..1000). Raises invalid_parameter_value for a blank name. Care: '
    'messages charged for a deferred subject are neither counted nor dated, and an identity named '
    'like a deferred subject (its name or an alias) is left out, unless bridge names the subject; '
    'then one last row per subject has only withheld: {subject, messages, how}.';
