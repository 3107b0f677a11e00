"""plpy/search.py as plain Python: query material, deference, pools, the rank and the packet.

exo_private.retrieve inlines this module; these tests hold its promises without a database
(the SQL around it is tested in tests/test_search.py).
"""

import datetime
import itertools
import json
import math
import random
import re
import tempfile
from pathlib import Path

import pytest
import search
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from textnorm import canonical_key

# No .hypothesis cache in the repository (no example database, and its other caches go to
# the temporary directory); few examples keep the file fast.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "exocortex-hypothesis")
FAST = settings(max_examples=60, deadline=None, database=None)

TODAY = datetime.date(2026, 11, 29).toordinal()
WEIGHTS = {
    "stage": {"exact": 1.0, "lexical": 0.85, "capsules": 0.85, "graph": 0.7, "semantic": 0.75},
    "band": {"current": 1.0, "recent": 0.9, "archival": 0.75},
    "canonical": 1.25,
    "freshness_half_life_days": 1095,
    "freshness_floor": 0.6,
    "year_miss_per_year": 0.15,
    "lexical_share": 0.3,
}
PACKET = {"packet.max_chunks": 8, "packet.excerpt_chars": 600, "packet.min_relative_score": 0.3}
REPORT = {"rerank": {"backend": "deterministic"}, "archive": {"open": False, "why": None}, "degradations": []}
DEFERRED = [
    {"subject": "Alice Smith", "aliases": ["Ally", "A. Smith"]},
    {"subject": "Dad", "aliases": []},
]
# Words of chunk bodies; none occurs in a hint line or in the packet's own headings.
VOCAB = ["zebra", "quokka", "axolotl", "lemur", "okapi", "tapir", "gecko", "ibis", "marmot", "narwhal"]


def _candidate(chunk_id, score=1.0, body="zebra quokka.", **extra):
    written = extra.pop("written", datetime.date(2026, 1, 1))
    c = {
        "chunk_id": chunk_id,
        "document_id": 1000 + chunk_id,
        "workspace": "technical",
        "path": f"notes/doc{chunk_id}.md",
        "band": "current",
        "written_at": written.isoformat() if written else None,
        "written_ordinal": written.toordinal() if written else None,
        "written_year": written.year if written else None,
        "stage": "lexical",
        "score": score,
        "body": body,
        "canonical": False,
        "coverage": 0.5,
    }
    c.update(extra)
    return c


def _care(bridge=(), query="", archive_open=False, time_releases=False):
    why = "temporal signal: '2014'" if archive_open else None
    return search.Deference(DEFERRED, list(bridge), query, archive_open, why, time_releases)


# -- identifiers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("why is db-prod-03 lagging?", ["db-prod-03"]),
        ("status of INC-2041", ["INC-2041"]),
        ("see replication.md and pg_hba.conf", ["replication.md", "pg_hba.conf"]),
        ("upgrade from v2.3 to pg16", ["v2.3", "pg16"]),
        ('the "disaster recovery plan" for db-prod-03', ["disaster recovery plan", "db-prod-03"]),
        ("(docs/runbook.md)", ["docs/runbook.md"]),
    ],
)
def test_identifiers_finds_hosts_tickets_files_versions_and_quoted_phrases(query, expected):
    assert search.identifiers(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "what did we decide about the migration",
        "where did I work in 2014 and 2015?",
        "is a1 or b2 ok",  # too short
        "see e.g. the U.S. office, i.e. the a.m. shift",  # abbreviations of single letters
        '"ab" is too short to quote',
        "",
        None,
    ],
)
def test_identifiers_ignores_plain_words_years_short_tokens_and_abbreviations(query):
    assert search.identifiers(query) == []


def test_identifiers_are_distinct_regardless_of_case_and_at_most_eight():
    assert search.identifiers("db-prod-03 DB-PROD-03 Db-Prod-03.") == ["db-prod-03"]
    hosts = [f"host-{i:02d}" for i in range(20)]
    assert search.identifiers(" ".join(hosts)) == hosts[: search.MAX_IDENTIFIERS]


def test_identifiers_read_only_the_first_thousand_characters():
    assert search.identifiers("x" * search.MAX_QUERY_CHARS + " db-prod-03") == []


@FAST
@given(st.text(max_size=300))
def test_identifiers_never_raise_and_name_only_text_of_the_query(query):
    found = search.identifiers(query)
    assert len(found) <= search.MAX_IDENTIFIERS
    assert len({f.casefold() for f in found}) == len(found)
    for item in found:
        assert item and item in query


# -- n-grams and title keys ---------------------------------------------------------------------


def test_ngram_keys_are_canonical_runs_of_tokens():
    keys = search.ngram_keys("Where is Jane  DOE, the CTO?")
    assert keys[:5] == ["where", "is", "jane", "doe", "the"]
    assert "jane doe" in keys  # the trailing comma goes with canonical_key
    assert "cto" in keys
    assert "where is jane doe, the cto" in keys
    assert search.ngram_keys("a b c", max_n=1) == ["a", "b", "c"]
    assert search.ngram_keys("(...) ? \u201c\u201d") == []
    assert search.ngram_keys(None) == []


def test_a_run_ending_in_a_possessive_also_names_its_owner():
    keys = search.ngram_keys("Which company employs Olga Oyelaran\u2019s daughter, or Ravi's?")
    assert "olga oyelaran" in keys and "ravi" in keys
    assert "olga oyelaran\u2019s" in keys  # a name that ends so ("McDonald's") is still found
    assert "oyelaran\u2019s daughter" in keys and "oyelaran daughter" not in keys  # only at a run's end


@FAST
@given(st.lists(st.sampled_from(["Jane", "doe", "db-prod-03", "(x)", "--", "Ünïcode,", "a"]), max_size=12))
def test_ngram_keys_are_distinct_canonical_and_bounded(tokens):
    keys = search.ngram_keys(" ".join(tokens))
    assert len(keys) == len(set(keys))
    assert all(canonical_key(k) == k for k in keys)
    words = [t for t in tokens if t.strip(search._EDGE)]
    assert len(keys) <= sum(max(0, len(words) - n + 1) for n in range(1, search.MAX_NGRAM + 1))
    assert all(len(k.split()) <= search.MAX_NGRAM for k in keys)


def _sql_title_key(title):
    """documents.title_key as migrations/0006_add_search.sql writes it:
    nullif(btrim(regexp_replace(lower(title), '[^[:alnum:]]+', ' ', 'g')), '')."""
    return re.sub(r"[\W_]+", " ", title.lower()).strip() or None


def test_title_keys_shape():
    keys = search.title_keys("The Replication Runbook for pg_hba")
    assert "replication runbook" in keys
    assert "the replication runbook for pg hba" in keys
    assert "replication" in keys
    assert "the" not in keys and "for" not in keys  # stopwords and short words alone
    assert "pg" not in keys and "pg hba" in keys  # a short word only inside a longer run
    assert "about" not in search.title_keys("about")  # a long stopword alone


def test_title_keys_lower_case_like_sql_lower_not_casefold():
    # lower('Straße') is 'straße' in Postgres; casefold would give 'strasse' and never match.
    assert "straße notes" in search.title_keys("Straße Notes")
    assert _sql_title_key("Straße Notes") == "straße notes"


@FAST
@given(
    st.lists(
        st.text(
            alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éüßÉÜ",
            min_size=1,
            max_size=8,
        ),
        min_size=1,
        max_size=search.MAX_NGRAM,
    ),
    st.lists(
        st.sampled_from([" ", " - ", "_", ": ", " (", ") ", "/", ".", "  ", " — "]), min_size=6, max_size=6
    ),
)
def test_a_title_is_found_by_the_query_that_repeats_it(words, separators):
    title = "".join(w + s for w, s in zip(words, separators[: len(words)], strict=True))
    key = _sql_title_key(title)
    keys = search.title_keys(title)
    single = len(words) == 1
    if not (single and (len(key) < 4 or key in search.STOPWORDS)):
        assert key in keys
    for k in keys:  # every key is already in title_key form
        assert _sql_title_key(k) == k
        assert len(k.split(" ")) <= search.MAX_NGRAM


# -- deference ---------------------------------------------------------------------------------


def test_a_charged_subject_is_withheld_even_when_the_archive_is_open():
    assert _care().withheld(["Alice Smith"]) == ["Alice Smith"]
    assert search.Deference(DEFERRED, None).withheld(["Alice Smith"]) == ["Alice Smith"]
    assert _care(archive_open=True).withheld(["Alice Smith"]) == ["Alice Smith"]  # time alone: no
    assert _care(query="what did Ally say in 2014").withheld(["Alice Smith"]) == ["Alice Smith"]  # closed
    assert _care().withheld([]) == []


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("what did Ally say in 2014", "ally"),
        ("ALICE SMITH, back then", "alice smith"),
        ("a. smith?", "a. smith"),
    ],
)
def test_the_question_naming_the_subject_releases_it_only_while_the_archive_is_open(query, name):
    care = _care(query=query, archive_open=True)
    assert care.withheld(["Alice Smith", "Ally", "Dad"]) == ["Dad"]
    assert care.why_released("Alice Smith") == (
        f"the question names '{name}' and the archive is open (temporal signal: '2014')"
    )
    assert _care(query=query).withheld(["Alice Smith"]) == ["Alice Smith"]


def test_the_reason_quotes_the_longest_name_the_question_uses():
    deferred = [{"subject": "Walter Rivera", "aliases": ["Grandpa Walter", "Grandpa"]}]
    care = search.Deference(deferred, [], "grandpa walter used to", True, "temporal signal: 'used to'")
    assert care.why_released("Walter Rivera") == (
        "the question names 'grandpa walter' and the archive is open (temporal signal: 'used to')"
    )
    # A word that only contains a name does not name it.
    assert search.Deference(deferred, [], "grandpas used to", True, "x").withheld(["Walter Rivera"])


def test_time_releases_restores_the_looser_rule_and_says_so():
    care = _care(archive_open=True, time_releases=True)
    assert care.withheld(["Alice Smith", "Dad", "Grandpa Joe"]) == []
    assert care.why_released("Dad") == (
        "time releases (deference.time_releases) and the archive is open (temporal signal: '2014')"
    )
    assert _care(time_releases=True).withheld(["Dad"]) == ["Dad"]  # the archive closed: held


@pytest.mark.parametrize("bridge", ["Alice Smith", "  alice   SMITH ", "ally", "ALLY.", "a. smith"])
def test_bridging_a_subject_by_name_or_alias_releases_it(bridge):
    assert _care([bridge]).withheld(["Alice Smith"]) == []
    assert _care([bridge]).why_released("Alice Smith") == "bridged"
    assert _care([bridge], "ally", archive_open=True).why_released("Alice Smith") == "bridged"  # first


