"""Chat history importers: generic JSONL, ChatGPT `conversations.json`, WhatsApp text exports,
and mail archives (mbox: each thread a conversation, each message its sender's).

Structured, no model. An import parses the whole file first into records
(parse_export), so a malformed file fails before anything is written; then, in one
transaction, it reads which of the export's messages are already stored (the dedupe keys of
its conversations) and writes only the others, with their identities, conversations and
participants, by `insert ... on conflict do nothing` (a concurrent import of the same export
may have written them since), so re-importing the same export writes nothing and costs little
more than reading it. It sets the new messages' deference marks in the same transaction (a
deferred subject near a cue, exo_private.mark_messages), then cuts every conversation that
gained messages into windows, chunks of its conversation document in the chosen workspace
(exo_private.window_conversation). A message's identity is the source's message id where
it has one (ChatGPT node ids, JSONL "message_id"), else a sha256 over its raw
values (conversation id, sender, timestamp string, text). The owner's identities
in every source (JSONL "is_owner", the ChatGPT "user" role, names given as
owner_names) link to the one owner person. The formats are described in
docs/chat-formats.md.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import hashlib
import json
import mailbox
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from exocortex.db import transaction
from exocortex.ingest.extract import message_text, thread_ids

FORMATS = ("jsonl", "chatgpt", "whatsapp", "mbox")

#: to_tsvector refuses strings whose lexemes pass 1 MiB; longer bodies are refused while parsing.
MAX_BODY_BYTES = 1_000_000

JSONL_SOURCE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ChatImportError(Exception):
    """The export could not be imported; the message names the file, the line or record, and why."""


@dataclass
class ChatImportResult:
    conversations_added: int
    messages_added: int
    messages_seen: int
    identities_added: int
    windows_added: int


# --- parsed records ----------------------------------------------------------------------------


@dataclass
class _Identity:
    source: str
    handle: str
    display_name: str | None
    is_owner: bool = False


@dataclass
class _Conversation:
    source: str
    external_id: str
    title: str | None
    started_at: datetime | None


@dataclass(frozen=True)
class _Message:
    source: str
    conversation: str
    handle: str
    external_id: str | None
    dedupe_key: str
    sent_at: datetime | None
    body: str


@dataclass
class ChatExport:
    """Everything one file holds, ready to write."""

    owner_names: frozenset[str]
    conversations: dict[tuple[str, str], _Conversation] = field(default_factory=dict)
    identities: dict[tuple[str, str], _Identity] = field(default_factory=dict)
    messages: list[_Message] = field(default_factory=list)
    _by_key: dict[tuple[str, str, str], _Message] = field(default_factory=dict)
    _occurrences: dict[tuple[str, ...], int] = field(default_factory=dict)

    def conversation(
        self, source: str, external_id: str, title: str | None, started_at: datetime | None = None
    ) -> None:
        conv = self.conversations.get((source, external_id))
        if conv is None:
            self.conversations[(source, external_id)] = _Conversation(
                source, _clean(external_id), _clean_or_none(title), started_at
            )
            return
        if conv.title is None and title is not None:
            conv.title = _clean(title)
        if started_at is not None and (conv.started_at is None or started_at < conv.started_at):
            conv.started_at = started_at

    def message(
        self,
        where: str,
        *,
        source: str,
        conversation: str,
        handle: str,
        display_name: str | None,
        is_owner: bool,
        external_id: str | None,
        raw_time: str,
        sent_at: datetime | None,
        body: str,
    ) -> None:
        """Record one message; `where` names it in errors ("line 12", "conversation 'x', node 'y'")."""
        if not body.strip():
            return
        if len(body.encode()) > MAX_BODY_BYTES:
            raise ChatImportError(
                f"{where}: the message text is longer than {MAX_BODY_BYTES} bytes, too long to index"
            )
        ident = self.identities.get((source, handle))
        if ident is None:
            ident = self.identities[(source, handle)] = _Identity(
                source, _clean(handle), _clean_or_none(display_name)
            )
        if is_owner or _fold(handle) in self.owner_names or _fold(display_name) in self.owner_names:
            ident.is_owner = True
        self.conversation(source, conversation, None, sent_at)

        if external_id is not None:
            dedupe_key = f"id:{external_id}"
        else:
            # The nth identical message (same sender, same minute, same text) is a message too.
            raw = (conversation, handle, raw_time, body)
            n = self._occurrences.get((source, *raw), 0)
            self._occurrences[(source, *raw)] = n + 1
            values = [*raw, n] if n else list(raw)
            dedupe_key = "sha256:" + hashlib.sha256(json.dumps(values).encode()).hexdigest()

        message = _Message(
            source, _clean(conversation), _clean(handle), external_id, dedupe_key, sent_at, _clean(body)
        )
        seen = self._by_key.get((source, conversation, dedupe_key))
        if seen is not None:
            if (seen.handle, seen.sent_at, seen.body) != (message.handle, message.sent_at, message.body):
                raise ChatImportError(
                    f"{where}: message id {external_id!r} appears twice in conversation "
                    f"{conversation!r} with different content"
                )
            return
        self._by_key[(source, conversation, dedupe_key)] = message
        self.messages.append(message)


def _clean(text: str) -> str:
    """PostgreSQL text cannot hold NUL characters."""
    return text.replace("\x00", "")


def _clean_or_none(text: str | None) -> str | None:
    return None if text is None else _clean(text)


def _fold(name: str | None) -> str:
    return " ".join(name.split()).casefold() if name else ""


# --- reading files -----------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ChatImportError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ChatImportError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _lines(text: str) -> list[str]:
    """Lines split on \\n only: U+2028 and friends may sit inside a message."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _epoch(value: Any, what: str, where: str) -> datetime | None:
    if value is None:
        return None
    if not _is_number(value):
        raise ChatImportError(f"{where}: {what} must be a number of seconds since 1970, got {value!r}")
    try:
        return datetime.fromtimestamp(value, UTC)
    except (ValueError, OverflowError, OSError):
        raise ChatImportError(f"{where}: {what} {value!r} is not a valid time") from None


