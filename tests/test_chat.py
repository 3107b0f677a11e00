"""The chat-history lane: JSONL, ChatGPT and WhatsApp importers, owner linking, message search."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import psycopg
import pytest
from support import REPO_ROOT
from support.chat import MAIL_T0, fixtures, jsonl, msg, node, run_import, write

from exocortex.ingest.chat import FORMATS, ChatImportError, ChatImportResult, import_chat

TABLES = ("people", "chat_identities", "chat_conversations", "chat_participants", "chat_messages")


def counts(db) -> dict[str, int]:
    with db.connect() as conn:
        return {t: conn.execute(f"select count(*) from exo_private.{t}").fetchone()[0] for t in TABLES}


# --- each format -------------------------------------------------------------------------------


def test_jsonl_import(db, tmp_path):
    result = run_import(db, fixtures(tmp_path)["jsonl"], "jsonl")

    assert result == ChatImportResult(
        conversations_added=2, messages_added=3, messages_seen=3, identities_added=3, windows_added=2
    )
    with db.connect() as conn:
        conversations = conn.execute(
            "select source, external_id, title, started_at, imported_from "
            "from exo_private.chat_conversations order by id"
        ).fetchall()
        messages = conn.execute(
            "select c.external_id, i.handle, m.external_id, m.dedupe_key like 'sha256:%', m.sent_at, m.body "
            "from exo_private.chat_messages m join exo_private.chat_conversations c on c.id = m.conversation_id "
            "join exo_private.chat_identities i on i.id = m.identity_id order by m.id"
        ).fetchall()
        participants = conn.execute(
            "select c.source, c.external_id, i.handle from exo_private.chat_participants p "
            "join exo_private.chat_conversations c on c.id = p.conversation_id "
            "join exo_private.chat_identities i on i.id = p.identity_id order by 1, 2, 3"
        ).fetchall()
    t = datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert conversations == [
        ("jsonl", "c1", "Planning", t, "chats.jsonl"),
        ("jsonl:signal", "c2", None, t, "chats.jsonl"),
    ]
    assert messages == [
        ("c1", "Sam Rivera", None, True, t, "First message"),  # no timezone: UTC
        ("c1", "Ann", "m-2", False, t, "A reply"),
        ("c2", "Ann", None, True, t, "Elsewhere"),
    ]
    assert participants == [
        ("jsonl", "c1", "Ann"),
        ("jsonl", "c1", "Sam Rivera"),
        ("jsonl:signal", "c2", "Ann"),
    ]


def test_chatgpt_import(db, tmp_path):
    result = run_import(db, fixtures(tmp_path)["chatgpt"], "chatgpt")

    assert result == ChatImportResult(
        conversations_added=2, messages_added=6, messages_seen=6, identities_added=2, windows_added=3
    )
    with db.connect() as conn:
        conversations = conn.execute(
            "select external_id, title, started_at, imported_from from exo_private.chat_conversations order by id"
        ).fetchall()
        messages = conn.execute(
            "select c.external_id, i.handle, m.external_id, m.dedupe_key, m.sent_at, m.body "
            "from exo_private.chat_messages m join exo_private.chat_conversations c on c.id = m.conversation_id "
            "join exo_private.chat_identities i on i.id = m.identity_id order by m.id"
        ).fetchall()
        identities = conn.execute(
            "select source, handle, display_name, person_id is not null from exo_private.chat_identities "
            "order by handle"
        ).fetchall()
        participants = conn.execute("select count(*) from exo_private.chat_participants").fetchone()[0]
    assert conversations == [
        ("conv-1", "Home Postgres", datetime.fromtimestamp(1_699_999_999, UTC), "conversations.json"),
        ("conv-2", "Story", datetime.fromtimestamp(1_700_099_999, UTC), "conversations.json"),
    ]
    # Ordered by create_time; system, tool, empty and hidden messages are left out; every branch stays.
    assert [(c, h, e, b) for c, h, e, _k, _t, b in messages] == [
        ("conv-1", "user", "u1", "How do I run Postgres at home?"),
        ("conv-1", "assistant", "a1", "Install it and \nrun initdb."),
        ("conv-1", "assistant", "a1b", "A regenerated answer."),
        ("conv-1", "user", "u2", "What about backups?"),
        ("conv-2", "user", "q", "A story about a lighthouse keeper"),
        ("conv-2", "assistant", "ans", "Once upon a time..."),
    ]
    assert [k for *_x, k, _t, _b in messages] == [f"id:{e}" for _c, _h, e, *_y in messages]
    assert messages[0][4] == datetime.fromtimestamp(1_700_000_000.5, UTC)
    assert messages[-1][4] is None  # no create_time
    assert identities == [("chatgpt", "assistant", "ChatGPT", False), ("chatgpt", "user", None, True)]
    assert participants == 4


def test_whatsapp_import(db, tmp_path):
    result = run_import(db, fixtures(tmp_path)["whatsapp"], "whatsapp", owner_names=["sam rivera"])

    assert result == ChatImportResult(
        conversations_added=1, messages_added=3, messages_seen=3, identities_added=2, windows_added=2
    )
    with db.connect() as conn:
        conversation = conn.execute(
            "select source, external_id, title, started_at, imported_from from exo_private.chat_conversations"
        ).fetchone()
        messages = conn.execute(
            "select i.handle, m.external_id, m.sent_at, m.body from exo_private.chat_messages m "
            "join exo_private.chat_identities i on i.id = m.identity_id order by m.id"
        ).fetchall()
        owners = conn.execute(
            "select handle from exo_private.chat_identities where person_id is not null"
        ).fetchall()
        participants = conn.execute("select count(*) from exo_private.chat_participants").fetchone()[0]
    assert conversation == (
        "whatsapp",
        "WhatsApp Chat with Jane Doe",
        "Jane Doe",
        datetime(2024, 3, 12, 9, 15, tzinfo=UTC),
        "WhatsApp Chat with Jane Doe.txt",
    )
    assert messages == [
        ("Jane Doe", None, datetime(2024, 3, 12, 9, 15, tzinfo=UTC), "Morning! Did the migration run?"),
        (
            "Sam Rivera",
            None,
            datetime(2024, 3, 12, 9, 17, tzinfo=UTC),
            "Yes, it finished overnight.\nThe logs are clean:\nno errors, no warnings.\n\nSee you at standup.",
        ),
        ("Jane Doe", None, datetime(2024, 3, 13, 18, 2, tzinfo=UTC), "<Media omitted>"),
    ]
    assert owners == [("Sam Rivera",)]
    assert participants == 2


def test_mbox_import_makes_each_thread_a_conversation_of_its_senders_own_words(db, tmp_path):
    result = run_import(db, fixtures(tmp_path)["mbox"], "mbox", ["sam@home.example"])

    assert (result.conversations_added, result.messages_added, result.identities_added) == (2, 4, 3)
    with db.connect() as conn:
        rows = conn.execute(
            "select c.external_id, c.title, i.handle, i.display_name, i.person_id is not null "
            "  and i.person_id = (select id from exo_private.people where is_owner), m.external_id, m.sent_at, m.body "
            "from exo_private.chat_messages m join exo_private.chat_conversations c on c.id = m.conversation_id "
            "join exo_private.chat_identities i on i.id = m.identity_id order by m.sent_at"
        ).fetchall()
    thread = ("a1@example.org", "Allotment")
    assert [row[:2] for row in rows] == [thread, thread, thread, ("d4@example.org", "Invoice 42")]
    assert [(r[2], r[3], r[4], r[5]) for r in rows] == [
        ("ann@example.org", "Ann Lee", False, "a1@example.org"),
        ("sam@home.example", "Sam Rivera", True, "b2@home.example"),  # the owner, by address
        ("ann@example.org", "Ann Lee", False, "c3@example.org"),  # In-Reply-To followed to the root
        ("bo@example.org", "Bo Lund", False, "d4@example.org"),
    ]
    assert rows[0][6] == MAIL_T0
    # a reply keeps its own words: the quoted mail and its "On ... wrote:" line are the other's
    assert [r[7] for r in rows][:3] == [
        "Shall we plant the beans on Saturday?",
        "Yes, Saturday at ten.",
        "I will bring the canes.",
    ]


def test_unknown_format_is_refused(db, tmp_path):
    with db.connect("exo_writer") as conn, pytest.raises(ValueError, match="unknown chat format 'csv'"):
        import_chat(conn, fixtures(tmp_path)["jsonl"], "csv")


# --- re-imports --------------------------------------------------------------------------------


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_reimporting_adds_nothing(db, tmp_path, fmt, autocommit):
    path = fixtures(tmp_path)[fmt]
    first = run_import(db, path, fmt, ["Sam Rivera"], autocommit)
    after_first = counts(db)
    second = run_import(db, path, fmt, ["Sam Rivera"], autocommit)

    assert first.messages_added == first.messages_seen > 0
    assert second == ChatImportResult(
        conversations_added=0,
        messages_added=0,
        messages_seen=first.messages_seen,
        identities_added=0,
        windows_added=0,
    )
    assert counts(db) == after_first
    assert after_first["chat_messages"] == first.messages_seen


def test_a_grown_export_adds_only_the_new_messages_and_repeated_lines_are_kept(db, tmp_path):
    lines = [
        "01/02/2024, 10:00 - Ann: ok",
        "01/02/2024, 10:00 - Ann: ok",  # the same words in the same minute: a second message
        "01/02/2024, 10:01 - Bo: fine",
    ]
    path = write(tmp_path, "WhatsApp Chat with Ann.txt", "\n".join(lines) + "\n")
    assert run_import(db, path, "whatsapp").messages_added == 3

    path.write_text("\n".join([*lines, "02/02/2024, 08:00 - Ann: ok"]) + "\n")
    result = run_import(db, path, "whatsapp")
    assert (result.messages_added, result.messages_seen) == (1, 4)
    assert counts(db)["chat_messages"] == 4


def test_a_repeated_message_id_with_other_content_is_refused(db, tmp_path):
    same = msg(message_id="m1")
    path = write(tmp_path, "dup.jsonl", jsonl(same, same))
    assert run_import(db, path, "jsonl").messages_added == 1
    path = write(tmp_path, "clash.jsonl", jsonl(same, msg(message_id="m1", text="other words")))
    with pytest.raises(ChatImportError, match=r"clash.jsonl: line 2: message id 'm1' appears twice"):
        run_import(db, path, "jsonl")


# --- the owner ---------------------------------------------------------------------------------


def test_owner_identities_from_every_source_link_to_one_person(db, tmp_path):
    files = fixtures(tmp_path)
    for fmt in FORMATS:
        run_import(db, files[fmt], fmt, owner_names=["SAM RIVERA"])

    with db.connect() as conn:
        people = conn.execute("select id, display_name, is_owner from exo_private.people").fetchall()
        linked = conn.execute(
            "select source, handle, person_id from exo_private.chat_identities "
            "where person_id is not null order by source, handle"
        ).fetchall()
        unlinked = conn.execute(
            "select source, handle from exo_private.chat_identities where person_id is null order by 1, 2"
        ).fetchall()
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into exo_private.people (display_name, is_owner) values ('Twin', true)")
    [(owner_id, name, is_owner)] = people
    assert (name, is_owner) == ("Me", True)
    assert [(s, h) for s, h, _p in linked] == [
        ("chatgpt", "user"),
        ("jsonl", "Sam Rivera"),
        ("mbox", "sam@home.example"),  # by the name the address came with
        ("whatsapp", "Sam Rivera"),
    ]
    assert {p for _s, _h, p in linked} == {owner_id}
    assert unlinked == [
        ("chatgpt", "assistant"),
        ("jsonl", "Ann"),
        ("jsonl:signal", "Ann"),
        ("mbox", "ann@example.org"),
        ("mbox", "bo@example.org"),
        ("whatsapp", "Jane Doe"),
    ]


def test_link_owner_identity(db, tmp_path):
    run_import(db, fixtures(tmp_path)["whatsapp"], "whatsapp")
    with db.connect("exo_writer") as conn:
        identity = conn.execute("select exo_private.link_owner_identity('whatsapp', 'Jane Doe')").fetchone()[
            0
        ]
        person = conn.execute(
            "select p.is_owner from exo_private.chat_identities i join exo_private.people p on p.id = i.person_id "
            "where i.id = %s",
            (identity,),
        ).fetchone()
        with pytest.raises(psycopg.errors.RaiseException, match="chat identity Nobody of source whatsapp"):
            conn.execute("select exo_private.link_owner_identity('whatsapp', 'Nobody')")
    assert person == (True,)


def test_a_failure_while_writing_leaves_nothing_behind(db, tmp_path):
    with db.connect() as conn:
        conn.execute("delete from exo_private.people")
    before = counts(db)
    path = fixtures(tmp_path)["jsonl"]  # has an is_owner sender, and there is no owner now
    with pytest.raises(ChatImportError, match="chats.jsonl: there is no owner person"):
        run_import(db, path, "jsonl")
    assert counts(db) == before


# --- search ------------------------------------------------------------------------------------


def search(db, query, max_results=None, role="exo_reader") -> list[tuple]:
    """exo.search_messages with the archive open: these tests are about words, not bands
    (tests/test_search_messages.py tests those)."""
    with db.connect(role) as conn:
        if max_results is None:
            return conn.execute(
                "select * from exo.search_messages(%s, open_archive => true)", (query,)
            ).fetchall()
        return conn.execute(
            "select * from exo.search_messages(%s, %s, open_archive => true)", (query, max_results)
        ).fetchall()


def test_search_finds_messages_by_words_with_stemming(db, tmp_path):
    run_import(db, fixtures(tmp_path)["chatgpt"], "chatgpt")
    run_import(db, fixtures(tmp_path)["whatsapp"], "whatsapp", owner_names=["Sam Rivera"])

    rows = search(db, "running")  # "run" in two ChatGPT messages and in WhatsApp
    assert {r[7] for r in rows} == {
        "How do I run Postgres at home?",
        "Install it and \nrun initdb.",
        "Morning! Did the migration run?",
    }
    by_body = {r[7]: r for r in rows}
    _id, _c, title, source, sender, is_owner, sent_at, _body, rank, _band, withheld = by_body[
        "How do I run Postgres at home?"
    ]
    assert withheld is None
    assert (title, source, sender, is_owner) == ("Home Postgres", "chatgpt", "Me", True)
    assert sent_at == datetime.fromtimestamp(1_700_000_000.5, UTC)
    assert rank > 0
    assert by_body["Morning! Did the migration run?"][2:6] == ("Jane Doe", "whatsapp", "Jane Doe", False)

    assert [r[7] for r in search(db, "finished overnight")] == [
        "Yes, it finished overnight.\nThe logs are clean:\nno errors, no warnings.\n\nSee you at standup."
    ]
    assert {r[4] for r in search(db, "lighthouse or regenerated")} == {"Me", "ChatGPT"}  # any word
    assert search(db, "kangaroo") == []


def test_search_orders_by_rank_then_newest_and_refuses_max_results_out_of_range(db, tmp_path):
    records = [
        msg(text=f"backup note {i}", sent_at=f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z") for i in range(230)
    ]
    records.append(msg(text="backup backup backup plan", sent_at="2020-01-01T00:00:00Z"))
    run_import(db, write(tmp_path, "many.jsonl", jsonl(*records)), "jsonl")

    rows = search(db, "backup")
    assert len(rows) == 20  # the default
    assert rows[0][7] == "backup backup backup plan"  # best rank first, though oldest
    assert [r[7] for r in rows[1:4]] == ["backup note 229", "backup note 228", "backup note 227"]
    assert len(search(db, "backup", 5)) == 5
    assert len(search(db, "backup", 200)) == 200
    for wrong in (0, -7, 201, 100_000):
        with pytest.raises(
            psycopg.errors.InvalidParameterValue, match="max_results must be between 1 and 200"
        ):
            search(db, "backup", wrong)


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_returns_nothing(db, tmp_path, query):
    run_import(db, fixtures(tmp_path)["jsonl"], "jsonl")
    assert search(db, query) == []
    assert search(db, "message") != []


HOSTILE = [
    "'",
    '"',
    '"unterminated phrase',
    "& | ! ( ) <-> :*",
    "!!!&&&|||",
    "$$",
    "$$; drop table exo_private.chat_messages; --",
    "'); delete from exo_private.chat_messages; --",
    "\\",
    "-",
    "or",
    "the and of",  # stop words only
    "message" * 10_000,  # one overlong word
    "message " * 20_000,  # a very long query
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_do_not_error(db, tmp_path, query):
    run_import(db, fixtures(tmp_path)["jsonl"], "jsonl")
    before = counts(db)
    rows = search(db, query)
    assert len(rows) <= 20
    assert counts(db) == before


def test_reader_may_search_but_not_touch_the_chat_tables(db, tmp_path):
    run_import(db, fixtures(tmp_path)["jsonl"], "jsonl")
    assert [r[7] for r in search(db, "elsewhere", role="exo_reader")] == ["Elsewhere"]
    attempts = [
        "select * from exo_private.chat_messages",
        "select * from exo_private.people",
        "insert into exo_private.chat_messages (conversation_id, identity_id, dedupe_key, body) "
        "select conversation_id, identity_id, 'x', 'planted' from exo_private.chat_messages limit 1",
        "insert into exo_private.people (display_name) values ('Intruder')",
        "update exo_private.chat_identities set person_id = null",
        "select exo_private.link_owner_identity('jsonl', 'Ann')",
    ]
    for statement in attempts:
        with db.connect("exo_reader", autocommit=False) as conn:
            conn.execute("set transaction read write")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)


# --- deference ---------------------------------------------------------------------------------

WALTER = "Walter Rivera"
HOW = "ask with bridge => array['Walter Rivera']"


def grief_export() -> str:
    """A conversation that turns to Grandpa in the hospice, one about his funeral (every message
    charged: the title is near them all), one whose title only shares a word, and Grandpa's
    own identity saying something neutral."""
    sunday = [
        ("Sam Rivera", "Are you coming on Sunday?"),
        ("Alex Rivera", "Grandpa is back in the hospice, I'll go there first."),  # name and cue
        ("Sam Rivera", "I'm sorry. Give him my love."),  # the reply to it
        ("Alex Rivera", "Will do. Shall I bring the lemon cake?"),
        ("Sam Rivera", "Yes please, the lemon one."),
    ]
    funeral = [
        ("Alex Rivera", "The service starts at ten."),
        ("Sam Rivera", "Grandpa Walter would have liked the hymns."),
    ]
    records = [
        msg("sunday", sender, text, f"2017-03-05T10:0{i}:00Z", conversation_title="Sunday plans")
        for i, (sender, text) in enumerate(sunday)
    ]
    records += [
        msg("goodbye", sender, text, f"2017-03-28T09:0{i}:00Z", conversation_title="The funeral")
        for i, (sender, text) in enumerate(funeral)
    ]
    records.append(
        msg("invoice", "Ann", "The invoice came.", conversation_title="The funeral director's invoice")
    )
    records.append(
        msg("radio", "Grandpa Walter", "The radio works again, see you on Sunday.", "2016-05-01T12:00:00Z")
    )
    return jsonl(*records)


def defer_walter(db) -> int:
    with db.connect("exo_writer") as conn:
        return conn.execute(
            "select exo_private.defer_subject('Walter Rivera', array['Grandpa Walter', 'Grandpa'])"
        ).fetchone()[0]


def marks(db) -> dict[str, tuple[int, list[str]]]:
    """{body: (message id, charged subjects)}."""
    with db.connect() as conn:
        rows = conn.execute(
            "select body, id, charged_subjects, charged from exo_private.chat_messages"
        ).fetchall()
    assert all(charged is not None for *_, charged in rows)  # every message is marked
    return {body: (i, subjects) for body, i, subjects, _charged in rows}


def test_messages_are_marked_on_import_and_remarked_in_place(db, tmp_path):
    defer_walter(db)
    run_import(db, write(tmp_path, "grief.jsonl", grief_export()), "jsonl")
    before = marks(db)
    charged = {body for body, (_i, subjects) in before.items() if subjects}
    assert charged == {
        "Are you coming on Sunday?",  # before the message that names him with a cue
        "Grandpa is back in the hospice, I'll go there first.",
        "I'm sorry. Give him my love.",
        "The service starts at ten.",  # the title says funeral, the reply names him
        "Grandpa Walter would have liked the hymns.",
    }
    assert all(subjects in ([], [WALTER]) for _i, subjects in before.values())
    with db.connect() as conn:
        (rule,) = conn.execute(
            "select charged from exo_private.chat_messages where body like 'Grandpa is back%'"
        ).fetchone()
    assert rule == [{"subject": WALTER, "rule": "cue 'hospice' with 'Grandpa'"}]

    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.undefer_subject('Walter Rivera')")
    after = marks(db)
    assert all(subjects == [] for _i, subjects in after.values())
    assert {b: i for b, (i, _s) in after.items()} == {b: i for b, (i, _s) in before.items()}  # in place

    defer_walter(db)
    assert marks(db) == before
    with db.connect() as conn:
        view = conn.execute(
            "select charged_messages from exo.deferred_subjects where subject = 'Walter Rivera'"
        ).fetchone()
    assert view == (5,)


def test_messages_imported_before_marks_existed_are_marked_once(db, tmp_path):
    defer_walter(db)
    run_import(db, write(tmp_path, "grief.jsonl", grief_export()), "jsonl")
    expected = marks(db)
    with db.connect() as conn:  # as migration 0009 leaves the messages it found
        conn.execute("update exo_private.chat_messages set charged = null, charged_subjects = '{}'")
        # what sql/200_chat.sql runs on every migrate: only unmarked conversations are visited
        assert conn.execute("select exo_private.mark_messages()").fetchone() == (9,)  # every message
        assert conn.execute("select exo_private.mark_messages()").fetchone() == (0,)
    assert marks(db) == expected


def reader_rows(db, statement: str, *args) -> list[dict]:
    with db.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
        conn.row_factory = psycopg.rows.dict_row
        return conn.execute(statement, args).fetchall()


def shown(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["withheld"] is None]


def hints(rows: list[dict]) -> list[dict]:
    held = [r for r in rows if r["withheld"] is not None]
    assert all(
        set(v for k, v in r.items() if k != "withheld") == {None} for r in held
    )  # hint rows say nothing else
    assert rows[len(rows) - len(held) :] == held  # and come last
    return [r["withheld"] for r in held]


def test_search_messages_withholds_charged_messages_with_a_hint(db, tmp_path):
    """The hint counts every charged message, the same whatever the question: one that counted the
    question's withheld matches would tell which words withheld messages hold."""
    defer_walter(db)
    run_import(db, write(tmp_path, "grief.jsonl", grief_export()), "jsonl")
    with db.connect() as conn:
        (charged,) = conn.execute(
            "select count(*) from exo_private.chat_messages where charged_subjects <> '{}'"
        ).fetchone()
    assert charged > 1
    hint = {"subject": WALTER, "messages": charged, "how": HOW}
    rows = reader_rows(db, "select * from exo.search_messages('hospice')")
    assert shown(rows) == []
    assert hints(rows) == [hint]

    rows = reader_rows(db, "select * from exo.search_messages('sunday')")
    assert [r["body"] for r in shown(rows)] == ["The radio works again, see you on Sunday."]
    assert hints(rows) == [hint]

    for words in ("funeral OR hymns OR service", "lemon cake", "zzzz"):
        rows = reader_rows(db, "select * from exo.search_messages(%s)", words)
        assert hints(rows) == [hint], words
    assert hints(reader_rows(db, "select * from exo.search_messages('hospice', as_of => '2001-01-01')")) == []

    for bridge in (["Walter Rivera"], ["grandpa"]):
        opened = reader_rows(db, "select * from exo.search_messages('hospice', bridge => %s)", bridge)
        assert [r["body"] for r in opened] == ["Grandpa is back in the hospice, I'll go there first."]
        assert opened[0]["conversation_title"] == "Sunday plans" and opened[0]["withheld"] is None


