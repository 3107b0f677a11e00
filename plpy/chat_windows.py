"""Chat windows: a conversation cut into chunks of consecutive messages (stdlib only).

A conversation's transcript is one line per message, `YYYY-MM-DD HH:MM Sender: text`
(the local time in the setting chat.time_zone; `(undated)` for a message without a
time), joined by "\\n"; a body's own line breaks become continuation lines indented by
two spaces, so every unindented line starts a message. Messages come in order (dated
first by time, then undated, then by id). A session ends at a gap longer than
`gap_minutes` or a new local day; undated messages form a session of their own. A
window closes when the next message would make it longer than `max_chars` (a single
longer message is a window of its own); the next window of the same session starts with
the last `overlap` messages of the one before. A window never spans two sessions.
"""

import re

UNDATED = "(undated)"
# The head of a message line: its time and its sender (message_line writes it).
MESSAGE_HEAD = re.compile(r"^(?:\d{4}-\d\d-\d\d \d\d:\d\d|\(undated\)) (?P<sender>[^:\n]{1,80}): ", re.M)


def message_line(local, sender, body):
    """One message as transcript text: `local` is 'YYYY-MM-DD HH:MM' or None when undated."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    head = (local or UNDATED) + " " + sender + ": " + lines[0]
    return "\n".join([head] + ["  " + line for line in lines[1:]])


def window_senders(text):
    """The senders of a transcript's message lines, as written (none for other text)."""
    return {m["sender"].strip() for m in MESSAGE_HEAD.finditer(text)}


def sessions(messages, gap_minutes):
    """The messages split into sessions (lists of indexes into `messages`).

    A message is a dict with `epoch` (seconds, or None when undated) and `local`
    ('YYYY-MM-DD HH:MM' in the chat's time zone, or None).
    """
    result = []
    previous = None
    for i, m in enumerate(messages):
        if previous is None or (m["epoch"] is None) != (previous["epoch"] is None):
            new = True
        elif m["epoch"] is None:
            new = False
        else:
            new = (
                m["epoch"] - previous["epoch"] > gap_minutes * 60 or m["local"][:10] != previous["local"][:10]
            )
        if new:
            result.append([])
        result[-1].append(i)
        previous = m
    return result


def _size(window, lengths):
    """Characters of a window: its lines and the line breaks between them."""
    return sum(lengths[i] for i in window) + len(window) - 1


def _cut(session, lengths, max_chars, overlap):
    """The windows of one session (lists of indexes into the messages)."""
    windows = []
    current = []
    for i in session:
        if current and _size([*current, i], lengths) > max_chars:
            windows.append(current)
            # The last `overlap` messages again (never the whole window before), as many as fit.
            keep = min(overlap, len(current) - 1)
            current = current[len(current) - keep :] if keep > 0 else []
            while current and _size([*current, i], lengths) > max_chars:
                current = current[1:]
        current.append(i)
    if current:
        windows.append(current)
    return windows


def plan(messages, gap_minutes, max_chars, overlap):
    """{transcript_chars, transcript_bytes (UTF-8), windows}: each window {messages (indexes),
    message_ids, body, char_start, char_end}, where body = transcript[char_start:char_end]."""
    lines = [message_line(m["local"], m["sender"], m["body"]) for m in messages]
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    lengths = [len(line) for line in lines]
    windows = []
    for session in sessions(messages, gap_minutes):
        for window in _cut(session, lengths, max_chars, overlap):
            first, last = window[0], window[-1]
            windows.append(
                {
                    "messages": window,
                    "message_ids": [messages[i]["id"] for i in window],
                    "body": "\n".join(lines[i] for i in window),
                    "char_start": starts[first],
                    "char_end": starts[last] + lengths[last],
                }
            )
    return {
        "transcript_chars": max(offset - 1, 0),
        "transcript_bytes": max(sum(len(line.encode()) + 1 for line in lines) - 1, 0),
        "windows": windows,
    }


def window_marks(message_marks):
    """A window's deference marks: the union, by subject, of its messages' marks (in order)."""
    merged = {}
    for marks in message_marks:
        for mark in marks:
            merged.setdefault(mark["subject"], mark)
    return list(merged.values())
