-- Temporal facts (issue 15): writing them (record_fact, observe, close_fact) and reading them
-- (exo.facts, exo.fact_history, exo.facts_search). Tables: migrations/0026_create_facts.sql.
--
-- A line is (workspace, subject_key, attribute, kind): each kind keeps its own history, so a
-- newer extracted value never closes an observation; precedence between kinds (observation >
-- declared > extracted) is the reader's to show, never resolved by closing. The row valid at a
-- time t is the line's row with the latest valid_from <= t that was not closed by t (valid_to
-- null or > t); ties go to the row recorded last.

-- exo_private.normalise_attribute: an attribute name as facts store it.
create or replace function exo_private.normalise_attribute(attribute text)
returns text
language sql immutable strict parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    select pg_catalog.left(pg_catalog.btrim(
        pg_catalog.regexp_replace(pg_catalog.lower(attribute), '[\s-]+', '_', 'g'), '_'), 100)
$$;
comment on function exo_private.normalise_attribute(text) is
    'An attribute as facts store it: lower case, runs of whitespace and hyphens as one "_", none at '
    'either end, at most 100 characters (" Home - Town" -> "home_town"); empty for a blank one.';

-- exo_private.check_bridge: refuse a bridge too long to be a caller's list of subjects.
create or replace function exo_private.check_bridge(bridge text[])
returns void
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if cardinality(bridge) > 50 then
        perform exo_private.invalid_argument(format('bridge must name at most 50 subjects, got %s', cardinality(bridge)));
    end if;
    if exists (select 1 from unnest(bridge) b where pg_catalog.length(b) > 200) then
        perform exo_private.invalid_argument('bridge names must be at most 200 characters each');
    end if;
end
$$;
comment on function exo_private.check_bridge(text[]) is
    'Raise invalid_parameter_value for a bridge of more than 50 names or a name over 200 characters.';

-- Writers of a fact line take turns through transaction advisory locks. A line's lock is one of
-- FACT_LOCK_BUCKETS (1,024) keys: a writer of many lines (a batch of observations, the audit
-- closing thousands of facts) takes at most that many locks, where a lock per line ran out of
-- the server's lock table ("out of shared memory") past a few thousand lines. Two lines that
-- share a key only make their writers wait for each other.

-- exo_private.fact_line_bucket: the lock key of a fact line.
create or replace function exo_private.fact_line_bucket(
    p_workspace text, p_subject_key text, p_attribute text, p_kind exo_private.fact_kind
)
returns int
language sql immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    select pg_catalog.hashtext(pg_catalog.jsonb_build_array(p_workspace, p_subject_key, p_attribute, p_kind)::text) & 1023
$$;
comment on function exo_private.fact_line_bucket(text, text, text, exo_private.fact_kind) is
    'The lock key (0..1023) of the fact line (workspace, subject key, attribute, kind): see '
    'exo_private.lock_fact_buckets.';

-- exo_private.lock_fact_buckets: serialise the writers of the lines of these lock keys until commit.
create or replace function exo_private.lock_fact_buckets(buckets int[])
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    -- count: a SQL function's last select would stop at its first row
    select count(pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('exo_private.record_fact'), b.bucket))
    from (select distinct x.bucket from unnest(buckets) x (bucket) order by 1) b
$$;
comment on function exo_private.lock_fact_buckets(int[]) is
    'Take the transaction advisory lock of each key (exo_private.fact_line_bucket) once, in '
    'ascending order: every writer takes all the keys it needs in one call, in one order, so two '
    'writers never wait on each other in a cycle, and the writers of a line take turns, so it keeps '
    'exactly one current row.';

-- exo_private.lock_fact_lines: serialise the writers of many fact lines until commit.
create or replace function exo_private.lock_fact_lines(
    p_workspaces text[], p_subject_keys text[], p_attributes text[], p_kind exo_private.fact_kind
)
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    select exo_private.lock_fact_buckets(array(
        select exo_private.fact_line_bucket(x.workspace, x.key, x.attr, p_kind)
        from unnest(p_workspaces, p_subject_keys, p_attributes) x (workspace, key, attr)))
$$;
comment on function exo_private.lock_fact_lines(text[], text[], text[], exo_private.fact_kind) is
    'Lock the fact lines (p_workspaces[i], p_subject_keys[i], p_attributes[i], p_kind) for this '
    'transaction, all in one call (exo_private.lock_fact_buckets).';

-- exo_private.lock_fact_line: serialise the writers of one fact line until commit.
create or replace function exo_private.lock_fact_line(
    p_workspace text, p_subject_key text, p_attribute text, p_kind exo_private.fact_kind
)
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    select exo_private.lock_fact_lines(array[p_workspace], array[p_subject_key], array[p_attribute], p_kind)
$$;
comment on function exo_private.lock_fact_line(text, text, text, exo_private.fact_kind) is
    'Take the transaction advisory lock of one fact line (workspace, subject key, attribute, kind), '
    'as exo_private.lock_fact_lines does.';

-- exo_private.fact_refusal: why record_fact would refuse a subject, attribute and value (null: it would not).
create or replace function exo_private.fact_refusal(p_subject text, p_attribute text, p_value text)
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select case
        when exo_private.canonical_key(p_subject) is null or pg_catalog.length(p_subject) > 500 then
            format('p_subject must be a name of at most 500 characters, got %s', exo_private.quoted(p_subject))
        when coalesce(exo_private.normalise_attribute(p_attribute), '') = '' then
            format('p_attribute must not be blank, got %s', exo_private.quoted(p_attribute))
        when coalesce(pg_catalog.btrim(p_value), '') = '' then
            format('p_value must not be blank, got %s', exo_private.quoted(p_value))
    end
$$;
comment on function exo_private.fact_refusal(text, text, text) is
    'Why exo_private.record_fact would refuse this subject, attribute and value (a subject with no '
    'canonical key or over 500 characters, a blank attribute or value), naming the argument; null when '
    'it would record them. A writer of many facts (an extraction) skips and counts those it names.';

-- exo_private.attribute_subject: whom an extracted attribute's subject names in its document.
create or replace function exo_private.attribute_subject(p_subject text, p_document_id bigint)
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select case
        -- the name the owner's lines carry in a chat ("Sam", "Me", "user") is the owner
        when exists (select 1
                     from exo_private.documents d
                     join exo_private.chat_identities i
                       on exo_private.canonical_key(i.display_name) = exo_private.canonical_key(p_subject)
                       or exo_private.canonical_key(i.handle) = exo_private.canonical_key(p_subject)
                     join exo_private.people p on p.id = i.person_id and p.is_owner and p.entity_key is not null
                     where d.id = p_document_id and d.conversation_id is not null
                       and exists (select 1 from exo_private.chat_messages m
                                   where m.conversation_id = d.conversation_id and m.identity_id = i.id))
            then (select p.display_name from exo_private.people p where p.is_owner)
        when coalesce(exo_private.canonical_key(p_subject) = any (array['i', 'me', 'my', 'myself']), false)
            then (select p.display_name
                  from exo_private.people p
                  join exo_private.documents d on d.id = p_document_id
                  where p.is_owner and p.entity_key is not null
                    and d.conversation_id is null and not d.metadata ? 'from'
                    and coalesce(exo_private.canonical_key(d.frontmatter ->> 'author') = p.entity_key, true))
        else p_subject
    end
