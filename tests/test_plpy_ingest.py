"""plpy ingestion modules as plain Python: chunking, banding, routing, deference, planning."""

import datetime
import itertools

import banding
import chunking
import deference
import document_plan
import pytest
import routing

TODAY = datetime.date(2026, 11, 29)
WORKSPACES = ["administrative", "creative", "personal", "technical"]
KEYWORDS = {
    "technical": ["postgres", "vacuum", "index", "replication", "server"],
    "creative": ["poem", "stanza", "moon", "chapter"],
    "personal": ["friend", "walk", "felt", "dinner"],
    "administrative": ["invoice", "tax", "insurance", "due"],
}
RULES = [
    {"folder": "diary", "workspace": "personal"},
    {"folder": "work", "workspace": "technical"},
    {"folder": "admin", "workspace": "administrative"},
]


# -- chunking ---------------------------------------------------------------------------


def _paragraphs(n, size):
    return "\n\n".join(f"p{i} " + "x" * (size - 4 - len(str(i))) for i in range(n))


def test_chunks_hold_whole_paragraphs_within_the_size():
    text = _paragraphs(10, 300)
    spans = chunking.split_text(text, 1000, 0)
    assert all(e - s <= 1000 for s, e in spans)
    for s, e in spans:  # every chunk starts and ends at a paragraph edge
        assert text[s:].startswith("p")
        assert e == len(text) or text[e:].startswith("\n\n")
    assert "".join(text[s:e] for s, e in spans).replace("\n", "") == text.replace("\n", "")


def test_overlap_repeats_trailing_paragraphs():
    text = _paragraphs(8, 200)
    spans = chunking.split_text(text, 700, 250)
    assert len(spans) > 1
    for (_s1, e1), (s2, _e2) in itertools.pairwise(spans):
        assert s2 < e1  # the next chunk starts inside the previous one
        assert e1 - s2 <= 250


def test_a_paragraph_longer_than_the_size_is_cut_at_sentences():
    sentence = "This sentence is exactly fifty characters long ok. "
    text = (sentence * 40).strip()
    spans = chunking.split_text(text, 500, 0)
    assert all(e - s <= 500 for s, e in spans)
    assert all(text[s:e].endswith(".") for s, e in spans)
    assert sum(e - s for s, e in spans) >= len(text) - len(spans)


def test_utf8_spans_are_the_same_spans_on_the_encoded_text():
    text = "".join(f"p{i} caf\u00e9 \u65e5\u672c \U0001f600 naive.\n\n" * (i % 5 + 1) for i in range(300))
    spans = chunking.split_text(text, 200, 40) + chunking.split_text(text, 900, 100)
    encoded = text.encode("utf-8")
    offsets = chunking.utf8_spans(text, spans)
    assert [(len(text[:s].encode()), len(text[:e].encode())) for s, e in spans] == offsets
    assert all(encoded[bs:be].decode() == text[s:e] for (s, e), (bs, be) in zip(spans, offsets, strict=True))
    assert chunking.utf8_spans("plain ascii", [(0, 5), (6, 11)]) == [(0, 5), (6, 11)]


def test_unbreakable_text_is_cut_hard_and_empty_text_has_no_chunks():
    assert chunking.split_text("a" * 2500, 1000, 0) == [(0, 1000), (1000, 2000), (2000, 2500)]
    assert chunking.split_text("  \n\n \n", 1000, 100) == []


# -- banding ----------------------------------------------------------------------------


def _band(frontmatter=None, text="", path="notes/x.md", canonical=False, mtime=None):
    mtime_ns = (
        int(datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC).timestamp() * 1e9) if mtime is None else mtime
    )
    return banding.band_for(frontmatter or {}, text, path, mtime_ns, canonical, TODAY, 365, 1095)


def test_frontmatter_band_wins_over_everything():
    b = _band({"band": "archival", "date": "2026-11-01"}, "Written 2026-11-20.")
    assert (b["band"], b["source"]) == ("archival", "frontmatter")


def test_written_date_authority_order():
    assert _band({"date": "2013-05-01"}, "2026-11-01 in text", "2020/x.md")["written_at"] == "2013-05-01"
    b = _band({}, "Tuesday, 4 March 2014\n\nDear diary", "2020/x.md")
    assert (b["written_at"], b["band"]) == ("2014-03-04", "archival")
    assert "date in first lines '4 March 2014'" in b["reason"]
    assert _band({}, "March 4th, 2014 was cold")["written_at"] == "2014-03-04"
    b = _band({}, "no dates here", "diary/2019/notes.md")
    assert (b["written_at"], b["reason"].split("(")[1].split(")")[0]) == ("2019-07-01", "year in path '2019'")
    assert _band({}, "", "diary/2019/2019-02-03.md")["written_at"] == "2019-02-03"
    b = _band({}, "nothing", "x.md")
    assert (b["written_at"], b["band"]) == ("2026-11-01", "current")
    assert "file modification time" in b["reason"]


