"""Model calls made inside PostgreSQL end with their statement (issue 30).

Every call plpy/model_client.py makes on the server process's own thread asks for the statement's
interrupts while it waits (model_client.statement_check), and the search's query embedding,
fetched on a thread of its own, is cut off from the server's thread (Cancel.join): a statement
timeout, pg_cancel_backend or the reader watchdog ends a search within about a second while a
model endpoint never answers, and no thread is left holding a connection. So does a call still
connecting to a host that drops packets, or reading an answer trickled a byte at a time. The
never-answering endpoint is a stand-in (fault injection); the database, the notes and their MiniLM
embeddings are real. Every endpoint's own timeout is 60 s, so a statement that ends in seconds was cancelled.
The blocks roll back through db.transaction: a ROLLBACK sent as text after such a cancel can fail in
Apache AGE 1.8's parse hook and leave the server's lock table broken for new sessions.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg.types.json import Jsonb
from support.db import cloned_database, use_embeddings
from support.standin import Reply, StandIn, silent_port

from exocortex.db import transaction
from exocortex.ingest import pipeline
from exocortex.plpy import model_client as client

QUESTION = "how is the lighthouse lamp kept turning at night"
NOTES = {
    "lamp.md": "# The lamp\n\nThe keeper winds the clockwork every four hours so the lighthouse lamp keeps "
    "turning through the night. The lens floats on a bath of mercury.",
    "log.md": "# Keeper's log\n\nA storm on the ninth night: the lamp stopped turning at two and the keeper "
    "turned it by hand until dawn.",
    "supplies.md": "# Supplies\n\nParaffin for the lamp, oil for the clockwork, wicks and a spare mantle "
    "arrive with the boat each month.",
}
TIMEOUT_S = 60  # each endpoint's own: a call not cancelled would run this long
#: A 1 s statement timeout must end the search within this: the timeout, a POLL_S, the search's
#: own work and slack for a loaded 2-core machine (the call itself would take TIMEOUT_S).
BOUND_S = 4.0
NEVER = Reply(delay_s=300, body=b"{}")  # answers nothing until the client hangs up


@pytest.fixture(scope="module")
def notes(cfg, template_db, real_models, tmp_path_factory) -> Iterator:
    """A database holding three notes embedded by the real MiniLM."""
    from exocortex.worker.loop import Worker  # the worker's imports are heavy: only when asked

    root = tmp_path_factory.mktemp("lighthouse")
    for name, text in NOTES.items():
        (root / name).write_text(text)
    with cloned_database(cfg, template_db, "exo_cancel") as db:
        with db.connect() as conn:
            use_embeddings(conn, real_models.embeddings.url)
        pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
        Worker(cfg, dbname=db.name, once=True, queues=["embed"], poll_s=0.05).run()
        yield db


class _Undo(Exception):
    """Ends as_reader's block with its rollback."""


@contextmanager
def as_reader(conn: psycopg.Connection, **settings) -> Iterator[None]:
    """A transaction block of the admin's (autocommit) session with changed settings, run as
    exo_reader, rolled back by the ROLLBACK the session prepared (db.transaction)."""
    with contextlib.suppress(_Undo), transaction(conn):
        for key, value in settings.items():
            conn.execute(
                "update exo_private.settings set value = value || %s where key = %s"
                if isinstance(value, dict)
                else "update exo_private.settings set value = %s where key = %s",
                (Jsonb(value), key.replace("__", ".")),
            )
        conn.execute("set local role exo_reader")
        yield
        raise _Undo


def search_report(conn: psycopg.Connection) -> dict:
    return conn.execute("select exo.search_report(%s)", (QUESTION,)).fetchone()[0]


def threads_of(conn: psycopg.Connection) -> list[str]:
    """The names of the Python threads alive in the session's server process."""
    names: list[str] = []
    conn.add_notice_handler(lambda d: names.append(d.message_primary))
    conn.execute(
        "do language plpython3u $$\nimport threading\n"
        "plpy.notice(','.join(t.name for t in threading.enumerate()))\n$$"
    )
    return names[-1].split(",")


