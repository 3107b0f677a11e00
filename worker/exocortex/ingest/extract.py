"""Text extraction: one small function per file type, chosen by extension through `EXTRACTORS`.

`extract(path)` is the only entry point the pipeline needs (it runs it in a
separate process with time and memory limits: exocortex.ingest.sandbox). It
checks the file (size, type, emptiness) before any library sees it, dispatches
on the extension, and turns every failure into an `ExtractionError` with a
short, stable `error_class`, so one bad file never stops a scan. The text it
returns has paragraphs separated by blank lines; `metadata` is JSON-serialisable,
with header values (title, subject, from, to, cc) cut to MAX_HEADER_CHARS and
each cut recorded under metadata["cut"], and what the format libraries logged or warned
about the file (pypdf's "invalid pdf header", ...) under metadata["warnings"], rather than
printed without its path. Every extractor is linear in its input.
Format libraries are imported inside their extractor, so importing this module stays cheap.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime as dt
import email
import email.policy
import logging
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
from html.parser import HTMLParser
from pathlib import Path

import yaml

EXTRACTOR_VERSION = "1"
OCR_MIN_CHARS_PER_PAGE = 270
#: The default of the setting ingest.max_file_bytes, for callers without a database.
MAX_FILE_BYTES = 200 * 1024**2
#: Header values are cut to this many characters: a title is indexed (a btree entry is at most 2.7 kB).
MAX_HEADER_CHARS = 500
MAX_UNZIPPED_BYTES = 512 * 1024**2
MAX_ZIP_RATIO = 200  # expanded size over archive size
LIBREOFFICE_TIMEOUT_S = 120

_HEAD_BYTES = 8192
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
_DELIMITERS = (",", "\t", ";", "|")
#: C0 controls other than tab, the line breaks, form feed and escape, and DEL: rare in any text.
_CONTROL_BYTES = bytes(sorted(set(range(0x20)) - set(b"\t\n\v\f\r\x1b"))) + b"\x7f"
_MAX_CONTROL_SHARE = 0.05
_SOME_CONTROL_SHARE = 0.01
_MAX_INVALID_UTF8_SHARE = 0.10
_HEADERS = ("title", "subject", "from", "to", "cc")
_RAW_HEADER_CHARS = 8 * MAX_HEADER_CHARS  # room for encoded words before the decoded value is cut
_SURROGATE = re.compile("[\ud800-\udfff]")
_MESSAGE_ID = re.compile(r"<([^<>@\s]{1,200}@[^<>@\s]{1,200})>")
_THREAD_HEADERS = {"message-id": "message_id", "in-reply-to": "in_reply_to", "references": "references"}
MAX_REFERENCES = 20
#: At most this many distinct messages of a file's libraries are kept in metadata["warnings"].
MAX_WARNINGS = 10
WIKI_LINK = re.compile(r"\[\[([^\]\[|#\n]+)(?:#[^\]\[|\n]*)?(?:\|[^\]\[\n]*)?\]\]")


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


def binary_reason(data: bytes) -> str | None:
    """Why bytes with a text extension look binary, or None: NUL bytes near the start, a high
    share of control characters, or some control characters among many invalid UTF-8 bytes.

    Text in a single-byte or East Asian encoding is invalid UTF-8 too, but holds no controls."""
    if not data or data.startswith(_UTF16_BOMS):
        return None
    if b"\0" in data[:_HEAD_BYTES]:
        return "NUL bytes in the first 8 KiB: a binary file with a text extension"
    controls = (len(data) - len(data.translate(None, _CONTROL_BYTES))) / len(data)
    if controls > _MAX_CONTROL_SHARE:
        return f"{controls:.0%} of its bytes are control characters: binary content with a text extension"
    if controls > _SOME_CONTROL_SHARE:
        text = data.decode("utf-8", errors="surrogateescape")
        invalid = (len(text) - len(text.encode("utf-8", errors="ignore").decode("utf-8"))) / len(data)
        if invalid > _MAX_INVALID_UTF8_SHARE:
            return (
                f"{controls:.1%} of its bytes are control characters and {invalid:.0%} are not valid "
                "UTF-8: binary content with a text extension"
            )
    return None


@contextlib.contextmanager
def _noticed() -> Iterator[list[str]]:
    """The messages logged (WARNING and up) or warned while the block runs, in order."""
    messages: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())
    root = logging.getLogger()
    with warnings.catch_warnings():  # restores the filters and showwarning
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *_: messages.append(str(message))
        root.addHandler(handler)
        try:
            yield messages
        finally:
            root.removeHandler(handler)


def _read_text(path: Path) -> tuple[str, dict]:
    """Read a text-type file; bytes that look binary (binary_reason) are refused."""
    data = path.read_bytes()
    if reason := binary_reason(data):
        raise ExtractionError("binary", reason)
    text, encoding = _decode(data)
    del data
    metadata = {} if encoding == "utf-8" else {"encoding": encoding}
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, metadata


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
    if "\0" in text:
        text = text.replace("\0", "")
    if _SURROGATE.search(text):
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def cut_header(metadata: dict, name: str, value: str) -> str:
    """value cut to MAX_HEADER_CHARS; a cut is recorded in metadata["cut"][name]."""
    if len(value) <= MAX_HEADER_CHARS:
        return value
    metadata.setdefault("cut", {}).setdefault(
        name, f"{len(value)} characters, cut to the first {MAX_HEADER_CHARS}"
    )
    return value[:MAX_HEADER_CHARS]


def _set_date(metadata: dict, value, source: str) -> None:
    """Record the format's own creation or publication date as written (an ISO string for a
    datetime) and where it came from. Banding (plpy/banding.py metadata_date) judges it: a tool's
    default date, or one later than the file's mtime, is ignored there, where the mtime is known."""
    if isinstance(value, dt.datetime | dt.date):
        value = value.isoformat()
    if isinstance(value, str) and value.strip():
        metadata["date"] = value.strip()[:100]
        metadata["date_source"] = source


