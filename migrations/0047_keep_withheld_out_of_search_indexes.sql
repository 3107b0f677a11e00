-- Withheld material takes no part in what an unbridged search reads (docs/security.md, the oracle
-- rule). A search that releases nothing ranks by a BM25 index of the chunks charged for nothing
-- (chunks_<workspace>_bm25_open), so no statistic it reads (how rare a word is, how long a
-- chunk) tells what charged chunks say; one that releases a subject ranks by the index of every
-- chunk, as before. The charged chunks by workspace (exo_private.charged_counts, every search's
-- hints) get a partial index of their own.
create index chunks_charged_workspace_idx on exo_private.chunks (workspace) include (charged_subjects)
    where charged_subjects <> '{}';

do $$
declare
    partition_name text;
begin
    for partition_name in
        select 'chunks_' || w.name from exo_private.workspaces w
        where to_regclass(format('exo_private.%I', 'chunks_' || w.name)) is not null
    loop
        execute format('create index %I on exo_private.%I using bm25 (body) with (text_config = %L) '
                       'where charged_subjects = ''{}''',
                       partition_name || '_bm25_open', partition_name, 'english');
    end loop;
end
$$;

-- stage_sql takes whether the search releases anything (sql/400_search.sql).
drop function if exists exo_private.stage_sql(text, text, int, int);
