-- The memory one reader backend may use (sql/065_backend_memory.sql): the login trigger bounds
-- each reader session by this much above what it maps when it logs in.
insert into exo_private.settings (key, value, description) values
    ('reader.backend_memory', '"256MB"',
     'exo_reader and every profile role: the private memory one session may use beyond what it '
     'holds at login (a server size: "256MB", "1GB"); a query needing more fails with out of '
     'memory and every other session goes on. Each new session takes it. With '
     'reader.connection_limit sessions per role, budget connections x this much for readers.');
