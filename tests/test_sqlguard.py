"""The SQL guard (exocortex.client.sqlguard) and the agents' `sql` entry point (exocortex.client.api.sql).

The guard is defence in depth: every rule is checked on the parsed statement, with
hostile inputs; the end-to-end tests run what it accepts as exo_reader, and show the
role boundary underneath it holds on its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.db import Database, cloned_database

from exocortex.client import api, sqlguard
from exocortex.client.api import Reader
from exocortex.client.sqlguard import Rejected, check

# What exo_reader sees in pg_proc for schema exo (api.sql loads it per call).
EXO_FUNCTIONS = frozenset(
    {
        "context_packet",
        "context_packet_json",
        "embed_query",
        "search",
        "search_messages",
        "search_report",
        "setting",
        "temporal_signal",
        "version",
    }
)

# Names that are columns where a qualified name may point (api.sql reads them from the catalog).
EXO_COLUMNS = frozenset(
    {
        "name",
        "description",
        "graph",
        "subject",
        "charged_chunks",
        "key",
        "value",
        "rank",
        "citation",
        "workspaces",
    }
)

ACCEPTED = [
    "select (w).name, w.description from exo.workspaces w",
    "select exo.workspaces.name from exo.workspaces",
    "select (e).key, e.value from exo.settings s, jsonb_each(case when jsonb_typeof(s.value) = 'object' then s.value else '{}' end) e",
    "select x.total from (select count(*) as total from exo.workspaces) x",
    "select w.to_jsonb from exo.workspaces w",
    "select * from exo.workspaces",
    "select subject, charged_chunks from exo.deferred_subjects",
    "select rank, citation from exo.search('rent', k => 3)",
    "select * from exo.search('rent')",
    "select * from EXO.search('rent', k => 2) with ordinality as s",
    'select * from "exo"."workspaces"',
    "with s as (select key, value from exo.settings where key like 'search.%') select key, value from s order by key",
    "with recursive t(n) as (select 1 union all select n + 1 from t where n < 3) select * from t",
    "with a as (select name from exo.workspaces), b as (select * from a) select * from b",
    "select w.name, count(d.subject) from exo.workspaces w left join exo.deferred_subjects d on true group by w.name",
    "select w.name, s.key from exo.workspaces w join exo.settings s on s.key = w.name",
    "select count(*), count(distinct name), min(name), max(name), string_agg(name, ',' order by name) from exo.workspaces",
    "select array_agg(name) filter (where name <> 'x'), jsonb_agg(name) from exo.workspaces",
    "select key, jsonb_typeof(value) from exo.settings where value ? 'a' or value @> '{}'::jsonb",
    "select e.key, e.value from exo.settings s, jsonb_each(case when jsonb_typeof(s.value) = 'object' then s.value else '{}' end) e",
    "select exo.version(), exo.setting('search.k')",
    "select exo.search_report('rent') -> 'stages'",
    "select * from exo.workspaces w, lateral exo.search(w.name, workspaces => array[w.name], k => 1) s",
    "select name from exo.workspaces union all select key from exo.settings",
    "select now(), current_date, extract(epoch from now()), date_trunc('day', now()) - interval '1 day'",
    "select lower(name), upper(name), length(name), left(name, 2), substr(name, 2), coalesce(description, '') from exo.workspaces",
    "select round(2.5), abs(-1), greatest(1, 2), least(1, 2), nullif(1, 1), 7 % 2, 2 ^ 3",
    "select row_number() over (order by name), lag(name) over (order by name) from exo.workspaces",
    "select name from exo.workspaces where name in (select key from exo.settings) or exists (select 1 from exo.quarantine)",
    "select x from unnest(array['a', 'b']) as u(x)",
    "select '1'::int, now()::date, cast(1 as text), '{}'::text[], null::jsonb",
    "select $$a; delete from exo.workspaces$$, E'it\\'s', 'back\\', 1 /* ; drop table x */ -- ; drop\n",
    "select name from exo.workspaces order by name desc limit 2 offset 1",
    "(select 1)",
    "select 1;",
]

REJECTED = [
    # syntax: empty, more than one statement, unparseable
    ("", "syntax"),
    ("   \n\t", "syntax"),
    ("-- only a comment", "syntax"),
    ("select 1; delete from exo.workspaces", "syntax"),
    ("select 1; /* hidden */ -- more\n drop table exo.workspaces", "syntax"),
    ("select 1 -- ;\n; delete from exo.workspaces", "syntax"),
    ("select 1 /* /* nested */ ; */; delete from exo.workspaces", "syntax"),
    ("select 'back\\'; delete from exo.workspaces; --'", "syntax"),
    ("select E'\\'; delete from exo.workspaces; --'; delete from exo.workspaces", "syntax"),
    ("select $a$ $$ ; $a$; delete from exo.workspaces", "syntax"),
    ("SELECT * FROM EXO.WORKSPACES; DELETE FROM EXO.WORKSPACES", "syntax"),
    ('select * from U&"pg\\005fcatalog".pg_class', "syntax"),
    ("select from where", "syntax"),
    ("select 'unterminated", "syntax"),
    # select_only
    ("insert into exo.settings values ('k', '1')", "select_only"),
    ("update exo.workspaces set description = 'x'", "select_only"),
    ("delete from exo.workspaces", "select_only"),
    ("merge into exo.settings using exo.workspaces on true when matched then delete", "select_only"),
    ("create table exo.mine (id int)", "select_only"),
    ("create view exo.mine as select 1", "select_only"),
    ("drop view exo.workspaces", "select_only"),
    ("alter view exo.workspaces rename to w", "select_only"),
    ("truncate exo.settings", "select_only"),
    ("copy exo.workspaces to '/tmp/x'", "select_only"),
    ("copy (select 1) to program 'id'", "select_only"),
    ("set role postgres", "select_only"),
    ("set statement_timeout = 0", "select_only"),
    ("reset all", "select_only"),
    ("show all", "select_only"),
    ("do $$ begin perform 1; end $$", "select_only"),
    ("call exo.version()", "select_only"),
    ("explain analyze select * from exo.workspaces", "select_only"),
    ("vacuum exo.workspaces", "select_only"),
    ("lock table exo.workspaces", "select_only"),
    ("listen x", "select_only"),
    ("begin", "select_only"),
    ("grant all on exo.workspaces to public", "select_only"),
    ("prepare p as select 1", "select_only"),
    ("values (1)", "select_only"),
    ("select * into exo.mine from exo.workspaces", "select_only"),
    ("select * into temporary mine from exo.workspaces", "select_only"),
    ("select * from exo.workspaces for update", "select_only"),
    ("select * from exo.workspaces for share", "select_only"),
    ("select * from exo.workspaces for no key update skip locked", "select_only"),
    ("select * from (select * from exo.workspaces for update) w", "select_only"),
    ("with x as (delete from exo.workspaces returning *) select * from x", "select_only"),
    ("with x as (insert into exo.settings values ('k', '1') returning *) select 1", "select_only"),
    ("with x as (update exo.workspaces set name = 'y' returning *) select * from x", "select_only"),
    # exo_objects_only: system catalogs, other schemas, unqualified names, quoting and case
    ("select * from pg_catalog.pg_authid", "exo_objects_only"),
    ('select * from "pg_catalog"."pg_class"', "exo_objects_only"),
    ("select * from pg_class", "exo_objects_only"),
    ("select * from pg_authid", "exo_objects_only"),
    ("table pg_authid", "exo_objects_only"),
    ("select * from information_schema.tables", "exo_objects_only"),
    ("select * from exo_private.settings", "exo_objects_only"),
    ("select * from exo_private.schema_migrations", "exo_objects_only"),
    ("select * from pgmq.q_jobs", "exo_objects_only"),
    ("select * from ag_catalog.ag_graph", "exo_objects_only"),
    ("select * from cron.job", "exo_objects_only"),
    ("select * from public.anything", "exo_objects_only"),
    ("select * from workspaces", "exo_objects_only"),
    ('select * from "EXO".workspaces', "exo_objects_only"),
    ('select * from "exo ".workspaces', "exo_objects_only"),
    ("select * from mydb.exo.workspaces", "exo_objects_only"),
    ("select * from exo.workspaces where name in (select rolname from pg_roles)", "exo_objects_only"),
    ("select (select rolpassword from pg_authid limit 1)", "exo_objects_only"),
    (
        "select * from exo.workspaces w, lateral (select * from pg_catalog.pg_stat_activity) a",
        "exo_objects_only",
    ),
    ("select * from exo.workspaces union select * from pg_catalog.pg_shadow", "exo_objects_only"),
    ("select * from exo.search((select string_agg(rolname, ',') from pg_roles))", "exo_objects_only"),
    # a CTE name is in scope only where Postgres scopes it
    ("with a as (select * from pg_class), pg_class as (select 1) select * from a", "exo_objects_only"),
    ("select * from (with pg_authid as (select 1) select * from pg_authid) x, pg_authid", "exo_objects_only"),
    (
        "with w as (select 1) select * from exo.workspaces union select * from (select * from pg_roles) r",
        "exo_objects_only",
    ),
    # function_not_allowed
    ("select pg_read_file('/etc/passwd')", "function_not_allowed"),
    ("select pg_catalog.pg_read_file('/etc/passwd')", "function_not_allowed"),
    ("select \"pg_read_file\"('/etc/passwd')", "function_not_allowed"),
    ('select "pg_catalog"."pg_read_binary_file"(\'x\')', "function_not_allowed"),
    ("select * from pg_ls_dir('.')", "function_not_allowed"),
    ("select lo_import('/etc/passwd')", "function_not_allowed"),
    ("select lo_export(1, '/tmp/x')", "function_not_allowed"),
    ("select dblink('host=x', 'select 1')", "function_not_allowed"),
    ("select * from dblink_exec('x', 'delete from exo.workspaces')", "function_not_allowed"),
    ("select pg_sleep(10)", "function_not_allowed"),
    ("select count(*) from exo.workspaces where pg_sleep(1) is not null", "function_not_allowed"),
    ("select set_config('statement_timeout', '0', false)", "function_not_allowed"),
    ("select current_setting('data_directory')", "function_not_allowed"),
    ("select pg_terminate_backend(1)", "function_not_allowed"),
    ("select pg_cancel_backend(1)", "function_not_allowed"),
    ("select txid_current()", "function_not_allowed"),
    ("select pg_advisory_lock(1)", "function_not_allowed"),
    ("select query_to_xml('select * from pg_authid', true, true, '')", "function_not_allowed"),
    ("select nextval('exo_private.documents_id_seq')", "function_not_allowed"),
    ("select to_regclass('pg_authid')", "function_not_allowed"),
    ("select exo_private.canonical_key('x')", "function_not_allowed"),
    ("select exo.canonical_key('x')", "function_not_allowed"),
    ("select search('rent')", "function_not_allowed"),
    ("select * from search('rent')", "function_not_allowed"),
    ("select * from exo_private.search('rent')", "function_not_allowed"),
    ("select * from exo.workspaces w, lateral pg_ls_dir(w.name) d", "function_not_allowed"),
    (
        "select * from exo.workspaces join lateral pg_catalog.pg_options_to_table(array['a=b']) on true",
        "function_not_allowed",
    ),
    ("select w.pg_read_file('x') from exo.workspaces w", "function_not_allowed"),
    ("select exo.search(pg_read_file('/etc/passwd'))", "function_not_allowed"),
    ("select xmlparse(document '<a/>')", "syntax"),  # special syntax sqlglot does not parse
    # attribute notation: w.f and (expr).f call f(w) when f is no column
    ("select (w).pg_column_size, w.pg_typeof from exo.workspaces w", "function_not_allowed"),
    ("select w.pg_typeof from exo.workspaces w", "function_not_allowed"),
    ("select (w).pg_column_size from exo.workspaces w", "function_not_allowed"),
    ("select ((w)).obj_description from exo.workspaces w", "function_not_allowed"),
    ("select (1::oid).lo_get", "function_not_allowed"),
    ("select (w.name).quote_ident from exo.workspaces w", "function_not_allowed"),
    ("select exo.workspaces.txid_current from exo.workspaces", "function_not_allowed"),
    ("select w.description.inet_client_addr from exo.workspaces w", "function_not_allowed"),
    # cast_not_allowed
    ("select 'pg_authid'::regclass", "cast_not_allowed"),
    ("select 'pg_authid'::pg_catalog.regclass", "cast_not_allowed"),
    ("select cast('pg_read_file' as regproc)", "cast_not_allowed"),
    ("select 'pg_catalog'::regnamespace", "cast_not_allowed"),
    ("select 'x'::\"regclass\"", "cast_not_allowed"),
    ("select 'int'::regtype", "cast_not_allowed"),
    ("select regclass 'pg_authid'", "cast_not_allowed"),
    ("select 16384::oid::regclass", "cast_not_allowed"),
    ("select null::exo_private.document_stage", "cast_not_allowed"),
]


@pytest.mark.parametrize("statement", ACCEPTED)
def test_accepted(statement):
    checked = check(statement, EXO_FUNCTIONS, EXO_COLUMNS)
    assert checked == check(checked, EXO_FUNCTIONS, EXO_COLUMNS), "the normalised statement is a fixed point"


@pytest.mark.parametrize(("statement", "rule"), REJECTED)
def test_rejected_by_rule(statement, rule):
    with pytest.raises(Rejected) as caught:
        check(statement, EXO_FUNCTIONS, EXO_COLUMNS)
    assert caught.value.rule == rule, str(caught.value)
    assert str(caught.value).startswith(f"rejected ({rule}): ")


def test_messages_say_which_rule_and_why():
    cases = {
        "select * from pg_catalog.pg_authid": "rejected (exo_objects_only): pg_catalog.pg_authid is not in schema exo",
        "select * from workspaces": "rejected (exo_objects_only): workspaces is not schema-qualified: only exo.<name> may be read",
        "select pg_read_file('x')": "rejected (function_not_allowed): pg_read_file is never allowed",
        "select search('x')": "rejected (function_not_allowed): search is unqualified; write exo.search",
        "select 'x'::regclass": "rejected (cast_not_allowed): regclass looks names up in the catalog",
        "select * from exo.workspaces for update": "rejected (select_only): FOR UPDATE/SHARE is not allowed, only SELECT",
        "select 1; select 2": "rejected (syntax): one statement only, got 2",
    }
    for statement, message in cases.items():
        with pytest.raises(Rejected) as caught:
            check(statement, EXO_FUNCTIONS)
        assert str(caught.value) == message


def test_exo_functions_come_from_the_caller():
    """An exo function is allowed by name only when the caller's list (the catalog) has it."""
    with pytest.raises(Rejected, match="function_not_allowed"):
        check("select * from exo.search('rent')", frozenset())
    assert check("select * from exo.search('rent')", {"search"}) == "SELECT * FROM exo.search('rent')"


