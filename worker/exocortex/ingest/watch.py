"""`exo watch`: follow a folder and re-ingest after changes settle.

Every change (create, modify, move, delete) schedules one run of the ordinary
ingest after `debounce` seconds without further events. The run only stats
unchanged files, so re-scanning the whole tree is cheap, and moves and deletes
are handled by the same ledger comparison as any other run.

When the file system cannot be followed (a tree deeper than the watcher can
walk, the inotify watch limit reached, or the watcher's thread dying later),
watching falls back to an ingest every `poll` seconds and says so in the log:
it never stops following the folder.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from exocortex.config import Config
from exocortex.ingest.pipeline import IngestSummary, ingest

log = logging.getLogger("exocortex.watch")


class _Changed(FileSystemEventHandler):
    def __init__(self, wake: threading.Event):
        self.wake = wake

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("created", "modified", "moved", "deleted"):
            self.wake.set()


def _following(observer: Observer | None) -> bool:
    return observer is not None and observer.is_alive() and all(e.is_alive() for e in observer.emitters)


def watch(
    cfg: Config,
    root: Path,
    workspace: str | None,
    on_run: Callable[[IngestSummary], None],
    stop: threading.Event,
    debounce: float = 1.0,
    dbname: str | None = None,
    poll: float = 30.0,
) -> None:
    """Ingest once, then again after each burst of changes (or every `poll` seconds when
    changes cannot be followed), until `stop` is set."""
    root = Path(root).resolve()
    wake = threading.Event()
    observer: Observer | None = Observer()
    observer.schedule(_Changed(wake), str(root), recursive=True)
    # Watching starts before the first scan: a change made while it runs (or right after)
    # wakes another run instead of being lost.
    try:
        observer.start()
    except (OSError, RecursionError) as exc:
        log.warning("cannot follow changes under %s (%s): ingesting every %g s instead", root, exc, poll)
        observer = None
    try:
        on_run(ingest(cfg, root, workspace, dbname=dbname))
        polled_at = time.monotonic()
        while not stop.is_set():
            if not _following(observer):
                if observer is not None:
                    log.warning(
                        "stopped following changes under %s: ingesting every %g s instead", root, poll
                    )
                    observer.stop()
                    observer.join()
                    observer = None
                if stop.wait(max(polled_at + poll - time.monotonic(), 0)):
                    break
                on_run(ingest(cfg, root, workspace, dbname=dbname))
                polled_at = time.monotonic()
                continue
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
        if observer is not None:
            observer.stop()
            observer.join()