def wiki_links(text: str) -> list[str]:
    """The targets of Obsidian [[wiki links]] in a text, sorted and distinct."""
    return sorted({m.group(1).strip() for m in WIKI_LINK.finditer(text) if m.group(1).strip()})


# HTML to text: block boundaries, line breaks and table cells become private-use markers that survive the
# whitespace collapse, then turn into blank lines, newlines and tabs. The parser is event-driven (the
# stdlib's HTMLParser) and keeps no tree, so any depth of nesting costs time linear in the markup.
_PARA, _LINE, _CELL = "\ue000", "\ue001", "\ue002"
#: <meta> names and properties that carry a page's creation or publication date, best first.
_HTML_DATE_META = (
    "article:published_time", "dcterms.created", "dc.date.created", "dcterms.issued", "dc.date.issued",
    "citation_publication_date", "citation_date", "dc.date", "dcterms.date", "date", "pubdate",
    "publication_date", "publish-date",
)  # fmt: skip
#: Elements whose text is never indexed: code, the head, and a site's navigation and sidebars.
_DROP_TAGS = frozenset(("script", "style", "noscript", "template", "head", "title", "nav", "aside"))
#: A page's header and footer are dropped too; inside an <article> or <main> they are its own (its
#: title, byline, notes) and kept.
_PAGE_TAGS = frozenset(("header", "footer"))
_CONTENT_TAGS = frozenset(("article", "main"))
_BLOCK_TAGS = frozenset([
    "address", "article", "blockquote", "body", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "li", "main", "ol", "p", "pre", "section", "summary", "table", "ul",
])  # fmt: skip


