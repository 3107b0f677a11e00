"""Relations a CPU can find by syntax: spaCy's dependency parse of one extraction window.

The pattern pass (relation_patterns.py) matches word sequences; this pass reads the parse
(exocortex.extraction.ner.parse: the pipeline the NER backend loads, with its parser), so one rule
covers a construction wherever it stands in a sentence and however long its names are. It returns
relations in the pattern pass's shape and vocabulary (PARENT_OF, SIBLING_OF, SPOUSE_OF, FRIEND_OF,
WORKS_AT, MEMBER_OF, MANAGES, LIVES_IN), each with the sentence that states it.

A relation noun (relation_patterns.KIN: mother, son, sister, wife, partner, friend, ...) links
  its possessor   a possessive ("Ana's son", "my son": the author, "her son": the person the
                  sentence or the note is about), an "of" object ("the son of Ana"), or the
                  subject of "have" ("Ana has two sons, ...")
  to whom it names  an apposition ("Ana's son Cy", "Cy, Ana's son,", "Ana has a son, Cy"; a name
                  set off by commas after the noun's phrase that the parser hung elsewhere, "survived
                  by her husband of sixty years, Pieter Achterberg, and ..."), the other side of a
                  copular "be" ("Cy is Ana's son", "the sons of Ana are Cy and Di"), whom a part of
                  the noun's group names ("Cy is the eldest of three children of Ana and Ben"); a
                  kinship phrase beside the place of a clause is said of its subject ("Cy grew up in
                  Enugu, the youngest of five children of Ana")
A possessive may be shared ("Ana and Tom's son Cy", "Cy is Ana, Ben and Tom's son": all are
its owners; not "Ana's and Tom's sons", "Ana's friend and Tom's son"), where the parser hangs the
relation noun on the first owner, which then says nothing of its own ("Ana and Tom's daughter
lives in Oslo" is the daughter's home).
Every side may be a conjunction list ("the children of Ana and Ben are Cy, Di and Ed"); the
noun's kind gives the direction ("Cy is Ana's son": Ana PARENT_OF Cy; "Ana is Cy's mother" too).
A plural peer noun or "married" after "be" relates the conjoined subjects pairwise ("Ana and Ben
are siblings | friends | married"; "Ana and Ben married"); "Ana is friends with Ben".
Verbs relate their subject (a name, a relative pronoun's antecedent "Ana, who lives in Oslo", the
noun a participle hangs on "Ana, based in Oslo", the person a noun is said of "Ana is an engineer
who works for Acme", the subject of the verb a conjoined one shares) to an object, a
prepositional object or a passive agent: VERBS (work | teach at, join, found, hire, employ, lead,
live | reside in, move | emigrate to, be based in, marry | wed, befriend, be born to: the parents
its objects; "Acme was founded | is led by Ana": the agent of DONE_BY's verbs is the doer). A
verb with a hyphenated prefix of VERB_PREFIXES ("co-founded", "re-joined") is read as the verb,
its sentence parsed again without the prefix; "co-" makes its "with" object a doer too ("Ana
co-founded Acme with Tom"). A name the parser took for a fronted year's noun ("In 1985 Ana Lind
joined Acme") is the subject of a verb that has none. A "where" clause on an organisation is a
workplace ("trained at Acme, where she still works"; not on a place: "moved to Lund, where she
works"); a home with its "in" a residence ("from her home in Valencia"; no "childhood" or
"holiday" home). "They" or "the couple" marrying are the two people the nearest earlier sentence
(one or two back) names, when it names exactly two and no group ("Ana met Tom in Paris. They
married in 1990."). A role noun said of a person by
"be", apposition, an appointment ("was appointed director of Acme") or a list of roles ("an
economist and the director of ...") relates them to the organisation of its "at" / "for" ("an
engineer at Acme"), or of its "of" for roles of office (ROLE_OF: "the CEO of Acme"). A he/she/his/
her anywhere in a sentence of a note about someone means them by NoteSubject's rule ("There he
married Rosa"), unless the sentence names someone before it. "Their" before a child noun means the
couple the text tied in that sentence or the one before ("Ana married Ben. Their son Cy ...":
both are his parents); in a note that never calls its subject he or she, "their" before any
relation noun, with no one else and no group named just before, means the subject (a singular they).

A person's name is read off the surface, as the small parser splits and mis-attaches names it
does not know: the run of contiguous capitalised words, with hyphens and name particles inside
("Jean-Luc Martin", "Kwame de la Cruz"), around the word the parse points at; the items of a list
are the names the parse conjoins to any word of that run, and a run only "and" parts from it. An
organisation's or place's name is a proper noun and the compound proper nouns before it, widened
to the entity span spaCy finds there ("University of Oslo"). Every word capitalised, no kinship
word, title or pronoun. The slot gives the type (the small model's entity labels are often wrong for foreign
names); a name the labels call a date or number is none.

States nothing: a question, a clause under "if" / "unless" / "whether", a negated or modal
predicate ("is not Ana's son", "never worked", "might move"), an ex, former, step or in-law
relative ("ex-wife", "mother-in-law"), a chain ("Ana's brother's car"), and in the past tense a
state that can end (was married to, was Ana's wife, worked at, lived in, were friends); kinship by
blood holds in any tense ("Ana's father was Bo"), and events state their result in any tense
(married, joined, was hired by, moved to, befriended).
"""

from __future__ import annotations

import re

from exocortex.extraction import ner, relation_patterns
from exocortex.extraction.llm import acceptance
from exocortex.extraction.relation_patterns import KIN, NoteSubject, name_key
from exocortex.plpy.entity_types import NAME_FUNCTION_WORDS, NAME_PARTICLES, cue_type

# A relation noun's predicate and side ("parent": the named person is the possessor's parent).
RELATION_NOUNS = {**KIN, "twin": ("SIBLING_OF", "peer")}
# Plural peer nouns of "Ana and Ben are siblings" (and "husband and wife").
PAIR_NOUNS = {
    "sibling": "SIBLING_OF",
    "brother": "SIBLING_OF",
    "sister": "SIBLING_OF",
    "twin": "SIBLING_OF",
    "friend": "FRIEND_OF",
    "spouse": "SPOUSE_OF",
    "husband": "SPOUSE_OF",
    "wife": "SPOUSE_OF",
}
# Predicates that hold only while something lasts: stated in the present, not in the past.
ENDING = frozenset({"SPOUSE_OF", "FRIEND_OF", "WORKS_AT", "LIVES_IN", "MANAGES", "MEMBER_OF"})
SYMMETRIC = frozenset({"SPOUSE_OF", "SIBLING_OF", "FRIEND_OF"})
TYPES = {
    "WORKS_AT": ("Person", "Org"),
    "MEMBER_OF": ("Person", "Org"),
    "MANAGES": ("Person", "Org"),
    "LIVES_IN": ("Person", "Place"),
}

