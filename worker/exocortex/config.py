"""Configuration: the one module that reads the environment.

Everything the code needs from the outside world (where the runtime lives, which
port it listens on, an external server to use instead) is read here once, so no
other module calls ``os.environ`` for exocortex settings. Settings that change
behaviour inside the database live in the ``settings`` table instead.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PORT = 54329
DEFAULT_DATABASE = "exocortex"
PG_MAJOR = 18
#: What EXO_PG_LISTEN may hold: listen_addresses' own syntax, nothing that could end its quotes.
LISTEN = re.compile(r"^\s*(\*|[A-Za-z0-9.:\-]+)(\s*,\s*(\*|[A-Za-z0-9.:\-]+))*\s*$")

#: The package's own folder: migrations/, sql/ and plpy/ ship in it as package data.
PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """migrations/, sql/ or plpy/: inside the installed package (a wheel), else at the checkout's root."""
    shipped = PACKAGE_DIR / name
    return shipped if shipped.is_dir() else PACKAGE_DIR.parents[1] / name


@dataclass(frozen=True)
class Config:
    home: Path
    """Cache folder outside the checkout: the runtime root, its data, secrets."""
    port: int
    database: str
    external_url: str | None
    """EXO_DATABASE_URL: an admin URL of another server; skips provisioning."""
    reader_url: str | None
    """EXO_READER_URL: the read-only role's URL for agents (MCP, retrievers, query CLI);
    by default built from the runtime's secrets."""
    debian_mirror: str | None
    """EXO_DEBIAN_MIRROR: overrides the mirror read from the host's apt sources."""
    debian_suite: str
    migrations_dir: Path
    sql_dir: Path
    plpy_dir: Path
    lock_timeout_s: float = 10.0
    """EXO_LOCK_TIMEOUT_S: how long the migrator waits for a table or catalog lock before it
    stops and names the session that holds it."""
    profile: str | None = None
    """EXO_PROFILE: the user (exo user add NAME) whose personal base the MCP server and the
    retrievers search first and record in, when none is given; unset: nothing recorded."""
    writer_url: str | None = None
    """EXO_WRITER_URL: exo_writer's URL, for a worker on another host (as `exo db url --role writer
    --remote HOST` prints it on the primary's); by default built from the runtime's secrets."""
    listen_addresses: str = "127.0.0.1"
    """EXO_PG_LISTEN: the addresses the runtime's server and its local replicas listen on
    (PostgreSQL's listen_addresses): add this machine's for workers and readers on other hosts."""
    reader_urls: tuple[str, ...] = ()
    """EXO_READER_URLS (comma-separated): reader URLs of hot standbys of the server, to which the
    reader clients send reads (exocortex.client.routing); `exo db url --role reader --replicas`."""

    @property
    def runtime_root(self) -> Path:
        return self.home / "root"

    @property
    def secrets_file(self) -> Path:
        return self.home / "secrets.json"


def load() -> Config:
    env = os.environ
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    port_text = env.get("EXO_PG_PORT", str(DEFAULT_PORT))
    try:
        port = int(port_text)
    except ValueError:
        raise SystemExit(f"EXO_PG_PORT must be a port number, got {port_text!r}") from None
    if not 1024 <= port <= 65535:
        raise SystemExit(f"EXO_PG_PORT must be between 1024 and 65535, got {port}")
    lock_text = env.get("EXO_LOCK_TIMEOUT_S", "10")
    try:
        lock_timeout_s = float(lock_text)
    except ValueError:
        raise SystemExit(f"EXO_LOCK_TIMEOUT_S must be a number of seconds, got {lock_text!r}") from None
    if not 0 < lock_timeout_s <= 3600:
        raise SystemExit(f"EXO_LOCK_TIMEOUT_S must be more than 0 and at most 3600, got {lock_text!r}")
    listen = env.get("EXO_PG_LISTEN", "127.0.0.1")
    if not LISTEN.match(listen):
        raise SystemExit(
            f"EXO_PG_LISTEN must be comma-separated host names or addresses (or *), got {listen!r}"
        )
    return Config(
        home=Path(env.get("EXO_HOME") or cache / "exocortex").resolve(),
        port=port,
        database=env.get("EXO_DB_NAME", DEFAULT_DATABASE),
        external_url=env.get("EXO_DATABASE_URL") or None,
        reader_url=env.get("EXO_READER_URL") or None,
        debian_mirror=env.get("EXO_DEBIAN_MIRROR") or None,
        debian_suite=env.get("EXO_DEBIAN_SUITE", "forky"),
        migrations_dir=data_dir("migrations"),
        sql_dir=data_dir("sql"),
        plpy_dir=data_dir("plpy"),
        lock_timeout_s=lock_timeout_s,
        profile=env.get("EXO_PROFILE") or None,
        writer_url=env.get("EXO_WRITER_URL") or None,
        listen_addresses=listen,
        reader_urls=tuple(u.strip() for u in env.get("EXO_READER_URLS", "").split(",") if u.strip()),
    )