# --- generic JSONL -----------------------------------------------------------------------------


def _parse_jsonl(path: Path, export: ChatExport) -> None:
    for number, line in enumerate(_lines(_read_text(path)), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ChatImportError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise ChatImportError(f"{where}: expected a JSON object, got {type(record).__name__}")

        def text_field(name: str, required: bool, record: dict = record, where: str = where) -> str | None:
            value = record.get(name)
            if value is None:
                if required:
                    raise ChatImportError(f'{where}: missing required field "{name}"')
                return None
            if not isinstance(value, str):
                raise ChatImportError(f'{where}: "{name}" must be a string, got {value!r}')
            return value

        conversation = text_field("conversation_id", True) or ""
        sender = text_field("sender", True) or ""
        body = text_field("text", True) or ""  # empty text: skipped, like an empty chat bubble
        raw_time = text_field("sent_at", True) or ""
        title = text_field("conversation_title", False)
        for name, value in (("conversation_id", conversation), ("sender", sender), ("sent_at", raw_time)):
            if not value.strip():
                raise ChatImportError(f'{where}: "{name}" is empty')

        message_id = record.get("message_id")
        if message_id is not None:
            if isinstance(message_id, bool) or not isinstance(message_id, str | int):
                raise ChatImportError(f'{where}: "message_id" must be a string, got {message_id!r}')
            message_id = str(message_id)
            if not message_id.strip():
                raise ChatImportError(f'{where}: "message_id" is empty')
        is_owner = record.get("is_owner", False)
        if not isinstance(is_owner, bool):
            raise ChatImportError(f'{where}: "is_owner" must be true or false, got {is_owner!r}')
        name = record.get("source")
        if name is None:
            source = "jsonl"
        elif not isinstance(name, str) or not JSONL_SOURCE_NAME.match(name):
            raise ChatImportError(
                f'{where}: "source" must be a short name of letters, digits, "_", "." or "-", got {name!r}'
            )
        else:
            source = f"jsonl:{name}"

        try:
            sent_at = datetime.fromisoformat(raw_time.strip())
        except ValueError:
            raise ChatImportError(f'{where}: "sent_at" is not an ISO 8601 time: {raw_time!r}') from None
        if sent_at.tzinfo is None:
            sent_at = sent_at.replace(tzinfo=UTC)

        export.conversation(source, conversation, title)
        export.message(
            where,
            source=source,
            conversation=conversation,
            handle=sender,
            display_name=sender,
            is_owner=is_owner,
            external_id=message_id,
            raw_time=raw_time,
            sent_at=sent_at,
            body=body,
        )
    if not export.messages:
        raise ChatImportError(f"{path}: no messages found (expected one JSON object per line)")


# --- ChatGPT conversations.json ----------------------------------------------------------------

CHATGPT_ROLES = {"user": None, "assistant": "ChatGPT"}


def _parse_chatgpt(path: Path, export: ChatExport) -> None:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise ChatImportError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, list):
        raise ChatImportError(
            f"{path}: expected a JSON array of conversations (ChatGPT conversations.json), "
            f"got a JSON {type(data).__name__}"
        )
    for index, conv in enumerate(data):
        where = f"{path}: conversation {index}"
        if not isinstance(conv, dict):
            raise ChatImportError(f"{where}: expected a JSON object, got {type(conv).__name__}")
        conv_id = conv.get("id") if conv.get("id") is not None else conv.get("conversation_id")
        if not isinstance(conv_id, str) or not conv_id.strip():
            raise ChatImportError(f'{where}: missing "id" (a string)')
        where = f"{path}: conversation {index} ({conv_id})"
        title = conv.get("title")
        if title is not None and not isinstance(title, str):
            raise ChatImportError(f'{where}: "title" must be a string, got {title!r}')
        mapping = conv.get("mapping")
        if not isinstance(mapping, dict):
            raise ChatImportError(f'{where}: missing "mapping" (an object of message nodes)')
        export.conversation("chatgpt", conv_id, title, _epoch(conv.get("create_time"), "create_time", where))
        for node_id, node in _chatgpt_nodes(mapping, where):
            _chatgpt_message(export, conv_id, node_id, node, f"{where}, node {node_id}")
    if not export.messages:
        raise ChatImportError(f"{path}: no user or assistant messages with text found")


