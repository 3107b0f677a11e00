"""exo_private.remark_charged: the deference marks of every chunk and message, worked out again.

`run(plpy)` is the whole function, run after the deference list changed. The chunks keep their
text, ids, vectors and graph mentions: only the marks change. A document's chunks are judged
together, in order (deference.document_marks); then the chat messages by the same rule, in place
(exo_private.mark_messages); then each chat window (a chunk of a conversation document) carries
the union of its messages' marks (chat_windows.window_marks). A workspace where a chunk is
charged now, and was not, gets its open BM25 index rebuilt (the index still counts the old row
in its statistics); when any chunk changed, the capsules are queued (one citing a chunk charged
now is withheld until rebuilt without it). `documents` and `stale_marks` decide; the rest are
one statement each.
"""

import json

from chat_windows import window_marks
from deference import deference_rules, document_marks

CHUNKS = (
    "select c.document_id, c.workspace, c.id, c.body, c.charged::text as charged, "
    "d.frontmatter::text as frontmatter, d.title, d.path "
    "from exo_private.chunks c join exo_private.documents d on d.id = c.document_id "
    "where d.conversation_id is null "
    "order by c.document_id, c.ordinal"
)
UPDATE_CHUNK = (
    "update exo_private.chunks set charged = $3::jsonb, "
    "charged_subjects = array(select m ->> 'subject' from jsonb_array_elements($3::jsonb) m) "
    "where workspace = $1 and id = $2"
)
MARK_MESSAGES = "select exo_private.mark_messages(true)"
WINDOWS = (
    "select w.workspace, w.chunk_id as id, c.charged::text as charged, "
    "       (select json_agg(coalesce(m.charged, '[]') order by u.ord) "
    "        from unnest(w.message_ids) with ordinality u (id, ord) "
    "        join exo_private.chat_messages m on m.id = u.id)::text as messages "
    "from exo_private.chat_windows w "
    "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id"
)
# The rebuild runs once this transaction is over (exo_private.rebuild_open_indexes).
FLAG_OPEN_INDEX = "select exo_private.flag_open_index(format('chunks_%s_bm25_open', $1::text), $1)"
QUEUE_CAPSULES = "select exo_private.queue_capsules()"
FETCH_ROWS = 500


def run(plpy):
    """Mark every chunk and message again; returns how many chunks changed."""
    subjects, cues = deference_rules(plpy)
    update = plpy.prepare(UPDATE_CHUNK, ["text", "bigint", "text"])
    newly_charged = set()

    def mark(row, new):
        plpy.execute(update, [row["workspace"], row["id"], json.dumps(new)])
        if new and not json.loads(row["charged"]):
            newly_charged.add(row["workspace"])

    changed = 0
    for rows in documents(plpy.cursor(CHUNKS)):
        marks = document_marks(
            [r["body"] for r in rows], rows[0]["title"], rows[0]["path"],
            json.loads(rows[0]["frontmatter"] or "{}"), subjects, cues,
        )  # fmt: skip
        for row, new in stale_marks(rows, marks):
            mark(row, new)
            changed += 1
    plpy.execute(MARK_MESSAGES)
    windows = plpy.cursor(WINDOWS)
    while True:
        rows = windows.fetch(FETCH_ROWS)
        if not rows:
            break
        for row in rows:
            marks = window_marks(json.loads(row["messages"] or "[]"))
            if marks != json.loads(row["charged"]):
                mark(row, marks)
                changed += 1
    flag = plpy.prepare(FLAG_OPEN_INDEX, ["text"])
    for workspace in sorted(newly_charged):
        plpy.execute(flag, [workspace])
    if changed:
        plpy.execute(QUEUE_CAPSULES)
    return changed


def documents(cursor):
    """The rows of CHUNKS (by document, in order), one document's rows at a time, though a
    document runs across fetches."""
    document = []
    while True:
        rows = cursor.fetch(FETCH_ROWS)
        if not rows:
            break
        for row in rows:
            if document and row["document_id"] != document[0]["document_id"]:
                yield document
                document = []
            document.append(row)
    if document:
        yield document


def stale_marks(rows, marks):
    """[(row, marks)] for the chunks whose new marks differ from those they carry."""
    return [(row, new) for row, new in zip(rows, marks, strict=False) if new != json.loads(row["charged"])]
