"""exo_private.stage_parameters, the one description of the stages' parameters: every stage's
query uses each of its parameters at the position the description gives, and names no other."""

from __future__ import annotations

import re

import psycopg
import pytest

STAGES = ["identifier", "lexical", "dated", "entity", "document", "graph", "path", "semantic", "participant",
          "personal", "personal_keyword", "capsules"]  # fmt: skip


@pytest.mark.parametrize("released", [False, True])
def test_each_stage_uses_every_parameter_the_description_gives_it_and_no_other(template_db, released):
    with template_db.connect() as conn:
        described = {}
        for stage, position, name in conn.execute(
            'select stage, "position", name from exo_private.stage_parameters() order by 1, 2'
        ):
            described.setdefault(stage, []).append((position, name))
        assert sorted(described) == sorted(STAGES)
        for stage, parameters in described.items():
            assert [p for p, _name in parameters] == list(range(1, len(parameters) + 1)), stage
            assert [n for _p, n in parameters][1:5] == ["bands", "as_of", "row_limit", "released"], stage
            (text,) = conn.execute(
                "select exo_private.stage_sql(%s, 'technical', 1, 384, %s)", (stage, released)
            ).fetchone()
            used = {int(n) for n in re.findall(r"\$(\d+)(?!\d)", text)}
            # released (5) reads what a search releases: one that releases nothing reads no charged chunk
            assert used | ({5} if not released else set()) == set(range(1, len(parameters) + 1)), stage
            assert not re.search(r"[{][a-z_]+[}]", text), stage


def test_a_stage_query_naming_an_unknown_parameter_is_refused(template_db):
    with template_db.connect() as conn:
        assert conn.execute("select exo_private.bind_stage('lexical', 'limit {row_limit}')").fetchone() == (
            "limit $4",
        )
        with pytest.raises(
            psycopg.errors.RaiseException, match=r"stage lexical names a parameter .*\{depth\}"
        ):
            conn.execute("select exo_private.bind_stage('lexical', 'limit {depth}')")
        with pytest.raises(psycopg.errors.RaiseException, match="unknown retrieval stage nope"):
            conn.execute("select exo_private.stage_sql('nope', 'technical')")
