"""What is kept of an extraction of one window (stdlib only): the one acceptance every writer gets.

exo_private.accept_extraction (this module inlined) runs it inside exo_private.merge_extraction,
so entities, relations and attributes from any writer pass the same rules; the worker runs the
same module (exocortex.ops.plpy_modules.shared) on the model's reply before its narrow relation
request and the pattern pass, whose additions the database then accepts again unchanged.

Every item is checked on its own (a bad item is dropped, the rest kept). An entity is kept as
the window writes it when its name occurs there as a whole word or phrase (case and accents
folded: grounding) and looks like a name (name_problem: no letters alone, placeholders or
numbers typed as people); its type is checked (checked_type: cue words of
plpy/entity_types.py, an NER backend's label; a person, organisation or place written as common
words, or whose words NER finds no proper noun, is a topic); a one-word name that is the first name or surname
of exactly one person of the window becomes that person's alias; the worker's count of the
mentions whose syntax typed it (cues) is kept, bounded by the name's occurrences. A relation's ends are resolved
to the kept entities (the same key, an alias, a unique first name or surname) or added when
grounded (keep_relations), and only then dropped. An attribute (subject, attribute, value) is
kept when its subject is one of the kept entities, or names one by a unique first name or
surname, or occurs in the window as a whole word or phrase, and its value occurs there as a
whole word or phrase too. Caps bound each list. Every drop is counted.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from chat_windows import window_senders
from entity_types import PLACEHOLDERS, cue_type, written_as_name
from textnorm import canonical_key

ENTITY_TYPES = ("Person", "Org", "Place", "Topic", "Date")

# Longest name, predicate, attribute or value kept (the request's schema leaves lengths out:
# see exocortex/extraction/llm.py).
MAX_NAME = 80

# The fields of each kind of item: required, and optional with their own check.
ENTITY_FIELDS = ("name", "type")
RELATION_FIELDS = ("subject", "predicate", "object")
ATTRIBUTE_FIELDS = ("subject", "attribute", "value")
ALIAS_HOW = ("first_name", "surname")

# A subject in the first person: kept as "I" (exo_private.attribute_subject makes it the owner in
# the owner's own notes, and skips it elsewhere).
FIRST_PERSON = frozenset({"i", "me", "my", "myself"})

# Edges a value loses: the sentence's punctuation and quotes around what was copied.
VALUE_EDGES = " .,;:!?\"'`\u201c\u201d\u2018\u2019"

# The types that must be names (written as one, not common words): "car" is no Person.
NAMED_TYPES = ("Person", "Org", "Place")
# The label an NER backend gives a span of capitalised words that is nowhere a proper noun in the
# window (exocortex.extraction.ner): a heading's or a table's common noun, no name.
COMMON = "Common"

# Predicates whose object is a place when nothing else says what it is.
PLACE_PREDICATE = re.compile(r"\b(in|at|from|to|near|lives?|located|born|moved|visited)\b", re.I)

WHITESPACE = re.compile(r"\s+")
DIGIT = re.compile(r"\d")


@dataclass
class Extraction:
    entities: list = field(default_factory=list)
    relations: list = field(default_factory=list)
    attributes: list = field(default_factory=list)
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
    """retyped (a cue or NER corrected the type), surname / first_name (a one-word entity made an
    alias of the window's person), endpoint_surname / endpoint_first_name (a relation's end
    resolved so), endpoint_added (a grounded end the entity list lacked)"""

    def stats(self) -> dict:
        return {
            "entities": len(self.entities),
            "relations": len(self.relations),
            "attributes": len(self.attributes),
            "dropped": dict(self.dropped),
            "recovered": dict(self.recovered),
        }

    def kept(self) -> dict:
        return {"entities": self.entities, "relations": self.relations, "attributes": self.attributes}


def squeeze(text: str) -> str:
    """text with its whitespace collapsed and trimmed."""
    return WHITESPACE.sub(" ", text).strip()


def norm(text: str) -> str:
    return squeeze(text).casefold()


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


def folded_key(name: str) -> str:
    """The key names are compared by within a window: canonical key, accents folded ("" for none)."""
    return fold(canonical_key(name) or "")


def whole_phrase(phrase: str) -> str | None:
    """The pattern of phrase as a whole word or phrase of a folded text, any spacing between its
    words; None for no words."""
    words = fold(phrase).split()
    return r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)" if words else None


def as_written(phrase: str, window: str) -> str | None:
    """phrase as the window writes it (whitespace collapsed) where it occurs there as a whole
    word or phrase, case, accents and spacing ignored; None where it does not."""
    pattern = whole_phrase(phrase)
    found = re.search(pattern, fold(window)) if pattern else None
    return WHITESPACE.sub(" ", window[found.start() : found.end()]) if found else None


def given_cues(item: dict, written: str, window: str) -> dict:
    """An entity's cues as the worker gives them ({type: count}: how many of the name's mentions
    the syntax around them typed, exocortex.extraction.ner.mark_cues): counts of a person,
    organisation or place, each at most the number of times the window writes the name."""
    cues = item.get("cues")
    if not isinstance(cues, dict):
        return {}
    most = len(re.findall(whole_phrase(written) or "$^", fold(window)))
    return {t: min(n, most) for t, n in cues.items() if t in NAMED_TYPES and type(n) is int and n > 0}


def normalise_attribute(raw: str) -> str:
    """An attribute's label as facts store it: lower case, trimmed, inner whitespace and hyphens
    to "_", none at either end, at most 100 characters (" Lives-in " -> "lives_in"); the same
    rule as exo_private.normalise_attribute."""
    return re.sub(r"[\s\-]+", "_", raw.lower()).strip("_")[:100]


def well_formed(item, fields: tuple, optional: tuple = ()) -> bool:
    """item is an object with exactly these string fields (1 to MAX_NAME characters each) and
    nothing else but the optional ones."""
    return (
        isinstance(item, dict)
        and set(fields) <= set(item) <= set(fields) | set(optional)
        and all(isinstance(item[f], str) and 1 <= len(item[f]) <= MAX_NAME for f in fields)
    )


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
        and DIGIT.search(key)
        and (type_ == "Person" or not re.search(r"[^\W\d_]{2}", key))
    ):
        return "number_as_name"
    if sum(ch.isalpha() for ch in key) < 2 or all(len(word.strip(".")) <= 1 for word in key.split()):
        return "not_a_name"
    return None


def checked_type(name: str, written: str, said: str, ner: dict | None = None) -> str | None:
    """The type an entity keeps: the cue of its own words (entity_types.cue_type) wins, then the
    NER backend's label of the same span (when one ran), else what was said. A Person, Org or
    Place must be a name: one the window writes as a phrase of common words ("Car purchase",
    "van hire": entity_types.written_as_name), or whose words the NER backend finds no proper noun
    anywhere in the window (label "Common": "Car", "Groceries"), is a Topic. None: NER calls the
    span a number, and the writer a person, organisation or place (rejected)."""
    label = ner.get(fold(canonical_key(name) or "")) if ner else None
    cue = cue_type(name, said)
    if not cue and label == "Number" and said in NAMED_TYPES:
        return None
    type_ = cue or (label if label in ENTITY_TYPES else said)
    if type_ in NAMED_TYPES and (label == COMMON or not written_as_name(written, type_)):
        return "Topic"
    return type_


def name_parts(entities: list) -> dict:
    """First names and surnames of the window's people of two or more words: part (folded
    key) -> [(full name, 'first_name' | 'surname')]."""
    parts: dict = {}
    for entity in entities:
        words = folded_key(entity["name"]).split(" ")
        if entity["type"] == "Person" and len(words) > 1:
            for part, how in ((words[0], "first_name"), (words[-1], "surname")):
                if entity["name"] not in (n for n, _ in parts.get(part, [])):
                    parts.setdefault(part, []).append((entity["name"], how))
    return parts


def add_alias(entities: list, name: str, surface: str, how: str) -> None:
    for entity in entities:
        if entity["name"] == name:
            aliases = entity.setdefault("aliases", [])
            if all(folded_key(a["surface"]) != folded_key(surface) for a in aliases):
                aliases.append({"surface": surface, "how": how})


def given_aliases(item: dict, window: str) -> list:
    """An entity's aliases as a writer gives them ([{surface, how}]), those the window writes."""
    aliases = item.get("aliases")
    kept = []
    for alias in aliases if isinstance(aliases, list) else []:
        if well_formed(alias, ("surface", "how")) and alias["how"] in ALIAS_HOW:
            surface = as_written(alias["surface"], window)
            if surface and all(folded_key(a["surface"]) != folded_key(surface) for a in kept):
                kept.append({"surface": surface, "how": alias["how"]})
    return kept


