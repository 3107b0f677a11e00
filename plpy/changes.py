"""What changed, said: passages of one packet that state different values for the same thing.

A question about what holds now ("Who is my manager?", "When is the offsite?": a verb in the
present tense, none in the past, no date named) is often answered by passages of different
times: "My manager is Priya Nair" in March, "I report to Tomasz Wolski now" in October. Read
alone, the packet would present both as true. Here, for each passage the packet cites, its
answering line (the message or sentence its excerpt centres on) gives:

  values   what the line states: numbers ("£1,210", "250" of "250 ms", "9:30"), and
           names (capitalised words not opening a sentence, none the question writes; a
           weekday or a month is a time)
  about    its content words beyond stop words and values, by their stems
  near     what it tells beside each word: the values of the clauses that hold it
  time     the message's time (a chat window), else the document's date

A question in a line tells nothing but what precedes its last comma ("Living in Leeds, which
broadband is best?"). Two passages are about the same thing when their lines tell values beside
a word both hold, in its clause ("I pay £1,150 in rent every month" and "New lease signed:
£1,210 a month" share "month"), or share a value ("...instead of the Volkswagen Golf"); they
differ when, for a kind of value both tell (money, a time of day, a count, a name), they tell
different ones; and a group of them is about the question when one tells a value beside a word
of it ("rent"). Such passages are ordered newest first in the places they held, and each says so
after its citation: "(later, 2024-05-02: updates [3])" or "(earlier, 2023-03-14; superseded by
[1]?)"; a later line with a word that says it changed ("now", "moved", "instead", "no longer")
in a clause that tells a value updates, else differs from.
Two sources (conversations, documents) that differ on the same day are a disagreement: each
says "(disagrees with [n], the same day)", and neither is put first. Syntax and the packet's own
text only: no list of subjects, no model.
"""

import itertools
import re

from currency import CURRENCY_SIGNS
from months import MONTHS
from search import (
    _AUXILIARIES,
    _CHAT_LABEL,
    _DETERMINERS,
    _WORD,
    ANSWER_COVERAGE,
    MEASURES,
    STOPWORDS,
    answering_line,
    chat_answering,
    coverage,
    query_words,
    stem,
    written_names,
)

# A question about the present: a present-tense auxiliary or copula ("s": "What's"), or a word
# of the present; one in the past tense is about a time before.
PRESENT = frozenset(["is", "are", "am", "s", "do", "does", "has", "have", "current", "currently", "now", "still", "latest", "nowadays"])  # fmt: skip
PAST = frozenset(["did", "was", "were", "had", "used"])
# Words that say a statement changes an earlier one.
CHANGE_WORDS = frozenset(
    [
        "now",
        "moved",
        "move",
        "moving",
        "changed",
        "change",
        "instead",
        "longer",
        "anymore",
        "actually",
        "pushed",
        "postponed",
        "rescheduled",
        "reduced",
        "raised",
        "increased",
        "lowered",
        "cut",
        "correction",
        "corrected",
        "switched",
        "updated",
        "update",
        "new",
        "replaced",
        "nowadays",
        "currently",
    ]
)
# "these days" says the same as "now" in two words.
_NOW_PHRASE = re.compile(r"\bthese days\b", re.IGNORECASE)
# A number, not the digits of a word or an identifier ("Q3", "P2", "ORTAND-88").
_NUMBER = re.compile(
    rf"(?:[{''.join(CURRENCY_SIGNS.values())}]|\b(?:{'|'.join(CURRENCY_SIGNS)})\s?)?"
    r"(?<![A-Za-z\d.])(?<![A-Za-z]-)\d+(?:[.,:]\d+)*"
)
# A unit written right after a number ("10 km", "50GB", "250 ms"): its kind of quantity.
_UNIT = re.compile(r"\s?([A-Za-z]{1,5})\b")
WEEKDAY_NAMES = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())  # noqa: SIM905
# A title's abbreviation before a name ("Dr. Okafor", "St. Ives"): a closed class. Any other short
# word with a dot ends a sentence ("Hmm. Only 10 minutes left" names nothing).
_TITLES = r"(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|Sr|Jr|Rev|Fr|Lt|Sgt|Capt|Col|Gen|Gov|Sen|Rep|Hon|Mt|Ft)\."
# A run of capitalised words, after a title ("Dr. Okafor").
_NAME = re.compile(rf"\b(?:{_TITLES}\s+)?[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)*")
# Where a sentence opens: the text's or a line's start, after its mark of a list item, heading,
# quote or table cell ("- **Nov:**", "## Policies", "| Rent"), or a sentence's end.
_OPENS = re.compile(r"(?:^|\n|[.!?:;]\s+)\s*(?:(?:[-*+>#|]+|\d+[.)])[ \t*_]*)?$")


