"""The `compaction` command line: parse flags, build settings once, run one command, exit with a code.

Exit codes of the fleet commands (`pipeline.vocabulary.ExitCode`): 0 when every session is fine
(valid, warnings, skipped, unsupported format), 1 when at least one session has errors, was
refused, unreadable or crashed, 2 for a usage error or an unreadable root. `verify-resume` has
its own (`ResumeExit`, see its --help); `compress --in-place`, `restore` and `repair-read-pages`
add 3: a file was replaced and verified but its report could not be written (`run.live`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from pipeline.errors import ConfigError, UsageError
from pipeline.formats.claude_code.guard import LineLimits
from pipeline.read.discover import RootError, SessionFile, default_roots, discover
from pipeline.run.commands import check_compress_paths, compress_command, find_gate_claude, validate_command
from pipeline.run.console import configure_logging
from pipeline.run.fleet import FleetCommand, run_fleet
from pipeline.run.live import is_live, run_live
from pipeline.run.parser import build_parser, flag_overrides
from pipeline.run.runner import resolve_jobs
from pipeline.settings import Settings, load_settings
from pipeline.vocabulary import ExitCode

__all__ = ["main"]


def _usage(message: object) -> ExitCode:
    print(f"compaction: error: {message}", file=sys.stderr)
    return ExitCode.USAGE


def _check_scope(args: argparse.Namespace, sessions: Sequence[SessionFile]) -> None:
    if getattr(args, "resume_leaf", None) and len(sessions) != 1:
        raise UsageError(f"--resume-leaf applies to exactly one session; {len(sessions)} were found")
    if args.command == "compress":
        check_compress_paths(args)


def _command(args: argparse.Namespace, settings: Settings) -> FleetCommand[Any]:
    """The fleet command asked for, with everything it needs resolved before any session runs."""
    if args.command == "compress":
        return compress_command(args, settings, find_gate_claude(settings))
    if args.command == "tokens":
        from pipeline.run.tokens import tokens_command  # noqa: PLC0415 - loaded for tokens only

        return tokens_command(args, settings)
    return validate_command(args, settings)


def _verify_resume(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        return _usage(exc)
    from pipeline.jobs import verify_resume  # noqa: PLC0415 - loaded for verify-resume only

    return verify_resume.run(args, settings.verify, LineLimits.of(settings.sweep))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `compaction` console script."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    named = arguments[0] if arguments and not arguments[0].startswith("-") else None
    args = build_parser(named).parse_args(arguments)
    if args.command == "verify-resume":
        return _verify_resume(args)
    if is_live(args):
        return run_live(args)
    try:
        settings = load_settings(args.config, flags=flag_overrides(args))
        configure_logging(settings.sweep.log_format, quiet=args.quiet)
        sessions = discover(list(args.paths) or default_roots())
        _check_scope(args, sessions)
        command = _command(args, settings)
    except (ConfigError, RootError, UsageError) as exc:
        return _usage(exc)
    return run_fleet(command, sessions, jobs=resolve_jobs(settings.sweep.jobs), quiet=args.quiet)


if __name__ == "__main__":
    sys.exit(main())
