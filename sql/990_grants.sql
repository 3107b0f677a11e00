-- Privileges: the reader may only use the exo API; the writer ingests; nobody else.
-- Re-applied after every migrate, so new objects are covered.

-- Nothing for PUBLIC: no public schema, no internals. (Privileges on the database
-- itself, such as TEMPORARY, are granted by the migrator: migrate.grant_database_privileges.)
revoke all on schema public from public;
grant usage on schema public to exo_owner, exo_writer;
revoke all on schema exo_private, pgmq from public;
revoke execute on all functions in schema exo_private, pgmq from public;
alter default privileges for role exo_owner revoke execute on functions from public;

-- exo: the API, for everyone of ours.
grant usage on schema exo to exo_reader, exo_writer;
grant select on all tables in schema exo to exo_reader, exo_writer;
grant execute on all functions in schema exo to exo_reader, exo_writer;

-- exo_writer: ingest and the worker.
grant usage on schema exo_private, pgmq to exo_writer;
grant select, insert, update, delete on all tables in schema exo_private, pgmq to exo_writer;
grant usage, select on all sequences in schema exo_private, pgmq to exo_writer;
grant execute on all functions in schema exo_private, pgmq to exo_writer;
alter default privileges for role exo_owner in schema exo_private, pgmq
    grant select, insert, update, delete on tables to exo_writer;
alter default privileges for role exo_owner in schema exo_private, pgmq
    grant usage, select on sequences to exo_writer;
-- The settings and the migration record are configuration, not ingest output.
revoke insert, update, delete on exo_private.schema_migrations, exo_private.components from exo_writer;

-- exo.workspaces shows each workspace's graph name: a view's functions run with the
-- caller's privileges, so the reader may execute this one name-formatting function.
grant execute on function exo_private.graph_name(text) to exo_reader;
