"""The timeline's other sources (issue 31): the owner's own mail, dated by what it says against its
Date header, without its headers, quotes and signature; and plans in chats, mail and notes ("we're
going to see Dune on Friday", "dinner at Iris's next Saturday?"), kept marked planned on the day
they name ahead and never counted as done (extraction/events.py, sql/660_events.sql,
plpy/timeline.py)."""

from __future__ import annotations

import json
import random
from datetime import date, datetime, timedelta
from email.utils import format_datetime

import pytest
from click.testing import CliRunner
from support.files import write
from support.timeline import answer, packet

from exocortex.cli import main
from exocortex.extraction import events
from exocortex.ingest import pipeline
from exocortex.ingest.chat import import_chat
from exocortex.ingest.extract import mail_words
from exocortex.worker.loop import Worker

DAY = date(2019, 3, 5)  # a Tuesday
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PEOPLE = ("Iris", "Tomas", "Maya Lind", "Owen")


def said(text: str, plans: bool = True, base: date = DAY) -> list[tuple[str, str, bool]]:
    return [
        (e.activity, e.day.isoformat(), e.planned)
        for e in events.text_events(text, base, frozenset({"robin"}), note=False, plans=plans)
    ]


def back(base: date, weekday: str) -> date:
    """The weekday before base (a report's "on Friday", "last Friday")."""
    return base - timedelta(days=(base.weekday() - WEEKDAYS.index(weekday)) % 7 or 7)


def ahead(base: date, weekday: str) -> date:
    """The weekday after base (a plan's "on Friday", "next Friday", "this Friday")."""
    return base + timedelta(days=(WEEKDAYS.index(weekday) - base.weekday()) % 7 or 7)


# -- the generator: reports and plans in several phrasings and date forms, with their truth --

REPORTS = [  # (phrasing, activity)
    ("Met {p} for lunch {when}.", "lunch"),
    ("We went to the dentist {when}.", "dentist"),
    ("Went swimming {when}, 40 minutes.", "swim"),
    ("I played tennis with {p} {when}.", "tennis"),
    ("{p} and I had dinner at the Anchor {when}.", "dinner"),
    ("We watched Dune {when}, so good.", "watch"),
]
PLANS = [  # (phrasing, activity, whether "on Friday", "in 3 days" may say its day: a verb's tense tells it)
    ("We're going to see Dune {when}.", "see", True),
    ("I'll go swimming {when}.", "swim", True),
    ("Lunch with {p} {when}?", "lunch", False),
    ("We're meeting {p} for coffee {when}.", "coffee", True),
    ("Planning to run 10 km {when}.", "run", True),
    ("Dinner at the Anchor with {p} {when}.", "dinner", False),
    ("Shall we go climbing {when}?", "climb", True),
    ("Going to the cinema with {p} {when}.", "cinema", False),  # an -ing alone: a day no report says
]


def report_when(rng: random.Random, base: date) -> tuple[str, date]:
    weekday = rng.choice(WEEKDAYS)
    lately = base - timedelta(days=rng.randint(2, 40))
    long_ago = base - timedelta(days=rng.randint(200, 900))
    return rng.choice(
        [("yesterday", base - timedelta(days=1)), ("last night", base - timedelta(days=1)),
         (f"on {weekday}", back(base, weekday)), (f"last {weekday}", back(base, weekday)),
         (f"on {lately.day} {lately:%B}", lately), (f"on the {lately.day}th of {lately:%B}", lately),
         (f"on {long_ago:%B} {long_ago.day}, {long_ago.year}", long_ago)]
    )  # fmt: skip


def plan_when(rng: random.Random, base: date, tensed: bool) -> tuple[str, date]:
    weekday = rng.choice(WEEKDAYS)
    soon = base + timedelta(days=rng.randint(2, 60))
    forms = [("tomorrow", base + timedelta(days=1)), ("the day after tomorrow", base + timedelta(days=2)),
             (f"next {weekday}", ahead(base, weekday)), (f"this {weekday}", ahead(base, weekday)),
             (f"on {soon.day} {soon:%B}", soon), (f"on {soon:%Y-%m-%d}", soon)]  # fmt: skip
    if tensed:  # what a report says as well ("in ten days" a time taken) tells a plan by its verb
        forms += [(f"on {weekday}", ahead(base, weekday)), ("in 3 days", base + timedelta(days=3)),
                  ("in two weeks", base + timedelta(days=14))]  # fmt: skip
    return rng.choice(forms)


