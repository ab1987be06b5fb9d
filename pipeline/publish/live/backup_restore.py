"""Undo: put a verified backup back through the same transaction, and list the backups there are.

`restore_session` first checks that the live file is the output we published (the state
database's record of the session) unless forced, then decodes the backup, checks it against the
digest recorded when it was made, and replaces the live file with it through `replace_session`:
the compacted file gets a numbered backup of its own, and the published bytes must hash to the
original's digest. `restorable_since` picks every session whose current output replaced a backup
made at or after a date; `list_backups` shows recorded and on-disk backups with sizes and dates.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipeline.live_vocabulary import RestoreRefusal
from pipeline.publish.live.backups import BackupUnreadable, parse_backup_name, read_backup, scan_backups
from pipeline.publish.live.faults import NO_FAULTS, FaultSeam
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.replacement import OpenCheck
from pipeline.publish.live.source import FrozenSource, SessionTarget, SourceRefused, freeze_source
from pipeline.publish.live.state_db import RecordedResult, SessionRecord, StateDb
from pipeline.publish.live.transaction import ReplaceOptions, replace_session

__all__ = [
    "BackupListing",
    "RestoreOptions",
    "RestoreOutcome",
    "beside_earlier_backups",
    "list_backups",
    "restorable_since",
    "restore_session",
]

_OURS = frozenset({RecordedResult.COMPACTED, RecordedResult.REPAIRED})
_RESTORABLE = _OURS | {RecordedResult.RESTORED}  # restore's output is ours too: its undo needs no force
# Claude Code writes the session id on every message record; two files that share none are two
# sessions (a compaction keeps the current id, so a session and its backups always share one).
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
RESTORED_DIFFERS = "restored-bytes-differ-from-backup-digest"


@dataclass(frozen=True, slots=True)
class RestoreOptions:
    """How restores run."""

    replace: ReplaceOptions
    force: bool  # restore even when the live file is not the output we published


@dataclass(frozen=True, slots=True)
class RestoreOutcome:
    """One restore: refused before starting, or the transaction's receipt."""

    target: SessionTarget
    backup: Path | None
    refusal: RestoreRefusal | None
    receipt: Receipt | None
    pruned_on: datetime | None = None  # BACKUP_PRUNED: when the retention removed the backup

    @property
    def restored(self) -> bool:
        """Whether the original is back at the live path."""
        return self.receipt is not None and self.receipt.committed

    @property
    def settled(self) -> bool:
        """Whether the session ends as asked: restored now, or already before."""
        return self.restored or self.refusal is RestoreRefusal.ALREADY_RESTORED


@dataclass(frozen=True, slots=True)
class BackupListing:
    """One backup, for `compaction backups`."""

    path: Path
    session: Path | None  # the session it is a backup of, when recorded
    stored_bytes: int
    original_bytes: int | None
    created: datetime
    compression: str
    sha256: str | None  # of the original bytes, when recorded
    recorded: bool  # known to the state database (else found on disk only)


def _live_path(target: SessionTarget) -> Path:
    return Path(os.path.realpath(target.path.parent)) / target.path.name


def _expected_digest(state: StateDb, session: Path, backup: Path, record: SessionRecord | None) -> str | None:
    for row in state.backups(session):
        if row.path == backup:
            return row.sha256
    if record is not None and record.backup_path == str(backup):
        return record.source_sha256
    return None


def _session_ids(data: bytes) -> frozenset[bytes]:
    return frozenset(match[1] for match in _SESSION_ID.finditer(data))


def _of_another_session(
    state: StateDb, session: Path, backup: Path, digest: str, contents: tuple[bytes, bytes]
) -> bool:
    """Whether the backup is recorded, named or identified as another session's.

    Recorded: the state knows it as a backup of another path, or knows its digest as another
    session's original and never as this one's. Named: its file name is another session file's
    backup name. Identified: it and the live file share no session id.
    """
    rows = state.backups()
    if any(row.path == backup and row.session_path != session for row in rows):
        return True
    own = {row.sha256 for row in rows if row.session_path == session}
    if digest not in own and any(row.sha256 == digest and row.session_path != session for row in rows):
        return True
    parsed = parse_backup_name(backup.name)
    if parsed is not None and parsed[0] != session.name:
        return True
    live, kept = (_session_ids(data) for data in contents)
    return bool(live) and bool(kept) and not live & kept


def _checked(
    state: StateDb,
    session: Path,
    record: SessionRecord | None,
    frozen: FrozenSource,
    chosen: Path | None,
    *,
    given: bool,
    force: bool,
) -> RestoreRefusal | tuple[bytes, str]:
    """The backup's original bytes and digest, or why they must not go back (in the order a user
    needs to hear it: another session's bytes are refused whatever `force` says)."""
    if not given and record is not None and record.result is RecordedResult.RESTORED:
        return RestoreRefusal.ALREADY_RESTORED
    if chosen is None:
        return RestoreRefusal.NO_BACKUP
    try:
        original = read_backup(chosen)
    except (OSError, BackupUnreadable):
        return RestoreRefusal.BACKUP_UNREADABLE
    digest = hashlib.sha256(original).hexdigest()
    refusal = _refusal(state, session, record, frozen, (chosen, original, digest), given=given, force=force)
    return refusal or (original, digest)


def _refusal(
    state: StateDb,
    session: Path,
    record: SessionRecord | None,
    frozen: FrozenSource,
    backup: tuple[Path, bytes, str],
    *,
    given: bool,
    force: bool,
) -> RestoreRefusal | None:
    chosen, original, digest = backup
    if given and _of_another_session(state, session, chosen, digest, (frozen.data, original)):
        return RestoreRefusal.OTHER_SESSION
    if digest == frozen.sha256:
        return RestoreRefusal.ALREADY_RESTORED
    ours = record is not None and record.result in _RESTORABLE and record.output_sha256 == frozen.sha256
    if not ours and not force:
        return RestoreRefusal.NOT_OUR_OUTPUT
    expected = _expected_digest(state, session, chosen, record)
    return RestoreRefusal.BACKUP_MISMATCH if expected is not None and digest != expected else None


