"""Benchmark: the extractive capsule builder (plpy/capsules.py) on public prose.

Corpus, none written by the project: the topics of Python's reference documentation
(pydoc_data.topics, shipped with every CPython) of at least --min-chars characters, plus, with
--folder, every .txt, .md and .rst file under it of that size (Debian's /usr/share/doc READMEs,
say). Each text is cut into chunks as ingest cuts them (1,200 characters, 200 overlap), then:

  size        capsule tokens (min, median, max) and the share within 400..1,200 tokens
  time        build time per document (median, max), in this process (the database runs the
              same code inlined into exo_private.build_capsule)
  coverage    the share of the document's 20 most frequent content words that its capsule holds,
              against a lead summary of the same length (the document's first sentences): what
              choosing sentences by centrality buys over taking the opening
  determinism every capsule built twice from copies of its chunks is identical

    .venv/bin/python -m bench.capsules [--folder /usr/share/doc] [--min-chars 4000]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections import Counter
from pathlib import Path
from pydoc_data.topics import topics

from tests.support.plpy import load

capsules = load("capsules")
chunking = load("chunking")


def texts(folder: Path | None, min_chars: int) -> dict[str, str]:
    found = {f"pydoc:{name}": body for name, body in sorted(topics.items()) if len(body) >= min_chars}
    if folder is not None:
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".txt", ".md", ".rst") and path.is_file():
                try:
                    body = path.read_text()
                except (OSError, UnicodeDecodeError):
                    continue
                if len(body) >= min_chars:
                    found[str(path.relative_to(folder))] = body
    return found


def chunks_of(text: str) -> list[dict]:
    return [
        {"id": i, "body": text[a:b], "char_start": a, "char_end": b, "charged_subjects": []}
        for i, (a, b) in enumerate(chunking.split_text(text, 1200, 200))
    ]


def top_words(text: str, n: int = 20) -> set[str]:
    return {w for w, _ in Counter(capsules.sentence_terms(text)).most_common(n)}


def lead(chunks: list[dict], chars: int) -> str:
    """The document's first prose sentences, as many as fit in `chars`."""
    found, _ = capsules.prose_sentences(chunks)
    kept, size = [], -1
    for s in found:
        if size + 1 + len(s["text"]) > chars:
            break
        kept.append(s["text"])
        size += 1 + len(s["text"])
    return "\n".join(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, help="also every .txt, .md and .rst file under this folder")
    parser.add_argument("--min-chars", type=int, default=4000)
    args = parser.parse_args()

    corpus = texts(args.folder, args.min_chars)
    tokens, times, ours, leads = [], [], [], []
    none = same = 0
    for body in corpus.values():
        chunks = chunks_of(body)
        began = time.perf_counter()
        built = capsules.build_capsule(chunks, len(body), 400, 1200)
        times.append((time.perf_counter() - began) * 1000)
        if built is None:
            none += 1
            continue
        same += built == capsules.build_capsule(copy.deepcopy(chunks), len(body), 400, 1200)
        tokens.append(built["tokens"])
        wanted = top_words(body)
        ours.append(len(wanted & set(capsules.sentence_terms(built["body"]))) / len(wanted))
        leads.append(
            len(wanted & set(capsules.sentence_terms(lead(chunks, len(built["body"]))))) / len(wanted)
        )

    print(f"documents: {len(corpus)} (capsules: {len(tokens)}, too little prose: {none})")
    if not tokens:
        return
    within = sum(400 <= t <= 1200 for t in tokens) / len(tokens)
    print(
        f"tokens: min {min(tokens)}, median {statistics.median(tokens):g}, max {max(tokens)}; "
        f"within 400..1200: {within:.1%}"
    )
    print(f"build ms: median {statistics.median(times):.1f}, max {max(times):.1f}")
    print(
        f"top-20 word coverage: capsule {statistics.mean(ours):.1%}, lead of the same length "
        f"{statistics.mean(leads):.1%}"
    )
    print(f"deterministic: {same} of {len(tokens)}")


if __name__ == "__main__":
    main()
