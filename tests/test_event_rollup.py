"""exo_private.event_rollup and event_rollup_year stay exact: the groups (by day; by year with the
days of each as bits) equal a group-by over the events after every kind of change (stored,
corrected, re-marked, source deleted), and the Timeline's figures read from them equal the
figures counted from the events."""

from __future__ import annotations

import pytest
from support.files import write
from support.timeline import ingest_diary

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

NOTES = {
    "2025-03-02.md": "---\ndate: 2025-03-02\n---\nI went swimming for 40 minutes at Millbrook pool.",
    "2025-03-09.md": "---\ndate: 2025-03-09\n---\nSwam 45 minutes with Nadia Okafor at Millbrook pool.",
    "2025-03-20.md": "---\ndate: 2025-03-20\n---\nRan 5 km in the park with Dr Hale. Bought running shoes for £42.50.",
    "2025-04-02.md": "---\ndate: 2025-04-02\n---\nWent swimming for 50 minutes. Lunch with Nadia at the Blue Door.",
    "2025-04-10.md": "---\ndate: 2025-04-10\n---\nWalter Rivera and I went swimming at the lido, 50 minutes, before his funeral.",
    # an interval: counted once, on its first day, its days summed
    "2025-04-20.md": "---\ndate: 2025-04-20\n---\nFlew to Lisbon from 14 to 18 April with Nadia.",
}

# the rollup's groups as they should be: every event counted in its groups
EXPECTED = """
select k.kind, e.day, e.activity, e.workspace, e.planned, e.charged_subjects, e.currency,
       e.amount is not null as priced,
       case when k.kind = 'place' then e.place end as place,
       case when k.kind = 'place' then e.place_keys else '{}' end as place_keys,
       case when k.kind = 'people' then e.people else '{}' end as people,
       case when k.kind = 'people' then e.people_keys else '{}' end as people_keys,
       count(*) as n, coalesce(sum(e.minutes), 0) as minutes_sum, count(e.minutes) as minutes_n,
       coalesce(sum(e.km), 0) as km_sum, count(e.km) as km_n,
       coalesce(sum(e.amount), 0) as amount_sum, count(e.amount) as amount_n,
       coalesce(sum(e.last_day - e.day + 1) filter (where e.day_precision = 'day'), 0) as span_days_sum,
       count(e.last_day) filter (where e.day_precision = 'day') as span_n
from exo_private.events e
cross join lateral (
    select 'all' as kind
    union all select 'place' where e.place is not null or e.place_keys <> '{}'
    union all select 'people' where e.people <> '{}' or e.people_keys <> '{}') k
group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
"""
HELD = """
select kind, day, activity, workspace, planned, charged_subjects, currency, priced, place, place_keys,
       people, people_keys, n, minutes_sum, minutes_n, km_sum, km_n, amount_sum, amount_n, span_days_sum, span_n
from exo_private.event_rollup
"""
# by year: the groups by day summed, and the days (bit i: 1 January + i) that have an event
EXPECTED_YEARS = f"""
select e.kind, date_trunc('year', e.day)::date as period, e.activity, e.workspace, e.planned,
       e.charged_subjects, e.currency, e.priced, e.place, e.place_keys, e.people, e.people_keys,
       sum(e.n), sum(e.minutes_sum), sum(e.minutes_n), sum(e.km_sum), sum(e.km_n), sum(e.amount_sum),
       sum(e.amount_n), sum(e.span_days_sum), sum(e.span_n), string_agg(lpad('1', e.day - date_trunc('year', e.day)::date + 1, '0'), ',' order by e.day)
from ({EXPECTED}) e
group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
"""
HELD_YEARS = """
select kind, period, activity, workspace, planned, charged_subjects, currency, priced, place, place_keys,
       people, people_keys, n, minutes_sum, minutes_n, km_sum, km_n, amount_sum, amount_n, span_days_sum, span_n,
       (select string_agg(lpad('1', i + 1, '0'), ',' order by i) from generate_series(0, 365) i
        where get_bit(days, i) = 1)
from exo_private.event_rollup_year
"""


def groups(conn):
    """(held, expected): the rollup's rows (by day, then by year) and a group-by over the events."""
    held, expected = [], []
    for have, want in ((HELD, EXPECTED), (HELD_YEARS, EXPECTED_YEARS)):
        held.append(conn.execute(f"select * from ({have}) r order by r::text").fetchall())
        expected.append(conn.execute(f"select * from ({want}) r order by r::text").fetchall())
    return held, expected


@pytest.fixture
def timeline(db, tmp_path):
    ingest_diary(db, tmp_path / "diary", NOTES)
    return db


def assert_exact(db):
    with db.connect() as conn:
        held, expected = groups(conn)
    assert held == expected
    return held[0]


