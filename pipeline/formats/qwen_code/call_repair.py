"""The repair Qwen Code applies to its history before every request: each call gets one answer.

As Qwen Code 0.24's `repairOrphanedToolUseTurns` (run on the whole history, the new prompt's
content appended, before the curated history is taken): for each model content with calls, the
run of user contents after it (past upstream placeholders) is searched for their responses; a
call with none gets a synthesized failed response, a response found in a later user content of
the run is moved up to the first, later duplicates are removed, and user contents left empty
are dropped. What is synthesized or moved goes into the adjacent user content, after its own
responses, or into a new user content there when there is none. The file is never changed:
this is what Qwen Code sends, not what it writes.

Each turn's repair is planned on the history as read (`TurnRepair`, positions in it): the runs of
two model contents never overlap, so one turn's repair never moves another's parts, and the
plans say both what Qwen Code sends (`repair_calls`) and what `repair` writes into the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from pipeline.formats.qwen_code.api_history import Entry, is_placeholder
from pipeline.formats.qwen_code.part_estimate import response_estimate
from pipeline.formats.qwen_code.session_records import Content, Part, PartKind

__all__ = [
    "UNRECORDED_RESULT",
    "PartAt",
    "Repair",
    "TurnRepair",
    "orphan_responses",
    "plan_repairs",
    "repair_calls",
]

UNRECORDED_RESULT: Final = (
    "Tool execution result was not recorded \u2014 likely interrupted by network failure, abort, "
    "or process exit. Treat as failure and retry if needed."
)
"""The error Qwen Code answers a call with when the file holds no result for it."""


@dataclass(frozen=True, slots=True)
class PartAt:
    """One part of the history as read: the entry's index and the part's index in it."""

    entry: int
    part: int


@dataclass(frozen=True, slots=True)
class TurnRepair:
    """What Qwen Code changes after one model content (indexes into the history as read)."""

    model: int
    adjacent: int  # the content the answers go into (a new one is inserted here when it is no user's)
    run_end: int  # the first content after the run of user contents
    synthesized: tuple[Part, ...]  # failed answers to calls the run never answers
    hoisted: tuple[PartAt, ...]  # first answers found past the adjacent content, moved into it
    duplicates: tuple[PartAt, ...]  # later answers to a call already answered, dropped
    late: tuple[PartAt, ...]  # the hoisted answers written after something that is no answer

    @property
    def removals(self) -> tuple[PartAt, ...]:
        """Every part taken out of its content (moved up or dropped)."""
        return self.hoisted + self.duplicates


@dataclass(frozen=True, slots=True)
class Repair:
    """The history as sent, and the call ids answered by Qwen Code rather than by the file."""

    entries: tuple[Entry, ...]
    plans: tuple[TurnRepair, ...]

    @property
    def synthesized(self) -> tuple[str, ...]:
        """The ids of the calls Qwen Code answers with a failure."""
        return tuple(part.call_id or "" for plan in self.plans for part in plan.synthesized)


def synthetic_response(call: Part) -> Part:
    """The failed response Qwen Code synthesizes for `call`."""
    name = call.name or "unknown"
    body = {"id": call.call_id, "name": name, "response": {"error": UNRECORDED_RESULT}}
    return Part(
        PartKind.FUNCTION_RESPONSE,
        text=UNRECORDED_RESULT,
        call_id=call.call_id,
        name=name,
        failed=True,
        tokens=response_estimate(body, ()),
    )


def _adjacent(entries: tuple[Entry, ...], model: int) -> int:
    index = model + 1
    while (
        index < len(entries)
        and entries[index].content.role == "model"
        and is_placeholder(entries[index].content)
    ):
        index += 1
    return index


def _scan(entries: tuple[Entry, ...], adjacent: int) -> tuple[dict[str, list[PartAt]], list[PartAt], int]:
    """Where each call id is answered in the run from `adjacent`, the parts that are no answer,
    and where the run ends."""
    found: dict[str, list[PartAt]] = {}
    others: list[PartAt] = []
    end = adjacent
    while end < len(entries) and entries[end].content.role == "user":
        for index, part in enumerate(entries[end].content.parts):
            if part.kind is PartKind.FUNCTION_RESPONSE and part.call_id:
                found.setdefault(part.call_id, []).append(PartAt(end, index))
            elif part.kind is not PartKind.FUNCTION_RESPONSE:
                others.append(PartAt(end, index))
        end += 1
    return found, others, end


def _plan_turn(entries: tuple[Entry, ...], model: int) -> TurnRepair | None:
    expected = {
        p.call_id: p for p in entries[model].content.parts if p.kind is PartKind.FUNCTION_CALL and p.call_id
    }
    if not expected:
        return None
    adjacent = _adjacent(entries, model)
    found, others, end = _scan(entries, adjacent)
    hoisted = [
        places[0] for call_id in expected if (places := found.get(call_id)) and places[0].entry != adjacent
    ]
    duplicates = [later for call_id in expected for later in (found.get(call_id) or [])[1:]]
    synthesized = tuple(
        synthetic_response(call) for call_id, call in expected.items() if not found.get(call_id)
    )
    if not (synthesized or hoisted or duplicates):
        return None
    late = tuple(h for h in hoisted if any((o.entry, o.part) < (h.entry, h.part) for o in others))
    return TurnRepair(model, adjacent, end, synthesized, tuple(hoisted), tuple(duplicates), late)


def plan_repairs(entries: tuple[Entry, ...]) -> tuple[TurnRepair, ...]:
    """Qwen Code's repair of each model content that needs one, in history order."""
    return tuple(
        plan
        for index, entry in enumerate(entries)
        if entry.content.role == "model" and (plan := _plan_turn(entries, index)) is not None
    )


