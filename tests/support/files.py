"""Files of a source folder for the ingest tests: written under a root, folders made as needed."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write `text` (bytes as they are) to root/rel, making its folders; the file's path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path
