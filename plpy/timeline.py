"""Questions the timeline answers by counting (stdlib only).

Inlined into exo_private.build_packet (`# exo:include timeline`) and importable as plain Python
for tests. "How many times did I go swimming in June?", "When did I last see Dr Hale?", "How
much did I spend in March?", "How far did I cycle in total?", "On average how long were my
runs?", "Which city did I visit most?": a question of how many, how much, how often, when
first or last, which most, the longest, read by its syntax (AGGREGATE_KINDS) and answered from
the events (exo_private.timeline_answer: one query), never from what a passage happens to say.

What the question is about is read against the timeline's own vocabulary: its words (and
their plain English inflections, exo_private.word_forms: "runs", "swimming") against the
activities and the words that
named them in the text; its capitalised names against the people and places of the events;
its dates by the temporal parser (the search report's span). A question whose activity, person
or place the timeline does not know gets no number: the section says how it read the question
and that the timeline holds no such event, and the evidence follows.
"""

import datetime
import json
import re

from search import STOPWORDS, query_words

# How a question asks to count, in the order they are told apart ("when did I last" before
# "how many"; "on average how long" before "how long").
AGGREGATE_KINDS = (
    ("average", re.compile(r"\b(?:on )?average\b|\bmean\b|\btypically\b", re.I)),
    ("longest", re.compile(r"\b(?:longest|furthest|farthest|biggest|largest|most expensive)\b", re.I)),
    ("shortest", re.compile(r"\b(?:shortest|smallest|cheapest|least expensive)\b", re.I)),
    ("last", re.compile(r"\bwhen\b.*\blast\b|\blast time\b|\bmost recent(?:ly)?\b", re.I)),
    ("first", re.compile(r"\bwhen\b.*\bfirst\b|\bfirst time\b|\bearliest\b", re.I)),
    (
        "most",
        re.compile(r"\b(?:which|what|who|where)\b.*\b(?:most|least)\b|\bmost (?:often|frequently)\b", re.I),
    ),
    (
        "total",
        re.compile(r"\bin total\b|\btotal\b|\baltogether\b|\bhow much\b|\bhow far\b|\bhow long\b", re.I),
    ),
    ("count", re.compile(r"\bhow many\b|\bhow often\b|\bnumber of\b|\bhow frequently\b", re.I)),
)
# What a total or an average is of: its words.
MEASURE_WORDS = {
    "minutes": {"long", "time", "hours", "hour", "minutes", "minute", "duration", "mins"},
    "km": {"far", "distance", "km", "kilometres", "kilometers", "miles", "mile"},
    "amount": {
        "spend",
        "spent",
        "cost",
        "costs",
        "pay",
        "paid",
        "money",
        "pounds",
        "dollars",
        "euros",
        "price",
    },
}
# Words of the asking, the counting and the dating: none names what is counted.
ASKING_WORDS = frozenset(
    """how many much often times time total average mean typically altogether all when last first
    most least longest furthest farthest biggest largest shortest smallest cheapest expensive
    recent recently earliest which what who where number frequently did do does go went going
    get got have had has spend spent usually ever year years month months week weeks day days
    today yesterday ago between since until this next past per each every the in on at of
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday morning evening night weekend quarter""".split()  # noqa: SIM905
)
# Verbs of being with someone or somewhere: with a person or place named, they add nothing.
MEETING_WORDS = frozenset(
    ["see", "saw", "seen", "meet", "met", "visit", "visited", "visiting", "catch", "caught"]
)
# What "which X" may ask of besides an activity: a place, a person.
PLACE_CATEGORIES = frozenset(
    [
        "city",
        "cities",
        "town",
        "towns",
        "country",
        "countries",
        "place",
        "places",
        "restaurant",
        "restaurants",
        "cafe",
        "pub",
    ]
)
TRAVEL_CATEGORIES = frozenset(["city", "cities", "town", "towns", "country", "countries"])
PERSON_CATEGORIES = frozenset(["who", "whom", "person", "people", "friend", "friends"])
_NAME_RUN = re.compile(r"\b(?:Dr\.? |Mr\.? |Mrs\.? |Ms\.? )?[A-Z][\w'\u2019-]*(?: [A-Z][\w'\u2019-]*)*")
_MONTHS_AND_DAYS = frozenset(w.capitalize() for w in ASKING_WORDS)
LISTED = 12
"""Events the section cites before it points to exo.events for the rest."""


