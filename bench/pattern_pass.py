"""Benchmark: the CPU passes of extraction on text nobody here wrote (the pattern pass by default).

Every changelog, NEWS, README, AUTHORS, THANKS and .txt file under --doc-root (Debian's
/usr/share/doc: maintainers' and upstream authors' prose, names, thanks to wives and employers,
"moved to ..." lines) is cut into windows of --chars characters, as extraction cuts a document,
and each window goes through the pass (--pass: relation_patterns.find, relation_syntax.find, or
statements.statements, the owner's statements of a value) with a stand-in author for "I" and "my"
(as in a note of its owner). Every relation found is printed with the sentence that states it, for a person to judge;
the summary is the count of windows and relations, and the time of the pass against the time of
merely splitting the same windows into sentences (the baseline, measured in the same run).

    .venv/bin/python -m bench.pattern_pass [--doc-root /usr/share/doc] [--chars 2000] [--limit 100000]
        [--pass patterns|syntax|statements]
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

from exocortex.extraction import relation_patterns, relation_syntax, statements

GLOBS = ("*/changelog*.gz", "*/NEWS*", "*/README*", "*/AUTHORS*", "*/THANKS*", "*/*.txt*")
AUTHOR = "Owner Person"


def texts(doc_root: Path, limit: int) -> list[tuple[str, str]]:
    """(package, text) of every file of GLOBS, its first `limit` characters."""
    out = []
    for path in sorted({p for pattern in GLOBS for p in doc_root.glob(pattern) if p.is_file()}):
        try:
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        out.append((path.parent.name, data.decode("utf-8", "replace")[:limit]))
    return out


def windows(text: str, chars: int) -> list[str]:
    """text cut at line ends into windows of about `chars` characters."""
    out, current = [], []
    size = 0
    for line in text.split("\n"):
        if size + len(line) > chars and current:
            out.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        out.append("\n".join(current))
    return out


def stated(window: str) -> list[dict]:
    """The owner's statements of a value in a window, as relations (the author's note: "my" is theirs)."""
    return [
        {"subject": AUTHOR, "predicate": attribute, "object": value, "evidence": window}
        for _, attribute, value in statements.statements(window, {"I"})
    ]


# What each pass finds in a window, as relations {subject, predicate, object, evidence}.
PASSES = {
    "patterns": lambda w: relation_patterns.find(w, AUTHOR),
    "syntax": lambda w: relation_syntax.find(w, AUTHOR),
    "statements": stated,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc-root", type=Path, default=Path("/usr/share/doc"))
    parser.add_argument("--chars", type=int, default=2000, help="characters a window")
    parser.add_argument("--limit", type=int, default=100_000, help="characters read of each file")
    parser.add_argument(
        "--pass",
        dest="which",
        choices=("patterns", "syntax", "statements"),
        default="patterns",
        help="the regex pattern pass (default), the syntax pass of relations, or the owner's statements of a value",
    )
    args = parser.parse_args()
    docs = texts(args.doc_root, args.limit)
    cut = [(package, w) for package, text in docs for w in windows(text, args.chars)]
    began = time.perf_counter()
    for _, w in cut:
        list(relation_patterns.sentences(w, AUTHOR))
    baseline = time.perf_counter() - began
    began = time.perf_counter()
    found = [(package, r) for package, w in cut for r in PASSES[args.which](w)]
    seconds = time.perf_counter() - began
    for package, r in found:
        evidence = r["evidence"][:160].replace("\n", " ")
        print(f"{package} | {r['subject']} | {r['predicate']} | {r['object']} | {evidence}")
    chars = sum(len(w) for _, w in cut)
    print(
        f"{len(docs)} files, {len(cut)} windows, {chars} characters: {len(found)} relations; "
        f"{args.which} pass {seconds:.1f} s ({1000 * seconds / max(1, len(cut)):.2f} ms a window), "
        f"{seconds / baseline if baseline else float('nan'):.1f}x the sentence split alone ({baseline:.1f} s)"
    )


if __name__ == "__main__":
    main()
