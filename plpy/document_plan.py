"""Plan one document: route, band, chunks with deference marks, extraction windows.

Chunks and windows carry character offsets (start, end) and the same offsets on
the UTF-8 text (byte_start, byte_end), by which the database cuts them.

The database calls this (exo_private.plan_document) and applies the plan; it is
plain stdlib Python so tests import it directly. Imports of sibling plpy modules
are inlined by the migrator.
"""

from banding import band_for
from chunking import split_text, utf8_spans
from deference import compile_subjects, document_marks
from routing import route


def _truthy(value):
    return value is True or str(value).strip().lower() in ("true", "yes", "1")


def plan(doc, text, settings, subjects, today, router=None):
    """doc: {path, title, frontmatter, metadata, review, forced_workspace, mtime_ns}; settings: the
    chunking/routing/banding/deference settings plus "workspaces"; subjects: the
    deference list [{subject, aliases}]; today: datetime.date; router: the learned
    router (routing.load_router) or None."""
    frontmatter = doc.get("frontmatter") or {}
    model = None
    if router is not None:
        model = {
            **router,
            "threshold": settings["routing.learned_threshold"],
            "min_documents": settings["routing.learned_min_documents"],
        }
    decision = route(
        doc["path"],
        text,
        frontmatter,
        doc.get("review"),
        doc.get("forced_workspace"),
        settings["workspaces"],
        settings["routing.folder_rules"],
        settings["routing.keywords"],
        settings["routing.confidence_threshold"],
        model,
        settings.get("routing.default_workspace"),
    )
    result = {"route": decision}
    if decision["workspace"] is None:
        return result
    canonical = _truthy(frontmatter.get("canonical", False))
    result["canonical"] = canonical
    result["band"] = band_for(
        frontmatter,
        text,
        doc["path"],
        doc["mtime_ns"],
        canonical,
        today,
        settings["banding.current_days"],
        settings["banding.recent_days"],
        doc.get("metadata") or {},
        settings.get("banding.numeric_date_order", "dmy"),
    )
    chunks = split_text(text, settings["chunking.chunk_chars"], settings["chunking.overlap_chars"])
    windows = split_text(text, settings["chunking.window_chars"], settings["chunking.window_overlap_chars"])
    encoded = utf8_spans(text, chunks + windows)
    marks = document_marks(
        [text[start:end] for start, end in chunks],
        doc.get("title"),
        doc["path"],
        frontmatter,
        compile_subjects(subjects),
        settings["deference.cues"],
    )
    result["chunks"] = [
        {
            "start": start,
            "end": end,
            "byte_start": encoded[i][0],
            "byte_end": encoded[i][1],
            "charged": marks[i],
        }
        for i, (start, end) in enumerate(chunks)
    ]
    result["windows"] = [
        {"start": start, "end": end, "byte_start": encoded[i][0], "byte_end": encoded[i][1]}
        for i, (start, end) in enumerate(windows, len(chunks))
    ]
    return result
