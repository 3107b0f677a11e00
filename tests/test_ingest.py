"""Ingestion end to end against the real database: ledger, cache, routing, banding, chunks."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from fpdf import FPDF
from support.files import write

from exocortex.cli import memory, output
from exocortex.ingest import pipeline
from exocortex.ingest.extract import MAX_FILE_BYTES
from exocortex.ingest.watch import watch


def run(db, root: Path, workspace: str | None = None) -> pipeline.IngestSummary:
    return pipeline.ingest(db.cfg, root, workspace, dbname=db.name)


def documents(db) -> dict[str, dict]:
    with db.connect() as conn:
        cur = conn.execute(
            """select path, stage::text, error_class, workspace, band::text, band_source, written_at::text,
                      canonical, title, (select count(*) from exo_private.chunks c where c.document_id = d.id)
               from exo_private.documents d"""
        )
        keys = [
            "stage",
            "error_class",
            "workspace",
            "band",
            "band_source",
            "written_at",
            "canonical",
            "title",
            "chunks",
        ]
        return {row[0]: dict(zip(keys, row[1:], strict=False)) for row in cur}


def one(db, sql: str, *params):
    with db.connect() as conn:
        return conn.execute(sql, params).fetchone()


PROSE = "\n\n".join(
    f"Paragraph {i}: the replication slot on the postgres server filled the disk, so we tuned vacuum."
    for i in range(30)
)


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    write(root, "work/runbook.md", "---\ntitle: Vacuum runbook\ndate: 2026-10-01\n---\n" + PROSE)
    write(
        root,
        "diary/2014/2014-03-04.md",
        "Tuesday, 4 March 2014\n\nA long walk with a friend. [[Vacuum runbook]] [[missing note]]",
    )
    write(
        root,
        "diary/work-day.md",
        "---\nworkspace: technical\ndate: 2025-01-10\n---\nPostgres index tuning all day.",
    )
    write(root, "admin/facts.md", "---\ncanonical: true\ndate: 2015-06-01\n---\nEmployer: Northwind Labs.")
    write(root, "inbox/groceries.md", "milk, eggs, bread")
    return root


def test_first_ingest_routes_bands_and_chunks(db, vault):
    summary = run(db, vault)

    docs = documents(db)
    assert summary.seen == 5 and summary.processed == 5 and summary.extracted == 5
    assert docs["work/runbook.md"]["stage"] == "chunked"
    assert docs["work/runbook.md"]["chunks"] >= 3
    assert docs["work/runbook.md"]["title"] == "Vacuum runbook"
    assert (docs["work/runbook.md"]["band"], docs["work/runbook.md"]["band_source"]) == (
        "current",
        "inferred",
    )
    assert docs["diary/2014/2014-03-04.md"]["workspace"] == "personal"
    assert docs["diary/2014/2014-03-04.md"]["band"] == "archival"
    assert docs["diary/2014/2014-03-04.md"]["written_at"] == "2014-03-04"
    assert docs["diary/work-day.md"]["workspace"] == "technical"  # frontmatter beats the folder
    assert docs["admin/facts.md"]["canonical"] is True
    assert docs["admin/facts.md"]["band"] == "current"  # canonical: never inferred archival
    # No rule places it, the keyword lists are unsure, the router has not been trained: the
    # default workspace, searchable without review.
    assert (docs["inbox/groceries.md"]["stage"], docs["inbox/groceries.md"]["workspace"]) == (
        "chunked",
        "personal",
    )
    assert summary.stages == {"chunked": 5}
    assert summary.workspaces == {"technical": 2, "personal": 2, "administrative": 1}
    assert summary.defaulted == {"personal": 1} and summary.quarantine == []


def test_chunks_are_searchable_and_queued(db, vault):
    run(db, vault)
    with db.connect() as conn:
        chunk_count = conn.execute("select count(*) from exo_private.chunks").fetchone()[0]
        window_count = conn.execute("select count(*) from exo_private.extraction_windows").fetchone()[0]
        queued = conn.execute("select count(*) from pgmq.q_embed").fetchone()[0]
        queued_windows = conn.execute("select count(*) from pgmq.q_extract").fetchone()[0]
        best = conn.execute(
            """select d.path from exo_private.chunks_technical c join exo_private.documents d on d.id = c.document_id
               order by exo_private.bm25_chunk_text(c.document_title, c.body) <@> to_bm25query('replication slot', 'exo_private.chunks_technical_bm25')
               limit 1"""
        ).fetchone()
        partitions = {
            r[0]
            for r in conn.execute(
                "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid "
                "where i.inhparent = 'exo_private.chunks'::regclass"
            )
        }
    assert queued == chunk_count > 0
    assert queued_windows == window_count > 0
    assert best == ("work/runbook.md",)
    assert partitions == {f"chunks_{w}" for w in ("technical", "creative", "personal", "administrative")}


def test_rescan_of_an_unchanged_tree_does_no_work(db, vault):
    run(db, vault)
    cached = one(db, "select count(*) from exo_private.text_cache")
    chunks = one(db, "select array_agg(id order by id) from exo_private.chunks")
    again = run(db, vault)
    assert (again.processed, again.extracted, again.unchanged) == (0, 0, 5)
    assert one(db, "select count(*) from exo_private.text_cache") == cached
    assert one(db, "select array_agg(id order by id) from exo_private.chunks") == chunks


def test_changes_moves_and_deletes_keep_the_ledger_in_step(db, vault):
    run(db, vault)
    write(vault, "work/runbook.md", "---\ntitle: Vacuum runbook\n---\nShorter now: autovacuum settings.")
    (vault / "diary/2014/2014-03-04.md").rename(vault / "diary/2014/renamed.md")
    (vault / "inbox/groceries.md").unlink()
    summary = run(db, vault)
    docs = documents(db)
    assert summary.processed == 2 and summary.deleted == 2
    assert summary.extracted == 1 and summary.from_cache == 1  # the moved file's text is cached
    assert docs["work/runbook.md"]["chunks"] == 1
    assert docs["diary/2014/2014-03-04.md"]["stage"] == "deleted"
    assert docs["diary/2014/2014-03-04.md"]["chunks"] == 0
    assert docs["diary/2014/renamed.md"]["stage"] == "chunked"
    assert docs["inbox/groceries.md"]["stage"] == "deleted"


def test_wiki_links_resolve_by_title_or_file_name(db, vault):
    run(db, vault)
    with db.connect() as conn:
        links = dict(
            conn.execute(
                """select l.target, t.path from exo_private.document_links l
                   left join exo_private.documents t on t.id = l.target_document"""
            ).fetchall()
        )
    assert links == {"Vacuum runbook": "work/runbook.md", "missing note": None}


def test_forced_workspace_ranks_below_frontmatter(db, vault):
    run(db, vault, workspace="creative")
    docs = documents(db)
    assert docs["inbox/groceries.md"]["workspace"] == "creative"
    assert docs["work/runbook.md"]["workspace"] == "creative"
    assert docs["diary/work-day.md"]["workspace"] == "technical"


def test_quarantine_approve_reassign_reject(db, tmp_path):
    with db.connect() as conn:  # quarantine what the keyword lists are unsure of, trained or not
        conn.execute("update exo_private.settings set value = 'null' where key = 'routing.default_workspace'")
    root = tmp_path / "inbox"
    write(root, "a.md", "postgres index and an invoice")
    write(root, "b.md", "milk, eggs, bread")
    write(root, "c.md", "lorem ipsum")
    run(db, root)
    ids = {path: i for path, i in _ids(db).items()}
    with db.connect("exo_writer") as conn:
        quarantined = {r[0] for r in conn.execute("select path from exo.quarantine")}
        assert quarantined == {"a.md", "b.md", "c.md"}
        top = conn.execute(
            "select candidates -> 0 ->> 'workspace' from exo.quarantine where path = 'a.md'"
        ).fetchone()[0]
        assert conn.execute(
            "select exo_private.review_document(%s, 'approve')::text", (ids["a.md"],)
        ).fetchone() == ("chunked",)
        conn.execute("select exo_private.review_document(%s, 'reassign', 'creative')", (ids["b.md"],))
        conn.execute("select exo_private.review_document(%s, 'reject')", (ids["c.md"],))
        with pytest.raises(Exception, match="workspace nowhere does not exist"):
            conn.execute("select exo_private.review_document(%s, 'reassign', 'nowhere')", (ids["b.md"],))
    docs = documents(db)
    assert (docs["a.md"]["stage"], docs["a.md"]["workspace"]) == ("chunked", top)
    assert (docs["b.md"]["stage"], docs["b.md"]["workspace"]) == ("chunked", "creative")
    assert (docs["c.md"]["stage"], docs["c.md"]["error_class"]) == ("skipped", "rejected")
    # A person's decision outlasts re-processing.
    write(root, "b.md", "milk, eggs, bread, butter")
    run(db, root)
    assert documents(db)["b.md"]["workspace"] == "creative"


def _ids(db) -> dict[str, int]:
    with db.connect() as conn:
        return dict(conn.execute("select path, id from exo_private.documents").fetchall())


def test_deference_marks_follow_the_list(db, tmp_path):
    root = tmp_path / "v"
    write(root, "diary/2017-03-19.md", "Grandpa Walter died this morning. The funeral is on Friday.")
    write(root, "diary/2013-05-01.md", "Grandpa Walter taught me to solder a radio.")
    write(root, "diary/2018-01-01.md", "---\ncharged: [Walter Rivera]\n---\nA quiet day at the lake.")
    run(db, root)

    def charged():
        with db.connect() as conn:
            return dict(
                conn.execute(
                    """select d.path, c.charged from exo_private.chunks c
                       join exo_private.documents d on d.id = c.document_id where c.charged <> '[]'"""
                ).fetchall()
            )

    def chunk_ids():
        with db.connect() as conn:
            return conn.execute("select array_agg(id order by id) from exo_private.chunks").fetchone()[0]

    assert charged() == {"diary/2018-01-01.md": [{"subject": "Walter Rivera", "rule": "frontmatter"}]}
    before = chunk_ids()
    with db.connect("exo_writer") as conn:
        changed = conn.execute(
            "select exo_private.defer_subject('Walter Rivera', array['Grandpa Walter', 'Grandpa'])"
        ).fetchone()[0]
    assert changed == 1 and chunk_ids() == before  # marked in place: ids (and so vectors, mentions) stay
    assert charged() == {
        "diary/2017-03-19.md": [{"subject": "Walter Rivera", "rule": "cue 'died' with 'Grandpa Walter'"}],
        "diary/2018-01-01.md": [{"subject": "Walter Rivera", "rule": "frontmatter"}],
    }
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.undefer_subject('Walter Rivera')")
    assert list(charged()) == ["diary/2018-01-01.md"]


def test_rebuild_one_workspace_from_the_text_cache(db, vault):
    run(db, vault)
    before = one(db, "select count(*), min(id) from exo_private.chunks where workspace = 'technical'")
    others = one(
        db, "select array_agg(id order by id) from exo_private.chunks where workspace <> 'technical'"
    )
    cached = one(db, "select count(*) from exo_private.text_cache")
    with db.connect("exo_writer") as conn:
        assert conn.execute("select exo_private.rebuild('technical')").fetchone() == (2,)
    after = one(db, "select count(*), min(id) from exo_private.chunks where workspace = 'technical'")
    assert after[0] == before[0] and after[1] > before[1]  # same chunks, made anew
    assert (
        one(db, "select array_agg(id order by id) from exo_private.chunks where workspace <> 'technical'")
        == others
    )
    assert one(db, "select count(*) from exo_private.text_cache") == cached


# -- bad inputs: each ends in a recorded stage with an error class, and the run goes on ----


def _pdf(path: Path, text: str | None) -> None:
    pdf = FPDF()
    pdf.add_page()
    if text:
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))


def _encrypted_pdf(path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    plain = path.with_suffix(".plain")
    _pdf(plain, "secret plans " * 100)
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt("pw", algorithm="RC4-128")
    with open(path, "wb") as f:
        writer.write(f)
    plain.unlink()


def _zip_bomb(path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(600):  # 600 MiB of zeros, about 600 KiB compressed
                member.write(block)


def test_bad_inputs_are_recorded_and_the_run_goes_on(db, tmp_path):
    root = tmp_path / "bad"
    root.mkdir()
    write(root, "work/corrupt.pdf", os.urandom(4000))
    _encrypted_pdf(root / "work/encrypted.pdf")
    _zip_bomb(root / "work/bomb.docx")
    write(root, "work/binary.txt", b"\x7fELF\x02\x01\x01\x00\x00\x00" + os.urandom(2000))
    write(root, "work/latin1.txt", "Caf\xe9 cr\xe8me: postgres vacuum notes.".encode("cp1252"))
    write(root, "work/empty.md", "")
    with open(root / "work/huge.txt", "wb") as f:  # sparse: no disk used
        f.seek(MAX_FILE_BYTES + 1)
        f.write(b"x")
    _pdf(root / "work/scan.pdf", None)
    write(root, "work/data.csv", "\n".join("1,2,3,4,5" for _ in range(3000)))
    write(root, "work/image.png", b"\x89PNG\r\n")
    write(root, "work/new\nline.md", "A file name with a newline: postgres notes.")
    write(root, "work/caf\u00e9 \u2603 notes.md", "Unicode name: postgres notes.")
    (root / os.fsdecode(b"work/bad-\xff-name.md")).write_text("Undecodable name: postgres notes.")
    (root / "work/loop").symlink_to(root / "work")
    (root / "work/link.md").symlink_to(root / "work/latin1.txt")
    os.mkfifo(root / "work/pipe.md")
    write(root, "work/good.md", "Still ingested after all that: postgres vacuum.")

    summary = run(db, root)
    docs = documents(db)

    expected = {
        "work/corrupt.pdf": ("failed", "corrupt"),
        "work/encrypted.pdf": ("failed", "encrypted"),
        "work/bomb.docx": ("failed", "zip_bomb"),
        "work/binary.txt": ("failed", "binary"),
        "work/latin1.txt": ("chunked", None),
        "work/empty.md": ("skipped", "empty"),
        "work/huge.txt": ("failed", "too_large"),
        "work/scan.pdf": ("ocr_pending", None),
        "work/data.csv": ("skipped", "junk"),
        "work/image.png": ("skipped", "unsupported_extension"),
        "work/new\nline.md": ("chunked", None),
        "work/caf\u00e9 \u2603 notes.md": ("chunked", None),
        "work/bad-\\xff-name.md": ("chunked", None),
        "work/loop": ("skipped", "symlink"),
        "work/link.md": ("skipped", "symlink"),
        "work/pipe.md": ("skipped", "special_file"),
        "work/good.md": ("chunked", None),
    }
    assert {p: (d["stage"], d["error_class"]) for p, d in docs.items()} == expected
    assert summary.seen == len(expected)
    with db.connect() as conn:
        messages = dict(
            conn.execute(
                "select path, error_message from exo_private.documents where error_message is not null"
            )
        )
        encoding = conn.execute(
            "select metadata ->> 'encoding' from exo_private.documents where path = 'work/latin1.txt'"
        ).fetchone()
    assert all(messages.values())  # every failure says why
    assert encoding == ("cp1252",)
    assert run(db, root).processed == 0  # failures are settled too: a re-run does not retry them


def test_what_a_file_ingested_with_warnings_is_named_in_the_summary(db, tmp_path, capsys):
    root = tmp_path / "notes"
    write(root, "work/broken.md", "---\ntitle: [unclosed\n---\nStill ingested: postgres vacuum.")
    write(root, "work/fine.md", "---\ntitle: Fine\n---\nNothing to say about postgres.")
    _pdf(root / "work/prefixed.pdf", PROSE)
    write(root, "work/prefixed.pdf", b"junk\n" + (root / "work/prefixed.pdf").read_bytes())

    summary = run(db, root)
    assert documents(db)["work/broken.md"]["stage"] == "chunked"
    noticed = {(w["path"], w["warning"]) for w in summary.warnings}
    broken = (
        "invalid YAML frontmatter: while parsing a flow sequence at line 2, column 8; "
        "expected ',' or ']', but got '<stream end>' at line 3, column 1"
    )
    assert {("work/broken.md", broken), ("work/prefixed.pdf", "invalid pdf header: b'junk\\n'")} <= noticed
    assert {path for path, _ in noticed} == {"work/broken.md", "work/prefixed.pdf"}
    memory.print_summary(summary)
    printed = capsys.readouterr()
    assert f"warning: work/broken.md: {broken}" in printed.out.splitlines()
    assert "invalid pdf header" not in printed.err  # never without its path
    assert run(db, root).warnings == []  # an unchanged file is not read again


def test_a_long_file_queues_its_first_windows_only_and_the_summary_says_so(db, tmp_path):
    root = tmp_path / "logs"
    line = "The nightly backup of the allotment database finished without errors again today.\n"
    write(root, "big.txt", line * 400)  # about 34,000 characters: several extraction windows
    write(root, "small.md", "A short note about postgres.")
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('extraction.max_windows_per_document', '2')")
    try:
        summary = run(db, root)
    finally:
        with db.connect() as conn:
            conn.execute("select exo_private.set_setting('extraction.max_windows_per_document', '250')")
    with db.connect() as conn:
        big, windows, queued = conn.execute(
            """select d.metadata -> 'extraction_capped',
                      (select count(*) from exo_private.extraction_windows w where w.document_id = d.id),
                      (select count(*) from pgmq.q_extract q
                        where (q.message ->> 'window_id')::bigint in
                              (select w.id from exo_private.extraction_windows w where w.document_id = d.id))
               from exo_private.documents d where d.path = 'big.txt'"""
        ).fetchone()
        small = conn.execute(
            "select metadata ? 'extraction_capped' from exo_private.documents where path = 'small.md'"
        ).fetchone()[0]
    assert windows > 2 and queued == 2 and big == {"windows": windows, "queued": 2}
    assert not small
    assert [w["path"] for w in summary.warnings] == ["big.txt"]
    assert summary.warnings[0]["warning"].startswith(f"{windows} extraction windows: the first 2 are queued")


def test_sensitive_files_are_never_opened(db, tmp_path):
    root = tmp_path / "v"
    sensitive = [
        "vault.kdbx", "certs/me.p12", "keys/deploy.pem", "id_rsa", "BitLocker Recovery Key 1234.txt",
        "my-passwords.md", "Passwort.txt", "credentials.csv", "notes/api_key.txt", "Private Key.txt",
        "secrets/anything.md", "team secret santa.md", "PASSWORD.DOCX",
    ]  # fmt: skip
    for rel in sensitive:
        write(root, rel, "would fail loudly if read: postgres")
    write(root, "work/plain.md", "An ordinary note about postgres.")
    opened: list[str] = []
    watching = threading.local()

    def audit(event: str, args: tuple) -> None:
        if (
            event == "open"
            and getattr(watching, "on", False)
            and isinstance(args[0], (str, bytes, os.PathLike))
        ):
            opened.append(os.fsdecode(args[0]))

    sys.addaudithook(audit)
    watching.on = True
    try:
        summary = run(db, root)
    finally:
        watching.on = False
    docs = documents(db)
    # Folders are opened to be listed; files are hashed here before the sandbox may extract them;
    # the root's .exoignore is looked for (it says what to leave out).
    read = [p for p in opened if str(root) in p and "plain" not in p and not os.path.isdir(p)]
    assert read == [str(root / ".exoignore")], opened
    assert any(p.endswith("work/plain.md") for p in opened)  # the hook does see opens
    assert docs["work/plain.md"]["stage"] == "chunked"
    excluded = {p for p, d in docs.items() if d["error_class"] == "excluded_sensitive"}
    assert excluded == {p for p in sensitive if not p.startswith("secrets/")} | {"secrets"}
    assert summary.excluded == len(excluded)


def test_conventional_documentation_names_are_read_as_text_by_their_names(db, tmp_path):
    """A package's or a project's README, NEWS.Debian or ChangeLog has no extension on the
    allowlist, and is plain text by convention: read as text. Any other name without one is not,
    and a key store's extension still excludes the file whatever its name."""
    root = tmp_path / "v"
    write(root, "curl/README", "curl is a tool for transferring data with URLs: postgres.")
    write(root, "curl/NEWS.Debian", "The default TLS backend changed to OpenSSL.")
    write(root, "tar/ChangeLog", "Support for zstd compression.")
    write(root, "tar/readme.md", "---\ntitle: Tar notes\n---\nMarkdown as before.")
    write(root, "notes/shopping", "no extension and no convention: not read")
    write(root, "keys/README.pem", "would fail loudly if read")
    run(db, root)
    docs = documents(db)
    assert {p: (d["stage"], d["error_class"]) for p, d in docs.items()} == {
        "curl/README": ("chunked", None),
        "curl/NEWS.Debian": ("chunked", None),
        "tar/ChangeLog": ("chunked", None),
        "tar/readme.md": ("chunked", None),
        "notes/shopping": ("skipped", "unsupported_extension"),
        "keys/README.pem": ("skipped", "excluded_sensitive"),
    }
    assert docs["tar/readme.md"]["title"] == "Tar notes"  # its frontmatter read: still Markdown
    with db.connect() as conn:
        (body,) = conn.execute(
            "select c.body from exo_private.chunks c join exo_private.documents d on d.id = c.document_id"
            " where d.path = 'tar/ChangeLog'"
        ).fetchone()
    assert "zstd compression" in body
    # a file the walk skipped before is read once it no longer does, however unchanged it is
    write(root, ".exoignore", "tar/ChangeLog\n")
    run(db, root)
    assert documents(db)["tar/ChangeLog"]["error_class"] == "ignored"
    (root / ".exoignore").unlink()
    run(db, root)
    assert documents(db)["tar/ChangeLog"]["stage"] == "chunked"


