"""Model services: the HTTP client's error classes, the real local servers, `exo models`.

A stand-in HTTP server is used only to inject faults the real servers cannot be
made to produce on demand (5xx, malformed bodies, slow and dropped answers).
Everything else runs the real llama-server with the packaged Gemma GGUF and the
real MiniLM embedding server, on free ports, with pid files and logs in a
temporary folder so the user's own `exo models up` servers are never touched.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.models import CHAT_MODEL, free_ports
from support.standin import Reply, StandIn, silent_port

from exocortex.cli.models import models
from exocortex.config import Config
from exocortex.models import services
from exocortex.models.services import ServiceProblem
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import (
    BadResponse,
    ClientError,
    Endpoint,
    EndpointDown,
    ModelError,
    ServerError,
    Timeout,
)

CHAT_ALIAS = "gemma-test-alias"
FACT_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "fact",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "person": {"type": "string", "maxLength": 40},
                "city": {"type": "string", "maxLength": 40},
                "mentions_database": {"type": "boolean"},
            },
            "required": ["person", "city", "mentions_database"],
            "additionalProperties": False,
        },
    },
}


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


# -- a stand-in server for fault injection ------------------------------------------------


def by_mode(path: str, request: dict | None) -> Reply:
    """Behaves as the first path segment says: /ok/v1/..., /500/v1/..., /slow/v1/..."""
    if request is None:  # a GET: the model list
        return Reply(body={"object": "list", "data": [{"id": "stand-in"}]})
    mode, _, route = path.strip("/").partition("/")
    n = len(request.get("input", []))
    if mode == "ok" and route.endswith("embeddings"):  # answered out of order on purpose
        data = [{"object": "embedding", "index": i, "embedding": [float(i), 1.0]} for i in range(n)]
        return Reply(body={"object": "list", "data": data[::-1]})
    if mode == "ok":
        message = {"role": "assistant", "content": '{"ok": true}'}
        usage = {"prompt_tokens": 7, "completion_tokens": 3}
        return Reply(body={"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage})
    if mode == "500":
        return Reply(500, {"error": {"message": "the model crashed", "type": "server_error"}})
    if mode == "400":
        return Reply(400, {"error": {"message": "schema is not supported", "type": "invalid_request_error"}})
    if mode == "garbage":
        return Reply(body=b"<html>not json{")
    if mode == "missing":
        return Reply(body={"object": "list"} if route.endswith("embeddings") else {"choices": []})
    if mode == "short":
        return Reply(body={"data": [{"index": 0, "embedding": [1.0]}]})
    if mode == "slow":
        return Reply(body={"data": []}, delay_s=10)
    if mode == "trickle":
        return Reply(body={"data": [{"index": 0, "embedding": [1.0]}]}, trickle=True)
    assert mode == "hangup", mode
    return Reply(hang_up=True)


def at(stand_in: StandIn, mode: str) -> str:
    """The stand-in's base URL for one mode."""
    return f"{stand_in.address}/{mode}/v1"


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StandIn]:
    with StandIn(by_mode) as server:
        yield server


def _ep(url: str, timeout_s: float = 2.0, **extra) -> Endpoint:
    return Endpoint(url, "stand-in", timeout_s, extra)


