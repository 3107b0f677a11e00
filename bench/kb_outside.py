"""Benchmark: the lifecycle retriever's one database call (exo.kb_outside_retrieve) with 1,000
claimed outside documents against an empty base, on real text, the personal stage by meaning.

A scratch database gets a profile, with its login role (a member of exo_reader: a session of it
is the profile), whose base knows --claimed outside documents, all claimed:
each is a text file under --docs (e.g. a folder of package documentation: README, changelog,
copyright files, gzip or plain), keyed by its path under --docs, titled by its first line,
with its first 8 paragraphs (at most 2,000 characters each) as the passages its retriever
returned, recorded through exo_private.kb_outside_write (as the admin, naming the profile) as the
wrapper records them. A second profile starts with an empty base (the baseline: the personal stage
has nothing saved to search; its base learns only what the calls return). The run's own MiniLM
server embeds the passages through `exo worker` (the embed messages the recording sent).
Questions: half are three words of a claimed document's passage (a recurring interest: the
personal stage finds it), half three words of a file that is not in the base.

Each call passes the same 5 passages as what the wrapped retriever returned and records them,
in a read-write transaction in a session of the profile's login role (as LifecycleRetriever does
with profile=NAME: the call takes no profile, the session is one). The claimed base is asked
twice per question: with the question embedded by the database (exo.embed_query, as the wrappers
call it) and with the caller's vector (query_embedding, embedded before timing: the database's
own work). Warmed first, then rounds that interleave the profiles; prints p50/p95 of each and
their ratio to the baseline, how many calls the base answered by meaning and by words, and the
plans of the personal stage's statement (auto_explain: EXPLAIN ANALYZE of the nested statements,
in an admin session that loads it and then takes the profile's role as its session user).

    .venv/bin/python -m bench.kb_outside --docs DIR [--claimed 1000] [--queries 40] [--rounds 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import tempfile
from contextlib import ExitStack
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from bench.scratch import serve_embeddings_from
from bench.search_latency import p, timed
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.models import services
from exocortex.ops import profiles
from exocortex.ops.migrate import scratch_database
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker
from tests.support.models import EMBEDDING_MODEL, free_ports

CALL = "select exo.kb_outside_retrieve(%s, %s, 5, %s)"
#: The profiles' recording caps, lifted: the base is filled with 1,000 documents in a few seconds.
WRITE_CAPS = (
    "kb.writes_per_minute",
    "kb.write_rows_per_minute",
    "kb.write_bytes_per_minute",
    "kb.embeddings_per_minute",
)


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace")


def documents(root: Path, wanted: int, rng: random.Random) -> list[dict]:
    """Up to `wanted` text files under root with at least 3 paragraphs: {key, title, passages}."""
    paths = sorted(
        f
        for f in root.rglob("*")
        if f.is_file() and not f.is_symlink() and f.suffix in ("", ".gz", ".txt", ".md")
    )
    rng.shuffle(paths)
    found = []
    for path in paths:
        try:
            text = read_text(path)
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        if "\x00" in text or text.count("\ufffd") > 10:  # not text
            continue
        paragraphs = [" ".join(x.split())[:2000] for x in re.split(r"\n\s*\n", text) if len(x.split()) >= 8]
        if len(paragraphs) >= 3:
            title = text.strip().splitlines()[0][:200]
            found.append({"key": str(path.relative_to(root)), "title": title, "passages": paragraphs[:8]})
        if len(found) == wanted:
            break
    return found


def question(doc: dict, rng: random.Random) -> str:
    words = [w for w in re.findall(r"[A-Za-z]{5,}", rng.choice(doc["passages"]))]
    return " ".join(rng.sample(words, min(3, len(words)))) if words else doc["title"]


def know(admin: psycopg.Connection, who: str, docs: list[dict]) -> None:
    """The profile's base knows the documents, recorded through the wrapper's own write path."""
    for n in range(0, len(docs), 25):  # 25 documents of at most 8 passages: within the 200 a call
        batch = docs[n : n + 25]
        passages = [{"key": d["key"], "title": d["title"], "text": t} for d in batch for t in d["passages"]]
        keys = [d["key"] for d in batch]
        admin.execute("select exo_private.kb_outside_write(%s, 'use', %s, %s)", (who, keys, Jsonb(passages)))


def explain_call(
    admin: psycopg.Connection, role: str, query: str, returned: Jsonb, vector: list[float]
) -> tuple[list[str], list[str]]:
    """The plan of the personal stage's statement inside a wrapper call of the profile whose login
    role is `role`, and the summary lines of the recording's updates and deletes (auto_explain of
    the nested statements). Only a superuser loads auto_explain and sets it: the admin's session
    does, then takes the profile's role as its session user for the call's transaction (the call
    reads the profile from session_user), so the call runs as the profile's own session would."""
    plans: list[str] = []
    admin.add_notice_handler(lambda diag: plans.append(diag.message_primary or ""))
    admin.execute("load 'auto_explain'")
    for setting, value in [
        ("log_min_duration", "0"),
        ("log_nested_statements", "on"),
        ("log_analyze", "on"),
        ("log_buffers", "on"),
    ]:
        admin.execute(f"set auto_explain.{setting} = {value}")
    admin.execute("set client_min_messages = log")
    with admin.transaction():
        admin.execute(sql.SQL("set local session authorization {}").format(sql.Identifier(role)))
        admin.execute(CALL, (query, returned, vector))
        raise psycopg.Rollback
    admin.execute("reset client_min_messages")
    admin.execute("set auto_explain.log_min_duration = -1")
    kept = [plan for plan in plans if "kb_outside_passages ps" in plan and "matched as" in plan]
    personal = kept[0].splitlines() if kept else ["(no plan of the personal stage was logged)"]
    # the call's count of saved documents and of their passages without a vector
    counted = [plan for plan in plans if "count(distinct i.outside_id)" in plan]
    personal += ["", "the saved passages' count:"] + (
        counted[0].splitlines() if counted else ["(not logged)"]
    )
    # The recording's statements on the base's rows: their duration and how they reach the rows.
    recording = [
        line
        for plan in plans
        if ("update exo_private.kb_items" in plan or "exo_private.kb_outside_passages s" in plan)
        and "kb_outside_write" not in plan.splitlines()[0]
        for line in plan.splitlines()
        if "duration" in line or "Scan" in line or "Update on" in line or "Delete on" in line
    ]
    return personal, recording


