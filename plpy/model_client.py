"""The one HTTP client every model call goes through: OpenAI-compatible chat and embeddings,
and llama.cpp's /v1/rerank (query + documents -> one relevance score per document).

Standard library only and free of exocortex imports, so the same file can be
inlined into a plpython3u function body. Every failure is a ModelError whose
``error_class`` the worker records and decides retries on; this module never
retries.

    endpoint_down   connection refused or reset, unknown host, TLS failure
    timeout         no answer within the endpoint's timeout_s
    http_5xx        the server answered 5xx (ServerError.status)
    http_4xx        the server rejected the request (ClientError.status, its message)
    bad_response    a 2xx body that is not JSON or lacks the expected fields
    cancelled       the caller gave the call up from another thread (Cancel)

A setting may name ``api_key_env``: the environment variable of the calling process (the
worker, the CLI, or the database server for calls made in SQL) whose value is sent as
``Authorization: Bearer``. The key itself is never stored in a setting.

Every call made inside PostgreSQL (PL/Python) on the server process's own thread asks for the
statement's interrupts every POLL_S while it connects, sends and waits for and reads its answer
(statement_check, _Call), so a cancelled or timed-out statement ends within a quarter second
whatever the endpoint does (drops packets, never answers, trickles); the database's error goes
up, not a ModelError. A call on a thread of its own is cut off from the
server's thread instead (Cancel.join).
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import io
import ipaddress
import json
import math
import os
import select
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

DEFAULT_TIMEOUT_S = 30.0
#: How often a call that waits for its answer asks its check (Cancel.check, else statement_check)
#: whether to go on.
POLL_S = 0.25
#: How long Cancel.join waits for a thread whose calls it has just cut off.
JOIN_AFTER_CANCEL_S = 1.0
_READ_CHUNK = 64 * 1024


class ModelError(Exception):
    """A model call failed; ``error_class`` says how."""

    error_class = "model_error"

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.url = url


class EndpointDown(ModelError):
    error_class = "endpoint_down"


class Timeout(ModelError):
    error_class = "timeout"


class BadResponse(ModelError):
    error_class = "bad_response"


class _HTTPStatusError(ModelError):
    def __init__(self, message: str, url: str | None = None, status: int = 0):
        super().__init__(message, url)
        self.status = status


class ServerError(_HTTPStatusError):
    error_class = "http_5xx"


class ClientError(_HTTPStatusError):
    error_class = "http_4xx"


class Cancelled(ModelError):
    """The caller gave the call up (Cancel.cancel) before it was answered."""

    error_class = "cancelled"


class Cancel:
    """Cuts short, from another thread, the calls made through endpoints that carry it
    (Endpoint.cancel): cancel() shuts their connections down, so each raises Cancelled at once
    and the server sees its client gone (llama-server then stops generating); a call begun
    after it raises Cancelled without connecting.

    `check`, when given, is asked every POLL_S while a call connects, sends or waits for its
    answer (in place of statement_check), and whatever it raises ends the call and closes its
    connection."""

    def __init__(self, check: Callable[[], object] | None = None) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.cancelled = False
        self.check = check

    def cancel(self) -> int:
        """Cut the calls in flight off; returns how many connections were open."""
        with self._lock:
            self.cancelled = True
            sockets = [s for s in self._sockets if s.fileno() != -1]
            self._sockets.clear()
        for sock in sockets:
            _shut_down(sock)
        return len(sockets)

    def track(self, sock: socket.socket) -> None:
        """A call's connection is open: cancel() shuts it down (at once when cancelled already)."""
        with self._lock:
            if not self.cancelled:
                self._sockets = [s for s in self._sockets if s.fileno() != -1 and s is not sock] + [sock]
                return
        _shut_down(sock)

    def join(self, thread: threading.Thread, timeout: float) -> None:
        """Wait at most `timeout` for `thread`, whose calls go through this Cancel, asking the
        check (or statement_check) every POLL_S; whatever it raises cuts the thread's calls off
        and goes up once the thread has ended."""
        check = self.check or statement_check()
        deadline = time.monotonic() + timeout
        try:
            while thread.is_alive() and time.monotonic() < deadline:
                thread.join(POLL_S)
                if check is not None and thread.is_alive():
                    check()
        except BaseException:
            self.cancel()
            thread.join(JOIN_AFTER_CANCEL_S)
            raise


