"""Query embeddings from inside the database (exo.embed_query), as the read-only reader."""

from __future__ import annotations

import math
import time

import pytest
from support.db import configure
from support.standin import Reply, StandIn

from exocortex.plpy import model_client as client


def embed_query(db, query: str) -> dict:
    with db.connect("exo_reader") as conn:
        return conn.execute("select exo.embed_query(%s)", (query,)).fetchone()[0]


def test_the_reader_embeds_a_query_like_the_worker_does(db, real_models):
    configure(db, models__embeddings={"url": real_models.embeddings.url})
    answer = embed_query(db, "autovacuum and table bloat")
    vector = [float(x) for x in answer["vector"].strip("[]").split(",")]
    (direct,) = client.embed(real_models.embeddings, ["autovacuum and table bloat"])
    assert (answer["model"], answer["dimensions"]) == ("all-MiniLM-L6-v2", 384)
    assert math.isclose(sum(a * b for a, b in zip(vector, direct, strict=True)), 1.0, abs_tol=1e-5)


def test_a_down_endpoint_is_an_answer_not_an_error(db):
    configure(db, models__embeddings={"url": "http://127.0.0.1:9/v1"})
    began = time.monotonic()
    answer = embed_query(db, "anything")
    assert answer["error_class"] == "endpoint_down"
    assert "vector" not in answer
    assert time.monotonic() - began < 2


def test_a_hanging_endpoint_is_cut_at_the_query_timeout(db):
    with StandIn(lambda path, req: Reply(delay_s=5, body=b"{}")) as slow:
        configure(db, models__embeddings={"url": slow.url}, retrieval__embed_timeout_s=0.5)
        began = time.monotonic()
        answer = embed_query(db, "anything")
        elapsed = time.monotonic() - began
    assert answer["error_class"] == "timeout"
    assert elapsed < 2


@pytest.mark.parametrize(
    "query", ["$$; drop table x; $$", 'it\'s "quoted" \\ back', "ctrl \x01\x07 chars", "long " * 20000, ""]
)
def test_hostile_queries_neither_fail_nor_write(db, query, real_models):
    configure(db, models__embeddings={"url": real_models.embeddings.url})
    answer = embed_query(db, query)
    if query:
        assert answer["dimensions"] == 384
    else:  # an empty query: an answer either way, never an exception
        assert answer.get("dimensions") == 384 or "error_class" in answer
    with db.connect() as conn:
        assert conn.execute("select count(*) from exo_private.job_failures").fetchone()[0] == 0
