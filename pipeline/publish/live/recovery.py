"""Finish what a killed run left: every intent in the state database, decided from what is on disk.

A replacement records its intent (the names it will create, the frozen and candidate digests,
the verified backup) before its first write in the session's directory. After a crash, the live
path holds the original, the candidate, or a file another process wrote; the names of the
intent hold our (partial) candidate, a displaced original, or data someone wrote into either.
Recovery puts a missing live file back, removes what is provably ours or provably kept by a
verified backup, gives anything else a numbered backup name, and says what it found. A committed
intent is recorded as the output it is (`recover`). The link strategy leaves a session's path
empty for a moment: a run killed then leaves the session where that next run's discovery could
not see it, so the sessions recovery puts back under the scanned roots are added to its targets
(`with_put_back`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pipeline.live_vocabulary import BackupCompression, RecoveredState
from pipeline.publish.live.backups import (
    MAX_BACKUP_NUMBER,
    Backup,
    backup_name,
    parse_backup_name,
    read_backup,
)
from pipeline.publish.live.fingerprint import Fingerprint, Intent, fingerprint_of
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import RecordedResult, SessionRecord, StateDb

__all__ = [
    "Recovered",
    "recover",
    "recover_intent",
    "sweep_backup_temporaries",
    "with_put_back",
]

_SUFFIXES: Final = (".stage", ".capture", ".retired")  # the names a replacement creates beside the file
_BACKUP_TEMPORARY: Final = ".backup-tmp"


@dataclass(frozen=True, slots=True)
class Recovered:
    """The outcome of recovering one intent."""

    intent: Intent
    state: RecoveredState
    live: Fingerprint | None  # the live file's fingerprint after recovery
    removed: tuple[Path, ...]
    preserved: tuple[Path, ...]


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _backup_holds(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(read_backup(path)).hexdigest() == sha256
    except Exception:  # missing, unreadable or corrupt: it does not hold the original
        return False


def _names(intent: Intent) -> list[Path]:
    base = str(intent.stage).removesuffix(".stage")
    return [Path(base + suffix) for suffix in _SUFFIXES]


def _put_back(intent: Intent) -> bool:
    """A missing live file: the moved-aside copy goes back (the capture first: the original)."""
    for leftover in _names(intent)[1:]:
        if leftover.is_file() and not leftover.is_symlink():
            try:
                os.link(leftover, intent.session, follow_symlinks=False)
            except FileExistsError:
                return True
            except OSError:
                continue
            return True
    return False


def _disposable(path: Path, intent: Intent, backup_ok: bool, live_state: RecoveredState) -> bool:
    """Ours to delete: the candidate, a partial candidate, or the original a backup holds."""
    size = path.stat().st_size
    digest = _sha256(path)
    if digest == intent.candidate_sha256 or (digest == intent.frozen_sha256 and backup_ok):
        return True
    # Before publication a stage only ever held a prefix of the candidate; after it, data
    # derived from the original is at least as long as the original.
    partial = size < intent.candidate_size and size < intent.frozen_size
    return partial and live_state is not RecoveredState.COMMITTED


def _preserve(path: Path, session: Path) -> Path | None:
    for number in range(MAX_BACKUP_NUMBER + 1):
        if any((session.parent / backup_name(session.name, number, c)).exists() for c in BackupCompression):
            continue
        kept = session.parent / backup_name(session.name, number, BackupCompression.NONE)
        try:
            os.link(path, kept, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError:
            return None
        path.unlink()
        return kept
    return None


def recover_intent(intent: Intent) -> Recovered:
    """Decide and tidy one interrupted replacement; never deletes data it cannot account for."""
    if not intent.session.exists() and not _put_back(intent):
        state = RecoveredState.MISSING
    else:
        digest = _sha256(intent.session)
        state = {
            intent.candidate_sha256: RecoveredState.COMMITTED,
            intent.frozen_sha256: RecoveredState.NOT_COMMITTED,
        }.get(digest or "", RecoveredState.CHANGED)
    backup_ok = _backup_holds(intent.backup, intent.frozen_sha256)
    removed: list[Path] = []
    preserved: list[Path] = []
    for path in _names(intent):
        if not path.is_file() or path.is_symlink():
            continue
        if _disposable(path, intent, backup_ok, state):
            path.unlink()
            removed.append(path)
        elif (kept := _preserve(path, intent.session)) is not None:
            preserved.append(kept)
    status = intent.session.stat() if intent.session.exists() else None
    live = fingerprint_of(status) if status is not None else None
    return Recovered(intent, state, live, tuple(removed), tuple(preserved))


def sweep_backup_temporaries(directory: Path) -> tuple[Path, ...]:
    """Remove backup temporaries a killed run left in a directory.

    They are never numbered backups (those are separate, claimed names): only a partial copy or
    a second link to a backup that has its own numbered name.
    """
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return ()
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and ".compaction-" in name and name.endswith(_BACKUP_TEMPORARY)):
            continue
        if parse_backup_name(name) is None and entry.is_file(follow_symlinks=False):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return tuple(removed)


def _verified_backup(intent: Intent) -> Backup | None:
    """The intent's backup, when it holds the frozen original (what `restore` may put back)."""
    parsed = parse_backup_name(intent.backup.name)
    if parsed is None or not _backup_holds(intent.backup, intent.frozen_sha256):
        return None
    stored = intent.backup.stat().st_size
    return Backup(intent.backup, intent.frozen_sha256, intent.frozen_size, stored, parsed[2], reused=False)


