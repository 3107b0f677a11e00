"""Benchmark: evidence recall of the context packet over long chat histories, against plain BM25 and
vector search over single messages.

For each size (conversations of bench/chat_histories.py, about 150-300 messages each), a scratch
database imports the generated JSONL export the way `exo import-chat FILE --format jsonl` does
(exocortex.ingest.chat.import_chat as exo_writer, into the setting chat.workspace, "personal"),
and the worker drains the embed queue with the real MiniLM embeddings (one embedding server for
the run). Graph extraction is skipped (the extract queue is left as it is): on CPU it takes
seconds a window, hours for these sizes. Then, for every question:

  packet       exo.context_packet_json(question, query_embedding => its vector) as exo_reader:
               does the packet's text hold an answering message's text? tokens: the packet's own
               count. `cited`: does it cite a chat window holding an answering message (retrieval
               found it, whether or not the excerpt kept the line)?
  bm25@10/25   a BM25 index (pg_textsearch) on a scratch table of the single messages, each as
               "Sender: text"; tokens: characters/4 of the returned messages
  vector@10    the same messages embedded by the same model, exact cosine top 10

A question is found when at least one answering message is returned (for "across sessions"
questions, `both` also counts those where every answering message is). The goal (issue 13):
the packet holds the answer more often than BM25 top-25 while using fewer tokens than it.

    .venv/bin/python -m bench.chat_recall [--sizes 10 100] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from pgvector import Vector

from bench.chat_histories import KINDS, History, Question, generate, write
from bench.scratch import serve_embeddings_from
from exocortex import config
from exocortex.db import admin_url, connect, register_vector, role_url
from exocortex.ingest.chat import import_chat
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker
from tests.support.models import free_ports

MODEL, DIMENSIONS = "all-MiniLM-L6-v2", 384
METHODS = ("packet", "bm25@10", "bm25@25", "vector@10")
EMBED_BATCH = 64
PACKET = "select exo.context_packet_json(%s, query_embedding => %s::float8[])"
BM25 = (
    "select ordinal from bench_messages "
    "order by body operator(public.<@>) public.to_bm25query(%s, 'bench_messages_bm25') limit %s"
)
NEAREST = "select ordinal from bench_messages order by embedding operator(public.<=>) %s limit %s"


@dataclass
class Outcome:
    """One method's answer to one question."""

    found: bool
    both: bool
    tokens: int


@dataclass
class SizeResult:
    conversations: int
    messages: int
    windows: int
    import_s: float
    embed_s: float
    embedded: int
    outcomes: dict[str, list[tuple[Question, Outcome]]] = field(default_factory=dict)
    cited: int = 0
    old_only: int = 0
    """'What is true now' questions whose packet holds an old value's message but no current one."""
    packet_ms: list[float] = field(default_factory=list)
    message_tokens: float = 0.0
    """Mean tokens (characters/4) of a message as the baselines index it ("Sender: text")."""
    misses: list[str] = field(default_factory=list)
    plan: str = ""
    """--explain: the participant stage's query plan for the first question."""
    """The first packets that missed (--show): the question, its answer, the packet's text."""


@contextmanager
def embedding_endpoint(cfg: config.Config, run_dir: Path) -> Iterator[Endpoint]:
    """The real MiniLM embedding server on a free port for one benchmark run, as an Endpoint;
    stopped afterwards."""
    (port,) = free_ports(1)
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        yield Endpoint(f"http://127.0.0.1:{port}/v1", MODEL, 60.0, {"dimensions": DIMENSIONS})
    finally:
        services.down(cfg, run_dir=run_dir)


def load_note() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"{os.cpu_count()} cores, load {one:.2f} / {five:.2f}"


