-- Workspaces and their Apache AGE graphs.

-- exo_private.graph_name: the AGE graph of a workspace.
create or replace function exo_private.graph_name(workspace text)
returns name
language sql immutable strict
security invoker
set search_path = exo_private, pg_temp
as $$
    select ('graph_' || workspace)::name
$$;
comment on function exo_private.graph_name(text) is 'The name of a workspace''s AGE graph.';

-- exo_private.guard_graph_table: exo_graph reads a graph table only through row security.
create or replace function exo_private.guard_graph_table(relation regclass, kind "char")
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    setting text := case kind when 'v' then 'exo.cypher_hidden_vertices'
                              when 'e' then 'exo.cypher_hidden_edges' end;
begin
    if setting is null then
        raise exception 'label kind must be v or e, not %', kind;
    end if;
    -- exo.cypher lists what the caller may not see in a transaction-local setting just
    -- before exo_private.run_cypher (owned by exo_graph) reads; read once per scan (an
    -- InitPlan). Unset, every row is hidden. Not forced: the owner (projection) sees all.
    -- A label's own policy does not cover it when read through its parent (MATCH (n)
    -- scans _ag_label_vertex), so the parents have one too.
    execute format('grant usage on schema %I to exo_graph',
                   (select n.nspname from pg_catalog.pg_class c
                    join pg_catalog.pg_namespace n on n.oid = c.relnamespace where c.oid = relation));
    execute format('grant select on %s to exo_graph', relation);
    execute format('alter table %s enable row level security', relation);
    execute format('drop policy if exists exo_graph_sees_what_the_caller_may on %s', relation);
    execute format($sql$
        create policy exo_graph_sees_what_the_caller_may on %s for select to exo_graph
        using (not (id operator(ag_catalog.=) any (
            (select pg_catalog.current_setting(%L, true)::ag_catalog.graphid[])::ag_catalog.graphid[])))
    $sql$, relation, setting);
end
$$;
comment on function exo_private.guard_graph_table(regclass, "char") is
    'Let exo_graph read one vertex (v) or edge (e) table of an AGE graph, through a row security '
    'policy that hides the graphids exo.cypher lists in exo.cypher_hidden_vertices or _edges '
    '(everything when unset).';

-- exo_private.ensure_workspace_graph: create a workspace's AGE graph when it is missing.
create or replace function exo_private.ensure_workspace_graph(workspace text)
returns name
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    graph name := exo_private.graph_name(workspace);
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = workspace) then
        raise exception 'workspace % does not exist', workspace
            using hint = 'insert it into exo_private.workspaces first';
    end if;
    if not exists (select 1 from ag_catalog.ag_graph g where g.name = graph) then
        perform ag_catalog.create_graph(graph);
        -- its parent vertex and edge tables, which every label inherits from
        perform exo_private.guard_graph_table(l.relation, l.kind)
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = exo_private.graph_name(ensure_workspace_graph.workspace);
    end if;
    return graph;
end
$$;
comment on function exo_private.ensure_workspace_graph(text) is
    'Create the AGE graph of a workspace when missing; returns its name. Reused by every '
    'issue that adds a workspace.';

-- exo_private.ensure_workspace_storage: a workspace's chunk partition with its own indexes.
create or replace function exo_private.ensure_workspace_storage(workspace text)
returns regclass
language plpgsql
security definer
set search_path = exo_private, public, pg_temp
as $$
declare
    partition_name text := 'chunks_' || workspace;
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = workspace) then
        raise exception 'workspace % does not exist', workspace;
    end if;
    if to_regclass(format('exo_private.%I', partition_name)) is null then
        execute format('create table exo_private.%I partition of exo_private.chunks for values in (%L)',
                       partition_name, workspace);
        execute format('create index %I on exo_private.%I (document_id)',
                       partition_name || '_document_idx', partition_name);
        -- the document's title and the body as BM25 reads them, the words inside a path opened
        -- (exo_private.bm25_chunk_text)
        execute format('create index %I on exo_private.%I using bm25 '
                       '((exo_private.bm25_chunk_text(document_title, body))) with (text_config = %L)',
                       partition_name || '_bm25', partition_name, 'english');
        -- the chunks charged for nothing alone: what a search that releases nothing ranks by, so
        -- no statistic of it holds withheld material; followed by || '', which only it matches
        -- (exo_private.stage_sql)
        execute format('create index %I on exo_private.%I using bm25 '
                       '((exo_private.bm25_chunk_text(document_title, body) || '''')) '
                       'with (text_config = %L) where charged_subjects = ''{}''',
                       partition_name || '_bm25_open', partition_name, 'english');
    end if;
    if to_regclass(format('exo_private.%I', 'chunk_embeddings_' || workspace)) is null then
        execute format('create table exo_private.%I partition of exo_private.chunk_embeddings for values in (%L)',
                       'chunk_embeddings_' || workspace, workspace);
    end if;
    return format('exo_private.%I', partition_name)::regclass;
