"""Dated questions over a diary year: how often the context packet holds the day's note, against BM25 and vector top-k.

A generated year of first-person diary notes (one a day, seeded): each 2 to 5 short paragraphs of
the day's exercise (durations written "40 minutes", "an hour", "1h15", "half an hour" ...), meals
with people and places, work items, the book being read, appointments (dentist, doctor, physio,
optician, with names), trips to cities and purchases with amounts, every kind in at least four
sentence shapes, beside routine days that repeat the same run or swim word for word, so that the
date is what tells many days apart. Dates vary on purpose:

- the file name: mostly `YYYY-MM-DD.md`, some `YYYY/MM/DD.md`, some `DD-MM-YYYY journal.md`, some a
  weekday (`YYYY-MM/Tuesday.md`, only where the note states its date elsewhere);
- frontmatter in about two thirds of the notes: `date:` as 2025-06-24, "24 June 2025", "June 24,
  2025", 2025/06/24 or 24/06/2025 (or no date), sometimes a `title:`, with or without a date;
- the body's first line states the date in about 45% ("Tuesday 24 June 2025", "24/06/2025",
  "June 24th", "2025-06-24", "Tuesday, June 24th, 2025"); the rest never name a day or month.

Questions (--questions, default 120) each expect a string that only the answering note holds (a
person, a distance and route, a book, a city ...) and cite that note as the source. Their kind is
`FORM/WHERE`: FORM is how the question writes the date (iso 2025-06-24, slashes 2025/06/24, long
24 June 2025, us "June 24th, 2025", dmy 24/06/2025, weekday "Tuesday, June 24", relative
"yesterday" / "last Tuesday" with as_of, month "in March 2025" where one such event that month
exists) and WHERE where the note states its date: `body` (in its text) or `meta_only` (only its
frontmatter, title or file name).

The vault is ingested with pipeline.ingest (what `exo ingest VAULT --workspace personal` runs) into a scratch database
migrated from zero, every chunk embedded by MiniLM (the worker's embed queue), and the questions
run through exocortex.eval.shadow (packet at --budget, vector and BM25 top --k). Printed: the
documents whose written_at is their day, the overall table, the table by kind, and, for each
packet miss, why (the source's rank in exo.search's 25 with the same arguments: not retrieved,
retrieved but not cited, cited with an excerpt that lacks the answer) and whether the question's
date was read as a date. --keep DIR writes the vault, questions.jsonl and notes.json there.

    .venv/bin/python -m bench.diary_year [--days 365] [--questions 120] [--seed 29] [--k 5]
        [--budget 4000] [--json OUT] [--keep DIR] [--show N] [--setting KEY=JSON ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import psycopg
from rich import box
from rich.console import Console
from rich.table import Table

from bench.scratch import add_setting_option, apply_settings, ingest_vault, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval import shadow
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from tests.support import plpy
from tests.support.models import free_ports

#: What a packet says when nothing answers (plpy/search.py).
NOTHING_ANSWERS = plpy.load("search").NOTHING_ANSWERS

MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
FORMS = ("iso", "slashes", "long", "us", "dmy", "weekday")
"""How a dated question writes its day; relative and month questions come on top."""
ALL_FORMS = (*FORMS, "relative", "month")
WHERES = ("body", "meta_only")
KINDS = ("exercise", "meal", "work", "reading", "appointment", "travel", "purchase")
OWNER = "Robin Ashdown"

# -- word pools (invented names and titles; nothing here names a day or a month) -------------

FIRST = (
    "Nadia", "Tomasz", "Priya", "Owen", "Grace", "Idris", "Hannah", "Felix", "Amara", "Callum",
    "Rosa", "Bilal", "Esther", "Marcus", "Yuki", "Declan", "Leah", "Santiago", "Freya", "Kwame",
    "Imogen", "Rafael", "Zara", "Niall", "Elif", "Jonah", "Saoirse", "Anton", "Mei", "Gideon",
    "Talia", "Ruben", "Isla", "Hamza", "Clara", "Oskar", "Bea", "Emeka", "Lotte", "Vikram",
)  # fmt: skip
LAST = (
    "Okafor", "Lindqvist", "Hargreaves", "Menon", "Castellano", "Whitlock", "Brennan", "Achebe",
    "Sorensen", "Pemberton", "Nakamura", "Delacroix", "Fairweather", "Kowalczyk", "Ibarra",
    "Thistlewood", "Mbeki", "Vasquez", "Holloway", "Rasmussen", "Quartey", "Ellingham", "Duarte",
    "Strand", "Oyelaran", "Bellweather", "Kirkby", "Moreau", "Sandoval", "Abernathy", "Yilmaz",
    "Crowther", "Farouk", "Lindgren", "Petrakis", "Ashworth", "Novak", "Galloway", "Haddad",
    "Winterbourne", "Okonjo", "Marchetti", "Rowntree", "Szabo", "Kilbride", "Fontaine", "Ruiz",
    "Templeton", "Adeyemi", "Haverford",
)  # fmt: skip
FRIENDS = ("Maya", "Jon", "Sol", "Kit", "Ines", "Dom")
"""Recurring friends, first names only: filler meals that many days share."""
DURATIONS = (
    "40 minutes", "an hour", "1h15", "half an hour", "25 minutes", "55 min", "an hour and a half",
    "1h40", "ninety minutes", "45 minutes", "20 min", "two hours",
)  # fmt: skip
ROUTES = (
    "along the canal", "around Hollins Park", "up to the reservoir", "on the river path",
    "through Fenwick Woods", "around the old racecourse", "out past the allotments", "along the seafront",
)  # fmt: skip
POOLS = ("Millbrook pool", "the lido", "Castle Road pool", "the leisure centre")
VILLAGES = (
    "Ashby Green",
    "Little Hatton",
    "Coldwell",
    "Stonebridge",
    "Marsham",
    "Upper Tew",
    "Kelby",
    "Wrenfold",
)
YOGA_STYLES = ("vinyasa", "yin", "hatha", "ashtanga", "restorative", "power")
TEACHERS = ("Lena", "Tomas", "Noor", "Kofi", "Mira", "Dev", "Ana", "Joss", "Ravi", "Elsa")
WALLS = ("the Foundry", "Boulder Barn", "the Depot", "Rockhaus")
HILLS = (
    "Ravens Crag", "Pike Hill", "Blackmoor Edge", "Cold Fell", "Hartop", "Beacon Knoll", "Gallows Hill",
    "Saddle Tor", "Whinny Brow", "Curlew Rigg", "High Stile", "Nab End",
)  # fmt: skip
PLACES = (
    "the Blue Door", "Cafe Verde", "the Lantern", "Pho Saigon", "the Green Man", "Rosa's", "Mill Street Deli",
    "the Anchor", "Bombay Palace", "Bistro Margot", "the Olive Tree", "Sakura", "the Fig and Fennel",
    "the noodle bar on Cross Street",
)  # fmt: skip
CHATS = (
    "we talked about the allotment", "lots of catching up", "we planned the summer trip",
    "we argued about films", "mostly about work", "we laughed a lot", "good to catch up",
)  # fmt: skip
TOPICS = (
    "supplier onboarding", "quarterly budget", "warehouse routing", "customer survey", "pricing model",
    "hiring plan", "data retention", "mobile checkout", "office move", "incident review", "training schedule",
    "grant application", "press release", "security audit", "partner contract", "invoice backlog",
    "analytics dashboard", "returns process", "recruitment brochure", "fleet maintenance",
)  # fmt: skip
ARTEFACTS = ("report", "slides", "checklist", "proposal", "spreadsheet", "draft", "timeline", "memo")
COLLEAGUES = ("Harriet", "Sunil", "Bram", "Odette", "Femi", "Greta")
BOOK_ADJ = (
    "Salt", "Quiet", "Paper", "Amber", "Hollow", "Silver", "Last", "Glass", "Northern", "Crooked",
    "Drowned", "Burning", "Borrowed", "Sleeping",
)  # fmt: skip
BOOK_NOUN = (
    "Orchard", "Harbour", "Cartographer", "Lighthouse", "Archive", "Garden", "Kingdom", "Daughter",
    "Hours", "River", "Atlas", "Bell", "Engine", "Fox", "Mirror", "Orphan",
)  # fmt: skip
VERDICTS = ("loved it", "a bit slow at the end", "not sure what I think", "five stars", "glad it's done")
ROLES = ("dentist", "doctor", "physio", "optician")
ISSUES = {
    "dentist": ("molar", "gums", "cracked filling"),
    "doctor": ("cough", "blood test results", "back", "rash"),
    "physio": ("shoulder", "knee", "ankle", "lower back"),
    "optician": ("eyes", "glasses prescription", "contact lenses"),
}
OUTCOMES = (
    "nothing to worry about",
    "come back in six weeks",
    "a prescription to collect",
    "all fine",
    "another visit needed",
)
TIMES = ("9:15", "10:30", "14:00", "8:45", "16:20", "11:50", "13:10", "15:40")
CITIES = (
    "Leeds", "Glasgow", "Bristol", "Norwich", "Cardiff", "Edinburgh", "Manchester", "Liverpool", "Sheffield",
    "Nottingham", "Brighton", "Oxford", "Cambridge", "Exeter", "Durham", "Lincoln", "Inverness", "Aberdeen",
    "Dundee", "Plymouth", "Lisbon", "Porto", "Ghent", "Bruges", "Lyon", "Bordeaux", "Seville", "Valencia",
    "Bologna", "Turin", "Krakow", "Prague", "Vienna", "Munich", "Hamburg", "Copenhagen", "Stockholm", "Oslo",
    "Dublin", "Galway", "Rotterdam", "Antwerp", "Zurich", "Salzburg", "Ljubljana",
)  # fmt: skip
REASONS = (
    "a client meeting", "a friend's wedding", "a conference", "a museum visit", "a job interview",
    "a family lunch", "a concert", "a football match",
)  # fmt: skip
ITEM_ADJ = (
    "green", "second-hand", "blue", "red", "grey", "yellow", "black", "white", "orange", "vintage",
    "small", "large", "cheap", "folding",
)  # fmt: skip
ITEMS = (
    "raincoat", "bread knife", "bike lock", "desk lamp", "teapot", "rucksack", "frying pan", "scarf",
    "plant pot", "umbrella", "notebook", "chopping board", "watering can", "head torch", "picture frame",
    "laundry basket", "wall clock", "doormat",
)  # fmt: skip
FILLERS = (
    "Quiet evening at home.", "Rain most of the day.", "Slept badly, tired all day.", "Called Mum in the evening.",
    "Watered the plants and did the laundry.", "Early night.", "Cooked a big pot of soup.",
    "Watched a film, fell asleep halfway.", "Tidied the flat.", "Long bath and bed.", "Felt a bit low today.",
    "Good day overall.", "Too much coffee.", "The neighbours had a party again.",
    "The boiler made that noise again, must ring someone about it.", "Spent too long on my phone before bed.",
    "Made a list of things to sort out this week and did none of them.", "Lovely light in the evening.",
    "Fixed the wobbly shelf in the hall at last.", "Bins out, recycling sorted.",
    "Head full of work stuff, hard to switch off.", "Baked bread, the crust came out too dark.",
    "Walked home the long way to clear my head.", "Texted Dad about the weekend plans.",
)  # fmt: skip
ROUTINE = (
    "Usual run, 5 km around Hollins Park.", "Swam the usual 30 lengths at Millbrook pool.",
    "Yoga at home for half an hour.", "Walked to work and back.",
)  # fmt: skip
"""Exercise sentences that many days share word for word."""
ROUTINE_TRUTH = (
    {"activity": "running", "km": 5.0, "place": "around Hollins Park"},
    {"activity": "swimming", "place": "Millbrook pool"},
    {"activity": "yoga", "minutes": 30},
    {"activity": "walking"},
)
"""What each ROUTINE sentence tells, as Event fields."""
WORK_FILLER = ("Inbox and meetings all day.", "Long stand-up, then emails.", "Quiet day at work.")


# -- the diary ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One thing a day's note tells, as its sentence, and the detail a question about it expects;
    then what it tells as a timeline row (the truth bench/diary_counts scores against)."""

    kind: str
    text: str
    answer: str = ""
    role: str = ""
    """A meal's name (lunch ...) or an appointment's role (dentist ...)."""
    activity: str = ""
    """Normalised: running ... hiking, walking, breakfast/lunch/dinner/coffee, dentist/doctor/
    physio/optician, travel, reading, purchase, work."""
    minutes: int | None = None
    """The duration the sentence gives (DURATIONS read by minutes_of), None where it gives none."""
    km: float | None = None
    amount: float | None = None
    currency: str = ""
    place: str = ""
    """A route, pool, village, wall, hill, restaurant or city, as written."""
    people: tuple[str, ...] = ()
    """The names the sentence gives."""
    shape: int = 0
    """The index of the sentence shape among its activity's (within ROUTINE when routine)."""
    routine: bool = False


