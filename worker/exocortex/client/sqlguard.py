"""The guard in front of `exocortex.client.api.sql`: one read-only SELECT over the exo API, or a refusal.

The read-only role is the boundary (exo_reader: usage on schema exo only, read-only
transactions); this is defence in depth on top of it, and a clear answer for an agent
whose query would fail anyway. `check` parses the statement with sqlglot (Postgres
dialect) and classifies the parsed tree, never the text: comments, dollar quotes,
E'' strings and quoted identifiers are whatever the parser says they are. What runs
is the statement regenerated from that tree (comments dropped), so the server never
sees text the guard did not read; a statement that does not parse, or whose
regeneration does not parse back to itself, is refused.

Rules (the `rule` of a `Rejected`):
  syntax                empty, more than one statement, or not parseable
  select_only           anything but SELECT / WITH ... SELECT / set operations of them;
                        SELECT INTO, FOR UPDATE/SHARE and data-modifying CTEs included
  exo_objects_only      a relation that is not exo.<name> (CTEs of the query are fine)
  function_not_allowed  a function that is neither exo.<api function> nor a harmless builtin
  cast_not_allowed      casts to the reg* catalog-lookup types, or to types outside exo/pg_catalog

Attribute notation is a function call in Postgres: `w.f` and `(expr).f` call f(w) when f is
no column of w. So a qualified name must be a column the exo views and functions (or the
allowed builtins, or the query itself) define, or a function the rules above allow anyway.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

SCHEMA = "exo"
BUILTIN_SCHEMA = "pg_catalog"

# Harmless builtins: pure functions of their arguments (no files, settings, sessions,
# locks, sequences or catalog lookups). Unqualified or pg_catalog-qualified.
_BUILTINS = """
    count sum avg min max bool_and bool_or every string_agg array_agg jsonb_agg json_agg
    jsonb_object_agg json_object_agg percentile_cont percentile_disc mode stddev stddev_pop stddev_samp variance var_pop var_samp
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    lower upper length char_length character_length octet_length left right substr substring
    trim btrim ltrim rtrim replace split_part concat concat_ws initcap lpad rpad position strpos
    starts_with reverse repeat translate regexp_replace regexp_match regexp_matches regexp_like
    regexp_count regexp_split_to_array regexp_split_to_table to_char to_number to_date to_timestamp
    coalesce nullif greatest least
    round abs ceil ceiling floor trunc sqrt cbrt power pow ln log log10 exp mod sign div width_bucket
    now date_trunc date_part date_bin extract age make_date make_time make_interval make_timestamp
    make_timestamptz isfinite justify_days justify_hours justify_interval
    jsonb_array_elements jsonb_array_elements_text jsonb_each jsonb_each_text jsonb_object_keys
    jsonb_build_object jsonb_build_array jsonb_array_length jsonb_typeof jsonb_extract_path
    jsonb_extract_path_text jsonb_strip_nulls jsonb_pretty jsonb_path_query jsonb_path_query_array
    jsonb_path_query_first jsonb_path_exists to_jsonb to_json json_build_object json_build_array
    json_array_elements json_array_elements_text json_each json_each_text json_object_keys
    json_typeof json_array_length row_to_json jsonb_set jsonb_insert
    unnest array_length array_lower array_upper array_ndims cardinality array_to_string
    string_to_array string_to_table array_position array_positions array_remove array_replace
    array_append array_prepend array_cat generate_series generate_subscripts
    to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd
    ts_headline num_nonnulls num_nulls md5 encode decode row
"""
BUILTIN_FUNCTIONS = frozenset(_BUILTINS.split())

# Never, whatever a future edit adds above: files, large objects, other databases,
# settings, sessions, sleeping, locks, transaction ids, catalog dumps.
NEVER = re.compile(
    r"^(pg_.*|lo_.*|dblink.*|txid_.*|set_config|current_setting|"
    r"(query|table|cursor|schema|database)(_and_schema)?_to_xml(schema)?|xpath.*|"
    r"has_.*_privilege|to_reg.*|nextval|setval|currval|lastval)$"
)

# Types whose input function looks names up in the catalog.
_REG_TYPE = re.compile(r"^reg[a-z]*$")
_BUILTIN_TYPE_SCHEMAS = frozenset({SCHEMA, BUILTIN_SCHEMA})


class Rejected(Exception):
    """A statement the guard will not run; `rule` names the rule it broke."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"rejected ({rule}): {detail}")
        self.rule = rule
        self.detail = detail


