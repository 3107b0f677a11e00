"""The `exo` command line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
from datetime import datetime
from pathlib import Path

import click
import psycopg
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from exocortex import (
    audit_cli,
    config,
    doctor,
    entities_cli,
    facts_cli,
    kb_cli,
    lint,
    profiles,
    query_cli,
    schema_dump,
)
from exocortex import worker as worker_module
from exocortex.db import ADMIN, ROLES, admin_url, as_uri, connect, role_url
from exocortex.evaluate_cli import eval_group
from exocortex.ingest import chat, pipeline, watch
from exocortex.migrate import MigrationError, migrate
from exocortex.models import services
from exocortex.models.cli import models
from exocortex.runtime import local, server
from exocortex.runtime.local import RuntimeProblem

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def _progress(message: str) -> None:
    err.print(f"[dim]·[/dim] {message}")


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    sys.exit(1)


@click.group()
def main() -> None:
    """exocortex: a Postgres-native personal knowledge substrate for language-model agents."""


@main.group()
def db() -> None:
    """The database server: the embedded runtime, or EXO_DATABASE_URL's server."""


@db.command("up")
def db_up() -> None:
    """Provision (first time), start and check the server; idempotent."""
    try:
        result = server.up(config.load(), _progress)
    except RuntimeProblem as exc:
        _fail(str(exc))
    console.print(result.summary)


@db.command("down")
def db_down() -> None:
    """Stop the model servers `exo models up` started, then the local server (pg_ctl stop -m fast); the data stays."""
    cfg = config.load()
    for line in services.down(cfg):
        console.print(line)
    try:
        console.print(server.down(cfg))
    except RuntimeProblem as exc:
        _fail(str(exc))


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def db_status(as_json: bool) -> None:
    """Version, extension versions, port, data size, schema."""
    info = server.status(config.load())
    if as_json:
        console.print_json(json.dumps(info))
        return
    table = Table(show_header=False, box=None)
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        table.add_row(f"[bold]{key}[/bold]", str(value))
    console.print(table)


@db.command("url")
@click.option(
    "--role",
    type=click.Choice([ADMIN, *(r.removeprefix("exo_") for r in ROLES)]),
    default="reader",
    show_default=True,
)
@click.option("--profile", help="With --role reader: the login role of this user (exo user add NAME).")
def db_url(role: str, profile: str | None) -> None:
    """Print a connection URL (with password) for one role, or a user's login role."""
    if profile is not None:
        if role != "reader":
            _fail("--profile goes with --role reader: a user's login role is a reader")
        try:
            click.echo(profiles.url(config.load(), profile))
        except profiles.UnknownProfile as exc:
            _fail(str(exc))
        return
    name = role if role == ADMIN else f"exo_{role}"
    click.echo(as_uri(role_url(config.load(), name)))


@db.command("copy")
@click.argument("name")
def db_copy(name: str) -> None:
    """Copy the memory to database NAME (while pg_cron runs; stop its other clients first)."""
    try:
        console.print(server.copy_database(config.load(), name))
    except (server.CopyRefused, psycopg.Error) as exc:
        _fail(str(exc).strip())


@db.command("psql", context_settings={"ignore_unknown_options": True})
@click.option("--role", default="admin", type=click.Choice([ADMIN, "owner", "writer", "reader"]))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def db_psql(role: str, args: tuple[str, ...]) -> None:
    """Open psql on the database (extra arguments go to psql)."""
    cfg = config.load()
    url = as_uri(role_url(cfg, role if role == ADMIN else f"exo_{role}"))
    if cfg.external_url:
        psql = shutil.which("psql")
        if not psql:
            _fail("psql is not on PATH; install postgresql-client")
        argv = [psql, url, *args]
    else:
        argv = [*local.client_argv(cfg, "psql"), url, *args]
    os.execvp(argv[0], argv)


@main.command("migrate")
def migrate_cmd() -> None:
    """Create roles and extensions, install pgmq, apply migrations, re-apply sql/."""
    cfg = config.load()
    try:
        result = migrate(cfg, admin_url(cfg), _progress)
    except MigrationError as exc:
        _fail(str(exc))
    console.print(
        f"migrated {result.database}: {len(result.applied)} migration(s) applied, "
        f"{result.sql_files} sql file(s) re-applied"
    )


