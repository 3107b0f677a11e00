"""Extraction request and reply handling, as plain Python (no model)."""

import json

import pytest

from exocortex import extraction

WINDOW = "Iris Calder works at Northwind Labs in Larkhaven.\nSam Rivera met   Iris Calder in 2016."


def reply(entities, relations) -> str:
    return json.dumps({"entities": entities, "relations": relations})


def test_response_format_is_closed_required_and_capped():
    fmt = extraction.response_format(30, 20)
    schema = fmt["json_schema"]["schema"]
    assert fmt["type"] == "json_schema"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["entities", "relations"]
    assert schema["properties"]["entities"]["maxItems"] == 30
    assert schema["properties"]["relations"]["maxItems"] == 20
    entity = schema["properties"]["entities"]["items"]
    assert entity["additionalProperties"] is False
    assert set(entity["required"]) == {"name", "type"}
    assert entity["properties"]["type"]["enum"] == list(extraction.ENTITY_TYPES)


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
            {"name": "Iris  calder", "type": "Person"},  # case and spacing differ: grounded
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
    assert [e["name"] for e in result.entities] == ["Iris calder", "Sam Rivera"]
    assert result.relations == [{"subject": "Sam Rivera", "predicate": "met", "object": "Iris calder"}]
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
