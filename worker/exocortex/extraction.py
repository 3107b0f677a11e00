"""Entity and relation extraction: the request, and what is kept of the reply.

The request is built for small local models: temperature 0, no thinking, a
json_schema response format derived from the pydantic models below (closed
objects, both arrays required, arrays capped) and a max_tokens cap, so a small
model cannot loop forever. The reply is not trusted: the outermost JSON object
is found even inside prose or code fences, every item is validated on its own
(a bad item is dropped, the rest kept), an entity whose name does not occur in
the window is dropped (grounding), and so is a relation that refers to a
dropped or unknown entity. Every drop is counted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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


SYSTEM_PROMPT = (
    "You extract a knowledge graph from a personal note. List the named entities that appear "
    "in the text, each with its type: Person, Org (organisation), Place, Topic, or Date. "
    "Copy every name exactly as it is written in the text. Then list relations between those "
    "entities as subject, predicate, object, where subject and object are names from your "
    "entity list and the predicate is a short verb phrase such as 'works at' or 'lives in'. "
    "Only include what the text states. Reply with JSON only."
)


def response_format(max_entities: int, max_relations: int) -> dict:
    """The json_schema response format: closed objects, both arrays required and capped."""

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
                "required": ["entities", "relations"],
                "properties": {
                    "entities": {"type": "array", "items": closed(Entity), "maxItems": max_entities},
                    "relations": {"type": "array", "items": closed(Relation), "maxItems": max_relations},
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
    found: dict[str, list] = {"entities": [], "relations": []}
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


@dataclass
class Extraction:
    entities: list[dict] = field(default_factory=list)
    relations: list[dict] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)
    """malformed_entity, ungrounded_entity, duplicate_entity, malformed_relation,
    dangling_relation, duplicate_relation, over_cap, no_json, truncated (the reply was
    cut off and its complete items were kept)"""

    def stats(self) -> dict:
        return {
            "entities": len(self.entities),
            "relations": len(self.relations),
            "dropped": dict(self.dropped),
        }


def parse(content: str, window: str, max_entities: int, max_relations: int) -> Extraction:
    """What is kept of a model reply for one window."""
    result = Extraction()
    data = outermost_json_object(content, ("entities", "relations"))
    if data is None:
        data = salvage_truncated(content)
        if not (data["entities"] or data["relations"]):
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
    return result
