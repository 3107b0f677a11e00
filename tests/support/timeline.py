"""The Timeline section of a context packet, as the events tests read it, and the diary they
read it of."""

from __future__ import annotations

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker
from support.files import write


def ingest_diary(db, root, notes: dict[str, str]) -> None:
    """notes ({file name: text}) written under root and ingested into personal, Robin Ashdown the
    owner and Walter Rivera deferred, the events queue drained."""
    for name, text in notes.items():
        write(root, name, text)
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_owner('Robin Ashdown')")
        conn.execute("select exo_private.defer_subject('Walter Rivera')")
    pipeline.ingest(db.cfg, root, "personal", dbname=db.name)
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()


def packet(db, question: str, bridge=(), as_of="2025-12-31") -> dict:
    """The packet of `question` as the reader asks it, as of `as_of`."""
    with db.connect("exo_reader") as conn:
        return conn.execute(
            "select exo.context_packet_json(%s, 4000, null, null, %s, %s::timestamptz)",
            (question, list(bridge), as_of),
        ).fetchone()[0]


def answer(found: dict) -> str:
    """The Timeline section's first line ("Answer: ...")."""
    text = found["text"]
    assert "## Timeline" in text, text
    return text.split("## Timeline\n", 1)[1].splitlines()[0]