def test_what_runs_is_the_parse_regenerated():
    """Comments are gone, dollar quotes are plain literals, names keep their spelling."""
    checked = check(
        "select $$x; delete$$ /* ; */, exo.version() -- drop\n from exo.workspaces", EXO_FUNCTIONS
    )
    assert checked == "SELECT 'x; delete', exo.version() FROM exo.workspaces"
    # sqlglot's own SEARCH and CURRENT_TIMESTAMP would change the call; the guard keeps them as written
    assert (
        check("select now(), exo.search('a', k => 1)", EXO_FUNCTIONS)
        == "SELECT now(), exo.search('a', k => 1)"
    )
    assert (
        check('select "lower"(name) from "exo"."workspaces"')
        == 'SELECT "lower"(name) FROM "exo"."workspaces"'
    )


def test_no_builtin_is_on_the_never_list():
    assert not [name for name in sqlguard.BUILTIN_FUNCTIONS if sqlguard.NEVER.match(name)]
    assert not EXO_FUNCTIONS & sqlguard.BUILTIN_FUNCTIONS


def test_limited_wraps_the_checked_query():
    assert sqlguard.limited("SELECT 1", 5) == "select * from (SELECT 1) as q limit 5"


# Pieces of hostile SQL, strung together at random.
PIECES = [
    "select", "*", "from", "exo.workspaces", "pg_authid", "pg_catalog.pg_class", ";", "--", "/*", "*/",
    "$$", "'", '"', "E'", "\\", "(", ")", ",", "delete", "insert into", "with", "as", "union",
    "pg_read_file('x')", "exo.search('a')", "::regclass", "into", "for update", "\n", "x", "1",
]  # fmt: skip
SQLISH = st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(SQLISH, st.text(max_size=60)))
def test_any_input_is_checked_or_rejected_never_crashes(statement):
    try:
        checked = check(statement, EXO_FUNCTIONS)
    except Rejected as exc:
        assert exc.rule in {
            "syntax",
            "select_only",
            "exo_objects_only",
            "function_not_allowed",
            "cast_not_allowed",
        }
        return
    assert check(checked, EXO_FUNCTIONS) == checked


