"""Fitting a deterministic checkpoint into its room: the ladder of bounds and the prompt allocation.

A summary that holds everything within its room is written as it is. One that does not is written
again under tighter bounds, loosest first (seed 000: older user text gets a budget of its own):
the other sections keep fewer and shorter bullets (omission markers say how many went), and the
human messages share what is left. Every human message keeps its anchor and at least its first
`PROMPT_FLOOR_CHARS` characters; the newest keep their text (up to `max_prompt_chars`), older ones
are cut to their head with a marker naming the line and how many characters were cut. Only when
the floor itself does not fit do heads get shorter, and only when the shortest heads do not fit
are the oldest messages cited by anchor alone (a bullet saying how many characters went), then
counted in an omission marker. Pure and deterministic: same bullets, same room, same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.summarize.checkpoint.document import Bullet, cut, omission_marker, render_bullet
from pipeline.summarize.checkpoint.listing import EVERY_COMMAND_HERE, Elsewhere, Grain

__all__ = [
    "ANCHORS_PER_BULLET",
    "LADDER",
    "MIN_PROMPT_HEAD_CHARS",
    "PROMPT_FLOOR_CHARS",
    "PROMPT_TAIL_SHARE",
    "TRAIL_RECORDS",
    "USER_TEXT_SHARE",
    "Bounds",
    "PromptFit",
    "PromptUnit",
    "SummaryFit",
    "bounded_prompt",
    "fit_prompts",
    "floor_chars",
    "largest",
    "prompt_units",
]

PROMPT_TAIL_SHARE: Final = 0.25  # a message over its bound keeps its end too: a paste first, the ask last
PROMPT_FLOOR_CHARS: Final = 200  # issue 20: the head every human message keeps while the room holds them all
MIN_PROMPT_HEAD_CHARS: Final = 40  # a shorter head says little more than its anchor: cite by anchor instead
ANCHORS_PER_BULLET: Final = (
    16  # anchor-only bullets: enough lines to amortize their words, few enough to read
)
TRAIL_RECORDS: Final = 1024  # commands, failures, references each: a session's trail, not a flood of one kind
USER_TEXT_SHARE: Final = 0.5  # the other sections shrink until human messages have half the room, or all fit


@dataclass(frozen=True, slots=True)
class Bounds:
    """One rung of the ladder: quote length, bullets per section, records per appendix section.

    `trail_records` bounds the artifact trail apart from the other sections: every command, every
    failure and every identifier is what a resumed agent asks for, so they keep their own cap.
    `file_grain` and `command_grain` are how finely the lists of files and commands name their
    members: they are never capped, only grouped more coarsely (`listing`); a counted list of
    commands need not name again those `commands_elsewhere` names with how they ended.
    """

    quote_chars: int
    bullets_per_section: int
    file_operations: int
    validation_records: int
    active_work_records: int
    trail_records: int
    file_grain: Grain = Grain.NAMES
    command_grain: Grain = Grain.NAMES
    named_directories: frozenset[str] = frozenset()  # named whatever the grain: the room allows them
    named_commands: frozenset[str] = frozenset()
    commands_elsewhere: Elsewhere = EVERY_COMMAND_HERE  # named with their outcome in another section
    kept_errors: int | None = None  # Errors' own cap when the room's allocation sets it (else the trail's)

    @property
    def errors_kept(self) -> int:
        """How many Errors bullets are kept: the allocation's share, else the trail bound."""
        return self.trail_records if self.kept_errors is None else self.kept_errors

    def within(self, widest: Bounds) -> Bounds:
        """This rung, never looser than the options' own bounds."""
        return Bounds(
            min(self.quote_chars, widest.quote_chars),
            min(self.bullets_per_section, widest.bullets_per_section),
            min(self.file_operations, widest.file_operations),
            min(self.validation_records, widest.validation_records),
            min(self.active_work_records, widest.active_work_records),
            min(self.trail_records, widest.trail_records),
            self.file_grain,
            self.command_grain,
            self.named_directories,
            self.named_commands,
            self.commands_elsewhere,
            self.kept_errors,
        )


