"""A stop requested by Ctrl-C or SIGTERM, as the executors' loops see it: no new session or batch
starts once it is set, and the work that writes nothing live (a build, a batch) is cancelled.

The signals themselves are taken by the command line (`pipeline.cli.interrupt`); a transaction in
flight is never cancelled: it completes, committed or rolled back.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from pipeline.reasons import InPlaceReason

__all__ = ["INTERRUPTED", "StopRequest", "run_until_stopped", "watch"]

INTERRUPTED: Final = InPlaceReason.INTERRUPTED.value  # the reason of a session the stop left untouched
_POLL_SECONDS: Final = 0.05  # how soon a builder in flight is cancelled once a signal arrived


@dataclass(slots=True)
class StopRequest:
    """The one mutable value of a run: which signal asked it to stop, if any.

    Mutable on purpose: a signal handler sets it, the loops read it between sessions.
    """

    signum: int | None = None
    _scopes: set[anyio.CancelScope] = field(default_factory=set)

    @property
    def requested(self) -> bool:
        """Whether a signal asked the run to stop."""
        return self.signum is not None

    @property
    def name(self) -> str:
        """The signal's name (SIGINT, SIGTERM)."""
        return signal.Signals(self.signum).name if self.signum is not None else ""

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended."""
        return 128 + (self.signum or 0)

    @contextlib.contextmanager
    def cancellable(self) -> Iterator[anyio.CancelScope]:
        """A scope a stop cancels: wrap work that writes nothing live (a build, a validation)."""
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                if self.requested:
                    scope.cancel()
                yield scope
            finally:
                self._scopes.discard(scope)

    def cancel_all(self) -> None:
        """Cancel every cancellable scope now open."""
        for scope in tuple(self._scopes):
            scope.cancel()


async def watch(stop: StopRequest) -> None:
    """Cancel every cancellable scope once a stop is requested (run in the loop's task group)."""
    while not stop.requested:
        await anyio.sleep(_POLL_SECONDS)
    stop.cancel_all()


async def run_until_stopped(
    stop: StopRequest, feed: Callable[[], Coroutine[Any, Any, None]], count: int
) -> None:
    """Run `count` feeders to their end while `watch` cancels what a stop should cancel."""
    async with anyio.create_task_group() as watching:
        watching.start_soon(watch, stop)
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(feed)
        watching.cancel_scope.cancel()
