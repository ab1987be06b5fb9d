"""Byte spans of JSON members in a Claude Code line, for edits that re-serialize nothing.

`scan_object` walks one JSON object in place and returns each member's key (decoded, so an
escaped spelling such as `"pa\\u0067es"` is recognized as `pages`) with the byte offsets of the
key and its value; nested values are skipped with C-level searches, never parsed into Python
objects. `deletion_span` gives the exact bytes that remove one member and one adjacent comma,
leaving every other byte of the line as it was. Malformed input raises `SpanError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

from pipeline.errors import CompactionError

__all__ = [
    "Member",
    "ObjectSpan",
    "SpanError",
    "array_elements",
    "deletion_span",
    "member_value",
    "scan_object",
    "string_value",
    "value_end",
]

_WHITESPACE: Final = b" \t\n\r"
_STRUCTURE: Final = re.compile(rb'["\[\]{}]')  # what matters inside a nested value
_SCALAR_END: Final = re.compile(rb"[,\]}\s]")
_QUOTE, _BACKSLASH, _OPEN, _CLOSE = 0x22, 0x5C, 0x7B, 0x7D
_ARRAY_OPEN, _ARRAY_CLOSE, _COLON, _COMMA = 0x5B, 0x5D, 0x3A, 0x2C


class SpanError(CompactionError):
    """The bytes are not the JSON the scanner expected at an offset (no content is carried)."""

    def __init__(self, offset: int, expected: str) -> None:
        self.offset = offset
        self.expected = expected
        super().__init__(f"expected {expected} at byte {offset}")


@dataclass(frozen=True, slots=True)
class Member:
    """One `"key": value` member: the decoded key and the offsets of its parts (end exclusive)."""

    key: str
    start: int  # the key's opening quote
    value_start: int
    value_end: int


@dataclass(frozen=True, slots=True)
class ObjectSpan:
    """An object's braces and members, in order."""

    start: int  # the opening brace
    end: int  # just past the closing brace
    members: tuple[Member, ...]

    def find(self, key: str) -> tuple[Member, ...]:
        """Every member with this key (more than one means the object is ambiguous)."""
        return tuple(member for member in self.members if member.key == key)


def _skip_space(data: bytes, at: int) -> int:
    size = len(data)
    while at < size and data[at] in _WHITESPACE:
        at += 1
    return at


def _string_end(data: bytes, at: int) -> int:
    """Just past the string whose opening quote is at `at`."""
    position = at + 1
    while True:
        quote = data.find(b'"', position)
        if quote < 0:
            raise SpanError(at, "a closed string")
        backslashes = 0
        while data[quote - 1 - backslashes] == _BACKSLASH:
            backslashes += 1
        if backslashes % 2 == 0:
            return quote + 1
        position = quote + 1


def _container_end(data: bytes, at: int) -> int:
    """Just past the object or array opening at `at`, skipping strings whole."""
    depth = 0
    position = at
    while True:
        found = _STRUCTURE.search(data, position)
        if found is None:
            raise SpanError(at, "a closed object or array")
        position = found.start()
        byte = data[position]
        if byte == _QUOTE:
            position = _string_end(data, position)
            continue
        depth += 1 if byte in (_OPEN, _ARRAY_OPEN) else -1
        position += 1
        if depth == 0:
            return position


def value_end(data: bytes, at: int) -> int:
    """Just past the JSON value starting at `at`."""
    if at >= len(data):
        raise SpanError(at, "a value")
    byte = data[at]
    if byte == _QUOTE:
        return _string_end(data, at)
    if byte in (_OPEN, _ARRAY_OPEN):
        return _container_end(data, at)
    found = _SCALAR_END.search(data, at)
    end = found.start() if found else len(data)
    if end == at:
        raise SpanError(at, "a value")
    return end


def string_value(data: bytes, start: int, end: int) -> str | None:
    """The decoded string a value span holds, or None when it is not a string."""
    if data[start] != _QUOTE:
        return None
    raw = data[start:end]
    if _BACKSLASH not in raw:
        return raw[1:-1].decode("utf-8", "surrogateescape")
    decoded = json.loads(raw)
    return decoded if isinstance(decoded, str) else None


def scan_object(data: bytes, at: int = 0) -> ObjectSpan:
    """The object starting at `at` (after optional whitespace) and its members' spans."""
    position = _skip_space(data, at)
    if position >= len(data) or data[position] != _OPEN:
        raise SpanError(position, "an object")
    start, position = position, _skip_space(data, position + 1)
    members: list[Member] = []
    if position < len(data) and data[position] == _CLOSE:
        return ObjectSpan(start, position + 1, ())
    while True:
        if position >= len(data) or data[position] != _QUOTE:
            raise SpanError(position, "a key")
        key_end = _string_end(data, position)
        key = string_value(data, position, key_end)
        colon = _skip_space(data, key_end)
        if key is None or colon >= len(data) or data[colon] != _COLON:
            raise SpanError(colon, "a colon")
        begin = _skip_space(data, colon + 1)
        end = value_end(data, begin)
        members.append(Member(key, position, begin, end))
        position = _skip_space(data, end)
        if position < len(data) and data[position] == _COMMA:
            position = _skip_space(data, position + 1)
            continue
        if position < len(data) and data[position] == _CLOSE:
            return ObjectSpan(start, position + 1, tuple(members))
        raise SpanError(position, "a comma or closing brace")


def member_value(data: bytes, member: Member) -> ObjectSpan | None:
    """The member's value as an object, or None when it is something else."""
    if data[member.value_start] != _OPEN:
        return None
    return scan_object(data, member.value_start)


def array_elements(data: bytes, start: int) -> tuple[tuple[int, int], ...] | None:
    """(start, end) of each element of the array at `start`, or None when it is not an array."""
    if data[start] != _ARRAY_OPEN:
        return None
    elements: list[tuple[int, int]] = []
    position = _skip_space(data, start + 1)
    if position < len(data) and data[position] == _ARRAY_CLOSE:
        return ()
    while True:
        end = value_end(data, position)
        elements.append((position, end))
        position = _skip_space(data, end)
        if position < len(data) and data[position] == _COMMA:
            position = _skip_space(data, position + 1)
            continue
        if position < len(data) and data[position] == _ARRAY_CLOSE:
            return tuple(elements)
        raise SpanError(position, "a comma or closing bracket")


def deletion_span(span: ObjectSpan, member: Member) -> tuple[int, int]:
    """The bytes that remove `member` and exactly one adjacent comma from its object.

    A member followed by another goes with everything up to that next key (its comma and the
    spacing after it); the last of several goes with everything from the previous value's end
    (the comma before it); an only member goes alone, leaving the braces and their spacing.
    """
    members = span.members
    position = members.index(member)
    if position + 1 < len(members):
        return member.start, members[position + 1].start
    if position > 0:
        return members[position - 1].value_end, member.value_end
    return member.start, member.value_end
