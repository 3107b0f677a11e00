"""`exo worker`: drain the embed and extract queues through the local models.

One read loop hands jobs to a small thread pool (default two in flight). A job
reads its messages (the queue's visibility timeout hides them from other
workers), calls the model outside any transaction, then writes the result and
archives the messages in one short transaction. If the worker dies, the
messages reappear when their visibility timeout ends; a message read more than
`worker.max_reads` times goes to the dead_letter queue with its last error.

A failing model call is retried after 5, 15 and 45 s (`worker.retry_backoff_s`).
After the fourth failure a 1-token probe decides: the endpoint is down, so the
run stops and the messages go back to the queue untouched (documents keep their
stage); or it is up, so this job is the problem: it is recorded in job_failures
with an error class and its messages archived.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from exocortex import extraction
from exocortex.config import Config
from exocortex.db import role_url
from exocortex.models import client
from exocortex.models.client import ClientError, Endpoint, ModelError

QUEUES = ("embed", "extract")
HEARTBEAT_S = 5.0


class EndpointUnavailable(Exception):
    """The model endpoint is down: stop the run, leave the work queued."""


class JobFailed(Exception):
    """The endpoint answers, but not for this job: record it and move on."""

    def __init__(self, error: ModelError):
        super().__init__(str(error))
        self.error = error


@dataclass
class Message:
    msg_id: int
    read_ct: int
    payload: dict


@dataclass
class RunResult:
    done: Counter = field(default_factory=Counter)
    """Messages archived after their result was written, per queue."""
    skipped: Counter = field(default_factory=Counter)
    """Messages archived because their chunk or window no longer exists."""
    failed: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    """Jobs that raised unexpectedly; their messages return after the visibility timeout."""
    dead_lettered: Counter = field(default_factory=Counter)
    stop_reason: str | None = None
    unfinished: int = 0
    """Jobs still running when the grace period ended."""


def _vector_literal(values: list[float]) -> str:
    return "[" + ",".join(f"{v:.7g}" for v in values) + "]"


class Worker:
    def __init__(
        self,
        cfg: Config,
        *,
        dbname: str | None = None,
        concurrency: int = 2,
        once: bool = False,
        queues: tuple[str, ...] = QUEUES,
        poll_s: float = 1.0,
        grace_s: float = 30.0,
        limit: int | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        unknown = set(queues) - set(QUEUES)
        if unknown:
            raise ValueError(f"unknown queue(s): {', '.join(sorted(unknown))}; expected {', '.join(QUEUES)}")
        self.url = role_url(cfg, "exo_writer", dbname)
        self.concurrency = concurrency
        self.once = once
        self.queues = queues
        self.poll_s = poll_s
        self.grace_s = grace_s
        self.limit = limit
        """Take at most this many messages in this run (None: no limit)."""
        self.taken = 0
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.stop = threading.Event()
        """Set: take no new work; running jobs finish."""
        self.abort = threading.Event()
        """Set: also cut retry waits short."""
        self.result = RunResult()
        self._lock = threading.Lock()
        self._worker_id: int | None = None

    # -- plumbing -----------------------------------------------------------------------

    def _settings(self, conn: psycopg.Connection) -> dict:
        rows = conn.execute(
            "select key, value from exo_private.settings "
            "where key like any (array['worker.%', 'models.%', 'extraction.%'])"
        ).fetchall()
        return dict(rows)

    def _count(self, counter: str, queue: str, n: int = 1) -> None:
        with self._lock:
            getattr(self.result, counter)[queue] += n

    def _read(self, conn: psycopg.Connection, queue: str, qty: int, settings: dict) -> list[Message]:
        """Read messages; those read too often go to the dead-letter queue instead."""
        vt = int(settings["worker.visibility_timeout_s"][queue])
        max_reads = int(settings["worker.max_reads"])
        with conn.transaction():
            rows = conn.execute(
                "select msg_id, read_ct, message from pgmq.read(%s, %s, %s)", (queue, vt, qty)
            ).fetchall()
            fresh = []
            for msg_id, read_ct, payload in rows:
                if read_ct <= max_reads:
                    fresh.append(Message(msg_id, read_ct, payload))
                    continue
                last = conn.execute(
                    "select error_class || ': ' || message from exo_private.job_failures "
                    "where queue = %s and msg_id = %s order by id desc limit 1",
                    (queue, msg_id),
                ).fetchone()
                conn.execute(
                    "select pgmq.send('dead_letter', %s)",
                    (
                        Jsonb(
                            {
                                "queue": queue,
                                "msg_id": msg_id,
                                "read_ct": read_ct,
                                "message": payload,
                                "last_error": last[0]
                                if last
                                else "read too often (a worker died or timed out?)",
                            }
                        ),
                    ),
                )
                conn.execute("select pgmq.archive(%s, %s::bigint)", (queue, msg_id))
                self._count("dead_lettered", queue)
        return fresh

    def _call(self, settings: dict, endpoint: Endpoint, kind: str, fn):
        """Call a model with retries and backoff; then probe to tell a down endpoint from a bad job."""
        backoff = [float(s) for s in settings["worker.retry_backoff_s"]]
        last: ModelError | None = None
        for attempt in range(len(backoff) + 1):
            try:
                return fn()
            except ClientError as exc:
                raise JobFailed(exc) from exc
            except ModelError as exc:
                last = exc
                if attempt < len(backoff) and self.abort.wait(backoff[attempt]):
                    break
        assert last is not None
        if not client.probe(endpoint, kind):
            raise EndpointUnavailable(f"{kind} endpoint {endpoint.url} is down ({last.error_class}: {last})")
        raise JobFailed(last)

    def _record_failure(
        self, conn, queue: str, messages: list[Message], target_key: str, exc: Exception
    ) -> None:
        error_class = exc.error.error_class if isinstance(exc, JobFailed) else type(exc).__name__
        with conn.transaction():
            for m in messages:
                conn.execute(
                    "insert into exo_private.job_failures (queue, msg_id, target_id, error_class, message) "
                    "values (%s, %s, %s, %s, %s)",
                    (queue, m.msg_id, m.payload.get(target_key), error_class, str(exc)[:2000]),
                )
            if isinstance(exc, JobFailed):
                conn.execute("select pgmq.archive(%s, %s::bigint[])", (queue, [m.msg_id for m in messages]))
        if isinstance(exc, JobFailed):
            self._count("failed", queue, len(messages))

    def _release(self, conn, queue: str, messages: list[Message]) -> None:
        """Make messages visible again at once (the endpoint is down; the next run takes them)."""
        with conn.transaction():
            for m in messages:
                conn.execute("select pgmq.set_vt(%s, %s::bigint, 0)", (queue, m.msg_id))

    # -- jobs ---------------------------------------------------------------------------

    def _embed(self, pool: ConnectionPool, settings: dict, messages: list[Message]) -> None:
        endpoint = Endpoint.from_setting(settings["models.embeddings"])
        dimensions = int(settings["models.embeddings"]["dimensions"])
        with pool.connection() as conn:
            ids = [int(m.payload["chunk_id"]) for m in messages]
            bodies = dict(
                conn.execute("select id, body from exo_private.chunks where id = any(%s)", (ids,)).fetchall()
            )
            live = [m for m in messages if int(m.payload["chunk_id"]) in bodies]
            gone = [m.msg_id for m in messages if int(m.payload["chunk_id"]) not in bodies]
            if gone:
                with conn.transaction():
                    conn.execute("select pgmq.archive('embed', %s::bigint[])", (gone,))
                self._count("skipped", "embed", len(gone))
            if not live:
                return
            texts = [bodies[int(m.payload["chunk_id"])] for m in live]
            try:
                vectors = self._call(settings, endpoint, "embeddings", lambda: client.embed(endpoint, texts))
                if any(len(v) != dimensions for v in vectors):
                    raise JobFailed(client.BadResponse(f"vectors are not {dimensions}-dimensional"))
            except EndpointUnavailable:
                self._release(conn, "embed", live)
                raise
            except JobFailed as exc:
                self._record_failure(conn, "embed", live, "chunk_id", exc)
                return
            with conn.transaction():
                conn.execute(
                    "select exo_private.store_embeddings(%s, %s, %s, %s)",
                    (
                        endpoint.model,
                        dimensions,
                        [int(m.payload["chunk_id"]) for m in live],
                        [_vector_literal(v) for v in vectors],
                    ),
                )
                conn.execute("select pgmq.archive('embed', %s::bigint[])", ([m.msg_id for m in live],))
            self._count("done", "embed", len(live))

    def _extract(self, pool: ConnectionPool, settings: dict, message: Message) -> None:
        endpoint = Endpoint.from_setting(settings["models.chat"])
        window_id = int(message.payload["window_id"])
        with pool.connection() as conn:
            row = conn.execute(
                "select body, workspace, document_id from exo_private.extraction_windows where id = %s",
                (window_id,),
            ).fetchone()
            if row is None:
                with conn.transaction():
                    conn.execute("select pgmq.archive('extract', %s::bigint)", (message.msg_id,))
                self._count("skipped", "extract")
                return
            body, workspace, document_id = row
            with conn.transaction():
                generation = conn.execute(
                    "select exo_private.generation_for(%s, %s)", (workspace, endpoint.model)
                ).fetchone()[0]
            if (
                generation is None
            ):  # the settings name another model now; its generation re-queued this window
                with conn.transaction():
                    conn.execute("select pgmq.archive('extract', %s::bigint)", (message.msg_id,))
                self._count("skipped", "extract")
                return
            max_entities = int(settings["extraction.max_entities"])
            max_relations = int(settings["extraction.max_relations"])
            fmt = (
                extraction.response_format(max_entities, max_relations)
                if settings["models.chat"].get("response_format", True)
                else None
            )
            try:
                reply = self._call(
                    settings,
                    endpoint,
                    "chat",
                    lambda: client.chat(
                        endpoint,
                        extraction.messages(body),
                        max_tokens=int(settings["extraction.max_tokens"]),
                        response_format=fmt,
                    ),
                )
            except EndpointUnavailable:
                self._release(conn, "extract", [message])
                raise
            except JobFailed as exc:
                self._record_failure(conn, "extract", [message], "window_id", exc)
                return
            parsed = extraction.parse(reply.content, body, max_entities, max_relations)
            stats = {
                **parsed.stats(),
                "finish_reason": reply.finish_reason,
                "completion_tokens": reply.completion_tokens,
            }
            with conn.transaction():
                try:
                    with conn.transaction():
                        merged = conn.execute(
                            "select exo_private.merge_extraction(%s, %s, %s, %s)",
                            (window_id, generation, Jsonb(parsed.entities), Jsonb(parsed.relations)),
                        ).fetchone()[0]
                except (psycopg.errors.ForeignKeyViolation, psycopg.errors.RaiseException):
                    # The window was re-made (or its generation replaced) while the model ran.
                    gone = (
                        conn.execute(
                            "select 1 from exo_private.extraction_windows where id = %s", (window_id,)
                        ).fetchone()
                        is None
                    )
                    if not gone:
                        raise
                    conn.execute("select pgmq.archive('extract', %s::bigint)", (message.msg_id,))
                    self._count("skipped", "extract")
                    return
                if merged.get("stale_generation"):
                    # The workspace's graph was restarted with another model meanwhile, and
                    # the window queued again: this reply belongs to no current graph.
                    conn.execute("select pgmq.archive('extract', %s::bigint)", (message.msg_id,))
                    self._count("skipped", "extract")
                    return
                conn.execute(
                    "update exo_private.extraction_windows set extracted_generation = %s, extracted_at = now(), "
                    "extraction_stats = %s where id = %s",
                    (generation, Jsonb({**stats, **merged}), window_id),
                )
                conn.execute("select exo_private.advance_stages(array[%s]::bigint[])", (document_id,))
                conn.execute("select pgmq.archive('extract', %s::bigint)", (message.msg_id,))
            self._count("done", "extract")

    def _guarded(
        self, pool: ConnectionPool, queue: str, job, settings: dict, messages: list[Message]
    ) -> None:
        """Run a job; an unexpected error is recorded and its messages left to come back."""
        try:
            job(pool, settings, messages if queue == "embed" else messages[0])
        except EndpointUnavailable:
            raise
        except Exception as exc:
            self._count("errors", queue, len(messages))
            with pool.connection() as conn:
                self._record_failure(
                    conn, queue, messages, "chunk_id" if queue == "embed" else "window_id", exc
                )

    # -- the loop -----------------------------------------------------------------------

    def _heartbeat(self) -> None:
        with psycopg.connect(
            self.url, application_name=f"exo-worker-heartbeat {self.name}", autocommit=True
        ) as conn:
            while not self.stop.wait(HEARTBEAT_S):
                with self._lock:
                    processed = sum(self.result.done.values())
                conn.execute(
                    "update exo_private.workers set heartbeat_at = now(), processed = %s where id = %s",
                    (processed, self._worker_id),
                )

    def run(self) -> RunResult:
        """Work until the queues are empty (--once) or `stop` is set."""
        app = f"exo-worker {self.name}"
        with (
            psycopg.connect(self.url, application_name=app, autocommit=True) as conn,
            ConnectionPool(
                self.url,
                min_size=1,
                max_size=self.concurrency,
                kwargs={"application_name": app, "autocommit": True},
                open=True,
            ) as pool,
            ThreadPoolExecutor(self.concurrency, thread_name_prefix="exo-job") as jobs,
        ):
            self._worker_id = conn.execute(
                "insert into exo_private.workers (name, pid, hostname, queues) values (%s, %s, %s, %s) returning id",
                (self.name, os.getpid(), socket.gethostname(), list(self.queues)),
            ).fetchone()[0]
            beat = threading.Thread(target=self._heartbeat, name="exo-heartbeat", daemon=True)
            beat.start()
            running: set[Future] = set()
            try:
                self._loop(conn, pool, jobs, running)
            finally:
                self.stop.set()
                done, pending = wait(running, timeout=self.grace_s)
                for future in done:
                    self._settle(future)
                self.result.unfinished = len(pending)
                if pending:
                    self.abort.set()
                conn.execute(
                    "update exo_private.workers set stopped_at = now(), heartbeat_at = now(), stop_reason = %s, "
                    "processed = %s where id = %s",
                    (
                        self.result.stop_reason or ("drained" if self.once else "stopped"),
                        sum(self.result.done.values()),
                        self._worker_id,
                    ),
                )
                if pending:
                    jobs.shutdown(wait=False, cancel_futures=True)
        return self.result

    def _settle(self, future: Future) -> None:
        error = future.exception()
        if error is not None:  # EndpointUnavailable, or the database itself failing
            self.result.stop_reason = (
                str(error) if isinstance(error, EndpointUnavailable) else f"{type(error).__name__}: {error}"
            )
            self.stop.set()

    def _loop(self, conn, pool, jobs: ThreadPoolExecutor, running: set[Future]) -> None:
        turn = 0
        while not self.stop.is_set():
            finished = {f for f in running if f.done()}
            for future in finished:
                self._settle(future)
            running -= finished
            if self.stop.is_set():
                break
            if len(running) >= self.concurrency:
                wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
                continue
            if self.limit is not None and self.taken >= self.limit:
                if running:
                    wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
                    continue
                break
            settings = self._settings(conn)
            submitted = False
            for i in range(len(self.queues)):
                queue = self.queues[(turn + i) % len(self.queues)]
                qty = int(settings["worker.embed_batch"]) if queue == "embed" else 1
                if self.limit is not None:
                    qty = min(qty, self.limit - self.taken)
                messages = self._read(conn, queue, qty, settings)
                if not messages:
                    continue
                self.taken += len(messages)
                job = self._embed if queue == "embed" else self._extract
                running.add(jobs.submit(self._guarded, pool, queue, job, settings, messages))
                turn += 1
                submitted = True
                break
            if submitted:
                continue
            if running:
                wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
            elif self.once:
                break
            else:
                self.stop.wait(self.poll_s)


def summary_line(result: RunResult) -> str:
    parts = [f"{q}: {n} done" for q, n in sorted(result.done.items())]
    for label, counter in (
        ("skipped", result.skipped),
        ("failed", result.failed),
        ("errors", result.errors),
        ("dead-lettered", result.dead_lettered),
    ):
        parts += [f"{q}: {n} {label}" for q, n in sorted(counter.items())]
    text = "; ".join(parts) or "nothing to do"
    if result.stop_reason:
        text += f"; stopped: {result.stop_reason}"
    if result.unfinished:
        text += f"; {result.unfinished} job(s) unfinished after the grace period (their messages will return)"
    return text


def as_json(result: RunResult) -> str:
    return json.dumps(
        {
            "done": result.done,
            "skipped": result.skipped,
            "failed": result.failed,
            "errors": result.errors,
            "dead_lettered": result.dead_lettered,
            "stop_reason": result.stop_reason,
            "unfinished": result.unfinished,
        }
    )
