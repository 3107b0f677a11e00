-- The timeline's reading gained p_about (words an event's sentence holds: "walk to work",
-- "spend on the car"); sql/660_events.sql defines the new signatures.
drop function if exists exo_private.timeline_answer(text, text, text[], date, date, text, text, text[], text[], timestamptz, int);
drop function if exists exo_private.timeline_events(text[], date, date, text, text, text[], text[], timestamptz);
