"""plpy/cypher_lexer.py as plain Python (the same code runs inlined in plpython3u)."""

import re

import cypher_lexer
import pytest
from cypher_lexer import FUNCTIONS, WRITE_KEYWORDS, Refused, Token, check, refusal, tokenize
from hypothesis import given, settings
from hypothesis import strategies as st


def kinds(query: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(query)]


# -- the tokenizer -----------------------------------------------------------------------------


def test_a_number_glued_to_a_word_is_a_number_then_a_name():
    assert kinds("1CREATE 0x1Fz 2.5e3x .5e1 7..9") == [
        ("number", "1"),
        ("name", "CREATE"),
        ("number", "0x1F"),
        ("name", "z"),
        ("number", "2.5e3"),
        ("name", "x"),
        ("number", ".5e1"),
        ("number", "7"),
        ("symbol", ".."),
        ("number", "9"),
    ]
    # hex digits run on, as in AGE: 0xCREATE is 0xC then REATE
    assert kinds("0xCREATE") == [("number", "0xC"), ("name", "REATE")]


def test_string_literals_and_their_escapes():
    assert kinds(r"""'it\'s' "say \"hi\"" 'a\\' '\u0041\U0001F600' '\ud83d\ude00' 'x\/y'""") == [
        ("string", "it's"),
        ("string", 'say "hi"'),
        ("string", "a\\"),
        ("string", "A\U0001f600"),
        ("string", "\U0001f600"),
        ("string", "x/y"),
    ]
    # a unicode escape of a quote does not end the literal, and nothing in it is a word
    assert kinds(r"RETURN 'a\u0027 CREATE (n) //'") == [("name", "RETURN"), ("string", "a' CREATE (n) //")]


def test_backtick_names_double_their_backticks_and_are_never_keywords():
    assert kinds("MATCH (`a``b`:`CREATE`) RETURN `a``b`") == [
        ("name", "MATCH"),
        ("symbol", "("),
        ("quoted_name", "a`b"),
        ("symbol", ":"),
        ("quoted_name", "CREATE"),
        ("symbol", ")"),
        ("name", "RETURN"),
        ("quoted_name", "a`b"),
    ]
    assert refusal("MATCH (n:`CREATE`) RETURN n.`SET`") is None


def test_names_take_any_non_ascii_letter_as_age_does():
    # AGE's scanner reads every byte from 0x80 up as a letter: a no-break space is part of
    # the name, so CREATE\u00a0 is no keyword there either.
    assert kinds("RETURN Ünïcødé_1, CREATE\u00a0") == [
        ("name", "RETURN"),
        ("name", "Ünïcødé_1"),
        ("symbol", ","),
        ("name", "CREATE\u00a0"),
    ]


def test_symbols_longest_first_and_positions():
    assert [t.text for t in tokenize("a<>b<=c>=d=~e||f<-[r]->g")] == [
        "a", "<>", "b", "<=", "c", ">=", "d", "=~", "e", "||", "f", "<", "-", "[", "r", "]", "-", ">", "g",
    ]  # fmt: skip
    assert tokenize("  MATCH\n(n)") == [Token("name", "MATCH", 3), Token("symbol", "(", 9), Token("name", "n", 10), Token("symbol", ")", 11)]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "rule"),
    [
        ("RETURN 'open", "unterminated string literal"),
        ("RETURN 'a\\", "unterminated string literal"),
        ("RETURN `open", "unterminated `quoted name`"),
        ("RETURN ``", "empty `quoted name`"),
        ("RETURN '\\q'", "bad escape"),
        ("RETURN '\\u12'", "bad escape"),
        ("RETURN '\\u0000'", "bad unicode escape"),
        ("RETURN '\\ud83d'", "lone surrogate"),
        ("RETURN '\\ude00'", "bad unicode escape"),
        ("RETURN '\\U00110000'", "bad unicode escape"),
        ("RETURN 0x", "bad hexadecimal literal"),
        ("RETURN 1e", "bad exponent"),
        ("RETURN 1.5E+", "bad exponent"),
        ("RETURN 1 ! 2", "unexpected character"),
        ("RETURN a // c", "comments"),
        ("RETURN a /* c */", "comments"),
    ],
)
def test_what_age_could_not_scan_is_refused(query, rule):
    with pytest.raises(Refused, match=rule):
        tokenize(query)


# -- the check ---------------------------------------------------------------------------------


