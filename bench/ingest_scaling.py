"""Benchmark: ingest time against file size, which should grow linearly.

One plain-text file per size (prose with accented and non-Latin characters, so
the text is multi-byte UTF-8) and one HTML file per nesting depth (N nested
<div>s), each ingested alone as its own source into one scratch database
migrated from zero. Each ingest runs in a fresh process, which reports its own
peak memory and its extraction process's. Printed per file: seconds; seconds
per MB net of the fixed cost of a run (measured in the same run as the ingest
of a one-line file: interpreter, connection, extraction process); and the
marginal seconds per MB from the previous file to this one, over their median:
flat = linear (a cost that grows with the square of the size doubles the
marginal cost each time the size doubles). Baseline, also measured in the same
run: hashing each file (sha256), the least any ingest of it costs.

    .venv/bin/python -m bench.ingest_scaling              # text 1-50 MB, HTML 10k-400k levels
    .venv/bin/python -m bench.ingest_scaling --large      # text up to 200 MB as well (minutes more)
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ops.migrate import scratch_database

MB = 1_000_000
TEXT_SIZES_MB = [1, 2, 5, 10, 25, 50]
LARGE_SIZES_MB = [100, 200]
HTML_LEVELS = [10_000, 20_000, 40_000, 100_000, 400_000]
WORDS = [
    "postgres", "vacuum", "replication", "index", "query", "latency", "backup", "schema", "server",
    "cluster", "the", "a", "and", "of", "to", "in", "with", "caf\u00e9", "na\u00efve", "r\u00e9sum\u00e9",
    "\u00fcber", "\u65e5\u672c\u8a9e", "\u0434\u0430\u043d\u043d\u044b\u0435",
]  # fmt: skip


def write_text(path: Path, size: int, seed: int) -> None:
    """About size bytes of paragraphs (40-160 words each), written in blocks."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("w", encoding="utf-8") as f:
        while written < size:
            paragraphs = []
            for _ in range(200):
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 160)))
                paragraphs.append(words.capitalize() + ".")
            block = "\n\n".join(paragraphs) + "\n\n"
            block = block.encode()[: size - written].decode(errors="ignore")
            f.write(block)
            written += len(block.encode())


def write_html(path: Path, levels: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<html><body>" + "<div>postgres vacuum " * levels + "</div>" * levels + "</body></html>")


def sha256_seconds(path: Path) -> float:
    began = time.perf_counter()
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return time.perf_counter() - began


def measure(root: Path, dbname: str) -> dict:
    """Ingest root in a fresh process; its summary with the seconds and peak memory (MB) of both processes."""
    code = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "from exocortex import config\n"
        "from exocortex.ingest.pipeline import ingest, summary_json\n"
        "s = summary_json(ingest(config.load(), Path(sys.argv[1]), dbname=sys.argv[2]))\n"
        # VmHWM: this process's own peak (ru_maxrss would count the benchmark's, from before exec)
        "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
        "s['client_mb'] = int(hwm.split()[1]) / 1024\n"
        # the extraction process's peak (at least what it shared with this one when it started)
        "s['extractor_mb'] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps(s))\n"
    )
    began = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), dbname], capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout)
    result["wall_s"] = time.perf_counter() - began
    return result


def report(title: str, rows: list[tuple[str, int, dict, float]], fixed_s: float) -> None:
    """Per file: seconds; net s/MB (less the fixed cost of a run); the marginal s/MB from the
    previous file to this one, in which the fixed cost cancels; and that over the median."""
    print(title)
    print(f"  {'file':>16} {'MB':>6} {'ingest s':>9} {'net s/MB':>8} {'marginal s/MB':>13} {'ratio':>6} "
          f"{'sha256 s':>8} {'stage':>8} {'client MB':>9} {'extractor MB':>12}")  # fmt: skip
    marginal = [None] + [
        (b[2]["wall_s"] - a[2]["wall_s"]) / ((b[1] - a[1]) / MB) for a, b in itertools.pairwise(rows)
    ]
    middle = statistics.median(m for m in marginal if m is not None)
    for (name, size, result, hashed), step in zip(rows, marginal, strict=True):
        net = (result["wall_s"] - fixed_s) / (size / MB)
        step_text = f"{step:13.3f} {step / middle:6.2f}" if step is not None else f"{'':13} {'':6}"
        print(
            f"  {name:>16} {size / MB:6.1f} {result['wall_s']:9.2f} {net:8.3f} {step_text} {hashed:8.3f} "
            f"{next(iter(result['run']), '?'):>8} {result['client_mb']:9.0f} {result['extractor_mb']:12.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="add 100 MB and 200 MB text files")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = TEXT_SIZES_MB + (LARGE_SIZES_MB if args.large else [])
    cfg = config.load()
    work = Path(tempfile.mkdtemp(prefix="exo-bench-scaling-"))
    try:
        with scratch_database(cfg, "bench_scaling") as dbname:
            with connect(admin_url(cfg, dbname), "exo-bench-scaling", autocommit=True) as admin:
                # the files stand for large prose, which ingest.max_text_bytes would skip as logs
                admin.execute("select exo_private.set_setting('ingest.max_text_bytes', 'null')")
            fixed = []
            for i in range(3):  # each a new file, extracted and chunked
                tiny = work / f"tiny-{i}"
                write_text(tiny / "work" / "one-line.txt", 100, args.seed + 100 + i)
                fixed.append(measure(tiny, dbname)["wall_s"])
            fixed_s = min(fixed)
            text_rows = []
            for i, mb in enumerate(sizes):
                root = work / f"text-{mb}"
                path = root / "work" / f"notes-{mb}mb.txt"
                write_text(path, mb * MB - (1 if mb == 200 else 0), args.seed + i)  # 200 MB: under the limit
                text_rows.append(
                    (path.name, path.stat().st_size, measure(root, dbname), sha256_seconds(path))
                )
                shutil.rmtree(root)
            html_rows = []
            for levels in HTML_LEVELS:
                root = work / f"html-{levels}"
                path = root / "work" / f"nested-{levels // 1000}k.html"
                write_html(path, levels)
                html_rows.append(
                    (path.name, path.stat().st_size, measure(root, dbname), sha256_seconds(path))
                )
                shutil.rmtree(root)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of this process (it writes the files): {peak:.0f} MB")
        print(f"fixed cost of a run (a one-line file): {fixed_s:.2f} s")
        report("plain text (multi-byte UTF-8), one file per run:", text_rows, fixed_s)
        report("nested HTML (N nested <div>s), one file per run:", html_rows, fixed_s)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
