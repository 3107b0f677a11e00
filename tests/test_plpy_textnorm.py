"""plpy/textnorm.py as plain Python (the same code runs inlined in plpython3u)."""

import pytest
import textnorm


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Jane Doe", "jane doe"),
        ("  Jane\t\n DOE. ", "jane doe"),
        ("\u201cJane Doe\u201d", "jane doe"),
        ("\uff2a\uff41\uff4e\uff45", "jane"),  # full-width letters fold by NFKC
        ("STRASSE", "strasse"),
        ("Stra\u00dfe", "strasse"),  # casefold, not lower
        ("C++", "c++"),
        ("(...)", None),
        ("   ", None),
        (None, None),
    ],
)
def test_canonical_key(name, key):
    assert textnorm.canonical_key(name) == key


def test_canonical_key_is_idempotent():
    for name in ["  Jane  DOE ", "\u00abAcme\u00bb", "O'Brien"]:
        once = textnorm.canonical_key(name)
        assert textnorm.canonical_key(once) == once
