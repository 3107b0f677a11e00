"""BM25 reads a chunk's document title with its body (migration 0110): a conversation titled
"Dietary restriction" is found for "dietary restrictions" though no message says it, a note by
the words of its frontmatter title, and a title changed is what is searched from then on.

One database for the module: two conversations imported (one titled, one not), one note
ingested, all embedded by the real MiniLM; the questions are asked as exo_reader.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from support.chat import msg
from support.db import Database
from support.memory import embedded_memory

DAY = datetime.datetime.now(datetime.UTC).date() - datetime.timedelta(days=3)
NOTE = (
    "---\ntitle: Harbour lighthouse volunteering\n---\n"
    "Saturday shifts start at nine. Bring the logbook and sign the visitors in.\n"
)


@pytest.fixture(scope="module")
def corpus(cfg, template_db, real_models) -> Iterator[Database]:
    at = f"{DAY.isoformat()}T08:58:00Z"
    records = [
        msg("diet", "Alex Morgan", "I'm vegetarian, please don't suggest meat dishes.", at,
            conversation_title="Dietary restriction", is_owner=True),
        msg("diet", "Assistant", "Noted, thanks for telling me.", at),
        msg("orders", "Alex Morgan", "Order ORTAND-88 is currently pending.", at, is_owner=True),
        msg("orders", "Assistant", "Noted, thanks for telling me.", at),
    ]  # fmt: skip
    with embedded_memory(
        cfg,
        template_db,
        real_models.embeddings.url,
        "exo_titles",
        notes={"volunteering.md": NOTE},
        records=records,
    ) as db:
        yield db


def search(reader, query: str) -> dict:
    return reader.execute("select exo.search_json(%s, k => 3)", (query,)).fetchone()[0]


def lexical_paths(reader, query: str) -> list[str]:
    """The paths of the results the lexical stage found."""
    return [r["path"] for r in search(reader, query)["results"] if r["stage"] == "lexical"]


def test_each_chunk_keeps_the_title_its_source_gave_its_document(corpus):
    with corpus.connect() as conn:
        titles = dict(
            conn.execute(
                "select d.path, c.document_title from exo_private.chunks c "
                "join exo_private.documents d on d.id = c.document_id"
            ).fetchall()
        )
    # the untitled conversation's document is titled by its people ("Chat with ..."): not searched
    assert titles == {
        "volunteering.md": "Harbour lighthouse volunteering",
        "chat/jsonl/diet": "Dietary restriction",
        "chat/jsonl/orders": None,
    }


def test_a_conversation_is_found_by_the_words_of_its_title(reader):
    question = "What are my current dietary restrictions?"
    found = search(reader, question)
    assert found["results"][0]["path"] == "chat/jsonl/diet"
    assert found["results"][0]["stage"] == "lexical"
    packet = reader.execute("select exo.context_packet_json(%s)", (question,)).fetchone()[0]
    assert packet["report"]["answer"]["found"] is True
    assert "I'm vegetarian" in packet["text"]


def test_a_note_is_found_by_the_words_of_its_frontmatter_title(reader):
    assert lexical_paths(reader, "lighthouse") == ["volunteering.md"]


def test_a_changed_title_is_what_is_searched(corpus, reader):
    with corpus.connect() as conn:
        conn.execute(
            "update exo_private.documents set title = 'Coastguard rota' where path = 'volunteering.md'"
        )
    try:
        assert lexical_paths(reader, "coastguard") == ["volunteering.md"]
        assert lexical_paths(reader, "lighthouse") == []
    finally:
        with corpus.connect() as conn:
            conn.execute(
                "update exo_private.documents set title = 'Harbour lighthouse volunteering' "
                "where path = 'volunteering.md'"
            )
