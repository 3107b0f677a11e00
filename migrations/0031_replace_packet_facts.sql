-- exo_private.packet_facts gains p_owner (a question in the first person is about the owner,
-- sql/640_packet_facts.sql): the form without it goes, or calls would be ambiguous.
drop function if exists exo_private.packet_facts(text[], timestamptz, text[], text[], int);
