"""The migrator: roles, extensions, pgmq, migrations once each, then sql/ re-applied.

Order of one run, all under an advisory lock so concurrent migrators of one
database queue up and each file is applied once:

1. roles (cluster-wide, serialised across databases by a lock on pg_authid);
2. extensions, named with their Debian package when missing;
3. the migrator's own bookkeeping (exo_private.schema_migrations, .components);
4. pgmq's SQL from the `pgmq` PyPI package, when absent, its version recorded;
5. migrations/NNNN_name.sql not yet applied, each in its own transaction as
   exo_owner, recorded with its sha256 in the same transaction; a changed
   applied file stops the run before anything is applied;
6. sql/*.sql in name order, each in its own transaction, with plpy/ modules
   inlined into their plpython3u bodies (creating plpython3u functions needs
   the admin, so these run as it; 980_ownership.sql hands everything to exo_owner).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import psycopg
from psycopg import sql

from exocortex.config import Config
from exocortex.db import ROLES, admin_url, connect, load_secrets
from exocortex.runtime.packages import package_for_extension

#: pg_advisory_lock key: "exocortex migrate"
LOCK_KEY = 0x65786F6D6967
MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
LOCAL_IMPORT = re.compile(r"^from ([a-z_][a-z0-9_]*) import .+$")
INCLUDE = re.compile(r"^(?P<indent>[ \t]*)# exo:include (?P<module>[a-z_][a-z0-9_.]*)[ \t]*$", re.M)

#: Created in every database; pg_cron only where cron.database_name points.
EXTENSIONS = ("plpython3u", "vector", "age", "pg_textsearch")
CRON = "pg_cron"

#: Roles nobody logs in as: the owners of what the reader runs. exo_api owns the exo
#: schema's functions and views and may only read; exo_graph owns the one function that
#: runs a caller's Cypher and may only read the workspace graphs (docs/security.md).
#: exo_owner is a member of both, so migrations can still replace or drop their objects.
INTERNAL_ROLES = ("exo_api", "exo_graph")

ROLE_SETTINGS = {
    "exo_reader": {"default_transaction_read_only": "on", "search_path": "exo"},
    "exo_writer": {"search_path": "exo_private, exo, public"},
    "exo_owner": {"search_path": "exo_private, exo, public"},
}

BOOTSTRAP = """
create schema if not exists exo_private authorization exo_owner;
create table if not exists exo_private.schema_migrations (
    name       text primary key,
    sha256     text not null,
    applied_at timestamptz not null default now()
);
comment on table exo_private.schema_migrations is
    'migrations/NNNN_name.sql applied to this database, with the sha256 each had';
create table if not exists exo_private.components (
    name         text primary key,
    version      text not null,
    sha256       text,
    installed_at timestamptz not null default now()
);
comment on table exo_private.components is
    'vendored SQL installed by the migrator (pgmq), with its version';
