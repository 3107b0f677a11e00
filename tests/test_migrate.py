"""The migrator: from zero, idempotent, refuses edits, safe under concurrency, matches the dump."""

from __future__ import annotations

import dataclasses
import difflib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO_ROOT

from exocortex.db import connect
from exocortex.ops import doctor, schema_dump
from exocortex.ops.migrate import LOCK_KEY, MigrationError, inline_plpy, migrate, migration_files

SEEDED_WORKSPACES = {"technical", "creative", "personal", "administrative"}


def _applied(db) -> list[tuple[str, str, object]]:
    with db.connect() as conn:
        return conn.execute(
            "select name, sha256, applied_at from exo_private.schema_migrations order by name"
        ).fetchall()


def test_migrate_from_zero_builds_the_first_schema(cfg, empty_db):
    result = migrate(cfg, empty_db.url())

    files = [p.name for p in migration_files(cfg.migrations_dir)]
    assert result.applied == files
    assert result.pgmq_installed == "1.13.0"
    with empty_db.connect() as conn:
        workspaces = {r[0] for r in conn.execute("select name from exo.workspaces")}
        graphs = {r[0] for r in conn.execute("select name from ag_catalog.ag_graph")}
        roles = {r[0] for r in conn.execute("select rolname from pg_roles where rolname like 'exo\\_%'")}
        extensions = {r[0] for r in conn.execute("select extname from pg_extension")}
        pgmq = conn.execute("select version from exo_private.components where name = 'pgmq'").fetchone()
    assert workspaces == SEEDED_WORKSPACES
    assert graphs == {f"graph_{w}" for w in SEEDED_WORKSPACES}
    assert {"exo_owner", "exo_writer", "exo_reader"} <= roles
    assert {"vector", "age", "pg_textsearch", "plpython3u"} <= extensions
    assert pgmq == ("1.13.0",)


def test_objects_belong_to_their_owners(db):
    """Tables and internals to exo_owner; the exo API to exo_api, which may only read."""
    with db.connect() as conn:
        foreign = conn.execute(
            """
            select c.oid::regclass::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where c.relkind in ('r', 'v', 'p')
              and c.relowner <> case when n.nspname = 'exo' and c.relkind = 'v' then 'exo_api'
                                     else 'exo_owner' end::regrole
              and n.nspname in ('exo', 'exo_private')
            union all
            select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where p.proowner <> case n.nspname when 'exo' then 'exo_api' else 'exo_owner' end::regrole
              and n.nspname in ('exo', 'exo_private')
              -- the one function that runs a caller's Cypher (sql/985_graph_access.sql)
              and not (p.proname = 'run_cypher' and p.proowner = 'exo_graph'::regrole)
              -- the paths that write a personal base (sql/700_kb.sql, sql/710_kb_outside.sql)
              and not (p.proname in ('kb_write', 'kb_outside_write') and p.proowner = 'exo_kb'::regrole)
            """
        ).fetchall()
    assert foreign == []


def test_second_migrate_is_a_no_op(cfg, db):
    before = _applied(db)
    result = migrate(cfg, db.url())
    assert result.applied == []
    assert result.pgmq_installed is None
    assert _applied(db) == before


def _copy_migrations(cfg, tmp_path: Path):
    target = tmp_path / "migrations"
    shutil.copytree(cfg.migrations_dir, target)
    return dataclasses.replace(cfg, migrations_dir=target), target


