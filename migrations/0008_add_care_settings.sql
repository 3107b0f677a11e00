-- Care in search: whether time alone releases deferred material, and the bounds on
-- the rerank calls a reader's search makes.

-- exo_private.check_search_arguments takes the bridge too (sql/400_search.sql): the old
-- signature goes, or calls with six arguments would be ambiguous.
drop function if exists exo_private.check_search_arguments(text, text[], int, int, float8[], int);

insert into exo_private.settings (key, value, description) values
    ('deference.time_releases', 'false',
     'false (the careful rule): a temporal signal or open_archive opens the archival band, and '
     'releases a deferred subject only when the question also names it (by name or alias); '
     'otherwise it stays withheld with a hint unless bridged. true: an open archive alone releases '
     'every deferred subject (the report still says what was released and why).'),
    ('reader.rerank_calls_per_minute', '120',
     'Calls to a remote rerank backend (cross_encoder, listwise) one database session may make in '
     'any minute; over it the rerank falls back to the next backend and the report says '
     'rate_limited. 0 switches remote rerank off.'),
    ('retrieval.rerank_limits', '{"max_passages": 100, "passage_chars": 2000}',
     'What one remote rerank call may send: the first max_passages candidates of the pool (best '
     'first by the deterministic rank; the others get the lowest rerank relevance) and '
     'passage_chars of each.');