def test_bridging_by_the_subject_releases_a_chunk_charged_under_an_alias():
    assert _care(["Alice Smith"]).withheld(["Ally"]) == []


def test_bridging_one_subject_does_not_release_another():
    assert _care(["Ally"]).withheld(["Alice Smith", "Dad"]) == ["Dad"]
    assert _care(["dad"]).withheld(["Alice Smith", "Dad"]) == ["Alice Smith"]
    assert _care(["Mum", "", "...", None]).withheld(["Dad"]) == ["Dad"]


def test_a_frontmatter_only_subject_is_withheld_until_bridged_or_named_by_name():
    assert _care().withheld(["Grandpa Joe"]) == ["Grandpa Joe"]
    assert _care(["ally"]).withheld(["Grandpa Joe"]) == ["Grandpa Joe"]
    assert _care(["grandpa  joe"]).withheld(["Grandpa Joe"]) == []
    assert _care(query="grandpa joe in 2014", archive_open=True).withheld(["Grandpa Joe"]) == []


@FAST
@given(
    st.lists(st.sampled_from(["Alice Smith", "Ally", "Dad", "Grandpa Joe", "Mum"]), max_size=5, unique=True),
    st.lists(st.sampled_from(["alice smith", "A. Smith", "DAD", "mum", "nobody", ""]), max_size=3),
    st.lists(st.sampled_from(["zebra", "Ally", "dad", "grandpa joe", "in", "2014"]), max_size=5).map(
        " ".join
    ),
    st.booleans(),
    st.booleans(),
)
def test_released_is_bridged_or_named_while_open_or_time_releases(
    charged, bridge, query, archive_open, loose
):
    care = _care(bridge, query, archive_open, loose)
    held = care.withheld(charged)
    assert held == [s for s in charged if s in held]  # a sub-list, in order

    def group(name):
        keys = {canonical_key(name)} - {None}
        for subject in DEFERRED:
            names = {canonical_key(n) for n in [subject["subject"], *subject["aliases"]]}
            if keys & names:
                keys |= names
        return keys

    bridged = set().union(*(group(b) for b in bridge)) if bridge else set()
    asked = set(search.ngram_keys(query))
    for subject in charged:
        names = group(subject)
        expected = bool(names & bridged) or (archive_open and (bool(names & asked) or loose))
        assert (subject not in held) == expected, (subject, bridge, query, archive_open, loose)
        why = care.why_released(subject)
        assert (why is not None) == expected
        if why and not names & bridged:
            assert "the archive is open (temporal signal: '2014')" in why


def test_released_counts_charged_results_per_subject_and_workspace():
    results = [
        {"chunk_id": 1, "workspace": "personal", "charged": ["Dad"]},
        {"chunk_id": 2, "workspace": "personal", "charged": ["Dad", "Ally"]},
        {"chunk_id": 3, "workspace": "creative", "charged": ["Dad"]},
        {"chunk_id": 4, "workspace": "creative", "charged": []},
        {"chunk_id": 5, "workspace": "creative"},
    ]
    assert search.released(results, lambda s: "why " + s) == [
        {"subject": "Ally", "workspace": "personal", "chunks": 1, "why": "why Ally"},
        {"subject": "Dad", "workspace": "creative", "chunks": 1, "why": "why Dad"},
        {"subject": "Dad", "workspace": "personal", "chunks": 2, "why": "why Dad"},
    ]
    assert search.released([], lambda s: s) == []


# -- the workspace pool --------------------------------------------------------------------------


def _row(chunk_id, confident=False, charged=None, score=1.0):
    return {"chunk_id": chunk_id, "score": score, "confident": confident, "charged": charged}


def test_pool_dedups_across_stages_and_stops_on_enough_confident():
    pool = search.WorkspacePool("technical", cap=10, need=2)
    assert pool.wants_more() == (True, None)
    assert pool.admit("exact", [_row(1, True), _row(2), _row(1, True)]) == 2
    assert pool.confident == 1
    assert pool.wants_more() == (True, None)
    assert pool.admit("lexical", [_row(2, True), _row(3, True)]) == 1
    assert [(h["chunk_id"], h["stage"], h["confident"]) for h in pool.hits] == [
        (1, "exact", True),
        (2, "exact", False),  # the first stage to find a chunk keeps it
        (3, "lexical", True),
    ]
    assert pool.confident == 2
    assert pool.wants_more() == (False, "enough confident candidates (2 of 2)")


def test_the_pool_keeps_each_chunks_bm25_strength_also_for_a_chunk_an_earlier_stage_admitted():
    pool = search.WorkspacePool("technical", cap=10, need=8)
    pool.admit("exact", [_row(1)])
    assert pool.lexical is None  # BM25 has not ranked this workspace's pool
    pool.admit("lexical", [_row(2, score=8.0), _row(1, score=4.0), _row(3, score=2.0)])
    assert pool.lexical == {2: 1.0, 1: 0.5, 3: 0.25}
    assert [h["stage"] for h in pool.hits] == ["exact", "lexical", "lexical"]


def test_pool_holds_at_most_its_cap_and_need_never_exceeds_it():
    pool = search.WorkspacePool("technical", cap=3, need=8)
    assert pool.need == 3
    assert pool.admit("lexical", [_row(i) for i in range(6)]) == 3
    assert [h["chunk_id"] for h in pool.hits] == [0, 1, 2]
    assert pool.wants_more() == (False, "the workspace holds per_workspace candidates")
    assert pool.admit("semantic", [_row(9, True)]) == 0
    assert len(pool.hits) == 3


def test_an_admitted_chunk_keeps_the_subjects_the_search_released():
    pool = search.WorkspacePool("personal", cap=5, need=5)
    assert pool.admit("exact", [_row(10, charged=["Alice Smith"]), _row(12)]) == 2
    # what the report's "released" counts
    assert [(h["chunk_id"], h["charged"]) for h in pool.hits] == [(10, ["Alice Smith"]), (12, [])]


def test_the_released_keys_of_a_search_follow_why_released():
    deferred = [
        {"subject": "Alice Smith", "aliases": ["Ally"]},
        {"subject": "Dad", "aliases": []},
    ]
    closed = search.Deference(deferred)
    assert closed.released_keys_of_search() == []
    bridged = search.Deference(deferred, bridge=["ally"])
    assert bridged.released_keys_of_search() == ["alice smith", "ally"]
    named = search.Deference(
        deferred, query="what did dad say in 2009", archive_open=True, archive_why="2009"
    )
    keys = named.released_keys_of_search()
    assert "dad" in keys and "alice smith" not in keys
    assert search.Deference(deferred, query="what did dad say").released_keys_of_search() == []
    loose = search.Deference(deferred, archive_open=True, archive_why="2009", time_releases=True)
    assert loose.released_keys_of_search() is None
    # the same rule as why_released, subject by subject
    for care in (closed, bridged, named):
        keys = set(care.released_keys_of_search())
        for subject in ("Alice Smith", "Dad", "Zed"):
            assert (search.canonical_key(subject) in keys) == (care.why_released(subject) is not None)


def test_hints_name_every_closed_subject_charged_in_a_workspace_searched():
    counts = {("Dad", "personal"): 7, ("Dad", "creative"): 2, ("Mum", "personal"): 0, ("Ally", "personal"): 3}
    out = search.hints(counts, lambda charged: [s for s in charged if s != "Ally"], lambda s: "bridge " + s)
    assert out == [
        {"subject": "Dad", "workspace": "creative", "chunks": 2, "how": "bridge Dad"},
        {"subject": "Dad", "workspace": "personal", "chunks": 7, "how": "bridge Dad"},
    ]


def test_named_subjects_by_name_or_alias_as_whole_words():
    deferred = [{"subject": "Walter Rivera", "aliases": ["Grandpa"]}, {"subject": "Maya", "aliases": []}]
    assert search.named_subjects("what did GRANDPA say?", deferred) == ["Walter Rivera"]
    assert search.named_subjects("walter rivera and maya", deferred) == ["Walter Rivera", "Maya"]
    assert search.named_subjects("grandpas and mayans", deferred) == []


def test_an_open_archive_drops_band_weights_and_recency():
    weights = {
        "band": {"current": 1.0, "archival": 0.5},
        "canonical": 1.25,
        "freshness_floor": 0.6,
        "freshness_half_life_days": 1000,
        "year_miss_per_year": 0.1,
    }
    old = {"band": "archival", "written_ordinal": TODAY - 5000, "written_year": 2010}
    assert search.priority(old, weights) == 0.5 and search.priority(old, weights, recency=False) == 1.0
    assert search.freshness(old, weights, TODAY, [], recency=True) < 0.7
    assert search.freshness(old, weights, TODAY, [], recency=False) == 1.0
    canonical = dict(old, canonical=True)
    assert search.freshness(canonical, weights, TODAY, []) == 1.0
    assert search.freshness(canonical, weights, TODAY, [1990]) == 1.0


def test_coverage_counts_query_words_by_their_stem_as_whole_words():
    assert search.coverage("The replicas were invoiced.", ["replication", "invoices"]) == 1.0
    assert search.coverage("Since then, nothing.", ["inc", "2041"]) == 0.0  # "inc" is not in "since"
    assert search.coverage("INC-2041 at night", ["inc", "2041", "happened"]) == pytest.approx(2 / 3)
    assert search.coverage("anything", []) == 0.0


def test_blend_keeps_every_candidate_and_mixes_by_share():
    mixed = search.blend({1: 1.0, 2: 0.0}, {1: 0.0, 2: 1.0, 3: 0.5}, 0.6)
    assert mixed == pytest.approx({1: 0.6, 2: 0.4, 3: 0.2})


# -- the combined-pool rank -----------------------------------------------------------------------

ids_strategy = st.lists(st.integers(1, 60), max_size=15, unique=True)


@FAST
@given(ids_strategy, st.data())
def test_from_ranking_is_a_permutation_whatever_the_reply(ids, data):
    reply = data.draw(
        st.lists(st.sampled_from(ids) | st.integers(-5, 100), max_size=20)
        if ids
        else st.lists(st.integers(), max_size=5)
    )
    relevance = search.from_ranking(reply, ids)
    assert sorted(relevance) == sorted(ids)
    order = sorted(relevance, key=lambda i: -relevance[i])
    named = list(dict.fromkeys(i for i in reply if i in ids))
    assert order == named + [i for i in ids if i not in named]
    values = [relevance[i] for i in order]
    assert all(a > b for a, b in itertools.pairwise(values))
    if ids:
        assert values[0] == 1.0
        assert values[-1] >= 0.05


# Any relevance a backend could hand over: missing, NaN, infinite, or finite of any sign (a
# finite one near float's limit would overflow the score; no backend gives more than 1).
relevance_value = (
    st.none() | st.sampled_from([math.nan, math.inf, -math.inf]) | st.floats(-1e300, 1e300) | st.floats(-2, 2)
)