def statement_check() -> Callable[[], object] | None:
    """What a call made inside PostgreSQL asks while it waits, so that a statement's cancel
    (pg_cancel_backend, statement_timeout, the reader watchdog) or the backend's termination
    ends it within POLL_S: an SPI call, which lets them through where a read blocked in Python
    never would. None outside the database (no plpy module: the worker, the CLI) and on any
    thread but the server process's own (SPI is not thread-safe: such a call is cut off from
    the server's thread instead, Cancel.join)."""
    plpy = sys.modules.get("plpy")
    if not hasattr(plpy, "execute") or threading.current_thread() is not threading.main_thread():
        return None
    return lambda: plpy.execute("select pg_catalog.pg_sleep(0)")


class _Call:
    """What one request's connection waits under: the call's deadline, its Cancel and its check.
    Every wait (connecting, sending, each read of the answer) is a select of at most POLL_S, so a
    host that drops packets, never answers or trickles a byte at a time holds the call no longer
    than its deadline, its Cancel or (asked at least every POLL_S) its check allow."""

    def __init__(self, timeout_s: float, cancel: Cancel | None, check: Callable[[], object] | None) -> None:
        self.deadline = time.monotonic() + timeout_s
        self.cancel = cancel
        self.check = check
        self._next_check = time.monotonic() + POLL_S

    def wait(self, sock: socket.socket, *, write: bool = False) -> None:
        """Until sock can be written (write) or read; TimeoutError past the deadline, an OSError
        once cancelled, whatever the check raises."""
        while True:
            now = time.monotonic()
            if self.cancel is not None and self.cancel.cancelled:
                raise ConnectionAbortedError("the call was given up")
            if self.check is not None and now >= self._next_check:
                self.check()
                self._next_check = now + POLL_S
            waits = ([], [sock]) if write else ([sock], [])
            # past the deadline one look without waiting: an answer that came while the caller
            # was busy (SentRequest) is read, not timed out
            if any(select.select(*waits, [], max(0.0, min(POLL_S, self.deadline - now)))[:2]):
                return
            if now >= self.deadline:
                raise TimeoutError("timed out")

    def connect(self, address, timeout=None, source_address=None, *_args, **_kwargs) -> socket.socket:
        """socket.create_connection in slices (HTTPConnection._create_connection): each address
        connected without blocking, the socket handed to the Cancel before the SYN goes out."""
        error: OSError | None = None
        for family, kind, proto, _, sockaddr in socket.getaddrinfo(*address, 0, socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            try:
                if self.cancel is not None:
                    self.cancel.track(sock)
                if source_address:
                    sock.bind(source_address)
                sock.setblocking(False)
                if (code := sock.connect_ex(sockaddr)) not in (0, errno.EINPROGRESS):
                    raise OSError(code, os.strerror(code))
                self.wait(sock, write=True)
                if code := sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    raise OSError(code, os.strerror(code))
                sock.settimeout(timeout)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
                if isinstance(exc, TimeoutError | ConnectionAbortedError):
                    break  # the call's deadline or Cancel: no other address either
            except BaseException:
                sock.close()
                raise
        raise error or OSError(f"{address[0]} has no address")


class _SlicedReader(io.RawIOBase):
    """The answer's bytes as a socket's own reader gives them, each read waited for in slices
    (_Call.wait). Wraps sock.makefile, whose reference keeps the socket open after urllib closes
    the connection (the response still reads it)."""

    def __init__(self, sock: socket.socket, call: _Call) -> None:
        self._sock, self._raw, self._call = sock, sock.makefile("rb", buffering=0), call

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        if not (isinstance(self._sock, ssl.SSLSocket) and self._sock.pending()):
            self._call.wait(self._sock)  # TLS: bytes already decrypted need no wait
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _SlicedSocket:
    """A connected socket (TLS or not) whose request is sent and whose answer is read in slices."""

    def __init__(self, sock: socket.socket, call: _Call) -> None:
        self._sock, self._call = sock, call

    def sendall(self, data) -> None:
        view = memoryview(data).cast("B")
        while view:
            self._call.wait(self._sock, write=True)
            view = view[self._sock.send(view) :]

    def makefile(self, mode: str = "rb", *_args, **_kwargs):
        return io.BufferedReader(_SlicedReader(self._sock, self._call))

    def __getattr__(self, name: str):
        return getattr(self._sock, name)


def _shut_down(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already: the call is over
        sock.shutdown(socket.SHUT_RDWR)  # a recv blocked in another thread returns at once


def _sliced(http_class, call: _Call):
    """http_class's connections, connected, sent and read in slices under call, each handed to
    its Cancel once connected (the TLS socket too)."""

    def connection(*args, **kwargs):
        conn = http_class(*args, **kwargs)
        conn._create_connection = call.connect
        connect = conn.connect

        def sliced_connect() -> None:
            connect()
            if call.cancel is not None:
                call.cancel.track(conn.sock)
            conn.sock = _SlicedSocket(conn.sock, call)

        conn.connect = sliced_connect
        return conn

    return connection


class _Cancellable:
    """A urllib handler whose requests' connections wait in slices under request.call: their
    Cancel can shut them down, their check is asked while they wait."""

    def do_open(self, http_class, req, **kwargs):
        call = getattr(req, "call", None)
        return super().do_open(http_class if call is None else _sliced(http_class, call), req, **kwargs)


class _HTTPHandler(_Cancellable, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_Cancellable, urllib.request.HTTPSHandler):
    pass


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}), _HTTPHandler, _HTTPSHandler)
_DEFAULT = urllib.request.build_opener(_HTTPHandler, _HTTPSHandler)


