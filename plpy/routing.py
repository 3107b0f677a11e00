"""Route a document to a workspace, with a confidence (stdlib only).

Authority order: a person's review (quarantine approve/reassign), frontmatter
`workspace`, a workspace forced for the whole source (`exo ingest --workspace`),
folder rules, then the content. The content is judged by the learned router (a
multinomial naive Bayes over words, trained on the documents already in the
workspaces) once at least two workspaces have enough documents, and by the keyword
lists before that. Either's confidence gates quarantine: the learned router's
confidence is its posterior, and below its threshold the document waits in
quarantine (the keyword lists are not asked then). Until the learned router can
judge, a document the keyword lists are unsure of goes to the default workspace
(routing.default_workspace, method "default") instead: a first ingest is
searchable without review. Frontmatter naming a workspace that does not exist
always waits in quarantine: the person said where it goes, and that place is
missing. A quarantined decision carries "doubt", a code for why
(unknown_workspace, learned_unsure, keywords_unsure, no_keywords), which
sql/520_documents.sql (exo_private.document_why) turns into words and a fix.

The router learns only from decisions it did not make itself: frontmatter, a
forced workspace, a folder rule, a person's review and a confident keyword route
train it; a learned route or a default one never does (sql/105_routing.sql,
router_training), so its mistakes and its guesses cannot feed on themselves.
"""

import json
import math
import re
from collections import Counter

_WORD = re.compile(r"[a-z][a-z0-9']*")
MIN_HITS = 3


def _decision(workspace, method, confidence, reasons, candidates=(), doubt=None):
    decision = {
        "workspace": workspace,
        "method": method,
        "confidence": round(confidence, 3),
        "reasons": list(reasons),
        "candidates": list(candidates),
    }
    if doubt is not None:  # quarantine: why, as a code
        decision["doubt"] = doubt
    return decision


def classify(text, keywords):
    """Candidates [{workspace, score, hits}] by distinct keyword hits, best first."""
    counts = {}
    for word in _WORD.findall(text.lower()):
        counts[word] = counts.get(word, 0) + 1
    candidates = []
    for workspace, words in sorted(keywords.items()):
        hits = sorted({w for w in words if w in counts})
        score = sum(1.0 + min(counts[w], 5) / 5.0 for w in hits)
        candidates.append({"workspace": workspace, "score": round(score, 3), "hits": hits})
    candidates.sort(key=lambda c: (-c["score"], c["workspace"]))
    return candidates


def router_terms(text, max_chars, term_cap):
    """A document's words as the learned router counts them: its first max_chars characters,
    lowercased, each word at most term_cap times (a long document cannot outvote the rest)."""
    counts = Counter(_WORD.findall(text[:max_chars].lower()))
    return {word: min(n, term_cap) for word, n in counts.items()}


def train_router(documents, vocabulary_size, max_chars, term_cap):
    """Naive Bayes counts from (workspace, text) pairs: {"classes": {workspace: {documents,
    terms}}, "terms": {term: {workspace: count}}}. The vocabulary is the vocabulary_size words
    found in most documents (at least two), so the model stays small."""
    document_frequency = Counter()
    per_workspace = {}
    documents_of = Counter()
    for workspace, text in documents:
        counts = router_terms(text, max_chars, term_cap)
        document_frequency.update(counts.keys())
        per_workspace.setdefault(workspace, Counter()).update(counts)
        documents_of[workspace] += 1
    ranked = sorted(
        (w for w, n in document_frequency.items() if n >= 2), key=lambda w: (-document_frequency[w], w)
    )
    vocabulary = ranked[:vocabulary_size]
    terms = {}
    for word in vocabulary:
        terms[word] = {ws: counts[word] for ws, counts in sorted(per_workspace.items()) if counts[word]}
    classes = {
        ws: {"documents": documents_of[ws], "terms": sum(counts[w] for w in vocabulary)}
        for ws, counts in sorted(per_workspace.items())
    }
    return {"classes": classes, "terms": terms}


