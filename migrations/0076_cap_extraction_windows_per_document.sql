-- A long file queues at most this many extraction windows, its first ones (exo_private.process_document
-- in sql/100_ingest.sql): a 5 MB log cut into a thousand windows must not hold the extract queue for days.
insert into exo_private.settings (key, value, description) values
    ('extraction.max_windows_per_document', '250',
     'The most extraction windows one document queues for the graph, its first ones; the rest are '
     'searchable but not read for entities and relations, and the ingest summary names the file. '
     'null: every window.')
on conflict (key) do nothing;
