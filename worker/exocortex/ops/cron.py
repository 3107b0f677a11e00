"""pg_cron jobs for every exo database of a server.

pg_cron runs in one database (cron.database_name) and starts each job in the database named
by its row of cron.job. An exo database declares the jobs it wants in exo_private.cron_jobs
(sql/005_cron_jobs.sql); `exo migrate` schedules them from pg_cron's database with
cron.schedule_in_database, for the database it migrates. A job keeps its bare name (exo-reband)
for the database pg_cron serves and is named NAME@DATABASE for any other, since names are
unique in cron.job; scheduling again updates the job in place, and a job the database no
longer declares, or one whose database is gone, is unscheduled.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import make_conninfo

from exocortex.db import connect

#: The jobs of one database in cron.job: ours are named exo-... (NAME@DATABASE elsewhere).
JOBS_OF = "select jobid, jobname from cron.job where database = %s and jobname like 'exo-%%' order by jobname"
#: Jobs for a database that no longer exists (dropped without `exo db` knowing).
ORPHANS = """
select j.jobid, j.jobname from cron.job j
where j.jobname like 'exo-%@%'
  and not exists (select 1 from pg_catalog.pg_database d where d.datname = j.database)
order by j.jobname
"""
UNSCHEDULE = "select cron.unschedule(j.jobid) from cron.job j where j.jobid = %s"


class CronProblem(Exception):
    """The jobs cannot be scheduled or checked; the message says why and what to do."""


@dataclass
class Scheduled:
    database: str
    cron_database: str | None
    """cron.database_name; None when pg_cron is not loaded (nothing is scheduled)."""
    jobs: list[str] = field(default_factory=list)
    unscheduled: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if self.cron_database is None:
            return f"pg_cron is not loaded on this server: no jobs scheduled for {self.database}"
        text = (
            f"scheduled {len(self.jobs)} pg_cron job(s) for {self.database} in {self.cron_database}: "
            + ", ".join(self.jobs)
        )
        if self.unscheduled:
            text += f"; unscheduled {', '.join(self.unscheduled)}"
        return text


def job_name(name: str, database: str, cron_database: str) -> str:
    """A job's name in cron.job: bare for the database pg_cron serves, NAME@DATABASE otherwise."""
    return name if database == cron_database else f"{name}@{database}"


def cron_database(conn: psycopg.Connection) -> str | None:
    return conn.execute("select current_setting('cron.database_name', true)").fetchone()[0]


def wanted(conn: psycopg.Connection, cron_db: str) -> list[tuple[str, str, str, str]]:
    """This database's declared jobs, (name, schedule, command, username), less those only for
    pg_cron's database when it is another; none before migration 0078."""
    if conn.execute("select to_regclass('exo_private.cron_jobs')").fetchone()[0] is None:
        return []
    return conn.execute(
        "select name, schedule, command, username from exo_private.cron_jobs "
        "where not cron_database_only or current_database() = %s order by name",
        (cron_db,),
    ).fetchall()


@contextmanager
def cron_connection(conn: psycopg.Connection, url: str, cron_db: str) -> Iterator[psycopg.Connection]:
    """A connection to pg_cron's database: `conn` itself when it is there, else the same server
    and role as `url` on that database."""
    if conn.execute("select current_database()").fetchone()[0] == cron_db:
        yield conn
        return
    try:
        other = connect(make_conninfo(url, dbname=cron_db), "exo-cron", autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise CronProblem(
            f"pg_cron runs in database {cron_db!r} (cron.database_name), which cannot be reached: "
            f"{str(exc).strip()}; create that database (`exo db up` with EXO_DB_NAME={cron_db}) "
            f"or point cron.database_name at an existing one, then run `exo migrate` again"
        ) from None
    with other:
        yield other


def _has_cron(conn: psycopg.Connection) -> bool:
    return (
        conn.execute("select 1 from pg_catalog.pg_extension where extname = 'pg_cron'").fetchone() is not None
    )


def schedule(conn: psycopg.Connection, url: str) -> Scheduled:
    """Schedule the jobs the database of `conn` declares, in pg_cron's database (reached with the
    admin `url`), and unschedule the ones it no longer declares and those of dropped databases."""
    database = conn.execute("select current_database()").fetchone()[0]
    cron_db = cron_database(conn)
    result = Scheduled(database, cron_db)
    if cron_db is None:
        return result
    jobs = wanted(conn, cron_db)
    with cron_connection(conn, url, cron_db) as cron:
        if not _has_cron(cron):
            cron.execute("create extension if not exists pg_cron")
        names = []
        for name, schedule_text, command, username in jobs:
            named = job_name(name, database, cron_db)
            cron.execute(
                "select cron.schedule_in_database(%s, %s, %s, %s, %s)",
                (named, schedule_text, command, database, username),
            )
            names.append(named)
        result.jobs = names
        stale = [(i, n) for i, n in cron.execute(JOBS_OF, (database,)).fetchall() if n not in names]
        for jobid, name in [*stale, *cron.execute(ORPHANS).fetchall()]:
            cron.execute(UNSCHEDULE, (jobid,))
            result.unscheduled.append(name)
    return result


def missing(conn: psycopg.Connection, url: str) -> tuple[str | None, list[str], list[str]]:
    """(pg_cron's database, the jobs this database declares as named in cron.job, those of them
    not scheduled there for this database, or inactive)."""
    database = conn.execute("select current_database()").fetchone()[0]
    cron_db = cron_database(conn)
    if cron_db is None:
        return None, [], []
    names = [job_name(name, database, cron_db) for name, *_ in wanted(conn, cron_db)]
    with cron_connection(conn, url, cron_db) as cron:
        if not _has_cron(cron):
            return cron_db, names, names
        present = {
            row[0]
            for row in cron.execute(
                "select jobname from cron.job where database = %s and active and jobname = any(%s)",
                (database, names),
            )
        }
    return cron_db, names, [n for n in names if n not in present]


def unschedule_database(url: str, database: str) -> list[str]:
    """Unschedule every exo job of `database` (one about to be dropped); `url` is an admin URL of
    any database of the server. Returns the names unscheduled."""
    with connect(url, "exo-cron", autocommit=True) as conn:
        cron_db = cron_database(conn)
        if cron_db is None:
            return []
        with cron_connection(conn, url, cron_db) as cron:
            if not _has_cron(cron):
                return []
            jobs = cron.execute(JOBS_OF, (database,)).fetchall()
            for jobid, _name in jobs:
                cron.execute(UNSCHEDULE, (jobid,))
    return [name for _jobid, name in jobs]
