"""Benchmark: the worker's overhead per message with a no-op model.

The worker drains the embed queue of a generated corpus against a stand-in
embeddings endpoint that answers at once (tests/support/standin.py), so what is timed
is the worker itself: reading, fetching chunk bodies, one local HTTP round trip
per batch, storing vectors, archiving, stage updates. Baseline, in the same run
and database: raw pgmq read + archive of as many messages in batches of the
same size, with nothing else.

    .venv/bin/python -m bench.worker_overhead [--files 400]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from psycopg.types.json import Jsonb

from bench.ingest_corpus import make_corpus
from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ingest.pipeline import ingest
from exocortex.ops.migrate import scratch_database
from exocortex.worker.loop import Worker
from tests.support.standin import StandIn, embeddings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400)
    args = parser.parse_args()
    cfg = config.load()
    with tempfile.TemporaryDirectory() as corpus, scratch_database(cfg, "bench_worker") as name:
        make_corpus(Path(corpus), args.files, 11)
        ingest(cfg, Path(corpus), dbname=name)
        with connect(admin_url(cfg, name), "exo-bench", autocommit=True) as conn:
            messages = conn.execute("select count(*) from pgmq.q_embed").fetchone()[0]
            batch = int(
                conn.execute(
                    "select value from exo_private.settings where key = 'worker.embed_batch'"
                ).fetchone()[0]
            )
            conn.execute("select pgmq.create('bench_raw')")
            conn.execute("select pgmq.send_batch('bench_raw', array_agg(message)) from pgmq.q_embed")
            began = time.perf_counter()
            while True:
                ids = [
                    r[0] for r in conn.execute("select msg_id from pgmq.read('bench_raw', 30, %s)", (batch,))
                ]
                if not ids:
                    break
                conn.execute("select pgmq.archive('bench_raw', %s::bigint[])", (ids,))
            raw_s = time.perf_counter() - began
            with StandIn(lambda path, req: embeddings(req)) as model:
                conn.execute(
                    "update exo_private.settings set value = value || %s where key = 'models.embeddings'",
                    (Jsonb({"url": model.url}),),
                )
                began = time.perf_counter()
                result = Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run()
                worker_s = time.perf_counter() - began
        assert result.done["embed"] == messages, result
        raw_ms, worker_ms = raw_s / messages * 1000, worker_s / messages * 1000
        print(f"messages: {messages} (batches of {batch})")
        print(f"{'raw pgmq read + archive (baseline)':<44} {raw_ms:7.3f} ms/message   1.0x")
        print(
            f"{'worker, no-op embeddings model':<44} {worker_ms:7.3f} ms/message  {worker_ms / raw_ms:4.1f}x"
        )


if __name__ == "__main__":
    main()
