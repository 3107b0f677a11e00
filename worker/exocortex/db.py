"""Connections: role passwords, URLs for each role, and connecting with a name.

Roles:
  admin       the server's superuser (local runtime) or EXO_DATABASE_URL's user;
              creates extensions and roles, runs the migrator's privileged steps
  exo_owner   owns the schema; migrations run as it
  exo_writer  ingest and worker
  exo_reader  agents and MCP; may only use the exo API, with session limits from the
              settings table (migrate.set_reader_limits) and CONNECT on this database only
  exo_user_NAME  one login role per profile (exo user add NAME), a member of exo_reader:
              a session of it is that profile (sql/700_kb.sql); its password is kept with
              the others (save_secret)
  exo_replicator  REPLICATION only: what replicas stream as (runtime/replicas.py), its
              password kept with the others
Nobody logs in as exo_api (owns the exo API, may only read) or exo_graph (runs a caller's
Cypher, may only read the graphs); see migrate.INTERNAL_ROLES.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg
from pgvector.psycopg import register_vector as _register_pgvector
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import ExecStatus, TransactionStatus
from psycopg.types import TypeInfo

from exocortex.config import Config

ROLES = ("exo_owner", "exo_writer", "exo_reader")
ADMIN = "admin"


def load_secrets(cfg: Config) -> dict[str, str]:
    """Passwords for the admin and the exo roles, generated once, kept 0600 in EXO_HOME.

    Never written into the checkout. Created with O_EXCL so that two processes
    starting at once agree on one file.
    """
    path = cfg.secrets_file
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        generated = {name: secrets.token_urlsafe(24) for name in (ADMIN, *ROLES)}
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as f:
                json.dump(generated, f, indent=2)
    return _read_secrets(path)


def _read_secrets(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise SystemExit(f"{path} is not valid JSON ({exc}); delete it to regenerate") from None
    missing = [name for name in (ADMIN, *ROLES) if name not in data]
    if missing:
        raise SystemExit(f"{path} lacks passwords for {', '.join(missing)}; delete it to regenerate")
    return data


def save_secret(cfg: Config, role: str, password: str) -> None:
    """Keep a profile role's password with the others (0600), replacing the file whole under a lock."""
    path = cfg.secrets_file
    load_secrets(cfg)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = _read_secrets(path) | {role: password}
        partial = path.with_suffix(".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2)
        partial.replace(path)


def admin_url(cfg: Config, dbname: str | None = None) -> str:
    if cfg.external_url:
        base = cfg.external_url
    else:
        base = make_conninfo(
            host="127.0.0.1",
            port=cfg.port,
            user="postgres",
            password=load_secrets(cfg)[ADMIN],
            dbname=cfg.database,
        )
    return make_conninfo(base, dbname=dbname) if dbname else base


def role_url(cfg: Config, role: str, dbname: str | None = None) -> str:
    """The URL for one of the exo roles, or a profile's (exo_user_*), on the same server and
    database as the admin URL; exo_writer's is EXO_WRITER_URL when that is set."""
    if role == ADMIN:
        return admin_url(cfg, dbname)
    if role == "exo_writer" and cfg.writer_url:  # a worker on another host
        return make_conninfo(cfg.writer_url, dbname=dbname) if dbname else cfg.writer_url
    known = load_secrets(cfg)
    if role not in ROLES and not (role.startswith("exo_user_") and role in known):
        raise ValueError(
            f"unknown role {role!r}; expected one of {', '.join((ADMIN, *ROLES))} or a profile's "
            f"(exo user add NAME)"
        )
    return make_conninfo(admin_url(cfg, dbname), user=role, password=known[role])


def database_of(url: str) -> str:
    return conninfo_to_dict(url).get("dbname") or "postgres"


def as_uri(url: str) -> str:
    """A postgresql:// URI for a conninfo, for tools that only take URIs."""
    d = conninfo_to_dict(url)
    auth = quote(d.get("user", ""), safe="")
    if d.get("password"):
        auth += ":" + quote(d["password"], safe="")
    host = d.get("host", "127.0.0.1")
    port = d.get("port", "5432")
    extra = {k: v for k, v in d.items() if k not in {"user", "password", "host", "port", "dbname"}}
    query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in extra.items())
    uri = f"postgresql://{auth}@{host}:{port}/{quote(d.get('dbname', ''), safe='')}"
    return f"{uri}?{query}" if query else uri


