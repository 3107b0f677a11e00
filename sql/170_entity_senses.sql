-- Which of the things sharing a name a mention is (issue 16). A name is one entity per workspace
-- unless exo_private.entity_senses says it means more (find_type_senses in sql/310_structural_graph.sql from
-- the structure, split_sense in sql/305_entity_identity.sql from a person); chats, headers and extraction all ask this function.
-- Here, before the chat graph (sql/205_chat_graph.sql), whose SQL functions call it.

-- exo_private.entity_sense: which of the things sharing a name a mention is.
create or replace function exo_private.entity_sense(
    p_workspace text, p_key text, p_type text, p_document bigint, p_address text default null
)
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- An address is the surest sign (a correspondent is who writes from it), then the type.
    select coalesce((
        select s.sense
        from exo_private.entity_senses s
        where s.workspace = p_workspace and s.canonical_key = p_key
          and case s.anchor_kind
                  when 'address' then
                      case when p_address is not null then s.anchor = pg_catalog.lower(p_address)
                           else exists (select 1 from exo_private.entity_addresses a
                                        where a.document_id = p_document and a.canonical_key = p_key
                                          and a.address = s.anchor) end
                  when 'type' then s.anchor = p_type
              end
        order by s.anchor_kind = 'address' desc, s.sense
        limit 1), '')
$$;
comment on function exo_private.entity_sense(text, text, text, bigint, text) is
    'The sense (exo_private.entities.sense) of a mention of key p_key in workspace p_workspace: the '
    'sense of an address anchor (entity_senses) that is p_address, or, with no address given, one '
    'that a header of document p_document gives with that name (entity_addresses); else that of a '
    'type anchor equal to p_type; else '''' (the one thing the name means unless evidence says more).';
