"""Benchmark: the cost of the self-audit (issue 15).

A scratch database migrated from zero holds `documents` documents (every `gone`-th deleted)
and `facts` current fact rows, one source each (a document; every `changed`-th document's
content hash changed since), spread over the three kinds so that lines of one subject and
attribute in two kinds disagree (declared older than extracted on every `contradict`-th
subject). Timed, each `runs` times, median: the findings by reason (what exo status ran
before audit runs were stored), exo_private.audit() itself (the first run closes the facts whose
source is gone; later runs find them closed), then exo.audit_summary and exo.status, which
read the newest stored run. Then EXPLAIN (analyze, buffers) of the findings count.

    .venv/bin/python -m bench.audit [--facts 100000] [--documents 10000] [--gone 10]
                                    [--changed 7] [--contradict 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ops.migrate import scratch_database

BUILD_DOCUMENTS = """
with src as (insert into exo_private.sources (root) values ('bench-audit') returning id)
insert into exo_private.documents (source_id, path, path_bytes, extension, size_bytes, mtime_ns, sha256,
                                   stage, workspace)
select src.id, 'doc ' || i || '.md', convert_to('doc ' || i || '.md', 'UTF8'), 'md', 100, 0,
       md5(i::text), case when i %% %(gone)s = 0 then 'deleted' else 'graphed' end::exo_private.document_stage,
       'personal'
from src cross join generate_series(1, %(documents)s) g (i)
"""
# Subject s has attribute a in kind k; on every contradict-th subject the declared row says
# another value than the extracted one, from an earlier day.
BUILD_FACTS = """
insert into exo_private.facts (workspace, subject, subject_key, attribute, value, kind, valid_from)
select 'personal', 'Subject ' || s, 'subject ' || s, 'attribute_' || a,
       case when k = 'declared' and s %% %(contradict)s = 0 then 'old ' || s else 'value ' || s end,
       k, timestamptz '2020-01-01' + make_interval(days => case when k = 'declared' then 0 else 10 end)
from generate_series(0, %(facts)s - 1) g (i)
cross join lateral (select g.i / 15 as s, (g.i / 3) %% 5 as a,
                           (enum_range(null::exo_private.fact_kind))[g.i %% 3 + 1] as k) x
"""
BUILD_SOURCES = """
insert into exo_private.fact_sources (fact_id, document_id)
select f.id, (select min(d.id) from exo_private.documents d) + f.id %% %(documents)s from exo_private.facts f
"""
CHANGE = """
update exo_private.documents set sha256 = md5(sha256) where id %% %(changed)s = 0 and stage <> 'deleted'
"""
FINDINGS = "select x.reason, count(*) from exo_private.audit_findings x group by x.reason order by 1"


def timed(conn, statement: str, runs: int) -> tuple[float, list]:
    times, rows = [], []
    for _ in range(runs):
        start = time.perf_counter()
        rows = conn.execute(statement).fetchall()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--gone", type=int, default=10)
    parser.add_argument("--changed", type=int, default=7)
    parser.add_argument("--contradict", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cfg = config.load()
    with (
        scratch_database(cfg, "bench_audit") as name,
        connect(admin_url(cfg, name), "exo-bench", autocommit=True) as conn,
    ):
        for statement in (BUILD_DOCUMENTS, BUILD_FACTS, BUILD_SOURCES, CHANGE):
            conn.execute(statement, vars(args))
        conn.execute("analyze")
        findings_ms, rows = timed(conn, FINDINGS, args.runs)
        print(
            f"findings by reason at {args.facts} facts, {args.documents} documents: "
            f"{findings_ms:.0f} ms (median)"
        )
        for reason, n in rows:
            print(f"  {reason}: {n}")
        start = time.perf_counter()
        closed = conn.execute("select count(*) from exo_private.audit() where closed").fetchone()[0]
        print(
            f"exo_private.audit(), first run: {(time.perf_counter() - start) * 1000:.0f} ms, closed {closed}"
        )
        ms, _ = timed(conn, "select count(*) from exo_private.audit()", args.runs)
        print(f"exo_private.audit(), later runs: {ms:.0f} ms (median)")
        summary_ms, _ = timed(conn, "select exo.audit_summary()", args.runs)
        status_ms, _ = timed(conn, "select exo.status()", args.runs)
        print(
            f"exo.audit_summary() (reads the newest run): {summary_ms:.2f} ms, exo.status(): {status_ms:.0f} ms "
            f"(median); the findings count / audit_summary: {findings_ms / summary_ms:.0f}x"
        )
        retirement = conn.execute("select exo.audit_summary() - 'findings'").fetchone()[0]
        print(f"retirement: {retirement}")
        plan = conn.execute("explain (analyze, buffers, costs off) " + FINDINGS).fetchall()
        print("\n".join(line for (line,) in plan))


if __name__ == "__main__":
    main()
