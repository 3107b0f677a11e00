-- The timeline finds the events a word names by the (activity, day) index: which activities
-- each word was told with, one row a pair ("swam" -> swim, "took" -> travel), kept by triggers
-- on exo_private.events (sql/660_events.sql). A filter of activity or form ("activity = any (w)
-- or forms && w") is read as "activity = any (w and the activities told with w)" first, which
-- the index answers with a range of days, and the rest checked on those rows.
create table exo_private.event_forms (
    form     text not null,
    activity text not null,
    primary key (form, activity)
);
comment on table exo_private.event_forms is
    'Which activities each word was told with (an event''s forms): the activities a word may '
    'count, looked up before the events by exo_private.timeline_events. Pairs of events gone stay '
    '(they widen a lookup, never change what it finds).';

insert into exo_private.event_forms (form, activity)
select distinct f, e.activity from exo_private.events e, unnest(e.forms) f
order by 1, 2;
