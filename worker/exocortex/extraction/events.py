"""Dated happenings of the owner's life, by syntax: the rows of the timeline (exo_private.events).

"Went swimming: 30 lengths at the lido in 1h15." / "Had lunch with Nadia at the Blue Door." /
"Took the train to Leeds for a conference." / "Morning run: 7.1 km around Hollins Park." /
"Spent £12.50 on a teapot." Each clause the owner tells of themselves (subject "I" or "we", a
name and "I", or none: a diary's "Ran 5 km") becomes one event, read from spaCy's parse:

  what   the activity, one normalised name so that counting counts the same thing: the verb's
         lemma ("swam", "swimming" -> swim, by spaCy's own verb tables), or, after a light verb
         (go, do, have, take, play, see, meet ...), what it takes: a gerund ("went swimming"), a
         "for" object ("went for a run"), an object ("had lunch", "saw the dentist"), a "to"
         object that is no proper name ("went to the gym"); a clause with no verb names it by its
         head noun ("Morning run: ..."), or, where that noun is a generic one (session,
         appointment, class ...), by the noun before it ("Dentist appointment at 9:15").
  forms  the words that named it in the text ("swam", "swimming"): the vocabulary a question's
         words are matched against.
  how    durations ("40 minutes", "1h15", "an hour and a half" -> minutes), distances (km, miles
  much   -> km), money (£12.50, "12 pounds" -> amount and currency), and a count of something
         ("30 lengths", "12 routes").
         Each clause keeps the measures, people and place of its own words ("Hit some balls,
         tennis with Owen, an hour": the hour and Owen are the tennis's).
  who    the people named (spaCy's PERSON, a title and surname, a name beside "I").
  where  a place named by spaCy (GPE, LOC, FAC) or a proper noun after at, in, to.
  when   the day of its note or message, unless the sentence moves it: "yesterday", "last
         night", "on Monday", "last Tuesday" (the day before, the weekday before).

A sentence that asks or denies ("Did I swim?", "I didn't run") or only may or should ("I might
swim", "I should swim") tells no event. One that plans tells a plan, kept apart (planned) only
where a caller asks for plans (text_events' plans): its verb is of a future ("we'll swim", "we're
going to see Dune", "gonna watch"), a present progressive put on a day ahead ("we're seeing Iris
on Friday"), or it is a fragment or proposal put on a day ahead ("Lunch with Iris tomorrow",
"dinner at Iris's next Saturday?"); its day is the one ahead ("tomorrow", "on/next/this Friday",
"in 3 days"), else its note's or message's. A plan is no report that it happened: the timeline
never counts one as done. Nothing is kept from a clause whose subject is someone else ("Maya
ran a marathon"): the timeline is the owner's.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta

from exocortex.extraction import ner
from exocortex.ingest.extract import mail_words
from exocortex.plpy.currency import CURRENCY_SIGNS, CURRENCY_WORDS

EXTRACTOR = "syntax/7"
"""The name each event keeps of what made it."""

# Verbs of going out whose "for" names what for ("went for a run", "got out for a swim", "met
# Ines for dinner"; not "took the train to Leeds for a conference").
GOING_OUT = frozenset({"go", "get", "head", "pop", "meet"})
# Verbs that say little of what was done: the activity is what they take.
LIGHT_VERBS = frozenset(
    [
        "go",
        "do",
        "have",
        "take",
        "get",
        "make",
        "play",
        "see",
        "meet",
        "visit",
        "attend",
        "head",
        "spend",
        "enjoy",
        "start",
        "finish",
        "try",
        "book",
    ]
)
# Nouns that name a kind of occasion, not the activity: the noun before them does.
GENERIC_NOUNS = frozenset(
    [
        "session",
        "class",
        "lesson",
        "appointment",
        "visit",
        "trip",
        "outing",
        "practice",
        "workout",
        "game",
        "match",
        "meeting",
        "day",
        "time",
    ]
)
# Titles of a profession before a name ("Dr Okafor", "Doctor Hale", "Nurse Adeyemi"): a closed
# class of English, like its modals; the names after them are never listed. Seeing such a
# person, or one of them seeing to what is the owner's, is an appointment with them, named by
# the title where it is a word of a role ("Doctor Hale": doctor), else an appointment whose kind
# the sentence does not say ("Saw Dr Okafor about my molar").
PROFESSIONAL_TITLES = frozenset({"dr", "doctor", "prof", "professor", "nurse"})
# Verbs of going to see someone, whose object is whom an appointment is with.
SEEING_VERBS = frozenset({"see", "visit"})
# Verbs of thinking, feeling and being (English's stative verbs): "I thought", "I loved it",
# "I guessed" tell a state of mind, not something that happened.
STATIVE_VERBS = frozenset(
    """think know believe guess suppose feel like love hate want need hope wish mean agree seem
    understand remember forget prefer depend sound look appear bet care mind matter doubt fear
    worry wonder imagine realise realize notice expect own belong contain consist deserve""".split()  # noqa: SIM905
)
# Prepositions that put a fragment in time, place or company ("Lunch with Ines", "Yoga at home").
SITUATING_PREPOSITIONS = frozenset("with at in to for before after on around along near".split())  # noqa: SIM905
# English verbs whose past is spelt as their base form: a note's "Read 45 pages" is a past.
INVARIANT_PASTS = frozenset("read put cut hit set let shut cost quit spread hurt split burst cast".split())  # noqa: SIM905
# Units of measure: a fragment headed by one ("16 minutes!") names an amount, not a happening.
UNIT_NOUNS = frozenset(
    [
        "minute",
        "hour",
        "second",
        "day",
        "week",
        "month",
        "year",
        "min",
        "mins",
        "hr",
        "hrs",
        "km",
        "mile",
        "metre",
        "meter",
        "kilometre",
        "pound",
        "dollar",
        "euro",
    ]
)
# Nouns of time and mood that head a diary's fragments without telling a happening.
NOT_HAPPENINGS = frozenset(
    """day morning afternoon evening night week weekend today tonight yesterday rain weather sun
    mood time lot bit thing everything nothing something""".split()  # noqa: SIM905
)
OWNER_SUBJECTS = frozenset({"i", "we"})
MODALS = frozenset({"will", "would", "shall", "should", "could", "can", "might", "may", "must", "'ll", "'d"})
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_WORD_NUMBERS = {
    **{w: n for n, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"])},
    "a": 1, "an": 1, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "couple": 2,
}  # fmt: skip
_NUMBER = r"(\d+(?:[.,]\d+)?|" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")"
_HOURS = r"(?:hours?|hrs?|h)(?![a-z])"
_DURATION = re.compile(
    rf"\bhalf an? hour\b"
    rf"|\b{_NUMBER}\s*{_HOURS}\s*(?:and a half\b|(\d+)(?:\s*(?:minutes?|mins?|m)\b)?)?"
    rf"|\b{_NUMBER}\s*(?:minutes?|mins?)\b",
    re.I,
)
_DISTANCE = re.compile(rf"\b{_NUMBER}\s*(km|kilometres?|kilometers?|miles?|mi)\b", re.I)
# A currency by its sign, its code or a word that names it (plpy/currency.py).
_CURRENCY_CODES = {sign: code for code, sign in CURRENCY_SIGNS.items()}
_CURRENCY_NAMES = CURRENCY_WORDS | {code.casefold(): code for code in CURRENCY_SIGNS}
_MONEY = re.compile(
    rf"([{''.join(map(re.escape, CURRENCY_SIGNS.values()))}])\s?(\d[\d,]*(?:\.\d{{1,2}})?)"
    rf"|\b(\d[\d,]*(?:\.\d{{1,2}})?)\s?({'|'.join(sorted(_CURRENCY_NAMES, key=len, reverse=True))})\b",
    re.I,
)
# A stop after a measure's unit, then a capitalised word ("Swam 30 lengths in 55 min. Dinner with
# Emeka"): spaCy's parser reads it as an abbreviation's and runs the two sentences into one; a
# newline after it (of the same length, so offsets stay the text's) ends the sentence there.
_UNIT_STOP = re.compile(rf"(\b{_NUMBER}\s*(?i:{'|'.join(UNIT_NOUNS)})s?\.) (?=[A-Z])")
_RELATIVE_DAY = re.compile(
    r"\b(yesterday|last night)\b|\b(?:on|last)\s+(" + "|".join(WEEKDAYS) + r")\b", re.I
)
# The days a sentence puts ahead of its writing, to the day: English's words of the days to come
# (a closed class, as the weekdays are).
_AHEAD_DAY = re.compile(
    r"\b(the day after tomorrow)\b|\b(tomorrow)\b"
    r"|\b(on|next|this|coming)\s+(" + "|".join(WEEKDAYS) + r")\b"
    r"|\bin\s+(" + _NUMBER[1:-1] + r")\s+(days?|weeks?)\b",
    re.I,
)
# Auxiliaries of a future ("will", "shall", their contraction; "wo" of "won't" is negated anyway).
FUTURE_AUXILIARIES = frozenset({"will", "shall", "'ll", "ll"})


@dataclass
class Event:
    activity: str
    forms: list[str]
    sentence: str
    char_start: int
    char_end: int
    day: date | None = None
    day_source: str = "written"
    minutes: float | None = None
    km: float | None = None
    amount: float | None = None
    currency: str | None = None
    count: float | None = None
    count_unit: str | None = None
    place: str | None = None
    people: list[str] = field(default_factory=list)
    planned: bool = False
    last_day: date | None = None
    day_precision: str = "day"

    def to_json(self) -> dict:
        data = asdict(self)
        data["day"] = self.day.isoformat() if self.day else None
        data["last_day"] = self.last_day.isoformat() if self.last_day else None
        return data


@functools.cache
def _verb_tables():
    """spaCy's own verb lemma tables: exceptions (swam -> swim), suffix rules and known lemmas."""
    lookups = ner.pipeline().get_pipe("lemmatizer").lookups
    return (
        lookups.get_table("lemma_exc")["verb"],
        lookups.get_table("lemma_rules")["verb"],
        frozenset(lookups.get_table("lemma_index")["verb"]),
    )


