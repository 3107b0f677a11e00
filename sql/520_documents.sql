-- Documents for agents: exo.document, one ledger row and the entities extracted from it; a
-- charged document's title and path are withheld with its text (sql/450_deference.sql).

-- exo_private.open_documents: of the documents a path names, those a caller may be told of.
create or replace function exo_private.open_documents(ids bigint[], bridge text[])
returns bigint[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A charged document's path is withheld with its text, so by its path (or a suffix of it) it
    -- is no document: an answer would tell, one guess a call, which paths withheld documents
    -- have. By its id, which exo.documents lists, it is answered as withheld.
    select array_agg(i.id order by i.ord)
    from unnest(ids) with ordinality i (id, ord)
    where i.id not in (select k.document_id from exo_private.closed_documents(ids, bridge) k)
$$;
comment on function exo_private.open_documents(bigint[], text[]) is
    'The given documents (in their order; null if none) that are not charged for a subject the '
    'bridge leaves closed (exo_private.closed_documents): those exo.document finds by a path.';

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
    keys text[] := exo_private.released_keys(bridge);
    charged_by_subject jsonb;
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
        doc_ids := exo_private.open_documents(doc_ids, bridge);
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
        doc_ids := exo_private.open_documents(doc_ids, bridge);
    end if;
    if doc_ids is null then
        perform exo_private.invalid_argument(
            format('document %s names no document (by id, path or path suffix)', exo_private.quoted(document)),
            'exo.search(query) finds documents by their content, title or file name');
    end if;
    if cardinality(doc_ids) > 1 then
        perform exo_private.invalid_argument(
            format('document %s matches %s documents: %s', exo_private.quoted(document), cardinality(doc_ids),
                   (select string_agg(d.id || ' ' || d.path, ', ' order by d.path, d.id)
                    from (select x.id, x.path from exo_private.documents x where x.id = any (doc_ids)
                          order by x.path, x.id limit 5) d)
                   || case when cardinality(doc_ids) > 5 then ', ...' else '' end),
            'name one by its id or by a longer path');
    end if;
    select * into doc from exo_private.documents d where d.id = doc_ids[1];
    -- the document's chunks charged for each subject the bridge leaves closed: what its hints
    -- count (what the marks decide, never which entities withheld text names)
    select coalesce(jsonb_object_agg(x.subject, x.chunks), '{}') into charged_by_subject
    from (select s.subject, count(*) as chunks
          from exo_private.chunks c
          cross join lateral unnest(exo_private.unreleased(c.charged_subjects, keys)) s (subject)
          where c.workspace = doc.workspace and c.document_id = doc.id and c.charged_subjects <> '{}'
          group by s.subject) x;
    select k.withheld into held_back from exo_private.closed_documents(array[doc.id], bridge) k;
    if held_back is not null then
        -- A charged document: that it exists, never its title, path or what it says.
        return jsonb_build_object(
            'document_id', doc.id, 'workspace', doc.workspace, 'stage', doc.stage::text,
            'withheld', true,
            'hints', (
                select jsonb_agg(jsonb_build_object(
                           'subject', s.subject, 'workspace', doc.workspace,
                           'chunks', coalesce((charged_by_subject ->> s.subject)::bigint, 0),
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
        -- per closed subject, the document's chunks charged for it, and each one its open text names
        select coalesce(c.key, n.subject) as subject, coalesce(c.value::bigint, 0) as chunks
        from jsonb_each_text(charged_by_subject) c
        full join (select distinct m.itself as subject from ms m where m.itself is not null and m.withheld = '{}') n
          on n.subject = c.key
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
                       'subject', h.subject, 'workspace', doc.workspace, 'chunks', h.chunks,
                       'how', exo_private.hint_how(h.subject))
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
    'subject; a hint per such subject says how many of the document''s chunks are charged for it '
    '(0 for one its open text names) {subject, workspace, chunks, how}. A charged document (its '
    'frontmatter charges a deferred subject, or every chunk is withheld, as when its title or path '
    'names the subject near a cue) gives only {document_id, workspace, stage, withheld: true, hints '
    '{subject, workspace, chunks, how}} unless bridge names the subject: no title, no path; by a '
    'path or a suffix it is no document (its path is withheld). Raises invalid_parameter_value when '
    'nothing matches, or when several do (listing up to 5), and when as_of is given and the '
    'document was not written by its day (an undated one neither; a charged document answers as '
    'above whatever as_of).';

-- exo_private.declared_workspace: the workspace a document's frontmatter names, as routing reads it.
create or replace function exo_private.declared_workspace(frontmatter jsonb)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select pg_catalog.lower(pg_catalog.btrim(frontmatter ->> 'workspace'))
$$;
comment on function exo_private.declared_workspace(jsonb) is
    'The workspace a frontmatter''s workspace: key names, trimmed and lower-cased (null: none).';

-- exo_private.large_text_allowed: whether ingest.large_text_allowed names a plain-text file.
create or replace function exo_private.large_text_allowed(source int, file_path text)
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select exists (
        select 1
        from exo_private.settings s
        cross join lateral jsonb_array_elements_text(s.value) g
        join exo_private.sources r on r.id = source
        where s.key = 'ingest.large_text_allowed'
          and (r.root || '/' || file_path like exo_private.glob_like(g)
               or file_path like exo_private.glob_like(g)))
$$;
comment on function exo_private.large_text_allowed(int, text) is
    'Whether a glob of ingest.large_text_allowed matches the file (its path under the source''s root, '
    'or root/path): exo ingest reads it whatever its size against ingest.max_text_bytes.';

-- exo_private.shell_word: a string as one word of a shell command line.
create or replace function exo_private.shell_word(word text)
returns text
language sql immutable strict
security invoker
set search_path = exo_private, pg_temp
as $$
    select case when word ~ '^[A-Za-z0-9_./:=@%+,-]+$' then word
                else '''' || replace(word, '''', '''"''"''') || '''' end
$$;
comment on function exo_private.shell_word(text) is
    'A string as one word of a POSIX shell command line (single-quoted unless it needs no quotes), '
    'for a fix a person copies.';

-- exo_private.document_why: why a document stands where it does, in words, and what fixes it.
create or replace function exo_private.document_why(
    doc exo_private.documents, out code text, out kind text, out reason text, out fix text
)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    best text := doc.route -> 'candidates' -> 0 ->> 'workspace';
    best_score float8 := (doc.route -> 'candidates' -> 0 ->> 'score')::float8;
    existing text := (select string_agg(w.name, ', ' order by w.name) from exo_private.workspaces w);
    review text := case when best is not null and coalesce(best_score, 0) > 0
                        then format('exo quarantine approve %s (to %s) or ', doc.id, best) else '' end
                   || format('exo quarantine reassign %s WORKSPACE (one of %s)', doc.id, existing);
    declared text := exo_private.declared_workspace(doc.frontmatter);
begin
    if doc.stage = 'quarantined' then
        code := coalesce(doc.route ->> 'doubt',
                         case when doc.route ->> 'method' = 'learned' then 'learned_unsure'
                              when coalesce((doc.route ->> 'confidence')::float8, 0) = 0 then 'no_keywords'
                              else 'keywords_unsure' end);
        case code
            when 'unknown_workspace' then
                kind := 'frontmatter names a workspace that does not exist';
                reason := format('frontmatter names workspace %s, which does not exist',
                                 pg_catalog.quote_literal(declared));
                fix := format('exo workspace add %s creates it and routes it there; or change workspace: '
                              'in its frontmatter to one of %s and ingest again, or exo quarantine '
                              'reassign %s WORKSPACE', coalesce(declared, 'NAME'), existing, doc.id);
            when 'learned_unsure' then
                kind := 'the trained router is unsure';
                reason := format('the trained router is unsure: best %s at %s, under routing.learned_threshold %s',
                                 best, round(best_score::numeric, 3),
                                 (select s.value #>> '{}' from exo_private.settings s
                                  where s.key = 'routing.learned_threshold'));
                fix := review;
            when 'keywords_unsure' then
                kind := 'the keyword lists are unsure';
                reason := format('the keyword lists are unsure: best %s at %s, under routing.confidence_threshold %s',
                                 best, (doc.route ->> 'confidence'),
                                 (select s.value #>> '{}' from exo_private.settings s
                                  where s.key = 'routing.confidence_threshold'));
                fix := review;
            else
                kind := 'no rule placed it and no workspace keywords were found';
                reason := kind;
                fix := review;
        end case;
        -- quarantined before routing.default_workspace was set (or with it missing)
        reason := reason || coalesce('; ' || (select r from jsonb_array_elements_text(doc.route -> 'reasons') r
                                              where r like 'the default workspace %' limit 1), '');
        return;
    end if;
    if doc.stage in ('failed', 'skipped') then
        code := coalesce(doc.error_class, doc.stage::text);
        select x.kind, x.fix into kind, fix
        from (values
            ('corrupt', 'damaged, or not what its extension says',
             'open it in its program and save it again (or export it as PDF or text), then exo ingest again'),
            ('encrypted', 'password-protected',
             'save a copy without the password, then exo ingest again'),
            ('zip_bomb', 'expands too much to open safely', 'nothing to do (extract its text some other way)'),
            ('binary', 'binary content under a text extension',
             'nothing to do if it is not text; otherwise give it the extension of its format'),
            ('too_large', 'over the size or memory limit',
             'raise ingest.max_file_bytes or ingest.extract_memory_bytes in exo_private.settings, or split the file'),
            ('timeout', 'reading it took too long',
             'raise ingest.file_timeout_s in exo_private.settings, then exo ingest again'),
            ('unreadable', 'could not be read',
             'check that you may read it (permissions, a file still downloading), then exo ingest again'),
            ('crashed', 'the extractor crashed on it', 'exo ingest again; if it stays, the file is the cause'),
            ('ocr_timeout', 'OCR took too long on the scan', 'exo worker retry-failed --queue ocr'),
            ('ocr_failed', 'OCR could not read the scan', 'exo worker retry-failed --queue ocr'),
            ('ocr_unavailable', 'OCR is not available',
             'exo doctor says what is missing; then exo worker retry-failed --queue ocr'),
            ('empty', 'no text in it', 'nothing to do'),
            ('junk', 'a large data file (delimiters, not prose)', 'nothing to do'),
            ('large_text', 'a plain-text file larger than prose is (a log or a dump)', null),
            ('rejected', 'you rejected it in quarantine review', 'nothing to do'),
            ('excluded_sensitive', 'its name says it may hold a secret: never read',
             'nothing to do; rename it if it holds no secret'),
            ('hidden', 'a hidden file', 'nothing to do'),
            ('ignored', 'the source''s .exoignore leaves it out', 'nothing to do; edit .exoignore to include it'),
            ('unsupported_extension', 'a format exocortex does not read',
             'nothing to do; to include it, convert it to PDF, Markdown or text'),
            ('symlink', 'a symbolic link (never followed)', 'ingest what it points to as its own folder'),
            ('special_file', 'not a regular file', 'nothing to do'),
            ('path_too_long', 'its path is longer than the system opens', 'move it to a shorter path')
        ) x (error_class, kind, fix)
        where x.error_class = code;
        if code = 'large_text' then
            fix := format('exo ingest %s --allow-large %s reads it and allows it from then on '
                          '(ingest.large_text_allowed); or raise ingest.max_text_bytes in exo_private.settings '
                          'and exo ingest again',
                          (select exo_private.shell_word(s.root) from exo_private.sources s
                           where s.id = doc.source_id),
                          exo_private.shell_word(doc.path));
        end if;
        if kind is null then
            kind := format('an error while processing it (%s)', code);
            fix := 'exo ingest again; if it stays, report it with this message';
        end if;
        reason := kind || coalesce(': ' || doc.error_message, '');
        return;
    end if;
    code := coalesce(doc.route ->> 'method', doc.stage::text);
    if doc.stage in ('chunked', 'embedded', 'graphed') then
        kind := format('in %s by %s', doc.workspace,
                       case code when 'review' then 'your review'
                                 when 'frontmatter' then 'its frontmatter'
                                 when 'forced' then 'exo ingest --workspace'
                                 when 'folder' then 'a folder rule'
                                 when 'classifier' then 'the keyword lists'
                                 when 'learned' then 'the learned router'
                                 when 'default' then 'default: the router had not been trained yet'
                                 else code end);
        fix := case when code = 'default' then
                   'to place it elsewhere: workspace: in its frontmatter, exo ingest --workspace, or a folder '
                   'rule (routing.folder_rules); then exo ingest (or exo rebuild). Once the router has learned '
                   'from two workspaces, exo quarantine learn moves it where it is sure of' end;
    elsif doc.stage = 'ocr_pending' then
        kind := 'a scan waiting for OCR';
        fix := 'exo worker (or exo worker --once --queue ocr) reads it';
    elsif doc.stage = 'deleted' then
        kind := 'the file is gone';
    else
        kind := 'being processed';
        fix := 'exo ingest again if it stays here';
    end if;
    reason := kind;
end
$$;
comment on function exo_private.document_why(exo_private.documents) is
    'Why a document stands where it does: code (a quarantine doubt, an error class, or a route '
    'method), kind (the reason in words, without the document''s own detail: for grouping), reason '
    '(in words, with the detail: the error message, the router''s best candidate) and fix (what '
    'resolves it, a command where one does; null when nothing needs doing).';

-- exo.documents: documents by stage and path, each with why it stands there and the fix.
create or replace function exo.documents(
    stages text[] default null, path_glob text default null, max_results int default 200,
    bridge text[] default '{}'
)
returns table (document_id bigint, path text, title text, stage text, workspace text, code text,
               reason text, fix text, withheld boolean)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    n int := least(greatest(coalesce(max_results, 200), 1), 1000);
    pattern text := exo_private.glob_like(path_glob);
    known text[] := array(select pg_catalog.unnest(pg_catalog.enum_range(null::exo_private.document_stage))::text);
    bad text := (select s from pg_catalog.unnest(stages) s where s is null or not s = any (known) limit 1);
    ids bigint[];
begin
    if bad is not null or array_position(stages, null) is not null then
        perform exo_private.invalid_argument(
            format('stage must be one of %s, not %s', array_to_string(known, ', '), exo_private.quoted(bad)));
    end if;
    if path_glob = '' then
        perform exo_private.invalid_argument('path_glob must not be empty');
    end if;
    -- A withheld document's path is never matched by a glob ("*walter*" would tell that a
    -- charged document's path holds the name): the glob's matches are judged before the cut.
    with matched as materialized (
        select d.id, d.path,
               array_position(array['failed', 'quarantined', 'skipped', 'ocr_pending'], d.stage::text) as rank
        from exo_private.documents d
        join exo_private.sources s on s.id = d.source_id
        where d.conversation_id is null
          and (case when stages is null then d.stage <> 'deleted' else d.stage::text = any (stages) end)
          and (pattern is null or d.path like pattern or s.root || '/' || d.path like pattern)
    ), hidden as materialized (
        select k.document_id from exo_private.closed_documents(
            case when pattern is null then '{}'::bigint[] else array(select m.id from matched m) end, bridge) k
    )
    select array_agg(x.id order by x.rank, x.path, x.id) into ids
    from (select m.id, m.path, m.rank
          from matched m
          where m.id not in (select h.document_id from hidden h)
          order by m.rank nulls last, m.path, m.id
          limit n) x;
    return query
        with closed as materialized (
            select k.document_id, k.withheld from exo_private.closed_documents(ids, bridge) k
        )
        select d.id,
               case when c.withheld is null then d.path end,
               case when c.withheld is null then d.title end,
               d.stage::text, d.workspace, w.code,
               -- a charged document's reason in general words: its own detail may quote it
               case when c.withheld is null then w.reason else w.kind end,
               -- and no fix that names its path (a large file's: exo ingest ROOT --allow-large PATH)
               case when c.withheld is null then w.fix
                    when w.fix is not null then 'bridge its subject to see the fix' end,
               c.withheld is not null
        from pg_catalog.unnest(ids) with ordinality u (id, ord)
        join exo_private.documents d on d.id = u.id
        left join closed c on c.document_id = d.id
        cross join lateral exo_private.document_why(d) w
        order by u.ord;
end
$$;
comment on function exo.documents(text[], text, int, text[]) is
    'The documents of the ledger (files; chat conversations are not listed) with why each stands '
    'where it does and what fixes it: document_id, path, title, stage, workspace, code (a quarantine '
    'doubt such as unknown_workspace or learned_unsure, an error class such as corrupt or empty, or '
    'the route method), reason (in words), fix (the command or change that resolves it; null when '
    'nothing needs doing) and withheld. stages: only these (failed, skipped, quarantined, ...; '
    'default every stage but deleted); path_glob: * any characters, ? one, on the path under its '
    'source root or on root/path; at most max_results rows (clamped to 1..1000), failed first, then '
    'quarantined, skipped, ocr_pending, the rest, each by path. Care: a charged document (as for '
    'exo.document) shows no path or title, and its reason in general words, unless bridge names the '
    'subject; path_glob never matches one. Raises invalid_parameter_value for an unknown stage or an empty path_glob.';
