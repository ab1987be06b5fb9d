"""The dry-run plan: calls, tokens, cost and the least wall time, predicted without a call."""

from __future__ import annotations

import pytest

from pipeline.summarize.model.cost import ModelPrice, PriceTable, min_wall_seconds, plan_fleet, plan_summary
from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.limiter import RateLimits
from pipeline.summarize.model.outcomes import SummaryOutcome
from pipeline.testing.provider_server import ProviderServer
from tests.summarize._support import anthropic, client, options, services, session, turn

PRICES = PriceTable((ModelPrice("claude-test", 3.0, 15.0),))
LIMITS = RateLimits(requests_per_window=50, tokens_per_window=40_000, max_in_flight=8, window_seconds=60.0)


def test_a_session_that_fits_is_one_call_priced_from_the_table() -> None:
    plan = plan_summary(session(5), options(), LIMITS, PRICES, "claude-test")
    assert (plan.calls, plan.rounds, plan.sequential_calls, plan.refusal) == (1, 0, 1, None)
    assert plan.estimated_output_tokens == options().planned_output_tokens
    expected = (plan.estimated_input_tokens * 3.0 + plan.estimated_output_tokens * 15.0) / 1e6
    assert plan.estimated_cost_usd == pytest.approx(expected)
    assert plan_summary(session(5), options(), LIMITS, PRICES, "unpriced-model").estimated_cost_usd is None


@pytest.mark.anyio
async def test_the_plan_predicts_the_rounds_a_real_run_takes() -> None:
    items = session(400, words=40)
    plan = plan_summary(items, options(context_window=9_000), LIMITS, PRICES, "claude-test")
    with ProviderServer() as server:
        async with client() as http:
            result = await write_model_summary(
                items, options(context_window=9_000), services(anthropic(server.base_url, http))
            )
    assert isinstance(result, ModelSummary)
    assert plan.rounds == result.account.reduction_depth
    assert abs(plan.calls - result.account.calls) <= 2
    assert plan.estimated_input_tokens >= result.account.billed_input_tokens  # the estimate is the safe side


def test_refusals_are_predicted_before_spending() -> None:
    oversized = [*session(3), *turn(13, "log " * 9_000, "ok")]
    group = plan_summary(oversized, options(context_window=8_000), LIMITS, PRICES, "claude-test")
    assert (
        group.refusal is SummaryOutcome.GROUP_EXCEEDS_BUDGET
        and group.facts.group_line == 13
        and group.calls == 0
    )
    overhead = plan_summary(session(3), options(context_window=2_500), LIMITS, PRICES, "claude-test")
    assert overhead.refusal is SummaryOutcome.FIXED_OVERHEAD_EXCEEDS_BUDGET


def test_the_least_wall_time_is_set_by_the_tighter_limit_and_fleets_add_up() -> None:
    assert min_wall_seconds(100, 1_000, LIMITS) == pytest.approx(120.0)  # 100 calls at 50 a minute
    assert min_wall_seconds(10, 200_000, LIMITS) == pytest.approx(300.0)  # 200k tokens at 40k a minute
    plans = [plan_summary(session(5), options(), LIMITS, PRICES, "claude-test") for _ in range(3)]
    refused = plan_summary(session(3), options(context_window=2_500), LIMITS, PRICES, "claude-test")
    fleet = plan_fleet([*plans, refused], LIMITS)
    assert (fleet.sessions, fleet.refused, fleet.calls) == (4, 1, 3)
    assert fleet.estimated_cost_usd == pytest.approx(sum(p.estimated_cost_usd or 0 for p in plans))
    tokens = fleet.estimated_input_tokens + fleet.estimated_output_tokens
    assert fleet.min_wall_seconds == pytest.approx(min_wall_seconds(3, tokens, LIMITS))
