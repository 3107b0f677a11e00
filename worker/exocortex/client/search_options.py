"""The options of a search, described once.

exo.search, exo.search_json and exo.search_report take SEARCH after the query, and
exo.context_packet and exo.context_packet_json take PACKET (sql/400_search.sql, sql/5xx);
tests/test_search_options.py compares this description with those signatures in the catalog.
Everything that offers the options is made from it: the functions of client/api.py (their
signatures and the arguments they send), the MCP tools' schemas (client/mcp_server.py), the
retrievers (client/integrations/common.py) and `exo search | context` (cli/query.py). A new
option is a new SQL argument and one line here.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Option:
    """One argument of the search functions."""

    name: str
    annotation: Any
    """Its Python type, as the api functions take it."""
    default: Any
    """The SQL default, in Python; None where the database works it out (as_of: now())."""
    sql: str
    """The argument as pg_get_function_arguments prints it."""
    help: str
    """One sentence, for the MCP schema, `exo --help` and the retrievers."""

    @property
    def repeatable(self) -> bool:
        """A list of names (workspaces, bridge): the SQL type is text[]."""
        return self.sql.split(" ", 1)[1].startswith("text[]")


WORKSPACES = Option(
    "workspaces", Sequence[str] | None, None, "workspaces text[] DEFAULT NULL::text[]",
    "Only these workspaces; default: all of them.",
)  # fmt: skip
K = Option("k", int, 25, "k integer DEFAULT 25", "How many results.")
PER_WORKSPACE = Option(
    "per_workspace", int, 30, "per_workspace integer DEFAULT 30",
    "At most this many candidates from each workspace go to the rerank.",
)  # fmt: skip
OPEN_ARCHIVE = Option(
    "open_archive", bool | None, None, "open_archive boolean DEFAULT NULL::boolean",
    "true opens the archival band, false keeps it closed; default: the question's dates decide.",
)  # fmt: skip
BRIDGE = Option(
    "bridge", Sequence[str], (), "bridge text[] DEFAULT '{}'::text[]",
    "Deferred subjects (name or alias) to open for this call; a hint names them when withheld.",
)  # fmt: skip
AS_OF = Option(
    "as_of", datetime | None, None, "as_of timestamp with time zone DEFAULT now()",
    "Answer as of this moment (ISO 8601): nothing written after it; default: now.",
)  # fmt: skip
QUERY_EMBEDDING = Option(
    "query_embedding", Sequence[float] | None, None,
    "query_embedding double precision[] DEFAULT NULL::double precision[]",
    "Your own query vector (the model in use) instead of the embeddings endpoint's.",
)  # fmt: skip
TOKEN_BUDGET = Option(
    "token_budget", int, 4000, "token_budget integer DEFAULT 4000",
    "The packet's size limit in tokens (200 to 100000).",
)  # fmt: skip

#: The arguments after the query, in the SQL signature's order.
SEARCH = (WORKSPACES, K, PER_WORKSPACE, OPEN_ARCHIVE, BRIDGE, AS_OF, QUERY_EMBEDDING)
PACKET = (TOKEN_BUDGET, WORKSPACES, OPEN_ARCHIVE, BRIDGE, AS_OF, QUERY_EMBEDDING)
OPTIONS = {option.name: option for option in (*SEARCH, *PACKET)}

#: Each exo function that takes them.
FUNCTIONS: Mapping[str, tuple[Option, ...]] = {
    "search": SEARCH,
    "search_json": SEARCH,
    "search_report": SEARCH,
    "context_packet": PACKET,
    "context_packet_json": PACKET,
}


def signature(options: Sequence[Option], reader: Any) -> inspect.Signature:
    """(reader, query, *, option=default, ...): the signature of an api function that takes them."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature(
        [
            inspect.Parameter("reader", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=reader),
            inspect.Parameter("query", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
            *(
                inspect.Parameter(o.name, keyword, default=o.default, annotation=o.annotation)
                for o in options
            ),
        ]
    )


def arguments(options: Sequence[Option], given: Mapping[str, Any]) -> dict[str, Any]:
    """The named SQL arguments for the options given: an unknown name is a TypeError naming it;
    None leaves the database's default; sequences go as lists, a query vector as floats."""
    names = {o.name for o in options}
    unknown = sorted(set(given) - names)
    if unknown:
        raise TypeError(f"unknown search option(s): {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    sent: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        if name == "query_embedding":
            value = [float(x) for x in value]
        elif isinstance(value, tuple | list):
            value = list(value)
        sent[name] = value
    return sent