# Question words after which a word in -s is a verb in the present: "Who leads the team?"
_WH = frozenset(["who", "what", "which"])


def asks_now(query, report):
    """Whether the question asks what holds now, or at the time it names: a present-tense verb
    (PRESENT, or a word in -s after "who", "what" or "which": "Who leads the payments team?") and
    no past one ("When is the Q3 report due?", "What time is my meeting on Friday?"; order_changes
    compares only what was said by the end of a time named)."""
    ordered = query_words(query)
    words = set(ordered)
    verb = len(ordered) > 1 and ordered[0] in _WH and ordered[1].endswith("s") and len(ordered[1]) > 3
    return bool(words & PRESENT or verb) and not words & PAST


# What a question asks for, by its question words, the first that matches: a quantity ("how
# many", "how long"), a time ("when", "what day") or a name ("who", "where", "which", "what is
# the name of ..."); and the kinds of value (statement()) that answer each.
_ASKED_KINDS = (
    ("quantity", re.compile(r"\bhow (?:many|much|long|far|old|often|big)\b")),
    ("time", re.compile(r"\b(?:when|what (?:time|day|date|year)|which (?:day|date|year))\b")),
    ("name", re.compile(r"\b(?:who|whom|whose|where|which|name|called)\b")),
)
_KINDS_ANSWERING = {
    "quantity": lambda kind: kind.startswith("number") or kind == "money",
    "time": lambda kind: kind in ("date", "time", "weekday", "month"),
    "name": lambda kind: kind.startswith("name"),
}


def asked_kind(query):
    """What kind of value the question asks for ("quantity", "time", "name"), or None."""
    words = " ".join(query_words(query))
    return next((kind for kind, asking in _ASKED_KINDS if asking.search(words)), None)


def states_asked(query, texts):
    """For each text (a chat message, its labels stripped), whether it states a value of the kind
    the question asks for, none the question writes ("Officially a Porto resident now" for "Where
    does Priya live now?"); None when the question asks for no kind."""
    kind = asked_kind(query)
    if kind is None:
        return None
    asked = set(query_words(query))
    return [any(_KINDS_ANSWERING[kind](k) for k, _ in statement(t, asked)[0]) for t in texts]


def time_named(query, report):
    """The last day of the time a question asks about (report.temporal's span), where one of its
    signals is said as when ("on Friday", "in 2023", "this week for the launch") rather than as a
    word of a thing's name ("the Q3 report", "my March rent": a content word follows it); else
    None."""
    temporal = report.get("temporal") or {}
    last = (temporal.get("span") or {}).get("last")
    for signal in temporal.get("signals") or [] if last else []:
        at = query.find(signal["text"])
        follows = re.match(r"\s+([A-Za-z][\w'-]*)", query[at + len(signal["text"]) :]) if at >= 0 else None
        if at >= 0 and not (follows and follows.group(1).casefold() not in STOPWORDS):
            return last
    return None


def told(line):
    """What a line tells: its sentences, a question left out but for what precedes its last comma
    ("Living in Leeds, which broadband is best?" tells "Living in Leeds")."""
    kept = []
    for part in re.split(r"(?<=[.!?])\s+", line.strip()):
        if part.endswith("?"):
            part = re.split(r"[,;]\s+", part)[0] if re.search(r"[,;]\s+", part) else ""
        kept.append(part)
    return " ".join(p for p in kept if p)


def _month_after(after):
    """The month a day's number is followed by ("2 December"), or None."""
    m = _WORD.match(after.lstrip())
    return m.group().casefold() if m and m.group().casefold() in MONTHS else None


def value_kind(number, after=""):
    """What a number is, so that only numbers of one kind are compared: an amount of money, a
    time of day, a quantity of the unit written right `after` it ("number km"), or a count
    ("£1,150" and the "1" of "the 1st" tell different things)."""
    if number[0] in CURRENCY_SIGNS.values() or number[:3] in CURRENCY_SIGNS:
        return "money"
    if ":" in number:
        return "time"
    if _month_after(after):
        return "date"
    unit = _UNIT.match(after)
    return (
        "number " + unit.group(1).casefold()
        if unit and unit.group(1).casefold() not in STOPWORDS
        else "number"
    )


