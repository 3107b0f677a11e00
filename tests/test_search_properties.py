"""Properties of exo.search over generated corpora: deference and temporal banding.

Each example writes a generated corpus straight into the ledger inside one
transaction, switches to exo_reader, searches, and rolls everything back, so
examples never see each other's data.
"""

from __future__ import annotations

import datetime
import json
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql

WORKSPACES = ["technical", "creative", "personal", "administrative"]
VOCABULARY = [
    "harbour",
    "lantern",
    "invoice",
    "replica",
    "orchard",
    "kettle",
    "ferry",
    "ledger",
    "violin",
    "quarry",
]
SUBJECTS = {"Walter Rivera": ["Grandpa Walter", "Grandpa"], "Maya Lind": ["Aunt Maya"]}
NAMES = [n for s, aliases in SUBJECTS.items() for n in [s, *aliases]]
TODAY = datetime.date.today()
BAND_AGE_DAYS = {"current": (0, 300), "recent": (400, 1000), "archival": (1200, 6000)}


@contextmanager
def corpus_as_reader(db, documents, time_releases=False):
    """Write `documents` (dicts: workspace, band, written_at, canonical, chunks [(body, charged)]),
    then yield a connection acting as exo_reader and {chunk id: charged subjects}; everything is
    rolled back afterwards. `time_releases` sets deference.time_releases."""
    with db.connect(autocommit=False) as conn:
        conn.execute(
            "update exo_private.settings set value = %s::jsonb where key = 'deference.time_releases'",
            (json.dumps(time_releases),),
        )
        source = conn.execute(
            "insert into exo_private.sources (root) values ('generated') returning id"
        ).fetchone()[0]
        for subject, aliases in SUBJECTS.items():
            conn.execute(
                "insert into exo_private.deferred_subjects (subject, aliases) values (%s, %s)",
                (subject, aliases),
            )
        for n, doc in enumerate(documents):
            doc_id = conn.execute(
                """insert into exo_private.documents
                       (source_id, path, path_bytes, extension, size_bytes, mtime_ns, stage, workspace, band,
                        written_at, canonical, title)
                   values (%s, %s, convert_to(%s, 'UTF8'), 'md', 1, 0, 'chunked', %s, %s, %s, %s, %s) returning id""",
                (
                    source,
                    f"gen/{n}.md",
                    f"gen/{n}.md",
                    doc["workspace"],
                    doc["band"],
                    doc["written_at"],
                    doc["canonical"],
                    f"g{n}",
                ),
            ).fetchone()[0]
            for ordinal, (body, charged) in enumerate(doc["chunks"]):
                conn.execute(
                    """insert into exo_private.chunks (workspace, document_id, ordinal, body, char_start, char_end,
                                                       band, written_at, charged_subjects)
                       values (%s, %s, %s, %s, 0, %s, %s, %s, %s)""",
                    (
                        doc["workspace"],
                        doc_id,
                        ordinal,
                        body,
                        len(body),
                        doc["band"],
                        doc["written_at"],
                        charged,
                    ),
                )
        charged = dict(
            conn.execute("select id, charged_subjects from exo_private.chunks where charged_subjects <> '{}'")
        )
        conn.execute("set local role exo_reader")
        try:
            yield conn, charged
        finally:
            conn.rollback()


