"""`exo ingest | watch | rebuild | quarantine | defer | owner | import-chat`: what goes into memory, through files and exports, and how it is routed and deferred."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import click
import psycopg
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from exocortex import config
from exocortex.cli.output import console, err, fail, show
from exocortex.db import writer
from exocortex.ingest import chat, pipeline, watch


def print_summary(s: pipeline.IngestSummary) -> None:
    console.print(
        f"[bold]ingested {s.root}[/bold] in {s.seconds:.1f} s: {s.seen} files seen, "
        f"{s.processed} processed ({s.extracted} extracted, {s.from_cache} from the text cache), "
        f"{s.unchanged} unchanged, {s.deleted} deleted, {s.excluded} excluded as sensitive"
        + (f", {s.folder_errors} unreadable folders" if s.folder_errors else "")
    )
    for folder in s.unreadable_folders:
        console.print(f"could not list {escape(folder['path'] or '.')}: {escape(folder['error'])}")
    if s.kept:
        console.print(f"{s.kept} document(s) kept as they were: this run could not read them")
    for glob in s.allowed_large:
        line = f"allowed from now on over ingest.max_text_bytes (ingest.large_text_allowed): {escape(glob)}"
        console.print(line, soft_wrap=True)
    table = Table(box=None, pad_edge=False)
    table.add_column("stage")
    table.add_column("documents", justify="right")
    table.add_column("this run", justify="right")
    for stage in sorted(set(s.stages) | set(s.run)):
        table.add_row(stage, str(s.stages.get(stage, 0)), str(s.run.get(stage, 0) or ""))
    console.print(table)
    if s.workspaces:
        console.print("workspaces: " + ", ".join(f"{w} {n}" for w, n in sorted(s.workspaces.items())))
    if s.routed_by:
        console.print("routed by: " + ", ".join(f"{rule} {n}" for rule, n in s.routed_by.most_common()))
    if s.moved_from_quarantine:
        console.print(f"moved {s.moved_from_quarantine} document(s) from quarantine to the --workspace")
    for workspace, n in s.defaulted.most_common():
        console.print(
            f"{n} file{'' if n == 1 else 's'} into {escape(workspace)} (the default workspace: the router has not been trained yet)"
        )
    _print_quarantine(s)
    if s.errors:
        console.print("not ingested, by reason: " + ", ".join(f"{e} {n}" for e, n in s.errors.most_common()))
    _print_not_ingested(s)
    for noticed in s.warnings:
        line = f"[yellow]warning:[/yellow] {escape(noticed['path'])}: {escape(noticed['warning'])}"
        console.print(line, soft_wrap=True)  # one line a path can be found in


def _print_quarantine(s: pipeline.IngestSummary) -> None:
    """How many of the folder's documents wait in quarantine, why, and what resolves them."""
    waiting = sum(q["documents"] for q in s.quarantine)
    if not waiting:
        return
    console.print(f"[bold]quarantined:[/bold] {waiting} document(s) wait for a routing decision:")
    for q in s.quarantine:
        more = ", ..." if q["documents"] > len(q["paths"]) else ""
        line = f"  {q['documents']} {escape(q['reason'])}: " + ", ".join(escape(p) for p in q["paths"]) + more
        console.print(line, soft_wrap=True)
        if q["code"] == "unknown_workspace":
            console.print(
                f"    fix: exo workspace add {escape(q['declared'] or 'NAME')} creates it (and routes them "
                "there); or change workspace: in the frontmatter to one of "
                + ", ".join(s.workspace_names)
                + " and ingest again, or exo quarantine reassign WORKSPACE --path GLOB",
                soft_wrap=True,
            )
    console.print(
        "resolve them: exo quarantine list (or exo documents --stage quarantined: each with its fix), then "
        "exo quarantine approve | reassign | reject (ID, or --all, --path GLOB); exo quarantine learn "
        "once you have placed some",
        soft_wrap=True,
    )


