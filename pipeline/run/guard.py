"""What a worker process runs: one session's job, with any exception turned into its outcome.

Kept apart from the runner so a worker imports the job and the report types it returns, not the
event loop's machinery (logging, report writing, discovery).
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pipeline.report.documents import Outcome, crashed

__all__ = ["SessionJob", "run_guarded"]

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
