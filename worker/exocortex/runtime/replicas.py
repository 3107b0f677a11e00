"""Read replicas: hot standbys of the runtime's cluster, by PostgreSQL's streaming replication.

A replica is a physical copy of the whole cluster (every database in it) made with
pg_basebackup, kept current by a walreceiver that streams from the primary through a
replication slot of its own, and open to reads (hot_standby). Writes, the worker and pg_cron
stay on the primary; a reader connects to a replica exactly as to the primary (the roles and
their passwords are the primary's: the catalog is copied).

A local replica's data directory is beside the primary's in the runtime root
(var/lib/exocortex/replicas/NAME/data, its log beside it), its server the runtime's own
binaries on a port of its own. The replication role (REPLICATOR) has a generated password
kept with the others (secrets.json).

The registry, EXO_HOME/replicas.json, records each replica by name with its host, port and
slot; a replica on another machine (`add --host H`) is a record without a local data directory,
and read routing (EXO_READER_URLS) reads the same records.

A replica on another machine streams as a replication role of its own (exo_replica_NAME, the
slot's name, with a generated password kept in secrets.json), let in by one pg_hba.conf line from
H's address only; `add --host` prepares the primary (role, line, slot) and prints the shell script
that makes the standby on H (pg_basebackup, standby.signal, its settings, pg_ctl start): nothing
here logs in to H. `remove` drops that role and line with the slot, so the other host's credential
dies with its replica.

Every replica runs with hot_standby_feedback: the primary's vacuum keeps the rows a read on the
standby still sees, so a long read is not cancelled by replay (the price: the primary's dead rows
wait for the standby's longest read; past max_standby_streaming_delay replay still wins).

Stale slots: a slot keeps every WAL segment its replica has not replayed, so one left behind
would fill the disk. `remove` drops the slot whatever state the replica is in (its data
directory gone by hand included); `promote` drops it at once (the promoted server streams
no more); `add` reuses a name only through a fresh slot; `list` shows slots of the
exo_replica_ prefix that no replica owns, and `remove NAME` drops those too. A replica that
stays stopped pins WAL only up to max_slot_wal_keep_size (runtime/postgresql.conf): past it
the primary gives the slot up (wal_status lost) and the replica must be removed and added again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row

from exocortex.client import routing
from exocortex.config import Config
from exocortex.db import admin_url, connect, load_secrets, role_url, save_secret
from exocortex.runtime import local, remote
from exocortex.runtime.local import (
    CHROOT_ENV,
    PGBIN,
    PROCESS_DATA_SOFT_LIMIT,
    STATE_DIR,
    Progress,
    RuntimeProblem,
)
from exocortex.runtime.packages import read_packages

#: The login role replicas stream as: REPLICATION, nothing else.
REPLICATOR = "exo_replicator"
SLOT_PREFIX = "exo_replica_"
REPLICAS_DIR = f"{STATE_DIR}/replicas"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
#: The state `list` gives a slot of the prefix that no replica owns.
ORPHAN = "orphan slot"
#: How long `add` waits for a started replica to stream from the primary.
STREAMING_WAIT_S = 60.0


class ReplicaProblem(RuntimeProblem):
    """A replica command that cannot go on; the message names why and what to do."""


@dataclass(frozen=True)
class Replica:
    """One replica as the registry records it."""

    name: str
    host: str
    port: int
    slot: str
    created_at: float
    data_dir: str | None = None
    """In the runtime root, for a local replica; None for one on another machine."""
    promoted: bool = False
    """pg_promote ran: a primary of its own now, no longer fed by the runtime's server."""
    role: str | None = None
    """The replication role of its own it streams as (a replica on another machine); None: REPLICATOR."""

    @property
    def is_local(self) -> bool:
        return self.data_dir is not None

    @property
    def streams_as(self) -> str:
        return self.role or REPLICATOR


# -- the registry ---------------------------------------------------------------------------


def registry_file(cfg: Config) -> Path:
    return cfg.home / "replicas.json"


def load(cfg: Config) -> list[Replica]:
    path = registry_file(cfg)
    if not path.exists():
        return []
    try:
        records = json.loads(path.read_text())["replicas"]
        return [Replica(**record) for record in records]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ReplicaProblem(f"{path} is not a replica registry ({exc}); fix or delete it") from None


def find(cfg: Config, name: str) -> Replica:
    for replica in load(cfg):
        if replica.name == name:
            return replica
    known = ", ".join(r.name for r in load(cfg)) or "none"
    raise ReplicaProblem(f"no replica named {name!r} (replicas: {known}; `exo db replica list`)")


def _save(cfg: Config, replicas: list[Replica]) -> None:
    path = registry_file(cfg)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps({"replicas": [dataclasses.asdict(r) for r in replicas]}, indent=2) + "\n")
    partial.replace(path)


def _locked(cfg: Config) -> contextlib.AbstractContextManager[None]:
    """One replica command at a time changes the registry (and makes slots and directories)."""
    return local.home_lock(cfg, "replicas")


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise ReplicaProblem(
            f"replica name {name!r}: use a lower-case letter, then up to 31 lower-case letters, digits "
            f"or underscores (it names the replication slot {SLOT_PREFIX}NAME)"
        )
    return name


def _next_name(taken: set[str]) -> str:
    n = 1
    while f"replica{n}" in taken:
        n += 1
    return f"replica{n}"


#: A replica's default port is the first free one from EXO_PG_PORT + this: the ports just above the
#: runtime's are the model servers' (54330 and 54331 by default, migrations/0004's settings).
PORT_OFFSET = 100


def _next_port(cfg: Config, taken: set[int]) -> int:
    first = cfg.port + PORT_OFFSET if cfg.port + PORT_OFFSET < 65436 else 49152
    for port in range(first, first + 100):
        if port not in taken and local.port_free(port):
            return port
    raise ReplicaProblem(f"found no free port from {first} to {first + 99}; give one with --port")


# -- connections ----------------------------------------------------------------------------


def url(cfg: Config, replica: Replica, role: str, dbname: str | None = None) -> str:
    """The URL of one of the roles (or a profile's) on a replica: the primary's, at its host and port."""
    return make_conninfo(role_url(cfg, role, dbname), host=replica.host, port=replica.port)


