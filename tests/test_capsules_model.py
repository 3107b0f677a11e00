"""The chat-model capsule builder (capsules.builder = model, issue 15): the extractive capsule's
lines, as numbered passages, rewritten by the chat model with a passage cited per sentence. A
reply is kept only when every sentence cites a passage it is grounded in and the whole is within
the capsule's size; anything else (and an endpoint that fails) falls back to the extractive
capsule, and the capsule's note says why. The reply is injected by a stand-in endpoint: what
the real Gemma 270M makes of /usr/share/doc is measured by bench.capsule_builders."""

from __future__ import annotations

import threading
import time
from pydoc_data.topics import topics

import pytest
from support.db import configure
from support.plpy import load
from support.standin import Reply, StandIn, chat

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

capsules = load("capsules")


def scalar(db, sql: str):
    with db.connect() as conn:
        return conn.execute(sql).fetchone()[0]


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


BUILT = {
    "body": "Names refer to objects bound in a block.\nA block is a piece of program text run as a unit.\n"
    "The import statement binds a module name in the local namespace.",
    "sentences": [
        {"chunk_id": 7, "start": 0, "end": 1},
        {"chunk_id": 7, "start": 2, "end": 3},
        {"chunk_id": 9},
    ],
}
SOURCES = capsules.passages(BUILT)


def test_passages_group_the_extractive_lines_by_chunk():
    assert SOURCES == [
        (7, "Names refer to objects bound in a block. A block is a piece of program text run as a unit."),
        (9, "The import statement binds a module name in the local namespace."),
    ]
    system, user = capsules.model_messages(SOURCES, 400, 1200)
    assert "[1] Names refer" in user["content"] and "[2] The import" in user["content"]
    assert "13 to 40 sentences" in system["content"]


def test_a_grounded_reply_citing_every_sentence_is_kept():
    reply = (
        "- Names refer to **objects** bound in a block [1].\n"
        "- The import statement binds a module name. [2]\n"
        "A block of program text runs as a unit [1]."
    )
    made, why = capsules.validate_reply(reply, SOURCES, 10, 100)
    assert why is None
    assert made["body"].split("\n") == [
        "Names refer to objects bound in a block.",
        "The import statement binds a module name.",
        "A block of program text runs as a unit.",
    ]
    assert made["sentences"] == [{"chunk_id": 7}, {"chunk_id": 9}, {"chunk_id": 7}]
    assert made["chunk_ids"] == [7, 9] and made["builder"] == capsules.MODEL_BUILDER


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("Names refer to objects bound in a block.", "sentence 1 cites no passage"),
        ("Names refer to objects bound in a block [3].", "cites passage 3, not one of 1..2"),
        ("Rust borrows checked lifetimes across threads safely [1].", "not grounded in passage 1"),
        ("", "no sentences"),
        ("Names refer to objects bound in a block [1].", "tokens, not within 100..1200"),
    ],
)
def test_a_reply_that_fails_validation_says_why(reply, why):
    made, reason = capsules.validate_reply(reply, SOURCES, 100 if "tokens" in why else 1, 1200)
    assert made is None and why in reason


def test_no_chat_model_and_a_failing_endpoint_are_reasons_too():
    assert "no chat model" in capsules.model_capsule({"url": None}, BUILT, 1, 100)[1]

    def cut_off(endpoint, messages, max_tokens):
        return capsules.ChatReply("Names [1].", "length", 1, 1)

    assert (
        capsules.model_capsule({"url": "http://127.0.0.1:9/v1", "model": "m"}, BUILT, 1, 100, cut_off)[1]
        == "the reply was cut off (max_tokens)"
    )


# -- in the database, through the worker ---------------------------------------------------------


def build(db, tmp_path, respond):
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "execution-model.md").write_text("# Execution model\n\n" + topics["execmodel"])
    with StandIn(respond) as model:
        configure(db, models__chat={"url": model.url, "timeout_s": 5}, capsules__builder="model")
        pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
        done = Worker(
            db.cfg, dbname=db.name, once=True, queues=("capsules",), concurrency=1, poll_s=0.05
        ).run()
    assert done.done["capsules"] == 1
    with db.connect() as conn:
        return conn.execute(
            "select builder, note, body, sentences, chunk_ids from exo_private.capsules"
        ).fetchone()


def test_the_worker_keeps_a_valid_model_capsule(db, tmp_path):
    def respond(path, request):
        # each passage's first sentence, cited: grounded by construction, long enough
        text = request["messages"][1]["content"]
        lines = []
        for n, block in enumerate(text.split("\n\n"), start=1):
            first = block.split("] ", 1)[1].split(". ")[0].rstrip(".")
            lines.append(f"{first} [{n}].")
        return chat(" ".join(lines * 3))

    builder, note, body, sentences, chunk_ids = build(db, tmp_path, respond)
    assert (builder, note) == ("model-1", None)
    assert len(body.split("\n")) == len(sentences) and {s["chunk_id"] for s in sentences} == set(chunk_ids)


def test_an_invalid_reply_or_a_failing_endpoint_falls_back_to_extractive(db, tmp_path):
    builder, note, _, sentences, _ = build(db, tmp_path, lambda path, request: Reply(status=500))
    assert builder == "extractive-1" and note.startswith("chat endpoint: http_5xx")
    assert all("start" in s for s in sentences)


def test_a_stop_cancels_the_capsule_the_database_awaits_from_a_model_that_never_answers(db, tmp_path):
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "execution-model.md").write_text("# Execution model\n\n" + topics["execmodel"])
    waiting = (
        "select count(*) from pg_stat_activity where datname = current_database() and state = 'active'"
        " and query like 'select exo_private.capsule_job(%%'"
    )
    with StandIn(lambda path, request: Reply(delay_s=300, body=b"{}")) as hanging:
        configure(db, models__chat={"url": hanging.url, "timeout_s": 200}, capsules__builder="model")
        pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
        worker = Worker(db.cfg, dbname=db.name, queues=("capsules",), concurrency=1, poll_s=0.05, grace_s=1.5)
        thread = threading.Thread(target=worker.run)
        thread.start()
        try:
            wait_for(lambda: hanging.calls("/chat/completions") == 1)
            assert scalar(db, waiting) == 1  # the database waits for the model, not the worker
            began = time.monotonic()
            worker.request_stop()
            thread.join(timeout=30)
            took = time.monotonic() - began
            # The statement was cancelled: the database stopped waiting, the model server saw it go.
            wait_for(lambda: scalar(db, waiting) == 0, timeout=2)
            wait_for(lambda: hanging.hang_ups == 1, timeout=2)
        finally:
            worker.abort.set()
            thread.join(timeout=30)
    assert took < 1.5 + 0.5, f"run returned {took:.1f} s after the stop with a 1.5 s grace period"
    assert worker.result.unfinished == 1 and worker.result.calls_cut == 1
    assert worker.result.abandoned["capsules"] == 1
    # Its thread ended with the statement; nothing was built, the message waits for the next run.
    wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("exo-job")], timeout=2)
    assert scalar(db, "select count(*) from exo_private.capsules") == 0
    assert scalar(db, "select count(*) from pgmq.read('capsules', 0, 10)") == 1