def call(conn, function: str, query: str, **named):
    args = [sql.Literal(query)] + [
        sql.SQL("{} => {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in named.items()
    ]
    return conn.execute(sql.SQL("select {}({})").format(sql.SQL(function), sql.SQL(", ").join(args)))


def search(conn, query: str, **named) -> list[tuple]:
    args = [sql.Literal(query)] + [
        sql.SQL("{} => {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in named.items()
    ]
    return conn.execute(
        sql.SQL("select chunk_id, workspace, band, written_at, path from exo.search({})").format(
            sql.SQL(", ").join(args)
        )
    ).fetchall()


# -- strategies -----------------------------------------------------------------------------------


@st.composite
def chunk(draw):
    words = draw(st.lists(st.sampled_from(VOCABULARY), min_size=3, max_size=12))
    charged = draw(st.lists(st.sampled_from(list(SUBJECTS)), max_size=2, unique=True))
    named = [draw(st.sampled_from([s, *SUBJECTS[s]])) for s in charged]
    return " ".join(words + named) + ".", charged


@st.composite
def document(draw):
    band = draw(st.sampled_from(["current", "recent", "archival"]))
    low, high = BAND_AGE_DAYS[band]
    return {
        "workspace": draw(st.sampled_from(WORKSPACES)),
        "band": band,
        "written_at": TODAY - datetime.timedelta(days=draw(st.integers(low, high))),
        "canonical": False,
        "chunks": draw(st.lists(chunk(), min_size=1, max_size=4)),
    }


# Temporal signals that open the archive (a cue, an old year), or none.
SIGNALS = [None, None, "used to", f"back in {TODAY.year - 10}"]
queries = st.builds(
    lambda words, name, signal: " ".join(words + ([name] if name else []) + ([signal] if signal else [])),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4),
    st.one_of(st.none(), st.sampled_from(NAMES)),
    st.sampled_from(SIGNALS),
)


def names_of(subject: str) -> set[str]:
    return {n.casefold() for n in [subject, *SUBJECTS.get(subject, [])]}


def bridged(subject: str, bridge: list[str]) -> bool:
    return any(" ".join(b.split()).casefold() in names_of(subject) for b in bridge)


def named(subject: str, query: str) -> bool:
    """Whether the query names the subject (names are appended whole, so a substring is a name)."""
    return any(n in query.casefold() for n in names_of(subject))


# -- deference --------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    documents=st.lists(document(), min_size=2, max_size=10),
    asked=st.lists(
        st.tuples(
            queries,
            st.lists(st.sampled_from([*NAMES, "nobody"]), max_size=2),
            st.sampled_from([None, None, True, False]),
        ),
        min_size=1,
        max_size=3,
    ),
    time_releases=st.sampled_from([False, False, True]),
)
def test_charged_chunks_surface_only_when_bridged_or_named_in_the_open_archive_and_are_always_hinted(
    db, documents, asked, time_releases
):
    with corpus_as_reader(db, documents, time_releases) as (conn, charged):
        for query, bridge, open_archive in asked:
            args = {"k": 200, "bridge": bridge, "open_archive": open_archive}
            report = call(conn, "exo.search_report", query, **args).fetchone()[0]
            rows = search(conn, query, **args)
            ids = {r[0] for r in rows}
            # Opened by a temporal signal or open_archive; the fallback never releases.
            opened = report["archive"]["open"] and not report["archive"]["fallback"]

            def releasable(subject, query=query, bridge=bridge, opened=opened):
                return bridged(subject, bridge) or (opened and (named(subject, query) or time_releases))

            out = {}
            for chunk_id, workspace, *_ in rows:
                for subject in charged.get(chunk_id, []):
                    assert releasable(subject), (query, bridge, open_archive, time_releases, subject)
                    out[(subject, workspace)] = out.get((subject, workspace), 0) + 1
            # Whatever charged came out, the report says: which subject, where, how many, why.
            assert {(r["subject"], r["workspace"]): r["chunks"] for r in report["released"]} == out
            for r in report["released"]:
                if bridged(r["subject"], bridge):
                    assert r["why"] == "bridged"
                elif named(r["subject"], query):
                    assert r["why"].startswith("the question names '"), r
                else:
                    assert r["why"].startswith("time releases (deference.time_releases)"), r
                assert r["why"] == "bridged" or report["archive"]["why"] in r["why"]
            # A hint for every subject left closed that is charged in a workspace searched, with
            # all its chunks there, whatever the question's words found (the oracle rule).
            in_scope = {}
            for doc in documents:
                for _body, subjects in doc["chunks"]:
                    for subject in subjects:
                        key = (subject, doc["workspace"])
                        in_scope[key] = in_scope.get(key, 0) + 1
            closed = {key: n for key, n in in_scope.items() if not releasable(key[0])}
            assert {(h["subject"], h["workspace"]): h["chunks"] for h in report["hints"]} == closed
            assert not any("withheld" in s for w in report["workspaces"].values() for s in w["stages"])
            for hint in report["hints"]:
                assert hint["chunks"] > 0 and "bridge" in hint["how"]
                assert not any(word in json.dumps(hint) for word in VOCABULARY)  # never the text
            # Everything bridged: a charged chunk that comes back now was withheld before, so the
            # first answer must have carried a hint for its subject and workspace.
            hinted = {(h["subject"], h["workspace"]) for h in report["hints"]}
            for chunk_id, workspace, *_ in search(conn, query, **dict(args, bridge=NAMES)):
                if chunk_id in ids:
                    continue
                for subject in charged.get(chunk_id, []):
                    if not releasable(subject):
                        assert (subject, workspace) in hinted, (query, bridge, subject, workspace)


