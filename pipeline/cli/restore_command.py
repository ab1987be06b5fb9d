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

import msgspec

from pipeline.cli.in_place_pass import live_report_dir
from pipeline.cli.live_tables import present_counts
from pipeline.errors import UsageError
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.activity import platform_probe
from pipeline.publish.live.backup_restore import (
    RestoreOptions,
    RestoreOutcome,
    restorable_since,
    restore_session,
)
from pipeline.publish.live.configured import replace_options, state_options
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.reporting import receipt_section, restore_report
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import StateDb, open_state
from pipeline.read.discover import default_roots, root_pairs
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


def _target_of(path: Path) -> SessionTarget:
    if not path.is_file() and not path.is_symlink():
        raise UsageError(f"no such session file: {path}")
    return SessionTarget(path, path.parent, path.parent.name or "root", path.name)


def _chosen(args: argparse.Namespace, state: StateDb) -> list[tuple[SessionTarget, Path | None]]:
    if args.all_since:
        if args.backup:
            raise UsageError("--backup names one backup for one PATH; it does not combine with --all-since")
        roots = root_pairs(list(args.paths) or default_roots())
        return list(restorable_since(state, parse_since(args.all_since), roots))
    if not args.paths:
        raise UsageError("restore needs the session files to restore, or --all-since DATE")
    if args.backup and len(args.paths) != 1:
        raise UsageError("--backup names one backup: give exactly one session PATH with it")
    backup = args.backup.resolve() if args.backup else None
    return [(_target_of(path), backup) for path in args.paths]


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


def _say(outcome: RestoreOutcome) -> None:
    if outcome.restored:
        print(f"restored {outcome.target.path} from {outcome.backup}")
        return
    why = outcome.refusal.value if outcome.refusal else None
    if why is None and outcome.receipt is not None:
        why = f"{outcome.receipt.operation_state.value}: {outcome.receipt.reason}"
    print(f"not restored {outcome.target.path}: {why}", file=sys.stderr)


def restore_command(args: argparse.Namespace, settings: Settings) -> int:
    """Restore the chosen sessions; 0 all restored, 1 any not, 3 restored but a report failed."""
    chosen_state = state_options(settings.state)
    report_dir = live_report_dir(settings, "restore", chosen_state.directory)
    options = RestoreOptions(replace_options(settings.in_place), args.force)
    probe = platform_probe()
    check = probe.holders if probe is not None and settings.in_place.detect_open_files else None
    outcomes: list[RestoreOutcome] = []
    unreported: list[Receipt] = []
    with open_state(chosen_state) as state:
        for target, backup in _chosen(args, state):
            outcome = restore_session(target, state, options, backup=backup, open_check=check)
            outcomes.append(outcome)
            if not _report(outcome, report_dir) and outcome.receipt is not None and outcome.restored:
                unreported.append(outcome.receipt.report_failed())
            if not args.quiet:
                _say(outcome)
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
        return ExitCode.COMMITTED_REPORT_FAILED
    return ExitCode.OK if all(outcome.restored for outcome in outcomes) else ExitCode.FAILED
