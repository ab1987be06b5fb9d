"""The plan before spending: calls, estimated tokens, cost and the least wall time the limits allow.

Pure: the same pack, budget and partition as the engine, with every partial checkpoint assumed
to be `planned_output_tokens` long, so a dry run predicts the rounds a real run would take and
the refusals it would hit (fixed overhead, an oversized group, no progress) without a call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.summarize.model.engine import ModelSummaryOptions, request_budget
from pipeline.summarize.model.limiter import RateLimits
from pipeline.summarize.model.outcomes import FailureFacts, SummaryFailed, SummaryOutcome
from pipeline.summarize.model.pack import AnchorKind, entries_of, fit_entries
from pipeline.summarize.model.prices import BilledPrices, ModelPrice, PriceTable
from pipeline.summarize.model.prompts import Partial, fixed_overhead_tokens
from pipeline.summarize.model.reduction import (
    MAX_CHUNKS_PER_ROUND,
    MAX_REDUCTION_DEPTH,
    Budget,
    GroupKind,
    GroupOverBudget,
    SemanticGroup,
    history_groups,
    partial_group,
    partition,
)

__all__ = [
    "BilledPrices",
    "FleetPlan",
    "ModelPrice",
    "PriceTable",
    "SummaryPlan",
    "min_wall_seconds",
    "plan_fleet",
    "plan_summary",
]


@dataclass(frozen=True, slots=True)
class SummaryPlan:
    """One session's predicted calls, rounds, tokens and cost; `refusal` when it would fail."""

    calls: int
    rounds: int
    estimated_input_tokens: int
    estimated_output_tokens: int
    estimated_cost_usd: float | None
    min_wall_seconds: float
    refusal: SummaryOutcome | None = None
    facts: FailureFacts = field(default_factory=FailureFacts)

    @property
    def sequential_calls(self) -> int:
        """Calls on the critical path: one per round and the final merge."""
        return self.rounds + 1 if self.calls else 0


@dataclass(frozen=True, slots=True)
class FleetPlan:
    """A run's totals and the least wall time its limits allow for all of them."""

    sessions: int
    refused: int
    calls: int
    estimated_input_tokens: int
    estimated_output_tokens: int
    estimated_cost_usd: float | None
    min_wall_seconds: float


def min_wall_seconds(calls: int, tokens: int, limits: RateLimits) -> float:
    """Seconds the rate limits need for `calls` calls weighing `tokens`, at the very least."""
    windows = max(calls / limits.requests_per_window, tokens / limits.tokens_per_window)
    return windows * limits.window_seconds


def plan_summary(
    evidence: Sequence[EvidenceItem],
    options: ModelSummaryOptions,
    limits: RateLimits,
    prices: PriceTable,
    model: str,
) -> SummaryPlan:
    """What `write_model_summary` would spend on `evidence`, if every answer came back grounded."""
    entries = entries_of(evidence, options.pack.max_optional_chars)
    humans = sum(1 for entry in entries if entry.kind is AnchorKind.HUMAN)
    try:
        budget = request_budget(options.budget, options.pack, humans)
        calls, rounds, tokens_in = _simulate(history_groups(entries), budget, options, humans)
    except SummaryFailed as failure:
        return SummaryPlan(0, 0, 0, 0, None, 0.0, failure.outcome, failure.facts)
    tokens_out = calls * options.planned_output_tokens
    cost = prices.cost(model, tokens_in, tokens_out)
    wall = min_wall_seconds(calls, tokens_in + tokens_out, limits)
    return SummaryPlan(calls, rounds, tokens_in, tokens_out, cost, wall)


def _simulate(
    groups: tuple[SemanticGroup, ...], budget: Budget, options: ModelSummaryOptions, humans: int
) -> tuple[int, int, int]:
    """(calls, rounds, input tokens) of the engine's loop with planned-size partials."""
    overhead = fixed_overhead_tokens(humans)
    calls = rounds = tokens = 0
    while sum(group.mandatory_tokens for group in groups) > budget.tokens:
        if rounds == MAX_REDUCTION_DEPTH:
            raise SummaryFailed(SummaryOutcome.INPUT_OVERFLOW, FailureFacts(depth=rounds))
        try:
            chunks = partition(groups, budget, MAX_CHUNKS_PER_ROUND)
        except GroupOverBudget as over:
            raise over.refusal() from None
        rounds += 1
        calls += len(chunks)
        tokens += sum(overhead + _shown_tokens(chunk, budget) for chunk in chunks)
        partials = tuple(_planned_partial(chunk, options.planned_output_tokens) for chunk in chunks)
        reduced = (*partials, *groups[sum(len(chunk) for chunk in chunks) :])
        if sum(g.mandatory_tokens for g in reduced) >= sum(g.mandatory_tokens for g in groups):
            raise SummaryFailed(SummaryOutcome.REDUCTION_NO_PROGRESS, FailureFacts(depth=rounds))
        groups = reduced
    return calls + 1, rounds, tokens + overhead + _shown_tokens(groups, budget)


def _shown_tokens(groups: Sequence[SemanticGroup], budget: Budget) -> int:
    fixed = sum(group.tokens for group in groups if group.kind is GroupKind.REDUCTION)
    entries = [entry for group in groups for entry in group.entries]
    shown, _ = fit_entries(entries, budget.tokens - fixed, budget.chars)
    return fixed + sum(entry.tokens for entry in shown)


def _planned_partial(chunk: Sequence[SemanticGroup], tokens: int) -> SemanticGroup:
    partial = Partial("", chunk[0].first_line, chunk[-1].last_line)
    humans = tuple(line for group in chunk for line in group.humans)
    return partial_group(partial, humans, None, planned_tokens=tokens)


def plan_fleet(plans: Sequence[SummaryPlan], limits: RateLimits) -> FleetPlan:
    """Totals over sessions; the cost is None when any planned session has no price."""
    planned = [plan for plan in plans if plan.refusal is None]
    tokens_in = sum(plan.estimated_input_tokens for plan in planned)
    tokens_out = sum(plan.estimated_output_tokens for plan in planned)
    costs = [plan.estimated_cost_usd for plan in planned]
    cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
    calls = sum(plan.calls for plan in planned)
    wall = min_wall_seconds(calls, tokens_in + tokens_out, limits)
    return FleetPlan(len(plans), len(plans) - len(planned), calls, tokens_in, tokens_out, cost, wall)
