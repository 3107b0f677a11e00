-- A plain-text file (txt, md, csv: its bytes are its text) over ingest.max_text_bytes is a log or a
-- data dump, not prose: exo ingest skips it (large_text) unless ingest.large_text_allowed names it
-- (exo ingest PATH --allow-large GLOB adds it there). Thousands of log lines would crowd out the
-- person's own writing in search and hold the queues for hours.
insert into exo_private.settings (key, value, description) values
    ('ingest.max_text_bytes', '2000000',
     'A plain-text file (txt, md, csv) larger than this many bytes is skipped (large_text) as a log '
     'or a dump rather than prose, unless ingest.large_text_allowed names it. null: no such limit '
     '(ingest.max_file_bytes still applies).'),
    ('ingest.large_text_allowed', '[]',
     'Globs of the plain-text files read whatever ingest.max_text_bytes says: * any characters, ? one, '
     'on the full path (root/path, as exo ingest PATH --allow-large GLOB adds them) or on the path '
     'under its source''s root (in every source).')
on conflict (key) do nothing;
