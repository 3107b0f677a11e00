"""Relations a CPU can find: a deterministic pattern pass over one extraction window.

Small chat models on a CPU keep almost no relations (docs/benchmarks.md), yet personal text states
the commonest ones in a handful of English constructions. `find` reads a window sentence by
sentence and returns the relations those constructions state, between names, in the predicate
vocabulary the path stage walks (plpy/relation_paths.py: PARENT_OF, SIBLING_OF, SPOUSE_OF,
FRIEND_OF, WORKS_AT, MANAGES, MEMBER_OF, RUNS, LIVES_IN), each with the sentence that states it:

  kinship and friendship  "Anna's husband Tom", "Tom, Anna's husband,", "Anna's husband is Tom",
                          "Tom is Anna's husband", "Tom is the husband of Anna", "Anna and her
                          husband Tom", "my sister Jane" (the author: a chat line's sender, an
                          email's sender, the owner in a note), "Anna married Tom", "Anna is
                          married to Tom", "Anna and Tom are married | siblings | friends",
                          "Anna is friends with Tom", and after a couple is named (married, or
                          "Anna and her husband Tom"): "Cy is their son", "Their daughter is Di",
                          "They have two children: Cy and Di"; in a chat of two, "you're a good
                          friend" / "we're still friends" (the sender and the other one)
  work                    "Tom works at | for Acme Ltd", "Tom joined Acme Ltd", "Tom is a nurse at
                          Leeds General", "Tom leads | manages | heads the Data Team", "Tom is on the
                          Data Team", "Tom and Anna are members of the Data Team", "the Data Team runs |
                          operates | maintains Bromira", "I lead the Data Team"
  residence               "Tom lives in Leeds", "Tom and Anna live in Leeds", "Tom moved to Leeds"
  across two sentences    the very next sentence of the same author names whom one introduced:
                          "Ana has a younger sister. She is Bea | Her name is Bea" (the pronoun
                          agreeing with the kinship word; "I have a brother. He's called Tom");
                          "Ana has three kids with Ben. Their names are Cy, Di and Ed" (as many
                          names as counted; "has N kids with" makes a couple, "Ana and Ben have
                          two children: Cy and Di" too); "Tom and Anna are on | joined the team"
                          (the one team the window names, written before); after people are put
                          on a team, "Welcome to Acme Ltd(, Tom)!" (they, or the one addressed,
                          work there, and so does the author who welcomes them)

A name is one to three capitalised words, none of them a function word, title, month, day or
kinship word (STOP); a name the window's NER labels as no person is no person. Precision first:
a construction negated, past ("was"), about an in-law or an ex, chained ("Anna's husband's car"),
inside quotation marks or reported speech (first person only) states nothing here. Stdlib only.
"""

from __future__ import annotations

import re
from email.utils import parseaddr

from exocortex.extraction.llm import acceptance
from exocortex.plpy.textnorm import canonical_key

# Words a name never is nor contains (capitalised at a sentence start, titles, calendar words).
STOP = frozenset(
    [
        "a",
        "about",
        "after",
        "again",
        "all",
        "also",
        "although",
        "an",
        "and",
        "another",
        "any",
        "anyone",
        "apparently",
        "april",
        "as",
        "at",
        "august",
        "aunt",
        "because",
        "before",
        "both",
        "brother",
        "but",
        "by",
        "christmas",
        "dad",
        "daddy",
        "daughter",
        "dear",
        "december",
        "did",
        "do",
        "does",
        "during",
        "easter",
        "even",
        "every",
        "everybody",
        "everyone",
        "everything",
        "father",
        "february",
        "few",
        "for",
        "friday",
        "friend",
        "from",
        "god",
        "good",
        "grandad",
        "grandma",
        "grandmother",
        "grandfather",
        "grandpa",
        "great",
        "happy",
        "he",
        "hello",
        "her",
        "here",
        "hers",
        "hey",
        "hi",
        "him",
        "his",
        "how",
        "however",
        "husband",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "january",
        "july",
        "june",
        "just",
        "last",
        "later",
        "let",
        "love",
        "many",
        "march",
        "may",
        "maybe",
        "me",
        "mine",
        "miss",
        "mom",
        "monday",
        "mother",
        "mr",
        "mrs",
        "ms",
        "mum",
        "my",
        "next",
        "no",
        "nobody",
        "none",
        "not",
        "now",
        "november",
        "october",
        "of",
        "oh",
        "ok",
        "on",
        "once",
        "one",
        "only",
        "or",
        "our",
        "perhaps",
        "please",
        "saturday",
        "september",
        "she",
        "since",
        "sir",
        "sister",
        "so",
        "some",
        "someone",
        "something",
        "son",
        "sorry",
        "still",
        "sunday",
        "thanks",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "though",
        "thursday",
        "to",
        "today",
        "tomorrow",
        "tonight",
        "tuesday",
        "uncle",
        "us",
        "was",
        "we",
        "wednesday",
        "well",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "wife",
        "will",
        "with",
        "wonderful",
        "yes",
        "yesterday",
        "yet",
        "you",
        "your",
        "dr",
        "prof",
        "st",
        "welcome",
        "regards",
        "cheers",
        "best",
    ]
)