def test_client_is_stdlib_only():
    """The client is inlined into plpython3u functions later: standard library, no exocortex."""
    tree = ast.parse(Path(client.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert {name.split(".")[0] for name in imported} <= sys.stdlib_module_names | {"__future__"}


def test_endpoint_from_setting():
    ep = Endpoint.from_setting(
        {"url": "http://127.0.0.1:54330/v1/", "model": "m", "timeout_s": 120, "response_format": False}
    )
    assert ep == Endpoint("http://127.0.0.1:54330/v1", "m", 120.0, {"response_format": False})
    assert Endpoint.from_setting({"url": "http://h/v1", "model": "m"}).timeout_s == client.DEFAULT_TIMEOUT_S
    for bad in (
        {"url": None, "model": "m"},
        {"url": "http://h/v1"},
        {"url": "http://h/v1", "model": "m", "timeout_s": 0},
    ):
        with pytest.raises(ValueError):
            Endpoint.from_setting(bad)


def test_embed_orders_by_index_and_chat_sends_the_schema(stand_in):
    vectors = client.embed(_ep(at(stand_in, "ok")), ["a", "b", "c"])
    assert vectors == [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert client.embed(_ep(at(stand_in, "ok")), []) == []

    hi = [{"role": "user", "content": "hi"}]
    reply = client.chat(_ep(at(stand_in, "ok")), hi, max_tokens=5, response_format=FACT_SCHEMA)
    assert reply == client.ChatReply('{"ok": true}', "stop", 7, 3)
    path, body = stand_in.requests[-1]
    assert path == "/ok/v1/chat/completions"
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["response_format"] == FACT_SCHEMA
    assert (body["max_tokens"], body["temperature"], body["model"]) == (5, 0.0, "stand-in")

    # A setting with "response_format": false leaves the schema out, for servers that misbehave with it.
    client.chat(_ep(at(stand_in, "ok"), response_format=False), [], max_tokens=5, response_format=FACT_SCHEMA)
    assert "response_format" not in stand_in.requests[-1][1]


def test_embed_checks_dimensions_against_the_setting(stand_in):
    with pytest.raises(BadResponse, match="sizes \\[2\\]; the setting says 384"):
        client.embed(_ep(at(stand_in, "ok"), dimensions=384), ["a"])


@pytest.mark.parametrize(
    ("mode", "error", "error_class", "message"),
    [
        ("500", ServerError, "http_5xx", "HTTP 500: the model crashed"),
        ("400", ClientError, "http_4xx", "HTTP 400: schema is not supported"),
        ("garbage", BadResponse, "bad_response", "not JSON: <html>not json"),
        ("missing", BadResponse, "bad_response", "without"),
        ("short", BadResponse, "bad_response", "1 embeddings for 2 inputs"),
        ("hangup", EndpointDown, "endpoint_down", "closed the connection"),
    ],
)
def test_faults_map_to_error_classes(stand_in, mode, error, error_class, message):
    began = time.monotonic()
    with pytest.raises(error, match=message) as caught:
        client.embed(_ep(at(stand_in, mode)), ["a", "b"])
    assert caught.value.error_class == error_class
    assert isinstance(caught.value, ModelError)
    if isinstance(caught.value, ServerError | ClientError):
        assert caught.value.status == int(mode)
    if mode not in ("short",):  # chat maps the same faults the same way
        with pytest.raises(error):
            client.chat(_ep(at(stand_in, mode)), [{"role": "user", "content": "hi"}], max_tokens=1)
    assert time.monotonic() - began < 1.5, "a fault must fail fast, not wait for the timeout"


@pytest.mark.parametrize("mode", ["slow", "trickle"])
def test_a_slow_answer_times_out_within_timeout_s(stand_in, mode):
    began = time.monotonic()
    with pytest.raises(Timeout) as caught:
        client.embed(_ep(at(stand_in, mode), timeout_s=0.5), ["a"])
    elapsed = time.monotonic() - began
    assert caught.value.error_class == "timeout"
    assert 0.45 <= elapsed < 2.0, elapsed


def test_a_closed_port_is_endpoint_down_at_once():
    (port,) = free_ports()
    began = time.monotonic()
    with pytest.raises(EndpointDown) as caught:
        client.embed(_ep(f"http://127.0.0.1:{port}/v1", timeout_s=30), ["a"])
    assert caught.value.error_class == "endpoint_down"
    with pytest.raises(EndpointDown):
        client.chat(_ep(f"http://127.0.0.1:{port}/v1", timeout_s=30), [], max_tokens=1)
    assert time.monotonic() - began < 1.0


def test_probe_is_true_only_for_a_2xx(stand_in):
    assert client.probe(_ep(at(stand_in, "ok")), "chat")
    assert client.probe(_ep(at(stand_in, "ok")), "embeddings")
    assert stand_in.requests[-2][1]["max_tokens"] == 1
    assert not client.probe(_ep(at(stand_in, "500")), "chat")
    assert not client.probe(_ep(at(stand_in, "slow"), timeout_s=0.3), "embeddings")
    with pytest.raises(ValueError):
        client.probe(_ep(at(stand_in, "ok")), "rerank")
    # What failed tells a busy (or hung) server from one that is down.
    assert client.probe_error(_ep(at(stand_in, "ok")), "chat") is None
    assert isinstance(client.probe_error(_ep(at(stand_in, "slow"), timeout_s=0.3), "chat"), client.Timeout)
    assert isinstance(client.probe_error(_ep(at(stand_in, "500")), "chat"), client.ServerError)
    assert isinstance(client.probe_error(_ep(f"http://127.0.0.1:{free_ports()[0]}/v1"), "chat"), EndpointDown)


def test_an_embedding_asked_for_is_computed_while_the_caller_works_and_read_when_wanted(stand_in):
    """EmbeddingCall sends its request at once and reads the answer when asked: how a search's
    stages run while its query is embedded. An answer that came while the caller was busy is
    read even past the timeout; one never read is given up, and the server sees its client go."""
    setting = {"url": at(stand_in, "ok"), "model": "stand-in", "timeout_s": 0.3}
    asked = stand_in.calls("/ok/v1/embeddings")
    call = client.EmbeddingCall(setting, "a")
    deadline = time.monotonic() + 2
    while stand_in.calls("/ok/v1/embeddings") == asked and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stand_in.calls("/ok/v1/embeddings") == asked + 1  # before anything was read
    time.sleep(0.5)  # the caller at work past the timeout
    got = call.result()
    assert (got["vector"], got["dimensions"], got["model"]) == ("[0.0,1.0]", 2, "stand-in")
    assert got["ms"] >= 500

    def result(mode: str, timeout_s: float = 2.0) -> dict:
        return client.EmbeddingCall(dict(setting, url=at(stand_in, mode), timeout_s=timeout_s), "a").result()

    def hung_up(count: int) -> bool:
        deadline = time.monotonic() + 2
        while stand_in.hang_ups < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return stand_in.hang_ups == count

    assert result("500")["error_class"] == "http_5xx" and "the model crashed" in result("500")["error"]
    closed = client.EmbeddingCall(dict(setting, url=f"http://127.0.0.1:{free_ports()[0]}/v1"), "a")
    assert closed.result()["error_class"] == "endpoint_down"
    assert client.EmbeddingCall({"url": None}, "a").result()["error_class"] == "bad_setting"
    hang_ups = stand_in.hang_ups
    assert result("slow", timeout_s=0.3)["error_class"] == "timeout"
    assert hung_up(hang_ups + 1)
    client.EmbeddingCall(dict(setting, url=at(stand_in, "slow"), timeout_s=30), "a").close()
    assert hung_up(hang_ups + 2)


def test_a_call_cut_off_from_another_thread_ends_at_once_and_the_server_sees_it(stand_in):
    cancel = client.Cancel()
    endpoint = dataclasses.replace(_ep(at(stand_in, "slow"), timeout_s=30), cancel=cancel)
    calls, hang_ups = stand_in.calls("/slow/v1/embeddings"), stand_in.hang_ups
    cut: list[int] = []

    def cut_off_once_asked() -> None:
        while stand_in.calls("/slow/v1/embeddings") == calls:
            time.sleep(0.01)
        cut.append(cancel.cancel())

    cutter = threading.Thread(target=cut_off_once_asked, daemon=True)
    cutter.start()
    began = time.monotonic()
    with pytest.raises(client.Cancelled) as caught:
        client.embed(endpoint, ["a"])  # the stand-in would answer in 10 s, the timeout is 30 s
    assert time.monotonic() - began < 2.0
    cutter.join(timeout=2)  # the call ends as the connection is shut down, before cut is noted
    assert caught.value.error_class == "cancelled" and cut == [1]  # one connection was open
    deadline = time.monotonic() + 2
    while stand_in.hang_ups == hang_ups and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stand_in.hang_ups == hang_ups + 1  # the server saw its client go: a model server stops
    # A call begun after the cut raises at once, without a request.
    asked = len(stand_in.requests)
    with pytest.raises(client.Cancelled):
        client.chat(endpoint, [{"role": "user", "content": "hi"}], max_tokens=1)
    assert len(stand_in.requests) == asked and cancel.cancel() == 0


def test_a_check_asked_while_the_answer_is_awaited_ends_the_call_with_what_it_raises(stand_in):
    class Interrupted(Exception):  # what an SPI call raises in the database when the statement is cancelled
        pass

    asked: list[float] = []

    def check() -> None:
        asked.append(time.monotonic())
        if len(asked) == 3:
            raise Interrupted

    endpoint = dataclasses.replace(_ep(at(stand_in, "slow"), timeout_s=30), cancel=client.Cancel(check))
    hang_ups = stand_in.hang_ups
    began = time.monotonic()
    with pytest.raises(Interrupted):
        client.embed(endpoint, ["a"])  # the stand-in would answer in 10 s
    assert time.monotonic() - began < 3 * client.POLL_S + 1.0 and len(asked) == 3
    deadline = time.monotonic() + 2
    while stand_in.hang_ups == hang_ups and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stand_in.hang_ups == hang_ups + 1  # its connection closed: the model server stops
    # A check that never raises leaves the call to its timeout.
    quiet = dataclasses.replace(_ep(at(stand_in, "slow"), timeout_s=0.6), cancel=client.Cancel(lambda: None))
    began = time.monotonic()
    with pytest.raises(client.Timeout):
        client.embed(quiet, ["a"])
    assert 0.6 <= time.monotonic() - began < 2.0
    deadline = time.monotonic() + 2
    while stand_in.hang_ups == hang_ups + 1 and time.monotonic() < deadline:
        time.sleep(0.01)  # the stand-in sees that one go too before the next test counts


def test_a_host_that_drops_packets_holds_a_call_no_longer_than_its_deadline_cancel_or_check():
    with silent_port() as url:
        began = time.monotonic()
        with pytest.raises(Timeout, match="did not answer within 0.5 s"):
            client.embed(_ep(url, timeout_s=0.5), ["a"])
        assert 0.45 <= time.monotonic() - began < 1.5
        # Cut off from another thread while the SYN goes unanswered (the worker's stop).
        cancel = client.Cancel()
        cutter = threading.Timer(0.3, cancel.cancel)
        cutter.start()
        began = time.monotonic()
        with pytest.raises(client.Cancelled):
            client.embed(dataclasses.replace(_ep(url, timeout_s=30), cancel=cancel), ["a"])
        assert time.monotonic() - began < 0.3 + client.POLL_S + 1.0
        cutter.join()
        # A check asked while it connects (a statement's interrupts in the database).
        asked: list[float] = []

        def check() -> None:
            asked.append(time.monotonic())
            if len(asked) == 3:
                raise KeyboardInterrupt  # what no handler of the client catches

        began = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            client.embed(dataclasses.replace(_ep(url, timeout_s=30), cancel=client.Cancel(check)), ["a"])
        assert time.monotonic() - began < 3 * client.POLL_S + 1.0


def test_a_check_is_asked_while_a_trickled_answer_comes_in(stand_in):
    """The trickle's headers come at once, then a byte every 0.1 s: each read returns, and the
    check is still asked every POLL_S."""
    asked: list[float] = []

    def check() -> None:
        asked.append(time.monotonic())
        if len(asked) == 3:
            raise KeyboardInterrupt

    endpoint = dataclasses.replace(_ep(at(stand_in, "trickle"), timeout_s=30), cancel=client.Cancel(check))
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        client.embed(endpoint, ["a"])  # the body takes about 5 s
    assert time.monotonic() - began < 3 * client.POLL_S + 1.0


# -- the real servers ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(real_models):
    """The session's real servers (tests/conftest.py)."""
    return real_models


def test_embeddings_are_384_dimension_unit_vectors_in_input_order(real):
    texts = ["Postgres vacuum reclaims dead tuples", "database maintenance", "a poem about the sea"]
    vectors = client.embed(real.embeddings, texts)
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert all(abs(math.hypot(*v) - 1.0) < 1e-4 for v in vectors)
    (alone,) = client.embed(real.embeddings, [texts[1]])
    assert cosine(alone, vectors[1]) > 0.9999


def test_embeddings_put_related_texts_closer(real):
    vacuum, maintenance, poem = client.embed(
        real.embeddings,
        ["Postgres vacuum reclaims dead tuples", "database maintenance", "a poem about the sea"],
    )
    assert cosine(vacuum, maintenance) > cosine(vacuum, poem) + 0.1


def test_chat_with_a_json_schema_is_parseable_and_repeatable(real):
    messages = [
        {"role": "system", "content": "You extract facts as JSON."},
        {"role": "user", "content": "Text: Alice moved to Paris in 2019 to work on PostgreSQL.\n"
                                    "Return the person, the city and whether a database is mentioned."},
    ]  # fmt: skip
    first = client.chat(real.chat, messages, max_tokens=80, response_format=FACT_SCHEMA)
    second = client.chat(real.chat, messages, max_tokens=80, response_format=FACT_SCHEMA)
    # the same facts; the spacing may differ, as the second call reuses the first's cached prompt
    assert json.loads(first.content) == json.loads(second.content)
    fact = json.loads(first.content)
    assert set(fact) == {"person", "city", "mentions_database"}
    assert (fact["person"], fact["city"]) == ("Alice", "Paris")  # in its turn format Gemma reads the text
    assert isinstance(fact["mentions_database"], bool)
    assert first.finish_reason == "stop"
    assert first.prompt_tokens > 20 and 0 < first.completion_tokens <= 80
    with urllib.request.urlopen(f"{real.chat.url}/models", timeout=5) as response:  # --alias names it
        assert [m["id"] for m in json.load(response)["data"]] == [CHAT_MODEL]


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def test_chat_prompts_gemma_in_its_turn_format_after_one_bos(real):
    """The packaged GGUF has no chat template: without gemma_turns.jinja llama-server wrapped every
    message in ChatML (text Gemma was never trained on) with no BOS, and Gemma echoed the question
    ("What is the capital of France? mendatang")."""
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    server = real.chat.url.removesuffix("/v1")
    turns = "<start_of_turn>user\nBe brief.\n\nWhat is the capital of France?<end_of_turn>\n<start_of_turn>model\n"
    assert _post(f"{server}/apply-template", {"messages": messages})["prompt"] == "<bos>" + turns
    reply = client.chat(real.chat, messages, max_tokens=8).content
    assert "Paris" in reply
    # token for token what the model writes after exactly one BOS (raw completion adds none)
    raw = _post(f"{server}/completion", {"prompt": "<bos>" + turns, "n_predict": 8, "temperature": 0})
    assert reply == raw["content"]


def test_probe_answers_for_both_servers(real):
    assert client.probe(real.chat, "chat")
    assert client.probe(real.embeddings, "embeddings")
    (closed,) = free_ports()
    assert not client.probe(dataclasses.replace(real.chat, url=f"http://127.0.0.1:{closed}/v1"), "chat")


@pytest.mark.parametrize(
    ("route", "body", "message"),
    [
        ("embeddings", b'{"input": 5}', "must be a string or a list of strings"),
        ("embeddings", b'{"input": ["a", 1]}', "must be a string or a list of strings"),
        ("embeddings", b'{"input": []}', "must not be an empty list"),
        ("embeddings", json.dumps({"input": ["x"] * 257}).encode(), "257 items; at most 256"),
        ("embeddings", b'{"input": "a"', "not valid JSON"),
        ("embeddings", b'["a"]', "must be a JSON object"),
        ("rerank", b'{"documents": ["a"]}', "'query' is required and must be a string"),
        ("rerank", b'{"query": 5, "documents": ["a"]}', "'query' is required and must be a string"),
        ("rerank", b'{"query": "q"}', "'documents' is required and must be a list of strings"),
        ("rerank", b'{"query": "q", "documents": ["a", 1]}', "must be a list of strings"),
        ("rerank", b'{"query": "q", "documents": []}', "must not be an empty list"),
        ("rerank", json.dumps({"query": "q", "documents": ["x"] * 257}).encode(), "257 items; at most 256"),
        ("rerank", b'{"query": "q", "documents": ["a"], "top_n": 0}', "'top_n' must be a positive integer"),
        ("rerank", b'{"query": "q"', "not valid JSON"),
        ("rerank", b'["q"]', "must be a JSON object"),
    ],
)
def test_the_embedding_server_rejects_bad_requests(real, route, body, message):
    request = urllib.request.Request(
        f"{real.embeddings.url}/{route}", data=body, headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    with caught.value:
        assert caught.value.code == 400
        error = json.load(caught.value)["error"]
    assert error["type"] == "invalid_request_error"
    assert message in error["message"]


def test_embedding_server_health_models_and_client_errors(real):
    base = real.embeddings.url.removesuffix("/v1")
    with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
        assert json.load(response) == {"status": "ok"}
    with urllib.request.urlopen(f"{real.embeddings.url}/models", timeout=5) as response:
        assert json.load(response)["data"] == [
            {"id": "all-MiniLM-L6-v2", "object": "model", "owned_by": "exocortex", "dimensions": 384}
        ]
    with pytest.raises(ClientError, match="at most 256") as caught:
        client.embed(real.embeddings, ["x"] * 257)
    assert caught.value.status == 400


# -- services: `exo models up | down | status` --------------------------------------------


def _set_url(db, key: str, url: str | None, **more) -> None:
    with db.connect() as conn:
        conn.execute(
            "update exo_private.settings set value = value || %s::jsonb where key = %s",
            (json.dumps({"url": url, **more}), key),
        )


@pytest.fixture
def db_cfg(cfg: Config, db) -> Config:
    """The session's config, reading its settings from this test's database."""
    return dataclasses.replace(cfg, database=db.name, external_url=db.url() if cfg.external_url else None)


@pytest.mark.e2e  # starts the real model servers
def test_up_is_idempotent_and_down_stops_both(db_cfg, db, tmp_path):
    chat_port, embed_port = free_ports(2)
    _set_url(db, "models.chat", f"http://127.0.0.1:{chat_port}/v1")
    _set_url(db, "models.embeddings", f"http://localhost:{embed_port}/v1")
    try:
        first = services.up(db_cfg, lambda _m: None, run_dir=tmp_path)
        assert [(s.name, s.where, s.running, s.started) for s in first] == [
            ("chat", "local", True, True),
            ("embeddings", "local", True, True),
        ]
        pids = [s.pid for s in first]
        assert all(pids) and sorted(p.name for p in tmp_path.glob("*.pid")) == ["chat.pid", "embeddings.pid"]

        second = services.up(db_cfg, lambda _m: None, run_dir=tmp_path)
        assert [(s.running, s.started, s.pid) for s in second] == [(True, False, pid) for pid in pids]
        assert [s.running for s in services.status(db_cfg, run_dir=tmp_path)] == [True, True]
    finally:
        stopped = services.down(db_cfg, run_dir=tmp_path)
    assert stopped == [
        f"chat: stopped (pid {pids[0]}, SIGTERM)",
        f"embeddings: stopped (pid {pids[1]}, SIGTERM)",
    ]
    assert not list(tmp_path.glob("*.pid"))
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert (tmp_path / "embeddings.log").read_text().rstrip().endswith("embedding server stopped")
    assert services.down(db_cfg, run_dir=tmp_path) == ["chat: not running", "embeddings: not running"]
    after = services.status(db_cfg, run_dir=tmp_path)
    assert [(s.running, s.pid) for s in after] == [(False, None), (False, None)]


def test_a_taken_port_is_a_clear_error_and_starts_nothing(db_cfg, db, tmp_path):
    embed_port = free_ports()[0]
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        _set_url(db, "models.chat", f"http://127.0.0.1:{port}/v1")
        _set_url(db, "models.embeddings", f"http://127.0.0.1:{embed_port}/v1")
        with pytest.raises(ServiceProblem, match=f"port {port} on 127.0.0.1 is in use.*models.chat"):
            services.up(db_cfg, lambda _m: None, run_dir=tmp_path)
    assert not list(tmp_path.glob("*.pid"))
    assert services.status(db_cfg, run_dir=tmp_path)[1].running is False


def test_a_stale_or_foreign_pid_file_is_removed_and_never_signalled(db_cfg, db, tmp_path):
    (tmp_path / "chat.pid").write_text(f"{os.getpid()}\n")  # alive, but not a chat server: pytest
    (tmp_path / "embeddings.pid").write_text("999999999\n")  # above any pid_max: never alive
    assert services.down(db_cfg, run_dir=tmp_path) == [
        "chat: not running (removed a stale pid file)",
        "embeddings: not running (removed a stale pid file)",
    ]
    assert not list(tmp_path.glob("*.pid"))


def test_remote_and_off_services_are_only_checked(db_cfg, db, tmp_path):
    # not 127.0.0.1 or localhost: someone else's server
    with StandIn(by_mode, host="127.0.0.2") as remote:
        _set_url(db, "models.chat", at(remote, "ok"))
        _set_url(db, "models.embeddings", None)
        statuses = services.up(db_cfg, lambda _m: None, run_dir=tmp_path)
        assert [(s.where, s.running, s.pid, s.started) for s in statuses] == [
            ("remote", True, None, False),
            ("off", False, None, False),
        ]
        assert not list(tmp_path.glob("*.pid"))
    assert services.status(db_cfg, run_dir=tmp_path)[0].running is False


def test_settings_that_cannot_be_served_locally_are_refused(db_cfg, db, tmp_path):
    chat_port, embed_port = free_ports(2)  # not the default ports: `exo models up` may be serving there
    _set_url(db, "models.chat", f"http://127.0.0.1:{chat_port}/v1")
    _set_url(
        db, "models.embeddings", f"http://127.0.0.1:{embed_port}/v1", model="nomic-embed-text", dimensions=768
    )
    with pytest.raises(ServiceProblem, match="serves only all-MiniLM-L6-v2 \\(384 dimensions\\)"):
        services.up(db_cfg, lambda _m: None, run_dir=tmp_path)
    assert services.status(db_cfg, run_dir=tmp_path)[1].model == "nomic-embed-text"  # status still reports
    _set_url(db, "models.embeddings", "http://127.0.0.1/v1", model="all-MiniLM-L6-v2", dimensions=384)
    with pytest.raises(ServiceProblem, match="models.embeddings: a local url must be http:// with a port"):
        services.up(db_cfg, lambda _m: None, run_dir=tmp_path)


def test_without_a_runtime_root_llama_server_must_be_on_path(cfg, db, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    external = dataclasses.replace(cfg, database=db.name, external_url=db.url())
    with pytest.raises(ServiceProblem, match="llama-server is not on PATH.*llama.cpp-tools.*models.chat"):
        services.start_chat(external, free_ports()[0], CHAT_ALIAS, run_dir=tmp_path)


def test_an_unmigrated_database_says_to_migrate(cfg, empty_db, tmp_path):
    bare = dataclasses.replace(
        cfg, database=empty_db.name, external_url=empty_db.url() if cfg.external_url else None
    )
    with pytest.raises(ServiceProblem, match="run `exo migrate`"):
        services.status(bare, run_dir=tmp_path)


def test_cli_status_json_and_errors(cfg, db, empty_db, monkeypatch):
    closed = free_ports()[0]
    _set_url(db, "models.chat", f"http://127.0.0.1:{closed}/v1")
    for target in (db, empty_db):
        monkeypatch.setenv("EXO_DB_NAME", target.name)
        if cfg.external_url:
            monkeypatch.setenv("EXO_DATABASE_URL", target.url())
        result = CliRunner().invoke(models, ["status", "--json"])
        if target is db:
            assert result.exit_code == 0, result.output
            chat = json.loads(result.stdout)[0]
            assert (chat["name"], chat["where"], chat["running"]) == ("chat", "local", False)
            assert chat["url"] == f"http://127.0.0.1:{closed}/v1"
        else:
            assert result.exit_code == 1
            assert "error: the database has no settings table yet" in result.stderr
