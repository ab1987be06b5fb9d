"""The live-replacement transaction (seed 004, "Candidate and Live Replacement Transactions").

Given a frozen original and a candidate the caller built and validated outside the live tree,
`replace_session` re-validates the immutable candidate bytes; re-checks that the live file still
holds the frozen bytes; creates and verifies an exclusive numbered backup; records its intent;
writes a unique stage file in the session's directory with the original's mode, owner and
times, fsynced and read back; checks that no process holds the file open; verifies the live file
once more against the frozen source; publishes atomically without clobbering anything that
appeared meanwhile; and re-reads the published bytes and re-validates their structure. Any
failure before publication leaves the original where it was; any failure after it puts the
original back. A verified backup is never deleted, and what another process wrote meanwhile is
kept, never replaced.

Publication swaps the stage and the live name in one atomic exchange where the platform offers
one, so the live path always holds a complete file; what the swap displaced is checked to be
the very inode and bytes verified a moment before, else it is swapped back. Elsewhere the link
strategy moves the original aside and links the stage in with a no-clobber `link`; between
those two calls the path is briefly absent, which `recovery` repairs after a crash.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from pathlib import Path

from pipeline.live_vocabulary import OperationState, Step, StopReason
from pipeline.publish.live.faults import NO_FAULTS, FaultSeam
from pipeline.publish.live.fingerprint import Fingerprint, fingerprint_of
from pipeline.publish.live.fsops import Operations, lstat
from pipeline.publish.live.placement import Placement
from pipeline.publish.live.publication import (
    RollbackFailed,
    cleanup,
    discard_stage,
    publish,
    rollback,
    verify_published,
)
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.replacement import (
    NO_JOURNAL,
    Journal,
    OpenCheck,
    Replacement,
    ReplaceOptions,
    Stop,
    Validator,
    errno_name,
)
from pipeline.publish.live.source import FrozenSource

__all__ = ["NO_JOURNAL", "Journal", "OpenCheck", "ReplaceOptions", "Validator", "replace_session"]


def _before_publication(
    work: Replacement,
    validate: Validator,
    known_backups: Sequence[Path],
    journal: Journal,
    open_check: OpenCheck | None,
) -> None:
    work.validate_candidate(validate)
    work.expect_original(Step.RECHECK_SOURCE, work.frozen.name)
    work.make_backup(known_backups)
    work.journal(journal)
    work.write_stage()
    work.check_open(open_check)
    work.expect_original(Step.CAPTURE_VERIFY, work.frozen.name)


def _run(
    work: Replacement,
    validate: Validator,
    known_backups: Sequence[Path],
    journal: Journal,
    open_check: OpenCheck | None,
) -> Receipt:
    try:
        _before_publication(work, validate, known_backups, journal, open_check)
        publish(work)
    except RollbackFailed as failed:
        return work.receipt(OperationState.ROLLBACK_FAILED, failed.stop)
    except Stop as stop:
        discard_stage(work)
        return work.receipt(OperationState.NOT_COMMITTED, stop)
    work.directory_synced = work.ops.fsync_directory(Step.DIRECTORY_FSYNC, work.directory)
    try:
        verify_published(work)
    except Stop as stop:
        return work.receipt(rollback(work), stop)
    cleanup(work)
    work.published = _published_fingerprint(work)
    return work.receipt(OperationState.COMMITTED, None)


def _published_fingerprint(work: Replacement) -> Fingerprint | None:
    """The live file's fingerprint after our last link change, if it is still what we verified.

    Cleanup may change the change time (a link count), so size, modification time and inode are
    compared with the status the verified read saw; a file another process wrote to or replaced
    since gets no fingerprint, so the state database never vouches for bytes it did not verify.
    """
    status = lstat(work.directory, work.frozen.name)
    verified = work.verified
    if status is None or verified is None:
        return None
    if (status.st_size, status.st_mtime_ns, status.st_ino) != (
        verified.st_size,
        verified.st_mtime_ns,
        verified.st_ino,
    ):
        return None
    return fingerprint_of(status)


def replace_session(
    frozen: FrozenSource,
    candidate: bytes,
    validate: Validator,
    options: ReplaceOptions,
    *,
    known_backups: Sequence[Path] = (),
    journal: Journal = NO_JOURNAL,
    open_check: OpenCheck | None = None,
    seam: FaultSeam = NO_FAULTS,
) -> Receipt:
    """Replace a frozen session's file with `candidate` through the whole transaction.

    `validate` (a pure function of the bytes) is run on the candidate before anything is
    written; the published bytes, re-read, must equal that validated candidate byte for byte.
    `known_backups` are earlier backups that may hold these very bytes (re-verified before one
    is reused); `journal` records the intent before the first write in the session's
    directory; `open_check` finds processes holding the file. Never raises for a failing step:
    the receipt says what happened (`operation_state`), where and why.
    """
    with contextlib.ExitStack() as stack:
        try:
            placement = stack.enter_context(Placement.open(frozen, options.backup))
        except OSError as exc:
            return _unplaced(frozen, candidate, options, errno_name(exc))
        work = Replacement(frozen, candidate, options, Operations(seam), placement)
        return _run(work, validate, known_backups, journal, open_check)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack does not swallow


def _unplaced(frozen: FrozenSource, candidate: bytes, options: ReplaceOptions, errno_text: str) -> Receipt:
    """The receipt of a replacement whose directories could not be opened (nothing was written)."""
    return Receipt(
        label=frozen.target.report_label,
        path=frozen.path,
        operation_state=OperationState.NOT_COMMITTED,
        reason=StopReason.BACKUP_FAILED,
        failed_step=Step.BACKUP_CREATE,
        errno_name=errno_text,
        strategy=options.strategy,
        frozen_sha256=frozen.sha256,
        candidate_sha256=hashlib.sha256(candidate).hexdigest(),
        published_sha256=None,
        backup=None,
        preserved=(),
        leftovers=(),
        holders=(),
        candidate_codes=(),
        directory_synced=False,
        published=None,
    )
