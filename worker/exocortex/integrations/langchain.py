"""A LangChain retriever over exo.search and exo.context_packet (pip install 'exocortex[langchain]').

    from exocortex.integrations.langchain import ExocortexRetriever

    retriever = ExocortexRetriever(k=5)               # EXO_READER_URL, or the local runtime
    docs = retriever.invoke("How much is my rent?")   # or invoke(query, k=3, workspaces=[...])
    retriever.last_report["hints"]                     # deferred subjects withheld, and how to ask

mode "search" gives one Document per exo.search row (page_content the chunk, metadata its
citation, workspace, band, path, title, written_at, stage, score, rank, chunk_id,
document_id); mode "packet" gives one Document holding exo.context_packet's text (metadata
tokens, used, hints). `last_report` is the search report of the latest call, from the same
single call (exo.search_json in search mode, exo.context_packet_json in packet mode);
fetch_report=False leaves last_report None.

With profile="NAME" (exo user add NAME) the user's saved documents are searched first (stage
personal), every call is recorded in their base, `last_provenance.render()` / `.to_dict()`
give the provenance block of the latest call, and accept_suggestion(document_id),
decline_suggestion, thumbs_up, thumbs_down, force_pin, force_remove and personal_base() act
on it.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from exocortex import api
from exocortex.integrations import _common

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, PrivateAttr, model_validator
except ImportError as error:  # pragma: no cover - exercised by a test that hides the library
    raise _common.missing("langchain-core", "langchain", error) from error

__all__ = ["ExocortexRetriever"]


class ExocortexRetriever(_common.PersonalBase, BaseRetriever):
    """Exocortex search (or its context packet) as a LangChain retriever, read-only."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    reader: api.Reader | None = None
    """How to reach the database; built from url, else from the configuration (EXO_READER_URL)."""
    url: str | None = None
    mode: _common.Mode = "search"
    k: int = _common.Options.k
    workspaces: list[str] | None = None
    per_workspace: int = _common.Options.per_workspace
    open_archive: bool | None = None
    bridge: list[str] = Field(default_factory=list)
    as_of: datetime | None = None
    token_budget: int = _common.Options.token_budget
    """Packet mode only: the packet's size in tokens."""
    fetch_report: bool = True
    """Search mode: keep the report of each call in last_report (it comes with the rows)."""
    profile: str | None = None
    """A user (exo user add NAME): their saved documents first, each call recorded in their base."""

    _last_report: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolve_reader(self) -> ExocortexRetriever:
        self.reader = _common.make_reader(self.reader, self.url)
        self.url = None
        return self

    @property
    def last_report(self) -> dict[str, Any] | None:
        """The search report of the latest call (hints, degradations, archive, rerank, timings_ms)."""
        return self._last_report

    @property
    def last_provenance(self) -> _common.Provenance | None:
        """The provenance block of the latest call with a profile (render(), to_dict())."""
        return _common.provenance(self._last_report)

    @property
    def options(self) -> _common.Options:
        return self._options()

    def _options(self) -> _common.Options:
        return _common.Options(
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
        found = _common.retrieve(self.reader, query, self._options().override(overrides))
        self._last_report = found.report
        if found.packet is not None:
            return [
                Document(page_content=found.packet["text"], metadata=_common.packet_metadata(found.packet))
            ]
        return [
            Document(
                page_content=row["body"], metadata=_common.row_metadata(row), id=f"chunk-{row['chunk_id']}"
            )
            for row in found.rows
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **overrides
        )
