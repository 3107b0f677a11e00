"""`exo observe` and `exo fact close | show | history | search`: the temporal facts store in a
terminal (registered in exocortex.cli).

Observations and closing write as exo_writer (exo_private.observe, exo_private.close_fact);
show, history and search read as the read-only role (exo.facts, exo.fact_history,
exo.facts_search), so they withhold what the API withholds.
"""

from __future__ import annotations

import json
from typing import IO, Any

import click
import psycopg
from psycopg.types.json import Jsonb
from rich.markup import escape

from exocortex import config
from exocortex.cli.output import console, db_error, fail, full_option, json_option, table, withheld
from exocortex.cli.query import bridge_option, query_argument
from exocortex.client import api
from exocortex.db import writer

FACT_COLUMNS = ["workspace", "attribute", "kind", "value", "valid_from", "valid_to", "sources"]


def read_observations(stream: IO[str]) -> list[Any]:
    """The JSON values of a JSON-lines stream, blank lines skipped; a line that is not JSON
    raises click.UsageError naming it."""
    observations = []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            observations.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise click.UsageError(f"line {number} is not JSON: {exc.msg}") from None
    return observations


@click.command("observe")
@click.argument("file", type=click.File("r", encoding="utf-8"), default="-")
def observe_cmd(file: IO[str]) -> None:
    """Record observations: JSON lines from FILE (default: stdin), each
    {subject, attribute, value, observed_at, source, workspace?}, all in one transaction.

    An observation is authoritative over documents; a new value closes only the current value
    of its own subject and attribute. Errors name the observation by its number (blank lines
    not counted).
    """
    observations = read_observations(file)
    if not observations:
        console.print("no observations")
        return
    try:
        with writer(config.load(), "exo-cli") as conn:
            facts = conn.execute(
                "select count(distinct fact_id) from exo_private.observe(%s)", (Jsonb(observations),)
            ).fetchone()[0]
    except psycopg.Error as exc:
        fail(db_error(exc))
    console.print(f"recorded {len(observations)} observation(s) of {facts} fact(s)")


@click.group("fact")
def fact_group() -> None:
    """Temporal facts: what is true now, what was true then, and what closed it."""


@fact_group.command("close")
@click.argument("subject")
@click.argument("attribute")
@click.option("--at", "at", help="When it stopped being true (a timestamp; default: now).")
@click.option("--why", help="Why (kept as the close reason 'closed: WHY').")
@click.option("--workspace", help="Only in this workspace (default: every workspace where it is current).")
def close_cmd(subject: str, attribute: str, at: str | None, why: str | None, workspace: str | None) -> None:
    """Close the current value(s) of SUBJECT's ATTRIBUTE that stopped being true with no new value.

    Every kind's current row closes (observed, declared and extracted): the fact itself ended.
    """
    try:
        with writer(config.load(), "exo-cli") as conn:
            closed = conn.execute(
                "select exo_private.close_fact(%s, %s, %s, coalesce(%s::timestamptz, now()), %s)",
                (workspace, subject, attribute, at, why),
            ).fetchone()[0]
    except psycopg.Error as exc:
        fail(db_error(exc))
    console.print(f"closed {closed} current fact row(s) of {escape(subject)} / {escape(attribute)}")


def _read(statement: str, args: tuple) -> list[dict[str, Any]]:
    try:
        with api.Reader.from_config(application_name="exo-cli").connection() as conn:
            return conn.execute(statement, args).fetchall()
    except psycopg.Error as exc:
        fail(db_error(exc))


def _print(rows: list[dict[str, Any]], columns: list[str], full: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return
    shown = [row for row in rows if row.get("withheld") is None]
    for row in shown:
        row["sources"] = ", ".join(_source_label(s) for s in row["sources"] or [])
    table(shown, columns, full=full)
    withheld(rows)


def _source_label(source: dict[str, Any]) -> str:
    if source.get("observation_id") is not None:
        return f"observation {source['observation_id']} ({source.get('source')})"
    label = source.get("path") or f"document {source.get('document_id')}"
    return label + (f" chunk {source['chunk_id']}" if source.get("chunk_id") is not None else "")


@fact_group.command("show")
@click.argument("subject")
@click.option("--as-of", "as_of", help="The facts valid at this time (default: now).")
@bridge_option
@full_option
@json_option
def show_cmd(subject: str, as_of: str | None, bridge: tuple[str, ...], full: bool, as_json: bool) -> None:
    """SUBJECT's facts valid now (or --as-of), one row per attribute and kind (exo.facts)."""
    rows = _read(
        "select * from exo.facts(%s, coalesce(%s::timestamptz, now()), %s)", (subject, as_of, list(bridge))
    )
    _print(rows, FACT_COLUMNS, full, as_json)


@fact_group.command("history")
@click.argument("subject")
@click.argument("attribute")
@click.option(
    "--as-of", "as_of", help="Only what had begun by this time, no end after it told (default: all)."
)
@bridge_option
@full_option
@json_option
def history_cmd(
    subject: str, attribute: str, as_of: str | None, bridge: tuple[str, ...], full: bool, as_json: bool
) -> None:
    """Every value SUBJECT's ATTRIBUTE had, with what closed each (exo.fact_history)."""
    rows = _read(
        "select * from exo.fact_history(%s, %s, %s, %s::timestamptz)",
        (subject, attribute, list(bridge), as_of),
    )
    _print(rows, [*FACT_COLUMNS, "close_reason"], full, as_json)


@fact_group.command("search")
@query_argument
@click.option("-k", "max_results", default=20, show_default=True, help="Facts to return.")
@click.option("--as-of", "as_of", help="The facts current at this time (default: now).")
@bridge_option
@full_option
@json_option
def search_cmd(
    query: str, max_results: int, as_of: str | None, bridge: tuple[str, ...], full: bool, as_json: bool
) -> None:
    """Current facts whose subject, attribute or value hold the words, best first (exo.facts_search)."""
    rows = _read(
        "select * from exo.facts_search(%s, %s, %s, %s::timestamptz)",
        (query, max_results, list(bridge), as_of),
    )
    _print(rows, ["subject", *FACT_COLUMNS], full, as_json)


COMMANDS = [observe_cmd, fact_group]
