"""Walk a folder tree and say what each entry is, before any file is opened.

The extension allowlist and the sensitive-file exclusion are a security
boundary: they look only at names (and lstat), never at contents, and when in
doubt they exclude. Directories are pruned as the walk goes (os.walk with
followlinks=False), so the listing is streamed, symlink loops cannot trap it,
and excluded folders are never listed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ALLOWED_EXTENSIONS = frozenset(
    [
        "pdf",
        "docx",
        "doc",
        "pptx",
        "ppt",
        "xlsx",
        "xls",
        "xlsm",
        "txt",
        "md",
        "html",
        "htm",
        "rtf",
        "odt",
        "csv",
        "epub",
        "eml",
    ]
)

#: Key stores and key files, excluded whatever their names say.
SENSITIVE_EXTENSIONS = frozenset(
    [
        "kdbx",
        "kdb",
        "keyx",
        "p12",
        "pfx",
        "pem",
        "key",
        "der",
        "crt",
        "cer",
        "csr",
        "p7b",
        "p8",
        "ppk",
        "jks",
        "keystore",
        "gpg",
        "pgp",
        "asc",
        "sig",
        "bek",
        "keychain",
        "ovpn",
    ]
)

_SEP = r"[\s._-]*"
SENSITIVE_NAME = re.compile(
    "|".join(
        [
            rf"pass{_SEP}(?:word|wort|wd|phrase)",
            r"credential",
            r"secret",
            rf"api{_SEP}keys?",
            rf"private{_SEP}keys?",
            rf"recovery{_SEP}keys?",
            rf"bit{_SEP}locker",
            r"keepass",
            r"\bid_(?:rsa|dsa|ecdsa|ed25519)",
            r"\.env$",
            r"^\.?netrc$",
        ]
    ),
    re.IGNORECASE,
)

#: Folders that hold tools' state, not the person's writing.
PRUNED_FOLDERS = frozenset({".git", ".obsidian", ".trash", ".Trash", "node_modules", "__pycache__"})


@dataclass(frozen=True)
class Entry:
    path: str
    """Relative to the root, '/'-separated; undecodable bytes written as \\x escapes."""
    absolute: Path
    extension: str
    size: int
    mtime_ns: int
    skip: str | None = None
    """Why the file is not read: excluded_sensitive, unsupported_extension, symlink,
    special_file, hidden, unreadable. None for a file to ingest."""
    detail: str = ""


def display_path(relative: str) -> str:
    """A path as text the database can store, stable across runs."""
    return os.fsencode(relative).decode("utf-8", errors="backslashreplace").replace(os.sep, "/")


def sensitive_reason(name: str) -> str | None:
    """Why a file or folder name is excluded as sensitive, or None."""
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in SENSITIVE_EXTENSIONS:
        return f"key or credential store extension .{ext}"
    m = SENSITIVE_NAME.search(name)
    if m:
        return f"name matches '{m.group(0)}'"
    return None


def scan(root: Path, on_folder_error=None) -> Iterator[Entry]:
    """Every file under root, each with the reason it is skipped (or none).

    Excluded and pruned folders yield one entry each (with size 0), so the caller
    can count them; their contents are never listed."""
    root = Path(root)
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append, followlinks=False):
        here = Path(dirpath)
        while errors:
            error = errors.pop()
            if on_folder_error:
                on_folder_error(error)
        kept = []
        for name in sorted(dirnames):
            full = here / name
            rel = display_path(os.path.relpath(full, root))
            if full.is_symlink():
                yield _special(full, rel, "symlink", "symbolic link to a folder (not followed)")
            elif reason := sensitive_reason(name):
                yield _special(full, rel, "excluded_sensitive", f"folder {reason}")
            elif name in PRUNED_FOLDERS or name.startswith("."):
                continue  # tool state and hidden folders are not part of the corpus
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = here / name
            rel = display_path(os.path.relpath(full, root))
            yield _classify(full, rel, name)
    for error in errors:
        if on_folder_error:
            on_folder_error(error)


def _special(full: Path, rel: str, skip: str, detail: str) -> Entry:
    return Entry(rel, full, "", 0, 0, skip, detail)


def _classify(full: Path, rel: str, name: str) -> Entry:
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""
    # The name decides first: a sensitive file is excluded before anything else.
    if reason := sensitive_reason(name):
        return Entry(rel, full, ext, 0, 0, "excluded_sensitive", reason)
    try:
        st = full.lstat()
    except OSError as exc:
        return Entry(rel, full, ext, 0, 0, "unreadable", exc.strerror or str(exc))
    if stat.S_ISLNK(st.st_mode):
        return Entry(rel, full, ext, 0, st.st_mtime_ns, "symlink", "symbolic link (not followed)")
    if not stat.S_ISREG(st.st_mode):
        return Entry(rel, full, ext, 0, st.st_mtime_ns, "special_file", "not a regular file")
    if name.startswith("."):
        return Entry(rel, full, ext, st.st_size, st.st_mtime_ns, "hidden", "hidden file")
    if ext not in ALLOWED_EXTENSIONS:
        detail = f"extension .{ext} is not on the allowlist" if ext else "no extension"
        return Entry(rel, full, ext, st.st_size, st.st_mtime_ns, "unsupported_extension", detail)
    return Entry(rel, full, ext, st.st_size, st.st_mtime_ns)
