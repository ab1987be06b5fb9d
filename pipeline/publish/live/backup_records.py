"""The state database's records of backups: every backup we made, where it lives, and every
backup the retention pruned (so a restore can say when it went rather than that there was none).

`BackupRows` holds the queries of the `backups` and `pruned` tables; `StateDb` is one of them,
and every query runs under its guard, alone, as its own do.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pipeline.publish.live.backups import Backup

__all__ = ["BackupRecord", "BackupRows"]


@dataclass(frozen=True, slots=True)
class BackupRecord:
    """A backup we made, as recorded."""

    path: Path
    session_path: Path
    sha256: str
    size: int
    stored_size: int
    compression: str
    created_at: datetime


class BackupRows:
    """The backup tables' queries, for a class that holds the connection and its guard."""

    _db: sqlite3.Connection
    _guard: AbstractContextManager[bool]

    def add_backup(self, backup: Backup, session: Path, at: datetime) -> None:
        """Remember a backup (reused backups are already known); a name a pruned backup had is free
        again, so it stops being pruned."""
        with self._guard, self._db:
            self._db.execute("DELETE FROM pruned WHERE path = ?", (str(backup.path),))
            self._db.execute(
                "INSERT OR IGNORE INTO backups VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    str(backup.path),
                    str(session),
                    backup.sha256,
                    backup.size,
                    backup.stored_size,
                    backup.compression.value,
                    at.isoformat(),
                ),
            )

    def backups(self, session: Path | None = None, since: datetime | None = None) -> list[BackupRecord]:
        """Recorded backups, oldest first, of one session or all, created at or after `since`."""
        with self._guard:
            clauses, values = [], []
            if session is not None:  # by the (session_path, created_at) index, not a scan
                clauses.append("session_path = ?")
                values.append(str(session))
            if since is not None:
                clauses.append("created_at >= ?")
                values.append(since.isoformat())
            where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
            rows = self._db.execute(
                f"SELECT * FROM backups{where} ORDER BY created_at, path", values
            ).fetchall()
            return [
                BackupRecord(Path(r[0]), Path(r[1]), r[2], r[3], r[4], r[5], datetime.fromisoformat(r[6]))
                for r in rows
            ]

    def record_pruned(self, backup: BackupRecord, at: datetime) -> None:
        """A backup the retention removed: out of `backups`, into `pruned`, in one transaction."""
        with self._guard, self._db:
            self._db.execute("DELETE FROM backups WHERE path = ?", (str(backup.path),))
            self._db.execute(
                "INSERT OR REPLACE INTO pruned VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    str(backup.path),
                    str(backup.session_path),
                    backup.sha256,
                    backup.size,
                    backup.stored_size,
                    backup.created_at.isoformat(),
                    at.isoformat(),
                ),
            )

    def pruned(self) -> list[tuple[Path, str]]:
        """Every pruned backup's path and original digest."""
        with self._guard:
            if not self._has_table("pruned"):
                return []
            rows = self._db.execute("SELECT path, sha256 FROM pruned ORDER BY path").fetchall()
            return [(Path(row[0]), str(row[1])) for row in rows]

    def pruned_on(self, path: Path) -> datetime | None:
        """When the retention removed a backup (None: never, as far as this database knows)."""
        with self._guard:
            if not self._has_table("pruned"):  # a database of an earlier version, read without writing
                return None
            row = self._db.execute("SELECT pruned_at FROM pruned WHERE path = ?", (str(path),)).fetchone()
            return None if row is None else datetime.fromisoformat(row[0])

    def _has_table(self, name: str) -> bool:
        with self._guard:
            return bool(self._db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone())
