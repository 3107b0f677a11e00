"""Benchmark: the cost of temporal facts (issue 15).

1. Insert throughput with closing: `subjects` x `attributes` lines, each observed `values`
   times with a changed value (every observation after a line's first closes its current row),
   in time order, through exo_private.observe as the writer in batches of `batch`. The
   baseline, timed in the same run: the same rows as plain inserts (one insert ... select from
   the same jsonb per batch) into a scratch table shaped like exo_private.observations. The
   ratio is observe's time over the baseline's. Where the server runs on this machine, the
   server process's CPU seconds for each too (on a shared machine the wall time also counts the
   waits for a core; the CPU time is the work).
2. exo.facts latency at `rows` fact rows, built with generate_series in SQL (lines of
   `history` rows each, all closed but the last, one source each): one subject per call as the
   reader, as of now and as of a past time, median and p95.
3. Where a batch's time goes: one more closing batch, each statement over 5 ms with its time,
   and EXPLAIN (analyze, buffers) of what exo.facts runs (a second call in the session), both
   through auto_explain's nested statements (it needs a superuser; --skip-explain leaves them out).

Everything runs in a scratch database migrated from zero.

    .venv/bin/python -m bench.facts [--subjects 1000] [--attributes 5] [--values 4] [--batch 5000]
                                    [--rows 1000000] [--history 5] [--calls 300] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.types.json import Jsonb

from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ops.migrate import scratch_database

START = datetime(2020, 1, 1, tzinfo=UTC)

PLAIN = """
insert into public.bench_plain (workspace, subject, attribute, value, observed_at, source)
select coalesce(o.workspace, 'personal'), o.subject, o.attribute, o.value, o.observed_at, o.source
from jsonb_to_recordset(%s) o (workspace text, subject text, attribute text, value text,
                               observed_at timestamptz, source text)
"""

# Lines of `history` rows: row k of a line is valid from day k to day k + 1, closed by row k + 1
# (its id is the next one); the last is current. Subjects "subject N", attributes "attribute_M".
BUILD_FACTS = """
insert into exo_private.facts (id, workspace, subject, subject_key, attribute, value, kind,
                               valid_from, valid_to, closed_by, close_reason)
overriding system value
select n, 'personal', 'Subject ' || s, 'subject ' || s, 'attribute_' || a, 'value ' || n, 'observation',
       %(start)s + make_interval(days => k),
       case when k < %(history)s - 1 then %(start)s + make_interval(days => k + 1) end,
       case when k < %(history)s - 1 then n + 1 end,
       case when k < %(history)s - 1 then 'superseded' end
from generate_series(0, %(rows)s - 1) g (i)
cross join lateral (select g.i + 1 as n, g.i %% %(history)s as k,
                           (g.i / %(history)s) %% %(attributes)s as a,
                           g.i / (%(history)s * %(attributes)s) as s) x
"""
BUILD_SOURCES = """
insert into exo_private.fact_sources (fact_id, document_id)
select f.id, f.id from exo_private.facts f
"""


def observations(subjects: int, attributes: int, values: int) -> list[dict]:
    """Every line's values in time order: round v observes every line once, a day apart."""
    return [
        {
            "subject": f"host {s}",
            "attribute": f"metric {a}",
            "value": f"reading {v}",
            "observed_at": (START + timedelta(days=v, seconds=s)).isoformat(),
            "source": "bench probe",
        }
        for v in range(values)
        for s in range(subjects)
        for a in range(attributes)
    ]


