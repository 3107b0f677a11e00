"""Temporal banding of a document (stdlib only).

Authority order for the band: frontmatter `band`, then inference from the date the document
was written. That date comes from the best evidence present, in this order, and the reason
names the source:

1. frontmatter `date`;
2. the format's own metadata (metadata["date"]: an email's Date header, a PDF's creation date,
   DOCX/ODT core properties, EPUB dc:date, HTML meta tags), unless it is a tool's default
   (TOOL_DEFAULT_DATES, the epochs) or later than the file's modification time;
3. a date or year in the title or the first lines (HEAD_LINES lines of at most HEAD_LINE_CHARS);
4. the first full date in the opening of the text (TEXT_DATE_SEARCH_CHARS);
5. the last full date in the closing lines (CLOSING_CHARS: a signature or a trailer);
6. a date, month or year in the path: a full date in one folder or the file name, or one spread
   over them ("2025/06/24.md", "2025-06/24 notes.md", "journal/2025/June/24.md");
7. the file's modification time.

Precision beats that order where they agree: a year (or a month) from one source gives way to
a month or a full date of that year (and month) from a source lower down ("2025" in the first
line, "2025-04-09.md" the file name: 2025-04-09, by the path). The file's modification time
never refines anything. A year alone is kept as 1 July, a month alone as its first day (as
"June 2025" always was): a weekday in a month's folder ("2025-06/Tuesday.md") says which month,
not which Tuesday.

Years run from 1000 to today. A full date is a date wherever it stands: "1803-03-04",
"1803/03/04", "1803.03.04", "4 March 1803", "4th of March, 1803", "March 4th, 1803", "04-MAR-1803",
a weekday before any of them, and the numeric "04/03/1803", "04-03-1803", "04.03.1803", read
day first or month first by the setting banding.numeric_date_order ('dmy' or 'mdy') where both
numbers are 12 or less, and as the only possible date where one is over 12. A bare year counts
only where it reads as a year (year_in_line) and never next to a currency, a label such as
"room" or "No.", or a noun ("1500 people", "1850 km"). A canonical document is current unless
its frontmatter says otherwise.
"""

import datetime
import json
import posixpath
import re

from months import MONTH_PATTERN, MONTHS, WEEKDAY_PATTERN, WEEKDAYS

BANDS = ("current", "recent", "archival")
FIRST_YEAR = 1000
TEXT_DATE_SEARCH_CHARS = 1000
CLOSING_CHARS = 500
HEAD_LINES = 3
HEAD_LINE_CHARS = 200
#: Dates that formats and tools write when nobody set one: the Unix, DOS/zip, Mac, Windows and
#: spreadsheet epochs, and the creation dates of python-docx's and python-pptx's templates.
TOOL_DEFAULT_DATES = frozenset(
    datetime.date(*ymd)
    for ymd in [
        (1970, 1, 1), (1980, 1, 1), (1904, 1, 1), (1601, 1, 1), (1899, 12, 30), (1899, 12, 31),
        (1900, 1, 1), (2013, 12, 23), (2013, 1, 27),
    ]
)  # fmt: skip
#: Metadata dates may be written in another time zone than the file's mtime: a day of slack.
MTIME_SLACK = datetime.timedelta(days=1)


NUMERIC_DATE_ORDERS = ("dmy", "mdy")
"""banding.numeric_date_order: how "04/03/1803" reads when both numbers could be the month."""


def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}


def numeric_order(value):
    """The banding.numeric_date_order setting checked: 'dmy' or 'mdy'."""
    order = str(value).strip().lower()
    if order not in NUMERIC_DATE_ORDERS:
        raise ValueError("banding.numeric_date_order must be 'dmy' or 'mdy', not " + repr(value))
    return order


#: Precisions of a date found: a day and month without a year, a year alone, a month of a year,
#: a day.
DAY_OF_MONTH, YEAR, MONTH, DAY = 0, 1, 2, 3

