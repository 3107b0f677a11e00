"""Temporal facts (issue 15): close, don't overwrite; observations; closing; the reader API and
deference. One database for the module: each test writes facts about subjects of its own."""

from __future__ import annotations

import itertools
import json
import random
import threading
from datetime import UTC, datetime

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.types.json import Jsonb
from support.db import cloned_database
from support.deferred import LUNCH, WALTER, defer_walter
from support.graph import add_document

from exocortex.cli import main


@pytest.fixture(scope="module")
def fdb(cfg, template_db):
    with cloned_database(cfg, template_db, "exo_facts") as db:
        yield db


def at(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def record(conn, subject, attribute, value, valid_from, kind="declared", source=None, workspace="personal"):
    return conn.execute(
        "select exo_private.record_fact(%s, %s, %s, %s, %s, %s, %s)",
        (workspace, subject, attribute, value, kind, valid_from, Jsonb(source or {"document_id": 1})),
    ).fetchone()[0]


def rows(conn, subject, attribute=None):
    """Every row of a subject (of one attribute), oldest first per line, as the admin sees them."""
    return conn.execute(
        """select id, workspace, attribute, kind::text, value, valid_from, valid_to, closed_by, close_reason
           from exo_private.facts
           where subject_key = exo_private.canonical_key(%s)
             and (%s::text is null or attribute = exo_private.normalise_attribute(%s))
           order by workspace, attribute, kind, valid_from, id""",
        (subject, attribute, attribute),
    ).fetchall()


def reader_facts(db, subject, as_of=None, bridge=()):
    with db.connect("exo_reader") as conn:
        conn.row_factory = psycopg.rows.dict_row
        return conn.execute(
            "select * from exo.facts(%s, coalesce(%s, now()), %s)", (subject, as_of, list(bridge))
        ).fetchall()


def test_changing_values_keep_one_current_row_and_the_whole_history(fdb):
    with fdb.connect() as conn:
        ids = [
            record(conn, "Ada Rune", "home town", town, at(year))
            for town, year in [("Leeds", 2010), ("York", 2015), ("Oslo", 2021)]
        ]
        history = rows(conn, "Ada Rune")
    assert [(r[4], r[5], r[6], r[7], r[8]) for r in history] == [
        ("Leeds", at(2010), at(2015), ids[1], "superseded"),
        ("York", at(2015), at(2021), ids[2], "superseded"),
        ("Oslo", at(2021), None, None, None),
    ]
    now = reader_facts(fdb, "  ada RUNE ")
    assert [(f["attribute"], f["value"], f["valid_to"]) for f in now] == [("home_town", "Oslo", None)]
    assert now[0]["sources"] == [{"document_id": 1, "recorded_at": now[0]["sources"][0]["recorded_at"]}]
    assert [f["value"] for f in reader_facts(fdb, "Ada Rune", at(2016))] == ["York"]
    assert reader_facts(fdb, "Ada Rune", at(2009)) == []
    with fdb.connect("exo_reader") as conn:
        line = conn.execute(
            "select value, closed_by, close_reason from exo.fact_history('Ada Rune', 'Home-Town')"
        ).fetchall()
    assert line == [("Leeds", ids[1], "superseded"), ("York", ids[2], "superseded"), ("Oslo", None, None)]


def test_an_older_value_arriving_late_is_history_and_leaves_the_current_row(fdb):
    with fdb.connect() as conn:
        current = record(conn, "Bo Lind", "employer", "Acme", at(2022))
        oldest = record(conn, "Bo Lind", "employer", "Initech", at(2018))
        newest = record(conn, "Bo Lind", "employer", "Globex", at(2024))
        between = record(conn, "Bo Lind", "employer", "Hooli", at(2023))
        history = {r[0]: r[4:] for r in rows(conn, "Bo Lind")}
    assert history[oldest] == ("Initech", at(2018), at(2022), current, "superseded")
    assert history[current] == ("Acme", at(2022), at(2024), newest, "superseded")
    assert history[between] == ("Hooli", at(2023), at(2024), newest, "superseded")
    assert history[newest] == ("Globex", at(2024), None, None, None)
    assert [f["value"] for f in reader_facts(fdb, "Bo Lind")] == ["Globex"]
    assert [f["value"] for f in reader_facts(fdb, "Bo Lind", at(2023, 6))] == ["Hooli"]
    assert [f["value"] for f in reader_facts(fdb, "Bo Lind", at(2022, 6))] == ["Acme"]
    assert [f["value"] for f in reader_facts(fdb, "Bo Lind", at(2019))] == ["Initech"]


def test_the_same_value_again_only_adds_a_source(fdb):
    with fdb.connect() as conn:
        first = record(
            conn, "Cy Moss", "phone", "555-0101", at(2020), source={"document_id": 7, "chunk_id": 70}
        )
        again = record(conn, "Cy Moss", "phone", " 555-0101 ", at(2021), source={"document_id": 8})
        repeated = record(conn, "Cy Moss", "phone", "555-0101", at(2021), source={"document_id": 8})
        sources = conn.execute(
            "select document_id, chunk_id from exo_private.fact_sources where fact_id = %s order by document_id",
            (first,),
        ).fetchall()
        assert len(rows(conn, "Cy Moss")) == 1
    assert first == again == repeated
    assert sources == [(7, 70), (8, None)]


def test_a_new_value_closes_no_other_attribute_subject_kind_or_workspace(fdb):
    with fdb.connect() as conn:
        kept = [
            record(conn, "Di Vale", "city", "Rome", at(2020), kind="observation", source={"document_id": 2}),
            record(conn, "Di Vale", "city", "Rome", at(2020), kind="declared"),
            record(conn, "Di Vale", "job", "baker", at(2020), kind="extracted"),
            record(conn, "Ed Vale", "city", "Rome", at(2020), kind="extracted"),
            record(conn, "Di Vale", "city", "Rome", at(2020), kind="extracted", workspace="technical"),
        ]
        old = record(conn, "Di Vale", "city", "Rome", at(2020), kind="extracted")
        new = record(conn, "Di Vale", "city", "Milan", at(2023), kind="extracted")
        closed = conn.execute(
            "select id from exo_private.facts where valid_to is not null and subject_key in ('di vale', 'ed vale')"
        ).fetchall()
    assert closed == [(old,)]
    assert len({*kept, old, new}) == 7
    current = reader_facts(fdb, "Di Vale")
    # every kind's current value, by attribute then precedence: disagreement is shown
    assert [(f["attribute"], f["kind"], f["workspace"], f["value"]) for f in current] == [
        ("city", "observation", "personal", "Rome"),
        ("city", "declared", "personal", "Rome"),
        ("city", "extracted", "personal", "Milan"),
        ("city", "extracted", "technical", "Rome"),
        ("job", "extracted", "personal", "baker"),
    ]


def test_two_concurrent_writers_of_a_line_leave_exactly_one_current_row(fdb):
    """Fixed interleaving: the first writer holds the line (uncommitted) while the second writes
    a newer value; the second waits, then closes the first's row."""
    with fdb.connect(autocommit=False) as first, fdb.connect(autocommit=False) as second:
        record(first, "Fay Orr", "status", "away", at(2021))
        done = threading.Event()

        def write() -> None:
            record(second, "Fay Orr", "status", "home", at(2022))
            second.commit()
            done.set()

        thread = threading.Thread(target=write)
        thread.start()
        with fdb.connect() as watcher:
            for _ in range(100):
                waiting = watcher.execute(
                    "select count(*) from pg_locks where pid = %s and locktype = 'advisory' and not granted",
                    (second.info.backend_pid,),
                ).fetchone()[0]
                if waiting:
                    break
                threading.Event().wait(0.05)
        assert waiting == 1 and not done.is_set()
        first.commit()
        thread.join(10)
    assert done.is_set()
    with fdb.connect() as conn:
        assert [(r[4], r[6]) for r in rows(conn, "Fay Orr")] == [("away", at(2022)), ("home", None)]


def test_many_concurrent_writers_keep_one_current_row_holding_the_newest_value(fdb):
    errors: list[BaseException] = []

    def write(offset: int) -> None:
        try:
            with fdb.connect() as conn:
                for i in range(offset, 60, 4):
                    record(
                        conn, "Gus Pike", "reading", f"v{i}", at(2000 + i), source={"document_id": 100 + i}
                    )
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with fdb.connect() as conn:
        line = rows(conn, "Gus Pike")
    assert [r[4] for r in line if r[6] is None] == ["v59"]
    assert len(line) == 60
    # the line reads as one history whatever the order of arrival: each row valid until the next
    assert all(line[i][6] >= line[i + 1][5] for i in range(59))
    assert [f["value"] for f in reader_facts(fdb, "Gus Pike", at(2030, 6))] == ["v30"]


def test_observe_records_a_batch_and_refuses_a_bad_observation_by_number(fdb):
    batch = [
        {
            "subject": "nas01",
            "attribute": "Disk Free",
            "value": 120,
            "observed_at": "2026-11-01T10:00Z",
            "source": "probe",
        },
        {
            "subject": "nas01",
            "attribute": "disk-free",
            "value": "80",
            "observed_at": "2026-11-02T10:00Z",
            "source": "probe",
        },
        {
            "subject": "NAS01",
            "attribute": "os",
            "value": "Debian 13",
            "observed_at": "2026-11-01T10:00Z",
            "source": "probe",
            "workspace": "technical",
        },
    ]
    with fdb.connect("exo_writer") as conn:
        recorded = conn.execute("select * from exo_private.observe(%s)", (Jsonb(batch),)).fetchall()
        assert len(recorded) == 3 and len({f for _, f in recorded}) == 3
        single = conn.execute(
            "select fact_id from exo_private.observe(%s)",
            (Jsonb({**batch[1], "observed_at": "2026-11-03T10:00Z", "source": "second probe"}),),
        ).fetchall()
        before = conn.execute("select count(*) from exo_private.observations").fetchone()[0]
        for bad, message in [
            ({"value": None}, "observation 2: value must be a non-blank string"),
            ({"observed_at": "soon"}, "observation 2: observed_at must be a timestamp, got '\"soon\"'"),
            ({"observed_at": "infinity"}, "observation 2: observed_at must be a finite timestamp"),
            ({"colour": "red"}, "observation 2: unknown field 'colour'"),
            ({"workspace": "nowhere"}, "observation 2: workspace 'nowhere' does not exist"),
            ({"subject": "  "}, "observation 2: subject must be a name"),
        ]:
            with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
                conn.execute("select exo_private.observe(%s)", (Jsonb([batch[0], {**batch[1], **bad}]),))
        missing = {k: v for k, v in batch[0].items() if k != "source"}
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="observation 1: source is missing"):
            conn.execute("select exo_private.observe(%s)", (Jsonb(missing),))
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="must be a JSON object or an array"):
            conn.execute("select exo_private.observe('3')")
        assert conn.execute("select count(*) from exo_private.observations").fetchone()[0] == before
    free = [f for f in reader_facts(fdb, "nas01") if f["attribute"] == "disk_free"]
    assert [(f["workspace"], f["kind"], f["value"]) for f in free] == [("personal", "observation", "80")]
    assert free[0]["fact_id"] == recorded[1][1] == single[0][0]
    assert [s["source"] for s in free[0]["sources"]] == ["probe", "second probe"]
    with fdb.connect() as conn:
        assert [(r[4], r[6]) for r in rows(conn, "nas01", "disk free")] == [
            ("120", datetime(2026, 11, 2, 10, tzinfo=UTC)),
            ("80", None),
        ]


