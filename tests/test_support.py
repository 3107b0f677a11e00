"""The test harness itself: databases from pytest-postgresql's janitor, helpers in one package."""

from __future__ import annotations

import ast
import re

import psycopg
import pytest
import search
from support import REPO_ROOT, plpy
from support.db import admin_connection, create_database, drop_database

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
