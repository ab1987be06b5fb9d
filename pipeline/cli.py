"""The `compaction` command line: parse flags, build settings once, run one job, exit with a code.

Exit codes: 0 when every session is fine (valid, warnings, skipped, unsupported format),
1 when at least one session has errors, was refused, unreadable or crashed, 2 for a usage error
or an unreadable root.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import anyio

from pipeline import __version__
from pipeline.console import configure_logging, progress_bar, render_summary
from pipeline.discover import RootError, SessionFile, default_roots, discover
from pipeline.errors import ConfigError
from pipeline.publish import write_json_atomic
from pipeline.report import summary_report
from pipeline.runner import RunResult, resolve_jobs, run_sessions
from pipeline.settings import Settings, load_settings
from pipeline.sweep import SweepOptions, sweep_session
from pipeline.vocabulary import CheckpointPolicy, LeafPolicy

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem with the command line itself."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                        help="session roots or files (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)")
    parser.add_argument("--report-dir", type=Path, help="where reports go (default: a fresh directory here, printed)")
    parser.add_argument("--jobs", type=int, help="worker processes (default: the core count)")
    parser.add_argument("--config", type=Path, help="a TOML file overriding config/default.toml")
    parser.add_argument("--log-format", choices=("console", "json"), help="log lines on stderr (default: console)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table; warnings and errors only")


def _topology(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--leaf-policy", choices=[p.value for p in LeafPolicy],
                        help="auto (default): strict where the last pointer names a leaf, else Claude Code's "
                             "inference; strict: the seed's rules only; physical: physical tail, no branch isolation")
    parser.add_argument("--resume-leaf", metavar="UUID", help="resume from this leaf (one session only)")
    parser.add_argument("--max-post-last-prompt-extension", type=int, metavar="N",
                        help="accept up to N tool-result records after the last pointer (default 0)")
    parser.add_argument("--checkpoint-policy", choices=[p.value for p in CheckpointPolicy],
                        help="which file-history snapshots travel with kept records")
    parser.add_argument("--max-file-history-snapshots", type=int, metavar="N", help="keep at most N snapshots")


def build_parser() -> argparse.ArgumentParser:
    """The full parser with one subcommand per job."""
    parser = _Parser(prog="compaction", description="Validate and compact coding-agent session transcripts offline.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    validate = commands.add_parser(
        "validate",
        help="sweep sessions: read, select the active branch, partition every line, validate",
        description="Validate every session under the given roots and write one JSON report per session "
                    "plus summary.json. Nothing is modified.",
    )
    _common(validate)
    _topology(validate)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    flags = {
        "sweep": {
            "jobs": args.jobs,
            "leaf_policy": getattr(args, "leaf_policy", None),
            "max_post_last_prompt_extension": getattr(args, "max_post_last_prompt_extension", None),
            "checkpoint_policy": getattr(args, "checkpoint_policy", None),
            "max_file_history_snapshots": getattr(args, "max_file_history_snapshots", None),
            "log_format": args.log_format,
            "report_dir": str(args.report_dir) if args.report_dir else None,
        }
    }
    return load_settings(args.config, flags=flags)


def _report_dir(settings: Settings, command: str) -> Path:
    configured = settings.get("sweep", "report_dir")
    if configured:
        return Path(configured)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = Path.cwd() / "compaction-reports" / f"{command}-{stamp}"
    suffix = 2
    while candidate.exists():
        candidate = Path.cwd() / "compaction-reports" / f"{command}-{stamp}-{suffix}"
        suffix += 1
    return candidate


def _check_values(settings: Settings, sessions: Sequence[SessionFile], args: argparse.Namespace) -> None:
    if settings.get("sweep", "jobs") < 0:
        raise UsageError("--jobs must be 0 (core count) or more")
    if settings.get("sweep", "max_post_last_prompt_extension") < 0:
        raise UsageError("--max-post-last-prompt-extension must be 0 or more")
    if settings.get("sweep", "max_file_history_snapshots") < 0:
        raise UsageError("--max-file-history-snapshots must be 0 or more")
    if settings.get("sweep", "leaf_policy") not in {p.value for p in LeafPolicy}:
        raise UsageError(f"unknown leaf policy {settings.get('sweep', 'leaf_policy')!r}")
    if getattr(args, "resume_leaf", None) and len(sessions) != 1:
        raise UsageError(f"--resume-leaf applies to exactly one session; {len(sessions)} were found")


def _validate(args: argparse.Namespace, settings: Settings, sessions: list[SessionFile]) -> int:
    sweep = settings.section("sweep")
    options = SweepOptions(
        leaf_policy=sweep["leaf_policy"],
        resume_leaf=args.resume_leaf,
        max_extension=sweep["max_post_last_prompt_extension"],
        checkpoint_policy=sweep["checkpoint_policy"],
        max_snapshots=sweep["max_file_history_snapshots"],
    )
    report_dir = _report_dir(settings, "validate")
    jobs = resolve_jobs(sweep["jobs"])
    with progress_bar(len(sessions), enabled=not args.quiet, description="validate") as advance:
        result: RunResult = anyio.run(_run, sessions, options, jobs, report_dir, advance)
    record: dict[str, Any] = {field: getattr(options, field) for field in options.__dataclass_fields__}
    record["jobs"] = jobs
    summary = summary_report(result.outcomes, command="validate", options=record,
                             report_paths=result.report_paths, elapsed_ms=result.elapsed_ms,
                             roots=[str(s) for s in dict.fromkeys(session.root for session in sessions)])
    write_json_atomic(report_dir / "summary.json", summary)
    if not args.quiet:
        render_summary(result.outcomes, report_dir, result.elapsed_ms)
    return EXIT_FAILED if result.failed else EXIT_OK


async def _run(sessions: list[SessionFile], options: SweepOptions, jobs: int, report_dir: Path,
               advance: Any) -> RunResult:
    return await run_sessions(sessions, sweep_session, (options,), jobs=jobs, report_dir=report_dir,
                              on_outcome=advance)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `compaction` console script."""
    args = build_parser().parse_args(argv)
    try:
        settings = _settings(args)
        configure_logging(settings.get("sweep", "log_format"), quiet=args.quiet)
        roots = list(args.paths) or default_roots()
        sessions = discover(roots)
        _check_values(settings, sessions, args)
    except (ConfigError, RootError, UsageError) as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "validate":
        return _validate(args, settings, sessions)
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
