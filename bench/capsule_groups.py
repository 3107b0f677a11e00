"""Benchmark: folder and workspace capsules on a real folder, and what they cost a search.

A folder (Debian's /usr/share/doc, say) is ingested into one workspace of a scratch database
migrated from zero; the worker builds the document capsules (capsules queue), then
exo_private.queue_capsules() queues the folders and the workspace due and the worker builds
them. Reported: how many group capsules, their tokens, the build time per capsule, whether
every line is its cited chunk's text, queue_capsules' time; then, per question, the capsule
stage alone through exo.search_json (milliseconds, whether a group capsule was served) and
EXPLAIN (analyze, buffers) of the stage's capsule match (the capsules holding any of the
question's words, and their states).
Entity capsules need extraction (a model): tests/test_capsules_groups.py covers them.

    .venv/bin/python -m bench.capsule_groups --folder /usr/share/doc [--workspace technical]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ingest.pipeline import ingest
from exocortex.ops.migrate import scratch_database
from exocortex.worker.loop import Worker

QUESTIONS = [
    "what does this package document about configuration files",
    "license and copyright of the software",
    "how to report bugs upstream",
]
MATCH = """
select k.id, k.scope, s.state
from exo_private.capsules k
join exo_private.capsule_states s on s.capsule_id = k.id
where k.workspace = %s and k.tsv @@ pg_catalog.websearch_to_tsquery('english', %s)
order by pg_catalog.ts_rank(k.tsv, pg_catalog.websearch_to_tsquery('english', %s)) desc, k.id
limit 30
"""


def drain(cfg: config.Config, name: str) -> tuple[int, float]:
    began = time.perf_counter()
    result = Worker(cfg, dbname=name, once=True, queues=("capsules",), concurrency=1, poll_s=0.01).run()
    return result.done["capsules"], time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--workspace", default="technical")
    args = parser.parse_args()
    cfg = config.load()
    with scratch_database(cfg, "bench_capsule_groups") as name:
        began = time.perf_counter()
        ingest(cfg, args.folder, args.workspace, dbname=name)
        print(f"ingest of {args.folder}: {time.perf_counter() - began:.0f} s")
        built, seconds = drain(cfg, name)
        print(f"document capsules: {built} built in {seconds:.1f} s")
        with connect(admin_url(cfg, name), "bench-capsule-groups", autocommit=True) as admin:
            documents = admin.execute(
                "select count(*) from exo_private.documents where stage in ('chunked', 'embedded', 'graphed')"
            ).fetchone()[0]
            began = time.perf_counter()
            queued = admin.execute("select exo_private.queue_capsules()").fetchone()[0]
            print(
                f"queue_capsules(): {queued} queued of {documents} live documents in "
                f"{(time.perf_counter() - began) * 1000:.0f} ms"
            )
            built, seconds = drain(cfg, name)
            rows = admin.execute(
                "select k.scope, k.tokens, cardinality(k.sources), k.body, k.sentences, s.state "
                "from exo_private.capsules k join exo_private.capsule_states s on s.capsule_id = k.id "
                "where k.scope <> 'document'"
            ).fetchall()
            bodies = dict(admin.execute("select id, body from exo_private.chunks").fetchall())
            lines = traced = 0
            for _, _, _, body, sentences, _ in rows:
                for line, s in zip(body.split("\n"), sentences, strict=True):
                    lines += 1
                    traced += " ".join(bodies[s["chunk_id"]][s["start"] : s["end"]].split()) == line
            folders = [r for r in rows if r[0] == "folder"]
            tokens = [r[1] for r in rows]
            print(
                f"group capsules: {len(rows)} ({len(folders)} folders, {len(rows) - len(folders)} workspace) "
                f"built in {seconds:.1f} s ({seconds / max(1, built):.2f} s each); tokens min {min(tokens)}, "
                f"median {statistics.median(tokens):g}, max {max(tokens)}; sources median "
                f"{statistics.median(r[2] for r in rows):g}; fresh {sum(r[5] == 'fresh' for r in rows)}; "
                f"lines traced to their chunk {traced} of {lines}"
            )
            began = time.perf_counter()
            again = admin.execute("select exo_private.queue_capsules()").fetchone()[0]
            print(f"queue_capsules() again: {again} queued in {(time.perf_counter() - began) * 1000:.0f} ms")
            admin.execute("select exo_private.set_setting('retrieval.stages', '[\"capsules\"]')")
            admin.execute("analyze")
            groups = {
                r[0] for r in admin.execute("select id from exo_private.capsules where scope <> 'document'")
            }
            for question in QUESTIONS:
                words = " or ".join(question.split())  # as the stage asks: any of the words
                plan = admin.execute(
                    "explain (analyze, buffers, costs off) " + MATCH, (args.workspace, words, words)
                ).fetchall()
                print(f"\n{question!r}: the capsule match")
                print("\n".join(line for (line,) in plan))
        with connect(role_url(cfg, "exo_reader", name), "bench-capsule-groups", autocommit=True) as reader:
            for question in QUESTIONS:
                times, served = [], []
                for _ in range(5):
                    began = time.perf_counter()
                    found = reader.execute("select exo.search_json(%s)", (question,)).fetchone()[0]
                    times.append((time.perf_counter() - began) * 1000)
                    served = found["report"]["capsules"]["served"]
                print(
                    f"capsule stage alone, {question!r}: {statistics.median(times):.1f} ms median, "
                    f"{len(found['results'])} chunks, capsules served {len(served)} "
                    f"(group capsules {len(set(served) & groups)})"
                )


if __name__ == "__main__":
    main()
