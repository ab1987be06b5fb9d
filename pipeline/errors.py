"""One root error type, with a subclass per stage carrying codes and ids, never transcript text."""

from __future__ import annotations

import errno
from pathlib import Path

from pipeline.reasons import Figures, SummaryFailure

__all__ = [
    "CompactionError",
    "ConfigError",
    "NotARegularFile",
    "SummaryError",
    "UnreadableSource",
    "UsageError",
]


class CompactionError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(CompactionError):
    """A configuration file, environment variable or flag has an invalid value."""


class UsageError(CompactionError):
    """A problem with the command line itself (the command exits 2 and says what)."""


class SummaryError(CompactionError):
    """The embedded summarizer wrote nothing: why, as a code, and the figures that decided it."""

    def __init__(self, failure: SummaryFailure, figures: Figures, message: str) -> None:
        self.failure, self.figures = failure, figures
        super().__init__(message)


class UnreadableSource(CompactionError):
    """A session file could not be read (missing, permission, I/O error)."""

    def __init__(self, path: Path, cause: OSError) -> None:
        self.path = path
        self.reason = errno.errorcode.get(cause.errno or 0, type(cause).__name__)
        super().__init__(f"cannot read {path.name}: {self.reason}")


class NotARegularFile(CompactionError):
    """A session-named path that is a named pipe, socket or device: never opened for reading
    (a FIFO would block a sweep forever, a device would never end)."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path = path
        self.kind = kind
        super().__init__(f"{path.name} is a {kind}, not a regular file")
