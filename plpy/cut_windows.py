"""exo_private.cut_windows: a conversation cut into windows, kept as chunks of its document.

`run(plpy, conversation, ws, zone)` is the whole function: it reads the conversation's messages
(times in zone), plans the windows (chat_windows.plan), dates, bands and marks each, then
brings the conversation's document and its chunks up to date in ws. A window whose messages
and text are unchanged keeps its chunk (vector, mentions) and gets its ordinal, marks and band
in place; a new one is inserted with its chat_windows row and extraction window and queued for
embed and extract; a gone one is deleted. The steps that decide (`dated_windows`, `title_of`,
`document_fields`, `partition`) are plain functions; the rest are one statement each.
"""

import datetime
import json

from banding import band_by_age
from chat_windows import plan, window_marks

SETTINGS = "select key, value::text from exo_private.settings where key like 'chat.%' or key like 'banding.%'"
CONVERSATION = "select id, source, external_id, title from exo_private.chat_conversations where id = $1"
DOCUMENT = "select id, workspace from exo_private.documents where conversation_id = $1 for update"
MESSAGES = (
    "select m.id, coalesce(i.display_name, p.display_name, i.handle) as sender, m.body, "
    "       (extract(epoch from m.sent_at) * 1000000000)::bigint as ns, "
    "       to_char(m.sent_at at time zone $2, 'YYYY-MM-DD HH24:MI') as local, "
    "       m.sent_at::text as sent_at, coalesce(m.charged, '[]')::text as charged, "
    "       coalesce(p.is_owner, false) as is_owner "
    "from exo_private.chat_messages m "
    "join exo_private.chat_identities i on i.id = m.identity_id "
    "left join exo_private.people p on p.id = i.person_id "
    "where m.conversation_id = $1 "
    "order by m.sent_at nulls last, m.id"
)
INSERT_DOCUMENT = (
    "insert into exo_private.documents (conversation_id, path, path_bytes, extension, title, "
    "  size_bytes, mtime_ns, written_at, band, band_reason, workspace, route, band_source, stage) "
    "values ($1, $2, convert_to($2, 'UTF8'), 'chat', $3, $4, $5, $6::date, $7::exo_private.band, $8, "
    "        $9, $10::jsonb, 'inferred', 'chunked') "
    "returning id"
)
FIELD_TYPES = ["text", "bigint", "bigint", "text", "text", "text", "text", "text"]
OLD_WINDOWS = (
    "select w.chunk_id, c.body, w.message_ids, x.id as window_id "
    "from exo_private.chat_windows w "
    "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
    "left join exo_private.extraction_windows x on x.document_id = c.document_id "
    "     and x.ordinal = c.ordinal "
    "where w.conversation_id = $1"
)
DELETE_CHUNKS = "delete from exo_private.chunks where workspace = $1 and id = any ($2)"
DELETE_EXTRACTION_WINDOWS = "delete from exo_private.extraction_windows where id = any ($1)"
# Ordinals are unique per document: the kept ones move out of the way first.
PARK_CHUNKS = "update exo_private.chunks set ordinal = -1 - ordinal where workspace = $1 and id = any ($2)"
PARK_EXTRACTION_WINDOWS = (
    "update exo_private.extraction_windows set ordinal = -1 - ordinal where id = any ($1)"
)
UPDATE_CHUNKS = (
    "update exo_private.chunks c "
    "set ordinal = k.ordinal, char_start = k.char_start, char_end = k.char_end, "
    "    band = k.band::exo_private.band, written_at = k.written_at::date, charged = k.charged::jsonb, "
    "    charged_subjects = array(select m ->> 'subject' from jsonb_array_elements(k.charged::jsonb) m) "
    "from unnest($2::bigint[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[]) "
    "     k (id, ordinal, char_start, char_end, band, written_at, charged) "
    "where c.workspace = $1 and c.id = k.id"
)
UPDATE_EXTRACTION_WINDOWS = (
    "update exo_private.extraction_windows x "
    "set ordinal = k.ordinal, char_start = k.char_start, char_end = k.char_end "
    "from unnest($1::bigint[], $2::int[], $3::int[], $4::int[]) k (id, ordinal, char_start, char_end) "
    "where x.id = k.id"
)
# The chunks, their chat_windows rows and extraction windows, and the embed and extract jobs, in
# one statement (the queues are tables: the jobs commit with the chunks).
INSERT_WINDOWS = (
    "with n as ( "
    "  select * from unnest($4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text[], "
    "                       $10::text[], $11::text[], $12::text[], $13::text[]) "
    "    n (ordinal, body, char_start, char_end, band, written_at, charged, message_ids, "
    "       first_sent_at, last_sent_at) "
    "), chunk as ( "
    "  insert into exo_private.chunks (workspace, document_id, ordinal, body, char_start, char_end, "
    "                                 band, written_at, charged_subjects, charged) "
    "  select $1, $2, n.ordinal, n.body, n.char_start, n.char_end, n.band::exo_private.band, "
    "         n.written_at::date, "
    "         array(select m ->> 'subject' from jsonb_array_elements(n.charged::jsonb) m), "
    "         n.charged::jsonb "
    "  from n order by n.ordinal "
    "  returning id, ordinal "
    "), win as ( "
    "  insert into exo_private.chat_windows (workspace, chunk_id, conversation_id, message_ids, "
    "                                       first_sent_at, last_sent_at) "
    "  select $1, c.id, $3, array(select jsonb_array_elements_text(n.message_ids::jsonb)::bigint), "
    "         n.first_sent_at::timestamptz, n.last_sent_at::timestamptz "
    "  from chunk c join n on n.ordinal = c.ordinal "
    "), ext as ( "
    "  insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end) "
    "  select $2, $1, n.ordinal, n.body, n.char_start, n.char_end from n order by n.ordinal "
    "  returning id "
    ") "
    "select (select count(*) from pgmq.send_batch('embed', "
    "          array(select jsonb_build_object('chunk_id', c.id, 'workspace', $1) "
    "                from chunk c order by c.ordinal))) as embed, "
    "       (select count(*) from pgmq.send_batch('extract', "
    "          array(select jsonb_build_object('window_id', e.id, 'workspace', $1) "
    "                from ext e order by e.id))) as extract"
)
INSERT_WINDOWS_TYPES = ["text", "bigint", "bigint", "int[]", "text[]", "int[]", "int[]", "text[]", "text[]",
                        "text[]", "text[]", "text[]", "text[]"]  # fmt: skip
