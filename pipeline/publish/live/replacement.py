"""One replacement's state and the steps before publication: validate, re-check, back up, stage.

`transaction.replace_session` drives these steps and `publication` the ones after them. Each step
either completes or raises `Stop` with a reason code and the step it failed at; nothing here
touches the live name, so a stop before publication always leaves the original in place.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.live_vocabulary import OperationState, PublishStrategy, Step, StopReason
from pipeline.publish.live.backups import (
    Backup,
    BackupOptions,
    BackupUnreadable,
    verify_existing,
    write_backup,
)
from pipeline.publish.live.fingerprint import Fingerprint, Intent
from pipeline.publish.live.fsops import Directory, Operations
from pipeline.publish.live.placement import Placement
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.source import FrozenSource

__all__ = ["NO_JOURNAL", "Journal", "OpenCheck", "ReplaceOptions", "Replacement", "Stop", "Validator"]

Validator = Callable[[bytes], tuple[str, ...]]
"""Structural check of a transcript's bytes: the failure codes, empty when the bytes are sound."""
OpenCheck = Callable[[Path, int, int], tuple[int, ...]]
"""(path, device, inode) of the live file -> ids of the processes holding it open."""
Journal = Callable[[Intent], None]
"""Records an intent durably before the first write in the session's directory."""


def _no_journal(intent: Intent) -> None:
    del intent


NO_JOURNAL: Final[Journal] = _no_journal
_TOKEN_HEX: Final = 12  # 48 random bits: our names never collide with another run's


@dataclass(frozen=True, slots=True)
class ReplaceOptions:
    """How a replacement is carried out."""

    backup: BackupOptions
    strategy: PublishStrategy  # auto: exchange where the platform has it, else link
    keep_times: bool  # the compacted file keeps the original's access and modification times


class Stop(Exception):
    """Ends the transaction at a step with a reason code (and the errno name of an OS error)."""

    def __init__(self, reason: StopReason, step: Step | None, errno_name: str | None = None) -> None:
        self.reason = reason
        self.step = step
        self.errno_name = errno_name
        super().__init__(reason.value)


def errno_name(exc: OSError) -> str:
    """The symbolic errno of an OS error (`EIO`), never its message (which may hold a path)."""
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


