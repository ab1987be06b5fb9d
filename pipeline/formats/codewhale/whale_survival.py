"""Seed 000's survival checks (CodeWhale's `SURVIVAL_CONTRACT.md`), over an original history and
the history its compaction resumes to, as `validate_last_round_coverage` and
`validate_survival_contract` make them in `crates/tui/src/compaction/last_round.rs`.

The protected last round starts at the latest plain user message, walked back to the latest one
whose span holds a tool result when the tail after it is toolless. A compaction must keep every
user text, call id, result id and assistant text of that round; carry exactly one checkpoint
(no stacked summaries), not a placeholder-only one; and restate the `/anchor` pins the original's
latest checkpoint restated.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from pipeline.formats.codewhale.whale_document import BlockKind, Message
from pipeline.formats.codewhale.whale_markers import (
    ANCHORS_HEADING,
    NO_SUMMARY,
    SUMMARY_CLOSING,
    SUMMARY_HEADER,
    is_checkpoint,
    is_runtime_owned,
    is_wire_checkpoint,
    user_text,
)

__all__ = ["Breach", "last_round_start", "pinned_anchors", "survival_breaches"]


class Breach(StrEnum):
    """A survival check a compaction fails."""

    USER_TEXT_DROPPED = "user-text-dropped"
    CALL_DROPPED = "call-dropped"
    RESULT_DROPPED = "result-dropped"
    ASSISTANT_TEXT_DROPPED = "assistant-text-dropped"
    NO_CHECKPOINT = "no-checkpoint"
    STACKED_CHECKPOINTS = "stacked-checkpoints"
    PLACEHOLDER_CHECKPOINT = "placeholder-checkpoint"
    ANCHORS_DROPPED = "anchors-dropped"


def _plain_user(message: Message, stamped: bool) -> bool:
    """`is_plain_user_text`: user text that is neither a checkpoint nor the runtime's own."""
    checkpoint = is_wire_checkpoint(message) if stamped else is_checkpoint(message)
    return not checkpoint and not is_runtime_owned(message) and user_text(message) is not None


def _has_result(messages: Sequence[Message]) -> bool:
    return any(b.kind is BlockKind.TOOL_RESULT for m in messages for b in m.blocks)


def last_round_start(messages: Sequence[Message]) -> int:
    """Where the protected last round starts (`last_round_start`): 0 when there is no user text."""
    stamped = any(is_wire_checkpoint(m) for m in messages)
    users = [i for i, m in enumerate(messages) if _plain_user(m, stamped)]
    if not users:
        return 0
    if _has_result(messages[users[-1] :]):
        return users[-1]
    for start in reversed(users[:-1]):
        if _has_result(messages[start:]):
            return start
    return users[-1]


def pinned_anchors(messages: Sequence[Message]) -> str | None:
    """The `/anchor` pins the latest checkpoint restated (None when it restated none)."""
    for message in reversed(messages):
        if is_wire_checkpoint(message):
            note = message.blocks[0].text
            head, found, rest = note.partition(f"\n\n{ANCHORS_HEADING}\n")
            return rest.removesuffix(f"\n\n{SUMMARY_CLOSING}").strip() if found and head else None
    return None


def _round_facts(round_: Sequence[Message]) -> dict[Breach, set[str]]:
    facts: dict[Breach, set[str]] = {b: set() for b in (Breach.USER_TEXT_DROPPED, Breach.CALL_DROPPED)}
    facts[Breach.RESULT_DROPPED] = set()
    facts[Breach.ASSISTANT_TEXT_DROPPED] = set()
    for message in round_:
        if is_checkpoint(message):
            continue
        for block in message.blocks:
            if block.kind is BlockKind.TOOL_USE:
                facts[Breach.CALL_DROPPED].add(block.key or "")
            elif block.kind is BlockKind.TOOL_RESULT:
                facts[Breach.RESULT_DROPPED].add(block.key or "")
            elif block.kind is BlockKind.TEXT and message.role == "user":
                facts[Breach.USER_TEXT_DROPPED].add(block.text)
            elif block.kind is BlockKind.TEXT and message.role.startswith("assistant"):
                facts[Breach.ASSISTANT_TEXT_DROPPED].add(block.text)
    return facts


def _summary_of(checkpoint: Message) -> str:
    note = checkpoint.blocks[0].text.removeprefix(SUMMARY_HEADER)
    return note.partition(f"\n\n{ANCHORS_HEADING}\n")[0].removesuffix(f"\n\n{SUMMARY_CLOSING}").strip()


def survival_breaches(original: Sequence[Message], compacted: Sequence[Message]) -> tuple[Breach, ...]:
    """Every survival check `compacted` fails as the compaction of `original` (empty: it passes)."""
    breaches: list[Breach] = []
    needed = _round_facts(original[last_round_start(original) :])
    kept = _round_facts(compacted)
    breaches += [breach for breach, items in needed.items() if not items <= kept[breach]]
    checkpoints = [m for m in compacted if is_checkpoint(m)]
    if not checkpoints:
        breaches.append(Breach.NO_CHECKPOINT)
    if len(checkpoints) > 1:
        breaches.append(Breach.STACKED_CHECKPOINTS)
    if checkpoints and (
        not is_wire_checkpoint(checkpoints[-1]) or _summary_of(checkpoints[-1]) in ("", NO_SUMMARY)
    ):
        breaches.append(Breach.PLACEHOLDER_CHECKPOINT)
    anchors = pinned_anchors(original)
    if anchors and pinned_anchors(compacted) != anchors:
        breaches.append(Breach.ANCHORS_DROPPED)
    return tuple(breaches)
