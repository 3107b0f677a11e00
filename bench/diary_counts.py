"""Aggregate questions over a diary year: how often the packet's Timeline answers how many, how much, when and which most, against BM25 and vector top-k.

The diary of bench/diary_year (seeded, one note a day, the same text for a seed) with its truth:
every event a sentence tells (a run, a swim, a lunch, a dentist's appointment, a trip, a purchase,
the book, work; the routine "Usual run, 5 km around Hollins Park." too) as a row of activity,
minutes, km, amount, place, people and the sentence shape it was written in (diary_year.Event).
From that log, --per-kind (default 20) questions of each kind, in several phrasings, over varied
ranges (none, "in 2025", "last year", "in March 2025", "in June" and "last month" with as_of, a
quarter, "between 3 March and 20 April 2025", "this year" with as_of):

- count: "How many times did I go swimming in June?", "How often did I see Maya in 2025?" (a few
  answer 0);
- total: the minutes of an activity, the km run or ridden, the money spent on purchases;
- average: the mean minutes of an activity;
- last / first: the day of an activity, of seeing a person, of the trip to a city;
- most: the exercise, pool, restaurant, climbing wall or friend most often, where one leads;
- longest: the day of the longest run or ride by distance ("When did I run the furthest in June?",
  "my longest bike ride by distance") or session of another sport by time;
- length, with --trip-ranges only: each trip is told as the days it lasted (2 to 7, ending on its
  note's day: "Flew to Lisbon from 3 to 7 May.", "Trip to Lisbon, 3-7 May.", "Took the train to
  Lisbon on 3 May for five days.", "Drove to Lisbon between Saturday and Wednesday."; drawn by a
  generator of their own, the rest of the diary the seed's), its truth on its first day, and
  questions ask how long a trip was ("How long was my trip to Lisbon?") or the longest trip of a
  month or quarter lasted ("How many days did my longest trip in May last?"): the gold a number
  of days, the first number of the answer line.

A question is asked only where its gold is unambiguous: a unique maximum (and not walking to work,
which may or may not count as exercise), every event in range carrying the measure asked about,
the same answer whether or not the as_of day itself counts.

Scoring. The packet's answer line is the first non-empty line after its `## Timeline` heading. A
count, total or average is answered when the gold appears there as a number (totals and averages
within 1 minute, km within 0.1, money to the penny; the line's ISO dates and times left out), a
day when its ISO date does, a most when the first activity, place or name the line gives is the
gold (by word stems stored with the gold: cycling "cycl", "bik", "ride" ...). Generous, for the
packet's whole text and for BM25 and vector top --k: the gold number anywhere (small numbers are
in most texts: an upper bound), the day in any form the diary writes it, a stem of the gold
anywhere. A packet without a Timeline section answers nothing.

Extraction: every row of `exo.events()` (read as the admin) is matched to a truth event of the
same day whose activity it names by those stems; printed per activity: precision (of the rows
naming it), recall and the fields right among the matched (minutes, km, amount, place, people),
and recall per sentence shape. Rows naming no diary activity (a filler's "Watched a film") are
counted apart, neither right nor wrong. Skipped, and said, where exo.events does not exist.

The vault is ingested and embedded as bench/diary_year does, then the worker drains every queue
without a chat model (the timeline build, timed), then the questions run through
exocortex.eval.shadow's packet (--budget), vector and BM25 (--k). --keep DIR writes the vault,
counts.jsonl (questions and golds) and truth.jsonl (the events).

    .venv/bin/python -m bench.diary_counts [--days 365] [--seed 29] [--per-kind 20] [--k 5]
        [--budget 4000] [--keep DIR] [--show N] [--json OUT] [--setting KEY=JSON ...] [--trip-ranges]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path

import psycopg
from psycopg.rows import dict_row
from rich import box
from rich.console import Console
from rich.table import Table

from bench.diary_year import (
    FRIENDS,
    MONTH_NAMES,
    OWNER,
    POOLS,
    Diary,
    Event,
    generate,
    month_name,
    ordinal,
    pct,
    weekday,
    write,
)
from bench.scratch import add_setting_option, apply_settings, ingest_vault, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval import shadow
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.worker.loop import Worker
from tests.support.models import free_ports

APP = "exo-bench-diary-counts"
KINDS = ("count", "total", "average", "last", "first", "most", "longest")
Entry = tuple[date, Event]

# -- activities: the stems that name them, the words that ask about them ---------------------

ACCEPT = {
    "running": ("run",),
    "swimming": ("swim",),
    "cycling": ("cycl", "bik", "ride", "riding"),
    "yoga": ("yoga",),
    "climbing": ("climb", "boulder"),
    "tennis": ("tennis",),
    "hiking": ("hik", "hill"),
    "walking": ("walk",),
    "breakfast": ("breakfast",),
    "lunch": ("lunch",),
    "dinner": ("dinner", "supper"),
    "coffee": ("coffee",),
    "dentist": ("dent",),
    "doctor": ("doctor", "gp"),
    "physio": ("physio",),
    "optician": ("optician", "optom", "eye"),
    "travel": ("travel", "trip", "train", "flight", "flew", "fly", "drive", "drove", "coach", "visit"),
    "purchase": ("purchas", "buy", "bought", "shop", "spen"),
    "reading": ("read", "book"),
    "work": ("work",),
}
"""Word starts (case-insensitive) that name each truth activity, in an extracted row or an answer."""
EXERCISE = ("running", "swimming", "cycling", "yoga", "climbing", "tennis", "hiking", "walking")


@dataclass(frozen=True)
class Words:
    do: str
    """After "did I": "go running"."""
    verb: str
    """Before the plural: "How many runs did I do"."""
    noun: str
    plural: str
    ing: str = ""
    """"How much time did I spend running"."""


WORDS = {
    "running": Words("go running", "do", "run", "runs", "running"),
    "swimming": Words("go swimming", "do", "swim", "swims", "swimming"),
    "cycling": Words("go cycling", "go on", "bike ride", "bike rides", "cycling"),
    "yoga": Words("do yoga", "do", "yoga session", "yoga sessions", "doing yoga"),
    "climbing": Words("go climbing", "do", "climbing session", "climbing sessions", "climbing"),
    "tennis": Words("play tennis", "play", "game of tennis", "games of tennis", "playing tennis"),
    "hiking": Words("go hiking", "do", "hike", "hikes", "hiking"),
    "walking": Words("walk to work", "make", "walk to work", "walks to work"),
    "breakfast": Words("meet someone for breakfast", "have", "breakfast out", "breakfasts out"),
    "lunch": Words("meet someone for lunch", "have", "lunch out", "lunches out"),
    "dinner": Words("go out for dinner", "have", "dinner out", "dinners out"),
    "coffee": Words("meet someone for coffee", "have", "coffee out", "coffees out"),
    "dentist": Words("see the dentist", "have", "dentist appointment", "dentist appointments"),
    "doctor": Words("see the doctor", "have", "doctor's appointment", "doctor's appointments"),
    "physio": Words("see the physio", "have", "physio session", "physio sessions"),
    "optician": Words("go to the optician", "have", "optician's appointment", "optician's appointments"),
    "travel": Words("take a trip to another city", "take", "trip", "trips"),
    "purchase": Words("buy something", "make", "purchase", "purchases"),
}
"""The activities questions ask about."""
TIMED = ("running", "swimming", "cycling", "yoga", "climbing", "tennis", "hiking")
"""Activities whose sentences give minutes (not the routine run or swim: those questions skip)."""
MOVE = {"running": "run", "cycling": "cycle"}
"""Activities whose sentences give km, and their verb."""

# -- question shapes ({when}: " in June" or ""; {When}: "In June"; a shape with {When} needs a range)

COUNT = (
    "How many times did I {do}{when}?",
    "How often did I {do}{when}?",
    "How many {plural} did I {verb}{when}?",
    "{When}, how many times did I {do}?",
)
COUNT_PERSON = (
    "How many times did I see {who}{when}?",
    "How often did I meet up with {who}{when}?",
    "{When}, how many times did I see {who}?",
)
TOTAL_MINUTES = (
    "How much time did I spend {ing}{when}?",
    "How long did I spend {ing} in total{when}?",
    "How many minutes did I spend {ing}{when}?",
    "{When}, what was my total time {ing}?",
)
TOTAL_KM = (
    "How far did I {move} in total{when}?",
    "How many kilometres did I {move}{when}?",
    "What distance did I cover {ing}{when}?",
    "{When}, how many km did I {move} altogether?",
)
TOTAL_SPENT = (
    "How much did I spend on purchases{when}?",
    "How much money did I spend on things I bought{when}?",
    "What did my purchases add up to{when}?",
    "{When}, how much did I spend in total on things I bought?",
)
AVERAGE = (
    "How long was my average {noun}{when}?",
    "On average, how long did I spend {ing} each time{when}?",
    "What was the average length of my {plural}{when}?",
    "{When}, how many minutes did a {noun} take me on average?",
)
LAST = (
    "When did I last {do}{when}?",
    "When was my last {noun}{when}?",
    "What was the date of my most recent {noun}{when}?",
    "{When}, when did I last {do}?",
)
FIRST = (
    "When did I first {do}{when}?",
    "When was my first {noun}{when}?",
    "On what date did I first {do}{when}?",
    "{When}, when was my first {noun}?",
)
LAST_PERSON = ("When did I last see {who}{when}?", "When was the last time I saw {who}{when}?")
FIRST_PERSON = ("When did I first see {who}{when}?", "When did I first meet up with {who}{when}?")
LAST_CITY = ("When was I last in {city}?", "When did I last travel to {city}?")
FIRST_CITY = ("When did I first visit {city}?", "When did I first go to {city}?")
MOST = {
    "exercise": (
        "What exercise did I do the most{when}?",
        "Which sport did I do most often{when}?",
        "{When}, what was my most frequent kind of exercise?",
        "What did I do most for exercise{when}?",
    ),
    "pool": ("Which pool did I swim at most{when}?", "Where did I swim most often{when}?"),
    "restaurant": (
        "Where did I eat out most{when}?",
        "Which restaurant or cafe did I go to most often{when}?",
    ),
    "wall": ("Which climbing wall did I go to most{when}?", "Where did I climb most often{when}?"),
    "friend": ("Who did I eat out with most{when}?", "Who did I meet for meals most often{when}?"),
}
LONGEST = (
    "When was my longest {noun}{when}?",
    "On which day did I do my longest {noun}{when}?",
    "What was the date of my longest {noun}{when}?",
    "{When}, when was my longest {noun}?",
)
FURTHEST = (
    "When did I {move} the furthest{when}?",
    "On which day was my longest {noun} by distance{when}?",
    "What was the date of my longest {noun} in km{when}?",
    "{When}, on which day did I {move} furthest?",
)
"""A run's or a ride's length is its distance (a longest run by time may be another day)."""

# -- ranges ---------------------------------------------------------------------------------

QUARTERS = ("first", "second", "third", "fourth")
SPANS = {
    "count": ("year", "month", "month_as_of", "last_month", "quarter", "between", "this_year", "ever"),
    "total": ("year", "month", "month_as_of", "last_month", "quarter", "between", "this_year", "last_year"),
    "average": ("year", "month", "month_as_of", "quarter", "between", "this_year", "last_year"),
    "last": ("ever", "as_of", "month", "between", "this_year", "month_as_of"),
    "first": ("ever", "year", "month", "month_as_of", "between", "quarter"),
    "most": ("year", "month", "month_as_of", "last_month", "quarter", "between", "last_year"),
    "longest": ("year", "month", "last_month", "quarter", "between", "this_year"),
    "length": ("ever", "month", "ever", "quarter"),
}
"""The ranges each kind is asked over, taken in turn."""


@dataclass(frozen=True)
class Span:
    """The days a question covers (both ends included), as it writes them, and the day it is asked on."""

    kind: str
    start: date
    end: date
    phrase: str = ""
    as_of: date | None = None


def month_end(d: date) -> date:
    return (d.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)


def long_day(d: date) -> str:
    return f"{d.day} {month_name(d)}"


def make_span(kind: str, first: date, last: date, rng: random.Random) -> Span:
    """A range of `kind` within the diary's days (first to last), in its first year but for "ever"."""
    year = first.year
    if kind == "ever":
        return Span(kind, first, last)
    last = min(last, date(year, 12, 31))
    if kind == "as_of":
        as_of = first + timedelta(days=rng.randint(min(30, (last - first).days), (last - first).days))
        return Span(kind, first, as_of, "", as_of)
    if kind == "year":
        phrase = rng.choice((f"in {year}", f"during {year}", f"over the whole of {year}"))
        return Span(kind, date(year, 1, 1), date(year, 12, 31), phrase)
    if kind == "last_year":
        as_of = date(year + 1, 1, 1) + timedelta(days=rng.randint(0, 80))
        return Span(kind, date(year, 1, 1), date(year, 12, 31), "last year", as_of)
    if kind == "this_year":
        start = min(date(year, 2, 1), last)
        as_of = start + timedelta(days=rng.randint(0, (last - start).days))
        return Span(kind, date(year, 1, 1), as_of, rng.choice(("this year", "so far this year")), as_of)
    if kind in ("month", "month_as_of", "last_month"):
        start = date(year, rng.randint(1, last.month), 1)
        end, name = month_end(start), MONTH_NAMES[start.month - 1]
        if kind == "month":
            return Span(kind, start, end, rng.choice((f"in {name} {year}", f"during {name} {year}")))
        if kind == "month_as_of":
            as_of = end + timedelta(days=rng.randint(1, 60))
            return Span(kind, start, end, rng.choice((f"in {name}", f"during {name}")), as_of)
        return Span(kind, start, end, "last month", end + timedelta(days=rng.randint(1, 25)))
    if kind == "quarter":
        q = rng.randint(0, (last.month - 1) // 3)
        start = date(year, 3 * q + 1, 1)
        end = month_end(date(year, 3 * q + 3, 1))
        phrase = rng.choice((f"in the {QUARTERS[q]} quarter of {year}", f"in Q{q + 1} {year}"))
        return Span(kind, start, end, phrase)
    if kind == "between":
        days = (last - first).days
        start = first + timedelta(days=rng.randint(0, max(0, days - 14)))
        end = min(last, start + timedelta(days=rng.randint(14, 75)))
        phrase = rng.choice(
            (
                f"between {long_day(start)} and {long_day(end)} {year}",
                f"from {long_day(start)} {year} to {long_day(end)} {year}",
                f"between {start.isoformat()} and {end.isoformat()}",
            )
        )
        return Span(kind, start, end, phrase)
    raise ValueError(f"unknown range kind {kind!r}")


# -- questions and their golds ------------------------------------------------------------------


@dataclass(frozen=True)
class Aggregate:
    """One aggregate question and its gold: a number (count, total, average), an ISO day (last,
    first, longest) or a name (most) that `accept` stems name and `rivals` stems do not."""

    question: str
    kind: str
    span: Span
    subject: str
    gold: float | str
    unit: str = ""
    """times, minutes, km or GBP for a number."""
    accept: tuple[str, ...] = ()
    rivals: tuple[str, ...] = ()
    phrasing: str = ""
    """The question's shape, before its words and range were filled in."""
    detail: str = ""
    """What a reader of a miss wants beside the gold (the runner-up, the events counted)."""

    def to_json(self) -> dict:
        s = self.span
        return {
            "question": self.question,
            "kind": self.kind,
            "range": s.kind,
            "from": s.start.isoformat(),
            "to": s.end.isoformat(),
            "as_of": s.as_of.isoformat() if s.as_of else None,
            "subject": self.subject,
            "gold": self.gold,
            "unit": self.unit,
            "accept": list(self.accept),
            "phrasing": self.phrasing,
            "detail": self.detail,
        }


def settle(log: Sequence[Entry], span: Span, keep: Callable[[Event], bool], pick: Callable) -> object:
    """pick(the entries in span that keep holds), or None when pick finds no gold or the gold
    depends on whether the as_of day itself counts."""
    value = pick([(d, e) for d, e in log if span.start <= d <= span.end and keep(e)])
    if value is None or span.as_of != span.end:
        return value
    before = pick([(d, e) for d, e in log if span.start <= d < span.end and keep(e)])
    return value if before == value else None


def render(shapes: tuple[str, ...], span: Span, rng: random.Random, **words: str) -> tuple[str, str]:
    """A shape (one needing a range only where the span has a phrase), and it filled in."""
    shape = rng.choice([s for s in shapes if span.phrase or "{When}" not in s])
    when = span.phrase
    return shape, shape.format(when=f" {when}" if when else "", When=when[:1].upper() + when[1:], **words)


def is_activity(name: str) -> Callable[[Event], bool]:
    return lambda e: e.activity == name


def seen_with(who: str) -> Callable[[Event], bool]:
    """Events in which I saw `who`: meals, tennis, appointments (not a yoga teacher or a colleague)."""
    return lambda e: who in e.people and (e.kind in ("meal", "appointment") or e.activity == "tennis")


def measured(unit: str) -> Callable[[Sequence[Entry]], list | None]:
    """The entries' values of `unit` (minutes or km), or None when any entry lacks it."""

    def values(entries: Sequence[Entry]) -> list | None:
        got = [getattr(e, unit) for _, e in entries]
        return None if None in got else got

    return values


ZERO_SHARE = 0.12
"""Of count questions, about this share asks about an activity the range never holds (gold 0)."""


def ask_count(log: Sequence[Entry], span: Span, rng: random.Random) -> Aggregate | None:
    if rng.random() < 0.25:
        who = rng.choice((*FRIENDS, "Dr Hale"))
        gold = settle(log, span, seen_with(who), len)
        if not gold:
            return None
        shape, text = render(COUNT_PERSON, span, rng, who=who)
        return Aggregate(text, "count", span, who, gold, "times", phrasing=shape)
    absent = sorted(set(WORDS) - {e.activity for d, e in log if span.start <= d <= span.end})
    act = rng.choice(absent if absent and rng.random() < ZERO_SHARE else list(WORDS))
    gold = settle(log, span, is_activity(act), len)
    if gold is None:
        return None
    w = WORDS[act]
    shape, text = render(COUNT, span, rng, do=w.do, verb=w.verb, plural=w.plural)
    return Aggregate(text, "count", span, act, gold, "times", phrasing=shape)


def ask_total(log: Sequence[Entry], span: Span, rng: random.Random) -> Aggregate | None:
    unit = rng.choice(("minutes", "minutes", "km", "GBP"))
    if unit == "GBP":
        act, shapes, words = "purchase", TOTAL_SPENT, {}
        amounts = measured("amount")
    elif unit == "km":
        act = rng.choice(list(MOVE))
        shapes, words, amounts = TOTAL_KM, {"move": MOVE[act], "ing": WORDS[act].ing}, measured("km")
    else:
        act = rng.choice(TIMED)
        shapes, words, amounts = TOTAL_MINUTES, {"ing": WORDS[act].ing}, measured("minutes")

    def total(entries: Sequence[Entry]) -> float | None:
        values = amounts(entries)
        return round(sum(values), 2) if values else None

    gold = settle(log, span, is_activity(act), total)
    if gold is None:
        return None
    n = sum(1 for d, e in log if span.start <= d <= span.end and e.activity == act)
    shape, text = render(shapes, span, rng, **words)
    return Aggregate(text, "total", span, act, gold, unit, phrasing=shape, detail=f"{n} times")


def ask_average(log: Sequence[Entry], span: Span, rng: random.Random) -> Aggregate | None:
    act = rng.choice(TIMED)

    def mean(entries: Sequence[Entry]) -> float | None:
        values = measured("minutes")(entries)
        return round(statistics.mean(values), 2) if values and len(values) > 1 else None

    gold = settle(log, span, is_activity(act), mean)
    if gold is None:
        return None
    w = WORDS[act]
    shape, text = render(AVERAGE, span, rng, noun=w.noun, plural=w.plural, ing=w.ing)
    return Aggregate(text, "average", span, act, gold, "minutes", phrasing=shape)


def ask_day(kind: str, log: Sequence[Entry], span: Span, rng: random.Random) -> Aggregate | None:
    """A last or first question: of an activity, of seeing a person, of the trip to a city."""
    choose = max if kind == "last" else min

    def day(entries: Sequence[Entry]) -> str | None:
        return choose(d for d, _ in entries).isoformat() if entries else None

    about = rng.choice(("activity", "activity", "activity", "person", "person", "city"))
    cities = [e.place for _, e in log if e.activity == "travel"]
    if about == "city" and span.kind == "ever" and cities:  # every trip goes to a new city
        city = rng.choice(cities)
        gold = settle(log, span, lambda e: e.activity == "travel" and e.place == city, day)
        shape, text = render(LAST_CITY if kind == "last" else FIRST_CITY, span, rng, city=city)
        return Aggregate(text, kind, span, city, gold, phrasing=shape)
    if about == "person":
        named = sorted({p for _, e in log for p in e.people if seen_with(p)(e)} - set(FRIENDS))
        who = rng.choice((*FRIENDS, "Dr Hale", *([rng.choice(named)] if named else [])))
        gold = settle(log, span, seen_with(who), day)
        if gold is None:
            return None
        shape, text = render(LAST_PERSON if kind == "last" else FIRST_PERSON, span, rng, who=who)
        return Aggregate(text, kind, span, who, gold, phrasing=shape)
    act = rng.choice(list(WORDS))
    gold = settle(log, span, is_activity(act), day)
    if gold is None:
        return None
    w = WORDS[act]
    shape, text = render(LAST if kind == "last" else FIRST, span, rng, do=w.do, noun=w.noun)
    return Aggregate(text, kind, span, act, gold, phrasing=shape)


def place_stem(place: str) -> str:
    """How an answer names a place: "the Blue Door" -> "blue door", "Rosa's" -> "rosa"."""
    return place.casefold().removeprefix("the ").removesuffix("'s")


def most_label(which: str) -> Callable[[Event], str | None]:
    """What an event counts for in a `which` most question (None: it does not count)."""
    if which == "exercise":
        return lambda e: e.activity if e.kind == "exercise" else None
    if which == "pool":
        return lambda e: e.place if e.activity == "swimming" else None
    if which == "restaurant":
        return lambda e: e.place if e.kind == "meal" else None
    if which == "wall":
        return lambda e: e.place if e.activity == "climbing" else None
    return lambda e: e.people[0] if e.kind == "meal" else None


def stems_of(which: str, label: str) -> tuple[str, ...]:
    return ACCEPT[label] if which == "exercise" else (place_stem(label),)


def ask_most(log: Sequence[Entry], span: Span, rng: random.Random) -> Aggregate | None:
    which = rng.choice(("exercise", "exercise", "pool", "restaurant", "wall", "friend"))
    label = most_label(which)

    def leader(entries: Sequence[Entry]) -> tuple | None:
        ranked = Counter(label(e) for _, e in entries if label(e)).most_common()
        if not ranked or ranked[0][1] < 2 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
            return None
        return None if ranked[0][0] == "walking" else tuple(ranked)

    ranked = settle(log, span, lambda e: label(e) is not None, leader)
    if ranked is None:
        return None
    gold = ranked[0][0]
    labels = {name for name, _ in ranked} | set(EXERCISE if which == "exercise" else ())
    labels |= set(POOLS if which == "pool" else ())
    rivals = tuple(s for name in sorted(labels - {gold}) for s in stems_of(which, name))
    shape, text = render(MOST[which], span, rng)
    detail = "; ".join(f"{name} {n}" for name, n in ranked[:3])
    return Aggregate(text, "most", span, which, gold, "", stems_of(which, gold), rivals, shape, detail)


def ask_longest(log: Sequence[Entry], span: Span, rng: random.Random) -> Aggregate | None:
    act = rng.choice(TIMED)
    unit = "km" if act in MOVE else "minutes"

    def longest(entries: Sequence[Entry]) -> tuple | None:
        values = measured(unit)(entries)
        if not values:
            return None
        top = max(values)
        if values.count(top) > 1:
            return None
        return next(d for d, e in entries if getattr(e, unit) == top).isoformat(), top

    found = settle(log, span, is_activity(act), longest)
    if found is None:
        return None
    gold, top = found
    shapes = FURTHEST if act in MOVE else LONGEST
    shape, text = render(shapes, span, rng, noun=WORDS[act].noun, move=MOVE.get(act, ""))
    return Aggregate(text, "longest", span, act, gold, phrasing=shape, detail=f"{act}, {top} {unit}")


TRIP_DAYS = (2, 7)
"""With --trip-ranges: how many days a trip lasts, ending on the day of the note that tells it."""
DAY_WORDS = ("two", "three", "four", "five", "six", "seven")


def range_trips(diary: Diary, seed: int) -> dict[str, tuple[date, int]]:
    """--trip-ranges: each trip's sentence, in its note and its event, rewritten as the days it
    lasted (TRIP_DAYS, ending on the note's day) in one of four forms, by a generator of its own
    (the rest of the diary stays the seed's). Returns each trip's city: its first day and days."""
    rng = random.Random(seed * 1000 + 31)
    trips = {}
    for note in diary.notes:
        for i, e in enumerate(note.events):
            if e.activity != "travel":
                continue
            n = rng.randint(*TRIP_DAYS)
            first, last = note.day - timedelta(days=n - 1), note.day
            start = f"{first.day} {month_name(first)}"
            days = f"{first.day}" if first.month == last.month else start
            shapes = (
                f"Flew to {e.place} from {days} to {last.day} {month_name(last)}.",
                f"Trip to {e.place}, {days}-{last.day} {month_name(last)}.",
                f"Took the train to {e.place} on {start} for {DAY_WORDS[n - 2]} days.",
                f"Drove to {e.place} between {weekday(first)} and {weekday(last)}.",
            )
            shape = rng.randrange(len(shapes))
            note.text = note.text.replace(e.text, shapes[shape])
            note.events[i] = replace(e, text=shapes[shape], shape=shape)
            trips[e.place] = (first, n)
    return trips


LENGTH = ("How long was my trip to {city}?", "How many days was my trip to {city}?")
LONGEST_TRIP = ("How many days did my longest trip{when} last?", "{When}, how many days was my longest trip?")


def ask_length(
    trips: dict[str, tuple[date, int]], log: Sequence[Entry], span: Span, rng: random.Random
) -> Aggregate | None:
    """How long one trip was (over the whole diary), or the longest trip of a range lasted (by its
    first day, as the timeline counts an interval), where one trip is the longest."""
    if span.kind == "ever":
        city = rng.choice(sorted(trips))
        shape, text = render(LENGTH, span, rng, city=city)
        return Aggregate(text, "length", span, city, trips[city][1], "days", phrasing=shape)
    within = sorted(n for first, n in trips.values() if span.start <= first <= span.end)
    if not within or within.count(within[-1]) > 1:
        return None
    shape, text = render(LONGEST_TRIP, span, rng)
    return Aggregate(text, "length", span, "longest trip", within[-1], "days", phrasing=shape)


ASK = {
    "count": ask_count,
    "total": ask_total,
    "average": ask_average,
    "last": lambda log, span, rng: ask_day("last", log, span, rng),
    "first": lambda log, span, rng: ask_day("first", log, span, rng),
    "most": ask_most,
    "longest": ask_longest,
}


def make_questions(
    log: Sequence[Entry], per_kind: int, rng: random.Random, kinds: Sequence[str] = KINDS, ask: dict = ASK
) -> tuple[list[Aggregate], list[str]]:
    """`per_kind` questions of each kind, the ranges taken in turn, none about the same subject and
    days in the same kind of range twice; also the kinds that found fewer."""
    first, last = log[0][0], log[-1][0]
    questions: list[Aggregate] = []
    shortfall = []
    asked: set[tuple] = set()
    for kind in kinds:
        made = 0
        for attempt in range(per_kind * 200):
            if made == per_kind:
                break
            spans = SPANS[kind]
            q = ask[kind](log, make_span(spans[attempt % len(spans)], first, last, rng), rng)
            if q is None or (kind, q.subject, q.span.kind, q.span.start, q.span.end) in asked:
                continue
            asked.add((kind, q.subject, q.span.kind, q.span.start, q.span.end))
            questions.append(q)
            made += 1
        if made < per_kind:
            shortfall.append(f"{kind}: {made} of {per_kind}")
    return questions, shortfall


# -- scoring --------------------------------------------------------------------------------

TOLERANCE = {"times": 0.0, "minutes": 1.0, "km": 0.1, "GBP": 0.005, "days": 0.0}
DAYS_AND_TIMES = re.compile(r"\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2}|\d{1,2}/\d{1,2}/\d{4}|\b\d{1,2}:\d{2}\b")
NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
NONE_SAID = re.compile(r"\b(zero|none|never)\b", re.IGNORECASE)


def timeline_section(text: str) -> str | None:
    """The packet's `## Timeline` section (to the next `## ` heading), or None when it has none."""
    lines = text.splitlines()
    if "## Timeline" not in (line.strip() for line in lines):
        return None
    start = next(i for i, line in enumerate(lines) if line.strip() == "## Timeline") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip()


def answer_line(text: str) -> str | None:
    """The first non-empty line after the `## Timeline` heading, or None."""
    section = timeline_section(text)
    if section is None:
        return None
    return next((line.strip() for line in section.splitlines() if line.strip()), "")


def numbers(text: str) -> list[float]:
    """The numbers a text gives, its dates and times of day left out ("1,250" is 1250)."""
    return [float(m.replace(",", "")) for m in NUMBER.findall(DAYS_AND_TIMES.sub(" ", text))]


def date_forms(d: date) -> tuple[str, ...]:
    """A day as the diary writes it (bench/diary_year: body_date, frontmatter_date)."""
    return (
        d.isoformat(),
        f"{d:%Y/%m/%d}",
        f"{d:%d/%m/%Y}",
        f"{d.day} {month_name(d)} {d.year}",
        f"{month_name(d)} {ordinal(d.day)}",
        f"{month_name(d)} {d.day}, {d.year}",
    )


def says(text: str, phrase: str) -> bool:
    """Whether text holds phrase, not inside a longer word or number ("4 June" is not in "14 June")."""
    return re.search(rf"(?<![\w/]){re.escape(phrase)}(?![\w/])", text, re.IGNORECASE) is not None


def stem_at(text: str, stems: Sequence[str]) -> int | None:
    """Where the first word starting with one of the stems begins, or None."""
    hits = [m.start() for s in stems if (m := re.search(rf"\b{re.escape(s)}", text, re.IGNORECASE))]
    return min(hits, default=None)


def holds(q: Aggregate, text: str, exact: bool) -> bool:
    """Whether text gives the gold: exactly (text is the answer line) or anywhere (generous)."""
    if q.unit:
        if q.gold == 0 and NONE_SAID.search(text):
            return True
        if exact and q.unit == "days":  # "5 days (3-7 May 2025, travel)": the first number
            return numbers(text)[:1] == [float(q.gold)]
        return any(abs(n - float(q.gold)) <= TOLERANCE[q.unit] + 1e-9 for n in numbers(text))
    if q.kind == "most":
        at = stem_at(text, q.accept)
        if not exact or at is None:
            return at is not None
        rival = stem_at(text, q.rivals)
        return rival is None or at <= rival
    day = date.fromisoformat(str(q.gold))
    return says(text, day.isoformat()) if exact else any(says(text, f) for f in date_forms(day))


@dataclass
class Result:
    q: Aggregate
    line: str | None
    """The answer line (None: no Timeline section)."""
    section: str | None
    hits: dict[str, bool | None]
    """Per context: timeline (exact), packet, bm25, vector (None: unavailable)."""
    tokens: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            **self.q.to_json(),
            "answer_line": self.line,
            **self.hits,
            "tokens": self.tokens,
            "timeline_section": self.section,
        }


