"""Mark text charged for deferred subjects (stdlib only).

A chunk is charged for a subject when the document's frontmatter says so
(`charged: [subject]`), or when the subject or one of its aliases occurs near a
cue (a word like "funeral" or "died"). Near means in the same chunk, or in the
chunk and its document's heading: its title, its path and its frontmatter's
fields, which head every chunk. A note titled "The funeral" that names Grandpa is
charged where it names him; a note whose frontmatter says `died: ...` of
`subject: Walter Rivera` is charged throughout. Each mark records the rule that fired.

A document is read as a whole too (document_marks), the way people write about
someone: a document whose title or a frontmatter value is the subject's name or an
alias is about the subject, every chunk of it; in a document with a chunk charged
for a subject, another chunk is charged when it names any part of the subject's
names ("Mr. Walter") or, right after a charged chunk, refers to someone as he or
she (a chain of pronouns). Over-withholding is the safe direction.

A chat message is charged the same way, where near means in the message or in the
message before or after it in its conversation (a cue in one message and the name
in the reply is how people talk), each message read with its sender's name and
the conversation's title.
"""

import json
import re

DEFERENCE_CUES = "select value::text as v from exo_private.settings where key = 'deference.cues'"
DEFERENCE_LIST = "select exo_private.deference_list()::text as v"


def deference_rules(plpy):
    """(subjects, cues): the deferred subjects (compile_subjects) and the cue words (the setting
    deference.cues), read inside the database (mark_messages, remark_charged)."""
    cues = json.loads(plpy.execute(DEFERENCE_CUES)[0]["v"])
    subjects = compile_subjects(json.loads(plpy.execute(DEFERENCE_LIST)[0]["v"]))
    return subjects, cues


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


def _field_text(value):
    if isinstance(value, (list, tuple)):
        return ", ".join(_field_text(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_field_text(v)}" for k, v in value.items())
    return str(value)


def heading(title, path, frontmatter=None):
    """The text that heads every chunk of a document: its title, its path and its frontmatter's
    fields ("key: value"), one a line."""
    fields = [f"{key}: {_field_text(value)}" for key, value in (frontmatter or {}).items()]
    return "\n".join(str(part) for part in (title, path, *fields) if part)


def chunk_marks(text, head, subjects, cues, frontmatter_charged):
    """[{subject, rule}] for one chunk read under its document's heading (see heading())."""
    return charged_marks(head + "\n" + text if head else text, subjects, cues, frontmatter_charged)


#: A third person singular, which continues talk of someone named just before.
_PRONOUN = re.compile(r"(?<!\w)(he|him|his|himself|she|her|hers|herself)(?!\w)", re.I)


def _same(a, b):
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def _values(frontmatter):
    for value in (frontmatter or {}).values():
        yield from (value if isinstance(value, (list, tuple)) else [value])


def document_marks(texts, title, path, frontmatter, subjects, cues):
    """[[{subject, rule}]] for the chunks of one document, in order (texts: their bodies).

    Each chunk by chunk_marks under the document's heading; then, by subject: every chunk when
    the title or a frontmatter value is one of its names; where a chunk is charged for it, every
    other chunk that names a word of its names, and each chunk right after a charged one that
    says he or she, and so on down the document."""
    frontmatter = frontmatter if isinstance(frontmatter, dict) else {}
    declared = frontmatter.get("charged") or []
    if isinstance(declared, str):
        declared = [declared]
    head = heading(title, path, frontmatter)
    cue_patterns = compile_cues(cues)
    marks = [_marks(head + "\n" + t if head else t, subjects, cue_patterns, declared) for t in texts]
    for subject, names in subjects:
        about = next(
            (f"about: {v!r} is its name" for v in [title, *_values(frontmatter)]
             for n, _p in names if v is not None and _same(v, n)),
            None,
        )  # fmt: skip
        charged = [any(m["subject"] == subject for m in chunk) for chunk in marks]
        if about is None and not any(charged):
            continue
        parts = {w for n, _p in names for w in n.split() if len(w) > 1}
        part_patterns = [(w, _phrase(w)) for w in sorted(parts)]
        for i, text in enumerate(texts):
            if charged[i]:
                continue
            part = next((w for w, p in part_patterns if p.search(text)), None)
            if about is not None:
                rule = about
            elif part is not None:
                rule = f"names '{part}' in a document charged for it"
            elif i > 0 and charged[i - 1] and _PRONOUN.search(text):
                rule = "he or she right after a chunk charged for it"
            else:
                continue
            marks[i].append({"subject": subject, "rule": rule})
            charged[i] = True
    return marks


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
