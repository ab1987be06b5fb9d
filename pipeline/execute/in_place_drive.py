"""The in-place run, a runner of its own beside the executor: every session that passed the
cheap checks taken through screen, build and settle, and each report written as its outcome arrives.

An in-place command hands its `InPlaceRunner` an `InPlaceRequest` (as a fleet hands its executor
a `RunRequest`); each backend has one runner, and a runner decides only where candidates are built:
in worker processes of this machine, as Dask tasks, or (one job) in threads of this process
(`WorkerCalls`); the drive itself (`drive`) is the same for all of them. Every step
that touches the state database or the live tree runs in this process whichever runner drives it:
the cheap checks in its main thread (`check_all`), then `InPlacePass.screen` and `settle` (the
transaction among them) in a few of its threads (the state database serializes its own use);
builds read only the frozen bytes. A request with build services (a model summarizer's client,
limiter and run budget) opens them in the drive's event loop and builds every candidate in its
threads, whatever the runner: the model writer's calls go back to that loop, so one limiter and
one budget hold across all the in-place workers. A session's report is written once its outcome
is known, after the commit, never before; a report that cannot be written is recorded on the
outcome. No completion marker is written: the state database records what each session became,
and a replaced session's source is no longer the bytes a marker would vouch for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar, TypeVarTuple

import anyio
import anyio.to_thread
import structlog

from pipeline.execute.seam import report_path
from pipeline.execute.stop_request import INTERRUPTED, StopRequest, run_until_stopped
from pipeline.live_vocabulary import Disposition
from pipeline.publish.files import write_report
from pipeline.publish.live.decisions import Candidate, Declined, InPlaceOutcome
from pipeline.publish.live.session_pass import BuildCandidate, InPlacePass, Pending, Screened
from pipeline.publish.live.source import FrozenSource, SessionTarget
from pipeline.reasons import InPlaceReason

__all__ = [
    "BuildServices",
    "CallsFor",
    "InPlaceRequest",
    "InPlaceRunner",
    "RemoteBuild",
    "ReportOf",
    "WorkerCalls",
    "WorkerLost",
    "check_all",
    "drive",
    "interrupted",
]

log = structlog.get_logger(__name__)


T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class WorkerLost(Exception):
    """The worker a build ran on died (memory, a signal): that session's build only failed."""


class WorkerCalls(Protocol):
    """Where a runner has a build run: a module-level function and its arguments, on a worker."""

    async def __call__(self, function: Callable[[*Ts], T], /, *args: *Ts) -> T:
        """The function's result; `WorkerLost` when its worker died; a stop cancels the call."""
        ...


CallsFor = Callable[[anyio.CapacityLimiter], WorkerCalls]
"""A runner's worker calls, holding at most the limiter's count of builds at once."""
RemoteBuild = Callable[[FrozenSource, Path, WorkerCalls], Awaitable[Candidate | Declined]]
"""Builds a screened session's candidate on a worker (the frozen file's path and digest travel)."""
BuildServices = Callable[[], AbstractAsyncContextManager[BuildCandidate]]
"""Opens shared services in the drive's event loop and yields the build step that uses them."""
ReportOf = Callable[[InPlaceOutcome], bytes | None]
"""A session's report file, or None when the session gets none (skipped at the cost of a stat)."""


def _no_outcome(outcome: InPlaceOutcome) -> None:
    return None


@dataclass(frozen=True, slots=True)
class InPlaceRequest:
    """One in-place command's sessions, as every runner takes them: its pass, how candidates are
    built (here, or on a worker), what each report says and where it goes."""

    run: InPlacePass
    targets: Sequence[Pending]  # the sessions that passed the cheap checks (`check_all`)
    here: BuildCandidate  # a build in this process, on the frozen bytes (one job, or no worker build)
    remote: RemoteBuild | None  # a build on a worker; None: always here
    work: Path  # the run's scratch directory
    report_of: ReportOf
    report_dir: Path
    stop: StopRequest
    on_outcome: Callable[[InPlaceOutcome], None] = field(default=_no_outcome)
    services: BuildServices | None = None  # a model's: opened here, every build in this process


class InPlaceRunner(Protocol):
    """Drives an in-place request's sessions, building candidates where its backend runs them."""

    def run(self, request: InPlaceRequest) -> list[InPlaceOutcome]:
        """Every session's outcome, each report written as it arrived (see `drive`)."""
        ...


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


@dataclass(frozen=True, slots=True)
class _Limits:
    files: anyio.CapacityLimiter  # screen and settle (reads, hashes, fsyncs: the GIL is released)
    workers: anyio.CapacityLimiter  # `jobs` candidates built at once


async def _build(
    request: InPlaceRequest, screened: Screened, calls: WorkerCalls | None, limits: _Limits
) -> Candidate | Declined:
    """The candidate, built on the runner's worker, else in a thread of this process."""
    if calls is not None and request.remote is not None:
        return await request.remote(screened.frozen, request.work, calls)
    return await anyio.to_thread.run_sync(request.here, screened.frozen, request.work, limiter=limits.workers)


async def drive(request: InPlaceRequest, calls_for: CallsFor | None, jobs: int) -> list[InPlaceOutcome]:
    """`_drive`, after opening the request's build services when it has any: then `jobs` builds run
    in threads of this process, next to the loop their model calls use (never on a worker)."""
    if request.services is None:
        return await _drive(request, calls_for, jobs)
    async with request.services() as here:
        return await _drive(replace(request, here=here, remote=None), None, jobs)


async def _drive(request: InPlaceRequest, calls_for: CallsFor | None, jobs: int) -> list[InPlaceOutcome]:
    """Take every session that passed the cheap checks through screen, build (`jobs` at once, on
    the runner's workers when it has any) and settle; each report is written as its outcome
    arrives."""
    jobs = max(1, jobs)
    limits = _Limits(anyio.CapacityLimiter(2 * jobs + 1), anyio.CapacityLimiter(jobs))
    calls = calls_for(limits.workers) if calls_for is not None else None
    run, stop = request.run, request.stop
    pending = iter(request.targets)
    outcomes: list[InPlaceOutcome] = []
    made: set[Path] = set()

    async def one(target: Pending) -> InPlaceOutcome:
        try:
            screened = await anyio.to_thread.run_sync(run.screen, target, limiter=limits.files)
            if not isinstance(screened, Screened):
                return screened
            built: Candidate | Declined | None = None
            with stop.cancellable():  # a build writes nothing live: a stop cancels it
                built = await _build(request, screened, calls, limits)
            if built is None or stop.requested:  # cancelled, or ended by the signal: untouched
                return interrupted(target.target)
            with anyio.CancelScope(shield=True):  # a transaction in flight always completes
                settled = await anyio.to_thread.run_sync(run.settle, screened, built, limiter=limits.files)
        except Exception:
            return _internal_error(target.target)
        return settled

    async def reported(outcome: InPlaceOutcome) -> InPlaceOutcome:
        data = request.report_of(outcome)
        if data is None:
            return outcome
        try:
            await write_report(report_path(request.report_dir, outcome.target), data, made=made)
        except OSError:
            return outcome.with_report_failed()
        return outcome

    async def feed() -> None:
        for target in pending:
            if stop.requested:
                outcomes.append(interrupted(target.target))
                continue
            outcome = await reported(await one(target))
            outcomes.append(outcome)
            request.on_outcome(outcome)

    # Twice as many sessions in flight as builders: one is frozen or replaced while the other is
    # built, so no worker waits on the disk.
    await run_until_stopped(stop, feed, max(1, min(4 * jobs, len(request.targets))))
    return outcomes
