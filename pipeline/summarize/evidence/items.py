"""Evidence: the summarized records of a session as typed, immutable items, one per meaningful
content block, in line order, then block order (each agent's reader makes them from exactly the
lines it is given: the caller passes only the `summary` set, so excluded records can never reach
a summary).

A tool result's text is not held: tool output is most of a session's bytes, and the source they
are read from is in memory anyway, so the item keeps where it is (`TextAt`) and reads it again on
each use (a giant session's evidence would otherwise cost half its size again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from pipeline.errors import SummaryError
from pipeline.formats.frozen_json import EMPTY_INPUT, FrozenJson, freeze_json
from pipeline.reasons import Figure, SummaryFailure

__all__ = [
    "MAX_CITATIONS_PER_BULLET",
    "EvidenceItem",
    "EvidenceKind",
    "EvidenceLineOutOfRange",
    "FrozenJson",
    "TextAt",
    "bounded_lines",
    "freeze_json",
]

TOOL_RESULT_EVIDENCE_BYTES: Final = 65536
"""A tool output is evidence through its head and tail (its command, its errors, its exit code);
the middle of a 50 MB log would only cost memory and time (the pack cuts each record further)."""


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


PartReader = Callable[[bytes, int, int, int], str]
"""The evidence text of content block `part` of the record at `data[start:end]`, bounded to its
head and tail (`TOOL_RESULT_EVIDENCE_BYTES`): the format's reader, which made the `TextAt`."""


@dataclass(frozen=True, slots=True)
class TextAt:
    """Where a tool result's evidence text is in the source: read again, bounded, on each use."""

    data: bytes = field(compare=False, repr=False)  # the whole source, already in memory (never copied)
    start: int
    end: int
    part: int  # the block's place among the line's content blocks
    reader: PartReader = field(compare=False, repr=False)

    def read(self) -> str:
        """The text the reader kept: the result's text, bounded to its head and tail."""
        return self.reader(self.data, self.start, self.end, self.part)


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


MAX_CITATIONS_PER_BULLET: Final = 8  # a bullet merged from many records cites its first and newest lines


def bounded_lines(lines: Iterable[int]) -> tuple[int, ...]:
    """Distinct lines in ascending order, at most the first and the newest of them."""
    ordered = sorted(set(lines))
    if len(ordered) <= MAX_CITATIONS_PER_BULLET:
        return tuple(ordered)
    return (ordered[0], *ordered[len(ordered) - MAX_CITATIONS_PER_BULLET + 1 :])
