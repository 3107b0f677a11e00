-- Capsules (issue 15): extractive summaries of long documents, each line traceable to the
-- chunk it was read from, stamped with a generation (a hash over its sources' content hashes
-- and the builder's version) so that a capsule whose sources changed is known stale and never
-- served as current. Built by the worker from the capsules queue (one message {document_id}
-- per document); sql/610_capsules.sql holds the functions and the trigger that fills the queue.

create table exo_private.capsules (
    id          bigint generated always as identity primary key,
    workspace   text not null references exo_private.workspaces (name),
    scope       text not null check (scope in ('document')),
    document_id bigint references exo_private.documents (id) on delete cascade,
    sources     bigint[] not null check (cardinality(sources) > 0),
    builder     text not null,
    stamp       text not null,
    body        text not null,
    tokens      int not null,
    sentences   jsonb not null,
    chunk_ids   bigint[] not null,
    tsv         tsvector generated always as (to_tsvector('english', body)) stored,
    built_at    timestamptz not null default now(),
    unique (document_id),
    check ((scope = 'document') = (document_id is not null))
);
create index capsules_tsv_idx on exo_private.capsules using gin (tsv);
create index capsules_workspace_idx on exo_private.capsules (workspace);
comment on table exo_private.capsules is
    'Summaries of 400 to 1,200 tokens (this slice: one per document over capsules.min_document_chars), '
    'derived and rebuildable; the view exo_private.capsule_states says whether one is fresh.';
comment on column exo_private.capsules.sources is
    'The documents whose content hashes (documents.sha256) make the stamp.';
comment on column exo_private.capsules.builder is
    'The builder and its version (extractive-1: plpy/capsules.py).';
comment on column exo_private.capsules.stamp is
    'The generation: exo_private.capsule_stamp(builder, the sources'' sha256 at build time).';
comment on column exo_private.capsules.sentences is
    'One {chunk_id, start, end} per line of body: the line is that chunk''s body[start:end] with '
    'its whitespace collapsed.';
comment on column exo_private.capsules.chunk_ids is 'The chunks the capsule cites, each once.';

select pgmq.create('capsules');
select pgmq.enable_notify_insert('capsules');

-- Merged into the stored value, so an owner's other choices stay.
update exo_private.settings
   set value = value || '{"capsules": 300}'::jsonb
 where key = 'worker.visibility_timeout_s' and not value ? 'capsules';

insert into exo_private.settings (key, value, description) values
    ('capsules.min_document_chars', '4000',
     'A document of at least this many characters gets a capsule (an extractive summary).'),
    ('capsules.min_tokens', '400',
     'The smallest capsule (about four characters a token); a document with less prose outside '
     'charged chunks gets none.'),
    ('capsules.max_tokens', '1200', 'The largest capsule.'),
    ('packet.capsules', '{"max": 2, "chars": 1200, "share": 0.3}',
     'The packet''s capsule section: at most max fresh capsules of the documents its evidence '
     'cites, each cut to chars characters, all of them within share of the token budget.');

-- Documents chunked before there were capsules get theirs now.
with due as (
    select jsonb_build_object('document_id', d.id) as message
    from exo_private.documents d
    where d.stage in ('chunked', 'embedded', 'graphed') and d.conversation_id is null
      and (select max(c.char_end) from exo_private.chunks c
           where c.workspace = d.workspace and c.document_id = d.id) >= 4000
    order by d.id
)
select pgmq.send_batch('capsules', array(select due.message from due))
where exists (select 1 from due);
