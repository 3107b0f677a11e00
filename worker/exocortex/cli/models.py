"""`exo models`: which endpoint answers for each role, and the local model servers
(registered in exocortex.cli)."""

from __future__ import annotations

import json

import click
from rich.table import Table

from exocortex import config
from exocortex.cli.output import console, err, fail, progress
from exocortex.models import endpoints, services
from exocortex.models.endpoints import EndpointProblem
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
    """The model endpoints (models.chat, models.embeddings, models.rerank) and the local servers."""


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


@models.command("use")
@click.argument("role", type=click.Choice(endpoints.ROLES))
@click.argument("url")
@click.option("--model", help="The model name the endpoint serves (default: the one it lists).")
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="The environment variable holding the endpoint's API key (the key itself is never stored).",
)
@click.option(
    "--timeout-s",
    type=float,
    metavar="SECONDS",
    help="How long each request of the role may take, the probe's too (default: the setting's).",
)
@click.option("--no-probe", is_flag=True, help="Save without calling the endpoint first.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def models_use(
    role: str, url: str, model: str | None, api_key_env: str | None, timeout_s: float | None,
    no_probe: bool, as_json: bool,
) -> None:  # fmt: skip
    """Use the OpenAI-compatible endpoint at URL (llama-server, Ollama, vLLM, LM Studio) for ROLE.

    The endpoint is called as the role calls it (a one-token completion, one embedding, or one
    rerank) and the setting is saved only when it answers. A new embedding model or dimension
    queues every chunk to be embedded again; a new chat model rebuilds the graph from it.
    """
    try:
        used = endpoints.use(
            config.load(), role, url, model=model, api_key_env=api_key_env, timeout_s=timeout_s,
            probe=not no_probe,
        )  # fmt: skip
    except EndpointProblem as exc:
        fail(str(exc))
    if as_json:
        console.print_json(json.dumps(used.__dict__))
        return
    value = used.value
    what = f"{value['model']}" + (f" ({value['dimensions']} dimensions)" if role == "embeddings" else "")
    key = f", key from ${value['api_key_env']}" if value.get("api_key_env") else ""
    timeout = f", timeout {value['timeout_s']:g} s" if isinstance(value.get("timeout_s"), int | float) else ""
    console.print(f"{used.setting}: {value['url']} {what}{key}{timeout}", markup=False)
    console.print(f"probe: {used.probed}" if used.probed else "probe: skipped (--no-probe)")
    if role == "embeddings" and used.queued_chunks:
        console.print(
            f"re-embedding: {used.queued_chunks} chunks queued for {value['model']} "
            f"(`exo worker` embeds them; search uses the new model's vectors as they arrive)"
        )
    elif role == "embeddings" and used.previous.get("model") != value["model"]:
        console.print("re-embedding: no chunk needed it")
    if role == "chat" and used.previous.get("model") != value["model"]:
        console.print(
            f"graph: a new generation built by {value['model']}, "
            f"{used.queued_windows} extraction windows queued (`exo worker` extracts them)"
        )


def _endpoints_table(rows: list[endpoints.Listed]) -> Table:
    table = Table("role", "model", "api key env", "timeout", "answers", box=None, pad_edge=False)
    table.add_column("url", overflow="fold")
    for r in rows:
        if r.answers is None:
            answers = "off" if r.url is None else "unchecked"
        else:
            answers = "[green]yes[/green]" if r.answers else "[red]no[/red]"
        model = (r.model or "") + (f" ({r.dimensions}d)" if r.dimensions else "")
        timeout = f"{r.timeout_s:g} s" if isinstance(r.timeout_s, int | float) else ""
        table.add_row(r.role, model, r.api_key_env or "", timeout, answers, r.url or "")
    return table


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-check", is_flag=True, help="Do not call the endpoints.")
def models_list(as_json: bool, no_check: bool) -> None:
    """What each role uses (url, model, api key variable, timeout) and whether it answers now."""
    try:
        rows = endpoints.listing(config.load(), check=not no_check)
    except EndpointProblem as exc:
        fail(str(exc))
    if as_json:
        console.print_json(json.dumps([r.as_json() for r in rows]))
        return
    console.print(_endpoints_table(rows))
    for r in rows:
        if r.problem:
            err.print(f"[yellow]warning:[/yellow] {r.setting}: {r.problem}")


COMMANDS = [models]
