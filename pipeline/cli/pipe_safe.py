"""stdout that a reader closing the pipe (`compaction --help | head -1`) cannot fail.

Apart from the console so that setting it up, the first thing every start does, loads no rich.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["pipe_safe_stdout"]


class _PipeSafe:
    """stdout that a closed reader (`| head -1`) cannot fail: the first broken pipe points the
    descriptor at /dev/null, so the command finishes and exits with its own code."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def buffer(self) -> _PipeSafe:
        return _PipeSafe(self._stream.buffer)

    def write(self, data: Any) -> int:
        try:
            return int(self._stream.write(data))
        except BrokenPipeError:
            self._gone()
            return len(data)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        os.close(null)


def pipe_safe_stdout() -> None:
    """Make stdout survive a reader that closed it (see `_PipeSafe`); called once at the edge."""
    if not isinstance(sys.stdout, _PipeSafe):
        sys.stdout = _PipeSafe(sys.stdout)
