-- exo_private.packet_facts gives each line's value before the one it holds (sql/640_packet_facts.sql):
-- its result has two more columns, so the old function goes and the sql file makes the new one.
drop function if exists exo_private.packet_facts(text[], timestamptz, text[], text[], boolean, int);
