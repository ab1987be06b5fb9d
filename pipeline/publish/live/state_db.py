"""The state database of in-place runs: what each session was, what we made of it, and a run lock.

SQLite in WAL mode in a configurable state directory. Per session path it records the source's
SHA-256 and fingerprint, the result and the job status behind it, the output's SHA-256 and
fingerprint, the engine/config digest that produced it and the backup the output replaced; it
also records every backup we made and the intent of a replacement in flight, so a run killed
at any point is finished cleanly by the next one, and every backup the retention pruned (so a
restore says when it went rather than that there was none). A record never vouches for bytes by itself:
a skip needs the live file's fingerprint or its hash to match, so a stale row costs a hash,
never a wrong skip.

One run at a time: `open_state` takes an exclusive `flock` on `run.lock`, which the kernel
releases when the holder dies however it dies; a second run is refused with `StateLocked`
naming the holder.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Concatenate, Final, NamedTuple, ParamSpec, TypeVar

from pipeline.errors import CompactionError
from pipeline.live_vocabulary import StateSync
from pipeline.publish.live.backup_records import BackupRecord, BackupRows
from pipeline.publish.live.backups import Backup
from pipeline.publish.live.fingerprint import Fingerprint, Intent

__all__ = [
    "BackupRecord",
    "RecordedResult",
    "SessionRecord",
    "StateDb",
    "StateLocked",
    "StateOptions",
    "StateUnusable",
    "open_state",
    "read_state",
]

P = ParamSpec("P")
T = TypeVar("T")
SCHEMA_VERSION: Final = 1
DATABASE_NAME: Final = "state.sqlite3"
LOCK_NAME: Final = "run.lock"
_PID_WIDTH: Final = 10  # digits of the largest pid a kernel hands out (pid_max is at most 2**22)
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  path TEXT PRIMARY KEY, result TEXT NOT NULL, status TEXT NOT NULL, config_digest TEXT NOT NULL,
  source_sha256 TEXT NOT NULL, source_size INTEGER NOT NULL, source_mtime_ns INTEGER NOT NULL,
  source_ctime_ns INTEGER NOT NULL, source_inode INTEGER NOT NULL, source_device INTEGER NOT NULL,
  output_sha256 TEXT, output_size INTEGER, output_mtime_ns INTEGER, output_ctime_ns INTEGER,
  output_inode INTEGER, output_device INTEGER, backup_path TEXT, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS backups (
  path TEXT PRIMARY KEY, session_path TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
  stored_size INTEGER NOT NULL, compression TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS backups_by_session ON backups (session_path, created_at);
CREATE TABLE IF NOT EXISTS pruned (
  path TEXT PRIMARY KEY, session_path TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
  stored_size INTEGER NOT NULL, created_at TEXT NOT NULL, pruned_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS intents (
  session_path TEXT PRIMARY KEY, stage_path TEXT NOT NULL, capture_path TEXT NOT NULL,
  backup_path TEXT NOT NULL, frozen_sha256 TEXT NOT NULL, frozen_size INTEGER NOT NULL,
  candidate_sha256 TEXT NOT NULL, candidate_size INTEGER NOT NULL);
"""


class StateLocked(CompactionError):
    """Another run holds the state directory's lock."""

    def __init__(self, directory: Path, holder: str) -> None:
        self.directory = directory
        self.holder = holder
        super().__init__(
            f"another compaction run is using the state directory {directory} "
            f"({holder or 'holder unknown'}); runs on one state directory never interleave: "
            "wait for it to finish or choose another state directory"
        )


class StateUnusable(CompactionError):
    """The state database cannot be opened or has a schema this version does not know."""

    def __init__(self, directory: Path, reason: str) -> None:
        self.directory = directory
        self.reason = reason
        super().__init__(f"state database in {directory} is unusable: {reason}")


class RecordedResult(StrEnum):
    """What the last run did with a session."""

    COMPACTED = "compacted"  # we published the output recorded beside it
    REPAIRED = "repaired"  # the Read.pages repair published the output recorded beside it
    RESTORED = "restored"  # a backup was put back; the output is the restored original
    DECLINED = "declined"  # the job gave a final no (skipped-small, skipped-fits, refused...)


