"""Text extraction: one small function per file type, chosen by extension through `EXTRACTORS`.

`extract(path)` is the only entry point the pipeline needs. It checks the file
(size, type, emptiness) before any library sees it, dispatches on the
extension, and turns every failure into an `ExtractionError` with a short,
stable `error_class`, so one bad file never stops a scan. The text it returns
has paragraphs separated by blank lines; `metadata` is JSON-serialisable.
Format libraries are imported inside their extractor, so importing this module stays cheap.
"""

from __future__ import annotations

import codecs
import datetime as dt
import email
import email.policy
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from functools import partial
from pathlib import Path

import yaml

EXTRACTOR_VERSION = "1"
OCR_MIN_CHARS_PER_PAGE = 270
MAX_FILE_BYTES = 200 * 1024**2
MAX_UNZIPPED_BYTES = 512 * 1024**2
MAX_ZIP_RATIO = 200  # expanded size over archive size
LIBREOFFICE_TIMEOUT_S = 120

_HEAD_BYTES = 8192
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
_DELIMITERS = (",", "\t", ";", "|")


@dataclass
class Extracted:
    text: str
    metadata: dict = field(default_factory=dict)
    needs_ocr: bool = False


class ExtractionError(Exception):
    """Why a file yields no text; `error_class` is a short stable identifier."""

    def __init__(self, error_class: str, message: str):
        super().__init__(f"{error_class}: {message}")
        self.error_class = error_class
        self.message = message


# --- shared helpers --------------------------------------------------------------------------------


def _decode(data: bytes) -> tuple[str, str]:
    """Decode text bytes: UTF-16 by its BOM, else UTF-8 (BOM stripped), else cp1252, else latin-1."""
    if data.startswith(_UTF16_BOMS):
        return data.decode("utf-16", errors="replace"), "utf-16"
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding), encoding.removesuffix("-sig")
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1"


def _read_text(path: Path) -> tuple[str, dict]:
    """Read a text-type file; NUL bytes near the start mean a binary file with a text extension."""
    data = path.read_bytes()
    if not data.startswith(_UTF16_BOMS) and b"\0" in data[:_HEAD_BYTES]:
        raise ExtractionError("binary", "NUL bytes in the first 8 KiB: a binary file with a text extension")
    text, encoding = _decode(data)
    metadata = {} if encoding == "utf-8" else {"encoding": encoding}
    return text.replace("\r\n", "\n").replace("\r", "\n"), metadata


def _paragraphs(blocks: Iterator[str] | list[str]) -> str:
    """Join the non-empty blocks with blank lines."""
    return "\n\n".join(block.strip() for block in blocks if block and block.strip())


