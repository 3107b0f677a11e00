-- Retrieval: federated, staged search with temporal banding, deference, a
-- combined-pool rerank and a cited context packet (logic in plpy/search.py).
--
--   exo.search(...)          ranked chunks with citations
--   exo.search_report(...)   what the search did: stages, bands, hints, degradations, times
--   exo.context_packet(...)  a cited packet within a token budget (text; _json for jsonb)
--
-- All of them run exo_private.retrieve, which runs the stage queries that
-- exo_private.stage_sql writes for one workspace partition.

-- exo_private.stage_sql: the query one retrieval stage runs in one workspace.
create or replace function exo_private.stage_sql(stage text, workspace text, model_id int default null, dimensions int default null)
returns text
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    chunks text := 'chunks_' || workspace;
    bm25 text := format('exo_private.%I', 'chunks_' || workspace || '_bm25');
    -- Every stage: $2 the bands open (text[]), $3 the as_of day, $4 the row limit. The band is
    -- compared as the enum, not as text, so the planner keeps the column's statistics.
    visible text := format('c.workspace = %L and c.band = any ($2::exo_private.band[]) '
                           'and (c.written_at is null or c.written_at <= $3)', workspace);
    -- Chunks per named entity the entity and graph stages look at, newest first: a hub of
    -- thousands of mentions costs this many rows, not all of them.
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
                where m.entity_id = e.id and m.chunk_id is not null
                order by m.chunk_id desc limit %s
            ) m
            join exo_private.%I c on c.id = m.chunk_id
            where e.id = any ($1) and %s
            group by c.id, c.charged_subjects
            order by count(distinct e.id) desc, max(c.written_at) desc nulls last, c.id
            limit $4 $q$, per_entity, chunks, visible);
    when 'document' then  -- $1: title keys, $5: file names or stems; a matched document's first chunks
        return format($q$
            select c.id as chunk_id, 1.0::float8 as score, c.charged_subjects as charged, d.path as detail
            from exo_private.documents d
            cross join lateral (
                select c.id, c.charged_subjects from exo_private.%I c
                where c.document_id = d.id and %s
                order by c.ordinal limit 2
            ) c
            where d.workspace = %L
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
                where m.entity_id = n.entity_id and m.chunk_id is not null
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
    else
        raise exception 'unknown retrieval stage %', left(stage, 100)
            using hint = 'one of identifier, lexical, entity, document, graph, semantic';
    end case;
end
$$;
comment on function exo_private.stage_sql(text, text, int, int) is
    'The SQL one retrieval stage runs in one workspace''s partitions (identifier, lexical, entity, '
    'document, graph, semantic): $2 the open bands, $3 the as_of day, $4 the limit; prepared and '
    'cached by exo_private.retrieve, and explained by bench/search_latency.py.';

-- exo_private.pool_details: what the rerank and the packet need of each candidate.
create or replace function exo_private.pool_details(p_workspaces text[], p_chunks bigint[])
returns table (
    chunk_id bigint, workspace text, document_id bigint, ordinal int, body text, band text,
    written_at date, path text, title text, canonical boolean
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select c.id, c.workspace, c.document_id, c.ordinal, c.body, c.band::text, c.written_at,
           d.path, d.title, d.canonical
    from unnest(p_workspaces, p_chunks) w (workspace, chunk_id)
    join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id
    join exo_private.documents d on d.id = c.document_id
$$;
comment on function exo_private.pool_details(text[], bigint[]) is
    'Chunk and document of each candidate of the combined pool, by (workspace, chunk id).';

-- exo_private.pool_similarity: cosine similarity of candidates to a query vector.
create or replace function exo_private.pool_similarity(
    p_workspaces text[], p_chunks bigint[], p_vector text, p_model_id int
)
returns table (chunk_id bigint, similarity float8)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A lookup by primary key: no index on the distance, so the untyped vector is fine.
    select e.chunk_id, (1 - (e.embedding operator(public.<=>) p_vector::public.vector))::float8
    from unnest(p_workspaces, p_chunks) w (workspace, chunk_id)
    join exo_private.chunk_embeddings e
      on e.workspace = w.workspace and e.chunk_id = w.chunk_id and e.model_id = p_model_id
$$;
comment on function exo_private.pool_similarity(text[], bigint[], text, int) is
    'Cosine similarity between a query vector and the stored vectors of some chunks (one model).';

-- exo_private.rerank_call: one remote rerank call, bounded per call and per session; never raises for a model failure.
create or replace function exo_private.rerank_call(backend text, endpoint jsonb, query text, passages text[], ids bigint[], options jsonb)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include model_client
# exo:include search
# exo:include budget
import json
import time

began = time.monotonic()
opts = json.loads(options)
question = (query or "")[:MAX_QUERY_CHARS]
if "rerank_settings" not in SD:
    SD["rerank_settings"] = plpy.prepare(
        "select key, value::text from exo_private.settings "
        "where key in ('reader.rerank_calls_per_minute', 'retrieval.rerank_limits')",
        [],
    )
settings = {r["key"]: json.loads(r["value"]) for r in plpy.execute(SD["rerank_settings"], [])}
limit = settings.get("reader.rerank_calls_per_minute", 120)
bounds = dict({"max_passages": 100, "passage_chars": 2000}, **settings.get("retrieval.rerank_limits", {}))
# Per call: the first max_passages passages (the caller's best first), each cut to passage_chars.
# (New names: plpython's arguments are globals, and assigning one makes it a local.)
sent_ids = list(ids or [])[: bounds["max_passages"]]
sent = [(p or "")[: bounds["passage_chars"]] for p in list(passages or [])[: len(sent_ids)]]
try:
    if backend not in ("cross_encoder", "listwise"):
        raise ValueError("unknown remote rerank backend {!r}".format((backend or "")[:100]))
    if not allow(GD, "rerank", limit):  # per session, whoever calls
        result = {
            "error_class": "rate_limited",
            "error": "more than {} rerank calls in a minute in this session "
            "(reader.rerank_calls_per_minute)".format(limit),
        }
    elif backend == "cross_encoder":
        target = Endpoint.from_setting(json.loads(endpoint))
        scores = rerank(target, question, sent)
        result = {"scores": dict(zip([str(i) for i in sent_ids], scores))}
    else:
        target = Endpoint.from_setting(json.loads(endpoint))
        candidates = [{"chunk_id": i, "body": p} for i, p in zip(sent_ids, sent)]
        reply = chat(
            target,
            listwise_prompt(question, candidates, opts["excerpt_chars"]),
            max_tokens=opts["max_tokens"],
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "ranking",
                    "schema": {
                        "type": "object",
                        "properties": {"ranking": {"type": "array", "items": {"type": "integer"}}},
                        "required": ["ranking"],
                    },
                },
            },
        )
        result = {"ranking": parse_listwise(reply.content, set(sent_ids))}
