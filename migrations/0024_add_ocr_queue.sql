-- Scanned PDFs (a PDF under the text threshold waits at stage ocr_pending) are read by
-- Tesseract in the worker, through the ocr queue: one message {document_id} per document
-- (sql/160_ocr.sql, exocortex.ingest.ocr). The worker drains it like embed and extract.
select pgmq.create('ocr');
select pgmq.enable_notify_insert('ocr');

-- Merged into the stored value, so an owner's other choices stay.
update exo_private.settings
   set value = value || '{"ocr": 900}'::jsonb
 where key = 'worker.visibility_timeout_s' and not value ? 'ocr';

insert into exo_private.settings (key, value, description) values
    ('ocr.page_limit', '50',
     'OCR reads at most this many pages of a scanned PDF (the first ones); the text cache''s '
     'metadata.ocr says how many of how many were read.'),
    ('ocr.timeout_seconds', '60',
     'Seconds one page may take to render and read; a page over it fails the document (ocr_timeout).'),
    ('ocr.language', '"eng"',
     'Tesseract language(s) of the scans, as its -l option takes them (eng, or e.g. eng+deu with '
     'that language data installed).');

-- Documents that waited at ocr_pending before there was a queue are read now.
select pgmq.send_batch('ocr', array(
    select jsonb_build_object('document_id', d.id)
    from exo_private.documents d
    where d.stage = 'ocr_pending'
    order by d.id))
where exists (select 1 from exo_private.documents d where d.stage = 'ocr_pending');
