"""English month names for the date readers (stdlib only): banding and temporal."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip

#: A regex group matching any month name or abbreviation, with an optional dot.
MONTH_PATTERN = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"

WEEKDAYS = {
    name: number
    for number, names in enumerate(
        [
            ("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"), ("friday", "fri"), ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}  # fmt: skip
"""Weekday names and abbreviations, Monday 0 (datetime.date.weekday)."""

#: A regex group matching any weekday name or abbreviation, with an optional dot.
WEEKDAY_PATTERN = "(" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")\.?"
