"""OpenClaw's SQLite store read from its bytes: each session's rows in `seq` order are the JSONL pi
writes, byte for byte, and pi's reader rebuilds the same context from them; a live store's newest
rows, still in its write-ahead log, are read as SQLite itself reads them; a file that is no such
store says why, without a traceback."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from pipeline.formats.identity import StoredSession
from pipeline.formats.pi.openclaw_store import is_openclaw_store, stored_sessions
from pipeline.formats.pi.session_analysis import analyze_session
from pipeline.read.load import read_store
from tests.support.openclaw_stores import live_store
from tests.support.pi_files import FIXTURES, LIMITS

SCHEMA = (
    "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " event_json TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq))"
)


def _store(path: Path, sessions: dict[str, bytes], schema: str = SCHEMA) -> bytes:
    """A store holding `sessions`, rows inserted out of order (the table's order is `seq`'s)."""
    rows = [
        (session_id, seq, line.decode(), 1_796_625_350 + seq)
        for session_id, data in sessions.items()
        for seq, line in enumerate(data.splitlines(), 1)
    ]
    random.Random(7).shuffle(rows)
    with sqlite3.connect(path) as connection:
        connection.execute(schema)
        if "event_json" in schema:
            connection.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?)", rows)
    connection.close()
    return path.read_bytes()


def test_each_stored_session_is_the_jsonl_pi_wrote_and_reads_the_same(tmp_path: Path) -> None:
    files = {"b-tools": FIXTURES / "tools.jsonl", "a-branched": FIXTURES / "branched.jsonl"}
    originals = {session_id: path.read_bytes() for session_id, path in files.items()}
    data = _store(tmp_path / "openclaw-agent.sqlite", originals)
    assert is_openclaw_store(data)
    read = stored_sessions(data)
    assert read.problem is None
    assert read.sessions == tuple(
        StoredSession(session_id, originals[session_id], originals[session_id].count(b"\n"))
        for session_id in sorted(originals)
    )
    for stored in read.sessions:
        ours, theirs = (
            analyze_session(stored.data, LIMITS),
            analyze_session(originals[stored.session_id], LIMITS),
        )
        assert ours.context_digests() == theirs.context_digests() and ours.findings == theirs.findings == ()


def test_a_file_that_is_no_store_says_why(tmp_path: Path) -> None:
    assert stored_sessions((FIXTURES / "tools.jsonl").read_bytes()).problem == "not an SQLite database"
    truncated = _store(tmp_path / "cut.sqlite", {"s": (FIXTURES / "tools.jsonl").read_bytes()})[:2048]
    assert stored_sessions(truncated).problem is not None  # the header, then nothing: no traceback
    other = _store(tmp_path / "other.sqlite", {}, schema="CREATE TABLE notes (id INTEGER)")
    assert stored_sessions(other).problem == "no transcript_events table with session_id, seq and event_json"


def _as_sqlite_reads(connection: sqlite3.Connection) -> dict[str, bytes]:
    rows = connection.execute("SELECT session_id, event_json FROM transcript_events ORDER BY session_id, seq")
    found: dict[str, list[str]] = {}
    for session_id, event in rows:
        found.setdefault(session_id, []).append(event)
    return {key: "\n".join(lines).encode() + b"\n" for key, lines in found.items()}


def test_a_live_stores_newest_rows_are_read_from_its_write_ahead_log(tmp_path: Path) -> None:
    originals = {
        sid: (FIXTURES / name).read_bytes() for sid, name in (("t", "tools.jsonl"), ("c", "compacted.jsonl"))
    }
    path = tmp_path / "openclaw-agent.sqlite"
    with live_store(path, originals, logged=4) as connection:
        files = read_store(path)
        assert files.wal and files.data[18:20] == b"\x02\x02"  # WAL mode, rows in the log
        read = stored_sessions(files.data, files.wal)
        assert {s.session_id: s.data for s in read.sessions} == originals == _as_sqlite_reads(connection)
        without_log = stored_sessions(files.data)  # the main file alone lacks the last 4 lines
        assert {s.session_id: s.events for s in without_log.sessions} == {
            sid: data.count(b"\n") - 4 for sid, data in originals.items()
        }
        page = int.from_bytes(files.wal[8:12], "big")
        torn = files.wal[: len(files.wal) - page // 2]  # the last frame half written: not committed
        cut = {s.session_id: s.events for s in stored_sessions(files.data, torn).sessions}
        assert sum(cut.values()) == sum(data.count(b"\n") for data in originals.values()) - 1
        salted = bytearray(files.wal)
        salted[16] ^= 0xFF  # a log of another generation (its salt differs): none of it applies
        assert stored_sessions(files.data, bytes(salted)) == without_log
