"""The text extractors, on real files of each type made in tmp_path with the same libraries."""

from __future__ import annotations

import datetime
import json
import logging
import os
import random
import sys
import time
import warnings
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from exocortex.ingest import extract as ex
from exocortex.ingest.extract import ExtractionError, extract, is_junk, parse_frontmatter
from exocortex.ingest.sandbox import Limits, Sandbox

PROSE = (
    "The quick brown fox jumps over the lazy dog while the archivist files another note about the "
    "history of the river crossing, the mill, and the families who kept the ledger for a century. "
)


def error_class(path: Path) -> str:
    with pytest.raises(ExtractionError) as info:
        extract(path)
    return info.value.error_class


def write_pdf(path: Path, pages: list[str], title: str | None = None) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
    pdf.output(str(path))
    return path


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "Quarterly Notes"
    document.add_heading("Introduction", level=1)
    document.add_paragraph("First paragraph of the memo.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Region"
    table.cell(0, 1).text = "Revenue"
    table.cell(1, 0).text = "North"
    table.cell(1, 1).text = "42"
    document.add_paragraph("Closing paragraph after the table.")
    document.save(str(path))
    return path


def result_is_jsonable(result: ex.Extracted) -> None:
    json.dumps(result.metadata, allow_nan=False)


# --- text types ------------------------------------------------------------------------------------


def test_txt_utf8_with_bom_and_crlf(tmp_path):
    path = tmp_path / "note.txt"
    path.write_bytes("\ufeffFirst line\r\nSecond line\r\n\r\nNew paragraph \u2713".encode())
    result = extract(path)
    assert result.text == "First line\nSecond line\n\nNew paragraph \u2713"
    assert result.metadata == {}
    assert not result.needs_ocr


def test_txt_cp1252_is_decoded_and_recorded(tmp_path):
    path = tmp_path / "menu.txt"
    path.write_bytes(b"caf\xe9 cr\xe8me \x93quoted\x94")
    result = extract(path)
    assert result.text == "caf\u00e9 cr\u00e8me \u201cquoted\u201d"
    assert result.metadata["encoding"] == "cp1252"


def test_txt_latin1_when_not_cp1252(tmp_path):
    path = tmp_path / "odd.txt"
    path.write_bytes(b"abc \x81 def")  # 0x81 is undefined in cp1252
    result = extract(path)
    assert result.text == "abc \x81 def"
    assert result.metadata["encoding"] == "latin-1"


def test_txt_utf16_with_bom_is_not_binary(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes("Hello wide world".encode("utf-16"))  # has NUL bytes, and a BOM
    result = extract(path)
    assert result.text == "Hello wide world"
    assert result.metadata["encoding"] == "utf-16"


def test_binary_renamed_txt(tmp_path):
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + os.urandom(64))
    assert error_class(path) == "binary"


def test_random_binary_without_nul_is_binary(tmp_path):
    path = tmp_path / "noise.txt"
    path.write_bytes(os.urandom(1 << 16).replace(b"\0", b""))
    assert error_class(path) == "binary"


_CONTROLS = bytes(range(1, 9)) + bytes(range(14, 27)) + bytes(range(28, 32)) + b"\x7f"


@pytest.mark.parametrize(
    "data",
    [
        ("\u0417\u0434\u0440\u0430\u0432\u0441\u0442\u0432\u0443\u0439, \u043c\u0438\u0440. " * 300).encode(
            "cp1251"
        ),
        ("\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3067\u3059\u3002" * 300).encode("shift_jis"),
        ("\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03ba\u03cc\u03c3\u03bc\u03b5. " * 300).encode(
            "iso-8859-7"
        ),
        ("Caf\u00e9 cr\u00e8me \u201cquoted\u201d.\n" * 300).encode("cp1252"),
        ("\x1b[31mred\x1b[0m log line \u2713\f\n" * 300).encode(),  # colour escapes, form feeds
        "Hello wide world".encode("utf-16"),
    ],
    ids=["cp1251", "shift_jis", "greek", "cp1252", "ansi-log", "utf-16"],
)
def test_text_in_any_encoding_is_not_binary(data):
    assert ex.binary_reason(data) is None


def test_binary_reason_counts_controls_and_invalid_utf8():
    noise = os.urandom(1 << 16).replace(b"\0", b"")
    assert "control characters" in ex.binary_reason(noise)
    printable = noise.translate(None, _CONTROLS)  # high bytes, no controls: could be some 8-bit text
    assert ex.binary_reason(printable) is None
    sprinkled = b"\x01".join(printable[i : i + 40] for i in range(0, len(printable), 40))  # 2.5% controls
    assert "not valid UTF-8" in ex.binary_reason(sprinkled)
    assert (
        ex.binary_reason(b"abc\0def") == "NUL bytes in the first 8 KiB: a binary file with a text extension"
    )


def test_csv(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("name,city\nAda,London\nGrace,Arlington\n", encoding="utf-8")
    result = extract(path)
    assert "Ada,London" in result.text
    assert not is_junk(result.text)


def test_html(tmp_path):
    path = tmp_path / "page.HTML"  # the extension is matched case-insensitively
    path.write_text(
        "<!doctype html><html><head><title>The Page Title</title><style>p {color: red}</style></head>"
        "<body><script>var secret = 1;</script><h1>Heading</h1><p>First   paragraph\n spans lines.</p>"
        "<div>Line one<br>Line two</div><!-- a comment --><table><tr><td>a</td><td>b</td></tr>"
        "<tr><td>c</td><td>d</td></tr></table><p>Caf&eacute; &amp; more</p></body></html>",
        encoding="utf-8",
    )
    result = extract(path)
    assert result.metadata["title"] == "The Page Title"
    assert result.text == (
        "Heading\n\nFirst paragraph spans lines.\n\nLine one\nLine two\n\na\tb\nc\td\n\nCaf\u00e9 & more"
    )


def test_html_site_furniture_is_not_text(tmp_path):
    path = tmp_path / "post.html"
    path.write_text(
        "<body><header>Site name <nav>Home | About</nav></header><aside>Popular posts</aside>"
        "<main><article><header><h1>Vacuum notes</h1></header><p>Tune the autovacuum.</p>"
        "<aside>Related: indexes</aside><footer>Filed under postgres</footer></article></main>"
        "<footer>Copyright 2026 <script>track()</script></footer></body>"
    )
    assert extract(path).text == "Vacuum notes\n\nTune the autovacuum.\n\nFiled under postgres"


def test_html_nesting_of_any_depth(tmp_path):
    path = tmp_path / "deep.html"
    path.write_text("<html><body>" + "<div>" * 100_000 + "deep text" + "</div>" * 100_000 + "</body></html>")
    assert extract(path).text == "deep text"


def test_html_head_left_open_ends_where_the_body_starts(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("<head><title>T</title><script>x()</script><body><p>Body text</p><p>More</p>")
    result = extract(path)
    assert (result.text, result.metadata["title"]) == ("Body text\n\nMore", "T")


def test_htm_uses_the_text_decoding_rules(tmp_path):
    path = tmp_path / "old.htm"
    path.write_bytes(b"<p>na\xefve</p><pre>line 1\nline 2</pre>")
    result = extract(path)
    assert result.text == "na\u00efve\n\nline 1\nline 2"
    assert result.metadata == {"encoding": "cp1252", "title": None}


def test_rtf(tmp_path):
    path = tmp_path / "letter.rtf"
    path.write_text(
        r"{\rtf1\ansi\deff0{\fonttbl{\f0\fswiss Helvetica;}}\f0\pard Hello RTF world.\par"
        r" Caf\'e9 in the second paragraph.\par}",
        encoding="ascii",
    )
    result = extract(path)
    assert result.text == "Hello RTF world.\n\nCaf\u00e9 in the second paragraph."


def test_rtf_without_header_is_corrupt(tmp_path):
    path = tmp_path / "fake.rtf"
    path.write_text("just some text", encoding="utf-8")
    assert error_class(path) == "corrupt"


# --- Markdown and frontmatter ----------------------------------------------------------------------


def test_md_with_frontmatter(tmp_path):
    path = tmp_path / "note.md"
    path.write_text(
        "---\ntitle: Garden plan\ndate: 2024-03-01\ntags: [garden, spring]\n---\n# Heading\n\nBody text.\n",
        encoding="utf-8",
    )
    result = extract(path)
    assert result.text == "# Heading\n\nBody text."
    assert result.metadata["title"] == "Garden plan"
    assert result.metadata["frontmatter"] == {
        "title": "Garden plan",
        "date": "2024-03-01",
        "tags": ["garden", "spring"],
    }
    assert "frontmatter_error" not in result.metadata
    result_is_jsonable(result)


def test_md_title_from_first_heading_outside_code(tmp_path):
    path = tmp_path / "howto.md"
    path.write_text("Intro.\n\n```sh\n# not a title\n```\n\n# Real Title #\n\nText.\n", encoding="utf-8")
    result = extract(path)
    assert result.metadata["title"] == "Real Title"
    assert "frontmatter" not in result.metadata


def test_md_without_title(tmp_path):
    path = tmp_path / "plain.md"
    path.write_text("Just text, ## not a heading.\n", encoding="utf-8")
    assert extract(path).metadata["title"] is None


def test_md_invalid_frontmatter_keeps_whole_text(tmp_path):
    path = tmp_path / "broken.md"
    text = "---\ntitle: [unclosed\n---\nBody.\n"
    path.write_text(text, encoding="utf-8")
    result = extract(path)
    assert result.text == text.strip()
    assert result.metadata["frontmatter_error"] == (
        "invalid YAML frontmatter: while parsing a flow sequence at line 2, column 8; "
        "expected ',' or ']', but got '<stream end>' at line 3, column 1"
    )
    assert "frontmatter" not in result.metadata


@pytest.mark.parametrize(
    ("text", "frontmatter", "body", "error"),
    [
        ("no frontmatter\n", {}, "no frontmatter\n", None),
        ("---\n---\nbody", {}, "body", None),
        ("---\r\na: 1\r\n---\r\nbody", {"a": 1}, "body", None),
        (
            "---\nwhen: 2024-01-02 03:04:05\n1: one\n---\n",
            {"when": "2024-01-02T03:04:05", "1": "one"},
            "",
            None,
        ),
        ("---\nnot closed\n", {}, "---\nnot closed\n", None),
        ("---\nx: .nan\n---\n", {"x": "nan"}, "", None),  # jsonb rejects NaN
        ("---\n- a\n- b\n---\nbody", {}, "---\n- a\n- b\n---\nbody", "frontmatter is a list, not a mapping"),
    ],
)
def test_parse_frontmatter(text, frontmatter, body, error):
    assert parse_frontmatter(text) == (frontmatter, body, error)


@pytest.mark.parametrize(
    "yaml_text",
    [
        "date: 2024-13-45",  # looks like a date, is not one
        "a: &x [1, 2]\nb: *x",  # aliases could expand a few lines into gigabytes
        "a: b: c",
    ],
)
def test_parse_frontmatter_errors_never_raise(yaml_text):
    text = f"---\n{yaml_text}\n---\nbody"
    frontmatter, body, error = parse_frontmatter(text)
    assert (frontmatter, body) == ({}, text)
    assert error


def test_parse_frontmatter_is_total_and_jsonable():
    # Seeded random YAML-ish text (hypothesis would leave a .hypothesis cache in the repository).
    rng = random.Random(0)
    alphabet = [*"ab1:-[]{}&*!|>'\"#%@`?,. \n\t", "2024-01-01", "2024-99-99", ".nan", "!!binary", "null"]
    for _ in range(2_000):
        yaml_text = "".join(rng.choices(alphabet, k=rng.randint(0, 30)))
        frontmatter, body, error = parse_frontmatter(f"---\n{yaml_text}\n---\nbody")
        json.dumps(frontmatter, allow_nan=False)
        assert body == "body" if error is None else error


# --- PDF -------------------------------------------------------------------------------------------


def test_pdf_with_text(tmp_path):
    path = write_pdf(tmp_path / "report.pdf", [PROSE * 3, "Second page. " + PROSE * 3], title="Annual Report")
    result = extract(path)
    assert "quick brown fox" in result.text
    assert "Second page." in result.text
    assert "\n\nSecond page." in result.text  # pages are separated by a blank line
    assert result.metadata.pop("date")[:4] == str(datetime.date.today().year)  # fpdf2 writes its run time
    assert result.metadata == {"pages": 2, "title": "Annual Report", "date_source": "PDF creation date"}
    assert not result.needs_ocr


def test_pdf_without_text_needs_ocr(tmp_path):
    path = write_pdf(tmp_path / "scan.pdf", ["", ""])
    result = extract(path)
    assert result.needs_ocr
    assert result.text == ""
    assert result.metadata["pages"] == 2


def test_pdf_with_little_text_needs_ocr(tmp_path):
    path = write_pdf(tmp_path / "sparse.pdf", ["Page 1 of a scan", PROSE])
    result = extract(path)
    assert result.needs_ocr  # under OCR_MIN_CHARS_PER_PAGE on average
    assert "Page 1 of a scan" in result.text


def test_corrupt_pdf(tmp_path):
    path = tmp_path / "random.pdf"
    path.write_bytes(os.urandom(4096))
    assert error_class(path) == "corrupt"


def test_truncated_pdf(tmp_path):
    path = write_pdf(tmp_path / "cut.pdf", [PROSE * 3])
    path.write_bytes(path.read_bytes()[:300])
    assert error_class(path) == "corrupt"


def test_encrypted_pdf(tmp_path):
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.encrypt(user_password="secret", algorithm="RC4-128")  # RC4 needs no crypto package
    path = tmp_path / "locked.pdf"
    with path.open("wb") as fh:
        writer.write(fh)
    assert error_class(path) == "encrypted"


# --- zip-based formats -----------------------------------------------------------------------------


def test_docx(tmp_path):
    result = extract(write_docx(tmp_path / "memo.docx"))
    assert result.text == (
        "Introduction\n\nFirst paragraph of the memo.\n\nRegion\tRevenue\nNorth\t42\n\n"
        "Closing paragraph after the table."
    )
    # python-docx's template date, recorded as written: banding ignores it (TOOL_DEFAULT_DATES)
    assert result.metadata == {
        "title": "Quarterly Notes",
        "date": "2013-12-23T23:15:00+00:00",
        "date_source": "DOCX created property",
    }


def test_docx_without_text_is_empty(tmp_path):
    import docx

    path = tmp_path / "blank.docx"
    docx.Document().save(str(path))
    assert error_class(path) == "empty"


def test_docx_not_a_zip(tmp_path):
    path = tmp_path / "fake.docx"
    path.write_bytes(b"this is not a zip archive at all")
    assert error_class(path) == "corrupt"


def test_docx_zip_without_word_parts_is_corrupt(tmp_path):
    path = tmp_path / "other.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "hello")
    assert error_class(path) == "corrupt"


def test_password_protected_office_file(tmp_path):
    # An encrypted OOXML file is an OLE container holding an "EncryptedPackage" stream, not a zip.
    path = tmp_path / "locked.docx"
    path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504) + "EncryptedPackage".encode("utf-16-le"))
    assert error_class(path) == "encrypted"


def test_docx_declaring_gigabytes_is_a_zip_bomb(tmp_path):
    path = write_docx(tmp_path / "bomb.docx")
    with zipfile.ZipFile(path, "a") as archive:
        info = zipfile.ZipInfo("word/media/huge.bin")
        archive.writestr(info, b"small")
        info.file_size = 3 * 1024**3  # the central directory now claims 3 GiB, as a crafted bomb's does
    assert path.stat().st_size < 100_000
    with pytest.raises(ExtractionError, match=r"expands to 3\d{9} bytes") as info:
        extract(path)
    assert info.value.error_class == "zip_bomb"


def test_docx_with_extreme_compression_ratio_is_a_zip_bomb(tmp_path):
    path = write_docx(tmp_path / "zeros.docx")
    with (
        zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("word/media/zeros.bin", "w") as member,
    ):
        for _ in range(32):  # 32 MiB of zeros, streamed: the archive grows by about 32 KiB
            member.write(bytes(1024**2))
    assert path.stat().st_size < 1024**2
    with pytest.raises(ExtractionError, match="compression ratio") as info:
        extract(path)
    assert info.value.error_class == "zip_bomb"


def test_zip_expanding_over_the_limit(tmp_path, monkeypatch):
    path = write_docx(tmp_path / "big.docx")
    assert extract(path).text
    monkeypatch.setattr(ex, "MAX_UNZIPPED_BYTES", 10_000)
    assert error_class(path) == "zip_bomb"


def test_pptx(tmp_path):
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    presentation.core_properties.title = "Roadmap"
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Slide one title"
    first.placeholders[1].text = "Bullet alpha\nBullet beta"
    second = presentation.slides.add_slide(presentation.slide_layouts[6])
    second.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Loose text box"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "k", (0, 1): "v", (1, 0): "x", (1, 1): "1"}.items():
        table.cell(row, col).text = text
    path = tmp_path / "deck.pptx"
    presentation.save(str(path))

    result = extract(path)
    assert result.text == "Slide one title\nBullet alpha\nBullet beta\n\nLoose text box\nk\tv\nx\t1"
    assert result.metadata == {"title": "Roadmap", "slides": 2}


@pytest.mark.parametrize("suffix", ["xlsx", "xlsm"])
def test_spreadsheet(tmp_path, suffix):
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.properties.title = "Budget"
    sales = workbook.active
    sales.title = "Sales"
    sales.append(["Month", "Amount", None])
    sales.append(["January", 1200, "multi\nline note"])
    workbook.create_sheet("Empty")
    costs = workbook.create_sheet("Costs")
    costs["B2"] = "=1+1"  # data_only: a formula never computed by a spreadsheet program reads as empty
    costs["A3"] = "Rent"
    path = tmp_path / f"book.{suffix}"
    workbook.save(path)

    result = extract(path)
    assert result.text == "Sales\nMonth\tAmount\nJanuary\t1200\tmulti line note\n\nCosts\nRent"
    assert result.metadata == {"title": "Budget", "sheets": 3}


def test_odt(tmp_path):
    from odf import dc
    from odf.opendocument import OpenDocumentText
    from odf.text import H, List, ListItem, P

    document = OpenDocumentText()
    document.meta.addElement(dc.Title(text="Field Notes"))
    document.text.addElement(H(outlinelevel=1, text="Chapter heading"))
    document.text.addElement(P(text="A paragraph of the notes."))
    item = ListItem()
    item.addElement(P(text="A list item"))
    bullets = List()
    bullets.addElement(item)
    document.text.addElement(bullets)
    path = tmp_path / "notes.odt"
    document.save(str(path))

    result = extract(path)
    assert result.text == "Chapter heading\n\nA paragraph of the notes.\n\nA list item"
    assert result.metadata == {"title": "Field Notes"}


def test_epub(tmp_path):
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("test-book-1")
    book.set_title("A Small Book")
    book.set_language("en")
    chapters = []
    for number, body in [(1, "<p>Call me Ishmael.</p>"), (2, "<p>The second chapter.</p>")]:
        chapter = epub.EpubHtml(title=f"Chapter {number}", file_name=f"ch{number}.xhtml", lang="en")
        chapter.content = f"<html><body><h1>Chapter {number}</h1>{body}</body></html>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    path = tmp_path / "book.epub"
    epub.write_epub(str(path), book)

    result = extract(path)
    assert result.text == "Chapter 1\n\nCall me Ishmael.\n\nChapter 2\n\nThe second chapter."
    assert result.metadata == {"title": "A Small Book"}


# --- email -----------------------------------------------------------------------------------------


def test_eml(tmp_path):
    message = EmailMessage()
    message["From"] = "Ada Lovelace <ada@example.org>"
    message["To"] = "charles@example.org"
    message["Cc"] = "mary@example.org"
    message["Subject"] = "Notes on the engine"
    message["Date"] = "Tue, 05 Mar 2024 10:15:00 +0000"
    message.set_content("Plain body about Bernoulli numbers.\n")
    message.add_alternative("<p>HTML body</p>", subtype="html")
    message.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="diagram.pdf")
    path = tmp_path / "note.eml"
    path.write_bytes(message.as_bytes())

    result = extract(path)
    assert result.text == "Plain body about Bernoulli numbers."
    assert result.metadata == {
        "from": "Ada Lovelace <ada@example.org>",
        "to": "charles@example.org",
        "cc": "mary@example.org",
        "subject": "Notes on the engine",
        "date": "2024-03-05T10:15:00+00:00",
        "date_source": "email Date header",
        "title": "Notes on the engine",
        "attachments": ["diagram.pdf"],
    }


