-- exo.version: what schema, components and extensions this database runs.
create or replace function exo.version()
returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select jsonb_build_object(
        'schema', (select max(name) from exo_private.schema_migrations),
        'migrations', (select count(*) from exo_private.schema_migrations),
        'components', (select coalesce(jsonb_object_agg(name, version), '{}') from exo_private.components),
        'extensions', (select jsonb_object_agg(extname, extversion) from pg_catalog.pg_extension),
        'server', pg_catalog.current_setting('server_version')
    )
$$;
comment on function exo.version() is
    'Schema version (last migration), vendored components, extension versions and server version.';
