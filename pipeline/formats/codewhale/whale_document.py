"""A CodeWhale session document decoded into typed values, in one pass, never raising.

CodeWhale writes `serde_json::to_string(&SavedSession)`: one compact JSON line holding
`schema_version`, `metadata`, `messages` (the compatibility projection), the `journal`
(`entries` linked by `parent_id`, its `leaf_id`) and a mirrored top-level `leaf_id`. The journal,
when present, overrides `messages` on load (`SavedSession::ensure_journal`).

A whole-document format has one physical line, so this reader numbers the document's records
instead: the journal's entries in document order (or the messages when there is no journal) are
records 1..N, and every finding, set and cut speaks of those numbers. Serde refuses a document
whose block `type` or entry `kind` it does not know; such a session is read (for validation) but
marked not resumable, as CodeWhale would refuse to load it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats.json_text import dumps
from pipeline.formats.line_guard import LineLimits, nesting_depth

__all__ = [
    "Block",
    "BlockKind",
    "Decoded",
    "DocumentFault",
    "Entry",
    "EntryKind",
    "Message",
    "Metadata",
    "SavedSession",
    "decode_document",
    "message_from_json",
]


class BlockKind(StrEnum):
    """The content block `type`s CodeWhale's `ContentBlock` knows."""

    TEXT = "text"
    IMAGE_URL = "image_url"
    THINKING = "thinking"
    TOOL_USE = "tool_use"
    TOOL_RESULT = "tool_result"
    SERVER_TOOL_USE = "server_tool_use"
    TOOL_SEARCH_TOOL_RESULT = "tool_search_tool_result"
    CODE_EXECUTION_TOOL_RESULT = "code_execution_tool_result"


CALLS: Final = frozenset({BlockKind.TOOL_USE, BlockKind.SERVER_TOOL_USE})
RESULTS: Final = frozenset(
    {BlockKind.TOOL_RESULT, BlockKind.TOOL_SEARCH_TOOL_RESULT, BlockKind.CODE_EXECUTION_TOOL_RESULT}
)


class EntryKind(StrEnum):
    """The journal entry `kind`s (`SessionEntryKind`, snake_case)."""

    MESSAGE = "message"
    USER = "user"
    ASSISTANT = "assistant"
    COMPACTION = "compaction"
    BRANCH_SUMMARY = "branch_summary"
    SYSTEM = "system"


class DocumentFault(StrEnum):
    """Why a document, or one of its records, cannot be read as CodeWhale reads it."""

    NOT_JSON = "not-json"
    NOT_OBJECT = "not-object"
    TOO_LONG = "too-long"
    TOO_DEEP = "too-deep"
    NO_METADATA = "no-metadata"
    NO_MESSAGES = "no-messages"
    BAD_MESSAGE = "bad-message"
    BAD_ENTRY = "bad-entry"
    BAD_JOURNAL = "bad-journal"


@dataclass(frozen=True, slots=True)
class Block:
    """One content block: its kind, visible text, and the ids that pair calls with results."""

    kind: BlockKind
    text: str  # text, thinking, a result's content, a call's input as compact JSON
    call_id: str | None  # a call's `id`, a result's `tool_use_id`
    key: str | None  # the pairing identity: `execution_id` when recorded, else the call id
    name: str | None  # a call's tool name
    is_error: bool
    plain: bool  # a text block without `cache_control` (checkpoint recognition needs it)