$$;
comment on function exo_private.attribute_subject(text, bigint) is
    'The subject an extracted attribute is about: p_subject itself, but a first-person subject (I, me, '
    'my, myself) is the owner (exo owner) in the owner''s own notes (a document that is no chat window, '
    'no mail with a From header, and has no frontmatter author but the owner); null where the first '
    'person names no one known (a chat window, another author''s text, no owner named). In a chat, the '
    'name or handle of an identity of the owner''s that wrote in it is the owner.';

-- exo_private.checked_fact_kind: the arguments of a fact to record, checked; its kind.
create or replace function exo_private.checked_fact_kind(
    p_workspace text, p_subject text, p_attribute text, p_value text, p_kind text, p_source jsonb
)
returns exo_private.fact_kind
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    problem text := exo_private.fact_refusal(p_subject, p_attribute, p_value);
begin
    perform exo_private.check_workspaces(array[p_workspace]);
    if problem is not null then
        perform exo_private.invalid_argument(problem);
    end if;
    if p_kind is null or not p_kind = any (enum_range(null::exo_private.fact_kind)::text[]) then
        perform exo_private.invalid_argument(
            format('p_kind must be one of observation, declared, extracted, got %s', exo_private.quoted(p_kind)));
    end if;
    if jsonb_typeof(p_source) is distinct from 'object'
       or exists (select 1 from jsonb_each(p_source) e
                  where e.key not in ('document_id', 'chunk_id', 'observation_id')
                     or jsonb_typeof(e.value) <> 'number' or e.value::text !~ '^[1-9][0-9]{0,17}$')
       or not (p_source ?| array['document_id', 'chunk_id', 'observation_id']) then
        perform exo_private.invalid_argument(
            format('p_source must be an object of document_id, chunk_id and observation_id (positive '
                   'integers, at least one), got %s', exo_private.quoted(p_source::text)));
    end if;
    return p_kind::exo_private.fact_kind;
end
$$;
comment on function exo_private.checked_fact_kind(text, text, text, text, text, jsonb) is
    'Raise invalid_parameter_value unless a fact can be recorded as given (a workspace that exists, '
    'what exo_private.fact_refusal accepts, a kind of exo_private.fact_kind, a source object of '
    'document_id, chunk_id and observation_id, positive integers, at least one); returns the kind.';

-- exo_private.add_fact_source: a source of a fact row, once (record_fact, record_closed_fact).
create or replace function exo_private.add_fact_source(p_fact bigint, p_source jsonb)
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    insert into exo_private.fact_sources (fact_id, document_id, chunk_id, observation_id)
    values (p_fact, (p_source ->> 'document_id')::bigint, (p_source ->> 'chunk_id')::bigint,
            (p_source ->> 'observation_id')::bigint)
    on conflict do nothing
$$;
comment on function exo_private.add_fact_source(bigint, jsonb) is
    'Add p_source {document_id, chunk_id, observation_id} (as exo_private.checked_fact_kind accepts '
    'it) as a source of fact row p_fact; nothing when it is one already.';

