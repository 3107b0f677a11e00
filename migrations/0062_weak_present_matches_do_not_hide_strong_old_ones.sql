-- Recency is a preference, not a wall: with the archive closed by default, a search whose
-- present bands answer still opens it when, in some workspace, the archival band's best BM25
-- match is confident and this many times the present bands' best (plpy/stages.py
-- archive_stronger); report.archive.why says so. Care is unchanged: opening the archive this way
-- releases no deferred subject, as the fallback never did.
insert into exo_private.settings (key, value, description) values
    ('retrieval.archive_margin', '1.5',
     'How much better (BM25, the archival band''s best match against the present bands'' best in '
     'the same workspace) the archive must match a question, at a confident score '
     '(retrieval.lexical_confident_score), to open though the present bands answer.');