def wait_for(condition, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def timed_out(conn: psycopg.Connection, statement: str, args: tuple = ()) -> float:
    """Seconds `statement` took to be cancelled by a 1 s statement_timeout."""
    conn.execute("set local statement_timeout = '1s'")
    began = time.monotonic()
    with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
        conn.execute(statement, args)
    return time.monotonic() - began


def test_a_statement_timeout_ends_a_search_whose_rerank_endpoint_never_answers(notes):
    with StandIn(lambda path, request: NEVER) as hanging, notes.connect() as conn:
        with as_reader(conn):  # warm: the session's functions compiled, its statements prepared
            assert search_report(conn)["returned"] > 0
        settings = {
            "retrieval__rerank_order": ["cross_encoder", "deterministic"],
            "retrieval__rerank_timeout_s": TIMEOUT_S,
            "models__rerank": {"url": hanging.url, "model": "standin", "timeout_s": TIMEOUT_S},
        }
        with as_reader(conn, **settings):
            took = timed_out(conn, "select exo.search_report(%s)", (QUESTION,))
        assert hanging.calls("/rerank") == 1  # the search was waiting on the rerank when it was cut
        assert wait_for(lambda: hanging.hang_ups == 1)  # its connection closed: the server stops
        assert took < BOUND_S, f"the search took {took:.1f} s after a 1 s statement timeout"
        # The session goes on: the next search answers, by the deterministic order.
        with as_reader(conn, retrieval__rerank_order=["deterministic"]):
            assert search_report(conn)["returned"] > 0


def test_a_statement_timeout_ends_a_search_whose_query_embedding_never_comes(notes):
    with StandIn(lambda path, request: NEVER) as hanging, notes.connect() as conn:
        with as_reader(conn):
            assert search_report(conn)["query_embedding"]["source"] == "endpoint"
        settings = {
            # the embedding rerank asks for the vector whichever stages ran
            "retrieval__rerank_order": ["embedding", "deterministic"],
            "retrieval__embed_timeout_s": TIMEOUT_S,
            "models__embeddings": {"url": hanging.url, "timeout_s": TIMEOUT_S},
        }
        with as_reader(conn, **settings):
            took = timed_out(conn, "select exo.search_report(%s)", (QUESTION,))
        assert hanging.calls("/embeddings") == 1
        assert wait_for(lambda: hanging.hang_ups == 1)
        assert took < BOUND_S, f"the search took {took:.1f} s after a 1 s statement timeout"
        # Nothing was left behind in the server process.
        assert threads_of(conn) == ["MainThread"]


def test_a_search_that_never_needs_the_vector_cuts_its_fetch_off_and_returns(notes):
    with StandIn(lambda path, request: NEVER) as hanging, notes.connect() as conn:
        settings = {
            "retrieval__rerank_order": ["deterministic"],
            "retrieval__embed_timeout_s": TIMEOUT_S,
            "models__embeddings": {"url": hanging.url, "timeout_s": TIMEOUT_S},
            # no semantic stage either: nothing waits for the query's vector
            "retrieval__stages": ["exact", "lexical"],
        }
        with as_reader(conn, **settings):
            began = time.monotonic()
            found = search_report(conn)
            took = time.monotonic() - began
        assert found["returned"] > 0 and "query_embedding" not in found
        assert wait_for(lambda: hanging.hang_ups == hanging.calls("/embeddings"))
        assert took < BOUND_S
        assert threads_of(conn) == ["MainThread"]


def test_pg_cancel_backend_ends_a_query_embedding_that_never_comes(notes):
    """The reader watchdog's way (exo_private.stop_runaway_readers), on exo.embed_query's call."""
    with StandIn(lambda path, request: NEVER) as hanging, notes.connect() as admin:
        keys = ["models.embeddings", "retrieval.embed_timeout_s"]
        saved = dict(
            admin.execute("select key, value from exo_private.settings where key = any(%s)", (keys,))
        )
        admin.execute(
            "update exo_private.settings set value = %s where key = %s",
            (Jsonb(dict(saved[keys[0]], url=hanging.url)), keys[0]),
        )
        admin.execute(
            "update exo_private.settings set value = %s where key = %s", (Jsonb(TIMEOUT_S), keys[1])
        )
        try:
            with notes.connect("exo_reader") as reader:
                pid = reader.info.backend_pid

                def cut_once_asked() -> None:
                    if wait_for(lambda: hanging.calls("/embeddings") == 1, timeout=20):
                        admin.execute("select pg_cancel_backend(%s)", (pid,))

                cutter = threading.Thread(target=cut_once_asked)
                cutter.start()
                began = time.monotonic()
                with pytest.raises(psycopg.errors.QueryCanceled, match="user request"):
                    reader.execute("select exo.embed_query('the lighthouse lamp')")
                took = time.monotonic() - began
                cutter.join(20)
        finally:
            for key, value in saved.items():
                admin.execute(
                    "update exo_private.settings set value = %s where key = %s", (Jsonb(value), key)
                )
        assert wait_for(lambda: hanging.hang_ups == 1)
        assert took < BOUND_S, f"exo.embed_query took {took:.1f} s, cancelled once it asked"


@pytest.mark.parametrize("host", ["drops packets", "trickles its answer"])
def test_a_statement_timeout_ends_a_query_embedding_from_a_host_that(notes, host):
    """The call waits in the connect (the SYN unanswered) or in its reads (a byte every 0.1 s of a
    600-byte answer): each wait is cut into slices that ask for the statement's interrupts."""
    trickle = Reply(body=b" " * 600, trickle=True)
    with contextlib.ExitStack() as stack, notes.connect() as conn:
        if host == "drops packets":
            url = stack.enter_context(silent_port())
        else:
            url = stack.enter_context(StandIn(lambda path, request: trickle)).url
        settings = {
            "retrieval__embed_timeout_s": TIMEOUT_S,
            "models__embeddings": {"url": url, "timeout_s": TIMEOUT_S},
        }
        with as_reader(conn, **settings):
            took = timed_out(conn, "select exo.embed_query(%s)", (f"the lamp of a host that {host}",))
        assert took < BOUND_S, f"exo.embed_query took {took:.1f} s after a 1 s statement timeout"
        conn.execute("select 1")  # the session goes on


def test_a_block_whose_model_call_was_cancelled_rolls_back_after_ages_cache_was_invalidated(notes):
    """Apache AGE 1.8's parse hook looks pg_extension up whenever its cache of "is AGE installed"
    was invalidated, and inside an aborted transaction that lookup fails: every ROLLBACK sent as
    text then fails with "ResourceOwnerEnlarge called after release started" and the session keeps
    the catalog locks it took (seen after cancelled searches while a burst of DDL elsewhere reset
    the busy session's caches). Here the block's own GRANT invalidates it, and the ROLLBACK the
    session prepared (db.transaction) ends the block each time: the session goes on, holding
    nothing, and a new session connects."""
    with StandIn(lambda path, request: NEVER) as hanging, notes.connect() as conn:
        settings = {
            "retrieval__embed_timeout_s": TIMEOUT_S,
            "models__embeddings": {"url": hanging.url, "timeout_s": TIMEOUT_S},
        }
        for attempt in range(3):
            with as_reader(conn, **settings):
                conn.execute("reset role")
                conn.execute("grant select on pg_catalog.pg_extension to exo_reader")
                conn.execute("set local role exo_reader")
                timed_out(conn, "select exo.embed_query(%s)", (f"the lamp, attempt {attempt}",))
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            assert conn.execute("select exo.setting('retrieval.embed_timeout_s')").fetchone()[0] != TIMEOUT_S
        assert hanging.calls("/embeddings") == 3
        pid = conn.info.backend_pid
        with notes.connect() as other:
            held = other.execute("select count(*) from pg_catalog.pg_locks where pid = %s", (pid,))
            assert held.fetchone()[0] == 0


def test_outside_the_database_no_check_is_asked():
    assert client.statement_check() is None