def connect(url: str, application_name: str, **kwargs) -> psycopg.Connection:
    """Connect with an application_name, so pg_stat_activity tells who is who."""
    return psycopg.connect(url, application_name=application_name, **kwargs)


#: What transaction() runs prepared, each prepared by the session while its transactions are sound.
_BLOCK_STATEMENTS = {b"exo_begin": b"BEGIN", b"exo_rollback": b"ROLLBACK"}
_PREPARED: weakref.WeakSet[psycopg.Connection] = weakref.WeakSet()


@contextmanager
def transaction(conn: psycopg.Connection) -> Iterator[None]:
    """A transaction block on an autocommit connection (conn.transaction() without savepoints)
    whose ROLLBACK, after an error, needs no parse analysis: it is a statement the session
    prepared while its transactions were sound.

    A ROLLBACK sent as text is parse-analysed, and Apache AGE 1.8's parse hook looks pg_extension
    up whenever its cache of "is AGE installed" was invalidated (a relcache reset, which a burst of
    DDL elsewhere brings to a session that was busy, such as a cancelled search): inside the
    aborted transaction that lookup fails, "ResourceOwnerEnlarge called after release started",
    on every ROLLBACK, and the catalog locks it took are left so that new sessions can fail
    ("failed to re-find shared lock object").

    psycopg sends DEALLOCATE ALL after a DROP or a rollback when it had prepared statements of its
    own: the BEGIN finds the block's statements gone and prepares them again; a block that lost
    them on the way rolls back as text. Inside a transaction already (a nested block), or on a
    connection that is not autocommit, it is conn.transaction() itself."""
    if not conn.autocommit or conn.info.transaction_status != TransactionStatus.IDLE:
        with conn.transaction():
            yield
        return
    if conn not in _PREPARED:
        _prepare(conn)
    if _run(conn, b"exo_begin").status != ExecStatus.COMMAND_OK:
        _prepare(conn)
        _check(conn, _run(conn, b"exo_begin"))
    try:
        yield
    except BaseException:
        _roll_back(conn)
        raise
    if conn.info.transaction_status == TransactionStatus.INERROR:
        _roll_back(conn)  # what COMMIT would do there
    else:
        conn.execute("commit")


def _prepare(conn: psycopg.Connection) -> None:
    for name, statement in _BLOCK_STATEMENTS.items():
        with conn.lock:
            prepared = conn.pgconn.prepare(name, statement)
        _check(conn, prepared)
    _PREPARED.add(conn)


def _run(conn: psycopg.Connection, name: bytes) -> psycopg.pq.abc.PGresult:
    with conn.lock:
        return conn.pgconn.exec_prepared(name, [])


def _check(conn: psycopg.Connection, result: psycopg.pq.abc.PGresult) -> None:
    if result.status != ExecStatus.COMMAND_OK:
        raise psycopg.errors.error_from_result(result, encoding=conn.info.encoding)


def _roll_back(conn: psycopg.Connection) -> None:
    if conn.info.transaction_status not in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
        return
    if _run(conn, b"exo_rollback").status != ExecStatus.COMMAND_OK:
        conn.rollback()  # the statement went with a DEALLOCATE ALL inside the block


def writer(cfg: Config, application_name: str) -> psycopg.Connection:
    """An autocommit session as exo_writer: what the CLI's write commands and the eval use."""
    return connect(role_url(cfg, "exo_writer"), application_name, autocommit=True)


def register_vector(conn: psycopg.Connection) -> bool:
    """pgvector's psycopg adapter on conn: a pgvector.Vector crosses as vector, both ways.

    Only where the connection sees the vector type (exo_reader, without USAGE on the
    extension's schema, does not): False there, and nothing is registered.
    """
    if TypeInfo.fetch(conn, "vector") is None:
        return False
    _register_pgvector(conn)
    return True
