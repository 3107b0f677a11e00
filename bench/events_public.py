"""The timeline's extractor on chat lines nobody here wrote: what it reads as events.

Data: the PyPI package `chitchat-dataset` 0.9.0 (bench.public_chats fetches its wheel): real
two-person chats, each message with its time. Every message of --messages (whole conversations,
seeded order) goes through worker/exocortex/extraction/events.py as if its sender were the owner
(the extractor reads first-person clauses), dated by the message's day. Printed: how many
messages tell an event, how many of those are plans (marked planned, as the worker keeps them),
the most common activities, the share of events with a relative day, a
duration, a distance, money, a person or a place, and --sample events drawn at random (seeded),
each with its message, to judge by reading whether it is something that happened to the writer.
With --notes DIR, the markdown notes under DIR instead (each note's text read as a note, as the
worker reads a chunk); with --chat FILE --format F, the lines the owner sent in a chat export
(exo import-chat's formats and owners); --all lists every event, to compare two versions line by
line.

    .venv/bin/python -m bench.events_public [--messages 3000] [--sample 40] [--seed 7]
        [--notes DIR | --chat FILE --format F [--owner NAME ...]] [--all]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench import public_chats
from exocortex.extraction import events
from exocortex.ingest import chat
from exocortex.ingest.extract import mail_words


@dataclass
class Note:
    """A markdown note (no day) or a chat line of the owner's, read as one message."""

    ordinal: int
    text: str
    sent_at: datetime | None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--notes", type=Path, help="markdown notes to read instead of the chats")
    parser.add_argument("--chat", type=Path, help="a chat export whose owner's lines to read instead")
    parser.add_argument("--format", choices=chat.FORMATS, help="the chat export's format")
    parser.add_argument("--owner", action="append", default=[], help="the owner's name in the export")
    parser.add_argument("--all", action="store_true", help="list every event, sorted")
    args = parser.parse_args()
    if args.chat:
        export = chat.parse_export(args.chat, args.format, args.owner)
        owner = {i.handle for i in export.identities.values() if i.is_owner}
        messages = [
            Note(ordinal=n, text=m.body, sent_at=m.sent_at)
            for n, m in enumerate(export.messages)
            if m.handle in owner
        ]
    elif args.notes:
        messages = [
            Note(ordinal=n, text=path.read_text(), sent_at=None)
            for n, path in enumerate(sorted(args.notes.rglob("*.md")))
        ]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            dataset = public_chats.fetch(public_chats.PACKAGE, Path(tmp))
        messages = public_chats.convert(dataset, args.messages, args.seed)
    began = time.monotonic()
    found = []
    for m in messages:
        day = datetime.fromisoformat(str(m.sent_at)).date() if m.sent_at else None
        text = m.text if args.notes else mail_words(m.text)  # as the worker reads a line sent
        found += [(m, e) for e in events.text_events(text, day, note=args.notes is not None, plans=True)]
    seconds = time.monotonic() - began
    told = len({m.ordinal for m, _ in found})
    print(f"{len(messages)} messages, {told} tell at least one event ({told / len(messages):.0%}), "
          f"{len(found)} events, read in {seconds:.1f} s ({len(messages) / seconds:.0f} messages/s)")  # fmt: skip
    share = lambda test: f"{sum(1 for _, e in found if test(e)) / max(len(found), 1):.0%}"  # noqa: E731
    print(
        "with a relative day", share(lambda e: e.day_source == "relative"), "| a duration",
        share(lambda e: e.minutes is not None), "| a distance", share(lambda e: e.km is not None),
        "| money", share(lambda e: e.amount is not None), "| a person", share(lambda e: e.people),
        "| a place", share(lambda e: e.place),
    )  # fmt: skip
    planned = sum(1 for _, e in found if e.planned)
    print(f"plans (kept apart, never counted as done): {planned} of the {len(found)}")
    print(
        "most common activities:",
        ", ".join(f"{a} {n}" for a, n in Counter(e.activity for _, e in found).most_common(30)),
    )
    if args.all:
        print("\nevery event:")
        lines = [
            f"- {e.activity:12}{' (planned)' if e.planned else ''} | {' '.join(e.sentence.split())[:110]}"
            for _, e in found
        ]
        for line in sorted(lines):
            print(line)
        return
    print(f"\n{args.sample} events at random (seed {args.seed}):")
    for m, e in random.Random(args.seed).sample(found, min(args.sample, len(found))):
        extra = ", ".join(
            f"{k} {v}" for k, v in (("day", e.day if e.day_source == "relative" else None), ("min", e.minutes),
                                   ("km", e.km), ("amount", e.amount), ("with", ", ".join(e.people) or None),
                                   ("at", e.place)) if v
        )  # fmt: skip
        print(f"- {e.activity:12} {extra:40.40} | {' '.join(m.text.split())[:110]}")


if __name__ == "__main__":
    main()
