"""The survival contract (seed 000), checked on API messages before and after a rewrite.

The protected last round is recomputed here from the source messages, independently of the
planner: the current user instructions and the two most recent complete tool exchanges, with a
toolless tail walking back to the last tool-bearing round and chat-only sessions keeping only
the latest user turn. A turn opens at a message a human typed (client-injected `meta` messages,
such as hook context between tool calls, open none); its instruction is that message and the
user texts right after it (a slash command's expansion). A round opened by no human message
continues the task a prior checkpoint summarized: its instructions are the ones that checkpoint
restated. After the rewrite every instruction of the round must survive exactly: raw, or
restated in the checkpoint in a block of its own (`restate`), never merely quoted or paraphrased;
one holding images or documents only raw. Its tool_use ids, tool_result ids and assistant texts
must survive too; there must be exactly one checkpoint, no stacked prior summaries, every pinned
anchor, and no placeholder-only checkpoint. Messages are plain values so a language-neutral
JSON matrix can drive the same function.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from pipeline.reasons import ReasonCode
from pipeline.vocabulary import Role

__all__ = [
    "ContractMessage",
    "Violation",
    "check_survival",
    "protected_round",
    "restate",
    "restated_instructions",
]

PROTECTED_EXCHANGES: Final = 2
# A restated instruction: its exact text between two marker lines, the opening one giving its
# length in code points, so a text holding a marker line itself is read back whole.
RESTATED_OPEN: Final = "<<<<<<< instruction, verbatim ({chars} characters)"
RESTATED_CLOSE: Final = ">>>>>>> end of instruction"
_RESTATED_OPEN: Final = re.compile(r"^<<<<<<< instruction, verbatim \((\d+) characters\)\n", re.MULTILINE)
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
    meta: bool = False  # injected by the client (hook context, caveats, command expansions)
    media: bool = False  # holds image or document blocks, which no checkpoint text can carry


@dataclass(frozen=True, slots=True)
class ProtectedRoundView:
    """Positions of the protected round within a message list."""

    start: int
    user_texts: tuple[str, ...]  # the round's instructions (carried ones first)
    tool_use_ids: tuple[str, ...] = field(default=())
    tool_result_ids: tuple[str, ...] = field(default=())
    assistant_texts: tuple[str, ...] = field(default=())
    media_texts: tuple[str, ...] = field(default=())  # instructions holding media: they survive raw only


def restate(text: str) -> str:
    """An instruction as a checkpoint restates it: exactly, between its marker lines."""
    return f"{RESTATED_OPEN.format(chars=len(text))}\n{text}\n{RESTATED_CLOSE}"


def restated_instructions(text: str) -> tuple[str, ...]:
    """Every instruction `restate` wrote into a checkpoint's text, in order."""
    return tuple(_restated(text))


def _restated(text: str) -> Iterator[str]:
    position = 0
    while (match := _RESTATED_OPEN.search(text, position)) is not None:
        body_end = match.end() + int(match.group(1))
        close_end = body_end + 1 + len(RESTATED_CLOSE)
        if text.startswith("\n" + RESTATED_CLOSE, body_end) and text[close_end : close_end + 1] in ("", "\n"):
            yield text[match.end() : body_end]
            position = close_end
        else:
            position = match.end()


def _is_human(message: ContractMessage) -> bool:
    return (
        message.role == Role.USER
        and not message.checkpoint
        and not message.meta
        and not message.tool_result_ids
        and bool(message.text.strip())
    )


def _expands_instruction(message: ContractMessage) -> bool:
    """A client text right after a prompt (a slash command's expansion, a prompt hook's context)."""
    return (
        message.role == Role.USER
        and message.meta
        and not message.tool_result_ids
        and bool(message.text.strip())
    )


def _opening(messages: Sequence[ContractMessage], start: int) -> list[ContractMessage]:
    """A turn's instruction: its human message and the client's user texts right after it."""
    opening = [messages[start]]
    for message in messages[start + 1 :]:
        if not _expands_instruction(message):
            break
        opening.append(message)
    return opening


