"""Benchmark: relations from people-wiki pages, the syntax pass against the pattern pass, per phrasing.

A seeded generator writes Markdown pages (some with frontmatter, some without) about fictional
people, whose names are varied (one to three words, hyphenated, with particles, from many
languages), each page a window. A page's sentences state its person's relations in PHRASINGS
(at least ten for each of parent, sibling, spouse, friend, work and residence; with the ground
truth of each sentence as written) among DISTRACTORS that state none (negations, exes, in-laws,
chains "X's brother's car", questions, conditionals, past states, modals, mentions) and filler
prose. Both passes read every page (relation_syntax.find, the worker's syntax pass, and
relation_patterns.find, the regex pass: the baseline, in the same run) with the page's person as
the note subject, as the worker reads a note titled with their name. A relation found is
credited to the generated sentence its evidence is (precision per phrasing: found relations
there that the truth holds; distractor rows count what is found where nothing is stated), and
recall is the share of each phrasing's stated relations found (a symmetric one either way round).

    .venv/bin/python -m bench.people_wiki [--seed N] [--pages N] [--show]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field

from exocortex.extraction import ner, relation_patterns, relation_syntax
from exocortex.extraction.relation_patterns import name_key

FIRST = {
    "f": [
        "Ana",
        "Ingrid",
        "Aiko",
        "Ngozi",
        "Priya",
        "Marta",
        "Sofia",
        "Lena",
        "Fatima",
        "Chloé",
        "Anne-Marie",
        "Zoë",
        "Hye-jin",
        "Olga",
        "Amara",
        "Beatriz",
        "Siobhan",
        "Yuki",
        "Leila",
        "Dagny",
        "Ines",
        "Mei",
        "Kateřina",
        "Esther",
        "Nadia",
        "Rosa",
        "Hana",
        "Ebele",
        "Freya",
        "Lucía",
    ],
    "m": [
        "Tom",
        "Kwame",
        "Omar",
        "Jean-Luc",
        "Erik",
        "Hiroshi",
        "Rahul",
        "Mateo",
        "Lars",
        "Tomasz",
        "Dmitri",
        "Kofi",
        "Yusuf",
        "Pedro",
        "Arjun",
        "Henrik",
        "Jonas",
        "Emeka",
        "Felipe",
        "Sven",
        "Malik",
        "Ravi",
        "Tariq",
        "Bruno",
        "Oskar",
        "Kenji",
        "Diego",
        "Aleksander",
        "Nils",
        "Samuel",
    ],
}
# Surnames of one word, hyphenated, and of several (particles: "van der Berg", "de la Cruz").
LAST = [
    "Lind",
    "Mensah",
    "Okafor",
    "Natarajan",
    "Kowalski",
    "Haddad",
    "Tanaka",
    "García-López",
    "Solberg",
    "Fischer",
    "O'Brien",
    "Nguyen",
    "Abara",
    "Petrov",
    "Moreau",
    "Castillo",
    "Andersen",
    "Yilmaz",
    "Kim",
    "Oyelaran",
    "Dubois",
    "Rossi",
    "Novak",
    "Sato",
    "Bergström",
    "Achebe",
    "Mbeki",
    "Johansson",
    "Al-Amin",
    "Ferreira",
    "Varga",
    "Kaur",
    "Holm",
    "Reyes",
    "Ortiz",
    "van der Berg",
    "de la Cruz",
    "Nakamura-Holt",
    "Ben Youssef",
    "Da Silva",
]
ORGS = [
    "Brightwater Analytics",
    "Kestrel Labs",
    "Nordhavn Shipping",
    "Tessaly Foods",
    "Orinoco Systems",
    "Halvard Bank",
    "Quillfeather Press",
    "Sunmarsh Energy",
    "Veltro Motors",
    "Amberline Health",
    "Cobalt Ridge Mining",
    "Lumen & Pike",
    "Greyhaven Studios",
    "Marisol Textiles",
    "Northgate Insurance",
    "Pelago Airways",
]
CITIES = [
    "Oslo",
    "Kraków",
    "Lagos",
    "Osaka",
    "Valparaíso",
    "Leeds",
    "Bergen",
    "Pune",
    "Marseille",
    "Tampere",
    "Nairobi",
    "Porto",
    "Gdańsk",
    "Montréal",
    "Brisbane",
    "Tbilisi",
    "Cork",
    "Ghent",
    "Dunedin",
    "Accra",
]
ROLES = [
    "engineer",
    "nurse",
    "geologist",
    "designer",
    "accountant",
    "chemist",
    "pilot",
    "lawyer",
    "analyst",
    "editor",
]
POSTS = [
    "CEO",
    "director",
    "head",
    "chief",
    "executive",
    "president",
]
HOBBIES = [
    "is a keen sailor",
    "plays the cello",
    "collects old maps",
    "restores vintage bicycles",
    "writes crime novels",
    "keeps bees",
]
NATIONS = [
    "Norwegian",
    "Ghanaian",
    "Japanese",
    "Polish",
    "Brazilian",
    "Irish",
    "Indian",
    "Chilean",
    "Finnish",
    "Kenyan",
]
KIN_WORDS = {
    "child": {"f": "daughter", "m": "son"},
    "parent": {"f": "mother", "m": "father"},
    "sibling": {"f": "sister", "m": "brother"},
    "spouse": {"f": "wife", "m": "husband"},
    "subj": {"f": "She", "m": "He"},
    "poss": {"f": "her", "m": "his"},
}


@dataclass
class Person:
    first: str
    last: str
    sex: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    def word(self, kin: str) -> str:
        return KIN_WORDS[kin][self.sex]


@dataclass
class Item:
    """One generated sentence (or two): its text, its phrasing, and the relations it states."""

    text: str
    phrasing: str
    truth: list[tuple[str, str, str]] = field(default_factory=list)


def person(rng: random.Random, sex: str | None = None, last: str | None = None) -> Person:
    sex = sex or rng.choice("fm")
    return Person(rng.choice(FIRST[sex]), last or rng.choice(LAST), sex)


class Cast:
    """The people, organisations and places of one page, drawn fresh for each sentence."""

    def __init__(self, rng: random.Random, subject: Person):
        self.rng, self.subject = rng, subject
        self.used = {subject.first}

    def new(self, sex: str | None = None, family: bool = False) -> Person:
        """A person whose first name the page has not used (a first name stays one person's)."""
        while True:
            p = person(self.rng, sex, self.subject.last if family else None)
            if p.first not in self.used:
                self.used.add(p.first)
                return p

    def org(self) -> str:
        return self.rng.choice(ORGS)

    def city(self) -> str:
        return self.rng.choice(CITIES)

    def year(self) -> int:
        return self.rng.randint(1975, 2022)


PHRASINGS: dict[str, callable] = {}
DISTRACTORS: dict[str, callable] = {}


def phrasing(name: str, table: dict | None = None):
    def register(fn):
        (PHRASINGS if table is None else table)[name] = fn
        return fn

    return register


def parent_of(parent: Person | str, child: Person | str) -> tuple[str, str, str]:
    return ("PARENT_OF", getattr(parent, "full", parent), getattr(child, "full", child))


def pair(predicate: str, a: Person | str, b: Person | str) -> tuple[str, str, str]:
    return (predicate, getattr(a, "full", a), getattr(b, "full", b))


# -- parent and child (the direction matters) ------------------------------------------------------


@phrasing("parent: C is P's son")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    return Item(f"{k.full} is {p.full}'s {k.word('child')}.", "", [parent_of(p, k)])


@phrasing("parent: P is the father of C")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    return Item(f"{p.full} is the {p.word('parent')} of {k.full}.", "", [parent_of(p, k)])


@phrasing("parent: the children of P are A, B and C")
def _(c: Cast) -> Item:
    p, kids = c.subject, [c.new(family=True) for _ in range(3)]
    text = f"The children of {p.full} are {kids[0].full}, {kids[1].full} and {kids[2].full}."
    return Item(text, "", [parent_of(p, k) for k in kids])


@phrasing("parent: P's son C (apposition)")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    return Item(
        f"{p.full}'s {k.word('child')} {k.first} studied music in {c.city()}.", "", [parent_of(p, k.first)]
    )


@phrasing("parent: C, the son of P,")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    return Item(f"{k.full}, the {k.word('child')} of {p.full}, trained as a pilot.", "", [parent_of(p, k)])


@phrasing("parent: P has two children, A and B")
def _(c: Cast) -> Item:
    p, a, b = c.subject, c.new(family=True), c.new(family=True)
    return Item(f"{p.full} has two children, {a.full} and {b.full}.", "", [parent_of(p, a), parent_of(p, b)])


@phrasing("parent: A and B are P's children")
def _(c: Cast) -> Item:
    p, a, b = c.subject, c.new(family=True), c.new(family=True)
    return Item(f"{a.full} and {b.full} are {p.full}'s children.", "", [parent_of(p, a), parent_of(p, b)])


@phrasing("parent: C's mother is P")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    return Item(f"{k.full}'s {p.word('parent')} is {p.full}.", "", [parent_of(p, k)])


@phrasing("parent: C, P's eldest son,")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    text = f"{k.full}, {p.full}'s eldest {k.word('child')}, {c.rng.choice(HOBBIES)}."
    return Item(text, "", [parent_of(p, k)])


@phrasing("parent: P, the mother of C,")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    text = f"{p.full}, the {p.word('parent')} of {k.full}, was born in {c.city()}."
    return Item(text, "", [parent_of(p, k)])


@phrasing("parent: C, the eldest of three children of P and Q,")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    q = c.new("m" if p.sex == "f" else "f", family=True)
    n = c.rng.choice(["two", "three", "four", "five"])
    parents = f"{p.full} and {q.full}"
    text = c.rng.choice(
        [
            f"{k.full} is the eldest of {n} children of {parents}.",
            f"{k.full}, the second of {n} children of {parents}, {c.rng.choice(HOBBIES)}.",
            f"{k.full} was one of the {n} children of {parents}.",
            f"{k.full} was raised in {c.city()}, the only {k.word('child')} of {parents}.",
        ]
    )
    return Item(text, "", [parent_of(p, k), parent_of(q, k)])


@phrasing("parent: C was born to P and Q")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    q = c.new("m" if p.sex == "f" else "f", family=True)
    parents = f"{p.full} and {q.full}"
    text = c.rng.choice(
        [
            f"{k.full} was born to {parents} in {c.year()}.",
            f"{k.full}, born to {parents} in {c.city()}, {c.rng.choice(HOBBIES)}.",
            f"{k.full} was born in {c.city()} to {parents}.",
        ]
    )
    return Item(text, "", [parent_of(p, k), parent_of(q, k)])


@phrasing("parent: P and Q's son C (a shared possessive)")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    q = c.new("m" if p.sex == "f" else "f", family=True)
    parents, child = f"{p.full} and {q.full}", k.word("child")
    text, named = c.rng.choice(
        [
            (f"{parents}'s {child} {k.first} studied music in {c.city()}.", k.first),
            (f"{k.full} is {parents}'s {child}.", k.full),
            (f"{parents}'s {child}, {k.full}, {c.rng.choice(HOBBIES)}.", k.full),
            (f"Last summer {parents}'s eldest {child} {k.full} moved abroad.", k.full),
        ]
    )
    return Item(text, "", [parent_of(p, named), parent_of(q, named)])


@phrasing("parent: C is the youngest daughter of P")
def _(c: Cast) -> Item:
    p, k = c.subject, c.new(family=True)
    text = f"According to the family, {k.full} is the youngest {k.word('child')} of {p.full}."
    return Item(text, "", [parent_of(p, k)])


# -- siblings --------------------------------------------------------------------------------------


@phrasing("sibling: A is B's brother")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    return Item(f"{a.full} is {b.full}'s {a.word('sibling')}.", "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: A and B are siblings")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    return Item(f"{a.full} and {b.full} are siblings.", "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: B's sister A (apposition)")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    text = f"{b.full}'s {a.word('sibling')} {a.full} {c.rng.choice(HOBBIES)}."
    return Item(text, "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: A, B's younger brother,")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    text = f"{a.full}, {b.full}'s younger {a.word('sibling')}, spent a year abroad."
    return Item(text, "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: A is the sister of B")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    return Item(f"{a.full} is the {a.word('sibling')} of {b.full}.", "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: the siblings of B are A and C")
def _(c: Cast) -> Item:
    b, a, d = c.subject, c.new(family=True), c.new(family=True)
    text = f"The siblings of {b.full} are {a.full} and {d.full}."
    return Item(text, "", [pair("SIBLING_OF", b, a), pair("SIBLING_OF", b, d)])


@phrasing("sibling: A and B are twins")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    return Item(f"{b.full} and {a.full} are twins.", "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: B has a brother, A")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    return Item(f"{b.full} has a {a.word('sibling')}, {a.full}.", "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: B's sibling is A")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    return Item(f"{b.full}'s only sibling is {a.full}.", "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: B grew up with her brother A")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    text = f"{b.full} grew up with {b.word('poss')} {a.word('sibling')} {a.full} in {c.city()}."
    return Item(text, "", [pair("SIBLING_OF", a, b)])


@phrasing("sibling: A, the sister of B,")
def _(c: Cast) -> Item:
    b, a = c.subject, c.new(family=True)
    text = f"{a.full}, the {a.word('sibling')} of {b.full}, teaches chemistry."
    return Item(text, "", [pair("SIBLING_OF", a, b)])


# -- spouses ---------------------------------------------------------------------------------------


def _spouse(c: Cast) -> tuple[Person, Person]:
    a = c.subject
    return a, c.new("m" if a.sex == "f" else "f")


@phrasing("spouse: A is married to B")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{a.full} is married to {b.full}.", "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A's wife is B")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{a.full}'s {b.word('spouse')} is {b.full}.", "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A and B are married")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{a.full} and {b.full} are married.", "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: B is A's husband")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{b.full} is {a.full}'s {b.word('spouse')}.", "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A married B in YEAR")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{a.full} married {b.full} in {c.year()}.", "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A lives with his wife B")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    text = f"{a.full} lives with {a.word('poss')} {b.word('spouse')} {b.first} and two dogs."
    return Item(text, "", [pair("SPOUSE_OF", a, b.first)])


