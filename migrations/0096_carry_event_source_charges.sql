-- The timeline at a million events (issue 31): each event carries its source's charged subjects,
-- so that a reading is a scan of events alone, without joining every event it counts to its
-- chunk or chat message. Kept in step by triggers (sql/660_events.sql): an event stored reads
-- its source's; a chunk or message re-marked (exo_private.remark_charged, mark_messages, a
-- re-cut chat window) passes its marks on; a chunk deleted leaves its events '{source gone}'
-- (withheld, as the join's missing source was, until the document is read again). And the
-- (activity, day) and (day) indexes hold every column a reading's figures need, so that a
-- count, sum or group of tens of thousands of events reads the index alone (an index-only scan),
-- not each event's page.
drop index exo_private.events_activity_day;
drop index exo_private.events_day;
alter table exo_private.events add column charged_subjects text[] not null default '{source gone}';
comment on column exo_private.events.charged_subjects is
    'The charged subjects of the event''s source (its chunk''s or chat message''s '
    'charged_subjects; {source gone} where the source no longer exists), kept by triggers: what '
    'the timeline withholds it by (exo_private.unreleased).';

update exo_private.events e
   set charged_subjects = coalesce(
           (select c.charged_subjects from exo_private.chunks c where c.workspace = e.workspace and c.id = e.chunk_id),
           (select m.charged_subjects from exo_private.chat_messages m where m.id = e.message_id),
           '{source gone}');

-- what a chunk re-marked or deleted finds its events by
create index events_chunk on exo_private.events (chunk_id) where chunk_id is not null;

-- what exo_private.timeline_answer's figures read: the filters' columns (activity, forms, day,
-- workspace, charged_subjects) and the figures' (planned, minutes, km, amount, currency, place,
-- people; id orders the events cited)
create index events_activity_day on exo_private.events (activity, day)
    include (forms, workspace, charged_subjects, planned, minutes, km, amount, currency, place, people, id);
create index events_day on exo_private.events (day)
    include (activity, forms, workspace, charged_subjects, planned, minutes, km, amount, currency, place, people, id);
