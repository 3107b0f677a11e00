"""exo_private.retrieve: the whole search, as plain Python over a `plpy` object (stdlib only).

The function's body is `# exo:include retrieve` and a call of run(plpy, SD, GD, ...); the
unit tests pass a small fake plpy. In order: the question is read (query_analysis), the
query's embedding is asked for (query_embedding), the stages run per workspace
with the archive fallback (stages), withheld material becomes hints, the merged pool is
reranked (reranking) and the first k are the results; for a question of the present, passages
that name a value the first ones state follow as "later" (successors). Returns {results, later,
report} as JSON text.
"""

import datetime
import json
import time

from changes import asks_now, stated, states_asked
from meaning import session_meaning
from months import MONTHS
from query_analysis import Question, active_model, choose_workspaces, elapsed_ms, load_settings
from query_embedding import QueryEmbedding
from reranking import RerankPool, add_message_similarity, rerank_relevance
from search import (
    COMMON_WORD_CHUNKS,
    MAX_INPUT_CHARS,
    answer_check,
    answer_words,
    asked_phrase,
    asks_present,
    chat_messages,
    citation,
    deterministic_relevance,
    document_sentences,
    hints,
    inverted_subject,
    named_days,
    other_conversations,
    rank,
    released,
    said,
    searched_text,
    stem,
    stems,
    written_names,
)
from stages import StageSearch, search_with_fallback

# At most this many values (names, quantities) a packet's lines state are looked up for lines
# that changed them.
SUCCESSOR_VALUES = 3


class Statements:
    """The session's prepared statements (plpython's SD), by key; prepared on first use."""

    def __init__(self, plpy, SD):
        self.plpy = plpy
        self.plans = SD.setdefault("plans", {})

    def cached(self, key, make):
        if key not in self.plans:
            self.plans[key] = make()
        return self.plans[key]

    def run(self, key, text, types, args):
        """Execute `text`, prepared once per session under key and text (a stage's text differs
        with whether the search releases anything)."""
        return self.plpy.execute(self.cached((key, text), lambda: self.plpy.prepare(text, types)), args)


def withheld_hints(db, q, chosen):
    """One hint per (subject, workspace searched) with charged chunks the search leaves withheld:
    how to reach it, never its text, and the same whatever the question's words."""
    by_time = (
        "name the time you mean" if q.time_releases else "name it in a question that names the time you mean"
    )

    def how(subject):
        asked = db.run("hint_how", "select exo_private.hint_how($1) as h", ["text"], [subject])[0]["h"]
        return (
            "To include it, "
            + asked
            + " (and open_archive => true for archival material), or "
            + by_time
            + "."
        )

    counts = {
        (r["subject"], r["workspace"]): r["n"]
        for r in db.run(
            "charged_counts",
            "select * from exo_private.charged_counts($1)",
            ["text[]"],
            [chosen],
        )
    }
    return hints(counts, q.care.withheld, how)


def pool_candidates(search, pools):
    """The merged pool: every workspace's hits with their chunk and document (and, for a chat
    chunk, its conversation, senders, first time and messages), by chunk id."""
    return hit_candidates(
        search,
        [
            dict(h, lexical=None if p.lexical is None else p.lexical.get(h["chunk_id"], 0.0))
            for p in pools
            for h in p.hits
        ],
    )


def hit_candidates(search, hits):
    """Candidates of hits (Pool.admit's shape), each with its chunk and document, by chunk id."""
    by_id = {h["chunk_id"]: h for h in hits}
    candidates = []
    for d in search.fetch_details(hits):
        written = datetime.date.fromisoformat(d["written_at"]) if d["written_at"] else None
        candidates.append(
            dict(
                by_id[d["chunk_id"]],
                document_id=d["document_id"],
                ordinal=d["ordinal"],
                body=d["body"],
                band=d["band"],
                written_at=d["written_at"],
                written_ordinal=written.toordinal() if written else None,
                written_year=written.year if written else None,
                path=d["path"],
                title=d["title"],
                document_title=d["document_title"],
                canonical=d["canonical"],
                chat=json.loads(d["chat"]) if d["chat"] else None,
                coverage=d["coverage"],
            )
        )
    candidates.sort(key=lambda c: c["chunk_id"])
    return candidates


