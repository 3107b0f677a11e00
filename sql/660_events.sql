-- The timeline (migration 0082): what the worker reads events from, how it stores them, and the
-- reader's SQL over them. Care: an event is shown only while its source (the chunk, or the chat
-- message) is (exo_private.unreleased over its charged subjects): counts never include withheld
-- events, nor say how many were left out (the packet's deference hints say that material exists).

-- exo_private.queue_document_events: a document chunked (ingest, a changed file, a re-route, a
-- conversation windowed) is queued to be read for events.
create or replace function exo_private.queue_document_events()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if new.workspace is not null then
        perform pgmq.send('events', jsonb_build_object('document_id', new.id));
    end if;
    return null;
end
$$;
comment on function exo_private.queue_document_events() is
    'Trigger: a document that reaches stage chunked gets a message on the events queue.';

create or replace trigger documents_queue_events
    after insert or update of stage on exo_private.documents
    for each row when (new.stage = 'chunked')
    execute function exo_private.queue_document_events();

-- exo_private.note_event_forms: the words new or changed events were told with, by activity.
create or replace function exo_private.note_event_forms()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- in one order, so two workers storing the same pairs wait for each other, never deadlock
    insert into exo_private.event_forms (form, activity)
    select distinct f, n.activity from told n, unnest(n.forms) f
    order by 1, 2
    on conflict do nothing;
    return null;
end
$$;
comment on function exo_private.note_event_forms() is
    'Trigger: the (form, activity) pairs of the events a statement stored or corrected go into '
    'exo_private.event_forms.';

create or replace trigger events_note_forms_inserted
    after insert on exo_private.events
    referencing new table as told
    for each statement execute function exo_private.note_event_forms();
create or replace trigger events_note_forms_updated
    after update on exo_private.events
    referencing new table as told
    for each statement execute function exo_private.note_event_forms();

-- exo_private.day_bit: a day as the bit of its year in exo_private.event_rollup_year's days.
create or replace function exo_private.day_bit(p_day date)
returns bit(366)
language sql immutable strict parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    select set_bit(repeat('0', 366)::bit(366), p_day - date_trunc('year', p_day)::date, 1)
$$;
comment on function exo_private.day_bit(date) is
    'A day as a bit(366) with the bit of its day of the year (0 for 1 January) set: the days of '
    'exo_private.event_rollup_year.';

-- exo_private.interval_days: how many days an event's interval told to the day lasted.
create or replace function exo_private.interval_days(p_day date, p_last_day date, p_precision text)
returns int
language sql immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    -- "from 3 to 7 May" lasted five days; "sometime in March" or "next week" dates the event no
    -- closer than its month or week and tells no length
    select case when p_precision = 'day' then p_last_day - p_day + 1 end
$$;
comment on function exo_private.interval_days(date, date, text) is
    'The days an event''s interval lasted (last_day - day + 1) where the source tells it to the day '
    '(day_precision day); null for one day or a week, month or year that only dates it.';

-- exo_private.dates_told: an event's day or interval in words.
create or replace function exo_private.dates_told(p_day date, p_last_day date, p_precision text)
returns text
language sql immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    select case
        when p_precision = 'year' then to_char(p_day, 'FMYYYY')
        when p_precision = 'month' then to_char(p_day, 'FMMonth YYYY')
        when p_precision = 'week' then 'the week of ' || to_char(p_day, 'FMDD FMMonth YYYY')
        when p_last_day is null then p_day::text
        when date_trunc('month', p_day) = date_trunc('month', p_last_day)
            then to_char(p_day, 'FMDD') || '-' || to_char(p_last_day, 'FMDD FMMonth YYYY')
        when date_trunc('year', p_day) = date_trunc('year', p_last_day)
            then to_char(p_day, 'FMDD FMMonth') || ' - ' || to_char(p_last_day, 'FMDD FMMonth YYYY')
        else to_char(p_day, 'FMDD FMMonth YYYY') || ' - ' || to_char(p_last_day, 'FMDD FMMonth YYYY')
    end
$$;
comment on function exo_private.dates_told(date, date, text) is
    'An event''s when in words: its day (ISO) alone, an interval ("3-7 May 2026", "29 April - 2 May '
    '2026"), the week of its Monday, its month ("March 2026") or its year, by day_precision.';

-- exo_private.roll_events: the events a statement stored, changed or deleted, counted in the rollup.
create or replace function exo_private.roll_events()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    emptied bigint[];
    years_emptied bigint[];
begin
    -- the transition tables a statement has (an insert's added, a delete's removed, an update's
    -- both), each event +1 or -1 in every group it is counted in; only the names of those two
    -- tables go into the text
    execute format($q$
    with grouped as (
        select k.kind, d.day, d.activity, d.workspace, d.planned, d.charged_subjects, d.currency,
               d.amount is not null as priced,
               case when k.kind = 'place' then d.place end as place,
               case when k.kind = 'place' then d.place_keys else '{}' end as place_keys,
               case when k.kind = 'people' then d.people else '{}' end as people,
               case when k.kind = 'people' then d.people_keys else '{}' end as people_keys,
               sum(d.sign) as n,
               coalesce(sum(d.sign * d.minutes), 0) as minutes_sum,
               coalesce(sum(d.sign) filter (where d.minutes is not null), 0) as minutes_n,
               coalesce(sum(d.sign * d.km), 0) as km_sum,
               coalesce(sum(d.sign) filter (where d.km is not null), 0) as km_n,
               coalesce(sum(d.sign * d.amount), 0) as amount_sum,
               coalesce(sum(d.sign) filter (where d.amount is not null), 0) as amount_n,
               coalesce(sum(d.sign * d.span_days), 0) as span_days_sum,
               coalesce(sum(d.sign) filter (where d.span_days is not null), 0) as span_n
        from (select x.*, exo_private.interval_days(x.day, x.last_day, x.day_precision) as span_days
              from (%s) x) d
        cross join lateral (
            select 'all' as kind
            union all select 'place' where d.place is not null or d.place_keys <> '{}'
            union all select 'people' where d.people <> '{}' or d.people_keys <> '{}') k
        group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
        -- an update that moved nothing (a form merged in, a sentence) changes no group
        having sum(d.sign) <> 0 or count(*) filter (where d.minutes is not null or d.km is not null
                                                    or d.amount is not null or d.span_days is not null) > 0
    ), rolled as (
        insert into exo_private.event_rollup as r (
            kind, day, activity, workspace, planned, charged_subjects, currency, priced, place,
            place_keys, people, people_keys, n, minutes_sum, minutes_n, km_sum, km_n, amount_sum, amount_n,
            span_days_sum, span_n)
        -- in one order, so two statements adding to the same groups wait for each other
        select * from grouped g order by g.kind, g.activity, g.day, g.workspace, g.planned,
                                         g.charged_subjects, g.currency, g.priced, g.place,
                                         g.place_keys, g.people, g.people_keys
        on conflict (kind, activity, day, workspace, planned, charged_subjects, currency, priced, place,
                     place_keys, people, people_keys)
        do update set n = r.n + excluded.n,
                      minutes_sum = r.minutes_sum + excluded.minutes_sum,
                      minutes_n = r.minutes_n + excluded.minutes_n,
                      km_sum = r.km_sum + excluded.km_sum,
                      km_n = r.km_n + excluded.km_n,
                      amount_sum = r.amount_sum + excluded.amount_sum,
                      amount_n = r.amount_n + excluded.amount_n,
                      span_days_sum = r.span_days_sum + excluded.span_days_sum,
                      span_n = r.span_n + excluded.span_n
        returning r.id, r.n
    ), years as (
        -- the same by year; a day's bit set where its group is counted in after the statement (it
        -- gained or kept events), taken away below where its group was left empty
        insert into exo_private.event_rollup_year as r (
            kind, period, activity, workspace, planned, charged_subjects, currency, priced, place,
            place_keys, people, people_keys, n, minutes_sum, minutes_n, km_sum, km_n, amount_sum, amount_n,
            span_days_sum, span_n, days)
        select g.kind, date_trunc('year', g.day)::date, g.activity, g.workspace, g.planned, g.charged_subjects,
               g.currency, g.priced, g.place, g.place_keys, g.people, g.people_keys, sum(g.n),
               sum(g.minutes_sum), sum(g.minutes_n), sum(g.km_sum), sum(g.km_n), sum(g.amount_sum), sum(g.amount_n),
               sum(g.span_days_sum), sum(g.span_n),
               coalesce(bit_or(exo_private.day_bit(g.day)) filter (where g.n >= 0), repeat('0', 366)::bit(366))
        from grouped g
        group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
        order by 1, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12
        on conflict (kind, activity, period, workspace, planned, charged_subjects, currency, priced, place,
                     place_keys, people, people_keys)
        do update set n = r.n + excluded.n,
                      minutes_sum = r.minutes_sum + excluded.minutes_sum,
                      minutes_n = r.minutes_n + excluded.minutes_n,
                      km_sum = r.km_sum + excluded.km_sum,
                      km_n = r.km_n + excluded.km_n,
                      amount_sum = r.amount_sum + excluded.amount_sum,
                      amount_n = r.amount_n + excluded.amount_n,
                      span_days_sum = r.span_days_sum + excluded.span_days_sum,
                      span_n = r.span_n + excluded.span_n,
                      days = r.days | excluded.days
        returning r.id, r.n)
    select coalesce((select array_agg(rolled.id) from rolled where rolled.n = 0), '{}'),
           coalesce((select array_agg(years.id) from years where years.n = 0), '{}')
    $q$, case tg_op
             when 'INSERT' then 'select 1 as sign, a.* from added a'
             when 'DELETE' then 'select -1 as sign, o.* from removed o'
             else 'select 1 as sign, a.* from added a union all select -1, o.* from removed o'
         end)
    into emptied, years_emptied;
    -- a day whose group is left empty is no longer a day of its year's group
    with gone as (
        delete from exo_private.event_rollup r where r.id = any (emptied) returning r.*
    ), cleared as (
        select g.kind, date_trunc('year', g.day)::date as period, g.activity, g.workspace, g.planned,
               g.charged_subjects, g.currency, g.priced, g.place, g.place_keys, g.people, g.people_keys,
               bit_or(exo_private.day_bit(g.day)) as days
        from gone g group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
    )
    update exo_private.event_rollup_year y set days = y.days & ~c.days
    from cleared c
    where y.kind = c.kind and y.activity = c.activity and y.period = c.period and y.workspace = c.workspace
      and y.planned = c.planned and y.charged_subjects = c.charged_subjects
      and y.currency is not distinct from c.currency and y.priced = c.priced
      and y.place is not distinct from c.place and y.place_keys = c.place_keys and y.people = c.people
      and y.people_keys = c.people_keys;
    delete from exo_private.event_rollup_year r where r.id = any (years_emptied);
    return null;
