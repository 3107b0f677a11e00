"""OCR of scanned PDFs: a generated scan (text rendered to an image, wrapped as a PDF with no
text layer) waits at ocr_pending with a message on the ocr queue, the worker reads it with
Tesseract page by page, and the text is found by search; a scan OCR cannot read ends its
document failed (or skipped) with the error class, and every message ends archived.

The OCR tools come from the runtime root (`exo db up` installs them from debian-packages.txt)
or, with EXO_DATABASE_URL, from PATH.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from PIL import Image, ImageDraw, ImageFont

from exocortex.cli import main
from exocortex.ingest import ocr, pipeline
from exocortex.ingest.extract import extract
from exocortex.ops import doctor
from exocortex.runtime import local
from exocortex.worker.loop import Worker

HARBOUR = [
    ["The harbour ledger of 1887 records", "a cargo of cinnamon and nutmeg", "landed from Zanzibar."],
    ["The second page names the", "lighthouse keeper Abernathy."],
]


def scan_pdf(path: Path, pages: list[list[str]]) -> Path:
    """A PDF whose pages are only images of the given lines (150 dpi, US letter): no text layer."""
    font = ImageFont.load_default(size=40)
    images = []
    for lines in pages:
        image = Image.new("L", (1275, 1650), 255)
        draw = ImageDraw.Draw(image)
        for i, line in enumerate(lines):
            draw.text((110, 160 + 70 * i), line, fill=0, font=font)
        images.append(image)
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:], resolution=150.0)
    return path


def set_setting(db, key: str, value) -> None:
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting(%s, %s::jsonb)", (key, json.dumps(value)))


def drain(db):
    """One job at a time, so that the order of the jobs is known."""
    return Worker(db.cfg, dbname=db.name, once=True, queues=("ocr",), concurrency=1, poll_s=0.1).run()


def documents(db) -> dict[str, tuple]:
    with db.connect() as conn:
        rows = conn.execute(
            "select path, stage::text, workspace, error_class, error_message from exo_private.documents"
        ).fetchall()
    return {path: tuple(rest) for path, *rest in rows}


def test_a_generated_scan_has_no_text_layer(tmp_path):
    result = extract(scan_pdf(tmp_path / "scan.pdf", HARBOUR))
    assert result.needs_ocr and "cinnamon" not in result.text
    assert result.metadata["pages"] == 2


def test_a_scan_is_read_by_ocr_and_continues_like_an_extracted_document(db, tmp_path):
    root = tmp_path / "archive"
    scan_pdf(root / "ledgers/harbour-1887.pdf", HARBOUR)
    (root / "ledgers/copy-of-harbour.pdf").write_bytes((root / "ledgers/harbour-1887.pdf").read_bytes())

    summary = pipeline.ingest(db.cfg, root, "personal", dbname=db.name)
    assert summary.run["ocr_pending"] == 2
    with db.connect() as conn:
        assert conn.execute("select count(*) from pgmq.q_ocr").fetchone()[0] == 2

    result = drain(db)
    # One reading serves both copies (the text cache is by content); the second message finds
    # its document no longer waiting.
    assert (result.done["ocr"], result.skipped["ocr"], result.unread["ocr"]) == (1, 1, 0)
    docs = documents(db)
    assert {p: d[:3] for p, d in docs.items()} == {
        "ledgers/harbour-1887.pdf": ("chunked", "personal", None),
        "ledgers/copy-of-harbour.pdf": ("chunked", "personal", None),
    }
    with db.connect() as conn:
        body, needs_ocr, read = conn.execute(
            """select t.body, t.needs_ocr, t.metadata -> 'ocr' from exo_private.text_cache t
               join exo_private.documents d on d.sha256 = t.sha256
               where d.path = 'ledgers/harbour-1887.pdf'"""
        ).fetchone()
        left = conn.execute("select count(*) from pgmq.q_ocr").fetchone()[0]
        archived = conn.execute("select count(*) from pgmq.a_ocr").fetchone()[0]
        embed = conn.execute(
            """select count(*) from pgmq.q_embed q join exo_private.chunks c on c.id = (q.message ->> 'chunk_id')::bigint
               join exo_private.documents d on d.id = c.document_id where d.path like 'ledgers/%'"""
        ).fetchone()[0]
        found = [
            row[0]
            for row in conn.execute("select citation from exo.search('lighthouse keeper Abernathy', k => 5)")
        ]
    assert not needs_ocr
    assert {"cinnamon", "Zanzibar", "Abernathy"} <= set(body.replace(".", " ").split())
    assert body.index("cinnamon") < body.index("Abernathy")  # pages in order
    assert read == {"engine": "tesseract", "language": "eng", "dpi": ocr.DPI, "pages_read": 2, "pages": 2}
    assert (left, archived) == (0, 2)
    assert embed >= 2  # chunks queued for embedding, like any document's
    assert any("harbour" in citation for citation in found)
    # Settled: an unchanged re-run does no work.
    assert pipeline.ingest(db.cfg, root, "personal", dbname=db.name).processed == 0


def test_the_page_limit_reads_the_first_pages(db, tmp_path):
    set_setting(db, "ocr.page_limit", 1)
    scan_pdf(tmp_path / "a/harbour.pdf", HARBOUR)
    pipeline.ingest(db.cfg, tmp_path / "a", "personal", dbname=db.name)
    assert drain(db).done["ocr"] == 1
    with db.connect() as conn:
        body, read = conn.execute(
            "select body, metadata -> 'ocr' from exo_private.text_cache where not needs_ocr"
        ).fetchone()
    assert "cinnamon" in body and "Abernathy" not in body
    assert (read["pages_read"], read["pages"]) == (1, 2)


@pytest.mark.parametrize(
    ("pages", "setting", "stage", "error_class", "says"),
    [
        (HARBOUR, ("ocr.timeout_seconds", 0.001, 60), "failed", "ocr_timeout", "ocr.timeout_seconds"),
        (HARBOUR, ("ocr.language", "xyz", None), "failed", "ocr_failed", "xyz"),
        ([[]], None, "skipped", "empty", "no text"),
    ],
    ids=["timeout", "no-language-data", "blank-page"],
)
def test_a_scan_ocr_cannot_read_ends_with_its_error_class(
    db, tmp_path, monkeypatch, pages, setting, stage, error_class, says
):
    """And once the cause is fixed (the timeout put back), `exo worker retry-failed` reads it."""
    if setting:
        set_setting(db, *setting[:2])
    scan_pdf(tmp_path / "a/scan.pdf", pages)
    pipeline.ingest(db.cfg, tmp_path / "a", "personal", dbname=db.name)

    result = drain(db)
    assert (result.done["ocr"], result.unread["ocr"]) == (0, 1)
    ((doc_stage, _, doc_error, message),) = documents(db).values()
    assert (doc_stage, doc_error) == (stage, error_class)
    assert says in message
    with db.connect() as conn:
        assert conn.execute("select count(*) from pgmq.q_ocr").fetchone()[0] == 0
        assert conn.execute("select count(*) from pgmq.a_ocr").fetchone()[0] == 1
        # The text cache still says the content needs OCR: a later reading may succeed.
        assert conn.execute("select bool_and(needs_ocr) from exo_private.text_cache").fetchone()[0]
    if not (setting and setting[2]):  # once is enough: the timeout's retry
        return
    set_setting(db, setting[0], setting[2])
    monkeypatch.setenv("EXO_DATABASE_URL", db.url())
    retried = CliRunner().invoke(main, ["worker", "retry-failed", "--queue", "ocr"], catch_exceptions=False)
    assert retried.output.strip() == "ocr: 1 queued again"
    assert drain(db).done["ocr"] == 1
    assert [d[:3] for d in documents(db).values()] == [("chunked", "personal", None)]


def test_the_ocr_functions_refuse_bad_arguments(db):
    with db.connect() as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_document_id"):
            conn.execute("select exo_private.await_ocr(-1)")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_stage"):
            conn.execute("select exo_private.end_ocr('0', 'chunked', 'ocr_failed', 'x')")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_sha256"):
            conn.execute("select * from exo_private.store_ocr_text('0', 'text', '{}')")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="embed or extract"):
            conn.execute("select * from exo_private.retry_failed('ocr')")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ocr.page_limit", 0),
        ("ocr.page_limit", True),
        ("ocr.timeout_seconds", 0),
        ("ocr.language", "eng; rm"),
    ],
)
def test_bad_ocr_settings_are_named(key, value):
    values = {"ocr.page_limit": 50, "ocr.timeout_seconds": 60, "ocr.language": "eng", key: value}
    with pytest.raises(ValueError, match=key):
        ocr.Settings.from_values(values)


def test_without_the_tools_ocr_is_unavailable_and_says_how_to_fix_it(cfg, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ocr.OcrError, match="pdftoppm and tesseract") as caught:
        ocr.find_tools(replace(cfg, home=tmp_path, external_url="postgresql://elsewhere/x"))
    assert caught.value.error_class == "ocr_unavailable"
    assert ocr.INSTALL in caught.value.message


def test_doctor_checks_tesseract(cfg):
    check = doctor.ocr_check(cfg)
    assert check.ok, check.detail
    assert "tesseract 5" in check.detail and "eng" in check.detail


def test_a_changed_package_list_is_installed_into_the_existing_root(cfg, tmp_path, monkeypatch):
    """A root provisioned before the OCR packages were listed gets them on the next `exo db up`:
    installed with --no-upgrade into the same root (a running server's packages stay as they
    are), the data directory untouched, the marker rewritten."""
    home = replace(cfg, home=tmp_path)
    root = home.runtime_root
    data = root / local.DATA_DIR.lstrip("/")
    data.mkdir(parents=True)
    (data / "PG_VERSION").write_text("18\n")
    (root / local.MARKER).write_text(json.dumps({"packages": "an older list"}))
    commands = []
    monkeypatch.setattr(local, "mount_proc", lambda _root: None)
    monkeypatch.setattr(local, "unmount_proc", lambda _root: None)
    monkeypatch.setattr(local, "_run_step", lambda argv, *_args, **_kw: commands.append(argv))
    monkeypatch.setattr(local, "_build_root", lambda *_args: pytest.fail("the root was built again"))

    assert not local.is_provisioned(home)
    assert local.provision(home, lambda _message: None)
    ((*chroot, script),) = commands
    assert chroot == ["chroot", str(root), "sh", "-c"]
    assert "install -y -q --no-upgrade" in script
    assert {"poppler-utils", "tesseract-ocr", "tesseract-ocr-eng"} <= set(script.split())
    assert local.is_provisioned(home)
    assert (data / "PG_VERSION").read_text() == "18\n"