_Y = r"1\d{3}|20\d\d"
_YEAR = "(" + _Y + ")"
_ORDINAL = r"(?:st|nd|rd|th)?"
#: After a numeric date: no more digits, nor a separator and a digit (a version "2020.03.04-1").
_NUMERIC_END = r"(?!\d|[-/.]\d)"
_MONTH_NAME = "(?P<M>" + MONTH_PATTERN + ")"
#: Named groups: y year, m month number, M month name, d day; a and b the two numbers of a
#: numeric day and month, in the order written. Dotted dates take two-digit days and months only
#: ("24.06.2025", not the version "8.2.1909"). Each pattern is a sequence of bounded pieces (no
#: nested repetition): linear time.
_DATE_PATTERNS = [
    re.compile(r"(?<![\d.])(?P<y>" + _Y + r")-(?P<m>\d\d)-(?P<d>\d\d)(?!\d)"),
    re.compile(r"(?<![\d./])(?P<y>" + _Y + r")/(?P<m>\d{1,2})/(?P<d>\d{1,2})" + _NUMERIC_END),
    re.compile(r"(?<![\d./])(?P<y>" + _Y + r")\.(?P<m>\d\d)\.(?P<d>\d\d)" + _NUMERIC_END),
    re.compile(r"(?<![\w./-])(?P<a>\d{1,2})(?P<s>[-/])(?P<b>\d{1,2})(?P=s)(?P<y>" + _Y + ")" + _NUMERIC_END),
    re.compile(r"(?<![\w./-])(?P<a>\d\d)\.(?P<b>\d\d)\.(?P<y>" + _Y + ")" + _NUMERIC_END),
    re.compile(
        r"\b(?P<d>\d{1,2})" + _ORDINAL + r"\s+(?:of\s+)?" + _MONTH_NAME + r",?\s+(?P<y>" + _Y + r")(?!\d)",
        re.I,
    ),
    re.compile(
        r"\b" + _MONTH_NAME + r"\s+(?P<d>\d{1,2})" + _ORDINAL + r",?\s+(?P<y>" + _Y + r")(?!\d)", re.I
    ),
    re.compile(r"\b(?P<d>\d{1,2})-" + _MONTH_NAME + r"-(?P<y>" + _Y + r")(?!\d)", re.I),
]
_PATH_DATE = re.compile(r"(?<!\d)(?P<y>" + _Y + r")[-_.]?(?P<m>\d\d)[-_.]?(?P<d>\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)" + _YEAR + r"(?!\d)")
_PATH_PART_YEAR = re.compile(r"(?<![^/])\d{4}(?:[-_ .]|/|$)")
#: A file name's extension ("notes.md"), not the last number of a dotted date ("2025.06.24").
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
#: Whole folder or file names (fullmatch) that hold part of a date, read together in order:
#: a year ("2025"), a year and month ("2025-06", "2025 June", "June 2025"), a month under a year
#: ("06", "June", "06-June"), a day under a month ("24", "24th", "24 notes", "Tuesday 24").
_PART_YEAR = re.compile("(?P<y>" + _Y + ")")
_PART_YEAR_MONTH = [
    re.compile("(?P<y>" + _Y + r")[-_. ](?P<m>\d{1,2})"),
    re.compile("(?P<y>" + _Y + r")[-_. ]+" + _MONTH_NAME, re.I),
    re.compile(_MONTH_NAME + r"[-_. ]+(?P<y>" + _Y + ")", re.I),
]
_PART_MONTH = [
    re.compile(r"(?P<m>\d{1,2})"),
    re.compile(r"(?:\d{1,2}[-_. ]+)?" + _MONTH_NAME, re.I),
]
_WEEKDAY = "(?P<w>" + WEEKDAY_PATTERN + ")"
_PART_DAY = re.compile(
    r"(?:" + _WEEKDAY + r"[-_., ]+)?(?P<d>\d{1,2})" + _ORDINAL + r"(?:[-_., ]+[^\d\s].*)?", re.I | re.S
)
_PART_WEEKDAY = re.compile(_WEEKDAY, re.I)
#: A day and month without a year that is the whole line or name ("February 2nd", "Tuesday 24
#: June", "Tue, June 24th."): a diary's heading. Its year must come from other evidence.
_DAY_MONTH = [
    re.compile(
        r"(?:"
        + _WEEKDAY
        + r",?\s+)?(?:the\s+)?(?P<d>\d{1,2})"
        + _ORDINAL
        + r"[\s_-]+(?:of[\s_-]+)?"
        + _MONTH_NAME
        + r"[.,:;!]?",
        re.I,
    ),
    re.compile(
        r"(?:"
        + _WEEKDAY
        + r",?\s+)?"
        + _MONTH_NAME
        + r"[\s_-]+(?:the\s+)?(?P<d>\d{1,2})"
        + _ORDINAL
        + r"[.,:;!]?",
        re.I,
    ),
]