# verb lemma -> (predicate, how its other end is attached, event?): "prep:at,for" a prepositional
# object, "dobj" a direct object, "agent" a passive's "by" object; an event ("joined", "moved to")
# states its result in any tense, a state ("works at") only in the present.
VERBS = {
    "work": ("WORKS_AT", "prep:at,for", False),
    "teach": ("WORKS_AT", "prep:at", False),
    "join": ("WORKS_AT", "dobj", True),
    "employ": ("WORKS_AT", "agent", False),
    "hire": ("WORKS_AT", "agent", True),
    "recruit": ("WORKS_AT", "agent", True),
    "lead": ("MANAGES", "dobj", False),
    "manage": ("MANAGES", "dobj", False),
    "head": ("MANAGES", "dobj", False),
    "live": ("LIVES_IN", "prep:in", False),
    "reside": ("LIVES_IN", "prep:in", False),
    "base": ("LIVES_IN", "prep:in", False),
    "move": ("LIVES_IN", "prep:to", True),
    "relocate": ("LIVES_IN", "prep:to", True),
    "emigrate": ("LIVES_IN", "prep:to", True),
    "immigrate": ("LIVES_IN", "prep:to", True),
    "settle": ("LIVES_IN", "prep:in", True),
    "marry": ("SPOUSE_OF", "dobj", True),
    "wed": ("SPOUSE_OF", "dobj", True),
    "befriend": ("FRIEND_OF", "dobj", True),
    "found": ("WORKS_AT", "dobj", True),
    "bear": ("PARENT_OF", "prep:to", True),  # passive only, the child its subject (Sentence.verb)
}
# An organisation that does the hiring is the active subject: "Acme hired Ana".
EMPLOYERS = frozenset({"employ", "hire", "recruit"})
# Verbs whose passive's agent is the doer ("Acme was founded | is led by Ana"; "joined by" is
# accompanied by).
DONE_BY = frozenset({"found", "lead", "manage", "head"})
# Prefixes a verb keeps its relation under ("co-founded", "re-joined"); "co-" makes the verb's
# "with" object a doer too ("co-founded Acme with Tom").
VERB_PREFIXES = frozenset({"co", "re"})
# Roles "of" an organisation that are a post there ("the CEO of Acme"); any other role is so only
# "at" or "for" it ("an engineer at Acme"), unless it is no employment (NOT_STAFF).
ROLE_OF = frozenset(
    {
        "ceo",
        "cto",
        "cfo",
        "coo",
        "cio",
        "director",
        "president",
        "chairman",
        "chairwoman",
        "chair",
        "head",
        "manager",
        "chief",
        "employee",
        "executive",
        "treasurer",
        "secretary",
        "editor",
        "principal",
        "dean",
    }
)
NOT_STAFF = frozenset(
    {
        "customer",
        "client",
        "guest",
        "visitor",
        "student",
        "patient",
        "regular",
        "fan",
        "alumnus",
        "alumna",
        "graduate",
        "member",
        "resident",
        "native",
        "citizen",
        "friend",
        "owner",
        "shareholder",
        "investor",
    }
)
# "a member of X" is MEMBER_OF; "a resident of X" LIVES_IN.
NOUN_OF = {"member": "MEMBER_OF", "resident": "LIVES_IN"}
# Words before a relation noun that make it no (present) relative.
NOT_KIN = frozenset({"ex", "former", "step", "estranged", "future", "would-be", "prospective", "foster"})
HYPOTHETICAL = frozenset({"if", "unless", "whether"})
TITLES = frozenset(
    {"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "dame", "lady", "lord", "st", "saint"}
)
NOT_NAMES = frozenset(RELATION_NOUNS) | TITLES | {"mum", "mom", "dad", "god"}
PRONOUNS = {"he": "he", "she": "she", "his": "he", "her": "she", "him": "he"}
PERSON_DEPS = ("nsubj", "nsubjpass")
# Plural words that are no group of people a "they" may mean ("years", "Pelago Airways").
NO_GROUP = ("DATE", "TIME", "ORG", "FAC", "GPE", "LOC")
PLACES = ("GPE", "LOC", "FAC")
# How the parser hangs the words of a name before its last on it.
NAME_PARTS = ("compound", "flat", "nmod")
# Where a verb the tagger mistook ("live" as an adverb) still heads a clause.
CLAUSES = ("ROOT", "conj", "relcl", "acl", "advcl", "ccomp")
_CAPITAL = re.compile(r"[^\W\d_]")


def find(
    text: str, author: str | None = None, labels: dict[str, str] | None = None, about: str | None = None
) -> list[dict]:
    """The relations text states: [{subject, predicate, object, subject_type, object_type,
    evidence}], once each in order (as relation_patterns.find). author: who "my" is; labels:
    folded key -> type of names known (a date or number is no name); about: the person a note
    is about, whom an opening "She"/"His" means."""
    found = Found(labels or {})
    subject = NoteSubject(about, labels) if about else None
    doc = ner.parse(text)
    found.people |= {name_key(e.text) for e in doc.ents if e.label_ == "PERSON"}
    previous: list = []
    for sent in doc.sents:
        found.sentence += 1
        said = sent.text.strip()
        opening = bool(subject) and subject.means_subject(said)
        if subject:
            subject.read(said)
        # a note that never called its subject he or she may call them "they"
        singular_they = about if subject and subject.pronoun is None else None
        if said and not said.endswith("?"):
            read, co_verbs = unprefixed(sent)
            found.people |= {name_key(e.text) for e in read.ents if e.label_ == "PERSON"}
            reader = Sentence(
                read, found, author, about if opening else None, about, singular_they, previous, co_verbs
            )
            reader.evidence = " ".join(sent.text.split())  # as written, its prefixes too
            reader.read()
        previous = list(sent)
    return found.relations


_TITLE_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*")


def note_subject(title: str | None, known: dict[str, str] | None = None) -> str | None:
    """relation_patterns.note_subject, for names of two to five words with particles and hyphens
    too ("Ingrid van der Berg", "Hye-jin Kim"): the person a note titled so is about."""
    words = " ".join((title or "").split()).split(" ")
    if not 2 <= len(words) <= 5 or not all(_TITLE_WORD.fullmatch(w) for w in words):
        return relation_patterns.note_subject(title, known)
    if not (words[0][:1].isupper() and words[-1][:1].isupper()):
        return None
    if any(not w[:1].isupper() and w.lower() not in NAME_PARTICLES for w in words):
        return None
    if any(w.lower() in NOT_NAMES for w in words):
        return None
    name = " ".join(words)
    return name if (known or {}).get(name_key(name), "Person") in ("Person", "Topic") else None


def merged(first: list[dict], then: list[dict]) -> list[dict]:
    """first, then what then adds to it: a relation both found (the same ends and predicate, a
    symmetric one either way round) once, as first has it."""
    seen = set()
    for r in first:
        seen.add((name_key(r["subject"]), r["predicate"], name_key(r["object"])))
    out = list(first)
    for r in then:
        key = (name_key(r["subject"]), r["predicate"], name_key(r["object"]))
        if key not in seen and not (r["predicate"] in SYMMETRIC and (key[2], key[1], key[0]) in seen):
            seen.add(key)
            out.append(r)
    return out


def add_to(
    result: acceptance.Extraction,
    text: str,
    max_entities: int,
    max_relations: int,
    who: str | None = None,
    known: dict[str, str] | None = None,
    about: str | None = None,
) -> int:
    """relation_patterns.add_to with this pass beside the pattern pass: the pattern pass's
    relations, then those only the parse found, validated into result together (the ends this
    pass typed keep its type: the slot says more than the small model's label). Returns how
    many relations it added."""
    patterns = relation_patterns.find(text, who, known, about)
    syntax = find(text, who, known, about)
    typed = dict(known or {})
    for r in syntax:
        typed[name_key(r["subject"])] = r["subject_type"]
        typed[name_key(r["object"])] = r["object_type"]
    found = merged(patterns, syntax)
    return relation_patterns.keep_found(result, text, found, max_entities, max_relations, typed)


_CODE = re.compile(r"[/+()\[\]{}<>@=_:;]")


class Found:
    """The relations found in a window so far, each once (a symmetric one either way round),
    and the names the labels call people."""

    def __init__(self, labels: dict[str, str]):
        self.labels = labels
        self.people = {key for key, kind in labels.items() if kind == "Person"}
        self.relations: list[dict] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.sentence = 0  # the number of the sentence being read
        # (sentence, people): the couples the text tied, by marriage or a spouse noun ("her
        # husband", its name maybe unread): whom a "their" there or in the next sentence means
        self.couples: list[tuple[int, tuple[str, ...]]] = []
        # sentence -> the people it names, None where it speaks of a group (Sentence.mentioned)
        self.named: dict[int, list[str] | None] = {}

    def add(self, subject: str | None, predicate: str, obj: str | None, evidence: str) -> None:
        if not subject or not obj or name_key(subject) == name_key(obj):
            return
        if predicate == "SPOUSE_OF":
            self.couples.append((self.sentence, (subject, obj)))
        key = (name_key(subject), predicate, name_key(obj))
        if key in self.seen or (predicate in SYMMETRIC and (key[2], predicate, key[0]) in self.seen):
            return
        self.seen.add(key)
        types = TYPES.get(predicate, ("Person", "Person"))
        self.relations.append(
            {"subject": subject, "predicate": predicate, "object": obj, "subject_type": types[0],
             "object_type": types[1], "evidence": evidence}
        )  # fmt: skip


def name_tokens(token) -> list:
    """The tokens of the name token heads: it and the compound proper nouns (particles, and the
    parts of a hyphenated word: "Hye-jin") written right before it, contiguous."""
    parts = {token.i}
    stack = [token]
    while stack:
        for child in stack.pop().children:
            joined = child.i < token.i and child.dep_ in (*NAME_PARTS, "punct")
            capitalised = child.pos_ == "PROPN" or (child.is_alpha and child.text[:1].isupper())
            if joined and (capitalised or child.lower_ in NAME_PARTICLES or glued(child)):
                parts.add(child.i)
                stack.append(child)
    start = token.i
    while start - 1 in parts or (start > 0 and glued(token.doc[start - 1]) and glued(token.doc[start])):
        start -= 1
    return list(token.doc[start : token.i + 1])


def name_word(token) -> bool:
    """token may be a word of a person's name as written: a proper noun, a part of a hyphenated
    name ("Hye-jin", not "Oslo-based"), or a capitalised word the tagger called something else
    ("García-López" a noun); at a sentence's opening, where any word is capitalised, such a word
    only if spaCy's person label or the parse vouches for it ("Sven" tagged a preposition, but
    labelled a person or hung on the proper noun after it); no date, number or pronoun."""
    if ner.LABELS.get(token.ent_type_) in ("Date", "Number") or token.pos_ == "PRON":
        return False
    if glued(token):
        return not token.tag_.startswith("VB")
    if not (lettered(token) and token.text[:1].isupper()):
        return False
    if token.pos_ == "PROPN" or token.ent_type_ == "PERSON":
        return True
    if opening(token):
        return token.dep_ in NAME_PARTS and token.head.pos_ == "PROPN" and token.head.i > token.i
    return token.pos_ in ("NOUN", "ADJ", "X")


def lettered(token) -> bool:
    """token is a word of letters, with apostrophes inside ("O'Brien") or an abbreviation's
    period ("Jr.") too."""
    return token.text.removesuffix(".").replace("'", "").replace("\u2019", "").isalpha()


def opening(token) -> bool:
    """token opens its sentence, a line or a quotation."""
    before = token.doc[token.i - 1] if token.i > token.sent.start else None
    return before is None or before.is_space or (before.is_punct and before.text != "," and not glued(before))


def name_runs(sent) -> dict[int, list]:
    """Token index -> the run of name words around it: the maximal sequence of contiguous
    name_words with lower-case particles inside ("Kwame de la Cruz"). The small parser splits and
    mis-attaches names it does not know ("Nils" and "Reyes" two conjuncts), the surface does not."""
    runs: dict[int, list] = {}
    run: list = []
    for token in [*sent, None]:
        if token is not None and (name_word(token) or (run and token.text in NAME_PARTICLES)):
            run.append(token)
            continue
        while run and not (lettered(run[-1]) and name_word(run[-1])):
            run.pop()  # a trailing particle or hyphen
        runs.update({t.i: run for t in run})
        run = []
    return runs


def org_tokens(token) -> list:
    """The words of the organisation's or place's name token heads: name_tokens, widened to the
    entity span spaCy finds there ("University of Oslo")."""
    if not proper(token):
        return []
    words = name_tokens(token)
    wide = entity_tokens(token)
    return wide if wide and wide[0].i <= words[0].i and wide[-1].i >= token.i else words


def proper(token) -> bool:
    """token may head an organisation's or place's name: a proper noun, a word in such an entity,
    or a capitalised word the tagger called something else inside an entity or after a proper
    noun."""
    if token.pos_ == "PROPN" or token.ent_type_ in ("ORG", "GPE", "LOC", "FAC"):
        return True
    named = bool(token.ent_type_) or any(c.dep_ == "compound" and c.pos_ == "PROPN" for c in token.children)
    return token.is_alpha and token.text[:1].isupper() and token.pos_ in ("NOUN", "ADJ", "X") and named


def glued(token) -> bool:
    """token is a hyphen inside a word, or a part of a hyphenated word ("Hye", "-", "jin")."""
    doc = token.doc
    if token.text in ("-", "\u2010"):
        return not token.whitespace_ and token.i > 0 and not doc[token.i - 1].whitespace_
    before = token.i > 0 and doc[token.i - 1].text in ("-", "\u2010") and not doc[token.i - 1].whitespace_
    after = token.i + 1 < len(doc) and not token.whitespace_ and doc[token.i + 1].text in ("-", "\u2010")
    return token.is_alpha and (before or after)


def entity_tokens(token) -> list:
    """The entity span spaCy found around token, less a leading article and a trailing "'s"."""
    if ner.LABELS.get(token.ent_type_, "Number") in ("Date", "Number"):
        return []  # no entity, or a date or number
    span = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
    words = list(span) if span is not None else []
    while words and (words[0].dep_ == "det" or words[0].lower_ == "the"):
        words.pop(0)
    while words and (words[-1].dep_ == "case" or words[-1].is_punct):
        words.pop()
    return words


def well_named(words: list, allowed: frozenset) -> bool:
    """Every word capitalised but the allowed lower-case ones inside, the first and last
    capitalised, no title, kinship word or pronoun, no digit in a person's name."""
    if not words or any(w.pos_ == "PRON" for w in words):
        return False
    texts = "".join(w.text_with_ws for w in words).replace("&", " ").split()
    if not texts or not texts[0][:1].isupper() or not texts[-1][:1].isupper():
        return False
    if any(not t[:1].isupper() and t.lower() not in allowed for t in texts):
        return False
    return not any(t.lower().strip(".") in NOT_NAMES for t in texts) and bool(_CAPITAL.search(texts[-1]))


class Sentence:
    """One sentence of a window: the names its tokens stand for, and the relations it states."""

    def __init__(
        self,
        sent,
        found: Found,
        author: str | None,
        opening_about: str | None,
        about: str | None = None,
        singular_they: str | None = None,
        previous: list | None = None,
        co_verbs: frozenset[int] = frozenset(),
    ):
        self.sent = sent
        self.co_verbs = co_verbs  # the verbs that had "co-": their "with" object is a doer too
        self.singular_they = singular_they  # whom a "their" of no couple may mean
        self.previous = previous or []  # the sentence before's tokens
        self.runs = name_runs(sent)
        self.found = found
        self.author = author
        self.opening_about = opening_about  # whom an opening he/she/his/her means here
        # a note's subject by a first name or surname alone ("Wróbel was raised in Łódź")
        parts = (about or "").split()
        self.about_parts = {name_key(parts[0]), name_key(parts[-1])} if len(parts) > 1 else set()
        self.about = about
        self.evidence = " ".join(sent.text.split())

    def read(self) -> None:
        self.found.named[self.found.sentence] = self.mentioned()
        theirs = []  # "their son": read after the rest, once the couple the sentence ties is known
        for token in self.sent:
            if token.pos_ in ("NOUN", "PROPN") and token.lemma_.lower() in RELATION_NOUNS:
                if any(c.dep_ == "poss" and c.lower_ == "their" for c in token.children):
                    theirs.append(token)
                else:
                    self.relation_noun(token)
            if token.lemma_ in ("be", "become", "get") and token.pos_ in ("AUX", "VERB"):
                self.copula(token)
            lemma = verb_lemma(token)
            if lemma and (token.pos_ in ("VERB", "AUX", "ADJ") or token.dep_ in CLAUSES):
                self.verb(token, lemma)
            if token.pos_ == "NOUN" and token.lemma_.lower() not in RELATION_NOUNS:
                self.role_noun(token)
            if token.pos_ == "NOUN" and token.lower_ == "home":
                self.home(token)
        for noun in theirs:
            self.relation_noun(noun)

    # -- names ---------------------------------------------------------------------------------

    def name(self, token, kind: str = "Person") -> str | None:
        """The name token heads (a person's, or an organisation's or place's for kind Org/Place),
        the person a pronoun means, or None."""
        if token.pos_ == "PRON":
            return self.pronoun(token) if kind == "Person" else None
        words = self.runs.get(token.i, []) if kind == "Person" else org_tokens(token)
        if not well_named(words, NAME_PARTICLES if kind == "Person" else NAME_FUNCTION_WORDS):
            return None
        if kind == "Person" and any(w.like_num for w in words):
            return None
        text = " ".join(token.doc[words[0].i : words[-1].i + 1].text.split())
        if kind == "Person" and " " not in text and name_key(text) in self.about_parts:
            return self.about
        if self.found.labels.get(name_key(text)) in ("Date", "Number"):
            return None
        return text

    def names(self, token, kind: str = "Person") -> list[str]:
        """The names of token and of the tokens conjoined with it ("Cy, Di and Ed"); none when
        one of them is a proper noun but no name."""
        out = []
        if any(c.lemma_.lower() in RELATION_NOUNS and self.slot(c).i == token.i for c in token.children):
            return []  # "Ana and Tom's son ... lives": the son lives, not Ana
        for item in self.items(token, kind):
            named = self.name(item, kind)
            if named is None and item.pos_ == "NOUN" and kind == "Person":
                # "the Nobel laureate Ana Lind", "her husband Tom": the name in apposition
                named = next((self.name(a) for a in item.children if a.dep_ == "appos"), None)
            if named is None:
                return []
            out.append(named)
        return out

    def items(self, token, kind: str) -> list:
        """token and the tokens conjoined to it that may be names, one a name; a common noun or
        verb the parser conjoined to a name is no item ("in Lagos, volunteers at ..."). A person's
        name is its run of words (name_runs), whatever the parser hung on which of them: what is
        conjoined to any of them counts, as does a proper noun in apposition ("Cy Sato, Di Sato
        and Ed") and a name only "and" parts from it ("Ines Kowalski and Kwame Kim", the parser
        making Kowalski an nmod of Kim)."""
        if kind != "Person":
            return [token, *(c for c in conjuncts(token) if proper(c))]
        start = self.runs.get(token.i, [token])
        seen, stack, out = {start[0].i}, [start], []
        while stack:
            for word in stack.pop():
                for child in word.children:
                    run = self.runs.get(child.i, [child])
                    if run[0].i in seen or not self.conjoined(word, child):
                        continue
                    seen.add(run[0].i)
                    # "her husband Tom and their children, Cy and Di": a relative of its own, and
                    # the names it lists, are another relation
                    if child.lemma_.lower() in RELATION_NOUNS:
                        continue
                    stack.append(run)
                    if child.i in self.runs or child.pos_ == "PRON" or appositive(child):
                        out.append(child)
        return [token, *sorted(out, key=lambda t: t.i)]

    def conjoined(self, word, child) -> bool:
        """child is another item of the list word is in: its conjunct, a name in apposition to a
        name, or a name that only "and" parts from word's."""
        if child.dep_ == "conj":
            return True
        if child.i not in self.runs or word.i not in self.runs:
            return False
        first, second = sorted((self.runs[word.i], self.runs[child.i]), key=lambda r: r[0].i)
        between = [t.lower_ for t in word.doc[first[-1].i + 1 : second[0].i]]
        # a name in apposition is in the same list as its name, only names, commas and "and"
        # between ("Cy Sato, Di Sato and Ed Sato"); one further off was hung there wrongly
        # ("Pedro Moreau is survived by his wife of fifty years, Lena Andersen")
        if child.dep_ == "appos":
            gap = word.doc[first[-1].i + 1 : second[0].i]
            return all(t.text == "," or t.lower_ == "and" or t.i in self.runs for t in gap)
        return between in (["and"], [",", "and"])

    def pronoun(self, token) -> str | None:
        """Whom he/she/his/her means: the one person the sentence names as a subject before it,
        else (an opening pronoun of a note about someone) the note's subject; "my" is the author."""
        lower = token.lower_
        if lower in ("my", "i", "me"):
            return self.author if lower == "my" else None
        if lower not in PRONOUNS or token.dep_ not in ("poss", *PERSON_DEPS):
            return None
        owner = token.head
        if token.dep_ == "poss" and owner.dep_ == "conj" and owner.head.pos_ == "PROPN":
            return self.name(owner.head)  # "Ana and her husband Tom"
        before = {
            self.name(t)
            for t in self.sent
            if t.i < token.i
            and t.dep_ in PERSON_DEPS
            and t.i in self.runs
            and len(self.items(t, "Person")) == 1
        } - {None}
        if len(before) == 1:
            return before.pop()
        return self.opening_about if not before else None

    def subjects(self, verb) -> list[str]:
        """Who a verb's subject is: its nsubj (a relative pronoun's antecedent), else the subject
        of the verb it is conjoined to, or the name a participle hangs on ("Ana, based in Oslo")."""
        # the subject, or the subject the parser hung on an auxiliary ("Ana and Ben got married")
        helpers = [verb, *(c for c in verb.children if c.dep_ in ("aux", "auxpass"))]
        subject = next((c for h in helpers for c in h.children if c.dep_ in PERSON_DEPS), None)
        if subject is not None:
            if subject.tag_ in ("WP", "WDT") and verb.dep_ == "relcl":
                return self.said_of(verb.head)
            return self.names(subject)
        if verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
            return self.subjects(verb.head)
        if verb.dep_ == "acl" and verb.tag_ in ("VBN", "VBG"):
            return self.said_of(verb.head)
        # "In 1985 Diego Bergström joined Acme": the parser took the name for the year's noun
        fronted = [o for c in verb.children if c.dep_ == "prep" for o in c.children if o.dep_ == "pobj"]
        dated = [o for o in fronted if any(c.dep_ == "nummod" and c.ent_type_ == "DATE" for c in o.children)]
        if dated and dated[0].i == verb.i - 1 and dated[0].i in self.runs:
            return self.names(dated[0])
        return []

    def said_of(self, word) -> list[str]:
        """Who a clause hung on word is about: word's names, or for a common noun the people it
        is said of ("an engineer who works for Acme", "an architect based in Lyon")."""
        if word.pos_ == "NOUN" and word.i not in self.runs and not appositive(word):
            return self.predicated(word)[0]
        return self.names(word)

    def predicated(self, noun) -> tuple[list[str], object]:
        """(people, clause): whom a common noun is said of and the clause that says it: the subject
        of a copular "be" it completes ("Ana is an engineer"), of a verb it is the complement of
        ("Ana was appointed chief executive"), the name it is in apposition to ("Ana, an engineer"),
        or, conjoined ("an economist and the director of ..."), what the first of its list is said of."""
        while noun.dep_ == "conj" and noun.head.pos_ == "NOUN":
            noun = noun.head
        head = noun.head
        if noun.dep_ == "attr" and head.lemma_ in ("be", "become"):
            return self.subjects(head), head
        if noun.dep_ == "oprd" and head.pos_ == "VERB":
            return self.subjects(head), head
        if noun.dep_ == "appos" and head.pos_ == "PROPN":
            return self.names(head), noun
        return [], noun

    def add(self, subjects, predicate: str, objects) -> None:
        """subjects to objects; for work and residence only a person's full name (or a name
        spaCy or the labels call a person, or the note's subject) to a name with no digit or
        code character ("Scd: Fix driver for SCM SPR332" relates nothing)."""
        for s in subjects:
            if predicate in TYPES and not (" " in s or s == self.about or name_key(s) in self.found.people):
                continue
            for o in objects:
                if predicate in TYPES and (_CODE.search(o) or any(c.isdigit() for c in o)):
                    continue
                self.found.add(s, predicate, o, self.evidence)

    def add_pairs(self, people: list[str], predicate: str) -> None:
        """Every two of people (who are siblings, friends or married to each other)."""
        for i, a in enumerate(people):
            for b in people[i + 1 :]:
                self.found.add(a, predicate, b, self.evidence)

    def mentioned(self) -> list[str] | None:
        """The people the sentence names: its runs of name words, less the objects of a locative
        preposition ("met Tom in Kraków", "at Acme"); any other name counts whatever its label
        (the small model calls many a person's name a place). None where it also speaks of a
        group, whom a later "they" may mean ("the Okafors", "students")."""
        for w in self.sent:
            family = w.tag_ == "NNPS" and w.i > 0 and w.nbor(-1).lower_ == "the"  # "the Okafors", not "Ines"
            if (w.tag_ == "NNS" or family) and w.ent_type_ not in NO_GROUP:
                return None
        out: dict[str, str] = {}
        for run in {run[0].i: run for run in self.runs.values()}.values():
            root = next((t for t in run if not run[0].i <= t.head.i <= run[-1].i), run[-1])
            slot = root
            while slot.dep_ == "conj" and slot.head.i not in {t.i for t in run}:
                slot = slot.head  # "at Lumen & Pike": Pike is of the place too
            if slot.dep_ == "pobj" and slot.head.lower_ in ("in", "at", "from", "near"):
                continue
            named = self.name(root)
            if named:
                out.setdefault(name_key(named), named)
        return list(out.values())

    def couple(self, verb) -> list[str]:
        """Whom "they" or "the couple" as a marriage's subject means: the two people the nearest
        sentence before it that names anyone names ("Ana met Tom in Paris. They married in
        1990."), one or two sentences back, when it names exactly two and no group, and this
        sentence names no one before; else no one ("Ana introduced Tom to Eva. They married")."""
        helpers = [verb, *(c for c in verb.children if c.dep_ in ("aux", "auxpass"))]
        subject = next((c for h in helpers for c in h.children if c.dep_ in PERSON_DEPS), None)
        if subject is None or not (
            subject.lower_ == "they"
            or (subject.lemma_ == "couple" and any(c.lower_ == "the" for c in subject.children))
        ):
            return []
        if any(t.i in self.runs for t in self.sent if t.i < subject.i):
            return []
        for back in (1, 2):
            people = self.found.named.get(self.found.sentence - back)
            if people is None:  # a group, or no sentence before
                return []
            if people:
                return people if len(people) == 2 else []
        return []

    # -- relation nouns ------------------------------------------------------------------------

    def relation_noun(self, noun) -> None:
        """A relation noun between its possessor and whom it names: "Ana's son Cy", "Cy, the son
        of Ana,", "Cy is Ana's son", "Ana's sons are Cy and Di", "Ana has a son, Cy"."""
        predicate, side = RELATION_NOUNS[noun.lemma_.lower()]
        if noun.dep_ == "poss" or not current_relative(noun):
            return
        owners, named, slot = self.possessors(noun), self.named_by(noun), self.slot(noun)
        copular = slot.dep_ in ("attr", "nsubj") and slot.head.lemma_ in ("be", "become")
        clause = slot.head if copular or (slot.dep_ == "dobj" and slot.head.lemma_ == "have") else noun
        if predicate == "SPOUSE_OF" and len(owners) == 1 and holds(clause, predicate, event=True):
            self.found.couples.append((self.found.sentence, (owners[0], *named[:1])))
        if not owners or not named or not holds(clause, predicate, event=False):
            return
        if side == "parent":
            self.add(named, predicate, owners)
        else:
            self.add(owners, predicate, named)

    def possessors(self, noun) -> list[str]:
        """Whose relative noun is: a possessive, an "of" object, the subject of "have"."""
        for child in noun.children:
            if child.dep_ == "poss":
                if child.lower_ == "whose":  # "Yaw, whose mother is Efua": the clause's antecedent
                    clause = next((a for a in noun.ancestors if a.dep_ == "relcl"), None)
                    named = clause is not None and clause.head.pos_ == "PROPN"
                    return self.names(clause.head) if named else []
                if child.lower_ == "their":
                    return self.their(noun)
                # "Ines Holm and Arjun Holm's son": the parser may hang both on the noun
                owners = [c for c in noun.children if c.dep_ == "poss"]
                return list(dict.fromkeys(n for c in owners for n in self.joint(c) + self.names(c)))
            if child.dep_ == "prep" and child.lower_ == "of":
                return [n for pobj in child.children if pobj.dep_ == "pobj" for n in self.names(pobj)]
        owner = self.possessive(noun)
        if owner is not None:  # a "'s" before the noun that the parser hung on its name
            return self.joint(owner) + self.names(owner)
        if noun.dep_ == "dobj" and noun.head.lemma_ == "have":
            return self.subjects(noun.head)
        if noun.dep_ == "conj" and noun.head.pos_ == "NOUN":  # "his closest collaborator and friend"
            return self.possessors(noun.head)
        return []

    def joint(self, owner) -> list[str]:
        """The people a possessive's owner shares it with ("Ana Lind and Tom Reed's son": Ana's
        too; "Ana, Ben and Tom's children"): the names before owner's that only "and" (and commas
        before it) part from it, each a name of its own ("Ana's and Tom's sons", "Ana's friend and
        Tom's son Cy" share nothing); the parser cannot hang the possessive on both."""
        if owner.i not in self.runs:  # "Ana and their daughter": a pronoun shares nothing
            return []
        doc, names = owner.doc, []
        at, between = self.runs[owner.i][0].i - 1, "and"
        while at > self.sent.start and doc[at].lower_ == between and at - 1 in self.runs:
            named = self.name(doc[at - 1])
            if named is None:
                return []
            names.insert(0, named)
            at, between = self.runs[at - 1][0].i - 1, ","
        return names

    def their(self, noun) -> list[str]:
        """Whose relative "their" + noun is. Of a child ("their son | daughters | children"),
        the couple the text tied in this sentence or the one before ("Ana married Ben. Their son
        Cy ...", "with her husband Ben and their son, Cy"; "her husband ..." alone, its name
        unread, makes its owner one of them), when it tied one there; two couples there say no
        one. Of any other relation noun ("their parents": the couple's are not one pair), or with
        no couple, the note's subject where "their" is their singular they (their_subject)."""
        if RELATION_NOUNS[noun.lemma_.lower()][1] != "child":
            return self.their_subject(noun)
        for sentence in (self.found.sentence, self.found.sentence - 1):
            ties = [people for at, people in self.found.couples if at == sentence]
            named = [p for p in ties if len(p) == 2]
            keys = {frozenset(map(name_key, p)) for p in named}
            # an owner whose spouse goes unnamed is one of a couple named beside, if any
            keys |= {frozenset(map(name_key, p)) for p in ties if not any(name_key(p[0]) in k for k in keys)}
            if len(keys) == 1:
                return list((named or ties)[0])
            if keys:
                return []
        return self.their_subject(noun)

    def their_subject(self, noun) -> list[str]:
        """[the note's subject] where "their" may be their singular they ("Their sister is Jo
        Kim"): the note never called them he or she, and neither the sentence before nor its own
        words before "their" name anyone else or a group "their" may mean ("the Okafors", "her
        cousins"); else none."""
        if not self.singular_they:
            return []
        mine = {name_key(w) for w in self.singular_they.split()}
        their = next(c for c in noun.children if c.dep_ == "poss")
        for word in [*self.previous, *self.sent.doc[self.sent.start : their.i]]:
            if word.tag_ in ("NNS", "NNPS") and word.ent_type_ not in ("DATE", "TIME"):
                return []
            if name_word(word) and name_key(word.text) not in mine and word.ent_type_ not in PLACES:
                return []
        return [self.singular_they]

    def named_by(self, noun) -> list[str]:
        """Whom noun names: its apposition, the name it is in apposition to or a compound of, or
        the other side of a copular "be"."""
        for child in noun.children:
            if child.dep_ == "appos":
                return self.names(child)
        listed = [c for c in noun.children if c.dep_ == "conj" and c.pos_ == "PROPN"]
        # "Ana has two sons, Cy and Di", "by their two daughters, Marieke and Saskia": a plural
        # noun's list of names after its comma, which the parser conjoins to it
        after = self.runs.get(noun.i + 2, []) if noun.i + 2 < noun.sent.end else []
        plural = noun.tag_ == "NNS" and bool(after) and noun.nbor(1).text == ","
        if listed and (
            (plural and listed[0] in after) or (noun.dep_ == "dobj" and noun.head.lemma_ == "have")
        ):
            return self.names(listed[0])
        if noun.dep_ == "pobj" and noun.head.lower_ == "of" and partitive(noun.head.head):
            # "Cy is the eldest of three children of Ana", "one of the sons of Ana": whom the part names
            return self.named_at(noun.head.head)
        return self.named_at(self.slot(noun)) or self.set_off(noun)

    def slot(self, noun):
        """The word whose place in the parse noun takes: the first of the owners its possessive
        shares ("Cy is Ana and Tom's son": the parser hangs "son" on "Ana" as a conjunct), else noun."""
        owner = next((c for c in noun.children if c.dep_ == "poss"), None) or self.possessive(noun)
        hung = noun.dep_ in ("conj", "appos") and noun.head.i in self.runs
        return noun.head if hung and owner is not None and self.joint(owner) else noun

    def possessive(self, noun):
        """The name a "'s" right before noun's phrase marks, where the parser hung the "'s" on that
        name and no possessive on noun ("Emeka Kowalski and Ines Kowalski's son Arjun"), or None."""
        before = noun.left_edge.i - 1
        mark = noun.doc[before] if before > self.sent.start else None
        if mark is None or mark.tag_ != "POS" or mark.head.i != before - 1 or mark.head.i not in self.runs:
            return None
        return mark.head

    def named_at(self, noun) -> list[str]:
        """Whom noun names by where it stands: the name it is in apposition to or a compound of
        (of a name that is the place of a clause, "grew up in Enugu, the youngest of ...", the
        clause's subject: a kinship phrase describes no place), the other side of a copular
        "be", or what the noun it is conjoined to names."""
        head = noun.head
        if noun.dep_ in ("appos", "compound") and head.pos_ == "PROPN":
            if noun.dep_ == "appos" and located(head):
                return self.subjects(head.head.head)
            return self.names(head)
        if head.lemma_ in ("be", "become") and noun.dep_ == "attr":
            return self.subjects(head)
        if head.lemma_ == "be" and noun.dep_ == "nsubj":
            return [n for c in head.children if c.dep_ == "attr" for n in self.names(c)]
        # "his closest collaborator and friend is ...", not "her husband, Tom, and a son"
        own = any(c.dep_ in ("det", "poss") for c in noun.children)
        if noun.dep_ == "conj" and head.pos_ == "NOUN" and not own:
            return self.named_by(head)
        return []

    def set_off(self, noun) -> list[str]:
        """The name set off by commas right after noun's phrase that the parser hung elsewhere
        ("survived by her husband of sixty years, Pieter Achterberg, and ..."): its apposition
        all the same, unless the parse makes it an argument ("With her husband, Tom left") of
        another slot than the noun's."""
        doc, phrase = noun.doc, {t.i for t in noun.subtree}
        end = noun.i  # the noun's phrase up to its first comma ("her husband of sixty years")
        while end + 1 in phrase and doc[end + 1].text != ",":
            end += 1
        if noun.tag_ != "NN" or end + 2 >= noun.sent.end or doc[end + 1].text != ",":
            return []
        run = self.runs.get(end + 2)
        if not run or run[0].i != end + 2:
            return []
        if run[-1].i + 1 < noun.sent.end and doc[run[-1].i + 1].text not in (",", ".", ";"):
            return []
        root = next((t for t in run if not run[0].i <= t.head.i <= run[-1].i), run[-1])
        # "leaves her husband of forty years, Tom Reed": the parse fills one slot twice
        doubled = root.dep_ == noun.dep_ and root.head == noun.head
        if root.dep_ in (*PERSON_DEPS, "dobj", "pobj", "poss", "conj", "attr") and not doubled:
            return []
        named = self.name(root)
        return [named] if named else []

    # -- copular pairs -------------------------------------------------------------------------

    def copula(self, be) -> None:
        """ "Ana and Ben are siblings | friends | husband and wife | married", "Ana is married to
        Ben", "Ana is friends with Ben", "Ana and Ben became friends | got married" (events)."""
        event = be.lemma_ != "be"
        for child in be.children:
            lemma = child.lemma_.lower()
            if child.dep_ == "attr" and lemma in PAIR_NOUNS and not self.possessors(child):
                predicate = PAIR_NOUNS[lemma]
                if not holds(be, predicate, event):
                    continue
                partners = [n for p in child.children if p.dep_ == "prep" and p.lower_ == "with"
                            for o in p.children if o.dep_ == "pobj" for n in self.names(o)]  # fmt: skip
                if partners and child.tag_ == "NNS":
                    self.add(self.subjects(be), predicate, partners)
                elif child.tag_ == "NNS" or any(c.dep_ == "conj" for c in child.children):
                    self.add_pairs(self.subjects(be), predicate)
            elif child.dep_ == "acomp" and child.lower_ == "married" and holds(be, "SPOUSE_OF", event):
                self.married(child, self.subjects(be) or self.couple(be))

    def married(self, word, subjects: list[str]) -> None:
        """ "married to Ben" relates subjects to Ben; "married" alone relates them to each other."""
        spouses = [n for p in word.children if p.dep_ == "prep" and p.lower_ == "to"
                   for o in p.children if o.dep_ == "pobj" for n in self.names(o)]  # fmt: skip
        if spouses:
            self.add(subjects, "SPOUSE_OF", spouses)
        else:
            self.add_pairs(subjects, "SPOUSE_OF")

    # -- verbs ---------------------------------------------------------------------------------

    def verb(self, verb, lemma: str) -> None:
        """A verb of VERBS between its subject and its object ("Ana joined Acme", "Acme hired
        Ana", "Ana is employed by Acme", "Ana lives in Oslo", "Ana and Ben married")."""
        predicate, how, event = VERBS[lemma]
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)
        if passive and predicate == "SPOUSE_OF":  # "got married" an event, "was married (to)" a state
            event = any(c.dep_ == "auxpass" and c.lemma_ == "get" for c in verb.children)
        if not holds(verb, predicate, event) or (lemma == "base" and not passive and verb.dep_ != "acl"):
            return
        kind = TYPES.get(predicate, ("Person", "Person"))[1]
        if lemma in EMPLOYERS and not passive:
            objects = [n for c in verb.children if c.dep_ == "dobj" for n in self.names(c)]
            orgs = [n for c in verb.children if c.dep_ == "nsubj" for n in self.names(c, kind)]
            self.add(objects, predicate, orgs)
            return
        if lemma in DONE_BY and (passive or (verb.dep_ == "acl" and verb.tag_ == "VBN")):
            # "Acme was founded by Ana", "Acme, founded by Ana and Tom, ..."
            doers = [n for c in verb.children if c.dep_ == "agent"
                     for o in c.children if o.dep_ == "pobj" for n in self.names(o)]  # fmt: skip
            done = [c for c in verb.children if c.dep_ == "nsubjpass"] if passive else [verb.head]
            self.add(doers, predicate, [n for t in done for n in self.names(t, kind)])
            return
        subjects = self.subjects(verb)
        if verb.i in self.co_verbs:  # "Ana co-founded Acme with Tom": Tom did too
            subjects += [n for c in verb.children if c.dep_ == "prep" and c.lower_ == "with"
                         for o in c.children if o.dep_ == "pobj" for n in self.names(o)]  # fmt: skip
        if predicate == "SPOUSE_OF" and not subjects:
            subjects = self.couple(verb)  # "They married in 1990."
        if lemma == "bear":  # "Cy was born to Ana and Tom", "Cy, born to Ana, ...": parents are objects
            if passive or verb.tag_ == "VBN":
                self.add(self.objects(verb, how, kind), predicate, subjects)
            return
        if predicate == "SPOUSE_OF" and lemma in ("marry", "wed") and passive:
            self.married(verb, subjects)
            return
        objects = self.objects(verb, how, kind)
        where = verb.dep_ == "relcl" and any(c.lower_ == "where" for c in verb.children)
        if not objects and predicate == "WORKS_AT" and where:  # "Acme, where she still works"
            objects = self.workplace(verb.head)
        if predicate == "SPOUSE_OF" and not objects and not any(c.dep_ == "dobj" for c in verb.children):
            self.add_pairs(subjects, predicate)
        elif lemma == "join" and objects and all(team(o) for o in objects):
            self.add(subjects, "MEMBER_OF", objects)
        else:
            self.add(subjects, predicate, objects)

    def objects(self, verb, how: str, kind: str) -> list[str]:
        """The names a verb's other end is: its direct object, a prepositional object ("at",
        "for"; "works as an engineer at Acme" too), or a passive's agent."""
        out = []
        preps = how.removeprefix("prep:").split(",") if how.startswith("prep:") else ["by"]
        for child in verb.children:
            if how == "dobj" and (child.dep_ == "dobj" or inverted(verb, child)):
                out += self.names(child, kind)
            elif child.dep_ in ("prep", "agent") and child.lower_ in preps and how != "dobj":
                out += [n for o in child.children if o.dep_ == "pobj" for n in self.names(o, kind)]
            elif child.dep_ == "prep" and child.lower_ == "as" and kind == "Org":
                for role in (o for o in child.children if o.dep_ == "pobj"):
                    out += self.role_objects(role, preps)
        return out

    # -- roles ---------------------------------------------------------------------------------

    def role_noun(self, noun) -> None:
        """A person's role at an organisation: "Ana, an engineer at Acme,", "Ana is the CEO of
        Acme", "Ana is a member of the Data Team", "Ana, a resident of Oslo"."""
        lemma = noun.lemma_.lower()
        if lemma in NOT_STAFF - set(NOUN_OF) or not current_relative(noun):
            return
        if not any(c.dep_ in ("det", "poss") for c in noun.children) and noun.dep_ != "oprd":
            return  # "Scd: Fix driver for SCM" (a heading, no role); "an engineer at Acme" has one
        people, clause = self.predicated(noun)
        if not people:
            return
        # "was appointed chief executive of Acme": an appointment is an event, its post holds after
        event = clause.dep_ != "appos" and any(c.dep_ == "oprd" for c in clause.children)
        predicate = NOUN_OF.get(lemma, "WORKS_AT")
        kind = TYPES[predicate][1]
        places = self.role_objects(noun, ["of"] if lemma in NOUN_OF else ["at", "for"], kind)
        if holds(clause, predicate, event):
            self.add(people, predicate, places)

    def home(self, noun) -> None:
        """ "from her home in Valencia", "Ana's home is in Oslo": the owner lives there; a home
        with any word qualifying it ("childhood", "holiday", "second", "former") says nothing."""
        if any(c.dep_ in ("amod", "compound", "nmod", "nummod") for c in noun.children):
            return
        if not current_relative(noun):
            return
        owners = [n for c in noun.children if c.dep_ == "poss" for n in self.names(c)]
        clause = noun.head if noun.dep_ == "nsubj" and noun.head.lemma_ == "be" else noun
        places = [n for where in {noun, clause} for p in where.children if p.dep_ == "prep" and p.lower_ == "in"
                  for o in p.children if o.dep_ == "pobj" for n in self.names(o, "Place")]  # fmt: skip
        if holds(clause, "LIVES_IN", event=False):
            self.add(owners, "LIVES_IN", places)

    def workplace(self, word) -> list[str]:
        """The organisation a "where" clause hung on word means: word; the name before a date
        the parser hung the clause on ("Form & Fjord in Malmö in 1998, where he still works"); an
        organisation whose "in" a place is ("Form & Fjord in Malmö, where ..."); the object of "to"
        that spaCy labels or its name's words call an organisation ("returned to Kestrel Labs,
        where"). A place alone is no employer ("moved to Lund, where she works")."""
        if word.ent_type_ in ("DATE", "TIME") or word.like_num:
            start = min(t.i for t in word.head.subtree) if word.dep_ == "pobj" else word.i
            if start <= word.sent.start:
                return []
            word = word.doc[start - 1]
        if word.dep_ == "pobj" and word.head.lower_ == "in" and word.head.head.pos_ == "PROPN":
            word = word.head.head  # the organisation in the place
        # "returned to Kestrel Labs, where": to an organisation by spaCy's label or its name's words
        cue = cue_type(" ".join(t.text for t in org_tokens(word)))
        org = cue != "Place" and (word.ent_type_ == "ORG" or (word.ent_type_ not in PLACES and cue == "Org"))
        at = word.dep_ == "pobj" and (word.head.lower_ in ("at", "for") or (word.head.lower_ == "to" and org))
        if not at and (
            word.ent_type_ in PLACES
            or word.dep_ == "pobj"
            or not (word.ent_type_ == "ORG" or word.dep_ == "dobj")
        ):
            return []  # a place, or the object of another preposition ("moved to Lund, where she works")
        return self.names(word, "Org")

    def role_objects(self, noun, preps: list[str], kind: str = "Org") -> list[str]:
        """The organisations of a role noun's "at" / "for" (or, for a post, "of")."""
        lemma = noun.lemma_.lower()
        if lemma in NOT_STAFF - set(NOUN_OF) or lemma in RELATION_NOUNS:
            return []
        allowed = set(preps) | ({"of"} if lemma in ROLE_OF else set())
        out = []
        for child in noun.children:
            if child.dep_ == "prep" and child.lower_ in allowed:
                out += [n for o in child.children if o.dep_ == "pobj" for n in self.names(o, kind)]
        return out


