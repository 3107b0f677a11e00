"""Walk a folder tree and say what each entry is, before any file is opened.

The extension allowlist and the sensitive-file exclusion are a security
boundary: they look only at names (and lstat), never at contents, and when in
doubt they exclude. A conventional documentation name ("README", "NEWS.Debian":
DOCUMENTATION_NAMES) is read as text, by its name too. Directories are pruned as
the walk goes, so excluded folders are never listed and symbolic links are never
followed.

The walk is iterative and goes from folder to folder through directory file
descriptors (openat), holding one at a time and climbing back through "..",
so neither the depth of a tree nor the length of its paths can stop it. A
folder that cannot be listed is recorded (path and error) and the walk goes
on; `Walk.listed` says which folders were listed completely, the only ones in
which a missing file may be taken as deleted. Paths are kept as the file
system's raw bytes (the ledger key); the display form is only for people.

A `.exoignore` file at the root (gitignore syntax) leaves out what it matches:
a file is recorded as skipped ("ignored"), a folder is one such entry and is
never listed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pathspec

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

#: The names a software project, a package or a folder of notes gives its plain-text
#: documentation by convention (the GNU coding standards' and their kin), read as text whether
#: they have no extension ("README", "ChangeLog") or one that only says of what ("README.Debian",
#: "NEWS.source", "TODO.anacron"): the part before the first dot is one of these, case ignored.
DOCUMENTATION_NAMES = frozenset(
    ["readme", "news", "todo", "changes", "changelog", "authors", "install", "hacking", "bugs",
     "thanks", "faq", "contributing", "history", "copying", "license", "notice"]
)  # fmt: skip

#: Why the walk does not read a file (Entry.skip), decided anew on every walk: a file it skipped
#: before and reads now (a rule or the .exoignore changed) is read, however unchanged it is.
WALK_SKIPS = frozenset(
    ["excluded_sensitive", "unsupported_extension", "symlink", "special_file", "hidden", "ignored",
     "unreadable", "path_too_long"]
)  # fmt: skip

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


#: The file at a source's root whose gitignore-style patterns leave paths out of the corpus.
IGNORE_FILE = ".exoignore"

#: The longest path the system opens; a longer file is recorded, never opened.
PATH_MAX = os.pathconf("/", "PC_PATH_MAX")

_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FOLDER_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW


@dataclass(frozen=True)
class Entry:
    key: bytes
    """Relative to the root, the file system's raw bytes: the ledger key."""
    path: str
    """Display form of key: '/'-separated, undecodable bytes written as \\x escapes."""
    absolute: Path
    extension: str
    size: int
    mtime_ns: int
    skip: str | None = None
    """Why the file is not read (one of WALK_SKIPS). None for a file to ingest."""
    detail: str = ""


@dataclass(frozen=True)
class FolderError:
    """A folder that could not be listed (or reached) in this walk."""

    key: bytes
    error: str

    @property
    def path(self) -> str:
        return display_path(self.key)


@dataclass
class _Frame:
    key: bytes
    ident: tuple[int, int]
    pending: list[bytes] = field(default_factory=list)
    """Subfolders still to walk, last first."""


def display_path(key: bytes) -> str:
    """A raw relative path as text the database can store, stable across runs (not unique)."""
    return key.decode("utf-8", errors="backslashreplace")


def sensitive_reason(name: str) -> str | None:
    """Why a file or folder name is excluded as sensitive, or None."""
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in SENSITIVE_EXTENSIONS:
        return f"key or credential store extension .{ext}"
    m = SENSITIVE_NAME.search(name)
    if m:
        return f"name matches '{m.group(0)}'"
    return None


def read_ignore(root: Path) -> pathspec.GitIgnoreSpec | None:
    """The patterns of root's .exoignore (gitignore syntax), or None without one. It is read
    like any file of the tree: a link is not followed, and one that cannot be read is none."""
    try:
        fd = os.open(Path(root) / IGNORE_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
        return pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())


def _join(key: bytes, name: bytes) -> bytes:
    return key + b"/" + name if key else name


