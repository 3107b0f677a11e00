"""Provisioning's output: every line of debootstrap and apt-get in EXO_HOME/logs/provision.log, a
line a phase on the screen, and a failure that names the log and shows how it ends."""

from __future__ import annotations

import dataclasses

import pytest

from exocortex import config
from exocortex.runtime import local
from exocortex.runtime.local import RuntimeProblem

# What apt-get says while it installs, cut short.
APT_OUTPUT = """\
Get:1 http://mirror forky InRelease [151 kB]
Reading package lists...
0 upgraded, 143 newly installed, 0 to remove and 0 not upgraded.
Get:1 http://mirror forky/main amd64 libsystemd-shared amd64 262-1 [2789 kB]
Get:2 http://mirror forky/main amd64 systemd amd64 262-1 [3477 kB]
Preparing to unpack .../libsystemd-shared_262-1_amd64.deb ...
Unpacking libsystemd-shared:amd64 (262-1) ...
Setting up libsystemd-shared:amd64 (262-1) ...
Setting up systemd (262-1) ...
"""


def run(tmp_path, script: str) -> tuple[list[str], str]:
    log = tmp_path / "provision.log"
    shown: list[str] = []
    try:
        local._run_step(["sh", "-c", script], "packages", log, shown.append, local.APT_PHASES)
    finally:
        text = log.read_text()
    return shown, text


def test_every_line_goes_to_the_log_and_a_line_a_phase_to_the_screen(tmp_path):
    shown, log = run(tmp_path, f"cat <<'EOF'\n{APT_OUTPUT}EOF")
    assert shown[:-1] == [
        "packages: reading the package index",
        "packages: downloading 143 packages",
        "packages: unpacking the packages",
        "packages: setting up the packages",
    ]
    assert shown[-1].startswith("packages: done in ")
    for line in APT_OUTPUT.splitlines():
        assert line in log
    assert "--- packages: exit 0 after" in log


def test_a_failure_names_the_log_and_shows_its_last_lines(tmp_path):
    lines = "".join(f"echo line {n}; " for n in range(40))
    with pytest.raises(RuntimeProblem) as failed:
        run(tmp_path, f"{lines} echo 'E: Unable to locate package postgresql-18-age' >&2; exit 100")
    message = str(failed.value)
    assert message.startswith(
        f"packages failed (exit 100); all its output is in {tmp_path / 'provision.log'}"
    )
    assert message.endswith("line 39\nE: Unable to locate package postgresql-18-age")
    assert "line 25" not in message  # the log has the rest
    assert "line 0\n" in (tmp_path / "provision.log").read_text()


def test_provisioning_writes_its_log_under_exo_home(tmp_path, monkeypatch):
    cfg = dataclasses.replace(config.load(), home=tmp_path / "home")
    steps = []
    monkeypatch.setattr(local, "check_platform", lambda: None)
    monkeypatch.setattr(local, "_build_root", lambda _cfg, log, _progress: steps.append(log))
    monkeypatch.setattr(local, "_write_marker", lambda _root: None)
    shown: list[str] = []
    assert local.provision(cfg, shown.append)
    assert steps == [tmp_path / "home/logs/provision.log"]
    assert local.provision_log(cfg).read_text().startswith("exo db up: provisioning ")
    assert f"all the output goes to {local.provision_log(cfg)}" in shown[0]
