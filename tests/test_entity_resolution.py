"""Entity identity in SQL: one entity per key across types (upsert_entity, type by evidence),
aliases that later windows resolve through, a person's merge and split and their undoing, and
orphans removed when their windows go."""

from __future__ import annotations

import json

import psycopg
import pytest
from click.testing import CliRunner
from support.graph import add_document, generation, merge, person, rel

from exocortex.cli import main


def scalar(conn, query: str, *params):
    return conn.execute(query, params).fetchone()[0]


def disagreements(conn, workspace: str) -> list[tuple]:
    return conn.execute("select * from exo_private.graph_disagreements(%s)", (workspace,)).fetchall()


def entity(conn, name: str, workspace: str = "personal") -> tuple | None:
    return conn.execute(
        "select id, type::text from exo_private.entities "
        "where workspace = %s and canonical_key = exo_private.canonical_key(%s)",
        (workspace, name),
    ).fetchone()


def snapshot(conn) -> dict:
    """Every graph row as it stands (ids included), for a round trip's before and after."""
    return {
        table: conn.execute(f"select {columns} from exo_private.{table} order by 1, 2, 3").fetchall()
        for table, columns in {
            "entities": "id, type::text, canonical_key, name, is_owner",
            "mentions": "entity_id, window_id, chunk_id, surface, origin",
            "relations": "id, subject_id, object_id, predicate, window_id, origin",
            "entity_aliases": "entity_id, alias_key, surface, how, window_id",
        }.items()
    }


def test_one_entity_per_key_across_types_typed_by_evidence(db):
    with db.connect("exo_writer") as conn:
        docs = [
            add_document(conn, "personal", [f"Day {i} in Larkhaven with Meridale Mutual."]) for i in range(3)
        ]
        merge(conn, docs[0].windows[0], [person("Larkhaven"), person("Meridale Mutual")])
        assert entity(conn, "Larkhaven")[1] == "Person"
        # the cue word wins over what the model said: Mutual is an organisation
        assert entity(conn, "Meridale Mutual")[1] == "Org"
        merge(conn, docs[1].windows[0], [{"name": "Larkhaven", "type": "Place"}])
        assert entity(conn, "Larkhaven")[1] == "Person"  # a tie keeps the type it has
        merge(
            conn,
            docs[2].windows[0],
            [{"name": "larkhaven", "type": "Place"}, {"name": "Larkhaven", "type": "Topic"}],
        )
        assert (
            scalar(conn, "select count(*) from exo_private.entities where canonical_key = 'larkhaven'") == 1
        )
        assert entity(conn, "Larkhaven")[1] == "Place"  # 2 votes to 1
        assert scalar(
            conn, "select type_votes from exo_private.entities where canonical_key = 'larkhaven'"
        ) == {
            "Person": 1,
            "Place": 2,
        }
        assert (
            scalar(
                conn,
                "select count(distinct window_id) from exo_private.mentions m join exo_private.entities e on e.id = m.entity_id where e.canonical_key = 'larkhaven'",
            )
            == 3
        )
        assert disagreements(conn, "personal") == []  # the retyped vertex moved label, edges and all


def test_a_windows_vote_is_weighed_by_the_mentions_its_syntax_typed(db):
    with db.connect("exo_writer") as conn:
        guessed = [add_document(conn, "personal", [f"Saw Ostrel on day {i}."]) for i in range(3)]
        placed = [
            add_document(conn, "personal", ["I stayed in Ostrel, then walked around Ostrel."]),
            add_document(conn, "personal", ["Rain in Ostrel all week."]),
        ]
        for doc in guessed:  # the model's guess, nothing in the window says otherwise
            merge(conn, doc.windows[0], [person("Ostrel")])
        assert entity(conn, "Ostrel")[1] == "Person"
        merge(conn, placed[0].windows[0], [{"name": "Ostrel", "type": "Place", "cues": {"Place": 2}}])
        assert entity(conn, "Ostrel")[1] == "Person"  # 3 windows to 1 window and 2 mentions: a tie
        # the writer's cues count at most the name's mentions in the window (here 1, not 5)
        merge(conn, placed[1].windows[0], [{"name": "Ostrel", "type": "Place", "cues": {"Place": 5}}])
        assert entity(conn, "Ostrel")[1] == "Place"  # 3 to 2 windows and 3 mentions
        assert conn.execute(
            "select type_votes, type_cues from exo_private.entities where canonical_key = 'ostrel'"
        ).fetchone() == ({"Person": 3, "Place": 2}, {"Place": 3})
        assert disagreements(conn, "personal") == []  # the vertex moved to its new label
        # cues of another type, or no count, are no cues; the entity is kept
        stayed = add_document(conn, "personal", ["Ostrel again."])
        merge(
            conn, stayed.windows[0], [{"name": "Ostrel", "type": "Place", "cues": {"Human": 3, "Org": "2"}}]
        )
        assert scalar(conn, "select type_cues from exo_private.entities where canonical_key = 'ostrel'") == {
            "Place": 3
        }
        gen = generation(conn, "personal")
        for cues in ('{"Place": -1}', '{"Place": 1.5}', '{"City": 1}', "[1]", "null"):
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_cues"):
                conn.execute(
                    "select exo_private.upsert_entity('personal', %s, 'Place', 'ostrel', 'Ostrel', "
                    "p_cues => %s::jsonb)",
                    (gen, cues),
                )


