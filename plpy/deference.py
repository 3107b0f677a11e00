"""Mark text charged for deferred subjects (stdlib only).

A chunk is charged for a subject when the document's frontmatter says so
(`charged: [subject]`), or when the subject or one of its aliases occurs in the
chunk together with a cue (a word like "funeral" or "died"). Each mark records
the rule that fired.
"""

import re


def _phrase(words):
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words.split()) + r"(?!\w)", re.I)


def compile_subjects(subjects):
    """[(subject, [name patterns])] for [{"subject", "aliases"}]."""
    return [
        (
            s["subject"],
            [(name, _phrase(name)) for name in [s["subject"], *s.get("aliases", [])] if name.strip()],
        )
        for s in subjects
    ]


def charged_marks(text, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one chunk; `subjects` as from compile_subjects."""
    declared = {}
    for item in frontmatter_charged or []:
        name = str(item).strip()
        if name:
            declared[name.lower()] = name
    cue_patterns = [(cue, _phrase(cue)) for cue in cues if cue.strip()]
    marks = []
    for subject, names in subjects:
        named = [n.lower() for n, _p in names]
        if any(n in declared for n in named):
            for n in named:
                declared.pop(n, None)
            marks.append({"subject": subject, "rule": "frontmatter"})
            continue
        name_hit = next((n for n, p in names if p.search(text)), None)
        if name_hit is None:
            continue
        cue_hit = next((c for c, p in cue_patterns if p.search(text)), None)
        if cue_hit is not None:
            marks.append({"subject": subject, "rule": "cue '" + cue_hit + "' with '" + name_hit + "'"})
    # Subjects charged by frontmatter that are not (yet) on the deference list.
    marks.extend({"subject": name, "rule": "frontmatter"} for name in sorted(declared.values()))
    return marks
