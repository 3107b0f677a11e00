"""plpgsql_check over the PL/pgSQL functions: the real schema is clean, a planted bug is found."""

from exocortex.ops import lint


def test_sql_functions_pass_plpgsql_check(cfg):
    assert lint.lint(cfg) == []


def test_lint_query_finds_a_planted_bug(db):
    with db.connect() as conn:
        conn.execute("create extension plpgsql_check")
        conn.execute(
            """create function exo_private.buggy() returns int language plpgsql as $$
               begin return (select no_such_column from exo_private.workspaces limit 1); end $$"""
        )
        problems = conn.execute(lint.CHECKS).fetchall()
    assert [(f, m) for f, m in problems if "no_such_column" in m] == [
        ("exo_private.buggy()", 'column "no_such_column" does not exist')
    ]
