"""The real local models the tests and benchmarks start on ports of their own.

A run of the suite starts them once, however many processes it has: on two cores a llama-server
per pytest-xdist process would starve the other (llama.cpp's threads spin while they wait; a run
with two generated 1.7 tokens a second). The run's first process names a folder (SHARED_MODELS,
which the processes pytest-xdist starts inherit); the first process that needs the models starts
them there and notes their ports, the others find them; the first process stops them at its end.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from exocortex.config import Config
from exocortex.models import services
from exocortex.plpy.model_client import Endpoint

CHAT_MODEL = "gemma-3-270m-q4_k_m"
EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def free_ports(n: int = 1) -> list[int]:
    """n ports nobody listens on now."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass(frozen=True)
class RealModels:
    """The real local models (Gemma 3 270M in llama-server, MiniLM), on ports of the caller's own."""

    chat: Endpoint
    embeddings: Endpoint
    run_dir: Path


#: The environment variable naming the run's folder for its models.
SHARED_MODELS = "EXO_TEST_SHARED_MODELS"


def share_models() -> None:
    """Name the run's folder for its models (in the run's first process, before any other starts)."""
    os.environ[SHARED_MODELS] = tempfile.mkdtemp(prefix="exo-test-models-")


def real_models(cfg: Config) -> RealModels:
    """Both model servers of the run, loaded at once, with pid files and logs in its folder: started
    by the first caller, found by the others (share_models must have named the folder)."""
    folder = Path(os.environ[SHARED_MODELS])
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held while the first caller starts them
        ports = folder / "ports.json"
        if not ports.exists():
            chat_port, embed_port = free_ports(2)
            with ThreadPoolExecutor(2) as pool:
                chat = pool.submit(services.start_chat, cfg, chat_port, CHAT_MODEL, run_dir=folder)
                embeddings = pool.submit(services.start_embeddings, cfg, embed_port, run_dir=folder)
                chat.result(), embeddings.result()
            ports.write_text(json.dumps([chat_port, embed_port]))
        chat_port, embed_port = json.loads(ports.read_text())
    return RealModels(
        Endpoint(f"http://127.0.0.1:{chat_port}/v1", CHAT_MODEL, 120.0, {}),
        Endpoint(f"http://127.0.0.1:{embed_port}/v1", EMBEDDING_MODEL, 30.0, {"dimensions": 384}),
        folder,
    )


def stop_shared_models(cfg: Config) -> None:
    """Stop the run's models, if a test started them, and remove their folder (the first process, at its end)."""
    folder = Path(os.environ.pop(SHARED_MODELS))
    services.down(cfg, run_dir=folder)
    shutil.rmtree(folder, ignore_errors=True)
