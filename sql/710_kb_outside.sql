-- The personal base over outside documents (issue 17, drop-in retrievers): a user's own retriever,
-- wrapped by exocortex.client.integrations.*.LifecycleRetriever, is the global stage; exocortex keeps the
-- lifecycle of what it returns (migration 0039: exo_private.kb_outside_documents, their passages, and
-- kb_items.outside_id) with the states, transition table, settings and decay of sql/700_kb.sql.
--
--   exo_private.kb_outside_write   the one path that writes it, for the reader too (runs as exo_kb)
--                                  (the state machine is sql/700_kb.sql's kb_apply_action;
--                                  kb_outside_keep keeps what a search returned)
--   exo.kb_outside_retrieve        one call of the wrapper: the personal stage, the merge, the record
--   exo.kb_outside_act, exo.kb_outside_items   the user's actions and their base
--   exo_private.kb_outside_queue_embedding, kb_outside_passages_to_embed, store_outside_embeddings
--                                  the kept passages' vectors (migration 0043), made by the worker
--
-- Every function that changes state takes p_at (default now()): the clock tests move.

-- exo_private.kb_outside_queue_embedding: ask the worker to embed outside documents' new passages.
create or replace function exo_private.kb_outside_queue_embedding(p_outside bigint[])
returns int
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    -- Only documents that exist: the recording path (exo_kb) reaches the queue through this alone.
    with wanted as (
        select array_agg(jsonb_build_object('outside_id', o.id) order by o.id) as messages
        from exo_private.kb_outside_documents o
        where o.id = any (p_outside)
    )
    select count(*)::int
    from wanted w
    cross join lateral pgmq.send_batch('embed', w.messages) m
    where w.messages is not null
$$;
comment on function exo_private.kb_outside_queue_embedding(bigint[]) is
    'Send one embed message {outside_id} per existing outside document of p_outside: the worker embeds '
    'its kept passages that have no vector of the active model (exo_private.kb_outside_passages_to_embed). '
    'Called by exo_private.kb_outside_write for the documents that got a new passage; returns how many '
    'messages were sent.';

