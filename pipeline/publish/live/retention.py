"""Retention: which recorded backups the user's `backup_keep` lets go, and removing them safely.

`plan_prune` is pure: from the recorded backups, the backups a live compaction replaced and the
policy, it says of every backup whether it goes or why it stays. A compacted session's backup
that its current output replaced is the only copy of the history the summary replaced (and so is
the newest backup of a session that changed since its compaction): it stays whatever the policy
says unless `prune_only_copies` is set. A backup a
replacement in flight names (an intent of a killed run) always stays.

`apply_prune` records each removal in the state database before it unlinks the file, so a run
killed between the two leaves a file the database calls pruned; `finish_pruned` (run first by
every prune) removes such leftovers once they still decode to the pruned digest. A backup the
policy keeps is never touched, so a kill at any point loses none of them.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from pipeline.live_vocabulary import RetentionKind
from pipeline.publish.live.backups import BackupUnreadable, read_backup
from pipeline.publish.live.state_db import BackupRecord, RecordedResult, StateDb
from pipeline.settings.typed_sections import Retention

__all__ = [
    "PruneDone",
    "PruneEntry",
    "PrunePlan",
    "PruneVerdict",
    "apply_prune",
    "finish_pruned",
    "plan_prune",
    "protected_backups",
    "prune_under",
]

_COMPACTIONS = frozenset({RecordedResult.COMPACTED, RecordedResult.REPAIRED})


class PruneVerdict(StrEnum):
    """What the retention does with one backup."""

    PRUNE = "prune"
    KEEP = "keep"  # the policy keeps it
    ONLY_COPY = "kept-only-copy"  # the newest backup of a compacted session: its history's only copy
    IN_FLIGHT = "kept-in-flight"  # an unfinished replacement names it


@dataclass(frozen=True, slots=True)
class PruneEntry:
    """One recorded backup and the retention's verdict on it."""

    backup: BackupRecord
    verdict: PruneVerdict


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """The verdict on every recorded backup whose file is still there."""

    policy: Retention
    entries: tuple[PruneEntry, ...]

    def of(self, verdict: PruneVerdict) -> tuple[BackupRecord, ...]:
        """The backups with one verdict."""
        return tuple(entry.backup for entry in self.entries if entry.verdict is verdict)

    @property
    def pruned_bytes(self) -> int:
        """Stored bytes the prune gives back."""
        return sum(backup.stored_size for backup in self.of(PruneVerdict.PRUNE))


@dataclass(frozen=True, slots=True)
class PruneDone:
    """What a prune removed, and the backups it recorded as pruned but could not unlink."""

    removed: tuple[BackupRecord, ...]
    failed: tuple[tuple[Path, str], ...]  # (path, OS error name): left for the next prune to finish

    @property
    def removed_bytes(self) -> int:
        """Stored bytes given back."""
        return sum(backup.stored_size for backup in self.removed)


def protected_backups(state: StateDb, backups: Sequence[BackupRecord]) -> frozenset[Path]:
    """The backups that may be the only copy of a history a compaction summarized.

    A compacted (or repaired) session: the backup its current output replaced. A session a later
    run declined (it changed since its compaction, so its live file still holds that compaction),
    or one the state has no row for: its newest backup. A restored session holds its original
    again: none.
    """
    by_session: dict[Path, list[BackupRecord]] = defaultdict(list)
    for backup in backups:
        by_session[backup.session_path].append(backup)
    chosen = set()
    for session, rows in by_session.items():
        record = state.record(session)
        if record is not None and record.result in _COMPACTIONS:
            if record.backup_path:
                chosen.add(Path(record.backup_path))
        elif record is None or record.result is not RecordedResult.RESTORED:
            chosen.add(max(rows, key=lambda row: (row.created_at, str(row.path))).path)
    return frozenset(chosen)