def test_the_rollup_equals_the_events_grouped_after_every_change(timeline, tmp_path):
    held = assert_exact(timeline)
    assert sum(r[12] for r in held if r[0] == "all") == 6  # every event stored, counted once
    assert [(r[1].isoformat(), r[19], r[20]) for r in held if r[0] == "all" and r[2] == "travel"] == [
        ("2025-04-14", 5, 1)
    ]  # the trip on its first day, five days long
    assert any(r[5] == ["Walter Rivera"] for r in held)  # the withheld swim, in its own group
    with timeline.connect("exo_writer") as conn:
        conn.execute("select exo_private.merge_activities('swim', 'swimming')")
    assert_exact(timeline)
    with timeline.connect("exo_writer") as conn:
        lunch = conn.execute("select id from exo_private.events where activity = 'lunch'").fetchone()[0]
        conn.execute("select exo_private.drop_event(%s)", (lunch,))
    assert not [r for r in assert_exact(timeline) if r[2] == "lunch"]
    # a source re-marked: its event's group moves
    with timeline.connect("exo_writer") as conn:
        conn.execute("select exo_private.undefer_subject('Walter Rivera')")
    assert not any(r[5] for r in assert_exact(timeline))
    with timeline.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera')")
    assert any(r[5] == ["Walter Rivera"] for r in assert_exact(timeline))
    # a note changed (its chunks replaced: the events' source gone), then read again
    write(tmp_path / "diary", "2025-03-20.md", NOTES["2025-03-20.md"] + "\n\nCycled 12 km home.")
    pipeline.ingest(timeline.cfg, tmp_path / "diary", "personal", dbname=timeline.name)
    assert any(r[5] == ["source gone"] for r in assert_exact(timeline))
    Worker(timeline.cfg, dbname=timeline.name, once=True, queues=("events",), poll_s=0.01).run()
    held = assert_exact(timeline)
    assert not any(r[5] == ["source gone"] for r in held)
    assert any(r[2] == "cycle" for r in held)
    # a document deleted takes its events, and its groups, with it
    with timeline.connect() as conn:
        conn.execute("delete from exo_private.documents where path = '2025-03-09.md'")
    assert not [r for r in assert_exact(timeline) if r[1].isoformat() == "2025-03-09"]


ANSWER = (
    "select exo_private.timeline_answer(%s, %s, %s, %s::date, %s::date, %s, %s, null,"
    " exo_private.released_keys(%s), null, 8, null, %s)"
)
MARCH = ("2025-03-01", "2025-03-31")  # not whole years: read by day
COUNTED = """
select count(*) filter (where not e.planned) as events, count(distinct e.day) filter (where not e.planned) as days,
       sum(e.minutes) filter (where not e.planned) as minutes, sum(e.km) filter (where not e.planned) as km,
       sum(e.amount) filter (where not e.planned) as amount, min(e.day) filter (where not e.planned) as first_day,
       sum(e.last_day - e.day + 1) filter (where not e.planned and e.day_precision = 'day') as span_days
from exo_private.events e
where (%(activity)s::text is null or e.activity = %(activity)s) and (%(person)s::text is null or e.people_keys && exo_private.given_name_keys(%(person)s))
  and (%(place)s::text is null or e.place_keys && exo_private.given_name_keys(%(place)s))
  and (e.charged_subjects = '{}' or exo_private.unreleased(e.charged_subjects, exo_private.released_keys(%(bridge)s)) = '{}')
  and (%(from)s::date is null or e.day between %(from)s and %(to)s)
"""


@pytest.mark.parametrize(
    ("activity", "person", "place", "group", "bridge", "span"),
    [
        ("swim", None, None, "place", [], (None, None)),
        ("swim", None, None, "place", ["Walter Rivera"], (None, None)),
        (None, "Nadia", None, "activity", [], ("2025-01-01", "2025-12-31")),
        (None, None, "Millbrook pool", None, [], (None, None)),
        (None, None, None, "person", ["Walter Rivera"], ("2025-01-01", "2026-12-31")),
        ("swim", None, None, "place", [], MARCH),
        (None, None, None, "activity", [], MARCH),
    ],
)
def test_the_reading_s_figures_from_the_rollup_equal_the_events_figures(
    timeline, activity, person, place, group, bridge, span
):
    args = (group, "last", [activity] if activity else None, *span, place, person, bridge, False)
    with timeline.connect("exo_writer") as conn:
        read = conn.execute(ANSWER, args).fetchone()[0]
        counted = conn.execute(
            COUNTED,
            {
                "activity": activity,
                "person": person,
                "place": place,
                "bridge": bridge,
                "from": span[0],
                "to": span[1],
            },
        )
        events, days, minutes, km, amount, first_day, span_days = counted.fetchone()
    assert events > 0
    figures = (read["events"], read["days"], read["minutes"]["sum"], read["km"]["sum"], read["first_day"])
    assert figures == (events, days, minutes, km, first_day.isoformat())
    assert read["span_days"]["sum"] == span_days
    assert sum(a["sum"] for a in read["amount"].values()) == (amount or 0)
    assert len(read["listed"]) == min(events, 8)
    assert read["listed"][0]["day"] == read["last_day"]  # the last first
    # and they were read from the rollup, by year where the range is of whole years: every group
    # of the one counted 1,000 times over, the count follows
    by_year = span != MARCH
    with timeline.connect() as conn, conn.transaction(force_rollback=True):
        conn.execute(
            f"update exo_private.{'event_rollup_year' if by_year else 'event_rollup'} set n = n * 1000"
        )
        assert conn.execute(ANSWER, args).fetchone()[0]["events"] == 1000 * events
