-- A question of the most of a kind ("what exercise did I do most?") counts the activities whose
-- -ing name is this near the kind in meaning (plpy/timeline.py CATEGORY_SIMILARITY).
insert into exo_private.settings (key, value, description) values
    ('timeline.category_similarity', '0.37',
     'How near in meaning (cosine of the embeddings) an activity''s name ("swimming") must be to a kind '
     'a question asks of ("what exercise did I do most?") to count as one; the Timeline section lists '
     'the activities it took. 1: none (the section then says it cannot tell the kind).')
on conflict (key) do nothing;
