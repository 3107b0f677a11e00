-- Limits of the reader's sessions and of the model calls it can cause.
-- The migrator applies the reader.* session limits with `alter role exo_reader in database
-- ... set` (migrate.set_reader_limits). To change one: exo_private.set_setting, then
-- `exo migrate`; a value the server refuses stops the migrator with the setting's name.

insert into exo_private.settings (key, value, description) values
    ('reader.statement_timeout', '"30s"',
     'exo_reader: a statement running longer is cancelled (a server duration: "30s", "2min"). '
     'Applied by `exo migrate`.'),
    ('reader.idle_in_transaction_session_timeout', '"60s"',
     'exo_reader: a session idle this long inside an open transaction is ended, so it cannot hold '
     'locks that stall `exo migrate` and the writer. Applied by `exo migrate`.'),
    ('reader.temp_file_limit', '"512MB"',
     'exo_reader: the most temporary file space one session may use; a query needing more is '
     'cancelled. Applied by `exo migrate`.'),
    ('reader.client_connection_check_interval', '"2s"',
     'exo_reader: how often a running query checks that its client is still there; a query whose '
     'client has gone is cancelled. Applied by `exo migrate`.'),
    ('reader.connection_limit', '32',
     'exo_reader: the most sessions the role may have open at once (server-wide; the database '
     'migrated last sets it). Applied by `exo migrate`.'),
    ('reader.embed_calls_per_minute', '120',
     'Query embeddings one session may ask the models.embeddings endpoint for in any minute '
     '(exo.embed_query and the search share it); past it the answer is rate_limited. 0 refuses all.');

-- exo_private.embed_text takes the session's call budget (sql/130_query_embedding.sql).
drop function if exists exo_private.embed_text(text, jsonb);