end
$$;
comment on function exo_private.ensure_workspace_storage(text) is
    'Create a workspace''s chunk partition (with its document index, its BM25 index and the BM25 '
    'index of its chunks charged for nothing) and its embeddings partition when missing.';

-- exo_private.flag_open_index: an open BM25 index to build again once this transaction is over.
create or replace function exo_private.flag_open_index(p_index text, p_workspace text default null)
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    insert into exo_private.open_index_rebuilds (index_name, workspace, charged_by)
    values (p_index, p_workspace, pg_catalog.pg_current_xact_id())
    on conflict (index_name) do update set charged_by = excluded.charged_by
$$;
comment on function exo_private.flag_open_index(text, text) is
    'Flag the open BM25 index p_index (in exo_private; p_workspace: its workspace, null for the '
    'messages'') for exo_private.rebuild_open_indexes: this transaction charged rows it counts.';

-- exo_private.rebuild_open_indexes: build again each open BM25 index flagged in open_index_rebuilds
-- (exo_private.remark_charged and mark_messages flag them). A row charged in place leaves its
-- old row in the index's statistics, which vacuum does not take out; a rebuild leaves it out once
-- no snapshot can see it, so a flag waits while a session older than its transaction runs.
create or replace function exo_private.rebuild_open_indexes()
returns int
language plpgsql volatile
security definer
set search_path = exo_private, pg_temp
as $$
declare
    flagged record;
    rebuilt int := 0;
begin
    for flagged in
        select r.index_name, r.charged_by from exo_private.open_index_rebuilds r
        where pg_catalog.pg_xact_status(r.charged_by) is distinct from 'in progress'
          -- a snapshot older than the charging, or a transaction begun before it (its xid holds
          -- the old row as long as a snapshot does, and it has none between two statements); this
          -- session's own too: its snapshot counts the transactions of every database that ran
          -- when it was taken, and one of them older than the charging may have ended since
          and not exists (select 1 from pg_catalog.pg_stat_activity a
                          cross join lateral (values (a.backend_xmin), (a.backend_xid)) h (xid)
                          where h.xid is not null
                            and pg_catalog.age(h.xid) >= pg_catalog.age(pg_catalog.xid(r.charged_by)))
        order by r.index_name
        for update of r skip locked
    loop
        execute format('reindex index exo_private.%I', flagged.index_name);
        delete from exo_private.open_index_rebuilds r where r.index_name = flagged.index_name;
        rebuilt := rebuilt + 1;
    end loop;
    return rebuilt;
end
$$;
comment on function exo_private.rebuild_open_indexes() is
    'Rebuild each open BM25 index in open_index_rebuilds that no running '
    'snapshot predates (pg_cron''s exo-open-indexes, every minute); returns how many.';

-- Every minute, as the writer (scheduled by the migrator: sql/005_cron_jobs.sql).
select exo_private.want_cron_job(
    'exo-open-indexes', '* * * * *', 'select exo_private.rebuild_open_indexes()', 'exo_writer');

-- exo_private.workspace_created: trigger that gives a new workspace its graph and storage.
create or replace function exo_private.workspace_created()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    perform exo_private.ensure_workspace_graph(new.name);
    perform exo_private.ensure_workspace_storage(new.name);
    return new;
end
$$;
comment on function exo_private.workspace_created() is
    'Trigger: a new workspace gets its AGE graph and its chunk partition.';

create or replace trigger provision_workspace
    after insert on exo_private.workspaces
    for each row execute function exo_private.workspace_created();

-- Workspaces that predate the trigger (the seeded four) get theirs here.
select exo_private.ensure_workspace_graph(name), exo_private.ensure_workspace_storage(name)
from exo_private.workspaces;

create or replace view exo.workspaces as
    select w.name, w.description, exo_private.graph_name(w.name) as graph, w.created_at
    from exo_private.workspaces w;
comment on view exo.workspaces is 'The workspaces search federates over, with their AGE graph names.';