def test_exoignore_leaves_out_what_it_matches_and_forgets_what_it_had(db, tmp_path):
    """A .exoignore at the source's root (gitignore syntax): a matched file is skipped by name, a
    matched folder is one skipped entry that is never listed, and what they held before is gone."""
    root = tmp_path / "v"
    write(root, "notes/keep.md", "A note about the allotment.")
    write(root, "logs/app/run.txt", "a log line about the allotment")
    write(root, "notes/big.log.txt", "a log of the allotment")
    write(root, "notes/important.log.txt", "the one log worth keeping, about the allotment")
    run(db, root)
    assert documents(db)["logs/app/run.txt"]["stage"] == "chunked"
    write(root, ".exoignore", "# machine output\nlogs/\n*.log.txt\n!important.log.txt\n")
    run(db, root)
    docs = documents(db)
    assert docs["notes/keep.md"]["stage"] == "chunked"
    assert docs["notes/important.log.txt"]["stage"] == "chunked"  # a negation brings it back
    assert (docs["notes/big.log.txt"]["stage"], docs["notes/big.log.txt"]["error_class"]) == (
        "skipped",
        "ignored",
    )
    assert (docs["logs"]["stage"], docs["logs"]["error_class"]) == ("skipped", "ignored")
    assert docs["logs/app/run.txt"]["stage"] == "deleted"  # under an ignored folder: no longer in the corpus
    assert docs[".exoignore"]["error_class"] == "hidden"
    with db.connect() as conn:
        (reason, fix) = conn.execute(
            "select reason, fix from exo.documents(array['skipped'], 'notes/big*')"
        ).fetchone()
    assert reason.startswith("the source's .exoignore leaves it out") and "edit .exoignore" in fix


