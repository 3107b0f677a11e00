"""Relation families: which predicates state which kind of relation, and which words of a
question ask for a path of them (stdlib only).

A predicate is an upper snake case label (exo_private.normalise_predicate). It belongs to a
family when one of its words is one of the family's words: MOTHER_OF, IS_PARENT_OF and
HAS_DAUGHTER all state PARENT_OF. Its direction is the family's (subject -> object: parent ->
child, person -> employer) unless the word names the other end (DAUGHTER_OF: the subject is the
child) or the predicate turns it round (HAS_..., ..._BY). The multi-hop graph stage
(plpy/stages.py) walks, from the entity a question names, one family per hop in the order the
question's relation words give; `exo eval extraction` scores predicates by family.
"""

import re

# family -> (words stating it subject -> object, words stating it object -> subject); the
# order is the order families are tried in.
FAMILIES = {
    "SPOUSE_OF": (
        ("SPOUSE", "SPOUSES", "MARRIED", "MARRIES", "MARRY", "WIFE", "HUSBAND", "WED", "WEDDED"),
        (),
    ),
    "PARENT_OF": (
        ("PARENT", "PARENTS", "FATHER", "MOTHER", "MUM", "MOM", "DAD"),
        ("CHILD", "CHILDREN", "SON", "DAUGHTER", "KID", "KIDS"),
    ),
    "SIBLING_OF": (("SIBLING", "SIBLINGS", "BROTHER", "SISTER"), ()),
    "FRIEND_OF": (("FRIEND", "FRIENDS", "BEFRIENDED"), ()),
    "MANAGES": (
        ("MANAGES", "MANAGE", "MANAGED", "MANAGER", "MANAGING", "LEADS", "LEAD", "LEADER", "HEADS", "BOSS"),
        (),
    ),
    "MEMBER_OF": (("MEMBER", "MEMBERS", "BELONGS", "BELONG", "JOINED"), ()),
    "RUNS": (("RUNS", "RUN", "OPERATES", "OPERATE", "MAINTAINS", "MAINTAIN", "OWNS"), ()),
    "WORKS_AT": (("WORKS", "WORK", "WORKED", "WORKING", "EMPLOYED", "EMPLOYEE"), ("EMPLOYS", "EMPLOYER")),
    "LIVES_IN": (("LIVES", "LIVE", "LIVED", "LIVING", "RESIDES", "RESIDENT", "MOVED", "BASED"), ()),
}
SYMMETRIC = frozenset({"SPOUSE_OF", "SIBLING_OF", "FRIEND_OF"})

