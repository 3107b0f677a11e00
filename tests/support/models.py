"""The real local models the tests and benchmarks start on ports of their own.

A run of the suite starts them once, however many processes it has (support/shared.py): on two
cores a llama-server per pytest-xdist process would starve the other (llama.cpp's threads spin
while they wait; a run with two generated 1.7 tokens a second). The first process that needs the
models starts them in the run's folder and notes their ports, the others find them; the run's first
process stops them at its end.
"""

from __future__ import annotations

import json
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from exocortex.config import Config
from exocortex.models import services
from exocortex.plpy.model_client import Endpoint

from . import shared

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


def real_models(cfg: Config) -> RealModels:
    """Both model servers of the run, loaded at once, with pid files and logs in its folder: started
    by the first caller, found by the others (shared.share must have named the folder)."""
    with shared.locked("models") as folder:  # held while the first caller starts them
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
