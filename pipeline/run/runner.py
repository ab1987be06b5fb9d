"""The batch runner: one anyio task group over many sessions, each in a worker process.

Workers receive a path, a label and plain options and return a small `SessionOutcome`; parsed
records never cross a process boundary. A fixed number of feeder tasks pull sessions from a
shared iterator, so a fleet of any size holds only `jobs` sessions in flight. Reports are written
from the event loop as outcomes arrive. A session that crashes its worker becomes an
`internal-error` outcome; the others continue.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_process
import structlog

from pipeline.findings import Finding
from pipeline.jobs.validate import run_guarded
from pipeline.publish import write_json_report
from pipeline.read.discover import SessionFile
from pipeline.report.sessions import SESSION_SCHEMA, SessionOutcome, findings_report
from pipeline.vocabulary import FindingCode, SessionStatus, Severity

__all__ = ["RunResult", "resolve_jobs", "run_sessions", "run_sessions_blocking"]

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RunResult:
    """Every outcome (keyed by the session's report label), its report path, and the run time."""

    outcomes: dict[str, SessionOutcome]
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


def _crashed(session: SessionFile, error: BaseException) -> SessionOutcome:
    finding = Finding(FindingCode.INTERNAL_ERROR, Severity.ERROR)
    report = {
        "schema": SESSION_SCHEMA,
        "session": {"label": session.label},
        "status": SessionStatus.INTERNAL_ERROR.value,
        **findings_report([finding]),
    }
    return SessionOutcome(session.label, SessionStatus.INTERNAL_ERROR, report, error=repr(error))


async def run_sessions(
    sessions: Sequence[SessionFile],
    job: Callable[..., SessionOutcome],
    job_args: Mapping[str, tuple[Any, ...]],
    *,
    jobs: int,
    report_dir: Path,
    on_outcome: Callable[[SessionOutcome], None] = lambda outcome: None,
) -> RunResult:
    """Run `job(path, label, *job_args[report_label])` for every session in worker processes."""
    started = time.perf_counter()
    outcomes: dict[str, SessionOutcome] = {}
    paths: dict[str, str] = {}
    pending: Iterator[SessionFile] = iter(sessions)
    limiter = anyio.CapacityLimiter(resolve_jobs(jobs))
    made: set[Path] = set()

    async def record(session: SessionFile, outcome: SessionOutcome) -> None:
        destination = report_path(report_dir, session)
        await write_json_report(destination, dict(outcome.report), made=made)
        paths[session.report_label] = destination.relative_to(report_dir).as_posix()
        outcomes[session.report_label] = outcome
        on_outcome(outcome)

    async def feed(group: anyio.abc.TaskGroup) -> None:
        for session in pending:
            try:
                outcome = await anyio.to_process.run_sync(
                    run_guarded,
                    job,
                    str(session.path),
                    session.label,
                    *job_args[session.report_label],
                    limiter=limiter,
                )
            except anyio.BrokenWorkerProcess as exc:  # the worker died (memory, signal): this session only
                outcome = _crashed(session, exc)
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
    job: Callable[..., SessionOutcome],
    job_args: Mapping[str, tuple[Any, ...]],
    *,
    jobs: int,
    report_dir: Path,
    on_outcome: Callable[[SessionOutcome], None] = lambda outcome: None,
) -> RunResult:
    """`run_sessions` in a fresh event loop, for the command line's synchronous entry points."""
    return anyio.run(
        partial(
            run_sessions, sessions, job, job_args, jobs=jobs, report_dir=report_dir, on_outcome=on_outcome
        )
    )
