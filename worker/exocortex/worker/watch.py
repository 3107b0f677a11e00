"""What `exo worker` shows as it runs: per queue, what waits when it starts, then done/total.

On a terminal a rich bar per queue (done/total, elapsed, time left); otherwise plain lines, at
most one per queue every `every_s` and a last one when the run ends, so that a log stays short.
A queue's total is what the run took out of it plus what is in it now, so work queued while the
worker runs (ingest, the chunks of a scan OCR read) raises it.
"""

from __future__ import annotations

import math
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from exocortex.worker.run_result import RunResult


class Watch:
    def __init__(self, console: Console, every_s: float = 10.0):
        self.console = console
        self.every_s = every_s
        self.bars: Progress | None = None
        self.tasks: dict = {}
        self.shown: dict[str, tuple[int, int]] = {}
        """Per queue, the (done, total) of its last plain line."""
        self.shown_at: dict[str, float] = {}

    def begin(self, waiting: dict[str, int]) -> None:
        for queue, n in waiting.items():
            self.console.print(f"{queue}: {n} waiting", highlight=False)
            self.shown[queue] = (0, n)
        if self.console.is_terminal:
            self.bars = Progress(
                TextColumn("{task.description:<8}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self.tasks = {queue: self.bars.add_task(queue, total=n) for queue, n in waiting.items()}
            self.bars.start()

    def update(self, waiting: dict[str, int], result: RunResult, last: bool = False) -> None:
        now = time.monotonic()
        for queue, n in waiting.items():
            done = result.handled(queue)
            total = done + n
            if self.bars is not None:
                self.bars.update(self.tasks[queue], completed=done, total=total)
            elif (done, total) != self.shown.get(queue) and (
                last or now - self.shown_at.get(queue, -math.inf) >= self.every_s
            ):
                self.console.print(f"{queue}: {done}/{total} done", highlight=False)
                self.shown[queue] = (done, total)
                self.shown_at[queue] = now

    def end(self, waiting: dict[str, int], result: RunResult) -> None:
        self.update(waiting, result, last=True)
        if self.bars is not None:
            self.bars.stop()
