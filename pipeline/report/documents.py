"""Whole session reports, one type per kind of outcome, and the typed outcomes that carry them.

A job returns an `Outcome`: `Validated`, `Compressed`, `Skipped`, `Refused`, `Counted` (tokens),
`Unsupported`, `Unreadable` or `Failed`, each carrying its frozen report. The runner writes the
report (`render.py`) and the fleet summary reads the typed fields; nothing re-parses JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from msgspec import UNSET, UnsetType

from pipeline.findings import Finding
from pipeline.reasons import StrictReason
from pipeline.report.chain import ChainSection, LeafSection, StrictSection
from pipeline.report.compression import (
    BoundedSection,
    ChecksSection,
    CompressTokens,
    MaskSection,
    ModelPlanSection,
    OutputSection,
    PlanSection,
    ProjectedSection,
    RepairEntry,
    SummarySection,
    WriterSection,
)
from pipeline.report.fidelity import FidelitySection
from pipeline.report.repair_sections import SourceRepairSection
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.resume_context import ContextOutputSection, ContextSection, ContextTokens, CutSection
from pipeline.report.sections import (
    SESSION_SCHEMA,
    FindingsSection,
    PartitionSection,
    Section,
    SessionSection,
    Timing,
    findings_section,
)
from pipeline.report.tokens import TokensMeasure
from pipeline.vocabulary import FindingCode, SessionStatus, Severity, StrictStatus

__all__ = [
    "BriefReport",
    "CompressReport",
    "Compressed",
    "ContextCompressReport",
    "ContextTokensReport",
    "ContextValidateReport",
    "Counted",
    "Failed",
    "NotATranscript",
    "Outcome",
    "Refused",
    "Report",
    "Skipped",
    "SweepTokens",
    "TokensReport",
    "Unreadable",
    "Unsupported",
    "ValidateReport",
    "Validated",
    "crashed",
]


class _Document(Section, frozen=True, kw_only=True):
    schema: str = SESSION_SCHEMA
    session: SessionSection
    status: SessionStatus
    findings: FindingsSection  # written as the report's `findings`, `findings_truncated`, `counts`


class BriefReport(_Document, frozen=True, kw_only=True):
    """A session that went no further than reading: unreadable, unsupported, or crashed."""

    command: str | UnsetType = UNSET  # a crash report does not know which command it ran


class SweepTokens(Section, frozen=True, kw_only=True):
    """Seed-estimated tokens of the whole file and of the active chain."""

    estimator: str
    session: int
    active_chain: int


class ValidateReport(_Document, frozen=True, kw_only=True):
    command: str = "validate"
    strict_status: StrictStatus
    strict: StrictSection
    leaf: LeafSection
    chain: ChainSection
    partition: PartitionSection
    tokens: SweepTokens
    timing_ms: Timing


class ContextValidateReport(_Document, frozen=True, kw_only=True):
    """`validate` of a session read through the seam: the context its client rebuilds stands
    where a chain would."""

    command: str = "validate"
    context: ContextSection
    partition: PartitionSection
    tokens: SweepTokens
    timing_ms: Timing


class ContextCompressReport(_Document, frozen=True, kw_only=True):
    """`compress` of a session read through the seam: the original's context, the cut, the
    summary, the output."""

    command: str = "compress"
    context: ContextSection
    tokens: CompressTokens
    timing_ms: Timing
    reasons: list[str] | UnsetType = UNSET
    cut: CutSection | UnsetType = UNSET
    summary: SummarySection | UnsetType = UNSET
    partition: PartitionSection | UnsetType = UNSET
    checks: ChecksSection | UnsetType = UNSET  # the candidate's rebuilt context against the original's
    fidelity: FidelitySection | UnsetType = UNSET  # the summarized span's probes in the candidate
    resume_check: ResumeCheckSection | UnsetType = UNSET  # the resume gate: its client resumed both
    model_plan: ModelPlanSection | UnsetType = UNSET  # --dry-run: what a model summary would cost
    output: ContextOutputSection | UnsetType = UNSET


class ContextTokensReport(_Document, frozen=True, kw_only=True):
    """`tokens` of a session read through the seam: by estimator and class, and what its file
    says was billed."""

    command: str = "tokens"
    context: ContextSection
    tokens: ContextTokens
    timing_ms: Timing


class CompressReport(_Document, frozen=True, kw_only=True):
    command: str = "compress"
    strict_status: StrictStatus
    strict: StrictSection
    leaf: LeafSection
    tokens: CompressTokens
    timing_ms: Timing
    reasons: list[str] | UnsetType = UNSET
    reason_figures: dict[str, dict[str, int]] | UnsetType = UNSET  # reason -> its figures, when it has some
    plan: PlanSection | UnsetType = UNSET
    partition: PartitionSection | UnsetType = UNSET
    chain: ChainSection | UnsetType = UNSET
    summary: SummarySection | UnsetType = UNSET
    model_failure: WriterSection | UnsetType = UNSET  # a refused model summary: its cost and defects
    repairs: list[RepairEntry] | UnsetType = UNSET  # defects of the chain the summary replaced
    source_repair: SourceRepairSection | UnsetType = UNSET  # `--repair`: the repair made first
    bounded: BoundedSection | UnsetType = UNSET
    mask: MaskSection | UnsetType = UNSET  # `--strategy mask`: what was cleared
    projected: ProjectedSection | UnsetType = UNSET
    model_plan: ModelPlanSection | UnsetType = UNSET
    checks: ChecksSection | UnsetType = UNSET
    fidelity: FidelitySection | UnsetType = UNSET
    resume_check: ResumeCheckSection | UnsetType = UNSET
    output: OutputSection | UnsetType = UNSET


class TokensReport(_Document, frozen=True, kw_only=True):
    command: str = "tokens"
    leaf: LeafSection
    tokens: TokensMeasure
    timing_ms: Timing


Report = (
    BriefReport
    | ValidateReport
    | ContextValidateReport
    | CompressReport
    | ContextCompressReport
    | TokensReport
    | ContextTokensReport
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a job hands back for one session: its report, and a traceback only for the log."""

    label: str
    report: Report
    error: str | None = None  # never written into a report

    @property
    def status(self) -> SessionStatus:
        return self.report.status

    @property
    def failed(self) -> bool:
        """Whether this session makes the run exit non-zero."""
        return self.status.is_failure

    @property
    def strict_reason(self) -> StrictReason | None:
        strict = getattr(self.report, "strict", None)
        return strict.reason if strict is not None else None


