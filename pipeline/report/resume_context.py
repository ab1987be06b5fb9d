"""The sections of a Codex rollout's report: the context Codex rebuilds from it on resume, and a
compaction's cut and output.

Counts and line digests only: which compaction is the base, how many records were replayed after
it, how many user turns a rollback dropped, how many items Codex sends and what they cost by its
own estimate. No item text.
"""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from pipeline.report.sections import LineSetSection, Section

__all__ = [
    "BilledSection",
    "ContextSection",
    "CutSection",
    "RolloutClass",
    "RolloutOutputSection",
    "RolloutTokens",
]


class ContextSection(Section, frozen=True, kw_only=True):
    """The context Codex rebuilds on resume."""

    resumable: bool  # the 0.2x layout is not: current Codex does not read it
    items: int  # what Codex sends, before its own instructions and the new prompt
    lines: LineSetSection  # the lines those items come from
    base_line: int | None  # the `compacted` record whose replacement_history is the base
    compactions: int
    replayed_records: int  # records after the base that Codex replays
    rolled_back_turns: int
    aborted_calls: int  # calls Codex answers with "aborted"
    dropped_outputs: int  # outputs whose call is not in the context
    estimated_tokens: int  # Codex's estimate: the items' JSON bytes / 4


class CutSection(Section, frozen=True, kw_only=True):
    """Where a rollout's compaction cut: the tail it keeps byte for byte and what it summarized."""

    cut_line: int  # the first line kept verbatim
    summarized_items: int
    kept_items: int
    at_turn_start: bool


class RolloutOutputSection(Section, frozen=True, kw_only=True):
    """The compacted rollout written: where, its digest and size, and its checkpoint record."""

    path: str
    sha256: str
    bytes: int
    lines: int
    ratio: float  # bytes of the output / bytes of the source
    compacted_line: int  # the checkpoint's `compacted` record


class RolloutClass(Section, frozen=True, kw_only=True):
    """One content class of a rollout: items, and each estimator's tokens, in the file and sent."""

    items: int
    context_items: int
    session: dict[str, int]  # estimator -> tokens of every response item the file holds
    context: dict[str, int]  # estimator -> tokens of the context Codex sends on resume
    names: dict[str, RolloutClass] | UnsetType = UNSET  # per tool, for tool calls and outputs


class BilledSection(Section, frozen=True, kw_only=True):
    """What Codex's own `token_count` events say was billed (the truth estimates are held to)."""

    events: int
    input: int  # Codex's running totals at the last event
    cached_input: int
    output: int
    reasoning_output: int
    last_input: int | None  # what the last request sent: the context it was billed for


class RolloutTokens(Section, frozen=True, kw_only=True):
    """A rollout's tokens by estimator and content class, and its billed truth."""

    estimators: list[str]
    unavailable: dict[str, str]  # a real tokenizer that is not installed -> how to install it
    session: dict[str, int]
    context: dict[str, int]
    classes: dict[str, RolloutClass]
    billed: BilledSection