@dataclass(frozen=True)
class Endpoint:
    url: str
    """Base URL of the OpenAI-compatible API, such as http://127.0.0.1:54330/v1."""
    model: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra: dict[str, Any] = field(default_factory=dict)
    """The setting's other keys (dimensions, response_format, api_key_env, ...)."""
    api_key: str | None = field(default=None, repr=False)
    """The value of the variable the setting's api_key_env names, when it is set."""
    cancel: Cancel | None = field(default=None, repr=False, compare=False)
    """Lets another thread cut this endpoint's calls short (the worker's stop)."""

    @classmethod
    def from_setting(cls, value: dict[str, Any]) -> Endpoint:
        """An endpoint from a ``models.*`` setting: {"url", "model", "timeout_s", ...}."""
        if not isinstance(value, dict):
            raise ValueError(f"a model setting must be a JSON object, got {value!r}")
        url, model = value.get("url"), value.get("model")
        if not isinstance(url, str) or not url:
            raise ValueError("the model setting has no url (null means no endpoint is configured)")
        if not isinstance(model, str) or not model:
            raise ValueError(f"the model setting for {url} has no model name")
        timeout = value.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"timeout_s of {url} must be a positive number, got {timeout!r}")
        extra = {k: v for k, v in value.items() if k not in {"url", "model", "timeout_s"}}
        key_env = value.get("api_key_env")
        if key_env is not None and (not isinstance(key_env, str) or not key_env):
            raise ValueError(f"api_key_env of {url} must name an environment variable, got {key_env!r}")
        api_key = (os.environ.get(key_env) or None) if key_env else None
        return cls(url.rstrip("/"), model, float(timeout), extra, api_key)


@dataclass(frozen=True)
class ChatReply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


# -- the calls ----------------------------------------------------------------------------


def embed(endpoint: Endpoint, texts: list[str]) -> list[list[float]]:
    """One vector per text, in the order of ``texts``."""
    if not texts:
        return []
    url = f"{endpoint.url}/embeddings"
    body = _post_json(url, {"model": endpoint.model, "input": list(texts)}, endpoint, endpoint.timeout_s)
    return _vectors(url, body, len(texts), endpoint)


def _vectors(url: str, body: dict[str, Any], count: int, endpoint: Endpoint) -> list[list[float]]:
    """The `count` vectors of an embeddings answer, in the order of the inputs."""
    data = body.get("data")
    if not isinstance(data, list):
        raise BadResponse(f"{url} answered without a data list", url)
    if len(data) != count:
        raise BadResponse(f"{url} returned {len(data)} embeddings for {count} inputs", url)
    vectors: list[list[float] | None] = [None] * count
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or vectors[index] is not None:
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not isinstance(vector, list) or not vector or not all(_is_number(x) for x in vector):
            raise BadResponse(f"{url} returned an embedding that is not a list of numbers", url)
        vectors[index] = [float(x) for x in vector]
    sizes = {len(v) for v in vectors if v is not None}
    expected = endpoint.extra.get("dimensions")
    if len(sizes) != 1 or (isinstance(expected, int) and sizes != {expected}):
        want = f"; the setting says {expected}" if isinstance(expected, int) else ""
        raise BadResponse(f"{url} returned embeddings of sizes {sorted(sizes)}{want}", url)
    return vectors  # type: ignore[return-value]


