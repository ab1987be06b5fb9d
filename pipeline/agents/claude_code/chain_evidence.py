"""Claude Code's summarized lines as the summarizers' evidence: each line re-read by offset into
typed content (`formats/claude_code/content.py`), and what of it is evidence decided here.

It reads exactly the lines it is given and emits one `EvidenceItem` per meaningful content block,
in line order, then block order. A tool result is matched to its call's name only when the call
is among those lines too; its text is held as its place (`TextAt`) past `HELD_TEXT_CHARS`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.core.line_runs import LineRuns
from pipeline.formats.bounded_text import bound_text
from pipeline.formats.claude_code.content import RecordContent, part_text_at, read_content_at
from pipeline.summarize.evidence.items import (
    TOOL_RESULT_EVIDENCE_BYTES,
    EvidenceItem,
    EvidenceKind,
    EvidenceLineOutOfRange,
    TextAt,
)
from pipeline.vocabulary import RecordType, Role

__all__ = ["COMMAND_PREFIXES", "NOTICE_PREFIXES", "extract_evidence"]

HELD_TEXT_CHARS: Final = 512
"""A tool result this short is kept as text: a pointer to it would cost about as much memory."""


COMMAND_PREFIXES: Final = ("<command-", "<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
"""User text Claude Code writes for slash commands and `!` shell escapes, not typed prompts."""
NOTICE_PREFIXES: Final = ("<task-notification>", "[Request interrupted by user")
"""User text Claude Code writes on its own (background task notices, interruptions)."""
_RECORD_TYPES: Final = frozenset({"user", "assistant", "system"})


def extract_evidence(data: bytes, index: LineIndex, lines: Iterable[int]) -> tuple[EvidenceItem, ...]:
    """Evidence from exactly `lines` (1-based, any order, duplicates ignored), in line order.

    Nothing outside `lines` is read; a number that is not a line of the file raises
    EvidenceLineOutOfRange. Lines that are not user, assistant or system records, or
    that do not parse, contribute nothing.
    """
    wanted = lines if isinstance(lines, LineRuns) else LineRuns(lines)  # runs: a span can be every line
    first, last = wanted.first, wanted.last
    if first is not None and last is not None and (first < 1 or last > len(index)):
        raise EvidenceLineOutOfRange(first if first < 1 else last, len(index))
    names: dict[str, str] = {}
    items: list[EvidenceItem] = []
    for line in wanted:
        record = index.record(line)
        if record is None or record.type not in _RECORD_TYPES:
            continue
        span = index.span(data, line)
        content = read_content_at(data, *span)
        if content is not None:
            items.extend(_items_of(content, TextAt(data, *span, 0, _result_text), line, names))
    return tuple(items)


def _items_of(content: RecordContent, at: TextAt, line: int, names: dict[str, str]) -> Iterator[EvidenceItem]:
    if content.type == RecordType.SYSTEM:
        yield from _system_items(content, line)
    elif content.has_message and content.type == RecordType.ASSISTANT:
        yield from _assistant_items(content, line, names)
    elif content.has_message:
        yield from _user_items(content, at, line, names)


def _assistant_items(content: RecordContent, line: int, names: dict[str, str]) -> Iterator[EvidenceItem]:
    if content.string_content is not None:
        if content.string_content.strip():
            yield EvidenceItem(line, EvidenceKind.ASSISTANT_TEXT, content.string_content)
        return
    for part in content.parts:
        if part.type_name == "text" and part.text.strip():
            yield EvidenceItem(line, EvidenceKind.ASSISTANT_TEXT, part.text)
        elif part.type_name == "thinking" and part.text.strip():
            yield EvidenceItem(line, EvidenceKind.THINKING, part.text)
        elif part.type_name == "tool_use":
            # a session names a handful of tools thousands of times: one string each
            tool_name = sys.intern(part.tool_name) if part.tool_name is not None else None
            if part.tool_id is not None and tool_name is not None:
                names[part.tool_id] = tool_name
            yield EvidenceItem(
                line,
                EvidenceKind.TOOL_CALL,
                tool_name=tool_name,
                tool_id=part.tool_id,
                tool_input=part.tool_input,
            )


def _user_items(
    content: RecordContent, at: TextAt, line: int, names: dict[str, str]
) -> Iterator[EvidenceItem]:
    text = content.text
    if content.is_compact_summary:
        yield EvidenceItem(line, EvidenceKind.PRIOR_SUMMARY, text)
        return
    results = [(number, part) for number, part in enumerate(content.parts) if part.type_name == "tool_result"]
    for number, part in results:
        name = names.get(part.tool_id) if part.tool_id is not None else None
        yield EvidenceItem(
            line,
            EvidenceKind.TOOL_RESULT,
            _held(part.text, replace(at, part=number)),
            tool_name=name,
            tool_id=part.tool_id,
            is_error=part.is_error,
        )
    if results or not text.strip():
        return
    if content.role != Role.USER or content.is_meta:
        yield EvidenceItem(line, EvidenceKind.OTHER, text)
        return
    head = text.lstrip()
    if head.startswith(COMMAND_PREFIXES):
        kind = EvidenceKind.COMMAND
    elif head.startswith(NOTICE_PREFIXES):
        kind = EvidenceKind.OTHER
    else:
        kind = EvidenceKind.HUMAN_PROMPT
    yield EvidenceItem(line, kind, text)


def _result_text(data: bytes, start: int, end: int, part: int) -> str:
    """A tool result's evidence text read again from its record: its head and tail."""
    return bound_text(part_text_at(data, start, end, part), TOOL_RESULT_EVIDENCE_BYTES)


def _held(text: str, at: TextAt) -> str | TextAt:
    """A short text as it is (reading it again costs more than keeping it), a longer one's place."""
    return text if len(text) <= HELD_TEXT_CHARS else at


def _system_items(content: RecordContent, line: int) -> Iterator[EvidenceItem]:
    subtype, text = content.subtype, content.system_text or ""
    if subtype == "local_command":
        if text.strip():
            yield EvidenceItem(line, EvidenceKind.COMMAND, text)
    elif subtype == "api_error":
        yield EvidenceItem(line, EvidenceKind.SYSTEM_ERROR, text or content.api_error or "", is_error=True)
    elif subtype != "compact_boundary" and text.strip():
        yield EvidenceItem(line, EvidenceKind.OTHER, text)
