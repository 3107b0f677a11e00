"""exo_private.charged_tallies stays exact: the count of charged chunks per workspace and subject
equals a group-by over the chunks after every kind of change (ingested, re-marked by deferring and
undeferring a subject, re-banded, a chunk moved to another workspace, a document deleted), and the search's
hints read it."""

from __future__ import annotations

from support.timeline import ingest_diary

from exocortex.ops.migrate import migrate

NOTES = {
    "2025-03-02.md": "---\ndate: 2025-03-02\n---\nWalter Rivera and I went swimming at the lido, before his funeral.",
    "2025-03-09.md": "---\ndate: 2025-03-09\n---\nWalter Rivera and I walked to the harbour, before his funeral.",
    "2025-03-20.md": "---\ndate: 2025-03-20\n---\nNadia Okafor and I ran 5 km in the park.",
}

COUNTED = """
select c.workspace, s.subject, count(*)::int
from exo_private.chunks c cross join lateral unnest(c.charged_subjects) s (subject)
group by 1, 2 order by 1, 2
"""
HELD = "select workspace, subject, n from exo_private.charged_tallies where n > 0 order by 1, 2"


def assert_exact(db) -> list[tuple]:
    with db.connect() as conn:
        held = conn.execute(HELD).fetchall()
        assert held == conn.execute(COUNTED).fetchall()
    return held


def test_the_tally_equals_the_charged_chunks_counted_after_every_change(db, tmp_path):
    ingest_diary(db, tmp_path / "diary", NOTES)
    assert assert_exact(db) == [("personal", "Walter Rivera", 2)]
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.undefer_subject('Walter Rivera')")
    assert assert_exact(db) == []
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera')")
    assert assert_exact(db) == [("personal", "Walter Rivera", 2)]
    # re-banded ten years on: the chunks move to the archival band, their charges stay counted
    with db.connect("exo_writer") as conn:
        assert conn.execute("select exo_private.reband(current_date + 3650)").fetchone()[0] == len(NOTES)
        assert (
            conn.execute("select count(*) from exo_private.chunks where band <> 'archival'").fetchone()[0]
            == 0
        )
    assert assert_exact(db) == [("personal", "Walter Rivera", 2)]
    # a chunk moved to another workspace: deleted from one partition, inserted into the other
    with db.connect() as conn:
        conn.execute(
            "update exo_private.chunks c set workspace = 'technical' from exo_private.documents d"
            " where d.id = c.document_id and d.path = '2025-03-09.md'"
        )
    assert assert_exact(db) == [("personal", "Walter Rivera", 1), ("technical", "Walter Rivera", 1)]
    with db.connect() as conn:
        conn.execute("delete from exo_private.documents where path = '2025-03-02.md'")
    assert assert_exact(db) == [("technical", "Walter Rivera", 1)]


def test_the_hints_count_from_the_tally(db, tmp_path):
    ingest_diary(db, tmp_path / "diary", NOTES)
    with db.connect() as conn:
        # the tally, not the chunks, is what is read: a tally made wrong shows in the hints
        conn.execute("update exo_private.charged_tallies set n = 7 where subject = 'Walter Rivera'")
    with db.connect("exo_reader") as conn:
        (report,) = conn.execute("select exo.search_report('swimming at the lido', k => 3)").fetchone()
    assert [(h["subject"], h["chunks"]) for h in report["hints"]] == [("Walter Rivera", 7)]


def test_chunks_written_while_the_triggers_are_missing_are_counted_when_they_are_made(cfg, db, tmp_path):
    """Migration 0101 counted the tally in its own transaction and migrate made the triggers that
    keep it in a later one (sql/450_deference.sql): a chunk ingested between the two was never
    counted. 0105 drops the triggers of a database migrated so, and sql/450_deference.sql, where
    they do not exist, counts the tally again in the transaction that makes them."""
    first = dict(list(NOTES.items())[:1])
    ingest_diary(db, tmp_path / "diary", first)
    assert assert_exact(db) == [("personal", "Walter Rivera", 1)]
    with db.connect() as admin:
        for event in ("insert", "delete", "update"):
            admin.execute(f"drop trigger chunks_tally_charges_{event} on exo_private.chunks")
    # the ingest, between the migration and the sql files
    ingest_diary(db, tmp_path / "diary", NOTES)
    with db.connect() as conn:
        assert conn.execute(HELD).fetchall() != conn.execute(COUNTED).fetchall()
    migrate(cfg, db.url(), schedule=False)
    assert assert_exact(db) == [("personal", "Walter Rivera", 2)]
    # and the triggers keep it again
    with db.connect() as conn:
        conn.execute("delete from exo_private.documents where path = '2025-03-02.md'")
    assert assert_exact(db) == [("personal", "Walter Rivera", 1)]
