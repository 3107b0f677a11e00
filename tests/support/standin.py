"""A stand-in OpenAI-compatible endpoint that injects faults into the model client.

The only fake server the tests use, and only for faults a real model cannot
produce on demand (HTTP 5xx, malformed bodies, slow, trickling or dropped
answers) or for an instant "no-op model"; silent_port stands for a host that
drops packets. Tests pass `respond(path, request) ->
Reply` (request is None for a GET) and read `requests` (the POSTs, in order) and
`hang_ups` (requests whose client closed the connection while the reply was delayed).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict = b"{}"
    delay_s: float = 0.0  # wait before answering (cut short when the stand-in stops or the client hangs up)
    trickle: bool = False  # headers at once, then the body a byte every 0.1 s
    hang_up: bool = False  # close the connection without a word


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
    """A context manager serving `respond` on a free port of `host` until exit."""

    def __init__(self, respond: Callable[[str, dict | None], Reply], host: str = "127.0.0.1"):
        self.respond = respond
        self.requests: list[tuple[str, dict]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, GETs too, in order
        self.stopping = threading.Event()
        self.hang_ups = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                standin.headers.append(dict(self.headers))
                self._answer(standin.respond(self.path, None))

            def do_POST(self) -> None:
                standin.headers.append(dict(self.headers))
                length = int(self.headers.get("content-length", 0))
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    request = {}
                standin.requests.append((self.path, request))
                self._answer(standin.respond(self.path, request))

            def _delay(self, seconds: float) -> bool:
                """Wait before answering; True (answer nothing) once the stand-in stops or the
                client hangs up (counted: what tells a model server to stop generating)."""
                deadline = time.monotonic() + seconds
                while not standin.stopping.is_set() and time.monotonic() < deadline:
                    readable, _, _ = select.select([self.connection], [], [], 0.02)
                    if readable:  # the request was read in full: only a hang-up makes it readable
                        try:
                            gone = not self.connection.recv(1, socket.MSG_PEEK)
                        except OSError:
                            gone = True
                        if gone:
                            standin.hang_ups += 1
                            return True
                return standin.stopping.is_set()

            def _answer(self, reply: Reply) -> None:
                if reply.delay_s and self._delay(reply.delay_s):
                    return
                if reply.hang_up:
                    self.close_connection = True
                    return
                body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    if not reply.trickle:
                        self.wfile.write(body)
                    for i in range(len(body)) if reply.trickle else ():
                        if standin.stopping.wait(0.1):
                            return
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up first (a timeout test)

            def log_message(self, *_args) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def address(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return f"{self.address}/v1"

    def calls(self, suffix: str) -> int:
        return sum(1 for path, _ in self.requests if path.endswith(suffix))

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@contextmanager
def silent_port(host: str = "127.0.0.1") -> Iterator[str]:
    """The base URL (.../v1) of a port that neither takes a connection nor refuses one, as a host
    that drops packets: a listener that never accepts, its queue filled, so the kernel drops each
    further SYN and a connect waits (for its timeout)."""
    with socket.socket() as listener:
        listener.bind((host, 0))
        listener.listen(0)
        queued: list[socket.socket] = []
        try:
            while True:  # fill the queue: until a connect is not taken at once
                sock = socket.socket()
                queued.append(sock)
                sock.setblocking(False)
                sock.connect_ex(listener.getsockname())
                if not select.select([], [sock], [], 0.3)[1]:
                    break
            host_, port = listener.getsockname()[:2]
            yield f"http://{host_}:{port}/v1"
        finally:
            for sock in queued:
                sock.close()
