-- The learned router (issue 14): naive Bayes word counts per workspace, trained on the
-- documents already in a workspace by a decision the router did not make itself
-- (sql/105_routing.sql), and the settings it reads.

create table exo_private.router_state (
    singleton   boolean primary key default true check (singleton),
    generation  bigint,
    fingerprint text,
    documents   int not null default 0,
    max_chars   int,
    term_cap    int,
    trained_at  timestamptz
);
comment on table exo_private.router_state is
    'One row: the learned router''s generation (bumped by each training; null before the first), '
    'the fingerprint of the training set it was trained on, and the counting rules it used.';
insert into exo_private.router_state default values;

create table exo_private.router_classes (
    workspace text primary key references exo_private.workspaces (name) on delete cascade,
    documents int not null check (documents > 0),
    terms     bigint not null check (terms >= 0)
);
comment on table exo_private.router_classes is
    'Per workspace: how many documents trained the learned router and how many vocabulary words they hold.';

create table exo_private.router_terms (
    term      text not null,
    workspace text not null references exo_private.workspaces (name) on delete cascade,
    count     int not null check (count > 0),
    primary key (term, workspace)
);
comment on table exo_private.router_terms is
    'The learned router''s vocabulary: how often each word occurs in each workspace''s training documents.';

insert into exo_private.settings (key, value, description) values
    ('routing.learned_threshold', '0.99',
     'The learned router routes a document when its posterior reaches this; below it, quarantine.'),
    ('routing.learned_min_documents', '5',
     'A workspace joins the learned router once this many documents trained it; with fewer than two '
     'such workspaces the keyword lists route.'),
    ('routing.learned_vocabulary', '5000',
     'The learned router keeps the words found in most training documents, at most this many.'),
    ('routing.learned_max_chars', '20000',
     'The learned router reads the first this-many characters of a document.'),
    ('routing.learned_term_cap', '3',
     'The learned router counts a word at most this many times per document.'),
    ('routing.learned_retrain_share', '0.1',
     'An ingest retrains the learned router at its start when the number of training documents changed '
     'by this share since the last training; other changes wait for the scheduled training (pg_cron, '
     'every 10 minutes) or exo quarantine learn.');