def ask_all(
    admin: psycopg.Connection, reader: psycopg.Connection, questions: Sequence[Aggregate], k: int, budget: int
) -> list[Result]:
    """Each question through the packet (as exo_reader) and both baselines, as exo eval shadow
    runs them, scored against its gold."""
    (model_id,) = admin.execute("select exo_private.active_embedding_model()").fetchone()
    workspaces = shadow.lexical_workspaces(admin)
    began = time.perf_counter()
    results = []
    for done, q in enumerate(questions, 1):
        asked = shadow.Question(q.question, (str(q.gold),), as_of=q.span.as_of, kind=q.kind)
        vector = shadow.embed_question(admin, q.question).get("vector")
        packet, _ = shadow.run_packet(reader, asked, budget, vector)
        texts = {"packet": (packet["text"], packet["tokens"])}
        chunks, _ = shadow.run_bm25(admin, asked, k, workspaces)
        contexts = {"bm25": chunks}
        if vector is not None and model_id is not None:
            contexts["vector"], _ = shadow.run_vector(admin, asked, k, vector, model_id)
        for name, found in contexts.items():
            text = "\n\n".join(c.body for c in found)
            texts[name] = (text, shadow.estimate_tokens(text))
        line = answer_line(packet["text"])
        hits: dict[str, bool | None] = {"timeline": line is not None and holds(q, line, exact=True)}
        hits |= {name: holds(q, text, exact=False) for name, (text, _) in texts.items()}
        hits.setdefault("vector", None)
        tokens = {name: n for name, (_, n) in texts.items()}
        results.append(Result(q, line, timeline_section(packet["text"]), hits, tokens))
        if done % 20 == 0 or done == len(questions):
            print(f"  {done}/{len(questions)} questions, {time.perf_counter() - began:.0f} s", flush=True)
    return results


