"""Benchmark: is what changed said? Knowledge updates, disagreements and questions nothing answers.

Issue 29 reports long assistant conversations where, for every one of 6 knowledge updates, the
newer value is missing from the packet or ranked below the old one with nothing saying which is
newer ("reduced it to 300ms" at [1], the later "250 ms" at [3]); where none of 6 contradictions is
flagged; and where none of 6 unanswerable questions gets a packet that says nothing answers.

Corpus (seeded, generated, dated relative to the run's day): the owner (Sam Rivera) talks with an
assistant over about 18 months, one conversation a session with a title, about a dozen subjects of
a life and a job (rent, a latency budget, a manager, a home city, an offsite, a car, a running
goal, gym days, a phone plan, a dentist, a book club, a standup time). Each subject is stated
once (in one of 3-4 phrasings, inside an ordinary request) and changed once or twice later, in
another session 40-200 days on, in one of 5-6 phrasings: with a word that says it changed
("moved to", "now", "instead", "pushed back to", "no longer") or without one (the new value just
stated). Between them, sessions about the same subjects that state no value ("Can you draft a
note to my landlord?"). Disagreements: two friends' group chats on the same day state different
values for the same plan ("Dinner at the Parkers' is on Friday" / "...is Saturday"). Unanswerable:
questions about subjects the chats never state (a car insurance premium, a blood type).

Questions, in the present tense as people ask them: `update` (gold: the newest value, `old` the
earlier ones), `disagreement` (both values), `unanswerable`. Per question, as exo_reader:

  packet      exo.context_packet_json(question, query_embedding => its vector)
  bm25@5      BM25 (pg_textsearch) over the single messages, "Sender: text", top 5
  vector@5    the same messages embedded by the same model, exact cosine top 5

Scores: newest held (the newest value's text is in what the method returns); newest first (the
first block or message, in the packet's order or the baseline's rank, that shows any of the
subject's values shows the newest); marked (packet only: the newest value's block says it is the
later one, "(later, DATE...)", and every block showing an older value without the newest says
"earlier"); disagreement flagged (the packet holds both values and says they disagree); stray
marks (a block marked later, earlier or disagreeing that shows none of the values the question is
about: every mark, for an unanswerable one); nothing said (report.answer.found false) for the
unanswerable ones, and wrongly for the answerable ones. Tokens: the packet's own count, the
baselines' characters/4.

Each seed of --seeds is its own corpus and scratch database; the table counts them together, and
a line a seed gives each one's counts.

    .venv/bin/python -m bench.chat_updates [--seeds 31 32 33] [--show 3] [--keep DIR] [--extract] [--setting KEY=JSON ...]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pgvector import Vector

from bench.chat_histories import History, Message, write_export
from bench.chat_recall import (
    BM25,
    NEAREST,
    PACKET,
    baseline_table,
    embed_all,
    embedding_endpoint,
    load_note,
    share,
)
from bench.public_chats import import_export
from bench.scratch import add_setting_option, apply_settings, serve_embeddings_from, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker

APP = "exo-bench-chat-updates"
OWNER = "Sam Rivera"
ASSISTANT = "Assistant"
KINDS = ("update", "disagreement", "unanswerable")
MARK = re.compile(r"\((?:later|earlier|disagrees)\b")


@dataclass(frozen=True)
class Subject:
    """One thing of a life whose value changes: the values in order, how each is stated."""

    key: str
    values: tuple[str, ...]
    first: tuple[str, ...]  # statements of the first value ({v})
    later: tuple[str, ...]  # statements of a later value ({v}, {old})
    asks: tuple[str, ...]  # questions
    chatter: tuple[str, ...]  # requests about the subject that state no value


SUBJECTS = [
    Subject("rent", ("£1,150", "£1,210", "£1,275"),
            ("My rent is {v} a month, can you help me budget around it?",
             "I pay {v} in rent every month. What should my savings target be?",
             "Rent here is {v}; is that a lot for a one-bed?"),
            ("The landlord put the rent up to {v}.", "My rent is now {v}, so the budget needs redoing.",
             "Rent went up from {old} to {v} this month.", "I'm paying {v} rent instead of {old}.",
             "New lease signed: {v} a month.", "Budget update: rent {v}."),
            ("How much is my rent?", "What do I pay in rent each month?"),
            ("Can you draft a polite note to my landlord about the boiler?",
             "Is it normal for a landlord to ask for references again?")),
    Subject("latency", ("300 ms", "250 ms", "220 ms"),
            ("We set the checkout API latency budget at {v} today.",
             "Our p99 latency budget for checkout is {v}; how do I alert on it?",
             "We reduced the checkout latency budget to {v}."),
            ("The checkout latency budget is now {v}.", "Tightened the checkout budget again: {v}.",
             "We cut the latency budget for checkout from {old} to {v}.",
             "Checkout latency budget changed to {v} after the review.",
             "p99 budget for checkout: {v}, starting Monday.", "Actually the checkout budget is {v} instead."),
            ("What is the latency budget for the checkout API?", "What's our checkout latency budget?"),
            ("How do I profile the checkout service's slow queries?",
             "Can you explain p99 versus p95 latency for the checkout dashboard?")),
    Subject("manager", ("Priya Nair", "Tomasz Wolski", "Helen Achebe"),
            ("My manager is {v}; how should I ask for a 1:1?", "I report to {v}. Tips for a first review?",
             "{v} is my line manager, and I need to ask about training."),
            ("My new manager is {v}.", "I report to {v} now after the reorg.",
             "{old} moved teams, so {v} manages me now.", "The reorg happened: {v} is my manager.",
             "Starting this week my manager is {v} instead of {old}.", "First 1:1 with {v}, my manager, went well."),
            ("Who is my manager?", "Who do I report to?"),
            ("How do I write a self-review for my manager?", "What should I bring to a 1:1 with my manager?")),
    Subject("city", ("Leeds", "York", "Bristol"),
            ("I live in {v}; what are good weekend walks nearby?", "Living in {v}, which broadband is best?",
             "We're in {v} these days. Any cheap gyms?"),
            ("We moved to {v} last month.", "I live in {v} now.", "Settled in {v} after the move from {old}.",
             "We finally relocated to {v}.", "New address is in {v}, can you update my letter template?",
             "No longer in {old}: we live in {v}."),
            ("Where do I live?", "Which city do I live in?"),
            ("Can you suggest a checklist for moving house?", "How do I register with a new GP after a move?")),
    Subject("offsite", ("12 May", "2 June", "16 June"),
            ("The team offsite is on {v}; can you draft an agenda?", "Our offsite is planned for {v}.",
             "Offsite date is {v}, please help with the invite."),
            ("The offsite got pushed back to {v}.", "The offsite moved to {v}.", "New offsite date: {v}.",
             "The offsite is now on {v} instead of {old}.", "We rescheduled the offsite for {v}.",
             "Offsite changed again, it's {v}."),
            ("When is the team offsite?", "What date is our offsite?"),
            ("What icebreakers work for a team offsite?", "Can you list catering options for an offsite of twelve?")),
    Subject("car", ("Volkswagen Golf", "Renault Zoe", "Kia Niro"),
            ("I drive a {v}; when is its first service due?", "My car is a {v}. Is winter tyre swap worth it?",
             "Our {v} needs new wipers, which size?"),
            ("Sold the old car; I drive a {v} now.", "Picked up our new car today, a {v}.",
             "We traded the {old} for a {v}.", "My car is a {v} these days.",
             "Switched to a {v} instead of the {old}.", "The {v} arrived, so that's my car now."),
            ("What car do I drive?", "Which car do I have?"),
            ("How often should I check tyre pressure?", "Is it worth washing the car in winter?")),
    Subject("running", ("10 km", "21 km", "42 km"),
            ("My running goal this year is {v}. Can you plan my weeks?", "I'm training for {v}; what pace?",
             "Goal for the spring: run {v} without stopping."),
            ("Changed my running goal to {v}.", "I'm now training for {v}.",
             "Upgraded the goal from {old} to {v}.", "New target: {v}.",
             "My running goal is {v} now, a bigger plan please.", "Going for {v} instead of {old}."),
            ("What is my running goal?", "What distance am I training for?"),
            ("How do I avoid shin splints?", "What should I eat before a long run?")),
    Subject("gym", ("Tuesdays", "Thursdays", "Saturdays"),
            ("I go to the gym on {v}; what's a good full-body plan?", "Gym day is {v} for me.",
             "I lift on {v} before work."),
            ("Gym is on {v} now.", "Moved my gym day to {v}.", "I go on {v} instead of {old}.",
             "Class times changed, so I train on {v}.", "From next week the gym is {v}.",
             "My gym day switched to {v}."),
            ("Which day do I go to the gym?", "When is my gym day?"),
            ("How long should I rest between sets?", "Is stretching before lifting useful?")),
    Subject("phone", ("20 GB", "50 GB", "100 GB"),
            ("My phone plan has {v} of data; is that enough for hotspotting?", "I get {v} a month on my phone.",
             "On a {v} plan, how much is video calling?"),
            ("Upgraded the phone plan to {v}.", "My plan has {v} now.", "Data went from {old} to {v}.",
             "I switched to a {v} plan.", "The new contract gives me {v} a month.", "Phone plan is {v} instead."),
            ("How much data does my phone plan have?", "How much mobile data do I get?"),
            ("How do I check data usage on Android?", "Can you compare eSIM providers?")),
    Subject("dentist", ("Dr. Ansell", "Dr. Okafor", "Dr. Lindqvist"),
            ("My dentist is {v}; how often should I book a check-up?", "I see {v} for my teeth.",
             "{v} is my dentist, and the practice sent a reminder."),
            ("My new dentist is {v}.", "I switched dentists, it's {v} now.",
             "{old} retired, so I see {v} instead.", "Registered with {v} as my dentist.",
             "Dentist changed to {v}.", "Next check-up is with {v}, my dentist now."),
            ("Who is my dentist?", "Which dentist do I see?"),
            ("Is an electric toothbrush better?", "How do I deal with sensitive teeth?")),
    Subject("bookclub", ("Hollis Café", "the Lantern", "Marsh Library"),
            ("Our book club meets at {v}; can you suggest a novel?", "Book club is at {v} this season.",
             "We do book club at {v} on Wednesdays."),
            ("Book club moved to {v}.", "We meet at {v} now for book club.",
             "Book club is at {v} instead of {old}.", "New venue for book club: {v}.",
             "Since the renovation, book club is at {v}.", "Book club changed venue to {v}."),
            ("Where does my book club meet?", "Where is book club held?"),
            ("Can you suggest discussion questions for a mystery novel?", "How long should a book club meeting run?")),
    Subject("standup", ("9:30", "10:15", "9:00"),
            ("Our standup is at {v}; how do I keep it short?", "Daily standup is {v} every morning.",
             "Standup happens at {v}, help me write an update."),
            ("Standup moved to {v}.", "Our standup is at {v} now.", "Standup is {v} instead of {old}.",
             "New standup time: {v}.", "We pushed standup back to {v}.", "Standup changed to {v} from Monday."),
            ("What time is our standup?", "When is the daily standup?"),
            ("How do I run a good standup?", "What goes in a standup update?")),
]  # fmt: skip

ACKS = (
    "Noted. Here is a short plan you can adapt.",
    "Got it. A few suggestions below.",
    "Thanks for the context. Here is what I would do.",
    "Understood; here is a draft you can edit.",
    "Sure. Three options, from simplest to most thorough.",
)

ADVICE = (
    "Start with what you can change this week and leave the rest for later.",
    "Write the numbers down in one place so you can compare them next month.",
    "A short checklist usually beats a long plan that nobody reads.",
    "If it still feels unclear, ask for a quick call rather than a long email.",
    "Keep a note of the dates involved; it makes follow-ups much easier.",
    "It helps to set a reminder a few days before anything is due.",
    "Most people find it easier to review this once a quarter.",
    "Try the simplest option first and only add detail where it helps.",
)
FOLLOWUPS = (
    "Thanks, that helps.",
    "Perfect, thank you!",
    "Can you make it shorter?",
    "Great, I'll try that.",
)


def reply(rng: random.Random) -> str:
    """An assistant's reply: an acknowledgement and a few sentences of advice."""
    return " ".join([rng.choice(ACKS), *rng.sample(ADVICE, rng.randint(2, 4))])


