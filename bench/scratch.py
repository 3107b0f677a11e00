"""What every benchmark does to its scratch database before it searches."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import psycopg

from exocortex.db import admin_url, connect, role_url
from exocortex.ingest import pipeline
from exocortex.worker.loop import QUEUES, Worker


def serve_embeddings_from(admin: psycopg.Connection, url: str) -> None:
    """Point models.embeddings at the run's own embedding server (url) and lift the reader's
    per-session model budgets (docs/security.md): one reader session runs every timed search,
    and the budget would otherwise turn the semantic stage off mid-run."""
    admin.execute(
        "update exo_private.settings set value = jsonb_set(value, '{url}', to_jsonb(%s::text)) "
        "where key = 'models.embeddings'",
        (url,),
    )
    for budget in ("reader.embed_calls_per_minute", "reader.rerank_calls_per_minute"):
        admin.execute("select exo_private.set_setting(%s, '1000000')", (budget,))


def add_setting_option(parser: argparse.ArgumentParser) -> None:
    """--setting KEY=JSON (repeatable): a trial of a setting in the scratch database."""
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="set a setting in the scratch database before the questions (a trial: retrieval.rerank_order)",
    )


def trial_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, str]]:
    """The (key, JSON text) pairs of --setting, each checked, or the parser's error."""
    settings = []
    for item in args.setting:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--setting wants KEY=JSON, got {item!r}")
        try:
            json.loads(value)
        except json.JSONDecodeError as exc:
            parser.error(f"--setting {key}: not JSON ({exc.msg})")
        settings.append((key, value))
    return settings


def apply_settings(admin: psycopg.Connection, settings: list[tuple[str, str]]) -> None:
    """Set each trial setting (exo_private.set_setting checks it) and say so."""
    for key, value in settings:
        admin.execute("select exo_private.set_setting(%s, %s)", (key, value))
        print(f"set {key} = {value}", flush=True)


def ingest_vault(
    cfg, name: str, embeddings_url: str, vault: Path, owner: str, app: str, queues: tuple[str, ...] = QUEUES
) -> None:
    """A scratch database as `exo ingest VAULT --workspace personal` and `exo worker --once` leave
    it, with no chat model (extraction is the CPU passes): the owner set, the vault ingested into
    personal (the router, untrained on a fresh database, would quarantine most of it), the
    worker's `queues` drained."""
    with connect(admin_url(cfg, name), app, autocommit=True) as admin:
        serve_embeddings_from(admin, embeddings_url)
        admin.execute(
            "update exo_private.settings set value = value || '{\"url\": null}' where key = 'models.chat'"
        )
    with connect(role_url(cfg, "exo_writer", name), app, autocommit=True) as writer:
        writer.execute("select exo_private.set_owner(%s)", (owner,))
    pipeline.ingest(cfg, vault, workspace="personal", dbname=name)
    Worker(cfg, dbname=name, once=True, poll_s=0.01, queues=queues).run()
