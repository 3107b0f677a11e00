"""plpy/ modules run in Python as the database runs them: inlined with their siblings, then executed.

A plpy module that imports a sibling (`from textnorm import canonical_key`) cannot be imported as
`exocortex.plpy.NAME`: the sibling is no top-level module. Where the worker shares such a module
with the database (plpy/extraction_acceptance.py), it loads it here, so both run the same text.
"""

from __future__ import annotations

import functools
import sys
import types

from exocortex.config import data_dir
from exocortex.ops.migrate import inline_plpy


def build(name: str) -> types.ModuleType:
    """A new module of plpy/NAME.py with its `from sibling import ...` lines inlined."""
    source = inline_plpy(f"# exo:include {name}", data_dir("plpy"), f"plpy_modules.build({name!r})")
    module = types.ModuleType(f"plpy_{name}")
    sys.modules[module.__name__] = module  # a dataclass looks its module up there
    exec(compile(source, f"<plpy/{name}.py, inlined>", "exec"), module.__dict__)
    return module


@functools.cache
def shared(name: str) -> types.ModuleType:
    """plpy/NAME.py, built once per process."""
    return build(name)
