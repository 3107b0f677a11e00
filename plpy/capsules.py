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
import re

from model_client import Endpoint, ModelError, chat
from search import _WORD, STOPWORDS, sentence_spans

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
MODEL_BUILDER = "model-1"
"""The chat-model builder (capsules.builder = model): the extractive capsule's lines, grouped by
chunk into numbered passages, rewritten by the chat model, every sentence citing its passage."""
GROUNDED_SHARE = 0.6
"""A model sentence is grounded when at least this share of its words occur in the passage it cites."""
MODEL_PROMPT = (
    "Summarise the numbered passages below in {low} to {high} sentences of plain prose. Say only what "
    "the passages say. End every sentence with the number of the passage it comes from in square "
    "brackets, like this: The module is loaded once [2]."
)


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
    return extract(found, charged_skipped, document_chars, min_tokens, max_tokens)


def extract(found, charged_skipped, source_chars, min_tokens, max_tokens):
    """The extractive capsule of candidate sentences ({at, chunk_id, start, end, text}, `at` their
    order in the sources), sized to SHARE of source_chars within min_tokens..max_tokens: the most
    central ones, near-duplicates left out, in source order; None when too little prose."""
    min_chars, max_chars = 4 * min_tokens, 4 * max_tokens
    if sum(len(s["text"]) + 1 for s in found) - 1 < min_chars:
        return None
    target = min(max_chars, max(min_chars, int(SHARE * source_chars)))
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


# -- the chat-model builder ---------------------------------------------------------------------

_CITATION = re.compile(r"\[\s*(?:passage\s*)?(\d+)\s*\]", re.IGNORECASE)
_CITED_END = re.compile(r"([.!?])\s*((?:\[\s*(?:passage\s*)?\d+\s*\]\s*)+)", re.IGNORECASE)
_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|\*\*|__|^#+\s*", re.MULTILINE)


def passages(built):
    """The model's passages: the extractive capsule's lines grouped by the chunk they come from,
    in capsule order: [(chunk_id, text)]."""
    grouped = {}
    for line, s in zip(built["body"].split("\n"), built["sentences"], strict=True):
        grouped.setdefault(s["chunk_id"], []).append(line)
    return [(chunk_id, " ".join(lines)) for chunk_id, lines in grouped.items()]


