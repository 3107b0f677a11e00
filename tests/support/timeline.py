"""The Timeline section of a context packet, as the events tests read it."""

from __future__ import annotations


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
