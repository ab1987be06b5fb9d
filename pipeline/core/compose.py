"""Composition: the compacted transcript's bytes, exactly as seed 004 lays them out.

Order: the projected control prefix, side snapshots, one `system`/`compact_boundary` record and
its `isCompactSummary` user child, the raw suffix (every byte as in the source except the first
record's `parentUuid`), and a final `last-prompt` deep-copied from the source pointer with its
leaf updated. New records are serialized like Claude Code writes them (compact JSON, its key
order), which is what lets Claude Code find the boundary in large files.
"""

from __future__ import annotations

import uuid as uuid_module
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from pipeline.core.index import LineIndex
from pipeline.errors import CompactionError

__all__ = [
    "BOUNDARY_CONTENT",
    "SUMMARY_PREAMBLE",
    "ComposeError",
    "ComposeInput",
    "ComposedTranscript",
    "compose",
    "replace_parent",
]

SUMMARY_PREAMBLE: Final = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The earlier part is summarized below; the most recent messages follow verbatim."
)
BOUNDARY_CONTENT: Final = "Conversation compacted"
_COMMON_KEYS: Final = ("userType", "cwd", "sessionId", "version", "gitBranch", "slug", "entrypoint")
_COMMON_SAMPLE: Final = 64  # kept records sampled for the shared fields of the new pair


class ComposeError(CompactionError):
    """The compacted transcript cannot be built (a code, never content)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(code)


@dataclass(frozen=True, slots=True)
class ComposeInput:
    """Everything composition needs; all of it already decided by earlier stages."""

    data: bytes
    index: LineIndex
    raw_lines: tuple[int, ...]  # the kept suffix in chain order
    side_lines: tuple[int, ...]
    control_lines: tuple[int, ...]
    summary_text: str
    pointer_line: int | None
    session_id: str | None  # the session the suffix belongs to (lineage's current one)
    logical_parent: str | None  # the last summarized record's uuid
    metadata: Mapping[str, Any]  # compactMetadata fields decided by the caller
    pre_tokens: int
    now: datetime | None = None  # injected for deterministic tests


@dataclass(frozen=True, slots=True)
class ComposedTranscript:
    """The candidate's bytes and the identities of what was added."""

    data: bytes
    boundary_uuid: str
    summary_uuid: str
    leaf_uuid: str | None
    source_lines: tuple[int | None, ...]  # per output line: the source line, or None for a new record


def _find_top_level_value(line: bytes, key: bytes) -> tuple[int, int] | None:
    """Byte span of a top-level member's value, found by a small JSON scan (strings and nesting)."""
    depth = 0
    position = 0
    size = len(line)
    expect_key = False
    while position < size:
        byte = line[position]
        if byte == 0x22:  # a string
            end = _string_end(line, position)
            if depth == 1 and expect_key and line[position + 1 : end] == key:
                start = end + 1
                while line[start] in b" \t":
                    start += 1
                start += 1  # the colon
                while line[start] in b" \t":
                    start += 1
                return start, _value_end(line, start)
            expect_key = False
            position = end + 1
            continue
        if byte == 0x7B:
            depth += 1
            expect_key = depth == 1
        elif byte == 0x5B:
            depth += 1
            expect_key = False
        elif byte in b"}]":
            depth -= 1
        elif byte == 0x2C:
            expect_key = depth == 1
        position += 1
    return None