@pytest.fixture
def shared_dir(db) -> Path:
    """A folder the unprivileged user may enter, with a home holding the role passwords."""
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch).chmod(0o755)
        home = Path(scratch) / "home"
        home.mkdir()
        (home / "secrets.json").write_text(db.cfg.secrets_file.read_text())
        (home / "secrets.json").chmod(0o644)
        yield Path(scratch)


def ingest_as_nobody(db, scratch: Path, root: Path) -> dict:
    """`exo ingest --json` as an unprivileged user: root reads everything whatever its mode."""
    env = {**os.environ, "EXO_HOME": str(scratch / "home"), "EXO_DATABASE_URL": db.url()}
    result = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         sys.executable, "-m", "exocortex.cli", "ingest", str(root), "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_unreadable_files_and_folders_are_recorded(db, shared_dir):
    root = shared_dir / "v"
    write(root, "work/ok.md", "A readable note about postgres.")
    write(root, "work/closed.md", "no read permission")
    write(root, "locked/inside.md", "in a folder that cannot be listed")
    (root / "work/closed.md").chmod(0)
    (root / "locked").chmod(0)
    summary = ingest_as_nobody(db, shared_dir, root)
    docs = documents(db)
    assert summary["folder_errors"] == 1
    assert summary["unreadable_folders"] == [{"path": "locked", "error": "Permission denied"}]
    assert (docs["work/closed.md"]["stage"], docs["work/closed.md"]["error_class"]) == (
        "failed",
        "unreadable",
    )
    assert docs["work/ok.md"]["stage"] == "chunked"
    assert "locked/inside.md" not in docs


