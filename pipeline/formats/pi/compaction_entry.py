"""A pi compaction composed in pi's own form: the original, then one appended `compaction` entry.

pi compacts by appending a `compaction` entry (summary, `firstKeptEntryId`, `tokensBefore`,
`details`) whose parent is the leaf; on resume it sends the summary and then the entries from the
first kept one on, as they are. So the candidate is the original's bytes unchanged (a final
newline added when missing) and one new line, and every kept line is its source byte for byte.
Below version 2 entries have no ids: pi links them in file order when it loads the file and reads
a compaction's `firstKeptEntryIndex` (the kept entry's place among the records it parsed), which
is what the appended entry then carries.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from pipeline.formats.pi.session_decode import PiEntry, PiKind, PiSession

__all__ = ["compaction_record", "compose_compaction"]


def _new_id(session: PiSession, data: bytes) -> str:
    """An 8-hex id, as pi gives entries, derived from the bytes and unused in the file."""
    taken = {entry.entry_id for entry in session.entries}
    digest = hashlib.sha256(data).hexdigest()
    for start in range(0, len(digest) - 8):
        candidate = digest[start : start + 8]
        if candidate not in taken:
            return candidate
    raise ValueError("no unused compaction id")  # 56 distinct ids all taken: not a real session


def _timestamp(session: PiSession) -> str:
    stamps = [
        e.record.get("timestamp") for e in session.entries if isinstance(e.record.get("timestamp"), str)
    ]
    return str(stamps[-1]) if stamps else "1970-01-01T00:00:00.000Z"


def compaction_record(
    session: PiSession, data: bytes, kept: PiEntry, summary: str, tokens_before: int
) -> dict[str, Any]:
    """The `compaction` entry that keeps from `kept` on, parented on pi's leaf."""
    record: dict[str, Any] = {"type": "compaction"}
    if session.version >= 2:
        leaf = next(e for e in reversed(session.entries) if e.kind is not PiKind.SESSION)
        record |= {"id": _new_id(session, data), "parentId": leaf.entry_id}
    record |= {"timestamp": _timestamp(session), "summary": summary}
    if session.version >= 2:
        record["firstKeptEntryId"] = kept.entry_id
    else:
        record["firstKeptEntryIndex"] = session.entries.index(kept)
    record |= {
        "tokensBefore": tokens_before,
        "details": {"readFiles": [], "modifiedFiles": []},
        "fromHook": False,
    }
    return record


def compose_compaction(
    session: PiSession, data: bytes, kept: PiEntry, summary: str, tokens_before: int
) -> bytes:
    """The candidate: the original's bytes and the appended compaction line."""
    record = compaction_record(session, data, kept, summary, tokens_before)
    head = data if data.endswith(b"\n") or not data else data + b"\n"
    return head + orjson.dumps(record) + b"\n"
