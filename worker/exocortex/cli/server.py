"""`exo db | migrate | doctor | schema-dump | lint-sql`: the database server and its schema."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click
import psycopg
from rich.table import Table

from exocortex import config
from exocortex.cli.output import console, fail, progress
from exocortex.db import ADMIN, ROLES, admin_url, as_uri, role_url
from exocortex.models import services
from exocortex.ops import doctor, lint, profiles, schema_dump
from exocortex.ops.migrate import MigrationError, migrate
from exocortex.runtime import local, server
from exocortex.runtime.local import RuntimeProblem


@click.group()
def db() -> None:
    """The database server: the embedded runtime, or EXO_DATABASE_URL's server."""


@db.command("up")
def db_up() -> None:
    """Provision (first time), start and check the server; idempotent."""
    try:
        result = server.up(config.load(), progress)
    except RuntimeProblem as exc:
        fail(str(exc))
    console.print(result.summary)


@db.command("down")
def db_down() -> None:
    """Stop the model servers `exo models up` started with this runtime, then the local server
    (pg_ctl stop -m fast); the data stays. With EXO_DATABASE_URL nothing is stopped (`exo models
    down` stops the model servers)."""
    cfg = config.load()
    # The model servers of this runtime are those recorded in its folder (EXO_HOME/models, by
    # `exo models up`). They go with the server only when it is this runtime's that stops: with
    # EXO_DATABASE_URL the server is elsewhere and not ours, and so are the models it uses.
    if cfg.external_url:
        console.print("model servers: left running (EXO_DATABASE_URL is set; `exo models down` stops them)")
    else:
        for line in services.down(cfg):
            console.print(line)
    try:
        console.print(server.down(cfg))
    except RuntimeProblem as exc:
        fail(str(exc))


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
@click.option("--profile", help="With --role reader: the login role of this user (exo user add NAME).")
def db_url(role: str, profile: str | None) -> None:
    """Print a connection URL (with password) for one role, or a user's login role."""
    if profile is not None:
        if role != "reader":
            fail("--profile goes with --role reader: a user's login role is a reader")
        try:
            click.echo(profiles.url(config.load(), profile))
        except profiles.UnknownProfile as exc:
            fail(str(exc))
        return
    name = role if role == ADMIN else f"exo_{role}"
    click.echo(as_uri(role_url(config.load(), name)))


@db.command("copy")
@click.argument("name")
def db_copy(name: str) -> None:
    """Copy the memory to database NAME (while pg_cron runs; stop its other clients first)."""
    try:
        console.print(server.copy_database(config.load(), name))
    except (server.CopyRefused, psycopg.Error) as exc:
        fail(str(exc).strip())


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
            fail("psql is not on PATH; install postgresql-client")
        argv = [psql, url, *args]
    else:
        argv = [*local.client_argv(cfg, "psql"), url, *args]
    os.execvp(argv[0], argv)


@click.command("migrate")
def migrate_cmd() -> None:
    """Create roles and extensions, install pgmq, apply migrations, re-apply sql/."""
    cfg = config.load()
    try:
        result = migrate(cfg, admin_url(cfg), progress)
    except MigrationError as exc:
        fail(str(exc))
    console.print(
        f"migrated {result.database}: {len(result.applied)} migration(s) applied, "
        f"{result.sql_files} sql file(s) re-applied, {len(result.jobs.jobs)} pg_cron job(s) scheduled"
    )


@click.command("doctor")
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


@click.command("schema-dump")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path), default=schema_dump.DUMP_FILE)
def schema_dump_cmd(path: Path) -> None:
    """Write the normalised schema of a database migrated from zero to PATH (schema/exocortex.sql)."""
    path = schema_dump.write(config.load(), path)
    console.print(f"wrote {path}")


@click.command("lint-sql")
def lint_sql_cmd() -> None:
    """Run plpgsql_check over every PL/pgSQL function (in a scratch database)."""
    problems = lint.lint(config.load())
    for function, message in problems:
        console.print(f"{function}: {message}")
    if problems:
        sys.exit(1)
    console.print("plpgsql_check: no problems")


COMMANDS = [db, migrate_cmd, doctor_cmd, schema_dump_cmd, lint_sql_cmd]
