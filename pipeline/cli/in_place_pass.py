"""The loop of the commands that replace session files in place, and what they share: the work
directory, where reports go, the receipts of a failed report, the exit code.

Every step that touches the state database or the live tree runs in this process: the cheap
checks in its main thread, then `InPlacePass.screen` and `settle` (the transaction among them)
in a few of its threads (the state database serializes its own use); candidates are built in
between, in worker processes under `--jobs`, from the frozen bytes only. A session's
report is written from the event loop once its outcome is known, after the commit, never
before; a committed session whose report cannot be written makes the run exit 3 and prints its
receipt on stdout.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
import msgspec
import structlog

from pipeline.cli.compress_command import check_apart
from pipeline.cli.console import progress_bar
from pipeline.cli.fleet_command import SUMMARY_NAME, default_report_dir
from pipeline.execute.seam import report_path
from pipeline.publish import (
    Candidate,
    Declined,
    Disposition,
    InPlaceOptions,
    InPlaceOutcome,
    InPlacePass,
    Pending,
    RecordedResult,
    Screened,
    SessionTarget,
    in_place_options,
    open_state,
    platform_probe,
    state_options,
)
from pipeline.publish.documents import ReceiptSection, receipt_section
from pipeline.publish.files import write_bytes_atomic, write_report
from pipeline.publish.recovery import Recovered
from pipeline.reasons import InPlaceReason
from pipeline.report.render import json_bytes
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode

__all__ = [
    "BuildStep",
    "Drive",
    "Limits",
    "LiveCommand",
    "PassDone",
    "drive",
    "finish",
    "in_place_exit",
    "live_report_dir",
    "run_pass",
    "work_directory",
]

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Limits:
    """The run's two limiters: threads of this process freezing and replacing files, and builds."""

    files: anyio.CapacityLimiter  # screen and settle (reads, hashes, fsyncs: the GIL is released)
    workers: anyio.CapacityLimiter  # `jobs` candidates built at once


BuildStep = Callable[[Screened, Limits], Awaitable[Candidate | Declined]]
"""Builds the candidate of a screened session (in a worker process, or in a thread of this one)."""
ReportOf = Callable[[InPlaceOutcome], bytes | None]
"""A session's report file, or None when the session gets none (skipped at the cost of a stat)."""


@dataclass(frozen=True, slots=True)
class Drive:
    """One in-place command's loop: its pass, how candidates are built, what each report says."""

    run: InPlacePass
    build: BuildStep
    report_of: ReportOf
    report_dir: Path
    jobs: int


def _internal_error(target: SessionTarget) -> InPlaceOutcome:
    """A step raised: the session is not committed (an intent left behind is recovered next run)."""
    log.error("in_place_internal_error", session=target.report_label, exc_info=True)
    return InPlaceOutcome(target, Disposition.NOT_COMMITTED, reasons=(InPlaceReason.INTERNAL_ERROR.value,))


async def drive(
    plan: Drive, targets: Sequence[Pending], on_outcome: Callable[[InPlaceOutcome], None]
) -> list[InPlaceOutcome]:
    """Take every session that passed the cheap checks through screen, build and settle; each
    report is written as its outcome arrives."""
    jobs = max(1, plan.jobs)
    limits = Limits(anyio.CapacityLimiter(2 * jobs + 1), anyio.CapacityLimiter(jobs))
    pending = iter(targets)
    outcomes: list[InPlaceOutcome] = []
    made: set[Path] = set()

    async def one(target: Pending) -> InPlaceOutcome:
        try:
            screened = await anyio.to_thread.run_sync(plan.run.screen, target, limiter=limits.files)
            if not isinstance(screened, Screened):
                return screened
            built = await plan.build(screened, limits)
            return await anyio.to_thread.run_sync(plan.run.settle, screened, built, limiter=limits.files)
        except Exception:
            return _internal_error(target.target)

    async def reported(outcome: InPlaceOutcome) -> InPlaceOutcome:
        data = plan.report_of(outcome)
        if data is None:
            return outcome
        try:
            await write_report(report_path(plan.report_dir, outcome.target), data, made=made)
        except OSError:
            return outcome.with_report_failed()
        return outcome

    async def feed() -> None:
        for target in pending:
            outcome = await reported(await one(target))
            outcomes.append(outcome)
            on_outcome(outcome)

    async with anyio.create_task_group() as group:
        # Twice as many sessions in flight as builders: one is frozen or replaced while the
        # other is built, so no worker waits on the disk.
        for _ in range(max(1, min(4 * jobs, len(targets)))):
            group.start_soon(feed)
    return outcomes


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
class LiveCommand:
    """What an in-place command brings to the shared pass: how it builds, records and reports."""

    name: str  # the progress bar's label and the report directory's prefix
    result: RecordedResult  # what a commit is recorded as
    config_digest: str  # a declined session is skipped while it and this digest stay the same
    require_resume_proof: bool
    jobs: int
    build_for: Callable[[Path], BuildStep]  # the build step, given the work directory
    report_of: ReportOf


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


def run_pass(
    command: LiveCommand,
    settings: Settings,
    sessions: Sequence[SessionTarget],
    roots: Sequence[tuple[Path, str]],
    *,
    quiet: bool,
) -> PassDone:
    """Lock the state, recover, and take every session through the pass (reports as they come).

    The cheap checks run first, in this thread; only the sessions that pass them go through the
    event loop, and the work directory is made only when there are some.
    """
    state_settings = state_options(settings.state)
    configured = settings.in_place.work_dir
    root_paths = [root for root, _ in roots]
    if configured:
        check_apart(Path(configured).expanduser(), root_paths, "the work directory")
    started = time.perf_counter()
    options = in_place_options(
        settings.in_place,
        work_dir=Path(configured).expanduser() if configured else Path(tempfile.gettempdir()),
        config_digest=command.config_digest,
        require_resume_proof=command.require_resume_proof,
        result=command.result,
    )
    work: Path | None = None
    with open_state(state_settings) as state:
        run = InPlacePass(options, state, clock_ns=time.time_ns, probe=platform_probe())
        checked = [run.check(target) for target in run.begin(sessions, roots)]
        pending = [item for item in checked if isinstance(item, Pending)]
        outcomes = [item for item in checked if not isinstance(item, Pending)]
        report_dir = live_report_dir(settings, command.name, state_settings.directory)
        if pending:  # an unchanged fleet starts no event loop, thread, worker or work directory
            with work_directory(configured, root_paths) as work:
                plan = Drive(run, command.build_for(work), command.report_of, report_dir, command.jobs)
                with progress_bar(len(pending), enabled=not quiet, description=command.name) as advance:
                    outcomes += anyio.run(drive, plan, pending, advance)
    elapsed = (time.perf_counter() - started) * 1000
    ordered = tuple(sorted(outcomes, key=lambda outcome: outcome.target.report_label))
    return PassDone(ordered, options, run.recovered, report_dir, state_settings.directory, work, elapsed)


def finish(done: PassDone, summary: object, present: Callable[[], None], *, quiet: bool) -> ExitCode:
    """Write the summary, show the tables, and say how the run ended (see `in_place_exit`)."""
    destination = done.report_dir / SUMMARY_NAME
    try:
        write_bytes_atomic(destination, json_bytes(summary), durable=False)  # regenerated by any rerun
        written = True
    except OSError as exc:
        print(f"compaction: error: cannot write {destination}: {exc.strerror}", file=sys.stderr)
        written = False
    if not quiet:
        present()
    return in_place_exit(done.outcomes, summary_written=written)