def aggregate_kind(query):
    """The kind of counting a question asks for (AGGREGATE_KINDS), or None."""
    for kind, pattern in AGGREGATE_KINDS:
        if pattern.search(query or ""):
            return kind
    return None


def measure_of(words, kind):
    """What a total, average or longest is of: minutes, km or amount (MEASURE_WORDS), or None
    (a count). "how many km" is a total of km, "how much did I spend" one of money."""
    for measure, said in MEASURE_WORDS.items():
        if said & set(words):
            return measure
    return "amount" if kind in ("total", "average") and "much" in words else None


def names_in(query):
    """The names a question gives ("Dr Hale", "New York", "Nadia"): runs of capitalised words,
    not its first word when that is a question word, not month or weekday names."""
    found = []
    for m in _NAME_RUN.finditer(query or ""):
        words = [w for w in m.group().split() if w not in _MONTHS_AND_DAYS and w.casefold() not in STOPWORDS]
        if m.start() == 0 and words and words[0].casefold() in ASKING_WORDS | STOPWORDS:
            words = words[1:]
        if words and words != ["I"]:
            found.append(" ".join(words))
    return found


class Reading:
    """How the timeline reads a question: its kind, measure, range, activities, person, place."""

    def __init__(self, query, report):
        self.query = query
        self.kind = aggregate_kind(query)
        words = query_words(query)
        self.measure = measure_of(words, self.kind)
        span = (report.get("temporal") or {}).get("span") or {}
        self.first, self.last = span.get("first"), span.get("last")
        self.names = names_in(query)
        named = {w.casefold() for n in self.names for w in n.split()}
        measure_words = set().union(*MEASURE_WORDS.values())
        self.words = [
            w for w in words
            if w not in STOPWORDS and w not in ASKING_WORDS and w not in measure_words and w not in named
            and not w.isdigit() and len(w) >= 3
        ]  # fmt: skip
        self.person = self.place = None
        self.activities = None
        self.category = None
        self.unknown = None
        self.group = None

    def read_names(self, known):
        """The question's names against the timeline's people and places (known(name) ->
        (events with that person, events at that place)): the first that names either."""
        for name in self.names:
            people, places = known(name)
            if people and not self.person and people >= places:
                self.person = name
            elif places and not self.place:
                self.place = name

    def read_words(self, vocabulary):
        """The question's other words against the timeline's activities (vocabulary(forms) ->
        [activity]). With a person or place named, verbs of meeting add nothing; a "which X"
        whose X is no activity asks for the most of a kind: places, people, or activities. Words
        are looked up with their inflections undone (exo_private.word_forms: "runs", "swimming")."""
        words = self.words
        if self.person or self.place:
            words = [w for w in words if w not in MEETING_WORDS]
        if self.kind == "most":
            categories = set(words) & (PLACE_CATEGORIES | PERSON_CATEGORIES)
            if categories or "who" in query_words(self.query):
                self.group = (
                    "person"
                    if (categories & PERSON_CATEGORIES or "who" in query_words(self.query))
                    else "place"
                )
                if categories & TRAVEL_CATEGORIES:
                    words = ["travel"]
                else:
                    words = [w for w in words if w not in categories]
            else:
                self.group = "activity"
        found = vocabulary(words) if words else []
        if found:
            self.activities = found
        elif words and self.group == "activity":
            self.category = " ".join(words)  # "what exercise": no activity of that name
        elif words and not (self.person or self.place):
            self.unknown = " ".join(words)

    @property
    def order(self):
        if self.kind in ("longest", "shortest"):
            return f"{self.kind}_{self.measure or 'minutes'}"
        return self.kind

    def described(self):
        """The reading in words: "count of swim (from 2025-06-01 to 2025-06-30)"."""
        what = ", ".join(self.activities) if self.activities else "any activity"
        if self.category:
            what = f"activities (no activity is named {self.category!r})"
        parts = [f"{self.kind}{' of ' + self.measure if self.measure else ''} of {what}"]
        if self.person:
            parts.append(f"with {self.person}")
        if self.place:
            parts.append(f"at {self.place}")
        if self.group:
            parts.append(f"by {self.group}")
        parts.append(f"from {self.first} to {self.last}" if self.first else "over the whole timeline")
        return " ".join(parts)


