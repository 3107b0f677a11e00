"""Temporal banding of a document (stdlib only).

Authority order for the band: frontmatter `band`, then inference from the date
the document was written. That date comes from frontmatter `date`, else the
first full date in the text, else a date or year in the path, else the file's
modification time. A canonical document is current unless its frontmatter says otherwise.
"""

import datetime
import json
import re

from months import MONTH_PATTERN, MONTHS

BANDS = ("current", "recent", "archival")


def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}


_DATE_PATTERNS = [
    (re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b"), ("y", "m", "d")),
    (
        re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH_PATTERN + r",?\s+((?:19|20)\d\d)\b", re.I),
        ("d", "M", "y"),
    ),
    (
        re.compile(r"\b" + MONTH_PATTERN + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.I),
        ("M", "d", "y"),
    ),
]
_PATH_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)[-_.]?(\d\d)[-_.]?(\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
TEXT_DATE_SEARCH_CHARS = 1000


def _make_date(fields, order):
    values = dict(zip(order, fields, strict=False))
    month = MONTHS[values["M"].lower()] if "M" in values else int(values["m"])
    try:
        return datetime.date(int(values["y"]), month, int(values["d"]))
    except ValueError:
        return None


def parse_date(value):
    """A date from a frontmatter value: a date, a datetime, or an ISO string."""
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        m = re.match(r"^\s*((?:19|20)\d\d)-(\d\d)-(\d\d)", value)
        if m:
            return _make_date(m.groups(), ("y", "m", "d"))
    return None


def date_in_text(text, today):
    """The first full date in the opening of the text that is not in the future."""
    opening = text[:TEXT_DATE_SEARCH_CHARS]
    found = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(opening):
            day = _make_date(m.groups(), order)
            if day and day <= today:
                found.append((m.start(), day, m.group(0)))
    return min(found) if found else None


def date_in_path(path, today):
    """A full date in the file name or folders, else a year folder/prefix (as 1 July)."""
    for m in _PATH_DATE.finditer(path):
        day = _make_date(m.groups(), ("y", "m", "d"))
        if day and day <= today:
            return day, "date in path '" + m.group(0) + "'"
    years = [int(y) for y in _PATH_YEAR.findall(path) if int(y) <= today.year]
    if years:
        return datetime.date(years[-1], 7, 1), "year in path '" + str(years[-1]) + "'"
    return None


def written_date(frontmatter, text, path, mtime_ns, today):
    """(date, reason): when the document was written, and how that was found."""
    day = parse_date(frontmatter.get("date"))
    if day:
        return day, "frontmatter date"
    hit = date_in_text(text, today)
    if hit:
        return hit[1], "date in text '" + hit[2] + "'"
    hit = date_in_path(path, today)
    if hit:
        return hit
    mtime = datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()
    return mtime, "file modification time"


def band_for(frontmatter, text, path, mtime_ns, canonical, today, current_days, recent_days):
    """{band, source, reason, written_at} for one document."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today)
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
