-- The personal knowledge base (issue 17): per user (exo_private.kb_profiles) and document
-- (exo_private.kb_items) a lifecycle state that moves only along exo_private.kb_transitions.
--
--   exo_private.kb_write          the one path that writes, for the reader too (runs as exo_kb)
--   exo_private.kb_apply_action   its state machine, for documents and outside documents alike
--   exo_private.kb_decay          the daily score and the pins and demotions it decides (pg_cron)
--   exo.kb_record_use, exo.kb_accept_suggestion, ...   the reader's calls, through kb_write
--   exo.kb_items                  a user's base
--
-- A profile is a person, not an argument (issue 27): each profile has a login role of its own
-- (kb_profiles.role, a member of exo_reader; `exo user add NAME`), and the reader's functions
-- take the profile from the session's role (exo_private.session_profile_name). Row security on
-- the kb tables (exo_private.kb_sees) shows a reader role only its own profile's rows and the
-- plain reader none; the writer, the owner and the admin see all.
--
-- Every function that changes state takes p_at (default now()): the clock tests move.

-- exo_private.kb_settings: the kb.* settings as one jsonb object (keys without the prefix).
create or replace function exo_private.kb_settings()
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select jsonb_object_agg(substr(s.key, 4), s.value) from exo_private.settings s where s.key like 'kb.%'
$$;
comment on function exo_private.kb_settings() is
    'The kb.* settings as one jsonb object keyed without the prefix (fetch_threshold, score_weights, ...).';

-- exo_private.kb_read_only: why this transaction cannot record in a personal base (null: it can).
create or replace function exo_private.kb_read_only()
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A hot standby (exo db replica add) takes no write at all: the reason and the remedy differ.
    select case
        when pg_catalog.pg_is_in_recovery()
            then 'a read-only standby (a replica): recording in a personal base is the primary''s; connect there to record'
        when pg_catalog.current_setting('transaction_read_only') = 'on'
            then 'a read-only transaction: run it in a read-write one (begin read write) to record it'
    end
$$;
comment on function exo_private.kb_read_only() is
    'Why this transaction cannot record in a personal base: on a read-only standby (a replica), or in a '
    'read-only transaction; null when it can.';

-- exo_private.kb_sees: whether this session may see a profile's kb rows (the row security predicate).
create or replace function exo_private.kb_sees(p_profile_id bigint)
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A reader role sees its own profile's rows alone; a trusted session (writer, owner, admin)
    -- every row. The lookup of the session's profile reads kb_profiles under its own policy.
    select not exo_private.is_reader_role(session_user)
           or p_profile_id = (select p.id from exo_private.kb_profiles p where p.role = session_user)
$$;
comment on function exo_private.kb_sees(bigint) is
    'Row security of the kb tables: true when this session may see the rows of profile p_profile_id: '
    'its login role is that profile''s, or it is not a reader role at all.';

-- exo_private.check_profile: refuse a reader session that acts for another profile than its own.
create or replace function exo_private.check_profile(p_profile text)
returns void
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if p_profile is null then
        raise exception 'this session has no profile: its base is a profile''s, kept by that profile''s own login'
            using errcode = 'insufficient_privilege',
                  hint = 'exo user add NAME makes a profile and prints its URL; exo db url --role reader --profile NAME prints it again';
    end if;
    -- The reader's functions pass the session's own profile; anything else is a bug or a misuse.
    -- Row security holds regardless: the message never says whether another profile exists.
    if exo_private.is_reader_role(session_user)
       and p_profile is distinct from exo_private.session_profile_name() then
        raise exception 'a session acts for its own profile only'
            using errcode = 'insufficient_privilege';
    end if;
end
$$;
comment on function exo_private.check_profile(text) is
    'Raise insufficient_privilege when p_profile is null (no profile) or, in a reader session, is not '
    'the session''s own profile (exo_private.session_profile_name).';

-- Row security of the kb tables (migration 0048 enables it): the API's and the recording path's
-- queries see what exo_private.kb_sees allows; the writer (worker, decay, exo user list) all.
do $$
declare
    t text;
begin
    foreach t in array array['kb_profiles', 'kb_items', 'kb_outside_documents', 'kb_outside_passages',
                             'kb_outside_passage_embeddings'] loop
        execute format('drop policy if exists own_profile on exo_private.%I', t);
        execute format('drop policy if exists every_profile on exo_private.%I', t);
        execute format('create policy every_profile on exo_private.%I to exo_writer using (true) with check (true)', t);
    end loop;
end
$$;
create policy own_profile on exo_private.kb_profiles to exo_api, exo_kb
    using (not exo_private.is_reader_role(session_user) or role = session_user)
    with check (not exo_private.is_reader_role(session_user) or role = session_user);
create policy own_profile on exo_private.kb_items to exo_api, exo_kb
    using (exo_private.kb_sees(profile_id)) with check (exo_private.kb_sees(profile_id));
create policy own_profile on exo_private.kb_outside_documents to exo_api, exo_kb
    using (exo_private.kb_sees(profile_id)) with check (exo_private.kb_sees(profile_id));
-- a passage or its vector is its outside document's: seen when the document is (under its policy)
create policy own_profile on exo_private.kb_outside_passages to exo_api, exo_kb
    using (exists (select 1 from exo_private.kb_outside_documents o where o.id = outside_id))
    with check (exists (select 1 from exo_private.kb_outside_documents o where o.id = outside_id));
create policy own_profile on exo_private.kb_outside_passage_embeddings to exo_api, exo_kb
    using (exists (select 1 from exo_private.kb_outside_documents o where o.id = outside_id))
    with check (exists (select 1 from exo_private.kb_outside_documents o where o.id = outside_id));

