-- exo.fact_history takes as_of (sql/600_facts.sql): the rows begun by then, no end after it told.
-- The old signature goes; the sql file makes the new one.
drop function if exists exo.fact_history(text, text, text[]);
