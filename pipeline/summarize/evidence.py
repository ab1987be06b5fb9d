"""Evidence: the summarized lines, re-read by offset and turned into typed, immutable items.

This is the only place in the summarizer that sees raw JSON. It reads exactly the lines it is
given (the caller passes only the `summary` set, so excluded records can never reach a summary)
and emits one `EvidenceItem` per meaningful content block, in line order, then block order.
A tool result is matched to its call's name only when the call is among those lines too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final, TypeAlias

import orjson

from pipeline.core.index import LineIndex
from pipeline.errors import CompactionError

__all__ = [
    "EvidenceItem",
    "EvidenceKind",
    "EvidenceLineOutOfRange",
    "FrozenJson",
    "extract_evidence",
    "freeze_json",
]

FrozenJson: TypeAlias = "bool | int | float | str | tuple[FrozenJson, ...] | Mapping[str, FrozenJson] | None"

COMMAND_PREFIXES: Final = ("<command-", "<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
"""User text Claude Code writes for slash commands and `!` shell escapes, not typed prompts."""
NOTICE_PREFIXES: Final = ("<task-notification>", "[Request interrupted by user")
"""User text Claude Code writes on its own (background task notices, interruptions)."""
API_ERROR_DEPTH: Final = 4  # nesting of `error` objects searched for a status and message
_EMPTY: Final[Mapping[str, FrozenJson]] = MappingProxyType({})
_RECORD_TYPES: Final = frozenset({"user", "assistant", "system"})


class EvidenceKind(StrEnum):
    """What one piece of evidence is."""

    HUMAN_PROMPT = "human-prompt"
    COMMAND = "command"
    ASSISTANT_TEXT = "assistant-text"
    THINKING = "thinking"
    TOOL_CALL = "tool-call"
    TOOL_RESULT = "tool-result"
    PRIOR_SUMMARY = "prior-summary"
    SYSTEM_ERROR = "system-error"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One content block of one summarized line (lines are 1-based)."""

    line: int
    kind: EvidenceKind
    text: str = ""
    tool_name: str | None = None
    tool_id: str | None = None
    tool_input: Mapping[str, FrozenJson] = field(default_factory=lambda: _EMPTY, hash=False)
    is_error: bool = False
    timestamp: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool_input, MappingProxyType):  # built by hand: freeze a caller's dict
            frozen = freeze_json(dict(self.tool_input))
            object.__setattr__(self, "tool_input", frozen)


class EvidenceLineOutOfRange(CompactionError):
    """A line asked for is not a line of the file (a caller bug; never read around it)."""

    def __init__(self, line: int, total: int) -> None:
        self.line, self.total = line, total
        super().__init__(f"line {line} is outside the file's {total} lines")


