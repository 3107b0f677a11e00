--
-- PostgreSQL database dump
--

--
-- Name: ag_catalog; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA ag_catalog;

ALTER SCHEMA ag_catalog OWNER TO postgres;

--
-- Name: exo; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA exo;

ALTER SCHEMA exo OWNER TO exo_owner;

--
-- Name: SCHEMA exo; Type: COMMENT; Schema: -; Owner: exo_owner
--

COMMENT ON SCHEMA exo IS 'The exocortex API: the only schema agents (exo_reader) may use. \df+ exo.* is the manual.';

--
-- Name: exo_private; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA exo_private;

ALTER SCHEMA exo_private OWNER TO exo_owner;

--
-- Name: SCHEMA exo_private; Type: COMMENT; Schema: -; Owner: exo_owner
--

COMMENT ON SCHEMA exo_private IS 'exocortex internals: tables and helper functions behind the exo API.';

--
-- Name: graph_administrative; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA graph_administrative;

ALTER SCHEMA graph_administrative OWNER TO exo_owner;

--
-- Name: graph_creative; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA graph_creative;

ALTER SCHEMA graph_creative OWNER TO exo_owner;

--
-- Name: graph_personal; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA graph_personal;

ALTER SCHEMA graph_personal OWNER TO exo_owner;

--
-- Name: graph_technical; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA graph_technical;

ALTER SCHEMA graph_technical OWNER TO exo_owner;

--
-- Name: pgmq; Type: SCHEMA; Schema: -; Owner: exo_owner
--

CREATE SCHEMA pgmq;

ALTER SCHEMA pgmq OWNER TO exo_owner;

--
-- Name: plpython3u; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS plpython3u WITH SCHEMA pg_catalog;

--
-- Name: EXTENSION plpython3u; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION plpython3u IS 'PL/Python3U untrusted procedural language';

--
-- Name: age; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS age WITH SCHEMA ag_catalog;

--
-- Name: EXTENSION age; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION age IS 'AGE database extension';

--
-- Name: pg_textsearch; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_textsearch WITH SCHEMA public;

--
-- Name: EXTENSION pg_textsearch; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION pg_textsearch IS 'Full-text search with BM25 ranking';

--
-- Name: vector; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;

--
-- Name: EXTENSION vector; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';

--
-- Name: band; Type: TYPE; Schema: exo_private; Owner: exo_owner
--

CREATE TYPE exo_private.band AS ENUM (
    'current',
    'recent',
    'archival'
);

ALTER TYPE exo_private.band OWNER TO exo_owner;

--
-- Name: TYPE band; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TYPE exo_private.band IS 'Temporal band: search prefers the present bands; a temporal signal opens archival.';

--
-- Name: document_stage; Type: TYPE; Schema: exo_private; Owner: exo_owner
--

CREATE TYPE exo_private.document_stage AS ENUM (
    'new',
    'extracted',
    'routed',
    'quarantined',
    'chunked',
    'embedded',
    'graphed',
    'failed',
    'skipped',
    'ocr_pending',
    'deleted'
);

ALTER TYPE exo_private.document_stage OWNER TO exo_owner;

--
-- Name: TYPE document_stage; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TYPE exo_private.document_stage IS 'Where a document stands; every stage is written to the ledger, so any run resumes.';

--
-- Name: entity_type; Type: TYPE; Schema: exo_private; Owner: exo_owner
--

CREATE TYPE exo_private.entity_type AS ENUM (
    'Person',
    'Org',
    'Place',
    'Topic',
    'Date'
);

ALTER TYPE exo_private.entity_type OWNER TO exo_owner;

--
-- Name: message_record; Type: TYPE; Schema: pgmq; Owner: exo_owner
--

CREATE TYPE pgmq.message_record AS (
	msg_id bigint,
	read_ct integer,
	enqueued_at timestamp with time zone,
	last_read_at timestamp with time zone,
	vt timestamp with time zone,
	message jsonb,
	headers jsonb
);

ALTER TYPE pgmq.message_record OWNER TO exo_owner;

--
-- Name: metrics_result; Type: TYPE; Schema: pgmq; Owner: exo_owner
--

CREATE TYPE pgmq.metrics_result AS (
	queue_name text,
	queue_length bigint,
	newest_msg_age_sec integer,
	oldest_msg_age_sec integer,
	total_messages bigint,
	scrape_time timestamp with time zone,
	queue_visible_length bigint,
	default_partition_length bigint
);

ALTER TYPE pgmq.metrics_result OWNER TO exo_owner;

--
-- Name: queue_record; Type: TYPE; Schema: pgmq; Owner: exo_owner
--

CREATE TYPE pgmq.queue_record AS (
	queue_name character varying,
	is_partitioned boolean,
	is_unlogged boolean,
	created_at timestamp with time zone
);

ALTER TYPE pgmq.queue_record OWNER TO exo_owner;

--
-- Name: context_packet(text, integer, text[], boolean, text[], timestamp with time zone, double precision[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.context_packet(query text, token_budget integer DEFAULT 4000, workspaces text[] DEFAULT NULL::text[], open_archive boolean DEFAULT NULL::boolean, bridge text[] DEFAULT '{}'::text[], as_of timestamp with time zone DEFAULT now(), query_embedding double precision[] DEFAULT NULL::double precision[]) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo.context_packet_json(query, token_budget, workspaces, open_archive, bridge, as_of, query_embedding)
           ->> 'text'
$$;

ALTER FUNCTION exo.context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) OWNER TO exo_api;

--
-- Name: FUNCTION context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) IS 'A small cited answer packet for a question, within token_budget tokens: current facts first, then numbered evidence excerpts (path, workspace, date, band; for a chat, whole messages with their times and senders around the ones richest in the question''s words), then hints about withheld subjects, then provenance. exo.context_packet_json gives it with its token count and report.';

--
-- Name: context_packet_json(text, integer, text[], boolean, text[], timestamp with time zone, double precision[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.context_packet_json(query text, token_budget integer DEFAULT 4000, workspaces text[] DEFAULT NULL::text[], open_archive boolean DEFAULT NULL::boolean, bridge text[] DEFAULT '{}'::text[], as_of timestamp with time zone DEFAULT now(), query_embedding double precision[] DEFAULT NULL::double precision[]) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo_private.check_search_arguments(query, workspaces, 25, 30, query_embedding, token_budget, bridge);
    select exo_private.build_packet(
        exo_private.retrieve(query, workspaces, 25, 30, open_archive, bridge, as_of, query_embedding),
        query, token_budget)
$$;

ALTER FUNCTION exo.context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) OWNER TO exo_api;

--
-- Name: FUNCTION context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) IS 'The context packet for a question as jsonb: text (current facts, then cited evidence excerpts, then deference hints, then provenance), tokens used (never over token_budget; about four characters a token), the citations used, the hints and the search report.';

--
-- Name: conversation(text, integer, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.conversation(conversation text, max_messages integer DEFAULT 200, bridge text[] DEFAULT '{}'::text[]) RETURNS TABLE(conversation_id bigint, title text, source text, sent_at timestamp with time zone, sender text, is_owner boolean, body text, withheld jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
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
$_$;

ALTER FUNCTION exo.conversation(conversation text, max_messages integer, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION conversation(conversation text, max_messages integer, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.conversation(conversation text, max_messages integer, bridge text[]) IS 'The messages of one chat conversation, oldest first: conversation_id, title, source, sent_at, sender, is_owner (sent by the corpus''s owner), body, withheld (null). conversation: an id (digits) or words of its title (case-insensitive substring; a title equal to them wins). Raises invalid_parameter_value when nothing matches, or when several conversations do (listing up to 5 as id, title, source). At most max_messages rows (clamped to 1..2000), the first ones. Care: a message charged for a deferred subject (its name or an alias near a cue, in the message or the one before or after it, the title near them all) is left out unless bridge names the subject (by name or alias); then one last row per subject has only withheld: {subject, conversation, messages, how}. A conversation whose every message is withheld shows no title, in the listing of an ambiguous one too.';

--
-- Name: cross_document_entities(integer, text[], integer, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.cross_document_entities(min_documents integer DEFAULT 2, workspaces text[] DEFAULT NULL::text[], max_results integer DEFAULT 100, bridge text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    n int := least(greatest(coalesce(max_results, 100), 1), 1000);
    result jsonb;
begin
    if min_documents is null or min_documents < 1 then
        perform exo_private.invalid_argument(
            'min_documents must be at least 1, got ' || coalesce(min_documents::text, 'null'));
    end if;
    perform exo_private.check_workspaces(workspaces);
    with candidates as materialized (
        select e.id, e.workspace, e.type, e.name
        from exo_private.entities e
        where (workspaces is null or e.workspace = any (workspaces))
    ), evidence as materialized (
        select v.* from exo_private.entity_evidence(array(select c.id from candidates c), bridge) v
    ), counted as materialized (
        -- the entities mentioned where the caller may see them
        select c.id, c.workspace, c.type, c.name, v.documents
        from candidates c
        join evidence v on v.entity_id = c.id
        where v.withheld = '{}' and v.documents > 0
    ), rates as (
        select k.workspace, count(*) as entities, count(*) filter (where k.documents >= 2) as bridging
        from counted k group by k.workspace
    ), held as (
        select s.subject, c.workspace, count(*) as entities
        from candidates c
        join evidence v on v.entity_id = c.id
        cross join lateral unnest(v.withheld) s (subject)
        group by s.subject, c.workspace
    )
    select jsonb_build_object(
        'min_documents', min_documents,
        'entities', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'entity_id', x.id, 'workspace', x.workspace, 'type', x.type::text,
                       'name', x.name, 'documents', x.documents)
                       order by x.documents desc, x.name, x.id)
            from (select k.* from counted k where k.documents >= min_documents
                  order by k.documents desc, k.name, k.id limit n) x), '[]'),
        'bridging_rate', jsonb_build_object(
            'overall', (select round(sum(r.bridging)::numeric / nullif(sum(r.entities), 0), 4) from rates r),
            'by_workspace', coalesce((
                select jsonb_object_agg(r.workspace, round(r.bridging::numeric / r.entities, 4) order by r.workspace)
                from rates r), '{}')),
        'counts', coalesce((
            select jsonb_object_agg(r.workspace, jsonb_build_object('entities', r.entities, 'bridging', r.bridging)
                                    order by r.workspace)
            from rates r), '{}'),
        'hints', coalesce((
            select jsonb_agg(jsonb_build_object('subject', h.subject, 'workspace', h.workspace,
                                                'entities', h.entities, 'how', exo_private.hint_how(h.subject))
                             order by h.subject, h.workspace)
            from held h), '[]'))
    into result;
    return result;
end
$$;

ALTER FUNCTION exo.cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]) IS 'Entities that connect documents, as jsonb: entities (at most max_results, clamped to 1..1000, most documents first: entity_id, workspace, type, name, documents) mentioned in at least min_documents (>= 1) distinct documents; bridging_rate {overall, by_workspace}: the share of mentioned entities that appear in 2 or more documents (how well the graph links the corpus), with the counts behind it; hints. workspaces null: all. Care: entities that are deferred subjects, or seen only in chunks charged for one, and mentions in charged chunks are not counted unless bridge names the subject (by name or alias); a hint per subject and workspace says how many entities were left out: {subject, workspace, entities, how}.';

--
-- Name: cypher(text, text, integer, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.cypher(workspace text, query text, max_rows integer DEFAULT 100, bridge text[] DEFAULT '{}'::text[]) RETURNS SETOF jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    graph name;
    refusal text;
    n int := least(greatest(coalesce(max_rows, 100), 1), 1000);
    row_value text;
    hidden record;
    state text;
    message text;
begin
    if cypher.workspace is null then
        perform exo_private.invalid_argument('workspace must name a workspace, got null');
    end if;
    perform exo_private.check_workspaces(array[cypher.workspace]);
    graph := exo_private.graph_name(cypher.workspace);
    if not exists (select 1 from ag_catalog.ag_graph g where g.name = graph) then
        perform exo_private.invalid_argument(
            format('workspace %s has no graph yet', exo_private.quoted(cypher.workspace)));
    end if;
    refusal := exo_private.cypher_refusal(query);
    if refusal is not null then
        perform exo_private.invalid_argument(refusal,
            'exo.cypher runs one read-only query: MATCH ... [WHERE ...] RETURN one value '
            '(a map such as {name: n.name} for several), calling only AGE''s read functions');
    end if;
    select * into hidden from exo_private.graph_withheld(cypher.workspace, bridge);
    -- Read by the row security policies of the graph's tables (for exo_graph only); unset,
    -- they hide everything.
    perform pg_catalog.set_config('exo.cypher_hidden_vertices', hidden.vertices::text, true);
    perform pg_catalog.set_config('exo.cypher_hidden_edges', hidden.edges::text, true);
    begin
        for row_value in select r from exo_private.run_cypher(graph, query, n) r loop
            return next exo_private.agtype_jsonb(row_value);
        end loop;
    exception
        when datatype_mismatch then
            raise exception 'query must RETURN exactly one value: %', pg_catalog.left(sqlerrm, 200)
                using errcode = 'invalid_parameter_value',
                      hint = 'return a map for several values: RETURN {name: n.name, type: label(n)}';
        when others then
            -- AGE's errors quote the rest of the query: keep the class, clip the text.
            get stacked diagnostics state = returned_sqlstate, message = message_text;
            raise exception '%', pg_catalog.left(message, 200) || case when pg_catalog.length(message) > 200
                                                                       then '…' else '' end
                using errcode = state;
    end;
    -- The hint does not depend on the query: any answer over this graph was computed
    -- without what these subjects withhold. Comparing with an unrestricted run would
    -- answer, one bit per query, whether hidden material matches a pattern.
    if hidden.subjects <> '{}' then
        return next jsonb_build_object('exo_withheld', jsonb_build_object(
            'subjects', pg_catalog.to_jsonb(hidden.subjects),
            'how', (select string_agg(exo_private.hint_how(s), '; ' order by s)
                    from unnest(hidden.subjects) s)));
    end if;
end
$$;

ALTER FUNCTION exo.cypher(workspace text, query text, max_rows integer, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION cypher(workspace text, query text, max_rows integer, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.cypher(workspace text, query text, max_rows integer, bridge text[]) IS 'A read-only openCypher query on one workspace''s Apache AGE graph, one jsonb per row: e.g. exo.cypher(''technical'', ''MATCH (p:Person)-[r]->(o:Org) RETURN {person: p.name, rel: type(r), org: o.name}''). Vertices are labelled by entity type (Person, Org, Place, Topic, Date) with properties id (the entity id), name, key, type, is_owner; edges by predicate (WORKS_AT, ...) with properties predicate_raw, document_id. RETURN exactly one value (a map for several); a vertex or edge comes back as {id, label, properties, ...}. At most max_rows rows are read (clamped to 1..1000). Only MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER BY, SKIP, LIMIT, UNWIND, UNION and AGE''s read functions (id, type, labels, properties, size, toUpper, count, collect, ...); refused (invalid_parameter_value naming the rule, the token and its position): any write or procedure word (CREATE, MERGE, SET, DELETE, REMOVE, CALL, ...), other or dotted function calls, variable-length relationships (-[*]-), comments, $, ; and :: casts. Care: the query runs over what the caller may see: a deferred subject''s vertex, an entity seen only in withheld chunks, and a relation with such an end or whose only evidence is withheld are left out of the graph it reads unless bridge names the subject; while anything of the graph is left out, a last row {"exo_withheld": {subjects, how}} names the subjects and how to ask.';

--
-- Name: document(text, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.document(document text, bridge text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
declare
    wanted text := pg_catalog.btrim(document);
    suffix text;
    doc_ids bigint[];
    doc exo_private.documents;
    held_back text[];
    result jsonb;
begin
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'document must be a document id or a path, got ' || exo_private.quoted(document));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(d.id) into doc_ids from exo_private.documents d where d.id = wanted::bigint;
    end if;
    if doc_ids is null then
        select array_agg(d.id order by d.id) into doc_ids from exo_private.documents d where d.path = wanted;
    end if;
    if doc_ids is null then
        -- a unique suffix at a folder boundary, case-insensitive ("rent.md", "admin/rent.md")
        suffix := pg_catalog.ltrim(wanted, '/');
        select array_agg(d.id order by d.path, d.id) into doc_ids
        from exo_private.documents d
        where d.file_name = pg_catalog.lower(pg_catalog.regexp_replace(suffix, '^.*/', ''))
          and (pg_catalog.lower(d.path) = pg_catalog.lower(suffix)
               or pg_catalog.lower(pg_catalog.right(d.path, pg_catalog.length(suffix) + 1))
                  = pg_catalog.lower('/' || suffix));
    end if;
    if doc_ids is null then
        perform exo_private.invalid_argument(
            format('document %s names no document (by id, path or path suffix)', exo_private.quoted(document)),
            'exo.search(query) finds documents by their content, title or file name');
    end if;
    if cardinality(doc_ids) > 1 then
        perform exo_private.invalid_argument(
            format('document %s matches %s documents: %s', exo_private.quoted(document), cardinality(doc_ids),
                   (select string_agg(d.id || ' ' || coalesce(d.path, '(withheld)'), ', ' order by d.path, d.id)
                    from (select x.id,
                                 -- a charged document's path is withheld here too
                                 case when x.id in (select k.document_id
                                                    from exo_private.closed_documents(doc_ids, bridge) k)
                                      then null else x.path end as path
                          from exo_private.documents x where x.id = any (doc_ids)
                          order by x.path, x.id limit 5) d)
                   || case when cardinality(doc_ids) > 5 then ', ...' else '' end),
            'name one by its id or by a longer path');
    end if;
    select * into doc from exo_private.documents d where d.id = doc_ids[1];
    select k.withheld into held_back from exo_private.closed_documents(array[doc.id], bridge) k;
    if held_back is not null then
        -- A charged document: that it exists, never its title, path or what it says.
        return jsonb_build_object(
            'document_id', doc.id, 'workspace', doc.workspace, 'stage', doc.stage::text,
            'withheld', true,
            'hints', (
                select jsonb_agg(jsonb_build_object(
                           'subject', s.subject, 'workspace', doc.workspace,
                           'chunks', (select count(*) from exo_private.chunks c
                                      where c.workspace = doc.workspace and c.document_id = doc.id
                                        and c.charged_subjects @> array[s.subject]),
                           'how', exo_private.hint_how(s.subject))
                           order by s.subject)
                from unnest(held_back) s (subject)));
    end if;
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), ms as materialized (
        -- the document's mentions, judged as everywhere (exo_private.entity_mentions)
        select m.entity_id, m.chunk_id, e.name, e.type,
               (select c.subject from closed c where c.key = e.canonical_key order by c.subject limit 1)
                   as itself,
               m.withheld
        from exo_private.entity_mentions(
                 array(select distinct x.entity_id from exo_private.mentions x where x.document_id = doc.id),
                 bridge, doc.id) m
        join exo_private.entities e on e.id = m.entity_id
    ), shown as (
        select m.entity_id, m.name, m.type, count(*) as mentions
        from ms m where m.itself is null and m.withheld = '{}'
        group by m.entity_id, m.name, m.type
    ), held as (
        select coalesce(m.itself, s) as subject, count(*) as mentions, count(distinct m.chunk_id) as chunks
        from ms m
        left join lateral unnest(m.withheld) s on m.itself is null
        where m.itself is not null or m.withheld <> '{}'
        group by 1
    )
    select jsonb_build_object(
        'document_id', doc.id,
        'path', doc.path,
        'source', (select s.root from exo_private.sources s where s.id = doc.source_id),
        'title', doc.title,
        'extension', doc.extension,
        'stage', doc.stage::text,
        'size_bytes', doc.size_bytes,
        'sha256', doc.sha256,
        'written_at', doc.written_at,
        'first_seen_at', doc.first_seen_at,
        'stage_changed_at', doc.stage_changed_at,
        'band', doc.band::text,
        'band_source', doc.band_source,
        'band_reason', doc.band_reason,
        'workspace', doc.workspace,
        'route', doc.route,
        'canonical', doc.canonical,
        'error_class', doc.error_class,
        'error_message', doc.error_message,
        'chunks', (select count(*) from exo_private.chunks c
                   where c.workspace = doc.workspace and c.document_id = doc.id),
        'charged_chunks', (select count(*) from exo_private.chunks c
                           where c.workspace = doc.workspace and c.document_id = doc.id
                             and c.charged_subjects <> '{}'),
        'entities', coalesce((
            select jsonb_agg(jsonb_build_object('entity_id', x.entity_id, 'name', x.name,
                                                'type', x.type::text, 'mentions', x.mentions)
                             order by x.mentions desc, x.name, x.entity_id)
            from (select * from shown s order by s.mentions desc, s.name, s.entity_id limit 200) x), '[]'),
        'hints', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'subject', h.subject, 'workspace', doc.workspace, 'mentions', h.mentions,
                       'chunks', h.chunks, 'how', exo_private.hint_how(h.subject))
                       order by h.subject)
            from held h), '[]'))
    into result;
    return result;
end
$_$;

ALTER FUNCTION exo.document(document text, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION document(document text, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.document(document text, bridge text[]) IS 'One document of the ledger as jsonb. document: an id (digits), an exact path, or a unique path suffix at a folder boundary (case-insensitive: "rent.md", "admin/rent.md"). Gives document_id, path, source, title, extension, stage, size_bytes, sha256, written_at, first_seen_at, stage_changed_at, band, band_source, band_reason, workspace, route (the router''s decision), canonical, error_class, error_message, chunks, charged_chunks, entities extracted from it (at most 200, most mentioned first: entity_id, name, type, mentions) and hints. Care: entities that are deferred subjects and mentions in charged chunks are left out unless bridge names the subject; a hint says so {subject, workspace, mentions, chunks, how}. A charged document (its frontmatter charges a deferred subject, or every chunk is withheld, as when its title or path names the subject near a cue) gives only {document_id, workspace, stage, withheld: true, hints {subject, workspace, chunks, how}} unless bridge names the subject: no title, no path. Raises invalid_parameter_value when nothing matches, or when several do (listing up to 5, a charged document''s path withheld).';

--
-- Name: dossier(text, text, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.dossier(entity text, workspace text DEFAULT NULL::text, bridge text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    ids bigint[] := exo_private.resolve_entity(entity, workspace);
    dossiers jsonb;
begin
    select jsonb_agg(exo_private.entity_dossier(i.id, bridge) order by i.ord) into dossiers
    from unnest(ids) with ordinality i(id, ord);
    if jsonb_array_length(dossiers) = 1 then
        return dossiers -> 0;
    end if;
    return dossiers;
end
$$;

ALTER FUNCTION exo.dossier(entity text, workspace text, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION dossier(entity text, workspace text, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.dossier(entity text, workspace text, bridge text[]) IS 'What the graph knows about one entity, as jsonb. entity is an entity id (digits) or a name (matched by canonical key: case, spacing and edge punctuation ignored); workspace (null: all) narrows a name. One match gives one object; a name found in several workspaces (or as several types) gives an array of objects, one per entity, never merged. An object: entity_id, workspace, type, name, is_owner, mention_count, document_count, mentions (one per document, newest first, at most 100: document_id, path, title, written_at, band, surface, mentions), relations {out, in} (at most 100 each: predicate, predicate_raw, entity_id, name, type, documents, document_ids), hints. Care: mentions in chunks charged for a deferred subject, and relations to an entity that is one (or whose evidence lies only in withheld chunks), are left out unless bridge names the subject (by name or alias); each hint says what was left out: {subject, workspace, mentions, chunks, relations, how}. An entity that is itself a deferred subject, or one seen only in withheld chunks (by id as by name), gives only {entity_id, workspace, type, withheld: true, hints}. Raises invalid_parameter_value for a blank entity, an unknown workspace or a name that matches nothing.';

--
-- Name: embed_query(text); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.embed_query(query text) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo_private.embed_text(
        pg_catalog.left(coalesce(query, ''), 2000),
        e.value || jsonb_build_object('timeout_s', t.value),
        (select case when pg_catalog.jsonb_typeof(b.value) = 'number'
                     then greatest(least(b.value::numeric, 1000000), 0)::int end
         from exo_private.settings b where b.key = 'reader.embed_calls_per_minute'))
    from exo_private.settings e, exo_private.settings t
    where e.key = 'models.embeddings' and t.key = 'retrieval.embed_timeout_s'
$$;

ALTER FUNCTION exo.embed_query(query text) OWNER TO exo_api;

--
-- Name: FUNCTION embed_query(query text); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.embed_query(query text) IS 'Embed a query (its first 2,000 characters) with the models.embeddings endpoint within retrieval.embed_timeout_s, at most reader.embed_calls_per_minute times per session in any minute: {vector, model, dimensions, ms}, or {error_class, error, ms} when the endpoint is down, slow or wrong or the budget is spent (rate_limited); never an error, so search can degrade and say so.';

--
-- Name: person_history(text, integer, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.person_history(name text, max_results integer DEFAULT 200, bridge text[] DEFAULT '{}'::text[]) RETURNS TABLE(person text, source text, handle text, display_name text, is_owner boolean, entity_ids bigint[], messages bigint, conversations bigint, first_seen timestamp with time zone, last_seen timestamp with time zone, withheld jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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

ALTER FUNCTION exo.person_history(name text, max_results integer, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION person_history(name text, max_results integer, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.person_history(name text, max_results integer, bridge text[]) IS 'Chat identities whose display name or handle, or whose linked person''s name, contains name (case-insensitive substring), across every source: person (the linked person, the owner''s identities all link to the owner), source, handle, display_name, is_owner, entity_ids (the Person entities this identity is, one per workspace it talked in: exo.dossier, exo.related and exo.timeline join its chats and documents), messages, conversations, first_seen and last_seen (first and last message), withheld (null). At most max_results rows (clamped to 1..1000). Raises invalid_parameter_value for a blank name. Care: messages charged for a deferred subject are neither counted nor dated, and an identity named like a deferred subject (its name or an alias) is left out, as is one whose every message is withheld, unless bridge names the subject; then one last row per subject has only withheld: {subject, messages, how}.';

--
-- Name: related(text, text, integer, integer, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.related(entity text, workspace text DEFAULT NULL::text, depth integer DEFAULT 1, per_node integer DEFAULT 50, bridge text[] DEFAULT '{}'::text[]) RETURNS TABLE(entity_id bigint, workspace text, type text, name text, depth integer, withheld jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
    select * from exo_private.related_to($1, $2, $3, $4, $5)
$_$;

ALTER FUNCTION exo.related(entity text, workspace text, depth integer, per_node integer, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION related(entity text, workspace text, depth integer, per_node integer, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.related(entity text, workspace text, depth integer, per_node integer, bridge text[]) IS 'Entities related to one entity (either direction) in its workspace''s graph: entity_id, workspace, type, name, depth (hops, each entity once at its smallest depth), withheld (null), nearest first. entity: an id or a name (as in exo.dossier; a name in several workspaces walks each). depth: 1..3 (1: direct neighbours). per_node (1..1000): each node expands at most that many neighbours, lowest ids first, so a hub (the owner, say) costs per_node rows per level. Care: the walk goes only through what the caller may see: never to or through an entity that is a deferred subject or is seen only in chunks charged for one, nor along a relation whose evidence is withheld, unless bridge names the subject; from such an entity itself nothing is listed. Then one last row per subject and workspace has only withheld: {subject, workspace, relations (left untaken), how}. Raises invalid_parameter_value for bad arguments.';

--
-- Name: search(text, text[], integer, integer, boolean, text[], timestamp with time zone, double precision[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.search(query text, workspaces text[] DEFAULT NULL::text[], k integer DEFAULT 25, per_workspace integer DEFAULT 30, open_archive boolean DEFAULT NULL::boolean, bridge text[] DEFAULT '{}'::text[], as_of timestamp with time zone DEFAULT now(), query_embedding double precision[] DEFAULT NULL::double precision[]) RETURNS TABLE(rank integer, chunk_id bigint, body text, path text, title text, workspace text, band text, written_at date, stage text, citation text, score double precision, document_id bigint, canonical boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo_private.check_search_arguments(query, workspaces, k, per_workspace, query_embedding, null, bridge);
    select r.rank, r.chunk_id, r.body, r.path, r.title, r.workspace, r.band, r.written_at, r.stage,
           r.citation, r.score, r.document_id, r.canonical
    from jsonb_to_recordset(
        exo_private.retrieve(query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding)
        -> 'results') as r (
        rank int, chunk_id bigint, body text, path text, title text, workspace text, band text,
        written_at date, stage text, citation text, score float8, document_id bigint, canonical boolean)
    order by r.rank
$$;

ALTER FUNCTION exo.search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) OWNER TO exo_api;

--
-- Name: FUNCTION search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) IS 'Ranked chunks answering a question: staged retrieval (exact, lexical, capsules, graph, semantic) in each workspace (null: all) with at most per_workspace candidates each, temporal banding (the archive opens on a temporal signal or open_archive), deferred subjects withheld unless bridged or named by the question while the archive is open (deference.time_releases: an open archive alone), then one rerank of the merged pool; k rows with citation, band and the stage that found each. Chat windows (chunks of imported conversations, path chat/<source>/<id>) are found, ranked and cited with documents; their citation is workspace:chat "conversation title" and the time of the window''s first message (personal:chat "Iris Calder" 2024-03-04 09:12). query_embedding (float8[], the question embedded by the caller with the model in use) replaces the embeddings endpoint. exo.search_report says what happened.';

--
-- Name: search_entities(text, text, text[], integer, text[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.search_entities(name text DEFAULT NULL::text, entity_type text DEFAULT NULL::text, workspaces text[] DEFAULT NULL::text[], max_results integer DEFAULT 50, bridge text[] DEFAULT '{}'::text[]) RETURNS TABLE(entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint, withheld jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
    select * from exo_private.find_entities($1, $2, $3, $4, $5)
$_$;

ALTER FUNCTION exo.search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]) OWNER TO exo_api;

--
-- Name: FUNCTION search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]) IS 'Graph entities (people, orgs, places, topics, dates) whose name contains name (case-insensitive substring; % and _ are plain characters; null or blank: every entity), of entity_type (Person, Org, Place, Topic or Date; null: any), in workspaces (null: all), most mentioned first: entity_id, workspace, type, name, mentions, documents (mentions and distinct documents that may be shown), withheld (null). The same name in two workspaces is two entities. max_results is clamped to 1..500. Care: an entity that is a deferred subject (exo.deferred_subjects, by name or alias), and one seen only in chunks charged for a deferred subject, is left out unless bridge names that subject, and mentions in charged chunks are not counted; then one last row per subject and workspace has only withheld: {subject, workspace, entities, how}. Next: exo.dossier(entity_id::text).';

--
-- Name: search_json(text, text[], integer, integer, boolean, text[], timestamp with time zone, double precision[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.search_json(query text, workspaces text[] DEFAULT NULL::text[], k integer DEFAULT 25, per_workspace integer DEFAULT 30, open_archive boolean DEFAULT NULL::boolean, bridge text[] DEFAULT '{}'::text[], as_of timestamp with time zone DEFAULT now(), query_embedding double precision[] DEFAULT NULL::double precision[]) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo_private.check_search_arguments(query, workspaces, k, per_workspace, query_embedding, null, bridge);
    select jsonb_build_object(
        'results', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'rank', r -> 'rank', 'chunk_id', r -> 'chunk_id', 'body', r -> 'body',
                       'path', r -> 'path', 'title', r -> 'title', 'workspace', r -> 'workspace',
                       'band', r -> 'band', 'written_at', r -> 'written_at', 'stage', r -> 'stage',
                       'citation', r -> 'citation', 'score', r -> 'score',
                       'document_id', r -> 'document_id', 'canonical', r -> 'canonical')
                   order by (r ->> 'rank')::int)
            from jsonb_array_elements(found -> 'results') r), '[]'::jsonb),
        'report', found -> 'report')
    from exo_private.retrieve(query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding) found
$$;

ALTER FUNCTION exo.search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) OWNER TO exo_api;

--
-- Name: FUNCTION search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) IS 'One search, rows and report together (jsonb): {results: the rows exo.search gives (rank, chunk_id, body, path, title, workspace, band, written_at, stage, citation, score, document_id, canonical), report: what exo.search_report says of the same run (signal, bands, stages, hints, released, degradations, rerank, timings)}. Same arguments and defaults as exo.search; one retrieval, one now().';

--
-- Name: search_messages(text, integer, text[], boolean, timestamp with time zone); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.search_messages(query text, max_results integer DEFAULT 20, bridge text[] DEFAULT '{}'::text[], open_archive boolean DEFAULT NULL::boolean, as_of timestamp with time zone DEFAULT now()) RETURNS TABLE(message_id bigint, conversation_id bigint, conversation_title text, source text, sender text, is_owner boolean, sent_at timestamp with time zone, body text, rank real, band text, withheld jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    AS $$
declare
    pool int;  -- how many of the best matches are looked at: the results are the first of them
               -- that may be shown; what is withheld or left in the archive is counted among them
    question text := pg_catalog.left(search_messages.query, 1000);
    moment timestamptz := coalesce(search_messages.as_of, pg_catalog.now());
    zone text;
    day date;
    archive_open boolean;
    keys text[];
begin
    if question is null then
        perform exo_private.invalid_argument('query must not be null');
    end if;
    if max_results is null or max_results not between 1 and 200 then
        perform exo_private.invalid_argument(
            format('max_results must be between 1 and 200, got %s', coalesce(max_results::text, 'null')));
    end if;
    if cardinality(bridge) > 50 then
        perform exo_private.invalid_argument(format('bridge must name at most 50 subjects, got %s', cardinality(bridge)));
    end if;
    if exists (select 1 from unnest(bridge) b where pg_catalog.length(b) > 200) then
        perform exo_private.invalid_argument('bridge names must be at most 200 characters each');
    end if;
    pool := least(greatest(5 * max_results, 200), 1000);
    -- A message's day, and as_of's, in the time zone of the chat windows.
    select coalesce((select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.time_zone'), 'UTC')
      into zone;
    day := (moment at time zone zone)::date;
    -- The archive opens as in exo.search: open_archive, else a temporal signal in the question.
    archive_open := coalesce(search_messages.open_archive,
                             (exo.temporal_signal(question, day) ->> 'opens_archive')::boolean, false);
    keys := exo_private.released_keys(coalesce(bridge, '{}'));
    return query
    with hits as materialized (
        select m.id, m.conversation_id, m.identity_id, m.sent_at, m.charged_subjects,
               (m.sent_at at time zone zone)::date as sent_on,
               -(m.body operator(public.<@>) public.to_bm25query(question, 'exo_private.chat_messages_bm25')) as score
        from exo_private.chat_messages m
        where (m.sent_at is null or m.sent_at <= moment)
          and m.body operator(public.<@>) public.to_bm25query(question, 'exo_private.chat_messages_bm25') < 0
        order by m.body operator(public.<@>) public.to_bm25query(question, 'exo_private.chat_messages_bm25'),
                 m.sent_at desc nulls last, m.id desc
        limit pool
    ), banded as materialized (
        select h.*, b.band,
               -- most messages are charged for nothing: no call (with its settings) for them
               case when h.charged_subjects = '{}' then '{}'::text[]
                    else exo_private.unreleased(h.charged_subjects, keys) end as held
        from hits h
        join unnest((select array_agg(x.id order by x.id) from hits x),
                    exo_private.message_bands((select array_agg(x.sent_on order by x.id) from hits x), day))
             b (id, band) on b.id = h.id
    ), opened as (
        -- Like exo.search, a closed archive is a preference: when open_archive is null and no
        -- message of the present bands can be shown, the archive answers.
        select archive_open
               or (search_messages.open_archive is null
                   and not exists (select 1 from banded b
                                   where b.band is distinct from 'archival' and b.held = '{}')) as every_band
    ), visible as materialized (
        select b.* from banded b cross join opened o
        where o.every_band or b.band is distinct from 'archival'
    ), shown as (
        select v.*, row_number() over (order by v.score desc, v.sent_at desc nulls last, v.id desc) as ord
        from visible v
        where v.held = '{}'
        order by ord
        limit max_results
    ), held as (
        select s.subject, v.conversation_id, count(*) as messages
        from visible v
        cross join lateral unnest(v.held) s (subject)
        group by s.subject, v.conversation_id
    ), archived as (
        select count(*) as messages
        from banded b cross join opened o
        where not o.every_band and b.band = 'archival'
        having count(*) > 0
    )
    select x.id, x.conversation_id, x.title, x.source, x.sender, x.is_owner, x.sent_at, x.body, x.score,
           x.band, x.hint
    from (
        select 0 as part, sh.ord, sh.id, sh.conversation_id, c.title, c.source,
               coalesce(i.display_name, p.display_name, i.handle) as sender,
               coalesce(p.is_owner, false) as is_owner, sh.sent_at, m.body, sh.score::real as score, sh.band,
               null::jsonb as hint
        from shown sh
        join exo_private.chat_messages m on m.id = sh.id
        join exo_private.chat_conversations c on c.id = sh.conversation_id
        join exo_private.chat_identities i on i.id = sh.identity_id
        left join exo_private.people p on p.id = i.person_id
        union all
        select 1, row_number() over (order by hd.subject, hd.conversation_id), null, null, null, null, null,
               null, null, null, null, null,
               jsonb_build_object('subject', hd.subject, 'conversation', hd.conversation_id,
                                  'messages', hd.messages, 'how', exo_private.hint_how(hd.subject))
        from held hd
        union all
        select 2, 1, null, null, null, null, null, null, null, null, null, null,
               jsonb_build_object('band', 'archival', 'messages', a.messages,
                                  'how', 'To include them, ask with open_archive => true, or name the time '
                                         'you mean in the question (a year, "back in 2019", "years ago").')
        from archived a
    ) x
    order by x.part, x.ord;
end
$$;

ALTER FUNCTION exo.search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone) OWNER TO exo_api;

--
-- Name: FUNCTION search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone) IS 'Chat messages ranked by BM25 for a question (pg_textsearch, English stemming: every word counts, none is required, stop words need not match), best first (rank, then newest): message_id, conversation_id, conversation_title, source, sender, is_owner, sent_at, body, rank, band (the message''s band by its age as of as_of, as for documents; null when undated), withheld (null). Messages sent after as_of are left out. Bands as in exo.search: archival messages are left out unless open_archive is true, or open_archive is null and the question carries a temporal signal (exo.temporal_signal), or nothing of the present bands answers; when they are left out, one last row has only withheld: {band: "archival", messages (how many matched), how}. Care: a message charged for a deferred subject (its name or an alias near a cue, in the message or the one before or after it) is left out unless bridge names the subject (by name or alias); then one row per subject and conversation has only withheld: {subject, conversation, messages, how}. Everything is decided among the best 5 x max_results matches (at least 200). A blank query returns nothing; only its first 1,000 characters count. Raises invalid_parameter_value for a null query, max_results outside 1..200, or a bridge of more than 50 names or a name over 200 characters.';

--
-- Name: search_report(text, text[], integer, integer, boolean, text[], timestamp with time zone, double precision[]); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.search_report(query text, workspaces text[] DEFAULT NULL::text[], k integer DEFAULT 25, per_workspace integer DEFAULT 30, open_archive boolean DEFAULT NULL::boolean, bridge text[] DEFAULT '{}'::text[], as_of timestamp with time zone DEFAULT now(), query_embedding double precision[] DEFAULT NULL::double precision[]) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo_private.check_search_arguments(query, workspaces, k, per_workspace, query_embedding, null, bridge);
    select exo_private.retrieve(query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding)
           -> 'report'
$$;

ALTER FUNCTION exo.search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) OWNER TO exo_api;

--
-- Name: FUNCTION search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) IS 'What exo.search does for the same arguments (jsonb): the temporal signal and the bands opened, per workspace the stages run or skipped (and why) with counts and times, deference hints (subject, workspace, chunks withheld, how to open them; never their text), what deferred material was released (subject, workspace, chunks, why), degradations (an endpoint down or rate_limited, a stage skipped), the rerank backend and its fallbacks, and timings.';

--
-- Name: setting(text); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.setting(setting_key text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select value from exo_private.settings where key = setting_key
$$;

ALTER FUNCTION exo.setting(setting_key text) OWNER TO exo_api;

--
-- Name: FUNCTION setting(setting_key text); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.setting(setting_key text) IS 'The value of one setting (jsonb), or null when unset.';

--
-- Name: status(); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.status() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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
            select coalesce(jsonb_object_agg(w.name, jsonb_build_object(
                       'entities', coalesce(e.n, 0), 'mentions', coalesce(m.n, 0),
                       'relations', coalesce(r.n, 0)) order by w.name), '{}')
            from exo_private.workspaces w
            left join (select x.workspace, count(*) as n from exo_private.entities x
                       group by x.workspace) e on e.workspace = w.name
            left join (select x.workspace, count(*) as n from exo_private.mentions y
                       join exo_private.entities x on x.id = y.entity_id
                       group by x.workspace) m on m.workspace = w.name
            left join (select x.workspace, count(*) as n from exo_private.relations x
                       group by x.workspace) r on r.workspace = w.name),
        'deferred_subjects', (select count(*) from exo_private.deferred_subjects)
    ) || exo_private.work_status()
$$;

ALTER FUNCTION exo.status() OWNER TO exo_api;

--
-- Name: FUNCTION status(); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.status() IS 'The state of the whole system as jsonb: documents (total, conversations: how many of them are chat conversations, by_stage), quarantine (documents waiting for a routing decision), unreadable_folders (folders the last ingest could not list, whose documents are kept as they were: total, and the first 20 with source, path, error, since), chunks (total, charged, by_workspace), embeddings (per model: dimensions, vectors, active), graph (per workspace: entities, mentions, relations), deferred_subjects (a count), as_of, and the worker''s side (exo_private.work_status): queues (embed, extract: depth, pending, in_flight, held_by_dead_workers, failed, dead, oldest_age_s = seconds since the oldest message was queued; dead_letter), work_by_stage, stuck (documents that cannot advance on their own, with a hint) and worker (last_heartbeat, alive, running, dead). Counts only, never text.';

--
-- Name: temporal_signal(text, date); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.temporal_signal(query text, as_of date DEFAULT CURRENT_DATE) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select exo_private.detect_temporal(
        query,
        (select s.value from exo_private.settings s where s.key = 'retrieval.temporal_cues'),
        coalesce(as_of, current_date),
        (select s.value from exo_private.settings s where s.key = 'retrieval.archive_after_days')::int)
$$;

ALTER FUNCTION exo.temporal_signal(query text, as_of date) OWNER TO exo_api;

--
-- Name: FUNCTION temporal_signal(query text, as_of date); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.temporal_signal(query text, as_of date) IS 'Temporal signals of a query (years, decades, month-years, dates, relative expressions, the cues in retrieval.temporal_cues) and whether they open the archival band (retrieval.archive_after_days).';

--
-- Name: timeline(text, text, text[], integer); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.timeline(entity text, workspace text DEFAULT NULL::text, bridge text[] DEFAULT '{}'::text[], max_results integer DEFAULT 500) RETURNS TABLE(written_at date, document_id bigint, path text, title text, band text, workspace text, surface text, excerpt text, withheld jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
    select * from exo_private.entity_timeline($1, $2, $3, $4)
$_$;

ALTER FUNCTION exo.timeline(entity text, workspace text, bridge text[], max_results integer) OWNER TO exo_api;

--
-- Name: FUNCTION timeline(entity text, workspace text, bridge text[], max_results integer); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.timeline(entity text, workspace text, bridge text[], max_results integer) IS 'One entity''s mentions in the order they were written (oldest first, undated last): written_at, document_id, path, title, band, workspace, surface (the name as written), excerpt (about 200 characters of the chunk around it) and withheld (null). entity: an id or a name (as in exo.dossier; a name in several workspaces gives all of them, see the workspace column); workspace narrows it. The most recent statement is usually the authoritative one. At most max_results rows (clamped to 1..5000), the oldest. Care: mentions in chunks or documents charged for a deferred subject, and every mention of an entity that is one or is seen only in such chunks, are left out unless bridge names the subject by name or alias; then one last row per subject and workspace has only withheld: {subject, workspace, mentions, how}.';

--
-- Name: version(); Type: FUNCTION; Schema: exo; Owner: exo_api
--

CREATE FUNCTION exo.version() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select jsonb_build_object(
        'schema', (select max(name) from exo_private.schema_migrations),
        'migrations', (select count(*) from exo_private.schema_migrations),
        'components', (select coalesce(jsonb_object_agg(name, version), '{}') from exo_private.components),
        'extensions', (select jsonb_object_agg(extname, extversion) from pg_catalog.pg_extension),
        'server', pg_catalog.current_setting('server_version')
    )
$$;

ALTER FUNCTION exo.version() OWNER TO exo_api;

--
-- Name: FUNCTION version(); Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON FUNCTION exo.version() IS 'Schema version (last migration), vendored components, extension versions and server version.';

--
-- Name: active_embedding_model(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.active_embedding_model() RETURNS integer
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select m.id
    from exo_private.settings s
    join exo_private.embedding_models m
      on m.name = s.value ->> 'model' and m.dimensions = (s.value ->> 'dimensions')::int
    where s.key = 'models.embeddings'
$$;

ALTER FUNCTION exo_private.active_embedding_model() OWNER TO exo_owner;

--
-- Name: FUNCTION active_embedding_model(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.active_embedding_model() IS 'Id of the embedding model named by the models.embeddings setting; null until it stored a vector (registering is done by store_embeddings and set_embedding_model, never inside a query).';

--
-- Name: advance_stages(bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.advance_stages(p_documents bigint[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with model as (select exo_private.active_embedding_model() as id),
    progress as (
        select d.id,
               not exists (select 1 from exo_private.chunks c
                           where c.document_id = d.id
                             and not exists (select 1 from exo_private.chunk_embeddings e, model
                                             where e.workspace = c.workspace and e.chunk_id = c.id
                                               and e.model_id = model.id)) as embedded,
               not exists (select 1 from exo_private.extraction_windows w
                           where w.document_id = d.id and w.extracted_at is null) as graphed
        from exo_private.documents d
        where d.id = any (p_documents) and d.stage in ('chunked', 'embedded', 'graphed')
    )
    update exo_private.documents d
       set stage = case when p.embedded and p.graphed then 'graphed'
                        when p.embedded then 'embedded'
                        else 'chunked' end::exo_private.document_stage,
           stage_changed_at = now()
      from progress p
     where d.id = p.id
       and d.stage is distinct from (case when p.embedded and p.graphed then 'graphed'
                                          when p.embedded then 'embedded'
                                          else 'chunked' end)::exo_private.document_stage
$$;

ALTER FUNCTION exo_private.advance_stages(p_documents bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION advance_stages(p_documents bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.advance_stages(p_documents bigint[]) IS 'Set documents to embedded (every chunk has a vector of the active model) or graphed (and every window was extracted), or back to chunked.';

--
-- Name: agtype_jsonb(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.agtype_jsonb(value text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    plain text;
begin
    if value is null then
        return null;
    end if;
    -- {...}::vertex, {...}::edge, [...]::path and 1.5::numeric become plain JSON; string
    -- literals are matched first, so text inside them is never touched.
    plain := pg_catalog.regexp_replace(value, '("(?:[^"\\]|\\.)*")|::(?:vertex|edge|path|numeric)', '\1', 'g');
    begin
        return plain::jsonb;
    exception when invalid_text_representation then
        return pg_catalog.to_jsonb(value);  -- NaN, Infinity: no JSON number
    end;
end
$$;

ALTER FUNCTION exo_private.agtype_jsonb(value text) OWNER TO exo_owner;

--
-- Name: FUNCTION agtype_jsonb(value text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.agtype_jsonb(value text) IS 'The text of an agtype value as jsonb: vertices, edges and paths as plain objects and arrays (their ::vertex, ::edge, ::path suffixes dropped), numerics as numbers; a value JSON cannot hold (NaN, Infinity) as its text.';

--
-- Name: await_ocr(bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.await_ocr(p_document_id bigint) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    update exo_private.documents d
       set stage = 'ocr_pending', error_class = null, error_message = null, stage_changed_at = now()
     where d.id = p_document_id;
    if not found then
        perform exo_private.invalid_argument(format('p_document_id: document %s does not exist', p_document_id));
    end if;
    return pgmq.send('ocr', jsonb_build_object('document_id', p_document_id));
end
$$;

ALTER FUNCTION exo_private.await_ocr(p_document_id bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION await_ocr(p_document_id bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.await_ocr(p_document_id bigint) IS 'Put a document at stage ocr_pending (its text is too thin: a scan) and queue it for OCR (message {document_id} on the ocr queue); returns the message id.';

--
-- Name: band_as_of(exo_private.band, date, boolean, date, integer, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer) RETURNS exo_private.band
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    -- As of today or later the stored band is the answer (exo_private.reband keeps it); so it is
    -- for an undated chunk, and for one whose band does not follow its age (declared in
    -- frontmatter, or a canonical document's: current).
    if as_of is null or as_of >= current_date or written is null or follows_age is not true then
        return stored;
    end if;
    return case when as_of - written <= current_days then 'current'::exo_private.band
                when as_of - written <= recent_days then 'recent'::exo_private.band
                else 'archival'::exo_private.band end;
end
$$;

ALTER FUNCTION exo_private.band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer) OWNER TO exo_owner;

--
-- Name: FUNCTION band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer) IS 'The band of a chunk as of a day (plpy/banding.py band_by_age in SQL): the stored band when as_of is null, today or later, when the chunk is undated or its band does not follow its age (follows_age: its document''s band is inferred and the document is not canonical); else current within current_days of written, recent within recent_days, archival beyond (the banding.* settings). exo_private.stage_sql filters on it and exo_private.pool_details reports it.';

--
-- Name: build_packet(jsonb, text, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.build_packet(retrieved jsonb, query text, token_budget integer) RETURNS jsonb
    LANGUAGE plpython3u STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
"""Retrieval logic that is not a query (stdlib only).

Inlined into exo_private.retrieve (`# exo:include search`) and importable as
plain Python for tests. The database runs the stage queries; this module decides
what the query words are, which candidates a workspace admits, how the combined
pool is ordered, and what a context packet holds.
"""

import math
import re

"""Text normalisation shared by the database and the worker (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include textnorm`),
and importable as plain Python for tests.
"""

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"

def canonical_key(name):
    """The identity key of a name: NFKC, case-folded, inner whitespace collapsed,
    surrounding quotes and punctuation removed. "  Jane  DOE. " -> "jane doe".
    Returns None for None or for a name with nothing left."""
    if name is None:
        return None
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACE.sub(" ", text).strip().strip(_EDGE_PUNCT).strip()
    return text or None

PRESENT_BANDS = ("current", "recent")
ALL_BANDS = ("current", "recent", "archival")
MAX_QUERY_CHARS = 1000  # the query's words, n-grams and identifiers come from this much of it
MAX_INPUT_CHARS = 2000  # a search reads no more of a query (the temporal scan and the embedding)
MAX_NGRAM = 6
MAX_IDENTIFIERS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDENTIFIER_INNER = re.compile(r"[-_./:#@]")
_QUOTED = re.compile(r"\"([^\"]{3,100})\"")
_EDGE = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=[-*#>|])")
# The start of a message line in a chat chunk: its time (or "(undated)") and its sender; in a
# packet's excerpt the time without the day its citation names (without_day).
_CHAT_LABEL = re.compile(r"^((?:\d{4}-\d\d-\d\d )?\d\d:\d\d|\(undated\)) [^\n]*?: ", re.M)
# Words too common to say what a passage is about (excerpt choice only; BM25 has its own).
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between both
    but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours""".split()  # noqa: SIM905 (a list literal would run to a page)
)

# -- the query ---------------------------------------------------------------------------

def query_words(query):
    """The query's words, lower-cased, in order (its first MAX_QUERY_CHARS characters)."""
    return [w.casefold() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]

def content_words(query):
    """Distinct words of the query that are not stopwords, in order."""
    seen = []
    for word in query_words(query):
        if word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen

def ngram_keys(query, max_n=MAX_NGRAM):
    """Every run of 1..max_n whitespace-separated tokens, as canonical keys (an entity name
    or a title can only match one of these)."""
    tokens = [t for t in ((query or "")[:MAX_QUERY_CHARS]).split() if t.strip(_EDGE)]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            key = canonical_key(" ".join(tokens[i : i + n]))
            if key and key not in keys:
                keys.append(key)
    return keys

def name_keys(query, max_n=3):
    """Runs of 1..max_n query words as canonical keys: a person's name or first name as the
    question writes it, without the punctuation around it ("Priya's" is "priya")."""
    words = query_words(query)
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = canonical_key(" ".join(words[i : i + n]))
            if len(key) > 1 and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys

def title_keys(query, max_n=MAX_NGRAM):
    """Runs of 1..max_n query words joined by single spaces: documents.title_key's form, which
    lower-cases (SQL lower(), not casefold: "Straße" stays "straße")."""
    words = [w.lower() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = " ".join(words[i : i + n])
            if (n > 1 or len(key) >= 4) and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys

def identifiers(query):
    """Strings to find verbatim: quoted phrases, and tokens that mix letters with digits or
    carry inner punctuation (host names, ticket ids, file names, versions). Abbreviations of
    single letters ("e.g.", "U.S.") are not identifiers."""
    text = (query or "")[:MAX_QUERY_CHARS]
    found = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    for token in text.split():
        token = token.strip(_EDGE)
        if not 3 <= len(token) <= 100:
            continue
        has_digit = any(c.isdigit() for c in token)
        has_alpha = any(c.isalpha() for c in token)
        inner = _IDENTIFIER_INNER.search(token[1:-1]) and any(len(w) > 1 for w in _WORD.findall(token))
        if has_alpha and (has_digit or inner):
            found.append(token)
    unique = []
    for item in found:
        if item and item.casefold() not in [u.casefold() for u in unique]:
            unique.append(item)
    return unique[:MAX_IDENTIFIERS]

def file_keys(query):
    """Lower-cased tokens that could be a file name or a file's stem."""
    return [i.casefold().rsplit("/", 1)[-1] for i in identifiers(query) if " " not in i]

def coverage(body, words):
    """The share of `words` (a query's content words) among the words of `body`, compared by
    their first five letters (a cheap stem: "replication" meets "replicas", "invoiced" meets
    "invoices"); 0 without words."""
    if not words:
        return 0.0
    stems = {w[:5] for w in _WORD.findall(body.casefold())}
    return sum(1 for w in words if w[:5] in stems) / len(words)

# -- bands and deference ------------------------------------------------------------------

def archive_decision(signal, open_archive):
    """(open, why): whether the archival band opens before any search, and why."""
    if open_archive is True:
        return True, "the caller opened the archive"
    if open_archive is False:
        return False, "the caller kept the archive closed"
    if signal.get("opens_archive"):
        texts = [s["text"] for s in signal.get("signals", []) if s.get("opens_archive")]
        return True, "temporal signal: " + ", ".join(repr(t) for t in texts)
    return False, None

class Deference:
    """Which charged subjects of one search stay withheld, and why the others are released.

    Time and care are separate decisions. An open archive (a temporal signal or open_archive,
    never the fallback taken when nothing present answers) opens archival bands; it releases a
    subject only when the question also names it, by name or alias. Bridging a subject releases
    it wherever it is. `time_releases` (the setting deference.time_releases) restores the looser
    rule: an open archive alone releases every subject.

    Every charged subject counts, whether it is on the deference list or only declared charged
    by a document's frontmatter (over-withholding is the safe direction); a subject on the list
    answers to its name and every alias.
    """

    def __init__(
        self, deferred, bridge=None, query="", archive_open=False, archive_why=None, time_releases=False
    ):
        self.groups = [
            {k for k in (canonical_key(n) for n in [s["subject"], *s.get("aliases", [])]) if k}
            for s in deferred
        ]
        self.bridged = self.released_keys(bridge or [])
        self.asked = set(ngram_keys(query))
        self.archive_open = bool(archive_open)
        self.archive_why = archive_why
        self.time_releases = bool(time_releases)

    def names(self, subject):
        """Canonical keys a subject answers to: all names of its deferred subject(s), else its own."""
        key = canonical_key(subject)
        if not key:
            return set()
        keys = {key}
        for group in self.groups:
            if key in group:
                keys |= group
        return keys

    def released_keys(self, bridge):
        """The keys a bridge opens: each bridged name not on the list, and every name of a bridged
        deferred subject that no unbridged subject shares (an alias two subjects share stays
        closed until both are bridged: bridging one person never opens another's material)."""
        given = {k for k in (canonical_key(b or "") for b in bridge) if k}
        bridged = [g for g in self.groups if g & given]
        unbridged = [g for g in self.groups if not g & given]
        listed = set().union(*self.groups)
        opened = set().union(*bridged) - set().union(*unbridged)
        return (given - listed) | opened

    def why_released(self, subject):
        """Why a charged subject is released in this search, or None while it is withheld."""
        names = self.names(subject)
        if canonical_key(subject) in self.bridged:
            return "bridged"
        if not self.archive_open:
            return None
        named = sorted(names & self.asked, key=lambda k: (-len(k), k))
        if named:
            return f"the question names {named[0]!r} and the archive is open ({self.archive_why})"
        if self.time_releases:
            return f"time releases (deference.time_releases) and the archive is open ({self.archive_why})"
        return None

    def withheld(self, charged):
        """The charged subjects of one chunk that keep it out of the results."""
        return [s for s in charged if self.why_released(s) is None]

def released(results, why):
    """What charged material a search hands out: per (subject, workspace) the chunks among
    `results` charged for it, and `why(subject)` it was released (Deference.why_released)."""
    counts = {}
    for r in results:
        for subject in r.get("charged") or []:
            counts[(subject, r["workspace"])] = counts.get((subject, r["workspace"]), 0) + 1
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "why": why(subject)}
        for (subject, workspace), n in sorted(counts.items())
    ]

# -- admitting candidates into a workspace's pool -------------------------------------------

class WorkspacePool:
    """The candidates one workspace contributes, in the order its stages found them."""

    def __init__(self, workspace, cap, need):
        self.workspace = workspace
        self.cap = cap
        self.need = min(need, cap)
        self.hits = []
        self.seen = set()
        self.withheld = {}
        self.stages = []

    @property
    def confident(self):
        return sum(1 for h in self.hits if h["confident"])

    def wants_more(self):
        """(True, None) while a stage should run, else (False, why it is skipped)."""
        if len(self.hits) >= self.cap:
            return False, "the workspace holds per_workspace candidates"
        if self.confident >= self.need:
            return False, f"enough confident candidates ({self.confident} of {self.need})"
        return True, None

    def admit(self, stage, rows, withhold):
        """Take a stage's rows {chunk_id, score, confident, charged, detail}; `withhold(charged)`
        lists the subjects that keep a row out. Returns (admitted, withheld) counts."""
        admitted = withheld = 0
        for row in rows:
            chunk = row["chunk_id"]
            if chunk in self.seen:
                continue
            self.seen.add(chunk)
            subjects = withhold(row.get("charged") or [])
            if subjects:
                withheld += 1
                for subject in subjects:
                    self.withheld.setdefault(subject, set()).add(chunk)
                continue
            if len(self.hits) >= self.cap:
                continue
            self.hits.append(
                {
                    "chunk_id": chunk,
                    "workspace": self.workspace,
                    "stage": stage,
                    "score": row["score"],
                    "confident": bool(row["confident"]),
                    "detail": row.get("detail"),
                    "match": row.get("match", stage),
                    "charged": list(row.get("charged") or []),  # released: report["released"] names them
                }
            )
            admitted += 1
        return admitted, withheld

def named_subjects(query, deferred):
    """The deferred subjects the query names, by subject or alias."""
    keys = set(ngram_keys(query))
    return [
        s["subject"]
        for s in deferred
        if any(canonical_key(n) in keys for n in [s["subject"], *s.get("aliases", [])] if canonical_key(n))
    ]

def hints(pools, how, named=None):
    """One hint per (subject, workspace) with chunks withheld, never their text.

    `named` {(subject, workspace): charged chunks} adds what the query asked about by name
    but the search never reached (in a closed band, say): such material exists, and the hint
    says so. A hint counts the larger of the two."""
    counts = dict(named or {})
    for pool in pools:
        for subject, chunks in pool.withheld.items():
            key = (subject, pool.workspace)
            counts[key] = max(counts.get(key, 0), len(chunks))
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "how": how(subject)}
        for (subject, workspace), n in sorted(counts.items())
        if n > 0
    ]

# -- the combined-pool rank -----------------------------------------------------------------

def deterministic_relevance(candidate, weights):
    """Relevance from what found the chunk and how much of the query it covers (0..1)."""
    stage = weights["stage"].get(candidate["stage"], 0.5)
    coverage = candidate.get("coverage") or 0.0
    return 0.5 * stage + 0.5 * coverage

def priority(candidate, weights, recency=True):
    """Band weight (only under recency preference), times the boost of how the chunk matched
    (a document named by title or file name outranks one that only mentions it), times the
    canonical boost."""
    value = weights["band"].get(candidate["band"], 1.0) if recency else 1.0
    value *= weights.get("match", {}).get(candidate.get("match"), 1.0)
    if candidate.get("canonical"):
        value *= weights["canonical"]
    return value

# A question about the present state of things ("where does she live now?"): among evidence of
# like relevance, the newest value is the answer, so recency counts over months, not years.
_ASKS_PRESENT = re.compile(
    r"\b(?:now|nowadays|currently|current|these days|at the moment|at present|still|any ?more|lately|latest)\b",
    re.I,
)

def asks_present(query):
    """Whether a question asks what is true now (a present-state word such as "now", "currently",
    "these days", "still")."""
    return bool(_ASKS_PRESENT.search(query or ""))

def freshness(candidate, weights, today_ordinal, years, recency=True, present=False):
    """Closeness to the years the question names; else, under recency preference, recency (over
    present_half_life_days for a question about the present); else (the archive is open)
    neutral."""
    if candidate.get("canonical"):
        return 1.0  # a canonical document is current by declaration, whatever its date
    written = candidate.get("written_ordinal")
    if written is None:
        return weights["freshness_floor"]
    if years:
        year = candidate["written_year"]
        first, last = min(years), max(years)
        miss = first - year if year < first else year - last if year > last else 0
        return max(weights["freshness_floor"], 1.0 - weights["year_miss_per_year"] * miss)
    if not recency:
        return 1.0
    age = max(0, today_ordinal - written)
    half_life = weights["present_half_life_days"] if present else weights["freshness_half_life_days"]
    decay = 0.5 ** (age / float(half_life))
    return weights["freshness_floor"] + (1.0 - weights["freshness_floor"]) * decay

def normalise(scores):
    """Scores of any scale to 0.05..1 (min-max), so a backend's relevance multiplies like another's."""
    values = [s for s in scores.values() if s is not None and math.isfinite(s)]
    if not values:
        return {k: 0.05 for k in scores}
    low, high = min(values), max(values)
    if not math.isfinite(high - low):  # the span overflows: halve everything first
        values = {k: s / 2 for k, s in scores.items() if s is not None and math.isfinite(s)}
        low, high = low / 2, high / 2
    else:
        values = {k: s for k, s in scores.items() if s is not None and math.isfinite(s)}
    span = high - low
    return {
        k: (0.05 if k not in values else 1.0 if span == 0 else 0.05 + 0.95 * (values[k] - low) / span)
        for k in scores
    }

def blend(backend, deterministic, share):
    """A backend's relevance mixed with the deterministic one: `share` of it from the backend,
    so what found a chunk and how much of the query it covers still count."""
    return {k: share * backend.get(k, 0.0) + (1.0 - share) * v for k, v in deterministic.items()}

def from_ranking(ranked_ids, ids):
    """Relevance from an ordered id list (a listwise reply): first 1.0, falling linearly.

    Enforces the permutation: ids the reply invented or repeated are dropped, ids it left
    out follow in their incoming order."""
    order = []
    for i in ranked_ids:
        if i in ids and i not in order:
            order.append(i)
    order += [i for i in ids if i not in order]
    n = len(order)
    return {chunk: 1.0 - (rank / n) * 0.95 for rank, chunk in enumerate(order)}

def rank(candidates, relevance, weights, today_ordinal, years, recency=True, present=False):
    """The candidates in final order, each with its relevance and score.

    A reranker only reorders: the chunks out are exactly the chunks in, whatever the
    backend returned (a missing relevance counts as the lowest)."""
    ranked = []
    for c in candidates:
        r = relevance.get(c["chunk_id"])
        r = 0.0 if r is None or not math.isfinite(r) else r
        score = (
            r * priority(c, weights, recency) * freshness(c, weights, today_ordinal, years, recency, present)
        )
        ranked.append(dict(c, relevance=round(r, 4), score=round(score, 6)))
    ranked.sort(key=lambda c: (-c["score"], -c["relevance"], c["chunk_id"]))
    if sorted(c["chunk_id"] for c in ranked) != sorted(c["chunk_id"] for c in candidates):
        raise AssertionError("rerank changed the set of candidates")
    return ranked

def listwise_prompt(query, candidates, excerpt_chars):
    """The chat messages asking a model to order candidates by usefulness for the query."""
    lines = ["[{}] {}".format(c["chunk_id"], " ".join(c["body"].split())[:excerpt_chars]) for c in candidates]
    return [
        {
            "role": "system",
            "content": "You rank passages by how well they answer a question. Reply with JSON only.",
        },
        {
            "role": "user",
            "content": "Question: "
            + query[:MAX_QUERY_CHARS]
            + "\n\nPassages:\n"
            + "\n".join(lines)
            + '\n\nReply as {"ranking": [ids, most useful first]}.',
        },
    ]

def parse_listwise(content, ids):
    """The ids a listwise reply ranks, in its order; ValueError when it ranks none of ours."""
    import json

    try:
        reply = json.loads(content or "")
    except ValueError:
        # A reply cut off at its token cap: the ids it managed to list still count.
        match = re.search(r"\[\s*(\d[\d,\s]*)", content or "")
        if not match:
            raise ValueError("the reply is neither JSON nor holds a list of ids") from None
        reply = {"ranking": [int(x) for x in re.findall(r"\d+", match.group(1))]}
    ranking = reply.get("ranking") if isinstance(reply, dict) else reply
    if not isinstance(ranking, list):
        raise ValueError("the reply has no ranking list")
    ranked = [i for i in ranking if isinstance(i, int) and not isinstance(i, bool) and i in ids]
    if not ranked:
        raise ValueError("the ranking names none of the candidates")
    return ranked

# -- the context packet -----------------------------------------------------------------------

def estimate_tokens(text):
    """Tokens of a text, estimated as one per four characters (rounded up)."""
    return (len(text) + 3) // 4

def excerpt(body, words, max_chars):
    """The passage of `body` (at most max_chars) around the sentences richest in `words`."""
    text = body.strip()
    if len(text) <= max_chars:
        return text
    spans = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    wanted = set(words)

    def hits(span):
        return len(wanted & {w.casefold() for w in _WORD.findall(text[span[0] : span[1]])})

    best = max(range(len(spans)), key=lambda i: (hits(spans[i]), -i))
    lo = hi = best
    while True:
        grown = False
        if hi + 1 < len(spans) and spans[hi + 1][1] - spans[lo][0] <= max_chars:
            hi += 1
            grown = True
        if lo > 0 and spans[hi][1] - spans[lo - 1][0] <= max_chars:
            lo -= 1
            grown = True
        if not grown:
            break
    a, b = spans[lo][0], spans[hi][1]
    if b - a > max_chars:  # one sentence longer than the excerpt
        b = a + max_chars
    passage = text[a:b].strip()
    return ("... " if a > 0 else "") + passage + (" ..." if b < len(text) else "")

def said(body):
    """What a chat chunk's messages say, without their time and sender labels: a question naming
    the other person matches the sender of half the lines, which says nothing about which one
    answers it."""
    return _CHAT_LABEL.sub("", body)

def chat_messages(body):
    """The messages of a chat chunk's body, each its lines joined: an unindented line starts a
    message, an indented one continues it."""
    messages = []
    for line in body.strip().split("\n"):
        if messages and line[:1].isspace():
            messages[-1] += "\n" + line
        else:
            messages.append(line)
    return messages

def _grow(units, best, max_chars):
    """(lo, hi): the run of units around `best`, joined by newlines within max_chars, grown one
    unit after it (an answer is often a reply) and one before it at a time while they fit."""
    lo = hi = best
    size = len(units[best])
    while True:
        grown = False
        if hi + 1 < len(units) and size + 1 + len(units[hi + 1]) <= max_chars:
            hi += 1
            size += 1 + len(units[hi])
            grown = True
        if lo > 0 and size + 1 + len(units[lo - 1]) <= max_chars:
            lo -= 1
            size += 1 + len(units[lo])
            grown = True
        if not grown:
            return lo, hi

def chat_excerpt(body, words, max_chars):
    """Whole messages of a chat chunk (at most max_chars and the ellipsis marks): the message
    richest in `words` in what it says (said(); compared by their first five letters, as coverage()
    does) and its
    neighbours while they fit. A message longer than that keeps its time and sender and whole
    lines around its line richest in `words`; only a line longer than the limit is cut."""
    text = body.strip()
    if len(text) <= max_chars:
        return text
    wanted = {w[:5] for w in words}

    def richest(units):
        hits = [len(wanted & {w[:5] for w in _WORD.findall(said(u).casefold())}) for u in units]
        return max(range(len(units)), key=lambda i: (hits[i], -i))

    messages = chat_messages(text)
    best = richest(messages)
    if len(messages[best]) <= max_chars:
        lo, hi = _grow(messages, best, max_chars)
        passage = "\n".join(messages[lo : hi + 1])
        return ("...\n" if lo > 0 else "") + passage + ("\n..." if hi + 1 < len(messages) else "")
    # One message longer than the excerpt: its label, then its richest lines.
    label = _CHAT_LABEL.match(messages[best])
    label = label.group() if label and label.end() <= max_chars // 2 else ""
    lines = messages[best][len(label) :].split("\n")
    room = max_chars - len(label)
    at = richest(lines)
    if len(lines[at]) > room:
        return label + excerpt(lines[at], words, room)
    lo, hi = _grow(lines, at, room)
    passage = "\n".join(lines[lo : hi + 1]).lstrip()  # a continuation line's indent goes after "... "
    return (
        label
        + ("... " if lo > 0 else "")
        + passage
        + ("\n..." if hi + 1 < len(lines) or best + 1 < len(messages) else "")
    )

def without_day(passage, day):
    """A chat passage's message lines with their time only where their day is `day`: a window
    never spans two days, and its citation names the day."""
    prefix = day + " "
    return "\n".join(line[len(prefix) :] if line.startswith(prefix) else line for line in passage.split("\n"))

def chunk_excerpt(c, words, max_chars):
    """The excerpt of a candidate: whole messages for a chat chunk (times without the day its
    citation names), sentences for a document's."""
    if c.get("chat"):
        start = chat_start(c["body"])
        return chat_excerpt(without_day(c["body"], start[:10]) if start else c["body"], words, max_chars)
    return excerpt(c["body"], words, max_chars)

def chat_start(body):
    """The time of a chat chunk's first message as its lines show it ("2024-03-04 09:12"), or
    None when it is undated."""
    label = _CHAT_LABEL.match(body)
    return label.group(1) if label and len(label.group(1)) == 16 else None

def citation(c):
    """A chunk's citation label: workspace, path, date and band; for a chat chunk, workspace,
    the conversation's title and its first message's time as the chunk shows it."""
    if c.get("chat"):
        when = chat_start(c["body"]) or "undated"
        return '{}:chat "{}" {}'.format(c["workspace"], c["chat"]["title"], when)
    date = c.get("written_at") or "undated"
    return "{}:{} ({}, {})".format(c["workspace"], c["path"], date, c["band"])

def packet(query, ranked, hint_list, report, budget, settings):
    """The context packet as {text, tokens, used, ...} within `budget` tokens."""
    words = content_words(query)
    top = ranked[0]["score"] if ranked else 0.0
    chosen = [c for c in ranked if top > 0 and c["score"] >= settings["packet.min_relative_score"] * top][
        : settings["packet.max_chunks"]
    ]

    head = "# Context for: " + " ".join((query or "")[:MAX_INPUT_CHARS].split())[:200] + "\n\n"
    facts = "## Current facts\n(none recorded yet)\n\n"
    hint_lines = [
        "- {} chunk(s) about {} in {} withheld (deferred subject). {}".format(
            h["chunks"], h["subject"], h["workspace"], h["how"]
        )
        for h in hint_list
    ]
    hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
    notes = []
    if report.get("archive", {}).get("open"):
        notes.append("archive open: " + str(report["archive"].get("why")))
    for d in report.get("degradations", []):
        notes.append("degraded: {} ({})".format(d["component"], d["error_class"]))

    why = {r["subject"]: r["why"] for r in report.get("released") or []}.get

    def provenance(used):
        # One short line per cited chunk: its document and conversation are in `used`.
        lines = ["## Provenance", "rerank: " + report["rerank"]["backend"]]
        lines.extend(
            "[{}] chunk {} via {} (rank {:.3f})".format(n, c["chunk_id"], c["stage"], c["score"])
            for n, c in enumerate(used, 1)
        )
        cited = released(used, why)
        if cited:  # the first note: a packet cut short keeps it
            lines.append(
                "note: released deferred material: "
                + "; ".join("{subject} in {workspace} ({chunks} chunk(s): {why})".format(**r) for r in cited)
            )
        lines.extend("note: " + n for n in notes)
        return "\n".join(lines) + "\n"

    fixed = head + facts + "## Evidence\n"
    used, blocks = [], []
    for c in chosen:

        def block(chars, c=c):
            return f"[{len(used) + 1}] {citation(c)}\n{chunk_excerpt(c, words, chars)}\n\n"

        chars = settings["packet.excerpt_chars"]
        rest = fixed + "".join(blocks) + hint_text + provenance([*used, c])
        if estimate_tokens(rest + block(chars)) > budget:
            # What is left of the budget still holds a shorter excerpt of this chunk, or nothing more.
            chars = budget * 4 - len(rest + block(0)) - 8  # room for the ellipsis marks
            if chars < 120:
                break
            blocks.append(block(chars))
            used.append(c)
            break
        blocks.append(block(chars))
        used.append(c)
    if not used:
        blocks = ["(nothing found)\n\n"]
    text = fixed + "".join(blocks) + hint_text + provenance(used)
    while estimate_tokens(text) > budget and hint_lines:
        hint_lines.pop()  # a tiny budget: hints are cut before the text ever overflows
        hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
        text = fixed + "".join(blocks) + hint_text + provenance(used)
    if estimate_tokens(text) > budget:
        text = text[: max(0, budget * 4 - 4)].rstrip() + "\n..."
        text = text[: budget * 4]
    return {
        "text": text,
        "tokens": estimate_tokens(text),
        "budget": budget,
        "used": [
            {
                "n": n,
                "chunk_id": c["chunk_id"],
                "document_id": c["document_id"],
                "conversation_id": c["chat"]["conversation_id"] if c.get("chat") else None,
                "citation": citation(c),
                "workspace": c["workspace"],
                "path": c["path"],
                "band": c["band"],
                "written_at": c.get("written_at"),
                "stage": c["stage"],
            }
            for n, c in enumerate(used, 1)
        ],
        "hints": hint_list,
    }
import json

if "settings" not in SD:
    SD["settings"] = plpy.prepare("select key, value::text from exo_private.settings where key like 'packet.%'", [])
settings = {r["key"]: json.loads(r["value"]) for r in plpy.execute(SD["settings"], [])}
found = json.loads(retrieved)
report = found["report"]
result = packet(query, found["results"], report["hints"], report, token_budget, settings)
result["report"] = report
return json.dumps(result)
$$;

ALTER FUNCTION exo_private.build_packet(retrieved jsonb, query text, token_budget integer) OWNER TO exo_owner;

--
-- Name: FUNCTION build_packet(retrieved jsonb, query text, token_budget integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.build_packet(retrieved jsonb, query text, token_budget integer) IS 'The context packet (text, tokens, used, hints, report) of an exo_private.retrieve result within token_budget tokens.';

--
-- Name: bump_generation(text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.bump_generation(ws text, model text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    newest int;
    gen int;
    pending bigint[];
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = ws) then
        raise exception 'workspace % does not exist', ws;
    end if;
    -- Waits for merges holding the current generation (they lock it for share).
    select g.generation into newest
    from exo_private.extraction_generations g
    where g.workspace = ws
    order by g.generation desc
    limit 1
    for update;
    gen := coalesce(newest, 0) + 1;
    insert into exo_private.extraction_generations (workspace, generation, model)
    values (ws, gen, bump_generation.model);

    -- Mentions and relations go with their entities (on delete cascade).
    delete from exo_private.entities e where e.workspace = ws and e.generation < gen;
    update exo_private.extraction_windows w
       set extracted_generation = null, extracted_at = null, extraction_stats = null
     where w.workspace = ws;
    perform exo_private.advance_stages(array(
        select d.id from exo_private.documents d where d.workspace = ws and d.stage = 'graphed'));
    perform exo_private.clear_graph(ws);
    perform exo_private.project_entities(exo_private.seed_owner(array[ws]));
    perform exo_private.link_participants(array(
        select d.conversation_id from exo_private.documents d
        where d.workspace = ws and d.conversation_id is not null));

    -- Every window again, once: the workspace's jobs still waiting are dropped first.
    select array_agg(q.msg_id) into pending
    from pgmq.q_extract q
    where q.message ->> 'workspace' = ws;
    if pending is not null then
        perform pgmq.delete('extract', pending);
    end if;
    perform pgmq.send_batch('extract', array(
        select jsonb_build_object('window_id', w.id, 'workspace', ws)
        from exo_private.extraction_windows w
        where w.workspace = ws
        order by w.id));
    return gen;
end
$$;

ALTER FUNCTION exo_private.bump_generation(ws text, model text) OWNER TO exo_owner;

--
-- Name: FUNCTION bump_generation(ws text, model text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.bump_generation(ws text, model text) IS 'Start a new extraction generation of a workspace for model: deletes older generations'' entities (mentions and relations cascade), empties its AGE graph, re-seeds the owner entity and the chat participants (link_participants), and queues every extraction window again (dropping its waiting extract jobs). Returns the new generation. A graph is only ever built by one model.';

--
-- Name: canonical_key(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.canonical_key(name text) RETURNS text
    LANGUAGE plpython3u IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
"""Text normalisation shared by the database and the worker (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include textnorm`),
and importable as plain Python for tests.
"""

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"

def canonical_key(name):
    """The identity key of a name: NFKC, case-folded, inner whitespace collapsed,
    surrounding quotes and punctuation removed. "  Jane  DOE. " -> "jane doe".
    Returns None for None or for a name with nothing left."""
    if name is None:
        return None
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACE.sub(" ", text).strip().strip(_EDGE_PUNCT).strip()
    return text or None
return canonical_key(name)
$$;

ALTER FUNCTION exo_private.canonical_key(name text) OWNER TO exo_owner;

--
-- Name: FUNCTION canonical_key(name text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.canonical_key(name text) IS 'Identity key of an entity name: NFKC, case-folded, whitespace collapsed, edge punctuation removed.';

--
-- Name: chat_person_names(bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.chat_person_names(identities bigint[]) RETURNS TABLE(identity_id bigint, name text, key text, is_owner boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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

ALTER FUNCTION exo_private.chat_person_names(identities bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION chat_person_names(identities bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.chat_person_names(identities bigint[]) IS 'For chat identities: the name and canonical key of the Person each one is (the owner by people.entity_key once named, others by their person''s or their own display name), and whether it is the owner. Identities with no name (a bare phone number or address) and ChatGPT''s assistant are left out.';

--
-- Name: chat_window_senders(bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.chat_window_senders(conversations bigint[]) RETURNS TABLE(workspace text, window_id bigint, document_id bigint, chunk_id bigint, name text, key text, is_owner boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with windows as materialized (
        select cw.workspace, cw.chunk_id, cw.message_ids, d.id as document_id, x.id as window_id
        from exo_private.documents d
        join exo_private.chat_windows cw on cw.conversation_id = d.conversation_id and cw.workspace = d.workspace
        join exo_private.chunks c on c.workspace = cw.workspace and c.id = cw.chunk_id
        join exo_private.extraction_windows x on x.document_id = d.id and x.ordinal = c.ordinal
        where d.conversation_id = any(conversations)
    ), senders as materialized (
        select distinct w.workspace, w.window_id, w.document_id, w.chunk_id, m.identity_id
        from windows w
        cross join unnest(w.message_ids) x (message_id)
        join exo_private.chat_messages m on m.id = x.message_id
    )
    select distinct on (s.window_id, n.key)
           s.workspace, s.window_id, s.document_id, s.chunk_id, n.name, n.key, n.is_owner
    from senders s
    join exo_private.chat_person_names(array(select distinct s2.identity_id from senders s2)) n
      on n.identity_id = s.identity_id
    order by s.window_id, n.key, n.is_owner desc, n.name
$$;

ALTER FUNCTION exo_private.chat_window_senders(conversations bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION chat_window_senders(conversations bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.chat_window_senders(conversations bigint[]) IS 'For every window of the given conversations: its workspace, extraction window, document and chunk, and each Person who sent a message in it (exo_private.chat_person_names), once per key.';

--
-- Name: check_search_arguments(text, text[], integer, integer, double precision[], integer, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer DEFAULT NULL::integer, bridge text[] DEFAULT NULL::text[]) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    dimensions int;
begin
    if query is null then
        perform exo_private.invalid_argument('query must not be null');
    end if;
    if k is null or k not between 1 and 200 then
        perform exo_private.invalid_argument(format('k must be between 1 and 200, got %s', coalesce(k::text, 'null')));
    end if;
    if per_workspace is null or per_workspace not between 1 and 200 then
        perform exo_private.invalid_argument(
            format('per_workspace must be between 1 and 200, got %s', coalesce(per_workspace::text, 'null')));
    end if;
    if token_budget is not null and token_budget not between 200 and 100000 then
        perform exo_private.invalid_argument(
            format('token_budget must be between 200 and 100000 tokens, got %s', token_budget));
    end if;
    perform exo_private.check_workspaces(workspaces);
    -- A bridge names subjects: a few short names. (The query needs no limit: a search reads
    -- only its first characters, search.MAX_INPUT_CHARS.)
    if cardinality(bridge) > 50 then
        perform exo_private.invalid_argument(
            format('bridge must name at most 50 subjects, got %s', cardinality(bridge)));
    end if;
    if exists (select 1 from unnest(bridge) b where length(b) > 200) then
        perform exo_private.invalid_argument('bridge names must be at most 200 characters each');
    end if;
    if query_embedding is not null then
        if cardinality(query_embedding) is null
           or exists (select 1 from unnest(query_embedding) v where v is null or v in ('NaN', 'Infinity', '-Infinity')) then
            perform exo_private.invalid_argument('query_embedding must be a non-empty array of finite numbers');
        end if;
        select m.dimensions into dimensions
        from exo_private.embedding_models m where m.id = exo_private.active_embedding_model();
        if dimensions is not null and cardinality(query_embedding) <> dimensions then
            perform exo_private.invalid_argument(format(
                'query_embedding has %s dimensions; the embedding model in use has %s',
                cardinality(query_embedding), dimensions));
        end if;
    end if;
end
$$;

ALTER FUNCTION exo_private.check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]) IS 'Raise invalid_parameter_value, naming the argument, for what exo.search, exo.search_report, exo.search_json and exo.context_packet cannot take; they call it before exo_private.retrieve. A message echoes at most 100 characters of an argument.';

--
-- Name: check_workspaces(text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.check_workspaces(names text[]) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    unknown text;
begin
    select w into unknown from unnest(names) w
    where w is null or not exists (select 1 from exo_private.workspaces x where x.name = w)
    limit 1;
    if found then
        perform exo_private.invalid_argument(
            format('workspace %s does not exist', exo_private.quoted(unknown)),
            'known workspaces: ' || (select string_agg(x.name, ', ' order by x.name) from exo_private.workspaces x));
    end if;
end
$$;

ALTER FUNCTION exo_private.check_workspaces(names text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION check_workspaces(names text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.check_workspaces(names text[]) IS 'Raise invalid_parameter_value naming the first of names that is no workspace (a null included), with the known workspaces as hint; a null array passes.';

--
-- Name: clear_derived(bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.clear_derived(doc_id bigint) RETURNS void
    LANGUAGE sql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    delete from exo_private.chunks c where c.document_id = doc_id;
    delete from exo_private.extraction_windows w where w.document_id = doc_id;
$$;

ALTER FUNCTION exo_private.clear_derived(doc_id bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION clear_derived(doc_id bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.clear_derived(doc_id bigint) IS 'Delete a document''s chunks and extraction windows (before re-chunking, deleting or rejecting it).';

--
-- Name: clear_graph(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.clear_graph(ws text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $_$
declare
    graph name := exo_private.ensure_workspace_graph(ws);
begin
    -- The parent label tables hold every label's rows (inheritance); the labels stay.
    execute format('truncate %1$I._ag_label_edge, %1$I._ag_label_vertex', graph);
end
$_$;

ALTER FUNCTION exo_private.clear_graph(ws text) OWNER TO exo_owner;

--
-- Name: FUNCTION clear_graph(ws text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.clear_graph(ws text) IS 'Empty a workspace''s AGE graph (all vertices and edges; the labels stay).';

--
-- Name: closed_chunks(text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.closed_chunks(bridge text[]) RETURNS TABLE(chunk_id bigint, workspace text, document_id bigint, char_start integer, char_end integer, withheld text[])
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- The charged chunks are read once (a seq scan: chunks_charged_idx, a GIN index, serves
    -- only containment); each distinct set of charged subjects is judged once (they are few).
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), charged as materialized (
        select c.id, c.workspace, c.document_id, c.char_start, c.char_end, c.charged_subjects
        from exo_private.chunks c
        where c.charged_subjects <> '{}'
    ), judged as materialized (
        select k.subjects, exo_private.unreleased(k.subjects, r.keys) as withheld
        from (select distinct c.charged_subjects as subjects from charged c) k
        cross join released r
    )
    select c.id, c.workspace, c.document_id, c.char_start, c.char_end, j.withheld
    from judged j
    join charged c on c.charged_subjects = j.subjects
    where j.withheld <> '{}'
$$;

ALTER FUNCTION exo_private.closed_chunks(bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION closed_chunks(bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.closed_chunks(bridge text[]) IS 'Every chunk charged for a subject the bridge leaves closed: its id (unique across workspaces), workspace, document and span, and withheld, those subjects.';

--
-- Name: closed_documents(bigint[], text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.closed_documents(ids bigint[], bridge text[]) RETURNS TABLE(document_id bigint, withheld text[])
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- A charged document: its frontmatter charges a subject (chunks or not), or it has chunks
    -- and every one is withheld. A title or path that names a subject near a cue charges every
    -- chunk (plpy/deference.py heading), so such a document is one of these too. Its title and
    -- path are withheld wherever its text would be.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), docs as (
        select d.id, d.workspace, d.frontmatter -> 'charged' as declared
        from exo_private.documents d
        where d.id = any (ids)
    ), declared as (
        -- a declared name that is a deferred subject's name or alias counts as that subject
        select dc.id,
               coalesce((select s.subject from exo_private.deferred_subjects s
                         where exo_private.canonical_key(n.name)
                               = any (array(select exo_private.canonical_key(a) from unnest(s.subject || s.aliases) a))
                         order by s.subject limit 1),
                        pg_catalog.btrim(n.name)) as subject
        from docs dc
        cross join lateral jsonb_array_elements_text(
            case jsonb_typeof(dc.declared) when 'array' then dc.declared
                                           when 'string' then jsonb_build_array(dc.declared)
                                           else '[]'::jsonb end) n (name)
        where pg_catalog.btrim(n.name) <> ''
    ), chunk_states as (
        select c.document_id, exo_private.unreleased(c.charged_subjects, r.keys) as held
        from docs dc
        join exo_private.chunks c on c.workspace = dc.workspace and c.document_id = dc.id
        cross join released r
    ), reasons as (
        select dl.id, u.subject
        from declared dl
        cross join released r
        cross join lateral unnest(exo_private.unreleased(array[dl.subject], r.keys)) u (subject)
        union all
        select cs.document_id, u.subject
        from chunk_states cs
        cross join lateral unnest(cs.held) u (subject)
        where not exists (select 1 from chunk_states x where x.document_id = cs.document_id and x.held = '{}')
    )
    select r.id, array_agg(distinct r.subject order by r.subject)
    from reasons r
    group by r.id
$$;

ALTER FUNCTION exo_private.closed_documents(ids bigint[], bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION closed_documents(ids bigint[], bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.closed_documents(ids bigint[], bridge text[]) IS 'Of the given documents, the charged ones the bridge leaves closed, with the subjects why: the frontmatter charges a closed subject, or every chunk is withheld (a title or path naming a subject near a cue charges every chunk). The one rule for withholding a document''s title and path wherever they would appear.';

--
-- Name: closed_subject_keys(text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.closed_subject_keys(bridge text[]) RETURNS TABLE(subject text, key text)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    )
    select distinct s.subject, k.key
    from exo_private.deferred_subjects s
    cross join released r
    cross join lateral unnest(s.subject || s.aliases) n
    cross join lateral (select exo_private.canonical_key(n) as key) k
    where k.key is not null
      and not (exo_private.canonical_key(s.subject) = any (r.keys))
$$;

ALTER FUNCTION exo_private.closed_subject_keys(bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION closed_subject_keys(bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.closed_subject_keys(bridge text[]) IS 'Canonical keys of the names and aliases of every deferred subject the bridge does not open, with the subject: an entity with one of these keys is that subject.';

--
-- Name: closed_windows(text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.closed_windows(bridge text[]) RETURNS TABLE(window_id bigint)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- Only in these may a mention, and so a relation, be withheld: elsewhere all is shown.
    select distinct w.id
    from exo_private.closed_chunks(bridge) k
    join exo_private.extraction_windows w
      on w.workspace = k.workspace and w.document_id = k.document_id
     and k.char_start < w.char_end and k.char_end > w.char_start
$$;

ALTER FUNCTION exo_private.closed_windows(bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION closed_windows(bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.closed_windows(bridge text[]) IS 'The extraction windows overlapping a chunk charged for a subject the bridge leaves closed: the only windows whose mentions and relations may be withheld (exo_private.mention_state says which).';

--
-- Name: complete_embedding(bigint[], text, integer, bigint[], public.vector[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    stored int;
begin
    stored := exo_private.store_embeddings(p_model, p_dimensions, p_chunk_ids, p_vectors::text[]);
    perform pgmq.archive('embed', p_msg_ids);
    return stored;
end
$$;

ALTER FUNCTION exo_private.complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]) OWNER TO exo_owner;

--
-- Name: FUNCTION complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]) IS 'One embed job''s result in one transaction: store the vectors of model p_model for the chunks (those re-made meanwhile are dropped), advance their documents'' stages and archive the messages p_msg_ids. Returns how many vectors were stored.';

--
-- Name: complete_extraction(bigint, bigint, integer, jsonb, jsonb, jsonb); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    doc bigint;
    merged jsonb;
begin
    -- Locked, so the window cannot be re-made or deleted before this transaction ends.
    select w.document_id into doc
    from exo_private.extraction_windows w
    where w.id = p_window_id
    for key share;
    if not found then
        raise exception 'extraction window % no longer exists', p_window_id
            using errcode = 'EX001',
                  hint = 'its document was re-chunked or deleted while the model ran; drop the job';
    end if;
    merged := exo_private.merge_extraction(p_window_id, p_generation, p_entities, p_relations);
    if merged ? 'stale_generation' then
        raise exception 'generation % of window %''s workspace is no longer current', p_generation, p_window_id
            using errcode = 'EX002',
                  hint = 'another extraction model took over and queued the window again; drop the job';
    end if;
    update exo_private.extraction_windows w
       set extracted_generation = p_generation, extracted_at = now(),
           extraction_stats = coalesce(p_stats, '{}') || merged
     where w.id = p_window_id;
    perform exo_private.advance_stages(array[doc]);
    perform pgmq.archive('extract', p_msg_id);
    return merged;
end
$$;

ALTER FUNCTION exo_private.complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb) OWNER TO exo_owner;

--
-- Name: FUNCTION complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb) IS 'One extract job''s result in one transaction: merge the entities and relations into generation p_generation (merge_extraction), record the window extracted with p_stats and the merge counts, advance its document''s stage and archive message p_msg_id. Returns the merge counts. Raises EX001 when the window is gone, EX002 when the generation is no longer current.';

--
-- Name: current_generation(text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.current_generation(ws text, model text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    gen int;
    gen_model text;
begin
    select g.generation, g.model into gen, gen_model
    from exo_private.extraction_generations g
    where g.workspace = ws
    order by g.generation desc
    limit 1;
    if gen is null then
        if not exists (select 1 from exo_private.workspaces w where w.name = ws) then
            raise exception 'workspace % does not exist', ws;
        end if;
        insert into exo_private.extraction_generations (workspace, generation, model)
        values (ws, 1, current_generation.model)
        on conflict do nothing;
        return 1;
    end if;
    -- A generation set_owner made before any model ran is claimed by the first model.
    if gen_model = 'seed' and current_generation.model <> 'seed' then
        update exo_private.extraction_generations g
           set model = current_generation.model
         where g.workspace = ws and g.generation = gen and g.model = 'seed';
    end if;
    return gen;
end
$$;

ALTER FUNCTION exo_private.current_generation(ws text, model text) OWNER TO exo_owner;

--
-- Name: FUNCTION current_generation(ws text, model text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.current_generation(ws text, model text) IS 'The workspace''s newest extraction generation; creates generation 1 for model when there is none, and lets model claim a ''seed'' generation (made by set_owner). A different model never bumps here: that is bump_generation.';

--
-- Name: cut_windows(bigint, text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.cut_windows(conversation bigint, ws text, zone text) RETURNS integer
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Chat windows: a conversation cut into chunks of consecutive messages (stdlib only).

A conversation's transcript is one line per message, `YYYY-MM-DD HH:MM Sender: text`
(the local time in the setting chat.time_zone; `(undated)` for a message without a
time), joined by "\\n"; a body's own line breaks become continuation lines indented by
two spaces, so every unindented line starts a message. Messages come in order (dated
first by time, then undated, then by id). A session ends at a gap longer than
`gap_minutes` or a new local day; undated messages form a session of their own. A
window closes when the next message would make it longer than `max_chars` (a single
longer message is a window of its own); the next window of the same session starts with
the last `overlap` messages of the one before. A window never spans two sessions.
"""

UNDATED = "(undated)"

def message_line(local, sender, body):
    """One message as transcript text: `local` is 'YYYY-MM-DD HH:MM' or None when undated."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    head = (local or UNDATED) + " " + sender + ": " + lines[0]
    return "\n".join([head] + ["  " + line for line in lines[1:]])

def sessions(messages, gap_minutes):
    """The messages split into sessions (lists of indexes into `messages`).

    A message is a dict with `epoch` (seconds, or None when undated) and `local`
    ('YYYY-MM-DD HH:MM' in the chat's time zone, or None).
    """
    result = []
    previous = None
    for i, m in enumerate(messages):
        if previous is None or (m["epoch"] is None) != (previous["epoch"] is None):
            new = True
        elif m["epoch"] is None:
            new = False
        else:
            new = (
                m["epoch"] - previous["epoch"] > gap_minutes * 60 or m["local"][:10] != previous["local"][:10]
            )
        if new:
            result.append([])
        result[-1].append(i)
        previous = m
    return result

def _size(window, lengths):
    """Characters of a window: its lines and the line breaks between them."""
    return sum(lengths[i] for i in window) + len(window) - 1

def _cut(session, lengths, max_chars, overlap):
    """The windows of one session (lists of indexes into the messages)."""
    windows = []
    current = []
    for i in session:
        if current and _size([*current, i], lengths) > max_chars:
            windows.append(current)
            # The last `overlap` messages again (never the whole window before), as many as fit.
            keep = min(overlap, len(current) - 1)
            current = current[len(current) - keep :] if keep > 0 else []
            while current and _size([*current, i], lengths) > max_chars:
                current = current[1:]
        current.append(i)
    if current:
        windows.append(current)
    return windows

def plan(messages, gap_minutes, max_chars, overlap):
    """{transcript_chars, transcript_bytes (UTF-8), windows}: each window {messages (indexes),
    message_ids, body, char_start, char_end}, where body = transcript[char_start:char_end]."""
    lines = [message_line(m["local"], m["sender"], m["body"]) for m in messages]
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    lengths = [len(line) for line in lines]
    windows = []
    for session in sessions(messages, gap_minutes):
        for window in _cut(session, lengths, max_chars, overlap):
            first, last = window[0], window[-1]
            windows.append(
                {
                    "messages": window,
                    "message_ids": [messages[i]["id"] for i in window],
                    "body": "\n".join(lines[i] for i in window),
                    "char_start": starts[first],
                    "char_end": starts[last] + lengths[last],
                }
            )
    return {
        "transcript_chars": max(offset - 1, 0),
        "transcript_bytes": max(sum(len(line.encode()) + 1 for line in lines) - 1, 0),
        "windows": windows,
    }

def window_marks(message_marks):
    """A window's deference marks: the union, by subject, of its messages' marks (in order)."""
    merged = {}
    for marks in message_marks:
        for mark in marks:
            merged.setdefault(mark["subject"], mark)
    return list(merged.values())
"""Temporal banding of a document (stdlib only).

Authority order for the band: frontmatter `band`, then inference from the date the document
was written. That date comes from the best evidence present, in this order, and the reason
names the source:

1. frontmatter `date`;
2. the format's own metadata (metadata["date"]: an email's Date header, a PDF's creation date,
   DOCX/ODT core properties, EPUB dc:date, HTML meta tags), unless it is a tool's default
   (TOOL_DEFAULT_DATES, the epochs) or later than the file's modification time;
3. a date or year in the title or the first lines (HEAD_LINES lines of at most HEAD_LINE_CHARS);
4. the first full date in the opening of the text (TEXT_DATE_SEARCH_CHARS);
5. the last full date in the closing lines (CLOSING_CHARS: a signature or a trailer);
6. a date or year in the path;
7. the file's modification time.

Years run from 1000 to today. A full date ("1803-03-04", "4 March 1803", "March 4, 1803",
"04-MAR-1803") is a date wherever it stands; a bare year counts only where it reads as a year
(year_in_line) and never next to a currency, a label such as "room" or "No.", or a noun
("1500 people", "1850 km"). A canonical document is current unless its frontmatter says otherwise.
"""

import datetime
import json
import posixpath
import re

"""English month names for the date readers (stdlib only): banding and temporal."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip

#: A regex group matching any month name or abbreviation, with an optional dot.
MONTH_PATTERN = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"

BANDS = ("current", "recent", "archival")
FIRST_YEAR = 1000
TEXT_DATE_SEARCH_CHARS = 1000
CLOSING_CHARS = 500
HEAD_LINES = 3
HEAD_LINE_CHARS = 200
#: Dates that formats and tools write when nobody set one: the Unix, DOS/zip, Mac, Windows and
#: spreadsheet epochs, and the creation dates of python-docx's and python-pptx's templates.
TOOL_DEFAULT_DATES = frozenset(
    datetime.date(*ymd)
    for ymd in [
        (1970, 1, 1), (1980, 1, 1), (1904, 1, 1), (1601, 1, 1), (1899, 12, 30), (1899, 12, 31),
        (1900, 1, 1), (2013, 12, 23), (2013, 1, 27),
    ]
)  # fmt: skip
#: Metadata dates may be written in another time zone than the file's mtime: a day of slack.
MTIME_SLACK = datetime.timedelta(days=1)

def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}

_YEAR = r"(1\d{3}|20\d\d)"
_DATE_PATTERNS = [
    (re.compile(r"(?<![\d.])" + _YEAR + r"-(\d\d)-(\d\d)(?!\d)"), ("y", "m", "d")),
    (
        re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH_PATTERN + r",?\s+" + _YEAR + r"(?!\d)", re.I),
        ("d", "M", "y"),
    ),
    (
        re.compile(r"\b" + MONTH_PATTERN + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR + r"(?!\d)", re.I),
        ("M", "d", "y"),
    ),
    (re.compile(r"\b(\d{1,2})-" + MONTH_PATTERN + r"-" + _YEAR + r"(?!\d)", re.I), ("d", "M", "y")),
]
_PATH_DATE = re.compile(r"(?<!\d)" + _YEAR + r"[-_.]?(\d\d)[-_.]?(\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)" + _YEAR + r"(?!\d)")
_PATH_PART_YEAR = re.compile(r"(?<![^/])\d{4}(?:[-_ .]|/|$)")

# A bare year: four digits not glued to a word, a currency sign, a reference sign ('#', '!', '@',
# '~') or a decimal or thousands separator, optionally a range ("1861-65", "1986/87", "1861-1865");
# then what stands before and after it.
_DASHES = "-\u2013\u2014"
_NOT_GLUED = r"(?<![\w$£€¥#!@~])(?<!\d[.,])"
_RANGE = r"(\s*[" + _DASHES + r"/]\s*(?:1\d{3}|20\d\d|\d\d)(?!\d))?"
_YEAR_TOKEN = re.compile(_NOT_GLUED + _YEAR + r"(?![\w%]|[.,:]\d)" + _RANGE)
_WORD_BEFORE = re.compile(r"([^\W\d_]+\.?)[\s:]*$")
#: Words after which a year reads as a year.
_YEAR_CUES = frozenset([
    "in", "of", "since", "from", "by", "until", "till", "to", "around", "circa", "c.", "ca.", "c", "ca",
    "anno", "year", "early", "late", "mid", "spring", "summer", "autumn", "fall", "winter", "dated",
    "written", *MONTHS, *(m + "." for m in MONTHS),
])  # fmt: skip
#: Labels after which four digits are a number, not a year.
_NUMBER_LABELS = frozenset([
    "no", "nr", "number", "num", "room", "rm", "flight", "page", "pages", "pp", "p", "vol", "volume",
    "chapter", "ch", "section", "sec", "route", "suite", "apt", "apartment", "box", "track", "platform",
    "gate", "bus", "line", "item", "step", "ticket", "order", "invoice", "account", "model", "version",
    "v", "ver", "release", "code", "zip", "tel", "phone", "fax", "ext", "id", "serial", "part", "lot",
    "unit", "building", "floor", "highway", "street", "st", "avenue", "ave", "road", "rd", "km", "mile",
    "miles", "issue", "exhibit", "table", "figure", "fig", "rule", "article", "art", "psalm", "hymn",
    "opus", "op", "bwv", "kv", "total", "population", "count", "sum", "score", "price", "cost", "amount",
    "balance", "capacity", "height", "altitude", "elevation", "distance", "length", "weight", "size",
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "dm", "dlrs", "dollars", "rs", "inr", "yen",
])  # fmt: skip
#: Words that may follow a year in a sentence ("in 1803 the ...", "1796 and 1797").
_FUNCTION_WORDS = frozenset([
    "and", "or", "to", "the", "a", "an", "at", "by", "for", "when", "was", "were", "is", "he", "she",
    "it", "i", "we", "they", "on", "with", "as", "that", "which", "who", "after", "before", "until",
    "till", "while",
])  # fmt: skip
_ERA = re.compile(r"(?:a\.?d\.?|c\.?e\.?)(?![\w.])", re.I)
_BEFORE_ERA = re.compile(r"(?:b\.?c\.?|b\.?c\.?e\.?)(?![\w.])", re.I)
_CLOSER = re.compile(r"[,;.)\]:!?" + _DASHES[1:] + r"]|-\s|$")
_CODE_AFTER = re.compile(r"[-/]\d")
#: Marks after which a year reads as one; a dash only spaced ("Speech - 1796", not "CVE-2023").
_CUE_MARKS = (",", "(", "[", ":", " -", "\u2013", "\u2014")
_NEXT_WORD = re.compile(r"([^\W\d_]+)")

def _make_date(fields, order):
    values = dict(zip(order, fields, strict=False))
    month = MONTHS[values["M"].lower()] if "M" in values else int(values["m"])
    try:
        return datetime.date(int(values["y"]), month, int(values["d"]))
    except ValueError:
        return None

def _year_date(year, today, month=None):
    """A year (or a month of it) as a day: 1 July (or the month's first), never after today."""
    return min(datetime.date(year, month or 7, 1), today)

def full_dates(text, today):
    """[(start, date, matched, "date")]: the full dates in text, FIRST_YEAR to today, in order."""
    found = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = _make_date(m.groups(), order)
            if day and day <= today:
                found.append((m.start(), day, m.group(0), "date"))
    return sorted(found)

def year_in_line(line, today):
    """(start, date, matched, kind) of the first bare year in one line that reads as a year, or None.

    It reads as a year after a cue ("in", "of", a month name, ...), after a comma, a spaced dash,
    a colon or an opening parenthesis, at the start of the line, or before the end of the line, a closing
    punctuation mark, an era ("AD") or a function word. Never after a number label or a currency,
    never inside a longer code ("CVE-2023-40403"), never before another word, a percent sign or
    "BC". After a month name it is that month."""
    for m in _YEAR_TOKEN.finditer(line):
        year = int(m.group(1))
        if year > today.year:
            continue
        before = line[: m.start()].rstrip()
        after = line[m.end() :].lstrip()
        cue = _WORD_BEFORE.search(before)
        word = cue.group(1).lower() if cue else ""
        if word.rstrip(".") in _NUMBER_LABELS:
            continue
        if _BEFORE_ERA.match(after):
            continue
        if _CODE_AFTER.match(after):
            continue  # part of a longer code: "CVE-2023-40403", "2019/0042"
        closes = bool(_CLOSER.match(after) or _ERA.match(after))
        next_word = _NEXT_WORD.match(after)
        if next_word and not closes and next_word.group(1).lower() not in _FUNCTION_WORDS:
            continue  # "1500 people", "1850 km", "2019 budget"
        cued = word in _YEAR_CUES or before in ("", "-") or before.endswith(_CUE_MARKS)
        if not (cued or closes):
            continue
        month = MONTHS.get(word.rstrip(".")) if cue else None
        if month:
            return cue.start(1), _year_date(year, today, month), line[cue.start(1) : m.end(1)], "month"
        return m.start(), _year_date(year, today), m.group(1), "year"
    return None

def parse_date(value, today=None):
    """A date from a frontmatter or metadata value: a date or datetime, an ISO string, a full
    date in words (an email's "Mon, 01 Jan 2001 ..." too), a year alone (as 1 July) or a year
    and month (as its first day); None if none."""
    today = today or datetime.date.today()
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and FIRST_YEAR <= value <= today.year:
        return _year_date(value, today)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)", text)
    if m:
        return _make_date(m.groups(), ("y", "m", "d")) if int(m.group(1)) >= FIRST_YEAR else None
    m = re.fullmatch(r"(\d{4})(?:-(\d\d))?", text)
    if m:
        year = int(m.group(1))
        month = int(m.group(2)) if m.group(2) and 1 <= int(m.group(2)) <= 12 else None
        return _year_date(year, today, month) if FIRST_YEAR <= year <= today.year else None
    found = full_dates(text, datetime.date.max)
    return found[0][1] if found else None

def metadata_date(metadata, mtime_ns, today):
    """(date, reason) from the format's own metadata, or None: metadata["date"] unless it is before
    FIRST_YEAR, a tool's default, after today, or after the file's mtime (with MTIME_SLACK)."""
    day = parse_date(metadata.get("date"), today)
    if day is None or day.year < FIRST_YEAR or day in TOOL_DEFAULT_DATES or day > today:
        return None
    if day > _mtime_date(mtime_ns) + MTIME_SLACK:
        return None
    source = metadata.get("date_source") or "format metadata"
    return day, "metadata date '" + day.isoformat() + "' (" + str(source) + ")"

def _head_lines(text):
    """The first HEAD_LINES non-empty lines (a heading's '#' dropped), those of at most HEAD_LINE_CHARS:
    a longer line is prose, not a title."""
    lines = []
    for line in text[: HEAD_LINES * (HEAD_LINE_CHARS + 1) * 4].splitlines():  # never split a whole book
        line = line.strip().lstrip("#").strip()
        if line:
            lines.append(line)
            if len(lines) == HEAD_LINES:
                break
    return [line for line in lines if len(line) <= HEAD_LINE_CHARS]

def date_in_head(title, text, today):
    """(date, reason) from the title or the first lines, or None: in each, in order, the first
    full date or year that reads as one (a year as 1 July, a month and year as its first day)."""
    for where, lines in (("title", [title] if title else []), ("first lines", _head_lines(text))):
        for line in lines:
            hits = full_dates(line, today)[:1] + [hit for hit in [year_in_line(line, today)] if hit]
            if hits:
                _start, day, matched, kind = min(hits)
                return day, kind + " in " + where + " '" + matched + "'"
    return None

def date_in_text(text, today):
    """(start, date, matched, kind): the first full date in the opening of the text, not in the future."""
    found = full_dates(text[:TEXT_DATE_SEARCH_CHARS], today)
    return found[0] if found else None

def date_at_end(text, today):
    """(start, date, matched, kind): the last full date in the closing lines (a signature, a trailer)."""
    found = full_dates(text[-CLOSING_CHARS:], today)
    return found[-1] if found else None

def date_in_path(path, today):
    """A full date in the file name or folders, else the last year in them (as 1 July). A year
    before 1900 counts only as a whole folder or the start of a name ("1848/", "1848-letter.txt"),
    not inside one ("ticket-1500.txt")."""
    for m in _PATH_DATE.finditer(path):
        day = _make_date(m.groups(), ("y", "m", "d"))
        if day and day <= today:
            return day, "date in path '" + m.group(0) + "'"
    years = [
        int(m.group(1))
        for m in _PATH_YEAR.finditer(path)
        if int(m.group(1)) <= today.year
        and (int(m.group(1)) >= 1900 or _PATH_PART_YEAR.match(path, m.start()))
    ]
    if years:
        return _year_date(years[-1], today), "year in path '" + str(years[-1]) + "'"
    return None

def _mtime_date(mtime_ns):
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()

def written_date(frontmatter, text, path, mtime_ns, today, metadata=None):
    """(date, reason): when the document was written, and how that was found (the module's order)."""
    metadata = metadata or {}
    day = parse_date(frontmatter.get("date"), today)
    if day:  # the person's word, even for a day still to come
        return day, "frontmatter date"
    hit = metadata_date(metadata, mtime_ns, today)
    if hit:
        return hit
    title = metadata.get("title")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    hit = date_in_head(title if isinstance(title, str) and title != stem else None, text, today)
    if hit:
        return hit
    hit = date_in_text(text, today)
    if hit:
        return hit[1], "date in text '" + hit[2] + "'"
    hit = date_at_end(text, today)
    if hit:
        return hit[1], "date in closing lines '" + hit[2] + "'"
    hit = date_in_path(path, today)
    if hit:
        return hit
    return _mtime_date(mtime_ns), "file modification time"

def band_for(frontmatter, text, path, mtime_ns, canonical, today, current_days, recent_days, metadata=None):
    """{band, source, reason, written_at} for one document; metadata: the format's own (title, date)."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today, metadata)
    declared = str(frontmatter.get("band", "")).strip().lower()
    if declared in BANDS:
        return {
            "band": declared,
            "source": "frontmatter",
            "reason": "frontmatter band",
            "written_at": written.isoformat(),
        }
    band, reason = band_by_age(written, canonical, today, current_days, recent_days, how)
    return {"band": band, "source": "inferred", "reason": reason, "written_at": written.isoformat()}

def band_by_age(written, canonical, today, current_days, recent_days, how=None):
    """(band, reason) of a document written on `written`, as of `today`: the rule both ingest
    and the daily re-banding (exo_private.reband) apply. `how` says how the date was found."""
    age = (today - written).days
    if age <= current_days:
        band = "current"
    elif age <= recent_days:
        band = "recent"
    else:
        band = "archival"
    reason = (
        "written " + written.isoformat() + (" (" + how + ")" if how else "") + ", " + str(age) + " days ago"
    )
    if canonical and band != "current":
        band = "current"
        reason += "; canonical document: never demoted by inference"
    return band, reason
import datetime
import json

settings = {
    r["key"]: json.loads(r["value"])
    for r in plpy.execute(
        "select key, value::text from exo_private.settings where key like 'chat.%' or key like 'banding.%'"
    )
}
conv = plpy.execute(
    plpy.prepare(
        "select id, source, external_id, title from exo_private.chat_conversations where id = $1", ["bigint"]
    ),
    [conversation],
)[0]
doc = plpy.execute(
    plpy.prepare(
        "select id, workspace from exo_private.documents where conversation_id = $1 for update", ["bigint"]
    ),
    [conversation],
)
doc = doc[0] if doc else None

messages = plpy.execute(
    plpy.prepare(
        "select m.id, coalesce(i.display_name, p.display_name, i.handle) as sender, m.body, "
        "       (extract(epoch from m.sent_at) * 1000000000)::bigint as ns, "
        "       to_char(m.sent_at at time zone $2, 'YYYY-MM-DD HH24:MI') as local, "
        "       m.sent_at::text as sent_at, coalesce(m.charged, '[]')::text as charged, "
        "       coalesce(p.is_owner, false) as is_owner "
        "from exo_private.chat_messages m "
        "join exo_private.chat_identities i on i.id = m.identity_id "
        "left join exo_private.people p on p.id = i.person_id "
        "where m.conversation_id = $1 "
        "order by m.sent_at nulls last, m.id",
        ["bigint", "text"],
    ),
    [conversation, zone],
)
for m in messages:
    m["epoch"] = None if m["ns"] is None else m["ns"] / 1e9
planned = plan(
    messages,
    settings["chat.session_gap_minutes"],
    settings["chat.window_max_chars"],
    settings["chat.window_overlap_messages"],
)
today = datetime.date.fromisoformat(plpy.execute("select current_date::text as d")[0]["d"])

# Each window: its dates (the first and last dated message), band by the first (plpy/banding.py
# band_by_age, as for documents), and the union (by subject) of its messages' deference marks.
windows = []
for w in planned["windows"]:
    dated = [messages[i] for i in w["messages"] if messages[i]["epoch"] is not None]
    written = datetime.date.fromisoformat(dated[0]["local"][:10]) if dated else None
    band, reason = None, None
    if written is not None:
        band, reason = band_by_age(
            written, False, today, settings["banding.current_days"], settings["banding.recent_days"],
            "first message of the window",
        )
    marks = window_marks(json.loads(messages[i]["charged"]) for i in w["messages"])
    windows.append(
        dict(
            w,
            written_at=written.isoformat() if written else None,
            band=band,
            reason=reason,
            first_sent_at=dated[0]["sent_at"] if dated else None,
            last_sent_at=dated[-1]["sent_at"] if dated else None,
            charged=json.dumps(marks),
        )
    )

# The conversation document: created once, its fields brought up to date on every call.
dated_messages = [m for m in messages if m["epoch"] is not None]
others = []
for m in messages:
    if not m["is_owner"] and m["sender"] not in others:
        others.append(m["sender"])
title = conv["title"] or ("Chat with " + ", ".join(others) if others else "Chat " + conv["external_id"])
# The document's band is its newest window's; a window of undated messages has the document's.
newest = max((w for w in windows if w["written_at"]), key=lambda w: w["written_at"], default=None)
for w in windows:
    if w["band"] is None:
        w["band"] = newest["band"] if newest else "current"
fields = [
    title,
    planned["transcript_bytes"],
    dated_messages[-1]["ns"] if dated_messages else 0,
    dated_messages[0]["local"][:10] if dated_messages else None,
    newest["band"] if newest else "current",
    newest["reason"] + " (the newest window)" if newest else "undated conversation",
    ws,
    json.dumps(
        {
            "workspace": ws,
            "method": "chat",
            "confidence": 1.0,
            "reasons": ["chat import into workspace " + ws],
            "candidates": [],
        }
    ),
]
if doc is None:
    path = "chat/" + conv["source"] + "/" + conv["external_id"]
    doc_id = plpy.execute(
        plpy.prepare(
            "insert into exo_private.documents (conversation_id, path, path_bytes, extension, title, "
            "  size_bytes, mtime_ns, written_at, band, band_reason, workspace, route, band_source, stage) "
            "values ($1, $2, convert_to($2, 'UTF8'), 'chat', $3, $4, $5, $6::date, $7::exo_private.band, $8, "
            "        $9, $10::jsonb, 'inferred', 'chunked') "
            "returning id",
            ["bigint", "text", "text", "bigint", "bigint", "text", "text", "text", "text", "text"],
        ),
        [conversation, path] + fields,
    )[0]["id"]
    old = []
else:
    doc_id = doc["id"]
    if doc["workspace"] != ws:
        # Moving to another workspace: every window is cut again there.
        plpy.execute(plpy.prepare("select exo_private.clear_derived($1)", ["bigint"]), [doc_id])
    old = plpy.execute(
        plpy.prepare(
            "select w.chunk_id, c.body, w.message_ids, x.id as window_id "
            "from exo_private.chat_windows w "
            "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
            "left join exo_private.extraction_windows x on x.document_id = c.document_id "
            "     and x.ordinal = c.ordinal "
            "where w.conversation_id = $1",
            ["bigint"],
        ),
        [conversation],
    )

# Unchanged windows (same messages, same text) keep their chunk, vector and mentions.
by_key = {(tuple(r["message_ids"]), r["body"]): r for r in old}
kept, new = [], []
for ordinal, w in enumerate(windows):
    w["ordinal"] = ordinal
    hit = by_key.pop((tuple(w["message_ids"]), w["body"]), None)
    if hit is None:
        new.append(w)
    else:
        w["chunk_id"], w["window_id"] = hit["chunk_id"], hit["window_id"]
        kept.append(w)
gone = list(by_key.values())
if gone:
    plpy.execute(
        plpy.prepare(
            "delete from exo_private.chunks where workspace = $1 and id = any ($2)", ["text", "bigint[]"]
        ),
        [ws, [r["chunk_id"] for r in gone]],
    )
    plpy.execute(
        plpy.prepare("delete from exo_private.extraction_windows where id = any ($1)", ["bigint[]"]),
        [[r["window_id"] for r in gone if r["window_id"] is not None]],
    )
if kept:
    ids = [w["chunk_id"] for w in kept]
    xids = [w["window_id"] for w in kept]
    ordinals = [w["ordinal"] for w in kept]
    # Ordinals are unique per document: move the kept ones out of the way first.
    plpy.execute(
        plpy.prepare(
            "update exo_private.chunks set ordinal = -1 - ordinal where workspace = $1 and id = any ($2)",
            ["text", "bigint[]"],
        ),
        [ws, ids],
    )
    plpy.execute(
        plpy.prepare(
            "update exo_private.extraction_windows set ordinal = -1 - ordinal where id = any ($1)",
            ["bigint[]"],
        ),
        [xids],
    )
    plpy.execute(
        plpy.prepare(
            "update exo_private.chunks c "
            "set ordinal = k.ordinal, char_start = k.char_start, char_end = k.char_end, "
            "    band = k.band::exo_private.band, written_at = k.written_at::date, charged = k.charged::jsonb, "
            "    charged_subjects = array(select m ->> 'subject' from jsonb_array_elements(k.charged::jsonb) m) "
            "from unnest($2::bigint[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[]) "
            "     k (id, ordinal, char_start, char_end, band, written_at, charged) "
            "where c.workspace = $1 and c.id = k.id",
            ["text", "bigint[]", "int[]", "int[]", "int[]", "text[]", "text[]", "text[]"],
        ),
        [
            ws,
            ids,
            ordinals,
            [w["char_start"] for w in kept],
            [w["char_end"] for w in kept],
            [w["band"] for w in kept],
            [w["written_at"] for w in kept],
            [w["charged"] for w in kept],
        ],
    )
    plpy.execute(
        plpy.prepare(
            "update exo_private.extraction_windows x "
            "set ordinal = k.ordinal, char_start = k.char_start, char_end = k.char_end "
            "from unnest($1::bigint[], $2::int[], $3::int[], $4::int[]) k (id, ordinal, char_start, char_end) "
            "where x.id = k.id",
            ["bigint[]", "int[]", "int[]", "int[]"],
        ),
        [xids, ordinals, [w["char_start"] for w in kept], [w["char_end"] for w in kept]],
    )
if new:
    args = [
        ws,
        doc_id,
        conversation,
        [w["ordinal"] for w in new],
        [w["body"] for w in new],
        [w["char_start"] for w in new],
        [w["char_end"] for w in new],
        [w["band"] for w in new],
        [w["written_at"] for w in new],
        [w["charged"] for w in new],
        [json.dumps(w["message_ids"]) for w in new],
        [w["first_sent_at"] for w in new],
        [w["last_sent_at"] for w in new],
    ]
    types = ["text", "bigint", "bigint", "int[]", "text[]", "int[]", "int[]", "text[]", "text[]", "text[]",
             "text[]", "text[]", "text[]"]
    # The chunks, their chat_windows rows and extraction windows, and the embed and extract jobs,
    # in one statement (the queues are tables: the jobs commit with the chunks).
    plpy.execute(
        plpy.prepare(
            "with n as ( "
            "  select * from unnest($4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text[], "
            "                       $10::text[], $11::text[], $12::text[], $13::text[]) "
            "    n (ordinal, body, char_start, char_end, band, written_at, charged, message_ids, "
            "       first_sent_at, last_sent_at) "
            "), chunk as ( "
            "  insert into exo_private.chunks (workspace, document_id, ordinal, body, char_start, char_end, "
            "                                 band, written_at, charged_subjects, charged) "
            "  select $1, $2, n.ordinal, n.body, n.char_start, n.char_end, n.band::exo_private.band, "
            "         n.written_at::date, "
            "         array(select m ->> 'subject' from jsonb_array_elements(n.charged::jsonb) m), "
            "         n.charged::jsonb "
            "  from n order by n.ordinal "
            "  returning id, ordinal "
            "), win as ( "
            "  insert into exo_private.chat_windows (workspace, chunk_id, conversation_id, message_ids, "
            "                                       first_sent_at, last_sent_at) "
            "  select $1, c.id, $3, array(select jsonb_array_elements_text(n.message_ids::jsonb)::bigint), "
            "         n.first_sent_at::timestamptz, n.last_sent_at::timestamptz "
            "  from chunk c join n on n.ordinal = c.ordinal "
            "), ext as ( "
            "  insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end) "
            "  select $2, $1, n.ordinal, n.body, n.char_start, n.char_end from n order by n.ordinal "
            "  returning id "
            ") "
            "select (select count(*) from pgmq.send_batch('embed', "
            "          array(select jsonb_build_object('chunk_id', c.id, 'workspace', $1) "
            "                from chunk c order by c.ordinal))) as embed, "
            "       (select count(*) from pgmq.send_batch('extract', "
            "          array(select jsonb_build_object('window_id', e.id, 'workspace', $1) "
            "                from ext e order by e.id))) as extract",
            types,
        ),
        args,
    )

changed = bool(new or gone) or doc is None
plpy.execute(
    plpy.prepare(
        "update exo_private.documents d "
        "set title = $2, size_bytes = $3, mtime_ns = $4, written_at = $5::date, band = $6::exo_private.band, "
        "    band_reason = $7, workspace = $8, route = $9::jsonb, band_source = 'inferred', "
        "    stage = case when $10 then 'chunked'::exo_private.document_stage else d.stage end, "
        "    stage_changed_at = case when $10 then now() else d.stage_changed_at end, "
        "    error_class = null, error_message = null "
        "where d.id = $1",
        ["bigint", "text", "bigint", "bigint", "text", "text", "text", "text", "text", "boolean"],
    ),
    [doc_id] + fields + [changed],
)
if changed:
    # Nothing new to embed or extract (only windows gone): the stage follows what is left.
    plpy.execute(plpy.prepare("select exo_private.advance_stages(array[$1])", ["bigint"]), [doc_id])
return len(new)
$_$;

ALTER FUNCTION exo_private.cut_windows(conversation bigint, ws text, zone text) OWNER TO exo_owner;

--
-- Name: FUNCTION cut_windows(conversation bigint, ws text, zone text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.cut_windows(conversation bigint, ws text, zone text) IS 'Cut a conversation into windows (plpy/chat_windows.py, times in zone) as chunks of its conversation document in ws: one chunk, chat_windows row and extraction window each. A window whose messages and text are unchanged keeps its chunk (vector, mentions) and gets its marks and band in place; new ones are inserted and queued for embed and extract, gone ones deleted. Returns how many windows were added. Called by window_conversation, which checks the arguments.';

--
-- Name: cypher_refusal(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.cypher_refusal(query text) RETURNS text
    LANGUAGE plpython3u IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""The check exo.cypher runs before a caller's Cypher reaches Apache AGE (stdlib only).

`tokenize` reads a query as AGE's scanner (ag_scanner.l) reads it, so that a word this
module sees is the word AGE sees: string literals in ' or " with backslash escapes
(\\uXXXX and \\UXXXXXXXX included), `backtick names` (`` is one backtick), numbers
(integers, 0x hex, decimals, exponents) with whatever follows them glued (`1CREATE` is
the number 1, then the name CREATE), names whose letters may be any non-ASCII
character (as in AGE, which takes every byte from 0x80 up as a letter), and symbols.

`refusal` then checks the tokens and says why a query may not run (None when it may).
Only reading is allowed: clauses MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER BY,
SKIP, LIMIT, UNWIND, UNION; a function call (a name followed by `(`) only of AGE's own
read functions listed in FUNCTIONS, never dotted; no write or procedural keyword
anywhere as a word; no variable-length relationship (a `*` inside the [...] of a
relationship), since AGE reads those through its own cache, past row security; no
comments, parameters, `$`, `;` or `::` casts. A refusal names the rule, the offending
token (clipped) and its position, and never echoes more of the query than that.
"""

import re
from typing import NamedTuple

MAX_LENGTH = 20000

#: Words that write or run procedures: refused wherever they stand as a word (not inside a
#: string literal or a `backtick name`). EXPLAIN and OPERATOR are AGE's own.
WRITE_KEYWORDS = frozenset(
    {"create", "merge", "set", "delete", "detach", "remove", "call", "load", "foreach", "yield"}
    | {"explain", "operator", "drop"}
)

#: AGE 1.8's read functions a query may call (ag_catalog.age_<name>; count is
#: pg_catalog.count; exists, coalesce, all, any, none, single and reduce are grammar).
#: Left out on purpose: startnode and endnode (they look vertices up past row security),
#: the variable-length and shortest path functions and the graph statistics (AGE's cache,
#: past row security), and everything that is not AGE's (an unqualified name AGE does not
#: know resolves through search_path to any SQL function).
FUNCTIONS = frozenset(
    {"id", "start_id", "end_id", "type", "label", "labels", "properties", "keys", "nodes"}
    | {"relationships", "length", "size", "head", "last", "tail", "isempty", "timestamp"}
    | {"exists", "coalesce", "all", "any", "none", "single", "reduce"}
    | {"toboolean", "tobooleanlist", "tofloat", "tofloatlist", "tointeger", "tointegerlist"}
    | {"tostring", "tostringlist"}
    | {"abs", "ceil", "floor", "round", "sign", "sqrt", "exp", "log", "log10", "e", "pi", "rand"}
    | {"sin", "cos", "tan", "cot", "asin", "acos", "atan", "atan2", "degrees", "radians"}
    | {"left", "right", "substring", "trim", "ltrim", "rtrim", "toupper", "tolower", "replace"}
    | {"split", "reverse", "range"}
    | {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont"}
    | {"percentiledisc"}
)

#: Grammar words that may stand before `(` without being a function call (MATCH (n),
#: WHERE (a)-->(b), NOT (...), ...). None of them names a function AGE could resolve.
GRAMMAR_BEFORE_PAREN = frozenset(
    {"match", "optional", "where", "with", "return", "and", "or", "xor", "not", "in", "is"}
    | {"case", "when", "then", "else", "end", "distinct", "unwind", "as", "starts", "ends"}
    | {"contains", "by", "skip", "limit", "union", "asc", "desc", "ascending", "descending"}
)

_WHITESPACE = "\t\n\v\f\r "
_SYMBOLS = "?%()*+,-./:;<=>[]^{|}"
_TWO_CHAR = ("?|", "?&", "||", "<>", "<=", ">=", "..", "+=", "=~", "::")
_ESCAPES = {'"': '"', "'": "'", "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

_DIGITS = r"[0-9]+"
_DECIMAL = r"(?:[0-9]+\.[0-9]*|\.[0-9]+)"
# AGE's number rules, each anchored where a number starts; the longest match wins, as in
# flex (decimalfail, "1..", gives back the dots: a range, not a decimal).
_NUMBER_RULES = (
    ("integer", re.compile(r"0[Xx][0-9A-Fa-f]+|" + _DIGITS)),
    ("bad hexadecimal literal", re.compile(r"0[Xx]")),
    ("decimal", re.compile(r"(?:" + _DECIMAL + "|" + _DIGITS + r")[Ee][+-]?[0-9]+|" + _DECIMAL)),
    ("range", re.compile(_DIGITS + r"\.\.")),
    ("bad exponent", re.compile(r"(?:" + _DECIMAL + "|" + _DIGITS + r")[Ee][+-]?")),
)

class Token(NamedTuple):
    """kind: name, quoted_name, string, number or symbol; text: the name (backticks
    removed), the string's value, the number or the symbol; pos: 1-based character."""

    kind: str
    text: str
    pos: int

class Refused(Exception):
    """A query exo.cypher will not run: rule (a sentence), token (as written) and pos."""

    def __init__(self, rule, token, pos):
        super().__init__(rule)
        self.rule = rule
        self.token = token
        self.pos = pos

    def message(self):
        shown = self.token if len(self.token) <= 40 else self.token[:40] + "…"
        where = f" at character {self.pos}" if self.pos else ""
        return f"{self.rule}: {shown!r}{where}" if shown else f"{self.rule}{where}"

def _is_digit(c):
    return "0" <= c <= "9"

def _is_name_start(c):
    return "a" <= c <= "z" or "A" <= c <= "Z" or c == "_" or not c.isascii()

def _is_name_part(c):
    return _is_name_start(c) or _is_digit(c) or c == "$"

def _number(query, i):
    """(end, kind) of the number starting at i: AGE's longest matching rule."""
    best_end, best_kind = i, None
    for kind, rule in _NUMBER_RULES:
        m = rule.match(query, i)
        if m and m.end() > best_end:
            best_end, best_kind = m.end(), kind
    if best_kind == "range":
        best_end, best_kind = best_end - 2, "integer"
    return best_end, best_kind

def _string(query, i):
    """(end, value) of the string literal whose quote is at i."""
    quote, j, value = query[i], i + 1, []
    n = len(query)
    while j < n:
        c = query[j]
        if c == quote:
            return j + 1, "".join(value)
        if c != "\\":
            value.append(c)
            j += 1
            continue
        if j + 1 >= n:
            break
        e = query[j + 1]
        if e in _ESCAPES:
            value.append(_ESCAPES[e])
            j += 2
            continue
        width = {"u": 4, "U": 8}.get(e)
        digits = query[j + 2 : j + 2 + width] if width else ""
        if not width or len(digits) < width or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise Refused(
                "query is not valid Cypher: bad escape in a string literal", query[j : j + 2], j + 1
            )
        code = int(digits, 16)
        j += 2 + width
        if 0xD800 <= code <= 0xDBFF:  # a high surrogate takes the low one that must follow
            low = re.match(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))", query[j:])
            low_code = int(low.group(1) or low.group(2), 16) if low else 0
            if not 0xDC00 <= low_code <= 0xDFFF:
                raise Refused(
                    "query is not valid Cypher: a lone surrogate in a string literal", digits, j - width - 1
                )
            code = 0x10000 + ((code - 0xD800) << 10) + (low_code - 0xDC00)
            j += low.end()
        if code == 0 or code > 0x10FFFF or 0xDC00 <= code <= 0xDFFF:
            raise Refused(
                "query is not valid Cypher: bad unicode escape in a string literal", digits, j - width - 1
            )
        value.append(chr(code))
    raise Refused("query is not valid Cypher: unterminated string literal", query[i : i + 20], i + 1)

def _quoted_name(query, i):
    """(end, name) of the `backtick name` starting at i."""
    j, name = i + 1, []
    while True:
        close = query.find("`", j)
        if close < 0:
            raise Refused("query is not valid Cypher: unterminated `quoted name`", query[i : i + 20], i + 1)
        name.append(query[j:close])
        if query.startswith("``", close):
            name.append("`")
            j = close + 2
            continue
        if not "".join(name):
            raise Refused("query is not valid Cypher: empty `quoted name`", "``", i + 1)
        return close + 1, "".join(name)

def tokenize(query):
    """The tokens of query as AGE scans it; raises Refused for comments, parameters and
    what AGE could not scan."""
    tokens, i, n = [], 0, len(query)
    while i < n:
        c = query[i]
        if c in _WHITESPACE:
            i += 1
        elif query.startswith(("//", "/*"), i):
            raise Refused("query must not contain comments (// or /*)", query[i : i + 2], i + 1)
        elif _is_digit(c) or (c == "." and _is_digit(query[i + 1 : i + 2])):
            end, kind = _number(query, i)
            if kind != "integer" and kind != "decimal":
                raise Refused(f"query is not valid Cypher: {kind}", query[i:end], i + 1)
            tokens.append(Token("number", query[i:end], i + 1))
            i = end
        elif c in "'\"":
            end, value = _string(query, i)
            tokens.append(Token("string", value, i + 1))
            i = end
        elif c == "`":
            end, name = _quoted_name(query, i)
            tokens.append(Token("quoted_name", name, i + 1))
            i = end
        elif c == "$":
            raise Refused("query must not contain $ (no parameters, no dollar quotes)", "$", i + 1)
        elif _is_name_start(c):
            j = i + 1
            while j < n and _is_name_part(query[j]):
                j += 1
            tokens.append(Token("name", query[i:j], i + 1))
            i = j
        elif query.startswith(_TWO_CHAR, i):
            tokens.append(Token("symbol", query[i : i + 2], i + 1))
            i += 2
        elif c in _SYMBOLS:
            tokens.append(Token("symbol", c, i + 1))
            i += 1
        else:
            raise Refused("query is not valid Cypher: unexpected character", c, i + 1)
    return tokens

def check(query):
    """Raise Refused when query may not run (see the module's doc)."""
    if query is None or not query.strip(_WHITESPACE):
        raise Refused("query must be a Cypher query, got " + ("null" if query is None else "a blank"), "", 0)
    if len(query) > MAX_LENGTH:
        raise Refused(f"query is longer than {MAX_LENGTH} characters", "", 0)
    dollar = query.find("$")  # anywhere, in string literals too: the query is dollar-quoted into SQL
    if dollar >= 0:
        raise Refused("query must not contain $ (no parameters, no dollar quotes)", "$", dollar + 1)
    tokens = tokenize(query)
    brackets = []  # "relationship", "list", "(" or "{" for each open bracket
    for k, token in enumerate(tokens):
        previous = tokens[k - 1] if k else None
        following = tokens[k + 1] if k + 1 < len(tokens) else None
        word = token.text.lower()
        if token.kind == "name" and word in WRITE_KEYWORDS:
            raise Refused(
                "query is read-only: " + token.text.upper() + " is refused (no word that writes or calls)",
                token.text,
                token.pos,
            )
        called = following is not None and following.kind == "symbol" and following.text == "("
        if called and token.kind in ("name", "quoted_name"):
            if previous is not None and previous.kind == "symbol" and previous.text == ".":
                raise Refused(
                    "query must not call schema-qualified functions (x.f(...))", token.text, token.pos
                )
            grammar = token.kind == "name" and word in GRAMMAR_BEFORE_PAREN
            if not grammar and word not in FUNCTIONS:
                raise Refused(
                    "query may only call AGE's read functions (id, type, size, ...)", token.text, token.pos
                )
        if token.kind != "symbol":
            continue
        if token.text == ";":
            raise Refused("query must be one statement: no ; outside string literals", ";", token.pos)
        if token.text == "::":
            raise Refused("query must not cast values (::)", "::", token.pos)
        if token.text == "[":
            after_dash = previous is not None and previous.kind == "symbol" and previous.text == "-"
            brackets.append("relationship" if after_dash else "list")
        elif token.text in "({":
            brackets.append(token.text)
        elif token.text in ")]}" and brackets:
            brackets.pop()
        elif token.text == "*" and brackets and brackets[-1] == "relationship":
            raise Refused("query must not use variable-length relationships (* in -[...]-)", "*", token.pos)
    if not any(t.kind == "name" and t.text.lower() == "return" for t in tokens):
        raise Refused("query must RETURN something (MATCH ... RETURN ...)", "", 0)

def refusal(query):
    """Why query may not run (the rule, the token and where), or None when it may."""
    try:
        check(query)
    except Refused as refused:
        return refused.message()
    return None
return refusal(query)
$_$;

ALTER FUNCTION exo_private.cypher_refusal(query text) OWNER TO exo_owner;

--
-- Name: FUNCTION cypher_refusal(query text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.cypher_refusal(query text) IS 'Why exo.cypher refuses a query, or null when it may run: the rule, the offending token and its position, from a tokenizer that reads Cypher as AGE does (plpy/cypher_lexer.py). Only MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER BY, SKIP, LIMIT, UNWIND and UNION, and calls of AGE''s read functions; no write or procedure word, no dotted call, no variable-length relationship, no comment, $, ; or :: cast; at most 20000 characters.';

--
-- Name: defer_subject(text, text[], text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.defer_subject(subject_name text, subject_aliases text[] DEFAULT '{}'::text[], why text DEFAULT NULL::text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    if subject_name is null or btrim(subject_name) = '' then
        raise exception 'a deferred subject needs a name';
    end if;
    insert into exo_private.deferred_subjects (subject, aliases, note)
    values (btrim(subject_name), coalesce(subject_aliases, '{}'), why)
    on conflict (subject) do update set aliases = excluded.aliases, note = coalesce(excluded.note, deferred_subjects.note);
    return exo_private.remark_charged();
end
$$;

ALTER FUNCTION exo_private.defer_subject(subject_name text, subject_aliases text[], why text) OWNER TO exo_owner;

--
-- Name: FUNCTION defer_subject(subject_name text, subject_aliases text[], why text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.defer_subject(subject_name text, subject_aliases text[], why text) IS 'Add (or update) a deferred subject with aliases and re-mark all chunks and chat messages; returns chunks re-marked.';

--
-- Name: deference_list(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.deference_list() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select coalesce(jsonb_agg(jsonb_build_object('subject', subject, 'aliases', aliases) order by subject), '[]')
    from deferred_subjects
$$;

ALTER FUNCTION exo_private.deference_list() OWNER TO exo_owner;

--
-- Name: FUNCTION deference_list(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.deference_list() IS 'The deferred subjects with their aliases, as jsonb.';

--
-- Name: detect_temporal(text, jsonb, date, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer) RETURNS jsonb
    LANGUAGE plpython3u IMMUTABLE PARALLEL SAFE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Temporal signals in a retrieval query (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include temporal`),
and importable as plain Python for tests. Search uses the result to decide the
bands: no signal means recency preference (present bands first); a signal that
opens the archive lets the archival band in, and the report names the signal.

`detect(query, cues, today, archive_after_days=365)` returns

    {"signal": bool, "opens_archive": bool, "years": [int, ...],
     "truncated": bool, "signals": [{"kind", "text", "start", "end",
                                     "opens_archive", ...kind fields}]}

Years run from 1000 to next year. A date or a month named with its year is
one whatever the year ("March 4, 1803", "1803-03-04", "May 1790"); numeric
forms other than ISO dates start at 1900; a bare number is a year by the
rules of `year` below.

`text` is the query's slice `query[start:end]` (offsets in code points), with
control and format characters other than tabs and line breaks shown as spaces.
Signals are in query order. A stretch of text is reported once, under the most
specific kind, in this order:

- `date`: "2014-03-02", "2014/03/02", "4 March 2014", "4th of March, 2014",
  "March 4, 2014", "02/03/2014" (this form only from 1900: "8.1.1424" is a
  version), "March 4, 1803", "1803-03-04". Fields `year`, `date` (ISO; null
  when a numeric day/month order is ambiguous, as in "02/03/2014").
- `month_year`: "March 2014", "Mar. 2014", "March of 2014", "May 1790",
  "2014-03", "2014/03", "03/2014" (the numeric forms only from 1900). Fields
  `year`, `month`. A month without a year ("in March") is not a signal.
  "2010-11" reads as November 2010.
- `century`: "the 1800s", "the 1800's", "the 19th century", "the nineteenth
  century", "19th-century", "the eighteen hundreds", from the 11th century
  (1000s) to the 21st. Fields `first`, `last`: "the 1800s" and "the 19th
  century" are 1800..1899 (years, not the strict 1801..1900). "early", "mid"
  and "late" before it name its first, middle and last third ("late 19th
  century" is 1866..1899). "the 1000s" to "the 1900s" are centuries, "the
  2000s" is the decade 2000..2009. Without "the" or a modifier and followed
  by "of" such a number is a count ("1000s of files"), not a century.
- `decade`: "1990s", "1990's", "the 90s", "the '90s", "90's", "mid-90s",
  "the late eighties", "nineties", "noughties", "the 2010s", "the 1790s",
  "the eighteen-nineties", "the eighteen nineties". Fields `first`, `last`
  (the decade's first and last year). A two-digit decade is the latest one
  that has begun ("20s" in 2026 is the 2020s, "30s" the 1930s). After a
  possessive ("my 30s", "in her nineties") it is an age, not a decade.
- `year`: a standalone 4-digit number ("2014", "in 2009?", "1999-2003" gives
  two). Not inside a longer number or word ("120145", "v2014"), not a decimal
  or time ("3.2014", "1,2014"), not money ("$2014"). From 1900 to next year
  a number is a year unless a unit or count follows it with nothing year-like
  before ("1950 km", "2000 years ago"). From 1000 to 1899 it is a year only
  in a year-like context: directly after in, since, from, by, until, till, of,
  around, circa, c., ca., before, after, during, between, "year" or "AD"
  ("in 1803", "the year 1066", "c. 1790"), directly before "AD" or "CE", or
  continuing a range from a year ("from 1790 to 1803", "in 1790-1803"); and
  never before a unit or count ("of 1500 people", "by 1850 km", "1200
  pages", "1024-bit"), nor after a quantity word and "of", "around" or "by"
  ("a total of 1500", "multiplied by 1000", "instead of 1024"), nor in a
  range of counts ("from 1024 to 16", "from 1024 to 4096"). A range runs
  forward: in "CVE-2022-1271" 1271 is not a year. "BC" or "BCE" after a
  number makes it a year before the era, outside the range: no signal. Field
  `year`.
- `relative`: "last year", "the year before last", "last month", "last week",
  "N days/weeks/months/years/decades ago" with N a number, "a", "an",
  "one".."twelve", "a couple of", "a few", "several", "many", or no N at all
  ("years ago"). Fields `unit`, `amount`, `approximate` (true for vague
  amounts), `days_ago`, `year` (the year it names; null when approximate or
  before the year 1000, as in "2000 years ago").
- `cue`: each configured cue phrase, matched case-insensitively on word
  boundaries, any run of whitespace matching a space. Field `cue` (the phrase
  as configured), `anchored` ("time", "present" or null; see below).

Opening the archive. Every dated signal has a first day (a year's 1 January,
a month's 1st, a decade's or century's first 1 January, a date itself; for a
relative expression today minus the amount, or the first day of the calendar
year or month that "last year", "the year before last" and "last month"
name). It
opens the archive when that first day is at least `archive_after_days` before
`today`, because part of what it names is then old enough to be archival.
Rules on top of that:

- The current-year rule: a bare `year` equal to the current year (or later)
  never opens the archive, whatever the threshold; it is still a signal.
  Months and dates of the current year follow the threshold alone.
- Future dates never open the archive.
- A cue opens the archive, unless it is anchored: directly followed (only
  spaces or a comma between) by a date, month-year, decade, century or year
  signal, the cue reads through that time, and that signal alone decides. So
  "as of 2026" with today in 2026 is a signal (cue and year) that does not
  open the archive, while "as of 2019" opens it through the year. A cue directly
  followed by "now", "today", "currently", "present" or "this year/month/week"
  is anchored to the present and does not open it either ("as of now").

`years` is the sorted set of years the signals name: a decade or a century
contributes its first and last year; approximate relative expressions and cues
contribute none.

Robustness: only the first SCAN_CHARS characters are scanned (`truncated`
says so); control and format characters other than tabs and line breaks count
as spaces; only ASCII digits are read; every pattern is linear (no nested repetition), so hostile input
costs little. The query is data: nothing in it is executed.
"""

import calendar
import datetime
import re
import unicodedata

"""English month names for the date readers (stdlib only): banding and temporal."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip

#: A regex group matching any month name or abbreviation, with an optional dot.
MONTH_PATTERN = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"

SCAN_CHARS = 2000
MAX_CUES = 200
MAX_CUE_CHARS = 100

_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_VAGUE_AMOUNTS = {"a couple of": 2, "a few": 3, "several": 3, "many": 5}
_DECADE_WORDS = {
    "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
    "seventies": 70, "eighties": 80, "nineties": 90, "noughties": 0, "aughts": 0,
}  # fmt: skip
# The first two digits of a year in words: "the eighteen-nineties", "the eighteen hundreds".
_HUNDREDS_WORDS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_CENTURY_WORDS = {
    "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "twenty-first": 21, "twenty first": 21,
}  # fmt: skip
MIN_YEAR = 1000
_UNIT_DAYS = {"day": 1, "week": 7}
_KEPT = "\t\n\r\f\v"

# Boundaries: numbers use ASCII letters and digits (so "2014\u5e74" is a year);
# words use Unicode word characters.
_NB = r"(?<![0-9A-Za-z_])"
_NA = r"(?![0-9A-Za-z_])"
_NOT_AFTER_NUMBER = r"(?<![0-9][.,:/])"
_NOT_BEFORE_NUMBER = r"(?![.,:/-][0-9])"
_YEAR = r"((?:19|20)[0-9]{2})"  # a year in a numeric form ("2014-03", "03/2014", "02/03/2014")
_ANY_YEAR = r"(1[0-9]{3}|20[0-9]{2})"  # with a month name, or ISO with a day: 1000..2099
_APOSTROPHE = "['\u2018\u2019`]"
_ORDINAL = r"(?:st|nd|rd|th)?"

_ISO_DATE = re.compile(
    _NB + _NOT_AFTER_NUMBER + _ANY_YEAR + r"([-/.])([0-9]{1,2})\2([0-9]{1,2})" + _NA + _NOT_BEFORE_NUMBER
)
_NUMERIC_DATE = re.compile(
    _NB + _NOT_AFTER_NUMBER + r"([0-9]{1,2})([-/.])([0-9]{1,2})\2" + _YEAR + _NA + _NOT_BEFORE_NUMBER
)
_DAY_MONTH_YEAR = re.compile(
    _NB + r"([0-9]{1,2})" + _ORDINAL + r"(?:\s+of)?\s+" + MONTH_PATTERN + r",?\s+" + _ANY_YEAR + _NA, re.I
)
_MONTH_DAY_YEAR = re.compile(
    r"(?<!\w)" + MONTH_PATTERN + r"\s+([0-9]{1,2})" + _ORDINAL + r",?\s+" + _ANY_YEAR + _NA, re.I
)
_MONTH_NAME_YEAR = re.compile(
    r"(?<!\w)" + MONTH_PATTERN + r"(?:\s*,\s*|\s+of\s+|\s+)" + _ANY_YEAR + _NA + _NOT_BEFORE_NUMBER, re.I
)
_YEAR_MONTH = re.compile(_NB + _NOT_AFTER_NUMBER + _YEAR + r"[-/]([0-9]{2})" + _NA + _NOT_BEFORE_NUMBER)
_MONTH_SLASH_YEAR = re.compile(
    _NB + r"(?<![0-9A-Za-z_][-/.])([0-9]{1,2})/" + _YEAR + _NA + _NOT_BEFORE_NUMBER
)
_THE_MOD = r"(?<!\w)(?:(?P<the>the)\s+)?(?:(?P<mod>early|mid|late)(?:-|\s+)?)?"
_DECADE = re.compile(
    _THE_MOD + r"(?:" + _NB + r"(?P<full>1[0-9]{2}0|20[0-9]0)" + _APOSTROPHE + r"?s"
    r"|" + _APOSTROPHE + r"?" + _NB + r"(?P<short>[0-9]0)" + _APOSTROPHE + r"?s"
    r"|(?:(?P<hundreds>" + "|".join(_HUNDREDS_WORDS) + r")(?:-|\s+))?"
    r"(?P<word>" + "|".join(_DECADE_WORDS) + r"))(?!\w)",
    re.I,
)
_CENTURY = re.compile(
    _THE_MOD + r"(?:" + _NB + r"(?P<number>[0-9]{1,2})(?:st|nd|rd|th)"
    r"|(?P<word>" + "|".join(w.replace(" ", r"\s+") for w in _CENTURY_WORDS) + r"))"
    r"(?:-|\s+)century(?!\w)",
    re.I,
)
_HUNDREDS = re.compile(
    _THE_MOD + r"(?P<word>" + "|".join(_HUNDREDS_WORDS) + r")(?:-|\s+)hundreds(?!\w)", re.I
)
_POSSESSIVE_BEFORE = re.compile(r"(?:^|\W)(?:my|your|his|her|our|their|whose)\s+$", re.I)
_BARE_YEAR = re.compile(
    r"(?<![$\u20ac\u00a3\u00a5#])" + _NB + _NOT_AFTER_NUMBER + r"([0-9]{4})" + _NA + r"(?![.,:][0-9])"
)
# What makes a bare number a year (see `year` in the module docstring), read next to it.
_YEAR_WORD_BEFORE = re.compile(
    r"(?:^|[^\w.])(?:(?:in|since|from|by|until|till|of|around|circa|before|after|during|between|year"
    r"|ad|a\.d\.)\s+|(?:c|ca)\.\s*)$",
    re.I,
)
_QUANTITY_BEFORE = re.compile(
    r"(?<!\w)(?:(?:total|sum|population|number|count|maximum|minimum|max|min|average|batch|crowd|group"
    r"|team|budget|price|cost|salary|score|height|depth|length|distance|weight|capacity|balance"
    r"|amount|value|size|rate|speed|speedup|factor|ratio|limit|threshold|timeout|power|powers|base|offset"
    r"|multiple|multiplier|default|index|port)\s+(?:of|around|by)"
    r"|(?:multipl|divid|increas|decreas|reduc|grow|grew|rais|scal)\w*\s+by|instead\s+of|out\s+of)\s+$",
    re.I,
)
_RANGE = r"\s*(?:-|\u2013|\u2014|to|and|or|through|until|till)\s*"
_RANGE_BEFORE = re.compile(r"(?<![0-9A-Za-z_])([0-9]{4})" + _RANGE + "$", re.I)
_RANGE_AFTER = re.compile(_RANGE + r"([0-9]+)(?![0-9A-Za-z_])", re.I)
_ERA_AFTER = re.compile(r"\s*(?:ad|a\.d\.|ce|c\.e\.)(?!\w)", re.I)
_BEFORE_ERA_AFTER = re.compile(r"\s*(?:bc|b\.c\.|bce|b\.c\.e\.)(?!\w)", re.I)
_COUNT_AFTER = re.compile(
    r"(?:\s*|-)(?:%|\u00b0|(?:people|persons?|men|women|children|kids|soldiers|troops|students|employees"
    r"|workers|users|members|visitors|residents|votes|km|kms|kilomet(?:er|re)s?|miles?|mi|m|met(?:er|re)s?"
    r"|cm|mm|feet|foot|ft|inch(?:es)?|yards?|kg|kgs|kilos?|kilograms?|grams?|lbs?|pounds?|tons?|tonnes?"
    r"|oz|ounces?|lit(?:er|re)s?|ml|gallons?|acres?|hectares?|dollars?|euros?|usd|eur|gbp|chf|yen"
    r"|pages?|pp|words?|characters?|chars|lines?|rows?|items?|units?|pieces?|copies|files?|times"
    r"|steps|calories|kcal|cal|hp|rpm|mph|kph|kmh|hours?|hrs?|minutes?|mins?|seconds?|secs?|days?"
    r"|weeks?|months?|years?|decades?|centuries|points?|pts|dpi|px|kb|mb|gb|tb|ms|hz|khz|mhz|ghz"
    r"|kw|kwh|degrees?|bits?|bytes?|digits?|operations?|ops|cycles?|iterations?|entries|records?"
    r"|requests?|samples?|threads?|connections?|nodes?|cores?|tokens?|frames?|packets?|calls?)(?!\w))",
    re.I,
)
_LOOK = 40  # characters read on either side of a bare number for its context
_OF_AFTER = re.compile(r"\s+of(?!\w)")
_AMOUNT = (
    r"(?P<amount>[0-9]{1,4}|"
    + "|".join(a.replace(" ", r"\s+") for a in _VAGUE_AMOUNTS)
    + "|"
    + "|".join(_NUMBER_WORDS)
    + ")"
)
_AGO = re.compile(r"(?<!\w)(?:" + _AMOUNT + r"\s+)?(?P<unit>day|week|month|year|decade)s?\s+ago(?!\w)", re.I)
_LAST = re.compile(
    r"(?<!\w)(?:(?P<before>the\s+year\s+before\s+last)|last\s+(?P<unit>year|month|week))(?!\w)", re.I
)
_PRESENT_AFTER = re.compile(r"\s*,?\s*(?:now|today|currently|present|this\s+(?:year|month|week))(?!\w)", re.I)
_ANCHOR_GAP = re.compile(r"\s*,?\s*")

def _clean(text):
    """Control, format and other non-printing characters become spaces (offsets kept);
    tabs and line breaks stay as they are."""
    return "".join(" " if c not in _KEPT and unicodedata.category(c)[0] == "C" else c for c in text)

def _year_ok(year, today):
    return MIN_YEAR <= year <= today.year + 1

def _reads_as_year(text, start, end, year, today, depth=0):
    """Whether the bare 4-digit number text[start:end] (= year) is a year by its context (see
    `year` in the module docstring). A range continues from a number that is itself a year; a
    chain of ranges is followed three numbers back at most."""
    if not _year_ok(year, today):
        return False
    back, ahead = max(0, start - _LOOK), end + _LOOK  # searched in place: boundaries stay true
    if _BEFORE_ERA_AFTER.match(text, end, ahead):
        return False
    said = bool(
        (_YEAR_WORD_BEFORE.search(text, back, start) and not _QUANTITY_BEFORE.search(text, back, start))
        or _ERA_AFTER.match(text, end, ahead)
    )
    if not said and depth < 3:
        m = _RANGE_BEFORE.search(text, back, start)
        if m and int(m.group(1)) < year:  # a range runs forward: "2022-1271" is an identifier
            said = _reads_as_year(text, m.start(1), m.end(1), int(m.group(1)), today, depth + 1)
    counted = bool(_COUNT_AFTER.match(text, end, ahead))
    if year >= 1900:
        return said or not counted
    m = _RANGE_AFTER.match(text, end, ahead)
    if m and not counted:  # "from 1024 to 16", "from 1040 to 1904 bytes": a range of counts
        partner = m.group(1)
        counted = not (len(partner) == 4 and year < int(partner) and _year_ok(int(partner), today)) or bool(
            _COUNT_AFTER.match(text, m.end(), ahead)
        )
    return said and not counted

def _minus_months(day, months):
    """The same day `months` earlier (the month's last day where it is shorter)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    if year < 1:
        return datetime.date.min
    return datetime.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))

def _opens(first_day, today, archive_after_days):
    return first_day <= today and (today - first_day).days >= archive_after_days

def _date(year, month, day):
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None

# -- one handler per pattern: match -> signal fields, or None to skip the match -----------

def _iso_date(m, text, today, days):
    day = _date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
    if not day:
        return None
    return {
        "kind": "date",
        "year": day.year,
        "date": day.isoformat(),
        "opens_archive": _opens(day, today, days),
    }

def _numeric_date(m, text, today, days):
    a, b, year = int(m.group(1)), int(m.group(3)), int(m.group(4))
    candidates = {d for d in (_date(year, b, a), _date(year, a, b)) if d}
    if not candidates:
        return None
    earliest = min(candidates)
    exact = earliest.isoformat() if len(candidates) == 1 else None
    return {"kind": "date", "year": year, "date": exact, "opens_archive": _opens(earliest, today, days)}

def _named_date(day_group, month_group, year_group):
    def handler(m, text, today, days):
        day = _date(int(m.group(year_group)), MONTHS[m.group(month_group).lower()], int(m.group(day_group)))
        if not day:
            return None
        return {
            "kind": "date",
            "year": day.year,
            "date": day.isoformat(),
            "opens_archive": _opens(day, today, days),
        }

    return handler

def _month_year(year_group, month_group, named):
    def handler(m, text, today, days):
        year = int(m.group(year_group))
        month = MONTHS[m.group(month_group).lower()] if named else int(m.group(month_group))
        if not 1 <= month <= 12:
            return None
        first = datetime.date(year, month, 1)
        return {
            "kind": "month_year",
            "year": year,
            "month": month,
            "opens_archive": _opens(first, today, days),
        }

    return handler

def _century_span(first, m, today, days):
    """A century's signal from its first year; "early", "mid" or "late" narrow it to a third."""
    mod = (m.group("mod") or "").lower()
    first, last = {
        "early": (first, first + 32),
        "mid": (first + 33, first + 65),
        "late": (first + 66, first + 99),
    }.get(mod, (first, first + 99))
    return {
        "kind": "century",
        "first": first,
        "last": last,
        "opens_archive": _opens(datetime.date(first, 1, 1), today, days),
    }

def _decade(m, text, today, days):
    if m.group("full"):
        first = int(m.group("full"))
        if first % 100 == 0 and first < 2000:  # "the 1800s": the century
            if not (m.group("the") or m.group("mod")) and _OF_AFTER.match(text, m.end()):
                return None  # "1000s of files": a count
            return _century_span(first, m, today, days)
    elif m.group("hundreds"):
        first = _HUNDREDS_WORDS[m.group("hundreds").lower()] * 100 + _DECADE_WORDS[m.group("word").lower()]
    else:
        short = int(m.group("short")) if m.group("short") else _DECADE_WORDS[m.group("word").lower()]
        first = 2000 + short if 2000 + short <= today.year else 1900 + short
        if not m.group("the") and _POSSESSIVE_BEFORE.search(text[max(0, m.start() - 12) : m.start()]):
            return None  # "my 30s", "in her nineties": an age
    return {
        "kind": "decade",
        "first": first,
        "last": first + 9,
        "opens_archive": _opens(datetime.date(first, 1, 1), today, days),
    }

def _century(m, text, today, days):
    if m.group("number"):
        number = int(m.group("number"))
    else:
        number = _CENTURY_WORDS[" ".join(m.group("word").lower().split())]
    if not 11 <= number <= 21:
        return None  # before the year 1000, or a century still to come
    return _century_span((number - 1) * 100, m, today, days)

def _hundreds(m, text, today, days):
    return _century_span(_HUNDREDS_WORDS[m.group("word").lower()] * 100, m, today, days)

def _bare_year(m, text, today, days):
    year = int(m.group(1))
    if not _reads_as_year(text, m.start(), m.end(), year, today):
        return None
    opens = year < today.year and _opens(datetime.date(year, 1, 1), today, days)
    return {"kind": "year", "year": year, "opens_archive": opens}

def _ago(m, text, today, days):
    unit = m.group("unit").lower()
    raw = " ".join((m.group("amount") or "").lower().split())
    approximate = not raw or raw in _VAGUE_AMOUNTS
    if not raw:
        amount = 2  # "years ago": at least two
    elif raw.isdigit():
        amount = int(raw)
    else:
        amount = _VAGUE_AMOUNTS.get(raw) or _NUMBER_WORDS[raw]
    if unit in _UNIT_DAYS:
        back = min(amount * _UNIT_DAYS[unit], (today - datetime.date.min).days)
        day = today - datetime.timedelta(days=back)
    else:
        day = _minus_months(today, amount * {"month": 1, "year": 12, "decade": 120}[unit])
    return {
        "kind": "relative",
        "unit": unit,
        "amount": amount,
        "approximate": approximate,
        "days_ago": (today - day).days,
        "year": None if approximate or day.year < MIN_YEAR else day.year,
        "opens_archive": _opens(day, today, days),
    }

def _last(m, text, today, days):
    if m.group("before"):
        unit, amount, day = "year", 2, datetime.date(today.year - 2, 1, 1)
    else:
        unit, amount = m.group("unit").lower(), 1
        if unit == "year":
            day = datetime.date(today.year - 1, 1, 1)
        elif unit == "month":
            day = _minus_months(today.replace(day=1), 1)
        else:
            day = today - datetime.timedelta(days=7)
    return {
        "kind": "relative",
        "unit": unit,
        "amount": amount,
        "approximate": False,
        "days_ago": (today - day).days,
        "year": day.year,
        "opens_archive": _opens(day, today, days),
    }

_PATTERNS = [
    (_ISO_DATE, _iso_date),
    (_DAY_MONTH_YEAR, _named_date(1, 2, 3)),
    (_MONTH_DAY_YEAR, _named_date(2, 1, 3)),
    (_NUMERIC_DATE, _numeric_date),
    (_MONTH_NAME_YEAR, _month_year(2, 1, named=True)),
    (_YEAR_MONTH, _month_year(1, 2, named=False)),
    (_MONTH_SLASH_YEAR, _month_year(2, 1, named=False)),
    (_CENTURY, _century),
    (_HUNDREDS, _hundreds),
    (_DECADE, _decade),
    (_BARE_YEAR, _bare_year),
    (_LAST, _last),
    (_AGO, _ago),
]

def cue_pattern(cues):
    """One regex for the configured cue phrases, longest first, and the phrase for each
    normalised spelling. Blank phrases are skipped."""
    if not isinstance(cues, list) or not all(isinstance(c, str) for c in cues):
        raise ValueError("temporal cues must be a list of strings")
    if len(cues) > MAX_CUES:
        raise ValueError(f"at most {MAX_CUES} temporal cues, not {len(cues)}")
    phrases = {}
    for cue in cues:
        words = cue.split()
        if not words:
            continue
        if len(cue) > MAX_CUE_CHARS:
            raise ValueError(f"temporal cue longer than {MAX_CUE_CHARS} characters: {cue[:40]!r}...")
        phrases.setdefault(" ".join(words).lower(), cue.strip())
    if not phrases:
        return None, {}
    alternatives = [
        r"\s+".join(re.escape(w) for w in key.split()) for key in sorted(phrases, key=lambda k: (-len(k), k))
    ]
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.I), phrases

def detect(query, cues, today, archive_after_days=365):
    """The temporal signals of `query` (see the module docstring)."""
    if (
        not isinstance(archive_after_days, int)
        or isinstance(archive_after_days, bool)
        or archive_after_days < 0
    ):
        raise ValueError(f"archive_after_days must be a non-negative integer, not {archive_after_days!r}")
    query = query or ""
    text = _clean(query[:SCAN_CHARS])
    claimed = []

    def free(start, end):
        return all(end <= s or start >= e for s, e in claimed)

    signals = []
    for pattern, handler in _PATTERNS:
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            found = handler(m, text, today, archive_after_days)
            if found:
                claimed.append((m.start(), m.end()))
                kind = found.pop("kind")
                signals.append(
                    {"kind": kind, "text": m.group(0), "start": m.start(), "end": m.end(), **found}
                )

    pattern, phrases = cue_pattern(cues)
    cue_signals = []
    if pattern:
        for m in pattern.finditer(text):
            if free(m.start(), m.end()):
                key = " ".join(m.group(0).split()).lower()
                cue = phrases.get(key, key)
                cue_signals.append(
                    {"kind": "cue", "text": m.group(0), "start": m.start(), "end": m.end(), "cue": cue}
                )

    starts = {s["start"] for s in signals if s["kind"] in ("date", "month_year", "decade", "century", "year")}
    for signal in cue_signals:
        gap = _ANCHOR_GAP.match(text, signal["end"]).end()
        if gap in starts:
            signal["anchored"] = "time"
        elif _PRESENT_AFTER.match(text, signal["end"]):
            signal["anchored"] = "present"
        else:
            signal["anchored"] = None
        signal["opens_archive"] = signal["anchored"] is None
    signals = sorted(signals + cue_signals, key=lambda s: s["start"])

    years = set()
    for s in signals:
        if s["kind"] in ("decade", "century"):
            years.update((s["first"], s["last"]))
        elif s.get("year") is not None:
            years.add(s["year"])
    return {
        "signal": bool(signals),
        "opens_archive": any(s["opens_archive"] for s in signals),
        "years": sorted(years),
        "truncated": len(query) > SCAN_CHARS,
        "signals": signals,
    }
import datetime
import json

if cues is None:
    raise ValueError("cues is null: is the setting retrieval.temporal_cues missing?")
if archive_after_days is None:
    raise ValueError("archive_after_days is null: is the setting retrieval.archive_after_days missing?")
if as_of is None:
    raise ValueError("as_of must not be null")
return json.dumps(detect(query, json.loads(cues), datetime.date.fromisoformat(as_of), archive_after_days))
$_$;

ALTER FUNCTION exo_private.detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer) OWNER TO exo_owner;

--
-- Name: FUNCTION detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer) IS 'Temporal signals of a query (plpy/temporal.py) for the given cue phrases, day and archive threshold.';

--
-- Name: drop_unmentioned_entities(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.drop_unmentioned_entities() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $_$
declare
    orphans bigint[];
    grp record;
    graph name;
    vertex_ids ag_catalog.graphid[];
begin
    -- The owner's entity stands without mentions (seed_owner); every other one exists
    -- because a window mentions it. The candidates are locked first: a merge that is adding
    -- a mention of one holds it (the foreign key check) until it commits, and the count
    -- below, a statement later, sees that mention; a merge after the lock waits, then fails
    -- its foreign key check and its job is retried.
    perform 1
    from exo_private.entities e
    where e.id in (select distinct o.entity_id from old_mentions o) and not e.is_owner
    order by e.id
    for update;
    select coalesce(array_agg(e.id), '{}') into orphans
    from exo_private.entities e
    where e.id in (select distinct o.entity_id from old_mentions o)
      and not e.is_owner
      and not exists (select 1 from exo_private.mentions m where m.entity_id = e.id);
    if orphans = '{}' then
        return null;
    end if;
    -- Their vertices, and the edges at them, leave the AGE graph in the same transaction.
    for grp in
        select e.workspace, e.type, l.id as label_id, array_agg(e.id) as entity_ids
        from exo_private.entities e
        join ag_catalog.ag_graph g on g.name = exo_private.graph_name(e.workspace)
        join ag_catalog.ag_label l on l.graph = g.graphid and l.name = e.type::text and l.kind = 'v'
        where e.id = any(orphans)
        group by e.workspace, e.type, l.id
    loop
        graph := exo_private.graph_name(grp.workspace);
        vertex_ids := array(select ag_catalog._graphid(grp.label_id, x) from unnest(grp.entity_ids) x);
        execute format('delete from %I._ag_label_edge x where x.start_id = any($1) or x.end_id = any($1)', graph)
            using vertex_ids;
        execute format('delete from %I.%I v where v.id = any($1)', graph, grp.type) using vertex_ids;
    end loop;
    -- Their relations go with them (on delete cascade).
    delete from exo_private.entities e where e.id = any(orphans);
    return null;
end
$_$;

ALTER FUNCTION exo_private.drop_unmentioned_entities() OWNER TO exo_owner;

--
-- Name: FUNCTION drop_unmentioned_entities(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.drop_unmentioned_entities() IS 'Trigger after a delete from mentions (a window re-made, a document deleted or re-extracted): remove the entities, other than the owner, that no mention is left for, their relations, and their vertices and edges in the workspace''s AGE graph.';

--
-- Name: embed_text(text, jsonb, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.embed_text(input text, endpoint jsonb, calls_per_minute integer) RETURNS jsonb
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
"""A per-session call budget for model endpoints the reader can reach (stdlib only).

Inlined into plpython3u functions (`# exo:include budget`). The store is plpython's
GD, a dict that lives as long as the database session and is shared by every
plpython function in it, so one budget covers `exo.embed_query` and the search's own
model calls alike. A sliding window: at most `limit` calls in any `window_s` seconds.
"""

import time

def allow(store, key, limit, window_s=60.0, now=None):
    """Whether one more call of kind `key` fits the budget; counts it when it does.

    `limit` <= 0 refuses every call (an owner can switch a path off)."""
    now = time.monotonic() if now is None else now
    calls = store.setdefault("exo_budget", {}).setdefault(key, [])
    while calls and calls[0] <= now - window_s:
        calls.pop(0)
    if len(calls) >= limit:
        return False
    calls.append(now)
    return True
"""The one HTTP client every model call goes through: OpenAI-compatible chat and embeddings,
and llama.cpp's /v1/rerank (query + documents -> one relevance score per document).

Standard library only and free of exocortex imports, so the same file can be
inlined into a plpython3u function body. Every failure is a ModelError whose
``error_class`` the worker records and decides retries on; this module never
retries.

    endpoint_down   connection refused or reset, unknown host, TLS failure
    timeout         no answer within the endpoint's timeout_s
    http_5xx        the server answered 5xx (ServerError.status)
    http_4xx        the server rejected the request (ClientError.status, its message)
    bad_response    a 2xx body that is not JSON or lacks the expected fields
"""

import http.client
import ipaddress
import json
import math
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT_S = 30.0
_READ_CHUNK = 64 * 1024
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_DEFAULT = urllib.request.build_opener()

class ModelError(Exception):
    """A model call failed; ``error_class`` says how."""

    error_class = "model_error"

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.url = url

class EndpointDown(ModelError):
    error_class = "endpoint_down"

class Timeout(ModelError):
    error_class = "timeout"

class BadResponse(ModelError):
    error_class = "bad_response"

class _HTTPStatusError(ModelError):
    def __init__(self, message: str, url: str | None = None, status: int = 0):
        super().__init__(message, url)
        self.status = status

class ServerError(_HTTPStatusError):
    error_class = "http_5xx"

class ClientError(_HTTPStatusError):
    error_class = "http_4xx"

@dataclass(frozen=True)
class Endpoint:
    url: str
    """Base URL of the OpenAI-compatible API, such as http://127.0.0.1:54330/v1."""
    model: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra: dict[str, Any] = field(default_factory=dict)
    """The setting's other keys (dimensions, response_format, ...)."""

    @classmethod
    def from_setting(cls, value: dict[str, Any]) -> Endpoint:
        """An endpoint from a ``models.*`` setting: {"url", "model", "timeout_s", ...}."""
        if not isinstance(value, dict):
            raise ValueError(f"a model setting must be a JSON object, got {value!r}")
        url, model = value.get("url"), value.get("model")
        if not isinstance(url, str) or not url:
            raise ValueError("the model setting has no url (null means no endpoint is configured)")
        if not isinstance(model, str) or not model:
            raise ValueError(f"the model setting for {url} has no model name")
        timeout = value.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"timeout_s of {url} must be a positive number, got {timeout!r}")
        extra = {k: v for k, v in value.items() if k not in {"url", "model", "timeout_s"}}
        return cls(url.rstrip("/"), model, float(timeout), extra)

@dataclass(frozen=True)
class ChatReply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int

# -- the calls ----------------------------------------------------------------------------

def embed(endpoint: Endpoint, texts: list[str]) -> list[list[float]]:
    """One vector per text, in the order of ``texts``."""
    if not texts:
        return []
    url = f"{endpoint.url}/embeddings"
    body = _post_json(url, {"model": endpoint.model, "input": list(texts)}, endpoint.timeout_s)
    data = body.get("data")
    if not isinstance(data, list):
        raise BadResponse(f"{url} answered without a data list", url)
    if len(data) != len(texts):
        raise BadResponse(f"{url} returned {len(data)} embeddings for {len(texts)} inputs", url)
    vectors: list[list[float] | None] = [None] * len(texts)
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < len(texts) or vectors[index] is not None:
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not isinstance(vector, list) or not vector or not all(_is_number(x) for x in vector):
            raise BadResponse(f"{url} returned an embedding that is not a list of numbers", url)
        vectors[index] = [float(x) for x in vector]
    sizes = {len(v) for v in vectors if v is not None}
    expected = endpoint.extra.get("dimensions")
    if len(sizes) != 1 or (isinstance(expected, int) and sizes != {expected}):
        want = f"; the setting says {expected}" if isinstance(expected, int) else ""
        raise BadResponse(f"{url} returned embeddings of sizes {sorted(sizes)}{want}", url)
    return vectors  # type: ignore[return-value]

def rerank(endpoint: Endpoint, query: str, documents: list[str]) -> list[float]:
    """One relevance score per document, in the order of ``documents`` (higher is more relevant).

    Speaks llama.cpp's /v1/rerank: POST {model, query, documents, top_n} and read
    {"results": [{"index", "relevance_score"}, ...]} in any order. A score is needed
    for every document, so the request asks for ``top_n = len(documents)`` and a
    reply that leaves any document out is a BadResponse.
    """
    if not documents:
        return []
    url = f"{endpoint.url}/rerank"
    payload = {
        "model": endpoint.model,
        "query": query,
        "documents": list(documents),
        "top_n": len(documents),
    }
    body = _post_json(url, payload, endpoint.timeout_s)
    results = body.get("results")
    if not isinstance(results, list):
        raise BadResponse(f"{url} answered without a results list", url)
    scores: list[float | None] = [None] * len(documents)
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score") if isinstance(item, dict) else None
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(documents)
            or scores[index] is not None
        ):
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not _is_number(score):
            raise BadResponse(f"{url} returned a relevance_score that is not a finite number: {score!r}", url)
        scores[index] = float(score)  # type: ignore[arg-type]
    if len(results) != len(documents):
        raise BadResponse(f"{url} returned {len(results)} scores for {len(documents)} documents", url)
    return scores  # type: ignore[return-value]

def chat(
    endpoint: Endpoint,
    messages: list[dict[str, Any]],
    *,
    max_tokens: int,
    response_format: dict[str, Any] | None = None,
    temperature: float = 0.0,
) -> ChatReply:
    """One non-streaming chat completion.

    ``response_format`` (such as a json_schema) is left out when the endpoint's
    setting says ``"response_format": false``, for servers that misbehave with it.
    """
    url = f"{endpoint.url}/chat/completions"
    payload: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": False,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    if response_format is not None and endpoint.extra.get("response_format", True) is not False:
        payload["response_format"] = response_format
    body = _post_json(url, payload, endpoint.timeout_s)
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
        finish_reason = choice.get("finish_reason") or "unknown"
    except (KeyError, IndexError, TypeError):
        raise BadResponse(f"{url} answered without choices[0].message.content", url) from None
    if not isinstance(content, str):
        raise BadResponse(f"{url} answered with a {type(content).__name__} message content", url)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return ChatReply(
        content=content,
        finish_reason=str(finish_reason),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )

def embed_one(setting: dict[str, Any], text: str) -> dict[str, Any]:
    """One text's embedding from a ``models.embeddings``-style setting, never raising for a
    model failure: {vector (pgvector text), model, dimensions, ms} or {error_class, error, ms}.
    What the database uses for a query's vector."""
    began = time.monotonic()
    try:
        target = Endpoint.from_setting(setting)
        (vector,) = embed(target, [text])
    except (ModelError, ValueError) as exc:
        return {
            "error_class": getattr(exc, "error_class", "bad_setting"),
            "error": str(exc)[:500],
            "ms": round((time.monotonic() - began) * 1000, 1),
        }
    return {
        "vector": "[" + ",".join(repr(x) for x in vector) + "]",
        "model": target.model,
        "dimensions": len(vector),
        "ms": round((time.monotonic() - began) * 1000, 1),
    }

def probe(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> bool:
    """True when the endpoint answers a one-token request with 2xx (the body is not checked)."""
    return probe_error(endpoint, kind, timeout_s=timeout_s) is None

def probe_error(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> ModelError | None:
    """How a one-token request to the endpoint failed, or None when it answered 2xx. A Timeout
    means the server took the request but did not answer in time: busy, or hung."""
    if kind == "chat":
        url = f"{endpoint.url}/chat/completions"
        payload: dict[str, Any] = {
            "model": endpoint.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "temperature": 0.0,
            "chat_template_kwargs": {"enable_thinking": False},
        }
    elif kind == "embeddings":
        url = f"{endpoint.url}/embeddings"
        payload = {"model": endpoint.model, "input": ["ping"]}
    else:
        raise ValueError(f"kind must be 'chat' or 'embeddings', got {kind!r}")
    try:
        _request(url, payload, endpoint.timeout_s if timeout_s is None else timeout_s)
    except ModelError as exc:
        return exc
    return None

# -- HTTP ---------------------------------------------------------------------------------

def _post_json(url: str, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    raw = _request(url, payload, timeout_s)
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadResponse(f"{url} answered with a body that is not JSON: {_snippet(raw)}", url) from None
    if not isinstance(body, dict):
        raise BadResponse(f"{url} answered with JSON that is not an object: {_snippet(raw)}", url)
    return body

def _request(url: str, payload: dict[str, Any], timeout_s: float) -> bytes:
    """POST JSON and return the 2xx body; raise the matching ModelError otherwise.

    ``timeout_s`` bounds the whole call: it is the socket timeout for connecting
    and for the wait for the answer (a non-streaming reply arrives only when the
    generation is done), and the deadline checked while the body is read.
    """
    deadline = time.monotonic() + timeout_s
    data = json.dumps(payload).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    opener = _NO_PROXY if _is_loopback(url) else _DEFAULT
    try:
        with opener.open(request, timeout=timeout_s) as response:
            status = response.status
            chunks = []
            while chunk := response.read1(_READ_CHUNK):  # read1: returns what has arrived
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise TimeoutError
            raw = b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise _status_error(url, exc.code, _read_error_body(exc)) from None
    except urllib.error.URLError as exc:
        raise _transport_error(url, exc.reason, timeout_s) from None
    except (OSError, http.client.HTTPException) as exc:
        raise _transport_error(url, exc, timeout_s) from None
    if time.monotonic() > deadline:
        raise Timeout(f"{url} took longer than {timeout_s:g} s", url)
    if not 200 <= status < 300:
        raise BadResponse(f"{url} answered HTTP {status}", url)
    return raw

def _transport_error(url: str, reason: object, timeout_s: float) -> ModelError:
    if isinstance(reason, TimeoutError):  # socket.timeout is TimeoutError
        return Timeout(f"{url} did not answer within {timeout_s:g} s", url)
    if isinstance(reason, http.client.IncompleteRead):
        return EndpointDown(f"{url} closed the connection in the middle of its answer", url)
    if isinstance(reason, http.client.RemoteDisconnected | ConnectionError):
        return EndpointDown(f"{url} closed the connection: {reason}", url)
    if isinstance(reason, http.client.HTTPException):
        return BadResponse(f"{url} answered with malformed HTTP: {reason!r}", url)
    if isinstance(reason, socket.gaierror):
        return EndpointDown(f"{url}: unknown host ({reason})", url)
    if isinstance(reason, ssl.SSLError):
        return EndpointDown(f"{url}: TLS failed ({reason})", url)
    if isinstance(reason, OSError):
        return EndpointDown(f"{url} is unreachable: {reason.strerror or reason}", url)
    return EndpointDown(f"{url} is unreachable: {reason}", url)

def _status_error(url: str, status: int, body: bytes) -> ModelError:
    message = _error_message(body)
    if status >= 500:
        return ServerError(f"{url} answered HTTP {status}: {message}", url, status)
    if status >= 400:
        return ClientError(f"{url} answered HTTP {status}: {message}", url, status)
    return BadResponse(f"{url} answered HTTP {status}: {message}", url)

def _read_error_body(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.HTTPException):
        return b""
    finally:
        exc.close()

def _error_message(body: bytes) -> str:
    """The server's own words: OpenAI's {"error": {"message"}}, {"error": "..."} or the text."""
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _snippet(body) or "(empty body)"
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return _snippet(body)

def _snippet(raw: bytes, limit: int = 200) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."

def _is_loopback(url: str) -> bool:
    """Loopback endpoints never go through an environment proxy (no_proxy rarely lists them)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)

def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
import json

# GD lives as long as the session and is shared by every plpython function in it, so the
# search's own query embeddings count against the same "embed" budget (plpy/budget.py).
if calls_per_minute is None:
    return json.dumps({"error_class": "rate_limited", "ms": 0.0,
                       "error": "no call budget is set (reader.embed_calls_per_minute must be a "
                                "whole number), so no query is embedded"})
if not allow(GD, "embed", calls_per_minute):
    return json.dumps({"error_class": "rate_limited", "ms": 0.0,
                       "error": "this session has used its %d query embeddings of the last minute "
                                "(reader.embed_calls_per_minute); try again shortly" % calls_per_minute})
return json.dumps(embed_one(json.loads(endpoint), input))
$$;

ALTER FUNCTION exo_private.embed_text(input text, endpoint jsonb, calls_per_minute integer) OWNER TO exo_owner;

--
-- Name: FUNCTION embed_text(input text, endpoint jsonb, calls_per_minute integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.embed_text(input text, endpoint jsonb, calls_per_minute integer) IS 'Embed one text through an OpenAI-compatible endpoint (a models.embeddings-style jsonb), at most calls_per_minute calls per session in any minute (shared budget "embed"); returns {vector, model, dimensions, ms} or {error_class, error, ms} (rate_limited past the budget), never raises for a model failure.';

--
-- Name: embedding_model_changed(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.embedding_model_changed() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    model int := exo_private.embedding_model_id(new.value ->> 'model', (new.value ->> 'dimensions')::int);
begin
    perform pgmq.send_batch('embed', array_agg(jsonb_build_object('chunk_id', c.id, 'workspace', c.workspace)))
    from exo_private.chunks c
    where not exists (select 1 from exo_private.chunk_embeddings e
                      where e.workspace = c.workspace and e.chunk_id = c.id and e.model_id = model)
    having count(*) > 0;
    perform exo_private.advance_stages(array(
        select d.id from exo_private.documents d where d.stage in ('embedded', 'graphed')));
    return new;
end
$$;

ALTER FUNCTION exo_private.embedding_model_changed() OWNER TO exo_owner;

--
-- Name: FUNCTION embedding_model_changed(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.embedding_model_changed() IS 'Trigger: when models.embeddings names another model or dimension, register it (its own HNSW indexes) and queue every chunk without its vector; vectors of two models never share an index.';

--
-- Name: embedding_model_id(text, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.embedding_model_id(p_name text, p_dimensions integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    found_id int;
begin
    select m.id into found_id from exo_private.embedding_models m
    where m.name = p_name and m.dimensions = p_dimensions;
    if found_id is null then
        insert into exo_private.embedding_models (name, dimensions) values (p_name, p_dimensions)
        on conflict (name, dimensions) do nothing;
        select m.id into found_id from exo_private.embedding_models m
        where m.name = p_name and m.dimensions = p_dimensions;
        perform exo_private.ensure_embedding_indexes(found_id);
    end if;
    return found_id;
end
$$;

ALTER FUNCTION exo_private.embedding_model_id(p_name text, p_dimensions integer) OWNER TO exo_owner;

--
-- Name: FUNCTION embedding_model_id(p_name text, p_dimensions integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.embedding_model_id(p_name text, p_dimensions integer) IS 'Id of an embedding model by name and dimensions; a new model is registered and gets its indexes.';

--
-- Name: end_ocr(text, exo_private.document_stage, text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
declare
    ended int;
begin
    if p_stage is null or p_stage not in ('failed', 'skipped') then
        perform exo_private.invalid_argument(
            format('p_stage must be failed or skipped, not %s', exo_private.quoted(p_stage::text)));
    end if;
    if p_error_class is null or p_error_class !~ '^[a-z][a-z_]*$' then
        perform exo_private.invalid_argument(format(
            'p_error_class must be a lowercase identifier such as ocr_failed, not %s',
            exo_private.quoted(p_error_class)));
    end if;
    update exo_private.documents d
       set stage = p_stage, error_class = p_error_class, error_message = left(p_message, 2000),
           stage_changed_at = now()
     where d.sha256 = p_sha256 and d.stage = 'ocr_pending';
    get diagnostics ended = row_count;
    return ended;
end
$_$;

ALTER FUNCTION exo_private.end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text) OWNER TO exo_owner;

--
-- Name: FUNCTION end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text) IS 'End every document of content p_sha256 that waits at ocr_pending at p_stage (failed, or skipped when OCR found no text) with p_error_class (ocr_timeout, ocr_failed, ocr_unavailable, empty) and p_message; returns how many documents ended.';

--
-- Name: ensure_embedding_indexes(integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.ensure_embedding_indexes(p_model_id integer) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    AS $$
declare
    dims int;
    ws text;
    index_name text;
begin
    select m.dimensions into dims from exo_private.embedding_models m where m.id = p_model_id;
    if dims is null then
        raise exception 'embedding model % does not exist', p_model_id;
    end if;
    for ws in select w.name from exo_private.workspaces w loop
        perform exo_private.ensure_workspace_storage(ws);
        index_name := format('chunk_embeddings_%s_m%s_hnsw', ws, p_model_id);
        if to_regclass(format('exo_private.%I', index_name)) is null then
            -- A partial expression index: only this model's vectors, at its dimension.
            execute format(
                'create index %I on exo_private.%I using hnsw ((embedding::vector(%s)) vector_cosine_ops) '
                'where model_id = %s',
                index_name, 'chunk_embeddings_' || ws, dims, p_model_id);
        end if;
    end loop;
end
$$;

ALTER FUNCTION exo_private.ensure_embedding_indexes(p_model_id integer) OWNER TO exo_owner;

--
-- Name: FUNCTION ensure_embedding_indexes(p_model_id integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.ensure_embedding_indexes(p_model_id integer) IS 'Create the HNSW index of one embedding model in every workspace partition (partial: that model only).';

--
-- Name: ensure_label(name, text, "char"); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.ensure_label(graph name, label text, kind "char") RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $$
declare
    label_id int;
    label_kind "char";
    relation regclass;
begin
    select l.id, l.kind into label_id, label_kind
    from ag_catalog.ag_label l
    join ag_catalog.ag_graph g on g.graphid = l.graph
    where g.name = ensure_label.graph and l.name = ensure_label.label;
    if label_id is null then
        -- Two workers may want the same new label at once: one creates it, the other
        -- waits here and then finds it.
        perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('exo_private.ensure_label'),
                                                 pg_catalog.hashtext(graph::text));
        select l.id, l.kind into label_id, label_kind
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = ensure_label.graph and l.name = ensure_label.label;
    end if;
    if label_id is null then
        if kind = 'v' then
            perform ag_catalog.create_vlabel(graph::cstring, label::cstring);
        elsif kind = 'e' then
            perform ag_catalog.create_elabel(graph::cstring, label::cstring);
        else
            raise exception 'label kind must be v or e, not %', kind;
        end if;
        select l.id, l.kind, l.relation into label_id, label_kind, relation
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = ensure_label.graph and l.name = ensure_label.label;
        if kind = 'e' then
            -- AGE indexes an edge label's start_id and end_id but not its id, which
            -- project_relations looks up.
            execute format('create unique index on %s (id)', relation);
        end if;
        perform exo_private.guard_graph_table(relation, kind);
    end if;
    if label_kind <> kind then
        raise exception 'label % of graph % is of kind %, not %', label, graph, label_kind, kind;
    end if;
    return label_id;
end
$$;

ALTER FUNCTION exo_private.ensure_label(graph name, label text, kind "char") OWNER TO exo_owner;

--
-- Name: FUNCTION ensure_label(graph name, label text, kind "char"); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.ensure_label(graph name, label text, kind "char") IS 'Id of a vertex (v) or edge (e) label of an AGE graph, created when missing (edge labels with a unique index on id).';

--
-- Name: ensure_workspace_graph(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.ensure_workspace_graph(workspace text) RETURNS name
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $$
declare
    graph name := exo_private.graph_name(workspace);
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = workspace) then
        raise exception 'workspace % does not exist', workspace
            using hint = 'insert it into exo_private.workspaces first';
    end if;
    if not exists (select 1 from ag_catalog.ag_graph g where g.name = graph) then
        perform ag_catalog.create_graph(graph);
        -- its parent vertex and edge tables, which every label inherits from
        perform exo_private.guard_graph_table(l.relation, l.kind)
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = exo_private.graph_name(ensure_workspace_graph.workspace);
    end if;
    return graph;
end
$$;

ALTER FUNCTION exo_private.ensure_workspace_graph(workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION ensure_workspace_graph(workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.ensure_workspace_graph(workspace text) IS 'Create the AGE graph of a workspace when missing; returns its name. Reused by every issue that adds a workspace.';

--
-- Name: ensure_workspace_storage(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.ensure_workspace_storage(workspace text) RETURNS regclass
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    AS $$
declare
    partition_name text := 'chunks_' || workspace;
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = workspace) then
        raise exception 'workspace % does not exist', workspace;
    end if;
    if to_regclass(format('exo_private.%I', partition_name)) is null then
        execute format('create table exo_private.%I partition of exo_private.chunks for values in (%L)',
                       partition_name, workspace);
        execute format('create index %I on exo_private.%I (document_id)',
                       partition_name || '_document_idx', partition_name);
        execute format('create index %I on exo_private.%I using bm25 (body) with (text_config = %L)',
                       partition_name || '_bm25', partition_name, 'english');
    end if;
    if to_regclass(format('exo_private.%I', 'chunk_embeddings_' || workspace)) is null then
        execute format('create table exo_private.%I partition of exo_private.chunk_embeddings for values in (%L)',
                       'chunk_embeddings_' || workspace, workspace);
    end if;
    return format('exo_private.%I', partition_name)::regclass;
end
$$;

ALTER FUNCTION exo_private.ensure_workspace_storage(workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION ensure_workspace_storage(workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.ensure_workspace_storage(workspace text) IS 'Create a workspace''s chunk partition (with its document and BM25 indexes) and its embeddings partition when missing.';

--
-- Name: entity_dossier(bigint, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.entity_dossier(p_entity bigint, bridge text[]) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with ent as (
        select e.id, e.workspace, e.type, e.name, e.canonical_key, e.is_owner
        from exo_private.entities e
        where e.id = p_entity
    ), released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), itself as (
        -- the entity is a deferred subject the bridge leaves closed
        select c.subject from closed c join ent on ent.canonical_key = c.key
        order by c.subject limit 1
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(array[p_entity], bridge) m
    ), hidden as (
        -- every mention is withheld: the entity's only evidence is charged material
        select exists (select 1 from ms) and not exists (select 1 from ms m where m.withheld = '{}') as yes
    ), shown_docs as (
        select m.document_id, count(*) as mentions, min(m.surface) as surface
        from ms m where m.withheld = '{}'
        group by m.document_id
    ), shown as (
        select s.* from shown_docs s
        where s.document_id not in (
            select k.document_id
            from exo_private.closed_documents(array(select x.document_id from shown_docs x), bridge) k)
    ), docs as (
        select s.document_id, d.path, d.title, d.written_at, d.band::text as band, s.surface, s.mentions
        from shown s join exo_private.documents d on d.id = s.document_id
        order by d.written_at desc nulls last, s.document_id desc
        limit 100
    ), rels as (
        select r.id, r.window_id, r.document_id, r.predicate, r.predicate_raw,
               case when r.subject_id = p_entity then 'out' else 'in' end as direction,
               case when r.subject_id = p_entity then r.object_id else r.subject_id end as other_id
        from exo_private.relations r
        where r.subject_id = p_entity or r.object_id = p_entity
    ), rels_judged as (
        select rl.*, o.name as other_name, o.type::text as other_type,
               (select c.subject from closed c where c.key = o.canonical_key order by c.subject limit 1)
                   as other_subject,
               -- both ends must be shown in the relation's window: what withholds either
               exo_private.mention_state(p_entity, rl.window_id, r.keys)
                   || exo_private.mention_state(rl.other_id, rl.window_id, r.keys) as evidence_withheld
        from rels rl
        join exo_private.entities o on o.id = rl.other_id
        cross join released r
    ), rels_shown as (
        select rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type,
               count(distinct rj.document_id) as documents,
               (array_agg(distinct rj.document_id))[1:5] as document_ids,
               min(rj.predicate_raw) as predicate_raw
        from rels_judged rj
        where rj.other_subject is null and rj.evidence_withheld = '{}'
        group by rj.direction, rj.predicate, rj.other_id, rj.other_name, rj.other_type
    ), withheld_mentions as (
        select s as subject, count(*) as mentions, count(distinct m.chunk_id) as chunks
        from ms m cross join lateral unnest(m.withheld) s
        group by s
    ), withheld_relations as (
        -- a relation to a closed subject, or one whose evidence is withheld, under each subject
        select s as subject, count(distinct rj.id) as relations
        from rels_judged rj
        cross join lateral unnest(case when rj.other_subject is not null then array[rj.other_subject]
                                       else rj.evidence_withheld end) s
        group by s
    ), hints as (
        select coalesce(wm.subject, wr.subject) as subject,
               coalesce(wm.mentions, 0) as mentions, coalesce(wm.chunks, 0) as chunks,
               coalesce(wr.relations, 0) as relations
        from withheld_mentions wm full join withheld_relations wr on wr.subject = wm.subject
    )
    select case
        when exists (select 1 from itself) then
            -- The entity is itself a closed subject: that it exists, never what is known of it.
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'withheld', true,
                'hints', jsonb_build_array(jsonb_build_object(
                    'subject', (select i.subject from itself i), 'workspace', ent.workspace,
                    'mentions', (select count(*) from ms),
                    'relations', (select count(*) from rels),
                    'how', exo_private.hint_how((select i.subject from itself i)))))
        when (select h.yes from hidden h) then
            -- Seen only in withheld material: that it exists, never its name.
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'withheld', true,
                'hints', (
                    select jsonb_agg(jsonb_build_object(
                        'subject', wm.subject, 'workspace', ent.workspace, 'mentions', wm.mentions,
                        'chunks', wm.chunks, 'relations', (select count(*) from rels),
                        'how', exo_private.hint_how(wm.subject))
                        order by wm.subject)
                    from withheld_mentions wm))
        else
            jsonb_build_object(
                'entity_id', ent.id, 'workspace', ent.workspace, 'type', ent.type::text,
                'name', ent.name, 'is_owner', ent.is_owner,
                'mention_count', (select coalesce(sum(s.mentions), 0) from shown s),
                'document_count', (select count(*) from shown),
                'mentions', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'document_id', d.document_id, 'path', d.path, 'title', d.title,
                        'written_at', d.written_at, 'band', d.band, 'surface', d.surface,
                        'mentions', d.mentions)
                        order by d.written_at desc nulls last, d.document_id desc)
                    from docs d), '[]'),
                'relations', jsonb_build_object(
                    'out', coalesce((
                        select jsonb_agg(jsonb_build_object(
                            'predicate', x.predicate, 'predicate_raw', x.predicate_raw,
                            'entity_id', x.other_id, 'name', x.other_name, 'type', x.other_type,
                            'documents', x.documents, 'document_ids', x.document_ids)
                            order by x.documents desc, x.predicate, x.other_name)
                        from (select * from rels_shown rs where rs.direction = 'out'
                              order by rs.documents desc, rs.predicate, rs.other_name limit 100) x), '[]'),
                    'in', coalesce((
                        select jsonb_agg(jsonb_build_object(
                            'predicate', x.predicate, 'predicate_raw', x.predicate_raw,
                            'entity_id', x.other_id, 'name', x.other_name, 'type', x.other_type,
                            'documents', x.documents, 'document_ids', x.document_ids)
                            order by x.documents desc, x.predicate, x.other_name)
                        from (select * from rels_shown rs where rs.direction = 'in'
                              order by rs.documents desc, rs.predicate, rs.other_name limit 100) x), '[]')),
                'hints', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'subject', h.subject, 'workspace', ent.workspace, 'mentions', h.mentions,
                        'chunks', h.chunks, 'relations', h.relations, 'how', exo_private.hint_how(h.subject))
                        order by h.subject)
                    from hints h), '[]'))
        end
    from ent
$$;

ALTER FUNCTION exo_private.entity_dossier(p_entity bigint, bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION entity_dossier(p_entity bigint, bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.entity_dossier(p_entity bigint, bridge text[]) IS 'The dossier of one entity as exo.dossier gives it (null when the entity does not exist).';

--
-- Name: entity_evidence(bigint[], text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.entity_evidence(ids bigint[], bridge text[]) RETURNS TABLE(entity_id bigint, mentions bigint, documents bigint, withheld text[])
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- An entity is closed when it is a deferred subject the bridge leaves closed (by name or
    -- alias), or when every mention of it is withheld: its only evidence is charged material.
    -- One never mentioned (the owner) stays open.
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), ents as materialized (
        select e.id,
               (select array_agg(distinct c.subject order by c.subject) from closed c
                where c.key = e.canonical_key) as itself
        from exo_private.entities e
        where e.id = any (ids)
    ), ms as materialized (
        select m.entity_id, m.document_id, m.withheld
        from exo_private.entity_mentions(array(select x.id from ents x where x.itself is null), bridge) m
    ), counted as (
        select m.entity_id,
               count(*) filter (where m.withheld = '{}') as shown,
               count(distinct m.document_id) filter (where m.withheld = '{}') as documents
        from ms m
        group by m.entity_id
    ), held as (
        select m.entity_id, array_agg(distinct s order by s) as subjects
        from ms m
        cross join lateral unnest(m.withheld) s
        group by m.entity_id
    )
    select e.id, coalesce(k.shown, 0), coalesce(k.documents, 0),
           case when e.itself is not null then e.itself
                when k.shown = 0 then h.subjects
                else '{}'::text[] end
    from ents e
    left join counted k on k.entity_id = e.id
    left join held h on h.entity_id = e.id
$$;

ALTER FUNCTION exo_private.entity_evidence(ids bigint[], bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION entity_evidence(ids bigint[], bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.entity_evidence(ids bigint[], bridge text[]) IS 'For each of the given entities: mentions and documents (distinct) that may be shown, and withheld: {} when the entity may be shown, else the closed subjects why: it is a deferred subject the bridge leaves closed (by canonical key of its name or an alias; then no mention counts), or every mention of it is withheld (its only evidence is charged material). The graph API computes its answers over the open ones.';

--
-- Name: entity_mentions(bigint[], text[], bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint DEFAULT NULL::bigint) RETURNS TABLE(entity_id bigint, workspace text, document_id bigint, chunk_id bigint, window_id bigint, surface text, withheld text[])
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- The closed chunks are few and found through an index: a hash join with them decides
    -- nearly every mention without touching the chunks themselves.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.chunk_id, k.withheld from exo_private.closed_chunks(bridge) k
    )
    select m.entity_id, e.workspace, m.document_id, m.chunk_id, m.window_id, m.surface,
           case when m.chunk_id is null
                then exo_private.window_withheld(m.window_id, r.keys)
                else coalesce(k.withheld, '{}') end
    from released r
    cross join exo_private.entities e
    join exo_private.mentions m on m.entity_id = e.id
    left join closed k on k.chunk_id = m.chunk_id
    where e.id = any (ids)
      and (in_document is null or m.document_id = in_document)
$$;

ALTER FUNCTION exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION entity_mentions(ids bigint[], bridge text[], in_document bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint) IS 'Every mention of the given entities (only those in document in_document when it is given) with its workspace, document, chunk, window and surface, and withheld: the charged subjects the bridge leaves closed (empty: it may be shown).';

--
-- Name: entity_timeline(text, text, text[], integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer) RETURNS TABLE(written_at date, document_id bigint, path text, title text, band text, workspace text, surface text, excerpt text, withheld jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    ids bigint[] := exo_private.resolve_entity(p_entity, p_workspace);
    n int := least(greatest(coalesce(p_max, 500), 1), 5000);
begin
    return query
    with evidence as materialized (
        select v.entity_id, v.withheld from exo_private.entity_evidence(ids, p_bridge) v
    ), ms as materialized (
        select m.* from exo_private.entity_mentions(
            array(select v.entity_id from evidence v where v.withheld = '{}'), p_bridge) m
    ), closed_docs as materialized (
        select k.document_id, k.withheld from exo_private.closed_documents(
            array(select distinct m.document_id from ms m where m.withheld = '{}'), p_bridge) k
    ), firsts as (
        -- chunks of a document are numbered in reading order
        select m.document_id, m.workspace, m.chunk_id, m.window_id, m.surface,
               d.written_at, d.path, d.title, d.band::text as band,
               row_number() over (order by d.written_at nulls last, m.document_id, m.chunk_id nulls last,
                                           m.workspace) as ord
        from ms m
        join exo_private.documents d on d.id = m.document_id
        where m.withheld = '{}' and m.document_id not in (select k.document_id from closed_docs k)
        order by ord
        limit n
    ), held as (
        -- mentions of an open entity in withheld chunks or documents; every mention of a closed one
        select s.subject, e.workspace, count(*) as mentions
        from (
            select m.entity_id, m.withheld as subjects from ms m where m.withheld <> '{}'
            union all
            select m.entity_id, k.withheld
            from ms m join closed_docs k on k.document_id = m.document_id
            where m.withheld = '{}'
            union all
            select x.entity_id, v.withheld
            from evidence v join exo_private.mentions x on x.entity_id = v.entity_id
            where v.withheld <> '{}'
        ) t
        join exo_private.entities e on e.id = t.entity_id
        cross join lateral unnest(t.subjects) s (subject)
        group by s.subject, e.workspace
    )
    select y.written_at, y.document_id, y.path, y.title, y.band, y.workspace, y.surface, y.excerpt, y.hint
    from (
        -- excerpts only for the rows returned
        select 0 as part, f.ord, f.written_at, f.document_id, f.path, f.title, f.band, f.workspace, f.surface,
               exo_private.excerpt(coalesce(c.body, w.body), f.surface, 200) as excerpt, null::jsonb as hint
        from firsts f
        left join exo_private.chunks c on c.workspace = f.workspace and c.id = f.chunk_id
        left join exo_private.extraction_windows w on f.chunk_id is null and w.id = f.window_id
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, null, null,
               null,
               jsonb_build_object('subject', h.subject, 'workspace', h.workspace, 'mentions', h.mentions,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) y
    order by y.part, y.ord;
end
$$;

ALTER FUNCTION exo_private.entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer) OWNER TO exo_owner;

--
-- Name: FUNCTION entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer) IS 'exo.timeline, which see.';

--
-- Name: excerpt(text, text, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.excerpt(body text, needle text, width integer DEFAULT 200) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    key text := pg_catalog.lower(pg_catalog.btrim(coalesce(needle, '')));
    at int := pg_catalog.strpos(pg_catalog.lower(body), key);
    first int := greatest(1, at - width);
    stretch text;
    start int := 1;
begin
    if body is null then
        return null;
    end if;
    -- Only a stretch of twice the width around the needle is whitespace-collapsed, so a long
    -- chunk costs no more than a short one.
    stretch := pg_catalog.regexp_replace(
        pg_catalog.substr(body, first, 2 * width + pg_catalog.length(key)), '\s+', ' ', 'g');
    if at > 0 then
        start := greatest(1, pg_catalog.strpos(pg_catalog.lower(stretch), key)
                             - greatest(0, (width - pg_catalog.length(key)) / 2));
    end if;
    return case when first > 1 or start > 1 then '…' else '' end
           || pg_catalog.btrim(pg_catalog.substr(stretch, start, width))
           || case when first + 2 * width + pg_catalog.length(key) <= pg_catalog.length(body)
                     or start + width <= pg_catalog.length(stretch) then '…' else '' end;
end
$$;

ALTER FUNCTION exo_private.excerpt(body text, needle text, width integer) OWNER TO exo_owner;

--
-- Name: FUNCTION excerpt(body text, needle text, width integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.excerpt(body text, needle text, width integer) IS 'About width characters of body (whitespace collapsed) centred on the first case-insensitive occurrence of needle (the start when absent), with … where it was cut.';

--
-- Name: extraction_model_changed(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.extraction_model_changed() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    ws text;
begin
    for ws in select distinct g.workspace from exo_private.extraction_generations g order by 1 loop
        perform exo_private.bump_generation(ws, new.value ->> 'model');
    end loop;
    return new;
end
$$;

ALTER FUNCTION exo_private.extraction_model_changed() OWNER TO exo_owner;

--
-- Name: FUNCTION extraction_model_changed(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.extraction_model_changed() IS 'Trigger: when the models.chat setting names another model, every graph gets a new generation built from that model only (bump_generation).';

--
-- Name: find_entities(text, text, text[], integer, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]) RETURNS TABLE(entity_id bigint, workspace text, type text, name text, mentions bigint, documents bigint, withheld jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    wanted_type exo_private.entity_type := exo_private.parse_entity_type(p_type);
    pattern text;
    n int := least(greatest(coalesce(p_max, 50), 1), 500);
begin
    perform exo_private.check_workspaces(p_workspaces);
    if pg_catalog.btrim(p_name) <> '' then
        pattern := exo_private.like_pattern(pg_catalog.btrim(p_name));
    end if;
    return query
    with candidates as materialized (
        select e.id, e.workspace, e.type, e.name
        from exo_private.entities e
        where (pattern is null or e.name ilike pattern)
          and (wanted_type is null or e.type = wanted_type)
          and (p_workspaces is null or e.workspace = any (p_workspaces))
    ), evidence as materialized (
        select v.* from exo_private.entity_evidence(array(select c.id from candidates c), p_bridge) v
    ), listed as (
        select c.id, c.workspace, c.type::text as type, c.name, v.mentions, v.documents,
               row_number() over (order by v.mentions desc, c.name, c.id) as ord
        from candidates c
        join evidence v on v.entity_id = c.id
        where v.withheld = '{}'
        order by ord
        limit n
    ), held as (
        select s.subject, c.workspace, count(*) as entities
        from candidates c
        join evidence v on v.entity_id = c.id
        cross join lateral unnest(v.withheld) s (subject)
        group by s.subject, c.workspace
    )
    select x.id, x.workspace, x.type, x.name, x.mentions, x.documents, x.hint
    from (
        select 0 as part, l.ord, l.id, l.workspace, l.type, l.name, l.mentions, l.documents, null::jsonb as hint
        from listed l
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'workspace', h.workspace, 'entities', h.entities,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) x
    order by x.part, x.ord;
end
$$;

ALTER FUNCTION exo_private.find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]) IS 'exo.search_entities, which see.';

--
-- Name: forget_document(bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.forget_document(doc_id bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    perform exo_private.clear_derived(doc_id);
    delete from exo_private.document_links l where l.source_document = doc_id;
    update exo_private.documents d
       set stage = 'deleted', error_class = null, error_message = null, stage_changed_at = now()
     where d.id = doc_id;
end
$$;

ALTER FUNCTION exo_private.forget_document(doc_id bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION forget_document(doc_id bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.forget_document(doc_id bigint) IS 'Mark a document deleted and remove its chunks, windows and outgoing links.';

--
-- Name: generation_for(text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.generation_for(ws text, model text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    newest_model text;
begin
    select g.model into newest_model
    from exo_private.extraction_generations g
    where g.workspace = ws
    order by g.generation desc
    limit 1;
    if newest_model is not null and newest_model not in ('seed', generation_for.model) then
        return null;
    end if;
    return exo_private.current_generation(ws, generation_for.model);
end
$$;

ALTER FUNCTION exo_private.generation_for(ws text, model text) OWNER TO exo_owner;

--
-- Name: FUNCTION generation_for(ws text, model text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.generation_for(ws text, model text) IS 'The extraction generation for a model in a workspace, or null when the graph now belongs to another model (a reply from a worker that read the old setting).';

--
-- Name: glob_like(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.glob_like(glob text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select replace(replace(replace(replace(replace(glob, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%'), '?', '_')
$$;

ALTER FUNCTION exo_private.glob_like(glob text) OWNER TO exo_owner;

--
-- Name: FUNCTION glob_like(glob text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.glob_like(glob text) IS 'A shell glob as a LIKE pattern: * is any run of characters (slashes too), ? one character; LIKE''s own % and _ match themselves.';

--
-- Name: graph_disagreements(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.graph_disagreements(ws text) RETURNS TABLE(kind text, id bigint, detail text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $_$
declare
    graph name := exo_private.ensure_workspace_graph(ws);
    gen int;
begin
    select max(g.generation) into gen from exo_private.extraction_generations g where g.workspace = ws;
    for kind, id, detail in execute format($sql$
        with ent as (
            select e.id, e.type::text as label,
                   ag_catalog._graphid(l.id, e.id) as gid
            from exo_private.entities e
            left join ag_catalog.ag_graph g on g.name = %1$L
            left join ag_catalog.ag_label l on l.graph = g.graphid and l.name = e.type::text
            where e.workspace = $1 and e.generation = $2
        ), vtx as (
            select v.id as gid, l.name::text as label,
                   (v.properties::text::jsonb ->> 'id')::bigint as entity_id
            from %1$I._ag_label_vertex v
            join ag_catalog.ag_label l on l.relation = v.tableoid::regclass
        ), rel as (
            select r.id, r.predicate as label,
                   ag_catalog._graphid(sl.id, r.subject_id) as start_gid,
                   ag_catalog._graphid(ol.id, r.object_id) as end_gid
            from exo_private.relations r
            join exo_private.entities s on s.id = r.subject_id
            join exo_private.entities o on o.id = r.object_id
            left join ag_catalog.ag_graph g on g.name = %1$L
            left join ag_catalog.ag_label sl on sl.graph = g.graphid and sl.name = s.type::text
            left join ag_catalog.ag_label ol on ol.graph = g.graphid and ol.name = o.type::text
            where r.workspace = $1 and r.generation = $2
        ), edg as (
            select x.start_id as start_gid, x.end_id as end_gid, l.name::text as label,
                   (x.properties::text::jsonb ->> 'id')::bigint as relation_id
            from %1$I._ag_label_edge x
            join ag_catalog.ag_label l on l.relation = x.tableoid::regclass
        )
        select 'missing_vertex', ent.id, 'entity ' || ent.id || ' (' || ent.label || ') has no vertex'
        from ent where not exists (select 1 from vtx where vtx.entity_id = ent.id)
        union all
        select 'extra_vertex', vtx.entity_id,
               'vertex ' || vtx.gid::text || ' (' || vtx.label || ') is no entity of generation ' || coalesce($2::text, 'none')
        from vtx where not exists (select 1 from ent where ent.id = vtx.entity_id)
        union all
        select 'vertex_label', ent.id, 'entity is ' || ent.label || ', vertex label ' || vtx.label
        from ent join vtx on vtx.entity_id = ent.id where vtx.label <> ent.label
        union all
        select 'vertex_id', ent.id, 'vertex ' || vtx.gid::text || ' should be ' || coalesce(ent.gid::text, 'null')
        from ent join vtx on vtx.entity_id = ent.id
        where vtx.label = ent.label and vtx.gid operator(ag_catalog.<>) ent.gid
        union all
        select 'duplicate_vertex', vtx.entity_id, count(*) || ' vertices'
        from vtx group by vtx.entity_id having count(*) > 1
        union all
        select 'missing_edge', rel.id, 'relation ' || rel.id || ' (' || rel.label || ') has no edge'
        from rel where not exists (select 1 from edg where edg.relation_id = rel.id)
        union all
        select 'extra_edge', edg.relation_id, 'edge (' || edg.label || ') is no relation of generation ' || coalesce($2::text, 'none')
        from edg where not exists (select 1 from rel where rel.id = edg.relation_id)
        union all
        select 'edge_label', rel.id, 'predicate ' || rel.label || ', edge label ' || edg.label
        from rel join edg on edg.relation_id = rel.id where edg.label <> rel.label
        union all
        select 'edge_endpoints', rel.id, 'edge does not join the vertices of its subject and object'
        from rel join edg on edg.relation_id = rel.id
        where rel.start_gid is distinct from edg.start_gid or rel.end_gid is distinct from edg.end_gid
        union all
        select 'duplicate_edge', edg.relation_id, count(*) || ' edges'
        from edg group by edg.relation_id having count(*) > 1
    $sql$, graph) using ws, gen
    loop
        return next;
    end loop;
end
$_$;

ALTER FUNCTION exo_private.graph_disagreements(ws text) OWNER TO exo_owner;

--
-- Name: FUNCTION graph_disagreements(ws text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.graph_disagreements(ws text) IS 'Differences between a workspace''s current-generation entities and relations and its AGE graph (missing/extra/duplicate vertices and edges, wrong labels, ids or endpoints); empty when they are in step.';

--
-- Name: graph_name(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.graph_name(workspace text) RETURNS name
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select ('graph_' || workspace)::name
$$;

ALTER FUNCTION exo_private.graph_name(workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION graph_name(workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.graph_name(workspace text) IS 'The name of a workspace''s AGE graph.';

--
-- Name: graph_withheld(text, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.graph_withheld(ws text, bridge text[]) RETURNS TABLE(vertices ag_catalog.graphid[], edges ag_catalog.graphid[], subjects text[])
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- The same rules as exo.dossier. A vertex is withheld when its entity is a closed
    -- deferred subject (by canonical key) or when every mention of it is withheld; an edge
    -- when an end is withheld or when its window does not show both ends. Withheld
    -- mentions lie only in windows that overlap a closed charged chunk, and those are few:
    -- the work starts from them (exo_private.closed_windows), never from all entities.
    with closed_keys as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), windows as materialized (
        select w.id, w.document_id
        from exo_private.closed_windows(bridge) k
        join exo_private.extraction_windows w on w.id = k.window_id
        where w.workspace = ws
    ), candidates as materialized (
        -- every entity named in such a window has a mention there (with a chunk or without)
        select distinct m.entity_id
        from windows w
        join exo_private.mentions m on m.document_id = w.document_id and m.window_id = w.id
    ), ms as materialized (
        select m.entity_id, m.window_id, m.withheld
        from exo_private.entity_mentions(array(select c.entity_id from candidates c), bridge) m
    ), hidden_entities as materialized (
        select e.id, e.type, k.subject
        from closed_keys k
        join exo_private.entities e on e.canonical_key = k.key
        where e.workspace = ws
        union
        select e.id, e.type, s.subject
        from exo_private.entities e
        join ms m on m.entity_id = e.id
        cross join lateral unnest(m.withheld) s(subject)
        where not exists (select 1 from ms shown where shown.entity_id = e.id and shown.withheld = '{}')
    ), hidden_relations as materialized (
        select r.id, r.predicate, h.subject
        from hidden_entities h join exo_private.relations r on r.subject_id = h.id
        union
        select r.id, r.predicate, h.subject
        from hidden_entities h join exo_private.relations r on r.object_id = h.id
        union
        -- the evidence: both ends shown in the relation's own window
        select r.id, r.predicate, s.subject
        from candidates c
        join exo_private.relations r on r.subject_id = c.entity_id
        join windows w on w.id = r.window_id
        left join lateral (
            select u.subject
            from ms m cross join lateral unnest(m.withheld) u(subject)
            where m.window_id = r.window_id and m.entity_id in (r.subject_id, r.object_id)
        ) s on true
        where not (exists (select 1 from ms a where a.entity_id = r.subject_id and a.window_id = r.window_id
                                                and a.withheld = '{}')
                   and exists (select 1 from ms b where b.entity_id = r.object_id and b.window_id = r.window_id
                                                   and b.withheld = '{}'))
    ), labels as materialized (
        select l.name::text as name, l.id
        from ag_catalog.ag_label l
        join ag_catalog.ag_graph g on g.graphid = l.graph
        where g.name = exo_private.graph_name(ws)
    )
    select coalesce((select array_agg(distinct ag_catalog._graphid(l.id, h.id))
                     from hidden_entities h join labels l on l.name = h.type::text), '{}'),
           coalesce((select array_agg(distinct ag_catalog._graphid(l.id, h.id))
                     from hidden_relations h join labels l on l.name = h.predicate), '{}'),
           coalesce((select array_agg(s.subject order by s.subject)
                     from (select h.subject from hidden_entities h
                           union select h.subject from hidden_relations h) s
                     where s.subject is not null), '{}')
$$;

ALTER FUNCTION exo_private.graph_withheld(ws text, bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION graph_withheld(ws text, bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.graph_withheld(ws text, bridge text[]) IS 'What exo.cypher hides of a workspace''s graph for a bridge: the graphids of vertices whose entity is a closed deferred subject or is seen only in withheld chunks, of edges with such an end or whose window does not show both ends (exo.dossier''s rules), and the subjects that withhold them.';

--
-- Name: guard_graph_table(regclass, "char"); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.guard_graph_table(relation regclass, kind "char") RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
declare
    setting text := case kind when 'v' then 'exo.cypher_hidden_vertices'
                              when 'e' then 'exo.cypher_hidden_edges' end;
begin
    if setting is null then
        raise exception 'label kind must be v or e, not %', kind;
    end if;
    -- exo.cypher lists what the caller may not see in a transaction-local setting just
    -- before exo_private.run_cypher (owned by exo_graph) reads; read once per scan (an
    -- InitPlan). Unset, every row is hidden. Not forced: the owner (projection) sees all.
    -- A label's own policy does not cover it when read through its parent (MATCH (n)
    -- scans _ag_label_vertex), so the parents have one too.
    execute format('grant usage on schema %I to exo_graph',
                   (select n.nspname from pg_catalog.pg_class c
                    join pg_catalog.pg_namespace n on n.oid = c.relnamespace where c.oid = relation));
    execute format('grant select on %s to exo_graph', relation);
    execute format('alter table %s enable row level security', relation);
    execute format('drop policy if exists exo_graph_sees_what_the_caller_may on %s', relation);
    execute format($sql$
        create policy exo_graph_sees_what_the_caller_may on %s for select to exo_graph
        using (not (id operator(ag_catalog.=) any (
            (select pg_catalog.current_setting(%L, true)::ag_catalog.graphid[])::ag_catalog.graphid[])))
    $sql$, relation, setting);
end
$_$;

ALTER FUNCTION exo_private.guard_graph_table(relation regclass, kind "char") OWNER TO exo_owner;

--
-- Name: FUNCTION guard_graph_table(relation regclass, kind "char"); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.guard_graph_table(relation regclass, kind "char") IS 'Let exo_graph read one vertex (v) or edge (e) table of an AGE graph, through a row security policy that hides the graphids exo.cypher lists in exo.cypher_hidden_vertices or _edges (everything when unset).';

--
-- Name: hint_how(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.hint_how(subject text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select 'ask with bridge => array[' || pg_catalog.quote_literal(subject) || ']'
$$;

ALTER FUNCTION exo_private.hint_how(subject text) OWNER TO exo_owner;

--
-- Name: FUNCTION hint_how(subject text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.hint_how(subject text) IS 'The "how" of a deference hint: the bridge argument that opens the subject.';

--
-- Name: ingest_settings(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.ingest_settings() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select jsonb_object_agg(key, value)
           || jsonb_build_object('workspaces', (select jsonb_agg(name order by name) from workspaces))
    from settings
    where key like any (array['chunking.%', 'routing.%', 'banding.%', 'deference.%'])
$$;

ALTER FUNCTION exo_private.ingest_settings() OWNER TO exo_owner;

--
-- Name: FUNCTION ingest_settings(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.ingest_settings() IS 'The chunking, routing, banding and deference settings as one jsonb, with the workspace names.';

--
-- Name: invalid_argument(text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.invalid_argument(message text, hint text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    if hint is null then
        raise exception '%', message using errcode = 'invalid_parameter_value';
    end if;
    raise exception '%', message using errcode = 'invalid_parameter_value', hint = hint;
end
$$;

ALTER FUNCTION exo_private.invalid_argument(message text, hint text) OWNER TO exo_owner;

--
-- Name: FUNCTION invalid_argument(message text, hint text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.invalid_argument(message text, hint text) IS 'Raise invalid_parameter_value (sqlstate 22023) with the message (which names the argument) and an optional hint: the one way the exo API refuses bad input.';

--
-- Name: learn_routes(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.learn_routes() RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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
    return trained || jsonb_build_object('moved', moved, 'quarantined', left_over);
end
$$;

ALTER FUNCTION exo_private.learn_routes() OWNER TO exo_owner;

--
-- Name: FUNCTION learn_routes(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.learn_routes() IS 'Train the learned router when its training set changed (train_router), then route every quarantined document again: returns the training''s report with how many left quarantine (moved) and how many stay (quarantined).';

--
-- Name: like_pattern(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.like_pattern(input text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select '%' || pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
               input, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

ALTER FUNCTION exo_private.like_pattern(input text) OWNER TO exo_owner;

--
-- Name: FUNCTION like_pattern(input text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.like_pattern(input text) IS 'ILIKE pattern matching input as a plain substring: %, _ and \ in it are escaped.';

--
-- Name: link_owner_identity(text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.link_owner_identity(source text, handle text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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

ALTER FUNCTION exo_private.link_owner_identity(source text, handle text) OWNER TO exo_owner;

--
-- Name: FUNCTION link_owner_identity(source text, handle text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.link_owner_identity(source text, handle text) IS 'Link the chat identity (source, handle) to the owner person; returns the identity id. Raises when the identity or the owner does not exist.';

--
-- Name: link_participants(bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.link_participants(conversations bigint[]) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    gens jsonb := '{}'::jsonb;
    ws text;
    ent_ids bigint[];
    rel_ids bigint[];
    n_mentions bigint;
begin
    -- The current generation of each workspace involved (generation 1 of 'seed' where there is
    -- none), share-locked like a merge so that bump_generation waits for this one.
    for ws in
        select distinct d.workspace from exo_private.documents d
        where d.conversation_id = any(conversations) order by 1
    loop
        gens := gens || jsonb_build_object(ws, exo_private.current_generation(ws, 'seed'));
        perform 1 from exo_private.extraction_generations g
        where g.workspace = ws and g.generation = (gens ->> ws)::int
        for share;
    end loop;

    -- The Person entities, one per (workspace, key); an existing one keeps its display name.
    insert into exo_private.entities (workspace, generation, type, canonical_key, name, is_owner)
    select distinct on (s.workspace, s.key) s.workspace, (gens ->> s.workspace)::int, 'Person', s.key, s.name,
           s.is_owner
    from exo_private.chat_window_senders(conversations) s
    order by s.workspace, s.key, s.is_owner desc, s.name
    on conflict do nothing;

    with people as materialized (
        select s.*, e.id as entity_id, e.generation
        from exo_private.chat_window_senders(conversations) s
        join exo_private.entities e
          on e.workspace = s.workspace and e.generation = (gens ->> s.workspace)::int
         and e.type = 'Person' and e.canonical_key = s.key
    ), mentioned as (
        insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface, origin)
        select p.entity_id, p.window_id, p.document_id, p.chunk_id, p.name, 'structure'
        from people p
        on conflict do nothing
        returning 1
    ), related as (
        -- Everyone who wrote in one window talked with everyone else who did (one edge a
        -- pair, the lower entity id first).
        insert into exo_private.relations
            (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id, origin)
        select w.workspace, w.generation, lo.id, hi.id, 'talked with', 'TALKED_WITH', w.window_id,
               w.document_id, 'structure'
        from (
            select p.workspace, p.generation, p.window_id, p.document_id, array_agg(p.entity_id) as ids
            from people p
            group by p.workspace, p.generation, p.window_id, p.document_id
        ) w
        -- pairs within a window's few people (a self-join of the CTE would be planned blind)
        cross join unnest(w.ids) lo (id)
        cross join unnest(w.ids) hi (id)
        where hi.id > lo.id
        on conflict do nothing
        returning exo_private.relations.id
    )
    select (select coalesce(array_agg(distinct p.entity_id), '{}') from people p),
           (select count(*) from mentioned),
           (select coalesce(array_agg(related.id), '{}') from related)
      into ent_ids, n_mentions, rel_ids;

    perform exo_private.project_entities(ent_ids);
    perform exo_private.project_relations(rel_ids);
    return jsonb_build_object('entities', cardinality(ent_ids), 'mentions_new', n_mentions,
                              'relations_new', cardinality(rel_ids));
end
$$;

ALTER FUNCTION exo_private.link_participants(conversations bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION link_participants(conversations bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.link_participants(conversations bigint[]) IS 'The structural graph of the given chat conversations'' windows, in each workspace''s current generation: a Person entity per sender who is a person (exo_private.chat_person_names), a mention of it in each window they wrote in, and a TALKED_WITH relation between the people of a window, all with origin ''structure''; projected into the AGE graph. Idempotent. Returns {entities, mentions_new, relations_new}.';

--
-- Name: mark_messages(boolean); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.mark_messages(every_conversation boolean DEFAULT false) RETURNS integer
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Mark text charged for deferred subjects (stdlib only).

A chunk is charged for a subject when the document's frontmatter says so
(`charged: [subject]`), or when the subject or one of its aliases occurs near a
cue (a word like "funeral" or "died"). Near means in the same chunk, or in the
chunk and its document's title or path, which head every chunk: a note titled
"The funeral" that names Grandpa is charged where it names him. Each mark records
the rule that fired.

A chat message is charged the same way, where near means in the message or in the
message before or after it in its conversation (a cue in one message and the name
in the reply is how people talk), each message read with its sender's name and
the conversation's title.
"""

import re

def _phrase(words):
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words.split()) + r"(?!\w)", re.I)

def compile_subjects(subjects):
    """[(subject, [name patterns])] for [{"subject", "aliases"}]."""
    return [
        (
            s["subject"],
            [(name, _phrase(name)) for name in [s["subject"], *s.get("aliases", [])] if name.strip()],
        )
        for s in subjects
    ]

def compile_cues(cues):
    """[(cue, pattern)] for the cue words."""
    return [(cue, _phrase(cue)) for cue in cues if cue.strip()]

def _marks(text, subjects, cue_patterns, frontmatter_charged):
    declared = {}
    for item in frontmatter_charged or []:
        name = str(item).strip()
        if name:
            declared[name.lower()] = name
    marks = []
    for subject, names in subjects:
        named = [n.lower() for n, _p in names]
        if any(n in declared for n in named):
            for n in named:
                declared.pop(n, None)
            marks.append({"subject": subject, "rule": "frontmatter"})
            continue
        name_hit = next((n for n, p in names if p.search(text)), None)
        if name_hit is None:
            continue
        cue_hit = next((c for c, p in cue_patterns if p.search(text)), None)
        if cue_hit is not None:
            marks.append({"subject": subject, "rule": "cue '" + cue_hit + "' with '" + name_hit + "'"})
    # Subjects charged by frontmatter that are not (yet) on the deference list.
    marks.extend({"subject": name, "rule": "frontmatter"} for name in sorted(declared.values()))
    return marks

def charged_marks(text, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one text; `subjects` as from compile_subjects."""
    return _marks(text, subjects, compile_cues(cues), frontmatter_charged)

def heading(title, path):
    """The text that heads every chunk of a document: its title and path, one a line."""
    return "\n".join(str(part) for part in (title, path) if part)

def chunk_marks(text, head, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one chunk read under its document's heading (see heading())."""
    return charged_marks(head + "\n" + text if head else text, subjects, cues, frontmatter_charged)

def message_marks(lines, subjects, cues, title=None):
    """[[{subject, rule}]] for the messages of one conversation, in order.

    `lines` are the messages as "sender: body". A message is charged for a subject when a
    name of it and a cue occur in the message together with the message before or after it
    (and the conversation's title): both messages of such a pair are marked.
    """
    if not subjects or not lines:
        return [[] for _ in lines]
    cue_patterns = compile_cues(cues)
    head = title + "\n" if title else ""
    if len(lines) == 1:
        pairs = [_marks(head + lines[0], subjects, cue_patterns, [])]
    else:
        pairs = [
            _marks(head + lines[i] + "\n" + lines[i + 1], subjects, cue_patterns, [])
            for i in range(len(lines) - 1)
        ]
    result = []
    for i in range(len(lines)):
        merged = {}
        for marks in pairs[max(0, i - 1) : i + 1]:
            for mark in marks:
                merged.setdefault(mark["subject"], mark)
        result.append(list(merged.values()))
    return result
import json

# Marks change in place (ids, text and search vectors stay). A conversation is marked whole:
# a message's marks depend on its neighbours.
cues = json.loads(plpy.execute("select value::text as v from exo_private.settings where key = 'deference.cues'")[0]["v"])
subjects = compile_subjects(
    json.loads(plpy.execute("select exo_private.deference_list()::text as v")[0]["v"])
)
conversations = plpy.cursor(
    plpy.prepare(
        "select c.id, c.title from exo_private.chat_conversations c "
        "where $1 or exists (select 1 from exo_private.chat_messages m "
        "                    where m.conversation_id = c.id and m.charged is null) "
        "order by c.id",
        ["boolean"],
    ),
    [every_conversation],
)
messages = plpy.prepare(
    "select m.id, coalesce(i.display_name, p.display_name, i.handle) || ': ' || m.body as line, "
    "       m.charged::text as charged "
    "from exo_private.chat_messages m "
    "join exo_private.chat_identities i on i.id = m.identity_id "
    "left join exo_private.people p on p.id = i.person_id "
    "where m.conversation_id = $1 "
    "order by m.sent_at nulls last, m.id",
    ["bigint"],
)
update = plpy.prepare(
    "update exo_private.chat_messages m "
    "set charged = u.marks::jsonb, "
    "    charged_subjects = array(select x ->> 'subject' from jsonb_array_elements(u.marks::jsonb) x) "
    "from unnest($1::bigint[], $2::text[]) u (id, marks) "
    "where m.id = u.id",
    ["bigint[]", "text[]"],
)
changed = 0
while True:
    batch = conversations.fetch(100)
    if not batch:
        break
    for conversation in batch:
        rows = plpy.execute(messages, [conversation["id"]])
        marked = message_marks([r["line"] for r in rows], subjects, cues, conversation["title"])
        ids, values = [], []
        for row, marks in zip(rows, marked):
            if row["charged"] is None or json.loads(row["charged"]) != marks:
                ids.append(row["id"])
                values.append(json.dumps(marks))
        if ids:
            plpy.execute(update, [ids, values])
            changed += len(ids)
return changed
$_$;

ALTER FUNCTION exo_private.mark_messages(every_conversation boolean) OWNER TO exo_owner;

--
-- Name: FUNCTION mark_messages(every_conversation boolean); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.mark_messages(every_conversation boolean) IS 'Set the deference marks (charged, charged_subjects) of the chat messages of every conversation that has a message not yet marked, or of every conversation (after the deference list changed), in place; returns how many messages changed.';

--
-- Name: mention_state(bigint, bigint, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.mention_state(p_entity bigint, p_window bigint, released text[]) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- '{}': some mention may be shown; else the closed subjects that withhold them all; null:
    -- the entity has no mention in the window. A relation is shown only when both of its
    -- ends are shown in its window (exo.dossier, exo.related).
    with x as (
        select case when m.chunk_id is null
                    then exo_private.window_withheld(m.window_id, released)
                    else exo_private.unreleased(c.charged_subjects, released) end as held
        from exo_private.mentions m
        join exo_private.entities e on e.id = m.entity_id
        left join exo_private.chunks c on c.workspace = e.workspace and c.id = m.chunk_id
        where m.entity_id = p_entity and m.window_id = p_window
    )
    select case when not exists (select 1 from x) then null
                when exists (select 1 from x where x.held = '{}') then '{}'::text[]
                else (select array_agg(distinct s order by s) from x cross join lateral unnest(x.held) s) end
$$;

ALTER FUNCTION exo_private.mention_state(p_entity bigint, p_window bigint, released text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION mention_state(p_entity bigint, p_window bigint, released text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.mention_state(p_entity bigint, p_window bigint, released text[]) IS 'Whether the mentions of an entity in an extraction window may be shown to a caller whose bridge opens released (exo_private.released_keys): {} when one may, else the closed subjects that withhold them all; null when the entity has no mention there.';

--
-- Name: merge_extraction(bigint, integer, jsonb, jsonb); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    win record;
    names text[];
    keys text[];
    ent_ids bigint[];
    ent_keys text[];
    ent_names text[];
    new_ids bigint[];
    rel_ids bigint[];
    n_mentions int;
begin
    select w.id, w.workspace, w.document_id, w.char_start, w.char_end into win
    from exo_private.extraction_windows w
    where w.id = p_window_id;
    if not found then
        raise exception 'extraction window % does not exist', p_window_id
            using hint = 'its document was re-chunked or deleted since the job was queued; drop the job';
    end if;

    -- A share lock on the generation: bump_generation (which locks it for update) waits
    -- for this merge, or this merge sees the newer generation and writes nothing.
    perform 1 from exo_private.extraction_generations g
    where g.workspace = win.workspace and g.generation = p_generation
    for share;
    if not found then
        raise exception 'generation % of workspace % does not exist', p_generation, win.workspace
            using hint = 'take it from exo_private.current_generation(workspace, model)';
    end if;
    if exists (select 1 from exo_private.extraction_generations g
               where g.workspace = win.workspace and g.generation > p_generation) then
        -- The model changed while this window was out; bump_generation queued it again.
        return jsonb_build_object('entities_new', 0, 'entities_seen', 0, 'mentions_new', 0,
                                  'relations_new', 0, 'stale_generation', true);
    end if;

    -- Every distinct name (entities, subjects, objects) keyed once.
    with given as (
        select pg_catalog.btrim(x.item ->> 'name') as name
        from jsonb_array_elements(coalesce(p_entities, '[]')) x(item)
        union
        select pg_catalog.btrim(x.item ->> side)
        from jsonb_array_elements(coalesce(p_relations, '[]')) x(item),
             unnest(array['subject', 'object']) side
    ), keyed as materialized (
        select g.name, exo_private.canonical_key(g.name) as key
        from given g
        where g.name is not null
    )
    select array_agg(k.name), array_agg(k.key) into names, keys
    from keyed k
    where k.key is not null;

    -- Entities: identity (workspace, generation, type, key); the first display name stays.
    with items as (
        select distinct on (x.item ->> 'type', k.key)
               (x.item ->> 'type')::exo_private.entity_type as type, k.key, k.name
        from jsonb_array_elements(coalesce(p_entities, '[]')) with ordinality x(item, ord)
        join unnest(names, keys) k(name, key) on k.name = pg_catalog.btrim(x.item ->> 'name')
        order by x.item ->> 'type', k.key, x.ord
    ), inserted as (
        insert into exo_private.entities (workspace, generation, type, canonical_key, name)
        select win.workspace, p_generation, i.type, i.key, i.name
        from items i
        order by i.type, i.key
        on conflict do nothing
        returning exo_private.entities.id
    )
    select coalesce(array_agg(inserted.id), '{}') into new_ids from inserted;

    -- The entities of this extraction, in the order the model gave them (a separate
    -- statement, so it sees rows a concurrent merge committed while this one waited).
    select coalesce(array_agg(e.id order by x.ord), '{}'),
           coalesce(array_agg(e.canonical_key order by x.ord), '{}'),
           coalesce(array_agg(k.name order by x.ord), '{}')
      into ent_ids, ent_keys, ent_names
    from jsonb_array_elements(coalesce(p_entities, '[]')) with ordinality x(item, ord)
    join unnest(names, keys) k(name, key) on k.name = pg_catalog.btrim(x.item ->> 'name')
    join exo_private.entities e
      on e.workspace = win.workspace and e.generation = p_generation
     and e.type = (x.item ->> 'type')::exo_private.entity_type and e.canonical_key = k.key;

    -- Mentions: the chunks of this window's span that contain the name (case and
    -- whitespace ignored), or one row without a chunk when none does.
    with chunk_text as materialized (
        select c.id, pg_catalog.lower(pg_catalog.regexp_replace(c.body, '\s+', ' ', 'g')) as body
        from exo_private.chunks c
        where c.workspace = win.workspace and c.document_id = win.document_id
          and c.char_start < win.char_end and c.char_end > win.char_start
    ), ents as (
        select distinct on (u.id) u.id, u.name,
               pg_catalog.lower(pg_catalog.regexp_replace(u.name, '\s+', ' ', 'g')) as needle
        from unnest(ent_ids, ent_names) with ordinality u(id, name, ord)
        order by u.id, u.ord
    ), found as (
        select ents.id, ents.name, chunk_text.id as chunk_id
        from ents join chunk_text on pg_catalog.strpos(chunk_text.body, ents.needle) > 0
    ), inserted as (
        insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface)
        select found.id, win.id, win.document_id, found.chunk_id, found.name from found
        union all
        select ents.id, win.id, win.document_id, null, ents.name
        from ents where not exists (select 1 from found where found.id = ents.id)
        on conflict do nothing
        returning 1
    )
    select count(*) into n_mentions from inserted;

    -- Relations: subject and object resolved by key through this extraction's entities
    -- (the first one listed when a key has several types); unknown names and self-loops
    -- are skipped.
    with rels as (
        select pg_catalog.btrim(x.item ->> 'subject') as subject,
               pg_catalog.btrim(x.item ->> 'object') as object,
               coalesce(pg_catalog.btrim(x.item ->> 'predicate'), '') as predicate_raw
        from jsonb_array_elements(coalesce(p_relations, '[]')) x(item)
    ), resolved as (
        select (select u.id from unnest(ent_ids, ent_keys) with ordinality u(id, key, ord)
                 where u.key = sk.key order by u.ord limit 1) as subject_id,
               (select u.id from unnest(ent_ids, ent_keys) with ordinality u(id, key, ord)
                 where u.key = ok.key order by u.ord limit 1) as object_id,
               rels.predicate_raw
        from rels
        join unnest(names, keys) sk(name, key) on sk.name = rels.subject
        join unnest(names, keys) ok(name, key) on ok.name = rels.object
    ), inserted as (
        insert into exo_private.relations
            (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id)
        select win.workspace, p_generation, r.subject_id, r.object_id, r.predicate_raw,
               exo_private.normalise_predicate(r.predicate_raw), win.id, win.document_id
        from resolved r
        where r.subject_id is not null and r.object_id is not null and r.subject_id <> r.object_id
        on conflict do nothing
        returning exo_private.relations.id
    )
    select coalesce(array_agg(inserted.id), '{}') into rel_ids from inserted;

    perform exo_private.project_entities(ent_ids);
    perform exo_private.project_relations(rel_ids);

    return jsonb_build_object(
        'entities_new', cardinality(new_ids),
        'entities_seen', (select count(distinct x) from unnest(ent_ids) x) - cardinality(new_ids),
        'mentions_new', n_mentions,
        'relations_new', cardinality(rel_ids));
end
$$;

ALTER FUNCTION exo_private.merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb) OWNER TO exo_owner;

--
-- Name: FUNCTION merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb) IS 'Merge one window''s validated extraction: upsert entities by (workspace, generation, type, key), mentions in the window''s chunks that contain the name, relations between listed names; project them into the AGE graph. Idempotent. Returns {entities_new, entities_seen, mentions_new, relations_new} (plus stale_generation when a newer generation exists, having written nothing). Raises when the window is gone.';

--
-- Name: message_bands(date[], date); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.message_bands(written date[], today date) RETURNS text[]
    LANGUAGE plpython3u STABLE STRICT
    SET search_path TO 'exo_private', 'pg_temp'
    SET "DateStyle" TO 'ISO, YMD'
    AS $_$
"""Temporal banding of a document (stdlib only).

Authority order for the band: frontmatter `band`, then inference from the date the document
was written. That date comes from the best evidence present, in this order, and the reason
names the source:

1. frontmatter `date`;
2. the format's own metadata (metadata["date"]: an email's Date header, a PDF's creation date,
   DOCX/ODT core properties, EPUB dc:date, HTML meta tags), unless it is a tool's default
   (TOOL_DEFAULT_DATES, the epochs) or later than the file's modification time;
3. a date or year in the title or the first lines (HEAD_LINES lines of at most HEAD_LINE_CHARS);
4. the first full date in the opening of the text (TEXT_DATE_SEARCH_CHARS);
5. the last full date in the closing lines (CLOSING_CHARS: a signature or a trailer);
6. a date or year in the path;
7. the file's modification time.

Years run from 1000 to today. A full date ("1803-03-04", "4 March 1803", "March 4, 1803",
"04-MAR-1803") is a date wherever it stands; a bare year counts only where it reads as a year
(year_in_line) and never next to a currency, a label such as "room" or "No.", or a noun
("1500 people", "1850 km"). A canonical document is current unless its frontmatter says otherwise.
"""

import datetime
import json
import posixpath
import re

"""English month names for the date readers (stdlib only): banding and temporal."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip

#: A regex group matching any month name or abbreviation, with an optional dot.
MONTH_PATTERN = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"

BANDS = ("current", "recent", "archival")
FIRST_YEAR = 1000
TEXT_DATE_SEARCH_CHARS = 1000
CLOSING_CHARS = 500
HEAD_LINES = 3
HEAD_LINE_CHARS = 200
#: Dates that formats and tools write when nobody set one: the Unix, DOS/zip, Mac, Windows and
#: spreadsheet epochs, and the creation dates of python-docx's and python-pptx's templates.
TOOL_DEFAULT_DATES = frozenset(
    datetime.date(*ymd)
    for ymd in [
        (1970, 1, 1), (1980, 1, 1), (1904, 1, 1), (1601, 1, 1), (1899, 12, 30), (1899, 12, 31),
        (1900, 1, 1), (2013, 12, 23), (2013, 1, 27),
    ]
)  # fmt: skip
#: Metadata dates may be written in another time zone than the file's mtime: a day of slack.
MTIME_SLACK = datetime.timedelta(days=1)

def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}

_YEAR = r"(1\d{3}|20\d\d)"
_DATE_PATTERNS = [
    (re.compile(r"(?<![\d.])" + _YEAR + r"-(\d\d)-(\d\d)(?!\d)"), ("y", "m", "d")),
    (
        re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH_PATTERN + r",?\s+" + _YEAR + r"(?!\d)", re.I),
        ("d", "M", "y"),
    ),
    (
        re.compile(r"\b" + MONTH_PATTERN + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR + r"(?!\d)", re.I),
        ("M", "d", "y"),
    ),
    (re.compile(r"\b(\d{1,2})-" + MONTH_PATTERN + r"-" + _YEAR + r"(?!\d)", re.I), ("d", "M", "y")),
]
_PATH_DATE = re.compile(r"(?<!\d)" + _YEAR + r"[-_.]?(\d\d)[-_.]?(\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)" + _YEAR + r"(?!\d)")
_PATH_PART_YEAR = re.compile(r"(?<![^/])\d{4}(?:[-_ .]|/|$)")

# A bare year: four digits not glued to a word, a currency sign, a reference sign ('#', '!', '@',
# '~') or a decimal or thousands separator, optionally a range ("1861-65", "1986/87", "1861-1865");
# then what stands before and after it.
_DASHES = "-\u2013\u2014"
_NOT_GLUED = r"(?<![\w$£€¥#!@~])(?<!\d[.,])"
_RANGE = r"(\s*[" + _DASHES + r"/]\s*(?:1\d{3}|20\d\d|\d\d)(?!\d))?"
_YEAR_TOKEN = re.compile(_NOT_GLUED + _YEAR + r"(?![\w%]|[.,:]\d)" + _RANGE)
_WORD_BEFORE = re.compile(r"([^\W\d_]+\.?)[\s:]*$")
#: Words after which a year reads as a year.
_YEAR_CUES = frozenset([
    "in", "of", "since", "from", "by", "until", "till", "to", "around", "circa", "c.", "ca.", "c", "ca",
    "anno", "year", "early", "late", "mid", "spring", "summer", "autumn", "fall", "winter", "dated",
    "written", *MONTHS, *(m + "." for m in MONTHS),
])  # fmt: skip
#: Labels after which four digits are a number, not a year.
_NUMBER_LABELS = frozenset([
    "no", "nr", "number", "num", "room", "rm", "flight", "page", "pages", "pp", "p", "vol", "volume",
    "chapter", "ch", "section", "sec", "route", "suite", "apt", "apartment", "box", "track", "platform",
    "gate", "bus", "line", "item", "step", "ticket", "order", "invoice", "account", "model", "version",
    "v", "ver", "release", "code", "zip", "tel", "phone", "fax", "ext", "id", "serial", "part", "lot",
    "unit", "building", "floor", "highway", "street", "st", "avenue", "ave", "road", "rd", "km", "mile",
    "miles", "issue", "exhibit", "table", "figure", "fig", "rule", "article", "art", "psalm", "hymn",
    "opus", "op", "bwv", "kv", "total", "population", "count", "sum", "score", "price", "cost", "amount",
    "balance", "capacity", "height", "altitude", "elevation", "distance", "length", "weight", "size",
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "dm", "dlrs", "dollars", "rs", "inr", "yen",
])  # fmt: skip
#: Words that may follow a year in a sentence ("in 1803 the ...", "1796 and 1797").
_FUNCTION_WORDS = frozenset([
    "and", "or", "to", "the", "a", "an", "at", "by", "for", "when", "was", "were", "is", "he", "she",
    "it", "i", "we", "they", "on", "with", "as", "that", "which", "who", "after", "before", "until",
    "till", "while",
])  # fmt: skip
_ERA = re.compile(r"(?:a\.?d\.?|c\.?e\.?)(?![\w.])", re.I)
_BEFORE_ERA = re.compile(r"(?:b\.?c\.?|b\.?c\.?e\.?)(?![\w.])", re.I)
_CLOSER = re.compile(r"[,;.)\]:!?" + _DASHES[1:] + r"]|-\s|$")
_CODE_AFTER = re.compile(r"[-/]\d")
#: Marks after which a year reads as one; a dash only spaced ("Speech - 1796", not "CVE-2023").
_CUE_MARKS = (",", "(", "[", ":", " -", "\u2013", "\u2014")
_NEXT_WORD = re.compile(r"([^\W\d_]+)")

def _make_date(fields, order):
    values = dict(zip(order, fields, strict=False))
    month = MONTHS[values["M"].lower()] if "M" in values else int(values["m"])
    try:
        return datetime.date(int(values["y"]), month, int(values["d"]))
    except ValueError:
        return None

def _year_date(year, today, month=None):
    """A year (or a month of it) as a day: 1 July (or the month's first), never after today."""
    return min(datetime.date(year, month or 7, 1), today)

def full_dates(text, today):
    """[(start, date, matched, "date")]: the full dates in text, FIRST_YEAR to today, in order."""
    found = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = _make_date(m.groups(), order)
            if day and day <= today:
                found.append((m.start(), day, m.group(0), "date"))
    return sorted(found)

def year_in_line(line, today):
    """(start, date, matched, kind) of the first bare year in one line that reads as a year, or None.

    It reads as a year after a cue ("in", "of", a month name, ...), after a comma, a spaced dash,
    a colon or an opening parenthesis, at the start of the line, or before the end of the line, a closing
    punctuation mark, an era ("AD") or a function word. Never after a number label or a currency,
    never inside a longer code ("CVE-2023-40403"), never before another word, a percent sign or
    "BC". After a month name it is that month."""
    for m in _YEAR_TOKEN.finditer(line):
        year = int(m.group(1))
        if year > today.year:
            continue
        before = line[: m.start()].rstrip()
        after = line[m.end() :].lstrip()
        cue = _WORD_BEFORE.search(before)
        word = cue.group(1).lower() if cue else ""
        if word.rstrip(".") in _NUMBER_LABELS:
            continue
        if _BEFORE_ERA.match(after):
            continue
        if _CODE_AFTER.match(after):
            continue  # part of a longer code: "CVE-2023-40403", "2019/0042"
        closes = bool(_CLOSER.match(after) or _ERA.match(after))
        next_word = _NEXT_WORD.match(after)
        if next_word and not closes and next_word.group(1).lower() not in _FUNCTION_WORDS:
            continue  # "1500 people", "1850 km", "2019 budget"
        cued = word in _YEAR_CUES or before in ("", "-") or before.endswith(_CUE_MARKS)
        if not (cued or closes):
            continue
        month = MONTHS.get(word.rstrip(".")) if cue else None
        if month:
            return cue.start(1), _year_date(year, today, month), line[cue.start(1) : m.end(1)], "month"
        return m.start(), _year_date(year, today), m.group(1), "year"
    return None

def parse_date(value, today=None):
    """A date from a frontmatter or metadata value: a date or datetime, an ISO string, a full
    date in words (an email's "Mon, 01 Jan 2001 ..." too), a year alone (as 1 July) or a year
    and month (as its first day); None if none."""
    today = today or datetime.date.today()
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and FIRST_YEAR <= value <= today.year:
        return _year_date(value, today)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)", text)
    if m:
        return _make_date(m.groups(), ("y", "m", "d")) if int(m.group(1)) >= FIRST_YEAR else None
    m = re.fullmatch(r"(\d{4})(?:-(\d\d))?", text)
    if m:
        year = int(m.group(1))
        month = int(m.group(2)) if m.group(2) and 1 <= int(m.group(2)) <= 12 else None
        return _year_date(year, today, month) if FIRST_YEAR <= year <= today.year else None
    found = full_dates(text, datetime.date.max)
    return found[0][1] if found else None

def metadata_date(metadata, mtime_ns, today):
    """(date, reason) from the format's own metadata, or None: metadata["date"] unless it is before
    FIRST_YEAR, a tool's default, after today, or after the file's mtime (with MTIME_SLACK)."""
    day = parse_date(metadata.get("date"), today)
    if day is None or day.year < FIRST_YEAR or day in TOOL_DEFAULT_DATES or day > today:
        return None
    if day > _mtime_date(mtime_ns) + MTIME_SLACK:
        return None
    source = metadata.get("date_source") or "format metadata"
    return day, "metadata date '" + day.isoformat() + "' (" + str(source) + ")"

def _head_lines(text):
    """The first HEAD_LINES non-empty lines (a heading's '#' dropped), those of at most HEAD_LINE_CHARS:
    a longer line is prose, not a title."""
    lines = []
    for line in text[: HEAD_LINES * (HEAD_LINE_CHARS + 1) * 4].splitlines():  # never split a whole book
        line = line.strip().lstrip("#").strip()
        if line:
            lines.append(line)
            if len(lines) == HEAD_LINES:
                break
    return [line for line in lines if len(line) <= HEAD_LINE_CHARS]

def date_in_head(title, text, today):
    """(date, reason) from the title or the first lines, or None: in each, in order, the first
    full date or year that reads as one (a year as 1 July, a month and year as its first day)."""
    for where, lines in (("title", [title] if title else []), ("first lines", _head_lines(text))):
        for line in lines:
            hits = full_dates(line, today)[:1] + [hit for hit in [year_in_line(line, today)] if hit]
            if hits:
                _start, day, matched, kind = min(hits)
                return day, kind + " in " + where + " '" + matched + "'"
    return None

def date_in_text(text, today):
    """(start, date, matched, kind): the first full date in the opening of the text, not in the future."""
    found = full_dates(text[:TEXT_DATE_SEARCH_CHARS], today)
    return found[0] if found else None

def date_at_end(text, today):
    """(start, date, matched, kind): the last full date in the closing lines (a signature, a trailer)."""
    found = full_dates(text[-CLOSING_CHARS:], today)
    return found[-1] if found else None

def date_in_path(path, today):
    """A full date in the file name or folders, else the last year in them (as 1 July). A year
    before 1900 counts only as a whole folder or the start of a name ("1848/", "1848-letter.txt"),
    not inside one ("ticket-1500.txt")."""
    for m in _PATH_DATE.finditer(path):
        day = _make_date(m.groups(), ("y", "m", "d"))
        if day and day <= today:
            return day, "date in path '" + m.group(0) + "'"
    years = [
        int(m.group(1))
        for m in _PATH_YEAR.finditer(path)
        if int(m.group(1)) <= today.year
        and (int(m.group(1)) >= 1900 or _PATH_PART_YEAR.match(path, m.start()))
    ]
    if years:
        return _year_date(years[-1], today), "year in path '" + str(years[-1]) + "'"
    return None

def _mtime_date(mtime_ns):
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()

def written_date(frontmatter, text, path, mtime_ns, today, metadata=None):
    """(date, reason): when the document was written, and how that was found (the module's order)."""
    metadata = metadata or {}
    day = parse_date(frontmatter.get("date"), today)
    if day:  # the person's word, even for a day still to come
        return day, "frontmatter date"
    hit = metadata_date(metadata, mtime_ns, today)
    if hit:
        return hit
    title = metadata.get("title")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    hit = date_in_head(title if isinstance(title, str) and title != stem else None, text, today)
    if hit:
        return hit
    hit = date_in_text(text, today)
    if hit:
        return hit[1], "date in text '" + hit[2] + "'"
    hit = date_at_end(text, today)
    if hit:
        return hit[1], "date in closing lines '" + hit[2] + "'"
    hit = date_in_path(path, today)
    if hit:
        return hit
    return _mtime_date(mtime_ns), "file modification time"

def band_for(frontmatter, text, path, mtime_ns, canonical, today, current_days, recent_days, metadata=None):
    """{band, source, reason, written_at} for one document; metadata: the format's own (title, date)."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today, metadata)
    declared = str(frontmatter.get("band", "")).strip().lower()
    if declared in BANDS:
        return {
            "band": declared,
            "source": "frontmatter",
            "reason": "frontmatter band",
            "written_at": written.isoformat(),
        }
    band, reason = band_by_age(written, canonical, today, current_days, recent_days, how)
    return {"band": band, "source": "inferred", "reason": reason, "written_at": written.isoformat()}

def band_by_age(written, canonical, today, current_days, recent_days, how=None):
    """(band, reason) of a document written on `written`, as of `today`: the rule both ingest
    and the daily re-banding (exo_private.reband) apply. `how` says how the date was found."""
    age = (today - written).days
    if age <= current_days:
        band = "current"
    elif age <= recent_days:
        band = "recent"
    else:
        band = "archival"
    reason = (
        "written " + written.isoformat() + (" (" + how + ")" if how else "") + ", " + str(age) + " days ago"
    )
    if canonical and band != "current":
        band = "current"
        reason += "; canonical document: never demoted by inference"
    return band, reason
import datetime

settings = banding_settings(plpy)
day = datetime.date.fromisoformat(today)
return [
    None
    if w is None
    else band_by_age(
        datetime.date.fromisoformat(w), False, day, settings["banding.current_days"], settings["banding.recent_days"]
    )[0]
    for w in written
]
$_$;

ALTER FUNCTION exo_private.message_bands(written date[], today date) OWNER TO exo_owner;

--
-- Name: FUNCTION message_bands(written date[], today date); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.message_bands(written date[], today date) IS 'The band (current, recent, archival) of each date as of today, by the rule of document bands (plpy/banding.py band_by_age, the banding.* settings); null for a null date, and for null arguments. exo.search_messages bands the messages it finds with it.';

--
-- Name: normalise_predicate(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.normalise_predicate(raw text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
    with words as (
        -- Latin accents folded to ASCII, apostrophes dropped ("doesn't" -> DOESNT), then
        -- every run of anything but a letter or digit becomes one underscore.
        select pg_catalog.btrim(pg_catalog.regexp_replace(pg_catalog.upper(
                   pg_catalog.translate(
                       pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                           pg_catalog.regexp_replace(coalesce(raw, ''), '[''\u2019`]', '', 'g'),
                           'ß', 'ss'), 'æ', 'ae'), 'Æ', 'AE'), 'œ', 'oe'),
                       'ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿŒ',
                       'AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOOooooooUUUUuuuuYyyO')),
                   '[^A-Z0-9]+', '_', 'g'), '_') as w
    ), labelled as (
        select case when w = '' then 'RELATED_TO'
                    when w ~ '^[0-9]' then 'RELATED_TO_' || w
                    else w end as l
        from words
    )
    select case when t ~ '^[A-Z][A-Z0-9_]{0,62}$' then t else 'RELATED_TO' end
    from (select pg_catalog.rtrim(pg_catalog.left(l, 63), '_') as t from labelled) trimmed
$_$;

ALTER FUNCTION exo_private.normalise_predicate(raw text) OWNER TO exo_owner;

--
-- Name: FUNCTION normalise_predicate(raw text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.normalise_predicate(raw text) IS 'Edge label of a predicate: upper snake case of its words (Latin accents folded, apostrophes dropped, other non-alphanumerics one _), at most 63 characters; RELATED_TO when nothing is left (null, punctuation, non-Latin script), RELATED_TO_ before one that starts with a digit.';

--
-- Name: ocr_job(bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.ocr_job(p_document_id bigint) RETURNS TABLE(root text, path_bytes bytea, sha256 text, pages integer)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select s.root, d.path_bytes, d.sha256,
           case when jsonb_typeof(t.metadata -> 'pages') = 'number' then (t.metadata ->> 'pages')::int end
    from exo_private.documents d
    join exo_private.sources s on s.id = d.source_id
    join exo_private.text_cache t on t.sha256 = d.sha256
    where d.id = p_document_id and d.stage = 'ocr_pending'
$$;

ALTER FUNCTION exo_private.ocr_job(p_document_id bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION ocr_job(p_document_id bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.ocr_job(p_document_id bigint) IS 'The source root, raw path, sha256 and page count (from extraction) of a document that waits at ocr_pending; no row when it no longer waits (read already, changed or deleted).';

--
-- Name: outstanding_work(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.outstanding_work() RETURNS TABLE(queue text, target_id bigint, document_id bigint, state text)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with model as (select exo_private.active_embedding_model() as id),
    targets as (
        select 'embed'::text as queue, c.id as target_id, c.document_id
        from exo_private.chunks c
        cross join model
        where not exists (select 1 from exo_private.chunk_embeddings e
                          where e.workspace = c.workspace and e.chunk_id = c.id and e.model_id = model.id)
        union all
        select 'extract', w.id, w.document_id
        from exo_private.extraction_windows w
        where w.extracted_at is null
    ), queued as (
        select 'embed'::text as queue, (q.message ->> 'chunk_id')::bigint as target_id,
               bool_or(q.vt > pg_catalog.now()) as in_flight
        from pgmq.q_embed q group by 2
        union all
        select 'extract', (q.message ->> 'window_id')::bigint, bool_or(q.vt > pg_catalog.now())
        from pgmq.q_extract q group by 2
    ), dead as (
        select distinct d.message ->> 'queue' as queue,
               (d.message -> 'message' ->> case d.message ->> 'queue' when 'embed' then 'chunk_id'
                                                                   when 'extract' then 'window_id' end
               )::bigint as target_id
        from pgmq.q_dead_letter d
    ), failed as (
        select distinct f.queue, f.target_id from exo_private.job_failures f where f.retried_at is null
    )
    select t.queue, t.target_id, t.document_id,
           case when q.in_flight then 'in_flight'
                when q.target_id is not null then 'pending'
                when d.target_id is not null then 'dead'
                when f.target_id is not null then 'failed'
                else 'lost' end
    from targets t
    left join queued q on q.queue = t.queue and q.target_id = t.target_id
    left join dead d on d.queue = t.queue and d.target_id = t.target_id
    left join failed f on f.queue = t.queue and f.target_id = t.target_id
$$;

ALTER FUNCTION exo_private.outstanding_work() OWNER TO exo_owner;

--
-- Name: FUNCTION outstanding_work(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.outstanding_work() IS 'Every chunk without a vector of the active embedding model (queue embed) and every window not extracted (queue extract), with its document and state: in_flight (a worker holds its message), pending (its message waits), dead (dead-lettered), failed (a recorded failure, not retried) or lost (no message at all). Dead, failed and lost work never advances on its own.';

--
-- Name: parse_entity_type(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.parse_entity_type(entity_type text) RETURNS exo_private.entity_type
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    parsed exo_private.entity_type;
begin
    if entity_type is null or pg_catalog.btrim(entity_type) = '' then
        return null;
    end if;
    select t into parsed
    from unnest(enum_range(null::exo_private.entity_type)) t
    where pg_catalog.lower(t::text) = pg_catalog.lower(pg_catalog.btrim(entity_type));
    if parsed is null then
        perform exo_private.invalid_argument(
            format('entity_type must be one of %s, got %s',
                   pg_catalog.array_to_string(enum_range(null::exo_private.entity_type), ', '),
                   exo_private.quoted(entity_type)));
    end if;
    return parsed;
end
$$;

ALTER FUNCTION exo_private.parse_entity_type(entity_type text) OWNER TO exo_owner;

--
-- Name: FUNCTION parse_entity_type(entity_type text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.parse_entity_type(entity_type text) IS 'The entity type named (case-insensitive), null for null or blank; raises invalid_parameter_value naming entity_type and the types otherwise.';

--
-- Name: plan_document(jsonb, text, jsonb, jsonb, date); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date) RETURNS jsonb
    LANGUAGE plpython3u STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Plan one document: route, band, chunks with deference marks, extraction windows.

Chunks and windows carry character offsets (start, end) and the same offsets on
the UTF-8 text (byte_start, byte_end), by which the database cuts them.

The database calls this (exo_private.plan_document) and applies the plan; it is
plain stdlib Python so tests import it directly. Imports of sibling plpy modules
are inlined by the migrator.
"""

"""Temporal banding of a document (stdlib only).

Authority order for the band: frontmatter `band`, then inference from the date the document
was written. That date comes from the best evidence present, in this order, and the reason
names the source:

1. frontmatter `date`;
2. the format's own metadata (metadata["date"]: an email's Date header, a PDF's creation date,
   DOCX/ODT core properties, EPUB dc:date, HTML meta tags), unless it is a tool's default
   (TOOL_DEFAULT_DATES, the epochs) or later than the file's modification time;
3. a date or year in the title or the first lines (HEAD_LINES lines of at most HEAD_LINE_CHARS);
4. the first full date in the opening of the text (TEXT_DATE_SEARCH_CHARS);
5. the last full date in the closing lines (CLOSING_CHARS: a signature or a trailer);
6. a date or year in the path;
7. the file's modification time.

Years run from 1000 to today. A full date ("1803-03-04", "4 March 1803", "March 4, 1803",
"04-MAR-1803") is a date wherever it stands; a bare year counts only where it reads as a year
(year_in_line) and never next to a currency, a label such as "room" or "No.", or a noun
("1500 people", "1850 km"). A canonical document is current unless its frontmatter says otherwise.
"""

import datetime
import json
import posixpath
import re

"""English month names for the date readers (stdlib only): banding and temporal."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip

#: A regex group matching any month name or abbreviation, with an optional dot.
MONTH_PATTERN = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"

BANDS = ("current", "recent", "archival")
FIRST_YEAR = 1000
TEXT_DATE_SEARCH_CHARS = 1000
CLOSING_CHARS = 500
HEAD_LINES = 3
HEAD_LINE_CHARS = 200
#: Dates that formats and tools write when nobody set one: the Unix, DOS/zip, Mac, Windows and
#: spreadsheet epochs, and the creation dates of python-docx's and python-pptx's templates.
TOOL_DEFAULT_DATES = frozenset(
    datetime.date(*ymd)
    for ymd in [
        (1970, 1, 1), (1980, 1, 1), (1904, 1, 1), (1601, 1, 1), (1899, 12, 30), (1899, 12, 31),
        (1900, 1, 1), (2013, 12, 23), (2013, 1, 27),
    ]
)  # fmt: skip
#: Metadata dates may be written in another time zone than the file's mtime: a day of slack.
MTIME_SLACK = datetime.timedelta(days=1)

def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}

_YEAR = r"(1\d{3}|20\d\d)"
_DATE_PATTERNS = [
    (re.compile(r"(?<![\d.])" + _YEAR + r"-(\d\d)-(\d\d)(?!\d)"), ("y", "m", "d")),
    (
        re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH_PATTERN + r",?\s+" + _YEAR + r"(?!\d)", re.I),
        ("d", "M", "y"),
    ),
    (
        re.compile(r"\b" + MONTH_PATTERN + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR + r"(?!\d)", re.I),
        ("M", "d", "y"),
    ),
    (re.compile(r"\b(\d{1,2})-" + MONTH_PATTERN + r"-" + _YEAR + r"(?!\d)", re.I), ("d", "M", "y")),
]
_PATH_DATE = re.compile(r"(?<!\d)" + _YEAR + r"[-_.]?(\d\d)[-_.]?(\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)" + _YEAR + r"(?!\d)")
_PATH_PART_YEAR = re.compile(r"(?<![^/])\d{4}(?:[-_ .]|/|$)")

# A bare year: four digits not glued to a word, a currency sign, a reference sign ('#', '!', '@',
# '~') or a decimal or thousands separator, optionally a range ("1861-65", "1986/87", "1861-1865");
# then what stands before and after it.
_DASHES = "-\u2013\u2014"
_NOT_GLUED = r"(?<![\w$£€¥#!@~])(?<!\d[.,])"
_RANGE = r"(\s*[" + _DASHES + r"/]\s*(?:1\d{3}|20\d\d|\d\d)(?!\d))?"
_YEAR_TOKEN = re.compile(_NOT_GLUED + _YEAR + r"(?![\w%]|[.,:]\d)" + _RANGE)
_WORD_BEFORE = re.compile(r"([^\W\d_]+\.?)[\s:]*$")
#: Words after which a year reads as a year.
_YEAR_CUES = frozenset([
    "in", "of", "since", "from", "by", "until", "till", "to", "around", "circa", "c.", "ca.", "c", "ca",
    "anno", "year", "early", "late", "mid", "spring", "summer", "autumn", "fall", "winter", "dated",
    "written", *MONTHS, *(m + "." for m in MONTHS),
])  # fmt: skip
#: Labels after which four digits are a number, not a year.
_NUMBER_LABELS = frozenset([
    "no", "nr", "number", "num", "room", "rm", "flight", "page", "pages", "pp", "p", "vol", "volume",
    "chapter", "ch", "section", "sec", "route", "suite", "apt", "apartment", "box", "track", "platform",
    "gate", "bus", "line", "item", "step", "ticket", "order", "invoice", "account", "model", "version",
    "v", "ver", "release", "code", "zip", "tel", "phone", "fax", "ext", "id", "serial", "part", "lot",
    "unit", "building", "floor", "highway", "street", "st", "avenue", "ave", "road", "rd", "km", "mile",
    "miles", "issue", "exhibit", "table", "figure", "fig", "rule", "article", "art", "psalm", "hymn",
    "opus", "op", "bwv", "kv", "total", "population", "count", "sum", "score", "price", "cost", "amount",
    "balance", "capacity", "height", "altitude", "elevation", "distance", "length", "weight", "size",
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "dm", "dlrs", "dollars", "rs", "inr", "yen",
])  # fmt: skip
#: Words that may follow a year in a sentence ("in 1803 the ...", "1796 and 1797").
_FUNCTION_WORDS = frozenset([
    "and", "or", "to", "the", "a", "an", "at", "by", "for", "when", "was", "were", "is", "he", "she",
    "it", "i", "we", "they", "on", "with", "as", "that", "which", "who", "after", "before", "until",
    "till", "while",
])  # fmt: skip
_ERA = re.compile(r"(?:a\.?d\.?|c\.?e\.?)(?![\w.])", re.I)
_BEFORE_ERA = re.compile(r"(?:b\.?c\.?|b\.?c\.?e\.?)(?![\w.])", re.I)
_CLOSER = re.compile(r"[,;.)\]:!?" + _DASHES[1:] + r"]|-\s|$")
_CODE_AFTER = re.compile(r"[-/]\d")
#: Marks after which a year reads as one; a dash only spaced ("Speech - 1796", not "CVE-2023").
_CUE_MARKS = (",", "(", "[", ":", " -", "\u2013", "\u2014")
_NEXT_WORD = re.compile(r"([^\W\d_]+)")

def _make_date(fields, order):
    values = dict(zip(order, fields, strict=False))
    month = MONTHS[values["M"].lower()] if "M" in values else int(values["m"])
    try:
        return datetime.date(int(values["y"]), month, int(values["d"]))
    except ValueError:
        return None

def _year_date(year, today, month=None):
    """A year (or a month of it) as a day: 1 July (or the month's first), never after today."""
    return min(datetime.date(year, month or 7, 1), today)

def full_dates(text, today):
    """[(start, date, matched, "date")]: the full dates in text, FIRST_YEAR to today, in order."""
    found = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = _make_date(m.groups(), order)
            if day and day <= today:
                found.append((m.start(), day, m.group(0), "date"))
    return sorted(found)

def year_in_line(line, today):
    """(start, date, matched, kind) of the first bare year in one line that reads as a year, or None.

    It reads as a year after a cue ("in", "of", a month name, ...), after a comma, a spaced dash,
    a colon or an opening parenthesis, at the start of the line, or before the end of the line, a closing
    punctuation mark, an era ("AD") or a function word. Never after a number label or a currency,
    never inside a longer code ("CVE-2023-40403"), never before another word, a percent sign or
    "BC". After a month name it is that month."""
    for m in _YEAR_TOKEN.finditer(line):
        year = int(m.group(1))
        if year > today.year:
            continue
        before = line[: m.start()].rstrip()
        after = line[m.end() :].lstrip()
        cue = _WORD_BEFORE.search(before)
        word = cue.group(1).lower() if cue else ""
        if word.rstrip(".") in _NUMBER_LABELS:
            continue
        if _BEFORE_ERA.match(after):
            continue
        if _CODE_AFTER.match(after):
            continue  # part of a longer code: "CVE-2023-40403", "2019/0042"
        closes = bool(_CLOSER.match(after) or _ERA.match(after))
        next_word = _NEXT_WORD.match(after)
        if next_word and not closes and next_word.group(1).lower() not in _FUNCTION_WORDS:
            continue  # "1500 people", "1850 km", "2019 budget"
        cued = word in _YEAR_CUES or before in ("", "-") or before.endswith(_CUE_MARKS)
        if not (cued or closes):
            continue
        month = MONTHS.get(word.rstrip(".")) if cue else None
        if month:
            return cue.start(1), _year_date(year, today, month), line[cue.start(1) : m.end(1)], "month"
        return m.start(), _year_date(year, today), m.group(1), "year"
    return None

def parse_date(value, today=None):
    """A date from a frontmatter or metadata value: a date or datetime, an ISO string, a full
    date in words (an email's "Mon, 01 Jan 2001 ..." too), a year alone (as 1 July) or a year
    and month (as its first day); None if none."""
    today = today or datetime.date.today()
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and FIRST_YEAR <= value <= today.year:
        return _year_date(value, today)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)", text)
    if m:
        return _make_date(m.groups(), ("y", "m", "d")) if int(m.group(1)) >= FIRST_YEAR else None
    m = re.fullmatch(r"(\d{4})(?:-(\d\d))?", text)
    if m:
        year = int(m.group(1))
        month = int(m.group(2)) if m.group(2) and 1 <= int(m.group(2)) <= 12 else None
        return _year_date(year, today, month) if FIRST_YEAR <= year <= today.year else None
    found = full_dates(text, datetime.date.max)
    return found[0][1] if found else None

def metadata_date(metadata, mtime_ns, today):
    """(date, reason) from the format's own metadata, or None: metadata["date"] unless it is before
    FIRST_YEAR, a tool's default, after today, or after the file's mtime (with MTIME_SLACK)."""
    day = parse_date(metadata.get("date"), today)
    if day is None or day.year < FIRST_YEAR or day in TOOL_DEFAULT_DATES or day > today:
        return None
    if day > _mtime_date(mtime_ns) + MTIME_SLACK:
        return None
    source = metadata.get("date_source") or "format metadata"
    return day, "metadata date '" + day.isoformat() + "' (" + str(source) + ")"

def _head_lines(text):
    """The first HEAD_LINES non-empty lines (a heading's '#' dropped), those of at most HEAD_LINE_CHARS:
    a longer line is prose, not a title."""
    lines = []
    for line in text[: HEAD_LINES * (HEAD_LINE_CHARS + 1) * 4].splitlines():  # never split a whole book
        line = line.strip().lstrip("#").strip()
        if line:
            lines.append(line)
            if len(lines) == HEAD_LINES:
                break
    return [line for line in lines if len(line) <= HEAD_LINE_CHARS]

def date_in_head(title, text, today):
    """(date, reason) from the title or the first lines, or None: in each, in order, the first
    full date or year that reads as one (a year as 1 July, a month and year as its first day)."""
    for where, lines in (("title", [title] if title else []), ("first lines", _head_lines(text))):
        for line in lines:
            hits = full_dates(line, today)[:1] + [hit for hit in [year_in_line(line, today)] if hit]
            if hits:
                _start, day, matched, kind = min(hits)
                return day, kind + " in " + where + " '" + matched + "'"
    return None

def date_in_text(text, today):
    """(start, date, matched, kind): the first full date in the opening of the text, not in the future."""
    found = full_dates(text[:TEXT_DATE_SEARCH_CHARS], today)
    return found[0] if found else None

def date_at_end(text, today):
    """(start, date, matched, kind): the last full date in the closing lines (a signature, a trailer)."""
    found = full_dates(text[-CLOSING_CHARS:], today)
    return found[-1] if found else None

def date_in_path(path, today):
    """A full date in the file name or folders, else the last year in them (as 1 July). A year
    before 1900 counts only as a whole folder or the start of a name ("1848/", "1848-letter.txt"),
    not inside one ("ticket-1500.txt")."""
    for m in _PATH_DATE.finditer(path):
        day = _make_date(m.groups(), ("y", "m", "d"))
        if day and day <= today:
            return day, "date in path '" + m.group(0) + "'"
    years = [
        int(m.group(1))
        for m in _PATH_YEAR.finditer(path)
        if int(m.group(1)) <= today.year
        and (int(m.group(1)) >= 1900 or _PATH_PART_YEAR.match(path, m.start()))
    ]
    if years:
        return _year_date(years[-1], today), "year in path '" + str(years[-1]) + "'"
    return None

def _mtime_date(mtime_ns):
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()

def written_date(frontmatter, text, path, mtime_ns, today, metadata=None):
    """(date, reason): when the document was written, and how that was found (the module's order)."""
    metadata = metadata or {}
    day = parse_date(frontmatter.get("date"), today)
    if day:  # the person's word, even for a day still to come
        return day, "frontmatter date"
    hit = metadata_date(metadata, mtime_ns, today)
    if hit:
        return hit
    title = metadata.get("title")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    hit = date_in_head(title if isinstance(title, str) and title != stem else None, text, today)
    if hit:
        return hit
    hit = date_in_text(text, today)
    if hit:
        return hit[1], "date in text '" + hit[2] + "'"
    hit = date_at_end(text, today)
    if hit:
        return hit[1], "date in closing lines '" + hit[2] + "'"
    hit = date_in_path(path, today)
    if hit:
        return hit
    return _mtime_date(mtime_ns), "file modification time"

def band_for(frontmatter, text, path, mtime_ns, canonical, today, current_days, recent_days, metadata=None):
    """{band, source, reason, written_at} for one document; metadata: the format's own (title, date)."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today, metadata)
    declared = str(frontmatter.get("band", "")).strip().lower()
    if declared in BANDS:
        return {
            "band": declared,
            "source": "frontmatter",
            "reason": "frontmatter band",
            "written_at": written.isoformat(),
        }
    band, reason = band_by_age(written, canonical, today, current_days, recent_days, how)
    return {"band": band, "source": "inferred", "reason": reason, "written_at": written.isoformat()}

def band_by_age(written, canonical, today, current_days, recent_days, how=None):
    """(band, reason) of a document written on `written`, as of `today`: the rule both ingest
    and the daily re-banding (exo_private.reband) apply. `how` says how the date was found."""
    age = (today - written).days
    if age <= current_days:
        band = "current"
    elif age <= recent_days:
        band = "recent"
    else:
        band = "archival"
    reason = (
        "written " + written.isoformat() + (" (" + how + ")" if how else "") + ", " + str(age) + " days ago"
    )
    if canonical and band != "current":
        band = "current"
        reason += "; canonical document: never demoted by inference"
    return band, reason
"""Split text into chunks at paragraph boundaries (stdlib only).

Used for retrieval chunks (about 1,200 characters) and for the graph worker's
extraction windows (6,000 characters, 400 overlap). Returns character spans;
utf8_spans turns them into offsets on the UTF-8 text, so the database cuts
each piece from the encoded text in time linear in the piece (substr on text
walks every character before the start, which made a document cost the square
of its size). Every function here is linear in the length of the text.
"""

import re

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

def _paragraph_spans(text):
    spans = []
    start = 0
    for m in _PARAGRAPH_BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [_trim(text, s, e) for s, e in spans if text[s:e].strip()]

def _trim(text, start, end):
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end)

def _split_long(text, start, end, size):
    """Cut a paragraph longer than size at sentence ends, else at whitespace, else hard."""
    pieces = []
    while end - start > size:
        limit = start + size
        cut = None
        for m in _SENTENCE_END.finditer(text, start, limit):
            if m.start() > start:
                cut = m.start()
        if cut is None:
            space = text.rfind(" ", start + 1, limit)
            cut = space if space > start else limit
        pieces.append(_trim(text, start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return [p for p in pieces if p[1] > p[0]]

def split_text(text, size, overlap):
    """Spans (start, end) of chunks of at most `size` characters.

    Chunks hold whole paragraphs where they fit; a paragraph longer than `size`
    is cut at sentence ends. Trailing pieces of a chunk whose total length is at
    most `overlap` are repeated at the start of the next chunk."""
    if size <= 0:
        raise ValueError("size must be positive")
    pieces = []
    for start, end in _paragraph_spans(text):
        if end - start > size:
            pieces.extend(_split_long(text, start, end, size))
        else:
            pieces.append((start, end))
    chunks = []
    current = []
    for piece in pieces:
        if current and piece[1] - current[0][0] > size:
            chunks.append((current[0][0], current[-1][1]))
            carried = []
            for prev in reversed(current):
                if current[-1][1] - prev[0] > overlap or piece[1] - prev[0] > size:
                    break
                carried.insert(0, prev)
            current = carried
        current.append(piece)
    if current:
        chunks.append((current[0][0], current[-1][1]))
    return chunks

def utf8_spans(text, spans):
    """The same spans as byte offsets into text's UTF-8 encoding, in one pass over the text."""
    if text.isascii():
        return list(spans)
    offsets = {}
    done = size = 0
    for position in sorted({p for span in spans for p in span}):
        size += len(text[done:position].encode("utf-8"))
        offsets[position] = size
        done = position
    return [(offsets[start], offsets[end]) for start, end in spans]
"""Mark text charged for deferred subjects (stdlib only).

A chunk is charged for a subject when the document's frontmatter says so
(`charged: [subject]`), or when the subject or one of its aliases occurs near a
cue (a word like "funeral" or "died"). Near means in the same chunk, or in the
chunk and its document's title or path, which head every chunk: a note titled
"The funeral" that names Grandpa is charged where it names him. Each mark records
the rule that fired.

A chat message is charged the same way, where near means in the message or in the
message before or after it in its conversation (a cue in one message and the name
in the reply is how people talk), each message read with its sender's name and
the conversation's title.
"""

import re

def _phrase(words):
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words.split()) + r"(?!\w)", re.I)

def compile_subjects(subjects):
    """[(subject, [name patterns])] for [{"subject", "aliases"}]."""
    return [
        (
            s["subject"],
            [(name, _phrase(name)) for name in [s["subject"], *s.get("aliases", [])] if name.strip()],
        )
        for s in subjects
    ]

def compile_cues(cues):
    """[(cue, pattern)] for the cue words."""
    return [(cue, _phrase(cue)) for cue in cues if cue.strip()]

def _marks(text, subjects, cue_patterns, frontmatter_charged):
    declared = {}
    for item in frontmatter_charged or []:
        name = str(item).strip()
        if name:
            declared[name.lower()] = name
    marks = []
    for subject, names in subjects:
        named = [n.lower() for n, _p in names]
        if any(n in declared for n in named):
            for n in named:
                declared.pop(n, None)
            marks.append({"subject": subject, "rule": "frontmatter"})
            continue
        name_hit = next((n for n, p in names if p.search(text)), None)
        if name_hit is None:
            continue
        cue_hit = next((c for c, p in cue_patterns if p.search(text)), None)
        if cue_hit is not None:
            marks.append({"subject": subject, "rule": "cue '" + cue_hit + "' with '" + name_hit + "'"})
    # Subjects charged by frontmatter that are not (yet) on the deference list.
    marks.extend({"subject": name, "rule": "frontmatter"} for name in sorted(declared.values()))
    return marks

def charged_marks(text, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one text; `subjects` as from compile_subjects."""
    return _marks(text, subjects, compile_cues(cues), frontmatter_charged)

def heading(title, path):
    """The text that heads every chunk of a document: its title and path, one a line."""
    return "\n".join(str(part) for part in (title, path) if part)

def chunk_marks(text, head, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one chunk read under its document's heading (see heading())."""
    return charged_marks(head + "\n" + text if head else text, subjects, cues, frontmatter_charged)

def message_marks(lines, subjects, cues, title=None):
    """[[{subject, rule}]] for the messages of one conversation, in order.

    `lines` are the messages as "sender: body". A message is charged for a subject when a
    name of it and a cue occur in the message together with the message before or after it
    (and the conversation's title): both messages of such a pair are marked.
    """
    if not subjects or not lines:
        return [[] for _ in lines]
    cue_patterns = compile_cues(cues)
    head = title + "\n" if title else ""
    if len(lines) == 1:
        pairs = [_marks(head + lines[0], subjects, cue_patterns, [])]
    else:
        pairs = [
            _marks(head + lines[i] + "\n" + lines[i + 1], subjects, cue_patterns, [])
            for i in range(len(lines) - 1)
        ]
    result = []
    for i in range(len(lines)):
        merged = {}
        for marks in pairs[max(0, i - 1) : i + 1]:
            for mark in marks:
                merged.setdefault(mark["subject"], mark)
        result.append(list(merged.values()))
    return result
"""Route a document to a workspace, with a confidence (stdlib only).

Authority order: a person's review (quarantine approve/reassign), frontmatter
`workspace`, a workspace forced for the whole source (`exo ingest --workspace`),
folder rules, then the content. The content is judged by the learned router (a
multinomial naive Bayes over words, trained on the documents already in the
workspaces) once at least two workspaces have enough documents, and by the keyword
lists before that. Either's confidence gates quarantine: the learned router's
confidence is its posterior, and below its threshold the document waits in
quarantine (the keyword lists are not asked then).

The router learns only from decisions it did not make itself: frontmatter, a
forced workspace, a folder rule, a person's review and a confident keyword route
train it; a learned route never does (sql/105_routing.sql, router_training), so
its mistakes cannot feed on themselves.
"""

import json
import math
import re
from collections import Counter

_WORD = re.compile(r"[a-z][a-z0-9']*")
MIN_HITS = 3

def _decision(workspace, method, confidence, reasons, candidates=()):
    return {
        "workspace": workspace,
        "method": method,
        "confidence": round(confidence, 3),
        "reasons": list(reasons),
        "candidates": list(candidates),
    }

def classify(text, keywords):
    """Candidates [{workspace, score, hits}] by distinct keyword hits, best first."""
    counts = {}
    for word in _WORD.findall(text.lower()):
        counts[word] = counts.get(word, 0) + 1
    candidates = []
    for workspace, words in sorted(keywords.items()):
        hits = sorted({w for w in words if w in counts})
        score = sum(1.0 + min(counts[w], 5) / 5.0 for w in hits)
        candidates.append({"workspace": workspace, "score": round(score, 3), "hits": hits})
    candidates.sort(key=lambda c: (-c["score"], c["workspace"]))
    return candidates

def router_terms(text, max_chars, term_cap):
    """A document's words as the learned router counts them: its first max_chars characters,
    lowercased, each word at most term_cap times (a long document cannot outvote the rest)."""
    counts = Counter(_WORD.findall(text[:max_chars].lower()))
    return {word: min(n, term_cap) for word, n in counts.items()}

def train_router(documents, vocabulary_size, max_chars, term_cap):
    """Naive Bayes counts from (workspace, text) pairs: {"classes": {workspace: {documents,
    terms}}, "terms": {term: {workspace: count}}}. The vocabulary is the vocabulary_size words
    found in most documents (at least two), so the model stays small."""
    document_frequency = Counter()
    per_workspace = {}
    documents_of = Counter()
    for workspace, text in documents:
        counts = router_terms(text, max_chars, term_cap)
        document_frequency.update(counts.keys())
        per_workspace.setdefault(workspace, Counter()).update(counts)
        documents_of[workspace] += 1
    ranked = sorted(
        (w for w, n in document_frequency.items() if n >= 2), key=lambda w: (-document_frequency[w], w)
    )
    vocabulary = ranked[:vocabulary_size]
    terms = {}
    for word in vocabulary:
        terms[word] = {ws: counts[word] for ws, counts in sorted(per_workspace.items()) if counts[word]}
    classes = {
        ws: {"documents": documents_of[ws], "terms": sum(counts[w] for w in vocabulary)}
        for ws, counts in sorted(per_workspace.items())
    }
    return {"classes": classes, "terms": terms}

def learned_candidates(text, model, workspaces):
    """Candidates [{workspace, score (the posterior), hits}] by the learned model, best first;
    None while fewer than two workspaces have model["min_documents"] documents to learn from."""
    classes = {
        ws: c
        for ws, c in model["classes"].items()
        if ws in workspaces and c["documents"] >= model["min_documents"]
    }
    if len(classes) < 2:
        return None
    terms = model["terms"]
    size = len(terms)
    counts = {
        w: n for w, n in router_terms(text, model["max_chars"], model["term_cap"]).items() if w in terms
    }
    total_documents = sum(c["documents"] for c in classes.values())
    scores = {}
    weights = {}
    for ws, c in classes.items():
        denominator = math.log(c["terms"] + size)
        weights[ws] = {w: math.log(terms[w].get(ws, 0) + 1) - denominator for w in counts}
        scores[ws] = math.log(c["documents"] / total_documents) + sum(
            n * weights[ws][w] for w, n in counts.items()
        )
    top = max(scores.values())
    exp = {ws: math.exp(s - top) for ws, s in scores.items()}
    norm = sum(exp.values())
    ranked = sorted(classes, key=lambda ws: (-scores[ws], ws))
    candidates = []
    for i, ws in enumerate(ranked):
        # The words that speak most for this workspace over the next best one (or the best).
        other = ranked[1] if i == 0 else ranked[0]
        lift = {w: n * (weights[ws][w] - weights[other][w]) for w, n in counts.items()}
        hits = sorted((w for w in lift if lift[w] > 0), key=lambda w: (-lift[w], w))[:8]
        candidates.append({"workspace": ws, "score": exp[ws] / norm, "hits": hits})
    return candidates

def load_router(plpy, SD):
    """The learned model as trained last (exo_private.train_router), cached in SD by its
    generation; None before the first training."""
    state = plpy.execute(
        "select generation, max_chars, term_cap from exo_private.router_state where generation is not null"
    )
    if not state:
        return None
    generation = state[0]["generation"]
    cached = SD.get("router")
    if cached is not None and cached["generation"] == generation:
        return cached
    classes = {
        r["workspace"]: {"documents": r["documents"], "terms": r["terms"]}
        for r in plpy.execute("select workspace, documents, terms from exo_private.router_classes")
    }
    terms = {}
    for r in plpy.execute("select term, workspace, count from exo_private.router_terms"):
        terms.setdefault(r["term"], {})[r["workspace"]] = r["count"]
    SD["router"] = {
        "generation": generation,
        "max_chars": state[0]["max_chars"],
        "term_cap": state[0]["term_cap"],
        "classes": classes,
        "terms": terms,
    }
    return SD["router"]

def _training_settings(plpy):
    rows = plpy.execute(
        "select key, value::text as value from exo_private.settings "
        "where key in ('routing.learned_vocabulary', 'routing.learned_max_chars', 'routing.learned_term_cap')"
    )
    settings = {r["key"]: json.loads(r["value"]) for r in rows}
    for key in ("routing.learned_vocabulary", "routing.learned_max_chars", "routing.learned_term_cap"):
        value = settings.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError("setting " + key + " must be a positive whole number, not " + repr(value))
    return settings

def refresh_router(plpy, force, min_change):
    """Train the learned router again when its training set (exo_private.router_training) or
    its counting settings changed since the last training, or when force. With min_change,
    only when the number of training documents changed by at least that share (an ingest's
    start: edits and reassignments wait for the scheduled training). Returns {trained,
    generation, documents, workspaces, terms}."""
    settings = _training_settings(plpy)
    state = plpy.execute(
        "select generation, fingerprint, documents from exo_private.router_state for update"
    )[0]
    now = plpy.execute(
        plpy.prepare(
            "select md5(coalesce(string_agg(t.id || ':' || t.workspace || ':' || t.sha256, ',' order by t.id), '')"
            " || $1) as fingerprint, count(*) as documents from exo_private.router_training t",
            ["text"],
        ),
        [json.dumps(settings, sort_keys=True)],
    )[0]
    seen = now["fingerprint"]
    small = abs(now["documents"] - state["documents"]) < min_change * max(state["documents"], 1)
    if not force and state["generation"] is not None and (state["fingerprint"] == seen or small):
        counts = plpy.execute(
            "select (select count(*) from exo_private.router_classes) as workspaces, "
            "(select count(*) from exo_private.router_terms) as terms, "
            "(select documents from exo_private.router_state) as documents"
        )[0]
        return {"trained": False, "generation": state["generation"], **counts}
    max_chars = settings["routing.learned_max_chars"]
    cursor = plpy.cursor(
        plpy.prepare(
            "select t.workspace, left(c.body, $1) as body from exo_private.router_training t "
            "join exo_private.text_cache c on c.sha256 = t.sha256",
            ["int"],
        ),
        [max_chars],
    )

    def documents():
        while batch := cursor.fetch(500):
            for row in batch:
                yield row["workspace"], row["body"]

    model = train_router(
        documents(), settings["routing.learned_vocabulary"], max_chars, settings["routing.learned_term_cap"]
    )
    plpy.execute("delete from exo_private.router_terms")
    plpy.execute("delete from exo_private.router_classes")
    classes = sorted(model["classes"].items())
    plpy.execute(
        plpy.prepare(
            "insert into exo_private.router_classes (workspace, documents, terms) "
            "select * from unnest($1::text[], $2::int[], $3::bigint[])",
            ["text[]", "int[]", "bigint[]"],
        ),
        [[ws for ws, _ in classes], [c["documents"] for _, c in classes], [c["terms"] for _, c in classes]],
    )
    rows = [(term, ws, n) for term, by in model["terms"].items() for ws, n in by.items()]
    plpy.execute(
        plpy.prepare(
            "insert into exo_private.router_terms (term, workspace, count) "
            "select * from unnest($1::text[], $2::text[], $3::int[])",
            ["text[]", "text[]", "int[]"],
        ),
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
    )
    documents_trained = sum(c["documents"] for _, c in classes)
    generation = plpy.execute(
        plpy.prepare(
            "update exo_private.router_state set generation = coalesce(generation, 0) + 1, fingerprint = $1, "
            "documents = $2, max_chars = $3, term_cap = $4, trained_at = now() returning generation",
            ["text", "int", "int", "int"],
        ),
        [seen, documents_trained, max_chars, settings["routing.learned_term_cap"]],
    )[0]["generation"]
    return {
        "trained": True,
        "generation": generation,
        "documents": documents_trained,
        "workspaces": len(classes),
        "terms": len(model["terms"]),
    }

def route(path, text, frontmatter, review, forced, workspaces, folder_rules, keywords, threshold, model=None):
    """The routing decision; workspace None means quarantine. model: the learned router
    (load_router) with its "threshold" and "min_documents" settings, or None."""
    reasons = []
    if review and review.get("workspace") in workspaces:
        return _decision(review["workspace"], "review", 1.0, ["quarantine review: " + review["decision"]])
    declared = frontmatter.get("workspace")
    if declared is not None:
        declared = str(declared).strip().lower()
        if declared in workspaces:
            return _decision(declared, "frontmatter", 1.0, ["frontmatter workspace: " + declared])
        reasons.append("frontmatter workspace '" + declared + "' does not exist")
    if forced in workspaces:
        return _decision(forced, "forced", 1.0, [*reasons, "ingested with --workspace " + forced])
    folders = [part.lower() for part in path.split("/")[:-1]]
    for rule in folder_rules:
        if rule.get("folder", "").lower() in folders and rule.get("workspace") in workspaces:
            return _decision(rule["workspace"], "folder", 1.0, [*reasons, "folder '" + rule["folder"] + "'"])
    learned = learned_candidates(text, model, workspaces) if model else None
    if learned is not None:
        best = learned[0]
        why = "learned: " + best["workspace"] + " (" + ", ".join(best["hits"]) + ")"
        shown = [{**c, "score": round(c["score"], 4)} for c in learned]
        if best["score"] < model["threshold"]:
            reasons.append(why + " below threshold " + str(model["threshold"]))
            return _decision(None, "learned", best["score"], reasons, shown)
        return _decision(best["workspace"], "learned", best["score"], [*reasons, why], shown)
    candidates = [c for c in classify(text, keywords) if c["workspace"] in workspaces]
    total = sum(c["score"] for c in candidates)
    if not candidates or candidates[0]["score"] == 0:
        return _decision(None, "classifier", 0.0, [*reasons, "no workspace keywords found"], candidates)
    best = candidates[0]
    # The winner's share of the evidence (+1 smoothing), scaled down while it rests
    # on fewer than MIN_HITS distinct words: two stray words are never confident.
    confidence = best["score"] / (total + 1.0) * min(1.0, len(best["hits"]) / MIN_HITS)
    why = "classifier: " + best["workspace"] + " (" + ", ".join(best["hits"][:8]) + ")"
    if confidence < threshold:
        reasons.append(why + " below threshold " + str(threshold))
        return _decision(None, "classifier", confidence, reasons, candidates)
    return _decision(best["workspace"], "classifier", confidence, [*reasons, why], candidates)

def _truthy(value):
    return value is True or str(value).strip().lower() in ("true", "yes", "1")

def plan(doc, text, settings, subjects, today, router=None):
    """doc: {path, title, frontmatter, metadata, review, forced_workspace, mtime_ns}; settings: the
    chunking/routing/banding/deference settings plus "workspaces"; subjects: the
    deference list [{subject, aliases}]; today: datetime.date; router: the learned
    router (routing.load_router) or None."""
    frontmatter = doc.get("frontmatter") or {}
    model = None
    if router is not None:
        model = {
            **router,
            "threshold": settings["routing.learned_threshold"],
            "min_documents": settings["routing.learned_min_documents"],
        }
    decision = route(
        doc["path"],
        text,
        frontmatter,
        doc.get("review"),
        doc.get("forced_workspace"),
        settings["workspaces"],
        settings["routing.folder_rules"],
        settings["routing.keywords"],
        settings["routing.confidence_threshold"],
        model,
    )
    result = {"route": decision}
    if decision["workspace"] is None:
        return result
    canonical = _truthy(frontmatter.get("canonical", False))
    result["canonical"] = canonical
    result["band"] = band_for(
        frontmatter,
        text,
        doc["path"],
        doc["mtime_ns"],
        canonical,
        today,
        settings["banding.current_days"],
        settings["banding.recent_days"],
        doc.get("metadata") or {},
    )
    compiled = compile_subjects(subjects)
    declared = frontmatter.get("charged") or []
    if isinstance(declared, str):
        declared = [declared]
    chunks = split_text(text, settings["chunking.chunk_chars"], settings["chunking.overlap_chars"])
    windows = split_text(text, settings["chunking.window_chars"], settings["chunking.window_overlap_chars"])
    encoded = utf8_spans(text, chunks + windows)
    head = heading(doc.get("title"), doc["path"])
    result["chunks"] = [
        {
            "start": start,
            "end": end,
            "byte_start": encoded[i][0],
            "byte_end": encoded[i][1],
            "charged": chunk_marks(text[start:end], head, compiled, settings["deference.cues"], declared),
        }
        for i, (start, end) in enumerate(chunks)
    ]
    result["windows"] = [
        {"start": start, "end": end, "byte_start": encoded[i][0], "byte_end": encoded[i][1]}
        for i, (start, end) in enumerate(windows, len(chunks))
    ]
    return result
import datetime
import json

return json.dumps(
    plan(
        json.loads(doc),
        body,
        json.loads(settings),
        json.loads(subjects),
        datetime.date.fromisoformat(today),
        load_router(plpy, SD),
    )
)
$_$;

ALTER FUNCTION exo_private.plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date) OWNER TO exo_owner;

--
-- Name: FUNCTION plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date) IS 'Plan one document (plpy/document_plan.py): routing decision (with the learned router as last trained, cached per session), band, chunk spans with charged marks, windows.';

--
-- Name: pool_details(text[], bigint[], date); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date DEFAULT NULL::date) RETURNS TABLE(chunk_id bigint, workspace text, document_id bigint, ordinal integer, body text, band text, written_at date, path text, title text, canonical boolean, chat jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select c.id, c.workspace, c.document_id, c.ordinal, c.body,
           exo_private.band_as_of(c.band, c.written_at, d.band_source = 'inferred' and not d.canonical, p_as_of,
                                  (select bs.value::int from exo_private.settings bs where bs.key = 'banding.current_days'),
                                  (select bs.value::int from exo_private.settings bs where bs.key = 'banding.recent_days'))::text,
           c.written_at, d.path, d.title, d.canonical,
           case when cw.chunk_id is not null then jsonb_build_object(
               'conversation_id', cw.conversation_id, 'title', d.title, 'senders', s.senders,
               'first_sent_at', cw.first_sent_at, 'message_ids', to_jsonb(cw.message_ids)) end
    from unnest(p_workspaces, p_chunks) w (workspace, chunk_id)
    join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id
    join exo_private.documents d on d.id = c.document_id
    left join exo_private.chat_windows cw on cw.workspace = c.workspace and cw.chunk_id = c.id
    -- a chat window's senders, as exo.conversation names them, in order of their first message
    left join lateral (
        select jsonb_agg(x.sender order by x.first) as senders
        from (
            select coalesce(i.display_name, p.display_name, i.handle) as sender, min(o.n) as first
            from unnest(cw.message_ids) with ordinality o (message_id, n)
            join exo_private.chat_messages m on m.id = o.message_id
            join exo_private.chat_identities i on i.id = m.identity_id
            left join exo_private.people p on p.id = i.person_id
            group by 1
        ) x
    ) s on cw.chunk_id is not null
$$;

ALTER FUNCTION exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date) OWNER TO exo_owner;

--
-- Name: FUNCTION pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date) IS 'Chunk and document of each candidate of the combined pool, by (workspace, chunk id), with its band as of p_as_of (exo_private.band_as_of; null: the stored band); chat, for a chunk that is a chat window (else null): {conversation_id, title, senders (distinct, in order of their first message), first_sent_at, message_ids (in order)}.';

--
-- Name: pool_similarity(text[], bigint[], text, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer) RETURNS TABLE(chunk_id bigint, similarity double precision)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- A lookup by primary key: no index on the distance, so the untyped vector is fine.
    select e.chunk_id, (1 - (e.embedding operator(public.<=>) p_vector::public.vector))::float8
    from unnest(p_workspaces, p_chunks) w (workspace, chunk_id)
    join exo_private.chunk_embeddings e
      on e.workspace = w.workspace and e.chunk_id = w.chunk_id and e.model_id = p_model_id
$$;

ALTER FUNCTION exo_private.pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer) OWNER TO exo_owner;

--
-- Name: FUNCTION pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer) IS 'Cosine similarity between a query vector and the stored vectors of some chunks (one model).';

--
-- Name: process_document(bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.process_document(doc_id bigint) RETURNS exo_private.document_stage
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    AS $$
declare
    doc exo_private.documents;
    body text;
    encoded bytea;
    forced text;
    planned jsonb;
    ws text;
    chunk_ids bigint[];
    window_ids bigint[];
begin
    select * into doc from exo_private.documents d where d.id = doc_id for update;
    if not found then
        raise exception 'document % does not exist', doc_id;
    end if;
    if doc.conversation_id is not null then
        raise exception 'document % (%) is a conversation document: it has no file text to process', doc_id, doc.path
            using hint = 'exo_private.window_conversation re-windows it from its messages';
    end if;
    if doc.stage not in ('extracted', 'routed', 'quarantined', 'chunked', 'embedded', 'graphed') then
        raise exception 'document % (%) is at stage %, which has no text to process', doc_id, doc.path, doc.stage;
    end if;
    select c.body into body from exo_private.text_cache c where c.sha256 = doc.sha256;
    if body is null then
        raise exception 'document % (%) has no cached text for sha256 %', doc_id, doc.path, doc.sha256;
    end if;
    select s.workspace into forced from exo_private.sources s where s.id = doc.source_id;

    planned := exo_private.plan_document(
        jsonb_build_object('path', doc.path, 'title', doc.title, 'frontmatter', doc.frontmatter, 'review', doc.review,
                           'forced_workspace', forced, 'mtime_ns', doc.mtime_ns, 'metadata', doc.metadata),
        body, exo_private.ingest_settings(), exo_private.deference_list(), current_date);

    perform exo_private.clear_derived(doc_id);
    -- Pieces are cut from the UTF-8 bytes by byte offset: substr on text walks every
    -- character before its start, which made a document cost the square of its size.
    encoded := convert_to(body, 'UTF8');
    body := null;
    ws := planned -> 'route' ->> 'workspace';
    if ws is null then
        update exo_private.documents d
           set stage = 'quarantined', route = planned -> 'route', workspace = null, band = null,
               band_source = null, band_reason = null, stage_changed_at = now()
         where d.id = doc_id;
        return 'quarantined'::exo_private.document_stage;
    end if;

    update exo_private.documents d
       set workspace = ws,
           route = planned -> 'route',
           canonical = (planned ->> 'canonical')::boolean,
           band = (planned -> 'band' ->> 'band')::exo_private.band,
           band_source = planned -> 'band' ->> 'source',
           band_reason = planned -> 'band' ->> 'reason',
           written_at = (planned -> 'band' ->> 'written_at')::date
     where d.id = doc_id;

    with inserted as (
        insert into exo_private.chunks
            (workspace, document_id, ordinal, body, char_start, char_end, band, written_at,
             charged_subjects, charged)
        select ws, doc_id, (c.ordinality - 1)::int,
               convert_from(substring(encoded from (c.value ->> 'byte_start')::int + 1
                                      for (c.value ->> 'byte_end')::int - (c.value ->> 'byte_start')::int), 'UTF8'),
               (c.value ->> 'start')::int, (c.value ->> 'end')::int,
               (planned -> 'band' ->> 'band')::exo_private.band,
               (planned -> 'band' ->> 'written_at')::date,
               array(select m ->> 'subject' from jsonb_array_elements(c.value -> 'charged') m),
               c.value -> 'charged'
        from jsonb_array_elements(planned -> 'chunks') with ordinality c
        returning id
    )
    select array_agg(id) into chunk_ids from inserted;

    with inserted as (
        insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end)
        select doc_id, ws, (w.ordinality - 1)::int,
               convert_from(substring(encoded from (w.value ->> 'byte_start')::int + 1
                                      for (w.value ->> 'byte_end')::int - (w.value ->> 'byte_start')::int), 'UTF8'),
               (w.value ->> 'start')::int, (w.value ->> 'end')::int
        from jsonb_array_elements(planned -> 'windows') with ordinality w
        returning id
    )
    select array_agg(id) into window_ids from inserted;

    -- The queues are tables: the jobs commit (or roll back) with the chunks.
    if chunk_ids is not null then
        perform pgmq.send_batch('embed',
            array(select jsonb_build_object('chunk_id', x, 'workspace', ws) from unnest(chunk_ids) x));
    end if;
    if window_ids is not null then
        perform pgmq.send_batch('extract',
            array(select jsonb_build_object('window_id', x, 'workspace', ws) from unnest(window_ids) x));
    end if;

    update exo_private.documents d
       set stage = 'chunked', error_class = null, error_message = null, stage_changed_at = now()
     where d.id = doc_id;
    return 'chunked'::exo_private.document_stage;
end
$$;

ALTER FUNCTION exo_private.process_document(doc_id bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION process_document(doc_id bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.process_document(doc_id bigint) IS 'Route, band and chunk one extracted document from the text cache (pieces cut by byte offsets, so the cost is linear in its size); enqueues embed and extract jobs.';

--
-- Name: project_entities(bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.project_entities(ids bigint[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $_$
declare
    grp record;
    label_id int;
    n int;
    total int := 0;
begin
    -- Rows are gathered by one static query; each label then takes one short insert
    -- (a dynamic statement is planned every time, so it is kept trivial).
    for grp in
        select e.workspace, e.type,
               array_agg(e.id order by e.id) as entity_ids,
               array_agg(pg_catalog.jsonb_build_object(
                   'id', e.id, 'name', e.name, 'key', e.canonical_key, 'type', e.type,
                   'generation', e.generation, 'is_owner', e.is_owner) order by e.id) as props
        from exo_private.entities e
        where e.id = any(ids)
          and e.generation = (select max(g.generation) from exo_private.extraction_generations g
                              where g.workspace = e.workspace)
        group by e.workspace, e.type
        order by e.workspace, e.type
    loop
        label_id := exo_private.ensure_label(exo_private.ensure_workspace_graph(grp.workspace), grp.type::text, 'v');
        execute format($sql$
            insert into %I.%I as v (id, properties)
            select ag_catalog._graphid($1, u.id), u.props::text::ag_catalog.agtype
            from unnest($2::bigint[], $3::jsonb[]) u(id, props)
            on conflict (id) do update set properties = excluded.properties
                where v.properties operator(ag_catalog.<>) excluded.properties
        $sql$, exo_private.graph_name(grp.workspace), grp.type) using label_id, grp.entity_ids, grp.props;
        get diagnostics n = row_count;
        total := total + n;
    end loop;
    return total;
end
$_$;

ALTER FUNCTION exo_private.project_entities(ids bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION project_entities(ids bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.project_entities(ids bigint[]) IS 'Project entities (of their workspace''s current generation) into the AGE graph as vertices labelled by type, graphid derived from the entity id, properties id, name, key, type, generation, is_owner; changed properties are updated. Returns vertices written.';

--
-- Name: project_relations(bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.project_relations(ids bigint[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'exo_private', 'pg_temp'
    AS $_$
declare
    grp record;
    label_id int;
    n int;
    total int := 0;
begin
    -- Both ends first, so that no edge dangles (and their vertex labels exist).
    perform exo_private.project_entities(array(
        select unnest(array[r.subject_id, r.object_id]) from exo_private.relations r where r.id = any(ids)));
    for grp in
        select r.workspace, r.predicate,
               array_agg(r.id order by r.id) as relation_ids,
               array_agg(ag_catalog._graphid(sl.id, r.subject_id) order by r.id) as start_ids,
               array_agg(ag_catalog._graphid(ol.id, r.object_id) order by r.id) as end_ids,
               array_agg(pg_catalog.jsonb_build_object(
                   'id', r.id, 'predicate_raw', r.predicate_raw, 'predicate', r.predicate,
                   'window_id', r.window_id, 'document_id', r.document_id) order by r.id) as props
        from exo_private.relations r
        join exo_private.entities s on s.id = r.subject_id
        join exo_private.entities o on o.id = r.object_id
        join ag_catalog.ag_graph g on g.name = exo_private.graph_name(r.workspace)
        join ag_catalog.ag_label sl on sl.graph = g.graphid and sl.name = s.type::text
        join ag_catalog.ag_label ol on ol.graph = g.graphid and ol.name = o.type::text
        where r.id = any(ids)
          and r.generation = (select max(x.generation) from exo_private.extraction_generations x
                              where x.workspace = r.workspace)
        group by r.workspace, r.predicate
        order by r.workspace, r.predicate
    loop
        label_id := exo_private.ensure_label(exo_private.graph_name(grp.workspace), grp.predicate, 'e');
        execute format($sql$
            insert into %1$I.%2$I (id, start_id, end_id, properties)
            select ag_catalog._graphid($1, u.id), u.start_id, u.end_id, u.props::text::ag_catalog.agtype
            from unnest($2::bigint[], $3::ag_catalog.graphid[], $4::ag_catalog.graphid[], $5::jsonb[])
                 u(id, start_id, end_id, props)
            where not exists (select 1 from %1$I.%2$I e where e.id = ag_catalog._graphid($1, u.id))
        $sql$, exo_private.graph_name(grp.workspace), grp.predicate)
        using label_id, grp.relation_ids, grp.start_ids, grp.end_ids, grp.props;
        get diagnostics n = row_count;
        total := total + n;
    end loop;
    return total;
end
$_$;

ALTER FUNCTION exo_private.project_relations(ids bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION project_relations(ids bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.project_relations(ids bigint[]) IS 'Project relations (of their workspace''s current generation) into the AGE graph as edges subject -> object labelled by the normalised predicate, graphid derived from the relation id, properties id, predicate_raw, predicate, window_id, document_id; projects both ends first. Returns edges written.';

--
-- Name: queue_again(text, bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.queue_again(p_queue text, p_targets bigint[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    payloads jsonb[];
begin
    if p_queue = 'embed' then
        payloads := array(select jsonb_build_object('chunk_id', c.id, 'workspace', c.workspace)
                          from exo_private.chunks c where c.id = any(p_targets) order by c.id);
    else
        perform exo_private.queue_target_key(p_queue);
        payloads := array(select jsonb_build_object('window_id', w.id, 'workspace', w.workspace)
                          from exo_private.extraction_windows w where w.id = any(p_targets) order by w.id);
    end if;
    if cardinality(payloads) > 0 then
        perform pgmq.send_batch(p_queue, payloads);
    end if;
    return cardinality(payloads);
end
$$;

ALTER FUNCTION exo_private.queue_again(p_queue text, p_targets bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION queue_again(p_queue text, p_targets bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.queue_again(p_queue text, p_targets bigint[]) IS 'Queue chunks (embed) or extraction windows (extract) again by id, one fresh message each (ids that no longer exist are skipped); returns how many were queued.';

--
-- Name: queue_messages(double precision); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.queue_messages(p_dead_after_s double precision) RETURNS TABLE(queue text, msg_id bigint, enqueued_at timestamp with time zone, visible_at timestamp with time zone, state text)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select q.queue, q.msg_id, q.enqueued_at, q.vt,
           case when q.vt <= pg_catalog.clock_timestamp() then 'pending'
                when w.id is null then 'unclaimed'
                when w.stopped_at is not null
                  or w.heartbeat_at < pg_catalog.now() - pg_catalog.make_interval(secs => p_dead_after_s)
                then 'dead'
                else 'live' end
    from (select 'embed'::text as queue, e.msg_id, e.enqueued_at, e.vt from pgmq.q_embed e
          union all
          select 'extract', x.msg_id, x.enqueued_at, x.vt from pgmq.q_extract x
          union all
          select 'ocr', o.msg_id, o.enqueued_at, o.vt from pgmq.q_ocr o) q
    left join exo_private.worker_claims c on c.queue = q.queue and c.msg_id = q.msg_id
    left join exo_private.workers w on w.id = c.worker_id
$$;

ALTER FUNCTION exo_private.queue_messages(p_dead_after_s double precision) OWNER TO exo_owner;

--
-- Name: FUNCTION queue_messages(p_dead_after_s double precision); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.queue_messages(p_dead_after_s double precision) IS 'Every message of embed, extract and ocr with its state: pending (visible now), or in flight held by a live worker, by a dead one (no heartbeat for p_dead_after_s, or stopped), or unclaimed (a job that raised waits for its retry, or a read outside any worker).';

--
-- Name: queue_target_key(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.queue_target_key(p_queue text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    case p_queue
        when 'embed' then return 'chunk_id';
        when 'extract' then return 'window_id';
        when 'ocr' then return 'document_id';
        else raise exception 'queue must be embed, extract or ocr, got %', coalesce(quote_literal(p_queue), 'null')
                 using errcode = 'invalid_parameter_value';
    end case;
end
$$;

ALTER FUNCTION exo_private.queue_target_key(p_queue text) OWNER TO exo_owner;

--
-- Name: FUNCTION queue_target_key(p_queue text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.queue_target_key(p_queue text) IS 'The key of a queue''s messages that names its target: chunk_id (embed), window_id (extract) or document_id (ocr, sql/160_ocr.sql); raises for any other queue.';

--
-- Name: quoted(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.quoted(argument text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    select case when argument is null then 'null'
                when pg_catalog.length(argument) <= 100 then pg_catalog.quote_literal(argument)
                else pg_catalog.quote_literal(pg_catalog.left(argument, 100) || '…') end
$$;

ALTER FUNCTION exo_private.quoted(argument text) OWNER TO exo_owner;

--
-- Name: FUNCTION quoted(argument text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.quoted(argument text) IS 'An argument quoted for an error message: null as null, and no more than its first 100 characters (a refusal never echoes a huge input).';

--
-- Name: read_jobs(text, integer, integer, integer, bigint); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint) RETURNS TABLE(msg_id bigint, read_ct integer, message jsonb, dead_lettered boolean)
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    m record;
begin
    perform exo_private.queue_target_key(p_queue);
    for m in select r.msg_id, r.read_ct, r.message from pgmq.read(p_queue, p_vt, p_qty) r loop
        if m.read_ct <= p_max_reads then
            insert into exo_private.worker_claims (queue, msg_id, worker_id)
            values (p_queue, m.msg_id, p_worker_id)
            on conflict (queue, msg_id) do update set worker_id = excluded.worker_id, claimed_at = now();
        else
            perform pgmq.send('dead_letter', jsonb_build_object(
                'queue', p_queue, 'msg_id', m.msg_id, 'read_ct', m.read_ct, 'message', m.message,
                'last_error', coalesce(
                    (select f.error_class || ': ' || f.message from exo_private.job_failures f
                     where f.queue = p_queue and f.msg_id = m.msg_id order by f.id desc limit 1),
                    'read too often (a worker died or timed out?)')));
            perform pgmq.archive(p_queue, m.msg_id);
        end if;
        return query select m.msg_id, m.read_ct, m.message, m.read_ct > p_max_reads;
    end loop;
end
$$;

ALTER FUNCTION exo_private.read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint) OWNER TO exo_owner;

--
-- Name: FUNCTION read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint) IS 'Read up to p_qty messages of p_queue (hidden for p_vt seconds). A message read at most p_max_reads times is claimed for worker p_worker_id; one read more often goes to dead_letter with its last recorded error and is archived. Returns every message read, dead_lettered saying which were.';

--
-- Name: reap_workers(double precision); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.reap_workers(p_dead_after_s double precision) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    embed_ids bigint[];
    extract_ids bigint[];
    ocr_ids bigint[];
    released int := 0;
begin
    update exo_private.workers w
       set stopped_at = w.heartbeat_at,
           stop_reason = format('dead: no heartbeat since %s (more than %s s)', w.heartbeat_at, p_dead_after_s)
     where w.stopped_at is null
       and w.heartbeat_at < pg_catalog.now() - pg_catalog.make_interval(secs => p_dead_after_s);
    -- A stopped worker holds nothing: what it claimed is visible again (that read still counts).
    with gone as (
        delete from exo_private.worker_claims c
         using exo_private.workers w
         where w.id = c.worker_id and w.stopped_at is not null
        returning c.queue, c.msg_id
    )
    select coalesce(array_agg(g.msg_id) filter (where g.queue = 'embed'), '{}'),
           coalesce(array_agg(g.msg_id) filter (where g.queue = 'extract'), '{}'),
           coalesce(array_agg(g.msg_id) filter (where g.queue = 'ocr'), '{}')
      into embed_ids, extract_ids, ocr_ids
    from gone g;
    if embed_ids <> '{}' then
        released := released + (select count(*) from pgmq.set_vt('embed', embed_ids, 0));
    end if;
    if extract_ids <> '{}' then
        released := released + (select count(*) from pgmq.set_vt('extract', extract_ids, 0));
    end if;
    if ocr_ids <> '{}' then
        released := released + (select count(*) from pgmq.set_vt('ocr', ocr_ids, 0));
    end if;
    return released;
end
$$;

ALTER FUNCTION exo_private.reap_workers(p_dead_after_s double precision) OWNER TO exo_owner;

--
-- Name: FUNCTION reap_workers(p_dead_after_s double precision); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.reap_workers(p_dead_after_s double precision) IS 'Mark every worker whose heartbeat is older than p_dead_after_s seconds stopped (stop_reason ''dead: ...''), and make the messages that stopped workers still claimed visible at once. Returns how many messages were taken back.';

--
-- Name: reband(date); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.reband(today date DEFAULT CURRENT_DATE) RETURNS integer
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Temporal banding of a document (stdlib only).

Authority order for the band: frontmatter `band`, then inference from the date the document
was written. That date comes from the best evidence present, in this order, and the reason
names the source:

1. frontmatter `date`;
2. the format's own metadata (metadata["date"]: an email's Date header, a PDF's creation date,
   DOCX/ODT core properties, EPUB dc:date, HTML meta tags), unless it is a tool's default
   (TOOL_DEFAULT_DATES, the epochs) or later than the file's modification time;
3. a date or year in the title or the first lines (HEAD_LINES lines of at most HEAD_LINE_CHARS);
4. the first full date in the opening of the text (TEXT_DATE_SEARCH_CHARS);
5. the last full date in the closing lines (CLOSING_CHARS: a signature or a trailer);
6. a date or year in the path;
7. the file's modification time.

Years run from 1000 to today. A full date ("1803-03-04", "4 March 1803", "March 4, 1803",
"04-MAR-1803") is a date wherever it stands; a bare year counts only where it reads as a year
(year_in_line) and never next to a currency, a label such as "room" or "No.", or a noun
("1500 people", "1850 km"). A canonical document is current unless its frontmatter says otherwise.
"""

import datetime
import json
import posixpath
import re

"""English month names for the date readers (stdlib only): banding and temporal."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip

#: A regex group matching any month name or abbreviation, with an optional dot.
MONTH_PATTERN = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"

BANDS = ("current", "recent", "archival")
FIRST_YEAR = 1000
TEXT_DATE_SEARCH_CHARS = 1000
CLOSING_CHARS = 500
HEAD_LINES = 3
HEAD_LINE_CHARS = 200
#: Dates that formats and tools write when nobody set one: the Unix, DOS/zip, Mac, Windows and
#: spreadsheet epochs, and the creation dates of python-docx's and python-pptx's templates.
TOOL_DEFAULT_DATES = frozenset(
    datetime.date(*ymd)
    for ymd in [
        (1970, 1, 1), (1980, 1, 1), (1904, 1, 1), (1601, 1, 1), (1899, 12, 30), (1899, 12, 31),
        (1900, 1, 1), (2013, 12, 23), (2013, 1, 27),
    ]
)  # fmt: skip
#: Metadata dates may be written in another time zone than the file's mtime: a day of slack.
MTIME_SLACK = datetime.timedelta(days=1)

def banding_settings(plpy):
    """The banding.* settings, keyed by name, read inside the database (reband, message_bands)."""
    rows = plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
    return {r["key"]: json.loads(r["value"]) for r in rows}

_YEAR = r"(1\d{3}|20\d\d)"
_DATE_PATTERNS = [
    (re.compile(r"(?<![\d.])" + _YEAR + r"-(\d\d)-(\d\d)(?!\d)"), ("y", "m", "d")),
    (
        re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH_PATTERN + r",?\s+" + _YEAR + r"(?!\d)", re.I),
        ("d", "M", "y"),
    ),
    (
        re.compile(r"\b" + MONTH_PATTERN + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR + r"(?!\d)", re.I),
        ("M", "d", "y"),
    ),
    (re.compile(r"\b(\d{1,2})-" + MONTH_PATTERN + r"-" + _YEAR + r"(?!\d)", re.I), ("d", "M", "y")),
]
_PATH_DATE = re.compile(r"(?<!\d)" + _YEAR + r"[-_.]?(\d\d)[-_.]?(\d\d)(?!\d)")
_PATH_YEAR = re.compile(r"(?<!\d)" + _YEAR + r"(?!\d)")
_PATH_PART_YEAR = re.compile(r"(?<![^/])\d{4}(?:[-_ .]|/|$)")

# A bare year: four digits not glued to a word, a currency sign, a reference sign ('#', '!', '@',
# '~') or a decimal or thousands separator, optionally a range ("1861-65", "1986/87", "1861-1865");
# then what stands before and after it.
_DASHES = "-\u2013\u2014"
_NOT_GLUED = r"(?<![\w$£€¥#!@~])(?<!\d[.,])"
_RANGE = r"(\s*[" + _DASHES + r"/]\s*(?:1\d{3}|20\d\d|\d\d)(?!\d))?"
_YEAR_TOKEN = re.compile(_NOT_GLUED + _YEAR + r"(?![\w%]|[.,:]\d)" + _RANGE)
_WORD_BEFORE = re.compile(r"([^\W\d_]+\.?)[\s:]*$")
#: Words after which a year reads as a year.
_YEAR_CUES = frozenset([
    "in", "of", "since", "from", "by", "until", "till", "to", "around", "circa", "c.", "ca.", "c", "ca",
    "anno", "year", "early", "late", "mid", "spring", "summer", "autumn", "fall", "winter", "dated",
    "written", *MONTHS, *(m + "." for m in MONTHS),
])  # fmt: skip
#: Labels after which four digits are a number, not a year.
_NUMBER_LABELS = frozenset([
    "no", "nr", "number", "num", "room", "rm", "flight", "page", "pages", "pp", "p", "vol", "volume",
    "chapter", "ch", "section", "sec", "route", "suite", "apt", "apartment", "box", "track", "platform",
    "gate", "bus", "line", "item", "step", "ticket", "order", "invoice", "account", "model", "version",
    "v", "ver", "release", "code", "zip", "tel", "phone", "fax", "ext", "id", "serial", "part", "lot",
    "unit", "building", "floor", "highway", "street", "st", "avenue", "ave", "road", "rd", "km", "mile",
    "miles", "issue", "exhibit", "table", "figure", "fig", "rule", "article", "art", "psalm", "hymn",
    "opus", "op", "bwv", "kv", "total", "population", "count", "sum", "score", "price", "cost", "amount",
    "balance", "capacity", "height", "altitude", "elevation", "distance", "length", "weight", "size",
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "dm", "dlrs", "dollars", "rs", "inr", "yen",
])  # fmt: skip
#: Words that may follow a year in a sentence ("in 1803 the ...", "1796 and 1797").
_FUNCTION_WORDS = frozenset([
    "and", "or", "to", "the", "a", "an", "at", "by", "for", "when", "was", "were", "is", "he", "she",
    "it", "i", "we", "they", "on", "with", "as", "that", "which", "who", "after", "before", "until",
    "till", "while",
])  # fmt: skip
_ERA = re.compile(r"(?:a\.?d\.?|c\.?e\.?)(?![\w.])", re.I)
_BEFORE_ERA = re.compile(r"(?:b\.?c\.?|b\.?c\.?e\.?)(?![\w.])", re.I)
_CLOSER = re.compile(r"[,;.)\]:!?" + _DASHES[1:] + r"]|-\s|$")
_CODE_AFTER = re.compile(r"[-/]\d")
#: Marks after which a year reads as one; a dash only spaced ("Speech - 1796", not "CVE-2023").
_CUE_MARKS = (",", "(", "[", ":", " -", "\u2013", "\u2014")
_NEXT_WORD = re.compile(r"([^\W\d_]+)")

def _make_date(fields, order):
    values = dict(zip(order, fields, strict=False))
    month = MONTHS[values["M"].lower()] if "M" in values else int(values["m"])
    try:
        return datetime.date(int(values["y"]), month, int(values["d"]))
    except ValueError:
        return None

def _year_date(year, today, month=None):
    """A year (or a month of it) as a day: 1 July (or the month's first), never after today."""
    return min(datetime.date(year, month or 7, 1), today)

def full_dates(text, today):
    """[(start, date, matched, "date")]: the full dates in text, FIRST_YEAR to today, in order."""
    found = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = _make_date(m.groups(), order)
            if day and day <= today:
                found.append((m.start(), day, m.group(0), "date"))
    return sorted(found)

def year_in_line(line, today):
    """(start, date, matched, kind) of the first bare year in one line that reads as a year, or None.

    It reads as a year after a cue ("in", "of", a month name, ...), after a comma, a spaced dash,
    a colon or an opening parenthesis, at the start of the line, or before the end of the line, a closing
    punctuation mark, an era ("AD") or a function word. Never after a number label or a currency,
    never inside a longer code ("CVE-2023-40403"), never before another word, a percent sign or
    "BC". After a month name it is that month."""
    for m in _YEAR_TOKEN.finditer(line):
        year = int(m.group(1))
        if year > today.year:
            continue
        before = line[: m.start()].rstrip()
        after = line[m.end() :].lstrip()
        cue = _WORD_BEFORE.search(before)
        word = cue.group(1).lower() if cue else ""
        if word.rstrip(".") in _NUMBER_LABELS:
            continue
        if _BEFORE_ERA.match(after):
            continue
        if _CODE_AFTER.match(after):
            continue  # part of a longer code: "CVE-2023-40403", "2019/0042"
        closes = bool(_CLOSER.match(after) or _ERA.match(after))
        next_word = _NEXT_WORD.match(after)
        if next_word and not closes and next_word.group(1).lower() not in _FUNCTION_WORDS:
            continue  # "1500 people", "1850 km", "2019 budget"
        cued = word in _YEAR_CUES or before in ("", "-") or before.endswith(_CUE_MARKS)
        if not (cued or closes):
            continue
        month = MONTHS.get(word.rstrip(".")) if cue else None
        if month:
            return cue.start(1), _year_date(year, today, month), line[cue.start(1) : m.end(1)], "month"
        return m.start(), _year_date(year, today), m.group(1), "year"
    return None

def parse_date(value, today=None):
    """A date from a frontmatter or metadata value: a date or datetime, an ISO string, a full
    date in words (an email's "Mon, 01 Jan 2001 ..." too), a year alone (as 1 July) or a year
    and month (as its first day); None if none."""
    today = today or datetime.date.today()
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and FIRST_YEAR <= value <= today.year:
        return _year_date(value, today)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)", text)
    if m:
        return _make_date(m.groups(), ("y", "m", "d")) if int(m.group(1)) >= FIRST_YEAR else None
    m = re.fullmatch(r"(\d{4})(?:-(\d\d))?", text)
    if m:
        year = int(m.group(1))
        month = int(m.group(2)) if m.group(2) and 1 <= int(m.group(2)) <= 12 else None
        return _year_date(year, today, month) if FIRST_YEAR <= year <= today.year else None
    found = full_dates(text, datetime.date.max)
    return found[0][1] if found else None

def metadata_date(metadata, mtime_ns, today):
    """(date, reason) from the format's own metadata, or None: metadata["date"] unless it is before
    FIRST_YEAR, a tool's default, after today, or after the file's mtime (with MTIME_SLACK)."""
    day = parse_date(metadata.get("date"), today)
    if day is None or day.year < FIRST_YEAR or day in TOOL_DEFAULT_DATES or day > today:
        return None
    if day > _mtime_date(mtime_ns) + MTIME_SLACK:
        return None
    source = metadata.get("date_source") or "format metadata"
    return day, "metadata date '" + day.isoformat() + "' (" + str(source) + ")"

def _head_lines(text):
    """The first HEAD_LINES non-empty lines (a heading's '#' dropped), those of at most HEAD_LINE_CHARS:
    a longer line is prose, not a title."""
    lines = []
    for line in text[: HEAD_LINES * (HEAD_LINE_CHARS + 1) * 4].splitlines():  # never split a whole book
        line = line.strip().lstrip("#").strip()
        if line:
            lines.append(line)
            if len(lines) == HEAD_LINES:
                break
    return [line for line in lines if len(line) <= HEAD_LINE_CHARS]

def date_in_head(title, text, today):
    """(date, reason) from the title or the first lines, or None: in each, in order, the first
    full date or year that reads as one (a year as 1 July, a month and year as its first day)."""
    for where, lines in (("title", [title] if title else []), ("first lines", _head_lines(text))):
        for line in lines:
            hits = full_dates(line, today)[:1] + [hit for hit in [year_in_line(line, today)] if hit]
            if hits:
                _start, day, matched, kind = min(hits)
                return day, kind + " in " + where + " '" + matched + "'"
    return None

def date_in_text(text, today):
    """(start, date, matched, kind): the first full date in the opening of the text, not in the future."""
    found = full_dates(text[:TEXT_DATE_SEARCH_CHARS], today)
    return found[0] if found else None

def date_at_end(text, today):
    """(start, date, matched, kind): the last full date in the closing lines (a signature, a trailer)."""
    found = full_dates(text[-CLOSING_CHARS:], today)
    return found[-1] if found else None

def date_in_path(path, today):
    """A full date in the file name or folders, else the last year in them (as 1 July). A year
    before 1900 counts only as a whole folder or the start of a name ("1848/", "1848-letter.txt"),
    not inside one ("ticket-1500.txt")."""
    for m in _PATH_DATE.finditer(path):
        day = _make_date(m.groups(), ("y", "m", "d"))
        if day and day <= today:
            return day, "date in path '" + m.group(0) + "'"
    years = [
        int(m.group(1))
        for m in _PATH_YEAR.finditer(path)
        if int(m.group(1)) <= today.year
        and (int(m.group(1)) >= 1900 or _PATH_PART_YEAR.match(path, m.start()))
    ]
    if years:
        return _year_date(years[-1], today), "year in path '" + str(years[-1]) + "'"
    return None

def _mtime_date(mtime_ns):
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC).date()

def written_date(frontmatter, text, path, mtime_ns, today, metadata=None):
    """(date, reason): when the document was written, and how that was found (the module's order)."""
    metadata = metadata or {}
    day = parse_date(frontmatter.get("date"), today)
    if day:  # the person's word, even for a day still to come
        return day, "frontmatter date"
    hit = metadata_date(metadata, mtime_ns, today)
    if hit:
        return hit
    title = metadata.get("title")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    hit = date_in_head(title if isinstance(title, str) and title != stem else None, text, today)
    if hit:
        return hit
    hit = date_in_text(text, today)
    if hit:
        return hit[1], "date in text '" + hit[2] + "'"
    hit = date_at_end(text, today)
    if hit:
        return hit[1], "date in closing lines '" + hit[2] + "'"
    hit = date_in_path(path, today)
    if hit:
        return hit
    return _mtime_date(mtime_ns), "file modification time"

def band_for(frontmatter, text, path, mtime_ns, canonical, today, current_days, recent_days, metadata=None):
    """{band, source, reason, written_at} for one document; metadata: the format's own (title, date)."""
    written, how = written_date(frontmatter, text, path, mtime_ns, today, metadata)
    declared = str(frontmatter.get("band", "")).strip().lower()
    if declared in BANDS:
        return {
            "band": declared,
            "source": "frontmatter",
            "reason": "frontmatter band",
            "written_at": written.isoformat(),
        }
    band, reason = band_by_age(written, canonical, today, current_days, recent_days, how)
    return {"band": band, "source": "inferred", "reason": reason, "written_at": written.isoformat()}

def band_by_age(written, canonical, today, current_days, recent_days, how=None):
    """(band, reason) of a document written on `written`, as of `today`: the rule both ingest
    and the daily re-banding (exo_private.reband) apply. `how` says how the date was found."""
    age = (today - written).days
    if age <= current_days:
        band = "current"
    elif age <= recent_days:
        band = "recent"
    else:
        band = "archival"
    reason = (
        "written " + written.isoformat() + (" (" + how + ")" if how else "") + ", " + str(age) + " days ago"
    )
    if canonical and band != "current":
        band = "current"
        reason += "; canonical document: never demoted by inference"
    return band, reason
import datetime
import json

settings = banding_settings(plpy)
day = datetime.date.fromisoformat(today)
documents = plpy.execute(
    "select id, band::text as band, written_at, canonical from exo_private.documents "
    "where band_source = 'inferred' and written_at is not null and workspace is not null "
    "  and conversation_id is null"
)
update_document = plpy.prepare(
    "update exo_private.documents set band = $2::exo_private.band, band_reason = $3 where id = $1",
    ["bigint", "text", "text"],
)
update_chunks = plpy.prepare(
    "update exo_private.chunks set band = $2::exo_private.band where document_id = $1", ["bigint", "text"]
)
changed = 0
for d in documents:
    band, reason = band_by_age(
        datetime.date.fromisoformat(d["written_at"]),
        d["canonical"],
        day,
        settings["banding.current_days"],
        settings["banding.recent_days"],
    )
    if band != d["band"]:
        plpy.execute(update_document, [d["id"], band, reason + "; re-banded " + today])
        plpy.execute(update_chunks, [d["id"], band])
        changed += 1

# A conversation document's windows each by their own first message's date; the document
# takes its newest window's band, and so do windows of undated messages.
conversations = plpy.execute(
    "select d.id, d.band::text as band, "
    "       json_agg(json_build_object('workspace', c.workspace, 'id', c.id, 'band', c.band, "
    "                                  'written_at', c.written_at))::text as chunks "
    "from exo_private.chat_windows w "
    "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
    "join exo_private.documents d on d.conversation_id = w.conversation_id "
    "group by d.id"
)
update_chunk = plpy.prepare(
    "update exo_private.chunks set band = $3::exo_private.band where workspace = $1 and id = $2",
    ["text", "bigint", "text"],
)
for d in conversations:
    chunks = json.loads(d["chunks"])
    newest = None
    for c in chunks:
        if c["written_at"]:
            c["new"], c["reason"] = band_by_age(
                datetime.date.fromisoformat(c["written_at"]),
                False,
                day,
                settings["banding.current_days"],
                settings["banding.recent_days"],
                "first message of the window",
            )
            if newest is None or c["written_at"] > newest["written_at"]:
                newest = c
    band = newest["new"] if newest else "current"
    moved = False
    for c in chunks:
        if c.get("new", band) != c["band"]:
            plpy.execute(update_chunk, [c["workspace"], c["id"], c.get("new", band)])
            moved = True
    if band != d["band"]:
        reason = newest["reason"] + " (the newest window)" if newest else "undated conversation"
        plpy.execute(update_document, [d["id"], band, reason + "; re-banded " + today])
        moved = True
    changed += moved
return changed
$_$;

ALTER FUNCTION exo_private.reband(today date) OWNER TO exo_owner;

--
-- Name: FUNCTION reband(today date); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.reband(today date) IS 'Work out every inferred band again as of today (frontmatter bands stay) and move the document and its chunks when it changed (a conversation document''s chunks each by their own date, the document by its newest window); returns how many documents moved. Run daily by pg_cron.';

--
-- Name: rebuild(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.rebuild(only_workspace text DEFAULT NULL::text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    AS $$
declare
    doc record;
    done int := 0;
begin
    if only_workspace is not null
       and not exists (select 1 from exo_private.workspaces w where w.name = only_workspace) then
        raise exception 'workspace % does not exist', only_workspace;
    end if;
    for doc in
        select d.id, d.conversation_id, d.workspace from exo_private.documents d
        where d.stage in ('extracted', 'routed', 'quarantined', 'chunked', 'embedded', 'graphed')
          and (only_workspace is null or d.workspace = only_workspace)
        order by d.id
    loop
        if doc.conversation_id is null then
            perform exo_private.process_document(doc.id);
        else
            -- A conversation document is re-windowed from its messages (unchanged windows stay).
            perform exo_private.window_conversation(doc.conversation_id, doc.workspace);
        end if;
        done := done + 1;
    end loop;
    return done;
end
$$;

ALTER FUNCTION exo_private.rebuild(only_workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION rebuild(only_workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.rebuild(only_workspace text) IS 'Re-route, re-band and re-chunk documents from the text cache, and re-window conversation documents from their messages (window_conversation); returns how many were processed.';

--
-- Name: related_entities(bigint, integer, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.related_entities(p_entity bigint, p_max_depth integer DEFAULT 2, p_per_node integer DEFAULT 50) RETURNS TABLE(entity_id bigint, depth integer, name text, type exo_private.entity_type)
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- Level sets, not paths: UNION keeps one row per (entity, depth), and every node of a
    -- frontier adds at most p_per_node neighbours (lowest ids first), so a hub of any
    -- degree costs p_per_node rows per level.
    with recursive walk (entity_id, depth) as (
        select p_entity, 0
        union
        select nb.id, w.depth + 1
        from walk w
        cross join lateral (
            select x.id
            from (
                (select r.object_id as id from exo_private.relations r
                 where r.subject_id = w.entity_id order by r.object_id)
                union all
                (select r.subject_id from exo_private.relations r
                 where r.object_id = w.entity_id order by r.subject_id)
            ) x
            where x.id <> w.entity_id
            group by x.id
            order by x.id
            limit greatest(1, least(coalesce(p_per_node, 50), 1000))
        ) nb
        where w.depth < greatest(1, least(coalesce(p_max_depth, 2), 3))
    )
    select d.entity_id, d.depth, e.name, e.type
    from (
        select w.entity_id, min(w.depth)::int as depth
        from walk w
        where w.entity_id <> p_entity
        group by w.entity_id
    ) d
    join exo_private.entities e on e.id = d.entity_id
    order by d.depth, d.entity_id
$$;

ALTER FUNCTION exo_private.related_entities(p_entity bigint, p_max_depth integer, p_per_node integer) OWNER TO exo_owner;

--
-- Name: FUNCTION related_entities(p_entity bigint, p_max_depth integer, p_per_node integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.related_entities(p_entity bigint, p_max_depth integer, p_per_node integer) IS 'Entities related to p_entity (either direction) within p_max_depth (clamped to 1..3) steps, each once at its smallest depth, the entity itself excluded; each node expands at most p_per_node (1..1000) neighbours, lowest ids first: a level-set walk that stays fast on hubs.';

--
-- Name: related_to(text, text, integer, integer, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]) RETURNS TABLE(entity_id bigint, workspace text, type text, name text, depth integer, withheld jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    ids bigint[];
    released text[];
begin
    if p_depth is null or p_depth not between 1 and 3 then
        perform exo_private.invalid_argument(
            'depth must be between 1 and 3, got ' || coalesce(p_depth::text, 'null'));
    end if;
    if p_per_node is null or p_per_node not between 1 and 1000 then
        perform exo_private.invalid_argument(
            'per_node must be between 1 and 1000, got ' || coalesce(p_per_node::text, 'null'));
    end if;
    ids := exo_private.resolve_entity(p_entity, p_workspace);
    released := exo_private.released_keys(p_bridge);
    -- The walk goes only through what the caller may see: from the open start entities, along
    -- relations shown in their window (both ends shown there), to entities that are no closed
    -- deferred subject. A hidden node is never reached, so neither are its neighbours. Each
    -- node expands at most p_per_node neighbours, lowest ids first (as related_entities).
    return query
    with recursive closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(p_bridge) k
    ), closed_windows as materialized (
        select k.window_id from exo_private.closed_windows(p_bridge) k
    ), starts as materialized (
        select v.entity_id, v.withheld from exo_private.entity_evidence(ids, p_bridge) v
    ), walk (node, hops) as (
        select s.entity_id, 0 from starts s where s.withheld = '{}'
        union
        select nb.id, w.hops + 1
        from walk w
        cross join lateral (
            select x.id
            from (
                select r.object_id as id, r.window_id from exo_private.relations r where r.subject_id = w.node
                union all
                select r.subject_id, r.window_id from exo_private.relations r where r.object_id = w.node
            ) x
            join exo_private.entities e on e.id = x.id
            where x.id <> w.node
              and not exists (select 1 from closed c where c.key = e.canonical_key)
              and (x.window_id not in (select cw.window_id from closed_windows cw)
                   or (exo_private.mention_state(w.node, x.window_id, released) = '{}'
                       and exo_private.mention_state(x.id, x.window_id, released) = '{}'))
            group by x.id
            order by x.id
            limit p_per_node
        ) nb
        where w.hops < p_depth
    ), reached as materialized (
        select w.node, min(w.hops)::int as hops
        from walk w
        where w.node <> all (ids)
        group by w.node
    ), hidden as (
        -- the relations of each expanded node that the walk may not take, and why
        select f.workspace, x.relation, s.subject
        from (select distinct w.node, e.workspace from walk w join exo_private.entities e on e.id = w.node
              where w.hops < p_depth) f
        cross join lateral (
            select r.id as relation, r.object_id as id, r.window_id
            from exo_private.relations r where r.subject_id = f.node
            union all
            select r.id, r.subject_id, r.window_id from exo_private.relations r where r.object_id = f.node
        ) x
        join exo_private.entities e on e.id = x.id
        cross join lateral unnest(
            case when exists (select 1 from closed c where c.key = e.canonical_key)
                 then array(select c.subject from closed c where c.key = e.canonical_key)
                 when x.window_id in (select cw.window_id from closed_windows cw)
                 then coalesce(exo_private.mention_state(f.node, x.window_id, released), '{}')
                      || coalesce(exo_private.mention_state(x.id, x.window_id, released), '{}')
                 else '{}'::text[] end) s (subject)
        union
        -- a closed start: none of its relations is walked
        select e.workspace, r.id, s.subject
        from starts st
        join exo_private.entities e on e.id = st.entity_id
        cross join lateral unnest(st.withheld) s (subject)
        left join exo_private.relations r on r.subject_id = st.entity_id or r.object_id = st.entity_id
    ), held as (
        select h.subject, h.workspace, count(distinct h.relation) as relations
        from hidden h
        group by h.subject, h.workspace
    )
    select x.id, x.workspace, x.type, x.name, x.hops, x.hint
    from (
        select 0 as part, row_number() over (order by r.hops, e.name, e.id) as ord,
               e.id, e.workspace, e.type::text as type, e.name, r.hops, null::jsonb as hint
        from reached r
        join exo_private.entities e on e.id = r.node
        union all
        select 1, row_number() over (order by h.subject, h.workspace), null, null, null, null, null,
               jsonb_build_object('subject', h.subject, 'workspace', h.workspace, 'relations', h.relations,
                                  'how', exo_private.hint_how(h.subject))
        from held h
    ) x
    order by x.part, x.ord;
end
$$;

ALTER FUNCTION exo_private.related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]) IS 'exo.related, which see.';

--
-- Name: released_keys(text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.released_keys(bridge text[]) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- A bridged subject opens every name of it that no unbridged subject shares: an alias
    -- two deferred subjects share stays closed until both are bridged, so bridging one person
    -- never opens another's material. A bridged name on no list opens itself (a subject only
    -- a document's frontmatter charges). The rule of plpy/search.py Deference.released_keys.
    with given as (
        select array(select k from unnest(coalesce(bridge, '{}')) b, exo_private.canonical_key(b) k
                     where k is not null) as keys
    ), subjects as materialized (
        select s.keys, s.keys && g.keys as bridged
        from exo_private.deferred_subjects d
        cross join given g
        cross join lateral (select array(select k from unnest(d.subject || d.aliases) n,
                                                     exo_private.canonical_key(n) k
                                         where k is not null) as keys) s
    )
    select array(
        select k from given g, unnest(g.keys) k
        where not exists (select 1 from subjects s where k = any (s.keys))
        union
        select k from subjects s, unnest(s.keys) k
        where s.bridged
          and not exists (select 1 from subjects o where not o.bridged and k = any (o.keys))
        order by 1)
$$;

ALTER FUNCTION exo_private.released_keys(bridge text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION released_keys(bridge text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.released_keys(bridge text[]) IS 'Canonical keys a bridge opens: a charged subject whose key is among them is released. Every name and alias of a deferred subject the bridge names, except one an unbridged subject shares, and each bridged name on no list: the rule of plpy/search.py Deference.released_keys.';

--
-- Name: remark_charged(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.remark_charged() RETURNS integer
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Mark text charged for deferred subjects (stdlib only).

A chunk is charged for a subject when the document's frontmatter says so
(`charged: [subject]`), or when the subject or one of its aliases occurs near a
cue (a word like "funeral" or "died"). Near means in the same chunk, or in the
chunk and its document's title or path, which head every chunk: a note titled
"The funeral" that names Grandpa is charged where it names him. Each mark records
the rule that fired.

A chat message is charged the same way, where near means in the message or in the
message before or after it in its conversation (a cue in one message and the name
in the reply is how people talk), each message read with its sender's name and
the conversation's title.
"""

import re

def _phrase(words):
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words.split()) + r"(?!\w)", re.I)

def compile_subjects(subjects):
    """[(subject, [name patterns])] for [{"subject", "aliases"}]."""
    return [
        (
            s["subject"],
            [(name, _phrase(name)) for name in [s["subject"], *s.get("aliases", [])] if name.strip()],
        )
        for s in subjects
    ]

def compile_cues(cues):
    """[(cue, pattern)] for the cue words."""
    return [(cue, _phrase(cue)) for cue in cues if cue.strip()]

def _marks(text, subjects, cue_patterns, frontmatter_charged):
    declared = {}
    for item in frontmatter_charged or []:
        name = str(item).strip()
        if name:
            declared[name.lower()] = name
    marks = []
    for subject, names in subjects:
        named = [n.lower() for n, _p in names]
        if any(n in declared for n in named):
            for n in named:
                declared.pop(n, None)
            marks.append({"subject": subject, "rule": "frontmatter"})
            continue
        name_hit = next((n for n, p in names if p.search(text)), None)
        if name_hit is None:
            continue
        cue_hit = next((c for c, p in cue_patterns if p.search(text)), None)
        if cue_hit is not None:
            marks.append({"subject": subject, "rule": "cue '" + cue_hit + "' with '" + name_hit + "'"})
    # Subjects charged by frontmatter that are not (yet) on the deference list.
    marks.extend({"subject": name, "rule": "frontmatter"} for name in sorted(declared.values()))
    return marks

def charged_marks(text, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one text; `subjects` as from compile_subjects."""
    return _marks(text, subjects, compile_cues(cues), frontmatter_charged)

def heading(title, path):
    """The text that heads every chunk of a document: its title and path, one a line."""
    return "\n".join(str(part) for part in (title, path) if part)

def chunk_marks(text, head, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one chunk read under its document's heading (see heading())."""
    return charged_marks(head + "\n" + text if head else text, subjects, cues, frontmatter_charged)

def message_marks(lines, subjects, cues, title=None):
    """[[{subject, rule}]] for the messages of one conversation, in order.

    `lines` are the messages as "sender: body". A message is charged for a subject when a
    name of it and a cue occur in the message together with the message before or after it
    (and the conversation's title): both messages of such a pair are marked.
    """
    if not subjects or not lines:
        return [[] for _ in lines]
    cue_patterns = compile_cues(cues)
    head = title + "\n" if title else ""
    if len(lines) == 1:
        pairs = [_marks(head + lines[0], subjects, cue_patterns, [])]
    else:
        pairs = [
            _marks(head + lines[i] + "\n" + lines[i + 1], subjects, cue_patterns, [])
            for i in range(len(lines) - 1)
        ]
    result = []
    for i in range(len(lines)):
        merged = {}
        for marks in pairs[max(0, i - 1) : i + 1]:
            for mark in marks:
                merged.setdefault(mark["subject"], mark)
        result.append(list(merged.values()))
    return result
"""Chat windows: a conversation cut into chunks of consecutive messages (stdlib only).

A conversation's transcript is one line per message, `YYYY-MM-DD HH:MM Sender: text`
(the local time in the setting chat.time_zone; `(undated)` for a message without a
time), joined by "\\n"; a body's own line breaks become continuation lines indented by
two spaces, so every unindented line starts a message. Messages come in order (dated
first by time, then undated, then by id). A session ends at a gap longer than
`gap_minutes` or a new local day; undated messages form a session of their own. A
window closes when the next message would make it longer than `max_chars` (a single
longer message is a window of its own); the next window of the same session starts with
the last `overlap` messages of the one before. A window never spans two sessions.
"""

UNDATED = "(undated)"

def message_line(local, sender, body):
    """One message as transcript text: `local` is 'YYYY-MM-DD HH:MM' or None when undated."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    head = (local or UNDATED) + " " + sender + ": " + lines[0]
    return "\n".join([head] + ["  " + line for line in lines[1:]])

def sessions(messages, gap_minutes):
    """The messages split into sessions (lists of indexes into `messages`).

    A message is a dict with `epoch` (seconds, or None when undated) and `local`
    ('YYYY-MM-DD HH:MM' in the chat's time zone, or None).
    """
    result = []
    previous = None
    for i, m in enumerate(messages):
        if previous is None or (m["epoch"] is None) != (previous["epoch"] is None):
            new = True
        elif m["epoch"] is None:
            new = False
        else:
            new = (
                m["epoch"] - previous["epoch"] > gap_minutes * 60 or m["local"][:10] != previous["local"][:10]
            )
        if new:
            result.append([])
        result[-1].append(i)
        previous = m
    return result

def _size(window, lengths):
    """Characters of a window: its lines and the line breaks between them."""
    return sum(lengths[i] for i in window) + len(window) - 1

def _cut(session, lengths, max_chars, overlap):
    """The windows of one session (lists of indexes into the messages)."""
    windows = []
    current = []
    for i in session:
        if current and _size([*current, i], lengths) > max_chars:
            windows.append(current)
            # The last `overlap` messages again (never the whole window before), as many as fit.
            keep = min(overlap, len(current) - 1)
            current = current[len(current) - keep :] if keep > 0 else []
            while current and _size([*current, i], lengths) > max_chars:
                current = current[1:]
        current.append(i)
    if current:
        windows.append(current)
    return windows

def plan(messages, gap_minutes, max_chars, overlap):
    """{transcript_chars, transcript_bytes (UTF-8), windows}: each window {messages (indexes),
    message_ids, body, char_start, char_end}, where body = transcript[char_start:char_end]."""
    lines = [message_line(m["local"], m["sender"], m["body"]) for m in messages]
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    lengths = [len(line) for line in lines]
    windows = []
    for session in sessions(messages, gap_minutes):
        for window in _cut(session, lengths, max_chars, overlap):
            first, last = window[0], window[-1]
            windows.append(
                {
                    "messages": window,
                    "message_ids": [messages[i]["id"] for i in window],
                    "body": "\n".join(lines[i] for i in window),
                    "char_start": starts[first],
                    "char_end": starts[last] + lengths[last],
                }
            )
    return {
        "transcript_chars": max(offset - 1, 0),
        "transcript_bytes": max(sum(len(line.encode()) + 1 for line in lines) - 1, 0),
        "windows": windows,
    }

def window_marks(message_marks):
    """A window's deference marks: the union, by subject, of its messages' marks (in order)."""
    merged = {}
    for marks in message_marks:
        for mark in marks:
            merged.setdefault(mark["subject"], mark)
    return list(merged.values())
import json

# The chunks keep their text, ids, vectors and graph mentions: only the marks change.
cues = json.loads(plpy.execute("select value::text as v from exo_private.settings where key = 'deference.cues'")[0]["v"])
subjects = compile_subjects(
    json.loads(plpy.execute("select exo_private.deference_list()::text as v")[0]["v"])
)
update = plpy.prepare(
    "update exo_private.chunks set charged = $3::jsonb, "
    "charged_subjects = array(select m ->> 'subject' from jsonb_array_elements($3::jsonb) m) "
    "where workspace = $1 and id = $2",
    ["text", "bigint", "text"],
)
cursor = plpy.cursor(
    "select c.workspace, c.id, c.body, c.charged::text as charged, d.frontmatter -> 'charged' as declared, "
    "d.title, d.path "
    "from exo_private.chunks c join exo_private.documents d on d.id = c.document_id "
    "where d.conversation_id is null"
)
changed = 0
while True:
    rows = cursor.fetch(500)
    if not rows:
        break
    for row in rows:
        declared = json.loads(row["declared"]) if row["declared"] else []
        if isinstance(declared, str):
            declared = [declared]
        marks = chunk_marks(row["body"], heading(row["title"], row["path"]), subjects, cues, declared)
        if marks != json.loads(row["charged"]):
            plpy.execute(update, [row["workspace"], row["id"], json.dumps(marks)])
            changed += 1
# Chat messages by the same rule, in place (sql/200_chat.sql); then each chat window (a chunk of a
# conversation document) carries the union of its messages' marks.
plpy.execute("select exo_private.mark_messages(true)")
cursor = plpy.cursor(
    "select w.workspace, w.chunk_id as id, c.charged::text as charged, "
    "       (select json_agg(coalesce(m.charged, '[]') order by u.ord) "
    "        from unnest(w.message_ids) with ordinality u (id, ord) "
    "        join exo_private.chat_messages m on m.id = u.id)::text as messages "
    "from exo_private.chat_windows w "
    "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id"
)
while True:
    rows = cursor.fetch(500)
    if not rows:
        break
    for row in rows:
        marks = window_marks(json.loads(row["messages"] or "[]"))
        if marks != json.loads(row["charged"]):
            plpy.execute(update, [row["workspace"], row["id"], json.dumps(marks)])
            changed += 1
return changed
$_$;

ALTER FUNCTION exo_private.remark_charged() OWNER TO exo_owner;

--
-- Name: FUNCTION remark_charged(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.remark_charged() IS 'Recompute the deference marks of every chunk (and every chat message: mark_messages; a chat window''s chunk gets the union of its messages'' marks) in place after the list changed (text, ids, vectors and mentions stay); returns how many chunks changed.';

--
-- Name: requeue_dead(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.requeue_dead(p_queue text DEFAULT NULL::text) RETURNS TABLE(queue text, requeued integer, dropped integer)
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    q text;
    letters bigint[];
    targets bigint[];
begin
    for q in select exo_private.worker_queues(p_queue) loop
        -- Locked, so that two of these at once do not both send a letter back.
        select coalesce(array_agg(d.msg_id), '{}'),
               coalesce(array_agg(distinct (d.message -> 'message' ->> exo_private.queue_target_key(q))::bigint), '{}')
          into letters, targets
        from (select l.msg_id, l.message from pgmq.q_dead_letter l
              where l.message ->> 'queue' = q
              for update skip locked) d;
        -- Only targets that still need work and wait in no queue go back.
        select coalesce(array_agg(o.target_id), '{}') into targets
        from exo_private.outstanding_work() o
        where o.queue = q and o.target_id = any(targets) and o.state = 'dead';
        queue := q;
        requeued := exo_private.queue_again(q, targets);
        dropped := cardinality(letters) - requeued;
        if letters <> '{}' then
            perform pgmq.archive('dead_letter', letters);
        end if;
        return next;
    end loop;
end
$$;

ALTER FUNCTION exo_private.requeue_dead(p_queue text) OWNER TO exo_owner;

--
-- Name: FUNCTION requeue_dead(p_queue text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.requeue_dead(p_queue text) IS 'Send every dead-lettered chunk (embed) or window (extract) that still needs work back to its queue as a fresh message (read count 0) and archive the dead letters. Per queue: requeued, and dropped (letters whose work is done, gone or already queued). p_queue null means both queues.';

--
-- Name: rerank_call(text, jsonb, text, text[], bigint[], jsonb); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb) RETURNS jsonb
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""The combined-pool rerank: one function per backend, tried in retrieval.rerank_order (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). Native stage scores are not comparable across
workspaces, so the merged pool is reordered by the first backend that answers: deterministic
(what found a chunk and how much of the query it covers), embedding (cosine similarity to the
query's vector), cross_encoder (the models.rerank endpoint's /rerank scores) or listwise (the
chat model orders the ids). A backend only reorders; one that fails is recorded and the next
is tried, and the deterministic relevance is the last resort. Remote calls go straight to the
model client, bounded per call (retrieval.rerank_limits) and per session
(reader.rerank_calls_per_minute, plpy/budget.py over GD).
"""

import json
import time

"""A per-session call budget for model endpoints the reader can reach (stdlib only).

Inlined into plpython3u functions (`# exo:include budget`). The store is plpython's
GD, a dict that lives as long as the database session and is shared by every
plpython function in it, so one budget covers `exo.embed_query` and the search's own
model calls alike. A sliding window: at most `limit` calls in any `window_s` seconds.
"""

import time

def allow(store, key, limit, window_s=60.0, now=None):
    """Whether one more call of kind `key` fits the budget; counts it when it does.

    `limit` <= 0 refuses every call (an owner can switch a path off)."""
    now = time.monotonic() if now is None else now
    calls = store.setdefault("exo_budget", {}).setdefault(key, [])
    while calls and calls[0] <= now - window_s:
        calls.pop(0)
    if len(calls) >= limit:
        return False
    calls.append(now)
    return True
"""The one HTTP client every model call goes through: OpenAI-compatible chat and embeddings,
and llama.cpp's /v1/rerank (query + documents -> one relevance score per document).

Standard library only and free of exocortex imports, so the same file can be
inlined into a plpython3u function body. Every failure is a ModelError whose
``error_class`` the worker records and decides retries on; this module never
retries.

    endpoint_down   connection refused or reset, unknown host, TLS failure
    timeout         no answer within the endpoint's timeout_s
    http_5xx        the server answered 5xx (ServerError.status)
    http_4xx        the server rejected the request (ClientError.status, its message)
    bad_response    a 2xx body that is not JSON or lacks the expected fields
"""

import http.client
import ipaddress
import json
import math
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT_S = 30.0
_READ_CHUNK = 64 * 1024
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_DEFAULT = urllib.request.build_opener()

class ModelError(Exception):
    """A model call failed; ``error_class`` says how."""

    error_class = "model_error"

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.url = url

class EndpointDown(ModelError):
    error_class = "endpoint_down"

class Timeout(ModelError):
    error_class = "timeout"

class BadResponse(ModelError):
    error_class = "bad_response"

class _HTTPStatusError(ModelError):
    def __init__(self, message: str, url: str | None = None, status: int = 0):
        super().__init__(message, url)
        self.status = status

class ServerError(_HTTPStatusError):
    error_class = "http_5xx"

class ClientError(_HTTPStatusError):
    error_class = "http_4xx"

@dataclass(frozen=True)
class Endpoint:
    url: str
    """Base URL of the OpenAI-compatible API, such as http://127.0.0.1:54330/v1."""
    model: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra: dict[str, Any] = field(default_factory=dict)
    """The setting's other keys (dimensions, response_format, ...)."""

    @classmethod
    def from_setting(cls, value: dict[str, Any]) -> Endpoint:
        """An endpoint from a ``models.*`` setting: {"url", "model", "timeout_s", ...}."""
        if not isinstance(value, dict):
            raise ValueError(f"a model setting must be a JSON object, got {value!r}")
        url, model = value.get("url"), value.get("model")
        if not isinstance(url, str) or not url:
            raise ValueError("the model setting has no url (null means no endpoint is configured)")
        if not isinstance(model, str) or not model:
            raise ValueError(f"the model setting for {url} has no model name")
        timeout = value.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"timeout_s of {url} must be a positive number, got {timeout!r}")
        extra = {k: v for k, v in value.items() if k not in {"url", "model", "timeout_s"}}
        return cls(url.rstrip("/"), model, float(timeout), extra)

@dataclass(frozen=True)
class ChatReply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int

# -- the calls ----------------------------------------------------------------------------

def embed(endpoint: Endpoint, texts: list[str]) -> list[list[float]]:
    """One vector per text, in the order of ``texts``."""
    if not texts:
        return []
    url = f"{endpoint.url}/embeddings"
    body = _post_json(url, {"model": endpoint.model, "input": list(texts)}, endpoint.timeout_s)
    data = body.get("data")
    if not isinstance(data, list):
        raise BadResponse(f"{url} answered without a data list", url)
    if len(data) != len(texts):
        raise BadResponse(f"{url} returned {len(data)} embeddings for {len(texts)} inputs", url)
    vectors: list[list[float] | None] = [None] * len(texts)
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < len(texts) or vectors[index] is not None:
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not isinstance(vector, list) or not vector or not all(_is_number(x) for x in vector):
            raise BadResponse(f"{url} returned an embedding that is not a list of numbers", url)
        vectors[index] = [float(x) for x in vector]
    sizes = {len(v) for v in vectors if v is not None}
    expected = endpoint.extra.get("dimensions")
    if len(sizes) != 1 or (isinstance(expected, int) and sizes != {expected}):
        want = f"; the setting says {expected}" if isinstance(expected, int) else ""
        raise BadResponse(f"{url} returned embeddings of sizes {sorted(sizes)}{want}", url)
    return vectors  # type: ignore[return-value]

def rerank(endpoint: Endpoint, query: str, documents: list[str]) -> list[float]:
    """One relevance score per document, in the order of ``documents`` (higher is more relevant).

    Speaks llama.cpp's /v1/rerank: POST {model, query, documents, top_n} and read
    {"results": [{"index", "relevance_score"}, ...]} in any order. A score is needed
    for every document, so the request asks for ``top_n = len(documents)`` and a
    reply that leaves any document out is a BadResponse.
    """
    if not documents:
        return []
    url = f"{endpoint.url}/rerank"
    payload = {
        "model": endpoint.model,
        "query": query,
        "documents": list(documents),
        "top_n": len(documents),
    }
    body = _post_json(url, payload, endpoint.timeout_s)
    results = body.get("results")
    if not isinstance(results, list):
        raise BadResponse(f"{url} answered without a results list", url)
    scores: list[float | None] = [None] * len(documents)
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score") if isinstance(item, dict) else None
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(documents)
            or scores[index] is not None
        ):
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not _is_number(score):
            raise BadResponse(f"{url} returned a relevance_score that is not a finite number: {score!r}", url)
        scores[index] = float(score)  # type: ignore[arg-type]
    if len(results) != len(documents):
        raise BadResponse(f"{url} returned {len(results)} scores for {len(documents)} documents", url)
    return scores  # type: ignore[return-value]

def chat(
    endpoint: Endpoint,
    messages: list[dict[str, Any]],
    *,
    max_tokens: int,
    response_format: dict[str, Any] | None = None,
    temperature: float = 0.0,
) -> ChatReply:
    """One non-streaming chat completion.

    ``response_format`` (such as a json_schema) is left out when the endpoint's
    setting says ``"response_format": false``, for servers that misbehave with it.
    """
    url = f"{endpoint.url}/chat/completions"
    payload: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": False,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    if response_format is not None and endpoint.extra.get("response_format", True) is not False:
        payload["response_format"] = response_format
    body = _post_json(url, payload, endpoint.timeout_s)
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
        finish_reason = choice.get("finish_reason") or "unknown"
    except (KeyError, IndexError, TypeError):
        raise BadResponse(f"{url} answered without choices[0].message.content", url) from None
    if not isinstance(content, str):
        raise BadResponse(f"{url} answered with a {type(content).__name__} message content", url)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return ChatReply(
        content=content,
        finish_reason=str(finish_reason),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )

def embed_one(setting: dict[str, Any], text: str) -> dict[str, Any]:
    """One text's embedding from a ``models.embeddings``-style setting, never raising for a
    model failure: {vector (pgvector text), model, dimensions, ms} or {error_class, error, ms}.
    What the database uses for a query's vector."""
    began = time.monotonic()
    try:
        target = Endpoint.from_setting(setting)
        (vector,) = embed(target, [text])
    except (ModelError, ValueError) as exc:
        return {
            "error_class": getattr(exc, "error_class", "bad_setting"),
            "error": str(exc)[:500],
            "ms": round((time.monotonic() - began) * 1000, 1),
        }
    return {
        "vector": "[" + ",".join(repr(x) for x in vector) + "]",
        "model": target.model,
        "dimensions": len(vector),
        "ms": round((time.monotonic() - began) * 1000, 1),
    }

def probe(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> bool:
    """True when the endpoint answers a one-token request with 2xx (the body is not checked)."""
    return probe_error(endpoint, kind, timeout_s=timeout_s) is None

def probe_error(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> ModelError | None:
    """How a one-token request to the endpoint failed, or None when it answered 2xx. A Timeout
    means the server took the request but did not answer in time: busy, or hung."""
    if kind == "chat":
        url = f"{endpoint.url}/chat/completions"
        payload: dict[str, Any] = {
            "model": endpoint.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "temperature": 0.0,
            "chat_template_kwargs": {"enable_thinking": False},
        }
    elif kind == "embeddings":
        url = f"{endpoint.url}/embeddings"
        payload = {"model": endpoint.model, "input": ["ping"]}
    else:
        raise ValueError(f"kind must be 'chat' or 'embeddings', got {kind!r}")
    try:
        _request(url, payload, endpoint.timeout_s if timeout_s is None else timeout_s)
    except ModelError as exc:
        return exc
    return None

# -- HTTP ---------------------------------------------------------------------------------

def _post_json(url: str, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    raw = _request(url, payload, timeout_s)
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadResponse(f"{url} answered with a body that is not JSON: {_snippet(raw)}", url) from None
    if not isinstance(body, dict):
        raise BadResponse(f"{url} answered with JSON that is not an object: {_snippet(raw)}", url)
    return body

def _request(url: str, payload: dict[str, Any], timeout_s: float) -> bytes:
    """POST JSON and return the 2xx body; raise the matching ModelError otherwise.

    ``timeout_s`` bounds the whole call: it is the socket timeout for connecting
    and for the wait for the answer (a non-streaming reply arrives only when the
    generation is done), and the deadline checked while the body is read.
    """
    deadline = time.monotonic() + timeout_s
    data = json.dumps(payload).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    opener = _NO_PROXY if _is_loopback(url) else _DEFAULT
    try:
        with opener.open(request, timeout=timeout_s) as response:
            status = response.status
            chunks = []
            while chunk := response.read1(_READ_CHUNK):  # read1: returns what has arrived
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise TimeoutError
            raw = b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise _status_error(url, exc.code, _read_error_body(exc)) from None
    except urllib.error.URLError as exc:
        raise _transport_error(url, exc.reason, timeout_s) from None
    except (OSError, http.client.HTTPException) as exc:
        raise _transport_error(url, exc, timeout_s) from None
    if time.monotonic() > deadline:
        raise Timeout(f"{url} took longer than {timeout_s:g} s", url)
    if not 200 <= status < 300:
        raise BadResponse(f"{url} answered HTTP {status}", url)
    return raw

def _transport_error(url: str, reason: object, timeout_s: float) -> ModelError:
    if isinstance(reason, TimeoutError):  # socket.timeout is TimeoutError
        return Timeout(f"{url} did not answer within {timeout_s:g} s", url)
    if isinstance(reason, http.client.IncompleteRead):
        return EndpointDown(f"{url} closed the connection in the middle of its answer", url)
    if isinstance(reason, http.client.RemoteDisconnected | ConnectionError):
        return EndpointDown(f"{url} closed the connection: {reason}", url)
    if isinstance(reason, http.client.HTTPException):
        return BadResponse(f"{url} answered with malformed HTTP: {reason!r}", url)
    if isinstance(reason, socket.gaierror):
        return EndpointDown(f"{url}: unknown host ({reason})", url)
    if isinstance(reason, ssl.SSLError):
        return EndpointDown(f"{url}: TLS failed ({reason})", url)
    if isinstance(reason, OSError):
        return EndpointDown(f"{url} is unreachable: {reason.strerror or reason}", url)
    return EndpointDown(f"{url} is unreachable: {reason}", url)

def _status_error(url: str, status: int, body: bytes) -> ModelError:
    message = _error_message(body)
    if status >= 500:
        return ServerError(f"{url} answered HTTP {status}: {message}", url, status)
    if status >= 400:
        return ClientError(f"{url} answered HTTP {status}: {message}", url, status)
    return BadResponse(f"{url} answered HTTP {status}: {message}", url)

def _read_error_body(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.HTTPException):
        return b""
    finally:
        exc.close()

def _error_message(body: bytes) -> str:
    """The server's own words: OpenAI's {"error": {"message"}}, {"error": "..."} or the text."""
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _snippet(body) or "(empty body)"
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return _snippet(body)

def _snippet(raw: bytes, limit: int = 200) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."

def _is_loopback(url: str) -> bool:
    """Loopback endpoints never go through an environment proxy (no_proxy rarely lists them)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)

def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
"""What a search reads from its question before any stage runs (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py): the settings, the chosen workspaces, the
temporal signal and the archive decision, the deference of this search, and the query's
material (entities named, identifiers, content words, title and file keys). `db` is a
retrieve.Statements: prepared statements of the session.
"""

import datetime
import json
import time

"""Retrieval logic that is not a query (stdlib only).

Inlined into exo_private.retrieve (`# exo:include search`) and importable as
plain Python for tests. The database runs the stage queries; this module decides
what the query words are, which candidates a workspace admits, how the combined
pool is ordered, and what a context packet holds.
"""

import math
import re

"""Text normalisation shared by the database and the worker (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include textnorm`),
and importable as plain Python for tests.
"""

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"

def canonical_key(name):
    """The identity key of a name: NFKC, case-folded, inner whitespace collapsed,
    surrounding quotes and punctuation removed. "  Jane  DOE. " -> "jane doe".
    Returns None for None or for a name with nothing left."""
    if name is None:
        return None
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACE.sub(" ", text).strip().strip(_EDGE_PUNCT).strip()
    return text or None

PRESENT_BANDS = ("current", "recent")
ALL_BANDS = ("current", "recent", "archival")
MAX_QUERY_CHARS = 1000  # the query's words, n-grams and identifiers come from this much of it
MAX_INPUT_CHARS = 2000  # a search reads no more of a query (the temporal scan and the embedding)
MAX_NGRAM = 6
MAX_IDENTIFIERS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDENTIFIER_INNER = re.compile(r"[-_./:#@]")
_QUOTED = re.compile(r"\"([^\"]{3,100})\"")
_EDGE = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=[-*#>|])")
# The start of a message line in a chat chunk: its time (or "(undated)") and its sender; in a
# packet's excerpt the time without the day its citation names (without_day).
_CHAT_LABEL = re.compile(r"^((?:\d{4}-\d\d-\d\d )?\d\d:\d\d|\(undated\)) [^\n]*?: ", re.M)
# Words too common to say what a passage is about (excerpt choice only; BM25 has its own).
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between both
    but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours""".split()  # noqa: SIM905 (a list literal would run to a page)
)

# -- the query ---------------------------------------------------------------------------

def query_words(query):
    """The query's words, lower-cased, in order (its first MAX_QUERY_CHARS characters)."""
    return [w.casefold() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]

def content_words(query):
    """Distinct words of the query that are not stopwords, in order."""
    seen = []
    for word in query_words(query):
        if word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen

def ngram_keys(query, max_n=MAX_NGRAM):
    """Every run of 1..max_n whitespace-separated tokens, as canonical keys (an entity name
    or a title can only match one of these)."""
    tokens = [t for t in ((query or "")[:MAX_QUERY_CHARS]).split() if t.strip(_EDGE)]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            key = canonical_key(" ".join(tokens[i : i + n]))
            if key and key not in keys:
                keys.append(key)
    return keys

def name_keys(query, max_n=3):
    """Runs of 1..max_n query words as canonical keys: a person's name or first name as the
    question writes it, without the punctuation around it ("Priya's" is "priya")."""
    words = query_words(query)
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = canonical_key(" ".join(words[i : i + n]))
            if len(key) > 1 and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys

def title_keys(query, max_n=MAX_NGRAM):
    """Runs of 1..max_n query words joined by single spaces: documents.title_key's form, which
    lower-cases (SQL lower(), not casefold: "Straße" stays "straße")."""
    words = [w.lower() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = " ".join(words[i : i + n])
            if (n > 1 or len(key) >= 4) and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys

def identifiers(query):
    """Strings to find verbatim: quoted phrases, and tokens that mix letters with digits or
    carry inner punctuation (host names, ticket ids, file names, versions). Abbreviations of
    single letters ("e.g.", "U.S.") are not identifiers."""
    text = (query or "")[:MAX_QUERY_CHARS]
    found = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    for token in text.split():
        token = token.strip(_EDGE)
        if not 3 <= len(token) <= 100:
            continue
        has_digit = any(c.isdigit() for c in token)
        has_alpha = any(c.isalpha() for c in token)
        inner = _IDENTIFIER_INNER.search(token[1:-1]) and any(len(w) > 1 for w in _WORD.findall(token))
        if has_alpha and (has_digit or inner):
            found.append(token)
    unique = []
    for item in found:
        if item and item.casefold() not in [u.casefold() for u in unique]:
            unique.append(item)
    return unique[:MAX_IDENTIFIERS]

def file_keys(query):
    """Lower-cased tokens that could be a file name or a file's stem."""
    return [i.casefold().rsplit("/", 1)[-1] for i in identifiers(query) if " " not in i]

def coverage(body, words):
    """The share of `words` (a query's content words) among the words of `body`, compared by
    their first five letters (a cheap stem: "replication" meets "replicas", "invoiced" meets
    "invoices"); 0 without words."""
    if not words:
        return 0.0
    stems = {w[:5] for w in _WORD.findall(body.casefold())}
    return sum(1 for w in words if w[:5] in stems) / len(words)

# -- bands and deference ------------------------------------------------------------------

def archive_decision(signal, open_archive):
    """(open, why): whether the archival band opens before any search, and why."""
    if open_archive is True:
        return True, "the caller opened the archive"
    if open_archive is False:
        return False, "the caller kept the archive closed"
    if signal.get("opens_archive"):
        texts = [s["text"] for s in signal.get("signals", []) if s.get("opens_archive")]
        return True, "temporal signal: " + ", ".join(repr(t) for t in texts)
    return False, None

class Deference:
    """Which charged subjects of one search stay withheld, and why the others are released.

    Time and care are separate decisions. An open archive (a temporal signal or open_archive,
    never the fallback taken when nothing present answers) opens archival bands; it releases a
    subject only when the question also names it, by name or alias. Bridging a subject releases
    it wherever it is. `time_releases` (the setting deference.time_releases) restores the looser
    rule: an open archive alone releases every subject.

    Every charged subject counts, whether it is on the deference list or only declared charged
    by a document's frontmatter (over-withholding is the safe direction); a subject on the list
    answers to its name and every alias.
    """

    def __init__(
        self, deferred, bridge=None, query="", archive_open=False, archive_why=None, time_releases=False
    ):
        self.groups = [
            {k for k in (canonical_key(n) for n in [s["subject"], *s.get("aliases", [])]) if k}
            for s in deferred
        ]
        self.bridged = self.released_keys(bridge or [])
        self.asked = set(ngram_keys(query))
        self.archive_open = bool(archive_open)
        self.archive_why = archive_why
        self.time_releases = bool(time_releases)

    def names(self, subject):
        """Canonical keys a subject answers to: all names of its deferred subject(s), else its own."""
        key = canonical_key(subject)
        if not key:
            return set()
        keys = {key}
        for group in self.groups:
            if key in group:
                keys |= group
        return keys

    def released_keys(self, bridge):
        """The keys a bridge opens: each bridged name not on the list, and every name of a bridged
        deferred subject that no unbridged subject shares (an alias two subjects share stays
        closed until both are bridged: bridging one person never opens another's material)."""
        given = {k for k in (canonical_key(b or "") for b in bridge) if k}
        bridged = [g for g in self.groups if g & given]
        unbridged = [g for g in self.groups if not g & given]
        listed = set().union(*self.groups)
        opened = set().union(*bridged) - set().union(*unbridged)
        return (given - listed) | opened

    def why_released(self, subject):
        """Why a charged subject is released in this search, or None while it is withheld."""
        names = self.names(subject)
        if canonical_key(subject) in self.bridged:
            return "bridged"
        if not self.archive_open:
            return None
        named = sorted(names & self.asked, key=lambda k: (-len(k), k))
        if named:
            return f"the question names {named[0]!r} and the archive is open ({self.archive_why})"
        if self.time_releases:
            return f"time releases (deference.time_releases) and the archive is open ({self.archive_why})"
        return None

    def withheld(self, charged):
        """The charged subjects of one chunk that keep it out of the results."""
        return [s for s in charged if self.why_released(s) is None]

def released(results, why):
    """What charged material a search hands out: per (subject, workspace) the chunks among
    `results` charged for it, and `why(subject)` it was released (Deference.why_released)."""
    counts = {}
    for r in results:
        for subject in r.get("charged") or []:
            counts[(subject, r["workspace"])] = counts.get((subject, r["workspace"]), 0) + 1
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "why": why(subject)}
        for (subject, workspace), n in sorted(counts.items())
    ]

# -- admitting candidates into a workspace's pool -------------------------------------------

class WorkspacePool:
    """The candidates one workspace contributes, in the order its stages found them."""

    def __init__(self, workspace, cap, need):
        self.workspace = workspace
        self.cap = cap
        self.need = min(need, cap)
        self.hits = []
        self.seen = set()
        self.withheld = {}
        self.stages = []

    @property
    def confident(self):
        return sum(1 for h in self.hits if h["confident"])

    def wants_more(self):
        """(True, None) while a stage should run, else (False, why it is skipped)."""
        if len(self.hits) >= self.cap:
            return False, "the workspace holds per_workspace candidates"
        if self.confident >= self.need:
            return False, f"enough confident candidates ({self.confident} of {self.need})"
        return True, None

    def admit(self, stage, rows, withhold):
        """Take a stage's rows {chunk_id, score, confident, charged, detail}; `withhold(charged)`
        lists the subjects that keep a row out. Returns (admitted, withheld) counts."""
        admitted = withheld = 0
        for row in rows:
            chunk = row["chunk_id"]
            if chunk in self.seen:
                continue
            self.seen.add(chunk)
            subjects = withhold(row.get("charged") or [])
            if subjects:
                withheld += 1
                for subject in subjects:
                    self.withheld.setdefault(subject, set()).add(chunk)
                continue
            if len(self.hits) >= self.cap:
                continue
            self.hits.append(
                {
                    "chunk_id": chunk,
                    "workspace": self.workspace,
                    "stage": stage,
                    "score": row["score"],
                    "confident": bool(row["confident"]),
                    "detail": row.get("detail"),
                    "match": row.get("match", stage),
                    "charged": list(row.get("charged") or []),  # released: report["released"] names them
                }
            )
            admitted += 1
        return admitted, withheld

def named_subjects(query, deferred):
    """The deferred subjects the query names, by subject or alias."""
    keys = set(ngram_keys(query))
    return [
        s["subject"]
        for s in deferred
        if any(canonical_key(n) in keys for n in [s["subject"], *s.get("aliases", [])] if canonical_key(n))
    ]

def hints(pools, how, named=None):
    """One hint per (subject, workspace) with chunks withheld, never their text.

    `named` {(subject, workspace): charged chunks} adds what the query asked about by name
    but the search never reached (in a closed band, say): such material exists, and the hint
    says so. A hint counts the larger of the two."""
    counts = dict(named or {})
    for pool in pools:
        for subject, chunks in pool.withheld.items():
            key = (subject, pool.workspace)
            counts[key] = max(counts.get(key, 0), len(chunks))
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "how": how(subject)}
        for (subject, workspace), n in sorted(counts.items())
        if n > 0
    ]

# -- the combined-pool rank -----------------------------------------------------------------

def deterministic_relevance(candidate, weights):
    """Relevance from what found the chunk and how much of the query it covers (0..1)."""
    stage = weights["stage"].get(candidate["stage"], 0.5)
    coverage = candidate.get("coverage") or 0.0
    return 0.5 * stage + 0.5 * coverage

def priority(candidate, weights, recency=True):
    """Band weight (only under recency preference), times the boost of how the chunk matched
    (a document named by title or file name outranks one that only mentions it), times the
    canonical boost."""
    value = weights["band"].get(candidate["band"], 1.0) if recency else 1.0
    value *= weights.get("match", {}).get(candidate.get("match"), 1.0)
    if candidate.get("canonical"):
        value *= weights["canonical"]
    return value

# A question about the present state of things ("where does she live now?"): among evidence of
# like relevance, the newest value is the answer, so recency counts over months, not years.
_ASKS_PRESENT = re.compile(
    r"\b(?:now|nowadays|currently|current|these days|at the moment|at present|still|any ?more|lately|latest)\b",
    re.I,
)

def asks_present(query):
    """Whether a question asks what is true now (a present-state word such as "now", "currently",
    "these days", "still")."""
    return bool(_ASKS_PRESENT.search(query or ""))

def freshness(candidate, weights, today_ordinal, years, recency=True, present=False):
    """Closeness to the years the question names; else, under recency preference, recency (over
    present_half_life_days for a question about the present); else (the archive is open)
    neutral."""
    if candidate.get("canonical"):
        return 1.0  # a canonical document is current by declaration, whatever its date
    written = candidate.get("written_ordinal")
    if written is None:
        return weights["freshness_floor"]
    if years:
        year = candidate["written_year"]
        first, last = min(years), max(years)
        miss = first - year if year < first else year - last if year > last else 0
        return max(weights["freshness_floor"], 1.0 - weights["year_miss_per_year"] * miss)
    if not recency:
        return 1.0
    age = max(0, today_ordinal - written)
    half_life = weights["present_half_life_days"] if present else weights["freshness_half_life_days"]
    decay = 0.5 ** (age / float(half_life))
    return weights["freshness_floor"] + (1.0 - weights["freshness_floor"]) * decay

def normalise(scores):
    """Scores of any scale to 0.05..1 (min-max), so a backend's relevance multiplies like another's."""
    values = [s for s in scores.values() if s is not None and math.isfinite(s)]
    if not values:
        return {k: 0.05 for k in scores}
    low, high = min(values), max(values)
    if not math.isfinite(high - low):  # the span overflows: halve everything first
        values = {k: s / 2 for k, s in scores.items() if s is not None and math.isfinite(s)}
        low, high = low / 2, high / 2
    else:
        values = {k: s for k, s in scores.items() if s is not None and math.isfinite(s)}
    span = high - low
    return {
        k: (0.05 if k not in values else 1.0 if span == 0 else 0.05 + 0.95 * (values[k] - low) / span)
        for k in scores
    }

def blend(backend, deterministic, share):
    """A backend's relevance mixed with the deterministic one: `share` of it from the backend,
    so what found a chunk and how much of the query it covers still count."""
    return {k: share * backend.get(k, 0.0) + (1.0 - share) * v for k, v in deterministic.items()}

def from_ranking(ranked_ids, ids):
    """Relevance from an ordered id list (a listwise reply): first 1.0, falling linearly.

    Enforces the permutation: ids the reply invented or repeated are dropped, ids it left
    out follow in their incoming order."""
    order = []
    for i in ranked_ids:
        if i in ids and i not in order:
            order.append(i)
    order += [i for i in ids if i not in order]
    n = len(order)
    return {chunk: 1.0 - (rank / n) * 0.95 for rank, chunk in enumerate(order)}

def rank(candidates, relevance, weights, today_ordinal, years, recency=True, present=False):
    """The candidates in final order, each with its relevance and score.

    A reranker only reorders: the chunks out are exactly the chunks in, whatever the
    backend returned (a missing relevance counts as the lowest)."""
    ranked = []
    for c in candidates:
        r = relevance.get(c["chunk_id"])
        r = 0.0 if r is None or not math.isfinite(r) else r
        score = (
            r * priority(c, weights, recency) * freshness(c, weights, today_ordinal, years, recency, present)
        )
        ranked.append(dict(c, relevance=round(r, 4), score=round(score, 6)))
    ranked.sort(key=lambda c: (-c["score"], -c["relevance"], c["chunk_id"]))
    if sorted(c["chunk_id"] for c in ranked) != sorted(c["chunk_id"] for c in candidates):
        raise AssertionError("rerank changed the set of candidates")
    return ranked

def listwise_prompt(query, candidates, excerpt_chars):
    """The chat messages asking a model to order candidates by usefulness for the query."""
    lines = ["[{}] {}".format(c["chunk_id"], " ".join(c["body"].split())[:excerpt_chars]) for c in candidates]
    return [
        {
            "role": "system",
            "content": "You rank passages by how well they answer a question. Reply with JSON only.",
        },
        {
            "role": "user",
            "content": "Question: "
            + query[:MAX_QUERY_CHARS]
            + "\n\nPassages:\n"
            + "\n".join(lines)
            + '\n\nReply as {"ranking": [ids, most useful first]}.',
        },
    ]

def parse_listwise(content, ids):
    """The ids a listwise reply ranks, in its order; ValueError when it ranks none of ours."""
    import json

    try:
        reply = json.loads(content or "")
    except ValueError:
        # A reply cut off at its token cap: the ids it managed to list still count.
        match = re.search(r"\[\s*(\d[\d,\s]*)", content or "")
        if not match:
            raise ValueError("the reply is neither JSON nor holds a list of ids") from None
        reply = {"ranking": [int(x) for x in re.findall(r"\d+", match.group(1))]}
    ranking = reply.get("ranking") if isinstance(reply, dict) else reply
    if not isinstance(ranking, list):
        raise ValueError("the reply has no ranking list")
    ranked = [i for i in ranking if isinstance(i, int) and not isinstance(i, bool) and i in ids]
    if not ranked:
        raise ValueError("the ranking names none of the candidates")
    return ranked

# -- the context packet -----------------------------------------------------------------------

def estimate_tokens(text):
    """Tokens of a text, estimated as one per four characters (rounded up)."""
    return (len(text) + 3) // 4

def excerpt(body, words, max_chars):
    """The passage of `body` (at most max_chars) around the sentences richest in `words`."""
    text = body.strip()
    if len(text) <= max_chars:
        return text
    spans = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    wanted = set(words)

    def hits(span):
        return len(wanted & {w.casefold() for w in _WORD.findall(text[span[0] : span[1]])})

    best = max(range(len(spans)), key=lambda i: (hits(spans[i]), -i))
    lo = hi = best
    while True:
        grown = False
        if hi + 1 < len(spans) and spans[hi + 1][1] - spans[lo][0] <= max_chars:
            hi += 1
            grown = True
        if lo > 0 and spans[hi][1] - spans[lo - 1][0] <= max_chars:
            lo -= 1
            grown = True
        if not grown:
            break
    a, b = spans[lo][0], spans[hi][1]
    if b - a > max_chars:  # one sentence longer than the excerpt
        b = a + max_chars
    passage = text[a:b].strip()
    return ("... " if a > 0 else "") + passage + (" ..." if b < len(text) else "")

def said(body):
    """What a chat chunk's messages say, without their time and sender labels: a question naming
    the other person matches the sender of half the lines, which says nothing about which one
    answers it."""
    return _CHAT_LABEL.sub("", body)

def chat_messages(body):
    """The messages of a chat chunk's body, each its lines joined: an unindented line starts a
    message, an indented one continues it."""
    messages = []
    for line in body.strip().split("\n"):
        if messages and line[:1].isspace():
            messages[-1] += "\n" + line
        else:
            messages.append(line)
    return messages

def _grow(units, best, max_chars):
    """(lo, hi): the run of units around `best`, joined by newlines within max_chars, grown one
    unit after it (an answer is often a reply) and one before it at a time while they fit."""
    lo = hi = best
    size = len(units[best])
    while True:
        grown = False
        if hi + 1 < len(units) and size + 1 + len(units[hi + 1]) <= max_chars:
            hi += 1
            size += 1 + len(units[hi])
            grown = True
        if lo > 0 and size + 1 + len(units[lo - 1]) <= max_chars:
            lo -= 1
            size += 1 + len(units[lo])
            grown = True
        if not grown:
            return lo, hi

def chat_excerpt(body, words, max_chars):
    """Whole messages of a chat chunk (at most max_chars and the ellipsis marks): the message
    richest in `words` in what it says (said(); compared by their first five letters, as coverage()
    does) and its
    neighbours while they fit. A message longer than that keeps its time and sender and whole
    lines around its line richest in `words`; only a line longer than the limit is cut."""
    text = body.strip()
    if len(text) <= max_chars:
        return text
    wanted = {w[:5] for w in words}

    def richest(units):
        hits = [len(wanted & {w[:5] for w in _WORD.findall(said(u).casefold())}) for u in units]
        return max(range(len(units)), key=lambda i: (hits[i], -i))

    messages = chat_messages(text)
    best = richest(messages)
    if len(messages[best]) <= max_chars:
        lo, hi = _grow(messages, best, max_chars)
        passage = "\n".join(messages[lo : hi + 1])
        return ("...\n" if lo > 0 else "") + passage + ("\n..." if hi + 1 < len(messages) else "")
    # One message longer than the excerpt: its label, then its richest lines.
    label = _CHAT_LABEL.match(messages[best])
    label = label.group() if label and label.end() <= max_chars // 2 else ""
    lines = messages[best][len(label) :].split("\n")
    room = max_chars - len(label)
    at = richest(lines)
    if len(lines[at]) > room:
        return label + excerpt(lines[at], words, room)
    lo, hi = _grow(lines, at, room)
    passage = "\n".join(lines[lo : hi + 1]).lstrip()  # a continuation line's indent goes after "... "
    return (
        label
        + ("... " if lo > 0 else "")
        + passage
        + ("\n..." if hi + 1 < len(lines) or best + 1 < len(messages) else "")
    )

def without_day(passage, day):
    """A chat passage's message lines with their time only where their day is `day`: a window
    never spans two days, and its citation names the day."""
    prefix = day + " "
    return "\n".join(line[len(prefix) :] if line.startswith(prefix) else line for line in passage.split("\n"))

def chunk_excerpt(c, words, max_chars):
    """The excerpt of a candidate: whole messages for a chat chunk (times without the day its
    citation names), sentences for a document's."""
    if c.get("chat"):
        start = chat_start(c["body"])
        return chat_excerpt(without_day(c["body"], start[:10]) if start else c["body"], words, max_chars)
    return excerpt(c["body"], words, max_chars)

def chat_start(body):
    """The time of a chat chunk's first message as its lines show it ("2024-03-04 09:12"), or
    None when it is undated."""
    label = _CHAT_LABEL.match(body)
    return label.group(1) if label and len(label.group(1)) == 16 else None

def citation(c):
    """A chunk's citation label: workspace, path, date and band; for a chat chunk, workspace,
    the conversation's title and its first message's time as the chunk shows it."""
    if c.get("chat"):
        when = chat_start(c["body"]) or "undated"
        return '{}:chat "{}" {}'.format(c["workspace"], c["chat"]["title"], when)
    date = c.get("written_at") or "undated"
    return "{}:{} ({}, {})".format(c["workspace"], c["path"], date, c["band"])

def packet(query, ranked, hint_list, report, budget, settings):
    """The context packet as {text, tokens, used, ...} within `budget` tokens."""
    words = content_words(query)
    top = ranked[0]["score"] if ranked else 0.0
    chosen = [c for c in ranked if top > 0 and c["score"] >= settings["packet.min_relative_score"] * top][
        : settings["packet.max_chunks"]
    ]

    head = "# Context for: " + " ".join((query or "")[:MAX_INPUT_CHARS].split())[:200] + "\n\n"
    facts = "## Current facts\n(none recorded yet)\n\n"
    hint_lines = [
        "- {} chunk(s) about {} in {} withheld (deferred subject). {}".format(
            h["chunks"], h["subject"], h["workspace"], h["how"]
        )
        for h in hint_list
    ]
    hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
    notes = []
    if report.get("archive", {}).get("open"):
        notes.append("archive open: " + str(report["archive"].get("why")))
    for d in report.get("degradations", []):
        notes.append("degraded: {} ({})".format(d["component"], d["error_class"]))

    why = {r["subject"]: r["why"] for r in report.get("released") or []}.get

    def provenance(used):
        # One short line per cited chunk: its document and conversation are in `used`.
        lines = ["## Provenance", "rerank: " + report["rerank"]["backend"]]
        lines.extend(
            "[{}] chunk {} via {} (rank {:.3f})".format(n, c["chunk_id"], c["stage"], c["score"])
            for n, c in enumerate(used, 1)
        )
        cited = released(used, why)
        if cited:  # the first note: a packet cut short keeps it
            lines.append(
                "note: released deferred material: "
                + "; ".join("{subject} in {workspace} ({chunks} chunk(s): {why})".format(**r) for r in cited)
            )
        lines.extend("note: " + n for n in notes)
        return "\n".join(lines) + "\n"

    fixed = head + facts + "## Evidence\n"
    used, blocks = [], []
    for c in chosen:

        def block(chars, c=c):
            return f"[{len(used) + 1}] {citation(c)}\n{chunk_excerpt(c, words, chars)}\n\n"

        chars = settings["packet.excerpt_chars"]
        rest = fixed + "".join(blocks) + hint_text + provenance([*used, c])
        if estimate_tokens(rest + block(chars)) > budget:
            # What is left of the budget still holds a shorter excerpt of this chunk, or nothing more.
            chars = budget * 4 - len(rest + block(0)) - 8  # room for the ellipsis marks
            if chars < 120:
                break
            blocks.append(block(chars))
            used.append(c)
            break
        blocks.append(block(chars))
        used.append(c)
    if not used:
        blocks = ["(nothing found)\n\n"]
    text = fixed + "".join(blocks) + hint_text + provenance(used)
    while estimate_tokens(text) > budget and hint_lines:
        hint_lines.pop()  # a tiny budget: hints are cut before the text ever overflows
        hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
        text = fixed + "".join(blocks) + hint_text + provenance(used)
    if estimate_tokens(text) > budget:
        text = text[: max(0, budget * 4 - 4)].rstrip() + "\n..."
        text = text[: budget * 4]
    return {
        "text": text,
        "tokens": estimate_tokens(text),
        "budget": budget,
        "used": [
            {
                "n": n,
                "chunk_id": c["chunk_id"],
                "document_id": c["document_id"],
                "conversation_id": c["chat"]["conversation_id"] if c.get("chat") else None,
                "citation": citation(c),
                "workspace": c["workspace"],
                "path": c["path"],
                "band": c["band"],
                "written_at": c.get("written_at"),
                "stage": c["stage"],
            }
            for n, c in enumerate(used, 1)
        ],
        "hints": hint_list,
    }

def elapsed_ms(since):
    """Milliseconds since a time.monotonic() reading, to two places."""
    return round((time.monotonic() - since) * 1000, 2)

def load_settings(db):
    """The settings a search reads: retrieval.*, packet.*, models.*, deference.*, reader.*."""
    return {
        r["key"]: json.loads(r["value"])
        for r in db.run(
            "settings",
            "select key, value::text from exo_private.settings "
            "where key like 'retrieval.%' or key like 'packet.%' or key like 'models.%' "
            "or key like 'deference.%' or key like 'reader.%'",
            [],
            [],
        )
    }

def choose_workspaces(db, workspaces):
    """The workspaces to search: all (null), else the caller's, each once, in the caller's order."""
    known = [
        r["name"]
        for r in db.run("workspaces", "select name from exo_private.workspaces order by name", [], [])
    ]
    return known if workspaces is None else [w for i, w in enumerate(workspaces) if w not in workspaces[:i]]

def active_model(db):
    """{id, dimensions} of the embedding model in use (None, None before any embedding)."""
    row = db.run(
        "model",
        "select m.id, m.dimensions from exo_private.embedding_models m "
        "where m.id = exo_private.active_embedding_model()",
        [],
        [],
    )
    return (
        {"id": row[0]["id"], "dimensions": row[0]["dimensions"]} if row else {"id": None, "dimensions": None}
    )

class Question:
    """One search's reading of its question: day, signal, archive decision, deference, material."""

    def __init__(self, text, as_of):
        self.text = text  # the query's first search.MAX_INPUT_CHARS characters
        self.as_of_day = (as_of or "")[:10] or datetime.date.today().isoformat()
        self.today = datetime.date.fromisoformat(self.as_of_day)

    def read_time(self, db, open_archive):
        """The temporal signal and whether the archive opens before any search."""
        self.signal = json.loads(
            db.run(
                "temporal",
                "select exo.temporal_signal($1, $2)::text as s",
                ["text", "date"],
                [self.text, self.as_of_day],
            )[0]["s"]
        )
        self.archive_open, self.archive_why = archive_decision(self.signal, open_archive)

    def read_care(self, db, bridge, settings):
        """The deferred subjects and this search's Deference (time and care decided apart)."""
        self.deferred = [
            {"subject": r["subject"], "aliases": list(r["aliases"] or [])}
            for r in db.run(
                "deferred",
                "select subject, aliases from exo_private.deferred_subjects order by subject",
                [],
                [],
            )
        ]
        # An open archive releases a subject only when the question names it, unless the owner
        # chose the looser rule (deference.time_releases).
        self.time_releases = bool(settings.get("deference.time_releases", False))
        self.care = Deference(
            self.deferred, bridge, self.text, self.archive_open, self.archive_why, self.time_releases
        )

    def read_material(self, db, chosen, max_entities):
        """Entities the question names (per workspace, longest name first), identifiers,
        content words, title keys and file keys."""
        self.entities = {}
        for r in db.run(
            "entities",
            "select e.id, e.workspace, e.name from exo_private.entities e "
            "where e.canonical_key = any ($1) and e.workspace = any ($2) "
            "order by e.workspace, length(e.canonical_key) desc, e.id",
            ["text[]", "text[]"],
            [ngram_keys(self.text), chosen],
        ):
            found = self.entities.setdefault(r["workspace"], [])
            if len(found) < max_entities:
                found.append({"id": r["id"], "name": r["name"]})
        self.idents = identifiers(self.text)
        self.terms = content_words(self.text)
        self.titles = title_keys(self.text)
        self.files = file_keys(self.text)

    def temporal_report(self):
        return {
            "signal": self.signal["signal"],
            "opens_archive": self.signal["opens_archive"],
            "signals": [
                {"kind": s["kind"], "text": s["text"], "opens_archive": s["opens_archive"]}
                for s in self.signal["signals"]
            ],
            "years": self.signal["years"],
        }

    def recognised_report(self):
        return {
            "identifiers": self.idents,
            "entities": {ws: [e["name"] for e in found] for ws, found in self.entities.items()},
        }

LISTWISE_REPLY = {
    "type": "json_schema",
    "json_schema": {
        "name": "ranking",
        "schema": {
            "type": "object",
            "properties": {"ranking": {"type": "array", "items": {"type": "integer"}}},
            "required": ["ranking"],
        },
    },
}

def remote_rerank(budget_store, backend, endpoint, query, passages, ids, options, settings):
    """Ask a remote backend about passages (the caller's best first), never raising for a model
    failure: {scores: {id: score}} or {ranking: [ids]}, or {error_class, error}; with passages
    (how many were sent) and ms. Sends the first max_passages passages, passage_chars of each
    (retrieval.rerank_limits); over reader.rerank_calls_per_minute in this session: rate_limited,
    and no call."""
    began = time.monotonic()
    question = (query or "")[:MAX_QUERY_CHARS]
    limit = settings.get("reader.rerank_calls_per_minute", 120)
    bounds = dict({"max_passages": 100, "passage_chars": 2000}, **settings.get("retrieval.rerank_limits", {}))
    sent_ids = list(ids or [])[: bounds["max_passages"]]
    sent = [(p or "")[: bounds["passage_chars"]] for p in list(passages or [])[: len(sent_ids)]]
    try:
        if backend not in ("cross_encoder", "listwise"):
            raise ValueError("unknown remote rerank backend {!r}".format((backend or "")[:100]))
        if not allow(budget_store, "rerank", limit):  # per session, whoever calls
            result = {
                "error_class": "rate_limited",
                "error": f"more than {limit} rerank calls in a minute in this session "
                "(reader.rerank_calls_per_minute)",
            }
        elif backend == "cross_encoder":
            scores = rerank(Endpoint.from_setting(endpoint), question, sent)
            result = {"scores": dict(zip(sent_ids, scores, strict=False))}
        else:
            candidates = [{"chunk_id": i, "body": p} for i, p in zip(sent_ids, sent, strict=False)]
            reply = chat(
                Endpoint.from_setting(endpoint),
                listwise_prompt(question, candidates, options["excerpt_chars"]),
                max_tokens=options["max_tokens"],
                response_format=LISTWISE_REPLY,
            )
            result = {"ranking": parse_listwise(reply.content, set(sent_ids))}
    except (ModelError, ValueError) as exc:
        result = {"error_class": getattr(exc, "error_class", "bad_response"), "error": str(exc)[:500]}
    result["passages"] = len(sent_ids)
    result["ms"] = round((time.monotonic() - began) * 1000, 1)
    return result

class RerankPool:
    """What every backend may read: the pool (by chunk id), its incoming order (deterministic
    rank, best first), the deterministic relevance, the settings and the query."""

    def __init__(
        self,
        db,
        candidates,
        incoming,
        deterministic,
        settings,
        question,
        model,
        embedding,
        report,
        budget_store,
    ):
        self.db = db
        self.candidates = candidates
        self.incoming = incoming
        self.deterministic = deterministic
        self.settings = settings
        self.question = question
        self.model = model
        self.embedding = embedding
        self.report = report
        self.budget_store = budget_store

def rerank_deterministic(pool, t0):
    return pool.deterministic, {"outcome": "answered", "ms": elapsed_ms(t0)}

def rerank_embedding(pool, t0):
    """Cosine similarity of each candidate's stored vector to the query's, clipped to 0..1."""
    text = pool.embedding.vector(pool.report) if pool.model["id"] is not None else None
    if text is None:
        why = "no embeddings stored yet" if pool.model["id"] is None else "query embedding unavailable"
        return None, {"outcome": "failed", "why": why}
    sims = {
        r["chunk_id"]: r["similarity"]
        for r in pool.db.run(
            "similarity",
            "select * from exo_private.pool_similarity($1, $2, $3, $4)",
            ["text[]", "bigint[]", "text", "int"],
            [
                [c["workspace"] for c in pool.candidates],
                [c["chunk_id"] for c in pool.candidates],
                text,
                pool.model["id"],
            ],
        )
    }
    # Cosine similarity is already on a common scale: clipped, not stretched.
    relevance = {c["chunk_id"]: min(1.0, max(0.0, sims.get(c["chunk_id"]) or 0.0)) for c in pool.candidates}
    return relevance, {
        "outcome": "answered",
        "ms": elapsed_ms(t0),
        "without_vector": sum(1 for c in pool.candidates if c["chunk_id"] not in sims),
    }

def rerank_remote(pool, backend):
    """cross_encoder or listwise: the endpoint's answer as relevance, or why there is none."""
    settings = pool.settings
    setting_key = "models.rerank" if backend == "cross_encoder" else "models.chat"
    endpoint = dict(settings.get(setting_key) or {})
    if backend == "listwise" and not settings["retrieval.listwise"].get("enabled"):
        return None, {"outcome": "skipped", "why": "off (retrieval.listwise)"}
    if not endpoint.get("url"):
        return None, {"outcome": "skipped", "why": setting_key + " has no url"}
    endpoint["timeout_s"] = settings["retrieval.rerank_timeout_s"]
    options = settings["retrieval.listwise"]
    order = pool.incoming[: options["max_candidates"]] if backend == "listwise" else pool.incoming
    bodies = {c["chunk_id"]: c["body"] for c in pool.candidates}
    answer = remote_rerank(
        pool.budget_store,
        backend,
        endpoint,
        pool.question,
        [bodies[i] for i in order],
        order,
        options,
        settings,
    )
    if "error_class" in answer:
        pool.report["degradations"].append(
            {"component": "rerank:" + backend, "error_class": answer["error_class"], "error": answer["error"]}
        )
        return None, {"outcome": "failed", "error_class": answer["error_class"], "ms": answer["ms"]}
    if backend == "cross_encoder":
        relevance = normalise({c["chunk_id"]: answer["scores"].get(c["chunk_id"]) for c in pool.candidates})
    else:
        relevance = from_ranking(answer["ranking"], pool.incoming)
    return relevance, {"outcome": "answered", "ms": answer["ms"], "passages": answer["passages"]}

def rerank_relevance(pool):
    """(relevance, backend, attempts): the first backend of retrieval.rerank_order that answers,
    blended with the deterministic relevance (deterministic when none does)."""
    attempts = []
    for backend in pool.settings["retrieval.rerank_order"]:
        t0 = time.monotonic()
        if not pool.candidates:
            attempts.append({"backend": backend, "outcome": "skipped", "why": "no candidates"})
            return {}, "none", attempts
        if backend == "deterministic":
            relevance, attempt = rerank_deterministic(pool, t0)
        elif backend == "embedding":
            relevance, attempt = rerank_embedding(pool, t0)
        elif backend in ("cross_encoder", "listwise"):
            relevance, attempt = rerank_remote(pool, backend)
        else:
            relevance, attempt = None, {"outcome": "skipped", "why": "unknown backend"}
        attempts.append(dict(backend=backend, **attempt))
        if relevance is not None:
            if backend != "deterministic":
                relevance = blend(
                    relevance, pool.deterministic, pool.settings["retrieval.rank_weights"]["backend_share"]
                )
            return relevance, backend, attempts
    # The configured order had no backend that answered.
    attempts.append({"backend": "deterministic", "outcome": "answered", "why": "fallback"})
    return pool.deterministic, "deterministic", attempts

def rerank_call_json(plpy, SD, GD, backend, endpoint, query, passages, ids, options):
    """exo_private.rerank_call's body: remote_rerank with the session's settings, as JSON text."""
    if "rerank_settings" not in SD:
        SD["rerank_settings"] = plpy.prepare(
            "select key, value::text from exo_private.settings "
            "where key in ('reader.rerank_calls_per_minute', 'retrieval.rerank_limits')",
            [],
        )
    settings = {r["key"]: json.loads(r["value"]) for r in plpy.execute(SD["rerank_settings"], [])}
    return json.dumps(
        remote_rerank(GD, backend, json.loads(endpoint), query, passages, ids, json.loads(options), settings)
    )
return rerank_call_json(plpy, SD, GD, backend, endpoint, query, passages, ids, options)
$_$;

ALTER FUNCTION exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb) OWNER TO exo_owner;

--
-- Name: FUNCTION rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb) IS 'Ask a remote rerank backend (cross_encoder: /rerank scores; listwise: the chat model orders ids) about passages: {scores} or {ranking}, or {error_class, error}, with passages (how many were sent); never raises for a model failure. Bounded per call (retrieval.rerank_limits: the first max_passages passages, passage_chars of each) and per session (reader.rerank_calls_per_minute; over it: error_class rate_limited, and no call).';

--
-- Name: resolve_entity(text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.resolve_entity(entity text, workspace text) RETURNS bigint[]
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
declare
    wanted text := pg_catalog.btrim(entity);
    wanted_key text;
    ids bigint[];
begin
    if workspace is not null then
        perform exo_private.check_workspaces(array[workspace]);
    end if;
    if wanted is null or wanted = '' then
        perform exo_private.invalid_argument(
            'entity must be an entity id or a name, got ' || exo_private.quoted(entity));
    end if;
    if wanted ~ '^[0-9]{1,18}$' then
        select array_agg(e.id) into ids
        from exo_private.entities e
        where e.id = wanted::bigint
          and (resolve_entity.workspace is null or e.workspace = resolve_entity.workspace);
        if ids is not null then
            return ids;
        end if;
    end if;
    -- A name: every entity with its canonical key (one per workspace and type), never merged.
    wanted_key := exo_private.canonical_key(wanted);
    select array_agg(e.id order by e.workspace, e.type, e.id) into ids
    from exo_private.entities e
    where e.canonical_key = wanted_key
      and (resolve_entity.workspace is null or e.workspace = resolve_entity.workspace);
    if ids is null then
        perform exo_private.invalid_argument(
            format('entity %s names no entity%s', exo_private.quoted(entity),
                   case when workspace is null then '' else ' in workspace ' || exo_private.quoted(workspace) end),
            format('exo.search_entities(name => %s) lists the entities whose names contain it',
                   exo_private.quoted(wanted)));
    end if;
    return ids;
end
$_$;

ALTER FUNCTION exo_private.resolve_entity(entity text, workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION resolve_entity(entity text, workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.resolve_entity(entity text, workspace text) IS 'Entity ids an API argument names: digits are an entity id (when one exists; otherwise read as a name), anything else a name matched by canonical key, all workspaces unless one is given, ordered by workspace and type. Raises invalid_parameter_value when nothing matches.';

--
-- Name: resolve_links(integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.resolve_links(source integer) RETURNS integer
    LANGUAGE sql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
    with names as (
        select d.id, lower(regexp_replace(d.path, '^.*/|\.[^./]*$', '', 'g')) as stem, lower(d.title) as title
        from exo_private.documents d
        where d.source_id = source and d.stage <> 'deleted'
    ), resolved as (
        update exo_private.document_links l
           set target_document = (
               select n.id from names n
               where n.stem = lower(regexp_replace(l.target, '^.*/|\.md$', '', 'g')) or n.title = lower(l.target)
               order by n.stem = lower(regexp_replace(l.target, '^.*/|\.md$', '', 'g')) desc, n.id
               limit 1)
         where l.source_document in (select id from names)
        returning l.target_document
    )
    select count(*)::int from resolved where target_document is not null
$_$;

ALTER FUNCTION exo_private.resolve_links(source integer) OWNER TO exo_owner;

--
-- Name: FUNCTION resolve_links(source integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.resolve_links(source integer) IS 'Resolve a source''s wiki links to documents by file name or title; returns how many resolved.';

--
-- Name: retrieve(text, text[], integer, integer, boolean, text[], timestamp with time zone, double precision[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.retrieve(query text, workspaces text[] DEFAULT NULL::text[], k integer DEFAULT 25, per_workspace integer DEFAULT 30, open_archive boolean DEFAULT NULL::boolean, bridge text[] DEFAULT '{}'::text[], as_of timestamp with time zone DEFAULT now(), query_embedding double precision[] DEFAULT NULL::double precision[]) RETURNS jsonb
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    SET "hnsw.iterative_scan" TO 'relaxed_order'
    AS $_$
"""exo_private.retrieve: the whole search, as plain Python over a `plpy` object (stdlib only).

The function's body is `# exo:include retrieve` and a call of run(plpy, SD, GD, ...); the
unit tests pass a small fake plpy. In order: the question is read (query_analysis), the
query embedding starts in the background (query_embedding), the stages run per workspace
with the archive fallback (stages), withheld material becomes hints, the merged pool is
reranked (reranking) and the first k are the results. Returns {results, report} as JSON text.
"""

import datetime
import json
import time

"""What a search reads from its question before any stage runs (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py): the settings, the chosen workspaces, the
temporal signal and the archive decision, the deference of this search, and the query's
material (entities named, identifiers, content words, title and file keys). `db` is a
retrieve.Statements: prepared statements of the session.
"""

import datetime
import json
import time

"""Retrieval logic that is not a query (stdlib only).

Inlined into exo_private.retrieve (`# exo:include search`) and importable as
plain Python for tests. The database runs the stage queries; this module decides
what the query words are, which candidates a workspace admits, how the combined
pool is ordered, and what a context packet holds.
"""

import math
import re

"""Text normalisation shared by the database and the worker (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include textnorm`),
and importable as plain Python for tests.
"""

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"

def canonical_key(name):
    """The identity key of a name: NFKC, case-folded, inner whitespace collapsed,
    surrounding quotes and punctuation removed. "  Jane  DOE. " -> "jane doe".
    Returns None for None or for a name with nothing left."""
    if name is None:
        return None
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACE.sub(" ", text).strip().strip(_EDGE_PUNCT).strip()
    return text or None

PRESENT_BANDS = ("current", "recent")
ALL_BANDS = ("current", "recent", "archival")
MAX_QUERY_CHARS = 1000  # the query's words, n-grams and identifiers come from this much of it
MAX_INPUT_CHARS = 2000  # a search reads no more of a query (the temporal scan and the embedding)
MAX_NGRAM = 6
MAX_IDENTIFIERS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDENTIFIER_INNER = re.compile(r"[-_./:#@]")
_QUOTED = re.compile(r"\"([^\"]{3,100})\"")
_EDGE = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=[-*#>|])")
# The start of a message line in a chat chunk: its time (or "(undated)") and its sender; in a
# packet's excerpt the time without the day its citation names (without_day).
_CHAT_LABEL = re.compile(r"^((?:\d{4}-\d\d-\d\d )?\d\d:\d\d|\(undated\)) [^\n]*?: ", re.M)
# Words too common to say what a passage is about (excerpt choice only; BM25 has its own).
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between both
    but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours""".split()  # noqa: SIM905 (a list literal would run to a page)
)

# -- the query ---------------------------------------------------------------------------

def query_words(query):
    """The query's words, lower-cased, in order (its first MAX_QUERY_CHARS characters)."""
    return [w.casefold() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]

def content_words(query):
    """Distinct words of the query that are not stopwords, in order."""
    seen = []
    for word in query_words(query):
        if word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen

def ngram_keys(query, max_n=MAX_NGRAM):
    """Every run of 1..max_n whitespace-separated tokens, as canonical keys (an entity name
    or a title can only match one of these)."""
    tokens = [t for t in ((query or "")[:MAX_QUERY_CHARS]).split() if t.strip(_EDGE)]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            key = canonical_key(" ".join(tokens[i : i + n]))
            if key and key not in keys:
                keys.append(key)
    return keys

def name_keys(query, max_n=3):
    """Runs of 1..max_n query words as canonical keys: a person's name or first name as the
    question writes it, without the punctuation around it ("Priya's" is "priya")."""
    words = query_words(query)
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = canonical_key(" ".join(words[i : i + n]))
            if len(key) > 1 and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys

def title_keys(query, max_n=MAX_NGRAM):
    """Runs of 1..max_n query words joined by single spaces: documents.title_key's form, which
    lower-cases (SQL lower(), not casefold: "Straße" stays "straße")."""
    words = [w.lower() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = " ".join(words[i : i + n])
            if (n > 1 or len(key) >= 4) and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys

def identifiers(query):
    """Strings to find verbatim: quoted phrases, and tokens that mix letters with digits or
    carry inner punctuation (host names, ticket ids, file names, versions). Abbreviations of
    single letters ("e.g.", "U.S.") are not identifiers."""
    text = (query or "")[:MAX_QUERY_CHARS]
    found = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    for token in text.split():
        token = token.strip(_EDGE)
        if not 3 <= len(token) <= 100:
            continue
        has_digit = any(c.isdigit() for c in token)
        has_alpha = any(c.isalpha() for c in token)
        inner = _IDENTIFIER_INNER.search(token[1:-1]) and any(len(w) > 1 for w in _WORD.findall(token))
        if has_alpha and (has_digit or inner):
            found.append(token)
    unique = []
    for item in found:
        if item and item.casefold() not in [u.casefold() for u in unique]:
            unique.append(item)
    return unique[:MAX_IDENTIFIERS]

def file_keys(query):
    """Lower-cased tokens that could be a file name or a file's stem."""
    return [i.casefold().rsplit("/", 1)[-1] for i in identifiers(query) if " " not in i]

def coverage(body, words):
    """The share of `words` (a query's content words) among the words of `body`, compared by
    their first five letters (a cheap stem: "replication" meets "replicas", "invoiced" meets
    "invoices"); 0 without words."""
    if not words:
        return 0.0
    stems = {w[:5] for w in _WORD.findall(body.casefold())}
    return sum(1 for w in words if w[:5] in stems) / len(words)

# -- bands and deference ------------------------------------------------------------------

def archive_decision(signal, open_archive):
    """(open, why): whether the archival band opens before any search, and why."""
    if open_archive is True:
        return True, "the caller opened the archive"
    if open_archive is False:
        return False, "the caller kept the archive closed"
    if signal.get("opens_archive"):
        texts = [s["text"] for s in signal.get("signals", []) if s.get("opens_archive")]
        return True, "temporal signal: " + ", ".join(repr(t) for t in texts)
    return False, None

class Deference:
    """Which charged subjects of one search stay withheld, and why the others are released.

    Time and care are separate decisions. An open archive (a temporal signal or open_archive,
    never the fallback taken when nothing present answers) opens archival bands; it releases a
    subject only when the question also names it, by name or alias. Bridging a subject releases
    it wherever it is. `time_releases` (the setting deference.time_releases) restores the looser
    rule: an open archive alone releases every subject.

    Every charged subject counts, whether it is on the deference list or only declared charged
    by a document's frontmatter (over-withholding is the safe direction); a subject on the list
    answers to its name and every alias.
    """

    def __init__(
        self, deferred, bridge=None, query="", archive_open=False, archive_why=None, time_releases=False
    ):
        self.groups = [
            {k for k in (canonical_key(n) for n in [s["subject"], *s.get("aliases", [])]) if k}
            for s in deferred
        ]
        self.bridged = self.released_keys(bridge or [])
        self.asked = set(ngram_keys(query))
        self.archive_open = bool(archive_open)
        self.archive_why = archive_why
        self.time_releases = bool(time_releases)

    def names(self, subject):
        """Canonical keys a subject answers to: all names of its deferred subject(s), else its own."""
        key = canonical_key(subject)
        if not key:
            return set()
        keys = {key}
        for group in self.groups:
            if key in group:
                keys |= group
        return keys

    def released_keys(self, bridge):
        """The keys a bridge opens: each bridged name not on the list, and every name of a bridged
        deferred subject that no unbridged subject shares (an alias two subjects share stays
        closed until both are bridged: bridging one person never opens another's material)."""
        given = {k for k in (canonical_key(b or "") for b in bridge) if k}
        bridged = [g for g in self.groups if g & given]
        unbridged = [g for g in self.groups if not g & given]
        listed = set().union(*self.groups)
        opened = set().union(*bridged) - set().union(*unbridged)
        return (given - listed) | opened

    def why_released(self, subject):
        """Why a charged subject is released in this search, or None while it is withheld."""
        names = self.names(subject)
        if canonical_key(subject) in self.bridged:
            return "bridged"
        if not self.archive_open:
            return None
        named = sorted(names & self.asked, key=lambda k: (-len(k), k))
        if named:
            return f"the question names {named[0]!r} and the archive is open ({self.archive_why})"
        if self.time_releases:
            return f"time releases (deference.time_releases) and the archive is open ({self.archive_why})"
        return None

    def withheld(self, charged):
        """The charged subjects of one chunk that keep it out of the results."""
        return [s for s in charged if self.why_released(s) is None]

def released(results, why):
    """What charged material a search hands out: per (subject, workspace) the chunks among
    `results` charged for it, and `why(subject)` it was released (Deference.why_released)."""
    counts = {}
    for r in results:
        for subject in r.get("charged") or []:
            counts[(subject, r["workspace"])] = counts.get((subject, r["workspace"]), 0) + 1
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "why": why(subject)}
        for (subject, workspace), n in sorted(counts.items())
    ]

# -- admitting candidates into a workspace's pool -------------------------------------------

class WorkspacePool:
    """The candidates one workspace contributes, in the order its stages found them."""

    def __init__(self, workspace, cap, need):
        self.workspace = workspace
        self.cap = cap
        self.need = min(need, cap)
        self.hits = []
        self.seen = set()
        self.withheld = {}
        self.stages = []

    @property
    def confident(self):
        return sum(1 for h in self.hits if h["confident"])

    def wants_more(self):
        """(True, None) while a stage should run, else (False, why it is skipped)."""
        if len(self.hits) >= self.cap:
            return False, "the workspace holds per_workspace candidates"
        if self.confident >= self.need:
            return False, f"enough confident candidates ({self.confident} of {self.need})"
        return True, None

    def admit(self, stage, rows, withhold):
        """Take a stage's rows {chunk_id, score, confident, charged, detail}; `withhold(charged)`
        lists the subjects that keep a row out. Returns (admitted, withheld) counts."""
        admitted = withheld = 0
        for row in rows:
            chunk = row["chunk_id"]
            if chunk in self.seen:
                continue
            self.seen.add(chunk)
            subjects = withhold(row.get("charged") or [])
            if subjects:
                withheld += 1
                for subject in subjects:
                    self.withheld.setdefault(subject, set()).add(chunk)
                continue
            if len(self.hits) >= self.cap:
                continue
            self.hits.append(
                {
                    "chunk_id": chunk,
                    "workspace": self.workspace,
                    "stage": stage,
                    "score": row["score"],
                    "confident": bool(row["confident"]),
                    "detail": row.get("detail"),
                    "match": row.get("match", stage),
                    "charged": list(row.get("charged") or []),  # released: report["released"] names them
                }
            )
            admitted += 1
        return admitted, withheld

def named_subjects(query, deferred):
    """The deferred subjects the query names, by subject or alias."""
    keys = set(ngram_keys(query))
    return [
        s["subject"]
        for s in deferred
        if any(canonical_key(n) in keys for n in [s["subject"], *s.get("aliases", [])] if canonical_key(n))
    ]

def hints(pools, how, named=None):
    """One hint per (subject, workspace) with chunks withheld, never their text.

    `named` {(subject, workspace): charged chunks} adds what the query asked about by name
    but the search never reached (in a closed band, say): such material exists, and the hint
    says so. A hint counts the larger of the two."""
    counts = dict(named or {})
    for pool in pools:
        for subject, chunks in pool.withheld.items():
            key = (subject, pool.workspace)
            counts[key] = max(counts.get(key, 0), len(chunks))
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "how": how(subject)}
        for (subject, workspace), n in sorted(counts.items())
        if n > 0
    ]

# -- the combined-pool rank -----------------------------------------------------------------

def deterministic_relevance(candidate, weights):
    """Relevance from what found the chunk and how much of the query it covers (0..1)."""
    stage = weights["stage"].get(candidate["stage"], 0.5)
    coverage = candidate.get("coverage") or 0.0
    return 0.5 * stage + 0.5 * coverage

def priority(candidate, weights, recency=True):
    """Band weight (only under recency preference), times the boost of how the chunk matched
    (a document named by title or file name outranks one that only mentions it), times the
    canonical boost."""
    value = weights["band"].get(candidate["band"], 1.0) if recency else 1.0
    value *= weights.get("match", {}).get(candidate.get("match"), 1.0)
    if candidate.get("canonical"):
        value *= weights["canonical"]
    return value

# A question about the present state of things ("where does she live now?"): among evidence of
# like relevance, the newest value is the answer, so recency counts over months, not years.
_ASKS_PRESENT = re.compile(
    r"\b(?:now|nowadays|currently|current|these days|at the moment|at present|still|any ?more|lately|latest)\b",
    re.I,
)

def asks_present(query):
    """Whether a question asks what is true now (a present-state word such as "now", "currently",
    "these days", "still")."""
    return bool(_ASKS_PRESENT.search(query or ""))

def freshness(candidate, weights, today_ordinal, years, recency=True, present=False):
    """Closeness to the years the question names; else, under recency preference, recency (over
    present_half_life_days for a question about the present); else (the archive is open)
    neutral."""
    if candidate.get("canonical"):
        return 1.0  # a canonical document is current by declaration, whatever its date
    written = candidate.get("written_ordinal")
    if written is None:
        return weights["freshness_floor"]
    if years:
        year = candidate["written_year"]
        first, last = min(years), max(years)
        miss = first - year if year < first else year - last if year > last else 0
        return max(weights["freshness_floor"], 1.0 - weights["year_miss_per_year"] * miss)
    if not recency:
        return 1.0
    age = max(0, today_ordinal - written)
    half_life = weights["present_half_life_days"] if present else weights["freshness_half_life_days"]
    decay = 0.5 ** (age / float(half_life))
    return weights["freshness_floor"] + (1.0 - weights["freshness_floor"]) * decay

def normalise(scores):
    """Scores of any scale to 0.05..1 (min-max), so a backend's relevance multiplies like another's."""
    values = [s for s in scores.values() if s is not None and math.isfinite(s)]
    if not values:
        return {k: 0.05 for k in scores}
    low, high = min(values), max(values)
    if not math.isfinite(high - low):  # the span overflows: halve everything first
        values = {k: s / 2 for k, s in scores.items() if s is not None and math.isfinite(s)}
        low, high = low / 2, high / 2
    else:
        values = {k: s for k, s in scores.items() if s is not None and math.isfinite(s)}
    span = high - low
    return {
        k: (0.05 if k not in values else 1.0 if span == 0 else 0.05 + 0.95 * (values[k] - low) / span)
        for k in scores
    }

def blend(backend, deterministic, share):
    """A backend's relevance mixed with the deterministic one: `share` of it from the backend,
    so what found a chunk and how much of the query it covers still count."""
    return {k: share * backend.get(k, 0.0) + (1.0 - share) * v for k, v in deterministic.items()}

def from_ranking(ranked_ids, ids):
    """Relevance from an ordered id list (a listwise reply): first 1.0, falling linearly.

    Enforces the permutation: ids the reply invented or repeated are dropped, ids it left
    out follow in their incoming order."""
    order = []
    for i in ranked_ids:
        if i in ids and i not in order:
            order.append(i)
    order += [i for i in ids if i not in order]
    n = len(order)
    return {chunk: 1.0 - (rank / n) * 0.95 for rank, chunk in enumerate(order)}

def rank(candidates, relevance, weights, today_ordinal, years, recency=True, present=False):
    """The candidates in final order, each with its relevance and score.

    A reranker only reorders: the chunks out are exactly the chunks in, whatever the
    backend returned (a missing relevance counts as the lowest)."""
    ranked = []
    for c in candidates:
        r = relevance.get(c["chunk_id"])
        r = 0.0 if r is None or not math.isfinite(r) else r
        score = (
            r * priority(c, weights, recency) * freshness(c, weights, today_ordinal, years, recency, present)
        )
        ranked.append(dict(c, relevance=round(r, 4), score=round(score, 6)))
    ranked.sort(key=lambda c: (-c["score"], -c["relevance"], c["chunk_id"]))
    if sorted(c["chunk_id"] for c in ranked) != sorted(c["chunk_id"] for c in candidates):
        raise AssertionError("rerank changed the set of candidates")
    return ranked

def listwise_prompt(query, candidates, excerpt_chars):
    """The chat messages asking a model to order candidates by usefulness for the query."""
    lines = ["[{}] {}".format(c["chunk_id"], " ".join(c["body"].split())[:excerpt_chars]) for c in candidates]
    return [
        {
            "role": "system",
            "content": "You rank passages by how well they answer a question. Reply with JSON only.",
        },
        {
            "role": "user",
            "content": "Question: "
            + query[:MAX_QUERY_CHARS]
            + "\n\nPassages:\n"
            + "\n".join(lines)
            + '\n\nReply as {"ranking": [ids, most useful first]}.',
        },
    ]

def parse_listwise(content, ids):
    """The ids a listwise reply ranks, in its order; ValueError when it ranks none of ours."""
    import json

    try:
        reply = json.loads(content or "")
    except ValueError:
        # A reply cut off at its token cap: the ids it managed to list still count.
        match = re.search(r"\[\s*(\d[\d,\s]*)", content or "")
        if not match:
            raise ValueError("the reply is neither JSON nor holds a list of ids") from None
        reply = {"ranking": [int(x) for x in re.findall(r"\d+", match.group(1))]}
    ranking = reply.get("ranking") if isinstance(reply, dict) else reply
    if not isinstance(ranking, list):
        raise ValueError("the reply has no ranking list")
    ranked = [i for i in ranking if isinstance(i, int) and not isinstance(i, bool) and i in ids]
    if not ranked:
        raise ValueError("the ranking names none of the candidates")
    return ranked

# -- the context packet -----------------------------------------------------------------------

def estimate_tokens(text):
    """Tokens of a text, estimated as one per four characters (rounded up)."""
    return (len(text) + 3) // 4

def excerpt(body, words, max_chars):
    """The passage of `body` (at most max_chars) around the sentences richest in `words`."""
    text = body.strip()
    if len(text) <= max_chars:
        return text
    spans = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    wanted = set(words)

    def hits(span):
        return len(wanted & {w.casefold() for w in _WORD.findall(text[span[0] : span[1]])})

    best = max(range(len(spans)), key=lambda i: (hits(spans[i]), -i))
    lo = hi = best
    while True:
        grown = False
        if hi + 1 < len(spans) and spans[hi + 1][1] - spans[lo][0] <= max_chars:
            hi += 1
            grown = True
        if lo > 0 and spans[hi][1] - spans[lo - 1][0] <= max_chars:
            lo -= 1
            grown = True
        if not grown:
            break
    a, b = spans[lo][0], spans[hi][1]
    if b - a > max_chars:  # one sentence longer than the excerpt
        b = a + max_chars
    passage = text[a:b].strip()
    return ("... " if a > 0 else "") + passage + (" ..." if b < len(text) else "")

def said(body):
    """What a chat chunk's messages say, without their time and sender labels: a question naming
    the other person matches the sender of half the lines, which says nothing about which one
    answers it."""
    return _CHAT_LABEL.sub("", body)

def chat_messages(body):
    """The messages of a chat chunk's body, each its lines joined: an unindented line starts a
    message, an indented one continues it."""
    messages = []
    for line in body.strip().split("\n"):
        if messages and line[:1].isspace():
            messages[-1] += "\n" + line
        else:
            messages.append(line)
    return messages

def _grow(units, best, max_chars):
    """(lo, hi): the run of units around `best`, joined by newlines within max_chars, grown one
    unit after it (an answer is often a reply) and one before it at a time while they fit."""
    lo = hi = best
    size = len(units[best])
    while True:
        grown = False
        if hi + 1 < len(units) and size + 1 + len(units[hi + 1]) <= max_chars:
            hi += 1
            size += 1 + len(units[hi])
            grown = True
        if lo > 0 and size + 1 + len(units[lo - 1]) <= max_chars:
            lo -= 1
            size += 1 + len(units[lo])
            grown = True
        if not grown:
            return lo, hi

def chat_excerpt(body, words, max_chars):
    """Whole messages of a chat chunk (at most max_chars and the ellipsis marks): the message
    richest in `words` in what it says (said(); compared by their first five letters, as coverage()
    does) and its
    neighbours while they fit. A message longer than that keeps its time and sender and whole
    lines around its line richest in `words`; only a line longer than the limit is cut."""
    text = body.strip()
    if len(text) <= max_chars:
        return text
    wanted = {w[:5] for w in words}

    def richest(units):
        hits = [len(wanted & {w[:5] for w in _WORD.findall(said(u).casefold())}) for u in units]
        return max(range(len(units)), key=lambda i: (hits[i], -i))

    messages = chat_messages(text)
    best = richest(messages)
    if len(messages[best]) <= max_chars:
        lo, hi = _grow(messages, best, max_chars)
        passage = "\n".join(messages[lo : hi + 1])
        return ("...\n" if lo > 0 else "") + passage + ("\n..." if hi + 1 < len(messages) else "")
    # One message longer than the excerpt: its label, then its richest lines.
    label = _CHAT_LABEL.match(messages[best])
    label = label.group() if label and label.end() <= max_chars // 2 else ""
    lines = messages[best][len(label) :].split("\n")
    room = max_chars - len(label)
    at = richest(lines)
    if len(lines[at]) > room:
        return label + excerpt(lines[at], words, room)
    lo, hi = _grow(lines, at, room)
    passage = "\n".join(lines[lo : hi + 1]).lstrip()  # a continuation line's indent goes after "... "
    return (
        label
        + ("... " if lo > 0 else "")
        + passage
        + ("\n..." if hi + 1 < len(lines) or best + 1 < len(messages) else "")
    )

def without_day(passage, day):
    """A chat passage's message lines with their time only where their day is `day`: a window
    never spans two days, and its citation names the day."""
    prefix = day + " "
    return "\n".join(line[len(prefix) :] if line.startswith(prefix) else line for line in passage.split("\n"))

def chunk_excerpt(c, words, max_chars):
    """The excerpt of a candidate: whole messages for a chat chunk (times without the day its
    citation names), sentences for a document's."""
    if c.get("chat"):
        start = chat_start(c["body"])
        return chat_excerpt(without_day(c["body"], start[:10]) if start else c["body"], words, max_chars)
    return excerpt(c["body"], words, max_chars)

def chat_start(body):
    """The time of a chat chunk's first message as its lines show it ("2024-03-04 09:12"), or
    None when it is undated."""
    label = _CHAT_LABEL.match(body)
    return label.group(1) if label and len(label.group(1)) == 16 else None

def citation(c):
    """A chunk's citation label: workspace, path, date and band; for a chat chunk, workspace,
    the conversation's title and its first message's time as the chunk shows it."""
    if c.get("chat"):
        when = chat_start(c["body"]) or "undated"
        return '{}:chat "{}" {}'.format(c["workspace"], c["chat"]["title"], when)
    date = c.get("written_at") or "undated"
    return "{}:{} ({}, {})".format(c["workspace"], c["path"], date, c["band"])

def packet(query, ranked, hint_list, report, budget, settings):
    """The context packet as {text, tokens, used, ...} within `budget` tokens."""
    words = content_words(query)
    top = ranked[0]["score"] if ranked else 0.0
    chosen = [c for c in ranked if top > 0 and c["score"] >= settings["packet.min_relative_score"] * top][
        : settings["packet.max_chunks"]
    ]

    head = "# Context for: " + " ".join((query or "")[:MAX_INPUT_CHARS].split())[:200] + "\n\n"
    facts = "## Current facts\n(none recorded yet)\n\n"
    hint_lines = [
        "- {} chunk(s) about {} in {} withheld (deferred subject). {}".format(
            h["chunks"], h["subject"], h["workspace"], h["how"]
        )
        for h in hint_list
    ]
    hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
    notes = []
    if report.get("archive", {}).get("open"):
        notes.append("archive open: " + str(report["archive"].get("why")))
    for d in report.get("degradations", []):
        notes.append("degraded: {} ({})".format(d["component"], d["error_class"]))

    why = {r["subject"]: r["why"] for r in report.get("released") or []}.get

    def provenance(used):
        # One short line per cited chunk: its document and conversation are in `used`.
        lines = ["## Provenance", "rerank: " + report["rerank"]["backend"]]
        lines.extend(
            "[{}] chunk {} via {} (rank {:.3f})".format(n, c["chunk_id"], c["stage"], c["score"])
            for n, c in enumerate(used, 1)
        )
        cited = released(used, why)
        if cited:  # the first note: a packet cut short keeps it
            lines.append(
                "note: released deferred material: "
                + "; ".join("{subject} in {workspace} ({chunks} chunk(s): {why})".format(**r) for r in cited)
            )
        lines.extend("note: " + n for n in notes)
        return "\n".join(lines) + "\n"

    fixed = head + facts + "## Evidence\n"
    used, blocks = [], []
    for c in chosen:

        def block(chars, c=c):
            return f"[{len(used) + 1}] {citation(c)}\n{chunk_excerpt(c, words, chars)}\n\n"

        chars = settings["packet.excerpt_chars"]
        rest = fixed + "".join(blocks) + hint_text + provenance([*used, c])
        if estimate_tokens(rest + block(chars)) > budget:
            # What is left of the budget still holds a shorter excerpt of this chunk, or nothing more.
            chars = budget * 4 - len(rest + block(0)) - 8  # room for the ellipsis marks
            if chars < 120:
                break
            blocks.append(block(chars))
            used.append(c)
            break
        blocks.append(block(chars))
        used.append(c)
    if not used:
        blocks = ["(nothing found)\n\n"]
    text = fixed + "".join(blocks) + hint_text + provenance(used)
    while estimate_tokens(text) > budget and hint_lines:
        hint_lines.pop()  # a tiny budget: hints are cut before the text ever overflows
        hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
        text = fixed + "".join(blocks) + hint_text + provenance(used)
    if estimate_tokens(text) > budget:
        text = text[: max(0, budget * 4 - 4)].rstrip() + "\n..."
        text = text[: budget * 4]
    return {
        "text": text,
        "tokens": estimate_tokens(text),
        "budget": budget,
        "used": [
            {
                "n": n,
                "chunk_id": c["chunk_id"],
                "document_id": c["document_id"],
                "conversation_id": c["chat"]["conversation_id"] if c.get("chat") else None,
                "citation": citation(c),
                "workspace": c["workspace"],
                "path": c["path"],
                "band": c["band"],
                "written_at": c.get("written_at"),
                "stage": c["stage"],
            }
            for n, c in enumerate(used, 1)
        ],
        "hints": hint_list,
    }

def elapsed_ms(since):
    """Milliseconds since a time.monotonic() reading, to two places."""
    return round((time.monotonic() - since) * 1000, 2)

def load_settings(db):
    """The settings a search reads: retrieval.*, packet.*, models.*, deference.*, reader.*."""
    return {
        r["key"]: json.loads(r["value"])
        for r in db.run(
            "settings",
            "select key, value::text from exo_private.settings "
            "where key like 'retrieval.%' or key like 'packet.%' or key like 'models.%' "
            "or key like 'deference.%' or key like 'reader.%'",
            [],
            [],
        )
    }

def choose_workspaces(db, workspaces):
    """The workspaces to search: all (null), else the caller's, each once, in the caller's order."""
    known = [
        r["name"]
        for r in db.run("workspaces", "select name from exo_private.workspaces order by name", [], [])
    ]
    return known if workspaces is None else [w for i, w in enumerate(workspaces) if w not in workspaces[:i]]

def active_model(db):
    """{id, dimensions} of the embedding model in use (None, None before any embedding)."""
    row = db.run(
        "model",
        "select m.id, m.dimensions from exo_private.embedding_models m "
        "where m.id = exo_private.active_embedding_model()",
        [],
        [],
    )
    return (
        {"id": row[0]["id"], "dimensions": row[0]["dimensions"]} if row else {"id": None, "dimensions": None}
    )

class Question:
    """One search's reading of its question: day, signal, archive decision, deference, material."""

    def __init__(self, text, as_of):
        self.text = text  # the query's first search.MAX_INPUT_CHARS characters
        self.as_of_day = (as_of or "")[:10] or datetime.date.today().isoformat()
        self.today = datetime.date.fromisoformat(self.as_of_day)

    def read_time(self, db, open_archive):
        """The temporal signal and whether the archive opens before any search."""
        self.signal = json.loads(
            db.run(
                "temporal",
                "select exo.temporal_signal($1, $2)::text as s",
                ["text", "date"],
                [self.text, self.as_of_day],
            )[0]["s"]
        )
        self.archive_open, self.archive_why = archive_decision(self.signal, open_archive)

    def read_care(self, db, bridge, settings):
        """The deferred subjects and this search's Deference (time and care decided apart)."""
        self.deferred = [
            {"subject": r["subject"], "aliases": list(r["aliases"] or [])}
            for r in db.run(
                "deferred",
                "select subject, aliases from exo_private.deferred_subjects order by subject",
                [],
                [],
            )
        ]
        # An open archive releases a subject only when the question names it, unless the owner
        # chose the looser rule (deference.time_releases).
        self.time_releases = bool(settings.get("deference.time_releases", False))
        self.care = Deference(
            self.deferred, bridge, self.text, self.archive_open, self.archive_why, self.time_releases
        )

    def read_material(self, db, chosen, max_entities):
        """Entities the question names (per workspace, longest name first), identifiers,
        content words, title keys and file keys."""
        self.entities = {}
        for r in db.run(
            "entities",
            "select e.id, e.workspace, e.name from exo_private.entities e "
            "where e.canonical_key = any ($1) and e.workspace = any ($2) "
            "order by e.workspace, length(e.canonical_key) desc, e.id",
            ["text[]", "text[]"],
            [ngram_keys(self.text), chosen],
        ):
            found = self.entities.setdefault(r["workspace"], [])
            if len(found) < max_entities:
                found.append({"id": r["id"], "name": r["name"]})
        self.idents = identifiers(self.text)
        self.terms = content_words(self.text)
        self.titles = title_keys(self.text)
        self.files = file_keys(self.text)

    def temporal_report(self):
        return {
            "signal": self.signal["signal"],
            "opens_archive": self.signal["opens_archive"],
            "signals": [
                {"kind": s["kind"], "text": s["text"], "opens_archive": s["opens_archive"]}
                for s in self.signal["signals"]
            ],
            "years": self.signal["years"],
        }

    def recognised_report(self):
        return {
            "identifiers": self.idents,
            "entities": {ws: [e["name"] for e in found] for ws, found in self.entities.items()},
        }
"""The query's vector for one search (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). The caller's vector when it gave one; else
the embeddings endpoint's, fetched on a background thread while the other stages run, within
the session's embedding budget (reader.embed_calls_per_minute, plpy/budget.py over GD, shared
with exo.embed_query). The thread makes only the HTTP call (the server's API is not
thread-safe) and close() always joins it before the search returns.
"""

import threading
import time

"""A per-session call budget for model endpoints the reader can reach (stdlib only).

Inlined into plpython3u functions (`# exo:include budget`). The store is plpython's
GD, a dict that lives as long as the database session and is shared by every
plpython function in it, so one budget covers `exo.embed_query` and the search's own
model calls alike. A sliding window: at most `limit` calls in any `window_s` seconds.
"""

import time

def allow(store, key, limit, window_s=60.0, now=None):
    """Whether one more call of kind `key` fits the budget; counts it when it does.

    `limit` <= 0 refuses every call (an owner can switch a path off)."""
    now = time.monotonic() if now is None else now
    calls = store.setdefault("exo_budget", {}).setdefault(key, [])
    while calls and calls[0] <= now - window_s:
        calls.pop(0)
    if len(calls) >= limit:
        return False
    calls.append(now)
    return True
"""The one HTTP client every model call goes through: OpenAI-compatible chat and embeddings,
and llama.cpp's /v1/rerank (query + documents -> one relevance score per document).

Standard library only and free of exocortex imports, so the same file can be
inlined into a plpython3u function body. Every failure is a ModelError whose
``error_class`` the worker records and decides retries on; this module never
retries.

    endpoint_down   connection refused or reset, unknown host, TLS failure
    timeout         no answer within the endpoint's timeout_s
    http_5xx        the server answered 5xx (ServerError.status)
    http_4xx        the server rejected the request (ClientError.status, its message)
    bad_response    a 2xx body that is not JSON or lacks the expected fields
"""

import http.client
import ipaddress
import json
import math
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT_S = 30.0
_READ_CHUNK = 64 * 1024
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_DEFAULT = urllib.request.build_opener()

class ModelError(Exception):
    """A model call failed; ``error_class`` says how."""

    error_class = "model_error"

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.url = url

class EndpointDown(ModelError):
    error_class = "endpoint_down"

class Timeout(ModelError):
    error_class = "timeout"

class BadResponse(ModelError):
    error_class = "bad_response"

class _HTTPStatusError(ModelError):
    def __init__(self, message: str, url: str | None = None, status: int = 0):
        super().__init__(message, url)
        self.status = status

class ServerError(_HTTPStatusError):
    error_class = "http_5xx"

class ClientError(_HTTPStatusError):
    error_class = "http_4xx"

@dataclass(frozen=True)
class Endpoint:
    url: str
    """Base URL of the OpenAI-compatible API, such as http://127.0.0.1:54330/v1."""
    model: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra: dict[str, Any] = field(default_factory=dict)
    """The setting's other keys (dimensions, response_format, ...)."""

    @classmethod
    def from_setting(cls, value: dict[str, Any]) -> Endpoint:
        """An endpoint from a ``models.*`` setting: {"url", "model", "timeout_s", ...}."""
        if not isinstance(value, dict):
            raise ValueError(f"a model setting must be a JSON object, got {value!r}")
        url, model = value.get("url"), value.get("model")
        if not isinstance(url, str) or not url:
            raise ValueError("the model setting has no url (null means no endpoint is configured)")
        if not isinstance(model, str) or not model:
            raise ValueError(f"the model setting for {url} has no model name")
        timeout = value.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"timeout_s of {url} must be a positive number, got {timeout!r}")
        extra = {k: v for k, v in value.items() if k not in {"url", "model", "timeout_s"}}
        return cls(url.rstrip("/"), model, float(timeout), extra)

@dataclass(frozen=True)
class ChatReply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int

# -- the calls ----------------------------------------------------------------------------

def embed(endpoint: Endpoint, texts: list[str]) -> list[list[float]]:
    """One vector per text, in the order of ``texts``."""
    if not texts:
        return []
    url = f"{endpoint.url}/embeddings"
    body = _post_json(url, {"model": endpoint.model, "input": list(texts)}, endpoint.timeout_s)
    data = body.get("data")
    if not isinstance(data, list):
        raise BadResponse(f"{url} answered without a data list", url)
    if len(data) != len(texts):
        raise BadResponse(f"{url} returned {len(data)} embeddings for {len(texts)} inputs", url)
    vectors: list[list[float] | None] = [None] * len(texts)
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < len(texts) or vectors[index] is not None:
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not isinstance(vector, list) or not vector or not all(_is_number(x) for x in vector):
            raise BadResponse(f"{url} returned an embedding that is not a list of numbers", url)
        vectors[index] = [float(x) for x in vector]
    sizes = {len(v) for v in vectors if v is not None}
    expected = endpoint.extra.get("dimensions")
    if len(sizes) != 1 or (isinstance(expected, int) and sizes != {expected}):
        want = f"; the setting says {expected}" if isinstance(expected, int) else ""
        raise BadResponse(f"{url} returned embeddings of sizes {sorted(sizes)}{want}", url)
    return vectors  # type: ignore[return-value]

def rerank(endpoint: Endpoint, query: str, documents: list[str]) -> list[float]:
    """One relevance score per document, in the order of ``documents`` (higher is more relevant).

    Speaks llama.cpp's /v1/rerank: POST {model, query, documents, top_n} and read
    {"results": [{"index", "relevance_score"}, ...]} in any order. A score is needed
    for every document, so the request asks for ``top_n = len(documents)`` and a
    reply that leaves any document out is a BadResponse.
    """
    if not documents:
        return []
    url = f"{endpoint.url}/rerank"
    payload = {
        "model": endpoint.model,
        "query": query,
        "documents": list(documents),
        "top_n": len(documents),
    }
    body = _post_json(url, payload, endpoint.timeout_s)
    results = body.get("results")
    if not isinstance(results, list):
        raise BadResponse(f"{url} answered without a results list", url)
    scores: list[float | None] = [None] * len(documents)
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score") if isinstance(item, dict) else None
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(documents)
            or scores[index] is not None
        ):
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not _is_number(score):
            raise BadResponse(f"{url} returned a relevance_score that is not a finite number: {score!r}", url)
        scores[index] = float(score)  # type: ignore[arg-type]
    if len(results) != len(documents):
        raise BadResponse(f"{url} returned {len(results)} scores for {len(documents)} documents", url)
    return scores  # type: ignore[return-value]

def chat(
    endpoint: Endpoint,
    messages: list[dict[str, Any]],
    *,
    max_tokens: int,
    response_format: dict[str, Any] | None = None,
    temperature: float = 0.0,
) -> ChatReply:
    """One non-streaming chat completion.

    ``response_format`` (such as a json_schema) is left out when the endpoint's
    setting says ``"response_format": false``, for servers that misbehave with it.
    """
    url = f"{endpoint.url}/chat/completions"
    payload: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": False,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    if response_format is not None and endpoint.extra.get("response_format", True) is not False:
        payload["response_format"] = response_format
    body = _post_json(url, payload, endpoint.timeout_s)
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
        finish_reason = choice.get("finish_reason") or "unknown"
    except (KeyError, IndexError, TypeError):
        raise BadResponse(f"{url} answered without choices[0].message.content", url) from None
    if not isinstance(content, str):
        raise BadResponse(f"{url} answered with a {type(content).__name__} message content", url)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return ChatReply(
        content=content,
        finish_reason=str(finish_reason),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )

def embed_one(setting: dict[str, Any], text: str) -> dict[str, Any]:
    """One text's embedding from a ``models.embeddings``-style setting, never raising for a
    model failure: {vector (pgvector text), model, dimensions, ms} or {error_class, error, ms}.
    What the database uses for a query's vector."""
    began = time.monotonic()
    try:
        target = Endpoint.from_setting(setting)
        (vector,) = embed(target, [text])
    except (ModelError, ValueError) as exc:
        return {
            "error_class": getattr(exc, "error_class", "bad_setting"),
            "error": str(exc)[:500],
            "ms": round((time.monotonic() - began) * 1000, 1),
        }
    return {
        "vector": "[" + ",".join(repr(x) for x in vector) + "]",
        "model": target.model,
        "dimensions": len(vector),
        "ms": round((time.monotonic() - began) * 1000, 1),
    }

def probe(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> bool:
    """True when the endpoint answers a one-token request with 2xx (the body is not checked)."""
    return probe_error(endpoint, kind, timeout_s=timeout_s) is None

def probe_error(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> ModelError | None:
    """How a one-token request to the endpoint failed, or None when it answered 2xx. A Timeout
    means the server took the request but did not answer in time: busy, or hung."""
    if kind == "chat":
        url = f"{endpoint.url}/chat/completions"
        payload: dict[str, Any] = {
            "model": endpoint.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "temperature": 0.0,
            "chat_template_kwargs": {"enable_thinking": False},
        }
    elif kind == "embeddings":
        url = f"{endpoint.url}/embeddings"
        payload = {"model": endpoint.model, "input": ["ping"]}
    else:
        raise ValueError(f"kind must be 'chat' or 'embeddings', got {kind!r}")
    try:
        _request(url, payload, endpoint.timeout_s if timeout_s is None else timeout_s)
    except ModelError as exc:
        return exc
    return None

# -- HTTP ---------------------------------------------------------------------------------

def _post_json(url: str, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    raw = _request(url, payload, timeout_s)
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadResponse(f"{url} answered with a body that is not JSON: {_snippet(raw)}", url) from None
    if not isinstance(body, dict):
        raise BadResponse(f"{url} answered with JSON that is not an object: {_snippet(raw)}", url)
    return body

def _request(url: str, payload: dict[str, Any], timeout_s: float) -> bytes:
    """POST JSON and return the 2xx body; raise the matching ModelError otherwise.

    ``timeout_s`` bounds the whole call: it is the socket timeout for connecting
    and for the wait for the answer (a non-streaming reply arrives only when the
    generation is done), and the deadline checked while the body is read.
    """
    deadline = time.monotonic() + timeout_s
    data = json.dumps(payload).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    opener = _NO_PROXY if _is_loopback(url) else _DEFAULT
    try:
        with opener.open(request, timeout=timeout_s) as response:
            status = response.status
            chunks = []
            while chunk := response.read1(_READ_CHUNK):  # read1: returns what has arrived
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise TimeoutError
            raw = b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise _status_error(url, exc.code, _read_error_body(exc)) from None
    except urllib.error.URLError as exc:
        raise _transport_error(url, exc.reason, timeout_s) from None
    except (OSError, http.client.HTTPException) as exc:
        raise _transport_error(url, exc, timeout_s) from None
    if time.monotonic() > deadline:
        raise Timeout(f"{url} took longer than {timeout_s:g} s", url)
    if not 200 <= status < 300:
        raise BadResponse(f"{url} answered HTTP {status}", url)
    return raw

def _transport_error(url: str, reason: object, timeout_s: float) -> ModelError:
    if isinstance(reason, TimeoutError):  # socket.timeout is TimeoutError
        return Timeout(f"{url} did not answer within {timeout_s:g} s", url)
    if isinstance(reason, http.client.IncompleteRead):
        return EndpointDown(f"{url} closed the connection in the middle of its answer", url)
    if isinstance(reason, http.client.RemoteDisconnected | ConnectionError):
        return EndpointDown(f"{url} closed the connection: {reason}", url)
    if isinstance(reason, http.client.HTTPException):
        return BadResponse(f"{url} answered with malformed HTTP: {reason!r}", url)
    if isinstance(reason, socket.gaierror):
        return EndpointDown(f"{url}: unknown host ({reason})", url)
    if isinstance(reason, ssl.SSLError):
        return EndpointDown(f"{url}: TLS failed ({reason})", url)
    if isinstance(reason, OSError):
        return EndpointDown(f"{url} is unreachable: {reason.strerror or reason}", url)
    return EndpointDown(f"{url} is unreachable: {reason}", url)

def _status_error(url: str, status: int, body: bytes) -> ModelError:
    message = _error_message(body)
    if status >= 500:
        return ServerError(f"{url} answered HTTP {status}: {message}", url, status)
    if status >= 400:
        return ClientError(f"{url} answered HTTP {status}: {message}", url, status)
    return BadResponse(f"{url} answered HTTP {status}: {message}", url)

def _read_error_body(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.HTTPException):
        return b""
    finally:
        exc.close()

def _error_message(body: bytes) -> str:
    """The server's own words: OpenAI's {"error": {"message"}}, {"error": "..."} or the text."""
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _snippet(body) or "(empty body)"
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return _snippet(body)

def _snippet(raw: bytes, limit: int = 200) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."

def _is_loopback(url: str) -> bool:
    """Loopback endpoints never go through an environment proxy (no_proxy rarely lists them)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)

def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

class QueryEmbedding:
    """The query's vector as pgvector text, awaited at most once; None when unavailable."""

    def __init__(self, question, caller_vector, model, settings, budget_store):
        self.caller_vector = caller_vector
        self.model = model
        self.setting = dict(settings["models.embeddings"], timeout_s=settings["retrieval.embed_timeout_s"])
        self.fetched = {}
        self.thread = None
        self.tried = False
        self.text = None
        self.error = None
        if caller_vector is None and model["id"] is not None:
            limit = settings.get("reader.embed_calls_per_minute", 120)
            if allow(budget_store, "embed", limit):
                self.thread = threading.Thread(
                    target=self._fetch, args=(question,), name="exo-query-embedding", daemon=True
                )
                self.thread.start()
            else:
                self.fetched.update(
                    error_class="rate_limited",
                    error=f"more than {limit} query embeddings in a minute in this session "
                    "(reader.embed_calls_per_minute)",
                )

    def _fetch(self, question):
        try:
            self.fetched.update(embed_one(self.setting, question))
        except Exception as exc:  # anything unforeseen still ends as a degradation, not a hang
            self.fetched.update(error_class="internal", error=repr(exc)[:500])

    def vector(self, report):
        """The vector text; the first call records its source, wait and any degradation in `report`."""
        if self.tried:
            return self.text
        self.tried = True
        t0 = time.monotonic()
        if self.caller_vector is not None:
            values = list(self.caller_vector)
            self.text = "[" + ",".join(repr(float(v)) for v in values) + "]"
            report["query_embedding"] = {"source": "caller", "dimensions": len(values)}
            return self.text
        self.close()
        embedded = dict(self.fetched) or {"error_class": "timeout", "error": "no embedding in time"}
        report["timings_ms"]["embed_query_wait"] = round((time.monotonic() - t0) * 1000, 2)
        if "vector" not in embedded:
            self.error = {"error_class": embedded["error_class"], "error": embedded["error"]}
        elif self.model["dimensions"] is not None and embedded["dimensions"] != self.model["dimensions"]:
            self.error = {
                "error_class": "dimension_mismatch",
                "error": "the endpoint gave {} dimensions, the stored vectors have {}".format(
                    embedded["dimensions"], self.model["dimensions"]
                ),
            }
        else:
            self.text = embedded["vector"]
            report["query_embedding"] = {"source": "endpoint", "ms": embedded["ms"]}
            report["timings_ms"]["embed_query"] = embedded["ms"]
        if self.error:
            report["degradations"].append(dict(component="embeddings", **self.error))
        return self.text

    def close(self):
        """Join the fetch thread (at most the endpoint's timeout and a second): no search leaves
        it running, whether the vector was needed or not, on every path out."""
        if self.thread is not None:
            self.thread.join(self.setting["timeout_s"] + 1)
            self.thread = None
"""The combined-pool rerank: one function per backend, tried in retrieval.rerank_order (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). Native stage scores are not comparable across
workspaces, so the merged pool is reordered by the first backend that answers: deterministic
(what found a chunk and how much of the query it covers), embedding (cosine similarity to the
query's vector), cross_encoder (the models.rerank endpoint's /rerank scores) or listwise (the
chat model orders the ids). A backend only reorders; one that fails is recorded and the next
is tried, and the deterministic relevance is the last resort. Remote calls go straight to the
model client, bounded per call (retrieval.rerank_limits) and per session
(reader.rerank_calls_per_minute, plpy/budget.py over GD).
"""

import json
import time

LISTWISE_REPLY = {
    "type": "json_schema",
    "json_schema": {
        "name": "ranking",
        "schema": {
            "type": "object",
            "properties": {"ranking": {"type": "array", "items": {"type": "integer"}}},
            "required": ["ranking"],
        },
    },
}

def remote_rerank(budget_store, backend, endpoint, query, passages, ids, options, settings):
    """Ask a remote backend about passages (the caller's best first), never raising for a model
    failure: {scores: {id: score}} or {ranking: [ids]}, or {error_class, error}; with passages
    (how many were sent) and ms. Sends the first max_passages passages, passage_chars of each
    (retrieval.rerank_limits); over reader.rerank_calls_per_minute in this session: rate_limited,
    and no call."""
    began = time.monotonic()
    question = (query or "")[:MAX_QUERY_CHARS]
    limit = settings.get("reader.rerank_calls_per_minute", 120)
    bounds = dict({"max_passages": 100, "passage_chars": 2000}, **settings.get("retrieval.rerank_limits", {}))
    sent_ids = list(ids or [])[: bounds["max_passages"]]
    sent = [(p or "")[: bounds["passage_chars"]] for p in list(passages or [])[: len(sent_ids)]]
    try:
        if backend not in ("cross_encoder", "listwise"):
            raise ValueError("unknown remote rerank backend {!r}".format((backend or "")[:100]))
        if not allow(budget_store, "rerank", limit):  # per session, whoever calls
            result = {
                "error_class": "rate_limited",
                "error": f"more than {limit} rerank calls in a minute in this session "
                "(reader.rerank_calls_per_minute)",
            }
        elif backend == "cross_encoder":
            scores = rerank(Endpoint.from_setting(endpoint), question, sent)
            result = {"scores": dict(zip(sent_ids, scores, strict=False))}
        else:
            candidates = [{"chunk_id": i, "body": p} for i, p in zip(sent_ids, sent, strict=False)]
            reply = chat(
                Endpoint.from_setting(endpoint),
                listwise_prompt(question, candidates, options["excerpt_chars"]),
                max_tokens=options["max_tokens"],
                response_format=LISTWISE_REPLY,
            )
            result = {"ranking": parse_listwise(reply.content, set(sent_ids))}
    except (ModelError, ValueError) as exc:
        result = {"error_class": getattr(exc, "error_class", "bad_response"), "error": str(exc)[:500]}
    result["passages"] = len(sent_ids)
    result["ms"] = round((time.monotonic() - began) * 1000, 1)
    return result

class RerankPool:
    """What every backend may read: the pool (by chunk id), its incoming order (deterministic
    rank, best first), the deterministic relevance, the settings and the query."""

    def __init__(
        self,
        db,
        candidates,
        incoming,
        deterministic,
        settings,
        question,
        model,
        embedding,
        report,
        budget_store,
    ):
        self.db = db
        self.candidates = candidates
        self.incoming = incoming
        self.deterministic = deterministic
        self.settings = settings
        self.question = question
        self.model = model
        self.embedding = embedding
        self.report = report
        self.budget_store = budget_store

def rerank_deterministic(pool, t0):
    return pool.deterministic, {"outcome": "answered", "ms": elapsed_ms(t0)}

def rerank_embedding(pool, t0):
    """Cosine similarity of each candidate's stored vector to the query's, clipped to 0..1."""
    text = pool.embedding.vector(pool.report) if pool.model["id"] is not None else None
    if text is None:
        why = "no embeddings stored yet" if pool.model["id"] is None else "query embedding unavailable"
        return None, {"outcome": "failed", "why": why}
    sims = {
        r["chunk_id"]: r["similarity"]
        for r in pool.db.run(
            "similarity",
            "select * from exo_private.pool_similarity($1, $2, $3, $4)",
            ["text[]", "bigint[]", "text", "int"],
            [
                [c["workspace"] for c in pool.candidates],
                [c["chunk_id"] for c in pool.candidates],
                text,
                pool.model["id"],
            ],
        )
    }
    # Cosine similarity is already on a common scale: clipped, not stretched.
    relevance = {c["chunk_id"]: min(1.0, max(0.0, sims.get(c["chunk_id"]) or 0.0)) for c in pool.candidates}
    return relevance, {
        "outcome": "answered",
        "ms": elapsed_ms(t0),
        "without_vector": sum(1 for c in pool.candidates if c["chunk_id"] not in sims),
    }

def rerank_remote(pool, backend):
    """cross_encoder or listwise: the endpoint's answer as relevance, or why there is none."""
    settings = pool.settings
    setting_key = "models.rerank" if backend == "cross_encoder" else "models.chat"
    endpoint = dict(settings.get(setting_key) or {})
    if backend == "listwise" and not settings["retrieval.listwise"].get("enabled"):
        return None, {"outcome": "skipped", "why": "off (retrieval.listwise)"}
    if not endpoint.get("url"):
        return None, {"outcome": "skipped", "why": setting_key + " has no url"}
    endpoint["timeout_s"] = settings["retrieval.rerank_timeout_s"]
    options = settings["retrieval.listwise"]
    order = pool.incoming[: options["max_candidates"]] if backend == "listwise" else pool.incoming
    bodies = {c["chunk_id"]: c["body"] for c in pool.candidates}
    answer = remote_rerank(
        pool.budget_store,
        backend,
        endpoint,
        pool.question,
        [bodies[i] for i in order],
        order,
        options,
        settings,
    )
    if "error_class" in answer:
        pool.report["degradations"].append(
            {"component": "rerank:" + backend, "error_class": answer["error_class"], "error": answer["error"]}
        )
        return None, {"outcome": "failed", "error_class": answer["error_class"], "ms": answer["ms"]}
    if backend == "cross_encoder":
        relevance = normalise({c["chunk_id"]: answer["scores"].get(c["chunk_id"]) for c in pool.candidates})
    else:
        relevance = from_ranking(answer["ranking"], pool.incoming)
    return relevance, {"outcome": "answered", "ms": answer["ms"], "passages": answer["passages"]}

def rerank_relevance(pool):
    """(relevance, backend, attempts): the first backend of retrieval.rerank_order that answers,
    blended with the deterministic relevance (deterministic when none does)."""
    attempts = []
    for backend in pool.settings["retrieval.rerank_order"]:
        t0 = time.monotonic()
        if not pool.candidates:
            attempts.append({"backend": backend, "outcome": "skipped", "why": "no candidates"})
            return {}, "none", attempts
        if backend == "deterministic":
            relevance, attempt = rerank_deterministic(pool, t0)
        elif backend == "embedding":
            relevance, attempt = rerank_embedding(pool, t0)
        elif backend in ("cross_encoder", "listwise"):
            relevance, attempt = rerank_remote(pool, backend)
        else:
            relevance, attempt = None, {"outcome": "skipped", "why": "unknown backend"}
        attempts.append(dict(backend=backend, **attempt))
        if relevance is not None:
            if backend != "deterministic":
                relevance = blend(
                    relevance, pool.deterministic, pool.settings["retrieval.rank_weights"]["backend_share"]
                )
            return relevance, backend, attempts
    # The configured order had no backend that answered.
    attempts.append({"backend": "deterministic", "outcome": "answered", "why": "fallback"})
    return pool.deterministic, "deterministic", attempts

def rerank_call_json(plpy, SD, GD, backend, endpoint, query, passages, ids, options):
    """exo_private.rerank_call's body: remote_rerank with the session's settings, as JSON text."""
    if "rerank_settings" not in SD:
        SD["rerank_settings"] = plpy.prepare(
            "select key, value::text from exo_private.settings "
            "where key in ('reader.rerank_calls_per_minute', 'retrieval.rerank_limits')",
            [],
        )
    settings = {r["key"]: json.loads(r["value"]) for r in plpy.execute(SD["rerank_settings"], [])}
    return json.dumps(
        remote_rerank(GD, backend, json.loads(endpoint), query, passages, ids, json.loads(options), settings)
    )
"""Staged retrieval per workspace and the archive fallback (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). In each chosen workspace the stages of
retrieval.stages run in order (exact, participant, lexical, capsules, graph, semantic) until the workspace
holds per_workspace candidates or enough confident ones; each stage runs the query
exo_private.stage_sql writes for that workspace, prepared once per session. When the archive
is closed by default and nothing in the present bands answers, the search runs again over
every band (the fallback), which never releases deferred material by itself.
"""

import time

class StageSearch:
    """The stages of one search over its chosen workspaces; candidate details fetched once."""

    def __init__(self, plpy, db, question, chosen, per_workspace, settings, model, embedding, report):
        self.plpy = plpy
        self.db = db
        self.q = question
        self.chosen = chosen
        self.per_workspace = per_workspace
        self.settings = settings
        self.model = model
        self.embedding = embedding
        self.report = report
        self.details = {}
        self.thresholds = {
            "lexical": settings["retrieval.lexical_confident_score"],
            "semantic": settings["retrieval.semantic_confident_similarity"],
        }

    def sql_text(self, stage, ws, model_id=None, dimensions=None):
        """exo_private.stage_sql's query for a stage in a workspace, asked once per session."""
        return self.db.cached(
            ("sql", stage, ws, model_id, dimensions),
            lambda: self.db.run(
                "stage_sql",
                "select exo_private.stage_sql($1, $2, $3, $4) as q",
                ["text", "text", "int", "int"],
                [stage, ws, model_id, dimensions],
            )[0]["q"],
        )

    def rows(self, stage, ws, bands):
        """(rows, skipped_reason) of one stage in one workspace."""
        q, run = self.q, self.db.run
        common = [list(bands), q.as_of_day, self.per_workspace]
        base = ["text[]", "date", "int"]
        entities = q.entities.get(ws)
        if stage == "exact":
            # A document named by title or file name first: a chunk keeps the first match found.
            rows = []
            if q.titles or q.files:
                for r in run(
                    ("document", ws),
                    self.sql_text("document", ws),
                    ["text[]", *base, "text[]"],
                    [q.titles, *common, q.files],
                ):
                    rows.append(
                        {
                            "chunk_id": r["chunk_id"],
                            "score": r["score"],
                            "confident": True,
                            "charged": r["charged"],
                            "match": "document",
                            "detail": "document " + r["detail"],
                        }
                    )
            for ident in q.idents:
                for r in run(
                    ("identifier", ws), self.sql_text("identifier", ws), ["text", *base], [ident, *common]
                ):
                    rows.append(
                        {
                            "chunk_id": r["chunk_id"],
                            "score": r["score"],
                            "confident": True,
                            "charged": r["charged"],
                            "match": "identifier",
                            "detail": "identifier " + ident,
                        }
                    )
            if entities:
                for r in run(
                    ("entity", ws),
                    self.sql_text("entity", ws),
                    ["bigint[]", *base],
                    [[e["id"] for e in entities], *common],
                ):
                    rows.append(
                        {
                            "chunk_id": r["chunk_id"],
                            "score": r["score"],
                            "confident": True,
                            "charged": r["charged"],
                            "match": "entity",
                            "detail": "entity " + r["detail"],
                        }
                    )
            if not (q.idents or entities or q.titles or q.files):
                return [], "no identifier, entity, title or file name in the query"
            return rows, None
        if stage == "lexical":
            if not q.terms:
                return [], "no searchable words in the query"
            rows = run(
                ("lexical", ws),
                self.sql_text("lexical", ws),
                ["text", *base],
                [q.text[:MAX_QUERY_CHARS], *common],
            )
            return [
                {
                    "chunk_id": r["chunk_id"],
                    "score": r["score"],
                    "confident": r["score"] >= self.thresholds["lexical"],
                    "charged": r["charged"],
                }
                for r in rows
            ], None
        if stage == "capsules":
            return [], "no capsules yet (summaries arrive with a later issue)"
        if stage == "graph":
            if not entities:
                return [], "no entity of this workspace's graph named in the query"
            graph = self.settings["retrieval.graph"]
            rows = run(
                ("graph", ws),
                self.sql_text("graph", ws),
                ["bigint[]", *base, "int", "int"],
                [[e["id"] for e in entities], *common, graph["depth"], graph["per_node"]],
            )
            return [
                {
                    "chunk_id": r["chunk_id"],
                    "score": r["score"],
                    "confident": False,
                    "charged": r["charged"],
                    "detail": "near " + r["detail"],
                }
                for r in rows
            ], None
        if stage == "participant":
            model = self.model
            if model["id"] is None:
                return [], "no embeddings stored yet"
            text = self.embedding.vector(self.report)
            if text is None:
                return [], "query embedding unavailable ({})".format(self.embedding.error["error_class"])
            # As many windows as a confident pool needs, not the whole room: BM25 and the other
            # stages still look everywhere. A window of the person named is where to look, not an
            # answer, so none of them counts as confident.
            limit = min(self.per_workspace, self.settings["retrieval.confident_needed"])
            rows = run(
                ("participant", ws, model["id"], model["dimensions"]),
                self.sql_text("participant", ws, model["id"], model["dimensions"]),
                ["text", "text[]", "date", "int", "text[]"],
                [text, list(bands), q.as_of_day, limit, name_keys(q.text)],
            )
            return [
                {"chunk_id": r["chunk_id"], "score": r["score"], "confident": False, "charged": r["charged"]}
                for r in rows
            ], None
        if stage == "semantic":
            model = self.model
            if model["id"] is None:
                return [], "no embeddings stored yet"
            text = self.embedding.vector(self.report)
            if text is None:
                return [], "query embedding unavailable ({})".format(self.embedding.error["error_class"])
            rows = run(
                ("semantic", ws, model["id"], model["dimensions"]),
                self.sql_text("semantic", ws, model["id"], model["dimensions"]),
                ["text", *base],
                [text, *common],
            )
            low = self.settings["retrieval.semantic_min_similarity"]
            return [
                {
                    "chunk_id": r["chunk_id"],
                    "score": r["score"],
                    "confident": r["score"] >= self.thresholds["semantic"],
                    "charged": r["charged"],
                }
                for r in rows
                if r["score"] >= low
            ], None
        self.plpy.error("unknown stage " + repr(stage[:100]) + " in retrieval.stages")

    def workspaces(self, bands):
        """A WorkspacePool per chosen workspace after its stages over `bands`, each stage run or
        skipped (and why) in pool.stages."""
        withhold = self.q.care.withheld
        pools = [
            WorkspacePool(ws, self.per_workspace, self.settings["retrieval.confident_needed"])
            for ws in self.chosen
        ]
        for pool in pools:
            for stage in self.settings["retrieval.stages"]:
                go, why = pool.wants_more()
                entry = {"stage": stage}
                if go:
                    t0 = time.monotonic()
                    rows, why = self.rows(stage, pool.workspace, bands)
                    if why is None:
                        admitted, held = pool.admit(stage, rows, withhold)
                        entry.update(
                            ran=True,
                            found=len(rows),
                            admitted=admitted,
                            withheld=held,
                            confident=pool.confident,
                            ms=elapsed_ms(t0),
                        )
                        pool.stages.append(entry)
                        continue
                entry.update(ran=False, skipped=why)
                pool.stages.append(entry)
        return pools

    def fetch_details(self, hits):
        """pool_details rows of hits (with the query's coverage), each fetched once per search."""
        missing = [h for h in hits if h["chunk_id"] not in self.details]
        if missing:
            for d in self.db.run(
                "details",
                "select * from exo_private.pool_details($1, $2, $3)",
                ["text[]", "bigint[]", "date"],
                [[h["workspace"] for h in missing], [h["chunk_id"] for h in missing], self.q.as_of_day],
            ):
                self.details[d["chunk_id"]] = dict(d, coverage=coverage(d["body"], self.q.terms))
        return [self.details[h["chunk_id"]] for h in hits if h["chunk_id"] in self.details]

    def present_answers(self, pools):
        """Whether the present bands answer: an identifier of the query found verbatim when it
        has any, else a confident candidate, or one that covers enough of the query's words
        (BM25 confidence depends on the corpus; a tiny one never reaches it)."""
        if self.q.idents:
            return any(h["match"] == "identifier" for p in pools for h in p.hits)
        if any(p.confident for p in pools):
            return True
        covered = [d["coverage"] for d in self.fetch_details([h for p in pools for h in p.hits])]
        return bool(covered) and max(covered) >= self.settings["retrieval.answer_coverage"]

def search_with_fallback(search, open_archive):
    """(pools, bands, fallback): the stages over the bands the question opens; when the archive
    is closed by default (open_archive null, no temporal signal) and nothing present answers,
    again over every band. Chunks withheld in the first pass stay counted for the hints."""
    q = search.q
    bands = ALL_BANDS if q.archive_open else PRESENT_BANDS
    pools = search.workspaces(bands)
    if q.archive_open or open_archive is not None or search.present_answers(pools):
        return pools, bands, False
    # Recency preference: the archive answers only when nothing present does.
    before = pools
    bands = ALL_BANDS
    pools = search.workspaces(bands)
    for first, second in zip(before, pools, strict=True):
        for subject, chunks in first.withheld.items():
            second.withheld.setdefault(subject, set()).update(chunks)
    return pools, bands, True

class Statements:
    """The session's prepared statements (plpython's SD), by key; prepared on first use."""

    def __init__(self, plpy, SD):
        self.plpy = plpy
        self.plans = SD.setdefault("plans", {})

    def cached(self, key, make):
        if key not in self.plans:
            self.plans[key] = make()
        return self.plans[key]

    def run(self, key, text, types, args):
        return self.plpy.execute(self.cached(key, lambda: self.plpy.prepare(text, types)), args)

def withheld_hints(db, q, pools, chosen):
    """One hint per (subject, workspace) with chunks withheld, or named by the question but
    charged in a band the search did not open; how to reach it, never its text."""
    by_time = (
        "name the time you mean" if q.time_releases else "name it in a question that names the time you mean"
    )

    def how(subject):
        asked = db.run("hint_how", "select exo_private.hint_how($1) as h", ["text"], [subject])[0]["h"]
        return (
            "To include it, "
            + asked
            + " (and open_archive => true for archival material), or "
            + by_time
            + "."
        )

    named = {}
    asked_about = [s for s in named_subjects(q.text, q.deferred) if q.care.withheld([s])]
    if asked_about:
        for r in db.run(
            "charged_counts",
            "select s.subject, c.workspace, count(*)::int as n "
            "from unnest($1::text[]) s (subject) "
            "join exo_private.chunks c on c.charged_subjects <> '{}' and c.charged_subjects @> array[s.subject] "
            "and c.workspace = any ($2) "
            "group by 1, 2",
            ["text[]", "text[]"],
            [asked_about, chosen],
        ):
            named[(r["subject"], r["workspace"])] = r["n"]
    return hints(pools, how, named)

def pool_candidates(search, pools):
    """The merged pool: every workspace's hits with their chunk and document (and, for a chat
    chunk, its conversation, senders, first time and messages), by chunk id."""
    hits = [h for p in pools for h in p.hits]
    by_id = {h["chunk_id"]: h for h in hits}
    candidates = []
    for d in search.fetch_details(hits):
        written = datetime.date.fromisoformat(d["written_at"]) if d["written_at"] else None
        candidates.append(
            dict(
                by_id[d["chunk_id"]],
                document_id=d["document_id"],
                ordinal=d["ordinal"],
                body=d["body"],
                band=d["band"],
                written_at=d["written_at"],
                written_ordinal=written.toordinal() if written else None,
                written_year=written.year if written else None,
                path=d["path"],
                title=d["title"],
                canonical=d["canonical"],
                chat=json.loads(d["chat"]) if d["chat"] else None,
                coverage=d["coverage"],
            )
        )
    candidates.sort(key=lambda c: c["chunk_id"])
    return candidates

def result_row(n, c):
    """One result: what exo.search shows, the chat details of a chat chunk (the packet's citation
    and excerpt) and the charged subjects the packet's provenance names."""
    return {
        "rank": n,
        "chunk_id": c["chunk_id"],
        "document_id": c["document_id"],
        "ordinal": c["ordinal"],
        "workspace": c["workspace"],
        "path": c["path"],
        "title": c["title"],
        "band": c["band"],
        "written_at": c["written_at"],
        "canonical": c["canonical"],
        "chat": c["chat"],
        "stage": c["stage"],
        "detail": c.get("detail"),
        "score": c["score"],
        "relevance": c["relevance"],
        "citation": citation(c),
        "body": c["body"],
        "charged": c["charged"],
    }

def run(plpy, SD, GD, query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding):
    """{results, report} of one search as JSON text (arguments checked by
    exo_private.check_search_arguments). SD holds the session's prepared statements, GD the
    session's model budgets."""
    began = time.monotonic()
    db = Statements(plpy, SD)
    settings = load_settings(db)
    chosen = choose_workspaces(db, workspaces)
    # No more of the query than MAX_INPUT_CHARS is read anywhere: a huge query costs no more
    # than a long one.
    q = Question(query[:MAX_INPUT_CHARS], as_of)
    report = {
        "query": q.text[:200],
        "as_of": q.as_of_day,
        "workspaces": {},
        "degradations": [],
        "timings_ms": {},
    }
    timings = report["timings_ms"]
    if len(query) > MAX_INPUT_CHARS:
        report["query_truncated"] = {"chars": len(query), "read": MAX_INPUT_CHARS}

    model = active_model(db)
    embedding = QueryEmbedding(q.text, query_embedding, model, settings, GD)
    try:
        t = time.monotonic()
        q.read_time(db, open_archive)
        timings["temporal"] = elapsed_ms(t)
        report["temporal"] = q.temporal_report()
        q.read_care(db, bridge, settings)
        t = time.monotonic()
        q.read_material(db, chosen, settings["retrieval.graph"]["max_entities"])
        timings["query_analysis"] = elapsed_ms(t)
        report["recognised"] = q.recognised_report()

        t = time.monotonic()
        search = StageSearch(plpy, db, q, chosen, per_workspace, settings, model, embedding, report)
        pools, bands, fallback = search_with_fallback(search, open_archive)
        timings["stages"] = elapsed_ms(t)
        report["bands"] = list(bands)
        report["archive"] = {
            "open": q.archive_open or fallback,
            "why": q.archive_why if not fallback else "nothing in the present bands answered",
            "fallback": fallback,
        }
        for pool in pools:
            ran = [s["stage"] for s in pool.stages if s.get("ran")]
            report["workspaces"][pool.workspace] = {
                "candidates": len(pool.hits),
                "confident": pool.confident,
                "stopped_after": ran[-1] if ran else None,
                "stages": pool.stages,
            }
        report["hints"] = withheld_hints(db, q, pools, chosen)

        t = time.monotonic()
        candidates = pool_candidates(search, pools)
        timings["pool"] = elapsed_ms(t)

        weights = settings["retrieval.rank_weights"]
        years = q.signal["years"]
        recency = not report["archive"]["open"]  # an open archive is not a place to prefer the new
        present = recency and not years and asks_present(q.text)
        report["temporal"]["asks_present"] = present
        today = q.today.toordinal()
        deterministic = {c["chunk_id"]: deterministic_relevance(c, weights) for c in candidates}
        incoming = [
            c["chunk_id"] for c in rank(candidates, deterministic, weights, today, years, recency, present)
        ]
        t = time.monotonic()
        relevance, backend, attempts = rerank_relevance(
            RerankPool(
                db, candidates, incoming, deterministic, settings, q.text, model, embedding, report, GD
            )
        )
        ranked = rank(candidates, relevance, weights, today, years, recency, present)
        timings["rerank"] = elapsed_ms(t)
        report["rerank"] = {"backend": backend, "attempts": attempts, "pool": len(candidates)}
    finally:
        embedding.close()

    results = [result_row(n, c) for n, c in enumerate(ranked[:k], 1)]
    report["returned"] = len(results)
    report["released"] = released(ranked[:k], q.care.why_released)
    timings["total"] = elapsed_ms(began)
    return json.dumps({"results": results, "report": report})
return run(plpy, SD, GD, query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding)
$_$;

ALTER FUNCTION exo_private.retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) OWNER TO exo_owner;

--
-- Name: FUNCTION retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) IS 'The whole retrieval: temporal signal, staged search per workspace with early stop, deference (time and care decided apart), archive fallback, combined-pool rerank; {results, report}. Reads the first 2,000 characters of the query; its query embedding counts against reader.embed_calls_per_minute. Read through exo.search, exo.search_report, exo.search_json and exo.context_packet.';

--
-- Name: retry_failed(text, timestamp with time zone); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.retry_failed(p_queue text DEFAULT NULL::text, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(queue text, requeued integer, resolved integer)
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    q text;
    retry bigint[];
    open bigint[];
begin
    for q in select exo_private.worker_queues(p_queue) loop
        -- Failed targets whose failure falls in the window; lost ones (no record, no
        -- message) too unless a window was asked for.
        select coalesce(array_agg(o.target_id) filter (
                   where (o.state = 'lost' and p_since is null)
                      or (o.state = 'failed' and exists (
                              select 1 from exo_private.job_failures f
                              where f.queue = q and f.target_id = o.target_id and f.retried_at is null
                                and (p_since is null or f.failed_at >= p_since)))), '{}'),
               coalesce(array_agg(o.target_id), '{}')
          into retry, open
        from exo_private.outstanding_work() o
        where o.queue = q;
        queue := q;
        requeued := exo_private.queue_again(q, retry);
        -- A failure is settled when its target is queued again or needs no more work (done or
        -- gone); one whose target waits in the queue already stays until that job ends.
        with settled as (
            update exo_private.job_failures f
               set retried_at = pg_catalog.now()
             where f.queue = q and f.retried_at is null
               and (p_since is null or f.failed_at >= p_since)
               and (f.target_id = any(retry) or f.target_id is null or not f.target_id = any(open))
            returning f.target_id
        )
        select count(distinct s.target_id) filter (where not s.target_id = any(retry)) into resolved from settled s;
        return next;
    end loop;
end
$$;

ALTER FUNCTION exo_private.retry_failed(p_queue text, p_since timestamp with time zone) OWNER TO exo_owner;

--
-- Name: FUNCTION retry_failed(p_queue text, p_since timestamp with time zone); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.retry_failed(p_queue text, p_since timestamp with time zone) IS 'Queue again the chunks (embed) and windows (extract) whose job failed (failures since p_since when given) and that still need work, plus, without p_since, those that wait with no message at all; failures are marked retried_at. Per queue: requeued (messages sent) and resolved (failed targets that no longer need work). p_queue null means both queues.';

--
-- Name: retry_ocr(timestamp with time zone); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.retry_ocr(p_since timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    doc bigint;
    queued int := 0;
begin
    for doc in
        select d.id from exo_private.documents d
        where (d.stage = 'failed' and d.error_class in ('ocr_timeout', 'ocr_failed', 'ocr_unavailable')
               and (p_since is null or d.stage_changed_at >= p_since))
           or (p_since is null and d.stage = 'ocr_pending'
               and not exists (select 1 from pgmq.q_ocr q where (q.message ->> 'document_id')::bigint = d.id))
        order by d.id
        for update of d
    loop
        perform exo_private.await_ocr(doc);
        queued := queued + 1;
    end loop;
    return queued;
end
$$;

ALTER FUNCTION exo_private.retry_ocr(p_since timestamp with time zone) OWNER TO exo_owner;

--
-- Name: FUNCTION retry_ocr(p_since timestamp with time zone); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.retry_ocr(p_since timestamp with time zone) IS 'Queue again for OCR every document that ended failed with ocr_timeout, ocr_failed or ocr_unavailable (since p_since when given: after installing Tesseract, raising ocr.timeout_seconds or adding language data), plus, without p_since, those that wait at ocr_pending with no message (dead-lettered or lost); returns how many were queued.';

--
-- Name: return_messages(text, bigint[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.return_messages(p_queue text, p_msg_ids bigint[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
declare
    returned int;
begin
    -- The table name comes from the fixed set that queue_target_key accepts.
    perform exo_private.queue_target_key(p_queue);
    execute format('update pgmq.%I set vt = pg_catalog.clock_timestamp(), '
                   'read_ct = greatest(read_ct - 1, 0) where msg_id = any($1)', 'q_' || p_queue)
        using p_msg_ids;
    get diagnostics returned = row_count;
    delete from exo_private.worker_claims c where c.queue = p_queue and c.msg_id = any(p_msg_ids);
    return returned;
end
$_$;

ALTER FUNCTION exo_private.return_messages(p_queue text, p_msg_ids bigint[]) OWNER TO exo_owner;

--
-- Name: FUNCTION return_messages(p_queue text, p_msg_ids bigint[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.return_messages(p_queue text, p_msg_ids bigint[]) IS 'Make messages visible now and take back the read that fetched them (read_ct - 1): the worker found the model endpoint down, so that read must not count toward dead-lettering. Returns how many messages were returned.';

--
-- Name: review_document(bigint, text, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.review_document(doc_id bigint, decision text, target_workspace text DEFAULT NULL::text) RETURNS exo_private.document_stage
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    doc exo_private.documents;
    chosen text;
begin
    select * into doc from exo_private.documents d where d.id = doc_id for update;
    if not found then
        raise exception 'document % does not exist', doc_id;
    end if;
    if decision not in ('approve', 'reassign', 'reject') then
        raise exception 'decision must be approve, reassign or reject, not %', decision;
    end if;
    if decision = 'reject' then
        update exo_private.documents d
           set stage = 'skipped', error_class = 'rejected', error_message = 'rejected in quarantine review',
               review = jsonb_build_object('decision', 'rejected', 'at', now()), stage_changed_at = now()
         where d.id = doc_id;
        perform exo_private.clear_derived(doc_id);
        return 'skipped'::exo_private.document_stage;
    end if;
    if decision = 'approve' then
        if doc.stage <> 'quarantined' then
            raise exception 'document % (%) is not in quarantine (stage %)', doc_id, doc.path, doc.stage;
        end if;
        chosen := doc.route -> 'candidates' -> 0 ->> 'workspace';
        if chosen is null then
            raise exception 'document % (%) has no candidate workspace; use reassign', doc_id, doc.path;
        end if;
    else
        chosen := target_workspace;
        if not exists (select 1 from exo_private.workspaces w where w.name = chosen) then
            raise exception 'workspace % does not exist', coalesce(chosen, '(null)');
        end if;
    end if;
    update exo_private.documents d
       set review = jsonb_build_object('decision', decision || 'd', 'workspace', chosen, 'at', now()),
           stage = case when d.error_class = 'rejected' then 'extracted'::exo_private.document_stage else d.stage end,
           error_class = case when d.error_class = 'rejected' then null else d.error_class end,
           error_message = case when d.error_class = 'rejected' then null else d.error_message end
     where d.id = doc_id;
    return exo_private.process_document(doc_id);
end
$$;

ALTER FUNCTION exo_private.review_document(doc_id bigint, decision text, target_workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION review_document(doc_id bigint, decision text, target_workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.review_document(doc_id bigint, decision text, target_workspace text) IS 'Quarantine review: approve (top candidate), reassign to a workspace, or reject (skipped).';

--
-- Name: review_quarantine(text, text, boolean, text, double precision, boolean); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.review_quarantine(decision text, target_workspace text DEFAULT NULL::text, select_all boolean DEFAULT false, path_glob text DEFAULT NULL::text, min_confidence double precision DEFAULT NULL::double precision, dry_run boolean DEFAULT false) RETURNS TABLE(document_id bigint, path text, workspace text, stage text)
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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

ALTER FUNCTION exo_private.review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean) OWNER TO exo_owner;

--
-- Name: FUNCTION review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean) IS 'Quarantine review in bulk: approve (each document''s best candidate), reassign (to target_workspace) or reject every quarantined document picked by select_all, path_glob (a glob on the path under its source root, or on root/path) and min_confidence (the router''s confidence at least this), selectors combined with and; dry_run lists what would change without changing it. Returns each document with its workspace and the stage it reaches (or would).';

--
-- Name: route_source_quarantine(integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.route_source_quarantine(source integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
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

ALTER FUNCTION exo_private.route_source_quarantine(source integer) OWNER TO exo_owner;

--
-- Name: FUNCTION route_source_quarantine(source integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.route_source_quarantine(source integer) IS 'Route one source''s quarantined documents again (after `exo ingest PATH --workspace W` forced the source''s workspace); returns how many left quarantine.';

--
-- Name: run_cypher(name, text, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_graph
--

CREATE FUNCTION exo_private.run_cypher(graph name, query text, max_rows integer) RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'ag_catalog', 'pg_temp'
    SET row_security TO 'on'
    AS $_$
begin
    -- Owned by exo_graph (sql/985_graph_access.sql), which may only read the graph tables,
    -- through their row security (on, whatever the session says). The caller has checked
    -- the query (no $ in it, so the dollar quote cannot end early) and set
    -- exo.cypher_hidden_vertices and _edges.
    return query execute pg_catalog.format(
        'select pg_catalog.format(''%%s'', v) from ag_catalog.cypher(%L, $exo_cypher$%s$exo_cypher$) '
        'as (v ag_catalog.agtype) limit %s',
        graph, query, max_rows);
end
$_$;

ALTER FUNCTION exo_private.run_cypher(graph name, query text, max_rows integer) OWNER TO exo_graph;

--
-- Name: FUNCTION run_cypher(graph name, query text, max_rows integer); Type: COMMENT; Schema: exo_private; Owner: exo_graph
--

COMMENT ON FUNCTION exo_private.run_cypher(graph name, query text, max_rows integer) IS 'Run a Cypher query that exo.cypher has checked on an AGE graph as exo_graph (read-only on the graph tables, row security hiding what the hidden-vertices and -edges settings list); at most max_rows agtype values as text. Executable by exo_api only.';

--
-- Name: seed_owner(text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.seed_owner(workspaces text[]) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    owner_name text;
    owner_key text;
    ids bigint[];
begin
    select p.display_name, p.entity_key into owner_name, owner_key
    from exo_private.people p
    where p.is_owner;
    if owner_key is null then
        return '{}'::bigint[];
    end if;
    -- A workspace without a generation gets generation 1 of model 'seed', which the first
    -- extraction model claims (current_generation).
    insert into exo_private.extraction_generations (workspace, generation, model)
    select w.name, 1, 'seed'
    from exo_private.workspaces w
    where w.name = any(workspaces)
      and not exists (select 1 from exo_private.extraction_generations g where g.workspace = w.name)
    on conflict do nothing;
    with upserted as (
        insert into exo_private.entities as e (workspace, generation, type, canonical_key, name, is_owner)
        select g.workspace, max(g.generation), 'Person'::exo_private.entity_type, owner_key, owner_name, true
        from exo_private.extraction_generations g
        where g.workspace = any(workspaces)
        group by g.workspace
        on conflict (workspace, generation, type, canonical_key)
            do update set is_owner = true, name = excluded.name
            where not e.is_owner or e.name <> excluded.name
        returning e.id
    )
    select coalesce(array_agg(upserted.id), '{}') into ids from upserted;
    return ids;
end
$$;

ALTER FUNCTION exo_private.seed_owner(workspaces text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION seed_owner(workspaces text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.seed_owner(workspaces text[]) IS 'Make the owner''s Person entity (key people.entity_key) exist, is_owner, named as the owner, in the current generation of the given workspaces; returns the entities written. Projection is the caller''s.';

--
-- Name: set_embedding_model(text, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.set_embedding_model(p_model text, p_dimensions integer) RETURNS integer
    LANGUAGE sql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    update exo_private.settings s
       set value = s.value || jsonb_build_object('model', p_model, 'dimensions', p_dimensions), updated_at = now()
     where s.key = 'models.embeddings';
    select count(*)::int
    from exo_private.chunks c
    where not exists (select 1 from exo_private.chunk_embeddings e
                      join exo_private.embedding_models m on m.id = e.model_id
                      where e.workspace = c.workspace and e.chunk_id = c.id
                        and m.name = p_model and m.dimensions = p_dimensions);
$$;

ALTER FUNCTION exo_private.set_embedding_model(p_model text, p_dimensions integer) OWNER TO exo_owner;

--
-- Name: FUNCTION set_embedding_model(p_model text, p_dimensions integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.set_embedding_model(p_model text, p_dimensions integer) IS 'Make another embedding model active; returns how many chunks were queued to be embedded with it.';

--
-- Name: set_owner(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.set_owner(display_name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    owner_key text := exo_private.canonical_key(display_name);
    changed bigint[];
begin
    if owner_key is null then
        raise exception 'the owner''s name must not be blank';
    end if;
    update exo_private.people p
       set display_name = pg_catalog.btrim(set_owner.display_name), entity_key = owner_key
     where p.is_owner;
    if not found then
        raise exception 'there is no owner person'
            using hint = 'insert a row into exo_private.people with is_owner = true';
    end if;
    -- A renamed owner: their former entities are ordinary people now.
    with demoted as (
        update exo_private.entities e
           set is_owner = false
         where e.is_owner and e.canonical_key <> owner_key
        returning e.id
    )
    select coalesce(array_agg(demoted.id), '{}') into changed from demoted;
    changed := changed || exo_private.seed_owner(array(select w.name from exo_private.workspaces w));
    perform exo_private.project_entities(changed);
    -- The owner's chat windows now mention the owner's entity.
    perform exo_private.link_participants(array(
        select d.conversation_id from exo_private.documents d where d.conversation_id is not null));
end
$$;

ALTER FUNCTION exo_private.set_owner(display_name text) OWNER TO exo_owner;

--
-- Name: FUNCTION set_owner(display_name text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.set_owner(display_name text) IS 'Name the owner: people''s owner row gets display_name and entity_key; every workspace''s current generation gets an is_owner Person entity for that key (generation 1 of model ''seed'' where there is none), projected into its graph, and the owner''s chat windows mention it (link_participants). Extractions naming the owner merge into it.';

--
-- Name: set_setting(text, jsonb, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.set_setting(setting_key text, new_value jsonb, what text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    update settings
       set value = new_value, description = coalesce(what, settings.description), updated_at = now()
     where key = setting_key;
    if found then
        return;
    end if;
    if what is null then
        raise exception 'setting % does not exist yet: give it a description', setting_key;
    end if;
    insert into settings (key, value, description) values (setting_key, new_value, what);
end
$$;

ALTER FUNCTION exo_private.set_setting(setting_key text, new_value jsonb, what text) OWNER TO exo_owner;

--
-- Name: FUNCTION set_setting(setting_key text, new_value jsonb, what text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.set_setting(setting_key text, new_value jsonb, what text) IS 'Create or change a setting; a new one needs a description.';

--
-- Name: stage_sql(text, text, integer, integer); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.stage_sql(stage text, workspace text, model_id integer DEFAULT NULL::integer, dimensions integer DEFAULT NULL::integer) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
declare
    chunks text := 'chunks_' || workspace;
    bm25 text := format('exo_private.%I', 'chunks_' || workspace || '_bm25');
    -- Every stage: $2 the bands open (text[]), $3 the as_of day, $4 the row limit. Nothing
    -- written after as_of. The band: the stored one (as of today), compared as the enum, not as
    -- text, so the planner keeps the column's statistics; as of a past day, the band the chunk had
    -- then (exo_private.band_as_of), worked out only for a chunk whose stored band is closed: a
    -- band only moves towards archival as time passes, so one open now (the bands opened are the
    -- present ones or all) was open on any earlier day.
    visible text := format($v$c.workspace = %L and (c.written_at is null or c.written_at <= $3)
        and (c.band = any ($2::exo_private.band[])
             or $3 < current_date and exo_private.band_as_of(
                c.band, c.written_at,
                (select bd.band_source = 'inferred' and not bd.canonical
                 from exo_private.documents bd where bd.id = c.document_id),
                $3,
                (select bs.value::int from exo_private.settings bs where bs.key = 'banding.current_days'),
                (select bs.value::int from exo_private.settings bs where bs.key = 'banding.recent_days'))
            = any ($2::exo_private.band[]))$v$, workspace);
    -- Chunks per named entity the entity and graph stages look at, newest first: a hub of
    -- thousands of mentions costs this many rows, not all of them. Only mentions the text makes
    -- (origin 'model'): a chat participant is the sender of every line of their windows, which
    -- says nothing about what a window answers (the lexical stage still matches the name).
    per_entity constant int := 200;
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = stage_sql.workspace) then
        raise exception 'workspace % does not exist', left(workspace, 100);
    end if;
    case stage
    when 'identifier' then  -- $1: a string that must occur verbatim (case-insensitive)
        -- The BM25 hits of the identifier's words, best first and at most 10 x the limit,
        -- checked for the string itself: a rare identifier is among the first, and a common
        -- prefix ("INC") never walks its thousands of postings.
        return format($q$
            select x.chunk_id, x.score, x.charged from (
                select c.id as chunk_id, -(c.body operator(public.<@>) public.to_bm25query($1, %L)) as score,
                       c.charged_subjects as charged, c.body
                from exo_private.%I c
                where %s
                order by c.body operator(public.<@>) public.to_bm25query($1, %L)
                limit $4 * 10
            ) x
            where pg_catalog.strpos(pg_catalog.lower(x.body), pg_catalog.lower($1)) > 0
            order by x.score desc
            limit $4 $q$, bm25, chunks, visible, bm25);
    when 'lexical' then  -- $1: the query
        return format($q$
            select c.id as chunk_id, -(c.body operator(public.<@>) public.to_bm25query($1, %L)) as score,
                   c.charged_subjects as charged
            from exo_private.%I c
            where %s and c.body operator(public.<@>) public.to_bm25query($1, %L) < 0
            order by c.body operator(public.<@>) public.to_bm25query($1, %L)
            limit $4 $q$, bm25, chunks, visible, bm25, bm25);
    when 'entity' then  -- $1: entity ids; the chunks that name them, newest first
        return format($q$
            select c.id as chunk_id, 1.0::float8 as score, c.charged_subjects as charged,
                   min(e.name) as detail
            from exo_private.entities e
            cross join lateral (
                select m.chunk_id from exo_private.mentions m
                where m.entity_id = e.id and m.chunk_id is not null and m.origin = 'model'
                order by m.chunk_id desc limit %s
            ) m
            join exo_private.%I c on c.id = m.chunk_id
            where e.id = any ($1) and %s
            group by c.id, c.charged_subjects
            order by count(distinct e.id) desc, max(c.written_at) desc nulls last, c.id
            limit $4 $q$, per_entity, chunks, visible);
    when 'document' then  -- $1: title keys, $5: file names or stems; a matched document's first chunks
        -- Not a conversation's: its title names a person more often than not, and its first
        -- windows, its oldest messages, answer nothing by being first.
        return format($q$
            select c.id as chunk_id, 1.0::float8 as score, c.charged_subjects as charged, d.path as detail
            from exo_private.documents d
            cross join lateral (
                select c.id, c.charged_subjects from exo_private.%I c
                where c.document_id = d.id and %s
                order by c.ordinal limit 2
            ) c
            where d.workspace = %L and d.conversation_id is null
              and (d.title_key = any ($1) or d.file_name = any ($5) or d.file_stem = any ($5))
            order by d.written_at desc nulls last, d.id
            limit $4 $q$, chunks, visible, workspace);
    when 'graph' then  -- $1: entity ids, $5: depth, $6: neighbours per node
        return format($q$
            select c.id as chunk_id, (1.0 / (1 + min(n.depth)))::float8 as score, c.charged_subjects as charged,
                   string_agg(distinct n.name, ', ') as detail
            from unnest($1::bigint[]) s (entity_id)
            cross join lateral exo_private.related_entities(s.entity_id, $5, $6) n
            cross join lateral (
                select m.chunk_id from exo_private.mentions m
                where m.entity_id = n.entity_id and m.chunk_id is not null and m.origin = 'model'
                order by m.chunk_id desc limit %s
            ) m
            join exo_private.%I c on c.id = m.chunk_id
            where %s and n.entity_id <> all ($1)
            group by c.id, c.charged_subjects
            order by min(n.depth), count(distinct n.entity_id) desc, max(c.written_at) desc nulls last, c.id
            limit $4 $q$, per_entity / 10, chunks, visible);
    when 'semantic' then  -- $1: the query vector as text; cosine similarity over the model's HNSW index
        if model_id is null or dimensions is null then
            raise exception 'the semantic stage needs an embedding model and its dimensions';
        end if;
        -- Written as embedding::vector(N) with model_id = N so the partial HNSW index matches.
        return format($q$
            select x.chunk_id, x.score, x.charged from (
                select c.id as chunk_id,
                       (1 - (e.embedding::public.vector(%s) operator(public.<=>) $1::public.vector(%s)))::float8 as score,
                       c.charged_subjects as charged
                from exo_private.%I e
                join exo_private.%I c on c.workspace = e.workspace and c.id = e.chunk_id
                where e.model_id = %s and %s
                order by e.embedding::public.vector(%s) operator(public.<=>) $1::public.vector(%s)
                limit $4
            ) x
            order by x.score desc $q$,
            dimensions, dimensions, 'chunk_embeddings_' || workspace, chunks, model_id, visible,
            dimensions, dimensions);
    when 'participant' then  -- $1: the query vector as text, $5: name keys of the query's words
        -- The chat windows of the people the question names (by full name or first name), by
        -- similarity to it: "Where does Priya live now?" names whose conversation to look in,
        -- while its answer ("Officially a Porto resident") shares no word with it. The owner takes
        -- part in every window, so naming the owner narrows nothing and is left out.
        if model_id is null or dimensions is null then
            raise exception 'the participant stage needs an embedding model and its dimensions';
        end if;
        return format($q$
            with named as materialized (
                select e.id from exo_private.entities e
                where e.workspace = %L and e.type = 'Person'
                  and (e.canonical_key = any ($5) or pg_catalog.split_part(e.canonical_key, ' ', 1) = any ($5))
                  and e.canonical_key is distinct from
                      (select p.entity_key from exo_private.people p where p.is_owner)
            ), windows as materialized (
                select distinct m.chunk_id from exo_private.mentions m
                where m.entity_id in (select n.id from named n) and m.origin = 'structure'
                  and m.chunk_id is not null
            )
            select x.chunk_id, x.score, x.charged from (
                select c.id as chunk_id,
                       (1 - (e.embedding::public.vector(%s) operator(public.<=>) $1::public.vector(%s)))::float8 as score,
                       c.charged_subjects as charged
                from windows w
                join exo_private.%I c on c.workspace = %L and c.id = w.chunk_id
                join exo_private.%I e on e.workspace = c.workspace and e.chunk_id = c.id and e.model_id = %s
                where %s
                order by score desc, c.id desc
                limit $4
            ) x
            order by x.score desc $q$,
            workspace, dimensions, dimensions, chunks, workspace, 'chunk_embeddings_' || workspace, model_id,
            visible);
    else
        raise exception 'unknown retrieval stage %', left(stage, 100)
            using hint = 'one of identifier, lexical, entity, document, graph, semantic, participant';
    end case;
end
$_$;

ALTER FUNCTION exo_private.stage_sql(stage text, workspace text, model_id integer, dimensions integer) OWNER TO exo_owner;

--
-- Name: FUNCTION stage_sql(stage text, workspace text, model_id integer, dimensions integer); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.stage_sql(stage text, workspace text, model_id integer, dimensions integer) IS 'The SQL one retrieval stage runs in one workspace''s partitions (identifier, lexical, entity, document, graph, semantic, participant): $2 the open bands, the present ones or all (a chunk''s band as of $3, exo_private.band_as_of: the stored one when $3 is today or later), $3 the as_of day (nothing written after it), $4 the limit; prepared and cached by exo_private.retrieve, and explained by bench/search_latency.py.';

--
-- Name: stop_runaway_readers(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.stop_runaway_readers() RETURNS TABLE(pid integer, action text, state text, seconds integer)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with limits as (
        select (select s.value::text::numeric from exo_private.settings s
                where s.key = 'reader.max_statement_s') as statement_s,
               (select s.value::text::numeric from exo_private.settings s
                where s.key = 'reader.max_idle_in_transaction_s') as idle_s
    ), runaway as materialized (  -- decided before anything is signalled
        select a.pid, a.state,
               case when a.state = 'active' then 'cancel' else 'terminate' end as action,
               extract(epoch from pg_catalog.now()
                   - case when a.state = 'active' then a.query_start else a.state_change end)::int as seconds
        from pg_catalog.pg_stat_activity a, limits l
        where a.usename = 'exo_reader'
          and a.pid <> pg_catalog.pg_backend_pid()
          and ((a.state = 'active'
                and a.query_start < pg_catalog.now() - pg_catalog.make_interval(secs => l.statement_s))
            or (a.state like 'idle in transaction%'
                and a.state_change < pg_catalog.now() - pg_catalog.make_interval(secs => l.idle_s)))
    )
    select r.pid, r.action, r.state, r.seconds
    from runaway r
    cross join lateral (select case r.action when 'cancel' then pg_catalog.pg_cancel_backend(r.pid)
                                             else pg_catalog.pg_terminate_backend(r.pid) end as sent) s
    where s.sent
$$;

ALTER FUNCTION exo_private.stop_runaway_readers() OWNER TO exo_owner;

--
-- Name: FUNCTION stop_runaway_readers(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.stop_runaway_readers() IS 'Cancel every exo_reader statement running longer than reader.max_statement_s and end every exo_reader session idle in a transaction longer than reader.max_idle_in_transaction_s, in any database of the server; returns what it signalled (pid, action, state, seconds). Run every 10 s by pg_cron (job exo-reader-watchdog).';

--
-- Name: store_embeddings(text, integer, bigint[], text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'public', 'pg_temp'
    AS $$
declare
    model int := exo_private.embedding_model_id(p_model, p_dimensions);
    stored int;
begin
    if cardinality(p_chunk_ids) <> cardinality(p_vectors) then
        raise exception '% chunk ids but % vectors', cardinality(p_chunk_ids), cardinality(p_vectors);
    end if;
    if exists (select 1 from unnest(p_vectors) v where vector_dims(v::vector) <> p_dimensions) then
        raise exception 'a vector does not have the % dimensions model % records', p_dimensions, p_model;
    end if;
    -- Chunks re-made since the job was queued are gone; their vectors are dropped.
    insert into exo_private.chunk_embeddings (workspace, chunk_id, model_id, embedding)
    select c.workspace, c.id, model, v.vec::vector
    from unnest(p_chunk_ids, p_vectors) as v (chunk_id, vec)
    join exo_private.chunks c on c.id = v.chunk_id
    on conflict (workspace, model_id, chunk_id) do update set embedding = excluded.embedding, created_at = now();
    get diagnostics stored = row_count;
    perform exo_private.advance_stages(array(
        select distinct c.document_id from exo_private.chunks c where c.id = any (p_chunk_ids)));
    return stored;
end
$$;

ALTER FUNCTION exo_private.store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]) IS 'Store vectors of one model for chunks (dimensions checked); returns how many were stored.';

--
-- Name: store_ocr_text(text, text, jsonb); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb) RETURNS TABLE(document_id bigint, path text, metadata jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
    if p_body is null or btrim(p_body) = '' then
        perform exo_private.invalid_argument('p_body: OCR text must not be empty');
    end if;
    update exo_private.text_cache t
       set body = p_body, needs_ocr = false, extracted_at = now(),
           metadata = t.metadata || jsonb_build_object('ocr', coalesce(p_ocr, '{}'))
     where t.sha256 = p_sha256;
    if not found then
        perform exo_private.invalid_argument(
            format('p_sha256: no cached text for sha256 %s', exo_private.quoted(p_sha256)));
    end if;
    -- Locked, so that another reader of the same content cannot continue them twice.
    return query
        select d.id, d.path, t.metadata
        from exo_private.documents d
        join exo_private.text_cache t on t.sha256 = d.sha256
        where d.sha256 = p_sha256 and d.stage = 'ocr_pending'
        order by d.id
        for update of d;
end
$$;

ALTER FUNCTION exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb) OWNER TO exo_owner;

--
-- Name: FUNCTION store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb) IS 'Store the text OCR read for content p_sha256 in the text cache (needs_ocr off, p_ocr kept as metadata.ocr) and return the documents of that content waiting at ocr_pending, locked, with the cached metadata: the caller continues each (routing, banding, chunking).';

--
-- Name: train_router(boolean, double precision); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.train_router(force boolean DEFAULT false, min_change double precision DEFAULT 0) RETURNS jsonb
    LANGUAGE plpython3u
    SET search_path TO 'exo_private', 'pg_temp'
    AS $_$
"""Route a document to a workspace, with a confidence (stdlib only).

Authority order: a person's review (quarantine approve/reassign), frontmatter
`workspace`, a workspace forced for the whole source (`exo ingest --workspace`),
folder rules, then the content. The content is judged by the learned router (a
multinomial naive Bayes over words, trained on the documents already in the
workspaces) once at least two workspaces have enough documents, and by the keyword
lists before that. Either's confidence gates quarantine: the learned router's
confidence is its posterior, and below its threshold the document waits in
quarantine (the keyword lists are not asked then).

The router learns only from decisions it did not make itself: frontmatter, a
forced workspace, a folder rule, a person's review and a confident keyword route
train it; a learned route never does (sql/105_routing.sql, router_training), so
its mistakes cannot feed on themselves.
"""

import json
import math
import re
from collections import Counter

_WORD = re.compile(r"[a-z][a-z0-9']*")
MIN_HITS = 3

def _decision(workspace, method, confidence, reasons, candidates=()):
    return {
        "workspace": workspace,
        "method": method,
        "confidence": round(confidence, 3),
        "reasons": list(reasons),
        "candidates": list(candidates),
    }

def classify(text, keywords):
    """Candidates [{workspace, score, hits}] by distinct keyword hits, best first."""
    counts = {}
    for word in _WORD.findall(text.lower()):
        counts[word] = counts.get(word, 0) + 1
    candidates = []
    for workspace, words in sorted(keywords.items()):
        hits = sorted({w for w in words if w in counts})
        score = sum(1.0 + min(counts[w], 5) / 5.0 for w in hits)
        candidates.append({"workspace": workspace, "score": round(score, 3), "hits": hits})
    candidates.sort(key=lambda c: (-c["score"], c["workspace"]))
    return candidates

def router_terms(text, max_chars, term_cap):
    """A document's words as the learned router counts them: its first max_chars characters,
    lowercased, each word at most term_cap times (a long document cannot outvote the rest)."""
    counts = Counter(_WORD.findall(text[:max_chars].lower()))
    return {word: min(n, term_cap) for word, n in counts.items()}

def train_router(documents, vocabulary_size, max_chars, term_cap):
    """Naive Bayes counts from (workspace, text) pairs: {"classes": {workspace: {documents,
    terms}}, "terms": {term: {workspace: count}}}. The vocabulary is the vocabulary_size words
    found in most documents (at least two), so the model stays small."""
    document_frequency = Counter()
    per_workspace = {}
    documents_of = Counter()
    for workspace, text in documents:
        counts = router_terms(text, max_chars, term_cap)
        document_frequency.update(counts.keys())
        per_workspace.setdefault(workspace, Counter()).update(counts)
        documents_of[workspace] += 1
    ranked = sorted(
        (w for w, n in document_frequency.items() if n >= 2), key=lambda w: (-document_frequency[w], w)
    )
    vocabulary = ranked[:vocabulary_size]
    terms = {}
    for word in vocabulary:
        terms[word] = {ws: counts[word] for ws, counts in sorted(per_workspace.items()) if counts[word]}
    classes = {
        ws: {"documents": documents_of[ws], "terms": sum(counts[w] for w in vocabulary)}
        for ws, counts in sorted(per_workspace.items())
    }
    return {"classes": classes, "terms": terms}

def learned_candidates(text, model, workspaces):
    """Candidates [{workspace, score (the posterior), hits}] by the learned model, best first;
    None while fewer than two workspaces have model["min_documents"] documents to learn from."""
    classes = {
        ws: c
        for ws, c in model["classes"].items()
        if ws in workspaces and c["documents"] >= model["min_documents"]
    }
    if len(classes) < 2:
        return None
    terms = model["terms"]
    size = len(terms)
    counts = {
        w: n for w, n in router_terms(text, model["max_chars"], model["term_cap"]).items() if w in terms
    }
    total_documents = sum(c["documents"] for c in classes.values())
    scores = {}
    weights = {}
    for ws, c in classes.items():
        denominator = math.log(c["terms"] + size)
        weights[ws] = {w: math.log(terms[w].get(ws, 0) + 1) - denominator for w in counts}
        scores[ws] = math.log(c["documents"] / total_documents) + sum(
            n * weights[ws][w] for w, n in counts.items()
        )
    top = max(scores.values())
    exp = {ws: math.exp(s - top) for ws, s in scores.items()}
    norm = sum(exp.values())
    ranked = sorted(classes, key=lambda ws: (-scores[ws], ws))
    candidates = []
    for i, ws in enumerate(ranked):
        # The words that speak most for this workspace over the next best one (or the best).
        other = ranked[1] if i == 0 else ranked[0]
        lift = {w: n * (weights[ws][w] - weights[other][w]) for w, n in counts.items()}
        hits = sorted((w for w in lift if lift[w] > 0), key=lambda w: (-lift[w], w))[:8]
        candidates.append({"workspace": ws, "score": exp[ws] / norm, "hits": hits})
    return candidates

def load_router(plpy, SD):
    """The learned model as trained last (exo_private.train_router), cached in SD by its
    generation; None before the first training."""
    state = plpy.execute(
        "select generation, max_chars, term_cap from exo_private.router_state where generation is not null"
    )
    if not state:
        return None
    generation = state[0]["generation"]
    cached = SD.get("router")
    if cached is not None and cached["generation"] == generation:
        return cached
    classes = {
        r["workspace"]: {"documents": r["documents"], "terms": r["terms"]}
        for r in plpy.execute("select workspace, documents, terms from exo_private.router_classes")
    }
    terms = {}
    for r in plpy.execute("select term, workspace, count from exo_private.router_terms"):
        terms.setdefault(r["term"], {})[r["workspace"]] = r["count"]
    SD["router"] = {
        "generation": generation,
        "max_chars": state[0]["max_chars"],
        "term_cap": state[0]["term_cap"],
        "classes": classes,
        "terms": terms,
    }
    return SD["router"]

def _training_settings(plpy):
    rows = plpy.execute(
        "select key, value::text as value from exo_private.settings "
        "where key in ('routing.learned_vocabulary', 'routing.learned_max_chars', 'routing.learned_term_cap')"
    )
    settings = {r["key"]: json.loads(r["value"]) for r in rows}
    for key in ("routing.learned_vocabulary", "routing.learned_max_chars", "routing.learned_term_cap"):
        value = settings.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError("setting " + key + " must be a positive whole number, not " + repr(value))
    return settings

def refresh_router(plpy, force, min_change):
    """Train the learned router again when its training set (exo_private.router_training) or
    its counting settings changed since the last training, or when force. With min_change,
    only when the number of training documents changed by at least that share (an ingest's
    start: edits and reassignments wait for the scheduled training). Returns {trained,
    generation, documents, workspaces, terms}."""
    settings = _training_settings(plpy)
    state = plpy.execute(
        "select generation, fingerprint, documents from exo_private.router_state for update"
    )[0]
    now = plpy.execute(
        plpy.prepare(
            "select md5(coalesce(string_agg(t.id || ':' || t.workspace || ':' || t.sha256, ',' order by t.id), '')"
            " || $1) as fingerprint, count(*) as documents from exo_private.router_training t",
            ["text"],
        ),
        [json.dumps(settings, sort_keys=True)],
    )[0]
    seen = now["fingerprint"]
    small = abs(now["documents"] - state["documents"]) < min_change * max(state["documents"], 1)
    if not force and state["generation"] is not None and (state["fingerprint"] == seen or small):
        counts = plpy.execute(
            "select (select count(*) from exo_private.router_classes) as workspaces, "
            "(select count(*) from exo_private.router_terms) as terms, "
            "(select documents from exo_private.router_state) as documents"
        )[0]
        return {"trained": False, "generation": state["generation"], **counts}
    max_chars = settings["routing.learned_max_chars"]
    cursor = plpy.cursor(
        plpy.prepare(
            "select t.workspace, left(c.body, $1) as body from exo_private.router_training t "
            "join exo_private.text_cache c on c.sha256 = t.sha256",
            ["int"],
        ),
        [max_chars],
    )

    def documents():
        while batch := cursor.fetch(500):
            for row in batch:
                yield row["workspace"], row["body"]

    model = train_router(
        documents(), settings["routing.learned_vocabulary"], max_chars, settings["routing.learned_term_cap"]
    )
    plpy.execute("delete from exo_private.router_terms")
    plpy.execute("delete from exo_private.router_classes")
    classes = sorted(model["classes"].items())
    plpy.execute(
        plpy.prepare(
            "insert into exo_private.router_classes (workspace, documents, terms) "
            "select * from unnest($1::text[], $2::int[], $3::bigint[])",
            ["text[]", "int[]", "bigint[]"],
        ),
        [[ws for ws, _ in classes], [c["documents"] for _, c in classes], [c["terms"] for _, c in classes]],
    )
    rows = [(term, ws, n) for term, by in model["terms"].items() for ws, n in by.items()]
    plpy.execute(
        plpy.prepare(
            "insert into exo_private.router_terms (term, workspace, count) "
            "select * from unnest($1::text[], $2::text[], $3::int[])",
            ["text[]", "text[]", "int[]"],
        ),
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
    )
    documents_trained = sum(c["documents"] for _, c in classes)
    generation = plpy.execute(
        plpy.prepare(
            "update exo_private.router_state set generation = coalesce(generation, 0) + 1, fingerprint = $1, "
            "documents = $2, max_chars = $3, term_cap = $4, trained_at = now() returning generation",
            ["text", "int", "int", "int"],
        ),
        [seen, documents_trained, max_chars, settings["routing.learned_term_cap"]],
    )[0]["generation"]
    return {
        "trained": True,
        "generation": generation,
        "documents": documents_trained,
        "workspaces": len(classes),
        "terms": len(model["terms"]),
    }

def route(path, text, frontmatter, review, forced, workspaces, folder_rules, keywords, threshold, model=None):
    """The routing decision; workspace None means quarantine. model: the learned router
    (load_router) with its "threshold" and "min_documents" settings, or None."""
    reasons = []
    if review and review.get("workspace") in workspaces:
        return _decision(review["workspace"], "review", 1.0, ["quarantine review: " + review["decision"]])
    declared = frontmatter.get("workspace")
    if declared is not None:
        declared = str(declared).strip().lower()
        if declared in workspaces:
            return _decision(declared, "frontmatter", 1.0, ["frontmatter workspace: " + declared])
        reasons.append("frontmatter workspace '" + declared + "' does not exist")
    if forced in workspaces:
        return _decision(forced, "forced", 1.0, [*reasons, "ingested with --workspace " + forced])
    folders = [part.lower() for part in path.split("/")[:-1]]
    for rule in folder_rules:
        if rule.get("folder", "").lower() in folders and rule.get("workspace") in workspaces:
            return _decision(rule["workspace"], "folder", 1.0, [*reasons, "folder '" + rule["folder"] + "'"])
    learned = learned_candidates(text, model, workspaces) if model else None
    if learned is not None:
        best = learned[0]
        why = "learned: " + best["workspace"] + " (" + ", ".join(best["hits"]) + ")"
        shown = [{**c, "score": round(c["score"], 4)} for c in learned]
        if best["score"] < model["threshold"]:
            reasons.append(why + " below threshold " + str(model["threshold"]))
            return _decision(None, "learned", best["score"], reasons, shown)
        return _decision(best["workspace"], "learned", best["score"], [*reasons, why], shown)
    candidates = [c for c in classify(text, keywords) if c["workspace"] in workspaces]
    total = sum(c["score"] for c in candidates)
    if not candidates or candidates[0]["score"] == 0:
        return _decision(None, "classifier", 0.0, [*reasons, "no workspace keywords found"], candidates)
    best = candidates[0]
    # The winner's share of the evidence (+1 smoothing), scaled down while it rests
    # on fewer than MIN_HITS distinct words: two stray words are never confident.
    confidence = best["score"] / (total + 1.0) * min(1.0, len(best["hits"]) / MIN_HITS)
    why = "classifier: " + best["workspace"] + " (" + ", ".join(best["hits"][:8]) + ")"
    if confidence < threshold:
        reasons.append(why + " below threshold " + str(threshold))
        return _decision(None, "classifier", confidence, reasons, candidates)
    return _decision(best["workspace"], "classifier", confidence, [*reasons, why], candidates)
if min_change is None or not 0 <= min_change <= 1:
    raise plpy.spiexceptions.InvalidParameterValue("min_change must be between 0 and 1, not " + repr(min_change))
return json.dumps(refresh_router(plpy, force, min_change))
$_$;

ALTER FUNCTION exo_private.train_router(force boolean, min_change double precision) OWNER TO exo_owner;

--
-- Name: FUNCTION train_router(force boolean, min_change double precision); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.train_router(force boolean, min_change double precision) IS 'Count the words of each workspace''s training documents (router_training) into router_terms and router_classes when the training set or the routing.learned_* counting settings changed since the last training (or force); with min_change (a share, as an ingest passes routing.learned_retrain_share) only when the number of training documents changed by at least that share. Returns {trained, generation, documents, workspaces, terms}.';

--
-- Name: undefer_subject(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.undefer_subject(subject_name text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    delete from exo_private.deferred_subjects s where s.subject = subject_name;
    if not found then
        raise exception '% is not a deferred subject', subject_name;
    end if;
    return exo_private.remark_charged();
end
$$;

ALTER FUNCTION exo_private.undefer_subject(subject_name text) OWNER TO exo_owner;

--
-- Name: FUNCTION undefer_subject(subject_name text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.undefer_subject(subject_name text) IS 'Remove a deferred subject and re-mark all chunks and chat messages; returns chunks re-marked.';

--
-- Name: unreleased(text[], text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.unreleased(charged text[], released text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- Every charged subject counts, listed or only declared by frontmatter; one whose key
    -- cannot be computed stays closed (over-withholding is the safe direction).
    select case when charged is null or charged = '{}' then '{}'::text[]
                else coalesce((select array_agg(distinct s order by s) from unnest(charged) s
                               where (exo_private.canonical_key(s) = any (released)) is not true),
                              '{}') end
$$;

ALTER FUNCTION exo_private.unreleased(charged text[], released text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION unreleased(charged text[], released text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.unreleased(charged text[], released text[]) IS 'The subjects of charged (a chunk''s or a chat message''s charged_subjects) whose key is not among released (exo_private.released_keys): empty when the chunk or message may be shown.';

--
-- Name: window_conversation(bigint, text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.window_conversation(conversation bigint, workspace text DEFAULT NULL::text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
declare
    ws text;
    zone text;
    added int;
begin
    if conversation is null then
        perform exo_private.invalid_argument('conversation must not be null');
    end if;
    -- One windowing of a conversation at a time (two imports of the same export serialize).
    perform 1 from exo_private.chat_conversations c where c.id = conversation for update;
    if not found then
        perform exo_private.invalid_argument(
            format('conversation: no chat conversation has id %s', conversation));
    end if;
    ws := coalesce(window_conversation.workspace,
                   (select d.workspace from exo_private.documents d where d.conversation_id = conversation),
                   (select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.workspace'));
    if not exists (select 1 from exo_private.workspaces w where w.name = ws) then
        perform exo_private.invalid_argument(
            format('workspace: %s is not a workspace', exo_private.quoted(ws)),
            'the workspaces are ' || (select string_agg(w.name, ', ' order by w.name) from exo_private.workspaces w));
    end if;
    zone := (select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.time_zone');
    begin
        perform pg_catalog.timezone(zone, pg_catalog.now());
    exception when invalid_parameter_value or null_value_not_allowed then
        perform exo_private.invalid_argument(
            format('setting chat.time_zone: %s is not a time zone', exo_private.quoted(zone)),
            'name one of pg_timezone_names, e.g. UTC or Europe/Paris');
    end;
    added := exo_private.cut_windows(conversation, ws, zone);
    perform exo_private.link_participants(array[conversation]);
    return added;
end
$$;

ALTER FUNCTION exo_private.window_conversation(conversation bigint, workspace text) OWNER TO exo_owner;

--
-- Name: FUNCTION window_conversation(conversation bigint, workspace text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.window_conversation(conversation bigint, workspace text) IS 'Create or update the conversation document of a chat conversation (path chat/<source>/<id>) and its windows (exo_private.cut_windows) with their senders in the graph (exo_private.link_participants), in workspace (default: the document''s, else the setting chat.workspace; another one moves the windows there). Returns how many windows were added.';

--
-- Name: window_withheld(bigint, text[]); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.window_withheld(p_window bigint, released text[]) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    -- The name was in no single chunk of the window: every chunk the window overlaps counts.
    select coalesce(array_agg(distinct s order by s), '{}')
    from exo_private.extraction_windows w
    join exo_private.chunks c
      on c.workspace = w.workspace and c.document_id = w.document_id
     and c.char_start < w.char_end and c.char_end > w.char_start
     and c.charged_subjects <> '{}'
    cross join lateral unnest(exo_private.unreleased(c.charged_subjects, released)) s
    where w.id = p_window
$$;

ALTER FUNCTION exo_private.window_withheld(p_window bigint, released text[]) OWNER TO exo_owner;

--
-- Name: FUNCTION window_withheld(p_window bigint, released text[]); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.window_withheld(p_window bigint, released text[]) IS 'The closed charged subjects of the chunks an extraction window overlaps: what keeps a mention without a chunk out of an answer; empty when it may be shown.';

--
-- Name: work_status(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.work_status() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
    with settings as (
        select coalesce((select (s.value #>> '{}')::double precision from exo_private.settings s
                         where s.key = 'worker.dead_after_s'), 30) as dead_after_s
    ), work as materialized (
        select o.queue, o.target_id, o.document_id, o.state from exo_private.outstanding_work() o
    ), messages as (
        select n.queue, count(m.msg_id) as depth, min(m.enqueued_at) as oldest,
               count(*) filter (where m.state = 'pending') as pending,
               count(*) filter (where m.state in ('live', 'dead', 'unclaimed')) as in_flight,
               count(*) filter (where m.state = 'dead') as held_by_dead_workers
        from unnest(array['embed', 'extract', 'ocr']) n(queue)
        left join (select x.* from settings, exo_private.queue_messages(settings.dead_after_s) x) m
               on m.queue = n.queue
        group by n.queue
    ), stuck as (
        select w.document_id, w.state from work w where w.state in ('failed', 'dead', 'lost')
    )
    select jsonb_build_object(
        'queues', (
            select jsonb_object_agg(m.queue, jsonb_build_object(
                       'depth', m.depth,
                       'pending', m.pending,
                       'in_flight', m.in_flight,
                       'held_by_dead_workers', m.held_by_dead_workers,
                       'failed', (select count(*) from work w where w.queue = m.queue and w.state = 'failed'),
                       'dead', (select count(*) from pgmq.q_dead_letter d where d.message ->> 'queue' = m.queue),
                       'oldest_age_s', floor(extract(epoch from pg_catalog.now() - m.oldest))::bigint))
            from messages m
        ) || jsonb_build_object('dead_letter', (
            select jsonb_build_object(
                       'depth', count(*),
                       'oldest_age_s', floor(extract(epoch from pg_catalog.now() - min(d.enqueued_at)))::bigint)
            from pgmq.q_dead_letter d)),
        'work_by_stage', (
            select coalesce(jsonb_object_agg(s.stage, jsonb_build_object(
                       'documents', s.documents, 'pending', s.pending, 'in_flight', s.in_flight,
                       'failed', s.failed, 'dead', s.dead, 'lost', s.lost, 'stuck', s.stuck)
                       order by s.stage), '{}')
            from (select d.stage::text as stage,
                         count(distinct d.id) as documents,
                         count(distinct d.id) filter (where w.state = 'pending') as pending,
                         count(distinct d.id) filter (where w.state = 'in_flight') as in_flight,
                         count(distinct d.id) filter (where w.state = 'failed') as failed,
                         count(distinct d.id) filter (where w.state = 'dead') as dead,
                         count(distinct d.id) filter (where w.state = 'lost') as lost,
                         count(distinct d.id) filter (where w.state in ('failed', 'dead', 'lost')) as stuck
                  from work w
                  join exo_private.documents d on d.id = w.document_id
                  group by d.stage) s),
        'stuck', (
            select jsonb_build_object(
                       'documents', count(distinct s.document_id),
                       'failed', count(distinct s.document_id) filter (where s.state = 'failed'),
                       'dead', count(distinct s.document_id) filter (where s.state = 'dead'),
                       'lost', count(distinct s.document_id) filter (where s.state = 'lost'),
                       'hint', case when count(*) > 0 then format(
                           '%s document(s) cannot advance on their own: `exo worker retry-failed` '
                           'queues failed and lost work again, `exo worker requeue-dead` dead-lettered '
                           'work', count(distinct s.document_id)) end)
            from stuck s),
        'worker', (
            select jsonb_build_object(
                'last_heartbeat', max(k.heartbeat_at),
                'alive', coalesce(bool_or(k.stopped_at is null and k.heartbeat_at > pg_catalog.now()
                                          - pg_catalog.make_interval(secs => settings.dead_after_s)), false),
                'running', count(*) filter (where k.stopped_at is null and k.heartbeat_at > pg_catalog.now()
                                            - pg_catalog.make_interval(secs => settings.dead_after_s)),
                'dead', count(*) filter (where k.heartbeat_at > pg_catalog.now() - interval '1 day'
                                         and ((k.stopped_at is null and k.heartbeat_at <= pg_catalog.now()
                                               - pg_catalog.make_interval(secs => settings.dead_after_s))
                                              or k.stop_reason like 'dead:%')),
                'dead_after_s', settings.dead_after_s)
            from settings left join exo_private.workers k on true
            group by settings.dead_after_s)
    )
$$;

ALTER FUNCTION exo_private.work_status() OWNER TO exo_owner;

--
-- Name: FUNCTION work_status(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.work_status() IS 'The worker''s side of exo.status: queues (embed, extract, ocr: depth, pending = visible messages, in_flight, held_by_dead_workers, failed = chunks or windows whose job failed and was not retried, dead = their dead letters, oldest_age_s; dead_letter: depth, oldest_age_s), work_by_stage (per document stage: documents with work pending, in_flight, failed, dead, lost, stuck), stuck (documents that cannot advance on their own, by reason, and a hint naming the commands), worker (last_heartbeat, alive, running, dead in the last day, dead_after_s).';

--
-- Name: worker_queues(text); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.worker_queues(p_queue text DEFAULT NULL::text) RETURNS SETOF text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    if p_queue is not null then
        -- The ocr queue's failures end their documents (sql/160_ocr.sql): nothing to retry here.
        if p_queue not in ('embed', 'extract') then
            raise exception 'queue must be embed or extract, got %', quote_literal(p_queue)
                using errcode = 'invalid_parameter_value';
        end if;
        return next p_queue;
    else
        return query select unnest(array['embed', 'extract']);
    end if;
end
$$;

ALTER FUNCTION exo_private.worker_queues(p_queue text) OWNER TO exo_owner;

--
-- Name: FUNCTION worker_queues(p_queue text); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.worker_queues(p_queue text) IS 'The worker''s queues (embed, extract), or only p_queue when given; raises for an unknown queue.';

--
-- Name: workspace_created(); Type: FUNCTION; Schema: exo_private; Owner: exo_owner
--

CREATE FUNCTION exo_private.workspace_created() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'exo_private', 'pg_temp'
    AS $$
begin
    perform exo_private.ensure_workspace_graph(new.name);
    perform exo_private.ensure_workspace_storage(new.name);
    return new;
end
$$;

ALTER FUNCTION exo_private.workspace_created() OWNER TO exo_owner;

--
-- Name: FUNCTION workspace_created(); Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON FUNCTION exo_private.workspace_created() IS 'Trigger: a new workspace gets its AGE graph and its chunk partition.';

--
-- Name: _belongs_to_pgmq(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._belongs_to_pgmq(table_name text) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    sql TEXT;
    result BOOLEAN;
BEGIN
  SELECT EXISTS (
    SELECT 1
    FROM pg_depend
    WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmq')
    AND objid = (
        SELECT oid
        FROM pg_class
        WHERE relname = table_name
    )
  ) INTO result;
  RETURN result;
END;
$$;

ALTER FUNCTION pgmq._belongs_to_pgmq(table_name text) OWNER TO exo_owner;

--
-- Name: _create_fifo_index_if_not_exists(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._create_fifo_index_if_not_exists(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
    index_name TEXT := qtable || '_fifo_idx';
BEGIN
    -- Create GIN index on headers for efficient FIFO key lookups
    EXECUTE FORMAT(
        $QUERY$
        CREATE INDEX IF NOT EXISTS %I ON pgmq.%I USING GIN (headers);
        $QUERY$,
        index_name, qtable
    );
END;
$_$;

ALTER FUNCTION pgmq._create_fifo_index_if_not_exists(queue_name text) OWNER TO exo_owner;

--
-- Name: _ensure_pg_partman_installed(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._ensure_pg_partman_installed() RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NOT pgmq._extension_exists('pg_partman') THEN
    RAISE EXCEPTION 'pg_partman is required for partitioned queues';
  END IF;
END;
$$;

ALTER FUNCTION pgmq._ensure_pg_partman_installed() OWNER TO exo_owner;

--
-- Name: _extension_exists(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._extension_exists(extension_name text) RETURNS boolean
    LANGUAGE sql
    AS $$
SELECT EXISTS (
    SELECT 1
    FROM pg_extension
    WHERE extname = extension_name
)
$$;

ALTER FUNCTION pgmq._extension_exists(extension_name text) OWNER TO exo_owner;

--
-- Name: _get_partition_col(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._get_partition_col(partition_interval text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
  num INTEGER;
BEGIN
    BEGIN
        num := partition_interval::INTEGER;
        RETURN 'msg_id';
    EXCEPTION
        WHEN others THEN
            RETURN 'enqueued_at';
    END;
END;
$$;

ALTER FUNCTION pgmq._get_partition_col(partition_interval text) OWNER TO exo_owner;

--
-- Name: _get_pg_partman_major_version(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._get_pg_partman_major_version() RETURNS integer
    LANGUAGE sql
    AS $$
  SELECT split_part(extversion, '.', 1)::INT
  FROM pg_extension
  WHERE extname = 'pg_partman'
$$;

ALTER FUNCTION pgmq._get_pg_partman_major_version() OWNER TO exo_owner;

--
-- Name: _get_pg_partman_schema(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._get_pg_partman_schema() RETURNS text
    LANGUAGE sql
    AS $$
  SELECT
    extnamespace::regnamespace::text
  FROM
    pg_extension
  WHERE
    extname = 'pg_partman';
$$;

ALTER FUNCTION pgmq._get_pg_partman_schema() OWNER TO exo_owner;

--
-- Name: _send_batch(text, jsonb[], jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
            $QUERY$
        INSERT INTO pgmq.%I (vt, message, headers)
        SELECT $2, unnest($1), unnest(coalesce($3, ARRAY[]::jsonb[]))
        RETURNING msg_id;
        $QUERY$,
            qtable
           );
    RETURN QUERY EXECUTE sql USING msgs, delay, headers;
END;
$_$;

ALTER FUNCTION pgmq._send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: _validate_batch_params(jsonb[], jsonb[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Validate that msgs is not NULL or empty
    IF msgs IS NULL OR array_length(msgs, 1) IS NULL THEN
        RAISE EXCEPTION 'msgs cannot be NULL or empty';
    END IF;

    -- Validate that headers array length matches msgs array length if headers is provided
    -- Note: array_length returns NULL for empty arrays, so we use COALESCE to treat empty arrays as length 0
    IF headers IS NOT NULL AND COALESCE(array_length(headers, 1), 0) != COALESCE(array_length(msgs, 1), 0) THEN
        RAISE EXCEPTION 'headers array length (%) must match msgs array length (%)',
            COALESCE(array_length(headers, 1), 0), COALESCE(array_length(msgs, 1), 0);
    END IF;
END;
$$;

ALTER FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[]) OWNER TO exo_owner;

--
-- Name: acquire_queue_lock(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.acquire_queue_lock(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_' || queue_name));
END;
$$;

ALTER FUNCTION pgmq.acquire_queue_lock(queue_name text) OWNER TO exo_owner;

--
-- Name: archive(text, bigint[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
    atable TEXT := pgmq.format_table_name(queue_name, 'a');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH archived AS (
            DELETE FROM pgmq.%I
            WHERE msg_id = ANY($1)
            RETURNING msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers
        )
        INSERT INTO pgmq.%I (msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers)
        SELECT msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers
        FROM archived
        RETURNING msg_id;
        $QUERY$,
        qtable, atable
    );
    RETURN QUERY EXECUTE sql USING msg_ids;
END;
$_$;

ALTER FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) OWNER TO exo_owner;

--
-- Name: archive(text, bigint); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.archive(queue_name text, msg_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    result BIGINT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
    atable TEXT := pgmq.format_table_name(queue_name, 'a');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH archived AS (
            DELETE FROM pgmq.%I
            WHERE msg_id = $1
            RETURNING msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers
        )
        INSERT INTO pgmq.%I (msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers)
        SELECT msg_id, vt, read_ct, enqueued_at, last_read_at, message, headers
        FROM archived
        RETURNING msg_id;
        $QUERY$,
        qtable, atable
    );
    EXECUTE sql USING msg_id INTO result;
    RETURN NOT (result IS NULL);
END;
$_$;

ALTER FUNCTION pgmq.archive(queue_name text, msg_id bigint) OWNER TO exo_owner;

--
-- Name: bind_topic(text, text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.bind_topic(pattern text, queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pgmq.validate_topic_pattern(pattern);
    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue_name cannot be NULL or empty';
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pgmq.meta WHERE meta.queue_name = bind_topic.queue_name) THEN
        RAISE EXCEPTION 'Queue "%" does not exist. Create the queue first using pgmq.create()', queue_name;
    END IF;

    INSERT INTO pgmq.topic_bindings (pattern, queue_name)
    VALUES (pattern, queue_name)
    ON CONFLICT ON CONSTRAINT topic_bindings_unique_pattern_queue DO NOTHING;
END;
$$;

ALTER FUNCTION pgmq.bind_topic(pattern text, queue_name text) OWNER TO exo_owner;

--
-- Name: convert_archive_partitioned(text, text, text, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, leading_partition integer DEFAULT 10) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
  a_table_name TEXT := pgmq.format_table_name(table_name, 'a');
  a_table_name_old TEXT := pgmq.format_table_name(table_name, 'a') || '_old';
  qualified_a_table_name TEXT := format('pgmq.%I', a_table_name);
  partition_col TEXT;
  a_partition_col TEXT;
BEGIN

  PERFORM c.relkind
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relname = a_table_name
    AND c.relkind = 'p';

  IF FOUND THEN
    RAISE NOTICE 'Table %s is already partitioned', a_table_name;
    RETURN;
  END IF;

  PERFORM c.relkind
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relname = a_table_name
    AND c.relkind = 'r';

  IF NOT FOUND THEN
    RAISE NOTICE 'Table %s does not exists', a_table_name;
    RETURN;
  END IF;

  SELECT pgmq._get_partition_col(partition_interval) INTO partition_col;

  -- For archive tables, use archived_at for time-based partitioning
  IF partition_col = 'enqueued_at' THEN
    a_partition_col := 'archived_at';
  ELSE
    a_partition_col := partition_col;
  END IF;

  EXECUTE 'ALTER TABLE ' || qualified_a_table_name || ' RENAME TO ' || a_table_name_old;

  -- When partitioning by time (archived_at), we need to exclude constraints and indexes
  -- because the existing PRIMARY KEY on msg_id alone is incompatible with partitioning by archived_at.
  -- When partitioning by msg_id, we can keep all constraints including PRIMARY KEY.
  IF a_partition_col = 'archived_at' THEN
    EXECUTE format( 'CREATE TABLE pgmq.%I (LIKE pgmq.%I including defaults including generated including storage including comments) PARTITION BY RANGE (%I)', a_table_name, a_table_name_old, a_partition_col );
  ELSE
    EXECUTE format( 'CREATE TABLE pgmq.%I (LIKE pgmq.%I including all) PARTITION BY RANGE (%I)', a_table_name, a_table_name_old, a_partition_col );
  END IF;

  EXECUTE 'ALTER INDEX pgmq.archived_at_idx_' || table_name || ' RENAME TO archived_at_idx_' || table_name || '_old';
  EXECUTE 'CREATE INDEX archived_at_idx_'|| table_name || ' ON ' || qualified_a_table_name ||'(archived_at)';

  -- https://github.com/pgpartman/pg_partman/blob/master/doc/pg_partman.md
  -- p_parent_table - the existing parent table. MUST be schema qualified, even if in public schema.
  EXECUTE FORMAT(
    $QUERY$
    SELECT %I.create_parent(
      p_parent_table := %L,
      p_control := %L,
      p_interval := %L,
      p_type := case
        when pgmq._get_pg_partman_major_version() = 5 then 'range'
        else 'native'
      end
    )
    $QUERY$,
    pgmq._get_pg_partman_schema(),
    qualified_a_table_name,
    a_partition_col,
    partition_interval
  );

  EXECUTE FORMAT(
    $QUERY$
    UPDATE %I.part_config
    SET
      retention = %L,
      retention_keep_table = false,
      retention_keep_index = false,
      infinite_time_partitions = true
    WHERE
      parent_table = %L;
    $QUERY$,
    pgmq._get_pg_partman_schema(),
    retention_interval,
    qualified_a_table_name
  );
END;
$_$;

ALTER FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) OWNER TO exo_owner;

--
-- Name: create(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq."create"(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pgmq.create_non_partitioned(queue_name);
END;
$$;

ALTER FUNCTION pgmq."create"(queue_name text) OWNER TO exo_owner;

--
-- Name: create_fifo_index(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.create_fifo_index(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pgmq._create_fifo_index_if_not_exists(queue_name);
END;
$$;

ALTER FUNCTION pgmq.create_fifo_index(queue_name text) OWNER TO exo_owner;

--
-- Name: create_fifo_indexes_all(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.create_fifo_indexes_all() RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    queue_record RECORD;
BEGIN
    FOR queue_record IN SELECT queue_name FROM pgmq.meta LOOP
        PERFORM pgmq.create_fifo_index(queue_record.queue_name);
    END LOOP;
END;
$$;

ALTER FUNCTION pgmq.create_fifo_indexes_all() OWNER TO exo_owner;

--
-- Name: create_non_partitioned(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.create_non_partitioned(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
  qtable TEXT := pgmq.format_table_name(queue_name, 'q');
  qtable_seq TEXT := qtable || '_msg_id_seq';
  atable TEXT := pgmq.format_table_name(queue_name, 'a');
BEGIN
  PERFORM pgmq.validate_queue_name(queue_name);
  PERFORM pgmq.acquire_queue_lock(queue_name);

  EXECUTE FORMAT(
    $QUERY$
    CREATE TABLE IF NOT EXISTS pgmq.%I (
        msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
        read_ct INT DEFAULT 0 NOT NULL,
        enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
        last_read_at TIMESTAMP WITH TIME ZONE,
        vt TIMESTAMP WITH TIME ZONE NOT NULL,
        message JSONB,
        headers JSONB
    )
    $QUERY$,
    qtable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE TABLE IF NOT EXISTS pgmq.%I (
      msg_id BIGINT PRIMARY KEY,
      read_ct INT DEFAULT 0 NOT NULL,
      enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
      last_read_at TIMESTAMP WITH TIME ZONE,
      archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
      vt TIMESTAMP WITH TIME ZONE NOT NULL,
      message JSONB,
      headers JSONB
    );
    $QUERY$,
    atable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (vt ASC);
    $QUERY$,
    qtable || '_vt_idx', qtable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at);
    $QUERY$,
    'archived_at_idx_' || queue_name, atable
  );

  EXECUTE FORMAT(
    $QUERY$
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (%L, false, false)
    ON CONFLICT
    DO NOTHING;
    $QUERY$,
    queue_name
  );

END;
$_$;

ALTER FUNCTION pgmq.create_non_partitioned(queue_name text) OWNER TO exo_owner;

--
-- Name: create_partitioned(text, text, text, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, premake integer DEFAULT 4) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
  partition_col TEXT;
  a_partition_col TEXT;
  qtable TEXT := pgmq.format_table_name(queue_name, 'q');
  qtable_seq TEXT := qtable || '_msg_id_seq';
  atable TEXT := pgmq.format_table_name(queue_name, 'a');
  fq_qtable TEXT := 'pgmq.' || qtable;
  fq_atable TEXT := 'pgmq.' || atable;
BEGIN
  PERFORM pgmq.validate_queue_name(queue_name);
  PERFORM pgmq.acquire_queue_lock(queue_name);
  PERFORM pgmq._ensure_pg_partman_installed();
  IF premake < 1 THEN
    RAISE EXCEPTION 'premake must be at least 1, got %', premake;
  END IF;
  SELECT pgmq._get_partition_col(partition_interval) INTO partition_col;

  EXECUTE FORMAT(
    $QUERY$
    CREATE TABLE IF NOT EXISTS pgmq.%I (
        msg_id BIGINT GENERATED BY DEFAULT AS IDENTITY,
        read_ct INT DEFAULT 0 NOT NULL,
        enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
        last_read_at TIMESTAMP WITH TIME ZONE,
        vt TIMESTAMP WITH TIME ZONE NOT NULL,
        message JSONB,
        headers JSONB
    ) PARTITION BY RANGE (%I)
    $QUERY$,
    qtable, partition_col
  );

  -- https://github.com/pgpartman/pg_partman/blob/master/doc/pg_partman.md
  -- p_parent_table - the existing parent table. MUST be schema qualified, even if in public schema.
  EXECUTE FORMAT(
    $QUERY$
    SELECT %I.create_parent(
      p_parent_table := %L,
      p_control := %L,
      p_interval := %L,
      p_premake := %s,
      p_type := case
        when pgmq._get_pg_partman_major_version() = 5 then 'range'
        else 'native'
      end
    )
    $QUERY$,
    pgmq._get_pg_partman_schema(),
    fq_qtable,
    partition_col,
    partition_interval,
    premake
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (%I);
    $QUERY$,
    qtable || '_part_idx', qtable, partition_col
  );

  EXECUTE FORMAT(
    $QUERY$
    UPDATE %I.part_config
    SET
        retention = %L,
        retention_keep_table = false,
        retention_keep_index = true,
        automatic_maintenance = 'on'
    WHERE parent_table = %L;
    $QUERY$,
    pgmq._get_pg_partman_schema(),
    retention_interval,
    'pgmq.' || qtable
  );

  EXECUTE FORMAT(
    $QUERY$
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (%L, true, false)
    ON CONFLICT
    DO NOTHING;
    $QUERY$,
    queue_name
  );

  IF partition_col = 'enqueued_at' THEN
    a_partition_col := 'archived_at';
  ELSE
    a_partition_col := partition_col;
  END IF;

  EXECUTE FORMAT(
    $QUERY$
    CREATE TABLE IF NOT EXISTS pgmq.%I (
      msg_id BIGINT NOT NULL,
      read_ct INT DEFAULT 0 NOT NULL,
      enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
      last_read_at TIMESTAMP WITH TIME ZONE,
      archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
      vt TIMESTAMP WITH TIME ZONE NOT NULL,
      message JSONB,
      headers JSONB
    ) PARTITION BY RANGE (%I);
    $QUERY$,
    atable, a_partition_col
  );

  -- https://github.com/pgpartman/pg_partman/blob/master/doc/pg_partman.md
  -- p_parent_table - the existing parent table. MUST be schema qualified, even if in public schema.
  EXECUTE FORMAT(
    $QUERY$
    SELECT %I.create_parent(
      p_parent_table := %L,
      p_control := %L,
      p_interval := %L,
      p_premake := %s,
      p_type := case
        when pgmq._get_pg_partman_major_version() = 5 then 'range'
        else 'native'
      end
    )
    $QUERY$,
    pgmq._get_pg_partman_schema(),
    fq_atable,
    a_partition_col,
    partition_interval,
    premake
  );

  EXECUTE FORMAT(
    $QUERY$
    UPDATE %I.part_config
    SET
        retention = %L,
        retention_keep_table = false,
        retention_keep_index = true,
        automatic_maintenance = 'on'
    WHERE parent_table = %L;
    $QUERY$,
    pgmq._get_pg_partman_schema(),
    retention_interval,
    'pgmq.' || atable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at);
    $QUERY$,
    'archived_at_idx_' || queue_name, atable
  );

END;
$_$;

ALTER FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text, retention_interval text, premake integer) OWNER TO exo_owner;

--
-- Name: create_unlogged(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.create_unlogged(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
  qtable TEXT := pgmq.format_table_name(queue_name, 'q');
  qtable_seq TEXT := qtable || '_msg_id_seq';
  atable TEXT := pgmq.format_table_name(queue_name, 'a');
BEGIN
  PERFORM pgmq.validate_queue_name(queue_name);
  PERFORM pgmq.acquire_queue_lock(queue_name);

  EXECUTE FORMAT(
    $QUERY$
    CREATE UNLOGGED TABLE IF NOT EXISTS pgmq.%I (
        msg_id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
        read_ct INT DEFAULT 0 NOT NULL,
        enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
        last_read_at TIMESTAMP WITH TIME ZONE,
        vt TIMESTAMP WITH TIME ZONE NOT NULL,
        message JSONB,
        headers JSONB
    )
    $QUERY$,
    qtable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE TABLE IF NOT EXISTS pgmq.%I (
      msg_id BIGINT PRIMARY KEY,
      read_ct INT DEFAULT 0 NOT NULL,
      enqueued_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
      last_read_at TIMESTAMP WITH TIME ZONE,
      archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
      vt TIMESTAMP WITH TIME ZONE NOT NULL,
      message JSONB,
      headers JSONB
    );
    $QUERY$,
    atable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (vt ASC);
    $QUERY$,
    qtable || '_vt_idx', qtable
  );

  EXECUTE FORMAT(
    $QUERY$
    CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at);
    $QUERY$,
    'archived_at_idx_' || queue_name, atable
  );

  EXECUTE FORMAT(
    $QUERY$
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (%L, false, true)
    ON CONFLICT
    DO NOTHING;
    $QUERY$,
    queue_name
  );
END;
$_$;

ALTER FUNCTION pgmq.create_unlogged(queue_name text) OWNER TO exo_owner;

--
-- Name: delete(text, bigint[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        DELETE FROM pgmq.%I
        WHERE msg_id = ANY($1)
        RETURNING msg_id
        $QUERY$,
        qtable
    );
    RETURN QUERY EXECUTE sql USING msg_ids;
END;
$_$;

ALTER FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) OWNER TO exo_owner;

--
-- Name: delete(text, bigint); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.delete(queue_name text, msg_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    result BIGINT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        DELETE FROM pgmq.%I
        WHERE msg_id = $1
        RETURNING msg_id
        $QUERY$,
        qtable
    );
    EXECUTE sql USING msg_id INTO result;
    RETURN NOT (result IS NULL);
END;
$_$;

ALTER FUNCTION pgmq.delete(queue_name text, msg_id bigint) OWNER TO exo_owner;

--
-- Name: detach_archive(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.detach_archive(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
  atable TEXT := pgmq.format_table_name(queue_name, 'a');
BEGIN
  RAISE WARNING 'detach_archive(queue_name) is deprecated and is a no-op. It will be removed in PGMQ v2.0. Archive tables are no longer member objects.';
END
$$;

ALTER FUNCTION pgmq.detach_archive(queue_name text) OWNER TO exo_owner;

--
-- Name: disable_notify_insert(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.disable_notify_insert(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
  qtable TEXT := pgmq.format_table_name(queue_name, 'q');
  v_queue_name TEXT := queue_name;
BEGIN
  EXECUTE FORMAT(
    $QUERY$
    DROP TRIGGER IF EXISTS trigger_notify_queue_insert_listeners ON pgmq.%I;
    $QUERY$,
    qtable
  );

  DELETE FROM pgmq.notify_insert_throttle nit WHERE nit.queue_name = v_queue_name;
END;
$_$;

ALTER FUNCTION pgmq.disable_notify_insert(queue_name text) OWNER TO exo_owner;

--
-- Name: drop_queue(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.drop_queue(queue_name text) RETURNS boolean
    LANGUAGE plpgsql
    AS $_$
DECLARE
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
    qtable_seq TEXT := qtable || '_msg_id_seq';
    fq_qtable TEXT := 'pgmq.' || qtable;
    atable TEXT := pgmq.format_table_name(queue_name, 'a');
    fq_atable TEXT := 'pgmq.' || atable;
    partitioned BOOLEAN;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    EXECUTE FORMAT(
        $QUERY$
        SELECT is_partitioned FROM pgmq.meta WHERE queue_name = %L
        $QUERY$,
        queue_name
    ) INTO partitioned;

    -- check if the queue exists
    IF NOT EXISTS (
        SELECT 1
        FROM information_schema.tables
        WHERE table_name = qtable and table_schema = 'pgmq'
    ) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN FALSE;
    END IF;

    EXECUTE FORMAT(
        $QUERY$
        DROP TABLE IF EXISTS pgmq.%I
        $QUERY$,
        qtable
    );

    EXECUTE FORMAT(
        $QUERY$
        DROP TABLE IF EXISTS pgmq.%I
        $QUERY$,
        atable
    );

     IF EXISTS (
          SELECT 1
          FROM information_schema.tables
          WHERE table_name = 'meta' and table_schema = 'pgmq'
     ) THEN
        EXECUTE FORMAT(
            $QUERY$
            DELETE FROM pgmq.meta WHERE queue_name = %L
            $QUERY$,
            queue_name
        );
     END IF;

     IF partitioned THEN
        EXECUTE FORMAT(
          $QUERY$
          DELETE FROM %I.part_config where parent_table in (%L, %L)
          $QUERY$,
          pgmq._get_pg_partman_schema(), fq_qtable, fq_atable
        );
     END IF;

    RETURN TRUE;
END;
$_$;

ALTER FUNCTION pgmq.drop_queue(queue_name text) OWNER TO exo_owner;

--
-- Name: drop_queue(text, boolean); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
    fq_qtable TEXT := 'pgmq.' || qtable;
    atable TEXT := pgmq.format_table_name(queue_name, 'a');
    fq_atable TEXT := 'pgmq.' || atable;
BEGIN
    RAISE WARNING 'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. Use drop_queue(queue_name) instead';

    PERFORM pgmq.drop_queue(queue_name);

    RETURN TRUE;
END;
$$;

ALTER FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) OWNER TO exo_owner;

--
-- Name: enable_notify_insert(text, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer DEFAULT 250) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
  qtable TEXT := pgmq.format_table_name(queue_name, 'q');
  v_queue_name TEXT := queue_name;
  v_throttle_interval_ms INTEGER := throttle_interval_ms;
BEGIN
  -- Validate that throttle_interval_ms is non-negative
  IF v_throttle_interval_ms < 0 THEN
    RAISE EXCEPTION 'throttle_interval_ms must be non-negative';
  END IF;

  -- Validate that the queue table exists
  IF NOT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = 'pgmq' AND table_name = qtable) THEN
    RAISE EXCEPTION 'Queue "%" does not exist. Create it first using pgmq.create()', v_queue_name;
  END IF;

  PERFORM pgmq.disable_notify_insert(v_queue_name);

  INSERT INTO pgmq.notify_insert_throttle (queue_name, throttle_interval_ms)
  VALUES (v_queue_name, v_throttle_interval_ms)
  ON CONFLICT ON CONSTRAINT notify_insert_throttle_queue_name_key DO UPDATE
      SET throttle_interval_ms = EXCLUDED.throttle_interval_ms,
          last_notified_at = to_timestamp(0);

  EXECUTE FORMAT(
    $QUERY$
    CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners
    AFTER INSERT ON pgmq.%I
    DEFERRABLE FOR EACH ROW
    EXECUTE PROCEDURE pgmq.notify_queue_listeners()
    $QUERY$,
    qtable
  );
END;
$_$;

ALTER FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer) OWNER TO exo_owner;

--
-- Name: format_table_name(text, text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.format_table_name(queue_name text, prefix text) RETURNS text
    LANGUAGE plpgsql
    AS $_$
BEGIN
    IF queue_name ~ '\$|;|--|'''
    THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \''';
    END IF;
    RETURN lower(prefix || '_' || queue_name);
END;
$_$;

ALTER FUNCTION pgmq.format_table_name(queue_name text, prefix text) OWNER TO exo_owner;

--
-- Name: list_notify_insert_throttles(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.list_notify_insert_throttles() RETURNS TABLE(queue_name text, throttle_interval_ms integer, last_notified_at timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
    SELECT queue_name, throttle_interval_ms, last_notified_at
    FROM pgmq.notify_insert_throttle
    ORDER BY queue_name;
$$;

ALTER FUNCTION pgmq.list_notify_insert_throttles() OWNER TO exo_owner;

--
-- Name: list_queues(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.list_queues() RETURNS SETOF pgmq.queue_record
    LANGUAGE plpgsql
    AS $$
BEGIN
  RETURN QUERY SELECT * FROM pgmq.meta;
END
$$;

ALTER FUNCTION pgmq.list_queues() OWNER TO exo_owner;

--
-- Name: list_topic_bindings(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.list_topic_bindings() RETURNS TABLE(pattern text, queue_name text, bound_at timestamp with time zone, compiled_regex text)
    LANGUAGE sql STABLE
    AS $$
    SELECT pattern, queue_name, bound_at, compiled_regex
    FROM pgmq.topic_bindings
    ORDER BY bound_at DESC, pattern, queue_name;
$$;

ALTER FUNCTION pgmq.list_topic_bindings() OWNER TO exo_owner;

--
-- Name: list_topic_bindings(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.list_topic_bindings(queue_name text) RETURNS TABLE(pattern text, queue_name text, bound_at timestamp with time zone, compiled_regex text)
    LANGUAGE sql STABLE
    AS $$
    SELECT pattern, tb.queue_name, bound_at, compiled_regex
    FROM pgmq.topic_bindings tb
    WHERE tb.queue_name = list_topic_bindings.queue_name
    ORDER BY bound_at DESC, pattern;
$$;

ALTER FUNCTION pgmq.list_topic_bindings(queue_name text) OWNER TO exo_owner;

--
-- Name: metrics(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.metrics(queue_name text) RETURNS pgmq.metrics_result
    LANGUAGE plpgsql
    AS $_$
DECLARE
    result_row pgmq.metrics_result;
    query TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
    q_default_partition TEXT := qtable || '_default';
    a_default_partition TEXT := pgmq.format_table_name(queue_name, 'a') || '_default';
    default_partition_length BIGINT;
BEGIN
    -- Only partitioned queues have default partitions. Messages in them have no
    -- partition of their own, which means pg_partman maintenance is failing for
    -- this queue; a non-zero value here is the signal to act on. The planner's
    -- estimate is used so that a large spill does not slow down every scrape.
    IF to_regclass(FORMAT('pgmq.%I', q_default_partition)) IS NOT NULL THEN
        SELECT COALESCE(SUM(GREATEST(c.reltuples, 0))::bigint, 0)
        INTO default_partition_length
        FROM pg_class c
        WHERE c.oid IN (
            to_regclass(FORMAT('pgmq.%I', q_default_partition)),
            to_regclass(FORMAT('pgmq.%I', a_default_partition))
        );
    END IF;

    query := FORMAT(
        $QUERY$
        WITH q_summary AS (
            SELECT
                count(*) as queue_length,
                count(CASE WHEN vt <= NOW() THEN 1 END) as queue_visible_length,
                EXTRACT(epoch FROM (NOW() - max(enqueued_at)))::int as newest_msg_age_sec,
                EXTRACT(epoch FROM (NOW() - min(enqueued_at)))::int as oldest_msg_age_sec,
                NOW() as scrape_time
            FROM pgmq.%I
        ),
        all_metrics AS (
            SELECT CASE
                WHEN is_called THEN last_value ELSE 0
                END as total_messages
            FROM pgmq.%I
        )
        SELECT
            %L as queue_name,
            q_summary.queue_length,
            q_summary.newest_msg_age_sec,
            q_summary.oldest_msg_age_sec,
            all_metrics.total_messages,
            q_summary.scrape_time,
            q_summary.queue_visible_length,
            %L::bigint as default_partition_length
        FROM q_summary, all_metrics
        $QUERY$,
        qtable, qtable || '_msg_id_seq', queue_name, default_partition_length
    );
    EXECUTE query INTO result_row;
    RETURN result_row;
END;
$_$;

ALTER FUNCTION pgmq.metrics(queue_name text) OWNER TO exo_owner;

--
-- Name: metrics_all(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.metrics_all() RETURNS SETOF pgmq.metrics_result
    LANGUAGE plpgsql
    AS $$
DECLARE
    row_name RECORD;
    result_row pgmq.metrics_result;
BEGIN
    FOR row_name IN SELECT queue_name FROM pgmq.meta LOOP
        result_row := pgmq.metrics(row_name.queue_name);
        RETURN NEXT result_row;
    END LOOP;
END;
$$;

ALTER FUNCTION pgmq.metrics_all() OWNER TO exo_owner;

--
-- Name: notify_queue_listeners(); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.notify_queue_listeners() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  queue_name_extracted TEXT; -- Queue name extracted from trigger table name
  updated_count        INTEGER; -- Number of rows updated (0 or 1)
BEGIN
  queue_name_extracted := substring(TG_TABLE_NAME from 3);

  UPDATE pgmq.notify_insert_throttle
  SET last_notified_at = clock_timestamp()
  WHERE queue_name = queue_name_extracted
    AND (
      throttle_interval_ms = 0 -- No throttling configured
          OR clock_timestamp() - last_notified_at >=
             (throttle_interval_ms * INTERVAL '1 millisecond') -- Throttle interval has elapsed
    );

  -- Check how many rows were updated (will be 0 or 1)
  GET DIAGNOSTICS updated_count = ROW_COUNT;

  IF updated_count > 0 THEN
    PERFORM PG_NOTIFY('pgmq.' || TG_TABLE_NAME || '.' || TG_OP, NULL);
  END IF;

RETURN NEW;
END;
$$;

ALTER FUNCTION pgmq.notify_queue_listeners() OWNER TO exo_owner;

--
-- Name: pop(text, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.pop(queue_name text, qty integer DEFAULT 1) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    result pgmq.message_record;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH cte AS
            (
                SELECT msg_id
                FROM pgmq.%I
                WHERE vt <= clock_timestamp()
                ORDER BY msg_id ASC
                LIMIT $1
                FOR UPDATE SKIP LOCKED
            )
        DELETE from pgmq.%I
        WHERE msg_id IN (select msg_id from cte)
        RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers;
        $QUERY$,
        qtable, qtable
    );
    RETURN QUERY EXECUTE sql USING qty;
END;
$_$;

ALTER FUNCTION pgmq.pop(queue_name text, qty integer) OWNER TO exo_owner;

--
-- Name: purge_queue(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.purge_queue(queue_name text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
  deleted_count INTEGER;
  qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
  -- Get the row count before truncating
  EXECUTE format('SELECT count(*) FROM pgmq.%I', qtable) INTO deleted_count;

  -- Use TRUNCATE for better performance on large tables
  EXECUTE format('TRUNCATE TABLE pgmq.%I', qtable);

  -- Return the number of purged rows
  RETURN deleted_count;
END
$$;

ALTER FUNCTION pgmq.purge_queue(queue_name text) OWNER TO exo_owner;

--
-- Name: read(text, integer, integer, jsonb); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'::jsonb) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH cte AS
        (
            SELECT msg_id
            FROM pgmq.%I
            WHERE vt <= clock_timestamp() AND CASE
                WHEN %L != '{}'::jsonb THEN (message @> %2$L)::integer
                ELSE 1
            END = 1
            ORDER BY msg_id ASC
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%I m
        SET
            last_read_at = clock_timestamp(),
            vt = clock_timestamp() + %L,
            read_ct = read_ct + 1
        FROM cte
        WHERE m.msg_id = cte.msg_id
        RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers;
        $QUERY$,
        qtable, conditional, qtable, make_interval(secs => vt)
    );
    RETURN QUERY EXECUTE sql USING qty;
END;
$_$;

ALTER FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) OWNER TO exo_owner;

--
-- Name: read_grouped(text, integer, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH fifo_groups AS (
            -- Find the minimum msg_id for each FIFO group that's ready to be processed
            SELECT
                COALESCE(headers->>'x-pgmq-group', '_default_fifo_group') as fifo_key,
                MIN(msg_id) as min_msg_id
            FROM pgmq.%I
            WHERE vt <= clock_timestamp()
            GROUP BY COALESCE(headers->>'x-pgmq-group', '_default_fifo_group')
        ),
        locked_groups AS (
            -- Lock the first available message in each FIFO group
            SELECT
                m.msg_id,
                fg.fifo_key
            FROM pgmq.%I m
            INNER JOIN fifo_groups fg ON
                COALESCE(m.headers->>'x-pgmq-group', '_default_fifo_group') = fg.fifo_key
                AND m.msg_id = fg.min_msg_id
            WHERE m.vt <= clock_timestamp()
            ORDER BY m.msg_id ASC
            FOR UPDATE SKIP LOCKED
        ),
        group_priorities AS (
            -- Assign priority to groups based on their oldest message
            SELECT
                fifo_key,
                msg_id as min_msg_id,
                ROW_NUMBER() OVER (ORDER BY msg_id) as group_priority
            FROM locked_groups
        ),
        filtered_groups as (
            SELECT * FROM group_priorities gp
            WHERE NOT EXISTS (
                -- Ensure no earlier message in this group is currently being processed
                SELECT 1
                FROM pgmq.%I m2
                WHERE COALESCE(m2.headers->>'x-pgmq-group', '_default_fifo_group') = gp.fifo_key
                AND m2.vt > clock_timestamp()
                AND m2.msg_id < gp.min_msg_id
            )
        ),
        available_messages as (
            SELECT gp.fifo_key, t.msg_id,gp.group_priority,
                ROW_NUMBER() OVER (PARTITION BY gp.fifo_key ORDER BY t.msg_id) as msg_rank_in_group
            FROM filtered_groups gp
            CROSS JOIN LATERAL (
                SELECT *
                FROM pgmq.%I t
                WHERE COALESCE(t.headers->>'x-pgmq-group', '_default_fifo_group') = gp.fifo_key
                AND t.vt <= clock_timestamp()
                ORDER BY msg_id
                LIMIT $1  -- tip to limit query impact, we know we need at most qty in each group
            ) t
            ORDER BY gp.group_priority
        ),
        batch_selection AS (
            -- Select messages to fill batch, prioritizing earliest group
            SELECT
                msg_id,
                ROW_NUMBER() OVER (ORDER BY group_priority, msg_rank_in_group) as overall_rank
            FROM available_messages
        ),
        selected_messages AS (
            -- Limit to requested quantity
            SELECT msg_id
            FROM batch_selection
            WHERE overall_rank <= $1
            ORDER BY msg_id
            FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%I m
        SET
            vt = clock_timestamp() + %L,
            read_ct = read_ct + 1,
            last_read_at = clock_timestamp()
        FROM selected_messages sm
        WHERE m.msg_id = sm.msg_id
        RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers;
        $QUERY$,
        qtable, qtable, qtable, qtable, qtable, make_interval(secs => vt)
    );
    RETURN QUERY EXECUTE sql USING qty;
END;
$_$;

ALTER FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer) OWNER TO exo_owner;

--
-- Name: read_grouped_head(text, integer, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH fifo_groups AS (
            -- Determine the absolute head (oldest) message id per FIFO group, regardless of visibility
            SELECT
                COALESCE(headers->>'x-pgmq-group', '_default_fifo_group') AS fifo_key,
                MIN(msg_id) AS head_msg_id
            FROM pgmq.%1$I
            GROUP BY COALESCE(headers->>'x-pgmq-group', '_default_fifo_group')
        ),
        selected_messages AS (
            -- Take at most 1 message per group
            SELECT g.head_msg_id msg_id
            FROM fifo_groups g
            JOIN pgmq.%1$I q ON q.msg_id = g.head_msg_id
	        WHERE q.vt <= clock_timestamp()
            ORDER BY q.msg_id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET
            vt = clock_timestamp() + %2$L,
            read_ct = read_ct + 1,
            last_read_at = clock_timestamp()
        FROM selected_messages sm
        WHERE m.msg_id = sm.msg_id
        RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers;
        $QUERY$,
        qtable, make_interval(secs => vt)
    );
    RETURN QUERY EXECUTE sql USING qty;
END;
$_$;

ALTER FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer) OWNER TO exo_owner;

--
-- Name: read_grouped_head_with_poll(text, integer, integer, integer, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $$
DECLARE
    r pgmq.message_record;
    stop_at TIMESTAMPTZ;
BEGIN
    stop_at := clock_timestamp() + make_interval(secs => max_poll_seconds);
    LOOP
      IF clock_timestamp() >= stop_at THEN
        RETURN;
      END IF;

      FOR r IN
        SELECT * FROM pgmq.read_grouped_head(queue_name, vt, qty)
      LOOP
        RETURN NEXT r;
      END LOOP;
      IF FOUND THEN
        RETURN;
      ELSE
        PERFORM pg_sleep(poll_interval_ms::numeric / 1000);
      END IF;
    END LOOP;
END;
$$;

ALTER FUNCTION pgmq.read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) OWNER TO exo_owner;

--
-- Name: read_grouped_rr(text, integer, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        WITH fifo_groups AS (
            -- Determine the absolute head (oldest) message id per FIFO group, regardless of visibility
            SELECT
                COALESCE(headers->>'x-pgmq-group', '_default_fifo_group') AS fifo_key,
                MIN(msg_id) AS head_msg_id
            FROM pgmq.%1$I
            GROUP BY COALESCE(headers->>'x-pgmq-group', '_default_fifo_group')
        ),
        eligible_groups AS (
            -- Only groups whose head message is currently visible
            -- Acquire a transaction-level advisory lock per group to prevent concurrent selection
            SELECT
                g.fifo_key,
                g.head_msg_id,
                ROW_NUMBER() OVER (ORDER BY g.head_msg_id) AS group_priority
            FROM fifo_groups g
            JOIN pgmq.%2$I h ON h.msg_id = g.head_msg_id
            WHERE h.vt <= clock_timestamp()
              AND pg_try_advisory_xact_lock(pg_catalog.hashtextextended(g.fifo_key, 0))
        ),
        available_messages AS (
            -- All currently visible messages starting at the head for each eligible group
            SELECT
                m.msg_id,
                eg.group_priority,
                ROW_NUMBER() OVER (
                    PARTITION BY eg.fifo_key
                    ORDER BY m.msg_id
                ) AS msg_rank_in_group
            FROM pgmq.%3$I m
            JOIN eligible_groups eg
              ON COALESCE(m.headers->>'x-pgmq-group', '_default_fifo_group') = eg.fifo_key
            WHERE m.vt <= clock_timestamp()
              AND m.msg_id >= eg.head_msg_id
        ),
        ordered_messages AS (
            -- Layered round-robin: take rank 1 of all groups by group_priority, then rank 2, etc.
            -- Assign selection order before locking
            SELECT msg_id, ROW_NUMBER() OVER (ORDER BY msg_rank_in_group, group_priority) as selection_order
            FROM available_messages
        ),
        selected_messages AS (
            -- Lock the messages in the correct order, preserving selection_order
            SELECT om.msg_id, om.selection_order
            FROM ordered_messages om
            JOIN pgmq.%4$I m ON m.msg_id = om.msg_id
            WHERE om.selection_order <= $1
            ORDER BY om.selection_order
            FOR UPDATE OF m SKIP LOCKED
        ),
        updated_messages AS (
            UPDATE pgmq.%5$I m
            SET
                vt = clock_timestamp() + %6$L,
                read_ct = read_ct + 1,
                last_read_at = clock_timestamp()
            FROM selected_messages sm
            WHERE m.msg_id = sm.msg_id
              AND m.vt <= clock_timestamp() -- final guard to avoid duplicate reads under races
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers, sm.selection_order
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM updated_messages
        ORDER BY selection_order;
        $QUERY$,
        qtable, qtable, qtable, qtable, qtable, make_interval(secs => vt)
    );
    RETURN QUERY EXECUTE sql USING qty;
END;
$_$;

ALTER FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer) OWNER TO exo_owner;

--
-- Name: read_grouped_rr_with_poll(text, integer, integer, integer, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $$
DECLARE
    r pgmq.message_record;
    stop_at TIMESTAMP;
BEGIN
    stop_at := clock_timestamp() + make_interval(secs => max_poll_seconds);
    LOOP
      IF (SELECT clock_timestamp() >= stop_at) THEN
        RETURN;
      END IF;

      FOR r IN
        SELECT * FROM pgmq.read_grouped_rr(queue_name, vt, qty)
      LOOP
        RETURN NEXT r;
      END LOOP;
      IF FOUND THEN
        RETURN;
      ELSE
        PERFORM pg_sleep(poll_interval_ms::numeric / 1000);
      END IF;
    END LOOP;
END;
$$;

ALTER FUNCTION pgmq.read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) OWNER TO exo_owner;

--
-- Name: read_grouped_with_poll(text, integer, integer, integer, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $$
DECLARE
    r pgmq.message_record;
    stop_at TIMESTAMP;
BEGIN
    stop_at := clock_timestamp() + make_interval(secs => max_poll_seconds);
    LOOP
      IF (SELECT clock_timestamp() >= stop_at) THEN
        RETURN;
      END IF;

      FOR r IN
        SELECT * FROM pgmq.read_grouped(queue_name, vt, qty)
      LOOP
        RETURN NEXT r;
      END LOOP;
      IF FOUND THEN
        RETURN;
      ELSE
        PERFORM pg_sleep(poll_interval_ms::numeric / 1000);
      END IF;
    END LOOP;
END;
$$;

ALTER FUNCTION pgmq.read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) OWNER TO exo_owner;

--
-- Name: read_with_poll(text, integer, integer, integer, integer, jsonb); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}'::jsonb) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    r pgmq.message_record;
    stop_at TIMESTAMP;
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    stop_at := clock_timestamp() + make_interval(secs => max_poll_seconds);
    LOOP
      IF (SELECT clock_timestamp() >= stop_at) THEN
        RETURN;
      END IF;

      sql := FORMAT(
          $QUERY$
          WITH cte AS
          (
              SELECT msg_id
              FROM pgmq.%I
              WHERE vt <= clock_timestamp() AND CASE
                  WHEN %L != '{}'::jsonb THEN (message @> %2$L)::integer
                  ELSE 1
              END = 1
              ORDER BY msg_id ASC
              LIMIT $1
              FOR UPDATE SKIP LOCKED
          )
          UPDATE pgmq.%I m
          SET
              last_read_at = clock_timestamp(),
              vt = clock_timestamp() + %L,
              read_ct = read_ct + 1
          FROM cte
          WHERE m.msg_id = cte.msg_id
          RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers;
          $QUERY$,
          qtable, conditional, qtable, make_interval(secs => vt)
      );

      FOR r IN
        EXECUTE sql USING qty
      LOOP
        RETURN NEXT r;
      END LOOP;
      IF FOUND THEN
        RETURN;
      ELSE
        PERFORM pg_sleep(poll_interval_ms::numeric / 1000);
      END IF;
    END LOOP;
END;
$_$;

ALTER FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) OWNER TO exo_owner;

--
-- Name: send(text, jsonb); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send(queue_name, msg, NULL, clock_timestamp());
$$;

ALTER FUNCTION pgmq.send(queue_name text, msg jsonb) OWNER TO exo_owner;

--
-- Name: send(text, jsonb, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send(queue_name, msg, NULL, clock_timestamp() + make_interval(secs => delay));
$$;

ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) OWNER TO exo_owner;

--
-- Name: send(text, jsonb, jsonb); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send(queue_name, msg, headers, clock_timestamp());
$$;

ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) OWNER TO exo_owner;

--
-- Name: send(text, jsonb, timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send(queue_name, msg, NULL, delay);
$$;

ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: send(text, jsonb, jsonb, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send(queue_name, msg, headers, clock_timestamp() + make_interval(secs => delay));
$$;

ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) OWNER TO exo_owner;

--
-- Name: send(text, jsonb, jsonb, timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
            $QUERY$
        INSERT INTO pgmq.%I (vt, message, headers)
        VALUES ($2, $1, $3)
        RETURNING msg_id;
        $QUERY$,
            qtable
           );
    RETURN QUERY EXECUTE sql USING msg, delay, headers;
END;
$_$;

ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: send_batch(text, jsonb[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[]) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL, clock_timestamp());
$$;

ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[]) OWNER TO exo_owner;

--
-- Name: send_batch(text, jsonb[], jsonb[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, clock_timestamp());
$$;

ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) OWNER TO exo_owner;

--
-- Name: send_batch(text, jsonb[], integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL, clock_timestamp() + make_interval(secs => delay));
$$;

ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) OWNER TO exo_owner;

--
-- Name: send_batch(text, jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL, delay);
$$;

ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: send_batch(text, jsonb[], jsonb[], integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, clock_timestamp() + make_interval(secs => delay));
$$;

ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) OWNER TO exo_owner;

--
-- Name: send_batch(text, jsonb[], jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, headers);
    RETURN QUERY SELECT * FROM pgmq._send_batch(queue_name, msgs, headers, delay);
END;
$$;

ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: send_batch_topic(text, jsonb[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[]) RETURNS TABLE(queue_name text, msg_id bigint)
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL, clock_timestamp());
$$;

ALTER FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[]) OWNER TO exo_owner;

--
-- Name: send_batch_topic(text, jsonb[], jsonb[]); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[]) RETURNS TABLE(queue_name text, msg_id bigint)
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, clock_timestamp());
$$;

ALTER FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[]) OWNER TO exo_owner;

--
-- Name: send_batch_topic(text, jsonb[], integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay integer) RETURNS TABLE(queue_name text, msg_id bigint)
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL, clock_timestamp() + make_interval(secs => delay));
$$;

ALTER FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay integer) OWNER TO exo_owner;

--
-- Name: send_batch_topic(text, jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay timestamp with time zone) RETURNS TABLE(queue_name text, msg_id bigint)
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL, delay);
$$;

ALTER FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: send_batch_topic(text, jsonb[], jsonb[], integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer) RETURNS TABLE(queue_name text, msg_id bigint)
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, clock_timestamp() + make_interval(secs => delay));
$$;

ALTER FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer) OWNER TO exo_owner;

--
-- Name: send_batch_topic(text, jsonb[], jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) RETURNS TABLE(queue_name text, msg_id bigint)
    LANGUAGE plpgsql
    AS $$
DECLARE
    b RECORD;
BEGIN
    PERFORM pgmq.validate_routing_key(routing_key);

    -- Validate batch parameters once (not per queue)
    PERFORM pgmq._validate_batch_params(msgs, headers);

    -- Filter matching patterns in SQL for better performance (uses index)
    -- Any failure will rollback the entire transaction
    FOR b IN
        SELECT DISTINCT tb.queue_name
        FROM pgmq.topic_bindings tb
        WHERE routing_key ~ tb.compiled_regex
        ORDER BY tb.queue_name -- Deterministic ordering, deduplicated by queue_name
        LOOP
            -- Use private _send_batch to avoid redundant validation
            RETURN QUERY
            SELECT b.queue_name, batch_result.msg_id
            FROM pgmq._send_batch(b.queue_name, msgs, headers, delay) AS batch_result(msg_id);
        END LOOP;

    RETURN;
END;
$$;

ALTER FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) OWNER TO exo_owner;

--
-- Name: send_topic(text, jsonb); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb) RETURNS integer
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN pgmq.send_topic(routing_key, msg, NULL, 0);
END;
$$;

ALTER FUNCTION pgmq.send_topic(routing_key text, msg jsonb) OWNER TO exo_owner;

--
-- Name: send_topic(text, jsonb, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb, delay integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN pgmq.send_topic(routing_key, msg, NULL, delay);
END;
$$;

ALTER FUNCTION pgmq.send_topic(routing_key text, msg jsonb, delay integer) OWNER TO exo_owner;

--
-- Name: send_topic(text, jsonb, jsonb, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb, headers jsonb, delay integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    b             RECORD;
    matched_count integer := 0;
BEGIN
    PERFORM pgmq.validate_routing_key(routing_key);

    IF msg IS NULL THEN
        RAISE EXCEPTION 'msg cannot be NULL';
    END IF;

    IF delay < 0 THEN
        RAISE EXCEPTION 'delay cannot be negative, got: %', delay;
    END IF;

    -- Filter matching patterns in SQL for better performance (uses index)
    -- Any failure will rollback the entire transaction
    FOR b IN
        SELECT DISTINCT tb.queue_name
        FROM pgmq.topic_bindings tb
        WHERE routing_key ~ tb.compiled_regex
        ORDER BY tb.queue_name -- Deterministic ordering, deduplicated by queue_name
        LOOP
            PERFORM pgmq.send(b.queue_name, msg, headers, delay);
            matched_count := matched_count + 1;
        END LOOP;

    RETURN matched_count;
END;
$$;

ALTER FUNCTION pgmq.send_topic(routing_key text, msg jsonb, headers jsonb, delay integer) OWNER TO exo_owner;

--
-- Name: set_vt(text, bigint[], integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer) RETURNS SETOF pgmq.message_record
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.set_vt(queue_name, msg_ids, clock_timestamp() + make_interval(secs => vt));
$$;

ALTER FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer) OWNER TO exo_owner;

--
-- Name: set_vt(text, bigint[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt timestamp with time zone) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        UPDATE pgmq.%I
        SET vt = $1
        WHERE msg_id = ANY($2)
        RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers;
        $QUERY$,
        qtable
    );
    RETURN QUERY EXECUTE sql USING vt, msg_ids;
END;
$_$;

ALTER FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt timestamp with time zone) OWNER TO exo_owner;

--
-- Name: set_vt(text, bigint, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) RETURNS SETOF pgmq.message_record
    LANGUAGE sql
    AS $$
    SELECT * FROM pgmq.set_vt(queue_name, msg_id, clock_timestamp() + make_interval(secs => vt));
$$;

ALTER FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) OWNER TO exo_owner;

--
-- Name: set_vt(text, bigint, timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamp with time zone) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    AS $_$
DECLARE
    sql TEXT;
    result pgmq.message_record;
    qtable TEXT := pgmq.format_table_name(queue_name, 'q');
BEGIN
    sql := FORMAT(
        $QUERY$
        UPDATE pgmq.%I
        SET vt = $1
        WHERE msg_id = $2
        RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers;
        $QUERY$, 
        qtable
    );
    RETURN QUERY EXECUTE sql USING vt, msg_id;
END;
$_$;

ALTER FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamp with time zone) OWNER TO exo_owner;

--
-- Name: test_routing(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.test_routing(routing_key text) RETURNS TABLE(pattern text, queue_name text, compiled_regex text)
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    PERFORM pgmq.validate_routing_key(routing_key);
    RETURN QUERY
        SELECT b.pattern,
               b.queue_name,
               b.compiled_regex
        FROM pgmq.topic_bindings b
        WHERE routing_key ~ b.compiled_regex
        ORDER BY b.pattern;
END;
$$;

ALTER FUNCTION pgmq.test_routing(routing_key text) OWNER TO exo_owner;

--
-- Name: unbind_topic(text, text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.unbind_topic(pattern text, queue_name text) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    rows_deleted integer;
BEGIN
    IF pattern IS NULL OR pattern = '' THEN
        RAISE EXCEPTION 'pattern cannot be NULL or empty';
    END IF;

    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue_name cannot be NULL or empty';
    END IF;

    DELETE
    FROM pgmq.topic_bindings
    WHERE topic_bindings.pattern = unbind_topic.pattern
      AND topic_bindings.queue_name = unbind_topic.queue_name;

    GET DIAGNOSTICS rows_deleted = ROW_COUNT;

    IF rows_deleted > 0 THEN
        RETURN true;
    ELSE
        RETURN false;
    END IF;
END;
$$;

ALTER FUNCTION pgmq.unbind_topic(pattern text, queue_name text) OWNER TO exo_owner;

--
-- Name: update_notify_insert(text, integer); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF throttle_interval_ms < 0 THEN
        RAISE EXCEPTION 'throttle_interval_ms must be non-negative, got: %', throttle_interval_ms;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pgmq.meta WHERE meta.queue_name = update_notify_insert.queue_name) THEN
        RAISE EXCEPTION 'Queue "%" does not exist. Create the queue first using pgmq.create()', queue_name;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pgmq.notify_insert_throttle WHERE notify_insert_throttle.queue_name = update_notify_insert.queue_name) THEN
        RAISE EXCEPTION 'Queue "%" does not have notify_insert enabled. Enable it first using pgmq.enable_notify_insert()', queue_name;
    END IF;

    UPDATE pgmq.notify_insert_throttle
    SET throttle_interval_ms = update_notify_insert.throttle_interval_ms,
        last_notified_at = to_timestamp(0)
    WHERE notify_insert_throttle.queue_name = update_notify_insert.queue_name;
END;
$$;

ALTER FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer) OWNER TO exo_owner;

--
-- Name: validate_queue_name(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.validate_queue_name(queue_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF length(queue_name) > 47 THEN
    -- complete table identifier must be <= 63
    -- https://www.postgresql.org/docs/17/sql-syntax-lexical.html#SQL-SYNTAX-IDENTIFIERS
    -- e.g. template_pgmq_q_my_queue is an identifier for my_queue when partitioned
    -- template_pgmq_q_ (16) + <a max length queue name> (47) = 63 
    RAISE EXCEPTION 'queue name is too long, maximum length is 47 characters';
  END IF;
END;
$$;

ALTER FUNCTION pgmq.validate_queue_name(queue_name text) OWNER TO exo_owner;

--
-- Name: validate_routing_key(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.validate_routing_key(routing_key text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
BEGIN
    -- Valid routing key examples:
    --   "logs.error"
    --   "app.user-service.auth"
    --   "system_events.db.connection_failed"
    --
    -- Invalid routing key examples:
    --   ""                     - empty
    --   ".logs.error"          - starts with dot
    --   "logs.error."          - ends with dot
    --   "logs..error"          - consecutive dots
    --   "logs.error!"          - invalid character
    --   "logs error"           - space not allowed
    --   "logs.*"               - wildcards not allowed in routing keys

    IF routing_key IS NULL OR routing_key = '' THEN
        RAISE EXCEPTION 'routing_key cannot be NULL or empty';
    END IF;

    IF length(routing_key) > 255 THEN
        RAISE EXCEPTION 'routing_key length cannot exceed 255 characters, got % characters', length(routing_key);
    END IF;

    IF routing_key !~ '^[a-zA-Z0-9._-]+$' THEN
        RAISE EXCEPTION 'routing_key contains invalid characters. Only alphanumeric, dots, hyphens, and underscores are allowed. Got: %', routing_key;
    END IF;

    IF routing_key ~ '^\.' THEN
        RAISE EXCEPTION 'routing_key cannot start with a dot. Got: %', routing_key;
    END IF;

    IF routing_key ~ '\.$' THEN
        RAISE EXCEPTION 'routing_key cannot end with a dot. Got: %', routing_key;
    END IF;

    IF routing_key ~ '\.\.' THEN
        RAISE EXCEPTION 'routing_key cannot contain consecutive dots. Got: %', routing_key;
    END IF;

    RETURN true;
END;
$_$;

ALTER FUNCTION pgmq.validate_routing_key(routing_key text) OWNER TO exo_owner;

--
-- Name: validate_topic_pattern(text); Type: FUNCTION; Schema: pgmq; Owner: exo_owner
--

CREATE FUNCTION pgmq.validate_topic_pattern(pattern text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
BEGIN
    -- Valid pattern examples:
    --   "logs.*"           - matches one segment after logs. (e.g., logs.error, logs.info)
    --   "logs.#"           - matches one or more segments after logs. (e.g., logs.error, logs.api.error)
    --   "*.error"          - matches one segment before .error (e.g., app.error, db.error)
    --   "#.error"          - matches one or more segments before .error (e.g., app.error, x.y.error)
    --   "app.*.#"          - mixed wildcards (one segment then one or more)
    --   "#"                - catch-all pattern, matches any routing key
    --
    -- Invalid pattern examples:
    --   ".logs.*"          - starts with dot
    --   "logs.*."          - ends with dot
    --   "logs..error"      - consecutive dots
    --   "logs.**"          - consecutive stars
    --   "logs.##"          - consecutive hashes
    --   "logs.*#"          - adjacent wildcards
    --   "logs.error!"      - invalid character

    IF pattern IS NULL OR pattern = '' THEN
        RAISE EXCEPTION 'pattern cannot be NULL or empty';
    END IF;

    IF length(pattern) > 255 THEN
        RAISE EXCEPTION 'pattern length cannot exceed 255 characters, got % characters', length(pattern);
    END IF;

    IF pattern !~ '^[a-zA-Z0-9._\-*#]+$' THEN
        RAISE EXCEPTION 'pattern contains invalid characters. Only alphanumeric, dots, hyphens, underscores, *, and # are allowed. Got: %', pattern;
    END IF;

    IF pattern ~ '^\.' THEN
        RAISE EXCEPTION 'pattern cannot start with a dot. Got: %', pattern;
    END IF;

    IF pattern ~ '\.$' THEN
        RAISE EXCEPTION 'pattern cannot end with a dot. Got: %', pattern;
    END IF;

    IF pattern ~ '\.\.' THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive dots. Got: %', pattern;
    END IF;

    IF pattern ~ '\*\*' THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive stars (**). Use # for multi-segment matching. Got: %', pattern;
    END IF;

    IF pattern ~ '##' THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive hashes (##). A single # already matches zero or more segments. Got: %', pattern;
    END IF;

    IF pattern ~ '\*#' OR pattern ~ '#\*' THEN
        RAISE EXCEPTION 'pattern cannot contain adjacent wildcards (*# or #*). Separate wildcards with dots. Got: %', pattern;
    END IF;

    RETURN true;
END;
$_$;

ALTER FUNCTION pgmq.validate_topic_pattern(pattern text) OWNER TO exo_owner;

--
-- Name: chat_messages; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chat_messages (
    id bigint NOT NULL,
    conversation_id bigint NOT NULL,
    identity_id bigint NOT NULL,
    external_id text,
    dedupe_key text NOT NULL,
    sent_at timestamp with time zone,
    body text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    charged_subjects text[] DEFAULT '{}'::text[] NOT NULL,
    charged jsonb
);

ALTER TABLE exo_private.chat_messages OWNER TO exo_owner;

--
-- Name: TABLE chat_messages; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chat_messages IS 'Chat messages. dedupe_key is "id:" plus the source''s message id where it has one, else "sha256:" over the raw values, so re-importing an export adds nothing; the BM25 index chat_messages_bm25 (English) feeds exo.search_messages.';

--
-- Name: COLUMN chat_messages.charged_subjects; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.chat_messages.charged_subjects IS 'The subjects of charged: the deferred subjects this message touches.';

--
-- Name: COLUMN chat_messages.charged; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.chat_messages.charged IS 'Deferred subjects this message touches, each with the rule that fired; null until marked.';

--
-- Name: chunks; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunks (
    id bigint NOT NULL,
    workspace text NOT NULL,
    document_id bigint NOT NULL,
    ordinal integer NOT NULL,
    body text NOT NULL,
    char_start integer NOT NULL,
    char_end integer NOT NULL,
    band exo_private.band NOT NULL,
    written_at date,
    charged_subjects text[] DEFAULT '{}'::text[] NOT NULL,
    charged jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
PARTITION BY LIST (workspace);

ALTER TABLE exo_private.chunks OWNER TO exo_owner;

--
-- Name: TABLE chunks; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chunks IS 'Retrieval chunks split at paragraph boundaries; partitioned by workspace.';

--
-- Name: COLUMN chunks.charged; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.chunks.charged IS 'Deferred subjects this chunk touches, each with the rule that fired.';

--
-- Name: deferred_subjects; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.deferred_subjects (
    subject text NOT NULL,
    aliases text[] DEFAULT '{}'::text[] NOT NULL,
    note text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT deferred_subjects_subject_check CHECK ((btrim(subject) <> ''::text))
);

ALTER TABLE exo_private.deferred_subjects OWNER TO exo_owner;

--
-- Name: TABLE deferred_subjects; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.deferred_subjects IS 'Subjects that must never surface by accident; chunks touching them are marked charged.';

--
-- Name: deferred_subjects; Type: VIEW; Schema: exo; Owner: exo_api
--

CREATE VIEW exo.deferred_subjects AS
 SELECT subject,
    aliases,
    ( SELECT count(*) AS count
           FROM exo_private.chunks c
          WHERE (s.subject = ANY (c.charged_subjects))) AS charged_chunks,
    ( SELECT count(*) AS count
           FROM exo_private.chat_messages m
          WHERE ((m.charged_subjects <> '{}'::text[]) AND (m.charged_subjects @> ARRAY[s.subject]))) AS charged_messages
   FROM exo_private.deferred_subjects s;

ALTER VIEW exo.deferred_subjects OWNER TO exo_api;

--
-- Name: VIEW deferred_subjects; Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON VIEW exo.deferred_subjects IS 'Subjects that never surface by accident, their aliases and how many chunks and chat messages are charged for each (names and counts only, never the text). Changes go through exo_private.defer_subject / undefer_subject.';

--
-- Name: documents; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.documents (
    id bigint NOT NULL,
    source_id integer,
    path text NOT NULL,
    extension text NOT NULL,
    size_bytes bigint NOT NULL,
    mtime_ns bigint NOT NULL,
    sha256 text,
    stage exo_private.document_stage DEFAULT 'new'::exo_private.document_stage NOT NULL,
    error_class text,
    error_message text,
    workspace text,
    route jsonb,
    review jsonb,
    band exo_private.band,
    band_source text,
    band_reason text,
    written_at date,
    title text,
    canonical boolean DEFAULT false NOT NULL,
    frontmatter jsonb DEFAULT '{}'::jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    first_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    stage_changed_at timestamp with time zone DEFAULT now() NOT NULL,
    title_key text GENERATED ALWAYS AS (NULLIF(btrim(regexp_replace(lower(COALESCE(title, ''::text)), '[^[:alnum:]]+'::text, ' '::text, 'g'::text)), ''::text)) STORED,
    file_name text GENERATED ALWAYS AS (lower(regexp_replace(path, '^.*/'::text, ''::text))) STORED,
    file_stem text GENERATED ALWAYS AS (lower(regexp_replace(regexp_replace(path, '^.*/'::text, ''::text), '\.[^.]*$'::text, ''::text))) STORED,
    path_bytes bytea NOT NULL,
    conversation_id bigint,
    CONSTRAINT documents_band_source_check CHECK ((band_source = ANY (ARRAY['frontmatter'::text, 'inferred'::text]))),
    CONSTRAINT documents_check CHECK (((stage = ANY (ARRAY['failed'::exo_private.document_stage, 'skipped'::exo_private.document_stage])) = (error_class IS NOT NULL))),
    CONSTRAINT documents_one_origin CHECK ((num_nonnulls(source_id, conversation_id) = 1))
);

ALTER TABLE exo_private.documents OWNER TO exo_owner;

--
-- Name: TABLE documents; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.documents IS 'The ledger: one row per file the scanner saw, with its stage, routing, band and errors.';

--
-- Name: COLUMN documents.path; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.documents.path IS 'Display form of path_bytes, for people: undecodable bytes written as \x escapes (not unique).';

--
-- Name: COLUMN documents.route; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.documents.route IS 'The router''s decision: method, workspace, confidence, candidates with scores and reasons.';

--
-- Name: COLUMN documents.review; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.documents.review IS 'A person''s quarantine decision (approved, reassigned, rejected); outranks the router.';

--
-- Name: COLUMN documents.title_key; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.documents.title_key IS 'The title lower-cased with every run of non-alphanumerics as one space: what an n-gram of a query is compared with.';

--
-- Name: COLUMN documents.path_bytes; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.documents.path_bytes IS 'The path relative to the source root as the file system''s raw bytes: the ledger key.';

--
-- Name: COLUMN documents.conversation_id; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.documents.conversation_id IS 'Set on a conversation document (path chat/<source>/<external_id>, extension chat, no source, no sha256): the chat conversation whose windows are its chunks.';

--
-- Name: quarantine; Type: VIEW; Schema: exo; Owner: exo_api
--

CREATE VIEW exo.quarantine AS
 SELECT id,
    path,
    title,
    (route -> 'candidates'::text) AS candidates,
    ((route ->> 'confidence'::text))::real AS confidence,
    (route -> 'reasons'::text) AS reasons,
    stage_changed_at AS quarantined_at
   FROM exo_private.documents d
  WHERE (stage = 'quarantined'::exo_private.document_stage);

ALTER VIEW exo.quarantine OWNER TO exo_api;

--
-- Name: VIEW quarantine; Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON VIEW exo.quarantine IS 'Documents the router was not confident about, with candidate workspaces, scores and reasons.';

--
-- Name: settings; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.settings (
    key text NOT NULL,
    value jsonb NOT NULL,
    description text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT settings_key_check CHECK ((key ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$'::text))
);

ALTER TABLE exo_private.settings OWNER TO exo_owner;

--
-- Name: TABLE settings; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.settings IS 'Runtime configuration read inside the database (thresholds, windows, model endpoints).';

--
-- Name: settings; Type: VIEW; Schema: exo; Owner: exo_api
--

CREATE VIEW exo.settings AS
 SELECT key,
    value,
    description,
    updated_at
   FROM exo_private.settings;

ALTER VIEW exo.settings OWNER TO exo_api;

--
-- Name: VIEW settings; Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON VIEW exo.settings IS 'Every runtime setting with its value and what it does.';

--
-- Name: workspaces; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.workspaces (
    name text NOT NULL,
    description text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT workspaces_name_check CHECK ((name ~ '^[a-z][a-z0-9_]{1,39}$'::text))
);

ALTER TABLE exo_private.workspaces OWNER TO exo_owner;

--
-- Name: TABLE workspaces; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.workspaces IS 'Federation units: each has its own graph and indexes; search fans out over them.';

--
-- Name: workspaces; Type: VIEW; Schema: exo; Owner: exo_api
--

CREATE VIEW exo.workspaces AS
 SELECT name,
    description,
    exo_private.graph_name(name) AS graph,
    created_at
   FROM exo_private.workspaces w;

ALTER VIEW exo.workspaces OWNER TO exo_api;

--
-- Name: VIEW workspaces; Type: COMMENT; Schema: exo; Owner: exo_api
--

COMMENT ON VIEW exo.workspaces IS 'The workspaces search federates over, with their AGE graph names.';

--
-- Name: chat_conversations; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chat_conversations (
    id bigint NOT NULL,
    source text NOT NULL,
    external_id text NOT NULL,
    title text,
    started_at timestamp with time zone,
    imported_from text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_conversations_external_id_check CHECK ((external_id <> ''::text)),
    CONSTRAINT chat_conversations_imported_from_check CHECK ((imported_from !~ '/'::text)),
    CONSTRAINT chat_conversations_source_check CHECK ((source ~ '^[a-z][a-z0-9_]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$'::text))
);

ALTER TABLE exo_private.chat_conversations OWNER TO exo_owner;

--
-- Name: TABLE chat_conversations; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chat_conversations IS 'A conversation of one chat source, identified by the source''s own id (or the export''s file name); imported_from is the file name it first came from, never a path.';

--
-- Name: chat_conversations_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chat_conversations ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.chat_conversations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: chat_identities; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chat_identities (
    id bigint NOT NULL,
    source text NOT NULL,
    handle text NOT NULL,
    display_name text,
    person_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_identities_handle_check CHECK ((handle <> ''::text)),
    CONSTRAINT chat_identities_source_check CHECK ((source ~ '^[a-z][a-z0-9_]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$'::text))
);

ALTER TABLE exo_private.chat_identities OWNER TO exo_owner;

--
-- Name: TABLE chat_identities; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chat_identities IS 'One row per handle per chat source (chatgpt, whatsapp, jsonl or jsonl:<name>); person_id links the identity to a person, the owner''s identities to the owner.';

--
-- Name: chat_identities_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chat_identities ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.chat_identities_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: chat_messages_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chat_messages ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.chat_messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: chat_participants; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chat_participants (
    conversation_id bigint NOT NULL,
    identity_id bigint NOT NULL
);

ALTER TABLE exo_private.chat_participants OWNER TO exo_owner;

--
-- Name: TABLE chat_participants; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chat_participants IS 'Who took part in a conversation (every identity that sent a message in it).';

--
-- Name: chat_windows; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chat_windows (
    workspace text NOT NULL,
    chunk_id bigint NOT NULL,
    conversation_id bigint NOT NULL,
    message_ids bigint[] NOT NULL,
    first_sent_at timestamp with time zone,
    last_sent_at timestamp with time zone
);

ALTER TABLE exo_private.chat_windows OWNER TO exo_owner;

--
-- Name: TABLE chat_windows; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chat_windows IS 'One row per chat chunk: the messages, in order, that the window holds, and the times of its first and last dated message.';

--
-- Name: chunk_embeddings; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunk_embeddings (
    workspace text NOT NULL,
    chunk_id bigint NOT NULL,
    model_id integer NOT NULL,
    embedding public.vector NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
PARTITION BY LIST (workspace);

ALTER TABLE exo_private.chunk_embeddings OWNER TO exo_owner;

--
-- Name: TABLE chunk_embeddings; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.chunk_embeddings IS 'One vector per chunk and embedding model; partitioned by workspace like the chunks.';

--
-- Name: chunk_embeddings_administrative; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunk_embeddings_administrative (
    workspace text CONSTRAINT chunk_embeddings_workspace_not_null NOT NULL,
    chunk_id bigint CONSTRAINT chunk_embeddings_chunk_id_not_null NOT NULL,
    model_id integer CONSTRAINT chunk_embeddings_model_id_not_null NOT NULL,
    embedding public.vector CONSTRAINT chunk_embeddings_embedding_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunk_embeddings_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunk_embeddings_administrative OWNER TO exo_owner;

--
-- Name: chunk_embeddings_creative; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunk_embeddings_creative (
    workspace text CONSTRAINT chunk_embeddings_workspace_not_null NOT NULL,
    chunk_id bigint CONSTRAINT chunk_embeddings_chunk_id_not_null NOT NULL,
    model_id integer CONSTRAINT chunk_embeddings_model_id_not_null NOT NULL,
    embedding public.vector CONSTRAINT chunk_embeddings_embedding_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunk_embeddings_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunk_embeddings_creative OWNER TO exo_owner;

--
-- Name: chunk_embeddings_personal; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunk_embeddings_personal (
    workspace text CONSTRAINT chunk_embeddings_workspace_not_null NOT NULL,
    chunk_id bigint CONSTRAINT chunk_embeddings_chunk_id_not_null NOT NULL,
    model_id integer CONSTRAINT chunk_embeddings_model_id_not_null NOT NULL,
    embedding public.vector CONSTRAINT chunk_embeddings_embedding_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunk_embeddings_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunk_embeddings_personal OWNER TO exo_owner;

--
-- Name: chunk_embeddings_technical; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunk_embeddings_technical (
    workspace text CONSTRAINT chunk_embeddings_workspace_not_null NOT NULL,
    chunk_id bigint CONSTRAINT chunk_embeddings_chunk_id_not_null NOT NULL,
    model_id integer CONSTRAINT chunk_embeddings_model_id_not_null NOT NULL,
    embedding public.vector CONSTRAINT chunk_embeddings_embedding_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunk_embeddings_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunk_embeddings_technical OWNER TO exo_owner;

--
-- Name: chunks_administrative; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunks_administrative (
    id bigint CONSTRAINT chunks_id_not_null NOT NULL,
    workspace text CONSTRAINT chunks_workspace_not_null NOT NULL,
    document_id bigint CONSTRAINT chunks_document_id_not_null NOT NULL,
    ordinal integer CONSTRAINT chunks_ordinal_not_null NOT NULL,
    body text CONSTRAINT chunks_body_not_null NOT NULL,
    char_start integer CONSTRAINT chunks_char_start_not_null NOT NULL,
    char_end integer CONSTRAINT chunks_char_end_not_null NOT NULL,
    band exo_private.band CONSTRAINT chunks_band_not_null NOT NULL,
    written_at date,
    charged_subjects text[] DEFAULT '{}'::text[] CONSTRAINT chunks_charged_subjects_not_null NOT NULL,
    charged jsonb DEFAULT '[]'::jsonb CONSTRAINT chunks_charged_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunks_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunks_administrative OWNER TO exo_owner;

--
-- Name: chunks_creative; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunks_creative (
    id bigint CONSTRAINT chunks_id_not_null NOT NULL,
    workspace text CONSTRAINT chunks_workspace_not_null NOT NULL,
    document_id bigint CONSTRAINT chunks_document_id_not_null NOT NULL,
    ordinal integer CONSTRAINT chunks_ordinal_not_null NOT NULL,
    body text CONSTRAINT chunks_body_not_null NOT NULL,
    char_start integer CONSTRAINT chunks_char_start_not_null NOT NULL,
    char_end integer CONSTRAINT chunks_char_end_not_null NOT NULL,
    band exo_private.band CONSTRAINT chunks_band_not_null NOT NULL,
    written_at date,
    charged_subjects text[] DEFAULT '{}'::text[] CONSTRAINT chunks_charged_subjects_not_null NOT NULL,
    charged jsonb DEFAULT '[]'::jsonb CONSTRAINT chunks_charged_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunks_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunks_creative OWNER TO exo_owner;

--
-- Name: chunks_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chunks ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.chunks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: chunks_personal; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunks_personal (
    id bigint CONSTRAINT chunks_id_not_null NOT NULL,
    workspace text CONSTRAINT chunks_workspace_not_null NOT NULL,
    document_id bigint CONSTRAINT chunks_document_id_not_null NOT NULL,
    ordinal integer CONSTRAINT chunks_ordinal_not_null NOT NULL,
    body text CONSTRAINT chunks_body_not_null NOT NULL,
    char_start integer CONSTRAINT chunks_char_start_not_null NOT NULL,
    char_end integer CONSTRAINT chunks_char_end_not_null NOT NULL,
    band exo_private.band CONSTRAINT chunks_band_not_null NOT NULL,
    written_at date,
    charged_subjects text[] DEFAULT '{}'::text[] CONSTRAINT chunks_charged_subjects_not_null NOT NULL,
    charged jsonb DEFAULT '[]'::jsonb CONSTRAINT chunks_charged_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunks_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunks_personal OWNER TO exo_owner;

--
-- Name: chunks_technical; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.chunks_technical (
    id bigint CONSTRAINT chunks_id_not_null NOT NULL,
    workspace text CONSTRAINT chunks_workspace_not_null NOT NULL,
    document_id bigint CONSTRAINT chunks_document_id_not_null NOT NULL,
    ordinal integer CONSTRAINT chunks_ordinal_not_null NOT NULL,
    body text CONSTRAINT chunks_body_not_null NOT NULL,
    char_start integer CONSTRAINT chunks_char_start_not_null NOT NULL,
    char_end integer CONSTRAINT chunks_char_end_not_null NOT NULL,
    band exo_private.band CONSTRAINT chunks_band_not_null NOT NULL,
    written_at date,
    charged_subjects text[] DEFAULT '{}'::text[] CONSTRAINT chunks_charged_subjects_not_null NOT NULL,
    charged jsonb DEFAULT '[]'::jsonb CONSTRAINT chunks_charged_not_null NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT chunks_created_at_not_null NOT NULL
);

ALTER TABLE exo_private.chunks_technical OWNER TO exo_owner;

--
-- Name: components; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.components (
    name text NOT NULL,
    version text NOT NULL,
    sha256 text,
    installed_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE exo_private.components OWNER TO exo_owner;

--
-- Name: TABLE components; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.components IS 'vendored SQL installed by the migrator (pgmq), with its version';

--
-- Name: document_links; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.document_links (
    source_document bigint NOT NULL,
    target text NOT NULL,
    target_document bigint
);

ALTER TABLE exo_private.document_links OWNER TO exo_owner;

--
-- Name: TABLE document_links; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.document_links IS 'Obsidian [[wiki links]] between documents; target_document is null while unresolved.';

--
-- Name: documents_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.documents ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.documents_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: embedding_models; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.embedding_models (
    id integer NOT NULL,
    name text NOT NULL,
    dimensions integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT embedding_models_dimensions_check CHECK (((dimensions >= 1) AND (dimensions <= 16000)))
);

ALTER TABLE exo_private.embedding_models OWNER TO exo_owner;

--
-- Name: TABLE embedding_models; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.embedding_models IS 'Every embedding model that produced vectors here; each gets its own HNSW indexes.';

--
-- Name: embedding_models_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.embedding_models ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.embedding_models_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: entities; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.entities (
    id bigint NOT NULL,
    workspace text NOT NULL,
    generation integer NOT NULL,
    type exo_private.entity_type NOT NULL,
    canonical_key text NOT NULL,
    name text NOT NULL,
    is_owner boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT entities_canonical_key_check CHECK ((canonical_key <> ''::text))
);

ALTER TABLE exo_private.entities OWNER TO exo_owner;

--
-- Name: TABLE entities; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.entities IS 'Graph nodes. Identity is (workspace, type, canonical key) within a generation: one node per name per workspace, however many documents mention it.';

--
-- Name: entities_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.entities ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.entities_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: extraction_generations; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.extraction_generations (
    workspace text NOT NULL,
    generation integer NOT NULL,
    model text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE exo_private.extraction_generations OWNER TO exo_owner;

--
-- Name: TABLE extraction_generations; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.extraction_generations IS 'The extraction model behind each graph generation of a workspace; the newest is current.';

--
-- Name: extraction_windows; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.extraction_windows (
    id bigint NOT NULL,
    document_id bigint NOT NULL,
    workspace text NOT NULL,
    ordinal integer NOT NULL,
    body text NOT NULL,
    char_start integer NOT NULL,
    char_end integer NOT NULL,
    extracted_generation integer,
    extracted_at timestamp with time zone,
    extraction_stats jsonb
);

ALTER TABLE exo_private.extraction_windows OWNER TO exo_owner;

--
-- Name: TABLE extraction_windows; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.extraction_windows IS 'Large windows (6,000 characters, 400 overlap) for the graph extraction worker.';

--
-- Name: COLUMN extraction_windows.extraction_stats; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.extraction_windows.extraction_stats IS 'What the last extraction of this window gave: items kept and dropped (malformed, ungrounded, dangling).';

--
-- Name: extraction_windows_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.extraction_windows ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.extraction_windows_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: ingest_runs; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.ingest_runs (
    id bigint NOT NULL,
    source_id integer NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    summary jsonb
);

ALTER TABLE exo_private.ingest_runs OWNER TO exo_owner;

--
-- Name: TABLE ingest_runs; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.ingest_runs IS 'One row per `exo ingest` run with its end summary.';

--
-- Name: ingest_runs_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.ingest_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.ingest_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: job_failures; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.job_failures (
    id bigint NOT NULL,
    queue text NOT NULL,
    msg_id bigint NOT NULL,
    target_id bigint,
    error_class text NOT NULL,
    message text NOT NULL,
    failed_at timestamp with time zone DEFAULT now() NOT NULL,
    retried_at timestamp with time zone
);

ALTER TABLE exo_private.job_failures OWNER TO exo_owner;

--
-- Name: TABLE job_failures; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.job_failures IS 'Jobs given up on: the chunk or window, the error class and message.';

--
-- Name: COLUMN job_failures.retried_at; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.job_failures.retried_at IS 'When `exo worker retry-failed` queued the chunk or window again (or found it no longer needs work); null while the failure stands.';

--
-- Name: job_failures_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.job_failures ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.job_failures_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: mentions; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.mentions (
    entity_id bigint NOT NULL,
    window_id bigint NOT NULL,
    document_id bigint NOT NULL,
    chunk_id bigint,
    surface text NOT NULL,
    origin text DEFAULT 'model'::text NOT NULL,
    CONSTRAINT mentions_origin_check CHECK ((origin = ANY (ARRAY['model'::text, 'structure'::text])))
);

ALTER TABLE exo_private.mentions OWNER TO exo_owner;

--
-- Name: TABLE mentions; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.mentions IS 'Where an entity was found: the extraction window, its document, and the chunk holding the name.';

--
-- Name: COLUMN mentions.origin; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.mentions.origin IS 'model: graph extraction named the entity in the window; structure: known from the source itself (a chat window''s senders), kept through every extraction and rebuilt with each generation.';

--
-- Name: people; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.people (
    id bigint NOT NULL,
    display_name text NOT NULL,
    is_owner boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    entity_key text,
    CONSTRAINT people_display_name_check CHECK ((btrim(display_name) <> ''::text))
);

ALTER TABLE exo_private.people OWNER TO exo_owner;

--
-- Name: TABLE people; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.people IS 'People behind chat identities. Exactly one row is the owner (the person whose corpus this is); their identities across sources all point at it.';

--
-- Name: COLUMN people.entity_key; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.people.entity_key IS 'Canonical key of the Person entity this person is in every workspace''s graph.';

--
-- Name: people_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.people ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.people_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: relations; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.relations (
    id bigint NOT NULL,
    workspace text NOT NULL,
    generation integer NOT NULL,
    subject_id bigint NOT NULL,
    object_id bigint NOT NULL,
    predicate_raw text NOT NULL,
    predicate text NOT NULL,
    window_id bigint NOT NULL,
    document_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    origin text DEFAULT 'model'::text NOT NULL,
    CONSTRAINT relations_origin_check CHECK ((origin = ANY (ARRAY['model'::text, 'structure'::text]))),
    CONSTRAINT relations_predicate_check CHECK ((predicate ~ '^[A-Z][A-Z0-9_]{0,62}$'::text))
);

ALTER TABLE exo_private.relations OWNER TO exo_owner;

--
-- Name: TABLE relations; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.relations IS 'Subject-predicate-object triples from one window; predicate is the normalised label, predicate_raw what the model said.';

--
-- Name: COLUMN relations.origin; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON COLUMN exo_private.relations.origin IS 'model: graph extraction returned it; structure: known from the source itself (people who talked in one chat window).';

--
-- Name: relations_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.relations ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.relations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: router_classes; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.router_classes (
    workspace text NOT NULL,
    documents integer NOT NULL,
    terms bigint NOT NULL,
    CONSTRAINT router_classes_documents_check CHECK ((documents > 0)),
    CONSTRAINT router_classes_terms_check CHECK ((terms >= 0))
);

ALTER TABLE exo_private.router_classes OWNER TO exo_owner;

--
-- Name: TABLE router_classes; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.router_classes IS 'Per workspace: how many documents trained the learned router and how many vocabulary words they hold.';

--
-- Name: router_state; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.router_state (
    singleton boolean DEFAULT true NOT NULL,
    generation bigint,
    fingerprint text,
    documents integer DEFAULT 0 NOT NULL,
    max_chars integer,
    term_cap integer,
    trained_at timestamp with time zone,
    CONSTRAINT router_state_singleton_check CHECK (singleton)
);

ALTER TABLE exo_private.router_state OWNER TO exo_owner;

--
-- Name: TABLE router_state; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.router_state IS 'One row: the learned router''s generation (bumped by each training; null before the first), the fingerprint of the training set it was trained on, and the counting rules it used.';

--
-- Name: router_terms; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.router_terms (
    term text NOT NULL,
    workspace text NOT NULL,
    count integer NOT NULL,
    CONSTRAINT router_terms_count_check CHECK ((count > 0))
);

ALTER TABLE exo_private.router_terms OWNER TO exo_owner;

--
-- Name: TABLE router_terms; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.router_terms IS 'The learned router''s vocabulary: how often each word occurs in each workspace''s training documents.';

--
-- Name: router_training; Type: VIEW; Schema: exo_private; Owner: exo_owner
--

CREATE VIEW exo_private.router_training AS
 SELECT id,
    workspace,
    sha256
   FROM exo_private.documents d
  WHERE ((workspace IS NOT NULL) AND (stage = ANY (ARRAY['chunked'::exo_private.document_stage, 'embedded'::exo_private.document_stage, 'graphed'::exo_private.document_stage])) AND (conversation_id IS NULL) AND (sha256 IS NOT NULL) AND ((route ->> 'method'::text) IS DISTINCT FROM 'learned'::text));

ALTER VIEW exo_private.router_training OWNER TO exo_owner;

--
-- Name: VIEW router_training; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON VIEW exo_private.router_training IS 'Documents that train the learned router: in a workspace by frontmatter, a forced workspace, a folder rule, a person''s review or a confident keyword route; never by a learned route.';

--
-- Name: schema_migrations; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.schema_migrations (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE exo_private.schema_migrations OWNER TO exo_owner;

--
-- Name: TABLE schema_migrations; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.schema_migrations IS 'migrations/NNNN_name.sql applied to this database, with the sha256 each had';

--
-- Name: sources; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.sources (
    id integer NOT NULL,
    root text NOT NULL,
    workspace text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_scan_at timestamp with time zone
);

ALTER TABLE exo_private.sources OWNER TO exo_owner;

--
-- Name: TABLE sources; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.sources IS 'Folders ingested (a vault, an archive); workspace is set when `exo ingest --workspace` forces one.';

--
-- Name: sources_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.sources ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.sources_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: text_cache; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.text_cache (
    sha256 text NOT NULL,
    body text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    needs_ocr boolean DEFAULT false NOT NULL,
    extractor_version text NOT NULL,
    extracted_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE exo_private.text_cache OWNER TO exo_owner;

--
-- Name: TABLE text_cache; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.text_cache IS 'Extracted text keyed by content hash: each file''s text is extracted exactly once.';

--
-- Name: unreadable_folders; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.unreadable_folders (
    source_id integer NOT NULL,
    path_bytes bytea NOT NULL,
    path text NOT NULL,
    error text NOT NULL,
    first_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE exo_private.unreadable_folders OWNER TO exo_owner;

--
-- Name: TABLE unreadable_folders; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.unreadable_folders IS 'Folders the last scan of a source could not list, with the error; the documents stored from them are kept as they were until a scan lists the folder again.';

--
-- Name: worker_claims; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.worker_claims (
    queue text NOT NULL,
    msg_id bigint NOT NULL,
    worker_id bigint NOT NULL,
    claimed_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE exo_private.worker_claims OWNER TO exo_owner;

--
-- Name: TABLE worker_claims; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.worker_claims IS 'The worker that last read each message still being worked on; written in the read''s transaction, removed when the job ends. A dead worker''s claims are released by reap_workers.';

--
-- Name: workers; Type: TABLE; Schema: exo_private; Owner: exo_owner
--

CREATE TABLE exo_private.workers (
    id bigint NOT NULL,
    name text NOT NULL,
    pid integer NOT NULL,
    hostname text NOT NULL,
    queues text[] NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    heartbeat_at timestamp with time zone DEFAULT now() NOT NULL,
    stopped_at timestamp with time zone,
    stop_reason text,
    processed bigint DEFAULT 0 NOT NULL
);

ALTER TABLE exo_private.workers OWNER TO exo_owner;

--
-- Name: TABLE workers; Type: COMMENT; Schema: exo_private; Owner: exo_owner
--

COMMENT ON TABLE exo_private.workers IS 'Worker processes with heartbeats, for `exo status`.';

--
-- Name: workers_id_seq; Type: SEQUENCE; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.workers ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME exo_private.workers_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: _ag_label_edge; Type: TABLE; Schema: graph_administrative; Owner: exo_owner
--

CREATE TABLE graph_administrative._ag_label_edge (
    id ag_catalog.graphid NOT NULL,
    start_id ag_catalog.graphid NOT NULL,
    end_id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_administrative._ag_label_edge OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE; Schema: graph_administrative; Owner: exo_owner
--

CREATE SEQUENCE graph_administrative._ag_label_edge_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_administrative._ag_label_edge_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_administrative; Owner: exo_owner
--

ALTER SEQUENCE graph_administrative._ag_label_edge_id_seq OWNED BY graph_administrative._ag_label_edge.id;

--
-- Name: _ag_label_vertex; Type: TABLE; Schema: graph_administrative; Owner: exo_owner
--

CREATE TABLE graph_administrative._ag_label_vertex (
    id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_administrative._ag_label_vertex OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE; Schema: graph_administrative; Owner: exo_owner
--

CREATE SEQUENCE graph_administrative._ag_label_vertex_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_administrative._ag_label_vertex_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_administrative; Owner: exo_owner
--

ALTER SEQUENCE graph_administrative._ag_label_vertex_id_seq OWNED BY graph_administrative._ag_label_vertex.id;

--
-- Name: _label_id_seq; Type: SEQUENCE; Schema: graph_administrative; Owner: exo_owner
--

CREATE SEQUENCE graph_administrative._label_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 65535
    CACHE 1
    CYCLE;

ALTER SEQUENCE graph_administrative._label_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge; Type: TABLE; Schema: graph_creative; Owner: exo_owner
--

CREATE TABLE graph_creative._ag_label_edge (
    id ag_catalog.graphid NOT NULL,
    start_id ag_catalog.graphid NOT NULL,
    end_id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_creative._ag_label_edge OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE; Schema: graph_creative; Owner: exo_owner
--

CREATE SEQUENCE graph_creative._ag_label_edge_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_creative._ag_label_edge_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_creative; Owner: exo_owner
--

ALTER SEQUENCE graph_creative._ag_label_edge_id_seq OWNED BY graph_creative._ag_label_edge.id;

--
-- Name: _ag_label_vertex; Type: TABLE; Schema: graph_creative; Owner: exo_owner
--

CREATE TABLE graph_creative._ag_label_vertex (
    id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_creative._ag_label_vertex OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE; Schema: graph_creative; Owner: exo_owner
--

CREATE SEQUENCE graph_creative._ag_label_vertex_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_creative._ag_label_vertex_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_creative; Owner: exo_owner
--

ALTER SEQUENCE graph_creative._ag_label_vertex_id_seq OWNED BY graph_creative._ag_label_vertex.id;

--
-- Name: _label_id_seq; Type: SEQUENCE; Schema: graph_creative; Owner: exo_owner
--

CREATE SEQUENCE graph_creative._label_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 65535
    CACHE 1
    CYCLE;

ALTER SEQUENCE graph_creative._label_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge; Type: TABLE; Schema: graph_personal; Owner: exo_owner
--

CREATE TABLE graph_personal._ag_label_edge (
    id ag_catalog.graphid NOT NULL,
    start_id ag_catalog.graphid NOT NULL,
    end_id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_personal._ag_label_edge OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE; Schema: graph_personal; Owner: exo_owner
--

CREATE SEQUENCE graph_personal._ag_label_edge_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_personal._ag_label_edge_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_personal; Owner: exo_owner
--

ALTER SEQUENCE graph_personal._ag_label_edge_id_seq OWNED BY graph_personal._ag_label_edge.id;

--
-- Name: _ag_label_vertex; Type: TABLE; Schema: graph_personal; Owner: exo_owner
--

CREATE TABLE graph_personal._ag_label_vertex (
    id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_personal._ag_label_vertex OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE; Schema: graph_personal; Owner: exo_owner
--

CREATE SEQUENCE graph_personal._ag_label_vertex_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_personal._ag_label_vertex_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_personal; Owner: exo_owner
--

ALTER SEQUENCE graph_personal._ag_label_vertex_id_seq OWNED BY graph_personal._ag_label_vertex.id;

--
-- Name: _label_id_seq; Type: SEQUENCE; Schema: graph_personal; Owner: exo_owner
--

CREATE SEQUENCE graph_personal._label_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 65535
    CACHE 1
    CYCLE;

ALTER SEQUENCE graph_personal._label_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge; Type: TABLE; Schema: graph_technical; Owner: exo_owner
--

CREATE TABLE graph_technical._ag_label_edge (
    id ag_catalog.graphid NOT NULL,
    start_id ag_catalog.graphid NOT NULL,
    end_id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_technical._ag_label_edge OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE; Schema: graph_technical; Owner: exo_owner
--

CREATE SEQUENCE graph_technical._ag_label_edge_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_technical._ag_label_edge_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_edge_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_technical; Owner: exo_owner
--

ALTER SEQUENCE graph_technical._ag_label_edge_id_seq OWNED BY graph_technical._ag_label_edge.id;

--
-- Name: _ag_label_vertex; Type: TABLE; Schema: graph_technical; Owner: exo_owner
--

CREATE TABLE graph_technical._ag_label_vertex (
    id ag_catalog.graphid NOT NULL,
    properties ag_catalog.agtype DEFAULT ag_catalog.agtype_build_map() NOT NULL
);

ALTER TABLE graph_technical._ag_label_vertex OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE; Schema: graph_technical; Owner: exo_owner
--

CREATE SEQUENCE graph_technical._ag_label_vertex_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 281474976710655
    CACHE 1;

ALTER SEQUENCE graph_technical._ag_label_vertex_id_seq OWNER TO exo_owner;

--
-- Name: _ag_label_vertex_id_seq; Type: SEQUENCE OWNED BY; Schema: graph_technical; Owner: exo_owner
--

ALTER SEQUENCE graph_technical._ag_label_vertex_id_seq OWNED BY graph_technical._ag_label_vertex.id;

--
-- Name: _label_id_seq; Type: SEQUENCE; Schema: graph_technical; Owner: exo_owner
--

CREATE SEQUENCE graph_technical._label_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 65535
    CACHE 1
    CYCLE;

ALTER SEQUENCE graph_technical._label_id_seq OWNER TO exo_owner;

--
-- Name: a_dead_letter; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.a_dead_letter (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    archived_at timestamp with time zone DEFAULT now() NOT NULL,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.a_dead_letter OWNER TO exo_owner;

--
-- Name: a_embed; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.a_embed (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    archived_at timestamp with time zone DEFAULT now() NOT NULL,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.a_embed OWNER TO exo_owner;

--
-- Name: a_extract; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.a_extract (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    archived_at timestamp with time zone DEFAULT now() NOT NULL,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.a_extract OWNER TO exo_owner;

--
-- Name: a_ocr; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.a_ocr (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    archived_at timestamp with time zone DEFAULT now() NOT NULL,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.a_ocr OWNER TO exo_owner;

--
-- Name: meta; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.meta (
    queue_name character varying NOT NULL,
    is_partitioned boolean NOT NULL,
    is_unlogged boolean NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE pgmq.meta OWNER TO exo_owner;

--
-- Name: notify_insert_throttle; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE UNLOGGED TABLE pgmq.notify_insert_throttle (
    queue_name character varying NOT NULL,
    throttle_interval_ms integer DEFAULT 0 NOT NULL,
    last_notified_at timestamp with time zone DEFAULT to_timestamp((0)::double precision) NOT NULL
);

ALTER TABLE pgmq.notify_insert_throttle OWNER TO exo_owner;

--
-- Name: q_dead_letter; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.q_dead_letter (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.q_dead_letter OWNER TO exo_owner;

--
-- Name: q_dead_letter_msg_id_seq; Type: SEQUENCE; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE pgmq.q_dead_letter ALTER COLUMN msg_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgmq.q_dead_letter_msg_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: q_embed; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.q_embed (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.q_embed OWNER TO exo_owner;

--
-- Name: q_embed_msg_id_seq; Type: SEQUENCE; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE pgmq.q_embed ALTER COLUMN msg_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgmq.q_embed_msg_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: q_extract; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.q_extract (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.q_extract OWNER TO exo_owner;

--
-- Name: q_extract_msg_id_seq; Type: SEQUENCE; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE pgmq.q_extract ALTER COLUMN msg_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgmq.q_extract_msg_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: q_ocr; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.q_ocr (
    msg_id bigint NOT NULL,
    read_ct integer DEFAULT 0 NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_at timestamp with time zone,
    vt timestamp with time zone NOT NULL,
    message jsonb,
    headers jsonb
);

ALTER TABLE pgmq.q_ocr OWNER TO exo_owner;

--
-- Name: q_ocr_msg_id_seq; Type: SEQUENCE; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE pgmq.q_ocr ALTER COLUMN msg_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgmq.q_ocr_msg_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: topic_bindings; Type: TABLE; Schema: pgmq; Owner: exo_owner
--

CREATE TABLE pgmq.topic_bindings (
    pattern text NOT NULL,
    queue_name text NOT NULL,
    bound_at timestamp with time zone DEFAULT now() NOT NULL,
    compiled_regex text GENERATED ALWAYS AS ((('^'::text || replace(replace(regexp_replace(pattern, '([.+?{}()|\[\]\\^$])'::text, '\\\1'::text, 'g'::text), '*'::text, '[^.]+'::text), '#'::text, '.*'::text)) || '$'::text)) STORED
);

ALTER TABLE pgmq.topic_bindings OWNER TO exo_owner;

--
-- Name: chunk_embeddings_administrative; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings ATTACH PARTITION exo_private.chunk_embeddings_administrative FOR VALUES IN ('administrative');

--
-- Name: chunk_embeddings_creative; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings ATTACH PARTITION exo_private.chunk_embeddings_creative FOR VALUES IN ('creative');

--
-- Name: chunk_embeddings_personal; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings ATTACH PARTITION exo_private.chunk_embeddings_personal FOR VALUES IN ('personal');

--
-- Name: chunk_embeddings_technical; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings ATTACH PARTITION exo_private.chunk_embeddings_technical FOR VALUES IN ('technical');

--
-- Name: chunks_administrative; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks ATTACH PARTITION exo_private.chunks_administrative FOR VALUES IN ('administrative');

--
-- Name: chunks_creative; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks ATTACH PARTITION exo_private.chunks_creative FOR VALUES IN ('creative');

--
-- Name: chunks_personal; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks ATTACH PARTITION exo_private.chunks_personal FOR VALUES IN ('personal');

--
-- Name: chunks_technical; Type: TABLE ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks ATTACH PARTITION exo_private.chunks_technical FOR VALUES IN ('technical');

--
-- Name: _ag_label_edge id; Type: DEFAULT; Schema: graph_administrative; Owner: exo_owner
--

ALTER TABLE ONLY graph_administrative._ag_label_edge ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_administrative'::name, '_ag_label_edge'::name))::integer, nextval('graph_administrative._ag_label_edge_id_seq'::regclass));

--
-- Name: _ag_label_vertex id; Type: DEFAULT; Schema: graph_administrative; Owner: exo_owner
--

ALTER TABLE ONLY graph_administrative._ag_label_vertex ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_administrative'::name, '_ag_label_vertex'::name))::integer, nextval('graph_administrative._ag_label_vertex_id_seq'::regclass));

--
-- Name: _ag_label_edge id; Type: DEFAULT; Schema: graph_creative; Owner: exo_owner
--

ALTER TABLE ONLY graph_creative._ag_label_edge ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_creative'::name, '_ag_label_edge'::name))::integer, nextval('graph_creative._ag_label_edge_id_seq'::regclass));

--
-- Name: _ag_label_vertex id; Type: DEFAULT; Schema: graph_creative; Owner: exo_owner
--

ALTER TABLE ONLY graph_creative._ag_label_vertex ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_creative'::name, '_ag_label_vertex'::name))::integer, nextval('graph_creative._ag_label_vertex_id_seq'::regclass));

--
-- Name: _ag_label_edge id; Type: DEFAULT; Schema: graph_personal; Owner: exo_owner
--

ALTER TABLE ONLY graph_personal._ag_label_edge ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_personal'::name, '_ag_label_edge'::name))::integer, nextval('graph_personal._ag_label_edge_id_seq'::regclass));

--
-- Name: _ag_label_vertex id; Type: DEFAULT; Schema: graph_personal; Owner: exo_owner
--

ALTER TABLE ONLY graph_personal._ag_label_vertex ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_personal'::name, '_ag_label_vertex'::name))::integer, nextval('graph_personal._ag_label_vertex_id_seq'::regclass));

--
-- Name: _ag_label_edge id; Type: DEFAULT; Schema: graph_technical; Owner: exo_owner
--

ALTER TABLE ONLY graph_technical._ag_label_edge ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_technical'::name, '_ag_label_edge'::name))::integer, nextval('graph_technical._ag_label_edge_id_seq'::regclass));

--
-- Name: _ag_label_vertex id; Type: DEFAULT; Schema: graph_technical; Owner: exo_owner
--

ALTER TABLE ONLY graph_technical._ag_label_vertex ALTER COLUMN id SET DEFAULT ag_catalog._graphid((ag_catalog._label_id('graph_technical'::name, '_ag_label_vertex'::name))::integer, nextval('graph_technical._ag_label_vertex_id_seq'::regclass));

--
-- Name: chat_conversations chat_conversations_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_conversations
    ADD CONSTRAINT chat_conversations_pkey PRIMARY KEY (id);

--
-- Name: chat_conversations chat_conversations_source_external_id_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_conversations
    ADD CONSTRAINT chat_conversations_source_external_id_key UNIQUE (source, external_id);

--
-- Name: chat_identities chat_identities_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_identities
    ADD CONSTRAINT chat_identities_pkey PRIMARY KEY (id);

--
-- Name: chat_identities chat_identities_source_handle_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_identities
    ADD CONSTRAINT chat_identities_source_handle_key UNIQUE (source, handle);

--
-- Name: chat_messages chat_messages_conversation_id_dedupe_key_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_messages
    ADD CONSTRAINT chat_messages_conversation_id_dedupe_key_key UNIQUE (conversation_id, dedupe_key);

--
-- Name: chat_messages chat_messages_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_messages
    ADD CONSTRAINT chat_messages_pkey PRIMARY KEY (id);

--
-- Name: chat_participants chat_participants_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_participants
    ADD CONSTRAINT chat_participants_pkey PRIMARY KEY (conversation_id, identity_id);

--
-- Name: chat_windows chat_windows_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_windows
    ADD CONSTRAINT chat_windows_pkey PRIMARY KEY (workspace, chunk_id);

--
-- Name: chunk_embeddings chunk_embeddings_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings
    ADD CONSTRAINT chunk_embeddings_pkey PRIMARY KEY (workspace, model_id, chunk_id);

--
-- Name: chunk_embeddings_administrative chunk_embeddings_administrative_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings_administrative
    ADD CONSTRAINT chunk_embeddings_administrative_pkey PRIMARY KEY (workspace, model_id, chunk_id);

--
-- Name: chunk_embeddings_creative chunk_embeddings_creative_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings_creative
    ADD CONSTRAINT chunk_embeddings_creative_pkey PRIMARY KEY (workspace, model_id, chunk_id);

--
-- Name: chunk_embeddings_personal chunk_embeddings_personal_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings_personal
    ADD CONSTRAINT chunk_embeddings_personal_pkey PRIMARY KEY (workspace, model_id, chunk_id);

--
-- Name: chunk_embeddings_technical chunk_embeddings_technical_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunk_embeddings_technical
    ADD CONSTRAINT chunk_embeddings_technical_pkey PRIMARY KEY (workspace, model_id, chunk_id);

--
-- Name: chunks chunks_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks
    ADD CONSTRAINT chunks_pkey PRIMARY KEY (workspace, id);

--
-- Name: chunks_administrative chunks_administrative_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_administrative
    ADD CONSTRAINT chunks_administrative_pkey PRIMARY KEY (workspace, id);

--
-- Name: chunks chunks_workspace_document_id_ordinal_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks
    ADD CONSTRAINT chunks_workspace_document_id_ordinal_key UNIQUE (workspace, document_id, ordinal);

--
-- Name: chunks_administrative chunks_administrative_workspace_document_id_ordinal_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_administrative
    ADD CONSTRAINT chunks_administrative_workspace_document_id_ordinal_key UNIQUE (workspace, document_id, ordinal);

--
-- Name: chunks_creative chunks_creative_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_creative
    ADD CONSTRAINT chunks_creative_pkey PRIMARY KEY (workspace, id);

--
-- Name: chunks_creative chunks_creative_workspace_document_id_ordinal_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_creative
    ADD CONSTRAINT chunks_creative_workspace_document_id_ordinal_key UNIQUE (workspace, document_id, ordinal);

--
-- Name: chunks_personal chunks_personal_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_personal
    ADD CONSTRAINT chunks_personal_pkey PRIMARY KEY (workspace, id);

--
-- Name: chunks_personal chunks_personal_workspace_document_id_ordinal_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_personal
    ADD CONSTRAINT chunks_personal_workspace_document_id_ordinal_key UNIQUE (workspace, document_id, ordinal);

--
-- Name: chunks_technical chunks_technical_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_technical
    ADD CONSTRAINT chunks_technical_pkey PRIMARY KEY (workspace, id);

--
-- Name: chunks_technical chunks_technical_workspace_document_id_ordinal_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chunks_technical
    ADD CONSTRAINT chunks_technical_workspace_document_id_ordinal_key UNIQUE (workspace, document_id, ordinal);

--
-- Name: components components_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.components
    ADD CONSTRAINT components_pkey PRIMARY KEY (name);

--
-- Name: deferred_subjects deferred_subjects_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.deferred_subjects
    ADD CONSTRAINT deferred_subjects_pkey PRIMARY KEY (subject);

--
-- Name: document_links document_links_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.document_links
    ADD CONSTRAINT document_links_pkey PRIMARY KEY (source_document, target);

--
-- Name: documents documents_conversation_id_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.documents
    ADD CONSTRAINT documents_conversation_id_key UNIQUE (conversation_id);

--
-- Name: documents documents_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.documents
    ADD CONSTRAINT documents_pkey PRIMARY KEY (id);

--
-- Name: embedding_models embedding_models_name_dimensions_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.embedding_models
    ADD CONSTRAINT embedding_models_name_dimensions_key UNIQUE (name, dimensions);

--
-- Name: embedding_models embedding_models_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.embedding_models
    ADD CONSTRAINT embedding_models_pkey PRIMARY KEY (id);

--
-- Name: entities entities_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.entities
    ADD CONSTRAINT entities_pkey PRIMARY KEY (id);

--
-- Name: entities entities_workspace_generation_type_canonical_key_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.entities
    ADD CONSTRAINT entities_workspace_generation_type_canonical_key_key UNIQUE (workspace, generation, type, canonical_key);

--
-- Name: extraction_generations extraction_generations_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.extraction_generations
    ADD CONSTRAINT extraction_generations_pkey PRIMARY KEY (workspace, generation);

--
-- Name: extraction_windows extraction_windows_document_id_ordinal_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.extraction_windows
    ADD CONSTRAINT extraction_windows_document_id_ordinal_key UNIQUE (document_id, ordinal);

--
-- Name: extraction_windows extraction_windows_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.extraction_windows
    ADD CONSTRAINT extraction_windows_pkey PRIMARY KEY (id);

--
-- Name: ingest_runs ingest_runs_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.ingest_runs
    ADD CONSTRAINT ingest_runs_pkey PRIMARY KEY (id);

--
-- Name: job_failures job_failures_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.job_failures
    ADD CONSTRAINT job_failures_pkey PRIMARY KEY (id);

--
-- Name: mentions mentions_entity_id_window_id_chunk_id_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.mentions
    ADD CONSTRAINT mentions_entity_id_window_id_chunk_id_key UNIQUE NULLS NOT DISTINCT (entity_id, window_id, chunk_id);

--
-- Name: people people_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.people
    ADD CONSTRAINT people_pkey PRIMARY KEY (id);

--
-- Name: relations relations_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_pkey PRIMARY KEY (id);

--
-- Name: relations relations_subject_id_predicate_object_id_window_id_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_subject_id_predicate_object_id_window_id_key UNIQUE (subject_id, predicate, object_id, window_id);

--
-- Name: router_classes router_classes_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.router_classes
    ADD CONSTRAINT router_classes_pkey PRIMARY KEY (workspace);

--
-- Name: router_state router_state_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.router_state
    ADD CONSTRAINT router_state_pkey PRIMARY KEY (singleton);

--
-- Name: router_terms router_terms_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.router_terms
    ADD CONSTRAINT router_terms_pkey PRIMARY KEY (term, workspace);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (name);

--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (key);

--
-- Name: sources sources_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.sources
    ADD CONSTRAINT sources_pkey PRIMARY KEY (id);

--
-- Name: sources sources_root_key; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.sources
    ADD CONSTRAINT sources_root_key UNIQUE (root);

--
-- Name: text_cache text_cache_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.text_cache
    ADD CONSTRAINT text_cache_pkey PRIMARY KEY (sha256);

--
-- Name: worker_claims worker_claims_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.worker_claims
    ADD CONSTRAINT worker_claims_pkey PRIMARY KEY (queue, msg_id);

--
-- Name: workers workers_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (id);

--
-- Name: workspaces workspaces_pkey; Type: CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.workspaces
    ADD CONSTRAINT workspaces_pkey PRIMARY KEY (name);

--
-- Name: _ag_label_edge _ag_label_edge_pkey; Type: CONSTRAINT; Schema: graph_administrative; Owner: exo_owner
--

ALTER TABLE ONLY graph_administrative._ag_label_edge
    ADD CONSTRAINT _ag_label_edge_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_vertex _ag_label_vertex_pkey; Type: CONSTRAINT; Schema: graph_administrative; Owner: exo_owner
--

ALTER TABLE ONLY graph_administrative._ag_label_vertex
    ADD CONSTRAINT _ag_label_vertex_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_edge _ag_label_edge_pkey; Type: CONSTRAINT; Schema: graph_creative; Owner: exo_owner
--

ALTER TABLE ONLY graph_creative._ag_label_edge
    ADD CONSTRAINT _ag_label_edge_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_vertex _ag_label_vertex_pkey; Type: CONSTRAINT; Schema: graph_creative; Owner: exo_owner
--

ALTER TABLE ONLY graph_creative._ag_label_vertex
    ADD CONSTRAINT _ag_label_vertex_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_edge _ag_label_edge_pkey; Type: CONSTRAINT; Schema: graph_personal; Owner: exo_owner
--

ALTER TABLE ONLY graph_personal._ag_label_edge
    ADD CONSTRAINT _ag_label_edge_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_vertex _ag_label_vertex_pkey; Type: CONSTRAINT; Schema: graph_personal; Owner: exo_owner
--

ALTER TABLE ONLY graph_personal._ag_label_vertex
    ADD CONSTRAINT _ag_label_vertex_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_edge _ag_label_edge_pkey; Type: CONSTRAINT; Schema: graph_technical; Owner: exo_owner
--

ALTER TABLE ONLY graph_technical._ag_label_edge
    ADD CONSTRAINT _ag_label_edge_pkey PRIMARY KEY (id);

--
-- Name: _ag_label_vertex _ag_label_vertex_pkey; Type: CONSTRAINT; Schema: graph_technical; Owner: exo_owner
--

ALTER TABLE ONLY graph_technical._ag_label_vertex
    ADD CONSTRAINT _ag_label_vertex_pkey PRIMARY KEY (id);

--
-- Name: a_dead_letter a_dead_letter_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.a_dead_letter
    ADD CONSTRAINT a_dead_letter_pkey PRIMARY KEY (msg_id);

--
-- Name: a_embed a_embed_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.a_embed
    ADD CONSTRAINT a_embed_pkey PRIMARY KEY (msg_id);

--
-- Name: a_extract a_extract_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.a_extract
    ADD CONSTRAINT a_extract_pkey PRIMARY KEY (msg_id);

--
-- Name: a_ocr a_ocr_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.a_ocr
    ADD CONSTRAINT a_ocr_pkey PRIMARY KEY (msg_id);

--
-- Name: meta meta_queue_name_key; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.meta
    ADD CONSTRAINT meta_queue_name_key UNIQUE (queue_name);

--
-- Name: notify_insert_throttle notify_insert_throttle_queue_name_key; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.notify_insert_throttle
    ADD CONSTRAINT notify_insert_throttle_queue_name_key UNIQUE (queue_name);

--
-- Name: q_dead_letter q_dead_letter_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.q_dead_letter
    ADD CONSTRAINT q_dead_letter_pkey PRIMARY KEY (msg_id);

--
-- Name: q_embed q_embed_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.q_embed
    ADD CONSTRAINT q_embed_pkey PRIMARY KEY (msg_id);

--
-- Name: q_extract q_extract_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.q_extract
    ADD CONSTRAINT q_extract_pkey PRIMARY KEY (msg_id);

--
-- Name: q_ocr q_ocr_pkey; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.q_ocr
    ADD CONSTRAINT q_ocr_pkey PRIMARY KEY (msg_id);

--
-- Name: topic_bindings topic_bindings_unique_pattern_queue; Type: CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.topic_bindings
    ADD CONSTRAINT topic_bindings_unique_pattern_queue UNIQUE (pattern, queue_name);

--
-- Name: chat_identities_person; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_identities_person ON exo_private.chat_identities USING btree (person_id);

--
-- Name: chat_messages_bm25; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_messages_bm25 ON exo_private.chat_messages USING bm25 (body) WITH (text_config=english);

--
-- Name: chat_messages_charged_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_messages_charged_idx ON exo_private.chat_messages USING gin (charged_subjects) WHERE (charged_subjects <> '{}'::text[]);

--
-- Name: chat_messages_conversation_time; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_messages_conversation_time ON exo_private.chat_messages USING btree (conversation_id, sent_at);

--
-- Name: chat_messages_identity; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_messages_identity ON exo_private.chat_messages USING btree (identity_id);

--
-- Name: chat_messages_unmarked_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_messages_unmarked_idx ON exo_private.chat_messages USING btree (conversation_id) WHERE (charged IS NULL);

--
-- Name: chat_participants_identity; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_participants_identity ON exo_private.chat_participants USING btree (identity_id);

--
-- Name: chat_windows_conversation_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_windows_conversation_idx ON exo_private.chat_windows USING btree (conversation_id);

--
-- Name: chat_windows_message_ids_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chat_windows_message_ids_idx ON exo_private.chat_windows USING gin (message_ids);

--
-- Name: chunks_administrative_bm25; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_administrative_bm25 ON exo_private.chunks_administrative USING bm25 (body) WITH (text_config=english);

--
-- Name: chunks_charged_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_charged_idx ON ONLY exo_private.chunks USING gin (charged_subjects) WHERE (charged_subjects <> '{}'::text[]);

--
-- Name: chunks_administrative_charged_subjects_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_administrative_charged_subjects_idx ON exo_private.chunks_administrative USING gin (charged_subjects) WHERE (charged_subjects <> '{}'::text[]);

--
-- Name: chunks_administrative_document_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_administrative_document_idx ON exo_private.chunks_administrative USING btree (document_id);

--
-- Name: chunks_creative_bm25; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_creative_bm25 ON exo_private.chunks_creative USING bm25 (body) WITH (text_config=english);

--
-- Name: chunks_creative_charged_subjects_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_creative_charged_subjects_idx ON exo_private.chunks_creative USING gin (charged_subjects) WHERE (charged_subjects <> '{}'::text[]);

--
-- Name: chunks_creative_document_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_creative_document_idx ON exo_private.chunks_creative USING btree (document_id);

--
-- Name: chunks_personal_bm25; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_personal_bm25 ON exo_private.chunks_personal USING bm25 (body) WITH (text_config=english);

--
-- Name: chunks_personal_charged_subjects_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_personal_charged_subjects_idx ON exo_private.chunks_personal USING gin (charged_subjects) WHERE (charged_subjects <> '{}'::text[]);

--
-- Name: chunks_personal_document_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_personal_document_idx ON exo_private.chunks_personal USING btree (document_id);

--
-- Name: chunks_technical_bm25; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_technical_bm25 ON exo_private.chunks_technical USING bm25 (body) WITH (text_config=english);

--
-- Name: chunks_technical_charged_subjects_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_technical_charged_subjects_idx ON exo_private.chunks_technical USING gin (charged_subjects) WHERE (charged_subjects <> '{}'::text[]);

--
-- Name: chunks_technical_document_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX chunks_technical_document_idx ON exo_private.chunks_technical USING btree (document_id);

--
-- Name: document_links_target_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX document_links_target_idx ON exo_private.document_links USING btree (target_document);

--
-- Name: documents_file_name_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_file_name_idx ON exo_private.documents USING btree (file_name);

--
-- Name: documents_file_stem_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_file_stem_idx ON exo_private.documents USING btree (file_stem);

--
-- Name: documents_path_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_path_idx ON exo_private.documents USING hash (path);

--
-- Name: documents_sha256_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_sha256_idx ON exo_private.documents USING btree (sha256);

--
-- Name: documents_source_path_bytes_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE UNIQUE INDEX documents_source_path_bytes_idx ON exo_private.documents USING btree (source_id, sha256(path_bytes));

--
-- Name: documents_stage_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_stage_idx ON exo_private.documents USING btree (stage);

--
-- Name: documents_title_key_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_title_key_idx ON exo_private.documents USING btree (title_key);

--
-- Name: documents_workspace_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX documents_workspace_idx ON exo_private.documents USING btree (workspace);

--
-- Name: entities_key_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX entities_key_idx ON exo_private.entities USING btree (canonical_key);

--
-- Name: entities_person_first_key_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX entities_person_first_key_idx ON exo_private.entities USING btree (workspace, split_part(canonical_key, ' '::text, 1)) WHERE (type = 'Person'::exo_private.entity_type);

--
-- Name: job_failures_target_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX job_failures_target_idx ON exo_private.job_failures USING btree (queue, target_id);

--
-- Name: mentions_chunk_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX mentions_chunk_idx ON exo_private.mentions USING btree (chunk_id);

--
-- Name: mentions_document_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX mentions_document_idx ON exo_private.mentions USING btree (document_id);

--
-- Name: mentions_entity_chunk_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX mentions_entity_chunk_idx ON exo_private.mentions USING btree (entity_id, chunk_id);

--
-- Name: mentions_model_entity_chunk_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX mentions_model_entity_chunk_idx ON exo_private.mentions USING btree (entity_id, chunk_id DESC) WHERE ((origin = 'model'::text) AND (chunk_id IS NOT NULL));

--
-- Name: people_one_owner; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE UNIQUE INDEX people_one_owner ON exo_private.people USING btree (is_owner) WHERE is_owner;

--
-- Name: relations_object_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX relations_object_idx ON exo_private.relations USING btree (object_id, subject_id);

--
-- Name: relations_subject_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX relations_subject_idx ON exo_private.relations USING btree (subject_id, object_id);

--
-- Name: unreadable_folders_key_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE UNIQUE INDEX unreadable_folders_key_idx ON exo_private.unreadable_folders USING btree (source_id, sha256(path_bytes));

--
-- Name: worker_claims_worker_idx; Type: INDEX; Schema: exo_private; Owner: exo_owner
--

CREATE INDEX worker_claims_worker_idx ON exo_private.worker_claims USING btree (worker_id);

--
-- Name: _ag_label_edge_end_id_idx; Type: INDEX; Schema: graph_administrative; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_end_id_idx ON graph_administrative._ag_label_edge USING btree (end_id);

--
-- Name: _ag_label_edge_start_id_idx; Type: INDEX; Schema: graph_administrative; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_start_id_idx ON graph_administrative._ag_label_edge USING btree (start_id);

--
-- Name: _ag_label_edge_end_id_idx; Type: INDEX; Schema: graph_creative; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_end_id_idx ON graph_creative._ag_label_edge USING btree (end_id);

--
-- Name: _ag_label_edge_start_id_idx; Type: INDEX; Schema: graph_creative; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_start_id_idx ON graph_creative._ag_label_edge USING btree (start_id);

--
-- Name: _ag_label_edge_end_id_idx; Type: INDEX; Schema: graph_personal; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_end_id_idx ON graph_personal._ag_label_edge USING btree (end_id);

--
-- Name: _ag_label_edge_start_id_idx; Type: INDEX; Schema: graph_personal; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_start_id_idx ON graph_personal._ag_label_edge USING btree (start_id);

--
-- Name: _ag_label_edge_end_id_idx; Type: INDEX; Schema: graph_technical; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_end_id_idx ON graph_technical._ag_label_edge USING btree (end_id);

--
-- Name: _ag_label_edge_start_id_idx; Type: INDEX; Schema: graph_technical; Owner: exo_owner
--

CREATE INDEX _ag_label_edge_start_id_idx ON graph_technical._ag_label_edge USING btree (start_id);

--
-- Name: archived_at_idx_dead_letter; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX archived_at_idx_dead_letter ON pgmq.a_dead_letter USING btree (archived_at);

--
-- Name: archived_at_idx_embed; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX archived_at_idx_embed ON pgmq.a_embed USING btree (archived_at);

--
-- Name: archived_at_idx_extract; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX archived_at_idx_extract ON pgmq.a_extract USING btree (archived_at);

--
-- Name: archived_at_idx_ocr; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX archived_at_idx_ocr ON pgmq.a_ocr USING btree (archived_at);

--
-- Name: idx_notify_throttle_active; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX idx_notify_throttle_active ON pgmq.notify_insert_throttle USING btree (queue_name, last_notified_at) WHERE (throttle_interval_ms > 0);

--
-- Name: idx_topic_bindings_covering; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX idx_topic_bindings_covering ON pgmq.topic_bindings USING btree (pattern) INCLUDE (queue_name, compiled_regex);

--
-- Name: q_dead_letter_vt_idx; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX q_dead_letter_vt_idx ON pgmq.q_dead_letter USING btree (vt);

--
-- Name: q_embed_vt_idx; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX q_embed_vt_idx ON pgmq.q_embed USING btree (vt);

--
-- Name: q_extract_vt_idx; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX q_extract_vt_idx ON pgmq.q_extract USING btree (vt);

--
-- Name: q_ocr_vt_idx; Type: INDEX; Schema: pgmq; Owner: exo_owner
--

CREATE INDEX q_ocr_vt_idx ON pgmq.q_ocr USING btree (vt);

--
-- Name: chunk_embeddings_administrative_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunk_embeddings_pkey ATTACH PARTITION exo_private.chunk_embeddings_administrative_pkey;

--
-- Name: chunk_embeddings_creative_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunk_embeddings_pkey ATTACH PARTITION exo_private.chunk_embeddings_creative_pkey;

--
-- Name: chunk_embeddings_personal_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunk_embeddings_pkey ATTACH PARTITION exo_private.chunk_embeddings_personal_pkey;

--
-- Name: chunk_embeddings_technical_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunk_embeddings_pkey ATTACH PARTITION exo_private.chunk_embeddings_technical_pkey;

--
-- Name: chunks_administrative_charged_subjects_idx; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_charged_idx ATTACH PARTITION exo_private.chunks_administrative_charged_subjects_idx;

--
-- Name: chunks_administrative_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_pkey ATTACH PARTITION exo_private.chunks_administrative_pkey;

--
-- Name: chunks_administrative_workspace_document_id_ordinal_key; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_workspace_document_id_ordinal_key ATTACH PARTITION exo_private.chunks_administrative_workspace_document_id_ordinal_key;

--
-- Name: chunks_creative_charged_subjects_idx; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_charged_idx ATTACH PARTITION exo_private.chunks_creative_charged_subjects_idx;

--
-- Name: chunks_creative_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_pkey ATTACH PARTITION exo_private.chunks_creative_pkey;

--
-- Name: chunks_creative_workspace_document_id_ordinal_key; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_workspace_document_id_ordinal_key ATTACH PARTITION exo_private.chunks_creative_workspace_document_id_ordinal_key;

--
-- Name: chunks_personal_charged_subjects_idx; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_charged_idx ATTACH PARTITION exo_private.chunks_personal_charged_subjects_idx;

--
-- Name: chunks_personal_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_pkey ATTACH PARTITION exo_private.chunks_personal_pkey;

--
-- Name: chunks_personal_workspace_document_id_ordinal_key; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_workspace_document_id_ordinal_key ATTACH PARTITION exo_private.chunks_personal_workspace_document_id_ordinal_key;

--
-- Name: chunks_technical_charged_subjects_idx; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_charged_idx ATTACH PARTITION exo_private.chunks_technical_charged_subjects_idx;

--
-- Name: chunks_technical_pkey; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_pkey ATTACH PARTITION exo_private.chunks_technical_pkey;

--
-- Name: chunks_technical_workspace_document_id_ordinal_key; Type: INDEX ATTACH; Schema: exo_private; Owner: exo_owner
--

ALTER INDEX exo_private.chunks_workspace_document_id_ordinal_key ATTACH PARTITION exo_private.chunks_technical_workspace_document_id_ordinal_key;

--
-- Name: mentions drop_unmentioned_entities; Type: TRIGGER; Schema: exo_private; Owner: exo_owner
--

CREATE TRIGGER drop_unmentioned_entities AFTER DELETE ON exo_private.mentions REFERENCING OLD TABLE AS old_mentions FOR EACH STATEMENT EXECUTE FUNCTION exo_private.drop_unmentioned_entities();

--
-- Name: settings embedding_model_changed; Type: TRIGGER; Schema: exo_private; Owner: exo_owner
--

CREATE TRIGGER embedding_model_changed AFTER UPDATE ON exo_private.settings FOR EACH ROW WHEN (((new.key = 'models.embeddings'::text) AND (((old.value ->> 'model'::text) IS DISTINCT FROM (new.value ->> 'model'::text)) OR ((old.value ->> 'dimensions'::text) IS DISTINCT FROM (new.value ->> 'dimensions'::text))))) EXECUTE FUNCTION exo_private.embedding_model_changed();

--
-- Name: settings extraction_model_changed; Type: TRIGGER; Schema: exo_private; Owner: exo_owner
--

CREATE TRIGGER extraction_model_changed AFTER UPDATE ON exo_private.settings FOR EACH ROW WHEN (((new.key = 'models.chat'::text) AND ((old.value ->> 'model'::text) IS DISTINCT FROM (new.value ->> 'model'::text)))) EXECUTE FUNCTION exo_private.extraction_model_changed();

--
-- Name: workspaces provision_workspace; Type: TRIGGER; Schema: exo_private; Owner: exo_owner
--

CREATE TRIGGER provision_workspace AFTER INSERT ON exo_private.workspaces FOR EACH ROW EXECUTE FUNCTION exo_private.workspace_created();

--
-- Name: _ag_label_edge _age_cache_invalidate; Type: TRIGGER; Schema: graph_administrative; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_administrative._ag_label_edge FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_vertex _age_cache_invalidate; Type: TRIGGER; Schema: graph_administrative; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_administrative._ag_label_vertex FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_edge _age_cache_invalidate; Type: TRIGGER; Schema: graph_creative; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_creative._ag_label_edge FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_vertex _age_cache_invalidate; Type: TRIGGER; Schema: graph_creative; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_creative._ag_label_vertex FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_edge _age_cache_invalidate; Type: TRIGGER; Schema: graph_personal; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_personal._ag_label_edge FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_vertex _age_cache_invalidate; Type: TRIGGER; Schema: graph_personal; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_personal._ag_label_vertex FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_edge _age_cache_invalidate; Type: TRIGGER; Schema: graph_technical; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_technical._ag_label_edge FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: _ag_label_vertex _age_cache_invalidate; Type: TRIGGER; Schema: graph_technical; Owner: exo_owner
--

CREATE TRIGGER _age_cache_invalidate AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON graph_technical._ag_label_vertex FOR EACH STATEMENT EXECUTE FUNCTION ag_catalog.age_invalidate_graph_cache();

--
-- Name: q_embed trigger_notify_queue_insert_listeners; Type: TRIGGER; Schema: pgmq; Owner: exo_owner
--

CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.q_embed DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners();

--
-- Name: q_extract trigger_notify_queue_insert_listeners; Type: TRIGGER; Schema: pgmq; Owner: exo_owner
--

CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.q_extract DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners();

--
-- Name: q_ocr trigger_notify_queue_insert_listeners; Type: TRIGGER; Schema: pgmq; Owner: exo_owner
--

CREATE CONSTRAINT TRIGGER trigger_notify_queue_insert_listeners AFTER INSERT ON pgmq.q_ocr DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION pgmq.notify_queue_listeners();

--
-- Name: chat_identities chat_identities_person_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_identities
    ADD CONSTRAINT chat_identities_person_id_fkey FOREIGN KEY (person_id) REFERENCES exo_private.people(id) ON DELETE SET NULL;

--
-- Name: chat_messages chat_messages_conversation_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_messages
    ADD CONSTRAINT chat_messages_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES exo_private.chat_conversations(id) ON DELETE CASCADE;

--
-- Name: chat_messages chat_messages_identity_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_messages
    ADD CONSTRAINT chat_messages_identity_id_fkey FOREIGN KEY (identity_id) REFERENCES exo_private.chat_identities(id);

--
-- Name: chat_participants chat_participants_conversation_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_participants
    ADD CONSTRAINT chat_participants_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES exo_private.chat_conversations(id) ON DELETE CASCADE;

--
-- Name: chat_participants chat_participants_identity_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_participants
    ADD CONSTRAINT chat_participants_identity_id_fkey FOREIGN KEY (identity_id) REFERENCES exo_private.chat_identities(id) ON DELETE CASCADE;

--
-- Name: chat_windows chat_windows_conversation_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_windows
    ADD CONSTRAINT chat_windows_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES exo_private.chat_conversations(id) ON DELETE CASCADE;

--
-- Name: chat_windows chat_windows_workspace_chunk_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.chat_windows
    ADD CONSTRAINT chat_windows_workspace_chunk_id_fkey FOREIGN KEY (workspace, chunk_id) REFERENCES exo_private.chunks(workspace, id) ON DELETE CASCADE;

--
-- Name: chunk_embeddings chunk_embeddings_model_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chunk_embeddings
    ADD CONSTRAINT chunk_embeddings_model_id_fkey FOREIGN KEY (model_id) REFERENCES exo_private.embedding_models(id);

--
-- Name: chunk_embeddings chunk_embeddings_workspace_chunk_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chunk_embeddings
    ADD CONSTRAINT chunk_embeddings_workspace_chunk_id_fkey FOREIGN KEY (workspace, chunk_id) REFERENCES exo_private.chunks(workspace, id) ON DELETE CASCADE;

--
-- Name: chunks chunks_document_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chunks
    ADD CONSTRAINT chunks_document_id_fkey FOREIGN KEY (document_id) REFERENCES exo_private.documents(id) ON DELETE CASCADE;

--
-- Name: chunks chunks_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE exo_private.chunks
    ADD CONSTRAINT chunks_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: document_links document_links_source_document_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.document_links
    ADD CONSTRAINT document_links_source_document_fkey FOREIGN KEY (source_document) REFERENCES exo_private.documents(id) ON DELETE CASCADE;

--
-- Name: document_links document_links_target_document_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.document_links
    ADD CONSTRAINT document_links_target_document_fkey FOREIGN KEY (target_document) REFERENCES exo_private.documents(id) ON DELETE SET NULL;

--
-- Name: documents documents_conversation_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.documents
    ADD CONSTRAINT documents_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES exo_private.chat_conversations(id) ON DELETE CASCADE;

--
-- Name: documents documents_source_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.documents
    ADD CONSTRAINT documents_source_id_fkey FOREIGN KEY (source_id) REFERENCES exo_private.sources(id) ON DELETE CASCADE;

--
-- Name: documents documents_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.documents
    ADD CONSTRAINT documents_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: entities entities_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.entities
    ADD CONSTRAINT entities_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: entities entities_workspace_generation_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.entities
    ADD CONSTRAINT entities_workspace_generation_fkey FOREIGN KEY (workspace, generation) REFERENCES exo_private.extraction_generations(workspace, generation) ON DELETE CASCADE;

--
-- Name: extraction_generations extraction_generations_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.extraction_generations
    ADD CONSTRAINT extraction_generations_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: extraction_windows extraction_windows_document_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.extraction_windows
    ADD CONSTRAINT extraction_windows_document_id_fkey FOREIGN KEY (document_id) REFERENCES exo_private.documents(id) ON DELETE CASCADE;

--
-- Name: extraction_windows extraction_windows_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.extraction_windows
    ADD CONSTRAINT extraction_windows_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: ingest_runs ingest_runs_source_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.ingest_runs
    ADD CONSTRAINT ingest_runs_source_id_fkey FOREIGN KEY (source_id) REFERENCES exo_private.sources(id) ON DELETE CASCADE;

--
-- Name: mentions mentions_document_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.mentions
    ADD CONSTRAINT mentions_document_id_fkey FOREIGN KEY (document_id) REFERENCES exo_private.documents(id) ON DELETE CASCADE;

--
-- Name: mentions mentions_entity_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.mentions
    ADD CONSTRAINT mentions_entity_id_fkey FOREIGN KEY (entity_id) REFERENCES exo_private.entities(id) ON DELETE CASCADE;

--
-- Name: mentions mentions_window_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.mentions
    ADD CONSTRAINT mentions_window_id_fkey FOREIGN KEY (window_id) REFERENCES exo_private.extraction_windows(id) ON DELETE CASCADE;

--
-- Name: relations relations_document_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_document_id_fkey FOREIGN KEY (document_id) REFERENCES exo_private.documents(id) ON DELETE CASCADE;

--
-- Name: relations relations_object_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_object_id_fkey FOREIGN KEY (object_id) REFERENCES exo_private.entities(id) ON DELETE CASCADE;

--
-- Name: relations relations_subject_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_subject_id_fkey FOREIGN KEY (subject_id) REFERENCES exo_private.entities(id) ON DELETE CASCADE;

--
-- Name: relations relations_window_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_window_id_fkey FOREIGN KEY (window_id) REFERENCES exo_private.extraction_windows(id) ON DELETE CASCADE;

--
-- Name: relations relations_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.relations
    ADD CONSTRAINT relations_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: router_classes router_classes_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.router_classes
    ADD CONSTRAINT router_classes_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name) ON DELETE CASCADE;

--
-- Name: router_terms router_terms_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.router_terms
    ADD CONSTRAINT router_terms_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name) ON DELETE CASCADE;

--
-- Name: sources sources_workspace_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.sources
    ADD CONSTRAINT sources_workspace_fkey FOREIGN KEY (workspace) REFERENCES exo_private.workspaces(name);

--
-- Name: unreadable_folders unreadable_folders_source_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.unreadable_folders
    ADD CONSTRAINT unreadable_folders_source_id_fkey FOREIGN KEY (source_id) REFERENCES exo_private.sources(id) ON DELETE CASCADE;

--
-- Name: worker_claims worker_claims_worker_id_fkey; Type: FK CONSTRAINT; Schema: exo_private; Owner: exo_owner
--

ALTER TABLE ONLY exo_private.worker_claims
    ADD CONSTRAINT worker_claims_worker_id_fkey FOREIGN KEY (worker_id) REFERENCES exo_private.workers(id) ON DELETE CASCADE;

--
-- Name: notify_insert_throttle notify_insert_throttle_meta_queue_name_fk; Type: FK CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.notify_insert_throttle
    ADD CONSTRAINT notify_insert_throttle_meta_queue_name_fk FOREIGN KEY (queue_name) REFERENCES pgmq.meta(queue_name) ON DELETE CASCADE;

--
-- Name: topic_bindings topic_bindings_meta_queue_name_fk; Type: FK CONSTRAINT; Schema: pgmq; Owner: exo_owner
--

ALTER TABLE ONLY pgmq.topic_bindings
    ADD CONSTRAINT topic_bindings_meta_queue_name_fk FOREIGN KEY (queue_name) REFERENCES pgmq.meta(queue_name) ON DELETE CASCADE;

--
-- Name: _ag_label_edge; Type: ROW SECURITY; Schema: graph_administrative; Owner: exo_owner
--

ALTER TABLE graph_administrative._ag_label_edge ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_vertex; Type: ROW SECURITY; Schema: graph_administrative; Owner: exo_owner
--

ALTER TABLE graph_administrative._ag_label_vertex ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_edge exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_administrative; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_administrative._ag_label_edge FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_edges'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_vertex exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_administrative; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_administrative._ag_label_vertex FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_vertices'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_edge; Type: ROW SECURITY; Schema: graph_creative; Owner: exo_owner
--

ALTER TABLE graph_creative._ag_label_edge ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_vertex; Type: ROW SECURITY; Schema: graph_creative; Owner: exo_owner
--

ALTER TABLE graph_creative._ag_label_vertex ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_edge exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_creative; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_creative._ag_label_edge FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_edges'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_vertex exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_creative; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_creative._ag_label_vertex FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_vertices'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_edge; Type: ROW SECURITY; Schema: graph_personal; Owner: exo_owner
--

ALTER TABLE graph_personal._ag_label_edge ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_vertex; Type: ROW SECURITY; Schema: graph_personal; Owner: exo_owner
--

ALTER TABLE graph_personal._ag_label_vertex ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_edge exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_personal; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_personal._ag_label_edge FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_edges'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_vertex exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_personal; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_personal._ag_label_vertex FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_vertices'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_edge; Type: ROW SECURITY; Schema: graph_technical; Owner: exo_owner
--

ALTER TABLE graph_technical._ag_label_edge ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_vertex; Type: ROW SECURITY; Schema: graph_technical; Owner: exo_owner
--

ALTER TABLE graph_technical._ag_label_vertex ENABLE ROW LEVEL SECURITY;

--
-- Name: _ag_label_edge exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_technical; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_technical._ag_label_edge FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_edges'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: _ag_label_vertex exo_graph_sees_what_the_caller_may; Type: POLICY; Schema: graph_technical; Owner: exo_owner
--

CREATE POLICY exo_graph_sees_what_the_caller_may ON graph_technical._ag_label_vertex FOR SELECT TO exo_graph USING ((NOT (id OPERATOR(ag_catalog.=) ANY (( SELECT (current_setting('exo.cypher_hidden_vertices'::text, true))::ag_catalog.graphid[] AS current_setting)::ag_catalog.graphid[]))));

--
-- Name: SCHEMA ag_catalog; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA ag_catalog TO exo_owner;
GRANT USAGE ON SCHEMA ag_catalog TO exo_graph;
GRANT USAGE ON SCHEMA ag_catalog TO exo_api;

--
-- Name: SCHEMA exo; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA exo TO exo_reader;
GRANT USAGE ON SCHEMA exo TO exo_writer;
GRANT USAGE ON SCHEMA exo TO exo_api;

--
-- Name: SCHEMA exo_private; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA exo_private TO exo_api;
GRANT USAGE ON SCHEMA exo_private TO exo_writer;

--
-- Name: SCHEMA graph_administrative; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA graph_administrative TO exo_graph;

--
-- Name: SCHEMA graph_creative; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA graph_creative TO exo_graph;

--
-- Name: SCHEMA graph_personal; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA graph_personal TO exo_graph;

--
-- Name: SCHEMA graph_technical; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA graph_technical TO exo_graph;

--
-- Name: SCHEMA pgmq; Type: ACL; Schema: -; Owner: exo_owner
--

GRANT USAGE ON SCHEMA pgmq TO pg_monitor;
GRANT USAGE ON SCHEMA pgmq TO exo_api;
GRANT USAGE ON SCHEMA pgmq TO exo_writer;

--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: pg_database_owner
--

REVOKE USAGE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO exo_owner;
GRANT USAGE ON SCHEMA public TO exo_writer;
GRANT USAGE ON SCHEMA public TO exo_api;

--
-- Name: FUNCTION context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.context_packet(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_writer;

--
-- Name: FUNCTION context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.context_packet_json(query text, token_budget integer, workspaces text[], open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_writer;

--
-- Name: FUNCTION conversation(conversation text, max_messages integer, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.conversation(conversation text, max_messages integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.conversation(conversation text, max_messages integer, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.conversation(conversation text, max_messages integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.cross_document_entities(min_documents integer, workspaces text[], max_results integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION cypher(workspace text, query text, max_rows integer, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.cypher(workspace text, query text, max_rows integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.cypher(workspace text, query text, max_rows integer, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.cypher(workspace text, query text, max_rows integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION document(document text, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.document(document text, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.document(document text, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.document(document text, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION dossier(entity text, workspace text, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.dossier(entity text, workspace text, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.dossier(entity text, workspace text, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.dossier(entity text, workspace text, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION embed_query(query text); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.embed_query(query text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.embed_query(query text) TO exo_reader;
GRANT ALL ON FUNCTION exo.embed_query(query text) TO exo_writer;

--
-- Name: FUNCTION person_history(name text, max_results integer, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.person_history(name text, max_results integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.person_history(name text, max_results integer, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.person_history(name text, max_results integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION related(entity text, workspace text, depth integer, per_node integer, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.related(entity text, workspace text, depth integer, per_node integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.related(entity text, workspace text, depth integer, per_node integer, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.related(entity text, workspace text, depth integer, per_node integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.search(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_writer;

--
-- Name: FUNCTION search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.search_entities(name text, entity_type text, workspaces text[], max_results integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.search_json(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_writer;

--
-- Name: FUNCTION search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone) TO exo_reader;
GRANT ALL ON FUNCTION exo.search_messages(query text, max_results integer, bridge text[], open_archive boolean, as_of timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_reader;
GRANT ALL ON FUNCTION exo.search_report(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_writer;

--
-- Name: FUNCTION setting(setting_key text); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.setting(setting_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.setting(setting_key text) TO exo_reader;
GRANT ALL ON FUNCTION exo.setting(setting_key text) TO exo_writer;

--
-- Name: FUNCTION status(); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.status() FROM PUBLIC;
GRANT ALL ON FUNCTION exo.status() TO exo_reader;
GRANT ALL ON FUNCTION exo.status() TO exo_writer;

--
-- Name: FUNCTION temporal_signal(query text, as_of date); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.temporal_signal(query text, as_of date) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.temporal_signal(query text, as_of date) TO exo_reader;
GRANT ALL ON FUNCTION exo.temporal_signal(query text, as_of date) TO exo_writer;

--
-- Name: FUNCTION timeline(entity text, workspace text, bridge text[], max_results integer); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.timeline(entity text, workspace text, bridge text[], max_results integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo.timeline(entity text, workspace text, bridge text[], max_results integer) TO exo_reader;
GRANT ALL ON FUNCTION exo.timeline(entity text, workspace text, bridge text[], max_results integer) TO exo_writer;

--
-- Name: FUNCTION version(); Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON FUNCTION exo.version() FROM PUBLIC;
GRANT ALL ON FUNCTION exo.version() TO exo_reader;
GRANT ALL ON FUNCTION exo.version() TO exo_writer;

--
-- Name: FUNCTION active_embedding_model(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.active_embedding_model() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.active_embedding_model() TO exo_api;
GRANT ALL ON FUNCTION exo_private.active_embedding_model() TO exo_writer;

--
-- Name: FUNCTION advance_stages(p_documents bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.advance_stages(p_documents bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.advance_stages(p_documents bigint[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.advance_stages(p_documents bigint[]) TO exo_writer;

--
-- Name: FUNCTION agtype_jsonb(value text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.agtype_jsonb(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.agtype_jsonb(value text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.agtype_jsonb(value text) TO exo_writer;

--
-- Name: FUNCTION await_ocr(p_document_id bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.await_ocr(p_document_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.await_ocr(p_document_id bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.await_ocr(p_document_id bigint) TO exo_writer;

--
-- Name: FUNCTION band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.band_as_of(stored exo_private.band, written date, follows_age boolean, as_of date, current_days integer, recent_days integer) TO exo_writer;

--
-- Name: FUNCTION build_packet(retrieved jsonb, query text, token_budget integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.build_packet(retrieved jsonb, query text, token_budget integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.build_packet(retrieved jsonb, query text, token_budget integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.build_packet(retrieved jsonb, query text, token_budget integer) TO exo_writer;

--
-- Name: FUNCTION bump_generation(ws text, model text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.bump_generation(ws text, model text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.bump_generation(ws text, model text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.bump_generation(ws text, model text) TO exo_writer;

--
-- Name: FUNCTION canonical_key(name text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.canonical_key(name text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.canonical_key(name text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.canonical_key(name text) TO exo_writer;

--
-- Name: FUNCTION chat_person_names(identities bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.chat_person_names(identities bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.chat_person_names(identities bigint[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.chat_person_names(identities bigint[]) TO exo_writer;

--
-- Name: FUNCTION chat_window_senders(conversations bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.chat_window_senders(conversations bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.chat_window_senders(conversations bigint[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.chat_window_senders(conversations bigint[]) TO exo_writer;

--
-- Name: FUNCTION check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.check_search_arguments(query text, workspaces text[], k integer, per_workspace integer, query_embedding double precision[], token_budget integer, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION check_workspaces(names text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.check_workspaces(names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.check_workspaces(names text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.check_workspaces(names text[]) TO exo_writer;

--
-- Name: FUNCTION clear_derived(doc_id bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.clear_derived(doc_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.clear_derived(doc_id bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.clear_derived(doc_id bigint) TO exo_writer;

--
-- Name: FUNCTION clear_graph(ws text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.clear_graph(ws text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.clear_graph(ws text) TO exo_writer;

--
-- Name: FUNCTION closed_chunks(bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.closed_chunks(bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.closed_chunks(bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.closed_chunks(bridge text[]) TO exo_writer;

--
-- Name: FUNCTION closed_documents(ids bigint[], bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.closed_documents(ids bigint[], bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.closed_documents(ids bigint[], bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.closed_documents(ids bigint[], bridge text[]) TO exo_writer;

--
-- Name: FUNCTION closed_subject_keys(bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.closed_subject_keys(bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.closed_subject_keys(bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.closed_subject_keys(bridge text[]) TO exo_writer;

--
-- Name: FUNCTION closed_windows(bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.closed_windows(bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.closed_windows(bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.closed_windows(bridge text[]) TO exo_writer;

--
-- Name: FUNCTION complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.complete_embedding(p_msg_ids bigint[], p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors public.vector[]) TO exo_writer;

--
-- Name: FUNCTION complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb) TO exo_api;
GRANT ALL ON FUNCTION exo_private.complete_extraction(p_msg_id bigint, p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb, p_stats jsonb) TO exo_writer;

--
-- Name: FUNCTION current_generation(ws text, model text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.current_generation(ws text, model text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.current_generation(ws text, model text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.current_generation(ws text, model text) TO exo_writer;

--
-- Name: FUNCTION cut_windows(conversation bigint, ws text, zone text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.cut_windows(conversation bigint, ws text, zone text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.cut_windows(conversation bigint, ws text, zone text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.cut_windows(conversation bigint, ws text, zone text) TO exo_writer;

--
-- Name: FUNCTION cypher_refusal(query text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.cypher_refusal(query text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.cypher_refusal(query text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.cypher_refusal(query text) TO exo_writer;

--
-- Name: FUNCTION defer_subject(subject_name text, subject_aliases text[], why text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.defer_subject(subject_name text, subject_aliases text[], why text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.defer_subject(subject_name text, subject_aliases text[], why text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.defer_subject(subject_name text, subject_aliases text[], why text) TO exo_writer;

--
-- Name: FUNCTION deference_list(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.deference_list() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.deference_list() TO exo_api;
GRANT ALL ON FUNCTION exo_private.deference_list() TO exo_writer;

--
-- Name: FUNCTION detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.detect_temporal(query text, cues jsonb, as_of date, archive_after_days integer) TO exo_writer;

--
-- Name: FUNCTION drop_unmentioned_entities(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.drop_unmentioned_entities() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.drop_unmentioned_entities() TO exo_writer;

--
-- Name: FUNCTION embed_text(input text, endpoint jsonb, calls_per_minute integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.embed_text(input text, endpoint jsonb, calls_per_minute integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.embed_text(input text, endpoint jsonb, calls_per_minute integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.embed_text(input text, endpoint jsonb, calls_per_minute integer) TO exo_writer;

--
-- Name: FUNCTION embedding_model_changed(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.embedding_model_changed() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.embedding_model_changed() TO exo_api;
GRANT ALL ON FUNCTION exo_private.embedding_model_changed() TO exo_writer;

--
-- Name: FUNCTION embedding_model_id(p_name text, p_dimensions integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.embedding_model_id(p_name text, p_dimensions integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.embedding_model_id(p_name text, p_dimensions integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.embedding_model_id(p_name text, p_dimensions integer) TO exo_writer;

--
-- Name: FUNCTION end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.end_ocr(p_sha256 text, p_stage exo_private.document_stage, p_error_class text, p_message text) TO exo_writer;

--
-- Name: FUNCTION ensure_embedding_indexes(p_model_id integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.ensure_embedding_indexes(p_model_id integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.ensure_embedding_indexes(p_model_id integer) TO exo_writer;

--
-- Name: FUNCTION ensure_label(graph name, label text, kind "char"); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.ensure_label(graph name, label text, kind "char") FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.ensure_label(graph name, label text, kind "char") TO exo_writer;

--
-- Name: FUNCTION ensure_workspace_graph(workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.ensure_workspace_graph(workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.ensure_workspace_graph(workspace text) TO exo_writer;

--
-- Name: FUNCTION ensure_workspace_storage(workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.ensure_workspace_storage(workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.ensure_workspace_storage(workspace text) TO exo_writer;

--
-- Name: FUNCTION entity_dossier(p_entity bigint, bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.entity_dossier(p_entity bigint, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.entity_dossier(p_entity bigint, bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.entity_dossier(p_entity bigint, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION entity_evidence(ids bigint[], bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.entity_evidence(ids bigint[], bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.entity_evidence(ids bigint[], bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.entity_evidence(ids bigint[], bridge text[]) TO exo_writer;

--
-- Name: FUNCTION entity_mentions(ids bigint[], bridge text[], in_document bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint) TO exo_writer;

--
-- Name: FUNCTION entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.entity_timeline(p_entity text, p_workspace text, p_bridge text[], p_max integer) TO exo_writer;

--
-- Name: FUNCTION excerpt(body text, needle text, width integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.excerpt(body text, needle text, width integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.excerpt(body text, needle text, width integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.excerpt(body text, needle text, width integer) TO exo_writer;

--
-- Name: FUNCTION extraction_model_changed(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.extraction_model_changed() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.extraction_model_changed() TO exo_api;
GRANT ALL ON FUNCTION exo_private.extraction_model_changed() TO exo_writer;

--
-- Name: FUNCTION find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.find_entities(p_name text, p_type text, p_workspaces text[], p_max integer, p_bridge text[]) TO exo_writer;

--
-- Name: FUNCTION forget_document(doc_id bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.forget_document(doc_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.forget_document(doc_id bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.forget_document(doc_id bigint) TO exo_writer;

--
-- Name: FUNCTION generation_for(ws text, model text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.generation_for(ws text, model text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.generation_for(ws text, model text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.generation_for(ws text, model text) TO exo_writer;

--
-- Name: FUNCTION glob_like(glob text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.glob_like(glob text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.glob_like(glob text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.glob_like(glob text) TO exo_writer;

--
-- Name: FUNCTION graph_disagreements(ws text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.graph_disagreements(ws text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.graph_disagreements(ws text) TO exo_writer;

--
-- Name: FUNCTION graph_name(workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.graph_name(workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.graph_name(workspace text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.graph_name(workspace text) TO exo_writer;
GRANT ALL ON FUNCTION exo_private.graph_name(workspace text) TO exo_reader;

--
-- Name: FUNCTION graph_withheld(ws text, bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.graph_withheld(ws text, bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.graph_withheld(ws text, bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.graph_withheld(ws text, bridge text[]) TO exo_writer;

--
-- Name: FUNCTION guard_graph_table(relation regclass, kind "char"); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.guard_graph_table(relation regclass, kind "char") FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.guard_graph_table(relation regclass, kind "char") TO exo_api;
GRANT ALL ON FUNCTION exo_private.guard_graph_table(relation regclass, kind "char") TO exo_writer;

--
-- Name: FUNCTION hint_how(subject text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.hint_how(subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.hint_how(subject text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.hint_how(subject text) TO exo_writer;

--
-- Name: FUNCTION ingest_settings(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.ingest_settings() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.ingest_settings() TO exo_api;
GRANT ALL ON FUNCTION exo_private.ingest_settings() TO exo_writer;

--
-- Name: FUNCTION invalid_argument(message text, hint text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.invalid_argument(message text, hint text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.invalid_argument(message text, hint text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.invalid_argument(message text, hint text) TO exo_writer;

--
-- Name: FUNCTION learn_routes(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.learn_routes() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.learn_routes() TO exo_api;
GRANT ALL ON FUNCTION exo_private.learn_routes() TO exo_writer;

--
-- Name: FUNCTION like_pattern(input text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.like_pattern(input text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.like_pattern(input text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.like_pattern(input text) TO exo_writer;

--
-- Name: FUNCTION link_owner_identity(source text, handle text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.link_owner_identity(source text, handle text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.link_owner_identity(source text, handle text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.link_owner_identity(source text, handle text) TO exo_writer;

--
-- Name: FUNCTION link_participants(conversations bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.link_participants(conversations bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.link_participants(conversations bigint[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.link_participants(conversations bigint[]) TO exo_writer;

--
-- Name: FUNCTION mark_messages(every_conversation boolean); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.mark_messages(every_conversation boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.mark_messages(every_conversation boolean) TO exo_api;
GRANT ALL ON FUNCTION exo_private.mark_messages(every_conversation boolean) TO exo_writer;

--
-- Name: FUNCTION mention_state(p_entity bigint, p_window bigint, released text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.mention_state(p_entity bigint, p_window bigint, released text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.mention_state(p_entity bigint, p_window bigint, released text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.mention_state(p_entity bigint, p_window bigint, released text[]) TO exo_writer;

--
-- Name: FUNCTION merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb) TO exo_api;
GRANT ALL ON FUNCTION exo_private.merge_extraction(p_window_id bigint, p_generation integer, p_entities jsonb, p_relations jsonb) TO exo_writer;

--
-- Name: FUNCTION message_bands(written date[], today date); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.message_bands(written date[], today date) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.message_bands(written date[], today date) TO exo_api;
GRANT ALL ON FUNCTION exo_private.message_bands(written date[], today date) TO exo_writer;

--
-- Name: FUNCTION normalise_predicate(raw text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.normalise_predicate(raw text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.normalise_predicate(raw text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.normalise_predicate(raw text) TO exo_writer;

--
-- Name: FUNCTION ocr_job(p_document_id bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.ocr_job(p_document_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.ocr_job(p_document_id bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.ocr_job(p_document_id bigint) TO exo_writer;

--
-- Name: FUNCTION outstanding_work(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.outstanding_work() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.outstanding_work() TO exo_api;
GRANT ALL ON FUNCTION exo_private.outstanding_work() TO exo_writer;

--
-- Name: FUNCTION parse_entity_type(entity_type text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.parse_entity_type(entity_type text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.parse_entity_type(entity_type text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.parse_entity_type(entity_type text) TO exo_writer;

--
-- Name: FUNCTION plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date) TO exo_api;
GRANT ALL ON FUNCTION exo_private.plan_document(doc jsonb, body text, settings jsonb, subjects jsonb, today date) TO exo_writer;

--
-- Name: FUNCTION pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date) TO exo_api;
GRANT ALL ON FUNCTION exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date) TO exo_writer;

--
-- Name: FUNCTION pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.pool_similarity(p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id integer) TO exo_writer;

--
-- Name: FUNCTION process_document(doc_id bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.process_document(doc_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.process_document(doc_id bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.process_document(doc_id bigint) TO exo_writer;

--
-- Name: FUNCTION project_entities(ids bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.project_entities(ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.project_entities(ids bigint[]) TO exo_writer;

--
-- Name: FUNCTION project_relations(ids bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.project_relations(ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.project_relations(ids bigint[]) TO exo_writer;

--
-- Name: FUNCTION queue_again(p_queue text, p_targets bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.queue_again(p_queue text, p_targets bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.queue_again(p_queue text, p_targets bigint[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.queue_again(p_queue text, p_targets bigint[]) TO exo_writer;

--
-- Name: FUNCTION queue_messages(p_dead_after_s double precision); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.queue_messages(p_dead_after_s double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.queue_messages(p_dead_after_s double precision) TO exo_api;
GRANT ALL ON FUNCTION exo_private.queue_messages(p_dead_after_s double precision) TO exo_writer;

--
-- Name: FUNCTION queue_target_key(p_queue text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.queue_target_key(p_queue text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.queue_target_key(p_queue text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.queue_target_key(p_queue text) TO exo_writer;

--
-- Name: FUNCTION quoted(argument text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.quoted(argument text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.quoted(argument text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.quoted(argument text) TO exo_writer;

--
-- Name: FUNCTION read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint) TO exo_api;
GRANT ALL ON FUNCTION exo_private.read_jobs(p_queue text, p_vt integer, p_qty integer, p_max_reads integer, p_worker_id bigint) TO exo_writer;

--
-- Name: FUNCTION reap_workers(p_dead_after_s double precision); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.reap_workers(p_dead_after_s double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.reap_workers(p_dead_after_s double precision) TO exo_api;
GRANT ALL ON FUNCTION exo_private.reap_workers(p_dead_after_s double precision) TO exo_writer;

--
-- Name: FUNCTION reband(today date); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.reband(today date) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.reband(today date) TO exo_api;
GRANT ALL ON FUNCTION exo_private.reband(today date) TO exo_writer;

--
-- Name: FUNCTION rebuild(only_workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.rebuild(only_workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.rebuild(only_workspace text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.rebuild(only_workspace text) TO exo_writer;

--
-- Name: FUNCTION related_entities(p_entity bigint, p_max_depth integer, p_per_node integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.related_entities(p_entity bigint, p_max_depth integer, p_per_node integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.related_entities(p_entity bigint, p_max_depth integer, p_per_node integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.related_entities(p_entity bigint, p_max_depth integer, p_per_node integer) TO exo_writer;

--
-- Name: FUNCTION related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.related_to(p_entity text, p_workspace text, p_depth integer, p_per_node integer, p_bridge text[]) TO exo_writer;

--
-- Name: FUNCTION released_keys(bridge text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.released_keys(bridge text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.released_keys(bridge text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.released_keys(bridge text[]) TO exo_writer;

--
-- Name: FUNCTION remark_charged(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.remark_charged() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.remark_charged() TO exo_api;
GRANT ALL ON FUNCTION exo_private.remark_charged() TO exo_writer;

--
-- Name: FUNCTION requeue_dead(p_queue text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.requeue_dead(p_queue text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.requeue_dead(p_queue text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.requeue_dead(p_queue text) TO exo_writer;

--
-- Name: FUNCTION rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb) TO exo_api;
GRANT ALL ON FUNCTION exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb) TO exo_writer;

--
-- Name: FUNCTION resolve_entity(entity text, workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.resolve_entity(entity text, workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.resolve_entity(entity text, workspace text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.resolve_entity(entity text, workspace text) TO exo_writer;

--
-- Name: FUNCTION resolve_links(source integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.resolve_links(source integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.resolve_links(source integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.resolve_links(source integer) TO exo_writer;

--
-- Name: FUNCTION retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.retrieve(query text, workspaces text[], k integer, per_workspace integer, open_archive boolean, bridge text[], as_of timestamp with time zone, query_embedding double precision[]) TO exo_writer;

--
-- Name: FUNCTION retry_failed(p_queue text, p_since timestamp with time zone); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.retry_failed(p_queue text, p_since timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.retry_failed(p_queue text, p_since timestamp with time zone) TO exo_api;
GRANT ALL ON FUNCTION exo_private.retry_failed(p_queue text, p_since timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION retry_ocr(p_since timestamp with time zone); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.retry_ocr(p_since timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.retry_ocr(p_since timestamp with time zone) TO exo_api;
GRANT ALL ON FUNCTION exo_private.retry_ocr(p_since timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION return_messages(p_queue text, p_msg_ids bigint[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.return_messages(p_queue text, p_msg_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.return_messages(p_queue text, p_msg_ids bigint[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.return_messages(p_queue text, p_msg_ids bigint[]) TO exo_writer;

--
-- Name: FUNCTION review_document(doc_id bigint, decision text, target_workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.review_document(doc_id bigint, decision text, target_workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.review_document(doc_id bigint, decision text, target_workspace text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.review_document(doc_id bigint, decision text, target_workspace text) TO exo_writer;

--
-- Name: FUNCTION review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean) TO exo_api;
GRANT ALL ON FUNCTION exo_private.review_quarantine(decision text, target_workspace text, select_all boolean, path_glob text, min_confidence double precision, dry_run boolean) TO exo_writer;

--
-- Name: FUNCTION route_source_quarantine(source integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.route_source_quarantine(source integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.route_source_quarantine(source integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.route_source_quarantine(source integer) TO exo_writer;

--
-- Name: FUNCTION run_cypher(graph name, query text, max_rows integer); Type: ACL; Schema: exo_private; Owner: exo_graph
--

REVOKE ALL ON FUNCTION exo_private.run_cypher(graph name, query text, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.run_cypher(graph name, query text, max_rows integer) TO exo_api;

--
-- Name: FUNCTION seed_owner(workspaces text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.seed_owner(workspaces text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.seed_owner(workspaces text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.seed_owner(workspaces text[]) TO exo_writer;

--
-- Name: FUNCTION set_embedding_model(p_model text, p_dimensions integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.set_embedding_model(p_model text, p_dimensions integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.set_embedding_model(p_model text, p_dimensions integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.set_embedding_model(p_model text, p_dimensions integer) TO exo_writer;

--
-- Name: FUNCTION set_owner(display_name text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.set_owner(display_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.set_owner(display_name text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.set_owner(display_name text) TO exo_writer;

--
-- Name: FUNCTION set_setting(setting_key text, new_value jsonb, what text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.set_setting(setting_key text, new_value jsonb, what text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.set_setting(setting_key text, new_value jsonb, what text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.set_setting(setting_key text, new_value jsonb, what text) TO exo_writer;

--
-- Name: FUNCTION stage_sql(stage text, workspace text, model_id integer, dimensions integer); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.stage_sql(stage text, workspace text, model_id integer, dimensions integer) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.stage_sql(stage text, workspace text, model_id integer, dimensions integer) TO exo_api;
GRANT ALL ON FUNCTION exo_private.stage_sql(stage text, workspace text, model_id integer, dimensions integer) TO exo_writer;

--
-- Name: FUNCTION stop_runaway_readers(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.stop_runaway_readers() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.stop_runaway_readers() TO exo_writer;

--
-- Name: FUNCTION store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.store_embeddings(p_model text, p_dimensions integer, p_chunk_ids bigint[], p_vectors text[]) TO exo_writer;

--
-- Name: FUNCTION store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb) TO exo_api;
GRANT ALL ON FUNCTION exo_private.store_ocr_text(p_sha256 text, p_body text, p_ocr jsonb) TO exo_writer;

--
-- Name: FUNCTION train_router(force boolean, min_change double precision); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.train_router(force boolean, min_change double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.train_router(force boolean, min_change double precision) TO exo_api;
GRANT ALL ON FUNCTION exo_private.train_router(force boolean, min_change double precision) TO exo_writer;

--
-- Name: FUNCTION undefer_subject(subject_name text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.undefer_subject(subject_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.undefer_subject(subject_name text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.undefer_subject(subject_name text) TO exo_writer;

--
-- Name: FUNCTION unreleased(charged text[], released text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.unreleased(charged text[], released text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.unreleased(charged text[], released text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.unreleased(charged text[], released text[]) TO exo_writer;

--
-- Name: FUNCTION window_conversation(conversation bigint, workspace text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.window_conversation(conversation bigint, workspace text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.window_conversation(conversation bigint, workspace text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.window_conversation(conversation bigint, workspace text) TO exo_writer;

--
-- Name: FUNCTION window_withheld(p_window bigint, released text[]); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.window_withheld(p_window bigint, released text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.window_withheld(p_window bigint, released text[]) TO exo_api;
GRANT ALL ON FUNCTION exo_private.window_withheld(p_window bigint, released text[]) TO exo_writer;

--
-- Name: FUNCTION work_status(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.work_status() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.work_status() TO exo_api;
GRANT ALL ON FUNCTION exo_private.work_status() TO exo_writer;

--
-- Name: FUNCTION worker_queues(p_queue text); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.worker_queues(p_queue text) FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.worker_queues(p_queue text) TO exo_api;
GRANT ALL ON FUNCTION exo_private.worker_queues(p_queue text) TO exo_writer;

--
-- Name: FUNCTION workspace_created(); Type: ACL; Schema: exo_private; Owner: exo_owner
--

REVOKE ALL ON FUNCTION exo_private.workspace_created() FROM PUBLIC;
GRANT ALL ON FUNCTION exo_private.workspace_created() TO exo_api;
GRANT ALL ON FUNCTION exo_private.workspace_created() TO exo_writer;

--
-- Name: FUNCTION lo_close(integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_close(integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_creat(integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_creat(integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_create(oid); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_create(oid) FROM PUBLIC;

--
-- Name: FUNCTION lo_from_bytea(oid, bytea); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_from_bytea(oid, bytea) FROM PUBLIC;

--
-- Name: FUNCTION lo_get(oid); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_get(oid) FROM PUBLIC;

--
-- Name: FUNCTION lo_get(oid, bigint, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_get(oid, bigint, integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_lseek(integer, integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_lseek(integer, integer, integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_lseek64(integer, bigint, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_lseek64(integer, bigint, integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_open(oid, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_open(oid, integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_put(oid, bigint, bytea); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_put(oid, bigint, bytea) FROM PUBLIC;

--
-- Name: FUNCTION lo_tell(integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_tell(integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_tell64(integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_tell64(integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_truncate(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_truncate(integer, integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_truncate64(integer, bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_truncate64(integer, bigint) FROM PUBLIC;

--
-- Name: FUNCTION lo_unlink(oid); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_unlink(oid) FROM PUBLIC;

--
-- Name: FUNCTION loread(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.loread(integer, integer) FROM PUBLIC;

--
-- Name: FUNCTION lowrite(integer, bytea); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lowrite(integer, bytea) FROM PUBLIC;

--
-- Name: FUNCTION pg_advisory_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_unlock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_unlock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_unlock_all(); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() TO exo_writer;

--
-- Name: FUNCTION pg_advisory_unlock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_unlock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) TO exo_writer;

--
-- Name: FUNCTION pg_try_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) TO exo_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) TO exo_writer;

--
-- Name: FUNCTION _belongs_to_pgmq(table_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._belongs_to_pgmq(table_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._belongs_to_pgmq(table_name text) TO exo_writer;

--
-- Name: FUNCTION _create_fifo_index_if_not_exists(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._create_fifo_index_if_not_exists(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._create_fifo_index_if_not_exists(queue_name text) TO exo_writer;

--
-- Name: FUNCTION _ensure_pg_partman_installed(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._ensure_pg_partman_installed() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._ensure_pg_partman_installed() TO exo_writer;

--
-- Name: FUNCTION _extension_exists(extension_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._extension_exists(extension_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._extension_exists(extension_name text) TO exo_writer;

--
-- Name: FUNCTION _get_partition_col(partition_interval text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._get_partition_col(partition_interval text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._get_partition_col(partition_interval text) TO exo_writer;

--
-- Name: FUNCTION _get_pg_partman_major_version(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._get_pg_partman_major_version() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._get_pg_partman_major_version() TO exo_writer;

--
-- Name: FUNCTION _get_pg_partman_schema(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._get_pg_partman_schema() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._get_pg_partman_schema() TO exo_writer;

--
-- Name: FUNCTION _send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION _validate_batch_params(msgs jsonb[], headers jsonb[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[]) TO exo_writer;

--
-- Name: FUNCTION acquire_queue_lock(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.acquire_queue_lock(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.acquire_queue_lock(queue_name text) TO exo_writer;

--
-- Name: FUNCTION archive(queue_name text, msg_ids bigint[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) TO exo_writer;

--
-- Name: FUNCTION archive(queue_name text, msg_id bigint); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) TO exo_writer;

--
-- Name: FUNCTION bind_topic(pattern text, queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.bind_topic(pattern text, queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.bind_topic(pattern text, queue_name text) TO exo_writer;

--
-- Name: FUNCTION convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) TO exo_writer;

--
-- Name: FUNCTION "create"(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq."create"(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq."create"(queue_name text) TO exo_writer;

--
-- Name: FUNCTION create_fifo_index(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.create_fifo_index(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_fifo_index(queue_name text) TO exo_writer;

--
-- Name: FUNCTION create_fifo_indexes_all(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.create_fifo_indexes_all() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_fifo_indexes_all() TO exo_writer;

--
-- Name: FUNCTION create_non_partitioned(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.create_non_partitioned(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_non_partitioned(queue_name text) TO exo_writer;

--
-- Name: FUNCTION create_partitioned(queue_name text, partition_interval text, retention_interval text, premake integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text, retention_interval text, premake integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text, retention_interval text, premake integer) TO exo_writer;

--
-- Name: FUNCTION create_unlogged(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.create_unlogged(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_unlogged(queue_name text) TO exo_writer;

--
-- Name: FUNCTION delete(queue_name text, msg_ids bigint[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) TO exo_writer;

--
-- Name: FUNCTION delete(queue_name text, msg_id bigint); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) TO exo_writer;

--
-- Name: FUNCTION detach_archive(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.detach_archive(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.detach_archive(queue_name text) TO exo_writer;

--
-- Name: FUNCTION disable_notify_insert(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.disable_notify_insert(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.disable_notify_insert(queue_name text) TO exo_writer;

--
-- Name: FUNCTION drop_queue(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.drop_queue(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.drop_queue(queue_name text) TO exo_writer;

--
-- Name: FUNCTION drop_queue(queue_name text, partitioned boolean); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) TO exo_writer;

--
-- Name: FUNCTION enable_notify_insert(queue_name text, throttle_interval_ms integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer) TO exo_writer;

--
-- Name: FUNCTION format_table_name(queue_name text, prefix text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) TO exo_writer;

--
-- Name: FUNCTION list_notify_insert_throttles(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.list_notify_insert_throttles() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.list_notify_insert_throttles() TO exo_writer;

--
-- Name: FUNCTION list_queues(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.list_queues() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.list_queues() TO exo_writer;

--
-- Name: FUNCTION list_topic_bindings(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.list_topic_bindings() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.list_topic_bindings() TO exo_writer;

--
-- Name: FUNCTION list_topic_bindings(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.list_topic_bindings(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.list_topic_bindings(queue_name text) TO exo_writer;

--
-- Name: FUNCTION metrics(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.metrics(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.metrics(queue_name text) TO exo_writer;

--
-- Name: FUNCTION metrics_all(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.metrics_all() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.metrics_all() TO exo_writer;

--
-- Name: FUNCTION notify_queue_listeners(); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.notify_queue_listeners() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.notify_queue_listeners() TO exo_writer;

--
-- Name: FUNCTION pop(queue_name text, qty integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.pop(queue_name text, qty integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.pop(queue_name text, qty integer) TO exo_writer;

--
-- Name: FUNCTION purge_queue(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.purge_queue(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.purge_queue(queue_name text) TO exo_writer;

--
-- Name: FUNCTION read(queue_name text, vt integer, qty integer, conditional jsonb); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) TO exo_writer;

--
-- Name: FUNCTION read_grouped(queue_name text, vt integer, qty integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer) TO exo_writer;

--
-- Name: FUNCTION read_grouped_head(queue_name text, vt integer, qty integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer) TO exo_writer;

--
-- Name: FUNCTION read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) TO exo_writer;

--
-- Name: FUNCTION read_grouped_rr(queue_name text, vt integer, qty integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer) TO exo_writer;

--
-- Name: FUNCTION read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) TO exo_writer;

--
-- Name: FUNCTION read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer) TO exo_writer;

--
-- Name: FUNCTION read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) TO exo_writer;

--
-- Name: FUNCTION send(queue_name text, msg jsonb); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb) TO exo_writer;

--
-- Name: FUNCTION send(queue_name text, msg jsonb, delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) TO exo_writer;

--
-- Name: FUNCTION send(queue_name text, msg jsonb, headers jsonb); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) TO exo_writer;

--
-- Name: FUNCTION send(queue_name text, msg jsonb, delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION send(queue_name text, msg jsonb, headers jsonb, delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) TO exo_writer;

--
-- Name: FUNCTION send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[]) TO exo_writer;

--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], headers jsonb[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) TO exo_writer;

--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) TO exo_writer;

--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) TO exo_writer;

--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION send_batch_topic(routing_key text, msgs jsonb[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[]) TO exo_writer;

--
-- Name: FUNCTION send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[]); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[]) TO exo_writer;

--
-- Name: FUNCTION send_batch_topic(routing_key text, msgs jsonb[], delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay integer) TO exo_writer;

--
-- Name: FUNCTION send_batch_topic(routing_key text, msgs jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer) TO exo_writer;

--
-- Name: FUNCTION send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION send_topic(routing_key text, msg jsonb); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_topic(routing_key text, msg jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_topic(routing_key text, msg jsonb) TO exo_writer;

--
-- Name: FUNCTION send_topic(routing_key text, msg jsonb, delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_topic(routing_key text, msg jsonb, delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_topic(routing_key text, msg jsonb, delay integer) TO exo_writer;

--
-- Name: FUNCTION send_topic(routing_key text, msg jsonb, headers jsonb, delay integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.send_topic(routing_key text, msg jsonb, headers jsonb, delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_topic(routing_key text, msg jsonb, headers jsonb, delay integer) TO exo_writer;

--
-- Name: FUNCTION set_vt(queue_name text, msg_ids bigint[], vt integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer) TO exo_writer;

--
-- Name: FUNCTION set_vt(queue_name text, msg_ids bigint[], vt timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION set_vt(queue_name text, msg_id bigint, vt integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) TO exo_writer;

--
-- Name: FUNCTION set_vt(queue_name text, msg_id bigint, vt timestamp with time zone); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamp with time zone) TO exo_writer;

--
-- Name: FUNCTION test_routing(routing_key text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.test_routing(routing_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.test_routing(routing_key text) TO exo_writer;

--
-- Name: FUNCTION unbind_topic(pattern text, queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.unbind_topic(pattern text, queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.unbind_topic(pattern text, queue_name text) TO exo_writer;

--
-- Name: FUNCTION update_notify_insert(queue_name text, throttle_interval_ms integer); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer) TO exo_writer;

--
-- Name: FUNCTION validate_queue_name(queue_name text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) TO exo_writer;

--
-- Name: FUNCTION validate_routing_key(routing_key text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.validate_routing_key(routing_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.validate_routing_key(routing_key text) TO exo_writer;

--
-- Name: FUNCTION validate_topic_pattern(pattern text); Type: ACL; Schema: pgmq; Owner: exo_owner
--

REVOKE ALL ON FUNCTION pgmq.validate_topic_pattern(pattern text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.validate_topic_pattern(pattern text) TO exo_writer;

--
-- Name: TABLE ag_graph; Type: ACL; Schema: ag_catalog; Owner: postgres
--

GRANT SELECT ON TABLE ag_catalog.ag_graph TO exo_owner;
GRANT SELECT ON TABLE ag_catalog.ag_graph TO exo_graph;
GRANT SELECT ON TABLE ag_catalog.ag_graph TO exo_api;

--
-- Name: TABLE ag_label; Type: ACL; Schema: ag_catalog; Owner: postgres
--

GRANT SELECT ON TABLE ag_catalog.ag_label TO exo_owner;
GRANT SELECT ON TABLE ag_catalog.ag_label TO exo_graph;
GRANT SELECT ON TABLE ag_catalog.ag_label TO exo_api;

--
-- Name: TABLE chat_messages; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chat_messages TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chat_messages TO exo_writer;

--
-- Name: TABLE chunks; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunks TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunks TO exo_writer;

--
-- Name: TABLE deferred_subjects; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.deferred_subjects TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.deferred_subjects TO exo_writer;

--
-- Name: TABLE deferred_subjects; Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON TABLE exo.deferred_subjects FROM exo_api;
GRANT SELECT ON TABLE exo.deferred_subjects TO exo_api;
GRANT SELECT ON TABLE exo.deferred_subjects TO exo_reader;
GRANT SELECT ON TABLE exo.deferred_subjects TO exo_writer;

--
-- Name: TABLE documents; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.documents TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.documents TO exo_writer;

--
-- Name: TABLE quarantine; Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON TABLE exo.quarantine FROM exo_api;
GRANT SELECT ON TABLE exo.quarantine TO exo_api;
GRANT SELECT ON TABLE exo.quarantine TO exo_reader;
GRANT SELECT ON TABLE exo.quarantine TO exo_writer;

--
-- Name: TABLE settings; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.settings TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.settings TO exo_writer;

--
-- Name: TABLE settings; Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON TABLE exo.settings FROM exo_api;
GRANT SELECT ON TABLE exo.settings TO exo_api;
GRANT SELECT ON TABLE exo.settings TO exo_reader;
GRANT SELECT ON TABLE exo.settings TO exo_writer;

--
-- Name: TABLE workspaces; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.workspaces TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.workspaces TO exo_writer;

--
-- Name: TABLE workspaces; Type: ACL; Schema: exo; Owner: exo_api
--

REVOKE ALL ON TABLE exo.workspaces FROM exo_api;
GRANT SELECT ON TABLE exo.workspaces TO exo_api;
GRANT SELECT ON TABLE exo.workspaces TO exo_reader;
GRANT SELECT ON TABLE exo.workspaces TO exo_writer;

--
-- Name: TABLE chat_conversations; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chat_conversations TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chat_conversations TO exo_writer;

--
-- Name: SEQUENCE chat_conversations_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.chat_conversations_id_seq TO exo_writer;

--
-- Name: TABLE chat_identities; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chat_identities TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chat_identities TO exo_writer;

--
-- Name: SEQUENCE chat_identities_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.chat_identities_id_seq TO exo_writer;

--
-- Name: SEQUENCE chat_messages_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.chat_messages_id_seq TO exo_writer;

--
-- Name: TABLE chat_participants; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chat_participants TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chat_participants TO exo_writer;

--
-- Name: TABLE chat_windows; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chat_windows TO exo_writer;
GRANT SELECT ON TABLE exo_private.chat_windows TO exo_api;

--
-- Name: TABLE chunk_embeddings; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunk_embeddings TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunk_embeddings TO exo_writer;

--
-- Name: TABLE chunk_embeddings_administrative; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunk_embeddings_administrative TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunk_embeddings_administrative TO exo_writer;

--
-- Name: TABLE chunk_embeddings_creative; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunk_embeddings_creative TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunk_embeddings_creative TO exo_writer;

--
-- Name: TABLE chunk_embeddings_personal; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunk_embeddings_personal TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunk_embeddings_personal TO exo_writer;

--
-- Name: TABLE chunk_embeddings_technical; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunk_embeddings_technical TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunk_embeddings_technical TO exo_writer;

--
-- Name: TABLE chunks_administrative; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunks_administrative TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunks_administrative TO exo_writer;

--
-- Name: TABLE chunks_creative; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunks_creative TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunks_creative TO exo_writer;

--
-- Name: SEQUENCE chunks_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.chunks_id_seq TO exo_writer;

--
-- Name: TABLE chunks_personal; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunks_personal TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunks_personal TO exo_writer;

--
-- Name: TABLE chunks_technical; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.chunks_technical TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.chunks_technical TO exo_writer;

--
-- Name: TABLE components; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.components TO exo_api;
GRANT SELECT ON TABLE exo_private.components TO exo_writer;

--
-- Name: TABLE document_links; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.document_links TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.document_links TO exo_writer;

--
-- Name: SEQUENCE documents_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.documents_id_seq TO exo_writer;

--
-- Name: TABLE embedding_models; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.embedding_models TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.embedding_models TO exo_writer;

--
-- Name: SEQUENCE embedding_models_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.embedding_models_id_seq TO exo_writer;

--
-- Name: TABLE entities; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.entities TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.entities TO exo_writer;

--
-- Name: SEQUENCE entities_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.entities_id_seq TO exo_writer;

--
-- Name: TABLE extraction_generations; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.extraction_generations TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.extraction_generations TO exo_writer;

--
-- Name: TABLE extraction_windows; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.extraction_windows TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.extraction_windows TO exo_writer;

--
-- Name: SEQUENCE extraction_windows_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.extraction_windows_id_seq TO exo_writer;

--
-- Name: TABLE ingest_runs; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.ingest_runs TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.ingest_runs TO exo_writer;

--
-- Name: SEQUENCE ingest_runs_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.ingest_runs_id_seq TO exo_writer;

--
-- Name: TABLE job_failures; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.job_failures TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.job_failures TO exo_writer;

--
-- Name: SEQUENCE job_failures_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.job_failures_id_seq TO exo_writer;

--
-- Name: TABLE mentions; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.mentions TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.mentions TO exo_writer;

--
-- Name: TABLE people; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.people TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.people TO exo_writer;

--
-- Name: SEQUENCE people_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.people_id_seq TO exo_writer;

--
-- Name: TABLE relations; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.relations TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.relations TO exo_writer;

--
-- Name: SEQUENCE relations_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.relations_id_seq TO exo_writer;

--
-- Name: TABLE router_classes; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.router_classes TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.router_classes TO exo_writer;

--
-- Name: TABLE router_state; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.router_state TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.router_state TO exo_writer;

--
-- Name: TABLE router_terms; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.router_terms TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.router_terms TO exo_writer;

--
-- Name: TABLE router_training; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.router_training TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.router_training TO exo_writer;

--
-- Name: TABLE schema_migrations; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.schema_migrations TO exo_api;
GRANT SELECT ON TABLE exo_private.schema_migrations TO exo_writer;

--
-- Name: TABLE sources; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.sources TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.sources TO exo_writer;

--
-- Name: SEQUENCE sources_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.sources_id_seq TO exo_writer;

--
-- Name: TABLE text_cache; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.text_cache TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.text_cache TO exo_writer;

--
-- Name: TABLE unreadable_folders; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.unreadable_folders TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.unreadable_folders TO exo_writer;

--
-- Name: TABLE worker_claims; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.worker_claims TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.worker_claims TO exo_writer;

--
-- Name: TABLE workers; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT ON TABLE exo_private.workers TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE exo_private.workers TO exo_writer;

--
-- Name: SEQUENCE workers_id_seq; Type: ACL; Schema: exo_private; Owner: exo_owner
--

GRANT SELECT,USAGE ON SEQUENCE exo_private.workers_id_seq TO exo_writer;

--
-- Name: TABLE _ag_label_edge; Type: ACL; Schema: graph_administrative; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_administrative._ag_label_edge TO exo_graph;

--
-- Name: TABLE _ag_label_vertex; Type: ACL; Schema: graph_administrative; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_administrative._ag_label_vertex TO exo_graph;

--
-- Name: TABLE _ag_label_edge; Type: ACL; Schema: graph_creative; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_creative._ag_label_edge TO exo_graph;

--
-- Name: TABLE _ag_label_vertex; Type: ACL; Schema: graph_creative; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_creative._ag_label_vertex TO exo_graph;

--
-- Name: TABLE _ag_label_edge; Type: ACL; Schema: graph_personal; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_personal._ag_label_edge TO exo_graph;

--
-- Name: TABLE _ag_label_vertex; Type: ACL; Schema: graph_personal; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_personal._ag_label_vertex TO exo_graph;

--
-- Name: TABLE _ag_label_edge; Type: ACL; Schema: graph_technical; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_technical._ag_label_edge TO exo_graph;

--
-- Name: TABLE _ag_label_vertex; Type: ACL; Schema: graph_technical; Owner: exo_owner
--

GRANT SELECT ON TABLE graph_technical._ag_label_vertex TO exo_graph;

--
-- Name: TABLE a_dead_letter; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.a_dead_letter TO pg_monitor;
GRANT SELECT ON TABLE pgmq.a_dead_letter TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.a_dead_letter TO exo_writer;

--
-- Name: TABLE a_embed; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.a_embed TO pg_monitor;
GRANT SELECT ON TABLE pgmq.a_embed TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.a_embed TO exo_writer;

--
-- Name: TABLE a_extract; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.a_extract TO pg_monitor;
GRANT SELECT ON TABLE pgmq.a_extract TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.a_extract TO exo_writer;

--
-- Name: TABLE a_ocr; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.a_ocr TO pg_monitor;
GRANT SELECT ON TABLE pgmq.a_ocr TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.a_ocr TO exo_writer;

--
-- Name: TABLE meta; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.meta TO pg_monitor;
GRANT SELECT ON TABLE pgmq.meta TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.meta TO exo_writer;

--
-- Name: TABLE notify_insert_throttle; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.notify_insert_throttle TO pg_monitor;
GRANT SELECT ON TABLE pgmq.notify_insert_throttle TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.notify_insert_throttle TO exo_writer;

--
-- Name: TABLE q_dead_letter; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.q_dead_letter TO pg_monitor;
GRANT SELECT ON TABLE pgmq.q_dead_letter TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.q_dead_letter TO exo_writer;

--
-- Name: SEQUENCE q_dead_letter_msg_id_seq; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON SEQUENCE pgmq.q_dead_letter_msg_id_seq TO pg_monitor;
GRANT SELECT,USAGE ON SEQUENCE pgmq.q_dead_letter_msg_id_seq TO exo_writer;

--
-- Name: TABLE q_embed; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.q_embed TO pg_monitor;
GRANT SELECT ON TABLE pgmq.q_embed TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.q_embed TO exo_writer;

--
-- Name: SEQUENCE q_embed_msg_id_seq; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON SEQUENCE pgmq.q_embed_msg_id_seq TO pg_monitor;
GRANT SELECT,USAGE ON SEQUENCE pgmq.q_embed_msg_id_seq TO exo_writer;

--
-- Name: TABLE q_extract; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.q_extract TO pg_monitor;
GRANT SELECT ON TABLE pgmq.q_extract TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.q_extract TO exo_writer;

--
-- Name: SEQUENCE q_extract_msg_id_seq; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON SEQUENCE pgmq.q_extract_msg_id_seq TO pg_monitor;
GRANT SELECT,USAGE ON SEQUENCE pgmq.q_extract_msg_id_seq TO exo_writer;

--
-- Name: TABLE q_ocr; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.q_ocr TO pg_monitor;
GRANT SELECT ON TABLE pgmq.q_ocr TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.q_ocr TO exo_writer;

--
-- Name: SEQUENCE q_ocr_msg_id_seq; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON SEQUENCE pgmq.q_ocr_msg_id_seq TO pg_monitor;
GRANT SELECT,USAGE ON SEQUENCE pgmq.q_ocr_msg_id_seq TO exo_writer;

--
-- Name: TABLE topic_bindings; Type: ACL; Schema: pgmq; Owner: exo_owner
--

GRANT SELECT ON TABLE pgmq.topic_bindings TO pg_monitor;
GRANT SELECT ON TABLE pgmq.topic_bindings TO exo_api;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE pgmq.topic_bindings TO exo_writer;

--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: exo_private; Owner: exo_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA exo_private GRANT SELECT,USAGE ON SEQUENCES TO exo_writer;

--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: exo_private; Owner: exo_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA exo_private GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES TO exo_writer;
ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA exo_private GRANT SELECT ON TABLES TO exo_api;

--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: pgmq; Owner: exo_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA pgmq GRANT SELECT ON SEQUENCES TO pg_monitor;
ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA pgmq GRANT SELECT,USAGE ON SEQUENCES TO exo_writer;

--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: pgmq; Owner: exo_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA pgmq GRANT SELECT ON TABLES TO pg_monitor;
ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA pgmq GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES TO exo_writer;
ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner IN SCHEMA pgmq GRANT SELECT ON TABLES TO exo_api;

--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: -; Owner: exo_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE exo_owner REVOKE ALL ON FUNCTIONS FROM PUBLIC;

--
-- PostgreSQL database dump complete
--
