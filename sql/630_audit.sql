-- The self-audit (issue 15): re-check the compiled memory against its sources.
--
--   exo_private.fact_source_states (a view)  -> each fact source: live, changed or gone
--   exo_private.audit_findings (a view)      -> what is wrong now, one row per finding and reason
--   exo_private.audit()                      -> close the facts whose every source is gone; store
--                                               the run (audit_runs); return the findings (daily
--                                               by pg_cron, exo audit)
--   exo.audit_summary()                      -> the newest run: findings by reason and the
--                                               retirement rate (exo.status reads it)
--
-- Reasons (narrow on purpose; only the first closes anything):
--   source gone     a current fact whose every source's document is deleted, skipped or absent
--                   (closed: valid_to now, close_reason 'source gone', closed_by null)
--   source changed  a current fact with no live source left, at least one changed: its document's
--                   sha256 differs from when the source was recorded, or its chunk was re-made
--   contradicted    a current fact of a kind of higher precedence whose line in a lower kind
--                   (same workspace, subject and attribute) holds another value from a later
--                   valid_from: a newer source says otherwise and closed nothing (kinds never close
--                   each other)
--   capsule stale   a capsule whose sources changed (exo_private.capsule_states)
--   entity gone     a current extracted fact whose subject is no entity of its workspace

-- exo_private.fact_source_states: whether each fact source still says what it said.
create or replace view exo_private.fact_source_states as
select s.fact_id,
       case
           when doc.id is null and s.chunk_id is not null then 'changed'  -- a chunk-only source re-made
           when doc.id is null then 'live'  -- an observation (kept by a foreign key)
           when d.id is null or d.stage in ('deleted', 'skipped') then 'gone'
           when s.chunk_id is not null and c.id is null then 'changed'
           when s.document_sha256 is distinct from d.sha256 then 'changed'
           else 'live'
       end as state,
       doc.id as document_id
from exo_private.fact_sources s
left join exo_private.chunks c on c.id = s.chunk_id
cross join lateral (select coalesce(s.document_id, c.document_id) as id) doc
left join exo_private.documents d on d.id = doc.id;
comment on view exo_private.fact_source_states is
    'Each fact source''s state: gone (its document is deleted, skipped or absent), changed (its '
    'document''s sha256 differs from when it was recorded, or its chunk was re-made; a chunk-only '
    'source whose chunk is gone counts as changed, never gone) or live (observations always).';

-- exo_private.audit_findings: what the self-audit finds now, with a reason per row.
create or replace view exo_private.audit_findings as
-- materialized: the current rows are joined to themselves by hash, once, instead of one index
-- probe per row
with current_facts as materialized (
    select f.id, f.workspace, f.subject_key, f.attribute, f.kind, f.value, f.valid_from
    from exo_private.facts f
    where f.valid_to is null
),
current_sources as (
    select f.id, f.workspace,
           count(*) filter (where s.state = 'gone') as gone,
           count(*) filter (where s.state = 'changed') as changed,
           count(*) filter (where s.state = 'live') as live,
           array_agg(distinct s.document_id) filter (where s.state <> 'live') as documents
    from exo_private.facts f
    join exo_private.fact_source_states s on s.fact_id = f.id
    where f.valid_to is null
    group by f.id, f.workspace
)
select case when x.changed = 0 then 'source gone' else 'source changed' end as reason,
       x.id as fact_id, null::bigint as capsule_id, x.workspace,
       jsonb_build_object('gone', x.gone, 'changed', x.changed, 'documents', x.documents) as detail
from current_sources x
where x.live = 0
union all
select 'contradicted', f.id, null, f.workspace,
       jsonb_build_object('by', g.id, 'kind', g.kind, 'value', g.value, 'valid_from', g.valid_from)
from current_facts f
join current_facts g
  on g.subject_key = f.subject_key and g.attribute = f.attribute and g.workspace = f.workspace
