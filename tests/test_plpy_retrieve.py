"""plpy/retrieve.py and its parts as plain Python, over a small fake `plpy`.

The fake answers the statements exo_private.retrieve runs (settings, workspaces, the temporal
signal, the stage queries, pool details, hints) from a few canned chunks, so the orchestration
is tested without a database: the cascade and its early stop, the archive fallback, the
degradations (an endpoint down, a budget spent), the hints, and that the embedding thread
never outlives a search. The SQL itself is tested in tests/test_search.py.
"""

from __future__ import annotations

import copy
import json
import re
import textwrap

import pytest
import query_embedding
import reranking
import retrieve
from model_client import EndpointDown
from support import SQL_DIR
from textnorm import canonical_key

SETTINGS = {
    "retrieval.stages": ["exact", "lexical", "capsules", "graph", "semantic"],
    "retrieval.confident_needed": 2,
    "retrieval.answer_coverage": 0.5,
    "retrieval.lexical_confident_score": 3.0,
    "retrieval.semantic_min_similarity": 0.2,
    "retrieval.semantic_confident_similarity": 0.5,
    "retrieval.graph": {"max_entities": 5, "depth": 2, "per_node": 50},
    "retrieval.rerank_order": ["cross_encoder", "listwise", "embedding", "deterministic"],
    "retrieval.rerank_timeout_s": 5,
    "retrieval.rerank_limits": {"max_passages": 100, "passage_chars": 2000},
    "retrieval.listwise": {"enabled": False, "max_candidates": 20, "excerpt_chars": 240, "max_tokens": 200},
    "retrieval.embed_timeout_s": 3,
    "retrieval.rank_weights": {
        "stage": {"exact": 1.0, "lexical": 0.85, "capsules": 0.85, "graph": 0.7, "semantic": 0.75},
        "band": {"current": 1.0, "recent": 0.9, "archival": 0.75},
        "backend_share": 0.5,
        "lexical_share": 0.3,
        "match": {"document": 1.3},
        "canonical": 1.1,
        "freshness_half_life_days": 1095,
        "freshness_floor": 0.6,
        "year_miss_per_year": 0.15,
        "date_miss_floor": 0.2,
        "other_conversation": 0.5,
    },
    "models.embeddings": {
        "url": "http://127.0.0.1:9/v1",
        "model": "minilm",
        "dimensions": 3,
        "timeout_s": 30,
    },
    "models.rerank": {"url": None, "model": None, "timeout_s": 10},
    "models.chat": {"url": "http://127.0.0.1:9/v1", "model": "gemma", "timeout_s": 120},
    "reader.embed_calls_per_minute": 120,
    "reader.rerank_calls_per_minute": 120,
    "deference.time_releases": False,
    "packet.answer_close_similarity": 0.5,
    "packet.answer_far_similarity": 0.3,
    "packet.answer_far_sentence_similarity": 0.45,
    "packet.max_chunks": 5,
}
NO_SIGNAL = {"signal": "none", "opens_archive": False, "signals": [], "years": []}


def chunk(chunk_id, body, band="current", workspace="technical", charged=(), written="2026-10-01", chat=None):
    return {
        "chunk_id": chunk_id,
        "workspace": workspace,
        "document_id": 100 + chunk_id,
        "ordinal": 0,
        "body": body,
        "band": band,
        "written_at": written,
        "path": f"notes/{chunk_id}.md",
        "title": f"note {chunk_id}",
        "document_title": None,
        "canonical": False,
        "chat": json.dumps(chat) if chat else None,  # jsonb reaches plpython as text
        "charged": list(charged),
    }


class Plan:
    def __init__(self, text, types):
        self.text, self.types = text, types


def _stage_parameters() -> list[tuple[str, int, str, str]]:
    """exo_private.stage_parameters as sql/400_search.sql writes it: each stage's own, then bands,
    as_of, row_limit and released (positions 2 to 5) of every stage, ordered as the function orders."""
    text = (SQL_DIR / "400_search.sql").read_text()
    own = [
        (s, int(p), n, t)
        for s, p, n, t in re.findall(r"\('([a-z_]+)', (\d+), '([a-z_]+)', '([a-z0-9\[\]]+)'\)", text)
    ]
    common = [(int(p), n, t) for p, n, t in re.findall(r"\((\d), '([a-z_]+)', '([a-z0-9\[\]]+)'\)", text)]
    rows = own + [(stage, *c) for stage in {o[0] for o in own} for c in common]
    return sorted(rows, key=lambda r: (r[0], r[1]))


STAGE_PARAMETERS = _stage_parameters()


