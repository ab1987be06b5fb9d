"""Sharing the room a fitted summary has left among its lists: files, commands, errors.

Once the fitting ladder has found a rung whose summary fits, its lists may name more than the
rung allows: directories whole instead of counted, commands instead of counted, older failures
instead of an omission marker. Each list is a lever: of its `total` members, `carried` are
already in the summary (a command named under Errors, the failures the rung keeps) and `most`
more can be named. The lists are raised together, each to the same share of its members, as
high as the room allows (a reader loses the same share of each, never one whole list while
another keeps everything); what that leaves is then given to the levers in their order (files,
commands, errors: the order of their recall targets). Pure: sizes come from the caller's measure
of a whole summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.summarize.checkpoint.fitting import Bounds, largest

__all__ = ["LEVEL_STEPS", "Lever", "allocate"]


LEVEL_STEPS: Final = 1000  # the shares tried, in thousandths: finer than one member in a thousand


@dataclass(frozen=True, slots=True)
class Lever:
    """One list: `apply(bounds, n)` names `n` of its `most` unnamed members (`carried` of its `total`
    are in the summary already)."""

    total: int
    carried: int
    most: int
    apply: Callable[[Bounds, int], Bounds]

    def at(self, level: int) -> int:
        """The members to name so that `level` thousandths of the list are in the summary."""
        wanted = -(-level * self.total // LEVEL_STEPS) - self.carried  # rounded up
        return min(self.most, max(0, wanted))


def allocate(bounds: Bounds, levers: Sequence[Lever], measure: Callable[[Bounds], int], room: int) -> Bounds:
    """`bounds` with the lists raised as high as `room` holds them (the bounds as given when it
    holds no more).

    `measure` is the summary's length under some bounds; a list's size grows with the members it
    names, so the highest level that fits is found by bisection.
    """
    levers = [lever for lever in levers if lever.most > 0]
    if not levers or measure(bounds) > room:
        return bounds

    def counts(level: int) -> list[int]:
        return [lever.at(level) for lever in levers]

    level = largest(0, LEVEL_STEPS, lambda n: n == 0 or measure(_applied(bounds, levers, counts(n))) <= room)
    chosen = counts(level)
    for position, lever in enumerate(levers):  # what the level left, in the levers' order

        def fits(n: int, at: int = position) -> bool:
            return measure(_applied(bounds, levers, [*chosen[:at], n, *chosen[at + 1 :]])) <= room

        chosen[position] = largest(chosen[position], lever.most, fits)
    return _applied(bounds, levers, chosen)


def _applied(bounds: Bounds, levers: Sequence[Lever], counts: Sequence[int]) -> Bounds:
    for lever, count in zip(levers, counts, strict=True):
        bounds = lever.apply(bounds, count)
    return bounds
