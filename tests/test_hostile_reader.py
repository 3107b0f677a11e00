"""The hostile reader: whatever the reader's session does, nothing stored changes and
nothing deferred comes back.

The reader connects as an agent would (the reader URL), then turns every setting it may
change against us: read-only off, a search_path through the internals, the API's own
custom settings. From there it calls every function it can execute with generated and
hand-written hostile arguments (Cypher and SQL injection, digit-glued keywords,
unqualified internal function names, casts, huge inputs). A snapshot of every table,
sequence, large object, role setting and catalog object, taken as the admin before and
after, must be identical; no output may carry the text of a withheld chunk unless the
call bridged its subject; errors are clear (a known SQLSTATE class, a short message).
docs/security.md lists the cases.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb
from support import SQL_DIR
from support.reader import reader_calls, reader_functions
from support.vault import vault_database

from exocortex.client import api, sqlguard
from exocortex.db import admin_url, connect, load_secrets
from exocortex.ingest import pipeline
from exocortex.ops import migrate

#: Text of the two chunks charged for Walter Rivera by frontmatter, and of nothing else.
WITHHELD_MARKERS = ("chapel on Brook Street", "undertaker, a gentle man")
#: A call whose arguments mention the subject may legitimately open it (a bridge).
SUBJECT_WORDS = re.compile(r"walter|grandpa|rivera", re.I)

#: What a refusal may look like: bad input (22), insufficient privilege (42501), a read-only
#: transaction (25006), a cancelled statement (57014), a program limit (54) and data
#: exceptions. Never an internal error (XX) or a connection failure (08).
ALLOWED_ERROR_CLASSES = ("22", "42", "25", "57014", "54", "2F", "38", "39", "P0", "3F", "0A")


def _custom_settings() -> list[str]:
    """Every custom setting (exo.*) the API reads or sets: a hostile session sets them all."""
    names = set()
    for path in SQL_DIR.glob("*.sql"):
        names |= set(re.findall(r"'(exo\.[a-z_][a-z0-9_.]*)'", path.read_text()))
    return sorted(n for n in names if n.count(".") == 1)


HOSTILE_SESSION = [
    "set default_transaction_read_only = off",
    "set search_path = exo_private, ag_catalog, pgmq, public, pg_catalog, exo",
    "set transform_null_equals = on",
    "set enable_indexscan = off",
    "set work_mem = '64MB'",
    "set statement_timeout = '30s'",  # the test's own guard against a hang
]


def hostile_connect(db) -> psycopg.Connection:
    conn = db.connect("exo_reader")
    for statement in HOSTILE_SESSION:
        conn.execute(statement)
    for name in _custom_settings():
        # set_config, not SET: the value is a bound parameter
        conn.execute("select pg_catalog.set_config(%s, %s, false)", (name, "{}"))
    assert conn.execute("show transaction_read_only").fetchone()[0] == "off"
    return conn


# -- the snapshot ---------------------------------------------------------------------------

SNAPSHOT_TABLES = """
select format('%I.%I', n.nspname, c.relname), c.relkind
from pg_catalog.pg_class c
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
where c.relkind in ('r', 'S', 'm')
  and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
  and n.nspname not like 'pg_temp%' and n.nspname not like 'pg_toast_temp%'