class FakePlpy:
    """Answers retrieve's statements from canned chunks; `hits[(stage, workspace)]` lists
    (chunk_id, score) a stage finds, filtered by the bands the search opened."""

    def __init__(self, chunks, hits, settings=None, signal=None, deferred=(), entities=(), model=True):
        self.chunks = {c["chunk_id"]: c for c in chunks}
        self.hits = hits
        self.settings = dict(SETTINGS, **(settings or {}))
        self.signal = signal or NO_SIGNAL
        self.deferred = list(deferred)
        self.entities = list(entities)
        self.model = model
        self.similarity = {}
        self.message_similarity = {}  # by chat message id
        self.statements = []
        self.fail_on = None

    def prepare(self, text, types):
        return Plan(text, types)

    def error(self, message):
        raise RuntimeError(message)

    def execute(self, plan, args):
        text = plan.text
        self.statements.append(text)
        if self.fail_on and self.fail_on in text:
            raise RuntimeError("the database failed: " + self.fail_on)
        if text.startswith("STAGE "):
            # as exo_private.stage_sql's `visible`: the bands opened, nothing charged for a subject
            # the search leaves closed ($5, null: every one released)
            _, stage, ws = text.split()
            bands, released = args[1], args[4]
            return [
                {"chunk_id": i, "score": score, "charged": self.chunks[i]["charged"], "detail": "x"}
                for i, score in self.hits.get((stage, ws), [])
                if self.chunks[i]["band"] in bands
                and (released is None or all(canonical_key(s) in released for s in self.chunks[i]["charged"]))
            ]
        if "from exo_private.settings" in text:
            return [{"key": k, "value": json.dumps(v)} for k, v in self.settings.items()]
        if "from exo_private.workspaces" in text:
            return [{"name": w} for w in sorted({c["workspace"] for c in self.chunks.values()})]
        if "embedding_models" in text:
            return [{"id": 1, "dimensions": 3}] if self.model else []
        if "temporal_signal" in text:
            return [{"s": json.dumps(self.signal)}]
        if "deferred_subjects" in text:
            return self.deferred
        if "from exo_private.entities" in text:
            return [e for e in self.entities if e["canonical_key"] in args[0] and e["workspace"] in args[1]]
        if "entity_only_archival" in text:
            # an entity says so itself here: {"only_archival": True} (the rule is tested on the database)
            return [{"only": any(e["id"] == args[0] and e.get("only_archival") for e in self.entities)}]
        if "exo_private.stage_parameters" in text:
            return [{"stage": st, "name": name, "type": type_} for st, _pos, name, type_ in STAGE_PARAMETERS]
        if "exo_private.stage_sql" in text:
            return [{"q": f"STAGE {args[0]} {args[1]}"}]
        if "pool_details" in text:
            return [dict(self.chunks[i]) for i in args[1]]
        if "pool_similarity" in text:
            return [
                {"chunk_id": i, "similarity": self.similarity[i]} for i in args[1] if i in self.similarity
            ]
        if "message_similarity" in text:
            return [
                {"message_id": m, "similarity": self.message_similarity[m]}
                for m in args[0]
                if m in self.message_similarity
            ]
        if "hint_how" in text:
            return [{"h": f"bridge => array[{args[0]!r}]"}]
        if "charged_counts" in text:
            counts = {}
            for c in self.chunks.values():
                for s in c["charged"]:
                    if c["workspace"] in args[0]:
                        counts[(s, c["workspace"])] = counts.get((s, c["workspace"]), 0) + 1
            return [{"subject": s, "workspace": w, "n": n} for (s, w), n in counts.items()]
        raise AssertionError("unexpected statement: " + text[:200])


def search(plpy, query, gd=None, k=25, per_workspace=30, open_archive=None, bridge=(), query_vector=None):
    found = retrieve.run(
        plpy, {}, {} if gd is None else gd, query, None, k, per_workspace, open_archive, list(bridge),
        "2026-11-30 12:00:00+00", query_vector,
    )  # fmt: skip
    return json.loads(found)


@pytest.fixture
def embedder(monkeypatch):
    """The embeddings endpoint: `reply` when set, else a vector. Counts the requests sent, the
    answers read and the requests still open (neither read nor given up)."""
    state = {"calls": 0, "reads": 0, "open": 0, "reply": None}

    class Call:
        def __init__(self, setting, text, cancel=None):
            state["calls"] += 1
            state["open"] += 1
            self.open = True

        def result(self):
            state["reads"] += 1
            return state["reply"] or {"vector": "[1,0,0]", "model": "minilm", "dimensions": 3, "ms": 1.0}

        def close(self):
            if self.open:
                self.open = False
                state["open"] -= 1

    monkeypatch.setattr(query_embedding, "EmbeddingCall", Call)
    return state


