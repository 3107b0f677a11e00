-- The system's status for agents: exo.status, counts only, never text.

-- exo.status: what the system holds and whether it is working.
create or replace function exo.status()
returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select jsonb_build_object(
        'as_of', pg_catalog.now(),
        'documents', jsonb_build_object(
            'total', (select count(*) from exo_private.documents),
            'conversations', (select count(*) from exo_private.documents d where d.conversation_id is not null),
            'by_stage', (select coalesce(jsonb_object_agg(s.stage, s.n order by s.stage), '{}')
                         from (select d.stage::text as stage, count(*) as n
                               from exo_private.documents d group by d.stage) s)),
        'quarantine', (select count(*) from exo_private.documents d where d.stage = 'quarantined'),
        'unreadable_folders', jsonb_build_object(
            'total', (select count(*) from exo_private.unreadable_folders),
            'folders', (select coalesce(jsonb_agg(to_jsonb(u) order by u.source, u.path), '[]')
                        from (select s.root as source, f.path, f.error, f.first_seen_at as since
                              from exo_private.unreadable_folders f
                              join exo_private.sources s on s.id = f.source_id
                              order by s.root, f.path limit 20) u)),
        'chunks', jsonb_build_object(
            'total', (select count(*) from exo_private.chunks),
            'charged', (select count(*) from exo_private.chunks c where c.charged_subjects <> '{}'),
            'by_workspace', (select coalesce(jsonb_object_agg(s.workspace, s.n order by s.workspace), '{}')
                             from (select c.workspace, count(*) as n
                                   from exo_private.chunks c group by c.workspace) s)),
        'embeddings', (
            select coalesce(jsonb_agg(jsonb_build_object(
                       'model', m.name, 'dimensions', m.dimensions,
                       'active', m.id is not distinct from exo_private.active_embedding_model(),
                       'vectors', (select count(*) from exo_private.chunk_embeddings ce where ce.model_id = m.id))
                       order by m.id), '[]')
            from exo_private.embedding_models m),
        'graph', (
            -- what a reader may see: counts with withheld material in them would move, one
            -- number a workspace, with the names withheld text holds
            select coalesce(jsonb_object_agg(w.name, jsonb_build_object(
                       'entities', coalesce(e.n, 0) - cardinality(g.entity_ids),
                       'mentions', coalesce(m.n, 0) - g.mentions,
                       'relations', coalesce(r.n, 0) - cardinality(g.relation_ids)) order by w.name), '{}')
            from exo_private.workspaces w
            cross join lateral exo_private.withheld_graph(w.name, '{}') g
            left join (select x.workspace, count(*) as n from exo_private.entities x
                       group by x.workspace) e on e.workspace = w.name
            left join (select x.workspace, count(*) as n from exo_private.mentions y
                       join exo_private.entities x on x.id = y.entity_id
                       group by x.workspace) m on m.workspace = w.name
            left join (select x.workspace, count(*) as n from exo_private.relations x
                       group by x.workspace) r on r.workspace = w.name),
        'deferred_subjects', (select count(*) from exo_private.deferred_subjects),
        'audit', exo.audit_summary()
    ) || exo_private.work_status()
$$;
comment on function exo.status() is
    'The state of the whole system as jsonb: documents (total, conversations: how many of them are '
    'chat conversations, by_stage), quarantine (documents '
    'waiting for a routing decision), unreadable_folders (folders the last ingest could not list, '
    'whose documents are kept as they were: total, and the first 20 with source, path, error, since), chunks (total, charged, by_workspace), embeddings (per model: '
    'dimensions, vectors, active), graph (per workspace: entities, mentions, relations, those a reader '
    'may see: none that deference withholds unbridged, exo_private.withheld_graph), '
    'deferred_subjects (a count), audit (exo.audit_summary: the newest self-audit run''s findings by '
    'reason and the facts'' retirement rate), as_of, and the worker''s side (exo_private.work_status): queues '
    '(embed, extract, ocr, events, capsules: depth, pending, in_flight, held_by_dead_workers, failed, dead, '
    'oldest_age_s = seconds since the oldest message was queued, workers serving it, done since '
    'done_since = the last hour or the current run, rate_per_min, eta_s; dead_letter), '
    'work_by_stage, stuck (documents that cannot advance on their own, with a hint) and worker '
    '(last_heartbeat, alive, running, dead). '
    'Counts only, never text.';
