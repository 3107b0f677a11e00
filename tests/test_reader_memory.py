"""No reader can exhaust the server: every reader backend, and every parallel worker it asks
for, is bounded in memory (sql/065_backend_memory.sql); a trusted role's is not."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from psycopg.types.json import Jsonb

from exocortex.ops import doctor
from exocortex.runtime import local

#: Two strings of 900 MB each, one row at a time: several GB resident in an unbounded backend.
HOG = (
    "select length(string_agg(repeat('x', 1000), '')) a, length(string_agg(repeat('y', 1000), '')) b "
    "from generate_series(1, 900000)"
)
#: What the server log says when a backend's death takes the whole cluster through a restart.
CRASH = re.compile(r"terminated by signal|all server processes terminated|database system was interrupted")


#: The reader sessions open on the server, whichever reader role (exo_reader, each profile's).
READER_SESSIONS = """
select count(*) from pg_stat_activity a
where a.backend_type = 'client backend' and exo_private.is_reader_role(a.usename)
"""


def _reader_sessions_left(db) -> int:
    """How many more reader sessions the login trigger lets in: reader.connection_limit in all."""
    with db.connect() as conn:
        limit = conn.execute("select value from exo_private.settings where key = 'reader.connection_limit'")
        return limit.fetchone()[0] - conn.execute(READER_SESSIONS).fetchone()[0]


def _log_size(cfg) -> int:
    log = cfg.runtime_root / local.LOG_FILE.lstrip("/")
    return log.stat().st_size if log.exists() else 0


def _log_since(cfg, offset: int) -> str:
    log = cfg.runtime_root / local.LOG_FILE.lstrip("/")
    if not log.exists():
        return ""
    with open(log, errors="replace") as f:
        f.seek(offset)
        return f.read()


def _hog(db, role: str = "exo_reader", setup: tuple[str, ...] = ()) -> BaseException | None:
    """Run HOG in a session of `role`; the error it ended with, or None."""
    with db.connect(role) as conn:
        for statement in setup:
            conn.execute(statement)
        try:
            conn.execute(HOG)
        except psycopg.Error as exc:
            return exc
    return None


def test_a_reader_query_past_its_bound_fails_alone(db):
    error = _hog(db)
    assert isinstance(error, psycopg.errors.OutOfMemory), error
    with db.connect("exo_reader") as conn:  # the next session, and this role, go on
        assert conn.execute("select count(*) from exo.workspaces").fetchone()[0] > 0


@pytest.mark.serial  # it takes every reader session the role may open, server-wide: alone
def test_every_reader_connection_at_once_leaves_the_server_up(cfg, db):
    allowed = _reader_sessions_left(db)
    with db.connect() as admin:
        started = admin.execute("select pg_postmaster_start_time()").fetchone()[0]
    log_offset = _log_size(cfg)
    answered: list[float] = []
    done = threading.Event()

    def others_keep_answering() -> None:
        with db.connect("exo_writer") as conn:
            while not done.is_set():
                began = time.monotonic()
                conn.execute("select count(*) from exo_private.documents").fetchone()
                answered.append(time.monotonic() - began)
                time.sleep(0.2)

    watcher = threading.Thread(target=others_keep_answering)
    watcher.start()
    try:
        with ThreadPoolExecutor(allowed) as pool:
            errors = list(pool.map(lambda _i: _hog(db), range(allowed)))
    finally:
        done.set()
        watcher.join()
    assert all(isinstance(e, psycopg.errors.OutOfMemory) for e in errors), {type(e).__name__ for e in errors}
    assert answered and max(answered) < 5
    with db.connect() as admin:
        assert admin.execute("select pg_postmaster_start_time()").fetchone()[0] == started
    if not cfg.external_url:
        assert not CRASH.search(_log_since(cfg, log_offset))


def test_a_parallel_worker_of_a_reader_is_bounded_too(cfg, db):
    if cfg.external_url:
        pytest.skip("the soft limit of processes that never log in is set where the local runtime starts")
    forced = (
        "set debug_parallel_query = on",
        "set max_parallel_workers_per_gather = 8",
        "set max_parallel_workers = 8",
    )
    error = _hog(db, setup=forced)
    assert isinstance(error, psycopg.errors.OutOfMemory), error
    with db.connect("exo_reader") as conn:
        for statement in forced:
            conn.execute(statement)
        plan = "\n".join(r[0] for r in conn.execute("explain " + HOG))
    assert "Gather" in plan  # the query did run in a parallel worker


def test_a_trusted_session_lifts_the_default_bound(db):
    with db.connect("exo_writer") as conn:
        size = conn.execute(
            "select length(string_agg(repeat('x', 1000), '')) from generate_series(1, 400000)"
        )
        assert size.fetchone()[0] == 400_000_000


def test_a_setting_that_is_not_a_size_bounds_readers_by_the_default(db):
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('reader.backend_memory', %s)", (Jsonb("plenty"),))
    assert isinstance(_hog(db), psycopg.errors.OutOfMemory)
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('reader.backend_memory', %s)", (Jsonb("2GB"),))
    with db.connect("exo_reader") as conn:  # 2GB: the first string (900 MB) fits
        size = conn.execute(
            "select length(string_agg(repeat('x', 1000), '')) from generate_series(1, 300000)"
        )
        assert size.fetchone()[0] == 300_000_000


@pytest.mark.serial  # it counts every reader session on the server, another process's too: alone
def test_reader_sessions_of_every_profile_together_stop_at_the_limit(db):
    """Profiles add login roles, not memory: past reader.connection_limit reader sessions in
    all, whichever roles they are, a reader's login is refused; a trusted role's is not."""
    db.connect_profile("mara").close()  # the profile and its role
    with db.connect() as conn:
        limit = conn.execute(READER_SESSIONS).fetchone()[0] + 3  # three more than are open now
        conn.execute("select exo_private.set_setting('reader.connection_limit', %s)", (Jsonb(limit),))
    sessions = [db.connect("exo_reader"), db.connect_profile("mara"), db.connect("exo_reader")]
    try:
        # A refused login is an OperationalError in psycopg, whatever its SQLSTATE (53300).
        with pytest.raises(psycopg.OperationalError, match=rf"too many reader sessions: .* is {limit}\b"):
            db.connect_profile("mara")
        with pytest.raises(psycopg.OperationalError, match="too many reader sessions"):
            db.connect("exo_reader")
        with db.connect("exo_writer") as writer:
            assert writer.execute("select 1").fetchone() == (1,)
        sessions.pop().close()
        with db.connect_profile("mara") as conn:  # one closed: one more comes in
            assert conn.execute("select exo.profile()").fetchone()[0] == "mara"
    finally:
        for conn in sessions:
            conn.close()


def test_a_connection_limit_that_is_not_a_number_still_lets_readers_in(db):
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('reader.connection_limit', %s)", (Jsonb("lots"),))
    with db.connect("exo_reader") as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def test_doctor_budgets_the_readers_by_the_total_not_by_the_profiles(db):
    for name in ("p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10"):
        db.profile_url(name)  # ten profiles: ten roles of 8 connections each
    with db.connect() as conn:
        _server, bound, connections = conn.execute(doctor.SERVER_MEMORY).fetchone()
    assert (bound, connections) == (256 * 1024**2, 32)
