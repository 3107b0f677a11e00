-- OCR of scanned PDFs. Ingest puts a PDF under the text threshold at stage ocr_pending and
-- queues it (await_ocr); the worker reads the file page by page with Tesseract
-- (exocortex.ingest.ocr), then either stores the text in the text cache by content hash
-- (store_ocr_text) and lets each waiting document continue through routing, banding and
-- chunking like an extracted one, or ends the waiting documents failed (end_ocr). The ocr
-- queue's messages are {document_id}; migration 0024 creates the queue and its settings.

-- exo_private.await_ocr: a document waits for OCR: stage ocr_pending and a message on the ocr queue.
create or replace function exo_private.await_ocr(p_document_id bigint)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    update exo_private.documents d
       set stage = 'ocr_pending', error_class = null, error_message = null, stage_changed_at = now()
     where d.id = p_document_id;
    if not found then
        perform exo_private.invalid_argument(format('p_document_id: document %s does not exist', p_document_id));
    end if;
    return pgmq.send('ocr', jsonb_build_object('document_id', p_document_id));
end
$$;
comment on function exo_private.await_ocr(bigint) is
    'Put a document at stage ocr_pending (its text is too thin: a scan) and queue it for OCR '
    '(message {document_id} on the ocr queue); returns the message id.';

-- exo_private.ocr_job: what the worker needs to read one queued document, if it still waits.
create or replace function exo_private.ocr_job(p_document_id bigint)
returns table (root text, path_bytes bytea, sha256 text, pages int)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select s.root, d.path_bytes, d.sha256,
           case when jsonb_typeof(t.metadata -> 'pages') = 'number' then (t.metadata ->> 'pages')::int end
    from exo_private.documents d
    join exo_private.sources s on s.id = d.source_id
    join exo_private.text_cache t on t.sha256 = d.sha256
    where d.id = p_document_id and d.stage = 'ocr_pending'
$$;
comment on function exo_private.ocr_job(bigint) is
    'The source root, raw path, sha256 and page count (from extraction) of a document '
    'that waits at ocr_pending; no row when it no longer waits (read already, changed or deleted).';

-- exo_private.store_ocr_text: the text OCR read joins the text cache; the documents it frees.
create or replace function exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb)
returns table (document_id bigint, path text, metadata jsonb)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
#variable_conflict use_column
begin
    if p_body is null or btrim(p_body) = '' then
        perform exo_private.invalid_argument('p_body: OCR text must not be empty');
    end if;
    update exo_private.text_cache t
       set body = p_body, needs_ocr = false, extracted_at = now(),
           metadata = t.metadata || jsonb_build_object('ocr', coalesce(p_ocr, '{}'))
     where t.sha256 = p_sha256;
    if not found then
        perform exo_private.invalid_argument(
            format('p_sha256: no cached text for sha256 %s', exo_private.quoted(p_sha256)));
    end if;
    -- Locked, so that another reader of the same content cannot continue them twice.
    return query
        select d.id, d.path, t.metadata
        from exo_private.documents d
        join exo_private.text_cache t on t.sha256 = d.sha256
        where d.sha256 = p_sha256 and d.stage = 'ocr_pending'
        order by d.id
        for update of d;
end
$$;
comment on function exo_private.store_ocr_text(text, text, jsonb) is
    'Store the text OCR read for content p_sha256 in the text cache (needs_ocr off, p_ocr kept as '
    'metadata.ocr) and return the documents of that content waiting at ocr_pending, locked, with '
    'the cached metadata: the caller continues each (routing, banding, chunking).';

-- exo_private.end_ocr: the documents of one content that OCR could not read end failed (or skipped).
create or replace function exo_private.end_ocr(
    p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text
)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ended int;
begin
    if p_stage is null or p_stage not in ('failed', 'skipped') then
        perform exo_private.invalid_argument(
            format('p_stage must be failed or skipped, not %s', exo_private.quoted(p_stage::text)));
    end if;
    if p_error_class is null or p_error_class !~ '^[a-z][a-z_]*$' then
        perform exo_private.invalid_argument(format(
            'p_error_class must be a lowercase identifier such as ocr_failed, not %s',
            exo_private.quoted(p_error_class)));
    end if;
    update exo_private.documents d
       set stage = p_stage, error_class = p_error_class, error_message = left(p_message, 2000),
           stage_changed_at = now()
     where d.sha256 = p_sha256 and d.stage = 'ocr_pending';
    get diagnostics ended = row_count;
    return ended;
end
$$;
comment on function exo_private.end_ocr(text, exo_private.document_stage, text, text) is
    'End every document of content p_sha256 that waits at ocr_pending at p_stage (failed, or '
    'skipped when OCR found no text) with p_error_class (ocr_timeout, ocr_failed, ocr_unavailable, '
    'empty) and p_message; returns how many documents ended.';

-- exo_private.retry_ocr: queue again the scans OCR could not read (and those waiting with no message).
create or replace function exo_private.retry_ocr(p_since timestamptz default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc bigint;
    queued int := 0;
begin
    for doc in
        select d.id from exo_private.documents d
        where (d.stage = 'failed' and d.error_class in ('ocr_timeout', 'ocr_failed', 'ocr_unavailable')
               and (p_since is null or d.stage_changed_at >= p_since))
           or (p_since is null and d.stage = 'ocr_pending'
               and not exists (select 1 from pgmq.q_ocr q where (q.message ->> 'document_id')::bigint = d.id))
        order by d.id
        for update of d
    loop
        perform exo_private.await_ocr(doc);
        queued := queued + 1;
    end loop;
    return queued;
end
$$;
comment on function exo_private.retry_ocr(timestamptz) is
    'Queue again for OCR every document that ended failed with ocr_timeout, ocr_failed or '
    'ocr_unavailable (since p_since when given: after installing Tesseract, raising '
    'ocr.timeout_seconds or adding language data), plus, without p_since, those that wait at '
    'ocr_pending with no message (dead-lettered or lost); returns how many were queued.';
