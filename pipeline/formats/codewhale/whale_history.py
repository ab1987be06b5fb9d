"""The history CodeWhale rebuilds when it resumes a session, message by message, with the record
each message came from.

As `SessionManager::load_session` does: the journal is validated (`validate_saved_journal`: no
empty or duplicate id, every parent present, the leaf present, no cycle; else CodeWhale refuses
the document), its active branch (`root_to_leaf` from `journal.leaf_id`) projected to messages
(`ensure_journal`; the stored `messages` when the branch is empty or there is no journal), then
unpaired calls and results repaired (`tool_history_repair::repair_tool_call_pairs`): a call with
no result gets a synthetic error result after its message, a duplicate or orphan result is
dropped (its message with it when nothing else is left), and a visible receipt is appended.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import orjson

from pipeline.formats.codewhale.whale_document import (
    Block,
    BlockKind,
    Entry,
    Message,
    SavedSession,
    message_from_json,
)

__all__ = ["CRASH_REPAIR_CONTENT", "JournalFault", "Rebuilt", "RebuiltMessage", "Repair", "rebuild_context"]

CRASH_REPAIR_CONTENT: Final = "Tool call interrupted by process exit; terminal status: crashed_and_repaired."
_ASSISTANT_ROLES: Final = frozenset({"assistant", "assistant_interrupted"})


class JournalFault(StrEnum):
    """Why CodeWhale refuses a journal (`validate_saved_journal`)."""

    DUPLICATE_ID = "duplicate-id"
    MISSING_PARENT = "missing-parent"
    MISSING_LEAF = "missing-leaf"
    CYCLE = "cycle"


@dataclass(frozen=True, slots=True)
class RebuiltMessage:
    """A message CodeWhale sends on resume; `record` None for one its repair wrote."""

    message: Message
    record: int | None


@dataclass(frozen=True, slots=True)
class Repair:
    """What the resume-time repair changed (call ids only)."""

    unanswered: tuple[str, ...] = ()
    duplicate_results: tuple[str, ...] = ()
    orphan_results: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing was repaired."""
        return not (self.unanswered or self.duplicate_results or self.orphan_results)


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """The rebuilt history, the records on the active branch, the repair, and journal faults."""

    messages: tuple[RebuiltMessage, ...]
    active: tuple[Entry, ...]
    repair: Repair
    faults: tuple[tuple[JournalFault, int | None], ...]


def _journal_faults(entries: tuple[Entry, ...], leaf: str | None) -> list[tuple[JournalFault, int | None]]:
    faults: list[tuple[JournalFault, int | None]] = []
    parents: dict[str, str | None] = {}
    for entry in entries:
        if not entry.id or entry.id in parents:
            faults.append((JournalFault.DUPLICATE_ID, entry.record))
        parents.setdefault(entry.id, entry.parent_id)
    records = {e.id: e.record for e in entries}
    faults += [
        (JournalFault.MISSING_PARENT, e.record) for e in entries if e.parent_id and e.parent_id not in parents
    ]
    if leaf is not None and leaf not in parents:
        faults.append((JournalFault.MISSING_LEAF, None))
    done: set[str] = set()
    for start in parents:
        path: list[str] = []
        cursor: str | None = start
        while cursor is not None and cursor in parents and cursor not in done:
            if cursor in path:
                faults.append((JournalFault.CYCLE, records[cursor]))
                break
            path.append(cursor)
            cursor = parents[cursor]
        done.update(path)
    return faults


def _root_to_leaf(entries: tuple[Entry, ...], leaf: str | None) -> tuple[Entry, ...]:
    index = {e.id: e for e in entries}  # a later duplicate wins, as the Rust HashMap collect does
    path: list[Entry] = []
    seen: set[str] = set()
    cursor = leaf
    while cursor is not None and cursor not in seen and cursor in index:
        seen.add(cursor)
        path.append(index[cursor])
        cursor = index[cursor].parent_id
    return tuple(reversed(path))


def _result(call: Block) -> dict[str, object]:
    raw: dict[str, object] = {"type": "tool_result", "tool_use_id": call.call_id}
    if call.key != call.call_id:
        raw["execution_id"] = call.key
    raw |= {"content": CRASH_REPAIR_CONTENT, "is_error": True}
    return raw


