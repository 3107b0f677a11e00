-- The timeline's figures over whole years (issue 31): a reading of a year or of all time read a
-- daily group for each day, activity, place or person it matched (27,000 for a year of every
-- activity at a million events; 15,700 for one person). exo_private.event_rollup_year holds the
-- same groups by year, with the days of the year that hold an event of the group as bits
-- (days: bit i for period + i), so that the distinct days, the first and last day and the days the
-- events to cite lie within are read from it. A day's bit is set exactly while the daily group of
-- that day exists: the statement triggers on the events keep both (sql/660_events.sql).
create table exo_private.event_rollup_year (
    id               bigint generated always as identity primary key,
    kind             text not null check (kind in ('all', 'place', 'people')),
    period           date not null check (period = date_trunc('year', period)),
    activity         text not null,
    workspace        text not null,
    planned          boolean not null,
    charged_subjects text[] not null,
    currency         text,
    priced           boolean not null,
    place            text,
    place_keys       text[] not null,
    people           text[] not null,
    people_keys      text[] not null,
    n                bigint not null,
    minutes_sum      numeric not null,
    minutes_n        bigint not null,
    km_sum           numeric not null,
    km_n             bigint not null,
    amount_sum       numeric not null,
    amount_n         bigint not null,
    days             bit(366) not null
);
comment on table exo_private.event_rollup_year is
    'exo_private.event_rollup''s groups by year (period: its first day): the counts and sums of the '
    'year''s daily groups, and days, a bit for each day of the year (period + i) on which the group '
    'has an event. Kept exact by the statement triggers on the events; what '
    'exo_private.timeline_answer reads for a range of whole years or none.';

create unique index event_rollup_year_group on exo_private.event_rollup_year
    (kind, activity, period, workspace, planned, charged_subjects, currency, priced, place, place_keys, people, people_keys)
    nulls not distinct;
create index event_rollup_year_period on exo_private.event_rollup_year (kind, period);
create index event_rollup_year_place_keys on exo_private.event_rollup_year using gin (place_keys) where kind = 'place';
create index event_rollup_year_people_keys on exo_private.event_rollup_year using gin (people_keys) where kind = 'people';

insert into exo_private.event_rollup_year (kind, period, activity, workspace, planned, charged_subjects, currency,
                                           priced, place, place_keys, people, people_keys, n, minutes_sum,
                                           minutes_n, km_sum, km_n, amount_sum, amount_n, days)
select r.kind, date_trunc('year', r.day)::date, r.activity, r.workspace, r.planned, r.charged_subjects, r.currency,
       r.priced, r.place, r.place_keys, r.people, r.people_keys, sum(r.n), sum(r.minutes_sum), sum(r.minutes_n),
       sum(r.km_sum), sum(r.km_n), sum(r.amount_sum), sum(r.amount_n),
       bit_or(set_bit(repeat('0', 366)::bit(366), r.day - date_trunc('year', r.day)::date, 1))
from exo_private.event_rollup r
group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