def rerank(endpoint: Endpoint, query: str, documents: list[str]) -> list[float]:
    """One relevance score per document, in the order of ``documents`` (higher is more relevant).

    Speaks llama.cpp's /v1/rerank: POST {model, query, documents, top_n} and read
    {"results": [{"index", "relevance_score"}, ...]} in any order. A score is needed
    for every document, so the request asks for ``top_n = len(documents)`` and a
    reply that leaves any document out is a BadResponse.
    """
    if not documents:
        return []
    url = f"{endpoint.url}/rerank"
    payload = {
        "model": endpoint.model,
        "query": query,
        "documents": list(documents),
        "top_n": len(documents),
    }
    body = _post_json(url, payload, endpoint, endpoint.timeout_s)
    results = body.get("results")
    if not isinstance(results, list):
        raise BadResponse(f"{url} answered without a results list", url)
    scores: list[float | None] = [None] * len(documents)
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score") if isinstance(item, dict) else None
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(documents)
            or scores[index] is not None
        ):
            raise BadResponse(f"{url} returned a missing, duplicate or out-of-range index {index!r}", url)
        if not _is_number(score):
            raise BadResponse(f"{url} returned a relevance_score that is not a finite number: {score!r}", url)
        scores[index] = float(score)  # type: ignore[arg-type]
    if len(results) != len(documents):
        raise BadResponse(f"{url} returned {len(results)} scores for {len(documents)} documents", url)
    return scores  # type: ignore[return-value]


def chat(
    endpoint: Endpoint,
    messages: list[dict[str, Any]],
    *,
    max_tokens: int,
    response_format: dict[str, Any] | None = None,
    temperature: float = 0.0,
) -> ChatReply:
    """One non-streaming chat completion.

    ``response_format`` (such as a json_schema) is left out when the endpoint's
    setting says ``"response_format": false``, for servers that misbehave with it.
    """
    url = f"{endpoint.url}/chat/completions"
    payload: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": False,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    if response_format is not None and endpoint.extra.get("response_format", True) is not False:
        payload["response_format"] = response_format
    body = _post_json(url, payload, endpoint, endpoint.timeout_s)
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
        finish_reason = choice.get("finish_reason") or "unknown"
    except (KeyError, IndexError, TypeError):
        raise BadResponse(f"{url} answered without choices[0].message.content", url) from None
    if not isinstance(content, str):
        raise BadResponse(f"{url} answered with a {type(content).__name__} message content", url)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return ChatReply(
        content=content,
        finish_reason=str(finish_reason),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )


class EmbeddingCall:
    """One text's embedding from a ``models.embeddings``-style setting, asked for at once and
    read when wanted (result()), so that the model works while the caller does: how a search
    overlaps its query's embedding with its stages. result() never raises for a model failure:
    {vector (pgvector text), model, dimensions, ms} or {error_class, error, ms}, ms counted from
    the request; close() gives an unread answer up."""

    def __init__(self, setting: dict[str, Any], text: str, cancel: Cancel | None = None) -> None:
        self.began = time.monotonic()
        self.sent: SentRequest | None = None
        self.failure: Exception | None = None
        try:
            self.endpoint = replace(Endpoint.from_setting(setting), cancel=cancel)
            url = f"{self.endpoint.url}/embeddings"
            self.sent = SentRequest(url, {"model": self.endpoint.model, "input": [text]}, self.endpoint)
        except ValueError as exc:
            self.failure = exc

    def result(self) -> dict[str, Any]:
        try:
            if self.sent is None:
                raise self.failure  # type: ignore[misc]
            (vector,) = _vectors(self.sent.url, self.sent.answer(), 1, self.endpoint)
        except (ModelError, ValueError) as exc:
            return {
                "error_class": getattr(exc, "error_class", "bad_setting"),
                "error": str(exc)[:500],
                "ms": self._ms(),
            }
        return {
            "vector": "[" + ",".join(repr(x) for x in vector) + "]",
            "model": self.endpoint.model,
            "dimensions": len(vector),
            "ms": self._ms(),
        }

    def close(self) -> None:
        if self.sent is not None:
            self.sent.close()

    def _ms(self) -> float:
        return round((time.monotonic() - self.began) * 1000, 1)


def embed_one(setting: dict[str, Any], text: str, cancel: Cancel | None = None) -> dict[str, Any]:
    """EmbeddingCall's result, waited for at once."""
    return EmbeddingCall(setting, text, cancel).result()


