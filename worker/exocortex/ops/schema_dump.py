"""A normalised `pg_dump --schema-only` of a database, by default one migrated from zero.

The committed dump (schema/exocortex.sql) is what migrating from zero must give;
tests/test_migrate.py fails on any difference. tests/test_upgrade.py compares the dump
of a database of the previous release, migrated by this one, with one migrated from zero.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path

from exocortex.config import PG_MAJOR, Config
from exocortex.db import admin_url, as_uri
from exocortex.ops.migrate import scratch_database
from exocortex.runtime import local

#: Where `exo schema-dump` writes unless given a path: relative to the current directory
#: (`make schema-dump` runs it in the checkout's root).
DUMP_FILE = Path("schema") / "exocortex.sql"
_DROP = re.compile(r"^(-- Dumped (from|by) .*|\\(un)?restrict .*|SET .*|SELECT pg_catalog\.set_config.*)$")


def pg_dump_argv(cfg: Config) -> list[str]:
    if not cfg.external_url:
        return local.client_argv(cfg, "pg_dump")
    found = shutil.which("pg_dump")
    if not found:
        raise SystemExit(f"pg_dump {PG_MAJOR} is not on PATH; install postgresql-client-{PG_MAJOR}")
    return [found]


def normalise(dump: str) -> str:
    """Drop what differs between two dumps of equal schemas (versions, session SETs), and sort
    each object's GRANT lines: pg_dump lists an ACL in the order its grants were made, which
    differs between a database migrated from zero and one upgraded from a release."""
    lines = [line for line in dump.splitlines() if not _DROP.match(line)]
    out: list[str] = []
    for is_grant, run in itertools.groupby(lines, key=lambda line: line.startswith("GRANT ")):
        run = list(run)
        out.extend(sorted(run) if is_grant else run)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def dump(cfg: Config, dbname: str) -> str:
    """The normalised schema of the database `dbname` on the configured server."""
    result = subprocess.run(
        [*pg_dump_argv(cfg), "--schema-only", "--no-tablespaces", as_uri(admin_url(cfg, dbname))],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"pg_dump of {dbname} failed: {result.stderr.strip()}")
    return normalise(result.stdout)


def dump_from_zero(cfg: Config) -> str:
    with scratch_database(cfg, "schema_dump") as name:
        return dump(cfg, name)


def write(cfg: Config, path: Path = DUMP_FILE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_from_zero(cfg))
    return path
