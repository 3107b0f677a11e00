-- Retrieval: federated, staged search with temporal banding, deference, a
-- combined-pool rerank and a cited context packet (logic in plpy/retrieve.py and the
-- modules it includes: query_analysis, query_embedding, stages, reranking, search).
--
--   exo.search(...)          ranked chunks with citations
--   exo.search_report(...)   what the search did: stages, bands, hints, degradations, times
--   exo.search_json(...)     both, from one retrieval
--   exo.context_packet(...)  a cited packet within a token budget (text; _json for jsonb)
--
-- All of them run exo_private.retrieve, which runs the stage queries that
-- exo_private.stage_sql writes for one workspace partition.

-- exo_private.stage_parameters: every retrieval stage's parameters, in their order: the one
-- description of them. A stage's query names them ({query}, {bands}, ...; exo_private.stage_sql
-- binds each to its position) and plpy/stages.py reads them here to send its values by name.
-- Every stage has bands (the bands open), as_of (the day), row_limit and released (the canonical
-- keys of the charged subjects the search releases; null: every one; without released, none).
create or replace function exo_private.stage_parameters()
returns table (stage text, "position" int, name text, type text)
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    with own (stage, "position", name, type) as (values
        ('identifier', 1, 'identifier', 'text'),
        ('identifier', 6, 'query', 'text'),
        ('lexical', 1, 'query', 'text'),
        ('dated', 1, 'first_day', 'date'),
        ('dated', 6, 'last_day', 'date'),
        ('dated', 7, 'query', 'text'),
        ('entity', 1, 'entity_ids', 'bigint[]'),
        ('document', 1, 'title_keys', 'text[]'),
        ('document', 6, 'file_names', 'text[]'),
        ('graph', 1, 'entity_ids', 'bigint[]'),
        ('graph', 6, 'depth', 'int'),
        ('graph', 7, 'per_node', 'int'),
        ('path', 1, 'entity_ids', 'bigint[]'),
        ('path', 6, 'hop_patterns', 'text[]'),
        ('path', 7, 'per_node', 'int'),
        ('semantic', 1, 'query_vector', 'text'),
        ('participant', 1, 'query_vector', 'text'),
        ('participant', 6, 'name_keys', 'text[]'),
        ('personal', 1, 'query_vector', 'text'),
        ('personal', 6, 'documents', 'bigint[]'),
        ('personal', 7, 'threshold', 'float8'),
        ('personal', 8, 'per_document', 'int'),
        ('personal_keyword', 1, 'terms', 'text'),
        ('personal_keyword', 6, 'documents', 'bigint[]'),
        ('personal_keyword', 7, 'per_document', 'int'),
        ('capsules', 1, 'terms', 'text')
    ), common ("position", name, type) as (values
        (2, 'bands', 'text[]'), (3, 'as_of', 'date'), (4, 'row_limit', 'int'), (5, 'released', 'text[]')
    )
    select o.stage, o."position", o.name, o.type from own o
    union all
    select s.stage, c."position", c.name, c.type from (select distinct o.stage from own o) s cross join common c
    order by 1, 2
$$;
comment on function exo_private.stage_parameters() is
    'Each retrieval stage''s parameters (stage, position, name, type), in order: the one description '
    'that exo_private.stage_sql binds and plpy/stages.py sends by name.';

