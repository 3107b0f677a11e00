"""A stand-in OpenAI-compatible endpoint that injects faults into the model client.

The only fake server the tests use, and only for faults a real model cannot
produce on demand (HTTP 500s, malformed bodies, hangs) or for an instant
"no-op model". Tests set `respond(path, request) -> Reply` and read `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict = b"{}"
    delay_s: float = 0.0


def embeddings(request: dict, dimensions: int = 384) -> Reply:
    """A valid embeddings reply: one unit vector per input."""
    inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
    vector = [1.0] + [0.0] * (dimensions - 1)
    return Reply(
        body={"data": [{"index": i, "embedding": vector} for i in range(len(inputs))], "model": "standin"}
    )


def chat(content: str, finish_reason: str = "stop") -> Reply:
    """A valid chat completion whose message is `content`."""
    return Reply(
        body={
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    )


class StandIn:
    def __init__(self, respond: Callable[[str, dict], Reply]):
        self.respond = respond
        self.requests: list[tuple[str, dict]] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    request = {}
                standin.requests.append((self.path, request))
                reply = standin.respond(self.path, request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *_args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def calls(self, suffix: str) -> int:
        return sum(1 for path, _ in self.requests if path.endswith(suffix))

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()