class _Dialect(Postgres):
    """Postgres, with every plain `name(args)` call parsed as itself.

    sqlglot turns known names into typed nodes (`search` into its own SEARCH, `now`
    into CURRENT_TIMESTAMP, ...), which loses the name as written and can regenerate
    other text. Here only the calls with special argument syntax keep their parsers.
    """

    class Parser(Postgres.Parser):
        FUNCTIONS: dict = {}  # noqa: RUF012 (the parser's own class-level table)
        FUNCTION_PARSERS = {  # noqa: RUF012
            k: v
            for k, v in Postgres.Parser.FUNCTION_PARSERS.items()
            if k in {"CAST", "EXTRACT", "SUBSTRING", "TRIM", "POSITION", "OVERLAY", "STRING_AGG"}
        }


def _render(tree: exp.Expression) -> str:
    """SQL text of a tree: function names as written, no comments."""
    return tree.sql(dialect=_Dialect, normalize_functions=False, comments=False)


def _classes(*names: str) -> tuple[type, ...]:
    """The exp classes of these names that this sqlglot version has."""
    return tuple(getattr(exp, n) for n in names if isinstance(getattr(exp, n, None), type))


# Nodes that are statements (or parts of them) other than a plain query.
_NOT_A_QUERY = _classes(
    "DML", "DDL", "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Copy",
    "Command", "Set", "Into", "Lock", "Transaction", "Commit", "Rollback", "Show", "Describe",
    "Analyze", "Grant", "Revoke", "Use", "Pragma", "Kill", "TruncateTable", "Comment", "Cache",
    "Uncache", "Refresh", "LoadData", "Summarize", "Execute", "Declare", "Return",
)  # fmt: skip
_QUERY = _classes("Select", "SetOperation", "Union", "Intersect", "Except")
_EMPTY = _classes("Semicolon")

# Typed nodes sqlglot builds from syntax rather than from a name: operators, CASE, casts,
# ARRAY[...], subscripts, the keyword functions (current_date, ...) and the special-syntax
# calls kept above. Any other typed function node is refused.
_SYNTAX_FUNCS = _classes(
    "Cast", "Case", "If", "Array", "Bracket", "Exists", "Any", "All", "Extract", "Substring", "Trim",
    "StrPosition", "Overlay", "GroupConcat", "Concat", "CurrentDate", "CurrentTime", "CurrentTimestamp",
    "Localtime", "Localtimestamp", "CurrentUser", "CurrentRole", "SessionUser", "CurrentSchema",
    "CurrentCatalog", "Unnest", "Explode", "Struct", "Tuple", "JSONExtract", "JSONExtractScalar",
    "JSONBExtract", "JSONBExtractScalar", "JSONBContains", "JSONBContainedBy", "JSONBExists", "JSONBHas",
    "JSONBHasAny", "JSONBHasAll", "ArrayContains", "ArrayContainsAll", "ArrayContained", "ArrayOverlaps",
    "RegexpLike", "RegexpILike", "Pow", "Mod", "ToArray", "MatchAgainst",
    # operators: pg_catalog's, resolved by the server like any operator
    "Binary", "Unary", "Connector", "Predicate",
)  # fmt: skip


# Postgres folds unquoted identifiers to lower case in ASCII only (str.lower would also
# fold, say, the Kelvin sign to "k").
_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _name(node: exp.Expression | str | None) -> str | None:
    """An identifier as Postgres resolves it: unquoted folds to lower case."""
    if node is None:
        return None
    if isinstance(node, str):
        return node.translate(_FOLD)
    if isinstance(node, exp.Identifier):
        return node.this if node.quoted else node.this.translate(_FOLD)
    raise Rejected("syntax", f"unexpected name {_render(node)!r}")


def _qualifier(node: exp.Expression) -> tuple[bool, str | None]:
    """(qualified, schema) of a function call: `schema.f(...)` or `from schema.f(...)`."""
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        if not isinstance(parent.this, exp.Identifier):
            raise Rejected("function_not_allowed", f"{_render(parent)} is not a schema.function call")
        return True, _name(parent.this)
    if isinstance(parent, exp.Table) and parent.this is node:
        if parent.args.get("catalog"):
            raise Rejected("function_not_allowed", f"{_render(parent)} names another database")
        db = parent.args.get("db")
        return db is not None, _name(db)
    return False, None


