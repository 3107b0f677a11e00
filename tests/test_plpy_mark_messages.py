"""plpy/mark_messages.py as plain Python, over a fake `plpy` that answers its reads and records
its writes: which chat messages exo_private.mark_messages marks, and with what."""

from __future__ import annotations

import json

from support.plpy import FakePlpy, load

marking = load("mark_messages")

CUES = ["funeral", "passed away"]
DEFERRED = [{"subject": "Walter Rivera", "aliases": ["Grandpa"]}]
WALTER = {"subject": "Walter Rivera", "rule": "cue 'funeral' with 'Grandpa'"}


def fake(conversations, messages, deferred=DEFERRED):
    """conversations: rows of CONVERSATIONS; messages: {conversation id: [(id, line, charged)]}."""
    return FakePlpy(
        {
            marking.DEFERENCE_CUES: [{"v": json.dumps(CUES)}],
            marking.DEFERENCE_LIST: [{"v": json.dumps(deferred)}],
            marking.CONVERSATIONS: conversations,
            marking.MESSAGES: lambda args: [
                {"id": i, "line": line, "charged": charged} for i, line, charged in messages.get(args[0], [])
            ],
        },
        [marking.UPDATE_MESSAGES, marking.FLAG_OPEN_INDEX],
    )


def written(plpy):
    """{message id: marks} of every update."""
    return {
        i: json.loads(marks)
        for ids, values in plpy.statements(marking.UPDATE_MESSAGES)
        for i, marks in zip(ids, values, strict=True)
    }


def test_a_cue_and_a_name_in_neighbouring_messages_mark_both_and_no_other():
    plpy = fake(
        [{"id": 1, "title": None}],
        {1: [(10, "Ana: the funeral is on Friday", "[]"),
             (11, "Me: I will drive Grandpa's car", "[]"),
             (12, "Ana: see you at the harbour", "[]"),
             (13, "Me: and bring the thermos", "[]")]},
    )  # fmt: skip
    assert marking.run(plpy, True) == 2
    assert written(plpy) == {10: [WALTER], 11: [WALTER]}
    # marked before for nothing, charged now: the open index still counts them, once flagged
    assert len(plpy.statements(marking.FLAG_OPEN_INDEX)) == 1


def test_a_message_never_marked_is_written_even_without_marks_and_an_unchanged_one_is_not():
    plpy = fake(
        [{"id": 1, "title": None}],
        {1: [(10, "Ana: hello", None), (11, "Me: hi", "[]"), (12, "Ana: how are you", None)]},
    )
    assert marking.run(plpy, False) == 2
    assert written(plpy) == {10: [], 12: []}
    assert plpy.statements(marking.FLAG_OPEN_INDEX) == []


def test_marks_that_went_away_are_cleared_and_a_conversation_with_no_change_writes_nothing():
    plpy = fake(
        [{"id": 1, "title": None}, {"id": 2, "title": None}],
        {1: [(10, "Ana: Grandpa called", json.dumps([WALTER]))], 2: [(20, "Me: fine", "[]")]},
    )
    assert marking.run(plpy, True) == 1
    assert plpy.statements(marking.UPDATE_MESSAGES) == [[[10], ["[]"]]]  # one statement, conversation 1's
    assert plpy.statements(marking.FLAG_OPEN_INDEX) == []  # a message that is charged no more enters it


def test_the_title_of_the_conversation_counts_with_every_message():
    plpy = fake([{"id": 1, "title": "Grandpa"}], {1: [(10, "Ana: the funeral is on Friday", "[]")]})
    assert marking.run(plpy, True) == 1
    assert [m["subject"] for m in written(plpy)[10]] == ["Walter Rivera"]


def test_without_deferred_subjects_nothing_is_charged():
    plpy = fake([{"id": 1, "title": None}],
                {1: [(10, "Ana: the funeral of Grandpa", json.dumps([WALTER]))]}, deferred=[])  # fmt: skip
    assert marking.run(plpy, True) == 1
    assert written(plpy) == {10: []}


def test_every_conversation_is_passed_on_and_conversations_come_a_batch_at_a_time():
    conversations = [{"id": i, "title": None} for i in range(1, 251)]
    plpy = fake(conversations, {i: [(i * 10, "Ana: hello", None)] for i in range(1, 251)})
    assert marking.run(plpy, False) == 250
    assert plpy.statements(marking.CONVERSATIONS) == [[False]]
    assert plpy.statements(marking.MESSAGES) == [[i] for i in range(1, 251)]
    assert plpy.cursors[0].fetches == 4  # 100, 100, 50, then none


def test_changed_marks_keeps_the_order_of_the_messages():
    rows = [{"id": 3, "charged": None}, {"id": 1, "charged": "[]"}, {"id": 2, "charged": "[]"}]
    ids, values = marking.changed_marks(rows, [[], [], [WALTER]])
    assert (ids, [json.loads(v) for v in values]) == ([3, 2], [[], [WALTER]])


def test_a_message_charged_as_it_is_first_marked_flags_nothing():
    """An import marks its messages in its own transaction: never marked, they were never in the
    open index (it holds marked messages only)."""
    plpy = fake([{"id": 1, "title": None}], {1: [(10, "Ana: the funeral of Grandpa", None)]})
    assert marking.run(plpy, False) == 1
    assert written(plpy) == {10: [WALTER]} and plpy.statements(marking.FLAG_OPEN_INDEX) == []
