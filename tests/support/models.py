"""The real local models the tests and benchmarks start on ports of their own."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
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


@contextmanager
def real_models(cfg: Config, run_dir: Path) -> Iterator[RealModels]:
    """Both model servers, loaded at once, with pid files and logs in `run_dir`; stopped on exit."""
    chat_port, embed_port = free_ports(2)
    try:
        with ThreadPoolExecutor(2) as pool:
            chat = pool.submit(services.start_chat, cfg, chat_port, CHAT_MODEL, run_dir=run_dir)
            embeddings = pool.submit(services.start_embeddings, cfg, embed_port, run_dir=run_dir)
            chat.result(), embeddings.result()
        yield RealModels(
            Endpoint(f"http://127.0.0.1:{chat_port}/v1", CHAT_MODEL, 120.0, {}),
            Endpoint(f"http://127.0.0.1:{embed_port}/v1", EMBEDDING_MODEL, 30.0, {"dimensions": 384}),
            run_dir,
        )
    finally:
        services.down(cfg, run_dir=run_dir)