def unprefixed(sent) -> tuple[object, frozenset[int]]:
    """(sent, no verbs), or where a verb of it carries a hyphenated prefix of VERB_PREFIXES
    ("co-founded"), the sentence parsed again without them, and the verbs there that had "co-":
    the tokenizer splits "co", "-", "founded" and the parser misreads the whole sentence."""
    doc, start = sent.doc, sent.start_char
    cut = [t for t in sent
           if t.lower_ in VERB_PREFIXES and t.i + 2 < sent.end and glued(doc[t.i + 1]) and not t.whitespace_
           and (doc[t.i + 2].tag_.startswith("VB") or doc[t.i + 2].lower_ in VERB_FORMS)]  # fmt: skip
    if not cut:
        return sent, frozenset()
    text, at, co = "", start, set()
    for prefix in cut:
        text += doc.text[at : prefix.idx]
        at = doc[prefix.i + 2].idx  # the verb, after its prefix and hyphen
        if prefix.lower_ == "co":
            co.add(len(text))
    text += doc.text[at : sent.end_char]
    again = ner.pipeline()(text)
    sents = list(again.sents)
    if len(sents) != 1:
        return sent, frozenset()
    return sents[0], frozenset(t.i for t in again if t.idx in co)


def inverted(verb, child) -> bool:
    """child is a second subject the parser gave a verb it does not know, after it: its object
    ("Tadeusz Wróbel wed Agnieszka Nowak", "wed" read as a form of "we")."""
    subjects = [c for c in verb.children if c.dep_ == "nsubj"]
    return child.dep_ == "nsubj" and len(subjects) == 2 and subjects[0].i < verb.i < child.i


