"""Judge a Qwen Code compaction by what Qwen Code sends: the summary, then a suffix of the original.

Given the history Qwen Code rebuilt and sent for the original session and for its compaction
(`resume_run.resume_qwen_code`, as Chat Completions messages), the compaction holds when (1) the
compacted history opens with user messages, one of which carries a summary text when those are
known, (2) what follows is a non-empty suffix of the original's history, message for message (a
tool output Qwen Code sent cleared for the original, as its own clearing of old tool results does
past 500,000 characters of them, is compared by its call id: the shorter candidate keeps it
whole), (3) every `tool` message answers a call sent before it and every call is answered (unless
the original leaves the same call open), and (4) no text of an excluded record is sent that the
original does not send. Differences name positions, roles and call ids, never transcript text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pipeline.proof.item_verdict import ItemRules, ItemVerdict, chat_answer, chat_calls, judge_items
from pipeline.proof.verdict import ExcludedText

__all__ = ["judge_qwen"]

CLEARED_OUTPUT: Final = "[Old tool result content cleared]"  # what Qwen Code sends for a cleared output


def _cleared(message: Any) -> bool:
    """A tool message whose output Qwen Code cleared before sending it."""
    if not isinstance(message, Mapping) or message.get("role") != "tool":
        return False
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], Mapping):
        content = content[0].get("text")
    return content == CLEARED_OUTPUT


def _same(candidate: Any, original: Any) -> bool:
    """The same message, or the answer to the same call whose output the original's was cleared."""
    if candidate == original:
        return True
    return (
        _cleared(original)
        and isinstance(candidate, Mapping)
        and candidate.get("role") == "tool"
        and candidate.get("tool_call_id") == original.get("tool_call_id")
    )


def _cleared_note(candidate: Sequence[Any], original: Sequence[Any], kept: int) -> tuple[str, ...]:
    pairs = zip(candidate[len(candidate) - kept :], original[len(original) - kept :], strict=True)
    count = sum(1 for mine, theirs in pairs if mine != theirs)
    if not count:
        return ()
    return (
        f"{count} tool output(s) of the kept suffix Qwen Code sent cleared for the original (its own "
        "clearing of old tool results) and whole for the compacted file: compared by call id",
    )


QWEN_RULES: Final = ItemRules(
    client="Qwen Code",
    is_summary=lambda message: isinstance(message, Mapping) and message.get("role") == "user",
    calls=chat_calls,
    answers=chat_answer,
    context="history",
    summary_noun="a summary",
    same=_same,
    notes=_cleared_note,
)


def judge_qwen(
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> ItemVerdict:
    """Compare the histories Qwen Code sent (None: it did not resume that file)."""
    return judge_items(QWEN_RULES, original, compacted, summaries=summaries, excluded=excluded)
