"""What both retrievers share, free of any framework: the options, the calls, the metadata.

A retriever call is one exocortex.client.api call: in "search" mode exo.search_json returns the
rows and the report of one retrieval, in "packet" mode exo.context_packet_json returns the
packet and its report together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from psycopg.types.json import Jsonb

from exocortex import config
from exocortex.client import api, search_options

Mode = Literal["search", "packet"]

#: The search options a retriever offers (client/search_options.py): all but a query vector, which
#: the database computes.
SEARCH_OPTIONS = tuple(name for name in search_options.OPTIONS if name != "query_embedding")
#: Options a single call may override (LangChain: invoke(query, k=3)).
OVERRIDABLE = frozenset({*SEARCH_OPTIONS, "fetch_report"})
# Keyword arguments frameworks pass along that are not ours to act on.
IGNORED = frozenset({"verbose"})


def missing(library: str, extra: str, error: ImportError) -> ImportError:
    """The ImportError to raise when a framework is not installed."""
    message = (
        f"exocortex.client.integrations.{extra} needs {library}, which is not installed: "
        f"pip install 'exocortex[{extra}]'"
    )
    return ImportError(message, name=error.name)


def make_reader(reader: api.Reader | None, url: str | None, profile: str | None = None) -> api.Reader:
    """The Reader a retriever calls: the one given; else one of url (the login role of `profile`
    when there is one); else the configuration's (api.Reader.from_config), profile's role when
    there is one. A profile is the session's login role, never an argument (docs/security.md)."""
    if reader is not None and url is not None:
        raise ValueError("give reader or url, not both")
    if reader is not None:
        if profile is not None and reader.profile != profile:
            raise ValueError(
                f"the reader given is not profile {profile!r}'s: give Reader.for_profile({profile!r})"
            )
        return reader
    if url is not None:
        return api.Reader(url, profile=profile)
    return api.Reader.from_config(profile=profile)


def configured_profile(profile: str | None) -> str | None:
    """The profile given, else the configuration's (EXO_PROFILE), else None (nothing recorded)."""
    return profile if profile is not None else config.load().profile


@dataclass(frozen=True)
class Options:
    """The arguments of one call."""

    mode: Mode = "search"
    k: int = 5
    workspaces: Sequence[str] | None = None
    per_workspace: int = search_options.PER_WORKSPACE.default
    open_archive: bool | None = None
    bridge: Sequence[str] = ()
    as_of: datetime | None = None
    token_budget: int = search_options.TOKEN_BUDGET.default
    fetch_report: bool = True
    profile: str | None = None
    """The user whose personal base is searched first and records each call (exo user add NAME)."""

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
    if options.mode not in ("search", "packet"):
        raise ValueError(f"mode must be 'search' or 'packet', got {options.mode!r}")
    function = "search_json" if options.mode == "search" else "context_packet_json"
    given = {
        o.name: getattr(options, o.name)
        for o in search_options.FUNCTIONS[function]
        if o.name in SEARCH_OPTIONS
    }
    if options.mode == "packet":
        packet = api.context_packet(reader, query, **given)
        return Retrieved([], packet, packet.get("report"))
    found = api.search_json(reader, query, **given)
    rows = [row | {"written_at": _date(row.get("written_at"))} for row in found["results"]]
    return Retrieved(rows, None, found["report"] if options.fetch_report or options.profile else None)


@dataclass(frozen=True)
class Provenance:
    """The provenance block of a call with a profile (report.provenance): each source, from the
    user's base or global search, its chunks, state, fetch count and any pending suggestion."""

    block: dict[str, Any]

    def render(self) -> str:
        """The block as text, as exo search --profile prints it."""
        return self.block["text"]

    def to_dict(self) -> dict[str, Any]:
        """{profile, sources: [{document_id, title, path, from, chunks, state, fetch_count, suggestion}], text}."""
        return dict(self.block)


def provenance(report: Mapping[str, Any] | None) -> Provenance | None:
    block = (report or {}).get("provenance")
    return Provenance(dict(block)) if block else None