def test_eml_html_only(tmp_path):
    message = EmailMessage()
    message["Subject"] = "Newsletter"
    message.set_content("<h1>News</h1><p>Caf\u00e9 opens.</p>", subtype="html", charset="iso-8859-1")
    path = tmp_path / "news.eml"
    path.write_bytes(message.as_bytes())
    result = extract(path)
    assert result.text == "News\n\nCaf\u00e9 opens."
    assert result.metadata["title"] == "Newsletter"


# --- legacy formats through LibreOffice ------------------------------------------------------------


def test_eml_too_long_headers_are_cut_with_a_reason(tmp_path):
    subject = "word " * 400_000  # 2 MB: parsing it whole would take minutes
    recipients = ", ".join(f"person{i}@example.com" for i in range(100))
    path = tmp_path / "long.eml"
    path.write_text(f"From: a@example.com\nTo: {recipients}\nSubject: {subject}\n\nBody.\n")
    result = extract(path)
    assert result.metadata["subject"] == result.metadata["title"] == subject[:500]
    assert result.metadata["to"] == recipients[:500]
    assert result.metadata["cut"] == {
        "subject": f"{len(subject)} characters, cut to the first 500",
        "to": f"{len(recipients)} characters, cut to the first 500",
    }
    assert result.text == "Body."


