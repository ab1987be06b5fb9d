"""What a live replacement reports: its operation state, why it stopped, and the receipt.

The receipt carries public artifact labels, paths and the frozen, candidate and published
hashes; never a byte of transcript content. `committed-report-failed` is a committed state (the
published file is valid) whose report could not be written: the command line exits 3 and prints
the receipt instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from pipeline.publish.live.backups import Backup
from pipeline.publish.live.faults import Step
from pipeline.publish.live.fingerprint import Fingerprint
from pipeline.vocabulary import PublishStrategy

__all__ = ["OperationState", "PublishStrategy", "Receipt", "StopReason"]


class OperationState(StrEnum):
    """Where a replacement ended."""

    COMMITTED = "committed"  # the candidate is published and verified
    NOT_COMMITTED = "not-committed"  # stopped before publication: the original never left its path
    ROLLED_BACK = "rolled-back"  # published, failed verification, the original is back
    ROLLBACK_FAILED = "rollback-failed"  # the original could not be put back: the verified backup holds it
    COMMITTED_REPORT_FAILED = "committed-report-failed"  # committed; writing its report failed

    @property
    def committed(self) -> bool:
        """Whether the candidate is what the live path now holds."""
        return self in (OperationState.COMMITTED, OperationState.COMMITTED_REPORT_FAILED)


class StopReason(StrEnum):
    """Why a replacement stopped short of committing."""

    CANDIDATE_INVALID = "candidate-invalid"
    SOURCE_CHANGED = "source-changed"  # the live file's bytes changed since they were frozen
    TARGET_REPLACED = "target-replaced"  # another file now stands at the live path
    BACKUP_FAILED = "backup-failed"
    JOURNAL_FAILED = "journal-failed"
    STAGE_FAILED = "stage-failed"
    OWNERSHIP_NOT_PRESERVED = "ownership-not-preserved"
    OPEN_CHECK_FAILED = "open-check-failed"
    HELD_OPEN = "held-open"  # a process holds the live file open
    PUBLISH_FAILED = "publish-failed"
    PUBLISHED_MISMATCH = "published-mismatch"  # the re-read published bytes or structure are wrong


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
