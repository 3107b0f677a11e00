"""Plan one document: route, band, chunks with deference marks, extraction windows.

The database calls this (exo_private.plan_document) and applies the plan; it is
plain stdlib Python so tests import it directly. Imports of sibling plpy modules
are inlined by the migrator.
"""

from banding import band_for
from chunking import split_text
from deference import charged_marks, compile_subjects
from routing import route


def _truthy(value):
    return value is True or str(value).strip().lower() in ("true", "yes", "1")


def plan(doc, text, settings, subjects, today):
    """doc: {path, frontmatter, review, forced_workspace, mtime_ns}; settings: the
    chunking/routing/banding/deference settings plus "workspaces"; subjects: the
    deference list [{subject, aliases}]; today: datetime.date."""
    frontmatter = doc.get("frontmatter") or {}
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
    )
    compiled = compile_subjects(subjects)
    declared = frontmatter.get("charged") or []
    if isinstance(declared, str):
        declared = [declared]
    result["chunks"] = [
        {
            "start": start,
            "end": end,
            "charged": charged_marks(text[start:end], compiled, settings["deference.cues"], declared),
        }
        for start, end in split_text(
            text, settings["chunking.chunk_chars"], settings["chunking.overlap_chars"]
        )
    ]
    result["windows"] = [
        {"start": start, "end": end}
        for start, end in split_text(
            text, settings["chunking.window_chars"], settings["chunking.window_overlap_chars"]
        )
    ]
    return result
