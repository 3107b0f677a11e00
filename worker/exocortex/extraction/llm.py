"""Entity, relation and attribute extraction: the request, and what is kept of the reply.

The request is built for small local models: temperature 0, no thinking, a
json_schema response format derived from the pydantic models below (closed
objects, every array required and capped) and a max_tokens cap, so a small
model cannot loop forever. The reply is not trusted: the outermost JSON object
is found even inside prose or code fences, every item is validated on its own
(a bad item is dropped, the rest kept). An entity is kept as the window writes it when its
name occurs there as a whole word or phrase (case and accents folded: grounding) and looks
like a name (name_problem: no letters alone, placeholders or numbers typed as people); its
type is checked (checked_type: cue words of plpy/entity_types.py, an NER backend's label);
a one-word name that is the first name or surname of exactly one person of the window becomes
that person's alias. A relation's ends are resolved to the kept entities (the same key, an
alias, a unique first name or surname) or added when grounded (keep_relations), and only then
dropped. The optional second request (relation_messages) asks only for relations between the
names found, constrained by an enum in its schema. An attribute (a fact the window states
about someone or something: subject, attribute, value) is kept when its subject is one of the
kept entities, or names one by a unique first name or surname, or occurs in the
window as a whole word or phrase, and its value occurs there as a whole word or
phrase too. Every drop is counted.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from exocortex.plpy import entity_types
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
    word or phrase, case, accents and spacing ignored; None where it does not."""
    words = fold(phrase).split()
    if not words:
        return None
    pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)"
    found = re.search(pattern, fold(window))
    return _SPACE.sub(" ", window[found.start() : found.end()]) if found else None


# What a small model writes when it has no real name, subject or value: the schema's own words,
# placeholders and pronouns (one list, plpy/entity_types.py).
PLACEHOLDERS = entity_types.PLACEHOLDERS

# A subject in the first person: kept as "I" (exo_private.attribute_subject makes it the owner in
# the owner's own notes, and skips it elsewhere).
FIRST_PERSON = frozenset({"i", "me", "my", "myself"})

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
    if key in FIRST_PERSON:
        return "I", ""
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
    """malformed_entity, placeholder_entity, not_a_name (a letter, one-character words),
    number_as_name (a number or date typed as a person, organisation or place),
    ungrounded_entity, duplicate_entity (a key listed again, whatever its type),
    malformed_relation, placeholder_endpoint, ambiguous_endpoint (a first name or surname of
    several people), dangling_relation (an endpoint neither listed, resolvable nor grounded),
    self_relation, duplicate_relation, malformed_attribute, placeholder_subject,
    ambiguous_subject (a first name or surname of several people), ungrounded_subject,
    placeholder_value, ungrounded_value, duplicate_attribute (the same subject and attribute
    again: the first value is kept), over_cap, no_json, truncated (the reply was cut off and
    its complete items were kept)"""

    recovered: Counter = field(default_factory=Counter)
    """retyped (a cue or NER corrected the model's type), surname / first_name (a one-word
    entity made an alias of the window's person), endpoint_surname / endpoint_first_name (a
    relation's end resolved so), endpoint_added (a grounded end the entity list lacked)"""

    def stats(self) -> dict:
        return {
            "entities": len(self.entities),
            "relations": len(self.relations),
            "attributes": len(self.attributes),
            "dropped": dict(self.dropped),
            "recovered": dict(self.recovered),
        }


def fold(text: str) -> str:
    """text with case and accents folded, one character for one ("Zoë Ó Brien" -> "zoe o brien"),
    so that a match in the folded text is a match at the same place in the original."""
    out = []
    for ch in text:
        bare = "".join(
            c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
        ).casefold()
        out.append(bare if len(bare) == 1 else ch.lower() if len(ch.lower()) == 1 else ch)
    return "".join(out)


def _folded_key(name: str) -> str:
    """The key names are compared by within a window: canonical key, accents folded ("" for none)."""
    return fold(canonical_key(name) or "")


_DIGIT = re.compile(r"\d")
# The types a name must be written with a capital for (a cased script): "car" is no Person.
NAMED_TYPES = ("Person", "Org", "Place")


