"""The content of one Claude Code line, read into typed values for the stages that need text.

The index keeps only structural facts (`decode.py`); a stage that needs what a record says (the
summarizer's evidence, the resume model of Claude Code's context, the resume proof) reads the
line again here and gets frozen values: the record's kind and flags and one `Part` per content
block, tool inputs frozen. Parse failures are answered here, never raised past this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Final

import orjson

from pipeline.formats.frozen_json import EMPTY_INPUT, FrozenJson, freeze_json
from pipeline.formats.json_values import parse_object
from pipeline.formats.line_guard import too_deep
from pipeline.settings import READER_DEPTH_CEILING
from pipeline.vocabulary import RecordType

__all__ = [
    "EMPTY_INPUT",
    "FrozenJson",
    "Part",
    "RecordContent",
    "freeze_json",
    "iter_contents",
    "iter_line_contents",
    "joined_text",
    "parse_object",
    "parse_span",
    "part_text_at",
    "read_content",
    "read_content_at",
]

API_ERROR_DEPTH: Final = 4  # nesting of `error` objects searched for a status and message


@dataclass(frozen=True, slots=True)
class Part:
    """One content block of a message.

    `type_name` is the block's `type` as written; `text` the text of a text or thinking block, or
    the joined text of a tool result; `shown` the block as a Messages request shows it (a
    tool_use's input as JSON, a tool_result's `text` member or its content as JSON).
    """

    type_name: str
    text: str = ""
    tool_id: str | None = None
    tool_name: str | None = None
    tool_input: Mapping[str, FrozenJson] = field(default_factory=lambda: EMPTY_INPUT, hash=False)
    shown_source: Any = field(default="", compare=False, repr=False)  # what `shown` is rendered from
    is_error: bool = False
    loads_tools: bool = False  # a tool result made of `tool_reference` blocks (deferred tools)

    @property
    def shown(self) -> str:
        """Rendered when asked: a 50 MB tool output is not copied as JSON for readers that never look."""
        source = self.shown_source
        return source if isinstance(source, str) else json.dumps(source.value)


@dataclass(frozen=True, slots=True)
class RecordContent:
    """What one record says: kind, flags, message parts, system text."""

    type: str | None
    subtype: str | None
    role: str | None  # `message.role` when it is "user" or "assistant"
    is_meta: bool
    is_compact_summary: bool
    message_id: str | None
    model: str | None  # the model an assistant row names (`inPlaceOfModel` first)
    session_id: str | None
    timestamp: str | None
    has_message: bool
    string_content: str | None  # `message.content` when it is one string
    parts: tuple[Part, ...]
    system_text: str | None  # a system record's `content` string
    api_error: str | None  # a one-line description of an `api_error` system record

    @property
    def text(self) -> str:
        """String content as is, or the text blocks joined by newlines (images and others left out)."""
        if self.string_content is not None:
            return self.string_content
        return "\n".join(part.text for part in self.parts if part.type_name == "text")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _blocks(content: Any) -> Iterator[dict[str, Any]]:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                yield block


def joined_text(content: Any) -> str:
    """String content as is, or the text blocks of a block list joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"] for b in _blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


@dataclass(frozen=True, slots=True)
class _Json:
    """A JSON value `Part.shown` renders, kept apart from a plain string shown as it is."""

    value: Any


def _part(block: dict[str, Any]) -> Part:
    kind = str(block.get("type"))
    if kind == "text":
        return Part(kind, _str(block.get("text")) or "")
    if kind in ("thinking", "redacted_thinking"):
        return Part(kind, _str(block.get("thinking")) or "")
    if kind == "tool_use":
        raw = block.get("input")
        frozen = freeze_json(raw) if isinstance(raw, dict) else EMPTY_INPUT
        assert isinstance(frozen, Mapping)
        return Part(kind, "", _str(block.get("id")), _str(block.get("name")), frozen, _Json(raw))
    if kind == "tool_result":
        content = block.get("content")
        shown = str(block["text"]) if "text" in block else _Json(content)
        loads = isinstance(content, list) and any(p.get("type") == "tool_reference" for p in _blocks(content))
        tool_id = _str(block.get("tool_use_id") or block.get("toolUseID"))
        return Part(
            kind,
            joined_text(content),
            tool_id,
            shown_source=shown,
            is_error=block.get("is_error") is True,
            loads_tools=loads,
        )
    return Part(kind)


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


def parse_span(data: bytes, start: int, end: int) -> dict[str, Any] | None:
    """`parse_object(data[start:end])` without copying the line first (a line can be 50 MB)."""
    openers = data.count(b"[", start, end) + data.count(b"{", start, end)
    if openers > READER_DEPTH_CEILING and too_deep(data[start:end], READER_DEPTH_CEILING):
        return None
    try:
        value = orjson.loads(memoryview(data)[start:end])
    except orjson.JSONDecodeError:
        return parse_object(data[start:end])
    return value if isinstance(value, dict) else None


def _content_of(value: dict[str, Any]) -> RecordContent:
    message = value.get("message")
    has_message = isinstance(message, dict)
    msg: dict[str, Any] = message if isinstance(message, dict) else {}
    content = msg.get("content")
    role = msg.get("role") if msg.get("role") in ("user", "assistant") else None
    kind = _str(value.get("type"))
    replaced = value.get("inPlaceOfModel")
    system_text = _str(value.get("content")) if kind == RecordType.SYSTEM else None
    return RecordContent(
        type=kind,
        subtype=_str(value.get("subtype")),
        role=role,
        is_meta=value.get("isMeta") is True,
        is_compact_summary=value.get("isCompactSummary") is True,
        message_id=_str(msg.get("id")),
        model=replaced if isinstance(replaced, str) else _str(msg.get("model")),
        session_id=_str(value.get("sessionId")),
        timestamp=_str(value.get("timestamp")),
        has_message=has_message,
        string_content=content if isinstance(content, str) else None,
        parts=tuple(_part(block) for block in _blocks(content)),
        system_text=system_text,
        api_error=_api_error_text(value)
        if kind == RecordType.SYSTEM and value.get("subtype") == "api_error"
        else None,
    )


def read_content(line: bytes) -> RecordContent | None:
    """The content of one line (terminator removed), or None for a line that is not a JSON object."""
    value = parse_object(line)
    return _content_of(value) if value is not None else None


def read_content_at(data: bytes, start: int, end: int) -> RecordContent | None:
    """`read_content` of the line at `data[start:end]`, read in place."""
    value = parse_span(data, start, end)
    return _content_of(value) if value is not None else None


def part_text_at(data: bytes, start: int, end: int, part: int) -> str:
    """The `text` of the `part`-th content block of the line at `data[start:end]`, read in place.

    The same text `read_content_at(...).parts[part].text` gives for a tool result (its content's
    text joined), without building the line's other parts: a reader that keeps only where a
    tool output is reads it again here.
    """
    value = parse_span(data, start, end)
    message = value.get("message") if value is not None else None
    content = message.get("content") if isinstance(message, dict) else None
    block = next(islice(_blocks(content), part, None), None)
    return _part(block).text if block is not None else ""


def iter_contents(data: bytes) -> Iterator[RecordContent]:
    """The content of every readable object line of a whole file, in order."""
    return iter_line_contents(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"))


def iter_line_contents(lines: Iterable[bytes]) -> Iterator[RecordContent]:
    """The content of every readable object line, in order (lines streamed from a file, or split)."""
    for line in lines:
        content = read_content(line) if line.strip() else None
        if content is not None:
            yield content