UPDATE_DOCUMENT = (
    "update exo_private.documents d "
    "set title = $2, size_bytes = $3, mtime_ns = $4, written_at = $5::date, band = $6::exo_private.band, "
    "    band_reason = $7, workspace = $8, route = $9::jsonb, band_source = 'inferred', "
    "    stage = case when $10 then 'chunked'::exo_private.document_stage else d.stage end, "
    "    stage_changed_at = case when $10 then now() else d.stage_changed_at end, "
    "    error_class = null, error_message = null "
    "where d.id = $1"
)


def _run(plpy, statement, types, args):
    return plpy.execute(plpy.prepare(statement, types), args)


def run(plpy, conversation, ws, zone):
    """Cut the conversation into windows in ws; returns how many windows were added."""
    settings = {r["key"]: json.loads(r["value"]) for r in plpy.execute(SETTINGS)}
    conv = _run(plpy, CONVERSATION, ["bigint"], [conversation])[0]
    doc = _run(plpy, DOCUMENT, ["bigint"], [conversation])
    doc = doc[0] if doc else None
    messages = _run(plpy, MESSAGES, ["bigint", "text"], [conversation, zone])
    for m in messages:
        m["epoch"] = None if m["ns"] is None else m["ns"] / 1e9
    planned = plan(
        messages,
        settings["chat.session_gap_minutes"],
        settings["chat.window_max_chars"],
        settings["chat.window_overlap_messages"],
    )
    today = datetime.date.fromisoformat(plpy.execute("select current_date::text as d")[0]["d"])
    windows = dated_windows(planned["windows"], messages, settings, today)
    fields = document_fields(conv, messages, windows, planned["transcript_bytes"], ws)
    if doc is None:
        path = "chat/" + conv["source"] + "/" + conv["external_id"]
        types = ["bigint", "text", *FIELD_TYPES]
        doc_id = _run(plpy, INSERT_DOCUMENT, types, [conversation, path, *fields])[0]["id"]
        old = []
    else:
        doc_id = doc["id"]
        if doc["workspace"] != ws:  # moving to another workspace: every window is cut again there
            _run(plpy, "select exo_private.clear_derived($1)", ["bigint"], [doc_id])
        old = _run(plpy, OLD_WINDOWS, ["bigint"], [conversation])
    kept, new, gone = partition(windows, old)
    delete_windows(plpy, ws, gone)
    update_windows(plpy, ws, kept)
    insert_windows(plpy, ws, doc_id, conversation, new)
    changed = bool(new or gone) or doc is None
    _run(plpy, UPDATE_DOCUMENT, ["bigint", *FIELD_TYPES, "boolean"], [doc_id, *fields, changed])
    if changed:  # nothing new to embed or extract (only windows gone): the stage follows what is left
        _run(plpy, "select exo_private.advance_stages(array[$1])", ["bigint"], [doc_id])
    return len(new)


