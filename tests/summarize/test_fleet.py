"""A fleet under one limiter: a third of calls answered 429, every session done, no window over its limits."""

from __future__ import annotations

import anyio
import pytest

from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.limiter import RateLimits
from pipeline.summarize.model.outcomes import SummaryFailure
from pipeline.testing.provider_server import Answer, ProviderServer
from tests.summarize._support import anthropic, client, options, services, session

pytestmark = pytest.mark.anyio

# One window stands for a provider's minute, so the test runs in seconds.
LIMITS = RateLimits(requests_per_window=20, tokens_per_window=30_000, max_in_flight=6, window_seconds=1.0)


def every_third_rate_limited(number: int) -> Answer | None:
    return Answer.rate_limited(0.05) if number % 3 == 0 else None


async def test_a_fleet_with_a_third_of_calls_rate_limited_completes_within_the_limits() -> None:
    small = [session(3) for _ in range(20)]
    large = [session(60, words=40) for _ in range(4)]  # these need chunks at this context window
    results: list[ModelSummary | SummaryFailure] = []
    with ProviderServer(latency=0.02, chooser=every_third_rate_limited) as server:
        async with client() as http:
            shared = services(anthropic(server.base_url, http), LIMITS)

            async def one(items: list) -> None:  # type: ignore[type-arg]
                results.append(await write_model_summary(items, options(context_window=6_000), shared))

            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    for items in small + large:
                        group.start_soon(one, items)
        served = server.requests
        peak = server.peak(LIMITS.window_seconds)
    assert len(results) == 24 and all(isinstance(result, ModelSummary) for result in results)
    assert sum(result.account.reduction_depth > 0 for result in results) == 4
    limited = sum(request.status == 429 for request in served)
    assert limited == len(served) // 3 and sum(result.account.retries for result in results) == limited
    assert LIMITS.requests_per_window // 2 <= peak.requests <= LIMITS.requests_per_window, peak
    assert peak.tokens <= LIMITS.tokens_per_window, peak
    billed = sum(r.account.billed_input_tokens + r.account.billed_output_tokens for r in results)
    assert billed == sum(request.billed_tokens for request in served)
