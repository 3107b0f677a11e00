"""The LangChain and LlamaIndex retrievers over the example vault, as exo_reader.

One database per module holds the example vault, ingested but not embedded (no models:
the semantic stage is skipped and rerank falls back to the deterministic backend, which
the report says), with Walter Rivera deferred before the ingest. The LangChain retriever
also runs LangChain's standard retriever suite.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import ClassVar

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests
from llama_index.core.schema import NodeWithScore, TextNode
from support.vault import vault_database

from exocortex.client.api import Reader
from exocortex.client.integrations import langchain as lc
from exocortex.client.integrations import llamaindex as li

RENT = "How much is my rent?"


@pytest.fixture(scope="module")
def vault(cfg, template_db) -> Iterator:
    with vault_database(cfg, template_db, "exo_integrations") as db:
        yield db


@pytest.fixture(scope="module")
def reader(vault) -> Reader:
    return Reader(vault.url("exo_reader"))


@pytest.fixture(scope="module")
def charged(vault) -> set[int]:
    with vault.connect("exo_writer") as conn:
        return {
            r[0] for r in conn.execute("select id from exo_private.chunks where charged_subjects <> '{}'")
        }


def semantic_skipped(report: dict) -> bool:
    return "no embeddings stored yet" in json.dumps(report)


# -- LangChain ------------------------------------------------------------------------------


def test_langchain_documents_carry_citations(reader):
    retriever = lc.ExocortexRetriever(reader=reader, k=5)
    docs = retriever.invoke(RENT)
    assert 0 < len(docs) <= 5
    for doc in docs:
        assert isinstance(doc, Document) and doc.page_content
        meta = doc.metadata
        assert meta["citation"] and meta["workspace"] and meta["band"] and meta["path"]
        assert doc.id == f"chunk-{meta['chunk_id']}"
        assert isinstance(meta["written_at"], str | None) and isinstance(meta["document_id"], int)
    assert [d.metadata["rank"] for d in docs] == list(range(1, len(docs) + 1))
    report = retriever.last_report
    assert report is not None and "hints" in report and "degradations" in report
    assert semantic_skipped(report)


def test_langchain_restricts_workspaces(reader):
    retriever = lc.ExocortexRetriever(reader=reader, k=10, workspaces=["technical"])
    docs = retriever.invoke("postgres upgrade")
    assert docs and {d.metadata["workspace"] for d in docs} == {"technical"}
    # a call may override the constructor's options
    docs = retriever.invoke("postgres upgrade", workspaces=["creative"], k=2)
    assert len(docs) <= 2 and {d.metadata["workspace"] for d in docs} <= {"creative"}
    with pytest.raises(TypeError, match="unknown retriever argument"):
        retriever.invoke("postgres upgrade", top_k=3)


def test_langchain_report_hints_a_deferred_subject(reader, charged):
    retriever = lc.ExocortexRetriever(reader=reader, k=10)
    docs = retriever.invoke("grandpa funeral")
    assert charged and not charged & {d.metadata["chunk_id"] for d in docs}
    (hint,) = retriever.last_report["hints"]
    assert hint["subject"] == "Walter Rivera" and hint["chunks"] == len(charged)
    assert "funeral" not in json.dumps(retriever.last_report["hints"]).lower()
    # without the report: the same rows, no last_report
    quiet = lc.ExocortexRetriever(reader=reader, k=10, fetch_report=False)
    assert [d.id for d in quiet.invoke("grandpa funeral")] == [d.id for d in docs]
    assert quiet.last_report is None


def test_a_search_mode_call_is_one_database_call_with_its_report(reader, monkeypatch):
    from exocortex.client import api

    calls = []
    for name in ("search", "search_json", "search_report"):
        real = getattr(api, name)
        monkeypatch.setattr(
            api, name, lambda *a, _real=real, _name=name, **kw: calls.append(_name) or _real(*a, **kw)
        )
    retriever = lc.ExocortexRetriever(reader=reader, k=5)
    docs = retriever.invoke(RENT)
    nodes = li.ExocortexRetriever(reader=reader, k=5).retrieve(RENT)
    assert calls == ["search_json", "search_json"]
    assert [d.metadata["chunk_id"] for d in docs] == [n.node.metadata["chunk_id"] for n in nodes]
    assert retriever.last_report["returned"] == len(docs)
    assert all(len(d.metadata["written_at"]) == 10 for d in docs if d.metadata["written_at"])


def test_langchain_packet_mode_respects_the_budget(reader):
    retriever = lc.ExocortexRetriever(reader=reader, mode="packet", token_budget=300)
    (doc,) = retriever.invoke("grandpa funeral")
    assert doc.metadata["tokens"] <= 300 and len(doc.page_content) <= 4 * 300
    assert doc.metadata["hints"][0]["subject"] == "Walter Rivera"
    assert "Walter Rivera" in doc.page_content
    assert retriever.last_report["hints"] == doc.metadata["hints"]
    (big,) = retriever.invoke(RENT, token_budget=2000)
    assert doc.metadata["tokens"] < big.metadata["tokens"] <= 2000
    assert all(used["citation"] in big.page_content for used in big.metadata["used"])


def test_langchain_async(reader):
    retriever = lc.ExocortexRetriever(reader=reader, k=3)

    async def both():
        return await asyncio.gather(retriever.ainvoke(RENT), retriever.ainvoke(RENT, k=1))

    three, one = asyncio.run(both())
    assert len(three) == 3 and len(one) == 1
    assert three[0].id == one[0].id
    assert retriever.last_report is not None


class TestLangChainStandard(RetrieversIntegrationTests):
    """LangChain's standard retriever suite (k in the constructor and in invoke, async)."""

    # pytest-asyncio runs in strict mode here: the suite's one async test needs the mark,
    # which pytest-asyncio then warns about on the sync ones.
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [
        pytest.mark.asyncio,
        pytest.mark.filterwarnings("ignore:The test .* is marked with '@pytest.mark.asyncio' but it is not"),
    ]

    @pytest.fixture(autouse=True)
    def _vault(self, vault) -> None:
        self.url = vault.url("exo_reader")

    @property
    def retriever_constructor(self) -> type[lc.ExocortexRetriever]:
        return lc.ExocortexRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"url": self.url, "k": 3}

    @property
    def retriever_query_example(self) -> str:
        return "postgres upgrade runbook"