def test_conversation_withholds_charged_messages_with_a_hint(db, tmp_path):
    defer_walter(db)
    run_import(db, write(tmp_path, "grief.jsonl", grief_export()), "jsonl")
    rows = reader_rows(db, "select * from exo.conversation('Sunday plans')")
    assert [r["body"] for r in shown(rows)] == [
        "Will do. Shall I bring the lemon cake?",
        "Yes please, the lemon one.",
    ]
    (hint,) = hints(rows)
    assert hint == {"subject": WALTER, "conversation": rows[0]["conversation_id"], "messages": 3, "how": HOW}
    assert "hospice" not in str(rows).lower()
    opened = reader_rows(
        db, "select * from exo.conversation('Sunday plans', bridge => array['Grandpa Walter'])"
    )
    assert len(opened) == 5 and hints(opened) == []

    # every message of the funeral conversation is charged: nothing but the hint, no title
    goodbye = reader_rows(db, "select * from exo.conversation('The funeral')")
    assert shown(goodbye) == [] and [h["messages"] for h in hints(goodbye)] == [2]
    # several titles match: the withheld one is listed without its title
    with pytest.raises(psycopg.errors.InvalidParameterValue) as refused:
        reader_rows(db, "select * from exo.conversation('funeral')")
    message = refused.value.diag.message_primary
    assert "'The funeral director''s invoice' (jsonl)" in message and "(withheld) (jsonl)" in message
    assert "'The funeral' " not in message