def test_upsert_entity_refuses_bad_arguments(db):
    with db.connect("exo_writer") as conn:
        gen = generation(conn, "personal")
        for key, name, type_, argument in (
            (" ", "Ann", "Person", "p_key"),
            ("ann", "", "Person", "p_name"),
            ("ann", "Ann", "Human", "p_type"),
        ):
            with pytest.raises(psycopg.errors.InvalidParameterValue, match=argument):
                conn.execute(
                    "select exo_private.upsert_entity('personal', %s, %s, %s, %s)", (gen, type_, key, name)
                )


def test_aliases_resolve_later_windows(db):
    with db.connect("exo_writer") as conn:
        first = add_document(conn, "personal", ["Prudence Hale came round. Hale brought the lease."])
        later = add_document(conn, "personal", ["Hale rang about the boiler."])
        prudence = {
            "name": "Prudence Hale",
            "type": "Person",
            "aliases": [{"surface": "Hale", "how": "surname"}],
        }
        merge(conn, first.windows[0], [prudence])
        prudence_id = entity(conn, "Prudence Hale")[0]
        assert conn.execute(
            "select alias_key, surface, how, window_id from exo_private.entity_aliases where entity_id = %s",
            (prudence_id,),
        ).fetchall() == [("hale", "Hale", "surname", first.windows[0])]
        merge(conn, later.windows[0], [person("Hale"), {"name": "Boiler Services Ltd", "type": "Person"}])
        assert entity(conn, "Hale") is None  # no entity of its own
        assert conn.execute(
            "select entity_id, surface from exo_private.mentions where window_id = %s and surface = 'Hale'",
            (later.windows[0],),
        ).fetchall() == [(prudence_id, "Hale")]


@pytest.fixture
def two_people(db):
    """Ann and Annie (one person, two entities) with mentions, a shared window and relations,
    one of them between the two."""
    with db.connect("exo_writer") as conn:
        a = add_document(conn, "personal", ["Ann Lee met Bob Ray at the market."])
        b = add_document(conn, "personal", ["Annie Lee and Bob Ray fixed the fence."])
        both = add_document(conn, "personal", ["Ann Lee, also called Annie Lee, hosted Bob Ray."])
        merge(conn, a.windows[0], [person("Ann Lee"), person("Bob Ray")], [rel("Ann Lee", "met", "Bob Ray")])
        merge(
            conn, b.windows[0], [person("Annie Lee"), person("Bob Ray")], [rel("Annie Lee", "met", "Bob Ray")]
        )
        merge(
            conn,
            both.windows[0],
            [person("Ann Lee"), person("Annie Lee"), person("Bob Ray")],
            [
                rel("Ann Lee", "met", "Bob Ray"),
                rel("Annie Lee", "met", "Bob Ray"),
                rel("Annie Lee", "is", "Ann Lee"),
            ],
        )
        yield conn


