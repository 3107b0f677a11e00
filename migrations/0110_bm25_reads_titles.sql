-- BM25 reads a chunk's document title with its body. A conversation titled "dietary restriction"
-- whose messages say "I'm vegetarian" never writes the words "What are my current dietary
-- restrictions?" asks, and a note's frontmatter title or file name is no chunk's text: the lexical
-- stage missed them and the answer check said nothing answers. Every chunk keeps the title its
-- source gave its document (chunks.document_title: a conversation's own title, none where the
-- import made one up from its people; exo_private.document_search_title), kept by triggers
-- (sql/100_ingest.sql). Every BM25 index of chunks (chunks_<workspace>_bm25 and _bm25_open) reads
-- exo_private.bm25_chunk_text(document_title, body), and the lexical stages rank by it.
-- Deference reads the same titles (plpy/deference.py: a title heads every chunk of its document).
-- The two functions are made here for the fill and the indexes; their homes (sql/030_text.sql,
-- sql/100_ingest.sql) make them again with the same bodies.
alter table exo_private.chunks add column document_title text;
comment on column exo_private.chunks.document_title is
    'The title its source gave the chunk''s document (exo_private.document_search_title), which BM25 '
    'reads before the body (exo_private.bm25_chunk_text); kept by triggers on chunks and documents.';

create function exo_private.bm25_chunk_text(document_title text, body text) returns text
language sql immutable parallel safe
return exo_private.bm25_text(coalesce(document_title || E'\n', '') || body);

create function exo_private.document_search_title(document_id bigint) returns text
language sql stable
return (select coalesce(cc.title, case when d.conversation_id is null then d.title end)
        from exo_private.documents d
        left join exo_private.chat_conversations cc on cc.id = d.conversation_id
        where d.id = document_search_title.document_id);

-- pool_details returns the chunk's document_title (sql/400_search.sql makes it again)
drop function if exists exo_private.pool_details(text[], bigint[], date);

-- The indexes go first: the fill then writes no BM25 entry, and each is built once, on what it reads.
do $$
declare
    partition_name text;
begin
    for partition_name in
        select 'chunks_' || w.name from exo_private.workspaces w
        where to_regclass(format('exo_private.%I', 'chunks_' || w.name)) is not null
    loop
        execute format('drop index if exists exo_private.%I', partition_name || '_bm25');
        execute format('drop index if exists exo_private.%I', partition_name || '_bm25_open');
    end loop;
end
$$;

update exo_private.chunks c
set document_title = t.title
from (select d.id, exo_private.document_search_title(d.id) as title from exo_private.documents d) t
where t.id = c.document_id and t.title is not null;

do $$
declare
    partition_name text;
begin
    for partition_name in
        select 'chunks_' || w.name from exo_private.workspaces w
        where to_regclass(format('exo_private.%I', 'chunks_' || w.name)) is not null
    loop
        execute format('create index %I on exo_private.%I using bm25 '
                       '((exo_private.bm25_chunk_text(document_title, body))) with (text_config = %L)',
                       partition_name || '_bm25', partition_name, 'english');
        execute format('create index %I on exo_private.%I using bm25 '
                       '((exo_private.bm25_chunk_text(document_title, body) || '''')) '
                       'with (text_config = %L) where charged_subjects = ''{}''',
                       partition_name || '_bm25_open', partition_name, 'english');
    end loop;
end
$$;
