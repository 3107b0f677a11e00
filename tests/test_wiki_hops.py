"""bench/wiki_hops's world and questions: every relation is stated on a page in one of
people_wiki's phrasings and nothing the world does not hold is, and each question's answer is
where its words lead."""

from __future__ import annotations

import random
import re

from bench import people_wiki as wiki
from bench import wiki_hops


def world_and_pages(seed: int):
    rng = random.Random(seed)
    world = wiki_hops.make_world(rng, 5)
    return rng, world, wiki_hops.pages(rng, world)


def test_every_relation_is_stated_once_and_nothing_else():
    _, world, pages = world_and_pages(3)
    text = "\n".join(pages.values())
    truth = world.relations()
    for p in world.people:  # every person has a page, under their name
        assert f"# {p.full}\n" in pages[p.full.replace(" ", "_") + ".md"]
    rng = random.Random(3)
    stated = set()
    for kind, a, b in wiki_hops.statements(world):
        item = wiki_hops.state(rng, world, kind, a, b, world.by_name[a])
        keys = {wiki.key(*wiki_hops.full_names(t, world)) for t in item.truth}
        assert keys <= truth, item.text
        stated |= keys
    assert stated == truth
    assert any(t.startswith("---\n") for t in pages.values()) and any(
        t.startswith("# ") for t in pages.values()
    )
    assert "Unfit" not in text


def test_a_question_asks_for_the_end_of_its_walk():
    rng, world, _ = world_and_pages(5)
    qs = wiki_hops.questions(rng, world, 40)
    assert {q.hops for q in qs} == {1, 2, 3, 4}
    assert len({q.question for q in qs}) == len(qs)
    words = {w: (hop, sex) for hop, by_sex in wiki_hops.HOP_WORDS.items() for sex, w in by_sex.items()}
    asked = 0
    for q in qs:
        m = re.fullmatch(
            r"(?:Who is|What is the name of|Name) the (\w+) of (.+)[?.]", q.question
        ) or re.fullmatch(r"(?:Who is|What is the name of|Name) (.+)'s (\w+)[?.]", q.question)
        if q.hops == 1 and m:
            word, name = m.groups() if m.group(1) in words else m.groups()[::-1]
            hop, sex = words[word]
            reached = wiki_hops.reach(world, world.by_name[name], hop)
            assert [p.full for p in reached if p.sex == sex] == [q.answer], q.question
            asked += 1
    assert asked >= 3
    # a walk never ends nearer than its hops: the wife of one's father is no two-hop answer
    for _ in range(50):
        start = rng.choice(world.people)
        path = wiki_hops.walk(rng, world, start, 2)
        if path:
            near = {q.full for hop in wiki_hops.HOP_WORDS for q in wiki_hops.reach(world, start, hop)}
            assert path[-1][1].full not in near | {start.full}
