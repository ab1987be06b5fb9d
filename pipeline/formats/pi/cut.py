"""Where a pi compaction may cut, and the tail it keeps, chosen by tokens (pi's own cut rules).

pi cuts at a user, assistant, bash-execution or custom message, or a branch summary, never at a
tool result: the kept range must not answer a call made before it. Here a cut is also never
where a call made before it is still open (its result comes after the cut), and never at the
current compaction's own summary. The largest tail that fits the room beside the summary is
chosen, at a user turn when one fits; when none fits, the smallest safe one (target missed). A
damaged line is left in the summarized span when a safe cut after it exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pipeline.formats.context_items import TailPlan
from pipeline.formats.pi.chat_form import ChatMessage, MessageOrigin
from pipeline.formats.pi.session_decode import PiEntry, PiKind

__all__ = ["plan_tail", "safe_cuts"]

_CUT_ROLES: Final = frozenset({"user", "assistant", "bashExecution", "custom"})
_CUT_KINDS: Final = frozenset({PiKind.CUSTOM_MESSAGE, PiKind.BRANCH_SUMMARY})


def _cuttable(entry: PiEntry | None) -> bool:
    if entry is None:
        return False
    return entry.kind in _CUT_KINDS or (entry.kind is PiKind.MESSAGE and entry.role in _CUT_ROLES)


def _is_turn(entry: PiEntry | None) -> bool:
    return entry is not None and entry.kind is PiKind.MESSAGE and entry.role == "user"


def safe_cuts(messages: Sequence[ChatMessage], entries: dict[int, PiEntry]) -> list[int]:
    """Indices of the sent messages a kept tail may start at (the first message of its entry)."""
    open_calls: set[object] = set()
    safe: list[int] = []
    seen_lines: set[int] = set()
    for index, message in enumerate(messages):
        first_of_entry = message.line not in seen_lines
        seen_lines.add(message.line)
        entry = entries.get(message.line)
        if (
            index > 0
            and message.origin is MessageOrigin.LINE
            and first_of_entry
            and not open_calls
            and _cuttable(entry)
        ):
            safe.append(index)
        body = message.body
        if body.get("role") == "assistant":
            open_calls.update(call.get("id") for call in body.get("tool_calls", ()))
        elif body.get("role") == "tool":
            open_calls.discard(body.get("tool_call_id"))
    return safe


def plan_tail(
    messages: Sequence[ChatMessage],
    entries: dict[int, PiEntry],
    tokens: Sequence[int],
    room: int,
    damaged: int = 0,
) -> TailPlan | None:
    """The tail within `room` tokens (the target less the summary's share), or None: no safe cut.

    A cut after `damaged` (the last damaged line) is taken when there is one, so the damage falls
    in the summarized span; else the cut stands and the damage is the kept tail's (for `repair`).
    """
    safe = safe_cuts(messages, entries)
    safe = [index for index in safe if messages[index].line > damaged] or safe
    if not safe:
        return None
    suffix = [0] * (len(tokens) + 1)
    for index in range(len(tokens) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + tokens[index]
    turns = [index for index in safe if _is_turn(entries.get(messages[index].line))]
    fitting = [i for i in turns if suffix[i] <= room] or [i for i in safe if suffix[i] <= room]
    first = fitting[0] if fitting else safe[-1]
    at_turn = _is_turn(entries.get(messages[first].line))
    return TailPlan(first, messages[first].line, bool(fitting), at_turn)