@dataclass(frozen=True, slots=True)
class Validated(Outcome):
    """`validate` read the session and judged it (valid, warnings, invalid or refused)."""


@dataclass(frozen=True, slots=True)
class Compressed(Outcome):
    """A candidate was checked and written."""


@dataclass(frozen=True, slots=True)
class Skipped(Outcome):
    """The session needs no compaction (small, fits, or a subagent transcript)."""


@dataclass(frozen=True, slots=True)
class Refused(Outcome):
    """The session needs a compaction that could not be made safely; nothing was written."""


@dataclass(frozen=True, slots=True)
class Counted(Outcome):
    """`tokens` counted the session."""


@dataclass(frozen=True, slots=True)
class Unsupported(Outcome):
    """A transcript format this tool does not process yet."""


@dataclass(frozen=True, slots=True)
class NotATranscript(Outcome):
    """A file no agent wrote as a transcript: empty, binary, one JSON document, other lines."""


@dataclass(frozen=True, slots=True)
class Unreadable(Outcome):
    """The file could not be read."""


@dataclass(frozen=True, slots=True)
class Failed(Outcome):
    """An unexpected error stopped this session (the others go on)."""


def crashed(label: str, error: str, *, per_code: int) -> Failed:
    """The one crash outcome: an internal-error report naming nothing but the session's label."""
    findings = findings_section([Finding(FindingCode.INTERNAL_ERROR, Severity.ERROR)], per_code=per_code)
    report = BriefReport(
        session=SessionSection(label=label), status=SessionStatus.INTERNAL_ERROR, findings=findings
    )
    return Failed(label, report, error)
