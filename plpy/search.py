"""Retrieval logic that is not a query (stdlib only).

Inlined into exo_private.retrieve (`# exo:include search`) and importable as
plain Python for tests. The database runs the stage queries; this module decides
what the query words are, which candidates a workspace admits, how the combined
pool is ordered, and what a context packet holds.
"""

import datetime
import json
import math
import re
from itertools import pairwise

from textnorm import canonical_key

PRESENT_BANDS = ("current", "recent")
ALL_BANDS = ("current", "recent", "archival")
MAX_QUERY_CHARS = 1000  # the query's words, n-grams and identifiers come from this much of it
MAX_INPUT_CHARS = 2000  # a search reads no more of a query (the temporal scan and the embedding)
MAX_NGRAM = 6
MAX_IDENTIFIERS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDENTIFIER_INNER = re.compile(r"[-_./:#@]")
_POSSESSIVE_END = re.compile(r"['\u2019]s$")
_QUOTED = re.compile(r"\"([^\"]{3,100})\"")
_EDGE = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=[-*#>|])")
# The start of a message line in a chat chunk: its time (or "(undated)") and its sender; in a
# packet's excerpt the time without the day its citation names (without_day).
_CHAT_LABEL = re.compile(r"^((?:\d{4}-\d\d-\d\d )?\d\d:\d\d|\(undated\)) [^\n]*?: ", re.M)
# Words too common to say what a passage is about (excerpt choice only; BM25 has its own).
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between both
    but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when where which
    while who whom whose why will with would you your yours""".split()  # noqa: SIM905 (a list literal would run to a page)
)


# What a quantity of a unit measures, so that a line telling "42 km" answers "What distance...?"
# (units are a closed class: the common ones of length, data, weight and duration).
MEASURES = {
    **dict.fromkeys(["km", "mi", "m", "miles", "mile", "metres", "meters", "ft", "feet"], ("distance", "length")),
    **dict.fromkeys(["gb", "mb", "tb", "kb"], ("data", "storage")),
    **dict.fromkeys(["kg", "lb", "lbs", "pounds", "stone"], ("weight",)),
    **dict.fromkeys(["ms", "sec", "secs", "seconds", "min", "mins", "minutes", "hours", "hrs"], ("time", "duration")),
}  # fmt: skip


def measured_units(terms):
    """The units a question's words ask a quantity of (the mirror of MEASURES: "data" -> gb, mb,
    tb, kb; "distance" -> km, miles ...), for the lexical stage to find a line that tells the
    quantity in other words ("50 GB" for "How much data ..."). "time" asks of too much else."""
    asked = set(terms) - {"time"}
    return sorted({unit for unit, measures in MEASURES.items() if asked & set(measures) and len(unit) > 1})


# -- the query ---------------------------------------------------------------------------


def query_words(query):
    """The query's words, lower-cased, in order (its first MAX_QUERY_CHARS characters)."""
    return [w.casefold() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]


# A negated auxiliary ("don't", "won't", "hasn't"): a word of the asking, not of its subject, whose
# first part would otherwise be read as a word of its own ("don", "won").
_NEGATED = re.compile(r"\b\w+n['\u2019]t\b", re.I)


def content_words(query):
    """Distinct words of the query that are not stopwords nor negated auxiliaries, in order."""
    seen = []
    for word in query_words(_NEGATED.sub(" ", (query or "")[:MAX_QUERY_CHARS])):
        if word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def _key_runs(tokens, max_n, keep):
    """Canonical keys of every run of 1..max_n tokens, distinct, in order, that `keep` accepts."""
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            key = canonical_key(" ".join(tokens[i : i + n]))
            if key and keep(key) and key not in keys:
                keys.append(key)
    return keys


def ngram_keys(query, max_n=MAX_NGRAM):
    """Every run of 1..max_n whitespace-separated tokens, as canonical keys (an entity name
    or a title can only match one of these); a run that ends in a possessive also without it
    ("Olga Oyelaran's daughter" names Olga Oyelaran; "McDonald's" stays too)."""
    tokens = [t for t in ((query or "")[:MAX_QUERY_CHARS]).split() if t.strip(_EDGE)]
    keys = _key_runs(tokens, max_n, lambda key: True)
    owners = (canonical_key(_POSSESSIVE_END.sub("", key)) for key in keys if _POSSESSIVE_END.search(key))
    return keys + [key for key in dict.fromkeys(owners) if key and key not in keys]


def written_names(query):
    """The words a question writes as names, casefolded: capitalised after its first word, not all
    capitals ("Where does Pixel sleep?": pixel; "Why doesn't lsof report VxFS ...": vxfs; not
    "HP")."""
    return {w.casefold() for w in _WORD.findall(query or "")[1:] if w[:1].isupper() and not w.isupper()}


def name_keys(query, max_n=3):
    """Runs of 1..max_n query words as canonical keys: a person's name or first name as the
    question writes it, without the punctuation around it ("Priya's" is "priya")."""
    return _key_runs(query_words(query), max_n, lambda key: len(key) > 1 and key not in STOPWORDS)


def title_keys(query, max_n=MAX_NGRAM):
    """Runs of 1..max_n query words joined by single spaces: documents.title_key's form, which
    lower-cases (SQL lower(), not casefold: "Straße" stays "straße")."""
    words = [w.lower() for w in _WORD.findall((query or "")[:MAX_QUERY_CHARS])]
    keys = []
    for n in range(1, max_n + 1):
        for i in range(len(words) - n + 1):
            key = " ".join(words[i : i + n])
            if (n > 1 or len(key) >= 4) and key not in STOPWORDS and key not in keys:
                keys.append(key)
    return keys


def identifiers(query):
    """Strings to find verbatim: quoted phrases, and tokens that mix letters with digits or
    carry inner punctuation (host names, ticket ids, file names, versions). Abbreviations of
    single letters ("e.g.", "U.S.") are not identifiers."""
    text = (query or "")[:MAX_QUERY_CHARS]
    found = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    for token in text.split():
        token = token.strip(_EDGE)
        if not 3 <= len(token) <= 100:
            continue
        has_digit = any(c.isdigit() for c in token)
        has_alpha = any(c.isalpha() for c in token)
        inner = _IDENTIFIER_INNER.search(token[1:-1]) and any(len(w) > 1 for w in _WORD.findall(token))
        if has_alpha and (has_digit or inner):
            found.append(token)
    unique = []
    for item in found:
        if item and item.casefold() not in [u.casefold() for u in unique]:
            unique.append(item)
    return unique[:MAX_IDENTIFIERS]


def file_keys(query):
    """Lower-cased tokens that could be a file name or a file's stem."""
    return [i.casefold().rsplit("/", 1)[-1] for i in identifiers(query) if " " not in i]


def stems(text):
    """The words of `text` by their first five letters, casefolded (a cheap stem: "replication"
    meets "replicas", "invoiced" meets "invoices")."""
    return {w[:5] for w in _WORD.findall(text.casefold())}


def stem(word):
    """A word without its commonest English endings ("living", "lives", "lived" -> "liv")."""
    for end in ("ing", "ed", "es", "s", "e"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            return word[: -len(end)]
    return word


def searched_text(details):
    """What the lexical stage read of a pool_details row: its document's title, then its body
    (exo_private.bm25_chunk_text). A word a passage "holds" is one of these: a conversation
    titled "dietary restriction" holds "dietary" in every window."""
    return (details.get("document_title") or "") + "\n" + details["body"]


def coverage(body, words):
    """The share of `words` (a query's content words) among the words of `body`, compared by
    their stems(); 0 without words."""
    if not words:
        return 0.0
    held = stems(body)
    return sum(1 for w in words if w[:5] in held) / len(words)


# -- bands and deference ------------------------------------------------------------------


def archive_decision(signal, open_archive):
    """(open, why): whether the archival band opens before any search, and why."""
    if open_archive is True:
        return True, "the caller opened the archive"
    if open_archive is False:
        return False, "the caller kept the archive closed"
    if signal.get("opens_archive"):
        texts = [s["text"] for s in signal.get("signals", []) if s.get("opens_archive")]
        return True, "temporal signal: " + ", ".join(repr(t) for t in texts)
    return False, None


class Deference:
    """Which charged subjects of one search stay withheld, and why the others are released.

    Time and care are separate decisions. An open archive (a temporal signal or open_archive,
    never the fallback taken when nothing present answers) opens archival bands; it releases a
    subject only when the question also names it, by name or alias. Bridging a subject releases
    it wherever it is. `time_releases` (the setting deference.time_releases) restores the looser
    rule: an open archive alone releases every subject.

    Every charged subject counts, whether it is on the deference list or only declared charged
    by a document's frontmatter (over-withholding is the safe direction); a subject on the list
    answers to its name and every alias.
    """

    def __init__(
        self, deferred, bridge=None, query="", archive_open=False, archive_why=None, time_releases=False
    ):
        self.groups = [
            {k for k in (canonical_key(n) for n in [s["subject"], *s.get("aliases", [])]) if k}
            for s in deferred
        ]
        self.bridged = self.released_keys(bridge or [])
        self.asked = set(ngram_keys(query))
        self.archive_open = bool(archive_open)
        self.archive_why = archive_why
        self.time_releases = bool(time_releases)

    def names(self, subject):
        """Canonical keys a subject answers to: all names of its deferred subject(s), else its own."""
        key = canonical_key(subject)
        if not key:
            return set()
        keys = {key}
        for group in self.groups:
            if key in group:
                keys |= group
        return keys

    def released_keys(self, bridge):
        """The keys a bridge opens: each bridged name not on the list, and every name of a bridged
        deferred subject that no unbridged subject shares (an alias two subjects share stays
        closed until both are bridged: bridging one person never opens another's material)."""
        given = {k for k in (canonical_key(b or "") for b in bridge) if k}
        bridged = [g for g in self.groups if g & given]
        unbridged = [g for g in self.groups if not g & given]
        listed = set().union(*self.groups)
        opened = set().union(*bridged) - set().union(*unbridged)
        return (given - listed) | opened

    def why_released(self, subject):
        """Why a charged subject is released in this search, or None while it is withheld."""
        names = self.names(subject)
        if canonical_key(subject) in self.bridged:
            return "bridged"
        if not self.archive_open:
            return None
        named = sorted(names & self.asked, key=lambda k: (-len(k), k))
        if named:
            return f"the question names {named[0]!r} and the archive is open ({self.archive_why})"
        if self.time_releases:
            return f"time releases (deference.time_releases) and the archive is open ({self.archive_why})"
        return None

    def withheld(self, charged):
        """The charged subjects of one chunk that keep it out of the results."""
        return [s for s in charged if self.why_released(s) is None]

    def released_keys_of_search(self):
        """The canonical keys of the charged subjects this search releases, by why_released's
        rule, for the stages' SQL (their `released` parameter): None when every one is (time
        releases and the archive is open)."""
        if self.archive_open and self.time_releases:
            return None
        keys = set(self.bridged)
        if self.archive_open:
            keys |= self.asked  # a subject on no list answers to its own name
            for group in self.groups:
                if group & self.asked:
                    keys |= group
        return sorted(keys)


def released(results, why):
    """What charged material a search hands out: per (subject, workspace) the chunks among
    `results` charged for it, and `why(subject)` it was released (Deference.why_released)."""
    counts = {}
    for r in results:
        for subject in r.get("charged") or []:
            counts[(subject, r["workspace"])] = counts.get((subject, r["workspace"]), 0) + 1
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "why": why(subject)}
        for (subject, workspace), n in sorted(counts.items())
    ]


