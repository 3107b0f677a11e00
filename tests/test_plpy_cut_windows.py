"""plpy/cut_windows.py as plain Python, over a fake `plpy` that answers its reads and records
its writes: what exo_private.cut_windows does to a conversation's document and windows."""

from __future__ import annotations

import json

import pytest
from support.plpy import load

cut = load("cut_windows")

SETTINGS = {
    "chat.session_gap_minutes": 60,
    "chat.window_max_chars": 120,
    "chat.window_overlap_messages": 0,
    "banding.current_days": 30,
    "banding.recent_days": 365,
}
TODAY = "2026-12-01"


def message(i, sender, body, local, owner=False, charged=()):
    """A row as MESSAGES gives it: local 'YYYY-MM-DD HH:MM' (None: undated)."""
    ns = None
    if local is not None:
        day, clock = local.split()
        ns = (int(day.replace("-", "")) * 10_000 + int(clock.replace(":", ""))) * 60 * 10**9
    return {
        "id": i, "sender": sender, "body": body, "ns": ns, "local": local,
        "sent_at": None if local is None else local + ":00+00", "charged": json.dumps(list(charged)),
        "is_owner": owner,
    }  # fmt: skip


class Plan:
    def __init__(self, text: str, types: list[str]):
        self.text, self.types = text, types


class FakePlpy:
    """Answers cut_windows' reads from the conversation given; records every other statement."""

    def __init__(self, messages, document=None, stored=(), title=None):
        self.messages, self.document, self.stored, self.title = messages, document, list(stored), title
        self.written: list[tuple[str, list]] = []

    def prepare(self, text, types):
        return Plan(text, types)

    def execute(self, plan, args=None):
        text = plan.text if isinstance(plan, Plan) else plan
        answers = {
            cut.SETTINGS: [{"key": k, "value": json.dumps(v)} for k, v in SETTINGS.items()],
            cut.CONVERSATION: [{"id": 7, "source": "jsonl", "external_id": "c7", "title": self.title}],
            cut.DOCUMENT: [self.document] if self.document else [],
            cut.MESSAGES: [dict(m) for m in self.messages],
            "select current_date::text as d": [{"d": TODAY}],
            cut.OLD_WINDOWS: self.stored,
            cut.INSERT_DOCUMENT: [{"id": 70}],
        }
        if text in answers:
            if text == cut.INSERT_DOCUMENT:
                self.written.append((text, args))
            return answers[text]
        self.written.append((text, args))
        return []

    def statements(self, text):
        return [args for written, args in self.written if written == text]


MESSAGES = [  # in MESSAGES' order: by time
    message(4, "Ana", "Old photo from the trip", "2024-05-02 18:00"),
    message(1, "Ana", "Are we still on for the harbour walk?", "2026-11-28 09:00"),
    message(2, "Me", "Yes, ten o'clock at the pier.", "2026-11-28 09:05", owner=True),
    message(3, "Ana", "Bring the thermos, it is cold out there.", "2026-11-28 09:07"),
]


def first_cut(messages=MESSAGES):
    plpy = FakePlpy(messages)
    added = cut.run(plpy, 7, "personal", "UTC")
    return plpy, added


def stored_windows(plpy):
    """The windows the first cut inserted, as OLD_WINDOWS gives them back on the next call."""
    (args,) = plpy.statements(cut.INSERT_WINDOWS)
    ordinals, bodies, message_ids = args[3], args[4], args[10]
    return [
        {"chunk_id": 100 + o, "body": body, "message_ids": json.loads(ids), "window_id": 200 + o}
        for o, body, ids in zip(ordinals, bodies, message_ids, strict=True)
    ]


def test_a_new_conversation_gets_its_document_and_every_window_queued():
    plpy, added = first_cut()
    (document,) = plpy.statements(cut.INSERT_DOCUMENT)
    assert document[:3] == [7, "chat/jsonl/c7", "Chat with Ana"]
    (inserted,) = plpy.statements(cut.INSERT_WINDOWS)
    assert added == len(inserted[3]) >= 2  # the two days are two sessions
    assert inserted[:3] == ["personal", 70, 7]
    # The 2024 window is archival by its first message; the document takes its newest window's band.
    assert dict(zip(inserted[8], inserted[7], strict=True))["2024-05-02"] == "archival"
    (update,) = plpy.statements(cut.UPDATE_DOCUMENT)
    assert update[0] == 70 and update[5] == "current" and update[-1] is True
    assert plpy.statements("select exo_private.advance_stages(array[$1])") == [[70]]
    assert plpy.statements(cut.DELETE_CHUNKS) == []


def test_cutting_again_unchanged_keeps_every_chunk_and_adds_nothing():
    stored = stored_windows(first_cut()[0])
    plpy = FakePlpy(MESSAGES, document={"id": 70, "workspace": "personal"}, stored=stored)
    assert cut.run(plpy, 7, "personal", "UTC") == 0
    assert plpy.statements(cut.INSERT_WINDOWS) == plpy.statements(cut.DELETE_CHUNKS) == []
    (moved,) = plpy.statements(cut.UPDATE_CHUNKS)
    assert sorted(moved[1]) == sorted(w["chunk_id"] for w in stored)
    assert plpy.statements(cut.UPDATE_DOCUMENT)[0][-1] is False  # the stage stays
    assert plpy.statements("select exo_private.advance_stages(array[$1])") == []


def test_an_edited_message_replaces_only_its_window():
    stored = stored_windows(first_cut()[0])
    edited = [message(4, "Ana", "Old photo from the trip, 2024", "2024-05-02 18:00"), *MESSAGES[1:]]
    plpy = FakePlpy(edited, document={"id": 70, "workspace": "personal"}, stored=stored)
    assert cut.run(plpy, 7, "personal", "UTC") == 1
    gone = [w for w in stored if 4 in w["message_ids"]]
    assert plpy.statements(cut.DELETE_CHUNKS) == [["personal", [w["chunk_id"] for w in gone]]]
    assert plpy.statements(cut.DELETE_EXTRACTION_WINDOWS) == [[[w["window_id"] for w in gone]]]


def test_moving_to_another_workspace_clears_what_was_derived_first():
    plpy = FakePlpy(MESSAGES, document={"id": 70, "workspace": "personal"})
    cut.run(plpy, 7, "creative", "UTC")
    assert plpy.written[0] == ("select exo_private.clear_derived($1)", [70])


@pytest.mark.parametrize(
    ("messages", "band", "reason"),
    [
        ([message(1, "Ana", "no date on this one", None)], "current", "undated conversation"),
        ([message(1, "Ana", "long ago", "2020-01-01 10:00")], "archival", "(the newest window)"),
    ],
)
def test_an_undated_or_old_conversation_is_banded_by_what_it_has(messages, band, reason):
    plpy, _ = first_cut(messages)
    (update,) = plpy.statements(cut.UPDATE_DOCUMENT)
    assert update[5] == band and update[6].endswith(reason)
    assert plpy.statements(cut.INSERT_WINDOWS)[0][7] == [band]


def test_a_window_carries_the_union_of_its_messages_marks():
    marks = [{"subject": "walter", "how": "name"}]
    plpy, _ = first_cut([message(1, "Ana", "Walter called", "2026-11-28 09:00", charged=marks),
                         message(2, "Ana", "again", "2026-11-28 09:01")])  # fmt: skip
    (inserted,) = plpy.statements(cut.INSERT_WINDOWS)
    assert [m["subject"] for m in json.loads(inserted[9][0])] == ["walter"]