def _chatgpt_nodes(mapping: dict, where: str) -> list[tuple[str, dict]]:
    """The nodes in conversation order: by create_time, untimed ones right after their parent."""
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            raise ChatImportError(f"{where}, node {node_id}: expected a JSON object")
        message = node.get("message")
        if message is not None and not isinstance(message, dict):
            raise ChatImportError(f'{where}, node {node_id}: "message" must be an object or null')

    def own_time(node: dict) -> float | None:
        message = node.get("message")
        value = message.get("create_time") if message else None
        return value if _is_number(value) else None

    # Depth-first from the roots, so an untimed node inherits the time of its nearest timed ancestor.
    order: list[tuple[str, dict, float]] = []
    roots = [k for k, n in mapping.items() if n.get("parent") not in mapping]
    visited: set[str] = set()
    stack = [(k, float("-inf")) for k in reversed(roots)]
    while stack:
        node_id, inherited = stack.pop()
        if node_id in visited or node_id not in mapping:
            continue
        visited.add(node_id)
        node = mapping[node_id]
        timed = own_time(node)
        sort_time = inherited if timed is None else timed
        order.append((node_id, node, sort_time))
        children = node.get("children") or []
        if not isinstance(children, list):
            raise ChatImportError(f'{where}, node {node_id}: "children" must be an array')
        stack.extend((str(c), sort_time) for c in reversed(children))
    # Nodes unreachable from a root (a cycle in a damaged export) still count.
    order.extend(
        (k, n, own_time(n) if own_time(n) is not None else float("-inf"))
        for k, n in mapping.items()
        if k not in visited
    )
    positions = {node_id: i for i, (node_id, _n, _t) in enumerate(order)}
    order.sort(key=lambda item: (item[2], positions[item[0]]))
    return [(node_id, node) for node_id, node, _t in order]


