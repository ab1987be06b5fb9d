"""What a Dask task runs: a batch of sessions, each guarded, resumed from its marker when it can be.

Kept apart from the client side (`cluster.py`) so a worker imports the job, the report types and
the readers, never Dask's client or the console. A session behind a URL is fetched into a local
temporary file in blocks (`pipeline.read.remote.fetch`) and the ordinary job runs on that file.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.publish import read_object
from pipeline.read.remote import fetch, sha256_of
from pipeline.report.documents import Outcome
from pipeline.report.resume import resumed_outcome
from pipeline.run.guard import SessionJob, run_guarded

__all__ = ["SessionTask", "TaskResult", "run_batch"]


@dataclass(frozen=True, slots=True)
class SessionTask:
    """One session as a worker receives it: where to read it, its options, where its marker is."""

    report_label: str
    label: str
    path: str
    url: str | None
    options: object
    digest: str
    marker: str | None  # a path or URL; None when the run does not resume


@dataclass(frozen=True, slots=True)
class TaskResult:
    """One session's outcome, and whether it came from a resume marker (its report is in place)."""

    report_label: str
    outcome: Outcome
    resumed: bool


def _marker(location: str) -> bytes | None:
    if "://" in location:
        return read_object(location)
    try:
        return Path(location).read_bytes()
    except FileNotFoundError:
        return None


def _resumed(task: SessionTask, source: Path) -> Outcome | None:
    data = _marker(task.marker) if task.marker is not None else None
    if data is None:
        return None
    return resumed_outcome(data, sha256_of(source, 1 << 22), task.digest)


def _one(job: SessionJob[Any], task: SessionTask, per_code: int, block_bytes: int) -> TaskResult:
    if task.url is None:
        source = Path(task.path)
        earlier = _resumed(task, source)
        outcome = earlier or run_guarded(job, task.path, task.label, task.options, per_code)
        return TaskResult(task.report_label, outcome, earlier is not None)
    with tempfile.TemporaryDirectory(prefix="compaction-") as directory:
        local = Path(directory) / Path(task.label).name
        with local.open("wb") as handle:
            fetch(task.url, handle, block_bytes)
        earlier = _resumed(task, local)
        outcome = earlier or run_guarded(job, str(local), task.label, task.options, per_code)
        return TaskResult(task.report_label, outcome, earlier is not None)


def run_batch(
    job: SessionJob[Any], tasks: tuple[SessionTask, ...], per_code: int, block_bytes: int
) -> tuple[TaskResult, ...]:
    """Run every session of a batch in turn; one session's exception is that session's outcome."""
    return tuple(_one(job, task, per_code, block_bytes) for task in tasks)
