"""Benchmark: extraction throughput of the worker on CPU, calm and under a concurrent CPU load,
and the windows lost.

Starts the real chat model (Gemma 3 270M in llama-server) on a free port, ingests text
nobody here wrote (the first Debian changelogs under /usr/share/doc, 12 KB of each) into a
scratch database and runs the worker (two jobs at once) over the extract queue, --windows
windows per phase:

  calm        no load of ours; timeout_s 900 s, so that no call times out
  load, fixed twice as many busy processes as cores; timeout_s 1.2 times what one call
              alone took calm, and worker.max_timeout_factor 1: a call that times out
              fails the job (how the worker behaved before adaptive deadlines)
  load, adaptive  the same load and timeout_s, worker.max_timeout_factor 8 (the default)

Baseline, in the same run: the calm phase. A window is lost when it ends neither
extracted nor queued; failed ones are recorded in job_failures (`exo worker retry-failed`
brings them back) and counted apart. Replies are capped at --max-tokens to keep the run
within a few minutes: what is measured is the worker under load, not the extraction.

    .venv/bin/python -m bench.worker_load [--windows 2] [--max-tokens 128]
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from psycopg.types.json import Jsonb

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.extraction import llm as extraction
from exocortex.ingest.pipeline import ingest
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker
from tests.support.models import CHAT_MODEL, free_ports


def set_setting(conn, key: str, value) -> None:
    conn.execute("update exo_private.settings set value = %s where key = %s", (Jsonb(value), key))


def phase(cfg, name: str, conn, windows: int) -> dict:
    """Run the worker over the next `windows` windows; what became of them."""
    before = {
        r[0] for r in conn.execute("select id from exo_private.extraction_windows where extracted_at is null")
    }
    began = time.perf_counter()
    result = Worker(cfg, dbname=name, once=True, queues=("extract",), limit=windows, poll_s=0.05).run()
    seconds = time.perf_counter() - began
    taken = before - {
        r[0] for r in conn.execute("select id from exo_private.extraction_windows where extracted_at is null")
    }
    state = dict(
        conn.execute(
            "select o.state, count(*) from exo_private.outstanding_work() o "
            "where o.queue = 'extract' and o.target_id = any(%s) group by 1",
            (sorted(before),),
        ).fetchall()
    )
    return {
        "load": os.getloadavg()[0],
        "seconds": seconds,
        "done": result.done["extract"],
        "extracted": len(taken),
        "failed": result.failed["extract"],
        "errors": result.errors["extract"],
        "slowed": result.slowed["extract"],
        "lowest_concurrency": result.lowest_concurrency,
        "lost": state.get("lost", 0) + state.get("dead", 0),
        "stop_reason": result.stop_reason,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=2, help="windows per phase")
    parser.add_argument("--max-tokens", type=int, default=128, help="cap of one extraction reply")
    args = parser.parse_args()
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-load-"))
    (chat_port,) = free_ports(1)
    hogs: list[subprocess.Popen] = []
    rows = []
    try:
        services.start_chat(cfg, chat_port, CHAT_MODEL, run_dir=run_dir)
        chat = Endpoint(f"http://127.0.0.1:{chat_port}/v1", CHAT_MODEL, 900.0, {})
        with scratch_database(cfg, "bench_load") as name, tempfile.TemporaryDirectory() as corpus:
            for path in sorted(Path("/usr/share/doc").glob("*/changelog.Debian.gz"))[:10]:
                with gzip.open(path) as f:
                    (Path(corpus) / f"{path.parent.name}.txt").write_bytes(f.read(12_000))
            ingest(cfg, Path(corpus), "technical", dbname=name)
            with connect(admin_url(cfg, name), "exo-bench", autocommit=True) as conn:
                conn.execute(
                    "update exo_private.settings set value = value || %s where key = 'models.chat'",
                    (Jsonb({"url": chat.url, "timeout_s": chat.timeout_s}),),
                )
                set_setting(conn, "extraction.max_tokens", args.max_tokens)
                set_setting(conn, "worker.retry_backoff_s", [1, 2, 4])
                window = conn.execute(
                    "select body from exo_private.extraction_windows order by id limit 1"
                ).fetchone()[0]
                fmt = extraction.response_format(12, 12)
                for _ in range(2):  # one call alone, calm; the second (warm) is what timeout_s is set from
                    began = time.perf_counter()
                    client.chat(
                        chat, extraction.messages(window), max_tokens=args.max_tokens, response_format=fmt
                    )
                    one_call = time.perf_counter() - began
                rows.append(("calm (baseline)", phase(cfg, name, conn, args.windows)))

                timeout_s = round(1.2 * one_call, 1)
                conn.execute(
                    "update exo_private.settings set value = value || %s where key = 'models.chat'",
                    (Jsonb({"timeout_s": timeout_s}),),
                )
                hogs = [
                    subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(2 * (os.cpu_count() or 1))
                ]
                set_setting(conn, "worker.max_timeout_factor", 1)
                rows.append(("load, fixed deadline", phase(cfg, name, conn, args.windows)))
                set_setting(conn, "worker.max_timeout_factor", 8)
                rows.append(("load, adaptive deadline", phase(cfg, name, conn, args.windows)))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        services.down(cfg, run_dir=run_dir)

    base = rows[0][1]
    base_rate = base["extracted"] / base["seconds"]
    print(
        f"{args.windows} windows per phase, replies capped at {args.max_tokens} tokens, 2 jobs at once; "
        f"one calm call {one_call:.1f} s; under load timeout_s {timeout_s:g} s and "
        f"{len(hogs)} busy processes on {os.cpu_count()} cores"
    )
    print(
        f"{'phase':<26} {'windows/hour':>12} {'vs calm':>8} {'extracted':>9} {'failed':>6} {'lost':>4}  notes"
    )
    for label, r in rows:
        rate = r["extracted"] / r["seconds"]
        notes = f"load average {r['load']:.1f}"
        if r["slowed"]:
            notes += f", {r['slowed']} slow calls retried longer"
        if r["lowest_concurrency"] is not None:
            notes += f", jobs at once down to {r['lowest_concurrency']}"
        if r["errors"]:
            notes += f", {r['errors']} errors"
        if r["stop_reason"]:
            notes += f", stopped: {r['stop_reason']}"
        print(
            f"{label:<26} {rate * 3600:12.0f} {rate / base_rate:7.2f}x {r['extracted']:>9} "
            f"{r['failed']:>6} {r['lost']:>4}  {notes}"
        )


if __name__ == "__main__":
    main()
