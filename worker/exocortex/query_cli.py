"""`exo search | context | dossier | related | timeline | status`: the exo API in a terminal.

Each command is one call of exocortex.api (one exo SQL function as the read-only
role) printed as a readable table, or as JSON with --json. Registered in
exocortex.cli.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
import psycopg
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from exocortex import api, profiles

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
workspace_option = click.option(
    "--workspace", "workspaces", multiple=True, help="Only this workspace (repeatable; default: all)."
)
bridge_option = click.option(
    "--bridge", multiple=True, help="A deferred subject (name or alias) to include on purpose (repeatable)."
)
profile_option = click.option(
    "--profile",
    help="Your user (exo user add NAME): your saved documents are searched first and the search is recorded.",
)
archive_option = click.option(
    "--archive/--no-archive",
    "open_archive",
    default=None,
    help="Open (or keep closed) the archival band; default: a temporal signal in the question decides.",
)


def _run(call: Callable[[api.Reader], Any], profile: str | None = None) -> Any:
    """Call the API, as profile's login role when one is given; a database error, a refused
    argument or an unknown profile ends the command with its message."""
    try:
        reader = (
            api.Reader.for_profile(profile, application_name="exo-cli")
            if profile is not None
            else api.Reader.from_config(application_name="exo-cli")
        )
        return call(reader)
    except profiles.UnknownProfile as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(1)
    except psycopg.Error as exc:
        message = exc.diag.message_primary or str(exc)
        hint = f" ({exc.diag.message_hint})" if exc.diag.message_hint else ""
        err.print(f"[red]error:[/red] {escape(message + hint)}")
        sys.exit(1)


def _dump(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str | None = None) -> None:
    table = Table(title=title, show_lines=False, title_justify="left")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(escape("" if row.get(c) is None else str(row[c])) for c in columns))
    console.print(table)


def _shown(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a table answer, without its last rows that only say what was withheld."""
    return [row for row in rows if row.get("withheld") is None]


def _hint_line(hint: dict[str, Any]) -> str:
    """One hint, whatever it counts: "2 chunks, 3 mentions about Walter in personal. how"."""
    counts = ", ".join(f"{v} {k}" for k, v in hint.items() if k not in ("subject", "workspace", "how"))
    where = f" in {hint['workspace']}" if hint.get("workspace") else ""
    about = escape(hint["subject"]) + where
    return f"[yellow]withheld:[/yellow] {escape(counts)} about {about}. {escape(hint['how'])}"


def _withheld(rows: Sequence[dict[str, Any]]) -> None:
    """Print the hints of a table answer: its rows with only `withheld` set."""
    for row in rows:
        if row.get("withheld") is not None:
            console.print(_hint_line(row["withheld"]))


def _hints(report: dict[str, Any]) -> None:
    for hint in report.get("hints", []):
        console.print(_hint_line(hint))
    for d in report.get("degradations", []):
        console.print(f"[yellow]degraded:[/yellow] {d['component']} ({d['error_class']})")


@click.command("search")
@click.argument("query")
@click.option("-k", default=10, show_default=True, help="Results to return.")
@workspace_option
@archive_option
@bridge_option
@profile_option
@json_option
def search_cmd(
    query: str,
    k: int,
    workspaces: tuple[str, ...],
    open_archive: bool | None,
    bridge: tuple[str, ...],
    profile: str | None,
    as_json: bool,
) -> None:
    """Ranked chunks for a question, with citations, and what the search did (exo.search_json)."""
    options = {"workspaces": workspaces or None, "open_archive": open_archive, "bridge": bridge}
    found = _run(lambda r: api.search_json(r, query, k=k, **options), profile)
    if as_json:
        _dump(found)
        return
    rows, report = found["results"], found["report"]
    for row in rows:
        row["text"] = " ".join(row["body"].split())[:100]
    _table(rows, ["rank", "citation", "stage", "text"])
    why = report["archive"]["why"]
    if report["archive"]["open"]:
        console.print(f"archive open: {escape(str(why))}")
    _hints(report)
    _provenance(report)


def _provenance(report: dict[str, Any]) -> None:
    """A search with a profile: its provenance block, and why it was not recorded if it was not."""
    if "provenance" in report:
        click.echo(report["provenance"]["text"])
    if report.get("personal", {}).get("recorded") is False:
        console.print(f"[yellow]not recorded:[/yellow] {escape(report['personal']['why'])}")