# -- admitting candidates into a workspace's pool -------------------------------------------


class WorkspacePool:
    """The candidates one workspace contributes, in the order its stages found them. Nothing
    withheld ever comes here: the stages' SQL leaves it out (exo_private.stage_sql)."""

    def __init__(self, workspace, cap, need):
        self.workspace = workspace
        self.cap = cap
        self.need = min(need, cap)
        self.hits = []
        self.seen = set()
        self.stages = []
        # each chunk's BM25 score over the best of this workspace's lexical stage (0..1), also for
        # a chunk an earlier stage admitted: how strongly the words rank it, fused with the rerank;
        # None while the stage has not run here (an earlier stage was confident enough)
        self.lexical = None

    @property
    def confident(self):
        return sum(1 for h in self.hits if h["confident"])

    def wants_more(self):
        """(True, None) while a stage should run, else (False, why it is skipped)."""
        if len(self.hits) >= self.cap:
            return False, "the workspace holds per_workspace candidates"
        if self.confident >= self.need:
            return False, f"enough confident candidates ({self.confident} of {self.need})"
        return True, None

    def admit(self, stage, rows):
        """Take a stage's rows {chunk_id, score, confident, charged, detail}; how many it admitted."""
        admitted = 0
        if stage == "lexical":
            best = max((row["score"] for row in rows), default=0.0)
            self.lexical = {row["chunk_id"]: row["score"] / best for row in rows} if best > 0 else {}
        for row in rows:
            chunk = row["chunk_id"]
            if chunk in self.seen:
                continue
            self.seen.add(chunk)
            if len(self.hits) >= self.cap:
                continue
            self.hits.append(
                {
                    "chunk_id": chunk,
                    "workspace": self.workspace,
                    "stage": stage,
                    "score": row["score"],
                    "confident": bool(row["confident"]),
                    "detail": row.get("detail"),
                    "match": row.get("match", stage),
                    "charged": list(row.get("charged") or []),  # released: report["released"] names them
                }
            )
            admitted += 1
        return admitted


def named_subjects(query, deferred):
    """The deferred subjects the query names, by subject or alias."""
    keys = set(ngram_keys(query))
    return [
        s["subject"]
        for s in deferred
        if any(canonical_key(n) in keys for n in [s["subject"], *s.get("aliases", [])] if canonical_key(n))
    ]


def hints(charged_counts, withheld, how):
    """One hint per (subject, workspace) the search left withheld, never their text: for every
    subject charged in a workspace searched that this search does not release, however the
    question is worded (a hint that came only when a query word hit withheld material would tell
    which words it holds). `charged_counts` {(subject, workspace): charged chunks}; `withheld`
    (Deference.withheld) keeps the subjects still closed."""
    return [
        {"subject": subject, "workspace": workspace, "chunks": n, "how": how(subject)}
        for (subject, workspace), n in sorted(charged_counts.items())
        if n > 0 and withheld([subject])
    ]


# -- the combined-pool rank -----------------------------------------------------------------


# Matches that answer by what they are, whatever words they share: a title or file name, the day
# named, a walk's end, and a string the question writes that few passages hold (an identifier the
# exact stage found confident: "INC-4242"). An entity's mention does not: a name is not an answer.
# Nor, by itself, a string more passages hold than a pool needs ("HP-UX" of "Why won't the HP-UX
# depot install?" in the changelogs of other software, where "depot" is in none).
ANSWERING_MATCHES = ("document", "dated", "path")


def answers_by_what_it_is(candidate):
    """Whether a candidate's match answers whatever words it shares (ANSWERING_MATCHES, or a rare
    identifier's)."""
    match = candidate.get("match")
    return match in ANSWERING_MATCHES or (match == "identifier" and bool(candidate.get("confident")))


# "How much", "how many": words of the asking, of a quantity, not of the thing asked about; "What
# is my current address?": of the asking, of when (asks_present), not of the thing either.
QUANTITY_ASKS = frozenset(["much", "many"])
PRESENT_ASKS = frozenset(["now", "nowadays", "currently", "current", "still", "anymore", "lately", "latest"])


def answer_words(terms, entities):
    """The question's content words that say what it asks about: not words of the names it gives
    (entities: {workspace: [{name}]}, as recognised; a passage that shares only a name does not
    answer), nor of asking a quantity or the present (QUANTITY_ASKS, PRESENT_ASKS), nor shorter
    than three letters (the "s" of "John's")."""
    named = {w.casefold() for found in entities.values() for e in found for w in _WORD.findall(e["name"])}
    return [w for w in terms if w not in named and w not in QUANTITY_ASKS | PRESENT_ASKS and len(w) >= 3]


# A question of fewer content words says too little for its similarity to say whether anything
# answers it: "Where do I live?" is 0.21 from "I live in Bristol now." (MiniLM), where a question
# on another subject ("Why doesn't Solaris make generate .o files?") is as far from everything.
FAR_WORDS = 3

# A word this many chunks hold is a common one: it says little of what a question asks about.
COMMON_WORD_CHUNKS = 20

# The sentences the nearest-sentence rule embeds at most (about 4 ms each on two cores, MiniLM),
# and the fewest words of one it counts (a heading or a list item of a word or two is no answer).
NEAREST_SENTENCES = 24
SENTENCE_WORDS = 4


# The words that may open a question's last noun phrase, and those after which a determiner opens
# the subject of a do-question or a modal one ("Where does my book club meet?"), not its end.
_DETERMINERS = frozenset(
    ["the", "a", "an", "my", "our", "your", "his", "her", "their", "this", "that", "these", "those"]
)
_AUXILIARIES = frozenset(
    ["do", "does", "did", "don't", "doesn't", "didn't", "will", "would", "can", "could", "shall",
     "should", "may", "might", "must", "won't", "wouldn't", "can't", "cannot", "couldn't",
     "shouldn't", "mustn't"]
)  # fmt: skip
_PHRASE_WORDS = 4


def asked_phrase(query):
    """The words of the noun phrase a question ends with, which by English end focus names what it
    asks about: a determiner or possessive, then up to four lower-case words to the question's end
    ("How much did I pay for the sofa?": sofa; "What is my library card number?": library, card,
    number). None when the determiner follows an auxiliary (the subject of "Where does my book
    club meet?", ended by its verb) or the words hold a name, a figure or a stop word."""
    tokens = (query or "")[:MAX_QUERY_CHARS].strip().rstrip("?!. ").split()
    for at in range(len(tokens) - 1, max(-1, len(tokens) - _PHRASE_WORDS - 2), -1):
        if tokens[at].casefold() not in _DETERMINERS:
            continue
        words = tokens[at + 1 :]
        after_auxiliary = at > 0 and tokens[at - 1].casefold() in _AUXILIARIES
        if (
            words
            and not after_auxiliary
            and all(w.isalpha() and w.islower() and w not in STOPWORDS for w in words)
        ):
            return words
        return []
    return []


