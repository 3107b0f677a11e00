-- Extraction returns attributes (issue 15): merge_extraction and complete_extraction take them
-- as a new last argument, so their old signatures go; sql/300_graph.sql and sql/150_worker.sql
-- define the new ones.
drop function if exists exo_private.complete_extraction(bigint, bigint, int, jsonb, jsonb, jsonb);
drop function if exists exo_private.merge_extraction(bigint, int, jsonb, jsonb);
