"""The exo API as an MCP server: every public function of exocortex.client.api is one tool.

`exo mcp` runs it over stdio (stdout is the protocol; logs go to stderr). The tools
are built from one registration list, TOOLS: a tool's parameters are its api
function's signature (without the Reader), its description is the `comment on
function` of the SQL function it calls, read once at startup from the database's
catalog (pg_description), else the api function's docstring.

Calls borrow read-only connections from a small pool whose plpython sessions are warm
(exocortex.client.api's pooled Reader). A database that restarts fails at most the call that
met it; one that is down fails the calls made meanwhile, as tool errors that say it is
unreachable, and the session goes on. A call the database refuses (a bad argument, an
unknown workspace, k out of range) comes back as a tool error (isError) with the
database's message.

A server started with a profile (`exo mcp --profile NAME`, or EXO_PROFILE) connects as that
profile's login role (exocortex.ops.profiles): its searches record in that user's base and its kb
tools act on it. No tool takes a profile: the database reads it from the session, and row
security shows the role only its own rows, so neither a tool nor the sql tool can reach another
user's base. Without one, the searches record nothing and the kb tools say there is no profile.
"""

from __future__ import annotations

import collections.abc
import contextlib
import inspect
import json
import logging
import re
import sys
import time
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any

import psycopg
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, Field, ValidationError

from exocortex.client import api, search_options
from exocortex.client.sqlguard import Rejected

log = logging.getLogger("exocortex.mcp")

INSTRUCTIONS = """\
exocortex is a read-only memory of one person's documents, notes and chats, split into
workspaces and bands (current, recent, archival). To answer a question, call
context_packet: a small packet of current facts and numbered evidence excerpts; cite
them as [n]. search gives ranked chunks with citations and the report of the same
search (why it found what it did, and hints about what it withheld). For people, organisations and places: search_entities, then
dossier, related and timeline. document and conversation read one source;
person_history and search_messages cover chats; facts, fact_history and facts_search
read what is true now and what was true before (audit_summary: how much the self-audit retired); cypher (a workspace's graph) and sql
(a SELECT over the exo views and functions) answer what the others do not; status
describes the whole store. Deferred subjects are withheld unless named in bridge (a list
of subjects' names or aliases); a hint says when something was withheld (in a list of
rows: the last rows, with only "withheld" set). as_of (ISO 8601) answers as of that
moment: nothing written or sent after it. max_results, max_messages and max_rows cap
the rows. With read replicas, an answer says which server gave it (served_by: in a
report, else a last row or a key). Errors come back as tool errors with the database's
message: fix the argument and call again. Tools answer in compact JSON unless they say otherwise."""


def _json(value: Any) -> str:
    """Compact JSON: dates as ISO 8601, decimals as numbers."""

    def default(o: Any) -> Any:
        if isinstance(o, datetime | date):
            return o.isoformat()
        if isinstance(o, Decimal):
            return float(o)
        return str(o)

    return json.dumps(value, default=default, ensure_ascii=False, separators=(",", ":"))


def _packet_text(packet: dict[str, Any]) -> str:
    """The packet's text; with a profile, its provenance block after it."""
    provenance = packet.get("report", {}).get("provenance")
    return packet["text"] + (f"\n\n{provenance['text']}" if provenance else "")


#: What a search's report says for diagnosis rather than for an answer: per-stage details, the
#: rerank's attempts, timings. The search tool leaves them out unless asked (report="full").
DIAGNOSTICS = ("workspaces", "rerank", "timings_ms", "capsules", "recognised")


def search_tool(reader: api.Reader, query: str, *, report: str = "brief", **options: Any) -> dict[str, Any]:
    """exo.search_json, its report without DIAGNOSTICS unless report is "full"."""
    if report not in ("brief", "full"):
        raise ToolError(f"report must be brief or full, not {report!r}")
    found = api.search_json(reader, query, **options)
    if report == "brief":
        found["report"] = {k: v for k, v in found["report"].items() if k not in DIAGNOSTICS}
    return found


