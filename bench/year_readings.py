"""Benchmark: how often the temporal signal reads a number from 1000 to 1899 as a year, on real text.

Every line of the text files under DIR (gzip read too; at most --files files, in name order)
that holds a standalone number from 1000 to 1899 is read by plpy/temporal.py's detect, as a
query would be (its first 300 characters). Printed: how many such lines and numbers there are,
how many of the numbers a reader without context rules would take for years (every standalone
4-digit number in range, the rule for 1900 onwards), how many signals of each kind detect
reads before 1900, and a seeded sample of them to judge by eye. Software documentation and
changelogs (Debian's /usr/share/doc, say) are full of counts, sizes, ports and CVE numbers and
hold some real history (time zone changelogs): the share read as years should be small, and the
sample mostly history.

    .venv/bin/python -m bench.year_readings DIR [--files 3000] [--sample 25] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import datetime
import gzip
import random
import re
from pathlib import Path

from tests.support import plpy

temporal = plpy.load("temporal")

OLD_NUMBER = re.compile(r"(?<![0-9A-Za-z_])1[0-8][0-9]{2}(?![0-9A-Za-z_])")
QUERY_CHARS = 300


def lines_of(path: Path) -> list[str]:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", errors="replace") as fh:
                return fh.read().splitlines()
        return path.read_text(errors="replace").splitlines()
    except (OSError, EOFError, gzip.BadGzipFile):
        return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--sample", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    today = datetime.date.today()
    files = sorted(p for p in args.dir.rglob("*") if p.is_file() and not p.is_symlink())[: args.files]
    lines = numbers = 0
    kinds: collections.Counter[str] = collections.Counter()
    read: list[tuple[str, str, str]] = []
    for path in files:
        for line in lines_of(path):
            query = line[:QUERY_CHARS]
            found = OLD_NUMBER.findall(query)
            if not found:
                continue
            lines += 1
            numbers += len(found)
            for s in temporal.detect(query, [], today)["signals"]:
                year = s.get("year") or s.get("first")
                if year and year < 1900:
                    kinds[s["kind"]] += 1
                    read.append((s["kind"], s["text"], " ".join(query.split())[:100]))
    print(f"{len(files):,} files, {lines:,} lines with a number from 1000 to 1899, {numbers:,} such numbers")
    print(f"without context rules: {numbers:,} read as years")
    print(f"detect: {sum(kinds.values()):,} signals before 1900 ({dict(kinds)}), "
          f"{sum(kinds.values()) / max(numbers, 1):.1%} of the numbers")  # fmt: skip
    for kind, text, line in random.Random(args.seed).sample(read, min(args.sample, len(read))):
        print(f"  {kind:<10} {text!r:<16} {line}")


if __name__ == "__main__":
    main()