def generated(seed: int, n: int) -> list[tuple[date, list[str], list[tuple[str, str, bool]]]]:
    """n texts, each a day and two to four sentences (reports and plans, shuffled), with the
    events they tell: (activity, day, planned)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        base = date(2019, 1, 1) + timedelta(days=rng.randrange(365))
        sentences, truth = [], []
        for _ in range(rng.randint(2, 4)):
            if rng.random() < 0.5:
                phrasing, activity = rng.choice(REPORTS)
                when, day = report_when(rng, base)
                planned = False
            else:
                phrasing, activity, bare = rng.choice(PLANS)
                when, day = plan_when(rng, base, bare)
                planned = True
            sentence = phrasing.format(p=rng.choice(PEOPLE), when=when)
            sentences.append(sentence[0].upper() + sentence[1:])
            truth.append((activity, day.isoformat(), planned))
        texts.append((base, sentences, truth))
    return texts


def test_the_generators_reports_and_plans_are_read_with_their_days():
    for base, sentences, truth in generated(seed=31, n=40):
        got = said(" ".join(sentences), base=base)
        assert sorted(got) == sorted(truth), (base, sentences)


def test_without_plans_asked_for_a_plan_is_no_event_and_never_one_done():
    for base, sentences, truth in generated(seed=32, n=20):
        got = said(" ".join(sentences), plans=False, base=base)
        assert sorted(got) == sorted(t for t in truth if not t[2]), (base, sentences)


@pytest.mark.parametrize(
    "text",
    [
        "We won't go swimming tomorrow.",  # denied
        "We might go to the pub tomorrow.",  # only may
        "I should book the dentist next week.",
        "Maya is going to run a marathon on Sunday.",  # someone else's
        "Are you coming to dinner tomorrow?",
        "Did we swim on Sunday?",  # a question of the past
        "I'm trying to run more.",  # a progressive of no day ahead: no plan
        "Writing this down while it's fresh, for the postmortem on Monday.",  # a note's present
        "We'll see where it takes us.",  # a future put in no time: no row of a timeline
    ],
)
def test_what_is_neither_a_report_nor_the_owners_plan_is_nothing(text):
    assert said(text) == []


def test_a_report_told_with_a_day_ahead_stays_a_report_on_its_day():
    assert said("I booked a table for next Friday.") == [("table", "2019-03-05", False)]
    assert said("I booked a table for 12 March.") == [("table", "2019-03-05", False)]  # "for": not its day
    # a date in figures: the nearer of the one before and the one after, a report's only before
    assert said("We went to Rome on 3 March.") == [("travel", "2019-03-03", False)]
    assert said("Swam on 9 March, 40 minutes.") == [("swim", "2019-03-05", False)]  # ahead: no such report
    assert said("We are flying to Rome on 12 March.") == [("travel", "2019-03-12", True)]
    # "on Friday" alone with a fragment may be the Friday past, as a diary says it
    assert said("Dinner with Iris on Friday.") == [("dinner", "2019-03-01", False)]


def test_mail_words_leave_out_quotes_forwards_and_signatures_keeping_offsets():
    text = (
        "Hi Iris,\n\nSwam 40 lengths yesterday.\n> I went running.\nMet Tom for lunch.\n\nRobin\n--\n"
        "Robin Ashdown\nWent sailing daily\n\nOn Mon, 4 Mar 2019, Iris <i@c.example> wrote:\n> Had lunch."
    )
    kept = mail_words(text)
    assert len(kept) == len(text)
    assert " ".join(kept.split()) == "Hi Iris, Swam 40 lengths yesterday. Met Tom for lunch. Robin"
    forwarded = "Thanks!\n\nFrom: Iris Calder <i@c.example>\nSent: Monday\nTo: Robin\n\nI swam."
    assert " ".join(mail_words(forwarded).split()) == "Thanks!"
    original = "Done.\n-----Original Message-----\nI swam."
    assert " ".join(mail_words(original).split()) == "Done."
    assert mail_words("Ran 5 km -- felt great.") == "Ran 5 km -- felt great."  # a dash in a line


# -- mail through the worker ------------------------------------------------------------------

DATE_FORMS = [  # how clients write the Date header: with or without the weekday, any offset
    lambda t: format_datetime(t),
    lambda t: t.strftime("%d %b %Y %H:%M:%S %z"),
    lambda t: t.strftime("%a, %d %b %Y %H:%M %z"),
]
TAIL = (
    "\n\nRobin\n--\nRobin Ashdown\nSwam the Channel, 2019\n\n"
    "On {day}, Iris Calder <iris@calder.example> wrote:\n> We went swimming yesterday.\n> Lunch with Owen tomorrow?\n"
)


def mail(sender: str, sent: datetime, body: str, n: int) -> str:
    return (
        f"From: {sender}\nTo: Iris Calder <iris@calder.example>\n"
        f"Date: {DATE_FORMS[n % len(DATE_FORMS)](sent)}\nSubject: Re: news {n}\n"
        f'Message-ID: <m{n}@ashdown.example>\nContent-Type: text/plain; charset="utf-8"\n\n'
        f"Hi Iris,\n\n{body}{TAIL.format(day=sent.strftime('%a, %d %b %Y'))}"
    )


def stored(db, **where) -> list[tuple]:
    with db.connect() as conn:
        return conn.execute(
            "select activity, day::text, planned, day_source from exo_private.events order by day, activity"
        ).fetchall()


def test_the_owners_mail_is_read_by_its_date_and_others_mail_is_not(db, tmp_path):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_owner('Robin Ashdown')")
        conn.execute(
            "update exo_private.settings set value = '[\"r.ashdown@work.example\"]' "
            "where key = 'graph.owner_addresses'"
        )
    root, truth = tmp_path / "vault", []
    senders = ["Robin Ashdown <robin@home.example>", "R. A. <r.ashdown@work.example>"]  # name; address
    for n, (base, sentences, told) in enumerate(generated(seed=33, n=8)):
        sent = datetime(base.year, base.month, base.day, 9 + n, 15).astimezone()
        write(root, f"mail/{n}.eml", mail(senders[n % 2], sent, " ".join(sentences), n))
        truth += told
    # someone else's mail tells their life, whatever it says
    elsewhere = datetime(2019, 6, 4, 10, 0).astimezone()
    write(
        root,
        "mail/iris.eml",
        mail("Iris Calder <iris@calder.example>", elsewhere, "Went swimming yesterday.", 99),
    )
    pipeline.ingest(db.cfg, root, "personal", dbname=db.name)
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()
    got = stored(db)
    assert sorted((a, d, p) for a, d, p, _ in got) == sorted(truth)  # none of the tails', none of Iris's
    assert {s for *_, s in got} == {"relative"}  # each moved from the Date's day by what it says
    with db.connect() as conn:
        sources = conn.execute(
            "select distinct s.day_source from exo_private.documents d,"
            " exo_private.event_sources(d.id) s where d.path like 'mail/%'"
        ).fetchall()
    assert sources == [("sent",)]


def test_a_mail_sentence_of_no_day_keeps_the_date_headers_day(db, tmp_path):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_owner('Robin Ashdown')")
    sent = datetime(2019, 3, 5, 18, 30).astimezone()
    write(
        tmp_path / "v",
        "mail.eml",
        mail("Robin Ashdown <robin@home.example>", sent, "Had lunch with Owen at the Anchor.", 1),
    )
    pipeline.ingest(db.cfg, tmp_path / "v", "personal", dbname=db.name)
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()
    assert stored(db) == [("lunch", "2019-03-05", False, "sent")]


# -- plans in the timeline --------------------------------------------------------------------


def test_a_plan_is_kept_apart_and_the_timeline_says_it_did_not_count_it(db, tmp_path, monkeypatch):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_owner('Robin Ashdown')")
    lines = [
        ("2019-03-04T09:00:00+00:00", "Robin Ashdown", "Went swimming last night, 40 minutes."),
        ("2019-03-04T09:01:00+00:00", "Iris", "Nice! I went swimming too."),
        ("2019-03-05T18:00:00+00:00", "Robin Ashdown", "We're going swimming on Friday, want to come?"),
        ("2019-03-05T18:02:00+00:00", "Robin Ashdown", "And we're going to see Dune on Saturday."),
        ("2019-03-05T18:03:00+00:00", "Iris", "Dinner at mine next Sunday?"),
        ("2019-03-05T18:05:00+00:00", "Robin Ashdown", "Dinner at yours next Sunday? Yes please!"),
    ]
    path = write(tmp_path, "chat.jsonl", "\n".join(
        json.dumps({"conversation_id": "c1", "sender": s, "sent_at": t, "text": x, "is_owner": s.startswith("Robin")})
        for t, s, x in lines
    ))  # fmt: skip
    with db.connect("exo_writer") as conn:
        import_chat(conn, path, "jsonl")
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()
    assert [(a, d, p) for a, d, p, _ in stored(db)] == [
        ("swim", "2019-03-03", False),
        ("swim", "2019-03-08", True),
        ("see", "2019-03-09", True),
        ("dinner", "2019-03-10", True),
    ]
    with db.connect("exo_reader") as conn:
        done = conn.execute("select day::text, activity from exo.events()").fetchall()
        plans = conn.execute("select day::text, activity from exo.events(planned => true)").fetchall()
        counted = conn.execute("select key, events from exo.event_counts()").fetchall()
    assert done == [("2019-03-03", "swim")]
    assert plans == [("2019-03-08", "swim"), ("2019-03-09", "see"), ("2019-03-10", "dinner")]
    assert counted == [("swim", 1)]  # the count of what happened
    # `exo events list --planned` (and the API and MCP tool behind it) lists the plans
    monkeypatch.setenv("EXO_READER_URL", db.url("exo_reader"))
    listed = CliRunner().invoke(main, ["events", "list", "--planned", "--json"], catch_exceptions=False)
    assert [(e["day"], e["activity"]) for e in json.loads(listed.output)] == plans
    both = CliRunner().invoke(main, ["events", "list", "--json"], catch_exceptions=False)
    assert [(e["day"], e["activity"]) for e in json.loads(both.output)] == done
    found = packet(db, "How many times did I go swimming in March 2019?", as_of="2019-03-31")
    assert answer(found) == "Answer: 1 time"
    section = found["text"].split("## Timeline\n", 1)[1]
    assert "Not counted: 1 plan of the same reading" in section
    assert "planned => true" in section and "- 2019-03-08 swim (planned): \"We're going swimming" in section
    # a question of the past never counts a plan as done, nor takes its day for the last
    last = packet(db, "When did I last go swimming?", as_of="2019-03-31")
    assert "2019-03-03" in answer(last)