def keep_entities(raw: list, result: Extraction, window: str, max_entities: int, ner: dict | None) -> None:
    """Validate entities into result: well formed, a name (name_problem), grounded, type checked,
    each key once, at most max_entities, their cues checked (given_cues); drops counted by reason."""
    seen = {folded_key(e["name"]) for e in result.entities}
    for item in raw:
        if not well_formed(item, ENTITY_FIELDS, ("aliases", "cues")) or item["type"] not in ENTITY_TYPES:
            result.dropped["malformed_entity"] += 1
            continue
        name = squeeze(item["name"])
        problem = name_problem(name, item["type"])
        if problem:
            result.dropped[problem] += 1
            continue
        written = as_written(name, window)
        if written is None:
            result.dropped["ungrounded_entity"] += 1
            continue
        type_ = checked_type(written, written, item["type"], ner)
        if type_ is None:
            result.dropped["number_as_name"] += 1
            continue
        key = folded_key(written)
        if key in seen:
            result.dropped["duplicate_entity"] += 1
            continue
        if len(result.entities) >= max_entities:
            result.dropped["over_cap"] += 1
            continue
        seen.add(key)
        if type_ != item["type"]:
            result.recovered["retyped"] += 1
        entity = {"name": written, "type": type_}
        aliases = given_aliases(item, window)
        if aliases:
            entity["aliases"] = aliases
        cues = given_cues(item, written, window)
        if cues:
            entity["cues"] = cues
        result.entities.append(entity)


