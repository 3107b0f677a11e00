"""Temporal signals in a retrieval query (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include temporal`),
and importable as plain Python for tests. Search uses the result to decide the
bands: no signal means recency preference (present bands first); a signal that
opens the archive lets the archival band in, and the report names the signal.

`detect(query, cues, today, archive_after_days=365)` returns

    {"signal": bool, "opens_archive": bool, "years": [int, ...],
     "truncated": bool, "signals": [{"kind", "text", "start", "end",
                                     "opens_archive", ...kind fields}]}

Years run from 1000 to next year. A date or a month named with its year is
one whatever the year ("March 4, 1803", "1803-03-04", "May 1790"); numeric
forms other than ISO dates start at 1900; a bare number is a year by the
rules of `year` below.

`text` is the query's slice `query[start:end]` (offsets in code points), with
control and format characters other than tabs and line breaks shown as spaces.
Signals are in query order. A stretch of text is reported once, under the most
specific kind, in this order:

- `date`: "2014-03-02", "2014/03/02", "4 March 2014", "4th of March, 2014",
  "March 4, 2014", "02/03/2014" (this form only from 1900: "8.1.1424" is a
  version), "March 4, 1803", "1803-03-04". Fields `year`, `date` (ISO; where
  both readings of a numeric day and month are dates, as in "02/03/2014",
  `numeric_order` decides: 'dmy' (2 March) or 'mdy' (3 February)).
- `month_year`: "March 2014", "Mar. 2014", "March of 2014", "May 1790",
  "2014-03", "2014/03", "03/2014" (the numeric forms only from 1900). Fields
  `year`, `month`. A capitalised month without a year after "in", "during",
  "last" or "this" ("in March") is the latest such month begun by today
  ("last March" one before this month). A quarter ("the first quarter of 2025",
  "Q3 2024"; without a year, of this one) is read as its three months.
  "2010-11" reads as November 2010.
- `century`: "the 1800s", "the 1800's", "the 19th century", "the nineteenth
  century", "19th-century", "the eighteen hundreds", from the 11th century
  (1000s) to the 21st. Fields `first`, `last`: "the 1800s" and "the 19th
  century" are 1800..1899 (years, not the strict 1801..1900). "early", "mid"
  and "late" before it name its first, middle and last third ("late 19th
  century" is 1866..1899). "the 1000s" to "the 1900s" are centuries, "the
  2000s" is the decade 2000..2009. Without "the" or a modifier and followed
  by "of" such a number is a count ("1000s of files"), not a century.
- `decade`: "1990s", "1990's", "the 90s", "the '90s", "90's", "mid-90s",
  "the late eighties", "nineties", "noughties", "the 2010s", "the 1790s",
  "the eighteen-nineties", "the eighteen nineties". Fields `first`, `last`
  (the decade's first and last year). A two-digit decade is the latest one
  that has begun ("20s" in 2026 is the 2020s, "30s" the 1930s). After a
  possessive ("my 30s", "in her nineties") it is an age, not a decade.
- `year`: a standalone 4-digit number ("2014", "in 2009?", "1999-2003" gives
  two). Not inside a longer number or word ("120145", "v2014"), not a decimal
  or time ("3.2014", "1,2014"), not money ("$2014"). From 1900 to next year
  a number is a year unless a unit or count follows it with nothing year-like
  before ("1950 km", "2000 years ago"). From 1000 to 1899 it is a year only
  in a year-like context: directly after in, since, from, by, until, till, of,
  around, circa, c., ca., before, after, during, between, "year" or "AD"
  ("in 1803", "the year 1066", "c. 1790"), directly before "AD" or "CE", or
  continuing a range from a year ("from 1790 to 1803", "in 1790-1803"); and
  never before a unit or count ("of 1500 people", "by 1850 km", "1200
  pages", "1024-bit"), nor after a quantity word and "of", "around" or "by"
  ("a total of 1500", "multiplied by 1000", "instead of 1024"), nor in a
  range of counts ("from 1024 to 16", "from 1024 to 4096"). A range runs
  forward: in "2022-1271" 1271 is not a year; nor is a number between an identifier's
  parts ("CVE-2022-1271", "INV-2020-00412"). "BC" or "BCE" after a
  number makes it a year before the era, outside the range: no signal. Field
  `year`.
- `relative`: "last year", "the year before last", "last month", "last week",
  "N days/weeks/months/years/decades ago" with N a number, "a", "an",
  "one".."twelve", "a couple of", "a few", "several", "many", or no N at all
  ("years ago"). Fields `unit`, `amount`, `approximate` (true for vague
  amounts), `days_ago`, `year` (the year it names; null when approximate or
  before the year 1000, as in "2000 years ago"). Also "this year/month/week" (its first
  day to today) and "the past month", "the last 3 weeks" (the days up to today).
- `cue`: each configured cue phrase, matched case-insensitively on word
  boundaries, any run of whitespace matching a space. Field `cue` (the phrase
  as configured), `anchored` ("time", "present" or null; see below).

Opening the archive. Every dated signal has a first day (a year's 1 January,
a month's 1st, a decade's or century's first 1 January, a date itself; for a
relative expression today minus the amount, or the first day of the calendar
year or month that "last year", "the year before last" and "last month"
name). It
opens the archive when that first day is at least `archive_after_days` before
`today`, because part of what it names is then old enough to be archival.
Rules on top of that:

- The current-year rule: a bare `year` equal to the current year (or later)
  never opens the archive, whatever the threshold; it is still a signal.
  Months and dates of the current year follow the threshold alone.
- Future dates never open the archive.
- A cue opens the archive, unless it is anchored: directly followed (only
  spaces or a comma between) by a date, month-year, decade, century or year
  signal, the cue reads through that time, and that signal alone decides. So
  "as of 2026" with today in 2026 is a signal (cue and year) that does not
  open the archive, while "as of 2019" opens it through the year. A cue directly
  followed by "now", "today", "currently", "present" or "this year/month/week"
  is anchored to the present and does not open it either ("as of now").

`years` is the sorted set of years the signals name: a decade or a century
contributes its first and last year; approximate relative expressions and cues
contribute none.

Robustness: only the first SCAN_CHARS characters are scanned (`truncated`
says so); control and format characters other than tabs and line breaks count
as spaces; only ASCII digits are read; every pattern is linear (no nested repetition), so hostile input
costs little. The query is data: nothing in it is executed.
"""

