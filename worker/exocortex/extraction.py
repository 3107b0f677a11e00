"""Entity, relation and attribute extraction: the request, and what is kept of the reply.

The request is built for small local models: temperature 0, no thinking, a
json_schema response format derived from the pydantic models below (closed
objects, every array required and capped) and a max_tokens cap, so a small
model cannot loop forever. The reply is not trusted: the outermost JSON object
is found even inside prose or code fences, every item is validated on its own
(a bad item is dropped, the rest kept), an entity whose name does not occur in
the window is dropped (grounding), and so is a relation that refers to a
dropped or unknown entity. An attribute (a fact the window states about someone
or something: subject, attribute, value) is kept when its subject is one of the
kept entities, or names one by a unique first name or surname, or occurs in the
window as a whole word or phrase, and its value occurs there as a whole word or
phrase too. Every drop is counted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from exocortex.plpy.textnorm import canonical_key

ENTITY_TYPES = ("Person", "Org", "Place", "Topic", "Date")


# Longest name or predicate kept. Deliberately not in the response schema: llama.cpp
# compiles a json_schema into a grammar, and bounded string lengths made constrained
# decoding 10 to 30 times slower on this CPU (5 instead of 60 tokens/s). max_tokens bounds
# a model that loops inside a string instead; parse() keeps the complete items.
MAX_NAME = 80


class Entity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=MAX_NAME)
    type: Literal["Person", "Org", "Place", "Topic", "Date"]


class Relation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: str = Field(min_length=1, max_length=MAX_NAME)
    predicate: str = Field(min_length=1, max_length=MAX_NAME)
    object: str = Field(min_length=1, max_length=MAX_NAME)


class Attribute(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: str = Field(min_length=1, max_length=MAX_NAME)
    attribute: str = Field(min_length=1, max_length=MAX_NAME)
    value: str = Field(min_length=1, max_length=MAX_NAME)


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


def response_format(max_entities: int, max_relations: int) -> dict:
    """The json_schema response format: closed objects, every array required and capped
    (attributes by the relations' cap)."""

    def closed(model: type[BaseModel]) -> dict:
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema["properties"].values():
            prop.pop("title", None)
            prop.pop("minLength", None)  # parse() enforces lengths: see MAX_NAME
            prop.pop("maxLength", None)
        schema["additionalProperties"] = False
        return schema

    return {
        "type": "json_schema",
        "json_schema": {
            "name": "extraction",
            "strict": True,
            "schema": {
                "type": "object",
                "additionalProperties": False,
                "required": list(REPLY_KEYS),
                "properties": {
                    "entities": {"type": "array", "items": closed(Entity), "maxItems": max_entities},
                    "relations": {"type": "array", "items": closed(Relation), "maxItems": max_relations},
                    "attributes": {"type": "array", "items": closed(Attribute), "maxItems": max_relations},
                },
            },
        },
    }


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


_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _as_written(phrase: str, window: str) -> str | None:
    """phrase as the window writes it (whitespace collapsed) where it occurs there as a whole
    word or phrase, case and spacing ignored; None where it does not."""
    words = phrase.split()
    if not words:
        return None
    pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)"
    found = re.search(pattern, window, re.IGNORECASE)
    return _SPACE.sub(" ", found.group(0)) if found else None


# What a small model writes when it has no real subject or value: the schema's own words,
# placeholders and pronouns (which say nothing about who is meant).
PLACEHOLDERS = frozenset(
    {"subject", "attribute", "value", "name", "type", "entity", "person", "place", "org", "topic", "date"}
    | {"unknown", "none", "null", "n/a", "na", "nil", "string", "text", "tbd", "-"}
    | {"i", "me", "my", "myself", "you", "your", "he", "him", "his", "she", "her", "hers", "it", "its"}
    | {"they", "them", "their", "we", "us", "our", "someone", "somebody", "something"}
)

# Edges a value loses: the sentence's punctuation and quotes around what was copied.
_VALUE_EDGES = " .,;:!?\"'`\u201c\u201d\u2018\u2019"


def normalise_attribute(raw: str) -> str:
    """An attribute's label as facts store it: lower case, trimmed, inner whitespace and hyphens
    to "_", none at either end, at most 100 characters (" Lives-in " -> "lives_in"); the same
    rule as exo_private.normalise_attribute."""
    return re.sub(r"[\s\-]+", "_", raw.lower()).strip("_")[:100]


