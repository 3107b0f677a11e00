"""The passages of the days a question names: a packet for "What did I pay for on 04/03/2025?"
cites the notes of that day, not the next week's notes that share its words.

Inlined into exo_private.build_packet (`# exo:include passage_days`), which passes
of_named_days to search.packet; importable as plain Python for the tests. Kept out of
plpy/search.py so that the functions that inline search do not inline the temporal parser too.
"""

import datetime

from search import named_days, said
from temporal import detect, may_state_a_day


def of_named_days(ranked, span, as_of=None, numeric_order="dmy"):
    """The candidates of the days a question names (named_days: a day, a week, a month), when any
    is: written on them (a chat window: a message sent on them), or stating one of them in their
    text (temporal.detect; "yesterday" read from the passage's own day, or from as_of, the
    search's day, for a passage of no day). A note of the next week that shares the question's
    words answers nothing of the day asked about. All of ranked when the question names no such
    days or none is of them."""
    days = named_days(span)
    if not days:
        return ranked
    first, last = days

    def within(day):
        return first <= datetime.date.fromisoformat(day[:10]).toordinal() <= last

    def of_the_days(c):
        sent = [t for t in (c.get("chat") or {}).get("sent_at") or [] if t]
        if any(within(t) for t in sent or [c.get("written_at") or "0001-01-01"]):
            return True
        text = said(c["body"]) if c.get("chat") else c["body"]
        if not may_state_a_day(text):
            return False
        written = c.get("written_at") or as_of
        today = datetime.date.fromisoformat(written[:10]) if written else datetime.date.today()
        stated = detect(text, [], today, numeric_order=numeric_order)
        return any(
            s.get("first_day") and within(s["first_day"]) and within(s["last_day"]) for s in stated["signals"]
        )

    kept = [c for c in ranked if of_the_days(c)]
    return kept or ranked
