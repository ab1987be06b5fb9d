"""`compress`: one session's compression, as a short composition of stages.

open -> gate -> plan and summarize -> partition -> checkpoint and gain checks -> compose and check
-> resume proof -> re-read the source -> publish the candidate. The source is never modified; a
candidate is written only after every check passed and the source was found unchanged. Each
stage returns its value or a `Stop`; the report is assembled once, from typed sections.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.partition import Partition
from pipeline.core.plan import Plan, PlanOutcome
from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_text
from pipeline.formats.claude_code.guard import LineLimits
from pipeline.jobs.compress.options import CompressOptions, candidate_path
from pipeline.jobs.compress.proof import prove_candidate
from pipeline.jobs.compress.stages import (
    Candidate,
    Stop,
    candidate_partition,
    compose_and_check,
    gate,
    plan_and_summarize,
    summary_head,
)
from pipeline.jobs.front import Analysis, open_session
from pipeline.publish import write_bytes_atomic
from pipeline.reasons import Reason, Refusal, SkipReason
from pipeline.report.chain import ChainSection, excluded_section, leaf_section, strict_section
from pipeline.report.compression import (
    ChecksSection,
    CompressTokens,
    OutputSection,
    PlanSection,
    ResumeCheckSection,
    SummarySection,
    checks_section,
    plan_section,
    summary_section,
)
from pipeline.report.documents import Compressed, CompressReport, Outcome, Refused, Skipped
from pipeline.report.sections import (
    PartitionSection,
    Timing,
    findings_section,
    line_set,
    partition_section,
    peak_rss_mb,
)
from pipeline.summarize import SummaryResult, validate_checkpoint
from pipeline.vocabulary import SessionStatus

__all__ = ["Publisher", "compress_analysis", "compress_session", "output_section", "write_candidate"]


@dataclass(frozen=True, slots=True)
class _Progress:
    """What the report can say so far; every stage adds its section."""

    plan: PlanSection | UnsetType = UNSET
    partition: PartitionSection | UnsetType = UNSET
    chain: ChainSection | UnsetType = UNSET
    summary: SummarySection | UnsetType = UNSET
    checks: ChecksSection | UnsetType = UNSET
    resume_check: ResumeCheckSection | UnsetType = UNSET
    output: OutputSection | UnsetType = UNSET
    output_tokens: int | UnsetType = UNSET
    stop: Stop | None = None


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
    )
    if not isinstance(opened, Analysis):
        return opened
    return compress_analysis(opened, options, write_candidate, started=started)


Publisher = Callable[[Analysis, CompressOptions, Candidate], OutputSection | Stop]
"""What becomes of a candidate that passed every check (and the resume gate, when it ran)."""


def compress_analysis(
    analysis: Analysis, options: CompressOptions, publish: Publisher, *, started: float
) -> Outcome:
    """Everything `compress_session` does once the session is read; `publish` takes the candidate."""
    stop = gate(analysis, options)
    progress = _Progress(stop=stop) if stop is not None else _compress(analysis, options, publish)
    return _outcome(analysis, options, progress, started)


def _compress(analysis: Analysis, options: CompressOptions, publish: Publisher) -> _Progress:
    planned = plan_and_summarize(analysis, options)
    if isinstance(planned, Stop):
        return _Progress(stop=planned)
    plan, summary = planned
    progress = _Progress(plan=plan_section(plan))
    if plan.outcome is PlanOutcome.FITS or summary is None:
        return replace(
            progress, stop=Stop(SessionStatus.SKIPPED_FITS, tuple(Reason(n) for n in plan.reasons))
        )
    index, topology = analysis.index, analysis.topology
    partition, side = candidate_partition(analysis, options, plan)
    progress = replace(
        progress,
        partition=partition_section(partition),
        chain=ChainSection(
            records=len(topology.chain),
            lines=line_set(topology.chain),
            excluded=excluded_section(index, analysis.graph, topology),
        ),
    )
    defects = validate_checkpoint(summary.text)
    if defects:
        reasons = tuple(Reason(Refusal.CHECKPOINT, code) for code in sorted({d.code for d in defects}))
        return replace(progress, stop=Stop(SessionStatus.REFUSED, reasons))
    return _write(analysis, options, plan, partition, side, summary, progress, publish)


def _write(
    analysis: Analysis,
    options: CompressOptions,
    plan: Plan,
    partition: Partition,
    side: frozenset[int],
    summary: SummaryResult,
    progress: _Progress,
    publish: Publisher,
) -> _Progress:
    text = f"{summary_head(options.anchors)}\n\n{summary.text}"
    before = analysis.tokens_of(analysis.topology.chain)
    after = analysis.tokens_of(plan.raw_lines) + estimate_text(text) + 2 * RECORD_ALLOWANCE
    assert isinstance(progress.plan, PlanSection)
    gain = round(1 - after / max(1, before), 4)
    progress = replace(progress, plan=msgspec.structs.replace(progress.plan, estimated_gain=gain))
    if after > before * (1 - options.compress.min_gain):
        return replace(
            progress, stop=Stop(SessionStatus.SKIPPED_FITS, (Reason(SkipReason.GAIN_BELOW_MINIMUM),))
        )
    progress = replace(progress, summary=summary_section(summary, text, options.compress.summary_char_budget))
    candidate = compose_and_check(analysis, options, plan, partition, text, side)
    if isinstance(candidate, Stop):
        return replace(progress, stop=candidate)
    progress = replace(progress, checks=checks_section(candidate.checked))
    if not candidate.checked.ok:
        return replace(progress, stop=Stop(SessionStatus.REFUSED, candidate.checked.failures))
    if options.claude is not None:
        check, stop = prove_candidate(analysis, partition, candidate.composed.data, options)
        progress = replace(progress, resume_check=check, stop=stop)
        if stop is not None:
            return progress
    written = publish(analysis, options, candidate)
    if isinstance(written, Stop):
        return replace(progress, stop=written)
    return replace(progress, output=written, output_tokens=candidate.checked.output_tokens)


def write_candidate(
    analysis: Analysis, options: CompressOptions, candidate: Candidate
) -> OutputSection | Stop:
    """`--out`: re-read the source, refuse if it changed, and write the candidate atomically."""
    if hashlib.sha256(analysis.path.read_bytes()).hexdigest() != analysis.source.sha256:
        return Stop(SessionStatus.REFUSED, (Reason(Refusal.SOURCE_CHANGED),))
    out_dir = Path(options.out_dir)
    destination = candidate_path(out_dir, options.root_label, analysis.label)
    if destination.resolve() == analysis.path.resolve():
        return Stop(SessionStatus.REFUSED, (Reason(Refusal.OUTPUT_WOULD_OVERWRITE_SOURCE),))
    write_bytes_atomic(destination, candidate.composed.data)
    return output_section(analysis, candidate, destination.relative_to(out_dir).as_posix())


def output_section(analysis: Analysis, candidate: Candidate, path: str) -> OutputSection:
    """The report's `output`: where the candidate went, its digest, size and compact pair."""
    data, composed, checked = candidate.composed.data, candidate.composed, candidate.checked
    return OutputSection(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        lines=checked.output_lines,
        ratio=round(len(data) / max(1, analysis.source.size), 4),
        boundary_uuid=composed.boundary_uuid,
        summary_uuid=composed.summary_uuid,
    )


def _outcome(analysis: Analysis, options: CompressOptions, progress: _Progress, started: float) -> Outcome:
    topology = analysis.topology
    stop = progress.stop
    report = CompressReport(
        session=analysis.session(),
        status=stop.status if stop is not None else SessionStatus.COMPRESSED,
        strict_status=topology.strict.status,
        strict=strict_section(topology),
        leaf=leaf_section(topology),
        findings=findings_section(topology.findings, per_code=options.sweep.findings_per_code),
        tokens=CompressTokens(
            estimator="seed", active_chain=analysis.tokens_of(topology.chain), output=progress.output_tokens
        ),
        timing_ms=Timing(
            total=round((time.perf_counter() - started) * 1000, 2), worker_peak_rss_mb=peak_rss_mb()
        ),
        reasons=[str(reason) for reason in stop.reasons] if stop is not None else UNSET,
        plan=progress.plan,
        partition=progress.partition,
        chain=progress.chain,
        summary=progress.summary,
        checks=progress.checks,
        resume_check=progress.resume_check,
        output=progress.output,
    )
    if stop is None:
        return Compressed(analysis.label, report)
    kind = Refused if stop.status is SessionStatus.REFUSED else Skipped
    return kind(analysis.label, report)
