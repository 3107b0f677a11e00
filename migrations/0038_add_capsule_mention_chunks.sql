-- Issue 15: an entity capsule follows the chunks that mention its entity, not only its documents'
-- content, so new mentions (a merge, a new extraction generation, a mention in a source document
-- it already read) make it due. Existing entity capsules start unknown (null) and are rebuilt.
alter table exo_private.capsules
    add column mention_chunks int,
    add constraint capsules_mention_chunks_check check (scope = 'entity' or mention_chunks is null);
comment on column exo_private.capsules.mention_chunks is
    'An entity capsule''s count of the chunks that mentioned its entity when it was built '
    '(exo_private.entity_mention_chunks); another count now makes it due. Null for other scopes.';
