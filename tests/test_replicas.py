"""Read replicas: a hot standby of the suite's own cluster answers every reader function.

One replica for the module (`exo db replica add`'s code, on the suite's server, never the
user's): the example vault and a few diary notes are loaded on the primary after the standby
is made, embedded by the real MiniLM, their events read by the worker; the test waits until
the standby has replayed it all, then asks both servers the same questions as exo_reader and
compares. Every reader function (support/reader.py's list, benign arguments) must answer on
the standby as it does on the primary: nothing on the read path may write. The module ends
by promoting the replica and removing it, which must leave no slot and no directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.json import Jsonb
from support.chat import run_import
from support.db import cloned_database, configure
from support.models import free_ports
from support.reader import reader_calls, reader_functions
from support.vault import EXAMPLES, embedded_vault

from exocortex import config
from exocortex.client import api, mcp_server, routing
from exocortex.config import Config
from exocortex.db import admin_url, as_uri, connect, role_url
from exocortex.ingest import pipeline
from exocortex.ops.cron import unschedule_database
from exocortex.runtime import local, replicas, server
from exocortex.worker.loop import Worker

# It adds a replication slot, a role and a standby to the suite's server: alone, never beside
# tests that clone or drop databases (the base backup copies every one of them).
pytestmark = [pytest.mark.serial, pytest.mark.slow]

NAME = "suite"
EXO = [sys.executable, "-m", "exocortex.cli"]
CHATS = EXAMPLES / "chats"

SWIMS = {
    "2025-03-02.md": "---\ndate: 2025-03-02\n---\nSwam 40 lengths at Millbrook pool, 45 minutes.",
    "2025-03-09.md": "---\ndate: 2025-03-09\n---\nWent swimming: 30 lengths in half an hour.",
    "2025-04-02.md": "---\ndate: 2025-04-02\n---\nWent for a swim, an hour. Bought a lamp for £30.",
}


def _exo(*args: str) -> subprocess.CompletedProcess:
    return _exo_env(os.environ, *args)


def _exo_env(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*EXO, *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def replica(cfg) -> Iterator[replicas.Replica]:
    with contextlib.suppress(replicas.ReplicaProblem):
        replicas.remove(cfg, NAME)  # left by a run that was killed
    (port,) = free_ports(1)
    added = replicas.add(cfg, NAME, port, progress=lambda _m: None)
    print(f"replica made in {added.seconds:.1f} s: {added.lines}")
    yield added.replica
    with contextlib.suppress(replicas.ReplicaProblem):
        replicas.remove(cfg, NAME)


@pytest.fixture(scope="module")
def vault(cfg, template_db, real_models, replica, tmp_path_factory) -> Iterator:
    """The vault and the swimming notes, loaded on the primary once the standby streams."""
    notes = tmp_path_factory.mktemp("swims")
    for name, text in SWIMS.items():
        (notes / name).write_text(text)
    with embedded_vault(cfg, template_db, "exo_replica", real_models.embeddings.url, own=True) as db:
        pipeline.ingest(cfg, notes, "personal", dbname=db.name)
        run_import(db, CHATS / "whatsapp/WhatsApp Chat with Iris Calder.txt", "whatsapp", ["Sam Rivera"])
        Worker(cfg, dbname=db.name, once=True, queues=["embed", "events"], poll_s=0.05).run()
        with db.connect() as conn:
            conn.execute("select exo_private.kb_add_profile('ada')")
            # Both servers' answers are compared, and a packet embeds its question (and the
            # facts' texts once a session): a call that times out on one side only, under load,
            # would make them differ by the load, not by the server
            conn.execute(
                "update exo_private.settings set value = '30' where key = 'retrieval.embed_timeout_s'"
            )
        db.profile_url("ada")  # the profile's login role, on the primary
        waited = replicas.wait_for_replay(cfg, replica)
        print(f"the standby replayed the load {waited:.2f} s after it ended")
        yield db


def connect_both(cfg, replica, db, role: str = "exo_reader"):
    primary = db.connect(role)
    standby = connect(replicas.url(cfg, replica, role, db.name), "exo-test-standby", autocommit=True)
    return primary, standby


def test_the_replica_is_a_streaming_read_only_standby(cfg, replica, vault):
    primary, standby = connect_both(cfg, replica, vault, "admin")
    with primary, standby:
        assert standby.execute("select pg_is_in_recovery()").fetchone() == (True,)
        assert standby.execute("show transaction_read_only").fetchone() == ("on",)
        counts = "select count(*) from exo_private.chunk_embeddings"
        assert standby.execute(counts).fetchone() == primary.execute(counts).fetchone() != (0,)
    (row,) = [r for r in replicas.listing(cfg) if r["name"] == NAME]
    assert row["state"] == "streaming" and row["port"] == replica.port
    assert row["lag_bytes"] is not None and row["lag_bytes"] < 16 * 1024**2
    assert row["lag_s"] is not None and row["lag_s"] < 60


#: Deterministic calls whose answers must be the same on both servers.
SAME_ANSWER = [
    "select rank, chunk_id, stage, citation from exo.search('How much is my rent?', k => 5)",
    "select rank, chunk_id, stage from exo.search('sea swimming group at Cove End', k => 5)",
    "select exo.context_packet('How many times did I go swimming?', 1500)",
    "select exo.context_packet('Who is on call for the database, and how do I escalate?', 700)",
    "select sender, sent_at, body from exo.search_messages('migration', 3)",
    "select exo.dossier('Iris Calder')",
    "select * from exo.related('Iris Calder')",
    "select * from exo.facts('Sam Rivera')",
    "select * from exo.facts_search('employer', 5)",
    "select * from exo.fact_history('Sam Rivera', 'address')",
    "select * from exo.events('swim')",
    "select * from exo.event_counts('swim')",
    "select * from exo.cypher('technical', 'MATCH (n) RETURN n.name ORDER BY n.name')",
    "select * from exo.timeline('Iris Calder')",
    "select exo.document('diary/2017/2017-08-05.md')",
    "select * from exo.documents()",
]


@pytest.mark.parametrize("statement", SAME_ANSWER)
def test_the_standby_gives_the_primarys_answer(cfg, replica, vault, statement):
    primary, standby = connect_both(cfg, replica, vault)
    with primary, standby:
        expected = primary.execute(statement).fetchall()
        assert expected, f"nothing to compare: {statement}"
        assert standby.execute(statement).fetchall() == expected


def test_the_swimming_question_opens_the_timeline_on_the_standby(cfg, replica, vault):
    """The vault's sea swim and the three notes'."""
    standby = connect(replicas.url(cfg, replica, "exo_reader", vault.name), "exo-test-standby")
    with standby:
        text = standby.execute(
            "select exo.context_packet('How many times did I go swimming?', 1500)"
        ).fetchone()[0]
    assert text.split("## Timeline\n", 1)[1].splitlines()[0] == "Answer: 4 times"


def test_status_on_the_standby(cfg, replica, vault):
    primary, standby = connect_both(cfg, replica, vault)
    with primary, standby:
        here, there = (c.execute("select exo.status()").fetchone()[0] for c in (primary, standby))
    assert there["documents"] == here["documents"] and there["chunks"] == here["chunks"]


def test_every_reader_function_answers_on_the_standby_as_on_the_primary(cfg, replica, vault):
    """Each reader function with benign arguments: the same outcome on both servers (an answer,
    or the same refusal), never a read-only error that only the standby meets."""
    calls = {
        signature: (statement, args) for signature, statement, args in reader_calls(reader_functions(vault))
    }
    outcomes = {}
    primary, standby = connect_both(cfg, replica, vault)
    with primary, standby:
        for signature, (statement, args) in calls.items():
            answers = []
            for conn in (primary, standby):
                try:
                    conn.execute(statement, args).fetchall()
                    answers.append("ok")
                except psycopg.Error as exc:
                    answers.append(f"{exc.sqlstate}: {exc.diag.message_primary}")
            outcomes[signature] = answers
    # The same SQLSTATE: a kb write says why it cannot record in words of its server's own.
    differ = {s: a for s, a in outcomes.items() if a[0][:5] != a[1][:5]}
    assert not differ, differ
    assert sum(a[0] == "ok" for a in outcomes.values()) >= 20, outcomes


def test_a_profile_searches_on_the_standby_and_is_told_recording_is_the_primarys(cfg, replica, vault):
    """A profile's Reader searches in a read-write transaction to record it; a standby takes none:
    the search answers, unrecorded, and says why; a kb action is refused with the same reason."""
    url = replicas.url(cfg, replica, "exo_user_ada", vault.name)
    with api.Reader(url, profile="ada") as ada:
        found = api.search_json(ada, "How much is my rent?", k=3)
        assert found["results"]
        personal = found["report"]["personal"]
        assert personal["recorded"] is False and "standby" in personal["why"], personal
        packet = api.context_packet(ada, "How many times did I go swimming?", token_budget=1500)
        assert "## Timeline" in packet["text"] and packet["report"]["personal"]["recorded"] is False
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction, match="standby"):
            api.kb_act(ada, "thumbs_up", found["results"][0]["document_id"])
        assert api.sql(ada, "select count(*) as n from exo.workspaces")["rows"] == [[4]]


def test_the_cli_lists_the_replica_and_prints_its_reader_url(cfg, replica, vault):
    listed = _exo("db", "replica", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r["name"] == NAME]
    assert row["state"] == "streaming"
    url = _exo("db", "url", "--role", "reader", "--replica", NAME)
    assert url.returncode == 0, url.stderr
    with psycopg.connect(url.stdout.strip()) as conn:
        assert conn.execute("select current_user, pg_is_in_recovery()").fetchone() == ("exo_reader", True)
        assert conn.execute("select current_setting('port')::int").fetchone() == (replica.port,)
    writer = _exo("db", "url", "--role", "writer", "--replica", NAME)
    assert writer.returncode == 1 and "read-only standby" in writer.stderr


@contextlib.contextmanager
def replay_paused(cfg, replica, db) -> Iterator[None]:
    """The standby stops replaying (it still receives): a write on the primary leaves it behind."""
    with connect(replicas.url(cfg, replica, "admin", db.name), "exo-test", autocommit=True) as standby:
        standby.execute("select pg_wal_replay_pause()")
        try:
            yield
        finally:
            standby.execute("select pg_wal_replay_resume()")
    replicas.wait_for_replay(cfg, replica)


def write_on_primary(db) -> None:
    with db.connect() as conn:
        conn.execute(
            "select exo_private.set_setting('kb.lock_timeout', (select value from exo.settings where key = 'kb.lock_timeout'))"
        )


def caught_up(cfg, replica, db) -> None:
    """The standby has replayed a commit of this moment. Its lag (routing.LAG: the age of the last
    commit it replayed, while WAL waits to be replayed) then starts from zero, however long the
    primary was quiet before and whatever the other sessions' tests write on the shared server
    meanwhile: what a read that must be served by the replica waits for."""
    write_on_primary(db)
    replicas.wait_for_replay(cfg, replica)


def lagging_past(cfg, replica, db, bound: float) -> float:
    """With replay paused: a write on the primary, then wait until the standby's lag, as read
    routing measures it, is past `bound` (it only grows while replay is paused); returns it."""
    write_on_primary(db)
    deadline = time.monotonic() + bound + 60
    with connect(replicas.url(cfg, replica, "exo_reader", db.name), "exo-test", autocommit=True) as standby:
        while (lag := standby.execute(routing.LAG).fetchone()[1]) <= bound:
            assert time.monotonic() < deadline, f"the paused standby is {lag} s behind after {bound + 60} s"
            time.sleep(0.1)
    return lag


#: The lag bound of the routing tests: a standby that has just caught up is within it even when a
#: loaded machine stalls the read that follows for seconds; a paused one passes it in as many.
ROUTING_LAG_S = 5.0


@contextlib.contextmanager
def lag_bound(cfg, seconds: float) -> Iterator[None]:
    """replicas.max_lag_s in the runtime's memory (what status, doctor and list read)."""
    with connect(admin_url(cfg), "exo-test", autocommit=True) as conn:
        was = conn.execute("select value from exo.settings where key = 'replicas.max_lag_s'").fetchone()[0]
        conn.execute("select exo_private.set_setting('replicas.max_lag_s', %s)", (Jsonb(seconds),))
        try:
            yield
        finally:
            conn.execute("select exo_private.set_setting('replicas.max_lag_s', %s)", (Jsonb(was),))


