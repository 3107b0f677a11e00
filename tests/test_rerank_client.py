"""The rerank protocol (llama.cpp /v1/rerank): client.rerank and the MiniLM server's /v1/rerank.

The real embedding server (a bi-encoder: cosine scores) exercises the protocol
with a real model; tests/support/standin.py injects the faults a real server cannot be
made to produce on demand.
"""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from support.models import free_ports
from support.standin import Reply, StandIn

from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import BadResponse, ClientError, Endpoint, EndpointDown, ServerError, Timeout

RELEVANT = "VACUUM reclaims the space of dead tuples in a Postgres table"
IRRELEVANT = "a recipe for lemon cake with poppy seeds"
QUERY = "how does postgres remove dead rows"


# -- the real server ----------------------------------------------------------------------


def _rerank_endpoint(real_models) -> Endpoint:
    return Endpoint(real_models.embeddings.url, real_models.embeddings.model, 30.0)


def test_a_relevant_document_scores_above_an_irrelevant_one_in_input_order(real_models):
    ep = _rerank_endpoint(real_models)
    relevant_first = client.rerank(ep, QUERY, [RELEVANT, IRRELEVANT])
    irrelevant_first = client.rerank(ep, QUERY, [IRRELEVANT, RELEVANT])
    assert relevant_first[0] > relevant_first[1] + 0.1
    assert irrelevant_first == pytest.approx(relevant_first[::-1], abs=1e-5)  # input order, not rank
    assert all(-1.0 - 1e-5 <= s <= 1.0 + 1e-5 for s in relevant_first)  # cosine similarities
    assert client.rerank(ep, QUERY, []) == []


def test_the_server_answers_best_first_with_usage(real_models):
    documents = [IRRELEVANT, "autovacuum settings", RELEVANT]
    payload = {"model": "x", "query": QUERY, "documents": documents, "top_n": 2}
    request = urllib.request.Request(
        f"{real_models.embeddings.url}/rerank",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.load(response)
    scores = [r["relevance_score"] for r in body["results"]]
    assert len(scores) == 2 and scores == sorted(scores, reverse=True)  # top_n cuts, best first
    assert body["results"][0]["index"] == 2
    assert body["model"] == "all-MiniLM-L6-v2"
    assert body["usage"]["prompt_tokens"] > 0


def test_a_server_rejection_is_a_client_error(real_models):
    with pytest.raises(ClientError, match="at most 256") as caught:
        client.rerank(_rerank_endpoint(real_models), "q", ["x"] * 257)
    assert caught.value.status == 400


# -- faults, from the stand-in ------------------------------------------------------------


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """One stand-in for the module (stopping one costs serve_forever's 0.5 s poll); tests set respond."""
    with StandIn(lambda path, req: Reply()) as server:
        yield server


def _answer(standin: StandIn, reply: Reply) -> Endpoint:
    standin.respond = lambda path, req: reply
    standin.requests.clear()
    return Endpoint(standin.url, "reranker", 2.0)


def _results(*pairs: tuple[object, object]) -> dict:
    return {"results": [{"index": i, "relevance_score": s} for i, s in pairs]}


def test_the_request_shape_and_an_out_of_order_reply(standin):
    ep = _answer(standin, Reply(body=_results((2, 0.5), (0, 0.9), (1, -0.25))))
    scores = client.rerank(ep, "q", ["a", "b", "c"])
    ((path, request),) = standin.requests
    assert scores == [0.9, -0.25, 0.5]
    assert path == "/v1/rerank"
    assert request == {"model": "reranker", "query": "q", "documents": ["a", "b", "c"], "top_n": 3}


@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        (Reply(500, {"error": {"message": "reranker crashed"}}), ServerError, "HTTP 500: reranker crashed"),
        (Reply(body=b"<html>not json{"), BadResponse, "not JSON"),
        (Reply(body={"data": []}), BadResponse, "without a results list"),
        (Reply(body={"results": {"0": 1.0}}), BadResponse, "without a results list"),
        (Reply(body={"results": [{"relevance_score": 1.0}, {"index": 1, "relevance_score": 0.5}]}),
         BadResponse, "index None"),
        (Reply(body=_results((0, 1.0), (0, 0.5))), BadResponse, "duplicate"),
        (Reply(body=_results((0, 1.0), (2, 0.5))), BadResponse, "out-of-range index 2"),
        (Reply(body=_results((-1, 1.0), (0, 0.5))), BadResponse, "out-of-range index -1"),
        (Reply(body=_results((True, 1.0), (0, 0.5))), BadResponse, "index True"),
        (Reply(body=_results((0, "high"), (1, 0.5))), BadResponse, "not a finite number: 'high'"),
        (Reply(body=_results((0, None), (1, 0.5))), BadResponse, "not a finite number: None"),
        (Reply(body=b'{"results": [{"index": 0, "relevance_score": NaN}, {"index": 1, "relevance_score": 1}]}'),
         BadResponse, "not a finite number: nan"),
        (Reply(body=_results((1, 0.5))), BadResponse, "1 scores for 2 documents"),
        (Reply(body=["results"]), BadResponse, "not an object"),
    ],
)  # fmt: skip
def test_faults_map_to_error_classes(standin, reply, error, message):
    ep = _answer(standin, reply)
    began = time.monotonic()
    with pytest.raises(error, match=message) as caught:
        client.rerank(ep, "q", ["a", "b"])
    assert caught.value.url == f"{standin.url}/rerank"
    assert str(standin.url) in str(caught.value)
    assert time.monotonic() - began < 1.0, "a fault must fail fast"


