"""Decode a Gemini CLI chat JSONL file line by line, as Gemini CLI's loader tells records apart.

Gemini CLI (`loadConversationRecord`) parses each non-blank line on its own and skips one that
does not parse; a record is, in this order of tests: a rewind (`$rewindTo` a string), a message
(`id` a string), an update (`$set` an object; a `messages` array in it is a full snapshot), or a
header (`sessionId` and `projectHash` strings, repeated after each resume). Anything else is read
and ignored. The raw JSON of each record stays inside this package.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from pipeline.formats.line_guard import LineLimits, readable_utf8, too_deep
from pipeline.read.lines import BOM, iter_line_spans
from pipeline.vocabulary import LineKind

__all__ = ["ChatFile", "ChatLine", "RecordKind", "classify", "decode_chat", "is_str"]


class RecordKind(StrEnum):
    """What Gemini CLI's loader makes of one parsed line."""

    REWIND = "rewind"
    MESSAGE = "message"
    SET = "set"
    HEADER = "header"
    OTHER = "other"  # parsed, then ignored by Gemini CLI


def is_str(value: object) -> bool:
    """A JSON string (what Gemini CLI's `isStringProperty` tests)."""
    return isinstance(value, str)


def classify(record: Mapping[str, Any]) -> RecordKind:
    """The kind of one record, tested in Gemini CLI's order."""
    if is_str(record.get("$rewindTo")):
        return RecordKind.REWIND
    if is_str(record.get("id")):
        return RecordKind.MESSAGE
    if isinstance(record.get("$set"), dict):
        return RecordKind.SET
    if is_str(record.get("sessionId")) and is_str(record.get("projectHash")):
        return RecordKind.HEADER
    return RecordKind.OTHER


@dataclass(frozen=True, slots=True)
class ChatLine:
    """One record: its 1-based line, kind, parsed value, and whether bad UTF-8 was replaced."""

    line: int
    kind: RecordKind
    value: Mapping[str, Any]
    replaced_utf8: bool = False


@dataclass(frozen=True, slots=True)
class ChatFile:
    """Every physical line of a chat file: its kind, its record when it is one, where it is."""

    offsets: tuple[int, ...]
    lengths: tuple[int, ...]
    kinds: tuple[LineKind, ...]
    records: tuple[ChatLine | None, ...]
    has_bom: bool
    crlf_lines: int
    final_newline: bool

    def __len__(self) -> int:
        return len(self.kinds)

    def lines(self) -> Iterator[ChatLine]:
        """The records, in file order."""
        return (record for record in self.records if record is not None)

    def raw_line(self, data: bytes, line: int) -> bytes:
        """The bytes of line `line` (1-based), without its LF."""
        start = self.offsets[line - 1]
        return data[start : start + self.lengths[line - 1]]


def _not_json(line: bytes) -> LineKind:
    stripped = line.rstrip()
    truncated = stripped.startswith(b"{") and not stripped.endswith(b"}")
    return LineKind.TRUNCATED if truncated else LineKind.NOT_JSON


def decode_line(line: bytes, number: int, limits: LineLimits) -> ChatLine | LineKind:
    """One line's record, or the kind of line it is when it holds none."""
    if len(line) > limits.max_line_bytes:
        return LineKind.TOO_LONG
    if too_deep(line, limits.max_json_depth):
        return LineKind.NESTING_TOO_DEEP
    readable = readable_utf8(line)
    try:
        value = orjson.loads(readable)
    except orjson.JSONDecodeError:
        return _not_json(readable)
    if not isinstance(value, dict):
        return LineKind.NOT_OBJECT
    return ChatLine(number, classify(value), value, readable is not line)


def decode_chat(data: bytes, limits: LineLimits) -> ChatFile:
    """Index every physical line of a chat file's bytes."""
    offsets, lengths, kinds, records, crlf = [], [], [], [], 0
    for number, (start, end) in enumerate(iter_line_spans(data), 1):
        offsets.append(start)
        lengths.append(end - start)
        content_end = end - 1 if end > start and data[end - 1] == 0x0D else end
        crlf += content_end != end
        content_start = start + len(BOM) if start == 0 and data.startswith(BOM) else start
        line = data[content_start:content_end]
        decoded = decode_line(line, number, limits) if line.strip() else LineKind.BLANK
        kinds.append(LineKind.RECORD if isinstance(decoded, ChatLine) else decoded)
        records.append(decoded if isinstance(decoded, ChatLine) else None)
    return ChatFile(
        offsets=tuple(offsets),
        lengths=tuple(lengths),
        kinds=tuple(kinds),
        records=tuple(records),
        has_bom=data.startswith(BOM),
        crlf_lines=crlf,
        final_newline=data.endswith(b"\n"),
    )