ALLOWED = [
    "MATCH (n) RETURN n",
    "MATCH (p:Person)-[r:WORKS_AT]->(o:Org {name: 'Northwind Labs'}) RETURN {person: p.name, rel: type(r)}",
    "OPTIONAL MATCH (a)-[r]-(b) WHERE a.name STARTS WITH 'I' AND NOT b.name CONTAINS 'x' "
    "RETURN DISTINCT b.name ORDER BY b.name DESC SKIP 1 LIMIT 5",
    "MATCH (n) WITH n, count(*) AS c WHERE c > 1 RETURN collect(n.name)",
    "UNWIND range(1, 3) AS x RETURN x * 2 UNION ALL RETURN 0",
    "MATCH (n) RETURN CASE WHEN n.is_owner THEN toUpper(n.name) ELSE toLower(n.name) END",
    "MATCH (n) WHERE exists(n.name) AND n.name =~ '.*a.*' RETURN coalesce(n.key, n.name)",
    "MATCH (a) WHERE EXISTS { MATCH (a)-->(b) } RETURN size(keys(a))",
    "RETURN all(x IN [1, 2] WHERE x > 0), reduce(s = 0, x IN [1, 2] | s + x)",
    "MATCH p = (a)-[r]->(b) RETURN [nodes(p), relationships(p), length(p), id(a), label(b)]",
    "MATCH (n) RETURN n.name + 'CREATE; SET \\' DELETE' + \"call\"",  # words in literals
    "MATCH (n) RETURN n {.name, .create_date}",  # a key that only contains a keyword
    "MATCH (n) RETURN [x IN [1,2] | x * 2][0]",  # * in a list, not a relationship
    "MATCH (a)-[r {w: 2 * 3}]->(b) RETURN r",  # * in a relationship's map
    "RETURN `count`(1)",  # a backtick name is lower-cased against the allowlist
]


@pytest.mark.parametrize("query", ALLOWED)
def test_read_queries_pass(query):
    assert refusal(query) is None


REFUSED = [
    # the findings of issue 10
    (
        "RETURN undefer_subject('Walter Rivera'::pg_text)",
        "read functions.*: 'undefer_subject' at character 8",
    ),
    ("RETURN 1CREATE (n)", "CREATE is refused"),
    ("MATCH (n) 1DELETE n RETURN 1", "DELETE is refused"),
    ("MATCH (n) 1SET n.x = 1 RETURN n", "SET is refused"),
    ("RETURN 1 1MERGE (n)", "MERGE is refused"),
    ("MATCH (n) 1REMOVE n.x RETURN n", "REMOVE is refused"),
    # writes and procedures anywhere as a word
    ("match (n) cReAtE (m) return n", "CREATE is refused .*: 'cReAtE' at character 11"),
    ("MATCH (n) DETACH DELETE n RETURN 1", "DETACH is refused"),
    ("CALL db.labels() YIELD label RETURN label", "CALL is refused"),
    ("LOAD CSV FROM 'x' AS line RETURN line", "LOAD is refused"),
    ("UNWIND [1] AS x FOREACH (y IN [x] | SET y.a = 1) RETURN x", "FOREACH is refused"),
    ("EXPLAIN MATCH (n) RETURN n", "EXPLAIN is refused"),
    ("RETURN 1 OPERATOR(pg_catalog.+) 2", "OPERATOR is refused"),
    ("MATCH (n) RETURN n.set", "SET is refused"),
    # functions: only AGE's read functions, never dotted
    ("RETURN drop_graph('graph_personal'::pg_text, true)", "read functions.*: 'drop_graph'"),
    ("RETURN create_vlabel('g'::pg_text, 'L'::pg_text)", "read functions.*: 'create_vlabel'"),
    ("RETURN set_config('exo.cypher_hidden_vertices', '{}', true)", "read functions.*: 'set_config'"),
    ("RETURN lo_from_bytea(0, 'x')", "read functions.*: 'lo_from_bytea'"),
    ("RETURN pg_sleep(10)", "read functions.*: 'pg_sleep'"),
    ("RETURN pg_read_file('/etc/passwd')", "read functions.*: 'pg_read_file'"),
    ("RETURN `age_cos`(1)", "read functions.*: 'age_cos'"),
    ("RETURN `pg_sleep` (1)", "read functions.*: 'pg_sleep'"),
    ("MATCH (a)-[r]->(b) RETURN startNode(r)", "read functions.*: 'startNode'"),
    ("MATCH (a)-[r]->(b) RETURN endNode(r)", "read functions.*: 'endNode'"),
    ("RETURN create_barbell_graph('g', 3, 'A', null, 2, 'B', null)", "read functions"),
    ("RETURN exo_private.remark_charged()", "schema-qualified functions .*: 'remark_charged'"),
    ("RETURN `exo_private` . `remark_charged` ()", "schema-qualified"),
    ("RETURN pg_catalog.count(1)", "schema-qualified"),
    ("RETURN x.match(1)", "schema-qualified"),
    # variable-length relationships read AGE's cache, past row security
    ("MATCH (a)-[*]->(b) RETURN b", "variable-length relationships .* at character 12"),
    ("MATCH (a)<-[r:KNOWS*1..3]-(b) RETURN b", "variable-length"),
    ("MATCH (a)-[ * ]-(b) RETURN b", "variable-length"),
    # breakouts and what a regular expression would misread
    ("MATCH (n) RETURN n; MATCH (m) DETACH DELETE m", "one statement"),
    ("MATCH (n) RETURN n;", "one statement: no ; outside string literals: ';' at character 19"),
    ("RETURN 1 $$) as (v agtype); drop table exo_private.entities; --", "must not contain \\$"),
    ("RETURN '$$) as (v agtype); select 1; --'", "must not contain \\$"),
    ("MATCH (n) RETURN $name", "must not contain \\$"),
    ("MATCH (n) RETURN n // it's\nCREATE (m) //'", "comments"),
    ("MATCH (n) RETURN n /* ' */ CREATE (m) /* ' */", "comments"),
    ("RETURN 'x'::pg_text", "must not cast"),
    ("MATCH (n) WHERE n.name = 'x'", "must RETURN"),
    ("MATCH (n) WHERE n.name = 'RETURN' WITH n AS m", "must RETURN"),
    ("MATCH (n) RETURN `RETURN`", None),  # a backtick RETURN is a name: fine
    ("", "must be a Cypher query, got a blank"),
    (" \n\t", "must be a Cypher query"),
    ("RETURN 1" + " " * 20000, "longer than 20000 characters"),
]