def test_a_present_charged_chunk_is_withheld_hinted_and_bridged(db):
    documents = [
        {
            "workspace": "personal",
            "band": "current",
            "written_at": TODAY,
            "canonical": False,
            "chunks": [
                ("harbour kettle with Grandpa at the funeral.", ["Walter Rivera"]),
                ("harbour kettle.", []),
            ],
        }
    ]
    with corpus_as_reader(db, documents) as (conn, charged):
        (held,) = charged
        plain = {r[0] for r in search(conn, "harbour kettle")}
        report = call(conn, "exo.search_report", "harbour kettle").fetchone()[0]
        bridged = {r[0] for r in search(conn, "harbour kettle", bridge=["grandpa"])}
    assert held not in plain and len(plain) == 1
    assert report["hints"] == [
        {
            "subject": "Walter Rivera",
            "workspace": "personal",
            "chunks": 1,
            "how": "To include it, ask with bridge => array['Walter Rivera'] (and open_archive => true for "
            "archival material), or name it in a question that names the time you mean.",
        }
    ]
    assert held in bridged


# -- temporal banding ------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    topic=st.sampled_from(VOCABULARY),
    old_year=st.integers(1995, TODAY.year - 4),
    workspace=st.sampled_from(WORKSPACES),
)
def test_present_questions_stay_present_and_a_year_finds_its_year(db, topic, old_year, workspace):
    def doc(band, written, canonical=False):
        text = f"{topic} notes: the {topic} plan as it stands, written down."
        return {
            "workspace": workspace,
            "band": band,
            "written_at": written,
            "canonical": canonical,
            "chunks": [(text, [])],
        }

    documents = [
        doc("archival", datetime.date(old_year, 6, 1)),
        doc("archival", datetime.date(old_year - 3, 6, 1)),
        doc("recent", TODAY - datetime.timedelta(days=700)),
        doc("current", TODAY - datetime.timedelta(days=30)),
    ]
    with corpus_as_reader(db, documents) as (conn, _charged):
        present = search(conn, f"what is the {topic} plan?")
        dated = search(conn, f"what was the {topic} plan in {old_year}?")
        report = call(conn, "exo.search_report", f"what was the {topic} plan in {old_year}?").fetchone()[0]
    assert present and all(band != "archival" for _id, _ws, band, *_ in present)
    assert present[0][2] == "current"  # recency preference among present bands
    assert dated[0][3] == datetime.date(old_year, 6, 1)  # the named year first
    assert report["temporal"]["years"] == [old_year] and report["archive"]["open"]


def test_a_canonical_document_outranks_newer_ones_on_the_same_footing(db):
    text = "kettle policy: descale the kettle monthly."
    documents = [
        {
            "workspace": "administrative",
            "band": "current",
            "written_at": TODAY - datetime.timedelta(days=20),
            "canonical": False,
            "chunks": [(text, [])],
        },
        {
            "workspace": "administrative",
            "band": "current",
            "written_at": datetime.date(TODAY.year - 12, 1, 1),
            "canonical": True,
            "chunks": [(text, [])],
        },
    ]
    with corpus_as_reader(db, documents) as (conn, _charged):
        rows = search(conn, "kettle policy")
        dated = search(conn, f"kettle policy in {TODAY.year - 1}")
    assert [r[4] for r in rows] == ["gen/1.md", "gen/0.md"]
    assert dated[0][4] == "gen/1.md"  # a year in the question never demotes the canonical document
