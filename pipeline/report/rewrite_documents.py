"""What `repair` (of a session read through the seam) and `vacuum` write: one report per session
and a run summary.

Content-free: the edits by line and code, counts of findings by code before and after, the sent
items' count, byte counts, digests and the client's verdict; never a line's text.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.live_vocabulary import Disposition, OperationState
from pipeline.report.archive_space import ArchiveSpace
from pipeline.report.live_replacement import RepairReceiptSection
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.run_totals import RunTotals
from pipeline.report.sections import Section

__all__ = [
    "REWRITE_SCHEMA",
    "REWRITE_SUMMARY_SCHEMA",
    "RewriteEditEntry",
    "RewriteReport",
    "RewriteStatus",
    "RewriteSummary",
]

REWRITE_SCHEMA: Final = "session-compaction/rewrite-report/v1"
REWRITE_SUMMARY_SCHEMA: Final = "session-compaction/rewrite-summary/v1"


class RewriteStatus(StrEnum):
    """What became of one session."""

    REPAIRED = "repaired"  # the repaired file was written (a candidate, or in place)
    VACUUMED = "vacuumed"  # the vacuumed file was written
    PLANNED = "planned"  # report mode: the rewrite checked out; nothing was written
    UNCHANGED = "unchanged"  # nothing to repair or vacuum
    SKIPPED = "skipped"  # the format has no such rewrite, or its client does not resume the file
    SKIPPED_SUBAGENT = "skipped-subagent"  # a subagent's session: never resumed, never rewritten
    REFUSED = "refused"  # broken, or the rewrite did not check out: nothing was written
    UNREADABLE = "unreadable"

    @property
    def is_failure(self) -> bool:
        """Whether this status makes the command exit non-zero."""
        return self in (RewriteStatus.REFUSED, RewriteStatus.UNREADABLE)


class RewriteEditEntry(Section, frozen=True, kw_only=True):
    """One edit: the original's line, the finding code it removes (none for waste), what changed."""

    line: int
    code: str | None
    change: str
    count: int


class RewriteReport(Section, frozen=True, kw_only=True):
    """One session's repair or vacuum: report only, as a candidate file, or in place."""

    schema: str = REWRITE_SCHEMA
    command: str  # repair or vacuum
    session: str
    format: str
    mode: str  # report, candidate or in-place
    status: RewriteStatus
    reasons: list[str] = msgspec.field(default_factory=list)
    edits: list[RewriteEditEntry] = msgspec.field(default_factory=list)
    findings_before: dict[str, int] = msgspec.field(default_factory=dict)  # by code
    findings_after: dict[str, int] | UnsetType = UNSET  # the rewritten file re-read
    sent_items: int | UnsetType = UNSET  # the rewrite's, equal to the original's but the declared edits
    bytes_before: int
    bytes_after: int | UnsetType = UNSET
    resume_check: ResumeCheckSection | UnsetType = UNSET
    frozen_sha256: str | None = None
    candidate_sha256: str | None = None
    published_sha256: str | None = None
    output: str | UnsetType = UNSET  # the candidate file (candidate mode)
    operation_state: OperationState = OperationState.NOT_COMMITTED
    disposition: Disposition | UnsetType = UNSET  # in place: what the run did with the file
    receipt: RepairReceiptSection | UnsetType = UNSET


class RewriteSummary(Section, frozen=True, kw_only=True):
    """`summary.json` of `vacuum`: what was done over every session."""

    schema: str = REWRITE_SUMMARY_SCHEMA
    command: str
    mode: str
    roots: list[str]
    sessions: int
    by_status: dict[str, int]
    by_change: dict[str, int]  # edits by what changed
    by_proof: dict[str, int]  # the clients' verdicts
    by_disposition: dict[str, int] | UnsetType = UNSET
    bytes_before: int  # of the files rewritten (written, or in report mode: would be)
    bytes_after: int
    elapsed_ms: float
    totals: RunTotals | UnsetType = UNSET
    reports: list[str]
    archive: ArchiveSpace | UnsetType = UNSET
