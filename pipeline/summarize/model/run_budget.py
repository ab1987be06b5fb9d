"""`--max-run-tokens`: the run's billed tokens held to the limit exactly, however many sessions call
at once.

Every call reserves its worst case (estimated input plus its output bound, what the limiter
weighs it at) before it is sent, and gives the reservation back when it is settled with what the
provider billed; a call whose worst case no longer fits beside what was billed and what calls in
flight reserved is never sent (`RunBudgetReached`). Every settled call counts, the calls of a
summary that later fails too. All of it runs in the event loop that owns the run's services, so
the check and the reservation are one step.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.errors import CompactionError
from pipeline.summarize.model.limiter import CallLimiter, Grant

__all__ = ["BudgetedLimiter", "RunBudget", "RunBudgetReached"]


class RunBudgetReached(CompactionError):
    """A call's worst case does not fit in what the run's token budget has left."""

    def __init__(self, tokens: int, left: int) -> None:
        self.tokens, self.left = tokens, left
        super().__init__(f"a call of up to {tokens} tokens does not fit the {left} the run has left")


@dataclass(slots=True)
class RunBudget:
    """Billed tokens of the run so far and those reserved by calls in flight (limit None: none)."""

    limit: int | None
    billed: int = 0
    reserved: int = 0

    @property
    def spent(self) -> bool:
        """No new summary starts once the run billed its limit."""
        return self.limit is not None and self.billed >= self.limit

    def reserve(self, tokens: int) -> None:
        """Hold `tokens` for a call, or raise `RunBudgetReached` when they do not fit."""
        if self.limit is not None:
            left = self.limit - self.billed - self.reserved
            if tokens > left:
                raise RunBudgetReached(tokens, max(0, left))
        self.reserved += tokens


@dataclass(frozen=True, slots=True)
class BudgetedLimiter:
    """A `CallLimiter` that also reserves each call's worst case from the run's budget."""

    inner: CallLimiter
    budget: RunBudget

    async def acquire(self, tokens: int) -> Grant:
        self.budget.reserve(tokens)
        try:
            return await self.inner.acquire(tokens)
        except BaseException:  # not granted (cancelled, over the window): nothing was sent
            self.budget.reserved -= tokens
            raise

    async def settle(self, grant: Grant, billed_tokens: int, arrived_by: float | None = None) -> None:
        self.budget.reserved -= grant.tokens
        self.budget.billed += billed_tokens
        await self.inner.settle(grant, billed_tokens, arrived_by)

    async def pause(self, seconds: float) -> None:
        await self.inner.pause(seconds)
