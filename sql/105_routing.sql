-- Routing that learns from its owner (plpy/routing.py), and quarantine review in bulk.
-- The learned router is a naive Bayes over words, trained on the documents already in a
-- workspace by a decision it did not make itself; plan_document (sql/100_ingest.sql) loads it.

-- exo_private.router_training: the documents the learned router learns from.
create or replace view exo_private.router_training as
    select d.id, d.workspace, d.sha256
    from exo_private.documents d
    where d.workspace is not null
      and d.stage in ('chunked', 'embedded', 'graphed')
      and d.conversation_id is null
      and d.sha256 is not null
      -- its own routes never train it (a mistake would teach itself), nor the default
      -- workspace's (a guess while it could not judge: everything would look personal)
      and coalesce(d.route ->> 'method', '') not in ('learned', 'default');
comment on view exo_private.router_training is
    'Documents that train the learned router: in a workspace by frontmatter, a forced workspace, a '
    'folder rule, a person''s review or a confident keyword route; never by a learned route or the '
    'default workspace (routing.default_workspace).';

-- exo_private.train_router: train the learned router again when what it learns from changed.
create or replace function exo_private.train_router(force boolean default false, min_change float8 default 0)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include routing
if min_change is None or not 0 <= min_change <= 1:
    raise plpy.spiexceptions.InvalidParameterValue("min_change must be between 0 and 1, not " + repr(min_change))
return json.dumps(refresh_router(plpy, force, min_change))
$$;
comment on function exo_private.train_router(boolean, float8) is
    'Count the words of each workspace''s training documents (router_training) into router_terms and '
    'router_classes when the training set or the routing.learned_* counting settings changed since the '
    'last training (or force); with min_change (a share, as an ingest passes routing.learned_retrain_share) '
    'only when the number of training documents changed by at least that share. Returns {trained, '
    'generation, documents, workspaces, terms}.';

-- exo_private.route_defaulted: the default workspace's documents, routed again by the trained router.
create or replace function exo_private.route_defaulted()
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc exo_private.documents;
    body text;
    decision jsonb;
    moved jsonb := '{}'::jsonb;
    quarantined int := 0;
    confirmed int := 0;
begin
    for doc in
        select d.* from exo_private.documents d
        where d.route ->> 'method' = 'default' and d.stage in ('chunked', 'embedded', 'graphed')
          and d.conversation_id is null
        order by d.id
    loop
        select c.body into body from exo_private.text_cache c where c.sha256 = doc.sha256;
        continue when body is null;
        decision := exo_private.plan_document(
            exo_private.plan_input(doc), body, exo_private.ingest_settings(), exo_private.deference_list(),
            current_date) -> 'route';
        -- A default route is made only while the learned router cannot judge: it still cannot,
        -- for this document or any other, and they all stay where they are.
        exit when decision ->> 'method' = 'default';
        if decision ->> 'workspace' is not distinct from doc.workspace then
            -- Where it is already: the route says who decided now; chunks and jobs stay as they are.
            update exo_private.documents d set route = decision where d.id = doc.id;
            confirmed := confirmed + 1;
        elsif exo_private.process_document(doc.id) = 'quarantined' then
            quarantined := quarantined + 1;
        else
            moved := moved || jsonb_build_object(
                decision ->> 'workspace', coalesce((moved ->> (decision ->> 'workspace'))::int, 0) + 1);
        end if;
    end loop;
    return jsonb_build_object(
        'moved', moved, 'quarantined', quarantined, 'confirmed', confirmed,
        'waiting', (select count(*) from exo_private.documents d
                    where d.route ->> 'method' = 'default' and d.stage in ('chunked', 'embedded', 'graphed')
                      and d.conversation_id is null));
end
$$;
comment on function exo_private.route_defaulted() is
    'Route again the documents the default workspace holds (route method default: the learned router '
    'could not judge when they came), now that it may: each goes where the routing rules send it now, '
    'to another workspace (re-chunked there), to quarantine when the trained router is unsure, or stays '
    'with its route saying who decided. Nothing changes while the router still cannot judge. Returns '
    '{moved: {workspace: documents}, quarantined, confirmed (stayed), waiting (still by the default rule)}.';

-- exo_private.learn_routes: train the router, then route what in quarantine it is now sure of,
-- and what the default workspace holds.
create or replace function exo_private.learn_routes()
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    trained jsonb := exo_private.train_router();
    doc_id bigint;
    moved int := 0;
    left_over int := 0;
begin
    for doc_id in
        select d.id from exo_private.documents d
        where d.stage = 'quarantined' and d.conversation_id is null
        order by d.id
    loop
        if exo_private.process_document(doc_id) = 'quarantined' then
            left_over := left_over + 1;
        else
            moved := moved + 1;
        end if;
    end loop;
    return trained || jsonb_build_object('moved', moved, 'quarantined', left_over,
                                         'from_default', exo_private.route_defaulted());
