"""The path stage's walk (issue 32): exo_private.typed_neighbours returns what a walk over the raw
relation rows returns (worked out here in Python, by the rules of its comment) on generated graphs
whose relations repeat over windows, some of which overlap a withheld chunk, and around a hub that
holds most relations of a kind; and the path stage never walks a relation whose window overlaps a
chunk the search withholds, while a search that releases it does."""

from __future__ import annotations

import random
import re
from datetime import date

import psycopg
import pytest
from support.graph import add_document, add_relations, merge, person, rel, withheld_graph

from exocortex.plpy.relation_paths import family_pattern

PREDICATES = ["IS_FRIENDS_WITH", "IS_A_MEMBER_OF", "KNOWS", "IS_MARRIED_TO", "VISITED"]


def reference_neighbours(rows, hidden_windows, hidden_entities, entity, pattern, limit):
    """typed_neighbours by its comment, from relation rows (id, subject, object, predicate, window):
    the other end of every relation of the entity (either direction) whose predicate matches, not
    the entity itself, never along a relation of a hidden window nor to a hidden entity; each
    neighbour once, with its lowest relation id; lowest neighbour ids first, at most limit."""
    first = {}
    for rid, s, o, p, w in rows:
        if entity not in (s, o) or s == o or not re.search(pattern, p) or w in hidden_windows:
            continue
        other = o if s == entity else s
        if other not in hidden_entities:
            first[other] = min(rid, first.get(other, rid))
    return sorted(first.items())[:limit]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_neighbours_equal_those_of_the_relation_rows(db, seed):
    rnd = random.Random(seed)
    with db.connect("exo_writer") as conn:
        graph = withheld_graph(conn, "Person", "hop")
        entities = graph.entities
        # pairs repeated over windows and predicates, both directions, a few self-relations, and a
        # hub that is the subject of most relations of one kind
        rows = []
        for _ in range(600):
            hub = rnd.random() < 0.4
            s = entities[0] if hub else rnd.choice(entities)
            p = "IS_A_MEMBER_OF" if hub and rnd.random() < 0.7 else rnd.choice(PREDICATES)
            rows.append((s, rnd.choice(entities), p, *rnd.choice(graph.windows)))
        add_relations(conn, graph.generation, rows)
        stored = conn.execute(
            "select id, subject_id, object_id, predicate, window_id from exo_private.relations "
            "where workspace = 'personal'"
        ).fetchall()
        hidden_entity = rnd.choice(entities[1:])
        patterns = [family_pattern(["MEMBER_OF"]), family_pattern(["FRIEND_OF", "SPOUSE_OF"]), "^VISITED$"]
        walked_hidden = False
        for entity in [entities[0], *rnd.sample(entities[1:], 4)]:
            for pattern in patterns:
                for limit in (1, 3, 50):
                    for released, hidden, hidden_ents in graph.release_cases(hidden_entity):
                        got = conn.execute(
                            "select entity_id, relation_id from exo_private.typed_neighbours(%s, %s, %s, %s, %s)",
                            (entity, pattern, limit, released, hidden_ents),
                        ).fetchall()
                        want = reference_neighbours(stored, hidden, set(hidden_ents), entity, pattern, limit)
                        assert got == want, (entity, pattern, limit, released, hidden_ents)
                        walked_hidden |= bool(hidden) and got != reference_neighbours(
                            stored, set(), set(), entity, pattern, limit
                        )
        # the withheld windows changed some walk: the rule was exercised, not only the plain walk
        assert walked_hidden