@phrasing("spouse: A's husband, B, is")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    text = f"{a.full}'s {b.word('spouse')}, {b.full}, is a retired {c.rng.choice(ROLES)}."
    return Item(text, "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: B, the wife of A,")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    text = f"{b.full}, the {b.word('spouse')} of {a.full}, {c.rng.choice(HOBBIES)}."
    return Item(text, "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A and B got married")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(
        f"{a.full} and {b.full} got married in {c.city()} in {c.year()}.", "", [pair("SPOUSE_OF", a, b)]
    )


@phrasing("spouse: A and her husband B")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    text = f"{a.full} and {a.word('poss')} {b.word('spouse')} {b.full} spend their summers by the sea."
    return Item(text, "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A has been married to B since YEAR")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{a.full} has been married to {b.full} since {c.year()}.", "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A is survived by her husband (of N years), B")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    years = c.rng.choice(["thirty", "forty-two", "fifty", "sixty"])
    kin = f"{a.word('poss')} {b.word('spouse')}"
    text = c.rng.choice(
        [
            f"{a.full} is survived by {kin}, {b.full}.",
            f"{a.full} is survived by {kin} of {years} years, {b.full}, and three grandchildren.",
            f"{a.full} died in {c.year()}; {a.word('subj').lower()} leaves {kin} of {years} years, {b.full}.",
            f"{a.full} was survived by {kin} {b.full} and a sister.",
        ]
    )
    return Item(text, "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A wed B (and married variants)")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    text = c.rng.choice(
        [
            f"{a.full} wed {b.full} in {c.year()}.",
            f"{a.full} and {b.full} wed in {c.city()}.",
            f"In {c.year()} {a.full} married the {c.rng.choice(ROLES)} {b.full}.",
            f"{a.full} has been wed to {b.full} since {c.year()}.",
            f"{a.full} married {a.word('poss')} long-time partner, {b.full}, in {c.year()}.",
        ]
    )
    return Item(text, "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: A met B ... They married")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    year = c.year()
    text = c.rng.choice(
        [
            f"{a.full} met {b.full} in {c.city()} in {year - 3}. They married in {year}.",
            f"{a.full} and {b.full} met at {c.org()}. They wed two years later.",
            f"{a.full} met {b.full} at a dance in {c.city()}. It rained all night. They got married in {year}.",
            f"{a.full} first met {b.full} on a train. The couple married in {year}.",
        ]
    )
    return Item(text, "", [pair("SPOUSE_OF", a, b)])