def partitive(word) -> bool:
    """word names a part of a group its "of" gives: "the eldest (of)", "one (of)", "the second (of)"."""
    return word.tag_ == "JJS" or word.pos_ == "NUM" or word.ent_type_ == "ORDINAL"


def located(name) -> bool:
    """name is the place of a clause: the object of "in", "at" or "from" on a verb ("grew up in Enugu")."""
    return (
        name.dep_ == "pobj"
        and name.head.lower_ in ("in", "at", "from")
        and name.head.head.pos_ in ("VERB", "AUX")
    )


def appositive(token) -> bool:
    """A common noun with a name in apposition ("her husband Tom")."""
    return token.pos_ == "NOUN" and any(c.dep_ == "appos" and c.pos_ == "PROPN" for c in token.children)


def _forms(lemma: str) -> list[str]:
    """The written forms of a regular verb ("marry": marries, married, marrying)."""
    stem = lemma[:-1] if lemma.endswith("e") else lemma
    if lemma.endswith("y") and lemma[-2] not in "aeiou":
        return [lemma, lemma[:-1] + "ies", lemma[:-1] + "ied", lemma + "ing"]
    return [lemma, lemma + "s", stem + "ed", stem + "ing"]


# Every form of VERBS' verbs: the lemmatizer gets some wrong ("lives" tagged a noun: "life");
# not "found", which is "find" too.
VERB_FORMS = {form: lemma for lemma in VERBS for form in _forms(lemma) if form != "found"} | {
    "led": "lead",
    "wedded": "wed",
}


