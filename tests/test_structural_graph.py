"""Exact edges from structure (issue 16): email headers, note frontmatter and chat windows give graph
rows of origin 'structure' without a model; they carry their evidence and dates, are rebuilt on
re-ingest without duplicates, go with their document, and survive a new extraction generation."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.chat import eml, jsonl, run_import, session, write
from support.db import configure
from support.graph import merge, rel

from exocortex.ingest import pipeline

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
T1 = datetime(2024, 3, 5, 18, 30, tzinfo=UTC)


def ingest(db, root: Path) -> None:
    pipeline.ingest(db.cfg, root, "personal", dbname=db.name)


def edges(conn, predicate: str | None = None) -> set[tuple]:
    """(subject, predicate, object, predicate_raw, document file) of every structural relation."""
    return set(
        conn.execute(
            """select s.name, r.predicate, o.name, r.predicate_raw, regexp_replace(d.path, '^.*/', '')
               from exo_private.relations r
               join exo_private.entities s on s.id = r.subject_id
               join exo_private.entities o on o.id = r.object_id
               join exo_private.documents d on d.id = r.document_id
               where r.origin = 'structure' and (%s::text is null or r.predicate = %s)""",
            (predicate, predicate),
        ).fetchall()
    )


def count_rows(conn) -> tuple[int, int]:
    return conn.execute(
        """select (select count(*) from exo_private.relations where origin = 'structure'),
                  (select count(*) from exo_private.mentions where origin = 'structure')"""
    ).fetchone()


@pytest.fixture
def mail(db, tmp_path):
    """The owner Sam (named, with an address), a message from Prudence to Sam and Bo copying Iris,
    Sam's reply to it, and a reply to a message not ingested yet."""
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
    configure(db, graph__owner_addresses=["Sam@Home.example"])
    root = tmp_path / "mail"
    root.mkdir()
    eml(root, "plans", '"Hale, Prudence" <p.hale@example.org>', '"S. R." <sam@home.example>, Bo Lund <bo@example.org>',
        T0, "a1@example.org", cc='"Iris Lund" <iris@example.org>')  # fmt: skip
    eml(root, "reply", "sam@home.example", "Prudence Hale <p.hale@example.org>", T1, "b2@home.example",
        in_reply_to="a1@example.org")  # fmt: skip
    eml(root, "early", "Bo Lund <bo@example.org>", "Prudence Hale <p.hale@example.org>", T1, "c3@example.org",
        in_reply_to="d4@example.org")  # fmt: skip
    ingest(db, root)
    return db, root


