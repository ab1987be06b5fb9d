"""`compress` of a Codex rollout: keep the recent tail byte for byte, summarize the older span with
the same summarizers as for Claude Code, write a Codex-native checkpoint, prove it, publish it.

gate -> plan the tail by tokens -> summarize the span before it -> compose the checkpoint ->
check that the candidate's rebuilt context is the summary followed by the original's context
from the cut on, item for item as Codex sends it -> gain -> the resume gate (the real Codex
resumes both and sends the same: `jobs/rollout_proof.py`) -> re-read the source -> write.
Nothing is written for a session that stops at any step; the report says why.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.partition import checked_partition
from pipeline.findings import Finding
from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.codex.analysis import RolloutAnalysis, analyze_rollout, compress_sets, summary_sent
from pipeline.formats.codex.checkpoint_records import compose_checkpoint
from pipeline.formats.codex.reconstruct import ContextItem
from pipeline.formats.codex.rollout_decode import RolloutKind
from pipeline.formats.codex.tail import TailPlan, plan_tail
from pipeline.jobs.compress.options import CompressOptions, candidate_path
from pipeline.jobs.compress.writers import Written
from pipeline.agents.codex.evidence import rollout_evidence
from pipeline.jobs.rollout_validate import ESTIMATOR, context_section
from pipeline.publish.files import write_bytes_atomic
from pipeline.read.compressed import compress_as
from pipeline.read.load import SourceBytes, file_sha256
from pipeline.reasons import PlanNote, Reason, Refusal, SkipReason
from pipeline.report.compression import ChecksSection, CompressTokens, ModelPlanSection, SummarySection
from pipeline.report.documents import Compressed, Outcome, Refused, RolloutCompressReport, Skipped
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.resume_context import CutSection, RolloutOutputSection
from pipeline.report.sections import (
    PartitionSection,
    Timing,
    findings_section,
    partition_section,
    peak_rss_mb,
    session_section,
)
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import ResumeGate, SessionKind, SessionStatus, Severity, SourceFormat, Strategy

__all__ = [
    "ModelPlanner",
    "RolloutPublisher",
    "compress_rollout",
    "plan_rollout",
    "rollout_output",
    "write_rollout",
]


@dataclass(frozen=True, slots=True)
class _Stop:
    status: SessionStatus
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Context:
    """The original's rebuilt context as sent, with Codex's token estimate per item."""

    analysis: RolloutAnalysis
    references: list[ContextItem]
    digests: list[str]  # each sent item's digest, as the golden test names items
    tokens: list[int]

    @property
    def total(self) -> int:
        return sum(self.tokens)


@dataclass(frozen=True, slots=True)
class _Draft:
    plan: TailPlan
    written: Written
    data: bytes
    output_tokens: int


def _context(source: SourceBytes, limits: LineLimits) -> _Context:
    analysis = analyze_rollout(source.data, limits)
    references, digests, tokens = [], [], []
    for reference, sent in analysis.sent():
        references.append(reference)
        digests.append(sent.digest)
        tokens.append(sent.tokens)
    return _Context(analysis, references, digests, tokens)


def _target(context: _Context, options: CompressOptions) -> int:
    """The goal Claude Code's cut has too: the ratio of the context, capped by the window share."""
    return options.cut().goal(context.total)


def _gate(context: _Context, options: CompressOptions) -> _Stop | None:
    """What stops a rollout before any summary: a strategy other than summary, Codex cannot resume
    it, or it needs no compaction."""
    if options.compress.strategy is not Strategy.SUMMARY:  # what a masked rollout resumes is unproven
        return _Stop(SessionStatus.UNSUPPORTED_FORMAT, (SkipReason.STRATEGY_NOT_FOR_ROLLOUTS.value,))
    rollout = context.analysis.rollout
    meta = next(rollout.lines_where(RolloutKind.SESSION_META), None)
    if not context.analysis.rebuilt.resumable or meta is None:
        return _Stop(SessionStatus.REFUSED, (str(Reason(Refusal.TOPOLOGY)),))
    if context.total < options.compress.min_tokens:
        return _Stop(SessionStatus.SKIPPED_SMALL, (SkipReason.BELOW_MIN_TOKENS.value,))
    if context.total <= _target(context, options):
        return _Stop(SessionStatus.SKIPPED_FITS, (PlanNote.WHOLE_CHAIN_FITS.value,))
    return None


