"""The check exo.cypher runs before a caller's Cypher reaches Apache AGE (stdlib only).

`tokenize` reads a query as AGE's scanner (ag_scanner.l) reads it, so that a word this
module sees is the word AGE sees: string literals in ' or " with backslash escapes
(\\uXXXX and \\UXXXXXXXX included), `backtick names` (`` is one backtick), numbers
(integers, 0x hex, decimals, exponents) with whatever follows them glued (`1CREATE` is
the number 1, then the name CREATE), names whose letters may be any non-ASCII
character (as in AGE, which takes every byte from 0x80 up as a letter), and symbols.

`refusal` then checks the tokens and says why a query may not run (None when it may).
Only reading is allowed: clauses MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER BY,
SKIP, LIMIT, UNWIND, UNION; a function call (a name followed by `(`) only of AGE's own
read functions listed in FUNCTIONS, never dotted; no write or procedural keyword
anywhere as a word; no variable-length relationship (a `*` inside the [...] of a
relationship), since AGE reads those through its own cache, past row security; no
comments, parameters, `$`, `;` or `::` casts. A refusal names the rule, the offending
token (clipped) and its position, and never echoes more of the query than that.
"""

import re
from typing import NamedTuple

MAX_LENGTH = 20000

#: Words that write or run procedures: refused wherever they stand as a word (not inside a
#: string literal or a `backtick name`). EXPLAIN and OPERATOR are AGE's own.
WRITE_KEYWORDS = frozenset(
    {"create", "merge", "set", "delete", "detach", "remove", "call", "load", "foreach", "yield"}
    | {"explain", "operator", "drop"}
)

