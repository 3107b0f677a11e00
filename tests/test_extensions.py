"""Each extension really works in a migrated database."""

from __future__ import annotations

import random
import time
import uuid

import pytest

from exocortex.db import admin_url, connect


def test_every_workspace_has_its_age_graph_and_a_new_one_gets_one(db):
    with db.connect() as conn:
        conn.execute("insert into exo_private.workspaces (name, description) values ('research', 'r')")
        graphs = dict(
            conn.execute(
                "select w.name, g.name from exo.workspaces w left join ag_catalog.ag_graph g on g.name = w.graph"
            ).fetchall()
        )
    assert graphs == {
        w: f"graph_{w}" for w in ("technical", "creative", "personal", "administrative", "research")
    }


def test_age_cypher_create_and_match(db):
    with db.connect() as conn:
        conn.execute("set search_path = ag_catalog, public")
        conn.execute(
            """select * from cypher('graph_technical', $$
                   create (:Person {name: 'Jane Doe'})-[:WORKS_AT]->(:Org {name: 'Acme'})
               $$) as (v agtype)"""
        )
        rows = conn.execute(
            """select * from cypher('graph_technical', $$
                   match (p:Person)-[:WORKS_AT]->(o:Org) return p.name, o.name
               $$) as (person agtype, org agtype)"""
        ).fetchall()
        other = conn.execute(
            "select * from cypher('graph_creative', $$ match (p:Person) return p.name $$) as (n agtype)"
        ).fetchall()
    assert rows == [('"Jane Doe"', '"Acme"')]
    assert other == []  # graphs are per workspace


def test_hnsw_index_answers_nearest_neighbour_queries(db):
    rng = random.Random(7)
    with db.connect() as conn:
        conn.execute("create table exo_private.vec_probe (id int primary key, embedding vector(8))")
        with conn.cursor() as cur:
            cur.executemany(
                "insert into exo_private.vec_probe values (%s, %s::vector)",
                [(i, str([rng.uniform(-1, 1) for _ in range(8)])) for i in range(2000)],
            )
        conn.execute("create index on exo_private.vec_probe using hnsw (embedding vector_cosine_ops)")
        target = conn.execute("select embedding::text from exo_private.vec_probe where id = 1234").fetchone()[
            0
        ]
        conn.execute("set enable_seqscan = off")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "explain select id from exo_private.vec_probe order by embedding <=> %s::vector limit 5",
                (target,),
            )
        )
        nearest = conn.execute(
            "select id from exo_private.vec_probe order by embedding <=> %s::vector limit 1", (target,)
        ).fetchone()
    assert "vec_probe_embedding_idx" in plan
    assert nearest == (1234,)


def test_bm25_index_ranks_with_the_distance_operator(db):
    with db.connect() as conn:
        conn.execute("create table exo_private.bm25_probe (id int primary key, body text)")
        conn.execute(
            """insert into exo_private.bm25_probe values
               (1, 'The quick brown fox jumps over the lazy dog'),
               (2, 'A postgres database with the pg_textsearch extension'),
               (3, 'Fox, fox, fox: the fox report on foxes'),
               (4, 'Nothing relevant here at all')"""
        )
        conn.execute(
            "create index bm25_probe_idx on exo_private.bm25_probe using bm25 (body) with (text_config = 'english')"
        )
        conn.execute("set enable_seqscan = off")
        ranked = conn.execute(
            "select id, body <@> to_bm25query('fox', 'exo_private.bm25_probe_idx') as score "
            "from exo_private.bm25_probe order by score limit 2"
        ).fetchall()
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "explain select id from exo_private.bm25_probe "
                "order by body <@> to_bm25query('fox', 'exo_private.bm25_probe_idx') limit 2"
            )
        )
    assert [r[0] for r in ranked] == [3, 1]
    assert ranked[0][1] < ranked[1][1] < 0  # <@> gives negated BM25: lower is better
    assert "bm25_probe_idx" in plan


def test_plpython_function_runs_the_inlined_module(db):
    with db.connect() as conn:
        keys = conn.execute(
            "select exo_private.canonical_key(x) from unnest(array['  Jane\tDOE. ', 'jane doe', '«Ａcme»']) x"
        ).fetchall()
        language = conn.execute(
            "select l.lanname from pg_proc p join pg_language l on l.oid = p.prolang "
            "where p.oid = 'exo_private.canonical_key(text)'::regprocedure"
        ).fetchone()
    assert keys == [("jane doe",), ("jane doe",), ("acme",)]
    assert language == ("plpython3u",)


def test_pgmq_send_read_archive(db):
    with db.connect() as conn:  # queues are created by the owner (in migrations), used by the writer
        conn.execute("set role exo_owner")
        conn.execute("select pgmq.create('probe')")
    with db.connect("exo_writer") as conn:
        msg_id = conn.execute("select * from pgmq.send('probe', %s::jsonb)", ('{"chunk": 42}',)).fetchone()[0]
        read = conn.execute("select msg_id, message from pgmq.read('probe', 30, 1)").fetchall()
        invisible = conn.execute("select count(*) from pgmq.read('probe', 30, 1)").fetchone()
        archived = conn.execute("select pgmq.archive('probe', %s::bigint)", (msg_id,)).fetchone()
        in_archive = conn.execute("select message from pgmq.a_probe where msg_id = %s", (msg_id,)).fetchone()
        left = conn.execute("select count(*) from pgmq.q_probe").fetchone()
    assert read == [(msg_id, {"chunk": 42})]
    assert invisible == (0,)  # the visibility timeout hides a message being worked on
    assert archived == (True,)
    assert in_archive == ({"chunk": 42},)
    assert left == (0,)


@pytest.mark.slow
def test_pg_cron_job_runs_and_is_recorded(cfg, db):
    # pg_cron lives in cron.database_name; jobs there can run in any database.
    with db.connect() as conn:
        cron_db = conn.execute("show cron.database_name").fetchone()[0]
        conn.execute("create table exo_private.cron_probe (ran_at timestamptz default now())")
    job = f"exo-test-{uuid.uuid4().hex[:8]}"
    with connect(admin_url(cfg, cron_db), "exo-test-cron", autocommit=True) as cron:
        cron.execute("create extension if not exists pg_cron")
        job_id = cron.execute(
            "select cron.schedule_in_database(%s, '1 seconds', "
            "'insert into exo_private.cron_probe default values', %s)",
            (job, db.name),
        ).fetchone()[0]
        try:
            deadline = time.monotonic() + 30
            runs = []
            while time.monotonic() < deadline and not runs:
                time.sleep(0.5)
                runs = cron.execute(
                    "select status from cron.job_run_details where jobid = %s and status = 'succeeded'",
                    (job_id,),
                ).fetchall()
        finally:
            cron.execute("select cron.unschedule(%s)", (job_id,))
            cron.execute("delete from cron.job_run_details where jobid = %s", (job_id,))
    assert runs, "the job did not run within 30 s"
    with db.connect() as conn:
        assert conn.execute("select count(*) from exo_private.cron_probe").fetchone()[0] >= 1
