"""Who and where a document's structure names, without a model: the people of an email's From,
To and Cc headers (with their addresses and the message's Date), and the people and places of a
note's frontmatter keys. Standard library only; inlined into exo_private.structural_names
(sql/310_structural_graph.sql) and unit-tested as plain Python."""

import datetime
import email.utils
import re

from textnorm import canonical_key

EMAIL_ROLES = ("from", "to", "cc")
#: Most names taken from one header or frontmatter key (a mailing list's To is not a circle of friends).
MAX_NAMES = 50
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+$")
_WIKI = re.compile(r"^\[\[([^\]\[|#]+)(?:[#|][^\]\[]*)?\]\]$")
_SURNAME_FIRST = re.compile(r"^([^\W\d_][\w'.-]*),\s*([^\W\d_][\w'. -]*)$")


def header_people(value: str, was_cut: bool) -> list[tuple[str, str]]:
    """(name, address) of each well-formed address of a header, address lower-cased, name '' where
    the header gives none (or gives the address again). "Hale, Prudence" reads as "Prudence Hale".
    A header cut short loses its last address, which may be partial."""
    pairs = email.utils.getaddresses([value])
    if was_cut:
        pairs = pairs[:-1]
    people = []
    for name, address in pairs:
        address = address.strip().lower()
        if not _ADDRESS.match(address):
            continue
        name = " ".join(name.split())
        if "@" in name:
            name = ""
        if m := _SURNAME_FIRST.match(name):
            name = f"{m.group(2).strip()} {m.group(1)}"
        people.append((name, address))
    return people[:MAX_NAMES]


def frontmatter_names(value, split: bool) -> list[str]:
    """The names a frontmatter value gives: a string, or a list of strings (YAML reads an unquoted
    [[Wiki Link]] as a list in a list), each [[link]] unwrapped; with split, a string is also cut at
    commas and semicolons (a people list, not a place such as "Lyon, France"). Values that are no
    text (numbers, dates, mappings) and strings without a letter or with an @ name nobody."""
    items = value if isinstance(value, list) else [value]
    flat = [x for item in items for x in (item if isinstance(item, list) else [item])]
    names = []
    for item in flat:
        if not isinstance(item, str):
            continue
        for part in re.split(r"[,;]", item) if split else [item]:
            part = " ".join(part.split())
            if m := _WIKI.match(part):
                part = m.group(1).strip()
            if any(c.isalpha() for c in part) and "@" not in part and part not in names:
                names.append(part)
    return names[:MAX_NAMES]


def message_time(metadata: dict):
    """The email's Date header as an aware datetime, or None."""
    if metadata.get("date_source") != "email Date header":
        return None
    try:
        at = datetime.datetime.fromisoformat(metadata.get("date") or "")
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=datetime.UTC)


def _keyed(keys) -> dict:
    """A setting's {frontmatter key: predicate}, keys without case."""
    return {str(k).casefold(): str(v) for k, v in (keys or {}).items()}


def names(metadata: dict, frontmatter: dict, people_keys: dict, place_keys: dict) -> list[dict]:
    """Every name one document's structure gives, in order: {source, role, type, name, key, address,
    ordinal, at, predicate}. source is email (role the header: from, to, cc) or frontmatter (role
    the key as written); name is '' and key None for an address without a name (the caller may know
    whose it is); predicate is that of the edges to the name (WROTE_TO for To, COPIED for Cc, the
    key's from people_keys or place_keys), None for the sender."""
    rows = []
    if "from" in metadata:  # an email: only its extractor records the header
        at = message_time(metadata)
        cut = metadata.get("cut") or {}
        for role, predicate in zip(EMAIL_ROLES, (None, "WROTE_TO", "COPIED"), strict=True):
            if not isinstance(metadata.get(role), str):
                continue
            for i, (name, address) in enumerate(header_people(metadata[role], role in cut)):
                key = canonical_key(name) if name else None
                rows.append(
                    {"source": "email", "role": role, "type": "Person", "name": name if key else "", "key": key,
                     "address": address, "ordinal": i, "at": at, "predicate": predicate}
                )  # fmt: skip
    people, places = _keyed(people_keys), _keyed(place_keys)
    for key, value in (frontmatter or {}).items():
        folded = str(key).casefold()
        if folded not in people and folded not in places:
            continue
        kind, predicate = ("Person", people[folded]) if folded in people else ("Place", places[folded])
        for i, name in enumerate(frontmatter_names(value, split=kind == "Person")):
            if name_key := canonical_key(name):
                rows.append(
                    {"source": "frontmatter", "role": str(key), "type": kind, "name": name, "key": name_key,
                     "address": None, "ordinal": i, "at": None, "predicate": predicate}
                )  # fmt: skip
    return rows
