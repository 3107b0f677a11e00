"""plpy/fact_choice.py: a packet shows the facts the question is about, not the owner's whole file."""

from __future__ import annotations

import fact_choice

SETTINGS = {
    "packet.fact_similarity": 0.4,
    "packet.sensitive_facts": ["account", "iban", "insurance", "policy", "blood", "microchip"],
}


def fact(attribute, value, subject="Sam Rivera", document_id=1):
    return {
        "subject": subject,
        "attribute": attribute,
        "value": value,
        "sources": [{"document_id": document_id}],
    }


FILE = [
    fact("address", "27 Alder Row, Larkhaven (since 15 August 2020)"),
    fact("blood_type", "O negative"),
    fact("gp", "Dr. Ansell, Larkhaven Health Centre"),
    fact("manager", "Tomas Okafor"),
    fact("car", "2014 Halvard Tern hatchback, dark green"),
    fact("car_insurance", "Meridale Mutual, policy POL-000-1234"),
    fact("current_account", "IBAN XX00 0000 0000 0000"),
    fact("dog", "Pixel, terrier mix; microchip 000-000"),
    fact("lives_in", "Larkhaven"),
]


def chosen(query, facts=FILE, passages=(), meaning=None):
    report = {}
    shown = fact_choice.facts_about(query, facts, list(passages), report, SETTINGS, meaning)
    return [f["attribute"] for f in shown], report["facts"]


def test_a_question_about_one_thing_gets_the_lines_whose_attribute_it_names():
    assert chosen("Who is my manager?")[0] == ["manager"]
    # "live" and "lives" are one word; the owner's name is no word of the question's
    assert chosen("Where does Sam Rivera live now?")[0] == ["lives_in"]
    attributes, report = chosen("What car do I drive?")
    # car_insurance shares "car", but is sensitive: only "insurance" or "policy" asks for it
    assert attributes == ["car"]
    assert report == {"shown": 1, "not_about_question": len(FILE) - 1, "by": {"words": 1}}


def test_a_value_counts_by_two_shared_words():
    assert chosen("Is Halvard Tern hatchback a good car to keep?")[0] == ["car"]
    # one shared word (a place most values name) is not enough
    assert chosen("What is on in Larkhaven this weekend?")[0] == []


def test_sensitive_lines_only_when_asked_for_by_their_own_words():
    assert chosen("What is my blood type?")[0] == ["blood_type"]
    assert chosen("What is my IBAN?")[0] == ["current_account"]
    assert chosen("What is my car insurance policy?")[0] == ["car", "car_insurance"]
    # a profile holds none of them
    profile, report = chosen("Tell me about myself")
    assert profile == ["address", "gp", "manager", "car", "lives_in"]
    assert report["by"] == {"profile": 5}
    assert chosen("Who is Sam Rivera?")[0] == profile


def test_meaning_finds_a_line_no_word_of_the_question_names():
    similar = {
        "What is my gp?": 0.25,
        "gp: Dr. Ansell, Larkhaven Health Centre": 0.51,
        "What is my blood type?": 0.22,
    }

    def meaning(query, texts):
        assert query == "Who is my doctor?"
        return [similar.get(t, 0.1) for t in texts]

    assert chosen("Who is my doctor?", meaning=meaning) == (
        ["gp"],
        {"shown": 1, "not_about_question": len(FILE) - 1, "by": {"meaning": 1}},
    )
    # within FACT_MARGIN of the best only: a second line at 0.46 is too far below 0.6
    similar.update({"gp: Dr. Ansell, Larkhaven Health Centre": 0.6, "What is my manager?": 0.46})
    assert chosen("Who is my doctor?", meaning=meaning)[0] == ["gp"]
    similar.update({"What is my manager?": 0.52})
    assert chosen("Who is my doctor?", meaning=meaning)[0] == ["gp", "manager"]
    # a sensitive line by the question that asks for it, never by its value
    similar.update({"blood type: O negative": 0.7})
    assert "blood_type" not in chosen("Who is my doctor?", meaning=meaning)[0]
    # no model at hand: the other rules still choose
    assert chosen("Who is my doctor?", meaning=lambda q, t: None)[0] == []