except (ModelError, ValueError) as exc:
    result = {"error_class": getattr(exc, "error_class", "bad_response"), "error": str(exc)[:500]}
result["passages"] = len(sent_ids)
result["ms"] = round((time.monotonic() - began) * 1000, 1)
return json.dumps(result)
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
comment on function exo_private.check_search_arguments(text, text[], int, int, float8[], int, text[]) is
    'Raise invalid_parameter_value, naming the argument, for what exo.search, exo.search_report and '
    'exo.context_packet cannot take; they call it before exo_private.retrieve. A message echoes at '
    'most 100 characters of an argument.';

-- exo_private.retrieve: the whole search; exo.search, exo.search_report and
-- exo.context_packet read its {results, report}.
create or replace function exo_private.retrieve(
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
language plpython3u volatile
security invoker
set search_path = exo_private, public, pg_temp  -- pg_textsearch resolves its score function by name
set hnsw.iterative_scan = relaxed_order  -- a band filter after the HNSW scan still fills the limit
as $$
# exo:include search
# exo:include budget
# exo:include model_client
import datetime
import json
import threading
import time

began = time.monotonic()
plans = SD.setdefault("plans", {})


def plan(key, text, types):
    if key not in plans:
        plans[key] = plpy.prepare(text, types)
    return plans[key]


def run(key, text, types, args):
    return plpy.execute(plan(key, text, types), args)


def ms(since):
    return round((time.monotonic() - since) * 1000, 2)


# -- inputs (checked by exo_private.check_search_arguments) -----------------------------------
# No more of the query than MAX_INPUT_CHARS is read anywhere below: a huge query costs no more
# than a long one. (A new name: plpython's arguments are globals the nested functions read.)
question = query[:MAX_INPUT_CHARS]
as_of_day = (as_of or "")[:10] or datetime.date.today().isoformat()
today = datetime.date.fromisoformat(as_of_day)

settings = {
    r["key"]: json.loads(r["value"])
    for r in run(
        "settings",
        "select key, value::text from exo_private.settings "
        "where key like 'retrieval.%' or key like 'packet.%' or key like 'models.%' "
        "or key like 'deference.%' or key like 'reader.%'",
        [],
        [],
    )
}
known = [r["name"] for r in run("workspaces", "select name from exo_private.workspaces order by name", [], [])]
chosen = known if workspaces is None else [w for i, w in enumerate(workspaces) if w not in workspaces[:i]]

report = {
    "query": question[:200],
    "as_of": as_of_day,
    "workspaces": {},
    "degradations": [],
    "timings_ms": {},
}
timings = report["timings_ms"]
if len(query) > MAX_INPUT_CHARS:
    report["query_truncated"] = {"chars": len(query), "read": MAX_INPUT_CHARS}

# -- the query's embedding, fetched in the background while the other stages run -------------
model = {"id": None, "dimensions": None}
row = run(
    "model",
    "select m.id, m.dimensions from exo_private.embedding_models m where m.id = exo_private.active_embedding_model()",
    [],
    [],
)
if row:
    model = {"id": row[0]["id"], "dimensions": row[0]["dimensions"]}
vector = {"text": None, "error": None, "tried": False}
embedding_setting = dict(settings["models.embeddings"], timeout_s=settings["retrieval.embed_timeout_s"])
fetched = {}


def fetch_embedding():
    # No plpy here: only the HTTP call runs on this thread (the server's API is not thread-safe).
    try:
        fetched.update(embed_one(embedding_setting, question))
    except Exception as exc:  # anything unforeseen still ends as a degradation, not a hang
        fetched.update(error_class="internal", error=repr(exc)[:500])


fetcher = None
if query_embedding is None and model["id"] is not None:
    # The session's embedding budget, shared with exo.embed_query (plpy/budget.py over GD).
    embed_limit = settings.get("reader.embed_calls_per_minute", 120)
    if allow(GD, "embed", embed_limit):
        fetcher = threading.Thread(target=fetch_embedding, name="exo-query-embedding", daemon=True)
        fetcher.start()
    else:
        fetched.update(
            error_class="rate_limited",
            error="more than {} query embeddings in a minute in this session "
            "(reader.embed_calls_per_minute)".format(embed_limit),
        )

# -- temporal signal and bands --------------------------------------------------------------
t = time.monotonic()
signal = json.loads(
    run("temporal", "select exo.temporal_signal($1, $2)::text as s", ["text", "date"], [question, as_of_day])[0]["s"]
)
timings["temporal"] = ms(t)
archive_open, archive_why = archive_decision(signal, open_archive)
report["temporal"] = {
    "signal": signal["signal"],
    "opens_archive": signal["opens_archive"],
    "signals": [{"kind": s["kind"], "text": s["text"], "opens_archive": s["opens_archive"]} for s in signal["signals"]],
    "years": signal["years"],
}

deferred = [
    {"subject": r["subject"], "aliases": list(r["aliases"] or [])}
    for r in run("deferred", "select subject, aliases from exo_private.deferred_subjects order by subject", [], [])
]

# Time and care are separate decisions: an open archive releases a subject only when the
# question names it, unless the owner chose the looser rule (deference.time_releases).
time_releases = bool(settings.get("deference.time_releases", False))
care = Deference(deferred, bridge, question, archive_open, archive_why, time_releases)
withhold = care.withheld


# -- query material -------------------------------------------------------------------------
t = time.monotonic()
graph_settings = settings["retrieval.graph"]
ngrams = ngram_keys(question)
entities = {}
for r in run(
    "entities",
    "select e.id, e.workspace, e.name from exo_private.entities e "
    "where e.canonical_key = any ($1) and e.workspace = any ($2) "
    "order by e.workspace, length(e.canonical_key) desc, e.id",
    ["text[]", "text[]"],
    [ngrams, chosen],
):
    found = entities.setdefault(r["workspace"], [])
    if len(found) < graph_settings["max_entities"]:
        found.append({"id": r["id"], "name": r["name"]})
idents = identifiers(question)
query_terms = content_words(question)
titles = title_keys(question)
files = file_keys(question)
timings["query_analysis"] = ms(t)
report["recognised"] = {
    "identifiers": idents,
    "entities": {ws: [e["name"] for e in found] for ws, found in entities.items()},
}



def query_vector():
    """The query's vector as pgvector text, embedded at most once; None when unavailable."""
    if vector["tried"]:
        return vector["text"]
    vector["tried"] = True
    t0 = time.monotonic()
    if query_embedding is not None:
        values = list(query_embedding)
        vector["text"] = "[" + ",".join(repr(float(v)) for v in values) + "]"
        report["query_embedding"] = {"source": "caller", "dimensions": len(values)}
    else:
        if fetcher is not None:
            fetcher.join(embedding_setting["timeout_s"] + 1)
        embedded = dict(fetched) or {"error_class": "timeout", "error": "no embedding in time"}
        timings["embed_query_wait"] = ms(t0)
        if "vector" in embedded:
            if model["dimensions"] is not None and embedded["dimensions"] != model["dimensions"]:
                vector["error"] = {
                    "error_class": "dimension_mismatch",
                    "error": "the endpoint gave {} dimensions, the stored vectors have {}".format(
                        embedded["dimensions"], model["dimensions"]
                    ),
                }
            else:
                vector["text"] = embedded["vector"]
                report["query_embedding"] = {"source": "endpoint", "ms": embedded["ms"]}
                timings["embed_query"] = embedded["ms"]
        else:
            vector["error"] = {"error_class": embedded["error_class"], "error": embedded["error"]}
        if vector["error"]:
            report["degradations"].append(dict(component="embeddings", **vector["error"]))
    return vector["text"]


# -- staged retrieval per workspace ------------------------------------------------------------
thresholds = {
    "lexical": settings["retrieval.lexical_confident_score"],
    "semantic": settings["retrieval.semantic_confident_similarity"],
}


def stage_rows(stage, ws, bands):
    """(rows, skipped_reason) of one stage in one workspace."""
    common = [list(bands), as_of_day, per_workspace]
    base = ["text[]", "date", "int"]
    if stage == "exact":
        # A document named by title or file name first: a chunk keeps the first match found.
        rows = []
        if titles or files:
            for r in run(("document", ws), stage_sql_text("document", ws), ["text[]"] + base + ["text[]"],
                         [titles] + common + [files]):
                rows.append({"chunk_id": r["chunk_id"], "score": r["score"], "confident": True,
                             "charged": r["charged"], "match": "document", "detail": "document " + r["detail"]})
        for ident in idents:
            for r in run(("identifier", ws), stage_sql_text("identifier", ws), ["text"] + base, [ident] + common):
                rows.append({"chunk_id": r["chunk_id"], "score": r["score"], "confident": True,
                             "charged": r["charged"], "match": "identifier", "detail": "identifier " + ident})
        if entities.get(ws):
            for r in run(("entity", ws), stage_sql_text("entity", ws), ["bigint[]"] + base,
                         [[e["id"] for e in entities[ws]]] + common):
                rows.append({"chunk_id": r["chunk_id"], "score": r["score"], "confident": True,
                             "charged": r["charged"], "match": "entity", "detail": "entity " + r["detail"]})
        if not (idents or entities.get(ws) or titles or files):
            return [], "no identifier, entity, title or file name in the query"
        return rows, None
    if stage == "lexical":
        if not query_terms:
            return [], "no searchable words in the query"
        rows = run(("lexical", ws), stage_sql_text("lexical", ws), ["text"] + base, [question[:MAX_QUERY_CHARS]] + common)
        return [{"chunk_id": r["chunk_id"], "score": r["score"], "confident": r["score"] >= thresholds["lexical"],
                 "charged": r["charged"]} for r in rows], None
    if stage == "capsules":
        return [], "no capsules yet (summaries arrive with a later issue)"
    if stage == "graph":
        if not entities.get(ws):
            return [], "no entity of this workspace's graph named in the query"
        rows = run(("graph", ws), stage_sql_text("graph", ws), ["bigint[]"] + base + ["int", "int"],
                   [[e["id"] for e in entities[ws]]] + common + [graph_settings["depth"], graph_settings["per_node"]])
        return [{"chunk_id": r["chunk_id"], "score": r["score"], "confident": False,
                 "charged": r["charged"], "detail": "near " + r["detail"]} for r in rows], None
    if stage == "semantic":
        if model["id"] is None:
            return [], "no embeddings stored yet"
        text = query_vector()
        if text is None:
            return [], "query embedding unavailable ({})".format(vector["error"]["error_class"])
        key = ("semantic", ws, model["id"], model["dimensions"])
        rows = run(key, stage_sql_text("semantic", ws, model["id"], model["dimensions"]), ["text"] + base, [text] + common)
        low = settings["retrieval.semantic_min_similarity"]
        return [{"chunk_id": r["chunk_id"], "score": r["score"], "confident": r["score"] >= thresholds["semantic"],
                 "charged": r["charged"]} for r in rows if r["score"] >= low], None
    plpy.error("unknown stage " + repr(stage[:100]) + " in retrieval.stages")


def stage_sql_text(stage, ws, model_id=None, dimensions=None):
    key = ("sql", stage, ws, model_id, dimensions)
    if key not in plans:
        plans[key] = run(
            "stage_sql", "select exo_private.stage_sql($1, $2, $3, $4) as q", ["text", "text", "int", "int"],
            [stage, ws, model_id, dimensions],
        )[0]["q"]
    return plans[key]


def search_workspaces(bands):
    """Run the stages in every chosen workspace over `bands`; semantic last, after one embedding."""
    pools = [WorkspacePool(ws, per_workspace, settings["retrieval.confident_needed"]) for ws in chosen]
    for pool in pools:
        for stage in settings["retrieval.stages"]:
            go, why = pool.wants_more()
            entry = {"stage": stage}
            if go:
                t0 = time.monotonic()
                rows, why = stage_rows(stage, pool.workspace, bands)
                if why is None:
                    admitted, held = pool.admit(stage, rows, withhold)
                    entry.update(ran=True, found=len(rows), admitted=admitted, withheld=held,
                                 confident=pool.confident, ms=ms(t0))
                    pool.stages.append(entry)
                    continue
            entry.update(ran=False, skipped=why)
            pool.stages.append(entry)
    return pools


t = time.monotonic()
bands = ALL_BANDS if archive_open else PRESENT_BANDS
pools = search_workspaces(bands)
fallback = False


def fetch_details(hits):
    """pool_details rows of hits, by chunk id, each fetched once per search."""
    missing = [h for h in hits if h["chunk_id"] not in details]
    if missing:
        for d in run(
            "details",
            "select * from exo_private.pool_details($1, $2)",
            ["text[]", "bigint[]"],
            [[h["workspace"] for h in missing], [h["chunk_id"] for h in missing]],
        ):
            details[d["chunk_id"]] = dict(d, coverage=coverage(d["body"], query_terms))
    return [details[h["chunk_id"]] for h in hits if h["chunk_id"] in details]


def present_answers(pools):
    """Whether the present bands answer: an identifier of the query found verbatim when it has
    any, else a confident candidate, or one that covers enough of the query's words (BM25
    confidence depends on the corpus; a tiny one never reaches it)."""
    if idents:
        return any(h["match"] == "identifier" for p in pools for h in p.hits)
    if any(p.confident for p in pools):
        return True
    covered = [d["coverage"] for d in fetch_details([h for p in pools for h in p.hits])]
    return bool(covered) and max(covered) >= settings["retrieval.answer_coverage"]


details = {}
if not archive_open and open_archive is None and not present_answers(pools):
    # Recency preference: the archive answers only when nothing present does.
    fallback = True
    held_before = pools
    bands = ALL_BANDS
    pools = search_workspaces(bands)
    for before, after in zip(held_before, pools):
        for subject, chunks in before.withheld.items():
            after.withheld.setdefault(subject, set()).update(chunks)
timings["stages"] = ms(t)
report["bands"] = list(bands)
report["archive"] = {
    "open": archive_open or fallback,
    "why": archive_why if not fallback else "nothing in the present bands answered",
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


def how(subject):
    asked = run("hint_how", "select exo_private.hint_how($1) as h", ["text"], [subject])[0]["h"]
    by_time = "name the time you mean" if time_releases else "name it in a question that names the time you mean"
    return "To include it, " + asked + " (and open_archive => true for archival material), or " + by_time + "."


named = {}
asked_about = [s for s in named_subjects(question, deferred) if withhold([s])]
if asked_about:
    for r in run(
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
report["hints"] = hints(pools, how, named)

# -- the combined pool, reranked ------------------------------------------------------------------
hits = [h for p in pools for h in p.hits]
by_id = {h["chunk_id"]: h for h in hits}
t = time.monotonic()
candidates = []
for d in fetch_details(hits):
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
            coverage=d["coverage"],
        )
    )
candidates.sort(key=lambda c: c["chunk_id"])
timings["pool"] = ms(t)

weights = settings["retrieval.rank_weights"]
years = signal["years"]
deterministic = {c["chunk_id"]: deterministic_relevance(c, weights) for c in candidates}
recency = not report["archive"]["open"]  # an open archive is not a place to prefer the new
incoming = [c["chunk_id"] for c in rank(candidates, deterministic, weights, today.toordinal(), years, recency)]
attempts = []
relevance = None
backend_used = None
t = time.monotonic()
timeout = settings["retrieval.rerank_timeout_s"]
for backend in settings["retrieval.rerank_order"]:
    t0 = time.monotonic()
    if not candidates:
        attempts.append({"backend": backend, "outcome": "skipped", "why": "no candidates"})
        relevance, backend_used = {}, "none"
        break
    if backend == "deterministic":
        relevance, backend_used = deterministic, backend
        attempts.append({"backend": backend, "outcome": "answered", "ms": ms(t0)})
        break
    if backend == "embedding":
        text = query_vector() if model["id"] is not None else None
        if text is None:
            why = "no embeddings stored yet" if model["id"] is None else "query embedding unavailable"
            attempts.append({"backend": backend, "outcome": "failed", "why": why})
            continue
        sims = {
            r["chunk_id"]: r["similarity"]
            for r in run(
                "similarity",
                "select * from exo_private.pool_similarity($1, $2, $3, $4)",
                ["text[]", "bigint[]", "text", "int"],
                [[c["workspace"] for c in candidates], [c["chunk_id"] for c in candidates], text, model["id"]],
            )
        }
        # Cosine similarity is already on a common scale: clipped, not stretched.
        relevance = {c["chunk_id"]: min(1.0, max(0.0, sims.get(c["chunk_id"]) or 0.0)) for c in candidates}
        backend_used = backend
        attempts.append({"backend": backend, "outcome": "answered", "ms": ms(t0),
                         "without_vector": sum(1 for c in candidates if c["chunk_id"] not in sims)})
        break
    if backend in ("cross_encoder", "listwise"):
        setting_key = "models.rerank" if backend == "cross_encoder" else "models.chat"
        endpoint = dict(settings.get(setting_key) or {})
        if backend == "listwise" and not settings["retrieval.listwise"].get("enabled"):
            attempts.append({"backend": backend, "outcome": "skipped", "why": "off (retrieval.listwise)"})
            continue
        if not endpoint.get("url"):
            attempts.append({"backend": backend, "outcome": "skipped", "why": setting_key + " has no url"})
            continue
        endpoint["timeout_s"] = timeout
        options = settings["retrieval.listwise"]
        order = incoming[: options["max_candidates"]] if backend == "listwise" else incoming
        bodies = {c["chunk_id"]: c["body"] for c in candidates}
        answer = json.loads(
            run(
                "rerank_call",
                "select exo_private.rerank_call($1, $2, $3, $4, $5, $6)::text as r",
                ["text", "jsonb", "text", "text[]", "bigint[]", "jsonb"],
                [backend, json.dumps(endpoint), question, [bodies[i] for i in order], order, json.dumps(options)],
            )[0]["r"]
        )
        if "error_class" in answer:
            attempts.append({"backend": backend, "outcome": "failed", "error_class": answer["error_class"],
                             "ms": answer["ms"]})
            report["degradations"].append({"component": "rerank:" + backend,
                                           "error_class": answer["error_class"], "error": answer["error"]})
            continue
        if backend == "cross_encoder":
            relevance = normalise({c["chunk_id"]: answer["scores"].get(str(c["chunk_id"])) for c in candidates})
        else:
            relevance = from_ranking(answer["ranking"], incoming)
        backend_used = backend
        attempts.append({"backend": backend, "outcome": "answered", "ms": answer["ms"], "passages": answer["passages"]})
        break
    attempts.append({"backend": backend, "outcome": "skipped", "why": "unknown backend"})
if relevance is None:  # the configured order had no backend that answered
    relevance, backend_used = deterministic, "deterministic"
    attempts.append({"backend": "deterministic", "outcome": "answered", "why": "fallback"})
elif backend_used != "deterministic":
    relevance = blend(relevance, deterministic, weights["backend_share"])
ranked = rank(candidates, relevance, weights, today.toordinal(), years, recency)
timings["rerank"] = ms(t)
report["rerank"] = {"backend": backend_used, "attempts": attempts, "pool": len(candidates)}

results = []
for n, c in enumerate(ranked[:k], 1):
    results.append({
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
        "stage": c["stage"],
        "detail": c.get("detail"),
        "score": c["score"],
        "relevance": c["relevance"],
        "citation": citation(c),
        "body": c["body"],
        "charged": c["charged"],  # released subjects: the packet's provenance names them
    })
report["returned"] = len(results)
report["released"] = released(ranked[:k], care.why_released)
timings["total"] = ms(began)
return json.dumps({"results": results, "report": report})
$$;
comment on function exo_private.retrieve(text, text[], int, int, boolean, text[], timestamptz, float8[]) is
    'The whole retrieval: temporal signal, staged search per workspace with early stop, deference '
    '(time and care decided apart), archive fallback, combined-pool rerank; {results, report}. Reads '
    'the first 2,000 characters of the query; its query embedding counts against '
    'reader.embed_calls_per_minute. Read through exo.search, exo.search_report and exo.context_packet.';

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
        exo_private.retrieve(query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding)
        -> 'results') as r (
        rank int, chunk_id bigint, body text, path text, title text, workspace text, band text,
        written_at date, stage text, citation text, score float8, document_id bigint, canonical boolean)
    order by r.rank
