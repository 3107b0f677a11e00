"""Benchmark: two-hop questions over a generated people-and-organisations corpus (issue 16): does
the context packet hold the answer, against BM25 top-5 at the same tokens?

worker/exocortex/eval/people_corpus.py writes the corpus (--size families, --seed); a scratch database gets the
owner, the corpus's notes and mail ingested into the workspace "personal" and its chat export
imported, structural edges on (graph.structural) and the shipped extraction settings; the worker
embeds every chunk (models.embeddings of your database) and drains the extract queue with the chat
model (models.chat of your database), as a user's first run would. Then, for every question:

  bm25      the --k (5) best chunks by BM25 (exocortex.eval.shadow.run_bm25); tokens: characters / 4
  packet    exo.context_packet_json as exo_reader with the question's vector and a token budget
            equal to bm25's tokens (at least 200, the packet's floor): the same tokens
  no-graph  the same packet with the path and graph stages left out of retrieval.stages

A method holds the answer when its text holds one of the question's answers (a right answer's
full or first name, exocortex.eval.shadow.holds). `paths`: questions whose search report says the
typed path (path) found evidence. Extraction seconds per window come from the same run.
--graph truth writes the ground truth's relations instead of running the model (what retrieval
does with a right graph); --graph structure leaves the structural edges alone; --graph patterns runs
the worker's extraction with no chat model (models.chat's url null): the pattern pass's graph.

    .venv/bin/python -m bench.multihop [--size 3] [--seed 16] [--graph model|patterns|truth|structure] [--show N] [--json OUT]
    .venv/bin/python -m bench.multihop --explain 100000   (the path stage's plan, and the pattern
                                                          pass's window context query, only)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import psycopg

from bench.scratch import serve_embeddings_from
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval import people_corpus, shadow
from exocortex.eval.ground_truth import WORKSPACE, chat_endpoint
from exocortex.ingest import pipeline
from exocortex.ingest.chat import import_chat
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.relation_paths import family_pattern, relation_steps
from exocortex.worker import queries
from exocortex.worker.loop import Worker

METHODS = ("packet", "no-graph", "bm25")


def build(
    cfg: config.Config, db: str, corpus: Path, owner: str, extract: bool = True, chat_model: bool = True
) -> dict:
    """The corpus's database as a first run builds it; how long extraction took, per window
    (extract False: the extract queue is left as it is; chat_model False: models.chat has no url,
    so the worker's extraction is the pattern pass alone)."""
    with connect(admin_url(cfg), "exo-bench-multihop", autocommit=True) as main:
        embeddings = main.execute(
            "select value from exo_private.settings where key = 'models.embeddings'"
        ).fetchone()
    with connect(admin_url(cfg, db), "exo-bench-multihop", autocommit=True) as admin:
        serve_embeddings_from(admin, embeddings[0]["url"])
        admin.execute(
            "update exo_private.settings set value = %s where key = 'models.chat'",
            (json.dumps({**chat_endpoint(cfg, None), **({} if chat_model else {"url": None})}),),
        )
        admin.execute("update exo_private.settings set value = 'true' where key = 'graph.structural'")
        admin.execute("select exo_private.set_owner(%s)", (owner,))
        settings = dict(
            admin.execute(
                "select key, value from exo_private.settings where key like 'extraction.%' or key = 'graph.structural'"
            ).fetchall()
        )
    pipeline.ingest(cfg, corpus / "corpus", workspace=WORKSPACE, dbname=db)
    with connect(role_url(cfg, "exo_writer", db), "exo-bench-multihop", autocommit=True) as writer:
        import_chat(writer, corpus / people_corpus.CHATS, "jsonl", workspace=WORKSPACE)
    Worker(cfg, dbname=db, once=True, queues=("embed",), poll_s=0.05).run()
    began = time.perf_counter()
    if extract:
        Worker(cfg, dbname=db, once=True, queues=("extract",), poll_s=0.05).run()
    seconds = time.perf_counter() - began
    with connect(admin_url(cfg, db), "exo-bench-multihop", autocommit=True) as admin:
        windows, relations, structural = admin.execute(
            """select (select count(*) from exo_private.extraction_windows where extracted_at is not null),
                      (select count(*) from exo_private.relations),
                      (select count(*) from exo_private.relations where origin = 'structure')"""
        ).fetchone()
    return {
        "settings": settings,
        "windows": windows,
        "extract_s": round(seconds, 1),
        "s_per_window": round(seconds / windows, 2) if windows else None,
        "relations": relations,
        "structural_relations": structural,
    }


def truth_graph(cfg: config.Config, db: str, world: people_corpus.World) -> int:
    """The ground truth's relations written into the graph as if extraction were perfect (the
    retrieval side's ceiling, no model): each relation once for every file stating it, in the
    window of that file that names both ends (a chat's: any window of the export that does)."""
    truth = people_corpus.ground_truth(world)
    kinds = {e["name"]: e["type"] for e in truth["entities"]}
    short = {e.name: e.short for e in world.entities.values()}
    written = 0
    with connect(admin_url(cfg, db), "exo-bench-multihop", autocommit=True) as admin:
        gen = admin.execute("select exo_private.current_generation(%s, 'truth')", (WORKSPACE,)).fetchone()[0]
        for r in truth["relations"]:
            ids = [
                admin.execute(
                    "select exo_private.upsert_entity(%s, %s, %s, %s, %s)",
                    (WORKSPACE, gen, kinds[end], people_corpus.canonical_key(end), end),
                ).fetchone()[0]
                for end in (r["subject"], r["object"])
            ]
            for path in r["files"]:
                window = admin.execute(
                    """select w.id, w.document_id from exo_private.extraction_windows w
                       join exo_private.documents d on d.id = w.document_id
                       where (d.path like '%%' || %s or (%s = %s and d.conversation_id is not null))
                         and strpos(w.body, %s) > 0 and strpos(w.body, %s) > 0
                       order by w.id limit 1""",
                    (path, path, people_corpus.CHATS, short[r["subject"]], short[r["object"]]),
                ).fetchone()
                if window is None:
                    continue
                admin.execute(
                    """insert into exo_private.relations (workspace, generation, subject_id, object_id,
                                                          predicate_raw, predicate, window_id, document_id)
                       values (%s, %s, %s, %s, %s, %s, %s, %s) on conflict do nothing""",
                    (WORKSPACE, gen, *ids, r["predicate"], r["predicate"], *window),
                )
                written += 1
    return written


def ask(cfg: config.Config, db: str, questions: list[dict], show: int, k: int) -> list[dict]:
    out = []
    with (
        connect(admin_url(cfg, db), "exo-bench-multihop", autocommit=True) as admin,
        connect(role_url(cfg, "exo_reader", db), "exo-bench-multihop", autocommit=True) as reader,
    ):
        stages = admin.execute(
            "select value from exo_private.settings where key = 'retrieval.stages'"
        ).fetchone()[0]
        for q in questions:
            sq = shadow.Question(q["question"], tuple(q["aliases"]))
            chunks, _ = shadow.run_bm25(admin, sq, k, [WORKSPACE])
            bm25_text = "\n\n".join(c.body for c in chunks)
            budget = max(200, shadow.estimate_tokens(bm25_text))
            vector = shadow.embed_question(admin, q["question"]).get("vector")
            packet, _ = shadow.run_packet(reader, sq, budget, vector)
            admin.execute(
                "update exo_private.settings set value = %s where key = 'retrieval.stages'",
                (json.dumps([s for s in stages if s not in ("path", "graph")]),),
            )
            try:
                plain, _ = shadow.run_packet(reader, sq, budget, vector)
            finally:
                admin.execute(
                    "update exo_private.settings set value = %s where key = 'retrieval.stages'",
                    (json.dumps(stages),),
                )
            texts = {"packet": packet["text"], "no-graph": plain["text"], "bm25": bm25_text}
            path = (packet["report"].get("paths") or {}).get(WORKSPACE)
            row = {
                "id": q["id"],
                "kind": q["kind"],
                "question": q["question"],
                "held": {m: any(shadow.holds(texts[m], a) for a in q["aliases"]) for m in METHODS},
                "tokens": {"packet": packet["tokens"], "no-graph": plain["tokens"], "bm25": budget},
                "path": path,
            }
            out.append(row)
            if show and not row["held"]["packet"]:
                show -= 1
                print(f"\n== missed {q['question']} (answer {q['answer']}; path {path})\n{packet['text']}\n")
    return out


SYNTHETIC = """
with src as (
    insert into exo_private.sources (root) values ('bench-multihop') returning id
), docs as (
    insert into exo_private.documents (source_id, path, path_bytes, extension, size_bytes, mtime_ns, stage,
                                       workspace, band)
    select src.id, 'p' || i || '.md', convert_to('p' || i || '.md', 'UTF8'), 'md', 60, 0, 'chunked',
           'personal', 'current'
    from src, generate_series(1, %(n)s) i
    returning id, path
)
insert into exo_private.chunks (workspace, document_id, ordinal, body, char_start, char_end, band)
select 'personal', d.id, 0, 'Person ' || d.path || ' is the parent of the next and works at an org.', 0, 60,
       'current'
from docs d
"""
SYNTHETIC_GRAPH = """
insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end)
select c.document_id, 'personal', 0, c.body, 0, 60 from exo_private.chunks c;
insert into exo_private.entities (workspace, generation, type, canonical_key, name, is_owner)
select 'personal', %(gen)s, case when i <= %(n)s then 'Person' else 'Org' end::exo_private.entity_type,
       'e' || i, 'E' || i, i = 1
from generate_series(1, %(n)s + 100) i;
-- each person's document states: the owner (entity 1) talked with them (a hub of n edges), they
-- are the parent of the next person and married to the person n/2 on, and they work at one of
-- 100 organisations (hubs of n/100 edges each).
insert into exo_private.relations (workspace, generation, subject_id, object_id, predicate_raw, predicate,
                                   window_id, document_id, origin)
select 'personal', %(gen)s, s.id, o.id, x.p, x.p, w.id, w.document_id, x.origin
from generate_series(2, %(n)s - 1) i
cross join lateral (values
    (1, i, 'TALKED_WITH', 'structure'), (i, i + 1, 'PARENT_OF', 'model'),
    (i, (i + %(n)s / 2) %% %(n)s + 1, 'MARRIED_TO', 'model'), (i, %(n)s + 1 + i %% 100, 'WORKS_AT', 'model')
) x (a, b, p, origin)
join exo_private.entities s on s.workspace = 'personal' and s.canonical_key = 'e' || x.a
join exo_private.entities o on o.workspace = 'personal' and o.canonical_key = 'e' || x.b
join exo_private.documents d on d.path = 'p' || i || '.md'
join exo_private.extraction_windows w on w.document_id = d.id
on conflict do nothing;
insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface)
select e.id, w.id, w.document_id, c.id, e.name
from exo_private.entities e
join exo_private.documents d on d.path = 'p' || substr(e.canonical_key, 2) || '.md'
join exo_private.extraction_windows w on w.document_id = d.id
join exo_private.chunks c on c.document_id = d.id;
analyze;
"""


def explain_at_scale(cfg: config.Config, n: int) -> str:
    """The path stage's plans (explain analyze, buffers) for "the daughter-in-law of" a person and
    for "the mother-in-law of the daughter-in-law of" (four hops), on a synthetic graph of n people (4 relations each, the owner a hub of n)."""
    with (
        scratch_database(cfg, "bench_multihop_explain") as db,
        connect(admin_url(cfg, db), "exo-bench-multihop", autocommit=True) as admin,
    ):
        admin.execute(SYNTHETIC, {"n": n})
        gen = admin.execute("select exo_private.current_generation('personal', 'bench')").fetchone()[0]
        for statement in SYNTHETIC_GRAPH.split(";\n"):
            if statement.strip():
                admin.execute(statement, {"n": n, "gen": gen})
        query = admin.execute("select exo_private.stage_sql('path', 'personal')").fetchone()[0]
        # the stage's parameters in exo_private.stage_parameters' order: entity_ids, bands, as_of,
        # row_limit, released (none), hop_patterns, per_node
        admin.execute(f"prepare typed_path (bigint[], text[], date, int, text[], text[], int) as {query}")
        call = "execute typed_path (array[%s]::bigint[], %s::text[], current_date, 30, '{}', %s::text[], 50)"
        cursor = psycopg.ClientCursor(admin)  # EXECUTE takes no bound parameters: the client binds them
        plans = []
        # A person of four relations, then the owner: a hub of n relations, none of them asked for.
        # Two hops, and four (the walk's most).
        for key in ("e1000", "e1"):
            start = admin.execute(
                "select id from exo_private.entities where canonical_key = %s", (key,)
            ).fetchone()[0]
            for asked in ("the daughter-in-law of", "the mother-in-law of the daughter-in-law of"):
                hops = [family_pattern(hop) for hop, _ in relation_steps(f"{asked} {key}", [key])]
                args = (start, ["current", "recent"], hops)
                cursor.execute(call, args)  # warm
                cursor.execute("explain (analyze, buffers, costs off) " + call, args)
                plans.append(f"-- {asked} {key}\n" + "\n".join(r[0] for r in cursor))
        # What the worker's pattern pass reads of a window besides its text (once per window).
        window = admin.execute("select max(id) from exo_private.extraction_windows").fetchone()[0]
        cursor.execute("explain (analyze, buffers, costs off) " + queries.WINDOW_AUTHORS, (gen, window))
        plans.append("-- the pattern pass's window context\n" + "\n".join(r[0] for r in cursor))
        return "\n\n".join(plans)


def summary(rows: list[dict], kind: str) -> dict:
    picked = [r for r in rows if r["kind"] == kind]
    return {
        "questions": len(picked),
        **{m: sum(r["held"][m] for r in picked) for m in METHODS},
        "paths": sum(1 for r in picked if r["path"] and r["path"]["found"]),
        "tokens": {m: round(sum(r["tokens"][m] for r in picked) / max(1, len(picked))) for m in METHODS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=3)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--show", type=int, default=0, help="print up to N packets that miss")
    parser.add_argument("--k", type=int, default=5, help="BM25's chunks (the packet gets their tokens)")
    parser.add_argument("--json", type=Path, help="write the rows and summary here")
    parser.add_argument(
        "--graph",
        choices=("model", "patterns", "truth", "structure"),
        default="model",
        help="the graph beside the structural edges: the shipped extraction (chat model and pattern "
        "pass), the pattern pass with no chat model, the ground truth's relations (the retrieval "
        "side's ceiling), or none",
    )
    parser.add_argument(
        "--explain",
        type=int,
        metavar="N",
        help="only print the stage's plan on a synthetic graph of N people",
    )
    args = parser.parse_args()
    cfg = config.load()
    if args.explain:
        print(explain_at_scale(cfg, args.explain))
        return
    out = Path(tempfile.mkdtemp(prefix="exo-bench-multihop-"))
    world = people_corpus.generate(args.size, args.seed)
    people_corpus.write(world, out)
    print(
        f"corpus: {len(world.files)} files, {len(world.chat)} chat messages, {len(world.questions)} questions"
    )
    with scratch_database(cfg, "bench_multihop") as db:
        built = build(
            cfg,
            db,
            out,
            world.owner.name,
            extract=args.graph in ("model", "patterns"),
            chat_model=args.graph == "model",
        )
        if args.graph == "truth":
            built["truth_relations"] = truth_graph(cfg, db, world)
        print(json.dumps(built))
        rows = ask(cfg, db, world.questions, args.show, args.k)
    report = {
        "build": built,
        "summary": {k: summary(rows, k) for k in ("two-hop", "attribute")},
        "rows": rows,
    }
    for kind, s in report["summary"].items():
        n = s["questions"] or 1
        print(
            f"{kind}: {s['questions']} questions; answer held: packet {s['packet']} ({s['packet'] / n:.0%}), "
            f"no-graph {s['no-graph']} ({s['no-graph'] / n:.0%}), bm25@{args.k} {s['bm25']} ({s['bm25'] / n:.0%}); "
            f"typed path found evidence for {s['paths']}; mean tokens {s['tokens']}"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