_UPPER = "A-ZÀ-ÖØ-Þ"
_LOWER = "a-zß-öø-ÿ"
# One capitalised word ("Zoë", "O'Brien", "Smith-Jones"); a possessive 's is not part of it.
_WORD = rf"[{_UPPER}][{_LOWER}]+(?:[-'\u2019][{_UPPER}][{_LOWER}]+)*"
_NAME = rf"{_WORD}(?:[ \t]+{_WORD}){{0,2}}"
# A name slot: not inside a longer capitalised run on its left.
_BEFORE = r"(?<![\w'\u2019-])"
_POSS = r"(?:'s|\u2019s|'|\u2019)"
_NOT_POSS = r"(?!['\u2019]s\b|['\u2019]\w|[-\w])"

# kinship word -> (family, whose side): "child" = the named person is the possessor's child, so
# the possessor is the parent; "parent" = the named person is the parent; "peer" = symmetric.
KIN = {
    **dict.fromkeys(("mother", "father", "mum", "mom", "dad", "parent"), ("PARENT_OF", "parent")),
    **dict.fromkeys(("son", "daughter", "child", "kid"), ("PARENT_OF", "child")),
    **dict.fromkeys(("brother", "sister", "sibling"), ("SIBLING_OF", "peer")),
    **dict.fromkeys(("husband", "wife", "spouse", "partner"), ("SPOUSE_OF", "peer")),
    **dict.fromkeys(("friend",), ("FRIEND_OF", "peer")),
}
_KIN = "(?P<kin>" + "|".join(sorted(KIN, key=len, reverse=True)) + r")(?![\w-])"
_ADJ = r"(?:(?:older|younger|elder|eldest|oldest|youngest|little|big|baby|twin|best|old|close|dear|new|late)\s+)?"
# Plural words of "X and Y are ...".
_PAIR = {
    "married": "SPOUSE_OF",
    "siblings": "SIBLING_OF",
    "brothers": "SIBLING_OF",
    "sisters": "SIBLING_OF",
    "twins": "SIBLING_OF",
    "friends": "FRIEND_OF",
}
_END = r"(?=\s*(?:[.,;:!?)]|\s-|$|\s(?:and|but|who|since|for|in|at|on)\b))"


def _p(group: str) -> str:
    return _BEFORE + f"(?P<{group}>" + _NAME + ")"


# One name or a list of them ("Tom", "Tom and Anna", "Tom Reed, Anna Lind and Cy"), split by _LIST_ITEM.
_PEOPLE = _BEFORE + r"(?P<people>" + _NAME + r"(?:\s*,\s*" + _NAME + r")*(?:,?\s+and\s+" + _NAME + r")?)"
# What one joins or is on: a name, or "the team" (the one team the window names, _named_team).
_TEAM_OBJECT = r"(?:" + _p("b") + _NOT_POSS + r"|(?P<team>team)" + _END + r")"


