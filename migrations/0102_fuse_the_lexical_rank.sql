-- The rank fuses how strongly BM25 ranks a candidate with the rerank's similarity: the
-- deterministic relevance's word term becomes 0.7 the share of the question's words a chunk
-- holds and 0.3 its BM25 score over the best of its workspace's lexical stage (lexical_share,
-- plpy/search.py deterministic_relevance), and the embedding rerank's share falls from 0.6 to 0.5.
-- bench/public_faqs, seed 7: the answer shown 48 -> 51 of 60 (BM25 top 5: 52). An owner's own
-- backend_share stays.
update exo_private.settings
   set value = value || jsonb_build_object(
           'lexical_share', 0.3,
           'backend_share', case when value -> 'backend_share' = '0.6'::jsonb then 0.5
                                 else (value -> 'backend_share')::float8 end),
       description = description || ' lexical_share: the share of the deterministic relevance''s word '
                                  || 'term that is BM25''s score over the best of its workspace''s lexical stage '
                                  || '(the rest: the share of the question''s words the chunk holds).'
 where key = 'retrieval.rank_weights' and not value ? 'lexical_share';
