-- exo.conversation and exo.timeline take as_of (sql/530_conversations.sql, sql/500_entities.sql):
-- nothing sent or written after it. Their old signatures go; the sql files make the new ones.
drop function if exists exo.conversation(text, int, text[]);
drop function if exists exo.timeline(text, text, text[], int);
drop function if exists exo_private.entity_timeline(text, text, text[], int);
