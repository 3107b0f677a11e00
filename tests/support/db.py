"""Databases on the test server: the connection pytest-postgresql needs, the template's
migration, clones of it, and a Database handle with URLs and connections for each role.

pytest-postgresql's janitor creates and drops every database here (a clone is
`create database ... template`), so the conftest fixtures and the modules that keep a
database of their own for a whole module share one way of doing it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import Jsonb
from pytest_postgresql.janitor import DatabaseJanitor

from exocortex.config import Config
from exocortex.db import ADMIN, admin_url, connect, role_url
from exocortex.ops import profiles
from exocortex.ops.cron import unschedule_database
from exocortex.ops.migrate import grant_database_privileges, migrate


@dataclass(frozen=True)
class Database:
    """A database on the test server, with URLs and connections for each role."""

    cfg: Config
    name: str

    def url(self, role: str = ADMIN) -> str:
        return role_url(self.cfg, role, self.name)

    def connect(self, role: str = ADMIN, autocommit: bool = True) -> psycopg.Connection:
        return connect(self.url(role), f"exo-test-{role}", autocommit=autocommit)

    def profile_url(self, name: str) -> str:
        """The URL of profile NAME's login role here (the profile and its role made when missing)."""
        with self.connect() as admin:
            return self.url(profiles.ensure(admin, self.cfg, name))

    def connect_profile(self, name: str, autocommit: bool = True) -> psycopg.Connection:
        """A session of profile NAME's login role: it is that user (sql/700_kb.sql)."""
        return connect(self.profile_url(name), f"exo-test-{name}", autocommit=autocommit)


def use_embeddings(conn: psycopg.Connection, url: str) -> None:
    """Point models.embeddings at the real MiniLM server at `url` (admin connection), with a query's
    embedding calls given 30 s: the suite's MiniLM shares two cores with the real chat model's
    extraction, and a call past the 3 s default falls back to words alone, so that a test of what
    meaning decides would fail by the machine's load (the timeline's nearest kind did, once)."""
    embeddings = {"url": url, "model": "all-MiniLM-L6-v2", "dimensions": 384}
    conn.execute(
        "update exo_private.settings set value = value || %s where key = 'models.embeddings'",
        (Jsonb(embeddings),),
    )
    conn.execute("update exo_private.settings set value = '30' where key = 'retrieval.embed_timeout_s'")


def server(cfg: Config) -> dict:
    """The admin's host, port, user and password, as pytest-postgresql takes them."""
    params = conninfo_to_dict(admin_url(cfg))
    return {
        "host": params.get("host", "localhost"),
        "port": int(params.get("port", 5432)),
        "user": params.get("user"),
        "password": params.get("password"),
    }


#: Where the template's model settings point: a port nothing listens on, so that a test which
#: sets no models of its own meets none, as on a fresh machine, and never the user's model servers
#: (the defaults, 54330 and 54331), whatever runs beside the suite.
NO_MODEL_URL = "http://127.0.0.1:1/v1"


def template_loader(cfg: Config) -> Callable[..., None]:
    """pytest-postgresql's `load` step for the template: migrate it as `exo migrate` would, but
    without pg_cron jobs (a job's session on the template would stop its cloning; the clones are
    never migrated, so they have none either), and with its models at NO_MODEL_URL."""

    def load(*, dbname: str, **_connection) -> None:
        url = admin_url(cfg, dbname)
        migrate(cfg, url, schedule=False)
        with connect(url, "exo-test-template", autocommit=True) as conn:
            conn.execute(
                "update exo_private.settings set value = value || jsonb_build_object('url', %s::text)"
                " where key in ('models.chat', 'models.embeddings')",
                (NO_MODEL_URL,),
            )

    return load


def admin_connection(cfg: Config) -> psycopg.Connection:
    """The admin, on the server's maintenance database."""
    return connect(admin_url(cfg, "postgres"), "exo-test-admin", autocommit=True)


#: The suite's own server trades durability for speed: every test database is dropped, and each
#: DROP DATABASE forces an immediate checkpoint, which with fsync on writes out every dirty page of
#: every other database (a batch of 200 drops took 18 s quiet, 128 s beside another session's
#: tests; with these off, about a sixth less for the db tier). Nothing the suite asserts depends on
#: a crash-safe disk; a clean shutdown still writes everything.
FAST_SERVER_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def relax_durability(cfg: Config) -> None:
    """Apply FAST_SERVER_SETTINGS to the suite's own server (never to EXO_TEST_DATABASE_URL's)."""
    if cfg.external_url:
        return
    with admin_connection(cfg) as conn:
        for name, value in FAST_SERVER_SETTINGS.items():
            conn.execute(sql.SQL("alter system set {} = {}").format(sql.Identifier(name), sql.Literal(value)))
        conn.execute("select pg_reload_conf()")


#: A database this old on the suite's own server was left by a run that was killed: no run lasts
#: this long.
LEFTOVER_AGE = "6 hours"