def test_email_headers_become_dated_edges_between_people_with_their_evidence(mail):
    db, _ = mail
    with db.connect() as conn:
        assert edges(conn) == {
            ("Prudence Hale", "WROTE_TO", "Sam Rivera", "to", "plans.eml"),  # the owner, by address
            ("Prudence Hale", "WROTE_TO", "Bo Lund", "to", "plans.eml"),
            ("Prudence Hale", "COPIED", "Iris Lund", "cc", "plans.eml"),
            ("Sam Rivera", "WROTE_TO", "Prudence Hale", "to", "reply.eml"),
            ("Sam Rivera", "REPLIED_TO", "Prudence Hale", "in-reply-to", "reply.eml"),
            ("Bo Lund", "WROTE_TO", "Prudence Hale", "to", "early.eml"),
        }
        # dated by the Date header; one message each; the evidence is the message's first window and chunk
        dates = conn.execute(
            """select distinct r.first_at, r.last_at, r.message_count from exo_private.relations r
               join exo_private.documents d on d.id = r.document_id
               where r.origin = 'structure' and d.path like '%%plans.eml'"""
        ).fetchall()
        assert dates == [(T0, T0, 1)]
        bad = conn.execute(
            """select count(*) from exo_private.relations r
               join exo_private.extraction_windows w on w.id = r.window_id
               where r.origin = 'structure' and (w.document_id <> r.document_id or w.ordinal <> 0)"""
        ).fetchone()[0]
        assert bad == 0
        mentions = conn.execute(
            """select e.name, e.is_owner, count(*) filter (where c.ordinal = 0 and c.document_id = m.document_id)
               from exo_private.mentions m
               join exo_private.entities e on e.id = m.entity_id
               left join exo_private.chunks c on c.id = m.chunk_id
               where m.origin = 'structure' group by e.name, e.is_owner"""
        ).fetchall()
        assert sorted(mentions) == [
            ("Bo Lund", False, 2), ("Iris Lund", False, 1), ("Prudence Hale", False, 3), ("Sam Rivera", True, 2),
        ]  # fmt: skip
        # the addresses are identity evidence of the names they came with
        addresses = conn.execute(
            "select distinct canonical_key, address from exo_private.entity_addresses order by 1, 2"
        ).fetchall()
        assert addresses == [
            ("bo lund", "bo@example.org"), ("iris lund", "iris@example.org"),
            ("prudence hale", "p.hale@example.org"), ("sam rivera", "sam@home.example"),
        ]  # fmt: skip
        assert not conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall()
    # The timeline says why a message named only in its headers is there
    with db.connect("exo_reader") as conn:
        timeline = conn.execute(
            "select regexp_replace(path, '^.*/', ''), excerpt from exo.timeline('Prudence Hale') order by 1"
        ).fetchall()
    assert [(name, excerpt.split("] ")[0]) for name, excerpt in timeline] == [
        ("early.eml", "[structure: WROTE_TO (object)"),
        ("plans.eml", "[structure: COPIED, WROTE_TO"),
        ("reply.eml", "[structure: REPLIED_TO (object), WROTE_TO (object)"),
    ]
    assert all(excerpt.endswith("See you at the allotment on Saturday.") for _, excerpt in timeline)


def test_a_reply_ingested_before_its_message_links_once_the_message_arrives(mail):
    db, root = mail
    eml(
        root,
        "original",
        "Prudence Hale <p.hale@example.org>",
        "Bo Lund <bo@example.org>",
        T0,
        "d4@example.org",
    )
    ingest(db, root)
    with db.connect() as conn:
        assert ("Bo Lund", "REPLIED_TO", "Prudence Hale", "in-reply-to", "early.eml") in edges(
            conn, "REPLIED_TO"
        )


def test_reingest_is_idempotent_a_changed_header_replaces_and_a_deleted_message_takes_its_edges(mail):
    db, root = mail
    with db.connect() as conn:
        before, counts = edges(conn), count_rows(conn)
        docs = [r[0] for r in conn.execute("select id from exo_private.documents where path like '%%.eml'")]
        conn.execute("select exo_private.link_structure(%s)", (docs,))
        conn.execute("select exo_private.link_structure(%s)", (docs,))
        assert edges(conn) == before and count_rows(conn) == counts

    eml(root, "plans", "Prudence Hale <p.hale@example.org>", "Bo Lund <bo@example.org>", T0, "a1@example.org")
    ingest(db, root)
    with db.connect() as conn:
        plans = {e for e in edges(conn) if e[4] == "plans.eml"}
        assert plans == {("Prudence Hale", "WROTE_TO", "Bo Lund", "to", "plans.eml")}
        # Iris was named only in the old header: her entity went with it
        assert not conn.execute(
            "select 1 from exo_private.entities where canonical_key = 'iris lund'"
        ).fetchone()

    (root / "reply.eml").unlink()
    ingest(db, root)
    with db.connect() as conn:
        assert not {e for e in edges(conn) if e[4] == "reply.eml"}
        assert not conn.execute(
            """select 1 from exo_private.entity_addresses a join exo_private.documents d on d.id = a.document_id
               where d.path like '%%reply.eml'"""
        ).fetchone()
        assert not conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall()


