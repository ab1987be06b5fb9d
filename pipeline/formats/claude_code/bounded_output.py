"""Bounded tool outputs (seed 000: "tool_result: last-round bounded (8KiB) ... content truncated").

In a kept record, a tool_result whose text exceeds the limit keeps its head and its tail within
the limit around one marker line that states the original size in bytes and its SHA-256; image
and document blocks in results outside the protected round become a one-line placeholder with
their size. Claude Code mirrors tool output in the record's top-level `toolUseResult`; every
string there longer than the limit is bounded the same way, so no full copy stays behind.

Under a masking strategy a rule also clears: a tool_result older than the protected round becomes
the line Claude Code itself writes for the results it clears from what it sends
(`CLEARED_MARKER`), its size and SHA-256 declared as for a bounded one. A failed call's result (an
error flag, a non-zero exit status, failures a test run reports) is only bounded: the error is
what a resumed agent must not repeat; nor is a result shorter than `CLEAR_MIN_BYTES` cleared.
A rule that also clears inputs (`mask`) clears the bulky strings of a file-writing call
(`BULKY_INPUTS`: a `Write`'s contents, an `Edit`'s strings) the same way, each call declared
(part `input`, the original input's size and SHA-256); its path and every other member stay.

A bounded record is written again as compact JSON; anything else in it keeps its value, key
order, ids and links (Claude Code writes compact JSON too, so nearly always its very bytes).
`bound_content` is the one rule, so a checker can re-apply it to the original and compare
(`verify-resume` does, to what Claude Code sends).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats import json_text
from pipeline.formats.bound_rule import BoundRule  # the rule is the job's, named by no format
from pipeline.formats.bounded_text import bound_text, marker
from pipeline.formats.claude_code.records import declared_by_ours

__all__ = [
    "BULKY_INPUTS",
    "CLEARED_MARKER",
    "CLEAR_MIN_BYTES",
    "BoundPart",
    "BoundRule",
    "BoundedRecord",
    "bound_content",
    "bound_line",
    "bound_text",
    "clear_input",
    "declared_bounds",
    "declared_cleared_inputs",
    "marker",
]

MEDIA_TYPES: Final = frozenset({"image", "document"})
CLEARED_MARKER: Final = "[Old tool result content cleared]"  # Claude Code 2.1.332's own wording
CLEAR_MIN_BYTES: Final = 512  # a shorter output costs about what its marker and declaration do: it stays
FAILURE_SCAN_CHARS: Final = 8192  # a status is written first, a runner's failures summed up last
_FAILED_RUN: Final = re.compile(
    r"\A\s*Exit code:? [1-9]|\n(?:FAILED|FAIL|ERROR)\b|\n--- FAIL\b|\nnot ok \d"
    r"|(?<![\w.])[1-9]\d* (?:failed|failing|failures?|errors?)\b|test result: FAILED"
)
_MEDIA_MARKS: Final = (b'"type":"image"', b'"type":"document"')
# The file-writing calls whose input strings are bulk: what they wrote stands in the file and in
# later reads, and the path (kept) says where.
BULKY_INPUTS: Final = {
    "Write": ("content",),
    "Edit": ("old_string", "new_string"),
    "NotebookEdit": ("new_source",),
}
_BULKY_KEYS: Final = frozenset(key for keys in BULKY_INPUTS.values() for key in keys)


def clear_input(value: Any, keys: frozenset[str] = _BULKY_KEYS) -> Any:
    """A tool_use input with each of `keys` holding a string of `CLEAR_MIN_BYTES` or more cleared."""
    if not isinstance(value, dict):
        return value
    return {
        key: CLEARED_MARKER
        if key in keys
        and isinstance(item, str)
        and len(item.encode("utf-8", "surrogatepass")) >= CLEAR_MIN_BYTES
        else item
        for key, item in value.items()
    }


def _cleared_call(block: dict[str, Any]) -> tuple[dict[str, Any], BoundedRecord] | None:
    """A bulky call's block with its input cleared, and its declaration; None when nothing is."""
    keys = BULKY_INPUTS.get(str(block.get("name")))
    original = block.get("input")
    cleared = clear_input(original, frozenset(keys)) if keys else original
    if cleared == original:
        return None
    before, after = json_text.dumps(original), json_text.dumps(cleared)
    stamp = BoundedRecord(
        str(block.get("id")),
        BoundPart.INPUT,
        len(before),
        len(after),
        hashlib.sha256(before).hexdigest(),
        0,
        True,
    )
    return {**block, "input": cleared}, stamp


