"""The packet opens with the facts of what the question names (issue 15): precedence
(observation > declared > extracted), disagreement shown with dates and sources, the facts valid
on a past day for a question about the past or an as_of, and charged-only facts as a hint."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from psycopg.types.json import Jsonb
from support.db import cloned_database
from support.deferred import LUNCH, WALTER, defer_walter
from support.graph import add_document


@pytest.fixture(scope="module")
def db(cfg, template_db):
    with cloned_database(cfg, template_db, "exo_packet_facts") as db:
        with db.connect() as conn:
            doc = add_document(conn, "personal", ["Priya moved to Leeds for the new job.", "Notes."])
            source = {"document_id": doc.id, "chunk_id": doc.chunks[0]}

            def record(attribute, value, year, kind, month=1, source=source):
                conn.execute(
                    "select exo_private.record_fact('personal', 'Priya Okafor', %s, %s, %s, %s, %s)",
                    (attribute, value, kind, datetime(year, month, 1, tzinfo=UTC), Jsonb(source)),
                )

            record("lives in", "Leeds", 2024, "extracted")
            record("works at", "Brightwave", 2025, "declared")
            conn.execute(
                "select exo_private.observe(%s)",
                (
                    Jsonb(
                        [
                            {"subject": "Priya Okafor", "attribute": "lives in", "value": v, "observed_at": t,
                             "source": "address book", "workspace": "personal"}
                            for v, t in [("Leeds", "2024-02-01"), ("Porto", "2026-03-01")]
                        ]
                    ),
                ),
            )  # fmt: skip
            # a fact only a charged chunk supports
            defer_walter(conn)
            lunch = add_document(conn, "personal", LUNCH)
            conn.execute(
                "update exo_private.chunks set charged_subjects = %s where id = %s",
                ([WALTER], lunch.chunks[1]),
            )
            record("visited", "St Mary Hospice", 2020, "extracted", source={
                "document_id": lunch.id, "chunk_id": lunch.chunks[1]})  # fmt: skip
        yield db


def facts_section(db, query, **named):
    with db.connect("exo_reader") as conn:
        args = ", ".join(f"{k} => %({k})s" for k in named)
        packet = conn.execute(
            f"select exo.context_packet_json(%(q)s{', ' + args if args else ''})", dict(named, q=query)
        ).fetchone()[0]
    text = packet["text"]
    return text[text.index("## Current facts") : text.index("## Evidence")].strip().split("\n")[1:]


def test_the_highest_kind_leads_and_a_disagreeing_kind_is_shown_beside_it(db):
    lines = facts_section(db, "Where does Priya Okafor live now?")
    assert (
        "- Priya Okafor, lives_in: Porto (observation, since 2026-03-01; observed: address book); "
        "sources disagree: Leeds (extracted, since 2024-01-01; "
    ) in "\n".join(lines)
    assert any(
        line.startswith("- Priya Okafor, works_at: Brightwave (declared, since 2025-01-01; ")
        for line in lines
    )
    # the visit only a charged chunk supports is a hint, never its value
    assert "St Mary Hospice" not in "\n".join(lines)
    assert f"- 1 fact(s) about {WALTER} withheld (deferred subject). ask with bridge" in "\n".join(lines)


def test_a_question_about_the_past_gets_the_facts_valid_then(db):
    lines = facts_section(db, "Where did Priya Okafor live in 2025?")
    assert lines[0] == "(as of 2025-12-31)"
    # the observation then said Leeds, as the extracted fact does: one value, two kinds
    assert any(
        line.startswith("- Priya Okafor, lives_in: Leeds (observation+extracted, since 2024-02-01")
        for line in lines
    )
    assert "Porto" not in "\n".join(lines)
    past = facts_section(db, "Where does Priya Okafor live?", as_of="2024-01-15")
    assert past[0] == "(as of 2024-01-15)" and "Leeds (extracted, since 2024-01-01" in past[1]


def test_a_question_naming_nobody_with_facts_says_none_recorded(db):
    assert facts_section(db, "What is the capital of Norway?") == ["(none recorded yet)"]
    with db.connect("exo_reader") as conn:
        packet = conn.execute(
            "select exo.context_packet_json('Where does Priya Okafor live now?')"
        ).fetchone()[0]
    assert json.loads(json.dumps(packet))["report"]["bridge"] == []


def test_a_question_in_the_first_person_gets_the_owners_facts(db):
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
        conn.execute(
            "select exo_private.observe(%s)",
            (Jsonb({"subject": "Sam Rivera", "attribute": "lives in", "value": "Larkhaven",
                    "observed_at": "2026-02-01", "source": "probe", "workspace": "personal"}),),
        )  # fmt: skip
    assert facts_section(db, "Where do I live now?") == [
        "- Sam Rivera, lives_in: Larkhaven (observation, since 2026-02-01; observed: probe)"
    ]
    assert facts_section(db, "Where does he live now?") == ["(none recorded yet)"]


def test_the_facts_take_at_most_half_the_budget_keeping_those_the_question_asks_about(db):
    """A first-person question opens with the owner's facts; twenty of them would fill a small
    packet and leave no room for its evidence. Within half the budget the lines sharing the
    question's words stay, and a line says how many are left out and where they are."""
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
        add_document(
            conn, "personal", ["The database on-call rota: Sam is on call this week, escalate to Tomas."]
        )
        conn.execute(
            "select exo_private.observe(%s)",
            (
                Jsonb(
                    [
                        {"subject": "Sam Rivera", "attribute": f"hobby {i}", "observed_at": "2026-02-01",
                         "value": f"a long description of pastime number {i} with many words in it",
                         "source": "probe", "workspace": "personal"}
                        for i in range(20)
                    ]
                    + [{"subject": "Sam Rivera", "attribute": "database role", "value": "on call this week",
                        "observed_at": "2026-02-01", "source": "probe", "workspace": "personal"}]
                ),
            ),
        )  # fmt: skip
    with db.connect("exo_reader") as conn:
        small, roomy = (
            conn.execute(
                "select exo.context_packet_json(%s, %s)", ("Am I on call for the database?", budget)
            ).fetchone()[0]
            for budget in (400, 4000)
        )
    facts = small["text"][: small["text"].index("## Evidence")]
    assert len(facts) / 4 <= 200
    assert "database_role: on call this week" in facts
    assert "more fact(s) of Sam Rivera not shown: exo.facts(subject) lists them" in facts
    assert "hobby_0" not in facts or "hobby_19" not in facts
    assert "escalate to Tomas" in small["text"]  # the evidence still has room
    # a budget that holds them all shows them all (packet_facts gives 20 at most)
    assert roomy["text"].count("- Sam Rivera, ") == 20 and "not shown" not in roomy["text"]
    assert facts.count("- Sam Rivera, ") < 20