@dataclass(frozen=True, slots=True)
class StateOptions:
    """Where the state lives and how hard SQLite tries."""

    directory: Path
    busy_timeout_seconds: float
    synchronous: StateSync  # SQLite's `synchronous` in WAL mode


class SessionRecord(NamedTuple):
    """One session's row (a named tuple: a fleet's rows are all read at the start of every run)."""

    path: str
    result: RecordedResult
    status: str  # the job's own status value behind the result
    config_digest: str
    source_sha256: str
    source: Fingerprint
    output_sha256: str | None
    output: Fingerprint | None
    backup_path: str | None


def _columns(fingerprint: Fingerprint | None) -> tuple[int | None, ...]:
    if fingerprint is None:
        return (None,) * 5
    return (
        fingerprint.size,
        fingerprint.mtime_ns,
        fingerprint.ctime_ns,
        fingerprint.inode,
        fingerprint.device,
    )


_RESULTS: Final = {result.value: result for result in RecordedResult}  # a dict look-up, not an enum call


def _session_record(row: tuple[Any, ...]) -> SessionRecord:
    # Positional on purpose: a fleet's rows are all read at the start of every run.
    output = Fingerprint(row[11], row[12], row[13], row[14], row[15]) if row[11] is not None else None
    return SessionRecord(
        row[0],
        _RESULTS[row[1]],
        row[2],
        row[3],
        row[4],
        Fingerprint(row[5], row[6], row[7], row[8], row[9]),
        row[10],
        output,
        row[16],
    )


