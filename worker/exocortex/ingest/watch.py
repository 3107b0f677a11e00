"""`exo watch`: follow a folder and re-ingest after changes settle.

Every change (create, modify, move, delete) schedules one run of the ordinary
ingest after `debounce` seconds without further events. The run only stats
unchanged files, so re-scanning the whole tree is cheap, and moves and deletes
are handled by the same ledger comparison as any other run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from exocortex.config import Config
from exocortex.ingest.pipeline import IngestSummary, ingest


class _Changed(FileSystemEventHandler):
    def __init__(self, wake: threading.Event):
        self.wake = wake

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("created", "modified", "moved", "deleted"):
            self.wake.set()


def watch(
    cfg: Config,
    root: Path,
    workspace: str | None,
    on_run: Callable[[IngestSummary], None],
    stop: threading.Event,
    debounce: float = 1.0,
    dbname: str | None = None,
) -> None:
    """Ingest once, then again after each burst of changes, until `stop` is set."""
    root = Path(root).resolve()
    wake = threading.Event()
    observer = Observer()
    observer.schedule(_Changed(wake), str(root), recursive=True)
    # Watching starts before the first scan: a change made while it runs (or right after)
    # wakes another run instead of being lost.
    observer.start()
    try:
        on_run(ingest(cfg, root, workspace, dbname=dbname))
        while not stop.is_set():
            if not wake.wait(timeout=0.2):
                continue
            # Debounce: wait until no event arrived for `debounce` seconds.
            while True:
                wake.clear()
                if stop.wait(debounce) or not wake.is_set():
                    break
            if stop.is_set():
                break
            on_run(ingest(cfg, root, workspace, dbname=dbname))
    finally:
        observer.stop()
        observer.join()
