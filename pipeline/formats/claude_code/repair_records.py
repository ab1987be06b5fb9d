"""The record edits `compaction repair` makes, in Claude Code's own JSON: one line in, one line out.

Each edit parses one line, changes only what the repair needs (blocks of `message.content`, a
tool id, the interrupted-call result) and writes it back compactly in the key order it had, so
unknown fields survive. A line that is not a record with list content is left alone: the edit
answers None and the planner reports the defect as unrepaired.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from pipeline.formats import json_text
from pipeline.formats.claude_code.content import parse_object

__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "interrupted_record",
    "result_ids",
    "with_blocks_dropped",
    "with_results_added",
    "with_results_first",
    "with_tool_id_renamed",
]

# What Claude Code writes as the result of a call the user interrupted (its own constant).
INTERRUPTED_TOOL_RESULT: Final = "[Request interrupted by user for tool use]"
_ENVELOPE: Final = (
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "slug",
    "entrypoint",
)

Blocks = list[Any]


def _interrupted_blocks(tool_ids: Sequence[str]) -> Blocks:
    return [
        {"type": "tool_result", "content": INTERRUPTED_TOOL_RESULT, "is_error": True, "tool_use_id": tool_id}
        for tool_id in tool_ids
    ]


def interrupted_record(assistant: bytes, uid: str, tool_ids: Sequence[str]) -> bytes | None:
    """A user record answering `tool_ids` as interrupted, child of the assistant record `assistant`,
    with the assistant's envelope (session, cwd, version, ...) and timestamp."""
    source = parse_object(assistant)
    parent = source.get("uuid") if source is not None else None
    if source is None or not isinstance(parent, str):
        return None
    record: dict[str, Any] = {"parentUuid": parent}
    record.update({key: source[key] for key in _ENVELOPE if key in source})
    record.update(
        {
            "type": "user",
            "message": {"role": "user", "content": _interrupted_blocks(tool_ids)},
            "uuid": uid,
            "timestamp": source.get("timestamp"),
            "toolUseResult": f"Error: {INTERRUPTED_TOOL_RESULT}",
            "sourceToolAssistantUUID": parent,
        }
    )
    return json_text.dumps(record)


def _edit_content(line: bytes, edit: Callable[[Blocks], Blocks | None]) -> bytes | None:
    record = parse_object(line)
    message = record.get("message") if record is not None else None
    content = message.get("content") if isinstance(message, dict) else None
    if record is None or not isinstance(message, dict) or not isinstance(content, list):
        return None
    changed = edit(list(content))
    if changed is None:
        return None
    message["content"] = changed
    return json_text.dumps(record)


def _kind(block: Any) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    return kind if isinstance(kind, str) else None


def _result_id(block: Any) -> str | None:
    return block.get("tool_use_id") if _kind(block) == "tool_result" else None


def with_results_first(line: bytes) -> bytes | None:
    """The line with its tool_result blocks moved ahead of its other blocks (each group in order)."""

    def edit(blocks: Blocks) -> Blocks:
        results = [b for b in blocks if _kind(b) == "tool_result"]
        return results + [b for b in blocks if _kind(b) != "tool_result"]

    return _edit_content(line, edit)


def with_blocks_dropped(
    line: bytes, positions: frozenset[int], *, interrupted: Sequence[str] = ()
) -> bytes | None:
    """The line without the content blocks at `positions`; when that empties it, holding the
    interrupted results of `interrupted` instead (None when it would be left empty)."""

    def edit(blocks: Blocks) -> Blocks | None:
        kept = [b for at, b in enumerate(blocks) if at not in positions]
        if kept:
            return kept
        return _interrupted_blocks(interrupted) if interrupted else None

    return _edit_content(line, edit)


def with_results_added(line: bytes, tool_ids: Sequence[str]) -> bytes | None:
    """The line with interrupted results for `tool_ids` right after its leading tool_result blocks."""

    def edit(blocks: Blocks) -> Blocks:
        leading = 0
        while leading < len(blocks) and _kind(blocks[leading]) == "tool_result":
            leading += 1
        return blocks[:leading] + _interrupted_blocks(tool_ids) + blocks[leading:]

    return _edit_content(line, edit)


def with_tool_id_renamed(line: bytes, old: str, new: str) -> bytes | None:
    """The line with every tool_use `id` and tool_result `tool_use_id` equal to `old` set to `new`."""

    def edit(blocks: Blocks) -> Blocks | None:
        hits = 0
        for block in blocks:
            kind = _kind(block)
            key = "id" if kind == "tool_use" else "tool_use_id" if kind == "tool_result" else None
            if key is not None and block.get(key) == old:
                block[key] = new
                hits += 1
        return blocks if hits else None

    return _edit_content(line, edit)


def result_ids(line: bytes) -> tuple[str | None, ...]:
    """The tool id each content block of a line answers (None for a block that is no result)."""
    record = parse_object(line)
    message = record.get("message") if record is not None else None
    content = message.get("content") if isinstance(message, dict) else None
    return tuple(_result_id(b) for b in content) if isinstance(content, list) else ()
