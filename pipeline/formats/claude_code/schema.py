"""The shapes msgspec decodes a Claude Code line into: only the fields later stages need.

`TypedHead` is the fast path, with the types Claude Code writes; a line whose fields have other
types fails it and is decoded into `LooseHead` instead. Message text stays undecoded bytes
(`RawTextBlock.text`) until a prompt's text is actually needed. Field names are the format's own
camelCase spelling, which is what lets msgspec match them without renaming.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["Attachment", "Block", "HeadMessage", "LooseHead", "LooseMessage", "RawTextBlock", "TypedHead"]

Str = str | None | UnsetType


class Block(msgspec.Struct, gc=False):
    type: Any = None
    id: Any = None
    tool_use_id: Any = None
    text: Any = None
    toolUseID: Any = None


class RawTextBlock(msgspec.Struct, gc=False):
    """A content block whose text stays undecoded bytes until a prompt needs it."""

    type: Any = None
    id: Any = None
    tool_use_id: Any = None
    text: msgspec.Raw = msgspec.Raw(b"")
    toolUseID: Any = None


class HeadMessage(msgspec.Struct, gc=False):
    """The message as the line's own decode sees it: ids, role and block kinds, text left raw."""

    id: Any = None
    role: Any = None
    content: str | list[RawTextBlock] | None = None


class LooseMessage(msgspec.Struct, gc=False):
    id: Any = None
    role: Any = None
    content: Any = None


class Attachment(msgspec.Struct, gc=False):
    toolUseID: Any = None


class TypedHead(msgspec.Struct, gc=False):
    """The fast path: every field has the type Claude Code writes, or the line goes loose."""

    type: str | None = None
    subtype: str | None = None
    uuid: Str = UNSET
    parentUuid: Str = UNSET
    logicalParentUuid: str | None = None
    sessionId: Str = UNSET
    isSidechain: bool | None = None
    timestamp: Str = UNSET
    cwd: Str = UNSET
    version: Str = UNSET
    isCompactSummary: bool | None = None
    isMeta: bool | None = None
    sourceToolAssistantUUID: str | None = None
    leafUuid: Str = UNSET
    explicit: bool | None = None
    lastPrompt: str | None = None
    messageId: str | None = None
    agentId: str | None = None
    costUSD: float | None = None
    message: HeadMessage | None = None
    attachment: msgspec.Raw = msgspec.Raw(b"")
    content: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")
    compactMetadata: msgspec.Raw = msgspec.Raw(b"")


class LooseHead(msgspec.Struct, gc=False):
    """The tolerant path, for records whose fields have unexpected types."""

    type: Any = None
    subtype: Any = None
    uuid: Any = UNSET
    parentUuid: Any = UNSET
    logicalParentUuid: Any = None
    sessionId: Any = UNSET
    isSidechain: Any = None
    timestamp: Any = UNSET
    cwd: Any = UNSET
    version: Any = UNSET
    isCompactSummary: Any = None
    isMeta: Any = None
    sourceToolAssistantUUID: Any = None
    leafUuid: Any = UNSET
    explicit: Any = None
    lastPrompt: Any = None
    messageId: Any = None
    agentId: Any = None
