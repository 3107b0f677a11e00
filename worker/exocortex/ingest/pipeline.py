"""`exo ingest`: scan a folder, keep the ledger in step, extract once, process in the database.

Python walks the tree, hashes and extracts; the database routes, bands, chunks
and enqueues (exo_private.process_document). Every file the scanner sees ends
in a recorded stage, under the raw bytes of its path. A re-run on an unchanged
tree only stats files: the ledger's size and mtime say nothing changed, and
the text cache (keyed by sha256) means a changed file with known content is
not extracted again.

No run aborts and none deletes on doubt. Extraction runs in a separate process
with a time and a memory limit per file (exocortex.ingest.sandbox), and the
database stage of a file has the same time limit (statement_timeout); the text
streams from that process into the text cache, so this process's memory does
not grow with a file's size. A document is marked deleted only when the folder
above it was listed in this run and the file was not in it; a folder that could
not be listed keeps its documents and is recorded (exo_private.unreadable_folders).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from exocortex.config import Config
from exocortex.db import connect, role_url, transaction
from exocortex.ingest.extract import EXTRACTOR_VERSION, PLAIN_TEXT_EXTENSIONS, ExtractionError, cut_header
from exocortex.ingest.sandbox import Limits, Sandbox
from exocortex.ingest.scan import WALK_SKIPS, Entry, Walk

BATCH = 50
#: How many failed or skipped files the summary names (exo documents lists them all).
NAMED = 10
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
    kept: int = 0
    """Documents kept as they were although this run could not read them (file or folder)."""
    excluded: int = 0
    extracted: int = 0
    from_cache: int = 0
    folder_errors: int = 0
    unreadable_folders: list[dict] = field(default_factory=list)
    """{path, error} of each folder this run could not list."""
    links_resolved: int = 0
    seconds: float = 0.0
    run: Counter = field(default_factory=Counter)
    """Stages reached by the files processed in this run."""
    stages: Counter = field(default_factory=Counter)
    """All of this source's documents by stage, after the run."""
    workspaces: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    """Failed and skipped documents of this source by error class."""
    routed_by: Counter = field(default_factory=Counter)
    """Documents this run put in a workspace, by the routing rule that decided (route.method)."""
    moved_from_quarantine: int = 0
    """Documents of this source that were in quarantine and the run's --workspace routed."""
    defaulted: Counter = field(default_factory=Counter)
    """Documents this run put in the default workspace (routing.default_workspace: the router
    could not judge yet), by workspace."""
    quarantine: list[dict] = field(default_factory=list)
    """This source's quarantined documents by reason: {code, reason (in words), declared (the
    workspace a frontmatter names that does not exist, else None), documents, paths (the first
    three)}, most first (exo_private.document_why)."""
    not_ingested: list[dict] = field(default_factory=list)
    """Up to NAMED of this source's failed and skipped documents, failed first: {path, stage,
    reason, fix} (exo_private.document_why)."""
    workspace_names: list[str] = field(default_factory=list)
    """The workspaces that exist (for the fix of a frontmatter that names one that does not)."""
    router: dict = field(default_factory=dict)
    """The learned router's training at the start of the run (exo_private.train_router)."""
    warnings: list[dict] = field(default_factory=list)
    """{path, warning} of what this run noticed in a file it still ingested: frontmatter that
    does not parse, what a format library logged (the metadata's frontmatter_error and warnings)."""
    allowed_large: list[str] = field(default_factory=list)
    """The globs this run's --allow-large added to ingest.large_text_allowed."""


@dataclass
class _Prior:
    id: int
    size: int
    mtime_ns: int
    stage: str
    error_class: str | None


Progress = Callable[[int, int], None]
#: Stages of a document whose derived data (chunks, windows) is live.
LIVE = SETTLED - {"failed", "skipped"}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _copy_field(data: bytes) -> bytes:
    """One field of COPY's text format (a block of a field: the escapes are ASCII, never inside a character)."""
    return data.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r").replace(b"\t", b"\\t")


def _gone(key: bytes, listed: set[bytes], unlisted: set[bytes]) -> bool:
    """Whether a file this run did not see is gone: the nearest folder above it that the walk
    reached was listed. Under a folder that could not be listed, nothing is known."""
    folder = key
    while True:
        folder = folder.rpartition(b"/")[0]
        if folder in listed:
            return True
        if folder in unlisted or not folder:
            return False