def test_one_batch_may_hold_more_lines_than_the_server_has_locks(fdb):
    """30,000 lines in one call: more than the lock table's 64 x 100 default slots, had each line
    its own advisory lock; then the same lines again, each closing its current row."""
    lines = [{"subject": f"Probe Host {i}", "attribute": "load", "source": "probe"} for i in range(30000)]
    with fdb.connect("exo_writer") as conn:
        for day, value in ((1, "low"), (2, "high")):
            batch = [dict(line, value=value, observed_at=f"2024-03-0{day}T00:00:00Z") for line in lines]
            assert (
                len(conn.execute("select * from exo_private.observe(%s)", (Jsonb(batch),)).fetchall())
                == 30000
            )
        current = conn.execute(
            "select value, count(*) from exo_private.facts where subject like 'Probe Host %%' and valid_to is null "
            "group by 1"
        ).fetchall()
    assert current == [("high", 30000)]


def test_close_fact_closes_every_kinds_current_row_of_that_attribute_only(fdb):
    with fdb.connect("exo_writer") as conn:
        record(conn, "Hal Ives", "car", "Volvo", at(2019), kind="declared")
        record(conn, "Hal Ives", "car", "Volvo", at(2019, 3), kind="extracted")
        record(conn, "Hal Ives", "bike", "Brompton", at(2019), kind="declared")
        with pytest.raises(
            psycopg.errors.InvalidParameterValue, match="before the current value's valid_from"
        ):
            conn.execute("select exo_private.close_fact(null, 'Hal Ives', 'car', %s, 'sold')", (at(2018),))
        closed = conn.execute(
            "select exo_private.close_fact(null, 'hal ives', 'Car', %s, ' sold it ')", (at(2024),)
        ).fetchone()[0]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="has no current 'car' fact"):
            conn.execute("select exo_private.close_fact('personal', 'Hal Ives', 'car', now(), null)")
        assert [r[4:] for r in rows(conn, "Hal Ives")] == [
            ("Brompton", at(2019), None, None, None),
            ("Volvo", at(2019), at(2024), None, "closed: sold it"),
            ("Volvo", at(2019, 3), at(2024), None, "closed: sold it"),
        ]
    assert closed == 2
    assert [f["attribute"] for f in reader_facts(fdb, "Hal Ives")] == ["bike"]
    assert [f["kind"] for f in reader_facts(fdb, "Hal Ives", at(2020)) if f["attribute"] == "car"] == [
        "declared",
        "extracted",
    ]


