"""Extractive capsules: a document's most central sentences, each traceable to its chunk (stdlib only).

Inlined into exo_private.build_capsule (`# exo:include capsules`) and importable as plain
Python for tests. build_capsule() picks sentences deterministically: every sentence of the document's
chunks that reads as prose is weighed by TF-IDF against the whole document (its centrality),
the most central ones are taken until the capsule reaches its size (near-duplicates left out),
and they are kept in document order, one sentence a line, each with the chunk and the offsets
in that chunk it was read from. Sentences of charged chunks are never taken: a capsule holds no
deferred material, so it never needs withholding for it. build_document() is the whole job the
worker runs for one queued document.
"""

import json
import math

from search import _SENTENCE_END, _WORD, STOPWORDS

BUILDER = "extractive-1"
"""The builder's name and version; part of every capsule's stamp (exo_private.capsule_stamp)."""
SHARE = 0.15
"""A capsule aims at this share of its document, within capsules.min_tokens..max_tokens."""
MIN_SENTENCE_CHARS = 40
MAX_SENTENCE_CHARS = 500
MIN_SENTENCE_WORDS = 6
MIN_LETTER_SHARE = 0.6
"""A sentence is prose when letters make up at least this share of it (code, tables and rules are not)."""
DUPLICATE_OVERLAP = 0.6
"""A sentence sharing this much of its words with one already taken (Jaccard) adds nothing."""
LIVE_STAGES = ("chunked", "embedded", "graphed")


def sentence_spans(body):
    """(start, end) of each sentence of a chunk's body, trimmed of surrounding whitespace."""
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


def prose(text):
    """Whether a sentence (whitespace already collapsed) reads as prose worth a capsule line."""
    if not MIN_SENTENCE_CHARS <= len(text) <= MAX_SENTENCE_CHARS:
        return False
    if text[0] in "#|>`" or text.startswith(("- [", "* [")):
        return False
    if len(_WORD.findall(text)) < MIN_SENTENCE_WORDS:
        return False
    return sum(c.isalpha() for c in text) >= MIN_LETTER_SHARE * len(text)


def sentence_terms(text):
    """The words a sentence is about: lower-cased, no stopwords, at least three letters."""
    return [w for w in (w.casefold() for w in _WORD.findall(text)) if len(w) > 2 and w not in STOPWORDS]


def prose_sentences(chunks):
    """Every prose sentence of uncharged chunks, once (chunks may overlap), in document order:
    (candidates, charged_skipped). A chunk is {id, body, char_start, charged_subjects}."""
    found = {}
    skipped = 0
    for chunk in chunks:
        for a, b in sentence_spans(chunk["body"]):
            text = " ".join(chunk["body"][a:b].split())
            if not prose(text):
                continue
            at = chunk["char_start"] + a
            if chunk.get("charged_subjects"):
                skipped += 1
                continue
            if at not in found:
                found[at] = {"at": at, "chunk_id": chunk["id"], "start": a, "end": b, "text": text}
    return [found[at] for at in sorted(found)], skipped


def centrality(sentences):
    """Each sentence's cosine similarity to the document (the sum of its sentences' TF-IDF vectors)."""
    bags = []
    df = {}
    for s in sentences:
        bag = {}
        for t in sentence_terms(s["text"]):
            bag[t] = bag.get(t, 0) + 1
        bags.append(bag)
        for t in bag:
            df[t] = df.get(t, 0) + 1
    n = len(sentences)
    idf = {t: math.log((1 + n) / (1 + d)) + 1.0 for t, d in df.items()}
    vectors = [{t: tf * idf[t] for t, tf in bag.items()} for bag in bags]
    centre = {}
    for v in vectors:
        for t, w in v.items():
            centre[t] = centre.get(t, 0.0) + w
    centre_norm = math.sqrt(sum(w * w for w in centre.values())) or 1.0
    scores = []
    for v in vectors:
        norm = math.sqrt(sum(w * w for w in v.values()))
        dot = sum(w * centre[t] for t, w in v.items())
        scores.append(dot / (norm * centre_norm) if norm else 0.0)
    return scores


