"""The commands that change session files, behind one entry: settings, discovery, and the errors
that end such a run before any session is touched (exit 2, one line, never a traceback).

`compress --in-place`, `restore`, `backups`, `repair-read-pages`, `repair` and `vacuum` are loaded
only when used, so a validation sweep imports neither SQLite nor the transaction.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.cli.console import configure_logging
from pipeline.cli.grammar import flag_overrides
from pipeline.cli.interrupt import stop_on_signals
from pipeline.cli.preflight import check_listed, check_written_directories
from pipeline.errors import CompactionError, UsageError
from pipeline.execute.stop_request import StopRequest
from pipeline.formats.registry import default_roots, session_file_names, session_stores
from pipeline.read.discover import SessionFile, discover, root_pairs
from pipeline.settings import Settings, load_settings
from pipeline.vocabulary import ExitCode

__all__ = ["is_live", "run_live"]

_LIVE = frozenset({"restore", "backups", "repair-read-pages", "repair", "vacuum"})


def is_live(args: argparse.Namespace) -> bool:
    """Whether the command may change session files (or reads the in-place state)."""
    return args.command in _LIVE or (args.command == "compress" and bool(args.in_place))


class _StoresUnread:
    """The stores' names only: an in-place command takes no store, so none is read to list it."""

    def __init__(self) -> None:
        self._stores = session_stores()

    def __contains__(self, name: object) -> bool:
        return name in self._stores

    def members(self, path: Path) -> tuple[str, ...] | None:
        return None


def _without_stores(sessions: Sequence[SessionFile], command: str) -> list[SessionFile]:
    """The session files a live command may change: a store's rows are never replaced (one note
    each); a run given nothing else is a usage error."""
    stores = [session.path for session in sessions if session.member is not None]
    for path in stores:
        print(
            f"compaction: note: {path} holds several sessions: its rows are never replaced in place "
            f"({command} leaves it as it is; `compress --out DIR` writes its sessions as JSONL)",
            file=sys.stderr,
        )
    if stores and len(stores) == len(sessions):
        raise UsageError(f"nothing {command} can change: a store of sessions is never replaced in place")
    return [session for session in sessions if session.member is None]


def _sessions_command(args: argparse.Namespace, settings: Settings, stop: StopRequest) -> int:
    roots = list(args.paths) or default_roots()
    sessions = _without_stores(discover(roots, session_file_names(), _StoresUnread()), args.command)
    pairs = root_pairs(roots)
    if getattr(args, "resume_leaf", None) and len(sessions) != 1:
        raise UsageError(f"--resume-leaf applies to exactly one session; {len(sessions)} were found")
    from pipeline.cli.in_place_pass import LiveRun  # noqa: PLC0415 - SQLite and the transaction, on use

    live = LiveRun(args, settings, sessions, pairs, stop)
    if args.command == "compress":
        from pipeline.cli.compress_command import check_compress_paths  # noqa: PLC0415 - per command
        from pipeline.cli.compress_in_place_command import compress_in_place  # noqa: PLC0415

        check_compress_paths(args)
        return compress_in_place(live)
    if args.command == "repair":
        from pipeline.cli.damage_repair_command import damage_repair_command  # noqa: PLC0415 - per command

        return damage_repair_command(live)
    if args.command == "vacuum":
        from pipeline.cli.vacuum_command import vacuum_command  # noqa: PLC0415 - per command

        return vacuum_command(live)
    from pipeline.cli.repair_command import repair_command  # noqa: PLC0415 - per command

    return repair_command(live)


def _dispatch(args: argparse.Namespace, settings: Settings, stop: StopRequest) -> int:
    roots = list(args.paths) or default_roots()
    if args.command == "backups" and not (args.yes or args.move_to_archive):
        check_listed(settings, roots)
    else:
        check_written_directories(args, settings, roots)
    if args.command == "restore":
        from pipeline.cli.restore_command import restore_command  # noqa: PLC0415 - per command

        return restore_command(args, settings)
    if args.command == "backups":
        from pipeline.cli.backups_command import backups_command  # noqa: PLC0415 - per command

        return backups_command(args, settings)
    return _sessions_command(args, settings, stop)


def run_live(args: argparse.Namespace) -> int:
    """Run one of the live commands; a usage error, a locked state or a missing extra exits 2."""
    try:
        with stop_on_signals() as stop:  # from the start: a signal during the checks still ends cleanly
            settings = load_settings(args.config, flags=flag_overrides(args))
            configure_logging(settings.sweep.log_format, quiet=args.quiet)
            return _dispatch(args, settings, stop)
    except KeyboardInterrupt:  # before any session was taken up: nothing to finish or record
        print("compaction: stopped by SIGINT before any session was touched", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except CompactionError as exc:
        # A usage error, a bad setting or root, another run holding the state directory
        # (`StateLocked`), an unusable state database, a backup encoding whose extra is missing.
        print(f"compaction: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