CORPUS = [
    chunk(1, "postgres replication lag on the standby grew"),
    chunk(2, "replication slots and WAL retention"),
    chunk(3, "a poem about the sea", workspace="creative"),
    chunk(4, "postgres replication in 2019 on the old cluster", band="archival", written="2019-03-01"),
]


# -- the cascade ---------------------------------------------------------------------------


def test_a_confident_workspace_stops_before_the_semantic_stage_and_the_answer_is_read_once(embedder):
    plpy = FakePlpy(
        CORPUS, {("lexical", "technical"): [(1, 5.0), (2, 4.0)], ("semantic", "creative"): [(3, 0.6)]}
    )
    plpy.similarity = {1: 0.9, 2: 0.1, 3: 0.8}
    found = search(plpy, "postgres replication lag")
    technical = found["report"]["workspaces"]["technical"]
    skipped = {s["stage"]: s["skipped"] for s in technical["stages"] if not s["ran"]}
    assert [(s["stage"], s["found"]) for s in technical["stages"] if s["ran"]] == [
        ("exact", 0),
        ("lexical", 2),
    ]
    assert skipped == {s: "enough confident candidates (2 of 2)" for s in ("capsules", "graph", "semantic")}
    assert technical["stopped_after"] == "lexical" and technical["confident"] == 2
    # The creative workspace had nothing confident: it went on to the semantic stage.
    creative = found["report"]["workspaces"]["creative"]
    assert creative["stopped_after"] == "semantic" and creative["candidates"] == 1
    assert [r["chunk_id"] for r in found["results"]] == [1, 3, 2]  # similarity lifts 3 over 2
    assert found["report"]["rerank"]["backend"] == "embedding"
    assert found["report"]["query_embedding"]["source"] == "endpoint"
    assert (embedder["calls"], embedder["reads"], embedder["open"]) == (1, 1, 0)


def test_a_search_that_never_needs_the_vector_gives_its_request_up(embedder):
    plpy = FakePlpy(CORPUS, {("lexical", "technical"): [(1, 5.0), (2, 4.0)]},
                    settings={"retrieval.rerank_order": ["deterministic"], "retrieval.stages": ["lexical"]})  # fmt: skip
    found = search(plpy, "postgres replication")
    assert "query_embedding" not in found["report"] and found["report"]["degradations"] == []
    assert (embedder["calls"], embedder["reads"], embedder["open"]) == (1, 0, 0)


def stage_order(plpy):
    """(stage, workspace) of each stage query, up to the last semantic stage's."""
    ran = [tuple(s.split()[1:]) for s in plpy.statements if s.startswith("STAGE ")]
    return ran[: max(i for i, s in enumerate(ran) if s[0] == "semantic") + 1]


def test_every_workspace_runs_the_stages_before_its_vector_stage_while_the_vector_is_computed(embedder):
    hits = {("lexical", "technical"): [(2, 1.0)], ("semantic", "creative"): [(3, 0.6)]}
    plpy = FakePlpy(CORPUS, hits)
    found = search(plpy, "postgres replication")
    ran = stage_order(plpy)
    first_vector = min(i for i, s in enumerate(ran) if s[0] == "semantic")
    assert (
        {w for _, w in ran[:first_vector]} == set(found["report"]["workspaces"]) == {"technical", "creative"}
    )
    assert all(s != "semantic" for s, _ in ran[:first_vector])
    # A caller's vector is there from the start: each workspace runs its stages in one turn.
    given = FakePlpy(CORPUS, hits)
    found_given = search(given, "postgres replication", query_vector=[0.5, 0.25, 0.0])
    in_turn = stage_order(given)
    assert [w for _, w in in_turn] == sorted((w for _, w in in_turn), key=[w for _, w in in_turn].index)
    # The turns change no workspace's stages, their order or the results.
    for ws in ("technical", "creative"):
        assert [s for s, w in ran if w == ws] == [s for s, w in in_turn if w == ws]
    assert [r["chunk_id"] for r in found["results"]] == [r["chunk_id"] for r in found_given["results"]]


