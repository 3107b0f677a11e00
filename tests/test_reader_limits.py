"""The reader's session limits (settings -> role settings) and its per-session model budget."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import psycopg
import pytest
from psycopg.types.json import Jsonb

from exocortex.ops.migrate import READER_LIMITS, MigrationError, migrate, set_reader_limits


def _set(db, key: str, value: object) -> None:
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting(%s, %s)", (key, Jsonb(value)))


def _closed_embeddings_endpoint(db) -> None:
    """Nothing listens there: the budget is checked before the call, so refusals count calls."""
    with db.connect() as conn:
        conn.execute(
            "update exo_private.settings set value = value || %s where key = 'models.embeddings'",
            (Jsonb({"url": "http://127.0.0.1:9/v1", "timeout_s": 1}),),
        )


def _normalised(db, parameter: str, value: str) -> str:
    """How the server writes `value` of `parameter` (60s -> 1min), asked of the admin."""
    with db.connect(autocommit=False) as conn:
        conn.execute("select set_config(%s, %s, true)", (parameter, value))
        return conn.execute("select current_setting(%s)", (parameter,)).fetchone()[0]


def test_a_reader_session_has_the_limits_of_the_settings(db):
    with db.connect() as conn:
        settings = dict(conn.execute("select key, value from exo_private.settings where key like 'reader.%'"))
    with db.connect("exo_reader") as conn:
        shown = {
            parameter: conn.execute("select current_setting(%s)", (parameter,)).fetchone()[0]
            for parameter in (*READER_LIMITS.values(), "default_transaction_read_only", "search_path")
        }
        limit = conn.execute("select rolconnlimit from pg_roles where rolname = current_user").fetchone()[0]
    expected = {
        parameter: _normalised(db, parameter, settings[key]) for key, parameter in READER_LIMITS.items()
    }
    assert {p: shown[p] for p in expected} == expected
    assert expected["statement_timeout"] == "30s"  # the safe defaults of migrations/0007
    assert expected["temp_file_limit"] == "512MB"
    assert (shown["default_transaction_read_only"], shown["search_path"]) == ("on", "exo")
    assert limit == settings["reader.connection_limit"] == 32


def test_a_runaway_query_is_cancelled_at_the_statement_timeout(cfg, db):
    _set(db, "reader.statement_timeout", "300ms")
    migrate(cfg, db.url())  # how an owner changes a limit: set_setting, then `exo migrate`
    with db.connect("exo_reader") as conn:
        began = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
            conn.execute("select pg_sleep(20)")
    assert time.monotonic() - began < 5


def test_a_query_whose_client_died_is_cancelled(db):
    name = f"exo-test-doomed-{uuid.uuid4().hex[:8]}"
    script = (
        "import sys, psycopg\n"
        "conn = psycopg.connect(sys.argv[1], application_name=sys.argv[2])\n"
        "conn.execute('select pg_sleep(600)')\n"
    )
    client = subprocess.Popen([sys.executable, "-c", script, db.url("exo_reader"), name])
    with db.connect() as admin:
        try:
            backend = None
            deadline = time.monotonic() + 20
            while backend is None and time.monotonic() < deadline:
                backend = admin.execute(
                    "select pid from pg_stat_activity where application_name = %s and state = 'active'",
                    (name,),
                ).fetchone()
                time.sleep(0.1)
            assert backend, "the reader's query never started"
        finally:
            os.kill(client.pid, signal.SIGKILL)
            client.wait()
        killed = time.monotonic()
        while time.monotonic() - killed < 10:
            if not admin.execute("select 1 from pg_stat_activity where pid = %s", backend).fetchone():
                break
            time.sleep(0.2)
        gone_after = time.monotonic() - killed
    # client_connection_check_interval is 2s: without it pg_sleep(600) would run on.
    assert gone_after < 8, f"the backend of a dead client still ran {gone_after:.1f} s later"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("reader.temp_file_limit", "lots"),
        ("reader.statement_timeout", "-5 parsecs"),
        ("reader.client_connection_check_interval", True),
        ("reader.connection_limit", "32"),
        ("reader.connection_limit", 0),
    ],
)
def test_a_bad_limit_is_refused_naming_the_setting(cfg, db, key, value):
    _set(db, key, value)
    with pytest.raises(MigrationError, match=key.replace(".", r"\.")):
        migrate(cfg, db.url())
    with db.connect("exo_reader") as conn:  # nothing half-applied
        assert conn.execute("select current_setting('statement_timeout')").fetchone() == ("30s",)


def test_limits_are_per_database(db, template_db):
    _set(db, "reader.idle_in_transaction_session_timeout", "5s")
    with db.connect() as conn:
        set_reader_limits(conn)
        template = conn.execute(
            """
            select s.setconfig from pg_db_role_setting s join pg_database d on d.oid = s.setdatabase
            where d.datname = %s and s.setrole = 'exo_reader'::regrole
            """,
            (template_db.name,),
        ).fetchone()[0]
    with db.connect("exo_reader") as conn:
        assert conn.execute("select current_setting('idle_in_transaction_session_timeout')").fetchone() == (
            "5s",
        )
    assert "idle_in_transaction_session_timeout=60s" in template


def _embed(conn) -> dict:
    return conn.execute("select exo.embed_query('what is in my notes')").fetchone()[0]


def test_embed_query_is_limited_per_session(db):
    _closed_embeddings_endpoint(db)
    _set(db, "reader.embed_calls_per_minute", 2)
    with db.connect("exo_reader") as conn:
        answers = [_embed(conn) for _ in range(3)]
    assert [a["error_class"] for a in answers] == ["endpoint_down", "endpoint_down", "rate_limited"]
    assert "reader.embed_calls_per_minute" in answers[2]["error"]
    assert "vector" not in answers[2]
    with db.connect("exo_reader") as conn:  # a budget per session
        assert _embed(conn)["error_class"] == "endpoint_down"


@pytest.mark.parametrize("value", [0, "many", None])
def test_embed_query_without_a_budget_embeds_nothing_and_never_errors(db, value):
    _closed_embeddings_endpoint(db)
    _set(db, "reader.embed_calls_per_minute", value)
    with db.connect("exo_reader") as conn:
        assert _embed(conn)["error_class"] == "rate_limited"
