"""`exo events list | counts | merge | drop | rebuild`: the timeline of dated events the worker
reads from notes and chat lines (sql/660_events.sql), and a person's corrections of it, which
survive a rebuild."""

from __future__ import annotations

from datetime import date

import click

from exocortex.cli.output import console, dump, full_option, json_option, table, writer_call
from exocortex.cli.query import as_of_option, bridge_option, run_api
from exocortex.client import api

GROUPS = ("activity", "place", "person", "year", "month", "week", "day", "all")


def _filters(func):
    for option in reversed(
        [
            click.option("--what", help="An activity, or a word that named one (swim, swimming, swam)."),
            click.option(
                "--from-day",
                type=click.DateTime(["%Y-%m-%d"]),
                metavar="DATE",
                help="First day (YYYY-MM-DD).",
            ),
            click.option(
                "--to-day", type=click.DateTime(["%Y-%m-%d"]), metavar="DATE", help="Last day (YYYY-MM-DD)."
            ),
            click.option("--at-place", help="A place, whole or its first or last words."),
            click.option("--with-person", help="A person, whole or their first or last name."),
            bridge_option,
            as_of_option,
            json_option,
        ]
    ):
        func = option(func)
    return func


def _show(rows: list[dict], columns: list[str], as_json: bool, full: bool = False) -> None:
    if as_json:
        dump(rows)
    elif not rows:
        console.print("no events match")
    else:
        table(rows, columns, full=full)


def _day(value) -> date | None:
    return value.date() if value is not None else None


@click.group("events")
def events() -> None:
    """The timeline: what you did, when, how long, how far, how much, where and with whom."""


@events.command("list")
@_filters
@click.option(
    "--limit", default=100, show_default=True, type=click.IntRange(1, 10000), help="At most this many."
)
@click.option("--planned", is_flag=True, help="The plans instead, on the days they name ahead.")
@full_option
def events_list(
    what, from_day, to_day, at_place, with_person, bridge, as_of, as_json, limit, planned, full
) -> None:
    """Events oldest first, each on its day or interval ("3-7 May 2026", "March 2026"), with the
    sentence it was read from (exo.events); plans are never counted as done, and --planned lists
    them."""
    rows = run_api(
        lambda r: api.events(
            r, what=what, from_day=_day(from_day), to_day=_day(to_day), at_place=at_place,
            with_person=with_person, max_events=limit, planned=planned, bridge=bridge, as_of=as_of,
        )
    )  # fmt: skip
    if not as_json:
        for row in rows:
            row["people"] = ", ".join(row["people"])
    _show(
        rows,
        ["event_id", "dates", "activity", "minutes", "km", "amount", "place", "people", "sentence"],
        as_json,
        full,
    )


@events.command("counts")
@_filters
@click.option("--by", "group_by", type=click.Choice(GROUPS), default="activity", show_default=True)
def events_counts(what, from_day, to_day, at_place, with_person, bridge, as_of, as_json, group_by) -> None:
    """Events grouped, most first: how many, on how many days, total minutes, km and amount
    (exo.event_counts)."""
    rows = run_api(
        lambda r: api.events(
            r, what=what, from_day=_day(from_day), to_day=_day(to_day), group_by=group_by,
            at_place=at_place, with_person=with_person, bridge=bridge, as_of=as_of,
        )
    )  # fmt: skip
    _show(rows, ["key", "events", "days", "minutes", "km", "amount", "first_day", "last_day"], as_json)


@events.command("merge")
@click.argument("activity")
@click.argument("into")
def events_merge(activity: str, into: str) -> None:
    """Count every event of ACTIVITY as INTO (cycle into ride), now and after every rebuild."""
    done = writer_call("select exo_private.merge_activities(%s, %s)", (activity, into))
    console.print(f"{done['events']} event(s) of {done['activity']} now count as {done['into']}")


@events.command("drop")
@click.argument("event_id", type=int)
def events_drop(event_id: int) -> None:
    """Drop one wrong event (its id from `exo events list`), now and after every rebuild."""
    done = writer_call("select exo_private.drop_event(%s)", (event_id,))
    console.print(f"dropped {done['activity']} on {done['day']}: {done['sentence']}")


COMMANDS = [events]


@events.command("rebuild")
def events_rebuild() -> None:
    """Read every document for the timeline again (corrections are kept); `exo worker` does it."""
    queued = writer_call("select exo_private.queue_all_events()", ())
    console.print(f"queued {queued} document(s) for the timeline: run `exo worker` (or --queue events)")
