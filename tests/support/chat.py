"""Chat exports written for tests: one small export of each format, JSONL records (single
messages and whole sessions), and importing a file as the writer."""

from __future__ import annotations

import email.utils
import json
import mailbox
import tempfile
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from exocortex.ingest.chat import ChatImportResult, import_chat


def run_import(
    db, path: Path, fmt: str, owner_names=(), autocommit: bool = True, workspace: str | None = None
) -> ChatImportResult:
    with db.connect("exo_writer", autocommit=autocommit) as conn:
        return import_chat(conn, path, fmt, owner_names, workspace)


def import_records(db, records: list[dict], workspace: str = "personal") -> ChatImportResult:
    """Import JSONL records as the writer, through a file as `exo import-chat` reads one."""
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "chats.jsonl"
        export.write_text(jsonl(*records), encoding="utf-8")
        with db.connect("exo_writer") as conn:
            return import_chat(conn, export, "jsonl", workspace=workspace)


def jsonl(*records: dict | str) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


def msg(conversation="c1", sender="Ann", text="hello", sent_at="2024-03-01T10:00:00Z", **extra) -> dict:
    return {"conversation_id": conversation, "sender": sender, "text": text, "sent_at": sent_at, **extra}


def node(node_id, role, parts, create_time, parent, children=(), **message_extra) -> dict:
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role},
            "create_time": create_time,
            "content": {"content_type": "text", "parts": parts},
            **message_extra,
        }
    return {"id": node_id, "message": message, "parent": parent, "children": list(children)}


def chatgpt_export() -> list[dict]:
    """Two conversations and one without messages to import.

    The first has a system prompt, a tool call, an image part, an empty answer, a hidden message
    and a branch (a regenerated answer).
    """
    first = {
        "root": node("root", None, [], None, None, ["sys"]),
        "sys": node("sys", "system", ["You are ChatGPT."], None, "root", ["u1"]),
        "u1": node("u1", "user", ["How do I run Postgres at home?"], 1_700_000_000.5, "sys", ["a1", "a1b"]),
        "a1": node("a1", "assistant", ["Install it and ", "run initdb."], 1_700_000_010.0, "u1", ["t1"]),
        "a1b": node("a1b", "assistant", ["A regenerated answer."], 1_700_000_020.0, "u1", []),
        "t1": node("t1", "tool", ["tool output"], 1_700_000_011.0, "a1", ["u2"]),
        "u2": node(
            "u2",
            "user",
            [{"content_type": "image_asset_pointer"}, "What about backups?"],
            1_700_000_030.0,
            "t1",
            ["a2"],
        ),
        "a2": node("a2", "assistant", [""], 1_700_000_040.0, "u2", ["u3"]),
        "u3": node(
            "u3",
            "user",
            ["hidden context"],
            1_700_000_050.0,
            "a2",
            [],
            metadata={"is_visually_hidden_from_conversation": True},
        ),
    }
    second = {
        "r": node("r", None, [], None, None, ["q"]),
        "q": node("q", "user", ["A story about a lighthouse keeper"], 1_700_100_000.0, "r", ["ans"]),
        "ans": node("ans", "assistant", ["Once upon a time..."], None, "q", []),
    }
    system_only = node("s", "system", ["You are ChatGPT."], None, None)
    return [
        {"id": "conv-1", "title": "Home Postgres", "create_time": 1_699_999_999.0, "mapping": first},
        {"conversation_id": "conv-2", "title": "Story", "create_time": 1_700_099_999.0, "mapping": second},
        {"id": "conv-3", "title": "Only a system prompt", "create_time": None, "mapping": {"s": system_only}},
    ]


WHATSAPP_ANDROID = """\
12/03/2024, 09:15 - Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more.
12/03/2024, 09:15 - Jane Doe: Morning! Did the migration run?
12/03/2024, 09:17 - Sam Rivera: Yes, it finished overnight.
The logs are clean:
no errors, no warnings.

See you at standup.
13/03/2024, 18:02 - Jane Doe: <Media omitted>
13/03/2024, 18:03 - Jane Doe changed the group description
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def mail(sender: str, to: str, subject: str, when: datetime, message_id: str, body: str,
         in_reply_to: str | None = None, references: str | None = None, cc: str | None = None) -> EmailMessage:  # fmt: skip
    """One email as a mail client writes it."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    if cc:
        message["Cc"] = cc
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(when)
    message["Message-ID"] = f"<{message_id}>"
    if in_reply_to:
        message["In-Reply-To"] = f"<{in_reply_to}>"
    if references:
        message["References"] = references
    message.set_content(body)
    return message