# -- end to end, as exo_reader ------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded_db(cfg, template_db) -> Iterator[Database]:
    """One database for the module: every test here reads as exo_reader, which cannot write."""
    with cloned_database(cfg, template_db, "exo_sqlguard") as db:
        yield db


@pytest.fixture
def reader(guarded_db) -> Reader:
    return Reader(guarded_db.url("exo_reader"), statement_timeout_ms=10_000)


def test_rows_come_back(reader):
    result = api.sql(reader, "select name from exo.workspaces order by name")
    assert result == {
        "columns": ["name"],
        "rows": [["administrative"], ["creative"], ["personal"], ["technical"]],
        "truncated": False,
    }


def test_truncated_at_max_rows(reader):
    result = api.sql(reader, "select name from exo.workspaces order by name", max_rows=2)
    assert result["rows"] == [["administrative"], ["creative"]]
    assert result["truncated"] is True
    assert api.sql(reader, "select name from exo.workspaces", max_rows=4)["truncated"] is False
    # max_rows is clamped to 1..1000
    assert len(api.sql(reader, "select name from exo.workspaces", max_rows=0)["rows"]) == 1
    many = api.sql(reader, "select g from generate_series(1, 5000) g", max_rows=10_000)
    assert len(many["rows"]) == 1000 and many["truncated"] is True