def _limits(values: dict) -> Limits:
    """The sandbox's limits from the ingest.* settings."""
    checked = {}
    for key, kind in (
        ("ingest.max_file_bytes", int),
        ("ingest.file_timeout_s", float),
        ("ingest.extract_memory_bytes", int),
    ):
        value = values.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"setting {key} must be a positive number, not {value!r}")
        checked[key] = kind(value)
    return Limits(*checked.values())


def _max_text_bytes(values: dict) -> int | None:
    """The setting ingest.max_text_bytes (None: no limit), after checking ingest.large_text_allowed."""
    allowed = values.get("ingest.large_text_allowed")
    if not isinstance(allowed, list) or not all(isinstance(g, str) and g for g in allowed):
        raise ValueError(f"setting ingest.large_text_allowed must be a list of path globs, not {allowed!r}")
    value = values.get("ingest.max_text_bytes")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
        raise ValueError(f"setting ingest.max_text_bytes must be a positive number or null, not {value!r}")
    return None if value is None else int(value)


def continue_extracted(
    conn: psycopg.Connection, doc_id: int, path: str, metadata: dict, timeout_s: float
) -> str:
    """A document whose text is in the text cache (extracted, or read by OCR) continues: its
    frontmatter, metadata, title and links are recorded, then the database routes, bands and
    chunks it (process_document, within timeout_s: QueryCanceled past it). Returns its stage."""
    frontmatter = metadata.get("frontmatter") or {}
    kept = {k: v for k, v in metadata.items() if k not in ("frontmatter", "links")}
    title = cut_header(kept, "title", str(metadata.get("title") or Path(path).stem))
    conn.execute(
        """update exo_private.documents
              set stage = 'extracted', error_class = null, error_message = null,
                  frontmatter = %s, metadata = %s, title = %s, stage_changed_at = now()
            where id = %s""",
        (Jsonb(frontmatter), Jsonb(kept), title, doc_id),
    )
    conn.execute("delete from exo_private.document_links where source_document = %s", (doc_id,))
    if targets := metadata.get("links") or []:
        with conn.cursor() as cur:
            cur.executemany(
                "insert into exo_private.document_links (source_document, target) values (%s, %s)",
                [(doc_id, t) for t in targets],
            )
    prior = conn.execute("select current_setting('statement_timeout')").fetchone()[0]
    conn.execute("select set_config('statement_timeout', %s, true)", (f"{timeout_s * 1000:.0f}",))
    stage = conn.execute("select exo_private.process_document(%s)::text", (doc_id,)).fetchone()[0]
    conn.execute("select set_config('statement_timeout', %s, true)", (prior,))
    return stage


