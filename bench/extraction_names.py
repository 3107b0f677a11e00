"""Benchmark: the entities extraction keeps from the example vault, names and junk.

The example vault is ingested into a scratch database, and each of its extraction windows goes to
the default chat model (Gemma 3 270M in llama-server on a free port) as the worker sends it. The
replies are kept in --replies (JSON, by the sha256 of the window), so that a later run, or a run of
another version of the acceptance over the same replies, needs no model. Each reply is accepted as
the worker accepts it (extraction.parse with spaCy's labels of the window, extraction.ner 'auto').
An entity named in several windows takes the type most of them give it, as upsert_entity does.

    .venv/bin/python -m bench.extraction_names [--replies PATH] [--list]

Prints the distinct entities of each type and, with --list, every Person, Org and Place.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from exocortex import config
from exocortex.config import PACKAGE_DIR
from exocortex.db import admin_url, connect
from exocortex.extraction import llm as extraction
from exocortex.extraction import ner
from exocortex.ingest.pipeline import ingest
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint
from tests.support.models import CHAT_MODEL, free_ports

NAMED = ("Person", "Org", "Place")


def vault_windows(cfg: config.Config) -> tuple[list[str], dict]:
    """The example vault's extraction windows (in order) and the extraction settings."""
    with scratch_database(cfg, "bench_names") as name:
        ingest(cfg, PACKAGE_DIR.parents[1] / "examples/vault", dbname=name)
        with connect(admin_url(cfg, name), "exo-bench", autocommit=True) as conn:
            bodies = [
                r[0] for r in conn.execute("select body from exo_private.extraction_windows order by id")
            ]
            settings = dict(
                conn.execute("select key, value from exo_private.settings where key like 'extraction.%'")
            )
    return bodies, settings


def ask_model(cfg: config.Config, bodies: list[str], settings: dict) -> list[str]:
    """The chat model's replies to bodies, two at a time (its two slots)."""
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-names-"))
    (port,) = free_ports(1)
    max_entities, max_relations = (
        int(settings["extraction.max_entities"]),
        int(settings["extraction.max_relations"]),
    )
    try:
        services.start_chat(cfg, port, CHAT_MODEL, run_dir=run_dir)
        chat = Endpoint(f"http://127.0.0.1:{port}/v1", CHAT_MODEL, 600.0, {})

        def one(body: str) -> str:
            return client.chat(
                chat,
                extraction.messages(body),
                max_tokens=int(settings["extraction.max_tokens"]),
                response_format=extraction.response_format(max_entities, max_relations),
            ).content

        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(one, bodies))
    finally:
        services.down(cfg, run_dir=run_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--replies", type=Path, default=Path(tempfile.gettempdir()) / "exo-bench-extraction-replies.json"
    )
    parser.add_argument("--list", action="store_true", help="print every Person, Org and Place")
    args = parser.parse_args()
    cfg = config.load()
    bodies, settings = vault_windows(cfg)
    replies = json.loads(args.replies.read_text()) if args.replies.exists() else {}
    digests = [hashlib.sha256(body.encode()).hexdigest() for body in bodies]
    missing = [(d, b) for d, b in zip(digests, bodies, strict=True) if d not in replies]
    if missing:
        print(f"asking the chat model for {len(missing)} of {len(bodies)} windows")
        answered = ask_model(cfg, [b for _, b in missing], settings)
        replies.update(zip([d for d, _ in missing], answered, strict=True))
        args.replies.write_text(json.dumps(replies))
    max_entities, max_relations = (
        int(settings["extraction.max_entities"]),
        int(settings["extraction.max_relations"]),
    )
    recognise = ner.recogniser(settings.get("extraction.ner", "auto"))
    votes: dict[str, Counter] = defaultdict(Counter)
    names: dict[str, str] = {}
    for digest, body in zip(digests, bodies, strict=True):
        labels = recognise(body) if recognise else None
        kept = extraction.parse(replies[digest], body, max_entities, max_relations, labels)
        for entity in kept.entities:
            key = extraction.acceptance.folded_key(entity["name"])
            names.setdefault(key, entity["name"])
            votes[key][entity["type"]] += 1
    typed = {key: counts.most_common(1)[0][0] for key, counts in votes.items()}
    by_type = Counter(typed.values())
    print(f"{len(bodies)} windows of examples/vault, {len(typed)} distinct entities")
    for type_ in (*NAMED, "Topic", "Date"):
        print(f"  {type_:<7} {by_type[type_]:4}")
    if args.list:
        for type_ in NAMED:
            print(f"{type_}: " + "; ".join(sorted(names[k] for k, t in typed.items() if t == type_)))


if __name__ == "__main__":
    main()
