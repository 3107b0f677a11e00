"""`exo db | migrate | doctor | schema-dump | lint-sql`: the database server and its schema."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import click
import psycopg
from psycopg.conninfo import make_conninfo
from rich.markup import escape
from rich.table import Table

from exocortex import config
from exocortex.cli.output import console, dump, err, fail, json_option, progress, table
from exocortex.db import ADMIN, ROLES, admin_url, as_uri, role_url
from exocortex.models import services
from exocortex.ops import doctor, lint, profiles, schema_dump
from exocortex.ops.migrate import MigrationError, migrate
from exocortex.runtime import local, replicas, server
from exocortex.runtime import remote as remote_module
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
@click.option(
    "--replica", help="The URL on this replica (exo db replica list); a standby takes readers only."
)
@click.option(
    "--replicas",
    "all_replicas",
    is_flag=True,
    help="The URLs on every standby of the registry, comma-separated: EXO_READER_URLS, for read routing.",
)
@click.option(
    "--remote",
    metavar="HOST",
    help="With --role writer: the URL a worker on HOST (its IP address) uses, at an address this "
    "server listens on (EXO_PG_LISTEN); lets exo_writer in from HOST (pg_hba.conf). Set it there as EXO_WRITER_URL.",
)
def db_url(
    role: str, profile: str | None, replica: str | None, all_replicas: bool, remote: str | None
) -> None:
    """Print a connection URL (with password) for one role, or a user's login role."""
    cfg = config.load()
    if remote is not None:
        if role != "writer" or replica or all_replicas or profile:
            fail("--remote goes with --role writer alone: the URL of a worker on another host")
        try:
            url, lines = remote_module.writer_url(cfg, remote)
        except RuntimeProblem as exc:
            fail(str(exc))
        for line in lines:
            err.print(line)
        click.echo(as_uri(url))
        return
    if all_replicas:
        if role != "reader" or replica is not None:
            fail(
                "--replicas goes with --role reader (and --profile), without --replica: standbys take readers only"
            )
        try:
            standbys = [r for r in replicas.load(cfg) if not r.promoted]
        except RuntimeProblem as exc:
            fail(str(exc))
        if not standbys:
            fail("no replicas to route reads to (`exo db replica add` makes one)")
    if profile is not None:
        if role != "reader":
            fail("--profile goes with --role reader: a user's login role is a reader")
        try:
            url = profiles.url(cfg, profile)
        except profiles.UnknownProfile as exc:
            fail(str(exc))
    else:
        url = role_url(cfg, role if role == ADMIN else f"exo_{role}")
    if all_replicas:
        click.echo(",".join(as_uri(make_conninfo(url, host=r.host, port=r.port)) for r in standbys))
        return
    if replica is not None:
        try:
            found = replicas.find(cfg, replica)
        except RuntimeProblem as exc:
            fail(str(exc))
        if role not in ("reader", ADMIN) and not found.promoted:
            fail(
                f"replica {replica} is a read-only standby: --role {role} connects to the primary (no --replica)"
            )
        url = make_conninfo(url, host=found.host, port=found.port)
    click.echo(as_uri(url))


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


@db.group("replica")
def replica_group() -> None:
    """Read replicas: local hot standbys of the runtime's cluster (PostgreSQL streaming replication)."""


@replica_group.command("add")
@click.argument("name", required=False)
@click.option(
    "--port",
    type=click.IntRange(1024, 65535),
    help="Its port (default: on 127.0.0.1 the first free one from EXO_PG_PORT + 100; with --host EXO_PG_PORT).",
)
@click.option(
    "--host",
    help="Another machine's IP address: prepare the primary (a replication role of its own, a pg_hba.conf "
    "line, a slot) and print the script to run there.",
)
def replica_add(name: str | None, port: int | None, host: str | None) -> None:
    """Make a hot standby NAME (default replicaN) of the whole cluster: a replication slot,
    pg_basebackup, started on its own port, streaming; with --host, on another machine."""
    cfg = config.load()
    try:
        added = replicas.add(cfg, name, port, progress, host=host)
    except RuntimeProblem as exc:
        fail(str(exc))
    r = added.replica
    if added.script:  # the script alone on stdout: `exo db replica add NAME --host H > make-replica.sh`
        for line in added.lines:
            err.print(escape(line))
        err.print(
            escape(f"replica {r.name}: slot {r.slot} keeps WAL for it from now; run the script below on "
                   f"{r.host} (it holds the role's password), then `exo db replica list` shows it streaming")
        )  # fmt: skip
        click.echo(added.script, nl=False)
        return
    for line in added.lines:
        console.print(line)
    console.print(
        f"replica {r.name}: a hot standby on {r.host}:{r.port}, streaming through slot {r.slot}, "
        f"made in {added.seconds:.1f} s; readers: `exo db url --role reader --replica {r.name}`"
    )


