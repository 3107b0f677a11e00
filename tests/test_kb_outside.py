"""The lifecycle retriever over any retriever (issue 17, drop-in retrievers): a user's own
LangChain or LlamaIndex retriever is the global stage, exocortex keeps the lifecycle of what it
returns (outside documents, migration 0039, sql/710_kb_outside.sql): suggestions, the personal
stage, decay, provenance, the user actions, and the reader's narrow recording path. Also the
profile from the configuration (EXO_PROFILE) for the retrievers and the MCP server.

One database for the module; each test makes profiles of its own. The wrapped retrievers are
real framework retrievers over a list of documents (no exocortex document is involved)."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import ClassVar

import anyio
import psycopg
import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests
from llama_index.core.retrievers import BaseRetriever as LlamaBaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from mcp import ClientSession, StdioServerParameters, stdio_client
from psycopg.types.json import Jsonb
from support.db import cloned_database

from exocortex.client.api import Reader
from exocortex.client.integrations import langchain as lc
from exocortex.client.integrations import llamaindex as li
from exocortex.plpy import model_client as client
from exocortex.worker.loop import Worker

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUESTION = "how does a liveness probe restart a pod"

#: The user's own store: Kubernetes notes, one of them in two chunks, and one about bread.
NOTES = [
    ("k8s/probes.md", "Probes", "A liveness probe that fails makes the kubelet restart the container."),
    ("k8s/probes.md", "Probes", "The readiness probe gates traffic; it never restarts the pod."),
    ("k8s/pods.md", "Pods", "A pod is the smallest deployable unit; its containers share a network."),
    ("k8s/restart.md", "Restart policy", "restartPolicy Always restarts a container whatever its exit code."),
    ("k8s/debug.md", "Debugging", "kubectl describe pod shows why a probe failed and the restart count."),
    ("bread/sourdough.md", "Sourdough", "A sourdough loaf wants a long cold proof."),
]


def words(text: str) -> set[str]:
    return {w.strip(".,;?").lower() for w in text.split()}


class ListRetriever(BaseRetriever):
    """A LangChain retriever over a list of Documents: those sharing a word with the question."""

    documents: list[Document]
    top: int = 4

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        asked = words(query) - {"a", "the", "how", "does", "its"}
        found = [d for d in self.documents if asked & words(d.page_content)]
        return found[: self.top]


class ListNodeRetriever(LlamaBaseRetriever):
    """A LlamaIndex retriever over a list of nodes: those sharing a word with the question."""

    def __init__(self, nodes: list[TextNode]) -> None:
        self.nodes = nodes
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        asked = words(query_bundle.query_str) - {"a", "the", "how", "does", "its"}
        return [NodeWithScore(node=n, score=1.0) for n in self.nodes if asked & words(n.text)][:4]


def store() -> ListRetriever:
    return ListRetriever(
        documents=[Document(page_content=t, metadata={"source": s, "title": h}) for s, h, t in NOTES]
    )


@pytest.fixture(scope="module")
def kdb(cfg, template_db) -> Iterator:
    with cloned_database(cfg, template_db, "exo_kb_outside") as db:
        yield db


@pytest.fixture
def conn(kdb):
    with kdb.connect() as conn:
        yield conn


@pytest.fixture
def reader(kdb):
    with kdb.connect("exo_reader") as conn:
        yield conn


def new_profile(db) -> str:
    """A new profile with its login role (a session of it is the profile)."""
    name = f"user-{uuid.uuid4().hex[:8]}"
    db.profile_url(name)
    return name


def item(conn, who, key) -> dict:
    row = conn.execute(
        """select i.state::text, i.fetch_count, i.next_suggestion_at, i.miss_streak, i.forced, s.score
           from exo_private.kb_items i
           join exo_private.kb_profiles p on p.id = i.profile_id
           join exo_private.kb_outside_documents o on o.id = i.outside_id
           left join exo_private.kb_scores s on s.profile_id = i.profile_id and s.outside_id = i.outside_id
           where p.name = %s and o.key = %s""",
        (who, key),
    ).fetchone()
    keys = ["state", "fetch_count", "next", "misses", "forced", "score"]
    return dict(zip(keys, row, strict=True)) if row else {}


def write(conn, who, action, keys, at=T0, passages=()):
    return conn.execute(
        "select exo_private.kb_outside_write(%s, %s, %s, %s, %s)",
        (who, action, list(keys), Jsonb(list(passages)), at),
    ).fetchone()[0]


def use(conn, who, key, at, text="a liveness probe restarts the container"):
    return write(conn, who, "use", [key], at, [{"key": key, "title": None, "text": text}])


# -- the LangChain wrapper -----------------------------------------------------------------


def test_the_wrapper_suggests_saves_and_answers_from_the_base_first(kdb, conn):
    who = new_profile(kdb)
    retriever = lc.LifecycleRetriever(
        retriever=store(), id_key="source", profile=who, k=4, url=kdb.profile_url(who)
    )
    for _ in range(3):
        docs = retriever.invoke(QUESTION)
    assert [d.metadata["kb_from"] for d in docs] == ["global"] * len(docs)
    assert docs[0].metadata == {"source": "k8s/probes.md", "title": "Probes", "kb_from": "global"}
    first = retriever.last_provenance.to_dict()["sources"][0]
    assert (first["key"], first["from"], first["state"], first["fetch_count"]) == (
        "k8s/probes.md",
        "global",
        "suggested",
        3,
    )
    text = retriever.last_provenance.render()
    assert "'Probes' has appeared in your questions 3 times; save it?" in text
    assert "(accept_suggestion('k8s/probes.md'))" in text
    assert retriever.accept_suggestion("k8s/probes.md")["state"] == "claimed"

    # The claimed outside document comes first, from the base, by its kept passages' words.
    docs = retriever.invoke("why did the liveness probe fail")
    assert docs[0].metadata["kb_from"] == "personal" and docs[0].metadata["source"] == "k8s/probes.md"
    assert docs[0].metadata["title"] == "Probes" and docs[0].metadata["kb_match"] == "keyword"
    assert docs[0].page_content == NOTES[0][2]
    # a passage the base gave is not given twice
    assert [d.page_content for d in docs].count(NOTES[0][2]) == 1
    sources = retriever.last_provenance.to_dict()["sources"]
    assert (sources[0]["key"], sources[0]["from"], sources[0]["state"]) == (
        "k8s/probes.md",
        "personal",
        "claimed",
    )
    assert (
        "1. 'Probes', from your base (by keywords): claimed, fetched 4 times"
        in retriever.last_provenance.render()
    )
    assert sources[0]["match"] == "keyword"
    # no passage has a vector (no worker ran): matched by words, and the report says why
    assert retriever.last_report["personal"]["match"]["mode"] == "keyword"
    assert "no saved passage has a vector" in retriever.last_report["personal"]["match"]["why"]
    assert retriever.last_report["personal"]["recorded"] is True
    assert retriever.last_report["personal"]["hits"] == ["k8s/probes.md"]
    assert item(conn, who, "k8s/probes.md")["misses"] == 0  # matched by words: no cache check is counted

    # A question the wrapped store cannot answer still reaches the base.
    docs = retriever.invoke("kubelet")
    assert [(d.metadata["source"], d.metadata["kb_from"]) for d in docs] == [("k8s/probes.md", "personal")]

    # The actions, by key; the base lists the outside documents.
    assert retriever.thumbs_up("k8s/probes.md")["state"] == "claimed"
    assert retriever.force_pin("k8s/probes.md")["state"] == "pinned"
    base = retriever.personal_base()
    assert (base[0]["key"], base[0]["title"], base[0]["state"]) == ("k8s/probes.md", "Probes", "pinned")
    assert retriever.force_remove("k8s/probes.md")["state"] == "global"
    assert item(conn, who, "k8s/probes.md")["fetch_count"] == 0
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="not in the base of profile"):
        retriever.decline_suggestion("k8s/never-seen.md")


def test_k_cuts_the_merged_list_and_only_what_was_returned_is_recorded(kdb, conn):
    who = new_profile(kdb)
    retriever = lc.LifecycleRetriever(
        retriever=store(), id_key="source", profile=who, url=kdb.profile_url(who)
    )
    docs = retriever.invoke(QUESTION, k=2)
    assert [d.metadata["source"] for d in docs] == ["k8s/probes.md", "k8s/probes.md"]
    assert item(conn, who, "k8s/probes.md")["fetch_count"] == 1
    assert item(conn, who, "k8s/debug.md") == {}
    with pytest.raises(TypeError, match="unknown retriever argument"):
        retriever.invoke(QUESTION, workspaces=["x"])


def test_a_document_without_the_id_key_is_a_clear_error(kdb):
    bare = ListRetriever(documents=[Document(page_content="a liveness probe", metadata={"path": "x.md"})])
    who = new_profile(kdb)
    retriever = lc.LifecycleRetriever(retriever=bare, id_key="source", profile=who, url=kdb.profile_url(who))
    with pytest.raises(ValueError, match=r"no metadata 'source'.*begins 'a liveness probe'.*\['path'\]"):
        retriever.invoke("liveness")


def test_a_nul_character_in_a_wrapped_document_is_dropped_before_it_is_sent(kdb, conn):
    who = new_profile(kdb)
    odd = ListRetriever(
        documents=[Document(page_content="a liveness\x00 probe", metadata={"source": "odd.md"})]
    )
    retriever = lc.LifecycleRetriever(retriever=odd, id_key="source", profile=who, url=kdb.profile_url(who))
    assert [d.page_content for d in retriever.invoke("probe")] == ["a liveness\x00 probe"]  # as returned
    assert item(conn, who, "odd.md")["fetch_count"] == 1


def test_a_wrapper_needs_a_profile(kdb, monkeypatch):
    monkeypatch.delenv("EXO_PROFILE", raising=False)
    with pytest.raises(ValueError, match="needs a profile"):
        lc.LifecycleRetriever(retriever=store(), id_key="source", reader=Reader(kdb.url("exo_reader")))


# -- the lifecycle of outside documents, with the clock the tests move ---------------------------


def test_threshold_decline_and_reset_follow_the_transition_table(kdb, conn):
    who = new_profile(kdb)
    for n in range(3):
        use(conn, who, "a.md", T0 + timedelta(minutes=n))
    assert item(conn, who, "a.md")["state"] == "suggested"
    assert write(conn, who, "decline", ["a.md"], T0 + timedelta(minutes=3))[0]["state"] == "surfaced"
    assert item(conn, who, "a.md")["next"] == 3 + 6  # fetch_count + threshold x 2
    # absent from three searches of the user: counting starts again
    for n in range(3):
        use(conn, who, "b.md", T0 + timedelta(minutes=10 + n))
    assert (item(conn, who, "a.md")["state"], item(conn, who, "a.md")["fetch_count"]) == ("surfaced", 0)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="cannot take the event 'accept'"):
        write(conn, who, "accept", ["a.md"], T0 + timedelta(minutes=20))


def test_decay_pins_an_outside_document_held_above_the_pin_score(kdb, conn):
    who = new_profile(kdb)
    for n in range(3):
        use(conn, who, "held.md", T0 + timedelta(minutes=n))
    write(conn, who, "accept", ["held.md"], T0 + timedelta(minutes=5))
    write(conn, who, "thumbs_up", ["held.md"], T0 + timedelta(minutes=6))
    # asked for twice a day: from day 9 (20 fetches) it scores (0.40 + 0.30 + 0.20) / 1.05
    for d in range(1, 17):
        for n in range(2):
            use(conn, who, "held.md", T0 + timedelta(days=d, minutes=n))
        conn.execute("select exo_private.kb_decay(%s, %s)", (who, T0 + timedelta(days=d, hours=1)))
        held = item(conn, who, "held.md")
        assert held["state"] == ("claimed" if d < 16 else "pinned"), d  # held for kb.pin_days (7)
    assert held["score"] is not None


def test_decay_demotes_a_claimed_outside_document_held_below_the_score(kdb, conn):
    who = new_profile(kdb)
    for n in range(3):
        use(conn, who, "old.md", T0 + timedelta(minutes=n))
    write(conn, who, "accept", ["old.md"], T0 + timedelta(minutes=5))
    for d in (120, 121, 122, 123):  # below kb.demote_score from day 120, for kb.demote_days (3)
        result = conn.execute(
            "select exo_private.kb_decay(%s, %s)", (who, T0 + timedelta(days=d))
        ).fetchone()[0]
        assert item(conn, who, "old.md")["state"] == ("claimed" if d < 123 else "demoted")
    assert result["demoted"] == 1


def test_the_personal_stage_over_outside_documents_keeps_the_latest_passages(kdb, conn):
    who = new_profile(kdb)
    conn.execute("select exo_private.set_setting('kb.outside_passages', '2')")
    try:
        for n, text in enumerate(["first passage about probes", "second about pods", "third about restarts"]):
            use(conn, who, "p.md", T0 + timedelta(minutes=n), text)
    finally:
        conn.execute("select exo_private.set_setting('kb.outside_passages', '8')")
    kept = conn.execute(
        """select array_agg(s.body order by s.seen_at) from exo_private.kb_outside_passages s
           join exo_private.kb_outside_documents o on o.id = s.outside_id
           join exo_private.kb_profiles p on p.id = o.profile_id where p.name = %s""",
        (who,),
    ).fetchone()[0]
    assert kept == ["second about pods", "third about restarts"]


# -- the reader's narrow path ----------------------------------------------------------------


def _snapshot(conn):
    return conn.execute(
        """select (select jsonb_agg(to_jsonb(i) order by i.profile_id, i.document_id, i.outside_id)
                   from exo_private.kb_items i),
                  (select jsonb_agg(to_jsonb(o) order by o.id) from exo_private.kb_outside_documents o),
                  (select jsonb_agg(to_jsonb(s) - 'tsv' order by s.outside_id, s.digest)
                   from exo_private.kb_outside_passages s),
                  (select jsonb_agg(to_jsonb(p) - 'window_started_at' - 'window_writes' - 'searches'
                                    order by p.id) from exo_private.kb_profiles p),
                  (select count(*) from exo_private.documents), (select count(*) from exo_private.settings)"""
    ).fetchone()


def _as(session, statement, args=()):
    with session.transaction():
        session.execute("set transaction read write")
        return session.execute(statement, args).fetchone()[0]


def test_the_outside_recording_path_writes_nothing_else(kdb, conn, reader):
    alice, bob = new_profile(kdb), new_profile(kdb)
    use(conn, bob, "bob.md", datetime.now(UTC))
    good = Jsonb([{"key": "a.md", "title": "A", "text": "a liveness probe"}])
    as_alice = [
        ("select exo.kb_outside_retrieve('probe', %s)", (Jsonb([{"key": "a.md"}] * 201),)),
        ("select exo.kb_outside_retrieve('probe', %s)", (Jsonb({"key": "a.md"}),)),
        ("select exo.kb_outside_retrieve('probe', %s)", (Jsonb([{"key": 1, "text": "x"}]),)),
        ("select exo.kb_outside_retrieve('probe', %s, 0)", (good,)),
        ("select exo.kb_outside_retrieve('probe', %s)", (None,)),
        ("select exo.kb_outside_retrieve('probe', %s, 5, %s)", (good, [])),
        ("select exo.kb_outside_retrieve('probe', %s, 5, %s)", (good, [float("nan")])),
        ("select exo.kb_outside_act('use', 'bob.md')", ()),  # the internal action
        ("select exo_private.kb_outside_write(%s, 'cache', array['bob.md'])", (bob,)),
        ("select exo.kb_outside_act('force_pin', 'bob.md')", ()),  # bob's document is not in her base
        ("select exo.kb_outside_act('accept_suggestion', 'bob.md')", ()),
        ("select exo.kb_outside_act('force_pin', null)", ()),
        ("select exo_private.kb_outside_write(%s, 'use', array['a.md'])", (alice,)),  # the internal path
        ("insert into exo_private.kb_outside_documents (profile_id, key, last_seen_at)"
         " select id, 'x.md', now() from exo_private.kb_profiles where name = %s", (alice,)),
        ("delete from exo_private.kb_outside_passages where %s::text is not null", (alice,)),
        ("update exo_private.kb_items set state = 'pinned' where %s::text is not null", (alice,)),
        ("select exo_private.kb_decay(null)", ()),
    ]  # fmt: skip
    # the plain reader has no profile, so no base to record in or read
    as_reader = [
        ("select exo.kb_outside_retrieve('probe', %s)", (good,)),
        ("select exo.kb_outside_act('force_pin', 'bob.md')", ()),
        ("select count(*) from exo.kb_outside_items()", ()),
    ]
    before = _snapshot(conn)
    with kdb.connect_profile(alice) as session:
        for who, statements in ((session, as_alice), (reader, as_reader)):
            for statement, args in statements:
                with pytest.raises(psycopg.Error) as raised:
                    _as(who, statement, args)
                assert raised.value.sqlstate[:2] in {"22", "42"}, (statement, raised.value)
        # a key the recording path refuses: the answer comes, the refusal is reported, nothing is kept
        for key in ("", "k" * 501):
            found = _as(
                session, "select exo.kb_outside_retrieve('probe', %s)", (Jsonb([{"key": key, "text": "x"}]),)
            )
            personal = found["report"]["personal"]
            assert personal["recorded"] is False and "a key is 1 to 500 characters" in personal["why"]
        assert _snapshot(conn) == before
        # alice's call touches only alice's base; bob's document of the same key is his alone
        _as(
            session,
            "select exo.kb_outside_retrieve('probe', %s)",
            (Jsonb([{"key": "bob.md", "title": None, "text": "alice's own text"}]),),
        )
        assert [r[0] for r in session.execute("select key from exo.kb_outside_items()")] == ["bob.md"]
    assert item(conn, bob, "bob.md")["fetch_count"] == 1
    assert item(conn, alice, "bob.md")["fetch_count"] == 1


def test_a_read_only_call_answers_but_records_nothing(kdb, conn):
    who = new_profile(kdb)
    with kdb.connect_profile(who) as session:
        found = session.execute(
            "select exo.kb_outside_retrieve('probe', %s)",
            (Jsonb([{"key": "a.md", "title": "A", "text": "a liveness probe"}]),),
        ).fetchone()[0]
    assert found["results"] == [{"from": "global", "key": "a.md", "index": 0}]
    assert found["report"]["personal"]["recorded"] is False
    assert "read-only" in found["report"]["personal"]["why"]
    assert item(conn, who, "a.md") == {}


def test_the_outside_path_cannot_flood(kdb, conn):
    who = new_profile(kdb)
    conn.execute("select exo_private.set_setting('kb.outside_documents', '3')")
    try:
        write(conn, who, "use", ["1", "2"], datetime.now(UTC))
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="kb.outside_documents"):
            write(conn, who, "use", ["3", "4"], datetime.now(UTC))
        # in the wrapper's call the cap is reported, not raised: the answer still comes
        with kdb.connect_profile(who) as session:
            found = _as(
                session,
                "select exo.kb_outside_retrieve('x', %s)",
                (Jsonb([{"key": k, "title": None, "text": "x"} for k in ("5", "6")]),),
            )
        assert found["report"]["personal"]["recorded"] is False
        assert (
            "kb.outside_documents" in found["report"]["personal"]["why"]
            or "3 outside" in (found["report"]["personal"]["why"])
        )
        assert len(found["results"]) == 2
    finally:
        conn.execute("select exo_private.set_setting('kb.outside_documents', '10000')")
    assert item(conn, who, "5") == {}


# -- LlamaIndex ------------------------------------------------------------------------------


def test_llamaindex_wrapper_in_brief(kdb):
    who = new_profile(kdb)
    nodes = [TextNode(text=t, id_=f"n{i}", metadata={"file_name": s}) for i, (s, _, t) in enumerate(NOTES)]
    retriever = li.LifecycleRetriever(
        ListNodeRetriever(nodes), id_key="file_name", profile=who, k=3, url=kdb.profile_url(who)
    )
    for _ in range(3):
        found = retriever.retrieve(QUESTION)
    assert found[0].node.metadata == {"file_name": "k8s/probes.md", "kb_from": "global"}
    assert nodes[0].metadata == {"file_name": "k8s/probes.md"}  # the user's nodes are left as they were
    assert "has appeared in your questions 3 times; save it?" in retriever.last_provenance.render()
    assert retriever.accept_suggestion("k8s/probes.md")["state"] == "claimed"
    found = anyio.run(retriever.aretrieve, "kubelet")
    assert [(n.node.metadata["file_name"], n.node.metadata["kb_from"]) for n in found] == [
        ("k8s/probes.md", "personal")
    ]
    assert found[0].node.text == NOTES[0][2] and found[0].score > 0


# -- the profile from the configuration --------------------------------------------------------


def test_the_retrievers_take_the_profile_from_the_configuration(kdb, conn, monkeypatch):
    who = new_profile(kdb)
    monkeypatch.setenv("EXO_PROFILE", who)
    monkeypatch.setenv("EXO_DB_NAME", kdb.name)  # the profile's login role is found in this database
    wrapper = lc.LifecycleRetriever(retriever=store(), id_key="source")
    assert wrapper.profile == who and wrapper.reader.profile == who
    wrapper.invoke(QUESTION)
    assert item(conn, who, "k8s/probes.md")["fetch_count"] == 1
    assert lc.ExocortexRetriever().profile == who
    assert li.ExocortexRetriever().options.profile == who
    # a reader of another session is not taken for the profile's: the profile is the session's
    with pytest.raises(ValueError, match="not profile"):
        lc.ExocortexRetriever(reader=Reader(kdb.url("exo_reader")), profile=who)


def test_the_mcp_server_records_every_call_under_its_configured_profile(kdb, conn):
    who = new_profile(kdb)
    with kdb.connect() as admin:
        from support.graph import add_document

        doc = add_document(admin, "technical", ["a liveness probe restarts the container"]).id
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "exocortex.cli", "mcp"],
        # this checkout's package, where PYTHONPATH points at it (the client passes few variables on)
        env={
            "EXO_HOME": os.environ["EXO_HOME"],
            "EXO_PG_PORT": os.environ["EXO_PG_PORT"],
            "EXO_DB_NAME": kdb.name,
            "EXO_PROFILE": who,
        }
        | ({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write_), ClientSession(read, write_) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert "profile" not in listed["search"].input_schema["properties"]
            assert "profile" not in listed["kb_act"].input_schema["properties"]
            for _ in range(3):
                result = await session.call_tool("search", {"query": "liveness probe", "k": 3})
                assert not result.is_error
            found = json.loads(result.content[0].text)
            assert found["report"]["provenance"]["profile"] == who
            result = await session.call_tool("kb_act", {"action": "accept_suggestion", "document_id": doc})
            assert not result.is_error and json.loads(result.content[0].text)["state"] == "claimed"
            refused = await session.call_tool("search", {"query": "probe", "profile": "someone-else"})
            assert refused.is_error
            # the sql tool is the profile's session too: another user's rows are not there to read
            found = await session.call_tool("sql", {"statement": "select count(*) as n from exo.kb_items()"})
            assert json.loads(found.content[0].text)["rows"] == [[1]]

    anyio.run(main)
    row = conn.execute(
        """select i.state::text, i.fetch_count from exo_private.kb_items i
           join exo_private.kb_profiles p on p.id = i.profile_id where p.name = %s and i.document_id = %s""",
        (who, doc),
    ).fetchone()
    assert row == ("claimed", 3)


# -- LangChain's standard retriever suite ------------------------------------------------------


class TestLangChainStandardLifecycle(RetrieversIntegrationTests):
    """LangChain's standard retriever suite over the wrapper, recording in a user's base."""

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [
        pytest.mark.asyncio,
        pytest.mark.filterwarnings("ignore:The test .* is marked with '@pytest.mark.asyncio' but it is not"),
    ]

    @pytest.fixture(autouse=True)
    def _kdb(self, kdb) -> None:
        self.profile = new_profile(kdb)
        self.url = kdb.profile_url(self.profile)

    @property
    def retriever_constructor(self) -> type[lc.LifecycleRetriever]:
        return lc.LifecycleRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"retriever": store(), "id_key": "source", "url": self.url, "k": 3, "profile": self.profile}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


#: Outside documents for the personal stage by meaning: the question about the trip shares no
#: word with its passage (english stems: plane, portug / flight, lisbon, leav, 12, may).
TRIP = ("trips/lisbon.md", "Our flight to Lisbon leaves on 12 May.")
MEANING = "when is the plane to Portugal"
OTHERS = [
    ("k8s/probes.md", "A liveness probe that fails makes the kubelet restart the container."),
    ("bread/sourdough.md", "A sourdough loaf wants a long cold proof."),
]


def ask_base(db, who: str, query: str, vector: list[float] | None = None) -> dict:
    """exo.kb_outside_retrieve as the wrapper calls it (reader, read-write), nothing returned by the
    wrapped retriever: every result comes from the personal stage."""
    with db.connect_profile(who) as session:
        return _as(session, "select exo.kb_outside_retrieve(%s, '[]', 5, %s)", (query, vector))


def test_the_personal_stage_finds_a_saved_outside_document_by_meaning(cfg, template_db, real_models):
    """The worker embeds the kept passages; the question's vector finds a claimed document that
    shares no word with it, and only above kb.similarity_threshold (MiniLM gives this paraphrase
    about 0.66, so the test sets 0.6; the other two saved documents stay below). With the endpoint
    down the stage falls back to keywords and says so; a caller's vector still works."""
    with cloned_database(cfg, template_db, "exo_kb_outside_vectors") as db:
        endpoint = {"url": real_models.embeddings.url, "model": "all-MiniLM-L6-v2", "dimensions": 384}
        who = new_profile(db)
        with db.connect() as conn:
            conn.execute(
                "update exo_private.settings set value = value || %s where key = 'models.embeddings'",
                (Jsonb(endpoint),),
            )
            conn.execute("select exo_private.set_setting('kb.similarity_threshold', '0.6')")
            for key, text in [TRIP, *OTHERS]:
                use(conn, who, key, T0, text)
            conn.execute(
                "update exo_private.kb_items i set state = 'claimed' from exo_private.kb_profiles p"
                " where p.id = i.profile_id and p.name = %s",
                (who,),
            )
            queued = conn.execute(
                "select count(*) from pgmq.q_embed where message ? 'outside_id'"
            ).fetchone()[0]
        assert queued == 3  # one embed message per document with a new passage

        # No vector yet: by words only, and none is shared.
        before = ask_base(db, who, MEANING)
        assert before["results"] == [] and before["report"]["personal"]["match"]["mode"] == "keyword"

        Worker(cfg, dbname=db.name, once=True, queues=["embed"], poll_s=0.05).run()
        with db.connect() as conn:
            assert (
                conn.execute("select count(*) from exo_private.kb_outside_passage_embeddings").fetchone()[0]
                == 3
            )

        found = ask_base(db, who, MEANING)
        report = found["report"]["personal"]
        assert report["match"]["mode"] == "similarity" and report["match"]["query_embedding"] == "endpoint"
        assert report["match"]["keyword_passages"] == 0
        assert report["hits"] == [TRIP[0]]
        (hit,) = found["results"]
        assert (hit["from"], hit["key"], hit["text"], hit["match"]) == (
            "personal",
            TRIP[0],
            TRIP[1],
            "similarity",
        )
        assert 0.6 <= hit["score"] < 0.75
        assert "from your base (by meaning)" in found["provenance"]["text"]

        # A new passage has no vector yet; the endpoint goes down: every passage by its words.
        with db.connect() as conn:
            use(conn, who, OTHERS[0][0], T0, "The readiness probe gates traffic to the pod.")
            conn.execute(
                "update exo_private.settings set value = value || %s where key = 'models.embeddings'",
                (Jsonb({"url": "http://127.0.0.1:9/v1"}),),
            )
        fallback = ask_base(db, who, "readiness probe")
        match = fallback["report"]["personal"]["match"]
        assert match["mode"] == "keyword" and match["why"].startswith("no query embedding: ")
        assert fallback["report"]["personal"]["hits"] == [OTHERS[0][0]]
        assert {r["match"] for r in fallback["results"]} == {"keyword"}
        assert "from your base (by keywords)" in fallback["provenance"]["text"]
        assert ask_base(db, who, MEANING)["results"] == []

        # The caller's vector needs no endpoint; the passage without one is still matched by words.
        (vector,) = client.embed(real_models.embeddings, [MEANING])
        caller = ask_base(db, who, MEANING, vector)
        match = caller["report"]["personal"]["match"]
        assert (match["mode"], match["query_embedding"], match["keyword_passages"]) == (
            "similarity",
            "caller",
            1,
        )
        assert "1 saved passage(s) have no vector yet" in match["why"]
        assert caller["report"]["personal"]["hits"] == [TRIP[0]]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="384"):
            ask_base(db, who, MEANING, vector[:10])

        # Another embedding model queues every outside document again (its passages lack its vectors).
        with db.connect() as conn:
            conn.execute("delete from pgmq.q_embed")
            conn.execute("select exo_private.set_embedding_model('another-model', 384)")
            queued = conn.execute(
                "select count(*) from pgmq.q_embed where message ? 'outside_id'"
            ).fetchone()[0]
        assert queued == 3