order by 1
"""

# The exo roles every database shares, and the login roles of this database's own profiles.
THIS_DATABASES_ROLES = (
    "rolname like 'exo\\_%' and rolname not like 'exo\\_user\\_%'"
    " or rolname in (select exo_private.profile_role(name) from exo_private.kb_profiles)"
)
CATALOG_STATE = [
    # objects anyone could have created, and every privilege and owner
    "select count(*), sum(hashtext(oid::regclass::text || relowner || coalesce(relacl::text, '')))"
    " from pg_catalog.pg_class",
    "select count(*), sum(hashtext(oid::regprocedure::text || proowner || coalesce(proacl::text, '')"
    " || prosecdef || coalesce(proconfig::text, '')))"
    " from pg_catalog.pg_proc",
    "select count(*), sum(hashtext(nspname || nspowner || coalesce(nspacl::text, ''))) from pg_catalog.pg_namespace",
    "select count(*) from pg_catalog.pg_largeobject_metadata",
    # the cluster-wide catalogs: this database's row and the roles of this database only (other
    # tests create and drop databases, and add profiles, whose login roles are cluster-wide)
    "select count(*), sum(hashtext(coalesce(setconfig::text, ''))) from pg_catalog.pg_db_role_setting"
    " where setdatabase = (select oid from pg_catalog.pg_database where datname = current_database())"
    f" or setdatabase = 0 and setrole in (select oid from pg_catalog.pg_roles where {THIS_DATABASES_ROLES})",
    "select count(*), sum(hashtext(rolname || rolconnlimit || rolcanlogin || rolsuper || coalesce(rolconfig::text, '')))"
    f" from pg_catalog.pg_roles where {THIS_DATABASES_ROLES}",
    "select datname || coalesce(datacl::text, '') from pg_catalog.pg_database where datname = current_database()",
    "select count(*) from pg_catalog.pg_policy",
    "select count(*) from pg_catalog.pg_trigger",
]


def snapshot(db) -> dict[str, tuple]:
    """Row counts, content checksums and xmin sums of every table, sequence states, and the
    catalog's objects, owners and privileges; taken as the admin."""
    state: dict[str, tuple] = {}
    with db.connect() as conn:
        for name, kind in conn.execute(SNAPSHOT_TABLES).fetchall():
            if kind == "S":
                query = sql.SQL("select last_value, is_called from {}")
            else:
                query = sql.SQL(
                    "select count(*), coalesce(sum(hashtextextended(t::text, 0)), 0),"
                    " coalesce(sum(t.xmin::text::bigint), 0) from {} t"
                )
            state[name] = tuple(conn.execute(query.format(sql.SQL(name))).fetchone())
        for i, query in enumerate(CATALOG_STATE):
            state[f"catalog {i}: {query[:60]}"] = tuple(conn.execute(query).fetchone())
    return state


def assert_unchanged(before: dict, after: dict) -> None:
    changed = {
        k: (before.get(k), after.get(k))
        for k in before.keys() | after.keys()
        if before.get(k) != after.get(k)
    }
    assert not changed, f"the reader changed: {changed}"


# -- the database -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vault(cfg, template_db) -> Iterator:
    with vault_database(cfg, template_db, "exo_hostile") as db:
        with db.connect() as conn:
            # Endpoints that answer nothing at once: model calls degrade, never hang.
            for key in ("models.embeddings", "models.rerank", "models.chat"):
                conn.execute(
                    'update exo_private.settings set value = value || \'{"url": "http://127.0.0.1:9/v1"}\''
                    " where key = %s and jsonb_typeof(value) = 'object'",
                    (key,),
                )
        yield db


@pytest.fixture(scope="module")
def graphs(vault) -> list[str]:
    with vault.connect() as conn:
        return [r[0] for r in conn.execute("select name from ag_catalog.ag_graph order by name")]


# -- the named reproductions (issue 10) ----------------------------------------------------