def probe(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> bool:
    """True when the endpoint answers a one-token request with 2xx (the body is not checked)."""
    return probe_error(endpoint, kind, timeout_s=timeout_s) is None


def probe_error(endpoint: Endpoint, kind: str, *, timeout_s: float | None = None) -> ModelError | None:
    """How a one-token request to the endpoint failed, or None when it answered 2xx. A Timeout
    means the server took the request but did not answer in time: busy, or hung."""
    if kind == "chat":
        url = f"{endpoint.url}/chat/completions"
        payload: dict[str, Any] = {
            "model": endpoint.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "temperature": 0.0,
            "chat_template_kwargs": {"enable_thinking": False},
        }
    elif kind == "embeddings":
        url = f"{endpoint.url}/embeddings"
        payload = {"model": endpoint.model, "input": ["ping"]}
    else:
        raise ValueError(f"kind must be 'chat' or 'embeddings', got {kind!r}")
    try:
        _request(url, payload, endpoint, endpoint.timeout_s if timeout_s is None else timeout_s)
    except ModelError as exc:
        return exc
    return None


def served_models(endpoint: Endpoint, *, timeout_s: float | None = None) -> list[str]:
    """The model ids the endpoint serves (GET /models, OpenAI's {"data": [{"id"}, ...]})."""
    url = f"{endpoint.url}/models"
    raw = _request(url, None, endpoint, endpoint.timeout_s if timeout_s is None else timeout_s)
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadResponse(f"{url} answered with a body that is not JSON: {_snippet(raw)}", url) from None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise BadResponse(f"{url} answered without a data list", url)
    return [item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)]


# -- HTTP ---------------------------------------------------------------------------------


def _post_json(url: str, payload: dict[str, Any], endpoint: Endpoint, timeout_s: float) -> dict[str, Any]:
    return _json_object(url, _request(url, payload, endpoint, timeout_s))


