"""What changed, through exo.context_packet_json on a real database: a newer line that names the
old value but none of the question's words is looked up and put first (plpy/retrieve.py
successors, plpy/changes.py), and never shown by exo.search. plpy/changes.py alone is tested as
plain Python in tests/test_plpy_changes.py."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from support.chat import msg
from support.db import Database
from support.memory import embedded_memory

TODAY = datetime.datetime.now(datetime.UTC).date()
OWNER = "Sam Rivera"
# (days ago, conversation, text): one question and reply a session, each its own window.
SAID = [
    (300, "City 0", "I live in Leeds; what are good weekend walks nearby?"),
    (260, "Rent chat", "Can you draft a polite note to my landlord about the boiler?"),
    (120, "City 1", "Settled in York after the move from Leeds."),
    (280, "Running 0", "I'm training for 10 km; what pace?"),
    (90, "Running 1", "Going for 21 km instead of 10 km."),
    (200, "Treadmill", "Is running on a treadmill as good as running outdoors?"),
]


@pytest.fixture(scope="module")
def corpus(cfg, template_db, real_models) -> Iterator[Database]:
    records = []
    for n, (ago, title, text) in enumerate(SAID):
        day = TODAY - datetime.timedelta(days=ago)
        reply = "Noted. Here is a short plan you can adapt."
        records += [
            msg(f"c{n}", OWNER, text, f"{day}T10:00:00Z", conversation_title=title, is_owner=True),
            msg(f"c{n}", "Assistant", reply, f"{day}T10:02:00Z", conversation_title=title),
        ]
    with embedded_memory(
        cfg, template_db, real_models.embeddings.url, "exo_packet_changes", records=records
    ) as db:
        yield db


def packet(reader, question: str) -> dict:
    return reader.execute("select exo.context_packet_json(%s)", (question,)).fetchone()[0]


def test_a_newer_line_naming_the_old_value_is_found_and_put_first(reader):
    """ "Settled in York after the move from Leeds." holds no word of "Where do I live?" and is
    not close to it in meaning: only the name the cited line states ("Leeds") finds it."""
    got = packet(reader, "Where do I live?")
    evidence = got["text"].partition("## Evidence\n")[2]
    york, leeds = evidence.find("Settled in York"), evidence.find("I live in Leeds")
    assert 0 <= york < leeds, got["text"]
    assert "(later, " in evidence[:york] and "superseded by [1]?" in evidence[york : leeds + 200]
    assert "successors" in got["report"]["timings_ms"]


def test_a_newer_line_naming_the_old_quantity_is_found_and_put_first(reader):
    """ "Going for 21 km instead of 10 km." holds no word of "What is my running goal?": the
    quantity with its unit the cited line states ("10 km") finds it."""
    got = packet(reader, "What is my running goal?")
    evidence = got["text"].partition("## Evidence\n")[2]
    newer, older = evidence.find("Going for 21 km"), evidence.find("training for 10 km")
    assert 0 <= newer < older, got["text"]
    assert "(later, " in evidence[:newer] and "superseded by [" in evidence[newer : older + 200]


def test_a_question_of_the_past_looks_up_no_newer_line(reader):
    got = packet(reader, "Where did I live?")
    assert "successors" not in got["report"]["timings_ms"]
    assert "Settled in York" not in got["text"]


def test_the_search_itself_shows_no_line_the_packet_looked_up(reader):
    rows = reader.execute("select body from exo.search('Where do I live?')").fetchall()
    assert not any("Settled in York" in body for (body,) in rows)
