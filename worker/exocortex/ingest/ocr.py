"""OCR of scanned PDFs: each page rendered by pdftoppm, then read by Tesseract.

A PDF whose text layer is too thin (exocortex.ingest.extract: under OCR_MIN_CHARS_PER_PAGE
characters a page) waits at stage ocr_pending with a message on the ocr queue
(sql/160_ocr.sql); the worker reads it with `read_pdf` and the text joins the text cache.

Pages are rendered rather than taken from the PDF's embedded images (pypdf can extract
those): a scanned page may be several images, masks, JBIG2 or CCITT data, rotated or cropped
by the page's transform, and rendering gives Tesseract what a reader sees whatever the
scanner wrote. Each page has a time limit (render and read together, `ocr.timeout_seconds`)
and at most `ocr.page_limit` pages are read.

The tools come from Debian (poppler-utils, tesseract-ocr, tesseract-ocr-eng; the runtime's
debian-packages.txt, part ocr). The embedded runtime has them in its root and runs them there
through chroot as the root's postgres user, like PostgreSQL and llama-server: the PDF goes in
on stdin and the page image and text come out on stdout, so no file crosses into the root.
With EXO_DATABASE_URL (no root) or without root rights, they come from PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass

from exocortex.config import Config
from exocortex.runtime import local

DPI = 300
"""Pages are rendered at this resolution: what Tesseract reads best."""
TOOLS = ("pdftoppm", "tesseract")
INSTALL = "apt-get install poppler-utils tesseract-ocr tesseract-ocr-eng"
_LANGUAGE = re.compile(r"^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$")
_STDERR_CHARS = 300


class OcrError(Exception):
    """Why a scan yields no text; `error_class` is ocr_timeout, ocr_failed or ocr_unavailable."""

    def __init__(self, error_class: str, message: str):
        super().__init__(f"{error_class}: {message}")
        self.error_class = error_class
        self.message = message


@dataclass(frozen=True)
class Settings:
    page_limit: int
    timeout_s: float
    language: str

    @classmethod
    def from_values(cls, values: dict) -> Settings:
        """The ocr.* settings (key -> value), checked; a ValueError names the bad one."""
        page_limit = values.get("ocr.page_limit")
        if isinstance(page_limit, bool) or not isinstance(page_limit, int) or page_limit < 1:
            raise ValueError(
                f"setting ocr.page_limit must be a whole number of pages >= 1, not {page_limit!r}"
            )
        timeout_s = values.get("ocr.timeout_seconds")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not timeout_s > 0:
            raise ValueError(
                f"setting ocr.timeout_seconds must be a number of seconds > 0, not {timeout_s!r}"
            )
        language = values.get("ocr.language")
        if not isinstance(language, str) or not _LANGUAGE.match(language):
            raise ValueError(
                f"setting ocr.language must name Tesseract language data such as 'eng' or 'eng+deu', "
                f"not {language!r}"
            )
        return cls(page_limit, float(timeout_s), language)


@dataclass(frozen=True)
class Tools:
    """How to run pdftoppm and tesseract: through chroot into the runtime root, or from PATH."""

    prefix: tuple[str, ...]
    env: dict[str, str]
    where: str

    def run(self, argv: list[str], data: bytes, timeout_s: float) -> subprocess.CompletedProcess:
        """Run one tool with data on stdin; TimeoutExpired when it takes over timeout_s (it is killed)."""
        return subprocess.run(
            [*self.prefix, *argv],
            input=data,
            capture_output=True,
            env=self.env,
            timeout=timeout_s,
            check=False,
        )


def find_tools(cfg: Config) -> Tools:
    """The runtime root's tools (root user, a provisioned runtime), else those on PATH; OcrError
    ocr_unavailable, naming the fix, when neither has both. OCR runs on this machine, not in
    the database, so the runtime root serves whichever database is used (EXO_DB_NAME or
    EXO_DATABASE_URL, this server's or another's)."""
    root = cfg.runtime_root
    one_core = {"OMP_THREAD_LIMIT": "1"}  # one page, one core: the worker runs jobs in parallel
    if os.geteuid() == 0 and all((root / "usr/bin" / tool).exists() for tool in TOOLS):
        chroot = shutil.which("chroot") or "/usr/sbin/chroot"
        local.mount_proc(root)
        return Tools(
            (chroot, "--userspec=postgres:postgres", str(root)),
            {**local.CHROOT_ENV, **one_core},
            f"the runtime root {root}",
        )
    if all(shutil.which(tool) for tool in TOOLS):
        return Tools((), {**os.environ, **one_core}, "PATH")
    if cfg.external_url is None and os.geteuid() == 0:
        fix = "run `exo db up`, which installs them into the runtime root (debian-packages.txt, part ocr)"
    else:
        fix = f"install them ({INSTALL})"
    raise OcrError("ocr_unavailable", f"OCR needs pdftoppm and tesseract, which were not found: {fix}")


def _stderr(result: subprocess.CompletedProcess) -> str:
    text = result.stderr.decode("utf-8", "replace").strip()
    return text[-_STDERR_CHARS:] or f"exit code {result.returncode}"


@dataclass
class Result:
    text: str
    """The pages' text, each page a block separated by a blank line; empty when none was found."""
    pages_read: int
    pages: int

    def metadata(self, settings: Settings) -> dict:
        """What the text cache keeps of this reading (metadata.ocr)."""
        return {
            "engine": "tesseract",
            "language": settings.language,
            "dpi": DPI,
            "pages_read": self.pages_read,
            "pages": self.pages,
        }


