"""What `compaction repair` writes: one report per session, with its receipts, and a run summary.

Content-free: lines, defect codes, actions, byte counts, tool ids, digests, Claude Code's verdict
and the API's rule codes; never a line's text.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.session_repair import SessionRepairPlan
from pipeline.live_vocabulary import Disposition, OperationState
from pipeline.report.archive_space import ArchiveSpace
from pipeline.report.live_replacement import RepairReceiptSection
from pipeline.report.repair_sections import EditEntry, ProofSection, UnrepairedEntry
from pipeline.report.run_totals import RunTotals, SessionFigures, repair_figures
from pipeline.report.sections import Section
from pipeline.vocabulary import SourceFormat

__all__ = [
    "DAMAGE_REPAIR_SCHEMA",
    "DAMAGE_REPAIR_SUMMARY_SCHEMA",
    "DamageRepairReport",
    "DamageRepairSummary",
    "EditEntry",
    "ProofSection",
    "ProvenRepair",
    "UnrepairedEntry",
    "damage_figures",
    "edit_entries",
    "proof_section",
    "unrepaired_entry",
]

DAMAGE_REPAIR_SCHEMA: Final = "session-compaction/repair-report/v1"
DAMAGE_REPAIR_SUMMARY_SCHEMA: Final = "session-compaction/repair-summary/v1"


def edit_entries(plan: SessionRepairPlan) -> list[EditEntry]:
    return [
        EditEntry(
            line=r.line,
            code=str(r.code),
            action=r.action.value,
            bytes_before=r.bytes_before,
            bytes_after=r.bytes_after,
            ids=list(r.ids),
        )
        for r in plan.receipts
    ]


def unrepaired_entry(plan: SessionRepairPlan) -> UnrepairedEntry | UnsetType:
    found = plan.unrepaired
    return (
        UNSET
        if found is None
        else UnrepairedEntry(line=found.line, code=str(found.code), reason=found.reason)
    )


class ProvenRepair(Protocol):
    """A judge's verdict on a repaired session beside its damaged original, content-free."""

    @property
    def verdict(self) -> StrEnum: ...
    @property
    def damaged_blocks(self) -> int: ...
    @property
    def repaired_blocks(self) -> int: ...
    @property
    def damaged_rejected(self) -> tuple[str, ...]: ...  # API rule codes each side broke
    @property
    def repaired_rejected(self) -> tuple[str, ...]: ...
    @property
    def missing(self) -> tuple[str, ...]: ...  # labels of the damaged side's blocks the repaired lacks


def proof_section(proof: ProvenRepair | None) -> ProofSection | UnsetType:
    if proof is None:
        return UNSET
    return ProofSection(
        verdict=proof.verdict.value,
        damaged_blocks=proof.damaged_blocks,
        repaired_blocks=proof.repaired_blocks,
        damaged_rejected=list(proof.damaged_rejected),
        repaired_rejected=list(proof.repaired_rejected),
        missing=list(proof.missing),
    )


class DamageRepairReport(Section, frozen=True, kw_only=True):
    """One session's repair: report only, as a candidate file, or in place."""

    schema: str = DAMAGE_REPAIR_SCHEMA
    command: str = "repair"
    session: str
    mode: str  # report, candidate or in-place
    status: str  # repaired, nothing-to-repair, refused, unreadable, report-only
    operation_state: OperationState
    reasons: list[str] = msgspec.field(default_factory=list)
    edits: list[EditEntry] = msgspec.field(default_factory=list)
    unrepaired: UnrepairedEntry | UnsetType = UNSET
    proof: ProofSection | UnsetType = UNSET
    frozen_sha256: str | None = None
    candidate_sha256: str | None = None
    published_sha256: str | None = None
    output: str | UnsetType = UNSET  # the candidate file (candidate mode)
    bytes_before: int | UnsetType = UNSET  # a repaired file written: the original's size...
    bytes_after: int | UnsetType = UNSET  # ...and the written file's
    failures: list[str] = msgspec.field(default_factory=list)
    disposition: Disposition | UnsetType = UNSET  # in place: what the run did with the file
    receipt: RepairReceiptSection | UnsetType = UNSET


def damage_figures(
    report: DamageRepairReport, root: str, source_format: SourceFormat, *, failed: bool
) -> SessionFigures:
    """A repair's figures for the run's totals: its status, and the file written (its sizes);
    `source_format`: the format the repair takes (`agents/registry.DAMAGE_REPAIR_FORMAT`)."""
    return repair_figures(
        report.status,
        root,
        source_format=source_format,
        failed=failed,
        before=report.bytes_before,
        after=report.bytes_after,
    )


class DamageRepairSummary(Section, frozen=True, kw_only=True):
    """`summary.json` of `repair`: what was found and done, over every session."""

    schema: str = DAMAGE_REPAIR_SUMMARY_SCHEMA
    command: str = "repair"
    mode: str
    roots: list[str]
    sessions: int
    by_status: dict[str, int]
    by_code: dict[str, int]  # receipts by defect code
    by_proof: dict[str, int]  # Claude Code's verdicts
    by_disposition: dict[str, int] | UnsetType = UNSET
    elapsed_ms: float
    totals: RunTotals | UnsetType = (
        UNSET  # files repaired: bytes before and after, per root (not in report mode)
    )
    reports: list[str]
    archive: ArchiveSpace | UnsetType = UNSET  # in place: the space the run gave back
