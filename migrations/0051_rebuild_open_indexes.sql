-- The workspaces whose open BM25 index (chunks_<workspace>_bm25_open) must be built again: a
-- chunk charged in place (exo_private.remark_charged) leaves its old row in the index's
-- statistics, which vacuum does not take out. pg_cron's exo-open-indexes job rebuilds each once
-- no snapshot can still see the rows charged_by changed (sql/020_workspaces.sql).
create table exo_private.open_index_rebuilds (
    workspace text primary key references exo_private.workspaces (name) on delete cascade,
    charged_by xid8 not null
);
comment on table exo_private.open_index_rebuilds is
    'Workspaces whose open BM25 index still counts chunks charged since it was built, and the '
    'transaction that charged them (exo_private.rebuild_open_indexes).';
