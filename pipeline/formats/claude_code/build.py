"""The records a compaction writes, in the exact shape and key order Claude Code writes them.

The new compact pair (a `system`/`compact_boundary` root and its `isCompactSummary` user child),
the projected `last-prompt` pointer, and the one byte-level edit a kept record gets: its
`parentUuid` replaced without re-serializing anything else. Records are compact JSON in Claude
Code's key order, which is what lets Claude Code find the boundary in large files. Values come in
typed; JSON is produced only here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from pipeline.formats import json_text
from pipeline.formats.claude_code.content import parse_object
from pipeline.formats.claude_code.records import MASK_STAMP_KEY
from pipeline.formats.claude_code.tasks import BackgroundAgent

__all__ = [
    "BOUNDARY_CONTENT",
    "COMMON_KEYS",
    "AgentStamp",
    "BoundStamp",
    "CompactionMetadata",
    "LeafStamp",
    "SharedFields",
    "ShellStamp",
    "StateStamp",
    "ToolMetadata",
    "attachment_line",
    "boundary_line",
    "claude_timestamp",
    "declaring_pointer",
    "launch_line",
    "new_pointer",
    "projected_pointer",
    "replace_parent",
    "shared_fields",
    "summary_line",
]

BOUNDARY_CONTENT: Final = "Conversation compacted"
COMMON_KEYS: Final = ("userType", "cwd", "sessionId", "version", "gitBranch", "slug", "entrypoint")
Scalar = str | int | float | bool


class LeafStamp(msgspec.Struct, frozen=True):
    """The leaf a compaction kept, and what chose it."""

    uuid: str | None
    source: str
    policy: str


class BoundStamp(msgspec.Struct, frozen=True, rename="camel"):
    """One tool output kept bounded: which, how (so a checker can re-apply it), and sizes."""

    tool_use_id: str
    part: str  # "content" (what the model reads) or "toolUseResult" (Claude Code's display copy)
    limit: int
    drop_media: bool
    original_bytes: int
    kept_bytes: int
    sha256: str
    cleared: bool = False  # replaced whole by Claude Code's cleared-result marker (masking)


class StateStamp(msgspec.Struct, frozen=True, rename="camel"):
    """One summarized attachment record carried after the summary so Claude Code folds the same
    resume state: its source line (1-based), kind and uuid."""

    line: int
    kind: str
    uuid: str


class ShellStamp(msgspec.Struct, frozen=True, rename="camel"):
    """A background shell carried after the summary (`pipeline.formats.claude_code.tasks`): its
    task and tool_use ids, the source line that started it (1-based), and the uuid of the
    `task_status` record written for it."""

    task_id: str
    tool_use_id: str
    line: int
    uuid: str


class AgentStamp(msgspec.Struct, frozen=True, rename="camel"):
    """A background agent carried after the summary (`pipeline.formats.claude_code.tasks`): its
    agent id, the source line of its launch result (1-based), and the uuid of the record written
    to carry that result."""

    agent_id: str
    line: int
    uuid: str


class ToolMetadata(msgspec.Struct, frozen=True, rename="camel"):
    """What this tool records about its compaction (`compactMetadata.sessionCompaction`)."""

    tool: str
    tool_version: str
    engine: str
    preserve_mode: str
    leaf: LeafStamp
    strict_status: str
    source_sha256: str
    counts: dict[str, int]
    digests: dict[str, str]
    pre_estimated_tokens: int
    post_estimated_tokens: int
    cut_reasons: list[str]
    bounded_tool_outputs: list[BoundStamp] = msgspec.field(default_factory=list)
    projected_state: list[StateStamp] = msgspec.field(default_factory=list)
    carried_background_shells: list[ShellStamp] = msgspec.field(default_factory=list)
    carried_background_agents: list[AgentStamp] | msgspec.UnsetType = msgspec.UNSET


class PreservedSegmentStamp(msgspec.Struct, frozen=True, rename="camel"):
    head_uuid: str
    anchor_uuid: str
    tail_uuid: str


class CompactionMetadata(msgspec.Struct, frozen=True, rename="camel"):
    """A boundary's `compactMetadata`, in the key order it is written."""

    trigger: str
    session_compaction: ToolMetadata
    pre_tokens: int
    preserved_segment: PreservedSegmentStamp
    # Deferred tools the summarized span loaded (ToolSearch's tool references): Claude Code keeps
    # sending their definitions after a boundary that names them (`state.discovered_tools`).
    pre_compact_discovered_tools: list[str] | msgspec.UnsetType = msgspec.UNSET


def claude_timestamp(moment: datetime) -> str:
    """A moment as Claude Code writes `timestamp` members: UTC, milliseconds, a `Z`."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class SharedFields:
    """The most frequent shared envelope fields of kept records, in Claude Code's key order."""

    pairs: tuple[tuple[str, Scalar], ...]

    def members(self) -> dict[str, Scalar]:
        return dict(self.pairs)


def shared_fields(lines: Iterable[bytes], session_id: str | None) -> SharedFields:
    """The commonest `COMMON_KEYS` values among some records (seed: common_fields)."""
    counts: dict[str, Counter[Scalar]] = {key: Counter() for key in COMMON_KEYS}
    for line in lines:
        record = parse_object(line)
        for key in COMMON_KEYS if record is not None else ():
            value = record.get(key)  # type: ignore[union-attr]
            if isinstance(value, str | int | float | bool) and value != "":
                counts[key][value] += 1
    common = {key: counter.most_common(1)[0][0] for key, counter in counts.items() if counter}
    if session_id:
        common["sessionId"] = session_id
    return SharedFields(tuple((key, common[key]) for key in COMMON_KEYS if key in common))