def name_kind(name):
    """What a name is: a day of the week ("Thursdays"), a month ("Nov", "December": a time, no
    place nor person), a person by a title ("Dr. Okafor": "name dr."), or a name."""
    folded = name.casefold()
    if folded.rstrip("s") in WEEKDAY_NAMES:
        return "weekday"
    if folded.rstrip(".") in MONTHS:
        return "month"
    title = re.match(rf"({_TITLES})\s", name)
    return "name " + title.group(1).casefold() if title else "name"


# Kinds specific enough that two lines telling different values of one are about the same thing
# though they share no word ("Gym day is Tuesdays" / "I train on Thursdays"); money, times and
# bare counts and names are too common for that.
SPECIFIC = re.compile(r"number \w+|weekday|name \S+")


def differ(a, b):
    """Whether two statements' values ({(kind, value)}) tell different things: for some kind both
    tell, they tell different values of it (names as same_names() compares them); a bare count
    only where it is all both tell of one kind ("2025-07: rent €1,210" and "rent up to €1,210 in
    2025-26" tell one rent)."""
    kinds = {k for k, _ in a} & {k for k, _ in b}
    if kinds - {"number"}:
        kinds.discard("number")
    for kind in kinds:
        x, y = {v for k, v in a if k == kind}, {v for k, v in b if k == kind}
        if not (same_names(x, y) if kind.startswith("name") else x == y):
            return True
    return False


def same_names(x, y):
    """Whether two sets of names name the same: each name's words all in one of the other's, or
    holding all of one's ("Okafor" of "Tomas Okafor is incident manager", whose first word opens
    the sentence, is "Tomas Okafor")."""
    x, y = [{frozenset(_WORD.findall(n.casefold())) for n in names} for names in (x, y)]
    return all(any(n <= m or m <= n for m in y) for n in x) and all(
        any(m <= n or n <= m for n in x) for m in y
    )


# The verbs after which a sentence's one capitalised opening word is its subject, a name: "Sam
# is now the lead", "Priya has the keys" (not "Update: order ...", "Leadership on the team ...").
_SUBJECT_VERBS = frozenset(["is", "was", "has", "had", "will", "would", "can"])


def without_opening(m, text):
    """A capitalised run (a _NAME match in text) without the word that opens a sentence, which is
    capitalised whatever it is ("The Renault Zoe arrived" names "Renault Zoe", "Sold" nothing),
    unless it is the one word of the run and the subject of a verb of _SUBJECT_VERBS that is no
    stop word ("Sam is now the lead"; a word the question writes is no value: statement())."""
    if not _OPENS.search(text[: m.start()]):
        return m.group()
    first, _, rest = m.group().partition(" ")
    verb = re.match(r"\s+(\w+)", text[m.end() :])
    if not rest and first.casefold() not in STOPWORDS and verb and verb.group(1) in _SUBJECT_VERBS:
        return first
    return rest.strip()


def number_value(m, text):
    """(kind, value) of a number matched in text: a day with its month ("2 december"), an amount
    of money with its sign ("EUR 2,400.00" is "€2,400")."""
    after = text[m.end() :]
    kind = value_kind(m.group(), after)
    if kind == "date":
        return kind, f"{m.group()} {_month_after(after)}"
    if kind == "money":  # "EUR 2,400.00" tells what "€2,400" does
        sign = CURRENCY_SIGNS.get(m.group()[:3], m.group()[0])
        amount = float(re.sub(r"[^\d.]", "", m.group().replace(",", "")).strip(".") or 0)
        return kind, f"{sign}{amount:,.2f}".removesuffix(".00")
    return kind, m.group()


# Where a line's clauses part (besides its lines: a list's items are statements of their own): a
# sentence's end (not a title's dot: "Dr. Okafor"), a semicolon, brackets, or a comma before a
# conjunction that opens another clause ("the on-call rota is quiet, and Iris and I have been ..."),
# unless a pronoun that points back is its subject ("The Renault Zoe arrived, so that's my car now").
_CLAUSE_END = (
    r"(?<![A-Z]\.)(?<![A-Z][a-z]\.)(?<![A-Z][a-z]{2}\.)(?<=[.!?])\s+|[;()]"
    r"|,\s+(?i:%s)\b(?!\s+(?i:that|this|it|these|those)\b)"
)
_CLAUSES = re.compile(_CLAUSE_END % "and|but|so|while|whereas")
# The clause of a word that says a change reaches over a comma before "so", whose clause tells
# what the change led to ("Class times changed, so I train on Thursdays").
_CHANGE_CLAUSES = re.compile(_CLAUSE_END % "and|but|while|whereas")


