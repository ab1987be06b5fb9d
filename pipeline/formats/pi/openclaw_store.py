"""OpenClaw's SQLite session store, read: each session's transcript as the JSONL pi writes.

Since September 2026 OpenClaw keeps an agent's sessions in one database,
`agents/<agent>/agent/openclaw-agent.sqlite`, whose `transcript_events` table holds each JSONL
line of a session as `event_json`, ordered by `seq` within its `session_id` (OpenClaw's
`src/state/openclaw-agent-schema.sql`). The database is read from its bytes and its write-ahead
log's (`sqlite_wal.py`: OpenClaw runs it in WAL mode, so a live session's newest turns are in the
log), deserialized in memory and queried only: the files on disk are never opened by SQLite, so a
running OpenClaw is neither locked nor written. Each session's lines, joined in `seq` order,
are what pi's reader reads (`session_analysis.py`); a row whose `event_json` is empty stays an
empty line there, which the reader reports as it reports any blank line. Replacing rows is out of
scope: a compaction of a stored session is written as a JSONL file.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from pipeline.formats.identity import SessionStore, StoredSession, StoreRead
from pipeline.formats.pi.sqlite_wal import database_image

__all__ = ["OPENCLAW_STORE", "SQLITE_HEADER", "STORE_NAME", "is_openclaw_store", "stored_sessions"]

SQLITE_HEADER: Final = b"SQLite format 3\x00"
STORE_NAME: Final = "openclaw-agent.sqlite"  # `agents/<agent>/agent/openclaw-agent.sqlite`
_COLUMNS: Final = frozenset({"session_id", "seq", "event_json"})


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


def stored_sessions(data: bytes, wal: bytes = b"") -> StoreRead:
    """Every session the store holds (its committed write-ahead log `wal` applied), each as the
    JSONL pi would have written."""
    image = database_image(data, wal)  # a store whose first pages are still in the log has them now
    if not is_openclaw_store(image):
        return StoreRead((), "not an SQLite database")
    connection = sqlite3.connect(":memory:")
    try:
        connection.text_factory = bytes  # a transcript's bytes as stored, valid UTF-8 or not
        connection.deserialize(image)
        connection.execute("PRAGMA query_only = ON")
        return _sessions(connection)
    except sqlite3.DatabaseError as error:
        return StoreRead((), f"unreadable SQLite database ({type(error).__name__})")
    finally:
        connection.close()


OPENCLAW_STORE: Final = SessionStore(frozenset({STORE_NAME}), stored_sessions)
"""OpenClaw's per-agent database as a store of pi sessions: one report per stored session."""
