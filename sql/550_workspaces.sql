-- Workspaces a person defines: exo workspace add | list | rename | remove.
-- A workspace's storage (chunk partitions and their indexes) and AGE graph come from
-- sql/020_workspaces.sql (the provision_workspace trigger); these functions add the rest
-- (embedding indexes, the owner, the documents waiting for it) and take a workspace away
-- again without losing what is stored in it. They run as exo_owner (security definer), who
-- owns the partitions and the graphs; the CLI calls them as exo_writer.

-- exo_private.workspace_name_refusal: why a name cannot be a workspace's, or null.
create or replace function exo_private.workspace_name_refusal(p_name text)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select case
        when p_name is null or pg_catalog.btrim(p_name) = '' then 'a workspace needs a name'
        when pg_catalog.length(p_name) > 32
            then format('is %s characters long; at most 32', pg_catalog.length(p_name))
        when pg_catalog.length(p_name) < 2 then 'is too short; at least 2 characters'
        when p_name ~ '[^a-z0-9_-]'
            then 'may hold only lower-case letters, digits, - and _'
        when p_name !~ '^[a-z]' then 'must begin with a lower-case letter'
        when p_name ~ '-$' then 'must not end with -'
    end
$$;
comment on function exo_private.workspace_name_refusal(text) is
    'Why a name cannot be a workspace''s (lower-case letters, digits, - and _, beginning with a '
    'letter, not ending with -, 2 to 32 characters), or null when it can.';