def _cte_names(with_: exp.With, upto: int | None = None) -> set[str]:
    ctes = with_.expressions if upto is None else with_.expressions[:upto]
    return {_name(cte.args["alias"].this) for cte in ctes}


def _visible_ctes(node: exp.Expression) -> set[str]:
    """The CTE names in scope at `node`, as Postgres scopes them.

    A query's WITH is visible in its body; inside the WITH, a CTE sees the ones before
    it, or all of them under WITH RECURSIVE.
    """
    names: set[str] = set()
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            if parent.args.get("recursive"):
                names |= _cte_names(parent)
            else:
                index = next((i for i, cte in enumerate(parent.expressions) if cte is child), 0)
                names |= _cte_names(parent, index)
        else:
            for value in parent.args.values():
                if isinstance(value, exp.With) and value is not child:
                    names |= _cte_names(value)
        child, parent = parent, parent.parent
    return names


def _parse(statement: str) -> exp.Expression:
    if not statement or not statement.strip():
        raise Rejected("syntax", "empty statement")
    try:
        parsed = sqlglot.parse(statement, read=_Dialect)
    except Exception as exc:  # ParseError, TokenError, and whatever else a hostile input provokes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Rejected("syntax", f"cannot parse: {first}") from None
    statements = [s for s in parsed if s is not None and not isinstance(s, _EMPTY)]
    if not statements:
        raise Rejected("syntax", "empty statement")
    if len(statements) > 1:
        raise Rejected("syntax", f"one statement only, got {len(statements)}")
    return statements[0]


def _check_select_only(tree: exp.Expression) -> None:
    top = tree.unnest() if isinstance(tree, exp.Subquery) else tree
    if not isinstance(top, _QUERY):
        raise Rejected("select_only", f"{type(top).__name__.upper()} is not a SELECT")
    for node in tree.walk():
        if isinstance(node, exp.Select) and node.args.get("into"):
            raise Rejected("select_only", "SELECT INTO creates a table")
        if isinstance(node, _NOT_A_QUERY):
            what = "FOR UPDATE/SHARE" if isinstance(node, exp.Lock) else type(node).__name__.upper()
            raise Rejected("select_only", f"{what} is not allowed, only SELECT")


def _check_relations(tree: exp.Expression) -> None:
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Func):
            continue  # a function in FROM: the function rule
        if not isinstance(table.this, exp.Identifier):
            raise Rejected("exo_objects_only", f"{_render(table)} is not a relation name")
        shown = ".".join(_render(p) for p in table.parts)
        if table.args.get("catalog"):
            raise Rejected("exo_objects_only", f"{shown} names another database")
        schema, name = _name(table.args.get("db")), _name(table.this)
        if schema is None:
            if name in _visible_ctes(table):
                continue
            raise Rejected(
                "exo_objects_only", f"{shown} is not schema-qualified: only {SCHEMA}.<name> may be read"
            )
        if schema != SCHEMA:
            raise Rejected("exo_objects_only", f"{shown} is not in schema {SCHEMA}")


def _check_functions(tree: exp.Expression, allowed_functions: frozenset[str]) -> None:
    for node in tree.find_all(exp.Func):
        qualified, schema = _qualifier(node)
        if not isinstance(node, exp.Anonymous):
            if not isinstance(node, _SYNTAX_FUNCS):
                raise Rejected("function_not_allowed", f"{node.sql_name().lower()} is not allowed")
            if qualified and schema != BUILTIN_SCHEMA:
                raise Rejected("function_not_allowed", f"{_render(node)} is not a builtin")
            continue
        name = _name(node.this)
        shown = f"{schema}.{name}" if qualified else name
        if NEVER.match(name):
            raise Rejected("function_not_allowed", f"{shown} is never allowed")
        if qualified and schema == SCHEMA:
            if name in allowed_functions:
                continue
            raise Rejected("function_not_allowed", f"{shown} is not an exo API function")
        if (not qualified or schema == BUILTIN_SCHEMA) and name in BUILTIN_FUNCTIONS:
            continue
        if not qualified and name in allowed_functions:
            raise Rejected("function_not_allowed", f"{name} is unqualified; write {SCHEMA}.{name}")
        raise Rejected("function_not_allowed", f"{shown} is not an exo API function or an allowed builtin")


