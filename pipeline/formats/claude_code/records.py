"""Small readings of one Claude Code line that validation, checks and the resume proof need.

Each takes a line's bytes (terminator removed) and returns a plain typed answer; lines that do
not parse get the answer a missing record would.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats.claude_code.content import joined_text
from pipeline.formats.json_values import parse_object, plain_strings, string_pieces

__all__ = [
    "MASK_STAMP_KEY",
    "CompactMetadataRefs",
    "PreservedMessages",
    "PreservedSegment",
    "RefState",
    "compact_metadata",
    "declared_by_ours",
    "has_internal_field",
    "message_text",
    "plain_strings",
    "record_strings",
    "summary_has_text",
]

_CONTENT_KEYS: Final = ("message", "attachment", "content", "summary", "toolUseResult", "lastPrompt")
_SEGMENT_KEYS: Final = ("headUuid", "anchorUuid", "tailUuid")


class RefState(StrEnum):
    """Whether a compactMetadata reference member is there and well formed."""

    ABSENT = "absent"
    VALID = "valid"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class PreservedMessages:
    """`compactMetadata.preservedMessages` (or the older `preserved`): kept uuids and their anchor."""

    state: RefState
    uuids: tuple[str, ...] = ()  # only when every element is a non-empty string
    uuids_valid: bool = False
    anchor: str | None = None


@dataclass(frozen=True, slots=True)
class PreservedSegment:
    """`compactMetadata.preservedSegment`: the head, anchor and tail uuids of the kept suffix."""

    state: RefState
    head: str = ""
    anchor: str = ""
    tail: str = ""


@dataclass(frozen=True, slots=True)
class CompactMetadataRefs:
    """The references a compact boundary's metadata makes to records of the file."""

    preserved: PreservedMessages
    segment: PreservedSegment


def message_text(line: bytes) -> tuple[str | None, str, bool]:
    """(role, joined text blocks, is compact summary) of one record line, for contract checks."""
    record = parse_object(line)
    message = record.get("message") if record is not None else None
    if record is None or not isinstance(message, dict):
        return None, "", False
    role = message.get("role") if isinstance(message.get("role"), str) else None
    return role, joined_text(message.get("content")), record.get("isCompactSummary") is True


def record_strings(line: bytes) -> Iterator[str]:
    """The content strings of one line: message, attachment, result and summary text.

    A line that is not a JSON object yields the pieces between its quotes, so text inside a
    truncated or malformed line is still covered.
    """
    record = parse_object(line)
    if record is None:
        yield from string_pieces(line)
        return
    for key in _CONTENT_KEYS:
        if key in record:
            yield from plain_strings(record[key])


def summary_has_text(line: bytes) -> bool:
    """Whether a compact summary record carries non-empty user text (a string or text blocks)."""
    record = parse_object(line)
    message = record.get("message") if record is not None else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # older versions wrap the summary in one text block
        content = "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return isinstance(content, str) and bool(content.strip())


def has_internal_field(line: bytes) -> bool:
    """Whether a record carries a top-level member named like an internal planning field (`_x`)."""
    record = parse_object(line)
    return record is not None and any(key.startswith("_") for key in record)


def _preserved(metadata: dict[str, Any]) -> PreservedMessages:
    preserved = metadata.get("preservedMessages", metadata.get("preserved"))
    if preserved is None:
        return PreservedMessages(RefState.ABSENT)
    if not isinstance(preserved, dict):
        return PreservedMessages(RefState.MALFORMED)
    uuids, anchor = preserved.get("uuids"), preserved.get("anchorUuid")
    valid = isinstance(uuids, list) and all(isinstance(u, str) and u for u in uuids)
    return PreservedMessages(
        RefState.VALID,
        tuple(uuids) if valid and isinstance(uuids, list) else (),
        valid,
        anchor if isinstance(anchor, str) else None,
    )


def _segment(metadata: dict[str, Any]) -> PreservedSegment:
    segment = metadata.get("preservedSegment")
    if segment is None:
        return PreservedSegment(RefState.ABSENT)
    if not isinstance(segment, dict) or any(not isinstance(segment.get(k), str) for k in _SEGMENT_KEYS):
        return PreservedSegment(RefState.MALFORMED)
    return PreservedSegment(RefState.VALID, *(segment[k] for k in _SEGMENT_KEYS))


def compact_metadata(line: bytes) -> CompactMetadataRefs | None:
    """The references of a compact boundary's `compactMetadata`, or None when it has none."""
    record = parse_object(line)
    metadata = record.get("compactMetadata") if record is not None else None
    if not isinstance(metadata, dict):
        return None
    return CompactMetadataRefs(_preserved(metadata), _segment(metadata))


MASK_STAMP_KEY: Final = "sessionCompaction"  # on the `last-prompt` of a masked candidate (no boundary)


def declared_by_ours(data: bytes, key: str) -> Iterator[Any]:
    """Each entry a compaction of ours lists under `sessionCompaction.<key>`: in its compact
    boundary's `compactMetadata`, or, for a masked candidate (which has no boundary of ours), on
    its `last-prompt` record.

    A line is parsed only when it names the key and a boundary or a pointer; one that does not
    parse declares nothing.
    """
    needle = f'"{key}"'.encode()
    for line in data.split(b"\n"):
        if needle not in line or (b'"compact_boundary"' not in line and b'"last-prompt"' not in line):
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        holder = record if record.get("type") == "last-prompt" else record.get("compactMetadata") or {}
        ours = holder.get(MASK_STAMP_KEY) if isinstance(holder, dict) else None
        yield from (ours.get(key) or ()) if isinstance(ours, dict) else ()
