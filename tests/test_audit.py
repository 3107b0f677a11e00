"""The self-audit (issue 15): facts whose sources are gone (closed, nothing else), changed or
contradicted by a newer source, stale capsules, facts about entities that no longer exist, and
the retirement rate. One database and one ingested folder for the module; each test writes
facts about subjects of its own and looks only at its own findings."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.types.json import Jsonb
from support.db import cloned_database

from exocortex.cli import main
from exocortex.ingest import pipeline

NOTES = {
    "people/ada.md": "Ada Rune moved to Leeds in 2010 and has lived there since.",
    "people/bea.md": "Bea Holm works as a ship's engineer on the northern ferry route.",
    "places/leeds.md": "Leeds is a city in West Yorkshire, on the River Aire.",
    "places/york.md": "York has the Minster and the city walls; Cal Moor lives near them.",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("audit") / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")
    return root


@pytest.fixture(scope="module")
def adb(cfg, template_db, vault):
    with cloned_database(cfg, template_db, "exo_audit") as db:
        pipeline.ingest(db.cfg, vault, "personal", dbname=db.name)
        yield db


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def source(conn, rel: str) -> dict:
    """The document and first chunk of an ingested note, as a fact's source."""
    doc, chunk = conn.execute(
        """select d.id, (select min(c.id) from exo_private.chunks c where c.document_id = d.id)
           from exo_private.documents d where d.path = %s""",
        (rel,),
    ).fetchone()
    return {"document_id": doc, "chunk_id": chunk}


def workspace_of(conn, rel: str) -> str:
    return conn.execute("select workspace from exo_private.documents where path = %s", (rel,)).fetchone()[0]


def record(conn, subject, attribute, value, valid_from, src, kind="declared", workspace="personal"):
    return conn.execute(
        "select exo_private.record_fact(%s, %s, %s, %s, %s, %s, %s)",
        (workspace, subject, attribute, value, kind, valid_from, Jsonb(src)),
    ).fetchone()[0]


def audit(db) -> list[dict]:
    with db.connect("exo_writer") as conn:
        conn.row_factory = psycopg.rows.dict_row
        return conn.execute("select * from exo_private.audit()").fetchall()


def findings(found: list[dict], fact_ids) -> set[tuple]:
    return {(f["reason"], f["fact_id"], f["closed"]) for f in found if f["fact_id"] in set(fact_ids)}


def fact(conn, fact_id):
    return conn.execute(
        "select valid_to is not null, close_reason, closed_by from exo_private.facts where id = %s",
        (fact_id,),
    ).fetchone()


def test_a_fact_whose_every_source_is_deleted_is_closed_and_nothing_else(adb, vault):
    with adb.connect() as conn:
        ada, bea = source(conn, "people/ada.md"), source(conn, "people/bea.md")
        ws = workspace_of(conn, "people/ada.md")
        gone = record(conn, "Ada Rune", "home town", "Leeds", at(2010), ada, workspace=ws)
        kept = record(conn, "Ada Rune", "job", "surveyor", at(2012), ada, workspace=ws)
        record(conn, "Ada Rune", "job", "surveyor", at(2012), bea, workspace=ws)  # a second source
        other = record(conn, "Bea Holm", "job", "engineer", at(2015), bea, workspace=ws)
    (vault / "people/ada.md").unlink()
    pipeline.ingest(adb.cfg, vault, "personal", dbname=adb.name)
    found = audit(adb)
    assert findings(found, [gone, kept, other]) == {("source gone", gone, True)}
    with adb.connect() as conn:
        assert fact(conn, gone) == (True, "source gone", None)
        assert fact(conn, kept) == (False, None, None)
        assert fact(conn, other) == (False, None, None)
    # closed once: the next run finds nothing more about it
    assert findings(audit(adb), [gone]) == set()


def test_one_run_closes_thousands_of_facts_whose_source_is_gone(adb):
    """More lines than the server's lock table holds locks (64 x 100 by default): the audit locks
    them by key, in one call, and closes them in one statement."""
    n = 30000
    with adb.connect() as conn:
        conn.execute(
            """with f as (
                   insert into exo_private.facts (workspace, subject, subject_key, attribute, value, kind, valid_from)
                   select 'personal', 'Bulk Host ' || i, exo_private.canonical_key('Bulk Host ' || i), 'state', 'on',
                          'declared', '2020-01-01'
                   from generate_series(1, %s) i
                   returning id)
               insert into exo_private.fact_sources (fact_id, document_id) select f.id, -1 from f""",
            (n,),
        )
    closed = [f for f in audit(adb) if f["reason"] == "source gone" and f["closed"]]
    with adb.connect() as conn:
        left = conn.execute(
            "select count(*) from exo_private.facts where subject like 'Bulk Host %%' and valid_to is null"
        ).fetchone()[0]
    assert len(closed) >= n and left == 0


def test_a_fact_whose_source_changed_is_flagged_not_closed(adb, vault):
    with adb.connect() as conn:
        ws = workspace_of(conn, "places/york.md")
        moved = record(
            conn, "Cal Moor", "home town", "York", at(2019), source(conn, "places/york.md"), workspace=ws
        )
    (vault / "places/york.md").write_text("York has the Minster and the city walls. Cal Moor left in 2024.\n")
    pipeline.ingest(adb.cfg, vault, "personal", dbname=adb.name)
    found = audit(adb)
    assert findings(found, [moved]) == {("source changed", moved, False)}
    with adb.connect() as conn:
        assert fact(conn, moved) == (False, None, None)
        # recorded again from the new text: a live source, nothing to flag
        record(conn, "Cal Moor", "home town", "York", at(2019), source(conn, "places/york.md"), workspace=ws)
    assert findings(audit(adb), [moved]) == set()