def successors(search, first, bands, known):
    """Candidates that mention a name or a quantity with its unit that the first
    packet.max_chunks of `first` (the ranked candidates) state, found by BM25
    in `bands`, none of `known` chunk ids: for a question of the present, the line that changed a
    value often names the old one and none of the question's words ("Settled in York after the
    move from Leeds" after "I live in Leeds"; "Going for 21 km instead of 10 km" after "I'm
    training for 10 km"). They are returned beside the results ("later"), scored 0: the packet
    cites one only where changes.order_changes finds it newer than a line it cites and telling
    another value of it."""
    words = search.q.terms
    cited = first[: search.settings["packet.max_chunks"]]
    told = [stated(c, words, set(words)) for c in cited]
    # a quantity only where no line states a value with a word of the question: beside "My rent
    # is £1,150 a month", "I get 20 GB a month" is no line whose changes answer "What do I pay in
    # rent each month?"
    asked = {stem(w) for w in words if len(w) >= 3}
    quantities = not any(f["values"] and f["about"] & asked for f in told)
    values = []
    for c, f in zip(cited, told, strict=True):
        # in the line's order (a set's order varies by process); a month is a date, not a value
        for kind, value in sorted(f["values"], key=lambda kv: (c["body"].find(kv[1]), kv[1])):
            if kind.startswith("number ") and quantities:
                value = f"{value} {kind[7:]}"  # "10 km": a count alone ("3") matches anything
            elif not kind.startswith("name") or value.casefold() in MONTHS:
                continue
            if value not in values:
                values.append(value)
    if not values:
        return []
    hits = search.value_mentions(values[:SUCCESSOR_VALUES], bands, set(known))
    return [dict(c, relevance=0.0, score=0.0) for c in hit_candidates(search, hits)]


def personal_setup(db, profile, chosen, report):
    """The personal stage's {settings, saved: {workspace: [document ids]}} for a profile (an
    unknown one is refused), or None when it saved nothing in the chosen workspaces; starts
    report["personal"]."""
    personal = json.loads(
        db.run(
            "kb_personal",
            "select exo_private.kb_personal($1, $2)::text as p",
            ["text", "text[]"],
            [profile, chosen],
        )[0]["p"]
    )
    saved = sum(len(ids) for ids in personal["saved"].values())
    report["personal"] = {"profile": profile, "saved": saved, "mode": None, "checked": [], "hits": []}
    if not saved:
        report["personal"]["mode"] = "skipped: nothing claimed or pinned in the workspaces searched"
        return None
    return personal


def add_result_message_reading(db, query, results, embedding, model, report):
    """What the excerpt of a chat result reads of each message: its similarity to the query
    (reranking.add_message_similarity, where the rerank did not ask it; none without a query
    vector) and whether it states a value of the kind the question asks for (states_asked)."""
    chats = [c for c in results if c["chat"]]
    vector = embedding.vector(report) if chats and model["id"] is not None else None
    if vector is not None:
        add_message_similarity(db, chats, vector, model["id"])
    for c in chats:
        told = states_asked(query, [said(m) for m in chat_messages(c["body"])])
        if told is not None:
            c["chat"] = dict(c["chat"], states_asked=told)