def test_a_generation_change_replaces_model_relations_and_keeps_structural_ones(mail):
    db, _ = mail
    with db.connect() as conn:
        window = conn.execute(
            """select w.id from exo_private.extraction_windows w join exo_private.documents d on d.id = w.document_id
               where d.path like '%%plans.eml'"""
        ).fetchone()[0]
        merge(
            conn,
            window,
            [{"name": "allotment", "type": "Topic"}, {"name": "Saturday", "type": "Date"}],
            [rel("allotment", "meets on", "Saturday")],  # what the body says
        )
        structural = edges(conn)
        assert (
            conn.execute("select count(*) from exo_private.relations where origin = 'model'").fetchone()[0]
            == 1
        )
        gen = conn.execute("select exo_private.bump_generation('personal', 'another-model')").fetchone()[0]
        assert (
            conn.execute("select count(*) from exo_private.relations where origin = 'model'").fetchone()[0]
            == 0
        )
        assert edges(conn) == structural
        assert conn.execute(
            "select distinct generation from exo_private.relations where origin = 'structure'"
        ).fetchall() == [(gen,)]
        assert not conn.execute("select * from exo_private.graph_disagreements('personal')").fetchall()


def test_frontmatter_people_and_places_become_entities_and_keyed_edges(db, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "allotment-meeting.md").write_text(
        "---\ndate: 2024-05-01\nattendees: [Ann Ward, '[[Bo Lund]]']\nauthor: Cy Moss\nlocation: Larkhaven\n"
        "crew: Dee Park; Eli Ray\n---\n# Allotment committee\n\nWe agreed on the new water butts.\n"
    )
    configure(db, graph__people_keys={"crew": "worked with"})  # merged into the defaults
    ingest(db, root)
    with db.connect() as conn:
        assert edges(conn) == {
            ("Ann Ward", "ATTENDED", "Bo Lund", "attendees", "allotment-meeting.md"),
            ("Cy Moss", "AUTHORED", "Ann Ward", "author", "allotment-meeting.md"),
            ("Cy Moss", "AUTHORED", "Bo Lund", "author", "allotment-meeting.md"),
            ("Cy Moss", "AUTHORED", "Dee Park", "author", "allotment-meeting.md"),
            ("Cy Moss", "AUTHORED", "Eli Ray", "author", "allotment-meeting.md"),
            ("Dee Park", "WORKED_WITH", "Eli Ray", "crew", "allotment-meeting.md"),
            *{(p, "LOCATED_IN", "Larkhaven", "location", "allotment-meeting.md")
              for p in ("Ann Ward", "Bo Lund", "Cy Moss", "Dee Park", "Eli Ray")},
        }  # fmt: skip
        assert conn.execute(
            "select type::text from exo_private.entities where name = 'Larkhaven'"
        ).fetchone() == ("Place",)
        dated = conn.execute(
            "select distinct first_at::date, message_count from exo_private.relations where origin = 'structure'"
        ).fetchall()
        assert dated == [(datetime(2024, 5, 1).date(), None)]


def test_talked_with_sums_first_and_last_message_and_counts_across_windows(db, tmp_path):
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Sam Rivera')")
    later = datetime(2024, 5, 20, 19, 0, tzinfo=UTC)
    export = jsonl(
        *session("iris", T0, ("Me", "Morning!"), ("Iris Calder", "Hi"), ("Iris Calder", "Climbing later?")),
        *session(
            "iris", later, ("Iris Calder", "I start at Brightwave on Monday."), ("Me", "Congratulations!")
        ),
    )
    run_import(db, write(tmp_path, "chats.jsonl", export), "jsonl")
    with db.connect() as conn:
        rows = conn.execute(
            """select s.name, o.name, x.first_at, x.last_at, x.message_count, x.windows
               from exo_private.structural_edges x
               join exo_private.entities s on s.id = x.subject_id
               join exo_private.entities o on o.id = x.object_id
               where x.predicate = 'TALKED_WITH'"""
        ).fetchall()
        assert [sorted(r[:2]) + list(r[2:]) for r in rows] == [
            ["Iris Calder", "Sam Rivera", T0, datetime(2024, 5, 20, 19, 1, tzinfo=UTC), 5, 2]
        ]


def test_structural_edges_can_be_switched_off(db, tmp_path):
    configure(db, graph__structural=False)
    root = tmp_path / "mail"
    root.mkdir()
    eml(root, "plans", "Prudence Hale <p.hale@example.org>", "Bo Lund <bo@example.org>", T0, "a1@example.org")
    ingest(db, root)
    with db.connect() as conn:
        assert count_rows(conn) == (0, 0)