def clauses(line, ends=_CLAUSES):
    """The clauses of a line, of what each of its lines tells (told()); a series is its items."""
    return [item for text in line.split("\n") for c in ends.split(told(text)) for item in series(c)]


# A series: at least this many items parted by commas, each of at most _ITEM_WORDS words.
_SERIES_ITEMS = 3
_ITEM_WORDS = 4


def series(clause):
    """A clause's items where it is a series of short phrases ("The rent, the car, Pixel's
    insurance, the HOUSE pot."): each tells of itself alone, not of the others' names; else the
    clause."""
    items = re.split(r",\s+(?:and\s+|or\s+)?", clause.strip())
    if len(items) >= _SERIES_ITEMS and all(len(i.split()) <= _ITEM_WORDS for i in items):
        return items
    return [clause]


def near_values(line, asked):
    """{stem: the values told in the clauses that hold the word}: what a line says of each of its
    words, so that two lines sharing a word are compared by what each says of it."""
    near = {}
    for clause in clauses(line):
        values, about = statement(clause, asked)
        for w in about:
            near.setdefault(w, set()).update(values)
    return near


def statement(line, asked):
    """(values, about) of an answering line: the values it tells (told()), and the stems of its
    content words and of what its quantities measure (MEASURES)."""
    text = told(line)
    # a number the question writes ("order 4512") is what it asks about, no value
    numbers = {number_value(m, text) for m in _NUMBER.finditer(text) if m.group().casefold() not in asked}
    # parts of a value are no names: a unit ("GB" of "20 GB"), a day's month ("June" of "2 June"),
    # a currency's code
    codes = {code.casefold() for code in CURRENCY_SIGNS}
    units = {k[7:] for k, _ in numbers if k.startswith("number ")}
    units |= {v.split()[-1] for k, v in numbers if k == "date"}
    names = {name for m in _NAME.finditer(text) if (name := without_opening(m, text))}
    # a name the question writes ("Gull Lane" of "my offer on the Gull Lane house") is what it
    # asks about, no value
    names = {
        n
        for n in names
        if not {w.casefold() for w in _WORD.findall(n)} <= asked
        and n not in ("I", "I'm", "I've", "I'll")
        and n.casefold() not in units | codes
    }
    values = numbers | {(name_kind(n), n) for n in names}
    inside = {w.casefold() for _, v in values for w in _WORD.findall(v)} | codes
    # "these days" says when, of nothing ("We're in Leeds these days" tells no day)
    about = {w.casefold() for w in _WORD.findall(_NOW_PHRASE.sub(" ", line))} - STOPWORDS - inside
    about |= {m for k, _ in values if k.startswith("number ") for m in MEASURES.get(k[7:], ())}
    return values, {stem(w) for w in about if len(w) >= 3 and not w.isdigit()}


def says_changed(text, asked):
    """Whether a line says a value changed: a word that says so ("now", "moved", "instead", "these
    days") in a clause that tells a value ("We moved to York last month"; not "if moving house,
    the address on the policy must be updated first", which tells none)."""
    for clause in clauses(text, _CHANGE_CLAUSES):
        change = {w.casefold() for w in _WORD.findall(clause)} & CHANGE_WORDS or _NOW_PHRASE.search(clause)
        if change and statement(clause, asked)[0]:
            return True
    return False


def named_changed(text, asked):
    """The stems of what a line's change words say changed: the content word right after one, in
    a clause that tells a value ("New address is in York": address; "moved teams": team; "We
    moved to York": nothing named)."""
    named = set()
    for clause in clauses(text, _CHANGE_CLAUSES):
        if statement(clause, asked)[0]:
            words = _WORD.findall(clause)
            named |= {
                stem(after.casefold())
                for word, after in itertools.pairwise(words)
                if word.casefold() in CHANGE_WORDS
                and after[0].islower()
                and after.casefold() not in STOPWORDS
            }
    return named


# Words after which the next content word is a verb: a subject pronoun, an auxiliary (also the
# ends of contracted ones: "I'm", "we're", "don't"), "to"; after a determiner it is a noun.
_VERB_CUES = (
    frozenset(["i", "you", "we", "they", "he", "she", "to", "m", "re", "ve", "ll", "t"]) | _AUXILIARIES
)
_USE_LOOK = 3


