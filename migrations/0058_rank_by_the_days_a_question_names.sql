-- A question that names a day, a week or a month ranks what was written then first: the dated
-- retrieval stage reads chunks by written_at (an index per workspace partition), and the rank
-- weights gain date_miss_floor, the freshness of a chunk written outside such a span (plpy/search.py
-- freshness). Merged into the stored weights, so an owner's other choices stay.
create index chunks_written_at_idx on exo_private.chunks (written_at);

update exo_private.settings
   set value = value || '{"date_miss_floor": 0.2}'::jsonb,
       description = description || ' date_miss_floor: the least freshness of a chunk written outside '
                                  || 'the day, week or month a question names (a week or more away).'
 where key = 'retrieval.rank_weights' and not value ? 'date_miss_floor';
