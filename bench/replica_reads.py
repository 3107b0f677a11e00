"""Benchmark: reads routed to a hot standby against the same reads on the primary, in the same run.

A fresh runtime in a temporary EXO_HOME on a free port (its root copied from the user's runtime,
whose server is never touched) gets the example vault (ingested, not embedded: the search runs
its exact, lexical, capsule and graph stages and reports the semantic stage as skipped), then a
replica (`exo db replica add`'s code). The same queries run through pooled Readers (what `exo
mcp` uses), interleaved query by query so drift hits them alike:

  primary    a Reader of the primary alone (the baseline)
  standby    a Reader of the standby's URL, no routing: the standby's own speed
  routed     a Reader of the primary with the standby as its replica (EXO_READER_URLS), the lag
             bound the setting's: the lag probe, then the read on the standby
  behind     the same with a bound of 1 s while the standby is past it (its replay paused, a
             write on the primary): a probe now and then (a replica behind is passed over for
             1 s), the read on the primary

Each routed answer must name the server it expects (report.served_by) and every way must give
the primary's chunks. Printed: p50 / p95 / mean per way, what routing adds over the standby's own
reads (routed against standby), and how long the replica took to make.

    .venv/bin/python -m bench.replica_reads [--rounds 10] [--k 10]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.demo_steps import free_port
from bench.mcp_roundtrip import QUERIES, VAULT, WARMUP, summary
from exocortex import config
from exocortex.client import api, routing
from exocortex.db import connect, role_url
from exocortex.ingest import pipeline
from exocortex.ops.migrate import migrate
from exocortex.runtime import replicas, server

NAME = "bench"


def measure(cfg: config.Config, replica: replicas.Replica, rounds: int, k: int) -> dict[str, list[float]]:
    primary_url = role_url(cfg, "exo_reader")
    standby_url = replicas.url(cfg, replica, "exo_reader")
    readers = {
        "primary": api.Reader(primary_url, application_name="bench-primary").pooled(2),
        "standby": api.Reader(standby_url, application_name="bench-standby").pooled(2),
        "routed": api.Reader(primary_url, replicas=((NAME, standby_url),)).pooled(2),
    }
    strict = api.Reader(primary_url, replicas=((NAME, standby_url),), max_lag_s=1).pooled(2)
    expected = {"primary": "primary", "standby": routing.address(standby_url), "routed": NAME}
    times: dict[str, list[float]] = {way: [] for way in [*readers, "behind"]}

    def timed(way: str, reader: api.Reader, q: str, served_by: str) -> list[int]:
        t = time.perf_counter()
        found = api.search_json(reader, q, k=k)
        times[way].append((time.perf_counter() - t) * 1000)
        assert found["report"]["served_by"] == served_by, (way, found["report"].get("replicas_passed_over"))
        return [r["chunk_id"] for r in found["results"]]

    try:
        for q in QUERIES[:WARMUP]:
            for way, reader in readers.items():
                timed(way, reader, q, expected[way])
        for values in times.values():
            values.clear()
        for _ in range(rounds):
            for q in QUERIES:
                answers = [timed(way, reader, q, expected[way]) for way, reader in readers.items()]
                assert all(a == answers[0] for a in answers), q
        with connect(replicas.url(cfg, replica, "admin"), "bench", autocommit=True) as standby:
            standby.execute("select pg_wal_replay_pause()")
            try:
                with connect(role_url(cfg, "admin"), "bench", autocommit=True) as conn:
                    conn.execute("select exo_private.set_setting('replicas.max_lag_s', '30')")
                time.sleep(1.5)
                for _ in range(rounds):
                    for q in QUERIES:
                        timed("behind", strict, q, "primary")
            finally:
                standby.execute("select pg_wal_replay_resume()")
    finally:
        for reader in [*readers.values(), strict]:
            reader.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="Passes over the query list.")
    parser.add_argument("--k", type=int, default=10, help="Rows per search.")
    args = parser.parse_args()
    user = config.load()
    home = Path(tempfile.mkdtemp(prefix="exo-bench-replica-"))
    cfg = dataclasses.replace(user, home=home, port=free_port(), external_url=None, reader_urls=())
    try:
        t = time.perf_counter()
        server.up(cfg, lambda _m: None, seed=None if user.external_url else user.runtime_root)
        migrate(cfg, role_url(cfg, "admin"), lambda _m: None)
        print(
            f"fresh runtime up and migrated in {time.perf_counter() - t:.1f} s (port {cfg.port})", flush=True
        )
        ingested = pipeline.ingest(cfg, VAULT)
        print(f"vault ingested: {ingested.processed} documents, no embeddings", flush=True)
        with connect(role_url(cfg, "admin"), "bench", autocommit=True) as conn:
            conn.execute("vacuum (analyze)")  # not autovacuum's WAL, replayed under the timed reads
        added = replicas.add(cfg, NAME, None, lambda _m: None)
        print(f"replica made in {added.seconds:.1f} s", flush=True)
        times = measure(cfg, added.replica, args.rounds, args.k)
    finally:
        server.down(cfg)
        shutil.rmtree(home, ignore_errors=True)
    print(f"{len(times['primary'])} searches a way (k={args.k}), pooled Readers:")
    for way, values in times.items():
        print(f"  {way:8} {summary(values)}")
    added_ms = statistics.median(times["routed"]) - statistics.median(times["standby"])
    print(f"routing adds {added_ms:+.2f} ms at p50 over the standby's own reads (the lag probe)")
    ratio = statistics.median(times["routed"]) / statistics.median(times["primary"])
    print(f"routed / primary at p50: {ratio:.2f}")


if __name__ == "__main__":
    main()