def test_a_slow_reply_times_out_within_timeout_s(standin):
    ep = dataclasses.replace(_answer(standin, Reply(body=_results((0, 1.0)), delay_s=3)), timeout_s=0.3)
    began = time.monotonic()
    with pytest.raises(Timeout) as caught:
        client.rerank(ep, "q", ["a"])
    elapsed = time.monotonic() - began
    assert caught.value.error_class == "timeout"
    assert 0.25 <= elapsed < 1.0, elapsed


def test_a_closed_port_is_endpoint_down():
    (port,) = free_ports()
    began = time.monotonic()
    with pytest.raises(EndpointDown):
        client.rerank(Endpoint(f"http://127.0.0.1:{port}/v1", "reranker", 30.0), "q", ["a"])
    assert time.monotonic() - began < 1.0


# -- exo_private.rerank_call: bounded per call and per session ------------------------------


def _rerank_call(conn, backend: str, url: str, passages: list[str], ids: list[int]) -> dict:
    endpoint = json.dumps({"url": url, "model": "reranker", "timeout_s": 2})
    options = json.dumps({"excerpt_chars": 80, "max_tokens": 60})
    return conn.execute(
        "select exo_private.rerank_call(%s, %s::jsonb, 'q', %s, %s, %s::jsonb)",
        (backend, endpoint, passages, ids, options),
    ).fetchone()[0]


def _set(conn, key: str, value: object) -> None:
    conn.execute("update exo_private.settings set value = %s::jsonb where key = %s", (json.dumps(value), key))


def test_the_third_rerank_call_in_a_session_with_limit_2_is_refused_without_a_call(db):
    (port,) = free_ports()
    closed = f"http://127.0.0.1:{port}/v1"
    with db.connect() as conn:
        _set(conn, "reader.rerank_calls_per_minute", 2)
    with db.connect() as conn:
        answers = [
            _rerank_call(conn, backend, closed, ["a"], [1]) for backend in ("cross_encoder", "listwise")
        ]
        answers.append(_rerank_call(conn, "cross_encoder", closed, ["a"], [1]))
        answers.append(_rerank_call(conn, "listwise", closed, ["a"], [1]))  # one budget for both backends
    assert [a["error_class"] for a in answers] == [
        "endpoint_down",
        "endpoint_down",
        "rate_limited",
        "rate_limited",
    ]
    assert (
        "more than 2 rerank calls in a minute in this session (reader.rerank_calls_per_minute)"
        in answers[2]["error"]
    )
    with db.connect() as conn:  # another session has a budget of its own
        assert _rerank_call(conn, "cross_encoder", closed, ["a"], [1])["error_class"] == "endpoint_down"
        _set(conn, "reader.rerank_calls_per_minute", 0)
    with db.connect() as conn:  # 0: remote rerank is off
        assert _rerank_call(conn, "cross_encoder", closed, ["a"], [1])["error_class"] == "rate_limited"


def test_a_rerank_call_sends_at_most_max_passages_cut_to_passage_chars(db, standin):
    _answer(standin, Reply(body=_results((0, 0.9), (1, 0.1))))
    with db.connect() as conn:
        _set(conn, "retrieval.rerank_limits", {"max_passages": 2, "passage_chars": 5})
        answer = _rerank_call(
            conn, "cross_encoder", standin.url, ["abcdefgh", "ijklmnop", "qrstuvwx"], [7, 8, 9]
        )
    ((_path, request),) = standin.requests
    assert request["documents"] == ["abcde", "ijklm"] and request["top_n"] == 2
    assert answer["scores"] == {"7": 0.9, "8": 0.1} and answer["passages"] == 2


def test_an_unknown_backend_is_named_in_at_most_100_characters(db):
    with db.connect() as conn:
        answer = _rerank_call(conn, "x" * 10_000, "http://127.0.0.1:9/v1", ["a"], [1])
    assert answer["error_class"] == "bad_response" and len(answer["error"]) < 150