def test_a_folder_unreadable_on_a_rerun_keeps_its_documents(db, shared_dir):
    root = shared_dir / "v"
    for rel in ("diary/one.md", "diary/two.md", "journal/three.md", "work/stays.md", "work/goes.md"):
        write(root, rel, f"{rel}: a walk with a friend, then postgres vacuum tuning.")
    first = ingest_as_nobody(db, shared_dir, root)
    assert first["stages"] == {"chunked": 5}
    kept_chunks = """select array_agg(c.id order by c.id) from exo_private.chunks c
                     join exo_private.documents d on d.id = c.document_id where d.path <> 'work/goes.md'"""
    chunks = one(db, kept_chunks)

    (root / "diary").chmod(0)  # cannot be listed
    (root / "journal").chmod(0o444)  # listed, but what is in it cannot be looked at
    (root / "work/goes.md").unlink()  # really gone, from a folder that was listed
    second = ingest_as_nobody(db, shared_dir, root)
    docs = documents(db)
    assert second["unreadable_folders"] == [{"path": "diary", "error": "Permission denied"}]
    assert (second["deleted"], second["kept"]) == (1, 3)
    assert {p: d["stage"] for p, d in docs.items()} == {
        "diary/one.md": "chunked",
        "diary/two.md": "chunked",
        "journal/three.md": "chunked",
        "work/stays.md": "chunked",
        "work/goes.md": "deleted",
    }
    assert one(db, kept_chunks) == chunks  # kept as they were: the same chunks, not re-made
    with db.connect("exo_reader") as conn:
        status = conn.execute("select exo.status() -> 'unreadable_folders'").fetchone()[0]
    assert status["total"] == 1
    assert [(f["path"], f["error"], f["source"]) for f in status["folders"]] == [
        ("diary", "Permission denied", str(root))
    ]

    (root / "diary").chmod(0o755)
    (root / "journal").chmod(0o755)
    third = ingest_as_nobody(db, shared_dir, root)
    counts = (third["processed"], third["extracted"], third["unchanged"], third["folder_errors"])
    assert counts == (0, 0, 4, 0)
    assert one(db, kept_chunks) == chunks  # nothing was re-chunked, before or after
    assert one(db, "select count(*) from exo_private.unreadable_folders") == (0,)


