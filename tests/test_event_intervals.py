"""An event's when as a day or an interval, with its precision (issue 31): ranges read by syntax
(extraction/events.py), stored by exo_private.store_events, listed by exo.events and `exo events
list` with their dates in words, counted once on their first day, and a question of how long
answered in the days of the intervals told where no minutes are (plpy/timeline.py)."""

from __future__ import annotations

from datetime import date

import pytest
import timeline as reading
from click.testing import CliRunner
from support.timeline import answer, ingest_diary, packet

from exocortex.cli import main
from exocortex.extraction import events

DAY = date(2025, 5, 21)  # a Wednesday


def when(text: str, base: date = DAY, plans: bool = False) -> list[tuple]:
    return [
        (e.activity, e.day.isoformat(), e.last_day and e.last_day.isoformat(), e.day_precision, e.planned)
        for e in events.text_events(text, base, plans=plans)
    ]


@pytest.mark.parametrize(
    ("text", "first", "last", "precision"),
    [
        ("Flew to Lisbon from 3 to 7 May.", "2025-05-03", "2025-05-07", "day"),
        ("Trip to Lisbon 3-7 May with Ana.", "2025-05-03", "2025-05-07", "day"),
        ("Stayed in Porto from May 3rd to May 7th.", "2025-05-03", "2025-05-07", "day"),
        ("Went to Berlin May 3-7.", "2025-05-03", "2025-05-07", "day"),
        ("Holiday in Crete from 28 April to 2 May.", "2025-04-28", "2025-05-02", "day"),
        # the latest such weekdays by the note's day (a Wednesday)
        ("Went to Leeds between Monday and Wednesday for a conference.", "2025-05-19", "2025-05-21", "day"),
        # a duration noun with a number, from the event's day
        ("Flew to Rome on 2 May for a week.", "2025-05-02", "2025-05-08", "day"),
        ("Went to Lisbon for three days.", "2025-05-21", "2025-05-23", "day"),
        ("Went to Bath for a couple of days.", "2025-05-21", "2025-05-22", "day"),
        ("Stayed in York for two nights.", "2025-05-21", "2025-05-23", "day"),
        ("Spent the week of 7 May in Bristol.", "2025-05-05", "2025-05-11", "week"),
        ("Last week I went to Bath.", "2025-05-12", "2025-05-18", "week"),
        ("Last month I went to Bath.", "2025-04-01", "2025-04-30", "month"),
        ("Went to Lisbon in March.", "2025-03-01", "2025-03-31", "month"),
        ("Sometime in March I went climbing in Wales.", "2025-03-01", "2025-03-31", "month"),
        ("In 2019 I ran a marathon.", "2019-01-01", "2019-12-31", "year"),
    ],
)
def test_each_form_of_a_range_is_read_with_its_precision(text, first, last, precision):
    ((_activity, day, last_day, told, planned),) = when(text)
    assert (day, last_day, told, planned) == (first, last, precision, False)


def test_a_day_stays_a_day_and_a_date_of_another_clause_is_not_the_events():
    assert when("Swam 40 lengths, 45 minutes.") == [("swim", "2025-05-21", None, "day", False)]
    assert when("Ran 5 km on 3 May and 7 May.") == [("run", "2025-05-03", None, "day", False)]
    # the March is the holiday's, told in a clause of its own
    assert when("Swam 40 lengths after the holiday I took in March.") == [
        ("swim", "2025-05-21", None, "day", False)
    ]
    # a range told backwards, or one day for one day, is no interval
    assert when("Flew to Lisbon from 7 to 3 May.")[0][2:4] == (None, "day")
    assert when("Went to Lisbon for one day.")[0][2:4] == (None, "day")


def test_a_plan_of_weekdays_next_week_is_in_the_week_after_the_days_own():
    # told on a Wednesday: this week's Friday, or next week's
    assert when("We will go camping from Friday to Sunday.", plans=True)[0][1:3] == (
        "2025-05-23",
        "2025-05-25",
    )
    assert when("We will go camping from Friday to Sunday next week.", plans=True)[0][1:3] == (
        "2025-05-30",
        "2025-06-01",
    )