class Replacement:
    """One transaction's state: the directories it opened, the names it made, what it kept."""

    def __init__(
        self,
        frozen: FrozenSource,
        candidate: bytes,
        options: ReplaceOptions,
        ops: Operations,
        placement: Placement,
    ) -> None:
        self.frozen = frozen
        self.candidate = candidate
        self.candidate_sha256 = hashlib.sha256(candidate).hexdigest()
        self.options = options
        self.ops = ops
        self.placement = placement
        self.directory: Directory = placement.session
        self.token = uuid.uuid4().hex[:_TOKEN_HEX]
        self.stage = f".{frozen.name}.compaction-{self.token}.stage"
        self.capture = f".{frozen.name}.compaction-{self.token}.capture"
        self.retired = f".{frozen.name}.compaction-{self.token}.retired"
        self.strategy = options.strategy
        self.stage_inode: int | None = None
        self.backup: Backup | None = None
        self.preserved: list[Path] = []
        self.leftovers: list[Path] = []
        self.holders: tuple[int, ...] = ()
        self.candidate_codes: tuple[str, ...] = ()
        self.directory_synced = False
        self.published: Fingerprint | None = None
        self.verified: os.stat_result | None = None  # the live file's status when its bytes were verified

    @contextlib.contextmanager
    def failing_as(self, reason: StopReason) -> Iterator[None]:
        """Turn an OS error of the enclosed steps into a stop with this reason."""
        try:
            yield
        except OSError as exc:
            raise Stop(reason, self.ops.last_step, errno_name(exc)) from exc
        except BackupUnreadable as exc:
            raise Stop(reason, self.ops.last_step, exc.reason) from exc

    def validate_candidate(self, validate: Validator) -> None:
        """The caller's structural check of the immutable candidate bytes."""
        with self.failing_as(StopReason.CANDIDATE_INVALID):
            self.ops.checkpoint(Step.VALIDATE_CANDIDATE)
        self.candidate_codes = tuple(validate(self.candidate))
        if self.candidate_codes:
            raise Stop(StopReason.CANDIDATE_INVALID, Step.VALIDATE_CANDIDATE)

    def expect_original(self, step: Step, name: str) -> os.stat_result:
        """The file at `name` is the frozen original: same inode, same bytes, one link."""
        with self.failing_as(StopReason.SOURCE_CHANGED):
            data, status = self.ops.read(step, self.directory, name)
        if (status.st_ino, status.st_dev) != (self.frozen.status.st_ino, self.frozen.status.st_dev):
            raise Stop(StopReason.TARGET_REPLACED, step)
        if data != self.frozen.data or status.st_nlink != 1:
            raise Stop(StopReason.SOURCE_CHANGED, step)
        return status

    def make_backup(self, known: Sequence[Path]) -> None:
        """Reuse a known backup that re-verifies as these bytes, else write a new numbered one."""
        frozen = self.frozen
        for path in known:
            found = verify_existing(path, frozen.data, frozen.sha256)
            if found is not None:
                self.backup = found
                return
        with self.failing_as(StopReason.BACKUP_FAILED):
            self.backup = write_backup(
                self.ops,
                self.placement.backups,
                frozen.name,
                frozen.data,
                frozen.sha256,
                self.options.backup,
                self.token,
                frozen.status,
                sync_directory=not self.backup_beside,
            )

    @property
    def backup_beside(self) -> bool:
        """Backups share the session's directory (one directory fsync makes both durable)."""
        return self.placement.backups is self.placement.session

    def journal(self, journal: Journal) -> None:
        """Record the intent before the first write in the session's directory."""
        assert self.backup is not None
        intent = Intent(
            session=self.frozen.path,
            stage=self.directory.child(self.stage),
            capture=self.directory.child(self.capture),
            backup=self.backup.path,
            frozen_sha256=self.frozen.sha256,
            frozen_size=len(self.frozen.data),
            candidate_sha256=self.candidate_sha256,
            candidate_size=len(self.candidate),
        )
        try:
            journal(intent)
        except Exception as exc:  # a database error of any kind stops us before the first write
            raise Stop(StopReason.JOURNAL_FAILED, None, type(exc).__name__) from exc

    def write_stage(self) -> None:
        """The candidate in a unique file beside the original, with its attributes, fsynced, re-read."""
        ops = self.ops
        with self.failing_as(StopReason.STAGE_FAILED):
            descriptor = ops.create(Step.STAGE_CREATE, self.directory, self.stage)
            try:
                self.stage_inode = os.fstat(descriptor).st_ino
                ops.write(Step.STAGE_WRITE, descriptor, self.candidate)
                self._copy_attributes(descriptor)
                ops.fsync(Step.STAGE_FSYNC, descriptor)
            finally:
                os.close(descriptor)
            data, status = ops.read(Step.STAGE_VERIFY, self.directory, self.stage)
        if data != self.candidate or status.st_ino != self.stage_inode:
            raise Stop(StopReason.STAGE_FAILED, Step.STAGE_VERIFY)

    def _copy_attributes(self, descriptor: int) -> None:
        try:
            self.ops.copy_attributes(
                Step.STAGE_ATTRIBUTES, descriptor, self.frozen.status, times=self.options.keep_times
            )
        except PermissionError as exc:
            # Replacing the file would change its owner: refuse rather than do that.
            raise Stop(StopReason.OWNERSHIP_NOT_PRESERVED, Step.STAGE_ATTRIBUTES, errno_name(exc)) from exc

    def check_open(self, open_check: OpenCheck | None) -> None:
        """No process holds the live file open (where the platform lets us see that)."""
        if open_check is None:
            return
        with self.failing_as(StopReason.OPEN_CHECK_FAILED):
            self.ops.checkpoint(Step.OPEN_CHECK)
            self.holders = open_check(self.frozen.path, self.frozen.status.st_dev, self.frozen.status.st_ino)
        if self.holders:
            raise Stop(StopReason.HELD_OPEN, Step.OPEN_CHECK)

    def receipt(self, state: OperationState, stop: Stop | None) -> Receipt:
        """The receipt of where this replacement ended."""
        return Receipt(
            label=self.frozen.target.report_label,
            path=self.frozen.path,
            operation_state=state,
            reason=stop.reason if stop else None,
            failed_step=stop.step if stop else None,
            errno_name=stop.errno_name if stop else None,
            strategy=self.strategy,
            frozen_sha256=self.frozen.sha256,
            candidate_sha256=self.candidate_sha256,
            published_sha256=self.candidate_sha256 if state.committed else None,
            backup=self.backup,
            preserved=tuple(self.preserved),
            leftovers=tuple(self.leftovers),
            holders=self.holders,
            candidate_codes=self.candidate_codes,
            directory_synced=self.directory_synced,
            published=self.published,
        )
