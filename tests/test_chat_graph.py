"""Chat participants in the graph (issue 13, "identities link to entities"): every sender who is a
person is a Person entity mentioned in the chat windows they wrote in, the owner their own entity,
so that dossier, related, timeline and person_history join chats and documents; these structural
rows survive extraction and come back with a new generation."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from support.chat import chatgpt_export, jsonl, msg, run_import, session, write
from support.graph import add_document, merge, person, rel

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
T1 = datetime(2024, 5, 20, 19, 0, tzinfo=UTC)


def export(tmp_path):
    """Sam (the owner) and Iris Calder over two sessions; a group chat where a phone number without
    a name also writes; a ChatGPT-style source is not needed: its assistant is filtered by name."""
    return write(
        tmp_path,
        "chats.jsonl",
        jsonl(
            *session(
                "iris",
                T0,
                ("Me", "Morning! How was the climbing club?"),
                ("Iris Calder", "Great, I finally topped the blue route."),
                conversation_title="Iris",
            ),
            *session(
                "iris", T1, ("Iris Calder", "I start at Brightwave on Monday."), ("Me", "Congratulations!")
            ),
            *session(
                "group",
                T1,
                ("Iris Calder", "Dinner on Friday?"),
                ("+44 7700 900123", "Count me in"),
                ("Bo Lund", "Me too"),
            ),
        ),
    )


def structural(conn, name, workspace="personal"):
    """(entity id, windows mentioning it structurally, is_owner) of the Person named name."""
    return conn.execute(
        """select e.id, count(m.*) filter (where m.origin = 'structure'), e.is_owner
           from exo_private.entities e
           left join exo_private.mentions m on m.entity_id = e.id
           where e.type = 'Person' and e.canonical_key = exo_private.canonical_key(%s) and e.workspace = %s
           group by e.id""",
        (name, workspace),
    ).fetchall()


@pytest.fixture
def imported(db, tmp_path):
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
    run_import(db, export(tmp_path), "jsonl")
    return db


def test_every_named_sender_is_a_person_mentioned_in_the_windows_they_wrote_in(imported):
    with imported.connect() as conn:
        windows = dict(
            conn.execute(
                """select c.external_id, count(*) from exo_private.chat_windows w
                   join exo_private.chat_conversations c on c.id = w.conversation_id group by 1"""
            ).fetchall()
        )
        (iris,) = structural(conn, "Iris Calder")
        (owner,) = structural(conn, "Sam Rivera")
        (bo,) = structural(conn, "Bo Lund")
        assert iris[1] == windows["iris"] + windows["group"]  # she wrote in every window
        assert owner[2] and owner[1] == windows["iris"]  # the owner's own entity, not a new one
        assert bo[1] == windows["group"]
        # a bare phone number names nobody
        assert (
            conn.execute("select count(*) from exo_private.entities where name like '+44%%'").fetchone()[0]
            == 0
        )
        talked = conn.execute(
            """select s.name, o.name, count(*) from exo_private.relations r
               join exo_private.entities s on s.id = r.subject_id
               join exo_private.entities o on o.id = r.object_id
               where r.predicate = 'TALKED_WITH' and r.origin = 'structure'
               group by 1, 2 order by 1, 2"""
        ).fetchall()
        pairs = {frozenset((a, b)) for a, b, _ in talked}
        assert pairs == {
            frozenset(("Iris Calder", "Sam Rivera")),
            frozenset(("Iris Calder", "Bo Lund")),
        }
        # projected into the workspace's graph like extracted ones
        assert conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall() == []


def test_dossier_related_timeline_and_person_history_join_chats_and_documents(imported):
    with imported.connect() as conn:
        note = add_document(conn, "personal", ["Iris Calder recommended The Quiet Harbour to me."])
        merge(
            conn,
            note.windows[0],
            [person("Iris Calder"), {"name": "The Quiet Harbour", "type": "Topic"}],
            [rel("Iris Calder", "recommended", "The Quiet Harbour")],
        )
    with imported.connect("exo_reader") as reader:
        (history,) = [r for r in reader.execute("select * from exo.person_history('Iris')").fetchall()]
        entity_ids = history[5]
        assert len(entity_ids) == 1
        (dossier,) = reader.execute("select exo.dossier(%s)", (str(entity_ids[0]),)).fetchone()
        dossier = dossier[0] if isinstance(dossier, list) else dossier
        paths = {m["path"] for m in dossier["mentions"]}
        assert {"chat/jsonl/iris", "chat/jsonl/group"} <= paths and any(p.startswith("doc-") for p in paths)
        related = {r[0] for r in reader.execute("select name from exo.related('Iris Calder')").fetchall()}
        assert {"Sam Rivera", "Bo Lund", "The Quiet Harbour"} <= related
        dates = [
            r[0]
            for r in reader.execute(
                "select written_at from exo.timeline('Iris Calder') where written_at is not null"
            ).fetchall()
        ]
        assert str(T0.date()) in {str(d) for d in dates} and str(T1.date()) in {str(d) for d in dates}


def test_structural_rows_survive_extraction_and_return_with_a_new_generation(imported):
    with imported.connect() as conn:
        window = conn.execute(
            """select x.id from exo_private.extraction_windows x
               join exo_private.documents d on d.id = x.document_id where d.path = 'chat/jsonl/iris'
               order by x.ordinal limit 1"""
        ).fetchone()[0]
        before = structural(conn, "Iris Calder")[0][1]
        merge(conn, window, [person("Climbing Club")])  # the model names someone else only
        assert structural(conn, "Iris Calder")[0][1] == before
        gen = conn.execute("select exo_private.bump_generation('personal', 'another-model')").fetchone()[0]
        ((iris_id, after, _),) = structural(conn, "Iris Calder")
        assert after == before
        assert (
            conn.execute("select generation from exo_private.entities where id = %s", (iris_id,)).fetchone()[
                0
            ]
            == gen
        )
        assert (
            conn.execute(
                "select count(*) from exo_private.relations where predicate = 'TALKED_WITH' and generation = %s",
                (gen,),
            ).fetchone()[0]
            > 0
        )
        assert conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall() == []


def test_naming_the_owner_after_an_import_links_their_windows(db, tmp_path):
    run_import(db, export(tmp_path), "jsonl")
    with db.connect() as conn:
        assert structural(conn, "Sam Rivera") == []  # an unnamed owner has no entity yet
        conn.execute("select exo_private.set_owner('Sam Rivera')")
        ((_, windows, is_owner),) = structural(conn, "Sam Rivera")
        assert is_owner and windows > 0


def test_a_grown_export_links_only_the_new_windows(imported, tmp_path):
    grown = write(
        tmp_path,
        "more.jsonl",
        jsonl(
            msg(
                conversation="iris",
                sender="Iris Calder",
                text="Guess what, I got a dog!",
                sent_at="2024-06-01T10:00:00Z",
                message_id="late-1",
            )
        ),
    )
    with imported.connect() as conn:
        before = structural(conn, "Iris Calder")[0][1]
    run_import(imported, grown, "jsonl")
    with imported.connect() as conn:
        assert structural(conn, "Iris Calder")[0][1] == before + 1


def test_the_chatgpt_assistant_is_not_a_person_and_the_owner_is(imported, tmp_path):
    run_import(imported, write(tmp_path, "conversations.json", json.dumps(chatgpt_export())), "chatgpt")
    with imported.connect() as conn:
        assert structural(conn, "ChatGPT") == []
        ((_, _, is_owner),) = structural(conn, "Sam Rivera")
        owner_windows = conn.execute(
            """select count(*) from exo_private.chat_windows w
               join exo_private.chat_conversations c on c.id = w.conversation_id
               where c.source = 'chatgpt' and exists (
                   select 1 from exo_private.chat_messages m join exo_private.chat_identities i on i.id = m.identity_id
                   where m.id = any(w.message_ids) and i.handle = 'user')"""
        ).fetchone()[0]
        assert is_owner and owner_windows > 0
        assert (
            conn.execute(
                """select count(*) from exo_private.mentions m join exo_private.documents d on d.id = m.document_id
               join exo_private.chat_conversations c on c.id = d.conversation_id
               where c.source = 'chatgpt' and m.origin = 'structure'"""
            ).fetchone()[0]
            == owner_windows
        )  # the owner where they wrote, nobody else