CONTEXTS = ("timeline", "packet", "bm25", "vector")


def score_table(title: str, groups: dict[str, list[Result]]) -> Table:
    table = Table(title=title, box=box.MARKDOWN)
    columns = ("", "n", "timeline answered", "packet (anywhere)", "bm25 top-k", "vector top-k")
    for c in (*columns, "tokens p50 packet/bm25/vector"):
        table.add_column(c, justify="left" if not c else "right")
    for label, group in groups.items():
        cells = []
        for c in CONTEXTS:
            ran = [r.hits[c] for r in group if r.hits[c] is not None]
            cells.append(pct(sum(ran), len(ran)))
        tokens = [[r.tokens[c] for r in group if c in r.tokens] for c in ("packet", "bm25", "vector")]
        cells.append("/".join(f"{statistics.median(t):.0f}" if t else "-" for t in tokens))
        table.add_row(label, str(len(group)), *cells)
    return table


def print_scores(results: list[Result], console: Console) -> None:
    by_kind = {k: [r for r in results if r.q.kind == k] for k in dict.fromkeys(r.q.kind for r in results)}
    console.print(score_table("by kind", {**by_kind, "all": results}))
    ranges = sorted({r.q.span.kind for r in results})
    console.print(score_table("by range", {s: [r for r in results if r.q.span.kind == s] for s in ranges}))
    print(f"packets with a Timeline section: {pct(sum(r.line is not None for r in results), len(results))}")


