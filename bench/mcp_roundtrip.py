"""Benchmark: the `search` tool over MCP against exo.search_json called directly, in the same run.

A scratch database migrated from zero gets the example vault (ingested, not
embedded: the search runs its exact, lexical, capsule and graph stages and reports
the semantic stage as skipped; the embeddings are not what is measured here). Then
the same queries run three ways, interleaved query by query so drift hits them alike:

  reused     psycopg, one exo_reader connection for the whole run (the baseline):
             select exo.search_json(q, k => K), what the `search` tool runs
  per call   the same on a fresh exo_reader connection per call, with the options
             exocortex.client.api sets: what a Reader without a pool does (the CLI), and
             what the MCP server did for every tool call before it had a pool
  mcp        a real MCP client (the SDK's stdio client) calling the `search` tool of
             `exo mcp` running as a subprocess (its calls borrow warm connections from
             its pool), up to the parsed JSON {results, report}
  connect    a fresh exo_reader connection running `select 1`: the connection alone,
             to split the per-call cost into connecting and the first search of a
             fresh backend (plpython starts, the search module compiles, plans prepare)

Every way is warmed first (a few calls each). Printed: p50 / p95 / mean per way, the
ratios between them (the MCP tool against the reused connection: the pooled server's
overhead; the per-call connection against the reused one: what the pool saves), the
size of the tool's answer, and the time from spawning `exo mcp` to an initialised session.

    .venv/bin/python -m bench.mcp_roundtrip [--rounds 10] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from exocortex import config
from exocortex.client import api
from exocortex.db import role_url
from exocortex.ingest import pipeline
from exocortex.ops.migrate import scratch_database

VAULT = Path(__file__).resolve().parents[1] / "examples" / "vault"
QUERIES = [
    "what happened in INC-2041?",
    "How much is my rent?",
    "Iris Calder",
    "who is on call for the database and how do I escalate?",
    "postgres upgrade runbook",
    "car purchase 2018",
    "Northwind offer letter salary",
    "replication lag",
]
WARMUP = 3
SEARCH = "select exo.search_json(%s, k => %s) as found"


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def summary(values: list[float]) -> str:
    return f"p50 {statistics.median(values):7.2f} ms   p95 {pct(values, 95):7.2f} ms   mean {statistics.fmean(values):7.2f} ms"


async def measure(reader: api.Reader, rounds: int, k: int) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "exocortex.cli", "mcp"],
        env={"EXO_READER_URL": reader.url},
    )
    times: dict[str, list[float]] = {"reused": [], "per call": [], "mcp": [], "connect": []}
    sizes: list[int] = []
    spawned = time.perf_counter()
    with open("/dev/null", "w") as devnull:
        async with (
            stdio_client(params, errlog=devnull) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            startup_ms = (time.perf_counter() - spawned) * 1000
            with reader.connect() as reused:

                def via_reused(q: str) -> list:
                    return reused.execute(SEARCH, (q, k)).fetchone()["found"]["results"]

                def connect_only() -> None:
                    with reader.connect() as conn:
                        conn.execute("select 1").fetchall()

                def via_new_connection(q: str) -> list:
                    with reader.connect() as conn:
                        return conn.execute(SEARCH, (q, k)).fetchone()["found"]["results"]

                async def via_mcp(q: str) -> list:
                    result = await session.call_tool("search", {"query": q, "k": k})
                    text = result.content[0].text
                    if result.is_error:
                        raise RuntimeError(text)
                    sizes.append(len(text.encode()))
                    return json.loads(text)["results"]

                for q in QUERIES[:WARMUP]:
                    via_reused(q), via_new_connection(q), await via_mcp(q)
                sizes.clear()
                for _ in range(rounds):
                    for q in QUERIES:
                        t = time.perf_counter()
                        direct = via_reused(q)
                        times["reused"].append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        fresh = via_new_connection(q)
                        times["per call"].append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        tool = await via_mcp(q)
                        times["mcp"].append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        connect_only()
                        times["connect"].append((time.perf_counter() - t) * 1000)
                        ids = [r["chunk_id"] for r in direct]
                        assert ids == [r["chunk_id"] for r in fresh] == [r["chunk_id"] for r in tool], q
                report = reused.execute(SEARCH, (QUERIES[0], k)).fetchone()["found"]["report"]
    return {"times": times, "sizes": sizes, "startup_ms": startup_ms, "report": report}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="Passes over the query list.")
    parser.add_argument("--k", type=int, default=10, help="Rows per search.")
    args = parser.parse_args()
    cfg = config.load()
    with scratch_database(cfg, "mcp_bench") as dbname:
        t = time.perf_counter()
        summary_ = pipeline.ingest(cfg, VAULT, dbname=dbname)
        print(
            f"vault ingested in {time.perf_counter() - t:.1f} s: {summary_.processed} documents, no embeddings"
        )
        reader = api.Reader(role_url(cfg, "exo_reader", dbname), application_name="exo-bench")
        result = anyio.run(measure, reader, args.rounds, args.k)
    times = result["times"]
    n = len(times["mcp"])
    rerank = result["report"].get("rerank", {})
    print(f"{n} searches per way ({args.rounds} rounds of {len(QUERIES)} queries, k = {args.k}); "
          f"rerank backend: {rerank.get('backend', rerank) if isinstance(rerank, dict) else rerank}")  # fmt: skip
    for way, values in times.items():
        print(f"  {way:9} {summary(values)}")
    p50 = {way: statistics.median(values) for way, values in times.items()}
    print(
        f"  mcp / reused      {p50['mcp'] / p50['reused']:.2f}x  (+{p50['mcp'] - p50['reused']:.2f} ms at p50)"
    )
    print(
        f"  per call / reused {p50['per call'] / p50['reused']:.2f}x  (+{p50['per call'] - p50['reused']:.2f} ms at p50)"
    )
    print(f"  mcp / per call    {p50['mcp'] / p50['per call']:.2f}x")
    first = p50["per call"] - p50["reused"] - p50["connect"]
    print(
        f"  per call - reused = connect {p50['connect']:.2f} ms + first search in a fresh backend {first:.2f} ms"
    )
    print(f"  tool answer: median {statistics.median(result['sizes']) / 1024:.1f} KiB of JSON text")
    print(f"  exo mcp spawn to initialised session: {result['startup_ms']:.0f} ms")


if __name__ == "__main__":
    main()