def exchange(rng: random.Random, text: str) -> list[tuple[str, str]]:
    """A request, the reply, sometimes a follow-up and its reply."""
    lines = [(OWNER, text), (ASSISTANT, reply(rng))]
    if rng.random() < 0.6:
        lines += [(OWNER, rng.choice(FOLLOWUPS)), (ASSISTANT, rng.choice(ACKS))]
    return lines


# Two friends' group chats of one day, stating different values for one plan.
DISAGREEMENTS = [
    ("parkers", "When is dinner at the Parkers'?", "Dinner at the Parkers' is on {v} at 7.", ("Friday", "Saturday")),
    ("deposit", "How much is the deposit for the cabin?", "The cabin deposit is {v}, paid by the end of the week.",
     ("£400", "£450")),
    ("flight", "When does Karl's flight land?", "Karl's flight lands at {v} on Sunday.", ("6:40", "7:15")),
    ("venue", "Where is Mia's birthday party?", "Mia's birthday party is at {v}.", ("Juniper Hall", "the Boathouse")),
]  # fmt: skip
FRIENDS = (
    "Ana Kovac",
    "Ben Osei",
    "Chloe Brandt",
    "Dev Malik",
    "Elif Demir",
    "Farid Haddad",
    "Greta Lund",
    "Hugo Brun",
)

