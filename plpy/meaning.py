"""Texts compared with a question by meaning: the embeddings endpoint's cosine similarities,
kept for the session (stdlib only).

Part of the packet (facts by meaning, plpy/fact_choice.py; the timeline's categories,
plpy/timeline.py) and of exo_private.retrieve (whether a document's sentence comes close to the
question: search.answer_check). A vector is kept as 4-byte floats: 1.5 KB for MiniLM's 384
dimensions, where a list of Python floats takes 12 KB.
"""

import math
import time
from array import array

from budget import allow
from model_client import Endpoint, ModelError, embed
from question_vector import kept_vector

MAX_CACHED_VECTORS = 5000
RETRY_AFTER_S = 60.0
"""How long a session leaves the embeddings endpoint alone after a failed call."""


def embedding_meaning(setting, timeout_s, calls_per_minute, store, cache):
    """meaning(query, texts): cosine similarities by the embeddings endpoint of
    `setting` (a models.embeddings value), one call for the texts not in `cache` (a dict kept
    for the session), within the session's "embed" budget (`store`, the session's GD, which also
    keeps the search's vector of the question: question_vector.kept_vector, so a packet embeds its
    question once); None when the call fails or the budget is spent (the packet then chooses by
    words and evidence). After a failed call the endpoint is not asked again for RETRY_AFTER_S: a
    hanging server costs one timeout a minute, not one a packet."""

    def meaning(query, texts):
        model = setting.get("model")
        known = {t: cache[(model, t)] for t in texts if (model, t) in cache}
        asked = cache.get((model, query)) or kept_vector(store, model, query)
        missing = [t for t in dict.fromkeys(texts if asked else [query, *texts]) if t not in known]
        if missing:
            if time.monotonic() < cache.get("failed_until", 0.0):
                return None
            try:
                endpoint = Endpoint.from_setting(dict(setting, timeout_s=timeout_s or 3))
            except ValueError:
                return None  # no endpoint configured: nothing to ask
            if not allow(store, "embed", calls_per_minute):
                return None
            try:
                vectors = embed(endpoint, missing)
            except (ModelError, ValueError):
                cache["failed_until"] = time.monotonic() + RETRY_AFTER_S
                return None
            if len(cache) + len(missing) > MAX_CACHED_VECTORS:
                cache.clear()
            fetched = dict(zip(missing, vectors, strict=True))
            cache.update({(model, t): array("f", v) for t, v in fetched.items()})
            known.update(fetched)
            asked = asked or fetched[query]
        return [cosine(asked, known[t]) for t in texts]

    return meaning


def session_meaning(settings, store, cache):
    """embedding_meaning as a search or a packet has it from its settings (models.embeddings,
    retrieval.embed_timeout_s, reader.embed_calls_per_minute)."""
    return embedding_meaning(
        settings.get("models.embeddings") or {},
        settings.get("retrieval.embed_timeout_s"),
        settings.get("reader.embed_calls_per_minute", 120),
        store,
        cache,
    )


def cosine(a, b):
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
