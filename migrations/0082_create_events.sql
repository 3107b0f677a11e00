-- The timeline: dated happenings the owner's notes and chat lines tell ("Went swimming: 30
-- lengths in 1h15", "had lunch with Nadia at the Blue Door"), one row each, read by syntax
-- (worker/exocortex/extraction/events.py) from the events queue (one message {document_id} per
-- document chunked or conversation windowed). Derived like everything else: a document's
-- events are replaced whenever it is read again, and `exo events rebuild` reads every one.
-- What is withheld follows the source: a chunk's or chat message's charged subjects, looked up
-- when read (sql/660_events.sql), so a deference change needs no rebuild.
create table exo_private.events (
    id          bigint generated always as identity primary key,
    workspace   text not null references exo_private.workspaces (name),
    document_id bigint not null references exo_private.documents (id) on delete cascade,
    chunk_id    bigint,
    message_id  bigint references exo_private.chat_messages (id) on delete cascade,
    day         date not null,
    day_source  text not null check (day_source in ('written', 'relative', 'sent')),
    activity    text not null check (activity <> ''),
    forms       text[] not null default '{}',
    sentence    text not null,
    minutes     numeric check (minutes >= 0),
    km          numeric check (km >= 0),
    amount      numeric,
    currency    text,
    count       numeric,
    count_unit  text,
    place       text,
    people      text[] not null default '{}',
    extractor   text not null,
    created_at  timestamptz not null default now(),
    check (num_nonnulls(chunk_id, message_id) = 1)
);
comment on table exo_private.events is
    'The timeline: one row per dated happening a note or chat line of the owner tells, with its '
    'activity (a normalised name) and the words that named it (forms), its day and where the day '
    'came from (written: the note''s or chunk''s day; relative: "yesterday", "last Tuesday" from it; '
    'sent: the message''s), durations in minutes, distances in km, money with its currency, a '
    'count of something, the place and people named, the source (chunk or chat message) and the '
    'extractor. Rebuilt from the evidence (exo_private.store_events).';

create index events_activity_day on exo_private.events (activity, day);
create index events_day on exo_private.events (day);
create index events_forms on exo_private.events using gin (forms);
create index events_document on exo_private.events (document_id);
create index events_message on exo_private.events (message_id) where message_id is not null;

select pgmq.create('events');
select pgmq.enable_notify_insert('events');

-- Merged into the stored value, so an owner's other choices stay.
update exo_private.settings
   set value = value || '{"events": 300}'::jsonb
 where key = 'worker.visibility_timeout_s' and not value ? 'events';

-- Every document there is now is read once.
select pgmq.send_batch('events', array(
    select jsonb_build_object('document_id', d.id) from exo_private.documents d
    where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed')
    order by d.id))
where exists (select 1 from exo_private.documents d
              where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed'));
