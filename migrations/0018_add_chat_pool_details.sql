-- exo_private.pool_details gains a chat column (a chat window's conversation, senders, first
-- time and messages): a changed return type, so the old function goes here and
-- sql/400_search.sql creates the new one.
drop function if exists exo_private.pool_details(text[], bigint[]);
