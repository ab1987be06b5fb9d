"""A set of 1-based line numbers kept as runs of consecutive numbers, not as one int object each.

A partition's sets hold every line of a session; as frozensets they cost about 63 bytes a line
(an int object and a hash slot each), more than a giant of small records may spend beside its
index (issue 35: 1.5 x the session's size). The summarized span and the kept tail are mostly
consecutive lines, so runs hold them in a few bytes; numbers are made when iterated, in order.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Set
from typing import Any

__all__ = ["LineRuns"]


class LineRuns(Set[int]):
    """An immutable, ordered set of line numbers held as runs (`starts[i]` up to `stops[i]`, exclusive).

    It is a `collections.abc.Set`: membership, length, ordered iteration, equality with any set
    (a frozenset of the same numbers included) and the set operators, whose results are runs too.
    """

    __slots__ = ("_count", "_starts", "_stops")

    def __init__(self, numbers: Iterable[int] = ()) -> None:
        if isinstance(numbers, Set) and not isinstance(numbers, LineRuns):
            self._starts, self._stops, self._count = _set_runs(numbers)
            return
        starts, stops = array("q"), array("q")
        ordered = numbers if isinstance(numbers, range | LineRuns) else sorted(numbers)  # repeats skipped
        for number in ordered:
            if stops and stops[-1] == number:
                stops[-1] = number + 1
            elif not stops or number > stops[-1]:
                starts.append(number)
                stops.append(number + 1)
        self._starts, self._stops = starts, stops
        self._count = sum(stop - start for start, stop in zip(starts, stops, strict=True))

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> LineRuns:  # type: ignore[override]  # the mixin's results: runs too
        return cls(it)

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int):
            return False
        at = bisect_right(self._starts, number) - 1
        return at >= 0 and number < self._stops[at]

    def __iter__(self) -> Iterator[int]:
        for start, stop in zip(self._starts, self._stops, strict=True):
            yield from range(start, stop)

    def __reversed__(self) -> Iterator[int]:
        for start, stop in zip(reversed(self._starts), reversed(self._stops), strict=True):
            yield from range(stop - 1, start - 1, -1)

    def __len__(self) -> int:
        return self._count

    def __hash__(self) -> int:
        return self._hash()

    def __repr__(self) -> str:
        runs = ", ".join(
            f"{a}-{b - 1}" if b - a > 1 else str(a) for a, b in zip(self._starts, self._stops, strict=True)
        )
        return f"LineRuns({runs})"

    def runs(self) -> Iterator[range]:
        """The runs in order, each a range of consecutive numbers."""
        return map(range, self._starts, self._stops)

    @property
    def first(self) -> int | None:
        """The smallest number (None when empty)."""
        return self._starts[0] if self._starts else None

    @property
    def last(self) -> int | None:
        """The largest number (None when empty)."""
        return self._stops[-1] - 1 if self._stops else None


def _set_runs(numbers: Set[int]) -> tuple[array[int], array[int], int]:
    """Runs of a set of ints (no repeats): a run ends where the next number is not one more.

    Comprehensions over the sorted numbers, not a loop of appends: the partition's six sets hold
    every line of a session and are made once per report.
    """
    ordered = sorted(numbers)
    if not ordered:
        return array("q"), array("q"), 0
    ends = [at for at in range(1, len(ordered)) if ordered[at] != ordered[at - 1] + 1]
    starts = array("q", [ordered[0], *(ordered[at] for at in ends)])
    stops = array("q", [*(ordered[at - 1] + 1 for at in ends), ordered[-1] + 1])
    return starts, stops, len(ordered)
