"""Benchmark: embedding and extraction throughput with the default local models.

Starts the real servers (MiniLM embeddings, Gemma 3 270M in llama-server) on free
ports, ingests the example vault into a scratch database and runs the worker:
all chunks through the embed queue, and the first --windows extraction windows
through the extract queue. Baseline, in the same run: the same model calls made
directly with the client (no queue, no database), so the ratio is the worker's
share of the time.

    .venv/bin/python -m bench.model_throughput [--windows 6]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from psycopg.types.json import Jsonb

from exocortex import config
from exocortex.config import PACKAGE_DIR
from exocortex.db import admin_url, connect
from exocortex.extraction import llm as extraction
from exocortex.ingest.pipeline import ingest
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker
from tests.support.models import CHAT_MODEL, free_ports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=6, help="extraction windows to run (about 10 s each)")
    args = parser.parse_args()
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-models-"))
    chat_port, embed_port = free_ports(2)
    try:
        services.start_chat(cfg, chat_port, CHAT_MODEL, run_dir=run_dir)
        services.start_embeddings(cfg, embed_port, run_dir=run_dir)
        chat = Endpoint(f"http://127.0.0.1:{chat_port}/v1", CHAT_MODEL, 120.0, {})
        embed = Endpoint(f"http://127.0.0.1:{embed_port}/v1", "all-MiniLM-L6-v2", 60.0, {"dimensions": 384})
        with scratch_database(cfg, "bench_models") as name:
            ingest(cfg, PACKAGE_DIR.parents[1] / "examples/vault", dbname=name)
            with connect(admin_url(cfg, name), "exo-bench", autocommit=True) as conn:
                for key, url in (("models.chat", chat.url), ("models.embeddings", embed.url)):
                    conn.execute(
                        "update exo_private.settings set value = value || %s where key = %s",
                        (Jsonb({"url": url}), key),
                    )
                bodies = [r[0] for r in conn.execute("select body from exo_private.chunks order by id")]
                windows = [
                    r[0]
                    for r in conn.execute(
                        "select w.body from pgmq.q_extract q join exo_private.extraction_windows w "
                        "on w.id = (q.message ->> 'window_id')::bigint order by q.msg_id limit %s",
                        (args.windows,),
                    )
                ]
                settings = dict(
                    conn.execute("select key, value from exo_private.settings where key like 'extraction.%'")
                )

            began = time.perf_counter()
            for i in range(0, len(bodies), 32):
                client.embed(embed, bodies[i : i + 32])
            direct_embed = time.perf_counter() - began
            began = time.perf_counter()
            done = Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run().done["embed"]
            worker_embed = time.perf_counter() - began

            fmt = extraction.response_format(
                int(settings["extraction.max_entities"]), int(settings["extraction.max_relations"])
            )
            began = time.perf_counter()
            tokens = 0
            for window in windows:
                reply = client.chat(
                    chat,
                    extraction.messages(window),
                    max_tokens=int(settings["extraction.max_tokens"]),
                    response_format=fmt,
                )
                tokens += reply.completion_tokens
            direct_extract = time.perf_counter() - began
            began = time.perf_counter()
            extracted = (
                Worker(cfg, dbname=name, once=True, queues=("extract",), limit=len(windows), poll_s=0.01)
                .run()
                .done["extract"]
            )
            worker_extract = time.perf_counter() - began
    finally:
        services.down(cfg, run_dir=run_dir)

    print(f"embeddings: {len(bodies)} chunks of the example vault, batches of 32")
    print(f"  direct client calls (baseline)   {len(bodies) / direct_embed:7.1f} chunks/s   1.0x")
    print(
        f"  worker, embed queue              {done / worker_embed:7.1f} chunks/s   {worker_embed / direct_embed:.2f}x the time"
    )
    print(
        f"extraction: {len(windows)} windows (one per document here), {tokens / len(windows):.0f} completion tokens each on average"
    )
    print(f"  direct client calls (baseline)   {len(windows) / direct_extract * 3600:7.0f} docs/hour   1.0x")
    print(
        f"  worker, extract queue            {extracted / worker_extract * 3600:7.0f} docs/hour   "
        f"{worker_extract / direct_extract:.2f}x the time"
    )


if __name__ == "__main__":
    main()