def _query_names(tree: exp.Expression) -> set[str]:
    """The column and relation names the query itself defines: its aliases and CTE names."""
    names: set[str] = set()
    for node in tree.find_all(exp.Alias, exp.TableAlias):
        for ident in node.find_all(exp.Identifier):
            names.add(_name(ident))
    return names


def _attribute_names(tree: exp.Expression) -> Iterable[tuple[str, str]]:
    """(name, as written) of every name read as an attribute of something: `w.f`, `x.y.f`,
    `(expr).f`. A bare name is only ever a column, never a call."""
    for column in tree.find_all(exp.Column):
        if column.args.get("table") is None:
            continue
        shown = _render(column)
        if column.args.get("db") is not None:  # schema.table.column, or alias.column.field
            yield _name(column.args["table"]), shown
        if isinstance(column.this, exp.Identifier):
            yield _name(column.this), shown
    for dot in tree.find_all(exp.Dot):
        if isinstance(dot.expression, exp.Identifier) and not isinstance(dot.this, exp.Identifier):
            yield _name(dot.expression), _render(dot)


def _check_attributes(
    tree: exp.Expression, allowed_functions: frozenset[str], columns: frozenset[str]
) -> None:
    known = columns | _query_names(tree)
    for name, shown in _attribute_names(tree):
        if NEVER.match(name):
            raise Rejected("function_not_allowed", f"{shown} calls {name}(...), which is never allowed")
        if name in known or name in BUILTIN_FUNCTIONS or name in allowed_functions:
            continue
        raise Rejected(
            "function_not_allowed",
            f"{shown}: {name} is no column of the exo views and functions, and attribute notation "
            f"would call a function {name}(...)",
        )


def _type_name(node: exp.Expression) -> tuple[str | None, str]:
    """(schema, name) of a type node."""
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.USERDEFINED:
        kind = node.args.get("kind")
        if isinstance(kind, exp.Dot) and all(
            isinstance(p, exp.Identifier) for p in (kind.this, kind.expression)
        ):
            return _name(kind.this), _name(kind.expression) or ""
        if isinstance(kind, exp.Identifier):
            return None, _name(kind) or ""
        if isinstance(kind, str):
            parts = kind.split(".")
            return (_name(parts[0]) if len(parts) > 1 else None), _name(parts[-1]) or ""
        raise Rejected("cast_not_allowed", f"unknown type {_render(node)}")
    return None, (node.name or _render(node)).lower()


def _check_casts(tree: exp.Expression) -> None:
    for node in tree.walk():
        if not isinstance(node, (exp.DataType, *_classes("ObjectIdentifier"))):
            continue
        schema, name = _type_name(node)
        shown = f"{schema}.{name}" if schema else name
        if _REG_TYPE.match(name):
            raise Rejected("cast_not_allowed", f"{shown} looks names up in the catalog")
        if schema is not None and schema not in _BUILTIN_TYPE_SCHEMAS:
            raise Rejected("cast_not_allowed", f"{shown} is not a builtin or exo type")


def _classify(tree: exp.Expression, allowed_functions: frozenset[str], columns: frozenset[str]) -> None:
    _check_select_only(tree)
    _check_relations(tree)
    _check_functions(tree, allowed_functions)
    _check_attributes(tree, allowed_functions, columns)
    _check_casts(tree)


def check(
    statement: str, allowed_functions: Iterable[str] = frozenset(), columns: Iterable[str] = frozenset()
) -> str:
    """The statement to run, regenerated from its parse, or Rejected(rule, detail).

    allowed_functions: the exo API functions (by name) the caller may use as exo.<name>.
    columns: the names that are columns where a qualified name may point (the exo views' and
    functions' columns and the allowed builtins' output columns; api.sql reads them from the
    catalog).
    """
    allowed = frozenset(allowed_functions)
    known = frozenset(columns)
    try:
        tree = _parse(statement)
        _classify(tree, allowed, known)
        normalised = _render(tree)
        again = _parse(normalised)
        if _render(again) != normalised:
            raise Rejected("syntax", "the statement does not regenerate to itself")
        _classify(again, allowed, known)
    except Rejected:
        raise
    except Exception as exc:  # a tree the rules do not expect is refused, never run
        raise Rejected("syntax", f"cannot classify the statement ({type(exc).__name__})") from None
    return normalised


def limited(normalised: str, max_rows: int) -> str:
    """`select * from (<query>) as q limit n`: the checked query with a row cap."""
    return f"select * from ({normalised}) as q limit {int(max_rows)}"
