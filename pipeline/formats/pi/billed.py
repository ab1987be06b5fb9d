"""What a pi session records of the tokens its requests were billed for.

Every assistant message carries the provider's `usage` (`input`, `output`, `cacheRead`,
`cacheWrite`, `reasoning` when the provider reports it, `cost`), and so do the summaries pi
generates (`compaction` and `branch_summary` entries) and `usage` entries (cache warming): pi
counts them all in its session totals, and so do these figures, in all and by the provider and
model each request names (`message.provider`/`message.model`; "unknown" where none is named).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pipeline.formats.pi.session_decode import PiKind, PiSession

__all__ = ["UNKNOWN_MODEL", "BilledUsage", "ModelUsage", "billed_usage"]

UNKNOWN_MODEL: Final = "unknown"  # a billed request that names no provider or model


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Totals over the billed requests of one provider and model (`<provider>/<model>`)."""

    model: str
    events: int
    input: int
    cache_read: int
    cache_write: int
    output: int
    reasoning: int
    cost: float  # the providers' own `cost.total` as pi records it (USD)


@dataclass(frozen=True, slots=True)
class BilledUsage:
    """Totals over the session's billed requests, by provider and model, and what the last
    assistant request sent."""

    events: int
    input: int
    cache_read: int
    cache_write: int
    output: int
    reasoning: int
    cost: float
    last_input: int | None  # input + cache read + cache write of the last assistant message
    by_model: tuple[ModelUsage, ...] = ()  # in model order


def _number(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _model(fields: Mapping[str, Any]) -> str:
    provider, model = fields.get("provider"), fields.get("model")
    if not isinstance(model, str) or not model:
        return UNKNOWN_MODEL
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


def _usages(session: PiSession) -> Iterator[tuple[bool, str, Mapping[str, Any]]]:
    for entry in session.entries:
        if entry.kind is PiKind.MESSAGE and entry.role == "assistant":
            usage = entry.message.get("usage")
            if isinstance(usage, dict):
                yield True, _model(entry.message), usage
        elif entry.kind in (PiKind.COMPACTION, PiKind.BRANCH_SUMMARY, PiKind.USAGE):
            usage = entry.record.get("usage")
            if isinstance(usage, dict):
                yield False, _model(entry.record), usage


def _cost(usage: Mapping[str, Any]) -> float:
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else 0.0


def _totals(model: str, usages: list[Mapping[str, Any]]) -> ModelUsage:
    return ModelUsage(
        model=model,
        events=len(usages),
        input=sum(_number(u, "input") for u in usages),
        cache_read=sum(_number(u, "cacheRead") for u in usages),
        cache_write=sum(_number(u, "cacheWrite") for u in usages),
        output=sum(_number(u, "output") for u in usages),
        reasoning=sum(_number(u, "reasoning") for u in usages),
        cost=round(sum(_cost(u) for u in usages), 6),
    )


def billed_usage(session: PiSession) -> BilledUsage:
    """The session's billed totals, in all and by provider and model."""
    usages = list(_usages(session))
    last = next((u for assistant, _, u in reversed(usages) if assistant), None)
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for _, model, usage in usages:
        grouped.setdefault(model, []).append(usage)
    total = _totals("", [u for _, _, u in usages])
    return BilledUsage(
        events=total.events,
        input=total.input,
        cache_read=total.cache_read,
        cache_write=total.cache_write,
        output=total.output,
        reasoning=total.reasoning,
        cost=total.cost,
        last_input=None
        if last is None
        else sum(_number(last, k) for k in ("input", "cacheRead", "cacheWrite")),
        by_model=tuple(_totals(model, grouped[model]) for model in sorted(grouped)),
    )