class Ingest:
    """One run over one source root."""

    def __init__(self, conn: psycopg.Connection, root: Path, workspace: str | None,
                 allow_large: list[str] | tuple[str, ...] = ()):  # fmt: skip
        self.conn = conn
        self.root = root
        self.workspace = workspace
        self.routed: list[int] = []
        """Documents this run handed to process_document."""
        self.summary = IngestSummary(str(root))
        settings = dict(conn.execute("select key, value from exo_private.settings where key like 'ingest.%'"))
        self.limits = _limits(settings)
        self.max_text_bytes = _max_text_bytes(settings)
        self._allow_large(settings["ingest.large_text_allowed"], allow_large)
        row = conn.execute(
            """insert into exo_private.sources (root, workspace) values (%s, %s)
               on conflict (root) do update set workspace = excluded.workspace, last_scan_at = now()
               returning id""",
            (str(root), workspace),
        ).fetchone()
        self.source_id = row[0]
        self.ledger = {
            key: _Prior(*rest)
            for key, *rest in conn.execute(
                """select path_bytes, id, size_bytes, mtime_ns, stage::text, error_class
                   from exo_private.documents where source_id = %s""",
                (self.source_id,),
            )
        }
        self.sandbox = Sandbox(self.limits)

    def _allow_large(self, allowed: list[str], globs: list[str] | tuple[str, ...]) -> None:
        """Add each glob of --allow-large to ingest.large_text_allowed, on the full path: a glob
        under this root (one that does not begin with /) is taken as relative to it."""
        added = []
        for glob in globs:
            if not glob.strip():
                raise ValueError("--allow-large needs a path glob, got an empty one")
            anchored = glob if glob.startswith("/") else f"{self.root}/{glob.removeprefix('./')}"
            if anchored not in allowed and anchored not in added:
                added.append(anchored)
        if added:
            self.conn.execute(
                "select exo_private.set_setting('ingest.large_text_allowed', %s)", (Jsonb(allowed + added),)
            )
        self.summary.allowed_large = added

    def _over_text_limit(self, entry: Entry) -> bool:
        """A plain-text file over ingest.max_text_bytes that ingest.large_text_allowed does not
        name: a log or a dump, not prose."""
        limit = self.max_text_bytes
        if limit is None or entry.extension not in PLAIN_TEXT_EXTENSIONS or entry.size <= limit:
            return False
        return not self.conn.execute(
            "select exo_private.large_text_allowed(%s, %s)", (self.source_id, entry.path)
        ).fetchone()[0]

    # -- recording ------------------------------------------------------------------------

    def _upsert(self, entry: Entry, sha: str | None) -> int:
        return self.conn.execute(
            """insert into exo_private.documents
                   (source_id, path_bytes, path, extension, size_bytes, mtime_ns, sha256)
               values (%s, %s, %s, %s, %s, %s, %s)
               on conflict (source_id, sha256(path_bytes)) do update
                  set path = excluded.path, extension = excluded.extension, size_bytes = excluded.size_bytes,
                      mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256
               returning id""",
            (self.source_id, entry.key, entry.path, entry.extension, entry.size, entry.mtime_ns, sha),
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
        prior = self.ledger.get(entry.key)
        if prior and entry.skip == "unreadable" and prior.stage in LIVE:
            self.summary.kept += 1  # a read that failed is doubt: what was stored stays
            return
        if (
            prior
            and prior.stage == "skipped"
            and prior.size == entry.size
            and prior.mtime_ns == entry.mtime_ns
        ):
            self.summary.unchanged += 1
            return
        with transaction(self.conn):
            if prior and prior.stage not in ("skipped", "deleted"):
                self.conn.execute("select exo_private.forget_document(%s)", (prior.id,))
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "skipped", entry.skip, entry.detail)

    # -- one file -------------------------------------------------------------------------

    def process(self, entry: Entry) -> None:
        """Hash, extract (unless cached) and hand the document to the database."""
        limit = self.limits.max_bytes
        if entry.size > limit:
            doc_id = self._upsert(entry, None)
            self._set_stage(
                doc_id, "failed", "too_large", f"{entry.size} bytes is over the {limit} byte limit"
            )
            return
        if self._over_text_limit(entry):
            prior = self.ledger.get(entry.key)
            if prior and prior.stage in LIVE:  # it grew past the limit: what it was is gone
                self.conn.execute("select exo_private.forget_document(%s)", (prior.id,))
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "skipped", "large_text", (
                f"{entry.size / 1e6:.1f} MB of plain text, over the {self.max_text_bytes / 1e6:g} MB "
                "of ingest.max_text_bytes"))  # fmt: skip
            return
        try:
            sha = _sha256(entry.absolute)
        except OSError as exc:
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "failed", "unreadable", exc.strerror or str(exc))
            return
        doc_id = self._upsert(entry, sha)
        cached = self.conn.execute(
            "select metadata, needs_ocr from exo_private.text_cache where sha256 = %s", (sha,)
        ).fetchone()
        if cached:
            metadata, needs_ocr = cached
            self.summary.from_cache += 1
        else:
            try:
                metadata, needs_ocr = self._extract(entry, sha)
            except ExtractionError as exc:
                stage = "skipped" if exc.error_class in ("empty", "junk") else "failed"
                self._set_stage(doc_id, stage, exc.error_class, exc.message)
                return
            self.summary.extracted += 1
        noticed = [metadata["frontmatter_error"]] if "frontmatter_error" in metadata else []
        for warning in noticed + metadata.get("warnings", []):
            self.summary.warnings.append({"path": entry.path, "warning": warning})
        if needs_ocr:  # a scan: the worker reads it (exocortex.ingest.ocr) and it continues from there
            self.conn.execute("select exo_private.await_ocr(%s)", (doc_id,))
            self.summary.run["ocr_pending"] += 1
            return
        stage = continue_extracted(self.conn, doc_id, entry.path, metadata, self.limits.timeout_s)
        self.summary.run[stage] += 1
        self.routed.append(doc_id)
        capped = self.conn.execute(
            "select metadata -> 'extraction_capped' from exo_private.documents where id = %s", (doc_id,)
        ).fetchone()[0]
        if capped:
            self.summary.warnings.append({"path": entry.path, "warning": (
                f"{capped['windows']:,} extraction windows: the first {capped['queued']:,} are queued for "
                "the graph, the rest are searchable only (extraction.max_windows_per_document)")})  # fmt: skip

    def _extract(self, entry: Entry, sha: str) -> tuple[dict, bool]:
        """Extract in the sandbox and stream the text into the text cache; (metadata, needs_ocr)."""
        result = self.sandbox.extract(entry.absolute, entry.extension)
        metadata = {**result.metadata, **({"links": result.links} if result.links else {})}
        head = [sha.encode(), json.dumps(metadata).encode(), b"t" if result.needs_ocr else b"f"]
        with (
            self.conn.cursor() as cur,
            cur.copy(
                "copy exo_private.text_cache (sha256, metadata, needs_ocr, extractor_version, body) from stdin"
            ) as copy,
        ):
            copy.write(b"\t".join(_copy_field(f) for f in [*head, EXTRACTOR_VERSION.encode()]) + b"\t")
            for block in self.sandbox.text():
                copy.write(_copy_field(block))
            copy.write(b"\n")
        return metadata, result.needs_ocr

    def _fail(self, entry: Entry, error_class: str, message: str) -> None:
        """A file whose processing raised: record it failed (in a fresh savepoint) and go on."""
        with transaction(self.conn):
            doc_id = self._upsert(entry, None)
            self._set_stage(doc_id, "failed", error_class, message.strip()[:2000])

    # -- the run --------------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> IngestSummary:
        began = time.monotonic()
        s = self.summary
        seen: set[bytes] = set()
        todo: list[Entry] = []

        # What people and rules decided since the router last trained teaches this run, once
        # it is a fair share of what it knows (each training reads every training document).
        s.router = self.conn.execute(
            """select exo_private.train_router(false, (select (value #>> '{}')::float8 from exo_private.settings
                                                       where key = 'routing.learned_retrain_share'))"""
        ).fetchone()[0]
        self.conn.commit()
        walk = Walk(self.root)
        for entry in walk:
            seen.add(entry.key)
            s.seen += 1
            if entry.skip:
                s.excluded += entry.skip == "excluded_sensitive"
                try:
                    self.record_skip(entry)
                except psycopg.Error as exc:
                    self._fail(entry, type(exc).__name__, str(exc))
                continue
            prior = self.ledger.get(entry.key)
            if (
                prior
                and prior.size == entry.size
                and prior.mtime_ns == entry.mtime_ns
                and prior.stage in SETTLED
                # one the walk skipped before is read now that it does not ("README", taken as text
                # since; one no longer ignored)
                and not (prior.stage == "skipped" and prior.error_class in WALK_SKIPS)
                # one skipped as too large to be prose is read once it is allowed (or the limit rose)
                and not (prior.error_class == "large_text" and not self._over_text_limit(entry))
            ):
                s.unchanged += 1
                continue
            todo.append(entry)
        self.conn.commit()

        with self.sandbox:
            for start in range(0, len(todo), BATCH):
                with transaction(self.conn):
                    for entry in todo[start : start + BATCH]:
                        self._process_one(entry)
                        s.processed += 1
                if progress:
                    progress(min(start + BATCH, len(todo)), len(todo))

        unlisted = {error.key for error in walk.errors}
        s.folder_errors = len(walk.errors)
        s.unreadable_folders = [{"path": error.path, "error": error.error} for error in walk.errors]
        gone = []
        for key, prior in self.ledger.items():
            if key in seen or prior.stage == "deleted":
                continue
            if _gone(key, walk.listed, unlisted):
                gone.append(prior)
            else:
                s.kept += 1
        with transaction(self.conn):
            for prior in gone:
                self.conn.execute("select exo_private.forget_document(%s)", (prior.id,))
            s.deleted = len(gone)
            self._record_folders(walk)
            s.links_resolved = self.conn.execute(
                "select exo_private.resolve_links(%s)", (self.source_id,)
            ).fetchone()[0]
            # This run's notes again: a [[link]] may name a person a later file of the run introduced.
            self.conn.execute(
                """select exo_private.link_structure(array(
                       select distinct l.source_document from exo_private.document_links l
                       where l.source_document = any(%s)))""",
                (self.routed,),
            )
            if self.workspace is not None:
                # --workspace is the person's choice for the whole folder, quarantine included.
                s.moved_from_quarantine = self.conn.execute(
                    "select exo_private.route_source_quarantine(%s)", (self.source_id,)
                ).fetchone()[0]
        self._totals()
        s.seconds = time.monotonic() - began
        with transaction(self.conn):
            self.conn.execute(
                "insert into exo_private.ingest_runs (source_id, started_at, finished_at, summary) "
                "values (%s, now() - make_interval(secs => %s), now(), %s)",
                (self.source_id, s.seconds, Jsonb(summary_json(s))),
            )
        return s

    def _process_one(self, entry: Entry) -> None:
        """process() in a savepoint; whatever it raises is recorded and the run goes on."""
        try:
            with transaction(self.conn):
                self.process(entry)
        except ExtractionError as exc:  # the text broke off on its way from the sandbox
            self._fail(entry, exc.error_class, exc.message)
        except psycopg.errors.QueryCanceled:
            self._fail(
                entry,
                "timeout",
                f"routing, banding and chunking took over {self.limits.timeout_s:g} s "
                "(setting ingest.file_timeout_s)",
            )
        except Exception as exc:  # one bad file never stops the run
            self._fail(entry, type(exc).__name__, str(exc))

    def _record_folders(self, walk: Walk) -> None:
        """The folders this run could not list replace the source's earlier ones."""
        keys = [error.key for error in walk.errors]
        self.conn.execute(
            "delete from exo_private.unreadable_folders where source_id = %s and not (path_bytes = any(%s))",
            (self.source_id, keys),
        )
        with self.conn.cursor() as cur:
            cur.executemany(
                """insert into exo_private.unreadable_folders (source_id, path_bytes, path, error)
                   values (%s, %s, %s, %s)
                   on conflict (source_id, sha256(path_bytes)) do update
                      set path = excluded.path, error = excluded.error, last_seen_at = now()""",
                [(self.source_id, error.key, error.path, error.error) for error in walk.errors],
            )

    def _totals(self) -> None:
        s = self.summary
        for method, n in self.conn.execute(
            """select route ->> 'method', count(*) from exo_private.documents
               where id = any(%s) and workspace is not null group by 1""",
            (self.routed,),
        ):
            s.routed_by[method] += n
        for workspace, n in self.conn.execute(
            """select workspace, count(*) from exo_private.documents
               where id = any(%s) and route ->> 'method' = 'default' group by 1""",
            (self.routed,),
        ):
            s.defaulted[workspace] += n
        s.quarantine = [
            {"code": code, "reason": kind, "declared": declared, "documents": n, "paths": paths}
            for code, kind, declared, n, paths in self.conn.execute(
                # each workspace a frontmatter names that does not exist, by name (exo workspace add
                # creates it)
                """select w.code, case w.code when 'unknown_workspace' then w.reason else w.kind end,
                          case w.code when 'unknown_workspace'
                               then exo_private.declared_workspace(d.frontmatter) end,
                          count(*), (array_agg(d.path order by d.path))[1:3]
                   from exo_private.documents d cross join lateral exo_private.document_why(d) w
                   where d.source_id = %s and d.stage = 'quarantined'
                   group by 1, 2, 3 order by 4 desc, 2""",
                (self.source_id,),
            )
        ]
        s.not_ingested = [
            {"path": path, "stage": stage, "reason": reason, "fix": fix}
            for path, stage, reason, fix in self.conn.execute(
                """select d.path, d.stage::text, w.reason, w.fix
                   from exo_private.documents d cross join lateral exo_private.document_why(d) w
                   where d.source_id = %s and d.stage in ('failed', 'skipped')
                   order by d.stage = 'skipped', d.path limit %s""",
                (self.source_id, NAMED),
            )
        ]
        s.workspace_names = [
            name for (name,) in self.conn.execute("select name from exo_private.workspaces order by name")
        ]
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
        "kept": s.kept,
        "excluded": s.excluded,
        "folder_errors": s.folder_errors,
        "unreadable_folders": s.unreadable_folders,
        "links_resolved": s.links_resolved,
        "seconds": round(s.seconds, 3),
        "run": dict(s.run),
        "stages": dict(s.stages),
        "workspaces": dict(s.workspaces),
        "errors": dict(s.errors),
        "routed_by": dict(s.routed_by),
        "moved_from_quarantine": s.moved_from_quarantine,
        "defaulted": dict(s.defaulted),
        "quarantine": s.quarantine,
        "not_ingested": s.not_ingested,
        "router": s.router,
        "warnings": s.warnings,
        "allowed_large": s.allowed_large,
    }


def ingest(cfg: Config, root: Path, workspace: str | None = None, progress: Progress | None = None,
           dbname: str | None = None, allow_large: list[str] | tuple[str, ...] = ()) -> IngestSummary:  # fmt: skip
    """Ingest one folder as exo_writer; returns the end summary. allow_large: globs of plain-text
    files to read although they are over ingest.max_text_bytes, added to ingest.large_text_allowed
    (relative ones under root)."""
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
            raise ValueError(
                f"workspace {workspace!r} does not exist (exo workspace add {workspace} creates it)"
            )
        return Ingest(conn, root, workspace, allow_large).run(progress)