# A bare year: four digits not glued to a word, a currency sign, a reference sign ('#', '!', '@',
# '~') or a decimal or thousands separator, optionally a range ("1861-65", "1986/87", "1861-1865");
# then what stands before and after it.
_DASHES = "-\u2013\u2014"
_NOT_GLUED = r"(?<![\w$£€¥#!@~])(?<!\d[.,])"
_RANGE = r"(\s*[" + _DASHES + r"/]\s*(?:1\d{3}|20\d\d|\d\d)(?!\d))?"
_YEAR_TOKEN = re.compile(_NOT_GLUED + _YEAR + r"(?![\w%]|[.,:]\d)" + _RANGE)
_WORD_BEFORE = re.compile(r"([^\W\d_]+\.?)[\s:]*$")
#: Words after which a year reads as a year.
_YEAR_CUES = frozenset([
    "in", "of", "since", "from", "by", "until", "till", "to", "around", "circa", "c.", "ca.", "c", "ca",
    "anno", "year", "early", "late", "mid", "spring", "summer", "autumn", "fall", "winter", "dated",
    "written", *MONTHS, *(m + "." for m in MONTHS),
])  # fmt: skip
#: Labels after which four digits are a number, not a year.
_NUMBER_LABELS = frozenset([
    "no", "nr", "number", "num", "room", "rm", "flight", "page", "pages", "pp", "p", "vol", "volume",
    "chapter", "ch", "section", "sec", "route", "suite", "apt", "apartment", "box", "track", "platform",
    "gate", "bus", "line", "item", "step", "ticket", "order", "invoice", "account", "model", "version",
    "v", "ver", "release", "code", "zip", "tel", "phone", "fax", "ext", "id", "serial", "part", "lot",
    "unit", "building", "floor", "highway", "street", "st", "avenue", "ave", "road", "rd", "km", "mile",
    "miles", "issue", "exhibit", "table", "figure", "fig", "rule", "article", "art", "psalm", "hymn",
    "opus", "op", "bwv", "kv", "total", "population", "count", "sum", "score", "price", "cost", "amount",
    "balance", "capacity", "height", "altitude", "elevation", "distance", "length", "weight", "size",
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "dm", "dlrs", "dollars", "rs", "inr", "yen",
])  # fmt: skip
#: Words that may follow a year in a sentence ("in 1803 the ...", "1796 and 1797").
_FUNCTION_WORDS = frozenset([
    "and", "or", "to", "the", "a", "an", "at", "by", "for", "when", "was", "were", "is", "he", "she",
    "it", "i", "we", "they", "on", "with", "as", "that", "which", "who", "after", "before", "until",
    "till", "while",
])  # fmt: skip
_ERA = re.compile(r"(?:a\.?d\.?|c\.?e\.?)(?![\w.])", re.I)
_BEFORE_ERA = re.compile(r"(?:b\.?c\.?|b\.?c\.?e\.?)(?![\w.])", re.I)
_CLOSER = re.compile(r"[,;.)\]:!?" + _DASHES[1:] + r"]|-\s|$")
_CODE_AFTER = re.compile(r"[-/]\d")
#: Marks after which a year reads as one; a dash only spaced ("Speech - 1796", not "CVE-2023").
_CUE_MARKS = (",", "(", "[", ":", " -", "\u2013", "\u2014")
_NEXT_WORD = re.compile(r"([^\W\d_]+)")


