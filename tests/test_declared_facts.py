"""Declared facts (issue 15): frontmatter keys of a document that names a subject and the
`key: value` lines of a canonical facts file, recorded when ingest processes the file. One
database for the module: each test ingests its own folder about subjects of its own."""

from __future__ import annotations

import importlib.metadata
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from support.db import cloned_database

from exocortex.ingest import pipeline


@pytest.fixture(scope="module")
def ddb(cfg, template_db):
    with cloned_database(cfg, template_db, "exo_declared") as db:
        yield db


def ingest(db, root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text)
    pipeline.ingest(db.cfg, root, "personal", dbname=db.name)


def rows(db, subject):
    """Every declared row of a subject, as the admin sees them, oldest first per attribute."""
    with db.connect() as conn:
        return conn.execute(
            """select f.attribute, f.value, f.valid_from, f.valid_to, f.close_reason,
                      array(select s.chunk_id from exo_private.fact_sources s where s.fact_id = f.id
                            order by s.recorded_at, s.chunk_id) as chunks,
                      (select array_agg(distinct s.document_id) from exo_private.fact_sources s
                       where s.fact_id = f.id) as documents
               from exo_private.facts f
               where f.subject_key = exo_private.canonical_key(%s) and f.kind = 'declared'
               order by f.attribute, f.valid_from, f.id""",
            (subject,),
        ).fetchall()


def chunks(db, path: str) -> list[tuple[int, str]]:
    with db.connect() as conn:
        return conn.execute(
            """select c.id, c.body from exo_private.chunks c join exo_private.documents d on d.id = c.document_id
               where d.path = %s order by c.ordinal""",
            (path,),
        ).fetchall()