def _jsonable(value):
    """Make a parsed value JSON- and jsonb-safe: dates as ISO strings, string keys, no NaN or NUL."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(_jsonable(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return _clean(value)
    if value is None or isinstance(value, int | float):
        return value
    return str(value)


def _clean(text: str) -> str:
    """Postgres text rejects NUL and lone surrogates."""
    return text.replace("\0", "").encode("utf-8", "replace").decode("utf-8")


# HTML to text: block boundaries, line breaks and table cells become private-use markers that survive the
# whitespace collapse, then turn into blank lines, newlines and tabs.
_PARA, _LINE, _CELL = "\ue000", "\ue001", "\ue002"
_DROP_TAGS = ("script", "style", "noscript", "template", "head", "title")
_BLOCK_TAGS = re.compile(
    r"^(address|article|aside|blockquote|body|dd|details|dialog|div|dl|dt|fieldset|figcaption|figure|footer"
    r"|form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|summary|table|ul)$"
)


def _html_to_text(markup: str) -> tuple[str, str | None]:
    """Return (text, title) of an HTML document, parsed with the stdlib parser."""
    from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

    with warnings.catch_warnings():  # advice for interactive use; a file's content is what it is
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup.translate({ord(m): None for m in (_PARA, _LINE, _CELL)}), "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for pre in soup.find_all("pre"):
        for string in pre.find_all(string=True):
            string.replace_with(string.replace("\n", _LINE))
    for tag in soup.find_all("br"):
        tag.replace_with(_LINE)
    for tag in soup.find_all("tr"):
        tag.insert_after(_LINE)
    for tag in soup.find_all(("td", "th")):
        tag.insert_after(_CELL)
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before(_PARA)
        tag.insert_after(_PARA)
    flat = re.sub(r"\s+", " ", soup.get_text()).replace(_CELL, "\t")
    blocks = []
    for block in flat.split(_PARA):
        lines = (line.strip(" \t") for line in block.split(_LINE))
        blocks.append("\n".join(line for line in lines if line))
    return _paragraphs(blocks), title or None


def _check_zip(path: Path) -> None:
    """Refuse a zip-based file that is not a zip, or would expand too far, before any library opens it.

    Python's zipfile never yields more than a member's declared size, so the declared sizes bound the work.
    """
    with path.open("rb") as fh:
        is_ole = fh.read(len(_OLE_MAGIC)) == _OLE_MAGIC
        if is_ole and _ENCRYPTED_PACKAGE in fh.read():
            raise ExtractionError("encrypted", "a password-protected Office file")
    if is_ole:
        raise ExtractionError("corrupt", "a legacy Office (OLE) file with a zip-format extension")
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise ExtractionError("corrupt", f"not a zip archive ({exc})") from exc
    if expanded > MAX_UNZIPPED_BYTES:
        raise ExtractionError("zip_bomb", f"expands to {expanded} bytes, over {MAX_UNZIPPED_BYTES}")
    ratio = expanded / max(path.stat().st_size, 1)
    if ratio > MAX_ZIP_RATIO:
        raise ExtractionError("zip_bomb", f"compression ratio {ratio:.0f}, over {MAX_ZIP_RATIO}")


# --- plain text ------------------------------------------------------------------------------------


def _txt(path: Path) -> Extracted:
    return Extracted(*_read_text(path))


_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


class _NoAliasLoader(yaml.SafeLoader):
    """safe_load without anchors and aliases, which can expand a few lines into gigabytes."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, "aliases are not allowed in frontmatter", mark)
        return super().compose_node(parent, index)


def parse_frontmatter(text: str) -> tuple[dict, str, str | None]:
    """Split YAML frontmatter off a Markdown text: (frontmatter, body, error). Never raises."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text, None
    try:
        data = yaml.load(match.group(1), Loader=_NoAliasLoader)  # a SafeLoader subclass
    except (yaml.YAMLError, ValueError, RecursionError) as exc:  # ValueError: a date like 2024-13-45
        return {}, text, f"invalid YAML frontmatter: {exc}"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return {}, text, f"frontmatter is a {type(data).__name__}, not a mapping"
    return _jsonable(data), text[match.end() :], None


_FENCED_CODE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
_ATX_H1 = re.compile(r"^#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


def _md(path: Path) -> Extracted:
    text, metadata = _read_text(path)
    frontmatter, body, error = parse_frontmatter(text)
    heading = _ATX_H1.search(_FENCED_CODE.sub("", body))
    title = frontmatter.get("title") or (heading.group(1) if heading else None)
    metadata["title"] = None if title is None else str(title)
    if frontmatter:
        metadata["frontmatter"] = frontmatter
    if error:
        metadata["frontmatter_error"] = error
    return Extracted(body, metadata)


def _html(path: Path) -> Extracted:
    markup, metadata = _read_text(path)
    text, metadata["title"] = _html_to_text(markup)
    return Extracted(text, metadata)


def _rtf(path: Path) -> Extracted:
    from striprtf.striprtf import rtf_to_text

    markup, metadata = _read_text(path)
    if not markup.lstrip().startswith("{\\rtf"):
        raise ExtractionError("corrupt", "not an RTF document (no {\\rtf header)")
    return Extracted(_paragraphs(rtf_to_text(markup, errors="replace").splitlines()), metadata)


def _eml(path: Path) -> Extracted:
    with path.open("rb") as fh:
        message: EmailMessage = email.message_from_binary_file(fh, policy=email.policy.default)
    metadata: dict = {}
    for name in ("from", "to", "cc", "subject"):
        if message[name] is not None:
            metadata[name] = str(message[name])
    date = message["date"]
    if date is not None:
        parsed = getattr(date, "datetime", None)
        metadata["date"] = parsed.isoformat() if parsed else str(date)
    metadata["title"] = metadata.get("subject")
    attachments = [part.get_filename() for part in message.walk() if part.get_filename()]
    if attachments:
        metadata["attachments"] = attachments
    text = ""
    if body := message.get_body(preferencelist=("plain",)):
        text = _part_text(body).replace("\r\n", "\n")
    elif body := message.get_body(preferencelist=("html",)):
        text = _html_to_text(_part_text(body))[0]
    return Extracted(text, metadata)


def _part_text(part: EmailMessage) -> str:
    """A MIME part's text by its declared charset, else by the shared decoding rules."""
    payload = part.get_payload(decode=True) or b""
    charset = part.get_content_charset()
    if charset:
        try:
            return payload.decode(charset, errors="replace")
        except LookupError:  # an unknown charset name
            pass
    return _decode(payload)[0]