def test_person_history_neither_counts_nor_dates_withheld_messages(db, tmp_path):
    defer_walter(db)
    run_import(db, write(tmp_path, "grief.jsonl", grief_export()), "jsonl")
    rows = reader_rows(db, "select * from exo.person_history('Alex')")
    (alex,) = shown(rows)
    # three messages, two charged; the 28 March one is charged, so the last seen is 5 March
    assert (alex["messages"], alex["conversations"]) == (1, 1)
    assert str(alex["last_seen"]).startswith("2017-03-05") and str(alex["first_seen"]).startswith(
        "2017-03-05"
    )
    assert hints(rows) == [{"subject": WALTER, "messages": 2, "how": HOW}]
    opened = reader_rows(db, "select * from exo.person_history('Alex', bridge => array['Walter Rivera'])")
    assert [(r["messages"], r["conversations"]) for r in opened] == [(3, 2)]

    # an identity named like the deferred subject is the subject: left out, with a hint
    grandpa = reader_rows(db, "select * from exo.person_history('grandpa')")
    assert shown(grandpa) == [] and hints(grandpa) == [{"subject": WALTER, "messages": 1, "how": HOW}]
    opened = reader_rows(db, "select * from exo.person_history('grandpa', bridge => array['Grandpa'])")
    assert [(r["handle"], r["messages"]) for r in opened] == [("Grandpa Walter", 1)]


