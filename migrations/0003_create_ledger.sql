-- Ingestion: the documents ledger, the text cache, links, chunks per workspace,
-- extraction windows, the deference list, queues and the settings ingestion reads.

create type exo_private.document_stage as enum (
    'new', 'extracted', 'routed', 'quarantined', 'chunked', 'embedded', 'graphed',
    'failed', 'skipped', 'ocr_pending', 'deleted'
);
comment on type exo_private.document_stage is
    'Where a document stands; every stage is written to the ledger, so any run resumes.';

create type exo_private.band as enum ('current', 'recent', 'archival');
comment on type exo_private.band is
    'Temporal band: search prefers the present bands; a temporal signal opens archival.';

create table exo_private.sources (
    id           int generated always as identity primary key,
    root         text not null unique,
    workspace    text references exo_private.workspaces (name),
    created_at   timestamptz not null default now(),
    last_scan_at timestamptz
);
comment on table exo_private.sources is
    'Folders ingested (a vault, an archive); workspace is set when `exo ingest --workspace` forces one.';

create table exo_private.documents (
    id               bigint generated always as identity primary key,
    source_id        int not null references exo_private.sources (id) on delete cascade,
    path             text not null,
    extension        text not null,
    size_bytes       bigint not null,
    mtime_ns         bigint not null,
    sha256           text,
    stage            exo_private.document_stage not null default 'new',
    error_class      text,
    error_message    text,
    workspace        text references exo_private.workspaces (name),
    route            jsonb,
    review           jsonb,
    band             exo_private.band,
    band_source      text check (band_source in ('frontmatter', 'inferred')),
    band_reason      text,
    written_at       date,
    title            text,
    canonical        boolean not null default false,
    frontmatter      jsonb not null default '{}',
    metadata         jsonb not null default '{}',
    first_seen_at    timestamptz not null default now(),
    stage_changed_at timestamptz not null default now(),
    unique (source_id, path),
    check ((stage in ('failed', 'skipped')) = (error_class is not null))
);
create index documents_stage_idx on exo_private.documents (stage);
create index documents_sha256_idx on exo_private.documents (sha256);
create index documents_workspace_idx on exo_private.documents (workspace);
comment on table exo_private.documents is
    'The ledger: one row per file the scanner saw, with its stage, routing, band and errors.';
comment on column exo_private.documents.path is
    'Relative to the source root; undecodable bytes in names are written as \x escapes.';
comment on column exo_private.documents.route is
    'The router''s decision: method, workspace, confidence, candidates with scores and reasons.';
comment on column exo_private.documents.review is
    'A person''s quarantine decision (approved, reassigned, rejected); outranks the router.';

create table exo_private.text_cache (
    sha256            text primary key,
    body              text not null,
    metadata          jsonb not null default '{}',
    needs_ocr         boolean not null default false,
    extractor_version text not null,
    extracted_at      timestamptz not null default now()
);
comment on table exo_private.text_cache is
    'Extracted text keyed by content hash: each file''s text is extracted exactly once.';

create table exo_private.document_links (
    source_document bigint not null references exo_private.documents (id) on delete cascade,
    target          text not null,
    target_document bigint references exo_private.documents (id) on delete set null,
    primary key (source_document, target)
);
create index document_links_target_idx on exo_private.document_links (target_document);
comment on table exo_private.document_links is
    'Obsidian [[wiki links]] between documents; target_document is null while unresolved.';

-- Chunks: one list partition per workspace, each with its own indexes, so a
-- workspace can be rebuilt alone (exo_private.ensure_workspace_storage makes them).
create table exo_private.chunks (
    id               bigint generated always as identity,
    workspace        text not null references exo_private.workspaces (name),
    document_id      bigint not null references exo_private.documents (id) on delete cascade,
    ordinal          int not null,
    body             text not null,
    char_start       int not null,
    char_end         int not null,
    band             exo_private.band not null,
    written_at       date,
    charged_subjects text[] not null default '{}',
    charged          jsonb not null default '[]',
    created_at       timestamptz not null default now(),
    primary key (workspace, id),
    unique (workspace, document_id, ordinal)
) partition by list (workspace);
comment on table exo_private.chunks is
    'Retrieval chunks split at paragraph boundaries; partitioned by workspace.';
comment on column exo_private.chunks.charged is
    'Deferred subjects this chunk touches, each with the rule that fired.';