@dataclass
class Note:
    day: date
    path: str
    text: str
    date_in: tuple[str, ...]
    """Where the note states its day: frontmatter, title, path, body."""
    frontmatter: bool
    events: list[Event] = field(default_factory=list)

    @property
    def where(self) -> str:
        return "body" if "body" in self.date_in else "meta_only"

    def to_json(self) -> dict:
        return {
            "day": self.day.isoformat(),
            "path": self.path,
            "date_in": list(self.date_in),
            "where": self.where,
            "frontmatter": self.frontmatter,
        }


@dataclass(frozen=True)
class DiaryQuestion:
    question: str
    expect: str
    source: str
    kind: str
    as_of: date | None = None

    def to_json(self) -> dict:
        data = {
            "question": self.question,
            "expect": [self.expect],
            "sources": [self.source],
            "kind": self.kind,
        }
        if self.as_of:
            data["as_of"] = self.as_of.isoformat()
        return data


@dataclass
class Diary:
    notes: list[Note]
    questions: list[DiaryQuestion]
    shortfall: list[str] = field(default_factory=list)
    """Question cells that found fewer candidates than asked for."""
    unanswerable: list[str] = field(default_factory=list)
    """Questions about what the diary never tells (an activity, a person or a thing it never
    names, a day before it begins): the packet should say that nothing answers."""


