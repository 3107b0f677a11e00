-- Chat participants in the graph: who took part in a chat window is known without a model, so
-- each sender who is a person becomes a Person entity of the window's workspace (the owner's
-- own entity for the owner), mentioned in the window, and the people of one window are joined
-- by a TALKED_WITH relation. These rows have origin 'structure': extraction adds to them and
-- never removes them, and every new generation gets them again (bump_generation).

-- exo_private.chat_person_names: the Person each chat identity is, if any.
create or replace function exo_private.chat_person_names(identities bigint[])
returns table (identity_id bigint, name text, key text, is_owner boolean)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The owner is their named self (no entity before `exo owner` names them); anyone else is
    -- their linked person's or their own display name. A handle alone (a phone number, an
    -- address) names nobody, and ChatGPT's assistant is a model, not a person.
    select x.identity_id, x.name, coalesce(x.entity_key, exo_private.canonical_key(x.name)), x.is_owner
    from (
        select i.id as identity_id, coalesce(p.is_owner, false) as is_owner,
               case when p.is_owner then p.display_name
                    else pg_catalog.btrim(coalesce(p.display_name, i.display_name)) end as name,
               p.entity_key
        from exo_private.chat_identities i
        left join exo_private.people p on p.id = i.person_id
        where i.id = any(identities)
          and not (i.source = 'chatgpt' and i.handle = 'assistant')
    ) x
    where x.name ~ '[[:alpha:]]' and x.name !~ '@'
      and (not x.is_owner or x.entity_key is not null)
$$;
comment on function exo_private.chat_person_names(bigint[]) is
    'For chat identities: the name and canonical key of the Person each one is (the owner by '
    'people.entity_key once named, others by their person''s or their own display name), and '
    'whether it is the owner. Identities with no name (a bare phone number or address) and '
    'ChatGPT''s assistant are left out.';

