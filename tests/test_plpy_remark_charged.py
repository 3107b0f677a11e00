"""plpy/remark_charged.py as plain Python, over a fake `plpy` that answers its reads and records
its writes: which chunks exo_private.remark_charged marks again, and what else it sets off."""

from __future__ import annotations

import json

from support.plpy import Cursor, FakePlpy, load

remark = load("remark_charged")

CUES = ["funeral"]
DEFERRED = [{"subject": "Walter Rivera", "aliases": ["Grandpa"]}]
CUE = {"subject": "Walter Rivera", "rule": "cue 'funeral' with 'Grandpa'"}
OTHER = {"subject": "Ines", "rule": "frontmatter"}
WRITES = (remark.UPDATE_CHUNK, remark.MARK_MESSAGES, remark.FLAG_OPEN_INDEX, remark.QUEUE_CAPSULES)


def chunk(document_id, i, body, charged=(), workspace="personal", title=None, path=None, frontmatter=None):
    """A row of CHUNKS (path default: notes/<document_id>.md)."""
    return {
        "document_id": document_id, "workspace": workspace, "id": i, "body": body,
        "charged": json.dumps(list(charged)), "frontmatter": None if frontmatter is None else json.dumps(frontmatter),
        "title": title, "path": path or f"notes/{document_id}.md",
    }  # fmt: skip


def window(i, charged, *messages, workspace="personal"):
    """A row of WINDOWS: the window's marks, and its messages' (None: the window has no messages left)."""
    return {
        "workspace": workspace, "id": i, "charged": json.dumps(list(charged)),
        "messages": None if messages == (None,) else json.dumps([list(m) for m in messages]),
    }  # fmt: skip


def fake(chunks=(), windows=()):
    return FakePlpy(
        {
            remark.DEFERENCE_CUES: [{"v": json.dumps(CUES)}],
            remark.DEFERENCE_LIST: [{"v": json.dumps(DEFERRED)}],
            remark.CHUNKS: list(chunks),
            remark.WINDOWS: list(windows),
        },
        WRITES,
    )


def marked(plpy):
    """{(workspace, chunk id): [subjects]} of every chunk update."""
    return {
        (ws, i): [m["subject"] for m in json.loads(marks)]
        for ws, i, marks in plpy.statements(remark.UPDATE_CHUNK)
    }


def test_a_document_is_judged_whole_and_only_stale_chunks_are_written():
    plpy = fake([
        chunk(1, 10, "At the funeral Grandpa's brother spoke."),
        chunk(1, 11, "He told of the war."),  # he, right after a charged chunk
        chunk(1, 12, "The weather was fine."),
        chunk(2, 20, "Nothing to see here.", charged=[OTHER]),  # the frontmatter no longer says so
        chunk(2, 21, "Still nothing."),
    ])  # fmt: skip
    assert remark.run(plpy) == 3
    assert marked(plpy) == {("personal", 10): ["Walter Rivera"], ("personal", 11): ["Walter Rivera"],
                            ("personal", 20): []}  # fmt: skip
    assert plpy.statements(remark.FLAG_OPEN_INDEX) == [["personal"]]
    assert plpy.statements(remark.QUEUE_CAPSULES) == [None]


def test_the_title_and_frontmatter_head_every_chunk():
    plpy = fake([
        chunk(1, 10, "A walk by the sea.", title="Grandpa", frontmatter={"tags": ["funeral"]}),
        chunk(1, 11, "Tea afterwards.", title="Grandpa", frontmatter={"tags": ["funeral"]}),
        chunk(2, 20, "Declared.", frontmatter={"charged": ["Ines"]}, charged=[OTHER]),
    ])  # fmt: skip
    assert remark.run(plpy) == 2
    assert marked(plpy) == {("personal", 10): ["Walter Rivera"], ("personal", 11): ["Walter Rivera"]}


def test_a_document_across_fetches_is_still_judged_whole():
    # The name and cue are in the document's first chunk; its 600th names "Walter" alone, in the
    # second fetch of 500 rows: charged because the document is.
    rows = [chunk(1, 1, "The funeral of Grandpa.")]
    rows += [chunk(1, i, "A line.") for i in range(2, 600)] + [chunk(1, 600, "Walter's hat.")]
    rows += [chunk(2, 700, "Walter's other hat.")]  # another document: a name alone is no charge
    plpy = fake(rows)
    assert remark.run(plpy) == 2
    assert set(marked(plpy)) == {("personal", 1), ("personal", 600)}
    assert plpy.cursors[0].fetches == 3


def test_only_a_workspace_where_a_chunk_is_charged_now_and_was_not_is_flagged_once_each():
    plpy = fake([
        chunk(1, 10, "The funeral of Grandpa.", workspace="work"),
        chunk(2, 20, "Grandpa at the funeral.", workspace="family"),
        chunk(3, 30, "Grandpa at the funeral again.", workspace="family"),
        chunk(4, 40, "Grandpa's funeral.", charged=[OTHER], workspace="old"),  # charged before: not flagged
        chunk(5, 50, "Nothing.", charged=[CUE], workspace="cleared"),  # uncharged: not flagged
    ])  # fmt: skip
    assert remark.run(plpy) == 5
    assert plpy.statements(remark.FLAG_OPEN_INDEX) == [["family"], ["work"]]  # sorted


def test_messages_are_marked_before_windows_take_the_union_of_their_messages_marks():
    plpy = fake(windows=[
        window(90, [], [CUE], [], [CUE, OTHER]),  # newly charged
        window(91, [CUE], [CUE]),  # unchanged
        window(92, [CUE, OTHER], [], [], workspace="creative"),  # cleared
        window(93, [CUE], None),  # no messages left
        window(94, [OTHER, CUE], [CUE], [OTHER]),  # the same marks, another order: written
    ])  # fmt: skip
    assert remark.run(plpy) == 4
    assert marked(plpy) == {("personal", 90): ["Walter Rivera", "Ines"], ("creative", 92): [],
                            ("personal", 93): [], ("personal", 94): ["Walter Rivera", "Ines"]}  # fmt: skip
    order = plpy.order()
    assert order.index(remark.CHUNKS) < order.index(remark.MARK_MESSAGES) < order.index(remark.WINDOWS)
    assert plpy.statements(remark.FLAG_OPEN_INDEX) == [["personal"]]


def test_nothing_changed_queues_no_capsules_and_flags_nothing():
    plpy = fake([chunk(1, 10, "The weather.")], [window(90, [CUE], [CUE])])
    assert remark.run(plpy) == 0
    assert plpy.statements(remark.UPDATE_CHUNK) == plpy.statements(remark.QUEUE_CAPSULES) == []
    assert plpy.statements(remark.FLAG_OPEN_INDEX) == []
    assert plpy.statements(remark.MARK_MESSAGES) == [None]  # the messages are marked all the same


def test_documents_groups_rows_by_document_in_order_across_fetches(monkeypatch):
    monkeypatch.setattr(remark, "FETCH_ROWS", 2)
    cursor = Cursor([{"document_id": d} for d in (1, 1, 2, 3, 3, 3)])
    assert [[r["document_id"] for r in d] for d in remark.documents(cursor)] == [[1, 1], [2], [3, 3, 3]]
    assert cursor.fetches == 4
    assert list(remark.documents(Cursor([]))) == []