@pytest.mark.parametrize(("query", "rule"), REFUSED)
def test_refusals_name_the_rule_the_token_and_where(query, rule):
    if rule is None:
        assert refusal(query) is None
    else:
        message = refusal(query)
        assert message is not None
        assert re.search(rule, message), message


def test_a_null_query_is_refused():
    assert refusal(None) == "query must be a Cypher query, got null"


def test_refusals_never_echo_much_of_the_query():
    huge = "RETURN " + "a" * 5000 + "("
    assert len(refusal(huge)) < 200
    assert len(refusal("RETURN '" + "x" * 19000)) < 200
    assert len(refusal("x" * 30000)) < 100


def test_every_write_keyword_is_refused_in_any_case():
    for word in WRITE_KEYWORDS:
        for spelling in (word, word.upper(), word.title()):
            with pytest.raises(Refused, match=f"{word.upper()} is refused"):
                check(f"MATCH (n) RETURN 1 {spelling} (n)")


def test_every_allowed_function_is_one_age_1_8_has_or_grammar():
    grammar = {"exists", "coalesce", "all", "any", "none", "single", "reduce", "count"}
    assert "startnode" not in FUNCTIONS and "endnode" not in FUNCTIONS
    assert not any(name.startswith("age_") or "shortest" in name or "vle" in name for name in FUNCTIONS)
    assert grammar <= FUNCTIONS
    for name in FUNCTIONS:
        assert refusal(f"RETURN {name}(1)") is None
        assert refusal(f"RETURN {name.upper()}(1)") is None


# -- fuzz ------------------------------------------------------------------------------------------

PIECES = [
    "MATCH", "RETURN", "WHERE", "WITH", "n", "(", ")", "[", "]", "{", "}", "-", ">", "<", "*", ":",
    ",", ".", "..", "=", "|", "+", "'s'", '"d"', "'\\''", "'\\u0041'", "`b``q`", "1", "0x1F", "1.5e3",
    ".5", "1e", "0x", "count", "size", "startNode", "pg_sleep", "`age_cos`", "Ünï", "\u00a0", " ", "\n",
    "'", '"', "`", "\\", "$", ";", "//", "/*", "::", "!", "@", "1..2",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=30), st.sampled_from(["", " "]))
def test_token_soup_never_crashes_the_check(pieces, glue):
    query = glue.join(pieces)
    result = refusal(query)
    assert result is None or (isinstance(result, str) and len(result) < 300)
    if result is None:
        tokens = tokenize(query)  # what passed the check tokenizes, and holds no write word
        assert not any(t.kind == "name" and t.text.lower() in WRITE_KEYWORDS for t in tokens)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=12),
    st.sampled_from(sorted(WRITE_KEYWORDS)),
    st.sampled_from(["", "1", " ", "\n", "(", ")", "0.", "]"]),
    st.lists(st.sampled_from(PIECES), max_size=12),
)
def test_a_query_whose_tokens_hold_a_write_keyword_is_refused(before, word, prefix, after):
    query = " ".join(before) + " " + prefix + word.upper() + " " + " ".join(after) + " RETURN 1"
    try:
        tokens = tokenize(query)
    except Refused:
        return  # refused by the tokenizer already
    if any(t.kind == "name" and t.text.lower() in WRITE_KEYWORDS for t in tokens):
        assert refusal(query) is not None


def test_module_constants_are_consistent():
    assert cypher_lexer.MAX_LENGTH == 20000
    assert not (WRITE_KEYWORDS & FUNCTIONS)