# (regex, how): groups a / b name people (or an organisation / place for work and residence),
# `kin` the kinship word; `how` says which relation they state.
PATTERNS = [
    # Anna's husband Tom | Anna's husband, Tom
    (re.compile(_p("a") + _POSS + r"\s+" + _ADJ + _KIN + r",?\s+" + _p("b") + r"(?![-\w])"), "kin"),
    # Tom, Anna's husband,  | Tom (Anna's husband)
    (re.compile(_p("b") + r"\s*[,(]\s*" + _p("a") + _POSS + r"\s+" + _ADJ + _KIN + r"\s*[,)]"), "kin"),
    # Anna's husband is Tom
    (re.compile(_p("a") + _POSS + r"\s+" + _ADJ + _KIN + r"\s+is\s+" + _p("b") + _NOT_POSS + _END), "kin"),
    # Tom is Anna's husband
    (re.compile(_p("b") + r"\s+is\s+" + _p("a") + _POSS + r"\s+" + _ADJ + _KIN + _NOT_POSS), "kin"),
    # Tom is the husband of Anna | Tom is a friend of Anna
    (
        re.compile(_p("b") + r"\s+is\s+(?:the|a|an)\s+" + _ADJ + _KIN + r"\s+of\s+" + _p("a") + _NOT_POSS),
        "kin",
    ),
    # Anna and her husband Tom
    (
        re.compile(
            _p("a") + r"\s+and\s+(?:her|his|their)\s+" + _ADJ + _KIN + r",?\s+" + _p("b") + r"(?![-\w])"
        ),
        "kin",
    ),
    # my sister Jane | my sister, Jane
    (re.compile(r"(?<![\w'\u2019])[Mm]y\s+" + _ADJ + _KIN + r",?\s+" + _p("b") + r"(?![-\w])"), "my_kin"),
    # Jane, my sister,
    (re.compile(_p("b") + r"\s*,\s*my\s+" + _ADJ + _KIN + r"\s*[,.;!]"), "my_kin"),
    # My sister is Jane
    (
        re.compile(r"(?<![\w'\u2019])[Mm]y\s+" + _ADJ + _KIN + r"\s+is\s+" + _p("b") + _NOT_POSS + _END),
        "my_kin",
    ),
    # Jane is my sister
    (re.compile(_p("b") + r"\s+is\s+my\s+" + _ADJ + _KIN + _NOT_POSS), "my_kin"),
    # Anna married Tom | Anna is married to Tom
    (re.compile(_p("a") + r"\s+(?:married|is\s+married\s+to|wed)\s+" + _p("b") + _NOT_POSS), "SPOUSE_OF"),
    # Anna and Tom are married | are siblings | are old friends | got married | have been married
    (
        re.compile(
            _p("a")
            + r"\s+and\s+"
            + _p("b")
            + r"\s+(?:are|were|got|have\s+been)\s+(?:(?:old|best|close|good)\s+)?"
            r"(?P<pair>married|siblings|brothers|sisters|twins|friends)(?![\w-])"
        ),
        "pair",
    ),
    # Anna and Tom married | tied the knot
    (
        re.compile(_p("a") + r"\s+and\s+" + _p("b") + r"\s+(?:married|wed|tied\s+the\s+knot)(?![\w-])"),
        "SPOUSE_OF",
    ),
    # Anna is friends with Tom | Anna is close friends with Tom
    (
        re.compile(
            _p("a") + r"\s+is\s+(?:(?:old|best|close|good)\s+)?friends\s+with\s+" + _p("b") + _NOT_POSS
        ),
        "FRIEND_OF",
    ),
    # Tom works at Acme | Tom and Anna work for Acme
    (
        re.compile(
            _p("a")
            + r"(?:\s+and\s+"
            + _p("a2")
            + r")?\s+(?:works|work)\s+(?:at|for)\s+(?:the\s+)?"
            + _p("b")
            + _NOT_POSS
        ),
        "WORKS_AT",
    ),
    # Tom joined Acme | Tom and Anna joined the Data Team | Tom joined the team
    (re.compile(_PEOPLE + r"\s+joined\s+(?:the\s+)?" + _TEAM_OBJECT), "joined"),
    # Tom is a nurse at Leeds General
    (
        re.compile(
            _p("a")
            + rf"\s+is\s+(?:a|an|the)\s+(?P<role>[{_LOWER}]+(?:\s+[{_LOWER}]+){{0,2}})\s+(?:at|for)\s+"
            r"(?:the\s+)?" + _p("b") + _NOT_POSS
        ),
        "role_at",
    ),
    # Tom leads the Data Team
    (re.compile(_p("a") + r"\s+(?:leads|manages|heads)\s+the\s+" + _p("b") + _NOT_POSS), "MANAGES"),
    # I lead the Data Team
    (re.compile(r"(?<![\w'\u2019])I\s+(?:lead|manage|head)\s+the\s+" + _p("b") + _NOT_POSS), "my_MANAGES"),
    # Tom is on the Data Team | Tom and Anna are members of the Data Team | Tom is on the team
    (
        re.compile(
            _PEOPLE
            + r"\s+(?:is\s+(?:on|a\s+member\s+of)|(?P<are>are)\s+(?:on|members\s+of))\s+the\s+"
            + _TEAM_OBJECT
        ),
        "MEMBER_OF",
    ),
    # the Data Team runs | operates | maintains Bromira
    (
        re.compile(r"\b[Tt]he\s+" + _p("a") + r"\s+(?:runs|operates|maintains)\s+" + _p("b") + _NOT_POSS),
        "RUNS",
    ),
    # Tom lives in Leeds | Tom and Anna live in Leeds | Tom moved to Leeds
    (
        re.compile(
            _p("a")
            + r"(?:\s+and\s+"
            + _p("a2")
            + r")?\s+(?:lives|live|moved|is\s+based|are\s+based)\s+(?:in|to)\s+"
            + _p("b")
            + _NOT_POSS
            + r"(?!\s*\d)"
        ),
        "LIVES_IN",
    ),
]

# "their" and "they" of a couple named just before: "Ana and Ben married. Cy is their son."
_CHILD = r"(?P<kin>son|daughter|child|kid)(?![\w-])"
_CHILDREN = r"(?:children|kids|sons|daughters)"
THEIR = [
    # Cy is their son | Cy is their youngest daughter
    re.compile(_p("b") + r"\s+is\s+their\s+" + _ADJ + _CHILD),
    # Their son is Cy | Their daughter, Cy,
    re.compile(r"(?<![\w'\u2019])[Tt]heir\s+" + _ADJ + _CHILD + r"(?:\s+is|,)\s+" + _p("b") + _NOT_POSS),
]
# They have two children: Cy, Di and Ed | Their kids are Cy and Di
_LIST = re.compile(
    r"(?<![\w'\u2019])(?:[Tt]hey\s+have\s+(?:\w+\s+)?"
    + _CHILDREN
    + r"\s*[:,]|[Tt]heir\s+"
    + _CHILDREN
    + r"\s+are)\s+"
    r"(?P<list>[^.;!?]+)"
)
_LIST_ITEM = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+)")
COUPLE_SENTENCES = 3
"""A couple is "they" for this many sentences after the one that names them."""