-- exo_private.chat_window_senders: who sent a message in each window of some conversations.
create or replace function exo_private.chat_window_senders(conversations bigint[])
returns table (workspace text, window_id bigint, document_id bigint, chunk_id bigint, name text, key text,
               is_owner boolean, messages bigint, first_at timestamptz, last_at timestamptz, sense text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with windows as materialized (
        select cw.workspace, cw.chunk_id, cw.message_ids, d.id as document_id, x.id as window_id
        from exo_private.documents d
        join exo_private.chat_windows cw on cw.conversation_id = d.conversation_id and cw.workspace = d.workspace
        join exo_private.chunks c on c.workspace = cw.workspace and c.id = cw.chunk_id
        join exo_private.extraction_windows x on x.document_id = d.id and x.ordinal = c.ordinal
        where d.conversation_id = any(conversations)
    ), sent as materialized (
        select w.workspace, w.window_id, w.document_id, w.chunk_id, m.identity_id,
               count(*) as messages, min(m.sent_at) as first_at, max(m.sent_at) as last_at
        from windows w
        cross join unnest(w.message_ids) x (message_id)
        join exo_private.chat_messages m on m.id = x.message_id
        group by w.workspace, w.window_id, w.document_id, w.chunk_id, m.identity_id
    )
    -- One row a (window, person): a person's identities (two handles, one name) add up, unless
    -- a person split the name's sender at one address off (exo entity split --address).
    select s.workspace, s.window_id, s.document_id, s.chunk_id,
           (array_agg(n.name order by n.is_owner desc, n.name))[1], n.key, bool_or(n.is_owner),
           sum(s.messages)::bigint, min(s.first_at), max(s.last_at), x.sense
    from sent s
    join exo_private.chat_person_names(array(select distinct s2.identity_id from sent s2)) n
      on n.identity_id = s.identity_id
    join exo_private.chat_identities i on i.id = s.identity_id
    cross join lateral (
        select case when n.is_owner or i.handle !~ '@' then ''
                    else exo_private.entity_sense(s.workspace, n.key, 'Person', null, i.handle) end as sense
    ) x
    group by s.workspace, s.window_id, s.document_id, s.chunk_id, n.key, x.sense
$$;
comment on function exo_private.chat_window_senders(bigint[]) is
    'For every window of the given conversations: its workspace, extraction window, document and '
    'chunk, and each Person who sent a message in it (exo_private.chat_person_names), once per key '
    'and sense (the sense of an address anchor equal to the identity''s handle, else ''''), '
    'with how many messages they sent in it and when the first and the last was sent.';

-- exo_private.link_participants: the structural graph of chat windows.
create or replace function exo_private.link_participants(conversations bigint[])
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    gens jsonb;
    structural boolean := coalesce(
        (select (s.value #>> '{}')::boolean from exo_private.settings s where s.key = 'graph.structural'), true);
    ent_ids bigint[];
    rel_ids bigint[];
    n_mentions bigint;
    named_workspaces text[];
    named_keys text[];
begin
    gens := exo_private.structure_generations(array(
        select d.workspace from exo_private.documents d where d.conversation_id = any(conversations)));

    with senders as materialized (
        select s.*, (gens ->> s.workspace)::int as generation
        from exo_private.chat_window_senders(conversations) s
    ), resolved as materialized (
        -- The Person entities, one per (workspace, key, sense) made by upsert_entity; an existing one
        -- (of any type) keeps its name.
        select k.workspace, k.key, k.sense,
               exo_private.upsert_entity(k.workspace, k.generation, 'Person', k.key, k.name, k.is_owner, k.sense) as id
        from (select distinct on (s.workspace, s.key, s.sense) s.workspace, s.generation, s.key, s.sense, s.name,
                     s.is_owner
              from senders s
              order by s.workspace, s.key, s.sense, s.is_owner desc, s.name) k
    ), people as materialized (
        select s.*, e.id as entity_id
        from senders s
        join resolved e on e.workspace = s.workspace and e.key = s.key and e.sense = s.sense
    ), mentioned as (
        insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface, origin)
        select p.entity_id, p.window_id, p.document_id, p.chunk_id, p.name, 'structure'
        from people p
        on conflict do nothing
        returning 1
    ), related as (
        -- Everyone who wrote in one window talked with everyone else who did (one edge a
        -- pair, the lower entity id first), from the first to the last message either of
        -- them sent in it; unless graph.structural is off.
        insert into exo_private.relations
            (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id, origin,
             first_at, last_at, message_count)
        select w.workspace, w.generation, lo.id, hi.id, 'talked with', 'TALKED_WITH', w.window_id, w.document_id,
               'structure', least(lo.first_at, hi.first_at), greatest(lo.last_at, hi.last_at), lo.n + hi.n
        from (
            select p.workspace, p.generation, p.window_id, p.document_id,
                   array_agg(p.entity_id) as ids, array_agg(p.messages) as ns,
                   array_agg(p.first_at) as firsts, array_agg(p.last_at) as lasts
            from people p
            where structural
            group by p.workspace, p.generation, p.window_id, p.document_id
        ) w
        -- pairs within a window's few people (a self-join of the CTE would be planned blind)
        cross join unnest(w.ids, w.ns, w.firsts, w.lasts) lo (id, n, first_at, last_at)
        cross join unnest(w.ids, w.ns, w.firsts, w.lasts) hi (id, n, first_at, last_at)
        where hi.id > lo.id
        -- a window that gained messages says so
        on conflict (subject_id, predicate, object_id, window_id) do update
            set first_at = excluded.first_at, last_at = excluded.last_at, message_count = excluded.message_count
            where (relations.first_at, relations.last_at, relations.message_count)
                  is distinct from (excluded.first_at, excluded.last_at, excluded.message_count)
        returning exo_private.relations.id
    )
    select (select coalesce(array_agg(distinct e.id), '{}') from resolved e),
           (select count(*) from mentioned),
           (select coalesce(array_agg(related.id), '{}') from related),
           (select array_agg(e.workspace order by e.workspace, e.key) from resolved e),
           (select array_agg(e.key order by e.workspace, e.key) from resolved e)
      into ent_ids, n_mentions, rel_ids, named_workspaces, named_keys;

    -- A participant whose name a note gives as a place is two things (before the projection:
    -- entity rows are locked before graph labels).
    perform exo_private.find_type_senses(named_workspaces, named_keys);
    perform exo_private.project_entities(ent_ids);
    perform exo_private.project_relations(rel_ids);
    return jsonb_build_object('entities', cardinality(ent_ids), 'mentions_new', n_mentions,
                              'relations_new', cardinality(rel_ids));
end
$$;
comment on function exo_private.link_participants(bigint[]) is
    'The structural graph of the given chat conversations'' windows, in each workspace''s current '
    'generation: a Person entity per sender who is a person (exo_private.chat_person_names, made '
    'by upsert_entity), a mention of it in each window they wrote in, and, unless graph.structural '
    'is false, a TALKED_WITH relation between the people of a window with the first and last time '
    'and the count of the two''s messages in it (exo_private.structural_edges sums them across '
    'windows), all with origin ''structure''; projected into the AGE graph. Idempotent. Returns '
    '{entities, mentions_new, relations_new}.';