def dated_windows(planned, messages, settings, today):
    """Each planned window with its dates (the first and last dated message), its band by the first
    (banding.band_by_age, as for documents) and the union (by subject) of its messages' marks. A
    window of undated messages gets the band of the newest dated one (current without any)."""
    windows = []
    for w in planned:
        dated = [messages[i] for i in w["messages"] if messages[i]["epoch"] is not None]
        written = datetime.date.fromisoformat(dated[0]["local"][:10]) if dated else None
        band, reason = None, None
        if written is not None:
            band, reason = band_by_age(
                written, False, today, settings["banding.current_days"], settings["banding.recent_days"],
                "first message of the window",
            )  # fmt: skip
        marks = window_marks(json.loads(messages[i]["charged"]) for i in w["messages"])
        windows.append(
            dict(
                w,
                written_at=written.isoformat() if written else None,
                band=band,
                reason=reason,
                first_sent_at=dated[0]["sent_at"] if dated else None,
                last_sent_at=dated[-1]["sent_at"] if dated else None,
                charged=json.dumps(marks),
            )
        )
    newest = _newest(windows)
    for w in windows:
        if w["band"] is None:
            w["band"] = newest["band"] if newest else "current"
    return windows


def _newest(windows):
    return max((w for w in windows if w["written_at"]), key=lambda w: w["written_at"], default=None)


def title_of(conv, messages):
    """The conversation's title, else "Chat with" the people other than the owner, else its id."""
    others = []
    for m in messages:
        if not m["is_owner"] and m["sender"] not in others:
            others.append(m["sender"])
    return conv["title"] or ("Chat with " + ", ".join(others) if others else "Chat " + conv["external_id"])


def document_fields(conv, messages, windows, transcript_bytes, ws):
    """The conversation document's fields (FIELD_TYPES): title, size, mtime, date and band (its
    newest window's), workspace and route, brought up to date on every call."""
    dated = [m for m in messages if m["epoch"] is not None]
    newest = _newest(windows)
    route = {
        "workspace": ws,
        "method": "chat",
        "confidence": 1.0,
        "reasons": ["chat import into workspace " + ws],
        "candidates": [],
    }
    return [
        title_of(conv, messages),
        transcript_bytes,
        dated[-1]["ns"] if dated else 0,
        dated[0]["local"][:10] if dated else None,
        newest["band"] if newest else "current",
        newest["reason"] + " (the newest window)" if newest else "undated conversation",
        ws,
        json.dumps(route),
    ]


def partition(windows, old):
    """(kept, new, gone): windows numbered in order; one whose messages and text a stored window
    has keeps that window's chunk_id and window_id (kept); the others are new; stored windows
    no window matched are gone."""
    by_key = {(tuple(r["message_ids"]), r["body"]): r for r in old}
    kept, new = [], []
    for ordinal, w in enumerate(windows):
        w["ordinal"] = ordinal
        hit = by_key.pop((tuple(w["message_ids"]), w["body"]), None)
        if hit is None:
            new.append(w)
        else:
            w["chunk_id"], w["window_id"] = hit["chunk_id"], hit["window_id"]
            kept.append(w)
    return kept, new, list(by_key.values())


def delete_windows(plpy, ws, gone):
    if gone:
        _run(plpy, DELETE_CHUNKS, ["text", "bigint[]"], [ws, [r["chunk_id"] for r in gone]])
        window_ids = [r["window_id"] for r in gone if r["window_id"] is not None]
        _run(plpy, DELETE_EXTRACTION_WINDOWS, ["bigint[]"], [window_ids])


def update_windows(plpy, ws, kept):
    """The kept windows' chunks and extraction windows get their new ordinals, offsets, bands and marks."""
    if not kept:
        return
    ids = [w["chunk_id"] for w in kept]
    window_ids = [w["window_id"] for w in kept]
    ordinals = [w["ordinal"] for w in kept]
    starts, ends = [w["char_start"] for w in kept], [w["char_end"] for w in kept]
    _run(plpy, PARK_CHUNKS, ["text", "bigint[]"], [ws, ids])
    _run(plpy, PARK_EXTRACTION_WINDOWS, ["bigint[]"], [window_ids])
    bands, written, charged = (
        [w["band"] for w in kept],
        [w["written_at"] for w in kept],
        [w["charged"] for w in kept],
    )
    types = ["text", "bigint[]", "int[]", "int[]", "int[]", "text[]", "text[]", "text[]"]
    _run(plpy, UPDATE_CHUNKS, types, [ws, ids, ordinals, starts, ends, bands, written, charged])
    _run(
        plpy,
        UPDATE_EXTRACTION_WINDOWS,
        ["bigint[]", "int[]", "int[]", "int[]"],
        [window_ids, ordinals, starts, ends],
    )


def insert_windows(plpy, ws, doc_id, conversation, new):
    if new:
        columns = ["ordinal", "body", "char_start", "char_end", "band", "written_at", "charged"]
        args = [ws, doc_id, conversation, *([w[c] for w in new] for c in columns)]
        args += [[json.dumps(w["message_ids"]) for w in new]]
        args += [[w["first_sent_at"] for w in new], [w["last_sent_at"] for w in new]]
        _run(plpy, INSERT_WINDOWS, INSERT_WINDOWS_TYPES, args)
