-- Conversations are memory: every chat conversation has one "conversation document" in
-- the ledger (its workspace, title, band, stage and chunks), and each chunk of it is a
-- window of consecutive messages (exo_private.window_conversation, sql/210_chat_windows.sql).
-- The worker, the graph and the search stages treat those chunks as any other.

alter table exo_private.documents
    add column conversation_id bigint unique
        references exo_private.chat_conversations (id) on delete cascade,
    alter column source_id drop not null,
    add constraint documents_one_origin check (num_nonnulls(source_id, conversation_id) = 1);
comment on column exo_private.documents.conversation_id is
    'Set on a conversation document (path chat/<source>/<external_id>, extension chat, no source, '
    'no sha256): the chat conversation whose windows are its chunks.';

create table exo_private.chat_windows (
    workspace       text not null,
    chunk_id        bigint not null,
    conversation_id bigint not null references exo_private.chat_conversations (id) on delete cascade,
    message_ids     bigint[] not null,
    first_sent_at   timestamptz,
    last_sent_at    timestamptz,
    primary key (workspace, chunk_id),
    foreign key (workspace, chunk_id) references exo_private.chunks (workspace, id) on delete cascade
);
comment on table exo_private.chat_windows is
    'One row per chat chunk: the messages, in order, that the window holds, and the times of '
    'its first and last dated message.';
-- sql/990_grants.sql grants these too; granted here first, in the order an upgraded database's
-- default privileges give a new table, so its schema dump matches one migrated from zero.
grant select, insert, update, delete on exo_private.chat_windows to exo_writer;
grant select on exo_private.chat_windows to exo_api;
create index chat_windows_conversation_idx on exo_private.chat_windows (conversation_id);
create index chat_windows_message_ids_idx on exo_private.chat_windows using gin (message_ids);

insert into exo_private.settings (key, value, description) values
    ('chat.workspace', '"personal"',
     'The workspace whose partition holds imported conversations (exo import-chat --workspace overrides it).'),
    ('chat.session_gap_minutes', '30',
     'A chat session ends at a gap between two messages longer than this (or at a new day); a '
     'window never spans two sessions.'),
    ('chat.window_max_chars', '1200',
     'A chat window closes when its next message would make it longer than this many characters '
     '(a single longer message is a window of its own).'),
    ('chat.window_overlap_messages', '1',
     'The next window of the same session starts with this many of the last messages of the one before.'),
    ('chat.time_zone', '"UTC"',
     'The time zone of the times in chat windows (one line per message: date, time, sender, text) '
     'and of the day that ends a session.');