def _chatgpt_message(export: ChatExport, conv_id: str, node_id: str, node: dict, where: str) -> None:
    message = node.get("message")
    if not message:
        return
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if role not in CHATGPT_ROLES:
        return
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return
    content = message.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return
    body = "\n".join(p for p in parts if isinstance(p, str))
    message_id = message.get("id") if isinstance(message.get("id"), str) else node_id
    raw_time = message.get("create_time")
    export.message(
        where,
        source="chatgpt",
        conversation=conv_id,
        handle=role,
        display_name=CHATGPT_ROLES[role],
        is_owner=role == "user",
        external_id=message_id,
        raw_time=repr(raw_time),  # unused: ChatGPT messages have ids
        sent_at=_epoch(raw_time, "create_time", where),
        body=body,
    )


# --- WhatsApp text exports ---------------------------------------------------------------------

_SPACE = r"[ \u00a0\u202f]"
#: `31/12/2021, 21:41`, `12/31/21, 9:41:05\u202fPM`: two date fields in either order, a 2- or
#: 4-digit year, a 24-hour or 12-hour time, seconds on iOS.
_STAMP = (
    r"(?P<stamp>(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2}),?" + _SPACE + "+"
    r"(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2}))?"
    r"(?:" + _SPACE + r"*(?P<ampm>[AaPp])\.?[Mm]\.?)?)"
)
#: iOS: `[31/12/2021, 21:41:05] Jane Doe: text` (attachments start with U+200E).
WHATSAPP_IOS = re.compile(r"^[\u200e\u200f]?\[" + _STAMP + r"\]" + _SPACE + r"?(?P<rest>.*)$")
#: Android: `31/12/2021, 21:41 - Jane Doe: text`.
WHATSAPP_ANDROID = re.compile(
    r"^[\u200e\u200f]?" + _STAMP + _SPACE + r"[-\u2013]" + _SPACE + r"(?P<rest>.*)$"
)
WHATSAPP_PREFIXES = ("WhatsApp Chat with ", "WhatsApp Chat - ")
#: System notices that WhatsApp on iOS writes as if the chat partner had sent them.
WHATSAPP_NOTICES = ("Messages and calls are end-to-end encrypted",)


@dataclass
class _WhatsAppLine:
    number: int
    stamp: str
    a: int
    b: int
    year: int
    hour: int
    minute: int
    second: int
    ampm: str | None
    sender: str | None
    lines: list[str]


