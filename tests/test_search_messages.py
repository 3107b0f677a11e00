"""exo.search_messages: natural questions find messages (BM25, every word counts, none is
required), bands as in exo.search (archival messages left out unless the archive opens, with a
last row saying how many), deference with hints, refusals naming the argument, and the BM25
index serving the search."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row
from support.chat import jsonl, msg, run_import
from support.db import Database, create_database, drop_database
from support.deferred import rebuilt_open_indexes

from exocortex.ops.migrate import grant_database_privileges

WALTER = "Walter Rivera"
HOW = "ask with bridge => array['Walter Rivera']"
AS_OF = datetime(2025, 6, 30, 12, tzinfo=UTC)  # bands: current from 2024-06-30, archival before 2022-07-01

ANA = [  # (sender, text, sent_at)
    ("Sam", "I went to the climbing club with Ana on Tuesday", "2025-05-06T18:00:00Z"),
    ("Ana", "Next time we should bring more chalk", "2025-05-06T18:03:00Z"),
    ("Ana", "I start my new job at the observatory on Monday!", "2025-04-02T09:00:00Z"),
    ("Sam", "Congratulations, that is huge news", "2025-04-02T09:04:00Z"),
    ("Ana", "Priya recommended that book about octopuses, you would love it", "2025-03-10T20:00:00Z"),
    ("Sam", "Can you book a table for Friday?", "2025-03-10T20:05:00Z"),
    ("Sam", "So we decided: the trip goes to Lisbon in September, by train", "2025-02-14T12:00:00Z"),
    ("Ana", "Great, I will ask about the hotel", "2025-02-14T12:02:00Z"),
    ("Ana", "The club newsletter came today", "2025-06-20T08:00:00Z"),
    ("Ana", "The pictures are on nas.local/shared/holiday now", "2025-05-20T10:00:00Z"),
    ("Ana", "I moved to Porto last week, the flat is tiny", "2023-01-20T10:00:00Z"),  # recent
    ("Ana", "The climbing club closed for the summer", "2019-08-01T10:00:00Z"),  # archival
    ("Sam", "Our first trip together was to Rome", "2019-08-02T10:00:00Z"),  # archival
    ("Ana", "Back at the climbing club tonight", "2025-07-15T19:00:00Z"),  # after AS_OF
]
# A message with a name and a cue is charged, and so is the message before or after it.
FAMILY = [
    ("Sam", "Grandpa was in the hospice for a week", "2019-03-01T10:00:00Z"),  # archival, charged
    ("Ana", "I brought him flowers", "2019-03-02T10:00:00Z"),  # archival, charged
    ("Sam", "Shall we go sailing on Saturday?", "2025-06-01T08:00:00Z"),
    ("Ana", "Yes, the weather looks fine", "2025-06-01T08:05:00Z"),  # charged
    ("Sam", "Grandpa is back in the hospice, I will visit him first", "2025-06-01T14:00:00Z"),  # charged
    ("Ana", "Sure, take your time", "2025-06-01T19:00:00Z"),  # charged
]


@pytest.fixture(scope="module")
def chats(cfg, template_db, tmp_path_factory) -> Iterator[Database]:
    """One database with the two conversations imported, Walter Rivera deferred first."""
    db = create_database(cfg, "exo_search_messages", template=template_db.name)
    try:
        with db.connect() as conn:
            grant_database_privileges(conn)
        with db.connect("exo_writer") as conn:
            conn.execute("select exo_private.defer_subject(%s, array['Grandpa'])", (WALTER,))
        records = [msg("ana", s, t, at, conversation_title="Ana") for s, t, at in ANA]
        records += [msg("family", s, t, at, conversation_title="Family") for s, t, at in FAMILY]
        path = Path(tmp_path_factory.mktemp("chats")) / "chats.jsonl"
        path.write_text(jsonl(*records))
        run_import(db, path, "jsonl")
        with db.connect() as conn:  # an undated message, as a ChatGPT export can have
            conn.execute(
                "insert into exo_private.chat_messages (conversation_id, identity_id, dedupe_key, sent_at, body) "
                "select conversation_id, identity_id, 'id:undated', null, 'A note about the lighthouse' "
                "from exo_private.chat_messages limit 1"
            )
            conn.execute("select exo_private.mark_messages()")
        yield db
    finally:
        drop_database(db)


def ask(db: Database, query, **named) -> list[dict]:
    """exo.search_messages as the reader, as of AS_OF unless named."""
    named.setdefault("as_of", AS_OF)
    args = "".join(f", {k} => %({k})s" for k in named)
    with db.connect("exo_reader") as conn:
        conn.row_factory = dict_row
        return conn.execute(
            f"select * from exo.search_messages(%(query)s{args})", {"query": query, **named}
        ).fetchall()


def split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(shown rows, withheld values): the withheld rows come last and say nothing else."""
    held = [r for r in rows if r["withheld"] is not None]
    assert rows[len(rows) - len(held) :] == held, rows
    assert all({v for k, v in r.items() if k != "withheld"} == {None} for r in held), held
    return rows[: len(rows) - len(held)], [r["withheld"] for r in held]