def resolve_bare_names(result: Extraction) -> None:
    """A one-word entity that is the first name or surname of exactly one person of the window
    ("Hale" beside "Prudence Hale") is that person: it leaves the list as their alias. A word
    with a cue of its own, or the part of several people, stays."""
    parts = name_parts(result.entities)
    kept = []
    for entity in result.entities:
        key = folded_key(entity["name"])
        people = parts.get(key, []) if " " not in key and entity["type"] in ("Person", "Topic") else []
        if len(people) == 1:
            full, how = people[0]
            add_alias(result.entities, full, entity["name"], how)
            result.recovered[how] += 1
        else:
            kept.append(entity)
    result.entities[:] = kept


def endpoint(
    raw: str,
    role: str,
    predicate: str,
    result: Extraction,
    names: dict,
    window: str,
    max_entities: int,
    ner: dict | None = None,
) -> tuple:
    """The listed entity name a relation's subject or object stands for, or None and why it was
    dropped: the same key; else an alias made in this window; else the one person whose first
    name or surname it is (recorded as an alias); else the name as the window writes it, added
    as an entity, when it is grounded there and looks like a name."""
    name = squeeze(raw)
    key = folded_key(name)
    if not key or key in PLACEHOLDERS:
        return None, "placeholder_endpoint"
    if key in names:
        return names[key], ""
    written = as_written(name, window)
    if " " not in key:
        people = name_parts(result.entities).get(key, [])
        if len(people) == 1:
            full, how = people[0]
            add_alias(result.entities, full, written or name, how)
            names[key] = full
            result.recovered[f"endpoint_{how}"] += 1
            return full, ""
        if people:
            return None, "ambiguous_endpoint"
    if written is None:
        return None, "dangling_relation"
    said = "Place" if role == "object" and PLACE_PREDICATE.search(predicate) else "Person"
    type_ = checked_type(written, written, said, ner)
    if type_ is None or name_problem(written, type_):
        return None, "placeholder_endpoint"
    if len(result.entities) >= max_entities:
        return None, "over_cap"
    result.entities.append({"name": written, "type": type_})
    names[key] = written
    result.recovered["endpoint_added"] += 1
    return written, ""


