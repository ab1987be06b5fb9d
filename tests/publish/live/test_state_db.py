"""The state database: one run at a time, WAL mode, private files, rows that round-trip."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.live_vocabulary import StateSync
from pipeline.publish.live.fingerprint import Fingerprint, Intent
from pipeline.publish.live.state_db import (
    RecordedResult,
    SessionRecord,
    StateLocked,
    StateOptions,
    open_state,
)


def state_options(directory: Path) -> StateOptions:
    return StateOptions(directory, 5.0, StateSync.NORMAL)


def test_a_second_run_on_the_same_state_dir_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    with open_state(state_options(tmp_path / "state")):
        other = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; from pipeline.publish.live.state_db import *\n"
                "from pipeline.live_vocabulary import StateSync\n"
                "try:\n"
                f"    open_state(StateOptions(Path({str(tmp_path / 'state')!r}), 5.0, StateSync.NORMAL)).__enter__()\n"
                "except StateLocked as exc:\n"
                "    print(exc); sys.exit(7)\n",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert other.returncode == 7, other.stderr
        assert "another compaction run is using the state directory" in other.stdout
        assert "pid " in other.stdout and "never interleave" in other.stdout
        with pytest.raises(StateLocked), open_state(state_options(tmp_path / "state")):
            pass  # a second open in the same process is refused too
    with open_state(state_options(tmp_path / "state")):
        pass  # released when the first run ends


def test_the_database_is_private_in_wal_mode_and_rows_round_trip(tmp_path: Path) -> None:
    fingerprint = Fingerprint(10, 1, 2, 3, 4)
    record = SessionRecord(
        "/s/a.jsonl",
        RecordedResult.COMPACTED,
        "committed",
        "cfg",
        "a" * 64,
        fingerprint,
        "b" * 64,
        None,
        "/s/a.jsonl.backup",
    )
    intent = Intent(
        Path("/s/a.jsonl"),
        Path("/s/.a.stage"),
        Path("/s/.a.capture"),
        Path("/s/a.jsonl.backup"),
        "a" * 64,
        10,
        "b" * 64,
        5,
    )
    with open_state(state_options(tmp_path / "state")) as state:
        state.begin_intent(intent)
        assert state.intents() == [intent]
        state.save(record, datetime.now(UTC))
        assert state.intents() == []  # a saved result ends its intent
        assert state.record(Path("/s/a.jsonl")) == record
    database = tmp_path / "state" / "state.sqlite3"
    assert database.stat().st_mode & 0o077 == 0
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
