-- Text helpers that run inside the server (bodies in plpy/).

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