def model_messages(sources, min_tokens, max_tokens):
    """The chat request for `sources` ([(chunk_id, text)]): the instruction, then the numbered passages."""
    low, high = max(3, min_tokens // 30), max(4, max_tokens // 30)
    text = "\n\n".join(f"[{n}] {body}" for n, (_, body) in enumerate(sources, start=1))
    return [
        {"role": "system", "content": MODEL_PROMPT.format(low=low, high=high)},
        {"role": "user", "content": text},
    ]


def _stems(text):
    return {w[:5] for w in sentence_terms(text)}


def validate_reply(content, sources, min_tokens, max_tokens):
    """The model's summary checked line by line: ({body, tokens, sentences: [{chunk_id}],
    chunk_ids}, None), or (None, why it failed). Every sentence must end citing one of the
    passages ([n], 1..len(sources)) and be grounded in it: at least GROUNDED_SHARE of its words
    (five-letter stems, stopwords left out) occur in that passage; the whole within min..max tokens."""
    text = _MARKUP.sub("", content or "").strip()
    # "... sentence. [2]" reads as "... sentence [2]."
    text = _CITED_END.sub(lambda m: " " + m.group(2).strip() + m.group(1) + " ", text)
    lines, cited = [], []
    for n, (a, b) in enumerate(sentence_spans(text), start=1):
        sentence = " ".join(text[a:b].split())
        numbers = [int(x) for x in _CITATION.findall(sentence)]
        plain = " ".join(_CITATION.sub(" ", sentence).split())
        plain = re.sub(r"\s+([.!?,;:])", r"\1", plain)
        if not numbers:
            return None, f"sentence {n} cites no passage: {sentence[:80]!r}"
        if any(not 1 <= x <= len(sources) for x in numbers):
            return None, f"sentence {n} cites passage {numbers[0]}, not one of 1..{len(sources)}"
        words = _stems(plain)
        passage = _stems(sources[numbers[0] - 1][1])
        if not words:
            return None, f"sentence {n} says nothing: {sentence[:80]!r}"
        share = len(words & passage) / len(words)
        if share < GROUNDED_SHARE:
            return None, f"sentence {n} is not grounded in passage {numbers[0]} ({share:.0%} of its words)"
        lines.append(plain)
        cited.append(sources[numbers[0] - 1][0])
    if not lines:
        return None, "no sentences"
    body = "\n".join(lines)
    tokens = (len(body) + 3) // 4
    if not min_tokens <= tokens <= max_tokens:
        return None, f"{tokens} tokens, not within {min_tokens}..{max_tokens}"
    return {
        "builder": MODEL_BUILDER,
        "body": body,
        "tokens": tokens,
        "sentences": [{"chunk_id": c} for c in cited],
        "chunk_ids": sorted(set(cited)),
    }, None


def model_capsule(setting, built, min_tokens, max_tokens, call=chat):
    """The chat model's capsule from the extractive one `built`: (capsule, None), or (None, why
    it could not be used: no chat model, the endpoint failed, the reply failed validation).
    In the database the call lets the statement's cancel through while it waits (the worker's
    stop cancels it: pg_cancel_backend; model_client.statement_check); that error goes up."""
    try:
        endpoint = Endpoint.from_setting(setting)
    except ValueError as exc:
        return None, f"no chat model: {exc}"
    sources = passages(built)
    try:
        reply = call(
            endpoint, model_messages(sources, min_tokens, max_tokens), max_tokens=int(max_tokens * 1.5)
        )
    except ModelError as exc:
        return None, f"chat endpoint: {exc.error_class}: {str(exc)[:200]}"
    if reply.finish_reason == "length":
        return None, "the reply was cut off (max_tokens)"
    return validate_reply(reply.content, sources, min_tokens, max_tokens)


def choose(run, settings, built):
    """The capsule to store: the extractive `built`, or with capsules.builder = model the chat
    model's when it passes validation. Returns (capsule, note: why the model's was not used)."""
    if settings.get("capsules.builder") != "model":
        return built, None
    rows = run(
        "chat_setting", "select value::text from exo_private.settings where key = 'models.chat'", [], []
    )
    setting = json.loads(rows[0]["value"]) if rows else None
    made, why = model_capsule(
        setting, built, settings["capsules.min_tokens"], settings["capsules.max_tokens"]
    )
    if made is None:
        return built, why
    return dict(made, candidates=built["candidates"], charged_skipped=built["charged_skipped"]), None


def wanted_builder(settings):
    return MODEL_BUILDER if settings.get("capsules.builder") == "model" else BUILDER


def group_candidates(documents, chunks, capsules):
    """Candidate sentences of a folder or workspace capsule: of each document (ids in order, the
    newest first), the lines of its document capsule where it has a fresh one, else the prose
    sentences of its chunks; a charged chunk lends none. `chunks`: {document_id: [chunk]} (of a
    document with a capsule, at least the chunks it cites); `capsules`: {document_id: its
    capsule's sentences}. Returns (candidates, charged_skipped); a candidate's `at` is (the
    document's place, its offset in the document)."""
    found, skipped = [], 0
    for place, doc in enumerate(documents):
        own = chunks.get(doc, [])
        lines = capsules.get(doc)
        if lines is None:
            sentences, charged = prose_sentences(own)
        else:
            by_id = {c["id"]: c for c in own}
            sentences, charged = [], 0
            for line in lines:
                chunk = by_id.get(line["chunk_id"])
                if chunk is None:
                    continue
                if chunk.get("charged_subjects"):
                    charged += 1
                    continue
                text = " ".join(chunk["body"][line["start"] : line["end"]].split())
                sentences.append(
                    {
                        "at": chunk["char_start"] + line["start"],
                        "chunk_id": chunk["id"],
                        "start": line["start"],
                        "end": line["end"],
                        "text": text,
                    }
                )
        skipped += charged
        found += [dict(s, at=(place, s["at"])) for s in sentences]
    return found, skipped


def naming(names):
    """A pattern that finds any of `names` as whole words, case and spacing ignored."""
    alternatives = sorted({" ".join(n.split()).casefold() for n in names if n and n.strip()}, key=len)
    body = "|".join(r"\s+".join(map(re.escape, n.split())) for n in reversed(alternatives))
    return re.compile(r"(?<!\w)(?:" + body + r")(?!\w)", re.IGNORECASE) if body else None


def entity_candidates(documents, chunks, names):
    """Candidate sentences of an entity capsule: the prose sentences of the chunks that mention
    it (`chunks`: {document_id: [chunk]}, `documents` in order) that name it (one of `names`)."""
    pattern = naming(names)
    found, skipped = group_candidates(documents, chunks, {})
    return [s for s in found if pattern and pattern.search(s["text"])], skipped


def _runner(plpy, SD):
    """run(key, sql, types, args): a statement prepared once per session."""
    plans = SD.setdefault("capsule_plans", {})

    def run(key, text, types, args):
        if key not in plans:
            plans[key] = plpy.prepare(text, types)
        return plpy.execute(plans[key], args)

    return run


def _settings(run):
    return {
        r["key"]: json.loads(r["value"])
        for r in run(
            "settings",
            "select key, value::text from exo_private.settings where key like 'capsules.%'",
            [],
            [],
        )
    }


def _by_document(rows):
    grouped = {}
    for r in rows:
        grouped.setdefault(r["document_id"], []).append(r)
    return grouped


GROUP_DOCUMENTS = (
    "select d.id, d.sha256 from exo_private.documents d "
    "where d.workspace = $1 and d.conversation_id is null and d.stage in ('chunked', 'embedded', 'graphed') "
    "and ($2 = 'workspace' or exo_private.capsule_folder(d.source_id, d.path) = $3) "
    "order by d.written_at desc nulls last, d.id desc limit $4"
)
GROUP_CHUNKS = (
    "select c.document_id, c.id, c.body, c.char_start, c.char_end, c.charged_subjects, "
    "case when s.state = 'fresh' then k.sentences::text end as capsule "
    "from exo_private.chunks c "
    "left join exo_private.capsules k on k.document_id = c.document_id "
    "left join exo_private.capsule_states s on s.capsule_id = k.id "
    "where c.workspace = $1 and c.document_id = any ($2) "
    "and (s.state is distinct from 'fresh' or c.id = any (k.chunk_ids)) "
    "order by c.document_id, c.ordinal"
)
ENTITY_CHUNKS = (
    "select c.document_id, c.id, c.body, c.char_start, c.char_end, c.charged_subjects, d.sha256 "
    "from (select distinct m.chunk_id from exo_private.mentions m "
    "      join exo_private.entities e on e.id = m.entity_id "
    "      where e.workspace = $1 and e.canonical_key = $2 and m.chunk_id is not null) x "
    "join exo_private.chunks c on c.workspace = $1 and c.id = x.chunk_id "
    "join exo_private.documents d on d.id = c.document_id "
    "where d.stage in ('chunked', 'embedded', 'graphed') "
    "order by c.written_at desc nulls last, c.id desc limit $3"
)


def build_group(plpy, SD, workspace, scope, key):
    """The capsule job of a folder, workspace or entity (scope) named by key, as JSON text
    {status, capsule_id, tokens, ...}: built; fresh (its capsule is current, by the builder set,
    and read the same sources and, an entity's, the same count of mentioning chunks); or none
    made, and any old one dropped: too_few_documents (a folder or workspace under capsules.folder_min_documents live documents), too_few_mentions (an entity named in
    fewer than capsules.entity_min_mentions chunks), deferred_subject (an entity that is a deferred
    subject, by a name or an alias), too_little_text. A folder or workspace
    reads its newest capsules.group_max_documents documents (their document capsules where fresh,
    else their prose); an entity the sentences naming it in the newest chunks that mention it."""
    run = _runner(plpy, SD)
    settings = _settings(run)
    limit = settings["capsules.group_max_documents"]

    def drop(status):
        run(
            "drop_group",
            "delete from exo_private.capsules k where k.workspace = $1 and k.scope = $2 and k.scope_key = $3",
            ["text", "text", "text"],
            [workspace, scope, key],
        )
        return json.dumps({"status": status})

    mention_chunks = None
    if scope == "entity":
        deferred = run(
            "deferred_key",
            "select exists (select 1 from exo_private.deferred_subject_names() n where n.key = $1) as yes",
            ["text"],
            [key],
        )
        if deferred[0]["yes"]:  # no capsule sums up a deferred subject
            return drop("deferred_subject")
        rows = run("entity_chunks", ENTITY_CHUNKS, ["text", "text", "int"], [workspace, key, limit])
        mention_chunks = run(
            "entity_mention_chunks",
            "select n.chunks from exo_private.entity_mention_chunks n "
            "where n.workspace = $1 and n.canonical_key = $2",
            ["text", "text"],
            [workspace, key],
        )
        mention_chunks = mention_chunks[0]["chunks"] if mention_chunks else 0
        if len(rows) < settings["capsules.entity_min_mentions"]:
            return drop("too_few_mentions")
        names = [
            r["name"]
            for r in run(
                "entity_names",
                "select distinct e.name from exo_private.entities e where e.workspace = $1 and e.canonical_key = $2",
                ["text", "text"],
                [workspace, key],
            )
        ]
        chunks = _by_document(rows)
        documents = list(chunks)
        hashes = {r["document_id"]: r["sha256"] for r in rows}
        found, skipped = entity_candidates(documents, chunks, [*names, key])
    else:
        docs = run(
            "group_documents",
            GROUP_DOCUMENTS,
            ["text", "text", "text", "int"],
            [workspace, scope, key, limit],
        )
        if len(docs) < settings["capsules.folder_min_documents"]:
            return drop("too_few_documents")
        documents = [d["id"] for d in docs]
        hashes = {d["id"]: d["sha256"] for d in docs}
        rows = run("group_chunks", GROUP_CHUNKS, ["text", "bigint[]"], [workspace, documents])
        chunks = _by_document(rows)
        capsules = {doc: json.loads(c[0]["capsule"]) for doc, c in chunks.items() if c[0]["capsule"]}
        found, skipped = group_candidates(documents, chunks, capsules)
    current = run(
        "current_group",
        "select k.id, k.builder, k.note, k.sources, k.mention_chunks, s.state from exo_private.capsules k "
        "join exo_private.capsule_states s on s.capsule_id = k.id "
        "where k.workspace = $1 and k.scope = $2 and k.scope_key = $3",
        ["text", "text", "text"],
        [workspace, scope, key],
    )
    if (
        current
        and (current[0]["builder"] == wanted_builder(settings) or current[0]["note"] is not None)
        and current[0]["state"] == "fresh"
        and sorted(current[0]["sources"]) == sorted(documents)
        and current[0]["mention_chunks"] == mention_chunks
    ):
        # current as of now: exo_private.queue_capsules compares built_at with its documents' changes
        run(
            "touch_group",
            "update exo_private.capsules set built_at = now() where id = $1",
            ["bigint"],
            [current[0]["id"]],
        )
        return json.dumps({"status": "fresh", "capsule_id": current[0]["id"]})
    source_chars = sum(len(c["body"]) for c in rows)
    built = extract(
        found, skipped, source_chars, settings["capsules.min_tokens"], settings["capsules.max_tokens"]
    )
    if built is None:
        return drop("too_little_text")
    built, note = choose(run, settings, built)
    capsule_id = run(
        "store_group",
        "insert into exo_private.capsules "
        "(workspace, scope, scope_key, sources, builder, stamp, body, tokens, sentences, chunk_ids, note, "
        " mention_chunks) "
        "values ($1, $2, $3, $4, $5, exo_private.capsule_stamp($5, $6), $7, $8, $9::jsonb, $10, $11, $12) "
        "on conflict (workspace, scope, scope_key) where scope <> 'document' do update set "
        "sources = excluded.sources, builder = excluded.builder, stamp = excluded.stamp, "
        "body = excluded.body, tokens = excluded.tokens, sentences = excluded.sentences, "
        "chunk_ids = excluded.chunk_ids, note = excluded.note, mention_chunks = excluded.mention_chunks, "
        "built_at = now() "
        "returning id",
        [
            "text",
            "text",
            "text",
            "bigint[]",
            "text",
            "text[]",
            "text",
            "int",
            "text",
            "bigint[]",
            "text",
            "int",
        ],
        [
            workspace,
            scope,
            key,
            documents,
            built["builder"],
            [hashes[d] for d in documents],
            built["body"],
            built["tokens"],
            json.dumps(built["sentences"]),
            built["chunk_ids"],
            note,
            mention_chunks,
        ],
    )[0]["id"]
    return _built(capsule_id, built, note)


def _built(capsule_id, built, note):
    """The job's report of a capsule built."""
    return json.dumps(
        {
            "status": "built",
            "capsule_id": capsule_id,
            "builder": built["builder"],
            "tokens": built["tokens"],
            "sentences": len(built["sentences"]),
            "candidates": built["candidates"],
            "charged_skipped": built["charged_skipped"],
            "note": note,
        }
    )


def build_document(plpy, SD, document_id):
    """The capsule job of one queued document, as JSON text {status, capsule_id, tokens, ...}:
    built; fresh (its capsule is current already); or none made, and any old one dropped:
    gone (no document), not_live (not chunked, or a conversation), too_small (under
    capsules.min_document_chars), too_little_text (too little distinct prose outside charged chunks)."""
    run = _runner(plpy, SD)
    settings = _settings(run)
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
        "select k.id, k.builder, k.note, s.state from exo_private.capsules k "
        "join exo_private.capsule_states s on s.capsule_id = k.id where k.document_id = $1",
        ["bigint"],
        [document_id],
    )
    if (
        current
        and (current[0]["builder"] == wanted_builder(settings) or current[0]["note"] is not None)
        and current[0]["state"] == "fresh"
    ):
        return json.dumps({"status": "fresh", "capsule_id": current[0]["id"]})
    built = build_capsule(
        chunks, document_chars, settings["capsules.min_tokens"], settings["capsules.max_tokens"]
    )
    if built is None:
        return drop("too_little_text")
    built, note = choose(run, settings, built)
    capsule_id = run(
        "store",
        "insert into exo_private.capsules "
        "(workspace, scope, document_id, sources, builder, stamp, body, tokens, sentences, chunk_ids, note) "
        "values ($1, 'document', $2, array[$2], $3, exo_private.capsule_stamp($3, array[$4]), $5, $6, "
        "$7::jsonb, $8, $9) "
        "on conflict (document_id) do update set workspace = excluded.workspace, "
        "sources = excluded.sources, builder = excluded.builder, stamp = excluded.stamp, "
        "body = excluded.body, tokens = excluded.tokens, sentences = excluded.sentences, "
        "chunk_ids = excluded.chunk_ids, note = excluded.note, built_at = now() "
        "returning id",
        ["text", "bigint", "text", "text", "text", "int", "text", "bigint[]", "text"],
        [
            doc["workspace"],
            document_id,
            built["builder"],
            doc["sha256"],
            built["body"],
            built["tokens"],
            json.dumps(built["sentences"]),
            built["chunk_ids"],
            note,
        ],
    )[0]["id"]
    return _built(capsule_id, built, note)
