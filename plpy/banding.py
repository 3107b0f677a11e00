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
6. a date or year in the path;
7. the file's modification time.

Years run from 1000 to today. A full date ("1803-03-04", "4 March 1803", "March 4, 1803",
"04-MAR-1803") is a date wherever it stands; a bare year counts only where it reads as a year
(year_in_line) and never next to a currency, a label such as "room" or "No.", or a noun
("1500 people", "1850 km"). A canonical document is current unless its frontmatter says otherwise.
"""

import datetime
import json
import posixpath
import re

from months import MONTH_PATTERN, MONTHS

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


def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}


_YEAR = r"(1\d{3}|20\d\d)"
_DATE_PATTERNS = [
    (re.compile(r"(?<![\d.])" + _YEAR + r"-(\d\d)-(\d\d)(?!\d)"), ("y", "m", "d")),
    (
        re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH_PATTERN + r",?\s+" + _YEAR + r"(?!\d)", re.I),
        ("d", "M", "y"),
    ),
    (
        re.compile(r"\b" + MONTH_PATTERN + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR + r"(?!\d)", re.I),
        ("M", "d", "y"),
    ),
    (re.compile(r"\b(\d{1,2})-" + MONTH_PATTERN + r"-" + _YEAR + r"(?!\d)", re.I), ("d", "M", "y")),
]
_PATH_DATE = re.compile(r"(?<!\d)" + _YEAR + r"[-_.]?(\d\d)[-_.]?(\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)" + _YEAR + r"(?!\d)")
_PATH_PART_YEAR = re.compile(r"(?<![^/])\d{4}(?:[-_ .]|/|$)")

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


def _make_date(fields, order):
    values = dict(zip(order, fields, strict=False))
    month = MONTHS[values["M"].lower()] if "M" in values else int(values["m"])
    try:
        return datetime.date(int(values["y"]), month, int(values["d"]))
    except ValueError:
        return None


def _year_date(year, today, month=None):
    """A year (or a month of it) as a day: 1 July (or the month's first), never after today."""
    return min(datetime.date(year, month or 7, 1), today)


def full_dates(text, today):
    """[(start, date, matched, "date")]: the full dates in text, FIRST_YEAR to today, in order."""
    found = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = _make_date(m.groups(), order)
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


def parse_date(value, today=None):
    """A date from a frontmatter or metadata value: a date or datetime, an ISO string, a full
    date in words (an email's "Mon, 01 Jan 2001 ..." too), a year alone (as 1 July) or a year
    and month (as its first day); None if none."""
    today = today or datetime.date.today()
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and FIRST_YEAR <= value <= today.year:
        return _year_date(value, today)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)", text)
    if m:
        return _make_date(m.groups(), ("y", "m", "d")) if int(m.group(1)) >= FIRST_YEAR else None
    m = re.fullmatch(r"(\d{4})(?:-(\d\d))?", text)
    if m:
        year = int(m.group(1))
        month = int(m.group(2)) if m.group(2) and 1 <= int(m.group(2)) <= 12 else None
        return _year_date(year, today, month) if FIRST_YEAR <= year <= today.year else None
    found = full_dates(text, datetime.date.max)
    return found[0][1] if found else None


def metadata_date(metadata, mtime_ns, today):
    """(date, reason) from the format's own metadata, or None: metadata["date"] unless it is before
    FIRST_YEAR, a tool's default, after today, or after the file's mtime (with MTIME_SLACK)."""
    day = parse_date(metadata.get("date"), today)
    if day is None or day.year < FIRST_YEAR or day in TOOL_DEFAULT_DATES or day > today:
        return None
    if day > _mtime_date(mtime_ns) + MTIME_SLACK:
        return None
    source = metadata.get("date_source") or "format metadata"
    return day, "metadata date '" + day.isoformat() + "' (" + str(source) + ")"


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


def date_in_head(title, text, today):
    """(date, reason) from the title or the first lines, or None: in each, in order, the first
    full date or year that reads as one (a year as 1 July, a month and year as its first day)."""
    for where, lines in (("title", [title] if title else []), ("first lines", _head_lines(text))):
        for line in lines:
            hits = full_dates(line, today)[:1] + [hit for hit in [year_in_line(line, today)] if hit]
            if hits:
                _start, day, matched, kind = min(hits)
                return day, kind + " in " + where + " '" + matched + "'"
    return None


def date_in_text(text, today):
    """(start, date, matched, kind): the first full date in the opening of the text, not in the future."""
    found = full_dates(text[:TEXT_DATE_SEARCH_CHARS], today)
    return found[0] if found else None


def date_at_end(text, today):
    """(start, date, matched, kind): the last full date in the closing lines (a signature, a trailer)."""
    found = full_dates(text[-CLOSING_CHARS:], today)
    return found[-1] if found else None


def date_in_path(path, today):
    """A full date in the file name or folders, else the last year in them (as 1 July). A year
    before 1900 counts only as a whole folder or the start of a name ("1848/", "1848-letter.txt"),
    not inside one ("ticket-1500.txt")."""
    for m in _PATH_DATE.finditer(path):
        day = _make_date(m.groups(), ("y", "m", "d"))
        if day and day <= today:
            return day, "date in path '" + m.group(0) + "'"
    years = [
        int(m.group(1))
        for m in _PATH_YEAR.finditer(path)
        if int(m.group(1)) <= today.year
        and (int(m.group(1)) >= 1900 or _PATH_PART_YEAR.match(path, m.start()))
    ]
    if years:
        return _year_date(years[-1], today), "year in path '" + str(years[-1]) + "'"
    return None


def _mtime_date(mtime_ns):
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()


def written_date(frontmatter, text, path, mtime_ns, today, metadata=None):
    """(date, reason): when the document was written, and how that was found (the module's order)."""
    metadata = metadata or {}
    day = parse_date(frontmatter.get("date"), today)
    if day:  # the person's word, even for a day still to come
        return day, "frontmatter date"
    hit = metadata_date(metadata, mtime_ns, today)
    if hit:
        return hit
    title = metadata.get("title")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    hit = date_in_head(title if isinstance(title, str) and title != stem else None, text, today)
    if hit:
        return hit
    hit = date_in_text(text, today)
    if hit:
        return hit[1], "date in text '" + hit[2] + "'"
    hit = date_at_end(text, today)
    if hit:
        return hit[1], "date in closing lines '" + hit[2] + "'"
    hit = date_in_path(path, today)
    if hit:
        return hit
    return _mtime_date(mtime_ns), "file modification time"


def band_for(frontmatter, text, path, mtime_ns, canonical, today, current_days, recent_days, metadata=None):
    """{band, source, reason, written_at} for one document; metadata: the format's own (title, date)."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today, metadata)
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
