"""Dating through the real ingest: a real file of each format ends with the right written_at and a
band_reason naming its source, and `exo rebuild` re-dates from the cache and stored metadata."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from support.db import Database, cloned_database

from exocortex.ingest import pipeline

MTIME = datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.UTC)
PROSE = "\n\n".join(["We walked along the river and talked about the harvest and the weather."] * 6)


def _pdf(path: Path) -> None:
    from fpdf import FPDF
    from pypdf import PdfWriter

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Quarterly report, written 4 March 2010.\n\n" + PROSE)
    draft = path.with_suffix(".draft")
    pdf.output(str(draft))
    writer = PdfWriter(clone_from=draft)
    writer.add_metadata({"/CreationDate": "D:19990503120000+00'00'"})
    writer.write(path)
    draft.unlink()


def _docx(path: Path, created: datetime.datetime | None, first_line: str) -> None:
    import docx

    document = docx.Document()
    if created:
        document.core_properties.created = created
    document.add_paragraph(first_line)
    document.add_paragraph(PROSE)
    document.save(str(path))


def _odt(path: Path) -> None:
    from odf import meta
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    document.meta.addElement(meta.CreationDate(text="2007-10-11T09:00:00"))
    document.text.addElement(P(text=PROSE))
    document.save(str(path))


def _epub(path: Path) -> None:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("moby-dick")
    book.set_title("Moby-Dick; or, The Whale")
    book.set_language("en")
    book.add_metadata("DC", "date", "1851-10-18")
    chapter = epub.EpubHtml(title="Loomings", file_name="c1.xhtml", lang="en")
    chapter.content = "<html><body><h1>Loomings</h1><p>Call me Ishmael. " + PROSE + "</p></body></html>"
    book.add_item(chapter)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", chapter]
    epub.write_epub(str(path), book)


def _eml(path: Path) -> None:
    message = EmailMessage()
    message["From"], message["To"] = "ada@example.org", "charles@example.org"
    message["Subject"] = "The engine, again"
    message["Date"] = "Thu, 26 Feb 1987 15:02:20 +0000"
    message.set_content("Written on March 4, 2001, or so the draft says.\n\n" + PROSE)
    path.write_bytes(bytes(message))


FILES = {
    "mail/engine.eml": _eml,
    "reports/quarterly.pdf": _pdf,
    "memos/memo.docx": lambda p: _docx(p, datetime.datetime(2004, 8, 9, 10, tzinfo=datetime.UTC), "Memo"),
    # python-docx's own template date (2013-12-23) is a tool default: the first line dates it
    "memos/minutes.docx": lambda p: _docx(p, None, "Minutes of 12 May 2008"),
    "notes/field.odt": _odt,
    "books/moby.epub": _epub,
    "web/landing.html": lambda p: p.write_text(
        '<html><head><title>The landing</title><meta property="article:published_time" '
        'content="1969-07-21T02:56:00Z"></head><body><p>The Eagle has landed.</p>'
        f"<p>Reprinted 1 May 2019.</p><p>{PROSE}</p></body></html>"
    ),
    "web/timed.html": lambda p: p.write_text(
        f'<html><body><p>Posted <time datetime="2012-12-21">the day after</time>.</p><p>{PROSE}</p></body></html>'
    ),
    # a published date later than the file's mtime: a wrong clock, ignored
    "web/future.html": lambda p: p.write_text(
        '<html><head><meta name="date" content="2026-11-20"></head><body>'
        f"<p>Posted 3 June 2019.</p><p>{PROSE}</p></body></html>"
    ),
    "notes/louisiana.md": lambda p: p.write_text(
        "---\ndate: 1803-04-30\n---\n# Notes on the purchase, 1999\n\n" + PROSE
    ),
    "notes/heading.md": lambda p: p.write_text("# The Louisiana Purchase (1803)\n\n" + PROSE),
    "speeches/farewell.txt": lambda p: p.write_text(
        "George Washington, Farewell Address, 1796\n\nFriends and Citizens: the period for a new election "
        "... \n\nIn March 4, 1797 the office passes on.\n\n" + PROSE
    ),
    "speeches/guards.txt": lambda p: p.write_text(
        "1500 people gathered in room 1850.\n\nThe fare was $1,200 for 1850 km, No. 1234.\n\n" + PROSE
    ),
    "archive/1848/letter.txt": lambda p: p.write_text("My dear friend,\n\n" + PROSE),
    # Diary layouts (bench/diary_year.py): dates in folders and names, numeric and slashed forms.
    "diary/2025/06/24.md": lambda p: p.write_text("Walked to the river.\n\n" + PROSE),
    "diary/24-06-2025 journal.md": lambda p: p.write_text(PROSE),
    "diary/2025-06/Tuesday.md": lambda p: p.write_text("June 17th\n\n" + PROSE),
    "diary/2025-05/Friday.md": lambda p: p.write_text(PROSE),
    "diary/2025-04-09.md": lambda p: p.write_text("Notes, 2025\n\n" + PROSE),
    "diary/2025-04-10.md": lambda p: p.write_text("# 10/04/2025\n\n" + PROSE),
    "diary/slashed.md": lambda p: p.write_text("---\ndate: 2025/06/23\n---\n" + PROSE),
    "diary/dmy.md": lambda p: p.write_text("---\ndate: 22/06/2025\ntitle: A quiet day\n---\n" + PROSE),
    "diary/ambiguous.md": lambda p: p.write_text("04/03/2025\n\n" + PROSE),
}

EXPECTED = {
    "mail/engine.eml": ("1987-02-26", "metadata date '1987-02-26' (email Date header)"),
    "reports/quarterly.pdf": ("1999-05-03", "metadata date '1999-05-03' (PDF creation date)"),
    "memos/memo.docx": ("2004-08-09", "metadata date '2004-08-09' (DOCX created property)"),
    "memos/minutes.docx": ("2008-05-12", "date in first lines '12 May 2008'"),
    "notes/field.odt": ("2007-10-11", "metadata date '2007-10-11' (ODT creation date)"),
    "books/moby.epub": ("1851-10-18", "metadata date '1851-10-18' (EPUB dc:date)"),
    "web/landing.html": ("1969-07-21", "metadata date '1969-07-21' (HTML meta article:published_time)"),
    "web/timed.html": ("2012-12-21", "metadata date '2012-12-21' (HTML <time datetime>)"),
    "web/future.html": ("2019-06-03", "date in first lines '3 June 2019'"),
    "notes/louisiana.md": ("1803-04-30", "frontmatter date"),
    "notes/heading.md": ("1803-07-01", "year in title '1803'"),
    "speeches/farewell.txt": ("1796-07-01", "year in first lines '1796'"),
    "speeches/guards.txt": ("2026-06-01", "file modification time"),
    "archive/1848/letter.txt": ("1848-07-01", "year in path '1848'"),
    "diary/2025/06/24.md": ("2025-06-24", "date in path '2025/06/24'"),
    "diary/24-06-2025 journal.md": ("2025-06-24", "date in path '24-06-2025'"),
    "diary/2025-06/Tuesday.md": (
        "2025-06-17",
        "date in first lines 'June 17th', year from month in path '2025-06'",
    ),
    "diary/2025-05/Friday.md": ("2025-05-01", "month in path '2025-05'"),
    "diary/2025-04-09.md": ("2025-04-09", "date in path '2025-04-09'"),
    "diary/2025-04-10.md": ("2025-04-10", "date in title '10/04/2025'"),
    "diary/slashed.md": ("2025-06-23", "frontmatter date"),
    "diary/dmy.md": ("2025-06-22", "frontmatter date"),
    "diary/ambiguous.md": ("2025-03-04", "date in first lines '04/03/2025'"),
}


@pytest.fixture(scope="module")
def dated(cfg, template_db, tmp_path_factory) -> Iterator[Database]:
    """One database holding the ingested files of FILES, each file's mtime MTIME."""
    root = tmp_path_factory.mktemp("dating")
    for rel, make in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)
        os.utime(path, (MTIME.timestamp(), MTIME.timestamp()))
    with cloned_database(cfg, template_db, "exo_dating") as db:
        summary = pipeline.ingest(db.cfg, root, "personal", dbname=db.name)
        assert summary.run["chunked"] == len(FILES), summary
        yield db


