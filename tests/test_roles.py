"""The role boundary: exo_reader reads through the exo API and nothing else."""

from __future__ import annotations

import psycopg
import pytest

from exocortex.migrate import migration_files

DENIED = (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction)

WRITES = [
    "insert into exo_private.settings (key, value, description) values ('x', '1', 'x')",
    "insert into exo.settings (key, value, description) values ('x', '1', 'x')",
    "update exo_private.workspaces set description = 'changed'",
    "update exo.workspaces set description = 'changed'",
    "delete from exo_private.workspaces",
    "truncate exo_private.settings",
    "create table exo.mine (id int)",
    "create table exo_private.mine (id int)",
    "create table public.mine (id int)",
    "create temporary table mine (id int)",
    "create schema mine",
    "create function exo.mine() returns int language sql as 'select 1'",
    "create view exo.mine as select 1",
]

NON_API_CALLS = [
    "select exo_private.canonical_key('x')",
    "select exo_private.set_setting('x', '1', 'x')",
    "select exo_private.ensure_workspace_graph('technical')",
    "select * from pgmq.send('q', '{}'::jsonb)",
    "select ag_catalog.create_graph('graph_mine')",
    "select * from exo_private.schema_migrations",
    "select public.vector_dims('[1,2]'::public.vector)",
]


def _attempt(db, statement: str, read_write: bool) -> Exception | None:
    with db.connect("exo_reader", autocommit=False) as conn:
        if read_write:  # the read-only default is a default; privileges are the boundary
            conn.execute("set transaction read write")
        try:
            conn.execute(statement)
        except psycopg.Error as exc:
            return exc
    return None


@pytest.mark.parametrize("statement", WRITES)
@pytest.mark.parametrize("read_write", [False, True], ids=["default", "read-write-asked"])
def test_reader_cannot_write_or_create(db, statement, read_write):
    error = _attempt(db, statement, read_write)
    assert isinstance(error, DENIED), f"{statement!r} gave {error!r}"
    if read_write:
        assert isinstance(error, psycopg.errors.InsufficientPrivilege)


@pytest.mark.parametrize("statement", NON_API_CALLS)
def test_reader_cannot_call_or_read_internals(db, statement):
    error = _attempt(db, statement, read_write=False)
    assert isinstance(error, psycopg.errors.InsufficientPrivilege), f"{statement!r} gave {error!r}"


def test_reader_uses_the_api_read_only(db):
    with db.connect() as admin:
        admin.execute("select exo_private.set_setting('demo.answer', '42', 'a test setting')")
    with db.connect("exo_reader") as conn:
        settings = conn.execute(
            "select current_setting('default_transaction_read_only'), current_setting('search_path')"
        ).fetchone()
        version = conn.execute("select exo.version()").fetchone()[0]
        workspaces = {r[0] for r in conn.execute("select name from exo.workspaces")}
        answer = conn.execute("select exo.setting('demo.answer')").fetchone()
        listed = conn.execute("select value from settings where key = 'demo.answer'").fetchone()
    assert settings == ("on", "exo")
    assert version["schema"] == migration_files(db.cfg.migrations_dir)[-1].name
    assert version["components"] == {"pgmq": "1.13.0"}
    assert workspaces == {"technical", "creative", "personal", "administrative"}
    assert answer == (42,)
    assert listed == (42,)


def test_writer_ingests_but_cannot_rewrite_history(db):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_setting('demo.x', '1', 'x')")
        assert conn.execute("select value from exo_private.settings where key = 'demo.x'").fetchone() == (1,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("delete from exo_private.schema_migrations")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("create table exo.mine (id int)")


def test_setting_needs_a_description_when_new(db):
    with db.connect() as conn, pytest.raises(psycopg.errors.RaiseException, match="give it a description"):
        conn.execute("select exo_private.set_setting('demo.undescribed', '1')")


def test_a_setting_changes_without_repeating_its_description(db):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_setting('demo.kept', '1', 'what it is')")
        conn.execute("select exo_private.set_setting('demo.kept', '2')")
        assert conn.execute(
            "select value, description from exo_private.settings where key = 'demo.kept'"
        ).fetchone() == (
            2,
            "what it is",
        )


def test_the_reader_sees_the_deference_list_but_not_the_charged_text(db):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera', array['Grandpa'], 'a note')")
    with db.connect("exo_reader") as conn:
        rows = conn.execute("select subject, aliases, charged_chunks from exo.deferred_subjects").fetchall()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select exo_private.defer_subject('Someone')")
    assert rows == [("Walter Rivera", ["Grandpa"], 0)]