def protected_round(messages: Sequence[ContractMessage]) -> ProtectedRoundView:
    """The seed-000 protected round of a message list."""
    if not messages:
        return ProtectedRoundView(0, ())
    starts = sorted({0, *(i for i, message in enumerate(messages) if _is_human(message))})
    bounds = list(zip(starts, [*starts[1:], len(messages)], strict=True))
    tool_turns = [b for b in bounds if any(messages[i].tool_use_ids for i in range(*b))]
    turn_start, turn_end = tool_turns[-1] if tool_turns else bounds[-1]
    exchanges = [i for i in range(turn_start, turn_end) if messages[i].tool_use_ids]
    start = exchanges[-PROTECTED_EXCHANGES] if len(exchanges) > PROTECTED_EXCHANGES else turn_start
    instructions = [
        m for t in starts if t >= turn_start and _is_human(messages[t]) for m in _opening(messages, t)
    ]
    # A round no human opened goes on with the task the latest checkpoint before it restated.
    checkpoints = [m for m in messages[turn_start:turn_end] if m.checkpoint]
    carried = (
        ()
        if _is_human(messages[turn_start]) or not checkpoints
        else restated_instructions(checkpoints[-1].text)
    )
    tail = messages[start:]
    return ProtectedRoundView(
        start=start,
        user_texts=(*carried, *(m.text for m in instructions)),
        tool_use_ids=tuple(t for m in tail for t in m.tool_use_ids),
        tool_result_ids=tuple(t for m in tail for t in m.tool_result_ids),
        assistant_texts=tuple(m.text for m in tail if m.role == Role.ASSISTANT and m.text.strip()),
        media_texts=tuple(m.text for m in instructions if m.media),
    )


def _normalized(text: str) -> str:
    return " ".join(text.split())


def _instructions_survive(round_: ProtectedRoundView, after: Sequence[ContractMessage]) -> bool:
    """Each instruction is a raw user text of `after` or restated whole by a checkpoint."""
    raw = {m.text for m in after if m.role == Role.USER and not m.checkpoint}
    raw_media = {m.text for m in after if m.role == Role.USER and not m.checkpoint and m.media}
    restated = {text for m in after if m.checkpoint for text in restated_instructions(m.text)}
    media = set(round_.media_texts)
    for text in round_.user_texts:
        if text in media and text not in raw_media:  # images and documents cannot be restated
            return False
        if text not in raw and text not in restated:
            return False
    return True


def check_survival(
    before: Sequence[ContractMessage],
    after: Sequence[ContractMessage],
    *,
    anchors: Sequence[str] = (),
    checkpoints: int = 1,
) -> tuple[Violation, ...]:
    """Every way `after` breaks the contract relative to `before` (empty: the rewrite may commit).

    `checkpoints` is how many summaries `after` must hold: one for a compaction that summarizes;
    for one that only masks, as many as `before` held (none, or Claude Code's own).
    """
    violations: list[Violation] = []
    round_ = protected_round(before)
    summaries = [m for m in after if m.checkpoint]
    if not _instructions_survive(round_, after):
        violations.append(Violation.USER_TEXT_DROPPED)
    after_uses = {t for m in after for t in m.tool_use_ids}
    after_results = {t for m in after for t in m.tool_result_ids}
    if not set(round_.tool_use_ids) <= after_uses:
        violations.append(Violation.TOOL_USE_DROPPED)
    if not set(round_.tool_result_ids) <= after_results:
        violations.append(Violation.TOOL_RESULT_DROPPED)
    after_assistant = {_normalized(m.text) for m in after if m.role == Role.ASSISTANT}
    if any(_normalized(text) not in after_assistant for text in round_.assistant_texts):
        violations.append(Violation.ASSISTANT_TEXT_DROPPED)
    if len(summaries) < checkpoints:
        violations.append(Violation.CHECKPOINT_MISSING)
    elif len(summaries) > checkpoints:
        violations.append(Violation.CHECKPOINT_DUPLICATED)
    if any(_normalized(m.text).lower() in PLACEHOLDERS or not m.text.strip() for m in summaries):
        violations.append(Violation.CHECKPOINT_PLACEHOLDER)
    everything = "\n".join(_normalized(m.text) for m in after)
    if any(_normalized(anchor) not in everything for anchor in anchors if anchor.strip()):
        violations.append(Violation.ANCHOR_DROPPED)
    return tuple(violations)
