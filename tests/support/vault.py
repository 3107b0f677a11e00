"""The example vault in a database of a test module's own, with a small known graph.

Used by the modules that ask questions of the vault (search, MCP, retrievers). The
graph is merged by hand, not extracted (the extraction model is tested in
test_worker): Iris Calder in two workspaces (two entities), with Northwind Labs and
Tomas Okafor near her in technical. Walter Rivera is a deferred subject.

A run loads the vault once of each kind, plain and embedded, into a database of the run's
(support/shared.py), and each module gets a clone of it; a module that prepares the database
before the ingest loads one of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
from psycopg.types.json import Jsonb

from exocortex.config import Config
from exocortex.ingest import pipeline
from exocortex.ops.migrate import grant_database_privileges

from . import REPO_ROOT
from .db import Database, cloned_database, create_database, retire_database
from .graph import merge, org, person, rel
from .shared import shared_database

EXAMPLES = REPO_ROOT / "examples"
VAULT = EXAMPLES / "vault"

Prepare = Callable[[psycopg.Connection], None]


def _load(cfg: Config, db: Database, prepare: Prepare | None) -> None:
    """The vault into `db`, a clone of the migrated template: its grants, `prepare(admin
    connection)`, Walter Rivera deferred, the ingest, the graph."""
    with db.connect() as conn:
        grant_database_privileges(conn)
        if prepare:
            prepare(conn)
        conn.execute("select exo_private.defer_subject('Walter Rivera', array['Grandpa Walter', 'Grandpa'])")
    pipeline.ingest(cfg, VAULT, dbname=db.name)
    with db.connect("exo_writer") as conn:
        merge_graph(conn)


@contextmanager
def _vault(
    cfg: Config, template: Database, prefix: str, key: str, load: Callable[[Database], None], own: bool
) -> Iterator[Database]:
    """A database of the module's own holding what `load` puts into a clone of `template`: a clone
    of the run's database `key`, or, `own`, loaded here."""
    if own:
        db = create_database(cfg, prefix, template=template.name)
        try:
            load(db)
            yield db
        finally:
            retire_database(db)
        return
    with cloned_database(cfg, shared_database(cfg, key, template, load), prefix) as db:
        yield db


@contextmanager
def vault_database(
    cfg: Config, template: Database, prefix: str, prepare: Prepare | None = None
) -> Iterator[Database]:
    """A database holding the example vault; `prepare(admin connection)` runs before the ingest."""
    with _vault(
        cfg, template, prefix, "vault", lambda db: _load(cfg, db, prepare), own=prepare is not None
    ) as db:
        yield db


@contextmanager
def embedded_vault(
    cfg: Config,
    template: Database,
    prefix: str,
    embeddings_url: str,
    prepare: Prepare | None = None,
    own: bool = False,
) -> Iterator[Database]:
    """vault_database with MiniLM at `embeddings_url` as its embeddings model and every chunk
    embedded; `prepare(admin connection)` runs before the ingest. `own`: loaded here, never a clone
    of the run's, for a database a standby replays: a clone is made by `create database ...
    template` (WAL_LOG), which logs pages without the part of them where pg_textsearch keeps some
    of its data, and exo.search of such a clone crashed a standby's backend (signal 11;
    exo db copy uses FILE_COPY: runtime/server.py copy_database)."""
    from exocortex.worker.loop import Worker  # the worker's imports are heavy: only when asked

    embeddings = {"url": embeddings_url, "model": "all-MiniLM-L6-v2", "dimensions": 384, "timeout_s": 30}

    def configure(conn: psycopg.Connection) -> None:
        conn.execute(
            "update exo_private.settings set value = %s where key = 'models.embeddings'", (Jsonb(embeddings),)
        )
        if prepare:
            prepare(conn)

    def load(db: Database) -> None:
        _load(cfg, db, configure)
        Worker(cfg, dbname=db.name, once=True, queues=["embed"], poll_s=0.05).run()

    key = f"vault_embedded_{urlsplit(embeddings_url).port}"  # one run's models: one port
    with _vault(cfg, template, prefix, key, load, own=own or prepare is not None) as db:
        yield db


def _windows(conn: psycopg.Connection, workspace: str, text: str) -> list[int]:
    return [
        r[0]
        for r in conn.execute(
            "select id from exo_private.extraction_windows where workspace = %s and body ilike %s order by id",
            (workspace, f"%{text}%"),
        )
    ]


def merge_graph(conn: psycopg.Connection) -> None:
    """Iris Calder in two workspaces (two entities), Northwind Labs and Tomas Okafor near her."""
    for window in _windows(conn, "technical", "Iris Calder"):
        merge(
            conn,
            window,
            [person("Iris Calder"), org("Northwind Labs"), person("Tomas Okafor")],
            [
                rel("Iris Calder", "works at", "Northwind Labs"),
                rel("Tomas Okafor", "works at", "Northwind Labs"),
            ],
        )
    for window in _windows(conn, "technical", "Tomas"):
        merge(conn, window, [person("Tomas Okafor")])
    for window in _windows(conn, "creative", "Iris Calder"):
        merge(conn, window, [person("Iris Calder")])
