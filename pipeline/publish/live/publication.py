"""The steps from publication on: take the live name, verify, roll back, clean up.

Every decision about a name is made from what is on disk (inodes and bytes), never from what
the transaction believes it did, because an operation may take effect and still report an
error. Data found on the way that is neither the frozen original nor our candidate belongs to
someone else: it is kept under a numbered backup name, never deleted.
"""

from __future__ import annotations

import os

from pipeline.live_vocabulary import BackupCompression, OperationState, PublishStrategy, Step, StopReason
from pipeline.publish.live.backups import claim_numbered_name
from pipeline.publish.live.fsops import SwapUnsupported, lstat
from pipeline.publish.live.replacement import Replacement, Stop, errno_name

__all__ = ["RollbackFailed", "cleanup", "discard_stage", "publish", "rollback", "verify_published"]


class RollbackFailed(Exception):
    """Undoing a publication failed: the candidate stays at the live path (the backup holds the original)."""

    def __init__(self, stop: Stop) -> None:
        self.stop = stop
        super().__init__(stop.reason.value)


def _candidate_at_live(work: Replacement) -> bool:
    status = lstat(work.directory, work.frozen.name)
    return status is not None and status.st_ino == work.stage_inode


def _holds(work: Replacement, name: str, expected: bytes) -> bool:
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=work.directory.fd)
    except OSError:
        return False
    with open(descriptor, "rb", closefd=True) as handle:
        return handle.read() == expected


def _preserve(work: Replacement, name: str) -> None:
    """Give someone else's data a numbered backup name beside the session (or leave it, listed)."""
    ops, directory = work.ops, work.directory
    try:
        kept = claim_numbered_name(
            ops, Step.CLEANUP, directory, name, work.frozen.name, BackupCompression.NONE
        )
        os.unlink(name, dir_fd=directory.fd)
        work.preserved.append(directory.child(kept))
    except OSError:
        work.leftovers.append(directory.child(name))


def _dispose(work: Replacement, name: str) -> None:
    """Remove one of our names: our candidate or a verified original; keep anything else."""
    if lstat(work.directory, name) is None:
        return
    ours = _holds(work, name, work.candidate) or (
        work.backup is not None and _holds(work, name, work.frozen.data)
    )
    if not ours:
        _preserve(work, name)
        return
    try:
        work.ops.unlink(Step.CLEANUP, work.directory, name)
    except OSError:
        work.leftovers.append(work.directory.child(name))


def discard_stage(work: Replacement) -> None:
    """After a stop before publication: the stage name holds only our (partial) candidate."""
    if lstat(work.directory, work.stage) is None:
        return
    try:
        work.ops.unlink(Step.CLEANUP, work.directory, work.stage)
    except OSError:
        work.leftovers.append(work.directory.child(work.stage))


def publish(work: Replacement) -> None:
    """Give the staged candidate the live name, or raise `Stop` with the original (or theirs) in place."""
    if work.strategy in (PublishStrategy.AUTO, PublishStrategy.EXCHANGE):
        try:
            _publish_by_exchange(work)
        except SwapUnsupported as exc:
            if work.strategy is PublishStrategy.EXCHANGE:
                raise Stop(StopReason.PUBLISH_FAILED, Step.PUBLISH, errno_name(exc)) from exc
        else:
            work.strategy = PublishStrategy.EXCHANGE
            return
    work.strategy = PublishStrategy.LINK
    _publish_by_link(work)


def _publish_by_exchange(work: Replacement) -> None:
    ops, name = work.ops, work.frozen.name
    try:
        ops.exchange(Step.PUBLISH, work.directory, work.stage, name)
    except SwapUnsupported:
        raise
    except OSError as exc:
        if not _candidate_at_live(work):
            raise Stop(StopReason.PUBLISH_FAILED, Step.PUBLISH, errno_name(exc)) from exc
        # The exchange took effect before the error was reported: check what it displaced.
    try:
        work.expect_original(Step.DISPLACED_VERIFY, work.stage)
    except Stop as stop:
        _exchange_back(work, stop)
        raise


def _exchange_back(work: Replacement, stop: Stop) -> None:
    """What the exchange displaced is not the verified original: give it its name back."""
    try:
        work.ops.exchange(Step.ROLLBACK, work.directory, work.stage, work.frozen.name)
    except OSError as exc:
        if _candidate_at_live(work):
            _preserve(work, work.stage)
            raise RollbackFailed(stop) from exc


def _publish_by_link(work: Replacement) -> None:
    ops, directory, name = work.ops, work.directory, work.frozen.name
    try:
        ops.rename(Step.CAPTURE_MOVE, directory, name, work.capture)
    except OSError as exc:
        moved = lstat(directory, work.capture)
        if moved is None or moved.st_ino != work.frozen.status.st_ino:
            raise Stop(StopReason.PUBLISH_FAILED, Step.CAPTURE_MOVE, errno_name(exc)) from exc
    try:
        work.expect_original(Step.DISPLACED_VERIFY, work.capture)
    except Stop as stop:
        _return_capture(work, stop)
        raise
    try:
        ops.link(Step.PUBLISH, directory, work.stage, directory, name)
    except FileExistsError as exc:
        # Another process made a new file at the live path meanwhile: never overwrite it. The
        # capture is the verified original, which the verified backup also holds.
        _dispose(work, work.capture)
        raise Stop(StopReason.TARGET_REPLACED, Step.PUBLISH, errno_name(exc)) from exc
    except OSError as exc:
        if not _candidate_at_live(work):
            failure = Stop(StopReason.PUBLISH_FAILED, Step.PUBLISH, errno_name(exc))
            _return_capture(work, failure)
            raise failure from exc


