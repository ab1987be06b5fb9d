"""Where a CodeWhale compaction may cut, and the candidate document in CodeWhale's own form.

A cut falls at a message of the rebuilt history that a record holds (not one the resume repair
wrote), after the newest checkpoint (so the candidate never stacks two), with no call of the
summarized span left unanswered across it, and no later than the protected last round's start
(seed 000: that round is kept whole).

The candidate is the original document with its journal replaced by one branch: a checkpoint
entry in the current form (the summary, the `/anchor` pins the original's checkpoint restated),
then the active branch's entries from the cut, their messages byte for byte; the first kept
entry's `parent_id` names the checkpoint. The old history is dropped from the candidate for
archival: it stays in the verified backup the in-place job keeps. `messages` is the new branch's
projection and `metadata.message_count` its length, as CodeWhale's own save writes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from pipeline.formats.codewhale.whale_document import BlockKind, Entry, Message, SavedSession
from pipeline.formats.codewhale.whale_history import Rebuilt
from pipeline.formats.codewhale.whale_markers import checkpoint_message, is_checkpoint
from pipeline.formats.codewhale.whale_survival import last_round_start
from pipeline.formats.context_items import TailPlan
from pipeline.formats.json_text import dumps

__all__ = ["compose_candidate", "plan_cut", "safe_cuts"]


def safe_cuts(rebuilt: Rebuilt) -> tuple[int, ...]:
    """The indices of the rebuilt history a compaction may start its kept tail at."""
    messages = [item.message for item in rebuilt.messages]
    latest = max((i for i, m in enumerate(messages) if is_checkpoint(m)), default=-1)
    limit = last_round_start(messages)
    pending: set[str] = set()
    cuts: list[int] = []
    for index, item in enumerate(rebuilt.messages):
        if 0 < index <= limit and index > latest + 1 and not pending and item.record is not None:
            cuts.append(index)
        for block in item.message.blocks:
            if block.kind is BlockKind.TOOL_USE:
                pending.add(block.key or "")
            elif block.kind is BlockKind.TOOL_RESULT:
                pending.discard(block.key or "")
    return tuple(cuts)


def plan_cut(rebuilt: Rebuilt, tokens: Sequence[int], room: int) -> TailPlan | None:
    """The largest tail within `room` tokens at a safe cut; the smallest safe tail when none fits."""
    cuts = safe_cuts(rebuilt)
    if not cuts:
        return None
    tails = {cut: sum(tokens[cut:]) for cut in cuts}
    fitting = [cut for cut in cuts if tails[cut] <= room]
    cut = fitting[0] if fitting else cuts[-1]
    record = rebuilt.messages[cut].record
    assert record is not None  # safe cuts are at records
    message = rebuilt.messages[cut].message
    at_turn = message.role == "user" and not any(b.kind is BlockKind.TOOL_RESULT for b in message.blocks)
    return TailPlan(first_item=cut, cut_line=record, target_met=bool(fitting), at_turn=at_turn)


def _checkpoint_entry(session: SavedSession, first: Entry | None, checkpoint: Message) -> dict[str, Any]:
    seed = f"codewhale-checkpoint:{session.metadata.id}:{first.id if first else ''}"
    created = orjson.loads(first.json).get("created_at") if first else None
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, seed)),
        "kind": "message",
        "message": orjson.loads(checkpoint.json),
        "created_at": created or session.fields["metadata"].get("updated_at"),
        "spawn_depth": session.metadata.spawn_depth,
    }


def _journal(
    session: SavedSession, rebuilt: Rebuilt, cut: int, checkpoint: Message
) -> tuple[dict[str, Any], list[Any]]:
    by_record = {entry.record: entry for entry in rebuilt.active}
    kept = [by_record[item.record] for item in rebuilt.messages[cut:] if item.record in by_record]
    head = _checkpoint_entry(session, kept[0] if kept else None, checkpoint)
    entries: list[Any] = [head]
    for position, entry in enumerate(kept):
        raw = orjson.loads(entry.json)
        if position == 0:
            raw = {key: raw[key] for key in raw if key != "parent_id"}
            raw = {"id": raw.pop("id"), "parent_id": head["id"], **raw}
        entries.append(raw)
    journal = dict(session.fields["journal"])
    journal["entries"] = entries
    journal["leaf_id"] = entries[-1]["id"]
    messages = [head["message"], *(orjson.loads(entry.message.json) for entry in kept)]
    return journal, messages


def compose_candidate(
    data: bytes, session: SavedSession, rebuilt: Rebuilt, cut: int, summary: str, anchors: str | None
) -> bytes:
    """The candidate document: the checkpoint, then the rebuilt history's records from `cut`."""
    checkpoint = checkpoint_message(summary, anchors)
    fields = dict(session.fields)
    if session.entries is None:
        records = {item.record for item in rebuilt.messages[cut:] if item.record is not None}
        kept = [orjson.loads(m.json) for i, m in enumerate(session.messages, start=1) if i in records]
        messages = [orjson.loads(checkpoint.json), *kept]
    else:
        journal, messages = _journal(session, rebuilt, cut, checkpoint)
        fields["journal"] = journal
        if "leaf_id" in fields:
            fields["leaf_id"] = journal["leaf_id"]
    fields["messages"] = messages
    fields["metadata"] = {**fields["metadata"], "message_count": len(messages)}
    tail = b"\n" if data.endswith(b"\n") else b""
    return dumps(fields) + tail
