"""The query's vector for one search (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). The caller's vector when it gave one; else
the embeddings endpoint's, within the session's embedding budget (reader.embed_calls_per_minute,
plpy/budget.py over GD, shared with exo.embed_query). The request is sent before the stages run
and its answer read when a stage first needs the vector (model_client.EmbeddingCall), so the
model embeds while the stages that need no vector run; the wait asks for the statement's
interrupts, so a cancelled statement ends it at once. close() gives up an answer not read, on
every path out. The vector is kept for the session (question_vector.keep_vector) for the packet
built on the search. The report's timings: embed_query from the request to the answer read,
embed_query_wait what of it the search spent waiting.
"""

import time

from budget import allow
from model_client import EmbeddingCall
from question_vector import keep_vector


class QueryEmbedding:
    """The query's vector as pgvector text, awaited at most once; None when unavailable."""

    def __init__(self, question, caller_vector, model, settings, budget_store):
        self.question = question
        self.store = budget_store
        self.caller_vector = caller_vector
        self.model = model
        self.setting = dict(settings["models.embeddings"], timeout_s=settings["retrieval.embed_timeout_s"])
        self.fetched = {}
        self.call = None
        self.tried = False
        self.text = None
        self.error = None
        if caller_vector is None and model["id"] is not None:
            limit = settings.get("reader.embed_calls_per_minute", 120)
            if allow(budget_store, "embed", limit):
                self.call = EmbeddingCall(self.setting, question)
            else:
                self.fetched.update(
                    error_class="rate_limited",
                    error=f"more than {limit} query embeddings in a minute in this session "
                    "(reader.embed_calls_per_minute)",
                )

    def in_flight(self):
        """Whether the endpoint's answer is asked for and not read yet."""
        return self.call is not None

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
            if len(values) == self.model["dimensions"]:  # the endpoint's space, as the stored vectors'
                keep_vector(self.store, self.setting.get("model"), self.question, self.text)
            return self.text
        if self.call is not None:
            self.fetched.update(self.call.result())
        self.close()
        embedded = self.fetched
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
            keep_vector(self.store, self.setting.get("model"), self.question, self.text)
            report["query_embedding"] = {"source": "endpoint", "ms": embedded["ms"]}
            report["timings_ms"]["embed_query"] = embedded["ms"]
        if self.error:
            report["degradations"].append(dict(component="embeddings", **self.error))
        return self.text

    def close(self):
        """Give up an answer not read: no search leaves its request open, on every path out."""
        if self.call is not None:
            self.call.close()
            self.call = None
