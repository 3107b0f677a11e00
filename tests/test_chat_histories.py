"""The generated chat histories of bench/chat_histories.py: deterministic, and every question's
answers exist and hold the fact (no database)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from datetime import date, datetime, timedelta

import pytest

from bench.chat_histories import KINDS, OWNER, generate, write
from exocortex.ingest.chat import parse_export

END = date(2025, 12, 31)


@pytest.fixture(scope="module")
def history():
    return generate(4, seed=3, end=END)


def test_the_same_seed_gives_the_same_history_and_another_seed_another(history):
    again = generate(4, seed=3, end=END)
    assert again.messages == history.messages
    assert again.questions == history.questions
    other = generate(4, seed=4, end=END)
    assert [m.text for m in other.messages] != [m.text for m in history.messages]


def test_every_answer_exists_in_its_conversation_and_holds_the_fact(history):
    by_ordinal = {m.ordinal: m for m in history.messages}
    assert sorted(by_ordinal) == list(range(1, len(history.messages) + 1))
    assert {q.kind for q in history.questions} == set(KINDS)
    for q in history.questions:
        answers = [by_ordinal[a] for a in q.answers]
        assert answers, q.id
        assert all(m.conversation_id == q.conversation_id for m in answers), q.id
        for m in answers:
            assert any(f in m.text for f in q.facts), (q.id, m.text, q.facts)
        assert all(any(f in m.text for m in answers) for f in q.facts), q.id
        if q.answer_date is not None:
            assert answers[0].sent_at.date().isoformat() == q.answer_date, q.id


def test_across_sessions_questions_need_two_messages_from_different_sessions(history):
    by_ordinal = {m.ordinal: m for m in history.messages}
    across = [q for q in history.questions if q.kind == "across sessions"]
    assert across
    for q in across:
        first, second = (by_ordinal[a] for a in q.answers)
        assert second.sent_at - first.sent_at > timedelta(minutes=30), q.id
        assert not any(f in first.text for f in q.facts[1:]), q.id  # each holds a part only
        assert q.facts[0] not in second.text, q.id


def test_a_changed_fact_has_an_old_and_a_current_answer(history):
    by_ordinal = {m.ordinal: m for m in history.messages}
    changed = [q for q in history.questions if q.kind == "what is true now"]
    assert len(changed) == 2 * 4  # home and job in every conversation
    for q in changed:
        assert q.old_answers and q.old_facts and set(q.old_facts).isdisjoint(q.facts), q.id
        old = [by_ordinal[a] for a in q.old_answers]
        assert all(any(f in m.text for f in q.old_facts) for m in old), q.id
        assert max(m.sent_at for m in old) < min(by_ordinal[a].sent_at for a in q.answers), q.id


def test_histories_are_multi_session_two_person_and_months_long(history):
    conversations = Counter(m.conversation_id for m in history.messages)
    assert len(conversations) == 4
    assert all(140 <= n <= 330 for n in conversations.values()), conversations
    assert len({m.text for m in history.messages}) > len(history.messages) / 4  # varied filler
    for conv in conversations:
        msgs = [m for m in history.messages if m.conversation_id == conv]
        assert {m.sender for m in msgs if m.is_owner} == {OWNER}
        assert len({m.sender for m in msgs if not m.is_owner}) == 1
        assert msgs[-1].sent_at - msgs[0].sent_at >= timedelta(days=60)
        assert msgs[-1].sent_at.date() <= END
        sessions = 1 + sum(b.sent_at - a.sent_at > timedelta(minutes=30) for a, b in itertools.pairwise(msgs))
        assert sessions >= 5


def test_the_export_is_jsonl_the_importer_reads_with_message_ids(history, tmp_path):
    export, questions = write(history, tmp_path)
    records = [json.loads(line) for line in export.read_text().splitlines()]
    assert [r["message_id"] for r in records] == [str(m.ordinal) for m in history.messages]
    assert sum("conversation_title" in r for r in records) == 4
    assert datetime.fromisoformat(records[0]["sent_at"]).tzinfo is not None
    parsed = parse_export(export, "jsonl")
    assert len(parsed.messages) == len(history.messages)
    assert {i.handle for i in parsed.identities.values() if i.is_owner} == {OWNER}
    assert len(json.loads(questions.read_text())) == len(history.questions)


def test_a_message_cap_cuts_the_export_and_keeps_only_answerable_questions():
    capped = generate(1, seed=3, end=END, max_messages=1000)
    assert len(capped.messages) == 1000
    kept = {m.ordinal for m in capped.messages}
    assert all(set(q.answers) <= kept for q in capped.questions)