def print_misses(results: list[Result], show: int) -> None:
    """Up to `show` questions of each kind the Timeline did not answer, with its section."""
    for kind in dict.fromkeys(r.q.kind for r in results):
        for r in [r for r in results if r.q.kind == kind and not r.hits["timeline"]][:show]:
            q = r.q
            gold = f"{q.gold} {q.unit}".strip() + (f" ({q.detail})" if q.detail else "")
            print(
                f"\n== {kind}: {q.question} [{q.span.kind}: {q.span.start} to {q.span.end}"
                f"{f', as of {q.span.as_of}' if q.span.as_of else ''}] gold {gold}"
            )
            print(r.section if r.section is not None else "(no Timeline section)")


# -- extraction -----------------------------------------------------------------------------


def names(activity: str, truth: str) -> bool:
    """Whether an extracted activity names the truth activity (a stem of it starts one of its words)."""
    return stem_at(activity, ACCEPT[truth]) is not None


def label_of(activity: str) -> str:
    return next((a for a in ACCEPT if names(activity, a)), "other")


def number(value: object) -> float | None:
    return None if value is None else float(value)


def fields_right(row: dict, e: Event) -> dict[str, bool]:
    """Per field the truth event gives: whether the extracted row has it right."""
    right = {}
    if e.minutes is not None:
        right["minutes"] = (
            number(row.get("minutes")) is not None and abs(number(row["minutes"]) - e.minutes) < 0.5
        )
    if e.km is not None:
        right["km"] = number(row.get("km")) is not None and abs(number(row["km"]) - e.km) < 0.05
    if e.amount is not None:
        right["amount"] = (
            number(row.get("amount")) is not None and abs(number(row["amount"]) - e.amount) < 0.005
        )
    if e.place:
        got = (row.get("place") or "").casefold()
        right["place"] = bool(got) and (got in e.place.casefold() or e.place.casefold() in got)
    if e.people:
        got = " ".join(row.get("people") or []).casefold()
        right["people"] = all(p.split()[-1].casefold() in got for p in e.people)
    return right