def test_bad_arguments_are_refused_by_name(fdb):
    with fdb.connect("exo_writer") as conn:
        for args, message in [
            (("nowhere", "X", "a", "v", "declared", at(2020), {"document_id": 1}), "workspace 'nowhere'"),
            (
                ("personal", " ", "a", "v", "declared", at(2020), {"document_id": 1}),
                "p_subject must be a name",
            ),
            (("personal", "X", " - ", "v", "declared", at(2020), {"document_id": 1}), "p_attribute must not"),
            (
                ("personal", "X", "a", "", "declared", at(2020), {"document_id": 1}),
                "p_value must not be blank",
            ),
            (("personal", "X", "a", "v", "rumour", at(2020), {"document_id": 1}), "p_kind must be one of"),
            (("personal", "X", "a", "v", "declared", None, {"document_id": 1}), "p_valid_from must be"),
            (("personal", "X", "a", "v", "declared", at(2020), {}), "p_source must be an object"),
            (("personal", "X", "a", "v", "declared", at(2020), {"page": 1}), "p_source must be an object"),
            (
                ("personal", "X", "a", "v", "declared", at(2020), {"chunk_id": -4}),
                "p_source must be an object",
            ),
        ]:
            with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
                conn.execute(
                    "select exo_private.record_fact(%s, %s, %s, %s, %s, %s, %s)", (*args[:6], Jsonb(args[6]))
                )
    with fdb.connect("exo_reader") as conn:
        for statement, message in [
            ("select * from exo.facts(' ')", "subject must be a name"),
            ("select * from exo.fact_history('X', '')", "attribute must not be blank"),
            ("select * from exo.facts_search('x', 0)", "max_results must be between 1 and 200"),
            ("select * from exo.facts('X', now(), array_fill('a'::text, array[51]))", "at most 50 subjects"),
        ]:
            with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
                conn.execute(statement)