_json_signature = inspect.signature(api.search_json)
search_tool.__signature__ = _json_signature.replace(  # type: ignore[attr-defined]
    parameters=[
        *_json_signature.parameters.values(),
        inspect.Parameter("report", inspect.Parameter.KEYWORD_ONLY, default="brief", annotation=str),
    ]
)


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: an exocortex.client.api function, the SQL function that describes it, how it answers."""

    name: str
    function: Callable[..., Any]
    sql_function: str | None
    """exo.<name> whose `comment on function` is the description; None: the docstring."""
    render: Callable[[Any], str] = _json
    returns: str = ""
    """What it answers, where that is not compact JSON (INSTRUCTIONS say that is the rule)."""
    parameters: Mapping[str, str] = field(default_factory=dict)
    """Descriptions of this tool's parameters where PARAMETERS' would mislead."""
    summary: str | None = None
    """The description, where neither a SQL comment nor the docstring speaks to a model."""
    read_only: bool = True
    """False: the tool records in the caller's personal base (exo_private.kb_write, the one write path)."""
    needs_profile: bool = False
    """Listed only by a server started with a profile (the personal base's tools)."""


#: The tools, in the order a client lists them. Every public function of exocortex.client.api is here
#: (tests/test_mcp.py checks it) but search and search_report: the search tool answers both
#: from one retrieval (search_json).
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "context_packet",
        api.context_packet,
        "exo.context_packet",
        _packet_text,
        "Returns the packet as text; cite its evidence as [n].",
    ),
    ToolSpec(
        "search",
        search_tool,
        "exo.search_json",
        returns="Returns {results (best first), report}.",
    ),
    ToolSpec("search_messages", api.search_messages, "exo.search_messages"),
    ToolSpec("search_entities", api.search_entities, "exo.search_entities"),
    ToolSpec("dossier", api.dossier, "exo.dossier"),
    ToolSpec("related", api.related, "exo.related"),
    ToolSpec("timeline", api.timeline, "exo.timeline"),
    ToolSpec("cross_document_entities", api.cross_document_entities, "exo.cross_document_entities"),
    ToolSpec("document", api.document, "exo.document"),
    ToolSpec("conversation", api.conversation, "exo.conversation"),
    ToolSpec("person_history", api.person_history, "exo.person_history"),
    ToolSpec("facts", api.facts, "exo.facts"),
    ToolSpec("fact_history", api.fact_history, "exo.fact_history"),
    ToolSpec("facts_search", api.facts_search, "exo.facts_search"),
    ToolSpec("events", api.events, "exo.events"),
    ToolSpec("audit_summary", api.audit_summary, "exo.audit_summary"),
    ToolSpec(
        "cypher",
        api.cypher,
        "exo.cypher",  # its comment says what it returns: one jsonb per row
        parameters={"query": "A read-only Cypher query, MATCH ... RETURN one value (a map for several)."},
    ),
    ToolSpec(
        "sql",
        api.sql,
        None,
        returns="Returns {columns, rows, truncated}.",
        summary="One read-only SELECT over the exo views and exo.<function>(...) calls (WITH, UNION allowed).",
    ),
    ToolSpec("status", api.status, "exo.status"),
    ToolSpec("kb_items", api.kb_items, "exo.kb_items", needs_profile=True),
    ToolSpec(
        "kb_act",
        api.kb_act,
        None,
        read_only=False,
        needs_profile=True,
        summary="Act on a document of your personal base (a search's provenance names suggestions).",
        returns="Returns the document's new state and fetch count.",
    ),
    ToolSpec("kb_record_use", api.kb_record_use, "exo.kb_record_use", read_only=False, needs_profile=True),
)

#: Parameters every tool means the same by, said once in INSTRUCTIONS rather than in each schema.
SAID_ONCE = frozenset(["bridge", "as_of", "max_results", "max_messages", "max_rows"])

