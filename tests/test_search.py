"""Retrieval over the example vault, as exo_reader: stages, bands, deference, rerank, packet.

One database per module holds the example vault, ingested and embedded by the
real MiniLM, with a small hand-merged graph (the extraction model is tested in
test_worker; here the graph must be known). Tests that change settings do it in
a transaction that also switches to exo_reader and is rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb
from support.models import free_ports
from support.vault import embedded_vault

COLUMNS = "rank, chunk_id, workspace, band, stage, citation, path, written_at, body"


def set_setting(conn, key: str, value) -> None:
    conn.execute("update exo_private.settings set value = %s where key = %s", (Jsonb(value), key))


@pytest.fixture(scope="module")
def vault(cfg, template_db, real_models) -> Iterator:
    with embedded_vault(cfg, template_db, "exo_search", real_models.embeddings.url) as db:
        yield db


def _call(conn, function: str, query: str, **named):
    args = [sql.Literal(query)] + [
        sql.SQL("{} => {}").format(sql.Identifier(name), sql.Literal(value)) for name, value in named.items()
    ]
    return sql.SQL("{}({})").format(sql.SQL(function), sql.SQL(", ").join(args))


def search(conn, query: str, **named) -> list[dict]:
    cur = conn.execute(
        sql.SQL("select {} from {}").format(sql.SQL(COLUMNS), _call(conn, "exo.search", query, **named))
    )
    names = [c.name for c in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]


def report(conn, query: str, **named) -> dict:
    return conn.execute(
        sql.SQL("select {}").format(_call(conn, "exo.search_report", query, **named))
    ).fetchone()[0]


def search_json(conn, query: str, **named) -> dict:
    """One retrieval, its rows and report together (a model backend answers once)."""
    return conn.execute(
        sql.SQL("select {}").format(_call(conn, "exo.search_json", query, **named))
    ).fetchone()[0]


def packet(conn, query: str, **named) -> dict:
    return conn.execute(
        sql.SQL("select {}").format(_call(conn, "exo.context_packet_json", query, **named))
    ).fetchone()[0]


@pytest.fixture
def reader(vault) -> Iterator[psycopg.Connection]:
    with vault.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
        yield conn


@contextmanager
def settings_as_reader(vault, **settings) -> Iterator[psycopg.Connection]:
    """A transaction with changed settings, run as exo_reader, rolled back afterwards."""
    with vault.connect(autocommit=False) as conn:
        for key, value in settings.items():
            set_setting(conn, key.replace("__", "."), value)
        conn.execute("set local role exo_reader")
        try:
            yield conn
        finally:
            conn.rollback()


def down_url() -> str:
    (port,) = free_ports(1)
    return f"http://127.0.0.1:{port}/v1"


# -- the basics ------------------------------------------------------------------------------


def test_search_returns_cited_ranked_rows_from_every_workspace(reader):
    rows = search(reader, "postgres replication lag on the standby", k=10)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert 0 < len(rows) <= 10
    top = rows[0]
    assert top["path"] == "work/runbooks/replication.md"
    assert top["citation"] == f"technical:{top['path']} ({top['written_at']}, {top['band']})"
    assert {r["stage"] for r in rows} <= {"exact", "lexical", "graph", "semantic"}
    assert len({r["chunk_id"] for r in rows}) == len(rows)


def test_search_json_gives_the_rows_and_the_report_of_one_retrieval(reader):
    query = "postgres replication lag on the standby"
    found = search_json(reader, query, k=10)
    cur = reader.execute(sql.SQL("select * from {}").format(_call(reader, "exo.search", query, k=10)))
    names = [c.name for c in cur.description]
    rows = [dict(zip(names, row, strict=True)) for row in cur]
    assert [set(r) for r in found["results"]] == [set(names)] * len(rows)
    assert [dict(r, written_at=str(r["written_at"]) if r["written_at"] else None) for r in rows] == found[
        "results"
    ]
    expected = report(reader, query, k=10)
    assert found["report"].keys() == expected.keys()
    assert found["report"]["returned"] == len(rows) and found["report"]["rerank"] == dict(
        expected["rerank"], attempts=found["report"]["rerank"]["attempts"]
    )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="k must be between 1 and 200"):
        search_json(reader, query, k=0)


def test_identifiers_are_found_verbatim_by_the_exact_stage(reader):
    rows = search(reader, "what happened in INC-2041?", k=5)
    assert rows[0]["stage"] == "exact"
    assert all("INC-2041" in r["body"] for r in rows if r["stage"] == "exact")
    assert "work/postmortems/INC-2041-db-prod-03.md" in [r["path"] for r in rows]
    found = report(reader, "what happened in INC-2041?")
    assert found["recognised"]["identifiers"] == ["INC-2041"]


def test_a_word_written_only_inside_a_path_is_found_by_its_word(reader):
    # BM25's english parser keeps "/etc/nut/upsmon.conf" whole: the indexes and
    # the question read them as their words (exo_private.bm25_text), or "upsmon" matched nothing
    rows = search(reader, "upsmon", k=3)
    assert rows[0]["path"] == "work/pixelbox.md" and rows[0]["stage"] == "lexical"
    assert "/etc/nut/upsmon.conf" in rows[0]["body"]
    assert "work/pixelbox.md" in [
        r["path"] for r in search(reader, "Which file sets upsmon's threshold?", k=5)
    ]
    assert report(reader, "upsmon")["answer"]["found"] is True


def test_titles_and_file_names_match_exactly(reader):
    rows = search(reader, "oncall-handbook.md escalation", k=5)
    assert rows[0]["path"] == "work/notes/oncall-handbook.md" and rows[0]["stage"] == "exact"
    rows = search(reader, "Runbook - streaming replication", k=3)
    assert rows[0]["path"] == "work/runbooks/replication.md" and rows[0]["stage"] == "exact"


def test_stages_stop_early_once_a_workspace_is_confident(reader):
    found = report(reader, "INC-2041 db-prod-03 WAL growth postmortem")
    technical = found["workspaces"]["technical"]
    ran = [s["stage"] for s in technical["stages"] if s["ran"]]
    assert technical["confident"] >= 8 and "semantic" not in ran
    skipped = {s["stage"]: s["skipped"] for s in technical["stages"] if not s["ran"]}
    assert skipped["semantic"].startswith("enough confident candidates")
    assert "capsules" in skipped
    # A workspace without confident hits goes on to the semantic stage.
    assert any(s["stage"] == "semantic" and s["ran"] for s in found["workspaces"]["creative"]["stages"])


def test_per_workspace_caps_each_workspace(reader):
    found = report(reader, "the", per_workspace=3, k=50)
    rows = search(reader, "notes about postgres and the sea", per_workspace=2, k=50)
    assert all(w["candidates"] <= 3 for w in found["workspaces"].values())
    for ws in {r["workspace"] for r in rows}:
        assert sum(1 for r in rows if r["workspace"] == ws) <= 2


def test_workspace_restriction_and_unknown_workspaces(reader):
    rows = search(reader, "Iris Calder", workspaces=["creative"], k=20)
    assert rows and {r["workspace"] for r in rows} == {"creative"}
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="workspace 'nowhere' does not exist"):
        search(reader, "Iris", workspaces=["creative", "nowhere"])


def test_bad_arguments_name_the_argument(reader):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="k must be between 1 and 200"):
        search(reader, "rent", k=0)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="per_workspace must be between 1 and 200"):
        search(reader, "rent", per_workspace=1000)
    with pytest.raises(
        psycopg.errors.InvalidParameterValue,
        match="query_embedding has 3 dimensions; the embedding model in use has 384",
    ):
        search(reader, "rent", query_embedding=[0.1, 0.2, 0.3])


# -- the graph ------------------------------------------------------------------------------


def test_same_name_in_two_workspaces_stays_two_entities(reader, vault):
    with vault.connect("exo_writer") as conn:
        rows = conn.execute(
            "select workspace, count(*) from exo_private.entities where canonical_key = 'iris calder' group by 1 order by 1"
        ).fetchall()
    assert rows == [("creative", 1), ("technical", 1)]
    found = report(reader, "What does Iris Calder do?")
    assert found["recognised"]["entities"] == {"creative": ["Iris Calder"], "technical": ["Iris Calder"]}
    only = report(reader, "What does Iris Calder do?", workspaces=["technical"])
    assert list(only["workspaces"]) == ["technical"]
    assert only["recognised"]["entities"] == {"technical": ["Iris Calder"]}


def test_graph_stage_reaches_chunks_of_related_entities(vault):
    with settings_as_reader(vault, retrieval__confident_needed=100) as conn:
        found = report(conn, "Iris Calder colleagues", per_workspace=60)
        rows = search(conn, "Iris Calder colleagues", workspaces=["technical"], k=60, per_workspace=60)
    graph = next(s for s in found["workspaces"]["technical"]["stages"] if s["stage"] == "graph")
    assert graph["ran"] and graph["found"] > 0
    near = [r for r in rows if r["stage"] == "graph"]
    assert near
    assert all(
        "Iris Calder" not in r["body"] and ("Tomas" in r["body"] or "Northwind" in r["body"]) for r in near
    )


# -- temporal banding -----------------------------------------------------------------------


def test_a_present_question_is_answered_from_present_bands(reader):
    rows = search(reader, "How much is my rent?", k=10)
    assert rows and all(r["band"] != "archival" for r in rows)
    assert "admin/facts.md" in [r["path"] for r in rows[:5]]
    found = report(reader, "How much is my rent?")
    assert found["archive"] == {"open": False, "why": None, "fallback": False}
    assert found["bands"] == ["current", "recent"]


def test_a_year_opens_the_archive_and_ranks_that_year_first(reader):
    rows = search(reader, "What was my rent in 2013?", k=10)
    assert rows[0]["path"] == "admin/rental/2013-fenwick-street-rental-contract.md"
    found = report(reader, "What was my rent in 2013?")
    assert found["archive"]["open"] and "'2013'" in found["archive"]["why"]
    assert found["temporal"]["years"] == [2013]
    assert found["bands"] == ["current", "recent", "archival"]


def test_a_cue_opens_the_archive(reader):
    found = report(reader, "where did I live back when I started at Northwind?")
    assert found["archive"]["open"] and "back when" in found["archive"]["why"]


def test_the_archive_answers_only_when_nothing_present_does(reader):
    rows = search(reader, "pgstattuple bloat estimate", k=5)
    assert rows and rows[0]["path"] == "work/notes/index-bloat-queries.md"
    found = report(reader, "pgstattuple bloat estimate")
    assert found["archive"] == {
        "open": True,
        "why": "nothing in the present bands answered",
        "fallback": True,
    }
    # Kept closed by the caller: no fallback, and nothing archival.
    closed = search(reader, "pgstattuple bloat estimate", open_archive=False)
    assert all(r["band"] != "archival" for r in closed)
    # Something present answers with confidence: no fallback.
    assert report(reader, "How much is my rent?")["archive"]["fallback"] is False


def test_a_canonical_document_is_never_demoted(reader):
    rows = search(reader, "What is my blood type?", k=5)
    assert rows[0]["path"] == "admin/facts.md" and rows[0]["band"] == "current"
    rows = search(reader, "What is my blood type? back in 2015", k=5)
    assert rows[0]["path"] == "admin/facts.md"


def test_as_of_leaves_out_what_was_written_later(reader):
    rows = search(reader, "rent", as_of="2021-01-01", open_archive=True, k=30)
    assert rows and all(r["written_at"] is None or str(r["written_at"]) <= "2021-01-01" for r in rows)


# -- deference ------------------------------------------------------------------------------


def charged_chunks(vault) -> set[int]:
    with vault.connect("exo_writer") as conn:
        return {
            r[0] for r in conn.execute("select id from exo_private.chunks where charged_subjects <> '{}'")
        }


def test_deferred_material_is_withheld_with_a_hint(reader, vault):
    charged = charged_chunks(vault)
    assert len(charged) >= 5
    rows = search(reader, "walter funeral hospice", k=25)  # only the archive answers: it opens
    assert rows and not charged & {r["chunk_id"] for r in rows}
    found = report(reader, "walter funeral hospice")
    assert found["archive"]["fallback"] is True
    # no stage saw it: nothing withheld is counted where the question's words could find it
    assert not any("withheld" in s for s in found["workspaces"]["personal"]["stages"])
    (hint,) = found["hints"]
    assert hint["subject"] == "Walter Rivera" and hint["workspace"] == "personal"
    assert hint["chunks"] == len(charged)  # every charged chunk of the workspace, whatever the words
    assert "bridge" in hint["how"]
    assert "funeral" not in json.dumps(found["hints"]).lower()


def test_the_named_subject_is_hinted_even_in_a_closed_band(reader, vault):
    found = report(reader, "grandpa funeral", open_archive=False)
    assert found["archive"]["open"] is False  # kept closed by the caller
    assert found["hints"] == [
        {
            "subject": "Walter Rivera",
            "workspace": "personal",
            "chunks": len(charged_chunks(vault)),
            "how": "To include it, ask with bridge => array['Walter Rivera'] (and open_archive => true for "
            "archival material), or name it in a question that names the time you mean.",
        }
    ]
    for bridge in (["Walter Rivera"], ["grandpa walter"]):
        assert report(reader, "grandpa funeral", bridge=bridge)["hints"] == []


# Time and care are separate decisions (issue 10): a temporal signal or open_archive opens the
# archival band; charged material comes out only when bridged, or when the question names the
# subject while the archive is open. The reproductions of the finding, by name.

FUNERAL = "diary/2017/2017-03-28.md"


def _charged_in(rows, vault) -> set[int]:
    return charged_chunks(vault) & {r["chunk_id"] for r in rows}


def _withheld_with_a_hint(conn, vault, query: str, **named) -> dict:
    rows = search(conn, query, k=25, **named)
    found = report(conn, query, **named)
    assert found["archive"]["open"] and not found["archive"]["fallback"], found["archive"]
    assert not _charged_in(rows, vault), query
    assert [(h["subject"], h["workspace"]) for h in found["hints"]] == [("Walter Rivera", "personal")]
    assert found["hints"][0]["chunks"] > 0
    assert found["released"] == []
    return found


def test_used_to_with_grandpa_names_the_subject_so_it_is_released_and_said(reader, vault):
    query = "What did I used to do with grandpa"
    rows = search(reader, query, k=25)
    found = report(reader, query)
    assert _charged_in(rows, vault)
    assert found["hints"] == []
    assert found["released"] == [
        {
            "subject": "Walter Rivera",
            "workspace": "personal",
            "chunks": len(_charged_in(rows, vault)),
            "why": "the question names 'grandpa' and the archive is open (temporal signal: 'used to')",
        }
    ]
    text = packet(reader, query)["text"]
    provenance = text[text.index("## Provenance") :]
    (line,) = [x for x in provenance.splitlines() if "released deferred material" in x]
    assert line.startswith("note: released deferred material: Walter Rivera in personal (")
    assert "the question names 'grandpa' and the archive is open" in line


def test_a_named_subject_with_a_year_is_released(reader):
    rows = search(reader, "grandpa funeral in 2017", k=25)
    assert FUNERAL in [r["path"] for r in rows]
    (released,) = report(reader, "grandpa funeral in 2017")["released"]
    assert released["why"] == "the question names 'grandpa' and the archive is open (temporal signal: '2017')"


def test_march_2017_without_a_name_stays_withheld_with_a_hint(reader, vault):
    found = _withheld_with_a_hint(reader, vault, "what happened in March 2017")
    assert "'March 2017'" in found["archive"]["why"]


def test_a_dated_file_name_stays_withheld_with_a_hint(reader, vault):
    found = _withheld_with_a_hint(reader, vault, "2017-03-28.md")
    assert found["recognised"]["identifiers"] == ["2017-03-28.md"]


def test_open_archive_without_a_name_stays_withheld_with_a_hint(reader, vault):
    found = _withheld_with_a_hint(reader, vault, "what happened at the funeral", open_archive=True)
    assert found["archive"]["why"] == "the caller opened the archive"


def test_bridging_releases_and_says_bridged(reader, vault):
    rows = search(reader, "what happened at the funeral", open_archive=True, bridge=["Grandpa"], k=25)
    assert FUNERAL in [r["path"] for r in rows]
    found = report(reader, "what happened at the funeral", open_archive=True, bridge=["Grandpa"])
    assert found["hints"] == []
    assert [(r["subject"], r["why"]) for r in found["released"]] == [("Walter Rivera", "bridged")]
    assert found["released"][0]["chunks"] == len(_charged_in(rows, vault))


def test_the_fallback_never_releases_but_a_bridge_does(reader, vault):
    held = report(reader, "walter funeral hospice")
    assert held["archive"]["fallback"] is True and held["released"] == [] and held["hints"]
    found = report(reader, "walter funeral hospice", bridge=["walter rivera"])
    rows = search(reader, "walter funeral hospice", bridge=["walter rivera"])
    assert found["archive"]["fallback"] is True and _charged_in(rows, vault)
    assert [(r["subject"], r["why"]) for r in found["released"]] == [("Walter Rivera", "bridged")]


def test_time_releases_restores_the_looser_rule(vault):
    with settings_as_reader(vault, deference__time_releases=True) as conn:
        rows = search(conn, "what happened at the funeral", open_archive=True, k=25)
        found = report(conn, "what happened at the funeral", open_archive=True)
        dated = report(conn, "what happened in March 2017")
        present = report(conn, "grandpa funeral")  # the archive closed: still withheld
    assert FUNERAL in [r["path"] for r in rows] and found["hints"] == []
    assert [(r["subject"], r["why"]) for r in found["released"]] == [
        (
            "Walter Rivera",
            "time releases (deference.time_releases) and the archive is open (the caller opened the archive)",
        )
    ]
    assert [r["why"] for r in dated["released"]] == [
        "time releases (deference.time_releases) and the archive is open (temporal signal: 'March 2017')"
    ]
    assert dated["hints"] == []
    assert present["released"] == [] and present["hints"][0]["how"].endswith("or name the time you mean.")


# -- rerank -----------------------------------------------------------------------------------

QUESTION = "who is on call for the database and how do I escalate?"


def _pool(conn) -> set[int]:
    return {r["chunk_id"] for r in search(conn, QUESTION, k=200)}


def test_every_backend_only_reorders(vault, real_models):
    with settings_as_reader(vault, retrieval__rerank_order=["deterministic"]) as conn:
        found = search_json(conn, QUESTION, k=200)
        expected = {r["chunk_id"] for r in found["results"]}
        assert found["report"]["rerank"]["backend"] == "deterministic"
    backends = {
        "embedding": {},
        "cross_encoder": {
            "models__rerank": {
                "url": real_models.embeddings.url,
                "model": "all-MiniLM-L6-v2",
                "timeout_s": 60,
            },
            "retrieval__rerank_timeout_s": 60,  # what is tested is the order, not the speed
        },
        "listwise": {
            "models__chat": {"url": real_models.chat.url, "model": real_models.chat.model, "timeout_s": 120},
            "retrieval__listwise": {
                "enabled": True,
                "max_candidates": 6,
                "excerpt_chars": 120,
                "max_tokens": 60,
            },
            "retrieval__rerank_timeout_s": 120,
        },
    }
    orders = {}
    for backend, extra in backends.items():
        with settings_as_reader(vault, retrieval__rerank_order=[backend, "deterministic"], **extra) as conn:
            found = search_json(conn, QUESTION, k=200)
            assert found["report"]["rerank"]["backend"] == backend, found["report"]["rerank"]
            rows = found["results"]
            assert {r["chunk_id"] for r in rows} == expected
            orders[backend] = [r["chunk_id"] for r in rows]
    assert orders["embedding"] != orders["cross_encoder"] or orders["embedding"] != orders["listwise"]


def test_a_listwise_reply_that_invents_and_repeats_ids_still_only_reorders(vault):
    from support.standin import StandIn, chat

    with StandIn(lambda _path, _req: chat('{"ranking": [999999, 1, 1, -5]}')) as standin:
        extra = {
            "models__chat": {"url": standin.url, "model": "standin", "timeout_s": 5},
            "retrieval__listwise": {
                "enabled": True,
                "max_candidates": 20,
                "excerpt_chars": 80,
                "max_tokens": 60,
            },
            "retrieval__rerank_order": ["listwise", "deterministic"],
        }
        with settings_as_reader(vault, **extra) as conn:
            found = report(conn, QUESTION, k=200)
            rows = search(conn, QUESTION, k=200)
    assert found["rerank"]["backend"] == "deterministic"  # none of our ids: the reply is refused
    assert found["degradations"][0]["component"] == "rerank:listwise"
    with settings_as_reader(vault, retrieval__rerank_order=["deterministic"]) as conn:
        assert {r["chunk_id"] for r in rows} == _pool(conn)


@pytest.mark.parametrize("endpoint", ["models.embeddings", "models.rerank", "models.chat"])
def test_each_endpoint_down_degrades_and_says_so(vault, endpoint):
    settings = {
        "retrieval__rerank_order": ["cross_encoder", "listwise", "embedding", "deterministic"],
        "retrieval__listwise": {"enabled": True, "max_candidates": 6, "excerpt_chars": 80, "max_tokens": 60},
        "models__rerank": {"url": None, "model": None, "timeout_s": 5},
        "models__chat": {"url": None, "model": "none", "timeout_s": 5},
    }
    model = {"models.embeddings": "all-MiniLM-L6-v2", "models.rerank": "x", "models.chat": "x"}[endpoint]
    down = {"url": down_url(), "model": model, "timeout_s": 2}
    if endpoint == "models.embeddings":
        down["dimensions"] = 384
    settings[endpoint.replace(".", "__")] = down
    with settings_as_reader(vault, **settings) as conn:
        rows = search(conn, QUESTION, k=10)
        found = report(conn, QUESTION)
    assert rows, "a search with an endpoint down still answers"
    components = {d["component"]: d["error_class"] for d in found["degradations"]}
    expected = {
        "models.embeddings": "embeddings",
        "models.rerank": "rerank:cross_encoder",
        "models.chat": "rerank:listwise",
    }[endpoint]
    assert components.get(expected) == "endpoint_down", found["degradations"]
    if endpoint == "models.embeddings":
        semantic = [
            s
            for w in found["workspaces"].values()
            for s in w["stages"]
            if s["stage"] == "semantic" and not s["ran"]
        ]
        assert any("query embedding unavailable (endpoint_down)" in s["skipped"] for s in semantic)
        assert found["rerank"]["backend"] == "deterministic"
    else:
        assert found["rerank"]["backend"] == "embedding"


@contextmanager
def limits_as_reader(vault, **limits) -> Iterator[psycopg.Connection]:
    """settings_as_reader for settings that may not exist yet (created, then rolled back)."""
    with vault.connect(autocommit=False) as conn:
        for key, value in limits.items():
            conn.execute(
                "select exo_private.set_setting(%s, %s, 'set by a test')",
                (key.replace("__", "."), Jsonb(value)),
            )
        conn.execute("set local role exo_reader")
        try:
            yield conn
        finally:
            conn.rollback()


def test_the_third_rerank_call_in_a_session_with_limit_2_degrades(vault):
    down = {"url": down_url(), "model": "x", "timeout_s": 2}
    settings = {
        "retrieval__rerank_order": ["cross_encoder", "deterministic"],
        "models__rerank": down,
        "reader__rerank_calls_per_minute": 2,
    }
    with limits_as_reader(vault, **settings) as conn:
        found = [report(conn, QUESTION) for _ in range(3)]
    classes = [
        [d["error_class"] for d in f["degradations"] if d["component"] == "rerank:cross_encoder"]
        for f in found
    ]
    assert classes == [["endpoint_down"], ["endpoint_down"], ["rate_limited"]]
    assert "reader.rerank_calls_per_minute" in found[2]["degradations"][-1]["error"]
    assert all(f["rerank"]["backend"] == "deterministic" and f["returned"] > 0 for f in found)
    with limits_as_reader(vault, **settings) as conn:  # a new session has its own budget
        assert report(conn, QUESTION)["degradations"][-1]["error_class"] == "endpoint_down"


def test_a_cross_encoder_call_sends_at_most_max_passages_of_passage_chars(vault):
    from support.standin import Reply, StandIn

    def scores(_path, request):
        return Reply(
            body={"results": [{"index": i, "relevance_score": -i} for i in range(len(request["documents"]))]}
        )

    with StandIn(scores) as standin:
        settings = {
            "retrieval__rerank_order": ["cross_encoder", "deterministic"],
            "models__rerank": {"url": standin.url, "model": "standin", "timeout_s": 5},
            "retrieval__rerank_limits": {"max_passages": 3, "passage_chars": 50},
        }
        with limits_as_reader(vault, **settings) as conn:
            found = report(conn, QUESTION, k=200)
            rows = search(conn, QUESTION, k=200)
        ((_path, request), *_) = standin.requests
    assert len(request["documents"]) == 3 and all(len(d) <= 50 for d in request["documents"])
    assert found["rerank"]["backend"] == "cross_encoder"
    assert found["rerank"]["attempts"][0]["passages"] == 3 < found["rerank"]["pool"] == len(rows)


def test_the_query_embedding_counts_against_the_session_budget(vault):
    with limits_as_reader(vault, reader__embed_calls_per_minute=1) as conn:
        first = report(conn, "the sea and the lighthouse")
        second = report(conn, "the sea and the lighthouse")
    assert first["query_embedding"]["source"] == "endpoint" and first["degradations"] == []
    assert [(d["component"], d["error_class"]) for d in second["degradations"]] == [
        ("embeddings", "rate_limited")
    ]
    assert "reader.embed_calls_per_minute" in second["degradations"][0]["error"]
    skipped = [
        s["skipped"] for w in second["workspaces"].values() for s in w["stages"] if s["stage"] == "semantic"
    ]
    assert "query embedding unavailable (rate_limited)" in skipped
    assert second["returned"] > 0


def test_a_caller_embedding_replaces_the_endpoint(vault, real_models):
    from exocortex.plpy.model_client import embed

    (vector,) = embed(real_models.embeddings, [QUESTION])
    down = {"url": down_url(), "model": "all-MiniLM-L6-v2", "dimensions": 384, "timeout_s": 2}
    with settings_as_reader(vault, models__embeddings=down) as conn:
        found = report(conn, QUESTION, query_embedding=vector)
        text = conn.execute(
            "select exo.context_packet(%s, query_embedding => %s::float8[])", (QUESTION, vector)
        )
        assert "[1]" in text.fetchone()[0]
    assert found["degradations"] == []
    assert found["query_embedding"] == {"source": "caller", "dimensions": 384}
    assert found["rerank"]["backend"] == "embedding"


# -- hostile input ----------------------------------------------------------------------------

HOSTILE = [
    "'; drop table exo_private.chunks; --",
    "$$ select 1 $$",
    "$q$) union select pg_read_file('/etc/passwd') --",
    "rent & !(tax | 'x') <-> :* (",
    "MATCH (n) DETACH DELETE n RETURN n",
    '}) MERGE (x:Person {name: "a"}) //',
    "\x01\x02\x1b[31m bell\x07 \u202e reversed \ufeff",
    '"unbalanced quote',
    "%_\\ like patterns [[:alpha:]] .* (a+)+$",
    "",
    "   ",
    "x" * 100_000,
    "rent " * 20_000,
]


def test_a_huge_query_is_read_only_as_far_as_its_first_characters(reader):
    found = report(reader, "rent " * 20_000)
    assert found["query_truncated"] == {"chars": 100_000, "read": 2000}
    assert len(found["query"]) <= 200
    assert "query_truncated" not in report(reader, "rent")


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"bridge": ["x"] * 51}, "bridge must name at most 50 subjects, got 51"),
        ({"bridge": ["y" * 5000]}, "bridge names must be at most 200 characters each"),
        ({"workspaces": ["z" * 5000]}, "workspace 'z{100}…' does not exist"),
    ],
)
def test_refusals_name_the_argument_and_echo_at_most_100_characters(reader, named, message):
    for call in (search, report, packet):
        with pytest.raises(psycopg.errors.InvalidParameterValue, match=message) as caught:
            call(reader, "rent", **named)
        assert len(caught.value.diag.message_primary) < 150


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_neither_fail_nor_write(reader, query):
    rows = search(reader, query, k=5)
    assert len(rows) <= 5
    found = report(reader, query, k=5)
    assert found["returned"] == len(rows)
    assert packet(reader, query, token_budget=300)["tokens"] <= 300
    assert reader.execute("select count(*) from exo.workspaces").fetchone()[0] == 4


# -- the context packet -------------------------------------------------------------------------


def test_the_packet_cites_within_its_budget(reader):
    for budget in (200, 600, 4000):
        result = packet(reader, "How much is my rent?", token_budget=budget)
        assert result["tokens"] <= budget
        assert len(result["text"]) <= budget * 4
    result = packet(reader, "How much is my rent?")
    text = result["text"]
    assert "## Current facts" not in text  # no facts of the owner here, none of rent
    sections = [text.index(s) for s in ("# Context for", "## Evidence")]
    assert sections == sorted(sections)
    assert "## Provenance" not in text  # nothing to note: how each was found is in "used"
    assert "1,210" in text  # the answer is in the packet
    for used in result["used"]:
        assert f"[{used['n']}] {used['citation']}" in text
    assert result["used"][0]["band"] != "archival"
    with pytest.raises(
        psycopg.errors.InvalidParameterValue, match="token_budget must be between 200 and 100000"
    ):
        packet(reader, "rent", token_budget=10)


def test_the_packet_carries_hints_but_never_withheld_text(reader):
    result = packet(reader, "grandpa funeral")
    assert "## Withheld" in result["text"] and "Walter Rivera" in result["text"]
    assert result["hints"] and result["hints"][0]["subject"] == "Walter Rivera"
    assert "funeral was" not in result["text"].lower()
