-- The facts API hints the same whatever it is asked (exo_private.fact_hints, sql/600_facts.sql):
-- exo.facts, fact_history and the packet's facts counted the withheld facts among those of the
-- subject asked, so a question that named a person learned whether withheld text states facts
-- about them. exo_private.shown_facts gives no hint rows now, and no withheld column; sql/ makes
-- it again.
drop function if exists exo_private.shown_facts(bigint[], text[]);
