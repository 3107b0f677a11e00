"""`exo search | context | dossier | related | timeline | status`: the exo API in a terminal.

Each command is one call of exocortex.client.api (one exo SQL function as the read-only
role) printed as a readable table that fits the terminal (whole texts with --full), or as JSON
with --json. Registered in exocortex.cli.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import click
import psycopg
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from exocortex import config
from exocortex.cli.output import (
    console,
    db_error,
    dump,
    err,
    fail,
    full_option,
    hints,
    json_option,
    show,
    table,
    withheld,
)
from exocortex.cli.server import show_replicas
from exocortex.client import api, search_options
from exocortex.ops import profiles
from exocortex.runtime import replicas

#: How the CLI spells a search option; the others are --name-with-dashes. The CLI takes no
#: query vector (query_embedding): the database embeds the question.
FLAGS = {
    "workspaces": "--workspace",
    "open_archive": "--archive/--no-archive",
    "token_budget": "--budget",
    "k": "-k",
}
#: A terminal shows fewer results than an agent's default.
CLI_DEFAULTS = {"k": 10}
AS_OF_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]


def search_flags(function: str) -> Callable[[click.Command], click.Command]:
    """The options of exo.<function> as flags, each with its help from the one description
    (client/search_options.py); a list (workspaces, bridge) is a repeatable flag."""

    def add(command: Any) -> Any:
        for option in reversed(search_options.FUNCTIONS[function]):
            if option.name == "query_embedding":
                continue
            kw: dict[str, Any] = {
                "help": option.help,
                "default": CLI_DEFAULTS.get(option.name, option.default),
            }
            if option.repeatable:
                kw |= {"multiple": True, "default": (), "help": option.help + " Repeatable."}
            elif option.name == "as_of":
                kw |= {"type": click.DateTime(AS_OF_FORMATS), "metavar": "DATE"}
            elif type(option.default) is int:
                kw |= {"type": int, "show_default": True}
            flag = FLAGS.get(option.name, "--" + option.name.replace("_", "-"))
            command = click.option(flag, option.name, **kw)(command)
        return command

    return add


def given(options: dict[str, Any]) -> dict[str, Any]:
    """The search options a command was given; a repeatable flag not given is the database's default."""
    return {name: (value or None) if isinstance(value, tuple) else value for name, value in options.items()}


bridge_option = click.option("--bridge", multiple=True, help=search_options.BRIDGE.help + " Repeatable.")
as_of_option = click.option(
    "--as-of", "as_of", type=click.DateTime(AS_OF_FORMATS), metavar="DATE", help=search_options.AS_OF.help
)
profile_option = click.option(
    "--profile",
    help="Your user (exo user add NAME): your saved documents are searched first and the search is recorded.",
)