# The verbs that invert a question's subject ("Is zlib thread-safe?"), beside _AUXILIARIES, and
# the words that may open a question before one ("Why does LTszoff warn ...?").
_INVERTING = _AUXILIARIES | frozenset(
    ["is", "are", "was", "were", "has", "have", "had", "isn't", "aren't", "wasn't", "weren't", "hasn't",
     "haven't", "hadn't"]
)  # fmt: skip
_WH_WORDS = frozenset(["what", "why", "how", "where", "when", "which", "who", "whom", "whose"])
_INDEFINITE = frozenset(
    ["anything", "something", "everything", "nothing", "anyone", "someone", "everyone", "anybody",
     "somebody", "everybody", "nobody"]
)  # fmt: skip


def inverted_subject(query):
    """The first word of the subject of a question that inverts it, an auxiliary opening the
    question or following its wh-word, negative or contracted ("Is zlib thread-safe?", "Why won't
    LTdnlc run?", "Where's zlib's manual?"): what the question is about, where its end
    (asked_phrase) says what it asks of it. None where no auxiliary opens it, or the word after is
    a stop word or an indefinite pronoun ("How do I ...?", "Is anything due?") or no word but an
    identifier's part ("dnode1" of "Why does dnode1.c cause ...?": the identifier stage finds those
    whole). Nor a word after an article: "When is the daily standup?" asks of a standup that
    passages never call daily; which word of such a phrase names its thing needs a parse."""
    tokens = [t.strip(_EDGE).casefold() for t in (query or "")[:MAX_QUERY_CHARS].split()]
    tokens = [t for t in tokens if t]
    contracted = re.fullmatch(r"(\w+)['\u2019](?:s|re)", tokens[0]) if tokens else None
    if contracted and contracted.group(1) in _WH_WORDS:  # "Where's the zlib documentation?"
        at = 1
    else:
        at = 1 if tokens[:1] and tokens[0] in _WH_WORDS else 0
        if len(tokens) <= at + 1 or tokens[at] not in _INVERTING:
            return None
        at += 1
    if at >= len(tokens):
        return None
    word = re.sub(r"['\u2019]s$", "", tokens[at])  # a possessive's owner: "zlib's"
    return word if word.isalpha() and word not in STOPWORDS and word not in _INDEFINITE else None


def answer_check(
    candidates,
    similarity,
    close,
    word_uses,
    asked=(),
    held_together=None,
    names_known=False,
    far=0.0,
    names_written=False,
    sentence_far=0.0,
    nearest_sentence=None,
    subject=None,
    used=None,
):
    """report.answer: {found, why, best_similarity}. Nothing answers a question whose `subject`
    (inverted_subject: "zlib" of "Is zlib thread-safe?") no passage open to the search uses
    (used(word) -> bool): whatever a passage shares with it, an identifier ("64-bit" of "Will zlib
    work on a 64-bit machine?") or a meaning (another compressor's formats), it is not about what
    the question is about. Else something answers when a candidate was found by
    what it is (ANSWERING_MATCHES), or one comes within `close` of the question in meaning (where
    the embedding rerank ran); nothing does when none comes within `far` of a question of FAR_WORDS
    content words or more that names no one (`names_known`, or a name it writes that the memory may
    not know: `names_written`), and none holds half of what its words weigh (weighted_coverage: one
    on another subject, whatever everyday words it shares with the memory: a question naming a
    person is far from the chats that answer it, "Which mountain did John climb in Perthshire?"
    0.13, and so is a bag of a message's rarer words from its window); else unless what the question
    asks about (`asked`, the words of asked_phrase) has a word no passage open to the search uses
    while its other words are used by none either, or never in one passage (held_together(words) ->
    bool: "library card number" where "card" is nowhere and "library" and "number" only apart); or
    the question asks about a word none uses while every word it does find is a common one
    (COMMON_WORD_CHUNKS), or most of the words it asks about are used by none ("car insurance
    premium" where only "car" is), or two or more words used by none outweigh the rest (outweighed)
    in a question that names no one and nothing the memory knows (`names_known`: "Who is the author
    of the novel Mia loved?" is about Mia, in other words than hers):
    word_uses() gives {word: chunks holding it, up to COMMON_WORD_CHUNKS}, asked only then. A
    paraphrase ("gift" for a message that says "present") still answers through its other words; so
    does one word of a phrase ("daily" of "the daily standup") where the rest is held. Then a
    candidate that holds a common string the question writes (an identifier more passages hold
    than a pool needs) answers: only now, as "HP-UX" of "Why won't the HP-UX depot install?" is
    in passages on other software where "depot" is in none. Last, where its words are used:
    nothing answers a question of FAR_WORDS content words or more that names no one when no
    sentence of the passages a packet shows that holds one of its words comes within
    `sentence_far` of it (nearest_sentence(words) -> the greatest similarity, or None when it
    cannot be had, as where one is a chat window or a record: document_sentences):
    a passage on the memory's subject shares a question's words without saying what it asks ("How
    do I convert a string to all lowercase or capital letters?" of a memory of Debian's FAQs
    without sed's), while a sentence that answers comes close where its passage, holding other
    answers too, does not."""
    sims = [similarity.get(c["chunk_id"], 0.0) for c in candidates] if similarity else []
    check = {"best_similarity": max(sims, default=None)}
    if not candidates:
        return dict(check, found=False, why="no passage matched the question")
    if subject is not None and not used(subject):
        return dict(
            check,
            found=False,
            why=f"no passage open to this search uses {subject!r}, what the question is about",
        )
    if any(answers_by_what_it_is(c) for c in candidates):
        return dict(check, found=True, why="an exact match")
    if sims and max(sims) >= close:
        return dict(check, found=True, why="a passage close in meaning")
    uses = word_uses()
    if (
        sims
        and max(sims) < far
        and len(uses) >= FAR_WORDS
        and not (names_known or names_written)
        and 2 * max(weighted_coverage(searched_text(c), uses) for c in candidates) < 1
    ):
        return dict(check, found=False, why=f"no passage comes within {far} of the question in meaning")
    absent = [w for w, n in uses.items() if n == 0]
    specific = [w for w, n in uses.items() if 0 < n < COMMON_WORD_CHUNKS]
    unheld = [w for w in asked if uses.get(w) == 0]
    rest = [w for w in asked if uses.get(w)]
    if unheld and (not rest or (len(rest) > 1 and held_together is not None and not held_together(rest))):
        named = ", ".join(repr(w) for w in unheld)
        apart = f", and {' and '.join(map(repr, rest))} only apart" if rest else ""
        return dict(
            check,
            found=False,
            why=f"no passage open to this search uses {named} of what the question asks about "
            f"({' '.join(asked)!r}){apart}, and none comes close in meaning",
        )
    if absent and (
        not specific or 2 * len(absent) > len(uses) or (not names_known and outweighed(uses, absent))
    ):
        named = ", ".join(repr(w) for w in absent)
        return dict(
            check,
            found=False,
            why=f"no passage open to this search uses {named}, and none comes close in meaning",
        )
    if any(c.get("match") == "identifier" for c in candidates):
        return dict(check, found=True, why="an exact match")
    if (
        nearest_sentence is not None
        and sentence_far > 0
        and len(uses) >= FAR_WORDS
        and not (names_known or names_written)
    ):
        nearest = nearest_sentence(list(uses))
        if nearest is not None:
            check["nearest_sentence"] = round(nearest, 3)
            if nearest < sentence_far:
                return dict(
                    check,
                    found=False,
                    why=f"no sentence of the passages comes within {sentence_far} of the question in meaning",
                )
    return dict(check, found=True, why="the memory uses the question's words")


# A line of a record, "key: value" (a bullet and bold marks allowed: "- **Employer:** Northwind
# Labs"), as exo_private.declared_facts reads a canonical document's lines.
_KEY_VALUE = re.compile(r"[ \t]*(?:[-*+][ \t]+)?([^\W\d_][\w-]*(?: +[\w-]+){0,3}) *:[ \t]+\S")
KEY_CHARS = 40


def holds_record(body):
    """Whether `body` holds a record: two lines in a row of "key: value" (a key of at most four
    words and KEY_CHARS characters). One such line is as often a line of wrapped prose ("two
    formats: e.g., ...")."""
    lines = body.replace("**", "").split("\n")
    keyed = [bool((m := _KEY_VALUE.match(line)) and len(m.group(1)) <= KEY_CHARS) for line in lines]
    return any(a and b for a, b in pairwise(keyed))


def document_sentences(candidates, words):
    """The sentences (sentence_spans) of SENTENCE_WORDS words or more of the candidates that hold
    one of `words` (the question's content words, by stems()), in their order, each once, at most
    NEAREST_SENTENCES: what the nearest-sentence rule of answer_check embeds. A sentence that
    answers holds one (179 of 180 answered questions of Debian's FAQs; half of another program's
    nearest do not). None where a candidate is a chat window (the rule is for documents) or holds
    a line of a record (holds_record): a reply, or a record's line, is often far in meaning from
    the question it answers ("about ten years now"; "- **Employer:** Northwind Labs" is 0.38 from
    "Where do I work?" by MiniLM)."""
    if any(c.get("chat") or holds_record(c["body"]) for c in candidates):
        return None
    asked = {w[:5] for w in words}
    seen = []
    for c in candidates:
        body = c["body"]
        for a, b in sentence_spans(body):
            sentence = " ".join(body[a:b].split())
            if len(sentence.split()) >= SENTENCE_WORDS and sentence not in seen and asked & stems(sentence):
                seen.append(sentence)
                if len(seen) == NEAREST_SENTENCES:
                    return seen
    return seen


