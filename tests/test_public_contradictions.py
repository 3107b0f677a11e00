"""bench/public_contradictions.py's memory: each case a conversation, the correction after the gap."""

from datetime import UTC, datetime

import pytest

from bench.public_contradictions import GAPS, OWNER, corpus

CASES = [
    {"case_id": "c-1", "subject": "meeting time", "initial_fact": "My meeting is at 2pm on Friday.",
     "contradicting_fact": "Correction: the meeting moved to 3pm on Friday.",
     "query": "What time is my meeting?", "initial_value": "2pm", "updated_value": "3pm"},
    {"case_id": "c-2", "subject": "team lead", "initial_fact": "Priya is the lead on the payments team.",
     "contradicting_fact": "Leadership changed. Sam is now the lead.",
     "query": "Who leads the payments team?", "initial_value": "Priya", "updated_value": "Sam"},
]  # fmt: skip
NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)


@pytest.mark.parametrize("gap", sorted(GAPS))
def test_each_case_is_a_conversation_whose_correction_follows_after_the_gap(gap):
    messages, questions = corpus(CASES, GAPS[gap], NOW)
    assert [q.values for q in questions] == [["2pm", "3pm"], ["Priya", "Sam"]]
    for case, q in zip(CASES, questions, strict=True):
        mine = [m for m in messages if m.conversation_id == case["case_id"]]
        said = [m for m in mine if m.is_owner]
        assert [m.text for m in said] == [case["initial_fact"], case["contradicting_fact"]]
        assert said[1].sent_at - said[0].sent_at == GAPS[gap]
        assert all(m.sent_at < NOW for m in mine)
        # each value is in its own statement only, never in a sender's name or a reply
        for value, m in zip(q.values, said, strict=True):
            assert [x.ordinal for x in messages if value in f"{x.sender}: {x.text}"] == [m.ordinal]
    assert not any(v in OWNER for q in questions for v in q.values)
    assert len({m.ordinal for m in messages}) == len(messages) == 4 * len(CASES)
