"""plpy/ modules as the database runs them: inlined with their siblings, then executed."""

from __future__ import annotations

import types

from exocortex.ops.plpy_modules import build


def load(name: str) -> types.ModuleType:
    """plpy/NAME.py with its `from sibling import ...` lines inlined, as a new module."""
    return build(name)


class Plan:
    """What FakePlpy.prepare gives: the statement and its argument types."""

    def __init__(self, text: str, types: list[str]):
        self.text, self.types = text, list(types)


class Cursor:
    """What FakePlpy.cursor gives: its rows, `fetch(n)` at a time; `fetches` counts the calls."""

    def __init__(self, rows: list[dict]):
        self.rows, self.fetches = rows, 0

    def fetch(self, n: int) -> list[dict]:
        self.fetches += 1
        batch, self.rows = self.rows[:n], self.rows[n:]
        return batch


class FakePlpy:
    """A `plpy` for a module's run(): `reads` answers statements by their text (rows, or a function
    of the arguments giving rows); a statement in `writes` answers nothing; any other statement is
    an error (a module's SQL changed and the test did not follow). Every statement run is kept in
    `ran` with its arguments, in order; a prepared one must get as many arguments as it has types."""

    def __init__(self, reads: dict, writes=()):
        self.reads, self.writes = reads, set(writes)
        self.ran: list[tuple[str, list | None]] = []
        self.cursors: list[Cursor] = []

    def prepare(self, text: str, types=None) -> Plan:
        return Plan(text, types or [])

    def execute(self, plan, args=None) -> list[dict]:
        text = plan.text if isinstance(plan, Plan) else plan
        if isinstance(plan, Plan):
            assert len(args or []) == len(plan.types), f"{len(args or [])} arguments for {plan.types}: {text}"
        else:
            assert args is None, "plpy.execute(text) takes no arguments"
        self.ran.append((text, args))
        if text in self.reads:
            answer = self.reads[text]
            return [dict(r) for r in (answer(args) if callable(answer) else answer)]
        assert text in self.writes, f"unexpected statement: {text}"
        return []

    def cursor(self, plan, args=None) -> Cursor:
        cursor = Cursor(self.execute(plan, args))
        self.cursors.append(cursor)
        return cursor

    def statements(self, text: str) -> list:
        """The arguments of each run of the statement `text`, in order."""
        return [args for ran, args in self.ran if ran == text]

    def order(self) -> list[str]:
        """The statements run, in order, each once (the first time)."""
        return list(dict.fromkeys(text for text, _args in self.ran))
