"""The generated histories of bench/chat_eras.py (no database): deterministic, every question's
expected text in exactly one message, both kinds asked, and each history within its era's band."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from bench.chat_eras import CURRENT_DAYS, RECENT_DAYS, generate, write
from exocortex.ingest.chat import parse_export

AS_OF = date(2026, 12, 5)


@pytest.fixture(scope="module")
def eras():
    return generate(seed=29, as_of=AS_OF)


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def test_the_same_seed_gives_the_same_histories_and_another_seed_others(eras):
    again = generate(seed=29, as_of=AS_OF)
    assert again.messages == eras.messages
    assert again.questions == eras.questions
    other = generate(seed=30, as_of=AS_OF)
    assert [m.text for m in other.messages] != [m.text for m in eras.messages]


def test_the_defaults_make_ten_histories_of_150_to_300_messages_and_150_questions(eras):
    sizes = Counter(m.conversation_id for m in eras.messages)
    assert len(sizes) == 10
    assert all(150 <= n <= 300 for n in sizes.values()), sizes
    assert [m.ordinal for m in eras.messages] == list(range(1, len(eras.messages) + 1))
    assert len(eras.questions) == 150
    assert all(len({m.sender for m in eras.messages if m.conversation_id == c}) == 2 for c in sizes)


def test_each_expected_text_is_in_exactly_one_message_the_one_the_question_names(eras):
    texts = [fold(m.text) for m in eras.messages]
    for q in eras.questions:
        (expect,) = q.facts
        holding = [i + 1 for i, t in enumerate(texts) if fold(expect) in t]
        assert holding == q.answers, q.id
        assert eras.messages[q.answers[0] - 1].conversation_id == q.conversation_id
        assert fold(q.question) != fold(expect)


def test_old_and_recent_questions_are_both_asked_mostly_old(eras):
    kinds = Counter(q.kind for q in eras.questions)
    assert set(kinds) == {"old", "recent"}
    assert kinds["old"] > kinds["recent"] > 0


def test_histories_fall_in_their_eras_bands_and_kinds_follow_the_evidence_age(eras):
    assert set(eras.eras.values()) == {"archival", "recent", "current"}
    for conversation, era in eras.eras.items():
        ages = [(AS_OF - m.sent_at.date()).days for m in eras.messages if m.conversation_id == conversation]
        assert min(ages) >= 1, "nothing after as_of"
        if era == "archival":
            assert min(ages) > RECENT_DAYS
            assert max(ages) < 5 * 365
        elif era == "recent":
            assert min(ages) > CURRENT_DAYS and max(ages) <= RECENT_DAYS
        else:
            assert min(ages) <= CURRENT_DAYS < max(ages) <= RECENT_DAYS
    for q in eras.questions:
        age = (AS_OF - eras.messages[q.answers[0] - 1].sent_at.date()).days
        assert q.kind == ("old" if age > RECENT_DAYS else "recent"), q.id
        assert (eras.eras[q.conversation_id] == "archival") == (q.kind == "old")


def test_other_band_settings_move_the_histories():
    eras = generate(pairs=4, questions=20, seed=1, as_of=AS_OF, current_days=30, recent_days=200)
    for conversation, era in eras.eras.items():
        ages = [(AS_OF - m.sent_at.date()).days for m in eras.messages if m.conversation_id == conversation]
        assert (min(ages) > 200) == (era == "archival")


def test_recent_histories_chatter_about_the_old_peoples_names(eras):
    old_people = {m.sender for m in eras.messages if eras.eras[m.conversation_id] == "archival"}
    recent = [m.text for m in eras.messages if eras.eras[m.conversation_id] != "archival"]
    mentioned = {p for p in old_people if any(p in t for t in recent)}
    assert len(mentioned) >= len(old_people) // 2


def test_the_export_is_read_by_the_importer(eras, tmp_path):
    export = write(eras, tmp_path)
    parsed = parse_export(export, "jsonl")
    assert len(parsed.messages) == len(eras.messages)
    assert len(parsed.conversations) == 10
    assert (tmp_path / "questions.json").exists()
