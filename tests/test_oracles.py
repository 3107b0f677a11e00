"""No report, hint, error or count varies with what withheld material says (docs/security.md).

Two memories are built from corpora that differ only inside charged material: the same notes,
the same charged notes at the same paths and of the same length, but the charged notes' words
differ (one holds the words the questions ask for, the other does not). Every question a hostile
reader might use as a probe gets the same answer from both, rows, reports and hints alike, but
for the timings: nothing tells which words the withheld material holds. Bridged, the two differ,
as they should.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from support.db import Database, cloned_database
from support.deferred import rebuilt_open_indexes
from support.graph import merge, person, rel

from exocortex.ingest import pipeline

SUBJECT, ALIAS = "Walter Rivera", "Grandpa"
COMMON = ["harbour", "lantern", "orchard", "kettle", "ferry", "violin", "quarry", "meadow", "garden", "radio"]
#: The probes: words only the first corpus's charged notes hold, only the second's, and both's.
FIRST_ONLY = ["xylophone", "glacier", "saffron"]
SECOND_ONLY = ["hospice", "nurses", "chapel"]
#: A person only the first corpus's charged notes name: known to its graph only from withheld
#: material, and nowhere in the second's (a word of the same length in its place).
HIDDEN_PERSON = "Quill"
SECRETS = ([*FIRST_ONLY, HIDDEN_PERSON], [*SECOND_ONLY, "bells"])


def _note(front: dict, body: str) -> str:
    lines = [f"{k}: {json.dumps(v)}" for k, v in front.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


#: Two people in plain notes and in the charged ones; only the first corpus's charged note relates them.
PEOPLE = ["Olwen Tarrant", "Pim Vos"]


def _corpus(root: Path, seed: int, secret: list[str]) -> None:
    """Plain notes, the same for every seed's two corpora, and charged notes that hold `secret`."""
    rng = random.Random(seed)
    for n in range(10):
        words = rng.sample(COMMON, 4) + ([rng.choice(FIRST_ONLY + SECOND_ONLY)] if n % 3 == 0 else [])
        words += [PEOPLE[n]] if n < len(PEOPLE) else []
        workspace = rng.choice(["personal", "technical"])
        if n < len(PEOPLE):  # where the charged notes name them too
            workspace = "personal"
        (root / f"plain{n:02d}.md").write_text(
            _note(
                {"workspace": workspace, "date": f"2026-0{1 + n % 9}-1{n % 9}"}, " ".join(words) + " today."
            )
        )
    # charged three ways: by frontmatter, by a cue near the subject's name, by the title
    kinds = [
        ({"charged": [SUBJECT]}, "We talked for an hour."),
        ({}, f"{ALIAS} was at the funeral and we talked."),
        ({"title": f"The funeral of {SUBJECT}"}, "We talked for an hour."),
    ]
    for n, (front, opening) in enumerate(kinds):
        body = f"{opening} {' '.join(secret)} {rng.choice(COMMON)} with {' and '.join(PEOPLE)}."
        (root / f"charged{n}.md").write_text(
            _note({"workspace": "personal", "date": "2026-02-02", **front}, body)
        )


