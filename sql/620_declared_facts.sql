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
-- A value over 500 characters is prose, not a fact, and is skipped.
--
-- When a value held (plpy/fact_periods.py, its dates read by plpy/temporal.py): a value that
-- says when it began ("since 15 August 2020", "since March 2019", "2016 to present") is valid
-- from that day (a month's first, a year's 1 January), and one that states a closed range
-- ("April 2013 to August 2020", "(2011 to April 2013)", "2012-2016", "from March 2016 until
-- June 2022") is a closed row (close_reason ended, no closed_by: exo_private.record_closed_fact),
-- valid until the end of the range's last day, month or year (exclusive: "to August 2020" gives
-- valid_to 2020-09-01); the first such expression counts.
-- Any other date in a value ("born 14 July 1988", "adopted 13 March 2021") is content: the
-- value is valid from the document's written_at. All at midnight UTC; the value is kept as
-- written. An attribute previous_x, former_x or past_x (previous_addresses: x's plural made
-- singular) is recorded as declared, valid from written_at, and each of its items (";"-separated,
-- or ", "-separated where every item has a range) with a closed range of its own is also a
-- closed row of the line x, its value the item without the range ("14 Fenwick Street, Flat 3,
-- Larkhaven"); an item without a range makes no row of x.
--
-- Re-processing an unchanged document adds no fact row (the value held is the same: record_fact
-- adds only a source row, for the new chunk id; record_closed_fact finds the same closed row);
-- an edited value closes the old row. A key removed from the file is left as it was: closing
-- facts whose source is gone is the self-audit's work.

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

-- exo_private.fact_periods: the rows a document's declared facts make, with the periods their values state.
create or replace function exo_private.fact_periods(
    attributes text[], vals text[], today date, numeric_order text
)
returns table (n int, attribute text, value text, valid_from date, valid_to date)
language plpython3u immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include fact_periods
import datetime

if today is None:
    raise ValueError("today must not be null")
return fact_periods(attributes or [], vals or [], datetime.date.fromisoformat(today), numeric_order or "dmy")
$$;
comment on function exo_private.fact_periods(text[], text[], date, text) is
    'plpy/fact_periods.py: for each declared fact (attributes[i], vals[i]; n = i) its row, valid_from '
    'and valid_to as its value states ("since ...", a closed range; null: the document''s date, still '
    'valid), and after a previous_x/former_x/past_x fact a closed row of x per item with a range of '
    'its own (the item without the range). today bounds the years read; numeric_order (dmy or mdy; '
    'null: dmy) reads "02/03/2014".';

-- exo_private.record_closed_fact: record a value that held over a stated period and no longer holds.
create or replace function exo_private.record_closed_fact(
    p_workspace text, p_subject text, p_attribute text, p_value text, p_kind text,
    p_valid_from timestamptz, p_valid_to timestamptz, p_source jsonb
)
returns bigint
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    key text := exo_private.canonical_key(p_subject);
    attr text := exo_private.normalise_attribute(p_attribute);
    val text := pg_catalog.btrim(p_value);
    line_kind exo_private.fact_kind;
    fact bigint;
begin
    line_kind := exo_private.checked_fact_kind(p_workspace, p_subject, p_attribute, p_value, p_kind, p_source);
    if p_valid_from is null or p_valid_to is null or not pg_catalog.isfinite(p_valid_from)
       or not pg_catalog.isfinite(p_valid_to) or p_valid_to <= p_valid_from then
        perform exo_private.invalid_argument(
            format('p_valid_from and p_valid_to must be finite times, the first before the second, got %s and %s',
                   coalesce(p_valid_from::text, 'null'), coalesce(p_valid_to::text, 'null')));
    end if;

    perform exo_private.lock_fact_line(p_workspace, key, attr, line_kind);
    -- The same value over the same period again (the document re-processed): only a source more.
    select f.id into fact
    from exo_private.facts f
    where f.subject_key = key and f.attribute = attr and f.kind = line_kind and f.workspace = p_workspace
      and f.valid_from = p_valid_from and f.valid_to = p_valid_to and f.value = val
    order by f.id
    limit 1;
    if fact is null then
        -- Closed when written: the line's current row and its other rows stay as they are (the
        -- reader takes, at a time, the row with the latest valid_from not closed by then).
        insert into exo_private.facts (workspace, subject, subject_key, attribute, value, kind,
                                       valid_from, valid_to, close_reason)
        values (p_workspace, pg_catalog.btrim(p_subject), key, attr, val, line_kind,
                p_valid_from, p_valid_to, 'ended')
        returning id into fact;
    end if;
    perform exo_private.add_fact_source(fact, p_source);
    return fact;
