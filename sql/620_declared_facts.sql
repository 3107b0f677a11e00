-- Declared facts (issue 15): what a document says of its subject in so many words, recorded as
-- facts of kind declared when the document is processed (exo_private.process_document).
--
-- The subject: the frontmatter's `subject:` (a string), else, for a canonical document
-- (`canonical: true`), its title; a document that names no subject declares nothing.
-- - Frontmatter: every key but those of the setting facts.frontmatter_ignore (the keys that file
--   the document) is an attribute; its value a string, number or boolean, or a list of them
--   (joined with ", "); a mapping or a nested list is skipped. Source: the first chunk.
-- - A canonical document's text: every `key: value` line (a key of letters, digits, spaces, "_"
--   and "-", at most 4 words and 40 characters, starting with a letter; a list bullet before it
--   and bold marks, "- **Key:** value", are allowed). Source: the chunk holding the line.
-- One attribute, one value: an attribute the document gives two different values (a key repeated
-- in the text, or a line against the frontmatter) is ambiguous and declares nothing.
-- A value over 500 characters is prose, not a fact, and is skipped. valid_from is the document's
-- written_at (midnight UTC). Re-processing an unchanged document adds no fact row (the value
-- held is the same: record_fact adds only a source row, for the new chunk id); an edited value
-- closes the old row. A key removed from the file is left as it was: closing facts whose source
-- is gone is the self-audit's work.

-- exo_private.declared_facts: the facts a document declares, with the chunk each comes from.
create or replace function exo_private.declared_facts(doc_id bigint)
returns table (subject text, attribute text, value text, chunk_id bigint)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc exo_private.documents;
    named text;
    ignored text[];
    body text;
begin
    select * into doc from exo_private.documents d where d.id = doc_id;
    if not found then
        perform exo_private.invalid_argument(format('doc_id must name a document, got %s', coalesce(doc_id::text, 'null')));
    end if;
    named := pg_catalog.btrim(case when jsonb_typeof(doc.frontmatter -> 'subject') = 'string'
                                   then doc.frontmatter ->> 'subject'
                                   when doc.canonical then doc.title end);
    if exo_private.canonical_key(named) is null or pg_catalog.length(named) > 500 then
        return;
    end if;
    select array(select exo_private.normalise_attribute(k) from jsonb_array_elements_text(s.value) k)
      into ignored
    from exo_private.settings s where s.key = 'facts.frontmatter_ignore';
    if doc.canonical then
        select c.body into body from exo_private.text_cache c where c.sha256 = doc.sha256;
    end if;

    return query
    with first_chunk as (
        select c.id from exo_private.chunks c
        where c.workspace = doc.workspace and c.document_id = doc_id order by c.ordinal limit 1
    ), frontmatter as (
        select exo_private.normalise_attribute(e.key) as attribute,
               case when jsonb_typeof(e.value) in ('string', 'number', 'boolean') then e.value #>> '{}'
                    when jsonb_typeof(e.value) = 'array'
                         and not exists (select 1 from jsonb_array_elements(e.value) x
                                         where jsonb_typeof(x) not in ('string', 'number', 'boolean'))
                        then (select pg_catalog.string_agg(pg_catalog.btrim(x.v #>> '{}'), ', ' order by x.n)
                              from jsonb_array_elements(e.value) with ordinality x (v, n)
                              where pg_catalog.btrim(x.v #>> '{}') <> '')
               end as value,
               0::bigint as position, (select f.id from first_chunk f) as chunk_id
        from jsonb_each(coalesce(doc.frontmatter, '{}')) e
        where not exo_private.normalise_attribute(e.key) = any (coalesce(ignored, '{}'))
    ), lines as (
        select l.line, l.n,
               sum(pg_catalog.length(l.line) + 1) over (order by l.n) - pg_catalog.length(l.line) - 1 as start
        from pg_catalog.regexp_split_to_table(body, E'\n') with ordinality l (line, n)
    ), stated as (
        select exo_private.normalise_attribute(m[1]) as attribute, m[2] as value, l.n as position,
               coalesce((select c.id from exo_private.chunks c
                         where c.workspace = doc.workspace and c.document_id = doc_id
                           and c.char_start <= l.start and l.start < c.char_end
                         order by c.ordinal limit 1),
                        (select f.id from first_chunk f)) as chunk_id
        from lines l
        cross join lateral pg_catalog.regexp_match(
            pg_catalog.replace(l.line, '**', ''), '^[ \t]*(?:[-*+][ \t]+)?([[:alpha:]][[:alnum:]_-]*(?: +[[:alnum:]_-]+){0,3}) *:[ \t]+(.*)$') m
        where pg_catalog.length(m[1]) <= 40
    ), candidates as (
        select a.attribute, pg_catalog.btrim(a.value, E' \t\r') as value, a.position, a.chunk_id
        from (select * from frontmatter union all select * from stated) a
    )
    select named, c.attribute, min(c.value), (array_agg(c.chunk_id order by c.position))[1]
    from candidates c
    where c.attribute <> '' and c.value <> '' and pg_catalog.length(c.value) <= 500
    group by c.attribute
    having count(distinct c.value) = 1
    order by c.attribute;
end
$$;
comment on function exo_private.declared_facts(bigint) is
    'The facts document doc_id declares: subject (frontmatter subject:, else a canonical document''s '
    'title; none: no rows), attribute (normalised), value and the chunk_id it comes from. Frontmatter '
    'keys outside facts.frontmatter_ignore (scalars, or lists of them joined with ", "; first chunk) '
    'and, in a canonical document, its "key: value" lines (a key of at most 4 words; the chunk holding '
    'the first line); an attribute given two different values, or a value over 500 characters, is skipped.';

-- exo_private.record_declared_facts: record what a processed document declares, as declared facts.
create or replace function exo_private.record_declared_facts(doc_id bigint)
returns int
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc exo_private.documents;
    recorded int := 0;
    fact record;
begin
    select * into doc from exo_private.documents d where d.id = doc_id;
    if not found then
        perform exo_private.invalid_argument(format('doc_id must name a document, got %s', coalesce(doc_id::text, 'null')));
    end if;
    if doc.workspace is null or doc.written_at is null then
        return 0;  -- quarantined, or not yet processed: nothing is declared yet
    end if;
    for fact in select * from exo_private.declared_facts(doc_id) loop
        perform exo_private.record_fact(
            doc.workspace, fact.subject, fact.attribute, fact.value, 'declared',
            doc.written_at::timestamp at time zone 'UTC',
            jsonb_strip_nulls(jsonb_build_object('document_id', doc_id, 'chunk_id', fact.chunk_id)));
        recorded := recorded + 1;
    end loop;
    return recorded;
end
$$;
comment on function exo_private.record_declared_facts(bigint) is
    'Record each fact of exo_private.declared_facts(doc_id) through record_fact (kind declared, in the '
    'document''s workspace, valid from its written_at at midnight UTC, source {document_id, chunk_id}); '
    'returns how many it passed on. The same value again adds only a source; a changed value closes '
    'the old row. Nothing is closed for a key the document no longer has (the audit''s work).';