@pytest.fixture(scope="module", params=[(3, "deferred first"), (17, "deferred after the ingest")], ids=str)
def twins(request, cfg, template_db, tmp_path_factory) -> Iterator[tuple[Database, Database]]:
    """Two memories that differ only inside charged material. The subject is on the deference list
    before the notes come in, or only after (its chunks charged in place, exo_private.remark_charged)."""
    seed, when = request.param
    # the same length of secret in both: the same chunks, at the same ids
    with (
        cloned_database(cfg, template_db, "exo_twin") as first,
        cloned_database(cfg, template_db, "exo_twin") as second,
    ):
        for db, secret in zip((first, second), SECRETS, strict=True):
            root = tmp_path_factory.mktemp(f"corpus{seed}")
            _corpus(root, seed, secret)
            with db.connect() as conn:
                if when == "deferred first":
                    conn.execute("select exo_private.defer_subject(%s, %s)", (SUBJECT, [ALIAS]))
                # facts withheld for their subject (an alias) and for their words (a name near a cue)
                observed = [
                    {"subject": ALIAS, "attribute": "note", "value": " ".join(secret)},
                    {
                        "subject": "Sam Rivera",
                        "attribute": "note",
                        "value": f"{ALIAS} died; {' '.join(secret)}",
                    },
                    # withheld for its words: about a person both memories show, not the same one
                    {
                        "subject": PEOPLE[secret is SECRETS[0]],
                        "attribute": "visit",
                        "value": f"{ALIAS} died; {' '.join(secret)}",
                    },
                ]
                conn.execute(
                    "select exo_private.observe(%s)",
                    (json.dumps([o | {"workspace": "personal", "observed_at": "2026-03-01", "source": "test"}
                                 for o in observed]),),
                )  # fmt: skip
            pipeline.ingest(cfg, root, dbname=db.name)
            _extract(db, related=secret is SECRETS[0])
            if when == "deferred after the ingest":
                with db.connect() as conn:
                    assert conn.execute(
                        "select exo_private.defer_subject(%s, %s)", (SUBJECT, [ALIAS])
                    ).fetchone()[0]
                assert rebuilt_open_indexes(db) == 1
        yield first, second


def _extract(db: Database, related: bool) -> None:
    """The graph a model would leave: each person where named; from the first corpus's charged
    notes (their text differs) also a relation between them and HIDDEN_PERSON, which the second's
    do not give."""
    with db.connect("exo_writer") as conn:
        windows = conn.execute(
            "select w.id, d.path from exo_private.extraction_windows w"
            " join exo_private.documents d on d.id = w.document_id order by w.id"
        ).fetchall()
        for window, path in windows:
            named = [p for p in PEOPLE if path.startswith("charged") or path == f"plain0{PEOPLE.index(p)}.md"]
            relations = [rel(*PEOPLE[:1], "knows", PEOPLE[1])] if related and path == "charged1.md" else []
            if named:
                merge(conn, window, [person(p) for p in named], relations)
        if related:  # last, so the entities both memories share keep the same ids
            window = next(w for w, path in windows if path == "charged0.md")
            merge(conn, window, [person(p) for p in [*PEOPLE, HIDDEN_PERSON]])


def _strip(value):
    """The answer without what timing changes: timings_ms, a stage's ms."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in ("timings_ms", "ms")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _answers(db: Database, query: str, bridge: list[str]) -> dict:
    with db.connect("exo_reader") as conn:

        def one(sql: str, *args):
            return _strip(conn.execute(sql, args).fetchone()[0])

        return {
            "search": one("select exo.search_json(%s, k => 10, bridge => %s)", query, bridge),
            "packet": one("select exo.context_packet_json(%s, 600, bridge => %s)", query, bridge),
            "archive": one("select exo.search_report(%s, open_archive => true, bridge => %s)", query, bridge),
            "facts": one(
                "select coalesce(jsonb_agg(to_jsonb(f)), '[]') from exo.facts_search(%s, bridge => %s) f",
                query,
                bridge,
            ),
            "subject's facts": one(
                "select coalesce(jsonb_agg(to_jsonb(f)), '[]') from exo.facts(%s, bridge => %s) f",
                query,
                bridge,
            ),
            "history": one(
                "select coalesce(jsonb_agg(to_jsonb(f)), '[]') from exo.fact_history(%s, 'visit', bridge => %s) f",
                query,
                bridge,
            ),
            "entities": one(
                "select coalesce(jsonb_agg(to_jsonb(e)), '[]') from exo.search_entities(%s) e",
                query,
            ),
        }


def _dossier(conn, query: str):
    """exo.dossier's answer, or the error it raises (its message; the hint repeats the name)."""
    try:
        with conn.transaction():
            return _strip(conn.execute("select exo.dossier(%s)", (query,)).fetchone()[0])
    except psycopg.errors.InvalidParameterValue as exc:
        return {"error": exc.diag.message_primary}