def _resolve_subject(raw: str, entities: list[dict], window: str) -> tuple[str | None, str]:
    """The name an attribute's subject stands for, or None and why it was dropped: a kept
    entity with the same key; else the one Person whose first name or surname it is; else the
    subject as the window writes it, where it has it as a whole word or phrase."""
    name = _SPACE.sub(" ", raw).strip()
    key = canonical_key(name)
    if key is None or key in PLACEHOLDERS:
        return None, "placeholder_subject"
    for entity in entities:
        if canonical_key(entity["name"]) == key:
            return entity["name"], ""
    if " " not in key:
        people = set()
        for entity in entities:
            words = canonical_key(entity["name"]).split(" ")
            if entity["type"] == "Person" and len(words) > 1 and key in (words[0], words[-1]):
                people.add(entity["name"])
        if len(people) == 1:
            return people.pop(), ""
        if people:
            return None, "ambiguous_subject"
    written = _as_written(name, window)
    return (written, "") if written else (None, "ungrounded_subject")


@dataclass
class Extraction:
    entities: list[dict] = field(default_factory=list)
    relations: list[dict] = field(default_factory=list)
    attributes: list[dict] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)
    """malformed_entity, ungrounded_entity, duplicate_entity, malformed_relation,
    dangling_relation, duplicate_relation, malformed_attribute, placeholder_subject,
    ambiguous_subject (a first name or surname of several people), ungrounded_subject,
    placeholder_value, ungrounded_value, duplicate_attribute (the same subject and attribute
    again: the first value is kept), over_cap, no_json, truncated (the reply was cut off and
    its complete items were kept)"""

    def stats(self) -> dict:
        return {
            "entities": len(self.entities),
            "relations": len(self.relations),
            "attributes": len(self.attributes),
            "dropped": dict(self.dropped),
        }


def parse(content: str, window: str, max_entities: int, max_relations: int) -> Extraction:
    """What is kept of a model reply for one window."""
    result = Extraction()
    data = outermost_json_object(content, REPLY_KEYS)
    if data is None:
        data = salvage_truncated(content)
        if not any(data.values()):
            result.dropped["no_json"] += 1
            return result
        result.dropped["truncated"] += 1
    text = _norm(window)
    names: dict[str, str] = {}  # normalised name -> name as kept
    seen: set[tuple[str, str]] = set()
    raw_entities = data.get("entities") if isinstance(data.get("entities"), list) else []
    for item in raw_entities:
        try:
            entity = Entity.model_validate(item)
        except ValidationError:
            result.dropped["malformed_entity"] += 1
            continue
        name = _SPACE.sub(" ", entity.name).strip()
        key = _norm(name)
        if not key or key not in text:
            result.dropped["ungrounded_entity"] += 1
            continue
        if (entity.type, key) in seen:
            result.dropped["duplicate_entity"] += 1
            continue
        if len(result.entities) >= max_entities:
            result.dropped["over_cap"] += 1
            continue
        seen.add((entity.type, key))
        names.setdefault(key, name)
        result.entities.append({"name": name, "type": entity.type})
    relation_keys: set[tuple[str, str, str]] = set()
    raw_relations = data.get("relations") if isinstance(data.get("relations"), list) else []
    for item in raw_relations:
        try:
            relation = Relation.model_validate(item)
        except ValidationError:
            result.dropped["malformed_relation"] += 1
            continue
        subject, obj = names.get(_norm(relation.subject)), names.get(_norm(relation.object))
        predicate = _SPACE.sub(" ", relation.predicate).strip()
        if subject is None or obj is None or not predicate:
            result.dropped["dangling_relation"] += 1
            continue
        key3 = (_norm(subject), _norm(predicate), _norm(obj))
        if key3 in relation_keys:
            result.dropped["duplicate_relation"] += 1
            continue
        if len(result.relations) >= max_relations:
            result.dropped["over_cap"] += 1
            continue
        relation_keys.add(key3)
        result.relations.append({"subject": subject, "predicate": predicate, "object": obj})
    attribute_keys: set[tuple[str, str]] = set()
    raw_attributes = data.get("attributes") if isinstance(data.get("attributes"), list) else []
    for item in raw_attributes:
        try:
            fact = Attribute.model_validate(item)
        except ValidationError:
            result.dropped["malformed_attribute"] += 1
            continue
        attribute = normalise_attribute(fact.attribute)
        value = _SPACE.sub(" ", fact.value).strip(_VALUE_EDGES)
        if not attribute:
            result.dropped["malformed_attribute"] += 1
            continue
        subject, reason = _resolve_subject(fact.subject, result.entities, window)
        if subject is None:
            result.dropped[reason] += 1
            continue
        if not value or _norm(value) in PLACEHOLDERS:
            result.dropped["placeholder_value"] += 1
            continue
        value = _as_written(value, window)
        if value is None:
            result.dropped["ungrounded_value"] += 1
            continue
        key2 = (canonical_key(subject), attribute)
        if key2 in attribute_keys:
            result.dropped["duplicate_attribute"] += 1
            continue
        if len(result.attributes) >= max_relations:
            result.dropped["over_cap"] += 1
            continue
        attribute_keys.add(key2)
        result.attributes.append({"subject": subject, "attribute": attribute, "value": value})
    return result