def test_merge_and_unmerge_round_trip(two_people):
    conn = two_people
    before = snapshot(conn)
    ann, annie = entity(conn, "Ann Lee")[0], entity(conn, "Annie Lee")[0]
    log_id = scalar(conn, "select exo_private.merge_entities(%s, %s)", ann, annie)
    assert entity(conn, "Annie Lee") is None
    assert (
        scalar(conn, "select count(distinct window_id) from exo_private.mentions where entity_id = %s", ann)
        == 3
    )
    # b's relation moved; the self-loop and the repeated "met" of the shared window went
    assert conn.execute(
        "select predicate, count(distinct window_id), count(*) from exo_private.relations group by 1"
    ).fetchall() == [("MET", 3, 3)]
    assert conn.execute(
        "select alias_key, how from exo_private.entity_aliases where entity_id = %s", (ann,)
    ).fetchall() == [("annie lee", "manual")]
    assert disagreements(conn, "personal") == []
    # a later window naming Annie Lee lands on Ann Lee
    later = add_document(conn, "personal", ["Annie Lee phoned."])
    merge(conn, later.windows[0], [person("Annie Lee")])
    assert (
        scalar(conn, "select entity_id from exo_private.mentions where window_id = %s", later.windows[0])
        == ann
    )
    conn.execute("delete from exo_private.documents where id = %s", (later.id,))

    assert scalar(conn, "select exo_private.unmerge_entities(%s)", log_id) == annie
    assert snapshot(conn) == before
    assert disagreements(conn, "personal") == []
    assert scalar(
        conn, "select undone_at is not null from exo_private.entity_merge_log where id = %s", log_id
    )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="undone already"):
        conn.execute("select exo_private.unmerge_entities(%s)", (log_id,))


def test_split_undoes_a_merge_and_merge_undoes_a_split(two_people):
    conn = two_people
    ann, annie = entity(conn, "Ann Lee")[0], entity(conn, "Annie Lee")[0]
    conn.execute("select exo_private.merge_entities(%s, %s)", (ann, annie))
    log_id = scalar(conn, "select exo_private.split_entity(%s, 'Annie Lee')", ann)
    split_off = scalar(conn, "select other_id from exo_private.entity_merge_log where id = %s", log_id)
    assert entity(conn, "Annie Lee") == (split_off, "Person")
    # the mentions written "Annie Lee" move: the window that named only her (in the shared
    # window the merge kept one mention of the two, Ann Lee's)
    assert conn.execute(
        "select d.body, m.surface from exo_private.mentions m join exo_private.extraction_windows d "
        "on d.id = m.window_id where m.entity_id = %s",
        (split_off,),
    ).fetchall() == [("Annie Lee and Bob Ray fixed the fence.", "Annie Lee")]
    # the window that names only Annie Lee takes its relation along; Ann Lee keeps hers
    assert scalar(conn, "select count(*) from exo_private.relations where subject_id = %s", split_off) == 1
    assert scalar(conn, "select count(*) from exo_private.entity_aliases where entity_id = %s", ann) == 0
    assert disagreements(conn, "personal") == []
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="no alias or mention named"):
        conn.execute("select exo_private.split_entity(%s, 'Zed')", (ann,))
    conn.execute("select exo_private.merge_entities(%s, %s)", (ann, split_off))
    assert entity(conn, "Annie Lee") is None
    assert (
        scalar(conn, "select count(distinct window_id) from exo_private.mentions where entity_id = %s", ann)
        == 3
    )
    assert disagreements(conn, "personal") == []


def test_the_owner_is_never_merged_away(db):
    with db.connect() as conn:
        conn.execute("select exo_private.set_owner('Robin Vale')")
        doc = add_document(conn, "personal", ["Robin Vale and R. Vale."])
        merge(conn, doc.windows[0], [person("R. Vale")])
        owner, other = entity(conn, "Robin Vale")[0], entity(conn, "R. Vale")[0]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="is the owner"):
            conn.execute("select exo_private.merge_entities(%s, %s)", (other, owner))
        conn.execute("select exo_private.merge_entities(%s, %s)", (owner, other))
        assert scalar(conn, "select is_owner from exo_private.entities where id = %s", owner)