def _make_date(fields, order="dmy"):
    """The date of a match's named groups (y with m or M and d, or y with a and b: a numeric day and
    month, read by `order` where both could be the month), or None if there is no such day."""
    if fields.get("a"):
        first, second = int(fields["a"]), int(fields["b"])
        if first > 12 and second > 12:
            return None
        day_first = first > 12 or (second <= 12 and order == "dmy")
        day, month = (first, second) if day_first else (second, first)
    else:
        day = int(fields["d"])
        month = MONTHS[fields["M"].rstrip(".").lower()] if fields.get("M") else int(fields["m"])
    try:
        return datetime.date(int(fields["y"]), month, day)
    except ValueError:
        return None


def _year_date(year, today, month=None):
    """A year (or a month of it) as a day: 1 July (or the month's first), never after today."""
    return min(datetime.date(year, month or 7, 1), today)


def full_dates(text, today, order="dmy"):
    """[(start, date, matched, "date")]: the full dates in text, FIRST_YEAR to today, in order;
    `order` ('dmy' or 'mdy') reads a numeric day and month where both could be the month."""
    found = []
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = _make_date(m.groupdict(), order)
            if day and day <= today:
                found.append((m.start(), day, m.group(0), "date"))
    return sorted(found)


def year_in_line(line, today):
    """(start, date, matched, kind) of the first bare year in one line that reads as a year, or None.

    It reads as a year after a cue ("in", "of", a month name, ...), after a comma, a spaced dash,
    a colon or an opening parenthesis, at the start of the line, or before the end of the line, a closing
    punctuation mark, an era ("AD") or a function word. Never after a number label or a currency,
    never inside a longer code ("CVE-2023-40403"), never before another word, a percent sign or
    "BC". After a month name it is that month."""
    for m in _YEAR_TOKEN.finditer(line):
        year = int(m.group(1))
        if year > today.year:
            continue
        before = line[: m.start()].rstrip()
        after = line[m.end() :].lstrip()
        cue = _WORD_BEFORE.search(before)
        word = cue.group(1).lower() if cue else ""
        if word.rstrip(".") in _NUMBER_LABELS:
            continue
        if _BEFORE_ERA.match(after):
            continue
        if _CODE_AFTER.match(after):
            continue  # part of a longer code: "CVE-2023-40403", "2019/0042"
        closes = bool(_CLOSER.match(after) or _ERA.match(after))
        next_word = _NEXT_WORD.match(after)
        if next_word and not closes and next_word.group(1).lower() not in _FUNCTION_WORDS:
            continue  # "1500 people", "1850 km", "2019 budget"
        cued = word in _YEAR_CUES or before in ("", "-") or before.endswith(_CUE_MARKS)
        if not (cued or closes):
            continue
        month = MONTHS.get(word.rstrip(".")) if cue else None
        if month:
            return cue.start(1), _year_date(year, today, month), line[cue.start(1) : m.end(1)], "month"
        return m.start(), _year_date(year, today), m.group(1), "year"
    return None


def _found(precision, day, reason, year=None, month=None):
    """One piece of evidence: (precision, date, (year, month), reason). The year and month are the
    ones written (a year or month as a day is never after today, so its date may differ)."""
    return precision, day, (year or day.year, month or day.month), reason


