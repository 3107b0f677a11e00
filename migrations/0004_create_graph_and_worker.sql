-- The worker's world: embeddings per model, the knowledge graph (entities,
-- mentions, relations) per workspace and extraction generation, worker
-- heartbeats, job failures, the dead-letter queue and model settings.

create table exo_private.embedding_models (
    id         int generated always as identity primary key,
    name       text not null,
    dimensions int not null check (dimensions between 1 and 16000),
    created_at timestamptz not null default now(),
    unique (name, dimensions)
);
comment on table exo_private.embedding_models is
    'Every embedding model that produced vectors here; each gets its own HNSW indexes.';

-- Vectors of any dimension; an HNSW index per (workspace partition, model) is a
-- partial expression index on embedding::vector(dimensions) where model_id = that
-- model, so vectors of two models never share an index.
create table exo_private.chunk_embeddings (
    workspace  text not null,
    chunk_id   bigint not null,
    model_id   int not null references exo_private.embedding_models (id),
    embedding  vector not null,
    created_at timestamptz not null default now(),
    primary key (workspace, model_id, chunk_id),
    foreign key (workspace, chunk_id) references exo_private.chunks (workspace, id) on delete cascade
) partition by list (workspace);
comment on table exo_private.chunk_embeddings is
    'One vector per chunk and embedding model; partitioned by workspace like the chunks.';

create type exo_private.entity_type as enum ('Person', 'Org', 'Place', 'Topic', 'Date');

create table exo_private.extraction_generations (
    workspace  text not null references exo_private.workspaces (name),
    generation int not null,
    model      text not null,
    started_at timestamptz not null default now(),
    primary key (workspace, generation)
);
comment on table exo_private.extraction_generations is
    'The extraction model behind each graph generation of a workspace; the newest is current.';

create table exo_private.entities (
    id            bigint generated always as identity primary key,
    workspace     text not null references exo_private.workspaces (name),
    generation    int not null,
    type          exo_private.entity_type not null,
    canonical_key text not null check (canonical_key <> ''),
    name          text not null,
    is_owner      boolean not null default false,
    created_at    timestamptz not null default now(),
    unique (workspace, generation, type, canonical_key),
    foreign key (workspace, generation) references exo_private.extraction_generations on delete cascade
);
create index entities_key_idx on exo_private.entities (canonical_key);
comment on table exo_private.entities is
    'Graph nodes. Identity is (workspace, type, canonical key) within a generation: one node per '
    'name per workspace, however many documents mention it.';

create table exo_private.mentions (
    entity_id   bigint not null references exo_private.entities (id) on delete cascade,
    window_id   bigint not null references exo_private.extraction_windows (id) on delete cascade,
    document_id bigint not null references exo_private.documents (id) on delete cascade,
    chunk_id    bigint,
    surface     text not null,
    unique nulls not distinct (entity_id, window_id, chunk_id)
);
create index mentions_document_idx on exo_private.mentions (document_id);
create index mentions_chunk_idx on exo_private.mentions (chunk_id);
comment on table exo_private.mentions is
    'Where an entity was found: the extraction window, its document, and the chunk holding the name.';

create table exo_private.relations (
    id            bigint generated always as identity primary key,
    workspace     text not null references exo_private.workspaces (name),
    generation    int not null,
    subject_id    bigint not null references exo_private.entities (id) on delete cascade,
    object_id     bigint not null references exo_private.entities (id) on delete cascade,
    predicate_raw text not null,
    predicate     text not null check (predicate ~ '^[A-Z][A-Z0-9_]{0,62}$'),
    window_id     bigint not null references exo_private.extraction_windows (id) on delete cascade,
    document_id   bigint not null references exo_private.documents (id) on delete cascade,
    created_at    timestamptz not null default now(),
    unique (subject_id, predicate, object_id, window_id)
);
create index relations_subject_idx on exo_private.relations (subject_id, object_id);
create index relations_object_idx on exo_private.relations (object_id, subject_id);
comment on table exo_private.relations is
    'Subject-predicate-object triples from one window; predicate is the normalised label, '
    'predicate_raw what the model said.';

alter table exo_private.extraction_windows
    add column extracted_generation int,
    add column extracted_at timestamptz,
    add column extraction_stats jsonb;
comment on column exo_private.extraction_windows.extraction_stats is
    'What the last extraction of this window gave: items kept and dropped (malformed, ungrounded, dangling).';

alter table exo_private.people add column entity_key text;
comment on column exo_private.people.entity_key is
    'Canonical key of the Person entity this person is in every workspace''s graph.';

create table exo_private.workers (
    id           bigint generated always as identity primary key,
    name         text not null,
    pid          int not null,
    hostname     text not null,
    queues       text[] not null,
    started_at   timestamptz not null default now(),
    heartbeat_at timestamptz not null default now(),
    stopped_at   timestamptz,
    stop_reason  text,
    processed    bigint not null default 0
);
comment on table exo_private.workers is 'Worker processes with heartbeats, for `exo status`.';

create table exo_private.job_failures (
    id          bigint generated always as identity primary key,
    queue       text not null,
    msg_id      bigint not null,
    target_id   bigint,
    error_class text not null,
    message     text not null,
    failed_at   timestamptz not null default now()
);
create index job_failures_target_idx on exo_private.job_failures (queue, target_id);
comment on table exo_private.job_failures is
    'Jobs given up on: the chunk or window, the error class and message.';

select pgmq.create('dead_letter');

insert into exo_private.settings (key, value, description) values
    ('models.chat', '{"url": "http://127.0.0.1:54330/v1", "model": "gemma-3-270m-q4_k_m", "timeout_s": 120, "response_format": true}',
     'Chat endpoint (OpenAI-compatible): extraction, capsules, listwise rerank. response_format false '
     'omits the json_schema for servers that misbehave with it.'),
    ('models.embeddings', '{"url": "http://127.0.0.1:54331/v1", "model": "all-MiniLM-L6-v2", "dimensions": 384, "timeout_s": 30}',
     'Embeddings endpoint (OpenAI-compatible /embeddings); changing model or dimensions re-embeds.'),
    ('models.rerank', '{"url": null, "model": null, "timeout_s": 10}',
     'Cross-encoder rerank endpoint (llama.cpp /v1/rerank); null when none is served.'),
    ('worker.visibility_timeout_s', '{"embed": 120, "extract": 600}',
     'Seconds a read message stays invisible to other workers, per queue.'),
    ('worker.max_reads', '5', 'A message read more often than this goes to the dead_letter queue.'),
    ('worker.retry_backoff_s', '[5, 15, 45]', 'Waits between retries of a failing model call.'),
    ('worker.embed_batch', '32', 'Chunks embedded per model call.'),
    ('extraction.max_tokens', '768', 'Token cap of one extraction reply.'),
    ('extraction.max_entities', '12',
     'Most entities one extraction may return (the schema''s maxItems). Small models fill every '
     'allowed slot, often with repeats, so the default keeps Gemma 3 270M inside max_tokens.'),
    ('extraction.max_relations', '12', 'Most relations one extraction may return (the schema''s maxItems).');
