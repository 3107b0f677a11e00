"""The suite's own runtime: its own EXO_HOME, data directory, port and secrets, never the user's.

`isolate` runs once, when the conftest is imported, before any test or `exo` subprocess
reads the environment: it points EXO_HOME and EXO_PG_PORT at the suite's runtime and drops
what would lead to the user's memory (EXO_DATABASE_URL, EXO_READER_URL, EXO_PROFILE). The
suite's root starts as a copy of the user's when that one is provisioned (read, never
changed), else it is built like any other.

`ServerMark` is what the suite notes of the user's server before it starts, so that its
last test can show the server was neither stopped, restarted nor refused a connection.

    EXO_TEST_HOME          the suite's runtime (default: <cache>/exocortex-test)
    EXO_TEST_PG_PORT       its port (default 54339)
    EXO_TEST_DATABASE_URL  an admin URL of another server for the suite (a docker
                           container, say); EXO_DATABASE_URL is never used by the suite
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from exocortex import config
from exocortex.config import Config
from exocortex.runtime import local

TEST_PORT = 54339
#: What the user's server log says when it stops, restarts or turns a connection away.
TROUBLE = re.compile(
    r"\b(FATAL|PANIC):|database system is shut down|terminated by signal|all server processes"
)


#: What points at a memory, as the user's environment had it before isolate changed it (JSON):
#: the processes pytest-xdist starts inherit the changed environment, and read the user's from it.
USER_ENVIRONMENT = "EXO_TEST_USER_ENVIRONMENT"
MEMORY_VARIABLES = ("EXO_HOME", "EXO_PG_PORT", "EXO_DATABASE_URL", "EXO_READER_URL", "EXO_PROFILE")


def user_config(environ: MutableMapping[str, str]) -> Config:
    """The user's config, from the environment as it was before the first isolate."""
    if USER_ENVIRONMENT not in environ:
        environ[USER_ENVIRONMENT] = json.dumps({name: environ.get(name) for name in MEMORY_VARIABLES})
    saved = json.loads(environ[USER_ENVIRONMENT])
    now = {name: environ.get(name) for name in MEMORY_VARIABLES}

    def put(values: dict) -> None:
        for name, value in values.items():
            if value is None:
                environ.pop(name, None)
            else:
                environ[name] = value

    put(saved)
    try:
        return config.load()
    finally:
        put(now)


def isolate(environ: MutableMapping[str, str]) -> tuple[Config, Config]:
    """Point this process at the suite's runtime; returns (the user's config, the suite's)."""
    user = user_config(environ)
    cache = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    home = Path(environ.get("EXO_TEST_HOME") or cache / "exocortex-test").resolve()
    port = environ.get("EXO_TEST_PG_PORT", str(TEST_PORT))
    if not user.external_url and home == user.home:
        raise SystemExit(
            f"EXO_TEST_HOME is the user's EXO_HOME ({home}); the suite needs a runtime of its own"
        )
    if not user.external_url and port == str(user.port):
        raise SystemExit(f"EXO_TEST_PG_PORT is the user's EXO_PG_PORT ({port}); give the suite its own port")
    for name in ("EXO_DATABASE_URL", "EXO_READER_URL", "EXO_PROFILE"):
        environ.pop(name, None)
    environ["EXO_HOME"] = str(home)
    environ["EXO_PG_PORT"] = port
    if environ.get("EXO_TEST_DATABASE_URL"):
        environ["EXO_DATABASE_URL"] = environ["EXO_TEST_DATABASE_URL"]
    return user, config.load()


def seed_root(user: Config) -> Path | None:
    """The user's runtime root, which the suite's root is copied from, or None."""
    return None if user.external_url else user.runtime_root


@dataclass(frozen=True)
class ServerMark:
    """The user's server as the suite found it: its postmaster and how far its log went."""

    pid: int
    log: Path
    log_size: int


def mark(user: Config) -> ServerMark | None:
    """The user's local server, if it is running; None otherwise (nothing to watch)."""
    if user.external_url:
        return None
    pid_file = local.data_dir(user) / "postmaster.pid"
    log = user.runtime_root / local.LOG_FILE.lstrip("/")
    try:
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return ServerMark(pid, log, log.stat().st_size if log.exists() else 0)


#: A file that the first of several pytest runs over one suite (make test-fast: the parallel part,
#: then the serial one) notes the user's server in, and the later ones read: the last test then
#: covers them all. An empty or missing file: this run is the first.
MARK_FILE = "EXO_TEST_USER_MARK"


def first_mark(user: Config) -> ServerMark | None:
    """The user's server as the first run of the suite found it (MARK_FILE), else as now (mark)."""
    path = os.environ.get(MARK_FILE)
    saved = Path(path) if path else None
    if saved and saved.exists() and saved.stat().st_size:
        found = json.loads(saved.read_text())
        return found and ServerMark(found["pid"], Path(found["log"]), found["log_size"])
    now = mark(user)
    if saved:
        noted = now and {"pid": now.pid, "log": str(now.log), "log_size": now.log_size}
        saved.write_text(json.dumps(noted))
    return now


def disturbances(user: Config, before: ServerMark) -> list[str]:
    """What happened to the user's server since `before`: empty when it was left alone."""
    now = mark(user)
    found = []
    if now is None:
        found.append(f"the server (postmaster {before.pid}) is no longer running")
    elif now.pid != before.pid:
        found.append(f"the postmaster changed from {before.pid} to {now.pid}: the server was restarted")
    if before.log.exists():
        with open(before.log, errors="replace") as f:
            f.seek(before.log_size)
            found += [line.rstrip() for line in f if TROUBLE.search(line)]
    return found
