"""A LangChain retriever over exo.search and exo.context_packet (pip install 'exocortex[langchain]').

    from exocortex.client.integrations.langchain import ExocortexRetriever

    retriever = ExocortexRetriever(k=5)               # EXO_READER_URL, or the local runtime
    docs = retriever.invoke("How much is my rent?")   # or invoke(query, k=3, workspaces=[...])
    retriever.last_report["hints"]                     # deferred subjects withheld, and how to ask

mode "search" gives one Document per exo.search row (page_content the chunk, metadata its
citation, workspace, band, path, title, written_at, stage, score, rank, chunk_id,
document_id); mode "packet" gives one Document holding exo.context_packet's text (metadata
tokens, used, hints). `last_report` is the search report of the latest call, from the same
single call (exo.search_json in search mode, exo.context_packet_json in packet mode);
fetch_report=False leaves last_report None.

With profile="NAME" (exo user add NAME; default: EXO_PROFILE, else none) the user's saved documents are searched first (stage
personal), every call is recorded in their base, `last_provenance.render()` / `.to_dict()`
give the provenance block of the latest call, and accept_suggestion(document_id),
decline_suggestion, thumbs_up, thumbs_down, force_pin, force_remove and personal_base() act
on it.

LifecycleRetriever wraps any LangChain retriever (the user's own vector store) as the global
stage of a personal base kept in exocortex, the documents identified by a metadata key:

    from exocortex.client.integrations.langchain import LifecycleRetriever

    retriever = LifecycleRetriever(retriever=my_store.as_retriever(), id_key="source", profile="me")
    docs = retriever.invoke("How do liveness probes work?")
    print(retriever.last_provenance.render())          # "... has appeared in your questions 3 times; save it?"
    retriever.accept_suggestion("k8s/probes.md")        # by the document's id_key value

Each call runs the wrapped retriever, then one exo.kb_outside_retrieve call: the user's saved
(claimed, pinned) outside documents close to the question come first (by cosine similarity of
their kept passages' vectors, else by shared words: metadata kb_from "personal", kb_match
"similarity" or "keyword", with id_key and title_key), then the wrapped retriever's documents
(kb_from "global"), the first k; what was returned is recorded in the user's base.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from exocortex.client import api
from exocortex.client.integrations import common

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, PrivateAttr, model_validator
except ImportError as error:  # pragma: no cover - exercised by a test that hides the library
    raise common.missing("langchain-core", "langchain", error) from error

__all__ = ["ExocortexRetriever", "LifecycleRetriever"]


class ExocortexRetriever(common.PersonalBase, BaseRetriever):
    """Exocortex search (or its context packet) as a LangChain retriever, read-only."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    reader: api.Reader | None = None
    """How to reach the database; built from url, else from the configuration (EXO_READER_URL)."""
    url: str | None = None
    mode: common.Mode = "search"
    k: int = common.Options.k
    workspaces: list[str] | None = None
    per_workspace: int = common.Options.per_workspace
    open_archive: bool | None = None
    bridge: list[str] = Field(default_factory=list)
    as_of: datetime | None = None
    token_budget: int = common.Options.token_budget
    """Packet mode only: the packet's size in tokens."""
    fetch_report: bool = True
    """Search mode: keep the report of each call in last_report (it comes with the rows)."""
    profile: str | None = None
    """A user (exo user add NAME): their saved documents first, each call recorded in their base."""

    _last_report: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolve_reader(self) -> ExocortexRetriever:
        self.profile = common.configured_profile(self.profile)
        self.reader = common.make_reader(self.reader, self.url, self.profile)
        self.url = None
        return self

    @property
    def last_report(self) -> dict[str, Any] | None:
        """The search report of the latest call (hints, degradations, archive, rerank, timings_ms)."""
        return self._last_report

    @property
    def last_provenance(self) -> common.Provenance | None:
        """The provenance block of the latest call with a profile (render(), to_dict())."""
        return common.provenance(self._last_report)

    @property
    def options(self) -> common.Options:
        return self._options()

    def _options(self) -> common.Options:
        return common.Options(
            mode=self.mode,
            k=self.k,
            workspaces=self.workspaces,
            per_workspace=self.per_workspace,
            open_archive=self.open_archive,
            bridge=tuple(self.bridge),
            as_of=self.as_of,
            token_budget=self.token_budget,
            fetch_report=self.fetch_report,
            profile=self.profile,
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        assert self.reader is not None
        found = common.retrieve(self.reader, query, self._options().override(overrides))
        self._last_report = found.report
        if found.packet is not None:
            return [
                Document(page_content=found.packet["text"], metadata=common.packet_metadata(found.packet))
            ]
        return [
            Document(
                page_content=row["body"], metadata=common.row_metadata(row), id=f"chunk-{row['chunk_id']}"
            )
            for row in found.rows
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **overrides
        )


class LifecycleRetriever(common.OutsideBase, BaseRetriever):
    """Any LangChain retriever as the global stage of a personal base kept in exocortex."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: BaseRetriever
    """The user's own retriever (a vector store's as_retriever(), ...): the global stage."""
    id_key: str
    """The metadata key whose value identifies a document (e.g. "source"): its key in the base, as
    text (a document from the base carries it as text, whatever type the wrapped retriever gave)."""
    title_key: str | None = "title"
    """The metadata key of a document's title, if it has one (shown in provenance and suggestions)."""
    profile: str | None = None
    """The user (exo user add NAME); default: EXO_PROFILE."""
    k: int = 5
    """At most this many documents a call: the base's first, then the wrapped retriever's."""
    reader: api.Reader | None = None
    url: str | None = None

    _last_result: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolve(self) -> LifecycleRetriever:
        self.profile = common.configured_profile(self.profile)
        if self.profile is None:
            raise ValueError("a LifecycleRetriever needs a profile: give profile=NAME or set EXO_PROFILE")
        self.reader = common.make_reader(self.reader, self.url, self.profile)
        self.url = None
        return self

    @property
    def options(self) -> common.Options:
        return common.Options(k=self.k, profile=self.profile)

    @property
    def last_report(self) -> dict[str, Any] | None:
        """The report of the latest call: personal {profile, mode, checked, hits, recorded}."""
        return self._last_result["report"] if self._last_result else None

    @property
    def last_provenance(self) -> common.Provenance | None:
        """The provenance block of the latest call (render(), to_dict())."""
        return common.Provenance(self._last_result["provenance"]) if self._last_result else None

    def _k(self, overrides: dict[str, Any]) -> int:
        unknown = set(overrides) - {"k"} - common.IGNORED
        if unknown:
            raise TypeError(f"unknown retriever argument(s): {', '.join(sorted(unknown))}")
        return int(overrides.get("k", self.k))

    def _merge(self, query: str, found: list[Document], k: int) -> list[Document]:
        """Record the call (exo.kb_outside_retrieve) and lay out the documents in its order."""
        returned = [
            {
                "key": common.outside_key(d.metadata, self.id_key, d.page_content),
                "title": common.outside_title(d.metadata, self.title_key),
                "text": d.page_content,
            }
            for d in found
        ]
        assert self.reader is not None
        result = common.outside_retrieve(self.reader, query, returned, k)
        self._last_result = result
        docs = []
        for r in result["results"]:
            if r["from"] == "personal":
                metadata = {
                    self.id_key: r["key"],
                    "kb_from": "personal",
                    "kb_score": r["score"],
                    "kb_match": r["match"],
                }
                if self.title_key and r["title"] is not None:
                    metadata[self.title_key] = r["title"]
                docs.append(Document(page_content=r["text"], metadata=metadata))
            else:
                doc = found[r["index"]]
                docs.append(doc.model_copy(update={"metadata": doc.metadata | {"kb_from": "global"}}))
        return docs

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        k = self._k(overrides)
        found = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        return self._merge(query, found, k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        k = self._k(overrides)
        found = await self.retriever.ainvoke(query, config={"callbacks": run_manager.get_child()})
        return await asyncio.to_thread(self._merge, query, found, k)
