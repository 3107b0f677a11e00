-- Chat windows: each conversation is a "conversation document" whose chunks are windows of
-- consecutive messages (plpy/chat_windows.py), in the conversation's workspace partition,
-- so the worker (embed, extract), the graph, bands, deference and search treat them as any
-- other chunk. exo_private.chat_windows says which messages each window holds.

-- exo_private.window_conversation: create or update a conversation's document and windows.
create or replace function exo_private.window_conversation(conversation bigint, workspace text default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ws text;
    zone text;
    added int;
begin
    if conversation is null then
        perform exo_private.invalid_argument('conversation must not be null');
    end if;
    -- One windowing of a conversation at a time (two imports of the same export serialize).
    perform 1 from exo_private.chat_conversations c where c.id = conversation for update;
    if not found then
        perform exo_private.invalid_argument(
            format('conversation: no chat conversation has id %s', conversation));
    end if;
    ws := coalesce(window_conversation.workspace,
                   (select d.workspace from exo_private.documents d where d.conversation_id = conversation),
                   (select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.workspace'));
    if not exists (select 1 from exo_private.workspaces w where w.name = ws) then
        perform exo_private.invalid_argument(
            format('workspace: %s is not a workspace', exo_private.quoted(ws)),
            'the workspaces are ' || (select string_agg(w.name, ', ' order by w.name) from exo_private.workspaces w));
    end if;
    zone := (select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.time_zone');
    begin
        perform pg_catalog.timezone(zone, pg_catalog.now());
    exception when invalid_parameter_value or null_value_not_allowed then
        perform exo_private.invalid_argument(
            format('setting chat.time_zone: %s is not a time zone', exo_private.quoted(zone)),
            'name one of pg_timezone_names, e.g. UTC or Europe/Paris');
    end;
    added := exo_private.cut_windows(conversation, ws, zone);
    perform exo_private.link_participants(array[conversation]);
    return added;
end
$$;
comment on function exo_private.window_conversation(bigint, text) is
    'Create or update the conversation document of a chat conversation (path chat/<source>/<id>) '
    'and its windows (exo_private.cut_windows) with their senders in the graph '
    '(exo_private.link_participants), in workspace (default: the document''s, else the '
    'setting chat.workspace; another one moves the windows there). Returns how many windows were added.';

-- exo_private.cut_windows: the work of window_conversation, its arguments checked.
create or replace function exo_private.cut_windows(conversation bigint, ws text, zone text)
returns int
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include chat_windows
# exo:include banding
import datetime
import json


settings = {
    r["key"]: json.loads(r["value"])
    for r in plpy.execute(
        "select key, value::text from exo_private.settings where key like 'chat.%' or key like 'banding.%'"
    )
}
conv = plpy.execute(
    plpy.prepare(
        "select id, source, external_id, title from exo_private.chat_conversations where id = $1", ["bigint"]
    ),
    [conversation],
)[0]
doc = plpy.execute(
    plpy.prepare(
        "select id, workspace from exo_private.documents where conversation_id = $1 for update", ["bigint"]
    ),
    [conversation],
)
doc = doc[0] if doc else None

messages = plpy.execute(
    plpy.prepare(
        "select m.id, coalesce(i.display_name, p.display_name, i.handle) as sender, m.body, "
        "       (extract(epoch from m.sent_at) * 1000000000)::bigint as ns, "
        "       to_char(m.sent_at at time zone $2, 'YYYY-MM-DD HH24:MI') as local, "
        "       m.sent_at::text as sent_at, coalesce(m.charged, '[]')::text as charged, "
        "       coalesce(p.is_owner, false) as is_owner "
        "from exo_private.chat_messages m "
        "join exo_private.chat_identities i on i.id = m.identity_id "
        "left join exo_private.people p on p.id = i.person_id "
        "where m.conversation_id = $1 "
        "order by m.sent_at nulls last, m.id",
        ["bigint", "text"],
    ),
    [conversation, zone],
)
for m in messages:
    m["epoch"] = None if m["ns"] is None else m["ns"] / 1e9
planned = plan(
    messages,
    settings["chat.session_gap_minutes"],
    settings["chat.window_max_chars"],
    settings["chat.window_overlap_messages"],
)
today = datetime.date.fromisoformat(plpy.execute("select current_date::text as d")[0]["d"])

# Each window: its dates (the first and last dated message), band by the first (plpy/banding.py
# band_by_age, as for documents), and the union (by subject) of its messages' deference marks.
windows = []
for w in planned["windows"]:
    dated = [messages[i] for i in w["messages"] if messages[i]["epoch"] is not None]
    written = datetime.date.fromisoformat(dated[0]["local"][:10]) if dated else None
    band, reason = None, None
    if written is not None:
        band, reason = band_by_age(
            written, False, today, settings["banding.current_days"], settings["banding.recent_days"],
            "first message of the window",
        )
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

# The conversation document: created once, its fields brought up to date on every call.
dated_messages = [m for m in messages if m["epoch"] is not None]
others = []
for m in messages:
    if not m["is_owner"] and m["sender"] not in others:
        others.append(m["sender"])
title = conv["title"] or ("Chat with " + ", ".join(others) if others else "Chat " + conv["external_id"])
# The document's band is its newest window's; a window of undated messages has the document's.
newest = max((w for w in windows if w["written_at"]), key=lambda w: w["written_at"], default=None)
for w in windows:
    if w["band"] is None:
        w["band"] = newest["band"] if newest else "current"
fields = [
    title,
    planned["transcript_bytes"],
    dated_messages[-1]["ns"] if dated_messages else 0,
    dated_messages[0]["local"][:10] if dated_messages else None,
    newest["band"] if newest else "current",
    newest["reason"] + " (the newest window)" if newest else "undated conversation",
    ws,
    json.dumps(
        {
            "workspace": ws,
            "method": "chat",
            "confidence": 1.0,
            "reasons": ["chat import into workspace " + ws],
            "candidates": [],
        }
    ),
]
if doc is None:
    path = "chat/" + conv["source"] + "/" + conv["external_id"]
    doc_id = plpy.execute(
        plpy.prepare(
            "insert into exo_private.documents (conversation_id, path, path_bytes, extension, title, "
            "  size_bytes, mtime_ns, written_at, band, band_reason, workspace, route, band_source, stage) "
            "values ($1, $2, convert_to($2, 'UTF8'), 'chat', $3, $4, $5, $6::date, $7::exo_private.band, $8, "
            "        $9, $10::jsonb, 'inferred', 'chunked') "
            "returning id",
            ["bigint", "text", "text", "bigint", "bigint", "text", "text", "text", "text", "text"],
        ),
        [conversation, path] + fields,
    )[0]["id"]
    old = []
else:
    doc_id = doc["id"]
    if doc["workspace"] != ws:
        # Moving to another workspace: every window is cut again there.
        plpy.execute(plpy.prepare("select exo_private.clear_derived($1)", ["bigint"]), [doc_id])
    old = plpy.execute(
        plpy.prepare(
            "select w.chunk_id, c.body, w.message_ids, x.id as window_id "
            "from exo_private.chat_windows w "
            "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
            "left join exo_private.extraction_windows x on x.document_id = c.document_id "
            "     and x.ordinal = c.ordinal "
            "where w.conversation_id = $1",
            ["bigint"],
        ),
        [conversation],
    )

# Unchanged windows (same messages, same text) keep their chunk, vector and mentions.
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
gone = list(by_key.values())
if gone:
    plpy.execute(
        plpy.prepare(
            "delete from exo_private.chunks where workspace = $1 and id = any ($2)", ["text", "bigint[]"]
        ),
        [ws, [r["chunk_id"] for r in gone]],
    )
    plpy.execute(
        plpy.prepare("delete from exo_private.extraction_windows where id = any ($1)", ["bigint[]"]),
        [[r["window_id"] for r in gone if r["window_id"] is not None]],
    )
if kept:
    ids = [w["chunk_id"] for w in kept]
    xids = [w["window_id"] for w in kept]
    ordinals = [w["ordinal"] for w in kept]
    # Ordinals are unique per document: move the kept ones out of the way first.
    plpy.execute(
        plpy.prepare(
            "update exo_private.chunks set ordinal = -1 - ordinal where workspace = $1 and id = any ($2)",
            ["text", "bigint[]"],
        ),
        [ws, ids],
    )
    plpy.execute(
        plpy.prepare(
            "update exo_private.extraction_windows set ordinal = -1 - ordinal where id = any ($1)",
            ["bigint[]"],
        ),
        [xids],
    )
    plpy.execute(
        plpy.prepare(
            "update exo_private.chunks c "
            "set ordinal = k.ordinal, char_start = k.char_start, char_end = k.char_end, "
            "    band = k.band::exo_private.band, written_at = k.written_at::date, charged = k.charged::jsonb, "
            "    charged_subjects = array(select m ->> 'subject' from jsonb_array_elements(k.charged::jsonb) m) "
            "from unnest($2::bigint[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[]) "
            "     k (id, ordinal, char_start, char_end, band, written_at, charged) "
            "where c.workspace = $1 and c.id = k.id",
            ["text", "bigint[]", "int[]", "int[]", "int[]", "text[]", "text[]", "text[]"],
        ),
        [
            ws,
            ids,
            ordinals,
            [w["char_start"] for w in kept],
            [w["char_end"] for w in kept],
            [w["band"] for w in kept],
            [w["written_at"] for w in kept],
            [w["charged"] for w in kept],
        ],
    )
    plpy.execute(
        plpy.prepare(
            "update exo_private.extraction_windows x "
            "set ordinal = k.ordinal, char_start = k.char_start, char_end = k.char_end "
            "from unnest($1::bigint[], $2::int[], $3::int[], $4::int[]) k (id, ordinal, char_start, char_end) "
            "where x.id = k.id",
            ["bigint[]", "int[]", "int[]", "int[]"],
        ),
        [xids, ordinals, [w["char_start"] for w in kept], [w["char_end"] for w in kept]],
    )
if new:
    args = [
        ws,
        doc_id,
        conversation,
        [w["ordinal"] for w in new],
        [w["body"] for w in new],
        [w["char_start"] for w in new],
        [w["char_end"] for w in new],
        [w["band"] for w in new],
        [w["written_at"] for w in new],
        [w["charged"] for w in new],
        [json.dumps(w["message_ids"]) for w in new],
        [w["first_sent_at"] for w in new],
        [w["last_sent_at"] for w in new],
    ]
    types = ["text", "bigint", "bigint", "int[]", "text[]", "int[]", "int[]", "text[]", "text[]", "text[]",
             "text[]", "text[]", "text[]"]
    # The chunks, their chat_windows rows and extraction windows, and the embed and extract jobs,
    # in one statement (the queues are tables: the jobs commit with the chunks).
    plpy.execute(
        plpy.prepare(
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
            "                from ext e order by e.id))) as extract",
            types,
        ),
        args,
    )

changed = bool(new or gone) or doc is None
plpy.execute(
    plpy.prepare(
        "update exo_private.documents d "
        "set title = $2, size_bytes = $3, mtime_ns = $4, written_at = $5::date, band = $6::exo_private.band, "
        "    band_reason = $7, workspace = $8, route = $9::jsonb, band_source = 'inferred', "
        "    stage = case when $10 then 'chunked'::exo_private.document_stage else d.stage end, "
        "    stage_changed_at = case when $10 then now() else d.stage_changed_at end, "
        "    error_class = null, error_message = null "
        "where d.id = $1",
        ["bigint", "text", "bigint", "bigint", "text", "text", "text", "text", "text", "boolean"],
    ),
    [doc_id] + fields + [changed],
)
if changed:
    # Nothing new to embed or extract (only windows gone): the stage follows what is left.
    plpy.execute(plpy.prepare("select exo_private.advance_stages(array[$1])", ["bigint"]), [doc_id])
return len(new)
$$;
comment on function exo_private.cut_windows(bigint, text, text) is
    'Cut a conversation into windows (plpy/chat_windows.py, times in zone) as chunks of its '
    'conversation document in ws: one chunk, chat_windows row and extraction window each. A window '
    'whose messages and text are unchanged keeps its chunk (vector, mentions) and gets its marks and '
    'band in place; new ones are inserted and queued for embed and extract, gone ones deleted. '
    'Returns how many windows were added. Called by window_conversation, which checks the arguments.';

-- Conversations imported before windows existed (migration 0016) are windowed once, here; an
-- import windows its own conversations, so this finds nothing afterwards.
select exo_private.window_conversation(c.id)
from exo_private.chat_conversations c
where not exists (select 1 from exo_private.documents d where d.conversation_id = c.id)
order by c.id;