def word_role(words, at):
    """How words[at] (query_words) is used, by the nearest closed-class word of the _USE_LOOK
    before it: "noun" after a determiner ("the Atlas closing report", "a living document"),
    "verb" after a subject, an auxiliary or "to" ("Who do I report to?", "I live in York"),
    else None (a line's first word, "Lives in the hallway cupboard")."""
    for word in reversed(words[max(0, at - _USE_LOOK) : at]):
        if word in _DETERMINERS:
            return "noun"
        if word in _VERB_CUES:
            return "verb"
    return None


def word_roles(words):
    """{stem: role} of the words of a question whose word_role() is known."""
    return {stem(w): u for at, w in enumerate(words) if w not in STOPWORDS and (u := word_role(words, at))}


def used_otherwise(text, asked_roles):
    """The stems of the question's words (`asked_roles`: word_roles()) that a line holds only as
    another part of speech: "the closing report" tells nothing of "Who do I report to?", "a
    living document" nothing of "Where do I live?"."""
    words = query_words(text)
    seen = {}
    for at, w in enumerate(words):
        s = stem(w)
        if s in asked_roles:
            seen.setdefault(s, set()).add(word_role(words, at))
    return {s for s, found in seen.items() if asked_roles[s] not in found and None not in found}


# A transcript line's speaker after the time into the recording ("[00:02:54] Iris Calder: "): who
# speaks and when in the meeting, no value the line tells.
_SPEAKER = re.compile(r"^\[\d{1,2}:\d{2}(?::\d{2})?\]\s*[^:\n]{1,80}:\s")
# The first person singular, in a chat line of any case ("i moved to york" is a sender's own;
# search.first_person reads a question, where "we" takes the owner in and a lower-case "i" is a
# list item)
_SELF = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.IGNORECASE)


def stated(c, words, asked, asked_roles=None):
    """What the candidate's answering line states (line_stated)."""
    return line_stated(answering_line(c, words), c, asked, asked_roles)


def line_stated(line, c, asked, asked_roles=None):
    """What a line of candidate c states: {values, about, near, time, day, source, update, named,
    speaker: the sender of a chat line in the first person singular, else None};
    a word of the question the line holds only as another part of speech (`asked_roles`: the
    question's word_roles()) is not what it is about."""
    label = _CHAT_LABEL.match(line)
    time = label.group(1) if label and len(label.group(1)) == 16 else c.get("written_at")
    text = line[label.end() :] if label else _SPEAKER.sub("", line)
    values, about = statement(text, asked)
    other = used_otherwise(text, asked_roles or {})
    near = {w: v for w, v in near_values(text, asked).items() if w not in other}
    chat = c.get("chat")
    source = ("chat", chat["conversation_id"]) if chat else ("document", c["document_id"])
    # who a line in the first person singular tells of: its sender ("I live in Leeds")
    speaker = sender_of(line) if chat and _SELF.search(text) else None
    return {"values": values, "about": about - other, "near": near, "time": time,
            "day": (time or "")[:10], "source": source, "update": says_changed(text, asked),
            "named": named_changed(text, asked), "text": text, "speaker": speaker,
            "title": c.get("document_title") or ""}  # fmt: skip


def told_of(f, words, kind):
    """Whether statement f tells a value of `kind` beside one of `words` (in its clause)."""
    return any(k == kind for w in words for k, _ in f["near"].get(w, ()))


