"""Two things that share a name (issue 16): one entity per (workspace, canonical key) unless the
evidence clearly says the name means two. The structure says so when a note gives a name as a
place and a header or a chat gives it as a person; a person says so with exo entity split
--address or --type. Each sense keeps its own mentions and edges, in every later generation, and
merging the second sense back makes the name one thing again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from support.chat import eml, jsonl, mail, mbox, run_import, session, write
from support.db import configure
from support.graph import merge, person, rel

from exocortex.cli import main
from exocortex.ingest import pipeline

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
T1 = datetime(2024, 3, 5, 18, 30, tzinfo=UTC)


def ingest(db, root: Path) -> None:
    pipeline.ingest(db.cfg, root, "personal", dbname=db.name)


def senses(conn, key: str) -> list[tuple]:
    """(sense, type) of every entity of the key in the personal workspace's current generation."""
    return conn.execute(
        """select e.sense, e.type::text from exo_private.entities e
           where e.canonical_key = %s and e.workspace = 'personal'
             and e.generation = (select max(generation) from exo_private.extraction_generations
                                 where workspace = e.workspace)
           order by e.sense""",
        (key,),
    ).fetchall()


def sensed_edges(conn) -> set[tuple]:
    """(subject, its sense, predicate, object, its sense) of every relation."""
    return set(
        conn.execute(
            """select s.name, s.sense, r.predicate, o.name, o.sense from exo_private.relations r
               join exo_private.entities s on s.id = r.subject_id
               join exo_private.entities o on o.id = r.object_id"""
        ).fetchall()
    )


def window_of(conn, filename: str) -> int:
    return conn.execute(
        """select w.id from exo_private.extraction_windows w join exo_private.documents d on d.id = w.document_id
           where d.path like %s""",
        ("%" + filename,),
    ).fetchone()[0]


def note(root, name: str, location: str) -> None:
    (root / f"{name}.md").write_text(
        f"---\ndate: 2024-05-01\nattendees: [Ann Ward]\nlocation: {location}\n---\n# Trip\n\nWe went to {location}.\n"
    )


@pytest.mark.parametrize("note_first", [True, False], ids=["note-first", "mail-first"])
def test_a_correspondent_and_a_place_of_one_name_are_two_entities_whatever_came_first(
    db, tmp_path, note_first
):
    root = tmp_path / "vault"
    root.mkdir()
    if note_first:
        note(root, "trip", "Jordan")
        ingest(db, root)
    eml(root, "hello", "Jordan <jordan@example.org>", "Ann Ward <ann@example.org>", T0, "j1@example.org")
    (root / "went.md").write_text("# Holiday\n\nTwo weeks in Jordan, mostly Petra.\n")
    (root / "met.md").write_text("# Lunch\n\nJordan says the choir needs tenors.\n")
    if not note_first:
        ingest(db, root)
        note(root, "trip", "Jordan")
    ingest(db, root)
    with db.connect() as conn:
        assert senses(conn, "jordan") == [("", "Person"), ("place", "Place")]
        assert conn.execute(
            "select how, anchor_kind, anchor from exo_private.entity_senses where canonical_key = 'jordan'"
        ).fetchall() == [("structure", "type", "Place")]
        assert sensed_edges(conn) == {
            ("Jordan", "", "WROTE_TO", "Ann Ward", ""),
            ("Ann Ward", "", "LOCATED_IN", "Jordan", "place"),
        }
        # the model's type of a mention says which it is: a Place is the place, else the person
        for name, type_ in (("went.md", "Place"), ("met.md", "Person")):
            merge(conn, window_of(conn, name), [{"name": "Jordan", "type": type_}])
        assert conn.execute(
            """select e.sense, regexp_replace(d.path, '^.*/', '') from exo_private.mentions m
               join exo_private.entities e on e.id = m.entity_id
               join exo_private.documents d on d.id = m.document_id
               where e.canonical_key = 'jordan' and m.origin = 'model' order by 1"""
        ).fetchall() == [("", "met.md"), ("place", "went.md")]
        assert not conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall()
        # kept by name: a new generation makes the two again
        conn.execute("select exo_private.bump_generation('personal', 'another-model')")
        assert senses(conn, "jordan") == [("", "Person"), ("place", "Place")]
        assert ("Ann Ward", "", "LOCATED_IN", "Jordan", "place") in sensed_edges(conn)