CYPHER_WRITES = [
    # unqualified internal functions, made to fit by AGE's casts
    "RETURN undefer_subject('Walter Rivera'::pg_text)",
    "RETURN `undefer_subject`('Walter Rivera'::pg_text)",
    "RETURN defer_subject('Mallory'::pg_text)",
    "RETURN forget_document(1::pg_bigint)",
    "RETURN clear_graph('personal'::pg_text)",
    "RETURN set_owner('Mallory'::pg_text)",
    "RETURN rebuild()",
    "RETURN remark_charged()",
    "RETURN set_setting('retrieval.stages'::pg_text, '[]'::pg_text)",
    "RETURN drop_graph('{graph}'::pg_text, true)",
    "RETURN create_vlabel('{graph}'::pg_text, 'Mine'::pg_text)",
    "RETURN exo_private.undefer_subject('Walter Rivera')",
    "RETURN pg_catalog.set_config('transaction_read_only', 'off', false)",
    "RETURN set_config('default_transaction_read_only'::pg_text, 'off'::pg_text, false)",
    "RETURN lo_from_bytea(0::pg_bigint, 'x'::pg_text)",
    "RETURN lo_create(0::pg_bigint)",
    "RETURN pg_advisory_lock(1::pg_bigint)",
    "RETURN pg_read_file('/etc/passwd'::pg_text)",
    "RETURN pg_sleep(60)",
    "RETURN pg_terminate_backend(1::pg_bigint)",
    # digit-glued keywords: AGE reads 1CREATE as 1 CREATE
    "MATCH (n) WITH n 1CREATE (m:Mine {name: 'x'}) RETURN m",
    "MATCH (n) WITH 1 AS x 1DELETE n RETURN x",
    "MATCH (n) WITH n 1SET n.name = 'changed' RETURN n",
    "WITH 1 AS x 1MERGE (m:Mine {name: 'x'}) RETURN m",
    "MATCH (n) WITH n 1REMOVE n.name RETURN n",
    "MATCH (n) WITH n 1DETACH DELETE n RETURN 1",
    # plain writes, and ways to hide them
    "CREATE (n:Person {name: 'Mallory'}) RETURN n",
    "MATCH (n) DETACH DELETE n RETURN 1",
    "MATCH (n) SET n.name = 'changed' RETURN n",
    "MERGE (n:Person {name: 'Mallory'}) RETURN n",
    "MATCH (n) REMOVE n.name RETURN n",
    "MATCH (n) RETURN n // \n CREATE (m) RETURN m",
    "MATCH (n) /* */ CREATE (m) RETURN m",
    "MATCH (n) RETURN 'it''s' + 'x' CREATE (m) RETURN m",
    'MATCH (n) RETURN "\\"" CREATE (m) RETURN m',
    "MATCH (`n`) cReAtE (m) RETURN m",
    "MATCH (n) RETURN n; MATCH (m) DETACH DELETE m RETURN 1",
    "RETURN 1 $$) as (v agtype); delete from exo_private.deferred_subjects; --",
    "RETURN 1 $exo_cypher$) as (v agtype); delete from exo_private.deferred_subjects; --",
    "CALL db.labels() YIELD label RETURN label",
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
    "UNWIND [1] AS x FOREACH (y IN [1] | CREATE (m)) RETURN x",
    "MATCH p = (a)-[*1..5]-(b) RETURN p",
]


@pytest.mark.parametrize("query", CYPHER_WRITES)
def test_cypher_cannot_write_or_escape(vault, graphs, query):
    before = snapshot(vault)
    workspace_graph = graphs[0] if graphs else "graph_personal"
    with hostile_connect(vault) as conn:
        for workspace in ("personal", "technical"):
            try:
                conn.execute(
                    "select * from exo.cypher(%s, %s)", (workspace, query.replace("{graph}", workspace_graph))
                )
            except psycopg.Error as exc:
                assert exc.sqlstate.startswith(ALLOWED_ERROR_CLASSES), f"{query!r}: {exc.sqlstate} {exc}"
    assert_unchanged(before, snapshot(vault))
    with vault.connect() as conn:
        assert conn.execute("select count(*) from exo_private.deferred_subjects").fetchone()[0] == 1