# Words of a question -> the hops they ask for, each hop a tuple of families; a hop nearer the
# entity the question names comes first ("the daughter-in-law of X": X's child, then their spouse).
_KIN_IN_LAW = (("SPOUSE_OF", "SIBLING_OF"), ("SPOUSE_OF", "SIBLING_OF"))
QUESTION_WORDS = {
    **dict.fromkeys(
        ("daughter-in-law", "son-in-law", "child-in-law", "children-in-law"), (("PARENT_OF",), ("SPOUSE_OF",))
    ),
    **dict.fromkeys(
        ("mother-in-law", "father-in-law", "parent-in-law", "parents-in-law"),
        (("SPOUSE_OF",), ("PARENT_OF",)),
    ),
    **dict.fromkeys(("sister-in-law", "brother-in-law", "sibling-in-law"), _KIN_IN_LAW),
    **dict.fromkeys(
        (
            "grandmother",
            "grandfather",
            "grandparent",
            "grandparents",
            "grandson",
            "granddaughter",
            "grandchild",
            "grandchildren",
        ),
        (("PARENT_OF",), ("PARENT_OF",)),
    ),
    **dict.fromkeys(("aunt", "uncle"), (("PARENT_OF",), ("SIBLING_OF",))),
    **dict.fromkeys(("niece", "nephew"), (("SIBLING_OF",), ("PARENT_OF",))),
    **dict.fromkeys(
        (
            "mother",
            "father",
            "parent",
            "parents",
            "mum",
            "dad",
            "son",
            "daughter",
            "child",
            "children",
            "kids",
        ),
        (("PARENT_OF",),),
    ),
    **dict.fromkeys(("sibling", "siblings", "brother", "sister"), (("SIBLING_OF",),)),
    **dict.fromkeys(("wife", "husband", "spouse", "married"), (("SPOUSE_OF",),)),
    **dict.fromkeys(("friend", "friends"), (("FRIEND_OF",),)),
    **dict.fromkeys(("manages", "manage", "managed", "manager", "leads", "lead", "boss"), (("MANAGES",),)),
    **dict.fromkeys(("member", "members", "belong", "belongs"), (("MEMBER_OF",),)),
    **dict.fromkeys(("runs", "run", "operates", "maintains"), (("RUNS",),)),
    **dict.fromkeys(("works", "work", "employer", "employs", "employed"), (("WORKS_AT",),)),
    **dict.fromkeys(("live", "lives", "living", "based", "reside", "resides"), (("LIVES_IN",),)),
}
# The end of a parent-and-child relation a kinship word names, hop by hop: the parent (the
# relation's subject, as PARENT_OF states it) or the child (its object); None: either end, as
# every other family's words ("the mother of X" is X's parent, never X's child).
_UP, _DOWN = "subject", "object"
WORD_ENDS = {
    **dict.fromkeys(("mother", "father", "parent", "parents", "mum", "dad"), (_UP,)),
    **dict.fromkeys(("son", "daughter", "child", "children", "kids"), (_DOWN,)),
    **dict.fromkeys(("grandmother", "grandfather", "grandparent", "grandparents"), (_UP, _UP)),
    **dict.fromkeys(("grandson", "granddaughter", "grandchild", "grandchildren"), (_DOWN, _DOWN)),
    **dict.fromkeys(("mother-in-law", "father-in-law", "parent-in-law", "parents-in-law"), (None, _UP)),
    **dict.fromkeys(("daughter-in-law", "son-in-law", "child-in-law", "children-in-law"), (_DOWN, None)),
    **dict.fromkeys(("aunt", "uncle"), (_UP, None)),
    **dict.fromkeys(("niece", "nephew"), (None, _DOWN)),
}
# Families whose words name a person: the same word twice is two hops ("the mother of the mother
# of X"), where a verb and a noun of another family may name one ("the employer X works for").
_RELATIVES = frozenset({"PARENT_OF", "SIBLING_OF", "SPOUSE_OF", "FRIEND_OF"})
MAX_HOPS = 4
_QUESTION_WORD = re.compile(r"[a-z]+(?:-in-law)?")
# the possessive mark after a name or a relation noun
_POSSESSIVE = re.compile(r"['\u2019]s?(?=\s)")
_NOUN_WORDS = 3  # a possessive's noun is one of the three words after it ("X's two younger brothers")


def possessive_chain(text, end):
    """[(start, word)] of the relation nouns of the possessive chain at `end` (just after a name:
    "X's husband's sister" gives husband, then sister; "X's younger brother" brother), in order;
    it stops at a possessive whose next words ask for no relation."""
    chain = []
    while m := _POSSESSIVE.match(text, end):
        words = list(_QUESTION_WORD.finditer(text, m.end()))[:_NOUN_WORDS]
        noun = next((w for w in words if w.group() in QUESTION_WORDS), None)
        if noun is None:
            break
        chain.append((noun.start(), noun.group()))
        end = noun.end()
    return chain


def predicate_family(predicate):
    """(family, reversed) of an upper snake case predicate, or None when no family's word is
    in it; reversed: the predicate states the family object -> subject."""
    words = (predicate or "").split("_")
    turned = words[0] == "HAS" or words[-1] == "BY"
    for family, (forward, backward) in FAMILIES.items():
        for word in words:
            if word in forward or word in backward:
                return family, (word in backward) != turned
    return None


def family_pattern(families):
    """A regular expression (the same in Python and PostgreSQL) that a predicate of any of
    `families` matches."""
    words = sorted({w for f in families for side in FAMILIES[f] for w in side})
    return "(^|_)(" + "|".join(words) + ")(_|$)"


