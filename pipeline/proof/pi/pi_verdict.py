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

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pipeline.proof.context import json_size
from pipeline.proof.item_verdict import ItemVerdict, rewrite_verdict
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

__all__ = ["judge_pi"]

_UNNAMED_SUMMARY: Final = (
    "no summary text is known: the messages before the kept suffix are taken as the summary"
)
_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def _common_suffix(candidate: Sequence[Any], original: Sequence[Any]) -> int:
    count = 0
    while count < min(len(candidate), len(original)) and candidate[-1 - count] == original[-1 - count]:
        count += 1
    return count


def _head_differences(head: Sequence[Any], summaries: Sequence[str] | None) -> list[str]:
    if not head:
        return ["the compacted context does not open with a summary (it is all the original's suffix)"]
    if len(head) != 1:  # pi sends one message for its latest compaction, nothing else before the kept range
        return [f"{len(head)} messages precede the kept suffix where pi sends one summary message"]
    found = [
        f"compacted message {position} ({item.get('role', '?') if isinstance(item, Mapping) else '?'}) "
        "is neither a summary message nor part of the original's suffix"
        for position, item in enumerate(head)
        if not (isinstance(item, Mapping) and item.get("role") == "user")
    ]
    wanted = [text.strip() for text in summaries or () if text.strip()]
    if wanted and not any(text in "".join(_strings(item)) for item in head for text in wanted):
        found.append(f"none of the {len(head)} messages before the kept suffix carries the summary")
    return found


def _calls(messages: Sequence[Any]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    calls, results = [], []
    for position, message in enumerate(messages):
        fields = message if isinstance(message, Mapping) else {}
        for call in fields.get("tool_calls") or ():
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                calls.append((position, call["id"]))
        if fields.get("role") == "tool" and isinstance(fields.get("tool_call_id"), str):
            results.append((position, fields["tool_call_id"]))
    return calls, results


def _pairing_differences(messages: Sequence[Any], original: Sequence[Any]) -> list[str]:
    calls, results = _calls(messages)
    first_call: dict[str, int] = {}
    for position, call_id in calls:
        first_call.setdefault(call_id, position)
    found = [
        f"message {position} answers call {call_id}, which is never sent before it"
        for position, call_id in results
        if first_call.get(call_id, position) >= position
    ]
    before_calls, before_results = _calls(original)
    open_before = {c for _, c in before_calls} - {r for _, r in before_results}
    unanswered = {c for _, c in calls} - {r for _, r in results} - open_before
    return found + [f"call {call_id} is never answered" for call_id in sorted(unanswered)]


def _leaks(compacted: Sequence[Any], original: Sequence[Any], excluded: Sequence[ExcludedText]) -> list[str]:
    if not excluded:
        return []
    sent = _SEPARATOR.join(text for item in compacted for text in _strings(item))
    sent_before = _SEPARATOR.join(text for item in original for text in _strings(item))
    hits = [item for item in excluded if item.text in sent and item.text not in sent_before]
    return [
        f"text of excluded line {item.line} ({item.partition_set}) is sent"
        for item in sorted(hits, key=lambda item: item.line)
    ]


def _not_resumed(original: Sequence[Any] | None, compacted: Sequence[Any] | None) -> ItemVerdict:
    which = "the original" if original is None else "the compacted file"
    return ItemVerdict(
        verdict=Verdict.NOT_RESUMABLE if original is None else Verdict.MISMATCH,
        differences=() if original is None else ("pi does not resume the compacted file",),
        summary_items=0,
        kept_items=0,
        original=None if original is None else json_size(original),
        compacted=None if compacted is None else json_size(compacted),
        notes=(f"pi does not resume {which}",),
    )


def judge_pi(
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> ItemVerdict:
    """Compare the histories pi sent (None: pi did not resume that file)."""
    if original is None or compacted is None:
        return _not_resumed(original, compacted)
    if summaries is not None and not summaries:  # a rewrite: no summary, every message verbatim
        return rewrite_verdict(original, compacted, "message")
    kept = _common_suffix(compacted, original)
    head = compacted[: len(compacted) - kept]
    differences = _head_differences(head, summaries)
    if not kept:
        differences.append("nothing of the original context follows the summary")
    differences += _pairing_differences(compacted, original)
    differences += _leaks(compacted, original, excluded)
    unnamed = not any(text.strip() for text in summaries or ())
    return ItemVerdict(
        verdict=Verdict.MISMATCH if differences else Verdict.MATCH,
        differences=tuple(differences),
        summary_items=len(head),
        kept_items=kept,
        original=json_size(original),
        compacted=json_size(compacted),
        notes=(_UNNAMED_SUMMARY,) if unnamed and head else (),
    )
