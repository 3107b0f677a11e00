"""Read routing: which server answers a Reader's call, a hot standby or the primary.

A Reader may name replicas: reader URLs of hot standbys of its server (EXO_READER_URLS, as
`exo db url --role reader --replicas` prints them). A read goes to a replica that answers, is a
standby that receives WAL, and has replayed to within the lag bound (the Reader's max_lag_s,
else the setting replicas.max_lag_s that the standby holds), the replicas taken in turn; when
none is, to the primary (the Reader's url). A call that writes (a profile's kb actions) goes to
the primary. A replica that cannot be reached is passed over for DOWN_S, one too far behind for
LAGGING_S; a replica that fails in the middle of a read (stopped, or a conflict with recovery
cancelled it) fails nothing: the read runs again on the primary.

The lag of a standby, LAG, is the one the CLI shows (exocortex.runtime.replicas.listing): 0 when
it has replayed all the WAL it has received, else the age of the last transaction it replayed.
A standby with no walreceiver (its primary unreachable, or promoted) has nothing recent to say
and is passed over.

A Reader connects to each replica as it connects to the primary, with its own role (a profile's
login role included: a standby's roles and passwords are the primary's) and database, at the host
and port of the replica's URL.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

log = logging.getLogger("exocortex.client.routing")

#: What a report's served_by says of the Reader's own server.
PRIMARY = "primary"
#: The lag bound when a Reader gives none and the standby has no replicas.max_lag_s setting.
DEFAULT_MAX_LAG_S = 30.0
MAX_LAG_SETTING = "replicas.max_lag_s"
#: How long a replica that could not be reached, or was too far behind, is passed over.
DOWN_S = 5.0
LAGGING_S = 1.0
#: How long a read waits for a replica's pooled connection before connecting directly.
REPLICA_POOL_WAIT_S = 0.25

#: On a server: whether it is a standby, how far behind it is (seconds), and whether a
#: walreceiver streams to it. Readable by every role (exo_reader included), in any database.
LAG = """
select pg_catalog.pg_is_in_recovery() as standby,
       case when not pg_catalog.pg_is_in_recovery() then null
            -- The receiver may restart below what replay reached (streaming resumes at a segment's
            -- start), and a standby that has replayed no commit since it started has no timestamp.
            when coalesce(pg_catalog.pg_last_wal_receive_lsn() <= pg_catalog.pg_last_wal_replay_lsn(), true)
            then 0::float8
            else coalesce(extract(epoch from pg_catalog.now() - pg_catalog.pg_last_xact_replay_timestamp())::float8,
                          'infinity') end as lag_s,
       exists (select 1 from pg_catalog.pg_stat_wal_receiver) as receiving