@phrasing("spouse: B is the husband of A")
def _(c: Cast) -> Item:
    a, b = _spouse(c)
    return Item(f"{b.full} is the {b.word('spouse')} of {a.full}.", "", [pair("SPOUSE_OF", a, b)])


# -- friends ---------------------------------------------------------------------------------------


def _friend(c: Cast) -> tuple[Person, Person]:
    return c.subject, c.new()


@phrasing("friend: A is a friend of B")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full} is a friend of {b.full}.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A and B are friends")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full} and {b.full} are friends.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: B's friend A (apposition)")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{b.full}'s friend {a.full} often visits on Sundays.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A befriended B")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full} befriended {b.full} at university.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A is B's best friend")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full} is {b.full}'s best friend.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A and B are close friends")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{b.full} and {a.full} are close friends.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A is friends with B")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full} is friends with {b.full}.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A, a close friend of B,")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full}, a close friend of {b.full}, sings in a choir.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: A and B became friends")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{a.full} and {b.full} became friends in {c.year()}.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: B's oldest friend is A")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{b.full}'s oldest friend is {a.full}.", "", [pair("FRIEND_OF", a, b)])


@phrasing("friend: B has a close friend, A")
def _(c: Cast) -> Item:
    b, a = _friend(c)
    return Item(f"{b.full} has a close friend, {a.full}.", "", [pair("FRIEND_OF", a, b)])