FIELDS = ("minutes", "km", "amount", "place", "people")
MAX_EVENTS = 10000


def extraction(admin: psycopg.Connection, log: Sequence[Entry]) -> dict | None:
    """exo.events() against the truth (None: exo.events does not exist)."""
    found = admin.execute(
        "select proargnames from pg_proc where pronamespace = 'exo'::regnamespace and proname = 'events'"
    ).fetchone()
    if found is None:
        return None
    # Every row: the timeline's default page is short (max_events, where it has one).
    call = f"exo.events(max_events => {MAX_EVENTS})" if "max_events" in (found[0] or ()) else "exo.events()"
    with admin.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"select * from {call}").fetchall()
    truth_by_day: dict[date, list[Event]] = defaultdict(list)
    for d, e in log:
        truth_by_day[d].append(e)
    matched: dict[int, tuple[date, Event]] = {}  # id(truth event) -> the row's day and the event
    per = defaultdict(Counter)  # activity -> extracted, matched, and field right/given counts
    unmatched_named = 0
    unmatched = Counter()  # the activities of the rows that match no truth event
    for row in sorted(rows, key=lambda r: (r["day"] or date.min, str(r.get("activity")))):
        activity = str(row.get("activity") or "")
        event = next(
            (
                e
                for e in truth_by_day.get(row["day"], [])
                if id(e) not in matched and names(activity, e.activity)
            ),
            None,
        )
        if event is None:
            label = label_of(activity)
            per[label]["extracted"] += 1
            unmatched[activity] += 1
            unmatched_named += label != "other"
            continue
        matched[id(event)] = (row["day"], event)
        c = per[event.activity]
        c["extracted"] += 1
        c["matched"] += 1
        for name, ok in fields_right(row, event).items():
            c[f"{name} given"] += 1
            c[f"{name} right"] += ok
    shapes = defaultdict(Counter)
    for _, e in log:
        per[e.activity]["truth"] += 1
        shape = f"r{e.shape}" if e.routine else str(e.shape)
        shapes[e.activity][(shape, "truth")] += 1
        shapes[e.activity][(shape, "found")] += id(e) in matched
    return {
        "rows": len(rows),
        "per": per,
        "shapes": shapes,
        "unmatched_named": unmatched_named,
        "unmatched": unmatched,
    }


