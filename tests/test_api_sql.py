"""The read-only agent API in SQL (sql/500_entities.sql, 510_cypher.sql, 520_documents.sql,
530_conversations.sql, 540_status.sql, over sql/450_deference.sql): status, entities, dossiers,
timelines, neighbourhoods, documents, conversations, people and guarded Cypher, all as exo_reader."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from support import SQL_DIR
from support.chat import fixtures, run_import
from support.db import create_database, retire_database
from support.deferred import LUNCH, WALTER, charge_lunch, defer_walter, place
from support.graph import Doc, add_document, merge, org, person, rel
from support.vault import vault_database

from exocortex.client import api
from exocortex.ops.migrate import grant_database_privileges

BAD = psycopg.errors.InvalidParameterValue


@dataclass
class Graph:
    db: object
    docs: dict[str, Doc]


def _document(conn, key: str, workspace: str, chunks: list[str], written_at: str, title: str) -> Doc:
    doc = add_document(conn, workspace, chunks)
    conn.execute(
        "update exo_private.documents set written_at = %s, title = %s, path = %s where id = %s",
        (written_at, title, f"{workspace}/{key}.md", doc.id),
    )
    return doc


def _build(conn) -> dict[str, Doc]:
    """Iris Calder in technical and creative (two entities), a hub, and in personal a deferred
    subject (Walter Rivera, alias Grandpa Walter) with one charged chunk."""
    docs = {}
    docs["t1"] = _document(
        conn,
        "t1",
        "technical",
        ["Iris Calder works at Northwind Labs.", "Tomas Okafor joined Northwind Labs in spring."],
        "2021-03-01",
        "Team notes",
    )
    merge(
        conn,
        docs["t1"].windows[0],
        [person("Iris Calder"), org("Northwind Labs"), person("Tomas Okafor")],
        [rel("Iris Calder", "works at", "Northwind Labs"), rel("Tomas Okafor", "works at", "Northwind Labs")],
    )
    docs["t2"] = _document(
        conn,
        "t2",
        "technical",
        ["Iris Calder led the db-prod-03 migration with Tomas Okafor."],
        "2023-05-01",
        "Migration",
    )
    merge(
        conn,
        docs["t2"].windows[0],
        [person("Iris Calder"), person("Tomas Okafor")],
        [rel("Iris Calder", "worked with", "Tomas Okafor")],
    )
    workers = [
        f"Worker {n}"
        for n in ("Aaron", "Abel", "Ada", "Bea", "Ben", "Bo", "Cal", "Cy", "Dee", "Di", "Ed", "Eve")
    ]
    docs["hub"] = _document(
        conn,
        "hub",
        "technical",
        ["Hub Corp employs many people."] + [f"{w} works at Hub Corp." for w in workers],
        "2022-01-01",
        "Hub",
    )
    merge(
        conn,
        docs["hub"].windows[0],
        [org("Hub Corp")] + [person(w) for w in workers],
        [rel(w, "works at", "Hub Corp") for w in workers],
    )
    docs["c1"] = _document(
        conn, "c1", "creative", ["Iris Calder keeps the lighthouse in my story."], "2019-07-01", "Story"
    )
    merge(conn, docs["c1"].windows[0], [person("Iris Calder")])

    docs["p1"] = _document(conn, "p1", "personal", LUNCH, "2012-06-01", "Lake day")
    charge_lunch(conn, docs["p1"])
    docs["p2"] = _document(conn, "p2", "personal", ["Ann Lee moved to Berlin."], "2020-01-01", "Moving")
    merge(
        conn,
        docs["p2"].windows[0],
        [person("Ann Lee"), place("Berlin")],
        [rel("Ann Lee", "lives in", "Berlin")],
    )
    defer_walter(conn)
    for folder in ("a", "b"):  # the same file name in two folders
        _document(conn, "same", "administrative", ["Same."], "2024-01-01", f"Same {folder}")
        conn.execute(
            "update exo_private.documents set path = %s where path = 'administrative/same.md'",
            (f"{folder}/same.md",),
        )
    return docs


@pytest.fixture(scope="module")
def graph(cfg, template_db, tmp_path_factory) -> Iterator[Graph]:
    db = create_database(cfg, "exo_api", template=template_db.name)
    try:
        with db.connect() as conn:
            grant_database_privileges(conn)
        with db.connect("exo_writer") as conn:
            docs = _build(conn)
        files = fixtures(tmp_path_factory.mktemp("chats"))
        run_import(db, files["jsonl"], "jsonl")
        run_import(db, files["chatgpt"], "chatgpt")
        run_import(db, files["whatsapp"], "whatsapp", owner_names=["sam rivera"])
        yield Graph(db, docs)
    finally:
        retire_database(db)


@pytest.fixture
def reader(graph) -> Iterator[psycopg.Connection]:
    with graph.db.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
        conn.row_factory = dict_row
        yield conn


def call(conn, function: str, *args, **named):
    """select * from exo.<function>(args, name => value, ...) as dicts."""
    params = [sql.Literal(a) for a in args] + [
        sql.SQL("{} => {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in named.items()
    ]
    statement = sql.SQL("select * from exo.{}({})").format(
        sql.Identifier(function), sql.SQL(", ").join(params)
    )
    return conn.execute(statement).fetchall()


def value(conn, function: str, *args, **named):
    """The one value of exo.<function>(...)."""
    return next(iter(call(conn, function, *args, **named)[0].values()))


def shown(rows: list[dict]) -> list[dict]:
    """The rows of a table answer without its hint rows."""
    return [r for r in rows if r["withheld"] is None]


def hints(rows: list[dict]) -> list[dict]:
    """The hints of a table answer: its last rows, which have only withheld set."""
    held = [r for r in rows if r["withheld"] is not None]
    assert all({v for k, v in r.items() if k != "withheld"} == {None} for r in held)
    assert rows[len(rows) - len(held) :] == held
    return [r["withheld"] for r in held]


HOW = "ask with bridge => array['Walter Rivera']"


def entity_id(graph, workspace: str, name: str) -> int:
    with graph.db.connect() as conn:
        return conn.execute(
            "select id from exo_private.entities where workspace = %s and name = %s", (workspace, name)
        ).fetchone()[0]


# -- status ---------------------------------------------------------------------------------


def test_status_counts_everything_and_tells_a_live_worker(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "technical", ["Iris Calder works at Northwind Labs."])
        merge(
            conn,
            doc.windows[0],
            [person("Iris Calder"), org("Northwind Labs")],
            [rel("Iris Calder", "works at", "Northwind Labs")],
        )
        conn.execute("select pgmq.send('embed', '{\"chunk_id\": 1}')")
        conn.execute("select pgmq.send('dead_letter', '{}')")
    with db.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
        before = conn.execute("select exo.status()").fetchone()[0]
    assert before["documents"] == {"total": 1, "conversations": 0, "by_stage": {"chunked": 1}}
    assert before["quarantine"] == 0
    assert before["chunks"]["total"] == 1 and before["chunks"]["by_workspace"] == {"technical": 1}
    assert before["graph"]["technical"] == {"entities": 2, "mentions": 2, "relations": 1}
    assert before["graph"]["creative"] == {"entities": 0, "mentions": 0, "relations": 0}
    assert before["queues"]["embed"]["depth"] == 1 and before["queues"]["embed"]["oldest_age_s"] >= 0
    extract = dict(before["queues"]["extract"])
    # With no worker on it, what it got done is counted over the last hour.
    since = datetime.fromisoformat(extract.pop("done_since"))
    assert datetime.fromisoformat(before["as_of"]) - since == timedelta(hours=1)
    assert extract == {
        "depth": 0,
        "pending": 0,
        "in_flight": 0,
        "held_by_dead_workers": 0,
        "failed": 0,
        "dead": 0,
        "oldest_age_s": None,
        "workers": 0,
        "done": 0,
        "rate_per_min": 0,
        "eta_s": None,
    }
    assert before["queues"]["dead_letter"]["depth"] == 1
    assert before["worker"] == {
        "last_heartbeat": None,
        "alive": False,
        "running": 0,
        "dead": 0,
        "dead_after_s": 30,
        "hosts": {},
    }
    assert before["embeddings"] == []

    with db.connect("exo_writer") as conn:
        conn.execute(
            "insert into exo_private.workers (name, pid, hostname, queues) values ('w', 1, 'here', '{embed}')"
        )
        conn.execute(
            "insert into exo_private.workers (name, pid, hostname, queues, heartbeat_at) "
            "values ('old', 2, 'here', '{embed}', now() - interval '10 minutes')"
        )
    with db.connect("exo_reader") as conn:
        after = conn.execute("select exo.status()").fetchone()[0]
    assert after["worker"]["alive"] is True and after["worker"]["running"] == 1
    assert after["worker"]["dead"] == 1  # no heartbeat for 10 minutes, never stopped
    assert after["worker"]["last_heartbeat"] is not None
    (here,) = after["worker"]["hosts"].items()  # by host, the live workers only
    assert here[0] == "here" and {k: here[1][k] for k in ("running", "queues", "processed")} == {
        "running": 1,
        "queues": ["embed"],
        "processed": 0,
    }
    # The live worker serves embed, the dead one counts nowhere; nothing done yet: no ETA.
    assert [after["queues"][q]["workers"] for q in ("embed", "extract")] == [1, 0]
    assert datetime.fromisoformat(after["queues"]["embed"]["done_since"]) > since  # since it began
    assert after["queues"]["embed"]["eta_s"] is None


# -- search_entities ------------------------------------------------------------------------


def test_search_entities_by_substring_most_mentioned_first(reader):
    rows = shown(call(reader, "search_entities", "iris"))
    assert [(r["workspace"], r["type"], r["name"], r["mentions"], r["documents"]) for r in rows] == [
        ("technical", "Person", "Iris Calder", 2, 2),
        ("creative", "Person", "Iris Calder", 1, 1),
    ]
    assert [r["name"] for r in shown(call(reader, "search_entities", "WORKER", max_results=3))] == [
        "Worker Aaron",
        "Worker Abel",
        "Worker Ada",
    ]
    orgs = shown(call(reader, "search_entities", entity_type="org", workspaces=["technical"]))
    assert {r["name"] for r in orgs} == {"Northwind Labs", "Hub Corp"}
    assert call(reader, "search_entities", "iris", workspaces=["creative"])[0]["workspace"] == "creative"
    # as_of: only the entities mentioned by then, counted by then
    then = shown(call(reader, "search_entities", "iris", as_of=datetime(2022, 1, 1, tzinfo=UTC)))
    assert sorted((r["workspace"], r["mentions"], r["documents"]) for r in then) == [
        ("creative", 1, 1),
        ("technical", 1, 1),
    ]
    earlier = shown(call(reader, "search_entities", "iris", as_of=datetime(2020, 1, 1, tzinfo=UTC)))
    assert [r["workspace"] for r in earlier] == ["creative"]


def test_search_entities_treats_wildcards_as_characters(reader):
    assert shown(call(reader, "search_entities", "%")) == []
    assert shown(call(reader, "search_entities", "_")) == []
    assert shown(call(reader, "search_entities", "\\")) == []
    assert len(shown(call(reader, "search_entities", "Worker A_"))) == 0
    assert len(shown(call(reader, "search_entities", "Worker A", max_results=100))) == 3


def test_search_entities_leaves_deferred_subjects_out_unless_bridged(reader):
    rows = call(reader, "search_entities", workspaces=["personal"])
    closed = {r["name"] for r in shown(rows)}
    # the hospice is only in the charged chunk; Ann and Jane Doe are chat participants
    assert closed == {"Ann Lee", "Lakeside Cafe", "Berlin", "Ann", "Jane Doe"}
    # Walter Rivera and Grandpa Walter are the subject; St Mary Hospice is seen only in its chunk
    hint = {"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}
    assert hints(rows) == [hint]
    assert "Hospice" not in str(rows)
    ann = shown(call(reader, "search_entities", "Ann Lee"))[0]
    assert (ann["mentions"], ann["documents"]) == (2, 2)  # the charged chunk's mention is not counted
    bridged = call(reader, "search_entities", workspaces=["personal"], bridge=["grandpa"])
    assert {r["name"] for r in bridged} == closed | {WALTER, "Grandpa Walter", "St Mary Hospice"}
    assert hints(bridged) == []
    assert next(r for r in bridged if r["name"] == "Ann Lee")["mentions"] == 3


@pytest.mark.parametrize("name", ["St Mary Hospice", "Hospice", "Ann Lee", "Nobody Here", None])
def test_search_entities_hints_the_same_whatever_the_name(reader, name):
    """A name only withheld material gives an entity is answered as one nothing gives: the hint
    comes for every name, or it would tell which names withheld material holds."""
    rows = call(reader, "search_entities", name, workspaces=["personal"])
    assert hints(rows) == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
    assert "Hospice" not in str(rows)


# -- dossier --------------------------------------------------------------------------------


def test_the_same_name_in_two_workspaces_is_two_dossiers(reader, graph):
    both = value(reader, "dossier", "Iris Calder")
    assert isinstance(both, list)
    assert [(d["workspace"], d["name"]) for d in both] == [
        ("creative", "Iris Calder"),
        ("technical", "Iris Calder"),
    ]
    technical = value(reader, "dossier", "  iris   CALDER ", workspace="technical")
    assert isinstance(technical, dict) and technical["workspace"] == "technical"
    assert value(reader, "dossier", str(technical["entity_id"])) == technical
    assert technical["type"] == "Person" and technical["mention_count"] == 2
    assert [(m["path"], m["written_at"], m["band"]) for m in technical["mentions"]] == [
        ("technical/t2.md", "2023-05-01", "current"),
        ("technical/t1.md", "2021-03-01", "current"),
    ]
    assert [(r["predicate"], r["name"]) for r in technical["relations"]["out"]] == [
        ("WORKED_WITH", "Tomas Okafor"),
        ("WORKS_AT", "Northwind Labs"),
    ]
    assert technical["relations"]["in"] == [] and technical["hints"] == []
    northwind = value(reader, "dossier", "Northwind Labs")
    assert sorted(r["name"] for r in northwind["relations"]["in"]) == ["Iris Calder", "Tomas Okafor"]
    assert northwind["relations"]["in"][0]["document_ids"] == [graph.docs["t1"].id]
    # as_of: only what was written by then
    then = value(
        reader, "dossier", "Iris Calder", workspace="technical", as_of=datetime(2022, 1, 1, tzinfo=UTC)
    )
    assert [m["path"] for m in then["mentions"]] == ["technical/t1.md"] and then["mention_count"] == 1
    said = {(r["predicate"], r["name"]): r["document_ids"] for r in then["relations"]["out"]}
    assert said and all(ids == [graph.docs["t1"].id] for ids in said.values())
    assert (
        value(
            reader, "dossier", "Iris Calder", workspace="technical", as_of=datetime(2020, 1, 1, tzinfo=UTC)
        )["mentions"]
        == []
    )


def test_dossier_withholds_charged_mentions_with_a_hint(reader, graph):
    ann = value(reader, "dossier", "Ann Lee")
    assert [m["document_id"] for m in ann["mentions"]] == [graph.docs["p2"].id, graph.docs["p1"].id]
    assert ann["mention_count"] == 2
    assert [(r["predicate"], r["name"]) for r in ann["relations"]["out"]] == [
        ("LIVES_IN", "Berlin"),
        ("VISITED", "Lakeside Cafe"),
    ]
    # the workspace's chunks charged for the subject, whatever the entity: never what withheld text
    # says of it (a count of its relations there would tell whether it names them)
    assert (
        ann["hints"]
        == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
        == value(reader, "dossier", "Lakeside Cafe")["hints"]
    )
    text = str(ann)
    assert "funeral" not in text and "Hospice" not in text and "Grandpa" not in text

    opened = value(reader, "dossier", "Ann Lee", bridge=["Grandpa Walter"])
    assert opened["mention_count"] == 3 and opened["hints"] == []
    assert {r["name"] for r in opened["relations"]["out"]} == {
        "Berlin",
        "Lakeside Cafe",
        WALTER,
        "Grandpa Walter",
        "St Mary Hospice",
    }


@pytest.mark.parametrize("name", [WALTER, "grandpa walter"])
def test_a_deferred_subject_has_only_a_hint_unless_bridged(reader, name):
    closed = value(reader, "dossier", name)
    assert closed["withheld"] is True and "name" not in closed and "mentions" not in closed
    assert [(h["subject"], h["workspace"], h["how"]) for h in closed["hints"]] == [
        (WALTER, "personal", "ask with bridge => array['Walter Rivera']")
    ]
    opened = value(reader, "dossier", name, bridge=["Walter Rivera"])
    assert opened["name"].lower() == name.lower() and opened["mention_count"] == 1
    assert "withheld" not in opened


@pytest.mark.parametrize("by", ["name", "id"])
@pytest.mark.parametrize("function", ["dossier", "related", "timeline"])
def test_an_entity_seen_only_in_charged_text_is_no_entity_unless_bridged(reader, graph, by, function):
    """Findings: exo.dossier by numeric id listed entities seen only in withheld chunks; then,
    asked by such a name, it answered `withheld: true` where a name nothing gives raises: one
    guess a call told which names withheld material holds (docs/security.md, the oracle rule)."""
    hospice_id = entity_id(graph, "personal", "St Mary Hospice")
    asked = "St Mary Hospice" if by == "name" else str(hospice_id)
    with pytest.raises(BAD, match=f"entity '{asked}' names no entity") as raised:
        call(reader, function, asked)
    with pytest.raises(BAD) as unknown:
        call(reader, function, "Nobody Here" if by == "name" else "999999999")
    assert raised.value.diag.message_hint == unknown.value.diag.message_hint.replace(
        "Nobody Here" if by == "name" else "999999999", asked
    )
    opened = value(reader, "dossier", asked, bridge=["Grandpa"])
    assert opened["name"] == "St Mary Hospice" and opened["mention_count"] == 1 and opened["hints"] == []


def test_a_mention_without_a_chunk_follows_the_chunks_of_its_window(db):
    with db.connect("exo_writer") as conn:
        charged = add_document(conn, "personal", ["Plain words with Zed", "Quill at the funeral."])
        conn.execute(
            "update exo_private.chunks set charged_subjects = %s where id = %s", ([WALTER], charged.chunks[1])
        )
        plain = add_document(conn, "personal", ["Nothing charged here, Ivo", "Quill."])
        # a name the window writes across two chunks is in no chunk
        merge(conn, charged.windows[0], [person("Zed Quill")])
        merge(conn, plain.windows[0], [person("Ivo Quill")])
        assert (
            conn.execute("select count(*) from exo_private.mentions where chunk_id is null").fetchone()[0]
            == 2
        )
    with db.connect("exo_reader") as conn:
        conn.row_factory = dict_row
        for function in ("dossier", "timeline"):
            with pytest.raises(BAD, match="entity 'Zed Quill' names no entity"):
                call(conn, function, "Zed Quill")
        found = call(conn, "search_entities", "quill")
        assert [r["name"] for r in shown(found)] == ["Ivo Quill"] and len(hints(found)) == 1
        opened = shown(call(conn, "timeline", "Zed Quill", bridge=[WALTER]))
        assert [r["excerpt"] for r in opened] == ["Plain words with Zed Quill at the funeral."]
        assert value(conn, "dossier", "Ivo Quill")["mention_count"] == 1


def test_dossier_bad_arguments_name_the_argument(reader):
    with pytest.raises(BAD, match="entity must be an entity id or a name"):
        value(reader, "dossier", "  ")
    with pytest.raises(BAD, match="entity 'Nobody Here' names no entity"):
        value(reader, "dossier", "Nobody Here")
    with pytest.raises(BAD, match="names no entity in workspace 'creative'"):
        value(reader, "dossier", "Northwind Labs", workspace="creative")
    with pytest.raises(BAD, match="workspace 'nowhere' does not exist"):
        value(reader, "dossier", "Iris Calder", workspace="nowhere")


# -- cross_document_entities ----------------------------------------------------------------


def test_cross_document_entities_and_bridging_rate(reader):
    found = value(reader, "cross_document_entities")
    assert [(e["workspace"], e["name"], e["documents"]) for e in found["entities"]] == [
        ("personal", "Ann", 2),  # a chat participant, in both her conversations
        ("personal", "Ann Lee", 2),
        ("technical", "Iris Calder", 2),
        ("technical", "Tomas Okafor", 2),
    ]
    # technical: 3 + Hub Corp + 12 workers mentioned, 2 bridging; personal: Ann Lee, the cafe,
    # Berlin and the chat participants Ann and Jane Doe (the hospice and Walter Rivera are
    # withheld); creative: Iris Calder alone
    assert found["counts"] == {
        "creative": {"entities": 1, "bridging": 0},
        "personal": {"entities": 5, "bridging": 2},
        "technical": {"entities": 16, "bridging": 2},
    }
    assert found["bridging_rate"] == {
        "overall": 0.1818,
        "by_workspace": {"creative": 0, "personal": 0.4, "technical": 0.125},
    }
    one = value(reader, "cross_document_entities", min_documents=1, workspaces=["creative"], max_results=5)
    assert [e["name"] for e in one["entities"]] == ["Iris Calder"]
    assert len(value(reader, "cross_document_entities", min_documents=1, max_results=0)["entities"]) == 1
    # as_of mid-2021: the technical workspace had one note (Iris Calder, Tomas Okafor, Northwind)
    then = value(reader, "cross_document_entities", as_of=datetime(2021, 6, 1, tzinfo=UTC))
    assert [e["name"] for e in then["entities"]] == ["Ann Lee"]
    assert then["counts"]["technical"] == {"entities": 3, "bridging": 0}
    with pytest.raises(BAD, match="min_documents must be at least 1"):
        value(reader, "cross_document_entities", min_documents=0)
    with pytest.raises(BAD, match="workspace 'nowhere' does not exist"):
        value(reader, "cross_document_entities", workspaces=["nowhere"])


# -- related --------------------------------------------------------------------------------


def test_related_one_hop_and_hub_safe_depth(reader):
    rows = call(reader, "related", "Iris Calder", workspace="technical")
    assert [(r["name"], r["depth"]) for r in rows] == [("Northwind Labs", 1), ("Tomas Okafor", 1)]
    assert len(call(reader, "related", "Hub Corp")) == 12
    assert len(call(reader, "related", "Hub Corp", per_node=3)) == 3
    two = call(reader, "related", "Worker Aaron", depth=2, per_node=5)
    assert [(r["name"], r["depth"]) for r in two if r["depth"] == 1] == [("Hub Corp", 1)]
    assert 1 <= len([r for r in two if r["depth"] == 2]) <= 5
    assert all(r["workspace"] == "technical" for r in two)
    # as_of: along the relations written by then (Tomas Okafor came in 2023)
    then = call(
        reader, "related", "Iris Calder", workspace="technical", as_of=datetime(2022, 1, 1, tzinfo=UTC)
    )
    assert [(r["name"], r["depth"]) for r in then] == [("Northwind Labs", 1)]
    assert call(reader, "related", "Iris Calder", as_of=datetime(2020, 1, 1, tzinfo=UTC)) == []


def test_related_leaves_deferred_subjects_out_unless_bridged(reader, graph):
    rows = call(reader, "related", "Ann Lee")
    assert {r["name"] for r in shown(rows)} == {"Lakeside Cafe", "Berlin"}
    assert hints(rows) == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
    opened = call(reader, "related", "Ann Lee", bridge=["Walter Rivera"])
    assert {r["name"] for r in opened} == {
        "Lakeside Cafe",
        "Berlin",
        WALTER,
        "Grandpa Walter",
        "St Mary Hospice",
    }
    closed = call(reader, "related", WALTER)
    assert shown(closed) == []
    assert hints(closed) == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
    assert [r["name"] for r in call(reader, "related", WALTER, bridge=["grandpa"])] == ["Ann Lee"]


def test_related_bad_arguments(reader):
    with pytest.raises(BAD, match="depth must be between 1 and 3, got 4"):
        call(reader, "related", "Ann Lee", depth=4)
    with pytest.raises(BAD, match="per_node must be between 1 and 1000, got 0"):
        call(reader, "related", "Ann Lee", per_node=0)
    with pytest.raises(BAD, match="entity 'Nobody' names no entity"):
        call(reader, "related", "Nobody")


# -- timeline -------------------------------------------------------------------------------


def test_timeline_in_written_order_with_excerpts(reader):
    rows = call(reader, "timeline", "Iris Calder")
    assert [(str(r["written_at"]), r["workspace"], r["path"]) for r in rows] == [
        ("2019-07-01", "creative", "creative/c1.md"),
        ("2021-03-01", "technical", "technical/t1.md"),
        ("2023-05-01", "technical", "technical/t2.md"),
    ]
    assert rows[2]["excerpt"] == "Iris Calder led the db-prod-03 migration with Tomas Okafor."
    assert (
        rows[0]["surface"] == "Iris Calder" and rows[0]["title"] == "Story" and rows[0]["band"] == "current"
    )
    assert len(call(reader, "timeline", "Iris Calder", workspace="technical")) == 2
    assert len(call(reader, "timeline", "Iris Calder", max_results=1)) == 1
    # as_of: only what was written by then (the day itself included)
    then = call(reader, "timeline", "Iris Calder", as_of=datetime(2021, 3, 1, 12, tzinfo=UTC))
    assert [r["path"] for r in then] == ["creative/c1.md", "technical/t1.md"]
    assert call(reader, "timeline", "Iris Calder", as_of=datetime(2019, 6, 30, tzinfo=UTC)) == []


def test_timeline_excerpt_is_about_200_characters_around_the_name(db):
    long = "x " * 300 + "Quill Vance spoke. " + "y " * 300
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "creative", [long])
        merge(conn, doc.windows[0], [person("Quill Vance")])
    with db.connect("exo_reader") as conn:
        conn.row_factory = dict_row
        (row,) = call(conn, "timeline", "Quill Vance")
    assert "Quill Vance" in row["excerpt"]
    assert row["excerpt"].startswith("…") and row["excerpt"].endswith("…")
    assert 195 <= len(row["excerpt"]) <= 202


def test_timeline_leaves_withheld_mentions_out_unless_bridged(reader, graph):
    closed = call(reader, "timeline", "Ann Lee")
    assert [(str(r["written_at"]), r["document_id"]) for r in shown(closed)] == [
        ("2012-06-01", graph.docs["p1"].id),
        ("2020-01-01", graph.docs["p2"].id),
    ]
    assert hints(closed) == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
    assert "funeral" not in str(closed)
    opened = call(reader, "timeline", "Ann Lee", bridge=["Walter Rivera"])
    assert len(opened) == 3 and "funeral" in opened[1]["excerpt"]
    walter = call(reader, "timeline", WALTER)
    assert shown(walter) == []
    assert hints(walter) == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
    assert len(call(reader, "timeline", WALTER, bridge=["Grandpa"])) == 1


# -- document -------------------------------------------------------------------------------


def test_document_by_id_path_and_suffix(reader, graph):
    by_id = value(reader, "document", str(graph.docs["t1"].id))
    assert value(reader, "document", "technical/t1.md") == by_id
    assert value(reader, "document", "T1.md") == by_id
    assert value(reader, "document", "/technical/t1.md") == by_id
    assert by_id["stage"] == "chunked" and by_id["workspace"] == "technical" and by_id["chunks"] == 2
    assert by_id["title"] == "Team notes" and by_id["written_at"] == "2021-03-01"
    # as_of: the document as of a day it was written by, none before it
    assert value(reader, "document", "t1.md", as_of=datetime(2021, 3, 1, 9, tzinfo=UTC)) == by_id
    with pytest.raises(BAD, match="document 't1.md' was not written by 2021-02-28"):
        value(reader, "document", "t1.md", as_of=datetime(2021, 2, 28, tzinfo=UTC))
    assert {"size_bytes", "sha256", "band", "band_reason", "route", "canonical", "error_class"} <= set(by_id)
    assert by_id["entities"] == [
        {
            "entity_id": by_id["entities"][0]["entity_id"],
            "name": "Northwind Labs",
            "type": "Org",
            "mentions": 2,
        },
        {
            "entity_id": by_id["entities"][1]["entity_id"],
            "name": "Iris Calder",
            "type": "Person",
            "mentions": 1,
        },
        {
            "entity_id": by_id["entities"][2]["entity_id"],
            "name": "Tomas Okafor",
            "type": "Person",
            "mentions": 1,
        },
    ]


def test_document_withholds_deferred_entities_with_a_hint(reader, graph):
    doc = value(reader, "document", "p1.md")
    assert doc["charged_chunks"] == 1
    assert [e["name"] for e in doc["entities"]] == ["Ann Lee", "Lakeside Cafe"]
    # its chunks charged for the subject, never which entities they name
    assert doc["hints"] == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
    opened = value(reader, "document", "p1.md", bridge=["Walter Rivera"])
    assert {e["name"] for e in opened["entities"]} == {
        "Ann Lee",
        "Lakeside Cafe",
        WALTER,
        "Grandpa Walter",
        "St Mary Hospice",
    }
    assert opened["hints"] == []


def test_document_bad_arguments(reader):
    with pytest.raises(BAD, match="document must be a document id or a path"):
        value(reader, "document", "")
    with pytest.raises(BAD, match="document 'no/such.md' names no document"):
        value(reader, "document", "no/such.md")
    with pytest.raises(BAD, match="document 'md' names no document"):
        value(reader, "document", "md")  # a suffix is a whole file name, never a fragment of one
    with pytest.raises(BAD, match=r"document 'same.md' matches 2 documents: \d+ a/same.md, \d+ b/same.md"):
        value(reader, "document", "same.md")
    assert value(reader, "document", "b/same.md")["path"] == "b/same.md"


def test_a_document_whose_every_chunk_is_charged_is_withheld(db):
    """A charged document's title and path are withheld: every chunk charged, or its frontmatter
    charges the subject (even before it has chunks)."""
    with db.connect("exo_writer") as conn:
        grief = _document(
            conn, "grief", "personal", ["Grandpa died.", "The funeral was long."], "2017-03-28", "Sad day"
        )
        conn.execute(
            "update exo_private.chunks set charged_subjects = %s where document_id = %s", ([WALTER], grief.id)
        )
        other = _document(conn, "grief", "creative", ["A poem about rain."], "2020-01-01", "Rain")
        conn.execute("update exo_private.documents set path = 'a/grief.md' where id = %s", (grief.id,))
        conn.execute("update exo_private.documents set path = 'b/grief.md' where id = %s", (other.id,))
        unchunked = add_document(conn, "personal", ["Unused."])
        conn.execute("delete from exo_private.chunks where document_id = %s", (unchunked.id,))
        conn.execute(
            "update exo_private.documents set title = 'Hospice letters', path = 'c/letters.md', stage = 'extracted',"
            " frontmatter = %s where id = %s",
            (Jsonb({"charged": "Grandpa"}), unchunked.id),
        )
        conn.execute(
            "insert into exo_private.deferred_subjects (subject, aliases) values (%s, %s)",
            (WALTER, ["Grandpa Walter", "Grandpa"]),
        )
    with db.connect("exo_reader") as conn:
        conn.row_factory = dict_row
        closed = value(conn, "document", str(grief.id))
        assert closed == {
            "document_id": grief.id,
            "workspace": "personal",
            "stage": "chunked",
            "withheld": True,
            "hints": [{"subject": WALTER, "workspace": "personal", "chunks": 2, "how": HOW}],
        }
        # whatever as_of asks, a charged document's date is not told by an error either
        assert value(conn, "document", str(grief.id), as_of=datetime(2000, 1, 1, tzinfo=UTC)) == closed
        letters = value(conn, "document", str(unchunked.id))
        assert letters["withheld"] is True and "Hospice" not in str(letters)
        assert [h["subject"] for h in letters["hints"]] == [WALTER]  # the alias names the subject
        # by its path a charged document is no document, as a path nothing has
        for asked in ("a/grief.md", "c/letters.md"):
            with pytest.raises(BAD, match=f"document '{asked}' names no document"):
                value(conn, "document", asked)
        assert value(conn, "document", "grief.md")["document_id"] == other.id  # the one open match
        opened = value(conn, "document", "a/grief.md", bridge=["Grandpa"])
        assert opened["title"] == "Sad day" and opened["path"] == "a/grief.md"
        assert value(conn, "document", "c/letters.md", bridge=[WALTER])["title"] == "Hospice letters"


def test_related_never_walks_through_a_hidden_node(db):
    """Finding: related walked through a deferred subject's node: the node was hidden but its
    neighbours were listed. Nor may it take a relation whose only evidence is charged."""
    with db.connect("exo_writer") as conn:
        met = add_document(conn, "personal", ["Iva Lind met Grandpa Walter at the lake."])
        merge(
            conn,
            met.windows[0],
            [person("Iva Lind"), person("Grandpa Walter")],
            [rel("Iva Lind", "met", "Grandpa Walter")],
        )
        chess = add_document(conn, "personal", ["Grandpa Walter played chess with Ned Park."])
        merge(
            conn,
            chess.windows[0],
            [person("Grandpa Walter"), person("Ned Park")],
            [rel("Grandpa Walter", "played chess with", "Ned Park")],
        )
        sat = add_document(conn, "personal", ["Iva Lind sat with Ned Park at the hospice."])
        conn.execute(
            "update exo_private.chunks set charged_subjects = %s where id = %s", ([WALTER], sat.chunks[0])
        )
        merge(
            conn,
            sat.windows[0],
            [person("Iva Lind"), person("Ned Park")],
            [rel("Iva Lind", "sat with", "Ned Park")],
        )
        conn.execute(
            "insert into exo_private.deferred_subjects (subject, aliases) values (%s, %s)",
            (WALTER, ["Grandpa Walter", "Grandpa"]),
        )
    with db.connect("exo_reader") as conn:
        conn.row_factory = dict_row
        rows = call(conn, "related", "Iva Lind", depth=3)
        assert shown(rows) == []  # Ned Park is two hops away through Grandpa Walter, one through the hospice
        assert hints(rows) == [
            {"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}
        ]  # the hospice visit's chunk
        ned = value(conn, "dossier", "Ned Park")
        assert ned["relations"] == {"out": [], "in": []}
        # the chess game with Grandpa Walter, and the hospice visit whose only evidence is charged
        assert ned["hints"] == [{"subject": WALTER, "workspace": "personal", "chunks": 1, "how": HOW}]
        opened = call(conn, "related", "Iva Lind", depth=2, bridge=["Grandpa"])
        assert {(r["name"], r["depth"]) for r in opened} == {("Grandpa Walter", 1), ("Ned Park", 1)}


# -- the example vault ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def vault(cfg, template_db) -> Iterator:
    """The example vault (Walter Rivera deferred) with Brook Street merged from the funeral note
    only, so it is seen only in charged text."""
    with vault_database(cfg, template_db, "exo_api_vault") as db:
        with db.connect("exo_writer") as conn:
            (window,) = conn.execute(
                "select w.id from exo_private.extraction_windows w join exo_private.documents d"
                " on d.id = w.document_id where d.path = %s",
                (FUNERAL,),
            ).fetchone()
            # the window names her in full, no chunk does: her mention follows the window's chunks
            conn.execute(
                "update exo_private.extraction_windows set body = body || ' Iris Calder.' where id = %s",
                (window,),
            )
            merge(conn, window, [place("Brook Street"), person("Iris Calder")])
        yield db


FUNERAL = "diary/2017/2017-03-28.md"


def vault_reader(vault) -> psycopg.Connection:
    conn = vault.connect("exo_reader")
    assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
    conn.row_factory = dict_row
    return conn


def test_vault_the_funeral_notes_title_is_withheld(vault):
    """Findings: exo.document showed a charged document's title ("The funeral"); then, asked by its
    path, it answered `withheld: true` where a path nothing has raises: a guessed path was told."""
    with vault_reader(vault) as conn:
        doc_id = value(conn, "document", FUNERAL, bridge=["Grandpa"])["document_id"]
        answer = value(conn, "document", str(doc_id))
        assert answer["withheld"] is True and "title" not in answer and "path" not in answer
        assert "funeral" not in str(answer).lower()
        assert [(h["subject"], h["how"]) for h in answer["hints"]] == [(WALTER, HOW)]
        for asked in ("2017-03-28.md", FUNERAL):
            with pytest.raises(BAD, match=f"document '{asked}' names no document"):
                value(conn, "document", asked)
        assert value(conn, "document", str(doc_id), bridge=["Grandpa"])["title"] == "The funeral"
        # a neutral note that names him is no charged document
        chili = value(conn, "document", "grandpa-walters-chili.md")
        assert chili["title"] == "Grandpa Walter's Chili" and "withheld" not in chili


def test_vault_an_entity_seen_only_in_the_funeral_note_is_no_entity_by_id_or_name(vault):
    with vault_reader(vault) as conn:
        brook_id = value(conn, "dossier", "Brook Street", bridge=[WALTER])["entity_id"]
        for function in ("dossier", "timeline", "related"):
            for asked in ("Brook Street", str(brook_id)):
                with pytest.raises(BAD, match=f"entity '{asked}' names no entity"):
                    call(conn, function, asked)
        # Iris Calder in personal: only there too; in technical and creative she is seen
        iris = value(conn, "dossier", "Iris Calder")
        assert {(d["workspace"], d.get("withheld", False)) for d in iris} == {
            ("technical", False),
            ("creative", False),
        }
        found = call(conn, "search_entities", "brook")
        assert shown(found) == [] and hints(found) == hints(call(conn, "search_entities", "no such name"))
        assert [(h["subject"], h["workspace"]) for h in hints(found)] == [(WALTER, "personal")]
        crossing = value(conn, "cross_document_entities", min_documents=1, workspaces=["personal"])
        assert "Brook Street" not in str(crossing["entities"])
        assert crossing["hints"] == hints(found)  # the charged chunks, not how many entities withheld

        bridged = [WALTER]
        assert value(conn, "dossier", "Brook Street", bridge=bridged)["name"] == "Brook Street"
        assert [r["name"] for r in call(conn, "search_entities", "brook", bridge=bridged)] == ["Brook Street"]
        (row,) = call(conn, "timeline", "Brook Street", bridge=bridged)
        assert row["title"] == "The funeral" and "Brook Street" in row["excerpt"]
        opened = value(
            conn, "cross_document_entities", min_documents=1, workspaces=["personal"], bridge=bridged
        )
        assert "Brook Street" in str(opened["entities"]) and opened["hints"] == []


# -- chats ----------------------------------------------------------------------------------


def test_conversation_by_title_oldest_first(reader):
    rows = call(reader, "conversation", "home postgres")
    assert [(r["sender"], r["is_owner"], r["body"]) for r in rows] == [
        ("Me", True, "How do I run Postgres at home?"),  # the owner's identity has no name of its own
        ("ChatGPT", False, "Install it and \nrun initdb."),
        ("ChatGPT", False, "A regenerated answer."),
        ("Me", True, "What about backups?"),
    ]
    assert {(r["title"], r["source"]) for r in rows} == {("Home Postgres", "chatgpt")}
    assert call(reader, "conversation", str(rows[0]["conversation_id"])) == rows
    assert len(call(reader, "conversation", "home postgres", max_messages=2)) == 2
    # as_of: only the messages sent by then
    first = rows[0]["sent_at"]
    assert [r["body"] for r in call(reader, "conversation", "home postgres", as_of=first)] == [
        rows[0]["body"]
    ]
    assert call(reader, "conversation", "home postgres", as_of=first - timedelta(seconds=1)) == []
    whatsapp = call(reader, "conversation", "Jane Doe")
    assert [r["sender"] for r in whatsapp] == ["Jane Doe", "Sam Rivera", "Jane Doe"]
    assert [r["is_owner"] for r in whatsapp] == [False, True, False]


def test_conversation_refuses_ambiguous_and_unknown_titles(reader):
    with pytest.raises(
        BAD, match=r"conversation 'o' matches \d conversations: \d+ 'Home Postgres' \(chatgpt\)"
    ):
        call(reader, "conversation", "o")
    with pytest.raises(BAD, match="conversation 'Nothing like it' names no conversation"):
        call(reader, "conversation", "Nothing like it")
    with pytest.raises(BAD, match="conversation must be a conversation id or a title"):
        call(reader, "conversation", " ")
    with pytest.raises(BAD, match="names no conversation"):
        call(reader, "conversation", "%")


def test_person_history_across_sources(reader):
    rows = call(reader, "person_history", "sam")
    assert [(r["person"], r["source"], r["handle"], r["is_owner"], r["messages"]) for r in rows] == [
        ("Me", "jsonl", "Sam Rivera", True, 1),
        ("Me", "whatsapp", "Sam Rivera", True, 1),
    ]
    owner = call(reader, "person_history", "me")
    assert {(r["source"], r["handle"]) for r in owner} >= {
        ("chatgpt", "user"),
        ("jsonl", "Sam Rivera"),
        ("whatsapp", "Sam Rivera"),
    }
    jane = call(reader, "person_history", "JANE")
    assert [(r["source"], r["messages"], r["conversations"]) for r in jane] == [("whatsapp", 2, 1)]
    assert str(jane[0]["first_seen"]).startswith("2024-03-12") and str(jane[0]["last_seen"]).startswith(
        "2024-03-13"
    )
    assert len(call(reader, "person_history", "a", max_results=1)) == 1
    # as_of: the messages sent by then; someone who had not written yet is not listed
    then = call(reader, "person_history", "JANE", as_of=jane[0]["first_seen"])
    assert [(r["messages"], r["first_seen"], r["last_seen"]) for r in then] == [
        (1, jane[0]["first_seen"], jane[0]["first_seen"])
    ]
    assert call(reader, "person_history", "JANE", as_of=jane[0]["first_seen"] - timedelta(seconds=1)) == []
    with pytest.raises(BAD, match="name must be a name or handle"):
        call(reader, "person_history", "")


# -- the catalog ----------------------------------------------------------------------------


def test_every_exo_function_and_view_has_a_comment(graph):
    with graph.db.connect() as conn:
        missing = conn.execute(
            """select p.oid::regprocedure::text
               from pg_proc p
               where p.pronamespace = 'exo'::regnamespace and obj_description(p.oid, 'pg_proc') is null
               union all
               select c.oid::regclass::text
               from pg_class c
               where c.relnamespace = 'exo'::regnamespace and c.relkind in ('v', 'm', 'r', 'p')
                 and obj_description(c.oid, 'pg_class') is null
               order by 1"""
        ).fetchall()
    assert missing == []


def test_every_exo_function_and_view_is_the_readers(graph):
    with graph.db.connect() as conn:
        denied = conn.execute(
            """select p.oid::regprocedure::text from pg_proc p
               where p.pronamespace = 'exo'::regnamespace
                 and not has_function_privilege('exo_reader', p.oid, 'execute')
               union all
               select c.oid::regclass::text from pg_class c
               where c.relnamespace = 'exo'::regnamespace and c.relkind in ('v', 'm', 'r', 'p')
                 and not has_table_privilege('exo_reader', c.oid, 'select')"""
        ).fetchall()
    assert denied == []


def test_every_column_of_every_exo_view_reads_for_the_reader(graph):
    with graph.db.connect() as conn:
        views = [
            r[0] for r in conn.execute("select viewname from pg_views where schemaname = 'exo' order by 1")
        ]
    assert "workspaces" in views
    with graph.db.connect("exo_reader") as conn:
        for view in views:  # a view runs its functions with the caller's privileges
            conn.execute(sql.SQL("select * from exo.{}").format(sql.Identifier(view))).fetchall()


API_CALLS = [
    "select exo.status()",
    "select * from exo.search_entities()",
    "select * from exo.search_entities('a', 'Person', array['technical'], 5, array['x'])",
    "select exo.dossier('Ann Lee')",
    "select exo.dossier('Iris Calder', 'technical', array['x'])",
    "select exo.cross_document_entities()",
    "select exo.cross_document_entities(1, array['personal'], 10)",
    "select exo.cross_document_entities(1, array['personal'], 10, array['x'])",
    "select * from exo.related('Hub Corp')",
    "select * from exo.related('Hub Corp', 'technical', 3, 10, array['x'])",
    "select * from exo.timeline('Iris Calder')",
    "select * from exo.timeline('Iris Calder', 'technical', array['x'], 10)",
    "select exo.document('t1.md')",
    "select * from exo.documents()",
    "select * from exo.documents(array['failed', 'quarantined'], '*.md', 10, array['x'])",
    "select * from exo.conversation('Story')",
    "select * from exo.conversation('Story', 10, array['x'])",
    "select * from exo.person_history('Ann')",
    "select * from exo.person_history('Ann', 10, array['x'])",
    "select * from exo.cypher('technical', 'MATCH (n) RETURN n')",
    "select * from exo.cypher('personal', 'MATCH (n) RETURN n', 10, array['Walter Rivera'])",
    "select exo.version()",
    "select * from exo.search_messages('postgres')",
    "select * from exo.search_messages('postgres', 5, array['x'])",
    "select exo.temporal_signal('in 2013')",
]


@pytest.mark.parametrize("statement", API_CALLS)
def test_each_api_function_runs_for_the_reader(graph, statement):
    with graph.db.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
        conn.execute(statement).fetchall()


def test_every_api_function_of_the_api_files_is_exercised():
    """A new exo function in sql/5NN_*.sql (entities, cypher, documents, conversations, status)
    gets a line in API_CALLS."""
    files = sorted(SQL_DIR.glob("5[0-9][0-9]_*.sql"))
    assert len(files) >= 5
    text = "\n".join(f.read_text() for f in files)
    defined = set(re.findall(r"create or replace function exo\.(\w+)\(", text))
    called = {m for s in API_CALLS for m in re.findall(r"exo\.(\w+)\(", s)}
    assert defined and defined <= called


# -- the Python face ------------------------------------------------------------------------


def test_python_wrappers_call_the_sql_functions(graph):
    reader = api.Reader(graph.db.url("exo_reader"))
    assert api.status(reader)["graph"]["technical"]["entities"] >= 16
    assert [r["workspace"] for r in api.search_entities(reader, "iris") if r["withheld"] is None] == [
        "technical",
        "creative",
    ]
    assert len(api.dossier(reader, "Iris Calder")) == 2
    assert api.dossier(reader, entity_id(graph, "technical", "Iris Calder"))["workspace"] == "technical"
    assert api.dossier(reader, WALTER)["withheld"] is True
    assert api.dossier(reader, WALTER, bridge=[WALTER])["name"] == WALTER
    crossing = api.cross_document_entities(reader, min_documents=2, workspaces=["personal"])["entities"]
    assert [e["name"] for e in crossing] == ["Ann", "Ann Lee"]
    assert [r["name"] for r in api.related(reader, "Iris Calder", workspace="technical")] == [
        "Northwind Labs",
        "Tomas Okafor",
    ]
    assert len(api.timeline(reader, "Ann Lee", bridge=["Grandpa"])) == 3
    assert api.document(reader, graph.docs["t2"].id)["title"] == "Migration"
    assert len(api.conversation(reader, "Story")) == 2
    assert len(api.conversation(reader, "Story", max_messages=1, bridge=[WALTER])) == 1
    assert api.person_history(reader, "Jane")[0]["handle"] == "Jane Doe"
    assert api.person_history(reader, "Jane", bridge=["Grandpa"])[0]["messages"] == 2
    assert [r["conversation_title"] for r in api.search_messages(reader, "lighthouse", bridge=[WALTER])] == [
        "Story"
    ]
    assert (
        api.cross_document_entities(reader, min_documents=1, workspaces=["personal"], bridge=[WALTER])[
            "hints"
        ]
        == []
    )
    assert api.cypher(reader, "creative", "MATCH (n) RETURN n.name") == ["Iris Calder"]
    with pytest.raises(BAD, match="CREATE is refused"):
        api.cypher(reader, "creative", "CREATE (n) RETURN n")
