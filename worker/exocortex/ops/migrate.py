"""The migrator: roles, extensions, pgmq, migrations once each, then sql/ re-applied.

Order of one run, all under an advisory lock so concurrent migrators of one
database queue up and each file is applied once (a migrator waits at most
MIGRATE_WAIT_S for another, then names it), and with a lock_timeout on every other
lock (Config.lock_timeout_s), so an open transaction elsewhere, a reader's for
instance, stops the run with the holder's pid, role and application_name instead
of stalling it and everyone queued behind it:

1. roles (cluster-wide, serialised across databases by a lock on pg_authid);
2. extensions, named with their Debian package when missing;
3. the migrator's own bookkeeping (exo_private.schema_migrations, .components);
4. pgmq's SQL from the `pgmq` PyPI package, when absent, its version recorded;
5. migrations/NNNN_name.sql not yet applied, each in its own transaction as
   exo_owner, recorded with its sha256 in the same transaction; a changed
   applied file stops the run before anything is applied;
6. sql/*.sql in name order, each in its own transaction, with plpy/ modules
   inlined into their plpython3u bodies (creating plpython3u functions needs
   the admin, so these run as it; 980_ownership.sql hands everything to exo_owner,
   the exo API to exo_api);
7. the reader's session limits from the settings table (set_reader_limits);
8. the pg_cron jobs the sql/ files declared, scheduled for this database in the one
   pg_cron serves (ops/cron.py), unless the caller asks for none (a template, a scratch
   database).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import psycopg
from psycopg import sql

from exocortex.config import Config
from exocortex.db import ROLES, admin_url, connect, load_secrets, save_secret, transaction
from exocortex.ops import cron
from exocortex.runtime.packages import package_for_extension

#: pg_advisory_lock key: "exocortex migrate"
LOCK_KEY = 0x65786F6D6967
#: Seconds a migrator waits for another migrator of the same database before it gives up
#: and names it: a run from zero takes seconds, a migration with a large backfill longer.
MIGRATE_WAIT_S = 300.0
MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
LOCAL_IMPORT = re.compile(r"^from ([a-z_][a-z0-9_]*) import .+$")
INCLUDE = re.compile(r"^(?P<indent>[ \t]*)# exo:include (?P<module>[a-z_][a-z0-9_.]*)[ \t]*$", re.M)

#: Created in every database; pg_cron only where cron.database_name points.
EXTENSIONS = ("plpython3u", "vector", "age", "pg_textsearch", "pg_trgm")
CRON = "pg_cron"

#: Roles nobody logs in as: the owners of what the reader runs. exo_api owns the exo
#: schema's functions and views and may only read; exo_graph owns the one function that
#: runs a caller's Cypher and may only read the workspace graphs (docs/security.md); exo_kb
#: owns the one function that records a user's use of documents (sql/700_kb.sql).
#: exo_owner is a member of both, so migrations can still replace or drop their objects.
INTERNAL_ROLES = ("exo_api", "exo_graph", "exo_kb")

ROLE_SETTINGS = {
    "exo_reader": {"default_transaction_read_only": ["on"], "search_path": ["exo"]},
    "exo_writer": {"search_path": ["exo_private", "exo", "public"]},
    "exo_owner": {"search_path": ["exo_private", "exo", "public"]},
}

#: The server's own databases, closed to PUBLIC when the server is exocortex's local runtime
#: (on a foreign server they are not ours to change; `exo doctor` reports them instead).
MAINTENANCE_DATABASES = ("postgres", "template1")

#: exo_reader's session limits: a key of the settings table (migrations/0007) -> the server
#: parameter it sets for the reader in that database (`alter role exo_reader in database ...
#: set`), plus READER_CONNECTION_LIMIT, the role's connection limit (server-wide: the last
#: database migrated sets it). To change one: `select exo_private.set_setting(
#: 'reader.statement_timeout', '"10s"')`, then `exo migrate`; a value the server refuses
#: stops the migrator with a message naming the setting. default_transaction_read_only and
#: search_path are fixed (ROLE_SETTINGS): privileges, not they, are the boundary.
READER_LIMITS = {
    "reader.statement_timeout": "statement_timeout",
    "reader.idle_in_transaction_session_timeout": "idle_in_transaction_session_timeout",
    "reader.temp_file_limit": "temp_file_limit",
    "reader.client_connection_check_interval": "client_connection_check_interval",
}
READER_CONNECTION_LIMIT = "reader.connection_limit"
#: Each profile role's connection limit (server-wide, like the reader's).
PROFILE_CONNECTION_LIMIT = "reader.profile_connection_limit"

#: Who the sessions with the given pids are, for messages that name the holder of a lock.
SESSIONS = """
select a.pid, a.usename, a.application_name, a.state, coalesce(a.xact_start, a.state_change)
from pg_catalog.pg_stat_activity a
where a.pid = any({pids})
order by a.pid
"""

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
    jobs: cron.Scheduled | None = None
    """The pg_cron jobs scheduled for the database (None: not asked to)."""


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _module_path(name: str, plpy_dir: Path) -> Path | None:
    """plpy/NAME.py, if it exists."""
    path = plpy_dir / f"{name}.py"
    return path if path.exists() else None


def _top_level_names(path: Path) -> set[str]:
    """The names a module's own statements define at its top level (functions, classes,
    assignments); imports are left out, as the same import twice does no harm."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def inline_plpy(text: str, plpy_dir: Path, source: str) -> str:
    """Replace `# exo:include module` lines with the module's source, indented alike.

    `module` is a file in plpy/ (standard library only). A module's `from sibling import ...`
    lines, where plpy/sibling.py exists, are replaced by the sibling's source (each
    module once), since a plpython3u body cannot import files; `from __future__`
    lines are dropped (the body runs inside a function). Inlined modules share one namespace,
    so two that define the same top-level name are refused: the later would silently replace
    the earlier's (a helper named alike in two modules changes what the first one computes).
    """
    defined_in: dict[str, str] = {}  # of the function body being inlined

    def module_source(name: str, seen: set[str]) -> list[str]:
        path = _module_path(name, plpy_dir)
        if path is None:
            raise MigrationError(f"{source}: `# exo:include {name}` but no such module was found")
        seen.add(name)
        for defined in sorted(_top_level_names(path)):
            other = defined_in.setdefault(defined, name)
            if other != name:
                raise MigrationError(
                    f"{source}: plpy/{other}.py and plpy/{name}.py both define {defined!r}; inlined "
                    "into one function body, one would replace the other (rename one of them)"
                )
        lines = []
        in_import = False  # inside the parentheses of a sibling's multi-line import
        for line in path.read_text().splitlines():
            if in_import:
                in_import = line.strip() != ")"
                continue
            if line.startswith("from __future__ import"):
                continue
            local = LOCAL_IMPORT.match(line)
            if local and (plpy_dir / f"{local.group(1)}.py").exists():
                if local.group(1) not in seen:
                    lines += module_source(local.group(1), seen)
                in_import = line.rstrip().endswith("(")
                continue
            lines.append(line)
        if any("$$" in line for line in lines):
            raise MigrationError(f"{path} contains $$, which would end the function body")
        return lines

    def include(m: re.Match[str]) -> str:
        indent = m.group("indent")
        lines = module_source(m.group("module"), set())
        return "\n".join(indent + line if line else line for line in lines)

    bodies = text.split("$$")  # a function body is between two $$ (modules never hold $$)
    for i, body in enumerate(bodies):
        defined_in.clear()
        bodies[i] = INCLUDE.sub(include, body)
    return "$$".join(bodies)


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
    with transaction(conn):
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
            if role == "exo_reader":
                # Every role may set its own session defaults (no privilege governs that), so a
                # reader could have added some: the reader keeps ours and only ours.
                conn.execute(sql.SQL("alter role {} reset all").format(sql.Identifier(role)))
            _set_role_settings(conn, role, ROLE_SETTINGS[role])
        for role in INTERNAL_ROLES:
            if not conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone():
                conn.execute(sql.SQL("create role {} nologin noinherit").format(sql.Identifier(role)))
            conn.execute(sql.SQL("grant {} to exo_owner").format(sql.Identifier(role)))


