-- Chat history: deference marks on messages, full-text search over imported messages,
-- and owner linking.
--
-- Care: a message charged for a deferred subject (plpy/deference.py message_marks: a name
-- and a cue in it together with the message before or after it) stays out of every answer
-- unless the caller bridges the subject; a last row says what was withheld, never the text.

-- exo_private.mark_messages: set the deference marks of chat messages, a conversation at a time.
create or replace function exo_private.mark_messages(every_conversation boolean default false)
returns int
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include deference
import json

# Marks change in place (ids, text and search vectors stay). A conversation is marked whole:
# a message's marks depend on its neighbours.
cues = json.loads(plpy.execute("select value::text as v from exo_private.settings where key = 'deference.cues'")[0]["v"])
subjects = compile_subjects(
    json.loads(plpy.execute("select exo_private.deference_list()::text as v")[0]["v"])
)
conversations = plpy.cursor(
    plpy.prepare(
        "select c.id, c.title from exo_private.chat_conversations c "
        "where $1 or exists (select 1 from exo_private.chat_messages m "
        "                    where m.conversation_id = c.id and m.charged is null) "
        "order by c.id",
        ["boolean"],
    ),
    [every_conversation],
)
messages = plpy.prepare(
    "select m.id, coalesce(i.display_name, p.display_name, i.handle) || ': ' || m.body as line, "
    "       m.charged::text as charged "
    "from exo_private.chat_messages m "
    "join exo_private.chat_identities i on i.id = m.identity_id "
    "left join exo_private.people p on p.id = i.person_id "
    "where m.conversation_id = $1 "
    "order by m.sent_at nulls last, m.id",
    ["bigint"],
)
update = plpy.prepare(
    "update exo_private.chat_messages m "
    "set charged = u.marks::jsonb, "
    "    charged_subjects = array(select x ->> 'subject' from jsonb_array_elements(u.marks::jsonb) x) "
    "from unnest($1::bigint[], $2::text[]) u (id, marks) "
    "where m.id = u.id",
    ["bigint[]", "text[]"],
)
changed = 0
while True:
    batch = conversations.fetch(100)
    if not batch:
        break
    for conversation in batch:
        rows = plpy.execute(messages, [conversation["id"]])
        marked = message_marks([r["line"] for r in rows], subjects, cues, conversation["title"])
        ids, values = [], []
        for row, marks in zip(rows, marked):
            if row["charged"] is None or json.loads(row["charged"]) != marks:
                ids.append(row["id"])
                values.append(json.dumps(marks))
        if ids:
            plpy.execute(update, [ids, values])
            changed += len(ids)
return changed
$$;
comment on function exo_private.mark_messages(boolean) is
    'Set the deference marks (charged, charged_subjects) of the chat messages of every conversation '
    'that has a message not yet marked, or of every conversation (after the deference list changed), '
    'in place; returns how many messages changed.';

-- Messages imported before they had marks (migration 0009) are marked once, here; an import
-- marks its own messages, so this finds nothing afterwards.
select exo_private.mark_messages();

-- exo.search_messages: chat messages matching a web-style query, best first.
create or replace function exo.search_messages(query text, max_results int default 20, bridge text[] default '{}')
returns table (
    message_id         bigint,
    conversation_id    bigint,
    conversation_title text,
    source             text,
    sender             text,
    is_owner           boolean,
    sent_at            timestamptz,
    body               text,
    rank               real,
    withheld           jsonb
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    tsq tsquery;
    n int := least(greatest(coalesce(max_results, 20), 1), 200);
begin
    -- A blank query matches nothing. Only the first 1,000 characters count: a query of
    -- thousands of words would exhaust the stack.
    if pg_catalog.btrim(coalesce(search_messages.query, '')) = '' then
        return;
    end if;
    tsq := pg_catalog.websearch_to_tsquery('english', pg_catalog.left(search_messages.query, 1000));
    return query
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), hits as materialized (
        select m.id, m.conversation_id, m.identity_id, m.sent_at, m.body,
               pg_catalog.ts_rank_cd(m.tsv, tsq) as score,
               exo_private.unreleased(m.charged_subjects, r.keys) as held
        from exo_private.chat_messages m
        cross join released r
        where m.tsv operator(pg_catalog.@@) tsq
    ), shown as (
        select h.*, row_number() over (order by h.score desc, h.sent_at desc nulls last, h.id desc) as ord
        from hits h
        where h.held = '{}'
        order by ord
        limit n
    ), held as (
        select s.subject, h.conversation_id, count(*) as messages
        from hits h
        cross join lateral unnest(h.held) s (subject)
        group by s.subject, h.conversation_id
    )
    select x.id, x.conversation_id, x.title, x.source, x.sender, x.is_owner, x.sent_at, x.body, x.score,
           x.hint
    from (
        select 0 as part, sh.ord, sh.id, sh.conversation_id, c.title, c.source,
               coalesce(i.display_name, p.display_name, i.handle) as sender,
               coalesce(p.is_owner, false) as is_owner, sh.sent_at, sh.body, sh.score, null::jsonb as hint
        from shown sh
        join exo_private.chat_conversations c on c.id = sh.conversation_id
        join exo_private.chat_identities i on i.id = sh.identity_id
        left join exo_private.people p on p.id = i.person_id
        union all
        select 1, row_number() over (order by hd.subject, hd.conversation_id), null, null, null, null, null,
               null, null, null, null,
               jsonb_build_object('subject', hd.subject, 'conversation', hd.conversation_id,
                                  'messages', hd.messages, 'how', exo_private.hint_how(hd.subject))
        from held hd
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo.search_messages(text, int, text[]) is
    'Chat messages matching a web-style query (websearch_to_tsquery, English stemming), best first '
    '(ts_rank_cd, then newest): message_id, conversation_id, conversation_title, source, sender, '
    'is_owner, sent_at, body, rank, withheld (null). A blank query returns nothing, only its first '
    '1,000 characters count; max_results is clamped to 1..200. Care: a message charged for a '
    'deferred subject (its name or an alias near a cue, in the message or the one before or after '
    'it) is left out unless bridge names the subject (by name or alias); then one last row per '
    'subject and conversation has only withheld: {subject, conversation, messages, how}.';

-- exo_private.link_owner_identity: link a chat identity to the owner person.
create or replace function exo_private.link_owner_identity(source text, handle text)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    owner_id    bigint;
    identity_id bigint;
begin
    select p.id into owner_id from exo_private.people p where p.is_owner;
    if owner_id is null then
        raise exception 'there is no owner person'
            using hint = 'insert a row into exo_private.people with is_owner = true';
    end if;
    update exo_private.chat_identities i
       set person_id = owner_id
     where i.source = link_owner_identity.source
       and i.handle = link_owner_identity.handle
    returning i.id into identity_id;
    if identity_id is null then
        raise exception 'chat identity % of source % does not exist', handle, source
            using hint = 'import a chat in which it appears first';
    end if;
    return identity_id;
end
$$;
comment on function exo_private.link_owner_identity(text, text) is
    'Link the chat identity (source, handle) to the owner person; returns the identity id. '
    'Raises when the identity or the owner does not exist.';