-- exo_private.kb_next_state: where an event takes a state, by the transition table.
create or replace function exo_private.kb_next_state(p_from exo_private.kb_state, p_event text)
returns exo_private.kb_state
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    target exo_private.kb_state;
begin
    select t.to_state into target from exo_private.kb_transitions t where t.from_state = p_from and t.event = p_event;
    if target is null then
        perform exo_private.invalid_argument(
            format('a document that is %s cannot take the event %s', p_from, exo_private.quoted(p_event)),
            (select 'possible here: ' || string_agg(t.event, ', ' order by t.event)
             from exo_private.kb_transitions t where t.from_state = p_from));
    end if;
    return target;
end
$$;
comment on function exo_private.kb_next_state(exo_private.kb_state, text) is
    'The state an event takes a document to, from exo_private.kb_transitions; refuses (invalid_argument, '
    'naming the events possible) a transition the table does not list.';

-- exo_private.kb_suggestion_gap: the fetches between suggestions after n declines.
create or replace function exo_private.kb_suggestion_gap(p_declines int, p_threshold int)
returns int
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select case when p_declines = 0 then p_threshold
                else (p_threshold * power(2, least(p_declines, 20)))::int end
$$;
comment on function exo_private.kb_suggestion_gap(int, int) is
    'Fetches until the next suggestion after p_declines declines: the threshold, then threshold x 2^n '
    '(the gap doubling at each decline).';

-- exo_private.kb_step_item: a user's action on one item of their base (a document or an outside one).
create or replace function exo_private.kb_step_item(
    p_profile_id bigint, p_document bigint, p_outside bigint, p_action text, p_at timestamptz, p_threshold int
)
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    update exo_private.kb_items i
       set state = exo_private.kb_next_state(i.state, p_action),
           state_changed_at = case when exo_private.kb_next_state(i.state, p_action) = i.state
                                   then i.state_changed_at else p_at end,
           thumbs = case p_action when 'thumbs_up' then i.thumbs + 1 when 'thumbs_down' then i.thumbs - 1
                                  when 'force_remove' then 0 else i.thumbs end,
           declines = i.declines + (p_action = 'decline')::int,
           next_suggestion_at = case p_action
               when 'decline' then i.fetch_count + exo_private.kb_suggestion_gap(i.declines + 1, p_threshold)
               when 'force_remove' then exo_private.kb_suggestion_gap(i.declines, p_threshold)
               else i.next_suggestion_at end,
           forced = case p_action when 'force_pin' then true when 'force_remove' then false else i.forced end,
           fetch_count = case when p_action = 'force_remove' then 0 else i.fetch_count end,
           last_seen_search = case when p_action = 'force_remove' then null else i.last_seen_search end,
           miss_streak = case when p_action in ('force_remove', 'force_pin') then 0 else i.miss_streak end,
           cache_checks = case when p_action = 'force_remove' then 0 else i.cache_checks end,
           cache_hits = case when p_action = 'force_remove' then 0 else i.cache_hits end,
           high_since = case when p_action = 'force_remove' then null else i.high_since end,
           low_since = case when p_action in ('force_remove', 'force_pin') then null else i.low_since end
     where i.profile_id = p_profile_id and (i.document_id = p_document or i.outside_id = p_outside)
$$;
comment on function exo_private.kb_step_item(bigint, bigint, bigint, text, timestamptz, int) is
    'Apply a user''s action (accept, decline, thumbs, force_pin, force_remove ...) to the profile''s '
    'item of p_document or of p_outside (the other null): its state by exo_private.kb_next_state, and '
    'the counters the action sets (a decline pushes the next suggestion back, force_remove starts over); '
    'the single step of exo_private.kb_apply_action (kb_write''s and kb_outside_write''s). p_threshold: '
    'kb.fetch_threshold.';

-- exo_private.kb_demote: demote documents (and outside documents) of a profile by an event.
create or replace function exo_private.kb_demote(
    p_profile_id bigint, p_documents bigint[], p_event text, p_at timestamptz default now(),
    p_outside bigint[] default '{}'
)
returns int
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    with moved as (
        update exo_private.kb_items i
           set state = exo_private.kb_next_state(i.state, p_event), state_changed_at = p_at,
               fetch_count = 0, miss_streak = 0, high_since = null, low_since = null,
               next_suggestion_at = exo_private.kb_suggestion_gap(
                   i.declines, (exo_private.kb_settings() ->> 'fetch_threshold')::int)
         where i.profile_id = p_profile_id and not i.forced
           and (i.document_id = any (p_documents) or i.outside_id = any (p_outside))
           and i.state in (select t.from_state from exo_private.kb_transitions t where t.event = p_event)
        returning 1
    )
    select count(*)::int from moved
$$;
comment on function exo_private.kb_demote(bigint, bigint[], text, timestamptz, bigint[]) is
    'Demote a profile''s documents and outside documents (p_outside: kb_outside_documents ids, '
    'sql/710_kb_outside.sql) by p_event (score_low or miss_streak) where the transition table allows '
    'it and the pin was not forced: the fetch count starts again from zero; returns how many moved.';

-- exo_private.kb_count_write: count one recording call of a profile against its volume caps.
create or replace function exo_private.kb_count_write(
    p_profile_id bigint, p_search boolean, p_at timestamptz,
    p_rows int default 0, p_bytes bigint default 0, p_embeddings int default 0
)
returns bigint
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    settings jsonb := exo_private.kb_settings();
    counted exo_private.kb_profiles;
    over text;
