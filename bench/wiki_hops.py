"""Benchmark: questions of one to four hops over a people wiki, the packet against BM25 and vector top-5.

A seeded world of families (three generations, marriages across families, friendships, an
employer and a city each) is written as one Markdown page per person, half with frontmatter,
each relation stated once, on the page of one of its two people, in one of bench.people_wiki's
phrasings (at least ten a relation: "X's mother is Y", "the children of Y are A, B and C", "A,
B's younger brother, ...", "Y married X in 1998", ...); a page also has its person's birth
year, trade and hobbies. The pages are ingested as `exo ingest VAULT --workspace personal` does
into a scratch database and the worker drains its queues with no chat model (the extraction a
CPU runs: the pattern pass, and spaCy's parse where the pipeline is installed), as a first run
on one's own folder would.

The questions walk the world from a person through one to four relations, each of which has one
answer, and ask for its end in several forms: "Who is the mother of X?", "Who is X's husband's
sister?", "Who is the father of X's wife?", "Where does the brother of X's mother live?", "Which
company employs X's grandfather?", with the kinship words that stand for two hops (grandmother,
mother-in-law, sister-in-law, aunt, nephew). A method holds the answer when its text holds the
answer's full name (a city's or a company's name).

Per question: exo.context_packet_json as exo_reader (its own budget), BM25 top-k and exact vector
top-k over the chunks (exocortex.eval.shadow), with their tokens; printed per number of hops, with
the share of the world's relations the extraction found.

    .venv/bin/python -m bench.wiki_hops [--seed 7] [--families 5] [--questions 80] [--k 5] [--show N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench import people_wiki as wiki
from bench.scratch import ingest_vault
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval import shadow
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.relation_paths import predicate_family
from tests.support.models import free_ports

OWNER = "Sam Reader"
APP = "exo-bench-wiki-hops"
# the predicate each kind of people_wiki's phrasings states
PREDICATE_OF = {
    "parent": "PARENT_OF",
    "sibling": "SIBLING_OF",
    "spouse": "SPOUSE_OF",
    "friend": "FRIEND_OF",
    "work": "WORKS_AT",
    "residence": "LIVES_IN",
}
TRADES = ["architect", "teacher", "nurse", "carpenter", "economist", "pilot", "chemist", "librarian"]


class Unfit(Exception):
    """A phrasing asked the world for someone it does not have."""


class WorldCast(wiki.Cast):
    """A phrasing's cast drawn from the world: new() gives the given people in turn (the first
    of a wanted sex), org() and city() the subject's own; a phrasing wanting more people fails."""

    def __init__(self, rng: random.Random, subject: wiki.Person, pool: list[wiki.Person], world: World):
        super().__init__(rng, subject)
        self.pool, self.world = list(pool), world

    def new(self, sex: str | None = None, family: bool = False) -> wiki.Person:
        for i, p in enumerate(self.pool):
            if sex is None or p.sex == sex:
                return self.pool.pop(i)
        raise Unfit

    def org(self) -> str:
        return self.world.employer[self.subject.full]

    def city(self) -> str:
        return self.world.city[self.subject.full]


@dataclass
class World:
    people: list[wiki.Person] = field(default_factory=list)
    by_name: dict[str, wiki.Person] = field(default_factory=dict)  # full name -> person
    parents: dict[str, list[wiki.Person]] = field(default_factory=lambda: defaultdict(list))
    children: dict[str, list[wiki.Person]] = field(default_factory=lambda: defaultdict(list))
    spouse: dict[str, wiki.Person] = field(default_factory=dict)
    friends: dict[str, list[wiki.Person]] = field(default_factory=lambda: defaultdict(list))
    employer: dict[str, str] = field(default_factory=dict)
    city: dict[str, str] = field(default_factory=dict)

    def siblings(self, p: wiki.Person) -> list[wiki.Person]:
        ps = self.parents.get(p.full)
        return [c for c in self.children[ps[0].full] if c.full != p.full] if ps else []

    def relations(self) -> set[tuple[str, str, str]]:
        """Every relation as people_wiki.key() writes it (names by name_key, symmetric ones sorted)."""
        out = set()
        for p in self.people:
            for k in self.children[p.full]:
                out.add(wiki.key("PARENT_OF", p.full, k.full))
            for s in self.siblings(p):
                out.add(wiki.key("SIBLING_OF", p.full, s.full))
            if p.full in self.spouse:
                out.add(wiki.key("SPOUSE_OF", p.full, self.spouse[p.full].full))
            for f in self.friends[p.full]:
                out.add(wiki.key("FRIEND_OF", p.full, f.full))
            out.add(wiki.key("WORKS_AT", p.full, self.employer[p.full]))
            out.add(wiki.key("LIVES_IN", p.full, self.city[p.full]))
        return out


