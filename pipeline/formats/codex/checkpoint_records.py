"""The Codex-native checkpoint a compaction writes: the records Codex itself writes when it compacts.

Codex 0.171 compacts by writing a `compacted` record whose `replacement_history` is the history
it resumes from, then a `context_compacted` event, and goes on appending. A compaction written
here is the same shape: the rollout's `session_meta` line (what Codex resumes the thread from), a
`compacted` record whose replacement history is the summary as one user message, its event, and
then the recent tail's lines byte for byte, which Codex replays after the base. Nothing else of
the older span is written, so the file is smaller for archival too. In a numbered (paginated)
thread the checkpoint's records carry numbers the summarized span freed.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from pipeline.formats.codex.rollout_decode import Rollout, RolloutKind

__all__ = ["SUMMARY_PREFIX", "compose_checkpoint", "summary_item"]

SUMMARY_PREFIX: Final = (
    "Summary of the earlier part of this session, written when it was compacted; "
    "L<n> cites line n of the original rollout.\n\n"
)


def summary_item(text: str) -> dict[str, Any]:
    """The summary as the user message Codex's own compactions put in a replacement history."""
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": SUMMARY_PREFIX + text}],
    }


def _timestamp(rollout: Rollout, data: bytes, line: int) -> str:
    record = orjson.loads(rollout.raw_line(data, line))
    value = record.get("timestamp") if isinstance(record, dict) else None
    return value if isinstance(value, str) else "1970-01-01T00:00:00.000Z"


def _freed_ordinals(rollout: Rollout, meta: int, cut_line: int) -> list[int]:
    """The numbers of the records the checkpoint replaces, in order (none in an unnumbered thread).

    A paginated thread numbers every record (`ordinal`, unique and increasing; Codex appends after
    the last one): the checkpoint's records take the first numbers the summarized span leaves free,
    so the candidate's numbers stay unique and in order.
    """
    entries = rollout.entries[: cut_line - 1]
    return [
        entry.ordinal
        for number, entry in enumerate(entries, 1)
        if number != meta and entry is not None and entry.ordinal is not None
    ]


def _record(stamp: str, ordinal: int | None, kind: str, payload: dict[str, Any]) -> bytes:
    numbered = {"ordinal": ordinal} if ordinal is not None else {}
    return orjson.dumps({"timestamp": stamp, **numbered, "type": kind, "payload": payload}) + b"\n"


def compose_checkpoint(rollout: Rollout, data: bytes, cut_line: int, summary: str) -> bytes:
    """The compacted rollout: session_meta, the checkpoint records, then lines `cut_line`.. verbatim."""
    meta = next(rollout.lines_where(RolloutKind.SESSION_META))
    stamp = _timestamp(rollout, data, cut_line)
    freed = iter(_freed_ordinals(rollout, meta, cut_line))
    payload = {"message": SUMMARY_PREFIX + summary, "replacement_history": [summary_item(summary)]}
    compacted = _record(stamp, next(freed, None), "compacted", payload)
    event = _record(stamp, next(freed, None), "event_msg", {"type": "context_compacted"})
    head = rollout.raw_line(data, meta) + b"\n" + compacted + event
    return head + data[rollout.offsets[cut_line - 1] :]
