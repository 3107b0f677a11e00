"""`exo lint-sql`: plpgsql_check over every PL/pgSQL function of the exo schemas."""

from __future__ import annotations

from exocortex.config import Config
from exocortex.db import admin_url, connect
from exocortex.ops.migrate import scratch_database

# Trigger functions are checked against each table they are attached to, with its transition
# tables (`referencing old table as ...`) named. Performance
# warnings are off: they misread functions that run DDL through EXECUTE as STABLE.
CHECKS = """
select p.oid::regprocedure::text as function, c.message
from pg_proc p
join pg_namespace n on n.oid = p.pronamespace
join pg_language l on l.oid = p.prolang
left join pg_trigger t on t.tgfoid = p.oid and not t.tgisinternal
cross join lateral plpgsql_check_function_tb(
    p.oid, coalesce(t.tgrelid, 0), fatal_errors => false,
    extra_warnings => true, performance_warnings => false,
    oldtable => t.tgoldtable, newtable => t.tgnewtable
) c
where l.lanname = 'plpgsql'
  and n.nspname in ('exo', 'exo_private')
  and (p.prorettype <> 'trigger'::regtype or t.tgrelid is not null)
order by 1, c.lineno
"""


def lint(cfg: Config) -> list[tuple[str, str]]:
    """(function, message) for every problem plpgsql_check finds."""
    with (
        scratch_database(cfg, "lint") as name,
        connect(admin_url(cfg, name), "exo-lint", autocommit=True) as conn,
    ):
        conn.execute("create extension plpgsql_check")
        return [(f, m) for f, m in conn.execute(CHECKS).fetchall()]
