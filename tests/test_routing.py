"""The learned router (plpy/routing.py) as plain Python: counting, training, the posterior, and
where it stands in the authority order."""

import random

import pytest
import routing

WORKSPACES = ["administrative", "creative", "personal", "technical"]
KEYWORDS = {
    "technical": ["postgres", "vacuum", "index", "server"],
    "creative": ["poem", "stanza", "moon"],
    "personal": ["friend", "walk", "dinner"],
    "administrative": ["invoice", "tax", "insurance"],
}
RULES = [{"folder": "scores", "workspace": "administrative"}]

# Topics the keyword lists know nothing of: cricket reports and bread recipes.
POOLS = {
    "personal": [
        "wicket",
        "bowler",
        "innings",
        "batsman",
        "umpire",
        "crease",
        "boundary",
        "overs",
        "pitch",
        "stumps",
        "spinner",
    ],
    "creative": [
        "dough",
        "yeast",
        "flour",
        "knead",
        "oven",
        "crust",
        "proof",
        "loaf",
        "sourdough",
        "starter",
        "bake",
    ],
}
FILLER = [
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "was",
    "with",
    "on",
    "for",
    "it",
    "at",
    "by",
    "this",
    "that",
    "then",
]


def _text(rng, workspace, words=60):
    pool = POOLS[workspace]
    return " ".join(rng.choice(pool) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(words))


def _model(documents, min_documents=3, threshold=0.99):
    trained = routing.train_router(documents, 5000, 20000, 3)
    return {
        **trained,
        "max_chars": 20000,
        "term_cap": 3,
        "threshold": threshold,
        "min_documents": min_documents,
    }


def _route(text, model, path="inbox/x.md", frontmatter=None, review=None, forced=None):
    return routing.route(
        path, text, frontmatter or {}, review, forced, WORKSPACES, RULES, KEYWORDS, 0.6, model
    )


def test_terms_are_capped_per_document_and_read_from_the_start():
    assert routing.router_terms("Wicket wicket WICKET wicket, bowler", 100, 3) == {"wicket": 3, "bowler": 1}
    assert routing.router_terms("wicket bowler", 6, 3) == {"wicket": 1}


def test_training_keeps_words_of_two_documents_or_more_up_to_the_vocabulary():
    model = routing.train_router(
        [("personal", "wicket bowler rare"), ("personal", "wicket bowler"), ("creative", "wicket dough")],
        2,
        100,
        3,
    )
    assert model["terms"] == {"wicket": {"creative": 1, "personal": 2}, "bowler": {"personal": 2}}
    assert model["classes"] == {
        "creative": {"documents": 1, "terms": 1},
        "personal": {"documents": 2, "terms": 4},
    }


def test_learned_router_beats_the_keyword_lists_on_a_seeded_corpus():
    rng = random.Random(3)
    seeds = [(ws, _text(rng, ws)) for ws in POOLS for _ in range(5)]
    rest = [(ws, _text(rng, ws)) for ws in POOLS for _ in range(40)]
    model = _model(seeds)
    learned = [_route(text, model) for _, text in rest]
    keywords = [_route(text, None) for _, text in rest]
    right = sum(d["workspace"] == ws for d, (ws, _) in zip(learned, rest, strict=True))
    assert right >= 0.95 * len(rest)
    assert all(d["method"] == "learned" for d in learned)
    assert sum(d["workspace"] == ws for d, (ws, _) in zip(keywords, rest, strict=True)) == 0
    assert all(d["workspace"] is None for d in keywords)


def test_learned_route_names_its_words_and_quarantines_below_its_threshold():
    rng = random.Random(5)
    model = _model([(ws, _text(rng, ws)) for ws in POOLS for _ in range(5)])
    d = _route("wicket bowler umpire innings", model)
    assert (d["workspace"], d["method"]) == ("personal", "learned")
    assert d["reasons"][0].startswith("learned: personal (") and "wicket" in d["reasons"][0]
    assert [c["workspace"] for c in d["candidates"]] == ["personal", "creative"]
    # Evidence for both sides, or none at all: not sure, so quarantine with the learned candidates.
    for text in ("wicket dough", "nothing either side knows"):
        doubt = _route(text, model)
        assert doubt["workspace"] is None and doubt["method"] == "learned"
        assert doubt["confidence"] < 0.99 and "below threshold 0.99" in doubt["reasons"][-1]


def test_the_keyword_lists_route_until_two_workspaces_have_enough_documents():
    rng = random.Random(7)
    seeds = [(ws, _text(rng, ws)) for ws in POOLS for _ in range(2)]
    model = _model(seeds, min_documents=3)
    assert routing.learned_candidates("wicket", model, WORKSPACES) is None
    d = _route("postgres vacuum index server tuning", model)
    assert (d["workspace"], d["method"]) == ("technical", "classifier")
    # A workspace that no longer exists is left out of the model.
    model = _model([(ws, _text(rng, ws)) for ws in POOLS for _ in range(3)])
    assert routing.learned_candidates("wicket", model, ["personal", "technical"]) is None


@pytest.mark.parametrize(
    ("kwargs", "method"),
    [
        ({"frontmatter": {"workspace": "technical"}}, "frontmatter"),
        ({"review": {"decision": "reassigned", "workspace": "administrative"}}, "review"),
        ({"forced": "technical"}, "forced"),
        ({"path": "scores/x.md"}, "folder"),
    ],
)
def test_frontmatter_review_forced_and_folders_never_ask_the_learned_router(kwargs, method):
    rng = random.Random(9)
    model = _model([(ws, _text(rng, ws)) for ws in POOLS for _ in range(5)])
    text = "wicket bowler umpire innings boundary"
    assert _route(text, model)["workspace"] == "personal"
    d = _route(text, model, **kwargs)
    assert d["method"] == method and d["workspace"] in ("technical", "administrative")
    assert not d["candidates"]
