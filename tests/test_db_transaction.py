"""db.transaction: a block whose ROLLBACK is a statement the session prepared while sound.

A ROLLBACK sent as text is parse-analysed, and Apache AGE 1.8's parse hook then looks pg_extension
up inside the aborted transaction whenever its cache was invalidated: the ROLLBACK fails
("ResourceOwnerEnlarge called after release started"). A GRANT on pg_extension in the block is
such an invalidation; the block rolls it back. The real database, no stubs.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg.pq import TransactionStatus

from exocortex.db import transaction

INVALIDATE_AGES_CACHE = "grant select on pg_catalog.pg_extension to exo_reader"


def rows(conn: psycopg.Connection) -> list[int]:
    return [r[0] for r in conn.execute("select n from tx_probe order by n")]


@pytest.fixture
def conn(db):
    with db.connect() as conn:
        conn.execute("create table tx_probe (n int)")
        yield conn


def test_a_block_commits_what_it_did(conn):
    with transaction(conn):
        conn.execute("insert into tx_probe values (1)")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert rows(conn) == [1]


def test_a_failed_block_rolls_back_after_ages_cache_was_invalidated(conn):
    for _ in range(2):  # the second block reuses the statement prepared for the first
        with pytest.raises(psycopg.errors.DivisionByZero), transaction(conn):
            conn.execute(INVALIDATE_AGES_CACHE)
            conn.execute("insert into tx_probe values (1)")
            conn.execute("select 1 / 0")
        assert conn.info.transaction_status == TransactionStatus.IDLE
        assert rows(conn) == []
    acl = conn.execute(
        "select relacl::text from pg_catalog.pg_class where oid = 'pg_catalog.pg_extension'::regclass"
    )
    assert "exo_reader" not in (acl.fetchone()[0] or "")  # the blocks' GRANT went with them


def test_a_block_whose_error_was_caught_inside_ends_rolled_back(conn):
    with transaction(conn):
        conn.execute(INVALIDATE_AGES_CACHE)
        conn.execute("insert into tx_probe values (1)")
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("select 1 / 0")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert rows(conn) == []


def test_a_nested_block_is_a_savepoint(conn):
    with conn.transaction():
        conn.execute("insert into tx_probe values (1)")
        with pytest.raises(psycopg.errors.DivisionByZero), transaction(conn):
            conn.execute("insert into tx_probe values (2)")
            conn.execute("select 1 / 0")
        conn.execute("insert into tx_probe values (3)")
    assert rows(conn) == [1, 3]


def test_a_block_prepares_its_statements_again_after_deallocate_all(conn):
    with transaction(conn):
        conn.execute("insert into tx_probe values (1)")
    conn.execute("deallocate all")  # what psycopg's own rollback() sends when it prepared statements
    with pytest.raises(psycopg.errors.DivisionByZero), transaction(conn):
        conn.execute(INVALIDATE_AGES_CACHE)
        conn.execute("select 1 / 0")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert rows(conn) == [1]


def test_a_block_that_lost_its_statements_on_the_way_still_commits_or_rolls_back(conn):
    with transaction(conn):
        conn.execute("deallocate all")
        conn.execute("insert into tx_probe values (1)")
    with pytest.raises(psycopg.errors.DivisionByZero), transaction(conn):
        conn.execute("deallocate all")
        conn.execute("insert into tx_probe values (2)")
        conn.execute("select 1 / 0")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert rows(conn) == [1]
