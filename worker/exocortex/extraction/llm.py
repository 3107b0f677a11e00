"""Entity, relation and attribute extraction: the request, and the reply read.

The request is built for small local models: temperature 0, no thinking, a json_schema
response format (closed objects, every array required and capped) and a max_tokens cap, so a
small model cannot loop forever. The reply is not trusted: the outermost JSON object is found
even inside prose or code fences (or the complete items of a reply cut off), and what is kept
of it is decided by plpy/extraction_acceptance.py, the same acceptance
exo_private.merge_extraction applies to every writer (grounding, names, types, caps, aliases,
relation ends). The optional second request (relation_messages) asks only for relations
between the names found, constrained by an enum in its schema.
"""

from __future__ import annotations

import json
import re

from exocortex.ops.plpy_modules import shared

acceptance = shared("extraction_acceptance")
Extraction = acceptance.Extraction

REPLY_KEYS = ("entities", "relations", "attributes")

SYSTEM_PROMPT = (
    "You extract a knowledge graph from a personal note. List the named entities that appear "
    "in the text, each with its type: Person, Org (organisation), Place, Topic, or Date. "
    "Copy every name exactly as it is written in the text. Then list relations between those "
    "entities as subject, predicate, object, where subject and object are names from your "
    "entity list and the predicate is a short verb phrase such as 'works at' or 'lives in'. "
    "Then list attributes: facts a sentence of the text states about a person or place, such as "
    "where someone lives or works, a pet's name, a role, or the date of an event, each as subject "
    "(a name from your entity list), attribute (a short label such as 'lives in', 'works at', "
    "'pet name', 'role' or 'wedding date') and value (copied exactly from the text). "
    "Only include what the text states. Reply with JSON only."
)


def closed(fields: tuple[str, ...], enums: dict[str, list[str]] | None = None) -> dict:
    """An object schema with these string fields, all required, nothing else. Lengths are left
    out on purpose: llama.cpp compiles a json_schema into a grammar, and bounded string lengths
    made constrained decoding 10 to 30 times slower on this CPU (5 instead of 60 tokens/s);
    max_tokens bounds a model that loops inside a string, acceptance.MAX_NAME what is kept."""
    enums = enums or {}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(fields),
        "properties": {f: {"type": "string", **({"enum": enums[f]} if f in enums else {})} for f in fields},
    }


def json_schema_format(name: str, arrays: dict[str, tuple[dict, int]]) -> dict:
    """The json_schema response format of an object of required, capped arrays."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": name,
            "strict": True,
            "schema": {
                "type": "object",
                "additionalProperties": False,
                "required": list(arrays),
                "properties": {
                    key: {"type": "array", "items": items, "maxItems": cap}
                    for key, (items, cap) in arrays.items()
                },
            },
        },
    }


def response_format(max_entities: int, max_relations: int) -> dict:
    """The first request's response format: entities, relations and attributes (capped by the
    relations' cap)."""
    return json_schema_format(
        "extraction",
        {
            "entities": (
                closed(acceptance.ENTITY_FIELDS, {"type": list(acceptance.ENTITY_TYPES)}),
                max_entities,
            ),
            "relations": (closed(acceptance.RELATION_FIELDS), max_relations),
            "attributes": (closed(acceptance.ATTRIBUTE_FIELDS), max_relations),
        },
    )


def messages(window: str) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f'Text:\n"""\n{window}\n"""'},
    ]


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the {...} that opens at start, or None when it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def outermost_json_object(text: str, keys: tuple[str, ...] = ()) -> dict | None:
    """The first balanced {...} in text that parses as a JSON object having one of `keys`
    (any object when no keys are given); prose and code fences around it are ignored."""
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        if end is not None:
            try:
                value = json.loads(text[start:end])
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict) and (not keys or any(k in value for k in keys)):
                return value
        start = text.find("{", start + 1)
    return None


def salvage_truncated(text: str) -> dict:
    """Complete items of a reply cut off by max_tokens: each array's whole objects."""
    found: dict[str, list] = {key: [] for key in REPLY_KEYS}
    for key in found:
        m = re.search(r'"' + key + r'"\s*:\s*\[', text)
        if not m:
            continue
        i = m.end()
        while True:
            while i < len(text) and text[i] in " \t\r\n,":
                i += 1
            if i >= len(text) or text[i] != "{":
                break
            end = _balanced_end(text, i)
            if end is None:
                break
            try:
                found[key].append(json.loads(text[i:end]))
            except json.JSONDecodeError:
                break
            i = end
    return found


def found_items(content: str, keys: tuple[str, ...], dropped) -> dict | None:
    """The reply's JSON object with one of keys, else the complete items of a reply cut off by
    max_tokens (counted truncated); None (counted no_json) when there is neither."""
    data = outermost_json_object(content, keys)
    if data is not None:
        return data
    data = salvage_truncated(content)
    if not any(data.get(key) for key in keys):
        dropped["no_json"] += 1
        return None
    dropped["truncated"] += 1
    return data


def parse(
    content: str, window: str, max_entities: int, max_relations: int, ner: dict[str, str] | None = None
) -> Extraction:
    """What is kept of a model reply for one window (acceptance.accept); ner (fold(key) -> type,
    or 'Number') is what an NER backend found in the window, when one ran."""
    result = Extraction()
    data = found_items(content, REPLY_KEYS, result.dropped)
    return (
        result if data is None else acceptance.accept(data, window, max_entities, max_relations, ner, result)
    )


RELATION_PROMPT = (
    "You find relations between named entities in a personal note. You are given the text and "
    "the names found in it. List every relation the text states between two of those names as "
    "subject, predicate, object: subject and object are names from the list, the predicate is a "
    "short verb phrase such as 'works at', 'is married to', 'is the sister of', 'manages' or "
    "'lives in'. Only include what the text states. Reply with JSON only."
)


def relation_messages(window: str, names: list[str]) -> list[dict]:
    """The narrow second request: the window and the names the first found."""
    listed = "\n".join(f"- {name}" for name in names)
    return [
        {"role": "system", "content": RELATION_PROMPT},
        {"role": "user", "content": f'Text:\n"""\n{window}\n"""\nNames:\n{listed}'},
    ]


def relation_response_format(names: list[str], max_relations: int) -> dict:
    """The second request's json_schema: relations only, subject and object an enum of names."""
    relation = closed(acceptance.RELATION_FIELDS, {"subject": list(names), "object": list(names)})
    return json_schema_format("relations", {"relations": (relation, max_relations)})


def parse_relations(
    content: str, window: str, result: Extraction, max_entities: int, max_relations: int
) -> int:
    """The second request's relations, validated into result beside the first's (keep_relations:
    the same resolution and drops); returns how many it added."""
    before = len(result.relations)
    data = found_items(content, ("relations",), result.dropped)
    if data is None:
        return 0
    acceptance.keep_relations(
        acceptance.listed(data, "relations"), result, window, max_entities, max_relations
    )
    return len(result.relations) - before