class PersonalBase:
    """The user actions of a retriever with a profile, through the reader's one recording path
    (a mixin: the retriever has `reader` and `options`)."""

    def _act(self, action: str, document_id: int) -> dict[str, Any]:
        if self.options.profile is None:  # type: ignore[attr-defined]
            raise ValueError("this retriever has no profile: give profile=NAME (exo user add NAME)")
        return api.kb_act(self.reader, action, document_id)  # type: ignore[attr-defined]

    def accept_suggestion(self, document_id: int) -> dict[str, Any]:
        """Save a suggested document to the profile's base."""
        return self._act("accept_suggestion", document_id)

    def decline_suggestion(self, document_id: int) -> dict[str, Any]:
        """Decline a suggestion: suggested again only after twice as many fetches."""
        return self._act("decline_suggestion", document_id)

    def thumbs_up(self, document_id: int) -> dict[str, Any]:
        return self._act("thumbs_up", document_id)

    def thumbs_down(self, document_id: int) -> dict[str, Any]:
        return self._act("thumbs_down", document_id)

    def force_pin(self, document_id: int) -> dict[str, Any]:
        return self._act("force_pin", document_id)

    def force_remove(self, document_id: int) -> dict[str, Any]:
        return self._act("force_remove", document_id)

    def personal_base(self) -> list[dict[str, Any]]:
        """exo.kb_items: the profile's base."""
        if self.options.profile is None:  # type: ignore[attr-defined]
            raise ValueError("this retriever has no profile: give profile=NAME (exo user add NAME)")
        return api.kb_items(self.reader)  # type: ignore[attr-defined]


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


# -- the lifecycle retriever over a user's own retriever ------------------------------------


def outside_key(metadata: Mapping[str, Any], id_key: str, text: str) -> str:
    """The key of a wrapped retriever's document: the value of its id_key metadata, as text."""
    value = metadata.get(id_key)
    if value is None or str(value) == "":
        excerpt = " ".join(text.split())[:60]
        raise ValueError(
            f"a document the wrapped retriever returned has no metadata {id_key!r} to identify it "
            f"(its text begins {excerpt!r}; its metadata keys: {sorted(metadata)}): give "
            f"id_key= the metadata key that names each document"
        )
    return str(value)


def outside_title(metadata: Mapping[str, Any], title_key: str | None) -> str | None:
    """A wrapped retriever's document's title: its title_key metadata when that is text."""
    value = metadata.get(title_key) if title_key else None
    return value if isinstance(value, str) and value else None


def outside_retrieve(
    reader: api.Reader, query: str, returned: Sequence[Mapping[str, Any]], k: int
) -> dict[str, Any]:
    """exo.kb_outside_retrieve: the personal stage, the merge with `returned` ([{key, title, text}]
    as the wrapped retriever gave them), the record, and the provenance block, in one call."""
    # PostgreSQL text holds no NUL character (jsonb refuses \u0000): it goes before sending.
    clean = [{name: _no_nul(value) for name, value in r.items()} for r in returned]
    args = {"query": _no_nul(query), "returned": Jsonb(clean), "k": int(k)}
    return api.call(reader, "kb_outside_retrieve", args, "value", read_write=True)


def _no_nul(value: Any) -> Any:
    return value.replace("\x00", "") if isinstance(value, str) else value


class OutsideBase(PersonalBase):
    """The user actions of a lifecycle retriever: the same methods, each taking a document's key
    (the value of its id_key metadata) instead of an exocortex document id."""

    def _act(self, action: str, document_id: Any) -> dict[str, Any]:
        args = {"action": action, "key": str(document_id)}
        return api.call(self.reader, "kb_outside_act", args, "value", read_write=True)  # type: ignore[attr-defined]

    def personal_base(self) -> list[dict[str, Any]]:
        """exo.kb_outside_items: the outside documents of the profile's base."""
        return api.call(self.reader, "kb_outside_items", {}, "rows")  # type: ignore[attr-defined]
