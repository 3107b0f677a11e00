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
from exocortex.extraction.relation_syntax import TITLES, VERBS

FIRST_PERSON = frozenset({"i", "we"})
FIRST_PERSON_POSSESSIVE = frozenset({"my", "our"})
# Words that say a thing's value is no longer its own ("my old car", "our former manager").
ENDED_WORDS = frozenset({"old", "previous", "former", "ex"})
# Prepositions of "X is at | on Y" ("Our standup is at 9:30", "The offsite is on 2 June").
PLACES_AND_TIMES = frozenset({"at", "on"})
# spaCy's entity types of a moment or measure, and of a name that can be a value.
MOMENTS_AND_MEASURES = frozenset({"DATE", "TIME", "MONEY", "QUANTITY", "CARDINAL", "PERCENT"})
NAMES = frozenset({"PERSON", "ORG", "GPE", "FAC", "LOC", "PRODUCT"})
# An amount the owner pays, and the prepositions of what it is paid for ("£1,210 in rent").
AMOUNTS = frozenset({"MONEY"})
AMOUNT_OF = frozenset({"in", "for", "on"})
# Words that date a value rather than name what it is of ("my new manager" is my manager).
CHANGE_WORDS = frozenset({"new", "current", "latest", "present", "old", "previous", "usual"})
# Verbs that give a thing of the owner's a new value ("moved my dentist appointment to Friday"),
# unlike those that send it somewhere ("sent my CV to Acme", "took my car to the garage").
CHANGE_VERBS = frozenset(
    """change switch move reschedule push bring shift raise lower increase reduce cut bump upgrade
    downgrade update set extend drop lift""".split()  # noqa: SIM905
)
CONDITIONS = frozenset({"if", "unless", "whether", "when", "once", "until", "before", "after"})
# English's stative verbs of perception, feeling, thought and wanting (those that refuse the
# progressive: "*I'm knowing"): their object is what the owner experiences, not a value they
# hold ("I miss Leeds now", "now I love Paris"); and light verbs, whose lemma names nothing the
# object could be the value of ("now I have Kale").
PERCEPTION_VERBS = frozenset({"see", "hear", "smell", "taste", "feel", "notice", "sense"})
EXPERIENCE_VERBS = PERCEPTION_VERBS | frozenset(
    """love like hate dislike miss prefer adore fear enjoy mind envy admire respect trust
    appreciate think know believe understand remember forget recognise recognize realise realize
    doubt suppose guess mean imagine wonder want need wish hope""".split()  # noqa: SIM905
)
LIGHT_VERBS = frozenset({"be", "have", "get", "do", "make", "take", "give", "go", "come", "put", "let"})


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
        if token.dep_ == "appos":
            found.extend(_apposed(token))
        if _denied(token):
            continue
        if token.lemma_ == "be" and token.tag_ in ("VBZ", "VBP"):
            found.extend(_is_value(token))
        elif token.pos_ == "VERB":
            found.extend(_to_value(token) or _amount(token) or _now(token))
    return [(a, v) for a, v in found if a and any(c.isalnum() for c in v)]