# Across two sentences: a sentence introduces someone, the very next one (by the same author)
# names them. "Ana has a younger sister." | "I have a brother." (the author); fullmatch.
_RELATIVE = re.compile(
    r"(?:" + _p("a") + r"\s+has|(?P<i>I)\s+have)\s+(?:a|an|one)\s+" + _ADJ + _KIN + r"\s*[.!]?"
)
# "She is Bea." | "Her name is Bea." | "He's called Tom." | "They're called Sam."; fullmatch.
_CALLED = re.compile(
    r"(?:(?P<pro>[Ss]he|[Hh]e|[Tt]hey)(?:\s+(?:is|are)|['\u2019](?:s|re))\s+(?P<called>(?:called|named)\s+)?"
    r"|(?P<poss>[Hh]er|[Hh]is|[Tt]heir)\s+name(?:\s+is|['\u2019]s)\s+)" + _p("b") + r"\s*[.!]?"
)
# The pronoun a kinship word takes ("sister" -> she); the other words take any.
_GENDER = {
    **dict.fromkeys(("mother", "mum", "mom", "daughter", "sister", "wife"), "she"),
    **dict.fromkeys(("father", "dad", "son", "brother", "husband"), "he"),
}
_PRONOUN_OF = {"she": "she", "her": "she", "he": "he", "his": "he", "they": "they", "their": "they"}
_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
# Children counted: "Ana has three kids with Ben" (a couple) | "Ana and Ben have two children: Cy
# and Di" | "I have two sons."; fullmatch. Without the list, _NAMES_ARE names them next.
_PARENTS = r"(?:" + _p("a") + r"(?:\s+and\s+" + _p("a2") + r")?\s+(?:has|have)|(?P<i>I)\s+have)"
_N = r"(?P<n>\d{1,2}|" + "|".join(_COUNT) + ")"
_WITH = r"(?:\s+(?:together|with\s+" + _p("with") + "))?"
_COUNTED = re.compile(
    _PARENTS + r"\s+" + _N + r"\s+" + _CHILDREN + _WITH + r"(?:\s*[:,]\s*(?P<list>[^.;!?]+?))?\s*[.!]?"
)
# "Their names are Cy and Di." | "They are Cy and Di."; fullmatch.
_NAMES_ARE = re.compile(
    r"(?:[Tt]heir\s+names\s+are|[Tt]hey(?:\s+are|['\u2019]re)(?:\s+called|\s+named)?)\s+(?P<list>[^.;!?]+?)\s*[.!]?"
)
# "Welcome to Acme!" | "Welcome to Acme, Tom!" | "Tom, welcome aboard to Acme."; fullmatch. After a
# sentence that put people on a team: they (or the one addressed) work there.
_ADDRESSEE = r"(?:" + _p("to") + r",\s+)?"
_ADDRESSEE_AFTER = r"(?:,\s+(?:" + _p("to2") + r"|everyone|all))?"
_WELCOME = re.compile(
    _ADDRESSEE + r"[Ww]elcome\s+(?:aboard\s+)?to\s+(?:the\s+)?" + _p("b") + _ADDRESSEE_AFTER + r"\s*[.!]*"
)
# A team the window names ("the Data Team", "the Ops team"): "the team" is the only one.
_TEAM_NAMED = re.compile(r"\b[Tt]he\s+(?P<name>(?:[" + _UPPER + r"][\w'\u2019-]*\s+){1,3}[Tt]eam)\b")


def _named_team(text: str) -> str | None:
    """The one team text names, as a name ("Data Team"); None for none, several, or one written
    only in lower case ("the Data team")."""
    written = {m["name"] for m in _TEAM_NAMED.finditer(text)}
    if len({name_key(name) for name in written}) != 1:
        return None
    names = [clean_name(name) for name in written if re.fullmatch(_NAME, name)]
    return names[0] if names else None


# In a chat of two: "you" is the other one ("You're a good friend", "We're still friends").
_YOU_FRIEND = re.compile(
    r"(?<![\w'\u2019])(?:[Yy]ou(?:'re|\u2019re|\s+are)\s+(?:a|my)\s+(?:(?:good|best|true|dear|old|real|great)\s+)?friend"
    r"|[Ww]e(?:'re|\u2019re|\s+are)\s+(?:still\s+)?(?:(?:good|best|old|close)\s+)?friends)(?![\w-])"
)

# Words a sentence must contain (lower-cased) for a kind of pattern to be tried: most sentences
# state none of these relations, and a substring test is far cheaper than the expressions.
TRIGGERS = {
    "kin": tuple(KIN),
    "my_kin": tuple(KIN),
    "SPOUSE_OF": ("married", "wed", "knot"),
    "pair": tuple(_PAIR),
    "FRIEND_OF": ("friends",),
    "WORKS_AT": ("work",),
    "joined": ("joined",),
    "role_at": (" at ", " for "),
    "MANAGES": ("leads", "manages", "heads"),
    "my_MANAGES": ("lead", "manage", "head"),
    "MEMBER_OF": (" on the ", "member"),
    "RUNS": ("runs", "operates", "maintains"),
    "LIVES_IN": ("live", "moved", "based"),
}
# Roles at an organisation that are no employment.
_NOT_STAFF = frozenset({"customer", "client", "guest", "visitor", "student", "patient", "regular", "member"})
_TEAM = re.compile(r"\b(team|squad|group|crew|committee|club)$", re.I)
# A sentence ends at . ! ? ; or a line break (a chat line, a list item, a heading).
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]?")
_QUOTE = re.compile(r"[\"“”«»]")
_REPORTED = re.compile(r"\b(said|says|told|tells|wrote|writes|asked|asks|replied|claims|claimed)\b")
CHAT_LINE = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2} \d{2}:\d{2}|\(undated\)) (?P<sender>[^:\n]{1,80}): (?P<text>.*)$"
)