UNANSWERABLE = [
    "What is my car insurance premium?", "What is my blood type?", "Who is my accountant?",
    "When is my passport renewal due?", "What is the wifi password at the cabin?",
    "Which school does my niece attend?", "How much did I pay for the sofa?", "What is my library card number?",
]  # fmt: skip


@dataclass
class Question:
    id: str
    kind: str
    question: str
    values: list[str]  # newest last (update), or the disagreeing values
    stated: list[int] = field(default_factory=list)  # the ordinals stating them, in order


@dataclass
class Corpus:
    messages: list[Message]
    questions: list[Question]
    as_of: date


def _session(rng, start: datetime, title: str, lines: list[tuple[str, str]], ordinal: int, conv: str):
    """Messages of one conversation: (sender, text) lines a few minutes apart."""
    out, at = [], start
    for sender, text in lines:
        out.append(Message(ordinal, conv, title, sender, sender == OWNER, at, text))
        ordinal += 1
        at += timedelta(seconds=rng.randint(30, 300))
    return out


def generate(seed: int = 31, as_of: date | None = None) -> Corpus:
    """The conversations and questions; deterministic for the seed and as_of (today, UTC)."""
    rng = random.Random(seed)
    as_of = as_of or datetime.now(UTC).date()
    start = as_of - timedelta(days=540)
    sessions: list[tuple[datetime, str, list[tuple[str, str]], str | None]] = []
    questions: list[Question] = []

    def when(day: int) -> datetime:
        d = start + timedelta(days=day)
        return datetime(d.year, d.month, d.day, rng.randint(7, 21), rng.randint(0, 59), tzinfo=UTC)

    for s in SUBJECTS:
        changes = rng.choice((1, 2))
        day = rng.randint(0, 120)
        q = Question(f"update-{s.key}", "update", rng.choice(s.asks), list(s.values[: changes + 1]))
        for i, v in enumerate(q.values):
            text = (rng.choice(s.first) if i == 0 else rng.choice(s.later)).format(
                v=v, old=q.values[i - 1] if i else ""
            )
            sessions.append((when(day), f"{s.key} {i}", exchange(rng, text), q.id))
            for _ in range(rng.randint(2, 4)):  # chatter about the subject, stating no value
                other = rng.randint(0, 500)
                sessions.append(
                    (
                        when(other),
                        f"{s.key} chat",
                        [(OWNER, rng.choice(s.chatter)), (ASSISTANT, rng.choice(ACKS))],
                        None,
                    )
                )
            day += rng.randint(40, 200)
        questions.append(q)
    for key, asked, template, values in DISAGREEMENTS:
        day = rng.randint(300, 520)
        a, b = rng.sample(FRIENDS, 2)
        q = Question(f"disagreement-{key}", "disagreement", asked, list(values))
        for friend, v in zip((a, b), values, strict=True):
            lines = [(friend, template.format(v=v)), (OWNER, "Great, see you there!")]
            sessions.append((when(day), f"{friend.split()[0]} and Sam", lines, q.id))
        questions.append(q)
    for i, asked in enumerate(UNANSWERABLE):
        questions.append(Question(f"unanswerable-{i + 1}", "unanswerable", asked, []))

    messages: list[Message] = []
    stating: dict[str, list[int]] = {}
    for n, (at, title, lines, qid) in enumerate(sorted(sessions, key=lambda x: x[0])):
        got = _session(rng, at, title.capitalize(), lines, len(messages) + 1, f"c{n + 1:03d}")
        messages.extend(got)
        if qid:
            stating.setdefault(qid, []).append(got[0].ordinal)
    for q in questions:
        q.stated = stating.get(q.id, [])
    return Corpus(messages, questions, as_of)


