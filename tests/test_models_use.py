"""`exo models use` and `exo models list`: an endpoint is probed before its setting is saved,
a refused one leaves the setting as it was, and a new embedding model re-queues the chunks.

The endpoints are the stand-in server (tests/support/standin.py), for an endpoint that
answers with a chosen dimension or fails on demand; the end-to-end test points the roles
at the real local servers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest
from click.testing import CliRunner
from support.graph import add_document
from support.models import free_ports
from support.standin import Reply, StandIn, embeddings

from exocortex.cli import output
from exocortex.cli.models import models
from exocortex.models import services
from exocortex.plpy.model_client import Endpoint

DIMENSIONS = 8


def answering(path: str, request: dict | None) -> Reply:
    """An endpoint serving one model, 'standin-embed', for every role; /fail/... answers 500,
    /slow/... a second late."""
    if path.startswith("/fail/"):
        return Reply(500, {"error": {"message": "out of memory"}})
    if path.startswith("/slow/"):
        return dataclasses.replace(answering(path.removeprefix("/slow"), request), delay_s=1.0)
    if request is None:
        return Reply(body={"object": "list", "data": [{"id": "standin-embed", "object": "model"}]})
    if path.endswith("/embeddings"):
        return embeddings(request, DIMENSIONS)
    if path.endswith("/rerank"):
        results = [{"index": i, "relevance_score": 1.0 / (i + 1)} for i in range(len(request["documents"]))]
        return Reply(body={"results": results})
    return Reply(
        body={"choices": [{"message": {"role": "assistant", "content": "OK"}, "finish_reason": "length"}]}
    )


@pytest.fixture
def standin():
    with StandIn(answering) as server:
        yield server


@pytest.fixture
def db_cfg(cfg, db):
    """The session's config, reading its settings from this test's database."""
    return dataclasses.replace(cfg, database=db.name, external_url=db.url() if cfg.external_url else None)


@pytest.fixture
def exo(cfg, db, monkeypatch) -> Callable[..., str]:
    """`exo models ARGS` against this test's database; ok says whether it must succeed."""
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    for console in (output.console, output.err):  # one line stays one line
        monkeypatch.setattr(console, "width", 300)
    if cfg.external_url:
        monkeypatch.setenv("EXO_DATABASE_URL", db.url())

    def run(*args: str, ok: bool = True) -> str:
        result = CliRunner().invoke(models, list(args), catch_exceptions=False)
        assert (result.exit_code == 0) == ok, result.output
        return result.stdout if ok else result.stderr

    return run


def setting(db, key: str) -> dict:
    with db.connect() as conn:
        return conn.execute("select value from exo_private.settings where key = %s", (key,)).fetchone()[0]


def queued(db, queue: str) -> int:
    with db.connect() as conn:
        return conn.execute(f"select count(*) from pgmq.q_{queue}").fetchone()[0]


def test_use_embeddings_probes_saves_and_requeues_every_chunk(db, exo, standin):
    with db.connect() as conn:
        add_document(conn, "personal", ["Anna moved to Lyon.", "The boiler was serviced.", "Tea with Omar."])
    before_queue = queued(db, "embed")
    before = setting(db, "models.embeddings")

    out = exo("use", "embeddings", standin.url)
    assert f"models.embeddings: {standin.url} standin-embed ({DIMENSIONS} dimensions)" in out
    assert f"probe: an embedding of {DIMENSIONS} dimensions" in out
    assert "re-embedding: 3 chunks queued for standin-embed" in out
    after = setting(db, "models.embeddings")
    # The model came from the endpoint's one listed model, the dimension from the probe; the
    # setting's other keys are kept.
    assert after == {**before, "url": standin.url, "model": "standin-embed", "dimensions": DIMENSIONS}
    assert queued(db, "embed") - before_queue == 3
    assert standin.calls("/embeddings") == 1 and standin.requests[-1][1]["input"] == ["exocortex probe"]

    # The same model again: nothing to re-embed, nothing queued.
    out = exo("use", "embeddings", standin.url, "--model", "standin-embed")
    assert "re-embedding" not in out
    assert queued(db, "embed") - before_queue == 3


def test_a_failed_probe_is_refused_and_saves_nothing(db, exo, standin):
    before = {key: setting(db, key) for key in ("models.chat", "models.embeddings", "models.rerank")}
    failing = f"{standin.address}/fail/v1"
    for role in ("chat", "embeddings", "rerank"):
        message = exo("use", role, failing, "--model", "m", ok=False)
        path = {"chat": "chat/completions"}.get(role, role)
        assert (
            message == f"error: the {role} probe failed: {failing}/{path} answered HTTP 500: out of memory\n"
        )
    (closed,) = free_ports()
    down = f"http://127.0.0.1:{closed}/v1"
    assert f"cannot list the models of {down}" in exo("use", "chat", down, ok=False)
    # An unset key variable is refused before anything is called.
    assert "EXO_TEST_NO_SUCH_KEY" in exo(
        "use", "rerank", standin.url, "--api-key-env", "EXO_TEST_NO_SUCH_KEY", ok=False
    )
    assert {key: setting(db, key) for key in before} == before
    # --no-probe saves what it is told, without a call.
    calls = len(standin.requests)
    exo("use", "rerank", failing, "--model", "bge-reranker", "--no-probe")
    assert setting(db, "models.rerank")["url"] == failing
    assert len(standin.requests) == calls