def nearest_sentence(question, words, candidates, embedding, settings, report, SD, GD):
    """The greatest similarity in meaning to the question of a sentence of the `candidates` that
    holds one of its `words` (search.document_sentences, embedded in one call and kept for the
    session), or None: a chat window or a record among them, no such sentence, no query vector,
    or the endpoint failing or over the session's budget; none without stored vectors (no
    embedding model in use). It never waits for the query's vector: where nothing in the search
    needed it (no semantic stage, a rerank by the words alone), its request is still in flight
    and the rule is left out."""
    if embedding.model["id"] is None or embedding.in_flight():
        return None
    sentences = document_sentences(candidates, words)
    if not sentences or embedding.vector(report) is None:
        return None
    t = time.monotonic()
    similarities = session_meaning(settings, GD, SD.setdefault("sentence_vectors", {}))(question, sentences)
    report["timings_ms"]["embed_sentences"] = elapsed_ms(t)
    return max(similarities) if similarities else None


def result_row(n, c):
    """One result: what exo.search shows, the chat details of a chat chunk (the packet's citation
    and excerpt), the title BM25 read with it (document_title: a conversation's own, none where
    its export gave none; what its lines are about, plpy/changes.py) and the charged subjects the
    packet's provenance names."""
    return {
        "rank": n,
        "chunk_id": c["chunk_id"],
        "document_id": c["document_id"],
        "ordinal": c["ordinal"],
        "workspace": c["workspace"],
        "path": c["path"],
        "title": c["title"],
        "document_title": c["document_title"],
        "band": c["band"],
        "written_at": c["written_at"],
        "canonical": c["canonical"],
        "chat": c["chat"],
        "stage": c["stage"],
        "detail": c.get("detail"),
        "score": c["score"],
        "relevance": c["relevance"],
        "citation": citation(c),
        "body": c["body"],
        "charged": c["charged"],
        # a window of a conversation without the person asked about: no change mark compares it
        "other_conversation": bool(c.get("other_conversation")),
    }