def test_a_place_whose_name_only_the_model_gives_as_a_person_stays_one_entity(db, tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    note(root, "trip", "Jordan")
    ingest(db, root)
    with db.connect() as conn:
        merge(conn, window_of(conn, "trip.md"), [person("Jordan")])
        assert senses(conn, "jordan") == [("", "Place")]  # a type conflict, decided by votes
        assert not conn.execute("select 1 from exo_private.entity_senses").fetchone()


def test_a_chat_participant_named_as_a_place_is_two_entities(db, tmp_path):
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
    run_import(
        db,
        write(tmp_path, "chats.jsonl", jsonl(*session("jo", T0, ("Me", "Hi"), ("Jordan", "Hello!")))),
        "jsonl",
    )
    root = tmp_path / "vault"
    root.mkdir()
    note(root, "trip", "Jordan")
    ingest(db, root)
    with db.connect() as conn:
        assert senses(conn, "jordan") == [("", "Person"), ("place", "Place")]
        assert ("Jordan", "", "TALKED_WITH", "Sam Rivera", "") in sensed_edges(conn) | {
            (o, os_, p, s, ss) for s, ss, p, o, os_ in sensed_edges(conn)
        }


@pytest.fixture
def namesakes(db, tmp_path):
    """Two people called Sam Lee, at two addresses, each writing to Ann; a model mention of each."""
    root = tmp_path / "mail"
    root.mkdir()
    eml(root, "from-a", "Sam Lee <sam@a.example>", "Ann Ward <ann@example.org>", T0, "a1@a.example",
        body="Sam Lee here, about the allotment, Ann Ward.")  # fmt: skip
    eml(root, "from-b", "Sam Lee <SLee@b.example>", "Ann Ward <ann@example.org>", T1, "b1@b.example",
        cc="Bo Lund <bo@example.org>", body="Sam Lee from the choir, with Bo Lund.")  # fmt: skip
    ingest(db, root)
    with db.connect() as conn:
        read_by_model(conn)
    return db


def read_by_model(conn) -> None:
    """What the model finds in the two messages: a relation in each."""
    for name, other, predicate in (
        ("from-a.eml", "Ann Ward", "neighbour of"),
        ("from-b.eml", "Bo Lund", "sings with"),
    ):
        merge(
            conn,
            window_of(conn, name),
            [person("Sam Lee"), person(other)],
            [rel("Sam Lee", predicate, other)],
        )


def test_a_person_splits_a_namesake_off_by_address_and_merges_it_back(namesakes):
    db = namesakes
    with db.connect("exo_writer") as conn:
        assert senses(conn, "sam lee") == [("", "Person")]  # two addresses alone are no clear evidence
        first = conn.execute(
            "select id from exo_private.entities where canonical_key = 'sam lee'"
        ).fetchone()[0]
        conn.execute("select exo_private.split_sense(%s, 'address', ' slee@B.example ')", (first,))
        assert senses(conn, "sam lee") == [("", "Person"), ("slee@b.example", "Person")]
        structural = {
            ("Sam Lee", "", "WROTE_TO", "Ann Ward", ""),
            ("Sam Lee", "slee@b.example", "WROTE_TO", "Ann Ward", ""),
            ("Sam Lee", "slee@b.example", "COPIED", "Bo Lund", ""),
        }
        split = structural | {
            ("Sam Lee", "", "NEIGHBOUR_OF", "Ann Ward", ""),
            ("Sam Lee", "slee@b.example", "SINGS_WITH", "Bo Lund", ""),  # the model's, in that message
        }
        assert sensed_edges(conn) == split
        assert not conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall()
        # a re-ingest and a new generation keep them apart
        conn.execute("select exo_private.link_structure(array(select id from exo_private.documents))")
        assert sensed_edges(conn) == split
        conn.execute("select exo_private.bump_generation('personal', 'another-model')")
        assert sensed_edges(conn) == structural
        read_by_model(conn)  # the new generation's model reads both again
        assert sensed_edges(conn) == split
        first, other = conn.execute(
            "select id from exo_private.entities where canonical_key = 'sam lee' order by sense"
        ).fetchall()
        # merging the second sense back: one thing again, and it stays one
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="keep the first sense"):
            conn.execute("select exo_private.merge_entities(%s, %s)", (other[0], first[0]))
        log_id = conn.execute("select exo_private.merge_entities(%s, %s)", (first[0], other[0])).fetchone()[0]
        assert senses(conn, "sam lee") == [("", "Person")]
        assert not conn.execute("select 1 from exo_private.entity_senses").fetchone()
        assert not conn.execute("select 1 from exo_private.entity_aliases").fetchone()
        conn.execute("select exo_private.link_structure(array(select id from exo_private.documents))")
        assert senses(conn, "sam lee") == [("", "Person")]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="two senses"):
            conn.execute("select exo_private.unmerge_entities(%s)", (log_id,))


