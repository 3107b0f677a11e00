-- Hints that no question moves (docs/security.md, the oracle rule). exo.search_messages hinted
-- per subject and conversation how many of the question's matches were withheld, so a caller
-- learned, one guess a call, which words withheld messages hold; it now counts every message
-- charged for a closed subject, whatever the question. Those are few: a partial index by
-- their time finds them without reading the others.
create index chat_messages_charged_sent on exo_private.chat_messages (sent_at)
    where charged_subjects <> '{}';
comment on index exo_private.chat_messages_charged_sent is
    'The charged messages by time: exo.search_messages counts them per closed subject for its hints.';