def replicator_password(cfg: Config, role: str = REPLICATOR) -> str:
    known = load_secrets(cfg).get(role)
    if known:
        return known
    save_secret(cfg, role, secrets.token_urlsafe(24))
    return load_secrets(cfg)[role]


def primary_conninfo(cfg: Config, replica: Replica, primary_host: str = "127.0.0.1") -> str:
    """How a replica reaches the primary; application_name names it in pg_stat_replication."""
    return make_conninfo(
        host=primary_host,
        port=cfg.port,
        user=replica.streams_as,
        password=replicator_password(cfg, replica.streams_as),
        application_name=replica.name,
    )


def _primary(cfg: Config) -> psycopg.Connection:
    return connect(admin_url(cfg, "postgres"), "exo-db-replica", autocommit=True, connect_timeout=10)


# -- the primary's side ---------------------------------------------------------------------

#: What the primary needs to feed one more replica; each a problem message or null.
PRIMARY_NEEDS = """
select case when current_setting('wal_level') = 'minimal'
            then 'wal_level is minimal (replica is needed)' end,
       case when current_setting('max_wal_senders')::int
                 < (select count(*) from pg_catalog.pg_stat_replication) + 2
            then format('max_wal_senders is %s, %s in use (pg_basebackup takes two)',
                        current_setting('max_wal_senders'), (select count(*) from pg_catalog.pg_stat_replication)) end,
       case when current_setting('max_replication_slots')::int
                 <= (select count(*) from pg_catalog.pg_replication_slots)
            then format('max_replication_slots is %s, all in use', current_setting('max_replication_slots')) end
"""


def _primary_problems(cfg: Config) -> list[str]:
    with _primary(cfg) as conn:
        return [p for p in conn.execute(PRIMARY_NEEDS).fetchone() if p]


def _replication_role(cfg: Config, role: str, connection_limit: int) -> bool:
    """Make a login role that may only replicate, or set its password; True when it was made."""
    with _primary(cfg) as conn:
        verb = (
            "alter"
            if conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone()
            else "create"
        )
        conn.execute(
            sql.SQL("{} role {} login replication noinherit connection limit {} password {}").format(
                sql.SQL(verb), sql.Identifier(role), sql.Literal(connection_limit),
                sql.Literal(replicator_password(cfg, role)),
            )
        )  # fmt: skip
    return verb == "create"


def prepare_primary(cfg: Config, progress: Progress) -> list[str]:
    """The replication role (made, its password set), the settings and a pg_hba line for
    replication from 127.0.0.1. Returns what was done to the primary, one line each."""
    done = []
    if _replication_role(cfg, REPLICATOR, 20):
        done.append(f"made the replication role {REPLICATOR} (its password is in {cfg.secrets_file})")
    done += _prepare_settings(cfg, progress)
    if _allow_replication(cfg, replicator_password(cfg)):
        done.append("added a pg_hba.conf line for replication from 127.0.0.1 and reloaded the primary")
    return done


def _prepare_settings(cfg: Config, progress: Progress) -> list[str]:
    """The settings come from runtime/postgresql.conf, rewritten and reloaded; a server started
    before the ones that need a restart were there is restarted once (and this says so)."""
    done = []
    # The primary's settings as `exo db up` writes them, reloaded: what a reload applies (the WAL a
    # slot may keep) takes effect now; what needs a restart (the rest) is checked next.
    (local.data_dir(cfg) / "exocortex.conf").write_text(local.server_conf(cfg))
    with _primary(cfg) as conn:
        conn.execute("select pg_catalog.pg_reload_conf()")
    problems = _primary_problems(cfg)
    if problems:
        progress(f"restarting the primary: {'; '.join(problems)}")
        local.stop(cfg)
        local.start(cfg, progress)
        still = _primary_problems(cfg)
        if still:
            raise ReplicaProblem(
                f"the primary cannot feed a replica: {'; '.join(still)}; a value set with ALTER SYSTEM "
                f"(postgresql.auto.conf) overrides runtime/postgresql.conf: reset it and run `exo db down` "
                f"and `exo db up`"
            )
        done.append(f"the primary needed a restart ({'; '.join(problems)}): restarted it")
    return done


def _allow_replication(cfg: Config, password: str) -> bool:
    """A replication connection of REPLICATOR from 127.0.0.1 is let in (initdb's pg_hba.conf
    already has the line): if not, add one and reload. True when the line was added."""
    attempt = make_conninfo(
        host="127.0.0.1", port=cfg.port, user=REPLICATOR, password=password, replication="true"
    )
    try:
        psycopg.connect(attempt, connect_timeout=10).close()
        return False
    except psycopg.OperationalError as exc:
        if "pg_hba.conf" not in str(exc):
            raise ReplicaProblem(
                f"the replication role cannot connect to the primary: {exc}".strip()
            ) from None
    with _primary(cfg) as conn:
        with open(host_path(cfg, conn.execute("show hba_file").fetchone()[0]), "a") as f:
            f.write(
                f"# exo db replica add\nhost    replication     {REPLICATOR}  127.0.0.1/32  scram-sha-256\n"
            )
        conn.execute("select pg_catalog.pg_reload_conf()")
    time.sleep(0.5)  # the postmaster rereads pg_hba.conf on SIGHUP, a moment after
    psycopg.connect(attempt, connect_timeout=10).close()
    return True


def _drop_slot(cfg: Config, slot: str) -> bool:
    """Drop a slot on the primary, ending the walsender that holds it; True when one was there."""
    with _primary(cfg) as conn:
        active = conn.execute(
            "select active_pid from pg_catalog.pg_replication_slots where slot_name = %s", (slot,)
        ).fetchone()
        if active is None:
            return False
        if active[0]:
            conn.execute("select pg_catalog.pg_terminate_backend(%s)", (active[0],))
            for _ in range(50):  # the walsender lets the slot go as it exits
                if not conn.execute(
                    "select active from pg_catalog.pg_replication_slots where slot_name = %s", (slot,)
                ).fetchone()[0]:
                    break
                time.sleep(0.1)
        conn.execute("select pg_catalog.pg_drop_replication_slot(%s)", (slot,))
        return True


# -- a local replica's server ---------------------------------------------------------------
# Run as local.py runs the primary's (its helpers are private there): in the root through chroot,
# as the root's postgres user, pg_ctl under the soft data limit every server process starts with.


