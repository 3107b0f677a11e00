"""The personal knowledge base (issue 17): every lifecycle transition with a clock the tests
move (p_at), the daily decay and its pg_cron job, and the reader's one narrow recording path.
One database for the module: each test makes profiles and documents of its own."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.types.json import Jsonb
from support.db import cloned_database
from support.graph import add_document

from exocortex.cli import main
from exocortex.db import admin_url, connect

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
STATES = ["global", "surfaced", "suggested", "claimed", "pinned", "demoted"]
#: The daily decay's pg_cron command: it lifts the soft memory limit of a job first (sql/065).
DECAY_JOB = "select exo_private.kb_decay() from exo_private.lift_backend_memory()"


@pytest.fixture(scope="module")
def kdb(cfg, template_db):
    with cloned_database(cfg, template_db, "exo_kb") as db:
        yield db


@pytest.fixture
def conn(kdb):
    with kdb.connect() as conn:
        yield conn


def profile(conn) -> str:
    name = f"user-{uuid.uuid4().hex[:8]}"
    conn.execute("select exo_private.kb_add_profile(%s)", (name,))
    return name


def docs(conn, n: int) -> list[int]:
    return [add_document(conn, "personal", [f"note {i} about kubernetes pods"]).id for i in range(n)]


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def write(conn, who, action, documents, at=T0, chunks=(), missed=()):
    return conn.execute(
        "select exo_private.kb_write(%s, %s, %s, %s, %s, %s)",
        (who, action, list(documents), list(chunks), list(missed), at),
    ).fetchone()[0]


def item(conn, who, document) -> dict:
    row = conn.execute(
        """select i.state::text, i.fetch_count, i.next_suggestion_at, i.declines,
                  coalesce(p.searches - i.last_seen_search, 0), i.miss_streak, i.forced, i.thumbs, s.score
           from exo_private.kb_items i join exo_private.kb_profiles p on p.id = i.profile_id
           join exo_private.kb_scores s on s.profile_id = i.profile_id and s.document_id = i.document_id
           where p.name = %s and i.document_id = %s""",
        (who, document),
    ).fetchone()
    keys = ["state", "fetch_count", "next", "declines", "absent", "misses", "forced", "thumbs", "score"]
    return dict(zip(keys, row, strict=True)) if row else {}


def base(kdb, who, columns: str = "*") -> list[tuple]:
    """exo.kb_items() as profile `who` sees it, in a session of its login role."""
    with kdb.connect_profile(who) as mine:
        return mine.execute(f"select {columns} from exo.kb_items()").fetchall()


def check(row: dict, expected: dict) -> None:
    assert {k: row.get(k) for k in expected} == expected


def decay(conn, who, at):
    return conn.execute("select exo_private.kb_decay(%s, %s)", (who, at)).fetchone()[0]


def claimed(conn, who, document, fetches=3, at=T0):
    for i in range(fetches):
        write(conn, who, "use", [document], at + timedelta(minutes=i))
    write(conn, who, "accept", [document], at + timedelta(minutes=fetches))
    assert item(conn, who, document)["state"] == "claimed"


# -- the transition table ------------------------------------------------------------------


def test_the_transition_table_is_the_lifecycle(conn):
    table = conn.execute(
        "select from_state::text, event, to_state::text, guard from exo_private.kb_transitions"
    )
    rows = {(f, e): t for f, e, t, guard in table.fetchall() if guard}
    user_actions = {"thumbs_up", "thumbs_down", "force_pin", "force_remove"}
    expected = {
        ("global", "fetch"): "surfaced",
        ("surfaced", "fetch"): "surfaced",
        ("suggested", "fetch"): "suggested",
        ("claimed", "fetch"): "claimed",
        ("pinned", "fetch"): "pinned",
        ("demoted", "fetch"): "surfaced",
        ("surfaced", "reach_threshold"): "suggested",
        ("surfaced", "reset"): "surfaced",
        ("suggested", "reset"): "surfaced",
        ("suggested", "accept"): "claimed",
        ("suggested", "decline"): "surfaced",
        ("claimed", "score_high"): "pinned",
        ("claimed", "score_low"): "demoted",
        ("pinned", "score_low"): "demoted",
        ("claimed", "miss_streak"): "demoted",
        ("pinned", "miss_streak"): "demoted",
    }
    for state in STATES:
        expected |= {
            (state, "thumbs_up"): state,
            (state, "thumbs_down"): state,
            (state, "force_pin"): "pinned",
            (state, "force_remove"): "global",
        }
    assert rows == expected
    assert {e for _, e in rows} - user_actions == {
        "fetch", "reach_threshold", "reset", "accept", "decline", "score_high", "score_low", "miss_streak"
    }  # fmt: skip
    # What the table does not list is refused, naming what is possible.
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="possible here: fetch"):
        conn.execute("select exo_private.kb_next_state('surfaced', 'accept')")


# -- counting, suggesting, declining, resetting ---------------------------------------------


def test_a_document_is_suggested_at_the_fetch_threshold(kdb, conn):
    who, [doc] = profile(conn), docs(conn, 1)
    states = []
    for i in range(3):
        result = write(conn, who, "use", [doc], day(i))
        states.append((result[0]["state"], result[0]["fetch_count"]))
    assert states == [("surfaced", 1), ("surfaced", 2), ("suggested", 3)]
    listed = base(kdb, who, "title, suggestion")
    assert listed == [(None, f"'{_path(conn, doc)}' has appeared in your questions 3 times; save it?")]


def _path(conn, doc):
    return conn.execute("select path from exo_private.documents where id = %s", (doc,)).fetchone()[0]


def test_a_declined_suggestion_waits_twice_as_long_each_time(conn):
    who, [doc] = profile(conn), docs(conn, 1)
    fetches = 0

    def fetch_until_suggested():
        nonlocal fetches
        while item(conn, who, doc).get("state") != "suggested":
            fetches += 1
            write(conn, who, "use", [doc], day(fetches))
        return fetches

    assert fetch_until_suggested() == 3
    write(conn, who, "decline", [doc], day(fetches))
    check(item(conn, who, doc), {"state": "surfaced", "next": 3 + 3 * 2, "declines": 1})
    assert fetch_until_suggested() == 9
    write(conn, who, "decline", [doc], day(fetches))
    assert item(conn, who, doc)["next"] == 9 + 3 * 4
    assert fetch_until_suggested() == 21


def test_the_fetch_count_resets_after_absent_searches(conn):
    who, [counting, pending, other] = profile(conn), docs(conn, 3)
    for i in range(3):
        write(conn, who, "use", [counting, pending] if i < 2 else [pending], day(i))
    assert (item(conn, who, counting)["fetch_count"], item(conn, who, pending)["state"]) == (2, "suggested")
    for i in range(3, 5):  # absent twice (and once before): not yet
        write(conn, who, "use", [other], day(i))
    check(item(conn, who, counting), {"state": "surfaced", "fetch_count": 0, "absent": 0})
    assert item(conn, who, pending)["absent"] == 2
    write(conn, who, "use", [other], day(5))
    # the third absence: the pending suggestion lapses and counts from zero
    check(item(conn, who, pending), {"state": "surfaced", "fetch_count": 0, "next": 3})


def test_accept_saves_only_a_suggested_document(kdb, conn):
    who, [doc, early] = profile(conn), docs(conn, 2)
    write(conn, who, "use", [early])
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="surfaced cannot take the event 'accept'"):
        write(conn, who, "accept", [early])
    claimed(conn, who, doc)
    assert [r[0] for r in base(kdb, who, "state")] == [
        "claimed",
        "surfaced",
    ]


# -- the daily score: pinning and demotion ---------------------------------------------------


def test_a_claimed_document_held_above_the_pin_score_for_seven_days_is_pinned(conn):
    who, [doc] = profile(conn), docs(conn, 1)
    claimed(conn, who, doc, fetches=20)
    write(conn, who, "thumbs_up", [doc])
    write(conn, who, "cache", [doc], T0 + timedelta(hours=1))
    for n in range(7):
        decay(conn, who, day(n))
        assert item(conn, who, doc)["state"] == "claimed", f"day {n}"
    assert item(conn, who, doc)["score"] == pytest.approx((0.4 * 0.7408 + 0.3 + 0.2 + 0.15) / 1.05, abs=1e-3)
    assert decay(conn, who, day(7))["pinned"] == 1
    assert item(conn, who, doc)["state"] == "pinned"


def test_a_dip_below_the_pin_score_restarts_the_hold(conn):
    who, [doc] = profile(conn), docs(conn, 1)
    claimed(conn, who, doc, fetches=20)
    write(conn, who, "thumbs_up", [doc])
    write(conn, who, "cache", [doc], T0 + timedelta(hours=1))
    decay(conn, who, day(0))
    write(conn, who, "thumbs_down", [doc], day(3))
    decay(conn, who, day(3))  # the explicit signal is gone: below 0.85
    write(conn, who, "thumbs_up", [doc], day(4))
    write(conn, who, "use", [doc], day(4))
    for n in range(4, 11):
        decay(conn, who, day(n))
    assert item(conn, who, doc)["state"] == "claimed"
    decay(conn, who, day(11))
    assert item(conn, who, doc)["state"] == "pinned"


def test_a_claimed_document_held_below_the_demotion_score_for_three_days_is_demoted(conn):
    who, [doc] = profile(conn), docs(conn, 1)
    claimed(conn, who, doc)
    decay(conn, who, day(20))  # recency still counts
    assert item(conn, who, doc)["score"] > 0.15
    for n in (30, 31, 32):
        decay(conn, who, day(n))
        assert item(conn, who, doc)["state"] == "claimed"
    assert decay(conn, who, day(33))["demoted"] == 1
    check(item(conn, who, doc), {"state": "demoted", "fetch_count": 0})
    # used again: counting from zero
    check(write(conn, who, "use", [doc], day(34))[0], {"state": "surfaced", "fetch_count": 1})


def test_a_cached_document_that_misses_ten_searches_in_a_row_is_demoted(conn):
    who, [doc, forced] = profile(conn), docs(conn, 2)
    claimed(conn, who, doc)
    write(conn, who, "force_pin", [forced])
    for n in range(9):
        write(conn, who, "cache", [], day(n), missed=[doc, forced])
    write(conn, who, "cache", [doc], day(9))  # a hit breaks the streak
    for n in range(10, 19):
        write(conn, who, "cache", [], day(n), missed=[doc])
    check(item(conn, who, doc), {"state": "claimed", "misses": 9})
    write(conn, who, "cache", [], day(19), missed=[doc, forced])
    assert item(conn, who, doc)["state"] == "demoted"
    check(item(conn, who, forced), {"state": "pinned", "forced": True, "misses": 10})


def test_force_pin_holds_against_decay_and_force_remove_clears_everything(kdb, conn):
    who, [doc] = profile(conn), docs(conn, 1)
    write(conn, who, "use", [doc])
    write(conn, who, "thumbs_down", [doc])
    check(write(conn, who, "force_pin", [doc])[0], {"state": "pinned", "forced": True})
    for n in range(60, 70):
        decay(conn, who, day(n))
    assert item(conn, who, doc)["state"] == "pinned"
    assert item(conn, who, doc)["score"] < 0.15
    write(conn, who, "force_remove", [doc], day(70))
    assert item(conn, who, doc) | {"next": None} == {
        "state": "global", "fetch_count": 0, "next": None, "declines": 0, "absent": 0, "misses": 0,
        "forced": False, "thumbs": 0, "score": None,
    }  # fmt: skip
    assert base(kdb, who) == []


def xmin(conn, who, document) -> int:
    return conn.execute(
        """select i.xmin::text::bigint from exo_private.kb_items i join exo_private.kb_profiles p
           on p.id = i.profile_id where p.name = %s and i.document_id = %s""",
        (who, document),
    ).fetchone()[0]


def test_recording_a_search_rewrites_only_the_rows_it_returns_or_resets(conn):
    who, [seen, waiting, other] = profile(conn), docs(conn, 3)
    write(conn, who, "use", [seen, waiting], day(0))
    before = xmin(conn, who, waiting)
    write(conn, who, "use", [seen, other], day(1))
    write(conn, who, "use", [seen], day(2))
    assert xmin(conn, who, waiting) == before  # absent twice: nothing written, still counted
    check(item(conn, who, waiting), {"state": "surfaced", "fetch_count": 1, "absent": 2})
    write(conn, who, "use", [seen], day(3))
    check(item(conn, who, waiting), {"state": "surfaced", "fetch_count": 0, "absent": 0})


def test_the_decay_writes_only_the_rows_that_cross_a_threshold_and_scores_on_read(conn):
    who, [high, middling] = profile(conn), docs(conn, 2)
    claimed(conn, who, high, fetches=20)
    write(conn, who, "thumbs_up", [high])
    write(conn, who, "cache", [high], T0 + timedelta(hours=1))
    claimed(conn, who, middling)
    assert item(conn, who, middling)["score"] is None  # never decayed
    untouched = xmin(conn, who, middling)
    decay(conn, who, day(1))
    assert xmin(conn, who, middling) == untouched
    crossed = xmin(conn, who, high)
    assert item(conn, who, high)["score"] >= 0.85
    first = item(conn, who, middling)["score"]
    assert decay(conn, who, day(2))["scored"] == 2
    assert (xmin(conn, who, high), xmin(conn, who, middling)) == (crossed, untouched)
    assert item(conn, who, middling)["score"] == pytest.approx(
        first - 0.4 * (0.9512 - 0.9048) / 1.05, abs=1e-3
    )


# -- the pg_cron job -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_cron_job_runs_the_decay_against_a_test_database(cfg, kdb, conn):
    who, [doc] = profile(conn), docs(conn, 1)
    claimed(conn, who, doc, at=datetime.now(UTC) - timedelta(days=10))
    cron_db = conn.execute("show cron.database_name").fetchone()[0]
    job = f"exo-test-kb-{uuid.uuid4().hex[:8]}"
    with connect(admin_url(cfg, cron_db), "exo-test-cron", autocommit=True) as cron:
        scheduled = cron.execute(
            "select command, username from cron.job where jobname = 'exo-kb-decay'"
        ).fetchone()
        command, username = scheduled or (DECAY_JOB, "exo_writer")
        job_id = cron.execute(
            "select cron.schedule_in_database(%s, '1 seconds', %s, %s, %s)",
            (job, command, kdb.name, username),
        ).fetchone()[0]
        try:
            deadline, runs = time.monotonic() + 30, []
            while time.monotonic() < deadline and not runs:
                time.sleep(0.5)
                runs = cron.execute(
                    "select status from cron.job_run_details where jobid = %s and status = 'succeeded'",
                    (job_id,),
                ).fetchall()
        finally:
            cron.execute("select cron.unschedule(%s)", (job_id,))
            cron.execute("delete from cron.job_run_details where jobid = %s", (job_id,))
    assert runs, "the job did not run within 30 s"
    assert (command, username) == (DECAY_JOB, "exo_writer")
    score = item(conn, who, doc)["score"]
    assert score == pytest.approx((0.4 * 0.6065 + 0.3 * 3 / 20) / 1.05, abs=0.01)  # ten days since


# -- the reader's narrow path --------------------------------------------------------------


@pytest.fixture
def reader(kdb):
    with kdb.connect("exo_reader") as conn:
        yield conn


def _snapshot(conn):
    return conn.execute(
        """select (select jsonb_agg(to_jsonb(i) order by i.profile_id, i.document_id) from exo_private.kb_items i),
                  (select jsonb_agg(to_jsonb(p) - 'window_started_at' - 'window_writes' - 'searches'
                                    order by p.id) from exo_private.kb_profiles p),
                  (select count(*) from exo_private.documents), (select count(*) from exo_private.settings)"""
    ).fetchone()


def test_the_provenance_block_names_each_source_and_the_pending_suggestion(kdb, conn):
    who, [doc, other] = profile(conn), docs(conn, 2)
    chunk = conn.execute("select id from exo_private.chunks where document_id = %s", (doc,)).fetchone()[0]
    conn.execute("update exo_private.documents set title = 'Kubernetes Pod Basics' where id = %s", (doc,))
    with kdb.connect_profile(who) as mine:
        for _ in range(3):
            with mine.transaction():
                mine.execute("set transaction read write")
                block = mine.execute("select exo.kb_record_use(%s, %s)", ([doc, other], [chunk])).fetchone()[
                    0
                ]
    first, second = block["sources"]
    assert first == {
        "document_id": doc, "title": "Kubernetes Pod Basics", "path": _path(conn, doc), "from": "global",
        "chunks": [chunk], "state": "suggested", "fetch_count": 3,
        "suggestion": "'Kubernetes Pod Basics' has appeared in your questions 3 times; save it?",
    }  # fmt: skip
    assert (second["document_id"], second["chunks"]) == (other, [])
    assert block["text"].splitlines()[:3] == [
        f"Provenance (profile {who}):",
        f"1. 'Kubernetes Pod Basics', from global search, chunks {chunk}: suggested, fetched 3 times",
        f"   'Kubernetes Pod Basics' has appeared in your questions 3 times; save it? (exo kb accept {doc} "
        f"--profile {who})",
    ]


def test_the_reader_records_use_only_in_a_read_write_transaction(kdb, conn):
    who, [doc] = profile(conn), docs(conn, 1)
    chunk = conn.execute("select id from exo_private.chunks where document_id = %s", (doc,)).fetchone()[0]
    with kdb.connect_profile(who) as mine:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction, match="begin read write"):
            mine.execute("select exo.kb_record_use(%s, %s)", ([doc], [chunk]))
        with mine.transaction():
            mine.execute("set transaction read write")
            result = mine.execute("select exo.kb_record_use(%s, %s)", ([doc], [chunk])).fetchone()[0]
        assert result["sources"] == [
            {"document_id": doc, "title": None, "path": _path(conn, doc), "from": "global", "chunks": [chunk],
             "state": "surfaced", "fetch_count": 1, "suggestion": None}
        ]  # fmt: skip
        row = conn.execute(
            "select last_chunks from exo_private.kb_items where document_id = %s", (doc,)
        ).fetchone()
        assert row == ([chunk],)
        for action in ("thumbs_up", "thumbs_down", "force_pin", "force_remove"):
            with mine.transaction():
                mine.execute("set transaction read write")
                mine.execute(f"select exo.kb_{action}(%s)", (doc,))
    assert item(conn, who, doc)["state"] == "global"


def test_the_recording_path_writes_nothing_else(kdb, conn, reader):
    alice, bob = profile(conn), profile(conn)
    [mine, theirs, other] = docs(conn, 3)
    write(conn, bob, "use", [theirs])
    chunk_of_other = conn.execute(
        "select id from exo_private.chunks where document_id = %s", (other,)
    ).fetchone()[0]
    as_alice = [
        ("select exo.kb_record_use(%s)", ([mine] * 101,)),  # too many documents
        ("select exo.kb_record_use(%s, %s)", ([mine], list(range(1, 502)))),  # too many chunks
        ("select exo.kb_record_use(%s)", ([9_000_000_000],)),  # unknown document
        ("select exo.kb_record_use(%s)", ([mine, None],)),
        ("select exo.kb_record_use(%s)", (None,)),
        ("select exo.kb_record_use(%s, %s)", ([mine], [chunk_of_other])),  # another document's chunk
        ("select exo.kb_accept_suggestion(%s)", (theirs,)),  # nothing suggested (bob's is not hers)
        ("select exo.kb_force_pin(%s)", (None,)),
        ("select exo_private.kb_write(%s, 'use', %s)", (bob, [mine])),  # the internal path itself
        ("insert into exo_private.kb_items (profile_id, document_id, next_suggestion_at, state_changed_at)"
         " select id, %s, 3, now() from exo_private.kb_profiles where name = %s", (mine, alice)),
        ("update exo_private.kb_profiles set name = %s where name = %s", ("mallory", bob)),
        ("select exo_private.kb_decay(%s)", (bob,)),
        ("select exo_private.kb_add_profile(%s)", ("mallory",)),
    ]  # fmt: skip
    # the plain reader has no profile: it records nothing anywhere
    as_reader = [("select exo.kb_record_use(%s)", ([mine],)), ("select exo.kb_thumbs_up(%s)", (mine,))]
    before = _snapshot(conn)
    with kdb.connect_profile(alice) as session:
        for who, statements in ((session, as_alice), (reader, as_reader)):
            for statement, args in statements:
                with pytest.raises(psycopg.Error) as raised, who.transaction():
                    who.execute("set transaction read write")
                    who.execute(statement, args)
                assert raised.value.sqlstate[:2] in {"22", "42"}, (statement, raised.value)
        assert _snapshot(conn) == before
        # A use of alice's touches only alice's rows, and she sees only hers.
        with session.transaction():
            session.execute("set transaction read write")
            session.execute("select exo.kb_record_use(%s)", ([mine],))
        assert [r[0] for r in session.execute("select document_id from exo.kb_items()")] == [mine]
    assert item(conn, bob, theirs)["fetch_count"] == 1
    assert item(conn, bob, mine) == {}


def test_the_recording_path_cannot_flood(kdb, conn):
    who, [doc] = profile(conn), docs(conn, 1)
    conn.execute("select exo_private.set_setting('kb.writes_per_minute', '5')")
    try:
        with kdb.connect_profile(who) as mine:
            for _ in range(5):
                with mine.transaction():
                    mine.execute("set transaction read write")
                    mine.execute("select exo.kb_record_use(%s)", ([doc],))
            with (
                pytest.raises(psycopg.errors.ProgramLimitExceeded, match="kb.writes_per_minute"),
                mine.transaction(),
            ):
                mine.execute("set transaction read write")
                mine.execute("select exo.kb_thumbs_up(%s)", (doc,))
        assert item(conn, who, doc)["fetch_count"] == 5
        # a minute later the window opens again (the clock the tests move)
        write(conn, who, "use", [doc], datetime.now(UTC) + timedelta(minutes=1, seconds=1))
    finally:
        conn.execute("select exo_private.set_setting('kb.writes_per_minute', '240')")
    assert item(conn, who, doc)["fetch_count"] == 6


def test_profile_names_are_checked(conn):
    for name in ["", "a b", "x" * 65, "-dash", "quote'", None]:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="profile name must be"):
            conn.execute("select exo_private.kb_add_profile(%s)", (name,))
    who = profile(conn)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="exists already"):
        conn.execute("select exo_private.kb_add_profile(%s)", (who,))


def test_settings_are_the_issue_defaults(conn):
    settings = conn.execute("select exo_private.kb_settings()").fetchone()[0]
    check(settings, {
        "fetch_threshold": 3, "reset_threshold": 3, "similarity_threshold": 0.75, "local_top_k": 3,
        "max_cache_miss_streak": 10, "recency_lambda": 0.05, "frequency_saturation": 20, "pin_score": 0.85,
        "pin_days": 7, "demote_score": 0.15, "demote_days": 3,
    })  # fmt: skip
    assert settings["score_weights"] == {
        "recency": 0.40,
        "frequency": 0.30,
        "explicit": 0.20,
        "hit_rate": 0.15,
    }
    # the weights are divided by their sum (1.05): a perfect document scores exactly 1
    who, [doc] = profile(conn), docs(conn, 1)
    claimed(conn, who, doc, fetches=20)
    write(conn, who, "thumbs_up", [doc])
    write(conn, who, "cache", [doc])
    write(conn, who, "use", [doc], T0 + timedelta(hours=1))
    decay(conn, who, T0 + timedelta(hours=1))
    assert item(conn, who, doc)["score"] == pytest.approx(1.0)


# -- the CLI -------------------------------------------------------------------------------


def test_the_cli_adds_a_user_lists_the_base_and_acts_through_the_reader(kdb, conn, monkeypatch):
    monkeypatch.setenv("EXO_DB_NAME", kdb.name)
    monkeypatch.setenv("EXO_READER_URL", kdb.url("exo_reader"))
    runner = CliRunner()
    who = f"cli-{uuid.uuid4().hex[:6]}"
    added = runner.invoke(main, ["user", "add", who])
    assert added.exit_code == 0, added.output
    url = added.stdout.strip().splitlines()[-1]
    with psycopg.connect(url) as session:  # the URL printed is the user's login role
        assert session.execute("select exo.profile()").fetchone() == (who,)
    refused = runner.invoke(main, ["user", "add", "a b"])
    assert refused.exit_code == 1 and "profile name must be" in refused.output
    [doc] = docs(conn, 1)
    for _ in range(3):
        write(conn, who, "use", [doc], datetime.now(UTC))
    listed = runner.invoke(main, ["kb", "list", "--profile", who])
    assert "has appeared in your questions 3 times; save it?" in listed.output
    assert f"exo kb accept {doc} --profile {who}" in listed.output
    out = runner.invoke(main, ["kb", "accept", str(doc), "--profile", who])
    assert out.exit_code == 0 and "claimed" in out.output, out.output
    out = runner.invoke(main, ["kb", "decline", str(doc), "--profile", who])
    assert out.exit_code == 1 and "claimed cannot take the event 'decline'" in out.output
    for verb, state in [("up", "claimed"), ("pin", "pinned"), ("down", "pinned"), ("remove", "global")]:
        out = runner.invoke(main, ["kb", verb, str(doc), "--profile", who])
        assert f"document {doc}: {state}" in out.output, (verb, out.output)
    decayed = json.loads(runner.invoke(main, ["kb", "decay", "--profile", who, "--json"]).output)
    assert decayed == {"scored": 0, "pinned": 0, "demoted": 0}
    users = json.loads(runner.invoke(main, ["user", "list", "--json"]).output)
    assert {"name": who, "searches": 3, "claimed": 0, "pinned": 0, "suggested": 0} in users


# -- the personal stage and the provenance block in search -----------------------------------

DIMS = 384


def _axis(i: int, tilt: float = 0.0) -> list[float]:
    v = [0.0] * DIMS
    v[i], v[(i + 1) % DIMS] = 1.0, tilt
    return v


@pytest.fixture(scope="module")
def saved(kdb):
    """A profile that claimed a note about kubernetes (its chunk's vector on axis 0); a note about
    bread on axis 1 is only in global search. The embeddings endpoint is down: the caller gives
    the query vector, or the stage falls back to keywords."""
    with kdb.connect() as conn:
        conn.execute(
            "update exo_private.settings set value = value || %s where key = 'models.embeddings'",
            (Jsonb({"url": "http://127.0.0.1:9/v1", "timeout_s": 1}),),
        )
        kube = add_document(conn, "personal", ["kubernetes pods restart when their liveness probe fails"])
        bread = add_document(conn, "personal", ["sourdough bread wants a long cold proof"])
        conn.execute(
            "select exo_private.store_embeddings('all-MiniLM-L6-v2', %s, %s, %s)",
            (DIMS, [kube.chunks[0], bread.chunks[0]], [str(_axis(0)), str(_axis(1))]),
        )
        who = profile(conn)
        claimed(conn, who, kube.id, at=datetime.now(UTC) - timedelta(days=1))
    return who, kube, bread


def _search(kdb, who, query, vector=None, read_write=True):
    """One search in a session of profile `who`'s login role."""
    statement = "select exo.search_json(%s, workspaces => array['personal'], query_embedding => %s)"
    with kdb.connect_profile(who) as session, session.transaction():
        if read_write:
            session.execute("set transaction read write")
        return session.execute(statement, (query, vector)).fetchone()[0]


def test_the_personal_stage_finds_saved_documents_by_similarity_and_records_the_search(kdb, conn, saved):
    who, kube, _ = saved
    found = _search(kdb, who, "what restarts a container", _axis(0, 0.3))
    first = found["results"][0]
    assert (first["chunk_id"], first["stage"]) == (kube.chunks[0], "personal")
    personal = found["report"]["personal"]
    assert personal | {"saved": None} == {
        "profile": who, "saved": None, "mode": "similarity", "checked": [kube.id], "hits": [kube.id],
        "recorded": True,
    }  # fmt: skip
    stages = found["report"]["workspaces"]["personal"]["stages"]
    assert stages[0] | {"ms": None} == {
        "stage": "personal", "ran": True, "found": 1, "admitted": 1, "confident": False, "ms": None
    }  # fmt: skip
    source = found["report"]["provenance"]["sources"][0]
    assert source | {"path": None} == {
        "document_id": kube.id, "title": None, "path": None, "from": "personal", "chunks": [kube.chunks[0]],
        "state": "claimed", "fetch_count": 4, "suggestion": None,
    }  # fmt: skip
    assert "from your base" in found["report"]["provenance"]["text"]
    assert conn.execute(
        "select cache_checks, cache_hits, miss_streak from exo_private.kb_items where document_id = %s",
        (kube.id,),
    ).fetchone() == (1, 1, 0)
    # A question far from it: checked, missed, counted towards the miss streak.
    missed = _search(kdb, who, "sourdough", _axis(1))
    assert missed["report"]["personal"]["hits"] == [] and missed["report"]["personal"]["checked"] == [kube.id]
    assert all(r["stage"] != "personal" for r in missed["results"])
    assert item(conn, who, kube.id)["misses"] == 1


def test_the_personal_stage_keeps_the_best_local_top_k_chunks_of_each_saved_document(kdb, conn, saved):
    who = profile(conn)
    doc = add_document(conn, "personal", [f"part {i} of the runbook" for i in range(4)])
    conn.execute(
        "select exo_private.store_embeddings('all-MiniLM-L6-v2', %s, %s, %s)",
        (DIMS, doc.chunks, [str(_axis(5, tilt)) for tilt in (0.3, 0.0, 0.2, 0.1)]),
    )
    claimed(conn, who, doc.id, at=datetime.now(UTC) - timedelta(days=1))
    found = _search(kdb, who, "the runbook", _axis(5))
    personal = [r["chunk_id"] for r in found["results"] if r["stage"] == "personal"]
    assert sorted(personal) == sorted([doc.chunks[1], doc.chunks[3], doc.chunks[2]])  # kb.local_top_k 3
    assert found["report"]["personal"]["hits"] == [doc.id]


def test_without_a_query_embedding_the_personal_stage_matches_words_and_says_so(kdb, conn, saved):
    who, kube, _ = saved
    checks = "select cache_checks, miss_streak from exo_private.kb_items where document_id = %s"
    before = conn.execute(checks, (kube.id,)).fetchone()
    found = _search(kdb, who, "liveness probe")
    personal = found["report"]["personal"]
    assert personal["mode"].startswith("keyword (no query embedding: ")
    assert personal["hits"] == [kube.id]
    assert [r["stage"] for r in found["results"] if r["chunk_id"] == kube.chunks[0]] == ["personal"]
    # keyword matches are not similarity checks: the miss streak and hit rate are untouched
    assert conn.execute(checks, (kube.id,)).fetchone() == before


def test_a_read_only_search_with_a_profile_searches_but_records_nothing(kdb, conn, saved):
    who, kube, _ = saved
    before = item(conn, who, kube.id)
    found = _search(kdb, who, "kubernetes pods", _axis(0), read_write=False)
    assert found["report"]["personal"]["recorded"] is False
    assert "begin read write" in found["report"]["personal"]["why"]
    assert found["report"]["provenance"]["sources"][0]["document_id"] == kube.id
    assert item(conn, who, kube.id) == before


def test_the_plain_reader_has_no_profile_and_a_profile_is_never_an_argument(kdb, reader, saved):
    found = reader.execute(
        "select exo.search_json('kubernetes pods', workspaces => array['personal'])"
    ).fetchone()[0]
    assert "personal" not in found["report"] and "provenance" not in found["report"]
    assert all(r["stage"] != "personal" for r in found["results"])
    with pytest.raises(psycopg.errors.UndefinedFunction):
        reader.execute("select exo.search_report('kubernetes pods', profile => %s)", (saved[0],))
    with kdb.connect_profile(saved[0]) as session:
        text = session.execute("select exo.context_packet('liveness probe')").fetchone()[0]
    assert "kubernetes pods restart" in text


def test_exo_search_and_context_with_a_profile_record_and_show_provenance(kdb, conn, saved, monkeypatch):
    monkeypatch.setenv("EXO_DB_NAME", kdb.name)
    monkeypatch.setenv("EXO_READER_URL", kdb.url("exo_reader"))
    who, kube, _ = saved
    before = item(conn, who, kube.id)["fetch_count"]
    runner = CliRunner()
    out = runner.invoke(main, ["search", "liveness probe", "--workspace", "personal", "--profile", who])
    assert out.exit_code == 0, out.output
    assert f"Provenance (profile {who}):" in out.output and "from your base" in out.output
    out = runner.invoke(main, ["context", "liveness probe", "--workspace", "personal", "--profile", who])
    assert out.exit_code == 0 and f"Provenance (profile {who}):" in out.output, out.output
    assert item(conn, who, kube.id)["fetch_count"] == before + 2
