"""Re-importing a chat export: an unchanged one writes nothing and re-windows nothing, a grown
one adds exactly its new messages and re-windows only the conversations that gained some, and
two imports of the same export at once serialize. One database for the module: each test
imports into a JSONL source of its own (`"source"`), and counts queue messages as differences."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from support.chat import jsonl, run_import, session, write
from support.db import Database, cloned_database

from exocortex.ingest.chat import ChatImportResult, import_chat

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def chats(cfg, template_db) -> Iterator[Database]:
    with cloned_database(cfg, template_db, "exo_chat_reimport") as db:
        yield db


def conversation(source: str, name: str, days: int = 0, extra: int = 0) -> list[dict]:
    """Two sessions of `name` with the owner ("Me"), a day apart; `extra` more replies at the end
    of the second."""
    start = T0 + timedelta(days=days)
    first = [(name, f"Morning! Plans for day {days}?"), ("Me", "Coffee, then the climbing club.")]
    second = [(name, "How was climbing?"), ("Me", "Great, I finally topped the blue route.")]
    second += [(name if i % 2 else "Me", f"One more thing, number {i}.") for i in range(extra)]
    return session(name.lower(), start, *first, source=source) + session(
        name.lower(), start + timedelta(days=1), *second, source=source
    )


def state(db: Database, source: str) -> dict[str, dict[str, list[tuple]]]:
    """Per conversation of a JSONL source, its rows in the chat tables, its document and its
    windows with their chunks, each row with its xmin (a row written again has another)."""
    queries = {
        "conversation": "select c.external_id, c.id, c.xmin::text, c.title from exo_private.chat_conversations c",
        "messages": "select c.external_id, m.id, m.xmin::text, m.dedupe_key, m.body, m.charged::text "
        "from exo_private.chat_messages m join exo_private.chat_conversations c on c.id = m.conversation_id",
        "participants": "select c.external_id, p.identity_id, p.xmin::text from exo_private.chat_participants p "
        "join exo_private.chat_conversations c on c.id = p.conversation_id",
        "document": "select c.external_id, d.id, d.xmin::text, d.band::text, d.size_bytes "
        "from exo_private.documents d join exo_private.chat_conversations c on c.id = d.conversation_id",
        "windows": "select c.external_id, w.chunk_id, w.xmin::text, k.xmin::text, w.message_ids, k.body "
        "from exo_private.chat_windows w "
        "join exo_private.chunks k on k.workspace = w.workspace and k.id = w.chunk_id "
        "join exo_private.chat_conversations c on c.id = w.conversation_id",
    }
    found: dict[str, dict[str, list[tuple]]] = {}
    with db.connect() as conn:
        for table, query in queries.items():
            for external_id, *row in conn.execute(
                f"{query} where c.source = %s order by 1, 2", (f"jsonl:{source}",)
            ).fetchall():
                found.setdefault(external_id, {t: [] for t in queries})[table].append(tuple(row))
    return found


def identities(db: Database, source: str) -> list[tuple]:
    with db.connect() as conn:
        return conn.execute(
            "select handle, xmin::text, person_id from exo_private.chat_identities where source = %s "
            "order by handle",
            (f"jsonl:{source}",),
        ).fetchall()


def queued(db: Database) -> dict[str, list[int]]:
    """The chunk ids in the embed queue and the extraction window ids in the extract queue."""
    with db.connect() as conn:
        return {
            queue: sorted(
                r[0] for r in conn.execute(f"select (message ->> '{key}')::bigint from pgmq.q_{queue}")
            )
            for queue, key in (("embed", "chunk_id"), ("extract", "window_id"))
        }


def chunk_ids(conversation_state: dict[str, list[tuple]]) -> set[int]:
    return {row[0] for row in conversation_state["windows"]}


def test_reimporting_an_unchanged_export_writes_nothing(chats, tmp_path):
    path = write(
        tmp_path,
        "unchanged.jsonl",
        jsonl(*conversation("same", "Ann"), *conversation("same", "Bo", days=3)),
    )
    first = run_import(chats, path, "jsonl")
    before, people, queues = state(chats, "same"), identities(chats, "same"), queued(chats)

    with chats.connect("exo_writer", autocommit=False) as conn:
        again = import_chat(conn, path, "jsonl")
        # Nothing was written or locked for update: the transaction never got an id.
        (xid,) = conn.execute("select pg_current_xact_id_if_assigned()").fetchone()
        # The stored messages were looked up a conversation at a time, not a message at a time.
        (lookups,) = conn.execute(
            "select sum(pg_stat_get_xact_numscans(indexrelid))::int from pg_index "
            "where indrelid = 'exo_private.chat_messages'::regclass"
        ).fetchone()
        conn.commit()

    assert first == ChatImportResult(
        conversations_added=2, messages_added=8, messages_seen=8, identities_added=3, windows_added=4
    )
    assert again == ChatImportResult(
        conversations_added=0, messages_added=0, messages_seen=8, identities_added=0, windows_added=0
    )
    assert xid is None
    assert lookups <= 2 < again.messages_seen
    assert state(chats, "same") == before  # same rows, windows, chunks and documents, unwritten
    assert identities(chats, "same") == people
    assert queued(chats) == queues  # no embed or extract job for anything


def test_a_grown_export_adds_exactly_its_new_messages(chats, tmp_path):
    path = write(tmp_path, "grown.jsonl", jsonl(*conversation("grow", "Ann"), *conversation("grow", "Bo")))
    run_import(chats, path, "jsonl")
    before = state(chats, "grow")

    # Ann's conversation gains three messages (from a new sender too), Cy's is new.
    grown = [*conversation("grow", "Ann", extra=2), *conversation("grow", "Bo"), *conversation("grow", "Cy")]
    grown.insert(3, {**grown[0], "sender": "Di", "text": "Hi, Di here.", "message_id": "di-1"})
    path = write(tmp_path, "grown.jsonl", jsonl(*grown))
    result = run_import(chats, path, "jsonl")
    after = state(chats, "grow")

    assert (result.messages_added, result.messages_seen) == (3 + 4, 15)
    assert (result.conversations_added, result.identities_added) == (1, 2)  # Cy's; Di and Cy
    exported = {(r["conversation_id"], "id:" + r["message_id"], r["text"]) for r in grown}
    with chats.connect() as conn:
        stored = set(
            conn.execute(
                "select c.external_id, m.dedupe_key, m.body from exo_private.chat_messages m "
                "join exo_private.chat_conversations c on c.id = m.conversation_id where c.source = 'jsonl:grow'"
            ).fetchall()
        )
        participants = conn.execute(
            "select i.handle from exo_private.chat_participants p "
            "join exo_private.chat_identities i on i.id = p.identity_id "
            "join exo_private.chat_conversations c on c.id = p.conversation_id "
            "where c.source = 'jsonl:grow' and c.external_id = 'ann' order by 1"
        ).fetchall()
    assert stored == exported
    assert participants == [("Ann",), ("Di",), ("Me",)]
    # The messages that were there stay the same rows, unwritten.
    assert after["ann"]["messages"][:4] == before["ann"]["messages"]
    assert after["bo"] == before["bo"]


def test_only_the_conversation_that_gained_a_message_is_windowed_again(chats, tmp_path):
    names = ("Ann", "Bo", "Cy")
    path = write(tmp_path, "one.jsonl", jsonl(*(r for n in names for r in conversation("one", n))))
    run_import(chats, path, "jsonl")
    before, queues = state(chats, "one"), queued(chats)

    path = write(
        tmp_path,
        "one.jsonl",
        jsonl(*(r for n in names for r in conversation("one", n, extra=1 if n == "Bo" else 0))),
    )
    result = run_import(chats, path, "jsonl")
    after, queues_after = state(chats, "one"), queued(chats)

    assert (result.messages_added, result.windows_added) == (1, 1)  # Bo's last window, cut again
    assert {k: v for k, v in after.items() if k != "bo"} == {k: v for k, v in before.items() if k != "bo"}
    assert after["bo"]["document"] != before["bo"]["document"]  # brought up to date
    new_chunks = chunk_ids(after["bo"]) - chunk_ids(before["bo"])
    assert len(new_chunks) == 1
    assert len(chunk_ids(after["bo"]) & chunk_ids(before["bo"])) == 1  # the first session's window stays
    assert queues_after["embed"] == sorted(queues["embed"] + list(new_chunks))
    assert len(queues_after["extract"]) == len(queues["extract"]) + 1


def test_an_edited_or_missing_message_changes_nothing(chats, tmp_path):
    records = conversation("edit", "Ann")
    path = write(tmp_path, "edit.jsonl", jsonl(*records))
    run_import(chats, path, "jsonl")
    before = state(chats, "edit")

    # Other text at a stored message id is not taken; a message left out of the export stays.
    edited = [{**records[0], "text": "Edited later."}, *records[1:3]]
    result = run_import(chats, write(tmp_path, "edit.jsonl", jsonl(*edited)), "jsonl")

    assert (result.messages_added, result.messages_seen, result.windows_added) == (0, 3, 0)
    assert state(chats, "edit") == before


def test_two_imports_of_the_same_export_at_once_serialize(chats, tmp_path):
    path = write(tmp_path, "twice.jsonl", jsonl(*conversation("twice", "Ann"), *conversation("twice", "Bo")))
    results: list[ChatImportResult] = []
    with chats.connect("exo_writer", autocommit=False) as first, chats.connect("exo_writer") as second:
        results.append(import_chat(first, path, "jsonl"))  # written, not committed
        # The second finds nothing stored yet, so it writes everything and waits on the first.
        waiting = threading.Thread(target=lambda: results.append(import_chat(second, path, "jsonl")))
        waiting.start()
        with chats.connect() as admin:
            for _ in range(200):
                (blocked,) = admin.execute(
                    "select count(*) from pg_stat_activity where pid = %s and wait_event_type = 'Lock'",
                    (second.info.backend_pid,),
                ).fetchone()
                if blocked:
                    break
                time.sleep(0.05)
        first.commit()
        waiting.join(timeout=60)

    assert blocked == 1
    assert [(r.messages_added, r.conversations_added, r.windows_added) for r in results] == [
        (8, 2, 4),
        (0, 0, 0),
    ]
    after = state(chats, "twice")
    assert [len(after[c]["windows"]) for c in ("ann", "bo")] == [2, 2]