def _nonblank(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("is empty: say what to look for.", ctx, param)
    return value


#: The words a search command looks for: refused when empty or only whitespace.
query_argument = click.argument("query", callback=_nonblank)


def run_api(call: Callable[[api.Reader], Any], profile: str | None = None) -> Any:
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
        fail(str(exc))
    except psycopg.Error as exc:
        fail(db_error(exc))


def _shown(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a table answer, without its last rows that only say what was withheld."""
    return [row for row in rows if row.get("withheld") is None]


@click.command("search")
@query_argument
@search_flags("search_json")
@profile_option
@full_option
@json_option
def search_cmd(query: str, profile: str | None, full: bool, as_json: bool, **options: Any) -> None:
    """Ranked chunks for a question, with citations, and what the search did (exo.search_json)."""
    found = run_api(lambda r: api.search_json(r, query, **given(options)), profile)
    if as_json:
        dump(found)
        return
    rows, report = found["results"], found["report"]
    for row in rows:
        row["text"] = " ".join(row["body"].split())
    table(rows, ["rank", "citation", "stage", "text"], full=full)
    why = report["archive"]["why"]
    if report["archive"]["open"]:
        console.print(f"archive open: {escape(str(why))}")
    hints(report)
    _provenance(report)


def _provenance(report: dict[str, Any]) -> None:
    """A search with a profile: its provenance block, and why it was not recorded if it was not."""
    if "provenance" in report:
        click.echo(report["provenance"]["text"])
    if report.get("personal", {}).get("recorded") is False:
        console.print(f"[yellow]not recorded:[/yellow] {escape(report['personal']['why'])}")


@click.command("context")
@query_argument
@search_flags("context_packet_json")
@profile_option
@json_option
def context_cmd(query: str, profile: str | None, as_json: bool, **options: Any) -> None:
    """The cited context packet for a question (exo.context_packet)."""
    packet = run_api(lambda r: api.context_packet(r, query, **given(options)), profile)
    if as_json:
        dump(packet)
        return
    click.echo(packet["text"])
    _provenance(packet["report"])
    err.print(f"{packet['tokens']} of {options['token_budget']} tokens")


@click.command("dossier")
@click.argument("entity")
@click.option("--workspace", help="The entity's workspace (default: every workspace that has it).")
@bridge_option
@as_of_option
@full_option
@json_option
def dossier_cmd(
    entity: str,
    workspace: str | None,
    bridge: tuple[str, ...],
    as_of: datetime | None,
    full: bool,
    as_json: bool,
) -> None:
    """One entity: type, dated mentions across documents, relations (exo.dossier)."""
    found = run_api(lambda r: api.dossier(r, entity, workspace=workspace, bridge=bridge, as_of=as_of))
    if as_json:
        dump(found)
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
            table(one["mentions"], ["written_at", "band", "path", "surface"], "mentions", full)
            for direction in ("out", "in"):
                if one["relations"][direction]:
                    table(
                        one["relations"][direction],
                        ["predicate", "name", "type", "documents"],
                        direction,
                        full,
                    )
        hints(one)


@click.command("related")
@click.argument("entity")
@click.option("--workspace", help="The entity's workspace (default: every workspace that has it).")
@click.option("--depth", default=1, show_default=True, type=click.IntRange(1, 3), help="Hops (level sets).")
@bridge_option
@as_of_option
@full_option
@json_option
def related_cmd(
    entity: str,
    workspace: str | None,
    depth: int,
    bridge: tuple[str, ...],
    as_of: datetime | None,
    full: bool,
    as_json: bool,
) -> None:
    """Entities related to one, up to three hops, hub-safe (exo.related)."""
    rows = run_api(
        lambda r: api.related(r, entity, workspace=workspace, depth=depth, bridge=bridge, as_of=as_of)
    )
    if as_json:
        dump(rows)
        return
    table(_shown(rows), ["depth", "workspace", "type", "name"], full=full)
    withheld(rows)


@click.command("timeline")
@click.argument("entity")
@click.option("--workspace", help="The entity's workspace (default: every workspace that has it).")
@bridge_option
@as_of_option
@full_option
@json_option
def timeline_cmd(
    entity: str,
    workspace: str | None,
    bridge: tuple[str, ...],
    as_of: datetime | None,
    full: bool,
    as_json: bool,
) -> None:
    """One entity's mentions ordered by document date (exo.timeline)."""
    rows = run_api(lambda r: api.timeline(r, entity, workspace=workspace, bridge=bridge, as_of=as_of))
    if as_json:
        dump(rows)
        return
    table(_shown(rows), ["written_at", "band", "workspace", "path", "excerpt"], full=full)
    withheld(rows)


def _counts(counts: dict[str, Any]) -> str:
    """{"chunked": 2, "routed": 1} as "chunked 2, routed 1"."""
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def _audit(audit: dict[str, Any]) -> str:
    closed = f"{audit['closed']} of {audit['facts']} fact rows closed ({float(audit['retirement_rate']):.2%})"
    if audit["ran_at"] is None:
        return f"{closed}; never run"
    return f"{closed}; last run {audit['ran_at']}: {_counts(audit['findings'])}"


#: How `exo status` says each part of exo.status, in this order; a part not here prints as JSON.
STATUS_LINES: dict[str, Callable[[Any], str]] = {
    "as_of": str,
    "documents": lambda d: (
        f"{d['total']} ({_counts(d['by_stage'])}), {d['conversations']} of them conversations"
    ),
    "quarantine": lambda n: f"{n} waiting for a routing decision (exo quarantine list)" if n else "empty",
    "unreadable_folders": lambda u: "\n".join(
        [str(u["total"])] + [f"{f['source']}: {f['path']} ({f['error']})" for f in u["folders"]]
    ),
    "chunks": lambda c: f"{c['total']} ({c['charged']} charged): {_counts(c['by_workspace'])}",
    "embeddings": lambda models: (
        "\n".join(
            f"{m['model']}: {m['vectors']} vectors of {m['dimensions']}{' (active)' if m['active'] else ''}"
            for m in models
        )
        or "no model"
    ),
    "graph": lambda graph: (
        "\n".join(
            f"{ws}: {g['entities']} entities, {g['mentions']} mentions, {g['relations']} relations"
            for ws, g in graph.items()
            if any(g.values())
        )
        or "empty"
    ),
    "deferred_subjects": str,
    "audit": _audit,
    "worker": lambda w: "\n".join(
        [
            f"{w['running']} running, {w['dead']} dead in the last day; last heartbeat {w['last_heartbeat'] or 'never'}"
        ]
        + [
            f"{host}: {h['running']} running ({', '.join(h['queues'])}), {h['processed']} processed"
            for host, h in w.get("hosts", {}).items()
        ]
    ),
}


#: The columns of the queues table (rows by _progress), and of the table of the queues in trouble.
QUEUE_COLUMNS = ["queue", "pending", "in flight", "oldest", "done", "rate/min", "ETA"]
TROUBLE_COLUMNS = ["queue", "failed", "dead", "held by dead workers"]
#: The columns of the work_by_stage table: {header: key}.
STAGE_COLUMNS = {
    "documents": "documents",
    "pending": "pending",
    "in flight": "in_flight",
    "failed": "failed",
    "dead": "dead",
    "lost": "lost",
    "stuck": "stuck",
}


def _duration(seconds: float) -> str:
    """40 as "40s", 300 as "5m", 3725 as "1h 2m", 7200 as "2h": short, for a table's cell."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    hours, minutes = divmod(seconds // 60, 60)
    return f"{hours}h {minutes}m" if hours and minutes else f"{hours}h" if hours else f"{minutes}m"


def _progress(name: str, q: dict[str, Any], as_of: datetime) -> dict[str, Any]:
    """A queue's row: what waits and is in flight (the oldest message's age), what was done in the
    last hour or since the worker on it began, at what rate, and when the rest will be done at
    that rate (the worker's bar: done/total and time left)."""
    window = as_of - datetime.fromisoformat(q["done_since"])
    rate = float(q["rate_per_min"] or 0)
    if not q["depth"]:
        eta = ""
    elif q["eta_s"] is not None:
        eta = _duration(q["eta_s"])
    else:
        eta = "no rate yet" if q["workers"] else "no worker"
    return {
        "queue": name,
        "pending": q["pending"],
        "in flight": q["in_flight"],
        "oldest": None if q["oldest_age_s"] is None else _duration(q["oldest_age_s"]),
        "done": f"{q['done']} in {_duration(window.total_seconds())}",
        "rate/min": f"{rate:.0f}" if rate >= 10 else f"{rate:.2g}",
        "ETA": eta,
        "failed": q["failed"],
        "dead": q["dead"],
        "held by dead workers": q["held_by_dead_workers"],
    }


def _rows(named: dict[str, dict[str, Any]], first: str, columns: dict[str, str]) -> list[dict[str, Any]]:
    """One row per name: {first: name, header: its value of key, ...} for columns {header: key}."""
    return [{first: name} | {h: values[key] for h, key in columns.items()} for name, values in named.items()]


@click.command("status")
@json_option
def status_cmd(as_json: bool) -> None:
    """Documents, chunks, graph, queues (what waits, what got done, rate, ETA) and the worker's heartbeat
    (exo.status), and the runtime's replicas with their lag (exo db replica list); --json: all of it as is."""
    found = run_api(api.status)
    try:
        cfg = config.load()
        listed = replicas.listing(cfg) if replicas.load(cfg) else []
    except replicas.ReplicaProblem as exc:
        err.print(f"replicas: {escape(str(exc))}")
        listed = []
    if listed:
        found["replicas"] = listed
    if as_json:
        dump(found)
        return
    tabled = {"queues", "work_by_stage", "stuck", "replicas"}
    parts = [k for k in STATUS_LINES if k in found] + [k for k in found if k not in {*STATUS_LINES, *tabled}]
    lines = Table.grid(padding=(0, 2))
    lines.add_column(style="bold", no_wrap=True)
    lines.add_column()
    for part in parts:
        say = STATUS_LINES.get(part, lambda value: json.dumps(value, default=str, ensure_ascii=False))
        lines.add_row(part.replace("_", " "), Text(say(found[part])))
    show(lines)
    as_of = datetime.fromisoformat(found["as_of"])
    queues = [
        _progress(name, q, as_of)
        for name, q in sorted(found.get("queues", {}).items())
        if name != "dead_letter"
    ]
    table(queues, QUEUE_COLUMNS, "queues (messages; done: in the last hour, or since the worker began)")
    if trouble := [q for q in queues if any(q[c] for c in TROUBLE_COLUMNS[1:])]:
        table(trouble, TROUBLE_COLUMNS, "queues in trouble (failed: jobs; dead: dead letters)")
    if stages := _rows(found.get("work_by_stage", {}), "stage", STAGE_COLUMNS):
        table(stages, ["stage", *STAGE_COLUMNS], "documents with work, by stage")
    stuck = found.get("stuck") or {}
    if stuck.get("documents"):
        console.print(f"[bold red]stuck[/bold red] {escape(stuck['hint'])}")
    if listed:
        show_replicas(listed, f"replicas (lag bound replicas.max_lag_s: {listed[0]['max_lag_s']:g} s)")


#: The stages `exo documents --stage` takes (exo_private.document_stage).
STAGES = [
    "failed", "skipped", "quarantined", "ocr_pending", "new", "extracted", "routed", "chunked",
    "embedded", "graphed", "deleted",
]  # fmt: skip


@click.command("documents")
@click.option(
    "--stage", "stages", multiple=True, type=click.Choice(STAGES),
    help="Only documents at this stage (default: every stage but deleted). Repeatable.",
)  # fmt: skip
@click.option("--path", "path_glob", help="Only paths that match this glob (* any characters, ? one).")
@click.option(
    "--limit", default=200, show_default=True, type=click.IntRange(1, 1000), help="At most this many."
)
@bridge_option
@full_option
@json_option
def documents_cmd(
    stages: tuple[str, ...],
    path_glob: str | None,
    limit: int,
    bridge: tuple[str, ...],
    full: bool,
    as_json: bool,
) -> None:
    """Each document's path, stage, why it is there and the fix, failed first (exo.documents)."""
    args = {
        "stages": list(stages) or None,
        "path_glob": path_glob,
        "max_results": limit,
        "bridge": list(bridge),
    }
    rows = run_api(lambda r: api.call(r, "documents", args, "rows"))
    if as_json:
        dump(rows)
        return
    if not rows:
        console.print("no documents" + (" at stage " + ", ".join(stages) if stages else "") + " match")
        return
    for row in rows:
        row["path"] = row["path"] if row["path"] is not None else f"(withheld, document {row['document_id']})"
    table(rows, ["path", "stage", "reason", "fix"], full=full)
    if len(rows) == limit:
        console.print(f"the first {limit} shown: --limit N shows more, --stage or --path fewer")


COMMANDS = [search_cmd, context_cmd, dossier_cmd, related_cmd, timeline_cmd, status_cmd, documents_cmd]