def test_duplicate_column_names_survive(reader):
    result = api.sql(reader, "select 1 as a, 2 as a")
    assert result == {"columns": ["a", "a"], "rows": [[1, 2]], "truncated": False}


def test_the_exo_functions_are_read_from_the_catalog(reader):
    """exo_reader can read pg_proc: the allowlist is the exo schema's functions, as the server has them."""
    assert api.sql(reader, "select exo.version() ->> 'schema' as schema")["rows"][0][0]
    with reader.connect() as conn:
        names = {
            r["proname"]
            for r in conn.execute(
                "select p.proname from pg_catalog.pg_proc p"
                " join pg_catalog.pg_namespace n on n.oid = p.pronamespace where n.nspname = 'exo'"
            )
        }
    assert names >= {"search", "search_report", "setting", "version"}
    with pytest.raises(Rejected, match=r"exo\.canonical_key is not an exo API function"):
        api.sql(reader, "select exo.canonical_key('x')")


@pytest.mark.parametrize("statement", ACCEPTED)
def test_every_accepted_statement_runs_as_the_reader(reader, statement):
    """The regenerated text is Postgres the server accepts, within the reader's privileges."""
    result = api.sql(reader, statement, max_rows=5)
    assert len(result["rows"]) <= 5
    assert all(len(row) == len(result["columns"]) for row in result["rows"])


