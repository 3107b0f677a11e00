"""The exo SQL API from Python: what the query CLI, the MCP server and the retrievers call.

Every function here is one call of one `exo` SQL function as the read-only role,
on a connection of its own (so a database restart fails one call, not a session),
with `default_transaction_read_only` on and a statement timeout. There is no logic
here that the SQL function does not have: psql users get the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from exocortex import config
from exocortex.db import role_url

DEFAULT_TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class Reader:
    """Where and how to reach the exo API read-only."""

    url: str = field(repr=False)  # it holds the password
    statement_timeout_ms: int = DEFAULT_TIMEOUT_MS
    application_name: str = "exo-api"

    @classmethod
    def from_config(cls, cfg: config.Config | None = None, **kw: Any) -> Reader:
        """EXO_READER_URL, else exo_reader on the local runtime (password from its secrets file)."""
        cfg = cfg or config.load()
        return cls(cfg.reader_url or role_url(cfg, "exo_reader"), **kw)

    def connect(self) -> psycopg.Connection:
        options = f"-c default_transaction_read_only=on -c statement_timeout={int(self.statement_timeout_ms)}"
        return psycopg.connect(
            self.url,
            application_name=self.application_name,
            options=options,
            autocommit=True,
            row_factory=dict_row,
        )


def _call(reader: Reader, function: str, args: dict[str, Any], shape: str) -> Any:
    """select exo.<function>(name => value, ...): rows, or the one value (shape "rows" | "value")."""
    named = [sql.SQL("{} => {}").format(sql.Identifier(k), sql.Placeholder()) for k in args]
    call = sql.SQL("exo.{}({})").format(sql.Identifier(function), sql.SQL(", ").join(named))
    statement = sql.SQL("select * from {}" if shape == "rows" else "select {} as value").format(call)
    with reader.connect() as conn:
        rows = conn.execute(statement, list(args.values())).fetchall()
    return rows if shape == "rows" else rows[0]["value"]


def _search_args(
    workspaces: Sequence[str] | None,
    open_archive: bool | None,
    bridge: Sequence[str],
    as_of: datetime | None,
    query_embedding: Sequence[float] | None,
) -> dict[str, Any]:
    args: dict[str, Any] = {"open_archive": open_archive, "bridge": list(bridge)}
    if workspaces is not None:
        args["workspaces"] = list(workspaces)
    if as_of is not None:
        args["as_of"] = as_of
    if query_embedding is not None:
        args["query_embedding"] = [float(x) for x in query_embedding]
    return args


def search(
    reader: Reader,
    query: str,
    *,
    workspaces: Sequence[str] | None = None,
    k: int = 25,
    per_workspace: int = 30,
    open_archive: bool | None = None,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
    query_embedding: Sequence[float] | None = None,
) -> list[dict[str, Any]]:
    """exo.search: ranked chunks with citation, workspace, band and the stage that found each."""
    args = {"query": query, "k": k, "per_workspace": per_workspace}
    args |= _search_args(workspaces, open_archive, bridge, as_of, query_embedding)
    return _call(reader, "search", args, "rows")


def search_report(
    reader: Reader,
    query: str,
    *,
    workspaces: Sequence[str] | None = None,
    k: int = 25,
    per_workspace: int = 30,
    open_archive: bool | None = None,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
    query_embedding: Sequence[float] | None = None,
) -> dict[str, Any]:
    """exo.search_report: stages, bands, hints, degradations and timings of the same search."""
    args = {"query": query, "k": k, "per_workspace": per_workspace}
    args |= _search_args(workspaces, open_archive, bridge, as_of, query_embedding)
    return _call(reader, "search_report", args, "value")


def context_packet(
    reader: Reader,
    query: str,
    *,
    token_budget: int = 4000,
    workspaces: Sequence[str] | None = None,
    open_archive: bool | None = None,
    bridge: Sequence[str] = (),
    as_of: datetime | None = None,
    query_embedding: Sequence[float] | None = None,
) -> dict[str, Any]:
    """exo.context_packet_json: {text, tokens, used, hints, report}."""
    args = {"query": query, "token_budget": token_budget}
    args |= _search_args(workspaces, open_archive, bridge, as_of, query_embedding)
    return _call(reader, "context_packet_json", args, "value")