import calendar
import datetime
import re
import unicodedata

from months import MONTH_PATTERN, MONTHS, WEEKDAYS

SCAN_CHARS = 2000
MAX_CUES = 200
MAX_CUE_CHARS = 100

_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_VAGUE_AMOUNTS = {"a couple of": 2, "a few": 3, "several": 3, "many": 5}
_DECADE_WORDS = {
    "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
    "seventies": 70, "eighties": 80, "nineties": 90, "noughties": 0, "aughts": 0,
}  # fmt: skip
# The first two digits of a year in words: "the eighteen-nineties", "the eighteen hundreds".
_HUNDREDS_WORDS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_CENTURY_WORDS = {
    "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "twenty-first": 21, "twenty first": 21,
}  # fmt: skip
MIN_YEAR = 1000
_UNIT_DAYS = {"day": 1, "week": 7}
_KEPT = "\t\n\r\f\v"

# Boundaries: numbers use ASCII letters and digits (so "2014\u5e74" is a year);
# words use Unicode word characters.
_NB = r"(?<![0-9A-Za-z_])"
_NA = r"(?![0-9A-Za-z_])"
_NOT_AFTER_NUMBER = r"(?<![0-9][.,:/])"
_NOT_BEFORE_NUMBER = r"(?![.,:/-][0-9])"
_YEAR = r"((?:19|20)[0-9]{2})"  # a year in a numeric form ("2014-03", "03/2014", "02/03/2014")
_ANY_YEAR = r"(1[0-9]{3}|20[0-9]{2})"  # with a month name, or ISO with a day: 1000..2099
_APOSTROPHE = "['\u2018\u2019`]"
_ORDINAL = r"(?:st|nd|rd|th)?"