def _in_root(cfg: Config, argv: list[str], user: str | None = "postgres", env: dict | None = None, **kw):
    spec = [f"--userspec={user}:{user}"] if user else []
    return subprocess.run(
        ["chroot", *spec, str(cfg.runtime_root), *argv],
        env={**CHROOT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        **kw,
    )


def _soft_data_limit() -> None:
    """In the child that becomes pg_ctl, and so the replica's postmaster: PROCESS_DATA_SOFT_LIMIT."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = PROCESS_DATA_SOFT_LIMIT if hard == resource.RLIM_INFINITY else min(PROCESS_DATA_SOFT_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def host_path(cfg: Config, in_root: str) -> Path:
    return cfg.runtime_root / in_root.lstrip("/")


def log_file(replica: Replica) -> str:
    return str(Path(replica.data_dir).parent / "postgresql.log")


def _conf_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def server_conf(
    cfg: Config, replica: Replica, primary_host: str = "127.0.0.1", listen: str | None = None
) -> str:
    """The runtime's settings on the replica's port (and addresses, `listen`), and where a standby
    streams from. hot_standby_feedback: a long read is not cancelled by the replay of a vacuum."""
    conf = local.server_conf(
        dataclasses.replace(cfg, port=replica.port, listen_addresses=listen or cfg.listen_addresses)
    )
    conf += f"# replica {replica.name}\nhot_standby = on\nhot_standby_feedback = on\n"
    if not replica.promoted:
        conf += (
            f"primary_conninfo = {_conf_string(primary_conninfo(cfg, replica, primary_host))}\n"
            f"primary_slot_name = {_conf_string(replica.slot)}\n"
        )
    return conf


def is_running(cfg: Config, replica: Replica) -> bool:
    if not replica.is_local or not host_path(cfg, f"{replica.data_dir}/PG_VERSION").exists():
        return False
    local.mount_proc(cfg.runtime_root)
    return _in_root(cfg, [f"{PGBIN}/pg_ctl", "status", "-D", replica.data_dir]).returncode == 0


def start(cfg: Config, replica: Replica) -> bool:
    """Start a recorded local replica and its reader watchdog; False when the server was running
    (its watchdog is started if it was not)."""
    started = _start_server(cfg, replica)
    if not replica.promoted:
        start_watchdog(cfg, replica)
    return started


def _start_server(cfg: Config, replica: Replica) -> bool:
    """Start a local replica's server (its configuration written afresh, as the primary's is);
    False when it was running."""
    if is_running(cfg, replica):
        return False
    local.require_port_free(replica.port)
    # It holds the replication password: inside the data directory, which only postgres may enter.
    host_path(cfg, f"{replica.data_dir}/exocortex.conf").write_text(server_conf(cfg, replica))
    result = _in_root(
        cfg,
        [f"{PGBIN}/pg_ctl", "start", "-w", "-t", "120", "-D", replica.data_dir, "-l", log_file(replica)],
        preexec_fn=_soft_data_limit,
    )
    if result.returncode != 0:
        log = host_path(cfg, log_file(replica))
        last = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
        raise ReplicaProblem(
            f"replica {replica.name} did not start:\n" + "\n".join([result.stderr.strip(), *last])
        )
    return True


def stop(cfg: Config, replica: Replica) -> bool:
    """Stop a replica's watchdog, then its server when it is local; False when no server of
    this machine's was running."""
    stop_watchdog(cfg, replica)
    if not is_running(cfg, replica):
        return False
    result = _in_root(cfg, [f"{PGBIN}/pg_ctl", "stop", "-m", "fast", "-w", "-D", replica.data_dir])
    if result.returncode != 0:
        raise ReplicaProblem(f"pg_ctl stop of replica {replica.name} failed: {result.stderr.strip()}")
    return True


def start_all(cfg: Config) -> list[str]:
    """`exo db up`: start every local replica after the primary, and the watchdog of each on
    another machine; a replica that cannot start is reported, and the others start."""
    lines = []
    for replica in load(cfg):
        if not replica.is_local:
            if not replica.promoted:
                pid = start_watchdog(cfg, replica)
                watchdog = f"runs (pid {pid})" if pid else f"ended: {_watchdog_file(cfg, replica, 'log')}"
                lines.append(
                    f"replica {replica.name} on {replica.host}:{replica.port}: its watchdog {watchdog}"
                )
            continue
        try:
            started = start(cfg, replica)
        except RuntimeProblem as exc:
            lines.append(f"replica {replica.name}: {exc}")
            continue
        lines.append(
            f"replica {replica.name} on 127.0.0.1:{replica.port}: {'started' if started else 'running'}"
        )
    return lines


def stop_all(cfg: Config) -> list[str]:
    """`exo db down`: stop every local replica (before the primary), and the watchdog of each on
    another machine (the standby there runs on)."""
    lines = []
    for replica in load(cfg):
        if replica.is_local:
            lines.append(f"replica {replica.name}: {'stopped' if stop(cfg, replica) else 'was not running'}")
        elif stop_watchdog(cfg, replica):
            lines.append(f"replica {replica.name} on {replica.host}:{replica.port}: stopped its watchdog")
    return lines


# -- the reader watchdog on a standby -------------------------------------------------------
# On the primary, pg_cron's job exo-reader-watchdog (sql/060_reader_watchdog.sql) runs
# exo_private.stop_runaway_readers() every 10 s in each exo database: it stops a reader that
# lifted its own statement_timeout (a role default any session may change). pg_cron runs no job
# on a hot standby, and role settings cannot be made binding, so each replica has a process of its
# own on the primary's machine, `exo db replica watch NAME`, that runs the same function on the
# standby for each database whose watchdog job the primary schedules (cron.job is replicated with
# the rest), at that job's interval and as its user. add and `exo db up` start it, down, remove
# and promote stop it, for a local replica and for one on another machine alike (that one's it
# reaches as the admin, once the standby's pg_hba.conf lets it in). It exits when its replica
# leaves the registry or is promoted (then the promoted server's pg_cron runs the job).
#
# One at a time, by construction: the watchdog holds an exclusive flock on its pid file for as
# long as it runs and writes its pid there only then, so a second one (two `exo db up` at once, or
# one started by hand) finds it held and ends at once. Not an advisory lock on the standby
# (pg_try_advisory_lock works on a hot standby, for the admin: the readers may not call it): that
# is held only while the standby can be reached, and two watchdogs of a standby that is down or
# not yet made would wait side by side.