def measure(
    cfg,
    name: str,
    endpoint: Endpoint,
    claimed: list[dict],
    queries: list[str],
    vectors: list,
    returned: Jsonb,
    rounds: int,
) -> tuple[dict[str, list[float]], dict[str, int], list[str], list[str]]:
    """The scratch database's profiles with their login roles, the worker's embedding of the
    passages, and the timed calls, each in a session of its profile's role."""
    with connect(admin_url(cfg, name), "exo-bench-kb-outside", autocommit=True) as admin:
        serve_embeddings_from(admin, endpoint.url)
        for cap in WRITE_CAPS:
            admin.execute("select exo_private.set_setting(%s, '1000000')", (cap,))
        roles = {who: profiles.ensure(admin, cfg, who) for who in ("saved", "baseline")}
        know(admin, "saved", claimed)
        admin.execute(
            """update exo_private.kb_items i set state = 'claimed'
               from exo_private.kb_profiles p where p.id = i.profile_id and p.name = 'saved'"""
        )
    Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.05).run()
    with connect(admin_url(cfg, name), "exo-bench-kb-outside", autocommit=True) as admin:
        embedded = admin.execute("select count(*) from exo_private.kb_outside_passage_embeddings").fetchone()[
            0
        ]
        print(f"passages embedded by the worker: {embedded:,}")
        admin.execute(
            "analyze exo_private.kb_items, exo_private.kb_outside_documents, exo_private.kb_outside_passages, "
            "exo_private.kb_outside_passage_embeddings"
        )
    timings: dict[str, list[float]] = {"saved": [], "caller": [], "baseline": []}
    hits = {"similarity": 0, "keyword": 0, "none": 0}
    with ExitStack() as stack:
        sessions = {
            who: stack.enter_context(
                connect(role_url(cfg, role, name), "exo-bench-kb-outside", autocommit=True)
            )
            for who, role in roles.items()
        }
        for who, conn in sessions.items():
            if conn.execute("select exo.profile()").fetchone()[0] != who:
                raise SystemExit(f"a session of {roles[who]} is expected to be profile {who!r}")

        def call(who: str, query: str, vector: list[float] | None) -> dict:
            conn = sessions[who]
            with conn.transaction():
                conn.execute("set transaction read write")
                return conn.execute(CALL, (query, returned, vector)).fetchone()[0]

        runs = [("saved", "saved", False), ("caller", "saved", True), ("baseline", "baseline", False)]
        for _, who, by_caller in runs:  # warm-up
            for query, vector in zip(queries[:5], vectors[:5], strict=True):
                call(who, query, vector if by_caller else None)
        for _ in range(rounds):
            for query, vector in zip(queries, vectors, strict=True):
                for label, who, by_caller in runs:
                    ms, found = timed(
                        lambda who=who, query=query, v=(vector if by_caller else None): call(who, query, v)
                    )
                    timings[label].append(ms)
                    if label == "saved":
                        matched = {r.get("match") for r in found["results"] if r["from"] == "personal"}
                        hits[
                            "similarity" if "similarity" in matched else "keyword" if matched else "none"
                        ] += 1
    with connect(admin_url(cfg, name), "exo-bench-kb-outside", autocommit=True) as admin:
        plan, recording = explain_call(admin, roles["saved"], queries[0], returned, vectors[0])
    return timings, hits, plan, recording


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--docs", type=Path, required=True, help="a folder of text files (the outside documents)"
    )
    parser.add_argument("--claimed", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cfg = config.load()
    docs = documents(args.docs, args.claimed + args.queries, rng)
    if len(docs) < args.claimed + args.queries // 2:
        raise SystemExit(
            f"--docs holds only {len(docs)} usable text files, need {args.claimed + args.queries // 2}"
        )
    claimed, outside = docs[: args.claimed], docs[args.claimed :]
    queries = [question(rng.choice(claimed), rng) for _ in range(args.queries // 2)]
    queries += [question(outside[n % len(outside)], rng) for n in range(args.queries - len(queries))]
    rng.shuffle(queries)
    returned = Jsonb([{"key": d["key"], "title": d["title"], "text": d["passages"][0]} for d in outside[:5]])
    passages = sum(len(d["passages"]) for d in claimed)
    print(f"outside documents: {len(claimed):,} claimed, {passages:,} passages; {len(queries)} questions")

    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-kb-outside-"))
    (port,) = free_ports(1)
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", EMBEDDING_MODEL, 60.0, {"dimensions": 384})
        vectors = client.embed(endpoint, queries)
        with scratch_database(cfg, "bench_kb_outside") as name:
            timings, hits, plan, recording = measure(
                cfg, name, endpoint, claimed, queries, vectors, returned, args.rounds
            )
    finally:
        services.down(cfg, run_dir=run_dir)

    baseline = timings["baseline"]
    print(
        f"\nexo.kb_outside_retrieve, {len(queries)} questions x {args.rounds} rounds, each profile's own login:"
    )
    print(
        f"  empty base (baseline)                    p50 {p(baseline, 0.5):.1f} ms  p95 {p(baseline, 0.95):.1f} ms"
    )
    for label, what in [
        ("saved", "question embedded by the database"),
        ("caller", "the caller's query_embedding"),
    ]:
        times = timings[label]
        print(
            f"  {len(claimed):,} claimed, {what:34} p50 {p(times, 0.5):.1f} ms  p95 {p(times, 0.95):.1f} ms "
            f"({p(times, 0.5) / p(baseline, 0.5):.2f}x at p50, {p(times, 0.95) / p(baseline, 0.95):.2f}x at p95)"
        )
    print(
        f"  calls of the claimed base with a personal hit: {hits['similarity']} by meaning, "
        f"{hits['keyword']} by words only, {hits['none']} none, of {len(timings['saved'])}"
    )
    print("\npersonal stage plan (auto_explain, the caller's vector):\n  " + "\n  ".join(plan))
    print("\nrecording (kb_outside_write 'use'), plan lines:\n  " + "\n  ".join(recording))
    ratios = {label: round(p(timings[label], 0.5) / p(baseline, 0.5), 2) for label in ("saved", "caller")}
    print(json.dumps({"p50_ratio": ratios}))


if __name__ == "__main__":
    main()
