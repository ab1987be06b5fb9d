"""The space an in-place run gave back: the `archive` section of its summary, and of `backups`.

Sizes only (bytes and counts, paths of backups pruned or left), never content. Live bytes are
the sessions' sizes under the run's roots before and after; backups added are the stored bytes of
the verified backups the run wrote (compressed in the archive by default); pruned are the stored
bytes the retention policy removed at the end of the run.
"""

from __future__ import annotations

from pipeline.live_vocabulary import BackupCompression, BackupPlacement
from pipeline.report.sections import Section

__all__ = ["ArchiveSpace", "PruneFailure"]


class PruneFailure(Section, frozen=True, kw_only=True):
    """A backup the retention let go but could not remove (the next prune finishes it)."""

    path: str
    error: str


class ArchiveSpace(Section, frozen=True, kw_only=True):
    """Where backups went and what the run did to the space sessions and backups take."""

    placement: BackupPlacement
    backup_dir: str | None  # None: beside each session
    compression: BackupCompression
    retention: str  # backup_keep as configured
    live_bytes_before: int  # every session file under the roots, before the run
    live_bytes_after: int
    backups_added: int  # new verified backups (a reused one adds nothing)
    backup_bytes_added: int  # their stored bytes
    backups_pruned: int
    backup_bytes_pruned: int  # stored bytes the retention removed
    backups_kept_only_copy: int  # the policy let them go, but each is the only copy of a summarized history
    prune_failures: list[PruneFailure]

    @property
    def saved_bytes(self) -> int:
        """Net bytes given back: live bytes saved, less what the archive grew by."""
        return (
            self.live_bytes_before
            - self.live_bytes_after
            - self.backup_bytes_added
            + self.backup_bytes_pruned
        )