def keep_relations(
    raw: list, result: Extraction, window: str, max_entities: int, max_relations: int, ner: dict | None = None
) -> None:
    """Validate relations into result: each endpoint resolved (endpoint; an end added is typed with
    ner, as keep_entities types), self-loops and repeats dropped, at most max_relations kept;
    drops counted by reason."""
    names = {folded_key(e["name"]): e["name"] for e in result.entities}
    for entity in result.entities:
        for alias in entity.get("aliases", []):
            names.setdefault(folded_key(alias["surface"]), entity["name"])
    relation_keys = {(norm(r["subject"]), norm(r["predicate"]), norm(r["object"])) for r in result.relations}
    for item in raw:
        predicate = squeeze(item["predicate"]) if well_formed(item, RELATION_FIELDS) else ""
        if not predicate or norm(predicate) in PLACEHOLDERS:
            result.dropped["malformed_relation"] += 1
            continue
        subject, reason = endpoint(
            item["subject"], "subject", predicate, result, names, window, max_entities, ner
        )
        obj = None
        if subject is not None:
            obj, reason = endpoint(
                item["object"], "object", predicate, result, names, window, max_entities, ner
            )
        if subject is None or obj is None:
            result.dropped[reason] += 1
            continue
        if folded_key(subject) == folded_key(obj):
            result.dropped["self_relation"] += 1
            continue
        key3 = (norm(subject), norm(predicate), norm(obj))
        if key3 in relation_keys:
            result.dropped["duplicate_relation"] += 1
            continue
        if len(result.relations) >= max_relations:
            result.dropped["over_cap"] += 1
            continue
        relation_keys.add(key3)
        result.relations.append({"subject": subject, "predicate": predicate, "object": obj})


def attribute_subject(raw: str, entities: list, window: str) -> tuple:
    """The name an attribute's subject stands for, or None and why it was dropped: "I" for the
    first person (but a chat's sender named "Me" is that sender, as written); a kept
    entity with the same key; else the one Person whose first name or surname it is; else the
    subject as the window writes it, where it has it as a whole word or phrase."""
    name = squeeze(raw)
    key = canonical_key(name)
    if name in window_senders(window):  # a chat's sender ("Me", "user") is that sender, as written
        return name, ""
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
    written = as_written(name, window)
    return (written, "") if written else (None, "ungrounded_subject")


def keep_attributes(raw: list, result: Extraction, window: str, max_attributes: int) -> None:
    """Validate attributes into result: a subject (attribute_subject), a grounded value that is
    no placeholder, the first value of each subject and attribute, at most max_attributes."""
    attribute_keys = {(canonical_key(a["subject"]), a["attribute"]) for a in result.attributes}
    for item in raw:
        attribute = normalise_attribute(item["attribute"]) if well_formed(item, ATTRIBUTE_FIELDS) else ""
        if not attribute:
            result.dropped["malformed_attribute"] += 1
            continue
        subject, reason = attribute_subject(item["subject"], result.entities, window)
        if subject is None:
            result.dropped[reason] += 1
            continue
        value = WHITESPACE.sub(" ", item["value"]).strip(VALUE_EDGES)
        if not value or norm(value) in PLACEHOLDERS:
            result.dropped["placeholder_value"] += 1
            continue
        value = as_written(value, window)
        if value is None:
            result.dropped["ungrounded_value"] += 1
            continue
        key2 = (canonical_key(subject), attribute)
        if key2 in attribute_keys:
            result.dropped["duplicate_attribute"] += 1
            continue
        if len(result.attributes) >= max_attributes:
            result.dropped["over_cap"] += 1
            continue
        attribute_keys.add(key2)
        result.attributes.append({"subject": subject, "attribute": attribute, "value": value})


def listed(data: dict, key: str) -> list:
    return data.get(key) if isinstance(data.get(key), list) else []


def accept(
    data: dict, window: str, max_entities: int, max_relations: int, ner: dict | None = None, result=None
) -> Extraction:
    """What is kept of data ({entities, relations, attributes}) for one window, added to result
    (a new Extraction by default); ner (fold(key) -> type, or 'Number') is what an NER backend
    found in the window, when one ran. Attributes are capped by max_relations."""
    result = result if result is not None else Extraction()
    keep_entities(listed(data, "entities"), result, window, max_entities, ner)
    resolve_bare_names(result)
    keep_relations(listed(data, "relations"), result, window, max_entities, max_relations, ner)
    keep_attributes(listed(data, "attributes"), result, window, max_relations)
    return result
