"""`compaction backups [ROOT...]`: list the backups (without taking the state lock), apply the
retention policy (`--prune`, a dry run unless `--yes`), or move backups beside the sessions into
the archive (`--move-to-archive`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pipeline.cli.live_tables import human_bytes, present_backups
from pipeline.errors import UsageError
from pipeline.formats.registry import looked_for_roots
from pipeline.live_vocabulary import BackupPlacement, RetentionKind
from pipeline.publish.live.archive_move import BesideBackup, Moved, move_to_archive
from pipeline.publish.live.backup_restore import list_backups
from pipeline.publish.live.backups import scan_backups
from pipeline.publish.live.configured import archive_directory, backup_options, state_options
from pipeline.publish.live.reporting import backup_entry
from pipeline.publish.live.retention import PruneDone, PrunePlan, PruneVerdict, prune_under
from pipeline.publish.live.state_db import open_state, read_state
from pipeline.read.discover import root_pairs
from pipeline.report.backups_documents import MovedEntry, PruneEntryReport, PruneReport
from pipeline.report.render import json_bytes
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode

__all__ = ["backups_command"]

ONLY_COPY_NOTE = (
    "a backup is the only copy of the history a compaction summarized: a compacted session's newest "
    "backup is kept whatever the policy ([in_place] prune_only_copies = true lets it go)"
)


def _roots(args: argparse.Namespace) -> list[Path]:
    return [root for root in (list(args.paths) or looked_for_roots()) if root.exists()]


def backups_command(args: argparse.Namespace, settings: Settings) -> int:
    """List, prune or move the backups (see `compaction backups --help`)."""
    if args.yes and not args.prune:
        raise UsageError("--yes confirms --prune: add --prune to remove backups")
    if args.prune:
        return _prune(args, settings)
    if args.move_to_archive:
        return _move(args, settings)
    return _list(args, settings)


def _list(args: argparse.Namespace, settings: Settings) -> int:
    roots = [root for root in _roots(args) if root.is_dir()]
    configured = settings.in_place.backup_dir
    archive = Path(configured).expanduser() if configured else archive_directory(settings.state)
    directories = [*roots, archive]
    with read_state(state_options(settings.state)) as state:
        listing = list_backups(state, [d for d in directories if d.is_dir()])
    if args.json:
        sys.stdout.buffer.write(json_bytes([backup_entry(entry) for entry in listing]))
    else:
        present_backups(listing)
    return ExitCode.OK


def _prune(args: argparse.Namespace, settings: Settings) -> int:
    policy = settings.in_place.retention
    resolved = [Path(os.path.realpath(root)) for root in _roots(args)]
    # A dry run only reads (without the lock, as the listing does); a prune takes the run lock.
    opened = open_state if args.yes else read_state
    with opened(state_options(settings.state)) as state:
        if state is None:  # no state database yet: nothing was ever backed up
            return _prune_nothing(args, settings)
        plan, done = prune_under(
            state,
            resolved,
            policy,
            datetime.now(UTC),
            prune_only_copies=settings.in_place.prune_only_copies,
            apply=args.yes,
        )
    report = _prune_report(settings, plan, done, applied=args.yes)
    if args.json:
        sys.stdout.buffer.write(json_bytes(report))
    elif not args.quiet:
        _say_prune(report)
    for path, error in done.failed:
        print(f"compaction: error: could not prune {path} ({error}); the next prune retries", file=sys.stderr)
    return ExitCode.FAILED if done.failed else ExitCode.OK


def _prune_nothing(args: argparse.Namespace, settings: Settings) -> int:
    empty = PrunePlan(settings.in_place.retention, ())
    report = _prune_report(settings, empty, PruneDone((), ()), applied=False)
    if args.json:
        sys.stdout.buffer.write(json_bytes(report))
    elif not args.quiet:
        _say_prune(report)
    return ExitCode.OK


def _prune_report(settings: Settings, plan: PrunePlan, done: PruneDone, *, applied: bool) -> PruneReport:
    failed = dict(done.failed)
    entries = [
        PruneEntryReport(
            path=str(entry.backup.path),
            session=str(entry.backup.session_path),
            stored_bytes=entry.backup.stored_size,
            created=entry.backup.created_at.astimezone(UTC).isoformat(),
            verdict=entry.verdict.value,
            error=failed.get(entry.backup.path),
        )
        for entry in plan.entries
        if entry.verdict is not PruneVerdict.KEEP
    ]
    return PruneReport(
        retention=settings.in_place.backup_keep.strip().lower(),
        applied=applied,
        backups=len(plan.entries),
        prune=len(plan.of(PruneVerdict.PRUNE)),
        prune_bytes=plan.pruned_bytes,
        pruned=len(done.removed),
        pruned_bytes=done.removed_bytes,
        kept_only_copy=len(plan.of(PruneVerdict.ONLY_COPY)),
        entries=entries,
    )


def _say_prune(report: PruneReport) -> None:
    for entry in report.entries:
        if entry.verdict == PruneVerdict.PRUNE:
            word = "pruned" if report.applied and entry.error is None else "would prune"
            if entry.error is not None:
                word = f"could not prune ({entry.error})"
            print(f"{word} {entry.path} ({human_bytes(entry.stored_bytes)}, made {entry.created[:16]})")
        elif entry.verdict == PruneVerdict.ONLY_COPY:
            print(f"kept {entry.path}: the only copy of the history its session's compaction summarized")
    verb = "pruned" if report.applied else "would prune (dry run: add --yes to remove them)"
    shown = report.pruned_bytes if report.applied else report.prune_bytes
    count = report.pruned if report.applied else report.prune
    print(f"{count} of {report.backups} backups {verb}: {human_bytes(shown)} (keep {report.retention})")
    if report.kept_only_copy:
        print(f"{report.kept_only_copy} kept: {ONLY_COPY_NOTE}")
    if report.retention == RetentionKind.ALL.value:
        print("keep all: nothing is ever pruned; choose a retention with --keep 30d or --keep last:3")


def _beside(roots: Sequence[Path], archive: Path) -> Iterator[BesideBackup]:
    """Backups found beside the sessions under the roots (none inside the archive itself)."""
    for root, label in root_pairs(list(roots)):
        resolved = Path(os.path.realpath(root))
        base = resolved.parent if resolved.is_file() else resolved
        for found in scan_backups(base):
            if archive == found.path or archive in found.path.parents:
                continue
            session = found.path.parent / found.session_name
            if resolved.is_file() and session != resolved:
                continue
            # Labelled as discovery labels the session, so its archive folder is the one an in-place
            # run of the same roots uses.
            root_label = "" if resolved.is_file() else label
            yield BesideBackup(found.path, session, root_label, session.relative_to(base).as_posix())


def _move(args: argparse.Namespace, settings: Settings) -> int:
    options = backup_options(settings.in_place, settings.state)
    if options.placement is BackupPlacement.BESIDE or options.directory is None:
        raise UsageError(
            "--move-to-archive moves backups out of the session folders: leave out --backup-beside"
        )
    with open_state(state_options(settings.state)) as state:
        moved = move_to_archive(state, list(_beside(_roots(args), options.directory)), options)
    if args.json:
        sys.stdout.buffer.write(json_bytes([_moved_entry(m) for m in moved]))
    else:
        _say_moved(moved, options.directory, quiet=args.quiet)
    return ExitCode.FAILED if any(m.reason for m in moved) else ExitCode.OK


def _moved_entry(moved: Moved) -> MovedEntry:
    return MovedEntry(
        source=str(moved.source),
        archived=str(moved.archived) if moved.archived else None,
        stored_bytes=moved.stored_bytes,
        archived_bytes=moved.archived_bytes,
        reason=moved.reason,
    )


def _say_moved(moved: Sequence[Moved], archive: Path, *, quiet: bool) -> None:
    for entry in moved:
        if entry.reason is not None:
            print(f"compaction: error: left {entry.source} where it was: {entry.reason}", file=sys.stderr)
        elif not quiet:
            print(f"moved {entry.source} -> {entry.archived}")
    if quiet:
        return
    done = [m for m in moved if m.reason is None]
    freed = sum(m.stored_bytes for m in done)
    added = sum(m.archived_bytes for m in done)
    print(
        f"{len(done)} of {len(moved)} backups moved to {archive}: {human_bytes(freed)} left the session "
        f"folders, the archive grew by {human_bytes(added)}"
    )
