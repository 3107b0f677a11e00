"""Split text into chunks at paragraph boundaries (stdlib only).

Used for retrieval chunks (about 1,200 characters) and for the graph worker's
extraction windows (6,000 characters, 400 overlap). Returns character spans;
utf8_spans turns them into offsets on the UTF-8 text, so the database cuts
each piece from the encoded text in time linear in the piece (substr on text
walks every character before the start, which made a document cost the square
of its size). Every function here is linear in the length of the text.
"""

import re

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _paragraph_spans(text):
    spans = []
    start = 0
    for m in _PARAGRAPH_BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [_trim(text, s, e) for s, e in spans if text[s:e].strip()]


def _trim(text, start, end):
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end)


def _split_long(text, start, end, size):
    """Cut a paragraph longer than size at sentence ends, else at whitespace, else hard."""
    pieces = []
    while end - start > size:
        limit = start + size
        cut = None
        for m in _SENTENCE_END.finditer(text, start, limit):
            if m.start() > start:
                cut = m.start()
        if cut is None:
            space = text.rfind(" ", start + 1, limit)
            cut = space if space > start else limit
        pieces.append(_trim(text, start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return [p for p in pieces if p[1] > p[0]]


def split_text(text, size, overlap):
    """Spans (start, end) of chunks of at most `size` characters.

    Chunks hold whole paragraphs where they fit; a paragraph longer than `size`
    is cut at sentence ends. Trailing pieces of a chunk whose total length is at
    most `overlap` are repeated at the start of the next chunk."""
    if size <= 0:
        raise ValueError("size must be positive")
    pieces = []
    for start, end in _paragraph_spans(text):
        if end - start > size:
            pieces.extend(_split_long(text, start, end, size))
        else:
            pieces.append((start, end))
    chunks = []
    current = []
    for piece in pieces:
        if current and piece[1] - current[0][0] > size:
            chunks.append((current[0][0], current[-1][1]))
            carried = []
            for prev in reversed(current):
                if current[-1][1] - prev[0] > overlap or piece[1] - prev[0] > size:
                    break
                carried.insert(0, prev)
            current = carried
        current.append(piece)
    if current:
        chunks.append((current[0][0], current[-1][1]))
    return chunks


def utf8_spans(text, spans):
    """The same spans as byte offsets into text's UTF-8 encoding, in one pass over the text."""
    if text.isascii():
        return list(spans)
    offsets = {}
    done = size = 0
    for position in sorted({p for span in spans for p in span}):
        size += len(text[done:position].encode("utf-8"))
        offsets[position] = size
        done = position
    return [(offsets[start], offsets[end]) for start, end in spans]
