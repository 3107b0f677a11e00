-- The first schema: the public API schema, workspaces and settings.
-- Runs as exo_owner (the migrator sets the role); exo_private exists already.

create schema exo;
comment on schema exo is
    'The exocortex API: the only schema agents (exo_reader) may use. \df+ exo.* is the manual.';
comment on schema exo_private is
    'exocortex internals: tables and helper functions behind the exo API.';

create table exo_private.workspaces (
    name        text primary key
                check (name ~ '^[a-z][a-z0-9_]{1,39}$'),
    description text not null,
    created_at  timestamptz not null default now()
);
comment on table exo_private.workspaces is
    'Federation units: each has its own graph and indexes; search fans out over them.';

insert into exo_private.workspaces (name, description) values
    ('technical', 'Technical notes, code, systems, work projects'),
    ('creative', 'Fiction, poetry, drafts and other creative writing'),
    ('personal', 'Diary, relationships, health and personal history'),
    ('administrative', 'Finance, contracts, official letters and other paperwork');

create table exo_private.settings (
    key         text primary key
                check (key ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$'),
    value       jsonb not null,
    description text not null,
    updated_at  timestamptz not null default now()
);
comment on table exo_private.settings is
    'Runtime configuration read inside the database (thresholds, windows, model endpoints).';