def _parse_whatsapp(path: Path, export: ChatExport) -> None:
    entries: list[_WhatsAppLine] = []
    current: _WhatsAppLine | None = None
    for number, raw in enumerate(_lines(_read_text(path)), start=1):
        m = WHATSAPP_IOS.match(raw) or WHATSAPP_ANDROID.match(raw)
        if m is None:
            if current is not None:  # a continuation line of the message before
                current.lines.append(raw)
            elif raw.strip():
                raise ChatImportError(
                    f"{path}: line {number}: not a WhatsApp message line (expected "
                    f"'[31/12/2021, 21:41:05] Name: text' or '31/12/2021, 21:41 - Name: text')"
                )
            continue
        g = {k: v for k, v in m.groupdict().items() if v is not None}
        rest = g["rest"]
        sender, text = rest.split(": ", 1) if ": " in rest else (None, rest)
        year = int(g["y"])
        current = _WhatsAppLine(
            number=number,
            stamp=" ".join(re.split(_SPACE + "+", g["stamp"])),
            a=int(g["a"]),
            b=int(g["b"]),
            year=year + 2000 if len(g["y"]) == 2 else year,
            hour=int(g["h"]),
            minute=int(g["mi"]),
            second=int(g.get("s", 0)),
            ampm=g["ampm"].lower() if "ampm" in g else None,
            sender=sender.strip("\u200e\u200f ") if sender is not None else None,
            lines=[text],
        )
        entries.append(current)
    if not entries:
        raise ChatImportError(f"{path}: no WhatsApp message lines found")

    day_first = _whatsapp_day_first(path, entries)
    stem = path.stem
    title = stem
    for prefix in WHATSAPP_PREFIXES:
        if stem.startswith(prefix) and len(stem) > len(prefix):
            title = stem.removeprefix(prefix)
            break
    export.conversation("whatsapp", stem, title)
    for entry in entries:
        if not entry.sender:
            continue  # a system line: "Messages and calls are end-to-end encrypted", "X added Y"
        body = "\n".join(entry.lines).rstrip("\n").lstrip("\u200e\u200f")
        if body.startswith(WHATSAPP_NOTICES):
            continue
        export.message(
            f"{path}: line {entry.number}",
            source="whatsapp",
            conversation=stem,
            handle=entry.sender,
            display_name=entry.sender,
            is_owner=False,
            external_id=None,
            raw_time=entry.stamp,
            sent_at=_whatsapp_time(path, entry, day_first),
            body=body,
        )
    if not export.messages:
        raise ChatImportError(f"{path}: no WhatsApp messages found, only system lines")


def _whatsapp_day_first(path: Path, entries: list[_WhatsAppLine]) -> bool:
    """Day-first unless a second field > 12 shows month-first; both -> the file is inconsistent."""
    day_first = next((e for e in entries if e.a > 12), None)
    month_first = next((e for e in entries if e.b > 12), None)
    if day_first and month_first:
        raise ChatImportError(
            f"{path}: line {day_first.number} has a day-first date and line {month_first.number} a "
            f"month-first date"
        )
    return month_first is None


def _whatsapp_time(path: Path, entry: _WhatsAppLine, day_first: bool) -> datetime:
    day, month = (entry.a, entry.b) if day_first else (entry.b, entry.a)
    hour = entry.hour
    where = f"{path}: line {entry.number}"
    if entry.ampm is not None:
        if not 1 <= hour <= 12:
            raise ChatImportError(f"{where}: hour {hour} with {entry.ampm.upper()}M in {entry.stamp!r}")
        hour = hour % 12 + (12 if entry.ampm == "p" else 0)
    try:
        return datetime(entry.year, month, day, hour, entry.minute, entry.second, tzinfo=UTC)
    except ValueError as exc:
        raise ChatImportError(f"{where}: {entry.stamp!r} is not a valid time ({exc})") from None


# --- writing -----------------------------------------------------------------------------------

# The dedupe keys stored for each of the export's conversations that exists: a message whose key
# is among them is present and is not sent again (it stays as it is, also when the export has
# other text at the same message id).
PRESENT_KEYS = """
select c.source, c.external_id,
       array(select m.dedupe_key from exo_private.chat_messages m where m.conversation_id = c.id)
from unnest(%s::text[], %s::text[]) as x(source, external_id)
join exo_private.chat_conversations c on c.source = x.source and c.external_id = x.external_id
"""

INSERT_IDENTITIES = """
insert into exo_private.chat_identities (source, handle, display_name)
select i.source, i.handle, i.display_name
from unnest(%s::text[], %s::text[], %s::text[]) with ordinality as i(source, handle, display_name, ord)
order by i.ord
on conflict (source, handle) do nothing
"""

OWNER_PERSON = "select id from exo_private.people where is_owner"

