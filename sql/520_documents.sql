-- Documents for agents: exo.document, one ledger row and the entities extracted from it; a
-- charged document's title and path are withheld with its text (sql/450_deference.sql).

-- exo.document: one document's ledger row and the entities extracted from it.
create or replace function exo.document(document text, bridge text[] default '{}', as_of timestamptz default null)
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
    -- (after the care above: a withheld document's date is not told by this either)
    if as_of is not null and (doc.written_at is null or doc.written_at > as_of::date) then
        perform exo_private.invalid_argument(
            format('document %s was not written by %s', exo_private.quoted(document), as_of::date),
            'leave as_of out for every document');
    end if;
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), ms as materialized (
        -- the document's mentions, judged as everywhere (exo_private.entity_mentions)
        select m.entity_id, m.chunk_id, e.name, e.type,
               (select c.subject from closed c where c.key = e.canonical_key order by c.subject limit 1)
                   as itself,
               m.withheld
        from exo_private.entity_mentions(
                 array(select distinct x.entity_id from exo_private.mentions x where x.document_id = doc.id),
                 bridge, doc.id) m
        join exo_private.entities e on e.id = m.entity_id
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
comment on function exo.document(text, text[], timestamptz) is
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
    'document''s path withheld), and when as_of is given and the document was not written by its '
    'day (an undated one neither; a charged document answers as above whatever as_of).';
