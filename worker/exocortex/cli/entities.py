"""`exo entity merge | split | unmerge | aliases | log`: a person corrects the graph's identity
(registered in exocortex.cli).

Entities are named by id or by name (its canonical key, in the current generation; --workspace
when the name is an entity in several). Everything runs as exo_writer through
exo_private.merge_entities / split_entity / unmerge_entities, which log what moved in
exo_private.entity_merge_log, so every correction can be undone.
"""

from __future__ import annotations

import json

import click
import psycopg
from psycopg.rows import dict_row
from rich.markup import escape

from exocortex import config
from exocortex.cli.output import console, db_error, fail, full_option, json_option, table
from exocortex.db import writer

ENTITY = """
select e.id, e.workspace, e.name, e.type::text as type, e.sense
from exo_private.entities e
where e.generation = (select max(g.generation) from exo_private.extraction_generations g
                      where g.workspace = e.workspace)
  and (%(id)s::bigint is null and e.canonical_key = exo_private.canonical_key(%(name)s) or e.id = %(id)s)
  and (%(workspace)s::text is null or e.workspace = %(workspace)s)
order by e.workspace, e.sense
"""


def _entity(conn: psycopg.Connection, ref: str, workspace: str | None) -> dict:
    """The entity ref names: an id, else a name of the current generation (one workspace)."""
    args = {"id": int(ref) if ref.isdigit() else None, "name": ref, "workspace": workspace}
    rows = conn.execute(ENTITY, args).fetchall()
    if not rows:
        fail(f"no entity {ref!r}" + (f" in workspace {workspace}" if workspace else ""))
    if len({r["workspace"] for r in rows}) > 1:
        fail(
            f"{ref!r} is an entity in workspaces {', '.join(r['workspace'] for r in rows)}: pass --workspace"
        )
    if len(rows) > 1:
        fail(
            f"{ref!r} means {len(rows)} things in workspace {rows[0]['workspace']}: pass one's id ({', '.join(_label(r) for r in rows)})"
        )
    return rows[0]


def _label(entity: dict) -> str:
    sense = f", sense {entity['sense']}" if entity.get("sense") else ""
    return f"{entity['name']} ({entity['type']}{sense}, entity {entity['id']}, {entity['workspace']})"


workspace_option = click.option(
    "--workspace", help="The workspace of the entities named (when a name is in several)."
)


@click.group("entity")
def entity_group() -> None:
    """Correct the graph's entities: merge two into one, split a name off, undo a merge."""


@entity_group.command("merge")
@click.argument("keep")
@click.argument("other")
@workspace_option
def merge_cmd(keep: str, other: str, workspace: str | None) -> None:
    """Merge OTHER into KEEP: its mentions, relations and aliases move, its name becomes KEEP's alias."""
    try:
        with writer(config.load(), "exo-cli") as conn:
            conn.row_factory = dict_row
            kept, gone = _entity(conn, keep, workspace), _entity(conn, other, workspace)
            log_id = conn.execute(
                "select exo_private.merge_entities(%s, %s) as id", (kept["id"], gone["id"])
            ).fetchone()["id"]
    except psycopg.Error as exc:
        fail(db_error(exc))
    console.print(
        f"merged {escape(_label(gone))} into {escape(_label(kept))}: log {log_id} (exo entity unmerge {log_id})"
    )


