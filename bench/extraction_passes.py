"""Benchmark: the narrow second extraction pass (setting extraction.relation_pass), with and without.

Windows: the first --chars characters (cut at a paragraph) of --vault documents of the example
vault and of --debian Debian changelogs (changelog.Debian.gz under --doc-root, the first ones in
name order: real text with people, dates and packages). Each window gets the extraction request
the worker sends (extraction.messages, the json_schema of extraction.response_format) and, for
the two-pass configuration, the relation request on the names the first kept
(extraction.relation_messages, subject and object an enum of those names). Both configurations
share the first reply, so the second pass's cost is its own time. Reported per configuration:
entities and relations kept (after grounding, type checks and endpoint resolution), relations
between two people, drops by reason, and seconds per window (ratio against one pass, measured
in the same run).

    .venv/bin/python -m bench.extraction_passes [--url http://127.0.0.1:PORT/v1] [--vault 6] [--debian 4]

Without --url it starts Gemma 3 270M in llama-server on a free port, as `exo models up` does.
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from collections import Counter
from pathlib import Path

from exocortex import config
from exocortex.config import PACKAGE_DIR
from exocortex.extraction import llm as extraction
from exocortex.models import services
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint
from tests.support.models import CHAT_MODEL, free_ports

MAX_ENTITIES = 12
MAX_RELATIONS = 12
MAX_TOKENS = 768


def window_of(text: str, chars: int) -> str:
    """The first chars characters of text, cut at the last paragraph break inside them."""
    head = text[:chars]
    cut = head.rfind("\n\n")
    return (head[:cut] if cut > chars // 2 else head).strip()


def windows(vault: int, debian: int, chars: int, doc_root: Path) -> list[tuple[str, str]]:
    """(source, text) of the vault's first documents with people in them and Debian changelogs."""
    found = []
    notes = sorted((PACKAGE_DIR.parents[1] / "examples/vault").rglob("*.md"))
    for path in [p for p in notes if "diary" in p.parts or "inbox" in p.parts or "letters" in p.parts][
        :vault
    ]:
        found.append((f"vault/{path.name}", window_of(path.read_text(encoding="utf-8"), chars)))
    for path in sorted(doc_root.glob("*/changelog.Debian.gz"))[:debian]:
        text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        found.append((f"debian/{path.parent.name}", window_of(text, chars)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running OpenAI-compatible chat endpoint serving Gemma 3 270M")
    parser.add_argument("--vault", type=int, default=6, help="example vault windows")
    parser.add_argument("--debian", type=int, default=4, help="Debian changelog windows")
    parser.add_argument("--chars", type=int, default=1200, help="characters per window")
    parser.add_argument("--doc-root", type=Path, default=Path("/usr/share/doc"))
    parser.add_argument("--show", action="store_true", help="print every kept relation")
    args = parser.parse_args()
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-passes-"))
    url = args.url
    if url is None:
        (port,) = free_ports(1)
        services.start_chat(cfg, port, CHAT_MODEL, run_dir=run_dir)
        url = f"http://127.0.0.1:{port}/v1"
    chat = Endpoint(url, CHAT_MODEL, 900.0, {})
    texts = windows(args.vault, args.debian, args.chars, args.doc_root)
    one = {"entities": 0, "relations": 0, "people": 0, "seconds": 0.0, "dropped": Counter(), "windows": []}
    two = {"entities": 0, "relations": 0, "people": 0, "seconds": 0.0, "dropped": Counter(), "windows": []}
    try:
        for source, text in texts:
            began = time.perf_counter()
            reply = client.chat(
                chat,
                extraction.messages(text),
                max_tokens=MAX_TOKENS,
                response_format=extraction.response_format(MAX_ENTITIES, MAX_RELATIONS),
            )
            first = time.perf_counter() - began
            parsed = extraction.parse(reply.content, text, MAX_ENTITIES, MAX_RELATIONS)
            tally(one, parsed, first)
            one["windows"].append(source)
            names = [e["name"] for e in parsed.entities]
            began = time.perf_counter()
            if len(names) > 1:
                second = client.chat(
                    chat,
                    extraction.relation_messages(text, names),
                    max_tokens=MAX_TOKENS,
                    response_format=extraction.relation_response_format(names, MAX_RELATIONS),
                )
                extraction.parse_relations(second.content, text, parsed, MAX_ENTITIES, MAX_RELATIONS)
            both = first + time.perf_counter() - began
            tally(two, parsed, both)
            print(f"{source}: {len(names)} names, first pass {first:.0f} s, both {both:.0f} s", flush=True)
            if args.show:
                for r in parsed.relations:
                    print(f"    {r['subject']} -[{r['predicate']}]-> {r['object']}")
            report(one, two, len(one["windows"]), args)
    finally:
        if args.url is None:
            services.down(cfg, run_dir=run_dir)


def report(one: dict, two: dict, n: int, args: argparse.Namespace) -> None:
    """The table so far (after each window: a run cut short still reports)."""
    print(f"\n{n} windows of at most {args.chars} characters ({', '.join(one['windows'])})")
    print(
        f"{'configuration':22} {'entities':>9} {'relations':>10} {'person-person':>14} {'s/window':>9} {'time':>6}"
    )
    for label, row in (("one pass (baseline)", one), ("two passes", two)):
        print(
            f"{label:22} {row['entities']:>9} {row['relations']:>10} {row['people']:>14} "
            f"{row['seconds'] / n:>9.1f} {row['seconds'] / one['seconds']:>5.2f}x"
        )
    for label, row in (("one pass", one), ("two passes", two)):
        print(f"dropped, {label}: {dict(sorted(row['dropped'].items()))}")
    print(flush=True)


def tally(row: dict, parsed: extraction.Extraction, seconds: float) -> None:
    types = {e["name"]: e["type"] for e in parsed.entities}
    row["entities"] += len(parsed.entities)
    row["relations"] += len(parsed.relations)
    row["people"] += sum(
        types.get(r["subject"]) == types.get(r["object"]) == "Person" for r in parsed.relations
    )
    row["seconds"] += seconds
    row["dropped"] = Counter(parsed.dropped) + row["dropped"]


if __name__ == "__main__":
    main()