def test_the_reader_cannot_write_facts(fdb):
    with fdb.connect("exo_reader") as conn:
        for statement in [
            "select exo_private.record_fact('personal', 'X', 'a', 'v', 'declared', now(), '{\"document_id\": 1}')",
            """select exo_private.observe('{"subject": "X", "attribute": "a", "value": "v",
                                             "observed_at": "2020-01-01", "source": "s"}')""",
            "select exo_private.close_fact(null, 'X', 'a', now(), null)",
            "insert into exo_private.facts default values",
        ]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        # the API reads them, and may not write either
        assert conn.execute("select count(*) from exo.facts('nobody')").fetchone()[0] == 0


def test_a_fact_only_charged_chunks_support_is_withheld_with_a_hint(fdb):
    with fdb.connect() as conn:
        defer_walter(conn)
        doc = add_document(conn, "personal", LUNCH)
        conn.execute(
            "update exo_private.chunks set charged_subjects = %s where id = %s", ([WALTER], doc.chunks[1])
        )
        funeral = {"document_id": doc.id, "chunk_id": doc.chunks[1]}
        lunch = {"document_id": doc.id, "chunk_id": doc.chunks[0]}
        record(conn, "Ann Lee", "read at", "St Mary Hospice", at(2020), kind="extracted", source=funeral)
        record(conn, "Ann Lee", "lunch place", "Lakeside Cafe", at(2020), kind="extracted", source=lunch)
        record(conn, "Ann Lee", "lunch place", "Lakeside Cafe", at(2020), kind="extracted", source=funeral)
        # a declared fact of a document its frontmatter charges (no chunk): the document's rule
        eulogy = add_document(conn, "personal", ["Ann's eulogy."])
        conn.execute(
            "update exo_private.documents set frontmatter = %s where id = %s",
            (Jsonb({"charged": ["Grandpa Walter"]}), eulogy.id),
        )
        record(conn, "Ann Lee", "eulogy", "Psalm 23", at(2020), source={"document_id": eulogy.id})
        conn.execute(
            "select exo_private.observe(%s)",
            (
                Jsonb(
                    {
                        "subject": "Ann Lee",
                        "attribute": "read at",
                        "value": "St Mary Hospice",
                        "observed_at": "2020-01-02",
                        "source": "Ann",
                    }
                ),
            ),
        )
    shown = reader_facts(fdb, "Ann Lee")
    facts = [(f["attribute"], f["kind"]) for f in shown if f["withheld"] is None]
    hints = [f["withheld"] for f in shown if f["withheld"] is not None]
    # the observation is never charged; the facts of the funeral chunk and the eulogy are held back
    assert facts == [("lunch_place", "extracted"), ("read_at", "observation")]
    # no hint counts them: the hints are the closed subjects' own facts, whatever is asked (Walter
    # has none); a count of Ann Lee's withheld facts would tell what withheld text says of her
    assert hints == []
    lunch_sources = shown[0]["sources"]
    assert [s.get("chunk_id") for s in lunch_sources] == [doc.chunks[0]]
    assert lunch_sources[0]["path"].startswith("doc-")
    held_back = json.dumps([f for f in shown if f["kind"] != "observation"], default=str)
    assert "St Mary" not in held_back and "Psalm" not in held_back
    bridged = reader_facts(fdb, "Ann Lee", bridge=["Grandpa"])
    assert [(f["attribute"], f["kind"]) for f in bridged] == [
        ("eulogy", "declared"),
        ("lunch_place", "extracted"),
        ("read_at", "observation"),
        ("read_at", "extracted"),
    ]
    with fdb.connect("exo_reader") as conn:
        found = conn.execute("select kind, withheld from exo.facts_search('hospice')").fetchall()
        history = conn.execute("select kind, withheld from exo.fact_history('Ann Lee', 'read at')").fetchall()
    # facts_search hints only the closed subjects' own facts, whatever its words (Walter has none):
    # "hospice" finding the withheld extracted fact would tell what it says
    assert found == [("observation", None)]
    assert history == [("observation", None)]


