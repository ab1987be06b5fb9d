"""The space side of an in-place run: live bytes before and after, the retention at its end, and
the `archive` section that says what the run gave back."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipeline.live_vocabulary import RetentionKind
from pipeline.publish.live.backups import BackupOptions
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.publish.live.retention import PruneDone, PrunePlan, PruneVerdict, prune_under
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import StateDb
from pipeline.report.archive_space import ArchiveSpace, PruneFailure
from pipeline.settings import InPlaceSettings

__all__ = ["RunRetention", "archive_space", "live_bytes", "run_retention"]


def live_bytes(targets: Sequence[SessionTarget]) -> int:
    """The bytes the session files take now (one `stat` each; a file gone since counts 0)."""
    total = 0
    for target in targets:
        try:
            total += os.stat(target.path, follow_symlinks=False).st_size
        except OSError:
            continue
    return total


@dataclass(frozen=True, slots=True)
class RunRetention:
    """The retention's plan at the end of a run, and what it removed."""

    plan: PrunePlan | None  # None: keep all, nothing to plan
    done: PruneDone


def run_retention(
    state: StateDb, in_place: InPlaceSettings, roots: Sequence[tuple[Path, str]], *, stopped: bool
) -> RunRetention:
    """Apply `backup_keep` to the backups of the sessions under the run's roots (not after a stop:
    the user asked the run to end, and a later run prunes the same)."""
    policy = in_place.retention
    if policy.kind is RetentionKind.ALL or stopped:
        return RunRetention(None, PruneDone((), ()))
    resolved = [Path(os.path.realpath(root)) for root, _ in roots]
    plan, done = prune_under(
        state,
        resolved,
        policy,
        datetime.now(UTC),
        prune_only_copies=in_place.prune_only_copies,
        apply=True,
    )
    return RunRetention(plan, done)


def archive_space(
    backup: BackupOptions,
    in_place: InPlaceSettings,
    outcomes: Sequence[InPlaceOutcome],
    live: tuple[int, int],
    retention: RunRetention,
) -> ArchiveSpace:
    """The `archive` section of a run: live bytes (before, after), backups added and pruned."""
    added = [
        o.receipt.backup
        for o in outcomes
        if o.receipt is not None and o.receipt.backup is not None and not o.receipt.backup.reused
    ]
    plan, done = retention.plan, retention.done
    return ArchiveSpace(
        placement=backup.placement,
        backup_dir=str(backup.directory) if backup.directory else None,
        compression=backup.compression,
        retention=in_place.backup_keep,
        live_bytes_before=live[0],
        live_bytes_after=live[1],
        backups_added=len(added),
        backup_bytes_added=sum(b.stored_size for b in added),
        backups_pruned=len(done.removed),
        backup_bytes_pruned=done.removed_bytes,
        backups_kept_only_copy=len(plan.of(PruneVerdict.ONLY_COPY)) if plan else 0,
        prune_failures=[PruneFailure(path=str(path), error=error) for path, error in done.failed],
    )