def _serialized(method: Callable[Concatenate[StateDb, P], T]) -> Callable[Concatenate[StateDb, P], T]:
    """One call at a time on the connection: an in-place run's threads share it."""

    def call(self: StateDb, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._guard:
            return method(self, *args, **kwargs)

    call.__name__, call.__doc__ = method.__name__, method.__doc__
    return call


class StateDb(BackupRows):
    """The open database of one run (its run lock held for as long as it is open).

    Its methods may be called from several threads of the run: each runs alone, so a transaction
    of SQLite never interleaves with another thread's.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._guard = threading.RLock()
        self._rows: dict[str, SessionRecord] | None = None  # every row, once `preload` ran

    @_serialized
    def preload(self) -> None:
        """Read every session row at once, so a run over a fleet asks SQLite once, not per file."""
        rows = self._db.execute("SELECT * FROM sessions").fetchall()
        self._rows = {row[0]: _session_record(row) for row in rows}

    @_serialized
    def record(self, path: Path | str) -> SessionRecord | None:
        """The row of one session path, if any."""
        if self._rows is not None:
            return self._rows.get(os.fspath(path))
        row = self._db.execute("SELECT * FROM sessions WHERE path = ?", (str(path),)).fetchone()
        return None if row is None else _session_record(row)

    @_serialized
    def recorded_at(self, path: Path | str) -> str:
        """When a session's row was written (ISO date-time; empty without one): a persistent
        refusal is dated by it."""
        row = self._db.execute("SELECT updated_at FROM sessions WHERE path = ?", (str(path),)).fetchone()
        return str(row[0]) if row else ""

    @_serialized
    def save(self, record: SessionRecord, at: datetime) -> None:
        """Upsert a session's row and drop its intent, in one transaction."""
        values = (
            record.path,
            record.result.value,
            record.status,
            record.config_digest,
            record.source_sha256,
            *_columns(record.source),
            record.output_sha256,
            *_columns(record.output),
            record.backup_path,
            at.isoformat(),
        )
        with self._db:
            self._db.execute(
                f"INSERT OR REPLACE INTO sessions VALUES ({', '.join('?' * len(values))})", values
            )
            self._db.execute("DELETE FROM intents WHERE session_path = ?", (record.path,))
        if self._rows is not None:
            self._rows[record.path] = record

    @_serialized
    def move_backup(self, old: Path, new: Backup, session: Path, created: datetime) -> None:
        """A backup now lives at `new.path` (moved into the archive): its row and the session's
        reference follow it in one transaction; an unrecorded one is recorded with its file's date."""
        with self._db:
            self._db.execute("DELETE FROM backups WHERE path = ?", (str(old),))
            self._db.execute(
                "INSERT OR REPLACE INTO backups VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    str(new.path),
                    str(session),
                    new.sha256,
                    new.size,
                    new.stored_size,
                    new.compression.value,
                    created.isoformat(),
                ),
            )
            self._db.execute(
                "UPDATE sessions SET backup_path = ? WHERE backup_path = ?", (str(new.path), str(old))
            )
        if self._rows is not None:
            self._rows = None  # re-read on the next `preload`; these commands read rows one by one

    @_serialized
    def begin_intent(self, intent: Intent) -> None:
        """The transaction's journal: durable before its first write in the session directory."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO intents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(intent.session),
                    str(intent.stage),
                    str(intent.capture),
                    str(intent.backup),
                    intent.frozen_sha256,
                    intent.frozen_size,
                    intent.candidate_sha256,
                    intent.candidate_size,
                ),
            )

    @_serialized
    def intents(self) -> list[Intent]:
        """Replacements a previous run began and did not record as finished."""
        rows = self._db.execute("SELECT * FROM intents ORDER BY session_path").fetchall()
        return [Intent(Path(r[0]), Path(r[1]), Path(r[2]), Path(r[3]), r[4], r[5], r[6], r[7]) for r in rows]

    @_serialized
    def clear_intent(self, session: Path) -> None:
        """Drop one intent (recovery found out what happened)."""
        with self._db:
            self._db.execute("DELETE FROM intents WHERE session_path = ?", (str(session),))


def _lock(directory: Path) -> int:
    descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(descriptor, 200, 0).decode("utf-8", "replace").strip()
        os.close(descriptor)
        raise StateLocked(directory, holder) from None
    mine = f"pid {os.getpid():<{_PID_WIDTH}}".encode()  # one width: no truncate (a journal write) per run
    if os.fstat(descriptor).st_size != len(mine):
        os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, mine, 0)
    return descriptor


def _schema_version(connection: sqlite3.Connection) -> str | None:
    if not connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
        return None
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return None if row is None else str(row[0])


def _connect(directory: Path, options: StateOptions) -> sqlite3.Connection:
    database = directory / DATABASE_NAME
    if not database.exists():  # private from the first byte: it names every session and backup
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT, 0o600))
    try:
        # One run uses its connection from one thread at a time (the in-place loop serializes every
        # step that touches the state), not always the thread that opened it.
        connection = sqlite3.connect(database, timeout=options.busy_timeout_seconds, check_same_thread=False)
        connection.execute(f"PRAGMA synchronous={options.synchronous.upper()}")
        version = _schema_version(connection)
        if version is None:  # a new database: WAL (the mode persists in the file), then the schema
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(_SCHEMA)
            with connection:
                connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            version = _schema_version(connection)
        elif version == str(SCHEMA_VERSION):  # tables added since (`pruned`) join an older database
            connection.executescript(_SCHEMA)
    except sqlite3.Error as exc:
        raise StateUnusable(directory, type(exc).__name__) from exc
    if version != str(SCHEMA_VERSION):
        connection.close()
        raise StateUnusable(directory, f"schema {version}, this version reads {SCHEMA_VERSION}")
    return connection


@contextmanager
def open_state(options: StateOptions) -> Iterator[StateDb]:
    """Lock the state directory for one run and open its database (created on first use)."""
    directory = options.directory.expanduser()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = _lock(directory)
    try:
        connection = _connect(directory, options)
        try:
            yield StateDb(connection)
        finally:
            connection.close()
    finally:
        os.close(lock)  # closing the descriptor releases the flock


@contextmanager
def read_state(options: StateOptions) -> Iterator[StateDb | None]:
    """The database read-only, without the run lock (listing backups while a run goes on); None
    when there is none yet. SQLite's WAL lets a reader see the last commit while a writer works."""
    database = options.directory.expanduser() / DATABASE_NAME
    if not database.is_file():
        yield None
        return
    try:
        connection = sqlite3.connect(
            f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=options.busy_timeout_seconds
        )
        version = _schema_version(connection)
    except sqlite3.Error as exc:
        raise StateUnusable(options.directory, type(exc).__name__) from exc
    try:
        if version != str(SCHEMA_VERSION):
            raise StateUnusable(options.directory, f"schema {version}, this version reads {SCHEMA_VERSION}")
        yield StateDb(connection)
    finally:
        connection.close()
