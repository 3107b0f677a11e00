"""Profiles: a person or an agent with a personal base, and the login role that is them.

A profile is not an argument (docs/security.md): each has a login role of its own, a member of
exo_reader, and a session of that role is the profile: the knowledge-base functions read it
from the session, and row security shows the role only its own rows (sql/700_kb.sql). `exo
user add NAME` makes both, as the admin, and prints the role's URL; `exo db url --role reader
--profile NAME` prints it again; `exo mcp --profile NAME`, the retrievers' profile= and the CLI's
--profile connect with it.
"""

from __future__ import annotations

import psycopg

from exocortex.config import Config
from exocortex.db import admin_url, as_uri, connect, role_url
from exocortex.ops.migrate import ensure_profile_roles, grant_database_privileges


class UnknownProfile(LookupError):
    """No profile of that name in this database."""


def add(cfg: Config, name: str) -> tuple[str, bool]:
    """Profile NAME and its login role, made when missing (a role whose password this EXO_HOME does
    not keep gets a new one); (the role's URL, whether the profile is new)."""
    with connect(admin_url(cfg), "exo-user-add", autocommit=True) as conn:
        new = conn.execute(
            "select not exists (select 1 from exo_private.kb_profiles where name = %s)", (name,)
        )
        made = new.fetchone()[0]
        ensure(conn, cfg, name)
    return url(cfg, name), made


def role(cfg: Config, name: str) -> str:
    """The login role of profile NAME, asked of the database."""
    with connect(admin_url(cfg), "exo-profile", autocommit=True) as conn:
        found = conn.execute("select role from exo_private.kb_profiles where name = %s", (name,)).fetchone()
    if found is None:
        raise UnknownProfile(f"no profile {name!r} in this database; exo user add {name} makes one")
    return found[0]


def url(cfg: Config, name: str) -> str:
    """The postgresql:// URL of profile NAME's login role (its password from the secrets file)."""
    try:
        return as_uri(role_url(cfg, role(cfg, name)))
    except ValueError:
        raise UnknownProfile(
            f"profile {name!r} has a login role whose password this EXO_HOME does not keep; "
            f"exo user add {name} gives it a new one"
        ) from None


def ensure(conn: psycopg.Connection, cfg: Config, name: str) -> str:
    """Profile NAME with its login role, in the database of an admin connection; its role. For
    the tests and benchmarks that make profiles in databases of their own."""
    conn.execute(
        "select exo_private.kb_add_profile(%s) where not exists "
        "(select 1 from exo_private.kb_profiles where name = %s)",
        (name, name),
    )
    ensure_profile_roles(cfg, conn, renew_unknown=True)
    grant_database_privileges(conn)
    return conn.execute("select role from exo_private.kb_profiles where name = %s", (name,)).fetchone()[0]