def clean_name(span: str) -> str | None:
    """The name a captured span holds: leading function words dropped ("On Monday Tom" -> "Tom"),
    None when a word of what is left is one (STOP) or nothing is left."""
    words = span.split()
    while words and words[0].casefold().strip("'\u2019") in STOP:
        words.pop(0)
    if not words or any(w.casefold() in STOP for w in words):
        return None
    return " ".join(words)


def _kin_relation(kin: str, possessor: str, named: str) -> tuple[str, str, str]:
    family, side = KIN[kin]
    if side == "parent":
        return (named, family, possessor)
    return (possessor, family, named)


def _senders(text: str) -> set[str]:
    """The senders of a chat window's lines (none for other text)."""
    return {m["sender"].strip() for m in map(CHAT_LINE.match, text.split("\n")) if m}


def sentences(text: str, author: str | None):
    """(sentence, author) pairs: a chat line's sender is the author of its sentences."""
    for line in text.split("\n"):
        if line.startswith(">"):  # a quoted email line: someone else wrote it
            continue
        who, body = author, line
        chat = CHAT_LINE.match(line)
        if chat:
            who, body = chat["sender"].strip(), chat["text"]
        for m in _SENTENCE.finditer(body):
            sentence = m.group().strip()
            if sentence:
                yield sentence, who


# A sentence that opens with a singular third-person pronoun: in a note about one person, that
# person, unless the sentence before named someone else.
_PRONOUN = re.compile(r"(?P<pro>She|He|Her|His)\b(?!['\u2019])")
_ANY_PRONOUN = re.compile(r"\b(?P<pro>[Ss]he|[Hh]e|[Hh]er|[Hh]is)\b(?!['\u2019])")


def note_subject(title: str | None, known: dict[str, str] | None = None) -> str | None:
    """The person a note is about: its title when that is a full name (two or three capitalised
    words) that the workspace does not know as something other than a person."""
    title = " ".join((title or "").split())
    name = clean_name(title) if re.fullmatch(_NAME, title) else None
    if not name or " " not in name or name != title:
        return None
    return name if (known or {}).get(name_key(name), "Person") in ("Person", "Topic") else None


class NoteSubject:
    """Who an opening "She"/"He" ("Her"/"His") means, sentence by sentence, in a note about one
    person: that person, unless the sentence before named someone else and was not itself about
    them; once the note calls them "she", "he" is someone else (and the other way round)."""

    def __init__(self, about: str, known: dict[str, str] | None):
        self.about = about
        self.mine = {name_key(word) for word in about.split()} | {name_key(about)}
        self.known = known or {}
        self.pronoun: str | None = None
        self.previous = ""
        self.previous_on_subject = True  # the title line

    def means_subject(self, sentence: str) -> bool:
        """Whether the first he/she/his/her of sentence means the subject, by read()'s rule,
        wherever it stands ("There he married Rosa"), when no full name comes before it (then
        the sentence says whom it means); asked before read() reads the sentence."""
        m = _ANY_PRONOUN.search(sentence)
        if not m or full_names(sentence[: m.start()]):
            return False
        return self._may_mean("he" if m["pro"].lower() in ("he", "his") else "she")

    def _may_mean(self, family: str) -> bool:
        """A pronoun of family may mean the subject: the note has not called them otherwise, and
        the sentence before was on the subject or named nobody else."""
        others = {name_key(n) for n in full_names(self.previous)} - self.mine
        others |= {
            name_key(w)
            for w in re.findall(_WORD, self.previous)
            if self.known.get(name_key(w)) == "Person" and name_key(w) not in self.mine
        }
        return self.pronoun in (None, family) and (self.previous_on_subject or not others)

    def read(self, sentence: str) -> str:
        """sentence, its opening pronoun replaced by the subject (or the subject's) where it means them."""
        m = _PRONOUN.match(sentence)
        said = sentence
        if m:
            family = "he" if m["pro"] in ("He", "His") else "she"
            if self._may_mean(family):
                self.pronoun = family
                said = (self.about + "'s" if m["pro"] in ("Her", "His") else self.about) + sentence[m.end() :]
        self.previous = sentence
        self.previous_on_subject = said.startswith(self.about) or any(
            name_key(w) in self.mine for w in re.findall(_WORD, sentence)[:1]
        )
        return said


def find(
    text: str, author: str | None = None, labels: dict[str, str] | None = None, about: str | None = None
) -> list[dict]:
    """The relations text states: [{subject, predicate, object, subject_type, object_type,
    evidence}], once each in order. author: who "I" and "my" are (a chat line's sender overrides
    it); labels: an NER backend's types of the window's spans (folded key -> type), when one ran;
    about: the person a note is about (note_subject), whom an opening "She"/"Her" means."""
    window = PatternPass(text, labels, about)
    for said, who in sentences(text, author):
        window.read(said, who)
    return window.found


