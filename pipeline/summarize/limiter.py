"""The run's one limiter: requests and tokens per window, calls in flight, and pauses after a 429.

Every model call of every session acquires a grant first, weighted by its estimated input plus
its output bound, and settles it with the tokens the provider billed (or 0 when it billed none),
so the window counts what the provider counts. The window is a sliding log, not a bucket: a
bucket lets a full burst follow a full refill and so allows twice the limit within one minute;
the log never grants more than the limits in any window of that length.

No released library fits both rates, weights corrected after the fact and anyio (aiolimiter and
pyrate-limiter are asyncio-only and weigh a call once; aiometer has no token weights), so this is
a small log on anyio primitives. The protocol is three async methods on small values, so a Dask
actor can back it for a cluster-wide limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

import anyio

from pipeline.errors import CompactionError

__all__ = [
    "WINDOW_GUARD",
    "CallLimiter",
    "Grant",
    "LimiterStatistics",
    "RateLimits",
    "RequestOverRateLimit",
    "WindowLimiter",
]

WINDOW_GUARD: Final = 0.02
"""Share of the window added to it: a grant and the request's arrival are not the same instant."""


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

    async def settle(self, grant: Grant, billed_tokens: int) -> None:
        """The call ended: count what it really cost, and free its in-flight slot."""
        ...

    async def pause(self, seconds: float) -> None:
        """The provider said 429: grant nothing for `seconds`."""
        ...


@dataclass(slots=True, eq=False)
class _Entry:
    at: float
    tokens: int
    counted: bool = True  # False once it left the window


class WindowLimiter:
    """A sliding-window log of grants; waiters are served first come, first served."""

    def __init__(self, limits: RateLimits, clock: Callable[[], float] = anyio.current_time) -> None:
        self.limits = limits
        self._clock = clock
        self._window = limits.window_seconds * (1 + WINDOW_GUARD)
        self._log: deque[_Entry] = deque()
        self._open: dict[int, _Entry] = {}
        self._tokens = 0
        self._paused_until = 0.0
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
                entry = _Entry(self._clock(), tokens)
                self._log.append(entry)
                self._tokens += tokens
                self._grants += 1
                grant = Grant(self._grants, tokens)
                self._open[grant.id] = entry
                return grant
        except BaseException:
            self._slots.release()
            raise

    async def settle(self, grant: Grant, billed_tokens: int) -> None:
        """Replace the grant's weight by the billed tokens and free its slot."""
        entry = self._open.pop(grant.id, None)
        if entry is None:
            return
        if entry.counted:
            self._tokens += billed_tokens - entry.tokens
        entry.tokens = billed_tokens
        self._slots.release()
        self._wake()

    async def pause(self, seconds: float) -> None:
        """Hold every grant until `seconds` from now (a later pause never shortens an earlier one)."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)
        self._pauses += 1

    def statistics(self) -> LimiterStatistics:
        """Grants and pauses so far, calls in flight, tokens counted in the current window."""
        self._expire(self._clock())
        return LimiterStatistics(self._grants, self._pauses, len(self._open), self._tokens)

    async def _wait_for_room(self, tokens: int) -> None:
        while True:
            delay = self._delay(self._clock(), tokens)
            if delay <= 0:
                return
            self._changed = anyio.Event()
            with anyio.move_on_after(delay):
                await self._changed.wait()

    def _delay(self, now: float, tokens: int) -> float:
        """Seconds until a call of `tokens` fits (0 when it fits now); settling may shorten it."""
        if now < self._paused_until:
            return self._paused_until - now
        self._expire(now)
        if len(self._log) + 1 > self.limits.requests_per_window:
            return self._log[0].at + self._window - now
        excess = self._tokens + tokens - self.limits.tokens_per_window
        if excess <= 0:
            return 0.0
        for entry in self._log:
            excess -= entry.tokens
            if excess <= 0:
                return entry.at + self._window - now
        return self._window  # unreachable while tokens <= the limit; a safe bound all the same

    def _expire(self, now: float) -> None:
        while self._log and self._log[0].at <= now - self._window:
            gone = self._log.popleft()
            gone.counted = False
            self._tokens -= gone.tokens

    def _wake(self) -> None:
        self._changed.set()