def _parsed(value, today, order="dmy"):
    """(precision, date, (year, month)) of a frontmatter or metadata value, or None."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        return DAY, value, (value.year, value.month)
    if isinstance(value, int) and not isinstance(value, bool) and FIRST_YEAR <= value <= today.year:
        return YEAR, _year_date(value, today), (value, None)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)", text)
    if m:
        day = _make_date({"y": m.group(1), "m": m.group(2), "d": m.group(3)})
        return (DAY, day, (day.year, day.month)) if day and day.year >= FIRST_YEAR else None
    m = re.fullmatch(r"(\d{4})(?:[-/.](\d{1,2}))?", text)
    if m:
        year = int(m.group(1))
        month = int(m.group(2)) if m.group(2) and 1 <= int(m.group(2)) <= 12 else None
    else:
        m = re.fullmatch(_MONTH_NAME + r"[\s,]+(?P<y>\d{4})", text, re.I)  # "June 2025"
        year, month = (int(m.group("y")), _month_of(m)) if m else (None, None)
    if year is not None:
        if not FIRST_YEAR <= year <= today.year:
            return None
        return (MONTH if month else YEAR), _year_date(year, today, month), (year, month)
    found = full_dates(text, datetime.date.max, order)
    return (DAY, found[0][1], (found[0][1].year, found[0][1].month)) if found else None


def parse_date(value, today=None, order="dmy"):
    """A date from a frontmatter or metadata value: a date or datetime, an ISO string, a full
    date in any form full_dates reads (an email's "Mon, 01 Jan 2001 ..." too), a year alone (as
    1 July) or a year and month ("1796-09", "1796/09", "September 1796": as its first day); None
    if none."""
    parsed = _parsed(value, today or datetime.date.today(), order)
    return parsed[1] if parsed else None


def metadata_date(metadata, mtime_ns, today, order="dmy"):
    """The format's own metadata["date"] as evidence (_found), or None: before FIRST_YEAR, a tool's
    default, after today, or after the file's mtime (with MTIME_SLACK) are no evidence."""
    parsed = _parsed(metadata.get("date"), today, order)
    if parsed is None:
        return None
    precision, day, (year, month) = parsed
    if day.year < FIRST_YEAR or day in TOOL_DEFAULT_DATES or day > today:
        return None
    if day > _mtime_date(mtime_ns) + MTIME_SLACK:
        return None
    source = metadata.get("date_source") or "format metadata"
    return _found(
        precision, day, "metadata date '" + day.isoformat() + "' (" + str(source) + ")", year, month
    )


def _head_lines(text):
    """The first HEAD_LINES non-empty lines (a heading's '#' dropped), those of at most HEAD_LINE_CHARS:
    a longer line is prose, not a title."""
    lines = []
    for line in text[: HEAD_LINES * (HEAD_LINE_CHARS + 1) * 4].splitlines():  # never split a whole book
        line = line.strip().lstrip("#").strip()
        if line:
            lines.append(line)
            if len(lines) == HEAD_LINES:
                break
    return [line for line in lines if len(line) <= HEAD_LINE_CHARS]


def dates_in_head(title, text, today, order):
    """Evidence (_found) from the title, then each first line, in the order they stand: its first
    full date and first year (or month) that reads as one; a line that is a day and month alone
    ("June 24th") as (DAY_OF_MONTH, (month, day, weekday or None), None, reason)."""
    for where, lines in (("title", [title] if title else []), ("first lines", _head_lines(text))):
        for line in lines:
            day_month = _day_month(line)
            if day_month:
                yield DAY_OF_MONTH, day_month, None, "date in " + where + " '" + line + "'"
                continue
            hits = full_dates(line, today, order)[:1] + [hit for hit in [year_in_line(line, today)] if hit]
            for _start, day, matched, kind in sorted(hits):
                reason = kind + " in " + where + " '" + matched + "'"
                if kind == "month":  # "June 2026" as of 2 March 2026 is kept as that day, still June's
                    month = MONTHS[_NEXT_WORD.match(matched).group(1).lower()]
                    yield _found(MONTH, day, reason, day.year, month)
                else:
                    yield _found(DAY if kind == "date" else YEAR, day, reason)


def _day_month(text):
    """(month, day, weekday or None) of a day and month without a year that is all of text, or None."""
    m = _fullmatch_any(_DAY_MONTH, text.strip())
    if not m or not 1 <= int(m.group("d")) <= 31:
        return None
    return MONTHS[m.group("M").rstrip(".").lower()], int(m.group("d")), _weekday_of(m)


def _weekday_of(m):
    return WEEKDAYS[m.group("w").rstrip(".").lower()] if m and m.group("w") else None


def _checked_day(year, month, day_number, today, *weekdays):
    """The day (year, month, day_number) if there is one, not after today, on each weekday named
    (None: none named); else None."""
    try:
        day = datetime.date(year, month, day_number)
    except ValueError:
        return None
    if day > today or any(w is not None and w != day.weekday() for w in weekdays):
        return None
    return day