def test_rejected_before_the_database(reader):
    with pytest.raises(
        Rejected, match=r"^rejected \(exo_objects_only\): pg_catalog\.pg_authid is not in schema exo$"
    ):
        api.sql(reader, "select * from pg_catalog.pg_authid")
    with pytest.raises(Rejected, match=r"^rejected \(select_only\)"):
        api.sql(reader, "with x as (delete from exo.workspaces returning *) select * from x")


def test_the_role_is_the_boundary_under_the_guard(guarded_db, reader):
    """What the guard stops, the role stops too: the reader's session is read-only and has no write privilege."""
    with reader.connect() as conn:
        assert conn.execute("select current_setting('transaction_read_only') as ro").fetchone()["ro"] == "on"
        # statements the guard refuses, sent straight past it
        for statement in (
            "with x as (delete from exo.workspaces returning *) select * from x",
            "delete from exo.workspaces",
            "select name from exo.workspaces for update",
            "select * into mine from exo.settings",
            "select * from pg_catalog.pg_authid",
            "select pg_read_file('/etc/passwd')",
            "select exo_private.set_setting('x', '1', 'x')",
        ):
            with pytest.raises((psycopg.errors.ReadOnlySqlTransaction, psycopg.errors.InsufficientPrivilege)):
                conn.execute(statement)
        # and wrapped as api.sql wraps, a writable CTE is not even valid SQL
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute(
                sqlguard.limited("with x as (delete from exo.workspaces returning *) select * from x", 10)
            )
    with guarded_db.connect() as admin:
        assert admin.execute("select count(*) from exo.workspaces").fetchone()[0] == 4


def test_attribute_notation_is_a_call_and_is_refused(reader):
    with pytest.raises(
        Rejected, match=r"rejected \(function_not_allowed\): .*calls pg_(typeof|column_size)\(\.\.\.\)"
    ):
        api.sql(reader, "select (w).pg_column_size, w.pg_typeof from exo.workspaces w")
    shown = api.sql(reader, "select w.name, (w).description is not null as described from exo.workspaces w")
    assert len(shown["rows"]) == 4


def test_the_sql_tool_caps_bytes_and_time(reader, monkeypatch):
    wide = api.sql(reader, "select repeat('x', 100000) as x from generate_series(1, 10)")
    assert wide["truncated"] is True
    assert 1 <= len(wide["rows"]) <= api.SQL_MAX_BYTES // 100000
    monkeypatch.setattr(api, "SQL_TIMEOUT_MS", 200)
    with pytest.raises(psycopg.errors.QueryCanceled):
        api.sql(reader, "select count(*) from generate_series(1, 1000000000)")
    assert api.sql(reader, "select 1 as one")["rows"] == [[1]]  # the session's own timeout is back
