"""What the in-place commands write: receipts, the in-place section of a session report, the run
summary, and the `Read.pages` repair's report, as frozen typed sections.

`publish.live.reporting` fills them from the transaction's receipt and the in-place run's
outcomes; content-free (labels, paths, digests, sizes, codes, line numbers). A session report
of `compress --in-place` is the compress job's own report with an `in_place` section added; the
summary is the fleet summary of the sessions the job ran on, with an `in_place` section for the
whole run.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.read_pages import CallVerdict, RepairPlan
from pipeline.live_vocabulary import (
    BackupCompression,
    Disposition,
    OperationState,
    PublishStrategy,
    RecoveredState,
    RestoreRefusal,
    Step,
    StopReason,
)
from pipeline.report.archive_space import ArchiveSpace
from pipeline.report.documents import BriefReport, CompressReport, ContextCompressReport, Report
from pipeline.report.fleet import FleetSummary
from pipeline.report.run_totals import RunTotals
from pipeline.report.sections import Section

__all__ = [
    "IN_PLACE_SUMMARY_SCHEMA",
    "REPAIR_SCHEMA",
    "REPAIR_SUMMARY_SCHEMA",
    "RESTORE_SCHEMA",
    "BackupEntry",
    "BackupSection",
    "InPlaceBriefReport",
    "InPlaceCompressReport",
    "InPlaceRolloutReport",
    "InPlaceSection",
    "InPlaceSummary",
    "InPlaceTotals",
    "ReceiptSection",
    "RecoveredEntry",
    "RepairPlanSection",
    "RepairReceiptSection",
    "RepairReport",
    "RepairSummary",
    "RestoreReport",
    "SkippedEntry",
    "in_place_report",
    "repair_plan_section",
]

IN_PLACE_SUMMARY_SCHEMA: Final = "session-compaction/in-place-summary/v1"
REPAIR_SCHEMA: Final = "session-compaction/read-pages-repair/v1"
REPAIR_SUMMARY_SCHEMA: Final = "session-compaction/read-pages-summary/v1"
RESTORE_SCHEMA: Final = "session-compaction/restore-report/v1"


class BackupSection(Section, frozen=True, kw_only=True):
    """A verified numbered backup: where, the original's digest and size, how it is stored."""

    path: str
    sha256: str
    bytes: int
    stored_bytes: int
    compression: BackupCompression
    reused: bool  # an earlier verified backup of the same bytes, not a new file


class HashesSection(Section, frozen=True, kw_only=True):
    frozen: str
    candidate: str
    published: str | None


class ReceiptSection(Section, frozen=True, kw_only=True):
    """One replacement: where it ended, why, the three digests and the backup it keeps."""

    label: str
    path: str
    operation_state: OperationState
    reason: StopReason | None
    failed_step: Step | None
    errno: str | None
    strategy: PublishStrategy
    hashes: HashesSection
    backup: BackupSection | None
    preserved: list[str]  # other files kept under numbered names because they hold data
    leftovers: list[str]  # our own temporaries a failing cleanup could not remove
    holders: list[int]
    candidate_codes: list[str]
    directory_synced: bool  # the parent-directory fsync succeeded (best effort, reported)


class RepairReceiptSection(ReceiptSection, frozen=True, kw_only=True):
    """The repair's receipt: the seed spells its state key `operationState`."""

    operation_state: OperationState = msgspec.field(name="operationState")


class InPlaceSection(Section, frozen=True, kw_only=True):
    """What the in-place run did with the session, and the transaction's receipt when one ran."""

    disposition: Disposition
    reasons: list[str]
    holders: list[int]
    hashed: bool  # deciding needed a hash, not only a stat
    receipt: ReceiptSection | None


class InPlaceCompressReport(CompressReport, frozen=True, kw_only=True):
    """A compress report of an in-place run: the job's sections, then what became of the file."""

    in_place: InPlaceSection


class InPlaceRolloutReport(ContextCompressReport, frozen=True, kw_only=True):
    """A Codex rollout's compress report of an in-place run, with what became of the file."""

    in_place: InPlaceSection


class InPlaceBriefReport(BriefReport, frozen=True, kw_only=True):
    """A session the job could not take further (unreadable, another format, crashed), in place."""

    in_place: InPlaceSection


def in_place_report(
    job: Report, section: InPlaceSection
) -> InPlaceCompressReport | InPlaceRolloutReport | InPlaceBriefReport:
    """The job's report with the in-place section added."""
    fields = msgspec.structs.asdict(job)
    if isinstance(job, CompressReport):
        return InPlaceCompressReport(**fields, in_place=section)
    if isinstance(job, ContextCompressReport):
        return InPlaceRolloutReport(**fields, in_place=section)
    if isinstance(job, BriefReport):
        return InPlaceBriefReport(**fields, in_place=section)
    raise TypeError(f"an in-place run reports compress jobs, not {type(job).__name__}")


class SkippedEntry(Section, frozen=True, kw_only=True):
    """A session left alone before any work: recently modified, held open, unsafe, changed."""

    session: str
    disposition: Disposition
    reasons: list[str]
    holders: list[int]


