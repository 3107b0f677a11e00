"""Capsules per folder, per workspace and per entity (issue 15): the builder over real prose
(Python's own reference documentation, pydoc_data), then in the database: queue_capsules queues
the groups due, the worker builds them traceable to their chunks and stamped with their
sources, the capsule stage serves their matching lines' chunks, and an edited source makes them
stale until queued and built again."""

from __future__ import annotations

from pydoc_data.topics import topics

import pytest
from psycopg.types.json import Jsonb
from support.graph import generation
from support.plpy import load

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

capsules = load("capsules")

NOTES = {"execmodel": "execution-model", "import": "imports", "assignment": "assignment", "with": "with"}


def chunk(i, body, start=0, charged=()):
    return {
        "id": i,
        "body": body,
        "char_start": start,
        "char_end": start + len(body),
        "charged_subjects": list(charged),
    }


# -- the builder, as plain Python ---------------------------------------------------------------


def test_group_candidates_take_a_documents_capsule_lines_else_its_prose():
    long_body = "Names refer to objects and are introduced by name binding operations in a block."
    other = "The import statement finds a module, loads and initializes it, and binds a name."
    charged = "Walter Rivera explained the execution model to me at the hospital bedside once."
    chunks = {
        1: [chunk(10, long_body + " " + other)],
        2: [chunk(20, other), chunk(21, charged, 100, ["Walter Rivera"])],
    }
    lines = {1: [{"chunk_id": 10, "start": 0, "end": len(long_body)}]}
    found, skipped = capsules.group_candidates([1, 2], chunks, lines)
    assert [(s["chunk_id"], s["text"], s["at"]) for s in found] == [
        (10, long_body, (0, 0)),
        (20, other, (1, 0)),
    ]
    assert skipped == 1


def test_entity_candidates_are_the_sentences_that_name_it():
    body = (
        "Iris Calder moved the database cluster to the new rack in March this year. "
        "The old rack was retired soon after the migration finished without trouble. "
        "Later IRIS   CALDER wrote the runbook that the whole team still follows today."
    )
    found, _ = capsules.entity_candidates([1], {1: [chunk(5, body)]}, ["Iris Calder"])
    assert [s["text"].split()[0] for s in found] == ["Iris", "Later"]
    assert capsules.naming([" ", ""]) is None


# -- in the database ---------------------------------------------------------------------------


def write_notes(root, edited: str = "") -> None:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    for i, (topic, name) in enumerate(NOTES.items()):
        text = topics[topic] + (edited if topic == "import" else "")
        (root / "notes" / f"{name}.md").write_text(f"---\ndate: 2026-10-0{i + 1}\n---\n# {name}\n\n{text}")


def drain(db):
    return Worker(db.cfg, dbname=db.name, once=True, queues=("capsules",), concurrency=1, poll_s=0.05).run()


def rows(db, sql, *params):
    with db.connect() as conn:
        return conn.execute(sql, params).fetchall()


def groups(db):
    return {
        (scope, key): (state, tokens, sources)
        for scope, key, state, tokens, sources in rows(
            db,
            """select k.scope, k.scope_key, s.state, k.tokens, cardinality(k.sources)
               from exo_private.capsules k join exo_private.capsule_states s on s.capsule_id = k.id
               where k.scope <> 'document'""",
        )
    }


def mention(conn, name: str, chunk_ids: list[int], ws: str = "technical") -> None:
    """A Topic entity `name` mentioned in each of chunk_ids (as extraction would record it)."""
    window = conn.execute(
        "select w.id from exo_private.extraction_windows w join exo_private.chunks c on c.document_id = w.document_id "
        "where c.id = %s order by w.ordinal limit 1",
        (chunk_ids[0],),
    ).fetchone()[0]
    entity = conn.execute(
        """insert into exo_private.entities (workspace, generation, type, name, canonical_key)
           values (%s, %s, 'Topic', %s, exo_private.canonical_key(%s)) returning id""",
        (ws, generation(conn, ws), name, name),
    ).fetchone()[0]
    conn.execute(
        """insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface)
           select %s, %s, c.document_id, c.id, %s from exo_private.chunks c where c.id = any (%s)""",
        (entity, window, name, chunk_ids),
    )


