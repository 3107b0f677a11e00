"""Benchmark: the owner's statements of a value (worker/exocortex/extraction/statements.py) on
real chat messages nobody here wrote.

Data: the PyPI package `chitchat-dataset` (as bench/public_chats.py fetches it: real two-person
chats, 2018). Every message of the first --max-messages (whole conversations, seeded order) is
read as if its sender were the owner (statements.statements(text, {"I"})), the way the worker
reads an owner's line. Printed: how many messages state a value, the attributes most often read,
and a seeded sample of --sample statements with their messages, for a person to judge (the
precision figure in docs/benchmarks.md is such a judgement); and the pass's time a message.

    .venv/bin/python -m bench.statements_public [--package chitchat-dataset==0.9.0]
        [--max-messages 5000] [--seed 7] [--sample 40]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.public_chats import convert, fetch
from exocortex.extraction import statements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="chitchat-dataset==0.9.0")
    parser.add_argument("--max-messages", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sample", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-bench-statements-") as tmp:
        messages = convert(fetch(args.package, Path(tmp)), args.max_messages, args.seed)
    began = time.perf_counter()
    found = [(m.text, a, v) for m in messages for _, a, v in statements.statements(m.text, {"I"})]
    seconds = time.perf_counter() - began
    stating = len({text for text, _, _ in found})
    print(f"{len(messages):,} messages: {stating} state a value ({len(found)} statements), "
          f"{1000 * seconds / max(1, len(messages)):.2f} ms a message")  # fmt: skip
    print(
        "attributes read most: "
        + ", ".join(f"{a} {n}" for a, n in Counter(a for _, a, _ in found).most_common(15))
    )
    for text, attribute, value in random.Random(args.seed).sample(found, min(args.sample, len(found))):
        print(f"  {attribute} = {value!r}  <- {' '.join(text.split())[:140]}")


if __name__ == "__main__":
    main()