def test_the_undefer_reproduction_is_refused_and_search_still_withholds(vault):
    """The critical finding, step by step as reported: read-only off, then undefer through Cypher."""
    with hostile_connect(vault) as conn:
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(
                "select * from exo.cypher('personal', 'RETURN undefer_subject(''Walter Rivera''::pg_text)')"
            )
        assert refused.value.sqlstate in ("22023", "42501"), refused.value
        rows = conn.execute("select body from exo.search('grandpa funeral chapel', k => 25)").fetchall()
        assert not any(marker in r[0] for r in rows for marker in WITHHELD_MARKERS)
    with vault.connect() as conn:
        assert conn.execute("select subject from exo_private.deferred_subjects").fetchall() == [
            ("Walter Rivera",)
        ]


SQL_WRITES = [
    "insert into exo_private.deferred_subjects (subject) values ('x')",
    "delete from exo_private.deferred_subjects",
    "update exo_private.chunks set charged_subjects = '{}'",
    "select exo_private.undefer_subject('Walter Rivera')",
    "select exo_private.forget_document(1)",
    "select exo_private.clear_graph('personal')",
    "select exo_private.set_owner('Mallory')",
    "select exo_private.rebuild()",
    "select pg_catalog.lo_create(0)",
    "select pg_catalog.lo_from_bytea(0, 'x')",
    "select pg_catalog.lo_import('/etc/passwd')",
    "select pg_catalog.pg_advisory_lock(1)",
    "select pg_catalog.pg_try_advisory_lock(1)",
    "select * from pgmq.send('embed', '{}'::jsonb)",
    "select ag_catalog.drop_graph('graph_personal', true)",
    "select nextval('exo_private.chunks_id_seq')",
    "create temporary table mine (id int)",
    "create table mine (id int)",
    "alter role exo_reader connection limit -1",
    "select pg_catalog.set_config('exo.hidden_vertices', '{}', false); select 1",
    "copy (select 1) to '/tmp/exo-hostile'",
    "select * from cron.schedule('* * * * *', 'delete from exo_private.deferred_subjects')",
]


@pytest.mark.parametrize("statement", SQL_WRITES)
def test_reader_sql_cannot_write_whatever_its_settings(vault, statement):
    before = snapshot(vault)
    with hostile_connect(vault) as conn:
        try:
            conn.execute(statement)
        except psycopg.Error as exc:
            assert exc.sqlstate.startswith(ALLOWED_ERROR_CLASSES), f"{statement!r}: {exc.sqlstate} {exc}"
    assert_unchanged(before, snapshot(vault))


def test_a_reader_may_set_its_own_defaults_gains_nothing_and_migrate_puts_them_back(vault):
    """PostgreSQL lets every role set its own session defaults (no privilege governs it), so a
    reader can write them: that loosens nothing (a new session still cannot write, privileges are
    the boundary; the watchdog still ends a statement it let run), and `exo migrate` restores
    exactly the reader's defaults, here and in the database."""
    before = snapshot(vault)
    with hostile_connect(vault) as conn:
        name = conn.execute("select current_database()").fetchone()[0]
        conn.execute("alter role exo_reader set statement_timeout = 0")
        conn.execute(
            sql.SQL("alter role exo_reader in database {} set work_mem = '1GB'").format(sql.Identifier(name))
        )
        conn.execute(
            sql.SQL("alter role exo_reader in database {} set default_transaction_read_only = off").format(
                sql.Identifier(name)
            )
        )
    with vault.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "off"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("delete from exo_private.deferred_subjects")
    with vault.connect() as admin:
        migrate.ensure_roles(admin, load_secrets(vault.cfg))
        migrate.set_reader_limits(admin)
    assert_unchanged(before, snapshot(vault))
    with vault.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone()[0] == "on"
        assert conn.execute("show statement_timeout").fetchone()[0] != "0"


# -- every executable function, hostile arguments ------------------------------------------

