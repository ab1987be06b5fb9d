"""What one Codex item is, as a content class of the token benchmark.

The classes mirror Claude Code's where the roles match (a person's prompt, the agent's text, its
reasoning, a tool's call and its output by tool name) and name Codex's own kinds where they do
not: `context` for what Codex injects itself (developer instructions, AGENTS.md, the environment),
`summary` for compactions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

import orjson

from pipeline.formats.codex.item_types import API_ITEM_TYPES, CALL_TYPES, OUTPUT_TYPES, ItemType
from pipeline.formats.codex.reconstruct import Rebuilt
from pipeline.formats.codex.rollout_decode import Rollout, RolloutKind, is_user_turn
from pipeline.formats.codex.rollout_items import payload_of, sent_items
from pipeline.formats.context_items import ClassTallies, Key, Tally

ItemCounter = Callable[[Mapping[str, Any]], int]
"""One estimator's tokens of one item."""

__all__ = [
    "ItemCounter",
    "call_tools",
    "class_tallies",
    "codex_estimate",
    "file_items",
    "item_class",
    "tally_items",
    "visible_text",
]


def _texts(item: Mapping[str, Any]) -> list[str]:
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _message_class(item: Mapping[str, Any]) -> str:
    role = item.get("role")
    if role == "assistant":
        return "assistant"
    if role == "user" and is_user_turn(role, _texts(item)):
        return "human"
    return "context"


_FIXED: Final = {"reasoning": "reasoning", "compaction": "summary", "context_compaction": "summary"}


def item_class(item: Mapping[str, Any], tools: Mapping[str, str]) -> tuple[str, str | None]:
    """(class, tool name or None) of one item; `tools` names each call_id's tool."""
    kind = item.get("type")
    if kind == "message":
        return _message_class(item), None
    if kind in _FIXED:
        return _FIXED[str(kind)], None
    if kind in CALL_TYPES:
        return "tool_use", str(item.get("name") or kind)
    if kind in OUTPUT_TYPES:
        return "tool_result", tools.get(str(item.get("call_id")), "unknown")
    if kind == ItemType.WEB_SEARCH_CALL:
        return "tool_use", "web_search"
    return "other", str(kind)


def visible_text(item: Mapping[str, Any]) -> str:
    """The text of an item a tokenizer can count: its messages, call arguments and outputs, and a
    reasoning item's summary (its encrypted content is the model's own state, not text)."""
    kind = item.get("type")
    if kind == "reasoning":
        summary = item.get("summary")
        return "\n".join(_texts({"content": summary if isinstance(summary, list) else []}))
    if kind == "message":
        return "\n".join(_texts(item))
    pieces = [item.get(key) for key in ("name", "arguments", "input", "output", "action")]
    output = item.get("output")
    if isinstance(output, list):
        pieces.append("\n".join(_texts({"content": output})))
    return "\n".join(
        p if isinstance(p, str) else "" if p is None or isinstance(p, list) else str(p) for p in pieces
    )


def codex_estimate(item: Mapping[str, Any]) -> int:
    """Codex's own estimate of an item (`estimate_item_token_count`: its JSON bytes / 4, rounded up)."""
    return -(-len(orjson.dumps(item)) // 4)


def _text_counter(count: Callable[[str], int]) -> ItemCounter:
    """An estimator over an item's visible text (a real tokenizer's count)."""
    return lambda item: count(visible_text(item))


def file_items(rollout: Rollout, data: bytes) -> Iterator[Mapping[str, Any]]:
    """Every response item the file holds, as written (replacement histories' items included)."""
    for number, entry in enumerate(rollout.entries, 1):
        if entry is not None and entry.is_item and entry.item in API_ITEM_TYPES:
            yield payload_of(rollout, data, number)
        elif entry is not None and entry.kind is RolloutKind.COMPACTED and entry.replacement:
            history = payload_of(rollout, data, number).get("replacement_history")
            yield from (item for item in history or () if isinstance(item, dict))


def call_tools(items: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each call_id's tool name (what a tool output is classed by)."""
    return {
        str(i.get("call_id")): str(i.get("name") or i.get("type"))
        for i in items
        if i.get("type") in CALL_TYPES
    }


def tally_items(
    items: Iterable[Mapping[str, Any]], tools: Mapping[str, str], counters: Mapping[str, ItemCounter]
) -> dict[Key, Tally]:
    """Items and tokens by (class, None) and, for tools, by (class, tool)."""
    table: dict[Key, Tally] = defaultdict(Tally)
    for item in items:
        kind, name = item_class(item, tools)
        counts = {estimator: count(item) for estimator, count in counters.items()}
        for key in ((kind, None), (kind, name)) if name else ((kind, None),):
            tally = table[key]
            tally.items += 1
            for estimator, value in counts.items():
                tally.tokens[estimator] += value
    return table


def class_tallies(
    rollout: Rollout,
    data: bytes,
    rebuilt: Rebuilt,
    estimate: str,
    tokenizers: Mapping[str, Callable[[str], int]],
) -> ClassTallies:
    """Tokens by class, over the file's items and over the context Codex sends, by Codex's own
    estimate (named `estimate`) and by each tokenizer over an item's visible text; a tool output
    is classed by the tool of its call, wherever in the file the call is."""
    counters = {
        estimate: codex_estimate,
        **{name: _text_counter(count) for name, count in tokenizers.items()},
    }
    # Two passes over the file rather than its items held: a session's parsed items are its size again.
    tools = call_tools(file_items(rollout, data))
    file = tally_items(file_items(rollout, data), tools, counters)
    sent = tally_items(sent_items(rollout, data, rebuilt), tools, counters)
    return ClassTallies(file, sent)