# Identities already linked to someone stay as they are: linking is the user's to change.
LINK_OWNER_IDENTITIES = """
update exo_private.chat_identities i
   set person_id = %s
  from unnest(%s::text[], %s::text[]) as o(source, handle)
 where i.source = o.source and i.handle = o.handle and i.person_id is null
"""

INSERT_CONVERSATIONS = """
insert into exo_private.chat_conversations (source, external_id, title, started_at, imported_from)
select c.source, c.external_id, c.title, c.started_at, %s
from unnest(%s::text[], %s::text[], %s::text[], %s::timestamptz[])
     with ordinality as c(source, external_id, title, started_at, ord)
order by c.ord
on conflict (source, external_id) do nothing
"""

INSERT_MESSAGES = """
insert into exo_private.chat_messages
    (conversation_id, identity_id, external_id, dedupe_key, sent_at, body)
select c.id, i.id, m.external_id, m.dedupe_key, m.sent_at, m.body
from unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[], %s::text[])
     with ordinality as m(source, conversation, handle, external_id, dedupe_key, sent_at, body, ord)
join exo_private.chat_conversations c on c.source = m.source and c.external_id = m.conversation
join exo_private.chat_identities i on i.source = m.source and i.handle = m.handle
order by m.ord
on conflict (conversation_id, dedupe_key) do nothing
returning conversation_id
"""

INSERT_PARTICIPANTS = """
insert into exo_private.chat_participants (conversation_id, identity_id)
select distinct c.id, i.id
from unnest(%s::text[], %s::text[], %s::text[]) as p(source, conversation, handle)
join exo_private.chat_conversations c on c.source = p.source and c.external_id = p.conversation
join exo_private.chat_identities i on i.source = p.source and i.handle = p.handle
on conflict do nothing
"""

# The new messages' deference marks, in the import's transaction: no message is ever unmarked
# outside it (sql/200_chat.sql).
MARK_MESSAGES = "select exo_private.mark_messages()"

# Conversations of the export windowed in another workspace than the one asked for (they move).
ELSEWHERE = """
select d.conversation_id
from unnest(%s::text[], %s::text[]) as x(source, external_id)
join exo_private.chat_conversations c on c.source = x.source and c.external_id = x.external_id
join exo_private.documents d on d.conversation_id = c.id
where d.workspace <> %s
"""

# Every conversation that gained messages gets its windows (new ones queued for embed and
# extract; unchanged ones keep their chunks), after the marks: a window carries its messages'.
WINDOW_CONVERSATIONS = """
select coalesce(sum(exo_private.window_conversation(c.id, %s)), 0)::int
from unnest(%s::bigint[]) as c(id)
"""

WORKSPACES = "select name from exo_private.workspaces order by name"


def _check_workspace(conn: psycopg.Connection, workspace: str | None) -> None:
    known = [row[0] for row in conn.execute(WORKSPACES).fetchall()]
    if workspace is not None and workspace not in known:
        raise ChatImportError(
            f"workspace {workspace!r} does not exist; the workspaces are {', '.join(known)}"
        )


