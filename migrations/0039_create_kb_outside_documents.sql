-- Outside documents (issue 17, "Drop-in retrievers"): documents exocortex does not hold, returned by a
-- user's own retriever that exocortex wraps (exocortex.integrations.*.LifecycleRetriever). Each is
-- known to one profile by the key its retriever gives it (a metadata value), with the passages of it
-- that retriever returned, so the personal stage can match a saved one by its words. A personal base
-- item (exo_private.kb_items) is now of a document or of an outside document: the same states,
-- transitions, settings, decay and provenance.

create table exo_private.kb_outside_documents (
    id           bigint generated always as identity primary key,
    profile_id   bigint not null references exo_private.kb_profiles (id) on delete cascade,
    key          text not null check (length(key) between 1 and 500),
    title        text check (length(title) <= 500),
    last_seen_at timestamptz not null,
    unique (profile_id, key)
);
comment on table exo_private.kb_outside_documents is
    'Documents exocortex does not hold, as a profile''s wrapped retriever identifies them (key: the '
    'value of its id metadata key; title: its title key''s, if any). Per profile: what one user''s '
    'retriever returned is never shown to another. At most kb.outside_documents per profile.';

create table exo_private.kb_outside_passages (
    outside_id bigint not null references exo_private.kb_outside_documents (id) on delete cascade,
    digest     text not null,
    body       text not null check (length(body) between 1 and 8000),
    seen_at    timestamptz not null,
    tsv        tsvector generated always as (to_tsvector('english', body)) stored,
    primary key (outside_id, digest)
);
create index kb_outside_passages_tsv_idx on exo_private.kb_outside_passages using gin (tsv);
comment on table exo_private.kb_outside_passages is
    'The passages (a retriever''s page_content, its first 8,000 characters) of an outside document '
    'its retriever returned, the kb.outside_passages most recently returned kept; digest is the md5 '
    'of the body. The personal stage matches a saved outside document''s passages by their words.';

-- A personal base item is of a document or of an outside document: the primary key gives way to
-- one unique key each (kb_write's "on conflict do nothing" covers both).
alter table exo_private.kb_items drop constraint kb_items_pkey;
alter table exo_private.kb_items alter column document_id drop not null;
alter table exo_private.kb_items
    add column outside_id bigint references exo_private.kb_outside_documents (id) on delete cascade,
    add constraint kb_items_profile_document_key unique (profile_id, document_id),
    add constraint kb_items_profile_outside_key unique (profile_id, outside_id),
    add constraint kb_items_one_subject check (num_nonnulls(document_id, outside_id) = 1);
comment on column exo_private.kb_items.outside_id is
    'The outside document (exo_private.kb_outside_documents) the item is of, when not a document of '
    'exocortex''s own (document_id).';

insert into exo_private.settings (key, value, description) values
    ('kb.outside_documents', '10000',
     'A profile''s wrapped retriever may make at most this many outside documents known to its base.'),
    ('kb.outside_passages', '8',
     'Of an outside document, the passages its retriever returned most recently are kept, at most this many.');