def same_thing(a, b, asked):
    """Two statements of the same thing that differ: they share a content word beside which both
    tell values that differ (in its clause), or a value but a bare count ("from 21 km to 42 km"
    after "from 10 km to 21 km"), or a SPECIFIC kind of value ("Tuesdays" and "Thursdays", "21
    km" and "42 km") that each tells beside a word of the question (`asked`: the stems of its
    content words) or tells alone, or the one value of its kind that a newer line saying it
    changes tells; and they differ(). Never two chat lines in the first person by two senders: each
    tells of its own. A group of them is about the question when one of its lines tells a value
    beside a word of it (order_changes)."""
    if not (a["values"] and b["values"] and a["time"] and b["time"]):
        return False
    if of_two_people(a, b):
        return False
    kinds = {k for k, _ in a["values"]} & {k for k, _ in b["values"]}
    # by a specific kind only where a line tells it of the question or tells nothing else ("Dinner
    # is on Saturday at 7" is no other day for "When does Karl's flight land?")
    alike = any(
        all(told_of(f, asked, kind) or {k for k, _ in f["values"]} == {kind} for f in (a, b))
        for kind in kinds
        if SPECIFIC.fullmatch(kind)
    )
    # a newer line that says it changes something, holds none of the question's words and tells
    # one value (no old one to share: "We moved to York last month.") is about what a line that
    # holds a word of the question tells of its kind ("Living in Leeds, ..."), unless it names
    # another thing as changed ("New address is in York" after "I report to Tomasz Wolski now")
    updates = any(
        f["update"] and f["time"] > g["time"] and len(f["values"]) == 1 and (f["about"] | g["about"]) & asked
        and next(iter(f["values"]))[0] in kinds and not f["named"] - asked - g["about"]
        for f, g in ((a, b), (b, a))
    )  # fmt: skip
    # a word both lines hold ties them where each tells a value beside it, in its clause: "on-call
    # allowance €2,400" and "the on-call rota is quiet, and Iris ..." tell nothing of one thing
    said_of = any(differ(a["near"].get(w, ()), b["near"].get(w, ())) for w in a["about"] & b["about"])
    # or a value both tell, but a bare count ("2025" of "Wednesday 12 March 2025" and "2025-07:
    # rent €1,210 a month"), where the newer line says it changes ("Switched to a Renault Zoe
    # instead of the Volkswagen Golf"): lines that name one person beside others ("Attendees: ...,
    # Tomas Okafor (engineering manager)" and "Manager: Tomas Okafor") tell no other value of it
    newer = a if str(a["time"]) > str(b["time"]) else b
    both = newer["update"] and {v for v in a["values"] & b["values"] if v[0] != "number"}
    shared = said_of or both or alike or updates
    # where both tell values beside a word of the question, those are the values compared
    of_question = [w for w in asked if a["near"].get(w) and b["near"].get(w)]
    if of_question:
        return bool(shared) and any(differ(a["near"][w], b["near"][w]) for w in of_question)
    return bool(shared) and differ(a["values"], b["values"])


def window_update(c, words, every, asked, asked_roles, f):
    """(index, earlier, later) where another message of chat window c than its answering one
    (whose statement is f) tells a different value of the same thing (same_thing), a value beside
    a word of the question in one of the two ("Correction: the design team meeting moved to 3pm on
    Friday." a minute after "My meeting with the design team is at 2pm on Friday."), or, telling
    no value to compare, is a later message of its sender that says it changes something and
    holds ANSWER_COVERAGE of the question's `words` ("Update: order ORTAND-88 has shipped." after
    "Order ORTAND-88 is currently pending."), or an earlier one that holds them where the
    answering message is the one that says so: that message's index and the two statements in
    the order they were said (the latest such); else None."""
    if not c.get("chat") or not f["time"]:
        return None
    messages, at = chat_answering(c, words)
    for i in range(len(messages) - 1, -1, -1):
        if i == at:
            continue
        g = line_stated(messages[i], c, every, asked_roles)
        if g["time"] and any(h["near"].get(w) for h in (f, g) for w in asked) and same_thing(g, f, asked):
            return (i, f, g) if i > at else (i, g, f)
    sender = sender_of(messages[at])
    for i in range(len(messages) - 1, at, -1):
        if sender_of(messages[i]) == sender:
            g = line_stated(messages[i], c, every, asked_roles)
            if says_change_of(g, words):
                return (i, f, g) if g["time"] else None
    # the answering message is the one that says it changes what is asked: the earlier one is
    # its sender's last before it that says something and holds the question's words ("I'm
    # vegetarian" a minute before "Update: I started eating fish again", in a conversation
    # titled "dietary restriction")
    if says_change_of(f, words):
        for i in range(at - 1, -1, -1):
            if sender_of(messages[i]) == sender:
                g = line_stated(messages[i], c, every, asked_roles)
                if g["time"] and g["about"] and holds_asked(g, words):
                    return (i, g, f)
    return None


def holds_asked(f, words):
    """Whether statement f holds ANSWER_COVERAGE of the question's content `words`, read with the
    title of its document, which BM25 reads as its words (search.searched_text): "Update: I
    started eating fish again" in a conversation titled "dietary restriction" holds "dietary
    restrictions"."""
    return coverage(f["title"] + "\n" + f["text"], words) >= ANSWER_COVERAGE


def says_change_of(f, words):
    """Whether statement f says it changes something (a word of CHANGE_WORDS, "these days") and
    holds the question's `words` (holds_asked): "Update: order ORTAND-88 has shipped." of "What is
    the status of order ORTAND-88?"."""
    text = f["text"]
    return bool(
        ({w.casefold() for w in _WORD.findall(text)} & CHANGE_WORDS or _NOW_PHRASE.search(text))
        and holds_asked(f, words)
    )