def test_lag_past_the_bound_is_warned_by_list_status_and_doctor(cfg, replica, vault):
    """Replay paused and a write on the primary: bytes and seconds behind, and a warning past the
    bound in `exo db replica list`, `exo status` and `exo doctor`; none once it has caught up."""
    with lag_bound(cfg, 1), replay_paused(cfg, replica, vault):
        lagging_past(cfg, replica, vault, 1)
        (row,) = [r for r in replicas.listing(cfg) if r["name"] == NAME]
        assert row["lag_bytes"] > 0 and row["lag_s"] > 1 and row["max_lag_s"] == 1, row
        assert "past the bound of 1 s" in row["warning"]
        listed = _exo("db", "replica", "list")
        assert f"replica {NAME}:" in listed.stdout and "past the bound" in listed.stdout, listed.stdout
        status = _exo("status", "--json")
        assert status.returncode == 0, status.stderr
        (shown,) = [r for r in json.loads(status.stdout)["replicas"] if r["name"] == NAME]
        assert "past the bound" in shown["warning"]
        doctor = _exo("doctor")
        assert f"FAIL replica {NAME}: streaming" in " ".join(doctor.stdout.split()), doctor.stdout
    caught_up(cfg, replica, vault)
    (row,) = [r for r in replicas.listing(cfg) if r["name"] == NAME]
    assert row["warning"] is None and row["lag_s"] < row["max_lag_s"], row  # others' tests write meanwhile
    doctor = _exo("doctor")
    assert f"ok replica {NAME}: streaming," in " ".join(doctor.stdout.split()), doctor.stdout


