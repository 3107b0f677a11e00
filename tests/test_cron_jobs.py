"""More than one memory on one server: every exo database gets its pg_cron jobs, scheduled by
`exo migrate` in the database pg_cron serves; `exo doctor` checks them and finds the runtime's
Tesseract whichever database is used; `exo db down` leaves model servers that are not its own."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from click.testing import CliRunner

from exocortex.cli import main
from exocortex.db import admin_url, connect
from exocortex.ops import cron, doctor
from exocortex.ops.migrate import migrate
from exocortex.runtime import server

#: What every exo database wants; pg_cron's own database also keeps its run log short.
JOBS = {
    "exo-audit": ("41 4 * * *", "exo_writer"),
    "exo-capsules": ("*/10 * * * *", "exo_writer"),
    "exo-kb-decay": ("17 3 * * *", "exo_writer"),
    "exo-open-indexes": ("* * * * *", "exo_writer"),
    "exo-reader-watchdog": ("10 seconds", "exo_owner"),
    "exo-reband": ("17 3 * * *", "exo_writer"),
    "exo-train-router": ("*/10 * * * *", "exo_writer"),
}
CRON_JOBS = "select jobid, jobname, schedule, command, username, active from cron.job where database = %s order by jobname"


def _cron_db(cfg) -> str:
    with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
        return conn.execute("show cron.database_name").fetchone()[0]


def _jobs(cfg, database: str) -> list[tuple]:
    with connect(admin_url(cfg, _cron_db(cfg)), "exo-test", autocommit=True) as conn:
        return conn.execute(CRON_JOBS, (database,)).fetchall()


def test_a_second_database_gets_jobs_of_its_own_and_the_first_keeps_its(cfg, empty_db):
    cron_db = _cron_db(cfg)
    if cron_db == empty_db.name:
        pytest.skip("pg_cron serves the test's own database")
    main_before = _jobs(cfg, cron_db)
    said: list[str] = []

    result = migrate(cfg, empty_db.url(), said.append)

    jobs = _jobs(cfg, empty_db.name)
    assert {(name, schedule, username, active) for _id, name, schedule, _c, username, active in jobs} == {
        (f"{name}@{empty_db.name}", schedule, username, True) for name, (schedule, username) in JOBS.items()
    }
    assert sorted(result.jobs.jobs) == [name for _id, name, *_ in jobs]
    assert result.jobs.cron_database == cron_db
    assert (
        f"scheduled 7 pg_cron job(s) for {empty_db.name} in {cron_db}: exo-audit@{empty_db.name}" in said[-1]
    )
    assert _jobs(cfg, cron_db) == main_before  # pg_cron's own database: its jobs as they were

    # Again: the same jobs, updated in place (same ids), nothing unscheduled.
    again = migrate(cfg, empty_db.url())
    assert _jobs(cfg, empty_db.name) == jobs and again.jobs.unscheduled == []
    assert _jobs(cfg, cron_db) == main_before


def test_doctor_on_a_second_database_checks_its_jobs_and_finds_the_runtimes_tesseract(cfg, empty_db):
    migrate(cfg, empty_db.url())
    second = dataclasses.replace(cfg, database=empty_db.name)
    checks = {check.name: check for check in doctor.run(second)}
    assert checks["pg_cron jobs"].ok, checks["pg_cron jobs"].detail
    assert checks["pg_cron jobs"].detail.startswith(f"7 for {empty_db.name}, in ")

    with connect(admin_url(cfg, _cron_db(cfg)), "exo-test", autocommit=True) as conn:
        conn.execute(
            "select cron.unschedule(jobid) from cron.job where jobname = any(%s)",
            ([f"exo-reband@{empty_db.name}", f"exo-audit@{empty_db.name}"],),
        )
    with empty_db.connect() as conn:
        check = doctor.jobs_check(conn, empty_db.url())
    assert not check.ok
    assert f"2 of 7 missing for {empty_db.name}" in check.detail
    assert f"exo-audit@{empty_db.name}, exo-reband@{empty_db.name}" in check.detail
    assert check.fix == f"run `exo migrate` (EXO_DB_NAME={empty_db.name})"

    # EXO_DATABASE_URL at that database: the jobs are found alike, and so is the runtime's Tesseract.
    elsewhere = dataclasses.replace(cfg, database=empty_db.name, external_url=empty_db.url())
    migrate(elsewhere, empty_db.url())
    checks = {check.name: check for check in doctor.run(elsewhere)}
    assert checks["pg_cron jobs"].ok, checks["pg_cron jobs"].detail
    tesseract = checks["tesseract (OCR of scanned PDFs)"]
    assert tesseract.ok and str(cfg.runtime_root) in tesseract.detail, tesseract.detail


def test_jobs_of_a_database_that_is_gone_are_unscheduled(cfg, empty_db):
    migrate(cfg, empty_db.url())
    assert len(_jobs(cfg, empty_db.name)) == 7
    with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
        conn.execute(f'drop database "{empty_db.name}" with (force)')
    try:
        with connect(admin_url(cfg, _cron_db(cfg)), "exo-test", autocommit=True) as conn:
            scheduled = cron.schedule(conn, admin_url(cfg, _cron_db(cfg)))
        assert {f"{name}@{empty_db.name}" for name in JOBS} <= set(scheduled.unscheduled)
        assert _jobs(cfg, empty_db.name) == []
    finally:
        with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as conn:
            conn.execute(f'create database "{empty_db.name}"')  # for the fixture to retire


def test_db_down_with_another_server_leaves_the_model_servers(tmp_path, monkeypatch):
    # A process that `exo models up` would have started (its pid file, its command line).
    fake = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "exocortex.models.embedding_server"]
    )
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "embeddings.pid").write_text(f"{fake.pid}\n")
    monkeypatch.setenv("EXO_HOME", str(tmp_path))
    monkeypatch.setenv("EXO_DATABASE_URL", "postgresql://elsewhere.invalid/memory")
    monkeypatch.setattr(server, "down", lambda cfg: "database: left running by this test")
    try:
        out = CliRunner().invoke(main, ["db", "down"], catch_exceptions=False).output
        assert fake.poll() is None
    finally:
        fake.kill()
        fake.wait()
    assert "model servers: left running (EXO_DATABASE_URL is set" in " ".join(out.split())
    assert (tmp_path / "models" / "embeddings.pid").exists()


@pytest.mark.parametrize("command", [["migrate"], ["workspace", "list"], ["worker", "--once"]])
def test_a_database_that_does_not_exist_is_one_line_with_its_fix(cfg, monkeypatch, command):
    monkeypatch.setenv("EXO_HOME", str(cfg.home))
    monkeypatch.setenv("EXO_PG_PORT", str(cfg.port))
    monkeypatch.setenv("EXO_DB_NAME", "exo_test_no_such_database")
    monkeypatch.setenv("COLUMNS", "400")
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    said = " ".join(result.output.split())
    assert said.startswith("error: cannot reach the database: connection failed:"), said
    assert 'database "exo_test_no_such_database" does not exist' in said
    assert "(fix: `exo db up` starts the local runtime and makes its database" in said
