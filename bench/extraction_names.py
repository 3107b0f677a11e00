"""Benchmark: the entities extraction keeps from the example vault, names and junk.

The example vault is ingested into a scratch database, and each of its extraction windows goes to
the default chat model (Gemma 3 270M in llama-server on a free port) as the worker sends it. The
replies are kept in --replies (JSON, by the sha256 of the window), so that a later run, or a run of
another version of the acceptance over the same replies, needs no model. Each reply is accepted as
the worker accepts it (extraction.parse with spaCy's labels of the window, extraction.ner 'auto',
and each entity's cues: ner.mark_cues). An entity named in several windows is typed two ways in
the same run: the baseline, the type most windows give it (one vote each); and as upsert_entity
types it, by those votes plus its cues, the mentions whose syntax typed it (weighed_type).

    .venv/bin/python -m bench.extraction_names [--replies PATH] [--list]
    .venv/bin/python -m bench.extraction_names --doc-root /usr/share/doc [--windows 1500] [--seed 7]

Prints the distinct entities of each type both ways, the names whose type the cues change and,
with --list, every Person, Org and Place as upsert_entity types them.

With --doc-root, no model: text nobody here wrote (Debian's /usr/share/doc, read and cut into
windows as bench.pattern_pass does), a seeded sample of its windows. Each name spaCy labels
a person, organisation or place is typed two ways: the plain baseline, the recogniser's first
label of it in the window (common_names as in ner), and ner.spacy_labels (the votes of all its mentions and the syntax
around them). Prints how many names each gives each type, and every name whose type changed
with a sentence that mentions it, for a person to judge. Then across the sample's windows: each
name spaCy labels in two or more of them, typed by one vote a window (its spacy_labels type) and
by the votes plus the cues (weighed_type); every name whose type the cues change is printed with
a sentence of each type's windows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import pattern_pass
from exocortex import config
from exocortex.config import PACKAGE_DIR
from exocortex.db import admin_url, connect
from exocortex.extraction import llm as extraction
from exocortex.extraction import ner, relation_patterns
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


def first_labels(doc) -> dict[str, str]:
    """The baseline: each name's type by the recogniser's first label of it in the window (and,
    as ner.spacy_labels, Common for capitalised words that are nowhere a proper noun there)."""
    found: dict[str, str] = {}
    for span in doc.ents:
        key = relation_patterns.name_key(span.text)
        if key and span.label_ in ner.LABELS:
            found.setdefault(key, ner.LABELS[span.label_])
    for key in ner.common_names(doc):
        if found.get(key) not in ("Date", "Number"):
            found[key] = extraction.acceptance.COMMON
    return found


def voted_type(votes: Counter) -> str:
    """The baseline: the type most windows give a name (a tie: the one given first)."""
    return max(votes, key=lambda t: (votes[t], -list(votes).index(t)))


def weighed_type(votes: Counter, cues: Counter) -> str:
    """The type as exo_private.upsert_entity chooses it for a name no cue word, owner or sense
    decides: most votes (one a window) and cues (mentions whose syntax typed it) together; a tie
    keeps the type the first window gave."""
    total = votes + cues
    first = next(iter(votes))
    return max(total, key=lambda t: (total[t], t == first))


def doc_types(doc_root: Path, windows: int, seed: int) -> None:
    """Names typed by the first label and by ner.spacy_labels over a sample of doc_root's windows."""
    cut = [w for _, text in pattern_pass.texts(doc_root, 100_000) for w in pattern_pass.windows(text, 2000)]
    sample = random.Random(seed).sample(cut, min(windows, len(cut)))
    before, after, changed = Counter(), Counter(), []
    votes: dict[str, Counter] = defaultdict(Counter)
    cues: dict[str, Counter] = defaultdict(Counter)
    said_as: dict[tuple[str, str], str] = {}
    for window in sample:
        doc = ner.parse(window)
        old, new = first_labels(doc), ner.spacy_labels(window)
        found = ner.syntax_cues(window)
        for key, type_ in new.items():
            if type_ in NAMED and old.get(key) in NAMED:
                votes[key][type_] += 1
                cues[key].update(found.get(key, {}))
                if (key, type_) not in said_as:
                    said_as[key, type_] = _sentence(doc, key)
        for key, type_ in old.items():
            if type_ not in NAMED:
                continue
            now = new[key]
            before[type_] += 1
            after[now] += 1
            if now != type_:
                changed.append((key, type_, now, _sentence(doc, key)))
    print(
        f"{len(sample)} of {len(cut)} windows of {doc_root}, seed {seed}: names spaCy labels a person, org or place"
    )
    print(f"  {'type':<7} {'first label':>11} {'votes':>6}")
    for type_ in NAMED:
        print(f"  {type_:<7} {before[type_]:11} {after[type_]:6}")
    print(f"{len(changed)} changed:")
    for key, old_type, new_type, said in changed:
        print(f"  {key!r}: {old_type} -> {new_type} | {said}")
    several = {key: counts for key, counts in votes.items() if counts.total() > 1}
    plain = Counter(voted_type(counts) for counts in several.values())
    weighed = {key: weighed_type(counts, cues[key]) for key, counts in several.items()}
    print(f"across the windows: {len(several)} names in two or more of them")
    print(f"  {'type':<7} {'one vote a window':>17} {'and cues':>9}")
    for type_ in NAMED:
        print(f"  {type_:<7} {plain[type_]:17} {Counter(weighed.values())[type_]:9}")
    retyped = [key for key, counts in several.items() if weighed[key] != voted_type(counts)]
    print(f"{len(retyped)} changed by the cues:")
    for key in retyped:
        print(
            f"  {key!r}: {voted_type(votes[key])} -> {weighed[key]} "
            f"(windows {dict(votes[key])}, cues {dict(cues[key])})"
        )
        for type_ in votes[key]:
            print(f"      {type_}: {said_as[key, type_]}")