def verb_lemma(word: str) -> str | None:
    """The verb a word is a form of ("swam", "swimming" -> "swim"), or None when it is none."""
    word = word.casefold()
    exceptions, rules, known = _verb_tables()
    if word in exceptions:
        return exceptions[word][0]
    if word in known:
        return word
    for old, new in rules:
        if word.endswith(old) and (candidate := word[: len(word) - len(old)] + new) in known:
            return candidate
    return None


def is_past_form(word: str) -> bool:
    """Whether a word can be a verb's past form: an irregular one of spaCy's tables ("went",
    "swam", "had") or a known verb's "-ed" ("walked"); never a name that only looks like a
    present form ("Ines" is no "ine")."""
    word = word.casefold()
    exceptions, _rules, _known = _verb_tables()
    return word in exceptions or (word.endswith("ed") and verb_lemma(word) is not None)


def gerund(verb: str) -> str:
    """A verb's -ing form by English spelling ("swim" -> swimming, "hike" -> hiking, "ski" ->
    skiing): the name a question's category is compared with ("exercise" is near "swimming", far
    from "swim")."""
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if len(verb) <= 4 and re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ing"  # one syllable ending consonant-vowel-consonant
    return verb + "ing"


def activity_name(token) -> str:
    """A token's activity name: the verb of a verb or a gerund ("swimming" -> swim), for a
    professional title an appointment ("Dr": appointment, "Doctor": doctor), else the noun's
    lemma, lower-cased."""
    text = token.text.casefold()
    if _is_title(token):
        return text if token.is_alpha and text in _common_nouns() else "appointment"
    if token.pos_ in ("VERB", "AUX") or (text.endswith("ing") and token.pos_ in ("NOUN", "PROPN")):
        return verb_lemma(text) or token.lemma_.casefold()
    return token.lemma_.casefold()


def number(text: str) -> float:
    text = text.casefold().replace(",", "")
    return float(_WORD_NUMBERS[text]) if text in _WORD_NUMBERS else float(text)


def minutes_in(text: str) -> float | None:
    """The first duration the text gives, in minutes."""
    m = _DURATION.search(text)
    if not m:
        return None
    said = m.group(0).casefold()
    if said.startswith("half"):
        return 30.0
    if m.group(1) is not None:
        hours = number(m.group(1)) * 60
        if m.group(2):
            hours += float(m.group(2))
        elif said.endswith("and a half"):
            hours += 30
        return hours
    return number(m.group(3))


def km_in(text: str) -> float | None:
    m = _DISTANCE.search(text)
    if not m:
        return None
    value = number(m.group(1))
    return round(value * 1.609344, 2) if m.group(2).casefold().startswith("mi") else value


def money_in(text: str) -> tuple[float | None, str | None]:
    m = _MONEY.search(text)
    if not m:
        return None, None
    if m.group(1):
        return float(m.group(2).replace(",", "")), _CURRENCY_CODES[m.group(1)]
    return float(m.group(3).replace(",", "")), _CURRENCY_NAMES[m.group(4).casefold()]


def count_in(clause_tokens, taken: str) -> tuple[float | None, str | None]:
    """A count of something ("30 lengths", "12 routes"): a number before a plural noun that is no
    unit already read (taken: the text of durations, distances and money)."""
    for t in clause_tokens:
        if t.dep_ == "nummod" and t.head.tag_ == "NNS" and t.head.text not in taken and t.like_num:
            try:
                return number(t.text), t.head.lemma_.casefold()
            except (KeyError, ValueError):
                continue
    return None, None


_ON_DATE = re.compile(r"\bon\s+(?:the\s+)?([^,.;:!?()]*(?:,\s*\d{4}\b)?)", re.I)


@functools.cache
def _temporal():
    """The temporal parser of the query path (plpy/temporal.py), as the database runs it."""
    from exocortex.ops.plpy_modules import shared

    return shared("temporal")


def said_day(sentence: str, base: date) -> date | None:
    """The day a sentence names with "on" and a date in figures ("on 3 March", "on the 2nd of
    March", "on 2019-03-02"), read by the temporal parser; where the year is not written, the
    nearer to base of the one before it and the one after ("on 3 March" said on 5 March is two
    days before, "on 12 March" a week ahead); else None."""
    # what follows "on", up to a stop or a comma (not one before a year): "Swam on 9 May, 40
    # minutes" is a date and a duration; "booked for 12 March" names no day of its own happening
    for on in _ON_DATE.finditer(sentence):
        signals = _temporal().detect(on.group(1), [], base)["signals"]
        signal = next((x for x in signals if x["start"] == 0), None)
        if signal is None or signal["kind"] != "date" or not any(c.isdigit() for c in signal["text"]):
            continue  # a weekday or "yesterday" is _RELATIVE_DAY's
        return _nearer_year(signal, base)
    return None


def _nearer_year(signal: dict, base: date) -> date:
    """A date signal's day (the temporal parser's: on or before base where no year is written);
    where the year is not written, the nearer to base of that day and the one a year after."""
    day = date.fromisoformat(signal["date"])
    if str(day.year) in signal["text"]:
        return day
    for year in (base.year, base.year + 1):
        try:
            after = day.replace(year=year)
        except ValueError:  # 29 February
            continue
        if after > base:
            return after if after - base < base - day else day
    return day


def moved_day(sentence: str, base: date | None) -> tuple[date | None, str]:
    """The day a sentence moves its event to from base ("yesterday", "last night", "on Monday",
    "last Tuesday": the day or weekday before base; "on 3 March": that day, said_day), else
    base."""
    if base is None:
        return None, "written"
    m = _RELATIVE_DAY.search(sentence)
    if not m:
        said = said_day(sentence, base)
        return (said, "relative") if said is not None and said <= base else (base, "written")
    if m.group(1):
        return base - timedelta(days=1), "relative"
    back = (base.weekday() - WEEKDAYS.index(m.group(2).casefold())) % 7 or 7
    return base - timedelta(days=back), "relative"


# -- an interval ---------------------------------------------------------------------------