def test_use_with_a_key_sends_it_and_list_shows_each_role(db, exo, standin, monkeypatch):
    monkeypatch.setenv("EXO_TEST_MODEL_KEY", "sekret-123")
    out = exo("use", "rerank", standin.url, "--api-key-env", "EXO_TEST_MODEL_KEY")
    assert "probe: two relevance scores" in out and "key from $EXO_TEST_MODEL_KEY" in out
    assert {h.get("Authorization") for h in standin.headers} == {"Bearer sekret-123"}
    saved = setting(db, "models.rerank")
    assert saved["api_key_env"] == "EXO_TEST_MODEL_KEY" and "sekret-123" not in json.dumps(saved)
    assert saved["timeout_s"] == 10  # kept from the migration's default
    exo("use", "chat", standin.url, "--model", "standin-chat")
    assert standin.requests[-1][1]["max_tokens"] == 1

    (closed,) = free_ports()
    exo("use", "embeddings", f"http://127.0.0.1:{closed}/v1", "--no-probe")
    listed = {row["role"]: row for row in json.loads(exo("list", "--json"))}
    assert listed["rerank"] | {"problem": None} == {
        "role": "rerank",
        "setting": "models.rerank",
        "url": standin.url,
        "model": "standin-embed",
        "api_key_env": "EXO_TEST_MODEL_KEY",
        "timeout_s": 10,
        "dimensions": None,
        "answers": True,
        "problem": None,
    }
    assert (listed["chat"]["model"], listed["chat"]["answers"]) == ("standin-chat", True)
    assert listed["embeddings"]["answers"] is False
    assert f"http://127.0.0.1:{closed}/v1" in listed["embeddings"]["problem"]

    table = exo("list")
    assert "EXO_TEST_MODEL_KEY" in table and "standin-chat" in table and "10 s" in table


def test_timeout_s_is_saved_and_bounds_the_probe_and_the_client(db, exo, standin):
    slow = f"{standin.address}/slow/v1"
    before = setting(db, "models.chat")
    assert before["timeout_s"] == 120  # the migration's default for chat
    message = exo("use", "chat", slow, "--model", "m", "--timeout-s", "0.3", ok=False)
    assert message == f"error: the chat probe failed: {slow}/chat/completions did not answer within 0.3 s\n"
    assert setting(db, "models.chat") == before  # a refused probe saves nothing, the timeout neither
    for bad in ("0", "-5", "inf", "nan"):
        message = exo("use", "chat", slow, "--model", "m", "--timeout-s", bad, ok=False)
        assert message.startswith("error: the timeout must be a positive number of seconds, got ")
    assert len(standin.requests) == 1  # a bad timeout is refused before anything is called

    out = exo("use", "chat", slow, "--model", "m", "--timeout-s", "5")
    assert f"models.chat: {slow} m, timeout 5 s" in out and "probe: a completion" in out
    saved = setting(db, "models.chat")
    assert saved == {**before, "url": slow, "model": "m", "timeout_s": 5}
    # What the worker and SQL read: the model client's endpoint waits that long.
    assert Endpoint.from_setting(saved).timeout_s == 5.0
    # Without --timeout-s the saved one stays; a fraction is kept as given.
    exo("use", "chat", slow, "--model", "m")
    assert setting(db, "models.chat")["timeout_s"] == 5
    exo("use", "rerank", standin.url, "--timeout-s", "2.5", "--no-probe", "--model", "r")
    assert setting(db, "models.rerank")["timeout_s"] == 2.5


def test_models_up_leaves_a_local_server_of_ones_own_alone(db, db_cfg, exo, standin, tmp_path):
    """An endpoint on 127.0.0.1 that `exo models up` did not start (llama-server, Ollama) is only
    checked, whatever model it serves: up neither refuses its port nor its model."""
    exo("use", "embeddings", standin.url)
    exo("use", "chat", standin.url, "--model", "standin-chat")
    statuses = services.up(db_cfg, lambda _m: None, run_dir=tmp_path)
    assert [(s.where, s.running, s.started, s.pid) for s in statuses] == [("local", True, False, None)] * 2
    assert not list(tmp_path.glob("*.pid"))


def test_use_points_the_roles_at_the_real_local_servers(db, exo, real_models):
    out = exo("use", "embeddings", real_models.embeddings.url)
    assert "all-MiniLM-L6-v2 (384 dimensions)" in out and "probe: an embedding of 384 dimensions" in out
    out = exo("use", "chat", real_models.chat.url)
    assert "probe: a completion" in out
    assert [row["answers"] for row in json.loads(exo("list", "--json"))][:2] == [True, True]
