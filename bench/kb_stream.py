"""Benchmark: a question stream with recurring interests against a personal base (issue 17).

Data: the Debian changelogs of the packages installed where it runs (every
/usr/share/doc/PACKAGE/changelog.Debian.gz, the newest --chars characters of each), one .txt
document per package ("PACKAGE: Debian changelog", then its entries), ingested into one
workspace of a scratch database and embedded by the embedding server of your database
(models.embeddings); --packages of them, drawn at random (seeded).

The stream: --questions questions of a user who keeps asking about a few packages among many.
Each question is a changelog line (at least six words) of one package: with probability
--interest one of --topics favourite packages, else any other package (the long tail). The
user is a profile 'stream' with its own login role (a member of exo_reader: a session of it is
the profile) and behaves as a person would: every search is recorded (a read-write transaction
in a session of the profile's role), and every save suggestion its provenance block shows is
accepted (exo.kb_accept_suggestion(document_id), in the same transaction). Each question is
asked twice, exo.context_packet_json(q, token_budget), in the same run:

  with        in the session of the profile's role                 (recorded)
  without     in a session of exo_reader, which has no profile     (read-only, nothing recorded)

Reported over the questions after the first --warmup: the share answered from the personal
base (the packet cites the package's document as found by the personal stage), the share
whose packet cites the package's document at all (with and without the profile), and the
packet tokens with and without the profile (mean; the packet with a profile carries its
provenance block), split into the favourite topics and the long tail.

    .venv/bin/python -m bench.kb_stream [--packages 150] [--questions 160] [--topics 5]
        [--interest 0.7] [--warmup 40] [--token-budget 600] [--chars 2500] [--similarity S]
        [--miss-streak N] [--seed 7]
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from statistics import mean

from bench.scratch import serve_embeddings_from
from bench.search_latency import reader
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ingest import pipeline
from exocortex.ops import profiles
from exocortex.ops.migrate import scratch_database
from exocortex.worker.loop import Worker

DOCS = Path("/usr/share/doc")
WORKSPACE = "technical"
PROFILE = "stream"
PACKET = "select exo.context_packet_json(%s, %s, array[%s], query_embedding => null)"
#: The profile's recording caps (per minute), lifted: the stream records many times a minute.
WRITE_CAPS = ("kb.writes_per_minute", "kb.write_rows_per_minute", "kb.write_bytes_per_minute")


def changelogs(n: int, chars: int, rng: random.Random) -> dict[str, str]:
    """n packages' changelogs (the newest `chars` characters), drawn at random among those with
    at least three question lines."""
    found = {}
    for path in sorted(DOCS.glob("*/changelog.Debian.gz")):
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")[:chars]
        except (OSError, EOFError):
            continue
        if len(question_lines(text)) >= 3:
            found[path.parent.name] = text
    if len(found) < n:
        raise SystemExit(
            f"only {len(found)} packages with a changelog of three question lines here, asked {n}"
        )
    return {name: found[name] for name in sorted(rng.sample(sorted(found), n))}


def question_lines(text: str) -> list[str]:
    """The changelog's entry lines of six words or more, as questions (bullets and bug numbers gone)."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"\(?Closes: *#\d+(, *#\d+)*\)?\.?", "", line.strip().lstrip("*-+ ")).strip()
        if len(line.split()) >= 6 and not line.startswith("--") and "urgency=" not in line:
            lines.append(line)
    return lines


def build(cfg, name: str, packages: dict[str, str], settings: dict[str, float]) -> tuple[dict[str, int], str]:
    """Make the profile and its login role, ingest one document per package, embed it; returns
    ({package: document id} of those embedded, the profile's role)."""
    with connect(admin_url(cfg), "exo-bench-kb-stream", autocommit=True) as main:
        url = main.execute(
            "select value ->> 'url' from exo_private.settings where key = 'models.embeddings'"
        ).fetchone()
    with connect(admin_url(cfg, name), "exo-bench-kb-stream", autocommit=True) as admin:
        serve_embeddings_from(admin, url[0])
        for cap in WRITE_CAPS:
            admin.execute("select exo_private.set_setting(%s, '1000000')", (cap,))
        role = profiles.ensure(admin, cfg, PROFILE)
        for key, value in settings.items():
            admin.execute("select exo_private.set_setting(%s, %s::jsonb)", (key, str(value)))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "changelogs"
        root.mkdir()
        for package, text in packages.items():
            (root / f"{package}.txt").write_text(f"{package}: Debian changelog\n\n{text}\n")
        pipeline.ingest(cfg, root, workspace=WORKSPACE, dbname=name)
    Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.05).run()
    with connect(admin_url(cfg, name), "exo-bench-kb-stream", autocommit=True) as admin:
        rows = admin.execute(
            "select d.id, d.path, (select count(*) from exo_private.chunk_embeddings e "
            "join exo_private.chunks c on c.workspace = e.workspace and c.id = e.chunk_id "
            "where c.document_id = d.id) from exo_private.documents d"
        ).fetchall()
        admin.execute("vacuum analyze")
    embedded = {Path(path).stem: doc for doc, path, vectors in rows if vectors}
    if not embedded:
        raise SystemExit("no document has embeddings: is the embedding server of models.embeddings up?")
    print(
        f"{len(packages) - len(embedded)} of {len(packages)} changelogs left out (not embedded)", flush=True
    )
    return embedded, role


