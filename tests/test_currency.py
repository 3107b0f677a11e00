"""plpy/currency.py is the one home of the currencies: the worker's event extraction reads money by
the same signs, codes and words that the packet's change marks and timeline use."""

from __future__ import annotations

import pytest

from exocortex.extraction import events
from exocortex.plpy.currency import CURRENCY_SIGNS, CURRENCY_WORDS


@pytest.mark.parametrize("code", sorted(CURRENCY_SIGNS))
def test_the_worker_reads_each_currency_by_its_sign_code_and_words(code):
    sign = CURRENCY_SIGNS[code]
    assert events.money_in(f"Paid {sign}1,210.50 for it.") == (1210.5, code)
    assert events.money_in(f"Paid 12.50 {code} for it.") == (12.5, code)
    assert events.money_in(f"Paid 12.50 {code.casefold()} for it.") == (12.5, code)
    for word in (w for w, named in CURRENCY_WORDS.items() if named == code):
        assert events.money_in(f"Paid 40 {word} for it.") == (40.0, code)


def test_every_currency_word_names_a_currency_with_a_sign():
    assert set(CURRENCY_WORDS.values()) <= set(CURRENCY_SIGNS)
