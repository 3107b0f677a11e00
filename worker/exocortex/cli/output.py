"""What every `exo` command prints with: the two consoles, an error that ends the command, a
database error's message, tables as wide as the terminal, JSON, and the hints that say what was
withheld."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click
import psycopg
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from exocortex import config
from exocortex.db import writer


class Lines(Console):
    """A console whose lines wrap only on a terminal: where none reads them (a log, a pipe) a line
    is written whole, not cut at the 80 columns rich assumes there. Tables keep their width."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:
        super().print(*objects, soft_wrap=not self.is_terminal if soft_wrap is None else soft_wrap, **kwargs)


console = Lines(highlight=False)
err = Lines(stderr=True, highlight=False)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
full_option = click.option(
    "--full",
    is_flag=True,
    help="Whole texts, wrapped (default: one line a row, cut to the terminal's width).",
)


def progress(message: str) -> None:
    err.print(f"[dim]·[/dim] {message}")


def fail(message: str) -> NoReturn:
    """Print the error and end the command with exit code 1."""
    err.print(f"[red]error:[/red] {escape(message)}")
    sys.exit(1)


def db_error(exc: psycopg.Error) -> str:
    """A database error as one line: its primary message, and its hint in parentheses."""
    message = exc.diag.message_primary or str(exc).strip()
    return message + (f" ({exc.diag.message_hint})" if exc.diag.message_hint else "")


def writer_call(sql: str, params: tuple[Any, ...]) -> Any:
    """One exo_private function's answer, called as the writer; a refusal ends the command with
    its message and hint."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            return conn.execute(sql, params).fetchone()[0]
        except psycopg.Error as exc:
            fail(db_error(exc))


def dump(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


def show(renderable: RenderableType) -> None:
    """Print as wide as the terminal (shutil.get_terminal_size: COLUMNS, else the terminal, else 80)."""
    # the console's own width was read once, when it was made: a print's width cannot exceed it
    console.width = shutil.get_terminal_size().columns
    console.print(renderable)


def table(
    rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str | None = None, full: bool = False
) -> None:
    """The rows' columns as a table that fits the terminal: each cell one line, the widest cut with
    an ellipsis; full: whole texts, wrapped (a word longer than its column folded), a line between rows."""
    shown = Table(title=title, show_lines=full, title_justify="left")
    for column in columns:
        shown.add_column(column, overflow="fold")  # a header is never cut
    for row in rows:
        cells = ("" if row.get(c) is None else str(row[c]) for c in columns)
        shown.add_row(
            *(Text(cell, no_wrap=not full, overflow="fold" if full else "ellipsis") for cell in cells)
        )
    show(shown)


def hint_line(hint: dict[str, Any]) -> str:
    """One hint, whatever it counts: "2 chunks, 3 facts about Walter in personal. how" (a count of
    none left out: "about Walter in personal. how")."""
    counts = ", ".join(f"{v} {k}" for k, v in hint.items() if k not in ("subject", "workspace", "how") and v)
    where = f" in {hint['workspace']}" if hint.get("workspace") else ""
    about = escape(hint["subject"]) + where
    said = escape(counts) + " " if counts else ""
    return f"[yellow]withheld:[/yellow] {said}about {about}. {escape(hint['how'])}"


def withheld(rows: Sequence[dict[str, Any]]) -> None:
    """Print the hints of a table answer: its rows with only `withheld` set."""
    for row in rows:
        if row.get("withheld") is not None:
            console.print(hint_line(row["withheld"]))


def hints(report: dict[str, Any]) -> None:
    """Print a search report's hints and degradations."""
    for hint in report.get("hints", []):
        console.print(hint_line(hint))
    for d in report.get("degradations", []):
        console.print(f"[yellow]degraded:[/yellow] {d['component']} ({d['error_class']})")
