-- Hand every object in the exo schemas to exo_owner.
-- sql/ files run as the admin (only a superuser may create plpython3u functions);
-- after this, security definer functions run as exo_owner, never as a superuser.
do $$
declare
    obj record;
begin
    for obj in
        select format('alter %s %s owner to exo_owner',
                      case p.prokind when 'p' then 'procedure' when 'a' then 'aggregate'
                                     else 'function' end,
                      p.oid::regprocedure) as stmt
        from pg_catalog.pg_proc p
        join pg_catalog.pg_namespace n on n.oid = p.pronamespace
        where n.nspname in ('exo', 'exo_private')
          and p.proowner <> 'exo_owner'::regrole
        union all
        select format('alter %s %s owner to exo_owner',
                      case c.relkind when 'v' then 'view' when 'm' then 'materialized view'
                                     when 'S' then 'sequence' else 'table' end,
                      c.oid::regclass)
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname in ('exo', 'exo_private')
          and c.relkind in ('r', 'p', 'v', 'm', 'S')
          and c.relowner <> 'exo_owner'::regrole
          -- sequences owned by a column follow their table
          and not (c.relkind = 'S' and exists (select 1 from pg_catalog.pg_depend d
                          where d.objid = c.oid and d.deptype in ('a', 'i')
                            and d.classid = 'pg_catalog.pg_class'::regclass))
    loop
        execute obj.stmt;
    end loop;
end
$$;

-- The same for the workspaces' AGE graphs: the seeded ones were made while
-- sql/020_workspaces.sql ran as the admin. Projection runs as exo_owner (security
-- definer), which must own a graph's schema to create labels and its tables to write
-- them. Graphs made later by ensure_workspace_graph already belong to exo_owner.
do $$
declare
    stmt text;
begin
    for stmt in
        select format('alter schema %I owner to exo_owner', n.nspname)
        from ag_catalog.ag_graph g
        join pg_catalog.pg_namespace n on n.oid = g.namespace
        join exo_private.workspaces w on exo_private.graph_name(w.name) = g.name
        where n.nspowner <> 'exo_owner'::regrole
        union all
        select format('alter %s %s owner to exo_owner',
                      case c.relkind when 'S' then 'sequence' else 'table' end, c.oid::regclass)
        from ag_catalog.ag_graph g
        join exo_private.workspaces w on exo_private.graph_name(w.name) = g.name
        join pg_catalog.pg_class c on c.relnamespace = g.namespace
        where c.relkind in ('r', 'S')
          and c.relowner <> 'exo_owner'::regrole
          -- sequences owned by a column follow their table
          and not (c.relkind = 'S' and exists (select 1 from pg_catalog.pg_depend d
                          where d.objid = c.oid and d.deptype in ('a', 'i')
                            and d.classid = 'pg_catalog.pg_class'::regclass))
    loop
        execute stmt;
    end loop;
end
$$;
