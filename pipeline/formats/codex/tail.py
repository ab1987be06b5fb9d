"""Where a Codex compaction cuts: the recent tail it keeps byte for byte, chosen by tokens.

The tail starts at a record after which everything stays: a cut never separates a call from
its output, nor a reasoning item from the item it precedes, never falls before the base or a
rollback (what a rollback drops is not the tail's to keep), and starts at a user turn when one
fits: the turn's lifecycle records move with it. The largest tail that fits the target beside
the summary is chosen; when none fits, the smallest safe one, and the plan says the target was
missed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.formats.codex.item_types import CALL_TYPES, OUTPUT_TYPES
from pipeline.formats.codex.reconstruct import ContextItem, ItemOrigin, Rebuilt
from pipeline.formats.codex.rollout_decode import Rollout, RolloutKind
from pipeline.formats.context_items import TailPlan

__all__ = ["TailPlan", "plan_tail"]

_TURN_HEAD = ("task_started", "turn_started", "user_message")


def _safe(items: Sequence[ContextItem], floor: int) -> list[int]:
    """Indices a tail may start at: a record of the file after `floor`, splitting nothing."""
    open_calls: set[str] = set()
    safe = []
    for index, item in enumerate(items):
        after_reasoning = index > 0 and items[index - 1].type == "reasoning"
        if item.origin is ItemOrigin.LINE and item.line > floor and not open_calls and not after_reasoning:
            safe.append(index)
        if item.type in CALL_TYPES and item.call_id:
            open_calls.add(item.call_id)
        elif item.type in OUTPUT_TYPES:
            open_calls.discard(item.call_id or "")
    return safe


def _turn_start(rollout: Rollout, item_line: int, previous_line: int) -> int:
    """The first lifecycle record of the turn a prompt opens (between it and the item before)."""
    start = item_line
    for line in range(item_line - 1, previous_line, -1):
        entry = rollout.entry(line)
        if entry is None:
            continue
        if entry.kind is RolloutKind.TURN_CONTEXT or (
            entry.kind is RolloutKind.EVENT_MSG and entry.item in _TURN_HEAD
        ):
            start = line
    return start


def _floor(rollout: Rollout, rebuilt: Rebuilt) -> int:
    """The last line a tail may not reach back to: the base, a rollback, a legacy compaction."""
    fixed = [
        number
        for number, entry in enumerate(rollout.entries, 1)
        if entry is not None
        and (entry.rollback > 0 or (entry.kind is RolloutKind.COMPACTED and not entry.replacement))
    ]
    return max([rebuilt.base_line or 0, *fixed])


def plan_tail(
    rollout: Rollout, rebuilt: Rebuilt, items: Sequence[ContextItem], tokens: Sequence[int], room: int
) -> TailPlan | None:
    """The tail within `room` tokens (the target less the summary's share), or None: no safe cut."""
    floor = _floor(rollout, rebuilt)
    safe = [index for index in _safe(items, floor) if index > 0]
    if not safe:
        return None
    suffix = [0] * (len(tokens) + 1)
    for index in range(len(tokens) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + tokens[index]
    turns = [index for index in safe if items[index].user_turn]
    fitting = [index for index in turns if suffix[index] <= room] or [i for i in safe if suffix[i] <= room]
    first = fitting[0] if fitting else safe[-1]
    at_turn = items[first].user_turn
    previous = items[first - 1].line if items[first - 1].origin is not ItemOrigin.INITIAL_CONTEXT else 0
    cut = _turn_start(rollout, items[first].line, max(previous, floor)) if at_turn else items[first].line
    return TailPlan(first, cut, bool(fitting), at_turn)