# What the diary never tells: (the words that must occur in no note, the questions), in several
# shapes, with and without a day, so that "nothing answers" is not read off one phrasing.
NEVER_TOLD = [
    ("skydiv", ("When did I go skydiving?", "Who jumped with me when I went skydiving?")),
    ("piano", ("How much did my piano lessons cost?", "Who is my piano teacher?")),
    ("karaoke", ("Which song did I sing at karaoke?", "Who came to karaoke night with me?")),
    ("pottery", ("What did I make in my pottery class?", "When is my pottery class?")),
    ("surf", ("Where did I go surfing?", "What board did I rent for surfing?")),
    ("horse", ("What is the name of the horse I ride?", "How often do I go horse riding?")),
    ("chess", ("Did I win the chess tournament?", "Who beat me at chess?")),
    ("opera", ("Which opera did I see?", "What did I wear to the opera?")),
    ("vet", ("What did the vet say about my cat?", "How much was the vet bill?")),
    ("wedding", ("Whose wedding did I go to?", "What gift did I bring to the wedding?")),
    ("tax return", ("When did I file my tax return?", "How much tax did I get back?")),
    ("guitar", ("What guitar did I buy?", "Which chords did I learn on the guitar?")),
]


def never_told(notes: list[Note], rng: random.Random) -> list[str]:
    """The NEVER_TOLD questions whose words no note holds, a third of them asked of a day in the
    year before the diary begins (no note that day either)."""
    folded = [fold(n.text) for n in notes]
    first = min(n.day for n in notes)
    asked = []
    for word, shapes in NEVER_TOLD:
        if any(word in t for t in folded):
            continue
        for text in shapes:
            if rng.random() < 1 / 3:
                day = first - timedelta(days=rng.randint(30, 330))
                text = text.rstrip("?") + f" on {day.day} {day:%B %Y}?"
            asked.append(text)
    return asked


def fold(text: str) -> str:
    """As shadow.holds compares: case-insensitive and blind to runs of white space."""
    return " ".join(text.split()).casefold()


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def month_name(d: date) -> str:
    return MONTH_NAMES[d.month - 1]


def weekday(d: date) -> str:
    return WEEKDAYS[d.weekday()]


def question_date(d: date, form: str, rng: random.Random) -> str:
    """The day as a question writes it in `form` (one of FORMS)."""
    if form == "iso":
        return d.isoformat()
    if form == "slashes":
        return f"{d:%Y/%m/%d}"
    if form == "long":
        return f"{d.day} {month_name(d)} {d.year}"
    if form == "us":
        return rng.choice(
            [f"{month_name(d)} {ordinal(d.day)}, {d.year}", f"{month_name(d)} {d.day}, {d.year}"]
        )
    if form == "dmy":
        return f"{d:%d/%m/%Y}"
    if form == "weekday":
        return rng.choice([f"{weekday(d)}, {month_name(d)} {d.day}", f"{weekday(d)} {d.day} {month_name(d)}"])
    raise ValueError(form)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _km(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randint(low * 10, high * 10) / 10:.1f}"


def _pick(rng: random.Random, shapes: tuple[str, ...]) -> tuple[int, str]:
    """A shape and its index, drawn exactly as rng.choice(shapes) draws."""
    i = rng.randrange(len(shapes))
    return i, shapes[i]


NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "ninety": 90}


def minutes_of(duration: str) -> int:
    """A DURATIONS string in minutes ("1h15" 75, "an hour and a half" 90, "55 min" 55)."""
    text = duration.strip().lower()
    if m := re.fullmatch(r"(\d+)h(\d+)", text):
        return int(m[1]) * 60 + int(m[2])
    if text == "half an hour":
        return 30
    m = re.fullmatch(r"(\w+) (minutes|min|hours?)( and a half)?", text)
    count = m and (int(m[1]) if m[1].isdigit() else NUMBER_WORDS.get(m[1]))
    if not count:
        raise ValueError(f"minutes_of: cannot read the duration {duration!r}")
    return count * (1 if m[2].startswith("min") else 60) + (30 if m[3] else 0)


