"""Session jobs that misbehave on purpose, for tests of the runner (module level, so workers run them).

`flaky_validate` validates a session like the real job, except that a file whose name says so
raises (`raise` in its name), kills its own worker process (`kill`), kills it the first time only
(`dieonce`: a `.died` marker file beside it remembers, and each finished run appends to `.runs`),
or records when it ran (`timed`) in a file beside it, so a test can see how many ran at once.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from pipeline.jobs.validate import ValidateOptions, validate_session
from pipeline.report.documents import Outcome

__all__ = ["flaky_validate"]

HOLD_SECONDS = 0.3  # a timed session keeps its worker busy this long


def flaky_validate(path: Path, label: str, options: ValidateOptions) -> Outcome:
    """`validate_session`, or a failure chosen by the file's name."""
    if "raise" in path.name:
        raise RuntimeError("a bug in a job")
    if "dieonce" in path.name:
        marker = path.with_suffix(".died")
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        with path.with_suffix(".runs").open("a") as runs:
            runs.write(f"{os.getpid()}\n")
    if "kill" in path.name:
        os.kill(os.getpid(), signal.SIGKILL)
    if "timed" in path.name:
        started = time.time()
        time.sleep(HOLD_SECONDS)
        path.with_suffix(".ran").write_text(f"{started} {time.time()} {os.getpid()}")
    return validate_session(path, label, options)