@st.composite
def candidate_lists(draw, max_size=12):
    ids = draw(st.lists(st.integers(1, 500), max_size=max_size, unique=True))
    out = []
    for i in ids:
        written = draw(st.none() | st.dates(datetime.date(1990, 1, 1), datetime.date(2027, 12, 31)))
        out.append(
            _candidate(
                i,
                score=None,
                body=" ".join(
                    draw(st.lists(st.sampled_from([*VOCAB, "the", "and", "zebra."]), max_size=300))
                ),
                written=written,
                band=draw(st.sampled_from(search.ALL_BANDS)),
                stage=draw(st.sampled_from(["exact", "lexical", "graph", "semantic", "capsules"])),
                canonical=draw(st.booleans()),
                coverage=draw(st.floats(0, 1)),
            )
        )
    return out


@FAST
@given(candidate_lists(), st.data(), st.lists(st.integers(1990, 2027), max_size=2))
def test_rank_returns_exactly_the_candidates_in_score_order(candidates, data, years):
    ids = [c["chunk_id"] for c in candidates]
    keys = data.draw(
        st.lists(st.sampled_from(ids) | st.integers(501, 600), max_size=15) if ids else st.just([])
    )
    relevance = {k: data.draw(relevance_value) for k in keys}
    ranked = search.rank(candidates, relevance, WEIGHTS, TODAY, years)
    assert sorted(c["chunk_id"] for c in ranked) == sorted(ids)
    assert all(math.isfinite(c["score"]) for c in ranked)
    assert all(a["score"] >= b["score"] for a, b in itertools.pairwise(ranked))
    for c in ranked:
        r = relevance.get(c["chunk_id"])
        if r is None or not math.isfinite(r):
            assert c["relevance"] == 0.0 and c["score"] == 0.0
    shuffled = list(candidates)
    random.Random(len(ids)).shuffle(shuffled)
    again = search.rank(shuffled, relevance, WEIGHTS, TODAY, years)
    assert [c["chunk_id"] for c in again] == [c["chunk_id"] for c in ranked]


def test_rank_breaks_ties_by_chunk_id_and_applies_priority():
    same = [_candidate(7), _candidate(3), _candidate(5)]
    ranked = search.rank(same, {7: 0.5, 3: 0.5, 5: 0.5}, WEIGHTS, TODAY, [])
    assert [c["chunk_id"] for c in ranked] == [3, 5, 7]
    canonical = [_candidate(1), _candidate(2, canonical=True)]
    assert [c["chunk_id"] for c in search.rank(canonical, {1: 0.5, 2: 0.5}, WEIGHTS, TODAY, [])] == [2, 1]
    banded = [_candidate(1, band="archival"), _candidate(2, band="current")]
    assert [c["chunk_id"] for c in search.rank(banded, {1: 0.9, 2: 0.9}, WEIGHTS, TODAY, [])] == [2, 1]
    missing = [_candidate(1), _candidate(2)]
    assert [c["chunk_id"] for c in search.rank(missing, {2: 0.01, 1: math.nan}, WEIGHTS, TODAY, [])] == [2, 1]


def test_priority_and_deterministic_relevance():
    assert search.priority(_candidate(1), WEIGHTS) == 1.0
    assert search.priority(_candidate(1, canonical=True), WEIGHTS) == 1.25
    assert search.priority(_candidate(1, band="archival", canonical=True), WEIGHTS) == pytest.approx(0.9375)
    assert search.priority(_candidate(1, band="unknown"), WEIGHTS) == 1.0
    assert (
        search.deterministic_relevance(_candidate(1, stage="exact", coverage=1.0, lexical=1.0), WEIGHTS)
        == 1.0
    )
    assert search.deterministic_relevance(_candidate(1, stage="odd", coverage=None), WEIGHTS) == 0.25
    # a typed walk's answer matches by the walk, whatever words it holds
    assert (
        search.deterministic_relevance(_candidate(1, stage="exact", match="path", coverage=0.0), WEIGHTS)
        == 1.0
    )


def test_of_chunks_holding_as_many_of_the_words_the_one_bm25_ranks_higher_is_more_relevant():
    first, second = (_candidate(i, coverage=1.0, lexical=strength) for i, strength in ((1, 1.0), (2, 0.6)))
    assert search.deterministic_relevance(first, WEIGHTS) > search.deterministic_relevance(second, WEIGHTS)
    # where the workspace's lexical stage did not run, the share of words alone: no penalty for
    # having been found by an identifier in a workspace that needed no BM25
    unranked = _candidate(3, coverage=1.0, lexical=None)
    assert search.deterministic_relevance(unranked, WEIGHTS) == search.deterministic_relevance(
        _candidate(3, coverage=1.0, lexical=1.0), WEIGHTS
    )
    assert search.deterministic_relevance(unranked, WEIGHTS) > search.deterministic_relevance(second, WEIGHTS)
    # without its share, BM25's order counts for nothing
    words_only = dict(WEIGHTS, lexical_share=0.0)
    assert search.deterministic_relevance(first, words_only) == search.deterministic_relevance(
        second, words_only
    )


@FAST
@given(
    st.dictionaries(st.integers(), st.none() | st.floats(allow_nan=True, allow_infinity=True), max_size=12)
)
def test_normalise_bounds_and_order(scores):
    out = search.normalise(scores)
    assert out.keys() == scores.keys()
    assert all(0.05 <= v <= 1.0 for v in out.values())
    finite = {k: s for k, s in scores.items() if s is not None and math.isfinite(s)}
    for k in scores:
        if k not in finite:
            assert out[k] == 0.05
    for a in finite:
        for b in finite:
            if finite[a] <= finite[b]:
                assert out[a] <= out[b]
    if finite:
        assert out[max(finite, key=finite.get)] == pytest.approx(1.0)
        if len(set(finite.values())) > 1:
            assert out[min(finite, key=finite.get)] == 0.05


def test_normalise_examples():
    assert search.normalise({1: 3.0, 2: 3.0, 3: None}) == {1: 1.0, 2: 1.0, 3: 0.05}
    assert search.normalise({1: 0.0, 2: 10.0, 3: 5.0}) == {1: 0.05, 2: 1.0, 3: pytest.approx(0.525)}
    assert search.normalise({1: -1e308, 2: 1e308, 3: 0.0})[3] == pytest.approx(0.525)  # no overflow
    assert search.normalise({1: math.nan, 2: None}) == {1: 0.05, 2: 0.05}
    assert search.normalise({}) == {}


def _fresh(written, years=()):
    c = _candidate(1, written=written)
    return search.freshness(c, WEIGHTS, TODAY, list(years))


@FAST
@given(st.integers(0, 20000), st.integers(1, 20000))
def test_freshness_prefers_newer_without_years(age, older_by):
    today = datetime.date.fromordinal(TODAY)
    newer = _fresh(today - datetime.timedelta(days=age))
    older = _fresh(today - datetime.timedelta(days=age + older_by))
    assert 0.6 <= older < newer <= 1.0


@FAST
@given(st.lists(st.integers(1950, 2030), min_size=1, max_size=3), st.integers(1950, 2030), st.integers(1, 80))
def test_freshness_with_years_prefers_chunks_inside_them(years, inside_pick, outside_by):
    first, last = min(years), max(years)
    inside = max(first, min(last, inside_pick))
    outside = last + outside_by
    inside_score = _fresh(datetime.date(inside, 6, 1), years)
    outside_score = _fresh(datetime.date(outside, 6, 1), years)
    assert inside_score == 1.0
    assert 0.6 <= outside_score < inside_score
    assert _fresh(datetime.date(first - outside_by, 6, 1), years) == outside_score


def test_freshness_floor_and_undated():
    assert _fresh(None) == 0.6
    assert _fresh(None, [2014]) == 0.6
    assert _fresh(datetime.date(1, 1, 1)) >= 0.6
    assert _fresh(datetime.date(2030, 1, 1)) == 1.0  # written after as_of: not fresher than new
    assert _fresh(datetime.date(1900, 1, 1), [2014]) == 0.6


# -- the listwise reply -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "ranked"),
    [
        ('{"ranking": [3, 1, 2]}', [3, 1, 2]),
        ("[2, 3]", [2, 3]),
        ("Sure! The order is [3, 1] -- hope it helps.", [3, 1]),
        ('```json\n{"ranking": [2, 1]}\n```', [2, 1]),
        ('{"ranking": [3, 99, "1", true, 1.5, null, 2, 3]}', [3, 2, 3]),
    ],
)
def test_parse_listwise_reads_our_ids_in_order(content, ranked):
    assert search.parse_listwise(content, {1, 2, 3}) == ranked


@pytest.mark.parametrize(
    "content",
    [
        '{"ranking": [99]}',
        "no list here",
        '{"ranking": "3,1"}',
        '{"order": [1]}',
        "[]",
        "",
        None,
        "NaN",
        "[true]",
    ],
)
def test_parse_listwise_rejects_a_reply_without_our_ids(content):
    with pytest.raises(ValueError):
        search.parse_listwise(content, {1, 2, 3})


@FAST
@given(st.text(max_size=80) | st.lists(st.integers(-3, 8)).map(str))
def test_parse_listwise_raises_only_value_error(content):
    try:
        ranked = search.parse_listwise(content, {1, 2, 3})
    except ValueError:
        return
    assert ranked and set(ranked) <= {1, 2, 3}


# -- excerpts ---------------------------------------------------------------------------------------


def test_excerpt_returns_short_text_whole():
    assert search.excerpt("  Short text. Two sentences!  ", ["zebra"], 100) == "Short text. Two sentences!"


def test_excerpt_picks_the_sentence_richest_in_query_words():
    filler = [f"The lemur sat on a branch number {i}." for i in range(30)]
    key = "The zebra met a quokka and an axolotl."
    body = " ".join([*filler[:17], key, *filler[17:]])
    out = search.excerpt(body, ["zebra", "quokka", "axolotl"], 120)
    assert key in out
    assert out.startswith("... ") and out.endswith(" ...")
    assert len(out) <= 120 + 8


