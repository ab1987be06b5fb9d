"""The local executor: one anyio task group over many sessions, each batch in a worker process.

Workers receive the planned tasks (a path, a label, the bound job, where the report and marker
go) and return small typed outcomes; parsed records never cross a process boundary. A fixed
number of feeder tasks pull batches from a shared iterator, so a fleet of any size holds only
`jobs` batches in flight. A batch whose worker died (or whose results did not come back) runs
again one session at a time: only the session that kills its worker fails. With shared services,
the sessions run one at a time in threads of this process, next to the event loop their model
calls use. The in-place commands' runner for this machine (`ProcessPoolInPlaceRunner`) builds
their candidates in the same kind of worker processes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar, TypeVarTuple

import anyio
import anyio.to_process
import anyio.to_thread
import structlog

from pipeline.execute.in_place_drive import InPlaceRequest, WorkerLost, drive
from pipeline.execute.seam import (
    RunPlan,
    RunRequest,
    RunResult,
    WorkFor,
    log_result,
    plan_batches,
    plan_run,
    report_name,
)
from pipeline.execute.session_tasks import SessionTask, TaskResult, publish, run_batch
from pipeline.execute.stop_request import run_until_stopped
from pipeline.formats.registry import missing_compiled_cores
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.read.discover import SessionFile
from pipeline.report.documents import crashed

__all__ = ["BATCH_BYTES", "BATCH_SESSIONS", "ProcessPoolExecutor", "ProcessPoolInPlaceRunner", "resolve_jobs"]

log = structlog.get_logger(__name__)

BATCH_BYTES: Final = 16 * 1024 * 1024
"""Bytes of small sessions one worker call takes: a call costs 1-3 ms of round trip and pickling,
about 1% of analysing this much; `BATCHES_PER_WORKER` still splits a small fleet finer."""
BATCH_SESSIONS: Final = 128  # at most this many sessions a call, so progress and crashes stay fine-grained
NO_FETCH: Final = 1  # local sessions are read in place: no URL is fetched by this executor's workers
T = TypeVar("T")
Ts = TypeVarTuple("Ts")


def resolve_jobs(jobs: int) -> int:
    """0 means one worker per CPU core."""
    return jobs if jobs > 0 else (os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class ProcessPoolExecutor:
    """`jobs` worker processes of this machine (0: one per core)."""

    jobs: int

    def run(self, request: RunRequest) -> RunResult:
        """Run every session of the request here; the outcomes by report label."""
        return anyio.run(self.run_async, request)

    async def run_async(self, request: RunRequest) -> RunResult:
        if request.services is None:
            return await self._run(request, request.work_for, threads=False)
        async with request.services.in_process() as work_for:
            return await self._run(request, work_for, threads=True)

    async def _run(self, request: RunRequest, work_for: WorkFor, *, threads: bool) -> RunResult:
        started = time.perf_counter()
        for notice in missing_compiled_cores():
            log.warning("line_scanner_not_compiled", notice=notice)
        workers = resolve_jobs(self.jobs)
        plan = plan_run(request, work_for)
        sessions = request.sessions
        batches = (
            [(session,) for session in sessions]
            if threads
            else plan_batches(plan.sized, BATCH_BYTES, BATCH_SESSIONS, workers)
        )
        gathered = _Gathered(request, plan)
        pending: Iterator[tuple[SessionFile, ...]] = iter(batches)
        limiter = anyio.CapacityLimiter(workers)
        stop = request.stop

        async def run(batch: tuple[SessionFile, ...]) -> None:
            done: tuple[TaskResult, ...] | None = None
            try:
                with stop.cancellable():  # a stop kills a worker's batch: its sessions are left not done
                    done = await _call(threads, plan.batch(batch), request.per_code, limiter)
            except Exception as exc:  # the worker died (memory, signal) or could not send its results back
                if stop.requested and isinstance(exc, anyio.BrokenWorkerProcess):  # Ctrl-C reached it too
                    return  # not done, not crashed
                if len(batch) == 1:
                    gathered.crash(batch[0], repr(exc))
                    return
                for session in batch:  # find the session that did it: it alone fails
                    await run((session,))
                return
            if done is None or stop.requested:
                return
            for result in done:
                gathered.record(result)

        async def feed() -> None:
            for batch in pending:
                if stop.requested:
                    return
                await run(batch)

        await run_until_stopped(stop, feed, min(workers, max(1, len(sessions))))
        return gathered.result(started)


async def _call(
    threads: bool, batch: tuple[SessionTask, ...], per_code: int, limiter: anyio.CapacityLimiter
) -> tuple[TaskResult, ...]:
    """A batch in a thread, or in a worker process that a stop may kill (cancellable)."""
    if threads:
        return await anyio.to_thread.run_sync(run_batch, batch, per_code, NO_FETCH, limiter=limiter)
    return await anyio.to_process.run_sync(
        run_batch, batch, per_code, NO_FETCH, cancellable=True, limiter=limiter
    )


@dataclass(frozen=True, slots=True)
class _ProcessCalls:
    """A build in a worker process of this machine, `limiter` of them at once; a stop kills it."""

    limiter: anyio.CapacityLimiter

    async def __call__(self, function: Callable[[*Ts], T], /, *args: *Ts) -> T:
        try:
            return await anyio.to_process.run_sync(function, *args, cancellable=True, limiter=self.limiter)
        except anyio.BrokenWorkerProcess as exc:  # the worker died (memory, signal): this build only
            raise WorkerLost(repr(exc)) from exc


@dataclass(frozen=True, slots=True)
class ProcessPoolInPlaceRunner:
    """The in-place drive with candidates built in `jobs` worker processes of this machine (0: one
    per core), or with one job in a thread of this process, on the frozen bytes (no worker start-up)."""

    jobs: int

    def run(self, request: InPlaceRequest) -> list[InPlaceOutcome]:
        """Every session's outcome (see `in_place_drive.drive`)."""
        jobs = resolve_jobs(self.jobs)
        return anyio.run(drive, request, _ProcessCalls if jobs > 1 else None, jobs)


class _Gathered:
    """The outcomes and report paths as they come back."""

    def __init__(self, request: RunRequest, plan: RunPlan) -> None:
        self.request, self.plan = request, plan
        self.outcomes: dict[str, TaskResult] = {}

    def record(self, result: TaskResult) -> None:
        log_result(result)
        self.outcomes[result.report_label] = result
        self.request.on_outcome(result.outcome)

    def crash(self, session: SessionFile, error: str) -> None:  # no worker wrote this report
        per_code = self.request.per_code
        task = self.plan.tasks[session.report_label]
        outcome = publish(task, crashed(session.label, error, per_code=per_code), per_code, None)
        self.record(TaskResult(session.report_label, outcome, False))

    def result(self, started: float) -> RunResult:
        labels = sorted(self.outcomes)
        return RunResult(
            {label: self.outcomes[label].outcome for label in labels},
            {label: Path(report_name(label)).as_posix() for label in labels},
            (time.perf_counter() - started) * 1000,
        )
