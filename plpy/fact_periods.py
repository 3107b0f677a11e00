"""When a declared fact held, as its value says (stdlib only).

Inlined into plpython3u (`# exo:include fact_periods`, sql/620_declared_facts.sql) and
importable as plain Python for tests. The dates are found by plpy/temporal.py.

Only two kinds of expression set a value's validity; any other date in it is content ("born
14 July 1988", "adopted 13 March 2021"), and such a value holds from its document's date:

- a start: "since" before a date ("since 15 August 2020": from that day; "since March 2019":
  from its first day; "since 2011": from 1 January), or a range to the present ("2016 to
  present", "March 2016 - now"): open, still valid;
- a closed range: two dates joined by "-", an en or em dash, "to", "until", "till" or
  "through", with an optional "from" before the first ("April 2013 to August 2020", "(2011 to April 2013)",
  "2012-2016", "from March 2016 until June 2022"): valid from the first date's first day until
  the end of the second date's period, exclusive ("to August 2020" holds through August:
  valid_to 2020-09-01; "to 2016": 2017-01-01; "to 15 August 2020": 2020-08-16). A range that runs
  backwards is no range.

A date is a day, a month or a year with its year written out (ISO 2020-08-15, "15 August 2020",
"August 15, 2020", "Aug 2020", "2020-08", "2020", in the numeric order given for "02/03/2020");
"since June" or "since the 1990s" set nothing. The first such expression in a value is its
period.

History: an attribute `previous_x`, `former_x` or `past_x` (normalised; x's simple English
plural made singular: "previous_addresses" -> "address") lists past values of the line `x`.
Its items are separated by ";" (outside parentheses), and by ", " only where every item then
has a closed range of its own (a frontmatter list is joined with ", "). Each item with a closed
range is a closed row of `x`; its value is the item without the range (and without the
parentheses the range leaves empty): "14 Fenwick Street, Flat 3, Larkhaven (April 2013 to August
2020)" -> "14 Fenwick Street, Flat 3, Larkhaven". An item without one is no history. The
`previous_x` fact itself stays as declared, valid from the document's date: its dates belong
to its items.
"""

import datetime
import re

from temporal import detect

# The signals of temporal.detect that date a period, when their text writes the year out
# ("24 June" or "in March" are read against today, which a document's value is not about).
PERIOD_KINDS = ("date", "month_year", "year")
_WRITTEN_YEAR = re.compile(r"[0-9]{4}")
_SINCE_BEFORE = re.compile(r"(?<!\w)since\s+(?:the\s+)?$", re.I)
_FROM_BEFORE = re.compile(r"(?<!\w)from\s+(?:the\s+)?$", re.I)
_PERIOD_JOIN = re.compile(r"\s*(?:-|\u2013|\u2014|to|until|till|through|thru)\s*(?:the\s+)?", re.I)
_TO_PRESENT = re.compile(
    r"\s*(?:-|\u2013|\u2014|to|until|till|through)\s*(?:the\s+)?(?:present|now|today|date)(?!\w)", re.I
)
_LOOK_BACK = 16  # characters read before a date for "since" or "from"
_HISTORY_ATTRIBUTE = re.compile(r"^(?:previous|former|past)_(\w+)$")


def _period_dates(value, today, numeric_order):
    """The dates of `value` that may bound a period, in order: (start, end, first day, last day)."""
    found = detect(value, [], today, numeric_order=numeric_order)["signals"]
    return [
        (
            s["start"],
            s["end"],
            datetime.date.fromisoformat(s["first_day"]),
            datetime.date.fromisoformat(s["last_day"]),
        )
        for s in found
        if s["kind"] in PERIOD_KINDS and _WRITTEN_YEAR.search(s["text"])
    ]