class _HtmlText(HTMLParser):
    """Collects the text of an HTML document with paragraph, line and cell markers, and its title."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: str | None = None
        self._title: list[str] | None = None
        self._dropped = 0  # open script, style, head, nav, ... elements
        self._content = 0  # open article and main elements
        self._pre = 0
        self.dates: dict[str, str] = {}  # "meta NAME" or "<time datetime>": its first value

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("meta", "time"):
            values = dict(attrs)
            name = (values.get("name") or values.get("property") or values.get("itemprop") or "").lower()
            if tag == "meta" and name in _HTML_DATE_META and values.get("content"):
                self.dates.setdefault(f"meta {name}", values["content"])
            elif tag == "time" and values.get("datetime"):
                self.dates.setdefault("<time datetime>", values["datetime"])
        if tag == "body":
            self._dropped = 0  # a <head> left open ends where the body starts
        if tag == "title" and self.title is None:
            self._title = []
        self._content += tag in _CONTENT_TAGS
        if self._drops(tag):
            self._dropped += 1
        elif self._dropped:
            return
        elif tag == "br":
            self.parts.append(_LINE)
        elif tag in _BLOCK_TAGS:
            self.parts.append(_PARA)
            self._pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._title is not None:
            self.title = " ".join(part.strip() for part in self._title if part.strip())
            self._title = None
        self._content = max(self._content - (tag in _CONTENT_TAGS), 0)
        if self._drops(tag):
            self._dropped = max(self._dropped - 1, 0)
        elif self._dropped:
            return
        elif tag == "tr":
            self.parts.append(_LINE)
        elif tag in ("td", "th"):
            self.parts.append(_CELL)
        elif tag in _BLOCK_TAGS:
            self.parts.append(_PARA)
            self._pre = max(self._pre - (tag == "pre"), 0)

    def _drops(self, tag: str) -> bool:
        return tag in _DROP_TAGS or (tag in _PAGE_TAGS and not self._content)

    def handle_data(self, data: str) -> None:
        if self._title is not None:
            self._title.append(data)
        if not self._dropped:
            self.parts.append(data.replace("\n", _LINE) if self._pre else data)


def _html_to_text(markup: str) -> tuple[str, str | None, tuple[str, str] | None]:
    """Return (text, title, (date, source) or None) of an HTML document: the date from the best
    date <meta> (_HTML_DATE_META; source "meta NAME"), else the first <time datetime>."""
    parser = _HtmlText()
    parser.feed(markup.translate({ord(m): None for m in (_PARA, _LINE, _CELL)}))
    parser.close()
    flat = re.sub(r"\s+", " ", "".join(parser.parts)).replace(_CELL, "\t")
    blocks = []
    for block in flat.split(_PARA):
        lines = (line.strip(" \t") for line in block.split(_LINE))
        blocks.append("\n".join(line for line in lines if line))
    sources = [f"meta {name}" for name in _HTML_DATE_META] + ["<time datetime>"]
    dated = next(((parser.dates[source], source) for source in sources if source in parser.dates), None)
    return _paragraphs(blocks), parser.title or None, dated


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


def _yaml_error(exc: Exception) -> str:
    """A frontmatter error in one line, placed by line and column of the file (the YAML starts on line 2)."""
    if not isinstance(exc, yaml.MarkedYAMLError):
        return str(exc)
    parts = [(exc.context, exc.context_mark), (exc.problem, exc.problem_mark)]
    return "; ".join(
        what + (f" at line {mark.line + 2}, column {mark.column + 1}" if mark else "")
        for what, mark in parts
        if what
    )


def parse_frontmatter(text: str) -> tuple[dict, str, str | None]:
    """Split YAML frontmatter off a Markdown text: (frontmatter, body, error). Never raises."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text, None
    try:
        data = yaml.load(match.group(1), Loader=_NoAliasLoader)  # a SafeLoader subclass
    except (yaml.YAMLError, ValueError, RecursionError) as exc:  # ValueError: a date like 2024-13-45
        return {}, text, f"invalid YAML frontmatter: {_yaml_error(exc)}"
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
    text, metadata["title"], dated = _html_to_text(markup)
    if dated:
        _set_date(metadata, dated[0], "HTML " + dated[1])
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
    headers: dict = {}
    for name, raw in message.raw_items():  # unparsed: parsing a header costs more than linear time
        name = name.lower()
        if name in ("from", "to", "cc", "subject", "date") and name not in headers:
            if len(raw) > _RAW_HEADER_CHARS:
                cut_header(metadata, name, raw)  # records the whole length
                raw = raw[:_RAW_HEADER_CHARS]
            headers[name] = email.policy.default.header_fetch_parse(name, raw)
    for name in ("from", "to", "cc", "subject"):
        if name in headers:
            metadata[name] = cut_header(metadata, name, str(headers[name]))
    if (date := headers.get("date")) is not None:
        parsed = getattr(date, "datetime", None)
        _set_date(metadata, parsed or str(date), "email Date header")
    metadata["title"] = metadata.get("subject")
    metadata.update(thread_ids(message))
    attachments = [part.get_filename() for part in message.walk() if part.get_filename()]
    if attachments:
        metadata["attachments"] = attachments
    return Extracted(message_text(message), metadata)


def message_text(message: EmailMessage) -> str:
    """An email's text: its plain-text body, else its HTML body as text, else nothing."""
    if body := message.get_body(preferencelist=("plain",)):
        return _part_text(body).replace("\r\n", "\n")
    if body := message.get_body(preferencelist=("html",)):
        return _html_to_text(_part_text(body))[0]
    return ""


# Where a mail stops being its writer's words: a signature's delimiter ("-- "), a client's line
# before the mail it answers or forwards ("On Tue, 3 Mar, Ann <a@b> wrote:", "-----Original
# Message-----", "---------- Forwarded message ---------"), or a block of that mail's headers.
_MAIL_TAIL = re.compile(
    r"^(?:--[ \t]*|-{3,}[ \t]*\w[\w ]*\w[ \t]*-{3,}[ \t]*|.{0,300}\bwrote:[ \t]*"
    r"|(?:From|Sent|Date|To|Subject|Cc):[ \t]+.*\n(?:From|Sent|Date|To|Subject|Cc):[ \t].*)$",
    re.M,
)
_MAIL_QUOTED = re.compile(r"^[ \t]*>.*$", re.M)


def mail_words(text: str) -> str:
    """A mail's text with what is not its writer's own words blanked (spaces of the same length,
    so offsets stay the text's): quoted lines ("> ..."), and from the first signature delimiter,
    attribution, original or forwarded message's line or header block on, the rest."""
    cut = _MAIL_TAIL.search(text)
    if cut:
        text = text[: cut.start()] + re.sub(r"[^\n]", " ", text[cut.start() :])
    return _MAIL_QUOTED.sub(lambda m: " " * len(m.group(0)), text)