def test_split_sense_refuses_what_the_evidence_does_not_hold(namesakes):
    db = namesakes
    configure(db, graph__owner_addresses=["sam@a.example"])
    with db.connect("exo_writer") as conn:
        sam = conn.execute("select id from exo_private.entities where canonical_key = 'sam lee'").fetchone()[
            0
        ]
        ann = conn.execute("select id from exo_private.entities where canonical_key = 'ann ward'").fetchone()[
            0
        ]
        for kind, anchor, message in (
            ("address", "nobody@example.org", "no email header"),
            ("address", "sam@a.example", "address of the owner"),
            ("type", "Person", "is a Person already"),
            ("type", "Planet", "must be one of"),
            ("name", "x", "address or type"),
        ):
            with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
                conn.execute("select exo_private.split_sense(%s, %s, %s)", (sam, kind, anchor))
        place = conn.execute("select exo_private.split_sense(%s, 'type', 'Place')", (sam,)).fetchone()[0]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="has a sense"):
            conn.execute("select exo_private.split_sense(%s, 'type', 'Place')", (sam,))
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="sense of"):
            conn.execute("select exo_private.split_sense(%s, 'type', 'Org')", (place,))
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="merges only into that name"):
            conn.execute("select exo_private.merge_entities(%s, %s)", (ann, place))
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_sense"):
            conn.execute(
                "select exo_private.upsert_entity('personal', 1, 'Person', 'sam lee', 'Sam Lee', false, 'x')"
            )


def test_a_namesake_of_the_owner_split_off_by_address_is_not_the_owner(db, tmp_path):
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Lee')")
    configure(db, graph__owner_addresses=["me@home.example"])
    root = tmp_path / "mail"
    root.mkdir()
    eml(root, "mine", "Sam Lee <me@home.example>", "Ann Ward <ann@example.org>", T0, "m1@home.example")
    eml(root, "theirs", "Sam Lee <sam@choir.example>", "Ann Ward <ann@example.org>", T1, "t1@choir.example")
    ingest(db, root)
    with db.connect("exo_writer") as conn:
        owner = conn.execute(
            "select id from exo_private.entities where is_owner and workspace = 'personal'"
        ).fetchone()[0]
        assert senses(conn, "sam lee") == [("", "Person")]  # by name, the owner wrote both
        conn.execute("select exo_private.split_sense(%s, 'address', 'sam@choir.example')", (owner,))
        assert conn.execute(
            """select e.sense, e.is_owner, regexp_replace(d.path, '^.*/', '') from exo_private.relations r
               join exo_private.entities e on e.id = r.subject_id
               join exo_private.documents d on d.id = r.document_id order by 3"""
        ).fetchall() == [("", True, "mine.eml"), ("sam@choir.example", False, "theirs.eml")]