# -- LlamaIndex -----------------------------------------------------------------------------


def test_llamaindex_nodes_carry_citations(reader):
    retriever = li.ExocortexRetriever(reader, k=5)
    nodes = retriever.retrieve(RENT)
    assert 0 < len(nodes) <= 5
    for found in nodes:
        assert isinstance(found, NodeWithScore) and isinstance(found.node, TextNode)
        meta = found.node.metadata
        assert found.node.node_id == f"chunk-{meta['chunk_id']}"
        assert found.score == meta["score"]
        assert meta["citation"] and meta["workspace"] and meta["band"] and meta["path"]
        llm_text = found.node.get_content(metadata_mode="llm")
        assert meta["citation"] in llm_text and "chunk_id" not in llm_text
        assert found.node.get_content(metadata_mode="embed") == found.node.text
    assert semantic_skipped(retriever.last_report)


def test_llamaindex_workspaces_hints_packet_and_async(reader, charged):
    restricted = li.ExocortexRetriever(reader, k=10, workspaces=["technical"])
    nodes = restricted.retrieve("postgres upgrade")
    assert nodes and {n.node.metadata["workspace"] for n in nodes} == {"technical"}

    retriever = li.ExocortexRetriever(url=reader.url, k=10)
    nodes = asyncio.run(retriever.aretrieve("grandpa funeral"))
    assert not charged & {n.node.metadata["chunk_id"] for n in nodes}
    assert [h["subject"] for h in retriever.last_report["hints"]] == ["Walter Rivera"]

    packet = li.ExocortexRetriever(reader, mode="packet", token_budget=250)
    (found,) = packet.retrieve("grandpa funeral")
    assert found.node.metadata["tokens"] <= 250 and "Walter Rivera" in found.node.text
    assert packet.last_report["hints"] == found.node.metadata["hints"]


# -- packaging ------------------------------------------------------------------------------


def test_core_never_imports_a_framework():
    code = (
        "import sys, exocortex, exocortex.client.api, exocortex.cli, exocortex.client.integrations, "
        "exocortex.client.integrations.common\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('langchain_core', 'llama_index')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "library", "extra"),
    [("langchain", "langchain_core", "langchain"), ("llamaindex", "llama_index", "llamaindex")],
)
def test_a_missing_framework_names_the_extra(module, library, extra):
    code = (
        f"import sys; sys.modules[{library!r}] = None\n"
        f"try:\n    import exocortex.client.integrations.{module}\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f"pip install 'exocortex[{extra}]'" in out.stdout


def test_bad_options_fail_early():
    with pytest.raises(ValueError, match="reader or url"):
        li.ExocortexRetriever(Reader("postgresql:///x"), url="postgresql:///x")
    with pytest.raises(ValueError, match="mode must be"):
        li.ExocortexRetriever(url="postgresql:///x", mode="chat")
    with pytest.raises(ValueError):
        lc.ExocortexRetriever(url="postgresql:///x", mode="chat")