def word_weight(chunks_holding):
    """How much a question word says of what it asks about, by how few chunks hold it (counted up
    to COMMON_WORD_CHUNKS): BM25's inverse document frequency over that count, so a word no passage
    uses weighs most and a common one least."""
    return math.log(1 + COMMON_WORD_CHUNKS / (chunks_holding + 0.5))


def weighted_coverage(body, uses):
    """The share of what the question's words weigh (word_weight of the chunks holding each, `uses`
    as answer_check's) that `body` holds, by stems(): a passage that holds only a question's
    everyday words ("perform", "case", "search" of "How do I perform a case-insensitive search?")
    holds little of what it asks about, however many of its words that is."""
    weights = {w: word_weight(n) for w, n in uses.items()}
    total = sum(weights.values())
    if not total:
        return 0.0
    held = stems(body)
    return sum(weight for w, weight in weights.items() if w[:5] in held) / total


def outweighed(uses, absent):
    """Whether the words no passage uses carry most of what the question's words weigh, and are
    two or more: "Why doesn't Solaris lsof report VxFS path name components?" asks about three
    things the memory never names, however many of its everyday words it holds. One such word may
    be a paraphrase ("gift" for "present") and is left to the other rules."""
    total = sum(word_weight(n) for n in uses.values())
    return len(absent) >= 2 and 2 * sum(word_weight(uses[w]) for w in absent) > total


def deterministic_relevance(candidate, weights):
    """Relevance from what found the chunk and how well its words match the question (0..1):
    the share of the question's words it holds and, lexical_share of that term, BM25's score of
    it over the best of its workspace's lexical stage (0 where BM25 did not rank it), so a
    passage BM25 ranks first is not lost among near neighbours that hold as many of the words.
    Where the lexical stage did not run in its workspace (lexical None: an identifier or a name
    found enough), the share of words alone.
    The answer of a typed walk (match "path") matches the question by the walk: its entity and
    relation words chose the chunk, which need share no word with it ("the sister of X works
    for" ends at a team mail that names neither X nor a sister)."""
    stage = weights["stage"].get(candidate["stage"], 0.5)
    if candidate.get("match") == "path":
        return 0.5 * stage + 0.5
    coverage = candidate.get("coverage") or 0.0
    lexical = candidate.get("lexical")
    share = 0.0 if lexical is None else weights["lexical_share"]
    words = (1.0 - share) * coverage + share * (lexical or 0.0)
    return 0.5 * stage + 0.5 * words


def priority(candidate, weights, recency=True):
    """Band weight (only under recency preference), times the boost of how the chunk matched
    (a document named by title or file name outranks one that only mentions it), times the
    canonical boost."""
    value = weights["band"].get(candidate["band"], 1.0) if recency else 1.0
    value *= weights.get("match", {}).get(candidate.get("match"), 1.0)
    if candidate.get("canonical"):
        value *= weights["canonical"]
    if candidate.get("other_conversation"):
        value *= weights.get("other_conversation", 1.0)
    return value


def other_conversations(candidates, query):
    """The chunk ids of the chat windows among `candidates` of conversations without the person
    the question names, where it names one who takes part in some of their conversations but not
    every one (the owner takes part in all), and whose text does not name them either: "Where are
    Sam and Aiden going on their trip?" asks about Aiden's conversation, not Sam's trips with
    others. Empty where it names no such person."""
    keys = set(name_keys(query))
    chats = [c for c in candidates if c.get("chat")]
    # a conversation's people: the senders of its windows in the pool (one window may hold only
    # the owner's lines of a conversation with someone else)
    people = {}
    for c in chats:
        people.setdefault(c["chat"].get("conversation_id"), set()).update(c["chat"].get("senders") or [])
    everywhere = set.intersection(*people.values()) if people else set()
    asked = {
        s
        for them in people.values()
        for s in them - everywhere
        if canonical_key(s) in keys or canonical_key(s).split(" ")[0] in keys
    }
    if not asked:
        return set()
    first_names = {canonical_key(s).split(" ")[0] for s in asked}
    return {
        c["chunk_id"]
        for c in chats
        if not people[c["chat"].get("conversation_id")] & asked
        and not first_names & set(query_words(said(c["body"])))
    }


# A question about the present state of things ("where does she live now?"): among evidence of
# like relevance, the newest value is the answer, so recency counts over months, not years.
_ASKS_PRESENT = re.compile(
    r"\b(?:now|nowadays|currently|current|these days|at the moment|at present|still|any ?more|lately|latest)\b",
    re.I,
)


def asks_present(query):
    """Whether a question asks what is true now (a present-state word such as "now", "currently",
    "these days", "still")."""
    return bool(_ASKS_PRESENT.search(query or ""))


# The longest span of days a question may name for the days themselves to rank (a day, a week, a
# month): longer ones (a year, a decade) rank by year.
NAMED_DAYS_MAX = 62


def named_days(span):
    """(first, last) day ordinals of the span a question names (temporal.detect's span) when it
    is a day, a week or a month; None otherwise."""
    if not span:
        return None
    first = datetime.date.fromisoformat(span["first"]).toordinal()
    last = datetime.date.fromisoformat(span["last"]).toordinal()
    return (first, last) if last - first < NAMED_DAYS_MAX else None


def freshness(candidate, weights, today_ordinal, years, recency=True, present=False, days=None):
    """Closeness to the days (named_days) or else the years the question names: within a week's
    or the span's length of it, falling to date_miss_floor; else, under recency preference,
    recency (over present_half_life_days for a question about the present); else (the archive
    is open) neutral."""
    if candidate.get("canonical"):
        return 1.0  # a canonical document is current by declaration, whatever its date
    written = candidate.get("written_ordinal")
    if written is None:
        return weights["freshness_floor"]
    if days:
        first, last = days
        miss = first - written if written < first else written - last if written > last else 0
        return max(weights["date_miss_floor"], 1.0 - miss / max(7, last - first + 1))
    if years:
        year = candidate["written_year"]
        first, last = min(years), max(years)
        miss = first - year if year < first else year - last if year > last else 0
        return max(weights["freshness_floor"], 1.0 - weights["year_miss_per_year"] * miss)
    if not recency:
        return 1.0
    age = max(0, today_ordinal - written)
    half_life = weights["present_half_life_days"] if present else weights["freshness_half_life_days"]
    decay = 0.5 ** (age / float(half_life))
    return weights["freshness_floor"] + (1.0 - weights["freshness_floor"]) * decay


def normalise(scores):
    """Scores of any scale to 0.05..1 (min-max), so a backend's relevance multiplies like another's."""
    values = [s for s in scores.values() if s is not None and math.isfinite(s)]
    if not values:
        return {k: 0.05 for k in scores}
    low, high = min(values), max(values)
    if not math.isfinite(high - low):  # the span overflows: halve everything first
        values = {k: s / 2 for k, s in scores.items() if s is not None and math.isfinite(s)}
        low, high = low / 2, high / 2
    else:
        values = {k: s for k, s in scores.items() if s is not None and math.isfinite(s)}
    span = high - low
    return {
        k: (0.05 if k not in values else 1.0 if span == 0 else 0.05 + 0.95 * (values[k] - low) / span)
        for k in scores
    }


def blend(backend, deterministic, share):
    """A backend's relevance mixed with the deterministic one: `share` of it from the backend,
    so what found a chunk and how much of the query it covers still count."""
    return {k: share * backend.get(k, 0.0) + (1.0 - share) * v for k, v in deterministic.items()}


def from_ranking(ranked_ids, ids):
    """Relevance from an ordered id list (a listwise reply): first 1.0, falling linearly.

    Enforces the permutation: ids the reply invented or repeated are dropped, ids it left
    out follow in their incoming order."""
    order = []
    for i in ranked_ids:
        if i in ids and i not in order:
            order.append(i)
    order += [i for i in ids if i not in order]
    n = len(order)
    return {chunk: 1.0 - (rank / n) * 0.95 for rank, chunk in enumerate(order)}


def rank(candidates, relevance, weights, today_ordinal, years, recency=True, present=False, days=None):
    """The candidates in final order, each with its relevance and score.

    A reranker only reorders: the chunks out are exactly the chunks in, whatever the
    backend returned (a missing relevance counts as the lowest)."""
    ranked = []
    for c in candidates:
        r = relevance.get(c["chunk_id"])
        r = 0.0 if r is None or not math.isfinite(r) else r
        score = (
            r
            * priority(c, weights, recency)
            * freshness(c, weights, today_ordinal, years, recency, present, days)
        )
        ranked.append(dict(c, relevance=round(r, 4), score=round(score, 6)))
    ranked.sort(key=lambda c: (-c["score"], -c["relevance"], c["chunk_id"]))
    if sorted(c["chunk_id"] for c in ranked) != sorted(c["chunk_id"] for c in candidates):
        raise AssertionError("rerank changed the set of candidates")
    return ranked


