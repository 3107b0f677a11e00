"""plpy/structure.py as plain Python: the names an email's headers and a note's frontmatter give."""

import datetime

import structure

PEOPLE = {"people": "WITH", "Attendees": "ATTENDED", "author": "AUTHORED"}
PLACES = {"location": "LOCATED_IN"}


def test_header_people_reads_names_and_addresses_and_drops_what_names_nobody():
    value = '"Hale, Prudence" <P.Hale@Example.org>, bo@example.org, Not An Address, "x@y.org" <x@y.org>'
    assert structure.header_people(value, was_cut=False) == [
        ("Prudence Hale", "p.hale@example.org"),
        ("", "bo@example.org"),
        ("", "x@y.org"),
    ]
    # a header cut short may end in half an address: its last one is not trusted
    assert structure.header_people("Ann <ann@example.org>, Bob <bob@exa", was_cut=True) == [
        ("Ann", "ann@example.org")
    ]


def test_frontmatter_names_unwraps_links_and_splits_people_not_places():
    assert structure.frontmatter_names([["Prudence Hale"], "[[Bo Lund|Bo]], Iris Calder"], split=True) == [
        "Prudence Hale",
        "Bo Lund",
        "Iris Calder",
    ]
    assert structure.frontmatter_names("Lyon, France", split=False) == ["Lyon, France"]
    assert structure.frontmatter_names([2024, {"a": 1}, "ann@example.org", " -- ", "Ann"], split=True) == [
        "Ann"
    ]


def test_names_of_an_email_carry_roles_predicates_and_the_date():
    metadata = {
        "from": "Prudence Hale <p@example.org>",
        "to": "Bo Lund <bo@example.org>, ann@example.org",
        "cc": "Iris <iris@example.org>",
        "date": "2024-03-04T09:00:00+01:00",
        "date_source": "email Date header",
    }
    rows = structure.names(metadata, {}, PEOPLE, PLACES)
    assert [(r["role"], r["name"], r["key"], r["address"], r["predicate"]) for r in rows] == [
        ("from", "Prudence Hale", "prudence hale", "p@example.org", None),
        ("to", "Bo Lund", "bo lund", "bo@example.org", "WROTE_TO"),
        ("to", "", None, "ann@example.org", "WROTE_TO"),
        ("cc", "Iris", "iris", "iris@example.org", "COPIED"),
    ]
    assert {r["at"] for r in rows} == {datetime.datetime(2024, 3, 4, 8, 0, tzinfo=datetime.UTC)}
    assert {r["source"] for r in rows} == {"email"}


def test_names_of_a_note_follow_the_configured_keys_without_case():
    frontmatter = {"attendees": ["Ann", "Bo"], "Author": "Cy", "location": "[[Larkhaven]]", "tags": ["Dee"]}
    rows = structure.names({"title": "Minutes"}, frontmatter, PEOPLE, PLACES)
    assert [(r["role"], r["type"], r["name"], r["predicate"]) for r in rows] == [
        ("attendees", "Person", "Ann", "ATTENDED"),
        ("attendees", "Person", "Bo", "ATTENDED"),
        ("Author", "Person", "Cy", "AUTHORED"),
        ("location", "Place", "Larkhaven", "LOCATED_IN"),
    ]
    assert structure.names({}, frontmatter, {}, {}) == []


def test_a_date_that_is_no_email_date_is_not_the_message_time():
    assert structure.message_time({"date": "2024-03-04", "date_source": "frontmatter"}) is None
    assert structure.message_time({"date": "Tue, garbled", "date_source": "email Date header"}) is None
    naive = structure.message_time({"date": "2024-03-04T10:00:00", "date_source": "email Date header"})
    assert naive == datetime.datetime(2024, 3, 4, 10, 0, tzinfo=datetime.UTC)
