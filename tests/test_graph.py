"""The knowledge graph in SQL: predicate labels, merging extractions, generations, the
owner, the AGE projection kept in step with the tables, and hub-safe traversal."""

from __future__ import annotations

import random
import re
import threading
import time
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb
from support.graph import add_document, generation, merge, org, person, rel

from exocortex.ingest import pipeline

LABEL = re.compile(r"^[A-Z][A-Z0-9_]{0,62}$")
NO_FACTS = {"facts_recorded": 0, "facts_undated": 0, "facts_skipped": 0}  # merges without attributes


def disagreements(conn, workspace: str) -> list[tuple]:
    return conn.execute("select * from exo_private.graph_disagreements(%s)", (workspace,)).fetchall()


def scalar(conn, query: str, *params):
    return conn.execute(query, params).fetchone()[0]


def cypher(conn, workspace: str, query: str, columns: int = 1) -> list[tuple]:
    """Run Cypher on a workspace's graph; agtype values come back as text."""
    cols = ", ".join(f"c{i} ag_catalog.agtype" for i in range(columns))
    statement = f"select * from ag_catalog.cypher('graph_{workspace}', $q${query}$q$) as ({cols})"
    conn.execute("set search_path = ag_catalog, public")  # Cypher's operators live there
    return [tuple(str(v) for v in row) for row in conn.execute(statement).fetchall()]


def graph_size(db, workspace: str) -> tuple[int, int]:
    """(vertices, edges) of a workspace's graph, read as the admin (the writer may not)."""
    with db.connect() as conn:
        return (
            scalar(conn, f"select count(*) from graph_{workspace}._ag_label_vertex"),
            scalar(conn, f"select count(*) from graph_{workspace}._ag_label_edge"),
        )


# -- predicates ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("works at", "WORKS_AT"),
        ("is the CEO of!", "IS_THE_CEO_OF"),
        ("  lives \t in  ", "LIVES_IN"),
        ("works_at", "WORKS_AT"),
        ("reportsTo", "REPORTSTO"),
        ("2nd cousin", "RELATED_TO_2ND_COUSIN"),
        ("doesn't know", "DOESNT_KNOW"),
        ("épouse de", "EPOUSE_DE"),
        ("Straße in", "STRASSE_IN"),
        ("работает в", "RELATED_TO"),
        ("!!!", "RELATED_TO"),
        ("", "RELATED_TO"),
        (None, "RELATED_TO"),
        ("a-" * 40, ("A_" * 32)[:63].rstrip("_")),
        ("x" * 100, "X" * 63),
    ],
)
def test_normalise_predicate(db, raw, label):
    with db.connect() as conn:
        assert scalar(conn, "select exo_private.normalise_predicate(%s)", raw) == label


def test_normalise_predicate_always_gives_a_valid_label(db):
    rng = random.Random(3)
    alphabet = "aZ9 _-'!é\u0416\u00df\t.$\\\"`()[]{}:"
    raws = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90))) for _ in range(300)]
    with db.connect() as conn:
        labels = conn.execute(
            "select exo_private.normalise_predicate(r) from unnest(%s::text[]) r", (raws,)
        ).fetchall()
    bad = [(raw, label) for raw, (label,) in zip(raws, labels, strict=True) if not LABEL.match(label)]
    assert bad == []


# -- merging ---------------------------------------------------------------------------


