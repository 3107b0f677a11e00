-- The archive opens, though the present bands answer, when a word the question asks with is held
-- by no present chunk and by a few archival ones (plpy/stages.py only_archival_word), not by a
-- margin on BM25 scores: a present match on a name and common words scored close enough to keep
-- the archive closed over old evidence that alone holds the question's specific word.
delete from exo_private.settings where key = 'retrieval.archive_margin';