def _policy_prunes(backups: Sequence[BackupRecord], policy: Retention, now: datetime) -> set[Path]:
    """What the policy alone lets go (before any backup is protected)."""
    if policy.kind is RetentionKind.AGE:
        cutoff = now - timedelta(seconds=policy.age_seconds)
        return {backup.path for backup in backups if backup.created_at < cutoff}
    if policy.kind is RetentionKind.LAST:
        by_session: dict[Path, list[BackupRecord]] = defaultdict(list)
        for backup in backups:
            by_session[backup.session_path].append(backup)
        chosen: set[Path] = set()
        for rows in by_session.values():
            newest_first = sorted(rows, key=lambda row: (row.created_at, str(row.path)), reverse=True)
            chosen.update(row.path for row in newest_first[policy.count :])
        return chosen
    return set()


def plan_prune(
    backups: Sequence[BackupRecord],
    policy: Retention,
    now: datetime,
    *,
    only_copies: frozenset[Path],
    in_flight: frozenset[Path],
    prune_only_copies: bool,
) -> PrunePlan:
    """Every backup's verdict, oldest first (`backups` are the recorded ones still on disk)."""
    prunes = _policy_prunes(backups, policy, now)
    entries = []
    for backup in sorted(backups, key=lambda row: (row.created_at, str(row.path))):
        verdict = PruneVerdict.KEEP
        if backup.path in prunes:
            verdict = PruneVerdict.PRUNE
            if backup.path in only_copies and not prune_only_copies:
                verdict = PruneVerdict.ONLY_COPY
            if backup.path in in_flight:
                verdict = PruneVerdict.IN_FLIGHT
        entries.append(PruneEntry(backup, verdict))
    return PrunePlan(policy, tuple(entries))


def _unlink(path: Path) -> str | None:
    """Remove one backup file (never through a symlink) and make the removal durable; the error's
    name when it could not be removed."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return type(exc).__name__
    try:
        descriptor = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except OSError:
        pass  # removed; a crash may bring the name back, and the next prune finishes it then
    return None


def apply_prune(state: StateDb, plan: PrunePlan, now: datetime) -> PruneDone:
    """Record, then remove, every backup the plan lets go."""
    removed, failed = [], []
    for backup in plan.of(PruneVerdict.PRUNE):
        state.record_pruned(backup, now)
        error = _unlink(backup.path)
        if error is None:
            removed.append(backup)
        else:
            failed.append((backup.path, error))
    return PruneDone(tuple(removed), tuple(failed))


def finish_pruned(state: StateDb, leftovers: Iterable[tuple[Path, str]]) -> int:
    """Remove files the database already calls pruned (a prune killed between its two steps) when
    they still decode to the pruned digest and no newer backup was recorded under the same name."""
    recorded = {backup.path for backup in state.backups()}
    finished = 0
    for path, digest in leftovers:
        if path in recorded or path.is_symlink() or not path.is_file():
            continue
        try:
            same = hashlib.sha256(read_backup(path)).hexdigest() == digest
        except (OSError, BackupUnreadable):
            continue
        if same and _unlink(path) is None:
            finished += 1
    return finished


def _under(session: Path, roots: Sequence[Path]) -> bool:
    return any(session == root or root in session.parents for root in roots)


def prune_under(
    state: StateDb,
    roots: Sequence[Path],
    policy: Retention,
    now: datetime,
    *,
    prune_only_copies: bool,
    apply: bool,
) -> tuple[PrunePlan, PruneDone]:
    """The retention over the recorded backups of the sessions under `roots` (resolved paths):
    planned, and with `apply` carried out (after finishing what a killed prune left)."""
    if apply:
        finish_pruned(state, state.pruned())
    backups = [row for row in state.backups() if _under(row.session_path, roots) and row.path.is_file()]
    plan = plan_prune(
        backups,
        policy,
        now,
        only_copies=protected_backups(state, backups),
        in_flight=frozenset(intent.backup for intent in state.intents()),
        prune_only_copies=prune_only_copies,
    )
    done = apply_prune(state, plan, now) if apply else PruneDone((), ())
    return plan, done