def _return_capture(work: Replacement, stop: Stop) -> None:
    """Put what was moved aside back at the live name, without replacing anything there."""
    ops, directory = work.ops, work.directory
    try:
        ops.link(Step.ROLLBACK, directory, work.capture, directory, work.frozen.name)
    except FileExistsError:
        _preserve(work, work.capture)  # someone made a new live file meanwhile: keep both
        return
    except OSError as exc:
        restored = lstat(directory, work.frozen.name)
        captured = lstat(directory, work.capture)
        if restored is None or captured is None or restored.st_ino != captured.st_ino:
            work.preserved.append(directory.child(work.capture))
            raise RollbackFailed(stop) from exc
    try:
        ops.unlink(Step.CLEANUP, directory, work.capture)
    except OSError:
        work.leftovers.append(directory.child(work.capture))


def verify_published(work: Replacement) -> None:
    """Re-read the live path: our inode and, byte for byte, the candidate validated before.

    The validator is a pure function of the bytes, so bytes equal to the candidate's carry the
    candidate's verdict: the structure of the published file is the structure that was checked.
    """
    with work.failing_as(StopReason.PUBLISHED_MISMATCH):
        data, status = work.ops.read(Step.PUBLISHED_VERIFY, work.directory, work.frozen.name)
    if status.st_ino != work.stage_inode or data != work.candidate or work.candidate_codes:
        raise Stop(StopReason.PUBLISHED_MISMATCH, Step.PUBLISHED_VERIFY)
    work.verified = status


def rollback(work: Replacement) -> OperationState:
    """After a failed verification: the original back at the live path, the candidate disposed of."""
    displaced = work.stage if work.strategy is PublishStrategy.EXCHANGE else work.capture
    if not _candidate_at_live(work):
        # Something replaced the published file after we published it: it is not ours to touch.
        return _abandon(work, displaced)
    if work.strategy is PublishStrategy.EXCHANGE:
        state = _rollback_by_exchange(work)
    else:
        state = _rollback_by_link(work)
    if state is OperationState.ROLLED_BACK:
        work.directory_synced = work.ops.fsync_directory(Step.DIRECTORY_FSYNC, work.directory)
    return state


def _abandon(work: Replacement, displaced: str) -> OperationState:
    """The original cannot go back: keep its displaced copy (listed) beside the verified backup."""
    work.leftovers.append(work.directory.child(displaced))
    if work.strategy is PublishStrategy.LINK:
        _dispose(work, work.stage)  # only a second name of our candidate
    return OperationState.ROLLBACK_FAILED


def _rollback_by_exchange(work: Replacement) -> OperationState:
    try:
        work.ops.exchange(Step.ROLLBACK, work.directory, work.stage, work.frozen.name)
    except OSError:
        if _candidate_at_live(work):
            work.leftovers.append(work.directory.child(work.stage))
            return OperationState.ROLLBACK_FAILED
    _dispose(work, work.stage)  # the candidate, or whatever the swap took from the live path
    return OperationState.ROLLED_BACK


def _rollback_by_link(work: Replacement) -> OperationState:
    """Move whatever is at the live path aside (nothing is destroyed), then link the original back."""
    ops, directory, name = work.ops, work.directory, work.frozen.name
    try:
        ops.rename(Step.ROLLBACK, directory, name, work.retired)
    except OSError:
        if lstat(directory, work.retired) is None:
            return _abandon(work, work.capture)
    try:
        ops.link(Step.CLEANUP, directory, work.capture, directory, name)
    except OSError:
        if lstat(directory, name) is None:
            work.preserved.append(directory.child(work.capture))
            return OperationState.ROLLBACK_FAILED
        _preserve(work, work.capture)  # a new live file appeared meanwhile: keep both
        _dispose(work, work.retired)
        return OperationState.ROLLBACK_FAILED
    for leftover in (work.capture, work.retired, work.stage):
        _dispose(work, leftover)
    return OperationState.ROLLED_BACK


def cleanup(work: Replacement) -> None:
    """After commit: remove the stage name and the displaced original (the backup is verified).

    A backup beside the session is durable only once that directory's fsync succeeded; until
    then the displaced original stays (listed as a leftover) so that a power loss cannot leave
    the candidate live with neither copy of the original on disk.
    """
    displaced = work.stage if work.strategy is PublishStrategy.EXCHANGE else work.capture
    for name in (work.stage, work.capture):
        if name == displaced and work.backup_beside and not work.directory_synced:
            if lstat(work.directory, name) is not None:
                work.leftovers.append(work.directory.child(name))
            continue
        _dispose(work, name)  # never a numbered backup: those names are not ours to remove