def _print_not_ingested(s: pipeline.IngestSummary) -> None:
    """The first failed and skipped files by path, with their reason and fix, and where the rest are."""
    for doc in s.not_ingested:
        fix = doc["fix"] if doc["fix"] and doc["fix"] != "nothing to do" else None
        line = f"  {doc['stage']} {escape(doc['path'])}: {escape(doc['reason'])}"
        console.print(line + (f" (fix: {escape(fix)})" if fix else ""), soft_wrap=True)
    rest = s.stages.get("failed", 0) + s.stages.get("skipped", 0) - len(s.not_ingested)
    if rest > 0:
        where = [f"exo documents --stage {stage}" for stage in ("failed", "skipped") if s.stages.get(stage)]
        console.print(f"  and {rest} more: " + ", ".join(where))


@click.command("ingest")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--workspace", help="Put every document of PATH in this workspace (frontmatter still wins).")
@click.option(
    "--allow-large",
    "allow_large",
    metavar="GLOB",
    multiple=True,
    help="Read the plain-text files GLOB matches (under PATH: * any characters, ? one) although they "
    "are over ingest.max_text_bytes, in this run and from then on (ingest.large_text_allowed). Repeatable.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def ingest_cmd(path: Path, workspace: str | None, allow_large: tuple[str, ...], as_json: bool) -> None:
    """Scan PATH, extract new and changed files, route, band and chunk them."""
    with Progress(
        TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("ingest", total=None)
        try:
            summary = pipeline.ingest(
                config.load(),
                path,
                workspace,
                lambda done, total: bar.update(task, completed=done, total=total),
                allow_large=allow_large,
            )
        except (ValueError, NotADirectoryError) as exc:
            fail(str(exc))
    if as_json:
        console.print_json(json.dumps(pipeline.summary_json(summary)))
    else:
        print_summary(summary)


@click.command("watch")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--workspace", help="Put every document of PATH in this workspace (frontmatter still wins).")
@click.option("--debounce", default=1.0, show_default=True, help="Seconds of quiet before re-ingesting.")
def watch_cmd(path: Path, workspace: str | None, debounce: float) -> None:
    """Ingest PATH, then follow its changes until interrupted (Ctrl-C or SIGTERM)."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    err.print(f"watching {path.resolve()} (Ctrl-C stops)")
    watch.watch(config.load(), path, workspace, print_summary, stop, debounce)


@click.command("rebuild")
@click.option("--workspace", help="Only this workspace's documents.")
def rebuild_cmd(workspace: str | None) -> None:
    """Re-route, re-band and re-chunk documents from the text cache (no file is read), and re-window conversations."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            n = conn.execute("select exo_private.rebuild(%s)", (workspace,)).fetchone()[0]
        except psycopg.Error as exc:
            fail(exc.diag.message_primary or str(exc))
    console.print(f"rebuilt {n} document(s)" + (f" of {workspace}" if workspace else ""))


@click.group()
def quarantine() -> None:
    """Documents the router was not confident about."""


@quarantine.command("list")
def quarantine_list() -> None:
    """Quarantined documents with their candidate workspaces and why they wait."""
    with writer(config.load(), "exo-cli") as conn:
        rows = conn.execute(
            "select d.id, d.path, (d.route ->> 'confidence')::real, d.route -> 'candidates', w.reason "
            "from exo_private.documents d cross join lateral exo_private.document_why(d) w "
            "where d.stage = 'quarantined' order by d.id"
        ).fetchall()
    if not rows:
        console.print("quarantine is empty")
        return
    table = Table("id", "path", "confidence", "candidates", "why")
    for doc_id, path, confidence, candidates, reason in rows:
        best = ", ".join(f"{c['workspace']} {c['score']:g}" for c in (candidates or [])[:3] if c["score"])
        table.add_row(str(doc_id), path, f"{confidence:.2f}", best or "none", reason)
    show(table)
    console.print(
        "exo quarantine approve ID (the best candidate) | reassign ID WORKSPACE | reject ID, or with "
        "--all, --path GLOB, --min-confidence X; exo documents --stage quarantined gives each one's fix"
    )


def _review(doc_id: int, decision: str, workspace: str | None = None) -> None:
    with writer(config.load(), "exo-cli") as conn:
        try:
            stage = conn.execute(
                "select exo_private.review_document(%s, %s, %s)::text", (doc_id, decision, workspace)
            ).fetchone()[0]
        except psycopg.Error as exc:
            fail(exc.diag.message_primary or str(exc))
    console.print(f"document {doc_id}: {stage}")


def _selectors(f):
    """The bulk selectors of approve, reassign and reject (combined with and)."""
    for option in reversed(
        [
            click.option("--all", "select_all", is_flag=True, help="Every quarantined document."),
            click.option("--path", "path_glob", metavar="GLOB", help="Documents whose path matches GLOB."),
            click.option(
                "--min-confidence",
                type=float,
                metavar="X",
                help="Documents the router was at least X sure of.",
            ),
            click.option("--dry-run", is_flag=True, help="List what would change; change nothing."),
        ]
    ):
        f = option(f)
    return f


def _review_many(decision: str, workspace: str | None, select_all: bool, path_glob: str | None,
                 min_confidence: float | None, dry_run: bool) -> None:  # fmt: skip
    """One call of exo_private.review_quarantine; prints each document it picked."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            rows = conn.execute(
                "select document_id, path, workspace, stage from exo_private.review_quarantine("
                "%s, %s, %s, %s, %s, %s)",
                (decision, workspace, select_all, path_glob, min_confidence, dry_run),
            ).fetchall()
        except psycopg.Error as exc:
            hint = exc.diag.message_hint
            fail((exc.diag.message_primary or str(exc)) + (f" ({hint})" if hint else ""))
    table = Table("id", "path", "workspace", "stage" + (" (would be)" if dry_run else ""))
    for doc_id, path, ws, stage in rows:
        table.add_row(str(doc_id), escape(path), ws or "", stage)
    if rows:
        console.print(table)
    verb = {"approve": "approved", "reassign": "reassigned", "reject": "rejected"}[decision]
    console.print(f"{len(rows)} document(s) " + ("would be " if dry_run else "") + verb)


def _single_or_many(decision: str, doc_id: int | None, workspace: str | None, select_all: bool,
                    path_glob: str | None, min_confidence: float | None, dry_run: bool) -> None:  # fmt: skip
    bulk = select_all or path_glob is not None or min_confidence is not None
    if doc_id is not None and (bulk or dry_run):
        fail("give a document id or --all / --path / --min-confidence (with --dry-run), not both")
    if doc_id is not None:
        _review(doc_id, decision, workspace)
    elif bulk:
        _review_many(decision, workspace, select_all, path_glob, min_confidence, dry_run)
    else:
        fail("say which documents: an id, --all, --path GLOB or --min-confidence X")


@quarantine.command("approve")
@click.argument("doc_id", type=int, required=False)
@_selectors
def quarantine_approve(doc_id: int | None, **selectors) -> None:
    """Accept the router's best candidate workspace (for DOC_ID, or the documents the options pick)."""
    _single_or_many("approve", doc_id, None, **selectors)


@quarantine.command("reassign")
@click.argument("args", nargs=-1, metavar="[DOC_ID] WORKSPACE")
@_selectors
def quarantine_reassign(args: tuple[str, ...], **selectors) -> None:
    """Put the document DOC_ID, or the documents the options pick, in WORKSPACE."""
    if len(args) not in (1, 2) or (len(args) == 2 and not args[0].isdigit()):
        fail("reassign takes [DOC_ID] WORKSPACE")
    doc_id = int(args[0]) if len(args) == 2 else None
    _single_or_many("reassign", doc_id, args[-1], **selectors)


@quarantine.command("reject")
@click.argument("doc_id", type=int, required=False)
@_selectors
def quarantine_reject(doc_id: int | None, **selectors) -> None:
    """Keep documents out of memory (stage skipped, reason rejected): DOC_ID, or those the options pick."""
    _single_or_many("reject", doc_id, None, **selectors)


@quarantine.command("learn")
def quarantine_learn() -> None:
    """Train the router on the documents in workspaces, then route what in quarantine it is now sure of,
    and again what the default workspace holds (placed there while the router could not judge)."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            report = conn.execute("select exo_private.learn_routes()").fetchone()[0]
        except psycopg.Error as exc:
            fail(exc.diag.message_primary or str(exc))
    console.print(
        f"router: {report['documents']} document(s) in {report['workspaces']} workspace(s), "
        f"{report['terms']} words" + (" (trained now)" if report["trained"] else " (unchanged)")
    )
    console.print(f"{report['moved']} document(s) left quarantine, {report['quarantined']} stay")
    rerouted = report["from_default"]
    moved = sum(rerouted["moved"].values())
    if moved or rerouted["quarantined"] or rerouted["confirmed"]:
        where = ", ".join(
            f"{ws} {n}" for ws, n in sorted(rerouted["moved"].items(), key=lambda x: (-x[1], x[0]))
        )
        console.print(
            f"of the documents the default workspace held: {moved} moved" + (f" ({where})" if where else "")
            + f", {rerouted['quarantined']} to quarantine (the router is unsure), "
            f"{rerouted['confirmed']} stay (the router agrees)",
            soft_wrap=True,
        )  # fmt: skip
    if rerouted["waiting"]:
        console.print(
            f"{rerouted['waiting']} document(s) stay in the default workspace: the router cannot judge yet "
            "(it needs two workspaces with routing.learned_min_documents documents each)",
            soft_wrap=True,
        )


@click.group()
def defer() -> None:
    """The deference list: subjects that never surface by accident."""


@defer.command("add")
@click.argument("subject")
@click.option("--alias", "aliases", multiple=True, help="Another name for the subject (repeatable).")
@click.option("--note", help="Why, for your own record.")
def defer_add(subject: str, aliases: tuple[str, ...], note: str | None) -> None:
    """Add (or update) a deferred subject; existing chunks are re-marked."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            n = conn.execute(
                "select exo_private.defer_subject(%s, %s, %s)", (subject, list(aliases), note)
            ).fetchone()[0]
        except psycopg.Error as exc:
            fail(exc.diag.message_primary or str(exc))
    console.print(f"deferred {subject!r}; the marks of {n} chunk(s) changed")


@defer.command("list")
def defer_list() -> None:
    """Deferred subjects with aliases and how many chunks are charged."""
    with writer(config.load(), "exo-cli") as conn:
        rows = conn.execute(
            "select subject, aliases, charged_chunks from exo.deferred_subjects order by subject"
        ).fetchall()
    table = Table("subject", "aliases", "charged chunks")
    for subject, aliases, n in rows:
        table.add_row(subject, ", ".join(aliases), str(n))
    console.print(table)


@defer.command("remove")
@click.argument("subject")
def defer_remove(subject: str) -> None:
    """Remove a deferred subject; existing chunks are re-marked."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            conn.execute("select exo_private.undefer_subject(%s)", (subject,))
        except psycopg.Error as exc:
            fail(exc.diag.message_primary or str(exc))
    console.print(f"{subject!r} is no longer deferred")


@click.command("owner")
@click.argument("name")
def owner_cmd(name: str) -> None:
    """Name the corpus's owner: the owner Person in every workspace's graph, linked from chat identities."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            conn.execute("select exo_private.set_owner(%s)", (name,))
        except psycopg.Error as exc:
            fail(exc.diag.message_primary or str(exc))
    console.print(f"owner: {name}")


@click.command("import-chat")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(chat.FORMATS), required=True)
@click.option("--owner", "owners", multiple=True, help="Your name as it appears in the export (repeatable).")
@click.option(
    "--workspace",
    help="The workspace of the conversations' windows (default: the setting chat.workspace; "
    "a conversation already imported stays where it is unless this names another).",
)
def import_chat_cmd(file: Path, fmt: str, owners: tuple[str, ...], workspace: str | None) -> None:
    """Import a chat export and cut its conversations into windows (re-importing the same export adds nothing)."""
    with writer(config.load(), "exo-cli") as conn:
        try:
            result = chat.import_chat(conn, file, fmt, owners, workspace)
        except chat.ChatImportError as exc:
            fail(str(exc))
    console.print(
        f"imported {file.name}: messages {result.messages_added} new of {result.messages_seen}, "
        f"conversations {result.conversations_added} new, identities {result.identities_added} new, "
        f"windows {result.windows_added} new"
    )


COMMANDS = [ingest_cmd, watch_cmd, rebuild_cmd, quarantine, defer, owner_cmd, import_chat_cmd]