def eml(root: Path, name: str, sender: str, to: str, when: datetime, message_id: str, cc: str | None = None,
        in_reply_to: str | None = None, body: str = "See you at the allotment on Saturday.") -> Path:  # fmt: skip
    """An email file NAME.eml (subject "About NAME"); a reply references the message it answers."""
    message = mail(sender, to, f"About {name}", when, message_id, body, in_reply_to=in_reply_to,
                   references=f"<{in_reply_to}>" if in_reply_to else None, cc=cc)  # fmt: skip
    path = root / f"{name}.eml"
    path.write_bytes(bytes(message))
    return path


def mbox(tmp_path: Path, name: str, *messages: EmailMessage) -> Path:
    """A mail archive in mbox format, written by the standard library."""
    path = tmp_path / name
    box = mailbox.mbox(path)
    for message in messages:
        box.add(message)
    box.flush()
    box.close()
    return path


MAIL_T0 = datetime(2024, 3, 4, 9, 15, tzinfo=UTC)


def mail_archive(tmp_path: Path) -> Path:
    """A thread of three (a reply quoting its parent, a reply to the reply with only In-Reply-To)
    and a message of its own."""
    return mbox(
        tmp_path,
        "All mail.mbox",
        mail(
            "Ann Lee <ann@example.org>",
            "sam@home.example",
            "Allotment",
            MAIL_T0,
            "a1@example.org",
            "Shall we plant the beans on Saturday?",
        ),
        mail(
            "Sam Rivera <sam@home.example>",
            "ann@example.org",
            "Re: Allotment",
            MAIL_T0 + timedelta(hours=2),
            "b2@home.example",
            "Yes, Saturday at ten.\n\nOn Mon, 4 Mar 2024, Ann Lee wrote:\n> Shall we plant"
            " the beans on Saturday?\n",
            in_reply_to="a1@example.org",
            references="<a1@example.org>",
        ),
        mail(
            "Ann Lee <ann@example.org>",
            "sam@home.example",
            "Re: Re: Allotment",
            MAIL_T0 + timedelta(hours=3),
            "c3@example.org",
            "I will bring the canes.",
            in_reply_to="b2@home.example",
        ),
        mail(
            "Bo Lund <bo@example.org>",
            "sam@home.example",
            "Invoice 42",
            MAIL_T0 + timedelta(days=1),
            "d4@example.org",
            "The invoice for March is attached.",
        ),
    )


def fixtures(tmp_path: Path) -> dict[str, Path]:
    """One small export of each format."""
    return {
        "jsonl": write(
            tmp_path,
            "chats.jsonl",
            jsonl(
                msg(text="First message", sent_at="2024-03-01T10:00:00", is_owner=True, sender="Sam Rivera"),
                msg(text="A reply", sender="Ann", message_id="m-2", conversation_title="Planning"),
                "",
                msg(conversation="c2", text="Elsewhere", sender="Ann", source="signal"),
            ),
        ),
        "chatgpt": write(tmp_path, "conversations.json", json.dumps(chatgpt_export())),
        "whatsapp": write(tmp_path, "WhatsApp Chat with Jane Doe.txt", WHATSAPP_ANDROID),
        "mbox": mail_archive(tmp_path),
    }


def session(
    conversation: str, start: datetime, *lines: tuple[str, str], minutes: int = 1, **extra
) -> list[dict]:
    """JSONL records of one chat session: (sender, text) pairs `minutes` apart from `start` (UTC).

    A sender named "Me" is the owner; every record gets a message_id from the conversation and its time.
    """
    return [
        msg(
            conversation=conversation,
            sender=sender,
            text=text,
            sent_at=(start + timedelta(minutes=i * minutes)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            message_id=f"{conversation}-{(start + timedelta(minutes=i * minutes)).isoformat()}-{i}",
            is_owner=sender == "Me",
            **extra,
        )
        for i, (sender, text) in enumerate(lines)
    ]