def _owner(entries: tuple[Entry, ...], user: int) -> int | None:
    """The model content whose run of user contents holds the one at `user` (past the upstream's
    placeholders right after it), if any."""
    index = user
    while index > 0 and entries[index - 1].content.role == "user":
        index -= 1
    index -= 1
    while index >= 0 and entries[index].content.role == "model" and is_placeholder(entries[index].content):
        index -= 1
    return index if index >= 0 and entries[index].content.role == "model" else None


def orphan_responses(entries: tuple[Entry, ...]) -> tuple[PartAt, ...]:
    """Responses no call of the model content before their run names: Qwen Code's repair leaves
    them (it answers that call afresh if it is an earlier turn's), and its converter drops them."""
    orphans: list[PartAt] = []
    for index, entry in enumerate(entries):
        if entry.content.role != "user":
            continue
        owner = _owner(entries, index)
        called = (
            {p.call_id for p in entries[owner].content.parts if p.kind is PartKind.FUNCTION_CALL}
            if owner is not None
            else set()
        )
        orphans += (
            PartAt(index, position)
            for position, part in enumerate(entry.content.parts)
            if part.kind is PartKind.FUNCTION_RESPONSE and part.call_id and part.call_id not in called
        )
    return tuple(orphans)


def _without(content: Content, drop: set[int]) -> Content:
    return Content(content.role, tuple(p for i, p in enumerate(content.parts) if i not in drop))


def _apply(history: list[Entry], plan: TurnRepair) -> None:
    """One turn's repair on the history as read (later turns' repairs already applied)."""
    moved = tuple(history[at.entry].content.parts[at.part] for at in plan.hoisted)
    for index in {at.entry for at in plan.removals}:
        drop = {at.part for at in plan.removals if at.entry == index}
        history[index] = replace(history[index], content=_without(history[index].content, drop))
    for index in range(plan.run_end - 1, plan.adjacent, -1):
        if not history[index].content.parts:
            del history[index]
    inject = plan.synthesized + moved
    if not inject:
        return
    if plan.adjacent < len(history) and history[plan.adjacent].content.role == "user":
        adjacent = history[plan.adjacent]
        parts = adjacent.content.parts
        at = next((i for i, p in enumerate(parts) if p.kind is not PartKind.FUNCTION_RESPONSE), len(parts))
        history[plan.adjacent] = replace(adjacent, content=Content("user", parts[:at] + inject + parts[at:]))
        return
    history.insert(plan.adjacent, Entry(Content("user", inject), history[plan.model].lines))


def repair_calls(entries: tuple[Entry, ...]) -> Repair:
    """The history with every call answered once, as Qwen Code repairs it before sending."""
    plans = plan_repairs(entries)
    history = list(entries)
    for plan in reversed(plans):  # from the end: a turn's edits never shift an earlier turn's indexes
        _apply(history, plan)
    return Repair(tuple(history), plans)
