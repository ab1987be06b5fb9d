"""One model call: under the shared limiter, inside `fail_after`, retried with tenacity.

Each attempt is weighed at the request's estimated input plus its output bound, and settled with
the tokens the provider billed (the estimate when it sent no usage, nothing when it refused the
call), so the limiter counts what the provider counts. 429, 5xx, 529 and transport failures are
retried with jittered exponential backoff that never waits less than `retry-after`; a 429 also
pauses the limiter for every session. Attempts are bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_random_exponential

from pipeline.summarize.model.limiter import CallLimiter
from pipeline.summarize.model.prompts import request_tokens
from pipeline.summarize.model.providers.base import (
    InputTooLong,
    ModelReply,
    ModelRequest,
    ProviderError,
    ProviderStatusError,
    ProviderTransportError,
    SummaryProvider,
)

__all__ = ["RATE_LIMITED", "CallLedger", "RetryPolicy", "call_model"]

RATE_LIMITED: Final = 429


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Attempts per call, the backoff's first and largest wait, and the time limit of one attempt."""

    max_attempts: int
    initial_backoff_seconds: float
    max_backoff_seconds: float
    call_timeout_seconds: float


@dataclass(slots=True)
class CallLedger:
    """What one summary's calls cost so far (mutable inside one summary, frozen into its account)."""

    calls: int = 0
    attempts: int = 0
    billed_input_tokens: int = 0
    billed_output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls_without_usage: int = 0
    repairs: int = 0
    chunks: int = 0
    optional_omitted: int = 0
    depth: int = 0
    last_status: int | None = None
    pauses: int = 0  # 429s that paused the run's limiter
    waited_seconds: float = 0.0  # slept between attempts (backoff, retry-after)

    @property
    def retries(self) -> int:
        """Attempts beyond the first of each call."""
        return self.attempts - self.calls


def _retryable(error: BaseException) -> bool:
    return isinstance(error, ProviderError) and error.retryable


def _waiter(policy: RetryPolicy) -> wait_random_exponential:
    return wait_random_exponential(multiplier=policy.initial_backoff_seconds, max=policy.max_backoff_seconds)


async def call_model(
    request: ModelRequest,
    provider: SummaryProvider,
    limiter: CallLimiter,
    policy: RetryPolicy,
    ledger: CallLedger,
) -> ModelReply:
    """The reply to `request`; the last `ProviderError` once the attempts are spent."""
    estimate = request_tokens(request) + request.max_output_tokens
    jitter = _waiter(policy)

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        hinted = error.retry_after if isinstance(error, ProviderStatusError) else None
        seconds = max(hinted or 0.0, jitter(state))
        ledger.waited_seconds += seconds
        return seconds

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_exception(_retryable),
        sleep=anyio.sleep,
        reraise=True,
    )
    ledger.calls += 1
    async for attempt in retrying:
        with attempt:
            ledger.attempts += 1
            reply = await _attempt(request, provider, limiter, policy, estimate, ledger)
    return reply


async def _attempt(
    request: ModelRequest,
    provider: SummaryProvider,
    limiter: CallLimiter,
    policy: RetryPolicy,
    estimate: int,
    ledger: CallLedger,
) -> ModelReply:
    grant = await limiter.acquire(estimate)
    billed = estimate  # a call that timed out or was cut may well have been billed
    arrived_by: float | None = None  # unknown: the limiter takes the moment it is settled
    try:
        with anyio.fail_after(policy.call_timeout_seconds):
            reply = await provider.complete(request)
    except TimeoutError as exc:
        raise ProviderTransportError("timeout") from exc
    except InputTooLong:
        billed = 0  # a rejected prompt is not billed
        raise
    except ProviderStatusError as exc:
        billed = 0  # an error status is not billed
        ledger.last_status = exc.status
        if exc.status == RATE_LIMITED:
            ledger.pauses += 1
            hinted = exc.retry_after
            await limiter.pause(hinted if hinted is not None else policy.initial_backoff_seconds)
        raise
    else:
        ledger.last_status = 200
        arrived_by = reply.answer_began
        if reply.usage is None:
            ledger.calls_without_usage += 1
        else:
            billed = reply.usage.total
            ledger.billed_input_tokens += reply.usage.input_tokens
            ledger.billed_output_tokens += reply.usage.output_tokens
            ledger.cache_read_tokens += reply.usage.cache_read_tokens
            ledger.cache_write_tokens += reply.usage.cache_write_tokens
        return reply
    finally:
        with anyio.CancelScope(shield=True):
            await limiter.settle(grant, billed, arrived_by)