HOSTILE_TEXT = [
    None,
    "",
    " ",
    "Walter Rivera",
    "x" * 1_000_000,
    "'; delete from exo_private.deferred_subjects; --",
    "$$; delete from exo_private.deferred_subjects; $$",
    "x') as (v agtype); delete from exo_private.deferred_subjects; --",
    "RETURN undefer_subject('Walter Rivera'::pg_text)",
    "MATCH (n) WITH n 1CREATE (m) RETURN m",
    "MATCH (n) RETURN n.name",
    "MATCH (w)-[r]-(p) WHERE w.key = 'walter rivera' RETURN {rel: type(r), other: p.name}",
    "MATCH (n) WHERE n.key = 'arevir retlaw' RETURN n",
    "1; select pg_sleep(30)",
    "\\u0027 OR 1=1",
    "\u202eavirer retlaw\u202c",
    "%_\\",
    "12345678901234567890",
    "-1",
    "0",
]
HOSTILE_VALUES = {
    "text": HOSTILE_TEXT,
    "integer": [None, -1, 0, 2_147_483_647, -2_147_483_648],
    "bigint": [None, -1, 0, 9_223_372_036_854_775_807],
    "boolean": [None, True, False],
    "text[]": [None, [], [None], ["x" * 100_000], ["a"] * 10_000, ["'; drop table x; --"], ["Walter Rivera"]],
    "date": [None, "infinity", "-infinity", "0001-01-01"],
    "timestamp with time zone": [None, "infinity", "-infinity", "0001-01-01"],
    "double precision[]": [None, [], [float("nan")] * 384, [1e308] * 384, [0.0] * 20_000],
    "jsonb": [None, "{}", "[" * 5000 + "]" * 5000],
    "real": [None, float("nan"), -1.0],
}


def test_every_reader_function_with_hostile_arguments(vault):
    functions = reader_functions(vault)
    api = {f[2] for f in functions if f[0] == "exo"}
    assert "exo.cypher(text,text,integer,text[])" in api or any(s.startswith("exo.cypher(") for s in api)
    # Only the API and what its views need: nothing else is the reader's to call.
    assert {f[0] for f in functions} <= {"exo", "exo_private"}, {f[2] for f in functions if f[0] != "exo"}
    before = snapshot(vault)
    calls = failures = 0
    leaks, bad_errors = [], []
    with hostile_connect(vault) as conn:
        for signature, statement, args in reader_calls(functions, HOSTILE_VALUES):
            calls += 1
            try:
                rows = conn.execute(statement, args).fetchall()
            except psycopg.Error as exc:
                failures += 1
                message = str(exc)
                if not (exc.sqlstate or "").startswith(ALLOWED_ERROR_CLASSES) or len(message) > 2000:
                    bad_errors.append((signature, _short(args), exc.sqlstate, message[:300]))
                if conn.broken:
                    conn = hostile_connect(vault)
                continue
            if not any(SUBJECT_WORDS.search(str(a)) for a in args):
                text = str(rows)
                leaks += [(signature, _short(args), m) for m in WITHHELD_MARKERS if m in text]
    assert calls > 300
    assert not bad_errors, bad_errors[:10]
    assert not leaks, leaks[:10]
    assert_unchanged(before, snapshot(vault))


def _short(args: list) -> list:
    return [a[:60] + "..." if isinstance(a, str) and len(a) > 60 else a for a in args]


# -- limits the reader's session cannot lift -----------------------------------------------


