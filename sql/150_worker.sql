-- The worker's queues: who holds which message, taking back a dead worker's work,
-- the work that waits and what holds it, and bringing failed and dead-lettered work
-- back. The queues are embed (message {chunk_id, workspace}, or {outside_id} for a personal
-- base's outside document: sql/710_kb_outside.sql) and extract ({window_id, workspace});
-- dead_letter holds {queue, msg_id, read_ct, message, last_error}.
-- The worker's writes are the functions read_jobs, complete_embedding and complete_extraction.
--
-- SQLSTATEs the worker tells apart (class EX, exocortex):
--   EX001  the job's target vanished (its window was re-made or deleted while the model ran):
--          archive the message, count it skipped.
--   EX002  the reply is stale (the workspace's graph now belongs to another extraction model,
--          which queued the window again): archive the message, count it skipped.

-- exo_private.queue_target_key: the message key naming a queue's target (chunk_id, window_id, document_id).
create or replace function exo_private.queue_target_key(p_queue text)
returns text
language plpgsql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    case p_queue
        when 'embed' then return 'chunk_id';
        when 'extract' then return 'window_id';
        when 'ocr' then return 'document_id';
        when 'events' then return 'document_id';
        when 'capsules' then return 'document_id';
        else raise exception 'queue must be embed, extract, ocr, events or capsules, got %', coalesce(quote_literal(p_queue), 'null')
                 using errcode = 'invalid_parameter_value';
    end case;
end
$$;
comment on function exo_private.queue_target_key(text) is
    'The key of a queue''s messages that names its target: chunk_id (embed), window_id (extract) or '
    'document_id (ocr, sql/160_ocr.sql; events, sql/660_events.sql; capsules, sql/610_capsules.sql); '
    'raises for any other queue.';

-- exo_private.served_queues: the queues the worker serves, in the order it fills them.
create or replace function exo_private.served_queues()
returns text[]
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select array['embed', 'ocr', 'extract', 'events', 'capsules']
$$;
comment on function exo_private.served_queues() is
    'The queues exo worker serves (worker/loop.py QUEUES, in the same order).';

-- exo_private.return_messages: give messages back at once, their last read not counted.
create or replace function exo_private.return_messages(p_queue text, p_msg_ids bigint[])
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    returned int;
begin
    -- The table name comes from the fixed set that queue_target_key accepts.
    perform exo_private.queue_target_key(p_queue);
    execute format('update pgmq.%I set vt = pg_catalog.clock_timestamp(), '
                   'read_ct = greatest(read_ct - 1, 0) where msg_id = any($1)', 'q_' || p_queue)
        using p_msg_ids;
    get diagnostics returned = row_count;
    delete from exo_private.worker_claims c where c.queue = p_queue and c.msg_id = any(p_msg_ids);
    return returned;
end
$$;
comment on function exo_private.return_messages(text, bigint[]) is
    'Make messages visible now and take back the read that fetched them (read_ct - 1): the worker '
    'found the model endpoint down, so that read must not count toward dead-lettering. Returns how '
    'many messages were returned.';

-- exo_private.reap_workers: mark workers without a heartbeat dead and take back their messages.
create or replace function exo_private.reap_workers(p_dead_after_s double precision)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    gone record;
    released int := 0;
begin
    update exo_private.workers w
       set stopped_at = w.heartbeat_at,
           stop_reason = format('dead: no heartbeat since %s (more than %s s)', w.heartbeat_at, p_dead_after_s)
     where w.stopped_at is null
       and w.heartbeat_at < pg_catalog.now() - pg_catalog.make_interval(secs => p_dead_after_s);
    -- A stopped worker holds nothing: what it claimed is visible again (that read still counts).
    for gone in
        with claimed as (
            delete from exo_private.worker_claims c
             using exo_private.workers w
             where w.id = c.worker_id and w.stopped_at is not null
            returning c.queue, c.msg_id
        )
        select c.queue, array_agg(c.msg_id) as ids from claimed c group by c.queue
    loop
        perform exo_private.queue_target_key(gone.queue);  -- a queue of ours, never another name
        released := released + (select count(*) from pgmq.set_vt(gone.queue, gone.ids, 0));
    end loop;
    return released;
end
$$;
comment on function exo_private.reap_workers(double precision) is
    'Mark every worker whose heartbeat is older than p_dead_after_s seconds stopped (stop_reason '
    '''dead: ...''), and make the messages that stopped workers still claimed visible at once. '
    'Returns how many messages were taken back.';

-- exo_private.queue_messages: the messages of the worker's queues, and who holds each.
create or replace function exo_private.queue_messages(p_dead_after_s double precision)
returns table (queue text, msg_id bigint, enqueued_at timestamptz, visible_at timestamptz, state text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select q.queue, q.msg_id, q.enqueued_at, q.vt,
           case when q.vt <= pg_catalog.clock_timestamp() then 'pending'
                when w.id is null then 'unclaimed'
                when w.stopped_at is not null
                  or w.heartbeat_at < pg_catalog.now() - pg_catalog.make_interval(secs => p_dead_after_s)
                then 'dead'
                else 'live' end
    from (select 'embed'::text as queue, e.msg_id, e.enqueued_at, e.vt from pgmq.q_embed e
          union all
          select 'extract', x.msg_id, x.enqueued_at, x.vt from pgmq.q_extract x
          union all
          select 'ocr', o.msg_id, o.enqueued_at, o.vt from pgmq.q_ocr o
          union all
          select 'events', v.msg_id, v.enqueued_at, v.vt from pgmq.q_events v
          union all
          select 'capsules', k.msg_id, k.enqueued_at, k.vt from pgmq.q_capsules k) q
    left join exo_private.worker_claims c on c.queue = q.queue and c.msg_id = q.msg_id
    left join exo_private.workers w on w.id = c.worker_id
$$;
comment on function exo_private.queue_messages(double precision) is
    'Every message of embed, extract, ocr, events and capsules with its state: pending (visible now), or in flight '
    'held by a live worker, by a dead one (no heartbeat for p_dead_after_s, or stopped), or '
    'unclaimed (a job that raised waits for its retry, or a read outside any worker).';

-- exo_private.queue_progress: per queue, what left it lately and how fast.
create or replace function exo_private.queue_progress(p_dead_after_s double precision)
returns table (queue text, workers bigint, done_since timestamptz, done bigint, rate_per_min numeric)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The window is the last hour, or less: since the earliest live worker on the queue began.
    with serving as (
        select n.queue, count(w.id) as workers,
               greatest(pg_catalog.now() - interval '1 hour', min(w.started_at)) as since
        from unnest(exo_private.served_queues()) n(queue)
        left join exo_private.workers w
               on n.queue = any(w.queues) and w.stopped_at is null
              and w.heartbeat_at > pg_catalog.now() - pg_catalog.make_interval(secs => p_dead_after_s)
        group by n.queue
    ), archived as (
        -- Every message a job took out of its queue is archived (done, skipped, failed or
        -- dead-lettered), as the worker's handled() counts it; the last hour only, by index.
        select 'embed'::text as queue, a.archived_at from pgmq.a_embed a
        where a.archived_at >= pg_catalog.now() - interval '1 hour'
        union all
        select 'extract', a.archived_at from pgmq.a_extract a
        where a.archived_at >= pg_catalog.now() - interval '1 hour'
        union all
        select 'ocr', a.archived_at from pgmq.a_ocr a
        where a.archived_at >= pg_catalog.now() - interval '1 hour'
        union all
        select 'events', a.archived_at from pgmq.a_events a
        where a.archived_at >= pg_catalog.now() - interval '1 hour'
        union all
        select 'capsules', a.archived_at from pgmq.a_capsules a
        where a.archived_at >= pg_catalog.now() - interval '1 hour'
    )
    select s.queue, s.workers, s.since, count(a.archived_at),
           round(count(a.archived_at) * 60
                 / nullif(extract(epoch from pg_catalog.now() - s.since), 0), 2)
    from serving s
    left join archived a on a.queue = s.queue and a.archived_at >= s.since
    group by s.queue, s.workers, s.since
$$;
comment on function exo_private.queue_progress(double precision) is
    'Per queue (embed, extract, ocr, events, capsules): workers = live workers serving it (a heartbeat within '
    'p_dead_after_s), done = messages archived (done, skipped, failed or dead-lettered) since '
    'done_since = an hour ago or, when later, when the earliest of those workers began, and '
    'rate_per_min = done per minute over that window.';

-- exo_private.outstanding_work: every chunk and window the worker still owes, and what holds it.
create or replace function exo_private.outstanding_work()
returns table (queue text, target_id bigint, document_id bigint, state text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with model as (select exo_private.active_embedding_model() as id),
    targets as (
        select 'embed'::text as queue, c.id as target_id, c.document_id
        from exo_private.chunks c
        cross join model
        where not exists (select 1 from exo_private.chunk_embeddings e
                          where e.workspace = c.workspace and e.chunk_id = c.id and e.model_id = model.id)
        union all
        select 'extract', w.id, w.document_id
        from exo_private.extraction_windows w
        where w.extracted_at is null
    ), queued as (
        select 'embed'::text as queue, (q.message ->> 'chunk_id')::bigint as target_id,
               bool_or(q.vt > pg_catalog.now()) as in_flight
        from pgmq.q_embed q group by 2
        union all
        select 'extract', (q.message ->> 'window_id')::bigint, bool_or(q.vt > pg_catalog.now())
        from pgmq.q_extract q group by 2
    ), dead as (
        select distinct d.message ->> 'queue' as queue,
               (d.message -> 'message' ->> case d.message ->> 'queue' when 'embed' then 'chunk_id'
                                                                   when 'extract' then 'window_id' end
               )::bigint as target_id
        from pgmq.q_dead_letter d
    ), failed as (
        select distinct f.queue, f.target_id from exo_private.job_failures f where f.retried_at is null
    )
    select t.queue, t.target_id, t.document_id,
           case when q.in_flight then 'in_flight'
                when q.target_id is not null then 'pending'
                when d.target_id is not null then 'dead'
                when f.target_id is not null then 'failed'
                else 'lost' end
    from targets t
    left join queued q on q.queue = t.queue and q.target_id = t.target_id
    left join dead d on d.queue = t.queue and d.target_id = t.target_id
    left join failed f on f.queue = t.queue and f.target_id = t.target_id
$$;
comment on function exo_private.outstanding_work() is
    'Every chunk without a vector of the active embedding model (queue embed) and every window not '
    'extracted (queue extract), with its document and state: in_flight (a worker holds its message), '
    'pending (its message waits), dead (dead-lettered), failed (a recorded failure, not retried) or '
    'lost (no message at all). Dead, failed and lost work never advances on its own.';

-- exo_private.work_status: queues, work per document stage, stuck documents and workers.
create or replace function exo_private.work_status()
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with settings as (
        select coalesce((select (s.value #>> '{}')::double precision from exo_private.settings s
                         where s.key = 'worker.dead_after_s'), 30) as dead_after_s
    ), work as materialized (
        select o.queue, o.target_id, o.document_id, o.state from exo_private.outstanding_work() o
    ), messages as (
        select n.queue, count(m.msg_id) as depth, min(m.enqueued_at) as oldest,
               count(*) filter (where m.state = 'pending') as pending,
               count(*) filter (where m.state in ('live', 'dead', 'unclaimed')) as in_flight,
               count(*) filter (where m.state = 'dead') as held_by_dead_workers
        from unnest(exo_private.served_queues()) n(queue)
        left join (select x.* from settings, exo_private.queue_messages(settings.dead_after_s) x) m
               on m.queue = n.queue
        group by n.queue
    ), progress as (
        select p.* from settings, exo_private.queue_progress(settings.dead_after_s) p
    ), stuck as (
        select w.document_id, w.state from work w where w.state in ('failed', 'dead', 'lost')
    )
    select jsonb_build_object(
        'queues', (
            select jsonb_object_agg(m.queue, jsonb_build_object(
                       'depth', m.depth,
                       'pending', m.pending,
                       'in_flight', m.in_flight,
                       'held_by_dead_workers', m.held_by_dead_workers,
                       'failed', (select count(*) from work w where w.queue = m.queue and w.state = 'failed'),
                       'dead', (select count(*) from pgmq.q_dead_letter d where d.message ->> 'queue' = m.queue),
                       'oldest_age_s', floor(extract(epoch from pg_catalog.now() - m.oldest))::bigint,
                       'workers', p.workers,
                       'done', p.done,
                       'done_since', p.done_since,
                       'rate_per_min', p.rate_per_min,
                       -- Only while a worker serves the queue and has done something.
                       'eta_s', case when p.workers > 0 and p.rate_per_min > 0
                                     then ceil(m.depth * 60 / p.rate_per_min)::bigint end))
            from messages m
            join progress p on p.queue = m.queue
        ) || jsonb_build_object('dead_letter', (
            select jsonb_build_object(
                       'depth', count(*),
                       'oldest_age_s', floor(extract(epoch from pg_catalog.now() - min(d.enqueued_at)))::bigint)
            from pgmq.q_dead_letter d)),
        'work_by_stage', (
            select coalesce(jsonb_object_agg(s.stage, jsonb_build_object(
                       'documents', s.documents, 'pending', s.pending, 'in_flight', s.in_flight,
                       'failed', s.failed, 'dead', s.dead, 'lost', s.lost, 'stuck', s.stuck)
                       order by s.stage), '{}')
            from (select d.stage::text as stage,
                         count(distinct d.id) as documents,
                         count(distinct d.id) filter (where w.state = 'pending') as pending,
                         count(distinct d.id) filter (where w.state = 'in_flight') as in_flight,
                         count(distinct d.id) filter (where w.state = 'failed') as failed,
                         count(distinct d.id) filter (where w.state = 'dead') as dead,
                         count(distinct d.id) filter (where w.state = 'lost') as lost,
                         count(distinct d.id) filter (where w.state in ('failed', 'dead', 'lost')) as stuck
                  from work w
                  join exo_private.documents d on d.id = w.document_id
                  group by d.stage) s),
        'stuck', (
            select jsonb_build_object(
                       'documents', count(distinct s.document_id),
                       'failed', count(distinct s.document_id) filter (where s.state = 'failed'),
                       'dead', count(distinct s.document_id) filter (where s.state = 'dead'),
                       'lost', count(distinct s.document_id) filter (where s.state = 'lost'),
                       'hint', case when count(*) > 0 then format(
                           '%s document(s) cannot advance on their own: `exo worker retry-failed` '
                           'queues failed and lost work again, `exo worker requeue-dead` dead-lettered '
                           'work', count(distinct s.document_id)) end)
            from stuck s),
        'worker', (
            select jsonb_build_object(
                'last_heartbeat', max(k.heartbeat_at),
                'alive', coalesce(bool_or(k.stopped_at is null and k.heartbeat_at > pg_catalog.now()
                                          - pg_catalog.make_interval(secs => settings.dead_after_s)), false),
                'running', count(*) filter (where k.stopped_at is null and k.heartbeat_at > pg_catalog.now()
                                            - pg_catalog.make_interval(secs => settings.dead_after_s)),
                'dead', count(*) filter (where k.heartbeat_at > pg_catalog.now() - interval '1 day'
                                         and ((k.stopped_at is null and k.heartbeat_at <= pg_catalog.now()
                                               - pg_catalog.make_interval(secs => settings.dead_after_s))
                                              or k.stop_reason like 'dead:%')),
                'dead_after_s', settings.dead_after_s,
                -- Workers may run on several hosts against one primary: who is where.
                'hosts', (
                    with live as (
                        select w.hostname, w.queues, w.processed, w.heartbeat_at
                        from exo_private.workers w
                        where w.stopped_at is null and w.heartbeat_at > pg_catalog.now()
                              - pg_catalog.make_interval(secs => settings.dead_after_s))
                    select coalesce(jsonb_object_agg(h.hostname, jsonb_build_object(
                               'running', h.running, 'queues', h.queues, 'processed', h.processed,
                               'last_heartbeat', h.last_heartbeat) order by h.hostname), '{}')
                    from (select l.hostname, count(*) as running, sum(l.processed) as processed,
                                 max(l.heartbeat_at) as last_heartbeat,
                                 (select array_agg(distinct q order by q) from live m cross join unnest(m.queues) q
                                  where m.hostname = l.hostname) as queues
                          from live l group by l.hostname) h))
            from settings left join exo_private.workers k on true
            group by settings.dead_after_s)
    )
$$;
comment on function exo_private.work_status() is
    'The worker''s side of exo.status: queues (embed, extract, ocr, events, capsules: depth, pending = visible messages, '
    'in_flight, held_by_dead_workers, failed = chunks or windows whose job failed and was not '
    'retried, dead = their dead letters, oldest_age_s, and from exo_private.queue_progress workers, '
    'done, done_since, rate_per_min, and eta_s = seconds until depth is done at that rate, null '
    'while no live worker serves the queue or none of its work is done yet; dead_letter: depth, '
    'oldest_age_s), '
    'work_by_stage (per document stage: documents with work pending, in_flight, failed, dead, lost, '
    'stuck), stuck (documents that cannot advance on their own, by reason, and a hint naming the '
    'commands), worker (last_heartbeat, alive, running, dead in the last day, dead_after_s, hosts: per '
    'host of a live worker, its running workers, their queues, messages processed, last heartbeat).';

-- exo_private.worker_queues: the worker's queues, or the one named (checked).
create or replace function exo_private.worker_queues(p_queue text default null)
returns setof text
language plpgsql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if p_queue is not null then
        -- The ocr queue's failures end their documents (sql/160_ocr.sql): nothing to retry here.
        if p_queue not in ('embed', 'extract') then
            raise exception 'queue must be embed or extract, got %', quote_literal(p_queue)
                using errcode = 'invalid_parameter_value';
        end if;
        return next p_queue;
    else
        return query select unnest(array['embed', 'extract']);
    end if;
end
$$;
comment on function exo_private.worker_queues(text) is
    'The worker''s queues (embed, extract), or only p_queue when given; raises for an unknown queue.';

-- exo_private.queue_again: send fresh messages for chunks (embed) or windows (extract).
create or replace function exo_private.queue_again(p_queue text, p_targets bigint[])
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    payloads jsonb[];
begin
    if p_queue = 'embed' then
        payloads := array(select jsonb_build_object('chunk_id', c.id, 'workspace', c.workspace)
                          from exo_private.chunks c where c.id = any(p_targets) order by c.id);
    else
        perform exo_private.queue_target_key(p_queue);
        payloads := array(select jsonb_build_object('window_id', w.id, 'workspace', w.workspace)
                          from exo_private.extraction_windows w where w.id = any(p_targets) order by w.id);
    end if;
    if cardinality(payloads) > 0 then
        perform pgmq.send_batch(p_queue, payloads);
    end if;
    return cardinality(payloads);
end
$$;
comment on function exo_private.queue_again(text, bigint[]) is
    'Queue chunks (embed) or extraction windows (extract) again by id, one fresh message each '
    '(ids that no longer exist are skipped); returns how many were queued.';

-- exo_private.retry_failed: queue failed (and lost) work again.
create or replace function exo_private.retry_failed(p_queue text default null, p_since timestamptz default null)
returns table (queue text, requeued int, resolved int)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    q text;
    retry bigint[];
    open bigint[];
begin
    for q in select exo_private.worker_queues(p_queue) loop
        -- Failed targets whose failure falls in the window; lost ones (no record, no
        -- message) too unless a window was asked for.
        select coalesce(array_agg(o.target_id) filter (
                   where (o.state = 'lost' and p_since is null)
                      or (o.state = 'failed' and exists (
                              select 1 from exo_private.job_failures f
                              where f.queue = q and f.target_id = o.target_id and f.retried_at is null
                                and (p_since is null or f.failed_at >= p_since)))), '{}'),
               coalesce(array_agg(o.target_id), '{}')
          into retry, open
        from exo_private.outstanding_work() o
        where o.queue = q;
        queue := q;
        requeued := exo_private.queue_again(q, retry);
        -- A failure is settled when its target is queued again or needs no more work (done or
        -- gone); one whose target waits in the queue already stays until that job ends.
        with settled as (
            update exo_private.job_failures f
               set retried_at = pg_catalog.now()
             where f.queue = q and f.retried_at is null
               and (p_since is null or f.failed_at >= p_since)
               and (f.target_id = any(retry) or f.target_id is null or not f.target_id = any(open))
            returning f.target_id
        )
        select count(distinct s.target_id) filter (where not s.target_id = any(retry)) into resolved from settled s;
        return next;
    end loop;
end
$$;
comment on function exo_private.retry_failed(text, timestamptz) is
    'Queue again the chunks (embed) and windows (extract) whose job failed (failures since p_since '
    'when given) and that still need work, plus, without p_since, those that wait with no message '
    'at all; failures are marked retried_at. Per queue: requeued (messages sent) and resolved '
    '(failed targets that no longer need work). p_queue null means both queues.';

-- exo_private.requeue_dead: bring dead-lettered work back to its queue.
create or replace function exo_private.requeue_dead(p_queue text default null)
returns table (queue text, requeued int, dropped int)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    q text;
    letters bigint[];
    targets bigint[];
begin
    for q in select exo_private.worker_queues(p_queue) loop
        -- Locked, so that two of these at once do not both send a letter back.
        select coalesce(array_agg(d.msg_id), '{}'),
               coalesce(array_agg(distinct (d.message -> 'message' ->> exo_private.queue_target_key(q))::bigint), '{}')
          into letters, targets
        from (select l.msg_id, l.message from pgmq.q_dead_letter l
              where l.message ->> 'queue' = q
              for update skip locked) d;
        -- Only targets that still need work and wait in no queue go back.
        select coalesce(array_agg(o.target_id), '{}') into targets
        from exo_private.outstanding_work() o
        where o.queue = q and o.target_id = any(targets) and o.state = 'dead';
        queue := q;
        requeued := exo_private.queue_again(q, targets);
        dropped := cardinality(letters) - requeued;
        if letters <> '{}' then
            perform pgmq.archive('dead_letter', letters);
        end if;
        return next;
    end loop;
end
$$;
comment on function exo_private.requeue_dead(text) is
    'Send every dead-lettered chunk (embed) or window (extract) that still needs work back to its '
    'queue as a fresh message (read count 0) and archive the dead letters. Per queue: requeued, and '
    'dropped (letters whose work is done, gone or already queued). p_queue null means both queues.';

-- exo_private.read_jobs: read and claim a queue's messages; those read too often are dead-lettered.
create or replace function exo_private.read_jobs(
    p_queue text, p_vt int, p_qty int, p_max_reads int, p_worker_id bigint
)
returns table (msg_id bigint, read_ct int, message jsonb, dead_lettered boolean)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
#variable_conflict use_column
declare
    m record;
begin
    perform exo_private.queue_target_key(p_queue);
    for m in select r.msg_id, r.read_ct, r.message from pgmq.read(p_queue, p_vt, p_qty) r loop
        if m.read_ct <= p_max_reads then
            insert into exo_private.worker_claims (queue, msg_id, worker_id)
            values (p_queue, m.msg_id, p_worker_id)
            on conflict (queue, msg_id) do update set worker_id = excluded.worker_id, claimed_at = now();
        else
            perform pgmq.send('dead_letter', jsonb_build_object(
                'queue', p_queue, 'msg_id', m.msg_id, 'read_ct', m.read_ct, 'message', m.message,
                'last_error', coalesce(
                    (select f.error_class || ': ' || f.message from exo_private.job_failures f
                     where f.queue = p_queue and f.msg_id = m.msg_id order by f.id desc limit 1),
                    'read too often (a worker died or timed out?)')));
            perform pgmq.archive(p_queue, m.msg_id);
        end if;
        return query select m.msg_id, m.read_ct, m.message, m.read_ct > p_max_reads;
    end loop;
end
$$;
comment on function exo_private.read_jobs(text, int, int, int, bigint) is
    'Read up to p_qty messages of p_queue (hidden for p_vt seconds). A message read at most '
    'p_max_reads times is claimed for worker p_worker_id; one read more often goes to dead_letter '
    'with its last recorded error and is archived. Returns every message read, dead_lettered '
    'saying which were.';

-- exo_private.complete_embedding: store an embed job's vectors and archive its messages.
create or replace function exo_private.complete_embedding(
    p_msg_ids bigint[], p_model text, p_dimensions int, p_chunk_ids bigint[], p_vectors public.vector[]
)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    stored int;
begin
    stored := exo_private.store_embeddings(p_model, p_dimensions, p_chunk_ids, p_vectors::text[]);
    perform pgmq.archive('embed', p_msg_ids);
    return stored;
end
$$;
comment on function exo_private.complete_embedding(bigint[], text, int, bigint[], public.vector[]) is
    'One embed job''s result in one transaction: store the vectors of model p_model for the chunks '
    '(those re-made meanwhile are dropped), advance their documents'' stages and archive the '
    'messages p_msg_ids. Returns how many vectors were stored.';

-- exo_private.complete_extraction: merge an extract job's reply, mark its window and archive the message.
create or replace function exo_private.complete_extraction(
    p_msg_id bigint, p_window_id bigint, p_generation int, p_entities jsonb, p_relations jsonb,
    p_stats jsonb, p_attributes jsonb default '[]', p_ner jsonb default null
)
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc bigint;
    merged jsonb;
begin
    -- Locked, so the window cannot be re-made or deleted before this transaction ends.
    select w.document_id into doc
    from exo_private.extraction_windows w
    where w.id = p_window_id
    for key share;
    if not found then
        raise exception 'extraction window % no longer exists', p_window_id
            using errcode = 'EX001',
                  hint = 'its document was re-chunked or deleted while the model ran; drop the job';
    end if;
    merged := exo_private.merge_extraction(p_window_id, p_generation, p_entities, p_relations, p_attributes, p_ner);
    if merged ? 'stale_generation' then
        raise exception 'generation % of window %''s workspace is no longer current', p_generation, p_window_id
            using errcode = 'EX002',
                  hint = 'another extraction model took over and queued the window again; drop the job';
    end if;
    update exo_private.extraction_windows w
       set extracted_generation = p_generation, extracted_at = now(),
           extraction_stats = coalesce(p_stats, '{}') || merged
     where w.id = p_window_id;
    perform exo_private.advance_stages(array[doc]);
    perform pgmq.archive('extract', p_msg_id);
    return merged;
end
$$;
comment on function exo_private.complete_extraction(bigint, bigint, int, jsonb, jsonb, jsonb, jsonb, jsonb) is
    'One extract job''s result in one transaction: merge the entities, relations and attributes into '
    'generation p_generation (merge_extraction, which accepts them by the worker''s rules, p_ner an NER '
    'backend''s labels), record the window extracted with p_stats and the '
    'merge counts, advance its document''s stage and archive message p_msg_id. Returns the merge '
    'counts. Raises EX001 when the window is gone, EX002 when the generation is no longer current.';
