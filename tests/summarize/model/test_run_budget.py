"""The run's token budget: each call's worst case reserved before it is sent, what it billed counted."""

from __future__ import annotations

import anyio
import pytest

from pipeline.summarize.model.limiter import RateLimits, WindowLimiter
from pipeline.summarize.model.run_budget import BudgetedLimiter, RunBudget, RunBudgetReached

pytestmark = pytest.mark.anyio

OPEN = RateLimits(1000, 10_000_000, 64, 60.0)


async def test_concurrent_calls_never_reserve_more_than_the_budget_left() -> None:
    budget = RunBudget(10_000)
    limiter = BudgetedLimiter(WindowLimiter(OPEN), budget)
    sent: list[int] = []
    refused: list[int] = []

    async def call(index: int) -> None:
        try:
            grant = await limiter.acquire(3000)
        except RunBudgetReached:
            refused.append(index)
            return
        sent.append(index)
        await anyio.sleep(0.01)
        await limiter.settle(grant, 1000)

    async with anyio.create_task_group() as group:
        for index in range(10):
            group.start_soon(call, index)
    assert len(sent) == 3 and len(refused) == 7  # three worst cases fit at once, not a fourth
    assert budget.billed == 3000 and budget.reserved == 0
    grant = await limiter.acquire(7000)  # what is left once the three settled for less
    await limiter.settle(grant, 7000)
    assert budget.spent
    with pytest.raises(RunBudgetReached):
        await limiter.acquire(1)


async def test_a_failed_call_counts_and_an_ungranted_one_gives_its_reservation_back() -> None:
    budget = RunBudget(5000)
    limiter = BudgetedLimiter(WindowLimiter(RateLimits(1000, 4000, 8, 60.0)), budget)
    grant = await limiter.acquire(3000)
    await limiter.settle(grant, 2500)  # a reply that then failed grounding is billed all the same
    assert budget.billed == 2500
    with anyio.move_on_after(0.05):
        await limiter.acquire(2000)  # over the window's tokens: waits, and is cancelled
    assert budget.reserved == 0 and budget.billed == 2500


async def test_without_a_limit_nothing_is_refused() -> None:
    budget = RunBudget(None)
    limiter = BudgetedLimiter(WindowLimiter(OPEN), budget)
    grant = await limiter.acquire(9_000_000)
    await limiter.settle(grant, 9_000_000)
    assert not budget.spent and budget.billed == 9_000_000
