"""Extraction request and reply handling, as plain Python (no model)."""

import json

import pytest

from exocortex.extraction import llm as extraction

WINDOW = "Iris Calder works at Northwind Labs in Larkhaven.\nSam Rivera met   Iris Calder in 2016."


def reply(entities, relations, attributes=()) -> str:
    return json.dumps({"entities": entities, "relations": relations, "attributes": list(attributes)})


def test_response_format_is_closed_required_and_capped():
    fmt = extraction.response_format(30, 20)
    schema = fmt["json_schema"]["schema"]
    assert fmt["type"] == "json_schema"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["entities", "relations", "attributes"]
    assert schema["properties"]["entities"]["maxItems"] == 30
    assert schema["properties"]["relations"]["maxItems"] == 20
    assert schema["properties"]["attributes"]["maxItems"] == 20  # the relations' cap
    attribute = schema["properties"]["attributes"]["items"]
    assert attribute["additionalProperties"] is False
    assert set(attribute["required"]) == {"subject", "attribute", "value"}
    entity = schema["properties"]["entities"]["items"]
    assert entity["additionalProperties"] is False
    assert set(entity["required"]) == {"name", "type"}
    assert entity["properties"]["type"]["enum"] == list(extraction.acceptance.ENTITY_TYPES)


@pytest.mark.parametrize(
    "wrapped",
    [
        "{body}",
        "Sure! Here is the JSON:\n```json\n{body}\n```\nHope that helps {{not json}}",
        "{{broken\n{body}",
        'prefix "quote {{" {body}',
    ],
)
def test_the_outermost_object_is_found_in_prose_and_fences(wrapped):
    body = reply([{"name": "Iris Calder", "type": "Person"}], [])
    assert extraction.outermost_json_object(wrapped.format(body=body)) == json.loads(body)


def test_braces_inside_strings_do_not_confuse_the_scan():
    text = 'x {"entities": [{"name": "a } b", "type": "Topic"}], "relations": []} y'
    assert extraction.outermost_json_object(text)["entities"][0]["name"] == "a } b"
    assert extraction.outermost_json_object("no json here") is None
    assert extraction.outermost_json_object("[1, 2]") is None


def test_malformed_items_are_dropped_and_the_rest_kept():
    content = reply(
        [
            {"name": "Iris Calder", "type": "Person"},
            {"name": "Northwind Labs", "type": "Company"},  # not a type
            {"name": "Larkhaven"},  # no type
            "Sam Rivera",  # not an object
            {"name": "Larkhaven", "type": "Place", "extra": 1},  # closed object
            {"name": "Northwind Labs", "type": "Org"},
        ],
        [
            {"subject": "Iris Calder", "predicate": "works at", "object": "Northwind Labs"},
            {"subject": "Iris Calder", "predicate": "works at"},
        ],
    )
    result = extraction.parse(content, WINDOW, 30, 30)
    assert result.entities == [
        {"name": "Iris Calder", "type": "Person"},
        {"name": "Northwind Labs", "type": "Org"},
    ]
    assert result.relations == [
        {"subject": "Iris Calder", "predicate": "works at", "object": "Northwind Labs"}
    ]
    assert result.dropped == {"malformed_entity": 4, "malformed_relation": 1}


def test_grounding_drops_invented_names_and_their_relations():
    content = reply(
        [
            {"name": "Iris  calder", "type": "Person"},  # case and spacing differ: grounded, kept as written
            {"name": "Cody Rivera", "type": "Person"},  # not in the text
            {"name": "Sam Rivera", "type": "Person"},
        ],
        [
            {"subject": "Sam Rivera", "predicate": "met", "object": "Iris Calder"},
            {"subject": "Cody Rivera", "predicate": "knows", "object": "Sam Rivera"},
            {"subject": "Sam Rivera", "predicate": "met", "object": "iris calder"},  # duplicate
        ],
    )
    result = extraction.parse(content, WINDOW, 30, 30)
    assert [e["name"] for e in result.entities] == ["Iris Calder", "Sam Rivera"]
    assert result.relations == [{"subject": "Sam Rivera", "predicate": "met", "object": "Iris Calder"}]
    assert result.dropped == {"ungrounded_entity": 1, "dangling_relation": 1, "duplicate_relation": 1}


def test_caps_and_missing_json_are_counted():
    many = [{"name": n, "type": "Topic"} for n in ["Iris", "Sam", "Larkhaven", "Northwind"]]
    result = extraction.parse(reply(many, []), WINDOW, 2, 30)
    assert len(result.entities) == 2 and result.dropped["over_cap"] == 2
    nothing = extraction.parse("I cannot help with that.", WINDOW, 30, 30)
    assert (nothing.entities, nothing.relations, nothing.dropped) == ([], [], {"no_json": 1})
    odd = extraction.parse('{"entities": "none", "relations": null}', WINDOW, 30, 30)
    assert (odd.entities, odd.relations) == ([], [])


def test_messages_carry_the_window():
    messages = extraction.messages(WINDOW)
    assert messages[0]["role"] == "system" and "JSON" in messages[0]["content"]
    assert WINDOW in messages[1]["content"]
    assert "attributes" in messages[0]["content"]


def test_a_reply_cut_off_by_max_tokens_keeps_its_complete_items():
    content = (
        '{\n  "entities": [\n    {"name": "Iris Calder", "type": "Person"},\n    {"name": "Northwind Labs", "type": "Org"},'
        '\n    {"name": "Sam Ri'
    )
    result = extraction.parse(content, WINDOW, 30, 30)
    assert result.entities == [
        {"name": "Iris Calder", "type": "Person"},
        {"name": "Northwind Labs", "type": "Org"},
    ]
    assert result.dropped == {"truncated": 1}
    # An inner object of a cut-off reply is never mistaken for the whole reply.
    assert extraction.outermost_json_object(content, ("entities", "relations")) is None


