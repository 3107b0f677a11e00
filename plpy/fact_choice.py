"""Which facts a context packet shows: the lines the question is about (stdlib only).

exo_private.packet_facts gives every fact of the subjects a question names, and a question in
the first person names the owner: their whole file (blood type, IBAN, the dog's microchip).
A packet shows only the lines the question is about. A line is about it when

  profile   the question asks about the subject as a whole ("Who is Priya?", "Tell me about
            myself"): it has no content word beyond the subject's name and words of asking;
  words     the line's attribute shares a word with the question ("Where does Priya live?":
            lives_in), or its value shares two;
  meaning   the question that asks for it ("What is my address?"), or its attribute with its
            value, is at least packet.fact_similarity similar to the question and within
            FACT_MARGIN of the most similar line ("Where do I live?": address);
  evidence  the answering lines of the passages the packet cites (the sentence or message each
            excerpt centres on), other than of the fact's own document, state its value (two
            thirds of the words it names outside parentheses, two at least): "Where did I live
            in 2014?" cites "I now live at 14 Fenwick Street, Flat 3", the address of 2014.

An extracted fact (kind extracted: what one passage said) is not stated as current when a cited
passage about the question is of a later day (report.facts.not_current counts them).

A sensitive line (its attribute matches a pattern of packet.sensitive_facts: account numbers,
identity and health data; or its value holds a number and a word that does: "IBAN XX00 ...") is
shown only when the question asks for it, by those words or by meaning as the line most like the
question (its question at least the floor): never in a profile, never by evidence. Withheld facts
stay as hints whatever the question. Words are compared by stem() ("live", "lives", "lived").
Meaning needs the embeddings endpoint; without it the other rules still choose.
"""

import re

from search import STOPWORDS, answering_line, chat_start, content_words, query_words, stem

# Words that ask about a subject as a whole rather than one thing of it.
ASKING = frozenset(
    """tell know describe profile summary summarise summarize everything anything info information
    details facts fact myself yourself himself herself themselves""".split()  # noqa: SIM905
)
FACT_MARGIN = 0.1
"""A line found by meaning is within this of the most similar line's similarity."""


def word_stems(text):
    """The stems of the words of `text` that are not stop words."""
    return {stem(w) for w in query_words(text) if w not in STOPWORDS}


def attribute_text(fact):
    return fact["attribute"].replace("_", " ")


def asked_for(fact, mine):
    """The question that asks for a fact ("What is my gp?", "What is Priya Okafor's lives in?"):
    a question is closer to another question than to a label ("Where do I live?": address)."""
    whose = "my" if mine else fact["subject"] + "'s"
    return f"What is {whose} {attribute_text(fact)}?"


def facts_about(query, facts, passages, report, settings, meaning=None):
    """The rows of `facts` the question is about, in their order; report.facts says how many
    were shown, by which rule, and how many were not about the question. `passages` are the
    candidates the packet cites; `meaning(query, texts)` gives one similarity per text, or None
    when no model is at hand."""
    rows = [f for f in facts if not f.get("withheld")]
    names = set().union(set(), *(word_stems(f["subject"]) for f in rows))
    asked = {stem(w) for w in query_words(query) if w not in STOPWORDS and w not in ASKING} - names
    patterns = [re.compile(p) for p in settings.get("packet.sensitive_facts") or []]
    shown = {}  # id(row) -> the first rule that showed it
    said = {}  # the documents a fact comes from -> the stems the other cited passages hold

    def sensitive(f):
        # the words of its attribute that make it sensitive ("insurance" of car_insurance), and
        # of a value that holds a number ("IBAN XX00 0000", not "Larkhaven Health Centre")
        text = attribute_text(f)
        if sum(c.isdigit() for c in f["value"]) >= 4:
            text += " " + f["value"]
        return {stem(w) for w in query_words(text) if any(p.search(w) for p in patterns)}

    scores = None
    if meaning and rows and asked:
        mine = not {stem(w) for w in query_words(query)} & names  # the owner's, by the first person
        scores = meaning(
            query, [t for f in rows for t in (asked_for(f, mine), f"{attribute_text(f)}: {f['value']}")]
        )
    if scores:
        best = [max(scores[2 * n], scores[2 * n + 1]) for n in range(len(rows))]
        floor = max(settings.get("packet.fact_similarity", 0.4), max(best) - FACT_MARGIN)
    for n, f in enumerate(rows):
        private = sensitive(f)
        if private:  # only when asked for: by those words, or by the question that asks for it,
            # the line most like the question (not the account beside "Where am I living now?")
            if private & asked:
                shown[id(f)] = "words"
            elif scores and scores[2 * n] >= floor and best[n] == max(best):
                shown[id(f)] = "meaning"
            continue
        own = frozenset(s.get("document_id") for s in f.get("sources") or [])
        held = word_stems(f["value"]) - names
        # what the value names: its words outside parentheses, not its numbers or dates
        named = {w for w in word_stems(re.sub(r"\([^)]*\)", " ", f["value"])) - names if w.isalpha()}
        if not asked:
            shown[id(f)] = "profile"
        elif word_stems(attribute_text(f)) & asked or len(held & asked) >= 2:
            shown[id(f)] = "words"
        elif scores and best[n] >= floor:
            shown[id(f)] = "meaning"
        elif (
            len(named) >= 2
            and len(named & said.setdefault(own, stated_by(passages, own, content_words(query)))) * 3
            >= len(named) * 2
        ):
            shown[id(f)] = "evidence"
    superseded_lines(rows, shown)
    # An extracted fact is what one passage said at its time: a cited passage about the question
    # written on a later day may have changed it ("I report to Tomasz now" after "My manager is
    # Priya"), so it is not stated as current; observed and declared facts are. Only a passage
    # that could: one with a line that says rather than asks ("How do I write a self-review for
    # my manager?" cannot) and names or counts something the value does not. In the fact's own
    # conversation, a later message may: "The Q3 report deadline was pushed back to September
    # 1st." a minute or a month after "The Q3 report is due on August 15th."
    for f in rows:
        if id(f) in shown and f.get("kind") == "extracted":
            own = {s.get("document_id") for s in f.get("sources") or []}
            day = str(f.get("valid_from") or "")[:10]
            if any(said_later(p, f["value"], own, day, asked) for p in passages):
                shown[id(f)] = "later passages"
    hidden = ("later passages", "superseded")
    chosen = [f for f in facts if f.get("withheld") or shown.get(id(f), hidden[0]) not in hidden]
    by = {}
    for why in shown.values():
        by[why] = by.get(why, 0) + 1
    later, older = by.pop(hidden[0], 0), by.pop(hidden[1], 0)
    report["facts"] = {
        "shown": len(shown) - later - older,
        "not_about_question": len(rows) - len(shown),
        "by": by,
    }
    if later:
        report["facts"]["not_current"] = later
    if older:
        report["facts"]["superseded"] = older
    return chosen


