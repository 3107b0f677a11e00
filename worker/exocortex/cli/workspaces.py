"""`exo workspace add | list | rename | remove`: the workspaces a person defines, each with its
own chunk partitions, indexes and graph (sql/550_workspaces.sql does the work, as exo_owner)."""

from __future__ import annotations

from typing import Any

import click

from exocortex import config
from exocortex.cli.output import console, dump, json_option, table, writer_call
from exocortex.db import writer


@click.group("workspace")
def workspace() -> None:
    """Workspaces: each has its own storage, indexes and graph; search fans out over them."""


@workspace.command("list")
@json_option
def workspace_list(as_json: bool) -> None:
    """Each workspace with its description and its documents' and chunks' counts."""
    with writer(config.load(), "exo-cli") as conn:
        cur = conn.execute(
            "select name, description, documents, chunks, quarantined_for, is_default, created_at "
            "from exo_private.workspace_counts()"
        )
        rows = [dict(zip([c.name for c in cur.description], row, strict=True)) for row in cur]
    if as_json:
        dump(rows)
        return
    for row in rows:
        row["name"] += " (default)" if row["is_default"] else ""
    table(rows, ["name", "documents", "chunks", "description"])
    waiting = [r for r in rows if r["quarantined_for"]]
    for row in waiting:
        console.print(f"{row['quarantined_for']} quarantined document(s) name {row['name']}")


@workspace.command("add")
@click.argument("name")
@click.option("--description", default="", help="What belongs in it, for your own record.")
def workspace_add(name: str, description: str) -> None:
    """Create the workspace NAME (lower-case letters, digits, - and _) with its storage and graph;
    documents waiting in quarantine because their frontmatter named it are routed there."""
    report = writer_call("select exo_private.add_workspace(%s, %s)", (name, description))
    console.print(f"added workspace {report['workspace']}")
    if report["routed_from_quarantine"]:
        console.print(
            f"{report['routed_from_quarantine']} document(s) whose frontmatter named it left quarantine for it"
        )


@workspace.command("rename")
@click.argument("old")
@click.argument("new")
def workspace_rename(old: str, new: str) -> None:
    """Rename the workspace OLD to NEW, with its facts, observations and the settings that name it.
    Refused while documents live in OLD (it says how to move them: add NEW, remove OLD --move-to NEW)."""
    report = writer_call("select exo_private.rename_workspace(%s, %s)", (old, new))
    console.print(f"renamed workspace {report['was']} to {report['workspace']}")
    _print_carried(report)


@workspace.command("remove")
@click.argument("name")
@click.option(
    "--move-to",
    "move_to",
    metavar="OTHER",
    help="Move its documents (processed again there), conversations, facts and observations to OTHER first.",
)
def workspace_remove(name: str, move_to: str | None) -> None:
    """Remove the workspace NAME with its storage and graph. Refused while anything lives there,
    unless --move-to OTHER moves it all to OTHER in the same transaction."""
    report = writer_call("select exo_private.remove_workspace(%s, %s)", (name, move_to))
    if move_to:
        console.print(
            f"moved {report['documents']} document(s) ({report['conversations']} of them conversations) "
            f"to {move_to}; the worker embeds and extracts them there"
        )
    console.print(f"removed workspace {name}")
    _print_carried(report)


def _print_carried(report: dict[str, Any]) -> None:
    where = report.get("moved_to") or report.get("workspace")
    if report.get("facts") or report.get("observations"):
        console.print(
            f"{report['facts']} fact row(s) and {report['observations']} observation(s) now in {where}"
        )
    if report.get("settings"):
        console.print("settings changed: " + ", ".join(report["settings"]))


COMMANDS = [workspace]