# -- work ------------------------------------------------------------------------------------------


def _worker(c: Cast) -> tuple[Person, str]:
    return (c.subject if c.rng.random() < 0.5 else c.new()), c.org()


@phrasing("work: P works at ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} works at {o}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P works for ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} works for {o}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P, an engineer at ORG,")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    text = f"{p.full}, a senior {c.rng.choice(ROLES)} at {o}, {c.rng.choice(HOBBIES)}."
    return Item(text, "", [("WORKS_AT", p.full, o)])


@phrasing("work: P joined ORG in YEAR")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} joined {o} in {c.year()}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P is employed by ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} is employed by {o}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: ORG hired P")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"In {c.year()}, {o} hired {p.full}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P is the CEO of ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} is the {c.rng.choice(POSTS)} of {o}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P is a nurse at ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} is a {c.rng.choice(ROLES)} at {o}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P works as an engineer at ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    role = c.rng.choice(ROLES)
    article = "an" if role[0] in "aeiou" else "a"
    return Item(f"{p.full} works as {article} {role} at {o}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P has worked at ORG since YEAR")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} has worked at {o} since {c.year()}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: She works at ORG (the page's subject)")
def _(c: Cast) -> Item:
    p, o = c.subject, c.org()
    text = f"{p.full} is a {c.rng.choice(NATIONS)} {c.rng.choice(ROLES)}. {p.word('subj')} works at {o}."
    return Item(text, "", [("WORKS_AT", p.full, o)])


@phrasing("work: P was hired by ORG")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    return Item(f"{p.full} was hired by {o} in {c.year()}.", "", [("WORKS_AT", p.full, o)])


@phrasing("work: P ... ORG, where she still works")
def _(c: Cast) -> Item:
    p, o = _worker(c)
    subj = p.word("subj").lower()
    text = c.rng.choice(
        [
            f"{p.full} trained at {o}, where {subj} still works.",
            f"{p.full} did an internship at {o} in {c.year()}, where {subj} works today.",
            f"After a degree in physics, {p.full} returned to {o}, where {subj} works as a {c.rng.choice(ROLES)}.",
            f"{p.full} spent a year at {o} in {c.city()}, where {subj} now works.",
        ]
    )
    return Item(text, "", [("WORKS_AT", p.full, o)])


@phrasing("work: P co-founded ORG (with Q)")
def _(c: Cast) -> Item:
    p, q, o = c.subject, c.new(), c.org()
    year = c.year()
    text, founders = c.rng.choice(
        [
            (f"{p.full} co-founded {o} with {q.full} in {year}.", [p, q]),
            (f"{p.full}, who co-founded {o}, {c.rng.choice(HOBBIES)}.", [p]),
            (f"{o} was co-founded by {p.full} in {year}.", [p]),
            (f"{o} was co-founded by {p.full} and {q.full}.", [p, q]),
            (f"In {year} {p.full} co-founded {o}.", [p]),
        ]
    )
    return Item(text, "", [("WORKS_AT", f.full, o) for f in founders])


# -- residence -------------------------------------------------------------------------------------


def _resident(c: Cast) -> tuple[Person, str]:
    return (c.subject if c.rng.random() < 0.5 else c.new()), c.city()


@phrasing("residence: P lives in CITY")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full} lives in {x}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P, who lives in CITY,")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full}, who lives in {x}, {c.rng.choice(HOBBIES)}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P moved to CITY in YEAR")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full} moved to {x} in {c.year()}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P is based in CITY")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full} is based in {x}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P resides in CITY")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full} resides in {x}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P has lived in CITY since YEAR")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full} has lived in {x} since {c.year()}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P and Q live in CITY")
def _(c: Cast) -> Item:
    p, q, x = c.subject, c.new(), c.city()
    return Item(f"{p.full} and {q.full} live in {x}.", "", [("LIVES_IN", p.full, x), ("LIVES_IN", q.full, x)])


