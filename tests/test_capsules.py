"""Capsules: extractive summaries of long documents with a generation stamp (issue 15).

The builder (plpy/capsules.py) as plain Python over real prose: the topics of Python's own
reference documentation (pydoc_data, shipped with every CPython), cut into chunks as ingest
cuts them. Then in the database: ingest queues a long document on the capsules queue, the
worker builds its capsule, the packet shows it with its sources; editing the file and
ingesting again makes it stale, so the capsule stage and the packet fall back to raw
evidence and the report says so; charged chunks never lend a sentence to a capsule.
"""

from __future__ import annotations

import copy
from pydoc_data.topics import topics

import psycopg
import pytest
from click.testing import CliRunner
from support.plpy import load

from exocortex.cli import main
from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

capsules = load("capsules")
chunking = load("chunking")


def chunks_of(text: str, charged=()) -> list[dict]:
    """The text cut as ingest cuts retrieval chunks; chunks at the `charged` ordinals are charged."""
    return [
        {
            "id": 100 + i,
            "body": text[a:b],
            "char_start": a,
            "char_end": b,
            "charged_subjects": ["Walter Rivera"] if i in charged else [],
        }
        for i, (a, b) in enumerate(chunking.split_text(text, 1200, 200))
    ]


def traced(built: dict, chunks: list[dict]) -> list[int]:
    """Check every line of a capsule against the chunk text it cites; the document offsets."""
    by_id = {c["id"]: c for c in chunks}
    lines = built["body"].split("\n")
    assert len(lines) == len(built["sentences"])
    offsets = []
    for line, s in zip(lines, built["sentences"], strict=True):
        chunk = by_id[s["chunk_id"]]
        assert " ".join(chunk["body"][s["start"] : s["end"]].split()) == line
        offsets.append(chunk["char_start"] + s["start"])
    return offsets


# -- the builder, as plain Python ---------------------------------------------------------------


@pytest.mark.parametrize("topic", ["execmodel", "import", "types", "compound"])
def test_a_capsule_is_deterministic_within_size_and_every_line_traceable(topic):
    text = topics[topic]
    chunks = chunks_of(text)
    built = capsules.build_capsule(chunks, len(text), 400, 1200)
    assert built == capsules.build_capsule(copy.deepcopy(chunks), len(text), 400, 1200)
    assert 400 <= built["tokens"] <= 1200 and built["tokens"] == (len(built["body"]) + 3) // 4
    offsets = traced(built, chunks)
    assert offsets == sorted(set(offsets))  # document order, each sentence once (chunks overlap)
    assert built["chunk_ids"] == sorted({s["chunk_id"] for s in built["sentences"]})
    # A longer document gets a longer capsule, up to the maximum.
    if len(text) * capsules.SHARE >= 4 * 1200:
        assert built["tokens"] > 1000


def test_the_sentences_taken_are_the_most_central_ones():
    text = topics["execmodel"]
    found, _ = capsules.prose_sentences(chunks_of(text))
    scores = capsules.centrality(found)
    built = capsules.build_capsule(chunks_of(text), len(text), 400, 1200)
    taken = {(s["chunk_id"], s["start"]) for s in built["sentences"]}
    chosen = [sc for s, sc in zip(found, scores, strict=True) if (s["chunk_id"], s["start"]) in taken]
    left = [sc for s, sc in zip(found, scores, strict=True) if (s["chunk_id"], s["start"]) not in taken]
    assert sum(chosen) / len(chosen) > sum(left) / len(left)
    # The execution model's capsule is about names, blocks and scopes.
    words = set(capsules.sentence_terms(built["body"]))
    assert {"name", "block", "scope"} <= words


def test_charged_chunks_lend_no_sentence_and_too_little_prose_makes_no_capsule():
    text = topics["execmodel"]
    chunks = chunks_of(text, charged={1, 2, 3})
    built = capsules.build_capsule(chunks, len(text), 400, 1200)
    assert built["charged_skipped"] > 0
    assert not {101, 102, 103} & set(built["chunk_ids"])
    traced(built, chunks)
    # Everything charged but one chunk: too little prose for a capsule of 400 tokens.
    assert capsules.build_capsule(chunks_of(text, charged=set(range(1, 40))), len(text), 400, 1200) is None


def test_a_document_of_near_duplicate_lines_makes_no_capsule():
    # A changelog index: hundreds of lines that differ by a version number say one thing.
    text = "\n\n".join(
        f"Version 20.{i}.0 of the runtime was released; see the changelog of that version for details."
        for i in range(200)
    )
    assert len(capsules.prose_sentences(chunks_of(text))[0]) == 200
    assert capsules.build_capsule(chunks_of(text), len(text), 400, 1200) is None