def stream(packages: dict[str, str], args, rng: random.Random) -> list[tuple[str, str, bool]]:
    """(package, question, favourite) for each question of the stream."""
    names = sorted(packages)
    favourites = rng.sample(names, args.topics)
    tail = [p for p in names if p not in favourites]
    out = []
    for _ in range(args.questions):
        favourite = rng.random() < args.interest
        package = rng.choice(favourites if favourite else tail)
        out.append((package, rng.choice(question_lines(packages[package])), favourite))
    return out


def cited(packet: dict, document: int, stage: str | None = None) -> bool:
    """Whether the packet cites the document (found by `stage`, when given)."""
    return any(u["document_id"] == document and stage in (None, u["stage"]) for u in packet["used"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=150)
    parser.add_argument("--questions", type=int, default=160)
    parser.add_argument("--topics", type=int, default=5)
    parser.add_argument("--interest", type=float, default=0.7)
    parser.add_argument("--warmup", type=int, default=40)
    parser.add_argument("--token-budget", type=int, default=600)
    parser.add_argument("--chars", type=int, default=2500)
    parser.add_argument("--similarity", type=float, help="kb.similarity_threshold (default: the setting's)")
    parser.add_argument("--miss-streak", type=int, help="kb.max_cache_miss_streak (default: the setting's)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cfg = config.load()
    rng = random.Random(args.seed)
    print(
        f"{datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True
    )
    packages = changelogs(args.packages, args.chars, rng)
    rows = []
    with scratch_database(cfg, "bench_kb_stream") as name:
        began = time.perf_counter()
        settings = {"kb.similarity_threshold": args.similarity, "kb.max_cache_miss_streak": args.miss_streak}
        ids, role = build(cfg, name, packages, {k: v for k, v in settings.items() if v is not None})
        print(
            f"corpus: {len(ids)} changelogs built and embedded in {time.perf_counter() - began:.0f} s",
            flush=True,
        )
        packages = {p: packages[p] for p in ids}
        questions = stream(packages, args, rng)
        with (
            reader(cfg, name, "exo-bench-kb-stream") as conn,
            connect(role_url(cfg, role, name), "exo-bench-kb-stream", autocommit=True) as mine,
        ):
            if mine.execute("select exo.profile()").fetchone()[0] != PROFILE:
                raise SystemExit(f"a session of {role} is expected to be profile {PROFILE!r}")
            for n, (package, question, favourite) in enumerate(questions):
                target = ids[package]
                with mine.transaction():
                    mine.execute("set transaction read write")
                    with_ = mine.execute(PACKET, (question, args.token_budget, WORKSPACE)).fetchone()[0]
                    for source in with_["report"]["provenance"]["sources"]:
                        if source["suggestion"]:
                            mine.execute("select exo.kb_accept_suggestion(%s)", (source["document_id"],))
                without = conn.execute(PACKET, (question, args.token_budget, WORKSPACE)).fetchone()[0]
                personal = with_["report"]["personal"]
                rows.append({
                    "n": n, "favourite": favourite,
                    "from_base": cited(with_, target, "personal"),
                    "any_personal": bool(personal.get("hits")), "mode": personal.get("mode"),
                    "held_with": cited(with_, target),
                    "held_without": cited(without, target),
                    "tokens_with": with_["tokens"], "tokens_without": without["tokens"],
                })  # fmt: skip
        with connect(admin_url(cfg, name), "exo-bench-kb-stream", autocommit=True) as admin:
            states = dict(
                admin.execute(
                    "select state::text, count(*) from exo_private.kb_items group by 1 order by 1"
                ).fetchall()
            )
    after = [r for r in rows if r["n"] >= args.warmup]
    threshold = "default" if args.similarity is None else args.similarity
    streak = "default" if args.miss_streak is None else args.miss_streak
    print(f"\n{len(questions)} questions ({args.topics} favourite packages of {len(packages)}, interest "
          f"{args.interest:.0%}), token budget {args.token_budget}, kb.similarity_threshold {threshold}, "
          f"kb.max_cache_miss_streak {streak}; after the first {args.warmup}:")  # fmt: skip
    print(f"  {'questions':<22} {'n':>4} {'from the base':>14} {'held with':>10} {'held without':>13} "
          f"{'tokens with':>12} {'tokens without':>15}")  # fmt: skip
    for label, part in [
        ("all", after),
        ("favourite topics", [r for r in after if r["favourite"]]),
        ("long tail", [r for r in after if not r["favourite"]]),
    ]:
        if not part:
            continue
        share = lambda key, part=part: sum(r[key] for r in part) / len(part)  # noqa: E731
        print(
            f"  {label:<22} {len(part):>4} {share('from_base'):>14.0%} {share('held_with'):>10.0%} "
            f"{share('held_without'):>13.0%} {mean(r['tokens_with'] for r in part):>12.0f} "
            f"{mean(r['tokens_without'] for r in part):>15.0f}"
        )
    print(f"  any personal-stage hit: {sum(r['any_personal'] for r in after) / max(1, len(after)):.0%}; "
          f"personal stage modes: {dict(Counter(str(r['mode']) for r in after))}")  # fmt: skip
    print(f"  the base at the end: {states}")


if __name__ == "__main__":
    main()