@main.command("doctor")
def doctor_cmd() -> None:
    """Check every prerequisite; print what is missing and how to fix it."""
    checks = doctor.run(config.load())
    for check in checks:
        mark = "[green]ok[/green]  " if check.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {check.name}: {check.detail}")
        if not check.ok:
            console.print(f"      fix: {check.fix}")
    if not all(c.ok for c in checks):
        sys.exit(1)


@main.command("schema-dump")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path), default=schema_dump.DUMP_FILE)
def schema_dump_cmd(path: Path) -> None:
    """Write the normalised schema of a database migrated from zero to PATH (schema/exocortex.sql)."""
    path = schema_dump.write(config.load(), path)
    console.print(f"wrote {path}")


@main.command("lint-sql")
def lint_sql_cmd() -> None:
    """Run plpgsql_check over every PL/pgSQL function (in a scratch database)."""
    problems = lint.lint(config.load())
    for function, message in problems:
        console.print(f"{function}: {message}")
    if problems:
        sys.exit(1)
    console.print("plpgsql_check: no problems")


# -- ingestion ----------------------------------------------------------------------------


def _writer():
    return connect(role_url(config.load(), "exo_writer"), "exo-cli", autocommit=True)


def _print_summary(s: pipeline.IngestSummary) -> None:
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
    if s.errors:
        console.print("not ingested, by reason: " + ", ".join(f"{e} {n}" for e, n in s.errors.most_common()))


@main.command("ingest")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--workspace", help="Put every document of PATH in this workspace (frontmatter still wins).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def ingest_cmd(path: Path, workspace: str | None, as_json: bool) -> None:
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
            )
        except (ValueError, NotADirectoryError) as exc:
            _fail(str(exc))
    if as_json:
        console.print_json(json.dumps(pipeline.summary_json(summary)))
    else:
        _print_summary(summary)