-- exo_private.record_fact: record a value of a fact line with its source; close, never overwrite.
create or replace function exo_private.record_fact(
    p_workspace text, p_subject text, p_attribute text, p_value text, p_kind text,
    p_valid_from timestamptz, p_source jsonb
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
    held_id bigint;       -- the row valid at p_valid_from
    held_value text;
    later_id bigint;      -- the first row that starts after p_valid_from
    later_from timestamptz;
    fact bigint;
begin
    line_kind := exo_private.checked_fact_kind(p_workspace, p_subject, p_attribute, p_value, p_kind, p_source);
    if p_valid_from is null or not pg_catalog.isfinite(p_valid_from) then
        perform exo_private.invalid_argument(
            format('p_valid_from must be a finite time, got %s', coalesce(p_valid_from::text, 'null')));
    end if;

    perform exo_private.lock_fact_line(p_workspace, key, attr, line_kind);
    select f.id, f.value into held_id, held_value
    from exo_private.facts f
    where f.subject_key = key and f.attribute = attr and f.kind = line_kind and f.workspace = p_workspace
      and f.valid_from <= p_valid_from and (f.valid_to is null or f.valid_to > p_valid_from)
    order by f.valid_from desc, f.id desc
    limit 1;
    if held_value = val then
        -- the same value again: only a source more
        fact := held_id;
    else
        select f.id, f.valid_from into later_id, later_from
        from exo_private.facts f
        where f.subject_key = key and f.attribute = attr and f.kind = line_kind and f.workspace = p_workspace
          and f.valid_from > p_valid_from
        order by f.valid_from, f.id
        limit 1;
        fact := nextval('exo_private.facts_id_seq');
        if later_id is not null then
            -- older than what the line already knows: history, closed by the row after it
            insert into exo_private.facts (id, workspace, subject, subject_key, attribute, value, kind,
                                           valid_from, valid_to, closed_by, close_reason)
            overriding system value
            values (fact, p_workspace, pg_catalog.btrim(p_subject), key, attr, val, line_kind,
                    p_valid_from, later_from, later_id, 'superseded');
        else
            -- the newest value: it closes the line's current row (closed_by is checked at commit);
            -- a value from the very moment the current row began is a correction of it (a source
            -- read again, say by a new extraction model), not a change over time
            update exo_private.facts f
               set valid_to = p_valid_from, closed_by = fact,
                   close_reason = case when f.valid_from = p_valid_from then 'corrected' else 'superseded' end
             where f.subject_key = key and f.attribute = attr and f.kind = line_kind
               and f.workspace = p_workspace and f.valid_to is null;
            insert into exo_private.facts (id, workspace, subject, subject_key, attribute, value, kind, valid_from)
            overriding system value
            values (fact, p_workspace, pg_catalog.btrim(p_subject), key, attr, val, line_kind, p_valid_from);
        end if;
    end if;
    perform exo_private.add_fact_source(fact, p_source);
    return fact;
end
$$;
comment on function exo_private.record_fact(text, text, text, text, text, timestamptz, jsonb) is
    'Record that p_subject''s p_attribute had p_value from p_valid_from (when the source says so), '
    'as a fact of p_kind (observation, declared, extracted) in p_workspace, with p_source '
    '{document_id, chunk_id, observation_id} (at least one); returns the id of the row that holds '
    'the value. The line is (workspace, canonical key of the subject, normalised attribute, kind). '
    'The same value as the row valid at p_valid_from adds only a source; a newer value closes the '
    'line''s current row (superseded; corrected when the current row began at p_valid_from too, so '
    'it was never valid: a source read again) and becomes current; an older one is history, closed '
    'by the row after it. Nothing else is closed. Writers of one line take turns (an advisory lock). '
    'Refuses what exo_private.fact_refusal names.';

-- exo_private.canonical_keys: the canonical keys of many names, in one call.
create or replace function exo_private.canonical_keys(names text[])
returns text[]
language plpython3u immutable strict parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include textnorm
return [canonical_key(name) for name in names]
$$;
comment on function exo_private.canonical_keys(text[]) is
    'exo_private.canonical_key of each name, in order (null for a null name or one with nothing left): '
    'a batch pays for one call into Python, not one per name.';

-- exo_private.observation_problem: the first observation of a batch that cannot be recorded.
create or replace function exo_private.observation_problem(items jsonb, keys text[], attrs text[], fallback text)
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select format('observation %s: %s', e.n, p.why)
    from rows from (jsonb_array_elements(items), unnest(keys), unnest(attrs)) with ordinality e (item, key, attr, n)
    cross join lateral (select coalesce(e.item ->> 'workspace', fallback) as workspace) f
    cross join lateral (
        select case
            when jsonb_typeof(e.item) <> 'object' then format('must be a JSON object, got %s', jsonb_typeof(e.item))
            when e.item - array['subject', 'attribute', 'value', 'observed_at', 'source', 'workspace'] <> '{}' then
                format('unknown field %s (the fields: subject, attribute, value, observed_at, source, workspace)',
                       exo_private.quoted((select k from jsonb_object_keys(e.item) k
                                           where k not in ('subject', 'attribute', 'value', 'observed_at',
                                                           'source', 'workspace')
                                           order by k limit 1)))
            when not e.item ?& array['subject', 'attribute', 'value', 'observed_at', 'source'] then
                format('%s is missing', (select k from unnest(array['subject', 'attribute', 'value', 'observed_at',
                                                                    'source']) k
                                         where not e.item ? k limit 1))
            when e.key is null or pg_catalog.length(e.item ->> 'subject') > 500 then
                'subject must be a name (a string of at most 500 characters)'
            when e.attr is null or e.attr = '' then
                'attribute must be a non-blank string'
            when jsonb_typeof(e.item -> 'value') not in ('string', 'number', 'boolean')
                 or pg_catalog.btrim(e.item ->> 'value') = '' then
                'value must be a non-blank string, a number or a boolean'
            when jsonb_typeof(e.item -> 'observed_at') <> 'string'
                 or not pg_input_is_valid(e.item ->> 'observed_at', 'timestamptz') then
                format('observed_at must be a timestamp, got %s', exo_private.quoted((e.item -> 'observed_at')::text))
            when not pg_catalog.isfinite((e.item ->> 'observed_at')::timestamptz) then
                format('observed_at must be a finite timestamp, got %s', exo_private.quoted(e.item ->> 'observed_at'))
            when jsonb_typeof(e.item -> 'source') <> 'string' or pg_catalog.btrim(e.item ->> 'source') = '' then
                'source must be a non-blank string (who or what observed it)'
            when not exists (select 1 from exo_private.workspaces w where w.name = f.workspace) then
                format('workspace %s does not exist', exo_private.quoted(f.workspace))
        end as why
    ) p
    where p.why is not null
    order by e.n
    limit 1
$$;
comment on function exo_private.observation_problem(jsonb, text[], text[], text) is
    'observe''s check of a batch (items: a JSON array; keys and attrs: each item''s subject key and '
    'normalised attribute, null where it has none; fallback: the workspace of an item without one): '
    '"observation N: why" for the first item that cannot be recorded, null when every one can.';

-- exo_private.observation_lines: the line of each observation of a batch.
create or replace function exo_private.observation_lines(
    items jsonb, fallback text, out spaces text[], out keys text[], out attrs text[]
)
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    names text[];  -- the batch's distinct subjects
begin
    -- Each distinct subject goes through Python once, each distinct attribute through
    -- normalise_attribute once (a probe reports many attributes of a few hosts).
    names := array(select distinct e.item ->> 'subject' from jsonb_array_elements(items) e (item)
                    where jsonb_typeof(e.item -> 'subject') = 'string');
    select array_agg(coalesce(e.item ->> 'workspace', fallback) order by e.n),
           array_agg(k.key order by e.n), array_agg(a.attr order by e.n)
      into spaces, keys, attrs
    from jsonb_array_elements(items) with ordinality e (item, n)
    left join unnest(names, exo_private.canonical_keys(names)) k (name, key)
      on jsonb_typeof(e.item -> 'subject') = 'string' and k.name = e.item ->> 'subject'
    left join (select a.name, exo_private.normalise_attribute(a.name) as attr
               from (select distinct x.item ->> 'attribute' from jsonb_array_elements(items) x (item)
                     where jsonb_typeof(x.item -> 'attribute') = 'string') a (name)) a
      on jsonb_typeof(e.item -> 'attribute') = 'string' and a.name = e.item ->> 'attribute';
end
$$;
comment on function exo_private.observation_lines(jsonb, text) is
    'observe''s lines of a batch (items: a JSON array), in its order: each item''s workspace (fallback '
    'where it names none), subject key (canonical_keys) and attribute (normalise_attribute), null '
    'where the item has no string subject or attribute.';

-- exo_private.observation_runs: a batch of observations, each with its line's current row and its run.
create or replace function exo_private.observation_runs(
    items jsonb, ids bigint[], keys text[], attrs text[], fallback text
)
returns table (id bigint, workspace text, subject text, attribute text, key text, attr text, value text,
               observed_at timestamptz, source text, current_id bigint, extends boolean, run bigint)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- By record_fact's rule: in time order, a run of equal values is one fact row (a run that
    -- repeats the current value, run 0, only adds sources to it) and each run closes the one
    -- before it (the first run closes the current row) at its start.
    with parsed as materialized (
        select e.id, coalesce(e.item ->> 'workspace', fallback) as workspace,
               pg_catalog.btrim(e.item ->> 'subject') as subject, e.item ->> 'attribute' as attribute,
               e.key, e.attr, pg_catalog.btrim(e.item ->> 'value') as value,
               (e.item ->> 'observed_at')::timestamptz as observed_at, pg_catalog.btrim(e.item ->> 'source') as source
        from rows from (jsonb_array_elements(items), unnest(ids), unnest(keys), unnest(attrs))
             e (item, id, key, attr)
    ), batch as materialized (
        select p.*, c.id as current_id, c.value as current_value, c.valid_from as current_from
        from parsed p
        left join exo_private.facts c
          on c.subject_key = p.key and c.attribute = p.attr and c.kind = 'observation'
         and c.workspace = p.workspace and c.valid_to is null
    ), lined as (
        select b.*, min(b.observed_at) over line as first_at,
               coalesce(lag(b.value) over ordered, b.current_value) is distinct from b.value as starts
        from batch b
        window line as (partition by b.workspace, b.key, b.attr),
               ordered as (partition by b.workspace, b.key, b.attr order by b.observed_at, b.id)
    ), judged as materialized (
        -- the batch only extends a new line, and one whose current row began no later than the
        -- batch's first value for it
        select l.*,
               coalesce(l.current_from <= l.first_at,
                        not exists (select 1 from exo_private.facts f
                                    where f.subject_key = l.key and f.attribute = l.attr
                                      and f.kind = 'observation' and f.workspace = l.workspace)) as extends
        from lined l
    )
    select j.id, j.workspace, j.subject, j.attribute, j.key, j.attr, j.value, j.observed_at, j.source,
           j.current_id, j.extends, case when j.extends then count(*) filter (where j.starts) over ordered end
    from judged j
    window ordered as (partition by j.workspace, j.key, j.attr order by j.observed_at, j.id)
    order by j.workspace, j.key, j.attr, j.observed_at, j.id
