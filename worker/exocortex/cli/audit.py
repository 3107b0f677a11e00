"""`exo audit`: run the self-audit now (exo_private.audit, also run daily by pg_cron) and print
its findings by reason and the facts' retirement rate (exo.audit_summary); registered in
exocortex.cli. It writes (it closes facts whose every source is gone), so it runs as exo_writer.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

import click
import psycopg
from rich.markup import escape

from exocortex import config
from exocortex.cli.output import err, json_option, table
from exocortex.db import writer


@click.command("audit")
@json_option
def audit_cmd(as_json: bool) -> None:
    """Re-check the memory against its sources: facts whose sources are gone (closed), changed,
    or contradicted by a newer source, stale capsules, facts about entities that no longer exist.
    Prints the counts by reason and the retirement rate (closed fact rows / all, by close reason).
    """
    try:
        with writer(config.load(), "exo-cli") as conn:
            found = conn.execute("select reason, closed from exo_private.audit()").fetchall()
            summary = conn.execute("select exo.audit_summary()").fetchone()[0]
    except psycopg.Error as exc:
        err.print(f"[red]error:[/red] {escape(exc.diag.message_primary or str(exc))}")
        sys.exit(1)
    findings = Counter(reason for reason, _ in found)
    closed = Counter(reason for reason, was_closed in found if was_closed)
    if as_json:
        report = {"findings": dict(sorted(findings.items())), "closed_now": dict(sorted(closed.items()))}
        click.echo(json.dumps(report | {"retirement": summary}, default=str))
        return
    rows = [{"reason": r, "findings": n, "closed now": closed.get(r, 0)} for r, n in sorted(findings.items())]
    table(rows or [{"reason": "(nothing found)"}], ["reason", "findings", "closed now"], title="Audit")
    rates = [
        {"close reason": why, "rows": v["closed"], "rate": f"{v['rate']:.2%}"}
        for why, v in summary["by_reason"].items()
    ]
    table(
        rates,
        ["close reason", "rows", "rate"],
        title=f"Retirement: {summary['closed']} of {summary['facts']} fact rows closed "
        f"({summary['retirement_rate']:.2%})",
    )


COMMANDS = [audit_cmd]