-- exo_private.workspace_counts: each workspace with what lives in it.
create or replace function exo_private.workspace_counts()
returns table(name text, description text, graph name, created_at timestamptz, documents bigint,
              quarantined_for bigint, chunks bigint, is_default boolean)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select w.name, w.description, w.graph, w.created_at,
           (select count(*) from exo_private.documents d where d.workspace = w.name and d.stage <> 'deleted'),
           -- quarantined because their frontmatter names it, before it existed (add routes them)
           (select count(*) from exo_private.documents d
            where d.stage = 'quarantined' and d.route ->> 'doubt' = 'unknown_workspace'
              and exo_private.declared_workspace(d.frontmatter) = w.name),
           (select count(*) from exo_private.chunks c where c.workspace = w.name),
           w.name = (select s.value #>> '{}' from exo_private.settings s where s.key = 'routing.default_workspace')
    from exo.workspaces w
    order by w.name
$$;
comment on function exo_private.workspace_counts() is
    'exo.workspaces with, for each, its live documents (any stage but deleted), the chunks of its '
    'partition, how many quarantined documents wait for it (frontmatter naming it before it existed: '
    'always 0 for an existing one once add_workspace routed them) and whether it is '
    'routing.default_workspace. What exo workspace list prints.';

-- exo_private.add_workspace: create a workspace (storage, graph, embedding indexes, owner).
create or replace function exo_private.add_workspace(p_name text, p_description text default null)
returns jsonb
language plpgsql
security definer
set search_path = exo_private, pg_temp
as $$
declare
    refusal text := exo_private.workspace_name_refusal(p_name);
    waiting bigint[];
    routed int := 0;
    doc_id bigint;
begin
    if refusal is not null then
        perform exo_private.invalid_argument(
            format('workspace name %s %s', exo_private.quoted(p_name), refusal),
            'a name is lower-case letters, digits, - and _ (e.g. work, side-projects, tax_2024)');
    end if;
    -- One add or remove at a time, so two adds of one name do not race to the primary key.
    lock table exo_private.workspaces in share row exclusive mode;
    if exists (select 1 from exo_private.workspaces w where w.name = p_name) then
        perform exo_private.invalid_argument(
            format('workspace %s exists already', exo_private.quoted(p_name)),
            'exo workspace list shows the workspaces');
    end if;
    -- The trigger gives it its graph and its chunk and embedding partitions.
    insert into exo_private.workspaces (name, description)
    values (p_name, coalesce(pg_catalog.btrim(p_description), ''));
    perform exo_private.ensure_embedding_indexes(m.id) from exo_private.embedding_models m order by m.id;
    -- The owner's Person, as every workspace has once the owner is named.
    perform exo_private.project_entities(exo_private.seed_owner(array[p_name]));
    -- Documents that waited in quarantine because their frontmatter named it.
    select coalesce(array_agg(d.id order by d.id), '{}') into waiting
    from exo_private.documents d
    where d.stage = 'quarantined' and d.route ->> 'doubt' = 'unknown_workspace'
      and exo_private.declared_workspace(d.frontmatter) = p_name;
    foreach doc_id in array waiting loop
        if exo_private.process_document(doc_id) <> 'quarantined' then
            routed := routed + 1;
        end if;
    end loop;
    return jsonb_build_object('workspace', p_name, 'graph', exo_private.graph_name(p_name),
                              'routed_from_quarantine', routed);
end
$$;
comment on function exo_private.add_workspace(text, text) is
    'Create a workspace: its row (name checked by workspace_name_refusal; an existing name is '
    'refused), graph and partitions (the provision_workspace trigger), an HNSW index per embedding '
    'model, the owner''s Person, and the routing of the quarantined documents whose frontmatter named '
    'it. Returns {workspace, graph, routed_from_quarantine}. Raises invalid_parameter_value.';

-- exo_private.remove_workspace: take a workspace away, moving what lives there to another.
create or replace function exo_private.remove_workspace(p_name text, p_move_to text default null)
returns jsonb
language plpgsql
security definer
set search_path = exo_private, pg_temp
as $$
declare
    workspaces text;
    live bigint;
    n_facts bigint;
    n_observations bigint;
    required text[];
    clash record;
    doc record;
    moved int := 0;
    conversations int := 0;
    settings_changed text[] := '{}'::text[];
    rules jsonb;
    keywords jsonb;
begin
    lock table exo_private.workspaces in share row exclusive mode;
    workspaces := (select string_agg(w.name, ', ' order by w.name) from exo_private.workspaces w);
    perform exo_private.check_workspaces(array[p_name]);
    perform 1 from exo_private.workspaces w where w.name = p_name for update;
    if p_move_to is not null then
        if p_move_to = p_name then
            perform exo_private.invalid_argument(
                format('--move-to names %s, the workspace being removed', exo_private.quoted(p_name)),
                'name another workspace: one of ' || workspaces);
        end if;
        if not exists (select 1 from exo_private.workspaces w where w.name = p_move_to) then
            perform exo_private.invalid_argument(
                format('--move-to: workspace %s does not exist', exo_private.quoted(p_move_to)),
                'the workspaces are ' || workspaces || '; exo workspace add NAME makes one');
        end if;
    elsif (select count(*) from exo_private.workspaces) = 1 then
        perform exo_private.invalid_argument(
            format('workspace %s is the only workspace', exo_private.quoted(p_name)),
            'add another first (exo workspace add NAME)');
    end if;

    live := (select count(*) from exo_private.documents d where d.workspace = p_name and d.stage <> 'deleted');
    n_facts := (select count(*) from exo_private.facts f where f.workspace = p_name);
    n_observations := (select count(*) from exo_private.observations o where o.workspace = p_name);
    required := array(select s.key from exo_private.settings s
                      where s.key in ('routing.default_workspace', 'chat.workspace', 'facts.observation_workspace')
                        and s.value #>> '{}' = p_name order by s.key);
    if p_move_to is null and (live > 0 or n_facts > 0 or n_observations > 0 or cardinality(required) > 0) then
        perform exo_private.invalid_argument(
            format('workspace %s is not empty: %s', exo_private.quoted(p_name), concat_ws(', ',
                case when live > 0 then format('%s document(s) live there', live) end,
                case when n_facts > 0 then format('%s fact row(s)', n_facts) end,
                case when n_observations > 0 then format('%s observation(s)', n_observations) end,
                case when cardinality(required) > 0
                     then format('the setting(s) %s name it', array_to_string(required, ', ')) end)),
            format('exo workspace remove %s --move-to OTHER moves them to OTHER (one of %s) and removes it',
                   p_name, (select string_agg(w.name, ', ' order by w.name) from exo_private.workspaces w
                            where w.name <> p_name)));
    end if;

    if p_move_to is not null then
        -- Facts and observations move as they are (ids, periods and sources kept), before the
        -- documents are processed again there, so a declared fact finds its own line. A current
        -- row whose line is current in the other workspace too cannot: the person decides.
        select f.subject, f.attribute, f.kind into clash
        from exo_private.facts f
        join exo_private.facts g on g.workspace = p_move_to and g.subject_key = f.subject_key
                                and g.attribute = f.attribute and g.kind = f.kind and g.valid_to is null
        where f.workspace = p_name and f.valid_to is null
        order by f.subject_key, f.attribute
        limit 1;
        if found then
            perform exo_private.invalid_argument(
                format('cannot move the facts of %s to %s: both hold a current %s fact %s of %s',
                       exo_private.quoted(p_name), exo_private.quoted(p_move_to), clash.kind,
                       exo_private.quoted(clash.attribute), exo_private.quoted(clash.subject)),
                format('close one of them first (exo fact close SUBJECT ATTRIBUTE --workspace %s), '
                       'or move to another workspace', p_name));
        end if;
        update exo_private.observations o set workspace = p_move_to where o.workspace = p_name;
        update exo_private.facts f set workspace = p_move_to where f.workspace = p_name;

        -- Each document as exo quarantine reassign moves one: a review decision for the other
        -- workspace, then processed again from the text cache there (new chunks, queued for
        -- embedding and extraction). Conversations are re-windowed there, as exo rebuild does.
        for doc in
            select d.id, d.stage, d.conversation_id from exo_private.documents d
            where d.workspace = p_name and d.stage <> 'deleted'
            order by d.id
        loop
            if doc.conversation_id is not null then
                perform exo_private.window_conversation(doc.conversation_id, p_move_to);
                conversations := conversations + 1;
            elsif doc.stage in ('extracted', 'routed', 'quarantined', 'chunked', 'embedded', 'graphed') then
                perform exo_private.review_document(doc.id, 'reassign', p_move_to);
            else
                -- no text to process (failed, skipped, waiting for OCR): it will be processed there
                update exo_private.documents d
                   set workspace = p_move_to,
                       review = case when d.review ->> 'workspace' = p_name
                                     then d.review || jsonb_build_object('workspace', p_move_to) else d.review end
                 where d.id = doc.id;
            end if;
            moved := moved + 1;
        end loop;

        -- A person's graph corrections are kept by name key: they hold in the other workspace
        -- (a sense the other already has for the same anchor stays as it is there).
        insert into exo_private.entity_senses (workspace, canonical_key, sense, anchor_kind, anchor, how, made_at)
        select p_move_to, s.canonical_key, s.sense, s.anchor_kind, s.anchor, s.how, s.made_at
        from exo_private.entity_senses s where s.workspace = p_name
        on conflict do nothing;
        update exo_private.entity_merge_log l set workspace = p_move_to where l.workspace = p_name;
    end if;

    -- What still names it: the settings, the folders ingested with --workspace, deleted documents.
    if cardinality(required) > 0 then
        update exo_private.settings s set value = to_jsonb(p_move_to), updated_at = now()
         where s.key = any (required);
        settings_changed := settings_changed || required;
    end if;
    select s.value into rules from exo_private.settings s where s.key = 'routing.folder_rules';
    if exists (select 1 from jsonb_array_elements(coalesce(rules, '[]')) r where r ->> 'workspace' = p_name) then
        update exo_private.settings s
           set value = coalesce((select jsonb_agg(case when r ->> 'workspace' = p_name
                                                       then r || jsonb_build_object('workspace', p_move_to)
                                                       else r end order by n)
                                 from jsonb_array_elements(rules) with ordinality x (r, n)
                                 where p_move_to is not null or r ->> 'workspace' <> p_name), '[]'),
               updated_at = now()
         where s.key = 'routing.folder_rules';
        settings_changed := settings_changed || 'routing.folder_rules'::text;
    end if;
    select s.value into keywords from exo_private.settings s where s.key = 'routing.keywords';
    if keywords ? p_name then
        if p_move_to is not null then
            -- its words now route to the other workspace, with the other's own
            keywords := keywords || jsonb_build_object(p_move_to, (
                select coalesce(jsonb_agg(distinct k), '[]')
                from jsonb_array_elements(coalesce(keywords -> p_move_to, '[]') || (keywords -> p_name)) k));
        end if;
        update exo_private.settings s set value = keywords - p_name, updated_at = now()
         where s.key = 'routing.keywords';
        settings_changed := settings_changed || 'routing.keywords'::text;
    end if;
    update exo_private.sources s set workspace = p_move_to where s.workspace = p_name;
    update exo_private.documents d set workspace = p_move_to where d.workspace = p_name and d.stage = 'deleted';

    -- Nothing of a document may be left behind: the storage is dropped next.
    if exists (select 1 from exo_private.chunks c where c.workspace = p_name)
       or exists (select 1 from exo_private.extraction_windows x where x.workspace = p_name) then
        raise exception 'workspace % still holds chunks or extraction windows after its documents moved', p_name
            using hint = 'nothing was removed; report this';
    end if;
    -- What was derived there and is derived again where the documents went: capsules, the
    -- graph rows (entities, with their mentions, aliases and relations) and the router's terms.
    delete from exo_private.capsules c where c.workspace = p_name;
    delete from exo_private.entity_addresses a where a.workspace = p_name;
    delete from exo_private.extraction_generations g where g.workspace = p_name;
    if exists (select 1 from ag_catalog.ag_graph g where g.name = exo_private.graph_name(p_name)) then
        perform ag_catalog.drop_graph(exo_private.graph_name(p_name), true);
    end if;
    -- Detached first: the partitioned chunks are referenced (chat_windows), which a drop of a
    -- partition still attached does not allow.
    if to_regclass(format('exo_private.%I', 'chunk_embeddings_' || p_name)) is not null then
        execute format('alter table exo_private.chunk_embeddings detach partition exo_private.%I',
                       'chunk_embeddings_' || p_name);
        execute format('drop table exo_private.%I', 'chunk_embeddings_' || p_name);
    end if;
    if to_regclass(format('exo_private.%I', 'chunks_' || p_name)) is not null then
        execute format('alter table exo_private.chunks detach partition exo_private.%I', 'chunks_' || p_name);
        execute format('drop table exo_private.%I', 'chunks_' || p_name);
    end if;
    -- router_classes, router_terms, entity_senses, entity_merge_log, open_index_rebuilds: cascade
    delete from exo_private.workspaces w where w.name = p_name;
    return jsonb_build_object('workspace', p_name, 'moved_to', p_move_to, 'documents', moved,
                              'conversations', conversations, 'facts', n_facts,
                              'observations', n_observations, 'settings', to_jsonb(settings_changed));
end
$$;
comment on function exo_private.remove_workspace(text, text) is
    'Remove a workspace in one transaction. Without p_move_to it must be empty: no live document, '
    'fact or observation, and not named by routing.default_workspace, chat.workspace or '
    'facts.observation_workspace (invalid_parameter_value naming what is there and --move-to). With '
    'p_move_to, its facts and observations move there as they are (refused when a current fact line '
    'is current in both), each document moves as exo quarantine reassign moves one (review_document: '
    'processed again from the text cache there), conversations are re-windowed there, a person''s '
    'entity senses and merges follow, and the settings, folder rules, keywords and sources that name '
    'it name p_move_to (without it, its folder rules and keywords go). Then its capsules, graph rows, '
    'AGE graph and partitions are dropped. Returns {workspace, moved_to, documents, conversations, '
    'facts, observations, settings}.';

-- exo_private.rename_workspace: rename a workspace that holds no documents.
create or replace function exo_private.rename_workspace(p_old text, p_new text)
returns jsonb
language plpgsql
security definer
set search_path = exo_private, pg_temp
as $$
declare
    old_row exo_private.workspaces;
    live bigint;
    removed jsonb;
begin
    perform exo_private.check_workspaces(array[p_old]);
    select * into old_row from exo_private.workspaces w where w.name = p_old;
    if exo_private.workspace_name_refusal(p_new) is not null
       or exists (select 1 from exo_private.workspaces w where w.name = p_new) then
        perform exo_private.add_workspace(p_new);  -- refuses, saying why
    end if;
    -- A workspace's name is in its chunks' partition, its graph, its queued jobs and a score of
    -- tables: its documents move to a new name the way they move to any workspace.
    live := (select count(*) from exo_private.documents d where d.workspace = p_old and d.stage <> 'deleted');
    if live > 0 then
        perform exo_private.invalid_argument(
            format('workspace %s holds %s document(s): a rename cannot keep their chunks, vectors and graph',
                   exo_private.quoted(p_old), live),
            format('move them under the new name (processed again there, then embedded and extracted again by '
                   'the worker): exo workspace add %s, then exo workspace remove %s --move-to %s', p_new, p_old, p_new));
    end if;
    perform exo_private.add_workspace(p_new, old_row.description);
    update exo_private.workspaces w set created_at = old_row.created_at where w.name = p_new;
    removed := exo_private.remove_workspace(p_old, p_new);
    return jsonb_build_object('workspace', p_new, 'was', p_old, 'facts', removed -> 'facts',
                              'observations', removed -> 'observations', 'settings', removed -> 'settings');
end
$$;
comment on function exo_private.rename_workspace(text, text) is
    'Rename a workspace that holds no live document, in one transaction: add_workspace(p_new) with its '
    'description and created_at, then remove_workspace(p_old, p_new), which carries its facts, '
    'observations, settings, folder rules, keywords and sources over. One that holds documents is '
    'refused (invalid_parameter_value) with how to move them: exo workspace add NEW, then exo '
    'workspace remove OLD --move-to NEW. Returns {workspace, was, facts, observations, settings}.';
