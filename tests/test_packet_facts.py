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
            # a fact of the deferred subject's own, under an alias
            conn.execute(
                "select exo_private.observe(%s)",
                (Jsonb({"subject": "Grandpa", "attribute": "favourite song", "value": "Moon River",
                        "observed_at": "2019-05-01", "source": "Ann", "workspace": "personal"}),),
            )  # fmt: skip
        yield db


def facts_section(db, query, **named):
    with db.connect("exo_reader") as conn:
        args = ", ".join(f"{k} => %({k})s" for k in named)
        packet = conn.execute(
            f"select exo.context_packet_json(%(q)s{', ' + args if args else ''})", dict(named, q=query)
        ).fetchone()[0]
    text = packet["text"]
    if "## Current facts" not in text:
        return []
    return text[text.index("## Current facts") : text.index("## Evidence")].strip().split("\n")[1:]


def test_the_highest_kind_leads_and_a_disagreeing_kind_is_shown_beside_it(db):
    lines = facts_section(db, "Where does Priya Okafor live now?")
    # the value before the current one is said with its dates
    assert (
        "- Priya Okafor, lives_in: Porto (observation, since 2026-03-01; observed: address book); "
        "before: Leeds (2024-02-01 to 2026-03-01); sources disagree: Leeds (extracted, since 2024-01-01; "
    ) in "\n".join(lines)
    # where she works is not what the question asks; who she is asks for everything
    assert "works_at" not in "\n".join(lines)
    lines = facts_section(db, "Who is Priya Okafor?")
    assert any(
        line.startswith("- Priya Okafor, works_at: Brightwave (declared, since 2025-01-01; ")
        for line in lines
    )
    # the visit only a charged chunk supports is left out, and no hint counts it: that would tell
    # what withheld text says of her (the packet's hints say the charged chunks are withheld)
    assert "St Mary Hospice" not in "\n".join(lines) and "withheld" not in "\n".join(lines)


def test_a_question_naming_a_deferred_subject_is_told_its_facts_are_withheld(db):
    """By any of its names: the owner's list and the question decide, never what withheld text says."""
    for question in ("What was Grandpa's favourite song?", "What did Walter Rivera like to sing?"):
        lines = "\n".join(facts_section(db, question))
        assert f"- 1 fact(s) about {WALTER} withheld (deferred subject). ask with bridge" in lines, question
        assert "Moon River" not in lines
    assert "Moon River" in "\n".join(
        facts_section(db, "What was Grandpa's favourite song?", bridge=["Grandpa"])
    )


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


def test_a_question_naming_nobody_with_facts_has_no_facts_section(db):
    assert facts_section(db, "What is the capital of Norway?") == []
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
    assert facts_section(db, "Where does he live now?") == []


def test_the_facts_are_those_the_question_asks_about_within_half_the_budget(db):
    """A first-person question names the owner, whose twenty facts would fill a small packet and
    leave no room for its evidence: only the line the question is about is shown. A question
    about the owner as a whole gets them all, within half the budget, and a line says how many
    are left out and where they are."""
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
        asked, small, roomy = (
            conn.execute("select exo.context_packet_json(%s, %s)", (query, budget)).fetchone()[0]
            for query, budget in [
                ("Am I on call for the database?", 400),
                ("Tell me about myself", 400),
                ("Tell me about myself", 4000),
            ]
        )
    facts = asked["text"][: asked["text"].index("## Evidence")]
    assert facts.count("- Sam Rivera, ") == 1 and "database_role: on call this week" in facts
    assert asked["report"]["facts"] == {"shown": 1, "not_about_question": 19, "by": {"words": 1}}
    assert "escalate to Tomas" in asked["text"]
    facts = small["text"][: small["text"].index("## Evidence")]
    assert len(facts) / 4 <= 200
    assert "more fact(s) of Sam Rivera not shown: exo.facts(subject) lists them" in facts
    assert facts.count("- Sam Rivera, ") < 20
    # a budget that holds them all shows them all (packet_facts gives 20 at most)
    assert roomy["text"].count("- Sam Rivera, ") == 20 and "not shown" not in roomy["text"]
    assert roomy["report"]["facts"]["by"] == {"profile": 20}


@pytest.mark.parametrize("written", ["ORTAND-88", "ortand 88", "Ortand88", "order ORTAND-88"])
def test_an_identifier_finds_its_subject_however_the_question_writes_it(db, written):
    with db.connect() as conn:
        conn.execute(
            "select exo_private.observe(%s)",
            (Jsonb({"subject": "order ortand-88", "attribute": "status", "value": "shipped",
                    "observed_at": "2026-02-01", "source": "shop", "workspace": "personal"}),),
        )  # fmt: skip
        forms = conn.execute("select exo_private.key_forms('order ortand-88')").fetchone()[0]
    assert forms == ["orderortand88", "ortand88"]
    assert facts_section(db, f"What is the status of {written}?") == [
        "- order ortand-88, status: shipped (observation, since 2026-02-01; observed: shop)"
    ]
    # a part without a digit, or a digit alone, names nothing
    assert facts_section(db, "What is the status of my order?") == []
    assert facts_section(db, "What is the status of 88?") == []
