"""What a run of the suite makes once for all its processes: the real models (support/models.py)
and the example vault's databases (support/vault.py).

The run's first process names a folder (SHARED, which the processes pytest-xdist starts inherit);
the first process that needs a thing makes it under a lock in that folder and notes it there, the
others wait for it and find it; the first process ends them all once every process is done.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from exocortex.config import Config
from exocortex.models import services

from .db import Database, create_template, drop_template

#: The environment variable naming the run's folder.
SHARED = "EXO_TEST_SHARED"


def share() -> None:
    """Name the run's folder (in the run's first process, before any other starts)."""
    os.environ[SHARED] = tempfile.mkdtemp(prefix="exo-test-run-")


def folder() -> Path:
    return Path(os.environ[SHARED])


@contextmanager
def locked(name: str) -> Iterator[Path]:
    """The run's folder, held for `name` against the run's other processes."""
    with open(folder() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder()


def shared_database(cfg: Config, key: str, template: Database, load: Callable[[Database], None]) -> Database:
    """The run's database `key`: a clone of `template` that `load` filled, made by the first process
    that asks and found by the others. It is a template (tests use clones of it; a session on it
    would stop the cloning) named as a session's template, so that a killed run's is dropped with
    theirs (db.drop_leftovers)."""
    with locked(key) as shared:
        note = shared / f"{key}.database"
        if not note.exists():
            db = create_template(cfg, f"exo_test_{key}_{uuid.uuid4().hex[:10]}_tmpl", template)
            try:
                load(db)
            except BaseException:
                drop_template(db)
                raise
            note.write_text(db.name)
        return Database(cfg, note.read_text())


def end(cfg: Config) -> None:
    """Stop the run's models, if a test started them, drop its databases and remove its folder
    (the first process, at its end)."""
    shared = Path(os.environ.pop(SHARED))
    services.down(cfg, run_dir=shared)
    for note in shared.glob("*.database"):
        drop_template(Database(cfg, note.read_text()))
    shutil.rmtree(shared, ignore_errors=True)