$$;
comment on function exo_private.observation_runs(jsonb, bigint[], text[], text[], text) is
    'observe''s batch (items, with ids[i], keys[i] and attrs[i] the i-th item''s observation id, subject '
    'key and attribute; fallback the workspace of an item without one) as observations are recorded '
    '(subject, value and source trimmed), each with the current row of its line (current_id), whether '
    'the batch only extends the line (extends: a new line, or one whose current row began no later than '
    'the batch''s first value for it) and, if so, its run in time order: a run of equal values is one '
    'fact row, run 0 repeats the current row''s value. In line and time order.';

-- exo_private.record_observation_runs: write a batch's observations, and the lines it only extends.
create or replace function exo_private.record_observation_runs(
    items jsonb, ids bigint[], keys text[], attrs text[], fallback text,
    out observation_ids bigint[], out fact_ids bigint[], out one_by_one bigint[]
)
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    -- the fact rows of the lines the batch only extends, column by column (arrays, not jsonb:
    -- no round trip of every value through text)
    new_ids bigint[];
    new_spaces text[];
    new_subjects text[];
    new_keys text[];
    new_attrs text[];
    new_values text[];
    new_froms timestamptz[];
    new_tos timestamptz[];
    new_bys bigint[];
    close_ids bigint[];    -- their current rows the batch closes: when, and by which row
    close_tos timestamptz[];
    close_bys bigint[];
begin
    -- The observations are written, and the fact rows of the lines the batch only extends are
    -- worked out at once from its runs (observation_runs): each run is a row, closed when the next
    -- run of its line begins; the first closes the line's current row.
    with batch as materialized (
        select * from exo_private.observation_runs(items, ids, keys, attrs, fallback)
    ), inserted as (
        insert into exo_private.observations (id, workspace, subject, attribute, value, observed_at, source)
        overriding system value
        select b.id, b.workspace, b.subject, b.attribute, b.value, b.observed_at, b.source
        from batch b
        order by b.id
    ), runs as materialized (
        -- ids in time order within a line, as one by one would give them
        select g.*, nextval('exo_private.facts_id_seq') as id
        from (select r.workspace, r.key, r.attr, r.run, min(r.current_id) as current_id,
                     (array_agg(r.subject order by r.observed_at, r.id))[1] as subject,
                     min(r.value) as value, min(r.observed_at) as valid_from, array_agg(r.id) as observations
              from batch r
              where r.run > 0
              group by r.workspace, r.key, r.attr, r.run
              order by r.workspace, r.key, r.attr, r.run) g
    ), chained as materialized (
        select u.*, lead(u.valid_from) over w as valid_to, lead(u.id) over w as closed_by,
               lag(u.id) over w is null as first
        from runs u
        window w as (partition by u.workspace, u.key, u.attr order by u.run)
    )
    select n.ids, n.spaces, n.subjects, n.keys, n.attrs, n.vals, n.froms, n.tos, n.bys,
           k.ids, k.tos, k.bys, x.facts, x.observations, array(select b.id from batch b where not b.extends)
      into new_ids, new_spaces, new_subjects, new_keys, new_attrs, new_values, new_froms, new_tos, new_bys,
           close_ids, close_tos, close_bys, fact_ids, observation_ids, one_by_one
    from (select array_agg(c.id) as ids, array_agg(c.workspace) as spaces, array_agg(c.subject) as subjects,
                 array_agg(c.key) as keys, array_agg(c.attr) as attrs, array_agg(c.value) as vals,
                 array_agg(c.valid_from) as froms, array_agg(c.valid_to) as tos, array_agg(c.closed_by) as bys
          from chained c) n,
         (select array_agg(c.current_id) as ids, array_agg(c.valid_from) as tos, array_agg(c.id) as bys
          from chained c where c.first and c.current_id is not null) k,
         (select array_agg(s.fact_id) as facts, array_agg(s.observation_id) as observations
          from (select c.id as fact_id, k.id as observation_id from chained c, unnest(c.observations) k (id)
                union all
                select r.current_id, r.id from batch r where r.run = 0) s) x;
    update exo_private.facts f
       set valid_to = c.valid_to, closed_by = c.closed_by,
           close_reason = case when f.valid_from = c.valid_to then 'corrected' else 'superseded' end
      from unnest(close_ids, close_tos, close_bys) c (id, valid_to, closed_by)
     where f.id = c.id;
    insert into exo_private.facts (id, workspace, subject, subject_key, attribute, value, kind,
                                   valid_from, valid_to, closed_by, close_reason)
    overriding system value
    select r.id, r.workspace, r.subject, r.subject_key, r.attribute, r.value, 'observation',
           r.valid_from, r.valid_to, r.closed_by,
           case when r.valid_to = r.valid_from then 'corrected' when r.closed_by is not null then 'superseded' end
    from unnest(new_ids, new_spaces, new_subjects, new_keys, new_attrs, new_values, new_froms, new_tos, new_bys)
         r (id, workspace, subject, subject_key, attribute, value, valid_from, valid_to, closed_by);
    insert into exo_private.fact_sources (fact_id, observation_id)
    select s.fact_id, s.observation_id
    from unnest(fact_ids, observation_ids) s (fact_id, observation_id);