class Writer:
    """The year's events, seeded: pools drawn without repeats where a detail should stay rare."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.cities = rng.sample(CITIES, len(CITIES))
        self.books = rng.sample(
            [f"The {a} {n}" for a in BOOK_ADJ for n in BOOK_NOUN], len(BOOK_ADJ) * len(BOOK_NOUN)
        )
        self.book: str | None = None
        self.people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], len(FIRST) * len(LAST))
        self.surnames = rng.sample(LAST, len(LAST))

    def person(self) -> str:
        return self.people.pop() if self.people else self.rng.choice(FRIENDS)

    def exercise(self) -> Event:
        rng = self.rng
        if rng.random() < 0.4:
            i, text = _pick(rng, ROUTINE)
            return Event("exercise", text, shape=i, routine=True, **ROUTINE_TRUTH[i])
        dur = rng.choice(DURATIONS)
        sport = rng.choice(
            ("running", "running", "swimming", "cycling", "yoga", "climbing", "tennis", "hiking")
        )
        km, people = None, ()
        if sport == "running":
            km, place = _km(rng, 3, 16), rng.choice(ROUTES)
            det = f"{km} km {place}"
            shapes = (
                f"Ran {det} in {dur}.",
                f"Went for a run, {det}, {dur}.",
                f"Morning run: {det}, about {dur}.",
                f"Got out for a run before work: {det} in {dur}.",
                f"Easy run of {det}, {dur} or so.",
            )
        elif sport == "swimming":
            lengths, place = rng.randint(16, 80), rng.choice(POOLS)
            det = f"{lengths} lengths at {place}"
            shapes = (
                f"Swam {det}, {dur}.",
                f"Went swimming: {det} in {dur}.",
                f"Pool before work, {det}, took {dur}.",
                f"Did {det} ({dur}).",
            )
        elif sport == "cycling":
            km, place = _km(rng, 15, 80), rng.choice(VILLAGES)
            det = f"{km} km out to {place}"
            shapes = (
                f"Cycled {det} and back, {dur}.",
                f"Long ride, {det}, {dur} in the saddle.",
                f"Bike ride: {det} in {dur}.",
                f"Took the bike {det}, {dur}.",
            )
        elif sport == "yoga":
            style, teacher = rng.choice(YOGA_STYLES), rng.choice(TEACHERS)
            det, place, people = f"{style} yoga with {teacher}", "", (teacher,)
            shapes = (
                f"Did {det} for {dur}.",
                f"{_cap(det)} at the studio, {dur}.",
                f"Went to {det}, {dur}.",
                f"Stretched through {det} for {dur}.",
            )
        elif sport == "climbing":
            routes, place = rng.randint(4, 18), rng.choice(WALLS)
            det = f"{routes} routes at {place}"
            shapes = (
                f"Climbed {det}, {dur}.",
                f"Bouldering session: {det} in {dur}.",
                f"Went climbing and did {det} ({dur}).",
                f"Sore fingers after {det}, {dur}.",
            )
        elif sport == "tennis":
            who = self.person()
            det, place, people = f"tennis with {who}", "", (who,)
            shapes = (
                f"Played {det} for {dur}.",
                f"{_cap(det)}, {dur}, lost in straight sets.",
                f"Booked a court: {det}, {dur}.",
                f"Hit some balls, {det}, {dur}.",
            )
        else:
            det = place = rng.choice(HILLS)
            shapes = (
                f"Walked up {det} and back, {dur}.",
                f"Hiked to the top of {det} in {dur}.",
                f"Long walk over {det}, {dur}.",
                f"Went up {det} on foot, {dur} all in.",
            )
        i, text = _pick(rng, shapes)
        return Event(
            "exercise",
            text,
            det,
            activity=sport,
            minutes=minutes_of(dur),
            km=float(km) if km else None,
            place=place,
            people=people,
            shape=i,
        )

    def meal(self, day: date) -> Event:
        rng = self.rng
        meal = rng.choice(("breakfast", "lunch", "lunch", "dinner", "dinner", "coffee"))
        place = rng.choice(PLACES)
        chat = rng.choice(CHATS)
        if rng.random() < 0.4:
            who, answer = rng.choice(FRIENDS), ""
        else:
            who = answer = self.person()
        shapes = (
            f"Had {meal} with {who} at {place}.",
            f"{_cap(meal)} at {place} with {who}; {chat}.",
            f"Met {who} for {meal} at {place}, {chat}.",
            f"{who} and I had {meal} at {place}.",
            f"{_cap(meal)} with {who} ({place}), {chat}.",
        )
        i, text = _pick(rng, shapes)
        return Event("meal", text, answer, meal, activity=meal, place=place, people=(who,), shape=i)

    def work(self) -> Event:
        rng = self.rng
        if rng.random() < 0.35:
            i, text = _pick(rng, WORK_FILLER)
            return Event("work", text, activity="work", shape=i, routine=True)
        det = f"{rng.choice(TOPICS)} {rng.choice(ARTEFACTS)}"
        colleague = rng.choice(COLLEAGUES)
        shapes = (
            f"Finished the {det} at work.",
            f"Spent most of the day on the {det}.",
            f"Sent the {det} to {colleague} for review.",
            f"Work: reviewed the {det} with {colleague}.",
            f"Got the {det} over the line.",
        )
        i, text = _pick(rng, shapes)
        named = (colleague,) if colleague in text else ()
        return Event("work", text, det, activity="work", people=named, shape=i)

    def reading(self) -> Event | None:
        rng = self.rng
        fresh = self.book is None or rng.random() < 0.5
        if fresh:
            if not self.books:
                return None
            self.book = self.books.pop()
        book = self.book
        assert book is not None
        shapes = (
            f"Read {rng.randint(12, 90)} pages of {book}.",
            f"Kept going with {book} on the bus.",
            f"Got to chapter {rng.randint(2, 30)} of {book} before bed.",
            f"Finished {book}; {rng.choice(VERDICTS)}.",
            f"Started {book} tonight.",
        )
        if fresh and rng.random() < 0.3:
            i, text = len(shapes) - 1, shapes[-1]
        else:
            i, text = _pick(rng, shapes[:-1])
        return Event("reading", text, book, activity="reading", shape=i)

    def appointment(self) -> Event:
        rng = self.rng
        role = rng.choice(ROLES)
        if role == "doctor" and rng.random() < 0.3:
            who = "Dr Hale"  # the family doctor, seen again and again
        elif role in ("dentist", "doctor"):
            who = f"Dr {self.surnames.pop()}" if self.surnames else "Dr Hale"
        else:
            who = self.person()
        at, issue, outcome = rng.choice(TIMES), rng.choice(ISSUES[role]), rng.choice(OUTCOMES)
        shapes = (
            f"{_cap(role)} appointment at {at} with {who}: {outcome}.",
            f"Saw {who} about my {issue}; {outcome}.",
            f"Appointment with {who} ({role}) at {at}, {outcome}.",
            f"{who} had a look at my {issue} at {at}, {outcome}.",
        )
        i, text = _pick(rng, shapes)
        answer = who if who != "Dr Hale" else ""
        return Event("appointment", text, answer, role, activity=role, people=(who,), shape=i)

    def travel(self) -> Event | None:
        rng = self.rng
        if not self.cities:
            return None
        city = self.cities.pop()
        reason = rng.choice(REASONS)
        shapes = (
            f"Took the train to {city} for {reason}.",
            f"Flew to {city} for {reason}.",
            f"Drove to {city} and back, {reason}.",
            f"Day trip to {city}: {reason}.",
            f"Caught the early coach to {city} for {reason}.",
        )
        i, text = _pick(rng, shapes)
        return Event("travel", text, city, activity="travel", place=city, shape=i)

    def purchase(self) -> Event:
        rng = self.rng
        det = f"{rng.choice(ITEM_ADJ)} {rng.choice(ITEMS)}"
        amount = f"{rng.randint(3, 140)}.{rng.choice(('00', '50', '99', '49', '25'))}"
        shapes = (
            f"Bought a {det} for £{amount}.",
            f"Picked up a {det} at the market, £{amount}.",
            f"Ordered a {det} online ({amount} pounds).",
            f"Spent £{amount} on a {det}.",
            f"Treated myself to a {det}: £{amount}.",
        )
        i, text = _pick(rng, shapes)
        return Event(
            "purchase", text, det, activity="purchase", amount=float(amount), currency="GBP", shape=i
        )

    def day_events(self, day: date) -> list[Event]:
        rng = self.rng
        events: list[Event | None] = []
        if rng.random() < 0.8:
            events.append(self.exercise())
        if (day.weekday() < 5 and rng.random() < 0.8) or rng.random() < 0.1:
            events.append(self.work())
        if rng.random() < 0.55:
            events.append(self.meal(day))
        if rng.random() < 0.55:
            events.append(self.reading())
        if rng.random() < 0.12:
            events.append(self.appointment())
        if rng.random() < 0.08:
            events.append(self.travel())
        if rng.random() < 0.25:
            events.append(self.purchase())
        return [e for e in events if e is not None]


def body_date(d: date, rng: random.Random) -> str:
    """The body's first line stating the day, in one of the forms diarists use."""
    line = rng.choice(
        (
            f"{weekday(d)} {d.day} {month_name(d)} {d.year}",
            f"{d:%d/%m/%Y}",
            f"{month_name(d)} {ordinal(d.day)}",
            d.isoformat(),
            f"{weekday(d)}, {month_name(d)} {ordinal(d.day)}, {d.year}",
        )
    )
    return ("# " + line) if rng.random() < 0.3 else line