$$;
comment on function exo.search(text, text[], int, int, boolean, text[], timestamptz, float8[]) is
    'Ranked chunks answering a question: staged retrieval (exact, lexical, capsules, graph, semantic) in '
    'each workspace (null: all) with at most per_workspace candidates each, temporal banding (the '
    'archive opens on a temporal signal or open_archive), deferred subjects withheld unless bridged or '
    'named by the question while the archive is open (deference.time_releases: an open archive alone), '
    'then one rerank of the merged pool; k rows with citation, band and the stage that found each. '
    'query_embedding (float8[], the question embedded by the caller with the model in use) replaces '
    'the embeddings endpoint. exo.search_report says what happened.';

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
    select exo_private.retrieve(query, workspaces, k, per_workspace, open_archive, bridge, as_of, query_embedding)
           -> 'report'
$$;
comment on function exo.search_report(text, text[], int, int, boolean, text[], timestamptz, float8[]) is
    'What exo.search does for the same arguments (jsonb): the temporal signal and the bands opened, '
    'per workspace the stages run or skipped (and why) with counts and times, deference hints '
    '(subject, workspace, chunks withheld, how to open them; never their text), what deferred '
    'material was released (subject, workspace, chunks, why), degradations (an endpoint down or '
    'rate_limited, a stage skipped), the rerank backend and its fallbacks, and timings.';

