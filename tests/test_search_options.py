"""One description of the search options (client/search_options.py), and everything made from
it agreeing with it: the SQL signatures in the catalog, README, the api functions, the MCP
tools, the CLI and the retrievers."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest
from click.testing import CliRunner
from support import REPO_ROOT

from exocortex.cli import main
from exocortex.client import api, mcp_server
from exocortex.client.integrations import common
from exocortex.client.integrations import langchain as lc
from exocortex.client.integrations import llamaindex as li
from exocortex.client.search_options import FUNCTIONS, OPTIONS, PACKET, SEARCH

#: The api function that calls each exo function.
API = {
    "search": api.search,
    "search_json": api.search_json,
    "search_report": api.search_report,
    "context_packet_json": api.context_packet,
}
#: Options the retrievers do not offer: a retriever embeds nothing itself.
NOT_IN_RETRIEVERS = {"query_embedding"}


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_the_description_is_the_sql_signature(template_db, function):
    with template_db.connect() as conn:
        (arguments,) = conn.execute(
            "select pg_get_function_arguments(p.oid) from pg_proc p "
            "where p.pronamespace = 'exo'::regnamespace and p.proname = %s",
            (function,),
        ).fetchone()
    assert arguments == ", ".join(["query text", *(o.sql for o in FUNCTIONS[function])])


def test_readme_writes_the_signatures_as_the_description_does():
    readme = " ".join(REPO_ROOT.joinpath("README.md").read_text().split())
    written = dict(re.findall(r"`exo\.(search|context_packet)\(query, ([a-z_, ]+)\)`", readme))
    assert written == {
        "search": ", ".join(o.name for o in SEARCH),
        "context_packet": ", ".join(o.name for o in PACKET),
    }


@pytest.mark.parametrize("function", sorted(API))
def test_the_api_functions_take_the_options_with_their_defaults(function):
    parameters = list(inspect.signature(API[function]).parameters.values())[2:]
    assert [(p.name, p.default) for p in parameters] == [(o.name, o.default) for o in FUNCTIONS[function]]


def test_an_unknown_option_is_refused_by_name_before_the_database():
    reader = api.Reader("postgresql://nowhere.invalid/none")
    with pytest.raises(TypeError, match="workspace.*known: .*workspaces"):
        api.search_json(reader, "q", workspace=["personal"])


def test_the_mcp_search_tools_offer_every_option_with_its_description():
    """Each option with its one description; bridge and as_of, which every tool means alike, are
    described once in the server's instructions (mcp_server.SAID_ONCE)."""
    tools = {spec.name: spec for spec in mcp_server.TOOLS}
    for name, options in (("search", SEARCH), ("context_packet", PACKET)):
        parameters = mcp_server.tool_signature(tools[name]).parameters
        brief = ["report"] if name == "search" else []  # the search tool's report, brief unless asked
        assert list(parameters)[1:] == [o.name for o in options] + brief
        for option in options:
            annotation = parameters[option.name].annotation
            if option.name in mcp_server.SAID_ONCE:
                assert not hasattr(annotation, "__metadata__") and option.name in mcp_server.INSTRUCTIONS
                continue
            (field,) = annotation.__metadata__
            assert field.description == option.help


@pytest.mark.parametrize(
    ("command", "function"), [("search", "search_json"), ("context", "context_packet_json")]
)
def test_the_cli_offers_the_options_with_their_help(command, function):
    shown = " ".join(CliRunner().invoke(main, [command, "--help"], terminal_width=400).output.split())
    for option in FUNCTIONS[function]:
        if option.name != "query_embedding":  # the CLI lets the database embed the question
            assert option.help[:40] in shown, option.name


def test_the_retrievers_offer_every_option_but_a_query_vector():
    offered = set(OPTIONS) - NOT_IN_RETRIEVERS
    assert set(common.SEARCH_OPTIONS) == offered
    assert offered <= {f.name for f in dataclasses.fields(common.Options)}
    assert offered <= set(lc.ExocortexRetriever.model_fields)
    assert offered <= set(inspect.signature(li.ExocortexRetriever.__init__).parameters)
    assert offered | {"fetch_report"} == common.OVERRIDABLE