@main.command("watch")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--workspace", help="Put every document of PATH in this workspace (frontmatter still wins).")
@click.option("--debounce", default=1.0, show_default=True, help="Seconds of quiet before re-ingesting.")
def watch_cmd(path: Path, workspace: str | None, debounce: float) -> None:
    """Ingest PATH, then follow its changes until interrupted (Ctrl-C or SIGTERM)."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    err.print(f"watching {path.resolve()} (Ctrl-C stops)")
    watch.watch(config.load(), path, workspace, _print_summary, stop, debounce)


@main.command("rebuild")
@click.option("--workspace", help="Only this workspace's documents.")
def rebuild_cmd(workspace: str | None) -> None:
    """Re-route, re-band and re-chunk documents from the text cache (no file is read), and re-window conversations."""
    with _writer() as conn:
        try:
            n = conn.execute("select exo_private.rebuild(%s)", (workspace,)).fetchone()[0]
        except psycopg.Error as exc:
            _fail(exc.diag.message_primary or str(exc))
    console.print(f"rebuilt {n} document(s)" + (f" of {workspace}" if workspace else ""))


@main.group()
def quarantine() -> None:
    """Documents the router was not confident about."""


@quarantine.command("list")
def quarantine_list() -> None:
    """Quarantined documents with their candidate workspaces."""
    with _writer() as conn:
        rows = conn.execute(
            "select id, path, (route ->> 'confidence')::real, route -> 'candidates' "
            "from exo_private.documents where stage = 'quarantined' order by id"
        ).fetchall()
    if not rows:
        console.print("quarantine is empty")
        return
    table = Table("id", "path", "confidence", "candidates")
    for doc_id, path, confidence, candidates in rows:
        best = ", ".join(f"{c['workspace']} {c['score']:g}" for c in (candidates or [])[:3] if c["score"])
        table.add_row(str(doc_id), path, f"{confidence:.2f}", best or "none")
    console.print(table)


def _review(doc_id: int, decision: str, workspace: str | None = None) -> None:
    with _writer() as conn:
        try:
            stage = conn.execute(
                "select exo_private.review_document(%s, %s, %s)::text", (doc_id, decision, workspace)
            ).fetchone()[0]
        except psycopg.Error as exc:
            _fail(exc.diag.message_primary or str(exc))
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
    with _writer() as conn:
        try:
            rows = conn.execute(
                "select document_id, path, workspace, stage from exo_private.review_quarantine("
                "%s, %s, %s, %s, %s, %s)",
                (decision, workspace, select_all, path_glob, min_confidence, dry_run),
            ).fetchall()
        except psycopg.Error as exc:
            hint = exc.diag.message_hint
            _fail((exc.diag.message_primary or str(exc)) + (f" ({hint})" if hint else ""))
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
        _fail("give a document id or --all / --path / --min-confidence (with --dry-run), not both")
    if doc_id is not None:
        _review(doc_id, decision, workspace)
    elif bulk:
        _review_many(decision, workspace, select_all, path_glob, min_confidence, dry_run)
    else:
        _fail("say which documents: an id, --all, --path GLOB or --min-confidence X")


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
        _fail("reassign takes [DOC_ID] WORKSPACE")
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
    """Train the router on the documents in workspaces, then route what in quarantine it is now sure of."""
    with _writer() as conn:
        try:
            report = conn.execute("select exo_private.learn_routes()").fetchone()[0]
        except psycopg.Error as exc:
            _fail(exc.diag.message_primary or str(exc))
    console.print(
        f"router: {report['documents']} document(s) in {report['workspaces']} workspace(s), "
        f"{report['terms']} words" + (" (trained now)" if report["trained"] else " (unchanged)")
    )
    console.print(f"{report['moved']} document(s) left quarantine, {report['quarantined']} stay")


@main.group()
def defer() -> None:
    """The deference list: subjects that never surface by accident."""


@defer.command("add")
@click.argument("subject")
@click.option("--alias", "aliases", multiple=True, help="Another name for the subject (repeatable).")
@click.option("--note", help="Why, for your own record.")
def defer_add(subject: str, aliases: tuple[str, ...], note: str | None) -> None:
    """Add (or update) a deferred subject; existing chunks are re-marked."""
    with _writer() as conn:
        try:
            n = conn.execute(
                "select exo_private.defer_subject(%s, %s, %s)", (subject, list(aliases), note)
            ).fetchone()[0]
        except psycopg.Error as exc:
            _fail(exc.diag.message_primary or str(exc))
    console.print(f"deferred {subject!r}; the marks of {n} chunk(s) changed")


@defer.command("list")
def defer_list() -> None:
    """Deferred subjects with aliases and how many chunks are charged."""
    with _writer() as conn:
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
    with _writer() as conn:
        try:
            conn.execute("select exo_private.undefer_subject(%s)", (subject,))
        except psycopg.Error as exc:
            _fail(exc.diag.message_primary or str(exc))
    console.print(f"{subject!r} is no longer deferred")


@main.command("owner")
@click.argument("name")
def owner_cmd(name: str) -> None:
    """Name the corpus's owner: the owner Person in every workspace's graph, linked from chat identities."""
    with _writer() as conn:
        try:
            conn.execute("select exo_private.set_owner(%s)", (name,))
        except psycopg.Error as exc:
            _fail(exc.diag.message_primary or str(exc))
    console.print(f"owner: {name}")


@main.command("import-chat")
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
    with _writer() as conn:
        try:
            result = chat.import_chat(conn, file, fmt, owners, workspace)
        except chat.ChatImportError as exc:
            _fail(str(exc))
    console.print(
        f"imported {file.name}: messages {result.messages_added} new of {result.messages_seen}, "
        f"conversations {result.conversations_added} new, identities {result.identities_added} new, "
        f"windows {result.windows_added} new"
    )


# -- the worker ---------------------------------------------------------------------------


@main.group("worker", invoke_without_command=True)
@click.option("--once", is_flag=True, help="Drain the queues (waiting for other workers' jobs), then exit.")
@click.option("--concurrency", default=2, show_default=True, help="Jobs in flight at once.")
@click.option(
    "--queue", "queues", multiple=True, type=click.Choice(worker_module.QUEUES), help="Only these queues."
)
@click.option("--limit", type=int, help="Take at most this many messages, then stop.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def worker_cmd(
    ctx: click.Context,
    once: bool,
    concurrency: int,
    queues: tuple[str, ...],
    limit: int | None,
    as_json: bool,
) -> None:
    """Embed chunks and extract the graph through the local models; read scanned PDFs with OCR.

    Exit codes: 0 done (or stopped by a signal); 75 a model endpoint is down, nothing was
    dead-lettered and the work stays queued (run it again when the endpoint is back); 1 the
    run failed otherwise, or jobs were still running after the grace period.
    """
    if ctx.invoked_subcommand is not None:
        return
    try:
        worker = worker_module.Worker(
            config.load(),
            once=once,
            concurrency=concurrency,
            queues=queues or worker_module.QUEUES,
            limit=limit,
            progress=lambda text: err.print(f"[dim]·[/dim] {text}"),
        )
    except ValueError as exc:
        _fail(str(exc))
    signals = 0

    def on_signal(*_):
        nonlocal signals
        signals += 1
        if signals > 1:
            err.print(
                "second signal: stopping now; unfinished messages return after their visibility timeout"
            )
            os._exit(130)
        err.print("stopping: running jobs get a grace period (signal again to stop at once)")
        worker.stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    result = worker.run()
    if as_json:
        click.echo(worker_module.as_json(result))
    else:
        console.print(worker_module.summary_line(result))
    if result.unfinished:
        sys.stdout.flush()
        os._exit(1)  # model calls still running in threads: leave without waiting for them
    if result.endpoint_down:
        sys.exit(worker_module.EXIT_ENDPOINT_DOWN)
    if result.stop_reason and not signals:
        sys.exit(1)


def _since(value: str | None) -> datetime | None:
    """--since: an ISO 8601 date or time (local time unless it names a zone)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO 8601 date or time (such as 2026-11-29 or 2026-11-29T14:00)",
            param_hint="--since",
        ) from None
    return moment if moment.tzinfo else moment.astimezone()


