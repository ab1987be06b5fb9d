"""Reading the items of a rebuilt context back out of the rollout's bytes.

The rebuilt context holds references (`ContextItem`); this is where the JSON behind them is read:
the replacement histories the reverse scan chooses between, and, for a caller that needs them
(the golden test, the candidate's proof, token counts), the items themselves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any, Final

import orjson

from pipeline.formats.codex.reconstruct import ContextItem, ItemOrigin, Rebuilt
from pipeline.formats.codex.rollout_decode import Rollout, RolloutKind, is_user_turn
from pipeline.formats.codex.sent_form import sent_item

__all__ = ["item_digest", "materialize", "payload_of", "replacement_items", "sent_items", "sent_pairs"]

_EMPTY_SUMMARY: Final = "(no summary available)"


def payload_of(rollout: Rollout, data: bytes, line: int) -> Any:
    """The parsed payload of a record line (a legacy bare item is its own payload)."""
    record = orjson.loads(rollout.raw_line(data, line))
    entry = rollout.entry(line)
    if entry is not None and entry.kind is RolloutKind.LEGACY_ITEM:
        return record
    return record.get("payload") if isinstance(record, dict) else None


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if not isinstance(content, list):
        return []
    return [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]


def _reference(line: int, slot: int, item: Any) -> ContextItem:
    if not isinstance(item, dict):
        return ContextItem(ItemOrigin.REPLACEMENT, line, slot, None)
    kind, role, call_id = item.get("type"), item.get("role"), item.get("call_id")
    return ContextItem(
        ItemOrigin.REPLACEMENT,
        line,
        slot,
        kind if isinstance(kind, str) else None,
        role if isinstance(role, str) else None,
        call_id if isinstance(call_id, str) else None,
        kind == "message" and is_user_turn(role, _texts(item)),
    )


def replacement_items(
    rollout: Rollout, data: bytes
) -> tuple[dict[int, tuple[ContextItem, ...]], frozenset[int]]:
    """Every `compacted` line with replacement_history mapped to references to its items, and
    the lines whose replacement_history is not a list (Codex cannot read those: an empty base)."""
    found: dict[int, tuple[ContextItem, ...]] = {}
    malformed: set[int] = set()
    for line in rollout.lines_where(RolloutKind.COMPACTED):
        entry = rollout.entry(line)
        if entry is None or not entry.replacement:
            continue
        history = payload_of(rollout, data, line).get("replacement_history")
        if not isinstance(history, list):
            malformed.add(line)
        items = history if isinstance(history, list) else []
        found[line] = tuple(_reference(line, slot, item) for slot, item in enumerate(items))
    return found, frozenset(malformed)


def _user_message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _item(rollout: Rollout, data: bytes, item: ContextItem, cache: dict[int, Any]) -> dict[str, Any] | None:
    if item.origin is ItemOrigin.INITIAL_CONTEXT:
        return None
    if item.origin is ItemOrigin.ABORTED_OUTPUT:
        return {"type": item.type, "call_id": item.call_id, "output": "aborted"}
    if item.line not in cache:
        cache[item.line] = payload_of(rollout, data, item.line)
    payload = cache[item.line]
    if item.origin is ItemOrigin.SUMMARY:
        message = payload.get("message") if isinstance(payload, dict) else None
        return _user_message(message if isinstance(message, str) and message else _EMPTY_SUMMARY)
    source = payload["replacement_history"][item.slot] if item.slot is not None else payload
    if item.origin is ItemOrigin.REBUILT_USER:
        return _user_message("\n".join(_texts(source)))
    return source if isinstance(source, dict) else None


def materialize(rollout: Rollout, data: bytes, rebuilt: Rebuilt) -> Iterator[dict[str, Any]]:
    """The items of the rebuilt context, as the rollout holds them (Codex's initial context skipped)."""
    cache: dict[int, Any] = {}
    for reference in rebuilt.items:
        item = _item(rollout, data, reference, cache)
        if item is not None:
            yield item


def sent_pairs(
    rollout: Rollout, data: bytes, rebuilt: Rebuilt
) -> Iterator[tuple[ContextItem, dict[str, Any]]]:
    """Each sent item with its reference (Codex's own initial context has no item here)."""
    cache: dict[int, Any] = {}
    for reference in rebuilt.items:
        item = _item(rollout, data, reference, cache)
        if item is not None:
            yield reference, sent_item(item, recorded=reference.origin is ItemOrigin.LINE)


def sent_items(rollout: Rollout, data: bytes, rebuilt: Rebuilt) -> Iterator[dict[str, Any]]:
    """The rebuilt context as Codex sends it (`sent_form`): what the golden test compares."""
    return (item for _, item in sent_pairs(rollout, data, rebuilt))


def item_digest(item: dict[str, Any]) -> str:
    """SHA-256 of an item's canonical JSON (sorted keys): how goldens name an item without its text."""
    return hashlib.sha256(orjson.dumps(item, option=orjson.OPT_SORT_KEYS)).hexdigest()
