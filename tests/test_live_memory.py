"""The suite never touches the user's live memory: it runs on a server of its own.

The conftest notes the user's server before the first test (`make test` starts it, as the
README's `make demo` leaves it); the last test here runs after every other test and checks
that the same postmaster still runs and its log shows no stop, restart or refused connection.
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from support.db import NO_MODEL_URL
from support.runtime import ServerMark, disturbances, mark

from exocortex.runtime import local

# It stops and starts the suite's server, or checks what the whole run left: never beside other
# tests (make test-fast runs the serial ones alone, after the rest).
pytestmark = pytest.mark.serial


def test_the_suite_runs_on_its_own_server(cfg, user_cfg):
    assert cfg.home != user_cfg.home
    assert cfg.external_url or cfg.port != user_cfg.port
    assert not cfg.runtime_root.is_relative_to(user_cfg.runtime_root)
    assert os.environ["EXO_HOME"] == str(cfg.home)
    assert "EXO_DATABASE_URL" not in os.environ or cfg.external_url


def test_a_test_database_reaches_no_model_server_of_the_users(db):
    # a test that wants models starts its own (real_models); the defaults are the user's ports
    with db.connect() as conn:
        urls = dict(
            conn.execute(
                "select key, value ->> 'url' from exo_private.settings"
                " where key in ('models.chat', 'models.embeddings')"
            ).fetchall()
        )
    assert urls == {"models.chat": NO_MODEL_URL, "models.embeddings": NO_MODEL_URL}


def test_a_stopped_restarted_or_refusing_server_is_noticed(cfg, tmp_path):
    fake = dataclasses.replace(cfg, home=tmp_path, external_url=None)
    data = local.data_dir(fake)
    data.mkdir(parents=True)
    (data / "postmaster.pid").write_text(f"{os.getpid()}\n{data}\n")
    log = fake.runtime_root / local.LOG_FILE.lstrip("/")
    log.write_text("LOG:  database system is ready to accept connections\n")
    before = mark(fake)
    assert before == ServerMark(os.getpid(), log, log.stat().st_size)
    assert disturbances(fake, before) == []
    with open(log, "a") as f:
        f.write('FATAL:  password authentication failed for user "exo_reader"\n')
    assert disturbances(fake, before) == ['FATAL:  password authentication failed for user "exo_reader"']
    assert "restarted" in disturbances(fake, dataclasses.replace(before, pid=1))[0]
    (data / "postmaster.pid").unlink()
    assert "no longer running" in disturbances(fake, before)[0]


def test_the_users_server_was_left_alone(user_cfg, user_server):
    if user_server is None:
        pytest.skip("the user's server was not running when the suite began")
    assert disturbances(user_cfg, user_server) == []
