-- Bands follow as_of (issue 14): exo_private.pool_details reports each candidate's band as of the
-- search's day, so it takes that day as a third argument (sql/400_search.sql); the two-argument
-- form goes, or a call with two arguments would be ambiguous.
drop function if exists exo_private.pool_details(text[], bigint[]);