def stated_period(value, today, numeric_order="dmy"):
    """The period `value` states (see the module docstring), or None: {"valid_from": date,
    "valid_to": date (exclusive) or None (still valid), "start", "end": the expression's offsets
    in `value`, "since" or "from" included}. `today` bounds the years read (temporal.detect)."""
    dates = _period_dates(value or "", today, numeric_order)
    for i, (start, end, first, _) in enumerate(dates):
        ahead = dates[i + 1] if i + 1 < len(dates) else None
        if ahead and _PERIOD_JOIN.fullmatch(value, end, ahead[0]) and ahead[3] >= first:
            before = _FROM_BEFORE.search(value, max(0, start - _LOOK_BACK), start)
            return {
                "valid_from": first,
                "valid_to": ahead[3] + datetime.timedelta(days=1),
                "start": before.start() if before else start,
                "end": ahead[1],
            }
        present = _TO_PRESENT.match(value, end)
        if present:
            before = _FROM_BEFORE.search(value, max(0, start - _LOOK_BACK), start)
            return {
                "valid_from": first,
                "valid_to": None,
                "start": before.start() if before else start,
                "end": present.end(),
            }
        since = _SINCE_BEFORE.search(value, max(0, start - _LOOK_BACK), start)
        if since:
            return {"valid_from": first, "valid_to": None, "start": since.start(), "end": end}
    return None


def singular_attribute(attribute):
    """An attribute with the simple English plural of its last word made singular
    ("addresses" -> "address", "employers" -> "employer", "companies" -> "company"); a word in
    -ss, -us or -is is left as it is ("address", "status", "analysis")."""
    if re.search(r"(?:ss|sh|ch|x|z)es$", attribute):
        return attribute[:-2]
    if re.search(r"[^aeiou]ies$", attribute):
        return attribute[:-3] + "y"
    if attribute.endswith("s") and not re.search(r"(?:ss|us|is)$", attribute):
        return attribute[:-1]
    return attribute


def history_line(attribute):
    """The attribute whose past values `attribute` lists (previous_addresses -> address), or None."""
    m = _HISTORY_ATTRIBUTE.match(attribute or "")
    if not m:
        return None
    line = singular_attribute(m.group(1))
    return line or None


def _split_outside_brackets(text, separator):
    """`text` cut at each `separator` that stands outside parentheses and brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i = i + len(separator)
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _closed(period):
    return period is not None and period["valid_to"] is not None


def _without(item, period):
    """The item's value: its text without the range, nor the parentheses or punctuation the
    range leaves behind."""
    text = item[: period["start"]] + item[period["end"] :]
    text = re.sub(r"\(\s*[;,:]?\s*", "(", text)
    text = re.sub(r"\s*[;,:]?\s*\)", ")", text)
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text)
    text = re.sub(r"\s+([,;:.)\]])", r"\1", text)
    text = re.sub(r"\s{2,}", " ", text)
    return text.strip(" \t,;:-\u2013\u2014")


def history_items(value, today, numeric_order="dmy"):
    """The past values a previous_x value lists that have a closed range of their own:
    [(value without the range, valid_from, valid_to)], in the value's order."""
    items = []
    for part in _split_outside_brackets(value or "", ";"):
        pieces = _split_outside_brackets(part, ", ")
        if len(pieces) > 1 and all(_closed(stated_period(p, today, numeric_order)) for p in pieces):
            items += pieces
        else:
            items.append(part)
    found = []
    for item in items:
        period = stated_period(item, today, numeric_order)
        if _closed(period):
            text = _without(item, period)
            if text:
                found.append((text, period["valid_from"], period["valid_to"]))
    return found


def fact_periods(attributes, values, today, numeric_order="dmy"):
    """The rows a document's declared facts make (attributes[i] with values[i]): for each fact,
    {"n": i + 1, "attribute", "value", "valid_from", "valid_to"} with the period its value
    states (valid_from None: the document's date; valid_to None: still valid), and after a
    previous_x fact (valid from the document's date) the closed rows of x its items give."""
    if numeric_order not in ("dmy", "mdy"):
        raise ValueError(f"numeric_order must be 'dmy' or 'mdy', not {numeric_order!r}")
    rows = []
    for n, (attribute, value) in enumerate(zip(attributes, values, strict=True), start=1):
        line = history_line(attribute)
        period = None if line else stated_period(value, today, numeric_order)
        rows.append(
            {
                "n": n,
                "attribute": attribute,
                "value": value,
                "valid_from": period and period["valid_from"],
                "valid_to": period and period["valid_to"],
            }
        )
        if line:
            for text, first, until in history_items(value, today, numeric_order):
                rows.append(
                    {"n": n, "attribute": line, "value": text, "valid_from": first, "valid_to": until}
                )
    return rows