# --- malformed input ---------------------------------------------------------------------------

MALFORMED = [
    ("jsonl", "bad.jsonl", jsonl(msg(), "{not json"), r"bad.jsonl: line 2: not valid JSON"),
    ("jsonl", "bad.jsonl", jsonl(msg(), "[1, 2]"), r"bad.jsonl: line 2: expected a JSON object"),
    (
        "jsonl",
        "bad.jsonl",
        jsonl(msg(), "", {"conversation_id": "c", "sender": "Ann", "sent_at": "2024-01-01"}),
        r'bad.jsonl: line 3: missing required field "text"',
    ),
    ("jsonl", "bad.jsonl", jsonl(msg(sender=7)), r'bad.jsonl: line 1: "sender" must be a string'),
    ("jsonl", "bad.jsonl", jsonl(msg(sent_at="yesterday")), r'line 1: "sent_at" is not an ISO 8601 time'),
    ("jsonl", "bad.jsonl", jsonl(msg(is_owner="yes")), r'line 1: "is_owner" must be true or false'),
    ("jsonl", "bad.jsonl", jsonl(msg(source="a b")), r'line 1: "source" must be a short name'),
    ("jsonl", "bad.jsonl", "\n\n", r"bad.jsonl: no messages found"),
    ("chatgpt", "conversations.json", '{"id": "x"}', r"conversations.json: expected a JSON array"),
    ("chatgpt", "conversations.json", "[{]", r"conversations.json: not valid JSON"),
    (
        "chatgpt",
        "conversations.json",
        json.dumps([{"id": "x", "mapping": {}}, {"title": "no id", "mapping": {}}]),
        r'conversations.json: conversation 1: missing "id"',
    ),
    (
        "chatgpt",
        "conversations.json",
        json.dumps([{"id": "x", "title": "t"}]),
        r'conversation 0 \(x\): missing "mapping"',
    ),
    (
        "chatgpt",
        "conversations.json",
        json.dumps([{"id": "x", "mapping": {"n": node("n", "user", ["hi"], "noon", None)}}]),
        r"conversation 0 \(x\), node n: create_time must be a number",
    ),
    ("chatgpt", "conversations.json", "[]", r"conversations.json: no user or assistant messages"),
    (
        "whatsapp",
        "WhatsApp Chat with X.txt",
        "hello there\nnothing like a chat\n",
        r"WhatsApp Chat with X.txt: line 1: not a WhatsApp message line",
    ),
    ("whatsapp", "WhatsApp Chat with X.txt", "", r"WhatsApp Chat with X.txt: no WhatsApp message lines"),
    (
        "whatsapp",
        "WhatsApp Chat with X.txt",
        "01/02/2024, 10:00 - Messages and calls are end-to-end encrypted.\n",
        r"no WhatsApp messages found, only system lines",
    ),
    (
        "whatsapp",
        "WhatsApp Chat with X.txt",
        "31/02/2024, 10:00 - Ann: hi\n",
        r"line 1: '31/02/2024, 10:00' is not a valid time",
    ),
    (
        "whatsapp",
        "WhatsApp Chat with X.txt",
        "13/01/2024, 10:00 - Ann: hi\n01/13/2024, 10:00 - Ann: hi\n",
        r"line 1 has a day-first date and line 2 a month-first date",
    ),
    ("whatsapp", "WhatsApp Chat with X.txt", "1/2/24, 13:00 PM - Ann: hi\n", r"line 1: hour 13 with PM"),
    ("mbox", "mail.mbox", "Subject: hi\n\nnot an archive\n", r"mail.mbox: not an mbox file"),
    (
        "mbox",
        "mail.mbox",
        "From MAILER-DAEMON Thu Jan  1 00:00:00 1970\nFrom: a@example.org\nSubject: x\n\n\n",
        r"no messages with text",
    ),
    (
        "mbox",
        "mail.mbox",
        "From x@y Thu Jan  1 00:00:00 1970\nSubject: x\nDate: Mon, 4 Mar 2024 09:15:00 +0000\n\nhello\n",
        r"mail.mbox: message 1: no sender",
    ),
]


