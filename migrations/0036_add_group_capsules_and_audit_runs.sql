-- Issue 15, second slice: capsules per folder, per workspace and per entity (beside the
-- document capsules of 0027), the chat-model capsule builder's settings, and the self-audit's
-- runs kept in a table, so exo.status reads counts instead of re-auditing.

-- A capsule's scope: a document (document_id), or a group named by scope_key: a folder (the
-- source's root id and the folder's path, "12:notes/2020"), a workspace (its name) or an entity
-- (its canonical key).
alter table exo_private.capsules
    drop constraint capsules_check,
    drop constraint capsules_scope_check,
    add column scope_key text,
    add column note text,
    add constraint capsules_scope_check check (scope in ('document', 'folder', 'workspace', 'entity')),
    add constraint capsules_check check ((scope = 'document') = (document_id is not null)),
    add constraint capsules_scope_key_check check ((scope = 'document') = (scope_key is null));
create unique index capsules_group_idx on exo_private.capsules (workspace, scope, scope_key)
    where scope <> 'document';
comment on column exo_private.capsules.scope_key is
    'What a group capsule summarises: a folder ("source id:folder path"), a workspace (its name) or '
    'an entity (its canonical key); null for a document capsule.';
comment on column exo_private.capsules.note is
    'Why the builder fell back to the extractive one (the model''s reply failed validation, the chat '
    'endpoint failed), or null.';
comment on column exo_private.capsules.builder is
    'The builder and its version: extractive-1 (plpy/capsules.py) or model-1 (the chat model''s '
    'rewrite of the extractive lines, each sentence validated against the chunk it cites).';
comment on column exo_private.capsules.sentences is
    'One entry per line of body: {chunk_id, start, end} (extractive: the line is that chunk''s '
    'body[start:end] with its whitespace collapsed) or {chunk_id} (model-1: the line is grounded in '
    'that chunk).';
comment on table exo_private.capsules is
    'Summaries of 400 to 1,200 tokens per document over capsules.min_document_chars and per folder, '
    'workspace and much-mentioned entity, derived and rebuildable; the view '
    'exo_private.capsule_states says whether one is fresh.';

insert into exo_private.settings (key, value, description) values
    ('capsules.folder_min_documents', '3',
     'A folder holding at least this many live documents (directly, not in its subfolders) gets a '
     'capsule.'),
    ('capsules.entity_min_mentions', '20',
     'An entity mentioned in at least this many chunks of its workspace gets a capsule.'),
    ('capsules.group_max_documents', '200',
     'A folder or workspace capsule reads at most this many of its documents, the most recently '
     'written first (an entity capsule: of the chunks that mention it).'),
    ('capsules.builder', '"extractive"',
     'extractive (stdlib, deterministic) or model (the chat endpoint, each sentence citing its '
     'chunk; output that fails validation falls back to extractive and says why in capsules.note).');

-- The self-audit's runs: what exo_private.audit() found and the facts' retirement at that moment.
create table exo_private.audit_runs (
    id         bigint generated always as identity primary key,
    ran_at     timestamptz not null default now(),
    findings   jsonb not null,
    closed_now int not null,
    facts      bigint not null,
    closed     bigint not null,
    by_reason  jsonb not null
);
comment on table exo_private.audit_runs is
    'One row per run of exo_private.audit() (pg_cron daily, exo audit): findings (per reason, as '
    'found), closed_now (facts it closed), facts (all rows), closed (rows no longer current) and '
    'by_reason (per close reason: closed rows). exo.audit_summary reads the newest.';
