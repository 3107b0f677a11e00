"""bench/chat_updates.py's generator: subjects whose values change, disagreements of one day,
questions nothing answers; and its scoring of a packet."""

from datetime import date

import pytest

from bench.chat_updates import SUBJECTS, UNANSWERABLE, blocks, generate, newest_first

AS_OF = date(2026, 12, 5)


@pytest.fixture(scope="module")
def corpus():
    return generate(31, AS_OF)


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another(corpus):
    assert generate(31, AS_OF) == corpus
    assert [m.text for m in generate(32, AS_OF).messages] != [m.text for m in corpus.messages]


def test_each_value_is_stated_in_order_once_and_only_in_its_own_message(corpus):
    by_ordinal = {m.ordinal: m for m in corpus.messages}
    updates = [q for q in corpus.questions if q.kind == "update"]
    assert len(updates) == len(SUBJECTS)
    for q in updates:
        assert 2 <= len(q.values) <= 3 and len(q.stated) == len(q.values)
        said = [by_ordinal[o] for o in q.stated]
        assert [m.sent_at for m in said] == sorted(m.sent_at for m in said), q.id
        for value, m in zip(q.values, said, strict=True):
            assert value in m.text, q.id
        # the newest value is told in its own message only
        assert [m.ordinal for m in corpus.messages if q.values[-1] in m.text] == [q.stated[-1]], q.id


def test_disagreements_are_two_conversations_of_one_day_and_the_rest_is_never_told(corpus):
    by_ordinal = {m.ordinal: m for m in corpus.messages}
    for q in (q for q in corpus.questions if q.kind == "disagreement"):
        a, b = (by_ordinal[o] for o in q.stated)
        assert a.sent_at.date() == b.sent_at.date() and a.conversation_id != b.conversation_id
        assert a.sender != b.sender
    asked = [q.question for q in corpus.questions if q.kind == "unanswerable"]
    assert asked == UNANSWERABLE
    text = " ".join(m.text for m in corpus.messages).casefold()
    for word in ("insurance", "blood", "accountant", "passport", "wifi", "niece", "sofa"):
        assert word not in text


def test_the_newest_first_is_the_first_block_showing_any_value():
    assert newest_first(["chatter", "from 300 ms to 250 ms", "300 ms"], ["300 ms", "250 ms"])
    assert not newest_first(["budget is 300 ms", "now 250 ms"], ["300 ms", "250 ms"])
    assert not newest_first(["nothing here"], ["300 ms", "250 ms"])


def test_the_packets_blocks_are_its_evidence_entries():
    text = "# Context\n\n## Evidence\n[1] a (later, x)\nline one\n\n[2] b\nline two\n\n## Provenance\n[1] chunk 1"
    assert [b.strip() for b in blocks(text)] == ["[1] a (later, x)\nline one", "[2] b\nline two"]