def bodies(rows: list[dict]) -> list[str]:
    return [r["body"] for r in split(rows)[0]]


#: The hint of every search as of AS_OF, whatever it asks: the five charged messages of Family.
HELD = {"subject": WALTER, "messages": 5, "how": HOW}
ARCHIVE_HOW = (
    "To include them, ask with open_archive => true, or name the time you mean in the question (a year, "
    '"back in 2019", "years ago").'
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("When did Ana go to the climbing club?", "I went to the climbing club with Ana on Tuesday"),
        ("When did Ana start her new job?", "I start my new job at the observatory on Monday!"),
        (
            "What did we finally decide about the trip?",
            "So we decided: the trip goes to Lisbon in September, by train",
        ),
        (
            "Who was it that recommended the book to read?",
            "Priya recommended that book about octopuses, you would love it",
        ),
        ("Which city did Ana move to last year?", "I moved to Porto last week, the flat is tiny"),
    ],
)
def test_natural_language_questions_find_messages(chats, question, answer):
    """No message holds every word of the question (an AND of them finds nothing); the
    answering message holds the most of them, stemmed, and comes first."""
    with chats.connect() as conn:
        assert conn.execute(
            "select count(*) from exo_private.chat_messages where to_tsvector('english', body) "
            "@@ websearch_to_tsquery('english', %s)",
            (question,),
        ).fetchone() == (0,)
    rows = ask(chats, question)
    assert bodies(rows)[0] == answer
    assert rows[0]["rank"] > 0 and rows[0]["conversation_title"] == "Ana"


def test_a_word_only_inside_a_path_finds_its_message(chats):
    # BM25's english parser keeps "nas.local/shared/holiday" whole: the index and the question read
    # it as its words (exo_private.bm25_text), or "holiday" matched no message
    assert (
        bodies(ask(chats, "Where is the holiday folder?"))[0]
        == "The pictures are on nas.local/shared/holiday now"
    )


def test_every_word_counts_and_none_is_required(chats):
    assert bodies(ask(chats, "climbing zeppelin")) == ["I went to the climbing club with Ana on Tuesday"]
    rows = ask(chats, "climbing club Tuesday")
    assert bodies(rows) == [
        "I went to the climbing club with Ana on Tuesday",
        "The club newsletter came today",
    ]
    assert rows[0]["rank"] > rows[1]["rank"]
    for nothing in ("the and of what", "   "):  # stop words alone find nothing; the hint is the same
        assert split(ask(chats, nothing)) == ([], [HELD])


def test_archival_messages_are_left_out_with_a_last_row_that_says_how_many(chats):
    rows = ask(chats, "climbing club")
    shown, held = split(rows)
    # the message after as_of is not there either
    assert [(r["body"], r["band"]) for r in shown] == [
        ("I went to the climbing club with Ana on Tuesday", "current"),
        ("The club newsletter came today", "current"),
    ]
    assert held == [HELD, {"band": "archival", "messages": 1, "how": ARCHIVE_HOW}]

    opened = ask(chats, "climbing club", open_archive=True)
    assert split(opened)[1] == [HELD]
    assert ("The climbing club closed for the summer", "archival") in [(r["body"], r["band"]) for r in opened]

    signalled = ask(chats, "the climbing club in 2019")  # a temporal signal opens the archive
    assert split(signalled)[1] == [HELD]
    assert "The climbing club closed for the summer" in bodies(signalled)

    # A recent message is not archival: shown with the archive closed.
    assert [r["band"] for r in split(ask(chats, "Porto"))[0]] == ["recent"]


def test_the_archive_answers_when_nothing_present_does_unless_kept_closed(chats):
    fallback = ask(chats, "Rome")
    assert [(r["body"], r["band"]) for r in split(fallback)[0]] == [
        ("Our first trip together was to Rome", "archival")
    ]
    closed = ask(chats, "Rome", open_archive=False)
    assert split(closed) == ([], [HELD, {"band": "archival", "messages": 1, "how": ARCHIVE_HOW}])


