"""Benchmark: where `make demo`'s time goes on a fresh EXO_HOME.

Runs `make demo` with EXO_HOME set to a new folder and EXO_PG_PORT to a free port (the user's
runtime is never touched), and times each command make runs: the time from the line make echoes
for it to the next one's. The first step, `exo db up`, provisions the runtime from the mirror
(debootstrap and the packages), as on a machine that never had one. Afterwards the new runtime's
model servers and PostgreSQL are stopped and the folder removed (unless --keep).

    .venv/bin/python -m bench.demo_steps [--keep] [--windows N]

The demo's model servers listen on the ports the new database's settings name (models.chat,
models.embeddings), which must be free: a server already there would be reused, not timed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXO = ROOT / ".venv/bin/exo"
#: The model servers' ports in a newly migrated database (migrations/0004's settings).
MODEL_PORTS = (54330, 54331)
#: A command make echoes: the exo binary and its subcommand (and the first argument).
STEP = re.compile(r"^\S*\.venv/bin/exo\s+((?:[\w-]+\s*){1,2}(?:--queue \w+)?)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the runtime running in its folder")
    parser.add_argument("--windows", type=int, help="DEMO_WINDOWS (default: the Makefile's)")
    parser.add_argument("--log", type=Path, help="write make's whole output here")
    args = parser.parse_args()
    taken = [p for p in MODEL_PORTS if port_taken(p)]
    if taken:
        sys.exit(f"ports {taken} are in use: the demo's model servers would be reused, not timed")
    home = Path(tempfile.mkdtemp(prefix="exo-demo-home-"))
    env = {**os.environ, "EXO_HOME": str(home), "EXO_PG_PORT": str(free_port()), "COLUMNS": "100"}
    argv = ["make", "--no-print-directory", "demo"]
    if args.windows is not None:
        argv.append(f"DEMO_WINDOWS={args.windows}")
    steps: list[tuple[str, float]] = []
    output: list[str] = []
    began = time.monotonic()
    try:
        with subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                output.append(line)
                m = STEP.match(line)
                if m:
                    steps.append((m.group(1).strip(), time.monotonic()))
        total = time.monotonic() - began
        if proc.returncode != 0:
            sys.stdout.write("".join(output[-40:]))
            sys.exit(f"make demo failed (exit {proc.returncode})")
    finally:
        if args.log:
            args.log.write_text("".join(output))
        if not args.keep:
            for what in (["models", "down"], ["db", "down"]):
                subprocess.run([str(EXO), *what], env=env, capture_output=True)
            shutil.rmtree(home, ignore_errors=True)
    print(f"make demo on a fresh EXO_HOME: {total:.1f} s in all")
    ends = [t for _, t in steps[1:]] + [began + total]
    for (name, start), end in zip(steps, ends, strict=True):
        print(f"  {name:<32} {end - start:7.1f} s")
    if args.keep:
        print(f"the runtime stays in {home} (EXO_HOME={home} EXO_PG_PORT={env['EXO_PG_PORT']})")


if __name__ == "__main__":
    main()