def restates(a, b, words):
    """Two statements of one conversation about what is asked that tell no values to compare,
    the newer saying it changes something (says_change_of) and the older holding ANSWER_COVERAGE
    of the question's `words`: "Update: order ORTAND-88 has shipped." a month after "Order
    ORTAND-88 is currently pending."."""
    if a["source"] != b["source"] or a["source"][0] != "chat" or not (a["time"] and b["time"]):
        return False
    if a["time"] == b["time"] or a["values"] or b["values"]:
        return False
    newer, older = (a, b) if a["time"] > b["time"] else (b, a)
    return says_change_of(newer, words) and holds_asked(older, words)


def sender_of(message):
    """Who sent a chat message, by its label ("2026-09-07 20:57 Ana Lind: ..."), or None."""
    label = _CHAT_LABEL.match(message)
    return label.group().removeprefix(label.group(1)).strip().removesuffix(":") if label else None


def of_two_people(a, b):
    """Whether statements a and b are chat lines in the first person by two senders: each tells
    of its own ("I live in Leeds", the owner's; "I moved from Leeds to York", a friend's)."""
    return bool(a.get("speaker") and b.get("speaker") and a["speaker"] != b["speaker"])


def replaces(f, g):
    """Whether line f, newer than g and saying it changes, names g's value beside a new one of
    its kind: "21 km instead of 10 km", "from Leeds to York" after a line telling "10 km", "Leeds";
    never a line of another person's (of_two_people)."""
    if not (f["update"] and f["time"] and g["time"] and f["time"] > g["time"]) or of_two_people(f, g):
        return False
    kinds = {k for k, _ in f["values"] & g["values"]}
    return any(k in kinds for k, _ in f["values"] - g["values"])


def newer_from_pool(chosen, facts, pool, words, every, asked, asked_roles):
    """A statement the search ranked below the packet's cut (`pool`, in rank order) that is newer
    than one the packet cites about the question and differs from it ("I switched to a 50 GB
    plan." after "My phone plan has 20 GB of data"), or, where no cited line states a value with a
    word of the question, that replaces a cited one's value by name (replaces: "Going for 21 km
    instead of 10 km." after "I'm training for 10 km" for "What is my running goal?"; not a
    newer phone plan after "I get 20 GB a month" beside "My rent is £1,150" for "What do I pay in
    rent each month?"), takes the place of the last cited passage that states nothing asked nor
    another value of it (a chat about data usage on Android) and is not a line whose value it
    changes, or, with no such place, joins the packet (one at most: it grows by one passage);
    (chosen, facts) with them."""
    chosen, facts = list(chosen), list(facts)
    cited = {c["chunk_id"] for c in chosen}
    about = [i for i, f in enumerate(facts) if f["values"] and f["about"] & asked]
    by_name = not about  # no cited line states a value of what is asked
    # a cited line that tells another value of what one of those tells is one of its statements,
    # though it writes no word of the question ("I'm now training for 42 km." beside "Goal for the
    # spring: run 10 km"): no place to give up to an older one
    spare = [
        i
        for i, f in enumerate(facts)
        if i not in about and not any(same_thing(f, facts[j], asked) for j in about)
    ]
    grown = False
    for c in pool:
        if c["chunk_id"] in cited or c.get("other_conversation"):
            continue
        f = stated(c, words, every, asked_roles)
        changed = [
            i
            for i, g in enumerate(facts)
            if g["time"]
            and (
                (g["about"] & asked and f["time"] > g["time"] and same_thing(f, g, asked))
                or (by_name and replaces(f, g))
            )
        ]
        if not changed:
            continue
        free = [i for i in spare if i not in changed]  # never the line whose value it changes
        if free:
            place = free[-1]
            spare.remove(place)
            chosen[place], facts[place] = c, f
        elif not grown:
            chosen.append(c)
            facts.append(f)
            grown = True
        else:
            break
        cited.add(c["chunk_id"])
    return chosen, facts