class PatternPass:
    """One pass of `find` over a window, sentence by sentence: the relations found so far, and
    what the sentences read so far leave for the next ones (a couple, the window's team, someone
    introduced but not yet named)."""

    def __init__(self, text: str, labels: dict[str, str] | None, about: str | None):
        self.labels = labels
        self.found: list[dict] = []
        self.seen: set[tuple[str, str, str]] = set()
        # The first word of a full name the window writes that the labels call no other thing is
        # a person's first name where it stands alone, whatever the labels call it there: the
        # recogniser often calls an unfamiliar one an organisation ("Braeskel has 3 kids with
        # Fenirrow" beside "Fenirrow Quywick's wife is Braeskel Quywick").
        written = full_names(text)
        self.given_names = {
            name_key(name.split()[0])
            for name in written
            if (labels or {}).get(name_key(name), "Person") == "Person"
        }
        # A one-word subject of a work or residence pattern ("Upstream moved to Apache 2") must be
        # a known person or the first name of a full name the window writes.
        self.first_names = {name_key(name.split()[0]) for name in written}
        self.first_names |= {k for k, v in (labels or {}).items() if v == "Person"}
        self.senders = _senders(text)
        self.couple: tuple[str, str] | None = None
        self.couple_age = COUPLE_SENTENCES + 1  # sentences since the couple was named
        self.subject = NoteSubject(about, labels) if about else None
        self.team = _named_team(text)  # whom "the team" means
        self.team_named = False  # whether a sentence so far named the window's team
        self.last: dict = {}  # what a sentence left for the next one to name: relative, children, newcomers

    def person(self, span: str | None) -> str | None:
        """The name span holds, unless the NER labels call it something other than a person or
        topic and it is no first name of the window's people (given_names)."""
        name = clean_name(span) if span else None
        key = name_key(name) if name else None
        if name and self.labels and self.labels.get(key, "Person") not in ("Person", "Topic"):
            return name if key in self.given_names else None
        return name

    def worker(self, span: str | None) -> str | None:
        """A person who works or lives somewhere: a full name, or one word that is a known
        person or the first name of a full name the window writes."""
        name = self.person(span)
        return name if name and (" " in name or name_key(name) in self.first_names) else None

    def thing(self, span: str | None) -> str | None:
        """An organisation, place or topic: a name the NER labels as no person, date or number."""
        name = clean_name(span) if span else None
        if name and self.labels and self.labels.get(name_key(name)) in ("Person", "Date", "Number"):
            return None
        return name

    def names(self, span: str, count: int | None = None) -> list[str]:
        """The people a list names ("Cy, Di and Ed"): all its items, or none when one is no name
        or they are not `count`."""
        items = [self.person(x) if re.fullmatch(_NAME, x) else None for x in _LIST_ITEM.split(span.strip())]
        people = [x for x in items if x]
        return people if len(people) == len(items) and count in (None, len(items)) else []

    def add(self, subject, predicate, obj, types, evidence):
        """Keep a relation unless an end is missing, both ends are one, or it is found already
        (a symmetric one either way round)."""
        if not subject or not obj or name_key(subject) == name_key(obj):
            return
        key = (name_key(subject), predicate, name_key(obj))
        if key in self.seen or (predicate in _SYMMETRIC and (key[2], predicate, key[0]) in self.seen):
            return
        self.seen.add(key)
        self.found.append(
            {"subject": subject, "predicate": predicate, "object": obj, "subject_type": types[0],
             "object_type": types[1], "evidence": evidence}
        )  # fmt: skip

    def add_children(self, parents, kids, evidence):
        for child in kids:
            for parent in parents:
                self.add(parent, "PARENT_OF", child, ("Person", "Person"), evidence)

    def name_couple(self, a: str, b: str) -> None:
        """a and b are the couple "they" and "their" mean for the next COUPLE_SENTENCES sentences."""
        self.couple, self.couple_age = (a, b), 0

    def read(self, said: str, who: str | None) -> None:
        """The relations one sentence states, alone and with the sentences before it."""
        sentence = self.subject.read(said) if self.subject else said
        quoted = bool(_QUOTE.search(sentence))
        reported = quoted or bool(_REPORTED.search(sentence))
        self.couple_age += 1
        self.team_named = self.team_named or bool(self.team and _TEAM_NAMED.search(sentence))
        before = self.last if self.last.get("who") == who and not quoted else {}
        self.last = {"who": who}
        if self.couple and self.couple_age <= COUPLE_SENTENCES and not quoted:
            self.couple_children(sentence)
        # the pronoun ("She is Bea") is read as written, not as a note's subject
        if "relative" in before and (m := _CALLED.fullmatch(said)):
            self.relative_named(m, *before["relative"], sentence)
        if "children" in before and (m := _NAMES_ARE.fullmatch(said)):
            parents, count = before["children"]
            self.add_children(parents, self.names(m["list"], count), sentence)
        if "newcomers" in before and (m := _WELCOME.fullmatch(said)):
            self.newcomers_welcomed(m, before["newcomers"], who, reported, sentence)
        if not quoted and (m := _RELATIVE.fullmatch(sentence)):
            possessor = who if m["i"] else self.person(m["a"])
            if possessor:
                self.last["relative"] = (possessor, m["kin"])
        if not quoted and (m := _COUNTED.fullmatch(sentence)):
            self.children_counted(m, who, sentence)
        if who and not reported:
            self.friend_in_chat(who, sentence)
        self.match_patterns(sentence, who, quoted, reported)

    def friend_in_chat(self, who: str, sentence: str) -> None:
        """In a chat of two, "you're a good friend" / "we're still friends": the sender and the other one."""
        if len(self.senders) == 2 and who in self.senders and _YOU_FRIEND.search(sentence):
            (other,) = self.senders - {who}
            self.add(who, "FRIEND_OF", clean_name(other) or None, ("Person", "Person"), sentence)

    def couple_children(self, sentence: str) -> None:
        """The children "their" and "they" of the couple named just before name: "Cy is their son",
        "They have two children: Cy and Di"."""
        for regex in THEIR:
            for m in regex.finditer(sentence):
                for parent in self.couple:
                    self.add(parent, "PARENT_OF", self.person(m["b"]), ("Person", "Person"), sentence)
        for m in _LIST.finditer(sentence):
            self.add_children(self.couple, self.names(m["list"]), sentence)

    def relative_named(self, m: re.Match, possessor: str, kin: str, sentence: str) -> None:
        """The relative the sentence before introduced, named by a pronoun that agrees with the
        kinship word: "Ana has a younger sister. She is Bea." """
        pronoun = _PRONOUN_OF[(m["pro"] or m["poss"]).lower()]
        # "She is Bea" may be "She is French": a one-word name must be a person the window knows
        named = self.person(m["b"]) if m["poss"] or m["called"] else self.worker(m["b"])
        they_are = m["pro"] in ("They", "they") and not m["called"]  # "They are Sam": who?
        if named and pronoun == _GENDER.get(kin, pronoun) and not they_are:
            self.add(*_kin_relation(kin, possessor, named), ("Person", "Person"), sentence)

    def newcomers_welcomed(
        self, m: re.Match, newcomers: list[str], who: str | None, reported: bool, sentence: str
    ) -> None:
        """After a sentence that put people on a team, "Welcome to Acme(, Tom)!": they (or the one
        addressed) work at Acme, and so does the author who welcomes them."""
        org = self.thing(m["b"])
        to = name_key(m["to"] or m["to2"] or "")
        if not org or _TEAM.search(org) or (self.labels or {}).get(name_key(org)) == "Place":
            return
        welcomed = [p for p in newcomers if not to or to in (name_key(p), name_key(p.split()[0]))]
        for p in welcomed:
            self.add(p, "WORKS_AT", org, ("Person", "Org"), sentence)
        # who put them on the team and welcomes them there is there too
        if welcomed and who and not reported:
            self.add(who, "WORKS_AT", org, ("Person", "Org"), sentence)

    def children_counted(self, m: re.Match, who: str | None, sentence: str) -> None:
        """Children counted, "Ana has three kids with Ben(: Cy, Di and Ed)": two parents are a
        couple; the children are named here, or left for the next sentence to name."""
        parents = ([who] if m["i"] else []) + [self.person(x) for x in (m["a"], m["a2"], m["with"]) if x]
        count = int(m["n"]) if m["n"].isdigit() else _COUNT[m["n"]]
        if not parents or not all(parents):
            return
        if len(parents) == 2:
            self.name_couple(parents[0], parents[1])
        if m["list"]:
            self.add_children(parents, self.names(m["list"], count), sentence)
        else:
            self.last["children"] = (parents, count)

    def match_patterns(self, sentence: str, who: str | None, quoted: bool, reported: bool) -> None:
        """The relations of PATTERNS the sentence states, each kind tried only when its TRIGGERS
        words are in it."""
        lowered = sentence.lower()
        for regex, how in PATTERNS:
            if not any(word in lowered for word in TRIGGERS[how]):
                continue
            if quoted and not how.startswith("my"):
                # Names inside quotation marks may be titles, or someone else's words.
                continue
            for m in regex.finditer(sentence):
                if how in ("kin", "my_kin", "pair", "SPOUSE_OF", "FRIEND_OF"):
                    self.kinship(how, m, who, reported, sentence)
                elif how in ("joined", "MEMBER_OF"):
                    self.membership(how, m, sentence)
                else:
                    self.work_or_residence(how, m, who, reported, sentence)

    def kinship(self, how: str, m: re.Match, who: str | None, reported: bool, sentence: str) -> None:
        """A kin, my_kin, pair, SPOUSE_OF or FRIEND_OF match; a marriage names the couple."""
        groups = m.groupdict()
        pa, pb = self.person(groups.get("a")), self.person(groups.get("b"))
        if how == "kin":
            if pa and pb:
                s, p, o = _kin_relation(m["kin"], pa, pb)
                self.add(s, p, o, ("Person", "Person"), sentence)
                if p == "SPOUSE_OF":
                    self.name_couple(pa, pb)
        elif how == "my_kin":
            if who and pb and not reported:
                self.add(*_kin_relation(m["kin"], who, pb), ("Person", "Person"), sentence)
        else:
            predicate = _PAIR[m["pair"]] if how == "pair" else how
            self.add(pa, predicate, pb, ("Person", "Person"), sentence)
            if predicate == "SPOUSE_OF" and pa and pb:
                self.name_couple(pa, pb)

    def membership(self, how: str, m: re.Match, sentence: str) -> None:
        """A joined or MEMBER_OF match: the people it lists joined or are on a team (MEMBER_OF,
        and they are newcomers the next sentence may welcome), or joined an organisation (WORKS_AT)."""
        people = [self.worker(x) for x in _LIST_ITEM.split(m["people"].strip())]
        org = (self.team if self.team_named else None) if m["team"] else self.thing(m["b"])
        if how == "MEMBER_OF" and bool(m["are"]) != (len(people) > 1):
            return  # "I met Ana and Tom is on the team": who is on it?
        member = how == "MEMBER_OF" or bool(org and _TEAM.search(org))
        if not org or not all(people):
            return
        for p in people:
            self.add(p, "MEMBER_OF" if member else "WORKS_AT", org, ("Person", "Org"), sentence)
        if member:
            self.last.setdefault("newcomers", []).extend(people)

    def work_or_residence(
        self, how: str, m: re.Match, who: str | None, reported: bool, sentence: str
    ) -> None:
        """A WORKS_AT, LIVES_IN, role_at, MANAGES, my_MANAGES or RUNS match."""
        groups = m.groupdict()
        a, b = groups.get("a"), groups.get("b")
        if how in ("WORKS_AT", "LIVES_IN"):
            kind = "Org" if how == "WORKS_AT" else "Place"
            place = self.thing(b)
            for who_ in (a, groups.get("a2")):
                self.add(self.worker(who_), how, place, ("Person", kind), sentence)
        elif how == "role_at":
            if m["role"].split()[-1] not in _NOT_STAFF:
                self.add(self.worker(a), "WORKS_AT", self.thing(b), ("Person", "Org"), sentence)
        elif how == "MANAGES":
            self.add(self.worker(a), how, self.thing(b), ("Person", "Org"), sentence)
        elif how == "my_MANAGES":
            if who and not reported:
                self.add(who, "MANAGES", self.thing(b), ("Person", "Org"), sentence)
        elif how == "RUNS":
            # from here on, "the team" of a later sentence is what runs something here
            self.team = self.thing(a)
            if self.team and _TEAM.search(self.team):
                self.add(self.team, "RUNS", self.thing(b), ("Org", "Topic"), sentence)