def _is_value(be) -> list[tuple[str, str]]:
    """ "my X is Y", "X is at | on | in Y", "Y is my X"."""
    subject = next((c for c in be.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None or subject.i > be.i:
        return []
    complement = next((c for c in be.children if c.dep_ == "attr"), None)
    if complement is None and subject.lemma_.lower() not in KIN:  # "my brother is in Leeds": a relative's
        prep = next((c for c in be.children if c.dep_ == "prep" and c.lower_ in PLACES_AND_TIMES), None)
        complement = next((c for c in prep.children if c.dep_ == "pobj"), None) if prep is not None else None
        if complement is not None and not _named(complement):
            return []
    if complement is None:
        return []
    # "X is Y" of an unpossessed X only for a moment or measure ("Graduation is May 25th"; not
    # "Cranberry sauce is just Jell-O")
    plain = complement.dep_ != "attr" or _possessed(subject) or _moment_or_name(complement, names=False)
    if plain and _thing(subject, complement) and not _described(complement):
        return [(_attribute(subject), _value(complement))]
    # "Tomasz Wolski is my line manager": a name, then the thing of the owner's it is
    if (
        complement.dep_ == "attr"
        and _name(subject)
        and _thing(complement, subject)
        and _possessed(complement)
        and complement.lemma_.lower() not in KIN
    ):
        return [(_attribute(complement), _value(subject, before_only=True))]
    return []


def _apposed(noun) -> list[tuple[str, str]]:
    """ "Tomasz Wolski, my manager," and "my manager, Tomasz Wolski": a name beside a thing of the
    owner's (not a relative's: the relation passes read "my sister Ana"), in a sentence with a
    verb ("Oh man, Ariana Grande, my girl!" exclaims)."""
    head = noun.head
    if noun.sent.root.pos_ not in ("VERB", "AUX"):
        return []
    for name, thing in ((head, noun), (noun, head)):
        if (
            _name(name)
            and thing.pos_ == "NOUN"
            and _possessed(thing)
            and _thing(thing, name)
            and thing.lemma_.lower() not in KIN
        ):
            return [(_attribute(thing), _value(name, before_only=name is head))]
    return []


def _to_value(verb) -> list[tuple[str, str]]:
    """ "my X moved to Y", "changed my X to Y", "the X was pushed back to Y", "I live in Y"."""
    # "to" of the verb, or of its particle, adverb or "from" ("pushed back to", "went up to",
    # "went from 20 GB to 50 GB")
    heads = [
        c for c in verb.children if c.dep_ in ("prt", "advmod") or (c.dep_ == "prep" and c.lower_ == "from")
    ]
    target = next(
        (c for t in (verb, *heads) for c in t.children if c.dep_ == "prep" and c.lower_ == "to"),
        None,
    )
    value = next((c for c in target.children if c.dep_ == "pobj"), None) if target is not None else None
    subject = None
    if value is not None:
        # the object; the parser takes some for an adverb ("Moved my gym day to ...")
        thing = next((c for c in verb.children if c.dep_ == "dobj"), None) or next(
            (c for c in verb.children if c.dep_ == "npadvmod" and _possessed(c)), None
        )
        actor = next((c for c in verb.children if c.dep_ == "nsubj"), None)
        if thing is None:  # "my X moved to Y", "the X was pushed back to Y"
            thing = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        elif _possessed(thing) and actor is not None and actor.lower_ not in FIRST_PERSON:
            thing = None  # "(I) moved my X to Y", "(anyone) moved the X to Y"; not "Tom moved my X"
        subject = thing if _thing(thing, value) else None
    # a change done, not one asked or proposed ("Let's move the club to Wakanda")
    done = verb.tag_ != "VB"
    if (
        subject is not None
        and done
        and _changes(verb, value)
        and subject.lemma_.lower() not in KIN
        and subject.i < value.i
    ):
        return [(_attribute(subject), _value(value))]
    actor = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    known = VERBS.get(verb.lemma_.lower())
    if actor is None or actor.lower_ not in FIRST_PERSON or not known or not known[1].startswith("prep:"):
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


def _present_first_person(verb) -> bool:
    """The owner as the subject of a verb in the present tense ("I pay", "we're paying"): a value
    that holds now, not an event ("I paid", "I spent")."""
    actor = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    if actor is None or actor.lower_ not in FIRST_PERSON:
        return False
    if verb.tag_ == "VBG":
        return any(c.dep_ == "aux" and c.tag_ in ("VBP", "VBZ") for c in verb.children)
    return verb.tag_ in ("VBP", "VBZ")


def _amount(verb) -> list[tuple[str, str]]:
    """ "I pay £1,210 in | for | on rent", "we're paying £1,210 rent": the owner's present verb with
    an amount as its object, of the thing the preposition or the object's noun names."""
    if not _present_first_person(verb):
        return []
    for thing in (c for c in verb.children if c.dep_ == "dobj"):
        if thing.ent_type_ in AMOUNTS:  # "£1,210 in | for | on rent"
            prep = next((c for c in verb.children if c.dep_ == "prep" and c.lower_ in AMOUNT_OF), None)
            noun = next((c for c in prep.children if c.dep_ == "pobj"), None) if prep is not None else None
            if noun is not None and noun.pos_ == "NOUN" and _thing(noun, thing):
                return [(_attribute(noun), _value(thing))]
        amount = next((c for c in thing.children if c.dep_ == "nummod" and c.ent_type_ in AMOUNTS), None)
        if (
            amount is not None and thing.pos_ == "NOUN" and thing.is_alpha and not _quoted(thing)
        ):  # "£1,210 rent"
            return [(_attribute(thing), _value(amount))]
    return []


def _now(verb) -> list[tuple[str, str]]:
    """ "I drive a Kia Niro now", "I'm watching White Collar right now": the owner's present
    verb, said to hold now, with a name as its object; the verb is the attribute ("drive").
    Without "now" a verb and a name tell a liking or a habit ("I love Paris"); a verb of
    experience or a light verb states no value (EXPERIENCE_VERBS, LIGHT_VERBS), but for a
    perception verb whose object is a person by title, whom one visits ("these days I see Dr.
    Okafor")."""
    if not _present_first_person(verb) or not any(_says_now(c) for c in verb.children):
        return []
    lemma = verb.lemma_.lower()
    if lemma in LIGHT_VERBS or (
        lemma in EXPERIENCE_VERBS and not (lemma in PERCEPTION_VERBS and _titled(verb))
    ):
        return []
    # a capitalised proper noun, named or not ("a Kia Niro": the recogniser often tags no entity)
    name = next(
        (
            c
            for c in verb.children
            if c.dep_ == "dobj"
            and c.pos_ == "PROPN"
            and c.text[:1].isupper()
            and c.ent_type_ not in ("DATE", "TIME")
        ),
        None,
    )
    if name is None or _quoted(name):
        return []
    return [(verb.lemma_.lower(), _value(name))]


def _titled(verb) -> bool:
    """verb's object is a person by title ("Dr. Okafor")."""
    return any(
        c.dep_ == "dobj" and any(t.dep_ == "compound" and t.lower_.strip(".") in TITLES for t in c.children)
        for c in verb.children
    )


def _says_now(token) -> bool:
    """ "now", "nowadays", "these days" said of a verb."""
    if token.dep_ == "advmod" and token.lower_ in ("now", "nowadays"):
        return True
    return (
        token.dep_ == "npadvmod"
        and token.lower_ == "days"
        and any(c.lower_ == "these" for c in token.children)
    )


def _changes(verb, value) -> bool:
    """A verb that gives a thing a new value: CHANGE_VERBS, one that moves it up or down ("went
    up to", "put the rent up to"), or from one value to another ("went from 20 GB to 50 GB"; "my
    family went to Disneyland" tells a trip, not a value)."""
    if verb.lemma_.lower() in CHANGE_VERBS or any(
        c.dep_ in ("prt", "advmod") and c.lower_ in ("up", "down") for c in verb.children
    ):
        return True
    # to a moment, measure or name ("my family went from Leeds to the coast" tells a trip)
    return any(c.dep_ == "prep" and c.lower_ == "from" for c in verb.children) and _moment_or_name(value)


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
    if noun is None or noun.ent_type_ in ("DATE", "TIME"):
        return False
    return any(c.dep_ == "poss" and c.lower_ in FIRST_PERSON_POSSESSIVE for c in noun.children)


def _thing(noun, value) -> bool:
    """noun names a thing of the owner's whose value is `value`: "my X" / "our X", or, where value
    names something, "the X" or a bare "X" ("The offsite moved to 2 June", "Standup is 10:15"; not
    "the rent of the flat", "Tom's rent", "the ball moved to the left"). Never a thing marked as
    no longer current ("my old car", "our former manager"), a time, a word a hyphen joins to more
    ("my brother-in-law"), or one inside quotation marks."""
    if noun is None or noun.pos_ not in ("NOUN", "PROPN") or not noun.is_alpha or _quoted(noun):
        return False
    if noun.ent_type_ in ("DATE", "TIME") or any(c.lower_ in ENDED_WORDS for c in noun.children):
        return False
    after = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    if after is not None and after.text == "-":
        return False
    if _possessed(noun):
        return True
    # unpossessed: the thing's own name only (not "the first place", "the guy in first place"),
    # and a value that is a moment, a measure or a name (not "one of the best", "just temporary")
    return (
        noun.pos_ == "NOUN"
        and all(c.dep_ == "compound" or (c.dep_ == "det" and c.lower_ == "the") for c in noun.children)
        and _moment_or_name(value)
    )


def _name(token) -> bool:
    """token is a written name: a capitalised proper noun of a named entity ("Tomasz Wolski",
    "Dr. Okafor"; not "hahaha")."""
    return token.pos_ == "PROPN" and token.text[:1].isupper() and token.ent_type_ in NAMES


def _moment_or_name(value, names=True) -> bool:
    """value (a phrase's head) is a moment or a measure ("2 June", "10:15", "250 ms", "£1,210"),
    or, with names, a named person, place or organisation ("Dr. Okafor", "the Lantern"); never a
    part of something ("one of the best schools")."""
    if any(
        c.dep_ == "prep" and c.lower_ == "of" and all(g.lower_ != "instead" for g in c.children)
        for c in value.children
    ):
        return False
    return value.ent_type_ in MOMENTS_AND_MEASURES or (names and value.ent_type_ in NAMES)


def _quoted(token) -> bool:
    """token stands inside quotation marks in its sentence: someone else's words, or a title."""
    marks = [t for t in token.sent if t.i < token.i and t.text in ('"', "\u201c", "\u201d", "''", "``")]
    return len(marks) % 2 == 1


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


def _value(head, before_only=False) -> str:
    """Y: the phrase head heads without a leading article, nor the value it replaced ("Tomasz
    Wolski instead of Priya Nair"); before_only, only its words up to head ("Tomasz Wolski" of
    "Tomasz Wolski, my manager,")."""
    words = list(head.subtree)
    instead = next((t.i for t in words if t.lower_ == "instead" and t.i > head.i), None)
    tokens = [
        t
        for t in words
        if not (t.dep_ == "det" and t.i == head.left_edge.i)
        and (instead is None or t.i < instead)
        and (not before_only or t.i <= head.i)
    ]
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
    # what another said or claimed of a thing not the owner's by the words ("It was advertised
    # that shipping is 1-3 days"; "my friend doesn't know that my favourite ice cream is ..." holds)
    subject = next((c for c in children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if any(c.dep_ == "mark" and c.lower_ == "that" for c in children) and not _possessed(subject):
        teller = next((c for c in token.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if teller is None or teller.lower_ not in FIRST_PERSON:
            return True
    return any(c.tag_ in ("WP", "WRB", "WDT") and c.i < token.i for c in children)
