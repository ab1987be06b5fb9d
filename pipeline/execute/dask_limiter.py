"""One limiter for every worker of a cluster: a Dask actor holding the run's `WindowLimiter`.

Every model call of every worker asks the actor for its grant, so requests and tokens per window
and calls in flight hold for the whole cluster together, never per worker. The actor lives on
one worker and runs its async methods on that worker's event loop, where the limiter's anyio
primitives wait; callers reach it through `ClusterLimiter`, the `CallLimiter` protocol over the
actor. Clocks differ between machines, so a settle names when the call surely arrived as an age
(seconds before now), which the actor turns back into a time on its own clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from pipeline.summarize.model.limiter import Grant, RateLimits, WindowLimiter

__all__ = ["ClusterLimiter", "LimiterActor"]


class LimiterActor:
    """The cluster's window log (made on first use, inside the event loop that will await it)."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self._limiter: WindowLimiter | None = None

    def _log(self) -> WindowLimiter:
        if self._limiter is None:
            self._limiter = WindowLimiter(self.limits)
        return self._limiter

    async def acquire(self, tokens: int) -> Grant:
        """Wait until a call of `tokens` fits every limit of the cluster, then count it."""
        return await self._log().acquire(tokens)

    async def settle(self, grant: Grant, billed_tokens: int, age: float | None) -> None:
        """The call ended `age` seconds after it surely arrived (None: it arrived just now)."""
        limiter = self._log()
        arrived_by = None if age is None else anyio.current_time() - max(0.0, age)
        await limiter.settle(grant, billed_tokens, arrived_by)

    async def pause(self, seconds: float) -> None:
        """A provider said 429 to some worker: no grant anywhere for `seconds`."""
        await self._log().pause(seconds)

    async def grants(self) -> int:
        """Grants so far (for tests and logs)."""
        return self._log().statistics().grants


@dataclass(frozen=True, slots=True)
class ClusterLimiter:
    """`CallLimiter` over the actor: each call blocks a thread on the actor's answer, never the loop."""

    actor: Any  # a distributed.Actor proxy of LimiterActor (picklable: it travels with the options)

    async def acquire(self, tokens: int) -> Grant:
        grant: Grant = await anyio.to_thread.run_sync(self._wait, "acquire", tokens)
        return grant

    async def settle(self, grant: Grant, billed_tokens: int, arrived_by: float | None = None) -> None:
        age = None if arrived_by is None else anyio.current_time() - arrived_by
        await anyio.to_thread.run_sync(self._wait, "settle", grant, billed_tokens, age)

    async def pause(self, seconds: float) -> None:
        await anyio.to_thread.run_sync(self._wait, "pause", seconds)

    def _wait(self, method: str, *arguments: object) -> Any:
        return getattr(self.actor, method)(*arguments).result()
