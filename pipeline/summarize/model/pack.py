"""The evidence pack: what a model reads, built only from the summarized evidence (seed 004 v11).

Every non-empty human message, every assistant text and thinking record and every prior summary
is mandatory and shown in full; tool calls, tool results, errors, commands and notices are
optional, ranked as seed 004 orders evidence, cut to a per-record bound and added while both pack
ceilings (characters and estimated tokens) allow. Each record is one line,
`L<line> <kind>: <JSON string>`, so no text can forge an anchor. Text is redacted before it is
rendered: nothing here ever holds a secret the redaction list knows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from types import MappingProxyType
from typing import Final

from pipeline.errors import CompactionError
from pipeline.estimate.seed import estimate_text
from pipeline.formats import json_text
from pipeline.formats.evidence_tools import MODIFY_FILE_TOOLS, SHELL_TOOLS
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.shell import is_validation_command
from pipeline.summarize.model.redaction import Redacted, RedactionCounts, redact

__all__ = [
    "HUMAN_ANCHORS_LABEL",
    "PACK_MARKER",
    "AnchorKind",
    "EvidenceRank",
    "MandatoryOverflow",
    "PackEntry",
    "PackOptions",
    "anchor_texts",
    "entries_of",
    "fit_entries",
    "render_entry",
]

PACK_MARKER: Final = "<!-- session-compaction evidence pack v1 -->"
HUMAN_ANCHORS_LABEL: Final = "Human message anchors (cite each at least once):"
CUT_MARKER: Final = "[... {} more characters]"


class AnchorKind(StrEnum):
    """The kind word of a pack line, after its `L<line>` anchor."""

    HUMAN = "human"
    ASSISTANT = "assistant"
    THINKING = "thinking"
    PRIOR_SUMMARY = "prior-summary"
    COMMAND = "command"
    TOOL_CALL = "tool-call"
    TOOL_RESULT = "tool-result"
    ERROR = "error"
    NOTICE = "notice"


class EvidenceRank(IntEnum):
    """Priority of optional evidence, lowest first (seed 004's order, steps that tools can carry)."""

    REQUESTED_OUTCOME = 1  # slash commands and `!` shell escapes the user typed
    RISK_OR_VALIDATION = 5  # errors, failed results, test/lint/build commands and their results
    SUPPORTING_CHANGE = 6  # file edits and the calls that produced them
    SOURCE_REFERENCE = 6  # reads, searches and other calls: exact identifiers and references
    RECOVERABLE_DETAIL = 7  # tool output and notices: mostly logs a reader can recover


_MANDATORY: Final = {
    EvidenceKind.HUMAN_PROMPT: AnchorKind.HUMAN,
    EvidenceKind.ASSISTANT_TEXT: AnchorKind.ASSISTANT,
    EvidenceKind.THINKING: AnchorKind.THINKING,
    EvidenceKind.PRIOR_SUMMARY: AnchorKind.PRIOR_SUMMARY,
}


@dataclass(frozen=True, slots=True)
class PackOptions:
    """Bounds of one pack: both ceilings (seed 004) and the cut of one optional record."""

    char_budget: int
    token_budget: int
    max_optional_chars: int


@dataclass(frozen=True, slots=True)
class PackEntry:
    """One rendered pack line: its anchor, kind, displayed (redacted) text and its size."""

    line: int
    kind: AnchorKind
    shown: str
    rendered: str
    mandatory: bool
    rank: int
    tokens: int
    redactions: RedactionCounts

    @property
    def chars(self) -> int:
        """Characters of the rendered line and its newline."""
        return len(self.rendered) + 1


class MandatoryOverflow(CompactionError):
    """Mandatory entries alone do not fit the ceilings (counts only)."""

    def __init__(self, tokens: int, chars: int) -> None:
        self.tokens, self.chars = tokens, chars
        super().__init__(f"mandatory evidence needs {tokens} tokens, {chars} characters")


def render_entry(line: int, kind: AnchorKind, shown: str, label: str = "") -> str:
    """`L12 human: "text"`, the tool or error label before the colon when there is one."""
    head = f"L{line} {kind.value}{' ' + label if label else ''}"
    return f"{head}: {json_text.dumps(shown).decode()}"


def entries_of(items: Sequence[EvidenceItem], max_optional_chars: int) -> tuple[PackEntry, ...]:
    """Every item as a redacted pack entry, in line order (the caller picks which to show)."""
    return tuple(_entry(item, max_optional_chars) for item in items if _has_content(item))


def _has_content(item: EvidenceItem) -> bool:
    return item.kind is EvidenceKind.TOOL_CALL or bool(item.text.strip())


def _entry(item: EvidenceItem, max_optional_chars: int) -> PackEntry:
    mandatory = item.kind in _MANDATORY
    kind, label = _kind_and_label(item)
    if item.kind is EvidenceKind.TOOL_CALL:
        cleaned = _redacted_input(item)
        shown = cleaned.text if mandatory else _cut(cleaned.text, max_optional_chars)
    else:
        cleaned, shown = _redacted_text(item.text, None if mandatory else max_optional_chars)
    rendered = render_entry(item.line, kind, shown, label)
    rank = 0 if mandatory else int(_rank(item))
    return PackEntry(
        item.line, kind, shown, rendered, mandatory, rank, estimate_text(rendered) + 1, cleaned.counts
    )


def _kind_and_label(item: EvidenceItem) -> tuple[AnchorKind, str]:
    if item.kind in _MANDATORY:
        return _MANDATORY[item.kind], ""
    if item.kind is EvidenceKind.COMMAND:
        return AnchorKind.COMMAND, ""
    if item.kind is EvidenceKind.SYSTEM_ERROR:
        return AnchorKind.ERROR, ""
    if item.kind is EvidenceKind.TOOL_CALL:
        return AnchorKind.TOOL_CALL, item.tool_name or "unknown-tool"
    if item.kind is EvidenceKind.TOOL_RESULT:
        label = item.tool_name or "unknown-tool"
        return AnchorKind.TOOL_RESULT, f"{label} error" if item.is_error else label
    return AnchorKind.NOTICE, ""


def _redacted_input(item: EvidenceItem) -> Redacted:
    """A tool call's input as compact JSON, each string redacted before it is escaped into JSON."""
    counts: list[RedactionCounts] = []
    text = json_text.dumps(_thawed(item.tool_input, counts)).decode()
    return Redacted(text, RedactionCounts.summed(counts))


def _thawed(value: object, counts: list[RedactionCounts]) -> object:
    if isinstance(value, Mapping):
        return {str(key): _thawed(item, counts) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thawed(item, counts) for item in value]
    if isinstance(value, str):
        cleaned = redact(value)
        counts.append(cleaned.counts)
        return cleaned.text
    return value


def _rank(item: EvidenceItem) -> EvidenceRank:
    if item.kind is EvidenceKind.COMMAND:
        return EvidenceRank.REQUESTED_OUTCOME
    if item.is_error or item.kind is EvidenceKind.SYSTEM_ERROR:
        return EvidenceRank.RISK_OR_VALIDATION
    if item.kind is EvidenceKind.TOOL_CALL:
        command = item.tool_input.get("command")
        if item.tool_name in SHELL_TOOLS and isinstance(command, str) and is_validation_command(command):
            return EvidenceRank.RISK_OR_VALIDATION
        if item.tool_name in MODIFY_FILE_TOOLS:
            return EvidenceRank.SUPPORTING_CHANGE
        return EvidenceRank.SOURCE_REFERENCE
    return EvidenceRank.RECOVERABLE_DETAIL


# An optional text is cut to its first `max_optional_chars`: only that head and this margin after it
# are redacted (a long tool result costs what its head does). A secret that begins in the shown part
# and is at most `_LONGEST_SECRET` long lies whole in the margin; a PEM block is replaced to the
# text's end when its END line is past the head. When replacements shrank the head so much that a
# cut secret could reach the shown part, the whole text is redacted instead.
_REDACTED_MARGIN: Final = 2048
_LONGEST_SECRET: Final = 1024


def _redacted_text(text: str, limit: int | None) -> tuple[Redacted, str]:
    """`text` redacted, and what is shown of it: all of it, or its first `limit` characters."""
    if limit is None or len(text) <= limit + _REDACTED_MARGIN:
        cleaned = redact(text)
        return cleaned, cleaned.text if limit is None else _cut(cleaned.text, limit)
    head = redact(text[: limit + _REDACTED_MARGIN])
    if len(head.text) < limit + _LONGEST_SECRET:
        cleaned = redact(text)
        return cleaned, _cut(cleaned.text, limit)
    return head, head.text[:limit] + CUT_MARKER.format(len(text) - limit)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + CUT_MARKER.format(len(text) - limit)


def fit_entries(
    entries: Sequence[PackEntry], token_budget: int, char_budget: int
) -> tuple[tuple[PackEntry, ...], int]:
    """The entries to show, in line order, and how many optional ones did not fit.

    Mandatory entries always go in (MandatoryOverflow when they alone exceed a ceiling); optional
    ones by rank, newest first within a rank (the latest state matters most), while both fit.
    """
    mandatory = [entry for entry in entries if entry.mandatory]
    tokens = sum(entry.tokens for entry in mandatory)
    chars = sum(entry.chars for entry in mandatory)
    if tokens > token_budget or chars > char_budget:
        raise MandatoryOverflow(tokens, chars)
    optional = sorted(
        (entry for entry in entries if not entry.mandatory), key=lambda entry: (entry.rank, -entry.line)
    )
    chosen = list(mandatory)
    omitted = 0
    for entry in optional:
        if tokens + entry.tokens <= token_budget and chars + entry.chars <= char_budget:
            chosen.append(entry)
            tokens += entry.tokens
            chars += entry.chars
        else:
            omitted += 1
    order = {id(entry): index for index, entry in enumerate(entries)}
    return tuple(sorted(chosen, key=lambda entry: order[id(entry)])), omitted


def anchor_texts(entries: Iterable[PackEntry]) -> Mapping[int, str]:
    """Displayed text per anchored line (a line's entries joined), for checking quotes."""
    texts: dict[int, list[str]] = {}
    for entry in entries:
        texts.setdefault(entry.line, []).append(entry.shown)
    return MappingProxyType({line: "\n".join(parts) for line, parts in texts.items()})
