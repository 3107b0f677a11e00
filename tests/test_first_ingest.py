"""Day one with your own folder (issue 30): a first ingest on a memory whose router has not been
trained is searchable without review, its summary says where things went and why, and every
file that was not ingested can be found by name (`exo documents`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from support.files import write

from exocortex.cli import main, memory
from exocortex.ingest import pipeline


@pytest.fixture
def folder(tmp_path) -> Path:
    """A folder of one's own: notes no rule places, one with a rule, one naming a workspace that
    does not exist, a corrupt PDF and an empty file."""
    root = tmp_path / "mine"
    write(root, "groceries.md", "milk, eggs, bread")
    write(root, "ideas.txt", "lorem ipsum dolor sit amet")
    write(root, "cricket.md", "wicket bowler umpire innings boundary")
    write(root, "diary/monday.md", "A long walk with a friend.")
    write(root, "notes/standup.md", "---\nworkspace: work\n---\nPostgres index tuning all day.")
    write(root, "scans/broken.pdf", os.urandom(4000))
    write(root, "empty.txt", "")
    return root


def ingest(db, root: Path) -> pipeline.IngestSummary:
    return pipeline.ingest(db.cfg, root, dbname=db.name)


def said(summary: pipeline.IngestSummary, capsys) -> str:
    memory.print_summary(summary)
    return " ".join(capsys.readouterr().out.split())  # a long line wraps at the console's width


def test_a_first_ingest_quarantines_nothing_but_an_unknown_workspace(db, folder, capsys):
    summary = ingest(db, folder)
    with db.connect() as conn:
        got = dict(
            conn.execute(
                "select path, stage::text || ' ' || coalesce(workspace, '-') from exo_private.documents"
            )
        )
    assert got == {
        "groceries.md": "chunked personal",
        "ideas.txt": "chunked personal",
        "cricket.md": "chunked personal",
        "diary/monday.md": "chunked personal",  # the folder rule
        "notes/standup.md": "quarantined -",
        "scans/broken.pdf": "failed -",
        "empty.txt": "skipped -",
    }
    assert summary.defaulted == {"personal": 3} and summary.routed_by["folder"] == 1
    out = said(summary, capsys)
    assert "3 files into personal (the default workspace: the router has not been trained yet)" in out
    # The one quarantined: named, why in words, the fix, and the command that resolves it.
    assert "quarantined: 1 document(s) wait for a routing decision" in out
    assert "1 frontmatter names workspace 'work', which does not exist: notes/standup.md" in out
    assert "one of administrative, creative, personal, technical" in out
    assert "exo quarantine list" in out and "exo quarantine approve | reassign | reject" in out
    # Failed and skipped files by path, with their reason.
    assert "failed scans/broken.pdf: damaged, or not what its extension says" in out
    assert "skipped empty.txt: no text in it" in out
    assert summary.not_ingested[0]["path"] == "scans/broken.pdf"
    # Default routes never train the router: everything would look personal.
    with db.connect("exo_writer") as conn:
        methods = {m for (m,) in conn.execute(
            "select d.route ->> 'method' from exo_private.router_training t join exo_private.documents d on d.id = t.id"
        )}  # fmt: skip
    assert methods == {"folder"}


def test_the_summary_names_ten_failed_files_and_says_where_the_rest_are(db, tmp_path, capsys):
    root = tmp_path / "bad"
    for i in range(12):
        write(root, f"broken-{i:02d}.pdf", os.urandom(2000))
    write(root, "empty.md", "")
    summary = ingest(db, root)
    out = said(summary, capsys)
    assert [d["path"] for d in summary.not_ingested] == [f"broken-{i:02d}.pdf" for i in range(10)]
    assert "failed broken-09.pdf" in out and "broken-10.pdf" not in out
    assert "and 3 more: exo documents --stage failed, exo documents --stage skipped" in out
    assert json.loads(json.dumps(pipeline.summary_json(summary)))["not_ingested"][0]["stage"] == "failed"


@pytest.fixture
def exo(db, monkeypatch):
    monkeypatch.setenv("EXO_READER_URL", db.url("exo_reader"))
    runner = CliRunner()

    def run(*args: str, ok: bool = True) -> str:
        result = runner.invoke(main, list(args), catch_exceptions=False)
        assert (result.exit_code == 0) == ok, result.output
        return result.output

    return run


def test_exo_documents_lists_each_with_its_reason_and_fix(db, folder, exo):
    ingest(db, folder)
    failed = json.loads(exo("documents", "--stage", "failed", "--json"))
    assert [(d["path"], d["stage"], d["code"]) for d in failed] == [("scans/broken.pdf", "failed", "corrupt")]
    assert failed[0]["reason"].startswith("damaged, or not what its extension says: ")
    assert "save it again" in failed[0]["fix"]
    table = " ".join(exo("documents", "--stage", "failed", "--full").split())
    assert "scans/broken.pdf" in table and "save it again" in table
    waiting = json.loads(exo("documents", "--stage", "quarantined", "--json"))
    assert [(d["path"], d["code"]) for d in waiting] == [("notes/standup.md", "unknown_workspace")]
    assert f"exo quarantine reassign {waiting[0]['document_id']} WORKSPACE" in waiting[0]["fix"]
    everything = json.loads(exo("documents", "--json"))
    assert [d["stage"] for d in everything][:3] == ["failed", "quarantined", "skipped"]
    defaulted = next(d for d in everything if d["path"] == "groceries.md")
    assert defaulted["reason"] == "in personal by default: the router had not been trained yet"
    assert [d["path"] for d in json.loads(exo("documents", "--path", "diary/*", "--json"))] == [
        "diary/monday.md"
    ]
    assert "no documents at stage ocr_pending match" in exo("documents", "--stage", "ocr_pending")
    assert "Invalid value for '--stage'" in exo("documents", "--stage", "lost", ok=False)
    with (
        db.connect("exo_reader") as conn,
        pytest.raises(psycopg.errors.InvalidParameterValue, match="stage must be one of"),
    ):
        conn.execute("select * from exo.documents(array['lost'])")


def test_exo_documents_withholds_a_charged_documents_path(db, tmp_path, exo):
    root = tmp_path / "v"
    write(
        root,
        "diary/lake.md",
        "---\ncharged: [Walter Rivera]\nworkspace: garden\n---\nA quiet day at the lake.",
    )
    ingest(db, root)
    rows = json.loads(exo("documents", "--json"))
    assert [(r["path"], r["title"], r["stage"], r["withheld"]) for r in rows] == [
        (None, None, "quarantined", True)
    ]
    # its reason in general words; the name it gave stays out of what the reader sees
    assert rows[0]["reason"] == "frontmatter names a workspace that does not exist"
    assert rows[0]["fix"] == "bridge its subject to see the fix"  # not "exo workspace add garden"
    assert "(withheld, document" in exo("documents", "--full")
    shown = json.loads(exo("documents", "--bridge", "Walter Rivera", "--json"))
    assert shown[0]["path"] == "diary/lake.md"
    # a glob never matches a withheld path: "*lake*" answers as it would for a path nobody has
    assert json.loads(exo("documents", "--path", "*lake*", "--json")) == []
    assert json.loads(exo("documents", "--path", "*nothing*", "--json")) == []
    bridged = json.loads(exo("documents", "--path", "*lake*", "--bridge", "Walter Rivera", "--json"))
    assert [r["path"] for r in bridged] == ["diary/lake.md"]


def test_quarantine_list_says_why_each_waits(db, folder, monkeypatch):
    ingest(db, folder)
    monkeypatch.setattr(memory, "writer", lambda _cfg, _name: db.connect("exo_writer"))
    monkeypatch.setenv("COLUMNS", "300")
    result = CliRunner().invoke(main, ["quarantine", "list"], catch_exceptions=False)
    out = " ".join(result.output.split())
    assert "notes/standup.md" in out and "frontmatter names workspace 'work', which does not exist" in out
    assert "reassign ID WORKSPACE" in out
