-- The BM25 index of the chunks charged for nothing (migration 0047) ranks (body || ''), an
-- expression only it matches: on body, the planner could scan the index of every chunk for a
-- search that releases nothing (with nothing charged the two cost the same), and to_bm25query
-- refuses a scan of an index other than the one it names (sql/400_search.sql, stage_sql).
do $$
declare
    partition_name text;
begin
    for partition_name in
        select 'chunks_' || w.name from exo_private.workspaces w
        where to_regclass(format('exo_private.%I', 'chunks_' || w.name)) is not null
    loop
        execute format('drop index if exists exo_private.%I', partition_name || '_bm25_open');
        execute format('create index %I on exo_private.%I using bm25 ((body || '''')) with (text_config = %L) '
                       'where charged_subjects = ''{}''',
                       partition_name || '_bm25_open', partition_name, 'english');
    end loop;
end
$$;