def relation_steps(question, anchors):
    """The hops a question asks for from the entity it names: a list of (families, end) (at most
    MAX_HOPS; end as WORD_ENDS), empty when it asks for no relation. `anchors` are the names of
    the entities it names; the first found in the text is where the path starts. English binds a
    possessive to its name before an "of" phrase: the relation nouns of the chain of possessives
    right after it come first, in order ("the wife of X's brother": SIBLING_OF, then SPOUSE_OF);
    then the words before it, nearest first ("the manager of the team that runs X": RUNS, then
    MANAGES; "which company employs X's daughter": PARENT_OF, then WORKS_AT), then the others
    after it in order ("where does the sister of X live": SIBLING_OF, then LIVES_IN). Another
    word asking for the hop of another family the previous one ended with adds only its other
    hops ("who is the employer X works for": one WORKS_AT hop)."""
    text = (question or "").lower()
    start = end = len(text)
    for name in anchors:
        at = text.find((name or "").lower())
        if at >= 0 and name:
            start, end = at, at + len(name)
            break
    chain = possessive_chain(text, end)
    taken = {at for at, _ in chain}
    before, after = [], []
    for m in _QUESTION_WORD.finditer(text):
        if m.group() not in QUESTION_WORDS or (m.start() < end and m.end() > start) or m.start() in taken:
            continue
        (before if m.end() <= start else after).append((m.start(), m.group()))
    path, last = [], None
    for _, word in chain + sorted(before, key=lambda x: -x[0]) + after:
        hops = QUESTION_WORDS[word]
        steps = list(zip(hops, WORD_ENDS.get(word, (None,) * len(hops)), strict=True))
        if path and path[-1][0] == hops[0] and word != last and not _RELATIVES & set(hops[0]):
            steps = steps[1:]
        path.extend(steps)
        last = word
    return path[:MAX_HOPS]


def goes_to(subject, predicate, obj, to, end):
    """Whether a relation (subject, predicate, object), walked to `to`, reaches the end a hop asks
    for (WORD_ENDS: the parent, the child, or None: either): the parent of PARENT_OF is its
    subject, of a predicate stating it the other way round (DAUGHTER_OF, HAS_MOTHER) its object
    (predicate_family)."""
    if end is None:
        return True
    family = predicate_family(predicate)
    if family is None:
        return True
    parent = obj if family[1] else subject
    return (to == parent) == (end == _UP)


def answer_ways(walked, hops, anchors, limit=20, ends=None):
    """The ways a typed walk reached an answer, at most `limit`: lists of relations (subject,
    predicate, object, the end it reached), one a hop, the first from an anchor (a name the
    question names), each from where the one before ended (the last one's end: the answer). `walked`: [the hops that walked it, subject, predicate,
    object] lists as the path stage's rows state them; `hops`: the path's length. Level by level,
    as the walk goes: the k-th relation of a way ends at a name first reached at hop k, so a way
    never returns to a name it passed or that is nearer ("the sister of my sister" is no
    sister-in-law), and a branch that led nowhere is no way. `ends`: the end each hop asks for
    (relation_steps; goes_to), so "the mother of the mother of X" is no way to X's grandchild."""
    ends = list(ends or [None] * hops)
    at = {}
    for walked_at, subject, predicate, obj in walked:
        for hop in walked_at:
            at.setdefault(hop, set()).add((subject, predicate, obj))
    depth = dict.fromkeys(anchors, 0)
    for hop in range(1, hops + 1):
        reached = {
            b
            for s, p, o in at.get(hop, ())
            for a, b in ((s, o), (o, s))
            if depth.get(a) == hop - 1 and goes_to(s, p, o, b, ends[hop - 1])
        }
        depth.update((name, hop) for name in reached if name not in depth)
    ways = [([], anchor) for anchor in dict.fromkeys(anchors)]
    for hop in range(1, hops + 1):
        ways = [
            ([*way, (*r, b)], b)
            for way, end in ways
            for r in sorted(at.get(hop, ()))
            for a, b in ((r[0], r[2]), (r[2], r[0]))
            if a == end and depth.get(b) == hop and goes_to(*r, b, ends[hop - 1])
        ]
    return [way for way, _ in ways][:limit]