-- exo_private.kb_outside_passages_to_embed: the kept passages of outside documents without a vector of a model.
create or replace function exo_private.kb_outside_passages_to_embed(
    p_outside bigint[], p_model text, p_dimensions int
)
returns table (outside_id bigint, digest text, body text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select s.outside_id, s.digest, s.body
    from exo_private.kb_outside_passages s
    where s.outside_id = any (p_outside)
      and not exists (
          select 1 from exo_private.kb_outside_passage_embeddings e
          join exo_private.embedding_models m on m.id = e.model_id
          where e.outside_id = s.outside_id and e.digest = s.digest
            and m.name = p_model and m.dimensions = p_dimensions)
    order by s.outside_id, s.digest
$$;
comment on function exo_private.kb_outside_passages_to_embed(bigint[], text, int) is
    'The worker''s embed job for outside documents: the kept passages of the documents p_outside '
    'that have no vector of model (p_model, p_dimensions) yet.';

-- exo_private.store_outside_embeddings: write one batch of outside passages' vectors from the worker.
create or replace function exo_private.store_outside_embeddings(
    p_model text, p_dimensions int, p_outside bigint[], p_digests text[], p_vectors public.vector[]
)
returns int
language plpgsql volatile
security invoker
set search_path = exo_private, public, pg_temp
as $$
declare
    model int := exo_private.checked_vectors_model(
        p_model, p_dimensions, 'outside passage', p_outside, p_vectors::text[]);
    stored int;
begin
    if cardinality(p_digests) is distinct from cardinality(p_outside) then
        raise exception '% outside passage ids but % digests', cardinality(p_outside), cardinality(p_digests);
    end if;
    -- A passage dropped since (a document keeps its kb.outside_passages latest) gets no vector.
    insert into exo_private.kb_outside_passage_embeddings (outside_id, digest, model_id, embedding)
    select v.outside_id, v.digest, model, v.vec
    from unnest(p_outside, p_digests, p_vectors) as v (outside_id, digest, vec)
    join exo_private.kb_outside_passages s on s.outside_id = v.outside_id and s.digest = v.digest
    on conflict (outside_id, digest, model_id) do update set embedding = excluded.embedding;
    get diagnostics stored = row_count;
    return stored;
end
$$;
comment on function exo_private.store_outside_embeddings(text, int, bigint[], text[], public.vector[]) is
    'Store vectors of one model for outside passages (p_outside, p_digests: their keys; dimensions '
    'checked by exo_private.checked_vectors_model); passages gone meanwhile are skipped. Returns how '
    'many were stored.';

-- exo_private.kb_outside_keep: make the outside documents a wrapped search returned known, and keep their passages.
create or replace function exo_private.kb_outside_keep(
    p_profile_id bigint, p_profile text, p_keys text[], p_passages jsonb, p_at timestamptz
)
returns void
language plpgsql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    settings jsonb := exo_private.kb_settings();
    known int;
    fresh bigint[];
    stored bigint;
begin
    select count(*) into known from exo_private.kb_outside_documents o where o.profile_id = p_profile_id;
    if known + (select count(*) from unnest(p_keys) k
                where not exists (select 1 from exo_private.kb_outside_documents o
                                  where o.profile_id = p_profile_id and o.key = k))
       > (settings ->> 'outside_documents')::int then
        raise exception 'profile % knows % outside documents, the most it may', exo_private.quoted(p_profile),
            settings ->> 'outside_documents'
            using errcode = 'program_limit_exceeded', hint = 'the limit is the setting kb.outside_documents';
    end if;
    insert into exo_private.kb_outside_documents as o (profile_id, key, title, last_seen_at)
    select p_profile_id, k, (select x ->> 'title' from jsonb_array_elements(p_passages) x
                             where x ->> 'key' = k and x ->> 'title' is not null limit 1), p_at
    from unnest(p_keys) k
    on conflict (profile_id, key) do update
        set title = coalesce(excluded.title, o.title), last_seen_at = excluded.last_seen_at;
    with kept as (
        insert into exo_private.kb_outside_passages as s (outside_id, digest, body, seen_at)
        select distinct on (o.id, md5(left(x ->> 'text', 8000)))
               o.id, md5(left(x ->> 'text', 8000)), left(x ->> 'text', 8000), p_at
        from jsonb_array_elements(p_passages) x
        join exo_private.kb_outside_documents o on o.profile_id = p_profile_id and o.key = x ->> 'key'
        where x ->> 'text' <> ''
        on conflict (outside_id, digest) do update set seen_at = excluded.seen_at
        returning s.outside_id, s.xmax = 0 as inserted, octet_length(s.body) as bytes
    )
    select coalesce(array_agg(distinct k.outside_id) filter (where k.inserted), '{}'),
           coalesce(sum(k.bytes) filter (where k.inserted), 0)
      into fresh, stored
    from kept k;
    -- Of each document, the passages most recently returned are kept.
    with dropped as (
        delete from exo_private.kb_outside_passages s
        using (select s2.outside_id, s2.digest,
                      row_number() over (partition by s2.outside_id order by s2.seen_at desc, s2.digest) as n
               from exo_private.kb_outside_passages s2
               join exo_private.kb_outside_documents o on o.id = s2.outside_id
               where o.profile_id = p_profile_id and o.key = any (p_keys)) old
        where s.outside_id = old.outside_id and s.digest = old.digest
          and old.n > (settings ->> 'outside_passages')::int
        returning octet_length(s.body) as bytes
    )
    select stored - coalesce(sum(d.bytes), 0) into stored from dropped d;
    -- What the profile keeps in all is bounded too (kb.stored_bytes).
    update exo_private.kb_profiles p set stored_bytes = p.stored_bytes + stored
     where p.id = p_profile_id
    returning p.stored_bytes into stored;
    if stored > (settings ->> 'stored_bytes')::bigint then
        raise exception 'profile % would keep % bytes of outside passages, more than it may',
            exo_private.quoted(p_profile), stored
            using errcode = 'program_limit_exceeded', hint = 'the limit is the setting kb.stored_bytes';
    end if;
    -- The worker embeds the new passages (the personal stage compares them by meaning).
    if fresh <> '{}' then
        perform exo_private.kb_outside_queue_embedding(fresh);
    end if;
end
$$;
comment on function exo_private.kb_outside_keep(bigint, text, text[], jsonb, timestamptz) is
    'The use action''s own part in exo_private.kb_outside_write, before the state machine: the outside '
    'documents p_keys (distinct) of profile p_profile_id (p_profile: its name, for the messages) become '
    'known (at most kb.outside_documents), with a passage''s title; the passages p_passages [{key, '
    'title, text}] are kept (the first 8,000 characters, the kb.outside_passages latest of a document, '
    'at most kb.stored_bytes in all: past either cap, program_limit_exceeded) and the new ones queued '
    'for embedding.';

-- exo_private.kb_outside_write: the one path that writes outside documents into a user's base.
create or replace function exo_private.kb_outside_write(
    p_profile text,
    p_action text,
    p_keys text[],
    p_passages jsonb default '[]',
    p_at timestamptz default now()
)
returns jsonb
language plpgsql volatile
security definer
set search_path = exo_private, pg_temp
as $$
declare
    profile bigint;
    search bigint;
    keys text[];
    bad text;
    touched bigint[];
begin
    if exo_private.kb_read_only() is not null then
        raise exception 'recording in a personal base writes, and this is %', exo_private.kb_read_only()
            using errcode = 'read_only_sql_transaction';
    end if;
    if p_action is null or p_action not in ('use', 'accept', 'decline', 'thumbs_up', 'thumbs_down',
                                            'force_pin', 'force_remove') then
        perform exo_private.invalid_argument(format(
            'action must be one of use, accept, decline, thumbs_up, thumbs_down, force_pin, force_remove, '
            'got %s', exo_private.quoted(p_action)));
    end if;
    if p_keys is null or array_position(p_keys, null) is not null then
        perform exo_private.invalid_argument('keys must be an array without nulls');
    end if;
    if cardinality(p_keys) > 100 then
        perform exo_private.invalid_argument(format('at most 100 keys per call, got %s', cardinality(p_keys)));
    end if;
    select k into bad from unnest(p_keys) k where length(k) not between 1 and 500 limit 1;
    if found then
        perform exo_private.invalid_argument(format('a key is 1 to 500 characters, got %s', exo_private.quoted(bad)));
    end if;
    if p_action <> 'use' and cardinality(p_keys) <> 1 then
        perform exo_private.invalid_argument(format('%s takes exactly one key', p_action));
    end if;
    -- Passages: [{key, title, text}], each of a key given, title null or text.
    if p_passages is null or jsonb_typeof(p_passages) <> 'array' then
        perform exo_private.invalid_argument('passages must be a JSON array of {key, title, text}');
    end if;
    if jsonb_array_length(p_passages) > 200 then
        perform exo_private.invalid_argument(
            format('at most 200 passages per call, got %s', jsonb_array_length(p_passages)));
    end if;
    if p_action <> 'use' and jsonb_array_length(p_passages) > 0 then
        perform exo_private.invalid_argument(format('%s takes no passages', p_action));
    end if;
    if exists (select 1 from jsonb_array_elements(p_passages) x
               where jsonb_typeof(x) <> 'object'
                  or jsonb_typeof(x -> 'key') is distinct from 'string'
                  or not (x ->> 'key') = any (p_keys)
                  or coalesce(jsonb_typeof(x -> 'title'), 'null') not in ('string', 'null')
                  or length(x ->> 'title') > 500
                  or jsonb_typeof(x -> 'text') is distinct from 'string'
                  or (x - 'key' - 'title' - 'text') <> '{}'::jsonb) then
        perform exo_private.invalid_argument(
            'each passage is {key, title, text}: key one of the keys given, title null or at most 500 '
            'characters, text a string');
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
    keys := array(select distinct k from unnest(p_keys) k);
    if p_action <> 'use' then
        select k into bad from unnest(keys) k
        where not exists (select 1 from exo_private.kb_outside_documents o where o.profile_id = profile and o.key = k)
        limit 1;
        if found then
            perform exo_private.invalid_argument(
                format('the outside document %s is not in the base of profile %s', exo_private.quoted(bad),
                       exo_private.quoted(p_profile)),
                'a search of the profile returns it first');
        end if;
    end if;
    -- What the call may write, counted as given (each passage may be new, so embedded): the rows,
    -- the bytes of text kept (a passage's first 8,000 characters, a title) and the embedding work.
    search := exo_private.kb_count_write(
        profile, p_action = 'use', p_at,
        cardinality(p_keys) + jsonb_array_length(p_passages),
        coalesce((select sum(octet_length(left(x ->> 'text', 8000)) + coalesce(octet_length(x ->> 'title'), 0))
                  from jsonb_array_elements(p_passages) x), 0),
        jsonb_array_length(p_passages));

    if p_action = 'use' then
        perform exo_private.kb_outside_keep(profile, p_profile, keys, p_passages, p_at);
    end if;
    touched := array(select o.id from exo_private.kb_outside_documents o
                     where o.profile_id = profile and o.key = any (keys));
    perform exo_private.kb_apply_action(profile, p_action, '{}', touched, search, p_at);

    return coalesce((
        select jsonb_agg(jsonb_build_object(
                   'key', o.key, 'state', i.state, 'forced', i.forced,
                   'fetch_count', i.fetch_count, 'suggested', i.state = 'suggested')
                   order by o.key)
        from exo_private.kb_items i
        join exo_private.kb_outside_documents o on o.id = i.outside_id
        where i.profile_id = profile and i.outside_id = any (touched)), '[]'::jsonb);
end
$$;
comment on function exo_private.kb_outside_write(text, text, text[], jsonb, timestamptz) is
    'The one path that writes outside documents into a personal base, run as exo_kb (which may write only '
    'the kb tables), as exo_private.kb_write does for documents. Actions: use (a wrapped search of the '
    'profile returned the outside documents p_keys, in rank order, and p_passages [{key, title, text}] of '
    'them: they become known, their passages kept; fetch, threshold, absence and reset), and '
    'one key''s accept, decline, thumbs_up, thumbs_down, force_pin, force_remove. Checks: a known '
    'action, a profile that exists, at most 100 keys of 1 to 500 characters, at most 200 passages of '
    'those keys (a passage''s first 8,000 characters are kept), an action''s key known to the profile, '
    'kb.writes_per_minute calls and kb.outside_documents documents per profile, a read-write '
    'transaction. Returns the touched documents'' key, state and fetch count.';

-- exo_private.kb_outside_personal: the personal stage over a profile's saved outside documents.
create or replace function exo_private.kb_outside_personal(
    p_profile_id bigint, p_query text, p_vector text, p_k int
)
returns table (key text, title text, passages jsonb, score float8, match text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with words as (
        -- any word counts: the words of plainto_tsquery joined by "or" (as exo.facts_search)
        select pg_catalog.replace(pg_catalog.plainto_tsquery('english', p_query)::text, ' & ', ' | ')::tsquery as q
    ), knobs as materialized (
        -- once, not per passage: the settings, the model in use and the query vector parsed
        select (s ->> 'local_top_k')::int as top, (s ->> 'similarity_threshold')::float8 as threshold,
               exo_private.active_embedding_model() as model, p_vector::public.vector as v
        from exo_private.kb_settings() s
    ), saved as materialized (
        select i.outside_id from exo_private.kb_items i
        where i.profile_id = p_profile_id and i.state in ('claimed', 'pinned') and i.outside_id is not null
    ), scored as (
        -- A passage with a vector (and a query vector) by cosine similarity, one without by its words.
        select s.outside_id, ps.digest, ps.body, e.cosine,
               case when e.cosine is null and pg_catalog.numnode(w.q) > 0 and ps.tsv @@ w.q
                    then pg_catalog.ts_rank(ps.tsv, w.q)::float8 end as rank
        from saved s
        cross join words w
        cross join knobs k
        join exo_private.kb_outside_passages ps on ps.outside_id = s.outside_id
        left join lateral (
            select (1 - (x.embedding operator(public.<=>) k.v))::float8 as cosine
            from exo_private.kb_outside_passage_embeddings x
            where x.outside_id = ps.outside_id and x.digest = ps.digest and x.model_id = k.model
        ) e on k.v is not null
    ), matched as (
        select m.outside_id, m.body, coalesce(m.cosine, m.rank) as score,
               case when m.cosine is not null then 'similarity' else 'keyword' end as match,
               row_number() over (partition by m.outside_id
                                  order by m.cosine is not null desc, coalesce(m.cosine, m.rank) desc, m.digest) as n
        from scored m
        cross join knobs k
        where m.cosine >= k.threshold or m.rank is not null
    )
    select o.key, o.title,
           jsonb_agg(jsonb_build_object('text', m.body, 'score', m.score, 'match', m.match) order by m.n),
           max(m.score) filter (where m.n = 1), min(m.match) filter (where m.n = 1)
    from matched m
    join exo_private.kb_outside_documents o on o.id = m.outside_id
    cross join knobs k
    where m.n <= k.top
    group by o.id, o.key, o.title
    -- by meaning first (a cosine and a ts_rank are not on one scale), then the best score
    order by min(m.match) filter (where m.n = 1) desc, max(m.score) filter (where m.n = 1) desc, o.key
    limit p_k
$$;
comment on function exo_private.kb_outside_personal(bigint, text, text, int) is
    'The personal stage over outside documents: of the profile''s claimed and pinned ones, the kept '
    'passages whose vector (of the active embedding model) has cosine similarity at least '
    'kb.similarity_threshold with p_vector (the query''s, as pgvector text), and those without a vector '
    '(none yet, or p_vector null: no query embedding) that share a word with the question (english text '
    'search, any word, ts_rank); at most kb.local_top_k passages per document, [{text, score, match}] '
    'best first, match similarity or keyword; documents matched by meaning first, at most p_k.';

-- exo_private.kb_outside_provenance: where each outside document a wrapped search returned stands.
create or replace function exo_private.kb_outside_provenance(p_profile text, p_keys text[], p_personal jsonb)
returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with sources as materialized (
        select s.n, s.key, o.title, i.state, i.fetch_count, p_personal ->> s.key as match,
               quote_literal(coalesce(o.title, s.key)) as label
        from unnest(p_keys) with ordinality s (key, n)
        join exo_private.kb_profiles p on p.name = p_profile
        left join exo_private.kb_outside_documents o on o.profile_id = p.id and o.key = s.key
        left join exo_private.kb_items i on i.profile_id = p.id and i.outside_id = o.id
    )
    select jsonb_build_object(
        'profile', p_profile,
        'sources', coalesce(jsonb_agg(jsonb_build_object(
            'key', s.key, 'title', s.title, 'from', case when s.match is not null then 'personal' else 'global' end,
            'match', s.match,
            'state', coalesce(s.state::text, 'global'), 'fetch_count', coalesce(s.fetch_count, 0),
            'suggestion', case when s.state = 'suggested' then exo_private.kb_suggestion(s.label, s.fetch_count) end)
            order by s.n), '[]'::jsonb),
        'text', format(E'Provenance (profile %s):\n', p_profile) || coalesce(string_agg(format(
            '%s. %s, from %s: %s, fetched %s %s',
            s.n, s.label,
            case s.match when 'similarity' then 'your base (by meaning)' when 'keyword' then 'your base (by keywords)'
                         else 'your retriever' end,
            coalesce(s.state::text, 'global'), coalesce(s.fetch_count, 0),
            case when coalesce(s.fetch_count, 0) = 1 then 'time' else 'times' end)
            || case when s.state = 'suggested'
                    then E'\n   ' || exo_private.kb_suggestion(s.label, s.fetch_count)
                         || format(' (accept_suggestion(%s))', quote_literal(s.key)) else '' end,
            E'\n' order by s.n), '(no sources)'))
    from sources s
$$;
comment on function exo_private.kb_outside_provenance(text, text[], jsonb) is
    'The provenance block of a wrapped search of the profile: per outside document returned (p_keys, in '
    'rank order) its key and title, whether it came from the user''s base (p_personal: {key: match}, '
    'match similarity or keyword) or their retriever, its state and fetch count, and any pending save '
    'suggestion; as jsonb {profile, sources, text} with a text rendering, as exo_private.kb_provenance.';

-- exo.kb_outside_retrieve: one call of a lifecycle retriever over the user's own retriever.
create or replace function exo.kb_outside_retrieve(
    query text, returned jsonb, k int default 5, query_embedding float8[] default null
)
returns jsonb
language plpgsql volatile
security definer
set search_path = exo_private, pg_temp
as $$
declare
    profile text := exo_private.session_profile_name();
    wanted bigint;
    checked int;
    model int := exo_private.active_embedding_model();
    dimensions int;
    passages int;
    unembedded int;
    query_vector text;
    embedded jsonb;
    stage jsonb;
    personal jsonb;
    results jsonb;
    keys text[];
    hits text[];
    outcome jsonb;
    waited text;
begin
    if k is null or k not between 1 and 100 then
        perform exo_private.invalid_argument(format('k must be between 1 and 100, got %s', coalesce(k::text, 'null')));
    end if;
    if query is null or length(query) > 10000 then
        perform exo_private.invalid_argument('query must be text of at most 10,000 characters');
    end if;
    if returned is null or jsonb_typeof(returned) <> 'array' or jsonb_array_length(returned) > 200
       or exists (select 1 from jsonb_array_elements(returned) x
                  where jsonb_typeof(x) <> 'object' or jsonb_typeof(x -> 'key') is distinct from 'string'
                     or jsonb_typeof(x -> 'text') is distinct from 'string') then
        perform exo_private.invalid_argument(
            'returned must be a JSON array of at most 200 {key, title, text}: what the wrapped retriever returned');
    end if;
    select m.dimensions into dimensions from exo_private.embedding_models m where m.id = model;
    perform exo_private.check_query_embedding(query_embedding);
    perform exo_private.check_profile(profile);
    select p.id into wanted from exo_private.kb_profiles p where p.role = session_user;
    -- The saved documents, and how many of their passages have no vector of the model in use.
    select count(distinct i.outside_id), count(ps.digest), count(ps.digest) filter (where not exists (
               select 1 from exo_private.kb_outside_passage_embeddings e
               where e.outside_id = ps.outside_id and e.digest = ps.digest and e.model_id = model))
      into checked, passages, unembedded
    from exo_private.kb_items i
    left join exo_private.kb_outside_passages ps on ps.outside_id = i.outside_id
    where i.profile_id = wanted and i.state in ('claimed', 'pinned') and i.outside_id is not null;
    -- The question's vector: the caller's, else the endpoint's (exo.embed_query), asked only when a
    -- saved passage has a vector to compare; without one the personal stage matches by words.
    if checked = 0 then
        stage := jsonb_build_object('mode', 'none', 'why', 'no claimed or pinned outside document');
    elsif query_embedding is not null then
        query_vector := query_embedding::text;
        stage := jsonb_build_object('query_embedding', 'caller');
    elsif model is null or unembedded = passages then
        stage := jsonb_build_object('mode', 'keyword',
            'why', 'no saved passage has a vector of the embedding model in use yet (the worker embeds them)');
    else
        embedded := exo.embed_query(query);
        if embedded ? 'vector' and (embedded ->> 'dimensions')::int = dimensions then
            query_vector := embedded ->> 'vector';
            stage := jsonb_build_object('query_embedding', 'endpoint');
        else
            stage := jsonb_build_object('mode', 'keyword', 'why', 'no query embedding: ' || coalesce(
                (embedded ->> 'error_class') || ': ' || (embedded ->> 'error'),
                format('the endpoint gave %s dimensions, the stored vectors have %s',
                       embedded ->> 'dimensions', dimensions)));
        end if;
    end if;
    if query_vector is not null then
        query_vector := replace(replace(query_vector, '{', '['), '}', ']');
        stage := stage || jsonb_build_object(
            'mode', 'similarity', 'threshold', (exo_private.kb_settings() ->> 'similarity_threshold')::float8,
            'keyword_passages', unembedded);
        if unembedded > 0 then
            stage := stage || jsonb_build_object('why', format(
                '%s saved passage(s) have no vector yet (the worker embeds them) and are matched by keywords',
                unembedded));
        end if;
    end if;
    select coalesce(jsonb_agg(jsonb_build_object('key', x.key, 'title', x.title, 'passages', x.passages,
                                                 'score', x.score, 'match', x.match) order by x.n), '[]'::jsonb)
      into personal
    from exo_private.kb_outside_personal(wanted, query, query_vector, k) with ordinality x (key, title, passages, score, match, n);
    -- The personal hits first (each passage, best first), then what the wrapped retriever returned
    -- in its order, less a passage the base already gave; the first k.
    with merged as (
        select 0 as part, p.n * 1000 + q.m as n,
               jsonb_build_object('from', 'personal', 'key', p.item ->> 'key', 'title', p.item ->> 'title',
                                  'text', q.passage ->> 'text', 'score', (q.passage ->> 'score')::float8,
                                  'match', q.passage ->> 'match') as result
        from jsonb_array_elements(personal) with ordinality p (item, n)
        cross join lateral jsonb_array_elements(p.item -> 'passages') with ordinality q (passage, m)
        union all
        select 1, r.n, jsonb_build_object('from', 'global', 'key', r.item ->> 'key', 'index', r.n - 1)
        from jsonb_array_elements(returned) with ordinality r (item, n)
        where not exists (select 1 from jsonb_array_elements(personal) p
                          cross join lateral jsonb_array_elements(p -> 'passages') b
                          where p ->> 'key' = r.item ->> 'key' and b ->> 'text' = left(r.item ->> 'text', 8000))
    )
    select jsonb_agg(m.result order by m.part, m.n) into results
    from (select * from merged order by part, n limit k) m;
    results := coalesce(results, '[]'::jsonb);
    select array_agg(x.key order by x.best) into keys
    from (select r ->> 'key' as key, min(n) as best
          from jsonb_array_elements(results) with ordinality e (r, n) group by 1) x;
    keys := coalesce(keys, '{}');
    hits := array(select p ->> 'key' from jsonb_array_elements(personal) p);
    -- No cache check is recorded (hits, misses, the miss streak): exo.search records one per saved
    -- document in similarity mode (sql/700_kb.sql, kb_after_search), but a wrapper's question
    -- about one subject misses nearly every other saved document, and counted here the base
    -- would be demoted within kb.max_cache_miss_streak (10) questions (bench.kb_outside saw 990
    -- of 1,000 by words). A saved outside document leaves by its score.
    if exo_private.kb_read_only() is not null then
        outcome := jsonb_build_object('recorded', false, 'why', exo_private.kb_read_only());
    else
        -- Best effort, as exo_private.kb_after_search: the results come back whatever recording meets.
        waited := current_setting('lock_timeout');
        perform set_config('lock_timeout', exo_private.kb_settings() ->> 'lock_timeout', true);
        begin
            perform exo_private.kb_outside_write(profile, 'use', keys, coalesce((
                select jsonb_agg(jsonb_build_object(
                    'key', r ->> 'key', 'title', left(r ->> 'title', 500), 'text', r ->> 'text'))
                from jsonb_array_elements(returned) r where r ->> 'key' = any (keys)), '[]'::jsonb));
            outcome := jsonb_build_object('recorded', true);
        exception when others then
            outcome := jsonb_build_object('recorded', false, 'why', case sqlstate
                when '55P03' then 'another session of this profile holds its rows (kb.lock_timeout): not recorded'
                else sqlerrm end);
        end;
        perform set_config('lock_timeout', waited, true);
    end if;
    return jsonb_build_object(
        'results', results,
        'report', jsonb_build_object('personal', jsonb_build_object(
            'profile', profile, 'checked', checked, 'hits', to_jsonb(hits),
            'match', stage) || outcome),
        'provenance', exo_private.kb_outside_provenance(profile, keys, coalesce(
            (select jsonb_object_agg(p ->> 'key', p ->> 'match') from jsonb_array_elements(personal) p),
            '{}'::jsonb)));
end
$$;
comment on function exo.kb_outside_retrieve(text, jsonb, int, float8[]) is
    'One call of a lifecycle retriever (exocortex.client.integrations.*.LifecycleRetriever) of this session''s '
    'profile (its login role''s; a session without one is refused): returned is what the '
    'user''s own retriever gave for the query, [{key, title, text}] in its order (at most 200). The '
    'personal stage searches the profile''s claimed and pinned outside documents by cosine similarity of '
    'their kept passages'' vectors (the worker embeds them) with the query''s (query_embedding, the '
    'caller''s in the model in use, else exo.embed_query''s), at least kb.similarity_threshold, at most '
    'kb.local_top_k passages per document; a passage without a vector, or every passage without a query '
    'embedding, by its words (report.personal.match says which: {mode similarity|keyword|none, why, '
    'query_embedding, threshold, keyword_passages}). Its hits come first, then the retriever''s '
    'results less a passage the base already gave, the first k (1 to 100): results [{from: personal, '
    'key, title, text, score, match} | {from: global, key, index into returned}]. The outside documents '
    'returned are recorded in the profile''s base (exo_private.kb_outside_write: fetch counts, '
    'suggestions, resets; no cache check) when the transaction may write, else report.personal says why '
    'not; provenance is the block {profile, sources: [{key, title, from, match, state, fetch_count, '
    'suggestion}], text}.';

-- exo.kb_outside_act: the user's action on an outside document of their base.
create or replace function exo.kb_outside_act(action text, key text)
returns jsonb
language plpgsql volatile
security definer
set search_path = exo_private, pg_temp
as $$
declare
    actions constant jsonb := jsonb_build_object(
        'accept_suggestion', 'accept', 'decline_suggestion', 'decline', 'thumbs_up', 'thumbs_up',
        'thumbs_down', 'thumbs_down', 'force_pin', 'force_pin', 'force_remove', 'force_remove');
begin
    if action is null or not actions ? action then
        perform exo_private.invalid_argument(format(
            'action must be one of accept_suggestion, decline_suggestion, thumbs_up, thumbs_down, force_pin, '
            'force_remove, got %s', exo_private.quoted(action)));
    end if;
    return exo_private.kb_outside_write(exo_private.session_profile_name(), actions ->> action, array[key]) -> 0;
end
$$;
comment on function exo.kb_outside_act(text, text) is
    'Act on an outside document (by its key) of this session''s profile''s base: accept_suggestion, '
    'decline_suggestion, thumbs_up, thumbs_down, force_pin or force_remove, as exo.kb_accept_suggestion '
    'and the others do for documents; needs a read-write transaction. Returns {key, state, forced, '
    'fetch_count, suggested}.';

-- exo.kb_outside_items: the outside documents of a user's base.
create or replace function exo.kb_outside_items()
returns table (
    key text, title text, state text, forced boolean, fetch_count int, last_fetched_at timestamptz,
    declines int, next_suggestion_at int, thumbs int, score float8, suggestion text
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
    select o.key, o.title, i.state::text, i.forced, i.fetch_count, i.last_fetched_at, i.declines,
           i.next_suggestion_at, i.thumbs, s.score,
           case when i.state = 'suggested'
                then exo_private.kb_suggestion(quote_literal(coalesce(o.title, o.key)), i.fetch_count) end
    from exo_private.kb_items i
    join exo_private.kb_outside_documents o on o.id = i.outside_id
    left join exo_private.kb_scores s on s.profile_id = i.profile_id and s.outside_id = i.outside_id
    where i.profile_id = wanted and i.state <> 'global'
    order by array_position(array['pinned', 'claimed', 'suggested', 'surfaced', 'demoted'], i.state::text),
             i.fetch_count desc, o.key;
end
$$;
comment on function exo.kb_outside_items() is
    'The outside documents of this session''s profile''s base (not global): pinned, claimed, suggested, surfaced, '
    'demoted, with fetch count, declines, thumbs, score and the pending save suggestion.';

-- The recording path runs as exo_kb, which may write the kb tables and read what it checks.
alter function exo_private.kb_outside_write(text, text, text[], jsonb, timestamptz) owner to exo_kb;
grant select, insert, update on exo_private.kb_outside_documents to exo_kb;
grant select, insert, update, delete on exo_private.kb_outside_passages to exo_kb;
grant execute on function exo_private.kb_outside_queue_embedding(bigint[]),
    exo_private.kb_outside_keep(bigint, text, text[], jsonb, timestamptz) to exo_kb;