def listwise_prompt(query, candidates, excerpt_chars):
    """The chat messages asking a model to order candidates by usefulness for the query."""
    lines = ["[{}] {}".format(c["chunk_id"], " ".join(c["body"].split())[:excerpt_chars]) for c in candidates]
    return [
        {
            "role": "system",
            "content": "You rank passages by how well they answer a question. Reply with JSON only.",
        },
        {
            "role": "user",
            "content": "Question: "
            + query[:MAX_QUERY_CHARS]
            + "\n\nPassages:\n"
            + "\n".join(lines)
            + '\n\nReply as {"ranking": [ids, most useful first]}.',
        },
    ]


def parse_listwise(content, ids):
    """The ids a listwise reply ranks, in its order; ValueError when it ranks none of ours."""
    import json

    try:
        reply = json.loads(content or "")
    except ValueError:
        # A reply cut off at its token cap: the ids it managed to list still count.
        match = re.search(r"\[\s*(\d[\d,\s]*)", content or "")
        if not match:
            raise ValueError("the reply is neither JSON nor holds a list of ids") from None
        reply = {"ranking": [int(x) for x in re.findall(r"\d+", match.group(1))]}
    ranking = reply.get("ranking") if isinstance(reply, dict) else reply
    if not isinstance(ranking, list):
        raise ValueError("the reply has no ranking list")
    ranked = [i for i in ranking if isinstance(i, int) and not isinstance(i, bool) and i in ids]
    if not ranked:
        raise ValueError("the ranking names none of the candidates")
    return ranked


# -- the context packet -----------------------------------------------------------------------


NOTHING_ANSWERS = "Nothing in the memory answers this question"
NEAREST_NOT_ANSWERS = 2


def estimate_tokens(text):
    """Tokens of a text, estimated as one per four characters (rounded up)."""
    return (len(text) + 3) // 4