def test_an_edited_applied_migration_is_refused(cfg, empty_db, tmp_path):
    edited_cfg, migrations = _copy_migrations(cfg, tmp_path)
    migrate(edited_cfg, empty_db.url())
    first = sorted(migrations.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- an innocent-looking edit\n")
    (migrations / "9999_add_thing.sql").write_text("create table exo_private.thing (id int);")

    with pytest.raises(MigrationError, match=f"migration {first.name} was changed after it was applied"):
        migrate(edited_cfg, empty_db.url())

    with empty_db.connect() as conn:  # nothing after the refusal ran
        assert conn.execute("select to_regclass('exo_private.thing')").fetchone() == (None,)


def test_a_failing_migration_leaves_no_record_and_no_half_change(cfg, db, tmp_path):
    broken_cfg, migrations = _copy_migrations(cfg, tmp_path)
    (migrations / "9998_create_half.sql").write_text(
        "create table exo_private.half (id int);\nselect no_such_function();\n"
    )
    with pytest.raises(MigrationError, match="migration 9998_create_half.sql failed"):
        migrate(broken_cfg, db.url())
    with db.connect() as conn:
        assert conn.execute("select to_regclass('exo_private.half')").fetchone() == (None,)
        recorded = conn.execute(
            "select count(*) from exo_private.schema_migrations where name = '9998_create_half.sql'"
        ).fetchone()
    assert recorded == (0,)


def test_migrations_run_as_exo_owner(cfg, db, tmp_path):
    probe_cfg, migrations = _copy_migrations(cfg, tmp_path)
    (migrations / "9997_create_probe.sql").write_text(
        "create table exo_private.probe as select current_user as who;"
    )
    migrate(probe_cfg, db.url())
    with db.connect() as conn:
        assert conn.execute("select who from exo_private.probe").fetchone() == ("exo_owner",)


def test_a_database_migrated_by_a_newer_release_is_refused_and_doctor_says_so(cfg, db):
    with db.connect() as conn:
        conn.execute(
            "insert into exo_private.schema_migrations (name, sha256) values ('9990_add_future.sql', 'f')"
        )
    with pytest.raises(
        MigrationError,
        match="9990_add_future.sql was applied to this database but this exocortex does not ship it",
    ):
        migrate(cfg, db.url())

    shipped = [p.name for p in migration_files(cfg.migrations_dir)]
    check = doctor.migrations_check([*shipped, "9990_add_future.sql"], shipped)
    assert (check.ok, check.detail) == (
        False,
        "applied by a newer exocortex, missing from this one: 9990_add_future.sql",
    )
    check = doctor.migrations_check(shipped[:-1], shipped)
    assert (check.ok, check.detail, check.fix) == (
        False,
        f"{len(shipped) - 1} of {len(shipped)} applied",
        "run `exo migrate`",
    )
    assert doctor.migrations_check(shipped, shipped).ok


def test_bad_migration_names_are_refused(tmp_path):
    (tmp_path / "0001_ok.sql").write_text("")
    (tmp_path / "0001_also.sql").write_text("")
    with pytest.raises(MigrationError, match="share number 0001"):
        migration_files(tmp_path)
    (tmp_path / "0001_also.sql").unlink()
    (tmp_path / "2-Bad Name.sql").write_text("")
    with pytest.raises(MigrationError, match="NNNN_verb_object.sql"):
        migration_files(tmp_path)


def test_two_migrators_at_once_both_succeed_and_apply_each_file_once(cfg, empty_db):
    env = {**os.environ, "EXO_DATABASE_URL": empty_db.url()}
    exo = [sys.executable, "-m", "exocortex.cli", "migrate"]
    procs = [
        subprocess.Popen(exo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs

    files = [p.name for p in migration_files(cfg.migrations_dir)]
    assert [name for name, _sha, _at in _applied(empty_db)] == files
    applied_counts = sorted(int(o.split("migrated ")[1].split(":")[1].split()[0]) for o in outputs)
    assert applied_counts == [0, len(files)]
    with empty_db.connect() as conn:
        assert conn.execute("select count(*) from exo_private.components").fetchone() == (1,)


def test_a_lock_held_elsewhere_stops_migrate_naming_the_holder(cfg, db):
    hurried = dataclasses.replace(cfg, lock_timeout_s=1.0)
    # A reader that read a view and left its transaction open: replacing the view must wait.
    with connect(db.url("exo_reader"), "exo-test-lock-holder", autocommit=False) as holder:
        holder.execute("select count(*) from exo.settings")
        pid = holder.info.backend_pid
        began = time.monotonic()
        with pytest.raises(MigrationError) as refused:
            migrate(hurried, db.url())
        waited = time.monotonic() - began
    message = str(refused.value)
    assert "lock timeout" in message
    assert f"pid {pid} " in message
    assert (
        "'exo-test-lock-holder'" in message and "exo_reader" in message and "idle in transaction" in message
    )
    assert waited < 20
    migrate(hurried, db.url())  # once it has gone, the run completes


def test_a_migrator_waits_for_another_then_names_it(cfg, db):
    with connect(db.url(), "exo-test-other-migrator", autocommit=True) as other:
        other.execute("select pg_advisory_lock(%s)", (LOCK_KEY,))
        began = time.monotonic()
        with pytest.raises(MigrationError, match="migrate lock") as refused:
            migrate(cfg, db.url(), wait_s=1.0)
        assert 1.0 <= time.monotonic() - began < 10
        assert f"pid {other.info.backend_pid} " in str(refused.value)
        assert "'exo-test-other-migrator'" in str(refused.value)
        other.execute("select pg_advisory_unlock(%s)", (LOCK_KEY,))
    assert migrate(cfg, db.url(), wait_s=1.0).applied == []


def test_migrating_from_zero_matches_the_committed_schema_dump(cfg):
    committed = (REPO_ROOT / schema_dump.DUMP_FILE).read_text()
    fresh = schema_dump.dump_from_zero(cfg)
    if fresh != committed:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(True), fresh.splitlines(True), "committed", "from zero"
                )
            )[:80]
        )
        pytest.fail(f"schema/exocortex.sql is out of date; run `make schema-dump`:\n{diff}")