def test_a_person_whose_windows_are_all_closed_is_searched_as_one_named_by_no_one(embedder):
    """The participant stage asks for the query's vector only once its own query without it finds
    a window open to the search: the report and the fetch are the same when the question names no
    one and when it names someone whose every window the search leaves closed."""
    settings = {
        "retrieval.stages": ["exact", "participant", "lexical"],
        "retrieval.rerank_order": ["deterministic"],
    }
    hits = {("lexical", "technical"): [(1, 5.0)]}

    def participant(windows):
        embedder.update(calls=0, reads=0, open=0)
        plpy = FakePlpy(CORPUS, hits | {("participant", "technical"): windows}, settings=settings)
        found = search(plpy, "Did Iris mention postgres replication?")
        stages = {e["stage"]: e for e in found["report"]["workspaces"]["technical"]["stages"]}
        return stages["participant"], embedder["reads"], "query_embedding" in found["report"]

    nobody = participant(windows=[])
    assert nobody == (
        {
            "stage": "participant",
            "ran": False,
            "skipped": "no window open to this search of a person the question names",
        },
        0,
        False,
    )
    assert participant(windows=[(4, 0.4)]) == nobody  # an archival window, closed to this search
    entry, reads, fetched = participant(windows=[(2, 0.4)])
    assert (entry["ran"], entry["found"], reads, fetched) == (True, 1, 1, True)


def test_an_error_mid_search_still_gives_the_request_up(embedder):
    plpy = FakePlpy(CORPUS, {})
    plpy.fail_on = "STAGE lexical"
    with pytest.raises(RuntimeError, match="the database failed"):
        search(plpy, "postgres replication")
    assert embedder["calls"] == 1 and embedder["open"] == 0


def test_an_unknown_stage_is_an_error_naming_it(embedder):
    plpy = FakePlpy(CORPUS, {}, settings={"retrieval.stages": ["lexical", "telepathy"]})
    with pytest.raises(RuntimeError, match="unknown stage 'telepathy' in retrieval.stages"):
        search(plpy, "postgres")
    assert embedder["calls"] == 1 and embedder["open"] == 0


def test_prepared_statements_and_stage_queries_are_kept_for_the_session(embedder):
    plpy = FakePlpy(CORPUS, {("lexical", "technical"): [(1, 5.0), (2, 4.0)]})
    sd = {}
    for _ in range(2):
        retrieve.run(plpy, sd, {}, "postgres replication", None, 5, 30, None, [], "2026-11-30", None)
    stage_sql = [s for s in plpy.statements if "exo_private.stage_sql" in s]
    assert len(stage_sql) == len({k for k in sd["plans"] if isinstance(k, tuple) and k[0] == "sql"})


def test_a_chat_chunk_is_ranked_in_the_one_pool_and_cited_by_its_conversation(embedder):
    chat = {
        "conversation_id": 3,
        "title": "Iris Calder",
        "senders": ["Iris Calder", "Me"],
        "first_sent_at": "2024-03-04T09:12:00+00:00",
        "message_ids": [41, 42],
    }
    body = "2024-03-04 09:12 Iris Calder: the standby replication lag is back\n2024-03-04 09:13 Me: again?"
    corpus = [*CORPUS, chunk(5, body, workspace="personal", chat=chat)]
    hits = {("lexical", "technical"): [(1, 5.0)], ("lexical", "personal"): [(5, 4.0)]}
    plpy = FakePlpy(corpus, hits, settings={"retrieval.rerank_order": ["deterministic"]}, model=False)
    rows = {r["chunk_id"]: r for r in search(plpy, "standby replication lag")["results"]}
    assert set(rows) == {1, 5}
    assert rows[5]["chat"] == chat and rows[1]["chat"] is None
    assert rows[5]["citation"] == 'personal:chat "Iris Calder" 2024-03-04 09:12'
    assert rows[5]["path"] == "notes/5.md"  # the conversation document's path, as for any chunk
    assert rows[1]["citation"] == "technical:notes/1.md (2026-10-01, current)"


def test_a_chat_window_is_weighed_by_its_best_message_too_asked_once_a_search(embedder):
    def window(chunk_id, messages):
        chat = {
            "conversation_id": chunk_id,
            "title": "Ana",
            "senders": ["Ana", "Me"],
            "first_sent_at": "2026-11-04T09:12:00+00:00",
            "message_ids": messages,
        }
        body = "\n".join(f"2026-11-04 09:1{i} Ana: line {m}" for i, m in enumerate(messages))
        return chunk(chunk_id, body, workspace="personal", chat=chat)

    corpus = [window(5, [51, 52]), window(6, [61, 62])]
    plpy = FakePlpy(corpus, {("lexical", "personal"): [(5, 4.0), (6, 3.0)]})
    plpy.similarity = {5: 0.5, 6: 0.45}  # the windows' own vectors favour 5
    plpy.message_similarity = {51: 0.4, 52: 0.45, 61: 0.2, 62: 0.85}  # 62 says what is asked
    found = search(plpy, "where does Ana live")
    assert [r["chunk_id"] for r in found["results"]] == [6, 5]
    assert [r["chat"]["similarity"] for r in found["results"]] == [[0.2, 0.85], [0.4, 0.45]]
    assert sum("message_similarity" in t for t in plpy.statements) == 1  # the excerpt reuses them

    plpy = FakePlpy(corpus, {("lexical", "personal"): [(5, 4.0), (6, 3.0)]})
    plpy.similarity = {5: 0.5, 6: 0.45}  # messages without vectors: the windows' alone
    assert [r["chunk_id"] for r in search(plpy, "where does Ana live")["results"]] == [5, 6]


