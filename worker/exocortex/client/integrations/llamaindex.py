"""A LlamaIndex retriever over exo.search and exo.context_packet (pip install 'exocortex[llamaindex]').

    from exocortex.client.integrations.llamaindex import ExocortexRetriever

    retriever = ExocortexRetriever(k=5)                # EXO_READER_URL, or the local runtime
    nodes = retriever.retrieve("How much is my rent?")
    retriever.last_report["hints"]                      # deferred subjects withheld, and how to ask

mode "search" gives one NodeWithScore per exo.search row: TextNode(text=the chunk,
id_="chunk-<id>", metadata citation, workspace, band, path, title, written_at, stage, score,
rank, chunk_id, document_id) and the row's score. The LLM sees the citation, workspace,
band, path, title and date with the text; the embedding text is the chunk alone. mode
"packet" gives one node holding exo.context_packet's text (metadata tokens, used, hints).
`last_report` is the search report of the latest call, from the same single call
(exo.search_json in search mode, exo.context_packet_json in packet mode); fetch_report=False
leaves last_report None. profile="NAME": as the LangChain retriever (the personal stage,
recording, last_provenance and the user actions; default: EXO_PROFILE).

LifecycleRetriever wraps any LlamaIndex retriever (the user's own index) as the global stage of
a personal base kept in exocortex, as the LangChain one does: LifecycleRetriever(
index.as_retriever(), id_key="file_name", profile="me"); the base's nodes first (metadata
kb_from "personal"), then the wrapped retriever's (kb_from "global"), the first k.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from exocortex.client import api
from exocortex.client.integrations import common

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as error:  # pragma: no cover - exercised by a test that hides the library
    raise common.missing("llama-index-core", "llamaindex", error) from error

__all__ = ["ExocortexRetriever", "LifecycleRetriever"]

# Metadata the LLM does not need beside the text; none of it belongs in an embedding.
_NOT_FOR_LLM = ["stage", "score", "rank", "chunk_id", "document_id", "tokens", "used", "hints"]


class ExocortexRetriever(common.PersonalBase, BaseRetriever):
    """Exocortex search (or its context packet) as a LlamaIndex retriever, read-only."""

    def __init__(
        self,
        reader: api.Reader | None = None,
        *,
        url: str | None = None,
        mode: common.Mode = "search",
        k: int = common.Options.k,
        workspaces: Sequence[str] | None = None,
        per_workspace: int = common.Options.per_workspace,
        open_archive: bool | None = None,
        bridge: Sequence[str] = (),
        as_of: datetime | None = None,
        token_budget: int = common.Options.token_budget,
        fetch_report: bool = True,
        profile: str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if mode not in ("search", "packet"):
            raise ValueError(f"mode must be 'search' or 'packet', got {mode!r}")
        profile = common.configured_profile(profile)
        self.reader = common.make_reader(reader, url, profile)
        self.options = common.Options(
            mode=mode,
            k=k,
            workspaces=tuple(workspaces) if workspaces is not None else None,
            per_workspace=per_workspace,
            open_archive=open_archive,
            bridge=tuple(bridge),
            as_of=as_of,
            token_budget=token_budget,
            fetch_report=fetch_report,
            profile=profile,
        )
        self.last_report: dict[str, Any] | None = None
        """The search report of the latest call (hints, degradations, archive, rerank, timings_ms)."""
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def last_provenance(self) -> common.Provenance | None:
        """The provenance block of the latest call with a profile (render(), to_dict())."""
        return common.provenance(self.last_report)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = common.retrieve(self.reader, query_bundle.query_str, self.options)
        self.last_report = found.report
        if found.packet is not None:
            digest = hashlib.sha256(found.packet["text"].encode()).hexdigest()[:16]
            node = TextNode(
                text=found.packet["text"],
                id_=f"packet-{digest}",
                metadata=common.packet_metadata(found.packet),
                excluded_llm_metadata_keys=_NOT_FOR_LLM,
                excluded_embed_metadata_keys=list(common.packet_metadata(found.packet)),
            )
            return [NodeWithScore(node=node, score=None)]
        nodes = []
        for row in found.rows:
            metadata = common.row_metadata(row)
            node = TextNode(
                text=row["body"],
                id_=f"chunk-{row['chunk_id']}",
                metadata=metadata,
                excluded_llm_metadata_keys=_NOT_FOR_LLM,
                excluded_embed_metadata_keys=list(metadata),
            )
            nodes.append(NodeWithScore(node=node, score=row["score"]))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


class LifecycleRetriever(common.OutsideBase, BaseRetriever):
    """Any LlamaIndex retriever as the global stage of a personal base kept in exocortex."""

    def __init__(
        self,
        retriever: BaseRetriever,
        *,
        id_key: str,
        title_key: str | None = "title",
        profile: str | None = None,
        k: int = 5,
        reader: api.Reader | None = None,
        url: str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.retriever = retriever
        self.id_key = id_key
        self.title_key = title_key
        profile = common.configured_profile(profile)
        if profile is None:
            raise ValueError("a LifecycleRetriever needs a profile: give profile=NAME or set EXO_PROFILE")
        self.reader = common.make_reader(reader, url, profile)
        self.options = common.Options(k=k, profile=profile)
        self.last_result: dict[str, Any] | None = None
        """exo.kb_outside_retrieve's answer of the latest call: results, report, provenance."""
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def last_provenance(self) -> common.Provenance | None:
        """The provenance block of the latest call (render(), to_dict())."""
        return common.Provenance(self.last_result["provenance"]) if self.last_result else None

    def _merge(self, query: str, found: list[NodeWithScore]) -> list[NodeWithScore]:
        """Record the call (exo.kb_outside_retrieve) and lay out the nodes in its order."""
        returned = [
            {
                "key": common.outside_key(n.node.metadata, self.id_key, n.node.get_content()),
                "title": common.outside_title(n.node.metadata, self.title_key),
                "text": n.node.get_content(),
            }
            for n in found
        ]
        result = common.outside_retrieve(self.reader, query, returned, self.options.k)
        self.last_result = result
        nodes = []
        for r in result["results"]:
            if r["from"] == "personal":
                metadata = {self.id_key: r["key"], "kb_from": "personal", "kb_match": r["match"]}
                if self.title_key and r["title"] is not None:
                    metadata[self.title_key] = r["title"]
                digest = hashlib.sha256(f"{r['key']}\0{r['text']}".encode()).hexdigest()[:16]
                node = TextNode(text=r["text"], id_=f"kb-{digest}", metadata=metadata)
                nodes.append(NodeWithScore(node=node, score=r["score"]))
            else:
                hit = found[r["index"]]
                node = hit.node.model_copy(update={"metadata": hit.node.metadata | {"kb_from": "global"}})
                nodes.append(NodeWithScore(node=node, score=hit.score))
        return nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._merge(query_bundle.query_str, self.retriever.retrieve(query_bundle))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = await self.retriever.aretrieve(query_bundle)
        return await asyncio.to_thread(self._merge, query_bundle.query_str, found)