def _nest(top: Path, folders: list[str], name: str, text: str) -> str:
    """Make top/folder/folder/.../name through directory descriptors (no path is ever too long)."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for folder in folders:
        os.mkdir(folder, dir_fd=fd)
        child = os.open(folder, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    out = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, text.encode())
    os.close(out)
    os.close(fd)
    return "/".join([*folders, name])


def _unnest(top: Path, folders: list[str]) -> None:
    """Remove what _nest made from the bottom up (shutil.rmtree recurses once per level)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for folder in folders:
        child = os.open(folder, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    for folder in reversed(folders):
        for name in os.listdir(fd):
            os.unlink(name, dir_fd=fd)
        parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = parent
        os.rmdir(folder, dir_fd=fd)
    os.close(fd)


def test_a_deep_tree_and_a_long_path_never_abort_the_run(db, tmp_path):
    root = tmp_path / "v"
    write(root, "work/top.md", "Postgres vacuum notes at the top.")
    deep_folders, long_folders = ["d"] * 1200, ["L" * 250] * 17
    deep = _nest(root / "work", deep_folders, "deep.md", "Postgres replication notes, 1,200 folders down.")
    far = _nest(root / "work", long_folders, "far.md", "Past the longest path the system opens.")
    try:
        summary = run(db, root)
        docs = documents(db)
        assert docs["work/top.md"]["stage"] == "chunked"
        assert docs[f"work/{deep}"]["stage"] == "chunked"
        assert (docs[f"work/{far}"]["stage"], docs[f"work/{far}"]["error_class"]) == (
            "skipped",
            "path_too_long",
        )
        assert (summary.seen, summary.folder_errors) == (3, 0)
        assert run(db, root).unchanged == 3
    finally:
        _unnest(root / "work", deep_folders)
        _unnest(root / "work", long_folders)


def test_utf8_twin_names_are_two_ledger_rows(db, tmp_path):
    root = tmp_path / "v"
    write(root, "work/bad-\\xff-name.md", "Named with a backslash: postgres replication.")
    (root / os.fsdecode(b"work/bad-\xff-name.md")).write_text("Named with the byte ff: postgres vacuum.")
    first = run(db, root)
    with db.connect() as conn:
        rows = conn.execute(
            "select path_bytes, path, stage::text from exo_private.documents order by path_bytes"
        ).fetchall()
    assert rows == [
        (b"work/bad-\\xff-name.md", "work/bad-\\xff-name.md", "chunked"),
        (b"work/bad-\xff-name.md", "work/bad-\\xff-name.md", "chunked"),
    ]
    assert first.extracted == 2
    again = run(db, root)
    assert (again.processed, again.unchanged) == (0, 2)


def set_setting(db, key: str, value) -> None:
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting(%s, %s::jsonb)", (key, json.dumps(value)))


def test_per_file_limits_end_failed_with_timeout_or_too_large(db, tmp_path):
    set_setting(db, "ingest.file_timeout_s", 1)
    set_setting(db, "ingest.max_file_bytes", 4_000_000)
    root = tmp_path / "v"
    # Linear now, but still far more than a second of parsing.
    write(root, "work/nested.html", "<div>" * 400_000 + "postgres" + "</div>" * 300_000)
    write(root, "work/big.txt", "Postgres vacuum notes.\n" * 200_000)  # 4.6 MB
    summary = run(db, root)
    with db.connect() as conn:
        reasons = dict(
            (path, (stage, error_class, message))
            for path, stage, error_class, message in conn.execute(
                "select path, stage::text, error_class, error_message from exo_private.documents"
            )
        )
    assert reasons["work/nested.html"][:2] == ("failed", "timeout")
    assert "ingest.file_timeout_s" in reasons["work/nested.html"][2]
    assert reasons["work/big.txt"][:2] == ("failed", "too_large")
    assert "4000000" in reasons["work/big.txt"][2]
    assert summary.errors == {"timeout": 1, "too_large": 1}


def test_limits_come_from_the_settings(db, tmp_path):
    # extract.MAX_FILE_BYTES is only the default for callers without a database
    assert one(db, "select value from exo_private.settings where key = 'ingest.max_file_bytes'") == (
        MAX_FILE_BYTES,
    )
    set_setting(db, "ingest.file_timeout_s", "soon")
    write(tmp_path / "v", "a.md", "text")
    with pytest.raises(
        ValueError, match="setting ingest.file_timeout_s must be a positive number, not 'soon'"
    ):
        run(db, tmp_path / "v")


def test_extraction_memory_is_bounded(db, tmp_path):
    set_setting(db, "ingest.extract_memory_bytes", 64 * 1024**2)
    set_setting(db, "ingest.max_text_bytes", None)  # a large text file, read
    root = tmp_path / "v"
    write(root, "work/long.txt", "Postgres vacuum notes, one more line.\n" * 1_300_000)  # 48 MB
    write(root, "work/short.txt", "Postgres vacuum notes.")
    run(db, root)
    docs = documents(db)
    assert (docs["work/long.txt"]["stage"], docs["work/long.txt"]["error_class"]) == ("failed", "too_large")
    assert docs["work/short.txt"]["stage"] == "chunked"  # the next file gets a working process


def test_a_one_megabyte_subject_is_cut_with_a_reason(db, tmp_path):
    root = tmp_path / "v"
    subject = "Postgres " * 116_509  # 1 MiB
    write(
        root,
        "admin/long.eml",
        f"From: a@example.com\nTo: b@example.com\nSubject: {subject}\n"
        "Date: Mon, 1 Jan 2024 10:00:00 +0000\n\nThe invoice is due.\n",
    )
    run(db, root)
    stage, title, cut = one(
        db,
        "select stage::text, title, metadata -> 'cut' from exo_private.documents where path = 'admin/long.eml'",
    )
    assert stage == "chunked"
    assert title == subject[:500]
    assert cut == {"subject": f"{len(subject)} characters, cut to the first 500"}


def test_random_binary_is_not_taken_as_text(db, tmp_path):
    root = tmp_path / "v"
    write(root, "work/noise.txt", os.urandom(1 << 16).replace(b"\0", b""))
    write(root, "work/latin1.txt", "Caf\xe9 cr\xe8me: postgres vacuum notes.".encode("cp1252"))
    run(db, root)
    stage, error_class, message = one(
        db,
        "select stage::text, error_class, error_message from exo_private.documents where path = 'work/noise.txt'",
    )
    assert (stage, error_class) == ("failed", "binary")
    assert "control characters" in message
    assert documents(db)["work/latin1.txt"]["stage"] == "chunked"


def test_chunks_are_cut_from_the_encoded_text_exactly(db, tmp_path):
    root = tmp_path / "v"
    paragraphs = [
        f"Paragraph {i} \u2014 caf\u00e9 \u65e5\u672c\u8a9e \U0001f600 postgres\tvacuum C:\\temp\\n{i} "
        + "na\u00efve r\u00e9sum\u00e9 " * (i % 40)
        for i in range(400)
    ]
    text = "\n\n".join(paragraphs)
    write(root, "work/wide.md", text)
    run(db, root)
    with db.connect() as conn:
        body = conn.execute("select body from exo_private.text_cache").fetchone()[0]
        pieces = conn.execute(
            """select body, char_start, char_end from exo_private.chunks
               union all select body, char_start, char_end from exo_private.extraction_windows"""
        ).fetchall()
    assert body == text.strip()  # tabs, backslashes and newlines came through COPY unchanged
    assert len(pieces) > 100
    assert all(piece == body[start:end] for piece, start, end in pieces)


# -- watch mode -------------------------------------------------------------------------


def test_watch_follows_create_modify_move_and_delete(db, tmp_path):
    root = tmp_path / "watched"
    write(root, "work/a.md", "postgres vacuum one")
    runs: list[pipeline.IngestSummary] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(db.cfg, root, None, runs.append, stop),
        kwargs={"debounce": 0.3, "dbname": db.name},
    )
    thread.start()

    def settle(count: int) -> None:
        deadline = time.monotonic() + 20
        while len(runs) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(runs) >= count, f"watch ran {len(runs)} times, expected {count}"

    try:
        settle(1)
        write(root, "work/b.md", "postgres replication two")
        settle(2)
        assert documents(db)["work/b.md"]["stage"] == "chunked"
        write(root, "work/a.md", "postgres vacuum one, edited with more words")
        settle(3)
        assert runs[-1].processed == 1
        (root / "work/b.md").rename(root / "work/c.md")
        settle(4)
        (root / "work/a.md").unlink()
        settle(5)
    finally:
        stop.set()
        thread.join(timeout=10)
    docs = documents(db)
    assert {p: d["stage"] for p, d in docs.items()} == {
        "work/a.md": "deleted",
        "work/b.md": "deleted",
        "work/c.md": "chunked",
    }
    assert not thread.is_alive()