@pytest.fixture
def notes(db, tmp_path):
    root = tmp_path / "vault"
    write_notes(root)
    pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('capsules.entity_min_mentions', '2')")
    return root


def test_folder_workspace_and_entity_capsules_are_built_traceable_and_go_stale(db, notes):
    assert drain(db).done["capsules"] >= 3  # the long documents' own capsules
    with db.connect() as conn:
        # an entity named in three chunks of two documents
        ws = "technical"
        named = conn.execute(
            """select c.id, c.document_id from exo_private.chunks c
               where c.workspace = %s and c.body ~ '\\mmodule\\M' order by c.id""",
            (ws,),
        ).fetchall()
        assert len({d for _, d in named}) >= 2
        mention(conn, "module", [c for c, _ in named])
        queued = conn.execute("select exo_private.queue_capsules()").fetchone()[0]
        folder = conn.execute(
            "select exo_private.capsule_folder(source_id, path) from exo_private.documents limit 1"
        ).fetchone()[0]
    assert queued == 3 and folder.endswith(":notes")
    assert drain(db).done["capsules"] == 3
    built = groups(db)
    assert set(built) == {("folder", folder), ("workspace", "technical"), ("entity", "module")}
    for state, tokens, sources in built.values():
        assert state == "fresh" and 400 <= tokens <= 1200 and sources >= 2
    # every line is the text of the chunk it cites; the entity's lines name it
    with db.connect() as conn:
        for scope, body, sentences in conn.execute(
            "select scope, body, sentences from exo_private.capsules where scope <> 'document'"
        ):
            for line, s in zip(body.split("\n"), sentences, strict=True):
                chunk_body = conn.execute(
                    "select body from exo_private.chunks where id = %s", (s["chunk_id"],)
                )
                assert " ".join(chunk_body.fetchone()[0][s["start"] : s["end"]].split()) == line
                assert scope != "entity" or "module" in line.lower()
        # nothing is due now; built again, nothing changes
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0
        assert (
            conn.execute(
                "select exo_private.capsule_job(%s) ->> 'status'",
                (Jsonb({"workspace": "technical", "scope": "workspace", "key": "technical"}),),
            ).fetchone()[0]
            == "fresh"
        )

    # The capsule stage alone serves the folder's and workspace's lines as their chunks.
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('retrieval.stages', '[\"capsules\"]')")
    with db.connect("exo_reader") as conn:
        found = conn.execute(
            "select exo.search_json('free variables and name binding in modules')"
        ).fetchone()[0]
    served = set(found["report"]["capsules"]["served"])
    group_ids = {r[0] for r in rows(db, "select id from exo_private.capsules where scope <> 'document'")}
    assert served & group_ids and found["results"]

    # An edited source: its folder and workspace capsules are stale, queued, and built again.
    write_notes(
        notes, edited="\n\nA paragraph added later changes the file and its hash, and so its capsules.\n"
    )
    pipeline.ingest(db.cfg, notes, "technical", dbname=db.name)
    stale = groups(db)
    assert stale[("folder", folder)][0] == "stale" and stale[("workspace", "technical")][0] == "stale"
    with db.connect() as conn:
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] >= 2
    drain(db)
    assert {state for state, _, _ in groups(db).values()} == {"fresh"}


