"""The exo SQL API from Python: what the query CLI, the MCP server and the retrievers call.

Every function here is one call of one `exo` SQL function as the read-only role, with
`default_transaction_read_only` on and a statement timeout. There is no logic here that
the SQL function does not have: psql users get the same answers.

A Reader of a profile (`Reader.for_profile`, EXO_PROFILE) connects as that profile's login role:
its searches run the personal stage and are recorded in its base, and its kb calls act on its
base; the profile is the session's, never an argument (docs/security.md).

A Reader connects per call, or, once `pooled()` (the MCP server, a long-lived agent),
borrows from a small pool of connections whose plpython sessions are already warm. A
pooled connection that fails is discarded with the idle ones that died with it, so a
database restart fails at most the one call that met it; while the database is down a
call fails with the reason (unreachable, refusing connections), never a bare pool timeout.

A Reader with replicas (EXO_READER_URLS) sends each read to a hot standby within the lag bound,
else to the primary (exocortex.client.routing), and a search's report says which answered
(served_by). A profile's search on a standby answers unrecorded there; its record is then written
on the primary (exo.kb_record_use), and the report says so (personal.deferred).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, TypeVar

import psycopg
from psycopg import sql as pgsql
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from exocortex import config
from exocortex.client import routing, search_options
from exocortex.db import role_url, transaction
from exocortex.ops import profiles

log = logging.getLogger("exocortex.client.api")
T = TypeVar("T")

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_POOL_SIZE = 4
#: How long a call waits for a pooled connection before it opens one of its own (and so
#: meets the real error, when the database is down or refusing connections).
POOL_WAIT_S = 2.0

#: The warm-up a new pooled connection runs: one search, so plpython3u starts and the search
#: code compiles and prepares its plans before a caller waits on them. It hits no model: the
#: query vector is given (uniform, of the embeddings setting's dimensions), so the query
#: embedding is never fetched; with no embeddings setting the semantic stage cannot run.
WARM_UP = """select exo.search_json('exocortex', k => 1, per_workspace => 1, query_embedding => (
    select array_fill(1::float8, array[(s.value ->> 'dimensions')::int])
    from exo.settings s where s.key = 'models.embeddings' and s.value ? 'dimensions'))"""


#: The server that answered this context's last read (Reader.run sets it): for a caller whose answer
#: has no report to say it in (the MCP server's tools that answer rows).
SERVED_BY: contextvars.ContextVar[str | None] = contextvars.ContextVar("exo_served_by", default=None)


@dataclass(frozen=True)
class Reader:
    """Where and how to reach the exo API read-only; with `pool`, through a pool of connections."""

    url: str = field(repr=False)  # it holds the password
    statement_timeout_ms: int = DEFAULT_TIMEOUT_MS
    application_name: str = "exo-api"
    pool: ConnectionPool | None = field(default=None, repr=False, compare=False)
    profile: str | None = None
    """The profile whose login role `url` is (exo.profile() is the session's own word): its
    searches run in read-write transactions, so that the session records them."""
    replicas: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """(name, reader URL) of each hot standby of url's server that may answer reads (routing.py)."""
    max_lag_s: float | None = None
    """How far behind (seconds) a replica may be and answer; None: its setting replicas.max_lag_s."""
    routes: routing.Routes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.routes is None:
            object.__setattr__(self, "routes", routing.Routes.of(self.url, self.replicas))

    @classmethod
    def from_config(cls, cfg: config.Config | None = None, profile: str | None = None, **kw: Any) -> Reader:
        """The reader of the configuration: EXO_READER_URL, else exo_reader on the local runtime
        (its password from the secrets file). With a profile (the argument, else EXO_PROFILE) the
        session is that user's login role: EXO_READER_URL is then that role's URL, else the local
        runtime's (exocortex.ops.profiles.url)."""
        cfg = cfg or config.load()
        profile = profile if profile is not None else cfg.profile
        kw.setdefault("replicas", routing.named(cfg.reader_urls, _replica_names(cfg)))
        if profile is None:
            return cls(cfg.reader_url or role_url(cfg, "exo_reader"), **kw)
        return cls(cfg.reader_url or profiles.url(cfg, profile), profile=profile, **kw)

    @classmethod
    def for_profile(cls, name: str, cfg: config.Config | None = None, **kw: Any) -> Reader:
        """Profile NAME's login role on the local runtime (exocortex.ops.profiles.url), and EXO_READER_URLS's replicas."""
        cfg = cfg or config.load()
        kw.setdefault("replicas", routing.named(cfg.reader_urls, _replica_names(cfg)))
        return cls(profiles.url(cfg, name), profile=name, **kw)

    def _connect_kwargs(self) -> dict[str, Any]:
        options = f"-c default_transaction_read_only=on -c statement_timeout={int(self.statement_timeout_ms)}"
        return {
            "application_name": self.application_name,
            "options": options,
            "autocommit": True,
            "row_factory": dict_row,
        }

    def connect(self) -> psycopg.Connection:
        """A new connection of its own, with the session options."""
        return psycopg.connect(self.url, **self._connect_kwargs())

    def pooled(self, max_size: int = DEFAULT_POOL_SIZE) -> Reader:
        """This reader over a pool of 1..max_size connections, opening in the background.

        Close it (`close()`, or use the Reader as a context manager) when done.
        """

        def make_pool(url: str, name: str) -> ConnectionPool:
            pool = ConnectionPool(
                url,
                kwargs=self._connect_kwargs(),
                min_size=1,
                max_size=max(1, int(max_size)),
                configure=_prepare,
                name=f"{self.application_name} {name}",
                open=False,
            )
            pool.open(wait=False)
            return pool

        return replace(self, pool=make_pool(self.url, routing.PRIMARY), routes=self.routes.pooled(make_pool))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        self.routes.close()

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect_to(self, url: str) -> psycopg.Connection:
        return psycopg.connect(url, **self._connect_kwargs())

    def run(self, work: Callable[[psycopg.Connection], T], primary: bool = False) -> tuple[T, str]:
        """`work` on a connection: a fit replica's (routing.on_replica) unless `primary`, else the
        primary's. Returns its answer and the name of the server that gave it (served_by)."""
        if not primary:
            answered = routing.on_replica(self.routes, self.max_lag_s, self.connect_to, work)
            if answered is not None:
                SERVED_BY.set(answered[1])
                return answered
        with self.connection() as conn:
            served_by = routing.PRIMARY
            if conn.info.parameter_status("in_hot_standby") == "on":  # url itself is a standby's
                served_by = routing.address(self.url)
            answer = work(conn)
        SERVED_BY.set(served_by)
        return answer, served_by

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A connection to url's server for one call: borrowed from the pool, else a new one closed afterwards."""
        if self.pool is None:
            with self.connect() as conn:
                yield conn
            return
        try:
            conn = self.pool.getconn(timeout=POOL_WAIT_S)
        except PoolTimeout:
            # No pooled connection came: the database is down or refusing connections (a
            # connection of its own raises why), or every pooled connection is busy.
            log.info("no pooled connection within %.1f s; connecting directly", POOL_WAIT_S)
            conn = None
        if conn is None:
            with self.connect() as own:
                yield own
            return
        try:
            yield conn
        finally:
            self.pool.putconn(conn)  # a closed or broken connection is discarded, not kept
            if conn.closed:  # the server went away: so did the idle connections' backends
                self.pool.check()


def _replica_names(cfg: config.Config) -> dict[str, str]:
    """HOST:PORT -> name of each replica the runtime's registry knows (`exo db replica list`)."""
    if not cfg.reader_urls:
        return {}
    from exocortex.runtime import replicas

    try:
        return {f"{r.host}:{r.port}": r.name for r in replicas.load(cfg)}
    except replicas.ReplicaProblem:
        return {}  # the URLs still route; the replicas are named by address


def _prepare(conn: psycopg.Connection) -> None:
    """A new pooled connection: a warm plpython session (see WARM_UP).

    No pgvector adapter: exo_reader sees no vector type (no USAGE on its schema), and the API
    takes vectors as float8[] (query_embedding), which psycopg sends as it is.
    """
    try:
        conn.execute(WARM_UP)
    except psycopg.Error as exc:  # a cold connection still answers; say why it stayed cold
        log.warning("warming a pooled connection failed: %s", str(exc).strip().splitlines()[0])


def call(reader: Reader, function: str, args: dict[str, Any], shape: str, read_write: bool = False) -> Any:
    """select exo.<function>(name => value, ...): rows, or the one value (shape "rows" | "value").

    read_write: in a read-write transaction on the primary, for the calls that record in a
    personal base (the reader's one narrow write path, exo_private.kb_write; it may write nothing
    else). A read goes where the Reader's routing sends it.
    """
    return _served_call(reader, function, args, shape, read_write, primary=read_write)[0]


def _served_call(
    reader: Reader, function: str, args: dict[str, Any], shape: str, read_write: bool, primary: bool
) -> tuple[Any, str]:
    """`call`, and the name of the server that answered; primary=False with read_write: a search of
    a profile's Reader, which records it where it runs, unless that is a standby."""
    named = [pgsql.SQL("{} => {}").format(pgsql.Identifier(k), pgsql.Placeholder()) for k in args]
    invocation = pgsql.SQL("exo.{}({})").format(pgsql.Identifier(function), pgsql.SQL(", ").join(named))
    statement = pgsql.SQL("select * from {}" if shape == "rows" else "select {} as value").format(invocation)

    def work(conn: psycopg.Connection) -> Any:
        # A hot standby (a replica) takes no read-write transaction: there a search answers
        # unrecorded (its report says why) and a kb action is refused with the standby's reason.
        if read_write and conn.info.parameter_status("in_hot_standby") != "on":
            with transaction(conn):
                conn.execute("set transaction read write")
                rows = conn.execute(statement, list(args.values())).fetchall()
        else:
            rows = conn.execute(statement, list(args.values())).fetchall()
        return rows if shape == "rows" else rows[0]["value"]

    return reader.run(work, primary=primary)


def _takes_search_options(function: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give an api function the signature of exo.<function>'s options (client/search_options.py):
    (reader, query, *, option=default, ...), for help() and the MCP tools made from it."""

    def attach(api_function: Callable[..., Any]) -> Callable[..., Any]:
        api_function.__signature__ = search_options.signature(search_options.FUNCTIONS[function], Reader)  # type: ignore[attr-defined]
        return api_function

    return attach


def _search_call(reader: Reader, function: str, query: str, options: dict[str, Any]) -> Any:
    """exo.<function>(query, options...): the options checked against the description; a profile's
    Reader calls in a read-write transaction, its session records the search."""
    args = {"query": query} | search_options.arguments(search_options.FUNCTIONS[function], options)
    profile = reader.profile is not None
    began = time.monotonic()
    answer, served_by = _served_call(reader, function, args, "value", read_write=profile, primary=False)
    report = answer if function == "search_report" else answer["report"]
    report["served_by"] = served_by
    if passed_over := reader.routes.passed_over(since=began):
        report["replicas_passed_over"] = passed_over
    if profile and served_by != routing.PRIMARY and reader.replicas:
        _record_on_primary(reader, report, served_by)
    return answer


def _record_on_primary(reader: Reader, report: dict[str, Any], served_by: str) -> None:
    """A profile's search answered by a replica, which records nothing: record what it returned
    (its provenance's documents and chunks) on the primary, best effort, as the search itself would
    have; the report's personal block says it was deferred and whether it was recorded."""
    sources = report.get("provenance", {}).get("sources", [])
    documents = [s["document_id"] for s in sources]
    chunks = [c for s in sources for c in s["chunks"]]
    personal = report.setdefault("personal", {})
    personal |= {"deferred": f"searched on replica {served_by}, recorded on the primary"}
    used = {"document_ids": documents, "chunk_ids": chunks}
    try:
        report["provenance"] = call(reader, "kb_record_use", used, "value", read_write=True)
        personal |= {"recorded": True, "why": None}
    except psycopg.Error as exc:
        personal |= {"recorded": False, "why": f"recording on the primary failed: {str(exc).strip()}"}


@_takes_search_options("search_json")
def search_json(reader: Reader, query: str, **options: Any) -> dict[str, Any]:
    """exo.search_json: one search, {results: exo.search's rows, report: what exo.search_report says of it}.

    The rows are JSON: written_at is an ISO date string here (search() gives dates). A profile's
    Reader searches the user's saved documents first and records the search in their base (a
    read-write transaction); the report carries `personal` and `provenance`.
    """
    return _search_call(reader, "search_json", query, options)


@_takes_search_options("search")
def search(reader: Reader, query: str, **options: Any) -> list[dict[str, Any]]:
    """exo.search: ranked chunks with citation, workspace, band and the stage that found each.

    The rows of search_json (one retrieval); want the report too: call search_json.
    """
    return [_dated(row) for row in search_json(reader, query, **options)["results"]]


def _dated(row: dict[str, Any]) -> dict[str, Any]:
    """A search_json row as exo.search gives it: written_at a date, not its ISO text."""
    written = row.get("written_at")
    return row | {"written_at": date.fromisoformat(written)} if isinstance(written, str) else row


@_takes_search_options("search_report")
def search_report(reader: Reader, query: str, **options: Any) -> dict[str, Any]:
    """exo.search_report: stages, bands, hints, degradations and timings of the same search."""
    return _search_call(reader, "search_report", query, options)


@_takes_search_options("context_packet_json")
def context_packet(reader: Reader, query: str, **options: Any) -> dict[str, Any]:
    """exo.context_packet_json: {text, tokens, used, hints, report}; a profile's as search_json."""
    return _search_call(reader, "context_packet_json", query, options)


#: The actions on a document of the Reader's profile's base: exo.kb_<action>(document_id).
KB_ACTIONS = (
    "accept_suggestion",
    "decline_suggestion",
    "thumbs_up",
    "thumbs_down",
    "force_pin",
    "force_remove",
)


def kb_items(reader: Reader) -> list[dict[str, Any]]:
    """exo.kb_items: the Reader's profile's base (pinned, claimed, suggested, surfaced, demoted)."""
    return call(reader, "kb_items", {}, "rows")


def kb_act(reader: Reader, action: str, document_id: int) -> dict[str, Any]:
    """exo.kb_<action> (one of KB_ACTIONS) on a document of the Reader's profile's base: its new state."""
    if action not in KB_ACTIONS:
        raise ValueError(f"action must be one of {', '.join(KB_ACTIONS)}, got {action!r}")
    return call(reader, "kb_" + action, {"document_id": int(document_id)}, "value", read_write=True)


def kb_record_use(
    reader: Reader, document_ids: Sequence[int], chunk_ids: Sequence[int] = ()
) -> dict[str, Any]:
    """exo.kb_record_use: record what a search of the Reader's profile returned (rank order); its provenance."""
    args = {"document_ids": [int(d) for d in document_ids], "chunk_ids": [int(c) for c in chunk_ids]}
    return call(reader, "kb_record_use", args, "value", read_write=True)


#: The sql tool's own limits, tighter than the API's: an agent's ad-hoc SELECT runs at most
#: SQL_TIMEOUT_MS and returns at most SQL_MAX_BYTES of values (then truncated says so).
SQL_TIMEOUT_MS = 5_000
SQL_MAX_BYTES = 256 * 1024

#: What api.sql's guard needs of the catalog: the exo API's functions, and every name that is a
#: column where a qualified name may point (the exo views', the exo functions' and the allowed
#: builtins' columns, and the exo relations themselves, for exo.view.column).
GUARD_CATALOG = """
select 'function' as kind, p.proname as name
from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname = 'exo'
union
select 'column', a.attname from pg_catalog.pg_attribute a
join pg_catalog.pg_class c on c.oid = a.attrelid join pg_catalog.pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'exo' and a.attnum > 0 and not a.attisdropped
union
select 'column', c.relname from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'exo'
union
select 'column', unnest(p.proargnames) from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname = 'exo' or (n.nspname = 'pg_catalog' and p.proname = any(%s))
"""


def sql(reader: Reader, statement: str, max_rows: int = 200) -> dict[str, Any]:
    """One read-only SELECT over the exo views and functions: {columns, rows, truncated}.

    The statement must be a single SELECT (WITH and UNION allowed) that reads only exo.<view>
    and calls only exo.<function> and harmless builtins; anything else raises
    exocortex.client.sqlguard.Rejected naming the rule it broke, before it reaches the database. What
    runs is the parsed statement regenerated, capped at max_rows (1..1000) rows and SQL_MAX_BYTES
    of values, as the read-only role with a statement timeout of SQL_TIMEOUT_MS; truncated says
    whether more rows were there.
    """
    limit = max(1, min(int(max_rows), 1000))
    return reader.run(lambda conn: _guarded_select(conn, statement, limit))[0]


def _guarded_select(conn: psycopg.Connection, statement: str, limit: int) -> dict[str, Any]:
    from psycopg.rows import tuple_row

    from exocortex.client import sqlguard

    catalog = conn.execute(GUARD_CATALOG, (sorted(sqlguard.BUILTIN_FUNCTIONS),)).fetchall()
    checked = sqlguard.check(
        statement,
        {r["name"] for r in catalog if r["kind"] == "function"},
        {r["name"] for r in catalog if r["kind"] == "column"},
    )
    with transaction(conn):
        conn.execute(f"set local statement_timeout = {SQL_TIMEOUT_MS}")
        # A cursor on the server: rows come in batches, so the cap holds on this side too.
        with conn.cursor("exo_sql", row_factory=tuple_row) as cursor:
            cursor.itersize = 50
            cursor.execute(sqlguard.limited(checked, limit + 1))
            columns = [column.name for column in cursor.description or ()]
            rows, size, truncated = [], 0, False
            for row in cursor:
                size += sum(len(str(value).encode()) for value in row if value is not None)
                if len(rows) == limit or size > SQL_MAX_BYTES:
                    truncated = True
                    break
                rows.append(list(row))
    return {"columns": columns, "rows": rows, "truncated": truncated}


def status(reader: Reader) -> dict[str, Any]:
    """exo.status: documents per stage, chunks, embeddings, queues, graph sizes, worker liveness."""
    return call(reader, "status", {}, "value")


def search_entities(
    reader: Reader,
    name: str | None = None,
    *,
    entity_type: str | None = None,
    workspaces: Sequence[str] | None = None,
    max_results: int = 50,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.search_entities: entities whose name contains `name`, most mentioned first (those
    mentioned by as_of, counted by then).

    Rows with only `withheld` set come last: one per deferred subject left closed and workspace
    where it has charged chunks, whatever the name (entities seen only there are left out).
    """
    args: dict[str, Any] = {"name": name, "entity_type": entity_type, "max_results": max_results}
    args |= {"bridge": list(bridge)}
    if workspaces is not None:
        args["workspaces"] = list(workspaces)
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "search_entities", args, "rows")


def dossier(
    reader: Reader,
    entity: str | int,
    *,
    workspace: str | None = None,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """exo.dossier: one entity's mentions, relations and hints (a list when a name is in several
    workspaces), those written by as_of."""
    args = {"entity": str(entity), "workspace": workspace, "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "dossier", args, "value")


def cross_document_entities(
    reader: Reader,
    *,
    min_documents: int = 2,
    workspaces: Sequence[str] | None = None,
    max_results: int = 100,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> dict[str, Any]:
    """exo.cross_document_entities: {entities, bridging_rate, counts, hints} (over the mentions
    written by as_of)."""
    args: dict[str, Any] = {"min_documents": min_documents, "max_results": max_results}
    args |= {"bridge": list(bridge)}
    if workspaces is not None:
        args["workspaces"] = list(workspaces)
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "cross_document_entities", args, "value")


def related(
    reader: Reader,
    entity: str | int,
    *,
    workspace: str | None = None,
    depth: int = 1,
    per_node: int = 50,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.related: the entity's neighbourhood (hub-safe, up to depth 3), nearest first (along
    the relations written by as_of).

    Rows with only `withheld` set come last: hints about relations left untaken (deferred subjects).
    """
    args = {"entity": str(entity), "workspace": workspace, "depth": depth, "per_node": per_node}
    args |= {"bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "related", args, "rows")


def timeline(
    reader: Reader,
    entity: str | int,
    *,
    workspace: str | None = None,
    bridge: Sequence[str] = (),
    max_results: int = 500,
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.timeline: the entity's mentions, oldest first, with excerpts (those written by as_of).

    Rows with only `withheld` set come last: hints about mentions left out (deferred subjects).
    """
    args = {"entity": str(entity), "workspace": workspace, "bridge": list(bridge), "max_results": max_results}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "timeline", args, "rows")


def document(
    reader: Reader, document: str | int, *, bridge: Sequence[str] = (), as_of: datetime | None = None
) -> dict[str, Any]:
    """exo.document: a document's ledger row and entities, by id, path or unique path suffix (one
    written by as_of)."""
    args: dict[str, Any] = {"document": str(document), "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "document", args, "value")


def conversation(
    reader: Reader,
    conversation: str | int,
    *,
    max_messages: int = 200,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.conversation: a chat conversation's messages (by id or title), oldest first (those
    sent by as_of).

    Rows with only `withheld` set come last: hints about messages left out (deferred subjects).
    """
    args = {"conversation": str(conversation), "max_messages": max_messages, "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "conversation", args, "rows")


def person_history(
    reader: Reader,
    name: str,
    *,
    max_results: int = 200,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.person_history: chat identities matching a name across sources, with message counts
    (those sent by as_of).

    Rows with only `withheld` set come last: hints about messages left out (deferred subjects).
    """
    args: dict[str, Any] = {"name": name, "max_results": max_results, "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "person_history", args, "rows")


def cypher(
    reader: Reader, workspace: str, query: str, *, max_rows: int = 100, bridge: Sequence[str] = ()
) -> list[Any]:
    """exo.cypher: a read-only Cypher query on a workspace's graph; one value per row."""
    args = {"workspace": workspace, "query": query, "max_rows": max_rows, "bridge": list(bridge)}
    return [row["cypher"] for row in call(reader, "cypher", args, "rows")]


def search_messages(
    reader: Reader,
    query: str,
    *,
    max_results: int = 20,
    bridge: Sequence[str] = (),
    open_archive: bool | None = None,
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.search_messages: chat messages ranked by BM25 for a question, best first.

    Rows with only `withheld` set come last: hints about messages left out (deferred subjects,
    and archival messages while the archive is closed).
    """
    args: dict[str, Any] = {
        "query": query,
        "max_results": max_results,
        "bridge": list(bridge),
        "open_archive": open_archive,
    }
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "search_messages", args, "rows")


def facts(
    reader: Reader, subject: str, *, as_of: datetime | None = None, bridge: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """exo.facts: a subject's facts valid at as_of (default now), one row per attribute and kind.

    Rows with only `withheld` set come last: hints about facts sourced only from charged material.
    """
    args: dict[str, Any] = {"subject": subject, "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "facts", args, "rows")


def fact_history(
    reader: Reader, subject: str, attribute: str, *, bridge: Sequence[str] = (), as_of: datetime | None = None
) -> list[dict[str, Any]]:
    """exo.fact_history: every row of a subject's attribute, oldest first, with what closed each
    (those begun by as_of, no end after it told)."""
    args = {"subject": subject, "attribute": attribute, "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "fact_history", args, "rows")


def facts_search(
    reader: Reader,
    query: str,
    *,
    max_results: int = 20,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.facts_search: facts current now (or at as_of) whose subject, attribute or value
    matches the query."""
    args: dict[str, Any] = {"query": query, "max_results": max_results, "bridge": list(bridge)}
    if as_of is not None:
        args["as_of"] = as_of
    return call(reader, "facts_search", args, "rows")


def events(
    reader: Reader,
    *,
    what: str | None = None,
    from_day: date | None = None,
    to_day: date | None = None,
    at_place: str | None = None,
    with_person: str | None = None,
    group_by: str | None = None,
    max_events: int = 100,
    planned: bool = False,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """exo.events: the timeline's dated events (what was done, when, how long, how far, how
    much, where, with whom), oldest first, filtered by activity, days, place and person; planned:
    the plans instead, on the days they name ahead; with group_by (activity, place, person, year,
    month, week, day or all), exo.event_counts: per group the done events, days, total minutes,
    km and amount, first and last day, most first."""
    args: dict[str, Any] = {
        "what": what, "from_day": from_day, "to_day": to_day, "at_place": at_place,
        "with_person": with_person, "bridge": list(bridge),
    }  # fmt: skip
    if as_of is not None:
        args["as_of"] = as_of
    if group_by is not None:
        if planned:
            raise ValueError("planned lists plans; group_by counts only what was done: give one of them")
        return call(reader, "event_counts", args | {"group_by": group_by}, "rows")
    return call(reader, "events", args | {"max_events": max_events, "planned": planned}, "rows")


def audit_summary(reader: Reader) -> dict[str, Any]:
    """exo.audit_summary: the self-audit's findings by reason and the facts' retirement rate."""
    return call(reader, "audit_summary", {}, "value")