def write(corpus: Corpus, out: Path) -> Path:
    """The JSONL export (chats.jsonl) and the questions (questions.json) in out."""
    export = write_export(corpus.messages, out)
    (out / "questions.json").write_text(json.dumps([asdict(q) for q in corpus.questions], indent=1) + "\n")
    return export


# --- scoring ------------------------------------------------------------------------------------


def newest_first(texts: list[str], values: list[str]) -> bool:
    """Whether the first of `texts` (in order) to show any of the values shows the newest (the
    last): "from 300 ms to 250 ms" shows the newest first, as the line that says it changed."""
    return next((values[-1] in t for t in texts if any(v in t for v in values)), False)


def blocks(packet_text: str) -> list[str]:
    """The packet's evidence blocks, each its header line and excerpt."""
    evidence = packet_text.partition("## Evidence\n")[2].partition("## Provenance")[0]
    parts, current = [], None
    for line in evidence.split("\n"):
        if line[:1] == "[" and "]" in line[:5]:
            current = [line]
            parts.append(current)
        elif current is not None:
            current.append(line)
    return ["\n".join(p) for p in parts]


@dataclass
class Scored:
    q: Question
    held: dict[str, bool]
    first: dict[str, bool]
    tokens: dict[str, int]
    marked: bool = False
    flagged: bool = False
    nothing: bool = False
    text: str = ""
    stray: int = 0
    facts: bool = False  # the facts section gives the newest value and no older one as current
    facts_stale: bool = False  # the facts section gives an older value and not the newest
    facts_strict: bool = False  # facts, and no older value even as the history ("before: ...")
    section: str = ""