def test_one_entity_per_name_per_workspace(db):
    spellings = ["Jane Doe", "jane  doe", "JANE DOE", "Jane Doe"]
    with db.connect("exo_writer") as conn:
        docs = [add_document(conn, "technical", [f"Note {i}: Jane Doe works at Acme."]) for i in range(40)]
        for i, doc in enumerate(docs):
            name = spellings[i % len(spellings)]
            merge(conn, doc.windows[0], [person(name), org("Acme")], [rel(name, "works at", "Acme")])
        personal = add_document(conn, "personal", ["Dinner with Jane Doe."])
        merge(conn, personal.windows[0], [person("Jane Doe")])
        rows = conn.execute(
            "select workspace, type::text, canonical_key, name from exo_private.entities order by 1, 2"
        ).fetchall()
        assert rows == [
            ("personal", "Person", "jane doe", "Jane Doe"),
            ("technical", "Org", "acme", "Acme"),
            ("technical", "Person", "jane doe", "Jane Doe"),
        ]
        jane = scalar(
            conn, "select id from exo_private.entities where workspace = 'technical' and type = 'Person'"
        )
        assert (
            scalar(
                conn, "select count(distinct window_id) from exo_private.mentions where entity_id = %s", jane
            )
            == 40
        )
        # one relation per window, one edge label
        assert scalar(conn, "select count(*) from exo_private.relations") == 40
        assert disagreements(conn, "technical") == []
        assert disagreements(conn, "personal") == []
        assert graph_size(db, "technical") == (2, 40)


def test_merging_twice_adds_nothing(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "technical", ["Jane Doe works at Acme.", "Acme is in Berlin."])
        entities = [person("Jane Doe"), org("Acme"), {"name": "Berlin", "type": "Place"}]
        relations = [rel("Jane Doe", "works at", "Acme"), rel("Acme", "located in", "Berlin")]
        first = merge(conn, doc.windows[0], entities, relations)
        assert first == {
            "entities_new": 3,
            "entities_absorbed": 0,
            "entities_seen": 0,
            "mentions_new": 4,
            "relations_new": 2,
            **NO_FACTS,
        }
        counts = conn.execute(
            """select (select count(*) from exo_private.entities), (select count(*) from exo_private.mentions),
                      (select count(*) from exo_private.relations)"""
        ).fetchone()
        size = graph_size(db, "technical")
        again = merge(conn, doc.windows[0], entities, relations)
        assert again == {
            "entities_new": 0,
            "entities_absorbed": 0,
            "entities_seen": 3,
            "mentions_new": 0,
            "relations_new": 0,
            **NO_FACTS,
        }
        assert (
            conn.execute(
                """select (select count(*) from exo_private.entities), (select count(*) from exo_private.mentions),
                          (select count(*) from exo_private.relations)"""
            ).fetchone()
            == counts
        )
        assert graph_size(db, "technical") == size == (3, 2)


def test_relations_to_names_the_window_lacks_are_skipped(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "technical", ["Jane Doe works at Acme."])
        result = merge(
            conn,
            doc.windows[0],
            [person("Jane Doe"), org("Acme")],
            [
                rel("Jane Doe", "works at", "Acme"),
                rel("jane doe", "Works At", "ACME"),  # the same relation, other spellings
                rel("Bob", "knows", "Jane Doe"),  # Bob is neither listed nor in the window
                rel("Jane Doe", "manages", "Nobody"),
                rel("Jane Doe", "is", "Jane Doe"),  # a self-loop
            ],
        )
        assert result["relations_new"] == 1
        assert conn.execute(
            "select s.name, r.predicate, r.predicate_raw, o.name from exo_private.relations r "
            "join exo_private.entities s on s.id = r.subject_id join exo_private.entities o on o.id = r.object_id"
        ).fetchall() == [("Jane Doe", "WORKS_AT", "works at", "Acme")]
        assert scalar(conn, "select count(*) from exo_private.entities where name = 'Bob'") == 0
        assert disagreements(conn, "technical") == []