where g.kind > f.kind and g.valid_from > f.valid_from and g.value <> f.value
union all
select 'capsule stale', null, k.id, k.workspace, jsonb_build_object('document_id', k.document_id)
from exo_private.capsules k
join exo_private.capsule_states s on s.capsule_id = k.id
where s.state = 'stale'
union all
select 'entity gone', f.id, null, f.workspace, jsonb_build_object('subject', f.subject)
from exo_private.facts f
where f.valid_to is null and f.kind = 'extracted'
  and not exists (select 1 from exo_private.entities e
                  where e.canonical_key = f.subject_key and e.workspace = f.workspace);
comment on view exo_private.audit_findings is
    'The self-audit''s findings now: reason (source gone, source changed, contradicted, capsule '
    'stale, entity gone; see sql/630_audit.sql), fact_id or capsule_id, workspace, detail. Only '
    'current facts are checked; exo_private.audit() closes the source gone ones.';

-- exo_private.retirement: how many fact rows there are and how many are closed, by close reason.
create or replace function exo_private.retirement()
returns table (facts bigint, closed bigint, by_reason jsonb)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with totals as (select count(*) as n from exo_private.facts),
    closed as (
        select pg_catalog.split_part(f.close_reason, ':', 1) as why, count(*) as n
        from exo_private.facts f
        where f.valid_to is not null
        group by 1
    )
    select t.n, (select coalesce(sum(c.n), 0)::bigint from closed c),
           (select coalesce(jsonb_object_agg(c.why, c.n order by c.why), '{}') from closed c)
    from totals t
$$;
comment on function exo_private.retirement() is
    'The facts'' retirement now: facts (all rows), closed (rows no longer current) and by_reason (closed '
    'rows per close reason, "closed: why" counted as closed). exo_private.audit() stores it with each run.';

-- exo_private.audit: close the facts whose every source is gone, store the run, return the findings.
create or replace function exo_private.audit()
returns table (reason text, fact_id bigint, capsule_id bigint, workspace text, detail jsonb, closed boolean)
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    others jsonb;
    counts jsonb;
    gone_ids bigint[];  -- the facts whose every source is gone, with their workspaces and details
    gone_spaces text[];
    gone_details jsonb[];
    closed_ids bigint[];
    n_closed int;
    n_gone int;
begin
    select array_agg(a.fact_id order by a.fact_id), array_agg(a.workspace order by a.fact_id),
           array_agg(a.detail order by a.fact_id)
      into gone_ids, gone_spaces, gone_details
    from exo_private.audit_findings a
    where a.reason = 'source gone';
    -- Their lines locked in one call, then closed at once: those still current and still without
    -- a source once the lines are ours.
    perform exo_private.lock_fact_buckets(array(
        select exo_private.fact_line_bucket(f.workspace, f.subject_key, f.attribute, f.kind)
        from exo_private.facts f where f.id = any (gone_ids)));
    with closing as (
        update exo_private.facts f
           set valid_to = greatest(pg_catalog.now(), f.valid_from), close_reason = 'source gone'
         where f.id = any (gone_ids) and f.valid_to is null
           and not exists (select 1 from exo_private.fact_source_states s
                           where s.fact_id = f.id and s.state <> 'gone')
        returning f.id
    )
    select array_agg(c.id) into closed_ids from closing c;
    n_gone := coalesce(cardinality(gone_ids), 0);
    n_closed := coalesce(cardinality(closed_ids), 0);
    return query
        select 'source gone', g.id, null::bigint, g.workspace, g.detail, c.id is not null
        from unnest(gone_ids, gone_spaces, gone_details) g (id, workspace, detail)
        left join unnest(closed_ids) c (id) on c.id = g.id
        order by g.id;
    -- The other findings, read once: returned, and counted for the run's row.
    select coalesce(jsonb_agg(to_jsonb(a) order by a.reason, a.fact_id, a.capsule_id), '[]')
      into others
    from exo_private.audit_findings a
    where a.reason <> 'source gone';
    select coalesce(jsonb_object_agg(x.reason, x.n order by x.reason), '{}') into counts
    from (select r.value ->> 'reason' as reason, count(*) as n from jsonb_array_elements(others) r group by 1
          union all
          select 'source gone', n_gone where n_gone > 0) x;
    insert into exo_private.audit_runs (findings, closed_now, facts, closed, by_reason)
    select counts, n_closed, r.facts, r.closed, r.by_reason from exo_private.retirement() r;
    return query
        select x.reason, x.fact_id, x.capsule_id, x.workspace, x.detail, false
        from jsonb_to_recordset(others) x (reason text, fact_id bigint, capsule_id bigint, workspace text, detail jsonb);