def recover(state: StateDb, config_digest: str, result: RecordedResult) -> tuple[Recovered, ...]:
    """Finish every intent an interrupted run left, recording committed ones as `result`.

    The run records a new backup only after its replacement returns, so a kill in between left
    a verified backup the database does not know: `restore --all-since` (which lists recorded
    backups) would then leave that session compacted. Recovery records it first.
    """
    done = []
    for intent in state.intents():
        backup = _verified_backup(intent)
        if backup is not None:  # INSERT OR IGNORE: a backup already recorded keeps its date
            state.add_backup(backup, intent.session, datetime.now(UTC))
        found = recover_intent(intent)
        if found.state is RecoveredState.COMMITTED and found.live is not None:
            record = SessionRecord(
                path=str(intent.session),
                result=result,
                status="recovered",
                config_digest=config_digest,
                source_sha256=intent.frozen_sha256,
                source=found.live,  # the original's own fingerprint was not recorded
                output_sha256=intent.candidate_sha256,
                output=found.live,
                backup_path=str(intent.backup),
            )
            state.save(record, datetime.now(UTC))
        else:
            state.clear_intent(intent.session)
        done.append(found)
    return tuple(done)


def with_put_back(
    targets: list[SessionTarget], recovered: tuple[Recovered, ...], scanned: Sequence[tuple[Path, str]]
) -> list[SessionTarget]:
    """The targets, plus sessions recovery put back at their path after discovery missed them.

    The link strategy leaves a session's path empty for a moment; a run killed then leaves it
    empty until the next run's recovery puts the original back, after that run's discovery.
    """
    missed = [f for f in recovered if f.state is not RecoveredState.COMMITTED and f.live is not None]
    if not missed:  # the usual case: nothing was put back (no realpath per target)
        return targets
    pairs = {**dict(scanned), **{target.root: target.root_label for target in targets}}
    roots = {root: (os.path.realpath(root), label) for root, label in pairs.items()}
    known = {os.path.join(roots[t.root][0], t.label) for t in targets}
    added = []
    for found in missed:
        session = found.intent.session
        if str(session) in known:
            continue
        for root, (resolved, label) in roots.items():
            if Path(resolved) in session.parents:
                relative = session.relative_to(resolved).as_posix()
                added.append(SessionTarget(session, root, label, relative))
                break
    return [*targets, *added]