def backend_cpu_s(conn: psycopg.Connection) -> float | None:
    """CPU seconds the connection's server process has used (user + system), read from
    /proc where the server runs on this machine; None elsewhere. On a shared machine the wall
    time counts the waits for a core too, the CPU time only the work."""
    pid = conn.execute("select pg_backend_pid()").fetchone()[0]
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmd:
            if b"postgres" not in cmd.read():
                return None
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throughput(cfg: config.Config, name: str, args: argparse.Namespace) -> None:
    rows = observations(args.subjects, args.attributes, args.values)
    batches = [rows[i : i + args.batch] for i in range(0, len(rows), args.batch)]
    with connect(admin_url(cfg, name), "bench-facts", autocommit=True) as admin:
        admin.execute("create table public.bench_plain (like exo_private.observations including defaults)")
        admin.execute("alter table public.bench_plain drop column id")
        admin.execute("grant insert on public.bench_plain to exo_writer")
    with connect(role_url(cfg, "exo_writer", name), "bench-facts", autocommit=True) as writer:
        cpu_start = backend_cpu_s(writer)
        started = time.perf_counter()
        for batch in batches:
            writer.execute(PLAIN, (Jsonb(batch),))
        plain_s = time.perf_counter() - started
        cpu_plain = backend_cpu_s(writer)
        started = time.perf_counter()
        for batch in batches:
            writer.execute("select count(*) from exo_private.observe(%s)", (Jsonb(batch),))
        observe_s = time.perf_counter() - started
        cpu_observe = backend_cpu_s(writer)
        facts, current, closed = writer.execute(
            "select count(*), count(*) filter (where valid_to is null), count(*) filter (where closed_by is not null) "
            "from exo_private.facts"
        ).fetchone()
    n = len(rows)
    print(
        f"insert with closing: {n:,} observations ({args.subjects} subjects x {args.attributes} attributes x "
        f"{args.values} values) in batches of {args.batch}"
    )
    print(f"  observe:  {observe_s:7.2f} s  {n / observe_s:10,.0f} observations/s   (goal: 10,000/s)")
    print(f"  baseline: {plain_s:7.2f} s  {n / plain_s:10,.0f} rows/s (plain insert of the same rows)")
    print(f"  ratio observe / baseline: {observe_s / plain_s:.1f}x   (load average {os.getloadavg()[0]:.1f})")
    if cpu_start is not None and cpu_plain is not None and cpu_observe is not None:
        observe_cpu, plain_cpu = cpu_observe - cpu_plain, cpu_plain - cpu_start
        print(
            f"  server CPU: observe {observe_cpu:.2f} s ({n / max(observe_cpu, 0.01):,.0f} observations per "
            f"CPU second), baseline {plain_cpu:.2f} s; ratio {observe_cpu / max(plain_cpu, 0.01):.1f}x"
        )
    print(f"  fact rows {facts:,}: current {current:,}, closed by a newer value {closed:,}")


def build_facts(cfg: config.Config, name: str, args: argparse.Namespace) -> None:
    params = {
        "rows": args.rows,
        "history": args.history,
        "attributes": args.attributes,
        "start": START,
    }
    with connect(admin_url(cfg, name), "bench-facts", autocommit=True) as admin:
        admin.execute("truncate exo_private.fact_sources, exo_private.facts, exo_private.observations")
        started = time.perf_counter()
        with admin.transaction():
            admin.execute(BUILD_FACTS, params)
            admin.execute(BUILD_SOURCES)
            admin.execute(
                "select setval(pg_get_serial_sequence('exo_private.facts', 'id'), (select max(id) from exo_private.facts))"
            )
        admin.execute("vacuum analyze exo_private.facts, exo_private.fact_sources")
        (size,) = admin.execute(
            "select pg_size_pretty(pg_total_relation_size('exo_private.facts'))"
        ).fetchone()
    print(
        f"\nbuilt {args.rows:,} fact rows ({args.history} per line) in {time.perf_counter() - started:.1f} s; "
        f"facts table with indexes: {size}"
    )