def frontmatter_date(d: date, rng: random.Random) -> str:
    return rng.choices(
        (
            d.isoformat(),
            f"{d.day} {month_name(d)} {d.year}",
            f"{month_name(d)} {d.day}, {d.year}",
            f"{d:%Y/%m/%d}",
            f"{d:%d/%m/%Y}",
        ),
        weights=(6, 1.5, 1, 1, 0.5),
    )[0]


def paragraphs(sentences: list[str], rng: random.Random) -> list[str]:
    """2 to 5 paragraphs of the sentences, in order."""
    count = rng.randint(2, min(5, len(sentences)))
    cuts = sorted(rng.sample(range(1, len(sentences)), count - 1))
    bounds = [0, *cuts, len(sentences)]
    return [" ".join(sentences[a:b]) for a, b in itertools.pairwise(bounds)]


def make_note(day: date, events: list[Event], rng: random.Random, taken: set[str]) -> Note:
    """One day's note: its path, frontmatter and body (see the module's docstring)."""
    style = rng.choices(("iso", "folders", "dmy", "weekday"), weights=(55, 15, 15, 15))[0]
    path = {
        "iso": f"{day.isoformat()}.md",
        "folders": f"{day:%Y/%m/%d}.md",
        "dmy": f"{day:%d-%m-%Y} journal.md",
        "weekday": f"{day:%Y-%m}/{weekday(day)}.md",
    }[style]
    if path in taken:  # a weekday already named in that month's folder
        style, path = "iso", f"{day.isoformat()}.md"
    taken.add(path)
    date_in: list[str] = [] if style == "weekday" else ["path"]
    has_fm = rng.random() < 2 / 3
    in_body = rng.random() < 0.45
    fm_date = has_fm and rng.random() < 0.85
    if style == "weekday" and not (fm_date or in_body):  # a weekday alone does not say which one
        has_fm = fm_date = True
    head: list[str] = []
    if has_fm:
        lines = []
        if fm_date:
            lines.append(f"date: {frontmatter_date(day, rng)}")
            date_in.append("frontmatter")
        if rng.random() < 0.35:
            title = rng.choice(
                (
                    f"{weekday(day)} {day.day} {month_name(day)}",
                    f"Journal - {day.day} {month_name(day)} {day.year}",
                    f"Diary {day.isoformat()}",
                    "A quiet day",
                    "Notes",
                    "Busy one",
                )
            )
            lines.append(f"title: {title}")
            if any(ch.isdigit() for ch in title):
                date_in.append("title")
        if rng.random() < 0.5:
            lines.append("tags: [diary]")
        if rng.random() < 0.25:
            lines.append(f"mood: {rng.choice(('good', 'tired', 'ok', 'great'))}")
        if not lines:
            lines.append("tags: [diary]")
        head = ["---", *lines, "---", ""]
    sentences = [e.text for e in events]
    fillers = rng.sample(FILLERS, rng.randint(2, 4) + (len(sentences) < 2))
    for filler in fillers:
        sentences.insert(rng.randint(0, len(sentences)), filler)
    body = paragraphs(sentences, rng)
    if in_body:
        body.insert(0, body_date(day, rng))
        date_in.append("body")
    text = "\n".join(head) + "\n\n".join(body) + "\n"
    return Note(day, path, text, tuple(date_in), has_fm, events)


# -- questions ------------------------------------------------------------------------------

