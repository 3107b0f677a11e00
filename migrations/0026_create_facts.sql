-- Temporal facts (issue 15): one line per (workspace, subject, attribute, kind), each row a
-- value valid from valid_from until valid_to (null: current). A new value closes only the
-- current row of its own line (exo_private.record_fact, sql/600_facts.sql); nothing is
-- updated in place but the closing columns, and nothing is deleted. Observations are the
-- runtime facts scripts report (exo observe); they are never charged.

create type exo_private.fact_kind as enum ('observation', 'declared', 'extracted');
comment on type exo_private.fact_kind is
    'Where a fact comes from, in order of precedence: observation > declared > extracted.';

create table exo_private.observations (
    id          bigint generated always as identity primary key,
    workspace   text not null references exo_private.workspaces (name),
    subject     text not null,
    attribute   text not null,
    value       text not null,
    observed_at timestamptz not null,
    source      text not null,
    recorded_at timestamptz not null default now()
);
comment on table exo_private.observations is
    'Observations as reported (exo_private.observe, exo observe): what a script saw, when, and who '
    'said so (source). Each is recorded as a fact of kind observation.';

create table exo_private.facts (
    id           bigint generated always as identity primary key,
    workspace    text not null references exo_private.workspaces (name),
    subject      text not null,
    subject_key  text not null,
    attribute    text not null check (attribute ~ '^\S{1,100}$'),
    value        text not null,
    kind         exo_private.fact_kind not null,
    valid_from   timestamptz not null,
    valid_to     timestamptz,
    recorded_at  timestamptz not null default now(),
    closed_by    bigint references exo_private.facts (id) deferrable initially deferred,
    close_reason text,
    check (valid_to >= valid_from),
    check ((valid_to is null) = (close_reason is null)),
    check (closed_by is null or valid_to is not null)
);
comment on table exo_private.facts is
    'Temporal facts: a line is (workspace, subject_key, attribute, kind); its current row has '
    'valid_to null. Closed rows say when (valid_to), by which row (closed_by; null when closed '
    'with no new value) and why (close_reason).';
comment on column exo_private.facts.subject is 'The subject as first written; subject_key is its canonical key.';
comment on column exo_private.facts.valid_from is
    'When the source says the value held (the document''s date, the message''s or observation''s time).';
-- The current row of a line: at most one (two writers serialise on the line, and this is the net).
create unique index facts_current_idx on exo_private.facts (subject_key, attribute, kind, workspace)
    where valid_to is null;
-- A subject's facts, and a line's rows in time order.
create index facts_line_idx on exo_private.facts (subject_key, attribute, kind, workspace, valid_from);
create index facts_closed_by_idx on exo_private.facts (closed_by) where closed_by is not null;
-- exo.facts_search: the words of the current rows.
create index facts_words_idx on exo_private.facts using gin (
    to_tsvector('simple'::regconfig, subject || ' ' || replace(attribute, '_', ' ') || ' ' || value))
    where valid_to is null;

create table exo_private.fact_sources (
    fact_id        bigint not null references exo_private.facts (id),
    document_id    bigint,
    chunk_id       bigint,
    observation_id bigint references exo_private.observations (id),
    recorded_at    timestamptz not null default now(),
    check (num_nonnulls(document_id, chunk_id, observation_id) > 0),
    unique nulls not distinct (fact_id, document_id, chunk_id, observation_id)
);
comment on table exo_private.fact_sources is
    'Why a fact row holds: a document, a chunk (a document''s or a chat window''s) or an '
    'observation; one row per source. Documents and chunks are not foreign keys: a source that '
    'changes or disappears is the self-audit''s to find, not a cascade''s to erase.';
create index fact_sources_document_idx on exo_private.fact_sources (document_id) where document_id is not null;
create index fact_sources_chunk_idx on exo_private.fact_sources (chunk_id) where chunk_id is not null;
create index fact_sources_observation_idx on exo_private.fact_sources (observation_id)
    where observation_id is not null;

insert into exo_private.settings (key, value, description) values
    ('facts.observation_workspace', '"personal"',
     'The workspace of an observation that names none (exo_private.observe, exo observe).');
