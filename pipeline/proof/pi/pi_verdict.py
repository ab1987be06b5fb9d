"""Judge a pi compaction by what pi sends: the summary, then a suffix of the original context.

Given the history pi rebuilt and sent for the original session and for its compaction
(`pi_resume.resume_pi`), the compaction holds when (1) the compacted context opens with one
summary message (a user message, as pi sends its latest compaction; when the summary texts are
known, it carries one), (2) what follows is a non-empty suffix of the original context, message
for message (JSON equality), (3) every tool call is answered by a `tool` message after it and
every `tool` message answers a call before it (unless the original leaves the same call open),
and (4) no text of an excluded record appears in it that the original does not send.
Differences name positions, roles and call ids, never transcript text, so verdicts can go into reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pipeline.proof.item_verdict import ItemRules, ItemVerdict, chat_answer, chat_calls, judge_items
from pipeline.proof.verdict import ExcludedText

__all__ = ["judge_pi"]


PI_RULES: Final = ItemRules(
    client="pi",
    is_summary=lambda message: isinstance(message, Mapping) and message.get("role") == "user",
    calls=chat_calls,
    answers=chat_answer,
    most_summary_items=1,  # pi sends its latest compaction as one message, nothing else before the kept range
)


def judge_pi(
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> ItemVerdict:
    """Compare the histories pi sent (None: pi did not resume that file)."""
    return judge_items(PI_RULES, original, compacted, summaries=summaries, excluded=excluded)
