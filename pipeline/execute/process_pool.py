"""The batch runner: one anyio task group over many sessions, each in a worker process.

A job is any picklable function `(path, label, options) -> Outcome` (`SessionJob`); the runner
knows jobs only through that protocol. Workers receive a path, a label and typed options and
return a small typed outcome; parsed records never cross a process boundary. A fixed number of
feeder tasks pull sessions from a shared iterator, so a fleet of any size holds only `jobs`
sessions in flight; small sessions travel in batches, and a worker writes each report itself. An
exception, or a session that kills its worker, becomes that session's `Failed` outcome; the others
go on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.abc
import anyio.to_process
import anyio.to_thread
import structlog

from pipeline.execute.session_tasks import BatchItem, SessionJob, run_batch
from pipeline.formats.claude_code.compiled import NOTICE, scanner_built
from pipeline.publish import write_report
from pipeline.read.discover import SessionFile
from pipeline.report.documents import Outcome, crashed
from pipeline.report.render import report_bytes

__all__ = [
    "Prepare",
    "RunResult",
    "SessionJob",
    "plan_batches",
    "report_path",
    "resolve_jobs",
    "run_sessions",
    "run_sessions_blocking",
]

log = structlog.get_logger(__name__)

BATCH_BYTES: Final = 4 * 1024 * 1024
"""Bytes of small sessions one worker call takes: a call costs about a millisecond of round trip."""
BATCH_SESSIONS: Final = 32  # at most this many sessions a call, so progress and crashes stay fine-grained
BATCHES_PER_WORKER: Final = 8  # at least this many batches a worker where the fleet allows: no idle tail


@dataclass(frozen=True, slots=True)
class RunResult:
    """Every outcome (keyed by the session's report label), its report path, and the run time."""

    outcomes: dict[str, Outcome]
    report_paths: dict[str, str]
    elapsed_ms: float

    @property
    def failed(self) -> int:
        """Sessions that make the run exit non-zero."""
        return sum(outcome.failed for outcome in self.outcomes.values())


def resolve_jobs(jobs: int) -> int:
    """0 means one worker per CPU core."""
    return jobs if jobs > 0 else (os.cpu_count() or 1)


def report_path(report_dir: Path, session: SessionFile) -> Path:
    """`<report dir>/<root label>/<label>.report.json`, mirroring the input layout."""
    return report_dir / f"{session.report_label}.report.json"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # the job reports it unreadable
        return 0


def plan_batches(sessions: Sequence[SessionFile], workers: int) -> list[tuple[SessionFile, ...]]:
    """Sessions grouped for the workers, largest first, so the last batches are the small ones.

    A batch holds one large session, or many small ones up to `BATCH_BYTES` and `BATCH_SESSIONS`
    (fewer bytes where that still leaves each worker `BATCHES_PER_WORKER` batches).
    """
    sizes = [_size(session.path) for session in sessions]
    budget = max(1, min(BATCH_BYTES, sum(sizes) // max(1, workers * BATCHES_PER_WORKER)))
    batches: list[tuple[SessionFile, ...]] = []
    current: list[SessionFile] = []
    held = 0
    for position in sorted(range(len(sessions)), key=lambda i: -sizes[i]):
        if current and (held + sizes[position] > budget or len(current) >= BATCH_SESSIONS):
            batches.append(tuple(current))
            current, held = [], 0
        current.append(sessions[position])
        held += sizes[position]
    if current:
        batches.append(tuple(current))
    return batches


def _items(
    batch: tuple[SessionFile, ...], options_for: Callable[[SessionFile], object], report_dir: Path
) -> tuple[BatchItem, ...]:
    return tuple((str(s.path), s.label, options_for(s), str(report_path(report_dir, s))) for s in batch)


Prepare = Callable[[], AbstractAsyncContextManager[Callable[[SessionFile], object]]]
"""Opens what a run's sessions share in this process (a model's client and limiter) and yields
the options of each session; its jobs then run in threads, next to the event loop they call."""


async def run_sessions(
    sessions: Sequence[SessionFile],
    job: SessionJob[Any],
    options_for: Callable[[SessionFile], object],
    *,
    jobs: int,
    report_dir: Path,
    per_code: int,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    prepare: Prepare | None = None,
) -> RunResult:
    """Run `job(path, label, options_for(session))` for every session, batched, in worker processes.

    A batch whose worker died runs again one session at a time: only the session that kills its
    worker fails. With `prepare`, the jobs run one session at a time in threads of this process
    with the options it yields (their model calls share its client and limiter)."""
    if prepare is None:
        return await _run(sessions, job, options_for, jobs, report_dir, per_code, on_outcome, threads=False)
    async with prepare() as shared_options:
        return await _run(sessions, job, shared_options, jobs, report_dir, per_code, on_outcome, threads=True)


async def _run(
    sessions: Sequence[SessionFile],
    job: SessionJob[Any],
    options_for: Callable[[SessionFile], object],
    jobs: int,
    report_dir: Path,
    per_code: int,
    on_outcome: Callable[[Outcome], None],
    *,
    threads: bool,
) -> RunResult:
    started = time.perf_counter()
    if not scanner_built():
        log.warning("line_scanner_not_compiled", notice=NOTICE)
    outcomes: dict[str, Outcome] = {}
    paths: dict[str, str] = {}
    workers = resolve_jobs(jobs)
    batches = [(session,) for session in sessions] if threads else plan_batches(sessions, workers)
    pending: Iterator[tuple[SessionFile, ...]] = iter(batches)
    run_sync = anyio.to_thread.run_sync if threads else anyio.to_process.run_sync
    limiter = anyio.CapacityLimiter(workers)
    made: set[Path] = set()

    def record(session: SessionFile, outcome: Outcome) -> None:
        if outcome.error:
            log.error("session_internal_error", session=session.label, traceback=outcome.error)
        paths[session.report_label] = report_path(report_dir, session).relative_to(report_dir).as_posix()
        outcomes[session.report_label] = outcome
        on_outcome(outcome)

    async def crash(session: SessionFile, error: str) -> None:  # no worker wrote this report
        outcome = crashed(session.label, error, per_code=per_code)
        await write_report(report_path(report_dir, session), report_bytes(outcome.report), made=made)
        record(session, outcome)

    async def run(batch: tuple[SessionFile, ...]) -> None:
        items = _items(batch, options_for, report_dir)
        try:
            done = await run_sync(run_batch, job, items, per_code, limiter=limiter)
        except anyio.BrokenWorkerProcess as exc:  # the worker died (memory, signal)
            if len(batch) == 1:
                await crash(batch[0], repr(exc))
                return
            for session in batch:  # find the session that did it: it alone fails
                await run((session,))
            return
        for session, outcome in zip(batch, done, strict=True):
            record(session, outcome)

    async def feed() -> None:
        for batch in pending:
            await run(batch)

    async with anyio.create_task_group() as group:
        for _ in range(min(workers, max(1, len(sessions)))):
            group.start_soon(feed)
    ordered = {label: outcomes[label] for label in sorted(outcomes)}
    return RunResult(ordered, paths, (time.perf_counter() - started) * 1000)


def run_sessions_blocking(
    sessions: Sequence[SessionFile],
    job: SessionJob[Any],
    options_for: Callable[[SessionFile], object],
    *,
    jobs: int,
    report_dir: Path,
    per_code: int,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    prepare: Prepare | None = None,
) -> RunResult:
    """`run_sessions` in a fresh event loop, for the command line's synchronous entry points."""
    run = partial(
        run_sessions,
        sessions,
        job,
        options_for,
        jobs=jobs,
        report_dir=report_dir,
        per_code=per_code,
        on_outcome=on_outcome,
        prepare=prepare,
    )
    return anyio.run(run)