# What joins the two ends of a range ("from 3 to 7 May", "3-7 May", "between 3 and 7 May": "and"
# only after "between"), and the day a range opens with, alone before the date that closes it.
_RANGE_JOIN = r"\s*(to|until|till|through|thru|and|-|\u2013|\u2014)\s*"
_DAY_BEFORE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?" + _RANGE_JOIN + r"$", re.I)
_JOINED = re.compile(r"^" + _RANGE_JOIN + r"$", re.I)
# the day that closes a range after a date that names its month first ("May 3-7")
_DAY_AFTER = re.compile(
    r"^" + _RANGE_JOIN + r"(\d{1,2})(?:st|nd|rd|th)?\b(?=\s*(?:[,.;:!?)]|$|\s(?:in|at|for|with|and)\b))", re.I
)
_WEEKDAY_RANGE = re.compile(
    r"\b(from|between)\s+(" + "|".join(WEEKDAYS) + r")" + _RANGE_JOIN + r"(" + "|".join(WEEKDAYS) + r")\b",
    re.I,
)
# A span of time for which the event went on from its day: "for three days", "for a week", "for a
# couple of days", "for three nights" (a stay of three nights ends on the fourth day).
_FOR_DAYS = re.compile(
    r"\bfor\s+(?:a\s+(?=couple))?(" + _NUMBER[1:-1] + r")\s+(?:of\s+)?(days?|nights?|weeks?)\b", re.I
)
# A period the event is put in no closer than its week, month or year: "next week" (what the
# temporal parser, reading the past, leaves), "the week of 4 May" (a date after it).
_NEXT_PERIOD = re.compile(r"\bnext\s+(week|month|year)\b", re.I)
_WEEK_OF = re.compile(r"\bweek of\s*$", re.I)
_IN_PERIOD = re.compile(r"\b(?:in|during)\s+(?:(?:early|mid|late)[\s-]+)?$", re.I)


def _token_at(sent, offset: int):
    """The token of a parsed sentence at a character offset of its text."""
    start = next(iter(sent)).idx + len(sent.text) - len(sent.text.lstrip())  # (the text is stripped)
    return next((t for t in sent if t.idx - start <= offset < t.idx - start + len(t.text)), None)


def _hangs_on(sent, offset: int, head) -> bool:
    """Whether the words at offset (a date's, a duration's) tell of the clause head's event: the
    head, or no other verb, is the first verb above them ("Finished the book I started in March":
    the March is the starting's)."""
    t = _token_at(sent, offset)
    while t is not None and t != head and t.pos_ not in ("VERB", "AUX") and t.head != t:
        t = t.head
    return t == head or (t is not None and t.head == t and head.pos_ not in ("VERB", "AUX"))


def _a_range(join: str, before: str) -> bool:
    """Whether the word joining two days makes them a range: "to", "until", a dash; "and" only
    after "between" ("on 3 and 7 May" are two days)."""
    return join.casefold() != "and" or before.rstrip().casefold().endswith("between")


def _interval(first: date, last: date):
    return (first, last, "day") if first < last else None


def _range_of(sent, text: str, base: date, planned: bool, head):
    """The range of days a sentence puts its event in, to the day ("from 3 to 7 May", "3-7 May",
    "May 3rd to May 7th", "between Monday and Wednesday": the latest such days by base, or for a
    plan the first after it), or the week it names ("the week of 4 May": Monday to Sunday);
    (first, last, precision) or None. Read from the temporal parser's dates that hang on the
    clause's head, and the words that join them."""
    signals = [x for x in _temporal().detect(text, [], base)["signals"] if _hangs_on(sent, x["start"], head)]
    dates = [x for x in signals if x["kind"] == "date" and any(c.isdigit() for c in x["text"])]
    for a, b in itertools.pairwise(dates):
        join = _JOINED.match(text[a["end"] : b["start"]])
        if join and _a_range(join.group(1), text[: a["start"]]):
            first, last = _nearer_year(a, base), _nearer_year(b, base)
            if str(last.year) in b["text"] and str(first.year) not in a["text"]:
                # "from 28 December to 3 January 2026": the first day the latest by the last
                first = first.replace(
                    year=last.year if first.replace(year=last.year) <= last else last.year - 1
                )
            return _interval(first, last)
    for x in dates:
        day, before = _nearer_year(x, base), text[: x["start"]]
        if _WEEK_OF.search(before):
            monday = day - timedelta(days=day.weekday())
            return monday, monday + timedelta(days=6), "week"
        # a day alone before the date that closes the range, or after one that opens it ("May 3-7")
        opened = _DAY_BEFORE.search(before)
        closed = _DAY_AFTER.match(text[x["end"] :]) if not x["text"][0].isdigit() else None
        try:
            if opened and _a_range(opened.group(2), before[: opened.start()]):
                return _interval(day.replace(day=int(opened.group(1))), day)
            if closed and _a_range(closed.group(1), ""):
                return _interval(day, day.replace(day=int(closed.group(2))))
        except ValueError:  # no such day in that month
            return None
    m = _WEEKDAY_RANGE.search(text)
    if m and _a_range(m.group(3), m.group(1)) and _hangs_on(sent, m.start(4), head):
        opens, closes = WEEKDAYS.index(m.group(2).casefold()), WEEKDAYS.index(m.group(4).casefold())
        if planned:
            first = base + timedelta(days=(opens - base.weekday()) % 7 or 7)
            if (week := _NEXT_PERIOD.search(text)) and week.group(1).casefold() == "week":
                # "from Friday to Sunday next week": those days of the week after base's
                first = base + timedelta(days=7 - base.weekday() + opens)
            return _interval(first, first + timedelta(days=(closes - opens) % 7))
        last = base - timedelta(days=(base.weekday() - closes) % 7)
        return _interval(last - timedelta(days=(closes - opens) % 7), last)
    return None


def _period_of(sent, text: str, base: date, planned: bool, head):
    """The week, month or year a sentence that names no day puts its event in: "in March",
    "sometime in March 2026" (its first to last day; the latest March by base, for a plan the next),
    "in 2019", "last week" (the temporal parser's), "next week" (Monday to Sunday after base's);
    (first, last, precision) or None."""
    m = _NEXT_PERIOD.search(text)
    if m and _hangs_on(sent, m.start(1), head):
        unit = m.group(1).casefold()
        if unit == "week":
            monday = base + timedelta(days=7 - base.weekday())
            return monday, monday + timedelta(days=6), "week"
        if unit == "month":
            first = (base.replace(day=1) + timedelta(days=32)).replace(day=1)
            return first, (first + timedelta(days=32)).replace(day=1) - timedelta(days=1), "month"
        return date(base.year + 1, 1, 1), date(base.year + 1, 12, 31), "year"
    for x in _temporal().detect(text, [], base)["signals"]:
        if not _hangs_on(sent, x["start"] + len(x["text"].rstrip(". ")) - 1, head):  # its last word
            continue
        first, last = date.fromisoformat(x["first_day"]), date.fromisoformat(x["last_day"])
        said_in = x["text"].casefold().startswith(("in ", "during ")) or _IN_PERIOD.search(text[: x["start"]])
        if x["kind"] == "month_year" and said_in:
            if planned and last < base and str(first.year) not in x["text"]:
                first = first.replace(year=first.year + 1)
                last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
            return first, last, "month"
        if x["kind"] == "year" and said_in:
            return first, last, "year"
        said_last = (
            x["kind"] == "relative" and x["text"].casefold().startswith("last") and x.get("amount") == 1
        )
        if said_last and x["unit"] in ("week", "month", "year"):
            return first, last, x["unit"]
    return None


def _lasted_days(sent, text: str, head) -> int | None:
    """The days an event went on for from its day ("for three days", "for a week", "for two
    nights": three days), or None."""
    m = _FOR_DAYS.search(text)
    if not m or not _hangs_on(sent, m.start(), head):
        return None
    n = number(m.group(1))
    unit = m.group(2).casefold()
    days = n * 7 if unit.startswith("week") else n + 1 if unit.startswith("night") else n
    return int(days) if n >= 1 else None


def event_when(
    sent, text: str, base: date | None, planned: bool, head
) -> tuple[date | None, str, date | None, str]:
    """An event's when: (day, day_source, last_day, day_precision). A range of days or the week of
    a date the clause's head is told with comes first; else its day (moved_day, or a plan's
    _planned_day), lasting as many days as it went on for from it ("for three days"); a sentence
    that names no day of its own may put it in a week, month or year (_period_of)."""
    day, source = _planned_day(text, base) if planned else moved_day(text, base)
    if base is None:
        return day, source, None, "day"
    if (told := _range_of(sent, text, base, planned, head)) is not None:
        return told[0], "relative", told[1], told[2]
    if (lasted := _lasted_days(sent, text, head)) is not None and lasted > 1:
        return day, source, day + timedelta(days=lasted - 1), "day"
    if source == "written" and (told := _period_of(sent, text, base, planned, head)) is not None:
        return told[0], "relative", told[1], told[2]
    return day, source, None, "day"


