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
        execute format('create index %I on exo_private.%I using bm25 (body) with (text_config = %L)',
                       partition_name || '_bm25', partition_name, 'english');
    end if;
    if to_regclass(format('exo_private.%I', 'chunk_embeddings_' || workspace)) is null then
        execute format('create table exo_private.%I partition of exo_private.chunk_embeddings for values in (%L)',
                       'chunk_embeddings_' || workspace, workspace);
    end if;
    return format('exo_private.%I', partition_name)::regclass;
end
$$;
comment on function exo_private.ensure_workspace_storage(text) is
    'Create a workspace''s chunk partition (with its document and BM25 indexes) and its '
    'embeddings partition when missing.';

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
