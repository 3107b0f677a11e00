"""The Timeline section's query at scale: exo_private.timeline_answer over a million events.

A scratch database gets a small diary (bench.diary_year's generator, 60 notes, ingested as
`exo ingest --workspace personal` does) so that events have real chunks and documents to point
to; then --events rows are added in one INSERT ... SELECT over generate_series (timed: the
build), spread over ten years, 60 activities with a Zipf-like skew, a few people and places,
the sources drawn from those chunks. Each typical reading of an aggregate question (a count of
one activity in a month, a year's total minutes, the last time with a person, the most
frequent place of an activity, the most frequent activity of a year) runs --runs times; printed
per reading: p50 and p95 in ms, and the plan of one run (EXPLAIN ANALYZE, BUFFERS) when --plans.

    .venv/bin/python -m bench.timeline_scale [--events 1000000] [--runs 20] [--plans]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench import diary_year
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ingest import pipeline
from exocortex.ops.migrate import scratch_database

FILL = """
insert into exo_private.events (workspace, document_id, chunk_id, day, day_source, activity, forms,
                                sentence, minutes, km, amount, currency, place, people, extractor,
                                place_keys, people_keys)
select 'personal', c.document_id, c.id, date '2016-01-01' + (g % 3650), 'written', a.activity,
       array[a.activity], 'a generated event ' || g,
       case when g % 3 = 0 then 20 + g % 100 end, case when g % 5 = 0 then (g % 300) / 10.0 end,
       case when g % 7 = 0 then (g % 9000) / 100.0 end, case when g % 7 = 0 then 'GBP' end,
       case when g % 4 = 0 then 'place ' || (g % 40) end,
       case when g % 6 = 0 then array['Person ' || (g % 30)] else '{{}}' end, 'bench',
       exo_private.held_name_keys(array[case when g % 4 = 0 then 'place ' || (g % 40) end]),
       exo_private.held_name_keys(case when g % 6 = 0 then array['Person ' || (g % 30)] else '{{}}' end)
from (select g, 'activity' || floor(60 * power(random(), 3))::int as activity
      from generate_series(1, {n}) g) a  -- drawn per event: a lateral that refers to no column of g is drawn once
join chunks_pick c on c.n = a.g % {chunks}
"""

READINGS = {
    "count of one activity in a month": ("activity1", "2023-06-01", "2023-06-30", None, None, None, "count"),
    "total minutes of one activity in a year": (
        "activity2",
        "2022-01-01",
        "2022-12-31",
        None,
        None,
        None,
        "total",
    ),
    "last time with a person": (None, None, None, None, "Person 6", None, "last"),
    "most frequent place of an activity": ("activity3", None, None, None, None, "place", "most"),
    "most frequent activity of a year": (None, "2024-01-01", "2024-12-31", None, None, "activity", "most"),
}
CALL = (
    "select exo_private.timeline_answer(%s, %s, %s, %s::date, %s::date, %s, %s, null, "
    "exo_private.released_keys('{}'), null, 8, null, false)"
)


def print_plan(cfg: config.Config, name: str, params: tuple) -> None:
    """The plans of the statements inside one call (auto_explain, as notices to this session)."""
    with connect(admin_url(cfg, name), "exo-bench-timeline", autocommit=True) as admin:
        notes: list[str] = []
        admin.add_notice_handler(lambda d: notes.append(d.message_primary or ""))
        for setting in (
            "load 'auto_explain'", "set auto_explain.log_min_duration = 0", "set auto_explain.log_analyze = on",
            "set auto_explain.log_buffers = on", "set auto_explain.log_nested_statements = on",
            "set auto_explain.log_level = notice", "set client_min_messages = notice",
        ):  # fmt: skip
            admin.execute(setting)
        admin.execute(CALL, params).fetchone()
        # the plans of the figures' and the cited events' statements (not released_keys' nor
        # those that make the queries' text)
        shown = [note for note in notes if "jsonb_build_object" in note and "Query Parameters" in note]
        print("\n".join("    " + line for note in shown for line in note.splitlines()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--plans", action="store_true")
    args = parser.parse_args()
    cfg = config.load()
    with tempfile.TemporaryDirectory() as tmp, scratch_database(cfg, "bench_timeline") as name:
        diary = diary_year.generate(days=60, questions=0)
        vault = diary_year.write(diary, Path(tmp))
        pipeline.ingest(cfg, vault, workspace="personal", dbname=name)
        with connect(admin_url(cfg, name), "exo-bench-timeline", autocommit=True) as admin:
            admin.execute(
                "create temporary table chunks_pick as select row_number() over (order by id) - 1 as n, "
                "id, document_id from exo_private.chunks"
            )
            chunks = admin.execute("select count(*) from chunks_pick").fetchone()[0]
            began = time.monotonic()
            admin.execute(FILL.format(n=int(args.events), chunks=int(chunks)))
            # as autovacuum would leave it: the visibility map lets a reading scan an index alone,
            # the rollup's GIN indexes hold no pending list and its statistics are known
            admin.execute("vacuum analyze exo_private.events")
            admin.execute("vacuum analyze exo_private.event_rollup")
            admin.execute("vacuum analyze exo_private.event_rollup_year")
            print(f"{args.events} events over {chunks} chunks built in {time.monotonic() - began:.1f} s")
        with connect(role_url(cfg, "exo_writer", name), "exo-bench-timeline", autocommit=True) as conn:
            for label, (activity, first, last, place, person, group, order) in READINGS.items():
                values = ([activity] if activity else None, first, last, place, person, group, order)
                params = (values[5], values[6], values[0], values[1], values[2], values[3], values[4])
                times = []
                for _ in range(args.runs):
                    began = time.monotonic()
                    conn.execute(CALL, params).fetchone()
                    times.append((time.monotonic() - began) * 1000)
                p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)]
                print(f"{label:42} p50 {statistics.median(times):7.1f} ms   p95 {p95:7.1f} ms")
                if args.plans:
                    print_plan(cfg, name, params)


if __name__ == "__main__":
    main()
