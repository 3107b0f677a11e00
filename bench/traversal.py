"""Benchmark: depth-2 neighbourhood of a hub, level sets vs path enumeration vs AGE.

For each hub degree, a workspace of its own gets a generated graph: documents of
six entities each drawn from a pool of `degree` entities, the owner entity related
to every entity of every document it appears in (one relation per document, so
the hub has about 3 x degree relation rows and exactly `degree` neighbours), and
two more relations between entities of each document. The relational graph is
projected into the workspace's AGE graph. Then, from the hub, at depth 2:

  (a)  exo_private.related_entities: level sets, at most 50 neighbours per node
       (the baseline the other figures are ratios against)
  (a') the same level-set walk without the per-node cap
  (b)  a UNION ALL recursive CTE enumerating paths (a path array, cycles cut by
       `not id = any(path)`), counting distinct entities at the end
  (c)  AGE: MATCH (h {id: ...})-[*1..2]-(n) RETURN DISTINCT n through cypher()

The same four follow from one of the hub's neighbours at depth 3, where most paths
pass through the hub. Everything runs in a scratch database migrated from zero. A
side still running after --timeout-s (statement_timeout) is reported as "> N s"
and not run again.

    .venv/bin/python -m bench.traversal [--degrees 1000 10000] [--runs 5] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import psycopg

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ops.migrate import scratch_database

ENTITIES_PER_DOC = 6
PAIRS_PER_DOC = 2
TYPES = ["Person", "Org", "Place", "Topic"]
HUB_PREDICATES = ["mentions", "works with", "met", "wrote about"]
PAIR_PREDICATES = ["knows", "works at", "is part of", "located in"]

LEVEL_SET_UNCAPPED = """
with recursive walk (entity_id, depth) as (
    select %(start)s::bigint, 0
    union
    select nb.id, w.depth + 1
    from walk w
    cross join lateral (
        select r.object_id as id from exo_private.relations r where r.subject_id = w.entity_id
        union
        select r.subject_id from exo_private.relations r where r.object_id = w.entity_id
    ) nb
    where w.depth < %(depth)s
)
select count(distinct entity_id) from walk where entity_id <> %(start)s
"""

PATHS = """
with recursive paths (entity_id, depth, path) as (
    select %(start)s::bigint, 0, array[%(start)s::bigint]
    union all
    select nb.id, p.depth + 1, p.path || nb.id
    from paths p
    cross join lateral (
        select r.object_id as id from exo_private.relations r where r.subject_id = p.entity_id
        union all
        select r.subject_id from exo_private.relations r where r.object_id = p.entity_id
    ) nb
    where p.depth < %(depth)s and not nb.id = any(p.path)
)
select count(distinct entity_id) from paths where entity_id <> %(start)s
"""

AGE = """
select count(*) from ag_catalog.cypher('{graph}', $cypher$
    MATCH (h {{id: {start}}})-[*1..{depth}]-(n) RETURN DISTINCT n
$cypher$) as (n ag_catalog.agtype)
"""


def build(conn: psycopg.Connection, workspace: str, degree: int, seed: int) -> tuple[int, int, dict]:
    """Generate the hub graph of one workspace; returns the hub's id, a spoke's id and build figures."""
    rng = random.Random(seed)
    conn.execute(
        "insert into exo_private.workspaces (name, description) values (%s, 'traversal benchmark')",
        (workspace,),
    )
    gen = conn.execute("select exo_private.current_generation(%s, 'bench')", (workspace,)).fetchone()[0]
    source = conn.execute(
        "insert into exo_private.sources (root) values (%s) returning id", (f"bench-{workspace}",)
    ).fetchone()[0]
    docs = max(1, degree // 2)
    doc_ids = [
        r[0]
        for r in conn.execute(
            """insert into exo_private.documents
                   (source_id, path, path_bytes, extension, size_bytes, mtime_ns, stage, workspace, band)
               select %s, 'doc-' || i || '.md', convert_to('doc-' || i || '.md', 'UTF8'), 'md', 100, 0,
                      'graphed', %s, 'current'
               from generate_series(1, %s) i returning id""",
            (source, workspace, docs),
        )
    ]
    windows = dict(
        conn.execute(
            """insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end)
               select d, %s, 0, 'generated', 0, 9 from unnest(%s::bigint[]) d returning document_id, id""",
            (workspace, doc_ids),
        ).fetchall()
    )
    hub = conn.execute(
        """insert into exo_private.entities (workspace, generation, type, canonical_key, name, is_owner)
           values (%s, %s, 'Person', 'the owner', 'The Owner', true) returning id""",
        (workspace, gen),
    ).fetchone()[0]
    pool = [
        r[0]
        for r in conn.execute(
            """insert into exo_private.entities (workspace, generation, type, canonical_key, name)
               select %s, %s, (array['Person', 'Org', 'Place', 'Topic'])[1 + i %% 4]::exo_private.entity_type,
                      'entity ' || i, 'Entity ' || i
               from generate_series(1, %s) i returning id""",
            (workspace, gen, degree),
        )
    ]
    relations = set()
    for i, doc in enumerate(doc_ids):
        members = {pool[(2 * i) % degree], pool[(2 * i + 1) % degree]}  # every entity in some document
        while len(members) < min(ENTITIES_PER_DOC, degree):
            members.add(rng.choice(pool))
        members = sorted(members)
        for m in members:
            relations.add((hub, rng.choice(HUB_PREDICATES), m, windows[doc], doc))
        for _ in range(PAIRS_PER_DOC):
            a, b = rng.sample(members, 2)
            relations.add((a, rng.choice(PAIR_PREDICATES), b, windows[doc], doc))
    with conn.cursor().copy(
        "copy exo_private.relations (workspace, generation, subject_id, predicate_raw, predicate, object_id, "
        "window_id, document_id) from stdin"
    ) as copy:
        for s, p, o, w, d in sorted(relations):
            copy.write_row((workspace, gen, s, p, p.upper().replace(" ", "_"), o, w, d))
    began = time.perf_counter()
    conn.execute(
        "select exo_private.project_entities(array(select id from exo_private.entities where workspace = %s))",
        (workspace,),
    )
    conn.execute(
        "select exo_private.project_relations(array(select id from exo_private.relations where workspace = %s))",
        (workspace,),
    )
    projected_s = time.perf_counter() - began
    conn.execute("analyze")
    disagreements = conn.execute(
        "select count(*) from exo_private.graph_disagreements(%s)", (workspace,)
    ).fetchone()[0]
    hub_rows = conn.execute(
        "select count(*) from exo_private.relations where subject_id = %s", (hub,)
    ).fetchone()[0]
    return (
        hub,
        pool[0],
        {
            "entities": degree + 1,
            "relations": len(relations),
            "hub relation rows": hub_rows,
            "projection into AGE": f"{projected_s:.1f} s",
            "graph disagreements": disagreements,
        },
    )


def timed(
    conn: psycopg.Connection, query: str, params: dict, runs: int, timeout_s: int
) -> tuple[float | None, int]:
    """Median seconds of `runs` runs and the row count; None when it passed the timeout."""
    times, result = [], 0
    conn.execute(f"set statement_timeout = '{int(timeout_s)}s'")
    try:
        for _ in range(runs):
            began = time.perf_counter()
            try:
                result = conn.execute(query, params).fetchone()[0]
            except psycopg.errors.QueryCanceled:
                return None, 0
            times.append(time.perf_counter() - began)
    finally:
        conn.execute("reset statement_timeout")
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degrees", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout-s", type=int, default=60)
    args = parser.parse_args()

    cfg = config.load()
    with (
        scratch_database(cfg, "bench_traversal") as name,
        connect(admin_url(cfg, name), "exo-bench-traversal", autocommit=True) as conn,
    ):
        conn.execute("set search_path = ag_catalog, exo_private, public")
        for degree in args.degrees:
            workspace = f"bench_hub_{degree}"
            hub, spoke, figures = build(conn, workspace, degree, args.seed)
            print(f"hub degree {degree:,}: " + ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}"
                                                       for k, v in figures.items()))  # fmt: skip
            for scenario, start, depth in (
                ("depth 2 from the hub", hub, 2),
                ("depth 3 from a spoke", spoke, 3),
            ):
                print(f"  {scenario}:")
                params = {"start": start, "depth": depth}
                sides = [
                    ("(a) level sets, 50 per node (baseline)",
                     "select count(*) from exo_private.related_entities(%(start)s, %(depth)s, 50)"),
                    ("(a') level sets, no cap", LEVEL_SET_UNCAPPED),
                    ("(b) path enumeration, UNION ALL + path array", PATHS),
                    (f"(c) AGE MATCH (h)-[*1..{depth}]-(n) DISTINCT n",
                     AGE.format(graph=f"graph_{workspace}", start=int(start), depth=depth)),
                ]  # fmt: skip
                base = None
                for label, query in sides:
                    median, rows = timed(conn, query, params, args.runs, args.timeout_s)
                    if median is None:
                        print(f"    {label:<46} {'> ' + str(args.timeout_s) + ' s':>12}  {'':>9}  rows -")
                        continue
                    base = base or median
                    print(f"    {label:<46} {median * 1000:9.1f} ms  {median / base:8.1f}x  rows {rows:,}")
    print(f"medians of {args.runs} runs; ratios against (a) in the same run")


if __name__ == "__main__":
    main()
