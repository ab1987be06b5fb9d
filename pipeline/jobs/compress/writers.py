"""Who writes a summary: the embedded deterministic summarizer, or a model through the run's services.

A writer turns the summarized part's evidence into a checkpoint, or a content-free reason why
not. The deterministic writer is plain computation and travels to worker processes; a model
writer holds the run's provider, HTTP client and limiter, so its sessions run in threads of the
main process and each call goes back to the event loop that owns them (`anyio.from_thread`).
With `--on-summary-failure deterministic` a failed model summary falls back to the embedded one,
and the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import anyio.from_thread

from pipeline.errors import SummaryError
from pipeline.reasons import Reason, Refusal, SkipReason
from pipeline.summarize import SummaryFit, SummaryOptions, write_summary
from pipeline.summarize.checkpoint.document import HEADING
from pipeline.summarize.evidence.items import EvidenceItem

if TYPE_CHECKING:  # the model engine (and httpx) load only when a model writes the summaries
    from pipeline.summarize.model.engine import ModelServices, ModelSummaryOptions
    from pipeline.summarize.model.outcomes import SummaryAccount, SummaryFailure
    from pipeline.summarize.model.run_budget import RunBudget

__all__ = [
    "DeterministicWriter",
    "ModelRefusal",
    "ModelWriter",
    "SummaryWriter",
    "Written",
    "spent_before",
    "summary_refusal",
]


@dataclass(frozen=True, slots=True)
class Written:
    """A checkpoint and what the report says about it (counts and ids only)."""

    text: str
    cited_lines: tuple[int, ...]
    prior_summaries: int
    prior_mode: str
    sections: dict[str, int]
    account: SummaryAccount | None = None  # a model's calls, tokens and time
    fallback_from: str | None = None  # the model outcome that made the embedded summarizer write it
    fit: SummaryFit | None = None  # how the embedded summary was fitted into its room, when it was
    failure: SummaryFailure | None = None  # the model's failure the embedded summary stands in for


@dataclass(frozen=True, slots=True)
class ModelRefusal(Reason):
    """A session refused because its model summary failed: the reason, and the failure, whose
    account (calls, tokens, cost) and defects the report lists."""

    failure: SummaryFailure | None = None


class SummaryWriter(Protocol):
    """Writes the checkpoint of some evidence."""

    @property
    def replans(self) -> bool:
        """Whether a summary larger than planned may be written again (free for the embedded one)."""

    def __call__(self, evidence: Sequence[EvidenceItem], room: int) -> Written | Reason:
        """The checkpoint of `evidence` within `room` characters (a model summary is not held to it)."""


def spent_before(outcome: Written | Reason, earlier: Written | None) -> Written | Reason:
    """`outcome` with what an earlier, discarded summary of the session cost added to its account
    (the plan was redone for the contract: both were billed)."""
    spent = earlier.account if earlier is not None else None
    if spent is None:
        return outcome
    if isinstance(outcome, Written) and outcome.account is not None:
        return replace(outcome, account=outcome.account.after(spent))
    if isinstance(outcome, ModelRefusal) and outcome.failure is not None:
        failure = replace(outcome.failure, account=outcome.failure.account.after(spent))
        return replace(outcome, failure=failure)
    return outcome


def summary_refusal(error: SummaryError) -> Reason:
    """The refusal of a session whose embedded summary could not be written, with its figures."""
    return Reason(Refusal.SUMMARY, error.failure, error.figures)


def _deterministic(evidence: Sequence[EvidenceItem], options: SummaryOptions, room: int) -> Written | Reason:
    try:
        result = write_summary(evidence, options, room)
    except SummaryError as exc:
        return summary_refusal(exc)
    return Written(
        result.text,
        result.cited_lines,
        len(result.prior_summaries),
        result.prior_mode.value,
        {heading.value: count for heading, count in result.section_bullets},
        fit=result.fit,
    )


@dataclass(frozen=True, slots=True)
class DeterministicWriter:
    """The embedded summarizer: no network, no key, same evidence, same bytes."""

    options: SummaryOptions
    replans: bool = True

    def __call__(self, evidence: Sequence[EvidenceItem], room: int) -> Written | Reason:
        return _deterministic(evidence, self.options, room)


def _sections(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    current = None
    for line in text.split("\n"):
        if line.startswith(HEADING):
            current = line[len(HEADING) :].strip()
            counts[current] = 0
        elif current is not None and line.startswith("- ") and line.strip() != "- None":
            counts[current] += 1
    return counts


@dataclass(frozen=True, slots=True)
class ModelWriter:
    """A model through the run's provider and limiter; `fallback` writes instead when it fails."""

    options: ModelSummaryOptions
    services: ModelServices
    fallback: SummaryOptions | None
    budget: RunBudget  # the run's, shared with the limiter that reserves and counts each call
    replans: bool = False

    def __call__(self, evidence: Sequence[EvidenceItem], room: int) -> Written | Reason:
        from pipeline.summarize.model.engine import ModelSummary, write_model_summary  # noqa: PLC0415
        from pipeline.summarize.model.outcomes import SummaryOutcome  # noqa: PLC0415

        if self.budget.spent:
            return Reason(SkipReason.RUN_TOKEN_BUDGET)
        outcome = anyio.from_thread.run(write_model_summary, evidence, self.options, self.services)
        if isinstance(outcome, ModelSummary):
            text = outcome.text
            return Written(text, outcome.cited_lines, 0, "model", _sections(text), outcome.account)
        if outcome.outcome is SummaryOutcome.RUN_BUDGET_REACHED:  # the run's limit, not the session's
            return Reason(SkipReason.RUN_TOKEN_BUDGET)
        if self.fallback is None:
            return ModelRefusal(Refusal.SUMMARY, outcome.outcome, outcome.facts.figures(), outcome)
        written = _deterministic(evidence, self.fallback, room)
        if isinstance(written, Reason):
            return written
        return Written(
            written.text,
            written.cited_lines,
            written.prior_summaries,
            written.prior_mode,
            written.sections,
            outcome.account,
            outcome.outcome.value,
            written.fit,
            outcome,
        )