# --- PDF -------------------------------------------------------------------------------------------


def _pdf(path: Path) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise ExtractionError("encrypted", "an encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except (DependencyError, FileNotDecryptedError) as exc:  # AES needs a crypto package to even open
        raise ExtractionError("encrypted", f"an encrypted PDF ({exc})") from exc
    text = _paragraphs(pages)
    metadata = {"pages": len(pages), "title": (info.title if info else None) or None}
    needs_ocr = len(text) / max(len(pages), 1) < OCR_MIN_CHARS_PER_PAGE
    return Extracted(text, metadata, needs_ocr=needs_ocr)


# --- zip-based office and e-book formats -----------------------------------------------------------


def _docx(path: Path) -> Extracted:
    import docx
    from docx.table import Table

    _check_zip(path)
    document = docx.Document(str(path))
    blocks = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            blocks.append("\n".join("\t".join(cell.text for cell in row.cells) for row in item.rows))
        else:
            blocks.append(item.text)
    return Extracted(_paragraphs(blocks), {"title": document.core_properties.title or None})


def _pptx(path: Path) -> Extracted:
    import pptx

    _check_zip(path)
    presentation = pptx.Presentation(str(path))
    slides = ["\n".join(_shape_texts(slide.shapes)) for slide in presentation.slides]
    metadata = {"title": presentation.core_properties.title or None, "slides": len(slides)}
    return Extracted(_paragraphs(slides).replace("\v", "\n"), metadata)  # \v: a line break in a paragraph


def _shape_texts(shapes) -> Iterator[str]:
    from pptx.shapes.group import GroupShape

    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes)
        elif shape.has_text_frame and shape.text_frame.text.strip():
            yield shape.text_frame.text
        elif shape.has_table:
            yield "\n".join("\t".join(cell.text for cell in row.cells) for row in shape.table.rows)


def _xlsx(path: Path) -> Extracted:
    import openpyxl

    _check_zip(path)
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        sheets = []
        for sheet in workbook.worksheets:
            lines = []
            for row in sheet.iter_rows(values_only=True):
                cells = ["" if value is None else " ".join(str(value).split()) for value in row]
                while cells and not cells[-1]:
                    cells.pop()
                if cells:
                    lines.append("\t".join(cells))
            if lines:
                sheets.append("\n".join([sheet.title, *lines]))
        metadata = {"title": workbook.properties.title or None, "sheets": len(workbook.worksheets)}
    finally:
        workbook.close()
    return Extracted(_paragraphs(sheets), metadata)


def _odt(path: Path) -> Extracted:
    from odf import dc, opendocument, teletype
    from odf.namespaces import TEXTNS

    _check_zip(path)
    with zipfile.ZipFile(path) as archive:
        if b"encryption-data" in archive.read("META-INF/manifest.xml"):
            raise ExtractionError("encrypted", "a password-protected OpenDocument file")
    document = opendocument.load(str(path))

    def paragraphs(node) -> Iterator[str]:
        for child in node.childNodes:
            if child.qname in ((TEXTNS, "p"), (TEXTNS, "h")):
                yield teletype.extractText(child)
            else:
                yield from paragraphs(child)

    titles = document.meta.getElementsByType(dc.Title)
    title = teletype.extractText(titles[0]) if titles else None
    return Extracted(_paragraphs(paragraphs(document.text)), {"title": title or None})


