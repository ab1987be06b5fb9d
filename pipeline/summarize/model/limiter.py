"""The run's one limiter: requests and tokens per window, calls in flight, and pauses after a 429.

Every model call of every session acquires a grant first, weighed at its estimated input plus
its output bound, and settles it with the tokens the provider billed (nothing when it refused the
call). A provider counts a request when it arrives, which is after our grant and before we see
the answer begin, so a grant occupies the window from the grant until one window after the
answer began (after the call ended when that was not seen): then no window of the provider's,
wherever it starts, holds more than the limits, whatever the delays. The log slides; a bucket
would let a full burst follow a full refill, twice the limit in one minute.

No released library fits both rates, weights corrected after the fact and anyio (aiolimiter and
pyrate-limiter are asyncio-only and weigh a call once; aiometer has no token weights), so this is
a small log on anyio primitives. The protocol is three async methods on small values, so a Dask
actor can back it for a cluster-wide limit (it would read `arrived_by` as an age, not a time).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import anyio

from pipeline.errors import CompactionError

__all__ = [
    "CallLimiter",
    "Grant",
    "LimiterStatistics",
    "RateLimits",
    "RequestOverRateLimit",
    "WindowLimiter",
]


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Requests and input+output tokens allowed per window, calls in flight, the window's length.

    Provider limits are per minute; the window is a knob so tests can run a minute in a second.
    """

    requests_per_window: int
    tokens_per_window: int
    max_in_flight: int
    window_seconds: float

    def __post_init__(self) -> None:
        if min(self.requests_per_window, self.tokens_per_window, self.max_in_flight) < 1:
            raise ValueError("rate limits must be positive")
        if self.window_seconds <= 0:
            raise ValueError("the limiter window must be positive")


@dataclass(frozen=True, slots=True)
class Grant:
    """Permission for one call: an id to settle it by, and the tokens it was weighed at."""

    id: int
    tokens: int


@dataclass(frozen=True, slots=True)
class LimiterStatistics:
    """Counts since the limiter was made."""

    grants: int
    pauses: int
    in_flight: int
    tokens_in_window: int


class RequestOverRateLimit(CompactionError):
    """One call weighs more tokens than a whole window allows: it could never be granted."""

    def __init__(self, tokens: int, limit: int) -> None:
        self.tokens, self.limit = tokens, limit
        super().__init__(f"a call of {tokens} tokens exceeds the {limit} tokens allowed per window")


class CallLimiter(Protocol):
    """What the engine needs of a limiter (a local one, or a proxy to a cluster-wide actor)."""

    async def acquire(self, tokens: int) -> Grant:
        """Wait until a call of `tokens` fits every limit, then count it."""
        ...

    async def settle(self, grant: Grant, billed_tokens: int, arrived_by: float | None = None) -> None:
        """The call ended: count what it really cost from when it had surely arrived (None: now),
        and free its in-flight slot."""
        ...

    async def pause(self, seconds: float) -> None:
        """The provider said 429: grant nothing for `seconds`."""
        ...


@dataclass(slots=True, eq=False)
class _Entry:
    tokens: int
    arrived_by: float = math.inf  # in flight: it may arrive at any moment, so it never expires


class WindowLimiter:
    """A sliding log of grants; waiters are served first come, first served."""

    def __init__(self, limits: RateLimits, clock: Callable[[], float] = anyio.current_time) -> None:
        self.limits = limits
        self._clock = clock
        self._entries: dict[int, _Entry] = {}
        self._tokens = 0
        self._paused_until = -math.inf
        self._turn = anyio.Lock()  # FIFO: the head waiter alone waits for capacity
        self._slots = anyio.Semaphore(limits.max_in_flight)
        self._changed = anyio.Event()
        self._grants = 0
        self._pauses = 0

    async def acquire(self, tokens: int) -> Grant:
        """Wait for an in-flight slot, then for room in the window; count the grant."""
        if tokens > self.limits.tokens_per_window:
            raise RequestOverRateLimit(tokens, self.limits.tokens_per_window)
        await self._slots.acquire()
        try:
            async with self._turn:
                await self._wait_for_room(tokens)
                self._grants += 1
                grant = Grant(self._grants, tokens)
                self._entries[grant.id] = _Entry(tokens)
                self._tokens += tokens
                return grant
        except BaseException:
            self._slots.release()
            raise

    async def settle(self, grant: Grant, billed_tokens: int, arrived_by: float | None = None) -> None:
        """Weigh the grant at the billed tokens from `arrived_by` (default now); free its slot."""
        entry = self._entries.get(grant.id)
        if entry is None or entry.arrived_by != math.inf:
            return
        self._tokens += billed_tokens - entry.tokens
        entry.tokens = billed_tokens
        entry.arrived_by = min(self._clock(), arrived_by) if arrived_by is not None else self._clock()
        self._slots.release()
        self._changed.set()

    async def pause(self, seconds: float) -> None:
        """Hold every grant until `seconds` from now (a later pause never shortens an earlier one)."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)
        self._pauses += 1

    def statistics(self) -> LimiterStatistics:
        """Grants and pauses so far, calls in flight, tokens counted in the current window."""
        self._expire(self._clock())
        flying = sum(1 for entry in self._entries.values() if entry.arrived_by == math.inf)
        return LimiterStatistics(self._grants, self._pauses, flying, self._tokens)

    async def _wait_for_room(self, tokens: int) -> None:
        while True:
            delay = self._delay(self._clock(), tokens)
            if delay <= 0:
                return
            self._changed = anyio.Event()  # a settle may make room before the delay is over
            with anyio.move_on_after(delay):
                await self._changed.wait()

    def _delay(self, now: float, tokens: int) -> float:
        """Seconds until a call of `tokens` fits (0 when it fits now, inf until a call settles)."""
        if now < self._paused_until:
            return self._paused_until - now
        self._expire(now)
        window = self.limits.window_seconds
        leaving = sorted(self._entries.values(), key=lambda entry: entry.arrived_by)
        if len(leaving) + 1 > self.limits.requests_per_window:
            return leaving[0].arrived_by + window - now
        excess = self._tokens + tokens - self.limits.tokens_per_window
        for entry in leaving:
            if excess <= 0:
                break
            excess -= entry.tokens
            if excess <= 0:
                return entry.arrived_by + window - now
        return 0.0 if excess <= 0 else math.inf

    def _expire(self, now: float) -> None:
        horizon = now - self.limits.window_seconds
        for key in [key for key, entry in self._entries.items() if entry.arrived_by <= horizon]:
            self._tokens -= self._entries.pop(key).tokens