def test_excerpt_weighs_the_question_words_by_how_few_sentences_hold_them():
    # "zlib" and "format" are in every sentence but one and say little of which answers
    filler = [f"The zlib library writes the gzip format, part {i}." for i in range(12)]
    key = "No, the PKWare tapir is kept proprietary."
    body = " ".join([*filler[:6], key, *filler[6:]])
    out = search.excerpt(body, ["zlib", "format", "pkware"], 60)
    assert key in out
    # where no sentence holds a rarer word, the one that holds both common ones still leads
    plain = " ".join(
        ["The okapi slept.", "The zlib gecko ran.", "The zlib format ibis flew.", "The okapi woke."]
    )
    assert "zlib format ibis" in search.excerpt(plain, ["zlib", "format", "pkware"], 30)
    # words are met by their stem ("holding" for "hold", "packages" for "package", "directories"
    # for "directory")
    held = search.excerpt(
        "Tapir lemur okapi. There are ways of holding back packages. A package wish.", ["package", "hold"], 45
    )
    assert "holding back packages" in held
    trees = "Tapir lemur okapi. The index files. Each directory tree holds three sets. Ibis."
    assert "directory tree" in search.excerpt(trees, ["directories", "inside"], 40)
    # a word of one letter (the "t" of "didn't") weighs nothing: "isn't" holds it too
    text = "Valgrind isn't a native CPU. Write a suppression."
    held = search.sentence_stems(text, search.sentence_spans(text))
    assert list(search.stem_weights(held, ["didn", "t", "suppression"])) == [search.word_key("suppression")]


def test_excerpt_is_the_run_of_sentences_whose_question_words_weigh_most_together():
    filler = [f"The lemur sat on branch {i}." for i in range(20)]
    lone = "The zebra ran off."  # one of the question's words, first
    run = ["The zebra slept.", "A quokka woke it."]  # both, in two sentences side by side
    body = " ".join([*filler[:3], lone, *filler[3:12], *run, *filler[12:]])
    out = search.excerpt(body, ["zebra", "quokka"], 40)
    assert " ".join(run) in out and lone not in out
    # two sentences farther apart than the excerpt's room make no run: it shows one of them
    apart = " ".join([*filler[:3], run[0], *filler[3:6], run[1], *filler[6:]])
    out = search.excerpt(apart, ["zebra", "quokka"], 40)
    assert (run[0] in out) != (run[1] in out)


def test_excerpt_of_equal_runs_starts_where_a_paragraph_opens():
    before = " ".join(f"The lemur sat on branch {i}." for i in range(6))
    after = " ".join(f"The ibis flew over pond {i}." for i in range(6))
    body = f"{before}\n\nNo. The PKWare format is proprietary. So it is. {after}"
    out = search.excerpt(body, ["pkware", "deflate64"], 43)
    assert "No. The PKWare format is proprietary." in out  # the answer's opening, not the next line
    # a paragraph opening without the question's words does not lead
    body = f"{before}\n\nNo. The ibis flew on. The PKWare format is proprietary. So it is. {after}"
    out = search.excerpt(body, ["pkware", "deflate64"], 43)
    assert "The PKWare format is proprietary." in out and "No." not in out


@FAST
@given(
    st.lists(st.sampled_from(["lemur", "okapi", "tapir", "gecko", "ibis"]), min_size=1, max_size=8).map(
        " ".join
    ),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 200),
    st.sampled_from([" ", "\n\n", "\n- ", "  "]),
)
def test_excerpt_holds_the_best_sentence_within_the_limit(sentence, before, after, slack, gap):
    key = "Zebra quokka axolotl."
    sentences = [sentence.capitalize() + "." for _ in range(before)] + [key]
    sentences += [sentence.capitalize() + "!" for _ in range(after)]
    body = gap.join(sentences)
    max_chars = len(key) + len(gap.strip()) + 1 + slack  # a list item's span starts at its marker
    out = search.excerpt(body, ["zebra", "quokka", "axolotl"], max_chars)
    assert key in out
    assert len(out) <= max_chars + len("... ") + len(" ...")
    if len(body) <= max_chars:
        assert out == body


@FAST
@given(st.text(alphabet="ab .!?\n-#", max_size=400), st.integers(1, 150))
def test_excerpt_never_exceeds_its_limit(body, max_chars):
    out = search.excerpt(body, ["ab"], max_chars)
    inner = out.removeprefix("... ").removesuffix(" ...")
    assert len(inner) <= max_chars
    assert inner in body


# -- chat chunks: citation and excerpt --------------------------------------------------------------

CHAT = "\n".join(
    [
        "2024-03-04 09:12 Iris Calder: Morning! Lemur walk later?",
        "2024-03-04 09:13 Sam Rivera: Maybe. Did you hear about the zebra?",
        "2024-03-04 09:15 Iris Calder: Yes, the zebra moved to the quokka farm last week.",
        "  It has a new axolotl friend.",
        "2024-03-04 09:16 Sam Rivera: Great news, thanks.",
        "2024-03-04 09:20 Iris Calder: Okapi tonight?",
    ]
)


def _chat_candidate(chunk_id, body=CHAT, title="Iris Calder", **extra):
    chat = {"conversation_id": 7, "title": title, "senders": ["Iris Calder", "Sam Rivera"]}
    return _candidate(chunk_id, body=body, workspace="personal", path="chat/jsonl/c1", chat=chat, **extra)


def test_a_chat_chunk_is_cited_by_conversation_title_and_first_time():
    assert search.citation(_chat_candidate(1)) == 'personal:chat "Iris Calder" 2024-03-04 09:12'
    undated = _chat_candidate(2, body="(undated) Ann: hello\n(undated) Bo: hi", title="Chat with Ann")
    assert search.citation(undated) == 'personal:chat "Chat with Ann" undated'
    assert search.citation(_candidate(3)) == "technical:notes/doc3.md (2026-01-01, current)"  # unchanged


def test_a_chat_excerpt_shows_times_without_the_day_its_citation_names():
    body = "2024-03-04 23:58 Ann: late zebra\n  still here\n2024-03-05 00:01 Bo: next day zebra"
    assert search.chat_start(body) == "2024-03-04 23:58"
    assert search.chat_start("(undated) Ann: hello") is None
    shown = search.chunk_excerpt(_chat_candidate(1, body=body), ["zebra"], 300)
    # a line of another day keeps its day; a continuation line is left alone
    assert shown == "23:58 Ann: late zebra\n  still here\n2024-03-05 00:01 Bo: next day zebra"
    assert search.said(shown) == "late zebra\n  still here\nnext day zebra"


def test_a_question_in_the_first_person_is_about_the_owner():
    for query in (
        "Where do I live now?",
        "what is my rent",
        "Remind me",
        "MY SERVER",
        "Where do we live?",
        "our wifi",
    ):
        assert search.first_person(query), query
    for query in (
        "Where does Ana live?",
        "list item i) rent",
        "Iris and Ivan",
        "Where do they usually meet?",
    ):
        assert not search.first_person(query), query


def test_name_keys_are_a_questions_names_without_their_punctuation():
    keys = search.name_keys("Where did Priya's sister, Ana María Okafor, move?")
    assert "priya" in keys and "ana maría okafor" in keys and "ana" in keys
    assert "where" not in keys and "s" not in keys  # stopwords and letters alone name nobody
    assert all(k == canonical_key(k) for k in keys)


def test_chat_messages_keep_continuation_lines_with_their_message():
    messages = search.chat_messages(CHAT)
    assert len(messages) == 5
    assert (
        messages[2]
        == "2024-03-04 09:15 Iris Calder: Yes, the zebra moved to the quokka farm last week.\n  It has a new axolotl friend."
    )


def test_a_chat_excerpt_is_the_richest_message_and_its_reply_in_whole_lines():
    lines = CHAT.split("\n")
    # room for the answer (with its continuation line) and the reply after it, not more
    room = len(lines[2]) + len(lines[3]) + len(lines[4]) + 2
    out = search.chat_excerpt(CHAT, ["zebra", "quokka", "axolotl"], room)
    assert out == "...\n" + "\n".join(lines[2:5]) + "\n..."
    # more room: the message before it too
    out = search.chat_excerpt(CHAT, ["zebra", "quokka", "axolotl"], room + len(lines[1]) + 1)
    assert out == "...\n" + "\n".join(lines[1:5]) + "\n..."
    # words compared by their first five letters; the whole chunk when it fits
    assert search.chat_excerpt(CHAT, ["okapis"], len(lines[5]) + 3) == "...\n" + lines[5]
    assert search.chat_excerpt(CHAT, ["zebra"], len(CHAT)) == CHAT


def test_a_chat_excerpt_counts_words_in_what_was_said_not_in_who_said_it():
    body = "\n".join(
        [
            "2024-03-04 09:12 Ana Costa: Morning! Coffee later?",
            "2024-03-04 09:13 Sam Rivera: Sure, the usual place.",
            "2024-03-04 09:14 Ana Costa: See you there.",
            "2024-03-04 18:40 Sam Rivera: Did the Leeds flat work out in the end?",
        ]
    )
    # "ana" is the sender of two lines; "leeds" is said once, by the other person
    out = search.chat_excerpt(body, ["ana", "leeds"], len(body.split("\n")[3]) + 4)
    assert out == "...\n2024-03-04 18:40 Sam Rivera: Did the Leeds flat work out in the end?"


def test_a_chat_excerpt_picks_its_message_by_meaning_when_the_messages_have_vectors():
    lines = CHAT.split("\n")
    # the words point at the zebra message; the vectors at "Great news, thanks." (the 4th message)
    similarity = [0.1, 0.2, 0.3, 0.9, 0.2]
    room = len(lines[4]) + 4
    assert search.chat_excerpt(CHAT, ["zebra"], room, similarity) == "...\n" + lines[4] + "\n..."
    # a message without a vector is never the pick; none at all, or a count that does not match the
    # messages (a window re-made since): back to the words
    assert search.chat_excerpt(CHAT, ["okapis"], len(lines[5]) + 3, [None] * 5) == "...\n" + lines[5]
    assert search.chat_excerpt(CHAT, ["okapis"], len(lines[5]) + 3, [0.9, 0.1]) == "...\n" + lines[5]


def test_a_chat_excerpt_shows_its_message_whole_and_neighbours_only_within_the_context_room():
    lines = CHAT.split("\n")
    answer = lines[2] + "\n" + lines[3]  # the zebra message with its continuation line
    similarity = [0.1, 0.2, 0.9, 0.3, 0.2]
    # the context room is smaller than the message: the message alone, whole
    out = search.chat_excerpt(CHAT, [], 300, similarity, context_chars=40)
    assert out == "...\n" + answer + "\n..."
    # room for the reply after it as well
    out = search.chat_excerpt(CHAT, [], 300, similarity, context_chars=len(answer) + 1 + len(lines[4]))
    assert out == "...\n" + answer + "\n" + lines[4] + "\n..."
    # the whole window when it fits the context room; never more than max_chars
    assert search.chat_excerpt(CHAT, [], len(CHAT), similarity, context_chars=len(CHAT)) == CHAT
    assert search.chat_excerpt(CHAT, [], len(CHAT) - 1, similarity, context_chars=len(CHAT)) != CHAT