@dataclass(frozen=True, slots=True)
class Message:
    """A message as CodeWhale holds it; `json` is its compact JSON as the document stores it."""

    role: str
    blocks: tuple[Block, ...]
    json: bytes

    @property
    def digest(self) -> str:
        """SHA-256 of its compact JSON: what goldens and the compaction check compare."""
        return hashlib.sha256(self.json).hexdigest()

    def texts(self) -> tuple[str, ...]:
        """Its text blocks' texts, in order."""
        return tuple(b.text for b in self.blocks if b.kind is BlockKind.TEXT)


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry and the message it projects to (`SessionEntryKind::as_message`)."""

    record: int
    id: str
    parent_id: str | None
    kind: EntryKind
    message: Message
    json: bytes


@dataclass(frozen=True, slots=True)
class Metadata:
    """What `metadata` records of the session (no text but ids and names)."""

    id: str
    model: str
    provider: str
    total_tokens: int
    message_count: int
    spawn_depth: int
    parent_session_id: str | None


@dataclass(frozen=True, slots=True)
class SavedSession:
    """The decoded document: `entries` is None when it has no journal."""

    schema_version: int
    metadata: Metadata
    messages: tuple[Message, ...]
    entries: tuple[Entry, ...] | None
    leaf_id: str | None
    fields: Mapping[str, Any]  # the top-level object as read, for composing a candidate


@dataclass(frozen=True, slots=True)
class Decoded:
    """The session (None when the document is unreadable) and every fault, by record."""

    session: SavedSession | None
    faults: tuple[tuple[DocumentFault, int | None], ...]  # (fault, record or None: the document)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _block(raw: object) -> Block | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        return None
    try:
        kind = BlockKind(raw["type"])
    except ValueError:
        return None
    text = ""
    if kind is BlockKind.TEXT:
        text = _str(raw.get("text")) or ""
    elif kind is BlockKind.THINKING:
        text = _str(raw.get("thinking")) or ""
    elif kind is BlockKind.TOOL_RESULT:
        text = _str(raw.get("content")) or ""
    elif kind in CALLS:
        text = orjson.dumps(raw.get("input")).decode()
    elif kind in RESULTS:
        text = orjson.dumps(raw.get("content")).decode()
    call_id = _str(raw.get("id")) if kind in CALLS else _str(raw.get("tool_use_id"))
    if kind in CALLS | RESULTS and call_id is None:
        return None  # serde requires the id
    return Block(
        kind=kind,
        text=text,
        call_id=call_id,
        key=_str(raw.get("execution_id")) or call_id,
        name=_str(raw.get("name")),
        is_error=raw.get("is_error") is True,
        plain=kind is BlockKind.TEXT and raw.get("cache_control") is None,
    )


def message_from_json(raw: object) -> Message | None:
    """A stored message, or None when CodeWhale's serde would refuse it."""
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("role"), str)
        or not isinstance(raw.get("content"), list)
    ):
        return None
    blocks = tuple(_block(b) for b in raw["content"])
    if any(b is None for b in blocks):
        return None
    return Message(raw["role"], tuple(b for b in blocks if b is not None), dumps(raw))


def _text_message(role: str, text: str) -> Message:
    raw = {"role": role, "content": [{"type": "text", "text": text}]}
    message = message_from_json(raw)
    assert message is not None  # built from known parts
    return message


# Each text-bearing entry kind: its field, the role it projects to, and the prefix it gets.
_TEXT_ENTRIES: Final = {
    EntryKind.USER: ("text", "user", ""),
    EntryKind.ASSISTANT: ("text", "assistant", ""),
    EntryKind.COMPACTION: ("summary", "system", "[compaction summary] "),
    EntryKind.BRANCH_SUMMARY: ("summary", "system", "[branch summary] "),
    EntryKind.SYSTEM: ("content", "system", ""),
}


def _projection(kind: EntryKind, raw: Mapping[str, Any]) -> Message | None:
    """`SessionEntryKind::as_message`: what a journal entry contributes to the history."""
    if kind is EntryKind.MESSAGE:
        return message_from_json(raw.get("message"))
    field, role, prefix = _TEXT_ENTRIES[kind]
    text = _str(raw.get(field))
    return None if text is None else _text_message(role, prefix + text)