@pytest.mark.parametrize(("fmt", "name", "content", "match"), MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_input_is_refused_and_changes_nothing(db, tmp_path, fmt, name, content, match):
    files = fixtures(tmp_path)
    run_import(db, files[fmt], fmt)  # something stored already, which must survive intact
    before = counts(db)
    bad = tmp_path / "bad"
    bad.mkdir()
    with pytest.raises(ChatImportError, match=match):
        run_import(db, write(bad, name, content), fmt)
    assert counts(db) == before


def test_a_file_that_cannot_be_read_is_a_chat_import_error(db, tmp_path):
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(json.dumps(msg(text="café")).encode().replace(b"\\u00e9", b"\xe9"))
    with pytest.raises(ChatImportError, match=r"latin1.jsonl: not UTF-8 text"):
        run_import(db, latin1, "jsonl")
    with pytest.raises(ChatImportError, match=r"missing.jsonl: cannot read"):
        run_import(db, tmp_path / "missing.jsonl", "jsonl")


# --- WhatsApp variants -------------------------------------------------------------------------

NNBSP = "\u202f"

WHATSAPP_VARIANTS = [
    # (lines, expected time of the first message)
    (["[31/12/2021, 21:41:05] Jane Doe: hi"], datetime(2021, 12, 31, 21, 41, 5)),  # iOS
    (["31/12/2021, 21:41 - Jane Doe: hi"], datetime(2021, 12, 31, 21, 41)),  # Android
    (["31/12/21, 21:41 - Jane Doe: hi"], datetime(2021, 12, 31, 21, 41)),  # 2-digit year
    (["\u200e[31/12/2021, 21:41:05] Jane Doe: \u200eimage omitted"], datetime(2021, 12, 31, 21, 41, 5)),
    (["12/31/21, 9:41 PM - Jane Doe: hi"], datetime(2021, 12, 31, 21, 41)),  # US, 12-hour
    ([f"12/31/21, 9:41{NNBSP}PM - Jane Doe: hi"], datetime(2021, 12, 31, 21, 41)),  # U+202F
    ([f"[12/31/21, 9:41:05{NNBSP}AM] Jane Doe: hi"], datetime(2021, 12, 31, 9, 41, 5)),  # iOS US
    ([f"[1/2/22, 12:05:00{NNBSP}AM] Jane Doe: hi"], datetime(2022, 2, 1, 0, 5)),  # 12 AM is midnight
    (["1/2/22, 12:05 pm - Jane Doe: hi"], datetime(2022, 2, 1, 12, 5)),  # 12 PM is noon
    # Ambiguous dates are day-first; one later date with a second field > 12 makes the file month-first.
    (["01/02/2022, 10:00 - Jane Doe: hi", "03/04/2022, 10:00 - Jane Doe: later"], datetime(2022, 2, 1, 10)),
    (["01/02/2022, 10:00 - Jane Doe: hi", "01/13/2022, 10:00 - Jane Doe: later"], datetime(2022, 1, 2, 10)),
    (["01/02/2022, 10:00 - Jane Doe: hi", "13/01/2022, 10:00 - Jane Doe: later"], datetime(2022, 2, 1, 10)),
]


@pytest.mark.parametrize(("lines", "expected"), WHATSAPP_VARIANTS, ids=range(len(WHATSAPP_VARIANTS)))
def test_whatsapp_variants_parse_to_the_right_times(db, tmp_path, lines, expected):
    path = write(tmp_path, "WhatsApp Chat with Jane Doe.txt", "\n".join(lines) + "\n")
    result = run_import(db, path, "whatsapp")
    assert result.messages_added == len(lines)
    with db.connect() as conn:
        first = conn.execute(
            "select m.sent_at, i.handle, m.body from exo_private.chat_messages m "
            "join exo_private.chat_identities i on i.id = m.identity_id order by m.id limit 1"
        ).fetchone()
    assert first[0] == expected.replace(tzinfo=UTC)
    assert first[1] == "Jane Doe"
    assert first[2] in {"hi", "image omitted"}


def test_whatsapp_multiline_messages_are_kept_whole(db, tmp_path):
    text = (
        "\ufeff[05/06/2024, 08:00:00] Ann: first line\r\n"
        "Note: this line has a colon\r\n"
        "\r\n"
        "12 June, 10:00 - not a timestamp either\r\n"
        "[05/06/2024, 08:01:30] Bo: short\r\n"
        "[05/06/2024, 08:02:00] Ann: \u2028odd separator kept\r\n"
    )
    path = write(tmp_path, "WhatsApp Chat - Ann.txt", text)
    run_import(db, path, "whatsapp")
    with db.connect() as conn:
        title = conn.execute("select title from exo_private.chat_conversations").fetchone()[0]
        bodies = [r[0] for r in conn.execute("select body from exo_private.chat_messages order by id")]
    assert title == "Ann"
    assert bodies == [
        "first line\nNote: this line has a colon\n\n12 June, 10:00 - not a timestamp either",
        "short",
        "\u2028odd separator kept",
    ]


# --- scale and the demo corpus -----------------------------------------------------------------


def test_ten_thousand_messages_import_once(db, tmp_path):
    # Speed is bench/chat_import.py's (ratios against parsing the file), never a timed test.
    records = [
        msg(
            conversation=f"c{i % 50}",
            sender=f"person {i % 7}",
            text=f"message number {i} about topic {i % 13}",
            sent_at=f"2024-01-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
        )
        for i in range(10_000)
    ]
    path = write(tmp_path, "big.jsonl", jsonl(*records))
    assert run_import(db, path, "jsonl").messages_added == 10_000
    assert run_import(db, path, "jsonl").messages_added == 0


def test_the_example_chats_import_and_link_the_owner(db):
    examples = REPO_ROOT / "examples" / "chats"
    results = {
        "chatgpt": run_import(db, examples / "chatgpt" / "conversations.json", "chatgpt", ["Sam Rivera"]),
        "whatsapp": run_import(
            db, examples / "whatsapp" / "WhatsApp Chat with Iris Calder.txt", "whatsapp", ["Sam Rivera"]
        ),
        "jsonl": run_import(db, examples / "generic" / "family.jsonl", "jsonl", ["Sam Rivera"]),
    }
    assert results["chatgpt"].conversations_added == 3
    assert 15 <= results["chatgpt"].messages_added <= 25
    assert 20 <= results["whatsapp"].messages_added <= 30
    assert 12 <= results["jsonl"].messages_added <= 18
    with db.connect() as conn:
        owner_handles = conn.execute(
            "select source, handle from exo_private.chat_identities i join exo_private.people p "
            "on p.id = i.person_id where p.is_owner order by 1"
        ).fetchall()
        others = conn.execute(
            "select source, handle from exo_private.chat_identities where person_id is null order by 1"
        ).fetchall()
    assert owner_handles == [("chatgpt", "user"), ("jsonl", "Sam Rivera"), ("whatsapp", "Sam Rivera")]
    assert others == [("chatgpt", "assistant"), ("jsonl", "Alex Rivera"), ("whatsapp", "Iris Calder")]
    assert any("Northwind" in r[7] for r in search(db, "Northwind migration"))
    assert search(db, "reunion")
