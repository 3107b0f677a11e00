"""Mark text charged for deferred subjects (stdlib only).

A chunk is charged for a subject when the document's frontmatter says so
(`charged: [subject]`), or when the subject or one of its aliases occurs near a
cue (a word like "funeral" or "died"). Near means in the same chunk, or in the
chunk and its document's title or path, which head every chunk: a note titled
"The funeral" that names Grandpa is charged where it names him. Each mark records
the rule that fired.

A chat message is charged the same way, where near means in the message or in the
message before or after it in its conversation (a cue in one message and the name
in the reply is how people talk), each message read with its sender's name and
the conversation's title.
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


def compile_cues(cues):
    """[(cue, pattern)] for the cue words."""
    return [(cue, _phrase(cue)) for cue in cues if cue.strip()]


def _marks(text, subjects, cue_patterns, frontmatter_charged):
    declared = {}
    for item in frontmatter_charged or []:
        name = str(item).strip()
        if name:
            declared[name.lower()] = name
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


def charged_marks(text, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one text; `subjects` as from compile_subjects."""
    return _marks(text, subjects, compile_cues(cues), frontmatter_charged)


def heading(title, path):
    """The text that heads every chunk of a document: its title and path, one a line."""
    return "\n".join(str(part) for part in (title, path) if part)


def chunk_marks(text, head, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one chunk read under its document's heading (see heading())."""
    return charged_marks(head + "\n" + text if head else text, subjects, cues, frontmatter_charged)


def message_marks(lines, subjects, cues, title=None):
    """[[{subject, rule}]] for the messages of one conversation, in order.

    `lines` are the messages as "sender: body". A message is charged for a subject when a
    name of it and a cue occur in the message together with the message before or after it
    (and the conversation's title): both messages of such a pair are marked.
    """
    if not subjects or not lines:
        return [[] for _ in lines]
    cue_patterns = compile_cues(cues)
    head = title + "\n" if title else ""
    if len(lines) == 1:
        pairs = [_marks(head + lines[0], subjects, cue_patterns, [])]
    else:
        pairs = [
            _marks(head + lines[i] + "\n" + lines[i + 1], subjects, cue_patterns, [])
            for i in range(len(lines) - 1)
        ]
    result = []
    for i in range(len(lines)):
        merged = {}
        for marks in pairs[max(0, i - 1) : i + 1]:
            for mark in marks:
                merged.setdefault(mark["subject"], mark)
        result.append(list(merged.values()))
    return result
