"""A small graph around a deferred subject, shared by the API and Cypher tests: a personal note
whose second chunk, Walter Rivera's funeral, is charged for him, and the entities and relations
extracted from the note's one window."""

from __future__ import annotations

import time

from .db import Database
from .graph import Doc, merge, person, rel

WALTER = "Walter Rivera"
LUNCH = [
    "Sunday lunch with Ann Lee and Grandpa Walter at Lakeside Cafe.",
    "At the funeral of Walter Rivera, Ann Lee read a poem at St Mary Hospice.",
]


def place(name: str) -> dict:
    return {"name": name, "type": "Place"}


def charge_lunch(conn, doc: Doc) -> None:
    """Into `doc` (chunked as LUNCH): its funeral chunk charged for Walter Rivera, and Ann Lee,
    Grandpa Walter, Walter Rivera, Lakeside Cafe and St Mary Hospice merged from its first window
    with four relations from Ann Lee (St Mary Hospice is named only in the charged chunk)."""
    conn.execute(
        "update exo_private.chunks set charged_subjects = %s where id = %s", ([WALTER], doc.chunks[1])
    )
    merge(
        conn,
        doc.windows[0],
        [
            person("Ann Lee"),
            person("Grandpa Walter"),
            person(WALTER),
            place("Lakeside Cafe"),
            place("St Mary Hospice"),
        ],
        [
            rel("Ann Lee", "visited", "Lakeside Cafe"),
            rel("Ann Lee", "lunched with", "Grandpa Walter"),
            rel("Ann Lee", "granddaughter of", WALTER),
            rel("Ann Lee", "read at", "St Mary Hospice"),
        ],
    )


def defer_walter(conn) -> None:
    """Walter Rivera on the deference list, with aliases Grandpa Walter and Grandpa (no re-marking:
    the tests charge their chunks themselves)."""
    conn.execute(
        "insert into exo_private.deferred_subjects (subject, aliases) values (%s, %s)",
        (WALTER, ["Grandpa Walter", "Grandpa"]),
    )


def rebuilt_open_indexes(db: Database, wait_s: float = 60.0) -> int:
    """exo_private.rebuild_open_indexes() as pg_cron's exo-open-indexes calls it, a minute on, until
    it rebuilds: a session older than the charging, of any database on the server (a test that
    runs beside this one), holds the rebuild back while it runs, as it should."""
    deadline = time.monotonic() + wait_s
    with db.connect("exo_writer") as conn:
        while True:
            rebuilt = conn.execute("select exo_private.rebuild_open_indexes()").fetchone()[0]
            if rebuilt or time.monotonic() > deadline:
                return rebuilt
            time.sleep(0.2)