def ahead_day(sentence: str, base: date | None) -> date | None:
    """The day to come a sentence puts itself on from base ("tomorrow", "the day after tomorrow",
    "on/next/this Friday": the first such weekday after base, "in 3 days", "in two weeks"), or
    None where it names none to the day."""
    m = _AHEAD_DAY.search(sentence)
    if base is None or not m:
        return None
    if m.group(1):
        return base + timedelta(days=2)
    if m.group(2):
        return base + timedelta(days=1)
    if m.group(4):
        return base + timedelta(days=(WEEKDAYS.index(m.group(4).casefold()) - base.weekday()) % 7 or 7)
    days = number(m.group(5)) * (7 if m.group(6).casefold().startswith("week") else 1)
    return base + timedelta(days=days)


def names_a_day_ahead(sentence: str) -> bool:
    """Whether a sentence names a day (or "next week", month or year) to come whatever its verb:
    not by "on Friday" or "in ten
    days" alone, which a report says as well ("Dinner with Iris on Friday" may tell the Friday
    past, "Eleven thousand words in ten days" a time taken)."""
    return _NEXT_PERIOD.search(sentence) is not None or any(
        m.group(2) or m.group(1) or (m.group(3) or "").casefold() in ("next", "this", "coming")
        for m in _AHEAD_DAY.finditer(sentence)
    )


# Words of a day or a span of days that a day ahead is said with ("on Friday", "the day after
# tomorrow", "in two weeks", "next month").
_DAY_WORDS = frozenset({*WEEKDAYS, "tomorrow", "day", "days", "week", "weeks", "month", "year"})


def _day_ahead_of(verb) -> str | None:
    """The words of a day ahead a verb itself is put on: a day word hanging on it, directly or
    through a preposition or another day word ("seeing Iris on Friday", "in two weeks"), or a bare
    phrase of time ("next Saturday"); not a preposition's on a noun of its ("going through the
    notes of the meeting on Friday")."""
    for t in verb.subtree:
        if t.lower_ == "on" and t.head == verb and any(ch.isdigit() for c in t.subtree for ch in c.text):
            return " ".join(w.text for w in t.subtree)  # "on 12 March", "on the 12th of March"
        if t.lower_ not in _DAY_WORDS:
            continue
        up = t.head
        while up != verb and (up.pos_ == "ADP" or up.lower_ in _DAY_WORDS) and up.head != up:
            up = up.head
        # a bare phrase of time is the clause's adverbial, wherever the parser hangs it ("Going to
        # the cinema with Tomas next Saturday": "Saturday" on "Tomas")
        if up == verb or t.dep_ == "npadvmod":
            words = sorted(t.subtree, key=lambda w: w.i)
            said = " ".join(w.text for w in [*(w for w in [t.head] if w.pos_ == "ADP"), *words])
            if ahead_day(said, date.min) is not None or _NEXT_PERIOD.search(said):
                return said
    return None


# -- reading a clause -----------------------------------------------------------------------


def _children(token, *deps):
    return [c for c in token.children if c.dep_ in deps]


