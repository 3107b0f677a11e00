"""The retrievers with a profile (issue 17): the personal stage, each call recorded, the
provenance block, the user actions; and LangChain's standard retriever suite with a profile.
One database for the module, with a few notes and no embeddings (the personal stage matches
words and says so)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import ClassVar

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests
from support.db import cloned_database
from support.graph import add_document

from exocortex.client.api import Reader
from exocortex.client.integrations import langchain as lc
from exocortex.client.integrations import llamaindex as li

QUESTION = "liveness probe restarts"


@pytest.fixture(scope="module")
def kdb(cfg, template_db) -> Iterator:
    with cloned_database(cfg, template_db, "exo_kb_retriever") as db:
        with db.connect() as conn:
            add_document(conn, "technical", ["kubernetes restarts a pod when its liveness probe fails"])
            add_document(
                conn, "technical", ["the readiness probe gates traffic, the liveness probe restarts"]
            )
            for i in range(4):
                add_document(conn, "technical", [f"runbook {i}: a liveness probe that restarts too often"])
            add_document(conn, "personal", ["sourdough bread wants a long cold proof"])
        yield db


def new_profile(db) -> str:
    """A new profile with its login role (a session of it is the profile)."""
    name = f"agent-{uuid.uuid4().hex[:8]}"
    db.profile_url(name)
    return name


def test_langchain_retriever_with_a_profile_suggests_saves_and_searches_the_base_first(kdb):
    who = new_profile(kdb)
    retriever = lc.ExocortexRetriever(reader=Reader(kdb.profile_url(who), profile=who), k=10, profile=who)
    for _ in range(3):
        docs = retriever.invoke(QUESTION)
    top = docs[0].metadata["document_id"]
    block = retriever.last_provenance.to_dict()
    first = block["sources"][0]
    assert (first["document_id"], first["from"], first["state"], first["fetch_count"]) == (
        top,
        "global",
        "suggested",
        3,
    )
    assert "has appeared in your questions 3 times; save it?" in retriever.last_provenance.render()
    assert retriever.accept_suggestion(top)["state"] == "claimed"
    docs = retriever.invoke(QUESTION)
    assert [d.metadata["stage"] for d in docs if d.metadata["document_id"] == top] == ["personal"]
    assert retriever.last_report["personal"]["mode"].startswith("keyword (no query embedding")
    sources = {source["document_id"]: source for source in retriever.last_provenance.to_dict()["sources"]}
    assert (sources[top]["from"], sources[top]["fetch_count"]) == ("personal", 4)
    assert retriever.thumbs_up(top)["state"] == "claimed"
    assert retriever.force_pin(top)["state"] == "pinned"
    assert next((r["document_id"], r["state"]) for r in retriever.personal_base()) == (top, "pinned")
    assert retriever.force_remove(top)["state"] == "global"


def test_a_retriever_without_a_profile_records_nothing_and_has_no_actions(kdb):
    retriever = lc.ExocortexRetriever(reader=Reader(kdb.url("exo_reader")), k=3)
    retriever.invoke(QUESTION)
    assert retriever.last_provenance is None
    with pytest.raises(ValueError, match="no profile"):
        retriever.accept_suggestion(1)


def test_llamaindex_retriever_with_a_profile(kdb):
    who = new_profile(kdb)
    retriever = li.ExocortexRetriever(url=kdb.profile_url(who), k=10, profile=who)
    nodes = retriever.retrieve(QUESTION)
    assert nodes and retriever.last_provenance.to_dict()["profile"] == who
    document = nodes[0].node.metadata["document_id"]
    assert retriever.force_pin(document)["state"] == "pinned"
    nodes = retriever.retrieve(QUESTION)
    assert [n.node.metadata["stage"] for n in nodes if n.node.metadata["document_id"] == document] == [
        "personal"
    ]
    assert f"Provenance (profile {who}):" in retriever.last_provenance.render()


class TestLangChainStandardWithAProfile(RetrieversIntegrationTests):
    """LangChain's standard retriever suite, the retriever recording each call in a user's base."""

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [
        pytest.mark.asyncio,
        pytest.mark.filterwarnings("ignore:The test .* is marked with '@pytest.mark.asyncio' but it is not"),
    ]

    @pytest.fixture(autouse=True)
    def _kdb(self, kdb) -> None:
        self.profile = new_profile(kdb)
        self.url = kdb.profile_url(self.profile)

    @property
    def retriever_constructor(self) -> type[lc.ExocortexRetriever]:
        return lc.ExocortexRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"url": self.url, "k": 3, "profile": self.profile}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION
