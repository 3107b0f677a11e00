"""`exo mcp` from a real MCP client: the SDK's stdio client starts the server as a subprocess.

One database per module holds the example vault (ingested, not embedded: the
semantic stage is not what is tested here) with a small hand-merged graph around
Iris Calder, and the example WhatsApp chat with her. Every test starts its own `exo mcp` with EXO_READER_URL pointing at
it, exactly as an MCP client configured from the README would, and talks to it
over stdin/stdout.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from psycopg import sql
from support.db import admin_connection
from support.models import free_ports
from support.vault import EXAMPLES, vault_database

from exocortex.client import api, mcp_server
from exocortex.ingest import chat

WHATSAPP = EXAMPLES / "chats" / "whatsapp" / "WhatsApp Chat with Iris Calder.txt"
POSTMORTEM = "work/postmortems/INC-2041-db-prod-03.md"
INCIDENT = "what happened in INC-2041?"

#: Every tool the server must list: one per public function of exocortex.client.api, but one `search`
#: (exo.search_json: rows and report from one retrieval) for search, search_json and search_report.
EXPECTED_TOOLS = {
    "context_packet",
    "search",
    "search_messages",
    "search_entities",
    "dossier",
    "related",
    "timeline",
    "cross_document_entities",
    "document",
    "conversation",
    "person_history",
    "facts",
    "fact_history",
    "facts_search",
    "events",
    "audit_summary",
    "cypher",
    "sql",
    "status",
    "kb_items",
    "kb_act",
    "kb_record_use",
}
#: The personal base's tools, listed only by a server started with a profile.
PROFILE_TOOLS = {"kb_items", "kb_act", "kb_record_use"}


#: A family chat that turns to Grandpa in the hospice (Walter Rivera is deferred in the vault).
FAMILY = [
    {
        "conversation_id": "f",
        "conversation_title": "Family",
        "sender": sender,
        "text": text,
        "sent_at": f"2017-03-0{i}T10:00:00Z",
    }
    for i, (sender, text) in enumerate(
        [
            ("Alex", "Shall we meet on Sunday?"),
            ("Sam", "Yes, after the hospice visit."),  # a cue here, the name in the reply: both charged
            ("Alex", "Give Grandpa my love."),
            ("Sam", "Will do."),
            ("Alex", "Bring the kite on Sunday."),
        ],
        start=1,
    )
]


@pytest.fixture(scope="module")
def vault(cfg, template_db, tmp_path_factory) -> Iterator:
    family = tmp_path_factory.mktemp("chats") / "family.jsonl"
    family.write_text("".join(json.dumps(m) + "\n" for m in FAMILY))
    with vault_database(cfg, template_db, "exo_mcp") as db:
        with db.connect("exo_writer") as conn:
            chat.import_chat(conn, WHATSAPP, "whatsapp", ["Sam Rivera"])
            chat.import_chat(conn, family, "jsonl")
        yield db


def serve(url: str, scenario: Callable[[ClientSession], Awaitable[None]], errlog: Path | None = None) -> None:
    """Start `exo mcp` (this interpreter, this checkout) with EXO_READER_URL=url and run scenario."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "exocortex.cli", "mcp", "--statement-timeout-ms", "20000"],
        env={"EXO_READER_URL": url},
    )

    async def main() -> None:
        with open(errlog or os.devnull, "w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await scenario(session)

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:  # the task groups wrap what the scenario raised
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from None


async def call(session: ClientSession, tool: str, **arguments) -> str:
    """The tool's text; fails the test on a tool error."""
    result = await session.call_tool(tool, arguments)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, f"{tool} failed: {text}"
    return text


async def fail(session: ClientSession, tool: str, **arguments) -> str:
    """The error text of a call that must fail as a tool error (not a protocol error)."""
    result = await session.call_tool(tool, arguments)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error, f"{tool} should have failed, answered {text[:200]}"
    return text


def test_every_api_function_is_a_tool(vault):
    public = {
        name
        for name, fn in inspect.getmembers(api, inspect.isfunction)
        if fn.__module__ == api.__name__
        and not name.startswith("_")
        and next(iter(inspect.signature(fn).parameters), None) == "reader"
    }
    # search_json answers search and search_report from one retrieval; call is what every function uses
    # the search tool is api.search_json with its report brief unless asked (mcp_server.search_tool)
    named = ({spec.function.__name__ for spec in mcp_server.TOOLS} - {"search_tool"}) | {"search_json"}
    assert named == public - {
        "search",
        "search_report",
        "call",
    }
    assert {spec.name for spec in mcp_server.TOOLS} == EXPECTED_TOOLS
    tools = {}

    async def scenario(session):
        tools.update({t.name: t for t in (await session.list_tools()).tools})

    serve(vault.url("exo_reader"), scenario)
    assert set(tools) == EXPECTED_TOOLS - PROFILE_TOOLS  # no profile: no personal base to act on
    for tool in tools.values():
        assert len(tool.description) > 30, tool.name
        # only the personal base's recording path writes (exo_private.kb_write)
        assert tool.annotations.read_only_hint == (tool.name not in {"kb_act", "kb_record_use"}), tool.name
    search = tools["search"]
    # the description is the SQL function's comment; parameters are typed from the api signature
    assert search.description.startswith("One search, rows and report together")
    props = search.input_schema["properties"]
    assert search.input_schema["required"] == ["query"]
    assert props["k"]["type"] == "integer" and props["k"]["default"] == 25
    assert props["bridge"]["type"] == "array" and props["bridge"]["items"] == {"type": "string"}
    assert props["workspaces"]["type"] == ["array", "null"]
    assert props["query_embedding"]["items"] == {"type": "number"}
    # what every tool means by bridge and as_of is said once, in the server's instructions
    assert "description" not in props["bridge"] and "bridge" in mcp_server.INSTRUCTIONS
    assert "reader" not in props


def test_search_tools_answer_from_the_vault(vault, tmp_path):
    async def scenario(session):
        found = json.loads(await call(session, "search", query=INCIDENT, k=5))
        rows, report = found["results"], found["report"]
        assert 0 < len(rows) <= 5
        assert POSTMORTEM in [r["path"] for r in rows]
        assert {"rank", "citation", "workspace", "band", "stage", "body"} <= set(rows[0])
        assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)
        # the report says what answers; its diagnostics (each stage, the rerank, timings) on request
        assert report["answer"]["found"] is True and "archive" in report and "hints" in report
        assert not set(mcp_server.DIAGNOSTICS) & set(report)
        full = json.loads(await call(session, "search", query=INCIDENT, k=5, report="full"))["report"]
        # the full report describes the same run as the rows
        assert full["recognised"]["identifiers"] == ["INC-2041"] and "timings_ms" in full
        assert "report must be brief or full" in await fail(session, "search", query=INCIDENT, report="all")

        only = json.loads(await call(session, "search", query="Iris Calder", workspaces=["technical"], k=3))
        assert only["results"] and {r["workspace"] for r in only["results"]} == {"technical"}

        # a deferred subject is withheld and hinted at; bridge opens it
        hints = json.loads(await call(session, "search", query="grandpa funeral", k=3))["report"]["hints"]
        assert any(h["subject"] == "Walter Rivera" for h in hints)
        bridged = json.loads(
            await call(session, "search", query="grandpa funeral", k=3, bridge=["Walter Rivera"])
        )
        assert not any(h["subject"] == "Walter Rivera" for h in bridged["report"]["hints"])

        packet = await call(session, "context_packet", query="What happened in INC-2041?", token_budget=800)
        assert "[1]" in packet and "INC-2041" in packet
        assert not packet.lstrip().startswith("{")  # the packet's text, not its JSON

    log = tmp_path / "stderr.log"
    serve(vault.url("exo_reader"), scenario, errlog=log)
    # logs go to stderr (stdout is the protocol), one line per call
    assert "search answered in" in log.read_text()


def test_graph_document_and_chat_tools(vault):
    async def scenario(session):
        status = json.loads(await call(session, "status"))
        assert status["documents"]["total"] > 50
        assert 0 < status["documents"]["conversations"] < status["documents"]["total"]  # the example chats

        found = json.loads(await call(session, "search_entities", name="iris"))
        assert {(e["name"], e["workspace"]) for e in found if e["withheld"] is None} == {
            ("Iris Calder", "technical"),
            ("Iris Calder", "creative"),
            ("Iris Calder", "personal"),  # the WhatsApp chat with her: its participant
        }
        found = [e for e in found if e["workspace"] == "technical"]
        people = json.loads(
            await call(session, "search_entities", entity_type="Person", workspaces=["technical"])
        )
        assert {"Iris Calder", "Tomas Okafor"} <= {e["name"] for e in people}

        both = json.loads(await call(session, "dossier", entity="Iris Calder"))
        # one entity per workspace, never merged
        assert sorted(d["workspace"] for d in both) == ["creative", "personal", "technical"]
        dossier = json.loads(await call(session, "dossier", entity="Iris Calder", workspace="technical"))
        assert isinstance(dossier, dict) and dossier["name"] == "Iris Calder"
        assert "Northwind Labs" in json.dumps(dossier)
        by_id = json.loads(await call(session, "dossier", entity=found[0]["entity_id"]))
        assert by_id["name"] == "Iris Calder"

        near = json.loads(
            await call(session, "related", entity="Iris Calder", workspace="technical", depth=2)
        )
        # Tomas is one hop away by structure: Iris copied him on her on-call mail (COPIED)
        assert {(e["name"], e["depth"]) for e in near} >= {("Northwind Labs", 1), ("Tomas Okafor", 1)}

        timeline = json.loads(await call(session, "timeline", entity="Iris Calder", workspace="technical"))
        # mentions the text makes show her name; structural ones (the author of a document, a
        # correspondent) show the document's opening, which need not name her
        named = [m for m in timeline if "Iris" in m["excerpt"]]
        assert timeline and 2 * len(named) >= len(timeline)
        dated = [m["written_at"] for m in timeline if m["written_at"]]
        assert dated == sorted(dated)

        bridging = json.loads(await call(session, "cross_document_entities", min_documents=2))
        assert "Iris Calder" in {e["name"] for e in bridging["entities"]}

        document = json.loads(await call(session, "document", document="INC-2041-db-prod-03.md"))
        assert document["path"] == POSTMORTEM

        history = json.loads(await call(session, "person_history", name="Iris"))
        assert history and history[0]["source"] == "whatsapp" and history[0]["messages"] > 0
        found = json.loads(await call(session, "search_messages", query="logical replication", max_results=3))
        shown = [m for m in found if m["withheld"] is None]  # then a hint per closed subject
        assert 0 < len(shown) <= 3 and "logical replication" in found[0]["body"].lower()
        assert found[0]["source"] == "whatsapp"  # ranked by BM25: any word counts, both rank first
        messages = json.loads(await call(session, "conversation", conversation="Iris Calder"))
        assert messages[0]["sender"] == "Iris Calder" and "Northwind Labs" in messages[0]["body"]

        rows = json.loads(
            await call(
                session,
                "cypher",
                workspace="technical",
                query="MATCH (p:Person)-[r]->(o:Org) RETURN {person: p.name, org: o.name}",
            )
        )
        assert {"person": "Iris Calder", "org": "Northwind Labs"} in rows
        message = await fail(
            session, "cypher", workspace="technical", query="CREATE (n:Person {name: 'x'}) RETURN n"
        )
        assert "read-only" in message and "CREATE" in message, message

    serve(vault.url("exo_reader"), scenario)


