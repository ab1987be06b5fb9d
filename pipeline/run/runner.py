"""The batch runner: one anyio task group over many sessions, each in a worker process.

A job is any picklable function `(path, label, options) -> Outcome` (`SessionJob`); the runner
knows jobs only through that protocol. Workers receive a path, a label and typed options and
return a small typed outcome; parsed records never cross a process boundary. A fixed number of
feeder tasks pull sessions from a shared iterator, so a fleet of any size holds only `jobs`
sessions in flight. Reports are written from the event loop as outcomes arrive. An exception,
or a session that kills its worker, becomes that session's `Failed` outcome; the others go on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_process
import structlog

from pipeline.formats.claude_code.compiled import NOTICE, scanner_built
from pipeline.publish import write_report
from pipeline.read.discover import SessionFile
from pipeline.report.documents import Outcome, crashed
from pipeline.report.render import report_bytes
from pipeline.run.guard import SessionJob, run_guarded

__all__ = ["RunResult", "SessionJob", "report_path", "resolve_jobs", "run_sessions", "run_sessions_blocking"]

log = structlog.get_logger(__name__)


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


async def run_sessions(
    sessions: Sequence[SessionFile],
    job: SessionJob[Any],
    options_for: Callable[[SessionFile], object],
    *,
    jobs: int,
    report_dir: Path,
    per_code: int,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
) -> RunResult:
    """Run `job(path, label, options_for(session))` for every session in worker processes."""
    started = time.perf_counter()
    if not scanner_built():
        log.warning("line_scanner_not_compiled", notice=NOTICE)
    outcomes: dict[str, Outcome] = {}
    paths: dict[str, str] = {}
    pending: Iterator[SessionFile] = iter(sessions)
    limiter = anyio.CapacityLimiter(resolve_jobs(jobs))
    made: set[Path] = set()

    async def record(session: SessionFile, outcome: Outcome) -> None:
        destination = report_path(report_dir, session)
        await write_report(destination, report_bytes(outcome.report), made=made)
        paths[session.report_label] = destination.relative_to(report_dir).as_posix()
        outcomes[session.report_label] = outcome
        on_outcome(outcome)

    async def feed(group: anyio.abc.TaskGroup) -> None:
        for session in pending:
            arguments = (job, str(session.path), session.label, options_for(session), per_code)
            try:
                outcome = await anyio.to_process.run_sync(run_guarded, *arguments, limiter=limiter)
            except anyio.BrokenWorkerProcess as exc:  # the worker died (memory, signal): this session only
                outcome = crashed(session.label, repr(exc), per_code=per_code)
            if outcome.error:
                log.error("session_internal_error", session=session.label, traceback=outcome.error)
            group.start_soon(record, session, outcome)  # the worker moves on while the report is written

    async with anyio.create_task_group() as group:
        for _ in range(min(resolve_jobs(jobs), max(1, len(sessions)))):
            group.start_soon(feed, group)
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
    )
    return anyio.run(run)