def _ident(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


class Walk:
    """Every file under root, each with the reason it is skipped (or none).

    Iterate once. Excluded folders yield one entry each (size 0), so the caller can
    count them; their contents are never listed. Afterwards `listed` holds the keys of
    the folders listed completely (b"" is the root) and `errors` the folders that
    could not be listed or reached."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._root_bytes = os.fsencode(self.root)
        self.listed: set[bytes] = set()
        self.errors: list[FolderError] = []
        self.ignore = read_ignore(self.root)

    def __iter__(self) -> Iterator[Entry]:
        try:
            fd = os.open(self.root, _ROOT_FLAGS)
        except OSError as exc:
            self.errors.append(FolderError(b"", _reason(exc)))
            return
        try:
            stack = [_Frame(b"", _ident(fd))]
            stack[0].pending = yield from self._list(fd, b"")
            while stack:
                frame = stack[-1]
                if not frame.pending:
                    stack.pop()
                    fd = self._climb(fd, stack)
                    continue
                name = frame.pending.pop()
                key = _join(frame.key, name)
                try:
                    child = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
                except OSError as exc:
                    self.errors.append(FolderError(key, _reason(exc)))
                    continue
                os.close(fd)
                fd = child
                stack.append(_Frame(key, _ident(fd)))
                stack[-1].pending = yield from self._list(fd, key)
        finally:
            if fd is not None:
                os.close(fd)

    def _list(self, fd: int, key: bytes) -> Iterator[Entry]:
        """Yield the entries of one folder; return its subfolders to walk, last first."""
        try:
            names = sorted(os.fsencode(name) for name in os.listdir(fd))
        except OSError as exc:
            self.errors.append(FolderError(key, _reason(exc)))
            return []
        self.listed.add(key)
        subfolders = []
        for name in names:
            rel = _join(key, name)
            text = os.fsdecode(name)
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                yield self._entry(rel, text, None, "unreadable", _reason(exc))
                continue
            if not stat.S_ISDIR(info.st_mode):
                yield self._classify(fd, rel, name, info)
            elif reason := sensitive_reason(text):
                yield self._entry(rel, text, None, "excluded_sensitive", f"folder {reason}")
            elif text in PRUNED_FOLDERS or text.startswith("."):
                continue  # tool state and hidden folders are not part of the corpus
            elif self.ignored(rel, folder=True):
                yield self._entry(rel, text, None, "ignored", f"folder matched by {IGNORE_FILE}")
            else:
                subfolders.append(name)
        subfolders.reverse()
        return subfolders

    def ignored(self, rel: bytes, folder: bool = False) -> bool:
        """Whether the root's .exoignore leaves this path out (a folder's patterns end in /)."""
        return self.ignore is not None and self.ignore.match_file(display_path(rel) + ("/" if folder else ""))

    def _climb(self, fd: int, stack: list[_Frame]) -> int | None:
        """From a finished folder's descriptor (closed here) to the new top of the stack's.

        Through "..", checked by device and inode; when the tree moved during the walk,
        down again from the root; a folder reached neither way has its pending
        subfolders recorded as errors and is left. None when the stack is empty."""
        parent = None
        if stack:
            try:
                parent = os.open(b"..", _FOLDER_FLAGS, dir_fd=fd)
            except OSError:
                parent = None
        os.close(fd)
        while stack:
            frame = stack[-1]
            if parent is not None and _ident(parent) == frame.ident:
                return parent
            if parent is not None:
                os.close(parent)
            parent = self._reopen(frame)
            if parent is not None:
                return parent
            stack.pop()
            for name in frame.pending:
                self.errors.append(
                    FolderError(_join(frame.key, name), "a folder above it moved during the scan")
                )
        return None

    def _reopen(self, frame: _Frame) -> int | None:
        """The folder of frame opened again from the root, one component at a time; None if it moved."""
        try:
            fd = os.open(self.root, _ROOT_FLAGS)
        except OSError:
            return None
        for part in frame.key.split(b"/") if frame.key else ():
            try:
                child = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            except OSError:
                os.close(fd)
                return None
            os.close(fd)
            fd = child
        if _ident(fd) == frame.ident:
            return fd
        os.close(fd)
        return None

    def _entry(self, rel: bytes, name: str, info: os.stat_result | None, skip: str | None = None,
               detail: str = "") -> Entry:  # fmt: skip
        ext = name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""
        if ext not in ALLOWED_EXTENSIONS and name.split(".", 1)[0].lower() in DOCUMENTATION_NAMES:
            ext = "txt"
        size, mtime_ns = (info.st_size, info.st_mtime_ns) if info else (0, 0)
        absolute = Path(os.fsdecode(self._root_bytes + b"/" + rel))
        return Entry(rel, display_path(rel), absolute, ext, size, mtime_ns, skip, detail)

    def _classify(self, fd: int, rel: bytes, name: bytes, info: os.stat_result) -> Entry:
        text = os.fsdecode(name)
        # The name decides first: a sensitive file is excluded before anything else.
        if reason := sensitive_reason(text):
            return self._entry(rel, text, None, "excluded_sensitive", reason)
        entry = self._entry(rel, text, info)
        if stat.S_ISLNK(info.st_mode):
            try:
                to_folder = stat.S_ISDIR(os.stat(name, dir_fd=fd).st_mode)
            except OSError:
                to_folder = False
            detail = (
                "symbolic link to a folder (not followed)" if to_folder else "symbolic link (not followed)"
            )
            return self._entry(rel, text, None, "symlink", detail)
        if not stat.S_ISREG(info.st_mode):
            return self._entry(rel, text, None, "special_file", "not a regular file")
        if text.startswith("."):
            return replace(entry, skip="hidden", detail="hidden file")
        if self.ignored(rel):
            return replace(entry, skip="ignored", detail=f"matched by {IGNORE_FILE}")
        if entry.extension not in ALLOWED_EXTENSIONS:
            detail = (
                f"extension .{entry.extension} is not on the allowlist" if entry.extension else "no extension"
            )
            return replace(entry, skip="unsupported_extension", detail=detail)
        length = len(os.fsencode(entry.absolute))
        if length >= PATH_MAX:
            return replace(
                entry,
                skip="path_too_long",
                detail=f"the path is {length} bytes, over the system's {PATH_MAX}",
            )
        return entry
