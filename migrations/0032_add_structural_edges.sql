-- Exact edges from structure (issue 16): email headers and note frontmatter join chat windows as
-- sources of graph rows with origin 'structure' (sql/310_structural_graph.sql). Relations gain
-- when the exchange they record happened and how many messages it held; an email address is kept
-- as identity evidence of the Person it names; documents are found by their Message-ID.
alter table exo_private.relations
    add column first_at timestamptz,
    add column last_at timestamptz,
    add column message_count int check (message_count >= 0);
comment on column exo_private.relations.first_at is
    'Structural relations: when the first message of the exchange was sent (a chat pair''s first '
    'message in the window, an email''s Date, a note''s date); null for model relations.';
comment on column exo_private.relations.last_at is
    'Structural relations: when the last message of the exchange was sent; null for model relations.';
comment on column exo_private.relations.message_count is
    'Structural relations: messages the exchange held (the two people''s messages in a chat window, '
    '1 for an email); null where there are no messages (frontmatter, model relations).';

-- A document's structural relations are replaced whenever it is linked again.
create index relations_structure_document_idx on exo_private.relations (document_id) where origin = 'structure';

create table exo_private.entity_addresses (
    document_id   bigint not null references exo_private.documents (id) on delete cascade,
    window_id     bigint not null references exo_private.extraction_windows (id) on delete cascade,
    workspace     text not null references exo_private.workspaces (name),
    canonical_key text not null check (canonical_key <> ''),
    address       text not null check (address ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
    name          text not null,
    primary key (document_id, canonical_key, address)
);
create index entity_addresses_address_idx on exo_private.entity_addresses (workspace, address);
create index entity_addresses_window_idx on exo_private.entity_addresses (window_id);
create index entity_addresses_key_idx on exo_private.entity_addresses (workspace, canonical_key);
comment on table exo_private.entity_addresses is
    'Identity evidence: the email address a header gave with a Person''s name, in the document '
    'whose header it is (kept by canonical key, so it outlives a graph generation; it goes with '
    'the document''s windows, as its mentions do).';

create index documents_message_id_idx on exo_private.documents ((metadata ->> 'message_id'))
    where metadata ? 'message_id';
create index documents_in_reply_to_idx on exo_private.documents ((metadata ->> 'in_reply_to'))
    where metadata ? 'in_reply_to';

insert into exo_private.settings (key, value, description) values
    ('graph.structural', 'true',
     'Build exact graph edges from structure: email From/To/Cc (WROTE_TO, COPIED, REPLIED_TO), note '
     'frontmatter people and places, chat TALKED_WITH. false builds none (chat participants stay '
     'Person entities mentioned in their windows).'),
    ('graph.people_keys', '{"people": "WITH", "attendees": "ATTENDED", "with": "WITH", "author": "AUTHORED"}',
     'Frontmatter keys that name people, each with the predicate of its edges: the people of one '
     'key are joined pairwise by it, and a key whose predicate is AUTHORED joins its people to '
     'every other person the note names. Keys compare without case.'),
    ('graph.place_keys', '{"location": "LOCATED_IN"}',
     'Frontmatter keys that name places, each with the predicate that joins every person the note '
     'names to the place.'),
    ('graph.owner_addresses', '[]',
     'Email addresses of the owner (besides the owner''s chat identities that are addresses): a '
     'header naming one is the owner''s Person entity.');

-- chat_window_senders gains each sender's message count and first and last time (sql/205_chat_graph.sql).
drop function if exists exo_private.chat_window_senders(bigint[]);