@phrasing("residence: P settled in CITY")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"After university {p.full} settled in {x}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P, a resident of CITY,")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    text = f"{p.full}, a resident of {x}, volunteers at the local library."
    return Item(text, "", [("LIVES_IN", p.full, x)])


@phrasing("residence: He lives in CITY (the page's subject)")
def _(c: Cast) -> Item:
    p, x = c.subject, c.city()
    text = f"{p.full} {c.rng.choice(HOBBIES)}. {p.word('subj')} lives in {x} with two cats."
    return Item(text, "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P relocated to CITY")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    return Item(f"{p.full} relocated to {x} in {c.year()}.", "", [("LIVES_IN", p.full, x)])


@phrasing("residence: P's home in CITY")
def _(c: Cast) -> Item:
    p, x = _resident(c)
    text = c.rng.choice(
        [
            f"{p.full} spoke to reporters from {p.word('poss')} home in {x}.",
            f"{p.full}'s home in {x} is full of books.",
            f"{p.full} keeps a small studio at {p.word('poss')} home in {x}.",
            f"Visitors to {p.full}'s home in {x} are greeted by two dogs.",
        ]
    )
    return Item(text, "", [("LIVES_IN", p.full, x)])


# -- distractors: nothing stated -------------------------------------------------------------------


def _distractor(name: str):
    return phrasing("distractor: " + name, DISTRACTORS)


