"""The upgrade path: a database of the previous release, migrated by this one, equals one migrated from zero.

The previous release is vendored as tests/data/release-VERSION.tar.gz (what migrating
needs of it, see tests/data/README.md), since a CI clone may be shallow.
Its own code migrates a fresh database first (its config finds migrations/, sql/ and
plpy/ through its own root, the extracted folder), then this checkout's migrator does.
A `create or replace` never drops a function that sql/ no longer defines, or one whose
arguments changed, so the test also lists every exo or exo_private function no sql/ file
defines: each needs a `drop function if exists` in a migration.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import psycopg
import pytest
from support import SQL_DIR

from exocortex.ops import schema_dump
from exocortex.ops.migrate import migrate

#: The previous release, the only one vendored; its archive holds one folder, exocortex-VERSION.
(RELEASE,) = (Path(__file__).parent / "data").glob("release-*.tar.gz")

#: Run by the previous release's Python: argv is its root and the database's admin URL.
OLD_MIGRATE = """
import sys
from pathlib import Path

import exocortex
from exocortex import config, migrate  # the previous release's layout

assert Path(exocortex.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), exocortex.__file__
cfg = config.load()
assert cfg.sql_dir.resolve().is_relative_to(Path(sys.argv[1]).resolve()), cfg.sql_dir
print(len(migrate.migrate(cfg, sys.argv[2]).applied), len(list(cfg.migrations_dir.glob("*.sql"))))
"""

DEFINITION = re.compile(
    r"\bcreate\s+(?:or\s+replace\s+)?(?:function|procedure)\s+(exo|exo_private)\.([a-z_][a-z0-9_]*)\s*\(",
    re.I,
)
MODES = {"in", "out", "inout", "variadic"}

FUNCTIONS = """
select n.nspname, p.proname, p.proargtypes::oid[], p.oid::regprocedure::text
from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname in ('exo', 'exo_private')
order by 4
"""


def argument_list(text: str, start: int) -> tuple[list[str], int]:
    """The top-level comma-separated items between text[start] == '(' and its ')', and the end."""
    items, depth, item, i = [], 0, [], start
    while True:
        c = text[i]
        if c in "'\"":
            end = text.index(c, i + 1)
            while text.startswith(c, end + 1):  # a doubled quote inside the literal
                end = text.index(c, end + 2)
            item.append(text[i : end + 1])
            i = end + 1
            continue
        if text.startswith("--", i):
            i = text.index("\n", i)
            continue
        if c == "(":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                items.append("".join(item))
                return [s.strip() for s in items if s.strip()], i
        elif c == "," and depth == 1:
            items.append("".join(item))
            item = []
            i += 1
            continue
        item.append(c)
        i += 1


def _type_oid(conn: psycopg.Connection, text: str) -> int | None:
    """The type `text` names, or None when it is not a type name (`k int` is a syntax error)."""
    try:
        with conn.transaction():
            return conn.execute("select to_regtype(%s)::oid", (text,)).fetchone()[0]
    except psycopg.errors.SyntaxError:
        return None


def sql_definitions(conn: psycopg.Connection, sql_dir: Path) -> tuple[set[tuple], list[str]]:
    """(schema, name, input argument type oids) of every function sql/*.sql creates, and what did not parse."""
    defined, unresolved = set(), []
    for path in sorted(sql_dir.glob("*.sql")):
        text = path.read_text()
        for m in DEFINITION.finditer(text):
            if "--" in text[text.rfind("\n", 0, m.start()) + 1 : m.start()]:
                continue  # in a comment
            arguments, _end = argument_list(text, m.end() - 1)
            oids = []
            for argument in arguments:
                words = re.split(r"\s+default\s+|\s*=", argument, maxsplit=1, flags=re.I)[0].split()
                if words[0].lower() in MODES:
                    mode, words = words[0].lower(), words[1:]
                    if mode == "out":
                        continue
                # `name type` or `type`: a type may have several words (double precision).
                oid = _type_oid(conn, " ".join(words))
                if oid is None and len(words) > 1:
                    oid = _type_oid(conn, " ".join(words[1:]))
                if oid is None:
                    unresolved.append(f"sql/{path.name}: {m.group(1)}.{m.group(2)} argument {argument!r}")
                oids.append(oid)
            defined.add((m.group(1).lower(), m.group(2).lower(), tuple(oids)))
    return defined, unresolved


def undefined_functions(conn: psycopg.Connection, sql_dir: Path) -> list[str]:
    """exo and exo_private functions of the database that no sql/ file defines."""
    defined, unresolved = sql_definitions(conn, sql_dir)
    assert unresolved == [], "argument types the test could not resolve:\n" + "\n".join(unresolved)
    return [
        signature
        for schema, name, oids, signature in conn.execute(FUNCTIONS)
        if (schema, name, tuple(oids)) not in defined
    ]


def test_sql_definitions_are_read_with_their_identity_arguments(db, tmp_path):
    (tmp_path / "100_x.sql").write_text(
        "-- exo.f: create function exo.commented(int) in a comment is not read\n"
        "create or replace function exo.f(q text, k int default 3, out r double precision,\n"
        "    variadic tags text[] = '{\"a,b\"}' -- a comma, in a comment\n"
        ") returns setof record language sql as $$ select 1.0 $$;\n"
        "CREATE FUNCTION exo_private.g() returns int language sql as $$ select 1 $$;\n"
        "create or replace procedure exo_private.h(inout n numeric(5, 2), timestamptz) language sql as $$ $$;\n"
    )
    with db.connect() as conn:
        defined, unresolved = sql_definitions(conn, tmp_path)
        oid = {
            t: conn.execute("select %s::regtype::oid", (t,)).fetchone()[0] for t in ("text", "int", "text[]")
        }
        numeric, timestamptz = (
            conn.execute("select %s::regtype::oid", (t,)).fetchone()[0] for t in ("numeric", "timestamptz")
        )
    assert unresolved == []
    assert defined == {
        ("exo", "f", (oid["text"], oid["int"], oid["text[]"])),
        ("exo_private", "g", ()),
        ("exo_private", "h", (numeric, timestamptz)),
    }


def test_a_function_no_sql_file_defines_is_named_with_its_arguments(db):
    with db.connect() as conn:
        assert undefined_functions(conn, SQL_DIR) == []
        # An overload of a defined function, as a changed signature leaves behind, and a removed one.
        conn.execute(
            "create function exo.version(n int) returns jsonb language sql as $$ select null::jsonb $$"
        )
        conn.execute("create function exo_private.removed() returns int language sql as $$ select 1 $$")
        assert undefined_functions(conn, SQL_DIR) == [
            "exo.version(integer)",
            "exo_private.removed()",
        ]


def _old_release(tmp_path: Path) -> Path:
    with tarfile.open(RELEASE) as archive:
        archive.extractall(tmp_path, filter="data")
    (root,) = tmp_path.glob("exocortex-*")
    return root


@pytest.mark.slow
def test_upgrading_the_previous_release_gives_the_schema_of_a_database_migrated_from_zero(
    cfg, empty_db, db, tmp_path
):
    old = _old_release(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(old / "worker")}
    previous = subprocess.run(
        [sys.executable, "-c", OLD_MIGRATE, str(old), empty_db.url()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert previous.returncode == 0, f"the previous release failed to migrate:\n{previous.stderr}"
    applied, shipped = map(int, previous.stdout.split()[-2:])
    assert applied == shipped > 0

    migrate(cfg, empty_db.url())

    problems = []
    with empty_db.connect() as conn:
        undefined = undefined_functions(conn, SQL_DIR)
    if undefined:
        problems.append(
            "functions no sql/ file defines (left by the previous release: each needs "
            "`drop function if exists` in a migration):\n  " + "\n  ".join(undefined)
        )
    upgraded, fresh = schema_dump.dump(cfg, empty_db.name), schema_dump.dump(cfg, db.name)
    if upgraded != fresh:
        diff = difflib.unified_diff(
            fresh.splitlines(True),
            upgraded.splitlines(True),
            "migrated from zero",
            f"upgraded from {old.name}",
        )
        problems.append(
            "the upgraded schema differs from one migrated from zero:\n" + "".join(list(diff)[:150])
        )
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)