def test_a_chat_excerpt_of_a_message_that_asks_keeps_its_reply():
    lines = CHAT.split("\n")
    # "Did you hear about the zebra?" is the most similar; its answer is the next message
    similarity = [0.1, 0.9, 0.3, 0.2, 0.2]
    out = search.chat_excerpt(CHAT, [], 300, similarity, context_chars=20)
    assert out == "...\n" + "\n".join(lines[1:4]) + "\n..."
    # no room for both within max_chars: the question alone
    out = search.chat_excerpt(CHAT, [], len(lines[1]) + 5, similarity, context_chars=20)
    assert out == "...\n" + lines[1] + "\n..."


def test_a_message_that_holds_the_words_asked_is_the_answer_whatever_the_vectors_say():
    messages = [
        "2018-05-01 20:15 a1: My team made quite solid progress this sprint.",
        "2018-05-01 20:16 b2: Progress on what? Is the team solid?",
        "2018-05-01 20:17 a1: Mostly logos, some site design.",
    ]
    # the vectors prefer the last; the first holds three of the four words asked
    assert search.answering_message(messages, ["solid", "team", "quite", "progress"], [0.2, 0.5, 0.6]) == 0
    # a message that asks and holds the words comes after one that holds them and asks nothing...
    assert search.answering_message(messages, ["solid", "team", "progress"], [0.2, 0.9, 0.1]) == 0
    # ...but it is still the one asked about ("does music theory jazz": "Does that mean you know
    # music theory and all that jazz?"); the excerpt shows its reply with it
    assert search.answering_message(messages[1:], ["solid", "team", "progress"], [0.5, 0.6]) == 0
    excerpt = search.chat_excerpt("\n".join(messages[1:]), ["solid", "team", "progress"], 300, [0.5, 0.6], 40)
    assert "Is the team solid?" in excerpt and "Mostly logos" in excerpt
    # too few of the words: the vectors decide
    assert search.answering_message(messages, ["solid", "logos", "weather", "design"], [0.9, 0.1, 0.2]) == 0
    assert search.answering_message(messages, ["weather", "sprint"], [0.1, 0.1, 0.9]) == 2


def test_a_message_that_says_a_word_asked_outweighs_a_short_line_the_senders_name_pulls():
    messages = [
        "2023-04-26 19:11 Deborah: Big news, we brought home a little corgi. Basil is asleep on the sofa.",
        "2023-04-26 19:33 Isaac: Ha, of course you did.",
        "2023-04-26 19:34 Deborah: Catch you later!",
    ]
    # MiniLM's similarities to "What is the name of Deborah's corgi?" (each embedded with its
    # sender): the farewell is closest, through the name alone
    similarity = [0.50, 0.12, 0.57]
    assert search.answering_message(messages, ["name", "corgi"], similarity, names_sender=True) == 0
    # a question that names no sender: the vectors alone decide
    assert search.answering_message(messages, ["name", "corgi"], similarity) == 2
    # without a word of the question the vectors decide; a message that asks gains nothing by its words
    assert search.answering_message(messages, ["name", "puppy"], similarity, names_sender=True) == 2
    # a message that asks with the words asked is the one asked about, its reply shown with it
    asked = [messages[0], "2023-04-26 19:35 Isaac: What a name! Is the corgi called Basil?", messages[2]]
    assert search.answering_message(asked, ["name", "corgi"], [0.40, 0.45, 0.57], names_sender=True) == 1


def test_a_message_that_states_the_kind_of_value_asked_for_outweighs_a_line_the_name_pulls():
    messages = [
        "2026-11-09 13:44 Priya Okafor: Officially a Porto resident now, the move went fine.",
        "2026-11-09 13:50 Sam Rivera: Yay! Send pictures of the new place.",
        "2026-11-09 13:52 Priya Okafor: Lol yes anyway.",
    ]
    # MiniLM's similarities to "Where does Priya live now?": the filler is closest, by the name
    similarity = [0.518, 0.334, 0.554]
    assert search.answering_message(messages, ["live"], similarity, True) == 2
    assert search.answering_message(messages, ["live"], similarity, True, [True, False, False]) == 0
    # a message that asks gains nothing by what it states; a list of another length is no reading
    asks = [messages[0], "2026-11-09 13:50 Sam Rivera: So you live in Porto now?", messages[2]]
    assert search.answering_message(asks, ["live"], [0.5, 0.55, 0.554], True, [False, True, False]) == 2
    assert search.answering_message(messages, ["live"], similarity, True, [True, False]) == 2


def test_a_chat_excerpt_knows_a_sender_named_by_the_chunks_senders():
    chunk = {"body": "2023-04-26 19:11 Deborah Lind: Hi", "chat": {"senders": ["Deborah Lind", "Isaac"]}}
    assert search.asked_of_chat(chunk, ["name", "deborah", "corgi"]) == (["name", "corgi"], True)
    assert search.asked_of_chat(chunk, ["flights", "portugal"]) == (["flights", "portugal"], False)


def test_a_chat_message_longer_than_the_excerpt_keeps_its_time_and_sender():
    long = "2024-03-04 09:15 Iris Calder: " + " ".join(f"lemur {i}." for i in range(40))
    body = "\n".join([long, "  The zebra met a quokka.", "  " + "okapi " * 30, "2024-03-04 09:16 Sam: ok"])
    out = search.chat_excerpt(body, ["zebra", "quokka"], 120)
    assert out == "2024-03-04 09:15 Iris Calder: ... The zebra met a quokka.\n..."
    # a single line longer than the excerpt is cut, around the query's words, after the label
    out = search.chat_excerpt(long, ["lemur"], 80)
    assert out.startswith("2024-03-04 09:15 Iris Calder: lemur 0.") and out.endswith(" ...")
    assert len(out) <= 80 + 8


chat_line = st.builds(
    "{} {}: {}".format,
    st.sampled_from(["2024-03-04 09:12", "(undated)"]),
    st.sampled_from(["Ann", "Bo Li"]),
    st.lists(st.sampled_from([*VOCAB, "and", "x" * 50]), min_size=1, max_size=12).map(" ".join),
)
chat_message = st.tuples(
    chat_line,
    st.lists(
        st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(lambda words: "  " + " ".join(words)),
        max_size=2,
    ),
).map(lambda m: "\n".join([m[0], *m[1]]))


