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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pipeline.proof.context import ContextSize, json_size
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

__all__ = ["QwenVerdict", "judge_qwen"]

_UNNAMED_SUMMARY: Final = (
    "no summary text is known: the messages before the kept suffix are taken as the summary"
)
_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL
CLEARED_OUTPUT: Final = "[Old tool result content cleared]"  # what Qwen Code sends for a cleared output


@dataclass(frozen=True, slots=True)
class QwenVerdict:
    """The verdict, content-free differences, and the size of what each side sent."""

    verdict: Verdict
    differences: tuple[str, ...]
    summary_items: int
    kept_items: int
    original: ContextSize | None
    compacted: ContextSize | None
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """A match."""
        return self.verdict is Verdict.MATCH


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


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


def _common_suffix(candidate: Sequence[Any], original: Sequence[Any]) -> int:
    count = 0
    while count < min(len(candidate), len(original)) and _same(candidate[-1 - count], original[-1 - count]):
        count += 1
    return count


def _cleared_note(candidate: Sequence[Any], original: Sequence[Any], kept: int) -> tuple[str, ...]:
    pairs = zip(candidate[len(candidate) - kept :], original[len(original) - kept :], strict=True)
    count = sum(1 for mine, theirs in pairs if mine != theirs)
    if not count:
        return ()
    return (
        f"{count} tool output(s) of the kept suffix Qwen Code sent cleared for the original (its own "
        "clearing of old tool results) and whole for the compacted file: compared by call id",
    )


def _head_differences(head: Sequence[Any], summaries: Sequence[str] | None) -> list[str]:
    if not head:
        return ["the compacted history does not open with a summary (it is all the original's suffix)"]
    found = [
        f"compacted message {position} ({item.get('role', '?') if isinstance(item, Mapping) else '?'}) "
        "is neither a summary nor part of the original's suffix"
        for position, item in enumerate(head)
        if not (isinstance(item, Mapping) and item.get("role") == "user")
    ]
    wanted = [text.strip() for text in summaries or () if text.strip()]
    if wanted and not any(text in "".join(_strings(item)) for item in head for text in wanted):
        found.append(f"none of the {len(head)} messages before the kept suffix carries the summary")
    return found


def _calls(messages: Sequence[Any]) -> tuple[set[str], set[str]]:
    called = {
        call.get("id")
        for m in messages
        if isinstance(m, Mapping)
        for call in m.get("tool_calls") or ()
        if isinstance(call, Mapping)
    }
    answered = {m.get("tool_call_id") for m in messages if isinstance(m, Mapping) and m.get("role") == "tool"}
    return {c for c in called if isinstance(c, str)}, {a for a in answered if isinstance(a, str)}


def _pairing_differences(messages: Sequence[Any], original: Sequence[Any]) -> list[str]:
    found: list[str] = []
    called: set[str] = set()
    for position, message in enumerate(messages):
        fields = message if isinstance(message, Mapping) else {}
        for call in fields.get("tool_calls") or ():
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                called.add(call["id"])
        answer = fields.get("tool_call_id")
        if fields.get("role") == "tool" and answer not in called:
            found.append(f"message {position} answers call {answer}, which is never sent before it")
    sent_calls, answered = _calls(messages)
    original_calls, original_answered = _calls(original)
    open_before = original_calls - original_answered
    return found + [f"call {c} is never answered" for c in sorted(sent_calls - answered - open_before)]


def _leaks(compacted: Sequence[Any], original: Sequence[Any], excluded: Sequence[ExcludedText]) -> list[str]:
    if not excluded:
        return []
    sent = _SEPARATOR.join(_strings(list(compacted)))
    sent_before = _SEPARATOR.join(_strings(list(original)))
    hits = [item for item in excluded if item.text in sent and item.text not in sent_before]
    return [
        f"text of excluded line {item.line} ({item.partition_set}) is sent"
        for item in sorted(hits, key=lambda i: i.line)
    ]


def _unresumed(original: Sequence[Any] | None, compacted: Sequence[Any] | None) -> QwenVerdict:
    which = "the original" if original is None else "the compacted file"
    return QwenVerdict(
        verdict=Verdict.NOT_RESUMABLE if original is None else Verdict.MISMATCH,
        differences=() if original is None else ("Qwen Code does not resume the compacted file",),
        summary_items=0,
        kept_items=0,
        original=None if original is None else json_size(original),
        compacted=None if compacted is None else json_size(compacted),
        notes=(f"Qwen Code does not resume {which}",),
    )


def judge_qwen(
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> QwenVerdict:
    """Compare the histories Qwen Code sent (None: it did not resume that file)."""
    if original is None or compacted is None:
        return _unresumed(original, compacted)
    kept = _common_suffix(compacted, original)
    head = compacted[: len(compacted) - kept]
    differences = _head_differences(head, summaries)
    if not kept:
        differences.append("nothing of the original history follows the summary")
    differences += _pairing_differences(compacted, original)
    differences += _leaks(compacted, original, excluded)
    unnamed = not any(text.strip() for text in summaries or ())
    return QwenVerdict(
        verdict=Verdict.MISMATCH if differences else Verdict.MATCH,
        differences=tuple(differences),
        summary_items=len(head),
        kept_items=kept,
        original=json_size(original),
        compacted=json_size(compacted),
        notes=((_UNNAMED_SUMMARY,) if unnamed and head else ()) + _cleared_note(compacted, original, kept),
    )
