"""What both retrievers share, free of any framework: the options, the calls, the metadata.

A retriever call is one exocortex.api call: in "search" mode exo.search_json returns the
rows and the report of one retrieval, in "packet" mode exo.context_packet_json returns the
packet and its report together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from exocortex import api

Mode = Literal["search", "packet"]

# Options a single call may override (LangChain: invoke(query, k=3)).
OVERRIDABLE = frozenset(
    {"k", "workspaces", "per_workspace", "open_archive", "bridge", "as_of", "token_budget", "fetch_report"}
)
# Keyword arguments frameworks pass along that are not ours to act on.
IGNORED = frozenset({"verbose"})


def missing(library: str, extra: str, error: ImportError) -> ImportError:
    """The ImportError to raise when a framework is not installed."""
    message = (
        f"exocortex.integrations.{extra} needs {library}, which is not installed: "
        f"pip install 'exocortex[{extra}]'"
    )
    return ImportError(message, name=error.name)


def make_reader(reader: api.Reader | None, url: str | None) -> api.Reader:
    if reader is not None and url is not None:
        raise ValueError("give reader or url, not both")
    if reader is not None:
        return reader
    return api.Reader(url) if url is not None else api.Reader.from_config()


@dataclass(frozen=True)
class Options:
    """The arguments of one call."""

    mode: Mode = "search"
    k: int = 5
    workspaces: Sequence[str] | None = None
    per_workspace: int = 30
    open_archive: bool | None = None
    bridge: Sequence[str] = ()
    as_of: datetime | None = None
    token_budget: int = 4000
    fetch_report: bool = True

    def override(self, overrides: Mapping[str, Any]) -> Options:
        unknown = set(overrides) - OVERRIDABLE - IGNORED
        if unknown:
            raise TypeError(f"unknown retriever argument(s): {', '.join(sorted(unknown))}")
        values = {key: value for key, value in overrides.items() if key in OVERRIDABLE}
        return Options(**(self.__dict__ | values)) if values else self


@dataclass(frozen=True)
class Retrieved:
    """Rows (search mode) or the packet (packet mode), and the report (None if not fetched)."""

    rows: list[dict[str, Any]]
    packet: dict[str, Any] | None
    report: dict[str, Any] | None


def retrieve(reader: api.Reader, query: str, options: Options) -> Retrieved:
    common = {
        "workspaces": options.workspaces,
        "open_archive": options.open_archive,
        "bridge": tuple(options.bridge),
        "as_of": options.as_of,
    }
    if options.mode == "packet":
        packet = api.context_packet(reader, query, token_budget=options.token_budget, **common)
        return Retrieved([], packet, packet.get("report"))
    if options.mode != "search":
        raise ValueError(f"mode must be 'search' or 'packet', got {options.mode!r}")
    common |= {"k": options.k, "per_workspace": options.per_workspace}
    found = api.search_json(reader, query, **common)
    rows = [row | {"written_at": _date(row.get("written_at"))} for row in found["results"]]
    return Retrieved(rows, None, found["report"] if options.fetch_report else None)


def _date(written_at: str | None) -> date | None:
    """A search_json row's written_at (ISO text) as exo.search's date."""
    return date.fromisoformat(written_at) if written_at is not None else None


def row_metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    """A search row's metadata for a framework document: everything but the body."""
    written_at = row.get("written_at")
    return {
        "citation": row["citation"],
        "workspace": row["workspace"],
        "band": row["band"],
        "path": row["path"],
        "title": row["title"],
        "written_at": written_at.isoformat() if written_at is not None else None,
        "stage": row["stage"],
        "score": row["score"],
        "rank": row["rank"],
        "chunk_id": row["chunk_id"],
        "document_id": row["document_id"],
    }


def packet_metadata(packet: Mapping[str, Any]) -> dict[str, Any]:
    return {"tokens": packet["tokens"], "used": packet["used"], "hints": packet["hints"]}
