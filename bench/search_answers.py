"""Benchmark companion: the answers of a fixed query mix, to compare two checkouts.

Builds the synthetic corpus of bench/search_corpus.py (small, seeded, real MiniLM vectors
from an embedding server started for the run, as bench/search_latency.py does) in a scratch
database and writes, for each query of search_latency's mix and a few argument variants
(an open archive, a bridge, a workspace subset), and a few again with the cross-encoder
backend (the embedding server's /v1/rerank):

  results  exo.search's ranked (citation, chunk_id, stage, score rounded to 6 places)
  report   exo.search_report without its timings (every "ms" and "timings_ms" key)
  packet   exo.context_packet_json without its timings

to the JSON file --out. It uses only what the release before issue 12 also has
(search_corpus, search_latency's query mix, migrate, db), so it runs in either tree: copy it
into the other checkout's bench/ (e.g. one made with `git worktree add`) and run it from each
checkout's root, with that checkout's package first on the path:

    .venv/bin/python -m bench.search_answers --out /tmp/answers-new.json
    (cd OLD && PYTHONPATH=worker ../main/.venv/bin/python -m bench.search_answers --out /tmp/answers-old.json)
    diff /tmp/answers-old.json /tmp/answers-new.json
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from bench import search_latency
from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ops.migrate import scratch_database

AS_OF = date(2026, 11, 30)  # the corpus's dates and every search's as_of: one fixed day
TIMINGS = frozenset({"ms", "timings_ms"})


def without_timings(value: Any) -> Any:
    """`value` with every "ms" and "timings_ms" key removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def answers(conn, text: str, args: dict[str, Any]) -> dict[str, Any]:
    """The ranked rows, the report and the packet of one question, without timings."""
    named = "".join(f", {name} => %({name})s" for name in args)
    params = dict(args, q=text, as_of=AS_OF.isoformat())
    rows = conn.execute(
        f"select citation, chunk_id, stage, score from exo.search(%(q)s, as_of => %(as_of)s::timestamptz{named})",
        params,
    ).fetchall()
    (report,) = conn.execute(
        f"select exo.search_report(%(q)s, as_of => %(as_of)s::timestamptz{named})", params
    ).fetchone()
    packet_args = "".join(f", {name} => %({name})s" for name in args if name not in ("k", "per_workspace"))
    (packet,) = conn.execute(
        f"select exo.context_packet_json(%(q)s, as_of => %(as_of)s::timestamptz{packet_args})", params
    ).fetchone()
    return {
        "query": text,
        "args": args,
        "results": [[r[0], r[1], r[2], round(r[3], 6)] for r in rows],
        "report": without_timings(report),
        "packet": without_timings(packet),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    parser.add_argument("--size", type=int, default=3000, help="chunks in the corpus")
    parser.add_argument("--queries", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-search-answers-"))
    (port,) = search_latency.free_ports(1)
    out: list[dict[str, Any]] = []
    try:
        search_latency.services.start_embeddings(cfg, port, run_dir=run_dir)
        endpoint = search_latency.Endpoint(
            f"http://127.0.0.1:{port}/v1",
            search_latency.MODEL,
            60.0,
            {"dimensions": search_latency.DIMENSIONS},
        )
        embed = functools.partial(search_latency.client.embed, endpoint)
        with scratch_database(cfg, "bench_search_answers") as name:
            with connect(admin_url(cfg, name), "exo-bench-search-answers", autocommit=True) as admin:
                info = search_latency.build_corpus(admin, args.size, args.seed, embed, as_of=AS_OF)
                admin.execute(
                    "update exo_private.settings set value = jsonb_set(value, '{url}', to_jsonb(%s::text)) "
                    "where key = 'models.embeddings'",
                    (endpoint.url,),
                )
                for budget in ("reader.embed_calls_per_minute", "reader.rerank_calls_per_minute"):
                    admin.execute("select exo_private.set_setting(%s, '1000000')", (budget,))
            queries = search_latency.query_mix(info, args.queries, args.seed)
            workspaces = sorted(info.entity_names)
            variants = [
                (f"{info.deferred_subject} funeral", {"open_archive": True}),
                (f"{info.deferred_subject} funeral", {"bridge": [info.deferred_subject]}),
                (f"what did I write in {info.archival_year}", {"open_archive": False}),
                (queries[0].text, {"workspaces": workspaces[:1], "k": 5, "per_workspace": 5}),
            ]
            with search_latency.reader(cfg, name, "exo-bench-search-answers") as conn:
                for q in queries:
                    out.append(dict(answers(conn, q.text, {}), kind=q.kind))
                for text, extra in variants:
                    out.append(dict(answers(conn, text, extra), kind="variant"))
            # The cross-encoder backend (the embedding server's /v1/rerank), with time to answer.
            with connect(admin_url(cfg, name), "exo-bench-search-answers", autocommit=True) as admin:
                rerank = {"url": endpoint.url, "model": search_latency.MODEL, "timeout_s": 120}
                admin.execute("select exo_private.set_setting('models.rerank', %s)", (json.dumps(rerank),))
                admin.execute("select exo_private.set_setting('retrieval.rerank_timeout_s', '120')")
            with search_latency.reader(cfg, name, "exo-bench-search-answers") as conn:
                for q in queries[:: max(1, len(queries) // 6)]:
                    out.append(dict(answers(conn, q.text, {}), kind="cross_encoder " + q.kind))
    finally:
        search_latency.services.down(cfg, run_dir=run_dir)
    args.out.write_text(json.dumps(out, indent=1, sort_keys=True, default=str) + "\n")
    print(f"{len(out)} questions, answers in {args.out}")


if __name__ == "__main__":
    main()
