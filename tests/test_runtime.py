"""The runtime: provisioning errors, idempotence, data surviving down/up, external servers."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from support import REPO_ROOT

from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.ops import doctor as doctor_module
from exocortex.ops.cron import unschedule_database
from exocortex.runtime import local, server
from exocortex.runtime.local import RuntimeProblem
from exocortex.runtime.packages import read_packages

EXO = [sys.executable, "-m", "exocortex.cli"]

# It stops and starts the suite's server, or checks what the whole run left: never beside other
# tests (make test-fast runs the serial ones alone, after the rest).
pytestmark = pytest.mark.serial


def _exo(*args: str, env: dict | None = None, user: str | None = None) -> subprocess.CompletedProcess:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
    return subprocess.run(
        [*prefix, *EXO, *args], env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=300
    )


def test_dockerfile_installs_the_runtime_package_list():
    dockerfile = (REPO_ROOT / "docker/Dockerfile").read_text()
    package_file = "worker/exocortex/runtime/debian-packages.txt"
    assert f"COPY {package_file} /tmp/debian-packages.txt" in dockerfile
    selector = re.search(r"\$\((awk [^)]*)\)", dockerfile).group(1)
    from_docker = subprocess.run(
        ["sh", "-c", selector.replace("/tmp/debian-packages.txt", str(REPO_ROOT / package_file))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    postgres_and_ocr = [p.name for p in read_packages() if p.part in ("postgres", "ocr")]
    assert from_docker == postgres_and_ocr
    extensions = {e for p in read_packages() for e in p.extensions}
    assert {"vector", "age", "pg_cron", "pg_textsearch", "plpython3u", "pgtap", "plpgsql_check"} <= extensions


def test_host_mirror_is_read_from_apt_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d/debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
    )
    assert local.host_debian_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list.d/debian.sources").unlink()
    (tmp_path / "sources.list").write_text(
        "deb http://sec.example/debian-security bookworm-security main\n"
        "deb [arch=amd64] http://legacy.example/debian bookworm main\n"
    )
    assert local.host_debian_mirror(tmp_path) == "http://legacy.example/debian"
    (tmp_path / "sources.list").unlink()
    assert local.host_debian_mirror(tmp_path) is None


def test_not_linux_names_the_alternatives(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(RuntimeProblem, match="needs Linux.*docker compose.*EXO_DATABASE_URL"):
        local.check_platform()


def test_not_root_names_the_alternatives(tmp_path):
    tmp_path.chmod(0o777)
    result = _exo("db", "up", env={"EXO_HOME": str(tmp_path / "home")}, user="65534")
    assert result.returncode == 1
    assert "needs root" in result.stderr
    assert "docker compose" in result.stderr and "EXO_DATABASE_URL" in result.stderr


def test_debootstrap_unavailable_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(
        RuntimeProblem,
        match="debootstrap is unavailable.*install debootstrap",
    ):
        local.ensure_debootstrap(lambda _m: None)


def test_port_in_use_names_the_port_and_the_setting():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(RuntimeProblem, match=f"port {port} .* in use.*EXO_PG_PORT"):
            local.require_port_free(port)
    local.require_port_free(port)  # free again once the listener is gone


def test_server_conf_preloads_the_extensions(cfg):
    conf = local.server_conf(cfg)
    assert "shared_preload_libraries = 'age,pg_cron,pg_textsearch'" in conf
    assert f"cron.database_name = '{cfg.database}'" in conf
    assert "listen_addresses = '127.0.0.1'" in conf
    assert f"port = {cfg.port}" in conf


def test_the_listen_addresses_come_from_exo_pg_listen(cfg, monkeypatch):
    """For workers and readers on other hosts (docs: Workers on other hosts); nothing that could
    end the setting's quotes gets into the file."""
    monkeypatch.setenv("EXO_PG_LISTEN", "127.0.0.1, 10.0.0.5")
    assert "listen_addresses = '127.0.0.1, 10.0.0.5'\n" in local.server_conf(config.load())
    for bad in ("127.0.0.1'; ssl = off; '", "", "10.0.0.5,,"):
        monkeypatch.setenv("EXO_PG_LISTEN", bad)
        with pytest.raises(SystemExit, match="EXO_PG_LISTEN must be"):
            config.load()


def test_second_up_is_idempotent(cfg):
    messages: list[str] = []
    result = server.up(cfg, messages.append)
    assert result.provisioned is False
    assert messages == []  # nothing to provision, initialise or start
    assert "ready in" in result.summary