def latency(cfg: config.Config, name: str, args: argparse.Namespace) -> None:
    subjects = args.rows // (args.history * args.attributes)
    rng = random.Random(args.seed)
    with connect(role_url(cfg, "exo_reader", name), "bench-facts", autocommit=True) as reader:
        reader.execute("select * from exo.facts('Subject 0')").fetchall()  # plans and plpython warm
        for label, as_of in [
            ("now", None),
            ("as of a past day", START + timedelta(days=args.history // 2, hours=12)),
        ]:
            times, counts = [], []
            for _ in range(args.calls):
                subject = f"Subject {rng.randrange(subjects)}"
                started = time.perf_counter()
                found = reader.execute(
                    "select * from exo.facts(%s, coalesce(%s, now()))", (subject, as_of)
                ).fetchall()
                times.append((time.perf_counter() - started) * 1000)
                counts.append(len(found))
            times.sort()
            print(
                f"exo.facts at {args.rows:,} rows, {label}: median {statistics.median(times):.2f} ms, "
                f"p95 {times[int(0.95 * len(times)) - 1]:.2f} ms over {args.calls} subjects "
                f"({statistics.mean(counts):.0f} facts each; goal: under 5 ms)"
            )


def _auto_explain(admin: psycopg.Connection, min_duration_ms: int, analyze: bool) -> list[str]:
    """Turn on auto_explain for the session's nested statements; the plans arrive as notices."""
    plans: list[str] = []
    admin.add_notice_handler(lambda diag: plans.append(diag.message_primary or ""))
    admin.execute("load 'auto_explain'")
    for setting in [
        f"auto_explain.log_min_duration = {min_duration_ms}",
        f"auto_explain.log_analyze = {'on' if analyze else 'off'}",
        f"auto_explain.log_buffers = {'on' if analyze else 'off'}",
        "auto_explain.log_nested_statements = on",
        "client_min_messages = log",
    ]:
        admin.execute(f"set {setting}")
    return plans


def profile_batch(cfg: config.Config, name: str, args: argparse.Namespace) -> None:
    """One more closing batch through observe, each statement over 5 ms with its time."""
    batch = [
        {**o, "value": f"reading {args.values}"} for o in observations(args.subjects, args.attributes, 1)
    ]
    batch = batch[: args.batch]
    for o in batch:
        o["observed_at"] = (
            START + timedelta(days=args.values, seconds=int(o["subject"].split()[1]))
        ).isoformat()
    with connect(admin_url(cfg, name), "bench-facts", autocommit=True) as admin:
        plans = _auto_explain(admin, 5, analyze=False)
        started = time.perf_counter()
        admin.execute("select count(*) from exo_private.observe(%s)", (Jsonb(batch),))
        total = time.perf_counter() - started
    print(
        f"\none closing batch of {len(batch):,} through observe: {total * 1000:.0f} ms; its statements over 5 ms:"
    )
    for plan in plans:
        head = plan.split("Query Text:", 1)
        duration = head[0].split()[1] if head[0].startswith("duration:") else "?"
        text = " ".join(head[1].split())[:80] if len(head) > 1 else ""
        print(f"  {float(duration):8.1f} ms  {text}")


def explain(cfg: config.Config, name: str) -> None:
    with connect(admin_url(cfg, name), "bench-facts", autocommit=True) as admin:
        plans = _auto_explain(admin, 0, analyze=True)
        admin.execute("select * from exo.facts('Subject 42')").fetchall()  # plans and plpgsql compiled
        plans.clear()
        admin.execute("select * from exo.facts('Subject 42')").fetchall()
    print("\nEXPLAIN (analyze, buffers) of exo.facts('Subject 42') (a second call), every statement it runs:")
    for plan in plans:
        print(plan)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--subjects", type=int, default=1000)
    parser.add_argument("--attributes", type=int, default=5)
    parser.add_argument("--values", type=int, default=4)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--history", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-explain", action="store_true", help="No auto_explain (it needs a superuser).")
    args = parser.parse_args()
    cfg = config.load()
    with scratch_database(cfg, "bench_facts") as name:
        throughput(cfg, name, args)
        if not args.skip_explain:
            profile_batch(cfg, name, args)
        build_facts(cfg, name, args)
        latency(cfg, name, args)
        if not args.skip_explain:
            try:
                explain(cfg, name)
            except psycopg.Error as exc:
                print(f"\nEXPLAIN skipped: {exc}")


if __name__ == "__main__":
    main()