def _minutes_words(minutes):
    hours, rest = divmod(round(minutes), 60)
    return f"{hours} h {rest} min" if hours else f"{rest} min"


def _long_day(day):
    d = datetime.date.fromisoformat(day)
    return f"{d:%A} {d.day} {d:%B %Y}"


_SIGNS = {"GBP": "£", "USD": "$", "EUR": "€"}


def _money(amount, currency):
    sign = _SIGNS.get(currency)
    return f"{sign}{amount:.2f}" if sign else f"{amount:.2f} {currency}".strip()


def answer_line(reading, figures):
    """The computed answer in one line, or None when the figures answer nothing asked."""
    n = figures["events"]
    kind, measure = reading.kind, reading.measure
    if kind == "count" and not measure:
        return f"{n} time{'s' if n != 1 else ''}"
    if n == 0:
        return "no such event in the timeline"
    if kind in ("last", "first"):
        day = figures["last_day"] if kind == "last" else figures["first_day"]
        return f"{day} ({_long_day(day)})"
    if kind == "most":
        pairs = figures["groups"]
        if not pairs:
            return None
        best = f"{pairs[0][0]}, {pairs[0][1]} times"
        rest = "; ".join(f"{k}, {c}" for k, c in pairs[1:3])
        return best + (f"; then {rest}" if rest else "")
    if kind in ("longest", "shortest"):
        top = figures["listed"][0] if figures["listed"] else None
        if top is None or top.get(measure or "minutes") is None:
            return None
        told = f"{top['km']} km" if measure == "km" else _minutes_words(top["minutes"] or 0)
        return f"{top['day']} ({top['activity']}, {told})"
    if measure == "amount":
        amounts = figures["amount"]
        if not amounts:
            return None
        key = "sum" if kind == "total" else "avg"
        said = "; ".join(_money(float(v[key]), c) for c, v in sorted(amounts.items()))
        return (
            f"{said} {'in total' if kind == 'total' else 'on average'} over {n} time{'s' if n != 1 else ''}"
        )
    if measure in ("minutes", "km") or kind in ("total", "average"):
        measure = measure or "minutes"
        held = figures[measure]
        if not held["n"]:
            return None
        value = float(held["sum"] if kind == "total" else held["avg"])
        unit = "minutes" if measure == "minutes" else "km"
        said = f"{round(value)} minutes" if unit == "minutes" else f"{value:.1f} km"
        extra = f" ({_minutes_words(value)})" if unit == "minutes" and value >= 60 else ""
        how = "in total" if kind == "total" else "on average"
        return f"{said} {how}{extra}, over {held['n']} of {n} time{'s' if n != 1 else ''}"
    return None


def timeline_event_line(e):
    measures = [m for m in (
        _minutes_words(e["minutes"]) if e.get("minutes") is not None else None,
        f"{e['km']} km" if e.get("km") is not None else None,
        _money(float(e["amount"]), e.get("currency") or "") if e.get("amount") is not None else None,
    ) if m]  # fmt: skip
    with_whom = f" with {', '.join(e['people'])}" if e.get("people") else ""
    at = f" at {e['place']}" if e.get("place") else ""
    said = " ".join(e["sentence"].split())[:160]
    return f'- {e["day"]} {e["activity"]}{" (" + ", ".join(measures) + ")" if measures else ""}{with_whom}{at}: "{said}" [{e["workspace"]}:{e["path"]}]'


