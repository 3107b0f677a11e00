"""Chats become chunks: plpy/chat_windows.py as plain Python, then windows of imported
conversations in the database (partition, bands, queues, re-import, deference, rebuild,
reband) and the worker draining them like a document's chunks."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import chat_windows
import psycopg
import pytest
from click.testing import CliRunner
from support.chat import jsonl, run_import, session, write
from support.db import configure
from support.standin import StandIn, chat, embeddings

from exocortex.cli import main
from exocortex.ingest.chat import ChatImportError
from exocortex.worker.loop import Worker

# -- plpy/chat_windows.py -----------------------------------------------------------------


def message(i, sender, body, when=None, zone="UTC"):
    local = when.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M") if when else None
    return {
        "id": i,
        "sender": sender,
        "body": body,
        "epoch": when.timestamp() if when else None,
        "local": local,
    }


def ids(planned):
    return [w["message_ids"] for w in planned["windows"]]


T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def test_a_session_ends_at_a_gap_longer_than_the_setting():
    at = [T0, T0 + timedelta(minutes=30), T0 + timedelta(minutes=61), T0 + timedelta(minutes=62)]
    messages = [message(i, "Ann", f"m{i}", t) for i, t in enumerate(at)]
    assert chat_windows.sessions(messages, 30) == [[0, 1], [2, 3]]  # 30 minutes apart is one session
    assert ids(chat_windows.plan(messages, 30, 1200, 1)) == [[0, 1], [2, 3]]


def test_a_session_ends_at_a_new_day_in_the_time_zone():
    late = datetime(2024, 3, 4, 23, 50, tzinfo=UTC)
    at = [late, late + timedelta(minutes=20)]  # 00:10 the next day in UTC, 18:50/19:10 in New York
    in_utc = [message(i, "Ann", "x", t) for i, t in enumerate(at)]
    in_new_york = [message(i, "Ann", "x", t, "America/New_York") for i, t in enumerate(at)]
    assert chat_windows.sessions(in_utc, 30) == [[0], [1]]
    assert chat_windows.sessions(in_new_york, 30) == [[0, 1]]
    assert chat_windows.plan(in_new_york, 30, 1200, 1)["windows"][0]["body"] == (
        "2024-03-04 18:50 Ann: x\n2024-03-04 19:10 Ann: x"
    )


def test_windows_close_at_the_size_limit_and_overlap_within_a_session_only():
    text = "y" * 30  # each line: "2024-03-04 09:0N Ann: " (22) + 30 = 52 characters
    first = [message(i, "Ann", text, T0 + timedelta(minutes=i)) for i in range(5)]
    second = [message(5 + i, "Ann", text, T0 + timedelta(hours=2, minutes=i)) for i in range(3)]
    planned = chat_windows.plan(first + second, 30, 110, 1)  # two lines (105) fit, three do not
    assert ids(planned) == [[0, 1], [1, 2], [2, 3], [3, 4], [5, 6], [6, 7]]
    assert all(len(w["body"]) <= 110 for w in planned["windows"])
    # no overlap: windows only meet; more overlap than a window holds never repeats it whole
    assert ids(chat_windows.plan(first, 30, 110, 0)) == [[0, 1], [2, 3], [4]]
    assert ids(chat_windows.plan(first, 30, 170, 5)) == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]


def test_a_longer_message_is_a_window_of_its_own_and_is_not_repeated():
    messages = [
        message(0, "Ann", "short", T0),
        message(1, "Bo", "z" * 500, T0 + timedelta(minutes=1)),
        message(2, "Ann", "after", T0 + timedelta(minutes=2)),
        message(3, "Bo", "more", T0 + timedelta(minutes=3)),
    ]
    assert ids(chat_windows.plan(messages, 30, 100, 1)) == [[0], [1], [2, 3]]


def test_undated_messages_follow_in_a_session_of_their_own():
    messages = [message(0, "Ann", "dated", T0), message(1, "Bo", "no time"), message(2, "Ann", "none either")]
    planned = chat_windows.plan(messages, 30, 1200, 1)
    assert ids(planned) == [[0], [1, 2]]
    assert planned["windows"][1]["body"] == "(undated) Bo: no time\n(undated) Ann: none either"


def test_line_breaks_become_indented_continuation_lines_and_offsets_cut_the_transcript():
    messages = [
        message(0, "Ann", "first line, café\nsecond line\r\n\nafter a blank", T0),
        message(1, "Bo", "ok", T0 + timedelta(minutes=1)),
        message(2, "Ann", "later", T0 + timedelta(hours=3)),
    ]
    planned = chat_windows.plan(messages, 30, 1200, 1)
    transcript = "\n".join(chat_windows.message_line(m["local"], m["sender"], m["body"]) for m in messages)
    assert transcript.split("\n")[:4] == [
        "2024-03-04 09:00 Ann: first line, café",
        "  second line",
        "  ",
        "  after a blank",
    ]
    assert planned["transcript_chars"] == len(transcript)
    assert planned["transcript_bytes"] == len(transcript.encode())
    for w in planned["windows"]:
        assert transcript[w["char_start"] : w["char_end"]] == w["body"]
    # every unindented line starts a message
    assert [line for line in transcript.split("\n") if not line.startswith("  ")] == [
        chat_windows.message_line(m["local"], m["sender"], m["body"]).split("\n")[0] for m in messages
    ]


def test_a_window_carries_the_union_of_its_messages_marks():
    a = {"subject": "A", "rule": "cue 'x' with 'A'"}
    assert chat_windows.window_marks(
        [[a], [], [{"subject": "A", "rule": "other"}, {"subject": "B", "rule": "r"}]]
    ) == [
        a,
        {"subject": "B", "rule": "r"},
    ]


# -- the database -------------------------------------------------------------------------

TODAY = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0)
OLD = datetime(2019, 5, 1, 9, 0, tzinfo=UTC)
RECENT = TODAY - timedelta(days=2)


def export_lines(grown: bool = False) -> list[dict]:
    """Two sessions with Iris, an old one and a recent one; grown adds a reply to the recent
    one and a new session today."""
    records = session(
        "iris",
        OLD,
        ("Iris Calder", "I got the job at the library!"),
        ("Me", "Congratulations, when do you start?"),
        ("Iris Calder", "Next Monday."),
        conversation_title="Iris Calder",
    ) + session(
        "iris",
        RECENT,
        ("Me", "Did you pick a name for the kitten?"),
        ("Iris Calder", "We called her Miso."),
    )
    if grown:
        records += session("iris", RECENT + timedelta(minutes=2), ("Me", "Miso is a great name."))
        records += session("iris", TODAY, ("Iris Calder", "Trip planning: we decided on Lisbon."))
    return records


def windows(db):
    """(chunk id, workspace, ordinal, written_at, band, message count, body) per window, in order."""
    with db.connect() as conn:
        return conn.execute(
            "select c.id, c.workspace, c.ordinal, c.written_at, c.band::text, cardinality(w.message_ids), c.body "
            "from exo_private.chat_windows w "
            "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
            "order by c.ordinal"
        ).fetchall()


def queued(db, queue):
    key = "chunk_id" if queue == "embed" else "window_id"
    with db.connect() as conn:
        return sorted(r[0] for r in conn.execute(f"select (message ->> '{key}')::bigint from pgmq.q_{queue}"))


def test_an_import_makes_a_conversation_document_with_banded_windows_in_its_workspace(db, tmp_path):
    path = write(tmp_path, "iris.jsonl", jsonl(*export_lines()))
    result = run_import(db, path, "jsonl", workspace="creative")
    assert result.windows_added == 2

    rows = windows(db)
    old_day, recent_day = OLD.date(), RECENT.date()
    assert [(r[1], r[2], r[3], r[4], r[5]) for r in rows] == [
        ("creative", 0, old_day, "archival", 3),
        ("creative", 1, recent_day, "current", 2),
    ]
    assert rows[0][6] == (
        "2019-05-01 09:00 Iris Calder: I got the job at the library!\n"
        "2019-05-01 09:01 Me: Congratulations, when do you start?\n"
        "2019-05-01 09:02 Iris Calder: Next Monday."
    )
    with db.connect() as conn:
        partitions = conn.execute(
            "select distinct c.tableoid::regclass::text from exo_private.chunks c"
        ).fetchall()
        doc = conn.execute(
            "select d.path, convert_from(d.path_bytes, 'UTF8'), d.extension, d.title, d.size_bytes, d.mtime_ns, "
            "       d.sha256, d.source_id, d.written_at, d.band::text, d.band_source, d.stage::text, d.workspace, "
            "       d.conversation_id = c.id "
            "from exo_private.documents d, exo_private.chat_conversations c"
        ).fetchone()
        windows_of_extraction = conn.execute(
            "select x.id, x.ordinal, x.body = c.body, (x.char_start, x.char_end) = (c.char_start, c.char_end) "
            "from exo_private.extraction_windows x join exo_private.chunks c "
            "  on c.document_id = x.document_id and c.ordinal = x.ordinal order by x.ordinal"
        ).fetchall()
    assert partitions == [("exo_private.chunks_creative",)]
    transcript = rows[0][6] + "\n" + rows[1][6]
    newest = RECENT + timedelta(minutes=1)
    assert doc == (
        "chat/jsonl/iris",
        "chat/jsonl/iris",
        "chat",
        "Iris Calder",
        len(transcript.encode()),
        int(newest.timestamp()) * 10**9,
        None,
        None,
        old_day,
        "current",
        "inferred",
        "chunked",
        "creative",
        True,
    )
    assert [(r[1], r[2], r[3]) for r in windows_of_extraction] == [(0, True, True), (1, True, True)]
    assert queued(db, "embed") == sorted(r[0] for r in rows)
    assert queued(db, "extract") == sorted(r[0] for r in windows_of_extraction)


def test_reimport_adds_nothing_and_a_grown_export_replaces_only_the_windows_it_changed(db, tmp_path):
    path = write(tmp_path, "iris.jsonl", jsonl(*export_lines()))
    run_import(db, path, "jsonl")
    before = windows(db)
    embed, extract = queued(db, "embed"), queued(db, "extract")

    again = run_import(db, path, "jsonl")
    assert (again.messages_added, again.windows_added) == (0, 0)
    assert windows(db) == before
    assert (queued(db, "embed"), queued(db, "extract")) == (embed, extract)

    grown = write(tmp_path, "iris.jsonl", jsonl(*export_lines(grown=True)))
    result = run_import(db, grown, "jsonl")
    after = windows(db)
    assert result.windows_added == 2  # the recent session again (one more message), and today's
    assert after[0] == before[0]  # the old session's window keeps its chunk (and so its vector)
    assert before[1][0] not in [r[0] for r in after]  # the recent one was replaced
    assert [(r[2], r[5], r[1]) for r in after] == [(0, 3, "personal"), (1, 3, "personal"), (2, 1, "personal")]
    assert after[1][6].endswith("Me: Miso is a great name.")
    new_ids = sorted(r[0] for r in after[1:])
    assert queued(db, "embed") == sorted(embed + new_ids)
    assert len(queued(db, "extract")) == len(extract) + 2
    with db.connect() as conn:
        assert conn.execute(
            "select count(*) from exo_private.extraction_windows x "
            "where not exists (select 1 from exo_private.chunks c "
            "                  where c.document_id = x.document_id and c.ordinal = x.ordinal and c.body = x.body)"
        ).fetchone() == (0,)


def test_a_charged_message_charges_its_window_and_the_list_re_marks_windows_in_place(db, tmp_path):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera', array['Grandpa'])")
    records = session(
        "fam",
        OLD,
        ("Ann", "The funeral is on Friday."),
        ("Me", "Grandpa would have hated the fuss."),
        ("Ann", "Anyway."),
    ) + session("fam", OLD + timedelta(hours=5), ("Ann", "Lunch tomorrow?"), ("Me", "Yes please."))
    run_import(db, write(tmp_path, "fam.jsonl", jsonl(*records)), "jsonl")

    def marks():
        with db.connect() as conn:
            return conn.execute(
                "select c.id, c.charged_subjects from exo_private.chunks c order by c.ordinal"
            ).fetchall()

    charged = marks()
    assert [m[1] for m in charged] == [["Walter Rivera"], []]
    with db.connect("exo_writer") as conn:
        assert conn.execute("select exo_private.undefer_subject('Walter Rivera')").fetchone() == (1,)
        assert marks() == [(charged[0][0], []), (charged[1][0], [])]
        assert conn.execute(
            "select exo_private.defer_subject('Walter Rivera', array['Grandpa'])"
        ).fetchone() == (1,)
    assert marks() == charged


def test_rebuild_re_windows_and_reband_moves_each_window_by_its_own_date(db, tmp_path):
    run_import(db, write(tmp_path, "iris.jsonl", jsonl(*export_lines(grown=True))), "jsonl")
    before = windows(db)
    with db.connect("exo_writer") as conn:
        assert conn.execute("select exo_private.rebuild()").fetchone() == (1,)
        assert windows(db) == before  # nothing changed: every window keeps its chunk
        # Three years on (banding.recent_days is 1095): the recent session's window is archival,
        # today's is recent, and the document follows its newest window.
        later = (RECENT + timedelta(days=1096)).date()
        assert conn.execute("select exo_private.reband(%s)", (later,)).fetchone() == (1,)
        bands = conn.execute("select band::text from exo_private.chunks order by ordinal").fetchall()
        document = conn.execute("select band::text, band_reason from exo_private.documents").fetchone()
        assert conn.execute("select exo_private.reband(%s)", (later,)).fetchone() == (0,)
    assert bands == [("archival",), ("archival",), ("recent",)]
    assert document[0] == "recent" and "(the newest window); re-banded" in document[1]

    configure(db, chat__window_max_chars=60)  # shorter windows: rebuild cuts them again
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.rebuild('personal')")
    assert len(windows(db)) > len(before)
    assert all(r[5] == 1 for r in windows(db))


def test_an_unknown_workspace_is_refused_naming_the_known_ones(db, tmp_path, monkeypatch):
    path = write(tmp_path, "iris.jsonl", jsonl(*export_lines()))
    with pytest.raises(
        ChatImportError, match=r"workspace 'diary' does not exist; the workspaces are administrative"
    ):
        run_import(db, path, "jsonl", workspace="diary")

    monkeypatch.setenv("EXO_DATABASE_URL", db.url())
    runner = CliRunner()
    bad = runner.invoke(main, ["import-chat", str(path), "--format", "jsonl", "--workspace", "diary"])
    assert bad.exit_code != 0 and "workspace 'diary' does not exist" in bad.output
    good = runner.invoke(main, ["import-chat", str(path), "--format", "jsonl", "--workspace", "technical"])
    assert good.exit_code == 0, good.output
    assert "windows 2 new" in good.output
    assert {r[1] for r in windows(db)} == {"technical"}
    unchanged = runner.invoke(main, ["import-chat", str(path), "--format", "jsonl"])
    assert "messages 0 new of 5" in unchanged.output and "windows 0 new" in unchanged.output
    assert {r[1] for r in windows(db)} == {"technical"}  # without --workspace it stays
    moved = runner.invoke(main, ["import-chat", str(path), "--format", "jsonl", "--workspace", "creative"])
    assert "messages 0 new of 5" in moved.output and "windows 2 new" in moved.output
    assert {r[1] for r in windows(db)} == {"creative"}

    with db.connect("exo_writer") as conn:
        for call, message in [
            ("window_conversation(999)", "conversation: no chat conversation has id 999"),
            ("window_conversation(c.id, 'diary')", "workspace: 'diary' is not a workspace"),
        ]:
            with pytest.raises(psycopg.errors.InvalidParameterValue) as refused:
                conn.execute(f"select exo_private.{call} from exo_private.chat_conversations c")
            assert refused.value.diag.message_primary == message
        conn.execute(
            "update exo_private.settings set value = '\"Mars/Olympus\"' where key = 'chat.time_zone'"
        )
        with pytest.raises(
            psycopg.errors.InvalidParameterValue, match="chat.time_zone: 'Mars/Olympus' is not"
        ):
            conn.execute("select exo_private.window_conversation(c.id) from exo_private.chat_conversations c")
        conn.execute("update exo_private.settings set value = '\"UTC\"' where key = 'chat.time_zone'")
        # Another workspace moves the conversation's windows there.
        assert conn.execute(
            "select exo_private.window_conversation(c.id, 'personal') from exo_private.chat_conversations c"
        ).fetchone() == (2,)
    assert {r[1] for r in windows(db)} == {"personal"}


def test_the_worker_drains_a_chats_windows_like_a_documents_chunks(db, tmp_path):
    run_import(db, write(tmp_path, "iris.jsonl", jsonl(*export_lines())), "jsonl")
    reply = json.dumps(
        {
            "entities": [{"name": "Iris Calder", "type": "Person"}],
            "relations": [],
        }
    )
    with StandIn(lambda path, req: embeddings(req) if path.endswith("/embeddings") else chat(reply)) as model:
        configure(db, models__embeddings={"url": model.url}, models__chat={"url": model.url})
        embedded = Worker(db.cfg, dbname=db.name, once=True, poll_s=0.05, queues=("embed",)).run()
        with db.connect() as conn:
            stage = conn.execute("select stage::text from exo_private.documents").fetchone()[0]
        extracted = Worker(db.cfg, dbname=db.name, once=True, poll_s=0.05, queues=("extract",)).run()
    assert embedded.done["embed"] == 2 and stage == "embedded"
    assert extracted.done["extract"] == 2
    with db.connect() as conn:
        assert conn.execute("select stage::text from exo_private.documents").fetchone() == ("graphed",)
        assert conn.execute("select count(*) from exo_private.chunk_embeddings").fetchone() == (2,)
        assert conn.execute(
            "select count(*) from exo_private.extraction_windows where extracted_at is null"
        ).fetchone() == (0,)
        mentions = conn.execute(
            "select e.name, count(*) from exo_private.mentions m join exo_private.entities e on e.id = m.entity_id "
            "group by e.name"
        ).fetchall()
    assert mentions == [("Iris Calder", 2)]