@entity_group.command("split")
@click.argument("entity")
@click.option("--alias", help="A name of ENTITY to split off as an entity of its own.")
@click.option(
    "--address", help="An email address: the correspondent who writes so is another thing of that name."
)
@click.option("--type", "type_", help="An entity type (Place, Org, ...): the name so typed is another thing.")
@workspace_option
def split_cmd(
    entity: str, alias: str | None, address: str | None, type_: str | None, workspace: str | None
) -> None:
    """Split ENTITY in two. --alias: the mentions written with that other name, and the relations
    of the windows that name it only so, move to an entity of that name. --address or --type: the
    name means two things (two people called Sam Lee, Jordan a person and a country); what that
    address or type marks moves to the name's new sense, in this generation and every later one."""
    if sum(x is not None for x in (alias, address, type_)) != 1:
        fail("give exactly one of --alias, --address and --type")
    try:
        with writer(config.load(), "exo-cli") as conn:
            conn.row_factory = dict_row
            ent = _entity(conn, entity, workspace)
            if alias is not None:
                row = conn.execute(
                    "select l.id, l.other_id from exo_private.entity_merge_log l "
                    "where l.id = exo_private.split_entity(%s, %s)",
                    (ent["id"], alias),
                ).fetchone()
            else:
                kind, anchor = ("address", address) if address is not None else ("type", type_)
                new_id = conn.execute(
                    "select exo_private.split_sense(%s, %s, %s) as id", (ent["id"], kind, anchor)
                ).fetchone()["id"]
    except psycopg.Error as exc:
        fail(db_error(exc))
    if alias is None:
        console.print(
            f"{escape(_label(ent))} means two things: the one of {kind} {escape(anchor)} is entity {new_id} "
            f"(undo: exo entity merge {ent['id']} {new_id})"
        )
        return
    console.print(
        f"split {escape(alias)} off {escape(_label(ent))} as entity {row['other_id']}: log {row['id']} "
        f"(undo: exo entity merge {ent['id']} {row['other_id']})"
    )


@entity_group.command("unmerge")
@click.argument("log_id", type=int)
def unmerge_cmd(log_id: int) -> None:
    """Undo merge LOG_ID (exo entity log lists them): the merged entity comes back as it was
    (after a new extraction generation: its name is split off the entity it is on now)."""
    try:
        with writer(config.load(), "exo-cli") as conn:
            restored = conn.execute("select exo_private.unmerge_entities(%s)", (log_id,)).fetchone()[0]
    except psycopg.Error as exc:
        fail(db_error(exc))
    if restored is None:
        # the merge was replayed in a newer extraction generation that has not met the name yet
        console.print(f"undid merge {log_id}: the name is no entity yet; its next extraction keeps it apart")
        return
    console.print(f"undid merge {log_id}: entity {restored} is back")


@entity_group.command("aliases")
@click.argument("entity")
@workspace_option
@full_option
@json_option
def aliases_cmd(entity: str, workspace: str | None, full: bool, as_json: bool) -> None:
    """ENTITY's other names, with their evidence: how each was made and the window that showed it."""
    try:
        with writer(config.load(), "exo-cli") as conn:
            conn.row_factory = dict_row
            ent = _entity(conn, entity, workspace)
            rows = conn.execute(
                "select a.surface as alias, a.how, d.path as evidence, a.created_at::date::text as since "
                "from exo_private.entity_aliases a "
                "left join exo_private.extraction_windows w on w.id = a.window_id "
                "left join exo_private.documents d on d.id = w.document_id "
                "where a.entity_id = %s order by a.alias_key",
                (ent["id"],),
            ).fetchall()
    except psycopg.Error as exc:
        fail(db_error(exc))
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return
    table(rows, ["alias", "how", "evidence", "since"], _label(ent), full)


@entity_group.command("log")
@click.option("--workspace", help="Only this workspace.")
@full_option
@json_option
def log_cmd(workspace: str | None, full: bool, as_json: bool) -> None:
    """The merges and splits made, newest first, and whether each was undone (each outlives a
    new extraction generation: it is kept by the names' canonical keys)."""
    try:
        with writer(config.load(), "exo-cli") as conn:
            conn.row_factory = dict_row
            rows = conn.execute(
                "select l.id, l.kind, l.workspace, l.kept_id, l.kept_name as kept, l.other_id, "
                "coalesce(l.other_name, l.moved -> 'entity' ->> 'name', e.name) as other, "
                "jsonb_array_length(l.moved -> 'mentions') as mentions, "
                "jsonb_array_length(l.moved -> 'relations') as relations, "
                "l.made_at::text as made_at, l.undone_at::text as undone_at "
                "from exo_private.entity_merge_log l left join exo_private.entities e on e.id = l.other_id "
                "where %s::text is null or l.workspace = %s order by l.id desc",
                (workspace, workspace),
            ).fetchall()
    except psycopg.Error as exc:
        fail(db_error(exc))
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return
    table(
        rows,
        [
            "id",
            "kind",
            "workspace",
            "kept_id",
            "kept",
            "other_id",
            "other",
            "mentions",
            "relations",
            "made_at",
            "undone_at",
        ],
        full=full,
    )


COMMANDS = [entity_group]
