"""Benchmark: what the memory bound costs a new session (sql/065_backend_memory.sql).

Every login to an exocortex database runs the event trigger exo_backend_memory: a reader's
backend takes its bound, any other's lifts the server's soft default, each by one plpython3u
call (the interpreter starts in that backend). Baseline, in the same run: the same login and
`select 1` on the server's maintenance database, which has no trigger. Connections alternate
(reader, writer, baseline) so load hits all alike; medians of --runs each.

    .venv/bin/python -m bench.login_cost [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg

from exocortex import config
from exocortex.db import admin_url, role_url
from exocortex.migrate import scratch_database


def connect_once(url: str) -> float:
    began = time.perf_counter()
    with psycopg.connect(url) as conn:
        conn.execute("select 1").fetchone()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    cfg = config.load()
    with scratch_database(cfg, "bench_login") as name:
        urls = {
            "reader (bound)": role_url(cfg, "exo_reader", name),
            "writer (lifted)": role_url(cfg, "exo_writer", name),
            "no trigger (baseline)": admin_url(cfg, "postgres"),
        }
        times: dict[str, list[float]] = {k: [] for k in urls}
        for _ in range(args.runs):
            for label, url in urls.items():
                times[label].append(connect_once(url))
    base = statistics.median(times["no trigger (baseline)"])
    print(f"a login and select 1, median of {args.runs}:")
    for label, measured in times.items():
        median = statistics.median(measured)
        print(
            f"  {label:<24} {median * 1000:6.2f} ms  {median / base:4.2f}x  (+{(median - base) * 1000:.2f} ms)"
        )


if __name__ == "__main__":
    main()