def test_orphans_go_when_their_windows_do_and_structural_mentions_keep_theirs(db):
    with db.connect("exo_writer") as conn:
        old = add_document(conn, "personal", ["Cara Moss sold the van to Dev Shah."])
        other = add_document(conn, "personal", ["Dev Shah waved."])
        merge(
            conn,
            old.windows[0],
            [person("Cara Moss"), person("Dev Shah")],
            [rel("Cara Moss", "sold to", "Dev Shah")],
        )
        merge(conn, other.windows[0], [person("Dev Shah")])
        cara = entity(conn, "Cara Moss")[0]
        # Cara is also known from the structure of another document (a chat's sender, say)
        structural = add_document(conn, "personal", ["Cara: see you at six"])
        conn.execute(
            "insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface, origin) "
            "values (%s, %s, %s, %s, 'Cara Moss', 'structure')",
            (cara, structural.windows[0], structural.id, structural.chunks[0]),
        )
        # the document is re-chunked: its windows, and their mentions, are re-made
        conn.execute("delete from exo_private.extraction_windows where document_id = %s", (old.id,))
        assert entity(conn, "Dev Shah") is not None  # still mentioned elsewhere
        assert entity(conn, "Cara Moss") is not None  # her structural mention stands
        assert scalar(conn, "select count(*) from exo_private.relations") == 0
        conn.execute("delete from exo_private.documents where id = %s", (structural.id,))
        assert entity(conn, "Cara Moss") is None  # an orphan now
        assert disagreements(conn, "personal") == []


def test_merge_extraction_records_only_resolved_aliases(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "personal", ["Iris Calder, Iris to friends."])
        merge(
            conn,
            doc.windows[0],
            [
                {
                    "name": "Iris Calder",
                    "type": "Person",
                    "aliases": [
                        {"surface": "Iris", "how": "first_name"},
                        {"surface": "Iris Calder", "how": "surname"},  # its own key: no alias
                        {"surface": "Calder", "how": "manual"},  # only a person makes manual ones
                    ],
                }
            ],
        )
        assert conn.execute("select alias_key, how from exo_private.entity_aliases").fetchall() == [
            ("iris", "first_name")
        ]


def full_name(name: str, first: str) -> dict:
    return {"name": name, "type": "Person", "aliases": [{"surface": first, "how": "first_name"}]}


def test_a_first_name_entity_becomes_the_person_a_later_window_shows_it_is(db):
    with db.connect("exo_writer") as conn:
        early = add_document(conn, "personal", ["Kelossa fed the cat. Kelossa and Bo went out."])
        later = add_document(conn, "personal", ["Kelossa Kelyley moved in; Kelossa brought plants."])
        merge(conn, early.windows[0], [person("Kelossa"), person("Bo")], [rel("Kelossa", "friend of", "Bo")])
        stray = entity(conn, "Kelossa")[0]
        result = merge(conn, later.windows[0], [full_name("Kelossa Kelyley", "Kelossa")])
        assert result["entities_absorbed"] == 1
        assert entity(conn, "Kelossa") is None
        kelossa = entity(conn, "Kelossa Kelyley")[0]
        # the early window's mention and relation are hers now
        assert conn.execute(
            "select entity_id, surface from exo_private.mentions where window_id = %s and surface = 'Kelossa'",
            (early.windows[0],),
        ).fetchall() == [(kelossa, "Kelossa")]
        assert (
            scalar(
                conn,
                "select count(*) from exo_private.relations where subject_id = %s and window_id = %s",
                kelossa,
                early.windows[0],
            )
            == 1
        )
        assert not conn.execute("select 1 from exo_private.entities where id = %s", (stray,)).fetchone()
        assert disagreements(conn, "personal") == []
        # the same window again changes nothing
        assert (
            merge(conn, later.windows[0], [full_name("Kelossa Kelyley", "Kelossa")])["entities_absorbed"] == 0
        )


def test_a_first_name_two_people_share_or_a_person_split_off_stays_its_own_entity(db):
    with db.connect("exo_writer") as conn:
        arden, kelyley, alone = (
            add_document(conn, "personal", [text])
            for text in ("Kelossa Arden, Kelossa to us.", "Kelossa Kelyley; Kelossa.", "Kelossa fed the cat.")
        )
        merge(conn, arden.windows[0], [full_name("Kelossa Arden", "Kelossa")])
        merge(conn, kelyley.windows[0], [full_name("Kelossa Kelyley", "Kelossa")])
        merge(conn, alone.windows[0], [person("Kelossa")])
        assert entity(conn, "Kelossa") is not None  # whose? the alias is two people's
        assert (
            merge(conn, kelyley.windows[0], [full_name("Kelossa Kelyley", "Kelossa")])["entities_absorbed"]
            == 0
        )
        assert entity(conn, "Kelossa") is not None
        # one person's again once a person split the name off the other; then split off hers too
        conn.execute("select exo_private.split_entity(%s, 'Kelossa')", (entity(conn, "Kelossa Arden")[0],))
        assert (
            merge(conn, kelyley.windows[0], [full_name("Kelossa Kelyley", "Kelossa")])["entities_absorbed"]
            == 1
        )
        conn.execute("select exo_private.split_entity(%s, 'Kelossa')", (entity(conn, "Kelossa Kelyley")[0],))
        assert entity(conn, "Kelossa") is not None
        assert (
            merge(conn, kelyley.windows[0], [full_name("Kelossa Kelyley", "Kelossa")])["entities_absorbed"]
            == 0
        )
        assert entity(conn, "Kelossa") is not None