def test_a_window_of_a_conversation_without_the_person_asked_about_ranks_lower_and_says_so(embedder):
    def window(chunk_id, friend, line):
        chat = {
            "conversation_id": chunk_id,
            "title": friend,
            "senders": ["Sam", friend],
            "first_sent_at": "2026-11-04T09:12:00+00:00",
            "message_ids": [chunk_id * 10],
        }
        return chunk(chunk_id, f"2026-11-04 09:12 Sam: {line}", workspace="personal", chat=chat)

    corpus = [window(5, "Aiden", "We fly out on 8 December."), window(6, "Gus", "We fly out on 1 October!")]
    plpy = FakePlpy(corpus, {("lexical", "personal"): [(6, 4.0), (5, 3.0)]})
    plpy.similarity = {5: 0.5, 6: 0.6}
    rows = search(plpy, "When do Sam and Aiden fly?")["results"]
    assert [(r["chunk_id"], r["other_conversation"]) for r in rows] == [(5, False), (6, True)]
    rows = search(plpy, "When do we fly?")["results"]  # no one named: the words and vectors decide
    assert [(r["chunk_id"], r["other_conversation"]) for r in rows] == [(6, False), (5, False)]


# -- the archive ---------------------------------------------------------------------------


def test_nothing_present_answers_so_the_archive_answers_without_releasing(embedder):
    corpus = [
        *CORPUS,
        chunk(5, "grandpa at the harbour", band="archival", charged=["Grandpa"], written="2001-01-01"),
    ]
    hits = {("lexical", "technical"): [(2, 1.0), (4, 1.0), (5, 1.0)]}
    plpy = FakePlpy(corpus, hits, settings={"retrieval.rerank_order": ["deterministic"]}, model=False)
    found = search(plpy, "old cluster 2019 failover")
    assert found["report"]["archive"] == {
        "open": True,
        "why": "nothing in the present bands answered",
        "fallback": True,
    }
    assert found["report"]["bands"] == ["current", "recent", "archival"]
    assert [r["chunk_id"] for r in found["results"]] == [4, 2]
    # The fallback is not a temporal signal: charged material stays withheld, with a hint.
    assert [(h["subject"], h["chunks"]) for h in found["report"]["hints"]] == [("Grandpa", 1)]
    assert found["report"]["released"] == []


def test_a_closed_archive_never_falls_back(embedder):
    plpy = FakePlpy(CORPUS, {("lexical", "technical"): [(2, 1.0), (4, 1.0)]}, model=False)
    found = search(plpy, "old cluster 2019 failover", open_archive=False)
    assert found["report"]["archive"]["fallback"] is False
    assert [r["chunk_id"] for r in found["results"]] == [2]


def test_a_temporal_signal_opens_the_archive_before_any_stage(embedder):
    signal = {"signal": "year", "opens_archive": True, "years": [2019],
              "signals": [{"kind": "year", "text": "2019", "start": 15, "end": 19, "opens_archive": True}],
              "span": {"first": "2019-01-01", "last": "2019-12-31"}}  # fmt: skip
    plpy = FakePlpy(CORPUS, {("lexical", "technical"): [(1, 5.0), (4, 4.0)]}, signal=signal, model=False)
    found = search(plpy, "replication in 2019")
    assert found["report"]["archive"] == {"open": True, "why": "temporal signal: '2019'", "fallback": False}
    assert found["results"][0]["chunk_id"] == 4  # the year asked for ranks first
    assert found["report"]["temporal"]["years"] == [2019]


# -- degradations ---------------------------------------------------------------------------


