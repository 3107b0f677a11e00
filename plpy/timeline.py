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

A plan ("we're going to see Dune on Friday") is no report that it happened: the figures count
only what happened, and the section says how many plans of the same reading it left out, with
the first of them marked planned and how to list them (exo.events(..., planned => true)).
"""

import datetime
import json
import re

from currency import CURRENCY_SIGNS
from search import STOPWORDS, query_words


def _words(text):
    return frozenset(text.split())


_WHEN = r"\b(?:when|(?:on )?(?:what|which) (?:date|day))\b"
# How a question asks to count, in the order they are told apart ("when did I last" before
# "how many"; "on average how long" before "how long").
AGGREGATE_KINDS = (
    ("average", re.compile(r"\b(?:on )?average\b|\bmean\b|\btypically\b", re.I)),
    ("longest", re.compile(r"\b(?:longest|furthest|farthest|biggest|largest|most expensive)\b", re.I)),
    ("shortest", re.compile(r"\b(?:shortest|smallest|cheapest|least expensive)\b", re.I)),
    ("last", re.compile(_WHEN + r".*\blast\b|\blast time\b|\bmost recent(?:ly)?\b|\blatest\b", re.I)),
    ("first", re.compile(_WHEN + r".*\bfirst\b|\bfirst time\b|\bearliest\b|\bmy first\b", re.I)),
    ("most", re.compile(r"\b(?:which|what|who|where)\b.*\b(?:most|least)\b|\bmost (?:often|frequently)\b", re.I)),
    ("total", re.compile(
        r"\bin total\b|\btotal\b|\baltogether\b|\badd(?:s|ed)? up\b|\bhow much\b|\bhow far\b"
        r"|\bhow long\b|\bwhat distance\b", re.I)),
    ("count", re.compile(r"\bhow many\b|\bhow often\b|\bnumber of\b|\bhow frequently\b", re.I)),
)  # fmt: skip
# What a total or an average is of: its words.
MEASURE_WORDS = {
    "minutes": _words("long length time hours hour minutes minute duration mins"),
    "km": _words("far further furthest farthest distance km kilometres kilometers miles mile"),
    "amount": _words("spend spent cost costs pay paid money pounds dollars euros price"),
}
# Words of the asking, the counting and the dating: none names what is counted.
ASKING_WORDS = _words(
    """how many much often times time total average mean typically altogether all when last first
    most least longest furthest farthest biggest largest shortest smallest cheapest expensive
    recent recently latest earliest which what who where number frequently did do does go went another
    going get got have had has spend spent usually ever year years month months week weeks day days
    date today yesterday ago between since until this next past per each every the in on at of so
    someone somebody something anyone anybody anything everyone everything second third fourth q1 q2 q3 q4
    far whole add adds added up kind type sort frequent
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday morning evening night weekend quarter"""
)
# Verbs that name no activity beside a word that does ("meet someone for lunch", "go swimming").
LIGHT_WORDS = _words(
    """see saw seen seeing meet met meeting visit visited visiting go went going do did doing have had
    having take took taking get got getting make made making play played playing"""
)
# What a money question calls its purchases: every event that tells an amount.
PURCHASE_WORDS = _words(
    "buy bought buying purchase purchases purchased thing things stuff items shopping spending"
)
# Words of an occasion or of covering a measure, not of what was done ("a yoga session", "a game
# of tennis", "what distance did I cover"): no event's own words need hold them.
OCCASION_WORDS = _words(
    """session sessions game games class classes lesson lessons workout workouts outing outings cover covered
    appointment appointments"""
)
# Verbs of being with someone or somewhere: with a person or place named, they add nothing.
MEETING_WORDS = _words("see saw seen meet met visit visited visiting catch caught")
# What "which X" may ask of besides an activity: a place, a person.
PLACE_CATEGORIES = _words(
    "city cities town towns country countries place places restaurant restaurants cafe pub"
)
TRAVEL_CATEGORIES = _words("city cities town towns country countries")
PERSON_CATEGORIES = _words("who whom person people friend friends")
_NAME_RUN = re.compile(r"\b(?:Dr\.? |Mr\.? |Mrs\.? |Ms\.? )?[A-Z][\w'\u2019-]*(?: [A-Z][\w'\u2019-]*)*")
_MONTHS_AND_DAYS = frozenset(w.capitalize() for w in ASKING_WORDS)
LISTED = 8
"""Events the section cites before it points to exo.events for the rest."""
PLANS_LISTED = 3
"""Plans the section shows, marked planned, of those it says it left out."""
CATEGORY_SIMILARITY = 0.37
"""How near in meaning (MiniLM cosine) an activity's -ing name must be to a kind a question asks
of ("what exercise": swimming 0.57, hiking 0.38; breakfast 0.35): the setting
timeline.category_similarity."""
SYNONYM_SIMILARITY = 0.75
"""How near in meaning (MiniLM cosine) two activities' -ing names must be for a question of one to
count the other: cycling, biking and riding 0.79-0.90; lunch and breakfast 0.72, walking and
hiking 0.65, climbing and bouldering 0.63 stay apart."""
COUNTED_UP_TO = 100000
"""Up to how many events the activities are counted for synonyms; a larger timeline's come from
its statistics (pg_stats' most common values of exo_private.events.activity, in their order)."""
SYNONYM_CANDIDATES = 150
"""The commonest activities a question's activity is compared with for synonyms (their names are
embedded once a session, in one call that must fit the embeddings' timeout)."""
UNSAID_MARGIN = 0.02
"""How much nearer in meaning (MiniLM cosine) an occasion's sentence, its people's names left out,
must be to the kind it is read as than to any other kind the timeline tells that occasion as and
to the occasion's own word: "Saw about my molar; all fine." dentist 0.33, doctor 0.16,
appointment 0.16; "Saw ." 0.21 to each (no kind); "had a look at my rash ..." appointment 0.15,
doctor 0.14 (none)."""
UNSAID_UP_TO = 200
"""At most this many occasions of an unsaid kind are read for one question."""
ANSWER_TYPES = [
    "text",
    "text",
    "text[]",
    "text",
    "text",
    "text",
    "text",
    "text[]",
    "text[]",
    "text",
    "int",
    "text[]",
    "boolean",
    "bigint[]",
]
"""The argument types of exo_private.timeline_answer as timeline_section calls it."""


def aggregate_kind(query):
    """The kind of counting a question asks for (AGGREGATE_KINDS), or None."""
    for kind, pattern in AGGREGATE_KINDS:
        if pattern.search(query or ""):
            return kind
    return None


def measure_of(words, kind):
    """What a total, average, longest or shortest is of: minutes, km or amount (MEASURE_WORDS),
    or None: "how much did I spend" is one of money, "when did I run the furthest" of km; a count,
    a first or last, a most has none ("the first time" is no duration)."""
    if kind not in ("total", "average", "longest", "shortest"):
        return None
    for measure, said in MEASURE_WORDS.items():
        if said & set(words):
            return measure
    return "amount" if "much" in words else None


# A question of which, what, who or where over days it names: the events of those days answer it.
_LISTING = re.compile(r"\b(?:which|what|who|where)\b", re.I)
# "how many km", "how many hours": a count of a unit is a total of it; so is "how many days was my
# trip" or "did it last" (a length in days, not how many days held one: "how many days did I swim").
_COUNT_OF_UNIT = re.compile(
    r"\bhow many (?:km|kilometres|kilometers|miles|hours|minutes|pounds|dollars|euros)\b"
    r"|\bhow many days (?:was|were)\b|\bhow many days did\b.*\blast\W*$",
    re.I,
)


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
        if self.kind == "count" and _COUNT_OF_UNIT.search(query or ""):
            self.kind = "total"
        # "so far this year" is a time, not a distance
        words = query_words(re.sub(r"\bso far\b", " ", query or "", flags=re.I))
        self.measure = measure_of(words, self.kind)
        span = (report.get("temporal") or {}).get("span") or {}
        self.first, self.last = span.get("first"), span.get("last")
        if self.kind is None and self.first and _LISTING.search(query or ""):
            self.kind = "list"  # "Which city did I visit in February?": the events of those days
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
        self.about = None
        self.money = False
        self.kind_of = None
        self.unsaid = None
        self.group = None
        self.known = None

    def read_names(self, known):
        """The question's names against the timeline's people and places (known(name) ->
        (events with that person, events at that place)): the first that names either."""
        self.known = known
        for name in self.names:
            people, places = known(name)
            if people and not self.person and people >= places:
                self.person = name
            elif places and not self.place:
                self.place = name

    def read_words(self, vocabulary, held, members=None):
        """The question's other words against the timeline: vocabulary(words) -> {word:
        [activities]} (looked up with their inflections undone, exo_private.word_forms: "runs",
        "swimming"); a verb of meeting or a light verb adds nothing beside a word that names an
        activity ("meet someone for lunch"), nor beside a person or place. Words left over that
        some of those events' sentences hold narrow them (held(words, activities, money) ->
        words: "walk to work", "spend on the car"); a money total counts every purchase."""
        words = self.words
        if self.person or self.place:
            words = [w for w in words if w not in MEETING_WORDS]
        matched = vocabulary(words) if words else {}
        if self.kind == "list" and set(query_words(self.query)) & (MEASURE_WORDS["amount"] | PURCHASE_WORDS):
            # "What did I pay for on 4 March?", "what did I buy then": the events that tell an amount
            self.money = True
            self.words = words = [w for w in words if w not in PURCHASE_WORDS]
            matched = {w: a for w, a in matched.items() if w not in PURCHASE_WORDS}
        if self.kind in ("most", "list"):
            self.read_most(words, matched, members)
            return
        money = self.money = self.measure == "amount" or bool(set(words) & PURCHASE_WORDS)
        if money and self.kind in ("total", "average", "longest", "shortest"):
            self.measure = "amount"  # "what did my purchases add up to"
        if money:
            words = [w for w in words if w not in PURCHASE_WORDS]
            named = {}
        else:
            # nor does a word of an occasion ("dentist appointments", "yoga sessions")
            named = (
                {w: a for w, a in matched.items() if w not in LIGHT_WORDS | OCCASION_WORDS}
                or {w: a for w, a in matched.items() if w not in LIGHT_WORDS}
                or matched
            )
        self.activities = sorted({a for found in named.values() for a in found}) or None
        # words of a kind of person or place ("friends", "restaurants"), of an occasion ("yoga
        # sessions", "a game of tennis", "distance covered") or a light verb ("meet someone for
        # lunch": the lunch may be told without a meeting) narrow nothing
        generic = PERSON_CATEGORIES | PLACE_CATEGORIES | OCCASION_WORDS | LIGHT_WORDS
        rest = [w for w in words if (w not in matched or money) and w not in generic]
        self.about = held(rest, self.activities, money) if rest else None
        self.about = self.about or None
        told = self.activities or self.about or self.person or self.place
        if words and not told and not (money and not rest):
            self.unknown = " ".join(words)  # "how much is my rent": no purchase tells of rent
        elif rest and not self.about and (self.activities or money):
            # a word no event of the activity holds: "horse riding" is no bike ride
            self.unknown = " ".join(rest + [w for w in words if w in matched and not money])

    def read_most(self, words, matched, members):
        """What a "which most" question groups by: people ("who", "which friend"), places
        ("where", "which city": trips), or, for "which X" whose X is no activity or what the
        timeline's places are called, the places of the activity it names ("Which pool did I swim
        at most?"); else activities. A "what
        X" whose X names no activity asks of a kind: the activities near it in meaning
        (members(X) -> activities, or None when the embeddings cannot tell), else a kind the
        timeline cannot read."""
        asked = query_words(self.query)
        at = next((n for n, w in enumerate(asked) if w in ("which", "what")), len(asked))
        # what it asks of: the last word of the first run of its words after "which" ("most frequent
        # kind of exercise": exercise; "which climbing wall": wall)
        start = next((n for n in range(at + 1, len(asked)) if asked[n] in self.words), None)
        end = start
        while end is not None and end + 1 < len(asked) and asked[end + 1] in self.words:
            end += 1
        kind = asked[end] if end is not None else None
        found = sorted({a for w, acts in matched.items() if w != kind and w not in LIGHT_WORDS for a in acts})
        if "who" in asked or kind in PERSON_CATEGORIES:
            self.group = "person"
        elif "where" in asked or kind in PLACE_CATEGORIES:
            self.group = "place"
            if kind in TRAVEL_CATEGORIES and not found:
                found = ["travel"]
        elif kind is not None and (kind not in matched or self.names_places(kind)):
            if not found and kind not in matched:
                self.group = "activity"
                self.activities = members(kind) if members else None
                if self.activities:
                    self.kind_of = kind  # "what exercise": swim, run, yoga ...
                else:
                    self.category = kind
                return
            self.group = "place"
            found = found or matched[kind]
        else:
            self.group = "activity"
            found = sorted({a for acts in matched.values() for a in acts})
        self.activities = found or None

    def names_places(self, word):
        """Whether the timeline's places are called by a word ("pool": Millbrook pool), though an
        event may be named by it too ("Pool before work")."""
        if self.known is None:
            return False
        people, places = self.known(word)
        return bool(places) and not people

    @property
    def order(self):
        if self.kind in ("longest", "shortest"):
            return f"{self.kind}_{self.measure or 'minutes'}"
        return self.kind

    def described(self):
        """The reading in words: "count of swim (from 2025-06-01 to 2025-06-30)"."""
        what = ", ".join(self.activities) if self.activities else "any activity"
        if self.kind_of:
            what += f" (the activities near {self.kind_of!r} in meaning)"
        if self.unsaid:
            occasion, n = self.unsaid
            what += f" and {n} {occasion}{'s' if n != 1 else ''} of no kind said, read as one"
        if self.category:
            what = f"activities (no activity is named {self.category!r})"
        parts = [f"{self.kind}{' of ' + self.measure if self.measure else ''} of {what}"]
        if self.money and self.measure != "amount":
            parts.append("that tell an amount")
        if self.about:
            parts.append("told with " + " or ".join(repr(w) for w in self.about))
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


def _money(amount, currency):
    sign = CURRENCY_SIGNS.get(currency)
    return f"{sign}{amount:.2f}" if sign else f"{amount:.2f} {currency}".strip()


def by_days(reading, figures):
    """Whether a question of how long is answered by the days of the events' intervals (told to
    the day: "from 3 to 7 May"), where none of the events counted tells its minutes."""
    span = figures.get("span_days") or {}
    return (
        reading.kind in ("total", "average", "longest", "shortest")
        and (reading.measure or "minutes") == "minutes"
        and not figures["minutes"]["n"]
        and bool(span.get("n"))
    )


def _days_words(days):
    return f"{days:g} day{'s' if days != 1 else ''}"


def answer_line(reading, figures):
    """The computed answer in one line, or None when the figures answer nothing asked."""
    n = figures["events"]
    kind, measure = reading.kind, reading.measure
    if n and by_days(reading, figures):
        if kind in ("longest", "shortest") or n == 1:
            top = figures["listed"][0]
            days = top.get("span_days") or 1
            return f"{_days_words(days)} ({top['dates']}, {top['activity']})"
        span = figures["span_days"]
        value = float(span["sum"] if kind == "total" else span["avg"])
        how = "in total" if kind == "total" else "on average"
        return f"{_days_words(round(value, 1))} {how}, over {span['n']} of {n} time{'s' if n != 1 else ''}"
    if kind == "count" and not measure:
        return f"{n} time{'s' if n != 1 else ''}"
    if n == 0:
        return "no such event in the timeline"
    if kind in ("last", "first"):
        day = figures["last_day"] if kind == "last" else figures["first_day"]
        return f"{day} ({_long_day(day)})"
    if kind == "list":
        shown = "; ".join(f"{k} ({c})" for k, c in figures["groups"][:5])
        return f"{n} event{'s' if n != 1 else ''}" + (f": {shown}" if shown else "")
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
    said = " ".join(e["sentence"].split())[:120]
    return f'- {e.get("dates") or e["day"]} {e["activity"]}{" (" + ", ".join(measures) + ")" if measures else ""}{with_whom}{at}: "{said}" [{e["workspace"]}:{e["path"]}]'


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
    days = (
        "; measured in the days of each interval told (no minutes told)" if by_days(reading, figures) else ""
    )
    lines.append(f"Read as: {reading.described()}; {figures['events']} event(s) counted{days}")
    listed = figures["listed"][:LISTED]
    lines += [timeline_event_line(e) for e in listed]
    if figures["events"] > len(listed):
        lines.append(f"... and {figures['events'] - len(listed)} more: exo.events({call_arguments(reading)})")
    planned = figures.get("planned") or 0
    if planned:
        lines.append(
            f"Not counted: {planned} plan{'s' if planned != 1 else ''} of the same reading, told as to come,"
            f" not as done: exo.events({', '.join([*filter(None, [call_arguments(reading)]), 'planned => true'])})"
        )
        lines += [
            f'- {p["day"]} {p["activity"]} (planned): "{" ".join(p["sentence"].split())[:120]}"'
            for p in figures["plans"][:PLANS_LISTED]
        ]
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


def _without(sentence, names):
    """A sentence with the names in it left out."""
    for name in names:
        sentence = sentence.replace(name, "")
    return " ".join(sentence.split())


def timeline_section(db, query, report, meaning=None, near=CATEGORY_SIMILARITY):
    """The Timeline section of a packet for an aggregate question and what it computed, or ("",
    None) for any other question. db: run(name, sql, types, args) -> rows (plpy's); meaning:
    (text, texts) -> cosine similarities by the embeddings (meaning.embedding_meaning), or
    None; near: how similar an activity's name must be to a kind asked of ("what exercise")."""
    reading = Reading(query, report)
    if reading.kind is None:
        return "", None
    workspaces = list(report.get("workspaces") or []) or None
    as_of = report.get("as_of")
    # A search's as_of is now unless a caller asks of the past: only then is each event's writing
    # checked against it (exo_private.written_by, a lookup an event).
    past = as_of and as_of < datetime.date.today().isoformat()
    as_of_end = f"{as_of} 23:59:59.999999" if past else None

    bridge = report.get("bridge") or []
    # Every lookup reads only what this reader may see (exo_private.timeline_events): how the
    # question is read never depends on withheld events.
    shown = (
        "exo_private.timeline_events({}, {}, {}, {}, {}, $2, exo_private.released_keys($3),"
        " $4::timestamptz, {})"
    )

    def known(name):
        row = db(
            "timeline_names",
            "select exists (select 1 from "
            + shown.format("null", "null", "null", "null", "$1", "null")
            + ") as people,"
            " exists (select 1 from "
            + shown.format("null", "null", "null", "$1", "null", "null")
            + ") as places",
            ["text", "text[]", "text[]", "text"],
            [name, workspaces, bridge, as_of_end],
        )[0]
        return row["people"], row["places"]

    def vocabulary(words):
        # a word an activity is named by counts that activity; only a word none is named by finds
        # the activities it was told with ("lunch" is no "Day trip to Galway: a family lunch")
        rows = db(
            "timeline_vocabulary",
            "select w.word, array(select distinct e.activity from "
            + shown.format("f.forms", "null", "null", "null", "null", "null")
            + " e order by 1 limit 10) as activities,"
            " array(select a from unnest(f.forms) a where exists (select 1 from "
            + shown.format("array[a]", "null", "null", "null", "null", "null")
            + " e where e.activity = a) order by 1) as named"
            " from unnest($1::text[]) w (word), exo_private.word_forms(array[w.word]) f (forms)",
            ["text[]", "text[]", "text[]", "text"],
            [words, workspaces, bridge, as_of_end],
        )
        found = {r["word"]: list(r["named"] or r["activities"]) for r in rows if r["activities"]}
        found = {word: acts + synonyms(acts) for word, acts in found.items()}
        # a word no event was told with counts the activities whose names mean the same: "cycling"
        # before the first event named cycle (bike rides and rides)
        found |= {w: acts for w in words if w not in found and (acts := synonyms([], w))}
        return {word: acts + [a for a in told_by(acts) if a not in acts] for word, acts in found.items()}

    def told_by(activities):
        # the activities named by what these are counted in or where they happen, or counted in
        # it mostly: "Did 40 lengths at the lido" (length), "Pool before work" (pool) and
        # "Bouldering session: 12 routes" are swims and climbs where swims count lengths at
        # Millbrook pool and climbs count routes
        mine = shown.format("$5", "null", "null", "null", "null", "null")
        rows = db(
            "timeline_told_by",
            "with mine as (select e.count_unit, e.place from " + mine + " e),"
            " units as (select count_unit as u from mine where count_unit is not null group by 1 having count(*) > 1),"
            " words as (select u as w from units union select unnest(exo_private.word_forms(array["
            "regexp_replace(place, '^.*\\s', '')])) from mine where place is not null),"
            " named as (select w from words union select distinct x.activity from exo_private.events x"
            " where x.count_unit in (select u from units))"
            " select e.activity from "
            + shown.format("array(select w from named)", "null", "null", "null", "null", "null")
            + " e where e.activity in (select w from named) and e.activity <> all ($5) group by e.activity"
            " having bool_or(e.activity in (select w from words))"
            " or 3 * count(*) filter (where e.count_unit in (select u from units)) >= 2 * count(*)"
            " order by 1",
            ["text[]", "text[]", "text[]", "text", "text[]"],
            [None, workspaces, bridge, as_of_end, activities],
        )
        return [r["activity"] for r in rows]

    def held(words, activities, money):
        rows = db(
            "timeline_held",
            "select w from unnest($1::text[]) w where exists (select 1 from "
            + shown.format("$5", "null", "null", "null", "null", "array[w]")
            + " e where not $6 or e.amount is not null)",
            ["text[]", "text[]", "text[]", "text", "text[]", "boolean"],
            [words, workspaces, bridge, as_of_end, activities, money],
        )
        return [r["w"] for r in rows]

    def labelled(first, last, most):
        # the `most` commonest activities from first to last, each with its -ing name ("swimming")
        return db(
            "timeline_activities",
            "select e.activity, count(*) as n, coalesce(min(g.f), e.activity) as label from "
            + shown.format("null", "$5::date", "$6::date", "null", "null", "null")
            + " e left join lateral (select f from unnest(e.forms) f where f like '%ing' order by f limit 1) g"
            " on true group by e.activity order by n desc, e.activity limit $7",
            ["text", "text[]", "text[]", "text", "text", "text", "int"],
            [None, workspaces, bridge, as_of_end, first, last, most],
        )

    def members(kind):
        if meaning is None:
            return None
        rows = labelled(reading.first, reading.last, 40)
        sims = meaning(kind, [r["label"] for r in rows]) if rows else None
        return [r["activity"] for r, sim in zip(rows, sims, strict=True) if sim >= near] if sims else None

    def common():
        # the activities a synonym is looked for among, each with an -ing name: in a large timeline
        # the commonest by the table's statistics (pg_stats, kept by ANALYZE: no scan of a million
        # events, 1.5 s), in a small one by counting
        rows = db(
            "timeline_common_activities",
            "select c.activity, coalesce((select f from unnest((select x.forms from exo_private.events x"
            " where x.activity = c.activity limit 1)) f where f like '%ing' order by f limit 1), c.activity)"
            " as label from pg_stats s, unnest(s.most_common_vals::text::text[]) with ordinality c (activity, n)"
            " where s.schemaname = 'exo_private' and s.tablename = 'events' and s.attname = 'activity'"
            " and (select pc.reltuples from pg_class pc where pc.oid = 'exo_private.events'::regclass) >= $1"
            " and c.n <= $2",
            ["real", "int"],
            [COUNTED_UP_TO, SYNONYM_CANDIDATES],
        )
        return rows or labelled(None, None, SYNONYM_CANDIDATES)

    def synonyms(activities, word=None):
        # the activities whose -ing names mean the same as these's or as a word ("cycling",
        # "biking", "riding"), of those this reader may see
        if meaning is None:
            return []
        rows = common()
        labels = {r["activity"]: r["label"] for r in rows}
        found = []
        for name in [labels.get(a, a) for a in activities] + ([word] if word else []):
            sims = meaning(name, [r["label"] for r in rows]) if rows else None
            found += [
                r["activity"] for r, sim in zip(rows, sims or [], strict=False) if sim >= SYNONYM_SIMILARITY
            ]
        found = [a for a in dict.fromkeys(found) if a not in activities]
        if not found:
            return []
        shown_rows = db(
            "timeline_shown_activities",
            "select distinct e.activity from "
            + shown.format("$5", "null", "null", "null", "null", "null")
            + " e where e.activity = any ($5) order by 1",
            ["text[]", "text[]", "text[]", "text", "text[]"],
            [None, workspaces, bridge, as_of_end, found],
        )
        return [r["activity"] for r in shown_rows]

    def unsaid(activities):
        # occasions told without their kind ("Saw Dr Okafor about my molar; all fine.": an
        # appointment, "Dentist appointment at 9:15" one of the dentist) read as one of these
        # activities: the kind their person's other occasions are, else the kind nearest their
        # sentence in meaning, of the kinds this timeline tells that occasion as
        occasions = db(
            "timeline_occasions",
            "select f.form as occasion from exo_private.event_forms f where f.activity = any ($5)"
            " and f.form = any ($6) and f.form <> all ($5) and exists (select 1 from "
            + shown.format("array[f.form]", "null", "null", "null", "null", "null")
            + " e where e.activity = any ($5) and f.form = any (e.forms)) order by 1",
            ["text", "text[]", "text[]", "text", "text[]", "text[]"],
            [None, workspaces, bridge, as_of_end, activities, sorted(OCCASION_WORDS)],
        )
        found = []
        for occasion in [r["occasion"] for r in occasions]:
            told = db(
                "timeline_unsaid",
                "select e.id, e.activity, e.sentence, e.people from "
                + shown.format("array[$5]", "$6::date", "$7::date", "null", "null", "null")
                + " e where e.activity = $5 order by e.day, e.id limit $8",
                ["text", "text[]", "text[]", "text", "text", "text", "text", "int"],
                [None, workspaces, bridge, as_of_end, occasion, reading.first, reading.last, UNSAID_UP_TO],
            )
            if not told:
                continue
            kinds = db(
                "timeline_kinds",
                "select e.activity, p.person, count(*) as n from "
                + shown.format("array[$5]", "null", "null", "null", "null", "null")
                + " e left join lateral unnest(e.people) p (person) on true"
                " where e.activity <> $5 group by 1, 2 order by 3 desc, 1, 2",
                ["text", "text[]", "text[]", "text", "text"],
                [None, workspaces, bridge, as_of_end, occasion],
            )
            by_person = {}
            for k in kinds:
                if k["person"] is not None:
                    by_person.setdefault(k["person"], k["activity"])  # the commonest first
            names = sorted({k["activity"] for k in kinds})
            # what each was about, without whom ("Saw Dr Okafor about my molar": "Dr" is near a
            # doctor whatever was seen to); the occasion's own word stands for no kind
            sentences = [_without(t["sentence"], t["people"] or []) for t in told]
            candidates = [*names, occasion]
            near = {}
            # one call embeds the kinds and the sentences; each kind's similarities are then cached
            if meaning is not None and names and meaning(occasion, names + sentences) is not None:
                near = {name: meaning(name, sentences) for name in candidates}
                near = near if all(v is not None for v in near.values()) else {}
            read = []
            for n, t in enumerate(told):
                kind = next((by_person[p] for p in t["people"] or [] if p in by_person), None)
                if kind is None and near:
                    best, *rest = sorted(candidates, key=lambda name: -near[name][n])
                    if best != occasion and near[best][n] - near[rest[0]][n] >= UNSAID_MARGIN:
                        kind = best
                if kind in activities:
                    read.append(t["id"])
            if read:
                reading.unsaid = (occasion, len(read))
                found += read
        return found or None

    reading.read_names(known)
    reading.read_words(vocabulary, held, members)
    if reading.unknown and reading.kind in ("total", "average", "longest", "shortest"):
        return "", None  # "how much is my rent?": a question of a value, not of the timeline
    if reading.kind == "list" and (reading.unknown or reading.category):
        return "", None  # "what did the plumber say in March?": the evidence answers it
    if reading.unknown:
        text = (
            "## Timeline\n"
            f"Answer: none computed: no event in the timeline is of {reading.unknown!r}\n"
            f"Read as: {reading.described()}\n\n"
        )
        return text, {"reading": reading.described(), "answer": None}
    also = unsaid(reading.activities) if reading.activities and reading.kind not in ("most", "list") else None
    figures = db(
        "timeline_answer",
        "select exo_private.timeline_answer($1, $2, $3, $4::date, $5::date, $6, $7, $8,"
        " exo_private.released_keys($9), $10::timestamptz, $11, $12, $13, $14)::text as a",
        ANSWER_TYPES,
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
            reading.about,
            reading.money,
            also,
        ],
    )[0]["a"]
    figures = json.loads(figures)
    if reading.kind == "list" and not figures["events"]:
        return "", None  # nothing of those days to list: the evidence answers alone
    answer = None if reading.category else answer_line(reading, figures)
    return timeline_text(reading, figures), {
        "reading": reading.described(),
        "answer": answer,
        "events": figures["events"],
    }