QUESTION_SHAPES = {
    "exercise": (
        "What exercise did I do {when}?",
        "{When}, what did I do for exercise?",
        "How did I exercise {when}?",
        "What workout did I get {when}?",
    ),
    "meal": (
        "Who did I have {role} with {when}?",
        "{When}, who did I meet for {role}?",
        "Who joined me for {role} {when}?",
        "Which friend did I have {role} with {when}?",
    ),
    "work": (
        "What did I get done at work {when}?",
        "{When}, what was I working on?",
        "What work task did I deal with {when}?",
        "What was my main job at work {when}?",
    ),
    "reading": (
        "{When}, what book was I reading?",
        "What was I reading {when}?",
        "Which book did I read {when}?",
        "What book did I have on the go {when}?",
    ),
    "appointment": (
        "Which {role} did I see {when}?",
        "Who was my {role} appointment with {when}?",
        "{When}, which {role} did I have an appointment with?",
        "What was the name of the {role} I saw {when}?",
    ),
    "travel": (
        "Where did I go {when}?",
        "Which city did I travel to {when}?",
        "{When}, where did I travel?",
        "What city did I visit {when}?",
    ),
    "purchase": (
        "What did I buy {when}?",
        "{When}, what did I spend money on?",
        "What purchase did I make {when}?",
        "What did I pay for {when}?",
    ),
}
MONTH_SHAPES = {
    "travel": (
        "Which city did I travel to {when}?",
        "{When}, which city did I visit?",
        "Where did I go on a trip {when}?",
        "What city did I take a trip to {when}?",
    ),
    "appointment": (
        "Which {role} did I see {when}?",
        "{When}, who was my {role} appointment with?",
        "Who did I see for my {role} appointment {when}?",
        "What was the name of the {role} I saw {when}?",
    ),
}
NUMBERS = {3: "three", 4: "four", 5: "five"}


def relative(day: date, rng: random.Random) -> tuple[str, date]:
    """A relative phrase for `day` and the day it is said on (as_of)."""
    pick = rng.randrange(4)
    if pick == 0:
        return "yesterday", day + timedelta(days=1)
    if pick == 1:
        return "the day before yesterday", day + timedelta(days=2)
    if pick == 2:
        n = rng.randint(3, 5)
        return f"{NUMBERS[n]} days ago", day + timedelta(days=n)
    return f"last {weekday(day)}", day + timedelta(days=rng.randint(3, 6))


def ask(event: Event, shapes: dict[str, tuple[str, ...]], when: str, rng: random.Random) -> str:
    shape = rng.choice(shapes[event.kind])
    text = shape.format(when=when, When=_cap(when), role=event.role)
    return text


def split_counts(total: int, cells: int) -> list[int]:
    return [total // cells + (1 if i < total % cells else 0) for i in range(cells)]


def make_questions(
    notes: list[Note], count: int, rng: random.Random
) -> tuple[list[DiaryQuestion], list[str]]:
    """`count` questions: a tenth each relative and month, the rest split over FORMS x WHERES
    (what a form's body cell cannot find, its meta_only cell asks); each expects a detail that
    exactly one note holds (that note is its source), one question a day at most, the event
    kinds taken in turn."""
    folded = [fold(n.text) for n in notes]

    def unique(answer: str) -> bool:
        needle = fold(answer)
        return sum(needle in t for t in folded) == 1

    candidates = [(n, e) for n in notes for e in n.events if e.answer and unique(e.answer)]
    rng.shuffle(candidates)
    used: set[date] = set()
    questions: list[DiaryQuestion] = []
    shortfall: list[str] = []

    n_month = n_relative = max(1, round(count * 0.1)) if count >= 20 else 0
    cells = [(f, w) for f in FORMS for w in WHERES]
    per_cell = split_counts(count - n_month - n_relative, len(cells))
    # Month questions first: few months hold a single trip or a single visit to one role.
    plan = [("month", w, c) for w, c in zip(WHERES, split_counts(n_month, 2), strict=True)]
    plan += [("relative", w, c) for w, c in zip(WHERES, split_counts(n_relative, 2), strict=True)]
    plan += [(f, w, c) for (f, w), c in zip(cells, per_cell, strict=True)]

    # Months in which a trip, or an appointment of a role, happens once.
    month_events: Counter[tuple[int, int, str]] = Counter()
    for n in notes:
        for e in n.events:
            if e.kind in MONTH_SHAPES:
                month_events[(n.day.year, n.day.month, e.role or e.kind)] += 1

    carry = 0
    for turn, (form, where, planned) in enumerate(plan):
        wanted, carry = planned + carry, 0
        kinds = list(MONTH_SHAPES if form == "month" else KINDS)
        kinds = kinds[turn % len(kinds) :] + kinds[: turn % len(kinds)]
        made = 0
        while made < wanted:
            progress = False
            for kind in kinds:
                if made >= wanted:
                    break
                pick = next(
                    (
                        (n, e)
                        for n, e in candidates
                        if e.kind == kind
                        and n.where == where
                        and n.day not in used
                        and (
                            form != "month" or month_events[(n.day.year, n.day.month, e.role or e.kind)] == 1
                        )
                    ),
                    None,
                )
                if pick is None:
                    continue
                note, event = pick
                as_of = None
                if form == "month":
                    when = rng.choice(
                        (
                            f"in {month_name(note.day)} {note.day.year}",
                            f"in {month_name(note.day)}",
                            f"during {month_name(note.day)} {note.day.year}",
                        )
                    )
                    text = ask(event, MONTH_SHAPES, when, rng)
                elif form == "relative":
                    when, as_of = relative(note.day, rng)
                    text = ask(event, QUESTION_SHAPES, when, rng)
                else:
                    text = ask(event, QUESTION_SHAPES, "on " + question_date(note.day, form, rng), rng)
                questions.append(DiaryQuestion(text, event.answer, note.path, f"{form}/{where}", as_of))
                used.add(note.day)
                made += 1
                progress = True
            if not progress:
                if where == WHERES[0]:  # the other half of the form makes up for it
                    carry = wanted - made
                else:
                    shortfall.append(f"{form}/{where}: {made} of {wanted}")
                break
    return questions, shortfall


def generate(seed: int = 29, days: int = 365, questions: int = 120, year: int = 2025) -> Diary:
    """The diary (notes from 1 January of `year`, one a day) and its questions; the same for a seed."""
    rng = random.Random(seed)
    writer = Writer(rng)
    taken: set[str] = set()
    notes = []
    for i in range(days):
        day = date(year, 1, 1) + timedelta(days=i)
        notes.append(make_note(day, writer.day_events(day), rng, taken))
    asked, shortfall = make_questions(notes, questions, rng)
    return Diary(notes, asked, shortfall, never_told(notes, rng))


def write(diary: Diary, root: Path) -> Path:
    """The vault under root/vault, root/questions.jsonl and root/notes.json; returns the vault."""
    vault = root / "vault"
    for note in diary.notes:
        path = vault / note.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note.text, encoding="utf-8")
    (root / "questions.jsonl").write_text(
        "".join(json.dumps(q.to_json()) + "\n" for q in diary.questions), encoding="utf-8"
    )
    (root / "unanswerable.jsonl").write_text(
        "".join(
            json.dumps({"question": q, "expect": [NOTHING_ANSWERS], "kind": "unanswerable"}) + "\n"
            for q in diary.unanswerable
        ),
        encoding="utf-8",
    )
    (root / "notes.json").write_text(json.dumps([n.to_json() for n in diary.notes], indent=1) + "\n")
    return vault