def run(
    plpy,
    SD,
    GD,
    query,
    workspaces,
    k,
    per_workspace,
    open_archive,
    bridge,
    as_of,
    query_embedding,
    profile=None,
):
    """{results, later, report} of one search as JSON text (arguments checked by
    exo_private.check_search_arguments). SD holds the session's prepared statements, GD the
    session's model budgets. With a profile, the personal stage runs first in each workspace
    over the user's saved documents (report["personal"])."""
    began = time.monotonic()
    db = Statements(plpy, SD)
    settings = load_settings(db)
    chosen = choose_workspaces(db, workspaces)
    # No more of the query than MAX_INPUT_CHARS is read anywhere: a huge query costs no more
    # than a long one.
    q = Question(query[:MAX_INPUT_CHARS], as_of)
    report = {
        "query": q.text[:200],
        "as_of": q.as_of_day,
        "bridge": list(bridge or []),
        "workspaces": {},
        "degradations": [],
        "timings_ms": {},
    }
    timings = report["timings_ms"]
    if len(query) > MAX_INPUT_CHARS:
        report["query_truncated"] = {"chars": len(query), "read": MAX_INPUT_CHARS}

    model = active_model(db)
    embedding = QueryEmbedding(q.text, query_embedding, model, settings, GD)
    try:
        t = time.monotonic()
        q.read_time(db, open_archive)
        timings["temporal"] = elapsed_ms(t)
        report["temporal"] = q.temporal_report()
        q.read_care(db, bridge, settings)
        t = time.monotonic()
        q.read_material(db, chosen, settings["retrieval.graph"]["max_entities"])
        timings["query_analysis"] = elapsed_ms(t)
        report["recognised"] = q.recognised_report()

        t = time.monotonic()
        search = StageSearch(plpy, db, q, chosen, per_workspace, settings, model, embedding, report)
        if profile is not None:
            search.personal = personal_setup(db, profile, chosen, report)
        pools, bands, opened = search_with_fallback(search, open_archive)
        timings["stages"] = elapsed_ms(t)
        # held by too many passages to be confident of any (StageSearch.exact_rows)
        report["recognised"]["common_identifiers"] = sorted(search.common_idents)
        report["bands"] = list(bands)
        report["archive"] = {
            "open": q.archive_open or opened is not None,
            "why": opened or q.archive_why,
            "fallback": opened is not None,
        }
        if profile is not None:  # the fallback ran the stages twice: each document once
            for key in ("checked", "hits"):
                report["personal"][key] = sorted(set(report["personal"][key]))
        for pool in pools:
            ran = [s["stage"] for s in pool.stages if s.get("ran")]
            report["workspaces"][pool.workspace] = {
                "candidates": len(pool.hits),
                "confident": pool.confident,
                "stopped_after": ran[-1] if ran else None,
                "stages": pool.stages,
            }
        report["hints"] = withheld_hints(db, q, chosen)

        t = time.monotonic()
        candidates = pool_candidates(search, pools)
        timings["pool"] = elapsed_ms(t)

        weights = settings["retrieval.rank_weights"]
        years = q.signal["years"]
        recency = not report["archive"]["open"]  # an open archive is not a place to prefer the new
        present = recency and not years and asks_present(q.text)
        report["temporal"]["asks_present"] = present
        today = q.today.toordinal()
        days = named_days(q.span)
        elsewhere = other_conversations(candidates, q.text)
        for c in candidates:
            c["other_conversation"] = c["chunk_id"] in elsewhere
        deterministic = {c["chunk_id"]: deterministic_relevance(c, weights) for c in candidates}
        incoming = [
            c["chunk_id"]
            for c in rank(candidates, deterministic, weights, today, years, recency, present, days)
        ]
        t = time.monotonic()
        pool = RerankPool(
            db, candidates, incoming, deterministic, settings, q.text, model, embedding, report, GD
        )
        relevance, backend, attempts = rerank_relevance(pool)
        ranked = rank(candidates, relevance, weights, today, years, recency, present, days)
        asked = answer_words(asked_phrase(q.text), q.entities)  # lower-case words
        subject = inverted_subject(q.text)
        report["answer"] = answer_check(
            ranked[:k],
            pool.similarity,
            settings["packet.answer_close_similarity"],
            lambda: search.word_uses(
                list(dict.fromkeys(answer_words(q.terms, q.entities) + asked)), COMMON_WORD_CHUNKS
            ),
            asked,
            search.held_together,
            names_known=any(q.entities.values()),
            far=settings["packet.answer_far_similarity"],
            names_written=bool(written_names(q.text)),
            sentence_far=settings["packet.answer_far_sentence_similarity"],
            nearest_sentence=lambda words: nearest_sentence(
                q.text, words, ranked[: settings["packet.max_chunks"]], embedding, settings, report, SD, GD
            ),
            # a name the search recognised is known; a word a candidate holds is used, unasked
            subject=subject if subject in answer_words(q.terms, q.entities) else None,
            used=lambda word: (
                any(word[:5] in stems(searched_text(c)) for c in ranked)
                or search.word_uses([word], 1)[word] > 0
            ),
        )
        timings["rerank"] = elapsed_ms(t)
        report["rerank"] = {"backend": backend, "attempts": attempts, "pool": len(candidates)}
        later = []
        if asks_now(q.text, report):  # beside the results: the pool is the same whatever reranks
            t = time.monotonic()
            later = successors(search, ranked, bands, {c["chunk_id"] for c in candidates})
            elsewhere = other_conversations(candidates + later, q.text)
            for c in later:
                c["other_conversation"] = c["chunk_id"] in elsewhere
            timings["successors"] = elapsed_ms(t)
        add_result_message_reading(db, q.text, ranked[:k], embedding, model, report)
    finally:
        embedding.close()

    results = [result_row(n, c) for n, c in enumerate(ranked[:k], 1)]
    # beside the results, for the packet alone (exo.search shows what was ranked)
    later_rows = [result_row(len(results) + n, c) for n, c in enumerate(later, 1)]
    report["returned"] = len(results)
    report["released"] = released(ranked[:k], q.care.why_released)
    timings["total"] = elapsed_ms(began)
    return json.dumps({"results": results, "later": later_rows, "report": report})