"""


class MigrationError(Exception):
    """The migrator refused or failed; the message names the file and the reason."""


@dataclass
class MigrateResult:
    database: str
    applied: list[str] = field(default_factory=list)
    sql_files: int = 0
    pgmq_installed: str | None = None


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _module_path(name: str, plpy_dir: Path) -> Path | None:
    """plpy/NAME.py, or the file of a dotted stdlib-only package module (exocortex.models.client)."""
    if "." not in name:
        path = plpy_dir / f"{name}.py"
        return path if path.exists() else None
    spec = importlib.util.find_spec(name)
    return Path(spec.origin) if spec and spec.origin else None


def inline_plpy(text: str, plpy_dir: Path, source: str) -> str:
    """Replace `# exo:include module` lines with the module's source, indented alike.

    `module` is a file in plpy/, or a dotted module of the package whose code is
    standard-library only (the model client). A module's `from sibling import ...`
    lines, where plpy/sibling.py exists, are replaced by the sibling's source (each
    module once), since a plpython3u body cannot import files; `from __future__`
    lines are dropped (the body runs inside a function).
    """

    def module_source(name: str, seen: set[str]) -> list[str]:
        path = _module_path(name, plpy_dir)
        if path is None:
            raise MigrationError(f"{source}: `# exo:include {name}` but no such module was found")
        seen.add(name)
        lines = []
        for line in path.read_text().splitlines():
            if line.startswith("from __future__ import"):
                continue
            local = LOCAL_IMPORT.match(line)
            if local and (plpy_dir / f"{local.group(1)}.py").exists():
                if local.group(1) not in seen:
                    lines += module_source(local.group(1), seen)
                continue
            lines.append(line)
        if any("$$" in line for line in lines):
            raise MigrationError(f"{path} contains $$, which would end the function body")
        return lines

    def include(m: re.Match[str]) -> str:
        indent = m.group("indent")
        lines = module_source(m.group("module"), set())
        return "\n".join(indent + line if line else line for line in lines)

    return INCLUDE.sub(include, text)


def migration_files(migrations_dir: Path) -> list[Path]:
    found = sorted(p for p in migrations_dir.glob("*.sql"))
    numbers: dict[str, str] = {}
    for path in found:
        m = MIGRATION_NAME.match(path.name)
        if not m:
            raise MigrationError(
                f"migrations/{path.name}: name must look like NNNN_verb_object.sql (lowercase)"
            )
        if m.group(1) in numbers:
            raise MigrationError(
                f"migrations/{path.name} and migrations/{numbers[m.group(1)]} share number {m.group(1)}"
            )
        numbers[m.group(1)] = path.name
    return found


def ensure_roles(conn: psycopg.Connection, passwords: dict[str, str]) -> None:
    with conn.transaction():
        # pg_authid is shared by all databases, so this lock serialises role changes
        # of migrators working on different databases of one server at the same time.
        conn.execute("lock table pg_catalog.pg_authid in share row exclusive mode")
        for role in ROLES:
            exists = conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone()
            verb = "alter" if exists else "create"
            conn.execute(
                sql.SQL("{} role {} login password {}").format(
                    sql.SQL(verb), sql.Identifier(role), sql.Literal(passwords[role])
                )
            )
            for name, value in ROLE_SETTINGS[role].items():
                conn.execute(
                    sql.SQL("alter role {} set {} = {}").format(
                        sql.Identifier(role), sql.Identifier(name), sql.Literal(value)
                    )
                )
        for role in INTERNAL_ROLES:
            if not conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone():
                conn.execute(sql.SQL("create role {} nologin noinherit").format(sql.Identifier(role)))
            conn.execute(sql.SQL("grant {} to exo_owner").format(sql.Identifier(role)))


def ensure_extensions(conn: psycopg.Connection) -> list[str]:
    available = {row[0] for row in conn.execute("select name from pg_available_extensions").fetchall()}
    cron_db = conn.execute("select current_setting('cron.database_name', true)").fetchone()[0]
    here = conn.execute("select current_database()").fetchone()[0]
    wanted = [*EXTENSIONS, *([CRON] if cron_db == here else [])]
    missing = [ext for ext in wanted if ext not in available]
    if missing:
        raise MigrationError(
            "the server lacks "
            + ", ".join(f"extension {e} (Debian package {package_for_extension(e)})" for e in missing)
        )
    for ext in wanted:
        conn.execute(sql.SQL("create extension if not exists {}").format(sql.Identifier(ext)))
    return wanted


def install_pgmq(conn: psycopg.Connection) -> str | None:
    """Install pgmq's SQL from the pgmq PyPI package when absent; returns the version installed."""
    if conn.execute("select 1 from exo_private.components where name = 'pgmq'").fetchone():
        return None
    as_extension = conn.execute("select extversion from pg_extension where extname = 'pgmq'").fetchone()
    sql_dir = files("pgmq").joinpath("sql")
    version = sql_dir.joinpath("VERSION").read_text().strip()
    body = sql_dir.joinpath("pgmq.sql").read_text()
    digest = hashlib.sha256(body.encode()).hexdigest()
    with conn.transaction():
        if as_extension:
            version, digest = as_extension[0], None
        elif conn.execute("select to_regnamespace('pgmq')").fetchone()[0] is not None:
            raise MigrationError(
                "schema pgmq exists but was not installed by exocortex; drop it or install the pgmq extension"
            )
        else:
            conn.execute("set local role exo_owner")
            conn.execute(body)
            conn.execute("reset role")
        conn.execute(
            "insert into exo_private.components (name, version, sha256) values ('pgmq', %s, %s)",
            (version, digest),
        )
    return version


