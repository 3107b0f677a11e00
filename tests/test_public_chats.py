"""bench/public_chats.py's converter and question forms, on a tiny dataset in the shape of the
chitchat dataset (no network, no database): the JSONL it writes is read by the importer's parser."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime

from bench.public_chats import convert, question_for, questions, write_jsonl
from exocortex.ingest.chat import parse_export

ANA, BO = "22578ac2-6317-44d5-8052-0a59076e0b96", "720840be-e522-47ba-9e9f-143f66372673"
SAID_TWICE = "I really cannot wait for the summer holidays in Portugal"


def message(sender: str, at: str, text: str) -> dict:
    return {"sender": sender, "timestamp": f"2018-05-02T19:{at}Z", "text": text}


DATASET = {
    "c1": {
        "prompt": "What is the best pizza topping?",
        "start": "2018-05-03T01:38:00Z",
        "messages": [
            [message(ANA, "38:15", "Hello"), message(ANA, "38:20", "How are you?")],
            [message(BO, "39:00", "Fine, I ate pineapple pizza with anchovies yesterday evening downtown")],
        ],
    },
    "c2": {
        "start": "2018-05-03T01:40:00Z",
        "messages": [
            [message(BO, "40:00", "Anyone there?"), message(BO, "40:10", SAID_TWICE)],
            [message(ANA, "40:20", SAID_TWICE)],
        ],
    },
    "c3": {
        "prompt": "Dogs or cats?",
        "messages": [[message(ANA, "41:00", "Cats")], [message(BO, "41:30", "Dogs")]],
    },
}


def test_convert_takes_whole_conversations_up_to_the_cap_in_a_seeded_order():
    everything = convert(DATASET, 100, seed=1)
    assert len(everything) == 8
    assert [m.ordinal for m in everything] == list(range(1, 9))
    assert convert(DATASET, 100, seed=1) == everything
    c1 = [m for m in everything if m.conversation_id == "c1"]
    assert [(m.sender, m.sent_at) for m in c1] == [
        ("22578ac2", "2018-05-02T19:38:15Z"),
        ("22578ac2", "2018-05-02T19:38:20Z"),
        ("720840be", "2018-05-02T19:39:00Z"),
    ]
    sizes = Counter(m.conversation_id for m in everything)
    for cap in range(1, 8):
        kept = Counter(m.conversation_id for m in convert(DATASET, cap, seed=1))
        assert all(n == sizes[c] for c, n in kept.items()), "whole conversations only"
        assert sum(kept.values()) <= cap or len(kept) == 1, "the first conversation is kept whatever its size"
    orders = {tuple(m.conversation_id for m in convert(DATASET, 100, seed)) for seed in range(5)}
    assert len(orders) > 1, "the seed decides the order"


def test_the_jsonl_it_writes_is_read_by_the_importer(tmp_path):
    path = tmp_path / "chitchat.jsonl"
    write_jsonl(convert(DATASET, 100, seed=1), path)
    export = parse_export(path, "jsonl")
    assert len(export.messages) == 8
    titles = {c.external_id: c.title for c in export.conversations.values()}
    assert titles == {"c1": "What is the best pizza topping?", "c2": None, "c3": "Dogs or cats?"}
    sent = sorted(m.sent_at for m in export.messages)
    assert sent[0] == datetime(2018, 5, 2, 19, 38, 15, tzinfo=UTC)


def test_a_rare_question_keeps_the_rarest_words_in_the_message_order():
    text = "Fine, I ate pineapple pizza with anchovies yesterday evening downtown"
    frequency = Counter({"pizza": 9, "with": 50, "fine": 20, "yesterday": 8, "ate": 7, "evening": 6})
    common = {"with"}
    assert (
        question_for(text, frequency, common, "rare", random.Random(1))
        == "pineapple anchovies evening downtown"
    )
    randomly = question_for(text, frequency, common, "random", random.Random(1)).split()
    assert len(randomly) == 4 and "with" not in randomly
    words = ["fine", "ate", "pineapple", "pizza", "anchovies", "yesterday", "evening", "downtown"]
    assert randomly == [w for w in words if w in randomly], "in the message's order"
    three = question_for(text, frequency, common, "three", random.Random(1)).split()
    assert len(three) == 3 and three == [w for w in words if w in three]
    assert question_for("Are you with him?", frequency, common, "rare", random.Random(1)) is None


def test_questions_skip_short_and_repeated_messages_and_ask_each_in_every_form():
    messages = convert(DATASET, 100, seed=1)
    asked = questions(messages, 10, seed=1, common_words=0)
    assert [q.kind for q in asked] == ["rare", "random", "three"]
    (target,) = [m for m in messages if "pineapple" in m.text]
    assert {q.answers[0] for q in asked} == {target.ordinal}
    assert all(set(q.question.split()) <= set(target.text.casefold().replace(",", "").split()) for q in asked)
