"""What a pi session records of the tokens its requests were billed for.

Every assistant message carries the provider's `usage` (`input`, `output`, `cacheRead`,
`cacheWrite`, `reasoning` when the provider reports it, `cost`), and so do the summaries pi
generates (`compaction` and `branch_summary` entries) and `usage` entries (cache warming): pi
counts them all in its session totals, and so do these figures.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.formats.pi.session_decode import PiKind, PiSession

__all__ = ["BilledUsage", "billed_usage"]


@dataclass(frozen=True, slots=True)
class BilledUsage:
    """Totals over the session's billed requests, and what the last assistant request sent."""

    events: int
    input: int
    cache_read: int
    cache_write: int
    output: int
    reasoning: int
    cost: float
    last_input: int | None  # input + cache read + cache write of the last assistant message


def _number(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usages(session: PiSession) -> Iterator[tuple[bool, Mapping[str, Any]]]:
    for entry in session.entries:
        if entry.kind is PiKind.MESSAGE and entry.role == "assistant":
            usage = entry.message.get("usage")
            if isinstance(usage, dict):
                yield True, usage
        elif entry.kind in (PiKind.COMPACTION, PiKind.BRANCH_SUMMARY, PiKind.USAGE):
            usage = entry.record.get("usage")
            if isinstance(usage, dict):
                yield False, usage


def _cost(usage: Mapping[str, Any]) -> float:
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else 0.0


def billed_usage(session: PiSession) -> BilledUsage:
    """The session's billed totals."""
    usages = list(_usages(session))
    last = next((u for assistant, u in reversed(usages) if assistant), None)
    return BilledUsage(
        events=len(usages),
        input=sum(_number(u, "input") for _, u in usages),
        cache_read=sum(_number(u, "cacheRead") for _, u in usages),
        cache_write=sum(_number(u, "cacheWrite") for _, u in usages),
        output=sum(_number(u, "output") for _, u in usages),
        reasoning=sum(_number(u, "reasoning") for _, u in usages),
        cost=round(sum(_cost(u) for _, u in usages), 6),
        last_input=None
        if last is None
        else sum(_number(last, k) for k in ("input", "cacheRead", "cacheWrite")),
    )