LADDER: Final = (
    Bounds(600, 40, 64, 32, 32, TRAIL_RECORDS),
    Bounds(400, 20, 32, 16, 16, 512),
    Bounds(200, 10, 16, 8, 8, 256),
    Bounds(120, 5, 8, 4, 4, 128),
    Bounds(80, 2, 4, 2, 2, 128, Grain.NAMES, Grain.COUNTS),
    Bounds(80, 2, 4, 2, 2, 32, Grain.COUNTS, Grain.COUNTS),
    Bounds(60, 1, 1, 1, 1, 4, Grain.COUNTS, Grain.COUNTS),
)
"""The rungs tried in order once the whole summary does not fit (the first is the defaults').

The artifact trail (failures, identifiers) shrinks last and slowest: it is what a resumed agent
asks for; files and commands are never capped, only counted per directory or program, commands
first (a failed one is still named under Errors)."""


@dataclass(frozen=True, slots=True)
class PromptUnit:
    """A human message to represent (or several with one text): its text and every line it stands for."""

    text: str
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PromptFit:
    """The bullets of the human messages within their room, and how each was represented (counts only)."""

    bullets: tuple[Bullet, ...]
    omitted: int  # units left out, counted in the section's omission marker
    verbatim: int
    cut: int
    anchors_only: int
    head_chars: int  # the head a cut message keeps at least
    chars: int  # what the bullets (and the omission marker) take, newlines included
    floor_met: bool  # every message kept its anchor and at least the floor's head


def prompt_units(bullets: Sequence[Bullet]) -> tuple[PromptUnit, ...]:
    """Bullets with equal text become one unit at the first one's place, citing every line (none dropped)."""
    merged: dict[str, list[int]] = {}
    for bullet in bullets:
        merged.setdefault(bullet.text, []).extend(bullet.lines)
    return tuple(PromptUnit(text, tuple(sorted(set(lines)))) for text, lines in merged.items())


def floor_chars(units: Sequence[PromptUnit], max_chars: int) -> int:
    """What every unit takes at the floor's head: more than the room, and no rung can meet the floor."""
    return _heads_chars(units, min(PROMPT_FLOOR_CHARS, max_chars))


def fit_prompts(units: Sequence[PromptUnit], room: int, max_chars: int, omitted_before: int = 0) -> PromptFit:
    """The units within `room` characters: newest whole, older cut to a head, the oldest by anchor if need be.

    `omitted_before` counts bullets a prior summary had already left out; they share the marker line.
    """
    floor = min(PROMPT_FLOOR_CHARS, max_chars)
    marker = _marker_chars(omitted_before)
    if _heads_chars(units, floor) + marker <= room:
        return _grown(units, room - marker, floor, max_chars, omitted_before)
    shortest = min(MIN_PROMPT_HEAD_CHARS, floor)
    if _heads_chars(units, shortest) + marker <= room:
        head = largest(shortest, floor, lambda h: _heads_chars(units, h) + marker <= room)
        return _grown(units, room - marker, head, max_chars, omitted_before)
    return _anchored(units, room, shortest, omitted_before)  # no head is longer than `shortest` there


def bounded_prompt(text: str, max_chars: int, line: int) -> str:
    """A human message within its bound `max_chars`: whole, or its head and its end around a marker."""
    return cut(text, max_chars, line, tail=int(max_chars * PROMPT_TAIL_SHARE))


def _unit_chars(unit: PromptUnit, limit: int, max_chars: int = 0) -> int:
    return len(render_bullet(_cut(unit, limit, max_chars), unit.lines)) + 1


def _cut(unit: PromptUnit, limit: int, max_chars: int = 0) -> str:
    """The unit at `limit`: at its bound `max_chars` head and end, at a fitted head its head alone."""
    if limit == max_chars:
        return bounded_prompt(unit.text, max_chars, unit.lines[0])
    return cut(unit.text, limit, unit.lines[0])


def _heads_chars(units: Sequence[PromptUnit], head: int) -> int:
    return sum(_unit_chars(unit, head) for unit in units)


def _marker_chars(omitted: int) -> int:
    return len(omission_marker(omitted)) + 1 if omitted else 0


def largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest value in [low, high] that fits, given that `low` does (sizes grow with the value)."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _grown(
    units: Sequence[PromptUnit], room: int, head: int, max_chars: int, omitted_before: int
) -> PromptFit:
    """Every unit at `head`, then the newest grown to `max_chars` while the room lasts."""
    limits = [head] * len(units)
    spare = room - _heads_chars(units, head)
    for position in range(len(units) - 1, -1, -1):
        unit = units[position]
        base = _unit_chars(unit, head, max_chars)
        if _unit_chars(unit, max_chars, max_chars) - base <= spare:
            limits[position] = max_chars
            spare -= _unit_chars(unit, max_chars, max_chars) - base
            continue
        limits[position] = _boundary_head(unit, head, max_chars, base + spare)
        break
    pairs = tuple(zip(units, limits, strict=True))
    bullets = tuple(Bullet(_cut(unit, limit, max_chars), unit.lines) for unit, limit in pairs)
    whole = sum(limit == max_chars or _cut(unit, limit) == unit.text for unit, limit in pairs)
    chars = sum(len(render_bullet(b.text, b.lines)) + 1 for b in bullets) + _marker_chars(omitted_before)
    floor_met = head >= min(PROMPT_FLOOR_CHARS, max_chars)
    return PromptFit(bullets, omitted_before, whole, len(units) - whole, 0, head, chars, floor_met)


def _boundary_head(unit: PromptUnit, head: int, max_chars: int, room: int) -> int:
    """The first unit that does not fit whole keeps the longest head the rest of the room allows."""
    return largest(head, max_chars, lambda limit: _unit_chars(unit, limit, max_chars) <= room)


def _anchored(units: Sequence[PromptUnit], room: int, head: int, omitted_before: int) -> PromptFit:
    """The fewest oldest units by anchor alone (then left out, oldest first) so the rest keep short heads."""
    total = len(units)

    def layout(anchored: int, left_out: int) -> tuple[Bullet, ...]:
        alone = _anchor_bullets(units[left_out:anchored])
        return alone + tuple(Bullet(_cut(unit, head), unit.lines) for unit in units[anchored:])

    def chars(anchored: int, left_out: int) -> int:
        bullets = layout(anchored, left_out)
        return sum(len(render_bullet(b.text, b.lines)) + 1 for b in bullets) + _marker_chars(
            omitted_before + left_out
        )

    left_out = 0
    if chars(total, 0) > room:  # not even every anchor fits: leave out the oldest
        left_out = total - largest(0, total, lambda kept: chars(total, total - kept) <= room)
        anchored = total
    else:
        anchored = total - largest(0, total, lambda headed: chars(total - headed, 0) <= room)
    whole = sum(_cut(unit, head) == unit.text for unit in units[anchored:])
    return PromptFit(
        layout(anchored, left_out),
        omitted_before + left_out,
        whole,
        total - anchored - whole,
        anchored - left_out,
        head if anchored < total else 0,
        chars(anchored, left_out),
        floor_met=False,
    )


def _anchor_bullets(units: Sequence[PromptUnit]) -> tuple[Bullet, ...]:
    """Runs of units cited by anchor alone, each bullet saying how many lines and characters it stands for."""
    bullets = []
    for start in range(0, len(units), ANCHORS_PER_BULLET):
        run = units[start : start + ANCHORS_PER_BULLET]
        lines = tuple(line for unit in run for line in unit.lines)
        cut_chars = sum(len(unit.text) for unit in run)
        bullets.append(
            Bullet(f"{len(lines)} older requests by anchor only ({cut_chars} characters cut)", lines)
        )
    return tuple(bullets)


@dataclass(frozen=True, slots=True)
class SummaryFit:
    """How a summary larger than its room was fitted into it (counts only, never text).

    `needed_chars` is what the whole summary would have taken, `allowed_chars` its room; `level`
    the rung of `LADDER` used (1-based). Prompt counts are of bullets (equal texts share
    one): kept whole, cut to a head of at least `prompt_head_chars`, cited by anchor only, or
    left out in an omission marker.
    """

    needed_chars: int
    allowed_chars: int
    level: int
    prompts: int
    prompts_verbatim: int
    prompts_cut: int
    prompts_by_anchor: int
    prompts_omitted: int
    prompt_head_chars: int
