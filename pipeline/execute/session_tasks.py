"""What a worker process runs: a batch of sessions' jobs, each exception turned into its outcome.

Kept apart from the runner so a worker imports the job and the report types it returns, not the
event loop's machinery (logging, discovery). A worker writes each report itself, so rendering and
writing reports runs on every core instead of in the event loop's one process.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pipeline.publish import write_report_now
from pipeline.report.documents import Outcome, crashed
from pipeline.report.render import report_bytes

__all__ = ["BatchItem", "SessionJob", "run_batch", "run_guarded"]

BatchItem = tuple[str, str, object, str]
"""One session of a batch: its path, its label, its job's options, where its report goes."""

Options_contra = TypeVar("Options_contra", contravariant=True)


class SessionJob(Protocol[Options_contra]):
    """One session's work: a module-level function, so worker processes can run it."""

    def __call__(self, path: Path, label: str, options: Options_contra, /) -> Outcome: ...


def run_guarded(job: SessionJob[Any], path: str, label: str, options: object, per_code: int) -> Outcome:
    """Run one session's job; an unexpected exception becomes this session's `Failed` outcome."""
    try:
        return job(Path(path), label, options)
    except Exception:
        return crashed(label, traceback.format_exc(), per_code=per_code)


def run_batch(job: SessionJob[Any], items: tuple[BatchItem, ...], per_code: int) -> tuple[Outcome, ...]:
    """Run a batch of sessions one after another, writing each one's report as it finishes."""
    outcomes = []
    for path, label, options, destination in items:
        outcome = run_guarded(job, path, label, options, per_code)
        try:
            rendered = report_bytes(outcome.report)
        except Exception:  # a report that cannot be rendered is this session's failure only
            outcome = crashed(label, traceback.format_exc(), per_code=per_code)
            rendered = report_bytes(outcome.report)
        write_report_now(Path(destination), rendered)
        outcomes.append(outcome)
    return tuple(outcomes)
