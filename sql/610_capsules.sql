-- Capsules: extractive summaries (plpy/capsules.py) of long documents and of folders,
-- workspaces and much-mentioned entities, stamped with the generation of their sources.
-- Migrations 0027 and 0036 make the table, the capsules queue and the settings.
--
--   a document chunked (ingest, a changed file, a re-route)   -> a message {document_id}
--   exo_private.queue_capsules() (pg_cron every 10 minutes,    -> messages {workspace, scope, key}
--     after a deference change, exo worker retry-failed)          for groups due, {document_id} for
--                                                                 documents whose capsule is not fresh
--   the worker: exo_private.capsule_job(message)               -> the capsule, built or dropped
--   exo_private.capsule_states (a view)                        -> fresh, stale or withheld
--
-- The capsule stage of search (exo_private.stage_sql 'capsules') serves fresh capsules of every
-- scope as the chunks their matching lines come from, so a broad question that a folder's or a
-- workspace's capsule answers reaches its evidence. The packet's capsule section
-- (exo_private.packet_capsules) shows the document capsules of the documents it cites: a group
-- capsule is a map to evidence, not the summary of one cited source.

-- exo_private.capsule_folder: the folder a document lies in, as a folder capsule's scope_key.
create or replace function exo_private.capsule_folder(p_source_id int, p_path text)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select p_source_id::text || ':' || pg_catalog.regexp_replace(p_path, '/?[^/]*$', '')
$$;
comment on function exo_private.capsule_folder(int, text) is
    'A folder capsule''s scope_key: "source id:folder" of a document''s path ("12:notes/2020" for '
    'notes/2020/a.md of source 12; "12:" at the source''s root).';

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
           -- the capsule of an entity that is a deferred subject, by a name or an alias: withheld
           -- whatever it cites (queue_capsules drops it)
           when k.scope = 'entity' and k.scope_key in (select n.key from exo_private.deferred_subject_names() n)
           then 'withheld'
           else 'fresh'
       end as state
from exo_private.capsules k;
comment on view exo_private.capsule_states is
    'Each capsule''s state: fresh (its stamp matches its sources'' content hashes and every chunk it '
    'cites is there and uncharged), stale (a source changed, was deleted or re-chunked) or withheld '
    '(a chunk it cites was charged since it was built, or it is the capsule of an entity that is a '
    'deferred subject). Only a fresh capsule is served.';

-- exo_private.entity_mention_chunks: how many chunks mention each entity (by canonical key).
-- A view so that a filter on workspace and key reaches the mentions through their indexes.
create or replace view exo_private.entity_mention_chunks as
select e.workspace, e.canonical_key, count(distinct m.chunk_id)::int as chunks,
       max(d.stage_changed_at) as changed
from exo_private.mentions m
join exo_private.entities e on e.id = m.entity_id
join exo_private.documents d on d.id = m.document_id
where m.chunk_id is not null
group by e.workspace, e.canonical_key;
comment on view exo_private.entity_mention_chunks is
    'Per workspace and entity canonical key: the chunks that mention it (an entity capsule is due '
    'when this count differs from its capsules.mention_chunks) and the newest change of their '
    'documents'' stage.';

