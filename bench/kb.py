"""Benchmark: the personal knowledge base (issue 17): search latency with a profile against
without, and the daily decay over many user-document rows.

A scratch database gets the synthetic corpus of bench/search_corpus.py with its seeded
random unit vectors (no embedding server: on a shared machine the MiniLM pass dominates the
build) and a profile 'bench' with its login role (a member of exo_reader) and --claimed
claimed documents, drawn at random. The query mix of bench/search_latency.py then runs, each
query with a vector given: for half of them a chunk of a claimed document's own vector (a
recurring interest: the personal stage finds it), for the other half an unclaimed chunk's
(every claimed document is checked and misses). Warmed first, then rounds that interleave the
two ways of asking the same select ... from exo.search(q, query_embedding => v):

  without     as exo_reader, which has no profile                          (read-only)
  with        in a session of the profile's login role (a session of it is the profile), in a
              read-write transaction: the personal stage over the claimed documents, the
              search recorded (exo_private.kb_write) and the provenance block built

and prints p50/p95 of each and their ratio (goal: under 1.3x). The personal stage's SQL is
run under EXPLAIN (ANALYZE, BUFFERS) for the largest workspace with the profile's claimed
documents there; its summary is printed.

Decay: --rows user-document rows (profiles of up to one row per document, states, fetch
counts, thumbs and last fetches drawn at random) are scored by exo_private.kb_decay() as the
pg_cron job runs it, twice, and, in the same run, a plain full-table update of the same rows
(the baseline) is timed: the decay's time is printed in seconds and as a ratio to it.

    .venv/bin/python -m bench.kb [--chunks 100000] [--claimed 1000] [--rows 100000] [--queries 40]
    [--rounds 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from datetime import datetime

import psycopg
from psycopg import sql

from bench.scratch import serve_embeddings_from
from bench.search_corpus import DIMENSIONS, build_corpus
from bench.search_latency import p, query_mix, reader, timed
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ops import profiles
from exocortex.ops.migrate import scratch_database

PROFILE = "bench"
SEARCH = "select rank, chunk_id, body from exo.search(%s, query_embedding => %s::float8[])"
#: The profiles' recording caps (per minute), lifted: the timed searches record many times a minute.
WRITE_CAPS = ("kb.writes_per_minute", "kb.write_rows_per_minute", "kb.write_bytes_per_minute")


def claim(admin: psycopg.Connection, cfg: config.Config, claimed: int, seed: int) -> str:
    """A profile with its login role and `claimed` claimed documents drawn at random (seeded),
    fetched 3 to 12 times; the role."""
    role = profiles.ensure(admin, cfg, PROFILE)
    for cap in WRITE_CAPS:
        admin.execute("select exo_private.set_setting(%s, '1000000')", (cap,))
    admin.execute("select setseed(%s)", (seed / 1000,))
    admin.execute(
        """insert into exo_private.kb_items (profile_id, document_id, state, fetch_count, last_fetched_at,
                                            next_suggestion_at, state_changed_at)
           select p.id, d.id, 'claimed', 3 + (random() * 9)::int, now() - random() * interval '20 days', 3, now()
           from exo_private.kb_profiles p
           cross join lateral (select d.id from exo_private.documents d
                               where exists (select 1 from exo_private.chunks c where c.document_id = d.id)
                               order by random() limit %s) d
           where p.name = %s""",
        (claimed, PROFILE),
    )
    return role


def explain_personal(admin: psycopg.Connection, vector: list[float]) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS) of the personal stage in the workspace with most claimed documents."""
    ws, saved = admin.execute(
        """select d.workspace, array_agg(i.document_id) from exo_private.kb_items i
           join exo_private.documents d on d.id = i.document_id
           join exo_private.kb_profiles p on p.id = i.profile_id and p.name = %s
           group by 1 order by count(*) desc limit 1""",
        (PROFILE,),
    ).fetchone()
    model = admin.execute("select exo_private.active_embedding_model()").fetchone()[0]
    text = admin.execute(
        "select exo_private.stage_sql('personal', %s, %s, %s)", (ws, model, DIMENSIONS)
    ).fetchone()[0]
    # $5: the released subjects' keys (none released); then the personal stage's own parameters.
    admin.execute(f"prepare personal (text, text[], date, int, text[], bigint[], float8, int) as {text}")
    # EXECUTE takes no bind parameters: the arguments as literals.
    execute = sql.SQL(
        "execute personal({}::text, array['current', 'recent'], current_date, 30, null, {}::bigint[], 0.75, 3)"
    ).format(sql.Literal(str(vector)), sql.Literal(saved))
    plan = admin.execute(sql.SQL("explain (analyze, buffers) ") + execute).fetchall()
    # A stage prepared in a session (plpy) runs the generic plan after five calls.
    p50 = {}
    for mode in ("force_custom_plan", "force_generic_plan"):
        admin.execute(f"set plan_cache_mode = {mode}")
        p50[mode] = p([timed(lambda: admin.execute(execute).fetchall())[0] for _ in range(5)], 0.5)
    admin.execute("reset plan_cache_mode")
    admin.execute("deallocate personal")
    return [
        f"{ws}: {len(saved)} claimed documents; executed 5 times: p50 {p50['force_custom_plan']:.1f} ms "
        f"with a custom plan, {p50['force_generic_plan']:.1f} ms with the generic plan"
    ] + [re.sub(r"'\{[0-9,]{80,}\}'", "'{...}'", re.sub(r"'\[[^']*\]'", "'[...]'", row[0])) for row in plan]


