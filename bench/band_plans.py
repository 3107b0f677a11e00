"""Benchmark: the plans of the retrieval stages with as_of today and as_of in the past.

exo_private.stage_sql's band condition reads the stored band when as_of is today and works the
band out from written_at when as_of is in the past (bands follow as_of). A scratch database gets
the synthetic corpus of bench/search_corpus.py (seeded random vectors, no model server); in its
largest workspace each stage's SQL is prepared with representative parameters (those of
bench/search_latency.py) and run under EXPLAIN (ANALYZE, BUFFERS) as a custom and as a generic
plan, once with as_of = the corpus's day and once with as_of = that day minus --past-days, each
next to the baseline: the same SQL with the band condition it had before bands followed as_of
(the stored band, whatever as_of), run in turn so both see the same load. One line per (stage,
as_of, variant, plan): median execution time of --repeat runs, rows, indexes used, sequential scans of big tables,
buffers; the full plans go to a file under /tmp. The session sets hnsw.iterative_scan as
exo_private.retrieve does.

    .venv/bin/python -m bench.band_plans [--chunks 5000] [--past-days 730] [--repeat 7] [--seed 7]
"""

from __future__ import annotations

import argparse
import datetime
import re
import statistics
import tempfile
from pathlib import Path

import numpy as np
import psycopg

from bench.search_corpus import DIMENSIONS, build_corpus
from bench.search_latency import STAGES, stage_params, summarise_plan
from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ops.migrate import scratch_database

# The band condition of stage_sql that follows as_of, and the one it replaced.
AS_OF_BAND = re.compile(
    r"\(c\.band = any \(\$2::exo_private\.band\[\]\)\s*or \$3 < current_date and .*?"
    r"= any \(\$2::exo_private\.band\[\]\)\)",
    re.S,
)
STORED_BAND = "c.band = any ($2::exo_private.band[])"


def random_embed(seed: int):
    rng = np.random.default_rng(seed)

    def embed(texts: list[str]) -> list[list[float]]:
        vectors = rng.standard_normal((len(texts), DIMENSIONS))
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()

    return embed


def explain(
    admin: psycopg.Connection, ws: str, params: dict, info, days: dict, repeat: int, fh
) -> list[dict]:
    cur = psycopg.ClientCursor(admin)  # EXECUTE's arguments are written as literals
    out = []
    for stage in STAGES:
        text = admin.execute(
            "select exo_private.stage_sql(%s, %s, %s, %s)", (stage, ws, info.model_id, info.dimensions)
        ).fetchone()[0]
        baseline, found = AS_OF_BAND.subn(STORED_BAND, text)
        if not found:
            raise SystemExit(f"stage {stage}: no as_of band condition in exo_private.stage_sql's text")
        types, values, label = params[stage]
        for when, day in days.items():
            values = [day if isinstance(v, datetime.date) else v for v in values]
            placeholders = ", ".join(["%s"] * len(values))
            for variant, sql_text in (("stored", baseline), ("as_of", text)):
                admin.execute(f"prepare band_{stage} ({', '.join(types)}) as {sql_text}")
                cur.execute(f"execute band_{stage}({placeholders})", values)  # warm the cache
                for mode in ("custom", "generic"):
                    admin.execute(f"set plan_cache_mode = force_{mode}_plan")
                    times = []
                    for _ in range(repeat):
                        cur.execute(
                            f"explain (analyze, buffers) execute band_{stage}({placeholders})", values
                        )
                        plan = "\n".join(r[0] for r in cur.fetchall())
                        summary = summarise_plan(admin, plan)
                        times.append(summary["execution_ms"])
                    summary.update(stage=stage, when=when, variant=variant, mode=mode)
                    summary["execution_ms"] = statistics.median(times)
                    out.append(summary)
                    fh.write(
                        f"==== {stage} as_of {when}, {variant} band ({mode} plan), {ws}, {label}\n"
                        f"{sql_text.strip()}\n\n{plan}\n\n"
                    )
                admin.execute("reset plan_cache_mode")
                admin.execute(f"deallocate band_{stage}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--past-days", type=int, default=730)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cfg = config.load()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    plans_file = Path(tempfile.gettempdir()) / f"exo-band-plans-{stamp}.txt"
    with (
        scratch_database(cfg, "bench_band_plans") as name,
        connect(admin_url(cfg, name), "exo-bench-band-plans", autocommit=True) as admin,
    ):
        info = build_corpus(admin, args.chunks, args.seed)
        admin.execute("analyze")
        admin.execute("set hnsw.iterative_scan = relaxed_order")
        ws = max(info.chunks_by_workspace, key=info.chunks_by_workspace.get)
        params = stage_params(admin, info, ws, random_embed(args.seed))
        days = {"today": info.as_of, "past": info.as_of - datetime.timedelta(days=args.past_days)}
        with plans_file.open("w") as fh:
            rows = explain(admin, ws, params, info, days, args.repeat, fh)
    print(f"{args.chunks:,} chunks, workspace {ws} ({info.chunks_by_workspace[ws]:,} chunks), "
          f"today {days['today']}, past {days['past']}")  # fmt: skip
    for r in rows:
        print(
            f"{r['stage']:<10} {r['when']:<5} {r['variant']:<6} {r['mode']:<7} {r['execution_ms']:>8.2f} ms  "
            f"rows {r['rows']:>5}  indexes {','.join(r['indexes']) or '-'}  "
            f"big seq scans {','.join(r['big_seq_scans']) or '-'}  {r['buffers']}"
        )
    print(f"plans: {plans_file}")


if __name__ == "__main__":
    main()