_SYMMETRIC = frozenset({"SPOUSE_OF", "SIBLING_OF", "FRIEND_OF"})


def name_key(name: str) -> str:
    """How names are compared, as extraction and ner.spacy_labels compare them."""
    return acceptance.fold(canonical_key(name) or "")


_RUN = re.compile(_BEFORE + _NAME)


def full_names(text: str) -> list[str]:
    """The names of two or three words the text writes (leading function words dropped), each
    once: what a first name or surname of a relation's end may stand for in the window."""
    out: dict[str, str] = {}
    for m in _RUN.finditer(text):
        name = clean_name(m.group())
        if name and " " in name:
            out.setdefault(name_key(name), name)
    return list(out.values())


def author(is_chat: bool, from_header: str | None, owner: str | None) -> str | None:
    """Who "I" and "my" are in a window: in a chat each line's sender (None here), in an email
    the name of its From header (None without one), in a note the owner (None when unnamed)."""
    if is_chat:
        return None
    if from_header:
        name = parseaddr(from_header)[0].strip()
        return clean_name(name) if re.fullmatch(_NAME, name) else None
    return owner


def add_to(
    result: acceptance.Extraction,
    text: str,
    max_entities: int,
    max_relations: int,
    who: str | None = None,
    known: dict[str, str] | None = None,
    about: str | None = None,
) -> int:
    """The pattern pass of one window, validated into result beside the model's extraction (or
    into an empty one): an end that is a first name or surname resolves to the one person of the
    window (the model's entities, known names, the full names the window writes) it names
    (acceptance.keep_relations: the same resolution and drops); at most max_relations and
    max_entities more. known: folded key -> type of names the workspace already has (structure,
    frontmatter, an NER backend); about: the person a note is about. Returns how many relations it
    added."""
    return keep_found(result, text, find(text, who, known, about), max_entities, max_relations, known)