def score(q: Question, packet: dict, bm25: list[str], near: list[str]) -> Scored:
    text = packet["text"]
    evidence = blocks(text)
    returned = {"packet": evidence, "bm25@5": bm25, "vector@5": near}
    newest = q.values[-1] if q.values else None
    held = {m: newest is not None and any(newest in t for t in ts) for m, ts in returned.items()}
    first = {m: bool(q.values) and newest_first(ts, q.values) for m, ts in returned.items()}
    tokens = {"packet": packet["tokens"], "bm25@5": sum((len(t) + 3) // 4 for t in bm25),
              "vector@5": sum((len(t) + 3) // 4 for t in near)}  # fmt: skip
    header = {v: next((b.split("\n", 1)[0] for b in evidence if v in b), "") for v in q.values}
    # an older value's block: the first that shows it without the newest ("instead of 2 June")
    older = [
        next((b.split("\n", 1)[0] for b in evidence if v in b and newest not in b), "") for v in q.values[:-1]
    ]
    marked = newest is not None and "later" in header[newest] and all("earlier" in h for h in older if h)
    both = all(any(v in b for b in evidence) for v in q.values)
    flagged = both and all("disagree" in header[v] for v in q.values)
    nothing = (packet["report"].get("answer") or {}).get("found") is False
    # marks on blocks that show none of the values asked about (all of them, for unanswerable)
    stray = sum(1 for b in evidence if MARK.search(b.split("\n", 1)[0]) and not any(v in b for v in q.values))
    section = text.partition("## Current facts\n")[2].partition("\n## ")[0]
    # a line's history, "; before: X (FROM to TO)", says an older value is no longer current
    current = re.sub(r"; before: [^\n]*", "", section)
    older_said = any(v in current for v in q.values[:-1])
    facts = newest is not None and newest in current and not older_said
    stale = newest is not None and older_said and newest not in current
    strict = facts and not any(v in section for v in q.values[:-1])
    marked = marked and len(q.values) > 1
    return Scored(
        q, held, first, tokens, marked, flagged, nothing, text, stray, facts, stale, strict, section
    )


def summary(results: list[Scored]) -> str:
    """One seed's counts: updates newest first and marked, disagreements flagged, nothing said."""
    up = [r for r in results if r.q.kind == "update"]
    un = [r for r in results if r.q.kind == "unanswerable"]
    dis = [r for r in results if r.q.kind == "disagreement"]
    return (f"updates newest held {sum(r.held['packet'] for r in up)}/{len(up)}, newest first "
            f"{sum(r.first['packet'] for r in up)}, first and marked {sum(r.first['packet'] and r.marked for r in up)}, "
            f"newest in the facts section {sum(r.facts for r in up)}; "
            f"disagreements flagged {sum(r.flagged for r in dis)}/{len(dis)}; unanswerable said "
            f"{sum(r.nothing for r in un)}/{len(un)}, answerable wrongly {sum(r.nothing for r in up + dis)}")  # fmt: skip


def print_results(results: list[Scored], show: int) -> None:
    by = {k: [r for r in results if r.q.kind == k] for k in KINDS}
    up, dis, un = by["update"], by["disagreement"], by["unanswerable"]
    answerable = up + dis
    print(f"\n== {len(up)} updates, {len(dis)} disagreements, {len(un)} unanswerable; tokens: medians")
    print(f"  {'method':<10}{'newest held':>13}{'newest first':>14}{'first+marked':>14}{'tokens':>8}")
    for m in ("packet", "bm25@5", "vector@5"):
        marked = share([r.first[m] and r.marked for r in up]) if m == "packet" else "-"
        print(f"  {m:<10}{share([r.held[m] for r in up]):>13}{share([r.first[m] for r in up]):>14}"
              f"{marked:>14}{statistics.median(r.tokens[m] for r in results):>8.0f}")  # fmt: skip
    print(f"  the facts section gives the newest value (and no older one as current) for {share([r.facts for r in up])} "
          f"(and no older one even as its history, 'before: ...': {share([r.facts_strict for r in up])}), "
          f"an older one without the newest for {share([r.facts_stale for r in up])}; "
          f"newest held in the facts section or first and marked: {share([r.facts or (r.first['packet'] and r.marked) for r in up])}")  # fmt: skip
    print(f"  disagreements flagged by the packet: {share([r.flagged for r in dis])}; marks on blocks that show "
          f"none of the values asked about: {sum(r.stray for r in results)} in {len(results)} packets")  # fmt: skip
    print(f"  nothing answers: said for {share([r.nothing for r in un])} of the unanswerable, "
          f"wrongly for {share([r.nothing for r in answerable])} of the answerable")  # fmt: skip
    shown = 0
    for r in results:
        bad = (
            (r.q.kind == "update" and not (r.first["packet"] and r.marked))
            or (r.q.kind == "disagreement" and not r.flagged)
            or (r.q.kind == "unanswerable") != r.nothing
        )
        if bad and shown < show:
            shown += 1
            print(
                f"  -- {r.q.id}: {r.q.question} {r.q.values}\n     | "
                + r.text[:1400].replace("\n", "\n     | ")
            )
    missed = [r for r in up if not r.facts]
    for r in missed[:show]:
        print(
            f"  -- facts, {r.q.id}: {r.q.question} {r.q.values}\n     | "
            + r.section.replace("\n", "\n     | ")
        )


def extract_without_model(cfg: config.Config, name: str, owner: str) -> int:
    """The worker's CPU passes over database `name`, as `exo worker` runs them without a chat
    model: relations by pattern and parse, and the owner's own statements of a value as facts.
    Returns the windows done."""
    with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
        admin.execute("select exo_private.set_owner(%s)", (owner,))
        admin.execute(
            "update exo_private.settings set value = value || '{\"url\": null}' where key = 'models.chat'"
        )
    return Worker(cfg, dbname=name, once=True, queues=("extract",), poll_s=0.01).run().done["extract"]


def run(
    cfg: config.Config, endpoint: Endpoint, seed: int, out: Path, extract: bool = False, settings=()
) -> list[Scored]:
    corpus = generate(seed)
    export = write(corpus, out)
    print(
        f"as of {corpus.as_of}: {len(corpus.messages)} messages, {len(corpus.questions)} questions in {export}"
    )
    with scratch_database(cfg, "bench_chat_updates") as name:
        with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
            serve_embeddings_from(admin, endpoint.url)
            apply_settings(admin, settings)
        import_export(cfg, name, export)
        began = time.perf_counter()
        done = Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run().done["embed"]
        print(f"embed queue: {done:,} windows in {time.perf_counter() - began:.0f} s", flush=True)
        if extract:
            began = time.perf_counter()
            done = extract_without_model(cfg, name, OWNER)
            print(f"extract queue: {done:,} windows in {time.perf_counter() - began:.0f} s", flush=True)
        texts = {m.ordinal: f"{m.sender}: {m.text}" for m in corpus.messages}
        with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
            baseline_table(admin, History(corpus.messages, []), embed_all(endpoint, list(texts.values())))
            vectors = embed_all(endpoint, [q.question for q in corpus.questions])
            results, packets = [], []
            with connect(role_url(cfg, "exo_reader", name), APP, autocommit=True) as reader:
                for q, vec in zip(corpus.questions, vectors, strict=True):
                    packet = reader.execute(PACKET, (q.question, vec)).fetchone()[0]
                    bm25 = [texts[r[0]] for r in admin.execute(BM25, (q.question, 5))]
                    near = [texts[r[0]] for r in admin.execute(NEAREST, (Vector(vec), 5))]
                    results.append(score(q, packet, bm25, near))
                    packets.append({"id": q.id, "question": q.question, "values": q.values, "packet": packet})
    (out / "packets.json").write_text(json.dumps(packets, indent=1, default=str) + "\n")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[31, 32, 33])
    parser.add_argument("--show", type=int, default=3, help="print this many packets that fall short")
    parser.add_argument("--keep", type=Path, help="write chats.jsonl and questions.json here")
    parser.add_argument(
        "--extract", action="store_true", help="also run the extract queue without a chat model (CPU passes)"
    )
    add_setting_option(parser)
    args = parser.parse_args()
    settings = trial_settings(parser, args)
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-chat-updates-"))
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {load_note()}", flush=True)
    began = time.perf_counter()
    with embedding_endpoint(cfg, run_dir) as endpoint:
        results = []
        for seed in args.seeds:
            got = run(cfg, endpoint, seed, (args.keep or run_dir) / f"seed-{seed}", args.extract, settings)
            print(f"seed {seed}: " + summary(got), flush=True)
            results += got
        print_results(results, args.show)
    print(f"\nfinished in {time.perf_counter() - began:.0f} s with {load_note()}")


if __name__ == "__main__":
    main()
