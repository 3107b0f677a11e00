"""The `exo` command line: one module per command group, and output.py for what they print with."""

from __future__ import annotations

import click
import psycopg

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
from exocortex.cli.output import fail


class Exo(click.Group):
    """The command group; a database that cannot be reached ends any command with one line and
    its fix, not a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except psycopg.OperationalError as exc:
            if exc.sqlstate is not None:  # the server answered (a cancel, a lost lock): not this
                raise
            reason = " ".join(str(exc).split())
            fail(
                f"cannot reach the database: {reason} (fix: `exo db up` starts the local runtime "
                "and makes its database, EXO_DB_NAME or exocortex, then `exo migrate`; with "
                "EXO_DATABASE_URL, start that server or make that database)"
            )


@click.group(cls=Exo)
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