def learned_candidates(text, model, workspaces):
    """Candidates [{workspace, score (the posterior), hits}] by the learned model, best first;
    None while fewer than two workspaces have model["min_documents"] documents to learn from."""
    classes = {
        ws: c
        for ws, c in model["classes"].items()
        if ws in workspaces and c["documents"] >= model["min_documents"]
    }
    if len(classes) < 2:
        return None
    terms = model["terms"]
    size = len(terms)
    counts = {
        w: n for w, n in router_terms(text, model["max_chars"], model["term_cap"]).items() if w in terms
    }
    total_documents = sum(c["documents"] for c in classes.values())
    scores = {}
    weights = {}
    for ws, c in classes.items():
        denominator = math.log(c["terms"] + size)
        weights[ws] = {w: math.log(terms[w].get(ws, 0) + 1) - denominator for w in counts}
        scores[ws] = math.log(c["documents"] / total_documents) + sum(
            n * weights[ws][w] for w, n in counts.items()
        )
    top = max(scores.values())
    exp = {ws: math.exp(s - top) for ws, s in scores.items()}
    norm = sum(exp.values())
    ranked = sorted(classes, key=lambda ws: (-scores[ws], ws))
    candidates = []
    for i, ws in enumerate(ranked):
        # The words that speak most for this workspace over the next best one (or the best).
        other = ranked[1] if i == 0 else ranked[0]
        lift = {w: n * (weights[ws][w] - weights[other][w]) for w, n in counts.items()}
        hits = sorted((w for w in lift if lift[w] > 0), key=lambda w: (-lift[w], w))[:8]
        candidates.append({"workspace": ws, "score": exp[ws] / norm, "hits": hits})
    return candidates


def load_router(plpy, SD):
    """The learned model as trained last (exo_private.train_router), cached in SD by its
    generation; None before the first training."""
    state = plpy.execute(
        "select generation, max_chars, term_cap from exo_private.router_state where generation is not null"
    )
    if not state:
        return None
    generation = state[0]["generation"]
    cached = SD.get("router")
    if cached is not None and cached["generation"] == generation:
        return cached
    classes = {
        r["workspace"]: {"documents": r["documents"], "terms": r["terms"]}
        for r in plpy.execute("select workspace, documents, terms from exo_private.router_classes")
    }
    terms = {}
    for r in plpy.execute("select term, workspace, count from exo_private.router_terms"):
        terms.setdefault(r["term"], {})[r["workspace"]] = r["count"]
    SD["router"] = {
        "generation": generation,
        "max_chars": state[0]["max_chars"],
        "term_cap": state[0]["term_cap"],
        "classes": classes,
        "terms": terms,
    }
    return SD["router"]


def _training_settings(plpy):
    rows = plpy.execute(
        "select key, value::text as value from exo_private.settings "
        "where key in ('routing.learned_vocabulary', 'routing.learned_max_chars', 'routing.learned_term_cap')"
    )
    settings = {r["key"]: json.loads(r["value"]) for r in rows}
    for key in ("routing.learned_vocabulary", "routing.learned_max_chars", "routing.learned_term_cap"):
        value = settings.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError("setting " + key + " must be a positive whole number, not " + repr(value))
    return settings


def refresh_router(plpy, force, min_change):
    """Train the learned router again when its training set (exo_private.router_training) or
    its counting settings changed since the last training, or when force. With min_change,
    only when the number of training documents changed by at least that share (an ingest's
    start: edits and reassignments wait for the scheduled training). Returns {trained,
    generation, documents, workspaces, terms}."""
    settings = _training_settings(plpy)
    state = plpy.execute(
        "select generation, fingerprint, documents from exo_private.router_state for update"
    )[0]
    now = plpy.execute(
        plpy.prepare(
            "select md5(coalesce(string_agg(t.id || ':' || t.workspace || ':' || t.sha256, ',' order by t.id), '')"
            " || $1) as fingerprint, count(*) as documents from exo_private.router_training t",
            ["text"],
        ),
        [json.dumps(settings, sort_keys=True)],
    )[0]
    seen = now["fingerprint"]
    small = abs(now["documents"] - state["documents"]) < min_change * max(state["documents"], 1)
    if not force and state["generation"] is not None and (state["fingerprint"] == seen or small):
        counts = plpy.execute(
            "select (select count(*) from exo_private.router_classes) as workspaces, "
            "(select count(*) from exo_private.router_terms) as terms, "
            "(select documents from exo_private.router_state) as documents"
        )[0]
        return {"trained": False, "generation": state["generation"], **counts}
    max_chars = settings["routing.learned_max_chars"]
    cursor = plpy.cursor(
        plpy.prepare(
            "select t.workspace, left(c.body, $1) as body from exo_private.router_training t "
            "join exo_private.text_cache c on c.sha256 = t.sha256",
            ["int"],
        ),
        [max_chars],
    )

    def documents():
        while batch := cursor.fetch(500):
            for row in batch:
                yield row["workspace"], row["body"]

    model = train_router(
        documents(), settings["routing.learned_vocabulary"], max_chars, settings["routing.learned_term_cap"]
    )
    plpy.execute("delete from exo_private.router_terms")
    plpy.execute("delete from exo_private.router_classes")
    classes = sorted(model["classes"].items())
    plpy.execute(
        plpy.prepare(
            "insert into exo_private.router_classes (workspace, documents, terms) "
            "select * from unnest($1::text[], $2::int[], $3::bigint[])",
            ["text[]", "int[]", "bigint[]"],
        ),
        [[ws for ws, _ in classes], [c["documents"] for _, c in classes], [c["terms"] for _, c in classes]],
    )
    rows = [(term, ws, n) for term, by in model["terms"].items() for ws, n in by.items()]
    plpy.execute(
        plpy.prepare(
            "insert into exo_private.router_terms (term, workspace, count) "
            "select * from unnest($1::text[], $2::text[], $3::int[])",
            ["text[]", "text[]", "int[]"],
        ),
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
    )
    documents_trained = sum(c["documents"] for _, c in classes)
    generation = plpy.execute(
        plpy.prepare(
            "update exo_private.router_state set generation = coalesce(generation, 0) + 1, fingerprint = $1, "
            "documents = $2, max_chars = $3, term_cap = $4, trained_at = now() returning generation",
            ["text", "int", "int", "int"],
        ),
        [seen, documents_trained, max_chars, settings["routing.learned_term_cap"]],
    )[0]["generation"]
    return {
        "trained": True,
        "generation": generation,
        "documents": documents_trained,
        "workspaces": len(classes),
        "terms": len(model["terms"]),
    }


