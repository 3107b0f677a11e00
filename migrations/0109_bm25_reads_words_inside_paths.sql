-- BM25's english parser keeps a path, a URL, a host and an e-mail address whole: '/etc/fstab',
-- 'machparam.h', 'x.org/a/b.html' and 'me@example.org' are one lexeme each, so a question's
-- 'fstab' or 'machparam' matched no chunk that wrote the word only inside one. Every BM25 index
-- (each workspace's chunks_<workspace>_bm25 and _bm25_open, chat_messages_bm25) reads its text
-- through exo_private.bm25_text, which opens them into their words, and every BM25 query reads the
-- question through it too. Made here for the indexes below; its home is sql/030_text.sql, which
-- makes it again with the same body (the indexes are built on what it returns).
create function exo_private.bm25_text(body text) returns text
language sql immutable strict parallel safe
return pg_catalog.regexp_replace(body, '[/\\@]|(?<=[[:alnum:]])\.(?=[[:alpha:]])', ' ', 'g');

do $$
declare
    partition_name text;
begin
    for partition_name in
        select 'chunks_' || w.name from exo_private.workspaces w
        where to_regclass(format('exo_private.%I', 'chunks_' || w.name)) is not null
    loop
        execute format('drop index if exists exo_private.%I', partition_name || '_bm25');
        execute format('create index %I on exo_private.%I using bm25 ((exo_private.bm25_text(body))) '
                       'with (text_config = %L)',
                       partition_name || '_bm25', partition_name, 'english');
        execute format('drop index if exists exo_private.%I', partition_name || '_bm25_open');
        execute format('create index %I on exo_private.%I using bm25 ((exo_private.bm25_text(body) || '''')) '
                       'with (text_config = %L) where charged_subjects = ''{}''',
                       partition_name || '_bm25_open', partition_name, 'english');
    end loop;
end
$$;

drop index exo_private.chat_messages_bm25;
create index chat_messages_bm25 on exo_private.chat_messages using bm25 ((exo_private.bm25_text(body)))
    with (text_config = 'english');