@worker_cmd.command("retry-failed")
@click.option("--queue", type=click.Choice(worker_module.QUEUES), help="Only this queue (default: all).")
@click.option("--since", help="Only failures at or after this ISO 8601 date or time.")
def worker_retry_failed(queue: str | None, since: str | None) -> None:
    """Queue failed chunks, windows and scans again (and, without --since, any that wait with no message)."""
    moment = _since(since)
    with _writer() as conn:
        rows = []
        if queue not in ("ocr", "capsules"):
            rows += conn.execute(
                "select queue, requeued, resolved from exo_private.retry_failed(%s, %s)", (queue, moment)
            ).fetchall()
        if queue in (None, "ocr"):  # scans OCR could not read end failed, not in job_failures
            rows.append(("ocr", conn.execute("select exo_private.retry_ocr(%s)", (moment,)).fetchone()[0], 0))
        if queue in (None, "capsules"):  # every capsule missing or stale, whatever failed
            rows.append(("capsules", conn.execute("select exo_private.queue_capsules()").fetchone()[0], 0))
    for name, requeued, resolved in rows:
        console.print(
            f"{name}: {requeued} queued again" + (f", {resolved} no longer need work" if resolved else "")
        )


@worker_cmd.command("requeue-dead")
@click.option(
    "--queue", type=click.Choice(worker_module.MODEL_QUEUES), help="Only this queue (default: both)."
)
def worker_requeue_dead(queue: str | None) -> None:
    """Send dead-lettered chunks and windows back to their queue, with a fresh read count."""
    with _writer() as conn:
        rows = conn.execute(
            "select queue, requeued, dropped from exo_private.requeue_dead(%s)", (queue,)
        ).fetchall()
    for name, requeued, dropped in rows:
        console.print(
            f"{name}: {requeued} queued again"
            + (f", {dropped} dead letter(s) dropped (work done, gone or already queued)" if dropped else "")
        )


# -- agents -------------------------------------------------------------------------------


@main.command("mcp")
@click.option(
    "--statement-timeout-ms",
    default=30_000,
    show_default=True,
    type=click.IntRange(1),
    help="Each tool call's statement timeout.",
)
@click.option(
    "--profile",
    default=None,
    help="Serve this user (exo user add NAME) as their login role: every search looks in their base "
    "first and records in it, and no tool can reach another user's. Default: EXO_PROFILE, else none.",
)
def mcp_cmd(statement_timeout_ms: int, profile: str | None) -> None:
    """Serve the exo API to agents as MCP tools over stdio (read-only, as exo_reader or a user's role).

    The database is the user's login role with --profile, else EXO_READER_URL, else the local
    runtime's exo_reader. Logs go to stderr.
    """
    from exocortex import mcp_server  # the MCP SDK loads only for this command

    mcp_server.serve(statement_timeout_ms, profile=profile)


main.add_command(models)
main.add_command(eval_group)
for command in [
    *query_cli.COMMANDS,
    *facts_cli.COMMANDS,
    audit_cli.audit_cmd,
    *kb_cli.COMMANDS,
    *entities_cli.COMMANDS,
]:
    main.add_command(command)

if __name__ == "__main__":
    main()
