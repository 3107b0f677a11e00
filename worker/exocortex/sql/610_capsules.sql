-- Capsules: extractive summaries of long documents (plpy/capsules.py), stamped with the
-- generation of their sources. Migration 0027 makes the table, the capsules queue and the
-- settings.
--
--   a document chunked (ingest, a changed file, a re-route)   -> a message on the capsules queue
--   the worker: exo_private.build_capsule(document_id)        -> the capsule, built or dropped
--   exo_private.capsule_states (a view)                        -> fresh, stale or withheld
--
-- The capsule stage of search (exo_private.stage_sql 'capsules') and the packet's capsule
-- section (exo_private.packet_capsules) serve only fresh capsules, and always cite the chunks
-- a capsule's lines come from.

-- exo_private.capsule_stamp: the generation of a capsule: its builder and its sources' content hashes.
create or replace function exo_private.capsule_stamp(p_builder text, p_hashes text[])
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
        p_builder || E'\n' || pg_catalog.array_to_string(
            array(select h from unnest(p_hashes) h order by h), E'\n', '-'), 'UTF8')), 'hex')
$$;
comment on function exo_private.capsule_stamp(text, text[]) is
    'A capsule''s generation: the sha256 (hex) of its builder and its sources'' content hashes '
    '(in sorted order; a missing hash counts as -).';

-- exo_private.capsule_states: whether each capsule may be served as current.
-- A view, not a function: the planner inlines it into the queries that join it (the stage, the
-- packet), so its checks cost an index lookup or two per capsule.
create or replace view exo_private.capsule_states as
select k.id as capsule_id,
       case
           -- a source gone, no longer chunked, or with other content (a lookup by key each)
           when not coalesce((select count(*) = cardinality(k.sources)
                                     and bool_and(d.stage in ('chunked', 'embedded', 'graphed'))
                                     and k.stamp = exo_private.capsule_stamp(k.builder, array_agg(d.sha256))
                              from exo_private.documents d where d.id = any (k.sources)), false)
           then 'stale'
           -- a cited chunk re-made since (its line would cite nothing)
           when (select count(*) from exo_private.chunks c
                 where c.workspace = k.workspace and c.id = any (k.chunk_ids)) < cardinality(k.chunk_ids)
           then 'stale'
           -- a cited chunk charged since (the deference list grew): withheld like the chunk
           when exists (select 1 from exo_private.chunks c
                        where c.workspace = k.workspace and c.id = any (k.chunk_ids)
                          and c.charged_subjects <> '{}')
           then 'withheld'
           else 'fresh'
       end as state
from exo_private.capsules k;
comment on view exo_private.capsule_states is
    'Each capsule''s state: fresh (its stamp matches its sources'' content hashes and every chunk it '
    'cites is there and uncharged), stale (a source changed, was deleted or re-chunked) or withheld '
    '(a chunk it cites was charged since it was built). Only a fresh capsule is served.';

-- exo_private.build_capsule: the capsules queue's job for one document (plpy/capsules.py).
create or replace function exo_private.build_capsule(p_document_id bigint)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include capsules
if p_document_id is None:
    plpy.execute("select exo_private.invalid_argument('p_document_id must not be null')")
return build_document(plpy, SD, p_document_id)
$$;
comment on function exo_private.build_capsule(bigint) is
    'Build (or rebuild) the extractive capsule of one document: {status: built, fresh (current '
    'already), gone, not_live, too_small or too_little_text (no capsule, any old one dropped), '
    'capsule_id, tokens, sentences, candidates, charged_skipped}. Sentences of charged chunks are '
    'never taken.';

-- exo_private.queue_capsule: a document chunked again is queued for its capsule.
create or replace function exo_private.queue_capsule()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- Big enough for a capsule, or holding one that may have to go.
    if new.conversation_id is null and new.workspace is not null
       and ((select max(c.char_end) from exo_private.chunks c
             where c.workspace = new.workspace and c.document_id = new.id)
            >= (select (s.value #>> '{}')::int from exo_private.settings s
                where s.key = 'capsules.min_document_chars')
            or exists (select 1 from exo_private.capsules k where k.document_id = new.id)) then
        perform pgmq.send('capsules', jsonb_build_object('document_id', new.id));
    end if;
    return null;
end
$$;
comment on function exo_private.queue_capsule() is
    'Trigger: a document that reaches stage chunked (ingest, a changed file, a re-route) and is '
    'long enough for a capsule, or has one, gets a message on the capsules queue.';

create or replace trigger documents_queue_capsule
    after update of stage on exo_private.documents
    for each row when (new.stage = 'chunked')
    execute function exo_private.queue_capsule();

-- exo_private.queue_capsules: queue every document whose capsule is missing or not fresh.
create or replace function exo_private.queue_capsules(p_workspace text default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    due bigint[];
    min_chars int := (select (s.value #>> '{}')::int from exo_private.settings s
                      where s.key = 'capsules.min_document_chars');
begin
    if p_workspace is not null then
        perform exo_private.check_workspaces(array[p_workspace]);
    end if;
    select coalesce(array_agg(d.id order by d.id), '{}') into due
    from exo_private.documents d
    left join exo_private.capsules k on k.document_id = d.id
    left join exo_private.capsule_states s on s.capsule_id = k.id
    where d.stage in ('chunked', 'embedded', 'graphed') and d.conversation_id is null
      and (p_workspace is null or d.workspace = p_workspace)
      and (k.id is not null and s.state <> 'fresh'
           or k.id is null and (select max(c.char_end) from exo_private.chunks c
                                where c.workspace = d.workspace and c.document_id = d.id) >= min_chars)
      and not exists (select 1 from pgmq.q_capsules q where (q.message ->> 'document_id')::bigint = d.id);
    if due <> '{}' then
        perform pgmq.send_batch('capsules', array(select jsonb_build_object('document_id', x) from unnest(due) x));
    end if;
    return cardinality(due);
end
$$;
comment on function exo_private.queue_capsules(text) is
    'Queue (capsules queue) every live document of p_workspace (null: all) whose capsule is stale '
    'or withheld, or that is long enough and has none, unless it waits in the queue already; '
    'returns how many were queued.';

-- exo_private.packet_capsules: the capsules of the documents a packet cites, with their state.
create or replace function exo_private.packet_capsules(p_documents bigint[])
returns table (
    document_id bigint, capsule_id bigint, state text, body text, sentences jsonb, chunk_ids bigint[], builder text
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select k.document_id, k.id, s.state, k.body, k.sentences, k.chunk_ids, k.builder
    from exo_private.capsules k
    join exo_private.capsule_states s on s.capsule_id = k.id
    where k.document_id = any (p_documents)
$$;
comment on function exo_private.packet_capsules(bigint[]) is
    'The capsule of each of p_documents that has one: its state (exo_private.capsule_states), text, '
    'sentences (the chunk of each line), cited chunks and builder; the packet shows the fresh ones and says which were stale.';