end
$$;
comment on function exo_private.record_observation_runs(jsonb, bigint[], text[], text[], text) is
    'observe''s set-based part, its batch''s lines locked (arguments as observation_runs takes them): '
    'write every observation of the batch (observations, with the ids given) and, for the lines the '
    'batch only extends, a fact row per run, each closed by the next (superseded; corrected when both '
    'begin at once), the first closing the line''s current row, and a source per observation (run 0: '
    'the current row). Returns the sources written, in order (observation_ids[i] of fact_ids[i]), and '
    'the ids of the observations of the other lines (one_by_one), which record_fact must record.';

-- exo_private.observe: record observations, as facts of kind observation.
create or replace function exo_private.observe(observations jsonb)
returns table (observation_id bigint, fact_id bigint)
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    items jsonb := case jsonb_typeof(observations) when 'object' then jsonb_build_array(observations)
                                                   when 'array' then observations end;
    fallback text;
    problem text;
    recorded bigint[];  -- the observations' ids, workspaces, subject keys and attributes, in input order
    spaces text[];
    keys text[];
    attrs text[];
    written record;  -- what record_observation_runs wrote, and left to record_fact
    o exo_private.observations;
begin
    if items is null then
        perform exo_private.invalid_argument(format(
            'observations must be a JSON object or an array of objects, got %s',
            coalesce(jsonb_typeof(observations), 'null')));
    end if;
    if jsonb_array_length(items) = 0 then
        return;
    end if;
    select s.value #>> '{}' into fallback from exo_private.settings s where s.key = 'facts.observation_workspace';
    -- The workspaces, subject keys and attributes of the lines, once for the batch (null where
    -- none is given).
    select l.spaces, l.keys, l.attrs into spaces, keys, attrs from exo_private.observation_lines(items, fallback) l;
    -- The first observation that cannot be recorded, and why; then none is.
    problem := exo_private.observation_problem(items, keys, attrs, fallback);
    if problem is not null then
        perform exo_private.invalid_argument(problem);
    end if;

    recorded := array(select nextval('exo_private.observations_id_seq')
                      from generate_series(1, jsonb_array_length(items)));

    -- Every line of the batch locked, in one call.
    perform exo_private.lock_fact_lines(spaces, keys, attrs, 'observation');

    -- The observations are written and the lines the batch only extends (new lines, and lines
    -- whose current row began no later than the batch's first value for them) get their fact rows
    -- at once, by record_fact's rule; observations of other lines go through record_fact one by one.
    written := exo_private.record_observation_runs(items, recorded, keys, attrs, fallback);
    return query select s.observation_id, s.fact_id
                 from unnest(written.observation_ids, written.fact_ids) s (observation_id, fact_id);

    for o in
        select x.* from exo_private.observations x
        where x.id = any (written.one_by_one)
        order by x.workspace, exo_private.canonical_key(x.subject), exo_private.normalise_attribute(x.attribute),
                 x.observed_at, x.id
    loop
        observation_id := o.id;
        fact_id := exo_private.record_fact(o.workspace, o.subject, o.attribute, o.value, 'observation',
                                           o.observed_at, jsonb_build_object('observation_id', o.id));
        return next;
    end loop;
end
$$;
comment on function exo_private.observe(jsonb) is
    'Record observations: one JSON object or an array of them, each {subject, attribute, value '
    '(a string, number or boolean), observed_at (a timestamp), source (who or what observed it), '
    'workspace (default: the facts.observation_workspace setting)}. Each becomes a row of '
    'exo_private.observations and a fact of kind observation valid from observed_at, by the rule of '
    'exo_private.record_fact (the lines a batch only extends are written set-based, the others one '
    'observation at a time). All or nothing: the first bad observation is refused by its number and '
    'field. Returns observation_id and fact_id per observation.';

-- exo_private.close_fact: a fact that stopped being true with no new value.
create or replace function exo_private.close_fact(
    p_workspace text, p_subject text, p_attribute text, p_at timestamptz, p_why text
)
returns int
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    key text := exo_private.canonical_key(p_subject);
    attr text := exo_private.normalise_attribute(p_attribute);
    early text;
    closed int;
begin
    if p_workspace is not null then
        perform exo_private.check_workspaces(array[p_workspace]);
    end if;
    if key is null then
        perform exo_private.invalid_argument(format('p_subject must be a name, got %s', exo_private.quoted(p_subject)));
    end if;
    if attr is null or attr = '' then
        perform exo_private.invalid_argument(
            format('p_attribute must not be blank, got %s', exo_private.quoted(p_attribute)));
    end if;
    if p_at is null or not pg_catalog.isfinite(p_at) then
        perform exo_private.invalid_argument(format('p_at must be a finite time, got %s', coalesce(p_at::text, 'null')));
    end if;
    perform exo_private.lock_fact_buckets(array(
        select exo_private.fact_line_bucket(f.workspace, key, attr, f.kind) from exo_private.facts f
        where f.subject_key = key and f.attribute = attr and f.valid_to is null
          and (p_workspace is null or f.workspace = p_workspace)));
    select format('%s (%s, %s)', f.valid_from, f.workspace, f.kind) into early
    from exo_private.facts f
    where f.subject_key = key and f.attribute = attr and f.valid_to is null
      and (p_workspace is null or f.workspace = p_workspace) and f.valid_from > p_at
    limit 1;
    if early is not null then
        perform exo_private.invalid_argument(
            format('p_at %s is before the current value''s valid_from %s', p_at, early),
            'a value that ended before it began is a mistake in one of them');
    end if;
    update exo_private.facts f
       set valid_to = p_at, close_reason = 'closed' || coalesce(': ' || nullif(pg_catalog.btrim(p_why), ''), '')
     where f.subject_key = key and f.attribute = attr and f.valid_to is null
       and (p_workspace is null or f.workspace = p_workspace);
    get diagnostics closed = row_count;
    if closed = 0 then
        perform exo_private.invalid_argument(
            format('%s has no current %s fact%s', exo_private.quoted(p_subject), exo_private.quoted(attr),
                   coalesce(' in workspace ' || p_workspace, '')));
    end if;
    return closed;
end
$$;
comment on function exo_private.close_fact(text, text, text, timestamptz, text) is
    'Close the current rows of p_subject''s p_attribute in p_workspace (null: every workspace) at '
    'p_at, for a fact that stopped being true with no new value: every kind''s current row closes '
    '(the fact itself ended, whoever recorded it), with close_reason ''closed: p_why'' (''closed'' '
    'when p_why is blank) and no closed_by. Returns how many rows closed; raises when none is '
    'current or p_at is before a current row''s valid_from.';

-- exo_private.fact_hints: what the facts API says is withheld, the same whatever is asked.
create or replace function exo_private.fact_hints(bridge text[])
returns table (subject text, keys text[], hint jsonb)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- One per deferred subject the bridge leaves closed that has current facts of its own (by a
    -- name or an alias), counted. Never a count of the withheld facts among those asked: a fact
    -- is withheld also for its words or its sources, and a count of those about the subject or
    -- words asked would tell, one guess a call, what withheld text says of them.
    -- A subject only a frontmatter charges (no deferred-list entry) counts too, as in search.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as (
        select c.subject, c.key from exo_private.closed_subject_keys(bridge) c
        union
        select t.subject, exo_private.canonical_key(t.subject)
        from exo_private.charged_tallies t cross join released r
        where t.n > 0 and exo_private.unreleased(array[t.subject], r.keys) <> '{}'
          and exo_private.canonical_key(t.subject) is not null
    )
    select k.subject, k.keys,
           jsonb_build_object('subject', k.subject, 'facts', n.facts, 'how', exo_private.hint_how(k.subject))
    from (select c.subject, array_agg(distinct c.key order by c.key) as keys from closed c group by c.subject) k
    cross join lateral (
        select count(*) as facts from exo_private.facts f where f.subject_key = any (k.keys) and f.valid_to is null
    ) n
    where n.facts > 0
$$;
comment on function exo_private.fact_hints(text[]) is
    'Per subject the bridge leaves closed (deferred, or charged by a frontmatter) that has current '
    'facts whose subject is one of its names or aliases (keys, canonical): {subject, facts, how}, the hints of exo.facts, '
    'fact_history, facts_search and the packet''s facts, whatever they are asked.';

-- exo_private.shown_facts: fact rows as a caller may see them.
create or replace function exo_private.shown_facts(ids bigint[], bridge text[])
returns table (
    ord bigint, fact_id bigint, workspace text, subject text, attribute text, kind text, value text,
    valid_from timestamptz, valid_to timestamptz, recorded_at timestamptz, closed_by bigint,
    close_reason text, sources jsonb
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A fact about a closed deferred subject is withheld whatever its sources: its subject is one
    -- of the subject's names or aliases, or its words (subject, attribute, value) name one near a
    -- cue, the rule that charges a chunk (plpy/deference.py); so a declared or observed value is
    -- judged like text. Otherwise a source is closed by the rule of its evidence: a chunk (a
    -- document's or a chat window's) while it is charged for a closed subject; a document (no
    -- chunk, or its chunk is gone) while exo_private.closed_documents says so; an observation
    -- never. A fact is withheld when every source of it is closed; a fact shown lists only its
    -- open sources, and a document's path and title only while the document is not closed.
    with asked as materialized (
        select i.ord, f.*
        from unnest(ids) with ordinality i (id, ord)
        join exo_private.facts f on f.id = i.id
    ), names as materialized (
        select n.subject, n.key, exo_private.phrase_pattern(n.name) as pattern
        from exo_private.closed_subject_names(bridge) n
    ), cues as materialized (
        select exo_private.cue_pattern() as pattern
    ), about as materialized (
        select a.id, n.subject
        from asked a
        join names n on n.key = a.subject_key
        union
        select a.id, n.subject
        from asked a
        cross join cues c
        cross join lateral (select a.subject || ' ' || pg_catalog.replace(a.attribute, '_', ' ') || ' '
                                   || a.value as words) w
        join names n on w.words ~* n.pattern
        where w.words ~* c.pattern
    ), sourced as materialized (
        select a.id as fact_id, s.document_id, s.chunk_id, s.observation_id, s.recorded_at,
               c.id is not null as chunk_found, c.charged_subjects, d.path, d.title, d.written_at,
               -- only a document that charges something may be closed (exo_private.closed_documents)
               d.frontmatter ? 'charged'
               or exists (select 1 from exo_private.chunks x
                          where x.workspace = d.workspace and x.document_id = d.id and x.charged_subjects <> '{}')
                   as document_charged
        from asked a
        join exo_private.fact_sources s on s.fact_id = a.id
        left join exo_private.chunks c on c.workspace = a.workspace and c.id = s.chunk_id
        left join exo_private.documents d on d.id = s.document_id
    ), charged_documents as materialized (
        select array(select distinct s.document_id from sourced s where s.document_charged) as ids
    ), closed_docs as materialized (
        select k.document_id, k.withheld
        from charged_documents x
        cross join lateral exo_private.closed_documents(x.ids, bridge) k
        where x.ids <> '{}'
    ), judged as materialized (
        -- the bridge's keys are worked out only when a source chunk is charged
        select s.*, k.document_id is not null as document_closed,
               case when s.chunk_found and s.charged_subjects = '{}' then '{}'::text[]
                    when s.chunk_found
                        then exo_private.unreleased(s.charged_subjects, (select exo_private.released_keys(bridge)))
                    else coalesce(k.withheld, '{}') end as held
        from sourced s
        left join closed_docs k on k.document_id = s.document_id
    ), verdicts as materialized (
        select a.id,
               not exists (select 1 from about t where t.id = a.id)
               and coalesce(bool_or(j.held = '{}'), true) as shown
        from asked a
        left join judged j on j.fact_id = a.id
        group by a.id
    )
    select a.ord, a.id, a.workspace, a.subject, a.attribute, a.kind::text, a.value, a.valid_from,
           a.valid_to, a.recorded_at, a.closed_by, a.close_reason,
           coalesce((
               select jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                          'document_id', j.document_id, 'chunk_id', j.chunk_id,
                          'path', case when not j.document_closed then j.path end,
                          'title', case when not j.document_closed then j.title end,
                          'written_at', j.written_at, 'observation_id', j.observation_id,
                          'source', o.source, 'recorded_at', j.recorded_at))
                      order by j.recorded_at, j.document_id, j.chunk_id, j.observation_id)
               from judged j
               left join exo_private.observations o on o.id = j.observation_id
               where j.fact_id = a.id and j.held = '{}'), '[]'::jsonb)
    from asked a
    join verdicts v on v.id = a.id
    where v.shown
