"""Sharing the room a fitted summary has left among its lists: files, commands, errors.

Once the fitting ladder has found a rung whose summary fits, its lists may name more than the
rung allows: directories whole instead of counted, commands instead of counted, older failures
instead of an omission marker. Each list is a lever: of its `total` members, `carried` are
already in the summary (a command named under Errors, the failures the rung keeps) and `most`
more can be named. The lists are raised together, each to the same share of its members, as
high as the room allows (a reader loses the same share of each, never one whole list while
another keeps everything); what that leaves is then given to the levers in their order (files,
commands, errors: the order of their recall targets). `list_levers` builds the levers of a
fitted summary. Pure: sizes come from the caller's measure of a whole summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from pipeline.summarize.checkpoint.bullets import commands_declined, commands_under_errors
from pipeline.summarize.checkpoint.document import Bullet
from pipeline.summarize.checkpoint.fitting import Bounds, largest
from pipeline.summarize.checkpoint.listing import Elsewhere, Grain, directories, newest_commands
from pipeline.summarize.evidence.work_state import DeterministicState

__all__ = ["LEVEL_STEPS", "Lever", "ListsCarried", "allocate", "list_levers"]


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


@dataclass(frozen=True, slots=True)
class ListsCarried:
    """What a fitted summary already says besides its lists: the Errors bullets the rung keeps, the
    Constraints bullets (the user's refusals among them), and how many Errors bullets there are."""

    errors: Sequence[Bullet]
    constraints: Sequence[Bullet]
    failures: int


def list_levers(
    bounds: Bounds, state: DeterministicState, carried: ListsCarried
) -> tuple[Bounds, list[Lever]]:
    """The levers of a fitted summary's lists, files first, and its bounds with the commands that
    another section names with how they ended (a counted list says so rather than naming them)."""
    levers = []
    if bounds.file_grain is Grain.COUNTS:
        folders = directories(state.file_operations)
        levers.append(Lever(len(folders), 0, len(folders), _folder_namer(folders)))
    if bounds.command_grain is Grain.COUNTS:
        records = state.commands
        elsewhere = Elsewhere(
            commands_under_errors(carried.errors, records), commands_declined(carried.constraints, records)
        )
        bounds = replace(bounds, commands_elsewhere=elsewhere)
        said = elsewhere.under_errors | elsewhere.declined
        commands = tuple(c for c in newest_commands(records) if " ".join(c.split()) not in said)
        levers.append(
            Lever(len(records), len(records) - len(commands), len(commands), _command_namer(commands))
        )
    kept = bounds.errors_kept
    failures = carried.failures
    levers.append(Lever(failures, min(kept, failures), max(0, failures - kept), _error_keeper(kept)))
    return bounds, levers


def _folder_namer(folders: Sequence[str]) -> Callable[[Bounds, int], Bounds]:
    return lambda bounds, count: replace(bounds, named_directories=frozenset(folders[:count]))


def _command_namer(commands: Sequence[str]) -> Callable[[Bounds, int], Bounds]:
    return lambda bounds, count: replace(bounds, named_commands=frozenset(commands[:count]))


def _error_keeper(kept: int) -> Callable[[Bounds, int], Bounds]:
    return lambda bounds, count: replace(bounds, kept_errors=kept + count)