@click.command("context")
@click.argument("query")
@click.option("--budget", "token_budget", default=4000, show_default=True, help="Token budget of the packet.")
@workspace_option
@archive_option
@bridge_option
@profile_option
@json_option
def context_cmd(
    query: str,
    token_budget: int,
    workspaces: tuple[str, ...],
    open_archive: bool | None,
    bridge: tuple[str, ...],
    profile: str | None,
    as_json: bool,
) -> None:
    """The cited context packet for a question (exo.context_packet)."""
    packet = _run(
        lambda r: api.context_packet(
            r,
            query,
            token_budget=token_budget,
            workspaces=workspaces or None,
            open_archive=open_archive,
            bridge=bridge,
        ),
        profile,
    )
    if as_json:
        _dump(packet)
        return
    click.echo(packet["text"])
    _provenance(packet["report"])
    err.print(f"{packet['tokens']} of {token_budget} tokens")


@click.command("dossier")
@click.argument("entity")
@click.option("--workspace", help="The entity's workspace (default: every workspace that has it).")
@bridge_option
@json_option
def dossier_cmd(entity: str, workspace: str | None, bridge: tuple[str, ...], as_json: bool) -> None:
    """One entity: type, dated mentions across documents, relations (exo.dossier)."""
    found = _run(lambda r: api.dossier(r, entity, workspace=workspace, bridge=bridge))
    if as_json:
        _dump(found)
        return
    for one in found if isinstance(found, list) else [found]:
        if one.get("withheld"):
            console.print(
                f"[bold]entity {one['entity_id']}[/bold] ({one['type']}, {one['workspace']}): withheld"
            )
        else:
            console.print(
                f"[bold]{escape(one['name'])}[/bold] ({one['type']}, {one['workspace']}): "
                f"{one['mention_count']} mention(s) in {one['document_count']} document(s)"
            )
            _table(one["mentions"], ["written_at", "band", "path", "surface"], title="mentions")
            for direction in ("out", "in"):
                if one["relations"][direction]:
                    _table(
                        one["relations"][direction],
                        ["predicate", "name", "type", "documents"],
                        title=direction,
                    )
        _hints(one)


@click.command("related")
@click.argument("entity")
@click.option("--workspace", help="The entity's workspace (default: every workspace that has it).")
@click.option("--depth", default=1, show_default=True, type=click.IntRange(1, 3), help="Hops (level sets).")
@bridge_option
@json_option
def related_cmd(
    entity: str, workspace: str | None, depth: int, bridge: tuple[str, ...], as_json: bool
) -> None:
    """Entities related to one, up to three hops, hub-safe (exo.related)."""
    rows = _run(lambda r: api.related(r, entity, workspace=workspace, depth=depth, bridge=bridge))
    if as_json:
        _dump(rows)
        return
    _table(_shown(rows), ["depth", "workspace", "type", "name"])
    _withheld(rows)


@click.command("timeline")
@click.argument("entity")
@click.option("--workspace", help="The entity's workspace (default: every workspace that has it).")
@bridge_option
@json_option
def timeline_cmd(entity: str, workspace: str | None, bridge: tuple[str, ...], as_json: bool) -> None:
    """One entity's mentions ordered by document date (exo.timeline)."""
    rows = _run(lambda r: api.timeline(r, entity, workspace=workspace, bridge=bridge))
    if as_json:
        _dump(rows)
        return
    _table(_shown(rows), ["written_at", "band", "workspace", "path", "excerpt"])
    _withheld(rows)


@click.command("status")
@json_option
def status_cmd(as_json: bool) -> None:
    """Pipeline stages, queues, graph totals and the worker's heartbeat (exo.status)."""
    found = _run(api.status)
    if as_json:
        _dump(found)
        return
    tabled = {"queues", "work_by_stage", "stuck"}
    for key, value in found.items():
        if key not in tabled:
            console.print(f"[bold]{key}[/bold] {escape(json.dumps(value, default=str, ensure_ascii=False))}")
    work = ["pending", "in_flight", "failed", "dead"]
    queues = [{"queue": q, **v} for q, v in found.get("queues", {}).items() if q != "dead_letter"]
    _table(
        queues, ["queue", *work, "held_by_dead_workers", "oldest_age_s"], "queues (messages; failed: jobs)"
    )
    stages = [{"stage": s, **v} for s, v in found.get("work_by_stage", {}).items()]
    if stages:
        _table(stages, ["stage", "documents", *work, "lost", "stuck"], "documents with work, by stage")
    stuck = found.get("stuck") or {}
    if stuck.get("documents"):
        console.print(f"[bold red]stuck[/bold red] {escape(stuck['hint'])}")


COMMANDS = [search_cmd, context_cmd, dossier_cmd, related_cmd, timeline_cmd, status_cmd]
