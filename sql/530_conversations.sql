-- Chat conversations and people for agents: exo.conversation and exo.person_history (message
-- search is exo.search_messages in sql/200_chat.sql). Charged messages are withheld by the
-- rule of sql/450_deference.sql, with a hint per subject.

-- exo.conversation: the messages of one chat conversation, oldest first.
create or replace function exo.conversation(
    conversation text, max_messages int default 200, bridge text[] default '{}', as_of timestamptz default null
)
returns table (
    conversation_id bigint, title text, source text, sent_at timestamptz, sender text,
    is_owner boolean, body text, withheld jsonb
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    wanted text := pg_catalog.btrim(conversation);
    n int := least(greatest(coalesce(max_messages, 200), 1), 2000);
    released text[] := exo_private.released_keys(bridge);
    ids bigint[];
begin
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'conversation must be a conversation id or a title, got ' || exo_private.quoted(conversation));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(c.id) into ids from exo_private.chat_conversations c where c.id = wanted::bigint;
    end if;
    if ids is null then
        select array_agg(c.id order by c.id) into ids
        from exo_private.chat_conversations c
        where c.title ilike exo_private.like_pattern(wanted);
        if cardinality(ids) > 1 then
            -- a title equal to the words asked for wins over titles that only contain them
            select coalesce(array_agg(c.id order by c.id), ids) into ids
            from exo_private.chat_conversations c
            where c.id = any (ids) and pg_catalog.lower(c.title) = pg_catalog.lower(wanted);
        end if;
    end if;
    if ids is null then
        perform exo_private.invalid_argument(
            format('conversation %s names no conversation (by id or title)', exo_private.quoted(conversation)),
            'exo.search_messages(query) finds messages by their words');
    end if;
    if cardinality(ids) > 1 then
        perform exo_private.invalid_argument(
            format('conversation %s matches %s conversations: %s', exo_private.quoted(conversation), cardinality(ids),
                   (select string_agg(format('%s %s (%s)', x.id, coalesce(quote_literal(x.title), '(withheld)'),
                                             x.source),
                                      ', ' order by x.id)
                    from (select c.id, c.source,
                                 -- the title of a conversation whose every message is withheld is too
                                 case when exists (select 1 from exo_private.chat_messages m
                                                   where m.conversation_id = c.id)
                                       and not exists (select 1 from exo_private.chat_messages m
                                                       where m.conversation_id = c.id
                                                         and exo_private.unreleased(m.charged_subjects, released) = '{}')
                                      then null else coalesce(c.title, '') end as title
                          from exo_private.chat_conversations c
                          where c.id = any (ids) order by c.id limit 5) x)
                   || case when cardinality(ids) > 5 then ', ...' else '' end),
            'name one by its id or by more of its title');
    end if;
    return query
    with messages as materialized (
        select m.id, m.sent_at, m.body, m.identity_id,
               exo_private.unreleased(m.charged_subjects, released) as held
        from exo_private.chat_messages m
        where m.conversation_id = ids[1]
          and (as_of is null or m.sent_at <= as_of)  -- an undated message has no place before as_of
    ), shown as (
        select m.*, row_number() over (order by m.sent_at nulls last, m.id) as ord
        from messages m
        where m.held = '{}'
        order by ord
        limit n
    ), held as (
        select s.subject, count(*) as messages
        from messages m
        cross join lateral unnest(m.held) s (subject)
        group by s.subject
    )
    select x.conversation_id, x.title, x.source, x.sent_at, x.sender, x.is_owner, x.body, x.hint
    from (
        select 0 as part, sh.ord, c.id as conversation_id, c.title, c.source, sh.sent_at,
               coalesce(i.display_name, p.display_name, i.handle) as sender,
               coalesce(p.is_owner, false) as is_owner, sh.body, null::jsonb as hint
        from shown sh
        join exo_private.chat_conversations c on c.id = ids[1]
        join exo_private.chat_identities i on i.id = sh.identity_id
        left join exo_private.people p on p.id = i.person_id
        union all
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'conversation', ids[1], 'messages', h.messages,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo.conversation(text, int, text[], timestamptz) is
    'The messages of one chat conversation, oldest first: conversation_id, title, source, sent_at, '
    'sender, is_owner (sent by the corpus''s owner), body, withheld (null). conversation: an id '
    '(digits) or words of its title (case-insensitive substring; a title equal to them wins). Raises '
    'invalid_parameter_value when nothing matches, or when several conversations do (listing up to '
    '5 as id, title, source). At most max_messages rows (clamped to 1..2000), the first ones. Care: '
    'a message charged for a deferred subject (its name or an alias near a cue, in the message or '
    'the one before or after it, the title near them all) is left out unless bridge names the '
    'subject (by name or alias); then one last row per subject has only withheld: {subject, '
    'conversation, messages, how}. A conversation whose every message is withheld shows no title, '
    'in the listing of an ambiguous one too. as_of: only the messages sent by then (undated ones '
    'left out), the withheld counts too; null: all.';

-- exo.person_history: who someone is across chat sources.
create or replace function exo.person_history(
    name text, max_results int default 200, bridge text[] default '{}', as_of timestamptz default null
)
returns table (
    person text, source text, handle text, display_name text, is_owner boolean, entity_ids bigint[], messages bigint,
    conversations bigint, first_seen timestamptz, last_seen timestamptz, withheld jsonb
)
language plpgsql stable
security definer
set search_path = exo_private, pg_temp
as $$
declare
    pattern text;
    n int := least(greatest(coalesce(max_results, 200), 1), 1000);
    released text[] := exo_private.released_keys(bridge);
begin
    if person_history.name is null or pg_catalog.btrim(person_history.name) = '' then
        perform exo_private.invalid_argument(
            'name must be a name or handle to look for, got ' || exo_private.quoted(person_history.name));
    end if;
    pattern := exo_private.like_pattern(pg_catalog.btrim(person_history.name));
    return query
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), identities as materialized (
        select i.id, i.source, i.handle, i.display_name, p.display_name as person, coalesce(p.is_owner, false) as owner,
               -- an identity named like a closed deferred subject is that subject
               (select c.subject from closed c
                where c.key in (exo_private.canonical_key(i.display_name), exo_private.canonical_key(i.handle),
                                exo_private.canonical_key(p.display_name))
                order by c.subject limit 1) as itself
        from exo_private.chat_identities i
        left join exo_private.people p on p.id = i.person_id
        where i.display_name ilike pattern or i.handle ilike pattern or p.display_name ilike pattern
    ), sent as materialized (
        select m.identity_id, m.id, m.conversation_id, m.sent_at,
               exo_private.unreleased(m.charged_subjects, released) as held
        from identities d
        join exo_private.chat_messages m on m.identity_id = d.id
        where person_history.as_of is null or m.sent_at <= person_history.as_of
    ), listed as (
        -- counts and dates by shown messages only
        select d.person, d.source, d.handle, d.display_name, d.owner,
               array(select e.id
                     from exo_private.chat_person_names(array[d.id]) n
                     join exo_private.entities e on e.type = 'Person' and e.canonical_key = n.key
                     order by e.workspace, e.id) as entity_ids,
               count(s.id) as messages, count(distinct s.conversation_id) as conversations,
               min(s.sent_at) as first_seen, max(s.sent_at) as last_seen
        from identities d
        left join sent s on s.identity_id = d.id and s.held = '{}'
        where d.itself is null
          -- seen only in withheld messages: that they exist is in the hint, never their name
          and (s.id is not null or not exists (select 1 from sent s2 where s2.identity_id = d.id))
          -- as of a past moment, someone who had not written yet is not known
          and (person_history.as_of is null or s.id is not null)
        group by d.id, d.person, d.source, d.handle, d.display_name, d.owner
    ), numbered as (
        select l.*, row_number() over (order by l.person nulls last, l.messages desc, l.source, l.handle) as ord
        from listed l
        order by ord
        limit n
    ), held as (
        select t.subject, count(*) as messages
        from (
            select s2.subject, s.id
            from sent s cross join lateral unnest(s.held) s2 (subject)
            join identities d on d.id = s.identity_id
            where d.itself is null
            union
            select d.itself, s.id
            from identities d join sent s on s.identity_id = d.id
            where d.itself is not null
        ) t
        group by t.subject
        union all
        -- a closed identity with no messages still says it was left out
        select d.itself, 0
        from identities d
        where d.itself is not null and not exists (select 1 from sent s where s.identity_id = d.id)
    )
    select x.person, x.source, x.handle, x.display_name, x.owner, x.entity_ids, x.messages, x.conversations,
           x.first_seen, x.last_seen, x.hint
    from (
        select 0 as part, nb.ord, nb.person, nb.source, nb.handle, nb.display_name, nb.owner, nb.entity_ids,
               nb.messages, nb.conversations, nb.first_seen, nb.last_seen, null::jsonb as hint
        from numbered nb
        union all
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'messages', h.messages,
                                  'how', exo_private.hint_how(h.subject))
        from (select h0.subject, sum(h0.messages)::bigint as messages from held h0 group by h0.subject) h
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo.person_history(text, int, text[], timestamptz) is
    'Chat identities whose display name or handle, or whose linked person''s name, contains name '
    '(case-insensitive substring), across every source: person (the linked person, the owner''s '
    'identities all link to the owner), source, handle, display_name, is_owner, entity_ids (the '
    'Person entities this identity is, one per workspace it talked in: exo.dossier, exo.related and '
    'exo.timeline join its chats and documents), messages, '
    'conversations, first_seen and last_seen (first and last message), withheld (null). At most '
    'max_results rows (clamped to 1..1000). Raises invalid_parameter_value for a blank name. Care: '
    'messages charged for a deferred subject are neither counted nor dated, and an identity named '
    'like a deferred subject (its name or an alias) is left out, as is one whose every message is '
    'withheld, unless bridge names the subject; '
    'then one last row per subject has only withheld: {subject, messages, how}. as_of: only the '
    'messages sent by then (undated ones left out) are counted and dated, and only identities that '
    'had sent one are listed; null: all.';