def test_mentions_point_at_the_chunks_that_contain_the_name(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(
            conn,
            "technical",
            [
                "Jane Doe met the team and Zed",
                "Quill. Nothing here.",
                "Later JANE\n   doe called Acme.",
                "Acme again.",
            ],
            windows=[(0, 3), (2, 3)],
        )
        merge(conn, doc.windows[0], [person("Jane Doe"), org("Acme"), person("Zed Quill")])
        merge(conn, doc.windows[1], [person("Jane Doe")])
        rows = conn.execute(
            """select e.name, m.window_id, m.chunk_id, m.surface, m.document_id from exo_private.mentions m
               join exo_private.entities e on e.id = m.entity_id order by 1, 2, 3 nulls first"""
        ).fetchall()
    w0, w1 = doc.windows
    c = doc.chunks
    assert rows == [
        ("Acme", w0, c[2], "Acme", doc.id),
        ("Acme", w0, c[3], "Acme", doc.id),
        ("Jane Doe", w0, c[0], "Jane Doe", doc.id),
        ("Jane Doe", w0, c[2], "Jane Doe", doc.id),
        ("Jane Doe", w1, c[2], "JANE doe", doc.id),  # window 1 spans chunks 2..3 only, writes it so
        ("Zed Quill", w0, None, "Zed Quill", doc.id),  # across two chunks: one row without a chunk
    ]


def test_mentions_of_an_ingested_document(db, tmp_path: Path):
    paragraphs = [
        f"Paragraph {i}: "
        + ("Grace Hopper reviewed the compiler notes." if i % 7 == 0 else "the build ran.") * 4
        for i in range(200)
    ]
    root = tmp_path / "vault"
    (root / "work").mkdir(parents=True)
    (root / "work" / "compilers.md").write_text("\n\n".join(paragraphs))
    pipeline.ingest(db.cfg, root, dbname=db.name)
    with db.connect("exo_writer") as conn:
        windows = conn.execute("select id from exo_private.extraction_windows order by ordinal").fetchall()
        assert len(windows) >= 2
        for (window_id,) in windows:
            merge(conn, window_id, [person("Grace Hopper")])
        pairs = conn.execute(
            """select m.window_id, m.chunk_id, c.body ilike '%grace hopper%',
                      c.char_start < w.char_end and c.char_end > w.char_start
               from exo_private.mentions m
               join exo_private.extraction_windows w on w.id = m.window_id
               left join exo_private.chunks c on c.id = m.chunk_id"""
        ).fetchall()
        holding = scalar(
            conn, "select count(*) from exo_private.chunks where body ilike %s", "%grace hopper%"
        )
    assert pairs and all(chunk is not None and inside and overlaps for _w, chunk, inside, overlaps in pairs)
    assert len({chunk for _w, chunk, _i, _o in pairs}) == holding


def test_a_missing_window_raises(db):
    with db.connect("exo_writer") as conn:
        gen = generation(conn, "technical")
        with pytest.raises(psycopg.errors.RaiseException, match="extraction window 424242 does not exist"):
            merge(conn, 424242, [person("Jane Doe")], gen=gen)
        doc = add_document(conn, "technical", ["Jane Doe."])
        with pytest.raises(
            psycopg.errors.RaiseException, match="generation 7 of workspace technical does not exist"
        ):
            merge(conn, doc.windows[0], [person("Jane Doe")], gen=7)


# -- the AGE projection ----------------------------------------------------------------


def test_the_graph_agrees_with_the_tables_after_every_merge(db):
    extractions = [
        ([person("Jane Doe"), org("Acme")], [rel("Jane Doe", "works at", "Acme")]),
        ([person("Jane Doe"), person("Bob Stone")], [rel("Bob Stone", "reports to", "Jane Doe")]),
        ([org("Acme"), {"name": "Berlin", "type": "Place"}], [rel("Acme", "is based in", "Berlin")]),
        ([person("Bob Stone"), org("Acme")], [rel("Bob Stone", "works at", "Acme")]),
    ]
    with db.connect("exo_writer") as writer, db.connect() as admin:
        for entities, relations in extractions:
            doc = add_document(writer, "technical", [" ".join(e["name"] for e in entities)])
            merge(writer, doc.windows[0], entities, relations)
            assert disagreements(writer, "technical") == []
        found = cypher(
            admin,
            "technical",
            "MATCH (p:Person)-[e:WORKS_AT]->(o:Org) RETURN p.name, e.predicate_raw, o.name ORDER BY p.name",
            3,
        )
        assert found == [('"Bob Stone"', '"works at"', '"Acme"'), ('"Jane Doe"', '"works at"', '"Acme"')]
        assert cypher(admin, "technical", "MATCH (:Org)-[:IS_BASED_IN]->(b:Place) RETURN b.key") == [
            ('"berlin"',)
        ]
        relation_id = scalar(writer, "select id from exo_private.relations where predicate = 'REPORTS_TO'")
        assert cypher(admin, "technical", "MATCH ()-[e:REPORTS_TO]->() RETURN e.id") == [(str(relation_id),)]


def test_graph_disagreements_finds_a_tampered_graph(db):
    with db.connect("exo_writer") as writer, db.connect() as admin:
        doc = add_document(writer, "technical", ["Jane Doe works at Acme."])
        merge(
            writer, doc.windows[0], [person("Jane Doe"), org("Acme")], [rel("Jane Doe", "works at", "Acme")]
        )
        jane, acme = (
            scalar(writer, "select id from exo_private.entities where name = %s", name)
            for name in ("Jane Doe", "Acme")
        )
        relation = scalar(writer, "select id from exo_private.relations")
        admin.execute('delete from graph_technical."WORKS_AT"')
        admin.execute(
            """delete from graph_technical."Person" where (properties::text::jsonb ->> 'id')::bigint = %s""",
            (jane,),
        )
        admin.execute(
            """insert into graph_technical."Org" (id, properties)
               values (ag_catalog._graphid(ag_catalog._label_id('graph_technical', 'Org'), 999999),
                       '{"id": -5, "name": "ghost"}')"""
        )
        admin.execute("set search_path = ag_catalog, public")
        admin.execute("select ag_catalog.create_vlabel('graph_technical', 'Place')")
        admin.execute(
            """insert into graph_technical."Place" (properties) values (%s::text::ag_catalog.agtype)""",
            (f'{{"id": {acme}, "name": "Acme"}}',),
        )
        found = {(kind, ident) for kind, ident, _detail in disagreements(writer, "technical")}
        assert found == {
            ("missing_edge", relation),
            ("missing_vertex", jane),
            ("extra_vertex", -5),
            ("vertex_label", acme),
            ("duplicate_vertex", acme),
        }
        # projecting again repairs what is missing; what is extra stays reported
        writer.execute("select exo_private.project_relations(array[%s]::bigint[])", (relation,))
        assert {kind for kind, _i, _d in disagreements(writer, "technical")} == {
            "extra_vertex",
            "vertex_label",
            "duplicate_vertex",
        }
        admin.execute('delete from graph_technical."Place"')
        admin.execute(
            """delete from graph_technical."Org" where properties::text::jsonb ->> 'name' = 'ghost'"""
        )
        assert disagreements(writer, "technical") == []


def test_awkward_names_do_not_break_the_projection(db):
    names = [
        "O'Brien",
        'Robert"); DROP TABLE exo_private.entities; --',
        "$$ }) MATCH (n) DETACH DELETE n //",
        "Back\\slash \\' \\\"",
        "{name: 'x'}) RETURN one //",
        "`Tick` and \u2028 line sep",
        "Zoë Ångström",
    ]
    with db.connect("exo_writer") as writer, db.connect() as admin:
        doc = add_document(writer, "technical", names)
        result = merge(
            writer,
            doc.windows[0],
            [person(n) for n in names],
            [rel(names[i], "is `evil`]->(x) DELETE x //", names[i + 1]) for i in range(len(names) - 1)],
        )
        assert result["entities_new"] == len(names)
        assert result["relations_new"] == len(names) - 1
        assert disagreements(writer, "technical") == []
        # every label's vertices (those written as common words are topics, not people)
        stored = admin.execute(
            """select properties::text::jsonb ->> 'name' from graph_technical._ag_label_vertex order by 1"""
        ).fetchall()
        # kept as the window writes them, whitespace collapsed (the line separator too)
        assert [n for (n,) in stored] == sorted(" ".join(n.split()) for n in names)
        labels = cypher(admin, "technical", "MATCH ()-[e]->() RETURN DISTINCT label(e)")
        assert labels == [('"IS_EVIL_X_DELETE_X"',)]
        assert scalar(writer, "select count(*) from exo_private.entities") == len(names)


def test_concurrent_merges_of_the_same_new_names(db):
    with db.connect("exo_writer") as setup:
        one = add_document(setup, "technical", ["Jane Doe founded Initech."])
        two = add_document(setup, "technical", ["Jane Doe founded Initech, again."])
        gen = generation(setup, "technical")
    entities = [person("Jane Doe"), org("Initech")]
    relations = [rel("Jane Doe", "founded", "Initech")]
    first = db.connect("exo_writer", autocommit=False)
    second = db.connect("exo_writer", autocommit=False)
    results: dict[str, dict] = {}
    try:
        results["first"] = merge(
            first, one.windows[0], entities, relations, gen
        )  # creates labels, holds rows
        pid = second.info.backend_pid
        waiter = threading.Thread(
            target=lambda: results.update(second=merge(second, two.windows[0], entities, relations, gen))
        )
        waiter.start()
        with db.connect() as admin:
            deadline = time.monotonic() + 10
            while scalar(admin, "select wait_event_type from pg_stat_activity where pid = %s", pid) != "Lock":
                assert time.monotonic() < deadline, "the second merge never waited for the first"
                time.sleep(0.02)
        first.commit()
        waiter.join(10)
        second.commit()
    finally:
        first.close()
        second.close()
    assert results["first"]["entities_new"] == 2
    assert results["second"] == {
        "entities_new": 0,
        "entities_absorbed": 0,
        "entities_seen": 2,
        "mentions_new": 2,
        "relations_new": 1,
        **NO_FACTS,
    }
    with db.connect() as conn:
        assert scalar(conn, "select count(*) from exo_private.entities") == 2
        assert disagreements(conn, "technical") == []
        assert graph_size(db, "technical") == (2, 2)


# -- generations -----------------------------------------------------------------------


def extract_queue(conn) -> list[tuple[int, str]]:
    return conn.execute(
        "select (message ->> 'window_id')::bigint, message ->> 'workspace' from pgmq.q_extract order by 1"
    ).fetchall()


def test_current_generation_creates_one_and_never_bumps(db):
    with db.connect("exo_writer") as conn:
        assert generation(conn, "technical", "model-a") == 1
        assert generation(conn, "technical", "model-b") == 1
        assert conn.execute(
            "select workspace, generation, model from exo_private.extraction_generations"
        ).fetchall() == [("technical", 1, "model-a")]
        with pytest.raises(psycopg.errors.RaiseException, match="workspace nowhere does not exist"):
            generation(conn, "nowhere")


def test_bump_generation_starts_the_graph_afresh(db):
    with db.connect("exo_writer") as conn:
        tech = [add_document(conn, "technical", [f"Jane Doe works at Acme {i}."]) for i in range(3)]
        other = add_document(conn, "personal", ["Jane Doe at dinner."])
        for doc in tech:
            merge(
                conn, doc.windows[0], [person("Jane Doe"), org("Acme")], [rel("Jane Doe", "works at", "Acme")]
            )
        merge(conn, other.windows[0], [person("Jane Doe")])
        conn.execute("delete from pgmq.q_extract")
        conn.execute(
            "select pgmq.send('extract', %s)",
            (Jsonb({"window_id": tech[0].windows[0], "workspace": "technical"}),),
        )
        conn.execute(
            "select pgmq.send('extract', %s)",
            (Jsonb({"window_id": other.windows[0], "workspace": "personal"}),),
        )

        assert scalar(conn, "select exo_private.bump_generation('technical', 'model-b')") == 2
        assert generation(conn, "technical", "model-b") == 2
        assert scalar(conn, "select count(*) from exo_private.entities where workspace = 'technical'") == 0
        assert scalar(conn, "select count(*) from exo_private.relations where workspace = 'technical'") == 0
        assert (
            scalar(conn, "select count(*) from exo_private.mentions where document_id <> %s", other.id) == 0
        )
        assert graph_size(db, "technical") == (0, 0)
        assert disagreements(conn, "technical") == []
        # every window once, the old job dropped, other workspaces untouched
        assert extract_queue(conn) == sorted(
            [(doc.windows[0], "technical") for doc in tech] + [(other.windows[0], "personal")]
        )
        assert scalar(conn, "select count(*) from exo_private.entities where workspace = 'personal'") == 1
        assert graph_size(db, "personal") == (1, 0)

        # a reply of the old model arriving late writes nothing
        stale = merge(conn, tech[0].windows[0], [person("Jane Doe")], gen=1)
        assert stale["stale_generation"] is True and stale["entities_new"] == 0
        assert scalar(conn, "select count(*) from exo_private.entities where workspace = 'technical'") == 0

        fresh = merge(
            conn, tech[0].windows[0], [person("Jane Doe"), org("Acme")], [rel("Jane Doe", "works at", "Acme")]
        )
        assert fresh["entities_new"] == 2
        assert scalar(
            conn,
            "select array_agg(distinct generation) from exo_private.entities where workspace = 'technical'",
        ) == [2]
        assert disagreements(conn, "technical") == []
        assert graph_size(db, "technical") == (2, 1)


def test_bump_waits_for_a_merge_in_flight(db):
    with db.connect("exo_writer") as setup:
        doc = add_document(setup, "technical", ["Jane Doe works at Acme."])
        gen = generation(setup, "technical")
    merging = db.connect("exo_writer", autocommit=False)
    bumped: list[int] = []
    try:
        merge(
            merging,
            doc.windows[0],
            [person("Jane Doe"), org("Acme")],
            [rel("Jane Doe", "works at", "Acme")],
            gen,
        )
        bumper = db.connect("exo_writer")
        pid = bumper.info.backend_pid
        thread = threading.Thread(
            target=lambda: bumped.append(
                scalar(bumper, "select exo_private.bump_generation('technical', 'model-b')")
            )
        )
        thread.start()
        with db.connect() as admin:
            deadline = time.monotonic() + 10
            while scalar(admin, "select wait_event_type from pg_stat_activity where pid = %s", pid) != "Lock":
                assert time.monotonic() < deadline, "bump_generation did not wait for the merge"
                time.sleep(0.02)
        merging.commit()
        thread.join(10)
        bumper.close()
    finally:
        merging.close()
    assert bumped == [2]
    with db.connect() as conn:
        assert scalar(conn, "select count(*) from exo_private.entities") == 0
        assert graph_size(db, "technical") == (0, 0)
        assert disagreements(conn, "technical") == []


# -- the owner -------------------------------------------------------------------------


def test_set_owner_seeds_every_workspace_and_merges_land_on_it(db):
    with db.connect("exo_writer") as conn, db.connect() as admin:
        assert generation(conn, "technical", "model-a") == 1  # one workspace has a generation already
        conn.execute("select exo_private.set_owner(%s)", ("  Ada Lovelace ",))
        assert conn.execute(
            "select display_name, entity_key from exo_private.people where is_owner"
        ).fetchone() == (
            "Ada Lovelace",
            "ada lovelace",
        )
        owners = conn.execute(
            """select e.workspace, e.generation, g.model, e.name from exo_private.entities e
               join exo_private.extraction_generations g using (workspace, generation)
               where e.is_owner and e.type = 'Person' and e.canonical_key = 'ada lovelace' order by 1"""
        ).fetchall()
        assert owners == [
            ("administrative", 1, "seed", "Ada Lovelace"),
            ("creative", 1, "seed", "Ada Lovelace"),
            ("personal", 1, "seed", "Ada Lovelace"),
            ("technical", 1, "model-a", "Ada Lovelace"),
        ]
        for ws in ("administrative", "creative", "personal", "technical"):
            assert disagreements(conn, ws) == []
        assert cypher(admin, "personal", "MATCH (o:Person {is_owner: true}) RETURN o.name") == [
            ('"Ada Lovelace"',)
        ]

        # the first model claims a seeded generation
        assert generation(conn, "personal", "model-a") == 1
        assert (
            scalar(conn, "select model from exo_private.extraction_generations where workspace = 'personal'")
            == "model-a"
        )

        owner_id = scalar(
            conn, "select id from exo_private.entities where is_owner and workspace = 'personal'"
        )
        doc = add_document(conn, "personal", ["ada lovelace walked with Charles Babbage."])
        result = merge(
            conn, doc.windows[0], [person("ADA LOVELACE"), person("Charles Babbage")],
            [rel("ADA LOVELACE", "walked with", "Charles Babbage")],
        )  # fmt: skip
        assert result["entities_new"] == 1 and result["entities_seen"] == 1
        assert scalar(conn, "select subject_id from exo_private.relations") == owner_id
        assert scalar(conn, "select name from exo_private.entities where id = %s", owner_id) == "Ada Lovelace"
        assert cypher(
            admin, "personal", "MATCH (o:Person {is_owner: true})-[:WALKED_WITH]->(p) RETURN p.name"
        ) == [('"Charles Babbage"',)]
        assert disagreements(conn, "personal") == []

        # renaming the owner: the old entity is an ordinary person again, the graph follows
        conn.execute("select exo_private.set_owner('Augusta King')")
        assert scalar(conn, "select count(*) from exo_private.entities where is_owner") == 4
        assert scalar(conn, "select is_owner from exo_private.entities where id = %s", owner_id) is False
        assert cypher(admin, "personal", "MATCH (o:Person {is_owner: true}) RETURN o.name") == [
            ('"Augusta King"',)
        ]
        assert disagreements(conn, "personal") == []

        # a new generation gets the owner again
        conn.execute("select exo_private.bump_generation('personal', 'model-b')")
        assert conn.execute(
            "select generation, name from exo_private.entities where workspace = 'personal'"
        ).fetchall() == [(2, "Augusta King")]
        assert graph_size(db, "personal") == (1, 0)
        assert disagreements(conn, "personal") == []

        with pytest.raises(psycopg.errors.RaiseException, match="must not be blank"):
            conn.execute("select exo_private.set_owner(' ... ')")


# -- traversal -------------------------------------------------------------------------


def named_graph(conn, edges: list[tuple[str, str]], extra: list[str] = ()) -> dict[str, int]:
    """Entities (Topic, named "Node <key>") and relations written through merge_extraction, from a
    window that names them all; returns key -> id."""
    keys = sorted({n for edge in edges for n in edge} | set(extra))
    doc = add_document(conn, "technical", [", ".join(f"Node {k}" for k in keys)])
    merge(
        conn,
        doc.windows[0],
        [{"name": f"Node {k}", "type": "Topic"} for k in keys],
        [rel(f"Node {a}", "links", f"Node {b}") for a, b in edges],
    )
    rows = conn.execute("select name, id from exo_private.entities where type = 'Topic'").fetchall()
    return {name.removeprefix("Node "): id_ for name, id_ in rows}


def related(conn, entity: int, depth: int | None = 2, per_node: int | None = 50) -> list[tuple[int, int]]:
    return [
        (row[0], row[1])
        for row in conn.execute(
            "select entity_id, depth from exo_private.related_entities(%s, %s, %s)", (entity, depth, per_node)
        )
    ]


def test_related_entities_levels_and_dedup(db):
    with db.connect("exo_writer") as conn:
        # a - b - c - d - e - f, plus a shortcut a - c and an edge pointing back (d -> b)
        ids = named_graph(
            conn, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("a", "c"), ("d", "b")]
        )
        by_id = {v: k for k, v in ids.items()}

        def names(rows):
            return [(by_id[e], d) for e, d in rows]

        assert names(related(conn, ids["a"], 1)) == [("b", 1), ("c", 1)]
        assert sorted(names(related(conn, ids["a"], 2))) == [("b", 1), ("c", 1), ("d", 2)]
        assert sorted(names(related(conn, ids["a"], 3))) == [("b", 1), ("c", 1), ("d", 2), ("e", 3)]
        # depth is clamped to 1..3
        assert related(conn, ids["a"], 10) == related(conn, ids["a"], 3)
        assert related(conn, ids["a"], 0) == related(conn, ids["a"], 1)
        assert related(conn, ids["a"], None) == related(conn, ids["a"], 2)
        # both directions; every entity once, at its smallest depth, itself excluded
        assert sorted(names(related(conn, ids["f"], 2))) == [("d", 2), ("e", 1)]
        rows = related(conn, ids["b"], 3)
        assert len(rows) == len({e for e, _d in rows}) and ids["b"] not in {e for e, _d in rows}
        assert conn.execute(
            "select name, type::text from exo_private.related_entities(%s, 1)", (ids["e"],)
        ).fetchall() == [("Node d", "Topic"), ("Node f", "Topic")]


