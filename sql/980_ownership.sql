-- Hand every object in the exo schemas to its owner.
-- sql/ files run as the admin (only a superuser may create plpython3u functions);
-- after this, security definer functions never run as a superuser:
-- * exo_api owns the exo schema's functions and views, the API the reader calls. It may
--   only read (sql/990_grants.sql), so nothing the reader reaches through it can write.
-- * exo_owner owns the tables and every exo_private function. Its security definer ones
--   are the writers (ensure_workspace_graph/_storage, ensure_embedding_indexes,
--   ensure_label, project_*, clear_graph, graph_disagreements, which creates a missing
--   graph, stop_runaway_readers, which signals backends); exo_api may not execute those.
--   Today no exo_private function is both security definer and read-only; one that were
--   would belong to exo_api like the API it serves.
-- * exo_private functions that sql/985_graph_access.sql gives to exo_graph (run_cypher,
--   the one that runs a caller's Cypher) are left to it.
-- * exo_private.kb_write, the one path that writes a personal base (sql/700_kb.sql), and its
--   sibling for outside documents, kb_outside_write (sql/710_kb_outside.sql), are left to
--   exo_kb, which may write only the kb tables.
do $$
declare
    obj record;
begin
    for obj in
        select format('alter %s %s owner to %I',
                      case p.prokind when 'p' then 'procedure' when 'a' then 'aggregate'
                                     else 'function' end,
                      p.oid::regprocedure, t.owner) as stmt
        from pg_catalog.pg_proc p
        join pg_catalog.pg_namespace n on n.oid = p.pronamespace
        cross join lateral (select case n.nspname when 'exo' then 'exo_api' else 'exo_owner' end
                            as owner) t
        where n.nspname in ('exo', 'exo_private')
          and p.proowner <> t.owner::regrole
          and p.proowner not in ('exo_graph'::regrole, 'exo_kb'::regrole)
        union all
        select format('alter %s %s owner to %I',
                      case c.relkind when 'v' then 'view' when 'm' then 'materialized view'
                                     when 'S' then 'sequence' else 'table' end,
                      c.oid::regclass, t.owner)
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        cross join lateral (select case when n.nspname = 'exo' and c.relkind in ('v', 'm')
                                        then 'exo_api' else 'exo_owner' end as owner) t
        where n.nspname in ('exo', 'exo_private')
          and c.relkind in ('r', 'p', 'v', 'm', 'S')
          and c.relowner <> t.owner::regrole
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
