"""The shared limiter: requests and tokens per sliding window, calls in flight, pauses, fairness."""

from __future__ import annotations

import anyio
import pytest

from pipeline.summarize.model.limiter import Grant, RateLimits, RequestOverRateLimit, WindowLimiter

pytestmark = pytest.mark.anyio

WINDOW = 0.3


def busiest(times: list[float], weights: list[int], window: float) -> tuple[int, int]:
    """Most grants and most weight inside any window of `window` seconds."""
    pairs = sorted(zip(times, weights, strict=True))
    most = (0, 0)
    for start, (at, _) in enumerate(pairs):
        inside = [weight for when, weight in pairs[start:] if when < at + window]
        most = (max(most[0], len(inside)), max(most[1], sum(inside)))
    return most


async def grant_all(limiter: WindowLimiter, weights: list[int], hold: float = 0.0) -> list[float]:
    """Acquire one grant per weight concurrently; settle each after `hold`; return grant times."""
    times: list[float] = []

    async def one(weight: int) -> None:
        grant = await limiter.acquire(weight)
        times.append(anyio.current_time())
        await anyio.sleep(hold)
        await limiter.settle(grant, weight)

    async with anyio.create_task_group() as group:
        for weight in weights:
            group.start_soon(one, weight)
    return times


async def test_no_window_ever_holds_more_requests_than_allowed() -> None:
    limiter = WindowLimiter(RateLimits(5, 10**6, 50, WINDOW))
    started = anyio.current_time()
    times = await grant_all(limiter, [1] * 16)
    assert busiest(times, [1] * 16, WINDOW)[0] <= 5
    assert anyio.current_time() - started >= 3 * WINDOW  # 16 grants at 5 a window need three more windows


async def test_tokens_are_weighed_and_a_settled_call_frees_what_it_did_not_use() -> None:
    limiter = WindowLimiter(RateLimits(100, 1000, 50, 5.0))
    first = [await limiter.acquire(400), await limiter.acquire(400)]
    with anyio.move_on_after(0.1) as blocked:
        await limiter.acquire(400)  # 1200 > 1000: must wait
    assert blocked.cancelled_caught
    for grant in first:
        await limiter.settle(grant, 100)  # billed far less than estimated
    with anyio.fail_after(0.5):
        third = await limiter.acquire(400)
    assert limiter.statistics().tokens_in_window == 600
    await limiter.settle(third, 0)


async def test_the_token_limit_holds_in_every_window_under_load() -> None:
    limiter = WindowLimiter(RateLimits(1000, 1000, 50, WINDOW))
    weights = [250, 100, 400, 50, 300, 200] * 3
    times = await grant_all(limiter, weights)
    assert busiest(times, weights, WINDOW)[1] <= 1000


async def test_calls_in_flight_are_capped() -> None:
    limiter = WindowLimiter(RateLimits(100, 10**6, 2, 5.0))
    running = peak = 0

    async def call() -> None:
        nonlocal running, peak
        grant = await limiter.acquire(1)
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.02)
        running -= 1
        await limiter.settle(grant, 1)

    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(call)
    assert peak == 2 and limiter.statistics().in_flight == 0


async def test_a_pause_holds_every_grant_and_never_shortens() -> None:
    limiter = WindowLimiter(RateLimits(100, 10**6, 10, 5.0))
    await limiter.pause(0.2)
    await limiter.pause(0.05)
    started = anyio.current_time()
    grant = await limiter.acquire(1)
    assert anyio.current_time() - started >= 0.19
    assert limiter.statistics().pauses == 2
    await limiter.settle(grant, 1)


async def test_a_large_call_is_served_in_turn_not_starved_by_small_ones() -> None:
    limiter = WindowLimiter(RateLimits(100, 1000, 50, WINDOW))
    order: list[int] = []
    blocker = await limiter.acquire(900)

    async def one(weight: int) -> None:
        grant = await limiter.acquire(weight)
        order.append(weight)
        await limiter.settle(grant, weight)

    async with anyio.create_task_group() as group:
        group.start_soon(one, 800)
        await anyio.sleep(0.01)
        for _ in range(3):
            group.start_soon(one, 50)
        await anyio.sleep(0.01)
        await limiter.settle(blocker, 900)
    assert order[0] == 800


async def test_a_call_heavier_than_a_whole_window_is_refused_at_once() -> None:
    limiter = WindowLimiter(RateLimits(10, 100, 1, 60.0))
    with pytest.raises(RequestOverRateLimit) as raised:
        await limiter.acquire(101)
    assert (raised.value.tokens, raised.value.limit) == (101, 100)
    await limiter.settle(Grant(99, 1), 1)  # an unknown grant is ignored, not an error
    assert limiter.statistics().in_flight == 0


@pytest.mark.parametrize(("requests", "tokens", "flight", "window"), [(0, 1, 1, 1.0), (1, 1, 1, 0.0)])
def test_limits_must_be_positive(requests: int, tokens: int, flight: int, window: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimits(requests, tokens, flight, window)


async def test_a_call_in_flight_longer_than_the_window_still_holds_its_place() -> None:
    limiter = WindowLimiter(RateLimits(1, 10**6, 5, 0.1))
    grant = await limiter.acquire(1)
    await anyio.sleep(0.25)  # the provider may see it arrive only now
    with anyio.move_on_after(0.05) as blocked:
        await limiter.acquire(1)
    assert blocked.cancelled_caught
    await limiter.settle(grant, 1)
    started = anyio.current_time()
    second = await limiter.acquire(1)
    assert anyio.current_time() - started >= 0.09  # one window after it ended
    await limiter.settle(second, 1)


async def test_a_settled_call_leaves_one_window_after_it_had_surely_arrived() -> None:
    limiter = WindowLimiter(RateLimits(1, 10**6, 5, 0.3))
    grant = await limiter.acquire(1)
    await anyio.sleep(0.2)
    await limiter.settle(grant, 1, arrived_by=anyio.current_time() - 0.19)  # its stream began at once
    started = anyio.current_time()
    second = await limiter.acquire(1)
    waited = anyio.current_time() - started
    assert 0.05 <= waited <= 0.2  # 0.3 after the arrival, not after the end
    await limiter.settle(second, 1)