def boundary_line(
    common: SharedFields, uid: str, logical_parent: str | None, stamp: str, metadata: CompactionMetadata
) -> bytes:
    """The `compact_boundary` record of a new compact pair."""
    record: dict[str, Any] = {"parentUuid": None}
    if logical_parent:
        record["logicalParentUuid"] = logical_parent
    record["isSidechain"] = False
    record.update(common.members())
    record.update(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": BOUNDARY_CONTENT,
            "isMeta": False,
            "timestamp": stamp,
            "uuid": uid,
            "level": "info",
            "compactMetadata": msgspec.to_builtins(metadata),
        }
    )
    return json_text.dumps(record)


def summary_line(common: SharedFields, uid: str, parent: str, stamp: str, text: str) -> bytes:
    """The `isCompactSummary` user record that carries the summary text."""
    record: dict[str, Any] = {"parentUuid": parent, "isSidechain": False}
    record.update(common.members())
    record.update(
        {
            "type": "user",
            "message": {"role": "user", "content": json_text.well_formed(text)},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": uid,
            "timestamp": stamp,
        }
    )
    return json_text.dumps(record)


def launch_line(common: SharedFields, uid: str, parent: str, stamp: str, agent: BackgroundAgent) -> bytes:
    """A user record written afresh that carries a background agent's launch result
    (`pipeline.formats.claude_code.tasks`) as its `toolUseResult`, its content an empty list:
    Claude Code's resume scan reads the result off it, and it sends no message for it."""
    record: dict[str, Any] = {"parentUuid": parent, "isSidechain": False}
    record.update(common.members())
    record.update(
        {
            "type": "user",
            "message": {"role": "user", "content": []},
            "isMeta": True,
            "uuid": uid,
            "timestamp": stamp,
            "toolUseResult": agent.launch_result(),
        }
    )
    return json_text.dumps(record)


def attachment_line(
    common: SharedFields, uid: str, parent: str, stamp: str, attachment: Mapping[str, Any]
) -> bytes:
    """An `attachment` record written afresh (a carried background shell's `task_status`), in the
    key order 2.1.x writes attachments: the attachment ahead of its type, uuid and timestamp."""
    record: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "attachment": dict(attachment)}
    record.update({"type": "attachment", "uuid": uid, "timestamp": stamp})
    record.update(common.members())
    return json_text.dumps(record)


def projected_pointer(line: bytes, leaf_uuid: str | None, session_id: str | None) -> bytes | None:
    """The source pointer deep-copied (unknown fields survive) with only its leaf projected.

    None when the pointer line cannot be read.
    """
    pointer = parse_object(line)
    if pointer is None:
        return None
    pointer["leafUuid"] = leaf_uuid
    if "sessionId" in pointer and isinstance(session_id, str):
        pointer["sessionId"] = session_id
    pointer.pop(MASK_STAMP_KEY, None)  # a masked source's declarations are its own, not this output's
    return json_text.dumps(pointer)


def declaring_pointer(pointer: bytes, metadata: ToolMetadata) -> bytes:
    """A masked candidate's `last-prompt` with our metadata under `sessionCompaction`: with no
    compact boundary of ours, this is where its cleared outputs are declared (Claude Code reads
    only the pointer's leaf and prompt)."""
    record = parse_object(pointer) or {}
    record[MASK_STAMP_KEY] = msgspec.to_builtins(metadata)
    return json_text.dumps(record)


def new_pointer(leaf_uuid: str, session_id: str | None) -> bytes:
    """A `last-prompt` pointer naming the leaf, for a source that has none to project: the
    output always holds exactly one (no prompt text: we never write text the user did not type)."""
    pointer: dict[str, Any] = {"type": "last-prompt", "leafUuid": leaf_uuid}
    if session_id:
        pointer["sessionId"] = session_id
    return json_text.dumps(pointer)


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


def _member_value_start(line: bytes, key_end: int) -> int:
    start = key_end + 1
    while line[start] in b" \t":
        start += 1
    start += 1  # the colon
    while line[start] in b" \t":
        start += 1
    return start


def _find_top_level_value(line: bytes, key: bytes) -> tuple[int, int] | None:
    """Byte span of a top-level member's value, found by a small JSON scan (strings and nesting)."""
    depth = position = 0
    expect_key = False
    while position < len(line):
        byte = line[position]
        if byte == 0x22:  # a string
            end = _string_end(line, position)
            if depth == 1 and expect_key and line[position + 1 : end] == key:
                start = _member_value_start(line, end)
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


def replace_parent(line: bytes, new_parent: str) -> bytes:
    """The line with only its top-level `parentUuid` value replaced (inserted when absent)."""
    value = json_text.dumps(new_parent)
    prefix = b'{"parentUuid":'
    if line.startswith(prefix):  # Claude Code writes parentUuid first: no scan needed
        start = len(prefix)
        return line[:start] + value + line[_value_end(line, start) :]
    span = _find_top_level_value(line, b"parentUuid")
    if span is None:
        return b'{"parentUuid":' + value + b"," + line[1:]
    return line[: span[0]] + value + line[span[1] :]
