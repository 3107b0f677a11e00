-- The entity and graph stages read an entity's newest mentions that the text makes (origin
-- 'model'), at most 200: this index answers them in order without visiting the structural
-- mentions of a chat participant, who can have one in each of thousands of windows.
create index mentions_model_entity_chunk_idx on exo_private.mentions (entity_id, chunk_id desc)
    where origin = 'model' and chunk_id is not null;