_ISO_DATE = re.compile(
    _NB + _NOT_AFTER_NUMBER + _ANY_YEAR + r"([-/.])([0-9]{1,2})\2([0-9]{1,2})" + _NA + _NOT_BEFORE_NUMBER
)
_NUMERIC_DATE = re.compile(
    _NB + _NOT_AFTER_NUMBER + r"([0-9]{1,2})([-/.])([0-9]{1,2})\2" + _YEAR + _NA + _NOT_BEFORE_NUMBER
)
_DAY_MONTH_YEAR = re.compile(
    _NB + r"([0-9]{1,2})" + _ORDINAL + r"(?:\s+of)?\s+" + MONTH_PATTERN + r",?\s+" + _ANY_YEAR + _NA, re.I
)
_MONTH_DAY_YEAR = re.compile(
    r"(?<!\w)" + MONTH_PATTERN + r"\s+([0-9]{1,2})" + _ORDINAL + r",?\s+" + _ANY_YEAR + _NA, re.I
)
_MONTH_NAME_YEAR = re.compile(
    r"(?<!\w)" + MONTH_PATTERN + r"(?:\s*,\s*|\s+of\s+|\s+)" + _ANY_YEAR + _NA + _NOT_BEFORE_NUMBER, re.I
)
_YEAR_MONTH = re.compile(_NB + _NOT_AFTER_NUMBER + _YEAR + r"[-/]([0-9]{2})" + _NA + _NOT_BEFORE_NUMBER)
_MONTH_SLASH_YEAR = re.compile(
    _NB + r"(?<![0-9A-Za-z_][-/.])([0-9]{1,2})/" + _YEAR + _NA + _NOT_BEFORE_NUMBER
)
# A day and month without a year ("24 June", "June 24th", "Tuesday, 24 June"): the latest such day
# on or before today (one on the weekday named, when the last 28 years have one). Not before a
# number ("June 24, 2025" is a date with its year; "June 24 12:30" a time).
_WEEKDAY_NAME = r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NO_NUMBER_AFTER = r"(?!\s*,?\s*[0-9])(?![:.][0-9])"
_DAY_MONTH = re.compile(
    r"(?<!\w)(?:" + _WEEKDAY_NAME + r",?\s+(?:the\s+)?)?" + _NB + r"(?P<day>[0-9]{1,2})" + _ORDINAL
    + r"(?:\s+of)?\s+(?P<month>" + MONTH_PATTERN + r")" + _NA + _NO_NUMBER_AFTER,
    re.I,
)  # fmt: skip
_MONTH_DAY = re.compile(
    r"(?<!\w)(?:" + _WEEKDAY_NAME + r",?\s+)?(?P<month>" + MONTH_PATTERN + r")\s+(?:the\s+)?"
    + _NB + r"(?P<day>[0-9]{1,2})" + _ORDINAL + _NA + _NO_NUMBER_AFTER,
    re.I,
)  # fmt: skip
# A month without a year after "in", "during", "last" or "this" ("in March"): the latest such month
# begun by today ("last March": before this month).
_MONTH_ALONE = re.compile(
    r"(?<!\w)(?P<which>in|during|last|this)\s+(?P<month>"
    + MONTH_PATTERN
    + r")(?!\w)(?!\s*,?\s*(?:of\s+)?[0-9])",
    re.I,
)
# "yesterday", "last Tuesday", "on Tuesday": a day counted back from today. A weekday followed by
# a day or month ("on Tuesday, 24 June") is read by the forms above.
_DAY_BACK = re.compile(
    r"(?<!\w)(?:(?P<yesterday>(?:the\s+day\s+before\s+)?yesterday)|(?P<which>last|this\s+past|on)\s+"
    + _WEEKDAY_NAME + r")(?!\w)(?!\s*,?\s*(?:the\s+)?[0-9])(?!\s*,?\s*" + MONTH_PATTERN + r")",
    re.I,
)  # fmt: skip
_THE_MOD = r"(?<!\w)(?:(?P<the>the)\s+)?(?:(?P<mod>early|mid|late)(?:-|\s+)?)?"
_DECADE = re.compile(
    _THE_MOD + r"(?:" + _NB + r"(?P<full>1[0-9]{2}0|20[0-9]0)" + _APOSTROPHE + r"?s"
    r"|" + _APOSTROPHE + r"?" + _NB + r"(?P<short>[0-9]0)" + _APOSTROPHE + r"?s"
    r"|(?:(?P<hundreds>" + "|".join(_HUNDREDS_WORDS) + r")(?:-|\s+))?"
    r"(?P<word>" + "|".join(_DECADE_WORDS) + r"))(?!\w)",
    re.I,
)
_CENTURY = re.compile(
    _THE_MOD + r"(?:" + _NB + r"(?P<number>[0-9]{1,2})(?:st|nd|rd|th)"
    r"|(?P<word>" + "|".join(w.replace(" ", r"\s+") for w in _CENTURY_WORDS) + r"))"
    r"(?:-|\s+)century(?!\w)",
    re.I,
)
_HUNDREDS = re.compile(
    _THE_MOD + r"(?P<word>" + "|".join(_HUNDREDS_WORDS) + r")(?:-|\s+)hundreds(?!\w)", re.I
)
_POSSESSIVE_BEFORE = re.compile(r"(?:^|\W)(?:my|your|his|her|our|their|whose)\s+$", re.I)
_BARE_YEAR = re.compile(
    r"(?<![$\u20ac\u00a3\u00a5#])" + _NB + _NOT_AFTER_NUMBER + r"([0-9]{4})" + _NA + r"(?![.,:][0-9])"
)
# What makes a bare number a year (see `year` in the module docstring), read next to it.
_YEAR_WORD_BEFORE = re.compile(
    r"(?:^|[^\w.])(?:(?:in|since|from|by|until|till|of|around|circa|before|after|during|between|year"
    r"|ad|a\.d\.)\s+|(?:c|ca)\.\s*)$",
    re.I,
)
_QUANTITY_BEFORE = re.compile(
    r"(?<!\w)(?:(?:total|sum|population|number|count|maximum|minimum|max|min|average|batch|crowd|group"
    r"|team|budget|price|cost|salary|score|height|depth|length|distance|weight|capacity|balance"
    r"|amount|value|size|rate|speed|speedup|factor|ratio|limit|threshold|timeout|power|powers|base|offset"
    r"|multiple|multiplier|default|index|port)\s+(?:of|around|by)"
    r"|(?:multipl|divid|increas|decreas|reduc|grow|grew|rais|scal)\w*\s+by|instead\s+of|out\s+of)\s+$",
    re.I,
)
_RANGE = r"\s*(?:-|\u2013|\u2014|to|and|or|through|until|till)\s*"
# The end of a range of days that gives its year ("5 July and 18 September 2025"): the year.
_RANGE_TO_YEAR = re.compile(_RANGE + r"[^.?!;\n]{0,30}?(?<![0-9])((?:19|20)[0-9]{2})(?![0-9])", re.I)
_RANGE_BEFORE = re.compile(r"(?<![0-9A-Za-z_])([0-9]{4})" + _RANGE + "$", re.I)
_RANGE_AFTER = re.compile(_RANGE + r"([0-9]+)(?![0-9A-Za-z_])", re.I)
_ERA_AFTER = re.compile(r"\s*(?:ad|a\.d\.|ce|c\.e\.)(?!\w)", re.I)
_BEFORE_ERA_AFTER = re.compile(r"\s*(?:bc|b\.c\.|bce|b\.c\.e\.)(?!\w)", re.I)
_COUNT_AFTER = re.compile(
    r"(?:\s*|-)(?:%|\u00b0|(?:people|persons?|men|women|children|kids|soldiers|troops|students|employees"
    r"|workers|users|members|visitors|residents|votes|km|kms|kilomet(?:er|re)s?|miles?|mi|m|met(?:er|re)s?"
    r"|cm|mm|feet|foot|ft|inch(?:es)?|yards?|kg|kgs|kilos?|kilograms?|grams?|lbs?|pounds?|tons?|tonnes?"
    r"|oz|ounces?|lit(?:er|re)s?|ml|gallons?|acres?|hectares?|dollars?|euros?|usd|eur|gbp|chf|yen"
    r"|pages?|pp|words?|characters?|chars|lines?|rows?|items?|units?|pieces?|copies|files?|times"
    r"|steps|calories|kcal|cal|hp|rpm|mph|kph|kmh|hours?|hrs?|minutes?|mins?|seconds?|secs?|days?"
    r"|weeks?|months?|years?|decades?|centuries|points?|pts|dpi|px|kb|mb|gb|tb|ms|hz|khz|mhz|ghz"
    r"|kw|kwh|degrees?|bits?|bytes?|digits?|operations?|ops|cycles?|iterations?|entries|records?"
    r"|requests?|samples?|threads?|connections?|nodes?|cores?|tokens?|frames?|packets?|calls?)(?!\w))",
    re.I,
)
_LOOK = 40  # characters read on either side of a bare number for its context
_OF_AFTER = re.compile(r"\s+of(?!\w)")
_AMOUNT = (
    r"(?P<amount>[0-9]{1,4}|"
    + "|".join(a.replace(" ", r"\s+") for a in _VAGUE_AMOUNTS)
    + "|"
    + "|".join(_NUMBER_WORDS)
    + ")"
)
_AGO = re.compile(r"(?<!\w)(?:" + _AMOUNT + r"\s+)?(?P<unit>day|week|month|year|decade)s?\s+ago(?!\w)", re.I)
_LAST = re.compile(
    r"(?<!\w)(?:(?P<before>the\s+year\s+before\s+last)|last\s+(?P<unit>year|month|week))(?!\w)", re.I
)
# "this year", "this month", "this week": from its first day to today.
_THIS = re.compile(r"(?<![\w-])this\s+(?P<unit>year|month|week)(?!\w)", re.I)
# "the past month", "the last 3 weeks", "the past two years": the days up to today.
_PAST = re.compile(
    r"(?<!\w)the\s+(?:past|last)\s+(?:" + _AMOUNT + r"\s+)?(?P<unit>day|week|month|year)s?(?!\w)", re.I
)
# "the first quarter of 2025", "Q3 2024", "the last quarter" (of the year named, else this one).
_QUARTER = re.compile(
    r"(?<!\w)(?:(?:the\s+)?(?P<ordinal>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+quarter|q(?P<q>[1-4]))"
    r"(?:\s*(?:of\s+)?" + _YEAR + r"(?![0-9]))?(?!\w)",
    re.I,
)
_QUARTER_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "last": 4,
}
_PRESENT_AFTER = re.compile(r"\s*,?\s*(?:now|today|currently|present|this\s+(?:year|month|week))(?!\w)", re.I)
_ANCHOR_GAP = re.compile(r"\s*,?\s*")


