-- exo.search_messages ranks with BM25 (pg_textsearch), as the lexical stage of exo.search
-- does: every word of a question counts and none is required. The full-text vector and its
-- GIN index that served the old AND-of-every-word search go; the function takes open_archive
-- and as_of now (sql/200_chat.sql), so its old signature is dropped.

drop function if exists exo.search_messages(text, int, text[]);

drop index exo_private.chat_messages_tsv;
alter table exo_private.chat_messages drop column tsv;

create index chat_messages_bm25 on exo_private.chat_messages using bm25 (body) with (text_config = 'english');

comment on table exo_private.chat_messages is
    'Chat messages. dedupe_key is "id:" plus the source''s message id where it has one, else '
    '"sha256:" over the raw values, so re-importing an export adds nothing; the BM25 index '
    'chat_messages_bm25 (English) feeds exo.search_messages.';
