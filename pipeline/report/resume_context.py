"""The sections of a report on a session read through the seam (`agents/protocol.py`): the
context its client rebuilds from it on resume, and a compaction's cut and output.

Counts and line digests only: which compaction is the base, how many items the client sends and
what they cost by its own estimate, and the counts only some clients have (Codex: records
replayed after the base, user turns a rollback dropped, calls it answers "aborted"). No item text.
"""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from pipeline.report.sections import LineSetSection, Section
from pipeline.report.tokens import FitEntry

__all__ = [
    "BilledFitSection",
    "BilledModelSection",
    "BilledSection",
    "ContextClass",
    "ContextOutputSection",
    "ContextSection",
    "ContextTokens",
    "CutSection",
]


class ContextSection(Section, frozen=True, kw_only=True):
    """The context the client rebuilds on resume."""

    resumable: bool  # a layout the current client no longer reads is not (Codex 0.2x)
    items: int  # what the client sends, before its own instructions and the new prompt
    lines: LineSetSection  # the lines those items come from
    base_line: int | None  # the newest compaction the context starts from (its record's line)
    compactions: int
    estimated_tokens: int  # the client's own estimate (Codex: the items' JSON bytes / 4)
    replayed_records: int | UnsetType = UNSET  # Codex: records after the base that it replays
    rolled_back_turns: int | UnsetType = UNSET  # Codex: user turns a rollback dropped
    aborted_calls: int | UnsetType = UNSET  # Codex: calls it answers with "aborted"
    dropped_outputs: int | UnsetType = UNSET  # outputs whose call is not in the context


class CutSection(Section, frozen=True, kw_only=True):
    """Where a compaction cut: the tail it keeps byte for byte and what it summarized."""

    cut_line: int  # the first line kept verbatim
    summarized_items: int
    kept_items: int
    at_turn_start: bool


class ContextOutputSection(Section, frozen=True, kw_only=True):
    """The compacted session written: where, its digest and size, and the line of its summary."""

    path: str
    sha256: str
    bytes: int
    lines: int
    ratio: float  # bytes of the output / bytes of the source
    compacted_line: int  # the record carrying the summary (Codex: its `compacted` record)


class ContextClass(Section, frozen=True, kw_only=True):
    """One content class: items, and each estimator's tokens, in the file and sent."""

    items: int
    context_items: int
    session: dict[str, int]  # estimator -> tokens of every item the file holds
    context: dict[str, int]  # estimator -> tokens of the context the client sends on resume
    names: dict[str, ContextClass] | UnsetType = UNSET  # per tool, for tool calls and outputs


class BilledModelSection(Section, frozen=True, kw_only=True):
    """The billed requests of one provider and model (`<provider>/<model>`), as `BilledSection`."""

    events: int
    input: int
    cached_input: int
    output: int
    reasoning_output: int
    cost: float  # the cost the file records for them (USD)


class BilledSection(Section, frozen=True, kw_only=True):
    """What the file records of the tokens its requests were billed for (the truth estimates are
    held to; Codex: its `token_count` events)."""

    events: int
    input: int  # the totals over the session's requests (Codex: its running totals at the last event)
    cached_input: int
    output: int
    reasoning_output: int
    last_input: int | None  # what the last request sent: the context it was billed for
    cost: float | UnsetType = UNSET  # the cost the file records (USD), where its client records one
    by_model: dict[str, BilledModelSection] | UnsetType = UNSET  # by provider/model, where it names them


class BilledFitSection(Section, frozen=True, kw_only=True):
    """The real tokenizer held to the bills request by request: `billed = c_epoch + slope *
    estimate` over what was sent before each billed request (as the format models what the model
    reads: Codex, each item's visible text, the turn's reasoning and a framing per item), within
    epochs (a compaction or a model change starts one), as `auto` is fitted for Claude Code."""

    fit: FitEntry
    epochs: int
    steps: int  # bill jumps or drops what was sent does not explain
    family: str  # the model family of most billed requests: the session's family in `tokens.json`


class ContextTokens(Section, frozen=True, kw_only=True):
    """A session's tokens by estimator and content class, and its billed truth."""

    estimators: list[str]
    unavailable: dict[str, str]  # a real tokenizer that is not installed -> how to install it
    session: dict[str, int]
    context: dict[str, int]
    classes: dict[str, ContextClass]
    billed: BilledSection
    billed_fit: BilledFitSection | UnsetType = UNSET  # with a real tokenizer, where the format has a series