end
$$;
comment on function exo_private.audit() is
    'The self-audit: close each current fact whose every source is gone (valid_to now, close_reason '
    '"source gone"; nothing else is closed), store the run in exo_private.audit_runs (findings per '
    'reason, how many it closed, the retirement after it), then return every finding of '
    'exo_private.audit_findings: reason, fact_id, capsule_id, workspace, detail, closed (true for a '
    'fact it closed). Run daily by pg_cron (exo-audit) and by exo audit.';

-- exo.audit_summary: the newest self-audit run: findings by reason and the retirement rate.
create or replace function exo.audit_summary()
returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select jsonb_build_object(
        'ran_at', r.ran_at,
        'findings', coalesce(r.findings, '{}'),
        'closed_now', coalesce(r.closed_now, 0),
        'facts', coalesce(r.facts, 0),
        'closed', coalesce(r.closed, 0),
        'retirement_rate', case when coalesce(r.facts, 0) = 0 then 0 else round(r.closed::numeric / r.facts, 4) end,
        'by_reason', coalesce((select jsonb_object_agg(b.key, jsonb_build_object(
                                          'closed', b.value::bigint, 'rate', round(b.value::numeric / r.facts, 4))
                                      order by b.key)
                               from jsonb_each_text(r.by_reason) b), '{}'))
    from (select 1) one
    left join lateral (select x.* from exo_private.audit_runs x order by x.id desc limit 1) r on true
$$;
comment on function exo.audit_summary() is
    'The newest self-audit run (exo_private.audit: daily by pg_cron, and exo audit) as numbers: ran_at '
    '(null: never run), findings (per reason, as found then: source gone, source changed, '
    'contradicted, capsule stale, entity gone), closed_now (facts that run closed), facts (all rows), '
    'closed (rows no longer current), retirement_rate (closed / facts) and by_reason (per close '
    'reason, "closed: why" counted as closed: closed rows and their share of all rows), so '
    'over-eager closing shows as a number. Counts only, never text; reading it costs one row.';

-- exo_private.record_source_hash: a fact source keeps its document's content hash of today.
create or replace function exo_private.record_source_hash()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    new.document_sha256 := (
        select d.sha256 from exo_private.documents d
        where d.id = coalesce(new.document_id,
                              (select c.document_id from exo_private.chunks c where c.id = new.chunk_id)));
    return new;
end
$$;
comment on function exo_private.record_source_hash() is
    'Trigger: a new fact source records the sha256 its document (document_id, else the chunk''s) has '
    'now, so the self-audit can tell when the document changed. It fires only for a source with a '
    'document or chunk (an observation has no document: a batch of them pays for no trigger call).';

create or replace trigger fact_sources_record_hash
    before insert on exo_private.fact_sources
    for each row when (new.document_id is not null or new.chunk_id is not null)
    execute function exo_private.record_source_hash();

-- The daily job, run as the writer (as exo-reband).
select exo_private.want_cron_job(
    'exo-audit', '41 4 * * *', 'select (select count(*) from exo_private.audit()) from exo_private.lift_backend_memory()', 'exo_writer');
