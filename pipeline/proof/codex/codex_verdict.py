"""Judge a Codex compaction by what Codex sends: the summary, then a suffix of the original context.

Given the history Codex rebuilt and sent for the original rollout and for its compaction
(`codex_client.resume_codex`), the compaction holds when (1) the compacted context opens with
summary messages (plain `message` items; when the summary texts are known, one of them carries
one), (2) what follows is a non-empty suffix of the original context, item for item (canonical
JSON equality), (3) every call (each of `item_types.CALL_TYPES`, `tool_search_call` included) is
answered by an output of the same `call_id` after it and every output answers a call before it
(unless the original leaves the same call open), and (4) no text of an excluded record appears
in it that the original does not send. Every difference is described without transcript text:
item positions, types, roles, call ids and counts only, so verdicts can go into reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pipeline.formats.codex.item_types import CALL_TYPES, OUTPUT_TYPES
from pipeline.proof.context import ContextSize, json_size
from pipeline.proof.item_verdict import ItemVerdict, rewrite_verdict
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

__all__ = ["context_size", "judge_codex"]

_UNNAMED_SUMMARY: Final = (
    "no summary text is known: the messages before the kept suffix are taken as the summary"
)
_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL


def context_size(items: Sequence[Any]) -> ContextSize:
    """Items, characters of their JSON, and seed-estimated tokens, as for Claude Code's messages."""
    return json_size(items)


def _label(item: Any) -> str:
    """An item named without its text: type, role, call id."""
    fields = item if isinstance(item, Mapping) else {}
    parts = [str(fields.get("type", "?"))]
    if fields.get("role"):
        parts.append(str(fields["role"]))
    if fields.get("call_id"):
        parts.append(str(fields["call_id"]))
    return " ".join(parts)


def _strings(value: Any) -> Iterator[str]:
    """Every string an item holds (keys aside), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def _common_suffix(candidate: Sequence[Any], original: Sequence[Any]) -> int:
    """How many last items the two contexts share, in order."""
    count = 0
    while count < min(len(candidate), len(original)) and candidate[-1 - count] == original[-1 - count]:
        count += 1
    return count


def _head_differences(head: Sequence[Any], summaries: Sequence[str] | None) -> list[str]:
    """Why the items before the kept suffix are not a summary."""
    if not head:
        return ["the compacted context does not open with a summary (it is all the original's suffix)"]
    found = [
        f"compacted item {position} ({_label(item)}) is neither a summary message "
        "nor part of the original's suffix"
        for position, item in enumerate(head)
        if not (isinstance(item, Mapping) and item.get("type") == "message")
    ]
    wanted = [text.strip() for text in summaries or () if text.strip()]
    if wanted and not any(text in "".join(_strings(item)) for item in head for text in wanted):
        found.append(f"none of the {len(head)} items before the kept suffix carries the summary")
    return found


def _pairing_differences(items: Sequence[Any], original: Sequence[Any]) -> list[str]:
    """Outputs without an earlier call; calls never answered (unless the original agrees)."""
    found: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    for position, item in enumerate(items):
        fields = item if isinstance(item, Mapping) else {}
        call_id = fields.get("call_id")
        if not isinstance(call_id, str):
            continue
        if fields.get("type") in CALL_TYPES:
            called.add(call_id)
        elif fields.get("type") in OUTPUT_TYPES:
            if call_id not in called:
                found.append(f"item {position} answers call {call_id}, which is never sent before it")
            answered.add(call_id)
    open_before = _calls(original, CALL_TYPES) - _calls(original, OUTPUT_TYPES)
    found += [f"call {call_id} is never answered" for call_id in sorted(called - answered - open_before)]
    return found


def _calls(items: Sequence[Any], types: frozenset[str]) -> set[str]:
    return {
        item["call_id"]
        for item in items
        if isinstance(item, Mapping) and item.get("type") in types and isinstance(item.get("call_id"), str)
    }


def _leaks(compacted: Sequence[Any], original: Sequence[Any], excluded: Sequence[ExcludedText]) -> list[str]:
    """Excluded texts the compacted context sends and the original does not (by line, never by text)."""
    if not excluded:
        return []
    sent = _SEPARATOR.join(text for item in compacted for text in _strings(item))
    sent_before = _SEPARATOR.join(text for item in original for text in _strings(item))
    hits = [item for item in excluded if item.text in sent and item.text not in sent_before]
    return [
        f"text of excluded line {item.line} ({item.partition_set}) is sent"
        for item in sorted(hits, key=lambda item: item.line)
    ]


def judge_codex(
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> ItemVerdict:
    """Compare the histories Codex sent (None: Codex did not resume that file)."""
    if original is None or compacted is None:
        which = "the original" if original is None else "the compacted file"
        return ItemVerdict(
            verdict=Verdict.NOT_RESUMABLE if original is None else Verdict.MISMATCH,
            differences=() if original is None else ("Codex does not resume the compacted file",),
            summary_items=0,
            kept_items=0,
            original=None if original is None else context_size(original),
            compacted=None if compacted is None else context_size(compacted),
            notes=(f"Codex does not resume {which}",),
        )
    if summaries is not None and not summaries:  # a rewrite: no summary, every item verbatim
        return rewrite_verdict(original, compacted, "item")
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
        original=context_size(original),
        compacted=context_size(compacted),
        notes=(_UNNAMED_SUMMARY,) if unnamed and head else (),
    )