def test_watchdog_cancels_a_reader_that_lifted_its_own_timeouts(db):
    """statement_timeout is only a role default: a reader sets it to 0 and sleeps. The watchdog
    (pg_cron every 10 s in production; called here directly) cancels it past
    reader.max_statement_s, and ends a transaction left idle past its own limit."""
    with db.connect() as admin:
        admin.execute("select exo_private.set_setting('reader.max_statement_s', '1')")
        admin.execute("select exo_private.set_setting('reader.max_idle_in_transaction_s', '1')")
    with db.connect("exo_reader") as runaway, db.connect("exo_reader", autocommit=False) as idle:
        runaway.execute("set statement_timeout = 0")
        idle.execute("set idle_in_transaction_session_timeout = 0")
        idle.execute("select 1")  # a transaction is open, and left idle
        runaway_pid, idle_pid = runaway.info.backend_pid, idle.info.backend_pid
        outcome: list[BaseException] = []

        def sleep() -> None:
            try:
                runaway.execute("select pg_catalog.pg_sleep(60)")
            except psycopg.Error as exc:
                outcome.append(exc)

        thread = threading.Thread(target=sleep)
        thread.start()
        time.sleep(2.5)
        with db.connect() as admin:
            signalled = admin.execute(
                "select pid, action from exo_private.stop_runaway_readers() where pid = any(%s) order by action",
                ([runaway_pid, idle_pid],),
            ).fetchall()
        thread.join(10)
        assert not thread.is_alive()
        assert signalled == [(runaway_pid, "cancel"), (idle_pid, "terminate")]
        assert isinstance(outcome[0], psycopg.errors.QueryCanceled)
        with pytest.raises(psycopg.OperationalError):
            idle.execute("select 1")


def test_watchdog_is_scheduled_where_pg_cron_runs(cfg):
    """The job exists in the database pg_cron serves (the runtime's own), as the owner."""
    with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
        cron_db = conn.execute("select current_setting('cron.database_name')").fetchone()[0]
    try:
        with connect(admin_url(cfg, cron_db), "exo-test", autocommit=True) as conn:
            jobs = conn.execute(
                "select schedule, username from cron.job where jobname = 'exo-reader-watchdog'"
            ).fetchall()
    except psycopg.OperationalError:
        pytest.skip(f"pg_cron's database {cron_db} is not migrated on this server")
    assert jobs == [("10 seconds", "exo_owner")]


# -- the named reproductions (issue 27) ------------------------------------------------------

#: The finding's note: a deferred subject's facts in frontmatter, about his death.
WALTER_NOTE = """---
title: Grandad
date: 2017-03-19
workspace: personal
subject: Walter Rivera
died: 19 March 2017, St Brigid's hospice
cause_of_death: heart failure
---
He was peaceful at the end. The nurses were kind to us.
"""


@pytest.fixture
def facts_db(cfg, db, tmp_path):
    (tmp_path / "grandad.md").write_text(WALTER_NOTE)
    with db.connect() as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera', array['Grandpa Walter', 'Grandpa'])")
        conn.execute(
            "select exo_private.observe(%s)",
            (
                '[{"subject": "Grandpa Walter", "attribute": "hospital", "value": "St Brigid\'s",'
                ' "workspace": "personal", "observed_at": "2017-03-01", "source": "agent"}]',
            ),
        )
    pipeline.ingest(cfg, tmp_path, dbname=db.name)
    return db


def test_facts_of_a_deferred_subject_are_withheld_with_a_hint_whatever_their_sources(facts_db):
    with hostile_connect(facts_db) as conn:
        for statement in (
            "select to_jsonb(f) from exo.facts('Walter Rivera') f",
            "select to_jsonb(f) from exo.facts('Grandpa Walter') f",
            "select to_jsonb(f) from exo.facts_search('hospice died heart St Brigid') f",
            "select to_jsonb(f) from exo.fact_history('Walter Rivera', 'died') f",
            "select exo.context_packet_json('When did Walter Rivera die?', 800)",
            "select exo.search_json('hospice nurses')",
        ):
            answer = str(conn.execute(statement).fetchall())
            assert "hospice" not in answer.replace("'hospice nurses'", "") and "heart failure" not in answer
            assert "St Brigid" not in answer, (statement, answer)
        (hint,) = [r[0] for r in conn.execute("select withheld from exo.facts('Walter Rivera')")]
        # his own facts under any of his names, whatever is asked: died, cause_of_death, hospital
        assert hint["subject"] == "Walter Rivera" and hint["facts"] == 3
        bridged = {
            r[0]
            for subject in ("Walter Rivera", "Grandpa Walter")
            for r in conn.execute("select value from exo.facts(%s, bridge => array['Grandpa'])", (subject,))
        }
        assert bridged >= {"heart failure", "St Brigid's", "19 March 2017, St Brigid's hospice"}


