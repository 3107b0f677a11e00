"""`exo user add | list` and `exo kb list | accept | decline | pin | remove | up | down | decay`:
the personal knowledge base per user in a terminal (registered in exocortex.cli).

A user is a profile and its login role, made as the admin (exocortex.ops.profiles); the list and
the decay run as exo_writer. A user's base is read and acted on as that user's login role,
through the API's one narrow recording path (exo.kb_items, exo.kb_accept_suggestion, ...),
exactly as the user's agent would: the profile is the session's, never an argument.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import psycopg
from rich.markup import escape

from exocortex import config
from exocortex.cli.output import console, db_error, err, fail, full_option, json_option, table
from exocortex.client import api
from exocortex.db import writer
from exocortex.ops import profiles

profile_option = click.option("--profile", required=True, help="The user (exo user add NAME).")

#: CLI verb -> the API's action (exo.kb_<action>).
ACTIONS = {
    "accept": ("accept_suggestion", "Save a suggested document to the profile's base."),
    "decline": (
        "decline_suggestion",
        "Decline a suggestion: suggested again only after twice as many fetches.",
    ),
    "pin": ("force_pin", "Pin a document: always searched first, never demoted."),
    "remove": ("force_remove", "Take a document out of the profile's base entirely."),
    "up": ("thumbs_up", "Mark a document useful (raises its score)."),
    "down": ("thumbs_down", "Mark a document not useful (lowers its score)."),
}


def _writer(statement: str, args: tuple) -> Any:
    try:
        with writer(config.load(), "exo-cli") as conn:
            return conn.execute(statement, args).fetchone()[0]
    except psycopg.Error as exc:
        fail(db_error(exc))


def _as_profile(profile: str, call: Any) -> Any:
    """Call the API as profile's login role."""
    try:
        return call(api.Reader.for_profile(profile, application_name="exo-cli"))
    except profiles.UnknownProfile as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(1)
    except psycopg.Error as exc:
        fail(db_error(exc))


@click.group("user")
def user_group() -> None:
    """Users (people or agent profiles), each with a personal knowledge base."""


@user_group.command("add")
@click.argument("name")
def user_add_cmd(name: str) -> None:
    """Make user NAME (letters, digits, _ . @ -) and its login role, and print the role's URL: a
    session of it is that user (its searches record in its base; --profile NAME connects with it)."""
    try:
        url, made = profiles.add(config.load(), name)
    except psycopg.Error as exc:
        fail(db_error(exc))
    err.print(f"user {escape(name)} {'added' if made else 'exists'}; its URL:")
    click.echo(url)


@user_group.command("list")
@json_option
def user_list_cmd(as_json: bool) -> None:
    """Every user, with the searches recorded and the documents in each state."""
    rows = _writer(
        """select coalesce(jsonb_agg(jsonb_build_object(
                   'name', p.name, 'searches', p.searches,
                   'claimed', (select count(*) from exo_private.kb_items i
                               where i.profile_id = p.id and i.state = 'claimed'),
                   'pinned', (select count(*) from exo_private.kb_items i
                              where i.profile_id = p.id and i.state = 'pinned'),
                   'suggested', (select count(*) from exo_private.kb_items i
                                 where i.profile_id = p.id and i.state = 'suggested')) order by p.name), '[]')
           from exo_private.kb_profiles p""",
        (),
    )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table(rows, ["name", "searches", "pinned", "claimed", "suggested"])


@click.group("kb")
def kb_group() -> None:
    """A user's personal knowledge base: suggestions, saved and pinned documents, decay."""


@kb_group.command("list")
@profile_option
@full_option
@json_option
def kb_list_cmd(profile: str, full: bool, as_json: bool) -> None:
    """The profile's base: pinned, claimed, suggested, surfaced and demoted documents."""
    rows = _as_profile(profile, api.kb_items)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return
    for row in rows:
        row["document"] = row["title"] or row["path"] or "(withheld)"
        row["score"] = None if row["score"] is None else f"{row['score']:.2f}"
    table(rows, ["document_id", "document", "state", "fetch_count", "score", "thumbs"], full=full)
    for row in rows:
        if row["suggestion"]:
            click.echo(f"{row['suggestion']} (exo kb accept {row['document_id']} --profile {profile})")


def _action_command(verb: str, action: str, help_text: str) -> click.Command:
    @click.command(verb, help=help_text)
    @click.argument("document_id", type=int)
    @profile_option
    def command(document_id: int, profile: str) -> None:
        item = _as_profile(profile, lambda r: api.kb_act(r, action, document_id))
        console.print(f"document {document_id}: {item['state']} (fetched {item['fetch_count']} times)")

    return command


for _verb, (_action, _help) in ACTIONS.items():
    kb_group.add_command(_action_command(_verb, _action, _help))


@kb_group.command("decay")
@click.option("--profile", help="Only this user (default: every user).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def kb_decay_cmd(profile: str | None, as_json: bool) -> None:
    """Run the daily decay now (pg_cron runs it daily): rescore, pin and demote."""
    done = _writer("select exo_private.kb_decay(%s)", (profile,))
    if as_json:
        click.echo(json.dumps(done))
        return
    console.print(f"scored {done['scored']}, pinned {done['pinned']}, demoted {done['demoted']}")


COMMANDS = [user_group, kb_group]
