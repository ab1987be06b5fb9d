"""The named steps of a live replacement and the seam through which tests make each one fail.

Every file operation of the transaction is tagged with one `Step`. Before the operation runs,
the transaction asks its `FaultSeam` what should go wrong there; production passes `NO_FAULTS`,
tests pass a `FaultPlan` naming one or more (step, fault) pairs. The faults are the ways the
outside world really fails: an operation that errors before or after taking effect, a write that
lands only partly, a read-back that differs, and another writer changing the live file.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Final, Protocol

from pipeline.live_vocabulary import Step

__all__ = [
    "FAULTS_BY_STEP",
    "NO_FAULTS",
    "Fault",
    "FaultPlan",
    "FaultSeam",
    "InjectedFault",
]


class Fault(StrEnum):
    """What goes wrong at a step."""

    FAIL = "fail"  # the operation raises before taking effect (EIO)
    FAIL_AFTER = "fail-after"  # the operation takes effect, then reports an error
    SHORT_WRITE = "short-write"  # half of the bytes land, then ENOSPC
    CORRUPT_READ = "corrupt-read"  # the bytes read back differ from what is on disk
    SOURCE_CHANGED = "source-changed"  # just before the step, another writer appends to the live file
    TARGET_REPLACED = "target-replaced"  # just before the step, a new file is put at the live path


_EVERYWHERE: Final = (Fault.FAIL, Fault.SOURCE_CHANGED, Fault.TARGET_REPLACED)
_EFFECTFUL: Final = (*_EVERYWHERE, Fault.FAIL_AFTER)
_READING: Final = (*_EVERYWHERE, Fault.CORRUPT_READ)
_WRITING: Final = (*_EFFECTFUL, Fault.SHORT_WRITE)

FAULTS_BY_STEP: Final[Mapping[Step, tuple[Fault, ...]]] = MappingProxyType(
    {
        Step.READ_SOURCE: (Fault.FAIL, Fault.CORRUPT_READ),
        Step.VALIDATE_CANDIDATE: _EVERYWHERE,
        Step.RECHECK_SOURCE: _READING,
        Step.BACKUP_CREATE: _EFFECTFUL,
        Step.BACKUP_WRITE: _WRITING,
        Step.BACKUP_FSYNC: _EFFECTFUL,
        Step.BACKUP_VERIFY: _READING,
        Step.BACKUP_CLAIM: _EFFECTFUL,
        Step.BACKUP_DIRECTORY_FSYNC: _EFFECTFUL,
        Step.STAGE_CREATE: _EFFECTFUL,
        Step.STAGE_WRITE: _WRITING,
        Step.STAGE_ATTRIBUTES: _EFFECTFUL,
        Step.STAGE_FSYNC: _EFFECTFUL,
        Step.STAGE_VERIFY: _READING,
        Step.OPEN_CHECK: _EVERYWHERE,
        Step.CAPTURE_VERIFY: _READING,
        Step.CAPTURE_MOVE: _EFFECTFUL,
        Step.PUBLISH: _EFFECTFUL,
        Step.DISPLACED_VERIFY: _READING,
        Step.DIRECTORY_FSYNC: _EFFECTFUL,
        Step.PUBLISHED_VERIFY: _READING,
        Step.ROLLBACK: _EFFECTFUL,
        Step.CLEANUP: _EFFECTFUL,
    }
)
"""Which faults each step can suffer: the fault-injection test matrix enumerates exactly these."""


class InjectedFault(OSError):
    """An operating-system error raised on purpose by a `FaultPlan`."""


class FaultSeam(Protocol):
    """What the transaction asks before each operation."""

    def fault_at(self, step: Step) -> Fault | None:
        """The fault to suffer at this step, if any (world-changing faults already happened)."""
        ...


class _NoFaults:
    def fault_at(self, step: Step) -> Fault | None:
        return None


NO_FAULTS: Final[FaultSeam] = _NoFaults()
"""The production seam: nothing is injected."""

WorldChange = Callable[[Path, Fault], None]


def _change_live_file(path: Path, fault: Fault) -> None:
    """Play the other writer: Claude Code appending a line, or a tool writing a fresh file."""
    if fault is Fault.SOURCE_CHANGED:
        with path.open("ab") as handle:
            handle.write(b'{"type":"user","note":"written by another process"}\n')
    else:
        replacement = path.with_name(f".{path.name}.external")
        replacement.write_bytes(b'{"type":"user","note":"a new file from another process"}\n')
        replacement.replace(path)


@dataclass(slots=True)
class FaultPlan:
    """A test seam: suffer `faults[step]` at each named step, once, and remember what fired.

    World-changing faults act on `live` (the session path) just before the step's operation.
    """

    live: Path
    faults: Mapping[Step, Fault]
    change: WorldChange = _change_live_file
    fired: list[tuple[Step, Fault]] = field(default_factory=list)

    def fault_at(self, step: Step) -> Fault | None:
        """Fire the planned fault of this step the first time the step runs."""
        fault = self.faults.get(step)
        if fault is None or any(done == step for done, _ in self.fired):
            return None
        self.fired.append((step, fault))
        if fault in (Fault.SOURCE_CHANGED, Fault.TARGET_REPLACED):
            self.change(self.live, fault)
            return None
        return fault


def injected(step: Step) -> InjectedFault:
    """The error a failing operation raises (EIO, naming only the step)."""
    return InjectedFault(errno.EIO, f"injected failure at {step.value}")