def test_cut_header_records_only_the_first_reason():
    metadata: dict = {}
    assert ex.cut_header(metadata, "title", "short") == "short" and metadata == {}
    assert ex.cut_header(metadata, "title", "x" * 9000) == "x" * ex.MAX_HEADER_CHARS
    assert ex.cut_header(metadata, "title", "x" * 4000) == "x" * ex.MAX_HEADER_CHARS
    assert metadata == {"cut": {"title": "9000 characters, cut to the first 500"}}


def fake_soffice(bin_dir: Path, body: str) -> None:
    bin_dir.mkdir()
    script = bin_dir / "soffice"
    script.write_text(f"#!{sys.executable}\nimport shutil, sys, time\nargs = sys.argv[1:]\n{body}\n")
    script.chmod(0o755)


def test_legacy_without_libreoffice(tmp_path, monkeypatch):
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    path = tmp_path / "old.doc"
    path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504))
    with pytest.raises(ExtractionError) as info:
        extract(path)
    assert info.value.error_class == "libreoffice_missing"
    assert "libreoffice-core" in info.value.message


def test_legacy_converts_with_a_private_profile(tmp_path, monkeypatch):
    converted = write_docx(tmp_path / "converted.docx")
    fake_soffice(
        tmp_path / "bin",
        "assert args[0].startswith('-env:UserInstallation=file:///'), args\n"
        "assert args[1:4] == ['--headless', '--convert-to', 'docx'], args\n"
        "assert args[-1].endswith('old.doc'), args\n"
        f"shutil.copy({str(converted)!r}, args[args.index('--outdir') + 1] + '/old.docx')",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    path = tmp_path / "old.doc"
    path.write_bytes(b"legacy bytes")
    result = extract(path)
    assert "First paragraph of the memo." in result.text
    assert (
        result.metadata["converted_with"] == "libreoffice" and result.metadata["title"] == "Quarterly Notes"
    )


def test_legacy_conversion_failure_is_corrupt(tmp_path, monkeypatch):
    fake_soffice(tmp_path / "bin", "print('Error: source file could not be loaded', file=sys.stderr)")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    path = tmp_path / "old.xls"
    path.write_bytes(b"legacy bytes")
    with pytest.raises(ExtractionError) as info:
        extract(path)
    assert info.value.error_class == "corrupt"
    assert "could not be loaded" in info.value.message


def test_legacy_conversion_timeout(tmp_path, monkeypatch):
    fake_soffice(tmp_path / "bin", "time.sleep(30)")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(ex, "LIBREOFFICE_TIMEOUT_S", 0.5)
    path = tmp_path / "old.ppt"
    path.write_bytes(b"legacy bytes")
    started = time.monotonic()
    assert error_class(path) == "timeout"
    assert time.monotonic() - started < 10


# --- checks every type shares ----------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["txt", "pdf", "docx", "eml"])
def test_zero_bytes_is_empty(tmp_path, suffix):
    path = tmp_path / f"nothing.{suffix}"
    path.touch()
    assert error_class(path) == "empty"


def test_whitespace_only_is_empty(tmp_path):
    path = tmp_path / "blank.md"
    path.write_text("  \n\n\t\n", encoding="utf-8")
    assert error_class(path) == "empty"


def test_too_large_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.pdf"
    with path.open("wb") as fh:  # sparse: no 200 MB written
        fh.seek(ex.MAX_FILE_BYTES)
        fh.write(b"\0")
    assert error_class(path) == "too_large"


def test_unsupported_extension(tmp_path):
    path = tmp_path / "program.exe"
    path.write_bytes(b"MZ")
    assert error_class(path) == "unsupported"
    assert error_class(tmp_path / "README") == "unsupported"


def test_unreadable(tmp_path):
    assert error_class(tmp_path / "missing.txt") == "unreadable"
    (tmp_path / "folder.txt").mkdir()
    assert error_class(tmp_path / "folder.txt") == "unreadable"


# A file without read permission: see tests/test_ingest.py, which runs `exo ingest` as an
# unprivileged user (root reads files whatever their mode).


def test_library_exceptions_do_not_escape(tmp_path, monkeypatch):
    def broken(path):
        raise KeyError("word/document.xml")

    monkeypatch.setitem(ex.EXTRACTORS, "txt", broken)
    path = tmp_path / "note.txt"
    path.write_text("text", encoding="utf-8")
    with pytest.raises(ExtractionError) as info:
        extract(path)
    assert info.value.error_class == "corrupt"
    assert "KeyError" in info.value.message


def test_what_libraries_log_or_warn_is_kept_in_the_metadata(tmp_path, monkeypatch, capfd):
    def noisy(path):
        logging.getLogger("pypdf._reader").warning("invalid pdf header: %r", b"junk")
        logging.getLogger("pypdf._reader").info("not worth keeping")
        warnings.warn("Workbook contains no default style", UserWarning, stacklevel=1)
        for number in range(20):
            logging.getLogger("pypdf").warning("Ignoring wrong pointing object %d", number % 12)
        return ex.Extracted(path.read_text())

    monkeypatch.setitem(ex.EXTRACTORS, "txt", noisy)
    path = tmp_path / "note.txt"
    path.write_text("text", encoding="utf-8")
    warnings_kept = extract(path).metadata["warnings"]
    assert warnings_kept[:3] == [
        "invalid pdf header: b'junk'",
        "Workbook contains no default style",
        "Ignoring wrong pointing object 0",
    ]
    assert len(warnings_kept) == ex.MAX_WARNINGS  # distinct, the first ones
    assert capfd.readouterr().err == ""  # nothing printed without the file's path


def test_nul_and_surrogates_are_removed(tmp_path, monkeypatch):
    monkeypatch.setitem(ex.EXTRACTORS, "txt", lambda path: ex.Extracted("a\0b\ud800c", {"title": "t\0"}))
    path = tmp_path / "note.txt"
    path.write_text("text", encoding="utf-8")
    result = extract(path)
    assert result.text == "ab?c"
    assert result.metadata == {"title": "t"}


def test_registry_is_the_allowlist():
    allowlist = {"pdf", "docx", "doc", "pptx", "ppt", "xlsx", "xls", "xlsm", "txt", "md", "html", "htm"}
    assert set(ex.EXTRACTORS) == allowlist | {"rtf", "odt", "csv", "epub", "eml"}


# --- the junk gate ---------------------------------------------------------------------------------


def test_is_junk():
    rows = "\n".join(f"{i},2024-01-{i % 28 + 1:02},{i * 3.5},north,ok" for i in range(450))
    assert len(rows) > 12_000
    assert is_junk(rows)
    assert is_junk(rows.replace(",", "\t"))
    assert not is_junk(rows[:5_000])  # short exports are kept
    assert not is_junk("\n\n".join([PROSE] * 80))
    assert not is_junk(rows + "\n" + "\n".join(["A line of prose."] * 60))  # over 10% of lines are prose


def test_is_junk_counts_delimiters_per_line():
    two = "\n".join(["a,b;c"] * 3000)  # two delimiters per line: not dense
    three = "\n".join(["a,b;c|d"] * 3000)
    assert not is_junk(two)
    assert is_junk(three)


# --- the sandbox: extraction in a separate process with limits --------------------------------------

LIMITS = Limits(max_bytes=ex.MAX_FILE_BYTES, timeout_s=60, memory_bytes=1024**3)


def test_sandbox_streams_the_text_in_blocks(tmp_path):
    path = tmp_path / "long.md"
    path.write_text(
        "# Long\n\n" + "\n\n".join(f"[[Note {i % 7}]] caf\u00e9 \u2603 {PROSE}" for i in range(3000))
    )
    with Sandbox(LIMITS) as sandbox:
        result = sandbox.extract(path, "md")
        blocks = list(sandbox.text())
    expected = extract(path)
    assert len(blocks) > 1 and result.size == sum(map(len, blocks))
    assert b"".join(blocks).decode() == expected.text
    assert result.metadata == expected.metadata
    assert result.links == [f"Note {i}" for i in range(7)]


def test_sandbox_timeout_kills_the_process_and_the_next_file_gets_a_new_one(tmp_path):
    slow = tmp_path / "nested.html"
    slow.write_text("<div>" * 400_000 + "x")
    good = tmp_path / "good.txt"
    good.write_text("fine")
    with Sandbox(Limits(ex.MAX_FILE_BYTES, timeout_s=0.5, memory_bytes=1024**3)) as sandbox:
        with pytest.raises(ExtractionError) as info:
            sandbox.extract(slow, "html")
        assert info.value.error_class == "timeout"
        assert "ingest.file_timeout_s" in info.value.message
        sandbox.extract(good, "txt")
        assert b"".join(sandbox.text()) == b"fine"


def test_sandbox_memory_limit_is_too_large(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"Postgres vacuum notes.\n" * 2_000_000)  # 46 MB
    small = tmp_path / "small.txt"
    small.write_text("small")
    with Sandbox(Limits(ex.MAX_FILE_BYTES, timeout_s=60, memory_bytes=64 * 1024**2)) as sandbox:
        with pytest.raises(ExtractionError) as info:
            sandbox.extract(big, "txt")
        assert info.value.error_class == "too_large"
        sandbox.extract(small, "txt")
        assert b"".join(sandbox.text()) == b"small"


def test_sandbox_extracted_text_over_the_limit_is_too_large(tmp_path):
    path = tmp_path / "quotes.txt"
    path.write_bytes(b"\x93" * 1000)  # cp1252: each byte is a quotation mark of 3 bytes in UTF-8
    sandbox = Sandbox(Limits(max_bytes=2000, timeout_s=60, memory_bytes=1024**3))
    with sandbox, pytest.raises(ExtractionError) as info:
        sandbox.extract(path, "txt")
    assert info.value.error_class == "too_large"
    assert info.value.message == "the extracted text is 3000 bytes, over the limit of 2000"


def test_sandbox_a_dead_process_is_crashed_and_replaced(tmp_path):
    path = tmp_path / "note.txt"
    path.write_text("note")
    with Sandbox(LIMITS) as sandbox:
        sandbox.extract(path, "txt")
        list(sandbox.text())
        # dies between two files: the next one gets a new process, and nothing is said
        idle = sandbox._child.pid
        os.kill(idle, 9)
        os.waitid(os.P_PID, idle, os.WEXITED | os.WNOWAIT)  # dead (not reaped) before the next call
        sandbox.extract(path, "txt")
        assert b"".join(sandbox.text()) == b"note" and sandbox._child.pid != idle
        # dies once found alive, before it answers: that file is the one that crashed it
        start = sandbox._start

        def start_then_die(deadline):
            child = start(deadline)
            os.kill(child.pid, 9)
            os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
            return child

        sandbox._start = start_then_die
        with pytest.raises(ExtractionError) as info:
            sandbox.extract(path, "txt")
        assert (info.value.error_class, info.value.message) == (
            "crashed",
            "the extraction process died (signal 9)",
        )
        sandbox._start = start
        sandbox.extract(path, "txt")
        assert b"".join(sandbox.text()) == b"note"


def test_sandbox_text_left_unread_does_not_leak_into_the_next_file(tmp_path):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("first " * 500_000)
    second.write_text("second")
    with Sandbox(LIMITS) as sandbox:
        sandbox.extract(first, "txt")
        next(sandbox.text())  # one block of several
        sandbox.extract(second, "txt")
        assert b"".join(sandbox.text()) == b"second"


def test_a_pdf_with_a_bad_header_reads_and_says_so_from_the_sandbox(tmp_path, capfd):
    path = write_pdf(tmp_path / "prefixed.pdf", [PROSE * 3])
    path.write_bytes(b"junk\n" + path.read_bytes())
    with Sandbox(LIMITS) as sandbox:
        result = sandbox.extract(path, "pdf")
        assert "quick brown fox" in b"".join(sandbox.text()).decode()
    assert "invalid pdf header: b'junk\\n'" in result.metadata["warnings"]
    assert "invalid pdf header" not in capfd.readouterr().err  # the child printed nothing