-- exo_private.build_packet: the packet of a retrieve() result (plpy/search.py packet()).
create or replace function exo_private.build_packet(retrieved jsonb, query text, token_budget int)
returns jsonb
language plpython3u stable
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include search
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
comment on function exo_private.build_packet(jsonb, text, int) is
    'The context packet (text, tokens, used, hints, report) of an exo_private.retrieve result within '
    'token_budget tokens.';

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
        exo_private.retrieve(query, workspaces, 25, 30, open_archive, bridge, as_of, query_embedding),
        query, token_budget)
$$;
comment on function exo.context_packet_json(text, int, text[], boolean, text[], timestamptz, float8[]) is
    'The context packet for a question as jsonb: text (current facts, then cited evidence excerpts, '
    'then deference hints, then provenance), tokens used (never over token_budget; about four '
    'characters a token), the citations used, the hints and the search report.';

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
    select exo.context_packet_json(query, token_budget, workspaces, open_archive, bridge, as_of, query_embedding)
           ->> 'text'
$$;
comment on function exo.context_packet(text, int, text[], boolean, text[], timestamptz, float8[]) is
    'A small cited answer packet for a question, within token_budget tokens: current facts first, '
    'then numbered evidence excerpts (path, workspace, date, band), then hints about withheld '
    'subjects, then provenance. exo.context_packet_json gives it with its token count and report.';