def _sentence(doc, key: str) -> str:
    """The first sentence of doc that mentions key, whitespace collapsed, at most 160 characters."""
    said = next((s.text for s in doc.sents if key in relation_patterns.name_key(s.text)), "")
    return re.sub(r"\s+", " ", said)[:160]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--replies", type=Path, default=Path(tempfile.gettempdir()) / "exo-bench-extraction-replies.json"
    )
    parser.add_argument("--list", action="store_true", help="print every Person, Org and Place")
    parser.add_argument("--doc-root", type=Path, help="type names of text here instead (no model)")
    parser.add_argument("--windows", type=int, default=1500, help="windows of --doc-root sampled")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.doc_root:
        doc_types(args.doc_root, args.windows, args.seed)
        return
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
    cues: dict[str, Counter] = defaultdict(Counter)
    names: dict[str, str] = {}
    for digest, body in zip(digests, bodies, strict=True):
        labels = recognise(body) if recognise else None
        kept = extraction.parse(replies[digest], body, max_entities, max_relations, labels)
        if recognise:
            ner.mark_cues(kept.entities, body)
        for entity in kept.entities:
            key = extraction.acceptance.folded_key(entity["name"])
            names.setdefault(key, entity["name"])
            votes[key][entity["type"]] += 1
            cues[key].update(entity.get("cues", {}))
    plain = {key: voted_type(counts) for key, counts in votes.items()}
    typed = {key: weighed_type(counts, cues[key]) for key, counts in votes.items()}
    print(f"{len(bodies)} windows of examples/vault, {len(typed)} distinct entities")
    print(f"  {'type':<7} {'one vote a window':>17} {'and cues':>9}")
    for type_ in (*NAMED, "Topic", "Date"):
        print(f"  {type_:<7} {Counter(plain.values())[type_]:17} {Counter(typed.values())[type_]:9}")
    for key in (k for k in typed if typed[k] != plain[k]):
        print(
            f"  {names[key]}: {plain[key]} -> {typed[key]} (windows {dict(votes[key])}, cues {dict(cues[key])})"
        )
    if args.list:
        for type_ in NAMED:
            print(f"{type_}: " + "; ".join(sorted(names[k] for k, t in typed.items() if t == type_)))


if __name__ == "__main__":
    main()