class RecoveredEntry(Section, frozen=True, kw_only=True):
    """A replacement an earlier run left unfinished, and what recovery found and did."""

    session: str
    state: RecoveredState
    removed: int  # our own temporaries or copies a verified backup holds
    preserved: list[str]  # files kept under numbered backup names


class InPlaceTotals(Section, frozen=True, kw_only=True):
    """The whole in-place run: where its state and backups are, and what it did."""

    state_dir: str
    backup_dir: str | None  # None: beside each session
    backup_compression: BackupCompression
    work_dir: str | None  # None: nothing needed building, so no work directory was made
    config_digest: str
    require_resume_proof: bool
    by_disposition: dict[str, int]
    built: int  # candidates built (zero on an unchanged fleet's second night)
    hashed: int  # skips that needed a hash besides the stat
    committed_report_failed: list[ReceiptSection]
    recovered: list[RecoveredEntry]
    not_built: list[SkippedEntry]  # unchanged sessions are only counted


class InPlaceSummary(FleetSummary, frozen=True, kw_only=True):
    """`summary.json` of an in-place run: the sessions the job ran on, then the run's own totals."""

    schema: str = IN_PLACE_SUMMARY_SCHEMA
    in_place: InPlaceTotals
    archive: ArchiveSpace  # the space the run gave back (live bytes, backups added and pruned)


class CallEntry(Section, frozen=True, kw_only=True):
    line: int
    tool_use_id: str = msgspec.field(name="toolUseId")
    verdict: CallVerdict
    result_line: int | None = msgspec.field(name="resultLine")


class RepairPlanSection(Section, frozen=True, kw_only=True):
    """Counts by verdict and the calls with their lines and ids (no content)."""

    patches: int
    verdicts: dict[str, int]
    calls: list[CallEntry]
    unscannable_lines: list[int] = msgspec.field(name="unscannableLines")


def repair_plan_section(plan: RepairPlan) -> RepairPlanSection:
    return RepairPlanSection(
        patches=len(plan.patches),
        verdicts={v.value: plan.count(v) for v in CallVerdict if plan.count(v)},
        calls=[
            CallEntry(line=c.line, tool_use_id=c.tool_use_id, verdict=c.verdict, result_line=c.result_line)
            for c in plan.calls
        ],
        unscannable_lines=list(plan.unscannable_lines),
    )


class RepairReport(Section, frozen=True, kw_only=True):
    """One session's `Read.pages` repair, in place or as a candidate file (camelCase, as the seed's)."""

    schema: str = REPAIR_SCHEMA
    command: str = "repair-read-pages"
    session: str
    mode: str  # in-place or candidate
    operation_state: OperationState = msgspec.field(name="operationState")
    reason: str | None
    plan: RepairPlanSection | UnsetType = UNSET
    frozen_sha256: str | None = msgspec.field(name="frozenSha256")
    candidate_sha256: str | None = msgspec.field(default=None, name="candidateSha256")
    published_sha256: str | None = msgspec.field(default=None, name="publishedSha256")
    output: str | UnsetType = UNSET  # the candidate file (candidate mode)
    bytes_before: int | UnsetType = msgspec.field(default=UNSET, name="bytesBefore")  # a file written:
    bytes_after: int | UnsetType = msgspec.field(default=UNSET, name="bytesAfter")  # its sizes
    failures: list[str] = msgspec.field(default_factory=list)
    disposition: Disposition | UnsetType = UNSET  # in place: what the run did with the file
    receipt: RepairReceiptSection | UnsetType = UNSET


class RestoreReport(Section, frozen=True, kw_only=True):
    """One session's restore: refused before starting, or the transaction's receipt."""

    schema: str = RESTORE_SCHEMA
    command: str = "restore"
    session: str
    path: str
    backup: str | None
    restored: bool
    refusal: RestoreRefusal | None
    receipt: ReceiptSection | None
    pruned_on: str | None = None  # backup-pruned: when (ISO 8601, UTC) the retention removed the backup


class BackupEntry(Section, frozen=True, kw_only=True):
    """One backup of `compaction backups --json`."""

    path: str
    session: str | None  # the session it is a backup of, when the state database recorded it
    stored_bytes: int
    original_bytes: int | None
    created: str  # ISO 8601, UTC
    compression: str
    sha256: str | None  # of the original bytes, when recorded
    recorded: bool


class RepairSummary(Section, frozen=True, kw_only=True):
    """`summary.json` of `repair-read-pages`: what was found and done, over every session."""

    schema: str = REPAIR_SUMMARY_SCHEMA
    command: str = "repair-read-pages"
    mode: str  # in-place, candidate or report
    roots: list[str]
    sessions: int
    patches: int  # members deleted (or, in report mode, that would be)
    by_verdict: dict[str, int]
    by_operation_state: dict[str, int]
    by_disposition: dict[str, int] | UnsetType = UNSET
    elapsed_ms: float
    totals: RunTotals | UnsetType = UNSET  # the files repaired: bytes before and after (not in report mode)
    reports: list[str]
    committed_report_failed: list[RepairReceiptSection] = msgspec.field(default_factory=list)
    archive: ArchiveSpace | UnsetType = UNSET  # in place: the space the run gave back
