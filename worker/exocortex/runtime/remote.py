"""Workers on other hosts: a URL of the runtime's server that another machine can use.

A worker on another host connects to the primary as exo_writer (EXO_WRITER_URL), with the
model endpoints of its own host (`exo worker --endpoint ROLE=URL`); several workers on several
hosts share the queues through pgmq's visibility timeout and the worker-claims table, and
`exo status` lists them by host. What the runtime must give such a worker: an address it
listens on that the other host can reach (EXO_PG_LISTEN, PostgreSQL's listen_addresses), and a
pg_hba.conf line that lets exo_writer in from that host (password-checked, scram-sha-256).
"""

from __future__ import annotations

import ipaddress
import socket
import time

from psycopg.conninfo import make_conninfo

from exocortex.config import Config
from exocortex.db import admin_url, connect, role_url
from exocortex.runtime import local, replicas
from exocortex.runtime.local import RuntimeProblem


class RemoteProblem(RuntimeProblem):
    """No URL for another host; the message says why and what to do."""


def parse_network(host: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise RemoteProblem(
            f"{host!r}: give the other host's IP address (or a network, 10.0.0.0/24): "
            "pg_hba.conf lets it in by address"
        ) from None


def listen_address(listening: list[str], network) -> str:
    """The address of this server that a host of `network` reaches: a loopback one for a host on
    this machine, else the first other address listened on (a wildcard: this machine's name)."""
    if network.is_loopback:
        usable = [a for a in listening if a in ("*", "0.0.0.0", "::") or _is_loopback(a)]
        return "127.0.0.1" if usable else ""
    named = [a for a in listening if a not in ("*", "0.0.0.0", "::") and not _is_loopback(a)]
    if named:
        return named[0]
    return socket.getfqdn() if any(a in ("*", "0.0.0.0", "::") for a in listening) else ""


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def writer_url(cfg: Config, host: str) -> tuple[str, list[str]]:
    """exo_writer's URL at an address of the runtime's server that `host` can reach, and what was
    done for it (a pg_hba.conf line added and reloaded), one line each."""
    network = parse_network(host)
    if cfg.external_url:
        raise RemoteProblem(
            "EXO_DATABASE_URL is set: the server is not this runtime's; give the worker a writer URL of that server"
        )
    if not local.is_running(cfg):
        raise RemoteProblem("the runtime's server is not running; start it with `exo db up`")
    with connect(admin_url(cfg), "exo-db-url", autocommit=True, connect_timeout=10) as conn:
        listening = [a.strip() for a in conn.execute("show listen_addresses").fetchone()[0].split(",")]
        hba_file = conn.execute("show hba_file").fetchone()[0]
    address = listen_address(listening, network)
    if not address:
        raise RemoteProblem(
            f"the runtime listens on {', '.join(listening)} only, which {host} cannot reach: set "
            f"EXO_PG_LISTEN to '127.0.0.1,<an address of this machine that {host} reaches>' "
            "and restart the server (`exo db down`, `exo db up`)"
        )
    lines = []
    if not network.is_loopback:  # initdb's pg_hba.conf lets loopback connections in already
        line = f"host    {cfg.database}    exo_writer    {network}    scram-sha-256"
        path = replicas.host_path(cfg, hba_file)
        if line not in path.read_text().splitlines():
            with open(path, "a") as f:
                f.write(f"# exo db url --role writer --remote {host}\n{line}\n")
            with connect(admin_url(cfg), "exo-db-url", autocommit=True) as conn:
                conn.execute("select pg_catalog.pg_reload_conf()")
            time.sleep(0.5)  # the postmaster rereads pg_hba.conf on SIGHUP, a moment after
            lines.append(f"let exo_writer in from {network} (pg_hba.conf) and reloaded the server")
    return make_conninfo(role_url(cfg, "exo_writer"), host=address, port=cfg.port), lines
