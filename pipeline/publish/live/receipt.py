"""What a live replacement reports: its operation state, why it stopped, and the receipt.

The receipt carries public artifact labels, paths and the frozen, candidate and published
hashes; never a byte of transcript content. `committed-report-failed` is a committed state (the
published file is valid) whose report could not be written: the command line exits 3 and prints
the receipt instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pipeline.live_vocabulary import OperationState, PublishStrategy, Step, StopReason
from pipeline.publish.live.backups import Backup
from pipeline.publish.live.fingerprint import Fingerprint

__all__ = ["Receipt"]


@dataclass(frozen=True, slots=True)
class Receipt:
    """What one replacement did, as the command line prints and the state database records it."""

    label: str
    path: Path
    operation_state: OperationState
    reason: StopReason | None
    failed_step: Step | None
    errno_name: str | None
    strategy: PublishStrategy
    frozen_sha256: str
    candidate_sha256: str
    published_sha256: str | None
    backup: Backup | None
    preserved: tuple[Path, ...]  # other files kept because they hold data found on the way
    leftovers: tuple[Path, ...]  # our own temporaries a failing cleanup could not remove
    holders: tuple[int, ...]  # processes found holding the live file open
    candidate_codes: tuple[str, ...]  # the validator's failure codes
    directory_synced: bool  # the parent-directory fsync succeeded (best effort, reported)
    published: Fingerprint | None  # the live file's fingerprint after commit

    @property
    def committed(self) -> bool:
        """Whether the live path holds the verified candidate."""
        return self.operation_state.committed

    def report_failed(self) -> Receipt:
        """This committed receipt, marked as one whose report could not be written."""
        if self.operation_state is not OperationState.COMMITTED:
            return self
        return replace(self, operation_state=OperationState.COMMITTED_REPORT_FAILED)
