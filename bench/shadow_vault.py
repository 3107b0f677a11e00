"""Shadow evaluation on the example vault: the context packet against plain RAG (vector and BM25).

Builds what `make demo` builds, less the graph extraction (a model's choices, slow on CPU), in
a scratch database: the owner, the deferred subject, the vault, the three chat exports, every
chunk embedded by MiniLM from an embedding server started for the run. Then runs
`exo eval shadow` (exocortex.eval.shadow) over examples/questions/shadow.jsonl and prints its
tables; --json writes its JSON too.

    .venv/bin/python -m bench.shadow_vault [--k 10] [--budget 4000] [--json OUT] [--show N] [--setting KEY=JSON ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path

from rich.console import Console

from bench.scratch import add_setting_option, apply_settings, serve_embeddings_from, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval import shadow
from exocortex.ingest import pipeline
from exocortex.ingest.chat import import_chat
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.worker.loop import Worker
from tests.support.models import free_ports

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
QUESTIONS = EXAMPLES / "questions" / "shadow.jsonl"
CHATS = [
    (EXAMPLES / "chats" / "chatgpt" / "conversations.json", "chatgpt", ()),
    (EXAMPLES / "chats" / "whatsapp" / "WhatsApp Chat with Iris Calder.txt", "whatsapp", ("Sam Rivera",)),
    (EXAMPLES / "chats" / "generic" / "family.jsonl", "jsonl", ()),
]


def build(cfg: config.Config, name: str, embeddings_url: str) -> None:
    """The demo's database, as `make demo` makes it up to (not including) graph extraction."""
    with connect(admin_url(cfg, name), "exo-bench-shadow", autocommit=True) as admin:
        serve_embeddings_from(admin, embeddings_url)
    with connect(role_url(cfg, "exo_writer", name), "exo-bench-shadow", autocommit=True) as writer:
        writer.execute("select exo_private.set_owner('Sam Rivera')")
        writer.execute(
            "select exo_private.defer_subject('Walter Rivera', array['Grandpa Walter', 'Grandpa'], "
            "'Sam''s grandfather, died in March 2017')"
        )
    pipeline.ingest(cfg, EXAMPLES / "vault", dbname=name)
    with connect(role_url(cfg, "exo_writer", name), "exo-bench-shadow", autocommit=True) as writer:
        for path, fmt, owners in CHATS:
            import_chat(writer, path, fmt, owners)
    Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10, help="chunks each baseline returns")
    parser.add_argument("--budget", type=int, default=4000, help="the packet's token budget")
    parser.add_argument("--json", type=Path, help="write the report's JSON here")
    parser.add_argument(
        "--show", type=int, default=0, help="print the packets of up to N questions they miss"
    )
    add_setting_option(parser)
    args = parser.parse_args()
    settings = trial_settings(parser, args)
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-shadow-"))
    (port,) = free_ports(1)
    console = Console(highlight=False, width=160)
    print(f"{datetime.now():%Y-%m-%d %H:%M}: building the demo database", flush=True)
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        with scratch_database(cfg, "bench_shadow") as name:
            began = time.perf_counter()
            build(cfg, name, f"http://127.0.0.1:{port}/v1")
            print(f"built in {time.perf_counter() - began:.0f} s", flush=True)
            with (
                connect(admin_url(cfg, name), "exo-bench-shadow", autocommit=True) as admin,
                connect(role_url(cfg, "exo_reader", name), "exo-bench-shadow", autocommit=True) as reader,
            ):
                apply_settings(admin, settings)
                questions = shadow.load_questions(QUESTIONS)
                report = shadow.evaluate(
                    admin, reader, questions, QUESTIONS.name, k=args.k, budget=args.budget
                )
    finally:
        services.down(cfg, run_dir=run_dir)
    console.print(shadow.render_questions(report))
    console.print(shadow.render_overall(report))
    missed = [r for r in report.results if not r.outcomes["packet"].answered][: args.show]
    for r in missed:
        print(
            f"\n== packet missed: {r.question.question} (expected {list(r.question.expect)})\n{r.packet_text}"
        )
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
