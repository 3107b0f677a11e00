"""The role boundary: exo_reader reads through the exo API and nothing else."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import psycopg
import pytest
from support.db import Database, cloned_database

from exocortex.db import role_url
from exocortex.ops import doctor
from exocortex.ops.migrate import migration_files

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


@pytest.fixture(scope="module")
def refused_db(cfg, template_db) -> Iterator[Database]:
    """One database for the tests of what the reader is refused: nothing they try can change it
    (were one to succeed, that test fails and the database is this module's alone)."""
    with cloned_database(cfg, template_db, "exo_roles") as db:
        yield db


@pytest.mark.parametrize("statement", WRITES)
@pytest.mark.parametrize("read_write", [False, True], ids=["default", "read-write-asked"])
def test_reader_cannot_write_or_create(refused_db, statement, read_write):
    error = _attempt(refused_db, statement, read_write)
    assert isinstance(error, DENIED), f"{statement!r} gave {error!r}"
    if read_write:
        assert isinstance(error, psycopg.errors.InsufficientPrivilege)


@pytest.mark.parametrize("statement", NON_API_CALLS)
def test_reader_cannot_call_or_read_internals(refused_db, statement):
    error = _attempt(refused_db, statement, read_write=False)
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


# A reader set against us: read-only off and a search_path reaching the internals. Privileges
# are the boundary, so none of this may matter.
HOSTILE_SESSION = (
    "set default_transaction_read_only = off",
    "set search_path = exo_private, public, pg_catalog",
)

LARGE_OBJECTS = [
    "select lo_create(0)",
    "select lo_creat(-1)",
    "select lo_from_bytea(0, 'kept forever')",
    "select lo_import('/etc/hostname')",
    "select lo_put(1, 0, 'x')",
    "select lo_unlink(1)",
]

ADVISORY_LOCKS = [
    "select pg_advisory_lock(1)",
    "select pg_advisory_lock_shared(1, 2)",
    "select pg_try_advisory_lock(1)",
    "select pg_advisory_xact_lock(1)",
    "select pg_try_advisory_xact_lock_shared(1)",
]


@pytest.fixture
def hostile_reader(refused_db):
    with refused_db.connect("exo_reader") as conn:
        for statement in HOSTILE_SESSION:
            conn.execute(statement)
        yield conn


def _refusal(conn: psycopg.Connection, statement: str) -> Exception | None:
    try:
        with conn.transaction():
            conn.execute(statement)
    except psycopg.Error as exc:
        return exc
    return None


def test_a_hostile_reader_cannot_change_any_table_or_sequence(refused_db, hostile_reader):
    with refused_db.connect() as admin:
        tables = [
            r[0]
            for r in admin.execute(
                """
                select c.oid::regclass::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema')
                """
            )
        ]
        sequences = [
            r[0] for r in admin.execute("select oid::regclass::text from pg_class where relkind = 'S'")
        ]
    assert "exo_private.settings" in tables and "exo_private.chunks" in tables
    assert any(t.startswith("pgmq.") for t in tables) and any(t.startswith("graph_") for t in tables)
    assert hostile_reader.execute("show transaction_read_only").fetchone() == ("off",)
    allowed = []
    for table in tables:
        for statement in (f"insert into {table} default values", f"delete from {table}", f"truncate {table}"):
            if not isinstance(_refusal(hostile_reader, statement), psycopg.errors.InsufficientPrivilege):
                allowed.append(statement)
    for sequence in sequences:
        statement = f"select nextval('{sequence}')"
        if not isinstance(_refusal(hostile_reader, statement), psycopg.errors.InsufficientPrivilege):
            allowed.append(statement)
    assert allowed == []


@pytest.mark.parametrize("statement", LARGE_OBJECTS + ADVISORY_LOCKS)
def test_a_hostile_reader_cannot_store_large_objects_or_take_advisory_locks(hostile_reader, statement):
    error = _refusal(hostile_reader, statement)
    assert isinstance(error, psycopg.errors.InsufficientPrivilege), f"{statement!r} gave {error!r}"


def test_a_hostile_reader_has_no_temporary_tables(hostile_reader):
    error = _refusal(hostile_reader, "create temporary table mine (id int)")
    assert isinstance(error, psycopg.errors.InsufficientPrivilege), repr(error)
    assert hostile_reader.execute(
        "select has_database_privilege(current_database(), 'temporary')"
    ).fetchone() == (False,)


def test_the_owner_and_writer_keep_advisory_locks(db):
    for role in ("exo_owner", "exo_writer"):
        with db.connect(role) as conn:
            assert conn.execute("select pg_try_advisory_xact_lock(42)").fetchone() == (True,)


@pytest.mark.parametrize("database", ["postgres", "template1"])
def test_the_reader_connects_to_its_database_only(cfg, db, database):
    if cfg.external_url:
        pytest.skip("a foreign server's other databases are not ours to close (exo doctor reports them)")
    with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
        psycopg.connect(role_url(cfg, "exo_reader", database), connect_timeout=5).close()
    with db.connect() as admin:
        others = admin.execute(
            """
            select datname from pg_database
            where datname in ('postgres', 'template1')
              and (has_database_privilege('exo_reader', oid, 'connect')
                   or has_database_privilege('exo_reader', oid, 'temporary'))
            """
        ).fetchall()
    assert others == []


def test_exo_api_owns_the_api_and_the_reader_runs_nothing_else_as_another_role(db):
    with db.connect() as conn:
        not_api = conn.execute(
            """
            select p.oid::regprocedure::text from pg_proc p
            where p.pronamespace = 'exo'::regnamespace and p.proowner <> 'exo_api'::regrole
            union all
            select c.oid::regclass::text from pg_class c
            where c.relnamespace = 'exo'::regnamespace and c.relkind in ('v', 'm')
              and c.relowner <> 'exo_api'::regrole
            """
        ).fetchall()
        api = conn.execute(
            "select count(*) from pg_proc where pronamespace = 'exo'::regnamespace and prosecdef"
        ).fetchone()[0]
        # Every function the reader may execute runs as the reader, or as a role that may only read.
        as_another = conn.execute(
            """
            select p.oid::regprocedure::text, p.proowner::regrole::text from pg_proc p
            where has_function_privilege('exo_reader', p.oid, 'execute') and p.prosecdef
              and p.proowner not in ('exo_api'::regrole, 'exo_graph'::regrole)
            """
        ).fetchall()
    assert not_api == []
    assert api > 10
    assert as_another == []


def test_exo_api_may_only_read(db):
    with db.connect() as conn:
        writable = conn.execute(
            """
            select c.oid::regclass::text from pg_class c
            where c.oid <> 'pg_catalog.pg_settings'::regclass  -- PUBLIC's: `set` by another name
              and case when c.relkind = 'S'
                       then has_sequence_privilege('exo_api', c.oid, 'usage, update')
                       else has_table_privilege('exo_api', c.oid,
                            'insert, update, delete, truncate, references, trigger, maintain') end
            """
        ).fetchall()
        creates = conn.execute(
            """
            select nspname from pg_namespace where has_schema_privilege('exo_api', oid, 'create')
            union all
            select datname from pg_database
            where datname = current_database()
              and (has_database_privilege('exo_api', oid, 'create')
                   or has_database_privilege('exo_api', oid, 'temporary'))
            """
        ).fetchall()
        owners_definers = conn.execute(
            """
            select p.oid::regprocedure::text, has_function_privilege('exo_api', p.oid, 'execute')
            from pg_proc p where p.prosecdef and p.proowner = 'exo_owner'::regrole
            """
        ).fetchall()
        reads = conn.execute(
            """
            select has_table_privilege('exo_api', 'exo_private.chunks', 'select'),
                   has_function_privilege('exo_api', 'exo_private.check_workspaces(text[])', 'execute')
            """
        ).fetchone()
    assert writable == []
    assert creates == []
    assert 'exo_private.ensure_label(name,text,"char")' in {name for name, _ in owners_definers}
    assert [name for name, executable in owners_definers if executable] == []
    assert reads == (True, True)


def test_doctor_names_the_other_databases_a_foreign_servers_reader_reaches(cfg, db, template_db):
    foreign = dataclasses.replace(cfg, external_url=db.url())
    (check,) = [c for c in doctor.run(foreign) if c.name == "reader's databases"]
    assert not check.ok
    reachable = check.detail.removeprefix("exo_reader can also connect to ").split(", ")
    assert template_db.name in reachable  # a database this test's server opened to the reader
    assert db.name not in reachable
    if not cfg.external_url:  # closed by the local runtime's migrator
        assert "postgres" not in reachable
    assert "revoke connect" in check.fix