def build_capsule(chunks, document_chars, min_tokens, max_tokens):
    """The extractive capsule of a document's chunks (in order), or None when its distinct prose
    outside charged chunks is shorter than min_tokens: {builder, body, tokens, sentences: [{chunk_id,
    start, end}] (one per line of body: that chunk's body[start:end], whitespace collapsed),
    chunk_ids, candidates, charged_skipped}."""
    found, charged_skipped = prose_sentences(chunks)
    min_chars, max_chars = 4 * min_tokens, 4 * max_tokens
    if sum(len(s["text"]) + 1 for s in found) - 1 < min_chars:
        return None
    target = min(max_chars, max(min_chars, int(SHARE * document_chars)))
    scores = centrality(found)
    order = sorted(range(len(found)), key=lambda i: (-round(scores[i], 9), found[i]["at"]))
    taken, size = [], -1
    for i in order:
        s = found[i]
        if size + 1 + len(s["text"]) > max_chars:
            continue
        words = set(sentence_terms(s["text"]))
        if any(
            len(words & t["words"]) >= DUPLICATE_OVERLAP * len(words | t["words"]) for t in taken if words
        ):
            continue
        taken.append(dict(s, words=words))
        size += 1 + len(s["text"])
        if size >= target:
            break
    if size < min_chars:  # mostly near-duplicates (a changelog of one repeated line, say)
        return None
    taken.sort(key=lambda s: s["at"])
    body = "\n".join(s["text"] for s in taken)
    return {
        "builder": BUILDER,
        "body": body,
        "tokens": (len(body) + 3) // 4,
        "sentences": [{"chunk_id": s["chunk_id"], "start": s["start"], "end": s["end"]} for s in taken],
        "chunk_ids": sorted({s["chunk_id"] for s in taken}),
        "candidates": len(found),
        "charged_skipped": charged_skipped,
    }


def build_document(plpy, SD, document_id):
    """The capsule job of one queued document, as JSON text {status, capsule_id, tokens, ...}:
    built; fresh (its capsule is current already); or none made, and any old one dropped:
    gone (no document), not_live (not chunked, or a conversation), too_small (under
    capsules.min_document_chars), too_little_text (too little distinct prose outside charged chunks)."""
    plans = SD.setdefault("capsule_plans", {})

    def run(key, text, types, args):
        if key not in plans:
            plans[key] = plpy.prepare(text, types)
        return plpy.execute(plans[key], args)

    settings = {
        r["key"]: json.loads(r["value"])
        for r in run(
            "settings",
            "select key, value::text from exo_private.settings where key like 'capsules.%'",
            [],
            [],
        )
    }
    # Locked against re-chunking while the capsule is made from its chunks.
    docs = run(
        "document",
        "select d.workspace, d.sha256, d.stage::text as stage, d.conversation_id is not null as chat "
        "from exo_private.documents d where d.id = $1 for share",
        ["bigint"],
        [document_id],
    )
    if not docs:
        return json.dumps({"status": "gone"})
    doc = docs[0]

    def drop(status):
        run("drop", "delete from exo_private.capsules k where k.document_id = $1", ["bigint"], [document_id])
        return json.dumps({"status": status})

    if doc["stage"] not in LIVE_STAGES or doc["chat"] or doc["workspace"] is None:
        return drop("not_live")
    chunks = run(
        "chunks",
        "select c.id, c.body, c.char_start, c.char_end, c.charged_subjects from exo_private.chunks c "
        "where c.workspace = $1 and c.document_id = $2 order by c.ordinal",
        ["text", "bigint"],
        [doc["workspace"], document_id],
    )
    document_chars = max((c["char_end"] for c in chunks), default=0)
    if document_chars < settings["capsules.min_document_chars"]:
        return drop("too_small")
    current = run(
        "current",
        "select k.id, k.builder, s.state from exo_private.capsules k "
        "join exo_private.capsule_states s on s.capsule_id = k.id where k.document_id = $1",
        ["bigint"],
        [document_id],
    )
    if current and current[0]["builder"] == BUILDER and current[0]["state"] == "fresh":
        return json.dumps({"status": "fresh", "capsule_id": current[0]["id"]})
    built = build_capsule(
        chunks, document_chars, settings["capsules.min_tokens"], settings["capsules.max_tokens"]
    )
    if built is None:
        return drop("too_little_text")
    capsule_id = run(
        "store",
        "insert into exo_private.capsules "
        "(workspace, scope, document_id, sources, builder, stamp, body, tokens, sentences, chunk_ids) "
        "values ($1, 'document', $2, array[$2], $3, exo_private.capsule_stamp($3, array[$4]), $5, $6, "
        "$7::jsonb, $8) "
        "on conflict (document_id) do update set workspace = excluded.workspace, "
        "sources = excluded.sources, builder = excluded.builder, stamp = excluded.stamp, "
        "body = excluded.body, tokens = excluded.tokens, sentences = excluded.sentences, "
        "chunk_ids = excluded.chunk_ids, built_at = now() "
        "returning id",
        ["text", "bigint", "text", "text", "text", "int", "text", "bigint[]"],
        [
            doc["workspace"],
            document_id,
            BUILDER,
            doc["sha256"],
            built["body"],
            built["tokens"],
            json.dumps(built["sentences"]),
            built["chunk_ids"],
        ],
    )[0]["id"]
    return json.dumps(
        {
            "status": "built",
            "capsule_id": capsule_id,
            "tokens": built["tokens"],
            "sentences": len(built["sentences"]),
            "candidates": built["candidates"],
            "charged_skipped": built["charged_skipped"],
        }
    )