def _profile_pinned_the_charged_documents(vault, who: str) -> None:
    """The finding's profile: it pinned every document charged for Walter Rivera."""
    with vault.connect() as admin:
        charged = [r[0] for r in admin.execute(
            "select distinct document_id from exo_private.chunks where charged_subjects <> '{}'")]  # fmt: skip
        admin.execute("select exo_private.kb_add_profile(%s) where not exists "
                      "(select 1 from exo_private.kb_profiles where name = %s)", (who, who))  # fmt: skip
        for doc in charged:
            admin.execute("select exo_private.kb_write(%s, 'force_pin', %s)", (who, [doc]))


def test_reports_are_no_oracles_of_withheld_words(vault):
    """With a profile that pinned the charged documents, the personal stage's hits and the
    hints are the same for a word those documents hold and one they do not."""
    _profile_pinned_the_charged_documents(vault, "oracle")
    with vault.connect_profile("oracle") as session:
        reports = {
            word: session.execute("select exo.search_report(%s, k => 5)", (word,)).fetchone()[0]
            for word in ("hospice", "xylophone", "undertaker")
        }
    for report in reports.values():
        assert report["personal"]["hits"] == [] and report["personal"]["saved"] > 0
    hints = [r["hints"] for r in reports.values()]
    assert hints[0] == hints[1] == hints[2] != []


def test_a_profile_session_as_mcp_connects_reaches_no_other_profile(vault):
    """`exo mcp --profile bob`: the sql tool and every kb tool are bob's session, so alice's
    saved text, keys and documents are not there to read or change; the plain reader sees none."""
    with vault.connect() as admin:
        admin.execute("select exo_private.kb_add_profile('alice') where not exists "
                      "(select 1 from exo_private.kb_profiles where name = 'alice')")  # fmt: skip
    with vault.connect_profile("alice") as alice, alice.transaction():
        alice.execute("set transaction read write")
        alice.execute(
            "select exo.kb_outside_retrieve('x', %s)",
            (Jsonb([{"key": "alice-diary", "title": "Alice's diary", "text": "alice's secret text"}]),),
        )
        alice.execute("select exo.kb_force_pin(1)")
    bob_url = vault.profile_url("bob")
    probes = [
        "select * from exo.kb_items()",
        "select * from exo.kb_outside_items()",
        "select exo.search_json('secret', k => 3)",
        "select exo.kb_outside_retrieve('secret', '[]')",
        "select exo.profile()",
    ]
    with psycopg.connect(bob_url) as bob:
        answers = str([bob.execute(p).fetchall() for p in probes])
        assert bob.execute("select exo.profile()").fetchone() == ("bob",)
        for hostile in (
            "select exo.kb_items('alice')",
            "select exo.kb_force_pin('alice', 1)",
            "select exo.search_json('x', profile => 'alice')",
            "select * from exo_private.kb_outside_passages",
        ):
            with pytest.raises(psycopg.Error) as raised, bob.transaction():
                bob.execute(hostile)
            assert raised.value.sqlstate in ("42883", "42501"), (hostile, raised.value)
    assert "alice" not in answers.lower() and "secret text" not in answers
    with (
        vault.connect("exo_reader") as reader,
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="this session has no profile"),
    ):
        reader.execute("select * from exo.kb_outside_items()")


def test_one_reader_query_cannot_hold_gigabytes_through_the_sql_tool(vault):
    reader = api.Reader(vault.url("exo_reader"))
    statement = (
        "select length(string_agg(repeat('x',1000),'')) a, length(string_agg(repeat('y',1000),'')) b "
        "from generate_series(1,900000)"
    )
    began = time.monotonic()
    with pytest.raises(psycopg.errors.OutOfMemory):
        api.sql(reader, statement)
    assert time.monotonic() - began < 10
    assert api.sql(reader, "select count(*) as n from exo.workspaces")["rows"] == [[4]]


