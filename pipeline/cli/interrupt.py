"""Ctrl-C and SIGTERM as a clean stop: no new session starts, what is in flight ends safely.

While a run holds `stop_on_signals()`, SIGINT and SIGTERM only set its `StopRequest` (a second
one is ignored: the replacement in flight must finish or roll back, never be torn). The loops
start no new session once it is set; a candidate being built is cancelled (it writes nothing
live); a transaction in flight always completes, committed or rolled back. The run then writes
its summary with what was done and what was not, says in one line how to resume (`say_stopped`),
and exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Final

from pipeline.execute.stop_request import StopRequest

__all__ = ["RESUME_AGAIN", "RESUME_LISTED", "RESUME_SKIPS", "say_stopped", "stop_on_signals"]

RESUME_SKIPS: Final = "run the same command again to resume: finished sessions are skipped"
RESUME_AGAIN: Final = "run the same command again for a complete result"
RESUME_LISTED: Final = "summary.json lists them under interrupted.not_done: run the command on those again"
_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


def say_stopped(stop: StopRequest, done: int, left: int, then: str) -> None:
    """The one line that says what the stop did and how to resume."""
    print(
        f"compaction: stopped by {stop.name}: {done} session(s) finished, {left} not started or "
        f"cancelled (untouched); {then}",
        file=sys.stderr,
    )


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """SIGINT and SIGTERM set the yielded request instead of ending the process; restored after."""
    stop = StopRequest()

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.signum is None:
            stop.signum = signum

    previous = {number: signal.getsignal(number) for number in _SIGNALS}
    for number in _SIGNALS:
        signal.signal(number, handle)
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