def apply_migrations(conn: psycopg.Connection, migrations_dir: Path) -> list[str]:
    paths = migration_files(migrations_dir)
    applied = dict(conn.execute("select name, sha256 from exo_private.schema_migrations").fetchall())
    on_disk = {p.name: p for p in paths}
    for name, recorded in sorted(applied.items()):
        if name not in on_disk:
            raise MigrationError(
                f"migration {name} was applied to this database but is missing from migrations/"
            )
        actual = file_sha256(on_disk[name])
        if actual != recorded:
            raise MigrationError(
                f"migration {name} was changed after it was applied (recorded sha256 "
                f"{recorded[:12]}, file now {actual[:12]}); restore it and put the change in a "
                f"new migration"
            )
    done = []
    for path in paths:
        if path.name in applied:
            continue
        with conn.transaction():
            conn.execute(
                "insert into exo_private.schema_migrations (name, sha256) values (%s, %s)",
                (path.name, file_sha256(path)),
            )
            conn.execute("set local role exo_owner")
            conn.execute("set local search_path = exo_private, public")
            try:
                conn.execute(path.read_text())
            except psycopg.Error as exc:
                raise MigrationError(f"migration {path.name} failed: {exc}") from exc
        done.append(path.name)
    return done


def apply_sql(conn: psycopg.Connection, sql_dir: Path, plpy_dir: Path) -> int:
    paths = sorted(sql_dir.glob("*.sql"))
    for path in paths:
        text = inline_plpy(path.read_text(), plpy_dir, f"sql/{path.name}")
        with conn.transaction():
            try:
                conn.execute(text)
            except psycopg.Error as exc:
                raise MigrationError(f"sql/{path.name} failed: {exc}") from exc
    return len(paths)


def grant_database_privileges(conn: psycopg.Connection) -> None:
    """Privileges on the database itself and on AGE's catalog.

    Kept apart from sql/990_grants.sql because a database's own ACL is not copied
    by `create database ... template`: whoever clones a migrated database calls this.
    """
    database = conn.execute("select current_database()").fetchone()[0]
    with conn.transaction():
        for statement in (
            "revoke temporary on database {} from public",
            "grant create, temporary on database {} to exo_owner",
            "grant temporary on database {} to exo_writer",
        ):
            conn.execute(sql.SQL(statement).format(sql.Identifier(database)))
        # exo_owner creates the workspace graphs (ensure_workspace_graph).
        conn.execute("grant usage on schema ag_catalog to exo_owner")
        conn.execute("grant select on ag_catalog.ag_graph, ag_catalog.ag_label to exo_owner")


def migrate(cfg: Config, url: str, progress: Callable[[str], None] = lambda _m: None) -> MigrateResult:
    """Bring the database at `url` (an admin URL) up to date."""
    with connect(url, "exo-migrate", autocommit=True) as conn:
        database = conn.execute("select current_database()").fetchone()[0]
        result = MigrateResult(database)
        conn.execute("select pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            ensure_roles(conn, load_secrets(cfg))
            ensure_extensions(conn)
            grant_database_privileges(conn)
            with conn.transaction():
                conn.execute("set local role exo_owner")
                conn.execute(BOOTSTRAP)
            result.pgmq_installed = install_pgmq(conn)
            if result.pgmq_installed:
                progress(f"installed pgmq {result.pgmq_installed}")
            result.applied = apply_migrations(conn, cfg.migrations_dir)
            for name in result.applied:
                progress(f"applied {name}")
            result.sql_files = apply_sql(conn, cfg.sql_dir, cfg.plpy_dir)
        finally:
            conn.execute("select pg_advisory_unlock(%s)", (LOCK_KEY,))
    return result


@contextmanager
def scratch_database(cfg: Config, purpose: str) -> Iterator[str]:
    """A database migrated from zero for one job (schema dump, lint), dropped afterwards."""
    name = f"exo_{purpose}_{os.getpid()}"
    with connect(admin_url(cfg, "postgres"), f"exo-{purpose}", autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    try:
        migrate(cfg, admin_url(cfg, name))
        yield name
    finally:
        with connect(admin_url(cfg, "postgres"), f"exo-{purpose}", autocommit=True) as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