def _write(
    conn: psycopg.Connection, export: ChatExport, imported_from: str, workspace: str | None
) -> ChatImportResult:
    # A conversation without a message to import (only system or empty messages) is left out.
    with_messages = {(m.source, m.conversation) for m in export.messages}
    conversations = [c for c in export.conversations.values() if (c.source, c.external_id) in with_messages]
    owners = [i for i in export.identities.values() if i.is_owner]
    with transaction(conn), conn.cursor() as cur:
        cur.execute(PRESENT_KEYS, ([c.source for c in conversations], [c.external_id for c in conversations]))
        present = {(source, external_id): set(keys) for source, external_id, keys in cur}
        new = [m for m in export.messages if m.dedupe_key not in present.get((m.source, m.conversation), ())]
        # Only the new messages' identities, conversations and participants can be missing: a
        # present message's were written with it.
        senders = {(m.source, m.handle) for m in new}
        identities = [i for i in export.identities.values() if (i.source, i.handle) in senders]
        gaining = {(m.source, m.conversation) for m in new}
        new_conversations = [c for c in conversations if (c.source, c.external_id) in gaining]
        pairs = sorted({(m.source, m.conversation, m.handle) for m in new})

        cur.execute(
            INSERT_IDENTITIES,
            (
                [i.source for i in identities],
                [i.handle for i in identities],
                [i.display_name for i in identities],
            ),
        )
        identities_added = cur.rowcount
        if owners:
            owner = cur.execute(OWNER_PERSON).fetchone()
            if owner is None:
                raise ChatImportError(
                    f"{imported_from}: there is no owner person to link the owner's identities to"
                )
            cur.execute(
                LINK_OWNER_IDENTITIES, (owner[0], [i.source for i in owners], [i.handle for i in owners])
            )
        cur.execute(
            INSERT_CONVERSATIONS,
            (
                imported_from,
                [c.source for c in new_conversations],
                [c.external_id for c in new_conversations],
                [c.title for c in new_conversations],
                [c.started_at for c in new_conversations],
            ),
        )
        conversations_added = cur.rowcount
        # On conflict: a concurrent import of the same export may have written some since.
        cur.execute(
            INSERT_MESSAGES,
            (
                [m.source for m in new],
                [m.conversation for m in new],
                [m.handle for m in new],
                [m.external_id for m in new],
                [m.dedupe_key for m in new],
                [m.sent_at for m in new],
                [m.body for m in new],
            ),
        )
        added = cur.fetchall()
        messages_added = len(added)
        grown = {row[0] for row in added}
        cur.execute(
            INSERT_PARTICIPANTS, ([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs])
        )
        if messages_added:
            cur.execute(MARK_MESSAGES)
        if workspace is not None:
            cur.execute(
                ELSEWHERE,
                ([c.source for c in conversations], [c.external_id for c in conversations], workspace),
            )
            grown |= {row[0] for row in cur.fetchall()}
        windows_added = cur.execute(WINDOW_CONVERSATIONS, (workspace, sorted(grown))).fetchone()[0]
    return ChatImportResult(
        conversations_added=conversations_added,
        messages_added=messages_added,
        messages_seen=len(export.messages),
        identities_added=identities_added,
        windows_added=windows_added,
    )


# --- mbox mail archives -------------------------------------------------------------------------

_QUOTED = re.compile(r"^\s*>")
_ATTRIBUTION = re.compile(r"^\s*On .{1,300} wrote:\s*$")  # "On Tue, 3 Mar 2024, Ann <a@b> wrote:"
_SUBJECT_PREFIX = re.compile(r"^(?:\s*(?:re|fwd?|aw|sv|wg)\s*(?:\[\d+\])?\s*:)+\s*", re.I)


def _own_words(text: str) -> str:
    """A mail's own words: the quoted lines of the mail it answers (and the "On ... wrote:" line
    that introduces them) are that mail's, stored once with it."""
    lines = text.split("\n")
    kept = [
        line
        for i, line in enumerate(lines)
        if not _QUOTED.match(line)
        and not (_ATTRIBUTION.match(line) and any(_QUOTED.match(x) for x in lines[i + 1 : i + 3]))
    ]
    return "\n".join(kept).strip()


