"""`exo worker`: drain the queues through the local models; retry failed and dead-lettered work."""

from __future__ import annotations

import os
import signal
import sys
from datetime import datetime

import click

from exocortex import config
from exocortex.cli.output import console, err, fail
from exocortex.db import writer
from exocortex.worker import loop as worker_module
from exocortex.worker import run_result
from exocortex.worker.watch import Watch


@click.group("worker", invoke_without_command=True)
@click.option("--once", is_flag=True, help="Drain the queues (waiting for other workers' jobs), then exit.")
@click.option("--concurrency", default=2, show_default=True, help="Jobs in flight at once, per queue.")
@click.option(
    "--queue", "queues", multiple=True, type=click.Choice(worker_module.QUEUES), help="Only these queues."
)
@click.option("--limit", type=int, help="Take at most this many messages, then stop.")
@click.option(
    "--grace",
    "grace_s",
    default=30.0,
    show_default=True,
    help="Ctrl-C or SIGTERM stops the worker within this many seconds: running jobs that have not "
    "finished by then are abandoned.",
)
@click.option(
    "--endpoint",
    "endpoints",
    multiple=True,
    metavar="ROLE=URL",
    help="This host's URL of a model role (chat, embeddings, rerank) in place of its setting's, the "
    "model kept: a worker on another host reaches the same models at its own addresses. Repeatable.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def worker_cmd(
    ctx: click.Context,
    once: bool,
    concurrency: int,
    queues: tuple[str, ...],
    limit: int | None,
    grace_s: float,
    endpoints: tuple[str, ...],
    as_json: bool,
) -> None:
    """Embed chunks and extract the graph through the local models; read scanned PDFs with OCR.

    Prints what waits in each queue, then done/total as it goes (to stderr: a bar per queue
    on a terminal, a plain line now and then otherwise).

    Exit codes: 0 done (or stopped by a signal once the running jobs had finished); 75 a model
    endpoint is down, nothing was dead-lettered and the work stays queued (run it again when the
    endpoint is back); 128 + the signal's number (130 Ctrl-C, 143 SIGTERM) stopped by a signal
    with jobs abandoned: still running at the end of the grace period (their messages are
    queued again at once) or cut by a second signal (their messages return after their
    visibility timeout); 1 the run failed otherwise.
    """
    if ctx.invoked_subcommand is not None:
        return
    urls = dict(e.split("=", 1) for e in endpoints if "=" in e)
    if len(urls) != len(endpoints):
        fail(f"--endpoint takes ROLE=URL (one per role), got {', '.join(endpoints)}")
    try:
        worker = worker_module.Worker(
            config.load(),
            once=once,
            concurrency=concurrency,
            queues=queues or worker_module.QUEUES,
            limit=limit,
            grace_s=grace_s,
            progress=lambda text: err.print(f"[dim]·[/dim] {text}"),
            watch=Watch(err),
            endpoints=urls,
        )
    except ValueError as exc:
        fail(str(exc))
    signals: list[int] = []

    def on_signal(signum, _frame):
        signals.append(signum)
        if len(signals) > 1:
            err.print(
                "second signal: stopping now; unfinished messages return after their visibility timeout"
            )
            os._exit(128 + signum)
        err.print(
            f"stopping within {grace_s:g} s: running jobs that have not finished by then are abandoned "
            "(signal again to stop at once)"
        )
        worker.request_stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    result = worker.run()
    if as_json:
        click.echo(run_result.as_json(result))
    else:
        console.print(run_result.summary_line(result))
    if result.unfinished:
        # Abandoned jobs' threads may still run outside a model call (OCR): leave without
        # waiting for them.
        code = (
            128 + signals[0] if signals else worker_module.EXIT_ENDPOINT_DOWN if result.endpoint_down else 1
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
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
    with writer(config.load(), "exo-cli") as conn:
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
    with writer(config.load(), "exo-cli") as conn:
        rows = conn.execute(
            "select queue, requeued, dropped from exo_private.requeue_dead(%s)", (queue,)
        ).fetchall()
    for name, requeued, dropped in rows:
        console.print(
            f"{name}: {requeued} queued again"
            + (f", {dropped} dead letter(s) dropped (work done, gone or already queued)" if dropped else "")
        )


COMMANDS = [worker_cmd]