end
$$;
comment on function exo_private.record_closed_fact(text, text, text, text, text, timestamptz, timestamptz, jsonb) is
    'Record that p_subject''s p_attribute had p_value from p_valid_from until p_valid_to (exclusive), '
    'as its source states, as a closed row of the line (workspace, subject key, attribute, p_kind): '
    'close_reason ended, no closed_by. The same value over the same period adds only a source (p_source '
    'as record_fact takes it); no other row is closed or changed. Returns the row''s id. Refuses what '
    'exo_private.fact_refusal names, and a period that does not run forward.';

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
    subjects text[];   -- the declared facts, column by column, in declared_facts' order
    attrs text[];
    vals text[];
    chunk_ids bigint[];
    fact record;
    source jsonb;
begin
    select * into doc from exo_private.documents d where d.id = doc_id;
    if not found then
        perform exo_private.invalid_argument(format('doc_id must name a document, got %s', coalesce(doc_id::text, 'null')));
    end if;
    if doc.workspace is null or doc.written_at is null then
        return 0;  -- quarantined, or not yet processed: nothing is declared yet
    end if;
    select array_agg(d.subject order by d.n), array_agg(d.attribute order by d.n),
           array_agg(d.value order by d.n), array_agg(d.chunk_id order by d.n)
      into subjects, attrs, vals, chunk_ids
    from exo_private.declared_facts(doc_id) with ordinality d (subject, attribute, value, chunk_id, n);
    if attrs is null then
        return 0;  -- most documents declare nothing: no call into Python
    end if;
    for fact in
        select p.n, p.attribute, p.value, p.valid_from, p.valid_to
        from exo_private.fact_periods(
            attrs, vals, current_date,
            (select s.value #>> '{}' from exo_private.settings s where s.key = 'banding.numeric_date_order')) p
        -- the values still valid first: record_fact closes a new value by a row of its line that
        -- begins later, so a closed row recorded before a value of now could close it
        order by p.valid_to is not null, p.n, p.valid_from
    loop
        source := jsonb_strip_nulls(jsonb_build_object('document_id', doc_id, 'chunk_id', chunk_ids[fact.n]));
        if fact.valid_to is null then
            perform exo_private.record_fact(
                doc.workspace, subjects[fact.n], fact.attribute, fact.value, 'declared',
                coalesce(fact.valid_from, doc.written_at)::timestamp at time zone 'UTC', source);
        else
            perform exo_private.record_closed_fact(
                doc.workspace, subjects[fact.n], fact.attribute, fact.value, 'declared',
                fact.valid_from::timestamp at time zone 'UTC', fact.valid_to::timestamp at time zone 'UTC', source);
        end if;
        recorded := recorded + 1;
    end loop;
    return recorded;
end
$$;
comment on function exo_private.record_declared_facts(bigint) is
    'Record each fact of exo_private.declared_facts(doc_id) (kind declared, in the document''s workspace, '
    'source {document_id, chunk_id}), at midnight UTC: valid from the date its value states ("since ...", '
    'a range to the present), else from the document''s written_at, through record_fact; a value that '
    'states a closed range, and each dated item of a previous_x/former_x/past_x value (as the line x), '
    'through record_closed_fact (exo_private.fact_periods). Returns how many rows it passed on. The '
    'same value again adds only a source; a changed value closes the old row. Nothing is closed for a '
    'key the document no longer has (the audit''s work).';