def _with_day_of_month(coarse, day_month, weekday, today):
    """A date from a year (or month) and a day and month from elsewhere that agree with it and with
    the weekdays named (in the heading, and by the file name), or None."""
    month, day_number, named = day_month
    year, coarse_month = coarse[2]
    if coarse[0] == MONTH and month != coarse_month:
        return None
    return _checked_day(year, month, day_number, today, named, weekday)


def date_in_text(text, today, order="dmy"):
    """(start, date, matched, kind): the first full date in the opening of the text, not in the future."""
    found = full_dates(text[:TEXT_DATE_SEARCH_CHARS], today, order)
    return found[0] if found else None


def date_at_end(text, today, order="dmy"):
    """(start, date, matched, kind): the last full date in the closing lines (a signature, a trailer)."""
    found = full_dates(text[-CLOSING_CHARS:], today, order)
    return found[-1] if found else None


def _path_parts(path):
    """The folder names and the file name without its extension."""
    parts = [part for part in path.split("/") if part]
    if parts:
        parts[-1] = _EXTENSION.sub("", parts[-1]) or parts[-1]
    return parts


def _fullmatch_any(patterns, part):
    for pattern in patterns:
        m = pattern.fullmatch(part)
        if m:
            return m
    return None


def _month_of(m):
    month = MONTHS[m.group("M").rstrip(".").lower()] if m.groupdict().get("M") else int(m.group("m"))
    return month if 1 <= month <= 12 else None


def _date_across_parts(parts, today):
    """(year, month, day, shown) read from whole folder and file names in order: a year, then its
    month, then that month's day, each right after the one before ("2025/06/24", "2025-06/24
    notes", "journal/2025/June/24"); a name that is none of them ends the run."""
    year = month = day = None
    shown = []
    expect = None  # what the next name may add: "month" or "day"
    for part in parts:
        m = _fullmatch_any(_PART_YEAR_MONTH, part)
        if m and _month_of(m) and FIRST_YEAR <= int(m.group("y")) <= today.year:
            year, month, day, shown, expect = int(m.group("y")), _month_of(m), None, [part], "day"
            continue
        m = _PART_YEAR.fullmatch(part)
        if m and FIRST_YEAR <= int(m.group("y")) <= today.year:
            year, month, day, shown, expect = int(m.group("y")), None, None, [part], "month"
            continue
        if expect == "month":
            m = _fullmatch_any(_PART_MONTH, part)
            if m and _month_of(m):
                month, expect = _month_of(m), "day"
                shown.append(part)
                continue
            day_month = _day_month(part)
            if day_month:
                day = _checked_day(year, *day_month[:2], today, day_month[2])
                if day:
                    month, expect = day.month, None
                    shown.append(part)
                    continue
        elif expect == "day":
            m = _PART_DAY.fullmatch(part)
            if m:
                day = _checked_day(year, month, int(m.group("d")), today, _weekday_of(m))
                if day:
                    shown.append(m.group("d"))
                    expect = None
                    continue
        expect = None
    return year, month, day, shown


def date_in_path(path, today, order="dmy"):
    """The path's best evidence (_found): a full date in one folder or file name (the file name first, then
    the folders from the innermost), else one read across them, else a month read across them,
    else the last year in the path (as 1 July). A year before 1900 counts only as a whole folder or
    the start of a name ("1848/", "1848-letter.txt"), not inside one ("ticket-1500.txt")."""
    parts = _path_parts(path)
    for part in reversed(parts):
        hits = [
            (m.start(), day, m.group(0))
            for m in _PATH_DATE.finditer(part)
            for day in [_make_date(m.groupdict())]
            if day and day <= today
        ]
        hits += [hit[:3] for hit in full_dates(part.replace("_", " "), today, order)]
        if hits:
            _start, day, matched = min(hits)
            return _found(DAY, day, "date in path '" + matched + "'")
    year, month, day, shown = _date_across_parts(parts, today)
    if day and day <= today:
        return _found(DAY, day, "date in path '" + "/".join(shown) + "'")
    if month:
        return _found(
            MONTH, _year_date(year, today, month), "month in path '" + "/".join(shown) + "'", year, month
        )
    years = [
        int(m.group(1))
        for m in _PATH_YEAR.finditer(path)
        if int(m.group(1)) <= today.year
        and (int(m.group(1)) >= 1900 or _PATH_PART_YEAR.match(path, m.start()))
    ]
    if years:
        return _found(YEAR, _year_date(years[-1], today), "year in path '" + str(years[-1]) + "'", years[-1])
    return None