@FAST
@given(
    st.lists(chat_message, min_size=1, max_size=8).map("\n".join),
    st.integers(20, 400),
    st.lists(st.sampled_from(VOCAB), max_size=3),
)
def test_a_chat_excerpt_fits_and_holds_whole_messages_around_the_richest(body, max_chars, words):
    out = search.chat_excerpt(body, words, max_chars)
    assert len(out) <= max_chars + 8
    if len(body) <= max_chars:
        assert out == body
        return
    messages = search.chat_messages(body)
    richest = max(len(set(words) & set(m.split())) for m in messages)
    tied = [m for m in messages if len(set(words) & set(m.split())) == richest]  # any of them may lead
    best = max(messages, key=lambda m: len(set(words) & set(m.split())))
    if all(len(m) <= max_chars for m in tied):  # whole messages, a run that holds a richest one
        inner = out.removeprefix("...\n").removesuffix("\n...")
        runs = [
            "\n".join(messages[i:j]) for i in range(len(messages)) for j in range(i + 1, len(messages) + 1)
        ]
        assert inner in runs and any(m in inner for m in tied), (inner, tied)
        assert out.startswith("...\n") or body.startswith(inner)  # a mark wherever messages are left out
        assert out.endswith("\n...") or body.endswith(inner)
    elif len(best) > max_chars:  # the richest message's time and sender, then part of it
        label = best[: best.index(": ") + 2]
        assert out.startswith(label if len(label) <= max_chars // 2 else "")


# -- the context packet ------------------------------------------------------------------------------


def _sections(text):
    return [line for line in text.splitlines() if line.startswith("#")]


def _ranked(candidates, relevance=None):
    relevance = relevance or {c["chunk_id"]: 1.0 - 0.01 * n for n, c in enumerate(candidates)}
    return search.rank(candidates, relevance, WEIGHTS, TODAY, [])


hint_strategy = st.lists(
    st.builds(
        lambda subject, ws, n: {
            "subject": subject,
            "workspace": ws,
            "chunks": n,
            "how": f"To include it, ask with bridge => array['{subject}'].",
        },
        st.sampled_from(["Alice Smith", "Dad", "Grandpa Joe"]),
        st.sampled_from(["personal", "creative"]),
        st.integers(1, 9),
    ),
    max_size=3,
)


@settings(max_examples=80, deadline=None, database=None)
@given(
    st.integers(200, 5000),
    candidate_lists(),
    st.data(),
    hint_strategy,
    st.lists(st.sampled_from([*VOCAB, "what", "about"]), max_size=8).map(" ".join),
)
def test_packet_fits_its_budget_and_cites_in_order(budget, candidates, data, hint_list, query):
    relevance = {c["chunk_id"]: data.draw(st.floats(0.05, 1.0)) for c in candidates}
    ranked = search.rank(candidates, relevance, WEIGHTS, TODAY, [])
    report = dict(REPORT, archive={"open": True, "why": "temporal signal: '2014'"})
    out = search.packet(query, ranked, hint_list, report, budget, PACKET)
    text = out["text"]

    assert out["tokens"] <= budget
    assert out["tokens"] == search.estimate_tokens(text)
    assert out["hints"] == hint_list

    top = ranked[0]["score"] if ranked else 0.0
    eligible = [c for c in ranked if top > 0 and c["score"] >= PACKET["packet.min_relative_score"] * top]
    # a passage whose answering line an earlier one already centres on is shown once
    lines, distinct = set(), []
    for c in eligible:
        line = " ".join(search.answering_line(c, search.content_words(query)).casefold().split())
        if len(line) < search.SAME_LINE_CHARS or line not in lines:
            distinct.append(c)
        lines.add(line)
    # and, when they fill the packet, the pool's only passage holding a word of the question none
    # of them holds takes the last place
    most = PACKET["packet.max_chunks"]
    expected = distinct[:most]
    for word in [w for w in search.content_words(query) if len(w) >= 4]:
        holders = [c for c in ranked if word[:5] in search.stems(c["body"])]
        if len(expected) == most and len(holders) == 1 and holders[0] not in expected:
            expected = expected[:-1] + holders
            break
    used = out["used"]
    assert len(used) <= most
    assert [u["n"] for u in used] == list(range(1, len(used) + 1))
    assert [u["chunk_id"] for u in used] == [c["chunk_id"] for c in expected[: len(used)]]

    # no facts given: no facts section
    assert _sections(text)[:2] == ["# Context for: " + query, "## Evidence"]
    if not text.endswith("\n..."):  # not cut short: every part is whole
        expected = ["## Withheld", "## Provenance"] if "## Withheld" in text else ["## Provenance"]
        assert _sections(text)[2:] == expected
        evidence = text[text.index("## Evidence") : text.index(expected[0])]
        provenance = text[text.index("## Provenance") :]
        at = 0
        for u in used:
            at = evidence.index("[{}] {}\n".format(u["n"], u["citation"]), at)
        # each cited chunk's stage and score are in the JSON, not in the text
        assert " via " not in provenance and all(u["stage"] and u["score"] > 0 for u in used)
        assert re.findall(r"^\[(\d+)\]", evidence, re.M) == [str(u["n"]) for u in used]
        if not used:
            assert "(nothing found)" in evidence
        assert "note: archive open: temporal signal: '2014'" in provenance
    if "## Withheld" in text:
        assert hint_list
        withheld = text[text.index("## Withheld") : text.index("## Provenance")]
        assert not any(word in withheld for word in VOCAB)  # hints never carry chunk text
    elif hint_list:
        assert budget < 1000  # hints go only when the budget is tiny
    if not hint_list:
        assert "## Withheld" not in text


def test_packet_cites_excerpts_and_leaves_out_weak_chunks():
    candidates = [
        _candidate(1, body="The zebra lives here."),
        _candidate(2, body="A quokka lives there.", band="recent"),
        _candidate(3, body="Nothing about it at all."),
    ]
    ranked = _ranked(candidates, {1: 1.0, 2: 0.8, 3: 0.1})
    out = search.packet("where does the zebra live", ranked, [], REPORT, 4000, PACKET)
    assert [u["chunk_id"] for u in out["used"]] == [1, 2]  # chunk 3 is under 0.3 of the best
    text = out["text"]
    assert "[1] technical:notes/doc1.md (2026-01-01, current)\nThe zebra lives here.\n" in text
    assert "[2] technical:notes/doc2.md (2026-01-01, recent)\nA quokka lives there.\n" in text
    assert "Nothing about it" not in text
    # how each was found is in the JSON; the text has no provenance without a note to make
    assert [(u["stage"], u["score"]) for u in out["used"]] == [
        ("lexical", ranked[0]["score"]),
        ("lexical", ranked[1]["score"]),
    ]
    assert [(u["document_id"], u["conversation_id"]) for u in out["used"]] == [(1001, None), (1002, None)]
    assert "## Withheld" not in text
    assert _sections(text) == ["# Context for: where does the zebra live", "## Evidence"]


def test_two_overlapping_chunks_of_one_document_never_show_a_sentence_twice():
    # a chunk repeats the end of the one before it: shown after it, only what it adds is shown
    shared = "Configure complains that machparam.h is missing. The header files in uts are gone."
    first = _candidate(1, body="When you configure lsof on Solaris 7, it fails. " + shared)
    second = dict(
        _candidate(2, body=shared + " Load them from the SUNWhea package."),
        document_id=1001,
        path="notes/doc1.md",
    )
    out = search.packet(
        "solaris machparam header", _ranked([first, second], {1: 1.0, 2: 0.9}), [], REPORT, 4000, PACKET
    )
    assert [u["chunk_id"] for u in out["used"]] == [1, 2]
    assert out["text"].count("The header files in uts are gone.") == 1
    assert (
        "[2] technical:notes/doc1.md (2026-01-01, current)\n... Load them from the SUNWhea package.\n"
        in out["text"]
    )
    # a chunk all of whose sentences were shown is not cited again; another document's is
    inner = dict(_candidate(3, body=shared), document_id=1001, path="notes/doc1.md")
    elsewhere = _candidate(4, body="Solaris keeps machparam.h in its header package.")
    out = search.packet(
        "machparam header",
        _ranked([first, inner, elsewhere], {1: 1.0, 3: 0.9, 4: 0.8}),
        [],
        REPORT,
        4000,
        PACKET,
    )
    assert [u["chunk_id"] for u in out["used"]] == [1, 4]
    assert "[2] technical:notes/doc4.md" in out["text"]


def test_a_change_mark_names_only_blocks_the_packet_shows():
    newer = dict(
        _candidate(1, body="My new manager is Tomasz."),
        change={"kind": "later", "others": [2], "day": "2025-10-14", "update": True},
    )
    older = dict(
        _candidate(2, body="My manager is Priya. " * 40),
        change={"kind": "earlier", "others": [1], "day": "2025-03-02", "update": False},
    )
    ranked = _ranked([newer, older], {1: 1.0, 2: 0.9})
    whole = search.packet("manager", ranked, [], REPORT, 4000, PACKET)
    assert "(later, 2025-10-14: updates [2])" in whole["text"] and len(whole["used"]) == 2
    # a budget that holds the first block only: its mark would point at nothing shown
    tight = search.packet("manager", ranked, [], REPORT, 60, PACKET)
    assert [u["chunk_id"] for u in tight["used"]] == [1]
    assert "[2]" not in tight["text"] and "(later" not in tight["text"]


def test_packet_cites_at_most_max_chunks():
    ranked = _ranked([_candidate(i, body=f"zebra {i}.") for i in range(1, 13)])
    out = search.packet("zebra", ranked, [], REPORT, 5000, PACKET)
    assert [u["n"] for u in out["used"]] == list(range(1, 9))
    assert "[9]" not in out["text"]


def test_packet_with_nothing_found_keeps_hints_and_notes():
    hint_list = [{"subject": "Dad", "workspace": "personal", "chunks": 2, "how": "Bridge 'Dad'."}]
    report = dict(
        REPORT, degradations=[{"component": "embeddings", "error_class": "unreachable", "error": "x"}]
    )
    out = search.packet("anything", [], hint_list, report, 400, PACKET)
    assert out["used"] == []
    text = out["text"]
    assert "(nothing found)" in text
    assert "- 2 chunk(s) about Dad in personal withheld (deferred subject). Bridge 'Dad'." in text
    assert "note: degraded: embeddings (unreachable)" in text
    assert _sections(text)[2:] == ["## Withheld", "## Provenance"]


def test_packet_cuts_hints_then_text_to_stay_within_a_tiny_budget():
    hint_list = [
        {"subject": f"S{i}", "workspace": "personal", "chunks": 1, "how": "x" * 100} for i in range(20)
    ]
    report = dict(REPORT, archive={"open": True, "why": "temporal signal: '2014'"})
    out = search.packet("q", _ranked([_candidate(1, body="zebra. " * 300)]), hint_list, report, 200, PACKET)
    assert out["tokens"] <= 200
    assert "note: archive open" in out["text"]  # the hints went, not the notes
    report = dict(REPORT, archive={"open": True, "why": "w" * 5000})
    out = search.packet("q", [], [], report, 200, PACKET)
    assert out["tokens"] <= 200 and out["text"].endswith("\n...")


def test_packet_provenance_names_the_released_subjects_it_cites_in_one_line():
    candidates = [
        _candidate(1, body="zebra one.", charged=["Dad"]),
        _candidate(2, body="zebra two.", workspace="personal", charged=["Dad", "Ally"]),
        _candidate(3, body="zebra three."),
        _candidate(4, body="zebra four.", charged=["Mum"]),
    ]
    ranked = _ranked(candidates, {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.1})  # 4 is too weak to be cited
    why = "the question names 'dad' and the archive is open (temporal signal: '2014')"
    report = dict(
        REPORT,
        released=[
            {"subject": "Ally", "workspace": "personal", "chunks": 1, "why": "bridged"},
            {"subject": "Dad", "workspace": "personal", "chunks": 1, "why": why},
            {"subject": "Dad", "workspace": "technical", "chunks": 1, "why": why},
            {"subject": "Mum", "workspace": "technical", "chunks": 1, "why": "bridged"},
        ],
    )
    text = search.packet("zebra", ranked, [], report, 4000, PACKET)["text"]
    provenance = text[text.index("## Provenance") :]
    (line,) = [x for x in provenance.splitlines() if "released" in x]
    assert line == (
        "note: released deferred material: Ally in personal (1 chunk(s): bridged); "
        f"Dad in personal (1 chunk(s): {why}); Dad in technical (1 chunk(s): {why})"
    )
    assert "Mum" not in text  # released by the search, but not cited here
    plain = search.packet("zebra", _ranked([_candidate(3, body="zebra three.")]), [], report, 4000, PACKET)
    assert "released" not in plain["text"]


def test_packet_cites_a_chat_chunk_beside_a_document_with_whole_messages():
    ranked = _ranked([_chat_candidate(1), _candidate(2, body="The zebra lives here.")], {1: 1.0, 2: 0.9})
    settings = dict(PACKET, **{"packet.excerpt_chars": 100})
    out = search.packet("where is the zebra farm", ranked, [], REPORT, 4000, settings)
    text = out["text"]
    # The first block has twice the room (200 characters). The lines show their time without the
    # day the citation names, so they hold the answering message, the question before it and the
    # reply after it.
    lines = CHAT.replace("2024-03-04 ", "").split("\n")
    excerpt = "...\n" + "\n".join(lines[1:5]) + "\n..."
    assert f'[1] personal:chat "Iris Calder" 2024-03-04 09:12\n{excerpt}\n\n' in text
    assert "[2] technical:notes/doc2.md (2026-01-01, current)\nThe zebra lives here.\n" in text
    assert [u["stage"] for u in out["used"]] == ["lexical", "lexical"]
    assert [(u["document_id"], u["conversation_id"]) for u in out["used"]] == [(1001, 7), (1002, None)]
    assert [u["citation"] for u in out["used"]] == [
        'personal:chat "Iris Calder" 2024-03-04 09:12',
        "technical:notes/doc2.md (2026-01-01, current)",
    ]


# -- nothing answers ------------------------------------------------------------------------


def _word_uses(uses):
    """A word_uses that records that it was asked."""
    asked = []

    def word_uses():
        asked.append(True)
        return uses

    return word_uses, asked


def test_an_exact_match_or_a_close_passage_answers_without_asking_which_words_are_used():
    never_used, asked = _word_uses({"skydiving": 0, "went": 20})
    dated = search.answer_check([_candidate(1, match="dated")], None, 0.5, never_used)
    assert (dated["found"], dated["why"]) == (True, "an exact match")
    close = search.answer_check([_candidate(1), _candidate(2)], {1: 0.2, 2: 0.55}, 0.5, never_used)
    assert (close["found"], close["best_similarity"]) == (True, 0.55)
    assert asked == []
    entity = search.answer_check([_candidate(1, match="entity")], {1: 0.3}, 0.5, never_used)
    assert entity["found"] is False  # a name is no answer: it shares no asked-about word
    assert entity["why"] == "no passage open to this search uses 'skydiving', and none comes close in meaning"


def test_a_specific_word_in_memory_answers_and_no_candidate_does_not():
    def found(uses):
        return search.answer_check([_candidate(1)], {1: 0.1}, 0.5, lambda: uses)["found"]

    assert found({"gift": 0, "picture": 3})  # a paraphrase: its other, rarer words are there
    assert found({"went": 20, "jumped": 20})  # nothing absent
    assert not found({"went": 20, "skydiving": 0})  # the only word not common is nowhere
    assert search.answer_check([], None, 0.5, lambda: {})["found"] is False


def test_a_question_of_several_words_that_nothing_comes_near_in_meaning_is_answered_by_nothing():
    def check(sims, uses, far=0.3):
        # none holds half of what the words weigh: only "find" and "files", held by every chunk
        candidates = [_candidate(n, body="To find files, look.") for n in sims]
        return search.answer_check(candidates, sims, 0.5, lambda: uses, far=far)

    # "Why won't lsof find all the open files in a directory?" of a memory that never explains lsof:
    # every word is held somewhere, and no passage comes near it in meaning
    held = {"lsof": 1, "find": 20, "open": 12, "files": 20, "directory": 9}
    far = check({1: 0.28, 2: 0.21}, held)
    assert (far["found"], far["why"]) == (False, "no passage comes within 0.3 of the question in meaning")
    assert check({1: 0.28, 2: 0.31}, held)["found"] is True  # one passage is near enough
    assert check({1: 0.28}, held, far=0.0)["found"] is True  # the setting's 0 turns the rule off
    # a bag of a message's rarer words ("solid team quite progress") is as far from its window,
    # which holds every one of them
    bag = [_candidate(1, body="lsof: find open files in a directory."), _candidate(2, body="Open it.")]
    assert search.answer_check(bag, {1: 0.22, 2: 0.25}, 0.5, lambda: held, far=0.3)["found"] is True
    # half the words, but only the everyday ones: "How do I perform a case-insensitive search?" of a
    # memory that never tells it, where "perform", "case" and "search" are everywhere
    case = {"perform": 20, "case": 20, "insensitive": 1, "search": 20}
    everyday = [_candidate(1, body="In any case, perform the search again.", coverage=0.75)]
    assert search.weighted_coverage(everyday[0]["body"], case) < 0.5 <= 3 / 4
    assert search.answer_check(everyday, {1: 0.24}, 0.5, lambda: case, far=0.3)["found"] is False
    # a short question says too little for its similarity to count: "Where do I live?" is 0.21
    # from "I live in Bristol now."
    assert check({1: 0.21}, {"live": 4})["found"] is True
    assert check({1: 0.21}, {"city": 2, "live": 4})["found"] is True
    # a question that names someone the memory knows is far from the chats that answer it
    # ("Which mountain did John climb in Perthshire?" is 0.13 from John's message that answers it)
    mountain = {"mountain": 2, "climb": 3, "perthshire": 1}
    assert check({1: 0.13}, mountain)["found"] is False
    named = search.answer_check(
        [_candidate(1)], {1: 0.13}, 0.5, lambda: mountain, names_written=True, far=0.3
    )
    assert named["found"] is True
    # whether the memory knows the name or not ("In which city did Emil hold the wedding?")
    assert search.written_names("In which city did Emil hold the wedding?") == {"emil"}
    assert search.written_names("Why doesn't lsof report VxFS link counts on HP-UX?") == {"vxfs"}
    # an exact match answers however far it is in meaning
    dated = search.answer_check([_candidate(1, match="dated")], {1: 0.1}, 0.5, lambda: held, far=0.3)
    assert dated["found"] is True


def test_a_question_no_sentence_of_the_documents_comes_near_is_answered_by_nothing():
    # "How do I convert a string to all lowercase or capital letters?" of a memory of Debian's FAQs
    # without sed's: every word is held, half of what they weigh in one passage, and the passage
    # comes as near in meaning as one that answers
    uses = {"convert": 6, "string": 9, "lowercase": 1, "capital": 2, "letters": 4}
    passage = [_candidate(1, body="Convert the string: capital letters stay, lowercase ones go.")]
    asked = []

    def check(nearest, uses=uses, **kw):
        def nearest_sentence(words):
            asked.append((nearest, sorted(words)))
            return nearest

        return search.answer_check(
            passage,
            {1: 0.42},
            0.5,
            lambda: uses,
            far=0.3,
            sentence_far=0.45,
            nearest_sentence=nearest_sentence,
            **kw,
        )

    far = check(0.38)
    assert (far["found"], far["nearest_sentence"]) == (False, 0.38)
    assert far["why"] == "no sentence of the passages comes within 0.45 of the question in meaning"
    assert check(0.46)["found"] is True  # a sentence that answers comes near
    # no sentences to compare (a chat window among the passages, or the endpoint down): the words decide
    assert check(None)["found"] is True
    # a short question, or one that names someone, says too little for its similarity to count
    assert check(0.2, uses={"live": 4, "city": 2})["found"] is True
    assert check(0.2, names_known=True)["found"] is True
    assert check(0.2, names_written=True)["found"] is True
    # asked only where it decides, with the question's content words
    assert asked == [(n, sorted(uses)) for n in (0.38, 0.46, None)]
    off = search.answer_check(
        passage, {1: 0.42}, 0.5, lambda: uses, sentence_far=0.0, nearest_sentence=lambda words: 0.1
    )
    assert off["found"] is True  # the setting's 0 turns the rule off
    # an exact match or a passage close in meaning answers without the sentences
    dated = search.answer_check(
        [_candidate(1, match="dated")], {1: 0.1}, 0.5, lambda: uses, sentence_far=0.45, nearest_sentence=None
    )
    assert dated["found"] is True


def test_the_sentences_compared_hold_a_word_of_the_question_each_once_and_none_with_a_chat_window():
    note = _candidate(
        1,
        body="# Zlib format\n\nIt compresses. Deflate is the format zlib writes.\n- an item\n\n"
        "Deflate is the format zlib writes. It was written by two people.",
    )
    other = _candidate(2, body="Use gzip for files. Three words here. Formats differ in speed.")
    # a heading, a short sentence or list item, a sentence said twice, one without a word asked
    # ("written" is no "writes"): compared once or not at all
    words = ["format", "writes"]
    assert search.document_sentences([note, other], words) == [
        "Deflate is the format zlib writes.",
        "Formats differ in speed.",
    ]
    assert search.document_sentences([note, other], ["sofa"]) == []
    chat = _candidate(3, body="09:00 Sam: hi", chat={"message_ids": [1]})
    assert search.document_sentences([note, chat], words) is None
    # a record's line is far in meaning from the question it answers: no judging by sentences
    record = _candidate(4, body="## Work\n- **Employer:** Northwind Labs, Larkhaven\n- **Role:** DBA")
    assert search.document_sentences([note, record], ["work"]) is None
    assert not search.holds_record("At 10:30 we met. The ratio is 3:1; see http://example.org.")
    assert not search.holds_record("A key of more than four words: value\nand five words here: more")
    assert not search.holds_record("Its two formats: e.g., as text\nor as tables.\nNote: wrapped prose")
    many = [_candidate(n, body=" ".join(f"Format {n} number {i} here." for i in range(30))) for n in range(3)]
    assert len(search.document_sentences(many, words)) == search.NEAREST_SENTENCES


def test_words_nowhere_that_outweigh_the_rest_answer_nothing_however_many_everyday_words_are_held():
    def found(uses):
        return search.answer_check([_candidate(1)], {1: 0.1}, 0.5, lambda: uses)["found"]

    # "Why doesn't Solaris lsof report VxFS path name components?" of a memory with no lsof
    lsof = {"solaris": 0, "lsof": 0, "report": 10, "vxfs": 0, "path": 5, "name": 15, "components": 2}
    assert 2 * sum(n == 0 for n in lsof.values()) <= len(lsof)  # not most words: their weight says it
    assert not found(lsof)
    # a question that names someone or something the memory knows asks of it in other words
    known = search.answer_check([_candidate(1)], {1: 0.1}, 0.5, lambda: lsof, names_known=True)
    assert known["found"]
    assert found(dict(lsof, solaris=1, vxfs=1))  # only one word nowhere: may be a paraphrase
    assert found({"gift": 0, "birthday": 2})  # the same
    # two words nowhere beside rarer words held: those are what it asks about
    assert found({"mirror": 0, "sites": 0, "zlib": 1, "patent": 1, "windows": 1, "dll": 1})
    assert search.word_weight(0) > search.word_weight(5) > search.word_weight(search.COMMON_WORD_CHUNKS)


def test_what_a_question_asks_about_is_the_noun_phrase_it_ends_with():
    assert search.asked_phrase("How much did I pay for the sofa?") == ["sofa"]
    assert search.asked_phrase("What is my library card number?") == ["library", "card", "number"]
    assert search.asked_phrase("Who won the race") == ["race"]
    for query in (
        "Where does my book club meet?",  # the subject of a do-question: its verb ends it
        "What was the picture John made as a gift for Pia?",  # a name ends it
        "What did I eat on 2025/04/03?",  # no determiner
        "Did I go to the 5k?",  # a figure
        "Who is the mother of Abel Tower?",
        "",
    ):
        assert search.asked_phrase(query) == [], query


def test_what_is_asked_about_answers_nothing_when_a_word_is_nowhere_and_the_rest_only_apart():
    def check(uses, asked, together=True):
        return search.answer_check(
            [_candidate(1)], {1: 0.1}, 0.5, lambda: uses, asked, lambda words: together
        )

    unheld = check({"pay": 3, "sofa": 0}, ["sofa"])
    assert unheld["found"] is False
    assert "'sofa'" in unheld["why"] and "asks about" in unheld["why"]
    assert check({"pay": 3, "sofa": 0}, [])["found"]  # where the question ends on nothing asked
    card = {"library": 2, "card": 0, "number": 4}
    apart = check(card, ["library", "card", "number"], together=False)
    assert apart["found"] is False and "'library' and 'number' only apart" in apart["why"]
    assert check(card, ["library", "card", "number"], together=True)["found"]  # a paraphrase of "card"
    assert check({"daily": 0, "standup": 3}, ["daily", "standup"], together=False)["found"]  # one word held
    assert check({"gift": 0, "picture": 3}, ["picture"])["found"]  # a paraphrase elsewhere in the question
    close = search.answer_check([_candidate(1)], {1: 0.6}, 0.5, lambda: {"sofa": 0}, ["sofa"])
    assert close["found"]  # a passage close in meaning answers whatever words it uses


def test_the_subject_of_an_inverted_question_is_the_word_after_its_auxiliary():
    assert search.inverted_subject("Is zlib thread-safe?") == "zlib"
    assert search.inverted_subject("Can Zlib handle .zip archives?") == "zlib"
    assert search.inverted_subject("Why does LTszoff warn that lsof doesn't return offsets?") == "ltszoff"
    assert search.inverted_subject("Where did Kirsten sign up to volunteer?") == "kirsten"
    assert search.inverted_subject("Is “zlib’s” license free?") == "zlib"
    assert search.inverted_subject("What is sed?") == "sed"  # a copula's: what the question is about
    # a negative or contracted auxiliary inverts as well
    assert search.inverted_subject("Why won't LTdnlc run?") == "ltdnlc"
    assert search.inverted_subject("Where's zlib's manual?") == "zlib"
    assert search.inverted_subject("Aren't sed scripts portable?") == "sed"
    assert search.inverted_subject("Isn't Deflate64 patented?") is None  # an identifier
    for query in [
        "How do I convert a string?",  # a pronoun
        "Is my flight late?",  # a determiner: the subject's head is further on
        "When is the daily standup?",  # "daily" is no name of the standup
        "What does the stable directory contain?",
        "Is anything due today?",  # an indefinite pronoun
        "What's my IBAN?",
        "Is there an lsof license?",
        "Tell me about zlib.",  # no auxiliary opens it
        "Why does dnode1.c cause the compiler to complain?",  # an identifier, not a word
        "Will 64-bit builds work?",
        "zlib?",
        "",
    ]:
        assert search.inverted_subject(query) is None, query


def test_a_subject_no_passage_uses_answers_nothing_whatever_else_matches():
    used, asked = _word_uses({"thread": 3, "safe": 3})

    def check(candidates, sims, held):
        return search.answer_check(candidates, sims, 0.5, used, subject="zlib", used=lambda word: held)

    exact = check([_candidate(1, match="identifier")], None, held=False)
    assert exact["found"] is False  # "64-bit" of "Will zlib work on a 64-bit machine?" is not about zlib
    assert exact["why"] == "no passage open to this search uses 'zlib', what the question is about"
    assert check([_candidate(1)], {1: 0.8}, held=False)["found"] is False  # another compressor's formats
    assert check([_candidate(1, match="dated")], None, held=True)["found"]  # the subject is known
    assert search.answer_check([_candidate(1, match="dated")], None, 0.5, used)["found"]  # none asked
    assert asked == []  # the words' uses are not asked for the subject's


def test_a_common_string_found_verbatim_answers_only_where_the_questions_words_are_not_missing():
    def check(uses, rare=False):
        candidate = _candidate(1, match="identifier", confident=rare)
        return search.answer_check([candidate], {1: 0.35}, 0.5, lambda: uses)

    # "Why won't the HP-UX depot install?" of a memory whose changelogs name HP-UX, never a depot
    depot = check({"depot": 0, "install": 20})
    assert (depot["found"], depot["why"]) == (
        False,
        "no passage open to this search uses 'depot', and none comes close in meaning",
    )
    # "What's the difference between the gzip and deflate encodings?": every word is used
    assert check({"difference": 20, "gzip": 12, "deflate": 4, "encodings": 2}) == {
        "best_similarity": 0.35,
        "found": True,
        "why": "an exact match",
    }
    # a string few passages hold answers whatever the words ("Why was INC-4242 reopened?"), and so
    # do a title, a day or a walk's end: "What happened on 2025/04/03?"
    assert check({"reopened": 0}, rare=True)["found"] is True
    dated = search.answer_check([_candidate(1, match="dated")], {1: 0.35}, 0.5, lambda: {"happened": 0})
    assert dated["found"] is True


def test_a_negated_auxiliary_is_no_content_word():
    assert search.content_words("Why don't ps(1) and lsof agree? Why won’t it install?") == [
        "ps", "1", "lsof", "agree", "install"
    ]  # fmt: skip
    assert search.content_words("Who won the race?") == ["won", "race"]  # "won" said alone is a word


def test_answer_words_leave_the_names_out():
    entities = {"personal": [{"id": 1, "name": "Iris Calder"}]}
    assert search.answer_words(["iris", "calder", "s", "karaoke", "night"], entities) == ["karaoke", "night"]
    assert search.answer_words(["much", "mobile", "data"], {}) == ["mobile", "data"]  # "how much" asks
    # "What is my current home address?" asks when, by "current": no passage need say it
    assert search.answer_words(["current", "home", "address"], {}) == ["home", "address"]
    phrase = search.answer_words(search.asked_phrase("What is my current home address?"), {})
    uses = {"home": 0, "address": 1}
    check = search.answer_check([{"chunk_id": 1, "body": "My new address is 118 Cedar Avenue."}], {1: 0.45}, 0.5,
                                lambda: uses, phrase, lambda words: False)  # fmt: skip
    assert phrase == ["home", "address"] and check["found"] is True


def test_a_packet_says_nothing_answers_and_shows_two_nearest_unless_a_fact_does():
    ranked = _ranked([_candidate(n, body=f"{VOCAB[n]} notes.") for n in range(1, 5)])
    report = dict(
        REPORT,
        as_of="2026-01-01",
        answer={"found": False, "why": "no passage open to this search uses 'vet'"},
    )
    text = search.packet("what did the vet say", ranked, [], report, 4000, PACKET)["text"]
    assert (
        f"{search.NOTHING_ANSWERS} (no passage open to this search uses 'vet'). The nearest, not an answer:"
        in text
    )
    assert "[2] " in text and "[3] " not in text
    fact = {"subject": "Sam", "attribute": "vet", "value": "Dr Ansell", "kind": "declared",
            "valid_from": "2024-01-01", "sources": []}  # fmt: skip
    answered = search.packet("what did the vet say", ranked, [], report, 4000, PACKET, facts=[fact])["text"]
    assert search.NOTHING_ANSWERS not in answered and "[4] " in answered

    # the nearest of nothing that answers are not ordered as changes (marks would cite passages
    # the packet leaves out)
    def order(query, chosen, report, ranked):
        raise AssertionError("no change is looked for where nothing answers")

    search.packet("what did the vet say", ranked, [], report, 4000, PACKET, order=order)


def test_a_chat_window_is_cut_at_the_moment_and_one_that_cannot_be_cut_exactly_is_left_out():
    body = "2025-06-30 11:00 Ana: first\n2025-06-30 11:50 Ana: second\n  and its second line"
    chat = {"message_ids": [1, 2], "sent_at": ["2025-06-30T11:00:00+00:00", "2025-06-30T11:50:00+00:00"]}
    detail = {"chunk_id": 7, "body": body, "chat": json.dumps(chat)}
    at = datetime.datetime.fromisoformat
    assert search.cut_at(detail, None) is detail
    assert search.cut_at(detail, at("2025-06-30 12:00:00+00")) is detail
    cut = search.cut_at(detail, at("2025-06-30 13:30:00+02"))  # 11:30 UTC
    assert cut["body"] == "2025-06-30 11:00 Ana: first"
    assert json.loads(cut["chat"]) == {"message_ids": [1], "sent_at": ["2025-06-30T11:00:00+00:00"]}
    assert search.cut_at(detail, at("2025-06-30 10:00:00+00")) is None  # nothing left
    one_line = dict(detail, body="2025-06-30 11:00 Ana: first and second in one line")
    assert search.cut_at(one_line, at("2025-06-30 11:30:00+00")) is None  # not one message per id
    document = {"chunk_id": 8, "body": "a note", "chat": None}
    assert search.cut_at(document, at("2000-01-01 00:00:00+00")) is document


def test_a_chat_excerpt_matches_no_participants_name():
    body = "\n".join(
        [
            "09:00 Sam: Morning!",
            "09:01 Kate: What about Kate's plan, Sam?",
            "09:02 Sam: The ferry leaves at noon, the harbour is packed.",
            "09:03 Kate: Great.",
            "09:04 Sam: See you there.",
        ]
    )
    chunk = {"body": body, "chat": {"senders": ["Sam", "Kate"], "similarity": None}}
    shown = search.chunk_excerpt(chunk, ["kate", "ferry"], 70)
    assert "The ferry leaves at noon" in shown and "What about Kate" not in shown


def test_a_fact_line_says_the_value_before_it():
    rows = [
        {"fact_id": 1, "previous_of": None, "subject": "Sam", "attribute": "address", "value": "Alder Row",
         "kind": "declared", "valid_from": "2020-08-15", "valid_to": None, "sources": [{"path": "facts.md"}]},
        {"fact_id": 2, "previous_of": None, "subject": "Sam", "attribute": "gp", "value": "Dr. Ansell",
         "kind": "declared", "valid_from": "2015-06-01", "valid_to": None, "sources": [{"path": "facts.md"}]},
        {"fact_id": 9, "previous_of": 1, "subject": "Sam", "attribute": "address", "value": "Fenwick Street",
         "kind": "declared", "valid_from": "2013-04-01", "valid_to": "2020-09-01", "sources": []},
    ]  # fmt: skip
    facts = search.with_previous(rows)
    assert [f["fact_id"] for f in facts] == [1, 2] and facts[0]["before"]["value"] == "Fenwick Street"
    text = search.fact_section(facts, "2026-12-05", "2026-12-05")
    assert (
        "- Sam, address: Alder Row (declared, since 2020-08-15; facts.md); "
        "before: Fenwick Street (2013-04-01 to 2020-09-01)"
    ) in text
    assert "- Sam, gp: Dr. Ansell (declared, since 2015-06-01; facts.md)\n" in text


def test_a_question_naming_a_person_asks_about_their_conversations():
    def window(chunk_id, friend, line, senders=None):
        chat = {"conversation_id": friend, "senders": senders or ["Sam Rivera", friend]}
        return {"chunk_id": chunk_id, "chat": chat, "body": f"2026-10-02 10:15 Sam Rivera: {line}"}

    pool = [
        window(1, "Aiden Duarte", "Booked, we fly out on 8 December."),
        window(2, "Gus Yilmaz", "Booked, we fly out on 1 October."),
        window(3, "Gus Yilmaz", "Aiden says the flights are cheap."),  # names Aiden in its text
        {"chunk_id": 4, "chat": None, "body": "Trip notes"},  # no chat window
        # only the owner's lines, in Aiden's conversation: a window of it all the same
        window(5, "Aiden Duarte", "Off to pack!", senders=["Sam Rivera"]),
    ]
    asked = "Where are Sam and Aiden going on their trip, and when do they fly?"
    assert search.other_conversations(pool, asked) == {2}
    assert search.other_conversations(pool, "Where is Aiden Duarte going?") == {2}
    # the owner takes part in every conversation: naming Sam narrows nothing
    assert search.other_conversations(pool, "Where is Sam going?") == set()
    assert search.other_conversations(pool, "Where are we going?") == set()
    weights = {"band": {}, "canonical": 1.1, "other_conversation": 0.5}
    elsewhere = dict(pool[1], band="current", other_conversation=True)
    assert search.priority(elsewhere, weights) == 0.5
    assert search.priority(dict(pool[0], band="current"), weights) == 1.0
