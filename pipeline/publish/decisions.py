"""The values an in-place run decides with: what a builder returns, and what became of a session.

`incremental_skip` is the rule that makes a second night over an unchanged fleet cheap: a
session whose bytes equal the output we published, or that the job declined with the same
engine and configuration and that has not changed since, is skipped after one `stat` (a hash
only when the `stat` alone cannot tell).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pipeline.publish.outcome import Receipt
from pipeline.publish.records import Fingerprint
from pipeline.publish.replacement import Validator
from pipeline.publish.source import SessionTarget
from pipeline.publish.state import RecordedResult, SessionRecord

__all__ = ["Candidate", "Declined", "Disposition", "InPlaceOutcome", "incremental_skip"]

_PUBLISHED = frozenset({RecordedResult.COMPACTED, RecordedResult.REPAIRED, RecordedResult.RESTORED})


class Disposition(StrEnum):
    """What an in-place run did with one session."""

    COMMITTED = "committed"  # replaced in place (the receipt may say committed-report-failed)
    UNCHANGED_OUTPUT = "skipped-unchanged-output"  # still the output an earlier run published
    UNCHANGED_DECLINED = "skipped-unchanged-declined"  # unchanged since the job declined it, same config
    RECENTLY_MODIFIED = "skipped-recently-modified"  # written to within the idle period
    HELD_OPEN = "skipped-held-open"  # a process holds the file open
    CHANGED_DURING_RUN = "skipped-changed-during-run"  # the bytes changed while we worked
    DECLINED = "declined"  # the job built no candidate (its status says why)
    UNPROVEN = "refused-unproven"  # the resume gate did not prove the candidate
    UNSAFE_TARGET = "refused-unsafe-target"  # a symlink, outside the root, hard-linked, missing
    NOT_COMMITTED = "not-committed"  # the transaction stopped; the original never moved
    ROLLED_BACK = "rolled-back"  # published, failed verification, the original is back
    ROLLBACK_FAILED = "rollback-failed"  # the original could not be put back: see the backup

    @property
    def is_failure(self) -> bool:
        """Whether this makes the command exit non-zero."""
        return self in (Disposition.NOT_COMMITTED, Disposition.ROLLED_BACK, Disposition.ROLLBACK_FAILED)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate built and validated outside the live tree."""

    data: bytes
    validate: Validator  # re-run by the transaction on these bytes and on the published ones
    proven: bool  # the resume gate compared it with the original in Claude Code
    status: str  # the job's status value (compressed, repaired)


@dataclass(frozen=True, slots=True)
class Declined:
    """The job built no candidate."""

    status: str  # the job's status value (skipped-small, skipped-fits, refused, ...)
    reasons: tuple[str, ...]
    final: bool  # the same bytes under the same configuration would be declined again


@dataclass(frozen=True, slots=True)
class InPlaceOutcome:
    """One session of an in-place run."""

    target: SessionTarget
    disposition: Disposition
    status: str | None = None  # the job's status, when it ran
    reasons: tuple[str, ...] = ()
    receipt: Receipt | None = None
    holders: tuple[int, ...] = ()
    hashed: bool = False  # deciding to skip needed a hash, not only a stat
    built: bool = False  # a candidate was built (compression or repair work was done)
    report_failed: bool = False  # its report could not be written (after a commit: exit code 3)

    def to_report(self) -> dict[str, Any]:
        """JSON-ready: the session's labels, what happened, and the receipt if a transaction ran."""
        return {
            "label": self.target.report_label,
            "disposition": self.disposition.value,
            "status": self.status,
            "reasons": list(self.reasons),
            "holders": list(self.holders),
            "hashed": self.hashed,
            "report_failed": self.report_failed,
            "receipt": self.receipt.to_report() if self.receipt else None,
        }


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
) -> Disposition | None:
    """Whether an earlier run's record lets this session be skipped; `digest` hashes the live file."""
    if record is None:
        return None
    if record.result in _PUBLISHED and record.output_sha256 is not None:
        if _unchanged(record.output, record.output_sha256, fingerprint, digest):
            return Disposition.UNCHANGED_OUTPUT
        return None
    declined = record.result is RecordedResult.DECLINED and record.config_digest == config_digest
    if declined and _unchanged(record.source, record.source_sha256, fingerprint, digest):
        return Disposition.UNCHANGED_DECLINED
    return None