begin
    -- A fixed window of a minute per profile (a clock moved back starts a new one): calls, rows
    -- written, bytes of text stored, passages queued for embedding.
    update exo_private.kb_profiles p
       set window_started_at = case when w.fresh then p_at else p.window_started_at end,
           window_writes = case when w.fresh then 0 else p.window_writes end + 1,
           window_rows = case when w.fresh then 0 else p.window_rows end + p_rows,
           window_bytes = case when w.fresh then 0 else p.window_bytes end + p_bytes,
           window_embeddings = case when w.fresh then 0 else p.window_embeddings end + p_embeddings,
           searches = p.searches + p_search::int
      from (select p.window_started_at is null or p.window_started_at <= p_at - interval '1 minute'
                   or p.window_started_at > p_at as fresh
            from exo_private.kb_profiles p where p.id = p_profile_id) w
     where p.id = p_profile_id
    returning p.* into counted;
    over := case
        when counted.window_writes > (settings ->> 'writes_per_minute')::int
            then format('more than %s recording calls in a minute (kb.writes_per_minute)', settings ->> 'writes_per_minute')
        when counted.window_rows > (settings ->> 'write_rows_per_minute')::int
            then format('more than %s rows written in a minute (kb.write_rows_per_minute)', settings ->> 'write_rows_per_minute')
        when counted.window_bytes > (settings ->> 'write_bytes_per_minute')::bigint
            then format('more than %s bytes stored in a minute (kb.write_bytes_per_minute)', settings ->> 'write_bytes_per_minute')
        when counted.window_embeddings > (settings ->> 'embeddings_per_minute')::int
            then format('more than %s passages queued for embedding in a minute (kb.embeddings_per_minute)',
                        settings ->> 'embeddings_per_minute')
    end;
    if over is not null then
        raise exception 'profile % made %', exo_private.quoted(counted.name), over
            using errcode = 'program_limit_exceeded', hint = 'wait a minute, or raise the setting';
    end if;
    return counted.searches;
end
$$;
comment on function exo_private.kb_count_write(bigint, boolean, timestamptz, int, bigint, int) is
    'The volume caps of the kb write paths (kb_write, kb_outside_write): counts one call of the profile '
    'in its minute window with the rows it writes, the bytes of text it stores and the passages it '
    'queues for embedding (kb.writes_per_minute, kb.write_rows_per_minute, kb.write_bytes_per_minute, '
    'kb.embeddings_per_minute; past one, program_limit_exceeded) and, for a search (p_search), one '
    'more search; returns the profile''s search number.';

-- exo_private.kb_apply_action: one write's action on a profile's items, documents and outside ones alike.
create or replace function exo_private.kb_apply_action(
    p_profile_id bigint, p_action text, p_documents bigint[], p_outside bigint[], p_search bigint,
    p_at timestamptz, p_chunks bigint[] default '{}', p_missed bigint[] default '{}'
)
returns void
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    settings jsonb := exo_private.kb_settings();
    threshold int := (settings ->> 'fetch_threshold')::int;
begin
    -- Every item the call names gets its row (global) if it has none; documents in id order.
    insert into exo_private.kb_items (profile_id, document_id, outside_id, next_suggestion_at, state_changed_at)
    select p_profile_id, d, null, threshold, p_at
    from unnest(array(select distinct d from unnest(p_documents || p_missed) d order by d)) d
    union all
    select p_profile_id, null, o, threshold, p_at from unnest(p_outside) o
    on conflict do nothing;

    case p_action
    when 'use' then
        -- Returned: counted (fetch), suggested at the threshold (reach_threshold). A document keeps
        -- which of p_chunks are its (an outside document has none: p_chunks is empty).
        update exo_private.kb_items i
           set state = exo_private.kb_next_state(i.state, 'fetch'),
               state_changed_at = case when exo_private.kb_next_state(i.state, 'fetch') = i.state
                                       then i.state_changed_at else p_at end,
               fetch_count = i.fetch_count + 1, first_fetched_at = coalesce(i.first_fetched_at, p_at),
               last_fetched_at = p_at, last_seen_search = p_search,
               last_chunks = array(select k from unnest(p_chunks) k
                                   where exists (select 1 from exo_private.chunks c
                                                 where c.id = k and c.document_id = i.document_id))
         where i.profile_id = p_profile_id and (i.document_id = any (p_documents) or i.outside_id = any (p_outside));
        update exo_private.kb_items i
           set state = exo_private.kb_next_state(i.state, 'reach_threshold'), state_changed_at = p_at
         where i.profile_id = p_profile_id and (i.document_id = any (p_documents) or i.outside_id = any (p_outside))
           and i.fetch_count >= i.next_suggestion_at
           and i.state in (select t.from_state from exo_private.kb_transitions t where t.event = 'reach_threshold');
        -- Not returned in kb.reset_threshold searches of the user since last seen (the profile's
        -- searches count both exo.search and wrapped ones): counting starts again, for documents
        -- and outside ones. Only the rows still counting (kb_items_counting_idx), not every row.
        update exo_private.kb_items i
           set state = exo_private.kb_next_state(i.state, 'reset'),
               state_changed_at = case when exo_private.kb_next_state(i.state, 'reset') = i.state
                                       then i.state_changed_at else p_at end,
               fetch_count = 0, last_seen_search = p_search,
               next_suggestion_at = exo_private.kb_suggestion_gap(i.declines, threshold)
         where i.profile_id = p_profile_id and i.state in ('surfaced', 'suggested') and i.fetch_count > 0
           and i.last_seen_search <= p_search - (settings ->> 'reset_threshold')::int;
    when 'cache' then
        -- The personal stage's check of saved documents: p_documents passed, p_missed missed.
        update exo_private.kb_items i
           set cache_checks = i.cache_checks + 1,
               cache_hits = i.cache_hits + (i.document_id = any (p_documents))::int,
               miss_streak = case when i.document_id = any (p_documents) then 0 else i.miss_streak + 1 end
         where i.profile_id = p_profile_id and i.document_id = any (p_documents || p_missed)
           and i.state in ('claimed', 'pinned');
        perform exo_private.kb_demote(
            p_profile_id,
            array(select i.document_id from exo_private.kb_items i
                  where i.profile_id = p_profile_id and i.document_id = any (p_missed)
                    and i.miss_streak >= (settings ->> 'max_cache_miss_streak')::int),
            'miss_streak', p_at);
    else
        -- One item's action: the first of p_documents or of p_outside (the other is empty).
        perform exo_private.kb_step_item(p_profile_id, p_documents[1], p_outside[1], p_action, p_at, threshold);
    end case;
