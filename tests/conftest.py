"""Test harness: one real server, one migrated template, a fresh database per test.

The session brings the server up exactly as `exo db up` does (or uses
EXO_DATABASE_URL), migrates a template database once, and every test that asks
for `db` gets `create database ... template` of it, dropped afterwards. Tests run
against committed data on the real server, so pg_cron, NOTIFY and queue
visibility behave as in production.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from exocortex import config
from exocortex.config import Config
from exocortex.db import ADMIN, admin_url, connect, role_url
from exocortex.migrate import grant_database_privileges, migrate
from exocortex.models import services
from exocortex.plpy.model_client import Endpoint
from exocortex.runtime import server

CHAT_MODEL = "gemma-3-270m-q4_k_m"
EMBEDDING_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Database:
    """A database on the test server, with URLs and connections for each role."""

    cfg: Config
    name: str

    def url(self, role: str = ADMIN) -> str:
        return role_url(self.cfg, role, self.name)

    def connect(self, role: str = ADMIN, autocommit: bool = True) -> psycopg.Connection:
        return connect(self.url(role), f"exo-test-{role}", autocommit=autocommit)


def _admin(cfg: Config) -> psycopg.Connection:
    return connect(admin_url(cfg, "postgres"), "exo-test-admin", autocommit=True)


def create_database(cfg: Config, prefix: str, template: str | None = None) -> Database:
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    statement = sql.SQL("create database {}").format(sql.Identifier(name))
    if template:
        statement += sql.SQL(" template {}").format(sql.Identifier(template))
    with _admin(cfg) as conn:
        conn.execute(statement)
    return Database(cfg, name)


def drop_database(db: Database) -> None:
    with _admin(db.cfg) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(db.name)))


@pytest.fixture(scope="session")
def cfg() -> Config:
    cfg = config.load()
    server.up(cfg, progress=lambda _message: None)
    return cfg


@pytest.fixture(scope="session")
def template_db(cfg: Config) -> Iterator[Database]:
    db = create_database(cfg, f"exo_template_{os.getpid()}")
    try:
        migrate(cfg, db.url())
        yield db
    finally:
        drop_database(db)


@pytest.fixture
def db(cfg: Config, template_db: Database) -> Iterator[Database]:
    """A migrated database of this test's own."""
    db = create_database(cfg, "exo_test", template=template_db.name)
    with db.connect() as conn:  # a clone does not inherit the database's own ACL
        grant_database_privileges(conn)
    try:
        yield db
    finally:
        drop_database(db)


@pytest.fixture
def empty_db(cfg: Config) -> Iterator[Database]:
    """An empty database, for tests of migrating from zero."""
    db = create_database(cfg, "exo_empty")
    try:
        yield db
    finally:
        drop_database(db)


def free_ports(n: int = 1) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass(frozen=True)
class RealModels:
    """The real local models (Gemma 3 270M in llama-server, MiniLM), on ports of the test session's own."""

    chat: Endpoint
    embeddings: Endpoint
    run_dir: Path


@pytest.fixture(scope="session")
def real_models(cfg: Config, tmp_path_factory) -> Iterator[RealModels]:
    run_dir = tmp_path_factory.mktemp("models")
    chat_port, embed_port = free_ports(2)
    try:
        with ThreadPoolExecutor(2) as pool:  # both load at once
            chat = pool.submit(services.start_chat, cfg, chat_port, CHAT_MODEL, run_dir=run_dir)
            embeddings = pool.submit(services.start_embeddings, cfg, embed_port, run_dir=run_dir)
            chat.result(), embeddings.result()
        yield RealModels(
            Endpoint(f"http://127.0.0.1:{chat_port}/v1", CHAT_MODEL, 120.0, {}),
            Endpoint(f"http://127.0.0.1:{embed_port}/v1", EMBEDDING_MODEL, 30.0, {"dimensions": 384}),
            run_dir,
        )
    finally:
        services.down(cfg, run_dir=run_dir)