@functools.cache
def _common_nouns() -> frozenset[str]:
    return frozenset(ner.pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")["noun"])


def _opening_noun(token) -> bool:
    """A common noun opening its sentence: tagged one, or a proper noun that is an English common
    noun only capitalised there ("Coffee at Rosa's with Hannah")."""
    if token.i != token.sent.start:
        return False
    if token.pos_ == "PROPN" and (token.ent_type_ == "PERSON" or token.lower_ not in _common_nouns()):
        return False
    # situated, as a fragment is ("Lunch at Pho Saigon"), not a label ("Troop 41")
    return token.pos_ in ("NOUN", "PROPN") and any(
        c.dep_ == "prep" and c.lower_ in SITUATING_PREPOSITIONS for c in token.children
    )


def _is_name(token) -> bool:
    """A proper noun, or a word in a name spaCy found; not a common noun capitalised by opening its
    sentence, which the small model often runs into the name after it ("Lunch at Pho Saigon")."""
    if _opening_noun(token) or (token.is_lower and not token.ent_type_):
        return False  # nor a lower-case word the tagger calls a proper noun ("badminton")
    return token.pos_ == "PROPN" or token.ent_type_ in ("PERSON", "GPE", "LOC", "FAC", "ORG", "NORP")


def _content_noun(token) -> bool:
    return (
        token.pos_ in ("NOUN", "PROPN")
        and not _is_name(token)
        and token.lemma_.casefold() not in NOT_HAPPENINGS
    )


def _is_title(token) -> bool:
    """A professional title before a name ("Dr" of "Dr Okafor")."""
    return (
        token.dep_ == "compound"
        and token.head.pos_ == "PROPN"
        and token.lower_.rstrip(".") in PROFESSIONAL_TITLES
    )


def _title_of(name):
    """The professional title a name is given ("Dr Okafor": Dr), or None."""
    return next((c for c in name.children if c.i < name.i and _is_title(c)), None)


def _appointment(verb):
    """The title of whom a light verb, or the verb of seeing it goes to, sees ("Saw Dr Okafor
    about my molar", "Went to see Dr Lindqvist about the rash"): an appointment; else None."""
    seeing = [verb, *[c for c in verb.children if c.dep_ in ("xcomp", "advcl") and c.pos_ == "VERB"]]
    for v in seeing:
        if v.lemma_ in SEEING_VERBS:
            # its object, or a name the parser hung on it as a clause ("Saw Dr Okonjo about my cough")
            for obj in _children(v, "dobj", "ccomp"):
                if (title := _title_of(obj)) is not None:
                    return title
    return None


def _seen_to(verb, subjects):
    """The title of a professional subject who saw to what is the owner's ("Dr Moreau had a look
    at my gums", "Nurse Adeyemi dressed my knee"): the owner's appointment with them; else None."""
    # what it saw to: its object, or the object of a preposition of it or of its object ("a
    # look at my gums"), not a clause it tells ("Dr Hale said my mother was fine")
    objects = [o for w in (verb, *_children(verb, "dobj")) for o in _children(w, "dobj", "prep")]
    objects += [o for p in objects if p.dep_ == "prep" for o in _children(p, "pobj")]
    mine = any(c.lower_ == "my" and c.dep_ == "poss" for o in objects for c in o.children)
    titles = [t for s in subjects if (t := _title_of(s)) is not None]
    return titles[0] if mine and titles and _told(verb) and _past(verb) else None


def _object_activity(verb):
    """What a light verb takes, in order of how much it says: a gerund, the object of "go for"
    ("went for a run"), an object that is no name, a "to" object that is no name."""
    for c in verb.children:
        if c.tag_ == "VBG" or (c.dep_ in ("dobj", "xcomp", "advcl") and c.text.casefold().endswith("ing")):
            return c
    if verb.lemma_ in GOING_OUT:
        # under the verb, or under the one it met ("met Rosa Thistlewood for lunch")
        for prep in [p for w in (verb, *_children(verb, "dobj", "npadvmod")) for p in _children(w, "prep")]:
            if prep.lower_ == "for":
                for obj in _children(prep, "pobj"):
                    if _content_noun(obj):
                        return obj
    for obj in _children(verb, "dobj", "dative"):  # "took the bike 40 km out": a dative to the parser
        if _content_noun(obj):
            return _generic_head(obj)
    for prep in _children(verb, "prep", "dative"):
        if prep.lower_ == "to":
            for obj in _children(prep, "pobj"):
                if _content_noun(obj):
                    return obj
    return None


def _occasion(noun) -> bool:
    """A noun of a kind of occasion ("appointment", "session", "class"), not of a time ("day")."""
    lemma = noun.lemma_.casefold()
    return noun.pos_ in ("NOUN", "PROPN") and lemma in GENERIC_NOUNS and lemma not in NOT_HAPPENINGS


def _generic_head(noun):
    """A noun, or for a generic one (a "yoga class", a "dentist appointment") the word before it,
    or the role its sentence gives in apposition ("Appointment with Dr Okafor (dentist)")."""
    if noun.lemma_.casefold() in GENERIC_NOUNS:
        for c in noun.children:
            # a modifier before it ("yoga class"), not a word after ("Appointment ..., all fine")
            if (
                c.i < noun.i
                and c.dep_ in ("compound", "amod", "nmod")
                and c.lemma_.casefold() not in NOT_HAPPENINGS
            ):
                return c
        for t in noun.sent:
            # a common word, whatever the tagger makes of it ("(optician)" is often a PROPN)
            if t.dep_ == "appos" and t.is_lower and t.is_alpha and t.lemma_.casefold() not in NOT_HAPPENINGS:
                return t
    return noun


def _owner_clause(verb, subjects) -> bool:
    """Whether a clause tells the owner's doing: no subject (a diary's "Ran 5 km"), or "I" or
    "we", alone or beside names ("Maya and I")."""
    if not subjects:
        return True
    for s in subjects:
        words = {s.lower_} | {c.lower_ for c in s.conjuncts}
        if words & OWNER_SUBJECTS:
            return True
    return False


def _told(verb) -> bool:
    """A clause that tells something happened: not negated, no modal, not a question."""
    if _children(verb, "neg"):
        return False
    return not any(a.lower_ in MODALS for a in _children(verb, "aux", "auxpass"))


def _past(verb) -> bool:
    """Whether a verb tells what happened: a past form ("swam", "walked"), or a perfect ("have swum");
    a present tense tells a habit or a state ("I swim on Mondays", "I like it"), not an event."""
    if verb.tag_ == "VBD" or (verb.tag_ in ("VB", "VBP") and is_past_form(verb.text)):
        return True  # spaCy's small model tags "swam" a present: its form says otherwise
    auxiliaries = _children(verb, "aux") or (_children(verb.head, "aux") if verb.dep_ == "conj" else [])
    return verb.tag_ == "VBN" and any(a.lemma_ == "have" for a in auxiliaries)


def _measured(text: str) -> bool:
    """Whether a text gives a duration, a distance or money."""
    return bool(_DURATION.search(text) or _DISTANCE.search(text) or _MONEY.search(text))


def _situated(noun) -> bool:
    """Whether a fragment tells a happening, not only names a thing: its sentence gives a measure
    or a count ("Morning run: 7.1 km"), or the noun a when, where or with whom ("Lunch with
    Ines", "Yoga at home", "Dentist appointment at 9:15"), or a noun of doing or of an occasion
    is qualified ("Bike ride", "Bouldering session"; not "Tech problems")."""
    lemma = noun.lemma_.casefold()
    if not noun.is_alpha or len(lemma) < 3 or lemma in UNIT_NOUNS:
        return False  # "16 minutes!", "100%"
    if _measured(noun.sent.text):
        return True
    if any(t.dep_ == "nummod" for t in noun.sent):
        return True
    if any(c.dep_ == "prep" and c.lower_ in SITUATING_PREPOSITIONS for c in noun.children):
        return True
    doing = verb_lemma(lemma) == lemma or lemma in GENERIC_NOUNS
    return doing and any(c.dep_ in ("compound", "npadvmod") for c in noun.children)


def _future(verb) -> bool:
    """Whether a verb tells what is to come, by its auxiliaries: a future ("we'll swim", "shall we
    swim"), "going to" ("we're going to see Dune", "gonna watch": the verb after it), or a present
    progressive put on a day ahead ("we're seeing Iris on Friday", "Going to the cinema on
    Friday"); never one negated."""
    if _children(verb, "neg"):
        return False
    auxiliaries = _children(verb, "aux") or (_children(verb.head, "aux") if verb.dep_ == "conj" else [])
    if any(a.lower_ in FUTURE_AUXILIARIES for a in auxiliaries):
        return True
    intended = _intended(verb)
    if intended is not None and (
        verb.lower_ in ("going", "gon") or _day_ahead_of(intended) or _day_ahead_of(verb)
    ):
        return True  # "going to see Dune", "planning to run 10 km on Saturday"
    # "we're going swimming": the parser may hang "'re" on "going", an auxiliary of "swimming"
    auxiliaries += [b for a in auxiliaries for b in _children(a, "aux")]
    if not _progressive(verb) or (said := _day_ahead_of(verb)) is None:
        return False
    if any(a.lemma_ == "be" and a.tag_ in ("VBP", "VBZ") for a in auxiliaries):
        return True
    # an -ing alone is how a note tells its present ("Writing this down ... on Monday"): only a
    # day no report is said with makes it a plan ("Going to the cinema next Friday"), or a date
    # in figures ahead (sentence_events drops one gone by)
    return not auxiliaries and (names_a_day_ahead(said) or any(c.isdigit() for c in said))


def _progressive(verb) -> bool:
    """An -ing form, whatever the tagger makes of it ("Planning to run ...": a noun to it)."""
    return verb.tag_ == "VBG" or (verb.lower_.endswith("ing") and verb_lemma(verb.lower_) is not None)


def _intended(verb):
    """The verb a progressive goes on to ("we're going to see Dune", "gonna watch", "planning to
    run": see, watch, run), or None."""
    if not _progressive(verb):
        return None
    return next(
        (
            c
            for c in _children(verb, "xcomp")
            if c.tag_ == "VB" and any(a.lower_ in ("to", "na") for a in _children(c, "aux"))
        ),
        None,
    )


def clause_activity(head, note: bool = False, plans: bool = False):
    """The token that names a clause's activity, or None (a clause of someone else's, a
    negation, a habit or a state, a fragment of mood or weather; a plan unless plans). In a
    note (note), a verb spelt alike in both tenses, with no subject, opening its sentence, is a
    diary's past ("Read 45 pages of ..."); in a chat line it may be a request ("Read this!")."""
    if head.pos_ in ("VERB", "AUX"):
        subjects = _children(head, "nsubj", "nsubjpass")
        if not subjects and head.dep_ == "conj":
            subjects = _children(head.head, "nsubj", "nsubjpass")
        if not subjects and any(c.dep_ in ("det", "amod", "compound") for c in head.children):
            return clause_activity_of_noun(head)  # "Long ride, 40 km": a noun the tagger took for a verb
        if _label_compound(head, subjects):
            return clause_activity_of_noun(head)  # "Bike ride: 57 km": a noun, not "a bike rides"
        modified = any(c.dep_ == "advmod" and c.i < head.i for c in head.children)
        if not subjects and modified and head.tag_ == "VB" and not _children(head, "aux"):
            # "Long walk over Cold Fell, two hours": a noun if measured, else an imperative ("Just hang on")
            return clause_activity_of_noun(head) if _measured(head.sent.text) else None
        # a diary's "Read 45 pages": a verb whose past is its base form, opening a note's sentence
        # ("run a half marathon" in a list of resolutions is no past)
        ellipsis = note and not subjects and head.i == head.sent.start and head.lower_ in INVARIANT_PASTS
        if not _owner_clause(head, subjects):
            return _seen_to(head, subjects)
        if plans and _future(head):
            head = _intended(head) or head  # what the plan is to do
        elif not _told(head) or not (_past(head) or ellipsis):
            return None
        return _verb_doing(head)
    if head.pos_ in ("NOUN", "PROPN"):
        if (to_do := _intended(head)) is not None:  # "planning" a noun to the tagger
            return _verb_doing(to_do) if plans and _future(head) else None  # an intention, no report
        return clause_activity_of_noun(head)
    return None


def _verb_doing(head):
    """The token that names what a verb told of the owner does, or None (a state, a habit)."""
    lemma = activity_name(head)
    if lemma == "be" or lemma in STATIVE_VERBS:
        return None
    if lemma == "use" and _children(head, "xcomp"):
        return None  # "I used to go more": a habit of the past, no event
    if lemma in LIGHT_VERBS:
        return (
            _object_activity(head)
            or _appointment(head)
            or (head if lemma not in ("have", "get", "make", "be") else None)
        )
    return _gone_through(head) or head


def clause_activity_of_noun(head):
    """A fragment's activity ("Morning run: 7 km", "Lunch with Maya, we argued about films"),
    when it tells a happening (_situated); a noun that is the owner's fellow subject ("Ines and
    I had coffee") or holds a clause of the owner's ("this one person who I believe ...",
    "water sport i mean") is none, unless the owner is its own subject ("Ines and I had supper",
    "had" read as an auxiliary)."""
    if not (_content_noun(head) or head.pos_ == "VERB") or not _situated(head):
        return None
    own = [t for s in _children(head, "nsubj") for t in (s, *s.conjuncts) if t.lower_ in OWNER_SUBJECTS]
    deeper = [
        t
        for t in (*head.conjuncts, *head.subtree)
        if t.dep_ in ("nsubj", "conj") and t.lower_ in OWNER_SUBJECTS
    ]
    if deeper and not own:
        return None
    return _after_counted(head) or _generic_head(head)


def _label_compound(verb, subjects) -> bool:
    """Whether a present-tense verb and the bare noun before it, its only subject, are a noun
    compound that labels what follows a colon or comma ("Bike ride: 57 km", "Dog walk, an hour")."""
    if verb.tag_ not in ("VB", "VBP") or len(subjects) != 1:
        return False
    noun, after = subjects[0], verb.doc[verb.i + 1] if verb.i + 1 < len(verb.doc) else None
    bare = noun.tag_ == "NN" and noun.i == verb.i - 1 and not _children(noun, "det", "poss")
    return bare and after is not None and after.text in (":", ",")


def _gone_through(verb):
    """An occasion a verb went through ("Stretched through restorative yoga", "sat through two
    meetings"): a noun of no name, told of by a modifier or a number and no article or possessive
    (not a place gone through: "a sewer", "the park", "my notes")."""
    for prep in _children(verb, "prep"):
        if prep.lower_ == "through":
            for obj in _children(prep, "pobj"):
                told_of = any(c.dep_ in ("amod", "compound", "nummod") for c in obj.children)
                if _content_noun(obj) and told_of and not _children(obj, "det", "poss"):
                    return _generic_head(obj)
    return None


def _after_counted(noun):
    """What a state follows, when it is counted: "Sore fingers after 12 routes" tells 12 routes
    (a noun told of with an adjective, "after" a noun with a number)."""
    if not _children(noun, "amod"):
        return None
    for prep in _children(noun, "prep"):
        if prep.lower_ == "after":
            for obj in _children(prep, "pobj"):
                if (
                    _content_noun(obj)
                    and _children(obj, "nummod")
                    and obj.lemma_.casefold() not in UNIT_NOUNS
                ):
                    return obj
    return None


# Prepositions whose proper-noun object is where a happening was ("at the Blue Door", "to
# Leeds", "around Hollins Park"); "of" only before a name spaCy knows for a place ("the top of
# Pike Hill", not "45 pages of The Salt Orchard").
PLACE_PREPOSITIONS = frozenset(
    ["at", "in", "to", "around", "near", "from", "through", "along", "up", "over", "into"]
)
PERSON_PREPOSITIONS = frozenset({"with"})
# Particles and prepositions of a path up or over a place.
PATH_WORDS = frozenset({"up", "over"})
# English verbs of going on foot: one that goes up or over a named place tells a hike.
WALKING_VERBS = frozenset("walk stroll trek ramble tramp wander hike".split())  # noqa: SIM905
# Words of going somewhere: their "to" names a place, whatever spaCy labels it.
TRAVEL_WORDS = frozenset(
    [
        "go",
        "travel",
        "fly",
        "drive",
        "take",
        "catch",
        "ride",
        "sail",
        "head",
        "return",
        "trip",
        "journey",
        "flight",
        "visit",
    ]
)


def _place_name(token) -> str:
    """A place's name with the names joined to it ("the Fig and Fennel"), not what follows it
    ("at the Anchor with Ines")."""
    words, todo = [], [token]
    while todo:
        t = todo.pop()
        words.append(t)
        todo += [c for c in t.children if c.dep_ in ("compound", "conj", "cc", "flat")]
    words = sorted((t for t in words if t.is_title or t.dep_ == "cc"), key=lambda t: t.i)
    while words and words[-1].dep_ == "cc":
        words.pop()
    return " ".join(t.text for t in words if t.is_alpha)


def _in_place(token) -> bool:
    """Whether a token is, or is joined to, the proper-noun object of a place preposition or of a
    path ("walked up Pike Hill")."""
    while token.dep_ == "conj":
        token = token.head
    return (token.dep_ == "pobj" and token.head.lower_ in PLACE_PREPOSITIONS) or _path_object(token)


def _path_object(token) -> bool:
    """Whether a token is a name a path goes up or over ("walked up Pike Hill", "went over
    Haystacks"): capitalised within its sentence, the object of such a preposition or of a verb
    with such a particle."""
    if not token.is_title or token.i == token.sent.start:
        return False
    if token.dep_ == "pobj":
        return token.head.lower_ in PATH_WORDS
    return token.dep_ in ("dobj", "npadvmod") and any(
        c.dep_ == "prt" and c.lower_ in PATH_WORDS for c in token.head.children
    )


def _ascent(head, token) -> bool:
    """Whether a clause goes on foot up or over a named place ("Walked up Pike Hill and back",
    "Long walk over Cold Fell", "Went up Snowdon on foot"): a hike, whatever verb of going tells
    it."""
    on_foot = any(t.lower_ == "foot" and t.head.lower_ == "on" for t in head.subtree)
    if not (on_foot or activity_name(token) in WALKING_VERBS):
        return False
    return any(_path_object(t) for t in (*head.subtree, *token.subtree))


def _name_of(token) -> str:
    """A proper noun with the proper nouns before it ("Nadia Okafor", "Hollins Park")."""
    words = [t for t in token.subtree if t.i <= token.i and (t.is_title or t.dep_ == "compound")]
    words = words[next((n for n, t in enumerate(words) if t.is_title), 0) :]
    return " ".join(t.text for t in words if t.is_alpha)


def _places(tokens) -> list[tuple[str, bool]]:
    """Places the sentence puts a happening at, each with whether it is a town, region or country
    (spaCy's GPE or LOC): proper-noun objects of PLACE_PREPOSITIONS (a name spaCy took for a
    person included: "at Sakura") that hold letters only, and what "at" names by a name or "the"
    ("at Millbrook pool", "at the lido")."""
    found = []
    for t in tokens:
        if _path_object(t):  # "walked up Pike Hill"
            found.append((_place_name(t), t.ent_type_ in ("GPE", "LOC")))
        if t.dep_ != "pobj" or not t.is_alpha:
            continue
        # "of" before a name spaCy knows for a place, or of a place's part ("to the top of Pike Hill")
        part_of = t.head.head.dep_ == "pobj" and t.head.head.head.lower_ in PLACE_PREPOSITIONS
        at = t.head.lower_ in PLACE_PREPOSITIONS or (
            t.head.lower_ == "of" and (t.ent_type_ in PLACE_LABELS or part_of)
        )
        if at and t.pos_ == "PROPN":
            found.append((_place_name(t), t.ent_type_ in ("GPE", "LOC")))
        elif t.head.lower_ == "at" and t.pos_ == "NOUN" and t.lemma_.casefold() not in NOT_HAPPENINGS:
            # a place by what it is: "at Millbrook pool", "at the lido", "at the leisure centre"
            named = [c for c in t.children if c.dep_ == "compound"]
            the = any(c.lower_ == "the" for c in t.children if c.dep_ == "det")
            if named or the:
                words = [c.text for c in sorted([*named, t], key=lambda x: x.i)]
                found.append((("the " if the else "") + " ".join(words), False))
    return found


def _people(tokens, owner_names: frozenset[str]) -> list[str]:
    """The people a sentence names beside the owner: spaCy's PERSON names, a title and surname
    ("Dr Hale"), the proper-noun object of "with", a name joined to "I" ("Maya and I"); never
    where a place is named ("at Sakura", "to Kelby")."""
    found = []
    for t in tokens:
        if t.dep_ == "compound":
            continue
        beside_owner = t.dep_ in ("nsubj", "conj") and any(c.lower_ == "i" for c in t.conjuncts)
        # a capitalised word beside "I" is a name, whatever the tagger makes of it ("Ines" as a
        # plural of "ine")
        named = t.pos_ == "PROPN" or (beside_owner and t.is_title and t.pos_ == "NOUN")
        if not named or _in_place(t):
            continue
        with_owner = t.dep_ == "pobj" and t.head.lower_ in PERSON_PREPOSITIONS
        met = t.dep_ == "dobj" and t.head.lemma_ in ("see", "meet", "visit", "call", "phone", "text")
        if t.ent_type_ == "PERSON" or beside_owner or with_owner or met or _title_of(t) is not None:
            found.append(_name_of(t))
    people: list[str] = []
    for name in found:
        if name and name.casefold() not in owner_names and name not in people:
            people.append(name)
    return people


def _destination(head) -> str | None:
    """The place a clause travels to: a name after the "to" of a verb of travel or a trip
    ("took the train to Leeds", "caught the coach to Porto", "a day trip to Bruges"), or a town,
    region or country after any "to" ("went to Leeds"); none on an outing ("out to")."""
    if any(c.lower_ == "out" for c in _children(head, "prt", "advmod")):
        return None  # an outing, not a trip: "Took the bike 30 km out to Kelby"
    travels = head.lemma_.casefold() in TRAVEL_WORDS
    for word in (head, *_children(head, "dobj")):
        for prep in _children(word, "prep", "dative"):
            if prep.lower_ in ("to", "into"):
                for obj in _children(prep, "pobj"):
                    named = obj.pos_ == "PROPN" or obj.ent_type_ in ("GPE", "LOC")
                    if (
                        obj.is_alpha
                        and obj.is_title
                        and named
                        and (travels or obj.ent_type_ in ("GPE", "LOC"))
                    ):
                        return _name_of(obj)
    return None


# How the parser hangs a sentence's opening fragment on the clause after it.
FRAGMENT_DEPS = frozenset({"dep", "npadvmod", "nsubj", "nmod", "amod", "advcl"})


def _lasted(noun) -> bool:
    """Whether a noun hangs on taking or lasting a time ("Pool before work, 30 lengths, took 45
    minutes"): a happening, whatever it is called."""
    verb = noun.head
    told = "".join(t.text_with_ws for c in _children(verb, "dobj", "npadvmod") for t in c.subtree)
    return verb.lemma_ in ("take", "last") and bool(_DURATION.search(told))


def _fragment_subject(noun) -> bool:
    """Whether a subject opening its sentence is a fragment the parser hung on the clause after it:
    a comma, colon, stop or bracket parts them ("Lunch with Maya, we argued", "Tennis with Owen, 20 min,
    lost in straight sets"), not the subject of a clause ("Chocolate milk is delicious", "The WAL
    volume on db-prod-03 reached 94%": a hyphen parts nothing)."""
    between = [t for t in noun.sent if min(noun.i, noun.head.i) < t.i < max(noun.i, noun.head.i)]
    return any(t.text in (",", ":", ";", ".", "(", ")") for t in between)  # "." a semicolon read as one


def _own_detail(noun) -> bool:
    """Whether a noun's own phrase names a person or place (a proper noun after with, at, in ...)
    or gives a duration or distance (money alone is a price: "fuel €900, insurance €486")."""
    phrase = "".join(t.text_with_ws for t in noun.subtree)
    if _DURATION.search(phrase) or _DISTANCE.search(phrase):
        return True
    return any(
        t.pos_ == "PROPN" and t.dep_ == "pobj" and t.head.lower_ in SITUATING_PREPOSITIONS
        for t in noun.subtree
    )


def _clause_heads(sent) -> list:
    """The clauses a sentence tells: its root, and the verbs joined to it (conj) or, under a root
    that is no verb ("Saw Dr Hale about my cough; all fine."), the verbs it governs."""
    root = sent.root
    joined = ("conj",) if root.pos_ in ("VERB", "AUX") else ("conj", "ccomp", "parataxis", "advcl")
    heads = [root, *[c for c in root.children if c.dep_ in joined and c.pos_ == "VERB"]]
    # a clause before the root that the parser hangs on it: "Met Kit for lunch, we talked a lot."
    heads += [
        c for c in root.children if c.dep_ in ("ccomp", "parataxis") and c.i < root.i and c not in heads
    ]
    if root.pos_ in ("VERB", "AUX"):
        # a fragment joined to the clause with its own company, place or measure: "Hit some
        # balls, tennis with Owen, an hour." (not "..., but thanks for chatting")
        # or to what it took ("Booked a court: badminton with Leon, an hour")
        heads += [
            c
            for w in (root, *_children(root, "dobj"))
            for c in w.children
            if c.dep_ in ("conj", "appos", "advcl")
            and c.pos_ in ("NOUN", "PROPN")
            and not _is_name(c)
            and _own_detail(c)
        ]
    first = next(iter(sent), None)
    while first is not None and first.dep_ in ("compound", "amod", "det") and first.head.i > first.i:
        first = first.head  # the noun of the opening phrase: "Dentist appointment at 11:50, ..."
    opening = first is not None and (first.pos_ == "NOUN" or _opening_noun(first))
    if (
        opening
        and first != root
        and first not in heads
        and first.dep_ in FRAGMENT_DEPS
        and (_own_detail(first) or _lasted(first))
        and (first.dep_ != "nsubj" or _fragment_subject(first))
    ):
        # a fragment opening the sentence: "Appointment with Dr Okafor at 9:15, all fine." (root:
        # "fine"), "Dinner with Zara (the Lantern), we argued about films." (root: "argued")
        heads.append(first)
    return heads


def sentence_events(
    sent,
    base: date | None,
    owner_names: frozenset[str] = frozenset(),
    note: bool = False,
    plans: bool = False,
) -> list[Event]:
    """The events one parsed sentence (a Span, or a Reparsed one) tells; with plans, its plans
    too (planned), a question's included ("Dinner at Iris's next Saturday?")."""
    text = sent.text.strip()
    asked = text.endswith("?")
    if not text or (asked and not plans):
        return []
    said = said_day(text, base) if base is not None else None
    # a date in figures after a line's sending puts it ahead; a note may be written up after its
    # day ("Offer letter dated 1 February, accepted on 3 February")
    ahead = names_a_day_ahead(text) or (not note and said is not None and said > base)
    told = [
        (head, token, _future(head) or (ahead and not _past(head)))
        for head in _clause_heads(sent)
        if (token := clause_activity(head, note, plans)) is not None
    ]
    # a question tells no event, only a plan proposed; a plan is none unless asked for
    # a plan is kept where it is put in time (a day ahead, a date or time spaCy names: "in May",
    # "tonight"), the when a timeline row needs; "I'll talk to you later", "we'll see" are none
    timed = ahead or any(t.ent_type_ in ("DATE", "TIME") for t in sent)
    # nor one on a date in figures gone by ("Writing this on 3 March", the 5th): a present told
    if said is not None and said < base and ahead_day(text, base) is None:
        told = [x for x in told if not x[2]]
    told = (
        [x for x in told if (x[2] and timed) or not (asked or x[2])]
        if plans
        else [x for x in told if not x[2]]
    )
    planned_of = {h.i: planned for h, _, planned in told}
    told = [(h, t) for h, t, _ in told]
    # "Went climbing and did 16 routes": a joined light verb that did a count of something tells
    # the measures of the clause it joins, not an event of its own
    told = [
        (head, token)
        for head, token in told
        if not (
            head.dep_ == "conj"
            and any(h == head.head for h, _ in told)
            and head.lemma_ in LIGHT_VERBS
            and token.head == head
            and _children(token, "nummod")
        )
    ]
    found = []
    for (head, token), part in zip(told, _parts(sent, [h for h, _ in told]), strict=True):
        said = "".join(t.text_with_ws for t in part)
        minutes, km = minutes_in(said), km_in(said)
        amount, currency = money_in(said)
        taken = " ".join(m.group(0) for r in (_DURATION, _DISTANCE, _MONEY) for m in r.finditer(said))
        count, unit = count_in(part, taken)
        activity = activity_name(token)
        forms = {activity, "appointment"} if _is_title(token) else {token.text.casefold(), activity}
        # the occasion it was told as ("Dentist appointment", "Appointment with ... (dentist)",
        # "a yoga class"): what a kind of occasion is known by
        occasion = next((w for w in (token.head, head) if w != token and _occasion(w)), None)
        if occasion is not None:
            forms.add(occasion.lemma_.casefold())
        if not _is_title(token) and (
            token.pos_ in ("VERB", "AUX")
            or token.text.casefold().endswith("ing")
            or verb_lemma(activity) == activity
        ):
            forms.add(gerund(activity))  # "a run" is running too
        place = next((name for name, _ in _places(part)), None)
        if _ascent(head, token):
            activity = "hike"
            forms |= {"hike", "hiking"}
        # a verb of its own doing goes to a place, not on a trip ("Cycled 25 km out to Marsham")
        own = token == head and activity not in LIGHT_VERBS | TRAVEL_WORDS
        if not own and (trip := _destination(head) or _destination(token)) is not None:
            activity, place = "travel", trip
            if token.head != head:  # what the trip was for ("Day trip to Galway: a family lunch")
                forms = set()  # names no trip; what it went by does ("took the train")
            forms |= {"travel", "trip", head.text.casefold(), activity_name(head)}
        planned = planned_of[head.i]
        day, source, last_day, precision = event_when(sent, text, base, planned, head)
        found.append(
            Event(
                activity=activity, forms=sorted(forms), sentence=text,
                char_start=sent.start_char, char_end=sent.end_char, day=day, day_source=source,
                last_day=last_day, day_precision=precision,
                minutes=minutes, km=km, amount=amount, currency=currency, count=count,
                count_unit=unit, place=place, people=_people(part, owner_names), planned=planned,
            )
        )  # fmt: skip
    return found


def _planned_day(sentence: str, base: date | None) -> tuple[date | None, str]:
    """A plan's day: the one ahead it names, else its note's or message's."""
    said = said_day(sentence, base) if base is not None else None
    ahead = ahead_day(sentence, base) or (said if said is not None and said >= base else None)
    return (ahead, "relative") if ahead is not None else (base, "written")


def _parts(sent, heads) -> list[list]:
    """The words each clause head tells its measures, place and people with: its subtree without the subtrees of the
    other heads under it ("Hit some balls, tennis with Owen, an hour": the hour is the tennis's);
    words no head holds (a clause that tells no event: "Pool ..., took 45 minutes") go to the
    first."""
    spans = {h.i: {t.i for t in h.subtree} for h in heads}
    parts = []
    for h in heads:
        inner = [
            spans[o.i] for o in heads if o.i != h.i and o.i in spans[h.i] and not spans[h.i] <= spans[o.i]
        ]
        parts.append({i for i in spans[h.i] if not any(i in o for o in inner)})
    held = set().union(*parts) if parts else set()
    if parts:
        parts[0] |= {t.i for t in sent if t.i not in held}
    return [[t for t in sent if t.i in part] for part in parts]


@dataclass
class Reparsed:
    """A sentence parsed again as "I " + itself: the parse's span without "I ", with the original
    sentence's text and offsets."""

    span: object
    text: str
    start_char: int
    end_char: int

    @property
    def root(self):
        return self.span.root

    @property
    def doc(self):
        return self.span.doc

    @property
    def start(self):
        return self.span.start

    @property
    def end(self):
        return self.span.end

    def __iter__(self):
        return iter(self.span)


def as_owner(sent):
    """A sentence whose opening clause has no subject and opens with a past-tense verb (a
    diary's "Went swimming: ...", "Met Kit for dinner, we laughed", which spaCy's small model
    reads as a name) parsed again as "I went swimming: ...", when that reading makes its first
    word a past-tense verb of "I"; else the sentence."""
    first = sent[0]
    if not first.is_title or first.lower_ in OWNER_SUBJECTS or not is_past_form(first.text):
        return sent
    # a subject in the opening clause (up to its first comma, colon ...), unless the verb is read
    # as part of it ("Met Yuki Strand for dinner": "Met Yuki Strand" a name)
    opening = next((t.i for t in sent if t.is_punct), sent.end)
    if opening == first.i + 1:
        return sent  # a word alone ("Granted, ..."), no clause
    subjects = [t for t in sent if t.dep_ in ("nsubj", "nsubjpass", "expl") and t.i < opening]
    # nor a word the parser made a subject only to give the verb one ("Did yin yoga": "yin"), a
    # subject being a pronoun, a common noun or a name spaCy knows
    subjects = [t for t in subjects if t.pos_ in ("PRON", "NOUN") or t.ent_type_]
    # nor a name after the verb that the parser made its subject: English tells the subject first
    # ("Saw Dr Kowalczyk about my gums" read as Dr Kowalczyk seeing)
    subjects = [t for t in subjects if not (t.head == first and t.i > first.i)]
    if any(first not in t.subtree for t in subjects):
        return sent
    again = ner.pipeline()("I " + first.lower_ + sent.text[len(first.text) :])
    verb = again[1]
    if (
        verb.pos_ == "VERB"
        and verb.tag_ in ("VBD", "VBN")
        and again[0].head == verb
        and again[0].dep_ == "nsubj"
    ):
        return Reparsed(again[1:], sent.text, sent.start_char, sent.end_char)
    return sent


_FRONTMATTER = re.compile(r"\A---\n.*?\n---[ \t]*\n", re.S)
# Lines that hold no sentence of prose: a table's rows, headings, "**Key:** value" and "key: value"
# lines of a record (a diary's "Morning run: 7 km" has a number or a comma, a record's key none).
_NOT_PROSE = re.compile(r"^[ \t]*(?:\|.*|#.*|\*\*[^*\n]+:\*\*.*|[a-z_]+:[ \t]+[^\d,\n]*)$", re.M)


def prose(text: str) -> str:
    """The text with its frontmatter, tables, headings and record lines blanked (spaces of the
    same length, so offsets stay the text's): the sentences left are the ones that may tell."""

    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return _NOT_PROSE.sub(blank, _FRONTMATTER.sub(blank, text))


def text_events(
    text: str,
    base: date | None,
    owner_names: frozenset[str] = frozenset(),
    note: bool = True,
    plans: bool = False,
) -> list[Event]:
    """The events a text tells of its writer, dated from base (its note's or message's day), and
    with plans its plans (planned). A semicolon parts sentences here ("Lunch at the Anchor with
    Ines; we laughed a lot." tells a lunch): read as a full stop, of the same length, so offsets
    stay the text's; so does a stop after a unit (_UNIT_STOP)."""
    parsed = ner.parse(_UNIT_STOP.sub("\\1\n", prose(text).replace("; ", ". ")))
    return [
        e for sent in parsed.sents for e in sentence_events(as_owner(sent), base, owner_names, note, plans)
    ]


def source_events(sources, owner_names: frozenset[str] = frozenset()) -> list[dict]:
    """The events and plans of a document's sources (rows of exo_private.event_sources: chunk_id,
    message_id, day, day_source, body), as exo_private.store_events takes them: a chunk written
    is a note's (its subjectless verbs a diary's past); one sent is a mail's of the owner's, and a
    message a chat line, each read without what it quotes, forwards or signs off (mail_words)."""
    found = []
    for chunk_id, message_id, day, day_source, body in sources:
        sent = day_source == "sent"
        text = mail_words(body) if sent else body
        for event in text_events(text, day, owner_names, note=not sent, plans=True):
            row = event.to_json()
            if row["day_source"] == "written":
                row["day_source"] = day_source
            found.append({**row, "chunk_id": chunk_id, "message_id": message_id})
    return found


# Frontmatter keys of a calendar-like note: who was there, and where.
ATTENDEE_KEYS = ("attendees", "participants", "with", "people")
PLACE_KEYS = ("place", "location", "where", "venue")


def _names(value) -> list[str]:
    """A frontmatter value as names: a list, or a string of names split at commas and "and"."""
    items = value if isinstance(value, list) else re.split(r",|;|\band\b", str(value or ""))
    return [str(i).strip().strip("[]\"'") for i in items if str(i).strip().strip("[]\"'")]


def calendar_events(
    title, frontmatter, day, chunk_id, owner_names: frozenset[str] = frozenset()
) -> list[dict]:
    """The event a calendar-like note is (frontmatter naming attendees or a place, and a day):
    named by its title as a fragment is ("Dentist appointment" -> dentist, "Coffee with Iris" ->
    coffee; else "meeting"), its people the attendees, its place the place."""
    frontmatter = frontmatter if isinstance(frontmatter, dict) else {}
    people = [
        n for key in ATTENDEE_KEYS for n in _names(frontmatter.get(key)) if n.casefold() not in owner_names
    ]
    place = next((str(frontmatter[k]).strip() for k in PLACE_KEYS if frontmatter.get(k)), None)
    if day is None or not (people or place):
        return []
    named = ner.pipeline()(title) if title else None
    token = clause_activity(named[:].root) if named is not None and len(named) else None
    activity = activity_name(token) if token is not None else "meeting"
    event = Event(activity=activity, forms=sorted({activity, "meeting"}), sentence=title or "", char_start=0,
                  char_end=0, day=day, place=place, people=people)  # fmt: skip
    return [{**event.to_json(), "day_source": "written", "chunk_id": chunk_id, "message_id": None}]
