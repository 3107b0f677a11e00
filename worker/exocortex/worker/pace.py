"""How long an endpoint takes now: the deadlines the worker gives its model calls."""

from __future__ import annotations

import threading

PACE_MARGIN = 2.0
"""A deadline allows this many times the time the endpoint's measured speed predicts."""
PACE_WEIGHT = 0.3
"""Weight of the newest call in the running average of an endpoint's speed."""


class Pace:
    """How long one endpoint takes now, in seconds per unit of work (a chat call, an embedded
    text): a running average of successful calls, raised by every timeout (the endpoint is at
    least that slow). Thread-safe: the jobs of one worker share it."""

    def __init__(self) -> None:
        self.per_unit: float | None = None
        self._lock = threading.Lock()

    def deadline(self, floor: float, cap: float, units: int) -> float:
        """PACE_MARGIN times what the measured speed predicts, within [floor, cap]."""
        with self._lock:
            expected = (self.per_unit or 0.0) * units * PACE_MARGIN
        return min(cap, max(floor, expected))

    def observe(self, seconds: float, units: int) -> None:
        per_unit = seconds / max(units, 1)
        with self._lock:
            self.per_unit = (
                per_unit
                if self.per_unit is None
                else (1 - PACE_WEIGHT) * self.per_unit + PACE_WEIGHT * per_unit
            )

    def timed_out(self, deadline: float, cap: float, units: int) -> float:
        """A call got no answer within deadline: the deadline for the next try (at least twice it)."""
        with self._lock:
            self.per_unit = max(self.per_unit or 0.0, deadline / max(units, 1))
        return self.deadline(deadline, cap, units)
