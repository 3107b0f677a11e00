"""`exo ingest`: scan a folder, keep the ledger in step, extract once, process in the database.

Python walks the tree, hashes and extracts; the database routes, bands, chunks
and enqueues (exo_private.process_document). Every file the scanner sees ends
in a recorded stage. A re-run on an unchanged tree only stats files: the
ledger's size and mtime say nothing changed, and the text cache (keyed by
sha256) means a changed file with known content is not extracted again.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from exocortex.config import Config
from exocortex.db import connect, role_url
from exocortex.ingest.extract import (
    EXTRACTOR_VERSION,
    MAX_FILE_BYTES,
    ExtractionError,
    extract,
    is_junk,
)
from exocortex.ingest.scan import Entry, scan

BATCH = 50
WIKI_LINK = re.compile(r"\[\[([^\]\[|#\n]+)(?:#[^\]\[|\n]*)?(?:\|[^\]\[\n]*)?\]\]")
#: Stages after which an unchanged file needs no work.
SETTLED = {
    "extracted",
    "routed",
    "quarantined",
    "chunked",
    "embedded",
    "graphed",
    "failed",
    "skipped",
    "ocr_pending",
}


@dataclass
class IngestSummary:
    root: str
    seen: int = 0
    unchanged: int = 0
    processed: int = 0
    deleted: int = 0
    excluded: int = 0
    extracted: int = 0
    from_cache: int = 0
    folder_errors: int = 0
    links_resolved: int = 0
    seconds: float = 0.0
    run: Counter = field(default_factory=Counter)
    """Stages reached by the files processed in this run."""
    stages: Counter = field(default_factory=Counter)
    """All of this source's documents by stage, after the run."""
    workspaces: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    """Failed and skipped documents of this source by error class."""


@dataclass
class _Prior:
    id: int
    size: int
    mtime_ns: int
    stage: str


Progress = Callable[[int, int], None]


