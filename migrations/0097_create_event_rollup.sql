-- The timeline's figures at a million events (issue 31): a reading that matched 30,000-100,000
-- events counted each of them. exo_private.event_rollup holds the events counted and summed by
-- what the readings filter and group by: the day, activity, workspace, planned, the charged
-- subjects of the source (so that a re-marking moves counts between rows and the reading
-- withholds by the same rule), the currency and whether an amount is told; beside each, rows by
-- place ('place') and by people ('people'). Kept in step by statement triggers on
-- exo_private.events (sql/660_events.sql): every insert, correction, re-marking and delete adds
-- or takes away its events.
create table exo_private.event_rollup (
    id               bigint generated always as identity primary key,
    kind             text not null check (kind in ('all', 'place', 'people')),
    day              date not null,
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
    n                bigint not null,  -- (no check: an insert's row is checked before its conflict)
    minutes_sum      numeric not null,
    minutes_n        bigint not null,
    km_sum           numeric not null,
    km_n             bigint not null,
    amount_sum       numeric not null,
    amount_n         bigint not null
);
comment on table exo_private.event_rollup is
    'exo_private.events counted and summed (n; the sum of minutes, km and amount, and how many '
    'events told each) by day, activity, workspace, planned, charged_subjects, currency and priced '
    '(an amount told): kind all; kind place adds place and place_keys (events with a place), kind '
    'people adds people and people_keys (events with people). Kept exact by statement triggers on '
    'the events; what exo_private.timeline_answer''s figures read where its filters allow.';

-- one row a group (a null currency or place is one group: nulls not distinct)
create unique index event_rollup_group on exo_private.event_rollup
    (kind, activity, day, workspace, planned, charged_subjects, currency, priced, place, place_keys, people, people_keys)
    nulls not distinct;
create index event_rollup_day on exo_private.event_rollup (kind, day);
create index event_rollup_place_keys on exo_private.event_rollup using gin (place_keys) where kind = 'place';
create index event_rollup_people_keys on exo_private.event_rollup using gin (people_keys) where kind = 'people';

insert into exo_private.event_rollup (kind, day, activity, workspace, planned, charged_subjects, currency, priced,
                                      place, place_keys, people, people_keys, n, minutes_sum, minutes_n,
                                      km_sum, km_n, amount_sum, amount_n)
select k.kind, e.day, e.activity, e.workspace, e.planned, e.charged_subjects, e.currency, e.amount is not null,
       case when k.kind = 'place' then e.place end, case when k.kind = 'place' then e.place_keys else '{}' end,
       case when k.kind = 'people' then e.people else '{}' end,
       case when k.kind = 'people' then e.people_keys else '{}' end,
       count(*), coalesce(sum(e.minutes), 0), count(e.minutes), coalesce(sum(e.km), 0), count(e.km),
       coalesce(sum(e.amount), 0), count(e.amount)
from exo_private.events e
cross join lateral (
    select 'all' as kind
    union all select 'place' where e.place is not null or e.place_keys <> '{}'
    union all select 'people' where e.people <> '{}' or e.people_keys <> '{}') k
group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
