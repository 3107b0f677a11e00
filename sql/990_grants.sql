-- Privileges: the reader may only use the exo API; the API may only read; the writer
-- ingests; nobody else. Re-applied after every migrate, so new objects are covered.
-- Privileges are the boundary: a reader that switches default_transaction_read_only off
-- or changes its search_path still has nothing here to write with (docs/security.md).

-- Nothing for PUBLIC: no public schema, no internals, no exo API. (Privileges on the
-- database itself, CONNECT and TEMPORARY, are granted by the migrator:
-- migrate.grant_database_privileges.)
revoke all on schema public from public;
grant usage on schema public to exo_owner, exo_writer, exo_api;
revoke all on schema exo_private, pgmq from public;
revoke execute on all functions in schema exo, exo_private, pgmq from public;
alter default privileges for role exo_owner revoke execute on functions from public;

-- Large objects and advisory locks are outside every table privilege: whoever may execute
-- lo_create or pg_advisory_lock can store data or stall others whatever they may read.
-- Nobody of ours uses large objects; the owner (ensure_label, pgmq's queue creation) and
-- the writer (pgmq's grouped reads, exo_private.lock_fact_line) take advisory locks, and so does
-- the migrator, as the admin that runs this file: a superuser needs no grant, another admin
-- (a managed host's) keeps its own.
do $$
declare
    fn record;
    grantees text := case when (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user)
                          then 'exo_owner, exo_writer' else 'exo_owner, exo_writer, current_user' end;
begin
    for fn in
        select p.oid::regprocedure as sig, p.proname like 'lo%' as large_object
        from pg_catalog.pg_proc p
        where p.pronamespace = 'pg_catalog'::regnamespace
          and (p.proname like 'lo\_%' or p.proname in ('loread', 'lowrite')
               or p.proname like 'pg\_advisory\_%' or p.proname like 'pg\_try\_advisory\_%')
    loop
        execute format('revoke execute on function %s from public', fn.sig);
        if not fn.large_object then
            execute format('grant execute on function %s to %s', fn.sig, grantees);
        end if;
    end loop;
end
$$;

-- exo: the API, for everyone of ours.
grant usage on schema exo to exo_reader, exo_writer, exo_api;
grant select on all tables in schema exo to exo_reader, exo_writer;
grant execute on all functions in schema exo to exo_reader, exo_writer;

-- exo_api: owns the exo API (sql/980_ownership.sql) and may only read. SELECT on the tables
-- the API reads (pgmq: the queue depths in exo.status), EXECUTE on exo_private functions
-- except the owner's security definer ones (the writers), never a write privilege: a
-- simple view is updatable by its owner, so even the API's own views are read-only to it.
grant usage on schema exo_private, pgmq to exo_api;
grant select on all tables in schema exo_private, pgmq to exo_api;
alter default privileges for role exo_owner in schema exo_private, pgmq grant select on tables to exo_api;
revoke insert, update, delete, truncate, references, trigger, maintain
    on all tables in schema exo, exo_private, pgmq from exo_api;
revoke all on all sequences in schema exo, exo_private, pgmq from exo_api;
do $$
declare
    fn record;
begin
    for fn in
        select p.oid::regprocedure as sig,
               p.prosecdef and p.proowner = 'exo_owner'::regrole as owners_definer
        from pg_catalog.pg_proc p
        where p.pronamespace = 'exo_private'::regnamespace
    loop
        execute format(case when fn.owners_definer then 'revoke execute on function %s from exo_api'
                            else 'grant execute on function %s to exo_api' end, fn.sig);
    end loop;
end
$$;

-- A reader's memory bound is for good: nothing the API runs may lift it (sql/065_backend_memory.sql).
revoke execute on function exo_private.lift_backend_memory() from exo_api;

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
-- A caller's Cypher runs only through exo.cypher, which checks it first (sql/985_graph_access.sql).
revoke execute on function exo_private.run_cypher(name, text, int) from exo_writer;

-- exo.workspaces shows each workspace's graph name: a view's functions run with the
-- caller's privileges, so the reader may execute this one name-formatting function.
grant execute on function exo_private.graph_name(text) to exo_reader;
