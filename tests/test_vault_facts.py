"""The example vault's facts file in a packet, with the real embeddings (issue 29): a question in
the first person gets the owner's lines it is about, not the whole file; sensitive lines only
when asked for; a question about a past year gets the lines that held then, dated as the file's
values state them ("since 15 August 2020", "April 2013 to August 2020")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.vault import embedded_vault

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def vault(cfg, template_db, real_models) -> Iterator:
    def owner(conn) -> None:
        conn.execute("select exo_private.set_owner('Sam Rivera')")

    with embedded_vault(cfg, template_db, "exo_vault_facts", real_models.embeddings.url, owner) as db:
        yield db


def facts(vault, question):
    with vault.connect("exo_reader") as conn:
        packet = conn.execute("select exo.context_packet_json(%s, 1500)", (question,)).fetchone()[0]
    text = packet["text"]
    if "## Current facts" not in text:
        return [], packet["report"].get("facts")
    section = text[text.index("## Current facts") : text.index("## Evidence")]
    return section.strip().split("\n")[1:], packet["report"]["facts"]


def attributes(lines):
    return [line.split(", ", 1)[1].split(":", 1)[0] for line in lines if line.startswith("- Sam Rivera, ")]


def test_a_first_person_question_gets_only_the_lines_it_is_about(vault):
    lines, report = facts(vault, "What is my blood type?")
    assert attributes(lines) == ["blood_type"] and report["not_about_question"] >= 15
    # no word of the question is in "gp": its meaning finds it
    lines, report = facts(vault, "Who is my doctor?")
    assert attributes(lines) == ["gp"] and report["by"] == {"meaning": 1}
    lines, _ = facts(vault, "Who is on call for the database, and how do I escalate?")
    assert len(lines) <= 2
    assert not {"blood_type", "current_account", "dog", "car_insurance"} & set(attributes(lines))


def test_a_profile_holds_no_sensitive_line(vault):
    lines, report = facts(vault, "Tell me about myself")
    shown = attributes(lines)
    assert "address" in shown and "employer" in shown
    assert not {"blood_type", "current_account", "car_insurance", "contents_insurance", "dog"} & set(shown)
    assert "IBAN" not in "\n".join(lines) and set(report["by"]) == {"profile"}


def test_a_past_year_gets_the_lines_that_held_then_dated_by_their_values(vault):
    lines, _ = facts(vault, "Where did I live in 2014?")
    assert lines[0] == "(as of 2014-12-31)"
    assert "- Sam Rivera, address: 14 Fenwick Street, Flat 3, Larkhaven (declared, since 2013-04-01; " in (
        "\n".join(lines)
    )
    lines, _ = facts(vault, "Where do I live?")
    assert any(
        line.startswith("- Sam Rivera, address: 27 Alder Row, Larkhaven, LH4 0ZZ (since 15 August 2020; ")
        and "(declared, since 2020-08-15; admin/facts.md); before: 14 Fenwick Street, Flat 3, Larkhaven "
        "(2013-04-01 to 2020-09-01)"
        in line
        for line in lines
    )