"""
#: LAG with the lag bound the memory's settings hold, in the memory's database.
BOUND = f"""(select (s.value #>> '{{}}')::float8 from exo.settings s
             where s.key = '{MAX_LAG_SETTING}' and jsonb_typeof(s.value) = 'number')"""
LAG_AND_BOUND = f"{LAG}, {BOUND} as max_lag_s"

T = TypeVar("T")


def unfit(lag: dict[str, Any], max_lag_s: float | None) -> str | None:
    """Why a server whose LAG row this is should not answer reads for the primary; None: it may."""
    bound = max_lag_s if max_lag_s is not None else lag.get("max_lag_s") or DEFAULT_MAX_LAG_S
    if not lag["standby"]:
        return "not a standby (promoted?): its data has left the primary's"
    if not lag["receiving"]:
        return "receives no WAL from the primary"
    if lag["lag_s"] > bound:
        return f"{lag['lag_s']:.1f} s behind, past the bound of {bound:g} s"
    return None


def address(url: str) -> str:
    """HOST:PORT of a URL, the name of a replica that has none."""
    params = conninfo_to_dict(url)
    return f"{params.get('host', 'localhost')}:{params.get('port', '5432')}"


def named(urls: Iterable[str], names: dict[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """(name, url) for each URL: its name in `names` (by HOST:PORT), else its HOST:PORT."""
    names = names or {}
    return tuple((names.get(address(url), address(url)), url) for url in urls)


@dataclass
class Route:
    """One replica: where it is, its pool (a pooled Reader's), until when it is passed over and why."""

    name: str
    url: str = field(repr=False)
    pool: ConnectionPool | None = field(default=None, repr=False)
    skip_until: float = 0.0
    why: str | None = None


class Routes:
    """The replicas of one Reader, and what it has learnt of them; shared by the threads that use it."""

    def __init__(self, replicas: list[Route]):
        self.replicas = replicas
        self.turn = itertools.count()
        self.lock = threading.Lock()

    @classmethod
    def of(cls, reader_url: str, replicas: Sequence[tuple[str, str]]) -> Routes:
        """The Reader reaches each replica as it reaches the primary (its role, password and
        database): reader_url at the replica URL's host and port."""
        routes = []
        for name, url in replicas:
            params = conninfo_to_dict(url)
            routes.append(
                Route(name, make_conninfo(reader_url, host=params.get("host"), port=params.get("port")))
            )
        return cls(routes)

    def pooled(self, make_pool: Callable[[str, str], ConnectionPool]) -> Routes:
        return Routes([Route(r.name, r.url, make_pool(r.url, r.name)) for r in self.replicas])

    def close(self) -> None:
        for route in self.replicas:
            if route.pool is not None:
                route.pool.close()

    def candidates(self) -> list[Route]:
        """The replicas not passed over now, starting from the next in turn."""
        now = time.monotonic()
        with self.lock:
            start = next(self.turn) if self.replicas else 0
        n = len(self.replicas)
        ordered = [self.replicas[(start + i) % n] for i in range(n)]
        return [r for r in ordered if r.skip_until <= now]

    def pass_over(self, route: Route, why: str, seconds: float) -> None:
        route.skip_until, route.why = time.monotonic() + seconds, why
        log.info("replica %s passed over for %.0f s: %s", route.name, seconds, why)

    def passed_over(self, since: float) -> dict[str, str]:
        """Each replica passed over by a call that began at `since` (time.monotonic()), and why."""
        return {r.name: r.why for r in self.replicas if r.skip_until > since and r.why}


def _borrow(route: Route, connect: Callable[[str], psycopg.Connection]) -> tuple[psycopg.Connection, bool]:
    """A connection to the replica: (pooled one, True) or (a new one, False)."""
    if route.pool is not None:
        try:
            return route.pool.getconn(timeout=REPLICA_POOL_WAIT_S), True
        except PoolTimeout:
            pass
    return connect(route.url), False


def _give_back(route: Route, conn: psycopg.Connection, pooled: bool) -> None:
    if pooled:
        route.pool.putconn(conn)  # type: ignore[union-attr]
        if conn.closed:
            route.pool.check()  # type: ignore[union-attr]
    else:
        conn.close()


def on_replica(
    routes: Routes,
    max_lag_s: float | None,
    connect: Callable[[str], psycopg.Connection],
    work: Callable[[psycopg.Connection], T],
) -> tuple[T, str] | None:
    """`work` on the first fit replica: (its answer, the replica's name); None when no replica is fit
    or each that was failed the read, for the caller to run it on the primary."""
    for route in routes.candidates():
        try:
            conn, pooled = _borrow(route, connect)
        except psycopg.OperationalError as exc:
            routes.pass_over(route, f"unreachable: {str(exc).strip().splitlines()[-1]}", DOWN_S)
            continue
        try:
            with conn.cursor(row_factory=dict_row) as cursor:
                why = unfit(cursor.execute(LAG_AND_BOUND).fetchone(), max_lag_s)
            if why is not None:
                routes.pass_over(route, why, LAGGING_S)
                continue
            return work(conn), route.name
        except psycopg.errors.QueryCanceled:
            raise  # the statement timeout: the primary would take as long
        except psycopg.OperationalError as exc:
            # Stopped under the read, or a conflict with recovery cancelled it: the primary answers.
            routes.pass_over(route, f"failed a read: {str(exc).strip().splitlines()[0]}", DOWN_S)
        finally:
            _give_back(route, conn, pooled)
    return None
