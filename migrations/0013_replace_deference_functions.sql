-- sql/450_deference.sql, the one definition of withheld, changes two signatures that
-- `create or replace` cannot: exo_private.entity_mentions takes an optional document (the
-- two-argument form would make every two-argument call ambiguous), and
-- exo_private.closed_chunks returns each chunk's workspace, document and span too.
drop function if exists exo_private.entity_mentions(bigint[], text[]);
drop function if exists exo_private.closed_chunks(text[]);
