"""A normalised `pg_dump --schema-only` of a database migrated from zero.

The committed dump (schema/exocortex.sql) is what migrating from zero must give;
tests/test_migrate.py fails on any difference, so the upgrade path is tested.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from psycopg import sql

from exocortex.config import PG_MAJOR, REPO_ROOT, Config
from exocortex.db import admin_url, as_uri, connect
from exocortex.migrate import migrate
from exocortex.runtime import local

DUMP_FILE = REPO_ROOT / "schema" / "exocortex.sql"
_DROP = re.compile(r"^(-- Dumped (from|by) .*|\\(un)?restrict .*|SET .*|SELECT pg_catalog\.set_config.*)$")


def pg_dump_argv(cfg: Config) -> list[str]:
    if not cfg.external_url:
        return local.client_argv(cfg, "pg_dump")
    found = shutil.which("pg_dump")
    if not found:
        raise SystemExit(f"pg_dump {PG_MAJOR} is not on PATH; install postgresql-client-{PG_MAJOR}")
    return [found]


def normalise(dump: str) -> str:
    """Drop what differs between two dumps of equal schemas (versions, session SETs)."""
    lines = [line for line in dump.splitlines() if not _DROP.match(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def dump(cfg: Config, dbname: str) -> str:
    result = subprocess.run(
        [*pg_dump_argv(cfg), "--schema-only", "--no-tablespaces", as_uri(admin_url(cfg, dbname))],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"pg_dump of {dbname} failed: {result.stderr.strip()}")
    return normalise(result.stdout)


def dump_from_zero(cfg: Config) -> str:
    """Migrate a scratch database from zero, dump it, drop it."""
    scratch = f"exo_schema_dump_{os.getpid()}"
    with connect(admin_url(cfg, "postgres"), "exo-schema-dump", autocommit=True) as conn:
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(scratch)))
    try:
        migrate(cfg, admin_url(cfg, scratch))
        return dump(cfg, scratch)
    finally:
        with connect(admin_url(cfg, "postgres"), "exo-schema-dump", autocommit=True) as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(scratch)))


def write(cfg: Config, path: Path = DUMP_FILE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_from_zero(cfg))
    return path
