"""bench/search_corpus.py: a small corpus loads whole, consistent and the same for a seed."""

from __future__ import annotations

from datetime import date

from bench import search_corpus

CUES = ["funeral", "hospice", "diagnosis", "passed away", "miss him", "death", "condolences"]


def test_same_seed_same_text_other_seed_other_text():
    def bodies(seed: int) -> list[str]:
        gen = search_corpus.Generator(300, seed, date(2026, 1, 15), CUES)
        gen.generate()
        return [c.body for c in gen.chunks]

    assert bodies(3) == bodies(3)
    assert bodies(3) != bodies(4)


def test_build_corpus_loads_a_consistent_corpus(db):
    with db.connect() as conn:
        info = search_corpus.build_corpus(conn, 400, seed=5)
        counts = conn.execute(
            """select (select count(*) from exo_private.chunks),
                      (select count(*) from exo_private.chunk_embeddings where model_id = %s),
                      (select count(*) from exo_private.documents where stage = 'embedded'),
                      (select count(*) from exo_private.chunks where charged_subjects = '{Walter Rivera}'),
                      (select count(*) from exo_private.chunks c join exo_private.documents d on d.id = c.document_id
                        where c.band <> d.band or c.written_at is distinct from d.written_at)""",
            (info.model_id,),
        ).fetchone()
        assert counts == (400, 400, info.documents, len(info.charged_chunk_ids), 0)
        assert {ws: n for ws, n in conn.execute(
            "select workspace, count(*) from exo_private.chunks group by 1")} == info.chunks_by_workspace  # fmt: skip
        assert conn.execute(
            "select count(*) from pg_indexes where indexname like 'chunk_embeddings_%%_m' || %s || '_hnsw'",
            (info.model_id,),
        ).fetchone() == (4,)
        for ident, chunk_ids in info.identifiers.items():
            found = conn.execute(
                "select id from exo_private.chunks where strpos(body, %s) > 0 order by id", (ident,)
            )
            assert [r[0] for r in found] == sorted(chunk_ids), ident
        # Every mention's name is in its chunk; the hub is related to every other entity.
        assert conn.execute(
            """select count(*) from exo_private.mentions m join exo_private.chunks c on c.id = m.chunk_id
               where strpos(c.body, m.surface) = 0"""
        ).fetchone() == (0,)
        hub = info.owner_entities["technical"]
        assert conn.execute(
            """select count(*) from exo_private.entities e where e.workspace = 'technical' and e.id <> %s
               and not exists (select 1 from exo_private.relations r where r.subject_id = %s and r.object_id = e.id)""",
            (hub, hub),
        ).fetchone() == (0,)
        top = conn.execute(
            """select id from exo_private.chunks_technical
               order by exo_private.bm25_chunk_text(document_title, body) <@> to_bm25query('replication lag', 'exo_private.chunks_technical_bm25')
               limit 1"""
        ).fetchone()[0]
        assert (
            "replication lag"
            in conn.execute("select lower(body) from exo_private.chunks where id = %s", (top,)).fetchone()[0]
        )