def same_head(a, b):
    """Two attributes that name one thing more or less narrowly: the same head word (the last),
    the words of one all in the other ("manager", "line manager"; "latency budget", "checkout
    latency budget"; not "car", "car insurance", nor "home address", "work address")."""
    x, y = attribute_text(a).split(), attribute_text(b).split()
    return x[-1:] == y[-1:] and (set(x) <= set(y) or set(y) <= set(x))


def superseded_lines(rows, shown):
    """Of two shown lines of one subject and kind whose attributes name the same thing
    (same_head: what one statement called "my manager" and a later one "my line manager"),
    the later value is current and the earlier one its `before`: shown[id] "superseded"."""
    lines = [f for f in rows if id(f) in shown and f.get("attribute")]
    for f in lines:
        for g in lines:
            if (
                g is not f
                and (g["subject"], g.get("kind")) == (f["subject"], f.get("kind"))
                and g["attribute"] != f["attribute"]
                and g["value"] != f["value"]
                and str(g.get("valid_from")) < str(f.get("valid_from"))
                and same_head(f, g)
            ):
                shown[id(g)] = "superseded"
                before = f.get("before")
                if before is None or str(before.get("valid_from")) < str(g.get("valid_from")):
                    f["before"] = dict(g, valid_to=f.get("valid_from"))


CHAT_PREFIX = re.compile(r"^(?:\d{4}-\d{2}-\d{2} )?\d{1,2}:\d{2} [^:\n]{1,80}: ")
"""A chat line's time and sender ("2026-10-13 14:46 Sam Rivera: ")."""


def tells_another_value(text, value, asked):
    """A passage about the question (it holds a word of `asked`) that could tell another value
    than `value`: a line of it that does not ask, and names or counts something the value does
    not (a number, a capitalised word past its sentence's first; a chat line's time and sender
    are none)."""
    if not word_stems(text) & asked:
        return False
    held = value.casefold()
    for line in text.split("\n"):
        line = CHAT_PREFIX.sub("", line.strip())
        if line.endswith("?"):
            continue
        before = ""  # the word before, with the mark after it: "Dr." does not end a sentence
        for match in re.finditer(r"\w[\w:,£$€-]*\w|\w", line):
            word = match.group()
            mark = line[match.end() : match.end() + 1]
            starts = not before or (before[-1] in ".!?;:" and not (before[:1].isupper() and len(before) <= 4))
            said = any(c.isdigit() for c in word) or (not starts and word[:1].isupper() and len(word) > 1)
            if said and word.casefold() not in held:
                return True
            before = word + mark.strip()
    return False


def said_later(passage, value, own, day, asked):
    """Whether a cited passage may tell a newer value than an extracted fact's `value`, said on
    `day` in one of the documents `own` (tells_another_value): a passage of another document
    written on a later day; or, of the fact's own conversation, a window of a later day, or the
    messages after the one that states the value (a chat's lines are in the order said; a
    document's sentences are not)."""
    body = passage.get("body") or ""
    if passage.get("document_id") not in own:
        return passage_day(passage) > day and tells_another_value(body, value, asked)
    if not passage.get("chat"):
        return False
    at = body.casefold().find(value.casefold())
    if at < 0:
        return passage_day(passage) > day and tells_another_value(body, value, asked)
    after = body[body.find("\n", at) + 1 :] if "\n" in body[at:] else ""
    return tells_another_value(after, value, asked)


def passage_day(passage):
    """The day a cited passage was written: a chat chunk's first message's, else its document's."""
    return (
        (passage.get("chat") and chat_start(passage.get("body") or "")) or passage.get("written_at") or ""
    )[:10]


def stated_by(passages, own, words):
    """The word stems of the answering lines (search.answering_line: the sentence or message a
    passage's excerpt centres on, by the question's `words`) of the passages not from the
    documents `own`, of their lines that hold a word of the question: a passage of the document a
    fact comes from states every fact of it, and a name elsewhere in a passage ("Tomas" in a note
    about a marathon, "Employment (Northwind Labs)" above the on-call allowance) is no answer."""
    asked = {stem(w) for w in words}
    return set().union(
        set(),
        *(
            stems
            for p in passages
            if p.get("document_id") not in own
            for line in answering_line(p, words).split("\n")
            if (stems := word_stems(line)) & asked
        ),
    )