def routed(cfg, replica, db, **kw) -> api.Reader:
    """The primary's reader with the replica to route to, as EXO_READER_URLS gives it."""
    return api.Reader(
        db.url("exo_reader"), replicas=((NAME, replicas.url(cfg, replica, "exo_reader", db.name)),), **kw
    )


@pytest.mark.parametrize("pooled", [False, True])
def test_reads_go_to_the_replica_and_fall_back_when_it_lags_or_stops(
    cfg, replica, vault, pooled, monkeypatch
):
    """Each read that must be the replica's comes once the standby has caught up (the others'
    tests write on the same server all along); one that must be the primary's, once the paused
    standby's lag is past the bound. A replica found down is passed over for 1 s rather than
    routing.DOWN_S (5 s), which the test would only wait out."""
    monkeypatch.setattr(routing, "DOWN_S", 1.0)
    reader = routed(cfg, replica, vault, max_lag_s=ROUTING_LAG_S)
    with reader.pooled(2) if pooled else reader as reader:
        caught_up(cfg, replica, vault)
        found = api.search_json(reader, "How much is my rent?", k=3)
        assert found["report"]["served_by"] == NAME and found["results"]
        caught_up(cfg, replica, vault)
        assert api.context_packet(reader, "How many times did I go swimming?")["report"]["served_by"] == NAME
        caught_up(cfg, replica, vault)
        assert reader.run(lambda c: c.execute("select pg_is_in_recovery() as r").fetchone()["r"]) == (
            True,
            NAME,
        )
        assert api.sql(reader, "select count(*) as n from exo.workspaces")["rows"] == [[4]]
        with replay_paused(cfg, replica, vault):
            lagging_past(cfg, replica, vault, ROUTING_LAG_S)
            behind = api.search_json(reader, "How much is my rent?", k=3)
            assert behind["report"]["served_by"] == "primary"
            assert "behind" in behind["report"]["replicas_passed_over"][NAME]
            assert behind["results"] == found["results"]
        time.sleep(routing.LAGGING_S)
        caught_up(cfg, replica, vault)
        assert api.search_json(reader, "How much is my rent?", k=3)["report"]["served_by"] == NAME
        replicas.stop(cfg, replica)
        try:
            stopped = api.search_json(reader, "How much is my rent?", k=3)
            assert stopped["report"]["served_by"] == "primary" and stopped["results"] == found["results"]
            assert api.dossier(reader, "Iris Calder")  # a rows call falls back as well
        finally:
            replicas.start(cfg, replica)
        time.sleep(routing.DOWN_S)
        caught_up(cfg, replica, vault)
        assert api.search_json(reader, "How much is my rent?", k=3)["report"]["served_by"] == NAME


def test_the_mcp_tools_that_answer_rows_say_which_server_gave_them(cfg, replica, vault):
    """With read routing, a tool's rows end with {"served_by": ...} and an object gets the key (the
    search tool's report says it already); without replicas an answer is as it was."""
    specs = {spec.name: spec for spec in mcp_server.TOOLS}
    caught_up(cfg, replica, vault)
    with routed(cfg, replica, vault) as reader:
        tool = {
            name: mcp_server.make_tool(specs[name], reader)
            for name in ("search_messages", "status", "sql", "search")
        }
        messages = json.loads(tool["search_messages"](query="migration", max_results=3))
        assert messages[-1] == {"served_by": NAME} and all("served_by" not in m for m in messages[:-1])
        assert json.loads(tool["status"]())["served_by"] == NAME
        assert (
            json.loads(tool["sql"](statement="select count(*) as n from exo.workspaces"))["served_by"] == NAME
        )
        found = json.loads(tool["search"](query="How much is my rent?", k=3))
        assert found["report"]["served_by"] == NAME and "served_by" not in found
        replicas.stop(cfg, replica)
        try:
            fallen = json.loads(tool["search_messages"](query="migration", max_results=3))
            assert fallen == [*messages[:-1], {"served_by": "primary"}]
        finally:
            replicas.start(cfg, replica)
            replicas.wait_for_replay(cfg, replica)
    with api.Reader(vault.url("exo_reader")) as plain:
        rows = json.loads(
            mcp_server.make_tool(specs["search_messages"], plain)(query="migration", max_results=3)
        )
    assert rows == messages[:-1]