def _dates(db: Database) -> dict[str, tuple[str, str, str]]:
    with db.connect() as conn:
        rows = conn.execute(
            "select path, written_at::text, band_reason, band::text from exo_private.documents"
        ).fetchall()
    return {path: (written, reason, band) for path, written, reason, band in rows}


def test_each_format_is_dated_from_its_best_evidence(dated):
    found = _dates(dated)
    got = {
        path: (written, reason.split(" (", 1)[1].rsplit("), ", 1)[0])
        for path, (written, reason, _b) in found.items()
    }
    assert got == EXPECTED
    assert found["speeches/farewell.txt"][2] == "archival"
    assert found["speeches/guards.txt"][2] == "current"


def test_rebuild_redates_from_the_cache_and_stored_metadata(dated):
    with dated.connect() as conn:
        # What the old rules left behind (every document dated by its mtime), and a changed header.
        conn.execute(
            "update exo_private.documents set written_at = '2026-06-01', band = 'current', "
            "band_reason = 'written 2026-06-01 (file modification time), 0 days ago'"
        )
        conn.execute(
            'update exo_private.documents set metadata = metadata || \'{"date": "1901-01-01T08:00:00+00:00"}\' '
            "where path = 'mail/engine.eml'"
        )
        assert conn.execute("select exo_private.rebuild()").fetchone()[0] == len(FILES)
        chunk_dates = dict(
            conn.execute(
                "select d.path, min(c.written_at)::text from exo_private.chunks c "
                "join exo_private.documents d on d.id = c.document_id group by d.path"
            ).fetchall()
        )
    found = _dates(dated)
    written, reason, band = found["mail/engine.eml"]
    assert (written, band) == ("1901-01-01", "archival")
    assert "metadata date '1901-01-01' (email Date header)" in reason
    assert "year in first lines '1796'" in found["speeches/farewell.txt"][1]
    assert chunk_dates["speeches/farewell.txt"] == "1796-07-01"
    assert {path: found[path][0] for path in EXPECTED if path != "mail/engine.eml"} == {
        path: expected[0] for path, expected in EXPECTED.items() if path != "mail/engine.eml"
    }


def test_numeric_dates_follow_the_numeric_date_order_setting(dated):
    try:
        with dated.connect() as conn:
            conn.execute(
                "update exo_private.settings set value = '\"mdy\"' where key = 'banding.numeric_date_order'"
            )
            conn.execute("select exo_private.rebuild()")
        found = _dates(dated)
        assert found["diary/ambiguous.md"][0] == "2025-04-03"
        assert found["diary/2025-04-10.md"][0] == "2025-10-04"
        assert found["diary/dmy.md"][0] == "2025-06-22"  # 22 is no month: the day either way
    finally:
        with dated.connect() as conn:
            conn.execute(
                "update exo_private.settings set value = '\"dmy\"' where key = 'banding.numeric_date_order'"
            )
            conn.execute("select exo_private.rebuild()")
    assert _dates(dated)["diary/ambiguous.md"][0] == "2025-03-04"