def test_the_embeddings_endpoint_down_skips_the_semantic_stage_and_says_so(embedder):
    embedder["reply"] = {"error_class": "endpoint_down", "error": "connection refused", "ms": 1.0}
    plpy = FakePlpy(CORPUS, {("lexical", "creative"): [(3, 1.0)]})
    found = search(plpy, "sea poem")
    creative = {s["stage"]: s for s in found["report"]["workspaces"]["creative"]["stages"]}
    assert creative["semantic"]["skipped"] == "query embedding unavailable (endpoint_down)"
    degradations = found["report"]["degradations"]
    assert [d["component"] for d in degradations] == ["embeddings"]  # said once, not per workspace
    attempts = found["report"]["rerank"]["attempts"]
    assert [(a["backend"], a["outcome"]) for a in attempts] == [
        ("cross_encoder", "skipped"), ("listwise", "skipped"), ("embedding", "failed"), ("deterministic", "answered"),
    ]  # fmt: skip
    assert [r["chunk_id"] for r in found["results"]] == [3]


def test_the_embedding_budget_spent_makes_no_call(embedder):
    plpy = FakePlpy(
        CORPUS, {("lexical", "creative"): [(3, 1.0)]}, settings={"reader.embed_calls_per_minute": 0}
    )
    found = search(plpy, "sea poem")
    assert embedder["calls"] == 0
    assert found["report"]["degradations"][0]["error_class"] == "rate_limited"
    assert "reader.embed_calls_per_minute" in found["report"]["degradations"][0]["error"]


def test_a_caller_vector_replaces_the_endpoint(embedder):
    plpy = FakePlpy(CORPUS, {("semantic", "creative"): [(3, 0.7)]})
    found = search(plpy, "sea poem", query_vector=[0.5, 0.25, 0.0])
    assert embedder["calls"] == 0
    assert found["report"]["query_embedding"] == {"source": "caller", "dimensions": 3}
    semantic = [s for s in plpy.statements if s == "STAGE semantic creative"]
    assert semantic and found["results"][0]["chunk_id"] == 3


@pytest.fixture
def cross_encoder(monkeypatch):
    calls = []

    def rerank(endpoint, query, documents):
        calls.append((endpoint, query, documents))
        if isinstance(cross_encoder_reply[0], Exception):
            raise cross_encoder_reply[0]
        return cross_encoder_reply[0](documents)

    cross_encoder_reply = [lambda documents: [float(len(d)) for d in documents]]
    monkeypatch.setattr(reranking, "rerank", rerank)
    return calls, cross_encoder_reply


RERANK_ON = {"models.rerank": {"url": "http://127.0.0.1:9/v1", "model": "bge", "timeout_s": 10}}


def test_the_cross_encoder_only_reorders_and_goes_straight_to_the_client(embedder, cross_encoder):
    calls, _ = cross_encoder
    hits = {("lexical", "technical"): [(1, 5.0), (2, 4.0)], ("lexical", "creative"): [(3, 4.0)]}
    plain = search(
        FakePlpy(CORPUS, hits, settings={"retrieval.rerank_order": ["deterministic"]}), "postgres sea"
    )
    plpy = FakePlpy(CORPUS, hits, settings=RERANK_ON)
    found = search(plpy, "postgres sea")
    assert found["report"]["rerank"]["backend"] == "cross_encoder"
    assert sorted(r["chunk_id"] for r in found["results"]) == sorted(r["chunk_id"] for r in plain["results"])
    ((endpoint, query, documents),) = calls
    assert endpoint.timeout_s == 5 and query == "postgres sea" and len(documents) == 3
    assert not [s for s in plpy.statements if "rerank_call" in s]


def test_a_cross_encoder_down_degrades_to_the_next_backend(embedder, cross_encoder):
    _, reply = cross_encoder
    reply[0] = EndpointDown(
        "http://127.0.0.1:9/v1/rerank closed the connection", "http://127.0.0.1:9/v1/rerank"
    )
    plpy = FakePlpy(CORPUS, {("lexical", "technical"): [(1, 5.0), (2, 4.0)]}, settings=RERANK_ON)
    plpy.similarity = {1: 0.2, 2: 0.8}
    found = search(plpy, "postgres replication")
    assert found["report"]["rerank"]["backend"] == "embedding"
    (degradation,) = found["report"]["degradations"]
    assert (
        degradation["component"] == "rerank:cross_encoder" and degradation["error_class"] == "endpoint_down"
    )