def test_future_dates_in_text_are_ignored():
    assert _band({}, "Renewal due 2031-01-01. Written 2024-06-01.")["written_at"] == "2024-06-01"


def test_band_windows():
    assert _band({"date": "2026-01-01"})["band"] == "current"
    assert _band({"date": "2024-06-01"})["band"] == "recent"
    assert _band({"date": "2019-06-01"})["band"] == "archival"


def test_canonical_document_is_never_demoted_by_inference():
    assert _band({"date": str(TODAY - datetime.timedelta(days=700))}, canonical=True)["band"] == "current"
    b = _band({"date": "2015-06-01"}, canonical=True)
    assert b["band"] == "current"
    assert "canonical" in b["reason"]
    assert _band({"date": "2015-06-01", "band": "archival"}, canonical=True)["band"] == "archival"


# -- routing ----------------------------------------------------------------------------


def _route(path="inbox/x.md", text="", frontmatter=None, review=None, forced=None, threshold=0.6):
    return routing.route(
        path, text, frontmatter or {}, review, forced, WORKSPACES, RULES, KEYWORDS, threshold
    )


def test_routing_authority_order():
    tech_text = "postgres vacuum index replication server"
    assert _route("diary/x.md", tech_text, {"workspace": "Creative"})["method"] == "frontmatter"
    assert (
        _route(
            "diary/x.md",
            tech_text,
            {"workspace": "creative"},
            review={"decision": "reassigned", "workspace": "administrative"},
        )["workspace"]
        == "administrative"
    )
    assert _route("diary/x.md", tech_text, forced="creative")["workspace"] == "creative"
    d = _route("Diary/2014/x.md", tech_text)
    assert (d["workspace"], d["method"]) == ("personal", "folder")
    d = _route("inbox/x.md", tech_text)
    assert (d["workspace"], d["method"]) == ("technical", "classifier")
    assert d["confidence"] >= 0.6


def test_unknown_frontmatter_workspace_waits_in_quarantine_whatever_else_would_place_it():
    # The person said where it goes and that place is missing: no folder rule, --workspace or
    # default workspace overrides that; a person decides (exo quarantine reassign).
    for kwargs in ({}, {"forced": "creative"}):
        d = routing.route(
            "work/x.md", "", {"workspace": "Nowhere"}, None, kwargs.get("forced"),
            WORKSPACES, RULES, KEYWORDS, 0.6, None, "personal",
        )  # fmt: skip
        assert (d["workspace"], d["doubt"]) == (None, "unknown_workspace")
        assert d["reasons"] == ["frontmatter workspace 'nowhere' does not exist"]
    review = {"decision": "reassigned", "workspace": "creative"}
    assert _route("work/x.md", "", {"workspace": "nowhere"}, review=review)["workspace"] == "creative"


def test_an_untrained_router_sends_what_it_is_unsure_of_to_the_default_workspace():
    def default(text, workspace="personal", model=None):
        return routing.route(
            "inbox/x.md", text, {}, None, None, WORKSPACES, RULES, KEYWORDS, 0.6, model, workspace
        )

    d = default("milk eggs bread, and a walk with the dog")
    assert (d["workspace"], d["method"]) == ("personal", "default")
    assert d["reasons"][-1] == "the router has not been trained yet: the default workspace personal"
    assert "doubt" not in d
    assert default("", "creative")["workspace"] == "creative"
    # A confident keyword route still routes by its words.
    assert default("postgres vacuum index replication server")["method"] == "classifier"
    # A default workspace that does not exist: quarantine, and the reasons say so.
    gone = default("milk eggs bread, and a walk with a friend", "garden")
    assert (gone["workspace"], gone["doubt"]) == (None, "keywords_unsure")
    assert gone["reasons"][-1] == "the default workspace 'garden' does not exist (routing.default_workspace)"
    assert default("", None)["doubt"] == "no_keywords"


def test_low_confidence_goes_to_quarantine_with_candidates():
    d = _route("inbox/x.md", "milk eggs bread, and a walk with the dog")
    assert d["workspace"] is None
    assert d["candidates"][0]["workspace"] == "personal"
    assert any("below threshold" in r for r in d["reasons"])
    mixed = _route("inbox/x.md", "postgres index invoice tax poem moon friend walk")
    assert mixed["workspace"] is None
    assert _route("inbox/x.md", "")["reasons"] == ["no workspace keywords found"]