def test_wiki_links_to_people_known_from_structure_become_mentions_and_links(db, tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    # "A" sorts first: the person's own note is read before the note that names her
    (root / "A Prudence Hale.md").write_text(
        "---\ntitle: Prudence Hale\n---\nNeighbour. Sister of [[Bo Lund]]; see [[Garden notes]].\n"
    )
    (root / "diary.md").write_text("# Tuesday\n\nSaw [[Prudence Hale|Pru]] at the market.\n")
    (root / "meeting.md").write_text(
        "---\nattendees: [Prudence Hale, Bo Lund]\n---\n# Allotment\n\nWater butts.\n"
    )
    ingest(db, root)
    with db.connect() as conn:
        assert edges(conn, "LINKS_TO") == {
            ("Prudence Hale", "LINKS_TO", "Bo Lund", "wiki link", "A Prudence Hale.md")
        }
        mentioned = conn.execute(
            """select e.name, m.surface from exo_private.mentions m
               join exo_private.entities e on e.id = m.entity_id
               join exo_private.documents d on d.id = m.document_id
               where m.origin = 'structure' and d.path = 'diary.md'"""
        ).fetchall()
        assert mentioned == [("Prudence Hale", "Prudence Hale")]
        # a link to a note that names nobody known stays a link between documents
        assert not conn.execute(
            "select 1 from exo_private.entities where canonical_key = 'garden notes'"
        ).fetchone()


def test_naming_the_owner_later_links_the_emails_of_their_addresses(db, tmp_path):
    configure(db, graph__owner_addresses=["sam@home.example"])
    root = tmp_path / "mail"
    root.mkdir()
    eml(
        root,
        "plans",
        "Prudence Hale <p.hale@example.org>",
        '"S. R." <sam@home.example>',
        T0,
        "a1@example.org",
    )
    ingest(db, root)
    with db.connect() as conn:
        assert edges(conn) == set()  # the owner's address names nobody before the owner is named
        conn.execute("select exo_private.set_owner('Sam Rivera')")
        assert edges(conn) == {("Prudence Hale", "WROTE_TO", "Sam Rivera", "to", "plans.eml")}


def test_the_pairs_of_one_documents_names_follow_the_header_and_key_rules(db):
    """structural_pairs alone: a sender to its To and Cc and to whom it replied; one key's people
    pairwise, an author to everyone, everyone to each place; at is the subject's."""
    names = [  # entity, source, role, ordinal, type, predicate, at
        (1, "email", "from", 0, "Person", None, T0),
        (2, "email", "to", 0, "Person", "WROTE_TO", T0),
        (3, "email", "cc", 0, "Person", "COPIED", T0),
        (4, "email", "from", 1, "Person", None, T0),  # a second author writes to nobody
        (5, "frontmatter", "attendees", 0, "Person", "ATTENDED", T1),
        (6, "frontmatter", "attendees", 1, "Person", "ATTENDED", T1),
        (7, "frontmatter", "author", 0, "Person", "AUTHORED", T1),
        (8, "frontmatter", "location", 0, "Place", "LOCATED_IN", T1),
    ]
    with db.connect() as conn:
        pairs = set(
            conn.execute(
                """select subject_id, object_id, predicate_raw, predicate, at, message_count
                   from exo_private.structural_pairs(%s, %s, %s, %s, %s::exo_private.entity_type[], %s, %s, %s)""",
                (*([n[i] for n in names] for i in range(7)), [9]),
            ).fetchall()
        )
    assert pairs == {
        (1, 2, "to", "WROTE_TO", T0, 1),
        (1, 3, "cc", "COPIED", T0, 1),
        (1, 9, "in-reply-to", "REPLIED_TO", T0, 1),
        (5, 6, "attendees", "ATTENDED", T1, None),
        *{(7, b, "author", "AUTHORED", T1, None) for b in (5, 6)},
        *{(a, 8, "location", "LOCATED_IN", T1, None) for a in (5, 6, 7)},
    }
