-- Query embeddings inside the database, through the same model client the worker uses.

-- exo_private.embed_text: one text's embedding from an endpoint (plpython3u, stdlib urllib).
create or replace function exo_private.embed_text(input text, endpoint jsonb)
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include exocortex.models.client
import json

return json.dumps(embed_one(json.loads(endpoint), input))
$$;
comment on function exo_private.embed_text(text, jsonb) is
    'Embed one text through an OpenAI-compatible endpoint (a models.embeddings-style jsonb); returns '
    '{vector, model, dimensions, ms} or {error_class, error, ms}, never raises for a model failure.';

-- exo.embed_query: a query's embedding from the configured endpoint, within the query timeout.
create or replace function exo.embed_query(query text)
returns jsonb
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.embed_text(
        pg_catalog.left(coalesce(query, ''), 2000),
        e.value || jsonb_build_object('timeout_s', t.value))
    from exo_private.settings e, exo_private.settings t
    where e.key = 'models.embeddings' and t.key = 'retrieval.embed_timeout_s'
$$;
comment on function exo.embed_query(text) is
    'Embed a query (its first 2,000 characters) with the models.embeddings endpoint within '
    'retrieval.embed_timeout_s: {vector, model, dimensions, ms}, or {error_class, error, ms} when the '
    'endpoint is down, slow or wrong; never an error, so search can degrade and say so.';
