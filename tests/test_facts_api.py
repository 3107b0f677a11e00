"""The fact readers from Python (exocortex.client.api): exo.facts, fact_history, facts_search and
exo.audit_summary as the read-only role, deference included. The MCP tools that wrap them are
tested in tests/test_mcp.py."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from psycopg.types.json import Jsonb
from support.db import cloned_database
from support.deferred import LUNCH, WALTER, defer_walter
from support.graph import add_document

from exocortex.client import api


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def fdb(cfg, template_db):
    """Eve Hart moved twice; Ann Lee has one fact of a charged chunk (Walter Rivera is deferred)."""
    with cloned_database(cfg, template_db, "exo_facts_api") as db:
        with db.connect() as conn:
            defer_walter(conn)
            doc = add_document(conn, "personal", LUNCH)
            conn.execute(
                "update exo_private.chunks set charged_subjects = %s where id = %s", ([WALTER], doc.chunks[1])
            )
            facts = [
                ("Eve Hart", "home town", "Leeds", at(2010), {"document_id": doc.id}),
                ("Eve Hart", "home town", "York", at(2015), {"document_id": doc.id}),
                ("Eve Hart", "home town", "Oslo", at(2021), {"document_id": doc.id}),
                ("Ann Lee", "read at", "St Mary Hospice", at(2020), {"chunk_id": doc.chunks[1]}),
            ]
            for subject, attribute, value, valid_from, source in facts:
                conn.execute(
                    "select exo_private.record_fact('personal', %s, %s, %s, 'declared', %s, %s)",
                    (subject, attribute, value, valid_from, Jsonb({"document_id": doc.id} | source)),
                )
        yield db


@pytest.fixture(scope="module")
def reader(fdb):
    return api.Reader(fdb.url("exo_reader"))


def test_facts_now_and_as_of(reader):
    assert [(f["attribute"], f["value"]) for f in api.facts(reader, "eve hart")] == [("home_town", "Oslo")]
    assert [f["value"] for f in api.facts(reader, "Eve Hart", as_of=at(2016))] == ["York"]
    assert api.facts(reader, "Eve Hart", as_of=at(2009)) == []
    # as of 2016 York had not ended yet: its later end is not told
    (york,) = api.facts(reader, "Eve Hart", as_of=at(2016))
    assert york["valid_to"] is None
    assert api.facts(reader, "Eve Hart", as_of=at(2022))[0]["valid_to"] is None


def test_fact_history_names_what_closed_each_row(reader):
    line = api.fact_history(reader, "Eve Hart", "Home Town")
    assert [(f["value"], f["close_reason"]) for f in line] == [
        ("Leeds", "superseded"),
        ("York", "superseded"),
        ("Oslo", None),
    ]
    assert [f["closed_by"] for f in line[:2]] == [f["fact_id"] for f in line[1:]]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="attribute must not be blank"):
        api.fact_history(reader, "Eve Hart", " ")
    # as_of: the rows begun by then, no end after it told
    then = api.fact_history(reader, "Eve Hart", "Home Town", as_of=at(2016))
    assert [(f["value"], f["valid_to"], f["close_reason"], f["closed_by"]) for f in then] == [
        ("Leeds", at(2015), "superseded", line[1]["fact_id"]),
        ("York", None, None, None),
    ]


def test_facts_search_finds_current_values_only(reader):
    assert [f["value"] for f in api.facts_search(reader, "Oslo York Leeds")] == ["Oslo"]
    assert api.facts_search(reader, "Oslo", max_results=1)[0]["subject"] == "Eve Hart"


def test_facts_search_as_of_finds_the_values_current_then(reader):
    (york,) = api.facts_search(reader, "Oslo York Leeds", as_of=at(2016))
    # York had not ended in 2016: its later end is not told
    assert (york["value"], york["valid_to"]) == ("York", None)
    assert api.facts_search(reader, "Oslo", as_of=at(2016)) == []
    assert api.facts_search(reader, "Leeds", as_of=at(2009)) == []


def test_a_charged_fact_is_a_hint_until_bridged(reader):
    # Left out, and the hints are those of any subject asked (none here: Walter has no facts of his
    # own): a hint that counted the withheld facts among Ann Lee's would tell what withheld text
    # says of her
    assert api.facts(reader, "Ann Lee") == api.facts(reader, "xylophone") == []
    bridged = api.facts(reader, "Ann Lee", bridge=[WALTER])
    assert [(f["value"], f["withheld"]) for f in bridged] == [("St Mary Hospice", None)]
    # facts_search never tells which words a withheld fact holds: "hospice" finds nothing shown and
    # gives the hints of any other question (none here: Walter has no facts of his own)
    assert api.facts_search(reader, "hospice") == api.facts_search(reader, "xylophone") == []
    assert [f["value"] for f in api.facts_search(reader, "hospice", bridge=[WALTER])] == ["St Mary Hospice"]


def test_audit_summary_reads_the_newest_audit_run(fdb, reader):
    assert api.audit_summary(reader) | {"by_reason": None} == {
        "ran_at": None,
        "findings": {},
        "closed_now": 0,
        "facts": 0,
        "closed": 0,
        "retirement_rate": 0,
        "by_reason": None,
    }
    with fdb.connect("exo_writer") as conn:
        conn.execute("select count(*) from exo_private.audit()")
    summary = api.audit_summary(reader)
    assert summary["ran_at"] and summary["facts"] == 4 and summary["closed"] == 2
    assert summary["by_reason"] == {"superseded": {"closed": 2, "rate": 0.5}}