def read_page(tools: Tools, data: bytes, page: int, settings: Settings) -> str:
    """Render one page (1-based) of the PDF in data and read its text, within the page's time limit."""
    began = time.monotonic()
    limit = settings.timeout_s
    try:
        rendered = tools.run(
            ["pdftoppm", "-f", str(page), "-l", str(page), "-r", str(DPI), "-gray", "-"], data, limit
        )
        if rendered.returncode != 0 or not rendered.stdout:
            raise OcrError("ocr_failed", f"page {page} could not be rendered: {_stderr(rendered)}")
        left = limit - (time.monotonic() - began)
        if left <= 0:
            raise subprocess.TimeoutExpired("tesseract", limit)
        read = tools.run(
            ["tesseract", "stdin", "stdout", "-l", settings.language, "--dpi", str(DPI)],
            rendered.stdout,
            left,
        )
    except subprocess.TimeoutExpired:
        raise OcrError(
            "ocr_timeout",
            f"page {page} took over {limit:g} s to render and read (setting ocr.timeout_seconds)",
        ) from None
    if read.returncode != 0:
        raise OcrError("ocr_failed", f"tesseract could not read page {page}: {_stderr(read)}")
    return read.stdout.decode("utf-8", "replace").replace("\0", "").replace("\f", "").strip()


def read_pdf(tools: Tools, data: bytes, pages: int, settings: Settings) -> Result:
    """Read the first min(pages, ocr.page_limit) pages of a scanned PDF."""
    if pages < 1:
        raise OcrError("ocr_failed", "extraction found no pages to read")
    count = min(pages, settings.page_limit)
    texts = [read_page(tools, data, page, settings) for page in range(1, count + 1)]
    return Result("\n\n".join(t for t in texts if t), count, pages)


def describe(tools: Tools) -> tuple[str, list[str]]:
    """(Tesseract's version, its installed languages); OcrError when it does not run."""
    try:
        version = tools.run(["tesseract", "--version"], b"", 30)
        langs = tools.run(["tesseract", "--list-langs"], b"", 30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OcrError("ocr_unavailable", f"tesseract does not run: {exc}") from None
    if version.returncode != 0 or langs.returncode != 0:
        raise OcrError(
            "ocr_unavailable", f"tesseract does not run: {_stderr(version if version.returncode else langs)}"
        )
    first = version.stdout.decode("utf-8", "replace").strip().splitlines()
    # --list-langs: a heading line ("List of available languages in ...:"), then one name a line.
    names = langs.stdout.decode("utf-8", "replace").strip().splitlines()[1:]
    return (first[0] if first else "tesseract"), [n.strip() for n in names if n.strip()]
