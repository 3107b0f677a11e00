"""The replica registry and a replica's configuration, without a server (test_replicas makes one)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from exocortex import config
from exocortex.db import load_secrets
from exocortex.runtime import replicas
from exocortex.runtime.replicas import Replica, ReplicaProblem


@pytest.fixture
def home(tmp_path):
    return dataclasses.replace(config.load(), home=tmp_path, port=54329)


def replica(name: str = "r1", port: int = 54429, **kw) -> Replica:
    return Replica(
        name,
        "127.0.0.1",
        port,
        replicas.SLOT_PREFIX + name,
        1.0,
        f"{replicas.REPLICAS_DIR}/{name}/data",
        **kw,
    )


def test_the_registry_keeps_host_port_and_slot_and_names_a_bad_file(home):
    assert replicas.load(home) == []
    replicas._save(
        home, [replica(), dataclasses.replace(replica("far", 5432), data_dir=None, host="10.0.0.7")]
    )
    first, far = replicas.load(home)
    assert first == replica() and first.is_local
    assert (far.host, far.port, far.is_local) == ("10.0.0.7", 5432, False)
    assert replicas.find(home, "far") == far
    with pytest.raises(ReplicaProblem, match=r"no replica named 'nope' \(replicas: r1, far"):
        replicas.find(home, "nope")
    replicas.registry_file(home).write_text(json.dumps({"replicas": [{"name": "x"}]}))
    with pytest.raises(ReplicaProblem, match="is not a replica registry"):
        replicas.load(home)


@pytest.mark.parametrize("name", ["", "R1", "1r", "r-1", "r 1", "x" * 33, "r1; drop"])
def test_a_name_must_fit_a_slot_name(name):
    with pytest.raises(ReplicaProblem, match="lower-case letter"):
        replicas.check_name(name)


def test_default_names_and_ports_skip_what_is_taken(home, monkeypatch):
    assert replicas._next_name(set()) == "replica1"
    assert replicas._next_name({"replica1", "replica3"}) == "replica2"
    # Above the model servers' default ports (54330, 54331), past what replicas hold and what
    # something else on this machine listens on (here 54430, whatever the machine runs)
    monkeypatch.setattr(replicas.local, "port_free", lambda port: port != 54430)
    assert replicas._next_port(home, {54429}) == 54431


def test_a_standby_streams_from_the_primary_through_its_slot_and_a_promoted_one_does_not(home):
    standby = replicas.server_conf(home, replica())
    assert "port = 54429\n" in standby and "hot_standby = on\n" in standby
    assert "shared_preload_libraries" in standby  # the runtime's own settings
    (conninfo,) = [line for line in standby.splitlines() if line.startswith("primary_conninfo")]
    for part in ("host=127.0.0.1", "port=54329", f"user={replicas.REPLICATOR}", "application_name=r1"):
        assert part in conninfo
    assert load_secrets(home)[replicas.REPLICATOR] in conninfo  # generated, kept 0600
    assert (home.home / "secrets.json").stat().st_mode & 0o077 == 0
    assert "primary_slot_name = 'exo_replica_r1'\n" in standby
    promoted = replicas.server_conf(home, replica(promoted=True))
    assert "primary_conninfo" not in promoted and "primary_slot_name" not in promoted
    # The primary keeps the rows a standby's reads still see: a long read is not cancelled by replay.
    assert "hot_standby_feedback = on\n" in standby and "hot_standby_feedback = on\n" in promoted


def test_a_replica_elsewhere_streams_as_its_own_role_from_an_address_it_reaches(home):
    far = dataclasses.replace(replica("far", 5432), host="10.0.0.7", data_dir=None, role="exo_replica_far")
    conf = replicas.server_conf(home, far, primary_host="10.0.0.2", listen="*")
    assert "listen_addresses = '*'\n" in conf and "port = 5432\n" in conf
    (conninfo,) = [line for line in conf.splitlines() if line.startswith("primary_conninfo")]
    for part in ("host=10.0.0.2", "port=54329", "user=exo_replica_far", "application_name=far"):
        assert part in conninfo
    secrets = load_secrets(home)
    assert secrets["exo_replica_far"] in conninfo and secrets["exo_replica_far"] != secrets.get(
        replicas.REPLICATOR
    )
    script = replicas.standby_script(home, far, "10.0.0.2", "*")
    assert script.startswith("# Replica far of exocortex: run on 10.0.0.7")
    assert (
        f"PGPASSWORD='{secrets['exo_replica_far']}' \"$PGBIN/pg_basebackup\" -h 10.0.0.2 -p 54329 -U exo_replica_far"
        in script
    )
    assert "-S exo_replica_far -X stream" in script and 'touch "$DATA/standby.signal"' in script
    assert conf in script  # its settings, written whole into the standby's exocortex.conf
    for package in ("postgresql-18-pgvector", "postgresql-18-age", "postgresql-18-pg-textsearch"):
        assert package in script


def test_a_configuration_string_is_quoted():
    assert replicas._conf_string("a 'b' \\c") == "'a ''b'' \\\\c'"


def test_commands_on_an_external_server_say_what_to_do(home):
    external = dataclasses.replace(home, external_url="postgresql://elsewhere/x")
    with pytest.raises(ReplicaProblem, match="EXO_DATABASE_URL is set"):
        replicas.add(external, None, None, lambda _m: None)
