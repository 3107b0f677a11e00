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

With --model N, the chat-model builder (capsules.builder = model) on the first N capsules of the
--folder documents (every k-th, so they spread over the folder): the extractive capsule's lines
rewritten by the chat endpoint (--chat-url; by default a llama-server of this run's own with
--chat-model, Gemma 270M, so other users of the runtime's server do not queue ahead of it),
then validated as exo_private.build_capsule validates it. Reported: the
validation pass rate with the reasons for failing, seconds per capsule, and the top-20 word
coverage of the capsules that passed against their extractive ones.

    .venv/bin/python -m bench.capsules [--folder /usr/share/doc] [--min-chars 4000]
                                       [--model 8 --chat-url URL --chat-model NAME]
"""

from __future__ import annotations

import argparse
import copy
import json
import socket
import statistics
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from pydoc_data.topics import topics

from exocortex import config
from exocortex.models import services
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
    parser.add_argument("--model", type=int, default=0, help="also the chat-model builder on this many")
    parser.add_argument("--chat-url", help="an OpenAI-compatible endpoint (default: start one of our own)")
    parser.add_argument("--chat-model", default="gemma-3-270m-q4_k_m")
    parser.add_argument("--chat-timeout-s", type=float, default=300)
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
    if args.model:
        documents = {k: v for k, v in corpus.items() if not k.startswith("pydoc:")} or corpus
        if args.chat_url:
            model_run(args, documents)
            return
        cfg = config.load()
        with tempfile.TemporaryDirectory() as run_dir:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            try:
                services.start_chat(cfg, port, args.chat_model, run_dir=Path(run_dir))
                args.chat_url = f"http://127.0.0.1:{port}/v1"
                model_run(args, documents)
            finally:
                services.down(cfg, run_dir=Path(run_dir))


def model_run(args: argparse.Namespace, corpus: dict[str, str]) -> None:
    """The chat-model builder on args.model capsules spread over the corpus."""
    setting = {"url": args.chat_url, "model": args.chat_model, "timeout_s": args.chat_timeout_s}
    names = sorted(corpus)
    step = max(1, len(names) // args.model)
    picked = [
        n for n in names[::step] if capsules.build_capsule(chunks_of(corpus[n]), len(corpus[n]), 400, 1200)
    ]
    passed, seconds, reasons, ours, theirs = 0, [], Counter(), [], []
    served = []  # the server's own seconds (prompt + generation), without waiting for its one slot
    for name in picked[: args.model]:
        body = corpus[name]
        built = capsules.build_capsule(chunks_of(body), len(body), 400, 1200)
        began = time.perf_counter()
        made, why = capsules.model_capsule(
            setting, built, 400, 1200, call=lambda *a, **k: timed_chat(served, *a, **k)
        )
        seconds.append(time.perf_counter() - began)
        if made is None:
            reasons[why.split(" (")[0].split(":")[0] if why.startswith("chat") else _reason(why)] += 1
            print(f"  {name}: fell back ({why[:100]}), {seconds[-1]:.1f} s", flush=True)
            continue
        passed += 1
        wanted = top_words(body)
        ours.append(len(wanted & set(capsules.sentence_terms(made["body"]))) / len(wanted))
        theirs.append(len(wanted & set(capsules.sentence_terms(built["body"]))) / len(wanted))
        print(f"  {name}: passed, {made['tokens']} tokens, {seconds[-1]:.1f} s", flush=True)
    n = len(seconds)
    print(
        f"chat-model builder ({args.chat_model}): {passed} of {n} passed validation ({passed / max(1, n):.0%}); "
        f"seconds per capsule: median {statistics.median(seconds):.1f}, max {max(seconds):.1f} "
        f"(the server's own: median {statistics.median(served or [0]):.1f}); "
        f"extractive on the same documents: {statistics.median(times_of(corpus, picked[:n])):.1f} ms median"
    )
    print("fell back because: " + (", ".join(f"{r}: {c}" for r, c in reasons.most_common()) or "-"))
    if ours:
        print(
            f"top-20 word coverage of those that passed: model {statistics.mean(ours):.1%}, "
            f"extractive {statistics.mean(theirs):.1%}"
        )


def timed_chat(served: list[float], endpoint, messages, max_tokens):
    """capsules.model_client.chat, with llama-server's timings (prompt_ms + predicted_ms) kept."""
    payload = {
        "model": endpoint.model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "stream": False,
    }
    request = urllib.request.Request(
        endpoint.url + "/chat/completions", json.dumps(payload).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=endpoint.timeout_s) as answer:
            body = json.loads(answer.read())
    except OSError as exc:  # a timeout, a refused connection: the builder falls back
        raise capsules.Timeout(str(exc), endpoint.url) from exc
    timings = body.get("timings") or {}
    served.append((timings.get("prompt_ms", 0) + timings.get("predicted_ms", 0)) / 1000)
    choice = body["choices"][0]
    usage = body.get("usage") or {}
    return capsules.ChatReply(
        choice["message"]["content"],
        choice.get("finish_reason") or "unknown",
        usage.get("prompt_tokens", 0),
        usage.get("completion_tokens", 0),
    )


def _reason(why: str) -> str:
    """A failure's kind: its words without numbers and quotes ("sentence 3 cites no passage: '...'")."""
    head = why.split(":")[0].split(" (")[0]
    return " ".join(w for w in head.split() if not w.isdigit() and not w.startswith("'"))


def times_of(corpus: dict[str, str], names: list[str]) -> list[float]:
    times = []
    for name in names:
        began = time.perf_counter()
        capsules.build_capsule(chunks_of(corpus[name]), len(corpus[name]), 400, 1200)
        times.append((time.perf_counter() - began) * 1000)
    return times


if __name__ == "__main__":
    main()
