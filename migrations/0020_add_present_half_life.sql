-- A question about the present ("where does she live now?") prefers the newest evidence over
-- months, not years: the rank weights gain present_half_life_days (plpy/search.py freshness).
-- Merged into the stored weights, so an owner's other choices stay.
update exo_private.settings
   set value = value || '{"present_half_life_days": 60}'::jsonb,
       description = description || ' present_half_life_days: the recency half-life for a question '
                                  || 'about the present (now, currently, these days, still).'
 where key = 'retrieval.rank_weights' and not value ? 'present_half_life_days';