def _entry(record: int, raw: object) -> Entry | None:
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("id"), str)
        or not isinstance(raw.get("created_at"), str)
    ):
        return None
    parent = raw.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        return None
    try:
        kind = EntryKind(str(raw.get("kind")))
    except ValueError:
        return None
    message = _projection(kind, raw)
    if message is None:
        return None
    return Entry(record, raw["id"], parent, kind, message, dumps(raw))


def _metadata(raw: object) -> Metadata | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return None
    tokens = raw.get("total_tokens")
    count = raw.get("message_count")
    depth = raw.get("spawn_depth", 0)
    return Metadata(
        id=raw["id"],
        model=_str(raw.get("model")) or "",
        provider=_str(raw.get("model_provider")) or "",
        total_tokens=tokens if isinstance(tokens, int) else 0,
        message_count=count if isinstance(count, int) else 0,
        spawn_depth=depth if isinstance(depth, int) else 0,
        parent_session_id=_str(raw.get("parent_session_id")),
    )


def _messages(raw: Sequence[object]) -> tuple[list[Message], list[tuple[DocumentFault, int | None]]]:
    messages: list[Message] = []
    faults: list[tuple[DocumentFault, int | None]] = []
    for index, item in enumerate(raw, start=1):
        message = message_from_json(item)
        if message is None:
            faults.append((DocumentFault.BAD_MESSAGE, index))
        else:
            messages.append(message)
    return messages, faults


def _journal(
    raw: object,
) -> tuple[tuple[Entry, ...] | None, str | None, list[tuple[DocumentFault, int | None]]]:
    if raw is None:
        return None, None, []
    if not isinstance(raw, dict) or not isinstance(raw.get("entries", []), list):
        return None, None, [(DocumentFault.BAD_JOURNAL, None)]
    entries: list[Entry] = []
    faults: list[tuple[DocumentFault, int | None]] = []
    for record, item in enumerate(raw.get("entries", []), start=1):
        entry = _entry(record, item)
        if entry is None:
            faults.append((DocumentFault.BAD_ENTRY, record))
        else:
            entries.append(entry)
    leaf = raw.get("leaf_id")
    if leaf is not None and not isinstance(leaf, str):
        faults.append((DocumentFault.BAD_JOURNAL, None))
        leaf = None
    return tuple(entries), leaf, faults


def _document_fault(data: bytes, limits: LineLimits) -> tuple[DocumentFault | None, Any]:
    """The fault that stops the whole document from being read, or None and the parsed value."""
    if len(data) > limits.max_line_bytes:
        return DocumentFault.TOO_LONG, None
    if nesting_depth(data) > limits.max_json_depth:
        return DocumentFault.TOO_DEEP, None
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError:
        return DocumentFault.NOT_JSON, None
    if not isinstance(raw, dict):
        return DocumentFault.NOT_OBJECT, None
    if _metadata(raw.get("metadata")) is None:
        return DocumentFault.NO_METADATA, None
    return (None, raw) if isinstance(raw.get("messages"), list) else (DocumentFault.NO_MESSAGES, None)


def decode_document(data: bytes, limits: LineLimits) -> Decoded:
    """Decode one session document; every fault is returned, never raised."""
    fault, raw = _document_fault(data, limits)
    if fault is not None:
        return Decoded(None, ((fault, None),))
    metadata = _metadata(raw["metadata"])
    assert metadata is not None  # checked above
    messages, faults = _messages(raw["messages"])
    entries, leaf, journal_faults = _journal(raw.get("journal"))
    version = raw.get("schema_version", 1)
    session = SavedSession(
        schema_version=version if isinstance(version, int) else 0,
        metadata=metadata,
        messages=tuple(messages),
        entries=entries,
        leaf_id=leaf,
        fields=raw,
    )
    # With a journal, the stored `messages` are a projection CodeWhale rebuilds; their faults
    # still stop serde, so they are kept, numbered as messages (record None: the document).
    kept = [(fault, None if entries is not None else record) for fault, record in faults]
    return Decoded(session, (*kept, *journal_faults))
