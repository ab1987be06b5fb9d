"""The values an in-place run decides with: what a builder returns, and what became of a session.

`incremental_skip` is the rule that makes a second night over an unchanged fleet cheap: a
session whose bytes equal the output we published, or that the job declined with the same
engine and configuration and that has not changed since, is skipped after one `stat` (a hash
only when the `stat` alone cannot tell). `RunContext` is what a run takes once: the open-file
snapshot and the directories already swept of a killed run's temporaries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pipeline.core.read_pages import RepairPlan
from pipeline.live_vocabulary import Disposition
from pipeline.proof.damage_repair import DamageRepair
from pipeline.publish.live.activity import OpenFileProbe, OpenFiles
from pipeline.publish.live.fingerprint import Fingerprint
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.recovery import sweep_backup_temporaries
from pipeline.publish.live.replacement import Validator
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import RecordedResult, SessionRecord
from pipeline.report.documents import Outcome
from pipeline.report.rewrite_documents import RewriteReport

__all__ = [
    "Candidate",
    "Declined",
    "InPlaceOutcome",
    "JobResult",
    "RunContext",
    "incremental_skip",
]

JobResult = Outcome | RepairPlan | DamageRepair | RewriteReport
"""What the job behind a candidate says: the compress job's outcome, or a repair's plan."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate built and validated outside the live tree."""

    data: bytes
    validate: Validator  # re-run by the transaction on these bytes and on the published ones
    proven: bool  # the resume gate compared it with the original in its client
    status: str  # the job's status value (compressed, repaired)
    job: JobResult | None = None  # for the session's report


@dataclass(frozen=True, slots=True)
class Declined:
    """The job built no candidate."""

    status: str  # the job's status value (skipped-small, skipped-fits, refused, ...)
    reasons: tuple[str, ...]
    final: bool  # the same bytes under the same configuration would be declined again
    failed: bool = False  # the job's status is a failure (refused, unreadable, crashed)
    job: JobResult | None = None  # for the session's report


class InPlaceOutcome(NamedTuple):
    """One session of an in-place run (a named tuple: an unchanged fleet makes one per session)."""

    target: SessionTarget
    disposition: Disposition
    status: str | None = None  # the job's status, when it ran
    reasons: tuple[str, ...] = ()
    receipt: Receipt | None = None
    holders: tuple[int, ...] = ()
    hashed: bool = False  # deciding to skip needed a hash, not only a stat
    built: bool = False  # a candidate was built (compression or repair work was done)
    report_failed: bool = False  # its report could not be written (after a commit: exit code 3)
    job: JobResult | None = None  # what the job said, when it ran
    job_failed: bool = False  # the job's own status is a failure

    @property
    def failed(self) -> bool:
        """Whether this session makes the command exit non-zero."""
        return self.disposition.is_failure or self.job_failed

    def with_report_failed(self) -> InPlaceOutcome:
        """This outcome once its report could not be written (a commit becomes committed-report-failed)."""
        receipt = self.receipt.report_failed() if self.receipt is not None else None
        return self._replace(receipt=receipt, report_failed=True)


def _unchanged(
    recorded: Fingerprint | None, sha256: str, now: Fingerprint, digest: Callable[[], str]
) -> bool:
    """The stat says so, or (same size, or nothing recorded) the hash does."""
    if recorded == now:
        return True
    return (recorded is None or recorded.size == now.size) and digest() == sha256


def incremental_skip(
    record: SessionRecord | None,
    fingerprint: Fingerprint,
    config_digest: str,
    digest: Callable[[], str],
    result: RecordedResult,
) -> Disposition | None:
    """Whether an earlier run's record lets this session be skipped; `digest` hashes the live file.

    `result` is what this run publishes: our own output of the same kind (or a restored original)
    is left alone, while the other job's output (a repaired file, for `compress`) is a session
    like any other.
    """
    if record is None:
        return None
    if record.result in (result, RecordedResult.RESTORED) and record.output_sha256 is not None:
        if _unchanged(record.output, record.output_sha256, fingerprint, digest):
            return Disposition.UNCHANGED_OUTPUT
        return None
    declined = record.result is RecordedResult.DECLINED and record.config_digest == config_digest
    if declined and _unchanged(record.source, record.source_sha256, fingerprint, digest):
        return Disposition.UNCHANGED_DECLINED
    return None


@dataclass(slots=True)
class RunContext:
    """What a run takes once, and only when a session first needs it (safe from several threads)."""

    probe: OpenFileProbe | None
    detect_open: bool
    snapshot: OpenFiles | None = None
    taken: bool = False
    swept: set[Path] = field(default_factory=set)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def open_files(self) -> OpenFiles | None:
        """One snapshot of open files screens every session; an unchanged fleet never takes it."""
        with self.guard:
            if not self.taken and self.probe is not None and self.detect_open:
                self.snapshot = self.probe.snapshot()
            self.taken = True
            return self.snapshot

    def sweep(self, directory: Path) -> None:
        """Remove a killed run's backup temporaries from a directory about to get a backup.

        Once per directory and under the lock: a transaction sweeps before it writes its own
        temporary there, so no sweep can meet another transaction's temporary.
        """
        with self.guard:
            if directory not in self.swept:
                sweep_backup_temporaries(directory)
                self.swept.add(directory)