def _clean(text):
    """Control, format and other non-printing characters become spaces (offsets kept);
    tabs and line breaks stay as they are."""
    return "".join(" " if c not in _KEPT and unicodedata.category(c)[0] == "C" else c for c in text)


def _year_ok(year, today):
    return MIN_YEAR <= year <= today.year + 1


# A number between an identifier's parts: letters joined before it, another part joined after it
# ("CVE-2023-38545", "INV-2020-00412"). The year such a name records says nothing of the time a
# question asks about, and read as one it ranked the passages of that year above the one that
# holds the identifier.
_IDENTIFIER_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9]*[-_]$")
_IDENTIFIER_AFTER = re.compile(r"[-_][0-9A-Za-z]")


def _reads_as_year(text, start, end, year, today, depth=0):
    """Whether the bare 4-digit number text[start:end] (= year) is a year by its context (see
    `year` in the module docstring). A range continues from a number that is itself a year; a
    chain of ranges is followed three numbers back at most."""
    if not _year_ok(year, today):
        return False
    back, ahead = max(0, start - _LOOK), end + _LOOK  # searched in place: boundaries stay true
    if _IDENTIFIER_BEFORE.search(text, back, start) and _IDENTIFIER_AFTER.match(text, end, ahead):
        return False
    if _BEFORE_ERA_AFTER.match(text, end, ahead):
        return False
    said = bool(
        (_YEAR_WORD_BEFORE.search(text, back, start) and not _QUANTITY_BEFORE.search(text, back, start))
        or _ERA_AFTER.match(text, end, ahead)
    )
    if not said and depth < 3:
        m = _RANGE_BEFORE.search(text, back, start)
        if m and int(m.group(1)) < year:  # a range runs forward: "2022-1271" is an identifier
            said = _reads_as_year(text, m.start(1), m.end(1), int(m.group(1)), today, depth + 1)
    counted = bool(_COUNT_AFTER.match(text, end, ahead))
    if year >= 1900:
        return said or not counted
    m = _RANGE_AFTER.match(text, end, ahead)
    if m and not counted:  # "from 1024 to 16", "from 1040 to 1904 bytes": a range of counts
        partner = m.group(1)
        counted = not (len(partner) == 4 and year < int(partner) and _year_ok(int(partner), today)) or bool(
            _COUNT_AFTER.match(text, m.end(), ahead)
        )
    return said and not counted