def test_a_profiles_search_on_the_replica_is_recorded_on_the_primary(cfg, replica, vault):
    """A routed profile: the replica answers, the record goes to the primary (deferred, said in
    the report), and a kb action goes to the primary and succeeds."""
    url = vault.profile_url("ada")
    replica_url = replicas.url(cfg, replica, "exo_reader", vault.name)
    caught_up(cfg, replica, vault)
    with api.Reader(url, profile="ada", replicas=((NAME, replica_url),)) as ada:
        found = api.search_json(ada, "Who is on call for the database?", k=3)
        report = found["report"]
        assert report["served_by"] == NAME
        assert (
            report["personal"]["recorded"] is True
            and "recorded on the primary" in report["personal"]["deferred"]
        )
        fetched = {s["document_id"]: s["fetch_count"] for s in report["provenance"]["sources"]}
        assert fetched and all(n >= 1 for n in fetched.values())
        with vault.connect() as admin:
            counts = dict(
                admin.execute(
                    "select i.document_id, i.fetch_count from exo_private.kb_items i "
                    "join exo_private.kb_profiles p on p.id = i.profile_id where p.name = 'ada'"
                ).fetchall()
            )
        assert {d: counts.get(d) for d in fetched} == fetched
        state = api.kb_act(ada, "thumbs_up", found["results"][0]["document_id"])
        assert state


