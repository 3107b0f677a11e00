-- Exact edges from structure (issue 16): who wrote to whom and who a note names are known
-- without a model. For every email (From, To, Cc) and every note whose frontmatter names people
-- or places (settings graph.people_keys, graph.place_keys), the names become entities of the
-- document's workspace, mentioned in its first window and chunk, joined by relations with origin
-- 'structure' whose evidence is that document:
--   email:  sender WROTE_TO each To, COPIED each Cc (predicate_raw the header), dated by Date;
--           a reply's sender REPLIED_TO the sender of the message it answers (In-Reply-To, else
--           the newest References id that is ingested in the same workspace). A thread is a
--           relation between authors, dated by the reply: `related`, the level-set walk and
--           multi-hop read it like any edge; the messages themselves stay linked through
--           documents.metadata (message_id, in_reply_to, references).
--   notes:  the people of one key pairwise (its predicate: WITH, ATTENDED ...), an AUTHORED key's
--           people to every other person the note names, every person LOCATED_IN each place;
--           predicate_raw is the key as written, the edge is dated by the note's date.
--   links:  a note is no entity: a [[link]] whose target is the name of a person or place that
--           structure names somewhere is a mention of them in the linking note, and a note titled
--           by such a name LINKS_TO them; every other link stays a link between documents
--           (document_links). An ingest run links its notes again at its end, so a name a later
--           file of the run introduced counts; names only the model found never do.
-- Addresses are identity evidence (entity_addresses); the owner is recognised by the addresses
-- of graph.owner_addresses and the owner's chat identities, or by name. Chat windows are linked
-- by sql/205_chat_graph.sql. Rows are rebuilt per document (link_structure), go with its
-- windows when it is re-chunked or deleted, and are made again by bump_generation.

-- exo_private.structural_names: every name the structure of some documents gives.
create or replace function exo_private.structural_names(docs bigint[])
returns table (document_id bigint, source text, role text, type exo_private.entity_type, name text, key text,
               address text, ordinal int, at timestamptz, predicate text)
language plpython3u stable rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include structure
import json

keys = {
    r["key"]: json.loads(r["value"])
    for r in plpy.execute(
        "select key, value::text from exo_private.settings where key in ('graph.people_keys', 'graph.place_keys')"
    )
}
people_keys, place_keys = keys.get("graph.people_keys") or {}, keys.get("graph.place_keys") or {}
rows = plpy.execute(
    plpy.prepare(
        """select d.id, d.metadata::text as metadata, d.frontmatter::text as frontmatter
           from exo_private.documents d
           where d.id = any($1) and d.conversation_id is null
             and (d.metadata ? 'from' or d.frontmatter <> '{}'::jsonb)""",
        ["bigint[]"],
    ),
    [docs],
)
out = []
for r in rows:
    for n in names(json.loads(r["metadata"] or "{}"), json.loads(r["frontmatter"] or "{}"), people_keys, place_keys):
        out.append(
            (r["id"], n["source"], n["role"], n["type"], n["name"], n["key"], n["address"], n["ordinal"],
             n["at"].isoformat() if n["at"] else None, n["predicate"])
        )  # fmt: skip
return out
$$;
comment on function exo_private.structural_names(bigint[]) is
    'The names the structure of the given documents gives (plpy/structure.py): email From/To/Cc '
    '(source email, role the header, the address, at the Date, predicate WROTE_TO or COPIED) and '
    'the frontmatter keys of graph.people_keys and graph.place_keys (source frontmatter, role the '
    'key, predicate the key''s). name is empty and key null for an address without a name. '
    'Conversation documents are left out (sql/205_chat_graph.sql).';

-- exo_private.owner_addresses: the email addresses that are the owner's.
create or replace function exo_private.owner_addresses()
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select array(select pg_catalog.lower(a)
                 from exo_private.settings s, jsonb_array_elements_text(s.value) a
                 where s.key = 'graph.owner_addresses')
           || array(select pg_catalog.lower(i.handle)
                    from exo_private.chat_identities i
                    join exo_private.people p on p.id = i.person_id
                    where p.is_owner and i.handle like '%@%')
$$;
comment on function exo_private.owner_addresses() is
    'The owner''s email addresses, lower-cased: the setting graph.owner_addresses and the owner''s '
    'chat identities that are addresses (a mail archive''s).';

