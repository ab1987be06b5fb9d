"""The in-place drive: every session that passed the cheap checks taken through screen, build
and settle, on this machine's executor, and each report written as its outcome arrives.

Every step that touches the state database or the live tree runs in this process: the cheap
checks in its main thread (`check_all`), then `InPlacePass.screen` and `settle` (the transaction
among them) in a few of its threads (the state database serializes its own use); candidates are
built in between, in worker processes under `--jobs` or in threads (`in_this_process`), from the
frozen bytes only. A session's report is written once its outcome is known, after the commit,
never before; a report that cannot be written is recorded on the outcome.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
import structlog

from pipeline.execute.seam import report_path
from pipeline.execute.stop_request import INTERRUPTED, StopRequest, run_until_stopped
from pipeline.live_vocabulary import Disposition
from pipeline.publish.files import write_report
from pipeline.publish.live.decisions import Candidate, Declined, InPlaceOutcome
from pipeline.publish.live.session_pass import BuildCandidate, InPlacePass, Pending, Screened
from pipeline.publish.live.source import SessionTarget
from pipeline.reasons import InPlaceReason

__all__ = ["BuildStep", "Drive", "Limits", "ReportOf", "check_all", "drive", "in_this_process", "interrupted"]

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
    stop: StopRequest


def in_this_process(builder: BuildCandidate, work: Path) -> BuildStep:
    """Candidates built by `builder` in threads of this process (no worker start-up)."""

    async def build(screened: Screened, limits: Limits) -> Candidate | Declined:
        return await anyio.to_thread.run_sync(builder, screened.frozen, work, limiter=limits.workers)

    return build


def check_all(
    run: InPlacePass,
    sessions: Iterable[SessionTarget],
    roots: Sequence[tuple[Path, str]],
    stop: StopRequest,
) -> tuple[list[Pending], list[InPlaceOutcome]]:
    """Recover, then the cheap checks of every session: those to drive, and those already done
    (or left untouched by a stop)."""
    targets = run.begin(sessions, roots)
    checked = [interrupted(target) if stop.requested else run.check(target) for target in targets]
    pending = [item for item in checked if isinstance(item, Pending)]
    return pending, [item for item in checked if not isinstance(item, Pending)]


def interrupted(target: SessionTarget) -> InPlaceOutcome:
    """A session a stop left untouched: the next run takes it."""
    return InPlaceOutcome(target, Disposition.INTERRUPTED, reasons=(INTERRUPTED,))


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
            built: Candidate | Declined | None = None
            with plan.stop.cancellable():  # a build writes nothing live: a stop cancels it
                built = await plan.build(screened, limits)
            if built is None or plan.stop.requested:  # cancelled, or ended by the signal: untouched
                return interrupted(target.target)
            with anyio.CancelScope(shield=True):  # a transaction in flight always completes
                settled = await anyio.to_thread.run_sync(
                    plan.run.settle, screened, built, limiter=limits.files
                )
        except Exception:
            return _internal_error(target.target)
        return settled

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
            if plan.stop.requested:
                outcomes.append(interrupted(target.target))
                continue
            outcome = await reported(await one(target))
            outcomes.append(outcome)
            on_outcome(outcome)

    # Twice as many sessions in flight as builders: one is frozen or replaced while the other is
    # built, so no worker waits on the disk.
    await run_until_stopped(plan.stop, feed, max(1, min(4 * jobs, len(targets))))
    return outcomes