def test_chat_tools_withhold_charged_messages_with_a_hint_and_take_bridge(vault):
    how = "ask with bridge => array['Walter Rivera']"

    async def scenario(session):
        found = json.loads(await call(session, "search_messages", query="hospice"))
        (hint,) = [row["withheld"] for row in found]
        assert hint == {"subject": "Walter Rivera", "messages": hint["messages"], "how": how}
        assert hint["messages"] >= 1
        assert "hospice" not in json.dumps([row["withheld"] for row in found]).lower()
        opened = json.loads(await call(session, "search_messages", query="hospice", bridge=["Grandpa"]))
        assert [row["body"] for row in opened] == ["Yes, after the hospice visit."]

        messages = json.loads(await call(session, "conversation", conversation="Family"))
        assert [m["body"] for m in messages if m["withheld"] is None] == [
            "Shall we meet on Sunday?",
            "Will do.",
            "Bring the kite on Sunday.",
        ]
        assert [m["withheld"]["messages"] for m in messages if m["withheld"]] == [2]
        bridged = json.loads(
            await call(session, "conversation", conversation="Family", bridge=["Walter Rivera"])
        )
        assert len(bridged) == 5 and all(m["withheld"] is None for m in bridged)

        history = json.loads(await call(session, "person_history", name="Alex"))
        assert [(h["messages"], h["withheld"]) for h in history] == [
            (2, None),
            (None, {"subject": "Walter Rivera", "messages": 1, "how": how}),
        ]
        assert (
            json.loads(await call(session, "person_history", name="Alex", bridge=["Grandpa"]))[0]["messages"]
            == 3
        )

    serve(vault.url("exo_reader"), scenario)