def keep_found(
    result: acceptance.Extraction,
    text: str,
    found: list[dict],
    max_entities: int,
    max_relations: int,
    known: dict[str, str] | None = None,
) -> int:
    """Relations a pass found (`find`'s shape) validated into result as add_to does: their ends
    added as entities (typed by known, else as the pass typed them), then
    acceptance.keep_relations. Returns how many relations it added."""
    if not found:
        return 0
    before = {name_key(e["name"]) for e in result.entities}
    present = set(before)
    for r in found:
        for side, said in ((r["subject"], r["subject_type"]), (r["object"], r["object_type"])):
            if name_key(side) not in present and (" " in side or said != "Person"):
                present.add(name_key(side))
                kind = (known or {}).get(name_key(side))
                result.entities.append(
                    {"name": side, "type": kind if kind in acceptance.ENTITY_TYPES else said}
                )
    for name in full_names(text):
        if name_key(name) not in present:
            present.add(name_key(name))
            result.entities.append(
                {"name": name, "type": acceptance.checked_type(name, name, "Person") or "Person"}
            )
    n = len(result.relations)
    raw = [{"subject": r["subject"], "predicate": r["predicate"], "object": r["object"]} for r in found]
    acceptance.keep_relations(raw, result, text, len(result.entities) + max_entities, n + max_relations)
    ends = {name_key(r[side]) for r in result.relations for side in ("subject", "object")}
    result.entities[:] = [e for e in result.entities if name_key(e["name"]) in before | ends]
    return len(result.relations) - n