def test_the_path_stage_walks_no_relation_of_a_window_over_a_withheld_chunk(db):
    with db.connect("exo_writer") as conn:
        # Nia's sister is Ode (a window of its own); Ode's husband is Rex, told in a window over a
        # chunk that names no one and one charged for Walter Rivera, whose own words are elsewhere
        kin = add_document(conn, "personal", ["Nia Brook is the sister of Ode Brook."])
        merge(
            conn,
            kin.windows[0],
            [person("Nia Brook"), person("Ode Brook")],
            [rel("Nia Brook", "sister of", "Ode Brook")],
        )
        note = add_document(conn, "personal", ["Ode Brook married Rex Hale in June.", "Walter was not well."])
        conn.execute(
            "update exo_private.chunks set charged_subjects = '{Walter Rivera}' where id = %s",
            (note.chunks[1],),
        )
        merge(
            conn,
            note.windows[0],
            [person("Ode Brook"), person("Rex Hale")],
            [rel("Ode Brook", "married", "Rex Hale")],
        )
        (nia,) = conn.execute("select id from exo_private.entities where name = 'Nia Brook'").fetchone()
        key = conn.execute("select exo_private.canonical_key('Walter Rivera')").fetchone()[0]
        # "Who is the brother-in-law of Nia Brook?": a sibling, then their spouse
        hops = [family_pattern(["SIBLING_OF", "SPOUSE_OF"])] * 2
        text = conn.execute("select exo_private.stage_sql('path', 'personal', released => true)").fetchone()[
            0
        ]
        conn.execute(f"prepare path (bigint[], text[], date, int, text[], text[], int) as {text}")

        def walked(released):
            rows = (
                psycopg.ClientCursor(conn)
                .execute(  # EXECUTE's arguments written as literals
                    "execute path (%s, %s, %s, 30, %s, %s, 50)",
                    ([nia], ["current", "recent", "archival"], date.today(), released, hops),
                )
                .fetchall()
            )
            return {r[0]: r[3] for r in rows}

        # released: every subject, or Walter Rivera's; the walk reaches Rex through the note's window
        # and cites both its chunks
        for released in (None, [key]):
            cited = walked(released)
            assert set(cited) == {kin.chunks[0], *note.chunks}
            assert cited[note.chunks[0]] == "Ode Brook MARRIED Rex Hale"
        # released nothing: the open chunk could be shown, but the relation is evidence of a window
        # over a withheld one, and is not walked
        assert walked([]) == {kin.chunks[0]: "Nia Brook SISTER_OF Ode Brook"}


def test_a_neighbour_related_in_many_windows_takes_one_place_in_a_step(db):
    with db.connect("exo_writer") as conn:
        # Maya is friends with Leo in sixty chat windows, and with Zoe in one; Zoe's sister is Ivy
        chats = add_document(
            conn,
            "personal",
            [f"Maya Chen is a friend of Leo Park (evening {i})." for i in range(60)],
            [(i, i) for i in range(60)],
        )
        for window in chats.windows:
            merge(
                conn,
                window,
                [person("Maya Chen"), person("Leo Park")],
                [rel("Maya Chen", "friend of", "Leo Park")],
            )
        note = add_document(
            conn,
            "personal",
            ["Maya Chen is a friend of Zoe Hart.", "Zoe Hart is the sister of Ivy Hart."],
            [(0, 0), (1, 1)],
        )
        merge(
            conn,
            note.windows[0],
            [person("Maya Chen"), person("Zoe Hart")],
            [rel("Maya Chen", "friend of", "Zoe Hart")],
        )
        merge(
            conn,
            note.windows[1],
            [person("Zoe Hart"), person("Ivy Hart")],
            [rel("Zoe Hart", "sister of", "Ivy Hart")],
        )
        ids = dict(
            conn.execute("select name, id from exo_private.entities where workspace = 'personal'").fetchall()
        )
        friends = conn.execute(
            "select entity_id from exo_private.typed_neighbours(%s, %s, 50)",
            (ids["Maya Chen"], family_pattern(["FRIEND_OF"])),
        ).fetchall()
        # each friend once: the sixty relations to Leo do not fill the step's fifty places
        assert sorted(friends) == sorted([(ids["Leo Park"],), (ids["Zoe Hart"],)])
        # "Who is the sister of Maya Chen's friend?": a friend, then their sibling
        hops = [family_pattern(["FRIEND_OF"]), family_pattern(["SIBLING_OF"])]
        reached = {
            r[0]
            for r in conn.execute(
                "select nb.entity_id from exo_private.typed_neighbours(%s, %s, 50) f"
                " cross join lateral exo_private.typed_neighbours(f.entity_id, %s, 50) nb",
                (ids["Maya Chen"], *hops),
            )
        }
        assert ids["Ivy Hart"] in reached
