"""plpy/passage_days.py: the passages of the days a question names."""

import passage_days


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
    assert passage_days.of_named_days([other, numeric], day, "dmy") == [numeric]
    assert passage_days.of_named_days([other, numeric], day, "mdy") == [other, numeric]