def make_world(rng: random.Random, families: int) -> World:
    """Couples of `families` families (a last name each), two or three children each, married
    across families where a pair fits, one or two grandchildren of each such couple, a friend
    for every third person; first names never repeat."""
    names = {sex: rng.sample(wiki.FIRST[sex], len(wiki.FIRST[sex])) for sex in "fm"}
    lasts = rng.sample(wiki.LAST, families)
    w = World()

    def born(sex: str, last: str) -> wiki.Person:
        p = wiki.Person(names[sex].pop(), last, sex)
        w.people.append(p)
        w.by_name[p.full] = p
        w.employer[p.full] = rng.choice(wiki.ORGS)
        w.city[p.full] = rng.choice(wiki.CITIES)
        return p

    def marry(a: wiki.Person, b: wiki.Person) -> None:
        w.spouse[a.full], w.spouse[b.full] = b, a

    def have(mother: wiki.Person, father: wiki.Person, n: int) -> list[wiki.Person]:
        sexes = rng.sample("fm", 2) + [
            rng.choice("fm") for _ in range(n - 2)
        ]  # a son and a daughter from two
        kids = [born(sex, father.last) for sex in sexes[:n]]
        for k in kids:
            w.parents[k.full] = [mother, father]
            w.children[mother.full].append(k)
            w.children[father.full].append(k)
        return kids

    second = []
    for last in lasts:
        father, mother = born("m", last), born("f", last)
        marry(father, mother)
        second.append(have(mother, father, rng.choice([2, 3])))
    men = [p for kids in second for p in kids if p.sex == "m"]
    women = [p for kids in second for p in kids if p.sex == "f"]
    rng.shuffle(women)
    for man in men:
        wife = next((x for x in women if x.last != man.last and x.full not in w.spouse), None)
        if wife and len(names["f"]) > 2 and len(names["m"]) > 2:
            marry(man, wife)
            have(wife, man, rng.choice([1, 2]))
    for p in rng.sample(w.people, len(w.people) // 3):
        q = rng.choice([x for x in w.people if x.last != p.last])
        if q not in w.friends[p.full]:
            w.friends[p.full].append(q)
            w.friends[q.full].append(p)
    return w


def statements(world: World) -> list[tuple[str, str, str, wiki.Person]]:
    """(kind, subject, object, the page's person) of every relation once, on one of its ends'
    pages (work and residence on their person's)."""
    stated = []
    seen = set()
    for p in world.people:
        rows = [("parent", p.full, k.full) for k in world.children[p.full]]
        rows += [("sibling", p.full, s.full) for s in world.siblings(p)]
        rows += [("spouse", p.full, world.spouse[p.full].full)] if p.full in world.spouse else []
        rows += [("friend", p.full, f.full) for f in world.friends[p.full]]
        for kind, a, b in rows:
            k = (kind, *sorted((a, b))) if kind != "parent" else (kind, a, b)
            if k not in seen:
                seen.add(k)
                stated.append((kind, a, b))
        stated += [("work", p.full, world.employer[p.full]), ("residence", p.full, world.city[p.full])]
    return stated


def state(rng: random.Random, world: World, kind: str, a: str, b: str, page_of: wiki.Person) -> wiki.Item:
    """One phrasing of `kind` that states (a, b) and nothing the world does not hold."""
    truth = world.relations()
    subject, other = world.by_name[a], world.by_name.get(b)
    names = [n for n in wiki.PHRASINGS if n.startswith(kind + ":")]
    if subject.full != page_of.full:  # "She works at ..." only names the page's own person
        names = [n for n in names if "page's subject" not in n]
    for _ in range(200):
        name = rng.choice(names)
        pool = [other] if other else []
        if kind == "parent":  # the other parent, and the other children, for phrasings naming them
            pool += [world.spouse[a]] if a in world.spouse else []
            pool += [k for k in world.children[a] if k.full != b]
        elif kind == "sibling":
            pool += [s for s in world.siblings(subject) if s.full != b]
        cast = WorldCast(rng, subject, pool, world)
        try:
            item = wiki.PHRASINGS[name](cast)
        except Unfit:
            continue
        keys = [wiki.key(*full_names(t, world)) for t in item.truth]
        wanted = wiki.key(PREDICATE_OF[kind], a, b)
        if wanted in keys and all(k in truth for k in keys):
            item.phrasing = name
            return item
    raise RuntimeError(f"no phrasing of {kind} states {a} - {b}")


def full_names(t: tuple[str, str, str], world: World) -> tuple[str, str, str]:
    """A truth row's names made full (a phrasing may name a child by the first name alone)."""
    first = {p.first: p.full for p in world.people}
    return (t[0], first.get(t[1], t[1]), first.get(t[2], t[2]))


def pages(rng: random.Random, world: World) -> dict[str, str]:
    """{file name: Markdown} of every person's page."""
    items = defaultdict(list)
    by_name = world.by_name
    for kind, a, b in statements(world):
        page_of = (
            by_name[a] if kind in ("work", "residence") or rng.random() < 0.5 else by_name.get(b, by_name[a])
        )
        items[page_of.full].append(state(rng, world, kind, a, b, page_of).text)
    out = {}
    for p in world.people:
        sentences = items[p.full] + [f"{p.first} {rng.choice(wiki.HOBBIES)}."]
        rng.shuffle(sentences)
        blocks = [f"# {p.full}", f"{p.full} (born {rng.randint(1940, 2010)}) is a {rng.choice(TRADES)}."]
        for start in range(0, len(sentences), 3):
            run = sentences[start : start + 3]
            blocks.append("\n".join("- " + s for s in run) if rng.random() < 0.25 else " ".join(run))
        text = "\n\n".join(blocks) + "\n"
        if rng.random() < 0.5:
            text = f"---\ntitle: {p.full}\ntags: [people]\n---\n" + text
        out[p.full.replace(" ", "_") + ".md"] = text
    return out


# -- questions ---------------------------------------------------------------------------------------

# one hop: its word by the sex of whom it reaches (people_wiki's), and how to reach them (reach)
HOP_WORDS = {hop: wiki.KIN_WORDS[hop] for hop in ("parent", "child", "sibling", "spouse")}
# two hops said in one word, by the sex of the end
TWO_HOP_WORDS = {
    ("parent", "parent"): {"f": "grandmother", "m": "grandfather"},
    ("spouse", "parent"): {"f": "mother-in-law", "m": "father-in-law"},
    ("spouse", "sibling"): {"f": "sister-in-law", "m": "brother-in-law"},
    ("parent", "sibling"): {"f": "aunt", "m": "uncle"},
    ("sibling", "child"): {"f": "niece", "m": "nephew"},
}


def reach(world: World, p: wiki.Person, hop: str) -> list[wiki.Person]:
    if hop == "parent":
        return world.parents.get(p.full, [])
    if hop == "child":
        return world.children[p.full]
    if hop == "sibling":
        return world.siblings(p)
    return [world.spouse[p.full]] if p.full in world.spouse else []


def walk(
    rng: random.Random, world: World, start: wiki.Person, hops: int
) -> list[tuple[str, wiki.Person]] | None:
    """A walk of `hops` people relations from start, each step's word naming one person (the only
    one of that sex reached) who is `hops` steps from start and no nearer (the wife of one's
    father is one's mother: no two-hop question); None if there is none."""
    path, at, near = [], start, {start.full}
    for _ in range(hops):
        ring = {q.full for p in near for hop in HOP_WORDS for q in reach(world, world.by_name[p], hop)}
        steps = []
        for hop in HOP_WORDS:
            for q in reach(world, at, hop):
                same = [x for x in reach(world, at, hop) if x.sex == q.sex]
                if len(same) == 1 and q.full not in near:
                    steps.append((hop, q))
        if not steps:
            return None
        hop, at = rng.choice(steps)
        near |= ring
        path.append((hop, at))
    return path


def words_of(path: list[tuple[str, wiki.Person]], rng: random.Random) -> list[str]:
    """The relation words of a walk, nearest first; two steps become one word where English has it."""
    out, i = [], 0
    while i < len(path):
        if i + 1 < len(path) and (path[i][0], path[i + 1][0]) in TWO_HOP_WORDS and rng.random() < 0.5:
            out.append(TWO_HOP_WORDS[(path[i][0], path[i + 1][0])][path[i + 1][1].sex])
            i += 2
        else:
            out.append(HOP_WORDS[path[i][0]][path[i][1].sex])
            i += 1
    return out


def phrase(rng: random.Random, start: str, words: list[str], end: str) -> str:
    """The question: the chain of words as possessives, "of" phrases or both, asking for a person,
    where they live or whom they work for."""
    form = rng.choice(["of", "possessive", "mixed"]) if len(words) > 1 else rng.choice(["of", "possessive"])
    if not words:
        chain = start
    elif form == "of":
        chain = " of ".join(f"the {w}" for w in reversed(words)) + f" of {start}"
    elif form == "possessive":
        chain = f"{start}'s " + "'s ".join(words)
    else:  # the nearest words as possessives, the rest as "of" phrases
        cut = rng.randint(1, len(words) - 1)
        chain = (
            " of ".join(f"the {w}" for w in reversed(words[cut:]))
            + f" of {start}'s "
            + "'s ".join(words[:cut])
        )
    if end == "person":
        if not words:
            raise ValueError("a question for a person walks one hop at least")
        return rng.choice([f"Who is {chain}?", f"What is the name of {chain}?", f"Name {chain}."])
    if end == "city":
        return rng.choice([f"Where does {chain} live?", f"In which city does {chain} live?", f"Which city is {chain} based in?"])  # fmt: skip
    return rng.choice([f"Where does {chain} work?", f"Which company employs {chain}?", f"Who does {chain} work for?"])  # fmt: skip


@dataclass
class Question:
    hops: int
    question: str
    answer: str
    held: dict[str, bool] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    path: bool = False


def questions(rng: random.Random, world: World, n: int) -> list[Question]:
    """Up to n questions, a quarter of each number of hops (1-4) where the world gives them, each
    asked once."""
    out, asked = [], set()
    for hops in (1, 2, 3, 4):
        wanted = len(out) + n // 4
        for _ in range(n * 50):
            if len(out) == wanted:
                break
            end = rng.choice(["person", "person", "city", "work"])
            start = rng.choice(world.people)
            path = walk(rng, world, start, hops if end == "person" else hops - 1)
            if path is None:
                continue
            last = path[-1][1] if path else start
            answer = {"person": last.full, "city": world.city[last.full], "work": world.employer[last.full]}[
                end
            ]
            q = phrase(rng, start.full, words_of(path, rng), end)
            if q not in asked:
                asked.add(q)
                out.append(Question(hops, q, answer))
    return out


# -- running ---------------------------------------------------------------------------------------


def extracted(admin, world: World) -> tuple[int, int]:
    """(the world's relations the graph holds, of how many): each relation's predicate read by its
    family (plpy/relation_paths.predicate_family), its ends by people_wiki.key()."""
    truth = world.relations()
    found = set()
    for predicate, s, o in admin.execute(
        """select r.predicate, s.name, o.name from exo_private.relations r
           join exo_private.entities s on s.id = r.subject_id
           join exo_private.entities o on o.id = r.object_id"""
    ).fetchall():
        family = predicate_family(predicate)
        if family is not None:
            k = wiki.key(family[0], *((o, s) if family[1] else (s, o)))
            if k in truth:
                found.add(k)
    return len(found), len(truth)


def ask(admin, reader, q: Question, k: int, workspaces: list[str], model_id: int) -> None:
    sq = shadow.Question(q.question, (q.answer,))
    vector = shadow.embed_question(admin, q.question).get("vector")
    chunks, _ = shadow.run_bm25(admin, sq, k, workspaces)
    text = "\n\n".join(c.body for c in chunks)
    q.held["bm25"], q.tokens["bm25"] = shadow.holds(text, q.answer), shadow.estimate_tokens(text)
    if vector is not None:
        chunks, _ = shadow.run_vector(admin, sq, k, vector, model_id)
        text = "\n\n".join(c.body for c in chunks)
        q.held["vector"], q.tokens["vector"] = shadow.holds(text, q.answer), shadow.estimate_tokens(text)
    # the packet as a reader gets it, and within BM25's tokens (at least 200, the packet's floor)
    for method, budget in (("packet", 4000), ("packet@bm25", max(200, q.tokens["bm25"]))):
        packet, _ = shadow.run_packet(reader, sq, budget, vector)
        q.held[method], q.tokens[method] = shadow.holds(packet["text"], q.answer), packet["tokens"]
    q.path = any((p or {}).get("found") for p in (packet["report"].get("paths") or {}).values())


METHODS = ("packet", "packet@bm25", "bm25", "vector")


def report(qs: list[Question], k: int, show: int) -> None:
    print(
        f"\nanswer held, by hops (the packet at its own budget and at BM25's tokens; BM25 and vector top-{k}):"
    )
    print(
        f"  {'hops':>4s} {'questions':>9s}" + "".join(f"{m:>12s}" for m in METHODS) + f"{'path found':>12s}"
    )
    for hops in (1, 2, 3, 4, None):
        rs = [q for q in qs if hops is None or q.hops == hops]
        if not rs:
            continue
        cells = "".join(f"{sum(q.held.get(m, False) for q in rs):>12d}" for m in METHODS)
        label = "all" if hops is None else str(hops)
        print(f"  {label:>4s} {len(rs):>9d}{cells}{sum(q.path for q in rs):>12d}")
    print(
        "  mean tokens"
        + "".join(f"  {m} {statistics.mean(q.tokens.get(m, 0) for q in qs):.0f}" for m in METHODS)
    )
    for q in [q for q in qs if not q.held["packet"]][:show]:
        print(f"  missed ({q.hops} hops, path {q.path}, bm25 {q.held['bm25']}): {q.question} -> {q.answer}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--families", type=int, default=5)
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--show", type=int, default=0, help="print up to N questions the packet missed")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    world = make_world(rng, args.families)
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-wiki-hops-"))
    vault = run_dir / "vault"
    vault.mkdir()
    for name, text in pages(rng, world).items():
        (vault / name).write_text(text, encoding="utf-8")
    qs = questions(rng, world, args.questions)
    print(f"{len(world.people)} people, {len(world.relations())} relations, {len(qs)} questions "
          f"({', '.join(f'{h} hops: {sum(q.hops == h for q in qs)}' for h in (1, 2, 3, 4))})", flush=True)  # fmt: skip

    cfg = config.load()
    (port,) = free_ports(1)
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        with scratch_database(cfg, "bench_wiki_hops") as name:
            began = time.perf_counter()
            ingest_vault(
                cfg, name, f"http://127.0.0.1:{port}/v1", vault, OWNER, APP, queues=("embed", "extract")
            )
            with (
                connect(admin_url(cfg, name), APP, autocommit=True) as admin,
                connect(role_url(cfg, "exo_reader", name), APP, autocommit=True) as reader,
            ):
                found, total = extracted(admin, world)
                print(f"ingested, embedded and extracted in {time.perf_counter() - began:.0f} s; the graph "
                      f"holds {found} of the world's {total} relations", flush=True)  # fmt: skip
                (model_id,) = admin.execute("select exo_private.active_embedding_model()").fetchone()
                workspaces = shadow.lexical_workspaces(admin)
                for q in qs:
                    ask(admin, reader, q, args.k, workspaces, model_id)
    finally:
        services.down(cfg, run_dir=run_dir)
    report(qs, args.k, args.show)


if __name__ == "__main__":
    main()
