-- Retrieval: match keys on documents for the exact stage, and the settings that
-- steer staged search, the combined-pool rerank and the context packet.

-- Exact matches of a title or a file name against the words of a query go through
-- these keys and their index, never through a scan of every title.
alter table exo_private.documents
    add column title_key text generated always as (
        nullif(btrim(regexp_replace(lower(coalesce(title, '')), '[^[:alnum:]]+', ' ', 'g')), '')
    ) stored,
    add column file_name text generated always as (lower(regexp_replace(path, '^.*/', ''))) stored,
    add column file_stem text generated always as (
        lower(regexp_replace(regexp_replace(path, '^.*/', ''), '\.[^.]*$', ''))
    ) stored;
create index documents_title_key_idx on exo_private.documents (title_key);
create index documents_file_name_idx on exo_private.documents (file_name);
create index documents_file_stem_idx on exo_private.documents (file_stem);
comment on column exo_private.documents.title_key is
    'The title lower-cased with every run of non-alphanumerics as one space: what an n-gram of a '
    'query is compared with.';

-- Hints count the charged chunks of a subject the query names.
create index chunks_charged_idx on exo_private.chunks using gin (charged_subjects)
    where charged_subjects <> '{}';

create index mentions_entity_chunk_idx on exo_private.mentions (entity_id, chunk_id);

insert into exo_private.settings (key, value, description) values
    ('retrieval.stages', '["exact", "lexical", "capsules", "graph", "semantic"]',
     'The stages of retrieval inside a workspace, in the order they run.'),
    ('retrieval.confident_needed', '8',
     'A workspace stops running further stages once it holds this many confident candidates '
     '(never more than per_workspace).'),
    ('retrieval.answer_coverage', '0.5',
     'Without a temporal signal the archival band opens only when nothing present answers: no '
     'identifier of the query found verbatim (when it has any), or else no confident candidate '
     'and none holding at least this share of the query''s words.'),
    ('retrieval.lexical_confident_score', '3.0',
     'A BM25 hit counts as confident at or above this score (pg_textsearch''s BM25, k1 1.2, b 0.75).'),
    ('retrieval.semantic_min_similarity', '0.2',
     'Nearest neighbours below this cosine similarity are not candidates at all.'),
    ('retrieval.semantic_confident_similarity', '0.5',
     'A semantic hit counts as confident at or above this cosine similarity.'),
    ('retrieval.graph', '{"max_entities": 5, "depth": 2, "per_node": 50}',
     'Graph stage: entities recognised in the query it starts from, the depth of the level-set '
     'neighbourhood (1..3) and the neighbours one node may add (hub safety).'),
    ('retrieval.rerank_order', '["cross_encoder", "listwise", "embedding", "deterministic"]',
     'Rerank backends, tried in order until one answers: cross_encoder (models.rerank), listwise '
     '(models.chat ranks the ids), embedding (similarity to the query embedding), deterministic '
     '(always answers). A backend whose endpoint is not configured is passed over.'),
    ('retrieval.rerank_timeout_s', '5',
     'Seconds the cross_encoder and listwise backends may take before rerank falls back.'),
    ('retrieval.listwise', '{"enabled": false, "max_candidates": 20, "excerpt_chars": 240, "max_tokens": 200}',
     'Listwise rerank by the chat model: off by default (a small local model is slow and weak at it); '
     'how many candidates it sees, how much of each, and its reply cap.'),
    ('retrieval.rank_weights', $json${
        "stage": {"exact": 1.0, "lexical": 0.85, "capsules": 0.85, "graph": 0.7, "semantic": 0.75},
        "band": {"current": 1.0, "recent": 0.9, "archival": 0.75},
        "backend_share": 0.6,
        "match": {"document": 1.3},
        "canonical": 1.1,
        "freshness_half_life_days": 1095,
        "freshness_floor": 0.6,
        "year_miss_per_year": 0.15
     }$json$,
     'How the rank is made: the share of relevance from the rerank backend (the rest is the '
     'deterministic relevance), stage weights, band weights (while the archive is closed), the '
     'boost of a document matched by '
     'title or file name and of a canonical document, '
     'the half-life of freshness (floored; only while the archive is closed; a canonical document '
     'is always fresh), and, when the '
     'question names years, the loss per year a chunk lies outside them.'),
    ('packet.max_chunks', '5', 'The most chunks a context packet cites.'),
    ('packet.excerpt_chars', '300',
     'Characters of each cited chunk in a context packet: the passage that best matches the question.'),
    ('packet.min_relative_score', '0.3',
     'A chunk joins the packet only when its rank score is at least this share of the best one.');
