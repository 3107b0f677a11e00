-- One demotion for a personal base's documents and outside documents: exo_private.kb_demote
-- (sql/700_kb.sql) takes both, and exo_private.kb_decay demotes both in one pass, so the copies
-- that sql/710_kb_outside.sql kept for outside documents go.
drop function if exists exo_private.kb_outside_decay(bigint, timestamptz);
drop function if exists exo_private.kb_outside_demote(bigint, bigint[], text, timestamptz);
drop function if exists exo_private.kb_demote(bigint, bigint[], text, timestamptz);
