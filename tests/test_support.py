"""The test harness itself: databases from pytest-postgresql's janitor, helpers in one package."""

from __future__ import annotations

import ast
import os
import re
import time
import uuid

import psycopg
import pytest
import search
from psycopg import sql
from support import REPO_ROOT, plpy
from support.db import (
    Database,
    admin_connection,
    create_database,
    drop_database,
    drop_databases,
    drop_leftovers,
    retire_database,
)

TEST_MODULE = re.compile(r"^(conftest|test_\w+)$")


def _exists(cfg, name: str) -> bool:
    with admin_connection(cfg) as conn:
        return conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone() is not None


def test_db_is_a_migrated_clone_the_reader_may_connect_to(db, template_db):
    assert db.name != template_db.name
    with db.connect() as clone, template_db.connect() as template:
        applied = "select name from exo_private.schema_migrations order by name"
        assert clone.execute(applied).fetchall() == template.execute(applied).fetchall() != []
    with db.connect("exo_reader") as reader:  # CONNECT is granted on each clone
        assert reader.execute("select current_database()").fetchone() == (db.name,)


def test_drop_database_ends_open_sessions(cfg, template_db):
    clone = create_database(cfg, "exo_support", template=template_db.name)
    assert _exists(cfg, clone.name)
    held = clone.connect()
    try:
        drop_database(clone)
        assert not _exists(cfg, clone.name)
        with pytest.raises(psycopg.OperationalError):
            held.execute("select 1")
    finally:
        held.close()
    drop_database(clone)  # dropping what is gone is a no-op


def test_databases_dropped_together_are_all_gone_open_sessions_ended(cfg, template_db):
    clones = [create_database(cfg, "exo_support", template=template_db.name) for _ in range(3)]
    held = clones[0].connect()
    try:
        drop_databases(clones)
        assert not any(_exists(cfg, clone.name) for clone in clones)
        with pytest.raises(psycopg.OperationalError):
            held.execute("select 1")
    finally:
        held.close()


def _made_hours_ago(cfg, db: Database, hours: float) -> None:
    """Date db's making back (its PG_VERSION file, which drop_leftovers reads)."""
    with admin_connection(cfg) as conn:
        data, oid = conn.execute(
            "select current_setting('data_directory'), oid from pg_database where datname = %s", (db.name,)
        ).fetchone()
    made = time.time() - hours * 3600
    os.utime(cfg.runtime_root / data.lstrip("/") / "base" / str(oid) / "PG_VERSION", (made, made))


def test_what_killed_runs_left_is_dropped_and_nothing_else(cfg, template_db):
    if cfg.external_url:
        pytest.skip("drop_leftovers leaves a server of EXO_TEST_DATABASE_URL alone")
    old_retired, new_retired, old_open, clone = (
        create_database(cfg, "exo_support", template=template_db.name) for _ in range(4)
    )
    old_template = Database(cfg, f"exo_test_{uuid.uuid4().hex[:10]}_tmpl")  # as a session's
    with admin_connection(cfg) as conn:
        conn.execute(
            sql.SQL("alter database {} rename to {}").format(
                *map(sql.Identifier, (clone.name, old_template.name))
            )
        )
        conn.execute(sql.SQL("alter database {} is_template true").format(sql.Identifier(old_template.name)))
    made = [old_retired, new_retired, old_open, old_template]
    try:
        for db in old_retired, new_retired:
            retire_database(db)
        for db in old_retired, old_open, old_template:
            _made_hours_ago(cfg, db, 7)
        dropped = drop_leftovers(cfg)
        assert old_retired.name in dropped and old_template.name in dropped
        assert not _exists(cfg, old_retired.name) and not _exists(cfg, old_template.name)
        assert new_retired.name not in dropped and old_open.name not in dropped
        assert _exists(cfg, new_retired.name) and _exists(cfg, old_open.name)
    finally:
        with admin_connection(cfg) as conn:
            for db in made:
                if _exists(cfg, db.name):
                    conn.execute(
                        sql.SQL("alter database {} is_template false").format(sql.Identifier(db.name))
                    )
        for db in made:
            drop_database(db)


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level
    }


def test_no_test_module_imports_another():
    offenders = {
        path.name: sorted(name for name in _imports(path) if TEST_MODULE.match(name.split(".")[0]))
        for path in sorted((REPO_ROOT / "tests").rglob("*.py"))
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def _uses_sys_path(path) -> bool:
    return any(
        isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys"
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_tests_and_benchmarks_leave_sys_path_alone():
    files = sorted([*(REPO_ROOT / "tests").rglob("*.py"), *(REPO_ROOT / "bench").glob("*.py")])
    assert [path.name for path in files if _uses_sys_path(path)] == []


def test_a_plpy_module_loads_inlined_as_the_database_runs_it():
    inlined = plpy.load("search")
    assert inlined.PRESENT_BANDS == search.PRESENT_BANDS
    for title in ("Postgres upgrade, 2016", "notes/Iris Calder.md", ""):
        assert inlined.title_keys(title) == search.title_keys(title)
        assert inlined.file_keys(title) == search.file_keys(title)
    assert "canonical_key" in vars(inlined)  # its sibling textnorm came inline