def test_watch_polls_a_tree_it_cannot_follow(db, tmp_path, caplog):
    root = tmp_path / "watched"
    write(root, "work/a.md", "postgres vacuum one")
    folders = ["d"] * 1200  # deeper than the file system watcher can walk
    deep = _nest(root / "work", folders, "deep.md", "postgres replication, deep down")
    runs: list[pipeline.IngestSummary] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(db.cfg, root, None, runs.append, stop),
        kwargs={"debounce": 0.3, "dbname": db.name, "poll": 0.3},
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not runs and time.monotonic() < deadline:
            time.sleep(0.05)
        write(root, "work/b.md", "postgres replication two")
        while documents(db).get("work/b.md", {}).get("stage") != "chunked" and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(timeout=10)
        _unnest(root / "work", folders)
    docs = documents(db)
    assert docs["work/b.md"]["stage"] == "chunked"
    assert docs[f"work/{deep}"]["stage"] == "chunked"
    assert "cannot follow changes" in caplog.text
    assert not thread.is_alive()


def test_reband_moves_inferred_bands_as_time_passes(db, tmp_path):
    root = tmp_path / "v"
    today = datetime.date.today()
    write(root, "diary/new.md", f"---\ndate: {today - datetime.timedelta(days=200)}\n---\nFresh news.")
    write(
        root,
        "diary/pinned.md",
        f"---\ndate: {today - datetime.timedelta(days=200)}\nband: current\n---\nPinned.",
    )
    write(
        root,
        "admin/facts.md",
        f"---\ndate: {today - datetime.timedelta(days=200)}\ncanonical: true\n---\nFacts.",
    )
    run(db, root)

    def bands():
        with db.connect() as conn:
            return dict(
                conn.execute(
                    """select d.path, d.band::text || '/' || string_agg(distinct c.band::text, ',')
                       from exo_private.documents d join exo_private.chunks c on c.document_id = d.id
                       group by d.path, d.band"""
                ).fetchall()
            )

    assert bands() == {
        "diary/new.md": "current/current",
        "diary/pinned.md": "current/current",
        "admin/facts.md": "current/current",
    }
    with db.connect("exo_writer") as conn:
        assert conn.execute("select exo_private.reband(current_date + 400)").fetchone()[0] == 1  # new.md only
        assert conn.execute("select exo_private.reband(current_date + 400)").fetchone()[0] == 0  # idempotent
    assert bands()["diary/new.md"] == "recent/recent"
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.reband(current_date + 2000)")
        reason = conn.execute(
            "select band_reason from exo_private.documents where path = 'diary/new.md'"
        ).fetchone()[0]
    # frontmatter bands stay; a canonical document is never inferred archival
    assert bands() == {
        "diary/new.md": "archival/archival",
        "diary/pinned.md": "current/current",
        "admin/facts.md": "current/current",
    }
    assert "re-banded" in reason


