"""Sharing the room left among the lists: raised together to one share, then the rest in order."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.summarize.checkpoint.allocation import Lever, allocate
from pipeline.summarize.checkpoint.fitting import LADDER, Bounds

BASE = LADDER[-2]
COSTS = {"files": 10, "commands": 30, "errors": 100}  # characters a member takes when named


def _named(bounds: Bounds) -> dict[str, int]:
    return {
        "files": len(bounds.named_directories),
        "commands": len(bounds.named_commands),
        "errors": bounds.errors_kept - BASE.trail_records,
    }


def measure(bounds: Bounds) -> int:
    """A summary of 1,000 characters and what its lists name (each list's size adds up)."""
    return 1_000 + sum(COSTS[name] * count for name, count in _named(bounds).items())


LEVERS = (
    Lever(100, 0, 100, lambda b, n: replace(b, named_directories=frozenset(f"d{k}/" for k in range(n)))),
    Lever(100, 20, 80, lambda b, n: replace(b, named_commands=frozenset(f"c{k}" for k in range(n)))),
    Lever(
        100,
        BASE.trail_records,
        100 - BASE.trail_records,
        lambda b, n: replace(b, kept_errors=BASE.trail_records + n),
    ),
)


def test_every_list_is_named_whole_when_the_room_holds_them() -> None:
    chosen = allocate(BASE, LEVERS, measure, 100_000)
    assert _named(chosen) == {"files": 100, "commands": 80, "errors": 100 - BASE.trail_records}


@pytest.mark.parametrize(
    ("room", "expected"),
    [
        # 1,000 spare: files and commands rise to a third of their lists, errors just past the 32 kept;
        # the 40 characters left name 4 more files
        (2_000, {"files": 38, "commands": 14, "errors": 2}),
        # 4,000 spare: every list at 55 of 100, then 10 more files with the 100 characters left
        (5_000, {"files": 65, "commands": 35, "errors": 23}),
    ],
)
def test_short_of_room_every_list_reaches_the_same_share_before_one_gets_more(
    room: int, expected: dict[str, int]
) -> None:
    chosen = allocate(BASE, LEVERS, measure, room)
    assert _named(chosen) == expected
    assert measure(chosen) <= room


def test_nothing_more_is_named_when_the_room_is_spent() -> None:
    assert allocate(BASE, LEVERS, measure, 999) is BASE
