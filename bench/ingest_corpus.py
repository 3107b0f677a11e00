"""Benchmark: first ingest of a generated corpus, and a re-scan of it unchanged.

The corpus is 10,000 mixed files (Markdown, text, HTML, email, CSV, DOCX, PDF)
across the four workspace folders and an inbox, made with a fixed seed. Both
runs go into a scratch database migrated from zero. Baseline, measured in the
same run: a plain os.walk + stat of the same tree (the least any re-scan costs).

    .venv/bin/python -m bench.ingest_corpus [--files 10000] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

from exocortex import config
from exocortex.ingest.pipeline import ingest
from exocortex.ops.migrate import scratch_database

FOLDERS = ["work", "writing", "diary", "admin", "inbox"]
WORDS = {
    "work": [
        "postgres",
        "vacuum",
        "index",
        "replication",
        "server",
        "query",
        "latency",
        "backup",
        "schema",
        "upgrade",
        "cluster",
    ],
    "writing": [
        "lighthouse",
        "keeper",
        "lantern",
        "sea",
        "chapter",
        "moon",
        "whisper",
        "storm",
        "ink",
        "tide",
    ],
    "diary": [
        "walk",
        "friend",
        "dinner",
        "tired",
        "happy",
        "weekend",
        "dog",
        "morning",
        "family",
        "remember",
    ],
    "admin": [
        "invoice",
        "tax",
        "insurance",
        "policy",
        "rent",
        "payment",
        "due",
        "receipt",
        "premium",
        "statement",
    ],
    "inbox": ["list", "note", "idea", "maybe", "later", "things", "stuff", "call", "errand"],
}
FILLER = [
    "the",
    "a",
    "and",
    "of",
    "to",
    "in",
    "with",
    "for",
    "on",
    "at",
    "by",
    "from",
    "after",
    "before",
    "while",
    "during",
]
KINDS = ["md"] * 70 + ["txt"] * 10 + ["html"] * 5 + ["eml"] * 5 + ["csv"] * 3 + ["docx"] * 3 + ["pdf"] * 4


def paragraph(rng: random.Random, folder: str) -> str:
    words = [rng.choice(WORDS[folder] if rng.random() < 0.3 else FILLER) for _ in range(rng.randint(40, 120))]
    return " ".join(words).capitalize() + "."


def body(rng: random.Random, folder: str) -> str:
    return "\n\n".join(paragraph(rng, folder) for _ in range(rng.randint(2, 8)))


def make_corpus(root: Path, files: int, seed: int) -> None:
    from docx import Document
    from fpdf import FPDF

    rng = random.Random(seed)
    for i in range(files):
        folder = rng.choice(FOLDERS)
        year = rng.randint(2010, 2026)
        kind = rng.choice(KINDS)
        path = root / folder / str(year) / f"doc-{i:05d}.{kind}"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = body(rng, folder)
        if kind == "md":
            path.write_text(
                f"---\ntitle: Note {i}\ndate: {year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n---\n{text}"
            )
        elif kind == "txt":
            path.write_text(text)
        elif kind == "html":
            paras = "".join(f"<p>{p}</p>" for p in text.split("\n\n"))
            path.write_text(f"<html><head><title>Page {i}</title></head><body>{paras}</body></html>")
        elif kind == "eml":
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Subject"] = "a@example.org", "b@example.org", f"Mail {i}"
            msg.set_content(text)
            path.write_bytes(bytes(msg))
        elif kind == "csv":
            path.write_text("\n".join(",".join(str(rng.randint(0, 99)) for _ in range(5)) for _ in range(40)))
        elif kind == "docx":
            doc = Document()
            for p in text.split("\n\n"):
                doc.add_paragraph(p)
            doc.save(path)
        else:
            pdf = FPDF()
            pdf.add_page()
            pdf.set_font("Helvetica", size=10)
            pdf.multi_cell(0, 5, text)
            pdf.output(str(path))


def walk_and_stat(root: Path) -> int:
    n = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            os.lstat(os.path.join(dirpath, name))
            n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cfg = config.load()
    work = Path(tempfile.mkdtemp(prefix="exo-bench-corpus-"))
    try:
        began = time.perf_counter()
        make_corpus(work, args.files, args.seed)
        print(f"corpus: {args.files} files generated in {time.perf_counter() - began:.1f} s")
        with scratch_database(cfg, "bench_ingest") as name:
            began = time.perf_counter()
            first = ingest(cfg, work, dbname=name)
            first_s = time.perf_counter() - began
            began = time.perf_counter()
            again = ingest(cfg, work, dbname=name)
            rescan_s = time.perf_counter() - began
            began = time.perf_counter()
            walked = walk_and_stat(work)
            walk_s = time.perf_counter() - began
        print(f"first ingest: {first.seen} files in {first_s:.1f} s = {first.seen / first_s:.0f} docs/s")
        print(f"  stages: {dict(first.stages)}")
        print(f"re-scan, unchanged: {again.seen} files in {rescan_s:.2f} s ({again.processed} processed)")
        print(f"baseline, os.walk + lstat: {walked} files in {walk_s:.3f} s")
        print(
            f"ratios: first ingest / re-scan = {first_s / rescan_s:.0f}x; re-scan / walk baseline = {rescan_s / walk_s:.1f}x"
        )
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
