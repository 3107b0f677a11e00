"""The embedded runtime: PostgreSQL 18 and llama-server from a Debian forky root.

The build machines run Debian 12 or 13, whose PostgreSQL lacks Apache AGE, and
forky's binaries need a newer glibc than theirs. So the runtime is a minimal
forky root made with debootstrap in EXO_HOME (outside the checkout), and the
server runs in it through chroot as the root's postgres user, listening on
127.0.0.1 so the host's Python reaches it over TCP.

Layout under EXO_HOME:
    root/                       the forky root, complete when MARKER is in it
    root/var/lib/exocortex/     data directory and server log (survive down/up)
    root.partial/               a root being built; never used, removed on failure
    secrets.json                generated passwords (0600)
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path

from exocortex.config import PG_MAJOR, Config
from exocortex.db import ADMIN, load_secrets
from exocortex.runtime.packages import PACKAGE_LIST, read_packages

Progress = Callable[[str], None]

MARKER = ".exo-runtime.json"
PGBIN = f"/usr/lib/postgresql/{PG_MAJOR}/bin"
STATE_DIR = "/var/lib/exocortex"
DATA_DIR = f"{STATE_DIR}/data"
LOG_FILE = f"{STATE_DIR}/postgresql.log"
SOCKET_DIR = "/run/postgresql"
MIN_FREE_BYTES = 2 * 1024**3
NEARLY_FULL_BYTES = 32 * 1024**2
DISK_FULL = "No space left on device"
#: The soft data limit (RLIMIT_DATA) every server process starts under: what never logs in (a
#: parallel worker, a pg_cron job, autovacuum) stays bounded; a session lifts it or bounds it
#: for good at login (sql/065_backend_memory.sql). The hard limit is left as it was.
PROCESS_DATA_SOFT_LIMIT = 256 * 1024**2
CHROOT_ENV = {
    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
    "LC_ALL": "C.UTF-8",
    "DEBIAN_FRONTEND": "noninteractive",
    "HOME": "/var/lib/postgresql",
}


class RuntimeProblem(Exception):
    """A precondition or step of the local runtime failed; the message names the fix."""


ALTERNATIVES = (
    "or use docker compose (docker/compose.yaml), or set EXO_DATABASE_URL to a "
    "PostgreSQL 18 server with the extensions"
)


def check_platform() -> None:
    if not sys.platform.startswith("linux"):
        raise RuntimeProblem(f"the local runtime needs Linux (this is {sys.platform}); {ALTERNATIVES}")
    if os.geteuid() != 0:
        raise RuntimeProblem(
            f"the local runtime needs root (it runs debootstrap and chroot); run as root, {ALTERNATIVES}"
        )


@contextlib.contextmanager
def home_lock(cfg: Config, name: str, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """EXO_HOME/NAME.lock held (flock) against this runtime's other processes, for one command's
    work that two at once would trample; `on_wait` is called first when another holds it. A
    process that dies lets it go."""
    cfg.home.mkdir(parents=True, exist_ok=True)
    with open(cfg.home / f"{name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# -- provisioning -------------------------------------------------------------------------


def packages_digest() -> str:
    names = sorted(p.name for p in read_packages())
    return hashlib.sha256("\n".join(names).encode()).hexdigest()


def is_provisioned(cfg: Config) -> bool:
    return _is_complete(cfg.runtime_root)


def _is_complete(root: Path) -> bool:
    marker = root / MARKER
    return marker.exists() and json.loads(marker.read_text()).get("packages") == packages_digest()


def host_debian_mirror(sources: Path = Path("/etc/apt")) -> str | None:
    """The Debian mirror this host's apt uses (not its security archive)."""
    for path in sorted((sources / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = dict(line.split(":", 1) for line in stanza.splitlines() if re.match(r"^\w[\w-]*:", line))
            suites = fields.get("Suites", "")
            if "deb" in fields.get("Types", "").split() and "security" not in suites:
                uris = fields.get("URIs", "").split()
                if uris and "security" not in uris[0]:
                    return uris[0].rstrip("/")
    lists = [sources / "sources.list", *sorted((sources / "sources.list.d").glob("*.list"))]
    for path in lists:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            m = re.match(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m and "security" not in m.group(1) and "security" not in m.group(2):
                return m.group(1).rstrip("/")
    return None


def ensure_debootstrap(progress: Progress) -> str:
    found = shutil.which("debootstrap")
    if found:
        return found
    if shutil.which("apt-get"):
        progress("installing debootstrap with apt-get")
        result = subprocess.run(
            "apt-get update -qq && apt-get install -y -qq debootstrap",
            shell=True,
            capture_output=True,
            text=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        found = shutil.which("debootstrap")
        if result.returncode == 0 and found:
            return found
        detail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeProblem(
            f"debootstrap is unavailable and apt-get could not install it ({detail[0]}); "
            f"install it with `apt-get install debootstrap`, {ALTERNATIVES}"
        )
    raise RuntimeProblem(
        f"debootstrap is unavailable and this host has no apt-get to install it; "
        f"install debootstrap, {ALTERNATIVES}"
    )


#: Lines of the provisioning log an error shows.
LOG_TAIL_LINES = 15

#: What the screen shows of debootstrap and apt-get: a line when a phase starts (the first line
#: that matches its pattern; {} takes the pattern's groups); every line goes to the log.
DEBOOTSTRAP_PHASES = (
    (re.compile(r"^I: Retrieving (?!Release|Packages|InRelease)"), "downloading the base system"),
    (re.compile(r"^I: Extracting "), "unpacking the base system"),
    (re.compile(r"^I: (Installing|Unpacking) "), "installing the base system"),
    (re.compile(r"^I: Configuring "), "configuring the base system"),
)
APT_PHASES = (
    (re.compile(r"^Get:\d+ \S+ \S+ InRelease"), "reading the package index"),
    (re.compile(r"^\d+ upgraded, (\d+) newly installed"), "downloading {} packages"),
    (re.compile(r"^(Preparing to unpack|Unpacking) "), "unpacking the packages"),
    (re.compile(r"^Setting up "), "setting up the packages"),
)

Phases = tuple[tuple[re.Pattern[str], str], ...]


def provision_log(cfg: Config) -> Path:
    """Where provisioning writes all that debootstrap and apt-get say (the screen shows phases)."""
    return cfg.home / "logs" / "provision.log"


def _run_step(argv: list[str], what: str, log: Path, progress: Progress, phases: Phases = (), **kw) -> None:
    """Run one provisioning command: every line of its output appended to log (with the seconds
    since it started), a progress line when it enters one of its phases, one when it is done.
    A failure names the log and shows its last lines."""
    tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
    began = time.monotonic()
    shown: set[str] = set()
    with (
        open(log, "a", encoding="utf-8") as out,
        subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", **kw
        ) as proc,
    ):
        out.write(f"--- {what}: {' '.join(argv)}\n")
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            tail.append(line)
            out.write(f"[{time.monotonic() - began:6.1f}] {line}\n")
            for pattern, message in phases:
                found = pattern.search(line)
                if found and message not in shown:
                    shown.add(message)
                    progress(f"{what}: {message.format(*found.groups())}")
        proc.wait()
        seconds = time.monotonic() - began
        out.write(f"--- {what}: exit {proc.returncode} after {seconds:.1f} s\n")
    if proc.returncode != 0:
        output = "\n".join(tail)
        if DISK_FULL in output:
            raise OSError(errno.ENOSPC, f"{what} ran out of disk space")
        raise RuntimeProblem(
            f"{what} failed (exit {proc.returncode}); all its output is in {log}, which ends:\n{output}"
        )
    progress(f"{what}: done in {seconds:.0f} s")


#: dpkg in the root, from debootstrap's first dpkg run on: no documentation, manual pages or
#: message translations (nothing reads them there; the server runs in C.UTF-8): about 15% fewer
#: files to write.
DPKG_EXCLUDES = (
    "".join(
        f"path-exclude={path}\n" for path in ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/info/*")
    )
    + "path-exclude=/usr/share/locale/*/LC_MESSAGES/*\n"
)
#: While the root is built in root.partial (removed when the build fails), dpkg skips its fsync
#: of every file, the slowest part of unpacking on a small machine; the setting goes once the
#: root is complete, so a later top-up of a root in use (a changed package list) syncs as usual.
DPKG_BUILD_ONLY = "force-unsafe-io\n"


def _configure_dpkg(root: Path) -> Path:
    """dpkg's settings for the build (before debootstrap runs); returns the build-only file."""
    folder = root / "etc/dpkg/dpkg.cfg.d"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "exocortex").write_text(f"# exocortex runtime root\n{DPKG_EXCLUDES}")
    build_only = folder / "exocortex-build"
    build_only.write_text(f"# exocortex: while the root is built\n{DPKG_BUILD_ONLY}")
    return build_only


def _configure_root(root: Path) -> None:
    """Settings the root needs before the packages go in (see DESIGN.md)."""
    (root / "etc/postgresql-common").mkdir(parents=True, exist_ok=True)
    (root / "etc/postgresql-common/createcluster.conf").write_text("create_main_cluster = false\n")
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\n# no service starts inside the exocortex runtime root\nexit 101\n")
    policy.chmod(0o755)
    # The testing suite's Release file can lag behind its Valid-Until date.
    # No package descriptions in other languages either.
    (root / "etc/apt/apt.conf.d/99exocortex").write_text(
        'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\nAcquire::Languages "none";\n'
    )


def _mounted(path: Path) -> bool:
    target = str(path.resolve())
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)


def mount_proc(root: Path) -> None:
    if not _mounted(root / "proc"):
        subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)


def unmount_proc(root: Path) -> None:
    if _mounted(root / "proc"):
        subprocess.run(["umount", "-l", str(root / "proc")], check=True)


def _install_packages(root: Path, log: Path, progress: Progress) -> None:
    names = [p.name for p in read_packages()]
    mount_proc(root)
    try:
        apt = "apt-get -o Dpkg::Use-Pty=0"
        # --no-upgrade: topping up a root whose server may be running never replaces what is installed.
        install = f"{apt} install -y -q --no-upgrade {' '.join(names)}"
        _run_step(
            ["chroot", str(root), "sh", "-c", f"{apt} update -q && {install}"],
            "packages",
            log,
            progress,
            APT_PHASES,
            env=CHROOT_ENV,
        )
    finally:
        unmount_proc(root)


def provision(cfg: Config, progress: Progress, seed: Path | None = None) -> bool:
    """Build (or top up) the forky root. Returns True when anything was done.

    The root is built in root.partial and renamed only when complete, so a run
    that fails (disk full, network gone) never leaves a root that looks usable.
    A complete `seed` root with the same packages is copied instead of built
    (the test suite's runtime starts as a copy of the user's, read, never changed).
    """
    check_platform()
    root = cfg.runtime_root
    if is_provisioned(cfg):
        return False
    log = provision_log(cfg)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"exo db up: provisioning {root}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    progress(f"provisioning the runtime in {cfg.home}; all the output goes to {log}")
    try:
        if (root / MARKER).exists():
            progress(f"package list changed ({PACKAGE_LIST}); installing into the existing root")
            _install_packages(root, log, progress)
        elif seed is not None and _is_complete(seed):
            _copy_root(seed, cfg, log, progress)
        else:
            _build_root(cfg, log, progress)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise RuntimeProblem(
                f"disk full while provisioning the runtime in {cfg.home}: free at least "
                f"{MIN_FREE_BYTES // 1024**3} GiB there (or point EXO_HOME elsewhere) and rerun "
                f"`exo db up`; the half-built root was removed"
            ) from None
        raise
    _write_marker(root)
    return True


def _build_root(cfg: Config, log: Path, progress: Progress) -> None:
    partial = _fresh_partial(cfg)
    free = shutil.disk_usage(cfg.home).free
    if free < MIN_FREE_BYTES:
        raise OSError(errno.ENOSPC, f"only {free // 1024**2} MiB free in {cfg.home}")
    debootstrap = ensure_debootstrap(progress)
    mirror = cfg.debian_mirror or host_debian_mirror()
    if not mirror:
        raise RuntimeProblem(
            "found no Debian mirror in /etc/apt; set EXO_DEBIAN_MIRROR to a Debian archive URL"
        )
    script = Path("/usr/share/debootstrap/scripts") / cfg.debian_suite
    if not script.exists():  # Debian 12's debootstrap predates forky: sid's script works
        script = script.with_name("sid")
    progress(f"debootstrap {cfg.debian_suite} (minbase) from {mirror}: about a minute with the packages")
    try:
        build_only = _configure_dpkg(partial)
        _run_step(
            [debootstrap, "--variant=minbase", cfg.debian_suite, str(partial), mirror, str(script)],
            "debootstrap",
            log,
            progress,
            DEBOOTSTRAP_PHASES,
        )
        _configure_root(partial)
        progress(f"installing {len(read_packages())} packages from {PACKAGE_LIST} and what they need")
        _install_packages(partial, log, progress)
        (partial / "var/cache/apt/archives").mkdir(exist_ok=True)
        subprocess.run(["chroot", str(partial), "apt-get", "clean"], env=CHROOT_ENV, check=True)
        build_only.unlink()
        partial.rename(cfg.runtime_root)
    except BaseException as exc:
        # debootstrap reports a full disk as "Couldn't download ..." and keeps the
        # cause in its log; look there and at the disk before the cleanup frees it.
        log = partial / "debootstrap/debootstrap.log"
        full = shutil.disk_usage(cfg.home).free < NEARLY_FULL_BYTES or (
            log.exists() and DISK_FULL in log.read_text(errors="replace")
        )
        unmount_proc(partial)
        shutil.rmtree(partial, ignore_errors=True)
        if full and not (isinstance(exc, OSError) and exc.errno == errno.ENOSPC):
            raise OSError(errno.ENOSPC, f"{cfg.home} filled up while provisioning") from exc
        raise


def _copy_root(seed: Path, cfg: Config, log: Path, progress: Progress) -> None:
    """Copy a complete root without its cluster, its sockets or its mounted /proc."""
    partial = _fresh_partial(cfg)
    progress(f"copying the runtime root {seed} into {partial}")
    partial.mkdir(parents=True)
    try:
        _run_step(
            ["sh", "-c", 'tar -C "$1" --one-file-system --exclude=./var/lib/exocortex '
             '--exclude=./run/postgresql -cf - . | tar -C "$2" -xpf -', "copy", str(seed), str(partial)],
            "copy",
            log,
            progress,
        )  # fmt: skip
        partial.rename(cfg.runtime_root)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _fresh_partial(cfg: Config) -> Path:
    partial = cfg.home / "root.partial"
    if partial.exists():
        unmount_proc(partial)
        shutil.rmtree(partial)
    cfg.home.mkdir(parents=True, exist_ok=True)
    return partial


def _write_marker(root: Path) -> None:
    (root / MARKER).write_text(
        json.dumps({"packages": packages_digest(), "provisioned_at": time.time()}) + "\n"
    )


# -- the cluster --------------------------------------------------------------------------


def _in_root(cfg: Config, argv: list[str], user: str | None = "postgres", **kw):
    spec = [f"--userspec={user}:{user}"] if user else []
    return subprocess.run(
        ["chroot", *spec, str(cfg.runtime_root), *argv],
        env=CHROOT_ENV,
        capture_output=True,
        text=True,
        **kw,
    )


def server_conf(cfg: Config) -> str:
    """The shared settings file plus what only the embedded runtime decides."""
    shared = files("exocortex.runtime").joinpath("postgresql.conf").read_text()
    return (
        "# Written by `exo db up` on every start; set EXO_PG_PORT / EXO_DB_NAME instead.\n"
        f"{shared}\n"
        f"listen_addresses = '{cfg.listen_addresses}'\n"
        f"port = {cfg.port}\n"
        f"unix_socket_directories = '{SOCKET_DIR}'\n"
        f"cron.database_name = '{cfg.database}'\n"
    )


def init_cluster(cfg: Config, progress: Progress) -> bool:
    root = cfg.runtime_root
    data = root / DATA_DIR.lstrip("/")
    if (data / "PG_VERSION").exists():
        return False
    progress(f"initdb {DATA_DIR} (UTF-8)")
    state = root / STATE_DIR.lstrip("/")
    state.mkdir(parents=True, exist_ok=True)
    pwfile = state / ".initdb-password"
    pwfile.write_text(load_secrets(cfg)[ADMIN] + "\n")
    try:
        _in_root(cfg, ["chown", "-R", "postgres:postgres", STATE_DIR], user=None, check=True)
        result = _in_root(
            cfg,
            [
                f"{PGBIN}/initdb", "-D", DATA_DIR, "-E", "UTF8", "--locale=C.UTF-8",
                "-U", "postgres", f"--pwfile={STATE_DIR}/.initdb-password",
                "--auth-local=peer", "--auth-host=scram-sha-256",
            ],
        )  # fmt: skip
    finally:
        pwfile.unlink(missing_ok=True)
    if result.returncode != 0:
        if DISK_FULL in result.stderr:
            raise RuntimeProblem(f"disk full during initdb in {cfg.home}; free space and rerun")
        raise RuntimeProblem(f"initdb failed:\n{result.stderr.strip()}")
    with open(data / "postgresql.conf", "a") as f:
        f.write("\ninclude = 'exocortex.conf'\n")
    return True


def is_running(cfg: Config) -> bool:
    if not (cfg.runtime_root / DATA_DIR.lstrip("/") / "PG_VERSION").exists():
        return False
    mount_proc(cfg.runtime_root)  # pg_ctl status looks the postmaster's pid up in /proc
    return _in_root(cfg, [f"{PGBIN}/pg_ctl", "status", "-D", DATA_DIR]).returncode == 0


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def require_port_free(port: int) -> None:
    if not port_free(port):
        raise RuntimeProblem(
            f"port {port} on 127.0.0.1 is in use by another program; stop it or set "
            f"EXO_PG_PORT to a free port"
        )


def start(cfg: Config, progress: Progress) -> bool:
    root = cfg.runtime_root
    if is_running(cfg):
        return False
    require_port_free(cfg.port)
    (root / DATA_DIR.lstrip("/") / "exocortex.conf").write_text(server_conf(cfg))
    _in_root(cfg, ["mkdir", "-p", SOCKET_DIR], user=None, check=True)
    _in_root(cfg, ["chown", "postgres:postgres", SOCKET_DIR], user=None, check=True)
    progress(f"starting PostgreSQL {PG_MAJOR} on 127.0.0.1:{cfg.port}")
    result = _in_root(
        cfg,
        [f"{PGBIN}/pg_ctl", "start", "-w", "-t", "120", "-D", DATA_DIR, "-l", LOG_FILE],
        preexec_fn=_soft_data_limit,
    )
    if result.returncode != 0:
        log = root / LOG_FILE.lstrip("/")
        last = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
        raise RuntimeProblem("PostgreSQL did not start:\n" + "\n".join([result.stderr.strip(), *last]))
    ready = _in_root(cfg, [f"{PGBIN}/pg_isready", "-h", "127.0.0.1", "-p", str(cfg.port), "-t", "30"])
    if ready.returncode != 0:
        raise RuntimeProblem(f"PostgreSQL started but is not accepting connections: {ready.stdout}")
    return True


def _soft_data_limit() -> None:
    """In the child that becomes pg_ctl, and so the postmaster: PROCESS_DATA_SOFT_LIMIT."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = PROCESS_DATA_SOFT_LIMIT if hard == resource.RLIM_INFINITY else min(PROCESS_DATA_SOFT_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def stop(cfg: Config) -> bool:
    if not is_running(cfg):
        if cfg.runtime_root.exists():
            unmount_proc(cfg.runtime_root)
        return False
    result = _in_root(cfg, [f"{PGBIN}/pg_ctl", "stop", "-m", "fast", "-w", "-D", DATA_DIR])
    if result.returncode != 0:
        raise RuntimeProblem(f"pg_ctl stop failed: {result.stderr.strip()}")
    unmount_proc(cfg.runtime_root)
    return True


def data_size(cfg: Config) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(cfg.runtime_root / DATA_DIR.lstrip("/")):
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def data_dir(cfg: Config) -> Path:
    return cfg.runtime_root / DATA_DIR.lstrip("/")


def client_argv(cfg: Config, tool: str) -> list[str]:
    """argv that runs one of the runtime's client tools (psql, pg_dump) from the host."""
    return ["chroot", str(cfg.runtime_root), f"{PGBIN}/{tool}"]