def _clean(text: str) -> str:
    """Text PostgreSQL can store: no NUL, no lone surrogates."""
    return text.replace("\x00", "").encode("utf-8", errors="replace").decode("utf-8")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class Ingest:
    """One run over one source root."""

    def __init__(self, conn: psycopg.Connection, root: Path, workspace: str | None):
        self.conn = conn
        self.root = root
        self.summary = IngestSummary(str(root))
        row = conn.execute(
            """insert into exo_private.sources (root, workspace) values (%s, %s)
               on conflict (root) do update set workspace = excluded.workspace, last_scan_at = now()
               returning id""",
            (str(root), workspace),
        ).fetchone()
        self.source_id = row[0]
        self.ledger = {
            path: _Prior(*rest)
            for path, *rest in conn.execute(
                "select path, id, size_bytes, mtime_ns, stage::text from exo_private.documents where source_id = %s",
                (self.source_id,),
            )
        }

    # -- recording ------------------------------------------------------------------------

    def _upsert(self, entry: Entry, sha: str | None) -> int:
        return self.conn.execute(
            """insert into exo_private.documents (source_id, path, extension, size_bytes, mtime_ns, sha256)
               values (%s, %s, %s, %s, %s, %s)
               on conflict (source_id, path) do update
                  set extension = excluded.extension, size_bytes = excluded.size_bytes,
                      mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256
               returning id""",
            (self.source_id, entry.path, entry.extension, entry.size, entry.mtime_ns, sha),
        ).fetchone()[0]

    def _set_stage(self, doc_id: int, stage: str, error_class: str | None = None, message: str | None = None):
        self.conn.execute(
            """update exo_private.documents
                  set stage = %s, error_class = %s, error_message = %s, stage_changed_at = now()
                where id = %s""",
            (stage, error_class, message, doc_id),
        )
        self.summary.run[stage] += 1

    def record_skip(self, entry: Entry) -> None:
        prior = self.ledger.get(entry.path)
        if (
            prior
            and prior.stage == "skipped"
            and prior.size == entry.size
            and prior.mtime_ns == entry.mtime_ns
        ):
            self.summary.unchanged += 1
            return
        with self.conn.transaction():
            if prior and prior.stage not in ("skipped", "deleted"):
                self.conn.execute("select exo_private.forget_document(%s)", (prior.id,))
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "skipped", entry.skip, entry.detail)

    # -- one file -------------------------------------------------------------------------

    def process(self, entry: Entry) -> None:
        """Hash, extract (unless cached) and hand the document to the database."""
        if entry.size > MAX_FILE_BYTES:
            doc_id = self._upsert(entry, None)
            self._set_stage(
                doc_id, "failed", "too_large", f"{entry.size} bytes is over the {MAX_FILE_BYTES} byte limit"
            )
            return
        try:
            sha = _sha256(entry.absolute)
        except OSError as exc:
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "failed", "unreadable", exc.strerror or str(exc))
            return
        doc_id = self._upsert(entry, sha)
        cached = self.conn.execute(
            "select metadata, needs_ocr, body from exo_private.text_cache where sha256 = %s", (sha,)
        ).fetchone()
        if cached:
            metadata, needs_ocr, body = cached
            self.summary.from_cache += 1
        else:
            try:
                extracted = extract(entry.absolute)
            except ExtractionError as exc:
                stage = "skipped" if exc.error_class == "empty" else "failed"
                self._set_stage(doc_id, stage, exc.error_class, exc.message)
                return
            body = _clean(extracted.text)
            if is_junk(body):
                self._set_stage(doc_id, "skipped", "junk", "over 90% of lines are delimiter-dense data")
                return
            metadata, needs_ocr = extracted.metadata, extracted.needs_ocr
            self.conn.execute(
                """insert into exo_private.text_cache (sha256, body, metadata, needs_ocr, extractor_version)
                   values (%s, %s, %s, %s, %s) on conflict (sha256) do nothing""",
                (sha, body, Jsonb(metadata), needs_ocr, EXTRACTOR_VERSION),
            )
            self.summary.extracted += 1
        if needs_ocr:
            self._set_stage(doc_id, "ocr_pending")
            return
        frontmatter = metadata.get("frontmatter") or {}
        title = frontmatter.get("title") or metadata.get("title") or Path(entry.path).stem
        self.conn.execute(
            """update exo_private.documents
                  set stage = 'extracted', error_class = null, error_message = null,
                      frontmatter = %s, metadata = %s, title = %s, stage_changed_at = now()
                where id = %s""",
            (
                Jsonb(frontmatter),
                Jsonb({k: v for k, v in metadata.items() if k != "frontmatter"}),
                str(title),
                doc_id,
            ),
        )
        self._record_links(doc_id, body if entry.extension == "md" else "")
        stage = self.conn.execute("select exo_private.process_document(%s)::text", (doc_id,)).fetchone()[0]
        self.summary.run[stage] += 1

    def _record_links(self, doc_id: int, body: str) -> None:
        targets = sorted({m.group(1).strip() for m in WIKI_LINK.finditer(body) if m.group(1).strip()})
        self.conn.execute("delete from exo_private.document_links where source_document = %s", (doc_id,))
        if targets:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "insert into exo_private.document_links (source_document, target) values (%s, %s)",
                    [(doc_id, t) for t in targets],
                )

    def _fail(self, entry: Entry, exc: Exception) -> None:
        """A file whose processing raised: record it failed (in a fresh savepoint) and go on."""
        with self.conn.transaction():
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "failed", type(exc).__name__, str(exc).strip()[:2000])

    # -- the run --------------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> IngestSummary:
        began = time.monotonic()
        s = self.summary
        seen: set[str] = set()
        todo: list[Entry] = []

        def folder_error(_error: OSError) -> None:
            s.folder_errors += 1

        for entry in scan(self.root, folder_error):
            seen.add(entry.path)
            s.seen += 1
            if entry.skip:
                s.excluded += entry.skip == "excluded_sensitive"
                self.record_skip(entry)
                continue
            prior = self.ledger.get(entry.path)
            if (
                prior
                and prior.size == entry.size
                and prior.mtime_ns == entry.mtime_ns
                and prior.stage in SETTLED
            ):
                s.unchanged += 1
                continue
            todo.append(entry)
        self.conn.commit()

        for start in range(0, len(todo), BATCH):
            with self.conn.transaction():
                for entry in todo[start : start + BATCH]:
                    try:
                        with self.conn.transaction():
                            self.process(entry)
                    except Exception as exc:  # one bad file never stops the run
                        self._fail(entry, exc)
                    s.processed += 1
            if progress:
                progress(min(start + BATCH, len(todo)), len(todo))

        gone = [p for path, p in self.ledger.items() if path not in seen and p.stage != "deleted"]
        with self.conn.transaction():
            for prior in gone:
                self.conn.execute("select exo_private.forget_document(%s)", (prior.id,))
            s.deleted = len(gone)
            s.links_resolved = self.conn.execute(
                "select exo_private.resolve_links(%s)", (self.source_id,)
            ).fetchone()[0]
        self._totals()
        s.seconds = time.monotonic() - began
        with self.conn.transaction():
            self.conn.execute(
                "insert into exo_private.ingest_runs (source_id, started_at, finished_at, summary) "
                "values (%s, now() - make_interval(secs => %s), now(), %s)",
                (self.source_id, s.seconds, Jsonb(summary_json(s))),
            )
        return s

    def _totals(self) -> None:
        s = self.summary
        for stage, workspace, error_class, n in self.conn.execute(
            """select stage::text, workspace, error_class, count(*) from exo_private.documents
               where source_id = %s group by 1, 2, 3""",
            (self.source_id,),
        ):
            s.stages[stage] += n
            if workspace and stage not in ("deleted", "failed", "skipped"):
                s.workspaces[workspace] += n
            if error_class:
                s.errors[error_class] += n


def summary_json(s: IngestSummary) -> dict:
    return {
        "root": s.root,
        "seen": s.seen,
        "unchanged": s.unchanged,
        "processed": s.processed,
        "extracted": s.extracted,
        "from_cache": s.from_cache,
        "deleted": s.deleted,
        "excluded": s.excluded,
        "folder_errors": s.folder_errors,
        "links_resolved": s.links_resolved,
        "seconds": round(s.seconds, 3),
        "run": dict(s.run),
        "stages": dict(s.stages),
        "workspaces": dict(s.workspaces),
        "errors": dict(s.errors),
    }


def ingest(cfg: Config, root: Path, workspace: str | None = None, progress: Progress | None = None,
           dbname: str | None = None) -> IngestSummary:  # fmt: skip
    """Ingest one folder as exo_writer; returns the end summary."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    with connect(role_url(cfg, "exo_writer", dbname), "exo-ingest") as conn:
        if (
            workspace is not None
            and not conn.execute(
                "select 1 from exo_private.workspaces where name = %s", (workspace,)
            ).fetchone()
        ):
            raise ValueError(f"workspace {workspace!r} does not exist")
        return Ingest(conn, root, workspace).run(progress)
