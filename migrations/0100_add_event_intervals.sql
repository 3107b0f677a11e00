-- An event's when as a day or an interval, with its precision (issue 31): "a trip to Lisbon
-- from 3 to 7 May" is five days, "sometime in March" a month, "next week" a week; until now each
-- was forced to one day. day stays the first day, so the rollups count an event once, on its
-- first day, as before; they also sum the days of intervals told to the day (a week, month or year
-- only dates an event), so that "how long was my trip" reads them where no minutes are told.
alter table exo_private.events
    add column last_day date,
    add column day_precision text not null default 'day'
        check (day_precision in ('day', 'week', 'month', 'year')),
    add constraint events_last_day_check check (last_day > day);
comment on column exo_private.events.last_day is
    'The last day of an interval the event took (day is its first): "from 3 to 7 May", "for three '
    'days", "the week of 4 May", "in March"; null for one day.';
comment on column exo_private.events.day_precision is
    'How precisely the source dates the event: day (a day, or an interval of days told to the day), '
    'week ("next week", "the week of 4 May": Monday to Sunday), month ("in March": its first to '
    'last day) or year ("in 2019"); day where the source says no other.';

-- the intervals' days summed, and how many events told one, as the minutes are
alter table exo_private.event_rollup
    add column span_days_sum bigint not null default 0,
    add column span_n bigint not null default 0;
alter table exo_private.event_rollup_year
    add column span_days_sum bigint not null default 0,
    add column span_n bigint not null default 0;
comment on column exo_private.event_rollup.span_days_sum is
    'The days of the group''s events'' intervals told to the day (exo_private.interval_days: last_day '
    '- day + 1 where day_precision is day), summed; span_n: how many events told one.';
comment on column exo_private.event_rollup_year.span_days_sum is
    'exo_private.event_rollup''s span_days_sum of the year''s groups, summed; span_n likewise.';

-- exo.events returns the interval and its precision (sql/660_events.sql makes it again)
drop function if exists exo.events(text, date, date, text, text, text[], int, text[], timestamptz, boolean);