end
$$;
comment on function exo_private.kb_apply_action(bigint, text, bigint[], bigint[], bigint, timestamptz, bigint[], bigint[]) is
    'The lifecycle state machine of a personal base, written once for exo_private.kb_write (p_documents, '
    'p_outside empty) and exo_private.kb_outside_write (p_outside: kb_outside_documents ids, p_documents '
    'empty), which check the arguments, lock the profile and count the call (p_search: the profile''s '
    'search number) first. Makes a row for each item named (p_documents, p_missed, p_outside) that has '
    'none; then use: fetch, threshold and the profile''s resets (p_chunks: the returned chunks of the '
    'documents); cache (documents only): the personal stage''s hits (p_documents) and misses '
    '(p_missed), demotion by miss streak; any other action: exo_private.kb_step_item on the one item.';

-- exo_private.kb_write: the one path that writes a user's base (the reader's, through the exo.kb_* calls).
create or replace function exo_private.kb_write(
    p_profile text,
    p_action text,
    p_documents bigint[],
    p_chunks bigint[] default '{}',
    p_missed bigint[] default '{}',
    p_at timestamptz default now()
)
returns jsonb
language plpgsql volatile
security definer
set search_path = exo_private, pg_temp
as $$
declare
    most int := case p_action when 'cache' then 10000 else 100 end;
    profile bigint;
    search bigint;
    touched bigint[];
    unknown bigint[];
    stray bigint[];
begin
    if exo_private.kb_read_only() is not null then
        raise exception 'recording in a personal base writes, and this is %', exo_private.kb_read_only()
            using errcode = 'read_only_sql_transaction';
    end if;
    if p_action is null or p_action not in ('use', 'cache', 'accept', 'decline', 'thumbs_up', 'thumbs_down',
                                            'force_pin', 'force_remove') then
        perform exo_private.invalid_argument(format(
            'action must be one of use, cache, accept, decline, thumbs_up, thumbs_down, force_pin, force_remove, '
            'got %s', exo_private.quoted(p_action)));
    end if;
    if p_documents is null or array_position(p_documents, null) is not null
       or p_chunks is null or array_position(p_chunks, null) is not null
       or p_missed is null or array_position(p_missed, null) is not null then
        perform exo_private.invalid_argument('document ids, chunk ids and missed ids must be arrays without nulls');
    end if;
    -- A search records at most 100 documents; the personal stage checks every saved one.
    if cardinality(p_documents) > most or cardinality(p_missed) > 10000 then
        perform exo_private.invalid_argument(format(
            'at most 100 documents per call (10,000 checked by the personal stage), got %s',
            greatest(cardinality(p_documents), cardinality(p_missed))));
    end if;
    if cardinality(p_chunks) > 500 then
        perform exo_private.invalid_argument(format('at most 500 chunks per call, got %s', cardinality(p_chunks)));
    end if;
    if p_action not in ('use', 'cache') and cardinality(p_documents) <> 1 then
        perform exo_private.invalid_argument(format('%s takes exactly one document', p_action));
    end if;
    if p_at is null or not isfinite(p_at) then
        perform exo_private.invalid_argument('the time must be a finite timestamp');
    end if;
    perform exo_private.check_profile(p_profile);
    -- The profile row is the lock: one profile's writes queue behind each other.
    select p.id into profile from exo_private.kb_profiles p where p.name = p_profile for update;
    if profile is null then
        perform exo_private.invalid_argument(
            format('profile %s does not exist', exo_private.quoted(p_profile)), 'exo user add NAME makes one');
    end if;
    touched := array(select distinct d from unnest(p_documents || p_missed) d order by d);
    select array_agg(d order by d) into unknown
    from unnest(touched) d where not exists (select 1 from exo_private.documents x where x.id = d);
    if unknown is not null then
        perform exo_private.invalid_argument(
            format('document ids %s do not exist', left(array_to_string(unknown[1:10], ', '), 200)));
    end if;
    select array_agg(k order by k) into stray
    from unnest(p_chunks) k
    where not exists (select 1 from exo_private.chunks c where c.id = k and c.document_id = any (p_documents));
    if stray is not null then
        perform exo_private.invalid_argument(format(
            'chunk ids %s are not chunks of the documents given', left(array_to_string(stray[1:10], ', '), 200)));
    end if;
    search := exo_private.kb_count_write(profile, p_action = 'use', p_at, cardinality(touched));
    perform exo_private.kb_apply_action(profile, p_action, p_documents, '{}', search, p_at, p_chunks, p_missed);

    return coalesce((
        select jsonb_agg(jsonb_build_object(
                   'document_id', i.document_id, 'state', i.state, 'forced', i.forced,
                   'fetch_count', i.fetch_count, 'suggested', i.state = 'suggested')
                   order by i.document_id)
        from exo_private.kb_items i
        where i.profile_id = profile and i.document_id = any (touched)), '[]'::jsonb);
end
$$;
comment on function exo_private.kb_write(text, text, bigint[], bigint[], bigint[], timestamptz) is
    'The one path that writes a personal base, run as exo_kb (which may write only the kb tables). '
    'Actions: use (a search of the profile returned p_documents, p_chunks among their chunks: fetch, '
    'threshold, absence and reset), cache (the personal stage: p_documents passed, p_missed missed; '
    'demotion by miss streak), and one document''s accept, decline, thumbs_up, thumbs_down, force_pin, '
    'force_remove. Checks: a known action, a profile that exists and is the session''s own (a reader '
    'role acts for its own profile alone, exo_private.check_profile), documents that exist, chunks of '
    'those documents, at most 100 documents and 500 chunks, the per-minute caps of '
    'exo_private.kb_count_write, a read-write transaction. Returns the touched documents'' state and '
    'fetch count.';