def test_plpy_include_inlines_the_module_with_its_indentation(tmp_path):
    (tmp_path / "mod.py").write_text("import re\n\ndef f(x):\n    return x\n")
    body = "as $$\n  # exo:include mod\n  return f(1)\n$$;"
    assert inline_plpy(body, tmp_path, "sql/x.sql") == (
        "as $$\n  import re\n\n  def f(x):\n      return x\n  return f(1)\n$$;"
    )
    with pytest.raises(MigrationError, match="sql/x.sql: `# exo:include nope` but no such module was found"):
        inline_plpy("# exo:include nope", tmp_path, "sql/x.sql")
    (tmp_path / "dollar.py").write_text("x = '$$'\n")
    with pytest.raises(MigrationError, match=r"contains \$\$"):
        inline_plpy("# exo:include dollar", tmp_path, "sql/x.sql")


def test_plpy_include_inlines_a_sibling_imported_over_several_lines_once(tmp_path):
    (tmp_path / "base.py").write_text("A = 1\nB = 2\n")
    (tmp_path / "mod.py").write_text(
        "from base import (\n    A,\n    B,\n)\nfrom base import A\n\nC = A + B\n"
    )
    assert inline_plpy("# exo:include mod", tmp_path, "sql/x.sql") == "A = 1\nB = 2\n\nC = A + B"


def test_plpy_include_refuses_two_modules_of_one_body_that_define_the_same_name(tmp_path):
    (tmp_path / "words.py").write_text("import re\n\n_WORD = re.compile('[a-z]+')\n")
    (tmp_path / "search.py").write_text(
        "import re\n\nfrom words import _WORD\n\n_WORD = re.compile('[^\\\\W_]+')\n"
    )
    with pytest.raises(MigrationError, match="plpy/search.py and plpy/words.py both define '_WORD'"):
        inline_plpy("as $$\n# exo:include search\n$$;", tmp_path, "sql/x.sql")
    # two bodies of one file may each include a module that defines it; one body, the same
    # module twice, too; and the same import in two modules is no clash
    (tmp_path / "other.py").write_text("import re\n\ndef plan():\n    return re\n")
    (tmp_path / "plans.py").write_text("import re\n\ndef plan():\n    return 1\n")
    two = "as $$\n# exo:include other\n$$;\nas $$\n# exo:include plans\n# exo:include plans\n$$;"
    assert inline_plpy(two, tmp_path, "sql/x.sql").count("def plan():") == 3
