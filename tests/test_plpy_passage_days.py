"""plpy/passage_days.py: the passages of the days a question names."""

import datetime
import pathlib

import passage_days
import temporal

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def test_a_question_of_named_days_cites_only_what_is_of_them_when_anything_is():
    def note(day, body):
        return {"chunk_id": day, "body": body, "written_at": f"{day}T00:00:00+00:00", "chat": None}

    asked = note("2025-03-04", "Swam 30 lengths. Ordered a frying pan online.")
    told_later = note("2025-03-05", "Yesterday's swim was cold; ordered a towel.")
    stated = {**note("2025-03-20", "Back on 4 March 2025 I ordered the pan."), "written_at": None}
    other = note("2025-03-06", "Ordered a notebook.")
    chat = {
        "chunk_id": "chat",
        "body": "09:00 Sam: ordered it\n09:01 Kate: ok",
        "written_at": "2025-03-03T23:00:00+00:00",
        "chat": {"sent_at": ["2025-03-03T23:00:00+00:00", "2025-03-04T08:00:00+00:00"]},
    }
    ranked = [other, asked, told_later, stated, chat]
    day = {"first": "2025-03-04", "last": "2025-03-04"}
    # the day's note, a note of the next day that says "yesterday", one stating the day, a chat
    # with a message sent that day; not the note of two days later that only shares words
    assert [c["chunk_id"] for c in passage_days.of_named_days(ranked, day)] == [
        "2025-03-04",
        "2025-03-05",
        "2025-03-20",
        "chat",
    ]
    # no candidate of the days, or a span too long to be days of their own: everything stays
    assert passage_days.of_named_days([other], day) == [other]
    assert passage_days.of_named_days(ranked, {"first": "2025-01-01", "last": "2025-12-31"}) == ranked
    assert passage_days.of_named_days(ranked, None) == ranked
    # a numeric date read in the setting's order: 04/03 is 4 March in dmy, 3 April in mdy
    numeric = note("2025-04-10", "Paid on 04/03/2025.")
    assert passage_days.of_named_days([other, numeric], day, numeric_order="dmy") == [numeric]
    assert passage_days.of_named_days([other, numeric], day, numeric_order="mdy") == [other, numeric]


def test_a_passage_of_no_day_reads_its_relative_days_from_the_search_day():
    undated = {"chunk_id": "u", "body": "Yesterday I ordered the pan.", "written_at": None, "chat": None}
    other = {"chunk_id": "o", "body": "Ordered a notebook.", "written_at": "2025-03-06T00:00:00+00:00"}
    day = {"first": "2025-03-04", "last": "2025-03-04"}
    assert passage_days.of_named_days([other, undated], day, "2025-03-05") == [undated]
    assert passage_days.of_named_days([other, undated], day, "2025-03-09") == [other, undated]


def test_the_parser_is_skipped_only_for_text_that_states_no_day():
    """Every sentence of the example vault and chats in which temporal.detect reads a day, a week
    or a month passes the pre-check, so skipping the parser changes no packet."""
    today = datetime.date(2026, 6, 1)
    files = [*EXAMPLES.glob("vault/**/*.md"), *EXAMPLES.glob("chats/**/*")]
    read = 0
    for path in (p for p in files if p.is_file()):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            for s in temporal.detect(line, [], today)["signals"]:
                if not s.get("first_day"):
                    continue
                first, last = (datetime.date.fromisoformat(s[k]) for k in ("first_day", "last_day"))
                if (last - first).days < 31:
                    read += 1
                    assert temporal.may_state_a_day(line), (path.name, line)
    assert read > 50  # the examples state days in many forms
    assert not temporal.may_state_a_day("Ordered a notebook and a pan.")
