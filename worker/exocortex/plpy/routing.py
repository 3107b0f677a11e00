"""Route a document to a workspace, with a confidence (stdlib only).

Authority order: a person's review (quarantine approve/reassign), frontmatter
`workspace`, a workspace forced for the whole source (`exo ingest --workspace`),
folder rules, then a keyword classifier whose confidence gates quarantine.
"""

import re

_WORD = re.compile(r"[a-z][a-z0-9']*")
MIN_HITS = 3


def _decision(workspace, method, confidence, reasons, candidates=()):
    return {
        "workspace": workspace,
        "method": method,
        "confidence": round(confidence, 3),
        "reasons": list(reasons),
        "candidates": list(candidates),
    }


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


def route(path, text, frontmatter, review, forced, workspaces, folder_rules, keywords, threshold):
    """The routing decision; workspace None means quarantine."""
    reasons = []
    if review and review.get("workspace") in workspaces:
        return _decision(review["workspace"], "review", 1.0, ["quarantine review: " + review["decision"]])
    declared = frontmatter.get("workspace")
    if declared is not None:
        declared = str(declared).strip().lower()
        if declared in workspaces:
            return _decision(declared, "frontmatter", 1.0, ["frontmatter workspace: " + declared])
        reasons.append("frontmatter workspace '" + declared + "' does not exist")
    if forced in workspaces:
        return _decision(forced, "forced", 1.0, [*reasons, "ingested with --workspace " + forced])
    folders = [part.lower() for part in path.split("/")[:-1]]
    for rule in folder_rules:
        if rule.get("folder", "").lower() in folders and rule.get("workspace") in workspaces:
            return _decision(rule["workspace"], "folder", 1.0, [*reasons, "folder '" + rule["folder"] + "'"])
    candidates = [c for c in classify(text, keywords) if c["workspace"] in workspaces]
    total = sum(c["score"] for c in candidates)
    if not candidates or candidates[0]["score"] == 0:
        return _decision(None, "classifier", 0.0, [*reasons, "no workspace keywords found"], candidates)
    best = candidates[0]
    # The winner's share of the evidence (+1 smoothing), scaled down while it rests
    # on fewer than MIN_HITS distinct words: two stray words are never confident.
    confidence = best["score"] / (total + 1.0) * min(1.0, len(best["hits"]) / MIN_HITS)
    why = "classifier: " + best["workspace"] + " (" + ", ".join(best["hits"][:8]) + ")"
    if confidence < threshold:
        reasons.append(why + " below threshold " + str(threshold))
        return _decision(None, "classifier", confidence, reasons, candidates)
    return _decision(best["workspace"], "classifier", confidence, [*reasons, why], candidates)
