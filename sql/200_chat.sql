-- Chat history: full-text search over imported messages, and owner linking.

-- exo.search_messages: chat messages matching a web-style query, best first.
create or replace function exo.search_messages(query text, max_results int default 20)
returns table (
    message_id         bigint,
    conversation_id    bigint,
    conversation_title text,
    source             text,
    sender             text,
    is_owner           boolean,
    sent_at            timestamptz,
    body               text,
    rank               real
)
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    with q as (
        -- A blank query matches nothing (a null tsquery matches no row). Only the first
        -- 1,000 characters count: a query of thousands of words would exhaust the stack.
        select case when pg_catalog.btrim(coalesce(query, '')) <> ''
                    then pg_catalog.websearch_to_tsquery('english', pg_catalog.left(query, 1000))
               end as tsq
    )
    select m.id, c.id, c.title, c.source,
           coalesce(i.display_name, p.display_name, i.handle),
           coalesce(p.is_owner, false),
           m.sent_at, m.body,
           pg_catalog.ts_rank_cd(m.tsv, q.tsq)
    from q
    join exo_private.chat_messages m on m.tsv operator(pg_catalog.@@) q.tsq
    join exo_private.chat_conversations c on c.id = m.conversation_id
    join exo_private.chat_identities i on i.id = m.identity_id
    left join exo_private.people p on p.id = i.person_id
    order by 9 desc, m.sent_at desc nulls last, m.id desc
    limit least(greatest(coalesce(max_results, 20), 1), 200)
$$;
comment on function exo.search_messages(text, int) is
    'Chat messages matching a web-style query (websearch_to_tsquery, English stemming), best first '
    '(ts_rank_cd, then newest); a blank query returns nothing, only its first 1,000 characters count; '
    'max_results is clamped to 1..200.';

-- exo_private.link_owner_identity: link a chat identity to the owner person.
create or replace function exo_private.link_owner_identity(source text, handle text)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    owner_id    bigint;
    identity_id bigint;
begin
    select p.id into owner_id from exo_private.people p where p.is_owner;
    if owner_id is null then
        raise exception 'there is no owner person'
            using hint = 'insert a row into exo_private.people with is_owner = true';
    end if;
    update exo_private.chat_identities i
       set person_id = owner_id
     where i.source = link_owner_identity.source
       and i.handle = link_owner_identity.handle
    returning i.id into identity_id;
    if identity_id is null then
        raise exception 'chat identity % of source % does not exist', handle, source
            using hint = 'import a chat in which it appears first';
    end if;
    return identity_id;
end
$$;
comment on function exo_private.link_owner_identity(text, text) is
    'Link the chat identity (source, handle) to the owner person; returns the identity id. '
    'Raises when the identity or the owner does not exist.';
