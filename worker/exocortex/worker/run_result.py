"""What one run of the worker did, per queue, and how `exo worker` prints it (a line, or JSON)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class RunResult:
    done: Counter = field(default_factory=Counter)
    """Messages archived after their result was written, per queue."""
    skipped: Counter = field(default_factory=Counter)
    """Messages archived because their chunk, window or waiting document no longer exists."""
    failed: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    """Jobs that raised unexpectedly; their messages return after the first backoff wait."""
    unread: Counter = field(default_factory=Counter)
    """Scans OCR could not read: their documents ended failed (or skipped) with the error class."""
    dead_lettered: Counter = field(default_factory=Counter)
    returned: Counter = field(default_factory=Counter)
    """Messages given back at once, their read not counted: the endpoint was down."""
    slowed: Counter = field(default_factory=Counter)
    """Model calls that timed out on a working endpoint and were tried again with a longer deadline."""
    longest_deadline_s: dict = field(default_factory=dict)
    """Per queue, the longest deadline a slow call was given."""
    lowest_concurrency: int | None = None
    """The fewest jobs at once the worker went down to under load (None: it never had to)."""
    reclaimed: int = 0
    """Messages taken back from dead workers."""
    endpoint_down: bool = False
    stop_reason: str | None = None
    unfinished: int = 0
    """Jobs still running when the grace period ended: abandoned."""
    abandoned: Counter = field(default_factory=Counter)
    """Messages of abandoned jobs, per queue: visible again at once, that read not counted."""
    calls_cut: int = 0
    """Model calls of abandoned jobs cut off in flight (their connections shut down)."""

    def handled(self, queue: str) -> int:
        """Messages of `queue` this run took out of it (done, skipped, failed, unread or dead-lettered)."""
        return sum(c[queue] for c in (self.done, self.skipped, self.failed, self.unread, self.dead_lettered))


def summary_line(result: RunResult) -> str:
    parts = [f"{q}: {n} done" for q, n in sorted(result.done.items())]
    for label, counter in (
        ("skipped", result.skipped),
        ("failed (`exo worker retry-failed` queues them again)", result.failed),
        ("errors", result.errors),
        ("could not be read by OCR (their documents failed with the error class)", result.unread),
        ("dead-lettered", result.dead_lettered),
        ("returned to the queue, not counted as reads (endpoint down)", result.returned),
    ):
        parts += [f"{q}: {n} {label}" for q, n in sorted(counter.items())]
    parts += [
        f"{q}: {n} slow call(s) tried again with a longer deadline (up to {result.longest_deadline_s[q]:g} s)"
        for q, n in sorted(result.slowed.items())
    ]
    if result.lowest_concurrency is not None:
        parts.append(f"jobs at once lowered to {result.lowest_concurrency} under load")
    if result.reclaimed:
        parts.append(f"{result.reclaimed} message(s) taken back from dead workers")
    text = "; ".join(parts) or ("nothing done" if result.unfinished else "nothing to do")
    if result.stop_reason:
        text += f"; stopped: {result.stop_reason}"
    if result.endpoint_down:
        text += "; the work stays queued: run the worker again when the endpoint is back"
    if result.unfinished:
        text += (
            f"; {result.unfinished} job(s) abandoned at the end of the grace period "
            f"({result.calls_cut} model call(s) cut off), their "
            f"{sum(result.abandoned.values())} message(s) queued again"
        )
    return text


def as_json(result: RunResult) -> str:
    return json.dumps(
        {
            "done": result.done,
            "skipped": result.skipped,
            "failed": result.failed,
            "errors": result.errors,
            "unread": result.unread,
            "dead_lettered": result.dead_lettered,
            "returned": result.returned,
            "slowed": result.slowed,
            "longest_deadline_s": result.longest_deadline_s,
            "lowest_concurrency": result.lowest_concurrency,
            "reclaimed": result.reclaimed,
            "endpoint_down": result.endpoint_down,
            "stop_reason": result.stop_reason,
            "unfinished": result.unfinished,
            "abandoned": result.abandoned,
            "calls_cut": result.calls_cut,
        }
    )