def test_fact_tools_read_the_declared_facts_and_the_audit(vault):
    """The vault's canonical facts file declares Sam Rivera's facts (its frontmatter subject:)."""

    async def scenario(session):
        current = json.loads(await call(session, "facts", subject="sam rivera"))
        by_attribute = {f["attribute"]: f for f in current}
        assert by_attribute["employer"]["value"].startswith("Northwind Labs")
        assert by_attribute["employer"]["kind"] == "declared" and by_attribute["employer"]["sources"]
        # the file is dated 2015; its previous addresses and employer give their own years
        then = json.loads(await call(session, "facts", subject="Sam Rivera", as_of="2014-01-01"))
        assert {f["attribute"]: f["value"] for f in then} == {
            "address": "14 Fenwick Street, Flat 3, Larkhaven",
            "employer": "Copperleaf Analytics, Hollowmere then Larkhaven office",
        }
        assert json.loads(await call(session, "facts", subject="Sam Rivera", as_of="2010-01-01")) == []
        line = json.loads(await call(session, "fact_history", subject="Sam Rivera", attribute="Employer"))
        assert sorted(f["value"] for f in line) == [
            "Copperleaf Analytics, Hollowmere then Larkhaven office",
            by_attribute["employer"]["value"],
        ]
        found = json.loads(await call(session, "facts_search", query="Northwind", max_results=3))
        assert 0 < len(found) <= 3 and all(f["subject"] == "Sam Rivera" for f in found)
        audit = json.loads(await call(session, "audit_summary"))
        assert (audit["ran_at"], audit["findings"], audit["retirement_rate"]) == (None, {}, 0)  # never run
        assert "attribute" in await fail(session, "fact_history", subject="Sam Rivera", attribute=" ")

    serve(vault.url("exo_reader"), scenario)


def test_sql_reads_the_exo_views_and_refuses_the_rest(vault):
    async def scenario(session):
        found = json.loads(
            await call(session, "sql", statement="select name from exo.workspaces order by name")
        )
        assert found["columns"] == ["name"] and ["technical"] in found["rows"]
        assert found["truncated"] is False
        capped = json.loads(
            await call(session, "sql", statement="select name from exo.workspaces", max_rows=1)
        )
        assert len(capped["rows"]) == 1 and capped["truncated"] is True
        message = await fail(session, "sql", statement="delete from exo.settings")
        assert "rejected (select_only)" in message, message
        message = await fail(session, "sql", statement="select * from exo_private.chunks")
        assert "rejected (exo_objects_only)" in message, message

    serve(vault.url("exo_reader"), scenario)


def test_bad_arguments_are_tool_errors_and_the_session_goes_on(vault):
    async def scenario(session):
        # the database refuses (invalid_parameter_value): its message reaches the model
        message = await fail(session, "context_packet", query="rent", token_budget=10)
        assert "token_budget must be between 200 and 100000 tokens, got 10" in message
        message = await fail(session, "search", query="rent", k=0)
        assert "k must be" in message, message
        message = await fail(session, "search", query="rent", workspaces=["no-such-workspace"])
        assert "no-such-workspace" in message, message
        # the server refuses before the database, in one sentence that names the argument and the
        # tool's arguments: wrong type, missing argument, an argument the tool does not have (refused,
        # not silently dropped)
        search = next(t for t in (await session.list_tools()).tools if t.name == "search")
        names = ", ".join(n + " (required)" * (n == "query") for n in search.input_schema["properties"])
        assert names.startswith("query (required), workspaces, k, ")
        message = await fail(session, "search", query="rent", k="many")
        assert message == (
            "search has a bad 'k' (input should be a valid integer, unable to parse string as an "
            f"integer); its arguments are {names}."
        )
        message = await fail(session, "search", k=3)
        assert message == f"search needs the argument 'query'; its arguments are {names}."
        message = await fail(session, "search", query="rent", workspace="technical")
        assert message == f"search has no argument 'workspace'; its arguments are {names}."
        # ... and the next call in the same session answers
        rows = json.loads(await call(session, "search", query=INCIDENT, k=5))["results"]
        assert POSTMORTEM in [r["path"] for r in rows]

    serve(vault.url("exo_reader"), scenario)


