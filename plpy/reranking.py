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

from budget import allow
from model_client import Endpoint, ModelError, chat, rerank
from query_analysis import elapsed_ms
from search import MAX_QUERY_CHARS, blend, from_ranking, listwise_prompt, normalise, parse_listwise

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
    rank, best first), the deterministic relevance, the settings and the query. `similarity`:
    each candidate's cosine similarity to the question, where the embedding backend ran."""

    similarity = None

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
    add_message_similarity(pool.db, pool.candidates, text, pool.model["id"])
    # Cosine similarity is already on a common scale: clipped, not stretched.
    relevance = {
        c["chunk_id"]: min(1.0, max(0.0, window_similarity(sims.get(c["chunk_id"]), c["chat"]) or 0.0))
        for c in pool.candidates
    }
    pool.similarity = relevance  # whether anything answers at all (search.answer_check) reads it
    return relevance, {
        "outcome": "answered",
        "ms": elapsed_ms(t0),
        "without_vector": sum(1 for c in pool.candidates if c["chunk_id"] not in sims),
    }


def add_message_similarity(db, candidates, vector, model_id):
    """Each chat candidate's messages' cosine similarity to the query vector (chat.similarity, in
    the order of chat.message_ids; null for a message without a vector), where it has none yet:
    the rerank weighs a window by its best message, and the packet's excerpt shows the message
    that answers, which often shares no word with the question."""
    chats = [c for c in candidates if c["chat"] and "similarity" not in c["chat"]]
    if not chats:
        return
    sims = {
        r["message_id"]: r["similarity"]
        for r in db.run(
            "message_similarity",
            "select * from exo_private.message_similarity($1, $2, $3)",
            ["bigint[]", "text", "int"],
            [[m for c in chats for m in c["chat"]["message_ids"]], vector, model_id],
        )
    }
    for c in chats:
        c["chat"] = dict(c["chat"], similarity=[sims.get(m) for m in c["chat"]["message_ids"]])


def window_similarity(similarity, chat):
    """A candidate's similarity to the question; for a chat window, the mean of its own and its
    most similar message's. A window holds many messages, and its vector blurs the one that answers
    among small talk; a message alone is a short text, whose vector the sender's name pulls."""
    best = max((s for s in (chat or {}).get("similarity") or [] if s is not None), default=None)
    if similarity is None or best is None:
        return similarity
    return (similarity + best) / 2


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
