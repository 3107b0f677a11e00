"""One retrieval over documents and chats (issue 13): chat windows are found by the same
stages, reranked in the same pool and cited in the same packet as document chunks.

One database for the module: two notes ingested into `personal`, one conversation with
Iris Calder imported (two sessions, so two windows), both embedded by the real MiniLM. The
questions are asked as exo_reader and only read.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from psycopg import sql
from psycopg.rows import dict_row
from support.chat import msg
from support.db import Database
from support.memory import embedded_memory

TODAY = datetime.datetime.now(datetime.UTC).date()
BOOK_DAY = TODAY - datetime.timedelta(days=20)
TRIP_DAY = TODAY - datetime.timedelta(days=5)
NOTES = {
    "plans/lisbon-trip.md": "# Lisbon trip\n\nThe Lisbon trip is booked: we fly out on 12 May and stay in Alfama"
    " for five nights. Hotel confirmation is in the mail folder.\n",
    "garden/tomatoes.md": "# Tomatoes\n\nThe tomatoes on the balcony need water every second day in summer.\n",
}
# (day, time, sender, text): two sessions, on two days, so two windows. The first is longer
# than a packet's excerpt (packet.excerpt_chars 300).
BOOK = [
    (BOOK_DAY, "09:12", "Iris Calder", "Morning! Did you finish Piranesi? I recommended it for the statues."),
    (BOOK_DAY, "09:14", "Sam Rivera", "Halfway through. The house with the tides is wonderful."),
    (BOOK_DAY, "09:15", "Iris Calder", "Told you, Susanna Clarke never disappoints."),
    (BOOK_DAY, "09:20", "Sam Rivera", "Are we still on for the climbing gym on Thursday evening?"),
    (BOOK_DAY, "09:22", "Iris Calder", "Yes, six o'clock, bring the chalk bag and the spare shoes."),
    (BOOK_DAY, "09:23", "Sam Rivera", "Deal. I will also bring the rope we borrowed from Tomas."),
]
TRIP = [
    (TRIP_DAY, "18:02", "Sam Rivera", "So what did we decide about Lisbon in the end?"),
    (TRIP_DAY, "18:04", "Iris Calder", "We decided the Lisbon trip is on 12 May: five nights in Alfama."),
    (TRIP_DAY, "18:05", "Sam Rivera", "Perfect, I will book the flights tonight."),
]
MESSAGES = BOOK + TRIP


def line(day: datetime.date, time: str, sender: str, text: str) -> str:
    """A message's line in its window, as the chunk shows it (chat.time_zone UTC)."""
    return f"{day.isoformat()} {time} {sender}: {text}"


def shown(day: datetime.date, time: str, sender: str, text: str) -> str:
    """A message's line in a packet's excerpt: its time without the day the citation names."""
    return f"{time} {sender}: {text}"


@pytest.fixture(scope="module")
def corpus(cfg, template_db, real_models) -> Iterator[Database]:
    notes = {name: f"---\ndate: {TRIP_DAY.isoformat()}\n---\n{text}" for name, text in NOTES.items()}
    records = [
        msg(
            "iris",
            sender,
            text,
            f"{day}T{time}:00Z",
            conversation_title="Iris Calder",
            is_owner=sender == "Sam Rivera",
        )
        for day, time, sender, text in MESSAGES
    ]
    with embedded_memory(
        cfg, template_db, real_models.embeddings.url, "exo_chat_search", notes=notes, records=records
    ) as db:
        yield db


def ask(conn, function: str, query: str, **named):
    args = [sql.Literal(query)] + [
        sql.SQL("{} => {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in named.items()
    ]
    statement = sql.SQL("select exo.{}({})").format(sql.Identifier(function), sql.SQL(", ").join(args))
    return conn.execute(statement).fetchone()[0]


def windows(corpus) -> dict[int, dict]:
    """The conversation's windows, by chunk id: their first message's text and the document."""
    with corpus.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "select w.chunk_id, c.document_id, c.body, d.path from exo_private.chat_windows w "
            "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
            "join exo_private.documents d on d.id = c.document_id order by w.first_sent_at"
        ).fetchall()
    return {r["chunk_id"]: r for r in rows}


def test_the_conversation_is_two_embedded_windows_in_the_personal_partition(corpus):
    found = list(windows(corpus).values())
    assert [w["body"] for w in found] == [
        "\n".join(line(*m) for m in BOOK),
        "\n".join(line(*m) for m in TRIP),
    ]
    with corpus.connect() as conn:
        embedded = conn.execute(
            "select count(*) from exo_private.chunk_embeddings where chunk_id = any (%s) and workspace = 'personal'",
            ([w["chunk_id"] for w in found],),
        ).fetchone()[0]
    assert embedded == 2


def test_a_question_answered_only_in_a_chat_gets_a_packet_citing_the_chat(corpus, reader):
    book, _trip = windows(corpus)
    found = ask(reader, "search_json", "Who recommended Piranesi?", k=5)
    top = found["results"][0]
    assert top["chunk_id"] == book
    assert top["citation"] == f'personal:chat "Iris Calder" {BOOK_DAY.isoformat()} 09:12'
    assert (
        top["path"] == "chat/jsonl/iris" and top["title"] == "Iris Calder" and top["workspace"] == "personal"
    )

    packet = ask(reader, "context_packet_json", "Who recommended Piranesi?")
    first = packet["used"][0]
    assert (first["chunk_id"], first["citation"]) == (book, top["citation"])
    text = packet["text"]
    evidence = text[text.index("## Evidence") :]
    block = evidence.split("\n\n")[0]  # [1] citation, then the excerpt: whole message lines
    # the answering message (the one most like the question), whole, and the neighbours that fit
    # packet.chat_excerpt_chars (120)
    assert block.startswith(f"## Evidence\n[1] {top['citation']}\n{shown(*BOOK[0])}\n")
    assert block.endswith("\n...") and len(block.split("\n", 2)[2]) <= 120 + 4  # cut at a message
    assert block.split("\n")[2:-1] == [shown(*m) for m in BOOK[: len(block.split("\n")) - 3]]
    assert first["stage"] and first["score"] > 0  # how it was found: in the JSON, not the text
    assert first["document_id"] == top["document_id"] and first["conversation_id"] is not None


