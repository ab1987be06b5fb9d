"""OpenClaw's SQLite session store, read: each session's transcript as the JSONL pi writes.

Since September 2026 OpenClaw keeps an agent's sessions in one database,
`agents/<agent>/agent/openclaw-agent.sqlite`, whose `transcript_events` table holds each JSONL
line of a session as `event_json`, ordered by `seq` within its `session_id`. The database is read
from its bytes (deserialized in memory, queries only): the file on disk is never opened by SQLite,
so a running OpenClaw is neither locked nor written. Each session's lines, joined in `seq` order,
are what pi's reader reads (`session_analysis.py`); a row whose `event_json` is empty stays an
empty line there, which the reader reports as it reports any blank line. Replacing rows is out of
scope: a compaction of a stored session is written as a JSONL file.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Final

__all__ = ["SQLITE_HEADER", "StoreRead", "StoredSession", "is_openclaw_store", "stored_sessions"]

SQLITE_HEADER: Final = b"SQLite format 3\x00"
_COLUMNS: Final = frozenset({"session_id", "seq", "event_json"})


@dataclass(frozen=True, slots=True)
class StoredSession:
    """One session of the store: its id, its transcript as JSONL bytes, and how many rows made it."""

    session_id: str
    data: bytes
    events: int


@dataclass(frozen=True, slots=True)
class StoreRead:
    """The store's sessions in `session_id` order, or why it could not be read (no text of it)."""

    sessions: tuple[StoredSession, ...]
    problem: str | None = None


def is_openclaw_store(data: bytes) -> bool:
    """Whether the bytes begin as an SQLite database does."""
    return data.startswith(SQLITE_HEADER)


def _line(event: object) -> bytes:
    if isinstance(event, bytes):
        return event
    return b"" if event is None else str(event).encode("utf-8", "surrogatepass")


def _sessions(connection: sqlite3.Connection) -> StoreRead:
    info = connection.execute("PRAGMA table_info(transcript_events)")
    columns = {_line(row[1]).decode("utf-8", "replace") for row in info}
    if not _COLUMNS.issubset(columns):
        return StoreRead((), "no transcript_events table with session_id, seq and event_json")
    rows = connection.execute("SELECT session_id, event_json FROM transcript_events ORDER BY session_id, seq")
    grouped: dict[bytes, list[bytes]] = {}
    for session_id, event in rows:
        grouped.setdefault(_line(session_id), []).append(_line(event))
    return StoreRead(
        tuple(
            StoredSession(key.decode("utf-8", "replace"), b"\n".join(lines) + b"\n", len(lines))
            for key, lines in grouped.items()
        )
    )


def stored_sessions(data: bytes) -> StoreRead:
    """Every session the store holds, each as the JSONL pi would have written."""
    if not is_openclaw_store(data):
        return StoreRead((), "not an SQLite database")
    connection = sqlite3.connect(":memory:")
    try:
        connection.text_factory = bytes  # a transcript's bytes as stored, valid UTF-8 or not
        connection.deserialize(data)
        connection.execute("PRAGMA query_only = ON")
        return _sessions(connection)
    except sqlite3.DatabaseError as error:
        return StoreRead((), f"unreadable SQLite database ({type(error).__name__})")
    finally:
        connection.close()
