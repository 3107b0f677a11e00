"""One definition of withheld (issue 12): search decides in Python (plpy/search.py Deference),
every other reader path in SQL (sql/450_deference.sql: exo_private.released_keys and
exo_private.unreleased). Both must give the same answer for any deference list, bridge and set
of charged subjects; a property over generated inputs checks it.

The names come from a small pool, so aliases are shared between deferred subjects, a subject is
another's alias, and charged subjects are on the list or only declared by frontmatter; each is
written in a random case, spacing and edge punctuation, and some have no canonical key at all."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb
from search import Deference
from support.db import cloned_database

NAMES = ["Walter Rivera", "Grandpa", "Rosa", "Mum"]
SPELLINGS = [
    lambda n: n,
    str.upper,
    str.lower,
    lambda n: f"  {n.replace(' ', '   ')} ",
    lambda n: f"{n}.",
    lambda n: f'"{n}"',
    lambda n: n.replace("a", "\uff41"),  # fullwidth a: NFKC folds it back
]
KEYLESS = ["", "   ", "...", "\u2014"]  # no canonical key: always withheld

name = st.one_of(
    st.builds(lambda n, spell: spell(n), st.sampled_from(NAMES), st.sampled_from(SPELLINGS)),
    st.sampled_from(KEYLESS),
)
subject = st.fixed_dictionaries(
    {
        "subject": st.builds(lambda n, spell: spell(n), st.sampled_from(NAMES), st.sampled_from(SPELLINGS)),
        "aliases": st.lists(name, max_size=3),
    }
)
deference_list = st.lists(subject, max_size=4, unique_by=lambda s: s["subject"])
charged_sets = st.lists(st.lists(name, min_size=1, max_size=3), min_size=1, max_size=6)
bridges = st.lists(name, max_size=3)


@pytest.fixture(scope="module")
def conn(cfg, template_db) -> Iterator[psycopg.Connection]:
    with cloned_database(cfg, template_db, "exo_withheld") as db, db.connect(autocommit=False) as c:
        yield c


def sql_withheld(conn, deferred: list[dict], bridge: list[str], charged: list[list[str]]) -> list[list[str]]:
    """exo_private.unreleased of each charged set under exo_private.released_keys(bridge), with
    `deferred` as the deference list (rolled back); sorted as Python sorts."""
    try:
        conn.execute("delete from exo_private.deferred_subjects")
        for s in deferred:
            conn.execute(
                "insert into exo_private.deferred_subjects (subject, aliases) values (%s, %s)",
                (s["subject"], s["aliases"]),
            )
        rows = conn.execute(
            "select exo_private.unreleased(array(select jsonb_array_elements_text(c.value)), r.keys)"
            " from jsonb_array_elements(%s) with ordinality c"
            " cross join (select exo_private.released_keys(%s) as keys) r"
            " order by c.ordinality",
            (Jsonb(charged), bridge),
        ).fetchall()
        return [sorted(r[0]) for r in rows]
    finally:
        conn.rollback()


def python_withheld(deferred: list[dict], bridge: list[str], charged: list[list[str]]) -> list[list[str]]:
    care = Deference(deferred, bridge)
    return [sorted(set(care.withheld(c))) for c in charged]


@settings(max_examples=500, deadline=None)
@given(deferred=deference_list, bridge=bridges, charged=charged_sets)
def test_python_and_sql_withhold_the_same_subjects(conn, deferred, bridge, charged):
    assert sql_withheld(conn, deferred, bridge, charged) == python_withheld(deferred, bridge, charged)


def test_bridging_one_subject_never_opens_another_that_shares_an_alias(conn):
    """An alias two deferred subjects share stays closed until both are bridged."""
    deferred = [
        {"subject": "Walter Rivera", "aliases": ["Grandpa", "Grandpa Walter"]},
        {"subject": "Rosa", "aliases": ["Grandpa"]},
        {"subject": "Mum", "aliases": []},
    ]
    charged = [
        ["ROSA"],
        ["grandpa"],
        ["Grandpa Walter"],
        ["Mum"],
        ["Walter Rivera", "Mum"],
        ["the clinic"],
        ["..."],
    ]
    walter = [["ROSA"], ["grandpa"], [], ["Mum"], ["Mum"], ["the clinic"], ["..."]]
    assert python_withheld(deferred, ["walter rivera."], charged) == walter
    assert sql_withheld(conn, deferred, ["walter rivera."], charged) == walter
    both = [[], [], [], ["Mum"], ["Mum"], ["the clinic"], ["..."]]
    assert python_withheld(deferred, ["Walter Rivera", "rosa"], charged) == both
    assert sql_withheld(conn, deferred, ["Walter Rivera", "rosa"], charged) == both
    # Naming the shared alias itself bridges both subjects it may mean.
    assert python_withheld(deferred, ["Grandpa"], charged) == both
    assert sql_withheld(conn, deferred, ["Grandpa"], charged) == both


def test_without_a_bridge_every_charged_subject_is_withheld(conn):
    deferred = [{"subject": "Walter Rivera", "aliases": ["Grandpa"]}]
    charged = [["Grandpa", "the clinic"], ["Walter Rivera"]]
    expected = [["Grandpa", "the clinic"], ["Walter Rivera"]]
    assert sql_withheld(conn, deferred, [], charged) == expected
    assert python_withheld(deferred, [], charged) == expected