def _epub(path: Path) -> Extracted:
    import ebooklib
    from ebooklib import epub

    _check_zip(path)
    book = epub.read_epub(str(path), options={"ignore_ncx": True})
    chapters = []
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        is_toc = isinstance(item, epub.EpubNav)  # the table of contents repeats the chapter titles
        if item is not None and item.get_type() == ebooklib.ITEM_DOCUMENT and not is_toc:
            chapters.append(_html_to_text(_decode(item.get_content())[0])[0])
    titles = book.get_metadata("DC", "title")
    return Extracted(_paragraphs(chapters), {"title": (titles[0][0] if titles else None) or None})


# --- legacy office formats through LibreOffice -----------------------------------------------------


def _legacy(path: Path, target: str) -> Extracted:
    """Convert a .doc/.ppt/.xls with LibreOffice headless, then extract the converted file."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        raise ExtractionError(
            "libreoffice_missing",
            f"legacy .{path.suffix.lower().lstrip('.')} files need LibreOffice: install it (Debian: "
            "libreoffice-core, or libreoffice-writer / libreoffice-impress / libreoffice-calc)",
        )
    with tempfile.TemporaryDirectory(prefix="exo-convert-") as tmp:
        profile = (Path(tmp) / "profile").as_uri()  # a private profile: no clash with a running LibreOffice
        command = [soffice, f"-env:UserInstallation={profile}", "--headless", "--convert-to", target]
        command += ["--outdir", tmp, str(path.resolve())]
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout kills soffice.bin too
        )
        try:
            _, stderr = process.communicate(timeout=LIBREOFFICE_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ExtractionError("timeout", f"LibreOffice took over {LIBREOFFICE_TIMEOUT_S} s") from exc
        converted = next(Path(tmp).glob(f"*.{target}"), None)
        if converted is None:
            detail = stderr.decode(errors="replace").strip()[-500:] or f"exit status {process.returncode}"
            raise ExtractionError("corrupt", f"LibreOffice could not convert it: {detail}")
        result = EXTRACTORS[target](converted)
    result.metadata["converted_with"] = "libreoffice"
    return result


# --- registry and entry point ----------------------------------------------------------------------

EXTRACTORS: dict[str, Callable[[Path], Extracted]] = {
    "pdf": _pdf,
    "docx": _docx,
    "doc": partial(_legacy, target="docx"),
    "pptx": _pptx,
    "ppt": partial(_legacy, target="pptx"),
    "xlsx": _xlsx,
    "xlsm": _xlsx,
    "xls": partial(_legacy, target="xlsx"),
    "txt": _txt,
    "md": _md,
    "html": _html,
    "htm": _html,
    "rtf": _rtf,
    "odt": _odt,
    "csv": _txt,
    "epub": _epub,
    "eml": _eml,
}


def _check_file(path: Path) -> None:
    try:
        info = path.stat()
    except OSError as exc:
        raise ExtractionError("unreadable", str(exc)) from exc
    if not stat.S_ISREG(info.st_mode):
        raise ExtractionError("unreadable", "not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise ExtractionError("too_large", f"{info.st_size} bytes, over the limit of {MAX_FILE_BYTES}")
    if info.st_size == 0:
        raise ExtractionError("empty", "zero bytes")


def extract(path: Path) -> Extracted:
    """Extract a file's text by its extension; every failure is an `ExtractionError`."""
    path = Path(path)
    extractor = EXTRACTORS.get(path.suffix.lower().removeprefix("."))
    if extractor is None:
        raise ExtractionError(
            "unsupported", f"no extractor for {path.suffix or 'a file without an extension'!r}"
        )
    _check_file(path)
    try:
        result = extractor(path)
    except ExtractionError:
        raise
    except OSError as exc:
        raise ExtractionError("unreadable", str(exc)) from exc
    except Exception as exc:  # any library failure on a malformed file
        raise ExtractionError("corrupt", f"{type(exc).__name__}: {exc}") from exc
    result.text = _clean(result.text).strip()
    result.metadata = _jsonable(result.metadata)
    if not result.text and not result.needs_ocr:
        raise ExtractionError("empty", "no text found")
    return result


def is_junk(text: str) -> bool:
    """True for long texts that are mostly delimiter-dense lines (data tables, not prose)."""
    if len(text) <= 10_000:
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    dense = sum(1 for line in lines if sum(line.count(d) for d in _DELIMITERS) >= 3)
    return dense > 0.9 * len(lines)
