"""The conversation Gemini CLI loads from a chat file: its metadata and its latest messages.

Replays the records as `loadConversationRecord` does: a message record sets its id's latest
version (an id seen before keeps its first place in the order, as a JavaScript `Map` does), a
`$set` merges metadata and, when it holds a `messages` array, replaces every message with that
snapshot, `$rewindTo` drops its id and every message after it (all of them when the id is
unknown), a header merges metadata (and a legacy header's `messages`). Each message remembers the
line that gave it its latest version: the lines that hold no message Gemini CLI keeps, nor the
metadata, are dead weight (what `vacuum` drops).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.formats.gemini_cli.chat_lines import ChatFile, ChatLine, RecordKind, is_str

__all__ = ["Conversation", "LoadedMessage", "load_checkpoint", "load_conversation", "load_legacy"]


@dataclass(frozen=True, slots=True)
class LoadedMessage:
    """A message as Gemini CLI keeps it: its record, the line it came from and whether that
    line is a snapshot (`$set` messages or a legacy header) holding it among others."""

    id: str
    line: int
    value: Mapping[str, Any]
    in_snapshot: bool = False


@dataclass(frozen=True, slots=True)
class Conversation:
    """The loaded session: merged metadata, the messages in order, and what the replay met."""

    metadata: Mapping[str, Any]
    messages: tuple[LoadedMessage, ...]
    metadata_lines: tuple[int, ...]  # every header and `$set` line, in order
    rewinds: tuple[int, ...]  # lines of `$rewindTo` records
    unknown_rewinds: tuple[int, ...]  # rewinds to an id not loaded (they drop everything)

    @property
    def identified(self) -> bool:
        """Whether the metadata names a session and a project (else Gemini CLI reads it as a
        legacy one-document file)."""
        return is_str(self.metadata.get("sessionId")) and is_str(self.metadata.get("projectHash"))

    @property
    def session_id(self) -> str | None:
        """The session's id, when the metadata names one."""
        value = self.metadata.get("sessionId")
        return value if isinstance(value, str) else None


def _snapshot(messages: object, line: int) -> dict[str, LoadedMessage]:
    loaded: dict[str, LoadedMessage] = {}
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and is_str(message.get("id")):
            loaded[message["id"]] = LoadedMessage(message["id"], line, message, in_snapshot=True)
    return loaded


def _rewind(messages: dict[str, LoadedMessage], target: str) -> bool:
    """Drop `target` and every message after it; all of them when it is unknown (returns False)."""
    if target not in messages:
        messages.clear()
        return False
    ids = list(messages)
    for dropped in ids[ids.index(target) :]:
        del messages[dropped]
    return True


def _apply(record: ChatLine, messages: dict[str, LoadedMessage], metadata: dict[str, Any]) -> bool:
    """Replay one record; False for a rewind to an unknown id."""
    value = record.value
    if record.kind is RecordKind.REWIND:
        return _rewind(messages, value["$rewindTo"])
    if record.kind is RecordKind.MESSAGE:
        messages[value["id"]] = LoadedMessage(value["id"], record.line, value)
    elif record.kind is RecordKind.SET:
        update = value["$set"]
        if isinstance(update.get("messages"), list):
            messages.clear()
            messages.update(_snapshot(update["messages"], record.line))
        metadata.update(update)
    elif record.kind is RecordKind.HEADER:
        metadata.update(value)
        if isinstance(value.get("messages"), list):
            for message in _snapshot(value["messages"], record.line).values():
                messages[message.id] = message
    return True


def load_conversation(chat: ChatFile) -> Conversation:
    """Replay every record of `chat` as Gemini CLI does on load."""
    messages: dict[str, LoadedMessage] = {}
    metadata: dict[str, Any] = {}
    meta_lines, rewinds, unknown = [], [], []
    for record in chat.lines():
        if record.kind in (RecordKind.SET, RecordKind.HEADER):
            meta_lines.append(record.line)
        if record.kind is RecordKind.REWIND:
            rewinds.append(record.line)
        if not _apply(record, messages, metadata):
            unknown.append(record.line)
    metadata.pop("messages", None)
    return Conversation(metadata, tuple(messages.values()), tuple(meta_lines), tuple(rewinds), tuple(unknown))


def load_legacy(data: bytes) -> Conversation | None:
    """A legacy one-document session (`session-*.json` before JSONL) as Gemini CLI falls back to
    reading it when no line names a session: the document's `messages` as they are (no id is
    deduplicated). None when the bytes are no JSON object with a `sessionId`."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict) or "sessionId" not in document:
        return None
    listed = document.get("messages")
    messages = tuple(
        LoadedMessage(m["id"] if is_str(m.get("id")) else "", 1, m, in_snapshot=True)
        for m in (listed if isinstance(listed, list) else ())
        if isinstance(m, dict)
    )
    metadata = {k: v for k, v in document.items() if k != "messages"}
    return Conversation(metadata, messages, (1,), (), ())


def load_checkpoint(data: bytes) -> tuple[Mapping[str, Any], ...] | None:
    """A `/chat save` checkpoint's API history (`{"history": [Content]}`, or the bare list of old
    versions): the contents `/chat resume` restores, as saved. None for anything else."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    history = document.get("history") if isinstance(document, dict) else document
    if not isinstance(history, list):
        return None
    contents = tuple(c for c in history if isinstance(c, dict) and isinstance(c.get("parts"), list))
    return contents if len(contents) == len(history) else None