@_distractor("negated")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"{a.full} is not {b.full}'s {a.word('sibling')}.",
                f"{a.full} does not work at {c.org()}.",
                f"{a.full} never lived in {c.city()}.",
                f"{a.full} and {b.full} are not friends.",
            ]
        ),
        "",
    )


@_distractor("ex / former")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"{a.full}'s ex-{b.word('spouse')} {b.full} {c.rng.choice(HOBBIES)}.",
                f"{b.full}, {a.full}'s former {b.word('spouse')}, moved abroad.",
                f"{a.full}'s mother-in-law {b.full} is a retired teacher.",
            ]
        ),
        "",
    )


@_distractor("chain X's brother's car")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"{a.full}'s brother's car was stolen in {c.year()}.",
                f"{a.full}'s sister's friend {b.full} came to the wedding.",
            ]
        ),
        "",
    )


@_distractor("question")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"Is {a.full} {b.full}'s {a.word('sibling')}?",
                f"Does {a.full} still live in {c.city()}?",
                f"Who is the {a.word('parent')} of {b.full}?",
            ]
        ),
        "",
    )


@_distractor("past state")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"{a.full} was married to {b.full} until {c.year()}.",
                f"{a.full} worked at {c.org()} in the nineties.",
                f"{a.full} lived in {c.city()} as a child.",
            ]
        ),
        "",
    )


@_distractor("conditional / modal")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"If {a.full} moves to {c.city()}, {b.full} will visit often.",
                f"{a.full} might join {c.org()} next year.",
                f"{a.full} wants to work at {c.org()}.",
            ]
        ),
        "",
    )


