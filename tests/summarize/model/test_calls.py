"""One model call: retried on 429/5xx/529/timeouts with tenacity, honouring retry-after, bounded."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from pipeline.summarize.model.calls import CallLedger, RetryPolicy, call_model
from pipeline.summarize.model.limiter import RateLimits, WindowLimiter
from pipeline.summarize.model.providers import (
    InputTooLong,
    ModelRequest,
    ProviderStatusError,
    ProviderTransportError,
    Role,
    Turn,
)
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.summarize._support import FAST_RETRY, OPEN_LIMITS, anthropic, client, openai

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest("sys", (Turn(Role.USER, 'L1 human: "hi"'),), 200)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as running:
        yield running


async def test_a_429_is_retried_after_its_retry_after_and_pauses_the_limiter(server: ProviderServer) -> None:
    server.script(Answer.rate_limited(0.3))
    limiter = WindowLimiter(OPEN_LIMITS)
    ledger = CallLedger()
    started = anyio.current_time()
    async with client() as http:
        reply = await call_model(REQUEST, anthropic(server.base_url, http), limiter, FAST_RETRY, ledger)
    assert anyio.current_time() - started >= 0.3
    assert reply.text and (ledger.calls, ledger.attempts, ledger.retries) == (1, 2, 1)
    assert limiter.statistics().pauses == 1 and limiter.statistics().in_flight == 0


async def test_server_errors_overload_and_timeouts_are_retried(server: ProviderServer) -> None:
    server.script(Answer.error(500), Answer.error(529), Answer.held(1.0), Answer.error(503))
    policy = RetryPolicy(
        max_attempts=5, initial_backoff_seconds=0.01, max_backoff_seconds=0.02, call_timeout_seconds=0.3
    )
    ledger = CallLedger()
    async with client() as http:
        reply = await call_model(
            REQUEST, openai(server.base_url, http), WindowLimiter(OPEN_LIMITS), policy, ledger
        )
    assert reply.text and ledger.attempts == 5 and ledger.last_status == 200
    assert [request.status for request in server.requests] == [500, 529, 200, 503, 200]  # the third timed out


async def test_attempts_are_bounded_and_the_last_error_is_raised(server: ProviderServer) -> None:
    server.script(*[Answer.error(529)] * 6)
    ledger = CallLedger()
    async with client() as http:
        with pytest.raises(ProviderStatusError) as raised:
            await call_model(
                REQUEST, anthropic(server.base_url, http), WindowLimiter(OPEN_LIMITS), FAST_RETRY, ledger
            )
    assert raised.value.status == 529 and ledger.attempts == FAST_RETRY.max_attempts == len(server.requests)


async def test_client_errors_and_long_prompts_are_not_retried(server: ProviderServer) -> None:
    server.script(Answer.error(401), Answer.of(Behavior.CONTEXT_EXCEEDED))
    ledger = CallLedger()
    limiter = WindowLimiter(OPEN_LIMITS)
    async with client() as http:
        provider = openai(server.base_url, http)
        with pytest.raises(ProviderStatusError):
            await call_model(REQUEST, provider, limiter, FAST_RETRY, ledger)
        with pytest.raises(InputTooLong):
            await call_model(REQUEST, provider, limiter, FAST_RETRY, ledger)
    assert ledger.attempts == 2 and limiter.statistics().tokens_in_window == 0  # neither was billed


async def test_a_refused_connection_is_a_transport_error_after_its_attempts() -> None:
    with ProviderServer() as gone:
        url = gone.base_url
    ledger = CallLedger()
    async with client() as http:
        with pytest.raises(ProviderTransportError) as raised:
            await call_model(REQUEST, anthropic(url, http), WindowLimiter(OPEN_LIMITS), FAST_RETRY, ledger)
    assert raised.value.kind == "ConnectError" and ledger.attempts == FAST_RETRY.max_attempts


async def test_the_limiter_is_settled_with_billed_usage_or_the_estimate(server: ProviderServer) -> None:
    server.script(Answer.of(Behavior.GROUNDED), Answer.of(Behavior.GROUNDED, usage=False))
    limiter = WindowLimiter(RateLimits(100, 10**6, 4, 60.0))
    ledger = CallLedger()
    async with client() as http:
        provider = anthropic(server.base_url, http)
        await call_model(REQUEST, provider, limiter, FAST_RETRY, ledger)
        billed = server.requests[0].billed_tokens
        assert limiter.statistics().tokens_in_window == billed
        await call_model(REQUEST, provider, limiter, FAST_RETRY, ledger)
    assert ledger.calls_without_usage == 1
    assert ledger.billed_input_tokens + ledger.billed_output_tokens == billed
    assert limiter.statistics().tokens_in_window > billed  # the second, unbilled call counts its estimate


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_stream_cut_short_or_carrying_an_error_event_is_retried_like_a_529(
    server: ProviderServer, name: str
) -> None:
    server.script(Answer.of(Behavior.STREAM_ERROR), Answer.of(Behavior.STREAM_CUT))
    ledger = CallLedger()
    async with client() as http:
        make = anthropic if name == "anthropic" else openai
        reply = await call_model(
            REQUEST, make(server.base_url, http, stream=True), WindowLimiter(OPEN_LIMITS), FAST_RETRY, ledger
        )
    assert reply.text and (ledger.calls, ledger.attempts) == (1, 3)
    assert [request.behavior for request in server.requests] == [
        Behavior.STREAM_ERROR,
        Behavior.STREAM_CUT,
        Behavior.GROUNDED,
    ]


@pytest.mark.parametrize(("name", "status"), [("anthropic", 529), ("openai", 500)])
async def test_what_a_broken_stream_raises(server: ProviderServer, name: str, status: int) -> None:
    server.script(Answer.of(Behavior.STREAM_ERROR), Answer.of(Behavior.STREAM_CUT))
    async with client() as http:
        make = anthropic if name == "anthropic" else openai
        provider = make(server.base_url, http, stream=True)
        with pytest.raises(ProviderStatusError) as error_event:
            await provider.complete(REQUEST)
        with pytest.raises(ProviderTransportError) as cut:
            await provider.complete(REQUEST)
    assert error_event.value.status == status and error_event.value.retryable
    assert cut.value.kind == "stream-cut" and cut.value.retryable
