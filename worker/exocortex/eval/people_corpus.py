"""A generated corpus of people and organisations with known ground truth and multi-hop questions.

A seeded world of families (parents, children, siblings, marriages across families, so in-laws
are derivable), employers with teams that run named systems (works at, manages, member of, runs),
friendships, and attributes (job, pet, city lived in), written by its owner as:

  notes/family-*.md     family notes, some with frontmatter `people:`, several phrasings a
                        relation, pronouns and relations stated across two sentences
  notes/people/*.md     one person each: where they live, their job, pet and friends
  mail/*.eml            work mail (From / To / Cc headers) between a team's manager and members,
                        and family news
  chats.jsonl           the owner's chats with friends (the JSONL `exo import-chat --format
                        jsonl` reads, as bench/chat_histories.py writes it)

with ground_truth.json: {owner, entities: [{name, type, key}], relations: [{subject, predicate,
object, symmetric, files}], attributes: [{entity, attribute, value, files}]} (predicate: the
relation family, one of FAMILIES; files: the corpus files stating it) and questions.jsonl: one
JSON object a line {id, kind, question, answer, aliases (every right answer's name and first
name), anchor, hops: [{subject, predicate, object, files}]}; kind is "two-hop" (a named entity and two typed hops) or "attribute" (the
anchor is a person named by their job, then two hops). Names are invented (not dictionary
words) and unique by first name. Deterministic for a seed.

    .venv/bin/python -m bench.people_corpus --out DIR [--size 3] [--seed 16]
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from exocortex.plpy.textnorm import canonical_key

GROUND_TRUTH = "ground_truth.json"
QUESTIONS = "questions.jsonl"
CHATS = "chats.jsonl"
# Relation families; a symmetric one matches in either direction.
FAMILIES = {
    "PARENT_OF": False,
    "SIBLING_OF": True,
    "SPOUSE_OF": True,
    "FRIEND_OF": True,
    "WORKS_AT": False,
    "MANAGES": False,
    "MEMBER_OF": False,
    "RUNS": False,
    "LIVES_IN": False,
}
PERSON_FAMILIES = ("PARENT_OF", "SIBLING_OF", "SPOUSE_OF", "FRIEND_OF")

_ONSETS = ["Br", "Qu", "Th", "V", "Z", "Ors", "Kel", "Dr", "Yv", "Ez", "Sk", "Gw", "Pr", "Tr", "Ul", "Fen"]
_VOWELS = ["a", "e", "i", "o", "y", "ae", "ia", "ou"]
_CODAS = ["vane", "lith", "ndor", "skel", "rrow", "thra", "mira", "zek", "llan", "veth", "ssa", "rick"]
_SURNAME_ENDS = ["holt", "wick", "mere", "thorne", "vary", "dane", "ström", "ley", "gard", "by"]
_PLACE_ENDS = ["haven", "mouth", "ford", "wick", "bridge"]
_ORG_KINDS = ["Labs", "Mutual", "Ltd", "Logistics", "Systems"]
_SYSTEM_KINDS = ["DNS box", "build server", "payroll database", "mail relay", "VPN gateway", "backup array"]
_JOBS = [
    "florist",
    "luthier",
    "glassblower",
    "actuary",
    "ferry pilot",
    "cartographer",
    "beekeeper",
    "locksmith",
]
_PET_NAMES = ["Pim", "Tock", "Suki", "Wibble", "Nutmeg", "Bramble", "Figo", "Lulu"]
_PETS = ["tabby cat", "greyhound", "tortoise", "parrot", "ferret", "collie"]


@dataclass
class Entity:
    name: str
    type: str
    first: str = ""
    gender: str = ""  # Person: "f" or "m"

    @property
    def key(self) -> str:
        return canonical_key(self.name)

    @property
    def short(self) -> str:
        """What the text may call it: a person's first name, else the whole name."""
        return self.first or self.name


@dataclass
class Relation:
    subject: str
    predicate: str
    object: str
    files: list[str] = field(default_factory=list)

    @property
    def symmetric(self) -> bool:
        return FAMILIES[self.predicate]