QUERIES = [
    *FIRST_ONLY,
    *SECOND_ONLY,
    "harbour",
    "we talked",
    "Grandpa",
    "funeral",
    "hospice harbour",
    *PEOPLE,
]


@pytest.mark.parametrize("query", QUERIES)
def test_what_withheld_material_says_changes_no_answer(twins, query):
    first, second = twins
    assert _answers(first, query, []) == _answers(second, query, [])


def test_a_person_known_only_from_withheld_material_changes_no_answer(twins):
    """A question naming them is searched as one naming no one (the participant stage skipped
    alike), exo.search_entities hints alike, and exo.dossier says their name names no entity, as
    it says of a name nothing gives (the second memory's graph has no such person)."""
    first, second = (_answers(db, HIDDEN_PERSON, []) for db in twins)
    assert first == second
    crossing, graphs = [], []
    for db in twins:
        with db.connect("exo_reader") as conn:
            crossing.append(conn.execute("select exo.cross_document_entities(1)").fetchone()[0])
            graphs.append(conn.execute("select exo.status() -> 'graph'").fetchone()[0])
            graphs.append(
                [
                    r[0]
                    for query in (
                        "MATCH (n) RETURN n.name",
                        "MATCH (a)-[r]-(b) RETURN [a.name, type(r), b.name]",
                    )
                    for r in conn.execute("select * from exo.cypher('personal', %s)", (query,)).fetchall()
                ]
            )
    assert crossing[0] == crossing[1] and crossing[0]["hints"]  # no count of the entities withheld
    # nor in the status, nor in the graph Cypher reads and its hint
    assert graphs[:2] == graphs[2:] and graphs[0]["personal"]["entities"] and graphs[1][-1]["exo_withheld"]
    for db in twins:
        with db.connect("exo_reader") as conn:
            assert _dossier(conn, HIDDEN_PERSON) == {"error": f"entity '{HIDDEN_PERSON}' names no entity"}


def _about(db: Database, name: str) -> dict:
    """What the graph API says of one entity the caller may see, hints included."""
    with db.connect("exo_reader") as conn:
        rows = {
            f: _strip([list(r) for r in conn.execute(f"select * from exo.{f}(%s)", (name,)).fetchall()])
            for f in ("related", "timeline")
        }
        return {"dossier": _dossier(conn, name), **rows}


@pytest.mark.parametrize("name", PEOPLE)
def test_what_withheld_material_says_of_a_visible_person_changes_no_answer(twins, name):
    """Only the first memory's withheld notes relate the two people, and only its notes name a
    third: neither the dossier's, related's nor timeline's hints count it (they count the
    workspace's charged chunks, whatever the entity)."""
    first, second = (_about(db, name) for db in twins)
    assert first["dossier"]["name"] == name and first["dossier"]["hints"]
    assert first == second


def test_bridged_the_two_memories_differ(twins):
    first, second = twins
    found = [
        {r["chunk_id"] for r in _answers(db, "hospice", [SUBJECT])["search"]["results"]}
        for db in (first, second)
    ]
    assert found[1] - found[0]  # the second's charged notes hold "hospice"


@pytest.mark.parametrize("released", [False, True])
def test_a_search_that_releases_nothing_can_never_rank_by_the_index_of_every_chunk(db, released):
    """The lexical stage of a search that releases nothing ranks by the open index, one that
    releases a subject by the index of every chunk, and neither index can serve the other's
    query: their keys differ. With the same key, the planner could take the index of every chunk
    for an unbridged search (with nothing charged the two cost the same), and to_bm25query
    refuses a scan of an index it does not name."""
    with db.connect() as conn, conn.transaction():
        workspace = conn.execute("select name from exo_private.workspaces order by name limit 1").fetchone()[
            0
        ]
        keys = dict(
            conn.execute(
                """select c.relname, pg_get_indexdef(i.indexrelid, 1, true)
                   from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam
                   where i.indrelid = %s::regclass and a.amname = 'bm25'""",
                (f"exo_private.chunks_{workspace}",),
            )
        )
        full, open_ = f"chunks_{workspace}_bm25", f"chunks_{workspace}_bm25_open"
        assert set(keys) == {full, open_} and keys[full] != keys[open_], keys
        query = conn.execute(
            "select exo_private.stage_sql('lexical', %s, released => %s)", (workspace, released)
        )
        conn.execute(f"prepare stage(text, text[], date, int, text[]) as {query.fetchone()[0]}")
        for plan_node in ("seqscan", "bitmapscan", "sort"):  # a nearly empty table: an ordered index if any
            conn.execute(f"set local enable_{plan_node} = off")
        plan = "\n".join(
            r[0] for r in conn.execute("explain execute stage('x', '{current}', current_date, 5, null)")
        )
        conn.execute("deallocate stage")
        assert f"Index Scan using {full if released else open_} on" in plan, plan