def test_related_entities_caps_each_node(db):
    with db.connect("exo_writer") as conn:
        spokes = [f"s{i:02d}" for i in range(12)]
        ids = named_graph(conn, [("hub", s) for s in spokes] + [("s00", "far"), ("s11", "farther")])
        capped = related(conn, ids["hub"], 2, 5)
        lowest = sorted(ids[s] for s in spokes)[:5]
        assert [e for e, d in capped if d == 1] == lowest
        # depth 2 only through the five kept spokes
        assert {e for e, d in capped if d == 2} <= {ids["far"], ids["farther"]}
        full = related(conn, ids["hub"], 2, None)
        assert {e for e, d in full if d == 1} == {ids[s] for s in spokes}
        assert {e for e, d in full if d == 2} == {ids["far"], ids["farther"]}


def make_hub(conn, degree: int) -> int:
    """A hub entity related to `degree` others (each also related to the next), written
    straight into the tables; returns the hub's id."""
    doc = add_document(conn, "technical", ["hub"])
    gen = generation(conn, "technical")
    hub = conn.execute(
        """insert into exo_private.entities (workspace, generation, type, canonical_key, name, is_owner)
           values ('technical', %s, 'Person', 'hub', 'Hub', true) returning id""",
        (gen,),
    ).fetchone()[0]
    conn.execute(
        """insert into exo_private.entities (workspace, generation, type, canonical_key, name)
           select 'technical', %s, 'Topic', 't' || i, 'T' || i from generate_series(1, %s) i""",
        (gen, degree),
    )
    conn.execute(
        """insert into exo_private.relations
               (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id)
           select 'technical', %(gen)s, %(hub)s, e.id, 'mentions', 'MENTIONS', %(w)s, %(d)s
           from exo_private.entities e where e.canonical_key like 't%%'
           union all
           select 'technical', %(gen)s, e.id, e.id + 1, 'next', 'NEXT', %(w)s, %(d)s
           from exo_private.entities e where e.canonical_key like 't%%' and e.canonical_key <> 't' || %(n)s""",
        {"gen": gen, "hub": hub, "w": doc.windows[0], "d": doc.id, "n": degree},
    )
    conn.execute("analyze exo_private.relations, exo_private.entities")
    return hub