def thread_ids(message: EmailMessage) -> dict:
    """The message's own Message-ID and the ids it answers (In-Reply-To; References, its last
    MAX_REFERENCES, oldest first), without their angle brackets: how the graph links a reply to
    the message it answers (sql/310_structural_graph.sql). Read from the raw headers, as above."""
    ids: dict = {}
    for name, raw in message.raw_items():
        key = _THREAD_HEADERS.get(name.lower())
        if key is None or key in ids:
            continue
        last = key == "references"
        found = _MESSAGE_ID.findall(raw[-_RAW_HEADER_CHARS:] if last else raw[:_RAW_HEADER_CHARS])
        if found:
            ids[key] = found[-MAX_REFERENCES:] if last else found[0]
    return ids


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
    with contextlib.suppress(ValueError, TypeError):  # a malformed date string: no date
        _set_date(metadata, info.creation_date if info else None, "PDF creation date")
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
    metadata = {"title": document.core_properties.title or None}
    _set_date(metadata, document.core_properties.created, "DOCX created property")
    return Extracted(_paragraphs(blocks), metadata)


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
    from odf import dc, meta, opendocument, teletype
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
    metadata = {"title": title or None}
    created = document.meta.getElementsByType(meta.CreationDate)
    if created:
        _set_date(metadata, teletype.extractText(created[0]), "ODT creation date")
    return Extracted(_paragraphs(paragraphs(document.text)), metadata)


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
    metadata = {"title": (titles[0][0] if titles else None) or None}
    # EPUB 2 may name each date's event: a publication or creation date first, else one with no
    # event; never a modification date.
    event = f"{{{epub.NAMESPACES['OPF']}}}event"
    dates = [(value, (attrs or {}).get(event, "")) for value, attrs in book.get_metadata("DC", "date")]
    published = [
        value for value, kind in dates if kind in ("publication", "creation", "original-publication")
    ]
    _set_date(
        metadata, (published or [value for value, kind in dates if not kind] or [None])[0], "EPUB dc:date"
    )
    return Extracted(_paragraphs(chapters), metadata)


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
            raise ExtractionError("timeout", f"LibreOffice took over {LIBREOFFICE_TIMEOUT_S} s") from exc
        finally:  # a timeout, or the sandbox stopping this process: soffice.bin goes too
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
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

#: The formats whose bytes are their text, so a file's size says how much it has to read; over the
#: setting ingest.max_text_bytes one is taken for a log or a dump (exocortex.ingest.pipeline).
#: (HTML and RTF are mostly markup: their size says little.)
PLAIN_TEXT_EXTENSIONS = frozenset({"txt", "md", "csv"})


def _check_file(path: Path, max_bytes: int) -> None:
    try:
        info = path.stat()
    except OSError as exc:
        raise ExtractionError("unreadable", str(exc)) from exc
    if not stat.S_ISREG(info.st_mode):
        raise ExtractionError("unreadable", "not a regular file")
    if info.st_size > max_bytes:
        raise ExtractionError("too_large", f"{info.st_size} bytes, over the limit of {max_bytes}")
    if info.st_size == 0:
        raise ExtractionError("empty", "zero bytes")


def extract(path: Path, max_bytes: int = MAX_FILE_BYTES, extension: str | None = None) -> Extracted:
    """Extract a file's text by its extension (the scan's, where it gave one: "txt" for a
    "README"; else the name's); every failure is an `ExtractionError`.

    A file over max_bytes is refused before it is read (too_large)."""
    path = Path(path)
    extractor = EXTRACTORS.get(extension if extension is not None else path.suffix.lower().removeprefix("."))
    if extractor is None:
        raise ExtractionError(
            "unsupported", f"no extractor for {path.suffix or 'a file without an extension'!r}"
        )
    _check_file(path, max_bytes)
    try:
        with _noticed() as noticed:
            result = extractor(path)
    except ExtractionError:
        raise
    except OSError as exc:
        raise ExtractionError("unreadable", str(exc)) from exc
    except MemoryError as exc:
        raise ExtractionError("too_large", "extracting it needs more memory than allowed") from exc
    except Exception as exc:  # any library failure on a malformed file
        raise ExtractionError("corrupt", f"{type(exc).__name__}: {exc}") from exc
    if noticed:
        result.metadata["warnings"] = list(dict.fromkeys(noticed))[:MAX_WARNINGS]
    result.text = _clean(result.text).strip()
    result.metadata = _jsonable(result.metadata)
    for name in _HEADERS:
        if isinstance(result.metadata.get(name), str):
            result.metadata[name] = cut_header(result.metadata, name, result.metadata[name])
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