def test_a_fact_contradicted_by_a_newer_source_of_a_lower_kind_is_flagged_not_closed(adb):
    with adb.connect() as conn:
        leeds, york = source(conn, "places/leeds.md"), source(conn, "places/york.md")
        declared = record(conn, "Dee Vance", "home town", "Leeds", at(2018), leeds)
        newer = record(conn, "Dee Vance", "home town", "York", at(2024), york, kind="extracted")
        # the other way round (the stronger kind is the newer) is precedence, not contradiction
        observed = record(conn, "Eli Park", "home town", "York", at(2024), york, kind="observation")
        older = record(conn, "Eli Park", "home town", "Leeds", at(2018), leeds, kind="extracted")
        # the same value in two kinds agrees
        same = record(conn, "Fay Lund", "home town", "Leeds", at(2018), leeds)
        record(conn, "Fay Lund", "home town", "Leeds", at(2024), york, kind="extracted")
    found = audit(adb)
    contradicted = {f["fact_id"]: f["detail"] for f in found if f["reason"] == "contradicted"}
    assert declared in contradicted and contradicted[declared]["by"] == newer
    assert contradicted[declared]["value"] == "York" and contradicted[declared]["kind"] == "extracted"
    assert not {observed, older, same, newer} & set(contradicted)
    with adb.connect() as conn:
        assert fact(conn, declared) == (False, None, None)
    # an extracted subject that is no entity of its workspace
    assert ("entity gone", newer, False) in findings(found, [newer])


def test_a_stale_capsule_is_flagged(adb):
    with adb.connect() as conn:
        src = source(conn, "places/leeds.md")
        ws = workspace_of(conn, "places/leeds.md")
        sha = conn.execute(
            "select sha256 from exo_private.documents where id = %s", (src["document_id"],)
        ).fetchone()[0]
        capsule = conn.execute(
            """insert into exo_private.capsules
                   (workspace, scope, document_id, sources, builder, stamp, body, tokens, sentences, chunk_ids)
               values (%s, 'document', %s, %s, 'extractive-1', exo_private.capsule_stamp('extractive-1', %s),
                       'Leeds is a city.', 4, '[]', %s)
               returning id""",
            (ws, src["document_id"], [src["document_id"]], [sha], [src["chunk_id"]]),
        ).fetchone()[0]
    assert not [f for f in audit(adb) if f["capsule_id"] == capsule]
    with adb.connect() as conn:
        conn.execute(
            "update exo_private.documents set sha256 = repeat('0', 64) where id = %s", (src["document_id"],)
        )
    stale = [f for f in audit(adb) if f["capsule_id"] == capsule]
    assert [(f["reason"], f["workspace"], f["closed"]) for f in stale] == [("capsule stale", ws, False)]


def test_the_retirement_rate_counts_closed_rows_by_reason(adb):
    with adb.connect() as conn:
        src = source(conn, "places/leeds.md")
        for year, town in [(2001, "Hull"), (2005, "Bath"), (2009, "Ely")]:
            record(conn, "Gus Tarn", "home town", town, at(year), src)
        conn.execute(
            "select exo_private.close_fact('personal', 'Gus Tarn', 'home town', now(), 'moved abroad')"
        )
        closed = dict(
            conn.execute(
                """select split_part(close_reason, ':', 1), count(*) from exo_private.facts
                   where valid_to is not null group by 1"""
            ).fetchall()
        )
        total = conn.execute("select count(*) from exo_private.facts").fetchone()[0]
        conn.execute("select count(*) from exo_private.audit()")
        ran = conn.execute("select findings, closed_now from exo_private.audit_runs order by id desc limit 1")
        findings, closed_now = ran.fetchone()
        # a fact closed after the run is not in its numbers: status reads the run, never re-audits
        record(conn, "Gus Tarn", "home town", "Looe", at(2030), src)
    with adb.connect("exo_reader") as conn:
        summary = conn.execute("select exo.audit_summary()").fetchone()[0]
        status = conn.execute("select exo.status() -> 'audit'").fetchone()[0]
    assert closed["superseded"] >= 2 and closed["closed"] >= 1
    assert summary["facts"] == total and summary["closed"] == sum(closed.values())
    assert summary["by_reason"] == {
        why: {"closed": n, "rate": round(n / total, 4)} for why, n in closed.items()
    }
    assert summary["retirement_rate"] == round(sum(closed.values()) / total, 4)
    assert (summary["findings"], summary["closed_now"]) == (findings, closed_now) and summary["ran_at"]
    assert status == summary


def test_the_reader_cannot_run_the_audit(adb):
    with adb.connect("exo_reader") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select * from exo_private.audit()")


def test_exo_audit_prints_counts_by_reason(adb, monkeypatch):
    monkeypatch.setenv("EXO_DB_NAME", adb.name)
    with adb.connect() as conn:
        leeds, york = source(conn, "places/leeds.md"), source(conn, "places/york.md")
        record(conn, "Hal Ness", "employer", "Acme", at(2018), leeds)
        record(conn, "Hal Ness", "employer", "Initech", at(2024), york, kind="extracted")
    runner = CliRunner()
    out = runner.invoke(main, ["audit", "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["findings"]["contradicted"] >= 1 and report["closed_now"] == {}
    assert report["retirement"]["facts"] >= 2
    table = runner.invoke(main, ["audit"], catch_exceptions=False)
    assert table.exit_code == 0 and "contradicted" in table.output and "Retirement:" in table.output