def test_the_cli_routes_reads_through_exo_reader_urls(cfg, replica, vault):
    urls = _exo("db", "url", "--role", "reader", "--replicas")
    assert urls.returncode == 0, urls.stderr
    assert urls.stdout.strip() == as_uri(replicas.url(cfg, replica, "exo_reader"))
    env = os.environ | {"EXO_READER_URLS": urls.stdout.strip(), "EXO_DB_NAME": vault.name}
    caught_up(cfg, replica, vault)
    found = subprocess.run(
        [*EXO, "search", "--json", "How much is my rent?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["report"]["served_by"] == NAME


def test_the_standby_holds_back_the_primarys_vacuum_for_its_reads(cfg, replica, vault):
    """hot_standby_feedback: the standby tells the primary the oldest transaction its reads may see,
    kept on its slot (xmin), so the primary's vacuum keeps those rows and replay cancels no long read."""
    with connect(replicas.url(cfg, replica, "admin", vault.name), "exo-test", autocommit=True) as standby:
        assert standby.execute("show hot_standby_feedback").fetchone() == ("on",)
    deadline = time.monotonic() + 30  # a walreceiver reports every wal_receiver_status_interval (10 s)
    with vault.connect() as conn:
        slot_xmin = "select xmin from pg_replication_slots where slot_name = %s"
        while conn.execute(slot_xmin, (replica.slot,)).fetchone()[0] is None:
            assert time.monotonic() < deadline, "the standby sent no feedback in 30 s"
            time.sleep(0.5)


ELSEWHERE = "far"


def test_a_memory_copied_by_exo_db_copy_answers_on_the_standby(cfg, replica, vault):
    """A copy made while a standby streams reaches it through WAL: made by the default strategy
    (WAL_LOG: each page logged without the hole between its line pointers and its tuples) its
    BM25 indexes found nothing there and exo.search crashed the standby's backend (signal 11).
    exo db copy copies the files (FILE_COPY), which the standby copies from its own."""
    name = f"exo_replica_copy_{os.getpid()}"
    question = "select rank, chunk_id, stage from exo.search('How much is my rent?', k => 5)"
    try:
        server.copy_database(dataclasses.replace(cfg, database=vault.name), name)
        replicas.wait_for_replay(cfg, replica)
        with (
            connect(role_url(cfg, "exo_reader", name), "exo-test") as primary,
            connect(replicas.url(cfg, replica, "exo_reader", name), "exo-test-standby") as standby,
        ):
            expected = primary.execute(question).fetchall()
            assert expected
            assert standby.execute(question).fetchall() == expected
    finally:
        with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as admin:
            unschedule_database(admin_url(cfg, "postgres"), name)
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def test_a_replica_elsewhere_is_made_by_the_script_add_prints_and_streams_as_its_own_role(
    cfg, replica, vault
):
    """`add --host`: the primary gets a replication role of the replica's own, a pg_hba.conf line for
    it from that address and a slot; the script printed, run as the other host would run it (here in
    the runtime's root, on another port of 127.0.0.1), makes a standby that streams as that role and
    that `list` reads as exo_reader; the readers' watchdog that add started here logs in there once it
    is made (loopback lets the admin in); remove takes the role, the line, the slot and the watchdog
    away."""
    with contextlib.suppress(replicas.ReplicaProblem):
        replicas.remove(cfg, ELSEWHERE)  # left by a run that was killed
    unreachable = _exo("db", "replica", "add", ELSEWHERE, "--host", "10.9.8.7")
    assert unreachable.returncode == 1 and "EXO_PG_LISTEN" in unreachable.stderr, unreachable.stderr
    assert all(r.name != ELSEWHERE for r in replicas.load(cfg))
    role = replicas.SLOT_PREFIX + ELSEWHERE
    (port,) = free_ports(1)
    added = _exo("db", "replica", "add", ELSEWHERE, "--host", "127.0.0.1", "--port", str(port))
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith(f"# Replica {ELSEWHERE} of exocortex")  # the script alone on stdout
    roles = "select rolreplication, rolsuper from pg_roles where rolname = %s"
    slots = "select count(*) from pg_replication_slots where slot_name = %s"
    with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
        assert conn.execute(roles, (role,)).fetchone() == (True, False)
        assert conn.execute(slots, (role,)).fetchone() == (1,)
        hba = replicas.host_path(cfg, conn.execute("show hba_file").fetchone()[0])
    assert f"host    replication     {role}  127.0.0.1/32  scram-sha-256" in hba.read_text().splitlines()
    far = replicas.find(cfg, ELSEWHERE)
    watchdog = replicas.watchdog_pid(cfg, far)
    assert (
        watchdog is not None
        and f"started its readers' watchdog on this machine (pid {watchdog}" in added.stderr
    )
    folder = elsewhere_folder(cfg)
    data = f"{folder}/data"
    try:
        # A copy of the whole suite's cluster, as the module's own replica.
        run_printed_script(cfg, added.stdout, data, timeout=600)
        streaming = "select usename, state from pg_stat_replication where application_name = %s"
        deadline = time.monotonic() + 60
        with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
            while conn.execute(streaming, (ELSEWHERE,)).fetchone() != (role, "streaming"):
                assert time.monotonic() < deadline, conn.execute(streaming, (ELSEWHERE,)).fetchone()
                time.sleep(0.2)
        (row,) = [r for r in replicas.listing(cfg) if r["name"] == ELSEWHERE]
        assert (row["state"], row["host"], row["port"]) == ("streaming", "127.0.0.1", port), row
        assert row["lag_s"] is not None and row["lag_bytes"] is not None
        wait_for_guard(cfg, f"watchdog (pid {watchdog})")  # it tries again every 10 s
        removed = _exo("db", "replica", "remove", ELSEWHERE)
        assert removed.returncode == 0, removed.stderr
        assert watch_processes(ELSEWHERE) == [] and not replicas._watchdog_file(cfg, far, "pid").exists()
        with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
            assert conn.execute(roles, (role,)).fetchone() is None
            assert conn.execute(slots, (role,)).fetchone() == (0,)
        assert role not in hba.read_text()
    finally:
        replicas._in_root(cfg, [f"{local.PGBIN}/pg_ctl", "stop", "-m", "immediate", "-D", data])
        shutil.rmtree(replicas.host_path(cfg, folder), ignore_errors=True)
        with contextlib.suppress(replicas.ReplicaProblem):
            replicas.remove(cfg, ELSEWHERE)


def listed_row(cfg, name: str) -> dict:
    """Replica `name`'s row of `exo db replica list`."""
    (row,) = [r for r in replicas.listing(cfg) if r["name"] == name]
    return row


def elsewhere_folder(cfg) -> str:
    """The folder in cfg's runtime root that stands for the other machine's (made, postgres's)."""
    folder = f"{replicas.REPLICAS_DIR}/{ELSEWHERE}-elsewhere"
    replicas._in_root(cfg, ["mkdir", "-p", folder], user=None, check=True)
    replicas._in_root(cfg, ["chown", "postgres:postgres", folder], user=None, check=True)
    return folder


def run_printed_script(cfg, script: str, data: str, timeout: int) -> None:
    """The script `exo db replica add --host` printed, run as the other machine would: the
    standby made in `data`."""
    made = replicas._in_root(
        cfg, ["sh", "-c", script], env={"DATA": data}, preexec_fn=replicas._soft_data_limit, timeout=timeout
    )
    assert made.returncode == 0, made.stderr


@contextlib.contextmanager
def watchdog_job(cfg, db, every_s: int, limit_s: int) -> Iterator[None]:
    """On the primary: reader.max_statement_s and reader.max_idle_in_transaction_s of `db`, and its
    exo-reader-watchdog job every `every_s` (`exo migrate` schedules it every 10 s; a test clone
    has none), replayed by the standby."""
    job = f"exo-reader-watchdog@{db.name}"
    keys = ["reader.max_statement_s", "reader.max_idle_in_transaction_s"]
    with db.connect() as conn, connect(admin_url(cfg), "exo-test", autocommit=True) as cron:
        was = conn.execute("select key, value from exo.settings where key = any(%s)", (keys,)).fetchall()
        for key in keys:
            conn.execute("select exo_private.set_setting(%s, %s)", (key, Jsonb(limit_s)))
        cron.execute(
            "select cron.schedule_in_database(%s, %s, 'select count(*) from exo_private.stop_runaway_readers()', %s, 'exo_owner')",
            (job, f"{every_s} seconds", db.name),
        )
        try:
            yield
        finally:
            cron.execute("select cron.unschedule(jobid) from cron.job where jobname = %s", (job,))
            for key, value in was:
                conn.execute("select exo_private.set_setting(%s, %s)", (key, Jsonb(value)))


def _sleep_on(conn, seconds: float, outcome: dict) -> threading.Thread:
    def run() -> None:
        began = time.monotonic()
        try:
            conn.execute("select pg_catalog.pg_sleep(%s)", (seconds,))
            outcome["finished"] = time.monotonic() - began
        except psycopg.Error as exc:
            outcome["error"], outcome["after"] = exc, time.monotonic() - began

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_runaway_reader_on_the_standby_is_stopped_by_the_replicas_watchdog(cfg, replica, vault):
    """pg_cron runs nothing on a standby, and statement_timeout is a role default a session may lift:
    the replica's watchdog, started with it, runs the primary's exo-reader-watchdog jobs there. A
    reader that lifted its timeout and runs past reader.max_statement_s is cancelled (exo_reader's
    session and a profile's), one left idle in a transaction past its limit is ended; one within
    the bound finishes. list, status and doctor
    say what guards the replica's readers, and warn when its watchdog is gone."""
    with watchdog_job(cfg, vault, every_s=1, limit_s=3):
        replicas.wait_for_replay(cfg, replica)
        reader = connect(
            replicas.url(cfg, replica, "exo_reader", vault.name), "exo-test-runaway", autocommit=True
        )
        profile = connect(
            replicas.url(cfg, replica, "exo_user_ada", vault.name), "exo-test-runaway", autocommit=True
        )
        normal = connect(
            replicas.url(cfg, replica, "exo_reader", vault.name), "exo-test-normal", autocommit=True
        )
        idle = connect(replicas.url(cfg, replica, "exo_reader", vault.name), "exo-test-idle")
        with reader, profile, normal, idle:
            assert reader.execute("select pg_is_in_recovery()").fetchone() == (True,)
            reader.execute("set statement_timeout = 0")
            profile.execute("set statement_timeout = 0")
            idle.execute("set idle_in_transaction_session_timeout = 0")
            idle.execute("select 1")  # a transaction open, and left idle
            runaway, unbounded, fine = {}, {}, {}
            threads = [
                _sleep_on(reader, 60, runaway),
                _sleep_on(profile, 60, unbounded),
                _sleep_on(normal, 1.5, fine),
            ]
            for thread in threads:
                thread.join(30)
            assert not any(t.is_alive() for t in threads)
            with pytest.raises(psycopg.OperationalError):  # ended past the idle limit meanwhile
                idle.execute("select 1")
        assert "finished" in fine and "error" not in fine, fine
        for outcome in (runaway, unbounded):
            assert isinstance(outcome.get("error"), psycopg.errors.QueryCanceled), outcome
            assert 3 <= outcome["after"] < 10, outcome  # the bound, then a round of the watchdog (1 s)
    log = replicas._watchdog_file(cfg, replica, "log")
    began = time.monotonic()  # it says what it signalled once the function returns
    while not all(f"{vault.name}: {action} pid" in log.read_text() for action in ("cancel", "terminate")):
        assert time.monotonic() - began < 5, log.read_text()
        time.sleep(0.1)
    (row,) = [r for r in replicas.listing(cfg) if r["name"] == NAME]
    assert row["readers_guard"].startswith("watchdog (pid") and row["guard_warning"] is None, row
    doctor = _exo("doctor")
    assert f"ok replica {NAME} readers: watchdog" in " ".join(doctor.stdout.split()), doctor.stdout
    replicas.stop_watchdog(cfg, replica)
    try:
        began = time.monotonic()  # its sessions on the standby end as it exits
        while (row := next(r for r in replicas.listing(cfg) if r["name"] == NAME))["guard_warning"] is None:
            assert time.monotonic() - began < 10, row
            time.sleep(0.2)
        assert row["readers_guard"].startswith("role defaults only") and "`exo db up`" in row["guard_warning"]
        listed = _exo("db", "replica", "list")
        assert f"replica {NAME}: no reader watchdog" in " ".join(listed.stdout.split()), listed.stdout
        doctor = _exo("doctor")
        assert f"FAIL replica {NAME} readers: role defaults only" in " ".join(doctor.stdout.split()), (
            doctor.stdout
        )
    finally:
        replicas.start(cfg, replica)  # the server runs: its watchdog starts again
    began = time.monotonic()  # once it has started and connected
    while (row := next(r for r in replicas.listing(cfg) if r["name"] == NAME))["guard_warning"] is not None:
        assert time.monotonic() - began < 10, row
        time.sleep(0.2)
    assert replicas.watchdog_pid(cfg, replica) is not None


def watch_processes(name: str) -> list[int]:
    """The live processes whose command line is `... db replica watch NAME`, however started."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")[:-1] if entry.name.isdigit() else []
        except OSError:  # ended meanwhile
            continue
        if argv[-4:] == [b"db", b"replica", b"watch", name.encode()]:
            found.append(int(entry.name))
    return sorted(found)


def test_one_watchdog_runs_for_a_replica_however_many_start_it(cfg, replica, vault):
    """Two `exo db up` at once (start_watchdog in two threads, each seeing none run) start one
    watchdog: the second process ends as it finds the lock held, and both starts name the one that
    runs; one started by hand beside it ends at once and says which runs; list names that one."""
    replicas.stop_watchdog(cfg, replica)
    assert watch_processes(NAME) == []
    started: list[int | None] = []
    threads = [
        threading.Thread(target=lambda: started.append(replicas.start_watchdog(cfg, replica))) for _ in "ab"
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    (pid,) = set(started)
    assert pid is not None and len(started) == 2
    assert watch_processes(NAME) == [pid] == [replicas.watchdog_pid(cfg, replica)]
    assert "has a watchdog already" in replicas._watchdog_file(cfg, replica, "log").read_text()
    by_hand = _exo_env(os.environ, "db", "replica", "watch", NAME, timeout=60)
    assert by_hand.returncode == 0 and f"replica {NAME} has a watchdog already (pid {pid})" in by_hand.stderr
    assert watch_processes(NAME) == [pid]
    deadline = time.monotonic() + 30  # once it has connected
    while (row := next(r for r in replicas.listing(cfg) if r["name"] == NAME))["guard_warning"] is not None:
        assert time.monotonic() < deadline, row
        time.sleep(0.2)
    assert row["readers_guard"].startswith(f"watchdog (pid {pid})"), row


def test_promote_then_remove_leaves_no_slot_and_no_directory(cfg, replica, vault):
    """Last in the module: promotion ends the standby (its slot goes at once), remove deletes it."""
    promoted = _exo("db", "replica", "promote", NAME)
    assert promoted.returncode == 0, promoted.stderr
    assert "EXO_DATABASE_URL" in promoted.stdout
    with connect(replicas.url(cfg, replica, "admin", vault.name), "exo-test", autocommit=True) as conn:
        assert conn.execute("select pg_is_in_recovery()").fetchone() == (False,)
    assert watch_processes(NAME) == []  # its pg_cron runs the job now
    slot = "select count(*) from pg_replication_slots where slot_name = %s"
    with vault.connect() as conn:
        assert conn.execute(slot, (replica.slot,)).fetchone() == (0,)
    folder = local.data_dir(cfg).parent / "replicas" / NAME
    assert folder.exists()
    # A copy of the whole suite's cluster (every test database of every run at once) to delete.
    removed = _exo_env(os.environ, "db", "replica", "remove", NAME, timeout=600)
    assert removed.returncode == 0, removed.stderr
    assert not folder.exists()
    assert all(r.name != NAME for r in replicas.load(cfg))
    began = time.monotonic()
    while local.port_free(replica.port) is False and time.monotonic() - began < 10:
        time.sleep(0.1)
    assert local.port_free(replica.port)


# -- workers on other hosts -----------------------------------------------------------------


class Proxy:
    """A model endpoint of a worker's own host: forwards to the real MiniLM and keeps the inputs of
    each answer it gave. After `answer` answers it holds every request until it stops (the model
    busy), and sets `holding`: its worker is then in the middle of a batch."""

    def __init__(self, target: str, answer: int | None = None):
        self.target, self.answer = target.rstrip("/"), answer
        self.answered: list[list[str]] = []
        self.holding, self.stopping = threading.Event(), threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with proxy.lock:
                    hold = proxy.answer is not None and len(proxy.answered) + proxy.taken >= proxy.answer
                    proxy.taken += 0 if hold else 1
                if hold:
                    proxy.holding.set()
                    proxy.stopping.wait()
                    return
                path = self.path.removeprefix("/v1")
                request = urllib.request.Request(
                    proxy.target + path, body, {"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request, timeout=60) as reply:
                    answer = reply.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                with proxy.lock:
                    proxy.taken -= 1
                    proxy.answered.append(json.loads(body)["input"])

        self.lock, self.taken = threading.Lock(), 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def test_the_writer_url_for_another_host_needs_an_address_it_reaches(cfg):
    """The suite's server listens on 127.0.0.1 only: a host elsewhere is told how to open it."""
    far = _exo("db", "url", "--role", "writer", "--remote", "10.9.8.7")
    assert far.returncode == 1 and "EXO_PG_LISTEN" in far.stderr, far.stderr
    named = _exo("db", "url", "--role", "writer", "--remote", "worker.example")
    assert named.returncode == 1 and "IP address" in named.stderr, named.stderr
    assert _exo("db", "url", "--role", "reader", "--remote", "127.0.0.1").returncode != 0


def own_address() -> str | None:
    """This machine's IPv4 address on its default route (connecting a UDP socket sends nothing),
    or None when it has none but loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if ipaddress.ip_address(address).is_loopback else address


@pytest.fixture
def listening_runtime(cfg, tmp_path, monkeypatch) -> Iterator[tuple[Config, dict, str]]:
    """A runtime of its own, seeded from the suite's root and migrated, listening on 127.0.0.1 and
    this machine's own address (the suite's server listens on loopback only): its config, the
    environment that names it, and the address."""
    address = own_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    (port,) = free_ports(1)
    named = {
        "EXO_HOME": str(tmp_path / "home"),
        "EXO_PG_PORT": str(port),
        "EXO_PG_LISTEN": f"127.0.0.1,{address}",
    }
    for key, value in named.items():
        monkeypatch.setenv(key, value)
    other = config.load()
    monkeypatch.undo()
    server.up(other, lambda _m: None, seed=cfg.runtime_root)
    try:
        env = {**os.environ, **named}
        migrated = _exo_env(env, "migrate", timeout=300)
        assert migrated.returncode == 0, migrated.stderr
        yield other, env, address
    finally:
        server.down(other)
        shutil.rmtree(other.home, ignore_errors=True)


def test_a_worker_and_a_replica_reach_the_primary_by_this_machines_own_address(listening_runtime, tmp_path):
    """`exo db url --role writer --remote A` and `exo db replica add --host A`, A this machine's own
    non-loopback address: a connection to A comes from A, as another host's comes from its own, so
    only the pg_hba.conf line for A lets it in. The writer is refused before the URL is asked for;
    with it, a worker that has nothing but the URL drains and registers. The standby the script
    makes streams from A as its own role; `list` reads it as exo_reader once its pg_hba.conf lets
    the reader in, and warns that the readers' watchdog add started here has no session there
    until the admin is let in too; then it has. Killed, `exo db up` starts it again; `exo db down`
    stops it (the standby elsewhere runs on)."""
    other, env, address = listening_runtime
    by_address = make_conninfo(role_url(other, "exo_writer"), host=address, port=other.port)
    with pytest.raises(psycopg.OperationalError, match="pg_hba.conf"):
        psycopg.connect(by_address, connect_timeout=5).close()
    printed = _exo_env(env, "db", "url", "--role", "writer", "--remote", address)
    assert printed.returncode == 0, printed.stderr
    url = printed.stdout.strip()
    assert conninfo_to_dict(url)["host"] == address
    with psycopg.connect(url, connect_timeout=5) as conn:
        assert conn.execute(
            "select host(inet_client_addr()), host(inet_server_addr()), current_user"
        ).fetchone() == (address, address, "exo_writer")
    elsewhere = {**env, "EXO_HOME": str(tmp_path / "elsewhere"), "EXO_WRITER_URL": url}
    drained = _exo_env(elsewhere, "worker", "--once", "--queue", "events")
    assert drained.returncode == 0, drained.stderr
    with connect(admin_url(other), "exo-test", autocommit=True) as conn:
        assert conn.execute("select queues, stop_reason from exo_private.workers").fetchall() == [
            (["events"], "drained")
        ]

    (port,) = free_ports(1)
    added = _exo_env(env, "db", "replica", "add", ELSEWHERE, "--host", address, "--port", str(port))
    assert added.returncode == 0, added.stderr
    data = f"{elsewhere_folder(other)}/data"
    try:
        run_printed_script(other, added.stdout, data, timeout=300)
        role = replicas.SLOT_PREFIX + ELSEWHERE
        streaming = "select usename, host(client_addr), state from pg_stat_replication"
        deadline = time.monotonic() + 60
        with connect(admin_url(other, "postgres"), "exo-test", autocommit=True) as conn:
            while conn.execute(streaming).fetchall() != [(role, address, "streaming")]:
                assert time.monotonic() < deadline, conn.execute(streaming).fetchall()
                time.sleep(0.2)
        # As the script's last lines say: the reader let in, then, for the watchdog, the admin.
        admin_line = f"host  all  postgres  {address}/32  scram-sha-256"
        assert f"#   {admin_line}\n" in added.stdout
        let_in(other, data, f"host  {other.database}  exo_reader  {address}/32  scram-sha-256")
        (row,) = replicas.listing(other)
        assert (row["state"], row["host"], row["port"]) == ("streaming", address, port), row
        far = replicas.find(other, ELSEWHERE)
        watchdog = replicas.watchdog_pid(other, far)  # add started it; it cannot log in there yet
        assert (
            watchdog is not None
            and f"its watchdog (pid {watchdog}) has no session there" in row["guard_warning"]
        )
        assert "pg_hba.conf must let postgres in from this machine" in row["guard_warning"], row
        let_in(other, data, admin_line)
        wait_for_guard(other, f"watchdog (pid {watchdog})")  # it tries again every 10 s
        # Killed: `exo db up` starts it again, as it does a local replica's.
        os.kill(watchdog, signal.SIGKILL)
        wait_for_guard(other, "role defaults only")
        assert "`exo db up` starts it" in replicas.listing(other)[0]["guard_warning"]
        up = _exo_env(env, "db", "up")
        assert (
            up.returncode == 0 and f"replica {ELSEWHERE} on {address}:{port}: its watchdog runs" in up.stdout
        ), up
        again = replicas.watchdog_pid(other, far)
        assert again not in (None, watchdog) and watch_processes(ELSEWHERE) == [again]
        wait_for_guard(other, f"watchdog (pid {again})")
        down = _exo_env(env, "db", "down")
        assert (
            down.returncode == 0
            and f"replica {ELSEWHERE} on {address}:{port}: stopped its watchdog" in down.stdout
        )
        assert watch_processes(ELSEWHERE) == []
    finally:
        replicas._in_root(other, [f"{local.PGBIN}/pg_ctl", "stop", "-m", "immediate", "-D", data])
        with contextlib.suppress(replicas.ReplicaProblem):
            replicas.remove(other, ELSEWHERE)


def let_in(cfg, data: str, line: str) -> None:
    """A line added to the pg_hba.conf of the standby in `data`, reloaded."""
    with open(replicas.host_path(cfg, f"{data}/pg_hba.conf"), "a") as hba:
        hba.write(f"{line}\n")
    assert replicas._in_root(cfg, [f"{local.PGBIN}/pg_ctl", "reload", "-D", data]).returncode == 0
    time.sleep(0.5)  # the postmaster rereads pg_hba.conf on SIGHUP, a moment after


def wait_for_guard(cfg, guard: str) -> None:
    """Until `list` says the replica elsewhere's readers are guarded by `guard...` (30 s at most)."""
    deadline = time.monotonic() + 30
    while not ((row := listed_row(cfg, ELSEWHERE))["readers_guard"] or "").startswith(guard):
        assert time.monotonic() < deadline, row
        time.sleep(0.2)


def test_two_workers_on_their_own_endpoints_drain_one_queue_through_a_kill_9(
    cfg, template_db, real_models, tmp_path
):
    """Two worker processes, each with the writer URL for another host and a model endpoint of its
    own (a forwarder to MiniLM, the setting's own url unreachable), drain one embed queue; one is
    killed -9 in the middle of a batch. Every chunk is embedded once, no batch answered twice, every
    message archived, none dead-lettered; exo status listed both by host while they ran."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(40):
        (notes / f"note-{n:02}.md").write_text(
            f"Note {n}: the {n}th walk along the canal, {n + 3} km in the rain."
        )
    with cloned_database(cfg, template_db, "exo_workers") as db:
        embeddings = {
            "url": "http://127.0.0.1:9/v1",
            "model": "all-MiniLM-L6-v2",
            "dimensions": 384,
            "timeout_s": 30,
        }
        configure(db, models__embeddings=embeddings, worker__embed_batch=3, worker__dead_after_s=2)
        pipeline.ingest(cfg, notes, "personal", dbname=db.name)
        with db.connect() as conn:
            chunks = conn.execute("select count(*) from exo_private.chunks").fetchone()[0]
            sent = conn.execute("select count(*) from pgmq.q_embed").fetchone()[0]
        assert chunks >= 40 and sent == chunks
        env = os.environ | {"EXO_DB_NAME": db.name}
        url = _exo_env(env, "db", "url", "--role", "writer", "--remote", "127.0.0.1")
        assert url.returncode == 0, url.stderr
        assert psycopg.conninfo.conninfo_to_dict(url.stdout.strip())["user"] == "exo_writer"
        env |= {"EXO_WRITER_URL": url.stdout.strip()}
        victim, survivor = Proxy(real_models.embeddings.url, answer=2), Proxy(real_models.embeddings.url)
        procs = []
        try:
            # The victim takes one batch at a time: when its third is held, its first two are written.
            for proxy, concurrency in ((victim, "1"), (survivor, "2")):
                argv = [*EXO, "worker", "--once", "--queue", "embed", "--concurrency", concurrency,
                        "--endpoint", f"embeddings={proxy.url}"]  # fmt: skip
                procs.append(
                    subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                )
            assert victim.holding.wait(120), "the first worker never took a third batch"
            with db.connect() as conn:
                hosts = conn.execute("select exo.status() -> 'worker' -> 'hosts'").fetchone()[0]
            assert hosts[socket.gethostname()]["running"] == 2, hosts
            procs[0].send_signal(signal.SIGKILL)
            _out, errors = procs[1].communicate(timeout=300)
            assert procs[1].returncode == 0, errors
        finally:
            for proc in procs:
                proc.kill()
                proc.communicate()
            victim.close()
            survivor.close()
        answered = [text for batch in victim.answered + survivor.answered for text in batch]
        assert len(victim.answered) == 2 and survivor.answered
        assert len(answered) == len(set(answered)) == chunks, "a chunk was embedded twice, or never"
        with db.connect() as conn:
            assert conn.execute("select count(*) from exo_private.chunk_embeddings").fetchone()[0] == chunks
            assert conn.execute("select count(*), count(distinct msg_id) from pgmq.a_embed").fetchone() == (
                sent,
                sent,
            )
            assert conn.execute("select count(*) from pgmq.q_embed").fetchone()[0] == 0
            assert conn.execute("select count(*) from pgmq.q_dead_letter").fetchone()[0] == 0
            stopped = conn.execute("select stop_reason from exo_private.workers order by id").fetchall()
        assert sorted(reason.split(":")[0] for (reason,) in stopped) == ["dead", "drained"], stopped