def _mtime_date(mtime_ns):
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()


def _evidence(frontmatter, text, path, mtime_ns, today, metadata, order):
    """Every piece of evidence of when the document was written, in the module's order (lazily)."""
    parsed = _parsed(frontmatter.get("date"), today, order)
    if parsed:  # the person's word, even for a day still to come
        yield _found(parsed[0], parsed[1], "frontmatter date", *parsed[2])
    found = metadata_date(metadata, mtime_ns, today, order)
    if found:
        yield found
    title = metadata.get("title")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    yield from dates_in_head(title if isinstance(title, str) and title != stem else None, text, today, order)
    hit = date_in_text(text, today, order)
    if hit:
        yield _found(DAY, hit[1], "date in text '" + hit[2] + "'")
    hit = date_at_end(text, today, order)
    if hit:
        yield _found(DAY, hit[1], "date in closing lines '" + hit[2] + "'")
    found = date_in_path(path, today, order)
    if found:
        yield found


def _refines(finer, coarser):
    """Whether `finer` is more precise than `coarser` and agrees with it (its year, and its month
    where `coarser` has one)."""
    if finer[0] <= coarser[0]:
        return False
    (year, month), (coarse_year, coarse_month) = finer[2], coarser[2]
    return year == coarse_year and (coarser[0] < MONTH or month == coarse_month)


def written_date(frontmatter, text, path, mtime_ns, today, metadata=None, numeric_date_order="dmy"):
    """(date, reason): when the document was written, and how that was found: the first evidence in
    the module's order, made more precise by any later evidence that agrees with it."""
    order = numeric_order(numeric_date_order)
    parts = _path_parts(path)
    stem_weekday = _weekday_of(_PART_WEEKDAY.fullmatch(parts[-1])) if parts else None  # "Tuesday.md"
    best, day_months = None, []
    for found in _evidence(frontmatter, text, path, mtime_ns, today, metadata or {}, order):
        if found[0] == DAY_OF_MONTH:
            day_months.append(found)
        elif best is None or _refines(found, best):
            best = found
        if best and best[0] < DAY:  # a heading's day and month with this year (and month)
            for _p, day_month, _ym, reason in day_months:
                day = _with_day_of_month(best, day_month, stem_weekday, today)
                if day:
                    best = _found(DAY, day, reason + ", year from " + best[3])
                    break
        if best and best[0] == DAY:
            break
    if best:
        return best[1], best[3]
    return _mtime_date(mtime_ns), "file modification time"


def band_for(
    frontmatter,
    text,
    path,
    mtime_ns,
    canonical,
    today,
    current_days,
    recent_days,
    metadata=None,
    numeric_date_order="dmy",
):
    """{band, source, reason, written_at} for one document; metadata: the format's own (title, date);
    numeric_date_order: the banding.numeric_date_order setting ('dmy' or 'mdy')."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today, metadata, numeric_date_order)
    declared = str(frontmatter.get("band", "")).strip().lower()
    if declared in BANDS:
        return {
            "band": declared,
            "source": "frontmatter",
            "reason": "frontmatter band",
            "written_at": written.isoformat(),
        }
    band, reason = band_by_age(written, canonical, today, current_days, recent_days, how)
    return {"band": band, "source": "inferred", "reason": reason, "written_at": written.isoformat()}


def band_by_age(written, canonical, today, current_days, recent_days, how=None):
    """(band, reason) of a document written on `written`, as of `today`: the rule both ingest
    and the daily re-banding (exo_private.reband) apply. `how` says how the date was found."""
    age = (today - written).days
    if age <= current_days:
        band = "current"
    elif age <= recent_days:
        band = "recent"
    else:
        band = "archival"
    reason = (
        "written " + written.isoformat() + (" (" + how + ")" if how else "") + ", " + str(age) + " days ago"
    )
    if canonical and band != "current":
        band = "current"
        reason += "; canonical document: never demoted by inference"
    return band, reason