def test_the_open_index_counts_no_charged_chunk(twins):
    """The statistics an unbridged search ranks by count the chunks charged for nothing alone,
    also when the subject was deferred after its chunks were indexed (vacuum never takes an old
    row out of them: exo_private.rebuild_open_indexes builds the index again)."""
    for db in twins:
        with db.connect() as conn:
            for workspace, open_chunks in conn.execute(
                "select workspace, count(*) filter (where charged_subjects = '{}') from exo_private.chunks group by 1"
            ).fetchall():
                summary = conn.execute(
                    "select public.bm25_summarize_index(%s)", (f"exo_private.chunks_{workspace}_bm25_open",)
                ).fetchone()[0]
                assert re.search(r"total_docs: (\d+)", summary).group(1) == str(open_chunks), (
                    workspace,
                    summary,
                )


def test_the_open_index_is_rebuilt_once_no_older_snapshot_runs(cfg, db, tmp_path):
    (tmp_path / "a.md").write_text(
        _note({"workspace": "personal"}, f"{SUBJECT} was at the funeral and we talked.")
    )
    (tmp_path / "b.md").write_text(_note({"workspace": "personal"}, "The kettle and the ferry today."))
    pipeline.ingest(cfg, tmp_path, dbname=db.name)
    with db.connect("exo_reader", autocommit=False) as old:
        old.execute("set transaction isolation level repeatable read")
        old.execute("select count(*) from exo.workspaces").fetchone()  # its snapshot predates the charging
        with db.connect() as conn:
            assert conn.execute("select exo_private.defer_subject(%s)", (SUBJECT,)).fetchone()[0] == 1
        with db.connect("exo_writer") as conn:
            assert conn.execute("select exo_private.rebuild_open_indexes()").fetchone() == (0,)
            assert conn.execute("select workspace from exo_private.open_index_rebuilds").fetchall() == [
                ("personal",)
            ]
    assert rebuilt_open_indexes(db) == 1
    with db.connect("exo_writer") as conn:
        assert conn.execute("select count(*) from exo_private.open_index_rebuilds").fetchone() == (0,)


def test_the_open_index_is_not_rebuilt_under_a_snapshot_of_its_own_older_than_the_charging(cfg, db, tmp_path):
    """The rebuild's own snapshot counts as another session's: one taken while a transaction older
    than the charging ran (of any database) would keep the charged row in the index it builds,
    though that transaction has ended by the time the sessions are looked at."""
    (tmp_path / "a.md").write_text(_note({"workspace": "personal"}, f"{SUBJECT} was at the funeral."))
    pipeline.ingest(cfg, tmp_path, dbname=db.name)
    with db.connect("exo_writer", autocommit=False) as mine:
        # An open cursor keeps this session's snapshot from before the charging; each statement
        # still sees what has committed since (the flag).
        mine.execute("declare held cursor for select charged_by from exo_private.open_index_rebuilds")
        with db.connect() as conn:
            assert conn.execute("select exo_private.defer_subject(%s)", (SUBJECT,)).fetchone()[0] == 1
        assert mine.execute("select exo_private.rebuild_open_indexes()").fetchone() == (0,)
        assert mine.execute("select count(*) from exo_private.open_index_rebuilds").fetchone() == (1,)
        mine.rollback()
    assert rebuilt_open_indexes(db) == 1