-- exo_private.kb_scores: each user-document row's daily score, as of the profile's last decay.
create or replace view exo_private.kb_scores with (security_invoker = true) as
with w as materialized (  -- the settings once, not per row
    select (k.s #>> '{score_weights,recency}')::float8 as recency,
           (k.s #>> '{score_weights,frequency}')::float8 as frequency,
           (k.s #>> '{score_weights,explicit}')::float8 as explicit,
           (k.s #>> '{score_weights,hit_rate}')::float8 as hit_rate,
           nullif((k.s #>> '{score_weights,recency}')::float8 + (k.s #>> '{score_weights,frequency}')::float8
                  + (k.s #>> '{score_weights,explicit}')::float8 + (k.s #>> '{score_weights,hit_rate}')::float8,
                  0) as total,
           (k.s ->> 'recency_lambda')::float8 as lambda,
           (k.s ->> 'frequency_saturation')::float8 as saturation
    from (select exo_private.kb_settings() as s) k
)
select i.profile_id, i.document_id, i.state, i.high_since, i.low_since, p.decayed_at as scored_at,
       case when i.state <> 'global' and p.decayed_at is not null then
           (w.recency * exp(-w.lambda * greatest(
                extract(epoch from p.decayed_at - coalesce(i.last_fetched_at, i.state_changed_at)) / 86400, 0))
            + w.frequency * least(i.fetch_count / w.saturation, 1)
            + w.explicit * least(greatest(i.thumbs, 0), 1)
            + w.hit_rate * case when i.cache_checks > 0 then i.cache_hits::float8 / i.cache_checks else 0 end)
           / w.total
       end as score,
       i.outside_id
from exo_private.kb_items i
join exo_private.kb_profiles p on p.id = i.profile_id
cross join w;
comment on view exo_private.kb_scores is
    'Read with the caller''s row security (security_invoker): a reader role scores only its own rows. '
    'The daily score of every user-document row, computed from its stored inputs as of the profile''s '
    'last decay (kb_profiles.decayed_at; null before the first, and for a global row): (0.40 x recency '
    'exp(-0.05 x days since the last fetch) + 0.30 x frequency min(fetch_count / 20, 1) + 0.20 x '
    'explicit (1 when thumbs up outnumber thumbs down) + 0.15 x personal-stage hit rate (0 before any '
    'check)) / the weights'' sum (kb.score_weights, kb.recency_lambda, kb.frequency_saturation; the '
    'default weights add up to 1.05, so the score lies in [0, 1]).';

-- exo_private.kb_decay: the daily score's holds, and the pins and demotions they decide.
create or replace function exo_private.kb_decay(p_profile text default null, p_at timestamptz default now())
returns jsonb
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    settings jsonb := exo_private.kb_settings();
    pin_score float8 := (settings ->> 'pin_score')::float8;
    demote_score float8 := (settings ->> 'demote_score')::float8;
    profile bigint;
    scored int;
    pinned int;
    demoted int := 0;
    low record;
begin
    if p_profile is not null then
        select p.id into profile from exo_private.kb_profiles p where p.name = p_profile;
        if profile is null then
            perform exo_private.invalid_argument(format('profile %s does not exist', exo_private.quoted(p_profile)));
        end if;
    end if;
    -- The scores (exo_private.kb_scores) are now as of p_at; only the rows that cross kb.pin_score
    -- or kb.demote_score are written (their high_since / low_since), not every row.
    update exo_private.kb_profiles p set decayed_at = p_at where profile is null or p.id = profile;
    with scores as materialized (
        select s.profile_id, s.document_id, s.outside_id,
               case when s.score >= pin_score then coalesce(s.high_since, p_at) end as high_since,
               case when s.score < demote_score then coalesce(s.low_since, p_at) end as low_since,
               s.high_since is distinct from case when s.score >= pin_score then coalesce(s.high_since, p_at) end
               or s.low_since is distinct from case when s.score < demote_score then coalesce(s.low_since, p_at) end
                   as changed
        from exo_private.kb_scores s
        where (profile is null or s.profile_id = profile) and s.state <> 'global'
    ), crossed as (
        update exo_private.kb_items i
           set high_since = s.high_since, low_since = s.low_since
          from scores s
         where s.changed and i.profile_id = s.profile_id and i.document_id = s.document_id
    ), crossed_outside as (
        -- outside documents (sql/710_kb_outside.sql), by their own key
        update exo_private.kb_items i
           set high_since = s.high_since, low_since = s.low_since
          from scores s
         where s.changed and i.profile_id = s.profile_id and i.outside_id = s.outside_id
    )
    select count(*) into scored from scores;
    -- Held long enough above the pin score: pinned.
    update exo_private.kb_items i
       set state = exo_private.kb_next_state(i.state, 'score_high'), state_changed_at = p_at, high_since = null
     where (profile is null or i.profile_id = profile)
       and i.high_since <= p_at - make_interval(days => (settings ->> 'pin_days')::int)
       and i.state in (select t.from_state from exo_private.kb_transitions t where t.event = 'score_high');
    get diagnostics pinned = row_count;
    -- Held long enough below the demotion score: demoted.
    for low in
        select i.profile_id,
               coalesce(array_agg(i.document_id) filter (where i.document_id is not null), '{}') as documents,
               coalesce(array_agg(i.outside_id) filter (where i.outside_id is not null), '{}') as outside
        from exo_private.kb_items i
        where (profile is null or i.profile_id = profile)
          and i.low_since <= p_at - make_interval(days => (settings ->> 'demote_days')::int)
        group by i.profile_id
    loop
        demoted := demoted + exo_private.kb_demote(low.profile_id, low.documents, 'score_low', p_at, low.outside);
    end loop;
    return jsonb_build_object('scored', scored, 'pinned', pinned, 'demoted', demoted);
end
$$;
comment on function exo_private.kb_decay(text, timestamptz) is
    'The daily decay (pg_cron job exo-kb-decay; exo kb decay): scores every user-document row that is '
    'not global (one profile''s with p_profile) as of p_at (exo_private.kb_scores, computed on read: '
    'the profile''s decayed_at becomes p_at); keeps since when each has been at or above kb.pin_score '
    'or below kb.demote_score, writing only the rows that cross either; pins a claimed document held '
    'high for kb.pin_days and demotes a claimed or (unforced) pinned one held low for kb.demote_days; '
    'returns {scored, pinned, demoted}.';

-- exo_private.profile_role: the login role of a profile's name.
create or replace function exo_private.profile_role(p_name text)
returns name
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- exo_user_NAME; a name too long for a role name (63 bytes) is cut and told apart by its digest
    select case when octet_length(p_name) <= 54 then 'exo_user_' || p_name
                else 'exo_user_' || left(p_name, 37) || '_' || left(md5(p_name), 16) end
$$;
comment on function exo_private.profile_role(text) is
    'The login role of profile p_name: exo_user_NAME, or, for a name over 54 bytes, its first 37 '
    'characters and 16 of its md5 digest.';

-- exo_private.kb_add_profile: a new user (exo user add NAME).
create or replace function exo_private.kb_add_profile(p_name text)
returns bigint
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    made bigint;
begin
    if p_name is null or p_name !~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$' then
        perform exo_private.invalid_argument(
            format('profile name must be 1 to 64 letters, digits, _ . @ or -, starting with a letter or digit, got %s',
                   exo_private.quoted(p_name)));
    end if;
    -- its login role (made by the migrator or exo user add, as the admin)
    insert into exo_private.kb_profiles (name, role) values (p_name, exo_private.profile_role(p_name))
    on conflict (name) do nothing returning id into made;
    if made is null then
        perform exo_private.invalid_argument(format('profile %s exists already', exo_private.quoted(p_name)));
    end if;
    return made;
end
$$;
comment on function exo_private.kb_add_profile(text) is
    'Make a user (a person or an agent profile) with an empty personal base and the name of its login '
    'role (kb_profiles.role; the migrator or exo user add makes the role); returns its id.';

-- The recording path runs as exo_kb, which may write the kb tables and read what it checks.
alter function exo_private.kb_write(text, text, bigint[], bigint[], bigint[], timestamptz) owner to exo_kb;
grant usage on schema exo_private to exo_kb;
grant select on exo_private.settings, exo_private.documents, exo_private.chunks, exo_private.kb_transitions
    to exo_kb;
grant select, update on exo_private.kb_profiles to exo_kb;
grant select, insert, update on exo_private.kb_items to exo_kb;
grant execute on function exo_private.kb_settings(), exo_private.kb_next_state(exo_private.kb_state, text),
    exo_private.kb_suggestion_gap(int, int), exo_private.kb_demote(bigint, bigint[], text, timestamptz, bigint[]),
    exo_private.kb_count_write(bigint, boolean, timestamptz, int, bigint, int),
    exo_private.kb_step_item(bigint, bigint, bigint, text, timestamptz, int),
    exo_private.kb_apply_action(bigint, text, bigint[], bigint[], bigint, timestamptz, bigint[], bigint[]),
    exo_private.check_profile(text), exo_private.session_profile_name(), exo_private.kb_sees(bigint),
    exo_private.is_reader_role(name), exo_private.kb_read_only(),
    exo_private.invalid_argument(text, text), exo_private.quoted(text) to exo_kb;

-- exo_private.kb_suggestion: the line that proposes saving a document.
create or replace function exo_private.kb_suggestion(p_label text, p_fetch_count int)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select format('%s has appeared in your questions %s times; save it?', p_label, p_fetch_count)
$$;
comment on function exo_private.kb_suggestion(text, int) is
    'The pending save suggestion of a document: "''Kubernetes Pod Basics'' has appeared in your questions '
    '3 times; save it?".';

-- exo_private.kb_provenance: where each document a search of the profile returned stands in its base.
create or replace function exo_private.kb_provenance(
    p_profile text, p_documents bigint[], p_chunks bigint[], p_personal bigint[] default '{}'
)
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with sources as materialized (
        select o.n, o.document_id, i.state, i.fetch_count,
               case when k.document_id is null then quote_literal(coalesce(d.title, d.path))
                    else 'document ' || o.document_id || ' (withheld)' end as label,
               case when k.document_id is null then d.title end as title,
               case when k.document_id is null then d.path end as path,
               (o.document_id = any (p_personal)) as personal,
               array(select c.id from exo_private.chunks c
                     where c.id = any (p_chunks) and c.document_id = o.document_id order by c.id) as chunks
        from unnest(p_documents) with ordinality o (document_id, n)
        join exo_private.documents d on d.id = o.document_id
        left join exo_private.kb_profiles p on p.name = p_profile
        left join exo_private.kb_items i on i.profile_id = p.id and i.document_id = o.document_id
        left join exo_private.closed_documents(p_documents, '{}') k on k.document_id = o.document_id
    )
    select jsonb_build_object(
        'profile', p_profile,
        'sources', coalesce(jsonb_agg(jsonb_build_object(
            'document_id', s.document_id, 'title', s.title, 'path', s.path,
            'from', case when s.personal then 'personal' else 'global' end, 'chunks', to_jsonb(s.chunks),
            'state', coalesce(s.state::text, 'global'), 'fetch_count', coalesce(s.fetch_count, 0),
            'suggestion', case when s.state = 'suggested' then exo_private.kb_suggestion(s.label, s.fetch_count) end)
            order by s.n), '[]'::jsonb),
        'text', format(E'Provenance (profile %s):\n', p_profile) || coalesce(string_agg(format(
            '%s. %s, from %s, chunks %s: %s, fetched %s %s',
            s.n, s.label, case when s.personal then 'your base' else 'global search' end,
            coalesce(nullif(array_to_string(s.chunks, ', '), ''), 'none'), coalesce(s.state::text, 'global'),
            coalesce(s.fetch_count, 0), case when coalesce(s.fetch_count, 0) = 1 then 'time' else 'times' end)
            || case when s.state = 'suggested'
                    then E'\n   ' || exo_private.kb_suggestion(s.label, s.fetch_count)
                         || format(' (exo kb accept %s --profile %s)', s.document_id, p_profile) else '' end,
            E'\n' order by s.n), '(no sources)'))
    from sources s
$$;
comment on function exo_private.kb_provenance(text, bigint[], bigint[], bigint[]) is
    'The provenance block of a search of the profile: per document returned, in rank order, its title and '
    'path (withheld for a charged document), whether it came from the user''s base (p_personal) or global '
    'search, which of p_chunks are its, its state and fetch count, and any pending save suggestion; as '
    'jsonb {profile, sources, text} with a text rendering.';

-- exo_private.kb_personal: what the personal stage of a search with a profile needs.
create or replace function exo_private.kb_personal(p_profile text, p_workspaces text[])
returns jsonb
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    wanted bigint;
begin
    select p.id into wanted from exo_private.kb_profiles p where p.name = p_profile;
    if wanted is null then
        perform exo_private.invalid_argument(
            format('profile %s does not exist', exo_private.quoted(p_profile)), 'exo user add NAME makes one');
    end if;
    return jsonb_build_object(
        'profile_id', wanted,
        'settings', exo_private.kb_settings(),
        'saved', coalesce((
            select jsonb_object_agg(x.workspace, x.documents)
            from (select d.workspace, jsonb_agg(i.document_id order by i.document_id) as documents
                  from exo_private.kb_items i
                  join exo_private.documents d on d.id = i.document_id
                  where i.profile_id = wanted and i.state in ('claimed', 'pinned')
                    and d.workspace = any (p_workspaces)
                  group by d.workspace) x), '{}'::jsonb));
end
$$;
comment on function exo_private.kb_personal(text, text[]) is
    'The personal stage''s input for a search with a profile (plpy/stages.py): {profile_id, settings '
    '(kb.*), saved: {workspace: the claimed and pinned document ids}}; refuses an unknown profile.';

-- exo_private.kb_after_search: record a search with a profile and add its provenance block.
create or replace function exo_private.kb_after_search(p_profile text, p_retrieved jsonb)
returns jsonb
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    personal jsonb := coalesce(p_retrieved #> '{report,personal}', '{}'::jsonb);
    documents bigint[];
    chunk_ids bigint[];
    from_base bigint[];
    outcome jsonb;
    waited text;
begin
    if p_profile is null then
        return p_retrieved;
    end if;
    -- Each document once, in the rank of its best chunk; the first 100.
    select array_agg(x.document_id order by x.best) into documents
    from (select (r ->> 'document_id')::bigint as document_id, min((r ->> 'rank')::int) as best
          from jsonb_array_elements(p_retrieved -> 'results') r
          group by 1 order by 2 limit 100) x;
    documents := coalesce(documents, '{}');
    chunk_ids := array(select (r ->> 'chunk_id')::bigint from jsonb_array_elements(p_retrieved -> 'results') r
                       where (r ->> 'document_id')::bigint = any (documents) order by (r ->> 'rank')::int);
    from_base := array(select distinct (r ->> 'document_id')::bigint
                       from jsonb_array_elements(p_retrieved -> 'results') r where r ->> 'stage' = 'personal');
    if exo_private.kb_read_only() is not null then
        outcome := jsonb_build_object('recorded', false, 'why', exo_private.kb_read_only());
    else
        -- Best effort: the search answers whatever recording meets. A lock another session of the
        -- profile holds is waited for kb.lock_timeout at most (then the transaction's own again).
        waited := current_setting('lock_timeout');
        perform set_config('lock_timeout', exo_private.kb_settings() ->> 'lock_timeout', true);
        begin
            if personal ->> 'mode' = 'similarity' then
                perform exo_private.kb_write(
                    p_profile, 'cache',
                    array(select jsonb_array_elements_text(personal -> 'hits')::bigint), '{}',
                    array(select c::bigint from jsonb_array_elements_text(personal -> 'checked') c
                          except select h::bigint from jsonb_array_elements_text(personal -> 'hits') h));
            end if;
            perform exo_private.kb_write(p_profile, 'use', documents, chunk_ids);
            outcome := jsonb_build_object('recorded', true);
        exception when others then
            outcome := jsonb_build_object('recorded', false, 'why', case sqlstate
                when '55P03' then 'another session of this profile holds its rows (kb.lock_timeout): not recorded'
                else sqlerrm end);
        end;
        perform set_config('lock_timeout', waited, true);
    end if;
    return jsonb_set(p_retrieved, '{report}', (p_retrieved -> 'report') || jsonb_build_object(
        'personal', personal || jsonb_build_object('profile', p_profile) || outcome,
        'provenance', exo_private.kb_provenance(p_profile, documents, chunk_ids, from_base)));
end
$$;
comment on function exo_private.kb_after_search(text, jsonb) is
    'A search with a profile (exo.search, search_report, search_json, context_packet): records the '
    'personal stage''s checks (hits, misses: the miss streak) and the documents and chunks returned '
    '(exo_private.kb_write) when the transaction may write, else says why not (report.personal.recorded, '
    'why): best effort, a lock held past kb.lock_timeout, a cap reached or any other error of recording '
    'leaves the search''s answer as it is. Adds the provenance block (report.provenance). Without a '
    'profile, the search as it was.';

-- exo.kb_record_use: record what a search of the session's profile returned; its provenance block.
create or replace function exo.kb_record_use(document_ids bigint[], chunk_ids bigint[] default '{}')
returns jsonb
language plpgsql volatile
security definer
set search_path = exo_private, pg_temp
as $$
declare
    profile text := exo_private.session_profile_name();
begin
    perform exo_private.kb_write(profile, 'use', document_ids, coalesce(chunk_ids, '{}'));
    return exo_private.kb_provenance(profile, document_ids, coalesce(chunk_ids, '{}'));
end
$$;
comment on function exo.kb_record_use(bigint[], bigint[]) is
    'Record that a search of this session''s profile (its login role''s) returned these documents (at most 100, in rank order) and chunks '
    '(at most 500, chunks of those documents): fetch counts, suggestions at kb.fetch_threshold, resets '
    'after kb.reset_threshold absent searches. Writes, so it needs a read-write transaction (begin read '
    'write); at most kb.writes_per_minute calls per profile. Returns the provenance block {profile, '
    'sources: [{document_id, title, path, from, chunks, state, fetch_count, suggestion}], text}.';

-- exo.kb_accept_suggestion: save a suggested document.
create or replace function exo.kb_accept_suggestion(document_id bigint)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.kb_write(exo_private.session_profile_name(), 'accept', array[document_id]) -> 0
$$;
comment on function exo.kb_accept_suggestion(bigint) is
    'Save a document this session''s profile was suggested (suggested -> claimed); needs a read-write transaction.';

-- exo.kb_decline_suggestion: decline a suggestion; the next waits twice as long.
create or replace function exo.kb_decline_suggestion(document_id bigint)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.kb_write(exo_private.session_profile_name(), 'decline', array[document_id]) -> 0
$$;
comment on function exo.kb_decline_suggestion(bigint) is
    'Decline a suggestion (suggested -> surfaced): suggested again at fetch_count + kb.fetch_threshold x 2^declines.';

-- exo.kb_thumbs_up: mark a document useful.
create or replace function exo.kb_thumbs_up(document_id bigint)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.kb_write(exo_private.session_profile_name(), 'thumbs_up', array[document_id]) -> 0
$$;
comment on function exo.kb_thumbs_up(bigint) is
    'Mark a document useful to this session''s profile (the decay score''s explicit signal); needs a read-write transaction.';

-- exo.kb_thumbs_down: mark a document not useful.
create or replace function exo.kb_thumbs_down(document_id bigint)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.kb_write(exo_private.session_profile_name(), 'thumbs_down', array[document_id]) -> 0
$$;
comment on function exo.kb_thumbs_down(bigint) is
    'Mark a document not useful to this session''s profile; needs a read-write transaction.';

-- exo.kb_force_pin: pin a document whatever its score.
create or replace function exo.kb_force_pin(document_id bigint)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.kb_write(exo_private.session_profile_name(), 'force_pin', array[document_id]) -> 0
$$;
comment on function exo.kb_force_pin(bigint) is
    'Pin a document in this session''s profile''s base from any state; a forced pin is never demoted by score or misses.';

-- exo.kb_force_remove: take a document out of the personal base entirely.
create or replace function exo.kb_force_remove(document_id bigint)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.kb_write(exo_private.session_profile_name(), 'force_remove', array[document_id]) -> 0
$$;
comment on function exo.kb_force_remove(bigint) is
    'Take a document out of this session''s profile''s base (any state -> global, every counter back to zero).';

-- exo.profile: the profile this session is.
create or replace function exo.profile()
returns text
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.session_profile_name()
$$;
comment on function exo.profile() is
    'The profile (exo user add NAME) whose login role this session is: its searches look in that '
    'user''s base first and record in it, and exo.kb_* act on it; null for the plain reader, which '
    'has no base.';

-- exo.kb_items: a user's base.
create or replace function exo.kb_items()
returns table (
    document_id bigint, title text, path text, state text, forced boolean, fetch_count int,
    last_fetched_at timestamptz, declines int, next_suggestion_at int, miss_streak int, thumbs int,
    score float8, suggestion text
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    wanted bigint;
begin
    perform exo_private.check_profile(exo_private.session_profile_name());
    select p.id into wanted from exo_private.kb_profiles p where p.role = session_user;
    return query
    with items as materialized (
        select i.*, s.score
        from exo_private.kb_items i
        join exo_private.kb_scores s on s.profile_id = i.profile_id and s.document_id = i.document_id
        where i.profile_id = wanted and i.state <> 'global'
    ), closed as (
        select k.document_id from exo_private.closed_documents(array(select x.document_id from items x), '{}') k
    )
    select i.document_id,
           case when c.document_id is null then d.title end,
           case when c.document_id is null then d.path end,
           i.state::text, i.forced, i.fetch_count, i.last_fetched_at, i.declines, i.next_suggestion_at,
           i.miss_streak, i.thumbs, i.score,
           case when i.state = 'suggested' then exo_private.kb_suggestion(
               coalesce(quote_literal(case when c.document_id is null then coalesce(d.title, d.path) end),
                        'document ' || i.document_id || ' (withheld)'),
               i.fetch_count) end
    from items i
    join exo_private.documents d on d.id = i.document_id
    left join closed c on c.document_id = i.document_id
    order by array_position(array['pinned', 'claimed', 'suggested', 'surfaced', 'demoted'], i.state::text),
             i.fetch_count desc, i.document_id;
end
$$;
comment on function exo.kb_items() is
    'This session''s profile''s base (its login role''s; a session without one is refused): every document it was returned or acted on (not global), pinned, claimed, '
    'suggested, surfaced, demoted, with fetch count, declines, misses, thumbs, score and the pending '
    'save suggestion. A charged document''s title and path are withheld.';

-- The daily decay, run as the writer (as exo-reband).
select exo_private.want_cron_job(
    'exo-kb-decay', '17 3 * * *', 'select exo_private.kb_decay() from exo_private.lift_backend_memory()', 'exo_writer');