#: The migrator's own session may build large indexes: it lifts the soft data limit every
#: server process starts under, as the login trigger does for trusted roles (which a database
#: migrated for the first time does not have yet; sql/065_backend_memory.sql).
LIFT_MEMORY_LIMIT = "do language plpython3u $$\n# exo:include backend_memory\nlift()\n$$"


def lift_memory_limit(conn: psycopg.Connection, plpy_dir: Path) -> None:
    conn.execute(inline_plpy(LIFT_MEMORY_LIMIT, plpy_dir, "the migrator's memory limit"))


def _set_role_settings(conn: psycopg.Connection, role: str, settings: dict[str, list[str]]) -> None:
    for name, values in settings.items():
        # One literal per list element: a single quoted 'a, b' would be one schema name.
        conn.execute(
            sql.SQL("alter role {} set {} = {}").format(
                sql.Identifier(role), sql.Identifier(name), sql.SQL(", ").join(map(sql.Literal, values))
            )
        )


#: The profiles' login roles of this database (kb_profiles.role) that exist, once the column does.
PROFILE_ROLES = """
select p.role from exo_private.kb_profiles p join pg_catalog.pg_roles r on r.rolname = p.role order by p.role
"""


def profile_roles(conn: psycopg.Connection) -> list[str]:
    """The login roles of this database's profiles that exist (none before migration 0048)."""
    return [r[0] for r in conn.execute(PROFILE_ROLES)] if profile_roles_column(conn) else []


