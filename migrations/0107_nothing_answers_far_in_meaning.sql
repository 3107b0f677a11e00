-- Nothing answers a question no passage comes near in meaning (plpy/search.py answer_check):
-- "Why doesn't lsof find a process that ps finds?" asked of a memory that never explains lsof
-- shares everyday words with it, so the word rules find an answer; no passage of it comes as
-- near the question in meaning as one that answers does. The rule holds only for a question of
-- three content words or more that writes no name, where no candidate holds half its words (a
-- short question, a person's name or a bag of keywords is far from what answers it).
insert into exo_private.settings (key, value, description) values
    ('packet.answer_far_similarity', '0.3',
     'The cosine similarity to the question below which no passage answers a question of three '
     'content words or more that writes no name, where no candidate holds half its words and none '
     'is an exact match (identifier, title or file name, the day named, a walk''s '
     'end): the packet then says nothing in the memory answers. 0 turns it off.');