def tokens(texts: list[str]) -> int:
    return sum((len(t) + 3) // 4 for t in texts)


def embed_all(endpoint: Endpoint, texts: list[str]) -> list[list[float]]:
    out: list[list[float]] = []
    for i in range(0, len(texts), EMBED_BATCH):
        out.extend(client.embed(endpoint, texts[i : i + EMBED_BATCH]))
    return out


def baseline_table(admin, history: History, vectors: list[list[float]]) -> None:
    """bench_messages: one row per message ("Sender: text"), a BM25 index and its vector."""
    register_vector(admin)
    admin.execute(
        f"create table public.bench_messages (ordinal int primary key, body text not null, "
        f"embedding public.vector({DIMENSIONS}) not null)"
    )
    with admin.cursor().copy("copy public.bench_messages (ordinal, body, embedding) from stdin") as copy:
        for m, v in zip(history.messages, vectors, strict=True):
            copy.write_row((m.ordinal, f"{m.sender}: {m.text}", Vector(v)))
    admin.execute(
        "create index bench_messages_bm25 on public.bench_messages using bm25 (body) "
        "with (text_config = 'english')"
    )
    admin.execute("analyze public.bench_messages")


def outcome(q: Question, returned: list[int], texts: dict[int, str]) -> Outcome:
    got = set(returned)
    return Outcome(
        found=bool(got & set(q.answers)),
        both=set(q.answers) <= got,
        tokens=tokens([texts[o] for o in returned]),
    )


def measure_size(
    cfg: config.Config,
    conversations: int,
    seed: int,
    endpoint: Endpoint,
    run_dir: Path,
    show: int,
    overrides: dict[str, str],
    explain: bool = False,
) -> SizeResult:
    history = generate(conversations, seed, datetime.now(UTC).date())
    export, _questions = write(history, run_dir / f"chats-{conversations}")
    by_ordinal = {m.ordinal: m for m in history.messages}
    indexed = {m.ordinal: f"{m.sender}: {m.text}" for m in history.messages}
    print(f"[{conversations}] {len(history.messages):,} messages, {len(history.questions)} questions "
          f"({load_note()})", flush=True)  # fmt: skip

    with scratch_database(cfg, f"bench_chat_recall_{conversations}") as name:
        with connect(admin_url(cfg, name), "exo-bench-chat-recall", autocommit=True) as admin:
            serve_embeddings_from(admin, endpoint.url)
            for key, value in overrides.items():
                admin.execute("select exo_private.set_setting(%s, %s::jsonb)", (key, value))

        began = time.perf_counter()
        with connect(role_url(cfg, "exo_writer", name), "exo-bench-chat-import", autocommit=True) as writer:
            import_chat(writer, export, "jsonl")
        import_s = time.perf_counter() - began
        print(f"[{conversations}] imported in {import_s:.1f} s; embedding the windows ...", flush=True)

        began = time.perf_counter()
        done = Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run().done["embed"]
        embed_s = time.perf_counter() - began

        with connect(admin_url(cfg, name), "exo-bench-chat-recall", autocommit=True) as admin:
            rows = admin.execute(
                "select w.chunk_id, array_agg(m.external_id::int) from exo_private.chat_windows w "
                "join exo_private.chat_messages m on m.id = any(w.message_ids) group by 1"
            ).fetchall()
            windows = {chunk: set(ordinals) for chunk, ordinals in rows}
            print(f"[{conversations}] {len(windows):,} windows, {done:,} embedded in {embed_s:.0f} s; "
                  "embedding the single messages ...", flush=True)  # fmt: skip
            vectors = embed_all(endpoint, [indexed[m.ordinal] for m in history.messages])
            baseline_table(admin, history, vectors)
            q_vectors = embed_all(endpoint, [q.question for q in history.questions])

            result = SizeResult(conversations, len(history.messages), len(windows), import_s, embed_s, done)
            result.outcomes = {m: [] for m in METHODS}
            result.message_tokens = statistics.fmean(len(t) / 4 for t in indexed.values())
            with connect(
                role_url(cfg, "exo_reader", name), "exo-bench-chat-recall", autocommit=True
            ) as reader:
                for q, vec in zip(history.questions, q_vectors, strict=True):
                    began = time.perf_counter()
                    packet = reader.execute(PACKET, (q.question, vec)).fetchone()[0]
                    result.packet_ms.append((time.perf_counter() - began) * 1000)
                    text = packet["text"]
                    held = [a for a in q.answers if by_ordinal[a].text in text]
                    result.outcomes["packet"].append(
                        (q, Outcome(bool(held), len(held) == len(q.answers), packet["tokens"]))
                    )
                    cited = set().union(*(windows.get(u.get("chunk_id"), set()) for u in packet["used"]))
                    result.cited += bool(cited & set(q.answers))
                    if not held and len(result.misses) < show:
                        answer = by_ordinal[q.answers[0]]
                        result.misses.append(
                            f"{q.question}  [{q.kind}; answer: {answer.sent_at:%Y-%m-%d %H:%M} {answer.sender}: "
                            f"{answer.text}]\n{text}"
                        )
                    if q.old_answers and not held:
                        result.old_only += any(by_ordinal[a].text in text for a in q.old_answers)

                    top = [r[0] for r in admin.execute(BM25, (q.question, 25), prepare=True)]
                    result.outcomes["bm25@10"].append((q, outcome(q, top[:10], indexed)))
                    result.outcomes["bm25@25"].append((q, outcome(q, top, indexed)))
                    near = [r[0] for r in admin.execute(NEAREST, (Vector(vec), 10), prepare=True)]
                    result.outcomes["vector@10"].append((q, outcome(q, near, indexed)))
            if explain:
                result.plan = participant_plan(admin, history.questions[0].question, q_vectors[0])
    return result


def participant_plan(admin, question: str, vector: list[float]) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the participant stage's query for one question, as a search
    of the personal workspace runs it (a prepared statement, present bands, as of today)."""
    model_id, dimensions = admin.execute(
        "select id, dimensions from exo_private.embedding_models order by id desc limit 1"
    ).fetchone()
    text = admin.execute(
        "select exo_private.stage_sql('participant', 'personal', %s, %s)", (model_id, dimensions)
    ).fetchone()[0]
    admin.execute(f"prepare participant_stage (text, text[], date, int, text[]) as {text}")
    cur = psycopg.ClientCursor(admin)  # EXECUTE's arguments are written as literals
    words = [w.casefold() for w in re.findall(r"\w+", question)]  # the one-word name keys
    args = (str(vector), ["current", "recent"], datetime.now(UTC).date(), 8, words)
    cur.execute("explain (analyze, buffers) execute participant_stage (%s, %s, %s, %s, %s)", args)
    admin.execute("deallocate participant_stage")
    plan = "\n".join(r[0] for r in cur.fetchall())
    return f"participant stage for {question!r}:\n" + re.sub(r"'\[[-+0-9.e,]+\]'", "'[vector]'", plan)


def share(values: list[bool]) -> str:
    return f"{sum(values) / len(values):4.0%}" if values else "   -"


def print_size(r: SizeResult) -> None:
    print()
    print(f"== {r.conversations} conversations: {r.messages:,} messages ({r.message_tokens:.1f} tokens each on "
          f"average), {r.windows:,} chat windows; import "
          f"{r.import_s:.1f} s ({r.messages / r.import_s:,.0f} messages/s), embed queue {r.embedded:,} chunks "
          f"in {r.embed_s:.0f} s; context_packet_json p50 {statistics.median(r.packet_ms):.0f} ms")  # fmt: skip
    header = f"  {'question kind':<18}{'n':>4}" + "".join(f"  {m:>9} recall tok" for m in METHODS)
    print(header)
    for kind in (*KINDS, "all"):
        row = f"  {kind:<18}"
        for i, method in enumerate(METHODS):
            rows = [o for q, o in r.outcomes[method] if kind in ("all", q.kind)]
            if i == 0:
                row += f"{len(rows):>4}"
            med = statistics.median(o.tokens for o in rows) if rows else 0
            row += f"  {'':>4}{share([o.found for o in rows])} {med:5.0f}"
        print(row)
    across = {m: [o.both for q, o in r.outcomes[m] if q.kind == "across sessions"] for m in METHODS}
    print("  across sessions, every answering message held: "
          + ", ".join(f"{m} {share(v).strip()}" for m, v in across.items()))  # fmt: skip
    n = len(r.outcomes["packet"])
    print(f"  packet cites a window holding an answering message: {r.cited}/{n}; 'what is true now' packets "
          f"holding only the old value: {r.old_only}")  # fmt: skip
    packet, bm25 = r.outcomes["packet"], r.outcomes["bm25@25"]
    p_recall, b_recall = (sum(o.found for _, o in rows) / n for rows in (packet, bm25))
    p_tokens, b_tokens = (statistics.median(o.tokens for _, o in rows) for rows in (packet, bm25))
    met = p_recall > b_recall and p_tokens < b_tokens
    for miss in r.misses:
        print("  -- packet miss: " + miss.replace("\n", "\n     | "))
    print(f"  goal: packet recall above BM25 top-25 ({p_recall:.0%} vs {b_recall:.0%}) with fewer tokens "
          f"(median {p_tokens:.0f} vs {b_tokens:.0f}): {'met' if met else 'MISSED'}")  # fmt: skip
    if r.plan:
        print("  " + r.plan.replace("\n", "\n     | "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100], help="conversations per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=0, help="print this many packets that missed")
    parser.add_argument("--explain", action="store_true", help="print the participant stage's query plan")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a setting for the scratch database (e.g. chat.window_max_chars=600), to compare choices",
    )
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-chat-recall-"))
    (port,) = free_ports(1)
    print(
        f"{datetime.now():%Y-%m-%d %H:%M}, {load_note()}"
        + "".join(f"; {k} = {v}" for k, v in overrides.items()),
        flush=True,
    )
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", MODEL, 60.0, {"dimensions": DIMENSIONS})
        for size in args.sizes:
            print_size(
                measure_size(cfg, size, args.seed, endpoint, run_dir, args.show, overrides, args.explain)
            )
    finally:
        services.down(cfg, run_dir=run_dir)
    print(f"\nfinished with {load_note()}")


if __name__ == "__main__":
    main()
