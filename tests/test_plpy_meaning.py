"""plpy/meaning.py: texts compared with a question by the embeddings endpoint, kept for the session."""

from __future__ import annotations

import meaning


def test_embedding_meaning_asks_once_per_text_and_degrades_without_an_endpoint():
    cache = {}
    # no url: no call, no budget spent
    budget = {}
    compare = meaning.embedding_meaning({"url": None, "model": "m"}, 3, 10, budget, cache)
    assert compare("q", ["a"]) is None and budget == {}
    # a closed port: None, so the packet falls back to words and evidence
    compare = meaning.embedding_meaning({"url": "http://127.0.0.1:9/v1", "model": "m"}, 1, 10, budget, cache)
    assert compare("q", ["a"]) is None and len(budget["exo_budget"]["embed"]) == 1
    # the failed endpoint is left alone for a while: no second call, no budget spent
    assert compare("q2", ["a2"]) is None and len(budget["exo_budget"]["embed"]) == 1
    # cached vectors need no call, and the budget is not spent again
    cache.update({("m", "q"): [1.0, 0.0], ("m", "a"): [1.0, 0.0], ("m", "b"): [0.0, 1.0]})
    assert compare("q", ["a", "b"]) == [1.0, 0.0]
    assert len(budget["exo_budget"]["embed"]) == 1


def test_a_packet_embeds_its_question_once_the_search_and_the_facts_together():
    """The search's vector of the question (query_embedding.QueryEmbedding) is the one the facts'
    meaning compares with: the endpoint is asked for the question once, and for each fact's text
    once a session; with the endpoint gone, the cached texts still compare."""
    from query_embedding import QueryEmbedding
    from support.standin import StandIn, embeddings

    question = "Who is my boss?"
    with StandIn(lambda _path, request: embeddings(request, dimensions=4)) as standin:
        setting = {"url": standin.url, "model": "standin"}
        settings = {"models.embeddings": setting, "retrieval.embed_timeout_s": 5}
        store = {}
        search = QueryEmbedding(question, None, {"id": 1, "dimensions": 4}, settings, store)
        report = {"timings_ms": {}, "degradations": []}
        assert (
            search.vector(report) == "[1.0,0.0,0.0,0.0]" and report["query_embedding"]["source"] == "endpoint"
        )
        cache = {}
        compare = meaning.embedding_meaning(setting, 5, 120, store, cache)
        assert compare(question, ["What is my manager?", "manager: Tomas Okafor"]) == [1.0, 1.0]
        inputs = [text for _path, request in standin.requests for text in request["input"]]
    assert inputs == [question, "What is my manager?", "manager: Tomas Okafor"]
    # the texts are kept for the session, the question by the search: no endpoint needed again
    gone = meaning.embedding_meaning(dict(setting, url="http://127.0.0.1:9/v1"), 1, 120, store, cache)
    assert gone(question, ["manager: Tomas Okafor"]) == [1.0]
    # another question than the search's is embedded by the facts' own call
    assert gone("Where do I live?", ["manager: Tomas Okafor"]) is None