def timeline_text(reading, figures):
    """The packet's Timeline section: the computed answer, how the question was read, the events
    counted (LISTED of them, then how to list the rest)."""
    line = answer_line(reading, figures)
    lines = ["## Timeline"]
    if reading.category:
        common = "; ".join(f"{k}, {n}" for k, n in figures["groups"][:5])
        lines.append(
            f"Answer: none computed: no activity is named {reading.category!r} (the commonest: {common})"
        )
    elif line is None:
        lines.append("Answer: none computed: the timeline holds no event this question can be read against")
    else:
        lines.append(f"Answer: {line}")
    lines.append(f"Read as: {reading.described()}; {figures['events']} event(s) counted")
    listed = figures["listed"][:LISTED]
    lines += [timeline_event_line(e) for e in listed]
    if figures["events"] > len(listed):
        lines.append(f"... and {figures['events'] - len(listed)} more: exo.events({call_arguments(reading)})")
    return "\n".join(lines) + "\n\n"


def call_arguments(reading):
    args = []
    if reading.activities and len(reading.activities) == 1:
        args.append(f"what => '{reading.activities[0]}'")
    if reading.first:
        args += [f"from_day => '{reading.first}'", f"to_day => '{reading.last}'"]
    if reading.person:
        args.append(f"with_person => '{reading.person}'")
    if reading.place:
        args.append(f"at_place => '{reading.place}'")
    return ", ".join(args)


def timeline_section(db, query, report):
    """The Timeline section of a packet for an aggregate question and what it computed, or ("",
    None) for any other question. db: run(name, sql, types, args) -> rows (plpy's)."""
    reading = Reading(query, report)
    if reading.kind is None:
        return "", None
    workspaces = list(report.get("workspaces") or []) or None
    as_of = report.get("as_of")
    as_of_end = f"{as_of} 23:59:59.999999" if as_of else None

    def known(name):
        row = db(
            "timeline_names",
            "select count(*) filter (where exists (select 1 from unnest(e.people) p"
            "                                      where exo_private.names_match(p, $1))) as people,"
            "       count(*) filter (where exo_private.names_match(e.place, $1)) as places "
            "from exo_private.events e where ($2::text[] is null or e.workspace = any ($2))",
            ["text", "text[]"],
            [name, workspaces],
        )[0]
        return row["people"], row["places"]

    def vocabulary(words):
        rows = db(
            "timeline_vocabulary",
            "with f as (select exo_private.word_forms($1) as forms) "
            "select e.activity from exo_private.events e, f "
            "where (e.activity = any (f.forms) or e.forms && f.forms) and ($2::text[] is null or e.workspace = any ($2)) "
            "group by e.activity order by count(*) desc limit 5",
            ["text[]", "text[]"],
            [words, workspaces],
        )
        return [r["activity"] for r in rows]

    reading.read_names(known)
    reading.read_words(vocabulary)
    if reading.unknown and reading.kind in ("total", "average", "longest", "shortest"):
        return "", None  # "how much is my rent?": a question of a value, not of the timeline
    if reading.unknown:
        text = (
            "## Timeline\n"
            f"Answer: none computed: no event in the timeline is of {reading.unknown!r}\n"
            f"Read as: {reading.described()}\n\n"
        )
        return text, {"reading": reading.described(), "answer": None}
    figures = db(
        "timeline_answer",
        "select exo_private.timeline_answer($1, $2, $3, $4::date, $5::date, $6, $7, $8,"
        " exo_private.released_keys($9), $10::timestamptz, $11)::text as a",
        ["text", "text", "text[]", "text", "text", "text", "text", "text[]", "text[]", "text", "int"],
        [
            reading.group,
            reading.order,
            reading.activities,
            reading.first,
            reading.last,
            reading.place,
            reading.person,
            workspaces,
            report.get("bridge") or [],
            as_of_end,
            LISTED,
        ],
    )[0]["a"]
    figures = json.loads(figures)
    answer = None if reading.category else answer_line(reading, figures)
    return timeline_text(reading, figures), {
        "reading": reading.described(),
        "answer": answer,
        "events": figures["events"],
    }