#: Descriptions of parameters, by name (a ToolSpec's own `parameters` win); the search options'
#: come from their one description (client/search_options.py).
PARAMETERS = {option.name: option.help for option in search_options.OPTIONS.values()} | {
    "query": "The question or search text: natural language, an identifier, a name.",
    "workspace": "A workspace name (the status tool lists them).",
    "entity": "An entity's name or id (search_entities finds them).",
    "name": "A name, or part of one (case-insensitive).",
    "entity_type": "Person, Org, Place, Topic or Date; null: any.",
    "depth": "How many relation steps out.",
    "per_node": "At most this many neighbours followed from each entity.",
    "min_documents": "Only entities named in at least this many documents.",
    "document": "A document's id, its path, or a unique end of its path.",
    "conversation": "A conversation's id, or words of its title.",
    "max_results": "At most this many results.",
    "max_messages": "At most this many messages.",
    "max_rows": "At most this many rows come back.",
    "subject": "Whom or what the facts are about: a name (case and spacing do not matter).",
    "attribute": "A fact's attribute, e.g. employer or home_town (exo.facts lists a subject's).",
    "statement": "One SELECT over exo.<view> and exo.<function>(...) calls, e.g. select * from exo.workspaces.",
    "action": "accept_suggestion, decline_suggestion, thumbs_up, thumbs_down, force_pin or force_remove.",
    "document_id": "A document's id (a search's results and provenance give it).",
    "report": "brief, or full: with each stage, the rerank and timings.",
    "document_ids": "The documents a search of yours returned, best first.",
    "chunk_ids": "The chunks of those documents it returned.",
}


# -- descriptions ---------------------------------------------------------------------------

#: Each exo function's `comment on function`; of overloads, the one with the most arguments.
CATALOG_COMMENTS = """\
select distinct on (p.proname) 'exo.' || p.proname as function, d.description
from pg_catalog.pg_proc p
join pg_catalog.pg_namespace n on n.oid = p.pronamespace
join pg_catalog.pg_description d
  on d.objoid = p.oid and d.classoid = 'pg_catalog.pg_proc'::regclass and d.objsubid = 0
where n.nspname = 'exo'
order by p.proname, p.pronargs desc"""


def catalog_comments(reader: api.Reader) -> dict[str, str]:
    """{exo.f: its comment} from the database's catalog; {} (logged) when it cannot be read.

    On a connection of its own: startup need not wait for the pool's warm-up search.
    """
    try:
        with reader.connect() as conn:
            return {row["function"]: row["description"] for row in conn.execute(CATALOG_COMMENTS)}
    except psycopg.Error as exc:
        log.warning("tool descriptions fall back to docstrings: %s", error_message(exc))
        return {}


#: A tool's description is the first sentence of its SQL function's comment, at most this long:
#: every description and schema is in an agent's context on every turn (the whole comment is
#: `\\df+ exo.<name>`, or the sql tool's `select obj_description(...)`).
DESCRIPTION_CHARS = 150
MIN_SUMMARY_CHARS = 30
_ASIDE = re.compile(r" ?\([^()]*\)")


