-- The "far in meaning" rule of the answer check (plpy/search.py answer_check) now asks whether a
-- candidate holds half of what the question's words weigh (weighted_coverage: a word few chunks
-- hold weighs more), not half of its words: a question on another subject held only its everyday
-- words ("perform", "case", "search" of "How do I perform a case-insensitive search?") and was
-- answered. The setting's description says so.
update exo_private.settings
set description =
    'The cosine similarity to the question below which no passage answers a question of three '
    'content words or more that writes no name, where no candidate holds half of what its words '
    'weigh (a word few passages hold weighs more) and none is an exact match (identifier, title or '
    'file name, the day named, a walk''s end): the packet then says nothing in the memory answers. '
    '0 turns it off. The scale is the embedding model''s (0.3 was chosen for all-MiniLM-L6-v2).'
where key = 'packet.answer_far_similarity';