def test_ranges_of_a_message_are_resolved_against_the_day_it_was_sent():
    sent = date(2025, 12, 30)  # a Tuesday
    rows = events.source_events(
        [
            (None, 11, sent, "sent", "We're flying to Oslo next week!"),
            (None, 12, sent, "sent", "We'll go to Rome from 3 to 7 January."),
            (None, 13, sent, "sent", "Drove to Leeds between Saturday and Monday."),
        ]
    )
    got = [(r["message_id"], r["day"], r["last_day"], r["day_precision"], r["planned"]) for r in rows]
    assert got == [
        (11, "2026-01-05", "2026-01-11", "week", True),  # Monday to Sunday of the week after
        (12, "2026-01-03", "2026-01-07", "day", True),  # the January ahead, not the one gone by
        (13, "2025-12-27", "2025-12-29", "day", False),  # the last Saturday to Monday by the Tuesday
    ]


NOTES = {
    "2025-05-08.md": "---\ndate: 2025-05-08\n---\nFlew to Lisbon from 3 to 7 May with Nadia.",
    "2025-06-02.md": "---\ndate: 2025-06-02\n---\nTook the train to Porto for two days. Swam 30 lengths, 40 minutes.",
    "2025-06-20.md": "---\ndate: 2025-06-20\n---\nDay trip to Galway: a family lunch.",
    "2025-07-30.md": "---\ndate: 2025-07-30\n---\nWent to Crete from 28 July to 1 August.",
    "2025-09-10.md": "---\ndate: 2025-09-10\n---\nSometime in August I went to York.",
}


@pytest.fixture
def timeline(db, tmp_path):
    ingest_diary(db, tmp_path / "diary", NOTES)
    return db


def test_intervals_are_stored_and_listed_with_their_dates_in_words(timeline, monkeypatch):
    with timeline.connect("exo_reader") as conn:
        trips = conn.execute(
            "select day::text, last_day::text, day_precision, dates, place from exo.events(what => 'travel')"
        ).fetchall()
    assert trips == [
        ("2025-05-03", "2025-05-07", "day", "3-7 May 2025", "Lisbon"),
        ("2025-06-02", "2025-06-03", "day", "2-3 June 2025", "Porto"),
        ("2025-06-20", None, "day", "2025-06-20", "Galway"),
        ("2025-07-28", "2025-08-01", "day", "28 July - 1 August 2025", "Crete"),
        ("2025-08-01", "2025-08-31", "month", "August 2025", "York"),
    ]
    monkeypatch.setenv("EXO_READER_URL", timeline.url("exo_reader"))
    monkeypatch.setenv("COLUMNS", "300")
    listed = CliRunner().invoke(main, ["events", "list", "--what", "travel"], catch_exceptions=False)
    assert listed.exit_code == 0 and "3-7 May 2025" in listed.output and "August 2025" in listed.output


def test_how_long_reads_the_days_of_the_intervals_told(timeline):
    lisbon = packet(timeline, "How long was my trip to Lisbon?")
    assert answer(lisbon) == "Answer: 5 days (3-7 May 2025, travel)"
    assert "measured in the days of each interval told (no minutes told)" in lisbon["text"]
    assert "- 3-7 May 2025 travel with Nadia at Lisbon" in lisbon["text"]
    # the longest of the trips told to the day (August's York trip only dates itself by its month)
    assert answer(packet(timeline, "What was my longest trip?")) == "Answer: 5 days (3-7 May 2025, travel)"
    assert answer(packet(timeline, "What was my shortest trip?")) == "Answer: 1 day (2025-06-20, travel)"
    total = answer(packet(timeline, "How long did I travel in total in 2025?"))
    assert total == "Answer: 12 days in total, over 3 of 5 times"  # 5 + 2 + 5; Galway and York tell none
    crete = answer(packet(timeline, "How many days was my trip to Crete?"))
    assert crete == "Answer: 5 days (28 July - 1 August 2025, travel)"
    # a measure told in minutes is still read in minutes
    assert answer(packet(timeline, "How long did I swim in total?")).startswith("Answer: 40 minutes in total")


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many days was my trip to Crete?", "total"),  # a length in days
        ("How many days did my longest trip in May last?", "longest"),
        ("How many days did I swim last month?", "count"),  # how many days held a swim
        ("How many days did I swim?", "count"),
    ],
)
def test_how_many_days_asks_a_length_only_of_being_or_lasting(question, kind):
    assert reading.Reading(question, {}).kind == kind


def test_a_range_question_counts_an_interval_once_on_its_first_day(timeline):
    # Crete, 28 July to 1 August, is July's; York, told as August, is August's (its first day)
    assert answer(packet(timeline, "How many trips did I take in July 2025?")) == "Answer: 1 time"
    assert answer(packet(timeline, "How many trips did I take in August 2025?")) == "Answer: 1 time"
