"""Benchmark: what exact edges from structure (sql/310_structural_graph.sql) add to an ingest.

One folder of emails (written by the standard library: From, To, Cc, Date, Message-ID, a third
of them replies with In-Reply-To and References) and notes (frontmatter attendees and location,
[[wiki links]] to the people's own notes) is ingested into two scratch databases migrated from
zero, one with graph.structural on and one with it off, alternately, twice each. Printed: the
structural rows built, each ingest's seconds, and the median ratio on/off (the baseline is the
same ingest without structural edges, measured in the same run).

    .venv/bin/python -m bench.structural_graph                 # 600 emails, 400 notes
    .venv/bin/python -m bench.structural_graph --emails 2000 --notes 1000
"""

from __future__ import annotations

import argparse
import email.utils
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ingest import pipeline
from exocortex.ops.migrate import grant_database_privileges, scratch_database

FIRST = ["Ann", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal", "Ida", "Jo", "Kit", "Lou", "Max", "Ned"]
LAST = ["Ward", "Lund", "Moss", "Park", "Ray", "Hale", "Shaw"]
PLACES = ["Larkhaven", "Brightwater", "Old Quay", "Mill Lane", "Ashby", "Fenwick"]


def people(rng: random.Random, n: int) -> list[str]:
    return rng.sample([f"{f} {last}" for f in FIRST for last in LAST], n)


def address(name: str) -> str:
    return name.lower().replace(" ", ".") + "@example.org"


def write_corpus(root: Path, n_emails: int, n_notes: int, seed: int = 16) -> None:
    rng = random.Random(seed)
    crowd = people(rng, 60)
    start = datetime(2023, 1, 1, 9, 0, tzinfo=UTC)
    sent: list[tuple[str, str]] = []  # (message id, sender)
    for i in range(n_emails):
        sender, *others = rng.sample(crowd, 1 + rng.randint(1, 4))
        to, cc = others[: max(1, len(others) // 2)], others[max(1, len(others) // 2) :]
        msg = EmailMessage()
        msg["From"] = f"{sender} <{address(sender)}>"
        msg["To"] = ", ".join(f"{p} <{address(p)}>" for p in to)
        if cc:
            msg["Cc"] = ", ".join(f"{p} <{address(p)}>" for p in cc)
        msg["Subject"] = f"Allotment rota {i}"
        msg["Date"] = email.utils.format_datetime(start + timedelta(hours=7 * i))
        msg["Message-ID"] = f"<m{i}@example.org>"
        if sent and rng.random() < 0.33:
            parent = rng.choice(sent[-50:])[0]
            msg["In-Reply-To"] = f"<{parent}>"
            msg["References"] = f"<{parent}>"
        msg.set_content(f"Hello all,\n\nThe rota for week {i % 52} is attached.\n\n{sender}\n")
        (root / "mail").mkdir(exist_ok=True)
        (root / "mail" / f"m{i}.eml").write_bytes(bytes(msg))
        sent.append((f"m{i}@example.org", sender))
    (root / "notes").mkdir(exist_ok=True)
    for name in crowd[:20]:
        (root / "notes" / f"{name}.md").write_text(f"# {name}\n\nKnows [[{rng.choice(crowd[:20])}]].\n")
    for i in range(n_notes):
        attendees = rng.sample(crowd, rng.randint(2, 4))
        day = (start + timedelta(days=i)).date().isoformat()
        (root / "notes" / f"meeting-{i}.md").write_text(
            f"---\ndate: {day}\nattendees: [{', '.join(attendees)}]\nlocation: {rng.choice(PLACES)}\n---\n"
            f"# Meeting {i}\n\nWe talked with [[{rng.choice(crowd[:20])}]] about the water butts.\n"
        )


def ingest_seconds(cfg, root: Path, dbname: str) -> float:
    began = time.perf_counter()
    pipeline.ingest(cfg, root, "personal", dbname=dbname)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emails", type=int, default=600)
    parser.add_argument("--notes", type=int, default=400)
    args = parser.parse_args()
    cfg = config.load()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_corpus(root, args.emails, args.notes)
        files = args.emails + args.notes + 20
        timings: dict[bool, list[float]] = {True: [], False: []}
        for round_ in range(2):
            for structural in (True, False):
                with scratch_database(cfg, f"structural_{int(structural)}_{round_}") as name:
                    with connect(admin_url(cfg, name), "bench-structural", autocommit=True) as conn:
                        grant_database_privileges(conn)
                        conn.execute(
                            "select exo_private.set_setting('graph.structural', %s::jsonb)",
                            ("true" if structural else "false",),
                        )
                    seconds = ingest_seconds(cfg, root, name)
                    timings[structural].append(seconds)
                    print(f"round {round_ + 1}, structural {'on ' if structural else 'off'}: {seconds:.1f} s")
                    if structural and round_ == 0:
                        with connect(admin_url(cfg, name), "bench-structural", autocommit=True) as conn:
                            rows = conn.execute(
                                """select predicate, count(*) from exo_private.relations
                                   where origin = 'structure' group by 1 order by 1"""
                            ).fetchall()
                        print(
                            f"{files} files: structural relations " + ", ".join(f"{p} {n}" for p, n in rows)
                        )
        on, off = statistics.median(timings[True]), statistics.median(timings[False])
        print(f"median ingest on/off: {on:.1f} s / {off:.1f} s = {on / off:.2f}x")


if __name__ == "__main__":
    main()