#: The primary's watchdog jobs, as the copy of pg_cron's table on the standby has them.
WATCHDOG_JOBS = """
select j.database, j.username, j.schedule from cron.job j
where j.active and (j.jobname = 'exo-reader-watchdog' or j.jobname like 'exo-reader-watchdog@%%')
order by j.database
"""
STOP_RUNAWAY_READERS = "select pid, action, state, seconds from exo_private.stop_runaway_readers()"
#: The application_name of the watchdog's sessions.
WATCHDOG_APP = "exo-replica-watchdog"
#: The watchdog's period when no job gives one in seconds (the primary's schedule, '10 seconds').
WATCHDOG_PERIOD_S = 10.0
#: How long start_watchdog waits for the process it started to hold the lock (a Python start).
WATCHDOG_START_S = 30.0


def _watchdog_file(cfg: Config, replica: Replica, suffix: str) -> Path:
    """EXO_HOME/watchdogs/NAME.pid (locked by the watchdog that runs) or NAME.log (its output)."""
    return cfg.home / "watchdogs" / f"{replica.name}.{suffix}"


def _watch_argv(replica: Replica) -> list[str]:
    return [sys.executable, "-m", "exocortex.cli", "db", "replica", "watch", replica.name]


def watchdog_pid(cfg: Config, replica: Replica) -> int | None:
    """The pid of the replica's watchdog process, when it runs (its pid file names a live process
    whose command line is the watch command)."""
    try:
        pid = int(_watchdog_file(cfg, replica, "pid").read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except (OSError, ValueError):
        return None
    return pid if argv[-4:] == [a.encode() for a in _watch_argv(replica)[-4:]] else None


@contextlib.contextmanager
def _watch_lock(cfg: Config, replica: Replica) -> Iterator[bool]:
    """The replica's pid file locked for the block, this process's pid in it: True; False when
    another watchdog holds it. The file is never unlinked (a process that opened it would lock a
    file nobody sees), only emptied as its holder ends."""
    path = _watchdog_file(cfg, replica, "pid")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as lock:  # created, not emptied, until the lock is held
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            held = False
        if held:
            lock.truncate(0)
            lock.write(f"{os.getpid()}\n")
            lock.flush()
        try:
            yield held
        finally:
            if held:
                lock.truncate(0)


def start_watchdog(cfg: Config, replica: Replica) -> int | None:
    """Start the replica's watchdog, detached (a session of its own, its output in NAME.log),
    unless one runs; return the pid of the one that runs once the one started here holds the lock
    or has ended (one started beside it holds it), None when none does (the log says why)."""
    pid = watchdog_pid(cfg, replica)
    if pid is not None:
        return pid
    log = _watchdog_file(cfg, replica, "log")
    log.parent.mkdir(parents=True, exist_ok=True)
    # The child reads the same configuration: the runtime's home, port and database.
    env = {**os.environ, "EXO_HOME": str(cfg.home), "EXO_PG_PORT": str(cfg.port), "EXO_DB_NAME": cfg.database}
    # posix_spawn, not Popen: nothing here waits for it, and it outlives this process.
    child = os.posix_spawn(
        sys.executable, _watch_argv(replica), env, setsid=True,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ],
    )  # fmt: skip
    # Waited for until it holds the lock or has ended: a stop right after this finds the one that
    # runs, and no child still starting takes the lock after it.
    deadline = time.monotonic() + WATCHDOG_START_S
    while time.monotonic() < deadline:
        if os.waitpid(child, os.WNOHANG)[0]:  # it ended: another holds the lock, or it failed
            return watchdog_pid(cfg, replica)
        if watchdog_pid(cfg, replica) == child:
            return child
        time.sleep(0.05)
    return watchdog_pid(cfg, replica)