-- exo_private.capsule_builder_due: whether a capsule was made by another builder than the one set.
create or replace function exo_private.capsule_builder_due(p_builder text, p_note text, p_wanted text)
returns boolean
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- a fallback (p_note: why the model's capsule was not used) is not retried until its sources change
    select p_note is null and (p_builder like 'model-%') <> (p_wanted = 'model')
$$;
comment on function exo_private.capsule_builder_due(text, text, text) is
    'True when a capsule built by p_builder must be built again because capsules.builder is now '
    'p_wanted; an extractive fallback with its reason (p_note) is not.';

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

-- exo_private.build_group_capsule: the capsules queue's job for a folder, workspace or entity.
create or replace function exo_private.build_group_capsule(p_workspace text, p_scope text, p_key text)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include capsules
if p_scope not in ("folder", "workspace", "entity"):
    plpy.execute(plpy.prepare("select exo_private.invalid_argument($1)", ["text"]),
                 ["p_scope must be folder, workspace or entity, got %r" % (p_scope,)])
if p_workspace is None or p_key is None:
    plpy.execute("select exo_private.invalid_argument('p_workspace and p_key must not be null')")
return build_group(plpy, SD, p_workspace, p_scope, p_key)
$$;
comment on function exo_private.build_group_capsule(text, text, text) is
    'Build (or rebuild, or drop) the capsule of a folder (p_key: exo_private.capsule_folder), a '
    'workspace (p_key: its name) or an entity (p_key: its canonical key) of p_workspace: {status: '
    'built, fresh (current, same sources), too_few_documents, too_few_mentions, deferred_subject or too_little_text '
    '(none, any old one dropped), capsule_id, tokens, sentences, candidates, charged_skipped}. '
    'Sentences of charged chunks are never taken.';

-- exo_private.capsule_job: one message of the capsules queue, whatever its scope.
create or replace function exo_private.capsule_job(message jsonb)
returns jsonb
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if jsonb_typeof(message -> 'document_id') = 'number' then
        return exo_private.build_capsule((message ->> 'document_id')::bigint);
    end if;
    if jsonb_typeof(message -> 'scope') is distinct from 'string' then
        perform exo_private.invalid_argument(
            format('message must hold document_id or {workspace, scope, key}, got %s', exo_private.quoted(message::text)));
    end if;
    return exo_private.build_group_capsule(message ->> 'workspace', message ->> 'scope', message ->> 'key');
end
$$;
comment on function exo_private.capsule_job(jsonb) is
    'Run one capsules-queue message: {document_id} builds a document''s capsule (build_capsule), '
    '{workspace, scope, key} a folder''s, workspace''s or entity''s (build_group_capsule).';

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

-- exo_private.queue_capsules: queue every capsule that is missing, not fresh or behind its sources.
create or replace function exo_private.queue_capsules(p_workspace text default null)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    due jsonb[];
    setting jsonb := (select jsonb_object_agg(s.key, s.value) from exo_private.settings s
                      where s.key like 'capsules.%');
    min_chars int := (setting ->> 'capsules.min_document_chars')::int;
    min_documents int := (setting ->> 'capsules.folder_min_documents')::int;
    min_mentions int := (setting ->> 'capsules.entity_min_mentions')::int;
    wanted_builder text := setting ->> 'capsules.builder';
begin
    if p_workspace is not null then
        perform exo_private.check_workspaces(array[p_workspace]);
    end if;
    with live as materialized (
        select d.id, d.workspace, d.source_id, d.path, d.stage_changed_at
        from exo_private.documents d
        where d.stage in ('chunked', 'embedded', 'graphed') and d.conversation_id is null
          and (p_workspace is null or d.workspace = p_workspace)
    ), handled as (
        -- when each message was last worked (a job that built nothing is not sent again until
        -- its sources change)
        select a.message, max(a.archived_at) as at
        from pgmq.a_capsules a
        group by a.message
    ), documents_due as (
        select jsonb_build_object('document_id', d.id) as message, d.id as n
        from live d
        left join exo_private.capsules k on k.document_id = d.id
        left join exo_private.capsule_states s on s.capsule_id = k.id
        where k.id is not null and (s.state <> 'fresh' or exo_private.capsule_builder_due(k.builder, k.note, wanted_builder))
           or k.id is null
              and (select max(c.char_end) from exo_private.chunks c
                   where c.workspace = d.workspace and c.document_id = d.id) >= min_chars
              and not exists (select 1 from handled h
                              where h.message = jsonb_build_object('document_id', d.id)
                                and h.at > d.stage_changed_at)
    ), groups as (
        select l.workspace, 'folder' as scope, exo_private.capsule_folder(l.source_id, l.path) as key,
               max(l.stage_changed_at) as changed, null::int as mentions
        from live l
        group by 1, 3
        having count(*) >= min_documents
        union all
        select l.workspace, 'workspace', l.workspace, max(l.stage_changed_at), null
        from live l
        group by 1
        having count(*) >= min_documents
        union all
        select n.workspace, 'entity', n.canonical_key, n.changed, n.chunks
        from exo_private.entity_mention_chunks n
        where n.chunks >= min_mentions and (p_workspace is null or n.workspace = p_workspace)
          -- no capsule sums up a deferred subject
          and n.canonical_key not in (select d.key from exo_private.deferred_subject_names() d)
    ), groups_due as (
        -- missing (and not worked since its documents changed), not fresh, built before one of its
        -- documents changed, by another builder, or (an entity) from another set of mentions
        select g.workspace, g.scope, g.key
        from groups g
        left join exo_private.capsules k on k.workspace = g.workspace and k.scope = g.scope and k.scope_key = g.key
        left join exo_private.capsule_states s on s.capsule_id = k.id
        where k.id is null
              and not exists (select 1 from handled h
                              where h.message = jsonb_build_object('workspace', g.workspace, 'scope', g.scope,
                                                                   'key', g.key)
                                and h.at > g.changed)
           or k.id is not null
              and (s.state <> 'fresh' or g.changed > k.built_at
                   or exo_private.capsule_builder_due(k.builder, k.note, wanted_builder)
                   or g.scope = 'entity' and k.mention_chunks is distinct from g.mentions)
        union
        -- a group that no longer qualifies: its job drops the capsule
        select k.workspace, k.scope, k.scope_key
        from exo_private.capsules k
        where k.scope <> 'document' and (p_workspace is null or k.workspace = p_workspace)
          and not exists (select 1 from groups g
                          where g.workspace = k.workspace and g.scope = k.scope and g.key = k.scope_key)
    ), wanted as (
        select x.message, 0 as kind, x.n, null::text as workspace, null::text as scope, null::text as key
        from documents_due x
        union all
        select jsonb_build_object('workspace', g.workspace, 'scope', g.scope, 'key', g.key), 1, null,
               g.workspace, g.scope, g.key
        from groups_due g
    )
    -- document capsules first (a group reads them), groups in a stable order; none queued twice
    select coalesce(array_agg(w.message order by w.kind, w.n, w.workspace, w.scope, w.key), '{}') into due
    from wanted w
    where not exists (select 1 from pgmq.q_capsules q where q.message = w.message);
    if due <> '{}' then
        perform pgmq.send_batch('capsules', due);
    end if;
    return cardinality(due);
end
$$;
comment on function exo_private.queue_capsules(text) is
    'Queue (capsules queue) every capsule due in p_workspace (null: all), unless its message waits '
    'in the queue already: documents whose capsule is stale, withheld or by another builder than '
    'capsules.builder, or long enough and without one; folders and workspaces with '
    'capsules.folder_min_documents live documents and entities named in '
    'capsules.entity_min_mentions chunks whose capsule is missing, not fresh, older than a change '
    'to one of their documents, by another builder, or (an entity) built from another count of '
    'mentioning chunks; and group capsules whose group no longer qualifies (their job drops them). '
    'A missing capsule whose message was worked (archived) since its documents last changed is not '
    'queued again: that job found too little to build. Returns how many were queued. Run every 10 '
    'minutes by pg_cron (exo-capsules) and when capsules.builder changes.';

-- A new capsules.builder re-makes every capsule the other builder made (not the fallbacks).
create or replace function exo_private.capsule_builder_changed()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    perform exo_private.queue_capsules();
    return new;
end
$$;
comment on function exo_private.capsule_builder_changed() is
    'Trigger: capsules.builder changed, so queue the capsules the other builder made.';

create or replace trigger capsule_builder_changed
    after update on exo_private.settings
    for each row
    when (new.key = 'capsules.builder' and old.value is distinct from new.value)
    execute function exo_private.capsule_builder_changed();

-- Every 10 minutes, as the writer (as exo-audit).
select exo_private.want_cron_job(
    'exo-capsules', '*/10 * * * *', 'select exo_private.queue_capsules() from exo_private.lift_backend_memory()', 'exo_writer');

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