def _json_object(url: str, raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadResponse(f"{url} answered with a body that is not JSON: {_snippet(raw)}", url) from None
    if not isinstance(body, dict):
        raise BadResponse(f"{url} answered with JSON that is not an object: {_snippet(raw)}", url)
    return body


class SentRequest:
    """A POST of JSON sent now, its answer read later on the same thread (answer()): the server
    works while the caller does. Inside PostgreSQL a thread of the caller's own would not do that:
    PL/Python keeps the interpreter's lock through every query it runs, so such a thread moves only
    between the caller's queries. Only a direct connection is sent early; a request through an
    environment proxy goes whole when answered (urllib's handling, as every other call).

    The endpoint's timeout_s counts from the send, but an answer that came while the caller was
    busy is read whatever the time (_Call.wait); its cancel, else the statement's check, is asked
    while connecting, sending and waiting. close() gives the answer up (a server that computes it
    sees its client gone)."""

    def __init__(self, url: str, payload: dict[str, Any], endpoint: Endpoint) -> None:
        self.url, self.payload, self.endpoint = url, payload, endpoint
        self.conn: http.client.HTTPConnection | None = None
        self.failure: ModelError | None = None
        if _through_proxy(url):
            return
        parts = urllib.parse.urlsplit(url)
        cancel = endpoint.cancel
        call = _Call(endpoint.timeout_s, cancel, (cancel and cancel.check) or statement_check())
        http_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = _sliced(http_class, call)(parts.hostname, parts.port, timeout=endpoint.timeout_s)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            if cancel is not None and cancel.cancelled:
                raise Cancelled(f"{url}: the call was given up before it began", url)
            self.conn.request("POST", path, json.dumps(payload).encode(), _headers(endpoint, payload))
        except (OSError, http.client.HTTPException, ModelError) as exc:
            self.close()
            self.failure = exc if isinstance(exc, ModelError) else self._transport_failure(exc)

    def answer(self) -> dict[str, Any]:
        """The 2xx answer's JSON object; the matching ModelError otherwise."""
        if self.failure is not None:
            raise self.failure
        if self.conn is None:
            return _post_json(self.url, self.payload, self.endpoint, self.endpoint.timeout_s)
        try:
            with self.conn.getresponse() as response:
                status = response.status
                raw = b"".join(iter(lambda: response.read1(_READ_CHUNK), b""))
        except (OSError, http.client.HTTPException) as exc:
            raise self._transport_failure(exc) from None
        finally:
            self.close()
        if not 200 <= status < 300:
            raise _status_error(self.url, status, raw)
        return _json_object(self.url, raw)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _transport_failure(self, exc: BaseException) -> ModelError:
        cancel = self.endpoint.cancel
        if cancel is not None and cancel.cancelled:
            return Cancelled(f"{self.url}: the call was given up before it was answered", self.url)
        return _transport_error(self.url, exc, self.endpoint.timeout_s)


def _headers(endpoint: Endpoint, payload: dict[str, Any] | None) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    return headers


def _request(url: str, payload: dict[str, Any] | None, endpoint: Endpoint, timeout_s: float) -> bytes:
    """POST JSON (GET when payload is None) and return the 2xx body; raise the matching
    ModelError otherwise. The endpoint's api_key goes as ``Authorization: Bearer``; its cancel
    may cut the call short (Cancelled).

    ``timeout_s`` bounds the whole call: connecting, sending, the wait for the
    answer (a non-streaming reply arrives only when the generation is done) and
    its reading, each waited for in slices of POLL_S (_Call).
    """
    cancel = endpoint.cancel
    if cancel is not None and cancel.cancelled:
        raise Cancelled(f"{url}: the call was given up before it began", url)
    request = urllib.request.Request(
        url,
        data=None if payload is None else json.dumps(payload).encode(),
        method="GET" if payload is None else "POST",
        headers=_headers(endpoint, payload),
    )
    # read by _Cancellable: a Cancel's own check, else the statement's inside PostgreSQL
    check = (cancel and cancel.check) or statement_check()
    request.call = _Call(timeout_s, cancel, check)  # type: ignore[attr-defined]
    opener = _NO_PROXY if _is_loopback(url) else _DEFAULT
    try:
        with opener.open(request, timeout=timeout_s) as response:
            status = response.status
            raw = b"".join(iter(lambda: response.read1(_READ_CHUNK), b""))  # read1: what has arrived
    except (OSError, http.client.HTTPException) as exc:  # urllib's errors are OSErrors
        if cancel is not None and cancel.cancelled:
            raise Cancelled(f"{url}: the call was given up before it was answered", url) from None
        if isinstance(exc, urllib.error.HTTPError):
            raise _status_error(url, exc.code, _read_error_body(exc)) from None
        if isinstance(exc, urllib.error.URLError):
            raise _transport_error(url, exc.reason, timeout_s) from None
        raise _transport_error(url, exc, timeout_s) from None
    if not 200 <= status < 300:
        raise BadResponse(f"{url} answered HTTP {status}", url)
    return raw


def _transport_error(url: str, reason: object, timeout_s: float) -> ModelError:
    if isinstance(reason, TimeoutError):  # socket.timeout is TimeoutError
        return Timeout(f"{url} did not answer within {timeout_s:g} s", url)
    if isinstance(reason, http.client.IncompleteRead):
        return EndpointDown(f"{url} closed the connection in the middle of its answer", url)
    if isinstance(reason, http.client.RemoteDisconnected | ConnectionError):
        return EndpointDown(f"{url} closed the connection: {reason}", url)
    if isinstance(reason, http.client.HTTPException):
        return BadResponse(f"{url} answered with malformed HTTP: {reason!r}", url)
    if isinstance(reason, socket.gaierror):
        return EndpointDown(f"{url}: unknown host ({reason})", url)
    if isinstance(reason, ssl.SSLError):
        return EndpointDown(f"{url}: TLS failed ({reason})", url)
    if isinstance(reason, OSError):
        return EndpointDown(f"{url} is unreachable: {reason.strerror or reason}", url)
    return EndpointDown(f"{url} is unreachable: {reason}", url)


def _status_error(url: str, status: int, body: bytes) -> ModelError:
    message = _error_message(body)
    if status >= 500:
        return ServerError(f"{url} answered HTTP {status}: {message}", url, status)
    if status >= 400:
        return ClientError(f"{url} answered HTTP {status}: {message}", url, status)
    return BadResponse(f"{url} answered HTTP {status}: {message}", url)


def _read_error_body(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.HTTPException):
        return b""
    finally:
        exc.close()


def _error_message(body: bytes) -> str:
    """The server's own words: OpenAI's {"error": {"message"}}, {"error": "..."} or the text."""
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _snippet(body) or "(empty body)"
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return _snippet(body)


def _snippet(raw: bytes, limit: int = 200) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _is_loopback(url: str) -> bool:
    """Loopback endpoints never go through an environment proxy (no_proxy rarely lists them)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _through_proxy(url: str) -> bool:
    """Whether urllib would send a request to url through an environment proxy."""
    if _is_loopback(url):
        return False
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(
        parts.hostname or ""
    )


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
