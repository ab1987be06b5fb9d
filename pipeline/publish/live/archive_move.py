"""`backups --move-to-archive`: backups beside the sessions moved into the backup directory.

Each backup is decoded and checked against the digest recorded when it was made (when there is
one), then written into the session's archive folder the way an in-place run writes a backup
(temporary file, fsync, read back and compared with the decoded original, claimed under a
numbered name that never replaces another, directory fsynced), recorded at its new path (the
session's reference follows it), and only then removed beside the session. A run killed at any
point leaves the backup beside the session, in the archive, or both: never neither. A later
move finds the copy already in the archive (same decoded bytes) and only removes the old one.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipeline.publish.live.backups import (
    Backup,
    BackupOptions,
    BackupUnreadable,
    backup_subdirectory,
    parse_backup_name,
    read_backup,
    verify_existing,
    write_backup,
)
from pipeline.publish.live.faults import NO_FAULTS
from pipeline.publish.live.fsops import Directory, Operations, open_directory
from pipeline.publish.live.recovery import sweep_backup_temporaries
from pipeline.publish.live.state_db import StateDb

__all__ = ["BesideBackup", "Moved", "move_to_archive"]

_TOKEN_HEX = 12  # a temporary name's random part, as the transaction's


@dataclass(frozen=True, slots=True)
class BesideBackup:
    """A backup file found beside its session, with the session's place under its root."""

    path: Path
    session: Path  # the session file it backs up (resolved directory, own name)
    root_label: str
    label: str  # the session's label under its root


@dataclass(frozen=True, slots=True)
class Moved:
    """One backup moved (`archived` set) or left where it was (`reason` says why)."""

    source: Path
    archived: Path | None
    stored_bytes: int  # of the source file
    archived_bytes: int  # of the archive's copy (0 when not moved)
    reason: str | None


def _recorded(state: StateDb, found: BesideBackup) -> tuple[str | None, datetime]:
    """The digest recorded for a backup (None: unrecorded) and the date it was made."""
    for row in state.backups(found.session):
        if row.path == found.path:
            return row.sha256, row.created_at
    return None, datetime.fromtimestamp(found.path.stat().st_mtime, tz=UTC)


def _in_archive(directory: Directory, session_name: str, original: bytes, digest: str) -> Backup | None:
    """A verified copy of the same bytes already in the archive folder (a move killed after it)."""
    for name in sorted(os.listdir(directory.fd)):
        parsed = parse_backup_name(name)
        if parsed is not None and parsed[0] == session_name and not name.startswith("."):
            existing = verify_existing(directory.child(name), original, digest)
            if existing is not None:
                return existing
    return None


def _archived(found: BesideBackup, options: BackupOptions, original: bytes, digest: str) -> Backup:
    assert options.directory is not None
    folder = options.directory / backup_subdirectory(found.root_label, found.label)
    sweep_backup_temporaries(folder)  # a killed move's partial copy (we hold the run lock)
    directory = open_directory(folder, create=True)
    try:
        existing = _in_archive(directory, found.session.name, original, digest)
        if existing is not None:
            return existing
        token = uuid.uuid4().hex[:_TOKEN_HEX]
        status = found.path.stat()
        return write_backup(
            Operations(NO_FAULTS),
            directory,
            found.session.name,
            original,
            digest,
            options,
            token,
            status,
            sync_directory=True,
        )
    finally:
        directory.close()


def _remove(path: Path) -> None:
    os.unlink(path)
    descriptor = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _move_one(state: StateDb, found: BesideBackup, options: BackupOptions) -> Moved:
    stored = found.path.stat().st_size
    try:
        expected, created = _recorded(state, found)
        original = read_backup(found.path)
    except (OSError, BackupUnreadable):
        return Moved(found.path, None, stored, 0, "backup-unreadable")
    digest = hashlib.sha256(original).hexdigest()
    if expected is not None and digest != expected:
        return Moved(found.path, None, stored, 0, "backup-digest-mismatch")
    try:
        archived = _archived(found, options, original, digest)
        state.move_backup(found.path, archived, found.session, created)
        _remove(found.path)
    except (OSError, BackupUnreadable) as exc:
        return Moved(found.path, None, stored, 0, f"archive-failed:{type(exc).__name__}")
    return Moved(found.path, archived.path, stored, archived.stored_size, None)


def move_to_archive(
    state: StateDb, found: Iterable[BesideBackup], options: BackupOptions
) -> tuple[Moved, ...]:
    """Move every backup found beside its session into the archive (one failure stops no other)."""
    return tuple(_move_one(state, backup, options) for backup in found)
