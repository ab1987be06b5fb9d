"""Plant what the seed's topology rules refuse, and Claude Code does not mind, at chosen lines.

A parent written after its child (`parent_after_child`: a writer flushing out of order), records
of another session amid the chain (`session_run`: `/clear`, resumed and forked sessions mix
sessionIds), and a clock that went back (`clock_back`). Each takes a transcript's bytes and
returns a damaged copy; a line not shaped as expected leaves the bytes as they were.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

__all__ = ["clock_back", "parent_after_child", "session_run"]


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parent_after_child(data: bytes, line: int) -> bytes:
    """The record on 1-based `line` moved to just after its first child (a writer flushing out of order)."""
    lines = data.split(b"\n")
    uid = (_record(lines[line - 1]) or {}).get("uuid")
    child = next(
        (n for n in range(line, len(lines)) if uid and (_record(lines[n]) or {}).get("parentUuid") == uid),
        None,
    )
    if child is None:
        return data
    moved = lines.pop(line - 1)
    lines.insert(child, moved)  # `child` is now the index just past the child
    return b"\n".join(lines)


def session_run(data: bytes, first: int, last: int, session: str) -> bytes:
    """Records on 1-based lines `first`..`last` carry another `sessionId` (other records keep theirs)."""
    lines = data.split(b"\n")
    for at in range(first - 1, min(last, len(lines))):
        record = _record(lines[at])
        if record is not None and "sessionId" in record:
            record["sessionId"] = session
            lines[at] = orjson.dumps(record)
    return b"\n".join(lines)


def clock_back(data: bytes, first: int, last: int, seconds: int) -> bytes:
    """Records on lines `first`..`last` stamped `seconds` earlier (a clock set back mid-session)."""
    lines = data.split(b"\n")
    for at in range(first - 1, min(last, len(lines))):
        record = _record(lines[at])
        stamp = record.get("timestamp") if record is not None else None
        if record is None or not isinstance(stamp, str):
            continue
        try:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            continue
        earlier = (moment - timedelta(seconds=seconds)).astimezone(UTC)
        record["timestamp"] = earlier.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        lines[at] = orjson.dumps(record)
    return b"\n".join(lines)
