"""Test harness: one real server, one migrated template, a fresh database per test.

The server is the suite's own (support/runtime.py): its own EXO_HOME, data directory and
port, never the user's memory. The session brings it up exactly as `exo db up` does (or
uses EXO_TEST_DATABASE_URL). pytest-postgresql's `postgresql_noproc` points at it and its
`load` step migrates a template database once; every test that asks for `db` gets
a clone of it (`create database ... template`), dropped afterwards. Tests run
against committed data on the real server, so pg_cron, NOTIFY and queue
visibility behave as in production. The helpers live in tests/support/.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pytest_postgresql import factories
from support import shared
from support.db import (
    Database,
    cloned_database,
    create_database,
    drop_leftovers,
    drop_profile_roles,
    drop_retired,
    relax_durability,
    retire_database,
    server,
    template_loader,
)
from support.models import RealModels, real_models
from support.runtime import ServerMark, first_mark, isolate, seed_root

from exocortex.config import Config
from exocortex.db import admin_url
from exocortex.ops.migrate import migrate
from exocortex.runtime import server as runtime_server

# Before anything reads the environment: the user's config, and the suite's own.
USER_CFG, CFG = isolate(os.environ)
#: The user's server as found before the first test (None: not running), by the first of the runs
#: make test-fast makes; the last test checks it.
USER_SERVER = first_mark(USER_CFG)
# The template is `exo_test_<pid>_tmpl`: sessions that run at once on one server keep apart.
exo_postgresql = factories.postgresql_noproc(
    **server(CFG), dbname=f"exo_test_{os.getpid()}", load=[template_loader(CFG)]
)


@pytest.fixture(scope="session")
def cfg() -> Iterator[Config]:
    """The suite's server, up (without crash safety: support/db.py, FAST_SERVER_SETTINGS), rid of
    what killed runs left on it (drop_leftovers), with its main database migrated as `make setup`
    leaves the user's; the profiles' login roles the tests made are dropped at the end."""
    runtime_server.up(CFG, progress=lambda _message: None, seed=seed_root(USER_CFG))
    relax_durability(CFG)
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":  # once a run
        drop_leftovers(CFG)
    migrate(CFG, admin_url(CFG))
    yield CFG
    drop_retired()
    drop_profile_roles(CFG)


@pytest.fixture(scope="session")
def user_cfg() -> Config:
    """The user's config: the suite only ever reads it."""
    return USER_CFG


@pytest.fixture(scope="session")
def user_server() -> ServerMark | None:
    return USER_SERVER


def tier(item: pytest.Item) -> str:
    """A test's tier, from what it asks for: e2e runs the real local models (the real_models
    fixture, or a mark for a test that starts them itself), db the suite's server (every server
    fixture depends on cfg), unit neither. `make test-fast` runs unit and db."""
    if item.get_closest_marker("e2e") or "real_models" in item.fixturenames:
        return "e2e"
    return "db" if "cfg" in item.fixturenames else "unit"


#: Set by `make test` (Makefile, suite) for its parallel part: the file in which it notes the test
#: files that hold serial tests, so that the serial part collects those alone (collecting every
#: file, each module imported and its asserts rewritten, took that part 14.5 s against 4.4 s).
SERIAL_FILES = "EXO_TEST_SERIAL_FILES"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test gets its tier's mark; the files that run the real models come first, then those
    with property tests (hypothesis: many examples a test), so that the two processes of `make
    test` (one file each at a time, in this order: the Makefile turns off xdist's own, by test
    count, which put test_evaluate's one long test 70th of 121 files and the deference
    properties' 113th) start their longest work early rather than one of them last, alone; within
    each, the files with the most tests first, so that the run ends on small ones. The check that
    the user's server was left alone runs after every other test. Before any is deselected, the
    files of the serial tests are noted (SERIAL_FILES)."""
    if noted := os.environ.get(SERIAL_FILES):
        files = sorted({item.nodeid.split("::")[0] for item in items if item.get_closest_marker("serial")})
        partial = Path(f"{noted}.{os.getpid()}")  # both processes note it: each in one step
        partial.write_text("".join(f"{file}\n" for file in files))
        partial.replace(noted)
    e2e, properties = set(), set()
    for item in items:
        item.add_marker(tier(item))
        if tier(item) == "e2e":
            e2e.add(item.path)
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            properties.add(item.path)
    tests = Counter(item.path for item in items)
    # stable: each file's tests stay together
    items.sort(key=lambda item: (item.path not in e2e, item.path not in properties, -tests[item.path]))
    last = [item for item in items if item.module.__name__ == "test_live_memory"]
    items[:] = [item for item in items if item not in last] + last


@pytest.fixture(scope="session")
def template_db(cfg: Config, request: pytest.FixtureRequest) -> Database:
    """The migrated template; the server is up (cfg) before pytest-postgresql makes it."""
    return Database(cfg, request.getfixturevalue("exo_postgresql").template_dbname)


@pytest.fixture
def db(cfg: Config, template_db: Database) -> Iterator[Database]:
    """A migrated database of this test's own."""
    with cloned_database(cfg, template_db, "exo_test") as db:
        yield db


@pytest.fixture
def empty_db(cfg: Config) -> Iterator[Database]:
    """An empty database, for tests of migrating from zero."""
    db = create_database(cfg, "exo_empty")
    try:
        yield db
    finally:
        retire_database(db)


def pytest_configure(config: pytest.Config) -> None:
    """The run's first process names the folder of what its processes share (support/shared.py:
    the real models, the example vault's databases)."""
    if not hasattr(config, "workerinput"):
        shared.share()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's first process stops its real models and drops its shared databases once every
    process is done."""
    if not hasattr(config, "workerinput"):
        shared.end(CFG)


@pytest.fixture(scope="session", name="real_models")
def real_models_fixture(cfg: Config) -> RealModels:
    """The real local models (Gemma 3 270M in llama-server, MiniLM), on ports of the run's own,
    shared by its processes."""
    return real_models(cfg)


@pytest.fixture(scope="module")
def reader(corpus: Database) -> Iterator[psycopg.Connection]:
    """exo_reader on the module's `corpus` (a Database the module's own fixture builds, as
    support/memory.embedded_memory does); a module with a reader of its own overrides this one."""
    with corpus.connect("exo_reader") as conn:
        yield conn
