"""Text normalisation shared by the database and the worker (stdlib only).

Inlined into plpython3u functions by the migrator (`# exo:include textnorm`),
and importable as plain Python for tests.
"""

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"


def canonical_key(name):
    """The identity key of a name: NFKC, case-folded, inner whitespace collapsed,
    surrounding quotes and punctuation removed. "  Jane  DOE. " -> "jane doe".
    Returns None for None or for a name with nothing left."""
    if name is None:
        return None
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACE.sub(" ", text).strip().strip(_EDGE_PUNCT).strip()
    return text or None
