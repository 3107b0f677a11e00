"""Benchmark: `exo db up` on a provisioned machine, and first provisioning.

Baseline, measured in the same run: a plain `pg_ctl status` through chroot, the
least any "is it up?" check can cost. Runs alternate so that load from other
processes hits both sides alike. Figures are medians.

    .venv/bin/python -m bench.runtime_up [--runs 15] [--skip-provision]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from exocortex import config
from exocortex.runtime import local, server

EXO = [sys.executable, "-m", "exocortex.cli"]


def timed(argv: list[str], env: dict | None = None) -> float:
    began = time.perf_counter()
    subprocess.run(argv, env={**os.environ, **(env or {})}, check=True, capture_output=True)
    return time.perf_counter() - began


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skip-provision", action="store_true", help="skip the first-provisioning run")
    args = parser.parse_args()

    cfg = config.load()
    server.up(cfg, lambda _m: None)
    pg_ctl_status = [
        "chroot", "--userspec=postgres:postgres", str(cfg.runtime_root),
        f"{local.PGBIN}/pg_ctl", "status", "-D", local.DATA_DIR,
    ]  # fmt: skip
    up_cli, up_inproc, baseline = [], [], []
    for _ in range(args.runs):
        up_cli.append(timed([*EXO, "db", "up"]))
        began = time.perf_counter()
        server.up(cfg, lambda _m: None)
        up_inproc.append(time.perf_counter() - began)
        baseline.append(timed(pg_ctl_status))

    base = statistics.median(baseline)
    print(f"runs: {args.runs} (medians)")
    print(f"{'pg_ctl status (baseline)':<38} {base * 1000:8.1f} ms   1.0x")
    for name, times in (
        ("exo db up, provisioned (CLI)", up_cli),
        ("server.up(), provisioned (in-process)", up_inproc),
    ):
        median = statistics.median(times)
        print(f"{name:<38} {median * 1000:8.1f} ms  {median / base:4.1f}x")

    if args.skip_provision:
        return
    home = cfg.home.parent / f"exocortex-bench-{os.getpid()}"
    env = {"EXO_HOME": str(home), "EXO_PG_PORT": str(free_port())}
    try:
        seconds = timed([*EXO, "db", "up"], env)
        print(f"{'first provisioning (exo db up)':<38} {seconds:8.1f} s   {seconds / base:,.0f}x")
    finally:
        subprocess.run([*EXO, "db", "down"], env={**os.environ, **env}, capture_output=True)
        if Path(home).exists():
            shutil.rmtree(home)


if __name__ == "__main__":
    main()