@dataclass
class World:
    owner: Entity
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    attributes: list[dict] = field(default_factory=list)
    families: list[dict] = field(default_factory=list)
    teams: list[dict] = field(default_factory=list)
    files: dict[str, str | bytes] = field(default_factory=dict)
    chat: list[dict] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)

    def add(self, e: Entity) -> Entity:
        self.entities[e.name] = e
        return e

    def relate(self, subject: Entity, predicate: str, obj: Entity) -> Relation:
        for r in self.relations:
            same = (r.subject, r.object) == (subject.name, obj.name)
            if r.predicate == predicate and (
                same or (r.symmetric and (r.object, r.subject) == (subject.name, obj.name))
            ):
                return r
        r = Relation(subject.name, predicate, obj.name)
        self.relations.append(r)
        return r

    def find(self, predicate: str, subject: str | None = None, obj: str | None = None) -> list[Relation]:
        return [
            r
            for r in self.relations
            if r.predicate == predicate
            and (subject is None or r.subject == subject)
            and (obj is None or r.object == obj)
        ]

    def stated(self, path: str, *relations: Relation) -> None:
        for r in relations:
            if path not in r.files:
                r.files.append(path)


class Names:
    """Invented, unique names: first names, surnames, places, organisations, systems."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def _unique(self, make) -> str:
        while True:
            name = make()
            if name.casefold() not in self.used and 4 <= len(name) <= 12:
                self.used.add(name.casefold())
                return name

    def first(self) -> str:
        r = self.rng
        return self._unique(lambda: r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_CODAS))

    def surname(self) -> str:
        r = self.rng
        return self._unique(lambda: r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_SURNAME_ENDS))

    def place(self) -> str:
        r = self.rng
        return self._unique(lambda: r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_PLACE_ENDS))

    def word(self) -> str:
        r = self.rng
        return self._unique(lambda: r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_CODAS))


def _pronoun(p: Entity) -> tuple[str, str, str]:
    """(subject, object, possessive) pronouns."""
    return ("she", "her", "her") if p.gender == "f" else ("he", "him", "his")


def _child_word(p: Entity) -> str:
    return "daughter" if p.gender == "f" else "son"


def _sibling_word(p: Entity) -> str:
    return "sister" if p.gender == "f" else "brother"


def _spouse_word(p: Entity) -> str:
    return "wife" if p.gender == "f" else "husband"


def _list(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def build_world(size: int, seed: int) -> World:
    """The people, organisations and places of a corpus of `size` families."""
    rng = random.Random(seed)
    names = Names(rng)
    owner = Entity(f"{names.first()} {names.surname()}", "Person", gender=rng.choice("fm"))
    owner.first = owner.name.split()[0]
    world = World(owner)
    world.add(owner)
    places = [world.add(Entity(names.place(), "Place")) for _ in range(max(2, size))]
    jobs = rng.sample(_JOBS, len(_JOBS))

    def person(surname: str, gender: str) -> Entity:
        first = names.first()
        return world.add(Entity(f"{first} {surname}", "Person", first=first, gender=gender))

    for _ in range(size):
        surname = names.surname()
        mother, father = person(surname, "f"), person(surname, "m")
        children = [person(surname, rng.choice("fm")) for _ in range(rng.choice((2, 3)))]
        home = rng.choice(places)
        world.relate(mother, "SPOUSE_OF", father)
        for parent in (mother, father):
            world.relate(parent, "LIVES_IN", home)
            for child in children:
                world.relate(parent, "PARENT_OF", child)
        for i, a in enumerate(children):
            for b in children[i + 1 :]:
                world.relate(a, "SIBLING_OF", b)
        world.families.append(
            {"surname": surname, "parents": [mother, father], "children": children, "home": home}
        )
    # The eldest child of one family marries the youngest of the next: in-laws across families.
    for one, two in zip(world.families, world.families[1:], strict=False):
        a, b = one["children"][0], two["children"][-1]
        world.relate(a, "SPOUSE_OF", b)
        world.relate(a, "LIVES_IN", rng.choice(places))
    adults = [c for f in world.families for c in f["children"]] + [f["parents"][1] for f in world.families]
    rng.shuffle(adults)
    # Employers, two teams each, a manager and members per team, a system each team runs.
    for _ in range(max(2, size - 1)):
        org = world.add(Entity(f"{names.word()} {rng.choice(_ORG_KINDS)}", "Org"))
        for _ in range(2):
            if len(adults) < 2:
                break
            team = world.add(Entity(f"{names.word()} Team", "Org"))
            system_kind = rng.choice(_SYSTEM_KINDS)
            system = world.add(Entity(names.word(), "Topic"))
            manager, members = (
                adults.pop(),
                [adults.pop() for _ in range(min(len(adults), rng.choice((1, 2))))],
            )
            world.relate(manager, "MANAGES", team)
            world.relate(team, "RUNS", system)
            for p in [manager, *members]:
                world.relate(p, "WORKS_AT", org)
            for p in members:
                world.relate(p, "MEMBER_OF", team)
            world.teams.append(
                {
                    "org": org,
                    "team": team,
                    "system": system,
                    "kind": system_kind,
                    "manager": manager,
                    "members": members,
                }
            )
    # Friendships: the owner's friends (one per family) and a few across families.
    people = [p for f in world.families for p in f["parents"] + f["children"]]
    for f in world.families:
        world.relate(owner, "FRIEND_OF", rng.choice(f["parents"] + f["children"]))
    for _ in range(size):
        a, b = rng.sample(people, 2)
        if a.name.split()[1] != b.name.split()[1]:
            world.relate(a, "FRIEND_OF", b)
    for i, p in enumerate(rng.sample(people, min(len(people), len(jobs)))):
        world.attributes.append({"entity": p.name, "attribute": "job", "value": jobs[i], "files": []})
    return world


# -- rendering ---------------------------------------------------------------------------------


def _family_note(world: World, rng: random.Random, family: dict, day: datetime) -> None:
    mother, father = family["parents"]
    children, home = family["children"], family["home"]
    path = f"notes/family-{canonical_key(family['surname']).replace(' ', '-')}.md"
    lines = []
    if rng.random() < 0.5:
        lines += [
            "---",
            f"date: {day:%Y-%m-%d}",
            "people:",
            *[f"  - {p.name}" for p in (mother, father, *children)],
            "---",
            "",
        ]
    lines.append(f"# The {family['surname']} family\n")
    spouse = world.find("SPOUSE_OF", mother.name, father.name)
    opening = rng.choice(
        [
            f"{mother.name} and {father.name} have been married for thirty years.",
            f"{mother.name} is married to {father.name}; they met at a ceilidh.",
            f"{father.name}'s wife is {mother.name}.",
        ]
    )
    lines.append(opening)
    world.stated(path, *spouse)
    kid_names = [c.first for c in children]
    style = rng.randrange(3)
    if style == 0:
        lines.append(f"They have {len(children)} children: {_list([c.name for c in children])}.")
    elif style == 1:
        for c in children:
            lines.append(f"{c.name} is their {_child_word(c)}.")
    else:
        lines.append(f"{mother.first} has {len(children)} kids with {father.first}.")
        lines.append(f"Their names are {_list([c.name for c in children])}.")
    world.stated(
        path,
        *[
            r
            for parent in (mother, father)
            for c in children
            for r in world.find("PARENT_OF", parent.name, c.name)
        ],
    )
    a, b = children[0], children[1]
    lines.append(
        rng.choice(
            [
                f"{a.first} and {b.first} are siblings and fight about everything.",
                f"{a.first} has a younger {_sibling_word(b)}. {_pronoun(b)[0].capitalize()} is {b.first}.",
                f"{b.first} is {a.first}'s {_sibling_word(b)}.",
            ]
        )
    )
    world.stated(path, *world.find("SIBLING_OF", a.name, b.name))
    if len(kid_names) == 3:
        c = children[2]
        lines.append(f"{c.first} is the youngest; {_pronoun(c)[0]} adores {a.first} and {b.first}.")
        world.stated(
            path, *world.find("SIBLING_OF", a.name, c.name), *world.find("SIBLING_OF", b.name, c.name)
        )
    lines.append(
        rng.choice(
            [
                f"{mother.first} and {father.first} live in {home.name}.",
                f"The family home is in {home.name}, where {mother.first} and {father.first} still live.",
            ]
        )
    )
    world.stated(
        path, *world.find("LIVES_IN", mother.name, home.name), *world.find("LIVES_IN", father.name, home.name)
    )
    world.files[path] = "\n".join(lines) + "\n"


def _person_note(world: World, rng: random.Random, p: Entity) -> None:
    path = f"notes/people/{canonical_key(p.name).replace(' ', '-')}.md"
    subj, _, poss = _pronoun(p)
    lines = [f"# {p.name}\n"]
    for a in world.attributes:
        if a["entity"] == p.name:
            lines.append(
                rng.choice([f"{p.first} works as a {a['value']}.", f"By trade {p.first} is a {a['value']}."])
            )
            a["files"].append(path)
    for r in world.find("LIVES_IN", p.name):
        lines.append(
            rng.choice(
                [f"{subj.capitalize()} lives in {r.object}.", f"{p.first} moved to {r.object} years ago."]
            )
        )
        world.stated(path, r)
    pet = rng.choice(_PETS)
    pet_name = rng.choice(_PET_NAMES)
    lines.append(f"{poss.capitalize()} {pet} is called {pet_name}.")
    world.attributes.append(
        {"entity": p.name, "attribute": "pet", "value": f"{pet} {pet_name}", "files": [path]}
    )
    for r in world.relations:
        if (
            r.predicate == "FRIEND_OF"
            and p.name in (r.subject, r.object)
            and world.owner.name not in (r.subject, r.object)
        ):
            other = world.entities[r.object if r.subject == p.name else r.subject]
            lines.append(
                rng.choice(
                    [
                        f"{p.first} and {other.name} are old friends.",
                        f"{subj.capitalize()} is close friends with {other.name}.",
                    ]
                )
            )
            world.stated(path, r)
    for r in world.find("SPOUSE_OF", p.name) + world.find("SPOUSE_OF", None, p.name):
        other = world.entities[r.object if r.subject == p.name else r.subject]
        if other.name.split()[1] != p.name.split()[1]:
            lines.append(
                rng.choice(
                    [
                        f"{p.first} married {other.name} last spring.",
                        f"{poss.capitalize()} {_spouse_word(other)} is {other.name}.",
                    ]
                )
            )
            world.stated(path, r)
    world.files[path] = "\n".join(lines) + "\n"


def _address(p: Entity) -> str:
    return f"{p.name} <{canonical_key(p.name).replace(' ', '.')}@example.org>"


def _mail(
    world: World,
    path: str,
    sender: Entity,
    to: list[Entity],
    cc: list[Entity],
    subject: str,
    body: str,
    day: datetime,
) -> None:
    msg = EmailMessage()
    msg["From"] = _address(sender)
    msg["To"] = ", ".join(_address(p) for p in to)
    if cc:
        msg["Cc"] = ", ".join(_address(p) for p in cc)
    msg["Subject"] = subject
    msg["Date"] = format_datetime(day)
    msg["Message-ID"] = f"<{canonical_key(path).replace('/', '.')}@example.org>"
    msg.set_content(body)
    world.files[path] = bytes(msg)


def _team_mail(world: World, rng: random.Random, t: dict, n: int, day: datetime) -> None:
    path = f"mail/{n:03d}-team.eml"
    m, members, team, org, system = t["manager"], t["members"], t["team"], t["org"], t["system"]
    greet = _list([p.first for p in members])
    style = rng.randrange(3)
    if style == 0:
        body = (
            f"Hi {greet},\n\nAs your manager on the {team.name} I want to thank you for the last quarter. "
            f"The {team.name} runs {system.name}, our {t['kind']}, and it did not go down once.\n\n"
            f"Everyone at {org.name} noticed.\n\n{m.first}"
        )
    elif style == 1:
        body = (
            f"Dear all,\n\n{system.name} (the {t['kind']}) is ours to keep alive: the {team.name} operates it. "
            f"I lead the {team.name}, so questions about it come to me.\n\n"
            f"{_list([p.name for p in members])} {'is' if len(members) == 1 else 'are'} on the team. "
            f"Welcome to {org.name}!\n\n{m.first}"
        )
    else:
        body = (
            f"Hello {greet},\n\nA reminder from your team lead: the {team.name} maintains {system.name}, "
            f"the {t['kind']} at {org.name}. Please keep the runbook current.\n\n{m.name}, manager, {team.name}"
        )
    _mail(world, path, m, members, [], f"{team.name}: {system.name}", body, day)
    world.stated(path, *world.find("MANAGES", m.name, team.name), *world.find("RUNS", team.name, system.name))
    for p in [m, *members]:
        world.stated(path, *world.find("WORKS_AT", p.name, org.name))
    for p in members:
        if p.first in body or p.name in body:
            world.stated(path, *world.find("MEMBER_OF", p.name, team.name))


def _wedding_mail(world: World, rng: random.Random, r: Relation, n: int, day: datetime) -> None:
    a, b = world.entities[r.subject], world.entities[r.object]
    parent = next(world.entities[x.subject] for x in world.find("PARENT_OF", None, a.name))
    path = f"mail/{n:03d}-news.eml"
    body = rng.choice(
        [
            f"Dear {world.owner.first},\n\nWonderful news: my {_child_word(a)} {a.first} married {b.name} on Saturday. "
            f"{_pronoun(b)[0].capitalize()} is the kindest person.\n\nLove,\n{parent.first}",
            f"{world.owner.first},\n\n{a.first} and {b.name} tied the knot! We are so proud of our {_child_word(a)}.\n\n{parent.name}",
        ]
    )
    _mail(world, path, parent, [world.owner], [b], f"{a.first} and {b.first}", body, day)
    world.stated(path, r, *world.find("PARENT_OF", parent.name, a.name))


def _chat(world: World, rng: random.Random, friend: Entity, n: int, start: datetime) -> None:
    conv = f"people-{n}"
    owner = world.owner
    lines: list[tuple[Entity, str]] = [
        (owner, rng.choice([f"Hey {friend.first}!", "Morning! Coffee later?"]))
    ]
    lines.append((friend, rng.choice(["Hi! Long week.", "Sure, if I survive this week."])))
    stated: list[Relation] = []
    for r in world.find("SIBLING_OF", friend.name) + world.find("SIBLING_OF", None, friend.name):
        sib = world.entities[r.object if r.subject == friend.name else r.subject]
        lines.append(
            (
                friend,
                rng.choice(
                    [
                        f"My {_sibling_word(sib)} {sib.first} is visiting.",
                        f"{sib.first}, my {_sibling_word(sib)}, says hi.",
                    ]
                ),
            )
        )
        stated.append(r)
        break
    for r in world.find("WORKS_AT", friend.name):
        lines.append((owner, f"How is it going at {r.object}?"))
        lines.append(
            (friend, rng.choice(["Busy. We shipped the new release.", "Same as ever, too many meetings."]))
        )
        stated.append(r)
    friendship = world.find("FRIEND_OF", owner.name, friend.name)
    lines.append(
        (
            owner,
            rng.choice(
                ["You're a good friend, you know that?", "Glad we're still friends after all these years."]
            ),
        )
    )
    stated += friendship
    sent = start
    for sender, text in lines:
        sent += timedelta(minutes=rng.randrange(1, 20))
        world.chat.append(
            {
                "conversation_id": conv,
                **(
                    {"conversation_title": friend.name}
                    if not any(m["conversation_id"] == conv for m in world.chat)
                    else {}
                ),
                "message_id": f"{conv}-{len([m for m in world.chat if m['conversation_id'] == conv]) + 1}",
                "sender": sender.name,
                "sent_at": sent.isoformat(),
                "text": text,
                **({"is_owner": True} if sender is owner else {}),
            }
        )
    world.stated(CHATS, *stated)


def render(world: World, seed: int) -> None:
    """Write every file of the world into world.files and world.chat."""
    rng = random.Random(seed * 7919 + 1)
    day = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    for f in world.families:
        _family_note(world, rng, f, day)
        day += timedelta(days=rng.randrange(3, 20))
    spoken = {
        p.name for f in world.families for p in f["parents"][:1] + f["children"][:1] + f["children"][-1:]
    }
    for name in sorted(spoken):
        _person_note(world, rng, world.entities[name])
    n = 1
    for t in world.teams:
        _team_mail(world, rng, t, n, day)
        day += timedelta(days=rng.randrange(2, 9))
        n += 1
    for r in world.relations:
        if r.predicate == "SPOUSE_OF" and r.subject.split()[1] != r.object.split()[1]:
            _wedding_mail(world, rng, r, n, day)
            day += timedelta(days=rng.randrange(2, 9))
            n += 1
    for i, r in enumerate(world.find("FRIEND_OF", world.owner.name), start=1):
        _chat(world, rng, world.entities[r.object], i, day)
        day += timedelta(days=rng.randrange(2, 9))


# -- questions -------------------------------------------------------------------------------------


def _hop(r: Relation) -> dict:
    return {"subject": r.subject, "predicate": r.predicate, "object": r.object, "files": list(r.files)}


def _aliases(e: Entity) -> list[str]:
    return [e.name] + ([e.first] if e.first else [])


def ask(world: World) -> None:
    """Two-hop questions over stated relations (each hop stated in some file)."""
    qs = world.questions

    def add(kind: str, question: str, answer: Entity, anchor: str, hops: list[Relation]) -> None:
        if not all(h.files for h in hops):
            return
        same = next((q for q in qs if q["question"] == question), None)
        if same is not None:  # two right answers ("the daughter-in-law" of a parent of two married children)
            same["aliases"] += [a for a in _aliases(answer) if a not in same["aliases"]]
            return
        qs.append(
            {
                "id": f"q{len(qs) + 1}",
                "kind": kind,
                "question": question,
                "answer": answer.name,
                "aliases": _aliases(answer),
                "anchor": anchor,
                "hops": [_hop(h) for h in hops],
            }
        )

    jobs = {a["entity"]: a["value"] for a in world.attributes if a["attribute"] == "job" and a["files"]}
    for married in world.find("SPOUSE_OF"):
        a, b = world.entities[married.subject], world.entities[married.object]
        if a.name.split()[1] == b.name.split()[1]:
            continue
        for child, spouse in ((a, b), (b, a)):
            for up in world.find("PARENT_OF", None, child.name):
                parent = world.entities[up.subject]
                word = f"{_child_word(spouse)}-in-law"
                add("two-hop", f"Who is the {word} of {parent.name}?", spouse, parent.name, [up, married])
                if parent.name in jobs:
                    add(
                        "attribute",
                        f"Who is the {word} of the person who works as a {jobs[parent.name]}?",
                        spouse,
                        parent.name,
                        [up, married],
                    )
            for sib in world.find("SIBLING_OF", child.name) + world.find("SIBLING_OF", None, child.name):
                other = world.entities[sib.object if sib.subject == child.name else sib.subject]
                add(
                    "two-hop",
                    f"Who is the {_sibling_word(other)}-in-law of {spouse.name}?",
                    other,
                    spouse.name,
                    [married, sib],
                )
    for t in world.teams:
        runs = world.find("RUNS", t["team"].name, t["system"].name)
        manages = world.find("MANAGES", t["manager"].name, t["team"].name)
        add(
            "two-hop",
            f"Who manages the team that runs {t['system'].name}, the {t['kind']}?",
            t["manager"],
            t["system"].name,
            runs + manages,
        )
        for sib in world.find("SIBLING_OF", t["manager"].name) + world.find(
            "SIBLING_OF", None, t["manager"].name
        ):
            other = world.entities[sib.object if sib.subject == t["manager"].name else sib.subject]
            add("two-hop", f"Which company does the {_sibling_word(t['manager'])} of {other.name} work for?", t["org"], other.name,
                [sib, *world.find("WORKS_AT", t["manager"].name, t["org"].name)])  # fmt: skip


def generate(size: int = 3, seed: int = 16) -> World:
    world = build_world(size, seed)
    render(world, seed)
    ask(world)
    return world


def ground_truth(world: World) -> dict:
    return {
        "owner": world.owner.name,
        "entities": [{"name": e.name, "type": e.type, "key": e.key} for e in world.entities.values()],
        "relations": [dict(asdict(r), symmetric=r.symmetric) for r in world.relations if r.files],
        "attributes": [a for a in world.attributes if a["files"]],
    }


def write(world: World, out: Path) -> None:
    """The corpus files, ground_truth.json and questions.jsonl under out (the ground truth and
    questions outside the corpus folder `out/corpus`, so an ingest of it reads no answers)."""
    corpus = out / "corpus"
    for path, content in world.files.items():
        target = corpus / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    (out / CHATS).write_text("".join(json.dumps(m) + "\n" for m in world.chat), encoding="utf-8")
    (out / GROUND_TRUTH).write_text(json.dumps(ground_truth(world), indent=1) + "\n", encoding="utf-8")
    (out / QUESTIONS).write_text("".join(json.dumps(q) + "\n" for q in world.questions), encoding="utf-8")


def summary(world: World, out: Path) -> str:
    """One line: what `write` put under out."""
    truth = ground_truth(world)
    return (
        f"{len(world.files)} files and {len(world.chat)} chat messages under {out}: "
        f"{len(truth['entities'])} entities, {len(truth['relations'])} relations stated, "
        f"{len(world.questions)} questions"
    )
