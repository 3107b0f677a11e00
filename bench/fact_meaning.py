"""Benchmark: does the facts section hold the line a question asks about, in other words? (issue 29)

The example vault's facts file (examples/vault/admin/facts.md: its owner's declared lines,
address, manager, blood type ...) alone in a scratch database, its owner set, its chunks embedded
by the real MiniLM. Questions in the first person, as people ask them: for each of 18 lines, two
to six paraphrases, most without a word of its attribute ("Who do I report to?", "Who is my
boss?" for manager; "Where's home these days?" for address; "What's my blood group?"), and 18
questions about other things that must show no line ("How do I rotate the logs?"). The search
finds only the facts file, whose passages state every line and are no evidence for any
(plpy/fact_choice.py), so the lines shown are chosen by words and meaning alone.

Per question, as exo_reader, the facts section of exo.context_packet_json: a hit when it shows
the line asked about, extra lines beside it, a false show when an unrelated question shows any
line (a sensitive one is also counted where it shows without being asked for). The baseline of
the same run: the same packets with the embeddings endpoint gone (words alone: the meaning rule
off). --setting KEY=JSON tries a setting (packet.fact_similarity) on the meaning run.

    .venv/bin/python -m bench.fact_meaning [--setting packet.fact_similarity=0.35]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bench.chat_recall import embedding_endpoint, load_note
from bench.scratch import add_setting_option, apply_settings, ingest_vault, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ops.migrate import scratch_database

FACTS_FILE = Path(__file__).resolve().parents[1] / "examples/vault/admin/facts.md"
OWNER = "Sam Rivera"
SENSITIVE = {"blood_type", "car_insurance", "contents_insurance", "current_account", "dog"}

PARAPHRASES = {
    "manager": ["Who do I report to?", "Who is my boss?", "Who's my line manager?", "Who manages me at work?",
                "Who's my supervisor?", "Who do I answer to at Northwind?"],
    "address": ["Where do I live?", "Where's home these days?", "What is my home address?", "What's my postcode?",
                "Which street is my flat on?", "Where am I living now?"],
    "blood_type": ["What's my blood group?", "What blood type am I?", "Which blood group do I have?"],
    "born": ["When is my birthday?", "Where was I born?", "What's my date of birth?", "How old am I?"],
    "car": ["What do I drive?", "What car have I got?", "What colour is my hatchback?", "What vehicle do I own?"],
    "car_insurance": ["Who insures my car?", "Which company covers my vehicle?"],
    "contents_insurance": ["Are my belongings at home insured?", "Who covers the contents of my flat?"],
    "current_account": ["What's my bank account number?", "What are my bank details?"],
    "dog": ["What's my dog called?", "What kind of pet do I have?", "What breed is my terrier?",
            "Where did I adopt my pet from?"],
    "emergency_contact": ["Who should be called if something happens to me?", "Who do I list as next of kin?",
                          "Who do I call in an emergency?"],
    "employer": ["Where do I work?", "Which company do I work for?", "Who employs me?", "Who pays my salary?"],
    "gp": ["Who is my doctor?", "Which surgery am I registered with?", "Who's my family doctor?"],
    "home_server": ["What is the machine in my hallway cupboard?", "What's my home lab box called?"],
    "landlord": ["Who do I rent from?", "Who owns my flat?", "Who do I pay rent to?"],
    "parents": ["What are my mum and dad called?", "Who are my mother and father?", "Where do my folks live?"],
    "previous_addresses": ["Where did I live before Alder Row?", "Where did I live in 2014?",
                           "What was my old address?"],
    "previous_employer": ["Where did I work before Northwind?", "Who did I work for before?",
                          "Where did I used to work?"],
    "role": ["What's my job title?", "What do I do for a living?", "What's my position at work?", "What is my job?"],
}  # fmt: skip
UNRELATED = [
    "How do I rotate the logs?", "Who is on call for the database, and how do I escalate?",
    "Has my offer on the Gull Lane house been accepted?", "How do I restore a backup?", "What did I do last weekend?",
    "When is the next team offsite?", "How do I fix replication lag?", "What books did I read this year?",
    "What is the recipe for banana bread?", "How far did I run on Sunday?", "When did I last see Iris?",
    "What did the postmortem for INC-2041 conclude?", "What should I pack for the trip to Skerrin?",
    "Which films did I watch in March?", "How do I write a self-review?", "What time is the daily standup?",
    "What did I cook for dinner yesterday?", "How many hours did I sleep last night?",
]  # fmt: skip


def shown_lines(reader, question: str) -> list[str]:
    """The attributes of the owner's lines the packet's facts section shows."""
    text = reader.execute("select exo.context_packet_json(%s, 2000)", (question,)).fetchone()[0]["text"]
    if "## Current facts" not in text:
        return []
    section = text[text.index("## Current facts") : text.index("## Evidence")]
    prefix = f"- {OWNER}, "
    return [line[len(prefix) :].split(":", 1)[0] for line in section.splitlines() if line.startswith(prefix)]


def score(reader, label: str) -> dict:
    hits = extra = sensitive = 0
    misses, false_shows = [], []
    asked = [(attribute, q) for attribute, questions in PARAPHRASES.items() for q in questions]
    for attribute, question in asked:
        lines = shown_lines(reader, question)
        hits += attribute in lines
        extra += len([a for a in lines if a != attribute])
        sensitive += len([a for a in lines if a != attribute and a in SENSITIVE])
        if attribute not in lines:
            misses.append(f"{question} ({attribute})")
    for question in UNRELATED:
        lines = shown_lines(reader, question)
        if lines:
            false_shows.append(f"{question}: {', '.join(lines)}")
    print(
        f"  {label:<28} line asked shown {hits}/{len(asked)}, extra lines {extra} (sensitive {sensitive}); "
        f"unrelated questions showing a line {len(false_shows)}/{len(UNRELATED)}",
        flush=True,
    )
    return {"misses": misses, "false_shows": false_shows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_setting_option(parser)
    args = parser.parse_args()
    settings = trial_settings(parser, args)
    cfg = config.load()
    began = time.monotonic()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {load_note()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="exo-bench-fact-meaning-") as tmp:
        run_dir, vault = Path(tmp), Path(tmp) / "vault"
        vault.mkdir()
        shutil.copy(FACTS_FILE, vault / FACTS_FILE.name)
        with (
            embedding_endpoint(cfg, run_dir) as endpoint,
            scratch_database(cfg, "bench_fact_meaning") as name,
        ):
            ingest_vault(cfg, name, endpoint.url, vault, OWNER, "bench_fact_meaning")
            with connect(admin_url(cfg, name), "bench_fact_meaning", autocommit=True) as admin:
                apply_settings(admin, settings)
                with connect(
                    role_url(cfg, "exo_reader", name), "bench_fact_meaning", autocommit=True
                ) as reader:
                    found = score(reader, "words and meaning")
                admin.execute(
                    "update exo_private.settings set value = jsonb_set(value, '{url}', "
                    "'\"http://127.0.0.1:9/v1\"') where key = 'models.embeddings'"
                )
                with connect(
                    role_url(cfg, "exo_reader", name), "bench_fact_meaning", autocommit=True
                ) as reader:
                    score(reader, "baseline: words alone")
    print("\nmissed with meaning: " + "; ".join(found["misses"]))
    print("unrelated with a line: " + ("; ".join(found["false_shows"]) or "none"))
    print(f"\nfinished in {time.monotonic() - began:.0f} s with {load_note()}")


if __name__ == "__main__":
    main()
