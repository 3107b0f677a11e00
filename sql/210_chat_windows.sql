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
# exo:include cut_windows
return run(plpy, conversation, ws, zone)
$$;
comment on function exo_private.cut_windows(bigint, text, text) is
    'Cut a conversation into windows (plpy/cut_windows.py, times in zone) as chunks of its '
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