def _minus_months(day, months):
    """The same day `months` earlier (the month's last day where it is shorter)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    if year < 1:
        return datetime.date.min
    return datetime.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _opens(first_day, today, archive_after_days):
    return first_day <= today and (today - first_day).days >= archive_after_days


def _date(year, month, day):
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None


# -- one handler per pattern: match -> signal fields, or None to skip the match -----------


def _iso_date(m, text, today, days):
    day = _date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
    if not day:
        return None
    return _day_signal(day, today, days)


def _numeric_date(m, text, today, days, order="dmy"):
    a, b, year = int(m.group(1)), int(m.group(3)), int(m.group(4))
    readings = (
        (_date(year, b, a), _date(year, a, b)) if order == "dmy" else (_date(year, a, b), _date(year, b, a))
    )
    day = readings[0] or readings[1]
    return _day_signal(day, today, days) if day else None


def _named_date(day_group, month_group, year_group):
    def handler(m, text, today, days):
        day = _date(int(m.group(year_group)), MONTHS[m.group(month_group).lower()], int(m.group(day_group)))
        if not day:
            return None
        return _day_signal(day, today, days)

    return handler


def _latest_day(today, month, day, weekday=None):
    """The latest date on or before today with this month and day, on `weekday` when one of the
    last 28 years (a full cycle of weekdays and leap years) has it there."""
    for back in range(29):
        found = _date(today.year - back, month, day)
        if found and found <= today and (weekday is None or found.weekday() == weekday):
            return found
    return None if weekday is None else _latest_day(today, month, day)


def _day_month(m, text, today, days):
    written = m.group("month").rstrip(".")
    if (written.lower() == "may" or len(written) <= 4) and not written[0].isupper():
        return None  # "I may 2", "mar 3": a verb or a word, not a month, unless capitalised
    weekday = m.group("weekday")
    month = MONTHS[written.lower()]
    ranged = _RANGE_TO_YEAR.match(text, m.end())
    if ranged:  # "between 5 July and 18 September 2025": the year the range's end gives
        try:
            return _day_signal(datetime.date(int(ranged.group(1)), month, int(m.group("day"))), today, days)
        except ValueError:
            return None
    day = _latest_day(today, month, int(m.group("day")), WEEKDAYS[weekday.lower()] if weekday else None)
    return _day_signal(day, today, days) if day else None


def _month_alone(m, text, today, days):
    written = m.group("month").rstrip(".")
    if not written[0].isupper():
        return None  # "in may", "in mar": a month is written with a capital when it stands alone
    month = MONTHS[written.lower()]
    year = (
        today.year
        if month < today.month or (month == today.month and m.group("which").lower() != "last")
        else today.year - 1
    )
    first = datetime.date(year, month, 1)
    return {
        "kind": "month_year",
        "year": year,
        "month": month,
        "opens_archive": _opens(first, today, days),
        **_days(first, datetime.date(year, month, calendar.monthrange(year, month)[1])),
    }


def _day_back(m, text, today, days):
    if m.group("yesterday"):
        back = 2 if len(m.group("yesterday").split()) > 1 else 1
    else:
        # "on Tuesday" may be today; "last Tuesday" and "this past Tuesday" are before it
        back = (today.weekday() - WEEKDAYS[m.group("weekday").lower()]) % 7
        if back == 0 and m.group("which").lower() != "on":
            back = 7
    return _day_signal(today - datetime.timedelta(days=back), today, days)


def _day_signal(day, today, days):
    """The signal of one named day."""
    return {
        "kind": "date",
        "year": day.year,
        "date": day.isoformat(),
        "opens_archive": _opens(day, today, days),
        **_days(day, day),
    }


def _days(first, last):
    """The days a signal names, first and last (ISO), for ranking by closeness in time."""
    return {"first_day": first.isoformat(), "last_day": last.isoformat()}


def _month_year(year_group, month_group, named):
    def handler(m, text, today, days):
        year = int(m.group(year_group))
        month = MONTHS[m.group(month_group).lower()] if named else int(m.group(month_group))
        if not 1 <= month <= 12:
            return None
        first = datetime.date(year, month, 1)
        last = datetime.date(year, month, calendar.monthrange(year, month)[1])
        return {
            "kind": "month_year",
            "year": year,
            "month": month,
            "opens_archive": _opens(first, today, days),
            **_days(first, last),
        }

    return handler


def _century_span(first, m, today, days):
    """A century's signal from its first year; "early", "mid" or "late" narrow it to a third."""
    mod = (m.group("mod") or "").lower()
    first, last = {
        "early": (first, first + 32),
        "mid": (first + 33, first + 65),
        "late": (first + 66, first + 99),
    }.get(mod, (first, first + 99))
    return {
        "kind": "century",
        "first": first,
        "last": last,
        "opens_archive": _opens(datetime.date(first, 1, 1), today, days),
        **_year_days(first, last),
    }


