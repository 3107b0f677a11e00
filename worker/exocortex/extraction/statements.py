"""What the owner says of their own life, by syntax: first-person statements of a current value.

"My rent is £1,210 a month." / "My new manager is Priya Nair." / "My standup moved to 9:30." /
"Changed my running goal to a full marathon." / "I live in Leeds." The owner's own sentences (in
a note of theirs, or a chat line they sent) that give a value of something of theirs become
attributes {subject, attribute, value} of the extraction: extracted facts, dated by their window
(exo_private.merge_window_attributes), a newer value closing the older one (record_fact), so
"What is my rent?" opens with the newest value.

Read from spaCy's parse (exocortex.extraction.ner), in three constructions:
  be    "my X is Y": X's noun with its compound nouns and adjectives ("phone plan", "running
        goal", "favourite meal"; a word that only dates it, CHANGE_WORDS: "new", "current", is
        left out), the noun complement of a present-tense "be" as Y, one that names rather than
        describes ("lasagna", "Priya Nair", "a Renault Zoe"; not "nice", "so bad", "a big fan")
  to    "my X moved | switched | was reduced | went up to Y", "(I) changed | moved my X to Y": a
        verb of CHANGE_VERBS (or "go up | down") whose subject or object is "my X" and whose "to"
        gives Y, X no relative ("my family went to Disneyland" tells a trip, "sent my CV to
        Acme" gives the CV no value)
  verb  "I live in Y", "I moved to Y", "I work at Y": the first person with a verb of
        relation_syntax.VERBS that takes a preposition, as the relation's attribute (lives_in),
        Y a named place or organisation ("I work construction for my dad" names none)
Y is the complement's whole phrase ("£1,150 a month", "27 Alder Row, Larkhaven") without a
leading article. The subject comes before the verb (not a question: "Is my rent...?") and
outside quotation marks; nothing is said by a negated, modal or conditional clause ("My rent is
not", "My rent might go up to", "if my rent is"), by a value that is a pronoun or a question
word, or in "be"'s past tense ("my rent was £900" tells what no longer holds).
"""

from __future__ import annotations

from exocortex.extraction import ner
from exocortex.extraction.llm import acceptance
from exocortex.extraction.relation_patterns import CHAT_LINE, KIN
from exocortex.extraction.relation_syntax import VERBS

FIRST_PERSON_POSSESSIVE = frozenset({"my", "our"})
# Words that date a value rather than name what it is of ("my new manager" is my manager).
CHANGE_WORDS = frozenset({"new", "current", "latest", "present", "old", "previous", "usual"})
# Verbs that give a thing of the owner's a new value ("moved my dentist appointment to Friday"),
# unlike those that send it somewhere ("sent my CV to Acme", "took my car to the garage").
CHANGE_VERBS = frozenset(
    """change switch move reschedule push bring shift raise lower increase reduce cut bump upgrade
    downgrade update set extend drop lift""".split()  # noqa: SIM905
)
CONDITIONS = frozenset({"if", "unless", "whether", "when", "once", "until", "before", "after"})


def statements(text: str, author_labels: set[str] | None) -> list[tuple[str, str, str]]:
    """(who, attribute, value) the owner states in a window: in a chat (lines "TIME SENDER: ..."),
    the lines whose sender is one of author_labels (the owner's names there; who is that label);
    in other text every sentence, who "I" (None: the window is no one's known)."""
    chat = [m for m in map(CHAT_LINE.match, text.split("\n")) if m]
    if chat:
        lines = [
            (m["sender"].strip(), m["text"]) for m in chat if m["sender"].strip() in (author_labels or set())
        ]
        docs = zip(lines, ner.pipeline().pipe([t for _, t in lines]), strict=True)
        return [(who, a, v) for (who, _), doc in docs for a, v in _stated(doc)]
    if author_labels is None:
        return []
    return [("I", a, v) for a, v in _stated(ner.parse(text))]


def add_to(
    result: acceptance.Extraction, text: str, author_labels: set[str] | None, max_attributes: int
) -> int:
    """The owner's statements of text validated into result's attributes (acceptance's rules: a
    grounded value, one value per subject and attribute, at most max_attributes in all). Returns
    how many it added."""
    before = len(result.attributes)
    found = [{"subject": who, "attribute": a, "value": v} for who, a, v in statements(text, author_labels)]
    acceptance.keep_attributes(found, result, text, max_attributes)
    return len(result.attributes) - before


def _stated(doc) -> list[tuple[str, str]]:
    found = []
    for token in doc:
        if _denied(token):
            continue
        if token.lemma_ == "be" and token.tag_ in ("VBZ", "VBP"):
            subject = _possessed_subject(token)
            complement = next((c for c in token.children if c.dep_ == "attr"), None)
            if (
                subject is not None
                and complement is not None
                and subject.i < token.i < complement.i
                and not _described(complement)
            ):
                found.append((_attribute(subject), _value(complement)))
        elif token.pos_ == "VERB":
            found.extend(_to_value(token))
    return [(a, v) for a, v in found if a and any(c.isalnum() for c in v)]


