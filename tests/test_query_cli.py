"""The query CLI (exo search | context | dossier | related | timeline | status) over a small vault."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.graph import merge, org, person, rel

from exocortex.cli import main
from exocortex.ingest import pipeline

NOTES = {
    "work/oncall.md": "Iris Calder runs the on-call rota at Northwind Labs with Tomas Okafor. Escalate to Sam after 15 minutes.",
    "work/upgrade.md": "Tomas Okafor signed off the PostgreSQL 16 upgrade at Northwind Labs in 2023; Iris Calder reviewed it.",
}


@pytest.fixture
def exo(db, tmp_path, monkeypatch):
    for name, text in NOTES.items():
        (tmp_path / "vault" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vault" / name).write_text(text)
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    with db.connect("exo_writer") as conn:
        for (window,) in conn.execute("select id from exo_private.extraction_windows order by id").fetchall():
            merge(
                conn,
                window,
                [person("Iris Calder"), person("Tomas Okafor"), org("Northwind Labs")],
                [
                    rel("Iris Calder", "works at", "Northwind Labs"),
                    rel("Tomas Okafor", "works at", "Northwind Labs"),
                ],
            )
    monkeypatch.setenv("EXO_READER_URL", db.url("exo_reader"))
    runner = CliRunner()

    def run(*args: str, ok: bool = True):
        result = runner.invoke(main, list(args), catch_exceptions=False)
        assert (result.exit_code == 0) == ok, result.output
        return result

    return run


def test_search_prints_citations_and_json(exo):
    table = exo("search", "who runs the on-call rota?", "-k", "3").output
    assert "technical:work/oncall.md" in table
    found = json.loads(exo("search", "on-call rota", "--json").output)
    assert found["results"][0]["path"] == "work/oncall.md"
    assert found["report"]["workspaces"]["technical"]["stages"][0]["stage"] == "exact"
    # One retrieval: the report describes these rows.
    assert found["report"]["returned"] == len(found["results"])


def test_context_prints_the_packet_within_its_budget(exo):
    out = exo("context", "who runs the on-call rota?", "--budget", "300").output
    assert (
        out.startswith("# Context for: who runs the on-call rota?") and "[1] technical:work/oncall.md" in out
    )
    packet = json.loads(exo("context", "on-call", "--budget", "300", "--json").output)
    assert packet["tokens"] <= 300


def test_graph_commands(exo):
    dossier = json.loads(exo("dossier", "Northwind Labs", "--json").output)
    assert dossier["type"] == "Org" and dossier["document_count"] == 2
    assert "Northwind Labs" in exo("dossier", "northwind labs").output
    related = json.loads(exo("related", "Iris Calder", "--depth", "2", "--json").output)
    assert {r["name"] for r in related} == {"Northwind Labs", "Tomas Okafor"}
    timeline = json.loads(exo("timeline", "Northwind Labs", "--json").output)
    assert sorted(r["path"] for r in timeline) == sorted(NOTES)
    status = json.loads(exo("status", "--json").output)
    assert status["chunks"]["total"] == 2


def test_tables_fit_the_terminal_and_full_shows_whole_texts(exo, monkeypatch):
    question = "who runs the on-call rota?"
    monkeypatch.setenv("COLUMNS", "60")
    cut = exo("search", question, "-k", "1").output
    assert max(map(len, cut.splitlines())) <= 60 and "\u2026" in cut
    whole = exo("search", question, "-k", "1", "--full").output
    assert max(map(len, whole.splitlines())) <= 60 and "\u2026" not in whole and "minutes." in whole
    for command in (["dossier", "Northwind Labs"], ["related", "Iris Calder"], ["timeline", "Iris Calder"]):
        assert "\u2026" not in exo(*command, "--full").output
    monkeypatch.setenv("COLUMNS", "250")
    assert NOTES["work/oncall.md"] in exo("search", question, "-k", "1").output  # no fixed cut


def test_status_prints_readable_lines_and_tables(exo, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lines = exo("status").output.splitlines()
    assert max(map(len, lines)) <= 80
    assert not any("{" in line or "\u2026" in line for line in lines)  # no JSON, no header cut short
    said = [" ".join(line.split()) for line in lines]
    assert "documents 2 (chunked 2), 0 of them conversations" in said
    assert "graph technical: 3 entities, 6 mentions, 4 relations" in said
    assert json.loads(exo("status", "--json").output)["queues"]["embed"]["pending"] == 2


def test_an_empty_query_is_refused(exo):
    for command in (["search"], ["context"], ["fact", "search"]):
        for query in ("", " \t "):
            result = exo(*command, query, ok=False)
            assert result.exit_code == 2
            assert "Error: Invalid value for 'QUERY': is empty: say what to look for." in result.output


def test_errors_name_the_argument(exo):
    result = exo("search", "rent", "--workspace", "nowhere", ok=False)
    assert "workspace 'nowhere' does not exist" in result.output
    result = exo("dossier", "Nobody At All", ok=False)
    assert "names no entity" in result.output


def test_withheld_rows_print_as_hints_and_bridge_opens_them(exo, db):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Tomas Okafor')")
    related = json.loads(exo("related", "Iris Calder", "--depth", "2", "--json").output)
    assert [r["name"] for r in related if r["withheld"] is None] == ["Northwind Labs"]
    hint = {
        "subject": "Tomas Okafor",
        "workspace": "technical",
        "chunks": 0,
    }  # none charged, his relations left out
    assert [{k: v for k, v in r["withheld"].items() if k != "how"} for r in related if r["withheld"]] == [
        hint
    ]
    table = exo("related", "Iris Calder", "--depth", "2").output
    assert "Northwind Labs" in table and "Tomas" not in table.split("withheld:")[0]
    assert "withheld: about Tomas Okafor in technical." in table
    opened = json.loads(
        exo("related", "Iris Calder", "--depth", "2", "--bridge", "Tomas Okafor", "--json").output
    )
    assert {r["name"] for r in opened} == {"Northwind Labs", "Tomas Okafor"}
    timeline = exo("timeline", "Tomas Okafor").output
    assert "work/upgrade.md" not in timeline and "withheld: about Tomas Okafor in technical." in timeline
