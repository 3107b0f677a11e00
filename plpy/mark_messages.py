"""exo_private.mark_messages: the deference marks of chat messages, a conversation at a time.

`run(plpy, every_conversation)` is the whole function: it reads the deference rules, then each
conversation that has a message not yet marked (or every conversation), its messages in order
as "sender: body" lines, marks them (deference.message_marks: a message's marks depend on its
neighbours, so a conversation is marked whole) and writes the marks that changed in place (ids,
text and search vectors stay). `changed_marks` decides what is written.
"""

import json

from deference import deference_rules, message_marks

CONVERSATIONS = (
    "select c.id, c.title from exo_private.chat_conversations c "
    "where $1 or exists (select 1 from exo_private.chat_messages m "
    "                    where m.conversation_id = c.id and m.charged is null) "
    "order by c.id"
)
MESSAGES = (
    "select m.id, coalesce(i.display_name, p.display_name, i.handle) || ': ' || m.body as line, "
    "       m.charged::text as charged "
    "from exo_private.chat_messages m "
    "join exo_private.chat_identities i on i.id = m.identity_id "
    "left join exo_private.people p on p.id = i.person_id "
    "where m.conversation_id = $1 "
    "order by m.sent_at nulls last, m.id"
)
UPDATE_MESSAGES = (
    "update exo_private.chat_messages m "
    "set charged = u.marks::jsonb, "
    "    charged_subjects = array(select x ->> 'subject' from jsonb_array_elements(u.marks::jsonb) x) "
    "from unnest($1::bigint[], $2::text[]) u (id, marks) "
    "where m.id = u.id"
)
# A message charged in place leaves its old row in the open index's statistics: built again once
# this transaction is over (exo_private.rebuild_open_indexes).
FLAG_OPEN_INDEX = "select exo_private.flag_open_index('chat_messages_bm25_open')"
CONVERSATION_BATCH = 100


def run(plpy, every_conversation):
    """Mark the messages; returns how many messages' marks changed."""
    subjects, cues = deference_rules(plpy)
    conversations = plpy.cursor(plpy.prepare(CONVERSATIONS, ["boolean"]), [every_conversation])
    messages = plpy.prepare(MESSAGES, ["bigint"])
    update = plpy.prepare(UPDATE_MESSAGES, ["bigint[]", "text[]"])
    changed, charged_in_place = 0, False
    while True:
        batch = conversations.fetch(CONVERSATION_BATCH)
        if not batch:
            break
        for conversation in batch:
            rows = plpy.execute(messages, [conversation["id"]])
            marked = message_marks([r["line"] for r in rows], subjects, cues, conversation["title"])
            ids, values = changed_marks(rows, marked)
            if ids:
                plpy.execute(update, [ids, values])
                changed += len(ids)
                charged_in_place = charged_in_place or newly_charged(rows, marked)
    if charged_in_place:
        plpy.execute(FLAG_OPEN_INDEX)
    return changed


def changed_marks(rows, marked):
    """(ids, marks as JSON) of the messages whose marks are new: never marked (charged null, so
    even no marks is written) or marked otherwise."""
    ids, values = [], []
    for row, marks in zip(rows, marked, strict=False):
        if row["charged"] is None or json.loads(row["charged"]) != marks:
            ids.append(row["id"])
            values.append(json.dumps(marks))
    return ids, values


def newly_charged(rows, marked):
    """Whether a message marked before, for no subject, is charged now: the open BM25 index still
    counts its old row."""
    return any(
        row["charged"] is not None and not json.loads(row["charged"]) and marks
        for row, marks in zip(rows, marked, strict=False)
    )