def restore_session(
    target: SessionTarget,
    state: StateDb,
    options: RestoreOptions,
    *,
    backup: Path | None = None,
    open_check: OpenCheck | None = None,
    seam: FaultSeam = NO_FAULTS,
) -> RestoreOutcome:
    """Put a backup back at a session's path (by default the one its current output replaced)."""
    session = _live_path(target)
    record = state.record(session)
    chosen = backup or (Path(record.backup_path) if record and record.backup_path else None)
    try:
        frozen = freeze_source(target)
    except SourceRefused:
        return RestoreOutcome(target, chosen, RestoreRefusal.UNSAFE_TARGET, None)
    restored = backup is None and record is not None and record.result is RecordedResult.RESTORED
    pruned = state.pruned_on(chosen) if chosen is not None and not restored and not chosen.exists() else None
    if pruned is not None:  # said with its date, rather than as if there never was a backup
        return RestoreOutcome(target, chosen, RestoreRefusal.BACKUP_PRUNED, None, pruned)
    checked = _checked(state, session, record, frozen, chosen, given=backup is not None, force=options.force)
    if isinstance(checked, RestoreRefusal):
        return RestoreOutcome(target, chosen, checked, None)
    original, digest = checked

    def exact(data: bytes) -> tuple[str, ...]:
        return () if hashlib.sha256(data).hexdigest() == digest else (RESTORED_DIFFERS,)

    receipt = replace_session(
        frozen, original, exact, options.replace, journal=state.begin_intent, open_check=open_check, seam=seam
    )
    _record(state, session, record, frozen, receipt, digest)
    return RestoreOutcome(target, chosen, None, receipt)


def _record(
    state: StateDb,
    session: Path,
    before: SessionRecord | None,
    frozen: FrozenSource,
    receipt: Receipt,
    digest: str,
) -> None:
    """Remember the new backup (of the compacted file) and, once committed, the restored output."""
    now = datetime.now(UTC)
    if receipt.backup is not None and not receipt.backup.reused:
        state.add_backup(receipt.backup, session, now)
    if not receipt.committed:
        state.clear_intent(session)
        return
    # Undoing a restore puts our output back: recorded as compacted again, so a later restore
    # brings back the original (now in the backup this transaction just made).
    undone = before is not None and before.result is RecordedResult.RESTORED
    result = RecordedResult.COMPACTED if undone else RecordedResult.RESTORED
    restored = SessionRecord(
        path=str(session),
        result=result,
        status=result.value,
        config_digest=before.config_digest if before else "",
        source_sha256=frozen.sha256,
        source=frozen.fingerprint,
        output_sha256=digest,
        output=receipt.published,
        backup_path=str(receipt.backup.path) if receipt.backup else None,
    )
    state.save(restored, now)


def beside_earlier_backups(target: SessionTarget, state: StateDb, directory: Path | None) -> SessionTarget:
    """A session named by its path alone, labelled so the backup its restore makes joins the session's
    earlier backups in the archive (or backup directory) rather than a folder named after its parent."""
    record = state.record(_live_path(target))
    if directory is None or record is None or not record.backup_path:
        return target
    folder = Path(record.backup_path).parent
    if folder != directory and directory not in folder.parents:
        return target
    return dataclasses.replace(target, root_label=folder.relative_to(directory).as_posix())


def restorable_since(
    state: StateDb, since: datetime, roots: Sequence[tuple[Path, str]]
) -> list[tuple[SessionTarget, Path]]:
    """Sessions whose current output replaced a backup made at or after `since`, with that backup.

    `roots` are (root, root label) pairs; a recorded session outside every root is left out, so
    a restore never reaches beyond what the user named.
    """
    chosen: list[tuple[SessionTarget, Path]] = []
    made = {row.path: row for row in state.backups(since=since)}
    for backup_path, row in sorted(made.items()):
        record = state.record(row.session_path)
        if record is None or record.result not in _OURS or record.backup_path != str(backup_path):
            continue
        target = _target_under(row.session_path, roots)
        if target is not None:
            chosen.append((target, backup_path))
    return chosen


def _target_under(session: Path, roots: Sequence[tuple[Path, str]]) -> SessionTarget | None:
    for root, label in roots:
        resolved = Path(os.path.realpath(root))
        if resolved in session.parents:
            return SessionTarget(session, resolved, label, session.relative_to(resolved).as_posix())
    return None


def list_backups(state: StateDb | None, directories: Iterable[Path]) -> tuple[BackupListing, ...]:
    """Every recorded backup still on disk, and every backup-named file found under `directories`."""
    listed: dict[Path, BackupListing] = {}
    for row in state.backups() if state is not None else ():
        if row.path.is_file():
            listed[row.path] = BackupListing(
                row.path,
                row.session_path,
                row.path.stat().st_size,
                row.size,
                row.created_at,
                row.compression,
                row.sha256,
                True,
            )
    for directory in directories:  # resolved: a relative root must not list a recorded backup twice
        for found in scan_backups(directory.resolve()):
            if found.path not in listed:
                listed[found.path] = BackupListing(
                    found.path,
                    None,
                    found.stored_size,
                    None,
                    found.modified,
                    found.compression.value,
                    None,
                    False,
                )
    return tuple(sorted(listed.values(), key=lambda entry: (entry.created, str(entry.path))))
