"""The `exo` command line: one module per command group, and output.py for what they print with."""

from __future__ import annotations

import click

from exocortex.cli import (
    audit,
    entities,
    eval,
    events,
    facts,
    kb,
    mcp,
    memory,
    models,
    query,
    server,
    worker,
    workspaces,
)


@click.group()
@click.version_option(package_name="exocortex", message="%(prog)s %(version)s")
def main() -> None:
    """exocortex: a Postgres-native personal knowledge substrate for language-model agents."""


for module in (
    server,
    memory,
    workspaces,
    worker,
    mcp,
    query,
    facts,
    events,
    audit,
    kb,
    entities,
    models,
    eval,
):
    for command in module.COMMANDS:
        main.add_command(command)