def _decade(m, text, today, days):
    if m.group("full"):
        first = int(m.group("full"))
        if first % 100 == 0 and first < 2000:  # "the 1800s": the century
            if not (m.group("the") or m.group("mod")) and _OF_AFTER.match(text, m.end()):
                return None  # "1000s of files": a count
            return _century_span(first, m, today, days)
    elif m.group("hundreds"):
        first = _HUNDREDS_WORDS[m.group("hundreds").lower()] * 100 + _DECADE_WORDS[m.group("word").lower()]
    else:
        short = int(m.group("short")) if m.group("short") else _DECADE_WORDS[m.group("word").lower()]
        first = 2000 + short if 2000 + short <= today.year else 1900 + short
        if not m.group("the") and _POSSESSIVE_BEFORE.search(text[max(0, m.start() - 12) : m.start()]):
            return None  # "my 30s", "in her nineties": an age
    return {
        "kind": "decade",
        "first": first,
        "last": first + 9,
        "opens_archive": _opens(datetime.date(first, 1, 1), today, days),
        **_year_days(first, first + 9),
    }


def _century(m, text, today, days):
    if m.group("number"):
        number = int(m.group("number"))
    else:
        number = _CENTURY_WORDS[" ".join(m.group("word").lower().split())]
    if not 11 <= number <= 21:
        return None  # before the year 1000, or a century still to come
    return _century_span((number - 1) * 100, m, today, days)


def _hundreds(m, text, today, days):
    return _century_span(_HUNDREDS_WORDS[m.group("word").lower()] * 100, m, today, days)


def _bare_year(m, text, today, days):
    year = int(m.group(1))
    if not _reads_as_year(text, m.start(), m.end(), year, today):
        return None
    opens = year < today.year and _opens(datetime.date(year, 1, 1), today, days)
    return {"kind": "year", "year": year, "opens_archive": opens, **_year_days(year, year)}