@_distractor("mention")
def _(c: Cast) -> Item:
    a, b = c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"{a.full} met {b.full} at a conference in {c.city()}.",
                f"{a.full} wrote a book about {c.org()}.",
                f"{a.full} studied physics at the University of {c.city()}.",
                f"{a.full} thanked {b.full} in {a.word('poss')} speech.",
            ]
        ),
        "",
    )


@_distractor("they, home, where, survived: no one")
def _(c: Cast) -> Item:
    a, b, d = c.new(), c.new(), c.new()
    return Item(
        c.rng.choice(
            [
                f"{a.full} introduced {b.full} to {d.full}. They married in {c.year()}.",
                f"{a.full} sold {a.word('poss')} childhood home in {c.city()}.",
                f"{a.full} returned to {c.org()}, where {a.word('subj').lower()} worked in the nineties.",
                f"{a.full} often visits {c.city()}, where {a.word('poss')} brother works.",
            ]
        ),
        "",
    )


# -- pages -----------------------------------------------------------------------------------------


@dataclass
class Page:
    title: str
    text: str
    items: list[Item]


def page(rng: random.Random, phrasings: list[str]) -> Page:
    """One page about a fresh person: its sentences the given phrasings' (and one distractor for
    every three), in paragraphs and lists, under a heading, with frontmatter or without."""
    subject = person(rng)
    cast = Cast(rng, subject)
    items = []
    for name in phrasings:
        item = PHRASINGS[name](cast)
        item.phrasing = name
        items.append(item)
        if rng.random() < 0.34:
            kind = rng.choice(sorted(DISTRACTORS))
            distractor = DISTRACTORS[kind](cast)
            distractor.phrasing = kind
            items.append(distractor)
    rng.shuffle(items)
    intro = f"{subject.full} (born {cast.year()}) is a {rng.choice(NATIONS)} {rng.choice(ROLES)}."
    blocks = [f"# {subject.full}", intro]
    for start in range(0, len(items), 3):
        chunk = [i.text for i in items[start : start + 3]]
        if rng.random() < 0.25:
            blocks.append("\n".join("- " + t for t in chunk))
        else:
            if rng.random() < 0.3:
                blocks.append(rng.choice(["## Life", "## Family", "## Career", "## Personal life"]))
            blocks.append(" ".join(chunk))
    text = "\n\n".join(blocks) + "\n"
    if rng.random() < 0.5:
        text = f"---\ntitle: {subject.full}\ntags: [people]\n---\n" + text
    return Page(subject.full, text, items)


def corpus(seed: int, pages: int, per_page: int = 8) -> list[Page]:
    """pages pages whose phrasings go round PHRASINGS in turn (each about as often as any other)."""
    rng = random.Random(seed)
    names = sorted(PHRASINGS)
    order = [names[i % len(names)] for i in range(pages * per_page)]
    rng.shuffle(order)
    return [page(rng, order[i * per_page : (i + 1) * per_page]) for i in range(pages)]


# -- scoring ---------------------------------------------------------------------------------------

SYMMETRIC = relation_syntax.SYMMETRIC


def key(predicate: str, subject: str, obj: str) -> tuple[str, str, str]:
    s, o = name_key(subject), name_key(obj)
    if predicate in SYMMETRIC and o < s:
        s, o = o, s
    return (predicate, s, o)


def words(text: str) -> set[str]:
    return {w.strip(".,;:!?'\u2019s").lower() for w in text.split()} - {""}


@dataclass
class Tally:
    stated: int = 0
    hit: int = 0
    found: int = 0
    right: int = 0

    def precision(self) -> float | None:
        return self.right / self.found if self.found else None

    def recall(self) -> float | None:
        return self.hit / self.stated if self.stated else None