def order_changes(query, chosen, report, pool=()):
    """`chosen` (the packet's evidence, in its order) with passages that state different values
    of one thing ordered newest first in the places they held, each marked (c["change"]:
    {kind: later|earlier|disagrees, day, others: chunk ids, update}; a chat window that changes
    a value itself shows both lines, `within` the earlier's time: window_updates); report.changes
    lists the groups. A newer statement from the rest of the ranked `pool` joins them
    (newer_from_pool); where the question names a time (time_named), what was said after it is
    not compared, nor is a window of another conversation than the person's the question names
    (other_conversation). Unchanged unless the question asks what holds now (asks_now)."""
    if not asks_now(query, report) or not chosen:
        return chosen
    every = query_words(query)
    words = [w for w in every if w not in STOPWORDS]
    asked_roles = word_roles(every)
    # what is asked of them, not whom: a name the question writes ("Where does Pixel sleep?") is
    # its subject, beside which a line tells anything of it
    names = written_names(query)
    asked = {stem(w) for w in words if len(w) >= 3 and w not in names}
    facts = [stated(c, words, set(every), asked_roles) for c in chosen]
    chosen, facts, within = window_updates(chosen, facts, words, set(every), asked, asked_roles)
    chosen, facts = newer_from_pool(chosen, facts, pool, words, set(every), asked, asked_roles)
    # a time the question names ("on Friday", "in 2023"): what was said after it ends tells
    # nothing of then
    until = time_named(query, report)
    said_by = [not until or str(f["day"]) <= until for f in facts]
    groups = []
    for i in range(len(chosen)):
        # a window of a conversation without the person asked about tells what holds for
        # someone else (search.other_conversations): another value of it is no change
        if not said_by[i] or chosen[i].get("other_conversation"):
            continue
        for g in groups:
            if all(same_thing(facts[i], facts[j], asked) or restates(facts[i], facts[j], words) for j in g):
                g.append(i)
                break
        else:
            groups.append([i])
    out = list(chosen)
    changes = []
    # a group of statements is about the question when one of them tells a value beside a word of
    # it, in its clause ("My rent is now £1,275, so the budget needs redoing" tells no budget), or,
    # where no cited line does, when the packet cites a line and a newer one that replaces its
    # value by name ("Going for 21 km instead of 10 km." after "I'm training for 10 km"): the
    # search chose both for the question (not rent lines beside two cabin deposits)
    of_asked = [any(f["near"].get(w) for w in asked) for f in facts]
    about = [
        g
        for g in groups
        if len(g) > 1
        and (
            any(of_asked[i] for i in g)
            or (not any(of_asked) and any(replaces(facts[i], facts[j]) for i in g for j in g))
            or all(restates(facts[i], facts[j], words) for i in g for j in g if i != j)
        )
    ]
    for g in about:
        days = {facts[i]["day"] for i in g}
        sources = {facts[i]["source"] for i in g}
        newest = sorted(g, key=lambda i: facts[i]["time"], reverse=True)
        ids = [chosen[i]["chunk_id"] for i in newest]
        if len(days) == 1 and len(sources) > 1 and not facts[newest[0]]["update"]:
            kind = "disagreement"
            for i in g:
                out[i] = dict(chosen[i], change={"kind": "disagrees", "day": facts[i]["day"],
                                                 "others": [x for x in ids if x != chosen[i]["chunk_id"]]})  # fmt: skip
        else:
            kind = "update"
            for place, i in zip(sorted(g), newest, strict=True):
                later = i == newest[0]
                others = [x for x in ids if x != chosen[i]["chunk_id"]] if later else ids[:1]
                update = facts[i]["update"] or says_change_of(facts[i], words)
                out[place] = dict(chosen[i], change={"kind": "later" if later else "earlier", "others": others,
                                                     "day": facts[i]["day"], "update": update})  # fmt: skip
        changes.append({"kind": kind, "chunks": ids})
    # a window that changes a value itself and is in no group says so of its own lines
    for i, c in enumerate(out):
        if c["chunk_id"] in within and not c.get("change"):
            earlier, later = within[c["chunk_id"]]
            out[i] = dict(
                c, change={"kind": "later", "others": [], "day": later, "update": True, "within": earlier}
            )
            changes.append({"kind": "update", "chunks": [c["chunk_id"]], "within": True})
    report["changes"] = changes
    return out


def window_updates(chosen, facts, words, every, asked, asked_roles):
    """(chosen, facts, within): each chat window of `chosen` (facts: their statements) that
    changes a value itself (window_update) shows both lines (c["also_at"]: the other's index) and
    is compared with the others by its newer statement; within maps its chunk id to the two
    lines' times, earlier and later."""
    chosen, facts, within = list(chosen), list(facts), {}
    for i, c in enumerate(chosen):
        found = window_update(c, words, every, asked, asked_roles, facts[i])
        if found:
            other, earlier, later = found
            within[c["chunk_id"]] = (earlier["time"], later["time"])
            chosen[i], facts[i] = dict(c, also_at=other), later
    return chosen, facts, within