def test_facts_search_ranks_current_facts_by_their_words(fdb):
    with fdb.connect() as conn:
        record(conn, "Ivy Quill", "favourite tea", "smoky lapsang souchong", at(2020))
        record(conn, "Ivy Quill", "favourite tea", "jasmine", at(2022))
        record(conn, "Jon Quill", "tea supplier", "Lapsang House", at(2021))
    with fdb.connect("exo_reader") as conn:
        found = conn.execute("select subject, value from exo.facts_search('lapsang tea', 5)").fetchall()
        assert conn.execute("select count(*) from exo.facts_search('   ')").fetchone()[0] == 0
    # the closed value is not a current fact; the fact with both words ranks first
    assert found == [("Jon Quill", "Lapsang House"), ("Ivy Quill", "jasmine")]


def test_the_cli_observes_closes_and_shows(fdb, tmp_path, monkeypatch):
    monkeypatch.setenv("EXO_DB_NAME", fdb.name)
    monkeypatch.setenv("EXO_READER_URL", fdb.url("exo_reader"))
    lines = [
        {
            "subject": "router",
            "attribute": "firmware",
            "value": "1.2",
            "observed_at": "2026-01-01",
            "source": "probe",
        },
        {
            "subject": "router",
            "attribute": "firmware",
            "value": "1.3",
            "observed_at": "2026-02-01",
            "source": "probe",
        },
    ]
    path = tmp_path / "obs.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in lines) + "\n\n")
    runner = CliRunner()
    out = runner.invoke(main, ["observe", str(path)], catch_exceptions=False)
    assert out.exit_code == 0 and "recorded 2 observation(s) of 2 fact(s)" in out.output
    bad = runner.invoke(main, ["observe"], input='{"subject": "router"\n', catch_exceptions=False)
    assert bad.exit_code != 0 and "line 1 is not JSON" in bad.output
    shown = json.loads(runner.invoke(main, ["fact", "show", "Router", "--json"]).output)
    assert [(f["attribute"], f["value"]) for f in shown] == [("firmware", "1.3")]
    out = runner.invoke(
        main, ["fact", "close", "router", "firmware", "--at", "2026-03-01", "--why", "retired"]
    )
    assert out.exit_code == 0 and "closed 1 current fact row(s)" in out.output
    history = json.loads(runner.invoke(main, ["fact", "history", "router", "firmware", "--json"]).output)
    assert [(f["value"], f["close_reason"]) for f in history] == [
        ("1.2", "superseded"),
        ("1.3", "closed: retired"),
    ]
    assert "1.3" in runner.invoke(main, ["fact", "show", "router", "--as-of", "2026-02-15"]).output
    again = runner.invoke(main, ["fact", "close", "router", "firmware"])
    assert again.exit_code == 1 and "has no current 'firmware' fact" in again.output


