-- Ingestion inside the database: plan (route, band, chunk, mark) and apply,
-- quarantine review, the deference list, links and rebuild.
-- The Python side only walks files, extracts text and calls process_document.

-- exo_private.plan_document: route, band, chunk spans with deference marks, windows.
create or replace function exo_private.plan_document(
    doc jsonb, body text, settings jsonb, subjects jsonb, today date
)
returns jsonb
language plpython3u stable
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include document_plan
import datetime
import json

return json.dumps(
    plan(
        json.loads(doc),
        body,
        json.loads(settings),
        json.loads(subjects),
        datetime.date.fromisoformat(today),
        load_router(plpy, SD),
    )
)
$$;
comment on function exo_private.plan_document(jsonb, text, jsonb, jsonb, date) is
    'Plan one document (plpy/document_plan.py): routing decision (with the learned router as last '
    'trained, cached per session), band, chunk spans with charged marks, windows.';

-- exo_private.ingest_settings: the settings plan_document reads, plus the workspace names.
create or replace function exo_private.ingest_settings()
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select jsonb_object_agg(key, value)
           || jsonb_build_object('workspaces', (select jsonb_agg(name order by name) from workspaces))
    from settings
    where key like any (array['chunking.%', 'routing.%', 'banding.%', 'deference.%'])
$$;
comment on function exo_private.ingest_settings() is
    'The chunking, routing, banding and deference settings as one jsonb, with the workspace names.';

-- exo_private.deference_list: the deferred subjects as plan_document takes them.
create or replace function exo_private.deference_list()
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select coalesce(jsonb_agg(jsonb_build_object('subject', subject, 'aliases', aliases) order by subject), '[]')
    from deferred_subjects
$$;
comment on function exo_private.deference_list() is 'The deferred subjects with their aliases, as jsonb.';

-- exo_private.plan_input: a document as plan_document takes it.
create or replace function exo_private.plan_input(doc exo_private.documents)
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select jsonb_build_object(
        'path', doc.path, 'title', doc.title, 'frontmatter', doc.frontmatter, 'review', doc.review,
        'forced_workspace', (select s.workspace from exo_private.sources s where s.id = doc.source_id),
        'mtime_ns', doc.mtime_ns, 'metadata', doc.metadata)
$$;
comment on function exo_private.plan_input(exo_private.documents) is
    'A document''s ledger row as plan_document takes it: path, title, frontmatter, review, '
    'forced_workspace (its source''s --workspace), mtime_ns and metadata.';

-- exo_private.clear_derived: remove the chunks and windows derived from one document.
create or replace function exo_private.clear_derived(doc_id bigint)
returns void
language sql
security invoker
set search_path = exo_private, pg_temp
as $$
    delete from exo_private.chunks c where c.document_id = doc_id;
    delete from exo_private.extraction_windows w where w.document_id = doc_id;
$$;
comment on function exo_private.clear_derived(bigint) is
    'Delete a document''s chunks and extraction windows (before re-chunking, deleting or rejecting it).';

-- exo_private.document_search_title: the title BM25 reads with every chunk of a document
-- (chunks.document_title, exo_private.bm25_chunk_text): the one its source gave it. A conversation's
-- document is titled by its people where the export gave no title (plpy/cut_windows.py title_of);
-- those names are its lines' already, and "Chat with" is no word of what it says.
create or replace function exo_private.document_search_title(document_id bigint) returns text
language sql stable
return (select coalesce(cc.title, case when d.conversation_id is null then d.title end)
        from exo_private.documents d
        left join exo_private.chat_conversations cc on cc.id = d.conversation_id
        where d.id = document_search_title.document_id);
comment on function exo_private.document_search_title(bigint) is
    'The title its source gave a document (a file''s, a conversation''s own; null for a conversation '
    'without one), which BM25 reads with each of its chunks (chunks.document_title).';

