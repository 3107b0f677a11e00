"""`exo models`: the local model servers (registered in exocortex.cli)."""

from __future__ import annotations

import json

import click
from rich.table import Table

from exocortex import config
from exocortex.cli.output import console, err, fail, progress
from exocortex.models import services
from exocortex.models.services import ServiceProblem, ServiceStatus


def _table(statuses: list[ServiceStatus]) -> Table:
    table = Table("service", "where", "state", "pid", "model", box=None, pad_edge=False)
    table.add_column("url", overflow="fold")
    for s in statuses:
        if s.running:
            state = "[green]started[/green]" if s.started else "[green]running[/green]"
        else:
            state = "off" if s.where == "off" else "[red]not running[/red]"
        table.add_row(s.name, s.where, state, str(s.pid or ""), s.model or "", s.url or "")
    return table


@click.group()
def models() -> None:
    """The model servers named by the models.* settings (chat, embeddings)."""


@models.command("up")
def models_up() -> None:
    """Start the local chat and embedding servers and wait until they answer; idempotent."""
    try:
        statuses = services.up(config.load(), progress)
    except ServiceProblem as exc:
        fail(str(exc))
    console.print(_table(statuses))
    remote_down = [s for s in statuses if s.where == "remote" and not s.running]
    for s in remote_down:
        err.print(f"[yellow]warning:[/yellow] {s.setting} points at {s.url}, which does not answer")


@models.command("down")
def models_down() -> None:
    """Stop the servers `exo models up` started (SIGTERM, SIGKILL after 10 s); idempotent."""
    try:
        for line in services.down(config.load()):
            console.print(line)
    except ServiceProblem as exc:
        fail(str(exc))


@models.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def models_status(as_json: bool) -> None:
    """Each service: local or remote, whether it answers, pid, model."""
    try:
        statuses = services.status(config.load())
    except ServiceProblem as exc:
        fail(str(exc))
    if as_json:
        console.print_json(json.dumps([s.as_json() for s in statuses]))
    else:
        console.print(_table(statuses))


COMMANDS = [models]