def midnight(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_frontmatter_keys_of_a_named_subject_are_declared_and_structural_keys_are_not(ddb, tmp_path):
    ingest(
        ddb,
        tmp_path,
        {
            "ada.md": "---\ntitle: Notes on Ada\nsubject: Ada Rune\ndate: 2021-03-04\ntags: [people]\n"
            "aliases: [Ada]\nHome Town: Leeds\nlanguages: [English, Norwegian]\nborn: 1990\n"
            "address: {street: Main St}\nremarks: ''\n---\n# Notes on Ada\n\nAda moved north last spring.\n",
            # frontmatter that names no subject (and is not canonical) declares nothing
            "plain.md": "---\ntitle: Shopping\nshop: Lidl\n---\nMilk and bread.\n",
        },
    )
    first = chunks(ddb, "ada.md")[0][0]
    [doc] = rows(ddb, "Ada Rune")[0][6]
    assert [r[:6] for r in rows(ddb, "  ada RUNE")] == [
        ("born", "1990", midnight("2021-03-04"), None, None, [first]),
        ("home_town", "Leeds", midnight("2021-03-04"), None, None, [first]),
        ("languages", "English, Norwegian", midnight("2021-03-04"), None, None, [first]),
    ]
    with ddb.connect() as conn:
        assert conn.execute("select path from exo_private.documents where id = %s", (doc,)).fetchone() == (
            "ada.md",
        )
        assert conn.execute(
            "select count(*) from exo_private.facts where subject_key in ('shopping', 'notes on ada')"
        ).fetchone() == (0,)
        # the ignore list is a setting: take "born" off the facts and the document declares two
        conn.execute(
            "update exo_private.settings set value = value || '[\"Born\"]' where key = 'facts.frontmatter_ignore'"
        )
        declared = conn.execute("select attribute from exo_private.declared_facts(%s)", (doc,)).fetchall()
        conn.execute(
            "update exo_private.settings set value = value - 'Born' where key = 'facts.frontmatter_ignore'"
        )
    assert declared == [("home_town",), ("languages",)]
    with ddb.connect() as conn, pytest.raises(psycopg.errors.InvalidParameterValue, match="doc_id must name"):
        conn.execute("select exo_private.declared_facts(-1)")


CANONICAL = """---
canonical: true
date: 2024-05-01
team: Platform
---
# Ben Okafor

A facts file, one key and value a line.

- Employer: Northwind Traders
- Home town: Bristol
- **Blood type:** O negative
Team: Payments
Note that ratios like 3:1 and links like https://example.org are not facts.

{filler}

Phone: +44 20 7946 0000
Everyone who knew him agrees on one thing: he is kind.
Home town: Bristol
"""


def canonical_file(employer: str = "Northwind Traders", date: str = "2024-05-01") -> str:
    filler = "\n\n".join(
        f"Paragraph {n} of the file is prose about the weather in spring." for n in range(60)
    )
    return (
        CANONICAL.format(filler=filler)
        .replace("Northwind Traders", employer)
        .replace("date: 2024-05-01", f"date: {date}")
    )


def test_a_canonical_facts_file_declares_its_lines_each_sourced_to_its_chunk(ddb, tmp_path):
    ingest(ddb, tmp_path, {"ben.md": canonical_file()})
    pieces = chunks(ddb, "ben.md")
    assert len(pieces) > 1, "the filler must push the phone line into a later chunk"
    holding = {text: next(i for i, body in pieces if text in body) for text in ("Bristol", "Phone")}
    declared = rows(ddb, "Ben Okafor")
    assert [r[:3] for r in declared] == [
        ("blood_type", "O negative", midnight("2024-05-01")),
        ("employer", "Northwind Traders", midnight("2024-05-01")),
        ("home_town", "Bristol", midnight("2024-05-01")),
        ("phone", "+44 20 7946 0000", midnight("2024-05-01")),
    ]  # no team: the frontmatter says Platform and a line Payments, so the file declares neither
    assert declared[2][5] == [holding["Bristol"]]
    assert declared[3][5] == [holding["Phone"]]
    assert holding["Phone"] != pieces[0][0]

    # re-processing the unchanged file adds no fact row: only a source row for each new chunk id
    with ddb.connect() as conn:
        conn.execute(
            "select exo_private.process_document(id) from exo_private.documents where path = 'ben.md'"
        )
    again = rows(ddb, "Ben Okafor")
    assert [r[:5] for r in again] == [r[:5] for r in declared]
    assert all(len(r[5]) == 2 for r in again)


def test_an_edited_value_closes_the_old_row_and_a_removed_key_is_left_for_the_audit(ddb, tmp_path):
    ingest(ddb, tmp_path, {"cleo.md": canonical_file().replace("Ben Okafor", "Cleo Marsh")})
    ingest(
        ddb,
        tmp_path,
        {
            "cleo.md": canonical_file("Contoso Ltd", "2025-02-01")
            .replace("Ben Okafor", "Cleo Marsh")
            .replace("Phone: +44 20 7946 0000", "")
        },
    )
    history = rows(ddb, "Cleo Marsh")
    employer = [r[1:5] for r in history if r[0] == "employer"]
    assert employer == [
        ("Northwind Traders", midnight("2024-05-01"), midnight("2025-02-01"), "superseded"),
        ("Contoso Ltd", midnight("2025-02-01"), None, None),
    ]
    # unchanged values keep their first row (a source more); the removed phone stays current
    assert [r[1:5] for r in history if r[0] == "home_town"] == [
        ("Bristol", midnight("2024-05-01"), None, None)
    ]
    assert [r[1:5] for r in history if r[0] == "phone"] == [
        ("+44 20 7946 0000", midnight("2024-05-01"), None, None)
    ]


def test_a_charged_documents_facts_are_withheld_from_the_reader_unless_bridged(ddb, tmp_path):
    ingest(
        ddb,
        tmp_path,
        {
            "walter.md": "---\nsubject: Walter Rivera\ncharged: [Walter Rivera]\ndate: 2019-08-02\n"
            "resting place: St Mary Hospice\n---\nNotes from the funeral.\n"
        },
    )
    assert [r[:2] for r in rows(ddb, "Walter Rivera")] == [("resting_place", "St Mary Hospice")]
    with ddb.connect("exo_reader") as conn:
        conn.row_factory = psycopg.rows.dict_row
        hidden = conn.execute("select * from exo.facts('Walter Rivera')").fetchall()
        bridged = conn.execute(
            "select * from exo.facts('Walter Rivera', now(), array['Walter Rivera'])"
        ).fetchall()
    assert [(f["attribute"], f["withheld"]) for f in hidden] == [
        (None, {"subject": "Walter Rivera", "facts": 1, "how": hidden[0]["withheld"]["how"]})
    ]
    assert [(f["attribute"], f["value"], f["kind"]) for f in bridged] == [
        ("resting_place", "St Mary Hospice", "declared")
    ]


def test_a_real_packages_metadata_as_a_canonical_file_declares_its_header_fields(ddb, tmp_path):
    # Real "Key: value" text nobody here wrote: an installed package's core metadata.
    dist = importlib.metadata.distribution("psycopg")
    text = dist.read_text("METADATA")
    ingest(ddb, tmp_path, {"psycopg.md": f"---\ncanonical: true\nsubject: psycopg (package)\n---\n{text}"})
    declared = {r[0]: r[1] for r in rows(ddb, "psycopg (package)")}
    header = dist.metadata
    for key in ("Metadata-Version", "Name", "Version", "Summary", "Requires-Python"):
        assert declared[key.lower().replace("-", "_")] == header[key].strip()
    # a field given many different values is ambiguous
    assert "classifier" not in declared and "project_url" not in declared


# A facts file whose values say when they held (examples/vault/admin/facts.md, its own subject).
DATED = """---
canonical: true
date: 2015-06-01
former employers: ["Initech (2009 to 2011)", "Globex (2011-2012)"]
---
# Rowan Vale

- **Born:** 14 July 1988, Cindermoor
- **Address:** 27 Alder Row, Larkhaven, LH4 0ZZ (since 15 August 2020; rented from Hale Lettings)
- **Previous addresses:** 14 Fenwick Street, Flat 3, Larkhaven (April 2013 to August 2020); shared flat, \
Mill Lane, Hollowmere (2011 to April 2013); a tent somewhere
- **Role:** Senior Database Administrator since 1 June 2022; joined as Database Administrator on 7 March 2016
- **Previous employer:** Copperleaf Analytics (February 2012 to March 2016), Hollowmere then Larkhaven office
- **Dog:** Pixel, terrier mix, adopted 13 March 2021 from Larkhaven Animal Shelter
- **Team:** Payments (from March 2016 until June 2022)
"""


def declared_as_of(db, subject, attribute, as_of):
    with db.connect() as conn:
        return conn.execute(
            "select f.value from exo.facts(%s, %s) f where f.attribute = %s and f.kind = 'declared'",
            (subject, as_of, attribute),
        ).fetchall()


def test_a_value_that_says_when_it_held_is_valid_then_and_a_previous_list_is_the_lines_history(ddb, tmp_path):
    ingest(ddb, tmp_path, {"rowan.md": DATED})
    declared = rows(ddb, "Rowan Vale")
    by_attribute = {}
    for r in declared:
        by_attribute.setdefault(r[0], []).append(r[1:5])
    doc_date = midnight("2015-06-01")
    # a date that is content, not validity, keeps the document's date
    assert by_attribute["born"] == [("14 July 1988, Cindermoor", doc_date, None, None)]
    assert by_attribute["dog"][0][1:] == (doc_date, None, None)
    # "since" sets valid_from; the value is kept as written
    assert by_attribute["role"] == [
        (
            "Senior Database Administrator since 1 June 2022; joined as Database Administrator on 7 March 2016",
            midnight("2022-06-01"),
            None,
            None,
        )
    ]
    # a closed range is a closed row, valid through the end of its last month
    assert by_attribute["team"] == [
        (
            "Payments (from March 2016 until June 2022)",
            midnight("2016-03-01"),
            midnight("2022-07-01"),
            "ended",
        )
    ]
    # the previous_x lines stay as declared; their dated items are closed rows of x (an item
    # without a range, the tent, is no history)
    assert [r[1:] for r in by_attribute["previous_addresses"]] == [(doc_date, None, None)]
    assert by_attribute["address"] == [
        ("shared flat, Mill Lane, Hollowmere", midnight("2011-01-01"), midnight("2013-05-01"), "ended"),
        ("14 Fenwick Street, Flat 3, Larkhaven", midnight("2013-04-01"), midnight("2020-09-01"), "ended"),
        (
            "27 Alder Row, Larkhaven, LH4 0ZZ (since 15 August 2020; rented from Hale Lettings)",
            midnight("2020-08-15"),
            None,
            None,
        ),
    ]
    # a frontmatter list (joined with ", ") and a single dated item
    assert by_attribute["employer"] == [
        ("Initech", midnight("2009-01-01"), midnight("2012-01-01"), "ended"),
        ("Globex", midnight("2011-01-01"), midnight("2013-01-01"), "ended"),
        (
            "Copperleaf Analytics, Hollowmere then Larkhaven office",
            midnight("2012-02-01"),
            midnight("2016-04-01"),
            "ended",
        ),
    ]
    # each row keeps its source: the line's chunk
    assert all(r[5] and r[6] for r in declared)

    # where did Rowan live in 2014, and now?
    assert declared_as_of(ddb, "Rowan Vale", "address", midnight("2014-12-31")) == [
        ("14 Fenwick Street, Flat 3, Larkhaven",)
    ]
    assert declared_as_of(ddb, "Rowan Vale", "address", midnight("2012-06-01")) == [
        ("shared flat, Mill Lane, Hollowmere",)
    ]
    assert declared_as_of(ddb, "Rowan Vale", "address", datetime.now(UTC)) == [
        ("27 Alder Row, Larkhaven, LH4 0ZZ (since 15 August 2020; rented from Hale Lettings)",)
    ]
    assert declared_as_of(ddb, "Rowan Vale", "role", midnight("2022-05-31")) == []

    # re-processing the unchanged file adds no row, only sources for the new chunk ids
    with ddb.connect() as conn:
        conn.execute(
            "select exo_private.process_document(id) from exo_private.documents where path = 'rowan.md'"
        )
    again = rows(ddb, "Rowan Vale")
    assert [r[:5] for r in again] == [r[:5] for r in declared]
    assert all(len(r[5]) == 2 for r in again)


def test_a_closed_row_is_written_only_over_a_period_that_runs_forward(ddb):
    with ddb.connect() as conn, pytest.raises(psycopg.errors.InvalidParameterValue, match="the first before"):
        conn.execute(
            """select exo_private.record_closed_fact('personal', 'Rowan Vale', 'address', 'Nowhere', 'declared',
                                                     '2020-01-01', '2020-01-01', '{"document_id": 1}')"""
        )
    with ddb.connect() as conn, pytest.raises(psycopg.errors.InvalidParameterValue, match="p_source must be"):
        conn.execute(
            """select exo_private.record_closed_fact('personal', 'Rowan Vale', 'address', 'Nowhere', 'declared',
                                                     '2019-01-01', '2020-01-01', '{}')"""
        )
