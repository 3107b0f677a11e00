"""The pattern pass in the worker (extraction.patterns): relations a window states in common
English become graph relations citing their chunk, with no chat model at all, beside a model that
fails the window, and again after a chat-model generation change."""

from __future__ import annotations

import json
from pathlib import Path

from support.db import configure
from support.standin import Reply, StandIn, chat

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

NOTE = (
    "# Harbour week\n\n"
    "Lunch with Maren Quist at the harbour. Maren's sister Tove Quist is back from Bergen.\n\n"
    "Tove works at Fjordline Shipping now, and she lives in Stavanger.\n"
)
RELATIONS = """
    select s.name, r.predicate, o.name, r.origin, r.generation,
           (select array_agg(c.id order by c.id) from exo_private.chunks c
            where c.document_id = r.document_id and strpos(c.body, 'sister') > 0) as cited
    from exo_private.relations r
    join exo_private.entities s on s.id = r.subject_id
    join exo_private.entities o on o.id = r.object_id
    order by r.predicate, s.name
"""


def _run(db) -> Worker:
    worker = Worker(db.cfg, dbname=db.name, once=True, poll_s=0.05, queues=("extract",))
    worker.run()
    return worker


def _relations(db) -> list[tuple]:
    with db.connect() as conn:
        return [row[:3] for row in conn.execute(RELATIONS)]


def test_patterns_build_relations_without_a_chat_model_and_keep_them_across_generations(db, tmp_path: Path):
    (tmp_path / "vault/journal").mkdir(parents=True)
    (tmp_path / "vault/journal/harbour.md").write_text(NOTE)
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    configure(db, models__chat={"url": None})
    worker = _run(db)
    assert worker.result.done["extract"] == 1
    # "she lives in Stavanger": a pronoun names nobody, so nothing is said of where Tove lives.
    expected = [
        ("Maren Quist", "SIBLING_OF", "Tove Quist"),
        ("Tove Quist", "WORKS_AT", "Fjordline Shipping"),
    ]
    assert _relations(db) == expected
    with db.connect() as conn:
        # The relation's window, and the chunk of it that states it, are its evidence.
        window, chunk = conn.execute(
            """select r.window_id, m.chunk_id
               from exo_private.relations r
               join exo_private.mentions m on m.entity_id = r.object_id and m.window_id = r.window_id
               where r.predicate = 'SIBLING_OF'"""
        ).fetchone()
        body = conn.execute("select body from exo_private.chunks where id = %s", (chunk,)).fetchone()[0]
        assert "Maren's sister Tove Quist" in body
        stats = conn.execute(
            "select extraction_stats from exo_private.extraction_windows where id = %s", (window,)
        ).fetchone()[0]
        assert stats["patterns"] == 2 and stats["model"] is None
        types = dict(conn.execute("select name, type::text from exo_private.entities where not is_owner"))
        assert types == {
            "Maren Quist": "Person",
            "Tove Quist": "Person",
            "Fjordline Shipping": "Org",
        }

    # A new chat model (a generation change) whose replies name nobody: the model's graph is
    # rebuilt from nothing, the pattern relations come back with the window's re-extraction.
    with StandIn(
        lambda path, request: chat(json.dumps({"entities": [], "relations": [], "attributes": []}))
    ) as model:
        configure(db, models__chat={"url": model.url, "model": "another-model"})
        with db.connect() as conn:
            assert conn.execute("select count(*) from exo_private.relations").fetchone()[0] == 0
        _run(db)
    assert _relations(db) == expected
    with db.connect() as conn:
        assert conn.execute("select distinct generation from exo_private.relations").fetchall() == [(2,)]


def test_a_model_that_fails_the_window_leaves_the_pattern_relations(db, tmp_path: Path):
    (tmp_path / "vault/journal").mkdir(parents=True)
    (tmp_path / "vault/journal/harbour.md").write_text(NOTE)
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    with StandIn(lambda path, request: Reply(status=400, body={"error": "bad request"})) as model:
        configure(db, models__chat={"url": model.url})
        worker = _run(db)
    assert worker.result.failed["extract"] == 1
    assert ("Maren Quist", "SIBLING_OF", "Tove Quist") in _relations(db)
    with db.connect() as conn:  # still to extract: `exo worker retry-failed` brings it back
        assert conn.execute("select extracted_at from exo_private.extraction_windows").fetchone() == (None,)


def test_patterns_off_leave_a_window_without_a_model_unextracted_by_them(db, tmp_path: Path):
    (tmp_path / "vault/journal").mkdir(parents=True)
    (tmp_path / "vault/journal/harbour.md").write_text(NOTE)
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    configure(db, models__chat={"url": None}, extraction__patterns=False)
    _run(db)
    assert _relations(db) == []