def test_the_reply_object_is_the_one_with_the_expected_keys():
    content = 'notes {"a": 1} then ' + reply([{"name": "Sam Rivera", "type": "Person"}], [])
    assert extraction.parse(content, WINDOW, 30, 30).entities == [{"name": "Sam Rivera", "type": "Person"}]


# -- attributes: facts the window states ----------------------------------------------------

ENTITIES = [
    {"name": "Iris Calder", "type": "Person"},
    {"name": "Sam Rivera", "type": "Person"},
    {"name": "Northwind Labs", "type": "Org"},
]


def attr(subject, attribute, value) -> dict:
    return {"subject": subject, "attribute": attribute, "value": value}


@pytest.mark.parametrize(
    ("item", "kept"),
    [
        (
            attr("Iris Calder", "Works at", "Northwind Labs"),
            attr("Iris Calder", "works_at", "Northwind Labs"),
        ),
        (
            attr("iris  CALDER.", "works-at", '"Northwind Labs."'),
            attr("Iris Calder", "works_at", "Northwind Labs"),
        ),
        (attr("Calder", "lives in", "Larkhaven"), attr("Iris Calder", "lives_in", "Larkhaven")),  # surname
        (attr("sam", "met in", "2016"), attr("Sam Rivera", "met_in", "2016")),  # first name
        # the value as the window writes it (case, spacing)
        (attr("Northwind Labs", "in", "larkhaven"), attr("Northwind Labs", "in", "Larkhaven")),
        (attr("Sam Rivera", "Met ", "iris calder"), attr("Sam Rivera", "met", "Iris Calder")),
        (attr("Larkhaven", "kind", "Labs"), attr("Larkhaven", "kind", "Labs")),  # grounded, not an entity
    ],
)
def test_an_attribute_of_a_named_or_grounded_subject_with_a_grounded_value_is_kept(item, kept):
    result = extraction.parse(reply(ENTITIES, [], [item]), WINDOW, 30, 30)
    assert (result.attributes, result.dropped) == ([kept], {})
    assert result.stats()["attributes"] == 1


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (attr("Iris Calder", "works at", "Brightwave"), "ungrounded_value"),  # not in the window
        (attr("Iris Calder", "works at", "Lab"), "ungrounded_value"),  # only inside a word ("Labs")
        (attr("Iris Calder", "met in", "201"), "ungrounded_value"),
        (attr("Cody", "lives in", "Larkhaven"), "ungrounded_subject"),
        (attr("Rivera Calder", "lives in", "Larkhaven"), "ungrounded_subject"),
        (attr("She", "works at", "Northwind Labs"), "placeholder_subject"),
        (attr("subject", "works at", "Northwind Labs"), "placeholder_subject"),
        (attr("Iris Calder", "name", "value"), "placeholder_value"),
        (attr("Iris Calder", "role", "Unknown."), "placeholder_value"),
        (attr("Iris Calder", " - ", "Larkhaven"), "malformed_attribute"),
        ({"subject": "Iris Calder", "attribute": "works at"}, "malformed_attribute"),
        ({**attr("Iris Calder", "works at", "Northwind Labs"), "since": "2016"}, "malformed_attribute"),
        (attr("Iris Calder", "works at", "x" * 81), "malformed_attribute"),
    ],
)
def test_an_attribute_that_is_not_grounded_is_dropped_with_its_reason(item, reason):
    result = extraction.parse(reply(ENTITIES, [], [item]), WINDOW, 30, 30)
    assert (result.attributes, result.dropped) == ([], {reason: 1})


def test_a_first_name_two_people_share_names_neither():
    window = "Iris Calder and Iris Moreau adopted a cat. The cat is called Miso."
    people = [{"name": "Iris Calder", "type": "Person"}, {"name": "Iris Moreau", "type": "Person"}]
    items = [attr("Iris", "pet", "Miso"), attr("Moreau", "pet", "Miso"), attr("the cat", "name", "Miso")]
    result = extraction.parse(reply(people, [], items), window, 30, 30)
    assert result.attributes == [attr("Iris Moreau", "pet", "Miso"), attr("The cat", "name", "Miso")]
    assert result.dropped == {"ambiguous_subject": 1}


def test_one_value_per_subject_and_attribute_and_the_cap():
    items = [
        attr("Iris Calder", "works at", "Northwind Labs"),
        attr("Calder", "Works-at", "Larkhaven"),  # the same line again: the first value is kept
        attr("Sam Rivera", "met in", "2016"),
        attr("Iris Calder", "lives in", "Larkhaven"),  # over the cap (the relations' cap)
    ]
    result = extraction.parse(reply(ENTITIES, [], items), WINDOW, 30, 2)
    assert result.attributes == [
        attr("Iris Calder", "works_at", "Northwind Labs"),
        attr("Sam Rivera", "met_in", "2016"),
    ]
    assert result.dropped == {"duplicate_attribute": 1, "over_cap": 1}


def test_a_reply_cut_off_in_its_attributes_keeps_the_complete_ones():
    content = (
        '{"entities": [{"name": "Iris Calder", "type": "Person"}], "relations": [], "attributes": '
        '[{"subject": "Iris Calder", "attribute": "works at", "value": "Northwind Labs"}, {"subject": "Iris'
    )
    result = extraction.parse(content, WINDOW, 30, 30)
    assert result.attributes == [attr("Iris Calder", "works_at", "Northwind Labs")]
    assert result.dropped == {"truncated": 1}