def test_a_question_answered_in_a_chat_and_a_document_cites_both_from_one_rerank(corpus, reader):
    _book, trip = windows(corpus)
    query = "What did we decide about the Lisbon trip?"
    found = ask(reader, "search_json", query, k=10)
    rows = {r["chunk_id"]: r for r in found["results"]}
    note = next(r for r in found["results"] if r["path"] == "plans/lisbon-trip.md")
    assert trip in rows
    assert note["citation"] == f"personal:plans/lisbon-trip.md ({TRIP_DAY.isoformat()}, current)"
    # one pool, one rerank: both ranked by the same backend, in one order of scores
    report = found["report"]
    assert report["rerank"]["pool"] >= 2 and report["rerank"]["backend"] in {"embedding", "cross_encoder"}
    assert {rows[trip]["rank"], note["rank"]} <= {1, 2, 3}
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)

    packet = ask(reader, "context_packet_json", query)
    cited = {u["chunk_id"]: u["citation"] for u in packet["used"]}
    assert cited[trip] == f'personal:chat "Iris Calder" {TRIP_DAY.isoformat()} 18:02'
    assert cited[note["chunk_id"]] == note["citation"]
    assert shown(*TRIP[1]) in packet["text"]  # the answer, with its sender and time
    # exo.search's rows are search_json's
    cur = reader.execute("select chunk_id, citation from exo.search(%s, k => 10)", (query,))
    assert {r[0]: r[1] for r in cur} == {r["chunk_id"]: r["citation"] for r in found["results"]}


def test_a_question_naming_the_conversation_title_still_searches_its_words(corpus, reader):
    """A conversation's title (here its other person's name) is no document title: naming it takes
    no first windows as confident answers, so the lexical stage runs and finds the answer."""
    _book, trip = windows(corpus)
    found = ask(reader, "search_json", "What did Iris Calder say about Lisbon?", k=5)
    stages = {s["stage"]: s for s in found["report"]["workspaces"]["personal"]["stages"]}
    assert stages["exact"]["found"] == 0
    assert stages["lexical"]["ran"] and stages["lexical"]["found"] >= 1
    assert trip in [r["chunk_id"] for r in found["results"][:2]]


def test_a_question_naming_a_participant_looks_in_their_windows_by_meaning(corpus, reader):
    """The participant stage: the windows of the person a question names (here by first name),
    by similarity to the question, whatever words they share; it never scopes by the owner."""
    book, trip = windows(corpus)
    found = ask(reader, "search_json", "Which novel was Iris enthusiastic about?", k=5)
    stages = {s["stage"]: s for s in found["report"]["workspaces"]["personal"]["stages"]}
    assert [s["stage"] for s in found["report"]["workspaces"]["personal"]["stages"]][:4] == [
        "exact",
        "participant",
        "path",
        "lexical",
    ]
    assert stages["participant"]["found"] == 2  # both of Iris's windows, nothing else
    hits = [r for r in found["results"] if r["stage"] == "participant"]
    assert hits[0]["chunk_id"] == book and {r["chunk_id"] for r in hits} <= {book, trip}

    # The owner takes part in every window (and has no entity until `exo owner` names them);
    # a question naming nobody in the chats gives the stage nothing to look at.
    for query in ("Which novel was Sam enthusiastic about?", "Which novel was enthusiastic?"):
        found = ask(reader, "search_json", query, k=5)
        stages = {s["stage"]: s for s in found["report"]["workspaces"]["personal"]["stages"]}
        assert stages["participant"] == {
            "stage": "participant",
            "ran": False,
            "skipped": "no window open to this search of a person the question names",
        }, query


def test_every_message_is_embedded_once_with_its_window(corpus):
    with corpus.connect() as conn:
        vectors = conn.execute(
            "select count(*), count(distinct message_id) from exo_private.chat_message_embeddings"
        ).fetchone()
        chunks = [w for w in windows(corpus)]
        left = conn.execute(
            "select count(*) from exo_private.messages_to_embed(%s, 'all-MiniLM-L6-v2', 384)", (chunks,)
        ).fetchone()[0]
    assert vectors == (len(MESSAGES), len(MESSAGES))
    assert left == 0  # a window embedded again (a grown export) sends none of them again


def test_a_chat_excerpt_shows_the_message_most_similar_to_the_question(corpus, reader):
    _book, trip = windows(corpus)
    query = "When are the flights to Portugal?"
    with corpus.connect() as conn:
        vector = conn.execute("select exo.embed_query(%s) ->> 'vector'", (query,)).fetchone()[0]
        ids, similarity = conn.execute(
            "select array_agg(s.message_id order by s.message_id), array_agg(s.similarity order by s.message_id) "
            "from exo_private.chat_windows w, exo_private.message_similarity(w.message_ids, %s, "
            "(select id from exo_private.embedding_models)) s where w.chunk_id = %s",
            (vector, trip),
        ).fetchone()
    assert len(ids) == len(TRIP) and all(-1 <= v <= 1 for v in similarity)
    best = TRIP[max(range(len(TRIP)), key=similarity.__getitem__)]
    packet = ask(reader, "context_packet_json", query)
    assert trip in [u["chunk_id"] for u in packet["used"]]
    assert shown(*best) in packet["text"]
