"""exocortex.client.api's pooled Reader: session options and a warm plpython session on every pooled
connection, dead connections discarded (a restart fails at most one call), the real reason
when the database refuses, and pgvector's adapter where the vector type is visible."""

from __future__ import annotations

import time

import psycopg
import pytest
from pgvector import Vector
from psycopg import sql
from support.db import admin_connection, configure
from support.standin import StandIn, embeddings

from exocortex.client import api
from exocortex.db import register_vector


def backends(db, application_name: str) -> list[dict]:
    with db.connect() as admin:
        admin.row_factory = psycopg.rows.dict_row
        return admin.execute(
            "select pid, state, query from pg_stat_activity where datname = %s and application_name = %s",
            (db.name, application_name),
        ).fetchall()


def test_pooled_connections_carry_the_session_options_and_are_warm(db):
    with api.Reader(db.url("exo_reader"), statement_timeout_ms=1234, application_name="exo-pool").pooled(
        2
    ) as reader:
        reader.pool.wait(timeout=30)
        (backend,) = backends(db, "exo-pool")  # min_size 1: one connection until more are asked for
        assert backend["state"] == "idle" and backend["query"] == api.WARM_UP  # its last statement
        with reader.connection() as conn:
            settings = conn.execute(
                "select current_setting('statement_timeout') as timeout,"
                " current_setting('default_transaction_read_only') as read_only,"
                " current_user as role"
            ).fetchone()
            assert settings == {"timeout": "1234ms", "read_only": "on", "role": "exo_reader"}
        assert api.status(reader)["documents"]["total"] == 0
        assert api.search(reader, "anything", k=1) == []
        assert len(backends(db, "exo-pool")) <= 2
    assert backends(db, "exo-pool") == []  # closing the reader closes its pool


def test_the_warm_up_runs_a_search_without_asking_the_models(db):
    """With an active embedding model, a search embeds its query; the warm-up gives its own
    vector, so the embeddings endpoint hears nothing."""
    with StandIn(lambda path, req: embeddings(req)) as model:
        configure(db, models__embeddings={"url": model.url})
        with db.connect() as owner:
            owner.execute("select exo_private.embedding_model_id('all-MiniLM-L6-v2', 384)")
        reader = api.Reader(db.url("exo_reader"))
        with reader.connect() as conn:
            report = conn.execute(api.WARM_UP).fetchone()["search_json"]["report"]
        assert model.requests == []
        assert not [d for d in report.get("degradations", []) if "embed" in str(d)], report
        api.search(reader, "anything", k=1)  # the control: a caller's search does embed its query
        assert [path for path, _ in model.requests] == ["/v1/embeddings"]


def test_terminated_backends_fail_at_most_one_call(db):
    with api.Reader(db.url("exo_reader"), application_name="exo-pool").pooled(3) as reader:
        for _ in range(3):
            api.status(reader)
        with admin_connection(db.cfg) as admin:  # what a restart does to open sessions
            admin.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                " where datname = %s and application_name = 'exo-pool'",
                (db.name,),
            )
        outcomes = []
        for _ in range(4):
            try:
                outcomes.append(api.status(reader)["documents"]["total"])
            except psycopg.OperationalError as exc:
                outcomes.append(exc)
        failed = [o for o in outcomes if isinstance(o, Exception)]
        assert len(failed) <= 1 and outcomes[1:] == [0, 0, 0], outcomes
        assert all("terminat" in str(e) or "closed" in str(e) for e in failed), failed


def test_a_database_refusing_connections_fails_each_call_with_its_reason(db):
    database = sql.Identifier(db.name)
    with api.Reader(db.url("exo_reader"), application_name="exo-pool").pooled(2) as reader:
        api.status(reader)
        with admin_connection(db.cfg) as admin:
            admin.execute(sql.SQL("alter database {} allow_connections false").format(database))
            try:
                admin.execute(
                    "select pg_terminate_backend(pid) from pg_stat_activity where datname = %s", (db.name,)
                )
                with pytest.raises(psycopg.OperationalError):
                    api.status(reader)  # the pooled connection that died
                began = time.monotonic()
                with pytest.raises(psycopg.OperationalError, match="not currently accepting connections"):
                    api.status(reader)  # not a bare pool timeout: why
                assert time.monotonic() - began < api.POOL_WAIT_S + 2
            finally:
                admin.execute(sql.SQL("alter database {} allow_connections true").format(database))
        assert api.status(reader)["documents"]["total"] == 0  # back: calls answer again


def test_pgvectors_adapter_registers_only_where_the_vector_type_is_visible(db):
    with db.connect() as conn:  # its search_path holds the extension's schema
        assert register_vector(conn)
        value = conn.execute("select %s::vector as v", (Vector([1.0, 2.5]),)).fetchone()[0]
        assert value.to_list() == [1.0, 2.5]
    with db.connect("exo_reader") as conn:  # no USAGE on the extension's schema: no vector type
        assert register_vector(conn) is False
