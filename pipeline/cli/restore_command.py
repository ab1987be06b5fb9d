"""`compaction restore`: the undo of an in-place run (`compaction backups` lists what it can undo).

`restore PATH...` puts back, for each session file, the verified backup its current file replaced
(or `--backup FILE`), through the live-replacement transaction: only over the output an in-place
run published unless `--force`, and the restored bytes must hash to the digest recorded when the
backup was made. `restore --all-since DATE [ROOT...]` does so for every session under the roots
whose output replaced a backup made since DATE.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import msgspec

from pipeline.cli.in_place_pass import live_report_dir
from pipeline.cli.live_tables import present_counts
from pipeline.errors import UsageError
from pipeline.formats.registry import default_roots
from pipeline.live_vocabulary import RestoreRefusal
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.activity import platform_probe
from pipeline.publish.live.backup_restore import (
    RestoreOptions,
    RestoreOutcome,
    beside_earlier_backups,
    restorable_since,
    restore_session,
)
from pipeline.publish.live.configured import replace_options, state_options
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.reporting import receipt_section, restore_report
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import StateDb, open_state
from pipeline.read.discover import root_pairs
from pipeline.report.render import json_bytes
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode

__all__ = ["parse_since", "restore_command"]


def parse_since(text: str) -> datetime:
    """An ISO date or date-time; local time unless it carries an offset; returned in UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(
            f"--all-since: not a date: {text!r} (examples: 2025-06-01, 2025-06-01T22:00)"
        ) from exc
    return moment.astimezone(UTC)  # a naive value is taken as local time


_WHY: Final = {
    RestoreRefusal.NOT_OUR_OUTPUT: "the file is not the output we published (changed since?); "
    "--force restores over it",
    RestoreRefusal.NO_BACKUP: "no backup of this session (it was never replaced by an in-place run)",
    RestoreRefusal.BACKUP_UNREADABLE: "the backup cannot be read or decoded",
    RestoreRefusal.BACKUP_MISMATCH: "the backup no longer hashes to the digest recorded when it was made",
    RestoreRefusal.UNSAFE_TARGET: "the session path is not a regular file we can replace safely",
    RestoreRefusal.OTHER_SESSION: "the backup is another session's (by its record, name or session id); "
    "nothing is restored, whatever --force says",
    RestoreRefusal.BACKUP_PRUNED: "the retention policy ([in_place] backup_keep) removed the backup",
}


def _target_of(path: Path) -> SessionTarget:
    if path.is_dir():
        raise UsageError(
            f"{path} is a directory: restore takes session files, or --all-since DATE with roots"
        )
    if not path.is_file() and not path.is_symlink():
        raise UsageError(f"no such session file: {path}")
    return SessionTarget(path, path.parent, path.parent.name or "root", path.name)


def _chosen(
    args: argparse.Namespace, state: StateDb, archive: Path | None
) -> list[tuple[SessionTarget, Path | None]]:
    if args.all_since is not None:
        if args.backup:
            raise UsageError("--backup names one backup for one PATH; it does not combine with --all-since")
        roots = root_pairs(list(args.paths) or default_roots())
        return list(restorable_since(state, parse_since(args.all_since), roots))
    if not args.paths:
        raise UsageError("restore needs the session files to restore, or --all-since DATE")
    if args.backup and len(args.paths) != 1:
        raise UsageError("--backup names one backup: give exactly one session PATH with it")
    if args.backup is not None and not args.backup.is_file():
        why = "is a directory" if args.backup.is_dir() else "does not exist"
        raise UsageError(f"--backup {args.backup} {why}: name the backup file to restore from")
    backup = args.backup.resolve() if args.backup else None
    return [(beside_earlier_backups(_target_of(path), state, archive), backup) for path in args.paths]


def _report(outcome: RestoreOutcome, report_dir: Path) -> bool:
    """Write one restore's report; False when it could not be written."""
    target = outcome.target
    try:
        write_bytes_atomic(
            report_dir / f"{target.report_label}.restore.json", json_bytes(restore_report(outcome))
        )
    except OSError:
        return False
    return True


def _say(outcome: RestoreOutcome, *, quiet: bool) -> None:
    """One line per session: restored or already so on stdout (not when quiet), else why not on stderr."""
    if outcome.restored or outcome.refusal is RestoreRefusal.ALREADY_RESTORED:
        if not quiet:
            done = "restored" if outcome.restored else "already restored (nothing to do):"
            print(f"{done} {outcome.target.path}" + (f" from {outcome.backup}" if outcome.restored else ""))
        return
    why = f"{outcome.refusal.value}: {_WHY[outcome.refusal]}" if outcome.refusal else None
    if outcome.pruned_on is not None:
        day = outcome.pruned_on.astimezone().strftime("%Y-%m-%d %H:%M")
        pruned = RestoreRefusal.BACKUP_PRUNED.value
        why = f"{pruned}: {outcome.backup} was pruned on {day} by the retention policy"
    if why is None and outcome.receipt is not None:
        why = f"{outcome.receipt.operation_state.value}: {outcome.receipt.reason}"
    print(f"not restored {outcome.target.path}: {why}", file=sys.stderr)


def restore_command(args: argparse.Namespace, settings: Settings) -> int:
    """Restore the chosen sessions; 0 all restored, 1 any not, 3 restored but a report failed."""
    chosen_state = state_options(settings.state)
    report_dir = live_report_dir(settings, "restore", chosen_state.directory)
    options = RestoreOptions(replace_options(settings.in_place, settings.state), args.force)
    probe = platform_probe()
    check = probe.holders if probe is not None and settings.in_place.detect_open_files else None
    outcomes: list[RestoreOutcome] = []
    unreported: list[Receipt] = []
    with open_state(chosen_state) as state:
        for target, backup in _chosen(args, state, options.replace.backup.directory):
            outcome = restore_session(target, state, options, backup=backup, open_check=check)
            outcomes.append(outcome)
            if not _report(outcome, report_dir) and outcome.receipt is not None and outcome.restored:
                unreported.append(outcome.receipt.report_failed())
            _say(outcome, quiet=args.quiet)
    return _restore_exit(outcomes, unreported, report_dir, quiet=args.quiet)


def _restore_exit(
    outcomes: Sequence[RestoreOutcome], unreported: Sequence[Receipt], report_dir: Path, *, quiet: bool
) -> int:
    if not quiet:
        states = Counter(
            "restored" if o.restored else (o.refusal.value if o.refusal else "not-restored") for o in outcomes
        )
        present_counts(f"{len(outcomes)} sessions", ("restore", "sessions"), states)
        print(f"reports: {report_dir}")
    if unreported:
        for receipt in unreported:
            sys.stdout.write(msgspec.json.encode(receipt_section(receipt)).decode() + "\n")
        print(
            f"compaction: error: {len(unreported)} session(s) were restored and verified, but their report "
            "could not be written; the receipts are on stdout (operation_state committed-report-failed)",
            file=sys.stderr,
        )
        return ExitCode.COMMITTED_REPORT_FAILED
    return ExitCode.OK if all(outcome.settled for outcome in outcomes) else ExitCode.FAILED
