"""`exo mcp`: the exo API served to agents as MCP tools over stdio."""

from __future__ import annotations

import click


@click.command("mcp")
@click.option(
    "--statement-timeout-ms",
    default=30_000,
    show_default=True,
    type=click.IntRange(1),
    help="Each tool call's statement timeout.",
)
@click.option(
    "--profile",
    default=None,
    help="Serve this user (exo user add NAME) as their login role: every search looks in their base "
    "first and records in it, and no tool can reach another user's. Default: EXO_PROFILE, else none.",
)
def mcp_cmd(statement_timeout_ms: int, profile: str | None) -> None:
    """Serve the exo API to agents as MCP tools over stdio (read-only, as exo_reader or a user's role).

    The database is the user's login role with --profile, else EXO_READER_URL, else the local
    runtime's exo_reader. Logs go to stderr.
    """
    from exocortex.client import mcp_server  # the MCP SDK loads only for this command

    mcp_server.serve(statement_timeout_ms, profile=profile)


COMMANDS = [mcp_cmd]
