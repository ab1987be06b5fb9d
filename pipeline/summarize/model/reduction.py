"""Semantic groups and the greedy partition of one reduction round (seed 001), pure.

A group is one turn: it starts at a human message, a typed command or a prior summary and keeps
that turn's assistant records, tool calls and tool results together, so no chunk splits a call
from its result. A partial checkpoint written in an earlier round is a group of its own. The
partition packs groups in order into chunks that fit the request budget, at most
`MAX_CHUNKS_PER_ROUND` of them covering a prefix; the rest waits for the next round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from pipeline.errors import CompactionError
from pipeline.summarize.checkpoint.chunked import MAX_CHUNKS_PER_ROUND, MAX_REDUCTION_DEPTH
from pipeline.summarize.model.grounding import GroundingEvidence
from pipeline.summarize.model.outcomes import FailureFacts, SummaryFailed, SummaryOutcome
from pipeline.summarize.model.pack import AnchorKind, PackEntry
from pipeline.summarize.model.prompts import Partial, partial_tokens

__all__ = [
    "MAX_CHUNKS_PER_ROUND",
    "MAX_REDUCTION_DEPTH",
    "Budget",
    "GroupKind",
    "GroupOverBudget",
    "SemanticGroup",
    "history_groups",
    "merged_evidence",
    "partial_group",
    "partition",
]

_TURN_STARTS: Final = frozenset({AnchorKind.HUMAN, AnchorKind.COMMAND, AnchorKind.PRIOR_SUMMARY})


class GroupKind(StrEnum):
    """What a group holds."""

    HISTORY_TURN = "history-turn"
    REDUCTION = "reduction"


@dataclass(frozen=True, slots=True)
class Budget:
    """Estimated tokens and characters one request's evidence may take."""

    tokens: int
    chars: int


@dataclass(frozen=True, slots=True)
class SemanticGroup:
    """An indivisible unit of summary input: a turn's entries, or one partial checkpoint.

    `tokens`/`chars` are its whole size, `mandatory_*` what cannot be left out; `humans` the human
    lines it covers; `evidence` what a partial's own writer was shown (None for a turn).
    """

    kind: GroupKind
    entries: tuple[PackEntry, ...]
    partial: Partial | None
    first_line: int
    last_line: int
    humans: tuple[int, ...]
    tokens: int
    chars: int
    mandatory_tokens: int
    mandatory_chars: int
    evidence: GroundingEvidence | None = None


class GroupOverBudget(CompactionError):
    """One group's mandatory part alone exceeds the request budget (counts and its first line)."""

    def __init__(self, group: SemanticGroup, budget: Budget) -> None:
        self.group_line, self.tokens, self.limit = group.first_line, group.mandatory_tokens, budget.tokens
        super().__init__(f"the group at L{group.first_line} needs {group.mandatory_tokens} tokens")

    def refusal(self) -> SummaryFailed:
        """The summary's outcome: GROUP_EXCEEDS_BUDGET with the group's size, the limit, its line."""
        facts = FailureFacts(input_tokens=self.tokens, limit_tokens=self.limit, group_line=self.group_line)
        return SummaryFailed(SummaryOutcome.GROUP_EXCEEDS_BUDGET, facts)


def history_groups(entries: Sequence[PackEntry]) -> tuple[SemanticGroup, ...]:
    """Entries (line order) cut into turns at each human message, command or prior summary."""
    turns: list[list[PackEntry]] = []
    for entry in entries:
        if not turns or (entry.kind in _TURN_STARTS and turns[-1][-1].line != entry.line):
            turns.append([])
        turns[-1].append(entry)
    return tuple(_turn_group(tuple(turn)) for turn in turns)


def _turn_group(entries: tuple[PackEntry, ...]) -> SemanticGroup:
    mandatory = [entry for entry in entries if entry.mandatory]
    return SemanticGroup(
        GroupKind.HISTORY_TURN,
        entries,
        None,
        entries[0].line,
        entries[-1].line,
        tuple(sorted({entry.line for entry in entries if entry.kind is AnchorKind.HUMAN})),
        sum(entry.tokens for entry in entries),
        sum(entry.chars for entry in entries),
        sum(entry.tokens for entry in mandatory),
        sum(entry.chars for entry in mandatory),
    )


def partial_group(
    partial: Partial,
    humans: tuple[int, ...],
    evidence: GroundingEvidence | None,
    *,
    planned_tokens: int | None = None,
) -> SemanticGroup:
    """A partial checkpoint as a group of the next round (all of it mandatory).

    `planned_tokens`: a plan's partial, not written yet, counted at its expected size (four
    characters a token); a written one is counted from its text.
    """
    if planned_tokens is None:
        tokens, chars = partial_tokens(partial), len(partial.text) + 32
    else:
        tokens, chars = planned_tokens, planned_tokens * 4
    return SemanticGroup(
        GroupKind.REDUCTION,
        (),
        partial,
        partial.first_line,
        partial.last_line,
        humans,
        tokens,
        chars,
        tokens,
        chars,
        evidence,
    )


def partition(
    groups: Sequence[SemanticGroup], budget: Budget, max_chunks: int
) -> tuple[tuple[SemanticGroup, ...], ...]:
    """Greedy chunks over the longest prefix that `max_chunks` chunks hold (seed 001 Partition).

    A group larger than the budget only because of optional evidence gets a chunk of its own (its
    optional evidence is then cut); one whose mandatory part is larger raises GroupOverBudget.
    """
    chunks: list[list[SemanticGroup]] = []
    tokens = chars = 0
    for group in groups:
        if group.mandatory_tokens > budget.tokens or group.mandatory_chars > budget.chars:
            raise GroupOverBudget(group, budget)
        if chunks and tokens + group.tokens <= budget.tokens and chars + group.chars <= budget.chars:
            chunks[-1].append(group)
            tokens += group.tokens
            chars += group.chars
            continue
        if len(chunks) == max_chunks:
            break
        chunks.append([group])
        tokens, chars = group.tokens, group.chars
    return tuple(tuple(chunk) for chunk in chunks)


def merged_evidence(parts: Sequence[GroundingEvidence]) -> GroundingEvidence:
    """The union of what several writers were shown."""
    texts: dict[int, str] = {}
    for part in parts:
        texts.update(part.texts)
    humans = sorted({line for part in parts for line in part.humans})
    anchors = frozenset(line for part in parts for line in part.anchors)
    return GroundingEvidence(anchors, tuple(humans), _frozen(texts))


def _frozen(texts: Mapping[int, str]) -> Mapping[int, str]:
    return MappingProxyType(dict(texts))