def stop_watchdog(cfg: Config, replica: Replica) -> bool:
    """SIGTERM the replica's watchdog and wait for it to exit; False when none ran."""
    pid = watchdog_pid(cfg, replica)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while _runs(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped, when this process started it
    return True


def _runs(pid: int) -> bool:
    """The process runs: it exists and is no zombie (whose command line is empty)."""
    try:
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except OSError:
        return False


def _period_s(schedules: list[str]) -> float:
    """The shortest of the jobs' intervals ('N seconds', pg_cron's own syntax for them)."""
    found = [float(m[1]) for s in schedules if (m := re.fullmatch(r"\s*(\d+) seconds?\s*", s))]
    return min(found, default=WATCHDOG_PERIOD_S)


class _Watch:
    """The standby's watchdog, a round at a time, with a session on pg_cron's database and one on
    each database a job names (as the job's user, as pg_cron runs it)."""

    def __init__(self, cfg: Config, replica: Replica):
        self.cfg, self.replica = cfg, replica
        self.cron: psycopg.Connection | None = None
        self.sessions: dict[str, psycopg.Connection] = {}

    def _connect(self, database: str) -> psycopg.Connection:
        return connect(
            url(self.cfg, self.replica, "admin", database), WATCHDOG_APP,
            autocommit=True, connect_timeout=5,
        )  # fmt: skip

    def round(self, say: Progress) -> float | None:
        """Run each watchdog job once, saying what it signalled; the period to the next round, or
        None when the server is a primary now (its pg_cron runs the jobs)."""
        if self.cron is None or self.cron.closed:
            self.cron = self._connect(self.cfg.database)
        if not self.cron.execute("select pg_catalog.pg_is_in_recovery()").fetchone()[0]:
            return None
        jobs = self.cron.execute(WATCHDOG_JOBS).fetchall()
        for gone in set(self.sessions) - {database for database, _u, _s in jobs}:
            self.sessions.pop(gone).close()
        for database, username, _schedule in jobs:
            try:
                conn = self.sessions.get(database)
                if conn is None or conn.closed:
                    conn = self._connect(database)
                    conn.execute(sql.SQL("set role {}").format(sql.Identifier(username)))
                    self.sessions[database] = conn
                for pid, action, state, seconds in conn.execute(STOP_RUNAWAY_READERS):
                    say(f"{database}: {action} pid {pid} ({state} {seconds} s)")
            except psycopg.Error as exc:  # a database dropped, or closed to sessions: the next round
                self.sessions.pop(database, None)
                say(f"{database}: {str(exc).strip()}")
        return _period_s([schedule for _d, _u, schedule in jobs])

    def close(self) -> None:
        for conn in [self.cron, *self.sessions.values()]:
            if conn is not None:
                conn.close()


def watch(cfg: Config, name: str, stop: threading.Event, say: Progress) -> None:
    """`exo db replica watch NAME`: the standby's reader watchdog, round after round, until `stop`
    is set, the replica leaves the registry or it is promoted; at once, when another holds the
    replica's lock. A round that cannot reach the server (stopped, restarting, not yet made, not
    letting the admin in) is tried again a period later; why is said once, not every round."""
    replica = find(cfg, name)
    with _watch_lock(cfg, replica) as held:
        if not held:
            say(f"replica {name} has a watchdog already (pid {watchdog_pid(cfg, replica)}): this one ends")
            return
        say(f"watching the readers of replica {name} on {replica.host}:{replica.port}")
        watcher, unreachable = _Watch(cfg, replica), None
        try:
            while not stop.is_set():
                period: float | None = WATCHDOG_PERIOD_S
                try:
                    period, unreachable = watcher.round(say), None
                except psycopg.OperationalError as exc:
                    if str(exc).strip() != unreachable:
                        unreachable = str(exc).strip()
                        say(f"replica {name} cannot be reached: {unreachable}")
                    watcher.close()
                    watcher = _Watch(cfg, replica)
                if period is None:
                    say(f"replica {name} is a primary now: its pg_cron runs the watchdog")
                    return
                if stop.wait(period) or name not in {r.name for r in load(cfg)}:
                    return
        finally:
            watcher.close()


# -- the commands ---------------------------------------------------------------------------


def _require_local_runtime(cfg: Config) -> None:
    if cfg.external_url:
        raise ReplicaProblem(
            "EXO_DATABASE_URL is set: a local replica copies the local runtime's cluster; make a "
            "standby of that server with its own tools (pg_basebackup -R)"
        )
    if not local.is_running(cfg):
        raise ReplicaProblem("the runtime's server is not running; start it with `exo db up`")


def _wait_streaming(cfg: Config, replica: Replica) -> None:
    deadline = time.monotonic() + STREAMING_WAIT_S
    with _primary(cfg) as conn:
        while time.monotonic() < deadline:
            state = conn.execute(
                "select state from pg_catalog.pg_stat_replication where application_name = %s",
                (replica.name,),
            ).fetchone()
            if state and state[0] == "streaming":
                return
            time.sleep(0.2)
    log = host_path(cfg, log_file(replica))
    last = log.read_text(errors="replace").splitlines()[-10:] if log.exists() else []
    raise ReplicaProblem(
        f"replica {replica.name} started but does not stream from the primary after "
        f"{STREAMING_WAIT_S:.0f} s; its log ends:\n" + "\n".join(last)
    )


@dataclass
class Added:
    replica: Replica
    lines: list[str]
    seconds: float
    script: str | None = None
    """For a replica on another machine: the shell script that makes it there."""


def add(
    cfg: Config, name: str | None, port: int | None, progress: Progress, host: str | None = None
) -> Added:
    """Make a local hot standby: the primary prepared, a slot, pg_basebackup into the replica's
    directory, standby.signal and its configuration, started and streaming, then recorded. A
    failure at any step leaves no slot, directory or record behind. With `host`, prepare one on
    that machine instead (add_remote)."""
    began = time.monotonic()
    _require_local_runtime(cfg)
    if host is not None:
        return add_remote(cfg, name, host, port, progress, began)
    with _locked(cfg):
        known = load(cfg)
        name = check_name(name) if name else _next_name({r.name for r in known})
        if any(r.name == name for r in known):
            raise ReplicaProblem(f"replica {name!r} exists; remove it first or choose another name")
        taken = {cfg.port, *(r.port for r in known)}
        if port is None:
            port = _next_port(cfg, taken)
        elif port in taken or not local.port_free(port):
            raise ReplicaProblem(
                f"port {port} is taken (the primary, a replica or another program); choose another"
            )
        lines = prepare_primary(cfg, progress)
        replica = Replica(
            name=name,
            host="127.0.0.1",
            port=port,
            slot=SLOT_PREFIX + name,
            created_at=time.time(),
            data_dir=f"{REPLICAS_DIR}/{name}/data",
        )
        folder = host_path(cfg, str(Path(replica.data_dir).parent))
        if _drop_slot(cfg, replica.slot):
            lines.append(f"dropped the stale slot {replica.slot} (no replica of that name was recorded)")
        try:
            _make(cfg, replica, progress)
            _save(cfg, [*known, replica])
            start_watchdog(cfg, replica)  # once recorded: it reads the registry
        except BaseException:
            with contextlib.suppress(RuntimeProblem, psycopg.Error):
                stop(cfg, replica)
            with contextlib.suppress(psycopg.Error):
                _drop_slot(cfg, replica.slot)
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return Added(replica, lines, time.monotonic() - began)


def add_remote(
    cfg: Config, name: str | None, host: str, port: int | None, progress: Progress, began: float
) -> Added:
    """Prepare the primary for a standby on `host` (an IP address): the settings, a replication
    role of the replica's own with a fresh password, a pg_hba.conf line for it from that address
    only, a slot that keeps WAL from now; record the replica and return the script to run there.
    A failure leaves no role, line, slot or record behind."""
    network = remote.parse_network(host)
    with _locked(cfg):
        known = load(cfg)
        name = check_name(name) if name else _next_name({r.name for r in known})
        if any(r.name == name for r in known):
            raise ReplicaProblem(f"replica {name!r} exists; remove it first or choose another name")
        port = port or cfg.port
        on_here = network.is_loopback
        if any((r.host, r.port) == (host, port) for r in known) or (
            on_here and (port == cfg.port or not local.port_free(port))
        ):
            raise ReplicaProblem(f"{host}:{port} is taken; choose another port with --port")
        with _primary(cfg) as conn:
            listening = [a.strip() for a in conn.execute("show listen_addresses").fetchone()[0].split(",")]
        address = remote.listen_address(listening, network)
        if not address:
            raise ReplicaProblem(
                f"the runtime listens on {', '.join(listening)} only, which {host} cannot reach: set "
                f"EXO_PG_LISTEN to '127.0.0.1,<an address of this machine that {host} reaches>' "
                "and restart the server (`exo db down`, `exo db up`)"
            )
        replica = Replica(name=name, host=host, port=port, slot=SLOT_PREFIX + name, created_at=time.time(),
                          role=SLOT_PREFIX + name)  # fmt: skip
        lines = _prepare_settings(cfg, progress)
        if _drop_slot(cfg, replica.slot):
            lines.append(f"dropped the stale slot {replica.slot} (no replica of that name was recorded)")
        # A fresh password each time: a host that held this name's role before cannot stream again.
        save_secret(cfg, replica.role, secrets.token_urlsafe(24))
        try:
            # pg_basebackup takes two connections, the walreceiver one; one to spare.
            _replication_role(cfg, replica.role, 3)
            lines.append(f"made the replication role {replica.role} for {host} (its password: in the script)")
            if _hba_lines(
                cfg, replica, add=f"host    replication     {replica.role}  {network}  scram-sha-256"
            ):
                lines.append(
                    f"let {replica.role} replicate from {network} (pg_hba.conf) and reloaded the primary"
                )
            with _primary(cfg) as conn:
                conn.execute(
                    "select pg_catalog.pg_create_physical_replication_slot(%s, true)", (replica.slot,)
                )
            _save(cfg, [*known, replica])
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                _forget_role(cfg, replica)
            raise
        # It reaches the standby once the script has made it and its pg_hba.conf lets the admin in.
        pid = start_watchdog(cfg, replica)
        lines.append(
            f"started its readers' watchdog on this machine (pid {pid}; `exo db up` starts it again): "
            f"it logs in once the standby lets the admin in (the script's last line)"
        )
    listen = "127.0.0.1" if on_here else "*"
    return Added(replica, lines, time.monotonic() - began, standby_script(cfg, replica, address, listen))


def standby_script(cfg: Config, replica: Replica, primary_host: str, listen: str) -> str:
    """A POSIX shell script that makes `replica` on its machine, run as the user PostgreSQL runs as
    there: the base backup through the replica's slot as its own role, then its settings and a start."""
    packages = ", ".join(p.name for p in read_packages() if p.part == "postgres" and p.extensions)
    conf = server_conf(cfg, replica, primary_host=primary_host, listen=listen)
    password = replicator_password(cfg, replica.streams_as)  # token_urlsafe: safe in single quotes
    return f"""\
# Replica {replica.name} of exocortex: run on {replica.host} as the user PostgreSQL runs as, with
# PostgreSQL {local.PG_MAJOR} and this server's extensions at the same versions ({packages}).
# DATA: where its cluster goes (absent or empty); PGBIN: PostgreSQL's programs.
set -e
DATA="${{DATA:-/var/lib/postgresql/{local.PG_MAJOR}/exocortex-{replica.name}}}"
PGBIN="${{PGBIN:-{PGBIN}}}"
PGPASSWORD='{password}' "$PGBIN/pg_basebackup" -h {primary_host} -p {cfg.port} -U {replica.streams_as} \\
    -D "$DATA" -S {replica.slot} -X stream -c fast --no-password
touch "$DATA/standby.signal"
umask 077
cat > "$DATA/exocortex.conf" <<'EXOCORTEX_CONF'
{conf}EXOCORTEX_CONF
"$PGBIN/pg_ctl" start -w -D "$DATA" -l "$DATA.log"
# Readers reach it as they reach the primary (the roles and passwords are the primary's). Let them
# in from where they run with a line in "$DATA/pg_hba.conf", then "$PGBIN/pg_ctl" reload -D "$DATA":
#   host  {cfg.database}  exo_reader  ADDRESS/32  scram-sha-256
# (the machine that runs `exo db replica list` reads its lag as exo_reader too). pg_cron runs no job
# on a standby: its readers' watchdog, `exo db replica watch {replica.name}`, runs on the primary's
# machine (`exo db replica add` and `exo db up` start it, `exo db down` stops it) and logs in as the
# admin once a line lets it in (it tries again every 10 s; `exo db replica list` says when it is in):
#   host  all  postgres  {primary_host}/32  scram-sha-256
"""


def _hba_lines(cfg: Config, replica: Replica, add: str | None = None) -> bool:
    """Add `add` to the primary's pg_hba.conf (after a comment naming the replica), or with add
    None take out the lines an add of this replica wrote; reload when it changed. True: it changed."""
    with _primary(cfg) as conn:
        path = host_path(cfg, conn.execute("show hba_file").fetchone()[0])
        mark = f"# exo db replica add {replica.name} --host "
        old = path.read_text().splitlines()
        if add is not None:
            new = old if add in old else [*old, f"{mark}{replica.host}", add]
        else:
            new = [
                line for line in old
                if not line.startswith(mark) and line.split()[:3] != ["host", "replication", replica.role]
            ]  # fmt: skip
        if new == old:
            return False
        path.write_text("\n".join(new) + "\n")
        conn.execute("select pg_catalog.pg_reload_conf()")
    time.sleep(0.5)  # the postmaster rereads pg_hba.conf on SIGHUP, a moment after
    return True


def _forget_role(cfg: Config, replica: Replica) -> list[str]:
    """A replica on another machine: its slot, its pg_hba.conf lines and its role go. The role
    may log in no more first: the standby there, still running, reconnects as soon as its
    walsender is ended and would take the slot back before it is dropped."""
    lines = []
    with _primary(cfg) as conn:
        if conn.execute("select 1 from pg_roles where rolname = %s", (replica.role,)).fetchone():
            conn.execute(sql.SQL("alter role {} nologin").format(sql.Identifier(replica.role)))
    if _drop_slot(cfg, replica.slot):
        lines.append(f"dropped the replication slot {replica.slot}")
    if _hba_lines(cfg, replica):
        lines.append(f"took {replica.role}'s lines out of pg_hba.conf and reloaded the primary")
    with _primary(cfg) as conn:
        if conn.execute("select 1 from pg_roles where rolname = %s", (replica.role,)).fetchone():
            conn.execute(sql.SQL("drop role {}").format(sql.Identifier(replica.role)))
            lines.append(f"dropped the replication role {replica.role}")
    return lines


def _make(cfg: Config, replica: Replica, progress: Progress) -> None:
    folder = str(Path(replica.data_dir).parent)
    if host_path(cfg, folder).exists():
        shutil.rmtree(host_path(cfg, folder))  # left by a replica of this name removed by hand
    _in_root(cfg, ["mkdir", "-p", folder], user=None, check=True)
    _in_root(cfg, ["chown", "postgres:postgres", folder], user=None, check=True)
    with _primary(cfg) as conn:
        conn.execute("select pg_catalog.pg_create_physical_replication_slot(%s, true)", (replica.slot,))
        size = conn.execute(
            "select sum(pg_catalog.pg_database_size(oid)) from pg_catalog.pg_database"
        ).fetchone()[0]
    progress(f"copying the cluster ({size / 1024**2:.0f} MB, every database) with pg_basebackup")
    source = make_conninfo(
        host="127.0.0.1", port=cfg.port, user=REPLICATOR, application_name=f"{replica.name}-basebackup"
    )
    argv = [
        f"{PGBIN}/pg_basebackup", "-D", replica.data_dir, "-d", source, "-S", replica.slot,
        "-X", "stream", "-c", "fast", "--no-password",
        # One syncfs of the file system instead of an fsync a file: of 51 MB in 1,800 files, 0.2 s
        # instead of 4 s.
        "--sync-method=syncfs",
    ]  # fmt: skip
    # The password in the environment, not on the command line that ps shows.
    result = _in_root(cfg, argv, env={"PGPASSWORD": replicator_password(cfg)})
    if result.returncode != 0:
        if local.DISK_FULL in result.stderr:
            raise ReplicaProblem(
                f"disk full while copying the cluster into {cfg.home}; free space and add again"
            )
        raise ReplicaProblem(f"pg_basebackup failed:\n{result.stderr.strip()}")
    host_path(cfg, f"{replica.data_dir}/standby.signal").touch()
    progress(f"starting replica {replica.name} on 127.0.0.1:{replica.port}")
    _start_server(cfg, replica)
    _wait_streaming(cfg, replica)


def remove(cfg: Config, name: str) -> list[str]:
    """Stop a replica, drop its slot and delete its data directory and record. A slot of the
    prefix that no replica owns (left by an add that was killed) is dropped the same way."""
    check_name(name)
    with _locked(cfg):
        known = load(cfg)
        replica = next((r for r in known if r.name == name), None)
        slot = replica.slot if replica else SLOT_PREFIX + name
        lines = []
        # Out of the registry first: `exo db up` (start_all) in another process starts every
        # replica recorded, and would start this one again while its folder is being deleted.
        _save(cfg, [r for r in known if r.name != name])
        if replica and stop(cfg, replica):  # its watchdog, then a local replica's server
            lines.append(f"stopped replica {name}")
        if replica:
            for suffix in ("pid", "log"):
                _watchdog_file(cfg, replica, suffix).unlink(missing_ok=True)
        if replica and replica.is_local:
            folder = host_path(cfg, str(Path(replica.data_dir).parent))
            if folder.exists():
                shutil.rmtree(folder)
                lines.append(f"deleted {folder}")
        if replica and replica.role and not cfg.external_url and local.is_running(cfg):
            lines += _forget_role(cfg, replica)
            lines.append(f"stop the standby on {replica.host} yourself: nothing here logs in there")
        elif not cfg.external_url and local.is_running(cfg) and _drop_slot(cfg, slot):
            lines.append(f"dropped the replication slot {slot}")
        elif replica and not replica.promoted and not cfg.external_url:
            lines.append(f"the primary is not running: drop the slot {slot} by removing again once it is up")
        if replica is None and not lines:
            raise ReplicaProblem(f"no replica and no slot named {name!r} (`exo db replica list`)")
    return lines


def promote(cfg: Config, name: str) -> list[str]:
    """pg_promote on a replica: it becomes a primary of its own on its port. Its slot on the old
    primary goes (nothing streams through it again), and the registry marks it promoted."""
    with _locked(cfg):
        known = load(cfg)
        replica = find(cfg, name)
        if replica.promoted:
            raise ReplicaProblem(f"replica {name!r} was promoted already")
        with connect(url(cfg, replica, "admin", "postgres"), "exo-db-replica", autocommit=True) as conn:
            if not conn.execute("select pg_catalog.pg_promote(true, 60)").fetchone()[0]:
                raise ReplicaProblem(f"replica {name!r} did not finish promoting within 60 s; see its log")
        promoted = dataclasses.replace(replica, promoted=True)
        stop_watchdog(cfg, replica)  # the promoted server's pg_cron runs the reader watchdog now
        _save(cfg, [promoted if r.name == name else r for r in known])
        if replica.is_local:  # its configuration without primary_conninfo, for the next start
            host_path(cfg, f"{replica.data_dir}/exocortex.conf").write_text(server_conf(cfg, promoted))
        lines = [f"promoted {name}: a primary of its own on {replica.host}:{replica.port}"]
        if not cfg.external_url and local.is_running(cfg) and _drop_slot(cfg, replica.slot):
            lines.append(f"dropped its slot {replica.slot} on the old primary")
    return lines


# -- what `list` shows ----------------------------------------------------------------------

SLOTS = """
select s.slot_name, s.active, s.wal_status,
       pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), s.restart_lsn)::bigint as retained,
       r.application_name, r.state,
       pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.replay_lsn)::bigint as lag_bytes
from pg_catalog.pg_replication_slots s
left join pg_catalog.pg_stat_replication r on r.pid = s.active_pid
where s.slot_name like 'exo\\_replica\\_%'
order by s.slot_name
"""


def max_lag_s(cfg: Config) -> float:
    """The lag bound (setting replicas.max_lag_s) of the memory on the primary; its default when
    the memory has none (not migrated yet)."""
    try:
        with connect(admin_url(cfg), "exo-db-replica", autocommit=True, connect_timeout=5) as conn:
            found = conn.execute(
                "select (value #>> '{}')::float8 from exo_private.settings where key = %s and jsonb_typeof(value) = 'number'",
                (routing.MAX_LAG_SETTING,),
            ).fetchone()
    except psycopg.Error:
        found = None
    return found[0] if found else routing.DEFAULT_MAX_LAG_S


def listing(cfg: Config) -> list[dict]:
    """Each replica's name, host, port, state and lag, and each orphan slot. Lag: bytes of WAL
    the primary wrote that the replica has not replayed (pg_stat_replication), and seconds as the
    read routing measures them on the replica (exocortex.client.routing.LAG: 0 when it has replayed
    all it received, else the age of its last replayed transaction). warning: why readers would
    pass it over (routing.unfit against replicas.max_lag_s), or a lost slot; None when all is well."""
    slots: dict[str, tuple] = {}
    primary_up = not cfg.external_url and local.is_running(cfg)
    bound = max_lag_s(cfg)
    if primary_up:
        with _primary(cfg) as conn:
            slots = {row[0]: row for row in conn.execute(SLOTS).fetchall()}
    rows = []
    for replica in load(cfg):
        row = {"name": replica.name, "host": replica.host, "port": replica.port, "slot": replica.slot,
               "state": None, "lag_bytes": None, "lag_s": None, "slot_retains_bytes": None,
               "promoted": replica.promoted, "max_lag_s": bound, "warning": None,
               "readers_guard": None, "guard_warning": None}  # fmt: skip
        slot = slots.pop(replica.slot, None)
        lag = _ask_standby(cfg, replica)
        if lag is None:
            row["state"] = "stopped" if replica.is_local and not is_running(cfg, replica) else "unreachable"
            row["warning"] = f"{row['state']}: readers go to the primary"
        elif not lag["standby"]:
            row["state"] = "promoted (a primary)"
        else:
            row["state"] = slot[5] if slot and slot[5] else "not streaming"  # streaming, catchup, startup
            row["lag_s"] = lag["lag_s"]
            row["warning"] = routing.unfit(lag, bound)
            row["readers_guard"], row["guard_warning"] = _readers_guard(cfg, replica, lag["watched"])
        if lag is not None and not lag["standby"]:
            row["readers_guard"] = "pg_cron's exo-reader-watchdog (a primary now)"
        if slot:
            _name, _active, wal_status, retained, _app, state, lag_bytes = slot
            row["slot_retains_bytes"] = retained
            if wal_status == "lost":
                row["state"] = "slot lost: the primary dropped WAL it needs; remove it and add it again"
                row["warning"] = row["state"]
            if state:
                row["lag_bytes"] = max(lag_bytes or 0, 0)
        rows.append(row)
    for slot in slots.values():
        name = slot[0].removeprefix(SLOT_PREFIX)
        rows.append({"name": name, "host": None, "port": None, "slot": slot[0], "state": ORPHAN,
                     "lag_bytes": None, "lag_s": None, "slot_retains_bytes": slot[3], "promoted": False,
                     "max_lag_s": bound, "readers_guard": None, "guard_warning": None,
                     "warning": f"keeps WAL for no replica: `exo db replica remove {name}` drops it"})  # fmt: skip
    return rows


def _readers_guard(cfg: Config, replica: Replica, watched: bool) -> tuple[str, str | None]:
    """What stops a runaway reader on a standby (`watched`: a watchdog's session is on it), and a
    warning when nothing that a session cannot lift does."""
    pid = watchdog_pid(cfg, replica)
    if watched:
        return f"watchdog{f' (pid {pid})' if pid else ''}: the primary's exo-reader-watchdog jobs", None
    lifted = (
        "role defaults only (the reader roles' statement_timeout and idle_in_transaction_session_timeout, "
        "which a session may lift)"
    )
    if pid is None:
        fix = "`exo db up` starts it"
    else:
        fix = f"its watchdog (pid {pid}) has no session there: {_watchdog_file(cfg, replica, 'log')} says why"
        if not replica.is_local:
            fix += (
                " (the standby's pg_hba.conf must let postgres in from this machine: the script's last line)"
            )
    return lifted, f"no reader watchdog: a reader that lifts its own timeouts runs unbounded; {fix}"


#: Whether a reader watchdog (`exo db replica watch`, from wherever it runs) has a session on the
#: server: its application_name and role are visible to every role in pg_stat_activity, and a
#: superuser's session is none that a reader could make by naming itself so.
WATCHED = """
select exists (select from pg_catalog.pg_stat_activity a join pg_catalog.pg_roles r on r.oid = a.usesysid
               where a.application_name = %s and r.rolsuper) as watched
"""


def _ask_standby(cfg: Config, replica: Replica) -> dict | None:
    """routing.LAG on the replica, and WATCHED; None when it cannot be reached. One on another
    machine is asked as exo_reader, as read routing asks it: its pg_hba.conf need let no admin in
    from here."""
    where = url(cfg, replica, "admin", "postgres") if replica.is_local else url(cfg, replica, "exo_reader")
    try:
        with connect(where, "exo-db-replica", autocommit=True, connect_timeout=3) as conn:
            cur = conn.cursor(row_factory=dict_row)
            return {**cur.execute(routing.LAG).fetchone(), **cur.execute(WATCHED, (WATCHDOG_APP,)).fetchone()}
    except psycopg.OperationalError:
        return None


def wait_for_replay(cfg: Config, replica: Replica, timeout_s: float = 60.0) -> float:
    """Wait until the replica has replayed all the primary has written now; returns the seconds it took."""
    began = time.monotonic()
    with _primary(cfg) as conn:
        target = conn.execute("select pg_catalog.pg_current_wal_lsn()").fetchone()[0]
    with connect(url(cfg, replica, "admin", "postgres"), "exo-db-replica", autocommit=True) as conn:
        while True:
            behind = conn.execute(
                "select pg_catalog.pg_wal_lsn_diff(%s::pg_lsn, pg_catalog.pg_last_wal_replay_lsn()) > 0",
                (target,),
            ).fetchone()[0]
            if not behind:
                return time.monotonic() - began
            if time.monotonic() - began > timeout_s:
                raise ReplicaProblem(
                    f"replica {replica.name} has not replayed up to {target} after {timeout_s:.0f} s"
                )
            time.sleep(0.05)