def sentence_spans(body):
    """(start, end) of each sentence of a chunk's body (a blank line or a list item ends one, too),
    trimmed of surrounding whitespace."""
    spans = []
    start = 0
    for m in [*_SENTENCE_END.finditer(body), None]:
        end = m.start() if m else len(body)
        a, b = start, end
        while a < b and body[a].isspace():
            a += 1
        while b > a and body[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
        if m:
            start = m.end()
    return spans


def word_key(word):
    """A word's stem() by its first five letters, as stems() compares them: "holding" meets
    "hold" (which five letters alone miss), "directories" meets "directory" (which stem() misses)."""
    return stem(word)[:5]


def sentence_stems(text, spans):
    """The word_key()s of the words of each span of `text`."""
    return [{word_key(w) for w in set(_WORD.findall(text[a:b].casefold()))} for a, b in spans]


def stem_weights(held, words):
    """{word_key: weight} of `words` (the question's) that the sentences of a chunk hold (`held`, each
    its sentence_stems()), by how few of them hold it: BM25's idf over the chunk's sentences. A
    word every sentence holds says little of which one answers ("zlib" in the zlib FAQ), one only
    a sentence holds says most. A word of one letter ("t" of "didn't") says nothing."""
    n = len(held)
    weights = {}
    for word in words:
        if len(word) < 2:
            continue
        s = word_key(word)
        k = sum(s in h for h in held)
        if k and s not in weights:
            weights[s] = math.log(1 + (n - k + 0.5) / (k + 0.5))
    return weights


def _weight(weights, stems):
    # summed in the order of `weights`, so that equal sets of words weigh exactly the same
    return sum(v for s, v in weights.items() if s in stems)


def richest_sentence(text, spans, words):
    """The index of the span of `text` whose words weigh most (stem_weights: the question's words
    by how few of the spans hold them; the first of equals)."""
    held = sentence_stems(text, spans)
    weights = stem_weights(held, words)
    return max(range(len(spans)), key=lambda i: (_weight(weights, held[i]), -i))


def opens_paragraph(text, spans, i):
    """Whether span i of `text` is the first of its paragraph (after a blank line, or the first)."""
    return i == 0 or text.count("\n", spans[i - 1][1], spans[i][0]) >= 2


def excerpt(body, words, max_chars, shown=frozenset()):
    """The passage of `body` (at most max_chars) of whole sentences whose words weigh most
    together (stem_weights: the question's words by how few of its sentences hold them, each
    counted once, so a run of sentences that holds the question's rarer words between them beats
    one sentence that repeats a common one). Of equal runs, the one that opens a paragraph (where
    an answer starts: "No. PKWare has kept that format proprietary."), else the middle one. No
    sentence of `shown` (sentence_keys an earlier excerpt of the packet showed: chunks of one
    document overlap) is shown again; "" when every sentence was."""
    text = body.strip()
    spans = sentence_spans(text)
    fresh = [sentence_key(text[a:b]) not in shown for a, b in spans]
    if all(fresh) and len(text) <= max_chars:
        return text
    if spans and not any(fresh):
        return ""
    held = sentence_stems(text, spans)
    weights = stem_weights(held, words)
    reach = []  # the last sentence of the run from each sentence within max_chars
    for i in range(len(spans)):
        j = i
        while j + 1 < len(spans) and fresh[j + 1] and spans[j + 1][1] - spans[i][0] <= max_chars:
            j += 1
        reach.append(j)
    held = [h & weights.keys() for h in held]
    scores = [
        _weight(weights, set().union(*held[i : reach[i] + 1])) if fresh[i] else -1.0
        for i in range(len(spans))
    ]
    starts = [i for i, v in enumerate(scores) if v == max(scores)]
    opening = [i for i in starts if opens_paragraph(text, spans, i)]
    lo = opening[0] if opening else starts[len(starts) // 2]
    hi = reach[lo]
    while lo > 0 and fresh[lo - 1] and spans[hi][1] - spans[lo - 1][0] <= max_chars:  # room left at the end
        lo -= 1
    a, b = spans[lo][0], spans[hi][1]
    if b - a > max_chars:  # one sentence longer than the excerpt
        b = a + max_chars
    passage = text[a:b].strip()
    return ("... " if a > 0 else "") + passage + (" ..." if b < len(text) else "")


def sentence_key(sentence):
    """A sentence as excerpt() compares it with those shown: its words, case and spacing aside."""
    return " ".join(sentence.casefold().split())


def shown_sentences(passage):
    """The sentence_keys of an excerpt (without its ellipsis marks)."""
    text = passage.strip().removeprefix("...").removesuffix("...").strip()
    return {sentence_key(text[a:b]) for a, b in sentence_spans(text)}


def said(body):
    """What a chat chunk's messages say, without their time and sender labels: a question naming
    the other person matches the sender of half the lines, which says nothing about which one
    answers it."""
    return _CHAT_LABEL.sub("", body)


def chat_messages(body):
    """The messages of a chat chunk's body, each its lines joined: an unindented line starts a
    message, an indented one continues it."""
    messages = []
    for line in body.strip().split("\n"):
        if messages and line[:1].isspace():
            messages[-1] += "\n" + line
        else:
            messages.append(line)
    return messages


def _grow(units, best, max_chars, last=None):
    """(lo, hi): the run of units from `best` to `last` (default `best`), joined by newlines
    within max_chars, grown one unit after it (an answer is often a reply) and one before it at a
    time while they fit."""
    lo, hi = best, best if last is None else last
    size = sum(len(u) + 1 for u in units[lo : hi + 1]) - 1
    while True:
        grown = False
        if hi + 1 < len(units) and size + 1 + len(units[hi + 1]) <= max_chars:
            hi += 1
            size += 1 + len(units[hi])
            grown = True
        if lo > 0 and size + 1 + len(units[lo - 1]) <= max_chars:
            lo -= 1
            size += 1 + len(units[lo])
            grown = True
        if not grown:
            return lo, hi


def richest_unit(units, words):
    """The index of the chat unit (message or line) whose said() words hold most of `words`,
    compared by their first five letters, as coverage() does (the first of equals)."""
    wanted = {w[:5] for w in words}
    hits = [len(wanted & {w[:5] for w in _WORD.findall(said(u).casefold())}) for u in units]
    return max(range(len(units)), key=lambda i: (hits[i], -i))


# A message that holds this share of the question's words is the one asked about, whatever the
# vectors say ("solid team quite progress": the message those words come from).
ANSWER_COVERAGE = 2 / 3

# Below that share, when the question names a sender of the chat, the question's words a message
# says add this much per share held to its similarity: a message is embedded with its sender's
# name, and the name pulls that person's every short line ("Deborah: Catch you later!" 0.57
# against "Deborah: Big news, we brought home a little corgi." 0.50 for "What is the name of
# Deborah's corgi?"). Without a sender named the vectors alone decide ("We decided the Lisbon
# trip is on 12 May" over "I will book the flights tonight" for "When are the flights to
# Portugal?").
WORDS_SAID_WEIGHT = 0.3

# A message that states a value of the kind the question asks for (a name for "where", "who"; a
# time for "when"; a quantity for "how many") adds this much to its similarity: the name of a
# question's sender pulls that person's short lines ("Priya Okafor: Lol yes Anyway." 0.55 against
# "Priya Okafor: Officially a Porto resident now, the move went fine." 0.52 for "Where does Priya
# live now?").
ASKED_KIND_WEIGHT = 0.1


def answering_message(messages, words, similarity=None, names_sender=False, states_asked=None):
    """The index of the message that holds ANSWER_COVERAGE of `words` (the question's content
    words), one that asks nothing itself before one that asks (whose reply the excerpt shows with
    it: "Did you pick a name for the cat yet?" / "Cosmo!"), the most similar such; else the
    message most similar to the question (`similarity`, one per message, from their vectors),
    with WORDS_SAID_WEIGHT for the share of `words` it says when it asks nothing and the question
    names a sender, and ASKED_KIND_WEIGHT when it asks nothing and states a value of the kind the
    question asks for (`states_asked`, one per message); or else the one richest in `words`."""
    known = similarity and len(similarity) == len(messages) and any(v is not None for v in similarity)

    def close(i):
        return (similarity[i] or -1.0) if known else 0.0

    asks = [said(m).rstrip().endswith("?") for m in messages]
    shares = [coverage(said(m), words) for m in messages]
    holding = [i for i in range(len(messages)) if len(words) >= 2 and shares[i] >= ANSWER_COVERAGE]
    if holding:
        return max(holding, key=lambda i: (not asks[i], shares[i], close(i), -i))
    weight = WORDS_SAID_WEIGHT if names_sender else 0.0
    kinds = states_asked if states_asked and len(states_asked) == len(messages) else [False] * len(messages)
    if known:
        return max(
            range(len(messages)),
            key=lambda i: close(i) + (0.0 if asks[i] else weight * shares[i] + ASKED_KIND_WEIGHT * kinds[i]),
        )
    return richest_unit(messages, words)


def asked_of_chat(c, words):
    """(words, names_sender): the question's words less the names of the chat chunk's senders,
    and whether it had any. In a chat the participants' names are no words to match: "What about
    Kate?" in a chat with Kate says nothing of what the question asks."""
    named = {w.casefold() for s in c["chat"].get("senders") or [] for w in _WORD.findall(s)}
    asked = [w for w in words if w not in named]
    return asked, len(asked) < len(words)


def chat_answering(c, words):
    """(messages, index): a chat window's messages (chat_messages) and its answering one's index."""
    messages = chat_messages(c["body"])
    asked, names_sender = asked_of_chat(c, words)
    chat = c["chat"]
    return messages, answering_message(
        messages, asked, chat.get("similarity"), names_sender, chat.get("states_asked")
    )


def answering_line(c, words):
    """The line a candidate's excerpt centres on: the answering message of a chat window, with its
    time and sender, or the sentence of a document richest in `words`."""
    text = c["body"].strip()
    if c.get("chat"):
        messages, at = chat_answering(c, words)
        return messages[at]
    spans = sentence_spans(text)
    if not spans:
        return text
    a, b = spans[richest_sentence(text, spans, words)]
    return text[a:b]


def chat_excerpt(
    body,
    words,
    max_chars,
    similarity=None,
    context_chars=None,
    names_sender=False,
    also=None,
    states_asked=None,
):
    """Whole messages of a chat chunk: the message answering_message() chooses (by the words it
    says, `similarity`, one per message, from their vectors, and `states_asked`; else the one
    richest in `words` in what it says: said(), compared by their first five letters, as
    coverage() does), whole up to max_chars with the reply when it asks a question, or with the
    run to message `also` (its index: one that tells another value of what it tells), and its
    neighbours while the excerpt stays within context_chars (default max_chars), plus the
    ellipsis marks; where the run to `also` is too long, the later of the two alone is the core.
    A message longer than max_chars keeps its time and sender and whole lines around its line
    richest in `words`; only a line longer than the limit is cut."""
    text = body.strip()
    room = max_chars if context_chars is None else min(context_chars, max_chars)
    if len(text) <= room:
        return text
    messages = chat_messages(text)
    best = answering_message(messages, words, similarity, names_sender, states_asked)
    # A message that asks is answered by the next one: the two are the excerpt's core.
    last = best + 1 if best + 1 < len(messages) and said(messages[best]).rstrip().endswith("?") else best
    newer = best if also is None else max(best, also)
    if also is not None:
        best, last = min(best, also), max(last, also)
    core = sum(len(m) + 1 for m in messages[best : last + 1]) - 1
    if core > max_chars and also is not None:
        best = last = newer
        core = len(messages[best])
    if core > max_chars:
        last, core = best, len(messages[best])
    if core <= max_chars:
        lo, hi = _grow(messages, best, max(room, core), last)
        passage = "\n".join(messages[lo : hi + 1])
        return ("...\n" if lo > 0 else "") + passage + ("\n..." if hi + 1 < len(messages) else "")
    # One message longer than the excerpt: its label, then its richest lines.
    label = _CHAT_LABEL.match(messages[best])
    label = label.group() if label and label.end() <= max_chars // 2 else ""
    lines = messages[best][len(label) :].split("\n")
    room = max_chars - len(label)
    at = richest_unit(lines, words)
    if len(lines[at]) > room:
        return label + excerpt(lines[at], words, room)
    lo, hi = _grow(lines, at, room)
    passage = "\n".join(lines[lo : hi + 1]).lstrip()  # a continuation line's indent goes after "... "
    return (
        label
        + ("... " if lo > 0 else "")
        + passage
        + ("\n..." if hi + 1 < len(lines) or best + 1 < len(messages) else "")
    )


def without_day(passage, day):
    """A chat passage's message lines with their time only where their day is `day`: a window
    never spans two days, and its citation names the day."""
    prefix = day + " "
    return "\n".join(line[len(prefix) :] if line.startswith(prefix) else line for line in passage.split("\n"))


def chunk_excerpt(c, words, max_chars, chat_chars=None, shown=frozenset()):
    """The excerpt of a candidate: whole messages for a chat chunk (times without the day its
    citation names; neighbours of the answering message within chat_chars, the answering message
    as answering_line finds it), sentences for a document's, none of `shown` (excerpt())."""
    if c.get("chat"):
        start = chat_start(c["body"])
        body = without_day(c["body"], start[:10]) if start else c["body"]
        asked, names_sender = asked_of_chat(c, words)
        chat = c["chat"]
        return chat_excerpt(
            body,
            asked,
            max_chars,
            chat.get("similarity"),
            chat_chars,
            names_sender,
            c.get("also_at"),
            chat.get("states_asked"),
        )
    return excerpt(c["body"], words, max_chars, shown)


def cut_at(detail, moment):
    """A pool_details row as of `moment` (a datetime; None: now): a chat window without the
    messages sent after it (its body's messages and chat.message_ids and chat.sent_at alike); None
    when none is left, or when its body does not show one message per id (it cannot be cut
    exactly, so nothing of it is shown). Anything else as it is."""
    chat = json.loads(detail["chat"]) if detail.get("chat") else None
    if moment is None or not chat or not chat.get("sent_at"):
        return detail
    sent = [None if t is None else datetime.datetime.fromisoformat(t) for t in chat["sent_at"]]
    keep = [i for i, t in enumerate(sent) if t is None or t <= moment]
    if len(keep) == len(sent):
        return detail
    messages = chat_messages(detail["body"].strip())
    if not keep or len(messages) != len(sent):
        return None
    cut = dict(
        chat, message_ids=[chat["message_ids"][i] for i in keep], sent_at=[chat["sent_at"][i] for i in keep]
    )
    return dict(detail, body="\n".join(messages[i] for i in keep), chat=json.dumps(cut))


def chat_start(body):
    """The time of a chat chunk's first message as its lines show it ("2024-03-04 09:12"), or
    None when it is undated."""
    label = _CHAT_LABEL.match(body)
    return label.group(1) if label and len(label.group(1)) == 16 else None


def citation(c):
    """A chunk's citation label: workspace, path, date and band; for a chat chunk, workspace,
    the conversation's title and its first message's time as the chunk shows it."""
    if c.get("chat"):
        when = chat_start(c["body"]) or "undated"
        return '{}:chat "{}" {}'.format(c["workspace"], c["chat"]["title"], when)
    date = c.get("written_at") or "undated"
    return "{}:{} ({}, {})".format(c["workspace"], c["path"], date, c["band"])


def capsule_section(chosen, capsules, words, budget, cfg):
    """The packet's "## Capsules" section: the fresh capsules of the documents the chosen evidence
    comes from (in its order, at most cfg["max"]), each cut to whole lines, those richest in the
    question's `words` first, within cfg["chars"] characters and all within cfg["share"] of the
    budget; each cites the chunks its lines come from. Returns (text, shown, stale ids, withheld
    ids); a stale or withheld capsule is never shown: the evidence stands alone."""
    by_document = {k["document_id"]: k for k in capsules}
    fresh, stale, withheld = [], [], []
    for c in chosen:
        k = by_document.pop(c["document_id"], None)
        if k is None:
            continue
        if k["state"] == "fresh":
            fresh.append((c, k))
        else:
            (stale if k["state"] == "stale" else withheld).append(k["capsule_id"])
    fresh = fresh[: cfg["max"]] if cfg else []
    room = int(budget * 4 * cfg["share"]) // max(1, len(fresh)) if fresh else 0
    chars = min(cfg["chars"], room) if fresh else 0
    if chars < 200:  # a tiny budget holds evidence, not summaries
        return "", [], stale, withheld
    wanted = {w[:5] for w in words}
    blocks, shown = [], []
    for c, k in fresh:
        lines = k["body"].split("\n")
        hits = [len(wanted & {w[:5] for w in _WORD.findall(line.casefold())}) for line in lines]
        kept, size = [], 0
        for i in sorted(range(len(lines)), key=lambda i: (-hits[i], i)):
            if size + len(lines[i]) + 1 <= chars:
                kept.append(i)
                size += len(lines[i]) + 1
        kept.sort()
        cited = sorted({k["sentences"][i]["chunk_id"] for i in kept})
        n = f"C{len(shown) + 1}"
        head = "[{}] summary of {}; cites chunk(s) {}".format(n, citation(c), ", ".join(map(str, cited)))
        text = "\n".join(lines[i] for i in kept) + ("\n..." if len(kept) < len(lines) else "")
        blocks.append(head + "\n" + text + "\n\n")
        shown.append(
            {
                "n": n,
                "capsule_id": k["capsule_id"],
                "document_id": k["document_id"],
                "citation": citation(c),
                "chunk_ids": cited,
                "builder": k["builder"],
            }
        )
    return "## Capsules\n" + "".join(blocks), shown, stale, withheld


_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself)\b")
# "we" and "our" take the owner in ("Where do we live?", "our landlord"), as the statements
# of "we" do (extraction/statements.py)
_FIRST_PERSON_LOWER = re.compile(r"\b(?:me|my|mine|myself|we|us|our|ours|ourselves)\b", re.I)


def first_person(query):
    """Whether a question is asked in the first person ("Where do I live now?"), so that it is
    about the owner, alone or with others ("we", "our"): "I" counts only as a capital (a
    lower-case "i" is a list item or a typo)."""
    text = (query or "")[:MAX_QUERY_CHARS]
    return bool(_FIRST_PERSON.search(text) or _FIRST_PERSON_LOWER.search(text))


def fact_moment(report):
    """The day whose facts a packet opens with: the search's as_of day, or, for a question about
    the past (a year it names, and not about the present), the last day of that year."""
    day = report["as_of"]
    temporal = report.get("temporal") or {}
    years = temporal.get("years") or []
    if years and not temporal.get("asks_present"):
        day = min(day, f"{max(years):04d}-12-31")
    return day


def _fact_source(sources):
    if not sources:
        return "no open source"
    first = sources[0]
    if first.get("observation_id") is not None:
        return "observed: " + str(first.get("source") or "observation {}".format(first["observation_id"]))
    return first.get("path") or first.get("title") or "document {}".format(first.get("document_id"))


def with_previous(rows):
    """exo_private.packet_facts rows as the packet reads them: the rows valid at its moment (and
    the withheld hints), each with `before`, the row of its line before it (previous_of), or None."""
    before = {r["previous_of"]: r for r in rows if r.get("previous_of") is not None}
    return [dict(r, before=before.get(r["fact_id"])) for r in rows if r.get("previous_of") is None]


FACT_SHARE = 2
"""The facts section takes at most 1 / FACT_SHARE of a packet's budget."""


def fact_section(facts, day, today, words=(), max_tokens=None):
    """The packet's first section (none without facts): per subject and attribute the value of
    the highest kind (observation, declared, extracted; exo_private.packet_facts gives them in
    that order), with its date and source and the value before it (with_previous: "before: X
    (FROM to TO)"); a kind that says otherwise is shown beside it, never dropped; withheld
    facts only as a hint. Within max_tokens: when not every line fits, the lines that share the
    most words (`words`, the question's) with their attribute and value are kept, in their order,
    and the section says how many it left out and where they are."""
    if not facts:
        return ""
    lines = [] if day == today else [f"(as of {day})"]
    groups, hints = {}, []
    for f in facts:
        if f.get("withheld"):
            w = f["withheld"]
            hints.append(
                "- {} fact(s) about {} withheld (deferred subject). {}".format(
                    w["facts"], w["subject"], w["how"]
                )
            )
        else:
            groups.setdefault((f["subject"], f["attribute"]), []).append(f)
    entries = []  # (subject, attribute, values, line)
    for (subject, attribute), rows in groups.items():
        values = {}
        for f in rows:
            values.setdefault(f["value"], []).append(f)
        described = [
            "{} ({}, since {}; {})".format(
                value,
                "+".join(f["kind"] for f in said),
                str(said[0]["valid_from"])[:10],
                _fact_source(said[0]["sources"]),
            )
            for value, said in values.items()
        ]
        line = f"- {subject}, {attribute}: {described[0]}"
        earlier = next(iter(values.values()))[0].get("before")
        if earlier:
            line += "; before: {} ({} to {})".format(
                earlier["value"], str(earlier["valid_from"])[:10], str(earlier["valid_to"] or "")[:10] or "?"
            )
        if len(described) > 1:
            line += "; sources disagree: " + "; ".join(described[1:])
        entries.append((subject, attribute, " ".join(values), line))

    def text(kept, left_out):
        shown = [line for *_, line in kept]
        if left_out:
            subjects = ", ".join(sorted({s for s, *_ in left_out}))
            shown.append(
                f"- {len(left_out)} more fact(s) of {subjects} not shown: exo.facts(subject) lists them"
            )
        return "## Current facts\n" + "\n".join([*lines, *shown, *hints]) + "\n\n"

    if max_tokens is None or estimate_tokens(text(entries, [])) <= max_tokens:
        return text(entries, [])
    asked = set(words)

    def shared(entry):
        _, attribute, value, _ = entry
        return len(asked & set(query_words(attribute.replace("_", " ") + " " + value)))

    kept = []
    for entry in sorted(entries, key=shared, reverse=True):  # stable: equal ones keep their order
        chosen = [x for x in entries if x in kept or x is entry]
        if estimate_tokens(text(chosen, [x for x in entries if x not in chosen])) <= max_tokens:
            kept.append(entry)
    chosen = [x for x in entries if x in kept]
    return text(chosen, [x for x in entries if x not in chosen])


RELATION_LINES = 8
"""At most this many lines of typed walks in a packet (and at most a third of its budget)."""


def relation_section(report, ranked, budget):
    """The packet's Relations section: the ways typed walks (report["paths"]) reached an answer
    whose every relation a chunk among `ranked` states (so never one only withheld evidence
    states), in the order `ranked` has their answers' chunks. Ways that differ only in their last
    relation's far end share a line ("X SIBLING_OF A, B"); each relation cites its best-ranked
    chunk. ("", []) when there are none or none fits."""
    rank = {c["chunk_id"]: n for n, c in enumerate(ranked)}
    lines = {}  # (workspace, the way before its last relation, that relation's start, predicate, direction)
    for ws, walk in sorted((report.get("paths") or {}).items()):
        for way in walk.get("ways") or []:
            cited = [sorted((c for c in r["chunks"] if c in rank), key=rank.get)[:1] for r in way]
            if not all(cited):
                continue
            way = [dict(r, chunks=c) for r, c in zip(way, cited, strict=True)]
            last = way[-1]
            forward = last["reached"] == last["object"]
            start = last["subject"] if forward else last["object"]
            before = tuple((r["subject"], r["predicate"], r["object"]) for r in way[:-1])
            line = lines.setdefault(
                (ws, before, start, last["predicate"], forward), [len(rank), way[:-1], []]
            )
            line[0] = min(line[0], rank[last["chunks"][0]])
            line[2].append(last)
    text, shown = [], []
    for (ws, _, start, predicate, forward), (_, before, ends) in sorted(
        lines.items(), key=lambda kv: kv[1][0]
    ):
        names = list(dict.fromkeys(r["reached"] for r in ends))
        # A first name or surname beside the full name it stands for says nothing more.
        answers = ", ".join(n for n in names if not any(m != n and n in m.split() for m in names))
        said = ["{subject} {predicate} {object}".format(**r) for r in before]
        said.append(f"{start} {predicate} {answers}" if forward else f"{answers} {predicate} {start}")
        chunks = sorted({c for r in [*before, *ends] for c in r["chunks"]})
        line = "- {} (chunk {})".format("; ".join(said), ", ".join(map(str, chunks)))
        if (
            len(text) >= RELATION_LINES
            or estimate_tokens("## Relations\n" + "\n".join([*text, line])) > budget // 3
        ):
            break
        text.append(line)
        shown.extend({"workspace": ws, "relations": [*before, end]} for end in ends)
    if not text:
        return "", []
    return "## Relations (typed walk; the chunks state them)\n" + "\n".join(text) + "\n\n", shown


# A line this long that a passage centres on, said again in another, is shown once.
SAME_LINE_CHARS = 20


def packet_choice(query, ranked, settings):
    """The candidates the packet may cite, in their order: within packet.min_relative_score of
    the best score, none whose answering line (without time and sender) an earlier one already
    centres on (a question asked again in another session, one file under two roots), at most
    packet.max_chunks."""
    words = content_words(query)
    top = max((c["score"] for c in ranked), default=0.0)
    keep, seen = [], set()
    for c in ranked:
        if top <= 0 or c["score"] < settings["packet.min_relative_score"] * top:
            continue
        line = " ".join(said(answering_line(c, words)).casefold().split())
        if len(line) >= SAME_LINE_CHARS and line in seen:
            continue
        seen.add(line)
        keep.append(c)
    return with_sole_holder(
        keep[: settings["packet.max_chunks"]], ranked, words, settings["packet.max_chunks"]
    )


def with_sole_holder(keep, ranked, words, most):
    """keep, with the only passage of the ranked pool that holds a word of the question (four
    letters or more) which none of keep holds in place of keep's last passage, when keep is full:
    exact evidence is not pushed out by near neighbours ("Norway" of "Which mountain did Melanie
    climb in Norway?" in one old window, "climbing a mountain" in five newer ones). A packet
    with room left cut the rest by their scores, and gains no passage (nor tokens) by this. One
    at most, the first such word's; the passage says which word kept it (sole_word)."""
    if len(keep) < most:
        return keep
    held = [stems(said(c["body"]) if c.get("chat") else c["body"]) for c in ranked]
    kept = {c["chunk_id"] for c in keep}
    for word in (w for w in words if len(w) >= 4):
        holders = [c for c, h in zip(ranked, held, strict=True) if word[:5] in h]
        if len(holders) != 1 or holders[0]["chunk_id"] in kept:
            continue
        return [*keep[:-1], dict(holders[0], sole_word=word)]
    return keep


def change_note(c, numbers):
    """What a cited passage's change mark says (plpy/changes.py order_changes), after its
    citation; `numbers` maps chunk ids to their block numbers."""
    change = c.get("change")
    if not change:
        return ""
    if change.get("within"):  # a later line of the same chat window (changes.window_update)
        return f" (later line, {change['day']}: updates the line of {change['within']})"
    refs = ", ".join(f"[{numbers[x]}]" for x in change["others"] if x in numbers)
    if not refs:  # the passages it is marked against did not fit the budget
        return ""
    if change["kind"] == "disagrees":
        return f" (disagrees with {refs}, the same day)"
    if change["kind"] == "later":
        return f" (later, {change['day']}: {'updates' if change['update'] else 'differs from'} {refs})"
    return f" (earlier, {change['day']}; superseded by {refs}?)"


def packet(
    query,
    ranked,
    hint_list,
    report,
    budget,
    settings,
    capsules=(),
    facts=(),
    today=None,
    order=None,
    choose_facts=None,
    timeline="",
    of_days=None,
):
    """The context packet as {text, tokens, used, capsules, ...} within `budget` tokens.
    `facts` (exo_private.packet_facts rows; `today` the real day, ISO) make its first section,
    those of them `choose_facts` (query, facts, cited passages, report) -> facts keeps
    (plpy/fact_choice.py, which build_packet passes); `capsules` (exo_private.packet_capsules
    rows of the documents of `ranked`) its capsule section; the report's capsules.packet says
    which were shown and which skipped. `order` (query, chosen, report, ranked) -> chosen reorders
    and marks what the packet cites (plpy/changes.py order_changes, which build_packet passes).
    `timeline`, the Timeline section of an aggregate question (plpy/timeline.py), opens it.
    `of_days` (ranked, the days the question names, as_of) -> ranked keeps what is of those days
    (plpy/passage_days.py, which build_packet passes)."""
    words = content_words(query)
    if of_days is not None:
        ranked = of_days(ranked, (report.get("temporal") or {}).get("span"), report.get("as_of"))
    chosen = packet_choice(query, ranked, settings)
    found = (report.get("answer") or {}).get("found") is not False
    if order is not None and found:  # the nearest of nothing that answers tell no change
        chosen = order(query, chosen, report, ranked)
    if choose_facts is not None:
        facts = choose_facts(query, facts, chosen if found else [], report)
    # Nothing answers (report.answer, search.answer_check) and no fact of what the question names
    # does either: said, with the two nearest passages.
    nothing = not found and not facts and not (report.get("timeline") or {}).get("answer")
    if nothing:
        chosen = chosen[:NEAREST_NOT_ANSWERS]

    head = "# Context for: " + " ".join((query or "")[:MAX_INPUT_CHARS].split())[:200] + "\n\n"
    fact_text = fact_section(
        facts, fact_moment(report) if facts else None, today, words, budget // FACT_SHARE
    )
    relation_text, relations = relation_section(report, ranked, budget)
    capsule_text, shown, stale, withheld = capsule_section(
        chosen, capsules, words, budget, settings.get("packet.capsules")
    )
    report.setdefault("capsules", {"served": [], "stale_skipped": []})["packet"] = {
        "shown": [k["capsule_id"] for k in shown],
        "stale_skipped": stale,
        "withheld": withheld,
    }
    hint_lines = [
        "- {} chunk(s) about {} in {} withheld (deferred subject). {}".format(
            h["chunks"], h["subject"], h["workspace"], h["how"]
        )
        for h in hint_list
    ]
    hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
    notes = []
    if report.get("archive", {}).get("open"):
        notes.append("archive open: " + str(report["archive"].get("why")))
    for d in report.get("degradations", []):
        notes.append("degraded: {} ({})".format(d["component"], d["error_class"]))
    if stale:
        notes.append(f"{len(stale)} stale capsule(s) skipped (a source changed since): raw evidence only")

    why = {r["subject"]: r["why"] for r in report.get("released") or []}.get

    def provenance(used):
        # What a reader of the packet should know of how it was made: deferred material released,
        # the archive opened, a part degraded. Each cited chunk's stage and score, and the rerank,
        # are in the packet's JSON (used, report), not in the text an agent pays for.
        lines = []
        cited = released(used, why)
        if cited:  # the first note: a packet cut short keeps it
            lines.append(
                "note: released deferred material: "
                + "; ".join("{subject} in {workspace} ({chunks} chunk(s): {why})".format(**r) for r in cited)
            )
        lines.extend("note: " + n for n in notes)
        return "## Provenance\n" + "\n".join(lines) + "\n" if lines else ""

    evidence = "## Evidence\n"
    if nothing:
        evidence += f"{NOTHING_ANSWERS} ({report['answer']['why']}). The nearest, not an answer:\n"
    fixed = head + timeline + fact_text + relation_text + capsule_text + evidence
    chat_chars = settings.get("packet.chat_excerpt_chars")
    used, heads, bodies = [], [], []  # the chunks shown, each one's numbered citation and excerpt
    numbers = {c["chunk_id"]: n for n, c in enumerate(chosen, 1)}

    def numbered(n, c):
        return f"[{n}] {citation(c)}{change_note(c, numbers)}"

    said_of = {}  # document id -> the sentence_keys its excerpts showed (its chunks overlap)

    def body(c, chars):
        seen = frozenset() if c.get("chat") else said_of.get(c["document_id"], frozenset())
        return f"\n{chunk_excerpt(c, words, chars, chat_chars, seen)}\n\n"

    blocks_text = ""
    for c in chosen:
        top = numbered(len(used) + 1, c)
        # The best evidence gets twice the room: its answer is often a sentence or a message away
        # from the one that shares the question's words.
        chars = settings["packet.excerpt_chars"] * (1 if used else 2)
        rest = fixed + blocks_text + hint_text + provenance([*used, c])
        excerpt = body(c, chars)
        if not excerpt.strip() and c["body"].strip():  # an overlapping chunk's excerpt showed it all
            continue
        last = estimate_tokens(rest + top + excerpt) > budget
        if last:
            # What is left of the budget still holds a shorter excerpt of this chunk, or nothing more.
            chars = budget * 4 - len(rest + top + body(c, 0)) - 8  # room for the ellipsis marks
            if chars < 120:
                break
            excerpt = body(c, chars)
        used.append(c)
        heads.append(top)
        bodies.append(excerpt)
        if not c.get("chat"):
            said_of.setdefault(c["document_id"], set()).update(shown_sentences(excerpt))
        blocks_text += top + excerpt
        if last:
            break
    if len(used) < len(chosen):
        # a mark names only blocks shown (never longer than before: the budget still holds)
        numbers = {c["chunk_id"]: n for n, c in enumerate(used, 1)}
        heads = [numbered(n, c) for n, c in enumerate(used, 1)]
    blocks = [top + excerpt for top, excerpt in zip(heads, bodies, strict=True)]
    if not used:
        blocks = ["(nothing found)\n\n"]
    text = fixed + "".join(blocks) + hint_text + provenance(used)
    while estimate_tokens(text) > budget and hint_lines:
        hint_lines.pop()  # a tiny budget: hints are cut before the text ever overflows
        hint_text = ("## Withheld\n" + "\n".join(hint_lines) + "\n\n") if hint_lines else ""
        text = fixed + "".join(blocks) + hint_text + provenance(used)
    if estimate_tokens(text) > budget:
        text = text[: max(0, budget * 4 - 4)].rstrip() + "\n..."
        text = text[: budget * 4]
    return {
        "text": text,
        "tokens": estimate_tokens(text),
        "budget": budget,
        "used": [
            {
                "n": n,
                "chunk_id": c["chunk_id"],
                "document_id": c["document_id"],
                "conversation_id": c["chat"]["conversation_id"] if c.get("chat") else None,
                "citation": citation(c),
                "workspace": c["workspace"],
                "path": c["path"],
                "band": c["band"],
                "written_at": c.get("written_at"),
                "stage": c["stage"],
                "score": c["score"],
                "change": c.get("change"),
                "sole_word": c.get("sole_word"),  # cited as the pool's only holder of this word
            }
            for n, c in enumerate(used, 1)
        ],
        "capsules": shown,
        "relations": relations,
        "hints": hint_list,
    }
