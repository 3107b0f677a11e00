"""The database server, whichever it is: the embedded runtime or EXO_DATABASE_URL's."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from exocortex.config import PG_MAJOR, Config
from exocortex.db import admin_url, connect
from exocortex.ops import cron
from exocortex.ops.migrate import CRON, EXTENSIONS, grant_database_privileges
from exocortex.runtime import local, replicas
from exocortex.runtime.local import Progress, RuntimeProblem
from exocortex.runtime.packages import package_for_extension

PRELOADED = ("pg_cron", "pg_textsearch")


@dataclass
class UpResult:
    summary: str
    provisioned: bool
    seconds: float


def up(cfg: Config, progress: Progress, seed: Path | None = None) -> UpResult:
    """Provision (first time, copying `seed`'s root when it is complete), initialise, start,
    create the database; idempotent."""
    began = time.monotonic()
    if cfg.external_url:
        version = check_server(cfg)
        return UpResult(
            f"using the server at EXO_DATABASE_URL: PostgreSQL {version}; nothing to provision",
            False,
            time.monotonic() - began,
        )
    local.check_platform()  # before the lock in EXO_HOME, which needs root to make
    # One `up` at a time for an EXO_HOME: two at once (two terminals, or the suite's two processes
    # on a fresh machine) would build the same root.partial, each removing the other's files, and
    # initialise and start one cluster twice. The later waits, saying so, then finds it done.
    waiting = f"waiting for another `exo db up` of {cfg.home} to finish"
    with local.home_lock(cfg, "up", lambda: progress(waiting)):
        provisioned = local.provision(cfg, progress, seed)
        local.init_cluster(cfg, progress)
        local.start(cfg, progress)
        ensure_database(cfg)
    version = check_server(cfg)
    started = replicas.start_all(cfg)
    seconds = time.monotonic() - began
    what = f"provisioned in {seconds:.0f} s" if provisioned else f"ready in {seconds:.1f} s"
    return UpResult(
        "\n".join(
            [
                f"exocortex runtime: PostgreSQL {version} on 127.0.0.1:{cfg.port}, database "
                f"{cfg.database}, data in {local.data_dir(cfg)} ({what})",
                *started,
            ]
        ),
        provisioned,
        seconds,
    )


def down(cfg: Config) -> str:
    if cfg.external_url:
        return "EXO_DATABASE_URL is set: that server is not ours to stop"
    if not cfg.runtime_root.exists():
        return "the local runtime is not provisioned; nothing to stop"
    # The replicas first: a standby whose primary went away only retries and logs it.
    stopped = replicas.stop_all(cfg)
    return "\n".join(["stopped" if local.stop(cfg) else "was not running", *stopped])


def ensure_database(cfg: Config) -> None:
    with connect(admin_url(cfg, "postgres"), "exo-db-up", autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (cfg.database,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(cfg.database)))


class CopyRefused(RuntimeError):
    """A copy that cannot be made now; the message names why and what to do."""


#: The sessions on a database other than the caller's own and pg_cron's scheduler: a copy
#: (create database ... template) needs none.
OTHER_SESSIONS = """
select a.pid, a.usename, a.application_name, a.state
from pg_catalog.pg_stat_activity a
where a.datname = %s and a.pid <> pg_catalog.pg_backend_pid()
  and a.backend_type = 'client backend'
order by a.pid
"""


def copy_database(cfg: Config, name: str) -> str:
    """A copy of the memory (cfg.database) as database NAME, made while pg_cron runs: `create
    database NAME template ... strategy file_copy` needs the source to have no other session, and
    pg_cron's scheduler holds one on the database it serves. The source refuses new connections for the
    moment of the copy, the scheduler's session is ended (pg_cron starts it again at once, and
    reconnects when the source accepts connections again), and the copy gets the privileges a
    clone does not inherit and pg_cron jobs of its own. A client of the source (a worker, an
    agent) makes it refuse, naming the sessions. Returns what it did."""
    source = cfg.database
    if name == source:
        raise CopyRefused(f"the copy needs a name of its own, not {source!r}")
    with connect(admin_url(cfg, "postgres"), "exo-db-copy", autocommit=True) as conn:
        if conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone():
            raise CopyRefused(f"database {name!r} exists already; drop it or choose another name")
        others = conn.execute(OTHER_SESSIONS, (source,)).fetchall()
        if others:
            described = "; ".join(
                f"pid {p} ({u}, {a or 'no application_name'}, {s})" for p, u, a, s in others
            )
            raise CopyRefused(
                f"{source!r} has {len(others)} client session(s): {described}; stop them (exo worker, "
                f"exo mcp, agents) and copy again"
            )
        database = sql.Identifier(source)
        conn.execute(sql.SQL("alter database {} with allow_connections false").format(database))
        try:
            conn.execute(
                "select pg_catalog.pg_terminate_backend(a.pid) from pg_catalog.pg_stat_activity a "
                "where a.datname = %s and a.backend_type = 'pg_cron launcher'",
                (source,),
            )
            # FILE_COPY, not the default WAL_LOG: WAL_LOG logs each page of the source without
            # the hole between its line pointers and its tuples, where pg_textsearch's BM25 pages
            # keep data, so a standby (or crash recovery) rebuilt those indexes wrong and a search
            # of the copy there crashed its backend; FILE_COPY logs the copy of the files instead
            conn.execute(
                sql.SQL("create database {} template {} strategy file_copy").format(
                    sql.Identifier(name), database
                )
            )
        finally:
            conn.execute(sql.SQL("alter database {} with allow_connections true").format(database))
    with connect(admin_url(cfg, name), "exo-db-copy", autocommit=True) as copy:
        grant_database_privileges(copy)
        try:
            jobs = cron.schedule(copy, admin_url(cfg, name)).describe()
        except cron.CronProblem as exc:
            jobs = f"its pg_cron jobs are not scheduled: {exc}"
    return f"copied {source} to {name}; {jobs}"


def check_server(cfg: Config) -> str:
    """Connect and check version, extensions and preloads; returns the server version."""
    url = admin_url(cfg)
    try:
        conn = connect(url, "exo-check", autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        where = "EXO_DATABASE_URL" if cfg.external_url else f"127.0.0.1:{cfg.port}"
        raise RuntimeProblem(f"cannot connect to the server at {where}: {exc}".strip()) from None
    with conn:
        version_num = int(conn.execute("show server_version_num").fetchone()[0])
        version = conn.execute("show server_version").fetchone()[0].split()[0]
        if version_num // 10000 < PG_MAJOR:
            raise RuntimeProblem(f"exocortex needs PostgreSQL {PG_MAJOR}; the server runs {version}")
        available = {r[0] for r in conn.execute("select name from pg_available_extensions")}
        missing = [e for e in (*EXTENSIONS, CRON) if e not in available]
        if missing:
            raise RuntimeProblem(
                "the server lacks "
                + "; ".join(
                    f"extension {e} (install the Debian package {package_for_extension(e)})" for e in missing
                )
            )
        preload = conn.execute("show shared_preload_libraries").fetchone()[0]
        absent = [lib for lib in PRELOADED if lib not in preload]
        if absent:
            raise RuntimeProblem(
                f"shared_preload_libraries lacks {', '.join(absent)}; set it to "
                f"'age,pg_cron,pg_textsearch' and restart the server"
            )
    return version


def status(cfg: Config) -> dict:
    """What `exo db status` shows."""
    info: dict = {
        "mode": "external (EXO_DATABASE_URL)" if cfg.external_url else "local runtime",
        "database": cfg.database,
    }
    if not cfg.external_url:
        info |= {
            "runtime": str(cfg.runtime_root),
            "provisioned": local.is_provisioned(cfg),
            "port": cfg.port,
        }
        if not (info["provisioned"] and local.is_running(cfg)):
            info["running"] = False
            return info
        info["data_dir"] = str(local.data_dir(cfg))
        info["data_size_mb"] = round(local.data_size(cfg) / 1024**2, 1)
    try:
        with connect(admin_url(cfg), "exo-status", autocommit=True, connect_timeout=5) as conn:
            info["running"] = True
            info["version"] = conn.execute("show server_version").fetchone()[0]
            info["extensions"] = dict(
                conn.execute(
                    "select name, coalesce(installed_version, 'available ' || default_version) "
                    "from pg_available_extensions where name = any(%s) order by name",
                    ([*EXTENSIONS, CRON, "pgtap", "plpgsql_check"],),
                ).fetchall()
            )
            info["database_size_mb"] = round(
                conn.execute("select pg_database_size(current_database())").fetchone()[0] / 1024**2,
                1,
            )
            if conn.execute("select to_regprocedure('exo.version()')").fetchone()[0]:
                version = conn.execute("select exo.version()").fetchone()[0]
                info["schema"] = f"{version['schema']} ({version['migrations']} migrations)"
                info["components"] = version["components"]
            else:
                info["schema"] = "not migrated (run `exo migrate`)"
    except psycopg.OperationalError as exc:
        info["running"] = False
        info["error"] = str(exc).strip()
    if info["running"] and replicas.load(cfg):
        info["replicas"] = {
            r["name"]: f"{r['state']}, lag {r['lag_bytes']} bytes, {r['lag_s'] or 0:.1f} s"
            if r["lag_bytes"] is not None
            else r["state"]
            for r in replicas.listing(cfg)
        }
    return info
