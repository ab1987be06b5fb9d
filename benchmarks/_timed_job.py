"""`validate_session` that notes its own CPU time, for benchmarks/orchestration.py: worker processes
import this module by name, so it lives beside the benchmarks, importable from any checkout."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pipeline.jobs.validate import validate_session

NOTES = "COMPACTION_BENCHMARK_NOTES"  # a folder: each worker appends to a file named by its pid
_NOTING = [0.0]  # CPU this worker spent writing its notes since the last one (not the run's cost)


def timed_validate(path: Path, label: str, options: Any) -> Any:
    """The job, and one line `<process CPU before> <job CPU> <noting CPU>` in this worker's notes."""
    before = time.process_time()
    outcome = validate_session(path, label, options)
    spent = time.process_time() - before
    note = os.open(Path(os.environ[NOTES]) / str(os.getpid()), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(note, f"{before} {spent} {_NOTING[0]}\n".encode())
    finally:
        os.close(note)
    _NOTING[0] = time.process_time() - before - spent
    return outcome
