"""Benchmark: where `make demo`'s time goes on a fresh EXO_HOME.

Runs `make demo` with EXO_HOME set to a new folder and EXO_PG_PORT to a free port (the user's
runtime is never touched), and times each command make runs: the time from the line make echoes
for it to the next one's. The first step, `exo db up`, provisions the runtime from the mirror
(debootstrap and the packages), as on a machine that never had one. Afterwards the new runtime's
model servers and PostgreSQL are stopped and the folder removed (unless --keep).

    .venv/bin/python -m bench.demo_steps [--keep] [--windows N] [--log FILE]
    python3 -m bench.demo_steps --model-ports 54360 54361 [--home DIR] [--port N]   (in a fresh clone)

The demo's model servers listen on the ports the new database's settings name (models.chat,
models.embeddings, 54330 and 54331 by default), which must be free: a server already there would
be reused, not timed. --model-ports gives the demo servers of its own on other ports: `make setup`
runs first (timed with the rest), then `exo models use ... --no-probe` points the new database's
settings at those ports, then `make demo` (its setup steps find everything done). In a fresh clone
with no virtualenv, run it with the system's python3 (this file needs only the standard library):
`make setup` then builds the virtualenv too, and its steps are timed as "venv: ...".
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
#: The Makefile's commands that build the virtualenv.
VENV_STEP = re.compile(r"^\S*python\S*\s+-m venv|^\S*\.venv/bin/pip install .*?(\S+)$")
#: What each step is part of, for the split.
PARTS = (
    ("venv", re.compile(r"^venv")),
    ("provisioning", re.compile(r"^db up|^migrate")),
    ("models", re.compile(r"^models")),
    ("ingest", re.compile(r"^(owner|defer add|ingest|import-chat)")),
    ("worker", re.compile(r"^worker")),
    ("answers", re.compile(r"^(quarantine|defer list|db psql)")),
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def run_make(argv: list[str], env: dict, steps: list, output: list) -> None:
    """Run make, each step it echoes timed from its line; a failure ends the bench."""
    with subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if m := STEP.match(line):
                steps.append((m.group(1).strip(), time.monotonic()))
            elif m := VENV_STEP.match(line):
                steps.append((f"venv: {m.group(1) or 'python -m venv'}", time.monotonic()))
    if proc.returncode != 0:
        sys.stdout.write("".join(output[-40:]))
        sys.exit(f"{' '.join(argv)} failed (exit {proc.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the runtime running in its folder")
    parser.add_argument("--windows", type=int, help="DEMO_WINDOWS (default: the Makefile's)")
    parser.add_argument("--log", type=Path, help="write make's whole output here")
    parser.add_argument(
        "--home", type=Path, help="EXO_HOME (default: a new temporary folder); must not exist"
    )
    parser.add_argument("--port", type=int, help="EXO_PG_PORT (default: a free port)")
    parser.add_argument(
        "--model-ports",
        type=int,
        nargs=2,
        metavar=("CHAT", "EMBEDDINGS"),
        help="the demo's own model servers",
    )
    args = parser.parse_args()
    ports = tuple(args.model_ports or MODEL_PORTS)
    taken = [p for p in ports if port_taken(p)]
    if taken:
        sys.exit(f"ports {taken} are in use: the demo's model servers would be reused, not timed")
    if args.home and args.home.exists():
        sys.exit(f"{args.home} exists: the demo's EXO_HOME must be new")
    home = args.home or Path(tempfile.mkdtemp(prefix="exo-demo-home-"))
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "EXO_HOME": str(home),
        "EXO_PG_PORT": str(args.port or free_port()),
        "COLUMNS": "100",
    }
    make = ["make", "--no-print-directory"] + ([f"DEMO_WINDOWS={args.windows}"] if args.windows else [])
    steps: list[tuple[str, float]] = []
    output: list[str] = []
    began = time.monotonic()
    try:
        if args.model_ports:
            run_make([*make, "setup"], env, steps, output)
            steps.append(("models use (other ports)", time.monotonic()))
            for role, model, port in (
                ("chat", "gemma-3-270m-q4_k_m", ports[0]),
                ("embeddings", "all-MiniLM-L6-v2", ports[1]),
            ):
                subprocess.run(
                    [
                        str(EXO),
                        "models",
                        "use",
                        role,
                        f"http://127.0.0.1:{port}/v1",
                        "--model",
                        model,
                        "--no-probe",
                    ],
                    env=env,
                    check=True,
                    capture_output=True,
                )
        run_make([*make, "demo"], env, steps, output)
        total = time.monotonic() - began
    finally:
        if args.log:
            args.log.write_text("".join(output))
        if not args.keep:
            for what in (["models", "down"], ["db", "down"]):
                if EXO.exists():
                    subprocess.run([str(EXO), *what], env=env, capture_output=True)
            shutil.rmtree(home, ignore_errors=True)
    print(f"make demo on a fresh EXO_HOME: {total:.1f} s in all")
    ends = [t for _, t in steps[1:]] + [began + total]
    parts: dict[str, float] = {}
    first = steps[0][1] if steps else began + total
    if first - began > 0.5:
        print(f"  {'(before the first step)':<32} {first - began:7.1f} s")
    for (name, start), end in zip(steps, ends, strict=True):
        print(f"  {name:<32} {end - start:7.1f} s")
        part = next((p for p, pattern in PARTS if pattern.match(name)), "other")
        parts[part] = parts.get(part, 0.0) + end - start
    print("  by part: " + ", ".join(f"{p} {s:.1f} s" for p, s in parts.items()))
    if args.keep:
        print(f"the runtime stays in {home} (EXO_HOME={home} EXO_PG_PORT={env['EXO_PG_PORT']})")


if __name__ == "__main__":
    main()
