"""Benchmark: what the memory bound costs a new session (sql/065_backend_memory.sql).

Every login to an exocortex database runs the event trigger exo_backend_memory: a reader's
backend takes its bound, any other's lifts the server's soft default, each by one plpython3u
call (the interpreter starts in that backend). Baseline, in the same run: the same login and
`select 1` on the server's maintenance database, which has no trigger. Connections alternate
(reader, writer, baseline) so load hits all alike; medians of --runs each.

Then what a session pays after its login: BM25 top-30 queries on a table of --rows generated
lines, each in a new session, after the trigger ran and with `event_triggers = off` (the
baseline; only the admin may turn it off), alternating. A SET clause on the trigger function
once made every BM25 scan of the session about 1.5 ms slower.

    .venv/bin/python -m bench.login_cost [--runs 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import psycopg

from exocortex import config
from exocortex.db import admin_url, role_url
from exocortex.ops.migrate import scratch_database


def connect_once(url: str) -> float:
    began = time.perf_counter()
    with psycopg.connect(url) as conn:
        conn.execute("select 1").fetchone()
    return time.perf_counter() - began


def bm25_once(url: str, words: list[str], **options: str) -> float:
    """A new session's first BM25 top-30 and four more; the median of the five, in seconds."""
    query = "select id from bench_lines order by body operator(public.<@>) public.to_bm25query(%s, 'bench_lines_bm25') limit 30"
    with psycopg.connect(url, **options) as conn:
        spent = []
        for word in words:
            began = time.perf_counter()
            conn.execute(query, (word,)).fetchall()
            spent.append(time.perf_counter() - began)
    return statistics.median(spent)


def lines_table(url: str, rows: int, rng: random.Random) -> list[str]:
    """bench_lines: --rows lines of 40 words drawn with a skew from 3,000 made-up words."""
    vocabulary = [
        "".join(rng.choice("aeioubdfgklmnprstvz") for _ in range(rng.randint(3, 9))) for _ in range(3000)
    ]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    lines = [" ".join(rng.choices(vocabulary, weights, k=40)) for _ in range(rows)]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "create table bench_lines (id bigint generated always as identity primary key, body text)"
        )
        with conn.cursor().copy("copy bench_lines (body) from stdin") as copy:
            for line in lines:
                copy.write_row((line,))
        conn.execute(
            "create index bench_lines_bm25 on bench_lines using bm25 (body) with (text_config = 'english')"
        )
    return vocabulary[:200]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
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
        rng = random.Random(args.seed)
        admin = admin_url(cfg, name)
        words = lines_table(admin, args.rows, rng)
        scans: dict[str, list[float]] = {"after the login trigger": [], "event_triggers = off (baseline)": []}
        for _ in range(max(args.runs // 4, 10)):
            asked = rng.sample(words, 5)
            scans["after the login trigger"].append(bm25_once(admin, asked))
            scans["event_triggers = off (baseline)"].append(
                bm25_once(admin, asked, options="-c event_triggers=off")
            )
    base = statistics.median(times["no trigger (baseline)"])
    print(f"a login and select 1, median of {args.runs}:")
    for label, measured in times.items():
        median = statistics.median(measured)
        print(
            f"  {label:<24} {median * 1000:6.2f} ms  {median / base:4.2f}x  (+{(median - base) * 1000:.2f} ms)"
        )
    base = statistics.median(scans["event_triggers = off (baseline)"])
    print(
        f"a BM25 top-30 on {args.rows:,} lines in a new session, median of {len(scans['after the login trigger'])} sessions:"
    )
    for label, measured in scans.items():
        median = statistics.median(measured)
        print(f"  {label:<32} {median * 1000:6.3f} ms  {median / base:4.2f}x")


if __name__ == "__main__":
    main()