def _without_results(message: Message, keep: list[bool]) -> Message | None:
    """The message with its dropped result blocks removed (None when nothing is left)."""
    if all(keep):
        return message
    raw = orjson.loads(message.json)
    raw["content"] = [block for block, kept in zip(raw["content"], keep, strict=True) if kept]
    return message_from_json(raw) if raw["content"] else None


def _scan(history: tuple[RebuiltMessage, ...]) -> tuple[dict[int, list[Block]], list[bool], Repair]:
    """One pass as `repair_tool_call_pairs_inner` makes it: the calls left unanswered after each
    message, which result blocks are kept, and the ids repaired."""
    pending_at: int | None = None
    pending: list[Block] = []
    retained: set[str] = set()
    missing: dict[int, list[Block]] = {}
    keep: list[bool] = []
    orphans: list[str] = []
    duplicates: list[str] = []

    def close() -> None:
        if pending_at is not None:
            lost = [c for c in pending if c.key not in retained]
            if lost:
                missing[pending_at] = lost

    for index, item in enumerate(history):
        if item.message.role in _ASSISTANT_ROLES:
            close()
            pending = [b for b in item.message.blocks if b.kind is BlockKind.TOOL_USE]
            pending_at = index if pending else None
            retained = set()
        for block in item.message.blocks:
            if block.kind is not BlockKind.TOOL_RESULT:
                continue
            follows = (
                pending_at is not None
                and pending_at < index
                and bool((block.key or "").strip())
                and sum(c.key == block.key for c in pending) == 1
                and any(c.key == block.key and c.call_id == block.call_id for c in pending)
            )
            if not follows:
                orphans.append(block.call_id or "")
                keep.append(False)
            elif block.key in retained:
                duplicates.append(block.call_id or "")
                keep.append(False)
            else:
                retained.add(block.key or "")
                keep.append(True)
    close()
    unanswered = tuple(c.call_id or "" for calls in missing.values() for c in calls)
    return missing, keep, Repair(unanswered, tuple(duplicates), tuple(orphans))


def _repaired(history: tuple[RebuiltMessage, ...]) -> tuple[tuple[RebuiltMessage, ...], Repair]:
    missing, keep, repair = _scan(history)
    if repair.empty:
        return history, repair
    rebuilt: list[RebuiltMessage] = []
    ordinal = 0
    for index, item in enumerate(history):
        results = sum(b.kind is BlockKind.TOOL_RESULT for b in item.message.blocks)
        flags = iter(keep[ordinal : ordinal + results])
        ordinal += results
        mask = [next(flags) if b.kind is BlockKind.TOOL_RESULT else True for b in item.message.blocks]
        kept = _without_results(item.message, mask)
        if kept is not None:
            rebuilt.append(RebuiltMessage(kept, item.record if kept is item.message else None))
        if index in missing:
            synthetic = message_from_json({"role": "user", "content": [_result(c) for c in missing[index]]})
            assert synthetic is not None  # built from known parts
            rebuilt.append(RebuiltMessage(synthetic, None))
    receipt = (
        f"[tool_history_repair] Repaired {len(repair.unanswered)} crashed tool call(s); "
        f"quarantined {len(repair.duplicate_results)} duplicate and "
        f"{len(repair.orphan_results)} orphan terminal result(s)."
    )
    note = message_from_json({"role": "assistant", "content": [{"type": "text", "text": receipt}]})
    assert note is not None
    rebuilt.append(RebuiltMessage(note, None))
    return tuple(rebuilt), repair


def rebuild_context(session: SavedSession) -> Rebuilt:
    """The history CodeWhale resumes `session` with (empty when it refuses the journal)."""
    if session.entries is None:
        history = tuple(RebuiltMessage(m, i) for i, m in enumerate(session.messages, start=1))
        messages, repair = _repaired(history)
        return Rebuilt(messages, (), repair, ())
    faults = tuple(_journal_faults(session.entries, session.leaf_id))
    if faults:
        return Rebuilt((), (), Repair(), faults)
    active = _root_to_leaf(session.entries, session.leaf_id)
    if active:
        history = tuple(RebuiltMessage(e.message, e.record) for e in active)
    else:  # an empty branch leaves the stored messages in place; they are no record of ours
        history = tuple(RebuiltMessage(m, None) for m in session.messages)
    messages, repair = _repaired(history)
    return Rebuilt(messages, active, repair, ())
