-- Query embeddings inside the database, through the same model client the worker uses.

-- exo_private.embed_text: one text's embedding from an endpoint, within the session's call budget (plpython3u, stdlib urllib).
create or replace function exo_private.embed_text(input text, endpoint jsonb, calls_per_minute int)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include budget
# exo:include model_client
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
comment on function exo_private.embed_text(text, jsonb, int) is
    'Embed one text through an OpenAI-compatible endpoint (a models.embeddings-style jsonb), at most '
    'calls_per_minute calls per session in any minute (shared budget "embed"); returns {vector, model, '
    'dimensions, ms} or {error_class, error, ms} (rate_limited past the budget), never raises for a '
    'model failure.';

-- exo.embed_query: a query's embedding from the configured endpoint, within the query timeout and the session's budget.
create or replace function exo.embed_query(query text)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.embed_text(
        pg_catalog.left(coalesce(query, ''), 2000),
        e.value || jsonb_build_object('timeout_s', t.value),
        (select case when pg_catalog.jsonb_typeof(b.value) = 'number'
                     then greatest(least(b.value::numeric, 1000000), 0)::int end
         from exo_private.settings b where b.key = 'reader.embed_calls_per_minute'))
    from exo_private.settings e, exo_private.settings t
    where e.key = 'models.embeddings' and t.key = 'retrieval.embed_timeout_s'
$$;
comment on function exo.embed_query(text) is
    'Embed a query (its first 2,000 characters) with the models.embeddings endpoint within '
    'retrieval.embed_timeout_s, at most reader.embed_calls_per_minute times per session in any minute: '
    '{vector, model, dimensions, ms}, or {error_class, error, ms} when the endpoint is down, slow or '
    'wrong or the budget is spent (rate_limited); never an error, so search can degrade and say so.';

-- exo_private.check_query_embedding: a caller's query vector, checked before any search uses it.
create or replace function exo_private.check_query_embedding(p_vector float8[])
returns void
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    dimensions int;
begin
    if p_vector is null then
        return;
    end if;
    if coalesce(cardinality(p_vector), 0) = 0
       or exists (select 1 from unnest(p_vector) v where v is null or v in ('NaN', 'Infinity', '-Infinity')) then
        perform exo_private.invalid_argument('query_embedding must be a non-empty array of finite numbers');
    end if;
    select m.dimensions into dimensions
    from exo_private.embedding_models m where m.id = exo_private.active_embedding_model();
    if dimensions is not null and cardinality(p_vector) <> dimensions then
        perform exo_private.invalid_argument(format(
            'query_embedding has %s dimensions; the embedding model in use has %s', cardinality(p_vector), dimensions));
    end if;
end
$$;
comment on function exo_private.check_query_embedding(float8[]) is
    'Raise invalid_parameter_value unless a caller''s query_embedding (null: none given) is a non-empty '
    'array of finite numbers with the dimensions of the embedding model in use.';
