"""Every function the reader may call, and a call of each: with benign arguments, and (for
test_hostile_reader) with each argument in turn hostile. test_replicas calls the benign ones on a
standby and on its primary."""

from __future__ import annotations

from collections.abc import Iterator

from psycopg import sql

BENIGN = {
    "workspace": "personal",
    "workspaces": ["personal", "technical"],
    "query": "MATCH (n) RETURN n.name",
    "entity": "Iris Calder",
    "name": "Iris",
    "document": "diary/2017/2017-03-28.md",
    "conversation": "Family planning",
    "profile": None,  # a search without a profile; the kb calls refuse every profile (none exists)
}
BENIGN_BY_TYPE = {
    "text": "Iris Calder",
    "integer": 5,
    "bigint": 1,
    "boolean": None,
    "text[]": [],
    "date": None,
    "timestamp with time zone": None,
    "double precision[]": None,
    "jsonb": None,
    "real": None,
}

READER_FUNCTIONS = """
select n.nspname, p.proname, p.oid::regprocedure::text,
       array(select pg_catalog.format_type(t, null) from unnest(p.proargtypes) t),
       coalesce(p.proargnames[1:p.pronargs], array_fill(''::text, array[p.pronargs]))
from pg_catalog.pg_proc p
join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname not in ('pg_catalog', 'information_schema')
  and p.prokind = 'f'
  and has_schema_privilege('exo_reader', n.oid, 'usage')
  and has_function_privilege('exo_reader', p.oid, 'execute')
order by 1, 2, 3
"""


def reader_functions(db) -> list[tuple]:
    with db.connect() as conn:
        return conn.execute(READER_FUNCTIONS).fetchall()


def reader_calls(functions, hostile: dict[str, list] | None = None) -> Iterator[tuple[str, str, list]]:
    """(signature, statement, arguments): each function's benign call first; given hostile values
    by type, then each argument in turn hostile (None for a type without any), the others benign."""
    for schema, name, signature, types, names in functions:
        if not types:
            yield (
                signature,
                sql.SQL("select * from {}.{}()").format(sql.Identifier(schema), sql.Identifier(name)),
                [],
            )
            continue
        placeholders = sql.SQL(", ").join(sql.SQL("%s::") + sql.SQL(t) for t in types)
        statement = sql.SQL("select * from {}.{}({})").format(
            sql.Identifier(schema), sql.Identifier(name), placeholders
        )
        benign = [BENIGN.get(n, BENIGN_BY_TYPE.get(t)) for t, n in zip(types, names, strict=True)]
        yield signature, statement, benign
        if hostile is None:
            continue
        for i, t in enumerate(types):
            for value in hostile.get(t, [None]):
                args = list(benign)
                args[i] = value
                yield signature, statement, args
