"""Typed outcomes of a model-written summary (seed 001's summary errors) and its accounting.

A summary that cannot be written ends in exactly one `SummaryOutcome`, carried by a
`SummaryFailure` with counts and ids only: token figures, a reduction depth, the first line of an
oversized group, an HTTP status, defect codes. Never prompt text, model text or a secret, so a
failure can go into a report or a log as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final

from pipeline.errors import CompactionError
from pipeline.reasons import Figure, Figures, ReasonCode
from pipeline.summarize.model.redaction import RedactionCounts

__all__ = [
    "STILL_DEFECTIVE",
    "DefectNote",
    "FailureFacts",
    "RepairFacts",
    "SummaryAccount",
    "SummaryFailed",
    "SummaryFailure",
    "SummaryOutcome",
]


class SummaryOutcome(ReasonCode):
    """Why a model summary was not written (seed 001's list, plus the grounding gate)."""

    INPUT_OVERFLOW = "input-overflow"
    OUTPUT_TRUNCATED = "output-truncated"
    EMPTY = "empty"
    CONTENT_FILTERED = "content-filtered"
    REFUSED = "refused"
    PROVIDER_FAILURE = "provider-failure"
    ABORTED = "aborted"
    REDUCTION_NO_PROGRESS = "reduction-no-progress"
    FIXED_OVERHEAD_EXCEEDS_BUDGET = "fixed-overhead-exceeds-budget"
    GROUP_EXCEEDS_BUDGET = "group-exceeds-budget"
    GROUNDING_FAILED = "grounding-failed"
    RUN_BUDGET_REACHED = "run-budget-reached"  # a call would not fit what --max-run-tokens left


STILL_DEFECTIVE: Final = "still-defective"
"""The repair call's outcome when its answer came back and still failed the gate."""


@dataclass(frozen=True, slots=True)
class DefectNote:
    """One grounding defect as a report lists it: its code, the structural code under it, the
    checkpoint section, the answer's line and the cited anchor. Never the answer's text."""

    code: str
    detail: str | None = None
    section: str | None = None
    answer_line: int | None = None
    anchor: int | None = None


@dataclass(frozen=True, slots=True)
class RepairFacts:
    """The one repair of an ungrounded answer: the defects it was asked to fix, how the repair
    call ended (`STILL_DEFECTIVE`, or the outcome it ended in), the repaired answer's defects."""

    answer_defects: tuple[DefectNote, ...]
    outcome: str
    repaired_defects: tuple[DefectNote, ...] = ()


@dataclass(frozen=True, slots=True)
class FailureFacts:
    """Counts and ids that say what went wrong; every field is optional and none holds text.

    `input_tokens`/`limit_tokens`: the estimate that did not fit and the budget it missed;
    `before_tokens`/`after_tokens`: a reduction round's input and output sizes; `depth`: the
    reduction round; `group_line`: first source line of the group that did not fit;
    `http_status` and `attempts`: the last provider answer; `defects`: grounding defect codes
    with their counts, after the repair call; `repair_call`: the repair that did not save it, defect
    by defect.
    """

    input_tokens: int | None = None
    limit_tokens: int | None = None
    before_tokens: int | None = None
    after_tokens: int | None = None
    depth: int | None = None
    group_line: int | None = None
    http_status: int | None = None
    attempts: int | None = None
    defects: tuple[tuple[str, int], ...] = ()
    repair_call: RepairFacts | None = None

    def figures(self) -> Figures:
        """The facts a report carries beside the outcome: each set figure, and the defects' total."""
        named = (
            (Figure.INPUT_TOKENS, self.input_tokens),
            (Figure.LIMIT_TOKENS, self.limit_tokens),
            (Figure.BEFORE_TOKENS, self.before_tokens),
            (Figure.AFTER_TOKENS, self.after_tokens),
            (Figure.DEPTH, self.depth),
            (Figure.GROUP_LINE, self.group_line),
            (Figure.HTTP_STATUS, self.http_status),
            (Figure.ATTEMPTS, self.attempts),
            (Figure.DEFECTS, sum(count for _, count in self.defects) if self.defects else None),
        )
        return tuple((name, value) for name, value in named if value is not None)


class SummaryFailed(CompactionError):
    """Raised inside the engine to stop a summary; the entry point turns it into a `SummaryFailure`."""

    def __init__(self, outcome: SummaryOutcome, facts: FailureFacts | None = None) -> None:
        self.outcome = outcome
        self.facts = facts or FailureFacts()
        super().__init__(f"model summary failed: {outcome.value}")


@dataclass(frozen=True, slots=True)
class SummaryAccount:
    """What one summary cost and how it was made: calls, retries, billed tokens, depth, time.

    Billed tokens come from the provider's `usage`; `calls_without_usage` counts answers that
    carried none (llama.cpp when streaming), whose tokens are then the estimate, not billed.
    `reduction_depth` is 0 for a summary written in one request.
    """

    provider: str
    model: str
    calls: int = 0
    retries: int = 0
    repairs: int = 0
    billed_input_tokens: int = 0
    billed_output_tokens: int = 0
    cache_read_tokens: int = 0  # of the billed input: read from the prompt cache
    cache_write_tokens: int = 0  # of the billed input: written to it
    cost_usd: float | None = None  # at `[prices]` (cache shares from [model_summary]); None: unpriced
    calls_without_usage: int = 0
    rate_limit_pauses: int = 0  # 429s, each of which paused every session's calls
    retry_wait_seconds: float = 0.0  # slept between attempts
    reduction_depth: int = 0
    chunks: int = 0
    wall_seconds: float = 0.0
    redactions: RedactionCounts = field(default_factory=RedactionCounts)
    redacted_by: tuple[str, ...] = ()  # `redaction.redactors()`: what replaced the secrets
    optional_evidence_omitted: int = 0

    def after(self, earlier: SummaryAccount) -> SummaryAccount:
        """This account with an earlier, discarded summary's spending added (a session summarized
        twice pays for both): calls, tokens, cost, waits and time; the rest describes this one."""
        cost = None if self.cost_usd is None or earlier.cost_usd is None else self.cost_usd + earlier.cost_usd
        return replace(
            self,
            calls=self.calls + earlier.calls,
            retries=self.retries + earlier.retries,
            repairs=self.repairs + earlier.repairs,
            billed_input_tokens=self.billed_input_tokens + earlier.billed_input_tokens,
            billed_output_tokens=self.billed_output_tokens + earlier.billed_output_tokens,
            cache_read_tokens=self.cache_read_tokens + earlier.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + earlier.cache_write_tokens,
            cost_usd=cost,
            calls_without_usage=self.calls_without_usage + earlier.calls_without_usage,
            rate_limit_pauses=self.rate_limit_pauses + earlier.rate_limit_pauses,
            retry_wait_seconds=self.retry_wait_seconds + earlier.retry_wait_seconds,
            wall_seconds=self.wall_seconds + earlier.wall_seconds,
        )


@dataclass(frozen=True, slots=True)
class SummaryFailure:
    """A summary that was not written: its outcome, the facts, and what was spent on it."""

    outcome: SummaryOutcome
    facts: FailureFacts
    account: SummaryAccount