class BoundPart(StrEnum):
    """Which copy of a tool output was bounded."""

    CONTENT = "content"  # the tool_result block the model reads
    MIRROR = "toolUseResult"  # Claude Code's copy for its own display, never sent to the model
    INPUT = "input"  # a tool_use block's input: its bulky strings cleared (`BULKY_INPUTS`)


@dataclass(frozen=True, slots=True)
class BoundedRecord:
    """One bounded tool output, as the report and compactMetadata declare it (no content)."""

    tool_use_id: str
    part: BoundPart
    original_bytes: int
    kept_bytes: int
    sha256: str  # of the original text (content) or of its compact JSON (mirror)
    media_replaced: int
    cleared: bool = False  # replaced whole by `CLEARED_MARKER` (the rule's limit did not apply)


def _media_placeholder(block: dict[str, Any]) -> dict[str, Any]:
    size = len(json_text.dumps(block))
    kind = block.get("type")
    return {"type": "text", "text": f"[session-compaction: a {kind} of {size} bytes was left out]"}


def _is_media(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in MEDIA_TYPES


def _joined(blocks: list[Any]) -> str:
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


def bound_content(content: Any, rule: BoundRule) -> Any:
    """A tool_result's `content` bounded by `rule` (a string, or a list of blocks).

    In a list, text blocks over the limit together become one bounded text block where the first
    of them was; then media blocks become placeholders (when the rule says so).
    """
    if rule.clear and len(_text_of(content).encode("utf-8", "surrogatepass")) + _media_bytes(content) >= (
        CLEAR_MIN_BYTES
    ):
        return CLEARED_MARKER if isinstance(content, str) else [{"type": "text", "text": CLEARED_MARKER}]
    if isinstance(content, str):
        return bound_text(content, rule.limit)
    if not isinstance(content, list):
        return content
    blocks = list(content)
    joined = _joined(blocks)
    if len(joined.encode("utf-8", "surrogatepass")) > rule.limit:
        first = next(i for i, b in enumerate(blocks) if _is_text(b))
        blocks = [
            {**b, "text": bound_text(joined, rule.limit)} if i == first else b
            for i, b in enumerate(blocks)
            if i == first or not _is_text(b)
        ]
    if rule.drop_media:
        blocks = [_media_placeholder(b) if _is_media(b) else b for b in blocks]
    return blocks


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text"


def _bound_strings(value: Any, limit: int) -> Any:
    """Every string longer than `limit` bytes inside `toolUseResult`, bounded (iterative walk)."""
    if isinstance(value, str):
        return bound_text(value, limit)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, node = stack.pop()
        copy: Any = dict(node) if isinstance(node, dict) else list(node)
        parent[key] = copy
        for child_key, child in copy.items() if isinstance(copy, dict) else enumerate(copy):
            if isinstance(child, str):
                copy[child_key] = bound_text(child, limit)
            elif isinstance(child, dict | list):
                stack.append((copy, child_key, child))
    return root[0]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return _joined(content) if isinstance(content, list) else ""


def _failed(block: dict[str, Any], content: Any) -> bool:
    """Whether a tool_result reports a failure: its error flag, an exit status, a test run's failures."""
    if block.get("is_error"):
        return True
    text = _text_of(content)
    ends = (
        text
        if len(text) <= 2 * FAILURE_SCAN_CHARS
        else text[:FAILURE_SCAN_CHARS] + text[-FAILURE_SCAN_CHARS:]
    )
    return _FAILED_RUN.search("\n" + ends) is not None


def _media_bytes(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(len(json_text.dumps(b)) for b in content if _is_media(b))


def _media_count(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if _is_media(b))


def _bound_blocks(blocks: list[Any], rule: BoundRule) -> tuple[list[Any], list[BoundedRecord]]:
    declared: list[BoundedRecord] = []
    out = list(blocks)
    for position, block in enumerate(blocks):
        if rule.clear_inputs and isinstance(block, dict) and block.get("type") == "tool_use":
            call = _cleared_call(block)
            if call is not None:
                out[position] = call[0]
                declared.append(call[1])
            continue
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        content = block.get("content")
        own = BoundRule(rule.limit, rule.drop_media) if rule.clear and _failed(block, content) else rule
        bounded = bound_content(content, own)
        if bounded == content:
            continue
        out[position] = {**block, "content": bounded}
        original = _text_of(content).encode("utf-8", "surrogatepass")
        declared.append(
            BoundedRecord(
                str(block.get("tool_use_id")),
                BoundPart.CONTENT,
                len(original),
                len(_text_of(bounded).encode("utf-8", "surrogatepass")),
                hashlib.sha256(original).hexdigest(),
                _media_count(content) - _media_count(bounded),
                cleared=own.clear and bounded in (CLEARED_MARKER, [{"type": "text", "text": CLEARED_MARKER}]),
            )
        )
    return out, declared


def bound_line(
    line: bytes, rule: BoundRule, *, span: tuple[int, int] | None = None
) -> tuple[bytes, tuple[BoundedRecord, ...]] | None:
    """The record with its tool outputs bounded, and what was bounded; None when nothing changes.

    With `span`, `line` is the whole file and the record is read in place, never copied (a line
    can be 50 MB). The bounded record is written as compact JSON: every value, key and key order
    as before; a line orjson cannot read (integers beyond 64 bits, lone surrogates) is kept.
    """
    start, end = span if span is not None else (0, len(line))
    media = rule.drop_media and any(line.find(kind, start, end) >= 0 for kind in _MEDIA_MARKS)
    if end - start <= (min(rule.limit, CLEAR_MIN_BYTES) if rule.clear else rule.limit) and not media:
        return None
    try:
        record = orjson.loads(memoryview(line)[start:end])
    except orjson.JSONDecodeError:
        return None
    message = record.get("message") if isinstance(record, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return None
    blocks, declared = _bound_blocks(message["content"], rule)
    changed = {**record, "message": {**message, "content": blocks}} if declared else dict(record)
    if "toolUseResult" in record:
        mirror = _bound_mirror(record, rule.limit)
        if mirror is not None:
            changed["toolUseResult"], stamp = mirror
            declared.append(stamp)
    if not declared:
        return None
    return json_text.dumps(changed), tuple(declared)


def _bound_mirror(record: dict[str, Any], limit: int) -> tuple[Any, BoundedRecord] | None:
    """`toolUseResult` with every long string bounded, and its declaration; None when it fits."""
    original = record["toolUseResult"]
    bounded = _bound_strings(original, limit)
    if bounded == original:
        return None
    message = record.get("message") or {}
    ids = [
        b.get("tool_use_id")
        for b in message.get("content") or ()
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    before, after = json_text.dumps(original), json_text.dumps(bounded)
    stamp = BoundedRecord(
        str(ids[0]) if ids else "",
        BoundPart.MIRROR,
        len(before),
        len(after),
        hashlib.sha256(before).hexdigest(),
        0,
    )
    return bounded, stamp


def declared_cleared_inputs(data: bytes) -> frozenset[str]:
    """The tool_use ids whose input a compaction of ours declares cleared (`BULKY_INPUTS`)."""
    return frozenset(
        entry["toolUseId"]
        for entry in declared_by_ours(data, "boundedToolOutputs")
        if isinstance(entry, dict)
        and entry.get("part") == BoundPart.INPUT
        and isinstance(entry.get("toolUseId"), str)
    )


def declared_bounds(data: bytes) -> dict[str, BoundRule]:
    """The tool outputs a compaction of ours declares bounded, by tool_use id, with their rule."""
    found: dict[str, BoundRule] = {}
    for entry in declared_by_ours(data, "boundedToolOutputs"):
        if not isinstance(entry, dict) or entry.get("part", BoundPart.CONTENT) != BoundPart.CONTENT:
            continue  # the display copy never reaches the model
        limit, drop, cleared = entry.get("limit"), entry.get("dropMedia"), entry.get("cleared", False)
        if isinstance(entry.get("toolUseId"), str) and isinstance(limit, int) and isinstance(drop, bool):
            found[entry["toolUseId"]] = BoundRule(limit, drop, cleared is True)
    return found
