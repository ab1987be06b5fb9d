"""Evidence: the summarized lines, re-read by offset and turned into typed, immutable items.

The format module reads each line into typed content; this module decides what of it is
evidence. It reads exactly the lines it is
given (the caller passes only the `summary` set, so excluded records can never reach a summary)
and emits one `EvidenceItem` per meaningful content block, in line order, then block order.
A tool result is matched to its call's name only when the call is among those lines too.
A tool result's text is not held: tool output is most of a session's bytes, and the source
they are read from is in memory anyway, so the item keeps where it is (`TextAt`) and reads it
again on each use (a giant session's evidence would otherwise cost half its size again).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.core.line_runs import LineRuns
from pipeline.errors import SummaryError
from pipeline.formats.claude_code.bounded_output import bound_text
from pipeline.formats.claude_code.content import (
    EMPTY_INPUT,
    FrozenJson,
    RecordContent,
    freeze_json,
    part_text_at,
    read_content_at,
)
from pipeline.reasons import Figure, SummaryFailure
from pipeline.vocabulary import RecordType, Role

__all__ = [
    "MAX_CITATIONS_PER_BULLET",
    "EvidenceItem",
    "EvidenceKind",
    "EvidenceLineOutOfRange",
    "FrozenJson",
    "TextAt",
    "bounded_lines",
    "extract_evidence",
    "freeze_json",
]

TOOL_RESULT_EVIDENCE_BYTES: Final = 65536
"""A tool output is evidence through its head and tail (its command, its errors, its exit code);
the middle of a 50 MB log would only cost memory and time (the pack cuts each record further)."""


HELD_TEXT_CHARS: Final = 512
"""A tool result this short is kept as text: a pointer to it would cost about as much memory."""


COMMAND_PREFIXES: Final = ("<command-", "<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
"""User text Claude Code writes for slash commands and `!` shell escapes, not typed prompts."""
NOTICE_PREFIXES: Final = ("<task-notification>", "[Request interrupted by user")
"""User text Claude Code writes on its own (background task notices, interruptions)."""
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
class TextAt:
    """Where a tool result's evidence text is in the source: read again, bounded, on each use."""

    data: bytes = field(compare=False, repr=False)  # the whole source, already in memory (never copied)
    start: int
    end: int
    part: int  # the block's place among the line's content blocks

    def read(self) -> str:
        """The text `extract_evidence` would have kept: the result's text, bounded to its head and tail."""
        text = part_text_at(self.data, self.start, self.end, self.part)
        return bound_text(text, TOOL_RESULT_EVIDENCE_BYTES)


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One content block of one summarized line (lines are 1-based).

    `held` is the text, or where a tool result's text is (`TextAt`); read it as `text`.
    """

    line: int
    kind: EvidenceKind
    held: str | TextAt = ""
    tool_name: str | None = None
    tool_id: str | None = None
    tool_input: Mapping[str, FrozenJson] = field(default_factory=lambda: EMPTY_INPUT, hash=False)
    is_error: bool = False

    @property
    def text(self) -> str:
        """The block's text (a tool result's is read again from the source)."""
        held = self.held
        return held if isinstance(held, str) else held.read()

    def __post_init__(self) -> None:
        if not isinstance(self.tool_input, MappingProxyType):  # built by hand: freeze a caller's dict
            frozen = freeze_json(dict(self.tool_input))
            object.__setattr__(self, "tool_input", frozen)


class EvidenceLineOutOfRange(SummaryError):
    """A line asked for is not a line of the file (a caller bug; never read around it)."""

    def __init__(self, line: int, total: int) -> None:
        self.line, self.total = line, total
        figures = ((Figure.LINE, line), (Figure.LINES, total))
        super().__init__(
            SummaryFailure.EVIDENCE_LINE_OUT_OF_RANGE,
            figures,
            f"line {line} is outside the file's {total} lines",
        )


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
            items.extend(_items_of(content, TextAt(data, *span, 0), line, names))
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


MAX_CITATIONS_PER_BULLET: Final = 8  # a bullet merged from many records cites its first and newest lines


def bounded_lines(lines: Iterable[int]) -> tuple[int, ...]:
    """Distinct lines in ascending order, at most the first and the newest of them."""
    ordered = sorted(set(lines))
    if len(ordered) <= MAX_CITATIONS_PER_BULLET:
        return tuple(ordered)
    return (ordered[0], *ordered[len(ordered) - MAX_CITATIONS_PER_BULLET + 1 :])