def test_a_word_only_archival_messages_hold_opens_the_archive(chats):
    # "summer" is in no present message: the old one answers beside the present club chatter
    rows = ask(chats, "Did the climbing club close for the summer?")
    assert split(rows)[1] == [HELD]
    assert bodies(rows)[0] == "The climbing club closed for the summer"
    # a word the present uses keeps the archive closed
    assert split(ask(chats, "climbing club"))[1] == [
        HELD,
        {"band": "archival", "messages": 1, "how": ARCHIVE_HOW},
    ]
    # a withheld message's word opens nothing, and counts nowhere: "flowers" is only in a charged
    # archival message
    shown, held = split(ask(chats, "sailing flowers"))
    assert [r["body"] for r in shown] == ["Shall we go sailing on Saturday?"]
    assert held == [HELD]


def test_an_undated_message_has_no_band_and_is_never_left_out_for_its_time(chats):
    for as_of in (AS_OF, datetime(2001, 1, 1, tzinfo=UTC)):
        rows = split(ask(chats, "lighthouse", as_of=as_of, open_archive=False))[0]
        assert [(r["body"], r["band"], r["sent_at"]) for r in rows] == [
            ("A note about the lighthouse", None, None)
        ]


def test_bands_and_results_follow_as_of(chats):
    later = ask(chats, "climbing club", as_of=datetime(2025, 8, 1, tzinfo=UTC))
    assert bodies(later)[0] == "Back at the climbing club tonight"
    then = ask(chats, "climbing club", as_of=datetime(2020, 1, 1, tzinfo=UTC))
    assert [(r["body"], r["band"]) for r in split(then)[0]] == [
        ("The climbing club closed for the summer", "current")
    ]
    assert split(then)[1] == [{**HELD, "messages": 2}]  # the two charged messages sent by then


