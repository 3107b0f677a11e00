"""Extraction in a separate process, with a time limit and a memory limit per file.

`exo ingest` never parses a file in its own process. A child process
(`python -m exocortex.ingest.sandbox MEMORY_BYTES`) extracts one file at a
time under an address-space limit (RLIMIT_DATA); the parent waits for each
reply until the file's deadline and kills the child past it, then starts a new
one for the next file. A file that runs past the limit ends `timeout`, one that
needs more memory `too_large`, and one that kills the child `crashed`.

The text comes back through the pipe in blocks and goes on to the database in
blocks (`Sandbox.text`), so the parent holds no whole text: its memory does not
grow with the size of a file.

Protocol: each request and each reply header is one JSON line; a successful
reply is followed by `bytes` bytes of UTF-8 text.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from exocortex.ingest.extract import ExtractionError, extract, is_junk, wiki_links

BLOCK = 1 << 20
_SELF = "/proc/self/exe"


@dataclass(frozen=True)
class Limits:
    """What one file may cost: the settings ingest.max_file_bytes, file_timeout_s, extract_memory_bytes."""

    max_bytes: int
    timeout_s: float
    memory_bytes: int


@dataclass
class Result:
    metadata: dict
    needs_ocr: bool
    links: list[str]
    """Targets of [[wiki links]] (Markdown files only)."""
    size: int
    """Bytes of UTF-8 text that Sandbox.text() yields."""


class Sandbox:
    """One extraction child process, started when first needed; use as a context manager."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self._child: subprocess.Popen | None = None
        self._buffer = bytearray()
        self._unread = 0

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the child (it would also stop by itself at the end of its input)."""
        child = self._child
        if child is None:
            return
        try:
            child.stdin.close()
            child.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._stop()
            return
        self._discard(child)

    def extract(self, path: Path, extension: str) -> Result:
        """Extract one file; every failure, a timeout included, is an ExtractionError.

        On success read the whole text with text() before the next call."""
        if self._unread:  # the last text was not read: the pipe is out of step
            self._stop()
        deadline = time.monotonic() + self.limits.timeout_s
        child = self._start(deadline)
        request = {"path": os.fsdecode(path), "extension": extension, "max_bytes": self.limits.max_bytes}
        try:
            child.stdin.write(json.dumps(request).encode() + b"\n")
            child.stdin.flush()
        except BrokenPipeError:
            pass  # it died; reading says how
        reply = json.loads(self._read_line(deadline))
        if not reply["ok"]:
            raise ExtractionError(reply["error_class"], reply["message"])
        self._unread = reply["bytes"]
        return Result(reply["metadata"], reply["needs_ocr"], reply["links"], reply["bytes"])

    def text(self) -> Iterator[bytes]:
        """The text of the last extraction, in blocks of UTF-8 (split anywhere, even inside a character)."""
        while self._unread:
            block = self._read(min(self._unread, BLOCK), time.monotonic() + self.limits.timeout_s)
            self._unread -= len(block)
            yield block

    # -- the child ----------------------------------------------------------------------------

    def _start(self, deadline: float) -> subprocess.Popen:
        if self._child is not None:
            if self._child.poll() is None:
                return self._child
            self._discard(self._child)  # died between two files: its pipes go with it
        self._child = subprocess.Popen(
            [sys.executable, "-m", "exocortex.ingest.sandbox", str(self.limits.memory_bytes)],
            # This very interpreter: its path may not be reachable by an unprivileged user whose
            # process is already running it; argv[0] still finds the virtual environment.
            executable=_SELF if os.path.exists(_SELF) else None,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._buffer.clear()
        self._unread = 0
        if json.loads(self._read_line(deadline)) != {"ready": True}:
            self._stop()
            raise ExtractionError("crashed", "the extraction process did not start")
        return self._child

    def _stop(self) -> None:
        """End the child: SIGTERM (it kills a running LibreOffice on its way out), then SIGKILL."""
        child = self._child
        if child is None:
            return
        child.terminate()
        try:
            child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        self._discard(child)

    def _discard(self, child: subprocess.Popen) -> None:
        """Close the pipes of an ended child and forget what was left in them."""
        for pipe in (child.stdin, child.stdout):
            with contextlib.suppress(OSError):  # a request still buffered for a child that died
                pipe.close()
        self._child = None
        self._buffer.clear()
        self._unread = 0

    def _fill(self, deadline: float) -> None:
        """Read what the child has written, waiting at most until deadline."""
        child = self._child
        fd = child.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            self._stop()
            raise ExtractionError(
                "timeout", f"extraction took over {self.limits.timeout_s:g} s (setting ingest.file_timeout_s)"
            )
        data = os.read(fd, BLOCK)
        if not data:
            code = child.wait()
            self._discard(child)
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            raise ExtractionError("crashed", f"the extraction process died ({how})")
        self._buffer += data

    def _read_line(self, deadline: float) -> bytes:
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0:
            searched = len(self._buffer)
            self._fill(deadline)
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def _read(self, limit: int, deadline: float) -> bytes:
        if not self._buffer:
            self._fill(deadline)
        block = bytes(self._buffer[:limit])
        del self._buffer[:limit]
        return block


# -- the child process ------------------------------------------------------------------------


def _answer(request: dict) -> tuple[dict, bytes]:
    try:
        result = extract(Path(request["path"]), request["max_bytes"], request["extension"])
        if is_junk(result.text):
            raise ExtractionError("junk", "over 90% of lines are delimiter-dense data")
        links = wiki_links(result.text) if request["extension"] == "md" else []
        body = result.text.encode("utf-8")
        result.text = ""
        if len(body) > request["max_bytes"]:
            raise ExtractionError(
                "too_large",
                f"the extracted text is {len(body)} bytes, over the limit of {request['max_bytes']}",
            )
    except ExtractionError as exc:
        return {"ok": False, "error_class": exc.error_class, "message": exc.message}, b""
    except MemoryError:
        return {
            "ok": False,
            "error_class": "too_large",
            "message": "extracting it needs more memory than allowed",
        }, b""
    header = {"ok": True, "metadata": result.metadata, "needs_ocr": result.needs_ocr, "links": links}
    return {**header, "bytes": len(body)}, body


def serve(memory_bytes: int) -> None:
    """Answer requests from stdin until it closes."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, hard))
    requests = os.fdopen(0, "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the replies
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # unwinds, so a running soffice is killed
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which closes stdin
    replies.write(b'{"ready": true}\n')
    replies.flush()
    for line in requests:
        header, body = _answer(json.loads(line))
        replies.write(json.dumps(header).encode() + b"\n")
        replies.write(body)
        replies.flush()
        del body


if __name__ == "__main__":
    serve(int(sys.argv[1]))