def _ago(m, text, today, days):
    unit = m.group("unit").lower()
    raw = " ".join((m.group("amount") or "").lower().split())
    approximate = not raw or raw in _VAGUE_AMOUNTS
    if not raw:
        amount = 2  # "years ago": at least two
    elif raw.isdigit():
        amount = int(raw)
    else:
        amount = _VAGUE_AMOUNTS.get(raw) or _NUMBER_WORDS[raw]
    if unit in _UNIT_DAYS:
        back = min(amount * _UNIT_DAYS[unit], (today - datetime.date.min).days)
        day = today - datetime.timedelta(days=back)
    else:
        day = _minus_months(today, amount * {"month": 1, "year": 12, "decade": 120}[unit])
    return {
        "kind": "relative",
        "unit": unit,
        "amount": amount,
        "approximate": approximate,
        "days_ago": (today - day).days,
        "year": None if approximate or day.year < MIN_YEAR else day.year,
        "opens_archive": _opens(day, today, days),
        **({} if approximate or day.year < MIN_YEAR else _around(day, unit)),
    }


def _last(m, text, today, days):
    if m.group("before"):
        unit, amount, day = "year", 2, datetime.date(today.year - 2, 1, 1)
    else:
        unit, amount = m.group("unit").lower(), 1
        if unit == "year":
            day = datetime.date(today.year - 1, 1, 1)
        elif unit == "month":
            day = _minus_months(today.replace(day=1), 1)
        else:
            day = today - datetime.timedelta(days=7)
    if unit == "week":  # the calendar week before this one, Monday to Sunday
        monday = today - datetime.timedelta(days=today.weekday() + 7)
        named = _days(monday, monday + datetime.timedelta(days=6))
    else:
        named = _around(day, unit)
    return {
        "kind": "relative",
        "unit": unit,
        "amount": amount,
        "approximate": False,
        "days_ago": (today - day).days,
        "year": day.year,
        "opens_archive": _opens(day, today, days),
        **named,
    }


def _this(m, text, today, days):
    unit = m.group("unit").lower()
    if unit == "year":
        first = today.replace(month=1, day=1)
    elif unit == "month":
        first = today.replace(day=1)
    else:
        first = today - datetime.timedelta(days=today.weekday())
    return {
        "kind": "relative", "unit": unit, "amount": 0, "approximate": False, "days_ago": 0,
        "year": today.year, "opens_archive": False, **_days(first, today),
    }  # fmt: skip


def _past(m, text, today, days):
    unit = m.group("unit").lower()
    raw = " ".join((m.group("amount") or "").lower().split())
    amount = int(raw) if raw.isdigit() else (_VAGUE_AMOUNTS.get(raw) or _NUMBER_WORDS.get(raw) or 1)
    if unit in _UNIT_DAYS:
        first = today - datetime.timedelta(
            days=min(amount * _UNIT_DAYS[unit], (today - datetime.date.min).days)
        )
    else:
        first = _minus_months(today, amount * (12 if unit == "year" else 1))
    return {
        "kind": "relative", "unit": unit, "amount": amount, "approximate": False,
        "days_ago": (today - first).days, "year": first.year if first.year >= MIN_YEAR else None,
        "opens_archive": _opens(first, today, days), **_days(first, today),
    }  # fmt: skip


def _quarter(m, text, today, days):
    number = int(m.group("q")) if m.group("q") else _QUARTER_ORDINALS[m.group("ordinal").lower()]
    year = int(m.group(3)) if m.group(3) else today.year
    first = datetime.date(year, 3 * number - 2, 1)
    last = _minus_months(first, -3) - datetime.timedelta(days=1)
    return {
        "kind": "month_year",
        "year": year,
        "opens_archive": _opens(first, today, days),
        **_days(first, last),
    }


def _year_days(first, last):
    return _days(datetime.date(first, 1, 1), datetime.date(last, 12, 31))


def _around(day, unit):
    """The days "N units ago" names: that day, the week around it, its calendar month or year,
    the decade around it."""
    if unit == "day":
        return _days(day, day)
    if unit == "week":
        return _days(day - datetime.timedelta(days=3), day + datetime.timedelta(days=3))
    if unit == "month":
        return _days(day.replace(day=1), day.replace(day=calendar.monthrange(day.year, day.month)[1]))
    if unit == "year":
        return _year_days(day.year, day.year)
    return _year_days(max(MIN_YEAR, day.year - 5), day.year + 4)


_PATTERNS = [
    (_ISO_DATE, _iso_date),
    (_DAY_MONTH_YEAR, _named_date(1, 2, 3)),
    (_MONTH_DAY_YEAR, _named_date(2, 1, 3)),
    (_NUMERIC_DATE, _numeric_date),
    (_QUARTER, _quarter),
    (_MONTH_NAME_YEAR, _month_year(2, 1, named=True)),
    (_YEAR_MONTH, _month_year(1, 2, named=False)),
    (_MONTH_SLASH_YEAR, _month_year(2, 1, named=False)),
    (_CENTURY, _century),
    (_HUNDREDS, _hundreds),
    (_DECADE, _decade),
    (_DAY_MONTH, _day_month),
    (_MONTH_DAY, _day_month),
    (_MONTH_ALONE, _month_alone),
    (_BARE_YEAR, _bare_year),
    (_PAST, _past),
    (_LAST, _last),
    (_THIS, _this),
    (_AGO, _ago),
    (_DAY_BACK, _day_back),
]