create table exo_private.extraction_windows (
    id          bigint generated always as identity primary key,
    document_id bigint not null references exo_private.documents (id) on delete cascade,
    workspace   text not null references exo_private.workspaces (name),
    ordinal     int not null,
    body        text not null,
    char_start  int not null,
    char_end    int not null,
    unique (document_id, ordinal)
);
comment on table exo_private.extraction_windows is
    'Large windows (6,000 characters, 400 overlap) for the graph extraction worker.';

create table exo_private.deferred_subjects (
    subject    text primary key check (btrim(subject) <> ''),
    aliases    text[] not null default '{}',
    note       text,
    created_at timestamptz not null default now()
);
comment on table exo_private.deferred_subjects is
    'Subjects that must never surface by accident; chunks touching them are marked charged.';

create table exo_private.ingest_runs (
    id          bigint generated always as identity primary key,
    source_id   int not null references exo_private.sources (id) on delete cascade,
    started_at  timestamptz not null default now(),
    finished_at timestamptz,
    summary     jsonb
);
comment on table exo_private.ingest_runs is 'One row per `exo ingest` run with its end summary.';

select pgmq.create('embed');
select pgmq.create('extract');

insert into exo_private.settings (key, value, description) values
    ('chunking.chunk_chars', '1200',
     'Retrieval chunk size in characters (split at paragraph boundaries).'),
    ('chunking.overlap_chars', '200',
     'Characters of trailing paragraphs repeated at the start of the next chunk.'),
    ('chunking.window_chars', '6000', 'Extraction window size in characters.'),
    ('chunking.window_overlap_chars', '400', 'Extraction window overlap in characters.'),
    ('routing.confidence_threshold', '0.6',
     'Below this router confidence a document goes to quarantine instead of a workspace.'),
    ('routing.folder_rules', $json$[
        {"folder": "work", "workspace": "technical"},
        {"folder": "tech", "workspace": "technical"},
        {"folder": "code", "workspace": "technical"},
        {"folder": "writing", "workspace": "creative"},
        {"folder": "fiction", "workspace": "creative"},
        {"folder": "poems", "workspace": "creative"},
        {"folder": "diary", "workspace": "personal"},
        {"folder": "journal", "workspace": "personal"},
        {"folder": "personal", "workspace": "personal"},
        {"folder": "admin", "workspace": "administrative"},
        {"folder": "finance", "workspace": "administrative"},
        {"folder": "paperwork", "workspace": "administrative"}
     ]$json$,
     'Folder name (any directory in the path, case-insensitive) to workspace; the first match wins.'),
    ('routing.keywords', $json${
        "technical": ["postgres", "postgresql", "database", "server", "query", "index", "vacuum",
                      "replication", "deploy", "bug", "code", "python", "sql", "kernel", "linux",
                      "backup", "api", "latency", "cpu", "disk", "config", "migration", "runbook",
                      "incident", "cluster", "script", "docker", "network", "upgrade", "schema"],
        "creative": ["poem", "stanza", "verse", "chapter", "novel", "story", "character",
                     "protagonist", "plot", "draft", "scene", "dialogue", "fiction", "narrator",
                     "lighthouse", "moon", "sea", "dream", "whisper", "ink", "rhyme", "lantern",
                     "tide", "waves", "shore", "silence", "song", "stars", "gull", "ghost", "wrack"],
        "personal": ["felt", "feel", "feeling", "today", "friend", "family", "mom", "dad",
                     "sister", "brother", "walk", "dinner", "tired", "happy", "sad", "love",
                     "birthday", "weekend", "dog", "diary", "remember", "heart", "grateful",
                     "morning", "evening", "cried", "laughed", "wedding", "sleep"],
        "administrative": ["invoice", "tax", "insurance", "policy", "contract", "rent", "bank",
                           "payment", "due", "receipt", "account", "premium", "claim", "landlord",
                           "deadline", "form", "statement", "bill", "fee", "renewal", "pension"]
     }$json$,
     'Words the content classifier counts for each workspace (whole words, case-insensitive).'),
    ('banding.current_days', '365', 'Documents written within this many days are in the current band.'),
    ('banding.recent_days', '1095',
     'Documents written within this many days (and not current) are recent; older ones archival.'),
    ('deference.cues', $json$["died", "death", "dying", "funeral", "grief", "grieving", "mourning",
        "passed away", "hospice", "hospital", "diagnosis", "cancer", "miss him", "miss her",
        "loss", "burial", "eulogy", "terminal", "last days", "condolences"]$json$,
     'Words that, next to a deferred subject in one chunk, mark the chunk charged.');
