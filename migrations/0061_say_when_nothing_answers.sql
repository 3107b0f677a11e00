-- When nothing found answers the question, the context packet says so and shows the two nearest
-- passages as "not an answer" (plpy/search.py answer_check, packet): no exact match, no passage
-- within this similarity of the question, and a content word of the question beyond its names
-- that the memory never uses.
insert into exo_private.settings (key, value, description) values
    ('packet.answer_close_similarity', '0.5',
     'The cosine similarity to the question at which a passage answers whatever its words. Below '
     'it, with no exact match (identifier, title or file name, the day named, a walk''s end), a '
     'question that asks about a word the memory never uses gets a packet that says nothing answers '
     '(report.answer says why).');