-- exo_private.structural_people: those names as entities-to-be, anchored in their document.
create or replace function exo_private.structural_people(docs bigint[], gens jsonb)
returns table (workspace text, generation int, document_id bigint, window_id bigint, chunk_id bigint,
               source text, role text, type exo_private.entity_type, name text, key text, address text,
               ordinal int, at timestamptz, predicate text, is_owner boolean)
language sql stable rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The owner is whoever writes from one of the owner's addresses or bears the owner's name;
    -- before `exo owner` names them, an owner's address names nobody (as in chats).
    with owner as (
        select p.display_name, p.entity_key, exo_private.owner_addresses() as addresses
        from exo_private.people p
        where p.is_owner
    )
    select d.workspace, (gens ->> d.workspace)::int, d.id, w.id, c.id, n.source, n.role,
           case when x.is_owner then 'Person' else n.type end,
           case when x.is_owner then o.display_name else n.name end,
           case when x.is_owner then o.entity_key else n.key end,
           n.address, n.ordinal, coalesce(n.at, d.written_at::timestamptz),
           case when n.predicate is not null then exo_private.normalise_predicate(n.predicate) end, x.is_owner
    from exo_private.structural_names(docs) n
    join exo_private.documents d on d.id = n.document_id
    join exo_private.extraction_windows w on w.document_id = d.id and w.ordinal = 0
    left join exo_private.chunks c on c.workspace = d.workspace and c.document_id = d.id and c.ordinal = 0
    left join owner o on true
    cross join lateral (
        select coalesce(n.address = any(o.addresses) or n.key = o.entity_key, false) as is_owner
    ) x
    where gens ? d.workspace
      and case when x.is_owner then o.entity_key is not null else n.key is not null end
$$;
comment on function exo_private.structural_people(bigint[], jsonb) is
    'The names of exo_private.structural_names for documents of the workspaces in gens '
    '({workspace: generation}), each with its document''s first window and chunk; the owner''s '
    'address or name gives the owner''s entity key and name (is_owner); names nobody (an address '
    'without a name) are left out.';

-- exo_private.structure_generations: the current generation of workspaces, locked against a bump.
create or replace function exo_private.structure_generations(workspaces text[])
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    gens jsonb := '{}'::jsonb;
    ws text;
begin
    -- Generation 1 of 'seed' where there is none; share-locked like a merge, so that
    -- bump_generation waits for the caller's transaction.
    for ws in select distinct x from unnest(workspaces) x where x is not null order by 1 loop
        gens := gens || jsonb_build_object(ws, exo_private.current_generation(ws, 'seed'));
        perform 1 from exo_private.extraction_generations g
        where g.workspace = ws and g.generation = (gens ->> ws)::int
        for share;
    end loop;
    return gens;
end
$$;
comment on function exo_private.structure_generations(text[]) is
    'The current extraction generation of each workspace as {workspace: generation} (generation 1 '
    'of model ''seed'' where there is none), each share-locked until the caller commits so that a '
    'generation change waits for structural rows being written into it.';

-- exo_private.drop_relation_edges: relations that go take their AGE edges with them.
create or replace function exo_private.drop_relation_edges()
returns trigger
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    grp record;
begin
    -- A relation goes with its window (a document re-chunked or deleted), its entity or a
    -- rebuild of its document's structure; its edge's graphid derives from its id.
    for grp in
        select o.workspace, array_agg(ag_catalog._graphid(l.id, o.id)) as edge_ids
        from old_relations o
        join ag_catalog.ag_graph g on g.name = exo_private.graph_name(o.workspace)
        join ag_catalog.ag_label l on l.graph = g.graphid and l.name = o.predicate and l.kind = 'e'
        group by o.workspace
    loop
        execute format('delete from %I._ag_label_edge x where x.id = any($1)', exo_private.graph_name(grp.workspace))
            using grp.edge_ids;
    end loop;
    return null;
end
$$;
comment on function exo_private.drop_relation_edges() is
    'Trigger after a delete from relations (a window re-made, a document deleted, a structural '
    'rebuild, an entity removed): delete their edges from the workspace''s AGE graph.';

create or replace trigger drop_relation_edges
    after delete on exo_private.relations
    referencing old table as old_relations
    for each statement execute function exo_private.drop_relation_edges();