@replica_group.command("list")
@json_option
def replica_list(as_json: bool) -> None:
    """Each replica's port, state and lag (bytes of WAL not replayed, seconds), and orphan slots;
    a warning for each that readers pass over (past replicas.max_lag_s, stopped, not streaming)."""
    try:
        rows = replicas.listing(config.load())
    except RuntimeProblem as exc:
        fail(str(exc))
    if as_json:
        dump(rows)
        return
    if not rows:
        console.print("no replicas (`exo db replica add` makes one)")
        return
    show_replicas(rows)


def show_replicas(rows: list[dict], title: str | None = None) -> None:
    """replicas.listing's rows as a table, then a line for each warning: readers pass it over, it
    pins WAL, or nothing a reader cannot lift stops a runaway reader on it."""
    shown = [
        {
            "name": r["name"],
            "where": f"{r['host']}:{r['port']}" if r["host"] else None,
            "state": r["state"],
            "lag bytes": r["lag_bytes"],
            "lag s": None if r["lag_s"] is None else f"{r['lag_s']:.1f}",
            "slot retains": None
            if r["slot_retains_bytes"] is None
            else f"{r['slot_retains_bytes'] / 1024**2:.1f} MB",
            "readers guard": r["readers_guard"] and r["readers_guard"].split(":")[0].split(" (")[0],
        }
        for r in rows
    ]
    table(shown, list(shown[0]), title)
    for row in rows:
        for warning in (row["warning"], row["guard_warning"]):
            if warning:
                console.print(f"[yellow]replica {escape(row['name'])}:[/yellow] {escape(warning)}")


@replica_group.command("remove")
@click.argument("name")
def replica_remove(name: str) -> None:
    """Stop replica NAME, drop its replication slot, delete its data directory."""
    try:
        for line in replicas.remove(config.load(), name):
            console.print(line)
    except (RuntimeProblem, psycopg.Error) as exc:
        fail(str(exc).strip())


@replica_group.command("promote")
@click.argument("name")
def replica_promote(name: str) -> None:
    """Promote replica NAME to a primary of its own (pg_promote); say how clients reach it."""
    cfg = config.load()
    try:
        lines = replicas.promote(cfg, name)
    except (RuntimeProblem, psycopg.Error) as exc:
        fail(str(exc).strip())
    for line in lines:
        console.print(line)
    console.print(
        f"the runtime's server (127.0.0.1:{cfg.port}) is unchanged and no longer feeds it. Point the worker "
        f"and the CLI at the new primary with EXO_DATABASE_URL=$(exo db url --role admin --replica {name}), "
        f"and agents with EXO_READER_URL=$(exo db url --role reader --replica {name})"
    )


@replica_group.command("watch")
@click.argument("name")
def replica_watch(name: str) -> None:
    """Run replica NAME's reader watchdog until stopped (SIGTERM or ^C): every 10 s, what the
    primary's pg_cron job exo-reader-watchdog does, on the standby (where pg_cron runs nothing).
    add and `exo db up` start it, down, remove and promote stop it; one runs at a time (a second
    one ends at once)."""
    cfg = config.load()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())

    def say(line: str) -> None:
        click.echo(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", err=True)

    try:
        replicas.watch(cfg, name, stop, say)
    except KeyboardInterrupt:
        pass
    except RuntimeProblem as exc:
        fail(str(exc))


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