# -- the run --------------------------------------------------------------------------------


def dating(admin: psycopg.Connection, notes: list[Note]) -> dict:
    """Per note: the written_at and band_reason the ingest gave it."""
    rows = admin.execute(
        "select path, written_at, band_reason, band::text from exo_private.documents"
    ).fetchall()
    by_path = {p: (w, r, b) for p, w, r, b in rows}
    out = {}
    for n in notes:
        written, reason, band = next(
            (v for p, v in by_path.items() if p == n.path or p.endswith("/" + n.path)), (None, None, None)
        )
        out[n.path] = {"written_at": written, "reason": reason or "", "band": band, "right": written == n.day}
    return out


def source_of(band_reason: str) -> str:
    """The evidence a band_reason names ("written 2025-01-05 (date in path '2025-01-05'), 699 days
    ago" -> "date in path")."""
    inside = band_reason.partition("(")[2]
    return inside.split(" '")[0].split(")")[0] or band_reason


def explain(reader: psycopg.Connection, q: shadow.Question, vector: list[float] | None) -> dict:
    """Where search put a question's note: its rank among exo.search's 25 with the packet's
    arguments (None: not among them) and the stage that found it, the top five, the temporal
    signals and whether the date was read as a date."""
    (found,) = reader.execute(
        "select exo.search_json(%s, k => 25, per_workspace => 30, "
        "as_of => coalesce(%s::timestamptz, now()), query_embedding => %s::float8[])",
        (q.question, q.as_of, vector),
    ).fetchone()
    results = found.get("results") or []
    rank = next(
        (r["rank"] for r in results if any(shadow.source_cited(r["path"], s) for s in q.sources)), None
    )
    stage = next((r["stage"] for r in results if r["rank"] == rank), None)
    temporal = (found.get("report") or {}).get("temporal") or {}
    signals = [f"{s.get('kind')}:{s.get('text')}" for s in temporal.get("signals") or []]
    return {
        "source_rank": rank,
        "source_stage": stage,
        "top": [f"{r['path']} ({r['written_at']}, {r['stage']})" for r in results[:5]],
        "signals": signals,
        "date_read": bool(temporal.get("span")),  # a day, a week, a month or more read
        "bands": (found.get("report") or {}).get("bands"),
        "answer": (found.get("report") or {}).get("answer") or {},
    }


def why_missed(info: dict, packet_cited: bool) -> str:
    """Why the packet lacks the answer: its excerpt of the cited note, or where search ranked it."""
    if packet_cited:
        return "cited, excerpt lacks the answer"
    if info["source_rank"] is None:
        return "not in search's 25"
    if info["source_rank"] <= 5:
        return "in search's top 5, not cited"
    return "search rank 6-25 (packet cites 5)"


def pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def summary_tables(report: shadow.ShadowReport, explained: dict[int, dict]) -> tuple[Table, Table]:
    """The overall table and the table by kind (form x where, then per form and per where)."""
    methods = ("packet", "vector", "bm25")
    results = report.results
    overall = Table(title="overall", box=box.MARKDOWN)
    for c in ("method", "answer in context", "source cited", "mean tokens", "ms p50"):
        overall.add_column(c, justify="left" if c == "method" else "right")
    for m in methods:
        outs = [r.outcomes[m] for r in results if not r.outcomes[m].unavailable]
        overall.add_row(
            m,
            pct(sum(o.every for o in outs), len(outs)),
            pct(sum(bool(o.sources) for o in outs), len(outs)),
            f"{statistics.mean(o.tokens for o in outs):.0f}" if outs else "-",
            f"{statistics.median(o.ms for o in outs):.0f}" if outs else "-",
        )

    def row_of(label: str, group: list):
        cells = [label, str(len(group))]
        for m in methods:
            cells.append(pct(sum(r.outcomes[m].every for r in group), len(group)))
        cells.append(pct(sum(bool(r.outcomes["packet"].sources) for r in group), len(group)))
        read = [explained[id(r)]["date_read"] for r in group if id(r) in explained]
        cells.append(pct(sum(read), len(read)) if read else "-")
        return cells

    by_kind = Table(
        title="by kind (answer in context; packet source cited; question's days read: report.temporal.span)",
        box=box.MARKDOWN,
    )
    for c in ("kind", "n", "packet", "vector", "bm25", "packet src", "date read"):
        by_kind.add_column(c, justify="left" if c == "kind" else "right")
    for form in ALL_FORMS:
        for where in WHERES:
            group = [r for r in results if r.question.kind == f"{form}/{where}"]
            if group:
                by_kind.add_row(*row_of(f"{form}/{where}", group))
    for form in ALL_FORMS:
        group = [r for r in results if r.question.kind.startswith(form + "/")]
        if group:
            by_kind.add_row(*row_of(f"{form}/*", group))
    for where in WHERES:
        group = [r for r in results if r.question.kind.endswith("/" + where)]
        by_kind.add_row(*row_of(f"*/{where}", group))
    return overall, by_kind


def quartiles(values: list[float]) -> str:
    """min / q1 / median / q3 / max of sorted values."""
    if not values:
        return "-"
    return " / ".join(f"{values[int(q * (len(values) - 1))]:.2f}" for q in (0, 0.25, 0.5, 0.75, 1))


