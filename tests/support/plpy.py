"""plpy/ modules as the database runs them: inlined with their siblings, then executed."""

from __future__ import annotations

import sys
import types

from exocortex.ops.migrate import inline_plpy

from . import PLPY_DIR


def load(name: str) -> types.ModuleType:
    """plpy/NAME.py with its `from sibling import ...` lines inlined, as a module."""
    source = inline_plpy(f"# exo:include {name}", PLPY_DIR, f"support.plpy.load({name!r})")
    module = types.ModuleType(f"plpy_{name}")
    sys.modules[module.__name__] = module  # a dataclass looks its module up there
    exec(compile(source, f"<plpy/{name}.py, inlined>", "exec"), module.__dict__)
    return module