def test_a_database_restart_fails_at_most_one_call(vault):
    """A restart, as the server sees it: every backend of the database ends and, while it is
    down, no new one starts.

    The shared test server cannot be restarted under the other tests, so the test
    database alone goes through it: its backends are terminated (what a restart does
    to open sessions, the server's pooled ones included) and `allow_connections false`
    refuses new ones (what a server that is down or starting up does). The call that
    meets a dead pooled connection fails as a tool error that says the database is
    unreachable; a call while the database still refuses says why; the MCP session and
    its process stay up, and once the database is back every call answers.
    """
    database = sql.Identifier(vault.name)

    async def scenario(session):
        assert json.loads(await call(session, "search", query="INC-2041", k=1))["results"]
        with admin_connection(vault.cfg) as admin:
            admin.execute(sql.SQL("alter database {} allow_connections false").format(database))
            try:
                admin.execute(
                    "select pg_terminate_backend(pid) from pg_stat_activity where datname = %s", (vault.name,)
                )
                first = await fail(session, "search", query="INC-2041", k=1)
                refused = await fail(session, "search", query="INC-2041", k=1)
            finally:
                admin.execute(sql.SQL("alter database {} allow_connections true").format(database))
        assert first.endswith(")") and "the database is unreachable" in first, first
        assert "the database is unreachable" in refused and "not currently accepting connections" in refused
        for _ in range(3):
            rows = json.loads(await call(session, "search", query=INCIDENT, k=5))["results"]
            assert POSTMORTEM in [r["path"] for r in rows]

    serve(vault.url("exo_reader"), scenario)


def test_a_restart_between_calls_fails_at_most_one(vault):
    """Backends terminated between calls (the database comes straight back): the pool
    discards the dead connections; at most one call fails, and it says why."""

    async def scenario(session):
        assert json.loads(await call(session, "search", query="INC-2041", k=1))["results"]
        with admin_connection(vault.cfg) as admin:
            admin.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                " where datname = %s and application_name = 'exo-mcp'",
                (vault.name,),
            )
        results = [await session.call_tool("search", {"query": INCIDENT, "k": 5}) for _ in range(4)]
        failed = [r for r in results if r.is_error]
        assert len(failed) <= 1 and not any(r.is_error for r in results[1:])
        assert all("the database is unreachable" in r.content[0].text for r in failed)

    serve(vault.url("exo_reader"), scenario)


def test_descriptions_come_from_the_database_catalog(vault):
    """The tool descriptions are the database's own comments (pg_description), not sql/'s text:
    a comment changed in the database is what a client reads."""
    with vault.connect() as admin:
        before = admin.execute("select obj_description('exo.status()'::regprocedure, 'pg_proc')").fetchone()[
            0
        ]
        admin.execute("comment on function exo.status() is 'The store described, as this database says.'")
    tools = {}

    async def scenario(session):
        tools.update({t.name: t for t in (await session.list_tools()).tools})

    try:
        serve(vault.url("exo_reader"), scenario)
    finally:
        with vault.connect() as admin:
            admin.execute(sql.SQL("comment on function exo.status() is {}").format(sql.Literal(before)))
    assert tools["status"].description == "The store described, as this database says."
    comments = mcp_server.catalog_comments(api.Reader(vault.url("exo_reader")))
    assert comments["exo.search_json"].startswith("One search, rows and report together")
    for spec in mcp_server.TOOLS:  # every tool that names a SQL function finds its comment
        assert spec.sql_function is None or spec.sql_function in comments, spec.name


def test_the_tools_fit_a_small_share_of_an_agents_context(vault):
    """Every tool's name, description and schema is in an agent's context on every turn: all of
    them, the personal base's included, stay under 12,000 bytes; a description is the first
    sentence of its function's comment, without the list of what it answers or its asides."""
    reader = dataclasses.replace(api.Reader(vault.url("exo_reader")), profile="someone")
    listed = mcp_server.tools(reader)
    assert {t.name for t in listed} == EXPECTED_TOOLS
    size = sum(
        len(json.dumps({"name": t.name, "description": t.description, "inputSchema": t.parameters},
                       separators=(",", ":")))
        for t in listed
    )  # fmt: skip
    assert size < 12_000, size
    related = next(t for t in listed if t.name == "related")
    assert related.description == "Entities related to one entity in its workspace's graph."
    assert mcp_server.first_sentence(
        "One search, rows and report together (jsonb): results (rows), report."
    ) == ("One search, rows and report together.")  # without its asides
    assert mcp_server.first_sentence("Short: a, b. Then more.") == "Short: a, b."  # a colon too early
    assert mcp_server.first_sentence("x " * 200).endswith("…")


def test_no_database_at_all_is_a_tool_error_not_a_crash():
    (port,) = free_ports()
    url = f"host=127.0.0.1 port={port} dbname=nothing user=exo_reader password=x connect_timeout=2"

    async def scenario(session):
        assert {t.name for t in (await session.list_tools()).tools} == EXPECTED_TOOLS - PROFILE_TOOLS
        for _ in range(2):  # the server keeps running after the first failure
            message = await fail(session, "search", query="rent")
            assert "the database is unreachable" in message and "Connection refused" in message

    serve(url, scenario)
