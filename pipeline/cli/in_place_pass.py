"""The pass the commands that replace session files in place share: the state locked, the work
directory, where reports go, the sessions handed to the command's in-place runner (an `InPlaceRequest`:
`pipeline.execute.in_place_drive`), the receipts of a failed report, the exit code.

A committed session whose report cannot be written makes the run exit 3 and prints its receipt
on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from pipeline.cli.compress_command import check_apart
from pipeline.cli.console import progress_bar, say_failures
from pipeline.cli.fleet_command import SUMMARY_NAME, default_report_dir
from pipeline.cli.interrupt import RESUME_SKIPS, say_stopped
from pipeline.execute.in_place_drive import (
    BuildServices,
    InPlaceRequest,
    InPlaceRunner,
    RemoteBuild,
    ReportOf,
    check_all,
)
from pipeline.execute.stop_request import StopRequest
from pipeline.live_vocabulary import Disposition
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.activity import platform_probe
from pipeline.publish.live.configured import in_place_options, state_options
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.publish.live.recovery import Recovered
from pipeline.publish.live.reporting import receipt_section
from pipeline.publish.live.session_pass import BuildCandidate, InPlaceOptions, InPlacePass
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.space import archive_space, live_bytes, run_retention
from pipeline.publish.live.state_db import RecordedResult, open_state
from pipeline.publish.live.totals import in_place_figures
from pipeline.report.archive_space import ArchiveSpace
from pipeline.report.live_replacement import ReceiptSection
from pipeline.report.render import json_bytes
from pipeline.report.run_totals import RunTotals, TotalsOf, fold_totals
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode, SourceFormat

__all__ = [
    "LiveCommand",
    "LiveRun",
    "PassDone",
    "finish",
    "in_place_exit",
    "in_place_totals",
    "live_report_dir",
    "run_pass",
    "work_directory",
]


@contextlib.contextmanager
def work_directory(configured: str, roots: Sequence[Path]) -> Iterator[Path]:
    """The run's scratch directory, outside ~/.claude and apart from every root (made private)."""
    if configured:
        path = Path(configured).expanduser().resolve()
        check_apart(path, roots, "the work directory")
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="compaction-work-", ignore_cleanup_errors=True) as made:
        path = Path(made).resolve()
        check_apart(path, roots, "the temporary work directory (set [in_place] work_dir)")
        yield path


def live_report_dir(settings: Settings, command: str, state_dir: Path) -> Path:
    """`--report-dir` (or `[sweep] report_dir`), else a fresh directory under the state directory."""
    configured = settings.sweep.report_dir
    return Path(configured).expanduser().resolve() if configured else default_report_dir(command, state_dir)


def _committed_unreported(outcomes: Sequence[InPlaceOutcome], summary_written: bool) -> list[ReceiptSection]:
    """Receipts of committed sessions whose report failed; all committed ones when the summary did."""
    committed = [o for o in outcomes if o.receipt is not None and o.receipt.committed]
    chosen = committed if not summary_written else [o for o in committed if o.report_failed]
    return [receipt_section(o.receipt) for o in chosen if o.receipt is not None]


def in_place_exit(outcomes: Sequence[InPlaceOutcome], *, summary_written: bool) -> ExitCode:
    """3 when a committed file's report (or the summary) could not be written, printing the receipts
    on stdout; else 1 when a session failed; else 0."""
    unreported = _committed_unreported(outcomes, summary_written)
    if unreported:
        for receipt in unreported:
            sys.stdout.write(msgspec.json.encode(receipt).decode() + "\n")
        print(
            f"compaction: error: {len(unreported)} session(s) were replaced and verified, but their report "
            "could not be written; the receipts are on stdout (operation_state committed-report-failed)",
            file=sys.stderr,
        )
        return ExitCode.COMMITTED_REPORT_FAILED
    return ExitCode.FAILED if any(outcome.failed for outcome in outcomes) else ExitCode.OK


@dataclass(frozen=True, slots=True)
class LiveRun:
    """A live command as the command line hands it over: its flags and settings, the sessions found
    under the roots (each root with its label), and the stop a signal sets."""

    args: argparse.Namespace
    settings: Settings
    sessions: Sequence[SessionTarget]
    roots: Sequence[tuple[Path, str]]
    stop: StopRequest


@dataclass(frozen=True, slots=True)
class LiveCommand:
    """What an in-place command brings to the shared pass: how it builds, records and reports."""

    name: str  # the progress bar's label and the report directory's prefix
    result: RecordedResult  # what a commit is recorded as
    config_digest: str  # a declined session is skipped while it and this digest stay the same
    require_resume_proof: bool
    runner: InPlaceRunner  # where candidates are built (worker processes, Dask tasks, this process)
    here: BuildCandidate  # a candidate built in this process, on the frozen bytes
    report_of: ReportOf
    remote: RemoteBuild | None = None  # a candidate built on the runner's workers; None: always here
    services: BuildServices | None = None  # a model summarizer's: every build in this process, through it