#: AGE 1.8's read functions a query may call (ag_catalog.age_<name>; count is
#: pg_catalog.count; exists, coalesce, all, any, none, single and reduce are grammar).
#: Left out on purpose: startnode and endnode (they look vertices up past row security),
#: the variable-length and shortest path functions and the graph statistics (AGE's cache,
#: past row security), and everything that is not AGE's (an unqualified name AGE does not
#: know resolves through search_path to any SQL function).
FUNCTIONS = frozenset(
    {"id", "start_id", "end_id", "type", "label", "labels", "properties", "keys", "nodes"}
    | {"relationships", "length", "size", "head", "last", "tail", "isempty", "timestamp"}
    | {"exists", "coalesce", "all", "any", "none", "single", "reduce"}
    | {"toboolean", "tobooleanlist", "tofloat", "tofloatlist", "tointeger", "tointegerlist"}
    | {"tostring", "tostringlist"}
    | {"abs", "ceil", "floor", "round", "sign", "sqrt", "exp", "log", "log10", "e", "pi", "rand"}
    | {"sin", "cos", "tan", "cot", "asin", "acos", "atan", "atan2", "degrees", "radians"}
    | {"left", "right", "substring", "trim", "ltrim", "rtrim", "toupper", "tolower", "replace"}
    | {"split", "reverse", "range"}
    | {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont"}
    | {"percentiledisc"}
)

#: Grammar words that may stand before `(` without being a function call (MATCH (n),
#: WHERE (a)-->(b), NOT (...), ...). None of them names a function AGE could resolve.
GRAMMAR_BEFORE_PAREN = frozenset(
    {"match", "optional", "where", "with", "return", "and", "or", "xor", "not", "in", "is"}
    | {"case", "when", "then", "else", "end", "distinct", "unwind", "as", "starts", "ends"}
    | {"contains", "by", "skip", "limit", "union", "asc", "desc", "ascending", "descending"}
)

_WHITESPACE = "\t\n\v\f\r "
_SYMBOLS = "?%()*+,-./:;<=>[]^{|}"
_TWO_CHAR = ("?|", "?&", "||", "<>", "<=", ">=", "..", "+=", "=~", "::")
_ESCAPES = {'"': '"', "'": "'", "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

_DIGITS = r"[0-9]+"
_DECIMAL = r"(?:[0-9]+\.[0-9]*|\.[0-9]+)"
# AGE's number rules, each anchored where a number starts; the longest match wins, as in
# flex (decimalfail, "1..", gives back the dots: a range, not a decimal).
_NUMBER_RULES = (
    ("integer", re.compile(r"0[Xx][0-9A-Fa-f]+|" + _DIGITS)),
    ("bad hexadecimal literal", re.compile(r"0[Xx]")),
    ("decimal", re.compile(r"(?:" + _DECIMAL + "|" + _DIGITS + r")[Ee][+-]?[0-9]+|" + _DECIMAL)),
    ("range", re.compile(_DIGITS + r"\.\.")),
    ("bad exponent", re.compile(r"(?:" + _DECIMAL + "|" + _DIGITS + r")[Ee][+-]?")),
)


class Token(NamedTuple):
    """kind: name, quoted_name, string, number or symbol; text: the name (backticks
    removed), the string's value, the number or the symbol; pos: 1-based character."""

    kind: str
    text: str
    pos: int


class Refused(Exception):
    """A query exo.cypher will not run: rule (a sentence), token (as written) and pos."""

    def __init__(self, rule, token, pos):
        super().__init__(rule)
        self.rule = rule
        self.token = token
        self.pos = pos

    def message(self):
        shown = self.token if len(self.token) <= 40 else self.token[:40] + "…"
        where = f" at character {self.pos}" if self.pos else ""
        return f"{self.rule}: {shown!r}{where}" if shown else f"{self.rule}{where}"


def _is_digit(c):
    return "0" <= c <= "9"


def _is_name_start(c):
    return "a" <= c <= "z" or "A" <= c <= "Z" or c == "_" or not c.isascii()


def _is_name_part(c):
    return _is_name_start(c) or _is_digit(c) or c == "$"


def _number(query, i):
    """(end, kind) of the number starting at i: AGE's longest matching rule."""
    best_end, best_kind = i, None
    for kind, rule in _NUMBER_RULES:
        m = rule.match(query, i)
        if m and m.end() > best_end:
            best_end, best_kind = m.end(), kind
    if best_kind == "range":
        best_end, best_kind = best_end - 2, "integer"
    return best_end, best_kind


def _string(query, i):
    """(end, value) of the string literal whose quote is at i."""
    quote, j, value = query[i], i + 1, []
    n = len(query)
    while j < n:
        c = query[j]
        if c == quote:
            return j + 1, "".join(value)
        if c != "\\":
            value.append(c)
            j += 1
            continue
        if j + 1 >= n:
            break
        e = query[j + 1]
        if e in _ESCAPES:
            value.append(_ESCAPES[e])
            j += 2
            continue
        width = {"u": 4, "U": 8}.get(e)
        digits = query[j + 2 : j + 2 + width] if width else ""
        if not width or len(digits) < width or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise Refused(
                "query is not valid Cypher: bad escape in a string literal", query[j : j + 2], j + 1
            )
        code = int(digits, 16)
        j += 2 + width
        if 0xD800 <= code <= 0xDBFF:  # a high surrogate takes the low one that must follow
            low = re.match(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))", query[j:])
            low_code = int(low.group(1) or low.group(2), 16) if low else 0
            if not 0xDC00 <= low_code <= 0xDFFF:
                raise Refused(
                    "query is not valid Cypher: a lone surrogate in a string literal", digits, j - width - 1
                )
            code = 0x10000 + ((code - 0xD800) << 10) + (low_code - 0xDC00)
            j += low.end()
        if code == 0 or code > 0x10FFFF or 0xDC00 <= code <= 0xDFFF:
            raise Refused(
                "query is not valid Cypher: bad unicode escape in a string literal", digits, j - width - 1
            )
        value.append(chr(code))
    raise Refused("query is not valid Cypher: unterminated string literal", query[i : i + 20], i + 1)


def _quoted_name(query, i):
    """(end, name) of the `backtick name` starting at i."""
    j, name = i + 1, []
    while True:
        close = query.find("`", j)
        if close < 0:
            raise Refused("query is not valid Cypher: unterminated `quoted name`", query[i : i + 20], i + 1)
        name.append(query[j:close])
        if query.startswith("``", close):
            name.append("`")
            j = close + 2
            continue
        if not "".join(name):
            raise Refused("query is not valid Cypher: empty `quoted name`", "``", i + 1)
        return close + 1, "".join(name)


def tokenize(query):
    """The tokens of query as AGE scans it; raises Refused for comments, parameters and
    what AGE could not scan."""
    tokens, i, n = [], 0, len(query)
    while i < n:
        c = query[i]
        if c in _WHITESPACE:
            i += 1
        elif query.startswith(("//", "/*"), i):
            raise Refused("query must not contain comments (// or /*)", query[i : i + 2], i + 1)
        elif _is_digit(c) or (c == "." and _is_digit(query[i + 1 : i + 2])):
            end, kind = _number(query, i)
            if kind != "integer" and kind != "decimal":
                raise Refused(f"query is not valid Cypher: {kind}", query[i:end], i + 1)
            tokens.append(Token("number", query[i:end], i + 1))
            i = end
        elif c in "'\"":
            end, value = _string(query, i)
            tokens.append(Token("string", value, i + 1))
            i = end
        elif c == "`":
            end, name = _quoted_name(query, i)
            tokens.append(Token("quoted_name", name, i + 1))
            i = end
        elif c == "$":
            raise Refused("query must not contain $ (no parameters, no dollar quotes)", "$", i + 1)
        elif _is_name_start(c):
            j = i + 1
            while j < n and _is_name_part(query[j]):
                j += 1
            tokens.append(Token("name", query[i:j], i + 1))
            i = j
        elif query.startswith(_TWO_CHAR, i):
            tokens.append(Token("symbol", query[i : i + 2], i + 1))
            i += 2
        elif c in _SYMBOLS:
            tokens.append(Token("symbol", c, i + 1))
            i += 1
        else:
            raise Refused("query is not valid Cypher: unexpected character", c, i + 1)
    return tokens


def check(query):
    """Raise Refused when query may not run (see the module's doc)."""
    if query is None or not query.strip(_WHITESPACE):
        raise Refused("query must be a Cypher query, got " + ("null" if query is None else "a blank"), "", 0)
    if len(query) > MAX_LENGTH:
        raise Refused(f"query is longer than {MAX_LENGTH} characters", "", 0)
    dollar = query.find("$")  # anywhere, in string literals too: the query is dollar-quoted into SQL
    if dollar >= 0:
        raise Refused("query must not contain $ (no parameters, no dollar quotes)", "$", dollar + 1)
    tokens = tokenize(query)
    brackets = []  # "relationship", "list", "(" or "{" for each open bracket
    for k, token in enumerate(tokens):
        previous = tokens[k - 1] if k else None
        following = tokens[k + 1] if k + 1 < len(tokens) else None
        word = token.text.lower()
        if token.kind == "name" and word in WRITE_KEYWORDS:
            raise Refused(
                "query is read-only: " + token.text.upper() + " is refused (no word that writes or calls)",
                token.text,
                token.pos,
            )
        called = following is not None and following.kind == "symbol" and following.text == "("
        if called and token.kind in ("name", "quoted_name"):
            if previous is not None and previous.kind == "symbol" and previous.text == ".":
                raise Refused(
                    "query must not call schema-qualified functions (x.f(...))", token.text, token.pos
                )
            grammar = token.kind == "name" and word in GRAMMAR_BEFORE_PAREN
            if not grammar and word not in FUNCTIONS:
                raise Refused(
                    "query may only call AGE's read functions (id, type, size, ...)", token.text, token.pos
                )
        if token.kind != "symbol":
            continue
        if token.text == ";":
            raise Refused("query must be one statement: no ; outside string literals", ";", token.pos)
        if token.text == "::":
            raise Refused("query must not cast values (::)", "::", token.pos)
        if token.text == "[":
            after_dash = previous is not None and previous.kind == "symbol" and previous.text == "-"
            brackets.append("relationship" if after_dash else "list")
        elif token.text in "({":
            brackets.append(token.text)
        elif token.text in ")]}" and brackets:
            brackets.pop()
        elif token.text == "*" and brackets and brackets[-1] == "relationship":
            raise Refused("query must not use variable-length relationships (* in -[...]-)", "*", token.pos)
    if not any(t.kind == "name" and t.text.lower() == "return" for t in tokens):
        raise Refused("query must RETURN something (MATCH ... RETURN ...)", "", 0)


def refusal(query):
    """Why query may not run (the rule, the token and where), or None when it may."""
    try:
        check(query)
    except Refused as refused:
        return refused.message()
    return None