def score(pages: list[Page], finder) -> tuple[dict[str, Tally], float]:
    """Per phrasing: relations stated and found, found and right; and seconds a page."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    seconds = 0.0
    for pg in pages:
        began = time.perf_counter()
        found = finder(pg)
        seconds += time.perf_counter() - began
        truth = {key(*t) for item in pg.items for t in item.truth}
        got = {key(r["predicate"], r["subject"], r["object"]) for r in found}
        for item in pg.items:
            for t in item.truth:
                tallies[item.phrasing].stated += 1
                tallies[item.phrasing].hit += key(*t) in got
        for r in found:
            k = key(r["predicate"], r["subject"], r["object"])
            item = credited(pg, k, r["evidence"])
            tally = tallies[item.phrasing if item else "(no sentence)"]
            tally.found += 1
            tally.right += k in truth
    return tallies, seconds / max(1, len(pages))


def credited(pg: Page, k: tuple[str, str, str], evidence: str) -> Item | None:
    """The generated sentence a relation found is credited to: one that states it, else the one
    its evidence shares most words with."""
    stating = [i for i in pg.items if k in {key(*t) for t in i.truth}]
    candidates = stating or pg.items
    said = words(evidence)
    best = max(candidates, key=lambda i: len(said & words(i.text)) / (1 + len(words(i.text))), default=None)
    return best if best is not None and (stating or said & words(best.text)) else None


def syntax_finder(pg: Page) -> list[dict]:
    ner.parse.cache_clear()  # the parse is part of the pass's time
    return relation_syntax.find(pg.text, None, None, relation_syntax.note_subject(pg.title))


def regex_finder(pg: Page) -> list[dict]:
    return relation_patterns.find(pg.text, None, None, relation_patterns.note_subject(pg.title))


def fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:5.2f}"


def table(syntax: dict[str, Tally], regex: dict[str, Tally]) -> list[str]:
    rows = [
        "| phrasing | stated | syntax P | syntax R | regex P | regex R |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    names = sorted(PHRASINGS) + sorted(DISTRACTORS) + ["(no sentence)"]
    families: dict[str, list[Tally]] = defaultdict(lambda: [Tally(), Tally()])
    for name in names:
        s, r = syntax.get(name, Tally()), regex.get(name, Tally())
        if not (s.stated or s.found or r.found):
            continue
        if name in DISTRACTORS or name == "(no sentence)":
            rows.append(f"| {name} | 0 | found {s.found} | | found {r.found} | |")
        else:
            rows.append(
                f"| {name} | {s.stated} | {fmt(s.precision())} | {fmt(s.recall())} | "
                f"{fmt(r.precision())} | {fmt(r.recall())} |"
            )
            family = name.split(":")[0]
            for total, part in zip(families[family], (s, r), strict=True):
                for attr in ("stated", "hit", "found", "right"):
                    setattr(total, attr, getattr(total, attr) + getattr(part, attr))

    rows += [
        "",
        "| relation | stated | syntax P | syntax R | regex P | regex R |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for family, (s, r) in families.items():
        rows.append(
            f"| {family} | {s.stated} | {fmt(s.precision())} | {fmt(s.recall())} | "
            f"{fmt(r.precision())} | {fmt(r.recall())} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--show", action="store_true", help="print every wrong or missed relation")
    args = parser.parse_args()
    pages = corpus(args.seed, args.pages)
    began = time.perf_counter()
    ner.pipeline()
    load = time.perf_counter() - began
    syntax, syntax_s = score(pages, syntax_finder)
    regex, regex_s = score(pages, regex_finder)
    print("\n".join(table(syntax, regex)))
    chars = sum(len(p.text) for p in pages) / len(pages)
    print(
        f"\n{len(pages)} pages (windows), {chars:.0f} characters each on average, seed {args.seed}: "
        f"syntax pass {1000 * syntax_s:.1f} ms a window (parse included; pipeline load {load:.1f} s once), "
        f"regex pass {1000 * regex_s:.2f} ms a window"
    )
    if args.show:
        show(pages)


def show(pages: list[Page]) -> None:
    """Every relation the syntax pass gets wrong or misses, with its sentence."""
    for pg in pages:
        found = syntax_finder(pg)
        got = {key(r["predicate"], r["subject"], r["object"]): r for r in found}
        truth = {key(*t) for item in pg.items for t in item.truth}
        for k, r in got.items():
            if k not in truth:
                print(f"WRONG  {k}  <- {r['evidence']}")
        for item in pg.items:
            for t in item.truth:
                if key(*t) not in got:
                    print(f"MISSED {key(*t)}  <- [{item.phrasing}] {item.text}")


if __name__ == "__main__":
    main()
