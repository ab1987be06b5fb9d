"""The survival contract (seed 000), checked on API messages before and after a rewrite.

The protected last round is recomputed here from the source messages, independently of the
planner: the current user instructions and the two most recent complete tool exchanges, with a
toolless tail walking back to the last tool-bearing round and chat-only sessions keeping only
the latest user turn. After the rewrite every user text of that round must survive (raw, or
verbatim inside the checkpoint), and so must its tool_use ids, tool_result ids and assistant
texts; there must be exactly one checkpoint, no stacked prior summaries, every pinned anchor,
and no placeholder-only checkpoint. Messages are plain values so a language-neutral JSON
matrix can drive the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from pipeline.reasons import ReasonCode
from pipeline.vocabulary import Role

__all__ = ["ContractMessage", "Violation", "check_survival", "protected_round"]

PROTECTED_EXCHANGES: Final = 2
PLACEHOLDERS: Final = frozenset(
    {
        "(no summary available)",
        "no summary available",
        "i can't help with that.",
        "i cannot help with that.",
        "i'm sorry, but i can't help with that.",
    }
)


class Violation(ReasonCode):
    """Why a rewrite breaks the contract."""

    USER_TEXT_DROPPED = "user-text-dropped"
    TOOL_USE_DROPPED = "tool-use-dropped"
    TOOL_RESULT_DROPPED = "tool-result-dropped"
    ASSISTANT_TEXT_DROPPED = "assistant-text-dropped"
    CHECKPOINT_MISSING = "checkpoint-missing"
    CHECKPOINT_DUPLICATED = "checkpoint-duplicated"
    CHECKPOINT_PLACEHOLDER = "checkpoint-placeholder"
    ANCHOR_DROPPED = "anchor-dropped"


@dataclass(frozen=True, slots=True)
class ContractMessage:
    """One API message reduced to what the contract looks at."""

    role: str  # "user" or "assistant"
    text: str = ""
    tool_use_ids: tuple[str, ...] = ()
    tool_result_ids: tuple[str, ...] = ()
    checkpoint: bool = False  # a compact summary (the checkpoint receipt)


@dataclass(frozen=True, slots=True)
class ProtectedRoundView:
    """Positions of the protected round within a message list."""

    start: int
    user_texts: tuple[str, ...]
    tool_use_ids: tuple[str, ...] = field(default=())
    tool_result_ids: tuple[str, ...] = field(default=())
    assistant_texts: tuple[str, ...] = field(default=())


def _is_human(message: ContractMessage) -> bool:
    return (
        message.role == Role.USER
        and not message.checkpoint
        and not message.tool_result_ids
        and bool(message.text.strip())
    )


def protected_round(messages: Sequence[ContractMessage]) -> ProtectedRoundView:
    """The seed-000 protected round of a message list."""
    turns = [i for i, message in enumerate(messages) if _is_human(message)] or [0]
    bounds = list(zip(turns, [*turns[1:], len(messages)], strict=True))
    tool_turns = [b for b in bounds if any(messages[i].tool_use_ids for i in range(*b))]
    turn_start, turn_end = tool_turns[-1] if tool_turns else bounds[-1]
    exchanges = [i for i in range(turn_start, turn_end) if messages[i].tool_use_ids]
    start = exchanges[-PROTECTED_EXCHANGES] if len(exchanges) > PROTECTED_EXCHANGES else turn_start
    instruction_turns = [t for t in turns if t >= turn_start]
    tail = messages[start:]
    return ProtectedRoundView(
        start=start,
        user_texts=tuple(messages[t].text for t in instruction_turns if _is_human(messages[t])),
        tool_use_ids=tuple(t for m in tail for t in m.tool_use_ids),
        tool_result_ids=tuple(t for m in tail for t in m.tool_result_ids),
        assistant_texts=tuple(m.text for m in tail if m.role == Role.ASSISTANT and m.text.strip()),
    )


def _normalized(text: str) -> str:
    return " ".join(text.split())


def check_survival(
    before: Sequence[ContractMessage],
    after: Sequence[ContractMessage],
    *,
    anchors: Sequence[str] = (),
) -> tuple[Violation, ...]:
    """Every way `after` breaks the contract relative to `before` (empty: the rewrite may commit)."""
    violations: list[Violation] = []
    round_ = protected_round(before)
    checkpoints = [m for m in after if m.checkpoint]
    raw_texts = {_normalized(m.text) for m in after if not m.checkpoint}
    checkpoint_text = "\n".join(_normalized(m.text) for m in checkpoints)
    for text in round_.user_texts:
        wanted = _normalized(text)
        if wanted not in raw_texts and wanted not in checkpoint_text:
            violations.append(Violation.USER_TEXT_DROPPED)
            break
    after_uses = {t for m in after for t in m.tool_use_ids}
    after_results = {t for m in after for t in m.tool_result_ids}
    if not set(round_.tool_use_ids) <= after_uses:
        violations.append(Violation.TOOL_USE_DROPPED)
    if not set(round_.tool_result_ids) <= after_results:
        violations.append(Violation.TOOL_RESULT_DROPPED)
    after_assistant = {_normalized(m.text) for m in after if m.role == Role.ASSISTANT}
    if any(_normalized(text) not in after_assistant for text in round_.assistant_texts):
        violations.append(Violation.ASSISTANT_TEXT_DROPPED)
    if not checkpoints:
        violations.append(Violation.CHECKPOINT_MISSING)
    elif len(checkpoints) > 1:
        violations.append(Violation.CHECKPOINT_DUPLICATED)
    if any(_normalized(m.text).lower() in PLACEHOLDERS or not m.text.strip() for m in checkpoints):
        violations.append(Violation.CHECKPOINT_PLACEHOLDER)
    everything = "\n".join(_normalized(m.text) for m in after)
    if any(_normalized(anchor) not in everything for anchor in anchors if anchor.strip()):
        violations.append(Violation.ANCHOR_DROPPED)
    return tuple(violations)