-- exo_private.chunk_takes_title / document_gives_title: chunks.document_title kept, on every path
-- that writes a chunk (ingest, chat windows, a bench's COPY) and whenever a title changes.
-- No `set search_path` on the first, unlike the other triggers: it runs for every chunk written,
-- and the clause's save and restore of the setting was 40% of its cost (about 14 of 38 us a row
-- over 50,000 inserted chunks); every name in it is schema-qualified.
create or replace function exo_private.chunk_takes_title()
returns trigger
language plpgsql
security invoker
as $$
begin
    new.document_title := exo_private.document_search_title(new.document_id);
    return new;
end
$$;
comment on function exo_private.chunk_takes_title() is
    'Trigger: a chunk inserted takes its document''s title (exo_private.document_search_title).';

create or replace function exo_private.document_gives_title()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    title text := exo_private.document_search_title(new.id);
begin
    update exo_private.chunks c set document_title = title
    where c.document_id = new.id and c.document_title is distinct from title;
    return null;
end
$$;
comment on function exo_private.document_gives_title() is
    'Trigger: a document whose title changed gives it to its chunks (chunks.document_title).';

create or replace trigger chunks_take_title
    before insert on exo_private.chunks
    for each row execute function exo_private.chunk_takes_title();
create or replace trigger documents_give_title
    after update of title on exo_private.documents
    for each row when (old.title is distinct from new.title)
    execute function exo_private.document_gives_title();

-- exo_private.process_document: route, band and chunk one extracted document.
create or replace function exo_private.process_document(doc_id bigint)
returns exo_private.document_stage
language plpgsql
security invoker
set search_path = exo_private, public, pg_temp
as $$
declare
    doc exo_private.documents;
    body text;
    encoded bytea;
    planned jsonb;
    ws text;
    chunk_ids bigint[];
    window_ids bigint[];
    queued int;