def test_a_group_that_no_longer_qualifies_loses_its_capsule(db, notes):
    drain(db)
    with db.connect() as conn:
        conn.execute("select exo_private.queue_capsules()")
    drain(db)
    assert ("workspace", "technical") in groups(db)
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('capsules.folder_min_documents', '10')")
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 2  # folder, workspace
    drain(db)
    assert groups(db) == {}
    # An entity whose chunks never name it: its job builds nothing, and it is not sent again
    # until one of its documents changes.
    with db.connect() as conn:
        chunk_ids = [r[0] for r in conn.execute("select id from exo_private.chunks order by id limit 2")]
        mention(conn, "Zzqx Nowhere", chunk_ids)
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 1
    assert drain(db).skipped["capsules"] == 1
    with db.connect() as conn:
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0
    with db.connect() as conn, pytest.raises(Exception, match="p_scope must be folder, workspace or entity"):
        conn.execute("select exo_private.build_group_capsule('technical', 'shelf', 'x')")


def naming_module(conn) -> list[int]:
    """The chunks that name "module", in order."""
    found = conn.execute("select c.id from exo_private.chunks c where c.body ~ '\\mmodule\\M' order by c.id")
    return [r[0] for r in found]


def test_an_entity_capsule_follows_its_mentions_and_a_new_builder_queues_every_capsule(db, notes):
    drain(db)
    with db.connect() as conn:
        named = naming_module(conn)
        assert len(named) >= 4
        mention(conn, "module", named[:-1])
        conn.execute("select exo_private.queue_capsules()")
    drain(db)
    with db.connect() as conn:
        first = conn.execute(
            "select id, mention_chunks, built_at from exo_private.capsules where scope = 'entity'"
        ).fetchone()
        assert first[1] == len(named) - 1
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0
        # More chunks name it (a new extraction, a merge): no document changed, yet it is due
        conn.execute(
            """insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface)
               select m.entity_id, m.window_id, c.document_id, c.id, 'module'
               from exo_private.chunks c,
                    (select entity_id, window_id from exo_private.mentions limit 1) m
               where c.id = %s""",
            (named[-1],),
        )
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 1
    drain(db)
    with db.connect() as conn:
        again = conn.execute(
            "select id, mention_chunks, built_at from exo_private.capsules where scope = 'entity'"
        ).fetchone()
        assert again[0] == first[0] and again[1] == len(named) and again[2] > first[2]
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0

        # capsules.builder = model queues every capsule the extractive builder made; with the chat
        # endpoint down each falls back, says why, and is not queued again
        every = conn.execute("select count(*) from exo_private.capsules").fetchone()[0]
        conn.execute(
            'select exo_private.set_setting(\'models.chat\', value || \'{"url": "http://127.0.0.1:9/v1", '
            "\"timeout_s\": 2}') from exo_private.settings where key = 'models.chat'"
        )
        conn.execute("select exo_private.set_setting('capsules.builder', '\"model\"')")
        assert conn.execute("select count(*) from pgmq.q_capsules").fetchone()[0] == every
    drain(db)
    with db.connect() as conn:
        notes_left = conn.execute(
            "select count(*) filter (where note like 'chat endpoint:%'), count(*) from exo_private.capsules"
        ).fetchone()
        assert notes_left == (every, every)
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0


def test_no_capsule_sums_up_a_deferred_subject(db, notes):
    """An entity capsule whose entity is a deferred subject (by a name or an alias) is withheld
    whatever it cites, then dropped; none is built for it again."""
    drain(db)
    with db.connect() as conn:
        mention(conn, "module", naming_module(conn))
        conn.execute("select exo_private.queue_capsules()")
    drain(db)
    assert groups(db)[("entity", "module")][0] == "fresh"
    with db.connect() as conn:
        conn.execute("select exo_private.defer_subject('Module', array['the module'])")
    assert groups(db)[("entity", "module")][0] == "withheld"
    with db.connect() as conn:
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] >= 1
    drain(db)
    assert ("entity", "module") not in groups(db)
    with db.connect() as conn:
        conn.execute("select exo_private.queue_capsules()")
    drain(db)
    assert ("entity", "module") not in groups(db)
