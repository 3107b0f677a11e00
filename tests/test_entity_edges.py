"""exo_private.entity_edges and the walk over it (issue 32).

The table of distinct edges equals the relations counted per pair after every kind of change
(relations merged from windows, an entity merged into another, an entity deleted, a document
deleted); and exo_private.related_entities, which walks it, returns what a walk over the raw
relation rows returns (worked out here in Python, by the rules of its comment), on generated
graphs whose relations repeat over windows, some of which overlap a withheld chunk."""

from __future__ import annotations

import random

import pytest
from support.graph import add_document, add_relations, merge, person, rel, withheld_graph

from exocortex.ops.migrate import migrate

COUNTED = """
select e.a, e.b, count(*)::int
from exo_private.relations r
cross join lateral (values (r.subject_id, r.object_id), (r.object_id, r.subject_id)) e (a, b)
where r.subject_id <> r.object_id
group by 1, 2 order by 1, 2
"""
HELD = "select entity_id, neighbour_id, relations from exo_private.entity_edges order by 1, 2"


def assert_exact(conn) -> list[tuple]:
    held = conn.execute(HELD).fetchall()
    assert held == conn.execute(COUNTED).fetchall()
    return held


def test_the_edges_equal_the_relations_counted_after_every_change(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(
            conn, "technical", ["Ada, Ben and Cy.", "Ada and Ben again.", "Dee."], [(0, 0), (1, 1), (0, 2)]
        )
        names = [person(n) for n in ("Ada", "Ben", "Cy", "Dee")]
        merge(conn, doc.windows[0], names, [rel("Ada", "knows", "Ben"), rel("Ben", "met", "Cy")])
        merge(conn, doc.windows[1], names, [rel("Ben", "knows", "Ada"), rel("Ada", "met", "Cy")])
        merge(conn, doc.windows[2], names, [rel("Ada", "knows", "Ben"), rel("Cy", "met", "Dee")])
        ids = dict(
            conn.execute(
                "select name, id from exo_private.entities where name in ('Ada', 'Ben', 'Cy', 'Dee')"
            )
        )
        held = assert_exact(conn)
        # Ada and Ben are joined by three relations (two directions, three windows), once each way
        assert (ids["Ada"], ids["Ben"], 3) in held and (ids["Ben"], ids["Ada"], 3) in held
        # an update that moves an end: Dee merged into Cy (Cy - Dee would join Cy to itself)
        conn.execute("select exo_private.move_entity_rows(%s, %s)", (ids["Cy"], ids["Dee"]))
        held = assert_exact(conn)
        assert not any(ids["Dee"] in (a, b) for a, b, _n in held)
        # an update that moves no end counts nothing
        conn.execute("update exo_private.relations set predicate_raw = predicate_raw || ' (again)'")
        assert assert_exact(conn) == held
        # a delete by cascade: an entity, then the whole document
        conn.execute("delete from exo_private.entities where id = %s", (ids["Cy"],))
        assert assert_exact(conn) == [(ids["Ada"], ids["Ben"], 3), (ids["Ben"], ids["Ada"], 3)]
        conn.execute("delete from exo_private.documents where id = %s", (doc.id,))
        assert assert_exact(conn) == []


# -- the walk -----------------------------------------------------------------------------------


def reference_walk(rows, hidden_windows, hidden_entities, start, depth, per_node):
    """related_entities by its comment, from relation rows (subject, object, window): level sets,
    each node expanding at most per_node of its neighbours, lowest ids first, never along a relation
    of a hidden window nor to a hidden entity; each entity once at its smallest depth."""
    neighbours: dict[int, set[int]] = {}
    for s, o, w in rows:
        if s != o and w not in hidden_windows:
            neighbours.setdefault(s, set()).add(o)
            neighbours.setdefault(o, set()).add(s)
    depth = max(1, min(depth, 3))
    frontier, best = {start}, {}
    for level in range(1, depth + 1):
        nxt = set()
        for node in frontier:
            kept = sorted(n for n in neighbours.get(node, ()) if n not in hidden_entities)[:per_node]
            nxt.update(kept)
        for n in nxt:
            best.setdefault(n, level)
        frontier = nxt
    best.pop(start, None)
    return sorted((d, e) for e, d in best.items())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_walk_equals_a_walk_over_the_relation_rows(db, seed):
    rnd = random.Random(seed)
    with db.connect("exo_writer") as conn:
        graph = withheld_graph(conn, "Topic", "walk")
        entities = graph.entities
        # pairs repeated over windows, both directions, a few self-relations, a hub
        rows = []
        for _ in range(400):
            s = entities[0] if rnd.random() < 0.3 else rnd.choice(entities)
            o = rnd.choice(entities)
            rows.append((s, o, "LINKS", *rnd.choice(graph.windows)))
        add_relations(conn, graph.generation, rows)
        assert_exact(conn)
        stored = conn.execute(
            "select subject_id, object_id, window_id from exo_private.relations where workspace = 'personal'"
        ).fetchall()
        hidden_entity = rnd.choice(entities[1:])
        walked_hidden = False
        for start in [entities[0], *rnd.sample(entities[1:], 4)]:
            for depth, per_node in ((1, 50), (2, 3), (2, 50), (3, 2)):
                for released, hidden, hidden_ents in graph.release_cases(hidden_entity):
                    got = conn.execute(
                        "select depth, entity_id from exo_private.related_entities(%s, %s, %s, %s, %s)",
                        (start, depth, per_node, released, hidden_ents),
                    ).fetchall()
                    want = reference_walk(stored, hidden, set(hidden_ents), start, depth, per_node)
                    assert got == want, (start, depth, per_node, released, hidden_ents)
                    walked_hidden |= bool(hidden) and got != reference_walk(
                        stored, set(), set(), start, depth, per_node
                    )
        # the hidden windows changed some walk: the rule was exercised, not only the plain walk
        assert walked_hidden


def test_relations_written_while_the_triggers_are_missing_are_counted_when_they_are_made(cfg, db):
    """Migration 0103 counted the edges in its own transaction and migrate made the triggers that
    keep them in a later one (sql/300_graph.sql): a relation a worker wrote between the two was
    never counted. 0104 drops the triggers of a database migrated so, and sql/300_graph.sql, where
    they do not exist, counts the edges again in the transaction that makes them."""
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "technical", ["Ada and Ben.", "Ben, Cy and Ada."], [(0, 0), (1, 1)])
        names = [person(n) for n in ("Ada", "Ben", "Cy")]
        merge(conn, doc.windows[0], names, [rel("Ada", "knows", "Ben")])
        assert len(assert_exact(conn)) == 2
    with db.connect() as admin:
        for event in ("insert", "delete", "update"):
            admin.execute(f"drop trigger relations_count_edges_{event} on exo_private.relations")
    with db.connect("exo_writer") as conn:
        # the worker, between the migration and the sql files
        merge(conn, doc.windows[1], names, [rel("Ben", "met", "Cy"), rel("Ada", "met", "Cy")])
        assert conn.execute(HELD).fetchall() != conn.execute(COUNTED).fetchall()
    migrate(cfg, db.url(), schedule=False)
    with db.connect("exo_writer") as conn:
        assert len(assert_exact(conn)) == 6
        # and the triggers keep them again
        merge(conn, doc.windows[1], names, [rel("Cy", "knows", "Ada")])
        assert sorted(n for _a, _b, n in assert_exact(conn)) == [1, 1, 1, 1, 2, 2]