def test_the_cli_splits_by_address_and_asks_for_an_id_when_a_name_means_two(namesakes, monkeypatch):
    db = namesakes
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    runner = CliRunner()
    result = runner.invoke(main, ["entity", "split", "Sam Lee", "--address", "slee@b.example"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the console wraps lines
    assert "means two things: the one of address slee@b.example is entity" in said
    result = runner.invoke(main, ["entity", "aliases", "Sam Lee"])
    said = " ".join(result.output.split())
    assert result.exit_code != 0 and "means 2 things in workspace personal" in said
    assert "sense slee@b.example" in said
    result = runner.invoke(main, ["entity", "split", "Sam Lee", "--alias", "Sam", "--type", "Place"])
    assert result.exit_code != 0 and "exactly one of" in " ".join(result.output.split())


def test_a_mail_archive_sender_split_off_by_address_is_the_namesake_in_its_threads(db, tmp_path):
    t2 = T1 + timedelta(minutes=10)
    archive = mbox(
        tmp_path,
        "mail.mbox",
        mail(
            "Sam Lee <sam@a.example>",
            "Ann Ward <ann@example.org>",
            "Allotment",
            T0,
            "a1@a.example",
            "Water butts?",
        ),
        mail(
            "Ann Ward <ann@example.org>",
            "Sam Lee <sam@a.example>",
            "Re: Allotment",
            T0 + timedelta(minutes=10),
            "a2@example.org",
            "Saturday.",
            in_reply_to="a1@a.example",
        ),
        mail(
            "Sam Lee <slee@b.example>", "Ann Ward <ann@example.org>", "Choir", T1, "b1@b.example", "Tenors?"
        ),
        mail(
            "Ann Ward <ann@example.org>",
            "Sam Lee <slee@b.example>",
            "Re: Choir",
            t2,
            "b2@example.org",
            "Two.",
            in_reply_to="b1@b.example",
        ),
    )
    run_import(db, archive, "mbox")
    talked = {("Sam Lee", "", "TALKED_WITH", "Ann Ward", ""), ("Ann Ward", "", "TALKED_WITH", "Sam Lee", "")}
    with db.connect("exo_writer") as conn:
        assert senses(conn, "sam lee") == [("", "Person")]
        assert len(sensed_edges(conn) & talked) == 1  # one edge a pair, whichever way round
        sam = conn.execute("select id from exo_private.entities where canonical_key = 'sam lee'").fetchone()[
            0
        ]
        conn.execute("select exo_private.split_sense(%s, 'address', 'slee@b.example')", (sam,))
        assert senses(conn, "sam lee") == [("", "Person"), ("slee@b.example", "Person")]
        threads = conn.execute(
            """select e.sense, c.title from exo_private.mentions m
               join exo_private.entities e on e.id = m.entity_id
               join exo_private.documents d on d.id = m.document_id
               join exo_private.chat_conversations c on c.id = d.conversation_id
               where e.canonical_key = 'sam lee' order by 1"""
        ).fetchall()
        assert threads == [("", "Allotment"), ("slee@b.example", "Choir")]
        pairs = {frozenset([(s, ss), (o, os_)]) for s, ss, _, o, os_ in sensed_edges(conn)}
        assert pairs == {
            frozenset([("Sam Lee", ""), ("Ann Ward", "")]),
            frozenset([("Sam Lee", "slee@b.example"), ("Ann Ward", "")]),
        }
        assert not conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall()


def test_the_dossier_of_a_name_that_means_two_things_says_which_is_which(namesakes):
    db = namesakes
    with db.connect("exo_writer") as conn:
        sam = conn.execute("select id from exo_private.entities where canonical_key = 'sam lee'").fetchone()[
            0
        ]
        conn.execute("select exo_private.split_sense(%s, 'address', 'slee@b.example')", (sam,))
    with db.connect("exo_reader") as conn:
        dossiers = conn.execute("select exo.dossier('Sam Lee')").fetchone()[0]
    assert [(d["sense"], {r["name"] for r in d["relations"]["out"]}) for d in dossiers] == [
        (None, {"Ann Ward"}),
        ("slee@b.example", {"Ann Ward", "Bo Lund"}),
    ]
