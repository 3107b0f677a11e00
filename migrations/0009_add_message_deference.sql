-- Deference marks on chat messages, as chunks have them: a message is charged for a
-- deferred subject named near a cue (plpy/deference.py message_marks, applied by
-- exo_private.mark_messages in sql/200_chat.sql). charged is null until the message has
-- been marked: an import marks its messages in its own transaction, and the messages
-- imported before this migration are marked when sql/200_chat.sql is next applied.

alter table exo_private.chat_messages
    add column charged_subjects text[] not null default '{}',
    add column charged jsonb;
comment on column exo_private.chat_messages.charged_subjects is
    'The subjects of charged: the deferred subjects this message touches.';
comment on column exo_private.chat_messages.charged is
    'Deferred subjects this message touches, each with the rule that fired; null until marked.';

-- The charged messages, as chunks_charged_idx for chunks.
create index chat_messages_charged_idx on exo_private.chat_messages using gin (charged_subjects)
    where charged_subjects <> '{}';
-- The conversations with messages not yet marked (only during an import, and once after this).
create index chat_messages_unmarked_idx on exo_private.chat_messages (conversation_id)
    where charged is null;

-- Signatures that change: the chat functions take bridge, and every table-returning graph
-- and chat function gets a withheld column (its hint rows); cross_document_entities takes
-- bridge. sql/ makes the new ones. On a new database none exist yet.
drop function if exists exo.search_messages(text, int);
drop function if exists exo.conversation(text, int);
drop function if exists exo.person_history(text, int);
drop function if exists exo.search_entities(text, text, text[], int, text[]);
drop function if exists exo.related(text, text, int, int, text[]);
drop function if exists exo.timeline(text, text, text[], int);
drop function if exists exo.cross_document_entities(int, text[], int);
drop function if exists exo_private.find_entities(text, text, text[], int, text[]);
drop function if exists exo_private.related_to(text, text, int, int, text[]);
drop function if exists exo_private.entity_timeline(text, text, text[], int);