def test_the_rerank_budget_is_per_session_and_spent_means_no_call(embedder, cross_encoder):
    calls, _ = cross_encoder
    gd = {}
    plpy = FakePlpy(CORPUS, {("lexical", "technical"): [(1, 5.0), (2, 4.0)]},
                    settings=dict(RERANK_ON, **{"reader.rerank_calls_per_minute": 2}))  # fmt: skip
    backends = [search(plpy, "postgres replication", gd=gd)["report"]["rerank"]["backend"] for _ in range(3)]
    assert backends == ["cross_encoder", "cross_encoder", "embedding"]
    assert len(calls) == 2
    assert len(gd["exo_budget"]["rerank"]) == 2


def test_a_cross_encoder_gets_at_most_max_passages_of_passage_chars(cross_encoder):
    calls, _ = cross_encoder
    limits = {"retrieval.rerank_limits": {"max_passages": 2, "passage_chars": 5}}
    answer = reranking.remote_rerank(
        {}, "cross_encoder", RERANK_ON["models.rerank"], "q", ["abcdefgh", "ijklmnop", "qrstuvwx"], [7, 8, 9], {},
        limits,
    )  # fmt: skip
    assert calls[0][2] == ["abcde", "ijklm"]
    assert answer["passages"] == 2 and set(answer["scores"]) == {7, 8}


def test_a_listwise_reply_that_names_none_of_the_candidates_fails_cleanly(monkeypatch):
    class Reply:
        content = '{"ranking": [99]}'

    monkeypatch.setattr(reranking, "chat", lambda *a, **kw: Reply())
    options = SETTINGS["retrieval.listwise"]
    answer = reranking.remote_rerank({}, "listwise", SETTINGS["models.chat"], "q", ["a"], [1], options, {})
    assert answer["error_class"] == "bad_response" and "none of the candidates" in answer["error"]


# -- hints ----------------------------------------------------------------------------------

DEFERRED = [{"subject": "Walter Rivera", "aliases": ["grandpa"]}]
FAMILY = [
    chunk(10, "grandpa funeral at the chapel", workspace="personal", charged=["Walter Rivera"]),
    chunk(11, "the chapel roof repair", workspace="personal"),
    chunk(12, "grandpa taught me to sail", workspace="personal", band="archival", charged=["Walter Rivera"],
          written="1998-06-01"),
]  # fmt: skip


def test_withheld_chunks_become_a_hint_without_their_text(embedder):
    plpy = FakePlpy(FAMILY, {("lexical", "personal"): [(10, 5.0), (11, 4.0)]}, deferred=DEFERRED, model=False)
    found = search(plpy, "chapel")
    assert [r["chunk_id"] for r in found["results"]] == [11]
    (hint,) = found["report"]["hints"]
    # every charged chunk of the workspace searched, not only those the question's words found
    assert (hint["subject"], hint["workspace"], hint["chunks"]) == ("Walter Rivera", "personal", 2)
    assert hint["how"].startswith("To include it, bridge => array['Walter Rivera']")
    assert "funeral" not in json.dumps(found["report"])
    lexical = found["report"]["workspaces"]["personal"]["stages"][1]
    assert (lexical["stage"], lexical["found"], lexical["admitted"]) == ("lexical", 1, 1)
    assert "withheld" not in lexical


def test_the_hints_are_the_same_whatever_the_words_find(embedder):
    hits = {("lexical", "personal"): [(10, 5.0)]}
    asked = [search(FakePlpy(FAMILY, hits, deferred=DEFERRED, model=False), q) for q in ("funeral", "roof")]
    assert asked[0]["report"]["hints"] == asked[1]["report"]["hints"] != []
    assert [r["chunk_id"] for r in asked[0]["results"]] == []


def test_a_named_subject_in_a_closed_band_is_hinted_with_every_charged_chunk(embedder):
    plpy = FakePlpy(FAMILY, {("lexical", "personal"): [(10, 5.0)]}, deferred=DEFERRED, model=False)
    found = search(plpy, "grandpa", open_archive=False)
    assert found["results"] == []
    assert [(h["subject"], h["chunks"]) for h in found["report"]["hints"]] == [("Walter Rivera", 2)]


def test_a_bridge_releases_and_the_report_says_why(embedder):
    plpy = FakePlpy(FAMILY, {("lexical", "personal"): [(10, 5.0), (11, 4.0)]}, deferred=DEFERRED, model=False)
    found = search(plpy, "chapel", bridge=["grandpa"])
    assert {r["chunk_id"] for r in found["results"]} == {10, 11}
    assert found["report"]["hints"] == []
    assert found["report"]["released"] == [
        {"subject": "Walter Rivera", "workspace": "personal", "chunks": 1, "why": "bridged"}
    ]