def _parse_mbox(path: Path, export: ChatExport) -> None:
    """A mail archive (mbox, as mail clients and Google Takeout export it): each thread becomes a
    conversation (its root's Message-ID: the first References id, else the In-Reply-To chain
    followed within the file), each message a message of its sender (handle: the address)."""
    try:
        with path.open("rb") as fh:
            first = fh.readline()
    except OSError as exc:
        raise ChatImportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not first.startswith(b"From "):
        raise ChatImportError(f"{path}: not an mbox file (it does not begin with a 'From ' line)")
    box = mailbox.mbox(path, factory=lambda f: email.message_from_binary_file(f, policy=email.policy.default),
                       create=False)  # fmt: skip
    mails = []
    try:
        for n, message in enumerate(box, start=1):
            ids = thread_ids(message)
            own = ids.get("message_id")
            mails.append((n, message, own, ids.get("references") or [], ids.get("in_reply_to")))
    finally:
        box.close()
    parent = {own: reply_to for _, _, own, _, reply_to in mails if own and reply_to}

    def root(own: str | None, references: list[str], reply_to: str | None, n: int) -> str:
        if references:
            return references[0]
        at, seen = reply_to or own, set()
        while at in parent and at not in seen:  # a loop of replies ends where it closes
            seen.add(at)
            at = parent[at]
        return at or f"{path.name}#{n}"

    for n, message, own, references, reply_to in mails:
        where = f"{path}: message {n}" + (f" <{own}>" if own else "")
        name, address = email.utils.parseaddr(str(message.get("from", "")))
        handle = address.lower() or name
        if not handle:
            raise ChatImportError(f"{where}: no sender (the From header is missing or empty)")
        raw_time = str(message.get("date", ""))
        try:
            sent_at = email.utils.parsedate_to_datetime(raw_time) if raw_time else None
        except (TypeError, ValueError):
            sent_at = None
        if sent_at is not None and sent_at.tzinfo is None:
            sent_at = sent_at.replace(tzinfo=UTC)
        conversation = root(own, references, reply_to, n)
        subject = _SUBJECT_PREFIX.sub("", str(message.get("subject", ""))).strip() or None
        export.conversation("mbox", conversation, subject, sent_at)
        export.message(
            where,
            source="mbox",
            conversation=conversation,
            handle=handle,
            display_name=name or address,
            is_owner=False,
            external_id=own,
            raw_time=raw_time,
            sent_at=sent_at,
            body=_own_words(message_text(message)),
        )
    if not export.messages:
        raise ChatImportError(f"{path}: no messages with text found in the mail archive")


_PARSERS = {
    "jsonl": _parse_jsonl,
    "chatgpt": _parse_chatgpt,
    "whatsapp": _parse_whatsapp,
    "mbox": _parse_mbox,
}


def parse_export(path: Path, fmt: str, owner_names: Sequence[str] = ()) -> ChatExport:
    """Read and parse one chat export in format `fmt` (one of FORMATS), writing nothing.

    Senders named in `owner_names` (case-insensitive) are the owner's, as are JSONL senders
    marked "is_owner" and ChatGPT's "user". Raises ValueError for an unknown format and
    ChatImportError when the file is malformed.
    """
    if fmt not in _PARSERS:
        raise ValueError(f"unknown chat format {fmt!r}; expected one of {', '.join(FORMATS)}")
    export = ChatExport(owner_names=frozenset(_fold(name) for name in owner_names if _fold(name)))
    _PARSERS[fmt](Path(path), export)
    return export


def import_chat(
    conn: psycopg.Connection,
    path: Path,
    fmt: str,
    owner_names: Sequence[str] = (),
    workspace: str | None = None,
) -> ChatImportResult:
    """Import one chat export into the chat tables, in one transaction; re-importing adds nothing.

    `conn` is an exo_writer connection (autocommit on or off). `fmt` is one of FORMATS.
    Senders named in `owner_names` (case-insensitive) are linked to the owner person, as
    are JSONL senders marked "is_owner" and ChatGPT's "user". Every conversation that gained
    messages is windowed into `workspace`, and the export's conversations windowed elsewhere
    move there; without one, a conversation stays where it is and a new one goes to the
    setting chat.workspace. Raises ChatImportError, before anything is written, when the file
    is malformed or the workspace does not exist.
    """
    path = Path(path)
    _check_workspace(conn, workspace)
    return _write(conn, parse_export(path, fmt, owner_names), path.name, workspace)