def first_sentence(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """What `text` opens with, whitespace collapsed: up to the end of its first sentence or,
    once it has said MIN_SUMMARY_CHARS, the first colon (the list of what a function answers
    follows it, and a result shows its fields), outside parentheses, without its asides in
    parentheses; cut at a word to `limit`."""
    flat = " ".join(text.split())
    depth, end = 0, len(flat)
    for i, ch in enumerate(flat):
        depth += (ch in "([") - (ch in ")]")
        after = flat[i + 1 : i + 2]
        if depth or after not in (" ", ""):
            continue
        if ch == "." and not flat[max(0, i - 3) : i].endswith(("e.g", "i.e")):
            end = i
            break
        if ch == ":" and i >= MIN_SUMMARY_CHARS:
            end = i
            break
    sentence = flat[:end]
    while (shorter := _ASIDE.sub("", sentence)) != sentence:  # asides, innermost first
        sentence = shorter
    if len(sentence) > limit:
        return sentence[: limit - 1].rsplit(" ", 1)[0] + "…"
    return sentence + "."


def description(spec: ToolSpec, comments: Mapping[str, str]) -> str:
    """The summary, else the first sentence of the SQL function's comment, else of the api
    function's docstring; then what it returns."""
    text = spec.summary or (comments.get(spec.sql_function) if spec.sql_function else None)
    text = first_sentence(text or inspect.cleandoc(spec.function.__doc__ or spec.name))
    return f"{text} {spec.returns}".strip()


# -- signatures -----------------------------------------------------------------------------


def _wire_type(annotation: Any) -> Any:
    """The JSON-friendly form of an api annotation: Sequence[X] -> list[X], through unions."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (Sequence, collections.abc.Sequence, list, tuple) and args:
        return list[_wire_type(args[0])]
    if origin in (typing.Union, types.UnionType):
        wired = [_wire_type(a) for a in args]
        union = wired[0]
        for a in wired[1:]:
            union = union | a
        return union
    return annotation


def tool_signature(spec: ToolSpec) -> inspect.Signature:
    """The api function's signature without its Reader, in types a JSON schema can say."""
    function = spec.function
    described = {**PARAMETERS, **spec.parameters}
    hints = typing.get_type_hints(function)
    parameters = []
    for p in inspect.signature(function).parameters.values():
        annotation = hints.get(p.name, p.annotation)  # a search option's: its description's type
        if annotation is api.Reader:
            continue
        annotation = _wire_type(annotation)
        if p.name in described and p.name not in SAID_ONCE:
            annotation = Annotated[annotation, Field(description=described[p.name])]
        default = list(p.default) if isinstance(p.default, tuple) else p.default
        parameters.append(p.replace(annotation=annotation, default=default))
    return inspect.Signature(parameters, return_annotation=str)


# -- errors ---------------------------------------------------------------------------------

#: SQLSTATEs that mean the server went away or is going away (admin shutdown, crash, restart).
_GONE = {"57P01", "57P02", "57P03"}


def _unreachable(exc: psycopg.Error) -> bool:
    state = exc.sqlstate
    return isinstance(exc, psycopg.OperationalError) and (
        state is None or state.startswith("08") or state in _GONE
    )


def error_message(exc: psycopg.Error) -> str:
    """What the model reads: the database's message, its detail and hint; or that it is unreachable."""
    if _unreachable(exc):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"the database is unreachable, try again later ({first})"
    diag = exc.diag
    message = diag.message_primary or str(exc).strip()
    extra = "; ".join(
        f"{label}: {text}"
        for label, text in (("detail", diag.message_detail), ("hint", diag.message_hint))
        if text
    )
    return f"{message} ({extra})" if extra else message


def said_where(result: Any, reader: api.Reader) -> Any:
    """With read routing (the Reader has replicas), an answer of rows says which server gave it: a
    last row {"served_by": ...}, or a key of an object; a search's report says it already."""
    where = api.SERVED_BY.get()
    if not reader.replicas or where is None:
        return result
    if isinstance(result, list):
        return [*result, {"served_by": where}]
    if isinstance(result, dict) and "report" not in result:
        return {**result, "served_by": where}
    return result


def make_tool(spec: ToolSpec, reader: api.Reader) -> Callable[..., str]:
    def call(**arguments: Any) -> str:
        started = time.perf_counter()
        api.SERVED_BY.set(None)
        try:
            result = said_where(spec.function(reader, **arguments), reader)
        except psycopg.Error as exc:
            message = error_message(exc)
            log.info(
                "%s failed after %.0f ms: %s", spec.name, (time.perf_counter() - started) * 1000, message
            )
            raise ToolError(message) from exc
        except (
            Rejected,
            ValueError,
        ) as exc:  # refused before the database saw it (the SQL guard, an API check)
            log.info("%s refused: %s", spec.name, exc)
            raise ToolError(str(exc)) from exc
        log.info("%s answered in %.0f ms", spec.name, (time.perf_counter() - started) * 1000)
        return spec.render(result)

    call.__name__ = spec.name
    call.__doc__ = spec.function.__doc__
    call.__signature__ = tool_signature(spec)  # type: ignore[attr-defined]
    return call


class StrictTool(Tool):
    """A tool that refuses arguments it does not have (a misspelt `workspace` for `workspaces` is an
    error, not silently ignored; the schema says so too: additionalProperties false), and says what
    is wrong with the arguments in one sentence that names them, not as pydantic's report."""

    @classmethod
    def from_function(cls, fn: Callable[..., Any], **kwargs: Any) -> StrictTool:
        tool = super().from_function(fn, **kwargs)
        loose = tool.fn_metadata.arg_model
        model = type(loose.__name__, (loose,), {"model_config": ConfigDict(extra="forbid")})
        tool.fn_metadata.arg_model = model
        tool.parameters = compact_schema(model.model_json_schema(by_alias=True))
        return tool

    async def run(self, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            raise ToolError(argument_error(self.name, self.parameters, exc)) from exc
        return await super().run(arguments, *args, **kwargs)


def compact_schema(schema: Any) -> Any:
    """A JSON schema without what pydantic adds and a model need not read: titles, null and false
    defaults (an absent flag is off), and the anyOf of an optional simple type ({"type":
    ["string", "null"]})."""
    if isinstance(schema, list):
        return [compact_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: compact_schema(v)
        for k, v in schema.items()
        if k != "title" and not (k == "default" and (v is None or v is False))
    }
    options = out.get("anyOf")
    if options and {"type": "null"} in options and len(options) == 2:
        (kept,) = [o for o in options if o != {"type": "null"}]
        if isinstance(kept.get("type"), str):
            del out["anyOf"]
            out = {**kept, **out, "type": [kept["type"], "null"]}
    return out


def argument_error(tool: str, schema: dict[str, Any], exc: ValidationError) -> str:
    """One sentence: each argument that is unknown, missing or of the wrong type, then the tool's
    arguments, e.g. "search has no argument 'workspace'; its arguments are query (required), ..."."""
    problems: dict[str, str] = {}  # the first error of each argument (a union has one per member)
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "arguments"
        if error["type"] == "extra_forbidden":
            problem = f"has no argument {name!r}"
        elif error["type"] == "missing":
            problem = f"needs the argument {name!r}"
        else:
            problem = f"has a bad {name!r} ({error['msg'][:1].lower()}{error['msg'][1:]})"
        problems.setdefault(name, problem)
    required = set(schema.get("required", []))
    names = ", ".join(n + (" (required)" if n in required else "") for n in schema["properties"])
    return f"{tool} {'; '.join(problems.values())}; its arguments are {names}."


def tools(reader: api.Reader, specs: Sequence[ToolSpec] = TOOLS) -> list[Tool]:
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    records = ToolAnnotations(read_only_hint=False, idempotent_hint=False, open_world_hint=False)
    comments = catalog_comments(reader)
    return [
        StrictTool.from_function(
            make_tool(spec, reader),
            name=spec.name,
            description=description(spec, comments),
            annotations=read_only if spec.read_only else records,
            structured_output=False,
        )
        for spec in specs
        if reader.profile is not None or not spec.needs_profile
    ]


def build(reader: api.Reader, specs: Sequence[ToolSpec] = TOOLS) -> MCPServer:
    """The MCP server with one tool per ToolSpec, every call on `reader` (a profile's: its own)."""
    return MCPServer("exocortex", instructions=INSTRUCTIONS, version=_version(), tools=tools(reader, specs))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("exocortex")
    except Exception:
        return ""


def serve(
    statement_timeout_ms: int = api.DEFAULT_TIMEOUT_MS,
    log_level: str = "INFO",
    pool_size: int = api.DEFAULT_POOL_SIZE,
    profile: str | None = None,
) -> None:
    """Run the server over stdio until the client closes it, on a pool of pool_size connections of
    `profile`'s login role (default: EXO_PROFILE), else of the reader (api.Reader.from_config)."""
    # Logging goes to stderr before the SDK configures its own (basicConfig: first one wins).
    logging.basicConfig(
        stream=sys.stderr, level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    reader = api.Reader.from_config(
        profile=profile, statement_timeout_ms=statement_timeout_ms, application_name="exo-mcp"
    )
    profile = reader.profile
    with reader.pooled(pool_size) as pooled:
        server = build(pooled)
        log.info(
            "exocortex MCP server on stdio: %d tools, up to %d connections%s",
            len(TOOLS),
            pool_size,
            f", recording under profile {profile}" if profile is not None else "",
        )
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal: leave quietly
            server.run("stdio")
