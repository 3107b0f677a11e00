-- exo.search_messages ranks as exo.search does (migration 0047): a search that releases nothing
-- reads a BM25 index of the messages charged for nothing (chat_messages_bm25_open), so the rank
-- it returns, and which matches fill its pool, move with no word a withheld message holds. Only
-- marked messages are in it: an import writes its messages unmarked and marks them in the same
-- transaction, so a message charged at import never enters it. One charged in place, after the
-- deference list changed, leaves its old row in the index's statistics until the index is built
-- again: open_index_rebuilds now names the index, a workspace's or the messages'.
create index chat_messages_bm25_open on exo_private.chat_messages
    using bm25 ((exo_private.bm25_text(body) || '')) with (text_config = 'english')
    where charged_subjects = '{}' and charged is not null;
comment on index exo_private.chat_messages_bm25_open is
    'BM25 over the marked messages charged for nothing: what exo.search_messages ranks by when it '
    'releases nothing; followed by || '''', which only it matches.';

alter table exo_private.open_index_rebuilds add column index_name text;
update exo_private.open_index_rebuilds set index_name = 'chunks_' || workspace || '_bm25_open';
alter table exo_private.open_index_rebuilds
    drop constraint open_index_rebuilds_pkey,
    alter column workspace drop not null,
    alter column index_name set not null,
    add primary key (index_name);
comment on table exo_private.open_index_rebuilds is
    'Open BM25 indexes (a workspace''s chunks_<workspace>_bm25_open, workspace set; the messages'' '
    'chat_messages_bm25_open, workspace null) that still count rows charged since they were built, '
    'and the transaction that charged them (exo_private.rebuild_open_indexes).';