$$;
comment on function exo_private.shown_facts(bigint[], text[]) is
    'The fact rows ids (ord: their position) as a caller whose bridge opens released subjects may see '
    'them: each with its open sources (document_id, chunk_id, path, title, written_at, observation_id, '
    'source, recorded_at). Left out: a fact about a deferred subject the bridge leaves closed (its '
    'subject is one of the subject''s names or aliases, or its words name one near a cue), and a fact '
    'whose every source is closed (a chunk charged for such a subject, a closed document; an '
    'observation is judged by its words alone). Its callers add exo_private.fact_hints.';

-- exo_private.facts_as_of: the ids of a subject's facts valid at a time, one per line.
create or replace function exo_private.facts_as_of(p_subject text, p_as_of timestamptz, p_bridge text[])
returns bigint[]
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    key text := exo_private.canonical_key(p_subject);
    moment timestamptz := coalesce(p_as_of, pg_catalog.now());
begin
    perform exo_private.check_bridge(p_bridge);
    if key is null then
        perform exo_private.invalid_argument(format('subject must be a name, got %s', exo_private.quoted(p_subject)));
    end if;
    return array(
        select c.id
        from (select distinct on (f.workspace, f.attribute, f.kind) f.id, f.workspace, f.attribute, f.kind
              from exo_private.facts f
              where f.subject_key = key
                and f.valid_from <= moment and (f.valid_to is null or f.valid_to > moment)
              order by f.workspace, f.attribute, f.kind, f.valid_from desc, f.id desc) c
        order by c.attribute, c.kind, c.workspace);
