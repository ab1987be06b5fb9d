"""What a compression's report says: the sections the stages made so far, and the report assembled
once from them (tokens against the target, with the rule that missed it; status, reasons, findings).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from msgspec import UNSET, UnsetType

from pipeline.core.validate.checks import Validation
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.planning import Planned
from pipeline.jobs.compress.stages import Stop, report_findings
from pipeline.jobs.front import Analysis
from pipeline.reasons import PlanNote
from pipeline.report.chain import ChainSection, leaf_section, strict_section
from pipeline.report.compression import (
    BoundedSection,
    ChecksSection,
    CompressTokens,
    MaskSection,
    OutputSection,
    PlanSection,
    ProjectedSection,
    RepairEntry,
    SummarySection,
    WriterSection,
    reason_figures,
)
from pipeline.report.documents import Compressed, CompressReport, Failed, Outcome, Refused, Skipped
from pipeline.report.fidelity import FidelitySection
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.sections import PartitionSection, Timing, findings_section, peak_rss_mb
from pipeline.vocabulary import SessionStatus

__all__ = ["Progress", "compress_outcome", "compress_tokens"]


@dataclass(frozen=True, slots=True)
class Progress:
    """What the report can say so far; every stage adds its section (`stop`: where it ended)."""

    plan: PlanSection | UnsetType = UNSET
    partition: PartitionSection | UnsetType = UNSET
    chain: ChainSection | UnsetType = UNSET
    summary: SummarySection | UnsetType = UNSET
    model_failure: WriterSection | UnsetType = UNSET
    checks: ChecksSection | UnsetType = UNSET
    fidelity: FidelitySection | UnsetType = UNSET
    resume_check: ResumeCheckSection | UnsetType = UNSET
    output: OutputSection | UnsetType = UNSET
    output_tokens: int | UnsetType = UNSET
    bounded: BoundedSection | UnsetType = UNSET
    mask: MaskSection | UnsetType = UNSET
    repairs: list[RepairEntry] | UnsetType = UNSET
    projected: ProjectedSection | UnsetType = UNSET
    planned: Planned | None = None
    stop: Stop | None = None


_MISSED_BECAUSE: Final = (
    PlanNote.MASKING_ALONE_SHORT_OF_TARGET,
    PlanNote.PROTECTED_ROUND_EXCEEDS_TARGET,
    PlanNote.NO_ROOM_FOR_SUMMARY,
    PlanNote.NO_SAFE_CUT_WITHIN_TARGET,
    PlanNote.SUMMARY_LARGER_THAN_PLANNED,
)


def compress_tokens(analysis: Analysis, progress: Progress) -> tuple[CompressTokens, list[str]]:
    """The token figures, and `target-missed` with the rule that stopped the cut when it was."""
    chain = analysis.tokens_of(analysis.topology.chain)
    plan = progress.planned.plan if progress.planned is not None else None
    target = plan.goal_tokens if plan is not None else UNSET
    output = progress.output_tokens
    if isinstance(output, UnsetType) or plan is None:
        return CompressTokens(estimator="seed", active_chain=chain, target=target), []
    met = output <= plan.goal_tokens
    missed: list[str] = []
    if not met:
        notes = {*plan.reasons, *(progress.planned.notes if progress.planned else ())}
        rules = [n.value for n in _MISSED_BECAUSE if n in notes] or [
            PlanNote.SUMMARY_LARGER_THAN_PLANNED.value
        ]
        missed = [PlanNote.TARGET_MISSED.value, *rules]
    tokens = CompressTokens(
        estimator="seed",
        active_chain=chain,
        target=plan.goal_tokens,
        output=output,
        ratio=round(output / max(1, chain), 4),
        target_met=met,
    )
    return tokens, missed


def compress_outcome(
    analysis: Analysis, options: CompressOptions, progress: Progress, started: float, source: Validation
) -> Outcome:
    """The session's outcome and its report, assembled once from the sections the stages made."""
    topology = analysis.topology
    stop = progress.stop
    tokens, missed = compress_tokens(analysis, progress)
    reasons = [str(reason) for reason in stop.reasons] if stop is not None else missed
    report = CompressReport(
        session=analysis.session(),
        status=stop.status if stop is not None else SessionStatus.COMPRESSED,
        strict_status=topology.strict.status,
        strict=strict_section(topology),
        leaf=leaf_section(topology),
        findings=findings_section(
            report_findings(analysis, source, stop), per_code=options.sweep.findings_per_code
        ),
        tokens=tokens,
        timing_ms=Timing(
            total=round((time.perf_counter() - started) * 1000, 2), worker_peak_rss_mb=peak_rss_mb()
        ),
        reasons=reasons or UNSET,
        reason_figures=reason_figures(stop.reasons) if stop is not None else UNSET,
        plan=progress.plan,
        partition=progress.partition,
        chain=progress.chain,
        summary=progress.summary,
        model_failure=progress.model_failure,
        repairs=progress.repairs,
        bounded=progress.bounded,
        mask=progress.mask,
        projected=progress.projected,
        checks=progress.checks,
        fidelity=progress.fidelity,
        resume_check=progress.resume_check,
        output=progress.output,
    )
    if stop is None:
        return Compressed(analysis.label, report)
    if stop.status is SessionStatus.INTERNAL_ERROR:  # the full report: sha256, plan, figures reproduce it
        told = "; ".join(f"{reason} {dict(reason.figures)}" for reason in stop.reasons)
        return Failed(analysis.label, report, f"internal consistency check failed: {told}")
    kind = Refused if stop.status is SessionStatus.REFUSED else Skipped
    return kind(analysis.label, report)