def print_extraction(found: dict, console: Console) -> None:
    per = found["per"]
    table = Table(
        title=f"extraction: {found['rows']} rows of exo.events() (fields: right of the matched that the truth gives)",
        box=box.MARKDOWN,
    )
    for c in ("activity", "truth", "extracted", "precision", "recall", *FIELDS):
        table.add_column(c, justify="left" if c == "activity" else "right")
    total = Counter()
    for a in [a for a in ACCEPT if a in per]:
        total.update(per[a])
        table.add_row(a, *cells(per[a]))
    table.add_row("all", *cells(total))
    # Rows that name no diary activity ("Watched a film, fell asleep halfway": a filler sentence)
    # tell what the truth does not track; neither right nor wrong.
    table.add_row("(other)", "-", str(per["other"]["extracted"]), *["-"] * (2 + len(FIELDS)))
    console.print(table)
    if found["rows"] >= MAX_EVENTS:
        print(f"(exo.events gave its most, {MAX_EVENTS} rows: there may be more)")
    print(
        f"rows naming a diary activity but matching no event of theirs that day: {found['unmatched_named']}"
    )
    common = ", ".join(f"{a} {n}" for a, n in found["unmatched"].most_common(15))
    print(f"activities of the unmatched rows (other included), most common: {common or '-'}")
    print("recall per sentence shape (r: a routine sentence):")
    for a in ACCEPT:
        s = found["shapes"].get(a)
        if s:
            keys = sorted({k for k, _ in s}, key=lambda k: (k.startswith("r"), k))
            print(f"  {a:10s} " + ", ".join(f"{k}: {s[(k, 'found')]}/{s[(k, 'truth')]}" for k in keys))