# -- deference --------------------------------------------------------------------------

SUBJECTS = deference.compile_subjects(
    [{"subject": "Walter Rivera", "aliases": ["Grandpa Walter", "Grandpa"]}]
)
CUES = ["funeral", "died", "miss him"]


def test_subject_with_a_cue_is_charged_and_without_is_not():
    assert deference.charged_marks("Grandpa died in March.", SUBJECTS, CUES, []) == [
        {"subject": "Walter Rivera", "rule": "cue 'died' with 'Grandpa'"}
    ]
    assert deference.charged_marks("Grandpa Walter taught me to solder.", SUBJECTS, CUES, []) == []
    assert deference.charged_marks("The funeral of a stranger.", SUBJECTS, CUES, []) == []
    assert deference.charged_marks("I miss   him, walter rivera.", SUBJECTS, CUES, []) != []
    assert deference.charged_marks("Grandpas and funerals", SUBJECTS, CUES, []) == []  # whole words only


def test_frontmatter_charges_every_chunk_even_without_names():
    assert deference.charged_marks("A quiet day.", SUBJECTS, CUES, ["grandpa walter"]) == [
        {"subject": "Walter Rivera", "rule": "frontmatter"}
    ]
    assert deference.charged_marks("A quiet day.", SUBJECTS, CUES, ["Someone Else"]) == [
        {"subject": "Someone Else", "rule": "frontmatter"}
    ]


# -- the whole plan ---------------------------------------------------------------------

SETTINGS = {
    "workspaces": WORKSPACES,
    "routing.folder_rules": RULES,
    "routing.keywords": KEYWORDS,
    "routing.confidence_threshold": 0.6,
    "banding.current_days": 365,
    "banding.recent_days": 1095,
    "chunking.chunk_chars": 300,
    "chunking.overlap_chars": 50,
    "chunking.window_chars": 1000,
    "chunking.window_overlap_chars": 100,
    "deference.cues": CUES,
}


def test_plan_routes_bands_chunks_and_marks():
    text = "4 March 2017\n\n" + "\n\n".join(
        ["We walked by the river and talked about nothing for a long, long time \u2014 caf\u00e9."] * 8
        + ["Grandpa died this morning. The funeral is Friday."]
    )
    doc = {
        "path": "diary/2017/x.md",
        "frontmatter": {},
        "review": None,
        "forced_workspace": None,
        "mtime_ns": 0,
    }
    planned = document_plan.plan(
        doc, text, SETTINGS, [{"subject": "Walter Rivera", "aliases": ["Grandpa"]}], TODAY
    )
    assert planned["route"]["workspace"] == "personal"
    assert planned["band"]["band"] == "archival"
    assert planned["band"]["written_at"] == "2017-03-04"
    charged = [c for c in planned["chunks"] if c["charged"]]
    assert len(charged) == 1 and "Grandpa died" in text[charged[0]["start"] : charged[0]["end"]]
    assert len(planned["chunks"]) > 1 and len(planned["windows"]) == 1
    assert planned["canonical"] is False
    encoded = text.encode()
    for piece in planned["chunks"] + planned["windows"]:
        assert (
            encoded[piece["byte_start"] : piece["byte_end"]].decode() == text[piece["start"] : piece["end"]]
        )


@pytest.mark.parametrize(
    ("order", "expected"), [(None, "2017-03-04"), ("dmy", "2017-03-04"), ("mdy", "2017-04-03")]
)
def test_plan_reads_numeric_dates_by_the_banding_setting(order, expected):
    doc = {"path": "diary/x.md", "frontmatter": {}, "mtime_ns": 0}
    settings = SETTINGS if order is None else {**SETTINGS, "banding.numeric_date_order": order}
    planned = document_plan.plan(doc, "04/03/2017\n\nWe walked by the river.", settings, [], TODAY)
    assert planned["band"]["written_at"] == expected


@pytest.mark.parametrize("value", [True, "true", "yes"])
def test_plan_reads_canonical_from_frontmatter(value):
    doc = {"path": "admin/facts.md", "frontmatter": {"canonical": value, "date": "2015-06-01"}, "mtime_ns": 0}
    planned = document_plan.plan(doc, "facts", SETTINGS, [], TODAY)
    assert planned["canonical"] is True
    assert planned["band"]["band"] == "current"


def test_plan_of_a_quarantined_document_has_no_chunks():
    doc = {"path": "inbox/x.md", "frontmatter": {}, "mtime_ns": 0}
    planned = document_plan.plan(doc, "milk eggs bread", SETTINGS, [], TODAY)
    assert planned == {"route": planned["route"]} and planned["route"]["workspace"] is None