def freeze_json(value: Any) -> FrozenJson:
    """A deeply immutable copy of parsed JSON: objects become read-only mappings, arrays tuples."""
    if isinstance(value, dict):
        return MappingProxyType({str(key): freeze_json(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(freeze_json(item) for item in value)
    return value  # type: ignore[no-any-return]  # str, int, float, bool or None


def extract_evidence(data: bytes, index: LineIndex, lines: Sequence[int]) -> tuple[EvidenceItem, ...]:
    """Evidence from exactly `lines` (1-based, any order, duplicates ignored), in line order.

    Nothing outside `lines` is read; a number that is not a line of the file raises
    EvidenceLineOutOfRange. Lines that are not user, assistant or system records, or
    that do not parse, contribute nothing.
    """
    wanted = sorted(set(lines))
    if wanted and (wanted[0] < 1 or wanted[-1] > len(index)):
        raise EvidenceLineOutOfRange(wanted[0] if wanted[0] < 1 else wanted[-1], len(index))
    names: dict[str, str] = {}
    items: list[EvidenceItem] = []
    for line in wanted:
        record = index.record(line)
        if record is None or record.type not in _RECORD_TYPES:
            continue
        try:
            value = orjson.loads(index.raw_line(data, line))
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            items.extend(_items_of(value, line, names))
    return tuple(items)


def _items_of(value: dict[str, Any], line: int, names: dict[str, str]) -> Iterator[EvidenceItem]:
    stamp = value.get("timestamp")
    timestamp = stamp if isinstance(stamp, str) else None
    kind = value.get("type")
    if kind == "system":
        yield from _system_items(value, line, timestamp)
        return
    message = value.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if kind == "assistant":
        yield from _assistant_items(content, line, timestamp, names)
    else:
        yield from _user_items(value, message, line, timestamp, names)


def _assistant_items(
    content: Any, line: int, timestamp: str | None, names: dict[str, str]
) -> Iterator[EvidenceItem]:
    if isinstance(content, str):
        if content.strip():
            yield EvidenceItem(line, EvidenceKind.ASSISTANT_TEXT, content, timestamp=timestamp)
        return
    for block in _blocks(content):
        block_type = block.get("type")
        if block_type == "text" and _nonblank(block.get("text")):
            yield EvidenceItem(line, EvidenceKind.ASSISTANT_TEXT, block["text"], timestamp=timestamp)
        elif block_type == "thinking" and _nonblank(block.get("thinking")):
            yield EvidenceItem(line, EvidenceKind.THINKING, block["thinking"], timestamp=timestamp)
        elif block_type == "tool_use":
            yield _tool_call(block, line, timestamp, names)


def _tool_call(
    block: dict[str, Any], line: int, timestamp: str | None, names: dict[str, str]
) -> EvidenceItem:
    name = block.get("name") if isinstance(block.get("name"), str) else None
    tool_id = block.get("id") if isinstance(block.get("id"), str) else None
    if tool_id is not None and name is not None:
        names[tool_id] = name
    raw_input = block.get("input")
    frozen = freeze_json(raw_input) if isinstance(raw_input, dict) else _EMPTY
    assert isinstance(frozen, Mapping)
    return EvidenceItem(
        line, EvidenceKind.TOOL_CALL, tool_name=name, tool_id=tool_id, tool_input=frozen, timestamp=timestamp
    )


def _user_items(
    value: dict[str, Any], message: dict[str, Any], line: int, timestamp: str | None, names: dict[str, str]
) -> Iterator[EvidenceItem]:
    content = message.get("content")
    text = _joined_text(content)
    if value.get("isCompactSummary") is True:
        yield EvidenceItem(line, EvidenceKind.PRIOR_SUMMARY, text, timestamp=timestamp)
        return
    results = [block for block in _blocks(content) if block.get("type") == "tool_result"]
    for block in results:
        yield _tool_result(block, line, timestamp, names)
    if results or not text.strip():
        return
    if message.get("role") != "user" or value.get("isMeta") is True:
        yield EvidenceItem(line, EvidenceKind.OTHER, text, timestamp=timestamp)
        return
    head = text.lstrip()
    if head.startswith(COMMAND_PREFIXES):
        kind = EvidenceKind.COMMAND
    elif head.startswith(NOTICE_PREFIXES):
        kind = EvidenceKind.OTHER
    else:
        kind = EvidenceKind.HUMAN_PROMPT
    yield EvidenceItem(line, kind, text, timestamp=timestamp)


def _tool_result(
    block: dict[str, Any], line: int, timestamp: str | None, names: dict[str, str]
) -> EvidenceItem:
    raw_id = block.get("tool_use_id") or block.get("toolUseID")
    tool_id = raw_id if isinstance(raw_id, str) else None
    return EvidenceItem(
        line,
        EvidenceKind.TOOL_RESULT,
        _joined_text(block.get("content")),
        tool_name=names.get(tool_id) if tool_id is not None else None,
        tool_id=tool_id,
        is_error=block.get("is_error") is True,
        timestamp=timestamp,
    )


def _system_items(value: dict[str, Any], line: int, timestamp: str | None) -> Iterator[EvidenceItem]:
    subtype = value.get("subtype")
    content = value.get("content")
    text = content if isinstance(content, str) else ""
    if subtype == "local_command":
        if text.strip():
            yield EvidenceItem(line, EvidenceKind.COMMAND, text, timestamp=timestamp)
    elif subtype == "api_error":
        text = text or _api_error_text(value)
        yield EvidenceItem(line, EvidenceKind.SYSTEM_ERROR, text, is_error=True, timestamp=timestamp)
    elif subtype != "compact_boundary" and text.strip():
        yield EvidenceItem(line, EvidenceKind.OTHER, text, timestamp=timestamp)


def _api_error_text(value: dict[str, Any]) -> str:
    """A one-line description of an `api_error` record from its status, type and message."""
    parts = ["API error"]
    error = value.get("error")
    for _ in range(API_ERROR_DEPTH):
        if not isinstance(error, dict):
            break
        for key in ("status", "type", "message"):
            item = error.get(key)
            if isinstance(item, str | int) and not isinstance(item, bool) and str(item) not in parts:
                parts.append(str(item))
        error = error.get("error")
    attempt, limit = value.get("retryAttempt"), value.get("maxRetries")
    if isinstance(attempt, int) and isinstance(limit, int):
        parts.append(f"(retry {attempt} of {limit})")
    return " ".join(parts)


def _blocks(content: Any) -> Iterator[dict[str, Any]]:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                yield block


def _joined_text(content: Any) -> str:
    """String content as is, or the text blocks joined by newlines (images and others ignored)."""
    if isinstance(content, str):
        return content
    return "\n".join(
        block["text"]
        for block in _blocks(content)
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def _nonblank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())