def route(
    path,
    text,
    frontmatter,
    review,
    forced,
    workspaces,
    folder_rules,
    keywords,
    threshold,
    model=None,
    default=None,
):
    """The routing decision; workspace None means quarantine. model: the learned router
    (load_router) with its "threshold" and "min_documents" settings, or None. default: the
    workspace for what the keyword lists are unsure of while the learned router cannot judge
    (routing.default_workspace), or None to quarantine it."""
    reasons = []
    if review and review.get("workspace") in workspaces:
        return _decision(review["workspace"], "review", 1.0, ["quarantine review: " + review["decision"]])
    declared = frontmatter.get("workspace")
    declared = "" if declared is None else str(declared).strip().lower()
    if declared:
        if declared in workspaces:
            return _decision(declared, "frontmatter", 1.0, ["frontmatter workspace: " + declared])
        # The person said where it goes and that place is missing: a person decides, no rule.
        why = "frontmatter workspace '" + declared + "' does not exist"
        return _decision(None, "frontmatter", 0.0, [why], doubt="unknown_workspace")
    if forced in workspaces:
        return _decision(forced, "forced", 1.0, ["ingested with --workspace " + forced])
    folders = [part.lower() for part in path.split("/")[:-1]]
    for rule in folder_rules:
        if rule.get("folder", "").lower() in folders and rule.get("workspace") in workspaces:
            return _decision(rule["workspace"], "folder", 1.0, ["folder '" + rule["folder"] + "'"])
    learned = learned_candidates(text, model, workspaces) if model else None
    if learned is not None:
        best = learned[0]
        why = "learned: " + best["workspace"] + " (" + ", ".join(best["hits"]) + ")"
        shown = [{**c, "score": round(c["score"], 4)} for c in learned]
        if best["score"] < model["threshold"]:
            reasons.append(why + " below threshold " + str(model["threshold"]))
            return _decision(None, "learned", best["score"], reasons, shown, doubt="learned_unsure")
        return _decision(best["workspace"], "learned", best["score"], [*reasons, why], shown)
    candidates = [c for c in classify(text, keywords) if c["workspace"] in workspaces]
    total = sum(c["score"] for c in candidates)
    if not candidates or candidates[0]["score"] == 0:
        confidence, doubt = 0.0, "no_keywords"
        reasons.append("no workspace keywords found")
    else:
        best = candidates[0]
        # The winner's share of the evidence (+1 smoothing), scaled down while it rests
        # on fewer than MIN_HITS distinct words: two stray words are never confident.
        confidence = best["score"] / (total + 1.0) * min(1.0, len(best["hits"]) / MIN_HITS)
        why = "classifier: " + best["workspace"] + " (" + ", ".join(best["hits"][:8]) + ")"
        if confidence >= threshold:
            return _decision(best["workspace"], "classifier", confidence, [*reasons, why], candidates)
        doubt = "keywords_unsure"
        reasons.append(why + " below threshold " + str(threshold))
    if default is not None:
        if default in workspaces:
            # The learned router cannot judge yet (else it would have): no review needed.
            reasons.append("the router has not been trained yet: the default workspace " + default)
            return _decision(default, "default", confidence, reasons, candidates)
        reasons.append(
            "the default workspace '" + str(default) + "' does not exist (routing.default_workspace)"
        )
    return _decision(None, "classifier", confidence, reasons, candidates, doubt=doubt)
