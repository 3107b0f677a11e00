"""A test module's own memory: notes and chat messages in a database of its own, every chunk and
window embedded by the real MiniLM (the modules that ask questions of a few passages they write)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from exocortex.config import Config
from exocortex.ingest import pipeline
from exocortex.ops.migrate import grant_database_privileges
from exocortex.worker.loop import Worker

from .chat import import_records
from .db import Database, create_database, retire_database, use_embeddings


@contextmanager
def embedded_memory(
    cfg: Config,
    template: Database,
    embeddings_url: str,
    prefix: str,
    notes: dict[str, str] | None = None,
    records: list[dict] | None = None,
    workspace: str = "personal",
) -> Iterator[Database]:
    """A database made from the template, granted and pointed at `embeddings_url`: the `notes`
    ({path: text}) ingested into `workspace`, then the chat `records` imported
    (support.chat.msg), then the embed queue drained. Retired on exit."""
    db = create_database(cfg, prefix, template=template.name)
    try:
        with db.connect() as conn:
            grant_database_privileges(conn)
            use_embeddings(conn, embeddings_url)
        if notes:
            with tempfile.TemporaryDirectory() as folder:
                root = Path(folder)
                for name, text in notes.items():
                    (root / name).parent.mkdir(parents=True, exist_ok=True)
                    (root / name).write_text(text, encoding="utf-8")
                pipeline.ingest(cfg, root, workspace=workspace, dbname=db.name)
        if records:
            import_records(db, records)
        Worker(cfg, dbname=db.name, once=True, queues=["embed"], poll_s=0.05).run()
        yield db
    finally:
        retire_database(db)
