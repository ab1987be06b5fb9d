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
from pipeline.proof.item_verdict import ItemRules, ItemVerdict, judge_items
from pipeline.proof.verdict import ExcludedText

__all__ = ["context_size", "judge_codex"]


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


def _call_id(item: Any, types: frozenset[str]) -> str | None:
    if isinstance(item, Mapping) and item.get("type") in types and isinstance(item.get("call_id"), str):
        return str(item["call_id"])
    return None


def _calls(item: Any) -> Iterator[str]:
    if (call_id := _call_id(item, CALL_TYPES)) is not None:
        yield call_id


CODEX_RULES: Final = ItemRules(
    client="Codex",
    is_summary=lambda item: isinstance(item, Mapping) and item.get("type") == "message",
    calls=_calls,
    answers=lambda item: _call_id(item, OUTPUT_TYPES),
    noun="item",
    label=_label,
)


def judge_codex(
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> ItemVerdict:
    """Compare the histories Codex sent (None: Codex did not resume that file)."""
    return judge_items(CODEX_RULES, original, compacted, summaries=summaries, excluded=excluded)