def verb_lemma(token) -> str | None:
    """The verb of VERBS token is a form of, or None."""
    if token.lemma_ in VERBS:
        return token.lemma_
    return VERB_FORMS.get(token.lower_) if token.pos_ != "PROPN" else None


def conjuncts(token) -> list:
    """The tokens conjoined after token ("Acme" -> "Initech" in "Acme and Initech")."""
    out, stack = [], [token]
    while stack:
        for child in stack.pop().children:
            if child.dep_ == "conj":
                out.append(child)
                stack.append(child)
    return sorted(out, key=lambda t: t.i)


def current_relative(noun) -> bool:
    """noun is no ex, former, step or in-law relative (or role): "ex-wife", "former boss",
    "mother-in-law", "step-son"."""
    doc = noun.doc
    before = [t.lower_ for t in doc[max(0, noun.i - 2) : noun.i]]
    if any(w in NOT_KIN for w in before) or any(c.lower_ in NOT_KIN for c in noun.children):
        return False
    after = "".join(t.text for t in doc[noun.i + 1 : noun.i + 5]).lower()
    return not after.startswith("-in-law")


def holds(clause, predicate: str, event: bool) -> bool:
    """The clause states its relation: not negated, modal or under "if", and for a relation that
    can end, an event or in the present (perfect): "was married to" states nothing."""
    children = list(clause.children)
    if any(c.dep_ == "neg" or (c.dep_ == "det" and c.lower_ == "no") for c in children):
        return False
    if any(c.lower_ == "longer" and any(n.dep_ == "neg" for n in c.children) for c in children):
        return False  # "no longer lives in Oslo"
    if any(c.dep_ == "aux" and c.tag_ == "MD" for c in children):
        return False
    for node in [clause, *clause.ancestors]:
        if any(c.dep_ == "mark" and c.lower_ in HYPOTHETICAL for c in node.children):
            return False
    if predicate not in ENDING or event:
        return True
    auxes = [c for c in children if c.dep_ in ("aux", "auxpass")]
    if auxes:
        return auxes[0].tag_ not in ("VBD",)
    return clause.tag_ != "VBD" or clause.pos_ == "NOUN"


_GROUPS = re.compile(
    r"\b(team|squad|group|crew|committee|club|band|board|society|union|choir|orchestra)$", re.I
)


def team(name: str) -> bool:
    """A name of a group one is a member of rather than employed by ("the Data Team")."""
    return bool(_GROUPS.search(name))