def test_code_tables_and_headings_are_not_prose():
    assert capsules.prose("A block is a piece of Python program text that is executed as a unit.")
    assert not capsules.prose("   for i in range(10): print(i, i ** 2, i ** 3) # a loop")
    assert not capsules.prose("| name | value | kind | another column | and more |")
    assert not capsules.prose("# Execution model and the naming of things in Python")
    assert not capsules.prose("Too short to say much.")


# -- in the database: queue, worker, stamp, staleness, stage and packet ----------------------------

LONG = "execmodel"


def write_vault(root, extra: str = "") -> None:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    (root / "notes" / "execution-model.md").write_text(
        "---\ndate: 2026-10-01\n---\n# Execution model\n\n" + topics[LONG] + extra
    )
    (root / "notes" / "short.md").write_text(
        "---\ndate: 2026-10-02\n---\n# Short\n\nA short note on naming.\n"
    )


def drain(db):
    return Worker(db.cfg, dbname=db.name, once=True, queues=("capsules",), concurrency=1, poll_s=0.05).run()


def one(db, sql: str, *params):
    with db.connect() as conn:
        return conn.execute(sql, params).fetchone()


def state(db) -> str:
    return one(db, "select state from exo_private.capsule_states")[0]


def packet(db, question: str, budget: int = 4000) -> dict:
    with db.connect("exo_reader") as conn:
        return conn.execute("select exo.context_packet_json(%s, %s)", (question, budget)).fetchone()[0]


QUESTION = "How does Python resolve a free variable in a code block?"


def test_the_worker_builds_a_capsule_and_an_edited_source_makes_it_stale(db, tmp_path):
    root = tmp_path / "vault"
    write_vault(root)
    pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
    # Only the long document is queued.
    assert one(db, "select count(*) from pgmq.q_capsules")[0] == 1
    result = drain(db)
    assert result.done["capsules"] == 1 and not result.errors
    assert one(db, "select count(*) from pgmq.q_capsules")[0] == 0
    assert one(db, "select count(*) from pgmq.a_capsules")[0] == 1
    capsule_id, doc, tokens, body, sentences, built_state, stamp_ok = one(
        db,
        """select k.id, k.document_id, k.tokens, k.body, k.sentences, s.state,
                  k.stamp = exo_private.capsule_stamp(k.builder, array[d.sha256])
           from exo_private.capsules k join exo_private.documents d on d.id = k.document_id
           join exo_private.capsule_states s on s.capsule_id = k.id""",
    )
    assert 400 <= tokens <= 1200 and built_state == "fresh" and stamp_ok
    with db.connect() as conn:
        bodies = dict(conn.execute("select id, body from exo_private.chunks where document_id = %s", (doc,)))
    for line, s in zip(body.split("\n"), sentences, strict=True):
        assert " ".join(bodies[s["chunk_id"]][s["start"] : s["end"]].split()) == line

    found = packet(db, QUESTION)
    text = found["text"]
    assert "## Capsules" in text and text.index("## Capsules") < text.index("## Evidence")
    assert text.index("## Capsules") < text.index("## Evidence")
    assert "technical:notes/execution-model.md" in text.split("## Evidence")[0]
    assert found["tokens"] <= 4000
    assert [c["capsule_id"] for c in found["capsules"]] == [capsule_id]
    assert set(found["capsules"][0]["chunk_ids"]) <= set(bodies)
    assert found["report"]["capsules"]["packet"]["shown"] == [capsule_id]

    # The same message again (a document chunked twice before the worker came) builds nothing.
    with db.connect() as conn:
        conn.execute("select pgmq.send('capsules', jsonb_build_object('document_id', %s::bigint))", (doc,))
    again = drain(db)
    assert again.skipped["capsules"] == 1 and one(db, "select count(*) from pgmq.q_capsules")[0] == 0

    # Edited and ingested again: the stamp no longer matches, nothing stale is served.
    write_vault(root, extra="\n\nA closing paragraph added later changes the file and its hash.\n")
    pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
    assert state(db) == "stale"
    found = packet(db, QUESTION)
    assert "## Capsules" not in found["text"] and "## Evidence" in found["text"]
    assert "technical:notes/execution-model.md" in found["text"]  # raw evidence instead
    assert found["capsules"] == []
    assert found["report"]["capsules"]["packet"]["stale_skipped"] == [capsule_id]
    assert "stale" in found["text"].split("## Provenance")[1]
    # The capsule stage alone: it finds the capsule but serves nothing stale.
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('retrieval.stages', '[\"capsules\"]')")
    with db.connect("exo_reader") as conn:
        report = conn.execute("select exo.search_report(%s)", (QUESTION,)).fetchone()[0]
    assert report["capsules"]["stale_skipped"] == [capsule_id] and report["capsules"]["served"] == []
    assert report["workspaces"]["technical"]["candidates"] == 0

    # The worker builds it again from the new text; the stage serves its sources.
    assert drain(db).done["capsules"] == 1
    assert state(db) == "fresh"
    with db.connect("exo_reader") as conn:
        found = conn.execute("select exo.search_json(%s)", (QUESTION,)).fetchone()[0]
    assert found["report"]["capsules"]["served"] == [capsule_id]
    cited = one(db, "select chunk_ids from exo_private.capsules")[0]
    assert found["results"] and all(r["stage"] == "capsules" for r in found["results"])
    assert {r["chunk_id"] for r in found["results"]} <= set(cited)