-- exo_private.find_type_senses: names the structure gives as a Place and as a Person.
create or replace function exo_private.find_type_senses(workspaces text[], keys text[])
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    found record;
    relink bigint[] := '{}'::bigint[];
    n int := 0;
begin
    -- Only a name whose first sense was ever given as a Place can be one (a vote the structure
    -- of a note's place key cast), so most names cost one probe of the unique index.
    for found in
        with candidates as materialized (
            select e.id, e.workspace, e.generation, e.canonical_key as key
            from (select distinct u.ws, u.key from unnest(workspaces, keys) u (ws, key)) u
            join exo_private.entities e
              on e.workspace = u.ws and e.canonical_key = u.key and e.sense = ''
             and e.generation = (select max(g.generation) from exo_private.extraction_generations g
                                 where g.workspace = u.ws)
            where e.type_votes ? 'Place' and not e.is_owner
              and not exists (select 1 from exo_private.entity_senses s
                              where s.workspace = u.ws and s.canonical_key = u.key
                                and s.anchor_kind = 'type' and s.anchor = 'Place')
        ), notes as materialized (
            -- the notes whose frontmatter names them (read again: a mention keeps no key)
            select distinct c.id, c.key, m.document_id
            from candidates c
            join exo_private.mentions m on m.entity_id = c.id and m.origin = 'structure'
            join exo_private.documents d on d.id = m.document_id
            where d.conversation_id is null and not d.metadata ? 'from'
        ), typed as materialized (
            select o.id, n.type
            from exo_private.structural_names(array(select distinct o.document_id from notes o)) n
            join notes o on o.document_id = n.document_id and o.key = n.key
        )
        -- A Place by a note's place key, and a Person by a header, a chat or a note's people key.
        select c.*, array(select o.document_id from notes o where o.id = c.id) as documents
        from candidates c
        where exists (select 1 from typed t where t.id = c.id and t.type = 'Place')
          and (exists (select 1 from typed t where t.id = c.id and t.type = 'Person')
               or exists (select 1 from exo_private.entity_addresses a
                          where a.workspace = c.workspace and a.canonical_key = c.key)
               or exists (select 1 from exo_private.mentions m
                          join exo_private.documents d on d.id = m.document_id
                          where m.entity_id = c.id and m.origin = 'structure' and d.conversation_id is not null))
    loop
        insert into exo_private.entity_senses (workspace, canonical_key, sense, anchor_kind, anchor, how)
        values (found.workspace, found.key, 'place', 'type', 'Place', 'structure')
        on conflict do nothing;
        -- The first sense is the Person now; the Place's rows move to the new sense.
        if (select e.type from exo_private.entities e where e.id = found.id) = 'Place' then
            perform exo_private.unproject_entities(array[found.id]);
            update exo_private.entities e set type = 'Person' where e.id = found.id;
            perform exo_private.reproject_entities(array[found.id]);
        end if;
        relink := relink || found.documents;
        n := n + 1;
    end loop;
    if n > 0 then
        perform exo_private.link_structure(relink);
    end if;
    return n;
end
$$;
comment on function exo_private.find_type_senses(text[], text[]) is
    'For the names keys[i] of workspaces[i]: a name the structure gives as a Place (a note''s '
    'graph.place_keys) and as a Person (an email header, a chat, a note''s graph.people_keys) means '
    'two things: entity_senses gets its Place sense (anchor type Place, how structure), the first '
    'sense becomes the Person, and the notes that name it are linked again so that the Place''s '
    'structural rows move to the new sense. Returns how many names got one.';

-- exo_private.link_wiki_targets: link_structure's wiki links.
create or replace function exo_private.link_wiki_targets(
    docs bigint[], gens jsonb, out mentions_new bigint, out relations_new bigint[]
)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    with linked as materialized (
        select d.workspace, (gens ->> d.workspace)::int as generation, d.id as document_id, w.id as window_id,
               c.id as chunk_id, l.target,
               exo_private.canonical_key(pg_catalog.regexp_replace(l.target, '^.*/|\.md$', '', 'g')) as target_key,
               exo_private.canonical_key(d.title) as title_key, d.written_at
        from exo_private.documents d
        join exo_private.document_links l on l.source_document = d.id
        join exo_private.extraction_windows w on w.document_id = d.id and w.ordinal = 0
        left join exo_private.chunks c on c.workspace = d.workspace and c.document_id = d.id and c.ordinal = 0
        where d.id = any(docs) and gens ? d.workspace
    ), known as materialized (
        -- the entity of a key, when a header, a chat or frontmatter names it somewhere (the
        -- name's first sense, when it has two)
        select distinct on (x.workspace, x.generation, x.canonical_key) x.workspace, x.generation, x.canonical_key, x.id
        from exo_private.entities x
        where x.type in ('Person', 'Place')
          and (x.workspace, x.generation, x.canonical_key) in (
              select l.workspace, l.generation, k from linked l, unnest(array[l.target_key, l.title_key]) k)
          and exists (select 1 from exo_private.mentions m where m.entity_id = x.id and m.origin = 'structure')
        order by x.workspace, x.generation, x.canonical_key, x.sense
    ), targets as materialized (
        select distinct on (l.document_id, k.id) l.*, k.id as entity_id
        from linked l
        join known k on k.workspace = l.workspace and k.generation = l.generation and k.canonical_key = l.target_key
        order by l.document_id, k.id, l.target
    ), mentioned as (
        insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface, origin)
        select t.entity_id, t.window_id, t.document_id, t.chunk_id, t.target, 'structure'
        from targets t
        on conflict do nothing
        returning 1
    ), related as (
        insert into exo_private.relations
            (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id,
             origin, first_at, last_at)
        select t.workspace, t.generation, k.id, t.entity_id, 'wiki link', 'LINKS_TO', t.window_id, t.document_id,
               'structure', t.written_at, t.written_at
        from targets t
        join known k on k.workspace = t.workspace and k.generation = t.generation and k.canonical_key = t.title_key
        where k.id <> t.entity_id
        on conflict do nothing
        returning exo_private.relations.id
    )
    select (select count(*) from mentioned), (select coalesce(array_agg(related.id), '{}') from related)
      into mentions_new, relations_new;
end
$$;
comment on function exo_private.link_wiki_targets(bigint[], jsonb) is
    'link_structure''s wiki links, once the names of structure exist (gens: each workspace''s current '
    'generation): a [[link]] whose target is the name of a person or place known from structure is a '
    'mention of them in the note, and a note titled by such a name LINKS_TO them; any other link stays '
    'a link between documents (document_links). Returns the new mentions'' count and relations'' ids.';

-- exo_private.structure_documents: link_structure's documents, with the replies that waited for them.
create or replace function exo_private.structure_documents(doc_ids bigint[])
returns bigint[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The replies were ingested before the message they answer: they could not name its sender then.
    select array(
        select d.id from exo_private.documents d
        where d.id = any(doc_ids) and d.conversation_id is null
        union
        select r.id
        from exo_private.documents r
        where r.metadata ? 'in_reply_to'
          and r.metadata ->> 'in_reply_to' = any(array(
              select p.metadata ->> 'message_id' from exo_private.documents p
              where p.id = any(doc_ids) and p.metadata ? 'message_id')))
$$;
comment on function exo_private.structure_documents(bigint[]) is
    'The documents link_structure rebuilds for doc_ids: those that are no conversation, and every '
    'reply (In-Reply-To) to a message among them, ingested before it.';

-- exo_private.reply_parents: the message each reply among some documents answers.
create or replace function exo_private.reply_parents(docs bigint[])
returns table (document_id bigint, parent_id bigint)
language sql stable rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
    select d.id, pick.id
    from exo_private.documents d
    cross join lateral (
        -- In-Reply-To first, then the newest reference; each id looked up alone, by index
        -- (a join of the ids with documents is misjudged to match half the table).
        select found.id
        from jsonb_array_elements_text(
                 jsonb_build_array(d.metadata -> 'in_reply_to') || coalesce(d.metadata -> 'references', '[]'))
             with ordinality ref (message_id, n)
        cross join lateral (
            select (array_agg(p.id order by p.id))[1] as id
            from exo_private.documents p
            where p.metadata ->> 'message_id' = ref.message_id and p.metadata ? 'message_id'
              and p.workspace = d.workspace and p.id <> d.id and p.stage <> 'deleted'
        ) found
        where found.id is not null
        order by ref.n = 1 desc, ref.n desc
        limit 1
    ) pick
    where d.id = any(docs) and (d.metadata ? 'in_reply_to' or d.metadata ? 'references')
$$;
comment on function exo_private.reply_parents(bigint[]) is
    'For each email among docs that answers one ingested in its workspace (not deleted): its parent, '
    'the message of its In-Reply-To, else of its newest References id that is ingested (the lowest '
    'document id where a message id is ingested twice).';

-- exo_private.structural_entities: the names structure gives in some documents, each with its entity.
create or replace function exo_private.structural_entities(docs bigint[], gens jsonb)
returns table (workspace text, generation int, document_id bigint, window_id bigint, chunk_id bigint,
               source text, role text, type exo_private.entity_type, name text, key text, address text,
               ordinal int, at timestamptz, predicate text, is_owner boolean, own boolean, sense text,
               entity_id bigint, replied_to bigint[])
language sql volatile rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
    with parents as materialized (
        select * from exo_private.reply_parents(docs)
    ), named as materialized (
        -- (a namesake of the owner a person split off by address is not the owner)
        select p.*, p.document_id = any(docs) as own,
               exo_private.entity_sense(p.workspace, p.key, p.type::text, p.document_id, p.address) as sense
        from exo_private.structural_people(docs || array(select pa.parent_id from parents pa), gens) p
        where p.document_id = any(docs) or (p.source = 'email' and p.role = 'from' and p.ordinal = 0)
    ), resolved as materialized (
        -- One entity a (workspace, key, sense), the one place entities are made (an alias gives
        -- its entity).
        select k.workspace, k.key, k.sense,
               exo_private.upsert_entity(k.workspace, k.generation, k.type::text, k.key, k.name,
                                         k.is_owner and k.sense = '', k.sense) as id
        from (select distinct on (n.workspace, n.key, n.sense)
                     n.workspace, n.generation, n.type, n.key, n.sense, n.name, n.is_owner
              from named n
              order by n.workspace, n.key, n.sense, n.is_owner desc, n.own desc, n.name) k
    ), people as materialized (
        select n.*, e.id as entity_id
        from named n
        join resolved e on e.workspace = n.workspace and e.key = n.key and e.sense = n.sense
    )
    select p.*, coalesce(s.entity_ids, '{}')
    from people p
    left join parents pa on pa.document_id = p.document_id
    left join (select a.document_id, array_agg(a.entity_id) as entity_ids
               from people a
               where a.source = 'email' and a.role = 'from' and a.ordinal = 0
               group by a.document_id) s on s.document_id = pa.parent_id
$$;
comment on function exo_private.structural_entities(bigint[], jsonb) is
    'link_structure''s people: the names of structural_people in docs (own) and the senders of the '
    'messages replies among them answer (reply_parents), each with its sense (entity_sense) and its '
    'entity, made or found here by upsert_entity (the owner''s where is_owner), one a (workspace, key, '
    'sense); replied_to: the entity of the sender of the message a reply''s document answers.';

-- exo_private.structural_pairs: the relations the names of one document give between their entities.
create or replace function exo_private.structural_pairs(
    entity_ids bigint[], sources text[], roles text[], ordinals int[], types exo_private.entity_type[],
    predicates text[], ats timestamptz[], replied_to bigint[]
)
returns table (subject_id bigint, object_id bigint, predicate_raw text, predicate text, at timestamptz,
               message_count int)
language sql immutable rows 10
security invoker
set search_path = exo_private, pg_temp
as $$
    with named as materialized (
        select *
        from unnest(entity_ids, sources, roles, ordinals, types, predicates, ats)
             n (entity_id, source, role, ordinal, type, predicate, at)
    )
    -- an email's sender to each of its To and Cc
    select s.entity_id, r.entity_id, r.role, r.predicate, s.at, 1
    from named s
    join named r on r.source = 'email' and r.role in ('to', 'cc')
    where s.source = 'email' and s.role = 'from' and s.ordinal = 0
    union all
    -- a reply's sender to the sender of the message it answers
    select s.entity_id, a.entity_id, 'in-reply-to', 'REPLIED_TO', s.at, 1
    from named s
    cross join unnest(replied_to) a (entity_id)
    where s.source = 'email' and s.role = 'from' and s.ordinal = 0
    union all
    -- the people of one frontmatter key, pairwise (the lower entity id first)
    select a.entity_id, b.entity_id, a.role, a.predicate, a.at, null
    from named a
    join named b on b.source = 'frontmatter' and b.role = a.role and b.entity_id > a.entity_id
    where a.source = 'frontmatter' and a.type = 'Person' and a.predicate <> 'AUTHORED'
    union all
    -- an author to every other person the note names
    select a.entity_id, b.entity_id, a.role, a.predicate, a.at, null
    from named a
    join named b on b.source = 'frontmatter' and b.type = 'Person' and b.entity_id <> a.entity_id
    where a.source = 'frontmatter' and a.type = 'Person' and a.predicate = 'AUTHORED'
    union all
    -- every person the note names to each of its places
    select a.entity_id, b.entity_id, b.role, b.predicate, a.at, null
    from named a
    join named b on b.source = 'frontmatter' and b.type = 'Place' and b.entity_id <> a.entity_id
    where a.source = 'frontmatter' and a.type = 'Person'
$$;
comment on function exo_private.structural_pairs(
    bigint[], text[], text[], int[], exo_private.entity_type[], text[], timestamptz[], bigint[]
) is
    'The edges of one document''s names (the i-th name: entity_ids[i], sources[i] email|frontmatter, '
    'roles[i], ordinals[i], types[i], predicates[i] and ats[i], as structural_people gives them): its '
    'sender WROTE_TO each To and COPIED each Cc (predicate_raw the header), REPLIED_TO each of '
    'replied_to (the sender of the message it answers), the people of one frontmatter key pairwise '
    '(its predicate, the lower entity id first), an AUTHORED key''s people to every other person, '
    'every person LOCATED_IN (or the key''s predicate) each place; at is the subject''s, message_count '
    '1 for an email''s edge. Self-loops are the caller''s to drop.';

-- exo_private.link_structure: the structural graph of some documents, rebuilt.
create or replace function exo_private.link_structure(doc_ids bigint[])
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    docs bigint[];
    gens jsonb;
    ent_ids bigint[];
    rel_ids bigint[];
    n_mentions bigint;
    named_workspaces text[];
    named_keys text[];
    wiki record;
begin
    if doc_ids is null then
        perform exo_private.invalid_argument('doc_ids must not be null');
    end if;
    docs := exo_private.structure_documents(doc_ids);

    -- What they said before goes first: a changed header replaces its edges. (Their mentions
    -- go below, those not made again only: an entity left without a mention for a moment
    -- would go, and its model relations with it.)
    delete from exo_private.relations r where r.document_id = any(docs) and r.origin = 'structure';
    delete from exo_private.entity_addresses a where a.document_id = any(docs);
    if not coalesce((select (s.value #>> '{}')::boolean from exo_private.settings s where s.key = 'graph.structural'),
                    true)
       or not exists (select 1 from exo_private.documents d
                      where d.id = any(docs) and (d.metadata ? 'from' or d.frontmatter <> '{}'::jsonb))
          and not exists (select 1 from exo_private.document_links l where l.source_document = any(docs)) then
        delete from exo_private.mentions m where m.document_id = any(docs) and m.origin = 'structure';
        return jsonb_build_object('documents', 0, 'entities', 0, 'mentions_new', 0, 'relations_new', 0);
    end if;
    gens := exo_private.structure_generations(array(
        select d.workspace from exo_private.documents d
        where d.id = any(docs) and d.workspace is not null and d.stage <> 'deleted'));

    -- The names become entities (structural_entities), mentioned in their document's first window
    -- and chunk, with their addresses and the edges between them (structural_pairs, per document).
    with people as materialized (
        select * from exo_private.structural_entities(docs, gens)
    ), mine as materialized (
        select * from people p where p.own
    ), mentioned as (
        insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface, origin)
        select distinct on (m.entity_id, m.window_id) m.entity_id, m.window_id, m.document_id, m.chunk_id,
               coalesce(nullif(m.name, ''), m.address), 'structure'
        from mine m
        order by m.entity_id, m.window_id, m.source, m.role, m.ordinal
        on conflict do nothing
        returning 1
    ), unsaid as (
        -- the structural mentions these documents no longer make (a wiki link's are made below)
        delete from exo_private.mentions o
        where o.document_id = any(docs) and o.origin = 'structure'
          and not exists (select 1 from mine m
                          where m.entity_id = o.entity_id and m.window_id = o.window_id
                            and m.chunk_id is not distinct from o.chunk_id)
    ), addressed as (
        insert into exo_private.entity_addresses (document_id, window_id, workspace, canonical_key, address, name)
        select distinct on (m.document_id, m.key, m.address) m.document_id, m.window_id, m.workspace, m.key,
               m.address, m.name
        from mine m
        where m.address is not null
        order by m.document_id, m.key, m.address, m.name
        on conflict do nothing
    ), related as (
        insert into exo_private.relations
            (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id,
             origin, first_at, last_at, message_count)
        select distinct on (e.subject_id, e.predicate, e.object_id, d.window_id)
               d.workspace, d.generation, e.subject_id, e.object_id, e.predicate_raw, e.predicate, d.window_id,
               d.document_id, 'structure', e.at, e.at, e.message_count
        from (select m.workspace, m.generation, m.window_id, m.document_id,
                     array_agg(m.entity_id) as entity_ids, array_agg(m.source) as sources,
                     array_agg(m.role) as roles, array_agg(m.ordinal) as ordinals, array_agg(m.type) as types,
                     array_agg(m.predicate) as predicates, array_agg(m.at) as ats, m.replied_to
              from mine m
              group by m.workspace, m.generation, m.window_id, m.document_id, m.replied_to) d
        cross join lateral exo_private.structural_pairs(d.entity_ids, d.sources, d.roles, d.ordinals, d.types,
                                                        d.predicates, d.ats, d.replied_to) e
        where e.subject_id <> e.object_id
        order by e.subject_id, e.predicate, e.object_id, d.window_id, e.predicate_raw
        on conflict do nothing
        returning exo_private.relations.id
    )
    select (select coalesce(array_agg(distinct p.entity_id), '{}') from people p),
           (select count(*) from mentioned),
           (select coalesce(array_agg(related.id), '{}') from related),
           (select array_agg(m.workspace order by m.workspace, m.key) from mine m where m.type in ('Person', 'Place')),
           (select array_agg(m.key order by m.workspace, m.key) from mine m where m.type in ('Person', 'Place'))
      into ent_ids, n_mentions, rel_ids, named_workspaces, named_keys;

    -- Wiki links, once the names above exist.
    wiki := exo_private.link_wiki_targets(docs, gens);
    n_mentions := n_mentions + wiki.mentions_new;
    rel_ids := rel_ids || wiki.relations_new;

    -- A name these documents give as a Place and another source as a Person is two things
    -- (which links the notes naming it again, with the new sense). Before the projection:
    -- entity rows are locked before graph labels, as everywhere.
    perform exo_private.find_type_senses(named_workspaces, named_keys);
    perform exo_private.project_entities(ent_ids);
    perform exo_private.project_relations(rel_ids);
    return jsonb_build_object('documents', cardinality(docs), 'entities', cardinality(ent_ids),
                              'mentions_new', n_mentions, 'relations_new', cardinality(rel_ids));
end
$$;
comment on function exo_private.link_structure(bigint[]) is
    'Rebuild the structural graph of the given documents (and of replies to them ingested '
    'earlier) in their workspaces'' current generation: their rows of origin ''structure'' and '
    'their entity_addresses go, then, unless graph.structural is false, each name of '
    'structural_people becomes an entity (upsert_entity) mentioned in the document''s first '
    'window and chunk, with WROTE_TO, COPIED, REPLIED_TO (email) and frontmatter-key relations, '
    'then wiki links to people and places known from structure become mentions and LINKS_TO '
    '(see sql/310_structural_graph.sql); projected into the AGE graph. Conversation documents '
    'are left to link_participants. Returns {documents, entities, mentions_new, relations_new}.';

-- exo_private.structural_edges: structural relations summed over their evidence.
create or replace view exo_private.structural_edges as
    select r.workspace, r.generation, r.subject_id, r.predicate, r.object_id,
           min(r.first_at) as first_at, max(r.last_at) as last_at,
           sum(r.message_count)::bigint as message_count,
           count(distinct r.window_id) as windows, count(distinct r.document_id) as documents
    from exo_private.relations r
    where r.origin = 'structure'
    group by r.workspace, r.generation, r.subject_id, r.predicate, r.object_id;
comment on view exo_private.structural_edges is
    'One row per structural edge (workspace, generation, subject, predicate, object) across its '
    'evidence: when the first and the last message were sent, how many messages (a chat pair''s '
    'in every window they shared, one per email), in how many windows and documents; each '
    'window''s own relation row stays in exo_private.relations.';