def test_the_cli_merges_lists_and_unmerges(two_people, db, monkeypatch):
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    conn = two_people
    annie = entity(conn, "Annie Lee")[0]
    runner = CliRunner()
    out = runner.invoke(main, ["entity", "merge", "ann lee", "Annie Lee"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "merged Annie Lee (Person" in out.output
    log = json.loads(runner.invoke(main, ["entity", "log", "--json"], catch_exceptions=False).output)
    assert [(row["kind"], row["other"], row["undone_at"]) for row in log] == [("merge", "Annie Lee", None)]
    aliases = json.loads(runner.invoke(main, ["entity", "aliases", "Ann Lee", "--json"]).output)
    assert [(a["alias"], a["how"]) for a in aliases] == [("Annie Lee", "manual")]
    missing = runner.invoke(main, ["entity", "merge", "Ann Lee", "Nobody"])
    assert missing.exit_code == 1 and "no entity 'Nobody'" in missing.output
    out = runner.invoke(main, ["entity", "unmerge", str(log[0]["id"])], catch_exceptions=False)
    assert out.exit_code == 0 and f"entity {annie} is back" in out.output
    again = runner.invoke(main, ["entity", "unmerge", str(log[0]["id"])])
    assert again.exit_code == 1 and "undone already" in again.output


def mentioned_by(conn, window_id: int) -> set[tuple]:
    return set(
        conn.execute(
            "select e.canonical_key, m.surface from exo_private.mentions m "
            "join exo_private.entities e on e.id = m.entity_id where m.window_id = %s",
            (window_id,),
        ).fetchall()
    )


def test_a_merge_outlives_a_new_generation_and_unmerges_after_it(db):
    with db.connect("exo_writer") as conn:
        a = add_document(conn, "personal", ["Ann Lee met Bob Ray at the market."])
        b = add_document(conn, "personal", ["Annie Lee and Bob Ray fixed the fence."])

        def extract(gen: int | None = None) -> None:
            # Annie's window first: in a new generation her name meets no Ann Lee yet
            merge(
                conn,
                b.windows[0],
                [person("Annie Lee"), person("Bob Ray")],
                [rel("Annie Lee", "met", "Bob Ray")],
                gen,
            )
            merge(
                conn,
                a.windows[0],
                [person("Ann Lee"), person("Bob Ray")],
                [rel("Ann Lee", "met", "Bob Ray")],
                gen,
            )

        extract()
        ann, annie = entity(conn, "Ann Lee")[0], entity(conn, "Annie Lee")[0]
        log_id = scalar(conn, "select exo_private.merge_entities(%s, %s)", ann, annie)

        gen = scalar(conn, "select exo_private.bump_generation('personal', 'model-b')")
        assert entity(conn, "Ann Lee") is None  # the old generation's rows are gone
        extract(gen)
        new_ann = entity(conn, "Ann Lee")[0]
        assert new_ann != ann and entity(conn, "Annie Lee") is None
        assert scalar(conn, "select name from exo_private.entities where id = %s", new_ann) == "Ann Lee"
        # Annie's mentions and relation land on Ann Lee, her name its manual alias
        assert mentioned_by(conn, b.windows[0]) == {("ann lee", "Annie Lee"), ("bob ray", "Bob Ray")}
        assert (
            scalar(
                conn,
                "select count(*) from exo_private.relations where window_id = %s and subject_id = %s",
                b.windows[0],
                new_ann,
            )
            == 1
        )
        assert conn.execute(
            "select alias_key, how from exo_private.entity_aliases where entity_id = %s", (new_ann,)
        ).fetchall() == [("annie lee", "manual")]
        assert disagreements(conn, "personal") == []

        # unmerged after the bump: the name is split off the entity it is on now
        back = scalar(conn, "select exo_private.unmerge_entities(%s)", log_id)
        assert entity(conn, "Annie Lee") == (back, "Person")
        assert mentioned_by(conn, b.windows[0]) == {("annie lee", "Annie Lee"), ("bob ray", "Bob Ray")}
        assert (
            scalar(conn, "select count(*) from exo_private.entity_aliases where entity_id = %s", new_ann) == 0
        )
        assert scalar(
            conn, "select undone_at is not null from exo_private.entity_merge_log where id = %s", log_id
        )
        assert disagreements(conn, "personal") == []
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="undone already"):
            conn.execute("select exo_private.unmerge_entities(%s)", (log_id,))

        # and a generation after that keeps them apart
        gen = scalar(conn, "select exo_private.bump_generation('personal', 'model-c')")
        extract(gen)
        assert mentioned_by(conn, b.windows[0]) == {("annie lee", "Annie Lee"), ("bob ray", "Bob Ray")}
        assert mentioned_by(conn, a.windows[0]) == {("ann lee", "Ann Lee"), ("bob ray", "Bob Ray")}


def test_an_unmerge_before_the_new_generation_extracts_the_name(two_people, db, monkeypatch):
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    conn = two_people
    ann, annie = entity(conn, "Ann Lee")[0], entity(conn, "Annie Lee")[0]
    log_id = scalar(conn, "select exo_private.merge_entities(%s, %s)", ann, annie)
    gen = scalar(conn, "select exo_private.bump_generation('personal', 'model-b')")
    # nothing extracted again yet: undone, and the name will be its own entity
    out = CliRunner().invoke(main, ["entity", "unmerge", str(log_id)], catch_exceptions=False)
    assert out.exit_code == 0 and "its next extraction keeps it apart" in out.output
    log = json.loads(CliRunner().invoke(main, ["entity", "log", "--json"], catch_exceptions=False).output)
    assert [(row["kept"], row["other"]) for row in log] == [("Ann Lee", "Annie Lee")]
    assert log[0]["undone_at"] is not None
    later = add_document(conn, "personal", ["Annie Lee phoned."])
    merge(conn, later.windows[0], [person("Annie Lee")], gen=gen)
    assert mentioned_by(conn, later.windows[0]) == {("annie lee", "Annie Lee")}


def test_a_split_outlives_a_new_generation(db):
    with db.connect("exo_writer") as conn:
        first = add_document(conn, "personal", ["Prudence Hale came round. Hale brought the lease."])
        later = add_document(conn, "personal", ["Hale rang about the boiler."])
        prudence = {
            "name": "Prudence Hale",
            "type": "Person",
            "aliases": [{"surface": "Hale", "how": "surname"}],
        }

        def extract(gen: int | None = None) -> None:
            merge(conn, first.windows[0], [prudence], gen=gen)
            merge(conn, later.windows[0], [person("Hale")], gen=gen)

        extract()
        assert mentioned_by(conn, later.windows[0]) == {("prudence hale", "Hale")}
        # the Hale who rang is someone else
        conn.execute("select exo_private.split_entity(%s, 'Hale')", (entity(conn, "Prudence Hale")[0],))
        assert mentioned_by(conn, later.windows[0]) == {("hale", "Hale")}
        # the same window read again in this generation records no such alias any more
        merge(conn, first.windows[0], [prudence])
        assert scalar(conn, "select count(*) from exo_private.entity_aliases where alias_key = 'hale'") == 0

        gen = scalar(conn, "select exo_private.bump_generation('personal', 'model-b')")
        extract(gen)
        assert mentioned_by(conn, later.windows[0]) == {("hale", "Hale")}
        assert scalar(conn, "select count(*) from exo_private.entity_aliases where alias_key = 'hale'") == 0
        # a merge made after the split joins them again, in later generations too
        conn.execute(
            "select exo_private.merge_entities(%s, %s)",
            (entity(conn, "Prudence Hale")[0], entity(conn, "Hale")[0]),
        )
        gen = scalar(conn, "select exo_private.bump_generation('personal', 'model-c')")
        extract(gen)
        assert mentioned_by(conn, later.windows[0]) == {("prudence hale", "Hale")}
        assert disagreements(conn, "personal") == []
