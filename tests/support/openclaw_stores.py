"""OpenClaw's per-agent SQLite store, built as OpenClaw writes it (`src/state/openclaw-agent-schema.sql`:
`session_windows`, `transcript_events` with one JSONL line per row in `event_json`; WAL mode), from
pi session files: the later rows left in the write-ahead log while a connection stays open, as a
running OpenClaw leaves them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Final

__all__ = ["STORE_SCHEMA", "live_store", "store_path"]

STORE_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS session_windows (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  previous_session_id TEXT,
  reason TEXT CHECK (reason IS NULL OR reason IN ('initial', 'reset', 'rollover', 'fork', 'rewind',
    'switch', 'recovery', 'compaction')),
  session_scope TEXT NOT NULL DEFAULT 'conversation',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  spawned_by TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS transcript_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE
) STRICT;
"""
_START: Final = 1_796_625_350_000  # ms, as OpenClaw stamps rows


def store_path(openclaw: Path, agent: str = "main") -> Path:
    """Where OpenClaw keeps an agent's store: `agents/<agent>/agent/openclaw-agent.sqlite`."""
    return openclaw / "agents" / agent / "agent" / "openclaw-agent.sqlite"


def _append(connection: sqlite3.Connection, session_id: str, lines: list[bytes], first: int) -> None:
    for seq, line in enumerate(lines, first):  # one transaction per line, as each entry is appended
        with connection:
            connection.execute(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?)",
                (session_id, seq, line.decode(), _START + seq),
            )


@contextmanager
def live_store(path: Path, sessions: Mapping[str, bytes], logged: int = 3) -> Iterator[sqlite3.Connection]:
    """A store holding `sessions` (id: JSONL bytes) with each session's last `logged` lines still
    in the write-ahead log while the context is open (its connection open, no checkpoint)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript(STORE_SCHEMA)
        split = {sid: data.splitlines() for sid, data in sessions.items()}
        for session_id, lines in split.items():
            with connection:
                connection.execute(
                    "INSERT INTO session_windows (session_id, session_key, reason, created_at, updated_at)"
                    " VALUES (?, ?, 'initial', ?, ?)",
                    (session_id, f"agent:main:{session_id}", _START, _START),
                )
            _append(connection, session_id, lines[: len(lines) - logged], 1)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA wal_autocheckpoint = 0")
        for session_id, lines in split.items():
            _append(connection, session_id, lines[len(lines) - logged :], len(lines) - logged + 1)
        yield connection
    finally:
        connection.close()