end
$$;
comment on function exo_private.learn_routes() is
    'Train the learned router when its training set changed (train_router), then route every '
    'quarantined document again, then the documents of the default workspace (route_defaulted): returns '
    'the training''s report with how many left quarantine (moved), how many stay (quarantined), and '
    'from_default (what route_defaulted did).';

-- exo_private.route_source_quarantine: a source's quarantined documents, routed again.
create or replace function exo_private.route_source_quarantine(source int)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    doc_id bigint;
    moved int := 0;
begin
    for doc_id in
        select d.id from exo_private.documents d
        where d.source_id = source and d.stage = 'quarantined' and d.conversation_id is null
        order by d.id
    loop
        moved := moved + (exo_private.process_document(doc_id) <> 'quarantined')::int;
    end loop;
    return moved;
end
$$;
comment on function exo_private.route_source_quarantine(int) is
    'Route one source''s quarantined documents again (after `exo ingest PATH --workspace W` forced '
    'the source''s workspace); returns how many left quarantine.';

-- exo_private.glob_like: a shell glob as a LIKE pattern.
create or replace function exo_private.glob_like(glob text)
returns text
language sql immutable strict
security invoker
set search_path = exo_private, pg_temp
as $$
    select replace(replace(replace(replace(replace(glob, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%'), '?', '_')
$$;
comment on function exo_private.glob_like(text) is
    'A shell glob as a LIKE pattern: * is any run of characters (slashes too), ? one character; '
    'LIKE''s own % and _ match themselves.';

-- exo_private.review_quarantine: approve, reassign or reject every quarantined document a selector picks.
create or replace function exo_private.review_quarantine(
    decision text,
    target_workspace text default null,
    select_all boolean default false,
    path_glob text default null,
    min_confidence float8 default null,
    dry_run boolean default false
)
returns table (document_id bigint, path text, workspace text, stage text)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    picked record;
    pattern text := exo_private.glob_like(path_glob);
begin
    if decision is null or decision not in ('approve', 'reassign', 'reject') then
        perform exo_private.invalid_argument(
            format('decision must be approve, reassign or reject, not %s', exo_private.quoted(decision)));
    end if;
    if not coalesce(select_all, false) and path_glob is null and min_confidence is null then
        perform exo_private.invalid_argument(
            'review_quarantine needs a selector: select_all, path_glob or min_confidence',
            'exo quarantine ' || decision || ' --all, --path GLOB or --min-confidence X');
    end if;
    if path_glob = '' then
        perform exo_private.invalid_argument('path_glob must not be empty');
    end if;
    if min_confidence is not null and not (min_confidence between 0 and 1) then
        perform exo_private.invalid_argument(
            format('min_confidence must be between 0 and 1, not %s', min_confidence));
    end if;
    if decision = 'reassign' then
        if target_workspace is null then
            perform exo_private.invalid_argument('target_workspace is required to reassign');
        end if;
        perform exo_private.check_workspaces(array[target_workspace]);
    elsif target_workspace is not null then
        perform exo_private.invalid_argument(
            format('target_workspace is only for reassign, not %s', decision));
    end if;
    for picked in
        select d.id, d.path,
               case decision when 'approve' then d.route -> 'candidates' -> 0 ->> 'workspace'
                             when 'reassign' then target_workspace end as chosen
        from exo_private.documents d
        join exo_private.sources s on s.id = d.source_id
        where d.stage = 'quarantined'
          and (pattern is null or d.path like pattern or s.root || '/' || d.path like pattern)
          and (min_confidence is null or coalesce((d.route ->> 'confidence')::float8, 0) >= min_confidence)
          -- approve takes the router's best candidate: a document without one stays for a person
          and (decision <> 'approve' or coalesce((d.route -> 'candidates' -> 0 ->> 'score')::float8, 0) > 0)
        order by d.id
        for update of d
    loop
        document_id := picked.id;
        path := picked.path;
        workspace := picked.chosen;
        if dry_run then
            stage := case decision when 'reject' then 'skipped' else 'chunked' end;
        else
            stage := exo_private.review_document(picked.id, decision, target_workspace)::text;
        end if;
        return next;
    end loop;
end
$$;
comment on function exo_private.review_quarantine(text, text, boolean, text, float8, boolean) is
    'Quarantine review in bulk: approve (each document''s best candidate), reassign (to '
    'target_workspace) or reject every quarantined document picked by select_all, path_glob (a glob '
    'on the path under its source root, or on root/path) and min_confidence (the router''s confidence '
    'at least this), selectors combined with and; dry_run lists what would change without changing it. '
    'Returns each document with its workspace and the stage it reaches (or would).';

-- The router learns from what people and rules decided since it last trained.
select exo_private.want_cron_job(
    'exo-train-router', '*/10 * * * *', 'select exo_private.train_router() from exo_private.lift_backend_memory()', 'exo_writer');