def test_attribute_notation_is_refused_by_the_sql_gate(vault):
    with pytest.raises(sqlguard.Rejected, match="function_not_allowed"):
        api.sql(
            api.Reader(vault.url("exo_reader")),
            "select (w).pg_column_size, w.pg_typeof from exo.workspaces w",
        )


def test_recording_is_best_effort_and_no_user_waits_on_another(vault):
    """One session of alice's holds her rows in an idle read-write transaction (kb_thumbs_up):
    bob's recording search is not blocked at all (his rows are his), and another session of
    alice's answers within kb.lock_timeout, saying it did not record."""
    with vault.connect() as admin:
        admin.execute("select exo_private.kb_add_profile('carol') where not exists "
                      "(select 1 from exo_private.kb_profiles where name = 'carol')")  # fmt: skip
    holder = vault.connect_profile("carol", autocommit=False)
    try:
        holder.execute("set transaction read write")
        holder.execute("select exo.kb_thumbs_up(1)")  # idle in transaction, her profile's row locked
        for who, recorded in (("bob", True), ("carol", False)):
            with vault.connect_profile(who) as session, session.transaction():
                session.execute("set transaction read write")
                began = time.monotonic()
                found = session.execute("select exo.search_json('rent', k => 3)").fetchone()[0]
                assert time.monotonic() - began < 5
            assert found["results"] and found["report"]["personal"]["recorded"] is recorded, (who, found)
            if not recorded:
                assert "kb.lock_timeout" in found["report"]["personal"]["why"]
    finally:
        holder.rollback()
        holder.close()


def test_the_outside_document_path_cannot_flood(vault):
    """The finding's flood: 10 calls in seconds, each recording 200 passages of 8,000 characters
    of 100 documents (16 MB and 2,000 passages to embed). The minute's caps let the first call
    through (1.6 MB, 200 passages) and refuse the rest, reported, the answers still given; what a
    profile keeps in all is bounded too."""
    with vault.connect() as admin:
        admin.execute("select exo_private.kb_add_profile('flood') where not exists "
                      "(select 1 from exo_private.kb_profiles where name = 'flood')")  # fmt: skip
        queued = "select count(*) from pgmq.q_embed"
        before = admin.execute(queued).fetchone()[0]
        found = []
        with vault.connect_profile("flood") as session:
            for n in range(10):
                passages = [
                    {"key": f"k{n}-{i % 100}", "title": None, "text": f"{n} {i} " + "x" * 8000}
                    for i in range(200)
                ]
                with session.transaction():
                    session.execute("set transaction read write")
                    call = session.execute("select exo.kb_outside_retrieve('x', %s, 100)", (Jsonb(passages),))
                    found.append(call.fetchone()[0])
        personal = [f["report"]["personal"] for f in found]
        assert [p["recorded"] for p in personal] == [True] + [False] * 9
        assert all(len(f["results"]) == 100 for f in found)
        assert "kb.write_bytes_per_minute" in personal[1]["why"]
        assert admin.execute(queued).fetchone()[0] == before + 100  # one embed message a new document
        stored = admin.execute("select stored_bytes from exo_private.kb_profiles where name = 'flood'")
        assert stored.fetchone()[0] == 200 * 8000  # a passage keeps its first 8,000 characters
        admin.execute("select exo_private.set_setting('kb.stored_bytes', '1000000')")
        try:
            with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="kb.stored_bytes"):
                admin.execute(
                    "select exo_private.kb_outside_write('flood', 'use', array['more'], %s, now() + interval '2 min')",
                    (Jsonb([{"key": "more", "title": None, "text": "z" * 100}]),),
                )
        finally:
            admin.execute("select exo_private.set_setting('kb.stored_bytes', '50000000')")
