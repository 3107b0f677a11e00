"""`exo doctor`: check every prerequisite and say what is missing and how to fix it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass

import psycopg

from exocortex.config import Config
from exocortex.db import admin_url, connect
from exocortex.ingest import ocr
from exocortex.ops import cron
from exocortex.ops.migrate import migration_files
from exocortex.runtime import local, replicas, server
from exocortex.runtime.local import RuntimeProblem

#: Other databases of the server that exo_reader may connect to (by its own or PUBLIC's grant).
READER_ELSEWHERE = """
select d.datname from pg_catalog.pg_database d
where d.datallowconn and d.datname <> current_database()
  and has_database_privilege(to_regrole('exo_reader'), d.oid, 'connect')
order by d.datname
"""


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _python() -> list[Check]:
    checks = [
        Check(
            "python >= 3.11",
            sys.version_info >= (3, 11),
            sys.version.split()[0],
            "install Python 3.11 or newer",
        )
    ]
    missing = [m for m in ("psycopg", "pgmq", "click", "rich") if not importlib.util.find_spec(m)]
    checks.append(
        Check(
            "python packages",
            not missing,
            "missing: " + ", ".join(missing) if missing else "psycopg, pgmq, click, rich",
            "install exocortex with its dependencies (pip install its wheel, or `make setup` in a checkout)",
        )
    )
    return checks


def _local_runtime(cfg: Config) -> list[Check]:
    checks = []
    try:
        local.check_platform()
        checks.append(Check("linux as root", True, "yes"))
    except RuntimeProblem as exc:
        return [Check("linux as root", False, str(exc), "see the message")]
    provisioned = local.is_provisioned(cfg)
    if not provisioned:
        has_tool = shutil.which("debootstrap") or shutil.which("apt-get")
        checks.append(
            Check(
                "debootstrap",
                bool(has_tool),
                "present" if shutil.which("debootstrap") else "apt-get can install it",
                "install debootstrap, or set EXO_DATABASE_URL",
            )
        )
        os.makedirs(cfg.home, exist_ok=True)
        free = shutil.disk_usage(cfg.home).free
        checks.append(
            Check(
                "disk space for the runtime",
                free >= local.MIN_FREE_BYTES,
                f"{free / 1024**3:.1f} GiB free in {cfg.home}",
                "free 2 GiB there or set EXO_HOME to a roomier folder",
            )
        )
    checks.append(
        Check(
            "runtime provisioned",
            provisioned,
            str(cfg.runtime_root) if provisioned else "not yet",
            "run `exo db up` (about a minute the first time)",
        )
    )
    if provisioned:
        running = local.is_running(cfg)
        port_ok = running or local.port_free(cfg.port)
        checks.append(
            Check(
                f"port {cfg.port}",
                port_ok,
                "ours" if running else ("free" if port_ok else "in use by another program"),
                "stop that program or set EXO_PG_PORT",
            )
        )
        checks.append(Check("server running", running, "yes" if running else "no", "run `exo db up`"))
    return checks


def migrations_check(applied: list[str], shipped: list[str]) -> Check:
    """Whether the database has applied exactly the migrations this package ships."""
    newer = sorted(set(applied) - set(shipped))
    if newer:
        return Check(
            "migrations",
            False,
            f"applied by a newer exocortex, missing from this one: {', '.join(newer)}",
            "install the exocortex release that migrated this database, or a newer one",
        )
    done = len(set(shipped) & set(applied))
    return Check("migrations", done == len(shipped), f"{done} of {len(shipped)} applied", "run `exo migrate`")


def _database(cfg: Config) -> list[Check]:
    try:
        version = server.check_server(cfg)
    except RuntimeProblem as exc:
        return [Check("server and extensions", False, str(exc), "see the message")]
    checks = [Check("server and extensions", True, f"PostgreSQL {version}, all extensions")]
    try:
        with connect(admin_url(cfg), "exo-doctor", autocommit=True, connect_timeout=5) as conn:
            table = conn.execute("select to_regclass('exo_private.schema_migrations')").fetchone()[0]
            applied = (
                [row[0] for row in conn.execute("select name from exo_private.schema_migrations")]
                if table
                else []
            )
            pgmq = (
                conn.execute("select version from exo_private.components where name = 'pgmq'").fetchone()
                if table
                else None
            )
            reader_elsewhere = [row[0] for row in conn.execute(READER_ELSEWHERE)]
            has_memory = conn.execute("select to_regprocedure('exo_private.server_memory()')").fetchone()[0]
            memory = conn.execute(SERVER_MEMORY).fetchone() if has_memory else None
            jobs = jobs_check(conn, admin_url(cfg)) if table else None
    except psycopg.Error as exc:
        return [*checks, Check("database", False, str(exc).strip(), "run `exo db up`")]
    checks.append(migrations_check(applied, [path.name for path in migration_files(cfg.migrations_dir)]))
    checks.append(Check("pgmq", pgmq is not None, pgmq[0] if pgmq else "not installed", "run `exo migrate`"))
    if memory is not None:
        checks.append(memory_check(*memory))
    if jobs is not None:
        checks.append(jobs)
    if cfg.external_url:
        # The local runtime's migrator closes its maintenance databases; a foreign server's
        # other databases are not ours to change, so say which the reader can reach.
        checks.append(
            Check(
                "reader's databases",
                not reader_elsewhere,
                "exo_reader can connect only to this database"
                if not reader_elsewhere
                else "exo_reader can also connect to " + ", ".join(reader_elsewhere),
                "on each, `revoke connect on database NAME from public` (and from exo_reader), "
                "granting CONNECT to the roles that need it",
            )
        )
    return checks


def jobs_check(conn: psycopg.Connection, url: str) -> Check:
    """This database's pg_cron jobs exist, active, in the database pg_cron serves."""
    name = "pg_cron jobs"
    database = conn.info.dbname
    try:
        cron_db, names, absent = cron.missing(conn, url)
    except cron.CronProblem as exc:
        return Check(name, False, str(exc), "see the message")
    if cron_db is None:
        return Check(
            name, False, "pg_cron is not loaded on this server", "add pg_cron to shared_preload_libraries"
        )
    if not names:
        return Check(name, False, f"{database} declares no jobs (migrated before 0078)", "run `exo migrate`")
    if absent:
        return Check(
            name,
            False,
            f"{len(absent)} of {len(names)} missing for {database} in {cron_db}: {', '.join(absent)}",
            "run `exo migrate`" + (f" (EXO_DB_NAME={database})" if database != cron_db else ""),
        )
    return Check(name, True, f"{len(names)} for {database}, in {cron_db}")


