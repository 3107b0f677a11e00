"""What a name's own words say about its type (stdlib only): the cue lists, in one place.

"Meridale Mutual" is an organisation and "Harbour Road" a place whatever a small model
typed them. The worker corrects an extraction's types with cue_type, and the database's
exo_private.cue_type (this module inlined) lets upsert_entity choose a type by the same rule.
The placeholder words a model writes when it has no real name live here too, and the lower-case
words a name may hold (written_as_name: "Car purchase" is no person, "Bank of England" an
organisation).
"""

# A name of two or more words that has one of these words is an organisation ("Bank of
# England", "Hale Lettings", an email list such as "Data Platform"), unless its last word makes
# it a place ("Bank Street").
ORG_WORDS = frozenset(
    {"ltd", "limited", "inc", "incorporated", "llc", "llp", "plc", "corp", "corporation", "gmbh"}
    | {"ag", "sa", "bv", "pty", "co", "company", "mutual", "bank", "labs", "lab", "group", "council"}
    | {"agency", "university", "college", "school", "academy", "hospital", "clinic", "trust"}
    | {"foundation", "society", "association", "institute", "ministry", "department", "committee"}
    | {"partners", "associates", "holdings", "insurance", "lettings", "services", "solutions"}
    | {"systems", "technologies", "studios", "club", "church", "union", "federation", "bureau"}
    | {"office", "authority", "commission", "surgery"}
    # teams and lists that mail comes from or goes to ("Data Platform", "IT Support")
    | {"team", "platform", "support", "helpdesk", "operations", "newsletter", "alerts", "notifications"}
)

# A name of two or more words ending in one of these is a place ("Harbour Road", "Larkhaven
# Town"), and so is one starting with one of PLACE_FIRST_WORDS ("Mount Hood", "River Esk").
PLACE_LAST_WORDS = frozenset(
    {"street", "st", "road", "rd", "avenue", "ave", "drive", "close", "crescent", "square"}
    | {"terrace", "gardens", "mews", "boulevard", "city", "town", "village", "river", "mountain"}
    | {"mountains", "lake", "hills", "bay", "island", "islands", "valley", "county", "borough"}
    | {"harbour", "harbor", "beach", "forest", "estate", "quay", "wharf", "station", "airport"}
)
# Place words that are common surnames too ("Lois Lane", "Benny Hill"): a cue only where the
# model did not say Person.
PLACE_LAST_WORDS_UNLESS_PERSON = frozenset(
    {"lane", "ln", "hill", "heath", "park", "grove", "row", "moor", "fell", "bridge", "common"}
)
PLACE_FIRST_WORDS = frozenset({"mount", "mt", "lake", "loch", "river", "cape", "isle", "port", "fort"})

# Lower-case words inside a name: the particles of people's names ("Ludwig van Beethoven", "Ali
# bin Said"), and with them the function words of an organisation's or place's ("Bank of England",
# "Newcastle upon Tyne"). Any other lower-case word makes a phrase of common words ("Car purchase",
# "Sam's landlord"), no name.
NAME_PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "da", "das", "dos", "del", "della", "di", "du", "la", "le"}
    | {"bin", "ibn", "al", "el", "ter", "ten", "y", "zu", "af"}
)
NAME_FUNCTION_WORDS = NAME_PARTICLES | {"of", "and", "for", "the", "&", "on", "upon", "am", "sur"}
# A person's name starts with no article: "The Inspector", "The Ledger" are roles and things.
ARTICLES = frozenset({"the", "a", "an"})

# What a small model writes when it has no real name: the schema's own words, the type
# names, placeholders and pronouns (which say nothing about who is meant).
PLACEHOLDERS = frozenset(
    {"subject", "object", "predicate", "attribute", "value", "name", "type", "entity", "entities"}
    | {"person", "people", "place", "org", "organisation", "organization", "topic", "date"}
    | {"relation", "relations", "example", "unknown", "none", "null", "n/a", "na", "nil", "string"}
    | {"text", "tbd", "-", "?", "...", "etc", "other", "misc"}
    | {"i", "me", "my", "myself", "you", "your", "he", "him", "his", "she", "her", "hers", "it", "its"}
    | {"they", "them", "their", "we", "us", "our", "someone", "somebody", "something"}
)


def _words(name):
    """The lower-case words of a name, punctuation around them dropped ("Acme, Inc." -> acme, inc)."""
    words = []
    for raw in name.split():
        word = raw.strip(".,;:!?()[]{}\"'`\u201c\u201d\u2018\u2019").casefold()
        if word:
            words.append(word)
    return words


def _lower_case(word):
    """A word of cased letters written in lower case ("hire"; not "eBay", "27" or "王伟")."""
    return word == word.lower() and word != word.upper()


def written_as_name(written, type_):
    """Whether a name of type_ (Person, Org or Place) is written as one: a capital in some word,
    and no lower-case word but the particles and function words a name holds (NAME_PARTICLES
    for a person, NAME_FUNCTION_WORDS for the others); a person's no article first. A script
    without case passes."""
    allowed = NAME_PARTICLES if type_ == "Person" else NAME_FUNCTION_WORDS
    words = [w.strip(".,;:!?()[]{}\"'`\u201c\u201d\u2018\u2019") for w in written.split()]
    if type_ == "Person" and words and words[0].casefold() in ARTICLES:
        return False
    lower = [w for w in words if _lower_case(w)]
    if lower and len(lower) == sum(w.lower() != w.upper() for w in words):
        return False
    return all(w.casefold() in allowed for w in lower)


def cue_type(name, said=None):
    """'Place', 'Org' or None: the type a name's own words say it has, where the model said
    `said` (None: unknown). Only names of two or more words carry a cue; a bare "Bank" or
    "Street" says nothing."""
    if name is None:
        return None
    words = _words(name)
    if len(words) < 2:
        return None
    if words[-1] in PLACE_LAST_WORDS or (said != "Person" and words[-1] in PLACE_LAST_WORDS_UNLESS_PERSON):
        return "Place"
    if any(word in ORG_WORDS for word in words):
        return "Org"
    if words[0] in PLACE_FIRST_WORDS:
        return "Place"
    return None