end
$$;
comment on function exo_private.roll_events() is
    'Trigger: the events a statement inserted, updated or deleted (its transition tables) added to '
    'or taken from their groups in exo_private.event_rollup and exo_private.event_rollup_year (a day '
    'a year''s group has an event on: its bit of days); a group left with no event is deleted.';

create or replace trigger events_roll_inserted
    after insert on exo_private.events
    referencing new table as added
    for each statement execute function exo_private.roll_events();
create or replace trigger events_roll_updated
    after update on exo_private.events  -- (a trigger with transition tables takes no column list)
    referencing old table as removed new table as added
    for each statement execute function exo_private.roll_events();
create or replace trigger events_roll_deleted
    after delete on exo_private.events
    referencing old table as removed
    for each statement execute function exo_private.roll_events();

-- exo_private.take_source_charges: an event stored carries its source's charged subjects.
create or replace function exo_private.take_source_charges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- for share: a source being re-marked now is waited for and its new marks read (else this
    -- event, unseen by the re-marking's own update of events, would keep the old ones)
    new.charged_subjects := coalesce(
        (select c.charged_subjects from exo_private.chunks c
         where c.workspace = new.workspace and c.id = new.chunk_id for share),
        (select m.charged_subjects from exo_private.chat_messages m where m.id = new.message_id for share),
        '{source gone}');
    return new;
end
$$;
comment on function exo_private.take_source_charges() is
    'Trigger: an event stored or moved to another source takes the source''s charged_subjects '
    '(its chunk''s or chat message''s; {source gone} where there is none).';

create or replace trigger events_take_source_charges
    before insert or update of workspace, chunk_id, message_id on exo_private.events
    for each row execute function exo_private.take_source_charges();

-- exo_private.pass_chunk_charges: a chunk re-marked passes its marks to its events.
create or replace function exo_private.pass_chunk_charges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- Most chunks tell no event, and an update of no row still runs the events' statement
    -- triggers (events_roll_updated, with its transition tables): a millisecond a chunk of a
    -- document deleted, for nothing.
    if not exists (select 1 from exo_private.events e where e.chunk_id = old.id) then
        if tg_op = 'DELETE' then
            return null;
        elsif not exists (select 1 from exo_private.events e where e.chunk_id = new.id) then
            return null;
        end if;
    end if;
    if tg_op = 'DELETE' or old.id <> new.id or old.workspace <> new.workspace then
        update exo_private.events e set charged_subjects = '{source gone}'
         where e.chunk_id = old.id and e.workspace = old.workspace;
    end if;
    if tg_op = 'UPDATE' then
        update exo_private.events e set charged_subjects = new.charged_subjects
         where e.chunk_id = new.id and e.workspace = new.workspace
           and e.charged_subjects is distinct from new.charged_subjects;
    end if;
    return null;
end
$$;
comment on function exo_private.pass_chunk_charges() is
    'Trigger: the events of a chunk whose charged_subjects changed (exo_private.remark_charged, a '
    're-cut chat window) take the new ones; those of a chunk deleted or moved get {source gone}, '
    'withheld until their document is read again.';

create or replace trigger chunks_pass_charges
    after update of charged_subjects, workspace, id or delete on exo_private.chunks
    for each row execute function exo_private.pass_chunk_charges();

-- exo_private.pass_message_charges: a chat message re-marked passes its marks to its events.
create or replace function exo_private.pass_message_charges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- a message deleted takes its events with it (the foreign key)
    update exo_private.events e set charged_subjects = new.charged_subjects
     where e.message_id = new.id and e.charged_subjects is distinct from new.charged_subjects;
    return null;
end
$$;
comment on function exo_private.pass_message_charges() is
    'Trigger: the events of a chat message whose charged_subjects changed (mark_messages) take the '
    'new ones.';

create or replace trigger chat_messages_pass_charges
    after update of charged_subjects on exo_private.chat_messages
    for each row when (new.charged_subjects is distinct from old.charged_subjects)
    execute function exo_private.pass_message_charges();

-- exo_private.event_sources: the texts of a document the worker reads for events.
create or replace function exo_private.event_sources(p_document_id bigint)
returns table (chunk_id bigint, message_id bigint, day date, day_source text, body text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A note's chunks, each dated by its own day or its document's; a mail's only where the owner
    -- wrote it (its From an address of the owner's or the owner's name, as the graph reads it:
    -- a mail someone else wrote tells their life), dated by its Date header and read as sent; a
    -- conversation's lines that the owner sent, each by its day.
    select c.id, null::bigint, coalesce(c.written_at, d.written_at),
           case when d.metadata ->> 'from' is null then 'written' else 'sent' end, c.body
    from exo_private.documents d
    join exo_private.chunks c on c.workspace = d.workspace and c.document_id = d.id
    where d.id = p_document_id and d.conversation_id is null
      and coalesce(c.written_at, d.written_at) is not null
      and (d.metadata ->> 'from' is null or exists (
          select 1 from exo_private.people p,
               lateral (select substring(d.metadata ->> 'from' from '<([^<>]+)>') as address,
                               btrim(regexp_replace(d.metadata ->> 'from', '<[^<>]*>', ''), ' "''') as name) f
          where p.is_owner
            and (pg_catalog.lower(coalesce(f.address, f.name)) = any (exo_private.owner_addresses())
                 or exo_private.canonical_key(f.name) = p.entity_key)))
    union all
    select null, m.id,
           (m.sent_at at time zone coalesce(
               (select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.time_zone'), 'UTC'))::date,
           'sent', m.body
    from exo_private.documents d
    join exo_private.chat_messages m on m.conversation_id = d.conversation_id
    join exo_private.chat_identities i on i.id = m.identity_id
    join exo_private.people p on p.id = i.person_id and p.is_owner
    where d.id = p_document_id and m.sent_at is not null
$$;
comment on function exo_private.event_sources(bigint) is
    'What the events worker reads of a document: each chunk of a note with its day (the chunk''s '
    'written_at, else the document''s; undated ones are left out; day_source written), each chunk '
    'of a mail the owner wrote (From: an address of exo_private.owner_addresses() or the owner''s '
    'name) with its Date header''s day (day_source sent), or each chat line the owner sent in a '
    'conversation document with the day it was sent (in chat.time_zone).';

-- exo_private.apply_event_corrections: a person's corrections, on one document's events or all.
create or replace function exo_private.apply_event_corrections(p_document_id bigint default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    c record;
    dropped int := 0;
    n int;
begin
    for c in select * from exo_private.event_corrections order by id loop
        if c.kind = 'merge' then
            update exo_private.events e
               set activity = c.into_activity,
                   forms = array(select distinct f from unnest(e.forms || c.activity) f order by f)
             where e.activity = c.activity and (p_document_id is null or e.document_id = p_document_id);
        else
            delete from exo_private.events e
             where e.document_id = c.document_id and e.sentence = c.sentence and e.activity = c.activity
               and (p_document_id is null or e.document_id = p_document_id);
            get diagnostics n = row_count;
            dropped := dropped + n;
        end if;
    end loop;
    return dropped;
end
$$;
comment on function exo_private.apply_event_corrections(bigint) is
    'Apply exo_private.event_corrections in order to the events of p_document_id (null: every '
    'event): merges rename an activity (its old name stays among the forms), drops delete. Returns '
    'how many events were dropped.';

-- exo_private.merge_activities: count one activity as another, now and after every rebuild.
create or replace function exo_private.merge_activities(p_activity text, p_into text)
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    merged int;
begin
    if coalesce(btrim(p_activity), '') = '' or coalesce(btrim(p_into), '') = '' then
        perform exo_private.invalid_argument('activity and into must be activity names, not empty');
    end if;
    if lower(btrim(p_activity)) = lower(btrim(p_into)) then
        perform exo_private.invalid_argument(format('activity %s cannot be merged into itself', exo_private.quoted(p_activity)));
    end if;
    if not exists (select 1 from exo_private.events e where e.activity = lower(btrim(p_activity))) then
        perform exo_private.invalid_argument(
            format('activity %s: no event has it', exo_private.quoted(p_activity)),
            'exo events counts lists the activities');
    end if;
    insert into exo_private.event_corrections (kind, activity, into_activity)
    values ('merge', lower(btrim(p_activity)), lower(btrim(p_into)));
    update exo_private.events e
       set activity = lower(btrim(p_into)),
           forms = array(select distinct f from unnest(e.forms || e.activity) f order by f)
     where e.activity = lower(btrim(p_activity));
    get diagnostics merged = row_count;
    return jsonb_build_object('activity', lower(btrim(p_activity)), 'into', lower(btrim(p_into)), 'events', merged);
end
$$;
comment on function exo_private.merge_activities(text, text) is
    'Count every event of p_activity as p_into from now on, a rebuild included (a merge correction). '
    'Returns {activity, into, events: how many changed}.';

-- exo_private.drop_event: one event that is wrong, gone now and after every rebuild.
create or replace function exo_private.drop_event(p_event_id bigint)
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    e exo_private.events;
begin
    select * into e from exo_private.events x where x.id = p_event_id;
    if not found then
        perform exo_private.invalid_argument(format('event %s does not exist', p_event_id),
                                             'exo events list shows each event''s id');
    end if;
    insert into exo_private.event_corrections (kind, activity, document_id, sentence)
    values ('drop', e.activity, e.document_id, e.sentence);
    delete from exo_private.events x
     where x.document_id = e.document_id and x.sentence = e.sentence and x.activity = e.activity;
    return jsonb_build_object('event', p_event_id, 'activity', e.activity, 'day', e.day, 'sentence', e.sentence);
end
$$;
comment on function exo_private.drop_event(bigint) is
    'Drop one event (and any other its sentence tells of the same activity), now and after every '
    'rebuild (a drop correction). Returns {event, activity, day, sentence}.';

-- exo_private.queue_all_events: read every document for the timeline again.
create or replace function exo_private.queue_all_events()
returns int
language sql
security invoker
set search_path = exo_private, pg_temp
as $$
    select count(*)::int from pgmq.send_batch('events', array(
        select jsonb_build_object('document_id', d.id) from exo_private.documents d
        where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed')
        order by d.id))
$$;
comment on function exo_private.queue_all_events() is
    'Queue every chunked document to be read for events again (exo events rebuild; after a new '
    'extractor). Returns how many were queued.';

-- exo_private.store_events: replace a document's events with what the worker read.
create or replace function exo_private.store_events(p_document_id bigint, p_events jsonb, p_extractor text)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ws text;
    stored int;
begin
    select d.workspace into ws from exo_private.documents d where d.id = p_document_id for update;
    delete from exo_private.events e where e.document_id = p_document_id;
    if ws is null then
        return 0;  -- gone, or quarantined while the worker read it
    end if;
    insert into exo_private.events (workspace, document_id, chunk_id, message_id, day, day_source,
                                    activity, forms, sentence, minutes, km, amount, currency, count,
                                    count_unit, place, people, extractor, people_keys, place_keys, planned,
                                    last_day, day_precision)
    select ws, p_document_id, x.chunk_id, x.message_id, x.day, x.day_source, x.activity,
           coalesce(x.forms, '{}'), x.sentence, x.minutes, x.km, x.amount, x.currency, x.count,
           x.count_unit, x.place, coalesce(x.people, '{}'), p_extractor,
           exo_private.held_name_keys(coalesce(x.people, '{}')), exo_private.held_name_keys(array[x.place]),
           coalesce(x.planned, false), nullif(x.last_day, x.day), coalesce(x.day_precision, 'day')
    from jsonb_to_recordset(coalesce(p_events, '[]')) as x(
        chunk_id bigint, message_id bigint, day date, day_source text, activity text, forms text[],
        sentence text, minutes numeric, km numeric, amount numeric, currency text, count numeric,
        count_unit text, place text, people text[], planned boolean, last_day date, day_precision text)
    -- a source the document no longer holds (re-chunked while the worker read it) is left out
    where (x.chunk_id is not null and exists (select 1 from exo_private.chunks c
                                              where c.workspace = ws and c.id = x.chunk_id
                                                and c.document_id = p_document_id))
       or (x.message_id is not null and exists (select 1 from exo_private.chat_messages m
                                                join exo_private.documents d on d.conversation_id = m.conversation_id
                                                where m.id = x.message_id and d.id = p_document_id));
    get diagnostics stored = row_count;
    return stored - exo_private.apply_event_corrections(p_document_id);
end
$$;
comment on function exo_private.store_events(bigint, jsonb, text) is
    'Replace the events of a document with p_events (a JSON array of {chunk_id or message_id, '
    'day, day_source, activity, forms, sentence, minutes, km, amount, currency, count, count_unit, '
    'place, people, planned, last_day (an interval''s last day; null or day: one day), day_precision '
    '(day, week, month or year; null: day)}), made by p_extractor; rows whose source the document no longer holds are '
    'dropped, and the person''s corrections applied. Returns how many were kept.';

-- exo_private.word_forms: a word and the words its plain English inflections come from.
create or replace function exo_private.word_forms(p_words text[])
returns text[]
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- "runs" -> run, "swimming" -> swimm, swim, "cycling" -> cycl, cycle, "hikes" -> hike:
    -- what to look up among the activities and the words that named them.
    select array(
        select distinct f from unnest(p_words) w0, lower(w0) w,
        lateral (
            select w as f
            union all
            select left(w, -length(x.ending)) || x.replacement
            from (values ('ies', 'y'), ('es', ''), ('s', ''), ('ing', ''), ('ing', 'e'), ('ed', ''), ('ed', 'e'))
                 x (ending, replacement)
            where right(w, length(x.ending)) = x.ending and length(w) - length(x.ending) >= 3
            union all
            -- a doubled last consonant undone: swimming -> swimm -> swim, jogged -> jogg -> jog
            select left(w, -length(x.ending) - 1)
            from (values ('ing'), ('ed')) x (ending)
            where right(w, length(x.ending)) = x.ending and length(w) - length(x.ending) >= 4
              and substr(w, length(w) - length(x.ending), 1) = substr(w, length(w) - length(x.ending) - 1, 1)
        ) forms
        where f <> '' order by f)
$$;
comment on function exo_private.word_forms(text[]) is
    'The words, lower-cased, with the stems their plain English endings (-s, -es, -ies, -ing, -ed, '
    'a doubled consonant) come from: what a question''s or a caller''s word is looked up by among '
    'the timeline''s activities and forms.';

-- exo_private.held_name_keys: the keys a held name is found by.
create or replace function exo_private.held_name_keys(p_names text[])
returns text[]
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- "Nadia Okafor": nadia okafor, nadia, okafor; "the Blue Door": blue door, blue, door
    select coalesce(array_agg(distinct k order by k), '{}')
    from unnest(p_names) n,
         lateral (select lower(btrim(regexp_replace(n, '^(the|a|an)\s+', '', 'i'))) as whole) w,
         lateral (select unnest(array[w.whole, split_part(w.whole, ' ', 1),
                                      regexp_replace(w.whole, '^.*\s', '')]) as k) keys
    where n is not null and btrim(n) <> '' and k <> ''
$$;
comment on function exo_private.held_name_keys(text[]) is
    'The keys an event''s people or place are found by: each name whole (without a leading '
    'article), its first word and its last word, lower-cased.';

-- exo_private.given_name_keys: the keys a name given is looked up by.
create or replace function exo_private.given_name_keys(p_name text)
returns text[]
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- "Nadia", "Okafor", "Nadia Okafor" and "Dr Okafor" all find Nadia Okafor
    select array_remove(array[w.whole, regexp_replace(w.whole, '^.*\s', '')], '')
    from (select lower(btrim(regexp_replace(coalesce(p_name, ''), '^(the|a|an)\s+', '', 'i'))) as whole) w
$$;
comment on function exo_private.given_name_keys(text) is
    'The keys a person or place asked for is looked up by: the name whole (without a leading '
    'article) and its last word, lower-cased (exo_private.held_name_keys holds both).';

-- exo_private.activities_named: the activities a list of activities or words may name.
create or replace function exo_private.activities_named(p_activities text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- themselves, and those an event was told with one of them (exo_private.event_forms): what
    -- the (activity, day) index is asked for, the forms then checked on the events it finds
    select case when p_activities is not null then array(
        select a from unnest(p_activities) a
        union
        select f.activity from exo_private.event_forms f where f.form = any (p_activities)) end
$$;
comment on function exo_private.activities_named(text[]) is
    'The activities p_activities (names or words that named one) may name: themselves and every '
    'activity an event was told with one of them (exo_private.event_forms); null for null.';

-- exo_private.timeline_events_query: the text of the one reading of the timeline.
drop function if exists exo_private.timeline_events_query(text[], date, date, text, text, text[], text[]);  -- before p_also
create or replace function exo_private.timeline_events_query(
    p_activities text[], p_from date, p_to date, p_place text, p_person text,
    p_workspaces text[], p_about text[], p_also bigint[] default null
)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Only the filters given: each a fixed predicate over bound values, so that the plan uses the
    -- index a filter has (activity, day, names) instead of one generic plan for every case. A
    -- source withheld hides its events, by the charged subjects each event carries (a source
    -- gone counts as withheld until its document is read again): no event is joined to its
    -- source; with $8 (as of), a day or a writing of the source after it hides it too.
    select 'select e.* from exo_private.events e '
           'where ' || array_to_string(array['true'] || array(
               select v.condition from (values
                   (p_activities is not null and p_also is null,
                    'e.activity = any ($10) and (e.activity = any ($1) or e.forms && $1)'),
                   (p_activities is not null and p_also is not null,
                    '(e.activity = any ($10) and (e.activity = any ($1) or e.forms && $1) or e.id = any ($11))'),
                   (p_from is not null, 'e.day >= $2'),
                   (p_to is not null, 'e.day <= $3'),
                   (p_place is not null, 'e.place_keys && exo_private.given_name_keys($4)'),
                   (p_person is not null, 'e.people_keys && exo_private.given_name_keys($5)'),
                   (p_workspaces is not null, 'e.workspace = any ($6)'),
                   (p_about is not null, 'exists (select 1 from unnest($9) w where strpos(lower(e.sentence), lower(w)) > 0)')
               ) v (given, condition)
               where v.given), ' and ') || ' '
           'and (e.charged_subjects = ''{}'' or exo_private.unreleased(e.charged_subjects, $7) = ''{}'') '  -- most: no call
           'and ($8::timestamptz is null or (e.day <= $8::date and coalesce( '
           '     (select m.sent_at <= $8 from exo_private.chat_messages m where m.id = e.message_id), '
           '     exo_private.written_by(e.document_id, e.chunk_id, $8))))'
$$;
comment on function exo_private.timeline_events_query(text[], date, date, text, text, text[], text[], bigint[]) is
    'The query exo_private.timeline_events runs (and exo_private.timeline_answer inside its own, '
    'so that a million events pass through no function''s result set), for the filters given: '
    'bound as $1 activities, $2 from, $3 to, $4 place, $5 person, $6 workspaces, $7 released, $8 '
    'as of, $9 about, $10 exo_private.activities_named($1), $11 events counted with the activities '
    '(p_also: their ids, the other filters still apply).';

-- exo_private.timeline_events: the events a reader may see that match the filters.
drop function if exists exo_private.timeline_events(text[], date, date, text, text, text[], text[], timestamptz, text[]);  -- before p_planned
create or replace function exo_private.timeline_events(
    p_activities text[], p_from date, p_to date, p_place text, p_person text,
    p_workspaces text[], p_released text[], p_as_of timestamptz, p_about text[] default null,
    p_planned boolean default false
)
returns setof exo_private.events
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    return query execute
        'select e.* from (' || exo_private.timeline_events_query(p_activities, p_from, p_to, p_place,
                                                                 p_person, p_workspaces, p_about)
        || ') e where e.planned = $12'
        using p_activities, p_from, p_to, p_place, p_person, p_workspaces, p_released, p_as_of, p_about,
              exo_private.activities_named(p_activities), null::bigint[], coalesce(p_planned, false);
end
$$;
comment on function exo_private.timeline_events(text[], date, date, text, text, text[], text[], timestamptz, text[], boolean) is
    'The one reading of the timeline every reader path uses: events of p_activities (a name or a '
    'word that named one; null: any), from p_from to p_to (inclusive), at p_place, with p_person '
    '(their keys, exo_private.given_name_keys), whose sentence holds one of the words p_about '
    '(null: any), in p_workspaces (null: all), whose source p_released opens (its charged '
    'subjects, exo_private.unreleased) and, with p_as_of, known by then; what happened, or with '
    'p_planned the plans instead (never both: a plan is never counted as done).';

-- exo.events: the timeline, filtered.
drop function if exists exo.events(text, date, date, text, text, text[], int, text[], timestamptz);  -- before planned
-- (its columns before last_day, day_precision and dates: migration 0100 drops it)
create or replace function exo.events(
    what text default null, from_day date default null, to_day date default null,
    at_place text default null, with_person text default null, workspaces text[] default null,
    max_events int default 100, bridge text[] default '{}', as_of timestamptz default null,
    planned boolean default false
)
returns table (event_id bigint, day date, last_day date, day_precision text, dates text, activity text,
               sentence text, minutes numeric, km numeric, amount numeric, currency text, count numeric,
               count_unit text, place text, people text[], workspace text, document_id bigint, path text,
               extractor text)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
begin
    perform exo_private.check_workspaces(workspaces);
    return query
    select e.id, e.day, e.last_day, e.day_precision, exo_private.dates_told(e.day, e.last_day, e.day_precision),
           e.activity, e.sentence, e.minutes, e.km, e.amount, e.currency, e.count,
           e.count_unit, e.place, e.people, e.workspace, e.document_id, d.path, e.extractor
    from exo_private.timeline_events(case when what is null then null else exo_private.word_forms(array[what]) end,
                                     from_day, to_day, at_place, with_person, workspaces,
                                     exo_private.released_keys(bridge), as_of, null, planned) e
    join exo_private.documents d on d.id = e.document_id
    order by e.day, e.id
    limit least(greatest(coalesce(max_events, 100), 1), 10000);
end
$$;
comment on function exo.events(text, date, date, text, text, text[], int, text[], timestamptz, boolean) is
    'Dated events of the owner''s notes, mail and chat lines, oldest first. What happened; with '
    'planned, the plans instead (on the day they name ahead; never counted as done). '
    'what: an activity''s name or a word that named it ("swim", "swimming", "swam"); from_day, '
    'to_day: inclusive; at_place, with_person: a name, case-insensitive, whole or its first or last '
    'words; at most max_events (1..10000); an interval is found by its first day. Fields: day (the '
    'first), last_day (an interval''s last; null: one day), day_precision (day, week, month or year), '
    'dates (in words: "3-7 May 2026", "March 2026"), activity, sentence (the source''s words), '
    'minutes, km, amount with currency, count with count_unit, place, people, workspace, '
    'document_id, path, extractor. Withheld sources are left out unless bridge names their subject.';

-- exo.event_counts: the timeline grouped.
create or replace function exo.event_counts(
    what text default null, from_day date default null, to_day date default null,
    group_by text default 'activity', at_place text default null, with_person text default null,
    workspaces text[] default null, bridge text[] default '{}', as_of timestamptz default null
)
returns table (key text, events bigint, days bigint, minutes numeric, km numeric, amount numeric,
               first_day date, last_day date)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    groups constant text[] := array['activity', 'place', 'person', 'year', 'month', 'week', 'day', 'all'];
begin
    if group_by is null or not group_by = any (groups) then
        perform exo_private.invalid_argument(
            format('group_by must be one of %s, not %s', array_to_string(groups, ', '), exo_private.quoted(group_by)));
    end if;
    perform exo_private.check_workspaces(workspaces);
    return query
    with keyed as (
        select e.day, e.minutes, e.km, e.amount, k.key
        from exo_private.timeline_events(case when what is null then null else exo_private.word_forms(array[what]) end,
                                         from_day, to_day, at_place, with_person, workspaces,
                                         exo_private.released_keys(bridge), as_of) e
        cross join lateral (
            select case group_by
                       when 'activity' then e.activity
                       when 'place' then e.place
                       when 'year' then to_char(e.day, 'YYYY')
                       when 'month' then to_char(e.day, 'YYYY-MM')
                       when 'week' then to_char(e.day, 'IYYY-"W"IW')
                       when 'day' then e.day::text
                       when 'all' then 'all'
                   end as key
            where group_by <> 'person'
            union all
            select p from unnest(e.people) p where group_by = 'person') k
    )
    select k.key, count(*), count(distinct k.day), sum(k.minutes), sum(k.km), sum(k.amount),
           min(k.day), max(k.day)
    from keyed k
    where k.key is not null
    group by k.key
    order by 2 desc, 1;
end
$$;
comment on function exo.event_counts(text, date, date, text, text, text, text[], text[], timestamptz) is
    'The timeline grouped by activity, place, person, year, month, week, day or all, filtered as '
    'exo.events: per key the events, distinct days, total minutes, km and amount, the first and '
    'last day, most events first. Events of withheld sources are not counted, and nothing says how '
    'many there are (a count of them would tell what the withheld material holds).';

-- exo_private.whole_years: whether a range of days is of whole years (or none), read by year.
create or replace function exo_private.whole_years(p_from date, p_to date)
returns boolean
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select (p_from is null or p_from = date_trunc('year', p_from))
       and (p_to is null or p_to = (date_trunc('year', p_to) + interval '1 year - 1 day')::date)
$$;
comment on function exo_private.whole_years(date, date) is
    'Whether p_from is a 1 January and p_to a 31 December (or null): the range a reading can read '
    'from exo_private.event_rollup_year.';

-- exo_private.nth_day: the nth day of a period that holds an event, by its bits of days.
create or replace function exo_private.nth_day(p_period date, p_days bit, p_nth int, p_from_end boolean)
returns date
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- bit i is the day p_period + i; with fewer than p_nth days, the last (from the end: the first)
    select p_period + case
        when not p_from_end then coalesce(length(substring(p_days::text from format('^(?:0*1){%s}', p_nth))),
                                          length(rtrim(p_days::text, '0'))) - 1
        else length(p_days) - coalesce(length(substring(reverse(p_days::text) from format('^(?:0*1){%s}', p_nth))),
                                       length(p_days) + 1 - position('1' in p_days::text))
    end
$$;
comment on function exo_private.nth_day(date, bit, int, boolean) is
    'The p_nth day (from the start of the period, or from its end) whose bit is set in p_days (bit i: '
    'p_period + i), else the last (from the end: the first) day set.';

-- exo_private.rollup_cells: the text of a reading of the rollup.
create or replace function exo_private.rollup_cells(
    p_kind text, p_activities text[], p_from date, p_to date, p_place text, p_person text,
    p_workspaces text[]
)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- the filters of exo_private.timeline_events_query, bound the same ($1 activities, $2 from,
    -- $3 to, $4 place, $5 person, $6 workspaces, $15 money), over the groups; what withholds a
    -- group (its charged_subjects) the reading checks once a set (exo_private.timeline_answer);
    -- a range of whole years reads the groups by year, a day's group is the bit of its one day
    select format('select %s, r.activity, r.planned, r.currency, r.place, r.people, r.n, r.minutes_sum, '
                  'r.minutes_n, r.km_sum, r.km_n, r.amount_sum, r.amount_n, r.span_days_sum, r.span_n, '
                  'r.charged_subjects '
                  'from exo_private.%s r where r.kind = %L and ',
                  case when by_year then 'r.period, r.days' else 'r.day as period, B''1''::bit(366) as days' end,
                  case when by_year then 'event_rollup_year' else 'event_rollup' end, p_kind)
           || array_to_string(array(
               select v.condition from (values
                   (p_activities is not null, 'r.activity = any ($1)'),
                   (p_from is not null, case when by_year then 'r.period >= $2' else 'r.day >= $2' end),
                   (p_to is not null, case when by_year then 'r.period <= $3' else 'r.day <= $3' end),
                   (p_place is not null, 'r.place_keys && exo_private.given_name_keys($4)'),
                   (p_person is not null, 'r.people_keys && exo_private.given_name_keys($5)'),
                   (p_workspaces is not null, 'r.workspace = any ($6)'),
                   (true, '(not $15 or r.priced)')  -- (true: the list is never empty)
               ) v (given, condition)
               where v.given), ' and ')
    from (select exo_private.whole_years(p_from, p_to) as by_year) y
$$;
comment on function exo_private.rollup_cells(text, text[], date, date, text, text, text[]) is
    'The query exo_private.timeline_answer reads exo_private.event_rollup''s groups of p_kind (all, '
    'place or people) by, for the filters given (an activity by its name alone), bound as '
    'exo_private.timeline_events_query''s and $15 money: period and days (the group''s year and its '
    'days as bits where the range is of whole years, exo_private.event_rollup_year; else its day and '
    'one bit), activity, planned, currency, place, people, the counts and sums of each group and its '
    'charged_subjects (not filtered here: the reading withholds by them).';

-- exo_private.timeline_answer: what the packet's Timeline section says.
drop function if exists exo_private.timeline_answer(
    text, text, text[], date, date, text, text, text[], text[], timestamptz, int, text[], boolean);  -- before p_also
create or replace function exo_private.timeline_answer(
    p_group text, p_order text, p_activities text[], p_from date, p_to date, p_place text,
    p_person text, p_workspaces text[], p_released text[], p_as_of timestamptz, p_listed int,
    p_about text[], p_money boolean, p_also bigint[] default null
)
returns jsonb
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    named constant text[] := exo_private.activities_named(p_activities);
    events_query constant text := exo_private.timeline_events_query(
        p_activities, p_from, p_to, p_place, p_person, p_workspaces, p_about, p_also);
    -- what the rollup's groups hold: a reading filtered or grouped by anything else (words of the
    -- sentence, as of a past day, occasions read as the activity, a person and a place together)
    -- counts the events themselves
    rolled constant boolean := p_about is null and p_as_of is null and p_also is null
        and not (p_person is not null and (p_place is not null or p_group is not distinct from 'place'))
        and not (p_place is not null and p_group is not distinct from 'person');
    -- as a cell of one event: the events a reading counts itself
    as_cells constant text :=
        'select ' || case when exo_private.whole_years(p_from, p_to)
                          then 'date_trunc(''year'', e.day)::date as period, exo_private.day_bit(e.day) as days'
                          else 'e.day as period, B''1''::bit(366) as days' end || ', e.activity, e.planned, e.currency, e.place, e.people, 1::bigint as n, '
        'coalesce(e.minutes, 0) as minutes_sum, (e.minutes is not null)::int as minutes_n, '
        'coalesce(e.km, 0) as km_sum, (e.km is not null)::int as km_n, '
        'coalesce(e.amount, 0) as amount_sum, (e.amount is not null)::int as amount_n, '
        'coalesce(exo_private.interval_days(e.day, e.last_day, e.day_precision), 0) as span_days_sum, '
        '(exo_private.interval_days(e.day, e.last_day, e.day_precision) is not null)::int as span_n, '
        '''{}''::text[] as charged_subjects '  -- (the events query withholds them itself)
        'from (' || events_query || ') e where (not $15 or e.amount is not null)';
    residual text := '';
    cells text;
    places text := 'cells';
    people text := 'cells';
    figures jsonb;
    answer jsonb;
begin
    -- p_group: activity, place or person (the "most" of a question), else null; p_order: how
    -- the events listed as citations are ordered (first, last, longest: by minutes or km, else
    -- by day).
    if rolled then
        -- the rollup's groups of the kind the filters name, and the events of an activity only
        -- a word of p_activities named (told with it: their forms are checked) one by one
        if p_activities is not null and not named <@ p_activities then
            residual := ' union all ' || as_cells || ' and e.activity <> all ($1)';
        end if;
        cells := exo_private.rollup_cells(
            case when p_person is not null then 'people' when p_place is not null then 'place' else 'all' end,
            p_activities, p_from, p_to, p_place, p_person, p_workspaces) || residual;
        if p_group = 'place' and p_place is null then
            places := '(' || exo_private.rollup_cells('place', p_activities, p_from, p_to, null, null, p_workspaces)
                      || residual || ')';
        elsif p_group = 'person' and p_person is null then
            people := '(' || exo_private.rollup_cells('people', p_activities, p_from, p_to, null, null, p_workspaces)
                      || residual || ')';
        end if;
    else
        cells := as_cells;
    end if;
    -- The figures, over the groups (a group of one event where the events are counted), and the
    -- days the events to cite lie within.
    execute format($q$
    with told as materialized (%s),
    -- what withholds a group, checked once for each set of charged subjects (not once a group)
    sets as materialized (
        select distinct t.charged_subjects from told t where t.charged_subjects <> '{}'
    ), open as (
        select s.charged_subjects from sets s where exo_private.unreleased(s.charged_subjects, $7) = '{}'
    ), cells as not materialized (
        select * from told t where t.charged_subjects = '{}' or t.charged_subjects in (select o.charged_subjects from open o)
    ), keyed as (
        -- one branch of three is planned (the others are false as bound), none without p_group
        select k.key, k.n from (
            select c.activity as key, c.n from cells c where $12 = 'activity' and not c.planned
            union all
            select c.place, c.n from %s c where $12 = 'place' and not c.planned
                and (c.charged_subjects = '{}' or c.charged_subjects in (select o.charged_subjects from open o))
            union all
            select p, c.n from %s c, unnest(c.people) p where $12 = 'person' and not c.planned
                and (c.charged_subjects = '{}' or c.charged_subjects in (select o.charged_subjects from open o))) k
        where k.key is not null
    ), daily as (
        -- one pass over the groups: every figure but the groups is read from these (by period: a
        -- day, or a year with its days as bits)
        select c.period, c.planned, c.currency, sum(c.n) as n, sum(c.minutes_sum) as minutes_sum,
               sum(c.minutes_n) as minutes_n, sum(c.km_sum) as km_sum, sum(c.km_n) as km_n,
               sum(c.amount_sum) as amount_sum, sum(c.amount_n) as amount_n, sum(c.span_days_sum) as span_days_sum,
               sum(c.span_n) as span_n, bit_or(c.days) as days
        from cells c group by 1, 2, 3
    ), days as (
        select d.period, d.planned, sum(d.n) as n, bit_or(d.days) as days from daily d group by 1, 2
    )
    select jsonb_build_object(
        'events', f.events,
        'days', (select coalesce(sum(bit_count(d.days)), 0) from days d where not d.planned),
        'minutes', jsonb_build_object('sum', f.minutes, 'avg', f.minutes_avg, 'n', f.minutes_n),
        'km', jsonb_build_object('sum', f.km, 'avg', f.km_avg, 'n', f.km_n),
        'span_days', jsonb_build_object('sum', f.span_days, 'avg', f.span_days_avg, 'n', f.span_n),
        'amount', (select coalesce(jsonb_object_agg(a.currency, jsonb_build_object('sum', a.total, 'avg', a.mean, 'n', a.n)), '{}')
                   from (select coalesce(d.currency, '') as currency, sum(d.amount_sum) as total,
                                sum(d.amount_sum) / sum(d.amount_n) as mean, sum(d.amount_n) as n
                         from daily d where not d.planned and d.amount_n > 0 group by 1) a),
        'first_day', f.first_day,
        'last_day', f.last_day,
        'planned', f.planned,
        'groups', (select coalesce(jsonb_agg(jsonb_build_array(g.key, g.n) order by g.n desc, g.key), '[]')
                   from (select k.key, sum(k.n) as n from keyed k group by 1 order by 2 desc, 1 limit 5) g),
        -- the day by which the first p_listed events (or plans) are told, the day from which the last
        -- (all of them where there are fewer; none where there is none); in a year, the day by which
        -- as many days hold an event as events are still wanted (each holds one or more)
        '_first', coalesce((select exo_private.nth_day(d.period, d.days, (greatest($14, 1) - d.upto + d.n)::int, false)
                            from (select d.period, d.days, d.n, sum(d.n) over (order by d.period) as upto
                                  from days d where not d.planned) d
                            where d.upto >= greatest($14, 1) order by d.period limit 1), f.last_day),
        '_last', coalesce((select exo_private.nth_day(d.period, d.days, (greatest($14, 1) - d.upto + d.n)::int, true)
                           from (select d.period, d.days, d.n, sum(d.n) over (order by d.period desc) as upto
                                 from days d where not d.planned) d
                           where d.upto >= greatest($14, 1) order by d.period desc limit 1), f.first_day),
        '_plans', coalesce((select exo_private.nth_day(d.period, d.days, (greatest($14, 1) - d.upto + d.n)::int, false)
                            from (select d.period, d.days, d.n, sum(d.n) over (order by d.period) as upto
                                  from days d where d.planned) d
                            where d.upto >= greatest($14, 1) order by d.period limit 1), f.plans_last))
    from (select coalesce(sum(d.n) filter (where not d.planned), 0) as events,
                 case when sum(d.minutes_n) filter (where not d.planned) > 0
                      then sum(d.minutes_sum) filter (where not d.planned) end as minutes,
                 sum(d.minutes_sum) filter (where not d.planned)
                     / nullif(sum(d.minutes_n) filter (where not d.planned), 0) as minutes_avg,
                 coalesce(sum(d.minutes_n) filter (where not d.planned), 0) as minutes_n,
                 case when sum(d.km_n) filter (where not d.planned) > 0
                      then sum(d.km_sum) filter (where not d.planned) end as km,
                 sum(d.km_sum) filter (where not d.planned)
                     / nullif(sum(d.km_n) filter (where not d.planned), 0) as km_avg,
                 coalesce(sum(d.km_n) filter (where not d.planned), 0) as km_n,
                 case when sum(d.span_n) filter (where not d.planned) > 0
                      then sum(d.span_days_sum) filter (where not d.planned) end as span_days,
                 sum(d.span_days_sum) filter (where not d.planned)
                     / nullif(sum(d.span_n) filter (where not d.planned), 0) as span_days_avg,
                 coalesce(sum(d.span_n) filter (where not d.planned), 0) as span_n,
                 (select exo_private.nth_day(d.period, d.days, 1, false) from days d where not d.planned
                  order by d.period limit 1) as first_day,
                 (select exo_private.nth_day(d.period, d.days, 1, true) from days d where not d.planned
                  order by d.period desc limit 1) as last_day,
                 coalesce(sum(d.n) filter (where d.planned), 0) as planned,
                 (select exo_private.nth_day(d.period, d.days, 1, true) from days d where d.planned
                  order by d.period desc limit 1) as plans_last
          from daily d) f
    $q$, cells, places, people)
    into figures
    using p_activities, p_from, p_to, p_place, p_person, p_workspaces, p_released, p_as_of, p_about,
          named, p_also, p_group, p_order, p_listed, p_money;
    -- The events cited and the plans: the first p_listed in p_order, read from the events of the
    -- days found above alone where the order is by day ($16 to $17: an index's range), the plans
    -- up to $18; neither where there is none ($19: events; $18 null: no plans).
    execute format($q$
    select jsonb_build_object(
        'plans', (select coalesce(jsonb_agg(to_jsonb(p) order by p.day, p.event_id), '[]') from (
            select e.id as event_id, e.day, e.activity, e.sentence from (%1$s) e
            where $18::date is not null and e.planned and (not $15 or e.amount is not null) and e.day <= $18
            order by e.day, e.id limit greatest($14, 1)) p),
        -- the first $14 only (a top-N, not a sort of every event), and their documents' paths
        'listed', (select coalesce(jsonb_agg(to_jsonb(l) - '{by,then_by,then_days,document_id}'::text[]
                                             order by l.by, l.then_by nulls last, l.then_days nulls last, l.day,
                                                      l.event_id), '[]') from (
            select t.*, d.path from (
                select case when $13 = 'last' then -extract(epoch from e.day) end as by,
                       case when $13 = 'longest_minutes' then -e.minutes
                            when $13 = 'longest_km' then -e.km
                            when $13 = 'shortest_minutes' then e.minutes
                            when $13 = 'shortest_km' then e.km end as then_by,
                       -- then, longest or shortest, by the days of an interval told to the day
                       case when $13 like 'longest%%' then -exo_private.interval_days(e.day, e.last_day, e.day_precision)
                            when $13 like 'shortest%%' then coalesce(exo_private.interval_days(
                                                                e.day, e.last_day, e.day_precision), 1) end as then_days,
                       e.id as event_id, e.day, e.last_day, e.day_precision,
                       exo_private.dates_told(e.day, e.last_day, e.day_precision) as dates,
                       exo_private.interval_days(e.day, e.last_day, e.day_precision) as span_days,
                       e.activity, e.minutes, e.km, e.amount,
                       e.currency, e.place, e.people, e.sentence, e.workspace, e.document_id
                from (%1$s) e
                where $19 and not e.planned and (not $15 or e.amount is not null)
                  and ($16::date is null or e.day >= $16) and ($17::date is null or e.day <= $17)
                order by 1, 2 nulls last, 3 nulls last, e.day, e.id limit greatest($14, 1)) t
            join exo_private.documents d on d.id = t.document_id) l))
    $q$, events_query)
    into answer
    using p_activities, p_from, p_to, p_place, p_person, p_workspaces, p_released, p_as_of, p_about,
          named, p_also, p_group, p_order, p_listed, p_money,
          -- by day (every order but the last and by a measure): up to the day the first are told
          case when p_order = 'last' then (figures ->> '_last')::date end,
          case when p_order is null or p_order !~ '^(last|longest|shortest)' then (figures ->> '_first')::date end,
          (figures ->> '_plans')::date, (figures ->> 'events')::int > 0;
    return figures - '{_first,_last,_plans}'::text[] || answer;
end
$$;
comment on function exo_private.timeline_answer(text, text, text[], date, date, text, text, text[], text[], timestamptz, int, text[], boolean, bigint[]) is
    'The figures a Timeline section states, over exo_private.timeline_events: events, distinct days, '
    'minutes, km, span_days (the days of intervals told to the day, exo_private.interval_days) and '
    'amount (per currency) as sum, average and how many events gave one, the first '
    'and last day, the plans of those (planned: how many, plans: the first p_listed by day; never '
    'counted in the figures), the largest p_group (activity, place or person) '
    'groups, and the first p_listed events in p_order (first or by day, last, longest_minutes, '
    'longest_km, shortest_minutes, shortest_km; longest and shortest then by an interval''s days) to '
    'cite; an interval is counted once, on its first day (day), as a range of days finds it; with '
    'p_money, only events that tell an amount; '
    'p_also: events counted besides those of p_activities (occasions whose kind their sentence does '
    'not say, read as one of them: plpy/timeline.py), the other filters applying to them too. The '
    'figures are read from exo_private.event_rollup''s groups where the filters are its (not with '
    'p_about, a past p_as_of, p_also, or a person and a place together), else from the events; the '
    'events cited from the events of the days they lie within.';