def test_charged_messages_are_withheld_with_a_hint_whatever_the_band(chats):
    # The hint counts every charged message whatever the question: one that counted the question's
    # withheld matches would tell which words they hold.
    rows = ask(chats, "When was grandpa in the hospice?")
    assert split(rows) == ([], [HELD]) == split(ask(chats, "zzyzx"))
    # A closed archive counts only its matches that may be shown (here none: the one is charged).
    closed = ask(chats, "hospice", open_archive=False)
    assert split(closed) == ([], [HELD])
    # Time and care are separate: a temporal signal opens the archive, not the subject.
    assert split(ask(chats, "hospice back in 2019"))[0] == []

    bridged = ask(chats, "hospice", bridge=["Grandpa"])  # by alias
    assert bodies(bridged) == ["Grandpa is back in the hospice, I will visit him first"]
    assert split(bridged)[1] == [{"band": "archival", "messages": 1, "how": ARCHIVE_HOW}]
    assert set(bodies(ask(chats, "hospice", bridge=[WALTER], open_archive=True))) == {
        "Grandpa is back in the hospice, I will visit him first",
        "Grandpa was in the hospice for a week",
    }
    # Other words of the conversation are not withheld.
    assert bodies(ask(chats, "sailing")) == ["Shall we go sailing on Saturday?"]


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"query": None}, "query must not be null"),
        ({"max_results": 0}, "max_results must be between 1 and 200, got 0"),
        ({"max_results": 201}, "max_results must be between 1 and 200, got 201"),
        ({"max_results": None}, "max_results must be between 1 and 200, got null"),
        ({"bridge": [f"s{i}" for i in range(51)]}, "bridge must name at most 50 subjects, got 51"),
        ({"bridge": ["x" * 201]}, "bridge names must be at most 200 characters each"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(chats, named, message):
    query = named.pop("query", "climbing")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
        ask(chats, query, **named)


def test_the_bm25_index_serves_the_search_of_twenty_thousand_messages(db):
    """The plan of the statement inside exo.search_messages (auto_explain of nested statements):
    an index scan of chat_messages_bm25_open (a search that releases nothing), no sequential scan
    of the messages."""
    words = ["harbour", "lantern", "orchard", "kettle", "ferry", "violin", "quarry", "meadow", "trip", "job"]
    with db.connect() as conn:
        conversation = conn.execute(
            "insert into exo_private.chat_conversations (source, external_id, title) "
            "values ('jsonl', 'many', 'Many') returning id"
        ).fetchone()[0]
        identity = conn.execute(
            "insert into exo_private.chat_identities (source, handle) values ('jsonl', 'Ann') returning id"
        ).fetchone()[0]
        with conn.cursor().copy(
            "copy exo_private.chat_messages (conversation_id, identity_id, dedupe_key, sent_at, body, charged) "
            "from stdin"
        ) as copy:
            for i in range(20_000):  # marked, as an import leaves them: charged for nothing
                body = " ".join(words[(i * k) % len(words)] for k in (1, 3, 7, 11)) + f" note{i}"
                copy.write_row(
                    (conversation, identity, f"id:{i}", f"20{18 + i % 8}-03-01T10:00:00Z", body, "[]")
                )
        conn.execute("analyze exo_private.chat_messages")
        conn.execute("load 'auto_explain'")
        for setting in (
            "auto_explain.log_min_duration = 0",
            "auto_explain.log_nested_statements = on",
            "client_min_messages = log",
        ):
            conn.execute("set " + setting)
        plans: list[str] = []
        conn.add_notice_handler(lambda d: plans.append(d.message_primary or ""))
        rows = conn.execute(
            "select * from exo.search_messages('When did we take the ferry to the orchard?', as_of => %s)",
            (datetime(2026, 1, 1, tzinfo=UTC),),
        ).fetchall()
    assert len(rows) == 20 and all(r[9] != "archival" for r in rows)
    (plan,) = [p for p in plans if "with hits as materialized" in p]
    assert "Index Scan using chat_messages_bm25_open on chat_messages" in plan, plan
    assert "Seq Scan on chat_messages" not in plan, plan


def test_what_a_withheld_message_says_moves_no_rank(db, tmp_path):
    """An unbridged search ranks by the messages charged for nothing: a charged message full of the
    question's word, imported charged or charged in place later (its old row out of the open index
    once rebuilt), moves no rank. Bridged, the search reads every message, and it does."""

    def imported(name: str, records: list[tuple[str, str, str]]) -> None:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(jsonl(*(msg(name, s, t, at, conversation_title=name) for s, t, at in records)))
        run_import(db, path, "jsonl")

    def ranks(**named) -> list[tuple[str, float]]:
        return [(r["body"], r["rank"]) for r in split(ask(db, "lantern", open_archive=True, **named))[0]]

    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject(%s, array['Grandpa'])", (WALTER,))
    imported("walk", [("Sam", "We walked to the lantern festival", "2025-06-01T10:00:00Z"),
                      ("Ana", "The harbour was quiet", "2025-06-01T10:05:00Z")])  # fmt: skip
    alone = ranks()
    assert [body for body, _ in alone] == ["We walked to the lantern festival"]
    imported("notes", [("Sam", "Grandpa's funeral: a lantern, a lantern, a lantern", "2025-06-02T10:00:00Z")])
    assert ranks() == alone
    assert ranks(bridge=[WALTER])[1:] != alone  # the charged message read, and its word less rare

    imported("other", [("Ana", "Bello's funeral: lantern after lantern", "2025-06-03T10:00:00Z")])
    assert ranks() != alone  # nobody deferred: shown, and counted
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Bello')")  # charged in place
    assert rebuilt_open_indexes(db) == 2  # the messages' index and the chat windows' workspace's
    assert ranks() == alone


def test_a_window_that_straddles_as_of_is_cut_at_it_on_every_search_path(db, tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(
        jsonl(
            msg("boat", "Ana", "The lighthouse keeper called about the boat", "2025-06-30T11:00:00Z"),
            msg("boat", "Sam", "Did he say what it costs?", "2025-06-30T11:05:00Z"),
            msg("boat", "Ana", "The lighthouse keeper sold the boat to Priya", "2025-06-30T11:50:00Z"),
        )
    )
    run_import(db, path, "jsonl")
    before = datetime(2025, 6, 30, 11, 30, tzinfo=UTC)
    with db.connect("exo_reader") as conn:
        found = conn.execute(
            "select exo.search_json('lighthouse keeper boat', as_of => %s)", (before,)
        ).fetchone()[0]
        packet = conn.execute(
            "select exo.context_packet_json('lighthouse keeper boat', as_of => %s)", (before,)
        ).fetchone()[0]
        later = conn.execute(
            "select exo.context_packet_json('lighthouse keeper boat', as_of => %s)", (AS_OF,)
        ).fetchone()[0]
    (result,) = found["results"]
    assert "called about the boat" in result["body"] and "sold the boat" not in result["body"]
    assert "called about the boat" in packet["text"] and "Priya" not in packet["text"]
    assert "sold the boat to Priya" in later["text"]  # as of later, the whole window