#: The server's process bounds and what readers may hold at most (docs/security.md, Memory).
SERVER_MEMORY = """
select exo_private.server_memory(),
       pg_size_bytes(coalesce((select value #>> '{}' from exo_private.settings where key = 'reader.backend_memory'),
                              '256MB')),
       least((select (value #>> '{}')::int from exo_private.settings where key = 'reader.connection_limit'
                 and jsonb_typeof(value) = 'number'),
             current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int)
"""


def memory_check(server: dict, bound: int, connections: int | None) -> Check:
    """Every process that never logs in starts bounded, and all reader sessions together fit."""
    name = "memory bounds"
    soft, total = server.get("postmaster_soft"), server.get("memory_total") or 0
    if soft is None or soft < 0:
        return Check(
            name,
            False,
            "the server's processes start with no data limit: a parallel worker a reader asks for is unbounded",
            "start PostgreSQL with a soft data limit (exo db up does; elsewhere `ulimit -S -d 262144` or "
            "LimitDATA=268435456:infinity, docs/security.md)",
        )
    readers = bound * (connections or 0)
    detail = (
        f"{soft // 1024**2} MB a process that never logs in; reader sessions at most "
        f"{connections or 0} x {bound // 1024**2} MB = {readers / 1024**3:.1f} GB"
        + (f" of {total / 1024**3:.0f} GB" if total else "")
    )
    fits = not total or readers <= total * 3 // 4  # what is left: shared buffers, the writer, the OS
    return Check(
        name, fits, detail, "lower reader.backend_memory or the connection limits (docs/security.md)"
    )


def ocr_check(cfg: Config) -> Check:
    """Tesseract for scanned PDFs: present (with pdftoppm), its version, English language data."""
    name = "tesseract (OCR of scanned PDFs)"
    try:
        tools = ocr.find_tools(cfg)
        version, languages = ocr.describe(tools)
    except ocr.OcrError as exc:
        return Check(name, False, exc.message, "see the message")
    detail = f"{version}, languages {', '.join(languages) or 'none'}, from {tools.where}"
    if "eng" not in languages:
        return Check(name, False, detail, f"install its English language data ({ocr.INSTALL})")
    return Check(name, True, detail)


def replica_checks(cfg: Config) -> list[Check]:
    """One check per replica of the registry (and orphan slot): streaming within replicas.max_lag_s;
    and one per standby: a watchdog stops its runaway readers (replicas.watch)."""
    try:
        rows = replicas.listing(cfg)
    except RuntimeProblem as exc:
        return [Check("replicas", False, str(exc), "see the message")]
    checks = []
    for row in rows:
        lag = (
            "" if row["lag_s"] is None else f", {row['lag_s']:.1f} s and {row['lag_bytes'] or 0} bytes behind"
        )
        checks.append(
            Check(
                f"replica {row['name']}",
                row["warning"] is None,
                f"{row['state']}{lag} (bound {row['max_lag_s']:g} s)"
                + (f": {row['warning']}" if row["warning"] else ""),
                "`exo db up` starts a stopped local replica; one lagging on and on needs a lighter primary "
                "or a larger replicas.max_lag_s; a lost slot or an orphan: `exo db replica remove NAME`",
            )
        )
        if row["readers_guard"]:
            checks.append(
                Check(
                    f"replica {row['name']} readers",
                    row["guard_warning"] is None,
                    row["readers_guard"] + (f": {row['guard_warning']}" if row["guard_warning"] else ""),
                    "`exo db up` starts a local replica's watchdog (`exo db replica watch NAME`)",
                )
            )
    return checks


def run(cfg: Config) -> list[Check]:
    checks = _python()
    if cfg.external_url:
        checks.append(Check("server", True, "EXO_DATABASE_URL is set; no local runtime needed"))
    else:
        checks += _local_runtime(cfg)
        if not all(c.ok for c in checks):
            return checks
    return [*checks, *_database(cfg), *replica_checks(cfg), ocr_check(cfg)]