def test_a_sensitive_line_by_meaning_only_where_it_is_the_line_most_like_the_question():
    # "Where am I living now?" is as close to "What is my current account?" as the margin lets a
    # second line be: the account number is not what it asks for
    similar = {"What is my address?": 0.45, "What is my current account?": 0.42}

    def meaning(query, texts):
        return [similar.get(t, 0.1) for t in texts]

    assert chosen("Where am I living now?", meaning=meaning)[0] == ["address", "lives_in"]
    similar.update({"What is my current account?": 0.5})
    assert chosen("Where am I living now?", meaning=meaning)[0] == ["address", "current_account", "lives_in"]


def test_evidence_from_another_document_shows_the_value_it_states():
    diary = {
        "document_id": 7,
        "body": "Moving day, finally. We carried boxes all afternoon. The new flat is at 27 Alder Row, up the hill.",
    }
    assert chosen("Where is the new flat?", passages=[diary])[0] == ["address"]
    # the sentence the excerpt centres on states it, not another one of the passage
    assert chosen("How long did we carry boxes?", passages=[diary])[0] == []
    # the fact's own document states every fact of it: no evidence of what is asked
    own = dict(diary, document_id=1)
    assert chosen("Where is the new flat?", passages=[own])[0] == []
    # never a sensitive line
    card = {"document_id": 7, "body": "Paid the vet; Pixel the terrier mix had the microchip checked."}
    assert chosen("What happened at the vet?", passages=[card])[0] == []
    # a line of the answering lines that holds no word of the question states nothing asked
    lines = {"document_id": 7, "body": "Flat\nThe new flat is at 27 Alder Row\nRent due on the 1st"}
    assert chosen("Where is the new flat?", passages=[lines])[0] == ["address"]
    assert chosen("When is the rent due?", passages=[lines])[0] == []


def test_withheld_facts_stay_as_hints_whatever_the_question():
    hint = {"withheld": {"facts": 2, "subject": "Walter Rivera", "how": "ask with bridge"}}
    report = {}
    rows = fact_choice.facts_about("What car do I drive?", [*FILE, hint], [], report, SETTINGS)
    assert [r.get("attribute") for r in rows] == ["car", None] and rows[-1] is hint
    assert report["facts"]["shown"] == 1


def test_a_value_is_sensitive_by_its_words_only_beside_a_number():
    # "Health" in a surgery's name is no health data; "IBAN" beside digits is an account
    assert chosen("Tell me about myself")[0][1] == "gp"
    assert "current_account" not in chosen("Tell me about myself")[0]
    assert chosen("Where is my health centre?")[0] == ["gp"]


def test_meaning_compares_the_question_with_the_one_that_asks_for_each_line():
    asked = []

    def meaning(query, texts):
        asked.append(texts[:2])
        return [0.0] * len(texts)

    chosen("Where do I live?", facts=[FILE[0]], meaning=meaning)
    priya = fact("lives_in", "Leeds", subject="Priya Okafor")
    chosen("Where is Priya based?", facts=[priya], meaning=meaning)
    assert asked == [
        ["What is my address?", "address: 27 Alder Row, Larkhaven (since 15 August 2020)"],
        ["What is Priya Okafor's lives in?", "lives in: Leeds"],
    ]


def test_an_extracted_fact_a_later_passage_may_have_changed_is_not_stated_as_current():
    said = dict(
        fact("manager", "Priya Nair", document_id=3), kind="extracted", valid_from="2025-07-01 00:00:00+00"
    )
    later = {"document_id": 9, "written_at": "2026-02-01", "body": "First 1:1 with Helen Achebe, my manager."}
    earlier = dict(later, written_at="2025-06-01")
    other = dict(later, body="Booked the dentist for Friday.")
    report = {}
    assert fact_choice.facts_about("Who is my manager?", [said], [later], report, SETTINGS) == []
    assert report["facts"] == {"shown": 0, "not_about_question": 0, "by": {}, "not_current": 1}
    for passages in ([earlier], [other], []):
        assert fact_choice.facts_about("Who is my manager?", [said], passages, {}, SETTINGS) == [said]
    # a declared fact is the file's word: a later passage does not unseat it
    declared = dict(said, kind="declared")
    assert fact_choice.facts_about("Who is my manager?", [declared], [later], {}, SETTINGS) == [declared]