def cue_pattern(cues):
    """One regex for the configured cue phrases, longest first, and the phrase for each
    normalised spelling. Blank phrases are skipped."""
    if not isinstance(cues, list) or not all(isinstance(c, str) for c in cues):
        raise ValueError("temporal cues must be a list of strings")
    if len(cues) > MAX_CUES:
        raise ValueError(f"at most {MAX_CUES} temporal cues, not {len(cues)}")
    phrases = {}
    for cue in cues:
        words = cue.split()
        if not words:
            continue
        if len(cue) > MAX_CUE_CHARS:
            raise ValueError(f"temporal cue longer than {MAX_CUE_CHARS} characters: {cue[:40]!r}...")
        phrases.setdefault(" ".join(words).lower(), cue.strip())
    if not phrases:
        return None, {}
    alternatives = [
        r"\s+".join(re.escape(w) for w in key.split()) for key in sorted(phrases, key=lambda k: (-len(k), k))
    ]
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.I), phrases


# What any day, week or month detect reads has in it: figures parted by - / or . (a numeric
# date), a month's name, or a word of a day, week, month, year or quarter ("yesterday", "on
# Tuesday", "two weeks ago", "last month"); a bare year or "Q3" spans more than a month.
_MAY_STATE_A_DAY = re.compile(
    r"[0-9][-/.][0-9]|day|week|month|year|decade|quarter|(?<!\w)" + MONTH_PATTERN, re.I
)


def may_state_a_day(text):
    """Whether text may state a day, a week or a month that detect reads: without one of
    _MAY_STATE_A_DAY's forms it states none, and detect (about 0.45 ms a passage) need not run."""
    return bool(_MAY_STATE_A_DAY.search(text or ""))


def detect(query, cues, today, archive_after_days=365, numeric_order="dmy"):
    """The temporal signals of `query` (see the module docstring); numeric_order ('dmy' or
    'mdy', the setting banding.numeric_date_order) reads a numeric date both ways of which are
    dates."""
    if numeric_order not in ("dmy", "mdy"):
        raise ValueError(f"numeric_order must be 'dmy' or 'mdy', not {numeric_order!r}")
    if (
        not isinstance(archive_after_days, int)
        or isinstance(archive_after_days, bool)
        or archive_after_days < 0
    ):
        raise ValueError(f"archive_after_days must be a non-negative integer, not {archive_after_days!r}")
    query = query or ""
    text = _clean(query[:SCAN_CHARS])
    claimed = []

    def free(start, end):
        return all(end <= s or start >= e for s, e in claimed)

    signals = []
    for pattern, handler in _PATTERNS:
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            if handler is _numeric_date:
                found = handler(m, text, today, archive_after_days, numeric_order)
            else:
                found = handler(m, text, today, archive_after_days)
            if found:
                claimed.append((m.start(), m.end()))
                kind = found.pop("kind")
                signals.append(
                    {"kind": kind, "text": m.group(0), "start": m.start(), "end": m.end(), **found}
                )

    pattern, phrases = cue_pattern(cues)
    cue_signals = []
    if pattern:
        for m in pattern.finditer(text):
            if free(m.start(), m.end()):
                key = " ".join(m.group(0).split()).lower()
                cue = phrases.get(key, key)
                cue_signals.append(
                    {"kind": "cue", "text": m.group(0), "start": m.start(), "end": m.end(), "cue": cue}
                )

    starts = {s["start"] for s in signals if s["kind"] in ("date", "month_year", "decade", "century", "year")}
    for signal in cue_signals:
        gap = _ANCHOR_GAP.match(text, signal["end"]).end()
        if gap in starts:
            signal["anchored"] = "time"
        elif _PRESENT_AFTER.match(text, signal["end"]):
            signal["anchored"] = "present"
        else:
            signal["anchored"] = None
        signal["opens_archive"] = signal["anchored"] is None
    signals = sorted(signals + cue_signals, key=lambda s: s["start"])

    years = set()
    for s in signals:
        if s["kind"] in ("decade", "century"):
            years.update((s["first"], s["last"]))
        elif s.get("year") is not None:
            years.add(s["year"])
    named = [s for s in signals if "first_day" in s]
    return {
        "signal": bool(signals),
        "opens_archive": any(s["opens_archive"] for s in signals),
        "years": sorted(years),
        "span": {
            "first": min(s["first_day"] for s in named),
            "last": max(s["last_day"] for s in named),
        }
        if named
        else None,
        "truncated": len(query) > SCAN_CHARS,
        "signals": signals,
    }
