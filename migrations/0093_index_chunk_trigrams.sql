-- Past a million chunks (issue 32), two lookups that grew with the memory become index probes.
--
-- The identifier stage (exo_private.stage_sql_identifier) finds the chunks holding a string such
-- as 'CHG-22513' by its trigrams (pg_trgm), case-insensitively as the stage compares. It took
-- BM25's first 300 hits of the string's words and kept those holding it: the prefix 'chg' is in
-- every CHG ticket, and walking its postings to fill 300 places cost 21 ms at 100,000 chunks and
-- 37 ms at a million. On the partitioned table, so every workspace partition, and every one made
-- later, has its own (about 0.4 of the text's size).
create index chunks_body_trgm_idx on exo_private.chunks using gin (lower(body) public.gin_trgm_ops);

-- The participant stage (exo_private.stage_sql_participant) reads the mentions a chat's structure
-- makes (the senders of a window) of the people a question names. Where there are none or few, the
-- planner expected one row and read every mention (1.4 million at a million chunks, 60 ms); these
-- few, by entity, are a probe.
create index mentions_structure_entity_chunk_idx on exo_private.mentions (entity_id, chunk_id)
    where origin = 'structure' and chunk_id is not null;
