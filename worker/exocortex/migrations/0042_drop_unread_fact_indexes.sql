-- Observations at 10,000/s (issue 15): every index a fact or a source is written into costs each
-- observation an index insert, so an index no reader uses goes.
--
-- facts_closed_by_idx: no reader looks a row up by what closed it (exo.fact_history reads a
-- line's rows by facts_line_idx and returns closed_by as a column); it served only the self
-- foreign key's check when a fact row is deleted, and fact rows are never deleted. Every close
-- (one per new value) wrote into it.
drop index exo_private.facts_closed_by_idx;

-- fact_sources_observation_idx: no reader looks a source up by its observation (observe returns
-- each observation's fact row); it served only the foreign key's check when an observation is
-- deleted, and observations are never deleted. Every observation wrote into it.
drop index exo_private.fact_sources_observation_idx;