-- exo_private.stage_sql_identifier: {identifier}: a string that must occur verbatim (case-insensitive); {query}: the question's words
create or replace function exo_private.stage_sql_identifier(chunks text, bm25 text, ranked text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- The chunks holding the string, by its trigrams (chunks_body_trgm_idx, as lower(body) like
    -- '%string%'): a rare identifier's few at once, whatever its prefix shares. Past the limit the
    -- string is common (a host most notes name) and its holders are not all read: BM25's first 10 x
    -- the limit hits of its words, checked for the string, as many as the limit in BM25's order. A
    -- string of under three characters has no trigram: BM25's too. BM25 scores only the rows kept
    -- (a score computed outside the index costs about 0.1 ms a row), by the string with the
    -- question's words: of a common string's holders, those that hold what the question asks of
    -- it come first ("Why won't the HP-UX depot install?": the one of twelve that names depots).
    return format($q$
        with holders as materialized (
            select c.id from exo_private.%I c
            where pg_catalog.length({identifier}) >= 3
              and pg_catalog.lower(c.body) operator(pg_catalog.~~) ('%%' || pg_catalog.replace(pg_catalog.replace(
                  pg_catalog.replace(pg_catalog.lower({identifier}), '\', '\\'), '%%', '\%%'), '_', '\_') || '%%')
            limit {row_limit} + 1
        ), few as materialized (
            select pg_catalog.length({identifier}) >= 3 and count(*) <= {row_limit} as yes from holders
        )
        select x.chunk_id, -(x.ranked operator(public.<@>) public.to_bm25query(exo_private.bm25_text({identifier} || ' ' || {query}), %L)) as score,
               x.charged
        from (
            select c.id as chunk_id, %s as ranked, c.charged_subjects as charged
            from holders h
            join exo_private.%I c on c.id = h.id
            where (select f.yes from few f) and %s
            union all
            select y.chunk_id, y.ranked, y.charged from (
                select z.chunk_id, z.ranked, z.charged from (
                    select c.id as chunk_id, %s as ranked, c.charged_subjects as charged, c.body
                    from exo_private.%I c
                    where not (select f.yes from few f) and %s
                    order by %s operator(public.<@>) public.to_bm25query(exo_private.bm25_text({identifier} || ' ' || {query}), %L)
                    limit {row_limit} * 10
                ) z
                where pg_catalog.strpos(pg_catalog.lower(z.body), pg_catalog.lower({identifier})) > 0
                limit {row_limit}
            ) y
        ) x
        order by score desc, x.chunk_id desc
        limit {row_limit} $q$, chunks, bm25, ranked, chunks, visible, ranked, chunks, visible, ranked, bm25);
end
$$;

-- exo_private.stage_sql_lexical: {query}: the query
create or replace function exo_private.stage_sql_lexical(chunks text, bm25 text, ranked text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- The score is computed once a row, outside the index, and only the rows BM25 matches are
    -- kept after the limit: a filter on the score beside the ORDER BY computed it a second time
    -- (at a million chunks, half the stage's time). An index scan returns only matching rows;
    -- a sort (a small partition) puts them first.
    return format($q$
        select x.chunk_id, -x.distance as score, x.charged
        from (
            select c.id as chunk_id, %s operator(public.<@>) public.to_bm25query(exo_private.bm25_text({query}), %L) as distance,
                   c.charged_subjects as charged
            from exo_private.%I c
            where %s
            order by %s operator(public.<@>) public.to_bm25query(exo_private.bm25_text({query}), %L)
            limit {row_limit}
        ) x
        where x.distance < 0
        order by x.distance $q$, ranked, bm25, chunks, visible, ranked, bm25);
end
$$;

-- exo_private.stage_sql_dated: {first_day}..{last_day}: the days the question names; {query}: its words
create or replace function exo_private.stage_sql_dated(chunks text, bm25 text, ranked text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- What was written on the days a question names (a day, a week, a month: plpy/stages.py keeps
    -- the span short), those that share its words first: a named day finds its note even where
    -- the note never writes the date. BM25 scores a row outside its index (about 0.1 ms a row,
    -- hundreds of rows a day at a million chunks), so only a row whose title or body holds the
    -- start of one of the question's stems is scored ("famil" of famili, "cit" of citi: the
    -- stem's y made i); the others score 0, as BM25 would score most of them.
    return format($q$
        select c.id as chunk_id,
               case when exists (
                        select 1 from pg_catalog.unnest((
                            select pg_catalog.array_agg(case
                                       when pg_catalog.length(l) <= 5 and pg_catalog.right(l, 1) = 'i'
                                       then pg_catalog.left(l, -1) else pg_catalog.left(l, 5) end)
                            from pg_catalog.unnest(pg_catalog.tsvector_to_array(
                                pg_catalog.to_tsvector('english', exo_private.bm25_text({query})))) l)) w
                        where pg_catalog.strpos(pg_catalog.lower(coalesce(c.document_title, '') || ' ' || c.body), w) > 0)
                    then -(%s operator(public.<@>) public.to_bm25query(exo_private.bm25_text({query}), %L)) else 0 end as score,
               c.charged_subjects as charged, c.written_at::text as detail
        from exo_private.%I c
        where %s and c.written_at between {first_day} and {last_day}
        order by 2 desc, c.written_at, c.id
        limit {row_limit} $q$, ranked, bm25, chunks, visible);
end
$$;

-- exo_private.stage_sql_entity: {entity_ids}: entity ids; the chunks that name them, newest first
create or replace function exo_private.stage_sql_entity(chunks text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    -- Chunks per named entity looked at, newest first: a hub of thousands of mentions costs this
    -- many rows, not all of them. Only mentions the text makes (origin 'model'): a chat participant
    -- is the sender of every line of their windows, which says nothing about what a window answers
    -- (the lexical stage still matches the name).
    per_entity constant int := 200;
begin
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
        where e.id = any ({entity_ids}) and %s
        group by c.id, c.charged_subjects
        order by count(distinct e.id) desc, max(c.written_at) desc nulls last, c.id
        limit {row_limit} $q$, per_entity, chunks, visible);
end
$$;

-- exo_private.stage_sql_document: {title_keys}: title keys, {file_names}: file names or stems; a matched document's first chunks
create or replace function exo_private.stage_sql_document(workspace text, chunks text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
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
          and (d.title_key = any ({title_keys}) or d.file_name = any ({file_names}) or d.file_stem = any ({file_names}))
        order by d.written_at desc nulls last, d.id
        limit {row_limit} $q$, chunks, visible, workspace);
end
$$;

-- exo_private.stage_sql_graph: {entity_ids}: entity ids, {depth}: depth, {per_node}: neighbours per node
create or replace function exo_private.stage_sql_graph(workspace text, chunks text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    -- Chunks per named entity looked at, newest first: a hub of thousands of mentions costs this
    -- many rows, not all of them. Only mentions the text makes (origin 'model'): a chat participant
    -- is the sender of every line of their windows, which says nothing about what a window answers
    -- (the lexical stage still matches the name).
    per_entity constant int := 200;
begin
    -- Never along what the search withholds: a relation of a window that overlaps a withheld
    -- chunk (judged by related_entities as it walks), a closed subject's entity
    -- (exo_private.hidden_entities).
    return format($q$
        with hidden as materialized (
            select exo_private.hidden_entities(%L, {released}::text[]) as entities
        )
        select c.id as chunk_id, (1.0 / (1 + min(n.depth)))::float8 as score, c.charged_subjects as charged,
               string_agg(distinct n.name, ', ') as detail
        from hidden h
        cross join unnest({entity_ids}::bigint[]) s (entity_id)
        cross join lateral exo_private.related_entities(s.entity_id, {depth}, {per_node}, {released}::text[], h.entities) n
        cross join lateral (
            select m.chunk_id from exo_private.mentions m
            where m.entity_id = n.entity_id and m.chunk_id is not null and m.origin = 'model'
            order by m.chunk_id desc limit %s
        ) m
        join exo_private.%I c on c.id = m.chunk_id
        where %s and n.entity_id <> all ({entity_ids})
        group by c.id, c.charged_subjects
        order by min(n.depth), count(distinct n.entity_id) desc, max(c.written_at) desc nulls last, c.id
        limit {row_limit} $q$, workspace, per_entity / 10, chunks, visible);
end
$$;

-- exo_private.stage_sql_path: {entity_ids}: entity ids, {hop_patterns}: one predicate pattern a hop, {per_node}: neighbours per node
create or replace function exo_private.stage_sql_path(workspace text, chunks text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- A typed multi-hop walk (plpy/relation_paths.py): from the named entities, hop i follows
    -- relations of either origin and direction whose predicate matches {hop_patterns}[i], each node
    -- expanding to at most {per_node} neighbours, each along its first relation
    -- (exo_private.typed_neighbours, hub-safe). Every relation walked
    -- cites the chunks of its extraction window, those naming its ends first; the last hop's
    -- evidence (the answer) scores above the hops that lead to it. walked: the relations a
    -- chunk states, each [the hops that walked it, subject, predicate, object], for the
    -- packet's Relations section.
    return format($q$
        with recursive hidden as materialized (
            -- never along what the search withholds, as the graph stage: a relation of a window
            -- that overlaps a withheld chunk (judged by typed_neighbours as it reads), a closed
            -- subject's entity
            select exo_private.hidden_entities(%L, {released}::text[]) as entities
        ), walk (entity_id, hop, relation_id) as (
            -- A row with a relation: a relation walked at that hop; without: an entity reached at
            -- that hop, expanded once however many relations reach it (UNION keeps one: an
            -- entity related to the one before it in hundreds of windows is not walked from
            -- hundreds of times).
            select s.entity_id, 0, null::bigint from unnest({entity_ids}::bigint[]) s (entity_id)
            union
            select nb.entity_id, w.hop + 1, x.relation_id
            from walk w
            cross join hidden h
            cross join lateral exo_private.typed_neighbours(w.entity_id, {hop_patterns}[w.hop + 1], {per_node}, {released}::text[], h.entities) nb
            cross join lateral (values (nb.relation_id), (null::bigint)) x (relation_id)
            where w.relation_id is null and w.hop < cardinality({hop_patterns})
        ), steps as materialized (
            -- By key, a walked relation at a time: the walk's size is unknown to the planner.
            select r.id, r.document_id, r.subject_id, r.object_id, r.predicate, x.char_start, x.char_end,
                   max(w.hop) as hop, array_agg(distinct w.hop) as hops,
                   (select e.name from exo_private.entities e where e.id = r.subject_id) as subject_name,
                   (select e.name from exo_private.entities e where e.id = r.object_id) as object_name
            from walk w
            cross join lateral (select r.* from exo_private.relations r where r.id = w.relation_id) r
            cross join lateral (
                select x.char_start, x.char_end from exo_private.extraction_windows x where x.id = r.window_id
            ) x
            group by r.id, r.document_id, r.subject_id, r.object_id, r.predicate, x.char_start, x.char_end
        )
        select c.id as chunk_id,
               max(case when st.hop = cardinality({hop_patterns}) then 1.0 else 0.8 end)::float8 as score,
               c.charged_subjects as charged,
               string_agg(distinct st.subject_name || ' ' || st.predicate || ' ' || st.object_name, '; ') as detail,
               jsonb_agg(distinct jsonb_build_array(st.hops, st.subject_name, st.predicate, st.object_name))::text
                   as walked
        from steps st
        cross join lateral (
            select c.id, c.charged_subjects, c.written_at
            from exo_private.%I c
            where c.document_id = st.document_id and c.char_start < st.char_end
              and c.char_end > st.char_start and %s
            order by (select count(*) from exo_private.mentions m
                      where m.chunk_id = c.id and m.entity_id in (st.subject_id, st.object_id)) desc,
                     c.ordinal
            limit 2
        ) c
        group by c.id, c.charged_subjects
        order by score desc, max(c.written_at) desc nulls last, c.id
        limit {row_limit} $q$, workspace, chunks, visible);
end
$$;

-- exo_private.stage_sql_semantic: {query_vector}: the query vector as text; cosine similarity over the model's HNSW index
create or replace function exo_private.stage_sql_semantic(workspace text, chunks text, visible text, model_id int, dimensions int)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- Written as embedding::vector(N) with model_id = N so the partial HNSW index matches.
    return format($q$
        select x.chunk_id, x.score, x.charged from (
            select c.id as chunk_id,
                   (1 - (e.embedding::public.vector(%s) operator(public.<=>) {query_vector}::public.vector(%s)))::float8 as score,
                   c.charged_subjects as charged
            from exo_private.%I e
            join exo_private.%I c on c.workspace = e.workspace and c.id = e.chunk_id
            where e.model_id = %s and %s
            order by e.embedding::public.vector(%s) operator(public.<=>) {query_vector}::public.vector(%s)
            limit {row_limit}
        ) x
        order by x.score desc $q$,
        dimensions, dimensions, 'chunk_embeddings_' || workspace, chunks, model_id, visible,
        dimensions, dimensions);
end
$$;

-- exo_private.stage_sql_participant: {query_vector}: the query vector as text, {name_keys}: name keys of the query's words
create or replace function exo_private.stage_sql_participant(workspace text, chunks text, visible text, model_id int, dimensions int)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- The chat windows of the people the question names (by full name or first name), by
    -- similarity to it: "Where does Priya live now?" names whose conversation to look in,
    -- while its answer ("Officially a Porto resident") shares no word with it. The owner takes
    -- part in every window, so naming the owner narrows nothing and is left out.
    return format($q$
        with named as materialized (
            select e.id from exo_private.entities e
            where e.workspace = %L and e.type = 'Person'
              and (e.canonical_key = any ({name_keys}) or pg_catalog.split_part(e.canonical_key, ' ', 1) = any ({name_keys}))
              and e.canonical_key is distinct from
                  (select p.entity_key from exo_private.people p where p.is_owner)
        ), windows as materialized (
            select distinct m.chunk_id from exo_private.mentions m
            where m.entity_id in (select n.id from named n) and m.origin = 'structure'
              and m.chunk_id is not null
        )
        select x.chunk_id, x.score, x.charged from (
            select c.id as chunk_id,
                   -- the query vector parsed once (an InitPlan), not once a window in a generic plan
                   (1 - (e.embedding::public.vector(%s) operator(public.<=>) (select {query_vector}::public.vector(%s))))::float8 as score,
                   c.charged_subjects as charged
            from windows w
            join exo_private.%I c on c.workspace = %L and c.id = w.chunk_id
            join exo_private.%I e on e.workspace = c.workspace and e.chunk_id = c.id and e.model_id = %s
            where %s
            order by score desc, c.id desc
            limit {row_limit}
        ) x
        order by x.score desc $q$,
        workspace, dimensions, dimensions, chunks, workspace, 'chunk_embeddings_' || workspace, model_id,
        visible);
end
$$;

-- exo_private.stage_sql_personal: {query_vector}: the query vector as text, {documents}: a user's saved documents, {threshold}: the similarity threshold, {per_document}: chunks per document
create or replace function exo_private.stage_sql_personal(workspace text, chunks text, visible text, model_id int, dimensions int)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- The personal stage (sql/700_kb.sql): the chunks of the user's claimed and pinned
    -- documents in this workspace by exact cosine similarity, only those at {threshold} or above, at
    -- most {per_document} per document; each row names its document (detail) for the miss streak. One pass
    -- over the saved documents' chunks, each chunk's vector by its primary key (the lateral's
    -- limit keeps the planner from a hash join over every vector of the workspace), a window
    -- per document over the few that pass, the query vector parsed once (an InitPlan).
    return format($q$
        select x.chunk_id, x.score, x.charged, x.document_id::text as detail
        from (
            select y.*, pg_catalog.row_number() over (partition by y.document_id
                                                      order by y.score desc, y.chunk_id) as n
            from (
                select c.id as chunk_id, c.document_id, c.charged_subjects as charged, e.score
                from exo_private.%I c
                cross join lateral (
                    select (1 - (e.embedding::public.vector(%s) operator(public.<=>)
                                 (select {query_vector}::public.vector(%s))))::float8 as score
                    from exo_private.%I e
                    where e.workspace = c.workspace and e.model_id = %s and e.chunk_id = c.id
                    limit 1
                ) e
                where c.workspace = %L and c.document_id = any ({documents}::bigint[]) and %s
            ) y
            where y.score >= {threshold}
        ) x
        where x.n <= {per_document}
        order by x.score desc, x.chunk_id
        limit {row_limit} $q$,
        chunks, dimensions, dimensions, 'chunk_embeddings_' || workspace, model_id, workspace, visible);
end
$$;

-- exo_private.stage_sql_personal_keyword: {terms}: the query's words joined by ' or ', {documents}: saved documents, {per_document}: chunks per document
create or replace function exo_private.stage_sql_personal_keyword(workspace text, chunks text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- The personal stage without a query embedding: the saved documents' chunks that share a
    -- word with the question, best ts_rank first.
    return format($q$
        select x.chunk_id, x.score, x.charged, x.document_id::text as detail
        from unnest({documents}::bigint[]) s (document_id)
        cross join lateral (
            select c.id as chunk_id, c.document_id, c.charged_subjects as charged,
                   pg_catalog.ts_rank(pg_catalog.to_tsvector('english', exo_private.bm25_chunk_text(c.document_title, c.body)),
                                      pg_catalog.websearch_to_tsquery('english', {terms}))::float8 as score
            from exo_private.%I c
            where c.workspace = %L and c.document_id = s.document_id and %s
              and pg_catalog.to_tsvector('english', exo_private.bm25_chunk_text(c.document_title, c.body)) @@ pg_catalog.websearch_to_tsquery('english', {terms})
            order by score desc, c.id
            limit {per_document}
        ) x
        order by x.score desc, x.chunk_id
        limit {row_limit} $q$, chunks, workspace, visible);
end
$$;

-- exo_private.stage_sql_capsules: {terms}: the query's words joined by ' or ' (websearch_to_tsquery's syntax)
create or replace function exo_private.stage_sql_capsules(workspace text, chunks text, visible text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- The workspace's capsules that match (sql/610_capsules.sql), best first. Of a fresh one,
    -- the chunks its matching lines come from: a capsule points to evidence, never replaces
    -- it. A stale one gives a row without a chunk: the report says it was skipped. A withheld
    -- one (it cites a charged chunk) is never matched, as its chunks would not be.
    return format($q$
        with matched as materialized (
            select k.id, k.body, k.sentences, s.state,
                   pg_catalog.ts_rank(k.tsv, pg_catalog.websearch_to_tsquery('english', {terms}))::float8 as score
            from exo_private.capsules k
            join exo_private.capsule_states s on s.capsule_id = k.id
            where k.workspace = %L and k.tsv @@ pg_catalog.websearch_to_tsquery('english', {terms})
              and s.state <> 'withheld'
            order by score desc, k.id
            limit {row_limit}
        ), lines as (
            select m.id, (s.sentence ->> 'chunk_id')::bigint as chunk_id, count(*) as hits
            from matched m
            cross join lateral rows from (
                pg_catalog.jsonb_array_elements(m.sentences),
                pg_catalog.unnest(pg_catalog.string_to_array(m.body, E'\n'))) s (sentence, line)
            where m.state = 'fresh'
              and pg_catalog.to_tsvector('english', s.line) @@ pg_catalog.websearch_to_tsquery('english', {terms})
            group by 1, 2
        )
        select m.id as capsule_id, m.state, x.chunk_id, m.score, x.charged
        from matched m
        left join lateral (
            select c.id as chunk_id, c.charged_subjects as charged, l.hits
            from lines l
            join exo_private.%I c on c.id = l.chunk_id
            where l.id = m.id and %s
        ) x on true
        order by m.score desc, x.hits desc nulls last, x.chunk_id
        limit {row_limit} $q$, workspace, chunks, visible);
end
$$;

-- exo_private.bind_stage: a stage's query with its named parameters ({name}) at their positions.
create or replace function exo_private.bind_stage(p_stage text, p_sql text)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    parameter record;
    bound text := p_sql;
begin
    for parameter in select * from exo_private.stage_parameters() p where p.stage = p_stage loop
        bound := replace(bound, '{' || parameter.name || '}', '$' || parameter."position");
    end loop;
    if bound ~ '[{][a-z_]+[}]' then
        raise exception 'stage % names a parameter it does not have: %', p_stage, substring(bound from '[{][a-z_]+[}]');
    end if;
    return bound;
end
$$;
comment on function exo_private.bind_stage(text, text) is
    'A stage''s query with each {name} of exo_private.stage_parameters replaced by $position; '
    'raises naming a {name} the stage does not have.';

-- exo_private.stage_sql: the query one retrieval stage runs in one workspace.
create or replace function exo_private.stage_sql(
    stage text, workspace text, model_id int default null, dimensions int default null, released boolean default false
)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    chunks text := 'chunks_' || workspace;
    -- A search that releases nothing reads only what is charged for nothing, through the BM25
    -- index of those chunks alone (chunks_<workspace>_bm25_open): no statistic it ranks by (how
    -- rare a word is, how long a chunk) holds withheld material. One that releases a subject
    -- (released) ranks by the index of every chunk, which the subjects it releases are in.
    bm25 text := format('exo_private.%I', 'chunks_' || workspace || case when released then '_bm25' else '_bm25_open' end);
    -- What the index ranks: the document's title and the body as BM25 reads them
    -- (exo_private.bm25_chunk_text: the words inside a path opened); the open index's is followed
    -- by || '', an expression only it matches, so the planner can never scan the index of every
    -- chunk for it (with nothing charged the two cost the same, and to_bm25query refuses a scan
    -- of an index other than the one it names).
    ranked text := case when released then 'exo_private.bm25_chunk_text(c.document_title, c.body)'
                        else $e$(exo_private.bm25_chunk_text(c.document_title, c.body) || '')$e$ end;
    -- Every stage (exo_private.stage_parameters): bands open, as_of day, row_limit, released keys.
    -- Nothing written after as_of. Nothing charged for a subject the search
    -- leaves closed, in any stage: withheld material never takes a place among the candidates,
    -- nor counts in a report (docs/security.md, the oracle rule). The band: the stored one (as of
    -- today), compared as the enum, not as text, so the planner keeps the column's statistics; as
    -- of a past day, the band the chunk had then (exo_private.band_as_of), worked out only for a
    -- chunk whose stored band is closed: a band only moves towards archival as time passes, so one
    -- open now (the bands opened are the present ones or all) was open on any earlier day.
    visible text := format($v$c.workspace = %L and (c.written_at is null or c.written_at <= {as_of})
        and %s
        and (c.band = any ({bands}::exo_private.band[])
             or {as_of} < current_date and exo_private.band_as_of(
                c.band, c.written_at,
                (select bd.band_source = 'inferred' and not bd.canonical
                 from exo_private.documents bd where bd.id = c.document_id),
                {as_of},
                (select bs.value::int from exo_private.settings bs where bs.key = 'banding.current_days'),
                (select bs.value::int from exo_private.settings bs where bs.key = 'banding.recent_days'))
            = any ({bands}::exo_private.band[]))$v$,
        workspace,
        case when released
             then $c$(c.charged_subjects = '{}' or {released}::text[] is null
                      or exo_private.unreleased(c.charged_subjects, {released}::text[]) = '{}')$c$
             else $c$c.charged_subjects = '{}'$c$ end);
begin
    if not exists (select 1 from exo_private.workspaces w where w.name = stage_sql.workspace) then
        raise exception 'workspace % does not exist', left(workspace, 100);
    end if;
    if not exists (select 1 from exo_private.stage_parameters() p where p.stage = stage_sql.stage) then
        raise exception 'unknown retrieval stage %', left(stage, 100)
            using hint = 'one of identifier, lexical, dated, entity, document, graph, path, semantic, participant, capsules, personal, personal_keyword';
    end if;
    if stage in ('semantic', 'participant', 'personal') and (model_id is null or dimensions is null) then
        raise exception 'the % stage needs an embedding model and its dimensions', stage;
    end if;
    return exo_private.bind_stage(stage, case stage
        when 'identifier' then exo_private.stage_sql_identifier(chunks, bm25, ranked, visible)
        when 'lexical' then exo_private.stage_sql_lexical(chunks, bm25, ranked, visible)
        when 'dated' then exo_private.stage_sql_dated(chunks, bm25, ranked, visible)
        when 'entity' then exo_private.stage_sql_entity(chunks, visible)
        when 'document' then exo_private.stage_sql_document(workspace, chunks, visible)
        when 'graph' then exo_private.stage_sql_graph(workspace, chunks, visible)
        when 'path' then exo_private.stage_sql_path(workspace, chunks, visible)
        when 'semantic' then exo_private.stage_sql_semantic(workspace, chunks, visible, model_id, dimensions)
        when 'participant' then exo_private.stage_sql_participant(workspace, chunks, visible, model_id, dimensions)
        when 'personal' then exo_private.stage_sql_personal(workspace, chunks, visible, model_id, dimensions)
        when 'personal_keyword' then exo_private.stage_sql_personal_keyword(workspace, chunks, visible)
        when 'capsules' then exo_private.stage_sql_capsules(workspace, chunks, visible)
    end);
end
$$;
comment on function exo_private.stage_sql(text, text, int, int, boolean) is
    'The SQL one retrieval stage runs in one workspace''s partitions (identifier, lexical, dated, entity, '
    'document, graph, path (typed multi-hop), semantic, participant, capsules, personal, '
    'personal_keyword: exo_private.stage_sql_<stage>), its parameters bound to the positions '
    'exo_private.stage_parameters gives them. Every stage reads what the open bands hold (a chunk''s '
    'band as of as_of, exo_private.band_as_of: the stored one when as_of is today or later), nothing '
    'written after as_of, at most row_limit rows, and nothing charged for a subject released leaves '
    'closed. Without released, nothing charged is read, and BM25 ranks by the index of the chunks '
    'charged for nothing; with it, BM25 ranks by the index of every chunk. Prepared and cached by '
    'exo_private.retrieve, and explained by bench/search_latency.py.';

-- exo_private.pool_details: what the rerank and the packet need of each candidate.
create or replace function exo_private.pool_details(p_workspaces text[], p_chunks bigint[], p_as_of date default null)
returns table (
    chunk_id bigint, workspace text, document_id bigint, ordinal int, body text, band text,
    written_at date, path text, title text, canonical boolean, chat jsonb, document_title text
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select c.id, c.workspace, c.document_id, c.ordinal, c.body,
           exo_private.band_as_of(c.band, c.written_at, d.band_source = 'inferred' and not d.canonical, p_as_of,
                                  (select bs.value::int from exo_private.settings bs where bs.key = 'banding.current_days'),
                                  (select bs.value::int from exo_private.settings bs where bs.key = 'banding.recent_days'))::text,
           c.written_at, d.path, d.title, d.canonical,
           case when cw.chunk_id is not null then jsonb_build_object(
               'conversation_id', cw.conversation_id, 'title', d.title, 'senders', s.senders,
               'first_sent_at', cw.first_sent_at, 'message_ids', to_jsonb(cw.message_ids),
               -- each message's time, in the order of message_ids: as_of cuts a window (search.cut_at)
               'sent_at', (select jsonb_agg(m.sent_at order by o.n)
                           from unnest(cw.message_ids) with ordinality o (message_id, n)
                           join exo_private.chat_messages m on m.id = o.message_id)) end,
           c.document_title
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
comment on function exo_private.pool_details(text[], bigint[], date) is
    'Chunk and document of each candidate of the combined pool, by (workspace, chunk id), with its band '
    'as of p_as_of (exo_private.band_as_of; null: the stored band); chat, for a '
    'chunk that is a chat window (else null): {conversation_id, title, senders (distinct, in order of '
    'their first message), first_sent_at, message_ids (in order)}; document_title, the title BM25 '
    'read with it (chunks.document_title).';

-- exo_private.pool_similarity: cosine similarity of candidates to a query vector.
create or replace function exo_private.pool_similarity(
    p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id int
)
returns table (chunk_id bigint, similarity float8)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A lookup by primary key: no index on the distance, so the untyped vector is fine. The query
    -- vector is parsed once (the subquery), not once a row (about 20 microseconds each).
    select e.chunk_id, (1 - (e.embedding operator(public.<=>) (select p_vector::public.vector)))::float8
    from unnest(p_workspaces, p_chunks) w (workspace, chunk_id)
    join exo_private.chunk_embeddings e
      on e.workspace = w.workspace and e.chunk_id = w.chunk_id and e.model_id = p_model_id
$$;
comment on function exo_private.pool_similarity(text[], bigint[], text, int) is
    'Cosine similarity between a query vector and the stored vectors of some chunks (one model).';

-- exo_private.message_similarity: cosine similarity of chat messages to a query vector.
create or replace function exo_private.message_similarity(p_messages bigint[], p_vector text, p_model_id int)
returns table (message_id bigint, similarity float8)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- the query vector parsed once, as pool_similarity does
    select e.message_id, (1 - (e.embedding operator(public.<=>) (select p_vector::public.vector)))::float8
    from exo_private.chat_message_embeddings e
    where e.model_id = p_model_id and e.message_id = any (p_messages)
$$;
comment on function exo_private.message_similarity(bigint[], text, int) is
    'Cosine similarity between a query vector and the stored vectors of some chat messages (one '
    'model); a message without one is left out.';

-- exo_private.rerank_call: one remote rerank call, bounded per call and per session; never raises for a model failure.
create or replace function exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include reranking
return rerank_call_json(plpy, SD, GD, backend, endpoint, query, passages, ids, options)
$$;
comment on function exo_private.rerank_call(text, jsonb, text, text[], bigint[], jsonb) is
    'Ask a remote rerank backend (cross_encoder: /rerank scores; listwise: the chat model orders ids) '
    'about passages: {scores} or {ranking}, or {error_class, error}, with passages (how many were '
    'sent); never raises for a model failure. Bounded per call (retrieval.rerank_limits: the first '
    'max_passages passages, passage_chars of each) and per session (reader.rerank_calls_per_minute; '
    'over it: error_class rate_limited, and no call).';

-- exo_private.check_search_arguments: a caller's mistakes, named, before any search runs.
create or replace function exo_private.check_search_arguments(
    query text, workspaces text[], k int, per_workspace int, query_embedding float8[],
    token_budget int default null, bridge text[] default null
)
returns void
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
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
    perform exo_private.check_query_embedding(query_embedding);
end
$$;
comment on function exo_private.check_search_arguments(text, text[], int, int, float8[], int, text[]) is
    'Raise invalid_parameter_value, naming the argument, for what exo.search, exo.search_report, '
    'exo.search_json and exo.context_packet cannot take; they call it before exo_private.retrieve. A message echoes at '
    'most 100 characters of an argument.';

-- exo_private.retrieve: the whole search (plpy/retrieve.py); exo.search, exo.search_report,
-- exo.search_json and exo.context_packet read its {results, report}; the packet also its later.
create or replace function exo_private.retrieve(
    query text,
    workspaces text[] default null,
    k int default 25,
    per_workspace int default 30,
    open_archive boolean default null,
    bridge text[] default '{}',
    as_of timestamptz default now(),
    query_embedding float8[] default null,
    profile text default null
)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, public, pg_temp  -- pg_textsearch resolves its score function by name
set hnsw.iterative_scan = relaxed_order  -- a band filter after the HNSW scan still fills the limit
as $$
# exo:include retrieve
return run(plpy, SD, GD, query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding, profile)
$$;
comment on function exo_private.retrieve(text, text[], int, int, boolean, text[], timestamptz, float8[], text) is
    'The whole retrieval: temporal signal, staged search per workspace with early stop, deference '
    '(time and care decided apart), archive fallback, combined-pool rerank; {results, later, report} (later: passages naming a value the first results state, for the packet). Reads '
    'the first 2,000 characters of the query; its query embedding counts against '
    'reader.embed_calls_per_minute. With a profile, the personal stage (the user''s claimed and pinned '
    'documents, sql/700_kb.sql) runs first in each workspace. Read through exo.search, '
    'exo.search_report, exo.search_json and exo.context_packet.';

-- exo.search: ranked chunks for a question, federated over workspaces.
create or replace function exo.search(
    query text,
    workspaces text[] default null,
    k int default 25,
    per_workspace int default 30,
    open_archive boolean default null,
    bridge text[] default '{}',
    as_of timestamptz default now(),
    query_embedding float8[] default null
)
returns table (
    rank int, chunk_id bigint, body text, path text, title text, workspace text, band text,
    written_at date, stage text, citation text, score float8, document_id bigint, canonical boolean
)
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.check_search_arguments(query, workspaces, k, per_workspace, query_embedding, null, bridge);
    select r.rank, r.chunk_id, r.body, r.path, r.title, r.workspace, r.band, r.written_at, r.stage,
           r.citation, r.score, r.document_id, r.canonical
    from jsonb_to_recordset(
        exo_private.kb_after_search(exo_private.session_profile_name(), exo_private.retrieve(
            query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding, exo_private.session_profile_name()))
        -> 'results') as r (
        rank int, chunk_id bigint, body text, path text, title text, workspace text, band text,
        written_at date, stage text, citation text, score float8, document_id bigint, canonical boolean)
    order by r.rank
$$;
comment on function exo.search(text, text[], int, int, boolean, text[], timestamptz, float8[]) is
    'Ranked chunks answering a question: staged retrieval (exact, participant, path, lexical, capsules, graph, semantic) in '
    'each workspace (null: all) with at most per_workspace candidates each, temporal banding (the '
    'archive opens on a temporal signal or open_archive), deferred subjects withheld unless bridged or '
    'named by the question while the archive is open (deference.time_releases: an open archive alone), '
    'then one rerank of the merged pool; k rows with citation, band and the stage that found each. '
    'Chat windows (chunks of imported conversations, path chat/<source>/<id>) are found, ranked and '
    'cited with documents; their citation is workspace:chat "conversation title" and the time of '
    'the window''s first message (personal:chat "Iris Calder" 2024-03-04 09:12). '
    'query_embedding (float8[], the question embedded by the caller with the model in use) replaces '
    'the embeddings endpoint. A session of a profile''s login role (exo user add NAME) searches that '
    'user''s saved documents first (stage personal) and records what the search returned in their base '
    'when the transaction may write (begin read write). exo.search_report says what happened.';

-- exo.search_report: what a search did.
create or replace function exo.search_report(
    query text,
    workspaces text[] default null,
    k int default 25,
    per_workspace int default 30,
    open_archive boolean default null,
    bridge text[] default '{}',
    as_of timestamptz default now(),
    query_embedding float8[] default null
)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.check_search_arguments(query, workspaces, k, per_workspace, query_embedding, null, bridge);
    select exo_private.kb_after_search(exo_private.session_profile_name(), exo_private.retrieve(
               query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding, exo_private.session_profile_name()))
           -> 'report'
$$;
comment on function exo.search_report(text, text[], int, int, boolean, text[], timestamptz, float8[]) is
    'What exo.search does for the same arguments (jsonb): the temporal signal and the bands opened, '
    'per workspace the stages run or skipped (and why) with counts and times, deference hints '
    '(subject, workspace, chunks withheld, how to open them; never their text), what deferred '
    'material was released (subject, workspace, chunks, why), degradations (an endpoint down or '
    'rate_limited, a stage skipped), the rerank backend and its fallbacks, and timings; in a profile''s '
    'session, the personal stage (personal) and the provenance block (provenance: {profile, sources, text}).';

-- exo.search_json: exo.search's rows and exo.search_report's report from one retrieval.
create or replace function exo.search_json(
    query text,
    workspaces text[] default null,
    k int default 25,
    per_workspace int default 30,
    open_archive boolean default null,
    bridge text[] default '{}',
    as_of timestamptz default now(),
    query_embedding float8[] default null
)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
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
    from exo_private.kb_after_search(exo_private.session_profile_name(), exo_private.retrieve(
        query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding, exo_private.session_profile_name())) found
$$;
comment on function exo.search_json(text, text[], int, int, boolean, text[], timestamptz, float8[]) is
    'One search, rows and report together (jsonb): {results: the rows exo.search gives (rank, chunk_id, '
    'body, path, title, workspace, band, written_at, stage, citation, score, document_id, canonical), '
    'report: what exo.search_report says of the same run (signal, bands, stages, hints, released, '
    'degradations, rerank, timings)}. Same arguments and defaults as exo.search; one retrieval, one now().';

-- exo_private.build_packet: the packet of a retrieve() result (plpy/search.py packet()).
create or replace function exo_private.build_packet(retrieved jsonb, query text, token_budget int)
returns jsonb
language plpython3u stable
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include changes
# exo:include fact_choice
# exo:include meaning
# exo:include passage_days
# exo:include timeline
import datetime
import functools
import json

if "settings" not in SD:
    SD["settings"] = plpy.prepare(
        "select key, value::text from exo_private.settings where key like 'packet.%' or key in "
        "('models.embeddings', 'retrieval.embed_timeout_s', 'reader.embed_calls_per_minute', "
        "'timeline.category_similarity', 'banding.numeric_date_order')", []
    )
settings = {r["key"]: json.loads(r["value"]) for r in plpy.execute(SD["settings"], [])}
found = json.loads(retrieved)
report = found["report"]
documents = list(dict.fromkeys(r["document_id"] for r in found["results"]))
capsules = []
if documents:
    if "capsules" not in SD:
        SD["capsules"] = plpy.prepare("select * from exo_private.packet_capsules($1)", ["bigint[]"])
    rows = plpy.execute(SD["capsules"], [documents])
    capsules = [dict(r, sentences=json.loads(r["sentences"])) for r in rows]
# The facts of the people and things the question names, valid on the packet's day.
if "facts" not in SD:
    SD["facts"] = plpy.prepare(
        "select * from exo_private.packet_facts($1, ($2::date + 1)::timestamptz - interval '1 microsecond', $3, $4, $5)",
        ["text[]", "text", "text[]", "text[]", "boolean"],
    )
facts = with_previous([
    dict(r, sources=json.loads(r["sources"] or "[]"), withheld=json.loads(r["withheld"]) if r["withheld"] else None)
    for r in plpy.execute(
        SD["facts"],
        [
            name_keys(query),
            fact_moment(report),
            report.get("bridge") or [],
            list(report["workspaces"]),
            first_person(query),
        ],
    )
])
# Only the facts the question is about (plpy/fact_choice.py): by words, by the embeddings'
# meaning unless the search found the endpoint failing, by what the cited passages state.
meaning = None
if not any(d["component"] == "embeddings" for d in report.get("degradations") or []):
    meaning = session_meaning(settings, GD, SD.setdefault("fact_vectors", {}))


def run_statement(name, statement, types, args):
    if name not in SD:
        SD[name] = plpy.prepare(statement, types)
    return plpy.execute(SD[name], args)


# An aggregate question ("how many times", "when did I last") answered from the events
# (plpy/timeline.py), before the evidence.
timeline, computed = timeline_section(
    run_statement, query, report, meaning, settings.get("timeline.category_similarity", CATEGORY_SIMILARITY)
)
report["timeline"] = computed
# Passages that state different values of one thing: newest first, each marked (plpy/changes.py).
result = packet(
    query, found["results"] + found.get("later", []), report["hints"], report, token_budget, settings, capsules, facts,
    datetime.date.today().isoformat(), order_changes,
    functools.partial(facts_about, settings=settings, meaning=meaning), timeline,
    functools.partial(of_named_days, numeric_order=settings.get("banding.numeric_date_order") or "dmy"),
)
result["report"] = report
return json.dumps(result)
$$;
comment on function exo_private.build_packet(jsonb, text, int) is
    'The context packet (text, tokens, used, capsules, hints, report) of an exo_private.retrieve '
    'result within token_budget tokens; the fresh capsules of the documents it cites '
    '(exo_private.packet_capsules) make its capsule section.';

-- exo.context_packet_json: a cited context packet within a token budget, as jsonb.
create or replace function exo.context_packet_json(
    query text,
    token_budget int default 4000,
    workspaces text[] default null,
    open_archive boolean default null,
    bridge text[] default '{}',
    as_of timestamptz default now(),
    query_embedding float8[] default null
)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.check_search_arguments(query, workspaces, 25, 30, query_embedding, token_budget, bridge);
    select exo_private.build_packet(
        exo_private.kb_after_search(exo_private.session_profile_name(), exo_private.retrieve(
            query, workspaces, 25, 30, open_archive, bridge, as_of, query_embedding, exo_private.session_profile_name())),
        query, token_budget)
$$;
comment on function exo.context_packet_json(text, int, text[], boolean, text[], timestamptz, float8[]) is
    'The context packet for a question as jsonb: text (current facts, then the relations of a typed '
    'walk the question asks for with the chunks that state them, then capsules of the cited '
    'documents with their sources, then cited evidence excerpts, '
    'then deference hints, then provenance), tokens used (never over token_budget; about four '
    'characters a token), the citations used, the hints and the search report (in a profile''s session, as '
    'exo.search_report: the personal stage and the provenance block), relations shown.';

-- exo.context_packet: the packet as text.
create or replace function exo.context_packet(
    query text,
    token_budget int default 4000,
    workspaces text[] default null,
    open_archive boolean default null,
    bridge text[] default '{}',
    as_of timestamptz default now(),
    query_embedding float8[] default null
)
returns text
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo.context_packet_json(
               query, token_budget, workspaces, open_archive, bridge, as_of, query_embedding) ->> 'text'
$$;
comment on function exo.context_packet(text, int, text[], boolean, text[], timestamptz, float8[]) is
    'A small cited answer packet for a question, within token_budget tokens: current facts first, '
    'then relations of a typed walk with the chunks that state them, then numbered evidence excerpts (path, workspace, date, band; for a chat, whole messages with '
    'their times and senders around the ones richest in the question''s words), then hints about withheld '
    'subjects, then provenance. exo.context_packet_json gives it with its token count and report.';