def cells(c: Counter) -> list[str]:
    return [
        str(c["truth"]),
        str(c["extracted"]),
        pct(c["matched"], c["extracted"]),
        pct(c["matched"], c["truth"]),
        *(f"{c[f'{f} right']}/{c[f'{f} given']}" if c[f"{f} given"] else "-" for f in FIELDS),
    ]


# -- the run --------------------------------------------------------------------------------


def build_timeline(cfg: config.Config, name: str, admin: psycopg.Connection) -> tuple[float, dict]:
    """Drain every queue of the worker as `exo worker` does without a chat model (the extract
    queue's pattern and parse passes, capsules, events); its seconds, what it did per queue and
    the jobs that raised or failed (exo_private.job_failures: queue, error class, message, jobs)."""
    admin.execute(
        "update exo_private.settings set value = value || '{\"url\": null}' where key = 'models.chat'"
    )
    began = time.perf_counter()
    result = Worker(cfg, dbname=name, once=True, poll_s=0.01).run()
    seconds = time.perf_counter() - began
    failures = admin.execute(
        "select queue, error_class, left(message, 200), count(*) from exo_private.job_failures "
        "group by 1, 2, 3 order by 4 desc"
    ).fetchall()
    return seconds, {
        "done": dict(result.done),
        "failed": dict(result.failed),
        "errors": dict(result.errors),
        "failures": [list(f) for f in failures],
    }