end
$$;
comment on function exo_private.facts_as_of(text, timestamptz, text[]) is
    'The ids of p_subject''s fact rows valid at p_as_of (null: now), one per workspace, attribute and '
    'kind, by attribute then precedence; raises invalid_parameter_value for a blank subject or a bad bridge.';

-- exo.facts: a subject's facts valid at a time, with their sources.
create or replace function exo.facts(subject text, as_of timestamptz default now(), bridge text[] default '{}')
returns table (
    fact_id bigint, workspace text, subject text, attribute text, kind text, value text,
    valid_from timestamptz, valid_to timestamptz, recorded_at timestamptz, sources jsonb, withheld jsonb
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    -- as of a past moment a row's end is not known yet: valid_to only when it came by then
    select y.fact_id, y.workspace, y.subject, y.attribute, y.kind, y.value, y.valid_from, y.valid_to,
           y.recorded_at, y.sources, y.withheld
    from (
        select 0 as part, x.ord, x.fact_id, x.workspace, x.subject, x.attribute, x.kind, x.value, x.valid_from,
               case when x.valid_to <= $2 then x.valid_to end as valid_to, x.recorded_at, x.sources,
               null::jsonb as withheld
        from exo_private.shown_facts(exo_private.facts_as_of($1, $2, $3), $3) x
        union all
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null, null, null,
               null, h.hint
        from exo_private.fact_hints($3) h
    ) y
    order by y.part, y.ord
$$;
comment on function exo.facts(text, timestamptz, text[]) is
    'What is true of a subject (matched by canonical key: case and spacing ignored) as of as_of '
    '(default now): per workspace, attribute and kind the value valid then, by attribute and then '
    'precedence (observation, declared, extracted; kinds that disagree are all shown, never '
    'resolved): fact_id, workspace, subject, attribute, kind, value, valid_from, valid_to (null: '
    'still current as of as_of: an end after as_of is not told), recorded_at, sources (document_id, chunk_id, path, title, written_at, '
    'observation_id, source, recorded_at), withheld (null). Care: a fact about a deferred subject (its '
    'subject is one of the subject''s names or aliases, or its words name one near a cue) or whose '
    'every source is charged for one is left out unless bridge names the subject; whatever the '
    'subject asked, one last row per deferred subject left closed that has current facts of its own '
    'has only withheld: {subject, facts (those, counted), how}. Next: exo.fact_history(subject, attribute).';

-- exo_private.fact_line_ids: the ids of every row of a subject's attribute.
create or replace function exo_private.fact_line_ids(p_subject text, p_attribute text, p_bridge text[])
returns bigint[]
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    key text := exo_private.canonical_key(p_subject);
    attr text := exo_private.normalise_attribute(p_attribute);
begin
    perform exo_private.check_bridge(p_bridge);
    if key is null then
        perform exo_private.invalid_argument(format('subject must be a name, got %s', exo_private.quoted(p_subject)));
    end if;
    if attr is null or attr = '' then
        perform exo_private.invalid_argument(format('attribute must not be blank, got %s', exo_private.quoted(p_attribute)));
    end if;
    return array(
        select f.id from exo_private.facts f
        where f.subject_key = key and f.attribute = attr
        order by f.kind, f.workspace, f.valid_from, f.id);
end
$$;
comment on function exo_private.fact_line_ids(text, text, text[]) is
    'The ids of every row of p_subject''s p_attribute (all kinds and workspaces), by kind, workspace '
    'and valid_from; raises invalid_parameter_value for a blank subject or attribute or a bad bridge.';

-- exo.fact_history: every value a subject's attribute had, and what closed each.
create or replace function exo.fact_history(
    subject text, attribute text, bridge text[] default '{}', as_of timestamptz default null
)
returns table (
    fact_id bigint, workspace text, subject text, attribute text, kind text, value text,
    valid_from timestamptz, valid_to timestamptz, recorded_at timestamptz, closed_by bigint,
    close_reason text, sources jsonb, withheld jsonb
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    -- as_of: the rows begun by then, an end after it not told (nor what ended them)
    select y.fact_id, y.workspace, y.subject, y.attribute, y.kind, y.value, y.valid_from, y.valid_to,
           y.recorded_at, y.closed_by, y.close_reason, y.sources, y.withheld
    from (
        select 0 as part, x.ord, x.fact_id, x.workspace, x.subject, x.attribute, x.kind, x.value, x.valid_from,
               case when $4 is null or x.valid_to <= $4 then x.valid_to end as valid_to,
               x.recorded_at,
               case when $4 is null or x.valid_to <= $4 then x.closed_by end as closed_by,
               case when $4 is null or x.valid_to <= $4 then x.close_reason end as close_reason,
               x.sources, null::jsonb as withheld
        from exo_private.shown_facts(exo_private.fact_line_ids($1, $2, $3), $3) x
        where $4 is null or x.valid_from <= $4
        union all
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null, null, null,
               null, null, null, h.hint
        from exo_private.fact_hints($3) h
    ) y
    order by y.part, y.ord
$$;
comment on function exo.fact_history(text, text, text[], timestamptz) is
    'The whole history of a subject''s attribute (subject by canonical key, attribute normalised: '
    '"Home Town" is home_town), every kind and workspace, oldest first per kind: fact_id, workspace, '
    'subject, attribute, kind, value, valid_from, valid_to (null: current), recorded_at, closed_by '
    '(the row that superseded it), close_reason (superseded, or closed: why), sources, withheld '
    '(null). Care as in exo.facts: rows about a deferred subject, or whose every source is charged, '
    'are left out unless bridged, and the same last rows whatever is asked: {subject, facts, how}. as_of: only the rows begun by then, and an end after it (valid_to, closed_by, '
    'close_reason) not told; null: all.';

-- exo_private.matching_facts: the ids of current facts that hold a question's words, best first.
create or replace function exo_private.matching_facts(p_query text, p_max int, p_bridge text[], p_as_of timestamptz)
returns bigint[]
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    question text := pg_catalog.left(p_query, 1000);
    words tsquery;
begin
    perform exo_private.check_bridge(p_bridge);
    if question is null then
        perform exo_private.invalid_argument('query must not be null');
    end if;
    if p_max is null or p_max not between 1 and 200 then
        perform exo_private.invalid_argument(
            format('max_results must be between 1 and 200, got %s', coalesce(p_max::text, 'null')));
    end if;
    -- any word counts: the words of plainto_tsquery joined by "or" instead of "and"
    words := pg_catalog.replace(pg_catalog.plainto_tsquery('simple', question)::text, ' & ', ' | ')::tsquery;
    if pg_catalog.numnode(words) = 0 then
        return '{}'::bigint[];
    end if;
    -- Every match is judged (exo.facts_search shows the best p_max of those a caller may see), so
    -- withheld facts never take the place of visible ones; past 10,000 a query is too broad to rank.
    -- The current rows are found through facts_words_idx; as of a past moment, the rows closed
    -- since then too, without an index (a time-travel query is rare).
    return array(
        select m.id
        from (
            select f.id, f.valid_from, pg_catalog.to_tsvector('simple'::regconfig, f.subject || ' '
                       || pg_catalog.replace(f.attribute, '_', ' ') || ' ' || f.value) as doc
            from exo_private.facts f
            where f.valid_to is null and (p_as_of is null or f.valid_from <= p_as_of)
              and pg_catalog.to_tsvector('simple'::regconfig, f.subject || ' '
                      || pg_catalog.replace(f.attribute, '_', ' ') || ' ' || f.value) @@ words
            union all
            select f.id, f.valid_from, pg_catalog.to_tsvector('simple'::regconfig, f.subject || ' '
                       || pg_catalog.replace(f.attribute, '_', ' ') || ' ' || f.value)
            from exo_private.facts f
            where p_as_of is not null and f.valid_to > p_as_of and f.valid_from <= p_as_of
              and pg_catalog.to_tsvector('simple'::regconfig, f.subject || ' '
                      || pg_catalog.replace(f.attribute, '_', ' ') || ' ' || f.value) @@ words
        ) m
        order by pg_catalog.ts_rank(m.doc, words) desc, m.valid_from desc, m.id desc
        limit 10000);
end
$$;
comment on function exo_private.matching_facts(text, int, text[], timestamptz) is
    'The ids of at most 10,000 fact rows current at p_as_of (null: now) whose subject, attribute or value hold any word of '
    'p_query (its first 1,000 characters; simple text search, no stemming), best ranked first; raises '
    'invalid_parameter_value for a null query, p_max outside 1..200 or a bad bridge.';

-- exo.facts_search: current facts whose subject, attribute or value hold the words.
create or replace function exo.facts_search(
    query text, max_results int default 20, bridge text[] default '{}', as_of timestamptz default null
)
returns table (
    fact_id bigint, workspace text, subject text, attribute text, kind text, value text,
    valid_from timestamptz, valid_to timestamptz, recorded_at timestamptz, sources jsonb, withheld jsonb
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    -- The hints say what is withheld in the whole of the facts, never which withheld fact holds a
    -- word of the query (exo_private.fact_hints).
    with shown as (
        select s.*, row_number() over (order by s.ord) as shown_rank
        from exo_private.shown_facts(exo_private.matching_facts($1, $2, $3, $4), $3) s
    )
    -- as of a past moment a row's end is not known yet (as exo.facts)
    select x.fact_id, x.workspace, x.subject, x.attribute, x.kind, x.value, x.valid_from,
           case when $4 is null or x.valid_to <= $4 then x.valid_to end, x.recorded_at, x.sources, x.withheld
    from (select s.fact_id, s.workspace, s.subject, s.attribute, s.kind, s.value, s.valid_from, s.valid_to,
                 s.recorded_at, s.sources, null::jsonb as withheld, s.shown_rank as n
          from shown s
          where s.shown_rank <= $2
          union all
          select null, null, null, null, null, null, null, null, null, null, h.hint,
                 $2 + row_number() over (order by h.subject)
          from exo_private.fact_hints($3) h) x
    order by x.n
$$;
comment on function exo.facts_search(text, int, text[], timestamptz) is
    'Current facts whose subject, attribute or value hold any word of query (its first 1,000 '
    'characters; whole words, no stemming), best ranked first, at most max_results (1..200): the '
    'columns of exo.facts. A blank query finds nothing. Care as in exo.facts: a fact about a deferred '
    'subject, or whose every source is charged, is left out unless bridge names the subject, and never '
    'takes a visible fact''s place. The last rows have only withheld: {subject, facts, how}, one per '
    'deferred subject left closed that has current facts (facts: how many), whatever the query: which '
    'words a withheld fact holds is never told. as_of: the facts current then instead (an end after '
    'it not told); null: now. Next: exo.facts(subject), exo.fact_history(subject, attribute).';

-- A subject is found however the question writes an identifier in its name: "ORTAND-88",
-- "ortand 88" and "Ortand88" all find `order ortand-88`. Its forms: the whole key without
-- spaces or punctuation, and each of its word-final runs that holds a letter and a digit.
create or replace function exo_private.key_forms(key text) returns text[]
language sql immutable strict parallel safe
begin atomic
    select array_agg(distinct f.form order by f.form)
    from (
        select pg_catalog.regexp_replace(pg_catalog.array_to_string(w.words[i:], ''), '[[:space:][:punct:]]+', '', 'g') as form, i
        from (select pg_catalog.regexp_split_to_array(key, ' ') as words) w,
             pg_catalog.generate_subscripts(w.words, 1) i
    ) f
    where f.form <> '' and (f.i = 1 or (f.form ~ '[0-9]' and f.form ~ '[^0-9]' and pg_catalog.length(f.form) >= 4));
end;
comment on function exo_private.key_forms(text) is
    'The forms by which a question may name a subject key: the key without spaces or punctuation, '
    'and each word-final run of it that holds a letter and a digit (at least 4 characters), the '
    'same way squashed: key_forms(''order ortand-88'') is {orderortand88, ortand88}.';
-- The subjects by their forms (exo_private.packet_facts). Immutable as the index needs it: a
-- change of key_forms must rebuild the index (reindex index exo_private.facts_subject_forms_idx).
create index if not exists facts_subject_forms_idx on exo_private.facts using gin (exo_private.key_forms(subject_key));