begin
    select * into doc from exo_private.documents d where d.id = doc_id for update;
    if not found then
        raise exception 'document % does not exist', doc_id;
    end if;
    if doc.conversation_id is not null then
        raise exception 'document % (%) is a conversation document: it has no file text to process', doc_id, doc.path
            using hint = 'exo_private.window_conversation re-windows it from its messages';
    end if;
    if doc.stage not in ('extracted', 'routed', 'quarantined', 'chunked', 'embedded', 'graphed') then
        raise exception 'document % (%) is at stage %, which has no text to process', doc_id, doc.path, doc.stage;
    end if;
    select c.body into body from exo_private.text_cache c where c.sha256 = doc.sha256;
    if body is null then
        raise exception 'document % (%) has no cached text for sha256 %', doc_id, doc.path, doc.sha256;
    end if;

    planned := exo_private.plan_document(
        exo_private.plan_input(doc), body, exo_private.ingest_settings(), exo_private.deference_list(),
        current_date);

    perform exo_private.clear_derived(doc_id);
    -- Pieces are cut from the UTF-8 bytes by byte offset: substr on text walks every
    -- character before its start, which made a document cost the square of its size.
    encoded := convert_to(body, 'UTF8');
    body := null;
    ws := planned -> 'route' ->> 'workspace';
    if ws is null then
        update exo_private.documents d
           set stage = 'quarantined', route = planned -> 'route', workspace = null, band = null,
               band_source = null, band_reason = null, stage_changed_at = now()
         where d.id = doc_id;
        return 'quarantined'::exo_private.document_stage;
    end if;

    update exo_private.documents d
       set workspace = ws,
           route = planned -> 'route',
           canonical = (planned ->> 'canonical')::boolean,
           band = (planned -> 'band' ->> 'band')::exo_private.band,
           band_source = planned -> 'band' ->> 'source',
           band_reason = planned -> 'band' ->> 'reason',
           written_at = (planned -> 'band' ->> 'written_at')::date
     where d.id = doc_id;

    with inserted as (
        insert into exo_private.chunks
            (workspace, document_id, ordinal, body, char_start, char_end, band, written_at,
             charged_subjects, charged)
        select ws, doc_id, (c.ordinality - 1)::int,
               convert_from(substring(encoded from (c.value ->> 'byte_start')::int + 1
                                      for (c.value ->> 'byte_end')::int - (c.value ->> 'byte_start')::int), 'UTF8'),
               (c.value ->> 'start')::int, (c.value ->> 'end')::int,
               (planned -> 'band' ->> 'band')::exo_private.band,
               (planned -> 'band' ->> 'written_at')::date,
               array(select m ->> 'subject' from jsonb_array_elements(c.value -> 'charged') m),
               c.value -> 'charged'
        from jsonb_array_elements(planned -> 'chunks') with ordinality c
        returning id
    )
    select array_agg(id) into chunk_ids from inserted;

    with inserted as (
        insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end)
        select doc_id, ws, (w.ordinality - 1)::int,
               convert_from(substring(encoded from (w.value ->> 'byte_start')::int + 1
                                      for (w.value ->> 'byte_end')::int - (w.value ->> 'byte_start')::int), 'UTF8'),
               (w.value ->> 'start')::int, (w.value ->> 'end')::int
        from jsonb_array_elements(planned -> 'windows') with ordinality w
        returning id
    )
    select array_agg(id) into window_ids from inserted;

    -- What the document declares (frontmatter, a canonical facts file), sourced to its new chunks.
    perform exo_private.record_declared_facts(doc_id);
    -- Who its headers and frontmatter name, as graph rows of origin 'structure', in its new first window.
    perform exo_private.link_structure(array[doc_id]);

    -- The queues are tables: the jobs commit (or roll back) with the chunks.
    if chunk_ids is not null then
        perform pgmq.send_batch('embed',
            array(select jsonb_build_object('chunk_id', x, 'workspace', ws) from unnest(chunk_ids) x));
    end if;
    -- A long file (a 5 MB log) queues its first extraction.max_windows_per_document windows only:
    -- the rest are searchable (their chunks are embedded) but not read for the graph, and the
    -- document says so (metadata.extraction_capped, which the ingest summary names).
    queued := least(cardinality(window_ids),
                    (exo.setting('extraction.max_windows_per_document') #>> '{}')::int);
    if window_ids is not null then
        perform pgmq.send_batch('extract',
            array(select jsonb_build_object('window_id', x, 'workspace', ws) from unnest(window_ids[1:queued]) x));
    end if;

    update exo_private.documents d
       set stage = 'chunked', error_class = null, error_message = null, stage_changed_at = now(),
           metadata = case when queued < cardinality(window_ids)
                           then d.metadata || jsonb_build_object('extraction_capped', jsonb_build_object(
                                    'windows', cardinality(window_ids), 'queued', queued))
                           else d.metadata - 'extraction_capped' end
     where d.id = doc_id;
    return 'chunked'::exo_private.document_stage;
end
$$;
comment on function exo_private.process_document(bigint) is
    'Route, band and chunk one extracted document from the text cache (pieces cut by byte offsets, '
    'so the cost is linear in its size); enqueues embed and extract jobs.';

-- exo_private.forget_document: a file is gone; drop what was derived from it.
create or replace function exo_private.forget_document(doc_id bigint)
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    perform exo_private.clear_derived(doc_id);
    delete from exo_private.document_links l where l.source_document = doc_id;
    update exo_private.documents d
       set stage = 'deleted', error_class = null, error_message = null, stage_changed_at = now()
     where d.id = doc_id;
end
$$;
comment on function exo_private.forget_document(bigint) is
    'Mark a document deleted and remove its chunks, windows and outgoing links.';

-- exo_private.resolve_links: point [[wiki links]] at the documents they name.
create or replace function exo_private.resolve_links(source int)
returns int
language sql
security invoker
set search_path = exo_private, pg_temp
as $$
    with names as (
        select d.id, lower(regexp_replace(d.path, '^.*/|\.[^./]*$', '', 'g')) as stem, lower(d.title) as title
        from exo_private.documents d
        where d.source_id = source and d.stage <> 'deleted'
    ), resolved as (
        update exo_private.document_links l
           set target_document = (
               select n.id from names n
               where n.stem = lower(regexp_replace(l.target, '^.*/|\.md$', '', 'g')) or n.title = lower(l.target)
               order by n.stem = lower(regexp_replace(l.target, '^.*/|\.md$', '', 'g')) desc, n.id
               limit 1)
         where l.source_document in (select id from names)
        returning l.target_document
    )
    select count(*)::int from resolved where target_document is not null
$$;
comment on function exo_private.resolve_links(int) is
    'Resolve a source''s wiki links to documents by file name or title; returns how many resolved.';

-- exo_private.review_document: a person's quarantine decision.
create or replace function exo_private.review_document(doc_id bigint, decision text, target_workspace text default null)
returns exo_private.document_stage
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc exo_private.documents;
    chosen text;
begin
    select * into doc from exo_private.documents d where d.id = doc_id for update;
    if not found then
        raise exception 'document % does not exist', doc_id;
    end if;
    if decision not in ('approve', 'reassign', 'reject') then
        raise exception 'decision must be approve, reassign or reject, not %', decision;
    end if;
    if decision = 'reject' then
        update exo_private.documents d
           set stage = 'skipped', error_class = 'rejected', error_message = 'rejected in quarantine review',
               review = jsonb_build_object('decision', 'rejected', 'at', now()), stage_changed_at = now()
         where d.id = doc_id;
        perform exo_private.clear_derived(doc_id);
        return 'skipped'::exo_private.document_stage;
    end if;
    if decision = 'approve' then
        if doc.stage <> 'quarantined' then
            raise exception 'document % (%) is not in quarantine (stage %)', doc_id, doc.path, doc.stage;
        end if;
        chosen := doc.route -> 'candidates' -> 0 ->> 'workspace';
        if chosen is null then
            raise exception 'document % (%) has no candidate workspace; use reassign', doc_id, doc.path;
        end if;
    else
        chosen := target_workspace;
        if not exists (select 1 from exo_private.workspaces w where w.name = chosen) then
            raise exception 'workspace % does not exist', coalesce(chosen, '(null)');
        end if;
    end if;
    update exo_private.documents d
       set review = jsonb_build_object('decision', case decision when 'approve' then 'approved' else 'reassigned' end,
                                       'workspace', chosen, 'at', now()),
           stage = case when d.error_class = 'rejected' then 'extracted'::exo_private.document_stage else d.stage end,
           error_class = case when d.error_class = 'rejected' then null else d.error_class end,
           error_message = case when d.error_class = 'rejected' then null else d.error_message end
     where d.id = doc_id;
    return exo_private.process_document(doc_id);
end
$$;
comment on function exo_private.review_document(bigint, text, text) is
    'Quarantine review: approve (top candidate), reassign to a workspace, or reject (skipped).';

-- exo.quarantine: documents waiting for a person's routing decision.
-- A charged document's path, title and reasons (which quote its words) are withheld, as
-- exo.document withholds them: its frontmatter charges a subject, or every chunk it has is
-- charged (exo_private.closed_documents with no bridge, which a view cannot call: the functions
-- a view calls run as its caller, who may not read the tables). The owner reviews the whole
-- quarantine with `exo quarantine list`, as the writer.
create or replace view exo.quarantine as
    select d.id,
           case when not c.closed then d.path end as path,
           case when not c.closed then d.title end as title,
           d.route -> 'candidates' as candidates,
           (d.route ->> 'confidence')::real as confidence,
           case when not c.closed then d.route -> 'reasons' end as reasons,
           d.stage_changed_at as quarantined_at,
           c.closed as withheld
    from exo_private.documents d
    cross join lateral (
        select coalesce(jsonb_typeof(d.frontmatter -> 'charged') = 'array'
                            and jsonb_array_length(d.frontmatter -> 'charged') > 0
                        or jsonb_typeof(d.frontmatter -> 'charged') = 'string'
                            and btrim(d.frontmatter ->> 'charged') <> '', false)
               or exists (select 1 from exo_private.chunks x where x.document_id = d.id)
                  and not exists (select 1 from exo_private.chunks x
                                  where x.document_id = d.id and x.charged_subjects = '{}') as closed
    ) c
    where d.stage = 'quarantined';
comment on view exo.quarantine is
    'Documents the router was not confident about, with candidate workspaces, scores and reasons; '
    'withheld is true for a document charged for a deferred subject, whose path, title and reasons '
    'are then null (bridging does not apply: review it with exo quarantine list).';

-- exo_private.remark_charged: recompute the deference marks of every chunk and message (after the list changes).
create or replace function exo_private.remark_charged()
returns int
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include remark_charged
return run(plpy)
$$;
comment on function exo_private.remark_charged() is
    'Recompute the deference marks of every chunk (and every chat message: mark_messages; a chat '
    'window''s chunk gets the union of its messages'' marks) in place after the list changed (text, '
    'ids, vectors and mentions stay), then queues the capsules that are no longer fresh; returns how '
    'many chunks changed.';

-- exo_private.defer_subject: add or change a deferred subject; re-marks chunks and messages.
create or replace function exo_private.defer_subject(subject_name text, subject_aliases text[] default '{}', why text default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if subject_name is null or btrim(subject_name) = '' then
        raise exception 'a deferred subject needs a name';
    end if;
    insert into exo_private.deferred_subjects (subject, aliases, note)
    values (btrim(subject_name), coalesce(subject_aliases, '{}'), why)
    on conflict (subject) do update set aliases = excluded.aliases, note = coalesce(excluded.note, deferred_subjects.note);
    return exo_private.remark_charged();
end
$$;
comment on function exo_private.defer_subject(text, text[], text) is
    'Add (or update) a deferred subject with aliases and re-mark all chunks and chat messages; returns '
    'chunks re-marked.';

-- exo_private.undefer_subject: remove a deferred subject; re-marks chunks and messages.
create or replace function exo_private.undefer_subject(subject_name text)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    delete from exo_private.deferred_subjects s where s.subject = subject_name;
    if not found then
        raise exception '% is not a deferred subject', subject_name;
    end if;
    return exo_private.remark_charged();
end
$$;
comment on function exo_private.undefer_subject(text) is
    'Remove a deferred subject and re-mark all chunks and chat messages; returns chunks re-marked.';

-- exo_private.rebuild: re-plan documents from the text cache (one workspace, or all).
create or replace function exo_private.rebuild(only_workspace text default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, public, pg_temp
as $$
declare
    doc record;
    done int := 0;
begin
    if only_workspace is not null
       and not exists (select 1 from exo_private.workspaces w where w.name = only_workspace) then
        raise exception 'workspace % does not exist', only_workspace;
    end if;
    for doc in
        select d.id, d.conversation_id, d.workspace from exo_private.documents d
        where d.stage in ('extracted', 'routed', 'quarantined', 'chunked', 'embedded', 'graphed')
          and (only_workspace is null or d.workspace = only_workspace)
        order by d.id
    loop
        if doc.conversation_id is null then
            perform exo_private.process_document(doc.id);
        else
            -- A conversation document is re-windowed from its messages (unchanged windows stay).
            perform exo_private.window_conversation(doc.conversation_id, doc.workspace);
        end if;
        done := done + 1;
    end loop;
    return done;
end
$$;
comment on function exo_private.rebuild(text) is
    'Re-route, re-band and re-chunk documents from the text cache, and re-window conversation '
    'documents from their messages (window_conversation); returns how many were processed.';

-- exo.deferred_subjects: the deference list with how much material each subject has.
create or replace view exo.deferred_subjects as
    select s.subject, s.aliases,
           (select count(*) from exo_private.chunks c where s.subject = any (c.charged_subjects)) as charged_chunks,
           (select count(*) from exo_private.chat_messages m
            where m.charged_subjects <> '{}' and m.charged_subjects @> array[s.subject]) as charged_messages
    from exo_private.deferred_subjects s;
comment on view exo.deferred_subjects is
    'Subjects that never surface by accident, their aliases and how many chunks and chat messages are '
    'charged for each (names and counts only, never the text). Changes go through '
    'exo_private.defer_subject / undefer_subject.';