def drop_leftovers(cfg: Config) -> list[str]:
    """Drop what killed runs left on the suite's own server (never on EXO_TEST_DATABASE_URL's):
    databases older than LEFTOVER_AGE that were retired (closed to sessions: retire_database) or
    are a session's template. They cost more than disk: test_replicas' base backup copies every
    database (134 such, 2.6 GB, made its replica in 21-31 s). Returns the names dropped."""
    if cfg.external_url:
        return []
    with admin_connection(cfg) as conn:
        # PG_VERSION is written when a database is made, whatever its template.
        found = conn.execute(
            """select datname, datistemplate from pg_catalog.pg_database
               where (not datallowconn and not datistemplate
                      or datistemplate and datname like 'exo\\_test\\_%%\\_tmpl')
                 and (pg_catalog.pg_stat_file(format('base/%%s/PG_VERSION', oid), true)).modification
                     < now() - %s::interval""",
            (LEFTOVER_AGE,),
        ).fetchall()
        for name, is_template in found:
            if is_template:
                conn.execute(sql.SQL("alter database {} is_template false").format(sql.Identifier(name)))
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
    return [name for name, _ in found]


def drop_profile_roles(cfg: Config) -> None:
    """Drop the profiles' login roles the suite made (exo_user_*), on the suite's own server: a
    role still granted a database of another session's goes on (its drop fails and is skipped)."""
    with admin_connection(cfg) as conn:
        for (role,) in conn.execute(
            "select rolname from pg_roles where rolname like 'exo\\_user\\_%'"
        ).fetchall():
            try:
                conn.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))
            except psycopg.errors.DependentObjectsStillExist:
                continue


def _janitor(
    cfg: Config, name: str, template: str | None = None, as_template: bool = False
) -> DatabaseJanitor:
    return DatabaseJanitor(**server(cfg), dbname=name, template_dbname=template, as_template=as_template)


def create_database(cfg: Config, prefix: str, template: str | None = None) -> Database:
    """A new database named `prefix_<random>`, empty or a clone of `template`."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    _janitor(cfg, name, template).init()
    return Database(cfg, name)


def create_template(cfg: Config, name: str, template: Database) -> Database:
    """Database `name`, a clone of `template` that is a template itself (tests use clones of it)."""
    _janitor(cfg, name, template.name, as_template=True).init()
    return Database(cfg, name)


def drop_template(db: Database) -> None:
    """Drop the template `db` (create_template), ending whatever sessions are still connected to it."""
    _janitor(db.cfg, db.name, as_template=True).drop()


@contextmanager
def cloned_database(cfg: Config, template: Database, prefix: str) -> Iterator[Database]:
    """A clone of the migrated template (`prefix_<random>`) with the database's own grants (a
    clone does not inherit them), retired afterwards."""
    db = create_database(cfg, prefix, template=template.name)
    try:
        with db.connect() as conn:
            grant_database_privileges(conn)
        yield db
    finally:
        retire_database(db)


#: Databases the tests are done with, closed to sessions and dropped in batches of this many (a
#: clone is about 16 MB): on ext4 without a journal (as on the CI machines) the kernel skips every
#: inode freed in the last 30 seconds when it makes a file, so a clone made while drops run, one
#: per test, takes 0.6-0.8 s instead of 0.05 s.
RETIRE_BATCH = 200
_retired: list[Database] = []


def retire_database(db: Database) -> None:
    """Unschedule its pg_cron jobs (a test that migrated it made them), end `db`'s sessions and
    refuse new ones now; drop it with the next batch."""
    unschedule_database(admin_url(db.cfg, "postgres"), db.name)
    with admin_connection(db.cfg) as conn:
        conn.execute(
            sql.SQL("alter database {} with allow_connections false").format(sql.Identifier(db.name))
        )
        conn.execute("select pg_terminate_backend(pid) from pg_stat_activity where datname = %s", (db.name,))
    _retired.append(db)
    if len(_retired) >= RETIRE_BATCH:
        drop_retired()


#: Connections that drop a batch at once. A DROP DATABASE returns once every backend on the server
#: has closed its files, which a backend inside a plpython call (a model request of the other
#: process's test) does only when the call returns; drops on several connections wait for the same
#: calls together (20 drops beside a backend in plpython sleeps of 0.5 s: 10.4 s on one connection,
#: 1.5 s on ten).
DROP_CONNECTIONS = 8


def drop_retired() -> None:
    """Drop every retired database (the suite calls it at the end, too)."""
    batch, _retired[:] = _retired[:], []
    drop_databases(batch)


def drop_databases(dbs: list[Database]) -> None:
    """Drop `dbs`, DROP_CONNECTIONS at once."""
    with ThreadPoolExecutor(DROP_CONNECTIONS) as pool:
        list(pool.map(drop_database, dbs))


def drop_database(db: Database) -> None:
    """Drop `db`, ending whatever sessions are still connected to it."""
    _janitor(db.cfg, db.name).drop()


def configure(db: Database, **values) -> None:
    """Change settings of a test database: key (dots as __) -> value, or a dict merged into it."""
    with db.connect() as conn:
        for name, value in values.items():
            key = name.replace("__", ".")
            if isinstance(value, dict):
                conn.execute(
                    "update exo_private.settings set value = value || %s where key = %s", (Jsonb(value), key)
                )
            else:
                conn.execute("update exo_private.settings set value = %s where key = %s", (Jsonb(value), key))
