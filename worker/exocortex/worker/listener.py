"""The worker's LISTEN connection on its queues' notify channels."""

from __future__ import annotations

import threading
import time

import psycopg
from psycopg import sql

from exocortex.worker import queries

STOP_CHECK_S = 0.2
"""While it waits for a notification, the worker looks at its stop event this often."""


class Listener:
    """The worker's LISTEN connection: wakes it when a message is sent to one of its queues.

    pgmq notifies on insert (migration 0014); a message made visible again (a timeout, a
    reaped worker) sends nothing, and a notification sent while the connection is being
    opened again is lost, so the wait always ends after the poll interval too."""

    def __init__(self, url: str, application_name: str, queues: tuple[str, ...], stop: threading.Event):
        self.url = url
        self.application_name = application_name
        self.queues = queues
        self.stop = stop
        self.conn: psycopg.Connection | None = None

    def open(self) -> None:
        self.conn = psycopg.connect(self.url, application_name=self.application_name, autocommit=True)
        for queue in self.queues:
            self.conn.execute(sql.SQL("listen {}").format(sql.Identifier(queries.notify_channel(queue))))

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def wait(self, timeout_s: float) -> bool:
        """Wait until a notification (True), the timeout or the stop event (False)."""
        deadline = time.monotonic() + timeout_s
        while not self.stop.is_set() and (left := deadline - time.monotonic()) > 0:
            try:
                if self.conn is None or self.conn.closed:
                    self.open()
                    return False  # what was sent while it was closed: read now
                for _ in self.conn.notifies(timeout=min(left, STOP_CHECK_S), stop_after=1):
                    return True
            except psycopg.OperationalError:
                self.close()
                self.stop.wait(min(max(left, 0), STOP_CHECK_S))
        return False