def test_related_entities_on_a_hub(db):
    with db.connect() as conn:
        hub = make_hub(conn, 10_000)
        conn.execute("select * from exo_private.related_entities(%s)", (hub,)).fetchall()  # warm
        timings = []
        for _ in range(5):
            began = time.perf_counter()
            rows = related(conn, hub, 2, 50)
            timings.append(time.perf_counter() - began)
        assert sorted(timings)[2] < 0.1, (
            f"depth-2 neighbourhood of a 10,000-degree hub took {sorted(timings)[2]:.3f} s"
        )
        first = [e for e, d in rows if d == 1]
        assert len(first) == 50 and first == sorted(first)
        assert 0 < len([e for e, d in rows if d == 2]) <= 50 * 50
        assert len(rows) == len({e for e, _d in rows})
        # any depth-1 spoke sees the hub at depth 1 and the hub's first 50 spokes at depth 2
        spoke = first[-1]
        around = dict(related(conn, spoke, 2, 50))
        assert around[hub] == 1


# -- privileges ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "exo_private.normalise_predicate('x')",
        "exo_private.current_generation('technical', 'm')",
        "exo_private.bump_generation('technical', 'm')",
        "exo_private.merge_extraction(1, 1, '[]', '[]')",
        "exo_private.set_owner('Eve')",
        "exo_private.project_entities('{}')",
        "exo_private.project_relations('{}')",
        "exo_private.graph_disagreements('technical')",
        "exo_private.related_entities(1)",
        "exo_private.count_entity_edges('{1}', '{2}', null, null)",
    ],
)
def test_the_reader_cannot_call_graph_functions(db, call):
    with db.connect("exo_reader") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(f"select {call}")