def test_a_capsule_takes_no_sentence_from_charged_chunks(db, tmp_path):
    with db.connect() as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera', array['Grandpa Walter'])")
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    paragraphs = topics[LONG].split("\n\n")
    middle = len(paragraphs) // 2
    paragraphs.insert(
        middle, "Walter Rivera explained this part of the execution model to me in the hospital."
    )
    (root / "notes" / "execution-model.md").write_text("# Execution model\n\n" + "\n\n".join(paragraphs))
    pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
    assert drain(db).done["capsules"] == 1
    body, cited, charged = one(
        db,
        """select k.body, k.chunk_ids,
                  array(select c.id from exo_private.chunks c
                        where c.document_id = k.document_id and c.charged_subjects <> '{}')
           from exo_private.capsules k""",
    )
    assert charged and not set(charged) & set(cited)
    assert "Walter" not in body
    # A chunk marked charged after the build (the deference list grew): the capsule is withheld.
    with db.connect() as conn:
        conn.execute(
            "update exo_private.chunks set charged_subjects = array['Walter Rivera'] where id = %s",
            (cited[0],),
        )
    assert state(db) == "withheld"
    assert "## Capsules" not in packet(db, QUESTION)["text"]


def test_capsule_job_statuses(db, tmp_path, monkeypatch):
    root = tmp_path / "vault"
    write_vault(root)
    pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
    with db.connect("exo_writer") as conn:
        short, long_ = (
            r[0]
            for r in conn.execute(
                "select id from exo_private.documents order by path = 'notes/short.md' desc"
            )
        )

        def build(doc):
            return conn.execute("select exo_private.build_capsule(%s)", (doc,)).fetchone()[0]

        assert build(short)["status"] == "too_small"
        assert build(long_)["status"] == "built"
        assert build(long_)["status"] == "fresh"
        assert build(-1)["status"] == "gone"
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_document_id must not be null"):
            build(None)

        # queue_capsules: every capsule missing or not fresh, once.
        conn.execute("delete from pgmq.q_capsules")
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0
        conn.execute("update exo_private.documents set sha256 = repeat('0', 64) where id = %s", (long_,))
        assert conn.execute("select exo_private.queue_capsules('technical')").fetchone()[0] == 1
        assert conn.execute("select exo_private.queue_capsules()").fetchone()[0] == 0  # queued already
        conn.execute("delete from pgmq.q_capsules")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="workspace"):
            conn.execute("select exo_private.queue_capsules('no such place')")
    monkeypatch.setenv("EXO_DATABASE_URL", db.url())
    retried = CliRunner().invoke(
        main, ["worker", "retry-failed", "--queue", "capsules"], catch_exceptions=False
    )
    assert retried.output.strip() == "capsules: 1 queued again"


def test_a_deference_change_queues_the_capsules_it_withholds(db, tmp_path):
    """Built before Walter Rivera was deferred, the capsule cites his chunk; deferring him
    re-marks the chunks and queues the capsule, which is rebuilt without that chunk."""
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    paragraphs = topics[LONG].split("\n\n")
    paragraphs.insert(
        1, "Walter Rivera explained the execution model of Python code blocks to me in the hospital."
    )
    (root / "notes" / "execution-model.md").write_text("# Execution model\n\n" + "\n\n".join(paragraphs))
    pipeline.ingest(db.cfg, root, "technical", dbname=db.name)
    assert drain(db).done["capsules"] == 1
    cited = one(db, "select chunk_ids from exo_private.capsules")[0]
    with db.connect() as conn:
        walter = conn.execute(
            "select id from exo_private.chunks where body like '%%Walter Rivera%%'"
        ).fetchone()[0]
        assert walter in cited
        conn.execute("select exo_private.defer_subject('Walter Rivera')")
    assert state(db) == "withheld"
    assert one(db, "select count(*) from pgmq.q_capsules")[0] == 1
    assert drain(db).done["capsules"] == 1
    assert state(db) == "fresh" and walter not in one(db, "select chunk_ids from exo_private.capsules")[0]
