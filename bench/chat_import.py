"""Benchmark: chat import speed, and the cost of re-importing an export that has not changed.

A 50,000-message JSONL export from bench/chat_histories.py (two-person histories of about
150-300 messages each) goes into a scratch database through exocortex.ingest.chat.import_chat
as exo_writer (what `exo import-chat FILE --format jsonl` runs: parse, write the messages, mark
them, cut every conversation that gained messages into windows and queue those for the worker):

  baseline   reading and parsing the file alone (the importer's own parse step, no database)
  first      the first import: messages/s, and how many windows it made
  unchanged  re-importing the same file: it adds nothing; its time as a ratio to the baseline
             (goal: within 2x)
  grown      the same export with 10 new messages in each of 10 conversations: the windows it
             adds (only those of the new messages, plus the last window of each such conversation
             when a new message joins it) and its time

Times are medians of --runs runs (the first import runs once); the baseline and the unchanged
re-import take turns, so that both see the same load.

    .venv/bin/python -m bench.chat_import [--messages 50000] [--runs 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.chat_histories import OWNER, History, generate, write
from bench.chat_recall import load_note
from exocortex import config
from exocortex.db import connect, role_url
from exocortex.ingest.chat import ChatImportResult, import_chat, parse_export
from exocortex.ops.migrate import scratch_database

GOAL_RATIO = 2.0
GROWN_CONVERSATIONS = 10
GROWN_MESSAGES = 10


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = fn()
    return time.perf_counter() - began, result


def parse_only(path: Path) -> int:
    """The importer's parse step alone (what every import does before it writes)."""
    return len(parse_export(path, "jsonl").messages)


def grown_export(history: History, export: Path, out: Path) -> Path:
    """export plus GROWN_MESSAGES new messages at the end of each of the first GROWN_CONVERSATIONS
    conversations, a day after their last message."""
    lines = export.read_text(encoding="utf-8").splitlines()
    last: dict[str, Any] = {}
    for m in history.messages:
        last[m.conversation_id] = m
    ordinal = len(history.messages)
    for conv, m in list(last.items())[:GROWN_CONVERSATIONS]:
        at = m.sent_at + timedelta(days=1)
        for i in range(GROWN_MESSAGES):
            ordinal += 1
            owner = i % 2 == 0
            at += timedelta(minutes=3)
            record = {
                "conversation_id": conv,
                "message_id": str(ordinal),
                "sender": OWNER if owner else m.title,
                "sent_at": at.isoformat(),
                "text": f"Catching up again, message {i + 1} of the new evening.",
            }
            if owner:
                record["is_owner"] = True
            lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-chat-import-"))
    print(f"{load_note()}", flush=True)

    history = generate(1, args.seed, max_messages=args.messages)
    export, _questions = write(history, run_dir)
    conversations = len({m.conversation_id for m in history.messages})
    grown = grown_export(history, export, run_dir / "grown.jsonl")
    size_mb = export.stat().st_size / 1e6
    print(
        f"{len(history.messages):,} messages in {conversations} conversations, {size_mb:.1f} MB", flush=True
    )

    with (
        scratch_database(cfg, "bench_chat_import") as name,
        connect(role_url(cfg, "exo_writer", name), "exo-bench-chat-import", autocommit=True) as conn,
    ):

        def run(path: Path) -> tuple[float, ChatImportResult]:
            return timed(lambda: import_chat(conn, path, "jsonl"))

        first_s, first = run(export)
        parses, again = [], []
        for _ in range(args.runs):
            parses.append(timed(lambda: parse_only(export))[0])
            again.append(run(export))
        parse_s = statistics.median(parses)
        again_s = statistics.median(s for s, _ in again)
        grown_s, grown_result = run(grown)
        (windows,) = conn.execute("select count(*) from exo_private.chat_windows").fetchone()

    ratio = again_s / parse_s
    print(f"\nbaseline: reading and parsing the file     {parse_s:7.2f} s   "
          f"{len(history.messages) / parse_s:9,.0f} messages/s   1.0x")  # fmt: skip
    print(f"first import ({first.messages_added:,} messages, {first.windows_added:,} windows)"
          f"  {first_s:7.2f} s   {first.messages_added / first_s:9,.0f} messages/s   "
          f"{first_s / parse_s:.1f}x")  # fmt: skip
    added = {(r.messages_added, r.windows_added) for _, r in again}
    print(f"re-import, unchanged (added {added})  {again_s:7.2f} s   "
          f"{len(history.messages) / again_s:9,.0f} messages/s   {ratio:.1f}x")  # fmt: skip
    print(f"re-import, grown by {grown_result.messages_added} messages in {GROWN_CONVERSATIONS} conversations: "
          f"{grown_result.windows_added} windows added in {grown_s:.2f} s, {grown_s / parse_s:.1f}x "
          f"({windows:,} windows in all)")  # fmt: skip
    print(f"goal: re-importing the unchanged export within {GOAL_RATIO:.0f}x of reading it: "
          f"{'met' if ratio <= GOAL_RATIO else 'MISSED'} ({ratio:.1f}x)")  # fmt: skip
    print(f"finished with {load_note()}")


if __name__ == "__main__":
    main()