def test_a_second_up_waits_for_the_first_and_says_so(cfg, tmp_path):
    """Two `up`s of one EXO_HOME at once (the suite's two processes on a fresh machine) removed
    each other's half-built root; the later one now waits for the earlier."""
    output = tmp_path / "up.out"
    with open(cfg.home / "up.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # an `up` of this process is under way
        with open(output, "w") as out:
            later = subprocess.Popen([*EXO, "db", "up"], stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while "waiting for another `exo db up`" not in output.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "waiting for another `exo db up`" in output.read_text()
        time.sleep(1)
        assert later.poll() is None  # still waiting
    assert later.wait(timeout=120) == 0
    assert "ready in" in output.read_text()


@pytest.mark.slow
def test_data_survives_down_and_up(cfg, db):
    with db.connect() as conn:
        conn.execute("select exo_private.set_setting('demo.kept', '\"yes\"', 'survives a restart')")
    assert server.down(cfg) == "stopped"
    assert local.is_running(cfg) is False
    assert server.status(cfg)["running"] is False
    with pytest.raises(psycopg.OperationalError):
        connect(admin_url(cfg), "exo-test", connect_timeout=3)
    server.up(cfg, lambda _m: None)
    with db.connect() as conn:
        assert conn.execute("select exo.setting('demo.kept')").fetchone() == ("yes",)


def test_external_server_is_used_as_is_and_missing_extensions_are_named(cfg):
    external = dataclasses.replace(cfg, external_url=admin_url(cfg))
    assert "EXO_DATABASE_URL" in server.up(external, lambda _m: None).summary
    control = cfg.runtime_root / "usr/share/postgresql/18/extension/vector.control"
    hidden = control.with_suffix(".hidden")
    control.rename(hidden)
    try:
        with pytest.raises(
            RuntimeProblem,
            match=r"lacks extension vector \(install the Debian package postgresql-18-pgvector\)",
        ):
            server.check_server(external)
    finally:
        hidden.rename(control)
    server.check_server(external)


@pytest.mark.slow
def test_disk_full_during_provisioning_leaves_no_root_that_looks_complete(cfg, tmp_path, monkeypatch):
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(small)], check=True)
    try:
        tiny = dataclasses.replace(cfg, home=small / "exo", port=cfg.port + 1)
        # The up-front free-space check already refuses a 48 MiB disk ...
        with pytest.raises(RuntimeProblem, match="disk full while provisioning"):
            local.provision(tiny, lambda _m: None)
        # ... and a disk that fills up half way is caught too.
        monkeypatch.setattr(local, "MIN_FREE_BYTES", 0)
        with pytest.raises(RuntimeProblem, match="disk full while provisioning.*half-built root was removed"):
            local.provision(tiny, lambda _m: None)
        assert not (tiny.home / "root.partial").exists()
        assert not tiny.runtime_root.exists()
        assert not local.is_provisioned(tiny)
    finally:
        subprocess.run(["umount", "-l", str(small)], check=True)


def test_cli_url_status_and_doctor(cfg):
    url = _exo("db", "url", "--role", "reader")
    assert url.returncode == 0, url.stderr
    with psycopg.connect(url.stdout.strip()) as conn:
        assert conn.execute("select current_user").fetchone() == ("exo_reader",)
    status = _exo("db", "status", "--json")
    info = json.loads(status.stdout)
    assert info["running"] is True
    assert info["version"].startswith("18.")
    assert set(info["extensions"]) >= {"vector", "age", "pg_cron", "pg_textsearch", "plpython3u"}
    doctor = _exo("doctor")
    assert doctor.returncode == 0, doctor.stdout
    assert "FAIL" not in doctor.stdout
    assert "memory bounds: 256 MB a process that never logs in" in " ".join(doctor.stdout.split())


def test_doctor_says_when_memory_is_not_bounded():
    mb, gb = 1024**2, 1024**3
    unbounded = doctor_module.memory_check({"postmaster_soft": -1, "memory_total": 24 * gb}, 256 * mb, 32)
    assert not unbounded.ok and "no data limit" in unbounded.detail
    too_much = doctor_module.memory_check(
        {"postmaster_soft": 256 * mb, "memory_total": 12 * gb}, 256 * mb, 40
    )
    assert not too_much.ok and "40 x 256 MB = 10.0 GB of 12 GB" in too_much.detail
    fits = doctor_module.memory_check({"postmaster_soft": 256 * mb, "memory_total": 24 * gb}, 256 * mb, 40)
    assert fits.ok


def test_doctor_reports_what_is_missing_and_the_fix(tmp_path):
    result = _exo("doctor", env={"EXO_HOME": str(tmp_path / "nothing-here")})
    assert result.returncode == 1
    assert "FAIL runtime provisioned" in result.stdout
    assert "fix: run `exo db up`" in result.stdout


def test_config_rejects_a_bad_port(monkeypatch):
    monkeypatch.setenv("EXO_PG_PORT", "not-a-port")
    with pytest.raises(SystemExit, match="EXO_PG_PORT must be a port number"):
        config.load()


def test_runtime_lives_outside_the_checkout(cfg):
    assert REPO_ROOT not in Path(cfg.home).parents
    assert oct(cfg.secrets_file.stat().st_mode & 0o777) == "0o600"


def test_a_memory_is_copied_while_pg_cron_runs(cfg):
    """`create database ... template` needs the source alone; pg_cron's scheduler holds a session
    on the database it serves (this runtime's main one): exo db copy ends it for the copy, and the
    scheduler comes back. A client of the source makes the copy refuse, naming it."""
    name = f"exo_copy_{os.getpid()}"
    scheduler = (
        "select count(*) from pg_stat_activity where datname = %s and backend_type = 'pg_cron launcher'"
    )
    with connect(admin_url(cfg, "postgres"), "exo-test", autocommit=True) as admin:
        assert admin.execute(scheduler, (cfg.database,)).fetchone() == (1,)
        with (
            connect(admin_url(cfg), "exo-test-client"),
            pytest.raises(server.CopyRefused, match="1 client session.*exo-test-client"),
        ):
            server.copy_database(cfg, name)
        try:
            copied = server.copy_database(cfg, name)
            assert copied.startswith(
                f"copied {cfg.database} to {name}; scheduled 7 pg_cron job(s) for {name}"
            )
            copy = dataclasses.replace(cfg, database=name)
            with connect(role_url(copy, "exo_reader", name), "exo-test") as reader:  # the clone's grants
                assert reader.execute("select count(*) from exo.workspaces").fetchone()[0] == 4
            deadline = time.monotonic() + 30
            while admin.execute(scheduler, (cfg.database,)).fetchone() != (1,):
                assert time.monotonic() < deadline, "pg_cron's scheduler did not come back"
                time.sleep(0.5)
        finally:
            unschedule_database(admin_url(cfg, "postgres"), name)
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
