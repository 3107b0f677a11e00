"""Time in exo.search: bands follow as_of, and a named year ranks by closeness, years before 1900
included. One database per module holds a small vault ingested from files (no model: the
semantic stage is skipped, the rerank is deterministic)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from support import plpy
from support.db import Database, cloned_database
from support.deferred import WALTER, defer_walter
from support.graph import add_document

from exocortex.ingest import pipeline

FERRY = "The harbour ferry to Kestrel Island leaves at seven from the north pier."
NOTES = {
    "ferry-2011.md": ("date: 2011-02-01", FERRY),
    "ferry-2014.md": ("date: 2014-03-10", FERRY),
    "ferry-declared.md": ("date: 2014-06-01\nband: archival", FERRY),
    "ferry-2020.md": ("date: 2020-05-01", FERRY),
    "ferry-rules.md": ("date: 2005-01-01\ncanonical: true", FERRY),
    # The 1903 note covers more of the question ("land"): only the year named puts 1803's first.
    "treaty-1803.md": (
        "date: 1803-05-02",
        "What happened: the treaty was signed and the territory changed hands.",
    ),
    "treaty-1903.md": (
        "date: 1903-11-18",
        "What happened: the treaty was signed and the land changed hands.",
    ),
}
FERRY_QUESTION = "harbour ferry Kestrel Island north pier"


@pytest.fixture(scope="module")
def vault(cfg, template_db, tmp_path_factory) -> Iterator[Database]:
    root = tmp_path_factory.mktemp("temporal-vault")
    for name, (front, body) in NOTES.items():
        (root / name).write_text(f"---\nworkspace: personal\n{front}\n---\n{body}\n")
    with cloned_database(cfg, template_db, "exo_temporal_search") as db:
        pipeline.ingest(cfg, root, dbname=db.name)
        yield db


@pytest.fixture
def reader(vault) -> Iterator[psycopg.Connection]:
    with vault.connect("exo_reader") as conn:
        yield conn


def search_json(conn, query: str, **named) -> dict:
    args = [sql.Literal(query)] + [
        sql.SQL("{} => {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in named.items()
    ]
    return conn.execute(sql.SQL("select exo.search_json({})").format(sql.SQL(", ").join(args))).fetchone()[0]


def paths(found: dict) -> list[str]:
    return [r["path"] for r in found["results"]]


def test_the_vault_is_banded_as_of_today(vault):
    with vault.connect() as conn:
        bands = dict(
            conn.execute("select path, band::text from exo_private.documents where workspace = 'personal'")
        )
    assert bands == {
        "ferry-2011.md": "archival",
        "ferry-2014.md": "archival",
        "ferry-declared.md": "archival",
        "ferry-2020.md": "archival",
        "ferry-rules.md": "current",  # canonical
        "treaty-1803.md": "archival",
        "treaty-1903.md": "archival",
    }


def test_as_of_today_the_stored_band_decides(reader):
    found = search_json(reader, FERRY_QUESTION)
    assert paths(found) == ["ferry-rules.md"]
    assert found["report"]["archive"] == {"open": False, "why": None, "fallback": False}


def test_as_of_a_past_day_material_current_then_is_present(reader):
    found = search_json(reader, FERRY_QUESTION, as_of="2015-01-15")
    # 2014's note was current then; 2011's was archival, so was the note declared archival in
    # its frontmatter; 2020's was not written yet; the canonical note is current whatever its age.
    assert sorted(paths(found)) == ["ferry-2014.md", "ferry-rules.md"]
    assert {r["band"] for r in found["results"]} == {"current"}  # as of then, not the stored archival
    assert found["report"]["bands"] == ["current", "recent"]
    assert found["report"]["archive"]["fallback"] is False
    earlier = search_json(reader, FERRY_QUESTION, as_of="2013-01-01")
    assert sorted((r["path"], r["band"]) for r in earlier["results"]) == [
        ("ferry-2011.md", "recent"),  # recent then
        ("ferry-rules.md", "current"),
    ]


def test_as_of_a_past_day_an_open_archive_shows_everything_written_by_then(reader):
    found = search_json(reader, FERRY_QUESTION, as_of="2015-01-15", open_archive=True)
    assert sorted((r["path"], r["band"]) for r in found["results"]) == [
        ("ferry-2011.md", "archival"),
        ("ferry-2014.md", "current"),
        ("ferry-declared.md", "archival"),  # as declared
        ("ferry-rules.md", "current"),
    ]


def test_a_year_before_1900_ranks_by_closeness(reader):
    found = search_json(reader, "what happened to the land in 1803")
    assert found["report"]["temporal"]["years"] == [1803]
    assert found["report"]["archive"]["open"] is True
    assert paths(found)[:2] == ["treaty-1803.md", "treaty-1903.md"]
    assert [str(r["written_at"]) for r in found["results"][:2]] == ["1803-05-02", "1903-11-18"]
    # without the year, the better match comes first
    assert paths(search_json(reader, "what happened to the land"))[:2] == ["treaty-1903.md", "treaty-1803.md"]


def test_a_century_opens_the_archive_and_names_its_years(reader):
    found = search_json(reader, "what happened to the land in the nineteenth century")
    assert found["report"]["temporal"]["years"] == [1800, 1899]
    assert paths(found)[:2] == ["treaty-1803.md", "treaty-1903.md"]
    found = search_json(reader, "what happened to the land in the 1900s")
    assert paths(found)[:2] == ["treaty-1903.md", "treaty-1803.md"]


def test_as_of_a_day_before_1900(reader):
    found = search_json(reader, "what happened to the land", as_of="1850-01-01")
    assert paths(found) == ["treaty-1803.md"]  # the 1903 note is not written yet
    assert found["report"]["as_of"] == "1850-01-01"
    assert found["report"]["archive"]["fallback"] is True  # it was archival by then
    assert search_json(reader, "what happened in the 1840s", as_of="1850-01-01")["report"]["temporal"][
        "years"
    ] == [
        1840,
        1849,
    ]


def test_band_as_of_is_the_rule_of_band_by_age(vault):
    banding = plpy.load("banding")
    as_of = datetime.date(2015, 1, 15)
    ages = [0, 1, 364, 365, 366, 1094, 1095, 1096, 5000]
    with vault.connect() as conn:
        got = conn.execute(
            "select a, exo_private.band_as_of('archival', %s::date - a, true, %s, 365, 1095)::text "
            "from unnest(%s::int[]) a",
            (as_of, as_of, ages),
        ).fetchall()
        kept = conn.execute(
            "select exo_private.band_as_of('archival', '2014-12-01', false, '2015-01-15', 365, 1095)::text, "
            "exo_private.band_as_of('recent', '2014-12-01', true, current_date, 365, 1095)::text, "
            "exo_private.band_as_of('recent', null, true, '2015-01-15', 365, 1095)::text"
        ).fetchone()
    assert got == [
        (age, banding.band_by_age(as_of - datetime.timedelta(days=age), False, as_of, 365, 1095)[0])
        for age in ages
    ]
    assert kept == ("archival", "recent", "recent")  # declared or canonical; as of today; undated


# -- a named day, week or month ----------------------------------------------------------------

# Days alike in their words: only the date (in frontmatter alone) tells them apart.
SWIMS = {
    "diary/a.md": ("2014-03-10", "Swam thirty lengths at the lido with Iris, then coffee."),
    "diary/b.md": ("2014-03-12", "Swam forty lengths at the lido with Iris, then coffee."),
    "diary/c.md": ("2014-04-02", "Swam twenty lengths at the lido with Iris, then coffee."),
    "diary/d.md": ("2013-03-12", "Swam ten lengths at the lido with Iris, then coffee."),
}


@pytest.fixture(scope="module")
def diary(cfg, template_db, tmp_path_factory) -> Iterator[Database]:
    root = tmp_path_factory.mktemp("diary")
    for name, (day, body) in SWIMS.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(f"---\nworkspace: personal\ndate: {day}\n---\n{body}\n")
    with cloned_database(cfg, template_db, "exo_temporal_days") as db:
        pipeline.ingest(cfg, root, dbname=db.name)
        yield db


@pytest.mark.parametrize(
    ("question", "day"),
    [
        ("How many lengths did I swim on 10 March 2014?", "2014-03-10"),
        ("How many lengths did I swim on 2014/03/12?", "2014-03-12"),
        ("How many lengths did I swim on March 12th, 2014?", "2014-03-12"),
        ("How many lengths did I swim on 12 March 2013?", "2013-03-12"),
        ("lengths at the lido, Wednesday 2 April", "2014-04-02"),  # no year: the latest 2 April a Wednesday
    ],
)
def test_a_named_day_ranks_its_note_first_though_the_note_never_writes_it(diary, question, day):
    with diary.connect("exo_reader") as conn:
        found = search_json(conn, question, as_of="2014-06-01")
    assert found["results"][0]["written_at"] == day
    assert found["report"]["temporal"]["span"] == {"first": day, "last": day}
    # the date is no word to match: other days' notes that write "March" or "2014" gain nothing
    assert found["results"][0]["stage"] == "exact"


def test_a_named_month_ranks_that_months_notes_first(diary):
    with diary.connect("exo_reader") as conn:
        found = search_json(conn, "How many lengths at the lido in March 2014?", as_of="2014-06-01")
    days = [r["written_at"] for r in found["results"]]
    assert sorted(days[:2]) == ["2014-03-10", "2014-03-12"] and sorted(days[2:]) == [
        "2013-03-12",
        "2014-04-02",
    ]
    assert found["report"]["temporal"]["span"] == {"first": "2014-03-01", "last": "2014-03-31"}


@pytest.fixture(scope="module")
def busy_day(cfg, template_db, tmp_path_factory) -> Iterator[Database]:
    """More notes on one day than a small pool holds; the one that shares the question's word
    ("family", BM25's stem famili) written last."""
    root = tmp_path_factory.mktemp("busy")
    bodies = [
        "Worked on the garden shed all morning.",
        "Paid the electricity bill online.",
        "Read two chapters of the lighthouse novel.",
        "Repotted the basil on the windowsill.",
        "Lunch with the family at the harbour cafe, then a long walk.",
    ]
    for n, body in enumerate(bodies):
        (root / f"note-{n}.md").write_text(f"---\nworkspace: personal\ndate: 2014-05-03\n---\n{body}\n")
    with cloned_database(cfg, template_db, "exo_temporal_busy") as db:
        pipeline.ingest(cfg, root, dbname=db.name)
        yield db


@pytest.mark.parametrize(
    "question", ["Where did I eat with my family on 3 May 2014?", "families, 3 May 2014"]
)
def test_of_a_named_days_many_notes_the_one_that_shares_the_questions_word_comes_first(busy_day, question):
    with busy_day.connect("exo_reader") as conn:
        found = search_json(conn, question, as_of="2014-06-01", per_workspace=2)
    assert found["results"][0]["path"] == "note-4.md"
    assert found["results"][0]["stage"] == "exact"


# -- recency is a preference, not a wall -----------------------------------------------------


@pytest.fixture(scope="module")
def eras(cfg, template_db, tmp_path_factory) -> Iterator[Database]:
    """An old note that answers, and a recent one that only shares some of the question's words."""
    root = tmp_path_factory.mktemp("eras")
    recent = (datetime.date.today() - datetime.timedelta(days=10)).isoformat()
    notes = {
        "old.md": ("2019-05-14", "Caroline went to the LGBTQ support group at the library on 14 May."),
        "new.md": (recent, "Hi Caroline! The group chat says support is needed for the bake sale."),
    }
    for name, (day, body) in notes.items():
        (root / name).write_text(f"---\nworkspace: personal\ndate: {day}\n---\n{body}\n")
    with cloned_database(cfg, template_db, "exo_temporal_eras") as db:
        pipeline.ingest(cfg, root, dbname=db.name)
        yield db


def test_weak_present_matches_do_not_hide_a_strong_old_one(eras):
    with eras.connect("exo_reader") as conn:
        found = search_json(conn, "When did Caroline go to the LGBTQ support group?")
        kept = search_json(conn, "When did Caroline go to the LGBTQ support group?", open_archive=False)
    assert found["report"]["archive"]["open"] is True
    assert found["report"]["archive"]["why"] == "the question's word 'lgbtq' is only in archival passages (1)"
    assert paths(found)[0] == "old.md"
    assert paths(kept) == ["new.md"]  # the caller's choice stands


def test_an_old_passage_that_holds_clearly_more_of_the_question_opens_the_archive(cfg, template_db, tmp_path):
    """Every word of the question is in the present too, and a present note holds half of them:
    the present answers, yet an old note holds all six, three more than any present one."""
    recent = (datetime.date.today() - datetime.timedelta(days=10)).isoformat()
    notes = {
        "old.md": ("2019-05-14", "Audrey's time at the Leeds half marathon: 1:36:14, a great run."),
        "sale.md": (recent, "Audrey says Leeds has a half price sale on."),
        "work.md": (recent, "A run before work, no time for marathon talk."),
    }
    for name, (day, body) in notes.items():
        (tmp_path / name).write_text(f"---\nworkspace: personal\ndate: {day}\n---\n{body}\n")
    question = "What time did Audrey run at the Leeds half marathon?"
    with cloned_database(cfg, template_db, "exo_temporal_margin") as db:
        pipeline.ingest(cfg, tmp_path, dbname=db.name)
        with db.connect("exo_reader") as conn:
            found = search_json(conn, question)
            # one word more is no clear margin: the present note that holds three of four answers
            near = search_json(conn, "Audrey in Leeds, half marathon?")
        assert near["report"]["archive"]["open"] is False
        assert paths(near)[0] == "sale.md"
        assert found["report"]["archive"] == {
            "open": True,
            "why": "an archival passage holds 6 of the question's 6 words, a present one at most 3",
            "fallback": True,
        }
        assert paths(found)[0] == "old.md"


def test_a_person_whose_every_mention_is_archival_opens_it_though_the_present_says_the_name(
    cfg, template_db, tmp_path
):
    """Fiona wrote only in a chat of 2019; a recent note says her name and every other word of
    the question, so no word is only archival: the person she is (a chat participant, an entity
    the question names) still opens the archive."""
    from support.chat import jsonl, run_import, session, write

    recent = datetime.date.today() - datetime.timedelta(days=10)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "bake.md").write_text(
        f"---\nworkspace: personal\ndate: {recent}\n---\nFiona's cousin says volunteers are wanted for the bake sale.\n"
    )
    old = datetime.datetime(2019, 5, 14, 10, tzinfo=datetime.UTC)
    export = write(tmp_path, "fiona.jsonl", jsonl(*session(
        "fiona", old, ("Fiona", "I signed up to volunteer at the Riverside community garden."), ("Me", "Lovely!"))))  # fmt: skip
    with cloned_database(cfg, template_db, "exo_temporal_person") as db:
        pipeline.ingest(cfg, tmp_path / "notes", dbname=db.name)
        run_import(db, export, "jsonl", workspace="personal")
        with db.connect("exo_reader") as conn:
            found = search_json(conn, "Where did Fiona volunteer?")
        assert found["report"]["archive"]["open"] is True
        assert (
            found["report"]["archive"]["why"] == "the question names 'Fiona', whose every mention is archival"
        )
        assert any("Riverside community garden" in r["body"] for r in found["results"])
        # a present mention in material withheld from the search counts on neither side: the
        # archive opens as before, and the report says the same
        with db.connect() as conn:
            defer_walter(conn)
            note = add_document(conn, "personal", ["Grandpa's funeral: Fiona sent flowers."])
            conn.execute(
                "update exo_private.chunks set charged_subjects = %s where id = %s",
                ([WALTER], note.chunks[0]),
            )
            conn.execute(
                "insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface) "
                "select e.id, %s, %s, %s, 'Fiona' from exo_private.entities e where e.canonical_key = 'fiona'",
                (note.windows[0], note.id, note.chunks[0]),
            )
        with db.connect("exo_reader") as conn:
            again = search_json(conn, "Where did Fiona volunteer?")
        assert again["report"]["archive"] == found["report"]["archive"]
        # once Fiona writes in a recent chat, the present has her: the rule no longer opens it
        now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=3)
        later = write(
            tmp_path, "later.jsonl", jsonl(*session("fiona-2", now, ("Fiona", "Back from holiday!")))
        )
        run_import(db, later, "jsonl", workspace="personal")
        with db.connect("exo_reader") as conn:
            found = search_json(conn, "Where did Fiona volunteer?")
        assert found["report"]["archive"]["open"] is False
