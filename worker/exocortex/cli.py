"""The `exo` command line."""

from __future__ import annotations

import json
import os
import shutil
import sys

import click
from rich.console import Console
from rich.table import Table

from exocortex import config, doctor, lint, schema_dump
from exocortex.db import ADMIN, ROLES, admin_url, as_uri, role_url
from exocortex.migrate import MigrationError, migrate
from exocortex.runtime import local, server
from exocortex.runtime.local import RuntimeProblem

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def _progress(message: str) -> None:
    err.print(f"[dim]·[/dim] {message}")


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    sys.exit(1)


@click.group()
def main() -> None:
    """exocortex: a Postgres-native personal knowledge substrate for language-model agents."""


@main.group()
def db() -> None:
    """The database server: the embedded runtime, or EXO_DATABASE_URL's server."""


@db.command("up")
def db_up() -> None:
    """Provision (first time), start and check the server; idempotent."""
    try:
        result = server.up(config.load(), _progress)
    except RuntimeProblem as exc:
        _fail(str(exc))
    console.print(result.summary)


@db.command("down")
def db_down() -> None:
    """Stop the local server (pg_ctl stop -m fast); the data stays."""
    try:
        console.print(server.down(config.load()))
    except RuntimeProblem as exc:
        _fail(str(exc))


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def db_status(as_json: bool) -> None:
    """Version, extension versions, port, data size, schema."""
    info = server.status(config.load())
    if as_json:
        console.print_json(json.dumps(info))
        return
    table = Table(show_header=False, box=None)
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        table.add_row(f"[bold]{key}[/bold]", str(value))
    console.print(table)


@db.command("url")
@click.option(
    "--role",
    type=click.Choice([ADMIN, *(r.removeprefix("exo_") for r in ROLES)]),
    default="reader",
    show_default=True,
)
def db_url(role: str) -> None:
    """Print a connection URL (with password) for one role."""
    name = role if role == ADMIN else f"exo_{role}"
    click.echo(as_uri(role_url(config.load(), name)))


@db.command("psql", context_settings={"ignore_unknown_options": True})
@click.option("--role", default="admin", type=click.Choice([ADMIN, "owner", "writer", "reader"]))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def db_psql(role: str, args: tuple[str, ...]) -> None:
    """Open psql on the database (extra arguments go to psql)."""
    cfg = config.load()
    url = as_uri(role_url(cfg, role if role == ADMIN else f"exo_{role}"))
    if cfg.external_url:
        psql = shutil.which("psql")
        if not psql:
            _fail("psql is not on PATH; install postgresql-client")
        argv = [psql, url, *args]
    else:
        argv = [*local.client_argv(cfg, "psql"), url, *args]
    os.execvp(argv[0], argv)


@main.command("migrate")
def migrate_cmd() -> None:
    """Create roles and extensions, install pgmq, apply migrations, re-apply sql/."""
    cfg = config.load()
    try:
        result = migrate(cfg, admin_url(cfg), _progress)
    except MigrationError as exc:
        _fail(str(exc))
    console.print(
        f"migrated {result.database}: {len(result.applied)} migration(s) applied, "
        f"{result.sql_files} sql file(s) re-applied"
    )


@main.command("doctor")
def doctor_cmd() -> None:
    """Check every prerequisite; print what is missing and how to fix it."""
    checks = doctor.run(config.load())
    for check in checks:
        mark = "[green]ok[/green]  " if check.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {check.name}: {check.detail}")
        if not check.ok:
            console.print(f"      fix: {check.fix}")
    if not all(c.ok for c in checks):
        sys.exit(1)


@main.command("schema-dump")
def schema_dump_cmd() -> None:
    """Write the normalised schema of a database migrated from zero to schema/exocortex.sql."""
    path = schema_dump.write(config.load())
    console.print(f"wrote {path}")


@main.command("lint-sql")
def lint_sql_cmd() -> None:
    """Run plpgsql_check over every PL/pgSQL function (in a scratch database)."""
    problems = lint.lint(config.load())
    for function, message in problems:
        console.print(f"{function}: {message}")
    if problems:
        sys.exit(1)
    console.print("plpgsql_check: no problems")


if __name__ == "__main__":
    main()
