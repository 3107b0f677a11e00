"""The question's vector kept for the session (stdlib only): the search
(query_embedding.QueryEmbedding) keeps the vector it embedded or was given, and the packet built
on that search (meaning.embedding_meaning) compares the question with its facts by it instead
of embedding the question a second time."""

import json

KEPT = "exo_question_vector"
"""The key in the session's GD of the last search's (model, question, vector text)."""


def keep_vector(store, model, question, vector_text):
    store[KEPT] = (model, question, vector_text)


def kept_vector(store, model, question):
    """The vector (floats) of the last search's question when it was `question`, by `model`."""
    held = store.get(KEPT)
    return json.loads(held[2]) if held and held[:2] == (model, question) else None
