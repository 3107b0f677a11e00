"""The owner's facts in a packet (plpy/fact_choice.py): two lines of one subject whose attributes
name one thing, more or less narrowly, show the later value as current and the earlier as its
history; a question not in the first person that names a thing of the owner's by the attribute
it is kept under gets that line (exo_private.packet_facts)."""

from __future__ import annotations

from datetime import UTC, datetime

import fact_choice
import pytest
from psycopg.types.json import Jsonb
from support.db import cloned_database
from support.graph import add_document

SETTINGS = {"packet.fact_similarity": 0.4, "packet.sensitive_facts": ["insurance"]}


def fact(attribute, value, day, before=None):
    return {
        "subject": "Sam Rivera",
        "attribute": attribute,
        "value": value,
        "kind": "extracted",
        "valid_from": f"{day} 10:00:00+00",
        "valid_to": None,
        "sources": [{"document_id": hash(value) % 1000}],
        "before": before,
    }


def chosen(query, facts):
    report = {}
    shown = fact_choice.facts_about(query, facts, [], report, SETTINGS)
    return [(f["attribute"], f["value"], (f["before"] or {}).get("value")) for f in shown], report["facts"]


def test_a_narrower_name_of_the_same_thing_said_later_is_the_current_value():
    facts = [
        fact("line_manager", "Tomasz Wolski", "2026-03-01"),
        fact("manager", "Priya Nair", "2025-11-02"),
    ]
    shown, report = chosen("Who is my manager?", facts)
    assert shown == [("line_manager", "Tomasz Wolski", "Priya Nair")]
    assert report["superseded"] == 1 and report["shown"] == 1
    # the later one keeps the history of its own line when that is the more recent
    own = fact("manager", "Helen Achebe", "2026-01-10")
    facts[0]["before"] = own
    assert chosen("Who is my manager?", facts)[0] == [("line_manager", "Tomasz Wolski", "Helen Achebe")]


def test_the_same_value_or_another_thing_is_no_update():
    # another head word ("car", "car insurance"), or one word each side ("home", "work address")
    facts = [
        fact("car", "Renault Zoe", "2026-03-01"),
        fact("car_insurance", "Meridale Mutual", "2025-01-01"),
        fact("home_address", "27 Alder Row", "2025-01-01"),
        fact("work_address", "1 Quay Street", "2026-01-01"),
        fact("standup", "9:30", "2025-01-01"),
        fact("daily_standup", "9:30", "2026-01-01"),
    ]
    assert [a for a, *_ in chosen("What car insurance do I have?", facts)[0]] == ["car", "car_insurance"]
    assert [a for a, *_ in chosen("What is my address?", facts)[0]] == ["home_address", "work_address"]
    shown, report = chosen("When is standup?", facts)
    assert [a for a, *_ in shown] == ["standup", "daily_standup"] and "superseded" not in report


def test_a_later_line_that_asks_or_names_nothing_new_leaves_the_value_current():
    said = fact("manager", "Helen Achebe", "2026-06-15")
    later = {"document_id": 9, "chat": {"similarity": None}, "body": ""}

    def shown(line):
        body = f"2026-10-13 16:04 Sam Rivera: {line}"
        passage = dict(later, body=body, written_at="2026-10-13")
        return [
            f["value"] for f in fact_choice.facts_about("Who is my manager?", [said], [passage], {}, SETTINGS)
        ]

    assert shown("How do I write a self-review for my manager?") == ["Helen Achebe"]
    assert shown("Lunch with my manager, same as ever.") == ["Helen Achebe"]
    assert shown("Helen Achebe, my manager, liked the plan.") == ["Helen Achebe"]
    assert shown("Since the reorg my manager is Tomasz Wolski.") == []
    assert shown("My manager moved 1:1s to Fridays.") == []
    assert shown("Lunch with the new manager, Dr. Lindqvist.") == []  # "Dr." ends no sentence


def test_a_later_message_of_the_facts_own_conversation_may_have_changed_it():
    """The fact's own chat: the messages after the one that states the value, or a window of a
    later day, may tell a newer one ("pushed back to September 1st"); the messages before it, or
    its own document's other lines, do not."""
    said = fact("report", "August 15th", "2026-09-08")
    own = said["sources"][0]["document_id"]
    first = "2026-09-08 10:58 Sam Rivera: The Q3 report is due on August 15th."
    moved = "2026-09-08 10:59 Sam Rivera: The Q3 report deadline was pushed back to September 1st."

    def shown(body, written_at="2026-09-08", chat=True):
        passage = {"document_id": own, "chat": {"similarity": None} if chat else None, "body": body,
                   "written_at": written_at}  # fmt: skip
        return [
            f["value"]
            for f in fact_choice.facts_about("When is the Q3 report due?", [said], [passage], {}, SETTINGS)
        ]

    assert shown(first + "\n" + moved) == []  # a minute later, in the same window
    assert shown(moved.replace("2026-09-08", "2026-10-13"), "2026-10-13") == []  # a window a month on
    assert shown(moved + "\n" + first) == ["August 15th"]  # said before it
    assert shown(first + "\n2026-09-08 10:59 Sam Rivera: Thanks, that report is due then.") == ["August 15th"]
    assert shown("The Q3 report is due on August 15th. Not September 1st.", chat=False) == ["August 15th"]


@pytest.fixture(scope="module")
def db(cfg, template_db):
    with cloned_database(cfg, template_db, "exo_owner_facts") as db:
        with db.connect() as conn:
            conn.execute("select exo_private.set_owner('Sam Rivera')")
            doc = add_document(conn, "personal", ["Standup moved to 10:15.", "Notes."])
            source = Jsonb({"document_id": doc.id, "chunk_id": doc.chunks[0]})
            for subject, attribute, value in [
                ("Sam Rivera", "standup", "10:15"),
                ("Sam Rivera", "book club", "Marsh Library"),
                ("Priya Okafor", "standup", "9:00"),
            ]:
                conn.execute(
                    "select exo_private.record_fact('personal', %s, %s, %s, 'extracted', %s, %s)",
                    (subject, attribute, value, datetime(2026, 3, 1, tzinfo=UTC), source),
                )
        yield db


def packet_lines(db, keys, owner):
    with db.connect() as conn:
        return sorted(
            (subject, attribute, value)
            for subject, attribute, value in conn.execute(
                "select subject, attribute, value from exo_private.packet_facts(%s, now(), '{}', '{personal}', %s)",
                (keys, owner),
            )
        )


def test_a_question_naming_a_thing_of_the_owners_gets_its_line(db):
    # "When is the daily standup?": its keys, none in the first person
    keys = ["daily", "standup", "daily standup"]
    assert packet_lines(db, keys, False) == [("Sam Rivera", "standup", "10:15")]
    # someone else's standup is theirs: a question naming them gets it beside the owner's
    assert packet_lines(db, ["priya okafor", "standup"], False) == [
        ("Priya Okafor", "standup", "9:00"),
        ("Sam Rivera", "standup", "10:15"),
    ]
    assert packet_lines(db, ["book club"], False) == [("Sam Rivera", "book_club", "Marsh Library")]
    assert packet_lines(db, ["capital", "norway"], False) == []
    # in the first person the owner's whole file comes, as before
    assert len(packet_lines(db, ["daily"], True)) == 2
