-- Chat history: people, per-source identities, conversations, participants and
-- messages with a stored full-text vector. Runs as exo_owner.

create table exo_private.people (
    id           bigint generated always as identity primary key,
    display_name text not null check (btrim(display_name) <> ''),
    is_owner     boolean not null default false,
    created_at   timestamptz not null default now()
);
comment on table exo_private.people is
    'People behind chat identities. Exactly one row is the owner (the person whose corpus this is); '
    'their identities across sources all point at it.';

-- At most one owner: a partial unique index over the rows that are the owner.
create unique index people_one_owner on exo_private.people (is_owner) where is_owner;

insert into exo_private.people (display_name, is_owner) values ('Me', true);

create table exo_private.chat_identities (
    id           bigint generated always as identity primary key,
    source       text not null check (source ~ '^[a-z][a-z0-9_]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$'),
    handle       text not null check (handle <> ''),
    display_name text,
    person_id    bigint references exo_private.people (id) on delete set null,
    created_at   timestamptz not null default now(),
    unique (source, handle)
);
comment on table exo_private.chat_identities is
    'One row per handle per chat source (chatgpt, whatsapp, jsonl or jsonl:<name>); person_id links '
    'the identity to a person, the owner''s identities to the owner.';

create index chat_identities_person on exo_private.chat_identities (person_id);

create table exo_private.chat_conversations (
    id            bigint generated always as identity primary key,
    source        text not null check (source ~ '^[a-z][a-z0-9_]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$'),
    external_id   text not null check (external_id <> ''),
    title         text,
    started_at    timestamptz,
    imported_from text check (imported_from !~ '/'),
    created_at    timestamptz not null default now(),
    unique (source, external_id)
);
comment on table exo_private.chat_conversations is
    'A conversation of one chat source, identified by the source''s own id (or the export''s file '
    'name); imported_from is the file name it first came from, never a path.';

create table exo_private.chat_participants (
    conversation_id bigint not null references exo_private.chat_conversations (id) on delete cascade,
    identity_id     bigint not null references exo_private.chat_identities (id) on delete cascade,
    primary key (conversation_id, identity_id)
);
comment on table exo_private.chat_participants is
    'Who took part in a conversation (every identity that sent a message in it).';

create index chat_participants_identity on exo_private.chat_participants (identity_id);

create table exo_private.chat_messages (
    id              bigint generated always as identity primary key,
    conversation_id bigint not null references exo_private.chat_conversations (id) on delete cascade,
    identity_id     bigint not null references exo_private.chat_identities (id),
    external_id     text,
    dedupe_key      text not null,
    sent_at         timestamptz,
    body            text not null,
    tsv             tsvector generated always as (to_tsvector('english', body)) stored,
    created_at      timestamptz not null default now(),
    unique (conversation_id, dedupe_key)
);
comment on table exo_private.chat_messages is
    'Chat messages. dedupe_key is "id:" plus the source''s message id where it has one, else '
    '"sha256:" over the raw values, so re-importing an export adds nothing; tsv feeds exo.search_messages.';

create index chat_messages_tsv on exo_private.chat_messages using gin (tsv);
create index chat_messages_conversation_time on exo_private.chat_messages (conversation_id, sent_at);
create index chat_messages_identity on exo_private.chat_messages (identity_id);