def _string_end(line: bytes, opening: int) -> int:
    """Index of the quote closing the JSON string that opens at `opening` (escapes skipped)."""
    end = opening + 1
    while True:
        end = line.index(b'"', end)
        backslashes = 0
        while line[end - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return end
        end += 1


def _value_end(line: bytes, start: int) -> int:
    if line[start] == 0x22:
        return _string_end(line, start) + 1
    end = start
    while end < len(line) and line[end] not in b",}":
        end += 1
    return end


def replace_parent(line: bytes, new_parent: str) -> bytes:
    """The line with only its top-level `parentUuid` value replaced (inserted when absent)."""
    value = orjson.dumps(new_parent)
    prefix = b'{"parentUuid":'
    if line.startswith(prefix):  # Claude Code writes parentUuid first: no scan needed
        start = len(prefix)
        return line[:start] + value + line[_value_end(line, start) :]
    span = _find_top_level_value(line, b"parentUuid")
    if span is None:
        return b'{"parentUuid":' + value + b"," + line[1:]
    return line[: span[0]] + value + line[span[1] :]


def _common_fields(
    data: bytes, index: LineIndex, lines: Sequence[int], session_id: str | None
) -> dict[str, Any]:
    """Most frequent shared fields among kept records (seed: common_fields)."""
    counts: dict[str, Counter[Any]] = {key: Counter() for key in _COMMON_KEYS}
    for line in lines[:_COMMON_SAMPLE]:
        try:
            record = orjson.loads(index.raw_line(data, line))
        except orjson.JSONDecodeError:
            continue
        for key in _COMMON_KEYS:
            value = record.get(key)
            if isinstance(value, str | int | float | bool) and value != "":
                counts[key][value] += 1
    common = {key: counter.most_common(1)[0][0] for key, counter in counts.items() if counter}
    if session_id:
        common["sessionId"] = session_id
    return common


def _timestamp(now: datetime) -> str:
    return now.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _boundary(
    common: Mapping[str, Any], uid: str, logical_parent: str | None, stamp: str, metadata: Mapping[str, Any]
) -> dict[str, Any]:
    record: dict[str, Any] = {"parentUuid": None}
    if logical_parent:
        record["logicalParentUuid"] = logical_parent
    record["isSidechain"] = False
    record.update({key: common[key] for key in _COMMON_KEYS if key in common})
    record.update(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": BOUNDARY_CONTENT,
            "isMeta": False,
            "timestamp": stamp,
            "uuid": uid,
            "level": "info",
            "compactMetadata": dict(metadata),
        }
    )
    return record


def _summary(common: Mapping[str, Any], uid: str, parent: str, stamp: str, text: str) -> dict[str, Any]:
    record: dict[str, Any] = {"parentUuid": parent, "isSidechain": False}
    record.update({key: common[key] for key in _COMMON_KEYS if key in common})
    record.update(
        {
            "type": "user",
            "message": {"role": "user", "content": text},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": uid,
            "timestamp": stamp,
        }
    )
    return record


def _pointer(data: bytes, index: LineIndex, pointer_line: int | None, leaf: dict[str, Any]) -> bytes | None:
    """The source pointer deep-copied (unknown fields survive) with only its leaf projected."""
    if pointer_line is None:
        return None
    try:
        pointer = orjson.loads(index.raw_line(data, pointer_line))
    except orjson.JSONDecodeError as exc:
        raise ComposeError("pointer-unreadable") from exc
    pointer["leafUuid"] = leaf.get("uuid")
    if "sessionId" in pointer and isinstance(leaf.get("sessionId"), str):
        pointer["sessionId"] = leaf["sessionId"]
    return orjson.dumps(pointer)


def compose(spec: ComposeInput) -> ComposedTranscript:
    """Lay out the compacted transcript (pure: no I/O, deterministic given `now`)."""
    if not spec.raw_lines:
        raise ComposeError("empty-raw-suffix")
    data, index = spec.data, spec.index
    boundary_uuid, summary_uuid = str(uuid_module.uuid4()), str(uuid_module.uuid4())
    stamp = _timestamp(spec.now or datetime.now(UTC))
    common = _common_fields(data, index, spec.raw_lines, spec.session_id)
    first, last = index.record(spec.raw_lines[0]), index.record(spec.raw_lines[-1])
    if first is None or last is None or first.uuid is None or last.uuid is None:
        raise ComposeError("raw-suffix-without-uuid")
    metadata = dict(spec.metadata)
    metadata["preTokens"] = spec.pre_tokens
    metadata["preservedSegment"] = {"headUuid": first.uuid, "anchorUuid": summary_uuid, "tailUuid": last.uuid}
    lines: list[bytes] = []
    origins: list[int | None] = []
    for line in (*spec.control_lines, *spec.side_lines):
        lines.append(index.raw_line(data, line))
        origins.append(line)
    lines.append(orjson.dumps(_boundary(common, boundary_uuid, spec.logical_parent, stamp, metadata)))
    lines.append(orjson.dumps(_summary(common, summary_uuid, boundary_uuid, stamp, spec.summary_text)))
    origins.extend((None, None))
    for position, line in enumerate(spec.raw_lines):
        raw = index.raw_line(data, line)
        lines.append(replace_parent(raw, summary_uuid) if position == 0 else raw)
        origins.append(line)
    pointer = _pointer(data, index, spec.pointer_line, {"uuid": last.uuid, "sessionId": last.session})
    if pointer is not None:
        lines.append(pointer)
        origins.append(None)
    return ComposedTranscript(
        b"\n".join(lines) + b"\n", boundary_uuid, summary_uuid, last.uuid, tuple(origins)
    )
