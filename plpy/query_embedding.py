"""The query's vector for one search (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). The caller's vector when it gave one; else
the embeddings endpoint's, fetched on a background thread while the other stages run, within
the session's embedding budget (reader.embed_calls_per_minute, plpy/budget.py over GD, shared
with exo.embed_query). The thread makes only the HTTP call (the server's API is not
thread-safe). The search's thread waits for it asking for the statement's interrupts
(model_client.Cancel.join), so a cancelled statement cuts the call off at once; close() cuts
off a call still running and joins the thread before the search returns, on every path out.
The vector is kept for the session (question_vector.keep_vector) for the packet built on the search.
"""

import threading
import time

from budget import allow
from model_client import JOIN_AFTER_CANCEL_S, Cancel, embed_one
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
        self.cancel = Cancel()
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
            self.fetched.update(embed_one(self.setting, question, self.cancel))
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
            if len(values) == self.model["dimensions"]:  # the endpoint's space, as the stored vectors'
                keep_vector(self.store, self.setting.get("model"), self.question, self.text)
            return self.text
        if self.thread is not None:
            self.cancel.join(self.thread, self.setting["timeout_s"] + 1)
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
            keep_vector(self.store, self.setting.get("model"), self.question, self.text)
            report["query_embedding"] = {"source": "endpoint", "ms": embedded["ms"]}
            report["timings_ms"]["embed_query"] = embedded["ms"]
        if self.error:
            report["degradations"].append(dict(component="embeddings", **self.error))
        return self.text

    def close(self):
        """Cut off the fetch if it still runs (nothing waits for it any more: the search is done
        or was cancelled) and join its thread: no search leaves it running or holding its
        connection, on every path out."""
        if self.thread is not None:
            self.cancel.cancel()
            self.thread.join(JOIN_AFTER_CANCEL_S)
            self.thread = None