def ensure_profile_roles(cfg: Config, conn: psycopg.Connection, renew_unknown: bool = False) -> list[str]:
    """Make the login role of every profile of this database that has none: a member of exo_reader
    with the reader's session defaults, its password kept with the others (db.save_secret). With
    renew_unknown, a role that exists but whose password this EXO_HOME does not keep gets a new
    one (exo user add prints a URL that works). Returns the roles made or renewed."""
    if not profile_roles_column(conn):
        return []
    known = load_secrets(cfg)
    made = []
    with transaction(conn):
        conn.execute("lock table pg_catalog.pg_authid in share row exclusive mode")
        for role, exists in conn.execute(
            "select p.role, r.rolname is not null from exo_private.kb_profiles p "
            "left join pg_catalog.pg_roles r on r.rolname = p.role order by p.role"
        ).fetchall():
            if exists and not (renew_unknown and role not in known):
                continue
            password = secrets.token_urlsafe(24)
            verb = "alter" if exists else "create"
            conn.execute(
                sql.SQL("{} role {} login password {}").format(
                    sql.SQL(verb), sql.Identifier(role), sql.Literal(password)
                )
            )
            conn.execute(sql.SQL("grant exo_reader to {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("alter role {} reset all").format(sql.Identifier(role)))
            _set_role_settings(conn, role, ROLE_SETTINGS["exo_reader"])
            save_secret(cfg, role, password)
            made.append(role)
    return made


def profile_roles_column(conn: psycopg.Connection) -> bool:
    return conn.execute(
        "select exists (select 1 from pg_catalog.pg_attribute where attrelid = to_regclass('exo_private.kb_profiles')"
        " and attname = 'role' and not attisdropped)"
    ).fetchone()[0]


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
    with transaction(conn):
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
                f"migration {name} was applied to this database but this exocortex does not ship it "
                f"(in {migrations_dir}): a newer release migrated it; install that release or a newer one"
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
        with transaction(conn):
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
        with transaction(conn):
            try:
                conn.execute(text)
            except psycopg.Error as exc:
                raise MigrationError(f"sql/{path.name} failed: {exc}") from exc
    return len(paths)


def grant_database_privileges(conn: psycopg.Connection) -> None:
    """Privileges on the database itself and on AGE's catalog, and the reader's limits.

    Kept apart from sql/990_grants.sql because a database's own ACL and its per-database
    role settings are not copied by `create database ... template`: whoever clones a
    migrated database calls this. Only exocortex's roles may connect (the admin is the
    owner or a superuser); only the owner and the writer get temporary tables.
    """
    database = conn.execute("select current_database()").fetchone()[0]
    with transaction(conn):
        for statement in (
            "revoke connect, temporary on database {} from public",
            "grant connect on database {} to exo_owner, exo_writer, exo_reader",
            "grant create, temporary on database {} to exo_owner",
            "grant temporary on database {} to exo_writer",
        ):
            conn.execute(sql.SQL(statement).format(sql.Identifier(database)))
        for role in profile_roles(conn):
            conn.execute(
                sql.SQL("grant connect on database {} to {}").format(
                    sql.Identifier(database), sql.Identifier(role)
                )
            )
        # exo_owner creates the workspace graphs (ensure_workspace_graph).
        conn.execute("grant usage on schema ag_catalog to exo_owner")
        conn.execute("grant select on ag_catalog.ag_graph, ag_catalog.ag_label to exo_owner")
    if conn.execute("select to_regclass('exo_private.settings')").fetchone()[0] is not None:
        set_reader_limits(conn)


def close_maintenance_databases(conn: psycopg.Connection) -> None:
    """PUBLIC may not connect to, or make temporary tables in, the server's own databases."""
    with transaction(conn):
        # pg_database is shared: two migrators changing one row at once would fail, so this
        # waits on the lock that serialises ensure_roles, and changes only what is open.
        conn.execute("lock table pg_catalog.pg_authid in share row exclusive mode")
        still_open = conn.execute(
            """
            select d.datname from pg_catalog.pg_database d
            where d.datname = any(%s)
              and exists (select 1 from pg_catalog.aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) a
                          where a.grantee = 0 and a.privilege_type in ('CONNECT', 'TEMPORARY'))
            """,
            (list(MAINTENANCE_DATABASES),),
        ).fetchall()
        for (name,) in still_open:
            conn.execute(
                sql.SQL("revoke connect, temporary on database {} from public").format(sql.Identifier(name))
            )


def _limit_text(key: str, value: object) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise MigrationError(
        f'setting {key} must be a JSON string such as "30s" or a whole number, got {value!r}; '
        f"fix it with exo_private.set_setting and run `exo migrate` again"
    )


def set_reader_limits(conn: psycopg.Connection) -> None:
    """The session limits of every reader role in this database (exo_reader's and each profile
    role's), from the settings table (READER_LIMITS), and their connection limits.

    Whatever else a reader role set for itself in this database goes (a role may set its own
    defaults). A setting that is absent leaves the server's default; one the server refuses
    stops the run with a message naming the setting, and changes nothing.
    """
    database = conn.execute("select current_database()").fetchone()[0]
    keys = [*READER_LIMITS, READER_CONNECTION_LIMIT, PROFILE_CONNECTION_LIMIT]
    values = dict(
        conn.execute("select key, value from exo_private.settings where key = any(%s)", (keys,)).fetchall()
    )
    with transaction(conn):
        # pg_authid and pg_db_role_setting are shared by every database: serialise with the
        # migrators and clones of other databases, as ensure_roles does.
        conn.execute("lock table pg_catalog.pg_authid in share row exclusive mode")
        roles = {"exo_reader": READER_CONNECTION_LIMIT} | dict.fromkeys(
            profile_roles(conn), PROFILE_CONNECTION_LIMIT
        )
        for role, connection_key in roles.items():
            # A reader role may have set defaults of its own in this database: only the limits stay.
            conn.execute(
                sql.SQL("alter role {} in database {} reset all").format(
                    sql.Identifier(role), sql.Identifier(database)
                )
            )
            for key, parameter in READER_LIMITS.items():
                if key not in values:
                    continue
                text = _limit_text(key, values[key])
                try:
                    conn.execute(
                        sql.SQL("alter role {} in database {} set {} = {}").format(
                            sql.Identifier(role),
                            sql.Identifier(database),
                            sql.Identifier(parameter),
                            sql.Literal(text),
                        )
                    )
                except psycopg.Error as exc:
                    raise MigrationError(
                        f"setting {key} = {text!r} was refused for {parameter}: {exc.diag.message_primary}; "
                        f"fix it with exo_private.set_setting and run `exo migrate` again"
                    ) from exc
            if connection_key in values:
                _set_connection_limit(conn, role, connection_key, values[connection_key])


def _set_connection_limit(conn: psycopg.Connection, role: str, key: str, limit: object) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise MigrationError(
            f"setting {key} must be a whole number of connections, at least 1, "
            f"got {limit!r}; fix it with exo_private.set_setting and run `exo migrate` again"
        )
    current = conn.execute("select rolconnlimit from pg_roles where rolname = %s", (role,)).fetchone()
    if current != (limit,):
        conn.execute(
            sql.SQL("alter role {} connection limit {}").format(sql.Identifier(role), sql.Literal(limit))
        )


def _describe_sessions(rows: list[tuple]) -> str:
    return "; ".join(
        f"pid {pid} (role {role}, application_name {app!r}, {state or 'state unknown'}"
        + (f" since {since:%Y-%m-%d %H:%M:%S %Z})" if since else ")")
        for pid, role, app, state, since in rows
    )


def _take_migrate_lock(conn: psycopg.Connection, wait_s: float) -> None:
    """The migrate advisory lock of this database, waiting for another migrator at most wait_s."""
    deadline = time.monotonic() + wait_s
    while not conn.execute("select pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()[0]:
        if time.monotonic() >= deadline:
            holders = conn.execute(
                """
                select array_agg(l.pid) from pg_catalog.pg_locks l
                where l.locktype = 'advisory' and l.granted and l.objsubid = 1
                  and l.database = (select oid from pg_database where datname = current_database())
                  and (l.classid::int8 << 32) | l.objid::int8 = %s
                """,
                (LOCK_KEY,),
            ).fetchone()[0]
            who = _describe_sessions(conn.execute(SESSIONS.format(pids="%s"), (holders or [],)).fetchall())
            raise MigrationError(
                f"another migrator has held this database's migrate lock for over {wait_s:g} s: "
                f"{who or 'a session that has just ended'}; wait for it, or end that session, "
                f"then run `exo migrate` again"
            )
        time.sleep(0.5)


class _LockWatch:
    """Which sessions block the migrator's, sampled from a second connection while it runs.

    A lock_timeout error does not say who held the lock, and once it is raised nothing
    waits any more, so the blockers are noted while the migrator still waits.
    """

    def __init__(self, url: str, pid: int, interval_s: float) -> None:
        self.url, self.pid, self.interval_s = url, pid, interval_s
        self.blockers: list[tuple] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="exo-migrate-watch", daemon=True)

    def __enter__(self) -> _LockWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        blocking = SESSIONS.format(pids="pg_catalog.pg_blocking_pids(%s)")
        try:
            with connect(self.url, "exo-migrate-watch", autocommit=True) as conn:
                while not self._stop.wait(self.interval_s):
                    rows = conn.execute(blocking, (self.pid,)).fetchall()
                    if rows:
                        self.blockers = rows
        except psycopg.Error:
            return  # best effort: without it, a lock failure names no holder

    def describe(self) -> str:
        return _describe_sessions(self.blockers) or "a session that was not seen in time"


def _is_lock_timeout(exc: BaseException) -> bool:
    return isinstance(exc, psycopg.errors.LockNotAvailable) or isinstance(
        exc.__cause__, psycopg.errors.LockNotAvailable
    )


def migrate(
    cfg: Config,
    url: str,
    progress: Callable[[str], None] = lambda _m: None,
    *,
    wait_s: float = MIGRATE_WAIT_S,
    schedule: bool = True,
) -> MigrateResult:
    """Bring the database at `url` (an admin URL) up to date; with `schedule`, give it its
    pg_cron jobs (a template to clone, whose clones are not migrated, or a scratch database
    that is dropped afterwards, gets none: a job's session on a template stops its cloning)."""
    # Without statements of psycopg's own, it never sends DEALLOCATE ALL after a DROP: that would
    # take the blocks' prepared ROLLBACK with it (db.transaction).
    with connect(url, "exo-migrate", autocommit=True, prepare_threshold=None) as conn:
        database = conn.execute("select current_database()").fetchone()[0]
        result = MigrateResult(database)
        conn.execute(
            sql.SQL("set lock_timeout = {}").format(sql.Literal(f"{round(cfg.lock_timeout_s * 1000)}ms"))
        )
        _take_migrate_lock(conn, wait_s)
        try:
            with _LockWatch(url, conn.info.backend_pid, min(0.2, cfg.lock_timeout_s / 5)) as watch:
                try:
                    _migrate_steps(cfg, conn, result, progress)
                    if schedule:
                        result.jobs = _schedule(conn, url)
                        progress(result.jobs.describe())
                except (MigrationError, psycopg.Error) as exc:
                    if not _is_lock_timeout(exc):
                        raise
                    raise MigrationError(
                        f"{exc}: waited {cfg.lock_timeout_s:g} s for a lock held by {watch.describe()}; "
                        f"end that session or let it finish, then run `exo migrate` again "
                        f"(EXO_LOCK_TIMEOUT_S sets the wait)"
                    ) from exc
        finally:
            # The lock is the session's and goes with the connection: an unlock that fails (a
            # transaction the server could not roll back) must not hide what stopped migrate.
            with contextlib.suppress(psycopg.Error):
                conn.execute("select pg_advisory_unlock(%s)", (LOCK_KEY,))
    return result


def _migrate_steps(
    cfg: Config, conn: psycopg.Connection, result: MigrateResult, progress: Callable[[str], None]
) -> None:
    ensure_roles(conn, load_secrets(cfg))
    ensure_extensions(conn)
    lift_memory_limit(conn, cfg.plpy_dir)
    if not cfg.external_url:
        close_maintenance_databases(conn)
    grant_database_privileges(conn)
    with transaction(conn):
        conn.execute("set local role exo_owner")
        conn.execute(BOOTSTRAP)
    result.pgmq_installed = install_pgmq(conn)
    if result.pgmq_installed:
        progress(f"installed pgmq {result.pgmq_installed}")
    result.applied = apply_migrations(conn, cfg.migrations_dir)
    for name in result.applied:
        progress(f"applied {name}")
    result.sql_files = apply_sql(conn, cfg.sql_dir, cfg.plpy_dir)
    # A profile made by SQL, or before profiles had roles (migration 0048), gets its login role.
    ensure_profile_roles(cfg, conn)
    # Again after the files: a migration of this run may have added or changed a limit, and a
    # profile role its database privileges.
    grant_database_privileges(conn)


def _schedule(conn: psycopg.Connection, url: str) -> cron.Scheduled:
    try:
        return cron.schedule(conn, url)
    except cron.CronProblem as exc:
        raise MigrationError(
            f"{conn.info.dbname} is migrated but its jobs are not scheduled: {exc}"
        ) from None


@contextmanager
def scratch_database(cfg: Config, purpose: str) -> Iterator[str]:
    """A database migrated from zero for one job (schema dump, lint), dropped afterwards."""
    name = f"exo_{purpose}_{os.getpid()}"
    with connect(admin_url(cfg, "postgres"), f"exo-{purpose}", autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    try:
        migrate(cfg, admin_url(cfg, name), schedule=False)
        yield name
    finally:
        with connect(admin_url(cfg, "postgres"), f"exo-{purpose}", autocommit=True) as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