# A summary's characters per token of its JSON item: escapes and non-ASCII make it dearer.
_CHARS_PER_TOKEN = 3


def _reserve(context: _Context, options: CompressOptions) -> int:
    """Tokens first set aside for the summary: its budget, but never more than a third of the target."""
    return min(options.compress.summary_char_budget // _CHARS_PER_TOKEN, _target(context, options) // 3)


def _summary_room(context: _Context, options: CompressOptions, plan: TailPlan) -> int:
    """Characters the summary may take beside the tail the plan keeps, within the target."""
    tail = sum(context.tokens[plan.first_item :])
    overhead = summary_sent("").tokens
    left = (_target(context, options) - tail - overhead) * _CHARS_PER_TOKEN
    return max(0, min(options.compress.summary_char_budget, left))


def _tail_damage(analysis: RolloutAnalysis, cut_line: int) -> Finding | None:
    """An error the kept tail would carry (damage in the summarized span is left behind)."""
    return next(
        (
            f
            for f in analysis.findings
            if f.severity is Severity.ERROR and (f.line is None or f.line >= cut_line)
        ),
        None,
    )


def _draft(context: _Context, options: CompressOptions, limits: LineLimits) -> _Draft | _Stop:
    """Plan, summarize, compose and check; a summary larger than its room re-plans the cut."""
    reserve, draft = _reserve(context, options), None
    for _ in range(options.compress.max_replans + 1):
        draft = _attempt(context, options, limits, _target(context, options) - reserve)
        if isinstance(draft, _Stop) or draft.output_tokens <= _target(context, options):
            return draft
        if not options.summary_writer().replans:
            break
        reserve += draft.output_tokens - _target(context, options)
    assert draft is not None
    return draft


def _cut(context: _Context, room: int) -> TailPlan | _Stop:
    """The tail within `room` tokens, at a safe cut, carrying no damage."""
    analysis = context.analysis
    plan = plan_tail(analysis.rollout, analysis.rebuilt, context.references, context.tokens, room)
    if plan is None:
        return _Stop(SessionStatus.SKIPPED_NO_CUT, (PlanNote.NO_SAFE_CUT_WITHIN_TARGET.value,))
    if (damage := _tail_damage(analysis, plan.cut_line)) is not None:
        return _Stop(SessionStatus.REFUSED, (str(Reason(Refusal.SOURCE_CHAIN_INVALID)), damage.code.value))
    return plan


def _attempt(context: _Context, options: CompressOptions, limits: LineLimits, room: int) -> _Draft | _Stop:
    """One candidate: the tail within `room` tokens, the summary of what comes before it."""
    analysis = context.analysis
    plan = _cut(context, room)
    if isinstance(plan, _Stop):
        return plan
    evidence = rollout_evidence(analysis, plan.first_item)
    written = options.summary_writer()(evidence, _summary_room(context, options, plan))
    if isinstance(written, Reason):
        return _Stop(SessionStatus.REFUSED, (str(written),))
    data = compose_checkpoint(analysis.rollout, analysis.data, plan.cut_line, written.text)
    checked = _check(data, context, plan, written.text, limits)
    if isinstance(checked, _Stop):
        return checked
    return _Draft(plan, written, data, checked)


def _check(data: bytes, context: _Context, plan: TailPlan, summary: str, limits: LineLimits) -> int | _Stop:
    """The candidate's context must be the summary, then the original's from the cut, as sent."""
    candidate = analyze_rollout(data, limits)
    sent = [item for _, item in candidate.sent()]
    expected = [summary_sent(summary).digest, *context.digests[plan.first_item :]]
    errors = [f for f in candidate.findings if f.severity is Severity.ERROR]
    if errors or [item.digest for item in sent] != expected:
        return _Stop(SessionStatus.REFUSED, (str(Reason(Refusal.COMPOSE)),))
    return sum(item.tokens for item in sent)


def rollout_output(path: str, data: bytes, source: SourceBytes) -> RolloutOutputSection:
    """The report's `output` of a candidate's bytes, wherever they go (`path`, as reported)."""
    return RolloutOutputSection(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        lines=data.count(b"\n"),
        ratio=round(len(data) / max(1, source.size), 4),
        compacted_line=2,  # compose_checkpoint writes it right after session_meta
    )


RolloutPublisher = Callable[[SourceBytes, str, CompressOptions, bytes], "RolloutOutputSection | Reason"]
"""What becomes of a rollout candidate that passed its check: written, or a refusal why not."""


def write_rollout(
    source: SourceBytes, label: str, options: CompressOptions, data: bytes
) -> RolloutOutputSection | Reason:
    """`--out`: re-read the source, refuse if it changed, and write the candidate atomically."""
    if file_sha256(source.path) != source.sha256:
        return Reason(Refusal.SOURCE_CHANGED)
    destination = candidate_path(Path(options.out_dir), options.root_label, label)
    if destination.resolve() == source.path.resolve():
        return Reason(Refusal.OUTPUT_WOULD_OVERWRITE_SOURCE)
    write_bytes_atomic(destination, compress_as(source.compression, data))  # stored as the source is
    return rollout_output(destination.relative_to(Path(options.out_dir)).as_posix(), data, source)


@dataclass(frozen=True, slots=True)
class _Made:
    """The report sections of a candidate that was made (written or not)."""

    tokens: CompressTokens
    reasons: tuple[str, ...]
    cut: CutSection
    summary: SummarySection
    partition: PartitionSection
    resume_check: ResumeCheckSection | UnsetType = UNSET


def _report(
    source: SourceBytes,
    label: str,
    context: _Context,
    options: CompressOptions,
    status: SessionStatus,
    started: float,
    made: _Made | _Stop,
    output: RolloutOutputSection | UnsetType = UNSET,
) -> RolloutCompressReport:
    analysis = context.analysis
    session = session_section(
        label, source, analysis.versions, len(analysis.rollout), SourceFormat.CODEX, SessionKind.MAIN
    )
    stopped = RolloutCompressReport(
        session=session,
        status=status,
        findings=findings_section(analysis.findings, per_code=options.sweep.findings_per_code),
        context=context_section(analysis, context.total),
        tokens=_tokens(context, options, None),
        reasons=list(made.reasons),
        timing_ms=Timing(
            analyze=round((time.perf_counter() - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    if isinstance(made, _Stop):
        return stopped
    return msgspec.structs.replace(
        stopped,
        tokens=made.tokens,
        cut=made.cut,
        summary=made.summary,
        partition=made.partition,
        checks=ChecksSection(failures=[], violations=[], findings=[]),  # made only when they hold
        resume_check=made.resume_check,
        output=output,
    )


def _tokens(context: _Context, options: CompressOptions, output: int | None) -> CompressTokens:
    target = _target(context, options)
    if output is None:
        return CompressTokens(estimator=ESTIMATOR, active_chain=context.total, target=target)
    return CompressTokens(
        estimator=ESTIMATOR,
        active_chain=context.total,
        target=target,
        output=output,
        ratio=round(output / max(1, context.total), 4),
        target_met=output <= target,
    )


def _made(context: _Context, options: CompressOptions, draft: _Draft) -> _Made:
    """The report sections of a candidate that was made (written or not)."""
    written, plan = draft.written, draft.plan
    sets = compress_sets(context.analysis, plan.cut_line)
    missed = () if draft.output_tokens <= _target(context, options) else (
        PlanNote.TARGET_MISSED.value, PlanNote.NO_SAFE_CUT_WITHIN_TARGET.value,
    )  # fmt: skip
    return _Made(
        tokens=_tokens(context, options, draft.output_tokens),
        reasons=missed,
        cut=CutSection(
            cut_line=plan.cut_line,
            summarized_items=plan.first_item,
            kept_items=len(context.digests) - plan.first_item,
            at_turn_start=plan.at_turn,
        ),
        summary=SummarySection(
            chars=len(written.text),
            budget=options.compress.summary_char_budget,
            cited_lines=len(written.cited_lines),
            prior_summaries_folded=written.prior_summaries,
            prior_mode=written.prior_mode,
            sections=written.sections,
        ),
        partition=partition_section(checked_partition(sets, len(context.analysis.rollout))),
    )


def compress_rollout(
    label: str, source: SourceBytes, options: CompressOptions, publish: RolloutPublisher = write_rollout
) -> Outcome:
    """Compress one rollout into a candidate that `publish` takes (by default: writes under the
    output directory), or say why not."""
    started = time.perf_counter()
    context = _context(source, LineLimits.of(options.sweep))

    def report(
        status: SessionStatus, made: _Made | _Stop, output: RolloutOutputSection | UnsetType = UNSET
    ) -> RolloutCompressReport:
        return _report(source, label, context, options, status, started, made, output)

    stop = _gate(context, options)
    draft = _draft(context, options, LineLimits.of(options.sweep)) if stop is None else stop
    if isinstance(draft, _Stop):
        outcome = Refused if draft.status is SessionStatus.REFUSED else Skipped
        return outcome(label, report(draft.status, draft))
    made = _made(context, options, draft)
    if draft.output_tokens > context.total * (1 - options.compress.min_gain):
        low_gain = replace(made, reasons=(SkipReason.GAIN_BELOW_MINIMUM.value,))
        return Skipped(label, report(SessionStatus.SKIPPED_LOW_GAIN, low_gain))
    if options.compress.verify_resume is not ResumeGate.OFF:
        from pipeline.jobs.rollout_proof import prove_rollout  # noqa: PLC0415 - starts Codex: gate only

        cut = (draft.plan.cut_line, draft.written.text)
        check, refusal = prove_rollout(source, context.analysis, cut, draft.data, options)
        made = replace(made, resume_check=check)
        if refusal is not None:
            return Refused(label, report(SessionStatus.REFUSED, replace(made, reasons=(str(refusal),))))
    published = publish(source, label, options, draft.data)
    if isinstance(published, Reason):
        return Refused(label, report(SessionStatus.REFUSED, replace(made, reasons=(str(published),))))
    return Compressed(label, report(SessionStatus.COMPRESSED, made, published))


ModelPlanner = Callable[[tuple[EvidenceItem, ...]], ModelPlanSection]
"""`--dry-run`'s prediction of a model summary over the evidence of the summarized span."""


def plan_rollout(label: str, source: SourceBytes, options: CompressOptions, predict: ModelPlanner) -> Outcome:
    """`--dry-run` of one rollout: the same gate and first cut as `compress_rollout`, then what a
    model would be asked to summarize; nothing is called or written."""
    started = time.perf_counter()
    context = _context(source, LineLimits.of(options.sweep))
    planned = _gate(context, options) or _cut(context, _target(context, options) - _reserve(context, options))
    if isinstance(planned, _Stop):
        outcome = Refused if planned.status is SessionStatus.REFUSED else Skipped
        return outcome(label, _report(source, label, context, options, planned.status, started, planned))
    stop = _Stop(SessionStatus.PLANNED, ())
    report = _report(source, label, context, options, SessionStatus.PLANNED, started, stop)
    cut = CutSection(
        cut_line=planned.cut_line,
        summarized_items=planned.first_item,
        kept_items=len(context.digests) - planned.first_item,
        at_turn_start=planned.at_turn,
    )
    evidence = rollout_evidence(context.analysis, planned.first_item)
    return Skipped(label, msgspec.structs.replace(report, cut=cut, model_plan=predict(evidence)))