@dataclass(frozen=True, slots=True)
class PassDone:
    """What a pass did, and where its state, reports and scratch were."""

    outcomes: tuple[InPlaceOutcome, ...]
    options: InPlaceOptions
    recovered: tuple[Recovered, ...]
    report_dir: Path
    state_dir: Path
    work_dir: Path | None  # None: nothing needed building, so none was made
    elapsed_ms: float
    stop: StopRequest  # a signal that stopped the run, if any
    archive: ArchiveSpace  # live bytes before and after, backups added and pruned


def run_pass(command: LiveCommand, live: LiveRun) -> PassDone:
    """Lock the state, recover, and take every session through the pass (reports as they come).

    The cheap checks run first, in this thread; only the sessions that pass them go through the
    event loop, and the work directory is made only when there are some.
    """
    settings, roots, stop = live.settings, live.roots, live.stop
    state_settings = state_options(settings.state)
    configured = settings.in_place.work_dir
    root_paths = [root for root, _ in roots]
    if configured:
        check_apart(Path(configured).expanduser(), root_paths, "the work directory")
    started = time.perf_counter()
    live_before = live_bytes(live.sessions)
    options = in_place_options(
        settings.in_place,
        settings.state,
        work_dir=Path(configured).expanduser() if configured else Path(tempfile.gettempdir()),
        config_digest=command.config_digest,
        require_resume_proof=command.require_resume_proof,
        result=command.result,
    )
    work: Path | None = None
    with open_state(state_settings) as state:
        run = InPlacePass(options, state, clock_ns=time.time_ns, probe=platform_probe())
        pending, outcomes = check_all(run, live.sessions, roots, stop)
        report_dir = live_report_dir(settings, command.name, state_settings.directory)
        if pending:  # an unchanged fleet starts no event loop, thread, worker or work directory
            with (
                work_directory(configured, root_paths) as work,
                progress_bar(len(pending), enabled=not live.args.quiet, description=command.name) as advance,
            ):
                request = InPlaceRequest(
                    run=run,
                    targets=pending,
                    here=command.here,
                    remote=command.remote,
                    work=work,
                    report_of=command.report_of,
                    report_dir=report_dir,
                    stop=stop,
                    on_outcome=advance,
                    services=command.services,
                )
                outcomes += command.runner.run(request)
        retention = run_retention(state, settings.in_place, roots, stopped=stop.requested)
    elapsed = (time.perf_counter() - started) * 1000
    ordered = tuple(sorted(outcomes, key=lambda outcome: outcome.target.report_label))
    live_space = (live_before, live_bytes(live.sessions))
    archive = archive_space(options.replace.backup, settings.in_place, ordered, live_space, retention)
    return PassDone(
        ordered, options, run.recovered, report_dir, state_settings.directory, work, elapsed, stop, archive
    )


def in_place_totals(done: PassDone, chain_repairs: SourceFormat | None = None) -> RunTotals:
    """The pass's totals: the sessions a job ran on, what was replaced and backed up
    (`chain_repairs`: the format the command's chain repairs take, from `agents/registry`)."""
    figures = (in_place_figures(outcome, chain_repairs) for outcome in done.outcomes)
    return fold_totals((f for f in figures if f is not None), TotalsOf.IN_PLACE)


def _failure_lines(outcomes: Sequence[InPlaceOutcome]) -> list[str]:
    """--quiet's line for each failed session: `label: disposition [status] (reasons)`."""
    return [
        f"{o.target.report_label}: {o.disposition.value}"
        + (f" {o.status}" if o.status else "")
        + (f" ({', '.join(o.reasons[:4])})" if o.reasons else "")
        for o in outcomes
        if o.failed
    ]


def finish(
    done: PassDone,
    summary: object,
    present: Callable[[], None],
    *,
    quiet: bool,
    headline: Sequence[str] = (),
) -> int:
    """Write the summary, show the tables, and say how the run ended (see `in_place_exit`);
    `headline`: what the run achieved (`--quiet` ends its failure count with the first)."""
    destination = done.report_dir / SUMMARY_NAME
    try:
        write_bytes_atomic(destination, json_bytes(summary), durable=False)  # regenerated by any rerun
        written = True
    except OSError as exc:
        print(f"compaction: error: cannot write {destination}: {exc.strerror}", file=sys.stderr)
        written = False
    if not quiet:
        present()
    else:
        say_failures(
            _failure_lines(done.outcomes), Counter(o.disposition.value for o in done.outcomes), headline
        )
    code = in_place_exit(done.outcomes, summary_written=written)
    if not done.stop.requested:
        return code
    left = sum(outcome.disposition is Disposition.INTERRUPTED for outcome in done.outcomes)
    say_stopped(done.stop, len(done.outcomes) - left, left, RESUME_SKIPS)
    return done.stop.exit_code