def test_observe_in_batches_writes_what_record_fact_writes_one_by_one(fdb):
    """observe writes the lines a batch only extends set-based and the rest one by one: both
    must give the line record_fact gives, observation by observation, in the batch's time order."""
    rng = random.Random(5)
    values = [(rng.choice("abc"), at(2000 + rng.randrange(12), 1 + rng.randrange(2))) for _ in range(80)]
    batches, i, ids = [], 0, itertools.count(1)
    while i < len(values):
        size = rng.randrange(1, 16)
        batches.append(values[i : i + size])
        i += size
    with fdb.connect("exo_writer") as conn:
        for batch in batches:
            conn.execute(
                "select count(*) from exo_private.observe(%s)",
                (
                    Jsonb(
                        [
                            {
                                "subject": "Kit Batch",
                                "attribute": "mood",
                                "value": v,
                                "observed_at": t.isoformat(),
                                "source": "s",
                            }
                            for v, t in batch
                        ]
                    ),
                ),
            )
            for v, t in sorted(batch, key=lambda x: x[1]):  # stable: ties keep the batch order
                # one source each, as each observation is
                record(
                    conn, "Kit Single", "mood", v, t, kind="observation", source={"document_id": next(ids)}
                )

        def line(subject):
            found = conn.execute(
                """select f.id, f.value, f.valid_from, f.valid_to, f.closed_by, f.close_reason,
                          (select count(*) from exo_private.fact_sources s where s.fact_id = f.id)
                   from exo_private.facts f where f.subject_key = exo_private.canonical_key(%s)
                   order by f.valid_from, f.id""",
                (subject,),
            ).fetchall()
            rank = {r[0]: n for n, r in enumerate(found)}
            return [
                (v, start, end, rank.get(by), why, sources) for _, v, start, end, by, why, sources in found
            ]

        batched, single = line("Kit Batch"), line("Kit Single")
    assert batched == single
    assert sum(r[5] for r in batched) == len(values)
    assert [r[0] for r in batched if r[2] is None] == [r[0] for r in single if r[2] is None]