def print_nothing_answers(
    answerable: shadow.ShadowReport, unanswerable: shadow.ShadowReport, explained: dict[int, dict]
) -> None:
    """Both directions of "nothing answers": said for the questions the diary never answers, and
    wrongly for those it does; the best similarity of each (report.answer)."""

    def checks(results):
        return [explained[id(r)]["answer"] for r in results if id(r) in explained]

    said = sum(r.outcomes["packet"].every for r in unanswerable.results)
    wrong = sum(a.get("found") is False for a in checks(answerable.results))
    print(
        f"\nnothing answers: said for {pct(said, len(unanswerable.results))} of the questions the diary "
        f"never answers; wrongly for {pct(wrong, len(answerable.results))} of those it answers"
    )
    for label, results in (("unanswerable", unanswerable.results), ("answerable", answerable.results)):
        sims = sorted(a["best_similarity"] for a in checks(results) if a.get("best_similarity") is not None)
        print(f"  {label:12s} best similarity min/q1/median/q3/max {quartiles(sims)}")
    for r in unanswerable.results:
        if not r.outcomes["packet"].every:
            a = explained[id(r)]["answer"]
            print(
                f"  not said: {r.question.question} ({a.get('why')}, similarity {a.get('best_similarity')})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="notes, one a day from 1 January")
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--year", type=int, default=2025)
    parser.add_argument("--k", type=int, default=5, help="chunks each baseline returns")
    parser.add_argument("--budget", type=int, default=4000, help="the packet's token budget (its default)")
    parser.add_argument("--json", type=Path, help="write the per-question results here")
    parser.add_argument("--keep", type=Path, help="write the vault, questions.jsonl and notes.json here")
    parser.add_argument(
        "--show", type=int, default=4, help="print the packets of up to N misses (one form after another)"
    )
    add_setting_option(parser)
    args = parser.parse_args()
    settings = trial_settings(parser, args)

    began_all = time.perf_counter()
    diary = generate(args.seed, args.days, args.questions, args.year)
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-diary-"))
    root = args.keep or run_dir
    root.mkdir(parents=True, exist_ok=True)
    vault = write(diary, root)
    notes = diary.notes
    where_count = Counter(n.where for n in notes)
    print(
        f"{datetime.now():%Y-%m-%d %H:%M}: {len(notes)} notes ({where_count['body']} date in body, "
        f"{where_count['meta_only']} only in frontmatter/title/file name; "
        f"{sum(n.frontmatter for n in notes)} with frontmatter), {len(diary.questions)} questions",
        flush=True,
    )
    for s in diary.shortfall:
        print(f"  fewer questions than planned: {s}")
    questions = shadow.load_questions(root / "questions.jsonl")
    (port,) = free_ports(1)
    console = Console(highlight=False, width=160)
    explained: dict[int, dict] = {}
    cfg = config.load()
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        with scratch_database(cfg, "bench_diary") as name:
            began = time.perf_counter()
            # `exo worker`: every queue, the timeline's events too
            ingest_vault(cfg, name, f"http://127.0.0.1:{port}/v1", vault, OWNER, "exo-bench-diary")
            built_s = time.perf_counter() - began
            print(f"ingested and embedded in {built_s:.0f} s", flush=True)
            with (
                connect(admin_url(cfg, name), "exo-bench-diary", autocommit=True) as admin,
                connect(role_url(cfg, "exo_reader", name), "exo-bench-diary", autocommit=True) as reader,
            ):
                dated = dating(admin, notes)
                apply_settings(admin, settings)
                began = time.perf_counter()

                def progress(done: int, total: int) -> None:
                    if done % 20 == 0 or done == total:
                        print(f"  {done}/{total} questions, {time.perf_counter() - began:.0f} s", flush=True)

                report = shadow.evaluate(
                    admin,
                    reader,
                    questions,
                    "questions.jsonl",
                    k=args.k,
                    budget=args.budget,
                    progress=progress,
                )
                eval_s = time.perf_counter() - began
                for r in report.results:
                    answer = shadow.embed_question(admin, r.question.question)
                    explained[id(r)] = explain(reader, r.question, answer.get("vector"))
                unanswerable = shadow.evaluate(
                    admin,
                    reader,
                    shadow.load_questions(root / "unanswerable.jsonl"),
                    "unanswerable.jsonl",
                    k=args.k,
                    budget=args.budget,
                )
                for r in unanswerable.results:
                    answer = shadow.embed_question(admin, r.question.question)
                    explained[id(r)] = explain(reader, r.question, answer.get("vector"))
    finally:
        services.down(cfg, run_dir=run_dir)

    # The ingest's dating.
    right = Counter()
    reasons = Counter()
    for n in notes:
        d = dated[n.path]
        right[(n.where, d["right"])] += 1
        reasons[(source_of(d["reason"]), d["right"])] += 1
    print("\nwritten_at is the note's day:")
    for where in WHERES:
        print(f"  {where}: {pct(right[(where, True)], right[(where, True)] + right[(where, False)])}")
    for (reason, ok), c in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  {c:4d} {'right' if ok else 'WRONG'}: {reason}")

    overall, by_kind = summary_tables(report, explained)
    console.print(overall)
    console.print(by_kind)
    print_nothing_answers(report, unanswerable, explained)

    notes_by_path = {n.path: n for n in notes}
    misses = Counter()
    rows = []
    for r in report.results:
        q = r.question
        info = explained[id(r)]
        o = r.outcomes["packet"]
        source = notes_by_path[q.sources[0]]
        d = dated[source.path]
        entry = {
            **r.to_json(),
            "source_day": source.day.isoformat(),
            "source_date_in": list(source.date_in),
            "source_written_at": d["written_at"].isoformat() if d["written_at"] else None,
            "source_band_reason": d["reason"],
            "search": info,
        }
        if not o.every:
            entry["packet_miss"] = why_missed(info, bool(o.sources))
            misses[(q.kind.split("/")[0], entry["packet_miss"])] += 1
        rows.append(entry)
    print("\npacket misses, why (by the question's date form):")
    for (form, why), c in sorted(misses.items()):
        print(f"  {form:9s} {c:3d}  {why}")
    print("\npacket misses, why (all):")
    for why, c in Counter(e["packet_miss"] for e in rows if "packet_miss" in e).most_common():
        print(f"  {c:3d}  {why}")
    missed = [(r, e) for r, e in zip(report.results, rows, strict=True) if "packet_miss" in e]
    by_form = [[m for m in missed if m[0].question.kind.startswith(form + "/")] for form in ALL_FORMS]
    shown = [m for group in itertools.zip_longest(*by_form) for m in group if m][: args.show]
    for r, e in shown:
        print(
            f"\n== packet missed ({e['packet_miss']}): {r.question.question} [{r.question.kind}] "
            f"expected {list(r.question.expect)} in {e['sources'][0]} (day {e['source_day']}, written_at "
            f"{e['source_written_at']} by {e['source_band_reason']}); source rank in search "
            f"{e['search']['source_rank']}; signals {e['search']['signals']}\n{r.packet_text}"
        )
    print(
        f"\nbuilt in {built_s:.0f} s, questions in {eval_s:.0f} s, all in {time.perf_counter() - began_all:.0f} s"
    )
    if args.json:
        data = report.to_json()
        data["questions"] = rows
        data["corpus"] = {
            "days": args.days,
            "seed": args.seed,
            "year": args.year,
            "shortfall": diary.shortfall,
        }
        args.json.write_text(json.dumps(data, indent=1, default=str) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