def name_problem(name: str, type_: str) -> str | None:
    """Why name cannot be an entity of type_, or None when it looks like a name: a placeholder
    or schema word ("entity", "Unknown", "Person"), no name at all (under two letters, or only
    one-character words: "A", "B C"), a number or date typed as a person, organisation or place
    ("2016" is a Date, not a Person)."""
    key = canonical_key(name)
    if key is None or key in PLACEHOLDERS or fold(key) in PLACEHOLDERS:
        return "placeholder_entity"
    if type_ == "Date":
        return None
    if (
        type_ in NAMED_TYPES
        and _DIGIT.search(key)
        and (type_ == "Person" or not re.search(r"[^\W\d_]{2}", key))
    ):
        return "number_as_name"
    if sum(ch.isalpha() for ch in key) < 2 or all(len(word.strip(".")) <= 1 for word in key.split()):
        return "not_a_name"
    return None


def checked_type(name: str, written: str, said: str, ner: dict[str, str] | None = None) -> str | None:
    """The type an entity keeps: the cue of its own words (entity_types.cue_type) wins, then the
    NER backend's label of the same span (when one ran), else what the model said; a name the
    window writes without a capital is a Topic, not a Person, Org or Place. None: NER calls the
    span a number or date, and the model a person, organisation or place (rejected)."""
    cue = entity_types.cue_type(name, said)
    if cue:
        return cue
    if ner:
        label = ner.get(fold(canonical_key(name) or ""))
        if label == "Number" and said in NAMED_TYPES:
            return None
        if label in ENTITY_TYPES:
            return label
    if said in NAMED_TYPES and written == written.lower() and written != written.upper():
        return "Topic"
    return said


