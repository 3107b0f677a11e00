-- Two things that share a name (issue 16): an entity is one per (workspace, generation,
-- canonical key, sense), where sense is '' for the one thing a name means unless the evidence
-- clearly says it means two. entity_senses holds that evidence, by canonical key, so it outlives
-- a generation: a structural Place whose name is also a correspondent's or a chat participant's
-- (found by exo_private.find_type_senses), or a person's correction (exo entity split --address
-- or --type). exo_private.entity_sense decides which sense a mention is.
alter table exo_private.entities
    add column sense text not null default '',
    drop constraint entities_workspace_generation_canonical_key_key,
    add constraint entities_workspace_generation_canonical_key_sense_key
        unique (workspace, generation, canonical_key, sense);
comment on column exo_private.entities.sense is
    'Which of the things sharing this name the entity is: '''' for the one a name means unless '
    'entity_senses says it means more; else that sense''s label (an email address, or a type in '
    'lower case such as ''place'').';

create table exo_private.entity_senses (
    workspace     text not null references exo_private.workspaces (name) on delete cascade,
    canonical_key text not null check (canonical_key <> ''),
    sense         text not null check (sense <> ''),
    anchor_kind   text not null check (anchor_kind in ('address', 'type')),
    anchor        text not null check (anchor <> ''),
    how           text not null check (how in ('structure', 'manual')),
    made_at       timestamptz not null default now(),
    primary key (workspace, canonical_key, anchor_kind, anchor)
);
comment on table exo_private.entity_senses is
    'A second thing sharing a name, and how a mention is known to be it: anchor_kind address (a '
    'header giving the name with that address, and the rest of that header''s document), or type '
    '(a mention of the name as that entity type). how is structure (the structure of the corpus '
    'named it as a Place and as a Person) or manual (exo entity split). Kept by canonical key: it '
    'outlives every graph generation.';

-- upsert_entity takes the sense and chat_window_senders returns it (sql/300_graph.sql and
-- sql/205_chat_graph.sql make them again).
drop function if exists exo_private.upsert_entity(text, int, text, text, text, boolean);
drop function if exists exo_private.chat_window_senders(bigint[]);