def _to_value(verb) -> list[tuple[str, str]]:
    """ "my X moved to Y", "changed my X to Y", "I live in Y"."""
    target = next((c for c in verb.children if c.dep_ == "prep" and c.lower_ == "to"), None)
    value = next((c for c in target.children if c.dep_ == "pobj"), None) if target is not None else None
    subject = _possessed_subject(verb)
    if subject is None:
        thing = next((c for c in verb.children if c.dep_ == "dobj"), None)
        actor = next((c for c in verb.children if c.dep_ == "nsubj"), None)
        if thing is not None and _possessed(thing) and (actor is None or actor.lower_ in ("i", "we")):
            subject = thing
    if (
        value is not None
        and subject is not None
        and _changes(verb)
        and subject.lemma_.lower() not in KIN
        and subject.i < value.i
    ):
        return [(_attribute(subject), _value(value))]
    actor = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    known = VERBS.get(verb.lemma_.lower())
    if actor is None or actor.lower_ != "i" or not known or not known[1].startswith("prep:"):
        return []
    if verb.tag_ == "VBD" and not known[2]:
        return []  # "I lived in Japan": a state that has ended (an event, "I moved to", holds)
    preps = known[1].removeprefix("prep:").split(",")
    for prep in verb.children:
        place = next((c for c in prep.children if c.dep_ == "pobj"), None)
        # a named place or organisation ("in Leeds", "at Northwind Labs"), not "for my dad"
        if prep.dep_ == "prep" and prep.lower_ in preps and place is not None and _named(place):
            return [(known[0].lower(), _value(place))]
    return []


def _changes(verb) -> bool:
    """A verb that gives a thing a new value: CHANGE_VERBS, or "go up | down" ("my family went to
    Disneyland" tells a trip, not a value of the family's)."""
    lemma = verb.lemma_.lower()
    return lemma in CHANGE_VERBS or (
        lemma == "go" and any(c.dep_ == "prt" and c.lower_ in ("up", "down") for c in verb.children)
    )


def _named(head) -> bool:
    """The phrase head heads names something or counts: a proper noun or a number in it."""
    return any(t.pos_ in ("PROPN", "NUM") for t in head.subtree)


def _described(head) -> bool:
    """A complement that describes rather than names ("a big fan", "all odd ages", "just temporary
    homes"): an indefinite article or an adjective in it, and nothing named."""
    if _named(head):
        return False
    words = list(head.subtree)
    return any(t.dep_ == "det" and t.lower_ in ("a", "an") for t in words) or any(
        t.dep_ == "amod" and t.pos_ == "ADJ" for t in words
    )


def _possessed(noun) -> bool:
    """ "my X" or "our X", X no time ("moved my senior year to Arizona")."""
    if noun.ent_type_ in ("DATE", "TIME"):
        return False
    return any(c.dep_ == "poss" and c.lower_ in FIRST_PERSON_POSSESSIVE for c in noun.children)


def _quoted(token) -> bool:
    """token stands inside quotation marks in its sentence: someone else's words, or a title."""
    marks = [t for t in token.sent if t.i < token.i and t.text in ('"', "\u201c", "\u201d", "''", "``")]
    return len(marks) % 2 == 1


def _possessed_subject(verb):
    noun = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if noun is None or noun.pos_ not in ("NOUN", "PROPN") or not _possessed(noun):
        return None
    if _quoted(noun):
        return None
    # a word a hyphen joins to more is not the thing ("my brother-in-law")
    after = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    return None if after is not None and after.text == "-" else noun


def _attribute(noun) -> str:
    """X of "my X": the noun with its compound nouns and adjectives, words of letters only
    (nothing where the noun itself is none: "my go-to's")."""
    if not noun.is_alpha:
        return ""
    words = [
        c.lower_
        for c in noun.children
        if c.i < noun.i and c.dep_ in ("compound", "amod") and c.lower_ not in CHANGE_WORDS and c.is_alpha
    ]
    return " ".join([*words, noun.lower_])


def _value(head) -> str:
    tokens = [t for t in head.subtree if not (t.dep_ == "det" and t.i == head.left_edge.i)]
    if head.pos_ == "PRON" or head.tag_ in ("WP", "WDT", "WRB") or not tokens:
        return ""
    start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)
    return head.doc.text[start:end].strip(" ,;:.")


def _denied(token) -> bool:
    """A negated, modal or conditional clause, or one that asks (its verb before its subject)."""
    children = list(token.children)
    if any(c.dep_ == "neg" or (c.dep_ == "aux" and c.tag_ == "MD") for c in children):
        return True
    if any(c.dep_ == "mark" and c.lower_ in CONDITIONS for c in children):
        return True
    return any(c.tag_ in ("WP", "WRB", "WDT") and c.i < token.i for c in children)
