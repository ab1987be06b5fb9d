"""`compress`: one session's compression, as a short composition of stages.

open -> gate -> plan and summarize -> partition -> checkpoint and gain checks -> compose and check
-> resume proof -> re-read the source -> publish the candidate. The source is never modified; a
candidate is written only after every check passed and the source was found unchanged. Each
stage returns its value or a `Stop`; the report is assembled once, from typed sections
(`report_assembly`). Damage the gate lets through must end up summarized: a plan that keeps a
damaged record raw refuses the session with the defect's line and code, and the report of one
that does not lists each defect the summary replaced (`repairs`).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.partition import Partition
from pipeline.core.plan import Plan, PlanOutcome
from pipeline.core.validate.checks import Validation
from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_text
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.candidate_file import write_candidate_file
from pipeline.jobs.compress.context_compress import compress_context
from pipeline.jobs.compress.damage import Damage, damage_refusal
from pipeline.jobs.compress.masking import mask_plan, masked_candidate
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.planning import Planned, plan_and_summarize
from pipeline.jobs.compress.proof import prove_candidate
from pipeline.jobs.compress.repair_first import (
    RepairedSource,
    declined_section,
    guarded,
    remedy_section,
    repair_first,
    repaired_section,
)
from pipeline.jobs.compress.report_assembly import Progress, compress_outcome
from pipeline.jobs.compress.scoring import fidelity_stage
from pipeline.jobs.compress.stages import (
    Candidate,
    Publisher,
    Stop,
    candidate_partition,
    chain_error_findings,
    compose_and_check,
    gate,
    source_validation,
)
from pipeline.jobs.compress.writers import ModelRefusal, Written
from pipeline.jobs.front import Analysis, open_session
from pipeline.reasons import PlanNote, Reason, Refusal, SkipReason
from pipeline.report.chain import ChainSection, excluded_section
from pipeline.report.compression import (
    OutputSection,
    PlanSection,
    bounded_section,
    checks_section,
    mask_section,
    plan_section,
    projected_section,
    repairs_section,
    summary_section,
    writer_section,
)
from pipeline.report.documents import CompressReport, Outcome
from pipeline.report.repair_sections import SourceRepairSection
from pipeline.report.sections import SessionSection, line_set, partition_section
from pipeline.summarize import validate_checkpoint
from pipeline.vocabulary import ResumeGate, SessionStatus, Strategy

__all__ = ["Publisher", "compress_analysis", "compress_session", "output_section", "write_candidate"]


def compress_session(path: Path, label: str, options: CompressOptions) -> Outcome:
    """Compress one session into a candidate under the output directory, or say why not."""
    started = time.perf_counter()
    opened = open_session(
        path,
        label,
        options.topology(),
        command="compress",
        per_code=options.sweep.findings_per_code,
        limits=LineLimits.of(options.sweep),
        contexts=lambda agent, context_label, source: compress_context(agent, context_label, source, options),
    )
    if not isinstance(opened, Analysis):
        return opened
    return compress_analysis(opened, options, write_candidate, started=started)


_DAMAGE: Final = Refusal.SOURCE_CHAIN_INVALID.value  # the refusal `--repair` could have prevented


def compress_analysis(
    analysis: Analysis, options: CompressOptions, publish: Publisher, *, started: float
) -> Outcome:
    """Everything `compress_session` does once the session is read; `publish` takes the candidate.

    With the repair on (`compress --repair`), a damaged active chain is repaired first and the
    repaired bytes compressed (`repair_first`); with it off, a refusal for damage names the fix.
    """
    source = source_validation(analysis)
    if options.damage_repair is not None and chain_error_findings(source):
        return _repaired_first(analysis, options, publish, source, started)
    outcome = _compressed(analysis, options, publish, source, started)
    refusal = outcome.report.reasons if isinstance(outcome.report, CompressReport) else UNSET
    if options.damage_repair is None and not isinstance(refusal, UnsetType) and _DAMAGE in refusal:
        return _with_repair(outcome, remedy_section())
    return outcome


def _compressed(
    analysis: Analysis, options: CompressOptions, publish: Publisher, source: Validation, started: float
) -> Outcome:
    admitted = gate(analysis, options, source)
    progress = (
        Progress(stop=admitted)
        if isinstance(admitted, Stop)
        else _compress(analysis, options, publish, admitted)
    )
    return compress_outcome(analysis, options, progress, started, source)


def _repaired_first(
    analysis: Analysis, options: CompressOptions, publish: Publisher, source: Validation, started: float
) -> Outcome:
    """The repair, then the compaction of what it made (the original's, when no repair was made);
    the scratch holds the repaired copy the resume gate resumes as the original."""
    with tempfile.TemporaryDirectory(prefix="compaction-repair-", ignore_cleanup_errors=True) as scratch:
        first = repair_first(analysis, options, Path(scratch))
        if isinstance(first, RepairedSource):
            repaired = first.analysis
            guard = guarded(publish, analysis)
            outcome = _compressed(repaired, options, guard, source_validation(repaired), started)
            return _with_repair(outcome, repaired_section(first), session=analysis.session())
    outcome = _compressed(analysis, options, publish, source, started)
    declined = declined_section(first)
    return outcome if declined is None else _with_repair(outcome, declined)


def _with_repair(
    outcome: Outcome, section: SourceRepairSection, *, session: SessionSection | None = None
) -> Outcome:
    """The outcome with its `source_repair` (and the original's `session`, for a repaired copy's)."""
    report = outcome.report
    if not isinstance(report, CompressReport):
        return outcome
    changes = {"source_repair": section} | ({"session": session} if session is not None else {})
    return replace(outcome, report=msgspec.structs.replace(report, **changes))


def _compress(analysis: Analysis, options: CompressOptions, publish: Publisher, damage: Damage) -> Progress:
    masking = options.compress.strategy is Strategy.MASK
    planned = (
        mask_plan(analysis, options)
        if masking
        else plan_and_summarize(analysis, options, repair_floor=damage.floor)
    )
    if isinstance(planned, Reason):
        budget = planned.code is SkipReason.RUN_TOKEN_BUDGET
        failure = planned.failure if isinstance(planned, ModelRefusal) else None
        return Progress(
            stop=Stop(SessionStatus.SKIPPED_RUN_BUDGET if budget else SessionStatus.REFUSED, (planned,)),
            model_failure=UNSET if failure is None else writer_section(failure.account, None, failure),
        )
    plan, summary = planned.plan, planned.summary
    progress = Progress(plan=plan_section(plan), planned=planned)
    left = damage.left_in(plan)
    if left:  # a damaged record would stay raw: no cut reaches past it (the protected round holds it)
        return replace(progress, stop=Stop(SessionStatus.REFUSED, damage_refusal(left), left))
    progress = replace(progress, repairs=repairs_section(damage.findings()))
    if plan.outcome is not PlanOutcome.CUT or (summary is None and not masking):
        status = (
            SessionStatus.SKIPPED_FITS if plan.outcome is PlanOutcome.FITS else SessionStatus.SKIPPED_NO_CUT
        )
        return replace(progress, stop=Stop(status, tuple(Reason(n) for n in plan.reasons)))
    index, topology = analysis.index, analysis.topology
    partition, side = candidate_partition(analysis, options, plan)
    carried = analysis.chain_format.carried(analysis, plan)
    progress = replace(
        progress,
        partition=partition_section(partition),
        chain=ChainSection(
            records=len(topology.chain),
            lines=line_set(topology.chain),
            excluded=excluded_section(index, analysis.graph, topology),
        ),
        bounded=bounded_section(
            planned.bounding.declared, plan.raw_lines, options.compress.tool_output_limit
        ),
        projected=projected_section(carried.state, carried.shells, carried.agents, carried.loaded_tools),
    )
    if summary is None:  # masked: nothing summarized, every record kept
        return _write_masked(analysis, options, planned, partition, side, progress, publish)
    defects = validate_checkpoint(summary.text)
    if defects:
        reasons = tuple(Reason(Refusal.CHECKPOINT, code) for code in sorted({d.code for d in defects}))
        return replace(progress, stop=Stop(SessionStatus.REFUSED, reasons))
    return _write(analysis, options, planned, partition, side, summary, progress, publish)


def _write(
    analysis: Analysis,
    options: CompressOptions,
    planned: Planned,
    partition: Partition,
    side: frozenset[int],
    summary: Written,
    progress: Progress,
    publish: Publisher,
) -> Progress:
    text = planned.text
    plan = planned.plan
    before = analysis.tokens_of(analysis.topology.chain)
    after = sum(planned.bounding.kept_tokens[plan.cut :]) + estimate_text(text) + 2 * RECORD_ALLOWANCE
    assert isinstance(progress.plan, PlanSection)
    gain = round(1 - after / max(1, before), 4)
    progress = replace(progress, plan=msgspec.structs.replace(progress.plan, estimated_gain=gain))
    section = summary_section(
        text,
        options.compress.summary_char_budget,
        cited_lines=len(summary.cited_lines),
        prior_summaries=summary.prior_summaries,
        prior_mode=summary.prior_mode,
        sections=summary.sections,
        writer=(
            writer_section(summary.account, summary.fallback_from, summary.failure)
            if summary.account
            else UNSET
        ),
        fit=summary.fit,
    )
    # set before the gain check: a summary written but not worth using was still billed
    progress = replace(progress, summary=section)
    if _low_gain(options, before, after, progress):
        return replace(
            progress, stop=Stop(SessionStatus.SKIPPED_LOW_GAIN, (Reason(SkipReason.GAIN_BELOW_MINIMUM),))
        )
    candidate = compose_and_check(analysis, options, planned, partition, text, side)
    return _checked_and_published(analysis, options, plan, partition, candidate, progress, publish)


def _low_gain(options: CompressOptions, before: int, after: int, progress: Progress) -> bool:
    """Whether a candidate saves under `min_gain` (a compaction that repairs damage never is)."""
    return after > before * (1 - options.compress.min_gain) and isinstance(progress.repairs, UnsetType)


def _write_masked(
    analysis: Analysis,
    options: CompressOptions,
    planned: Planned,
    partition: Partition,
    side: frozenset[int],
    progress: Progress,
    publish: Publisher,
) -> Progress:
    """A masked candidate: the gain, its `mask` section, then the same checks, gate and publication."""
    plan = planned.plan
    before = analysis.tokens_of(analysis.topology.chain)
    assert isinstance(progress.plan, PlanSection)
    gain = round(1 - plan.planned_tokens / max(1, before), 4)
    short = PlanNote.MASKING_ALONE_SHORT_OF_TARGET in plan.reasons
    progress = replace(
        progress,
        plan=msgspec.structs.replace(progress.plan, estimated_gain=gain),
        mask=mask_section(planned.bounding.declared, plan.raw_lines, short_of_target=short),
    )
    if _low_gain(options, before, plan.planned_tokens, progress):
        return replace(
            progress, stop=Stop(SessionStatus.SKIPPED_LOW_GAIN, (Reason(SkipReason.GAIN_BELOW_MINIMUM),))
        )
    candidate = masked_candidate(analysis, options, planned, partition, side)
    return _checked_and_published(analysis, options, plan, partition, candidate, progress, publish)


def _checked_and_published(
    analysis: Analysis,
    options: CompressOptions,
    plan: Plan,
    partition: Partition,
    candidate: Candidate | Stop,
    progress: Progress,
    publish: Publisher,
) -> Progress:
    """The candidate's checks, fidelity and resume gate, then `publish`: any failure stops it."""
    if isinstance(candidate, Stop):
        return replace(progress, stop=candidate)
    progress = replace(progress, checks=checks_section(candidate.checked))
    if not candidate.checked.ok:  # our own inconsistency is a defect to report, never a refusal
        status = SessionStatus.INTERNAL_ERROR if candidate.checked.internal else SessionStatus.REFUSED
        return replace(progress, stop=Stop(status, candidate.checked.failures))
    progress = _judged(analysis, options, plan, partition, candidate, progress)
    if progress.stop is not None:
        return progress
    written = publish(analysis, options, candidate)
    if isinstance(written, Stop):
        return replace(progress, stop=written)
    return replace(progress, output=written, output_tokens=candidate.checked.output_tokens)


def _judged(
    analysis: Analysis,
    options: CompressOptions,
    plan: Plan,
    partition: Partition,
    candidate: Candidate,
    progress: Progress,
) -> Progress:
    """The candidate's fidelity (a floor may refuse it), then the resume proof when its judge is there."""
    cleared = () if progress.planned is None else progress.planned.bounding.cleared_lines(plan.raw_lines)
    fidelity, stop = fidelity_stage(analysis, options, plan, partition, candidate, cleared)
    progress = replace(progress, fidelity=fidelity, stop=stop)
    # `on` without the session's judge refuses in the proof (its section says why); `auto` writes unproven.
    judged = options.judges.get(analysis.format) is not None
    if stop is None and (judged or options.compress.verify_resume is ResumeGate.ON):
        check, stop = prove_candidate(analysis, partition, candidate.composed.data, options)
        progress = replace(progress, resume_check=check, stop=stop)
    return progress


def write_candidate(
    analysis: Analysis, options: CompressOptions, candidate: Candidate
) -> OutputSection | Stop:
    """`--out`: the candidate written by the one candidate writer, or the refusal why not."""
    written = write_candidate_file(analysis.source, analysis.label, options, candidate.composed.data)
    if isinstance(written, Reason):
        return Stop(SessionStatus.REFUSED, (written,))
    return output_section(analysis, candidate, written)


def output_section(analysis: Analysis, candidate: Candidate, path: str) -> OutputSection:
    """The report's `output`: where the candidate went, its digest, size and compact pair."""
    data, composed, checked = candidate.composed.data, candidate.composed, candidate.checked
    return OutputSection(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        lines=checked.output_lines,
        ratio=round(len(data) / max(1, analysis.source.size), 4),
        boundary_uuid=composed.boundary_uuid or UNSET,
        summary_uuid=composed.summary_uuid or UNSET,
    )
