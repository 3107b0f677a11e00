"""`exo worker`: drain the embed and extract queues through the local models, and the ocr and capsules queues.

One read loop hands jobs to a thread pool. Each queue has its own slots (`concurrency`
jobs in flight, default two), filled in the order of PRIORITY: embeddings first (search
works sooner), then OCR, extraction and capsules; a slow chat model holds only the extract
slots, never an embedding job. A job
reads its messages (exo_private.read_jobs: the queue's visibility timeout hides
them from other workers, and a claim in the read's transaction names this
worker), calls the model outside any transaction, then writes the result and
archives the messages in one call (exo_private.complete_embedding,
complete_extraction). Extraction runs the deterministic pattern pass (exocortex.extraction.relation_patterns,
setting extraction.patterns) on every window beside the chat model, and alone when models.chat
has no url; with spaCy's pipeline (extraction.ner 'spacy', or 'auto' where it is installed) the
syntax pass (exocortex.extraction.relation_syntax) runs beside it. A message read more than `worker.max_reads` times goes to
the dead_letter queue with its last error. With nothing to read, the loop waits
for pgmq's insert notification, the poll interval or the stop event. The SQL the
worker sends is named in exocortex.worker.queries.

The ocr queue holds scanned PDFs (stage ocr_pending): the worker reads the file page by page
with Tesseract (exocortex.ingest.ocr, no transaction open), then stores the text in the text
cache and lets the documents of that content continue through routing, banding and chunking
(exocortex.ingest.pipeline.continue_extracted), archiving the message in the same
transaction. A scan OCR cannot read ends its documents failed (or skipped when no text was
found) with the error class, and its message is archived; a job that raises otherwise is
retried and dead-lettered like any other.

The capsules queue holds documents long enough for a capsule (queued whenever one is chunked)
and folders, workspaces and entities (queued by exo_private.queue_capsules): the worker builds
the capsule in the database (exo_private.capsule_job: extractive, or through the chat model
with capsules.builder = model) and archives the message in the same transaction; one with
nothing to build (gone, too short, its capsule fresh already) counts as skipped.

No work is lost to an outage, a slow CPU or a dead worker:

- A failing model call is retried after 5, 15 and 45 s (`worker.retry_backoff_s`),
  then a 1-token probe decides. Endpoint down: the run stops (exit code 75,
  EX_TEMPFAIL) and the messages go back at once with that read not counted, so an
  outage never dead-letters anything. Endpoint up: this job is the problem; it is
  recorded in job_failures and its messages archived (`exo worker retry-failed`
  queues it again).
- A timeout on an endpoint the probe finds up is load: the call is retried with a
  longer deadline (twice the last, or what the measured speed of that endpoint
  predicts, up to timeout_s times `worker.max_timeout_factor`) and the worker halves
  the jobs it runs at once; only a timeout at that cap fails the job. A long call
  keeps its messages hidden for as long as it may take.
- A stop (SIGTERM, Ctrl-C: request_stop) takes no new work, and the run ends within
  `grace_s` of it. Jobs still running a second before the end are abandoned: their
  messages are visible again at once (that read not counted) and their claims released;
  their model calls are cut off (model_client.Cancel shuts the connections down, so the
  model server stops generating and the threads end at once; a capsule built in the database
  has its statement cancelled, pg_cancel_backend, which its model call there sees while it
  waits), they write nothing more, and `run` returns without waiting for threads held
  elsewhere (OCR): RunResult.unfinished; `exo worker` then exits at once with 128 + the
  signal's number.
- Workers beat a heartbeat until their running jobs have drained; one silent for
  `worker.dead_after_s` is marked dead and the messages it claimed are taken
  back. `--once` exits only when nothing of its queues is pending or in flight
  anywhere: it waits for other workers' jobs and takes back those of dead ones.
"""

from __future__ import annotations

import hashlib
import math
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace

import psycopg
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from exocortex.config import Config
from exocortex.db import role_url, transaction
from exocortex.extraction import events, ner, relation_patterns, relation_syntax, statements
from exocortex.extraction import llm as extraction
from exocortex.ingest import ocr
from exocortex.ingest.pipeline import continue_extracted
from exocortex.models.endpoints import ROLES as model_roles
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Cancel, ClientError, Endpoint, ModelError
from exocortex.worker import queries
from exocortex.worker.listener import Listener
from exocortex.worker.pace import Pace
from exocortex.worker.run_result import RunResult
from exocortex.worker.watch import Watch

TARGET_KEYS = {
    "embed": "chunk_id",
    "ocr": "document_id",
    "extract": "window_id",
    "events": "document_id",
    "capsules": "document_id",
}
"""Each queue's message key naming its target (exo_private.queue_target_key)."""
QUEUES = tuple(TARGET_KEYS)
"""The queues in the order their free slots are filled (PRIORITY): embeddings first, so that
search works sooner; OCR next, since its text goes on to be chunked and embedded; then
extraction, the timeline's events and capsules."""
PRIORITY = QUEUES
MODEL_QUEUES = ("embed", "extract")
"""The queues whose failed and dead-lettered work `exo worker retry-failed | requeue-dead` bring back."""
EXIT_ENDPOINT_DOWN = 75
"""Exit code of a run stopped by a model endpoint that is down (EX_TEMPFAIL: run again later)."""
HEARTBEAT_MAX_S = 5.0
HOLD_MARGIN_S = 30.0
"""Messages stay hidden this long beyond the deadline of the model call in progress."""
CALM_CALLS = 4
"""Calls in a row without a timeout before the worker takes one more job of that queue at once again."""
STOP_RESERVE_S = 1.0
"""Of a stop's grace period, kept for giving abandoned jobs' messages back and closing down."""
CUT_WAIT_S = 0.25
"""How long a stop waits for the threads of cut-off model calls to end (they do at once)
before it leaves without them."""
WATCH_EVERY_S = 1.0
"""How often the loop tells `watch` what is done and what waits."""


