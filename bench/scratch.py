"""What every benchmark does to its scratch database before it searches."""

from __future__ import annotations

import psycopg


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
