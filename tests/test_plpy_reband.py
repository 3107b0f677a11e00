"""plpy/reband.py as plain Python, over a fake `plpy` that answers its reads and records its
writes: which documents and chunks exo_private.reband moves, and what it says why."""

from __future__ import annotations

import json

from support.plpy import FakePlpy, load

reband = load("reband")

SETTINGS = [
    {"key": "banding.current_days", "value": "30"},
    {"key": "banding.recent_days", "value": "365"},
]
SETTINGS_READ = "select key, value::text from exo_private.settings where key like 'banding.%'"
TODAY = "2026-12-01"
WRITES = (reband.UPDATE_DOCUMENT, reband.UPDATE_CHUNKS, reband.UPDATE_CHUNK)


def fake(documents=(), conversations=()):
    return FakePlpy(
        {
            SETTINGS_READ: SETTINGS,
            reband.DOCUMENTS: list(documents),
            reband.CONVERSATIONS: list(conversations),
        },
        WRITES,
    )


def document(i, band, written_at, canonical=False):
    return {"id": i, "band": band, "written_at": written_at, "canonical": canonical}


def conversation(i, band, *chunks):
    """A row of CONVERSATIONS: chunks (id, band, written_at or None) in workspace personal."""
    rows = [{"workspace": "personal", "id": c, "band": b, "written_at": w} for c, b, w in chunks]
    return {"id": i, "band": band, "chunks": json.dumps(rows)}


def test_a_document_that_aged_into_another_band_moves_with_its_chunks():
    plpy = fake([
        document(1, "current", "2026-10-01"),  # 61 days: recent now
        document(2, "recent", "2026-10-01"),  # already recent
        document(3, "recent", "2025-06-01"),  # over a year: archival
    ])  # fmt: skip
    assert reband.run(plpy, TODAY) == 2
    moved = plpy.statements(reband.UPDATE_DOCUMENT)
    assert [(d[0], d[1]) for d in moved] == [(1, "recent"), (3, "archival")]
    assert moved[0][2] == "written 2026-10-01, 61 days ago; re-banded 2026-12-01"
    assert plpy.statements(reband.UPDATE_CHUNKS) == [[1, "recent"], [3, "archival"]]


def test_a_canonical_document_is_never_demoted_and_a_demoted_one_comes_back():
    plpy = fake([document(1, "current", "2020-01-01", canonical=True),
                 document(2, "archival", "2020-01-01", canonical=True)])  # fmt: skip
    assert reband.run(plpy, TODAY) == 1
    ((doc, band, reason),) = plpy.statements(reband.UPDATE_DOCUMENT)
    assert (doc, band) == (2, "current") and "canonical document" in reason


def test_the_settings_decide_the_bands():
    plpy = fake([document(1, "current", "2026-11-20")])
    plpy.reads[SETTINGS_READ] = [{"key": "banding.current_days", "value": "7"},
                                 {"key": "banding.recent_days", "value": "10"}]  # fmt: skip
    assert reband.run(plpy, TODAY) == 1
    assert plpy.statements(reband.UPDATE_CHUNKS) == [[1, "archival"]]


def test_nothing_that_changed_writes_nothing():
    plpy = fake(
        [document(1, "current", "2026-11-30")],
        [conversation(9, "current", (90, "current", "2026-11-30"), (91, "current", None))],
    )
    assert reband.run(plpy, TODAY) == 0
    assert [text for text, _ in plpy.ran if text in WRITES] == []


def test_a_conversation_bands_each_window_by_its_own_date_and_the_document_by_the_newest():
    plpy = fake(conversations=[conversation(
        9, "current",
        (90, "current", "2025-01-10"),  # archival now
        (91, "current", "2026-10-01"),  # the newest: recent
        (92, "current", None),  # undated: the document's band
        (93, "recent", "2026-09-15"),  # still recent
    )])  # fmt: skip
    assert reband.run(plpy, TODAY) == 1  # one document, however many of its windows moved
    assert plpy.statements(reband.UPDATE_CHUNK) == [
        ["personal", 90, "archival"],
        ["personal", 91, "recent"],
        ["personal", 92, "recent"],
    ]
    ((doc, band, reason),) = plpy.statements(reband.UPDATE_DOCUMENT)
    assert (doc, band) == (9, "recent")
    assert reason == (
        "written 2026-10-01 (first message of the window), 61 days ago (the newest window); re-banded 2026-12-01"
    )
    assert plpy.statements(reband.UPDATE_CHUNKS) == []  # a conversation's chunks move one by one


def test_a_conversation_whose_windows_moved_but_not_its_band_counts_once_and_keeps_its_band():
    plpy = fake(conversations=[conversation(9, "current", (90, "current", "2025-01-10"),
                                            (91, "current", "2026-11-30"))])  # fmt: skip
    assert reband.run(plpy, TODAY) == 1
    assert plpy.statements(reband.UPDATE_CHUNK) == [["personal", 90, "archival"]]
    assert plpy.statements(reband.UPDATE_DOCUMENT) == []


def test_an_undated_conversation_is_current():
    plpy = fake(conversations=[conversation(9, "archival", (90, "archival", None), (91, "recent", None))])
    assert reband.run(plpy, TODAY) == 1
    assert plpy.statements(reband.UPDATE_CHUNK) == [["personal", 90, "current"], ["personal", 91, "current"]]
    assert plpy.statements(reband.UPDATE_DOCUMENT) == [
        [9, "current", "undated conversation; re-banded 2026-12-01"]
    ]


def test_the_newest_window_is_found_by_its_date_not_its_place():
    bands, band, reason = reband.conversation_bands(
        [{"written_at": "2026-11-25"}, {"written_at": "2025-01-10"}, {"written_at": None}],
        reband.datetime.date(2026, 12, 1), 30, 365,
    )  # fmt: skip
    assert (bands, band) == (["current", "archival", "current"], "current")
    assert reason.startswith("written 2026-11-25 ")