def query_vectors(admin: psycopg.Connection, n: int) -> list[list[float]]:
    """n vectors, alternately a claimed document's chunk's and an unclaimed one's (seeded order)."""
    rows = admin.execute(
        """(select e.embedding::text, 0 as claimed from exo_private.chunk_embeddings e
            join exo_private.chunks c on c.workspace = e.workspace and c.id = e.chunk_id
            where c.document_id in (select document_id from exo_private.kb_items)
            order by c.id limit %s)
           union all
           (select e.embedding::text, 1 from exo_private.chunk_embeddings e
            join exo_private.chunks c on c.workspace = e.workspace and c.id = e.chunk_id
            where c.document_id not in (select document_id from exo_private.kb_items)
            order by c.id limit %s)
           order by 2""",
        (n - n // 2, n // 2),
    ).fetchall()
    claimed, other = [r[0] for r in rows if r[1] == 0], [r[0] for r in rows if r[1] == 1]
    return [json.loads(claimed[i // 2] if i % 2 == 0 else other[i // 2]) for i in range(n)]


def explain_recording(admin: psycopg.Connection) -> list[str]:
    """The plans of a search's recording (exo_private.kb_write 'use', 25 documents) for the profile
    with the most rows, through auto_explain (nested statements, sent to the client as notices)."""
    who, documents = admin.execute(
        """select p.name, (array_agg(i.document_id order by i.document_id))[1:25] from exo_private.kb_items i
           join exo_private.kb_profiles p on p.id = i.profile_id group by p.name order by count(*) desc limit 1"""
    ).fetchone()
    plans: list[str] = []
    admin.add_notice_handler(lambda diag: plans.append(diag.message_primary or ""))
    admin.execute("load 'auto_explain'")
    for setting, value in [("log_min_duration", "0"), ("log_nested_statements", "on"), ("log_analyze", "on")]:
        admin.execute(f"set auto_explain.{setting} = {value}")
    admin.execute("set client_min_messages = log")
    with admin.transaction():
        admin.execute("select exo_private.kb_write(%s, 'use', %s)", (who, documents))
        raise psycopg.Rollback
    admin.execute("reset client_min_messages")
    admin.execute("set auto_explain.log_min_duration = -1")
    kept = [line for plan in plans if "kb_items" in plan for line in plan.splitlines()]
    return [line for line in kept if "Query Text" in line or "Scan" in line or "Execution Time" in line
            or "Update on" in line]  # fmt: skip


def decay_rows(admin: psycopg.Connection, rows: int, seed: int) -> int:
    """`rows` more user-document rows over as many profiles as it takes (one row per document each)."""
    documents = admin.execute("select count(*) from exo_private.documents").fetchone()[0]
    profiles = -(-rows // documents)
    admin.execute("select setseed(%s)", (seed / 1000,))
    for n in range(profiles):
        admin.execute("select exo_private.kb_add_profile(%s)", (f"decay-{n}",))
    admin.execute(
        """insert into exo_private.kb_items (profile_id, document_id, state, fetch_count, thumbs, cache_checks,
                                            cache_hits, last_fetched_at, next_suggestion_at, state_changed_at)
           select p.id, d.id,
                  (array['surfaced', 'suggested', 'claimed', 'pinned', 'demoted'])[1 + (random() * 4)::int]
                      ::exo_private.kb_state,
                  (random() * 30)::int, (random() * 2)::int - 1, 10, (random() * 10)::int,
                  now() - random() * interval '90 days', 3, now()
           from (select id, row_number() over (order by id) - 1 as n
                 from exo_private.kb_profiles where name like 'decay-%%') p
           cross join lateral (select d.id from exo_private.documents d order by d.id
                               limit least(%s, %s - p.n * %s)) d""",
        (documents, rows, documents),
    )
    admin.execute("analyze exo_private.kb_items")
    return admin.execute("select count(*) from exo_private.kb_items").fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--claimed", type=int, default=1_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cfg = config.load()
    print(
        f"{datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True
    )
    with scratch_database(cfg, "bench_kb") as name:
        with connect(admin_url(cfg, name), "exo-bench-kb", autocommit=True) as admin:
            began = time.perf_counter()
            info = build_corpus(admin, args.chunks, args.seed)
            serve_embeddings_from(admin, "http://127.0.0.1:9/v1")  # lifts the reader's budgets; never called
            role = claim(admin, cfg, args.claimed, args.seed)
            admin.execute("vacuum analyze")
            print(f"corpus: {info.chunks:,} chunks, {info.documents:,} documents, built in "
                  f"{time.perf_counter() - began:.0f} s; {args.claimed} claimed", flush=True)  # fmt: skip
            queries = query_mix(info, args.queries, args.seed)
            vectors = dict(zip([q.text for q in queries], query_vectors(admin, len(queries)), strict=True))
        without, with_profile = [], []
        with (
            reader(cfg, name, "exo-bench-kb") as conn,
            connect(role_url(cfg, role, name), "exo-bench-kb", autocommit=True) as mine,
        ):
            if mine.execute("select exo.profile()").fetchone()[0] != PROFILE:
                raise SystemExit(f"a session of {role} is expected to be profile {PROFILE!r}")

            def recorded(q):
                with mine.transaction():
                    mine.execute("set transaction read write")
                    return mine.execute(SEARCH, (q.text, vectors[q.text])).fetchall()

            for q in queries:  # warm-up, both ways
                conn.execute(SEARCH, (q.text, vectors[q.text])).fetchall()
                recorded(q)
            for _ in range(args.rounds):
                for q in queries:
                    without.append(
                        timed(lambda q=q: conn.execute(SEARCH, (q.text, vectors[q.text])).fetchall())[0]
                    )
                    with_profile.append(timed(lambda q=q: recorded(q))[0])
        with connect(admin_url(cfg, name), "exo-bench-kb", autocommit=True) as admin:
            plan = explain_personal(admin, vectors[queries[0].text])
            hits = admin.execute(
                "select count(*) filter (where cache_hits > 0), sum(cache_checks), sum(cache_hits) "
                "from exo_private.kb_items"
            ).fetchone()
            total = decay_rows(admin, args.rows, args.seed)
            recording = explain_recording(admin)
            baseline = timed(lambda: admin.execute("update exo_private.kb_items set thumbs = thumbs"))[0]
            first = timed(lambda: admin.execute("select exo_private.kb_decay()").fetchone())[0]
            second, outcome = timed(lambda: admin.execute("select exo_private.kb_decay()").fetchone()[0])

    print(f"\nsearch, {len(queries)} queries x {args.rounds} rounds, query vectors given:")
    print(
        f"  without a profile   p50 {p(without, 0.5):.1f} ms  p95 {p(without, 0.95):.1f} ms (as exo_reader)"
    )
    print(f"  with a profile      p50 {p(with_profile, 0.5):.1f} ms  p95 {p(with_profile, 0.95):.1f} ms "
          f"(as {role}: personal stage over {args.claimed} claimed documents, recorded)")  # fmt: skip
    print(
        f"  ratio p50 {p(with_profile, 0.5) / p(without, 0.5):.2f}x  p95 {p(with_profile, 0.95) / p(without, 0.95):.2f}x"
    )
    print(
        f"  personal stage: {hits[0]} claimed documents hit at least once; {hits[2]} hits in {hits[1]} checks"
    )
    print("\npersonal stage plan:\n  " + "\n  ".join(plan))
    print(
        "\nrecording a search (kb_write 'use') for the profile with most rows, plan lines:\n  "
        + "\n  ".join(recording)
    )
    print(f"\ndecay over {total:,} user-document rows:")
    print(f"  plain full-table update (baseline)  {baseline:.0f} ms")
    print(f"  exo_private.kb_decay() first run    {first:.0f} ms ({first / baseline:.2f}x)")
    print(f"  exo_private.kb_decay() second run   {second:.0f} ms ({second / baseline:.2f}x) -> {outcome}")


if __name__ == "__main__":
    main()
