"""The repair Qwen Code applies to its history before every request: each call gets one answer.

As Qwen Code 0.24's `repairOrphanedToolUseTurns` (run on the whole history, the new prompt's
content appended, before the curated history is taken): for each model content with calls, the
run of user contents after it (past upstream placeholders) is searched for their responses; a
call with none gets a synthesized failed response, a response found in a later user content of
the run is moved up to the first, later duplicates are removed, and user contents left empty
are dropped. What is synthesized or moved goes into the adjacent user content, after its own
responses, or into a new user content there when there is none. The file is never changed:
this is what Qwen Code sends, not what it writes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from pipeline.formats.qwen_code.api_history import Entry, is_placeholder
from pipeline.formats.qwen_code.session_records import Content, Part, PartKind

__all__ = ["UNRECORDED_RESULT", "Repair", "repair_calls"]

UNRECORDED_RESULT: Final = (
    "Tool execution result was not recorded \u2014 likely interrupted by network failure, abort, "
    "or process exit. Treat as failure and retry if needed."
)
"""The error Qwen Code answers a call with when the file holds no result for it."""


@dataclass(frozen=True, slots=True)
class Repair:
    """The history as sent, and the call ids answered by Qwen Code rather than by the file."""

    entries: tuple[Entry, ...]
    synthesized: tuple[str, ...]
    moved_or_dropped: tuple[str, ...]


def _synthetic(call: Part) -> Part:
    return Part(
        PartKind.FUNCTION_RESPONSE,
        text=UNRECORDED_RESULT,
        call_id=call.call_id,
        name=call.name or "unknown",
        failed=True,
    )


def _adjacent(history: list[Entry], model: int) -> int:
    index = model + 1
    while (
        index < len(history)
        and history[index].content.role == "model"
        and is_placeholder(history[index].content)
    ):
        index += 1
    return index


def _repair_turn(history: list[Entry], model: int, synthesized: list[str], moved: list[str]) -> int:
    """Repair the calls of `history[model]` in place; how many contents were inserted before it."""
    expected = {
        p.call_id: p for p in history[model].content.parts if p.kind is PartKind.FUNCTION_CALL and p.call_id
    }
    if not expected:
        return 0
    adjacent = end = _adjacent(history, model)
    found: dict[str, list[tuple[int, int]]] = {}
    while end < len(history) and history[end].content.role == "user":
        for index, part in enumerate(history[end].content.parts):
            if part.kind is PartKind.FUNCTION_RESPONSE and part.call_id:
                found.setdefault(part.call_id, []).append((end, index))
        end += 1
    inject = [_synthetic(call) for call_id, call in expected.items() if not found.get(call_id)]
    synthesized += [part.call_id or "" for part in inject]
    removals: list[tuple[int, int]] = []
    for call_id in expected:
        places = found.get(call_id) or []
        if places and places[0][0] != adjacent:
            turn, index = places[0]
            inject.append(history[turn].content.parts[index])
            removals.append(places[0])
        removals += places[1:]
        moved += [call_id] * (len(places[1:]) + (1 if places and places[0][0] != adjacent else 0))
    if not inject and not removals:
        return 0
    for turn, index in sorted(removals, reverse=True):
        content = history[turn].content
        history[turn] = replace(
            history[turn], content=Content(content.role, content.parts[:index] + content.parts[index + 1 :])
        )
    for turn in range(end - 1, adjacent, -1):
        if history[turn].content.role == "user" and not history[turn].content.parts:
            del history[turn]
    if not inject:
        return 0
    if adjacent < len(history) and history[adjacent].content.role == "user":
        entry = history[adjacent]
        parts = entry.content.parts
        at = next((i for i, p in enumerate(parts) if p.kind is not PartKind.FUNCTION_RESPONSE), len(parts))
        history[adjacent] = replace(entry, content=Content("user", parts[:at] + tuple(inject) + parts[at:]))
        return 0
    history.insert(adjacent, Entry(Content("user", tuple(inject)), history[model].lines))
    return 1


def repair_calls(entries: tuple[Entry, ...]) -> Repair:
    """The history with every call answered once, as Qwen Code repairs it before sending."""
    history = list(entries)
    synthesized: list[str] = []
    moved: list[str] = []
    index = 0
    while index < len(history):
        if history[index].content.role == "model":
            index += _repair_turn(history, index, synthesized, moved)
        index += 1
    return Repair(tuple(history), tuple(synthesized), tuple(moved))