def _name_parts(entities: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """First names and surnames of the window's people of two or more words: part (folded
    key) -> [(full name, 'first_name' | 'surname')]."""
    parts: dict[str, list[tuple[str, str]]] = {}
    for entity in entities:
        words = _folded_key(entity["name"]).split(" ")
        if entity["type"] == "Person" and len(words) > 1:
            for part, how in ((words[0], "first_name"), (words[-1], "surname")):
                if entity["name"] not in (n for n, _ in parts.get(part, [])):
                    parts.setdefault(part, []).append((entity["name"], how))
    return parts


def _add_alias(entities: list[dict], name: str, surface: str, how: str) -> None:
    for entity in entities:
        if entity["name"] == name:
            aliases = entity.setdefault("aliases", [])
            if all(_folded_key(a["surface"]) != _folded_key(surface) for a in aliases):
                aliases.append({"surface": surface, "how": how})


# Predicates whose object is a place when nothing else says what it is.
_PLACE_PREDICATE = re.compile(r"\b(in|at|from|to|near|lives?|located|born|moved|visited)\b", re.I)


def _endpoint(
    raw: str,
    role: str,
    predicate: str,
    result: Extraction,
    names: dict[str, str],
    window: str,
    max_entities: int,
) -> tuple[str | None, str]:
    """The listed entity name a relation's subject or object stands for, or None and why it was
    dropped: the same key; else an alias made in this window; else the one person whose first
    name or surname it is (recorded as an alias); else the name as the window writes it, added
    as an entity, when it is grounded there and looks like a name."""
    name = _SPACE.sub(" ", raw).strip()
    key = _folded_key(name)
    if not key or key in PLACEHOLDERS:
        return None, "placeholder_endpoint"
    if key in names:
        return names[key], ""
    written = _as_written(name, window)
    if " " not in key:
        people = _name_parts(result.entities).get(key, [])
        if len(people) == 1:
            full, how = people[0]
            _add_alias(result.entities, full, written or name, how)
            names[key] = full
            result.recovered[f"endpoint_{how}"] += 1
            return full, ""
        if people:
            return None, "ambiguous_endpoint"
    if written is None:
        return None, "dangling_relation"
    said = "Place" if role == "object" and _PLACE_PREDICATE.search(predicate) else "Person"
    type_ = checked_type(written, written, said)
    if type_ is None or name_problem(written, type_):
        return None, "placeholder_endpoint"
    if len(result.entities) >= max_entities:
        return None, "over_cap"
    result.entities.append({"name": written, "type": type_})
    names[key] = written
    result.recovered["endpoint_added"] += 1
    return written, ""


def keep_relations(
    raw_relations: list, result: Extraction, window: str, max_entities: int, max_relations: int
) -> None:
    """Validate relations into result: each endpoint resolved (_endpoint), self-loops and
    repeats dropped, at most max_relations kept; drops counted by reason."""
    names = {_folded_key(e["name"]): e["name"] for e in result.entities}
    for entity in result.entities:
        for alias in entity.get("aliases", []):
            names.setdefault(_folded_key(alias["surface"]), entity["name"])
    relation_keys = {
        (_norm(r["subject"]), _norm(r["predicate"]), _norm(r["object"])) for r in result.relations
    }
    for item in raw_relations:
        try:
            relation = Relation.model_validate(item)
        except ValidationError:
            result.dropped["malformed_relation"] += 1
            continue
        predicate = _SPACE.sub(" ", relation.predicate).strip()
        if not predicate or _norm(predicate) in PLACEHOLDERS:
            result.dropped["malformed_relation"] += 1
            continue
        subject, reason = _endpoint(
            relation.subject, "subject", predicate, result, names, window, max_entities
        )
        obj = None
        if subject is not None:
            obj, reason = _endpoint(relation.object, "object", predicate, result, names, window, max_entities)
        if subject is None or obj is None:
            result.dropped[reason] += 1
            continue
        if _folded_key(subject) == _folded_key(obj):
            result.dropped["self_relation"] += 1
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


def _resolve_bare_names(result: Extraction) -> None:
    """A one-word entity that is the first name or surname of exactly one person of the window
    ("Hale" beside "Prudence Hale") is that person: it leaves the list as their alias. A word
    with a cue of its own, or the part of several people, stays."""
    parts = _name_parts(result.entities)
    kept = []
    for entity in result.entities:
        key = _folded_key(entity["name"])
        people = parts.get(key, []) if " " not in key and entity["type"] in ("Person", "Topic") else []
        if len(people) == 1:
            full, how = people[0]
            _add_alias(result.entities, full, entity["name"], how)
            result.recovered[how] += 1
        else:
            kept.append(entity)
    result.entities[:] = kept


def parse(
    content: str, window: str, max_entities: int, max_relations: int, ner: dict[str, str] | None = None
) -> Extraction:
    """What is kept of a model reply for one window; ner (fold(key) -> type, or 'Number') is
    what an NER backend found in the window, when one ran."""
    result = Extraction()
    data = outermost_json_object(content, REPLY_KEYS)
    if data is None:
        data = salvage_truncated(content)
        if not any(data.values()):
            result.dropped["no_json"] += 1
            return result
        result.dropped["truncated"] += 1
    seen: set[str] = set()
    raw_entities = data.get("entities") if isinstance(data.get("entities"), list) else []
    for item in raw_entities:
        try:
            entity = Entity.model_validate(item)
        except ValidationError:
            result.dropped["malformed_entity"] += 1
            continue
        name = _SPACE.sub(" ", entity.name).strip()
        problem = name_problem(name, entity.type)
        if problem:
            result.dropped[problem] += 1
            continue
        written = _as_written(name, window)
        if written is None:
            result.dropped["ungrounded_entity"] += 1
            continue
        type_ = checked_type(written, written, entity.type, ner)
        if type_ is None:
            result.dropped["number_as_name"] += 1
            continue
        key = _folded_key(written)
        if key in seen:
            result.dropped["duplicate_entity"] += 1
            continue
        if len(result.entities) >= max_entities:
            result.dropped["over_cap"] += 1
            continue
        seen.add(key)
        if type_ != entity.type:
            result.recovered["retyped"] += 1
        result.entities.append({"name": written, "type": type_})
    _resolve_bare_names(result)
    raw_relations = data.get("relations") if isinstance(data.get("relations"), list) else []
    keep_relations(raw_relations, result, window, max_entities, max_relations)
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
    end = {"type": "string", "enum": list(names)}
    relation = {
        "type": "object",
        "additionalProperties": False,
        "required": ["subject", "predicate", "object"],
        "properties": {"subject": end, "predicate": {"type": "string"}, "object": end},
    }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "relations",
            "strict": True,
            "schema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["relations"],
                "properties": {"relations": {"type": "array", "items": relation, "maxItems": max_relations}},
            },
        },
    }


def parse_relations(
    content: str, window: str, result: Extraction, max_entities: int, max_relations: int
) -> int:
    """The second request's relations, validated into result beside the first's (keep_relations:
    the same resolution and drops); returns how many it added."""
    before = len(result.relations)
    data = outermost_json_object(content, ("relations",))
    if data is None:
        data = salvage_truncated(content)
        if not data["relations"]:
            result.dropped["no_json"] += 1
            return 0
        result.dropped["truncated"] += 1
    raw = data.get("relations") if isinstance(data.get("relations"), list) else []
    keep_relations(raw, result, window, max_entities, max_relations)
    return len(result.relations) - before
