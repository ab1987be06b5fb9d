"""The `compaction` command line: parse flags, build settings once, run one command, exit with a code.

Exit codes of the fleet commands (`pipeline.vocabulary.ExitCode`): 0 when every session is fine
(valid, warnings, skipped, unsupported format), 1 when at least one session has errors, was
refused, unreadable or crashed, 2 for a usage error or an unreadable root. `verify-resume` and
`probe` have their own (`ResumeExit`, `ProbeExit`, see their --help); `compress --in-place`,
`restore` and `repair-read-pages` add 3: a file was replaced and verified but its report could
not be written (`run.live`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pipeline.cli.grammar import build_parser, flag_overrides
from pipeline.cli.pipe_safe import pipe_safe_stdout
from pipeline.cli.preflight import check_written_directories
from pipeline.errors import ConfigError, UsageError
from pipeline.formats.registry import default_roots, session_file_names, session_stores
from pipeline.read.discover import RootError, SessionFile
from pipeline.read.remote import discover_roots, is_url
from pipeline.settings import Settings, load_settings
from pipeline.vocabulary import ExitCode

# The commands, the console (rich) and the executors are imported where a parsed command needs
# them, so `--help` and a usage error cost no more than the grammar: every start pays its imports.
if TYPE_CHECKING:
    from pipeline.cli.fleet_command import FleetRun
    from pipeline.execute.dask_cluster import ClusterRun
    from pipeline.execute.seam import Executor

__all__ = ["main"]


def _usage(message: object) -> ExitCode:
    print(f"compaction: error: {message}", file=sys.stderr)
    return ExitCode.USAGE


def _check_scope(args: argparse.Namespace, sessions: Sequence[SessionFile]) -> None:
    if getattr(args, "resume_leaf", None) and len(sessions) != 1:
        raise UsageError(f"--resume-leaf applies to exactly one session; {len(sessions)} were found")
    if args.command == "compress":
        from pipeline.cli.compress_command import check_compress_paths  # noqa: PLC0415 - see the imports

        check_compress_paths(args)


def _cluster(args: argparse.Namespace, settings: Settings) -> ClusterRun | None:
    """The cluster asked for, with its extra checked (URLs need the extra too)."""
    urls = [str(path) for path in args.paths if is_url(str(path))] + (
        [settings.sweep.report_dir] if is_url(settings.sweep.report_dir) else []
    )
    if args.cluster is None and not urls:
        return None
    from pipeline.execute.dask_cluster import ClusterRun, check_address, require_cluster_extra  # noqa: PLC0415

    require_cluster_extra()
    if args.cluster is not None:
        check_address(args.cluster)
    if args.cluster is None:
        raise UsageError(f"URLs ({urls[0]}) are read and written by cluster workers: add --cluster local:N")
    return ClusterRun(args.cluster, settings.cluster)


def _executor(
    args: argparse.Namespace, settings: Settings, command: FleetRun, cluster: ClusterRun | None
) -> Executor:
    """Where the sessions run: Dask tasks with `--cluster`, else worker processes of this machine."""
    if cluster is None:
        from pipeline.execute.process_pool import ProcessPoolExecutor, resolve_jobs  # noqa: PLC0415

        return ProcessPoolExecutor(resolve_jobs(settings.sweep.jobs))
    if command.services is not None and getattr(args, "max_run_tokens", None) is not None:
        raise UsageError("--max-run-tokens counts in one process: it is not available with --cluster")
    from pipeline.execute.dask_cluster import DaskExecutor  # noqa: PLC0415 - Dask only with --cluster

    return DaskExecutor(cluster)


def _command(args: argparse.Namespace, settings: Settings) -> FleetRun:
    """The fleet command asked for, with everything it needs resolved before any session runs."""
    if args.command == "compress":
        from pipeline.cli.compress_command import compress_command, find_gate_judges  # noqa: PLC0415

        return compress_command(args, settings, find_gate_judges(settings))
    if args.command == "tokens":
        from pipeline.cli.tokens_command import tokens_command  # noqa: PLC0415 - loaded for tokens only

        return tokens_command(args, settings)
    from pipeline.cli.validate_command import validate_command  # noqa: PLC0415 - see the imports

    return validate_command(args, settings)


def _single_command(args: argparse.Namespace) -> int:
    """The commands that run no fleet: `schema` (what the package ships), `report` (a finished
    run's directory), `verify-resume` and `probe` (one original and its compaction)."""
    if args.command == "schema":
        from pipeline.cli.schema_command import schema_command  # noqa: PLC0415 - per command

        return schema_command(args)
    if args.command == "report":
        from pipeline.cli.report_command import report_command  # noqa: PLC0415 - per command

        return report_command(args)
    if args.command == "verify-resume":
        from pipeline.cli.verify_resume_command import verify_resume_command  # noqa: PLC0415 - per command

        return verify_resume_command(args)
    from pipeline.cli.probe_command import probe_command  # noqa: PLC0415 - per command

    return probe_command(args)


def _live_misuse(args: argparse.Namespace) -> str | None:
    """Why the flags given cannot run in place, if they cannot."""
    remote = [str(path) for path in getattr(args, "paths", None) or () if is_url(str(path))]
    cluster = getattr(args, "cluster", None)
    elsewhere = cluster is not None and not (args.command == "compress" and cluster.startswith("local:"))
    if elsewhere or remote or isinstance(getattr(args, "report_dir", None), str):
        return "live files are replaced on this machine only: --cluster local:N at most, no URLs"
    if getattr(args, "html", False):
        return "--html is for runs that write a report directory, not --in-place"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `compaction` console script."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before a run took up any session: nothing to finish
        print("compaction: stopped by SIGINT before any session was touched", file=sys.stderr)
        return ExitCode.INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    pipe_safe_stdout()
    arguments = list(sys.argv[1:] if argv is None else argv)
    named = arguments[0] if arguments and not arguments[0].startswith("-") else None
    args = build_parser(named).parse_args(arguments)
    if args.command in ("schema", "report", "verify-resume", "probe"):
        return _single_command(args)
    from pipeline.cli.console import configure_logging  # noqa: PLC0415 - a command that runs: see the imports
    from pipeline.cli.live_commands import is_live, run_live  # noqa: PLC0415

    if is_live(args):
        misuse = _live_misuse(args)
        return _usage(misuse) if misuse is not None else run_live(args)
    try:
        settings = load_settings(args.config, flags=flag_overrides(args))
        configure_logging(settings.sweep.log_format, quiet=args.quiet)
        cluster = _cluster(args, settings)
        roots = list(args.paths) or default_roots()
        sessions = discover_roots(roots, session_file_names(), session_stores())
        _check_scope(args, sessions)
        check_written_directories(args, settings, roots)
        command = _command(args, settings)
        executor = _executor(args, settings, command, cluster)
    except (ConfigError, RootError, UsageError) as exc:
        return _usage(exc)
    code = _fleet(command, sessions, roots, executor, quiet=args.quiet)
    if not (args.html and sessions):
        return code
    from pipeline.cli.report_command import run_page  # noqa: PLC0415 - with --html only

    return run_page(command.destination, code, quiet=args.quiet)


def _fleet(
    command: FleetRun,
    sessions: Sequence[SessionFile],
    roots: Sequence[object],
    executor: Executor,
    *,
    quiet: bool,
) -> int:
    """Run the fleet on `executor`; a root with no session files is one note and exit 0."""
    if not sessions:  # one line, not an empty table
        named = ", ".join(map(str, roots))
        print(f"compaction: note: no session files (*.jsonl, *.json) under {named}", file=sys.stderr)
        return ExitCode.OK
    from pipeline.cli.fleet_command import run_fleet  # noqa: PLC0415 - see the imports

    try:
        return run_fleet(command, sessions, executor, quiet=quiet)
    except UsageError as exc:  # a scheduler that does not answer
        return _usage(exc)


if __name__ == "__main__":
    sys.exit(main())
