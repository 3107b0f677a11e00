-- merge_extraction accepts what it is given by the worker's rules (exo_private.accept_extraction)
-- and takes an NER backend's labels for them, as complete_extraction does; sql/305_entity_identity.sql
-- and sql/150_worker.sql define the new signatures, the old ones go.
drop function if exists exo_private.complete_extraction(bigint, bigint, int, jsonb, jsonb, jsonb, jsonb);
drop function if exists exo_private.merge_extraction(bigint, int, jsonb, jsonb, jsonb);