def test_entities_named_feed_the_exact_and_graph_stages(embedder):
    entities = [
        {
            "id": 7,
            "workspace": "technical",
            "name": "db-prod-03",
            "canonical_key": canonical_key("db-prod-03"),
        }
    ]
    hits = {
        ("entity", "technical"): [(1, 1.0)],
        ("identifier", "technical"): [(1, 9.0)],
        ("graph", "technical"): [(2, 0.5)],
    }
    plpy = FakePlpy(CORPUS, hits, entities=entities, settings={"retrieval.confident_needed": 5}, model=False)
    found = search(plpy, "db-prod-03")
    assert found["report"]["recognised"] == {
        "identifiers": ["db-prod-03"],
        "entities": {"technical": ["db-prod-03"]},
        "common_identifiers": [],
    }
    by_id = {r["chunk_id"]: r for r in found["results"]}
    assert by_id[1]["stage"] == "exact" and by_id[2]["stage"] == "graph"


def test_an_identifier_held_by_more_passages_than_a_pool_needs_leaves_room_for_the_lexical_stage():
    # 9 holds the string too, past the first holders the stage admits
    corpus = [chunk(i, f"GNU/Linux note {i}") for i in range(1, 5)] + [
        chunk(9, "missing from GNU/Linux: WNPP")
    ]
    hits = {
        ("identifier", "technical"): [(i, 5.0 - i) for i in (1, 2, 3, 4, 9)],
        ("lexical", "technical"): [(9, 6.0), (1, 3.0)],
    }
    # a pool needs 2 confident: 4 holders make the string common, 2 would not
    plpy = FakePlpy(corpus, hits, settings={"retrieval.confident_needed": 2}, model=False)
    found = search(plpy, "missing from GNU/Linux")
    assert found["report"]["recognised"]["common_identifiers"] == ["GNU/Linux"]
    stages = found["report"]["workspaces"]["technical"]["stages"]
    assert [(s["stage"], s["admitted"]) for s in stages if s.get("ran")][:2] == [("exact", 2), ("lexical", 1)]
    assert found["results"][0]["chunk_id"] == 9  # BM25's first, fused into the rank

    hits[("identifier", "technical")] = [(1, 4.0), (2, 3.0)]
    found = search(
        FakePlpy(corpus, hits, settings={"retrieval.confident_needed": 2}, model=False), "GNU/Linux?"
    )
    assert found["report"]["recognised"]["common_identifiers"] == []
    assert found["report"]["workspaces"]["technical"]["stopped_after"] == "exact"


def test_the_fake_answers_what_the_real_statements_ask():
    # The fake dispatches on fragments of retrieve's SQL: a renamed statement fails here first.
    plpy = FakePlpy(copy.deepcopy(CORPUS), {})
    found = search(plpy, "nothing to see", open_archive=False)
    assert found["results"] == [] and found["report"]["rerank"]["backend"] == "none"


def test_the_inlined_body_the_database_runs_gives_the_same_answer():
    # exo_private.retrieve's body as plpython runs it: every module inlined into one function
    # (plpython cannot import files), the arguments as globals. A name two modules both define
    # would change the answer here first.
    from support import PLPY_DIR, SQL_DIR

    from exocortex.ops.migrate import inline_plpy

    sql = (SQL_DIR / "400_search.sql").read_text()
    body = sql.split("create or replace function exo_private.retrieve(", 1)[1].split("as $$\n", 1)[1]
    body = inline_plpy(body.split("$$;", 1)[0], PLPY_DIR, "400_search.sql")
    hits = {("lexical", "technical"): [(1, 5.0), (2, 4.0)], ("lexical", "creative"): [(3, 4.0)]}
    plain = search(FakePlpy(CORPUS, hits, model=False), "postgres sea")
    namespace = {"__name__": "__main__", "plpy": FakePlpy(CORPUS, hits, model=False), "SD": {}, "GD": {}}
    namespace |= {
        "query": "postgres sea",
        "workspaces": None,
        "k": 25,
        "per_workspace": 30,
        "open_archive": None,
    }
    namespace |= {"bridge": [], "as_of": "2026-11-30 12:00:00+00", "query_embedding": None, "profile": None}
    exec("def procedure():\n" + textwrap.indent(body, "    "), namespace)
    found = json.loads(namespace["procedure"]())
    for answer in (plain, found):
        del answer["report"]["timings_ms"]
        for pool in answer["report"]["workspaces"].values():
            for stage in pool["stages"]:
                stage.pop("ms", None)
        for attempt in answer["report"]["rerank"]["attempts"]:
            attempt.pop("ms", None)
    assert found == plain and [r["chunk_id"] for r in found["results"]] == [1, 3, 2]