def write_truth(root: Path, log: Sequence[Entry], questions: Sequence[Aggregate]) -> None:
    (root / "truth.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "day": d.isoformat(),
                    "activity": e.activity,
                    "minutes": e.minutes,
                    "km": e.km,
                    "amount": e.amount,
                    "currency": e.currency,
                    "place": e.place,
                    "people": list(e.people),
                    "shape": e.shape,
                    "routine": e.routine,
                    "text": e.text,
                }
            )
            + "\n"
            for d, e in log
        ),
        encoding="utf-8",
    )
    (root / "counts.jsonl").write_text(
        "".join(json.dumps(q.to_json()) + "\n" for q in questions), encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="notes, one a day from 1 January")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--year", type=int, default=2025)
    parser.add_argument("--per-kind", type=int, default=20, help="questions of each kind")
    parser.add_argument("--k", type=int, default=5, help="chunks each baseline returns")
    parser.add_argument("--budget", type=int, default=4000, help="the packet's token budget (its default)")
    parser.add_argument("--json", type=Path, help="write the per-question results here")
    parser.add_argument("--keep", type=Path, help="write the vault, counts.jsonl and truth.jsonl here")
    parser.add_argument(
        "--show", type=int, default=2, help="print N questions of each kind the Timeline missed"
    )
    parser.add_argument(
        "--trip-ranges",
        action="store_true",
        help="trips told as ranges of days, and questions of their length",
    )
    add_setting_option(parser)
    args = parser.parse_args()
    if args.days < 28:
        parser.error("--days must be at least 28 (a month to ask about)")
    settings = trial_settings(parser, args)

    began_all = time.perf_counter()
    diary = generate(args.seed, args.days, 0, args.year)
    trips = range_trips(diary, args.seed) if args.trip_ranges else {}
    # a trip told as a range is on its first day, as the timeline counts it
    log = [(trips[e.place][0] if e.place in trips and e.activity == "travel" else n.day, e)
           for n in diary.notes for e in n.events]  # fmt: skip
    kinds, ask = KINDS, ASK
    if trips:
        kinds, ask = (
            (*KINDS, "length"),
            ASK | {"length": lambda log, span, rng: ask_length(trips, log, span, rng)},
        )
    questions, shortfall = make_questions(log, args.per_kind, random.Random(args.seed), kinds, ask)
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-diary-counts-"))
    root = args.keep or run_dir
    root.mkdir(parents=True, exist_ok=True)
    vault = write(diary, root)
    write_truth(root, log, questions)
    print(
        f"{datetime.now():%Y-%m-%d %H:%M}: {len(diary.notes)} notes, {len(log)} events, "
        f"{len(questions)} questions ({', '.join(f'{k} {sum(q.kind == k for q in questions)}' for k in kinds)})",
        flush=True,
    )
    for s in shortfall:
        print(f"  fewer questions than asked for: {s}")
    (port,) = free_ports(1)
    console = Console(highlight=False, width=160)
    cfg = config.load()
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        with scratch_database(cfg, "bench_diary_counts") as name:
            began = time.perf_counter()
            ingest_vault(cfg, name, f"http://127.0.0.1:{port}/v1", vault, OWNER, "exo-bench-diary-counts")
            built_s = time.perf_counter() - began
            print(f"ingested and embedded in {built_s:.0f} s", flush=True)
            with (
                connect(admin_url(cfg, name), APP, autocommit=True) as admin,
                connect(role_url(cfg, "exo_reader", name), APP, autocommit=True) as reader,
            ):
                apply_settings(admin, settings)  # before the worker: a trial may be of extraction
                timeline_s, worker = build_timeline(cfg, name, admin)
                print(f"timeline build (the worker, every queue): {timeline_s:.1f} s, {worker}", flush=True)
                found = extraction(admin, log)
                began = time.perf_counter()
                results = ask_all(admin, reader, questions, args.k, args.budget)
                questions_s = time.perf_counter() - began
    finally:
        services.down(cfg, run_dir=run_dir)

    print_scores(results, console)
    if found is None:
        print("\nno timeline (exo.events missing)")
    else:
        print_extraction(found, console)
    print_misses(results, args.show)
    print(
        f"\nbuilt in {built_s:.0f} s, timeline in {timeline_s:.1f} s, questions in {questions_s:.0f} s, "
        f"all in {time.perf_counter() - began_all:.0f} s"
    )
    if args.json:
        data = {
            "corpus": {
                "days": args.days,
                "seed": args.seed,
                "year": args.year,
                "per_kind": args.per_kind,
                "trip_ranges": args.trip_ranges,
            },
            "shortfall": shortfall,
            "timings_s": {
                "built": round(built_s, 1),
                "timeline": round(timeline_s, 1),
                "questions": round(questions_s, 1),
            },
            "worker": worker,
            "extraction": None
            if found is None
            else {"rows": found["rows"], "per_activity": {a: dict(c) for a, c in found["per"].items()}},
            "questions": [r.to_json() for r in results],
        }
        args.json.write_text(json.dumps(data, indent=1, default=str) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