class Abandoned(Exception):
    """The grace period of a stop is over: this job writes nothing more (its messages were given back)."""


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
class Job:
    queue: str
    messages: list[Message]
    hidden_until: float
    """time.monotonic() until which the messages are surely hidden from other readers."""
    cancel: Cancel = field(default_factory=Cancel)
    """Cuts the job's model calls off when it is abandoned."""
    backend: int | None = None
    """The server process running the job's statement while it runs one that may call a model
    (a capsule built in the database): an abandoned job's statement is cancelled there."""

    @property
    def ids(self) -> list[int]:
        return [m.msg_id for m in self.messages]


def _target_id(payload: dict, key: str) -> int | None:
    """The chunk or window a message names, or None when it names none (a malformed message)."""
    value = payload.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
        progress: Callable[[str], None] | None = None,
        watch: Watch | None = None,
        endpoints: dict[str, str] | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        unknown_roles = set(endpoints or {}) - set(model_roles)
        if unknown_roles:
            raise ValueError(
                f"unknown model role(s) for an endpoint: {', '.join(sorted(unknown_roles))}; expected {', '.join(model_roles)}"
            )
        unknown = set(queues) - set(QUEUES)
        if unknown:
            raise ValueError(f"unknown queue(s): {', '.join(sorted(unknown))}; expected {', '.join(QUEUES)}")
        self.cfg = cfg
        self.url = role_url(cfg, "exo_writer", dbname)
        self.concurrency = concurrency
        """Jobs in flight at once per queue."""
        self.queues = tuple(q for q in PRIORITY if q in queues)
        self.allowed = dict.fromkeys(self.queues, concurrency)
        """Jobs of each queue taken at once now: halved by a timeout on a working endpoint, raised again by calm."""
        self.once = once
        self.poll_s = poll_s
        self.grace_s = grace_s
        self.limit = limit
        """Take at most this many messages in this run (None: no limit)."""
        self.progress = progress
        """Told what the worker waits for (other workers' messages), once per change."""
        self.watch = watch
        """Shown what waits in each queue when the run starts, then done/total as it goes."""
        self.endpoints = dict(endpoints or {})
        """This host's URL of a model role, in place of the setting's (its model and the rest kept):
        a worker on another host reaches the same models at addresses of its own."""
        self.taken = 0
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.stop = threading.Event()
        """Set: take no new work; running jobs get the grace period to finish."""
        self.drained = threading.Event()
        """Set once the running jobs have finished (or the grace period ended): the heartbeat stops."""
        self.abort = threading.Event()
        """Set when the grace period ends: running jobs are abandoned (they cut their retry waits
        short and write nothing more)."""
        self.stop_requested_at: float | None = None
        """time.monotonic() of request_stop: the grace period runs from then."""
        self.result = RunResult()
        self._lock = threading.Lock()
        self._worker_id: int | None = None
        self._pace = {"chat": Pace(), "embeddings": Pace()}
        self._down: set[str] = set()
        """Endpoint kinds the probe found down in this run."""
        self._calm = dict.fromkeys(self.queues, 0)
        self._last_reap = -math.inf
        self._last_progress: str | None = None

    def request_stop(self) -> None:
        """Take no new work; the run ends within grace_s from now, abandoning jobs still running."""
        if self.stop_requested_at is None:
            self.stop_requested_at = time.monotonic()
        self.stop.set()

    # -- plumbing -----------------------------------------------------------------------

    def _settings(self, conn: psycopg.Connection) -> dict:
        settings = dict(conn.execute(queries.WORKER_SETTINGS).fetchall())
        for role, url in self.endpoints.items():
            settings[f"models.{role}"] = settings.get(f"models.{role}", {}) | {"url": url}
        return settings

    def _count(self, counter: str, queue: str, n: int = 1) -> None:
        with self._lock:
            getattr(self.result, counter)[queue] += n

    def _read(self, conn: psycopg.Connection, queue: str, qty: int, settings: dict) -> Job | None:
        """Read and claim messages; those read too often go to the dead-letter queue instead."""
        vt = int(settings["worker.visibility_timeout_s"][queue])
        max_reads = int(settings["worker.max_reads"])
        began = time.monotonic()
        rows = conn.execute(queries.READ_JOBS, (queue, vt, qty, max_reads, self._worker_id)).fetchall()
        fresh = [Message(msg_id, read_ct, payload) for msg_id, read_ct, payload, dead in rows if not dead]
        if len(fresh) < len(rows):
            self._count("dead_lettered", queue, len(rows) - len(fresh))
        return Job(queue, fresh, began + vt) if fresh else None

    def _hold(self, pool: ConnectionPool, job: Job, seconds: float) -> None:
        """Keep the job's messages hidden for the next `seconds` (and a margin): a slow model
        call must not let them reappear for another reader while it still runs."""
        if time.monotonic() + seconds + HOLD_MARGIN_S / 2 <= job.hidden_until:
            return
        hold = math.ceil(seconds + HOLD_MARGIN_S)
        with pool.connection() as conn:
            conn.execute(queries.HIDE_MESSAGES, (job.queue, job.ids, hold))
        job.hidden_until = time.monotonic() + hold

    def _call(
        self, pool: ConnectionPool, job: Job, settings: dict, endpoint: Endpoint, kind: str, units: int, fn
    ):
        """Call a model: `fn(endpoint)` with the deadline of this try as the endpoint's timeout_s.

        A timeout on an endpoint that still takes requests is load: try again with a longer
        deadline and take fewer jobs at once. At the cap the probe decides: it answers, so the
        job fails (JobFailed); it does not, so the endpoint is down (EndpointUnavailable). Other
        failures are retried after the backoff waits, then the probe decides the same way.
        Once the grace period of a stop is over, whatever the call brings raises Abandoned.
        """
        pace = self._pace[kind]
        endpoint = replace(endpoint, cancel=job.cancel)  # abandoning the job cuts its calls off
        cap = endpoint.timeout_s * float(settings["worker.max_timeout_factor"])
        deadline = pace.deadline(endpoint.timeout_s, cap, units)
        waits = [float(s) for s in settings["worker.retry_backoff_s"]]
        while True:
            self._check_abandoned()
            self._hold(pool, job, deadline)
            began = time.monotonic()
            try:
                answer = fn(replace(endpoint, timeout_s=deadline))
            except ClientError as exc:
                raise JobFailed(exc) from exc
            except client.Cancelled as exc:
                raise Abandoned(str(exc)) from exc
            except client.Timeout as exc:
                state = self._probe(endpoint, kind, deadline)
                if state == "down" or (state == "busy" and deadline >= cap):
                    raise self._outage(endpoint, kind, exc) from exc
                if deadline >= cap:
                    raise JobFailed(
                        client.Timeout(
                            f"{exc} even at the longest deadline (timeout_s {endpoint.timeout_s:g} s "
                            f"x worker.max_timeout_factor)",
                            exc.url,
                        )
                    ) from exc
                deadline = pace.timed_out(deadline, cap, units)
                self._slow_down(job.queue, deadline)
                continue
            except ModelError as exc:
                if waits and kind not in self._down:
                    wait_s = waits.pop(0)
                    self._hold(pool, job, wait_s + deadline)
                    if not self.abort.wait(wait_s):
                        continue
                if self._probe(endpoint, kind, endpoint.timeout_s) != "up":
                    raise self._outage(endpoint, kind, exc) from exc
                raise JobFailed(exc) from exc
            self._check_abandoned()
            pace.observe(time.monotonic() - began, units)
            self._speed_up(job.queue)
            return answer

    def _check_abandoned(self) -> None:
        if self.abort.is_set():
            raise Abandoned("the grace period of the stop is over")

    def _probe(self, endpoint: Endpoint, kind: str, timeout_s: float) -> str:
        """What a 1-token request says of the endpoint: up; busy (it took the request but gave
        no answer within timeout_s: loaded, or hung); down (once down, down for this run)."""
        if kind not in self._down:
            error = client.probe_error(endpoint, kind, timeout_s=timeout_s)
            self._check_abandoned()  # a probe cut off says nothing of the endpoint
            if error is None:
                return "up"
            if isinstance(error, client.Timeout):
                return "busy"
        return "down"

    def _outage(self, endpoint: Endpoint, kind: str, error: ModelError) -> EndpointUnavailable:
        self._down.add(kind)
        return EndpointUnavailable(f"{kind} endpoint {endpoint.url} is down ({error.error_class}: {error})")

    def _slow_down(self, queue: str, deadline: float) -> None:
        with self._lock:
            self.result.slowed[queue] += 1
            self.result.longest_deadline_s[queue] = max(
                self.result.longest_deadline_s.get(queue, 0), deadline
            )
            allowed = self.allowed[queue] = max(1, self.allowed[queue] // 2)
            self._calm[queue] = 0
            self.result.lowest_concurrency = min(self.result.lowest_concurrency or allowed, allowed)

    def _speed_up(self, queue: str) -> None:
        with self._lock:
            if self.allowed[queue] < self.concurrency:
                self._calm[queue] += 1
                if self._calm[queue] >= CALM_CALLS:
                    self.allowed[queue] += 1
                    self._calm[queue] = 0

    def _record_failure(self, pool: ConnectionPool, job: Job, target_key: str, exc: Exception) -> None:
        error_class = exc.error.error_class if isinstance(exc, JobFailed) else type(exc).__name__
        with pool.connection() as conn, transaction(conn):
            conn.cursor().executemany(
                queries.RECORD_FAILURE,
                [
                    (job.queue, m.msg_id, _target_id(m.payload, target_key), error_class, str(exc)[:2000])
                    for m in job.messages
                ],
            )
            if isinstance(exc, JobFailed):
                conn.execute(queries.ARCHIVE_MESSAGES, (job.queue, job.ids))
        if isinstance(exc, JobFailed):
            self._count("failed", job.queue, len(job.messages))

    def _return(self, pool: ConnectionPool, job: Job) -> None:
        """The endpoint is down: the messages are visible again at once and this read does not count."""
        with pool.connection() as conn:
            returned = conn.execute(queries.RETURN_MESSAGES, (job.queue, job.ids)).fetchone()[0]
        self._count("returned", job.queue, returned)

    # -- jobs ---------------------------------------------------------------------------

    def _answer(
        self,
        pool: ConnectionPool,
        job: Job,
        settings: dict,
        endpoint: Endpoint,
        kind: str,
        units: int,
        target_key: str,
        fn,
    ):
        """`_call`, settled for the job: the endpoint down gives its messages back (and the run
        stops); a failed job is recorded and archived, and the answer is None. An abandoned job
        settles nothing: its messages were given back when the grace period ended."""
        try:
            return self._call(pool, job, settings, endpoint, kind, units, fn)
        except EndpointUnavailable:
            self._check_abandoned()
            self._return(pool, job)
            raise
        except JobFailed as exc:
            self._check_abandoned()
            self._record_failure(pool, job, target_key, exc)
            return None

    def _skip(self, pool: ConnectionPool, queue: str, msg_ids: list[int]) -> None:
        """The job's target is gone or its reply is stale: archive the messages, count them skipped."""
        with pool.connection() as conn:
            conn.execute(queries.ARCHIVE_MESSAGES, (queue, msg_ids))
        self._count("skipped", queue, len(msg_ids))

    def _embed(self, pool: ConnectionPool, settings: dict, job: Job) -> None:
        endpoint = Endpoint.from_setting(settings["models.embeddings"])
        dimensions = int(settings["models.embeddings"]["dimensions"])
        # A message names a chunk, or an outside document whose new passages the personal stage
        # of a wrapped retriever compares by meaning (exo_private.kb_outside_queue_embedding).
        outside = [m for m in job.messages if "outside_id" in m.payload]
        chunked = [m for m in job.messages if "outside_id" not in m.payload]
        ids = [int(m.payload["chunk_id"]) for m in chunked]
        with pool.connection() as conn:
            bodies = dict(conn.execute(queries.CHUNK_BODIES, (ids,)).fetchall())
            # A chat window's messages are embedded with it, each once: the packet picks a
            # window's answering message by its vector.
            messages = conn.execute(queries.MESSAGES_TO_EMBED, (ids, endpoint.model, dimensions)).fetchall()
            passages = conn.execute(
                queries.OUTSIDE_PASSAGES_TO_EMBED,
                ([int(m.payload["outside_id"]) for m in outside], endpoint.model, dimensions),
            ).fetchall()
        # A chunk re-made since, or an outside document with nothing left to embed: skipped.
        wanted = {outside_id for outside_id, _, _ in passages}
        gone = [m.msg_id for m in chunked if int(m.payload["chunk_id"]) not in bodies]
        gone += [m.msg_id for m in outside if int(m.payload["outside_id"]) not in wanted]
        if gone:
            self._skip(pool, "embed", gone)
        live = Job("embed", [m for m in job.messages if m.msg_id not in gone], job.hidden_until, job.cancel)
        if not live.messages:
            return
        chunk_ids = [int(m.payload["chunk_id"]) for m in live.messages if "outside_id" not in m.payload]
        texts = (
            [bodies[chunk_id] for chunk_id in chunk_ids]
            + [text for _, text in messages]
            + [body for _, _, body in passages]
        )

        def embed(ep: Endpoint) -> list[list[float]]:
            # No more texts a request than a batch of chunks: an endpoint caps its inputs.
            step = max(1, int(settings["worker.embed_batch"]))
            vectors = [v for i in range(0, len(texts), step) for v in client.embed(ep, texts[i : i + step])]
            if any(len(v) != dimensions for v in vectors):
                raise JobFailed(client.BadResponse(f"vectors are not {dimensions}-dimensional"))
            return vectors

        # No connection is held while the model works: a long call ties up none of the pool.
        vectors = self._answer(pool, live, settings, endpoint, "embeddings", len(texts), "chunk_id", embed)
        if vectors is None:
            return
        n = len(chunk_ids)
        after = n + len(messages)
        with pool.connection() as conn, transaction(conn):
            if messages:
                conn.execute(
                    queries.STORE_MESSAGE_EMBEDDINGS,
                    (
                        endpoint.model,
                        dimensions,
                        [m for m, _ in messages],
                        [Vector(v) for v in vectors[n:after]],
                    ),
                )
            if passages:
                conn.execute(
                    queries.STORE_OUTSIDE_EMBEDDINGS,
                    (
                        endpoint.model,
                        dimensions,
                        [outside_id for outside_id, _, _ in passages],
                        [digest for _, digest, _ in passages],
                        [Vector(v) for v in vectors[after:]],
                    ),
                )
            conn.execute(
                queries.COMPLETE_EMBEDDING,
                (live.ids, endpoint.model, dimensions, chunk_ids, [Vector(v) for v in vectors[:n]]),
            )
        self._count("done", "embed", len(live.messages))

    def _extract(self, pool: ConnectionPool, settings: dict, job: Job) -> None:
        """One window: the chat model's extraction (none when models.chat has no url) and the
        pattern pass (extraction.patterns; where ner.backend chooses spaCy, the syntax pass of
        relation_syntax beside it, and each entity's cues, the mentions its syntax typed: ner.mark_cues),
        merged in one call. A model that fails the window
        leaves it unextracted (recorded failed: `exo worker retry-failed`), and the patterns'
        relations merged."""
        chat = settings["models.chat"]
        endpoint = Endpoint.from_setting(chat) if chat.get("url") else None
        (message,) = job.messages
        window_id = int(message.payload["window_id"])
        with pool.connection() as conn:
            row = conn.execute(queries.WINDOW_TO_EXTRACT, (chat.get("model") or "none", window_id)).fetchone()
            context = (
                row
                and row[1] is not None
                and conn.execute(queries.WINDOW_AUTHORS, (row[1], window_id)).fetchone()
            )
        # Gone, or the settings name another model now (its generation re-queued this window).
        if row is None or row[1] is None or not context:
            self._skip(pool, "extract", job.ids)
            return
        body, generation = row
        max_entities = int(settings["extraction.max_entities"])
        max_relations = int(settings["extraction.max_relations"])
        patterns = settings.get("extraction.patterns", True)
        # Before the model is asked: a backend whose packages are missing fails the job at once.
        chosen = ner.backend(settings.get("extraction.ner", "auto"))
        recognise = ner.recogniser(chosen)
        labels = recognise(body) if recognise else None
        parsed, stats = extraction.Extraction(), {"model": None}
        answered = self._ask_model(pool, settings, job, endpoint, body, labels) if endpoint else None
        if answered is not None:
            parsed, stats = answered
        elif endpoint is not None and not patterns:
            return
        if patterns:
            is_chat, from_header, owner, names, title, owner_labels = context
            known = dict(labels or {})
            for entry in names:
                name, _, type_ = entry.partition("\t")
                known[relation_patterns.name_key(name)] = type_
            who = relation_patterns.author(is_chat, from_header, owner)
            # With spaCy's pipeline loaded (extraction.ner 'spacy', or 'auto' where it is
            # installed), its parse finds relations too.
            passes = relation_syntax if chosen == "spacy" else relation_patterns
            about = None if is_chat else passes.note_subject(title, known)
            stats["patterns"] = passes.add_to(parsed, body, max_entities, max_relations, who, known, about)
            if chosen == "spacy":
                # The owner's own statements of a value ("My rent is now £1,210"): in a chat their
                # lines, in a note of theirs every sentence (never a mail or another's note).
                authors = set(owner_labels) if is_chat else ({"I"} if who and who == owner else None)
                stats["statements"] = statements.add_to(parsed, body, authors, max_relations)
        if chosen == "spacy":
            ner.mark_cues(parsed.entities, body)  # the window's vote on each type, weighed
        if endpoint is not None and answered is None:
            if parsed.relations:
                try:
                    with pool.connection() as conn:
                        conn.execute(
                            queries.MERGE_RELATIONS,
                            (
                                window_id,
                                generation,
                                Jsonb(parsed.entities),
                                Jsonb(parsed.relations),
                                Jsonb(labels),
                            ),
                        )
                except psycopg.errors.RaiseException:
                    pass  # the window was re-made or deleted while the model ran
            return
        stats = {**parsed.stats(), **stats}
        try:
            with pool.connection() as conn:
                conn.execute(
                    queries.COMPLETE_EXTRACTION,
                    (
                        message.msg_id,
                        window_id,
                        generation,
                        Jsonb(parsed.entities),
                        Jsonb(parsed.relations),
                        Jsonb(stats),
                        Jsonb(parsed.attributes),
                        Jsonb(labels),
                    ),
                )
        except psycopg.Error as exc:
            # The window was re-made, or another model took the graph over, while the model ran.
            if exc.sqlstate not in (queries.TARGET_GONE, queries.STALE_REPLY):
                raise
            self._skip(pool, "extract", job.ids)
            return
        self._count("done", "extract")

    def _ask_model(
        self, pool: ConnectionPool, settings: dict, job: Job, endpoint: Endpoint, body: str, labels
    ) -> tuple[extraction.Extraction, dict] | None:
        """The chat model's extraction of a window (and the narrow relation pass when
        extraction.relation_pass): what is kept of it and its stats, or None when the model
        failed the job (recorded and archived by _answer)."""
        max_entities = int(settings["extraction.max_entities"])
        max_relations = int(settings["extraction.max_relations"])
        fmt = (
            extraction.response_format(max_entities, max_relations)
            if settings["models.chat"].get("response_format", True)
            else None
        )
        reply = self._answer(
            pool,
            job,
            settings,
            endpoint,
            "chat",
            1,
            "window_id",
            lambda ep: client.chat(
                ep,
                extraction.messages(body),
                max_tokens=int(settings["extraction.max_tokens"]),
                response_format=fmt,
            ),
        )
        if reply is None:
            return None
        parsed = extraction.parse(reply.content, body, max_entities, max_relations, labels)
        stats = {"finish_reason": reply.finish_reason, "completion_tokens": reply.completion_tokens}
        names = [e["name"] for e in parsed.entities]
        if settings.get("extraction.relation_pass", False) and len(names) > 1:
            # The narrow second request: relations only, between the names found.
            second = self._answer(
                pool,
                job,
                settings,
                endpoint,
                "chat",
                1,
                "window_id",
                lambda ep: client.chat(
                    ep,
                    extraction.relation_messages(body, names),
                    max_tokens=int(settings["extraction.max_tokens"]),
                    response_format=extraction.relation_response_format(names, max_relations)
                    if fmt
                    else None,
                ),
            )
            if second is None:
                return None
            added = extraction.parse_relations(second.content, body, parsed, max_entities, max_relations)
            stats["completion_tokens"] += second.completion_tokens
            stats["relation_pass"] = added
        return parsed, stats

    def _ocr(self, pool: ConnectionPool, settings: dict, job: Job) -> None:
        """Read one queued scan with OCR; its documents continue, or end with the error class."""
        (message,) = job.messages
        document_id = _target_id(message.payload, "document_id")
        with pool.connection() as conn:
            row = conn.execute(queries.OCR_JOB, (document_id,)).fetchone()
        if row is None:  # read already (a copy of the same content), changed or deleted since
            self._skip(pool, "ocr", job.ids)
            return
        root, path_bytes, sha, pages = row
        limits = ocr.Settings.from_values(settings)
        try:
            with open(os.path.join(os.fsencode(root), path_bytes), "rb") as f:
                data = f.read(int(settings["ingest.max_file_bytes"]) + 1)
        except OSError as exc:
            self._unread(pool, job, sha, "failed", "unreadable", exc.strerror or str(exc))
            return
        if hashlib.sha256(data).hexdigest() != sha:  # changed since ingest, which reads it again
            self._skip(pool, "ocr", job.ids)
            return
        try:
            tools = ocr.find_tools(self.cfg)
            self._hold(pool, job, min(pages or 1, limits.page_limit) * limits.timeout_s)
            result = ocr.read_pdf(tools, data, pages or 0, limits)
        except ocr.OcrError as exc:
            self._check_abandoned()
            self._unread(pool, job, sha, "failed", exc.error_class, exc.message)
            return
        self._check_abandoned()
        if not result.text:
            self._unread(
                pool, job, sha, "skipped", "empty", f"OCR found no text in {result.pages_read} page(s)"
            )
            return
        seconds = float(settings["ingest.file_timeout_s"])
        try:
            with pool.connection() as conn, transaction(conn):
                waiting = conn.execute(
                    queries.STORE_OCR_TEXT, (sha, result.text, Jsonb(result.metadata(limits)))
                ).fetchall()
                for doc_id, doc_path, metadata in waiting:
                    continue_extracted(conn, doc_id, doc_path, metadata, seconds)
                conn.execute(queries.ARCHIVE_MESSAGES, ("ocr", job.ids))
        except psycopg.errors.QueryCanceled:
            self._unread(
                pool, job, sha, "failed", "timeout",
                f"routing, banding and chunking took over {seconds:g} s (setting ingest.file_timeout_s)",
            )  # fmt: skip
            return
        self._count("done", "ocr")

    def _events(self, pool: ConnectionPool, settings: dict, job: Job) -> None:
        """Read one document for the timeline (extraction/events.py: a note's dated chunks, the
        owner's chat lines) and store its events in place of the old ones, archiving the message
        in the same transaction. Without spaCy's pipeline (extraction.ner 'none', or not
        installed) the document gets no events and the message is archived as skipped."""
        (message,) = job.messages
        document_id = int(message.payload["document_id"])
        if ner.backend(settings.get("extraction.ner", "auto")) != "spacy":
            with pool.connection() as conn:
                conn.execute(queries.ARCHIVE_MESSAGES, ("events", job.ids))
            self._count("skipped", "events")
            return
        with pool.connection() as conn:
            sources = conn.execute(queries.EVENT_SOURCES, (document_id,)).fetchall()
            owner = frozenset(n.casefold() for n in conn.execute(queries.OWNER_NAMES).fetchone()[0])
            note = conn.execute(queries.CALENDAR_NOTE, (document_id,)).fetchone()
        found = events.source_events(sources, owner) + (events.calendar_events(*note, owner) if note else [])
        self._check_abandoned()
        with pool.connection() as conn, transaction(conn):
            conn.execute(queries.STORE_EVENTS, (document_id, Jsonb(found), events.EXTRACTOR))
            conn.execute(queries.ARCHIVE_MESSAGES, ("events", job.ids))
        self._count("done", "events")

    def _capsule(self, pool: ConnectionPool, settings: dict, job: Job) -> None:
        """Build the capsule one message names and archive the message in the same transaction."""
        (message,) = job.messages
        with pool.connection() as conn, transaction(conn):
            job.backend = conn.info.backend_pid
            try:
                built = conn.execute(queries.CAPSULE_JOB, (Jsonb(message.payload),)).fetchone()[0]
            except psycopg.errors.QueryCanceled:
                self._check_abandoned()  # cancelled by the stop (_wind_down): abandoned
                raise
            finally:
                job.backend = None
            self._check_abandoned()
            conn.execute(queries.ARCHIVE_MESSAGES, ("capsules", job.ids))
        self._count("done" if built["status"] == "built" else "skipped", "capsules")

    def _unread(
        self, pool: ConnectionPool, job: Job, sha: str, stage: str, error_class: str, text: str
    ) -> None:
        """A scan OCR could not read: its waiting documents end at stage with the error class, and
        the message is archived in the same transaction."""
        with pool.connection() as conn, transaction(conn):
            conn.execute(queries.END_OCR, (sha, stage, error_class, text))
            conn.execute(queries.ARCHIVE_MESSAGES, ("ocr", job.ids))
        self._count("unread", "ocr")

    def _guarded(self, pool: ConnectionPool, job_fn, settings: dict, job: Job) -> None:
        """Run a job; an unexpected error is recorded and its messages come back after the first
        backoff wait (that read counts: a job that keeps raising ends in the dead-letter queue).
        Either way the job's claims end with it. An abandoned job (the grace period is over)
        leaves all that to the main thread, which gave its messages back."""
        try:
            job_fn(pool, settings, job)
        except EndpointUnavailable:
            raise
        except Exception as exc:
            if self.abort.is_set():
                return
            self._count("errors", job.queue, len(job.messages))
            self._record_failure(pool, job, TARGET_KEYS[job.queue], exc)
            with pool.connection() as conn:
                conn.execute(
                    queries.HIDE_MESSAGES,
                    (job.queue, job.ids, math.ceil(float(settings["worker.retry_backoff_s"][0]))),
                )
        finally:
            if not self.abort.is_set():
                with pool.connection() as conn:
                    conn.execute(queries.RELEASE_CLAIMS, (job.queue, job.ids, self._worker_id))

    # -- the loop -----------------------------------------------------------------------

    def _heartbeat(self, interval_s: float) -> None:
        """Beat until the running jobs have drained; a lost connection is opened again at the next beat."""
        conn: psycopg.Connection | None = None
        try:
            while not self.drained.wait(interval_s):
                with self._lock:
                    processed = sum(self.result.done.values())
                try:
                    if conn is None or conn.closed:
                        conn = psycopg.connect(
                            self.url, application_name=f"exo-worker-heartbeat {self.name}", autocommit=True
                        )
                    conn.execute(queries.BEAT_HEARTBEAT, (processed, self._worker_id))
                except psycopg.OperationalError:
                    if conn is not None:
                        conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()

    def run(self) -> RunResult:
        """Work until the queues are empty (--once) or `stop` is set; then wait for running jobs
        until the grace period ends and abandon those still running (returning without waiting
        for their threads)."""
        app = f"exo-worker {self.name}"
        slots = self.concurrency * len(self.queues)
        # Not a `with` block: leaving one waits for every thread, abandoned jobs too.
        jobs = ThreadPoolExecutor(slots, thread_name_prefix="exo-job")
        pending: set[Future] = set()
        try:
            with (
                psycopg.connect(self.url, application_name=app, autocommit=True) as conn,
                ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=slots,
                    check=ConnectionPool.check_connection,  # one dropped while idle is replaced
                    configure=register_vector,
                    kwargs={"application_name": app, "autocommit": True},
                    open=True,
                ) as pool,
            ):
                listener = Listener(self.url, f"exo-worker-listen {self.name}", self.queues, self.stop)
                listener.open()
                dead_after_s = float(self._settings(conn)["worker.dead_after_s"])
                self._worker_id = conn.execute(
                    queries.REGISTER_WORKER, (self.name, os.getpid(), socket.gethostname(), list(self.queues))
                ).fetchone()[0]
                beat = threading.Thread(
                    target=self._heartbeat,
                    args=(min(HEARTBEAT_MAX_S, dead_after_s / 6),),
                    name="exo-heartbeat",
                    daemon=True,
                )
                beat.start()
                running: dict[Future, Job] = {}
                if self.watch:
                    self.watch.begin(self._backlog(conn))
                try:
                    self._loop(conn, pool, listener, jobs, running)
                finally:
                    pending = self._wind_down(conn, running)
                    beat.join()
                    if self.watch:
                        self.watch.end(self._backlog(conn), self.result)
                    stopped = "drained" if self.once else "stopped"
                    if self.result.unfinished:
                        stopped = f"stopped: {self.result.unfinished} job(s) abandoned at the end of the grace period"
                    conn.execute(
                        queries.RECORD_STOP,
                        (self.result.stop_reason or stopped, sum(self.result.done.values()), self._worker_id),
                    )
                    listener.close()
        finally:
            jobs.shutdown(wait=not pending, cancel_futures=True)
        return self.result

    def _wind_down(self, conn, running: dict[Future, Job]) -> set[Future]:
        """Wait for the running jobs until the grace period ends; abandon those still running
        (their model calls cut off; they write nothing more), their messages visible again at
        once and unclaimed (that read not counted: a stop is not the job's fault). Returns the
        futures of abandoned jobs whose threads still run (held outside a model call)."""
        self.stop.set()
        began = self.stop_requested_at or time.monotonic()
        done, pending = wait(
            running, timeout=max(0.0, began + self.grace_s - STOP_RESERVE_S - time.monotonic())
        )
        for future in done:
            self._settle(future)
        if pending:
            self.abort.set()
            self.result.unfinished = len(pending)
            self.result.calls_cut = sum(running[future].cancel.cancel() for future in pending)
            # A statement in the database calls the model there: cancelled, the server stops
            # waiting for it (the capsule's call asks for interrupts while it waits).
            backends = [b for future in pending if (b := running[future].backend) is not None]
            if backends:
                self.result.calls_cut += conn.execute(queries.CANCEL_BACKENDS, (backends,)).fetchone()[0]
            for future in pending:
                job = running[future]
                returned = conn.execute(queries.RETURN_MESSAGES, (job.queue, job.ids)).fetchone()[0]
                self.result.abandoned[job.queue] += returned
            _, pending = wait(pending, timeout=CUT_WAIT_S)  # what is left runs outside a model call
        self.drained.set()  # the heartbeat stops
        return pending

    def _settle(self, future: Future) -> None:
        error = future.exception()
        if error is not None:  # EndpointUnavailable, or the database itself failing
            if isinstance(error, EndpointUnavailable):
                self.result.endpoint_down = True
                self.result.stop_reason = str(error)
            else:
                self.result.stop_reason = f"{type(error).__name__}: {error}"
            self.stop.set()

    def _reap(self, conn, settings: dict, every_s: float) -> int:
        """Mark workers without a heartbeat dead and take back their messages (at most every `every_s`)."""
        if time.monotonic() - self._last_reap < every_s:
            return 0
        self._last_reap = time.monotonic()
        taken = conn.execute(queries.REAP_WORKERS, (float(settings["worker.dead_after_s"]),)).fetchone()[0]
        self.result.reclaimed += taken
        return taken

    def _messages_left(self, conn, settings: dict) -> tuple[int, int]:
        """(pending, in flight) messages of this worker's queues; tells `progress` what is in flight
        (this worker runs no job when it asks, so others hold them)."""
        dead_after_s = float(settings["worker.dead_after_s"])
        rows = conn.execute(queries.MESSAGES_LEFT, (dead_after_s, list(self.queues))).fetchall()
        pending = sum(n for state, n, _ in rows if state == "pending")
        held = [(state, n, s) for state, n, s in rows if state != "pending"]
        in_flight = sum(n for _, n, _ in held)
        if in_flight and self.progress:
            who = ", ".join(
                f"{n} unclaimed, visible again within {s} s"
                if state == "unclaimed"
                else f"{n} by {state} workers"
                for state, n, s in held
            )
            text = (
                f"waiting for {in_flight} message(s) in flight ({who}); a worker silent for "
                f"{dead_after_s:g} s is dead and its messages are taken back"
            )
            if text != self._last_progress:
                self._last_progress = text
                self.progress(text)
        return pending, in_flight

    def _backlog(self, conn) -> dict[str, int]:
        """Messages in each of this worker's queues, visible or in flight."""
        counts = dict(conn.execute(queries.QUEUE_LENGTHS, (list(self.queues),)).fetchall())
        return {queue: counts.get(queue, 0) for queue in self.queues}

    def _loop(
        self, conn, pool, listener: Listener, jobs: ThreadPoolExecutor, running: dict[Future, Job]
    ) -> None:
        watched = time.monotonic()
        while not self.stop.is_set():
            for future in [f for f in running if f.done()]:
                self._settle(future)
                del running[future]
            if self.stop.is_set():
                break
            if self.watch and time.monotonic() - watched >= WATCH_EVERY_S:
                watched = time.monotonic()
                self.watch.update(self._backlog(conn), self.result)
            if self.limit is not None and self.taken >= self.limit:
                if running:
                    wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
                    continue
                break
            busy = Counter(job.queue for job in running.values())
            free = [q for q in self.queues if busy[q] < self.allowed[q]]
            if not free:
                wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
                continue
            settings = self._settings(conn)
            submitted = False
            for queue in free:  # in the order of PRIORITY
                if self.limit is not None and self.taken >= self.limit:
                    break
                qty = int(settings["worker.embed_batch"]) if queue == "embed" else 1
                if self.limit is not None:
                    qty = min(qty, self.limit - self.taken)
                job = self._read(conn, queue, qty, settings)
                if job is None:
                    continue
                self.taken += len(job.messages)
                job_fn = {
                    "embed": self._embed,
                    "extract": self._extract,
                    "ocr": self._ocr,
                    "events": self._events,
                    "capsules": self._capsule,
                }[queue]
                running[jobs.submit(self._guarded, pool, job_fn, settings, job)] = job
                submitted = True
            if submitted:
                continue
            # Nothing visible: take back what dead workers held, then wait for work.
            if self._reap(
                conn, settings, every_s=min(HEARTBEAT_MAX_S, float(settings["worker.dead_after_s"]) / 6)
            ):
                continue
            if running:
                wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
                continue
            if self.once:
                pending, in_flight = self._messages_left(conn, settings)
                if pending:  # became visible since the read: read again at once
                    continue
                if not in_flight:
                    break
            listener.wait(self.poll_s)
