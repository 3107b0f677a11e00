"""Extraction acceptance in the database (issue 28): exo_private.merge_extraction keeps only what
plpy/extraction_acceptance.py accepts, so a writer that skips the worker gets the worker's rules
(grounding, names, types, caps), and what the worker already accepted passes again unchanged."""

from __future__ import annotations

import json

from psycopg.types.json import Jsonb
from support.graph import add_document, generation

from exocortex.extraction import llm as extraction

acceptance = extraction.acceptance

WINDOW = (
    "Prudence Hale signed the lease with Hale Lettings on Harbour Road. Hale said the Meridale "
    "Mutual policy covers the flat. Zoë Brennan from Larkhaven came too; Zoë paid on 12 March 2016."
)

# A reply as a small model writes it: junk beside good items, types to correct, a bare surname,
# a relation end the entity list lacks, attributes grounded and not.
REPLY = {
    "entities": [
        {"name": "Prudence Hale", "type": "Person"},
        {"name": "Hale", "type": "Person"},
        {"name": "Meridale Mutual", "type": "Person"},
        {"name": "ZOË BRENNAN", "type": "Person"},
        {"name": "Unknown", "type": "Person"},
        {"name": "2016", "type": "Person"},
        {"name": "Atlantis", "type": "Place"},
        {"name": "Harbour Road", "type": "Topic", "extra": 1},
    ],
    "relations": [
        {"subject": "Hale", "predicate": "signed the lease with", "object": "Hale Lettings"},
        {"subject": "Zoë Brennan", "predicate": "from", "object": "Larkhaven"},
        {"subject": "Prudence Hale", "predicate": "knows", "object": "Nobody Here"},
        {"subject": "Prudence Hale", "predicate": "knows", "object": "Prudence Hale"},
    ],
    "attributes": [
        {"subject": "Zoë", "attribute": "Paid On", "value": "12 March 2016."},
        {"subject": "Prudence Hale", "attribute": "pet name", "value": "Biscuit"},
    ],
}


def sql_accept(conn, data: dict, max_entities: int = 12, max_relations: int = 12) -> dict:
    return conn.execute(
        "select exo_private.accept_extraction(%s, %s, %s, %s, %s, %s)",
        (
            WINDOW,
            Jsonb(data.get("entities", [])),
            Jsonb(data.get("relations", [])),
            Jsonb(data.get("attributes", [])),
            max_entities,
            max_relations,
        ),
    ).fetchone()[0]


def test_what_the_worker_accepted_passes_again_unchanged():
    first = extraction.parse(json.dumps(REPLY), WINDOW, 12, 12)
    again = acceptance.accept(first.kept(), WINDOW, 12, 12)
    assert first.entities and first.relations and first.attributes
    assert again.kept() == first.kept()
    assert again.dropped == {}


def test_the_database_accepts_as_the_worker_does(db):
    kept = extraction.parse(json.dumps(REPLY), WINDOW, 12, 12)
    with db.connect("exo_writer") as conn:
        assert sql_accept(conn, REPLY) == {
            **kept.kept(),
            "dropped": dict(kept.dropped),
            "recovered": dict(kept.recovered),
        }
        assert sql_accept(conn, REPLY, max_entities=1)["entities"] == [
            {"name": "Prudence Hale", "type": "Person", "aliases": [{"surface": "Hale", "how": "surname"}]}
        ]


def test_a_writer_that_skips_the_worker_gets_its_rules(db):
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "personal", [WINDOW])
        merged = conn.execute(
            "select exo_private.merge_extraction(%s, %s, %s, %s, %s)",
            (
                doc.windows[0],
                generation(conn, "personal"),
                Jsonb(REPLY["entities"]),
                Jsonb(REPLY["relations"]),
                Jsonb(REPLY["attributes"]),
            ),
        ).fetchone()[0]
        entities = conn.execute("select name, type::text from exo_private.entities order by name").fetchall()
        relations = conn.execute(
            """select s.name, r.predicate_raw, o.name from exo_private.relations r
               join exo_private.entities s on s.id = r.subject_id
               join exo_private.entities o on o.id = r.object_id order by 1, 3"""
        ).fetchall()
    # kept as the window writes them, typed by their cue words; the placeholder, the number
    # typed as a person, the ungrounded place and the malformed item are not stored
    assert entities == [
        ("Hale Lettings", "Org"),
        ("Larkhaven", "Place"),
        ("Meridale Mutual", "Org"),
        ("Prudence Hale", "Person"),
        ("Zoë Brennan", "Person"),
    ]
    # "Hale" is Prudence Hale's surname; the dangling and self relations are refused
    assert relations == [
        ("Prudence Hale", "signed the lease with", "Hale Lettings"),
        ("Zoë Brennan", "from", "Larkhaven"),
    ]
    assert merged["refused"] == {
        "placeholder_entity": 1,
        "number_as_name": 1,
        "ungrounded_entity": 1,
        "malformed_entity": 1,
        "dangling_relation": 1,
        "self_relation": 1,
        "ungrounded_value": 1,
    }


def test_common_words_are_stored_as_topics_not_people(db):
    """A heading's common words a writer calls people: written as a phrase of common words, or
    capitalised words the worker's NER found no proper noun in (p_ner "Common"), they are topics."""
    window = "# Car purchase\nBought the car from Quayside Motors. Pet insurance: Meridale Mutual."
    with db.connect("exo_writer") as conn:
        doc = add_document(conn, "personal", [window])
        conn.execute(
            "select exo_private.merge_extraction(%s, %s, %s, %s, '[]', %s)",
            (
                doc.windows[0],
                generation(conn, "personal"),
                Jsonb(
                    [
                        {"name": "Car purchase", "type": "Person"},
                        {"name": "Pet", "type": "Person"},
                        {"name": "Quayside Motors", "type": "Org"},
                    ]
                ),
                Jsonb([{"subject": "Pet", "predicate": "insured by", "object": "Meridale Mutual"}]),
                Jsonb({"pet": "Common", "car": "Common", "quayside motors": "Org"}),
            ),
        )
        entities = conn.execute("select name, type::text from exo_private.entities order by name").fetchall()
    assert entities == [
        ("Car purchase", "Topic"),
        ("Meridale Mutual", "Org"),
        ("Pet", "Topic"),
        ("Quayside Motors", "Org"),
    ]
