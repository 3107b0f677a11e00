-- Text helpers that run inside the server (most bodies in plpy/).

-- exo_private.bm25_text: the text a BM25 index reads (migration 0109 built every BM25 index on it).
-- The english parser keeps a path, a URL, a host and an e-mail address whole ('/etc/fstab' is one
-- lexeme); this opens them into their words. A changed body needs a migration that rebuilds the
-- indexes, or they hold words the queries no longer read.
create or replace function exo_private.bm25_text(body text) returns text
language sql immutable strict parallel safe
-- a slash, a backslash or an at sign anywhere, and a dot between a letter or digit and a letter
-- ('machparam.h', 'example.org'; not '3.14' or 'v1.2.3', which stay whole)
return pg_catalog.regexp_replace(body, '[/\\@]|(?<=[[:alnum:]])\.(?=[[:alpha:]])', ' ', 'g');
comment on function exo_private.bm25_text(text) is
    'The text a BM25 index reads, and a BM25 query: paths, URLs, hosts and e-mail addresses opened '
    'into their words (slashes, backslashes, at signs and dots before a letter made spaces), which '
    'the english parser keeps whole.';

-- exo_private.bm25_chunk_text: what every BM25 index of chunks reads (migration 0110): the title its
-- source gave the chunk's document, then its body, as bm25_text reads them. A title is often the
-- only place a word of what a passage is about is written (a conversation titled "dietary
-- restriction" that says "vegetarian").
create or replace function exo_private.bm25_chunk_text(document_title text, body text) returns text
language sql immutable parallel safe
return exo_private.bm25_text(coalesce(document_title || E'\n', '') || body);
comment on function exo_private.bm25_chunk_text(text, text) is
    'The text a BM25 index of chunks reads: the document''s title (chunks.document_title) and the '
    'body, through exo_private.bm25_text.';

-- exo_private.canonical_key: identity key of a name (NFKC, casefold, whitespace).
create or replace function exo_private.canonical_key(name text)
returns text
language plpython3u immutable strict parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include textnorm
return canonical_key(name)
$$;
comment on function exo_private.canonical_key(text) is
    'Identity key of an entity name: NFKC, case-folded, whitespace collapsed, edge punctuation removed.';
