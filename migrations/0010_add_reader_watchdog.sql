-- The backstop for the reader's limits that its own session could lift: statement_timeout
-- and idle_in_transaction_session_timeout are role defaults a client may change, so a
-- pg_cron watchdog (sql/060_reader_watchdog.sql) enforces these from outside the session.

insert into exo_private.settings (key, value, description) values
    ('reader.max_statement_s', '120',
     'Seconds a reader statement may run before the watchdog cancels it, whatever the session '
     'set statement_timeout to (exo_private.stop_runaway_readers, every 10 s by pg_cron).'),
    ('reader.max_idle_in_transaction_s', '300',
     'Seconds a reader session may sit idle inside an open transaction before the watchdog ends '
     'it, whatever the session set idle_in_transaction_session_timeout to.');