def ingest_cli(db, cfg, monkeypatch, *args: str) -> str:
    """`exo ingest ARGS` against this test's database; what it printed."""
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    if cfg.external_url:
        monkeypatch.setenv("EXO_DATABASE_URL", db.url())
    monkeypatch.setattr(output.console, "width", 400)  # one line stays one line
    result = CliRunner().invoke(memory.ingest_cmd, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_large_log_is_skipped_with_its_fix_until_allowed(db, cfg, tmp_path, monkeypatch):
    root = tmp_path / "my folder"
    line = "2026-03-04 10:00:01 INFO backup of the allotment database finished in 42 s\n"
    write(root, "logs/server.log.txt", line * 70_000)  # 5.3 MB: over the default 2 MB
    write(root, "logs/today.log.txt", line * 20)  # a small log is read
    write(root, "notes/journal.md", PROSE)
    write(root, "notes/export.html", "<p>" + PROSE + "</p>" + "<script>var x = 1;</script>" * 90_000)
    printed = ingest_cli(db, cfg, monkeypatch, str(root))
    docs = documents(db)
    assert (docs["logs/server.log.txt"]["stage"], docs["logs/server.log.txt"]["error_class"]) == (
        "skipped",
        "large_text",
    )
    assert docs["logs/today.log.txt"]["stage"] == docs["notes/journal.md"]["stage"] == "chunked"
    assert docs["notes/export.html"]["stage"] == "chunked"  # 2.5 MB of markup: not plain text
    fix = f"exo ingest '{root}' --allow-large logs/server.log.txt reads it and allows it from then on"
    with db.connect() as conn:
        (reason, listed_fix) = conn.execute(
            "select reason, fix from exo.documents(array['skipped'], 'logs/*')"
        ).fetchone()
    assert reason == (
        "a plain-text file larger than prose is (a log or a dump): 5.2 MB of plain text, over the 2 MB "
        "of ingest.max_text_bytes"
    )
    assert listed_fix.startswith(fix) and "raise ingest.max_text_bytes" in listed_fix
    assert f"skipped logs/server.log.txt: {reason} (fix: {fix}" in printed
    assert run(db, root).unchanged == 4  # still skipped, and not read again

    printed = ingest_cli(db, cfg, monkeypatch, str(root), "--allow-large", "logs/server.log.txt")
    assert (
        f"allowed from now on over ingest.max_text_bytes (ingest.large_text_allowed): {root}/logs/server.log.txt"
        in printed
    )
    assert documents(db)["logs/server.log.txt"]["stage"] == "chunked"
    assert one(db, "select value from exo_private.settings where key = 'ingest.large_text_allowed'") == (
        [f"{root}/logs/server.log.txt"],
    )
    # Read like any file: the extraction window cap still holds.
    capped = one(db, "select metadata -> 'extraction_capped' from exo_private.documents where path = %s",
                 "logs/server.log.txt")[0]  # fmt: skip
    assert capped["queued"] == 250 < capped["windows"]

    # Allowed from then on: a log that grows is read again without the option.
    with open(root / "logs/server.log.txt", "a") as f:
        f.write(line * 10)
    again = run(db, root)
    assert again.run == {"chunked": 1} and documents(db)["logs/server.log.txt"]["stage"] == "chunked"

    # A note that grows past the limit is skipped, and what it was is gone from memory.
    assert write(root, "notes/journal.md", PROSE * 800).stat().st_size > 2_000_000
    run(db, root)
    journal = documents(db)["notes/journal.md"]
    assert (journal["stage"], journal["error_class"], journal["chunks"]) == ("skipped", "large_text", 0)


def test_the_text_limit_comes_from_the_settings(db, tmp_path):
    root = tmp_path / "v"
    write(root, "big.csv", "name;note\n" + "Omar;tea with Omar at the allotment\n" * 4000)  # 144 kB
    set_setting(db, "ingest.max_text_bytes", 100_000)
    run(db, root)
    assert documents(db)["big.csv"]["error_class"] == "large_text"
    set_setting(db, "ingest.max_text_bytes", None)  # no limit: the unchanged file is read now
    assert run(db, root).run == {"chunked": 1}
    set_setting(db, "ingest.large_text_allowed", "logs/*")
    with pytest.raises(
        ValueError, match="setting ingest.large_text_allowed must be a list of path globs, not 'logs/\\*'"
    ):
        run(db, root)
    set_setting(db, "ingest.large_text_allowed", [])
    set_setting(db, "ingest.max_text_bytes", 0)
    with pytest.raises(
        ValueError, match="setting ingest.max_text_bytes must be a positive number or null, not 0"
    ):
        run(db, root)
