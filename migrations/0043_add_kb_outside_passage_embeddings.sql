-- The personal stage over outside documents by meaning (issue 17): one vector per kept passage
-- of an outside document and embedding model, as chunks have theirs. The worker embeds them
-- (an embed message {outside_id} per document that got a new passage, sent by the recording path
-- exo_private.kb_outside_write); exo.kb_outside_retrieve compares them with the question's vector
-- by cosine similarity, and matches a passage without a vector yet by its words.
create table exo_private.kb_outside_passage_embeddings (
    outside_id bigint not null,
    digest     text not null,
    model_id   int not null references exo_private.embedding_models (id),
    embedding  vector not null,
    primary key (outside_id, digest, model_id),
    foreign key (outside_id, digest) references exo_private.kb_outside_passages (outside_id, digest)
        on delete cascade
);
comment on table exo_private.kb_outside_passage_embeddings is
    'One vector per kept passage of an outside document (exo_private.kb_outside_passages) and '
    'embedding model, of the passage''s text; written by the worker '
    '(exo_private.store_outside_embeddings), read by exo_private.kb_outside_personal.';

-- The personal stage's functions take the query's vector and say how each passage matched;
-- exo.kb_outside_retrieve takes the caller's query_embedding.
drop function if exists exo_private.kb_outside_personal(bigint, text, int);
drop function if exists exo_private.kb_outside_provenance(text, text[], text[]);
drop function if exists exo.kb_outside_retrieve(text, text, jsonb, int);

-- Passages kept before this have no vector: one embed message per document that has any.
select pgmq.send_batch('embed', array_agg(jsonb_build_object('outside_id', o.id)))
from exo_private.kb_outside_documents o
where exists (select 1 from exo_private.kb_outside_passages s where s.outside_id = o.id)
having count(*) > 0;
